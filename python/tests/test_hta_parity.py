"""tracewise.hta.TraceAnalysis against HTA 0.5.0, run in the same interpreter, on every
shared HTA trace set (each folder of ``pytorch/hta-*`` that holds trace files, folder by
folder, and ``param-dlrm-8rank``), every rank, both values of
``include_last_profiler_step``.

Tolerances, per column: times and shares are compared at 1e-9 relative (the same
integers in ns become the same floats in µs); counts, ids, ranks, streams and names
exactly; dtypes, index and column order exactly. A comparison that differs for a reason
docs/differences.md gives is listed in ``KNOWN`` with that reason: the test then reports
it as xfail (not strict: an entry whose outputs have come to agree passes, and should be
removed)."""

from __future__ import annotations

import contextlib
import io
import logging
import math
import warnings
from pathlib import Path
from typing import Dict, List, Tuple

import pandas as pd
import pytest

hta_ta = pytest.importorskip("hta.trace_analysis", reason="SKIPPED: HolisticTraceAnalysis is not installed")


def trace_sets(traces: Path) -> List[Path]:
    """Every folder under pytorch/hta-* (and param-dlrm-8rank) that holds trace files."""
    root = traces / "pytorch"
    out = []
    for top in sorted(root.glob("hta-*")) + [root / "param-dlrm-8rank"]:
        for d in sorted([top] + [p for p in top.rglob("*") if p.is_dir()]):
            if any(f.name.endswith((".json", ".json.gz")) for f in d.iterdir() if f.is_file()):
                out.append(d)
    return out


def _names(traces_env: str) -> List[str]:
    root = Path(traces_env) / "pytorch"
    return [str(p.relative_to(root)) for p in trace_sets(Path(traces_env))]


def _params() -> List[Tuple[str, bool]]:
    import os

    env = os.environ.get("TRACEWISE_TRACES")
    if not env or not (Path(env) / "pytorch").is_dir():
        return [("(TRACEWISE_TRACES unset)", False)]
    return [(name, last) for name in _names(env) for last in (False, True)]


# (trace set, include_last_profiler_step or None for both, method) -> the documented reason.
# Every entry is an open difference of #44 named in docs/differences.md section 14. Empty
# since session 38: the 28 entries of 2026-12-05 (temporal and kernel breakdowns over HTA's
# rows with a stream, idle frames' stream dtype, the time at a queue length of 4 with the
# last step) came to agree.
KNOWN: Dict[Tuple[str, object, str], str] = {}


def known(name: str, last: bool, method: str) -> str:
    return KNOWN.get((name, last, method)) or KNOWN.get((name, None, method)) or ""


_CACHE: Dict[Tuple[str, bool], tuple] = {}


@pytest.fixture(params=_params(), ids=lambda p: f"{p[0]}-last={p[1]}")
def pair(request, traces):
    name, last = request.param
    if name.startswith("("):
        pytest.skip("SKIPPED: TRACEWISE_TRACES is not set")
    key = (name, last)
    if key not in _CACHE:
        from tracewise.hta import TraceAnalysis

        trace_dir = str(traces / "pytorch" / name)
        warnings.simplefilter("ignore", FutureWarning)
        logging.getLogger("hta").setLevel(logging.CRITICAL)
        with contextlib.redirect_stdout(io.StringIO()):
            theirs = hta_ta.TraceAnalysis(trace_dir=trace_dir, include_last_profiler_step=last)
        ours = TraceAnalysis(trace_dir=trace_dir, include_last_profiler_step=last)
        _CACHE.clear()  # one trace set in memory at a time
        _CACHE[key] = (theirs, ours)
    theirs, ours = _CACHE[key]
    return name, last, theirs, ours


def equal(a, b) -> None:
    """``b`` (ours) equals ``a`` (HTA's) with the tolerances of the module docs."""
    if a is None or b is None:
        assert a is None and b is None, (a, b)
    elif isinstance(a, pd.Series):
        pd.testing.assert_series_equal(b, a, rtol=1e-9, atol=0)
    elif isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(b, a, rtol=1e-9, atol=0)
    elif isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for k in a:
            equal(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            equal(x, y)
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b)
    else:
        assert a == b


