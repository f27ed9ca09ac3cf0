"""HTA 0.5.0's ``get_cupti_counter_data_with_operators``: the CUPTI profiler's counter
ranges of one rank with the operators that launched each kernel.

A trace recorded in CUPTI profiler mode holds, per kernel, a ``cuda_profiler_range``
event whose ``args`` are the counters, and no kernel events. HTA pairs the ranges, in start
order, with the ``cudaLaunchKernel*`` runtime calls (category starting ``cuda_runtime``),
in start order, one to one; where the counts differ it logs an error and leaves the rank
out. Each range gets the frame index of its launch (``index_runtime``), the ``cpu_op``
events of the launch's call stack (its ancestors on its thread, by start: ``op_stack``),
the outermost (``top_level_op``) and the innermost (``bottom_level_op``). A counter is a
column named by its ``args`` key, -1 where a range lacks it.

HTA's frame also carries its call graph's columns (``depth``, ``height``, ``parent``,
``num_kernels``, ``kernel_dur_sum``, ``kernel_span``, ``first_kernel_start``,
``last_kernel_end``), which its ``CallGraph`` writes over the rank's whole frame. The ranges
lie on the device's thread (pid or tid 0), for which HTA builds no call stack: they keep the
values the columns start with (-1, -1, -1, 0, 0.0, 0.0, -1.0, -1.0); the first four are
downcast over the whole frame (the call stacks of its host threads: depths, heights, parents
with each thread's root ``-abs(tid)``), the others float64. Built where that holds and the
rank has no GPU work on a stream for HTA to link under its launches (no CUPTI-mode trace
has); elsewhere the frame has no such columns (docs/differences.md).
"""

from __future__ import annotations

import logging
from typing import Any, Dict, List, Optional

import numpy as np
import pandas as pd

from ._hta_frame import gpu_mask
from ._hta_stats import _int_dtype

PROFILER_RANGE = "cuda_profiler_range"

_LOG = logging.getLogger("tracewise.hta")


def _counter_columns(path: str) -> pd.DataFrame:
    """The counters of the trace file ``path``, indexed by event index (the frame's
    ``index``): one column per ``args`` key of a ``cuda_profiler_range`` event (names
    sorted), -1 where absent."""
    from . import load

    capture = load(path)
    columns = [c for c in capture.events().columns if c.startswith("args_")]
    if not columns:
        return pd.DataFrame()
    picks = ", ".join(f'"{c}"' for c in columns)
    ev = capture.sql(
        f"SELECT event_index, cat, {picks} FROM events WHERE cat = '{PROFILER_RANGE}' "
        "ORDER BY event_index"
    ).to_pandas()
    ranges = ev.set_index(ev["event_index"].astype("int64"))
    keep = sorted(c for c in columns if ranges[c].notna().any())
    out = ranges[keep].rename(columns={c: c[len("args_"):] for c in keep})
    for c in out.columns:
        col = out[c]
        if col.dtype.kind == "f" and (col.dropna() == col.dropna().round()).all():
            out[c] = col.fillna(-1).astype("int64")
        else:
            out[c] = col.where(col.notna(), -1)
    return out


def parents(stacks: Dict[str, np.ndarray]) -> Dict[int, Optional[int]]:
    """The parent of each event in HTA's call stacks (None for a top-level one), by event
    index, from the native stacks' columns (``tracewise._hta_callstack.call_stacks``)."""
    inside = stacks["parent"] != -2
    index, parent = stacks["index"][inside].tolist(), stacks["parent"][inside].tolist()
    return {i: (p if p >= 0 else None) for i, p in zip(index, parent)}


def _ancestors(index: int, parent: Dict[int, Optional[int]]) -> List[int]:
    """The frame indices of ``index``'s call stack: itself and its ancestors."""
    out = []
    at: Optional[int] = index
    while at is not None:
        out.append(at)
        at = parent.get(at)
    return out


