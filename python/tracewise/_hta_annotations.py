"""HTA 0.5.0's user-annotation analyses for ``tracewise.hta.TraceAnalysis``: the time per
annotation name of each rank (``get_gpu_user_annotation_breakdown``: :func:`breakdown`,
over the GPU ranges HTA keeps, :func:`gpu_annotations`, or the host ranges), and each GPU
event with the GPU annotation that covers it (``get_gpu_kernels_with_user_annotations``:
:func:`kernels_with_annotations`).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import pandas as pd

from . import _hta_diff, _hta_frame
from ._hta_stats import (
    _aggregate_by_name,
    _aggregate_ranks,
    _annotation_frame,
    _annotation_stats,
    _coded,
    _rows,
)


def breakdown(
    analysis: Any,
    use_gpu_annotation: bool,
    num_kernels: int,
    duration_ratio: float,
    allowlist_patterns: Optional[List[str]],
) -> pd.DataFrame:
    """HTA's user annotation breakdown of every rank of ``analysis`` (a
    ``TraceAnalysis``): ``name``, ``sum (us)``, ``max (us)``, ``min (us)``, ``stddev``,
    ``mean (us)``, ``rank``, past ``num_kernels`` names or the ``duration_ratio`` quantile
    of the cumulative time folded into ``others`` (names matching one of
    ``allowlist_patterns`` kept), of the GPU ranges (``use_gpu_annotation``) or the host
    ranges."""
    keep: Optional[Callable[[str], bool]] = None
    if allowlist_patterns is not None:
        import re

        pattern = re.compile("|".join(re.escape(p) for p in allowlist_patterns))
        keep = lambda name: pattern.search(name) is not None  # noqa: E731
    # Each rank's rows as (names, each row's name as a code into them, durations): the
    # host annotations come so from the native trace, without a tuple per row.
    if use_gpu_annotation:
        gpu_rows = gpu_annotations(analysis._t, analysis.include_last_profiler_step)
        per_rank = [(rank, *_coded(gpu_rows.get(rank, []))) for rank in analysis._ranks]
    else:
        per_rank = []
        for rank in analysis._ranks:
            names, (codes, dur) = analysis._t.host_annotations(int(rank))
            per_rank.append(
                (rank, np.asarray(names, dtype=object), np.frombuffer(codes, dtype=np.int64),
                 np.frombuffer(dur, dtype=np.float64))
            )
    if all(len(names) <= num_kernels for _, names, _, _ in per_rank):
        # No rank folds names into `others`: one group-by over every rank's rows gives
        # each (rank, name) group the values, in the order, that the rank's own
        # group-by gives it (pandas' group kernels see each group alone), where a
        # group-by and a concat per rank cost a few ms each.
        fast = _annotation_stats(per_rank)
        if fast is not None:
            return fast
        rows = [(rank, _rows(n, c, d)) for rank, n, c, d in per_rank]
        out = pd.concat([_annotation_frame(), _aggregate_ranks(rows)], ignore_index=True)
    else:
        out = _annotation_frame()
        for rank, n, c, d in per_rank:
            rows = _rows(n, c, d)
            events = pd.DataFrame(
                {
                    "name": pd.Series([n for n, _ in rows], dtype="object"),
                    # HTA's `dur` column is float64 (the parser fills missing durations).
                    "dur": pd.Series([d for _, d in rows], dtype="float64"),
                }
            )
            agg = _aggregate_by_name(events, num_kernels, duration_ratio, keep)
            agg["rank"] = int(rank)
            out = pd.concat([out, agg], ignore_index=True)
    out.sort_values(by=["rank", "name"], ignore_index=True, inplace=True)
    out.rename(
        columns={
            "sum": "sum (us)",
            "mean": "mean (us)",
            "max": "max (us)",
            "min": "min (us)",
            "std": "stddev",
        },
        inplace=True,
    )
    return out


def gpu_annotations(trace: Any, include_last_profiler_step: bool) -> Dict[int, List[Tuple[str, float]]]:
    """(name, duration in µs) of each rank's ``gpu_user_annotation`` ranges HTA keeps, of
    the native ``trace``. On a trace with fractional µs HTA rounds each start up and each
    end down; with two or more ``ProfilerStep`` names over the ranks, it keeps the ranges
    (which have no stream: its host side) that start before the last ``ProfilerStep``
    starts (``include_last_profiler_step=True``: whose start from HTA's origin is at or
    before the latest such end in the file's time, as HTA compares them: every range of
    a real capture)."""
    from . import load

    def us(ns: "pd.Series", up: bool) -> "pd.Series":
        q = -((-ns) // 1000) if up else ns // 1000
        return q

    per_file = []
    step_names: set = set()
    for rank, path in trace.files():
        c = load(path)
        ann = c.sql(
            "SELECT name, ts_ns, dur_ns FROM events "
            "WHERE cat = 'gpu_user_annotation' AND ph = 'X' AND dur_ns IS NOT NULL"
        ).to_pandas()
        steps = c.sql(
            "SELECT name, ts_ns, dur_ns FROM events WHERE ph = 'X' AND dur_ns IS NOT NULL "
            "AND name LIKE '%ProfilerStep%' AND cat NOT IN ('python_function', 'Trace')"
        ).to_pandas()
        step_names.update(steps["name"])
        per_file.append((rank, ann, steps))
    out: Dict[int, List[Tuple[str, float]]] = {}
    for rank, ann, steps in per_file:
        fractional = trace.fractional(int(rank))
        start = us(ann["ts_ns"], True) if fractional else ann["ts_ns"] / 1000
        end = us(ann["ts_ns"] + ann["dur_ns"], False) if fractional else (ann["ts_ns"] + ann["dur_ns"]) / 1000
        keep = pd.Series(True, index=ann.index)
        if len(step_names) >= 2 and len(steps):
            s_start = us(steps["ts_ns"], True) if fractional else steps["ts_ns"] / 1000
            s_end = (
                us(steps["ts_ns"] + steps["dur_ns"], False)
                if fractional
                else (steps["ts_ns"] + steps["dur_ns"]) / 1000
            )
            if include_last_profiler_step:
                # HTA's starts are aligned to its origin here, its step ends are not.
                keep = (start - trace.origin_us()) <= s_end.max()
            else:
                keep = start < s_start.max()
        dur = (end - start)[keep]
        out[rank] = list(zip(ann["name"][keep], dur.astype("float64")))
    return out


def kernels_with_annotations(frame: pd.DataFrame, expand_names: bool, shortern_names: bool) -> pd.DataFrame:
    """The GPU events of a rank's HTA ``frame`` (not changed), each with the GPU user
    annotation (``gpu_user_annotation``) of its own device and stream that it overlaps,
    the shortest one where several do (``user_annotation``, "" where none; with
    ``expand_names`` also ``s_name``, ``s_cat``, ``s_user_annotation``, shortened with
    ``shortern_names``)."""
    df = frame.copy()
    df["end"] = df["ts"] + df["dur"]
    df["user_annotation"] = -1
    anno = df[df["cat"] == "gpu_user_annotation"][["pid", "tid", "ts", "end", "dur", "name"]]
    anno = anno.sort_values("dur", ascending=False)
    anno.index = pd.IntervalIndex.from_arrays(anno["ts"], anno["end"], closed="left")
    kernels = df[_hta_frame.gpu_mask(df)].copy()
    kernels.index = pd.IntervalIndex.from_arrays(kernels["ts"], kernels["end"], closed="left")
    kernels["user_annotation"] = kernels["user_annotation"].astype(object)
    for (pid, tid), group in anno.groupby(["pid", "tid"], sort=False):
        same = ((kernels["pid"] == pid) & (kernels["tid"] == tid)).to_numpy()
        for interval, name in zip(group.index, group["name"]):
            kernels.loc[same & kernels.index.overlaps(interval), "user_annotation"] = name
    kernels["user_annotation"] = kernels["user_annotation"].map(lambda v: "" if v == -1 else v)
    if expand_names:
        short = (lambda s: _hta_diff.shorten_name(s)) if shortern_names else (lambda s: s)
        kernels["s_name"] = kernels["name"].map(short)
        kernels["s_cat"] = kernels["cat"].map(short)
        kernels["s_user_annotation"] = kernels["user_annotation"].map(
            lambda s: short(s) if s else ""
        )
    return kernels.reset_index(drop=True)