def check(name: str, last: bool, method: str, theirs_fn, ours_fn) -> None:
    """Compares HTA's and our result of one call; an exception HTA raises must be ours too
    (the same class)."""
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            a = theirs_fn()
        except Exception as e:  # noqa: BLE001 - HTA's error, to be matched
            if known(name, last, method):
                try:
                    ours_fn()
                except type(e):
                    return
                except Exception:  # noqa: BLE001 - another error: the listed difference
                    pass
                pytest.xfail(known(name, last, method))
            with pytest.raises(type(e)):
                ours_fn()
            return
    reason = known(name, last, method)
    if not reason:
        equal(a, ours_fn())
        return
    try:
        equal(a, ours_fn())
    except Exception:  # noqa: BLE001 - a listed difference, an assertion or an error
        pytest.xfail(reason)


def test_temporal_breakdown(pair):
    name, last, theirs, ours = pair
    check(name, last, "temporal", lambda: theirs.get_temporal_breakdown(visualize=False),
          lambda: ours.get_temporal_breakdown(visualize=False))


def test_comm_comp_overlap(pair):
    name, last, theirs, ours = pair
    check(name, last, "overlap", lambda: theirs.get_comm_comp_overlap(visualize=False),
          lambda: ours.get_comm_comp_overlap(visualize=False))


def test_gpu_kernel_breakdown(pair):
    name, last, theirs, ours = pair
    check(name, last, "kernel_breakdown", lambda: theirs.get_gpu_kernel_breakdown(visualize=False),
          lambda: ours.get_gpu_kernel_breakdown(visualize=False))


def test_gpu_kernel_breakdown_without_memory_kernels(pair):
    name, last, theirs, ours = pair
    check(name, last, "kernel_breakdown",
          lambda: theirs.get_gpu_kernel_breakdown(visualize=False, include_memory_kernels=False),
          lambda: ours.get_gpu_kernel_breakdown(visualize=False, include_memory_kernels=False))


def test_profiler_steps(pair):
    name, last, theirs, ours = pair
    check(name, last, "steps", lambda: [int(s) for s in theirs.get_profiler_steps()],
          lambda: ours.get_profiler_steps())


def _ranks(theirs) -> List[int]:
    return sorted(theirs.t.get_ranks())


def test_idle_time_breakdown(pair):
    name, last, theirs, ours = pair
    ranks = _ranks(theirs)
    check(name, last, "idle",
          lambda: theirs.get_idle_time_breakdown(ranks=ranks, visualize=False, show_idle_interval_stats=True),
          lambda: ours.get_idle_time_breakdown(ranks=ranks, visualize=False, show_idle_interval_stats=True))


def test_idle_time_breakdown_default_rank(pair):
    name, last, theirs, ours = pair
    check(name, last, "idle_default", lambda: theirs.get_idle_time_breakdown(visualize=False),
          lambda: ours.get_idle_time_breakdown(visualize=False))


@pytest.mark.parametrize("memory", [True, False])
def test_cuda_kernel_launch_stats(pair, memory):
    name, last, theirs, ours = pair
    ranks = _ranks(theirs)
    check(name, last, "launch_stats",
          lambda: theirs.get_cuda_kernel_launch_stats(ranks=ranks, include_memory_events=memory, visualize=False),
          lambda: ours.get_cuda_kernel_launch_stats(ranks=ranks, include_memory_events=memory, visualize=False))


def test_queue_length_time_series(pair):
    name, last, theirs, ours = pair
    ranks = _ranks(theirs)
    check(name, last, "queue_time_series", lambda: theirs.get_queue_length_time_series(ranks=ranks),
          lambda: ours.get_queue_length_time_series(ranks=ranks))


def test_queue_length_summary(pair):
    name, last, theirs, ours = pair
    ranks = _ranks(theirs)
    check(name, last, "queue_summary", lambda: theirs.get_queue_length_summary(ranks=ranks),
          lambda: ours.get_queue_length_summary(ranks=ranks))