def counter_frame(
    frame: pd.DataFrame, path: str, rank: int, parent: Dict[int, Optional[int]]
) -> Optional[pd.DataFrame]:
    """One rank's counter frame (see the module docs), or None where its ranges and
    launches do not pair one to one. ``frame`` is the rank's HTA frame
    (:func:`tracewise._hta_frame.analysis_frames`), ``path`` its trace file, and
    ``parent`` the parent of each event (by frame index) in HTA's call stacks of the rank
    (:func:`parents`)."""
    ranges = frame[frame["cat"] == PROFILER_RANGE].sort_values("ts", kind="stable").reset_index(drop=True)
    launches = frame[
        frame["cat"].str.match("cuda_runtime") & frame["name"].str.match("cudaLaunchKernel")
    ].sort_values("ts", kind="stable").reset_index(drop=True)
    if len(launches) != len(ranges):
        _LOG.error(
            "Number of kernels launches and kernels do not match for rank %s: kernel "
            "launches (%d), kernels (%d)",
            rank,
            len(launches),
            len(ranges),
        )
        return None
    counters = _counter_columns(path)
    if len(counters.columns):
        values = counters.reindex(ranges["index"].to_numpy())
        values.index = ranges.index
        at = list(ranges.columns).index("external_id") + 1
        ranges = pd.concat([ranges.iloc[:, :at], values, ranges.iloc[:, at:]], axis=1)
    cpu = frame[~gpu_mask(frame)]
    by_index: Dict[int, Any] = {int(i): (c, n, t) for i, c, n, t in zip(cpu["index"], cpu["cat"], cpu["name"], cpu["ts"])}
    op_stacks, tops, bottoms = [], [], []
    for launch in launches["index"]:
        stack = [by_index[i] + (i,) for i in _ancestors(int(launch), parent) if i in by_index]
        ops = [name for cat, name, _, _ in sorted(stack, key=lambda s: (s[2], s[3])) if cat == "cpu_op"]
        op_stacks.append(ops)
        tops.append(ops[0] if ops else "")
        bottoms.append(ops[-1] if ops else "")
    for column, values in (_call_graph_columns(frame, cpu, parent, ranges) or {}).items():
        ranges[column] = values
    ranges["index_runtime"] = launches["index"].to_numpy()
    ranges["op_stack"] = pd.Series(op_stacks, index=ranges.index, dtype=object)
    ranges["top_level_op"] = tops
    ranges["bottom_level_op"] = bottoms
    return ranges


def _stackless(thread: pd.DataFrame) -> bool:
    """Whether HTA builds no call stack for a (pid, tid) thread of its frame
    (``infer_device_type`` says GPU): every stream above 0, or pid 0, or tid 0."""
    return bool(
        (thread["stream"].unique() > 0).all()
        or (thread["pid"].unique() == 0).all()
        or (thread["tid"].unique() == 0).all()
    )


def _call_graph_columns(
    frame: pd.DataFrame, cpu: pd.DataFrame, parent: Dict[int, Optional[int]], ranges: pd.DataFrame
) -> Optional[Dict[str, np.ndarray]]:
    """HTA's call-graph columns of the ``ranges`` rows (see the module docs), or None where
    they are not built here: a range on a thread HTA stacks, GPU work on a stream above 0
    (HTA links it under its launch), or a stacked thread whose tid is not a number."""
    if (frame["stream"] > 0).any() or not len(ranges):
        return None
    stackless = {key: _stackless(thread) for key, thread in frame.groupby(["pid", "tid"], sort=False)}
    if not all(stackless.get(key, False) for key in zip(ranges["pid"], ranges["tid"])):
        return None
    # The host events HTA stacks (its stacks take the rows on no stream), each with its
    # thread's tid (its stack's root is -abs(tid)).
    tid_of: Dict[int, int] = {}
    for index, pid, tid, stream in zip(cpu["index"], cpu["pid"], cpu["tid"], cpu["stream"]):
        if stream != -1 or stackless.get((pid, tid), True):
            continue
        if not isinstance(tid, (int, np.integer)):
            return None
        tid_of[int(index)] = int(tid)
    depth: Dict[int, int] = {}
    parents = [-1]
    children: Dict[int, List[int]] = {}
    for index in tid_of:
        chain = [i for i in _ancestors(index, parent) if i in tid_of]
        depth[index] = len(chain) - 1
        up = chain[1] if len(chain) > 1 else -abs(tid_of[index])
        parents.append(up)
        if up >= 0:
            children.setdefault(up, []).append(index)
    # Height: 1 for an event with nothing beneath (no GPU kernel is linked here), else one
    # more than its highest child.
    height: Dict[int, int] = {}
    for index in sorted(depth, key=lambda i: -depth[i]):
        height[index] = max([1] + [height[c] + 1 for c in children.get(index, [])])
    n = len(ranges)

    def column(lo: int, hi: int, value: int) -> np.ndarray:
        return np.full(n, value, dtype=_int_dtype(lo, hi))

    return {
        "depth": column(-1, max(depth.values(), default=-1), -1),
        "height": column(-1, max(height.values(), default=-1), -1),
        "parent": column(min(parents), max(parents), -1),
        "num_kernels": column(0, 0, 0),
        "kernel_dur_sum": np.zeros(n),
        "kernel_span": np.zeros(n),
        "first_kernel_start": np.full(n, -1.0),
        "last_kernel_end": np.full(n, -1.0),
    }
