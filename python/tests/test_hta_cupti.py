"""``get_cupti_counter_data_with_operators`` on traces WITH CUPTI counters, against HTA
0.5.0 run in the same test. No shared trace was recorded in CUPTI profiler mode (HTA's own
``tests/data/cupti_profiler`` trace is not among them; the shared HTA sets give ``[]``,
compared in test_hta_parity.py), so the traces are built here with a seed, shaped as
Kineto writes that mode: ``cpu_op`` stacks on the main thread, each ending in a
``cudaLaunchKernel``; per launch a ``cuda_profiler_range`` event on the device whose
``args`` are counters (one counter missing on every third range); no kernel events; two
ranks. Also a rank whose launches and ranges do not pair one to one (HTA leaves it out).

Compared exactly: the rows, their order, and every column tracewise builds, by value;
the call graph's ``depth`` … ``last_kernel_end`` also by dtype (HTA downcasts them over the
rank's whole call graph). HTA's frame columns tracewise does not build (``bytes`` …
``input_strides``), the counters' column order (HTA's follows a Python set) and the other
integer widths are docs/differences.md §14's "CUPTI counters"."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import random
import warnings
from pathlib import Path
from typing import Any, Dict, List

import pandas as pd
import pytest

hta_ta = pytest.importorskip("hta.trace_analysis", reason="SKIPPED: HolisticTraceAnalysis is not installed")

COUNTERS = (
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "sm__cycles_elapsed.avg",
)
CALL_GRAPH = (
    "depth",
    "height",
    "parent",
    "num_kernels",
    "kernel_dur_sum",
    "kernel_span",
    "first_kernel_start",
    "last_kernel_end",
)
OUTER = ("aten::linear", "aten::conv2d", "aten::mm", "aten::matmul")
INNER = ("aten::addmm", "aten::cudnn_convolution", "aten::bmm")


def _trace(rank: int, seed: int, kernels: int, extra_launch: bool, bare: bool = False, tid: int = 10) -> Dict[str, Any]:
    """One rank's trace in CUPTI profiler mode (see the module docs). Stack depth varies:
    one or two ``cpu_op``s above the launch (with ``bare``, the first launch has none,
    only the step's ``user_annotation``); ranges start after their launch."""
    rng = random.Random(seed * 100 + rank)
    ev: List[Dict[str, Any]] = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 10, "tid": tid,
         "ts": 990, "dur": 1000 * kernels + 100},
    ]
    ts = 1000
    for i in range(kernels):
        depth = 0 if bare and i == 0 else rng.choice([1, 2])
        stack = [rng.choice(OUTER), rng.choice(INNER)][:depth]
        for level, name in enumerate(stack):
            ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 10, "tid": tid,
                       "ts": ts + 5 * level, "dur": 500 - 10 * level, "args": {"External id": 100 * level + i}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": tid,
                   "ts": ts + 20, "dur": 30, "args": {"correlation": 300 + i, "External id": 100 + i}})
        args = {c: rng.randrange(0, 10**7) for c in COUNTERS if not (c.startswith("sm__") and i % 3 == 1)}
        ev.append({"ph": "X", "cat": "cuda_profiler_range", "name": f"void kernel_{rng.randrange(3)}<float>(float*)",
                   "pid": 0, "tid": "CUPTI Profiler Range", "ts": ts + 600, "dur": rng.randrange(5, 50), "args": args})
        ts += 1000
    if extra_launch:
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": tid,
                   "ts": ts - 100, "dur": 30, "args": {"correlation": 999, "External id": 999}})
    rng.shuffle(ev)
    return {"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 2},
            "traceEvents": ev}


def _write(tmp: Path, seed: int, extra_launch_on_rank1: bool = False, bare: bool = False) -> str:
    d = tmp / f"cupti{seed}"
    d.mkdir()
    for rank in (0, 1):
        extra = extra_launch_on_rank1 and rank == 1
        (d / f"rank-{rank}.json").write_text(json.dumps(_trace(rank, seed, 12 + 3 * rank, extra, bare)))
    return str(d)


def _both(trace_dir: str, last: bool, ranks: Any) -> tuple:
    from tracewise.hta import TraceAnalysis

    logging.getLogger("hta").setLevel(logging.CRITICAL)
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = hta_ta.TraceAnalysis(trace_dir=trace_dir, include_last_profiler_step=last)
        a = theirs.get_cupti_counter_data_with_operators(ranks=ranks)
    b = TraceAnalysis(trace_dir=trace_dir, include_last_profiler_step=last).get_cupti_counter_data_with_operators(
        ranks=ranks
    )
    return a, b