@pytest.mark.parametrize("max_queue_length", [1024, 4])
def test_time_spent_blocked_on_full_queue(pair, max_queue_length):
    """Both sides from their own time series (HTA's function over HTA's series, ours over
    ours)."""
    name, last, theirs, ours = pair
    ranks = _ranks(theirs)
    check(name, last, f"blocked{max_queue_length}",
          lambda: theirs.get_time_spent_blocked_on_full_queue(
              theirs.get_queue_length_time_series(ranks=ranks), max_queue_length=max_queue_length),
          lambda: ours.get_time_spent_blocked_on_full_queue(
              ours.get_queue_length_time_series(ranks=ranks), max_queue_length=max_queue_length))


def test_queue_length_summary_from_time_series_is_pure(pair):
    """Fed HTA's own series, our summary function gives HTA's summary (a parity test of the
    function alone, apart from the series)."""
    name, last, theirs, ours = pair
    ranks = _ranks(theirs)
    with contextlib.redirect_stdout(io.StringIO()):
        series = theirs.get_queue_length_time_series(ranks=ranks)
        a = theirs.get_queue_length_summary_from_time_series({k: v.copy() for k, v in series.items()})
    b = ours.get_queue_length_summary_from_time_series({k: v.copy() for k, v in series.items()})
    equal(a, b)


def _stragglers(name: str, last: bool, theirs_fn, ours_fn) -> None:
    """HTA's and our stragglers are the same ranks in the same order, or the same error;
    where HTA's default metric fails inside (a TypeError: it unpacks ``idxmax()`` of a
    spread that is NaN everywhere, which happens when no communication kernel ran on two
    ranks in one stream and step), ours raises ValueError saying so (docs/differences.md
    §14, "stragglers")."""
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = theirs_fn()
        except TypeError as e:
            assert "cannot unpack non-iterable float" in str(e), e
            with pytest.raises(ValueError, match="no straggler metric"):
                ours_fn()
            return
        except Exception as e:  # noqa: BLE001 - HTA's error, to be matched
            with pytest.raises(type(e)):
                ours_fn()
            return
        assert ours_fn() == [int(r) for r in want]


def test_potential_stragglers(pair):
    name, last, theirs, ours = pair
    _stragglers(name, last, lambda: theirs.get_potential_stragglers(visualize=False),
                lambda: ours.get_potential_stragglers(visualize=False))


def _total_comm_time(df, symbol_table, n, visualize):
    """A user's identification function: each rank's total ncclKernel time."""
    ids = [i for i, s in enumerate(symbol_table.get_sym_table()) if s.startswith("ncclKernel")]
    return df[df["name"].isin(ids)].groupby("rank")["dur"].sum()


def test_potential_stragglers_selected_steps_and_functions(pair):
    from hta.analyzers.straggler import find_stragglers_with_late_start_comm_kernels as htas

    name, last, theirs, ours = pair
    steps = ours.get_profiler_steps()
    cases = [
        {"profiler_steps": steps},
        {"profiler_steps": steps[:1], "num_candidates": 1},
        {"profiler_steps": [max(steps, default=0) + 1000]},
        {"straggler_identification_impl": _total_comm_time, "num_candidates": 3},
        {"straggler_identification_impl": _total_comm_time, "profiler_steps": steps[-1:]},
    ]
    for kw in cases:
        _stragglers(name, last, lambda: theirs.get_potential_stragglers(**kw),
                    lambda: ours.get_potential_stragglers(**kw))
    # HTA's own function, handed our inputs: the same answer or the same error.
    check(name, last, "stragglers_htas_function",
          lambda: theirs.get_potential_stragglers(straggler_identification_impl=htas),
          lambda: ours.get_potential_stragglers(straggler_identification_impl=htas))


def test_unknown_rank_is_a_value_error(pair):
    _, _, theirs, ours = pair
    bad = max(_ranks(theirs)) + 1000
    for call in (
        lambda ta: ta.get_idle_time_breakdown(ranks=[bad], visualize=False),
        lambda ta: ta.get_cuda_kernel_launch_stats(ranks=[bad], visualize=False),
        lambda ta: ta.get_queue_length_time_series(ranks=[bad]),
    ):
        with contextlib.redirect_stdout(io.StringIO()), pytest.raises(ValueError):
            call(theirs)
        with pytest.raises(ValueError):
            call(ours)


