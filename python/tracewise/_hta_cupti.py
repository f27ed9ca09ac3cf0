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
"""

from __future__ import annotations

import logging
from typing import Any, Dict, List, Optional

import pandas as pd

from ._hta_frame import gpu_mask

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


def _ancestors(index: int, stacks: Any) -> List[int]:
    """The frame indices of ``index``'s call stack: itself and its ancestors."""
    out = []
    at: Optional[int] = index
    while at is not None:
        out.append(at)
        at = stacks.parent.get(at)
    return out


def counter_frame(frame: pd.DataFrame, path: str, rank: int, stacks_of: Any) -> Optional[pd.DataFrame]:
    """One rank's counter frame (see the module docs), or None where its ranges and
    launches do not pair one to one. ``frame`` is the rank's HTA frame
    (:func:`tracewise._hta_frame.analysis_frames`), ``path`` its trace file, and
    ``stacks_of(host)`` builds HTA's call stacks from host rows (name, cat, thread,
    start, end, index)."""
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
    host = list(
        zip(
            cpu["name"],
            cpu["cat"],
            cpu["pid"].astype(str) + "/" + cpu["tid"].astype(str),
            cpu["ts"],
            cpu["ts"] + cpu["dur"],
            cpu["index"],
        )
    )
    stacks = stacks_of(host)
    by_index: Dict[int, Any] = {int(i): (c, n, t) for i, c, n, t in zip(cpu["index"], cpu["cat"], cpu["name"], cpu["ts"])}
    op_stacks, tops, bottoms = [], [], []
    for launch in launches["index"]:
        stack = [by_index[i] + (i,) for i in _ancestors(int(launch), stacks) if i in by_index]
        ops = [name for cat, name, _, _ in sorted(stack, key=lambda s: (s[2], s[3])) if cat == "cpu_op"]
        op_stacks.append(ops)
        tops.append(ops[0] if ops else "")
        bottoms.append(ops[-1] if ops else "")
    ranges["index_runtime"] = launches["index"].to_numpy()
    ranges["op_stack"] = pd.Series(op_stacks, index=ranges.index, dtype=object)
    ranges["top_level_op"] = tops
    ranges["bottom_level_op"] = bottoms
    return ranges
