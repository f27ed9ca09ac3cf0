"""``get_potential_stragglers`` with a step selection and with an identification function,
against HTA 0.5.0 run in the same test, on synthetic multi-rank, multi-step traces (the
shared HTA trace sets have one step, or one rank, or no communication kernel; their cases
are in test_hta_parity.py). The traces are built here with a seed: four ranks, five
``ProfilerStep``s, two streams of ``ncclKernel``s whose starts and lengths vary by rank and
step, so that the metric's kernel choice, the per-step counting and the ties are all
exercised. Results are compared exactly (ranks, and their order)."""

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
hta_straggler = pytest.importorskip("hta.analyzers.straggler")

RANKS = 4
STEPS = 5
STEP_US = 2000
COMM = (
    "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
    "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
)


def _trace(rank: int, seed: int) -> Dict[str, Any]:
    """One rank's Kineto trace: per step a ``ProfilerStep#N`` span, a GEMM on stream 7 and
    the two communication kernels (stream 7 and 20), each launched by a
    ``cudaLaunchKernel`` of the step; starts and lengths drawn from ``seed``."""
    rng = random.Random(seed * 1000 + rank)
    ev: List[Dict[str, Any]] = []
    corr = 1
    for step in range(1, STEPS + 1):
        base = 1_000_000 + step * STEP_US
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}",
                   "pid": 1, "tid": 1, "ts": base, "dur": STEP_US - 10, "args": {"External id": corr}})
        kernels = [("void gemm_kernel<float>(float*)", 7, 50, 400)]
        kernels += [(COMM[0], 7, 600 + rng.randrange(0, 300), 200 + rng.randrange(0, 200))]
        kernels += [(COMM[1], 20, 900 + rng.randrange(0, 40), 100 + rng.randrange(0, 30))]
        for i, (name, stream, start, dur) in enumerate(kernels):
            corr += 1
            launch = base + 20 + 30 * i
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": launch, "dur": 8, "args": {"correlation": corr, "External id": corr}})
            ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream,
                       "ts": base + start, "dur": dur,
                       "args": {"device": 0, "stream": stream, "correlation": corr, "External id": corr}})
    return {
        "schemaVersion": 1,
        "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": RANKS},
        "deviceProperties": [],
        "traceEvents": ev,
    }


def _write(tmp: Path, seed: int) -> str:
    d = tmp / f"seed{seed}"
    d.mkdir()
    for r in range(RANKS):
        (d / f"rank-{r}.json").write_text(json.dumps(_trace(r, seed)))
    return str(d)


def _total_comm(df: pd.DataFrame, symbol_table: Any, n: int, visualize: bool) -> pd.Series:
    """A user's metric: each rank's total communication-kernel time, through the symbol
    table's accessors as a user would write it."""
    ids = [i for i, s in enumerate(symbol_table.get_sym_table()) if s.startswith("ncclKernel")]
    assert symbol_table.get_sym_id_map()[symbol_table.get_sym_table()[ids[0]]] == ids[0]
    return df[df["name"].isin(ids)].groupby("rank")["dur"].sum()


SEEN: List[Dict[str, Any]] = []
ARGS = ("bytes", "memory_bw_gbps", "wait_on_stream", "wait_on_cuda_event_record_corr_id",
        "input_dims", "input_type", "input_strides")


def _record(df: pd.DataFrame, symbol_table: Any, n: int, visualize: bool) -> pd.Series:
    """A user's function that records what it is handed."""
    names = symbol_table.get_sym_table()
    args = [c for c in ARGS if c in df]
    SEEN.append({
        "columns": [c for c in ("rank", "idx", "ts", "dur", "name", "cat", "stream", "iteration") if c in df],
        "args": args,
        "arg_values": sorted(tuple(str(v) for v in row) for row in df[["rank", "index"] + args].itertuples(index=False)),
        "arg_dtypes": [str(df[c].dtype) for c in args],
        "rows": len(df),
        "steps": sorted(int(i) for i in pd.unique(df["iteration"])),
        "names": sorted({names[i] for i in df["name"]}),
        "n": n,
        "visualize": visualize,
    })
    return df.groupby("rank")["ts"].max()


def _run(ta: Any, kw: Dict[str, Any]) -> Any:
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ta.get_potential_stragglers(visualize=False, **kw)
        except Exception as e:  # noqa: BLE001 - compared by class
            return type(e).__name__


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("last", [False, True])
def test_step_selection_and_functions_equal_htas(tmp_path, seed, last):
    from tracewise.hta import TraceAnalysis

    trace_dir = _write(tmp_path, seed)
    logging.getLogger("hta").setLevel(logging.CRITICAL)
    with contextlib.redirect_stdout(io.StringIO()):
        theirs = hta_ta.TraceAnalysis(trace_dir=trace_dir, include_last_profiler_step=last)
    ours = TraceAnalysis(trace_dir=trace_dir, include_last_profiler_step=last)
    steps = ours.get_profiler_steps()
    assert steps == [int(s) for s in theirs.get_profiler_steps()]
    assert len(steps) == (STEPS if last else STEPS - 1)
    default = hta_straggler.find_stragglers_with_late_start_comm_kernels
    cases: List[Dict[str, Any]] = [
        {},
        {"profiler_steps": steps},
        {"profiler_steps": steps[:1]},
        {"profiler_steps": steps[1:3], "num_candidates": 1},
        {"profiler_steps": steps[-2:], "num_candidates": 3},
        {"profiler_steps": [steps[0], 999]},
        {"profiler_steps": [999]},
        {"straggler_identification_impl": default},
        {"straggler_identification_impl": default, "profiler_steps": steps[2:], "num_candidates": 0},
        {"straggler_identification_impl": _total_comm, "num_candidates": 3},
        {"straggler_identification_impl": _total_comm, "profiler_steps": steps[:2]},
    ]
    for kw in cases:
        want, got = _run(theirs, kw), _run(ours, kw)
        if isinstance(want, list):
            want = [int(r) for r in want]
        assert got == want, (kw, want, got)
        if isinstance(want, list):
            assert want, kw


def test_the_function_is_handed_what_hta_hands_it(tmp_path):
    from tracewise.hta import TraceAnalysis

    trace_dir = _write(tmp_path, 4)
    logging.getLogger("hta").setLevel(logging.CRITICAL)
    with contextlib.redirect_stdout(io.StringIO()):
        theirs = hta_ta.TraceAnalysis(trace_dir=trace_dir)
    ours = TraceAnalysis(trace_dir=trace_dir)
    SEEN.clear()
    for ta in (theirs, ours):
        with contextlib.redirect_stdout(io.StringIO()):
            ranks = ta.get_potential_stragglers(
                profiler_steps=[2, 3], num_candidates=3, straggler_identification_impl=_record
            )
        assert len(ranks) == 3
    assert len(SEEN) == 2
    assert SEEN[0] == SEEN[1]
    assert SEEN[1]["steps"] == [2, 3] and SEEN[1]["n"] == 3 and SEEN[1]["visualize"] is False
    assert SEEN[1]["columns"] == ["rank", "idx", "ts", "dur", "name", "cat", "stream", "iteration"]
    assert SEEN[1]["args"] == list(ARGS)  # HTA's default args columns, equal by value and dtype