def test_the_hta_notebook_runs(tmp_path, monkeypatch):
    """python/examples/hta_dropin.py, cell by cell as a notebook would run it: the
    drop-in's queue methods, memory bandwidth, annotation times, ATen launch delays and a
    TraceDiff of two steps, whose frames have HTA's columns."""
    import os
    import runpy

    repo = Path(__file__).resolve().parents[2]
    traces = os.environ.get("TRACEWISE_TRACES")
    if traces:
        monkeypatch.setenv("TRACEWISE_TRACES", str(Path(traces).resolve()))
    monkeypatch.chdir(tmp_path)
    ns = runpy.run_path(str(repo / "python" / "examples" / "hta_dropin.py"), run_name="__main__")
    queue, summary = ns["queue"], ns["summary"]
    assert list(queue.columns) == ["ts", "pid", "tid", "stream", "queue_length"]
    assert len(queue) > 0 and queue["queue_length"].min() >= 0
    assert summary[("queue_length", "count")].sum() == len(queue)
    full, deep = ns["blocked_full"], ns["blocked_deep"]
    assert list(full.columns) == [
        "rank",
        "stream",
        "duration_at_max_queue_length",
        "relative_duration_at_max_queue_length",
    ]
    assert len(deep) == 1 and 0 < deep["relative_duration_at_max_queue_length"].iloc[0] <= 1
    # The three memory and annotation methods of the example (issue #44's new ones).
    bandwidth, bw_summary, annotations = ns["bandwidth"], ns["bandwidth_summary"], ns["annotations"]
    rank = ns["rank"]
    if traces:
        frame = bandwidth[rank]
        assert list(frame.columns) == ["ts", "pid", "name", "memory_bw_gbps"]
        # A step function that returns to 0 once every copy has ended.
        assert (frame.groupby("name")["memory_bw_gbps"].last().abs() < 1e-6).all()
        assert (bw_summary[("memory_bw_gbps", "min")] > 0).all()
        assert set(bw_summary.index.get_level_values("name")) == set(frame["name"])
        assert list(annotations.columns) == [
            "name", "sum (us)", "max (us)", "min (us)", "stddev", "mean (us)", "rank"
        ]
        assert (annotations["sum (us)"] >= annotations["max (us)"]).all()
    # The ATen launch delays and the step diff (issue #44, session 32).
    delays, step_diff, step_changes = ns["delays"], ns["step_diff"], ns["step_changes"]
    assert list(delays.columns) == [
        "aten_op_name", "kernel_sequence", "occurrence_count", "avg_aten_op_launch_delay", "avg_runtime_delay"
    ]
    assert len(delays) > 0 and (delays["occurrence_count"] >= 1).all()
    assert delays["occurrence_count"].is_monotonic_decreasing
    assert list(step_diff.columns) == [
        "first_counts", "first_total_duration", "last_counts", "last_total_duration",
        "diff_counts", "diff_duration", "counts_change_categories",
    ]
    assert (step_diff["diff_counts"] == step_diff["last_counts"] - step_diff["first_counts"]).all()
    assert sum(len(v) for k, v in step_changes.items() if k != "deleted") == int((step_diff["last_counts"] > 0).sum())


def test_memory_bw_time_series(pair):
    name, last, theirs, ours = pair
    ranks = _ranks(theirs)
    check(name, last, "memory_bw_time_series", lambda: theirs.get_memory_bw_time_series(ranks=ranks),
          lambda: ours.get_memory_bw_time_series(ranks=ranks))


def test_memory_bw_summary(pair):
    name, last, theirs, ours = pair
    ranks = _ranks(theirs)
    check(name, last, "memory_bw_summary", lambda: theirs.get_memory_bw_summary(ranks=ranks),
          lambda: ours.get_memory_bw_summary(ranks=ranks))