def _equal(a: pd.DataFrame, b: pd.DataFrame) -> None:
    missing = [c for c in b.columns if c not in a.columns]
    assert not missing, f"ours has columns HTA's has not: {missing}"
    built = [c for c in a.columns if c in b.columns]
    assert set(COUNTERS) <= set(built)
    for c in ("index", "name", "ts", "dur", "index_runtime", "op_stack", "top_level_op", "bottom_level_op"):
        assert c in built, c
    pd.testing.assert_frame_equal(b[built], a[built], check_dtype=False)
    for c in CALL_GRAPH:
        assert c in built, c
        assert b[c].dtype == a[c].dtype, (c, b[c].dtype, a[c].dtype)
    # HTA's columns are where its frame has them: after `end`, before `index_runtime`.
    assert [c for c in b.columns if c in CALL_GRAPH or c in ("end", "index_runtime")] == (
        ["end", *CALL_GRAPH, "index_runtime"]
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("last", [False, True])
def test_counters_with_operators_equal_htas(tmp_path, seed, last):
    trace_dir = _write(tmp_path, seed)
    for ranks in (None, [0], [1]):
        a, b = _both(trace_dir, last, ranks)
        assert len(a) == len(b) == 1
        for x, y in zip(a, b):
            assert len(x) >= 12
            _equal(x, y)
            assert (y[COUNTERS[2]] == -1).sum() > 0  # a range without that counter: -1


def test_several_ranks_in_one_call(tmp_path):
    """HTA 0.5.0 looks every rank's launches up in the call graph of the first rank it
    cached (``get_stack_of_node(launch)`` without the rank): with ``ranks=[0, 1]`` it raises
    ValueError ("invalid node index") where rank 1 has more events than rank 0, and would
    give rank 0's stacks where it has fewer. Ours gives each rank its own stacks: the same
    frames as two one-rank calls, which match HTA's (docs/differences.md)."""
    from tracewise.hta import TraceAnalysis

    trace_dir = _write(tmp_path, 6)
    logging.getLogger("hta").setLevel(logging.CRITICAL)
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = hta_ta.TraceAnalysis(trace_dir=trace_dir)
        with pytest.raises(ValueError, match="invalid node index"):
            theirs.get_cupti_counter_data_with_operators(ranks=[0, 1])
    ours = TraceAnalysis(trace_dir=trace_dir)
    both = ours.get_cupti_counter_data_with_operators(ranks=[0, 1])
    assert len(both) == 2
    for rank, frame in zip((0, 1), both):
        [alone] = _both(trace_dir, False, [rank])[0]
        _equal(alone, frame)


def test_a_rank_whose_launches_and_ranges_differ_is_left_out(tmp_path):
    trace_dir = _write(tmp_path, 4, extra_launch_on_rank1=True)
    a, b = _both(trace_dir, False, [0])
    assert len(a) == len(b) == 1
    _equal(a[0], b[0])
    assert _both(trace_dir, False, [1]) == ([], [])


def test_a_launch_outside_every_operator(tmp_path):
    """HTA fails (IndexError: its ``ops[0]``) when a launch has no ``cpu_op`` above it;
    ours gives that kernel an empty stack and "" for both levels (docs/differences.md)."""
    from tracewise.hta import TraceAnalysis

    trace_dir = _write(tmp_path, 5, bare=True)
    logging.getLogger("hta").setLevel(logging.CRITICAL)
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = hta_ta.TraceAnalysis(trace_dir=trace_dir)
        with pytest.raises(IndexError):
            theirs.get_cupti_counter_data_with_operators()
    [ours] = TraceAnalysis(trace_dir=trace_dir).get_cupti_counter_data_with_operators()
    first = ours.iloc[0]
    assert first["op_stack"] == [] and first["top_level_op"] == "" and first["bottom_level_op"] == ""
    assert all(len(s) >= 1 for s in ours["op_stack"].iloc[1:])


def test_call_graph_columns_widen_as_htas(tmp_path):
    """The call graph's integer columns take HTA's downcast over the whole graph: a host
    thread with tid 70000 (its stack's root, every top-level event's parent, is -70000:
    int32) and 45 launches (event indices, hence parents, past 127)."""
    d = tmp_path / "wide"
    d.mkdir()
    for rank in (0, 1):
        (d / f"rank-{rank}.json").write_text(json.dumps(_trace(rank, 7, 45, False, tid=70000)))
    a, b = _both(str(d), False, [0])
    _equal(a[0], b[0])
    assert b[0]["parent"].dtype == "int32"
