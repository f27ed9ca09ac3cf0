"""HTA 0.5.0's straggler analysis over its trace frames, for ``get_potential_stragglers``
called with a step selection or with a user's identification function.

HTA hands the identification function one frame of every rank's events (its parsed frames
stacked, with ``rank`` and ``idx`` columns, ``cat``/``name`` as symbol ids) restricted to
the selected steps, the symbol table, the number of candidates and ``visualize``; the
function returns a series indexed by rank whose largest values are the stragglers. This
module builds those inputs from :mod:`tracewise._hta_frame` and holds tracewise's own
implementation of HTA's default metric, under HTA's name
(:func:`find_stragglers_with_late_start_comm_kernels`, as HTA documents it), for a step
selection. Without a step selection the default metric is computed natively
(``timeline::hta::stragglers``), which is faster and gives the same ranks.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import pandas as pd

from . import _hta_plot
from ._hta_frame import SymbolTable

METRIC = "normalized_start_time"
"""The metric column of the default identification (HTA's name)."""

NO_METRIC = (
    "no straggler metric: no communication kernel (ncclKernel*, at least 1 % of the mean "
    "step time, launched in a step above 0) ran on two or more ranks in the same stream and "
    "step, so the spread across ranks that picks the kernel to time is undefined (HTA 0.5.0 "
    "fails here too, with a TypeError or ValueError from inside its metric)"
)


def stacked_frame(frames: Dict[int, pd.DataFrame]) -> Tuple[pd.DataFrame, SymbolTable]:
    """Every rank's frame stacked in rank order, as HTA's ``get_potential_stragglers``
    builds it: ``rank`` and ``idx`` (the row's index in its rank's frame) first, then the
    frame's columns with ``cat`` and ``name`` as ids of the returned symbol table."""
    table = SymbolTable()
    ranks = sorted(frames)
    encoded = []
    for r in ranks:
        f = frames[r].copy()
        f["cat"] = table.ids(f["cat"])
        f["name"] = table.ids(f["name"])
        encoded.append(f)
    if not encoded:
        return pd.DataFrame(columns=["rank", "idx"]), table
    df = pd.concat(encoded, axis=0, keys=ranks, names=["rank", "idx"]).reset_index()
    return df, table


def _threshold(values: pd.Series, n: int) -> float:
    """The ``n``-th largest of ``values`` (the smallest where there are fewer)."""
    ordered = values.sort_values(ascending=False).tolist()
    return ordered[min(n, len(ordered)) - 1]


def find_stragglers_with_late_start_comm_kernels(
    df: pd.DataFrame, symbol_table: Any, n_stragglers: int = 2, visualize: bool = False
) -> pd.Series:
    """HTA's default straggler identification over ``df`` (the stacked frame of the
    selected steps): the ``ncclKernel*`` kernels on a stream, in a step above 0 and at
    least 1 % of the mean step time long (the span of ``df`` over its step count); the last
    of them per (rank, stream, step, name); the (stream, name) whose normalised duration
    has the largest mean (over steps) standard deviation across ranks; per step, the ranks
    whose normalised start of that kernel is among the ``n_stragglers`` latest. Returns,
    per rank, how many steps found it a straggler (one step: 1 or 0 per row). ValueError
    where no kernel has a spread across ranks. ``visualize`` draws HTA's figures
    (:mod:`tracewise._hta_plot`): the timelines of the long kernels and of the chosen
    kernel, and the metric per rank (and step) with the stragglers in red."""
    n = max(int(n_stragglers), 1)
    sym = symbol_table.get_sym_table()
    comm_ids = [i for i, s in enumerate(sym) if s.startswith("ncclKernel")]
    steps = [i for i in pd.unique(df["iteration"]) if i != -1]
    if len(df) == 0 or not steps:
        raise ValueError(NO_METRIC)
    df = df.loc[df["iteration"].isin(steps)]
    t_min = df["ts"].min()
    mean_step = ((df["ts"] + df["dur"]).max() - t_min) / float(len(steps))
    long = df.loc[
        (df["stream"] > 0)
        & (df["iteration"] > 0)
        & (df["dur"] >= mean_step * 0.01)
        & df["name"].isin(comm_ids)
    ]
    if visualize:
        _hta_plot.gpu_timeline(
            f"Timeline of Communication Kernels Longer Than {0.01 * 100:.2f}% of Iteration Time\n",
            long,
            sym,
            duration_threshold=2000,
        )
    last = long.groupby(["rank", "stream", "iteration", "name"], as_index=False).last()
    last[METRIC] = (last["ts"] - t_min) / mean_step
    last["duration"] = last["dur"] / mean_step
    spread = last.groupby(["stream", "iteration", "name"])["duration"].std()
    mean_spread = spread.groupby(["stream", "name"]).mean().dropna()
    if mean_spread.empty:
        raise ValueError(NO_METRIC)
    stream, name = mean_spread.index[int(np.argmax(mean_spread.to_numpy()))]
    metric = last.loc[last["stream"].eq(stream) & last["name"].eq(name)]
    if visualize:
        _hta_plot.gpu_timeline(f"Timeline of Candidate Kernels (Iterations={sorted(int(i) for i in steps)})", metric, sym)
    if metric["iteration"].nunique() <= 1:
        threshold = _threshold(metric[METRIC], n)
        flags = (metric[METRIC] >= threshold).astype("int64")
        if visualize:
            _hta_plot.stragglers(metric[["rank", METRIC]], METRIC, flags, False)
        return pd.Series(flags.to_numpy(), index=metric["rank"].to_numpy(), name="is_straggler")
    flags = pd.Series(0, index=metric.index, dtype="int64")
    for step, group in metric.groupby("iteration"):
        if step < 0:
            continue
        flags[group.index] = (group[METRIC] >= _threshold(group[METRIC], n)).astype("int64")
    if visualize:
        _hta_plot.stragglers(metric[["rank", "iteration", METRIC]], METRIC, flags, True)
    return flags.groupby(metric["rank"]).sum().rename("is_straggler")


def potential_stragglers(
    frames: Dict[int, pd.DataFrame],
    available: List[int],
    profiler_steps: Optional[List[int]],
    num_candidates: int,
    visualize: bool,
    impl: Optional[Callable[..., pd.Series]],
) -> List[int]:
    """HTA's ``get_potential_stragglers`` over ``frames``: the selected steps that the trace
    has (ValueError where none), the stacked frame of those steps handed to ``impl``
    (default :func:`find_stragglers_with_late_start_comm_kernels`) with the symbol table, ``num_candidates``
    (at least 1) and ``visualize``, and the ranks of its ``num_candidates`` largest values,
    largest first."""
    num = max(int(num_candidates), 1)
    if profiler_steps is None:
        valid = list(available)
    else:
        valid = [s for s in profiler_steps if s in available]
    if not valid:
        raise ValueError(
            f"invalid value for argument: profiler_steps={profiler_steps}; "
            f"available profiler steps={available}"
        )
    df, table = stacked_frame(frames)
    selected = df.loc[df["iteration"].isin(valid)]
    counts = (impl or find_stragglers_with_late_start_comm_kernels)(selected, table, num, visualize)
    return [int(r) for r in counts.sort_values(ascending=False)[:num].index.tolist()]