@pytest.mark.parametrize("use_gpu", [False, True])
@pytest.mark.parametrize("fold", [(1000, 0.8, None), (3, 0.5, None), (3, 0.5, ["Step", "forward"])])
def test_user_annotation_breakdown(pair, use_gpu, fold):
    """HTA's default folding and a small one (3 names, the 0.5 quantile), with and without
    an allowlist."""
    name, last, theirs, ours = pair
    num, ratio, allow = fold
    check(name, last, f"user_annotation{int(use_gpu)}",
          lambda: theirs.get_gpu_user_annotation_breakdown(
              use_gpu_annotation=use_gpu, visualize=False, num_kernels=num, duration_ratio=ratio,
              allowlist_patterns=allow),
          lambda: ours.get_gpu_user_annotation_breakdown(
              use_gpu_annotation=use_gpu, visualize=False, num_kernels=num, duration_ratio=ratio,
              allowlist_patterns=allow))


ARG_COLUMNS = ["bytes", "memory_bw_gbps", "wait_on_stream", "wait_on_cuda_event_record_corr_id",
               "input_dims", "input_type", "input_strides"]


def same_arg_columns(a: pd.DataFrame, b: pd.DataFrame, what: str, dtypes: bool = True) -> None:
    """HTA's default ``args`` columns of ``b`` (ours) equal ``a``'s (HTA's) on the same
    events (matched by ``index``), exactly: values (lists for ``input_*``) and, with
    ``dtypes``, HTA's downcast dtypes; in HTA's order, right after ``correlation``."""
    cols = list(b.columns)
    at = cols.index("correlation") + 1
    assert cols[at:at + len(ARG_COLUMNS)] == ARG_COLUMNS, (what, cols)
    key = ["rank", "index"] if "rank" in a.columns and "rank" in b.columns else ["index"]
    x = a[key + ARG_COLUMNS].sort_values(key, ignore_index=True)
    y = b[key + ARG_COLUMNS].sort_values(key, ignore_index=True)
    assert len(x) == len(y) and (x[key].to_numpy() == y[key].to_numpy()).all(), what
    for c in ARG_COLUMNS:
        if dtypes:
            assert y[c].dtype == x[c].dtype, (what, c, x[c].dtype, y[c].dtype)
        assert x[c].tolist() == y[c].tolist(), (what, c)


def test_hta_args_columns(pair):
    """HTA's ``bytes``, ``memory_bw_gbps``, ``wait_on_*`` and ``input_*`` columns of every
    rank's frame (the frame handed to a user's straggler function, and that of
    ``CPGraph``'s and the CUPTI frames) equal those of HTA's parsed frame: every event,
    value and dtype."""
    name, last, theirs, ours = pair
    for rank in _ranks(theirs):
        same_arg_columns(theirs.t.traces[rank], ours._frame_with_args(rank), f"{name} rank {rank}")
    # The common frame stays without them (built only where asked).
    assert "bytes" not in ours._frames()[_ranks(theirs)[0]].columns


def test_cupti_counter_data(pair):
    name, last, theirs, ours = pair
    ranks = _ranks(theirs)
    check(name, last, "cupti", lambda: theirs.get_cupti_counter_data_with_operators(ranks=ranks),
          lambda: ours.get_cupti_counter_data_with_operators(ranks=ranks))


def _json_events(path: Path) -> list:
    import gzip
    import json

    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)["traceEvents"]


@pytest.mark.parametrize(
    "name",
    [
        "hta-critical-path/alexnet",
        "hta-sampled-2rank",
        "hta-amd-mi250",
        "hta-critical-path/cuda_event_sync",
        "hta-nccl-a100",
        "hta-trace-diff/control",
    ],
)
def test_generate_trace_with_counters(traces, tmp_path, name):
    """Both write their traces with counters from copies of the trace set (HTA writes beside
    its input): the same events, the counters (``ph`` C) equal in order, ``ts`` at 1e-9
    relative. HTA gzips whatever the name; ours is gzip when the name ends in ``.gz``. Six
    sets of the smaller ones (HTA's load of each is repeated here on a copy)."""
    import shutil

    from tracewise.hta import TraceAnalysis, TimeSeriesTypes

    src = traces / "pytorch" / name
    files = [f for f in src.iterdir() if f.is_file() and f.name.endswith((".json", ".json.gz"))]
    for side in ("hta", "ours"):
        (tmp_path / side).mkdir()
        for f in files:
            shutil.copy(f, tmp_path / side / f.name)
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.getLogger("hta").setLevel(logging.CRITICAL)
        theirs = hta_ta.TraceAnalysis(trace_dir=str(tmp_path / "hta"))
        ranks = sorted(theirs.t.get_ranks())
        theirs.generate_trace_with_counters(ranks=ranks)
        theirs.generate_trace_with_counters(
            time_series=hta_ta.TimeSeriesTypes.QUEUE_LENGTH, ranks=ranks[:1], output_suffix="_q")
    ours = TraceAnalysis(trace_dir=str(tmp_path / "ours"))
    ours.generate_trace_with_counters(ranks=ranks)
    ours.generate_trace_with_counters(time_series=TimeSeriesTypes.QUEUE_LENGTH, ranks=ranks[:1], output_suffix="_q")
    written = 0
    for f in files:
        for suffix in ("_with_counters", "_q"):
            out = f.name.replace(".json", f"{suffix}.json")
            a_path, b_path = tmp_path / "hta" / out, tmp_path / "ours" / out
            assert a_path.exists() == b_path.exists(), out
            if not a_path.exists():
                continue
            written += 1
            a, b = _json_events(a_path), _json_events(b_path)
            assert len(a) == len(b)
            ca = [e for e in a if e.get("ph") == "C"]
            cb = [e for e in b if e.get("ph") == "C"]
            assert len(ca) > 0 and len(ca) == len(cb)
            for x, y in zip(ca, cb):
                assert sorted(x) == sorted(y), (x, y)
                assert x["ts"] == pytest.approx(y["ts"], rel=1e-9), (x, y)
                assert (x["name"], x["pid"], x.get("id")) == (y["name"], y["pid"], y.get("id")), (x, y)
                assert list(x["args"]) == list(y["args"])
                for k in x["args"]:
                    assert x["args"][k] == pytest.approx(y["args"][k], rel=1e-9, abs=1e-9), (x, y)
            # The input is untouched.
            assert (tmp_path / "ours" / f.name).read_bytes() == (src / f.name).read_bytes()
    assert written > 0


def test_counters_of_trace_files_go_beside_the_files(traces, tmp_path):
    """With ``trace_files`` (read through links in a scratch directory) the trace with
    counters is written beside the file named, and the file itself is untouched."""
    import shutil

    from tracewise.hta import TraceAnalysis

    src = next((traces / "pytorch" / "hta-critical-path" / "alexnet").glob("*.json.gz"))
    shutil.copy(src, tmp_path / src.name)
    ours = TraceAnalysis({0: src.name}, str(tmp_path))
    ours.generate_trace_with_counters()
    out = tmp_path / src.name.replace(".json", "_with_counters.json")
    events = _json_events(out)
    assert any(e.get("ph") == "C" and e.get("name") == "Queue Length" for e in events)
    assert (tmp_path / src.name).read_bytes() == src.read_bytes()


def test_aten_op_kernels_and_delay(pair):
    name, last, theirs, ours = pair
    ranks = _ranks(theirs)
    check(name, last, "aten_op_kernels", lambda: theirs.get_aten_op_kernels_and_delay(ranks=ranks),
          lambda: ours.get_aten_op_kernels_and_delay(ranks=ranks))


# The columns of get_gpu_kernels_with_user_annotations compared (docs/differences.md §14:
# HTA's symbol ids differ from run to run, and the frame's other columns are not built).
ANNOTATED_KERNEL_COLUMNS = ["s_name", "s_cat", "s_user_annotation", "ts", "dur", "end", "stream",
                            "correlation", "pid", "tid", "iteration"]


def _annotated(df):
    if df is None:
        return None
    out = df[ANNOTATED_KERNEL_COLUMNS].copy()
    for c in ("ts", "dur", "end"):
        out[c] = out[c].astype("float64")
    for c in ("stream", "correlation", "iteration"):
        out[c] = out[c].astype("int64")
    return out


@pytest.mark.parametrize("short", [True, False])
def test_gpu_kernels_with_user_annotations(pair, short):
    name, last, theirs, ours = pair
    for rank in _ranks(theirs):
        check(name, last, "kernels_with_annotations",
              lambda: _annotated(theirs.get_gpu_kernels_with_user_annotations(rank, True, short)),
              lambda: _annotated(ours.get_gpu_kernels_with_user_annotations(rank, True, short)))


def test_kernel_type_time_equals_htas_with_ties():
    """``_kernel_type_time`` against HTA 0.5.0's ``_get_gpu_kernel_type_time`` on seeded
    activities on a 5 µs grid (many ends and starts at one µs, more than numpy's
    insertion-sort size, so that the quicksort's tie order shows): the same time per
    combination of types, 0 µs combinations included, or the same error."""
    import random

    import numpy as np
    from hta.analyzers.breakdown_analysis import BreakdownAnalysis

    from tracewise._hta_stats import _kernel_type_time

    def merged(df: pd.DataFrame) -> list:
        out: list = []
        for ts, end in sorted(zip(df["ts"], df["ts"] + df["dur"])):
            if out and ts <= out[-1][1]:
                out[-1] = (out[-1][0], max(out[-1][1], end))
            else:
                out.append((ts, end))
        return [(float(a), float(b)) for a, b in out]

    types = ["COMPUTATION", "COMMUNICATION", "MEMORY"]
    rng = random.Random(44)
    zero_rows = 0
    for _ in range(40):
        n = rng.randint(1, 80)
        df = pd.DataFrame(
            {
                "ts": np.asarray([rng.randrange(0, 400, 5) for _ in range(n)], dtype="int64"),
                "dur": np.asarray([rng.choice([5, 10, 15, 30]) for _ in range(n)], dtype="float64"),
                "kernel_type": [rng.choice(types) for _ in range(n)],
            }
        )
        analysed = types[: rng.choice([2, 3])]
        intervals = [merged(df[df["kernel_type"] == t]) for t in analysed]
        try:
            want = BreakdownAnalysis._get_gpu_kernel_type_time(df.copy(), analysed)
        except Exception as e:  # noqa: BLE001 - HTA's error, to be matched
            with pytest.raises(type(e)):
                _kernel_type_time(analysed, intervals)
            continue
        got = _kernel_type_time(analysed, intervals)
        assert dict(zip(want["kernel_type"], want["sum"].astype(int))) == got
        zero_rows += sum(1 for v in got.values() if v == 0)
    # The case the function exists for: some combination held for 0 µs.
    assert zero_rows > 0


def test_fold_helpers_equal_numpys_and_pandas():
    """``_percentile`` and ``_nargsort`` (the kernel fold's quantile and sorts, without
    numpy's and pandas' dispatch) against ``np.percentile`` and pandas' ``nargsort`` on
    seeded cumulative sums with ties and zeros, and ``_group_describe`` (the idle interval
    statistics) against pandas' ``describe()`` with NaN values and a group of NaN only."""
    import random

    import numpy as np
    from pandas.core.sorting import nargsort

    from tracewise._hta_stats import _group_describe, _nargsort, _percentile

    rng = random.Random(39)
    for _ in range(3000):
        n = rng.randrange(1, 40)
        totals = np.array([rng.choice([rng.random() * 1e4, float(rng.randrange(0, 50)), 0.0]) for _ in range(n)])
        q = rng.choice([0.8, 0.5, 0.9, 0.0, 1.0, rng.random()]) * 100.0
        assert _percentile(np.cumsum(totals), q) == np.percentile(np.cumsum(totals), q)
        for ascending in (True, False):
            assert _nargsort(totals, ascending).tolist() == nargsort(totals, kind="quicksort", ascending=ascending).tolist()
    for _ in range(200):
        n = rng.randrange(1, 60)
        group = np.array([rng.randrange(0, 5) for _ in range(n)] + [7], dtype="int64")
        v = np.array([rng.choice([float("nan"), float(rng.randrange(0, 20)), rng.random()]) for _ in range(n)] + [float("nan")])
        groups, stats = _group_describe(group, v)
        want = pd.Series(v).groupby(group).describe()
        assert groups.tolist() == want.index.tolist()
        for c in want.columns:
            np.testing.assert_allclose(stats[c], want[c].to_numpy(), rtol=1e-12, atol=0, equal_nan=True)
