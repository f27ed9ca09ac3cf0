"""HTA 0.5.0's time series for ``tracewise.hta.TraceAnalysis``: the queue length of each
stream and the memory bandwidth of each memory type, and what is computed from them (the
memory-bandwidth summary, the time blocked on a full queue).

A rank's series is built on first use and kept on its analysis: the summaries, the time
blocked and the counters trace ask for the same series. The kept frames are never handed
out; the methods give their callers copies. The functions that keep a series take the
analysis (its native trace ``_t``, its dtypes ``_frame_dtype`` and its ``__dict__``, where
the series are kept).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import pandas as pd

from . import _native
from ._hta_stats import _describe_groups, _describe_per_rank, _times

Columns = Optional[Tuple[Dict[str, np.ndarray], np.ndarray]]
"""A rank's series as the columns of its frame and its index values (None: no series)."""


def kept_frames(
    analysis: Any, what: str, ranks: List[int], build: Callable[[List[int]], Dict[int, Columns]], index_name: Optional[str]
) -> Dict[int, Optional[pd.DataFrame]]:
    """The ``what`` series frames of ``ranks`` (queue length, memory bandwidth; None for
    a rank without one), built on first use and kept: the summaries, the time blocked
    and the counters trace ask for the same series; callers hand out copies, never a
    kept frame. ``build(ranks)`` gives each rank's (columns, index values). The ranks
    not kept yet are made into one frame where their columns share dtypes, each rank's
    frame a slice of it: one frame build (about 0.2 ms) instead of one per rank."""
    cache: Dict[Tuple[str, int], Optional[pd.DataFrame]] = analysis.__dict__.setdefault("_frame_cache", {})
    todo = [r for r in dict.fromkeys(int(r) for r in ranks) if (what, r) not in cache]
    if todo:
        parts = []
        for rank, built in build(todo).items():
            if built is None:
                cache[(what, rank)] = None
            else:
                parts.append((rank, built[0], built[1]))
        kinds = {tuple(v.dtype for v in c.values()) + (ix.dtype,) for _, c, ix in parts}
        for group in [parts] if len(kinds) == 1 else [[p] for p in parts]:
            # (The frame copies its columns: one rank's are not concatenated first.)
            join = (lambda arrays: arrays[0]) if len(group) == 1 else np.concatenate
            frame = pd.DataFrame(
                {k: join([c[k] for _, c, _ in group]) for k in group[0][1]},
                index=pd.Index(join([ix for _, _, ix in group]), name=index_name),
            )
            at = 0
            for rank, c, ix in group:
                cache[(what, rank)] = frame if len(group) == 1 else frame.iloc[at : at + len(ix)]
                at += len(ix)
    return {int(r): cache[(what, int(r))] for r in ranks}


# --- queue length -------------------------------------------------------------------


def queue_series(analysis: Any, ranks: List[int]) -> Dict[int, Optional[pd.DataFrame]]:
    """The queue-length series frames of ``ranks`` (:func:`kept_frames`)."""
    return kept_frames(analysis, "queue", ranks, lambda todo: queue_columns(analysis, todo), "index")


def queue_columns(analysis: Any, ranks: List[int]) -> Dict[int, Columns]:
    """The queue-length series' columns and index of each of ``ranks`` (None without
    launched work). The points come from native code, but for the one step whose ties
    depend on numpy: HTA concatenates the launches and then the starts, each in file
    order, and sorts them by ``ts`` with pandas' default (unstable) sort, numpy's
    quicksort, before it sums the steps per stream. The same times in the same order,
    sorted alike, put the points at one µs in HTA's order
    (``queue::queue_presorted``); the stable sort by stream and the running sums are
    native (``queue::queue_series``)."""
    points = _native.queue_presorted(analysis._t, ranks)
    orders = [
        np.argsort(_times(np.frombuffer(p[0], dtype=np.float64)), kind="quicksort").astype(np.int64).tobytes()
        for p in points
    ]
    out: Dict[int, Columns] = {}
    for rank, cols in zip(ranks, _native.queue_series(points, orders)):
        ts = np.frombuffer(cols[0], dtype=np.float64)
        pid, stream, length, index = (np.frombuffer(c, dtype=np.int64) for c in cols[1:])
        if not len(ts):
            out[rank] = None
            continue
        # HTA keeps `pid` and `tid` as the JSON gave them, in an object column.
        columns = {
            "ts": _times(ts),
            "pid": pid.astype(object),
            "tid": stream.astype(object),
            "stream": stream.astype(analysis._frame_dtype(rank, "stream")),
            "queue_length": length,
        }
        out[rank] = (columns, index.astype(analysis._frame_dtype(rank, "index")))
    return out


def time_blocked(
    queue_length_dict: Dict[int, pd.DataFrame], max_queue_length: int, duration: Callable[[int], float]
) -> Optional[pd.DataFrame]:
    """HTA's ``get_time_spent_blocked_on_full_queue`` of a queue-length series:
    per rank, the time its streams spend at ``max_queue_length`` or more outstanding
    operations (each point holds until the next of its stream), and that time over the
    rank's trace duration (``duration(rank)``, µs). One row per rank, as HTA's: the last
    stream (in the series' order) that reached the length."""
    found: Dict[int, list] = {}
    for rank, series in queue_length_dict.items():
        full = series["queue_length"].to_numpy() >= max_queue_length
        if not full.any():
            continue  # no stream of the rank reaches the length: no row
        streams = series["stream"].to_numpy()
        ts = series["ts"].to_numpy()
        for stream in series["stream"].unique():
            mine = streams == stream
            at = full[mine]
            if not at.any():
                continue
            # Each point holds until the next of its stream (the last: NaN, summed
            # as 0 by pandas' sum, as here).
            t = ts[mine]
            dur = np.zeros(len(t), dtype="float64")
            dur[:-1] = t[1:] - t[:-1]
            total = dur[at].sum()
            found[rank] = [stream, total, total * 1.0 / duration(int(rank))]
    if not found:
        # HTA's frame of no rows, made once (pandas' from_dict and reset_index of
        # nothing cost about 0.6 ms); each caller gets a copy.
        return blocked_frame({}).copy()
    return blocked_frame(found)


def blocked_frame(found: Dict[int, list]) -> pd.DataFrame:
    """HTA's ``get_time_spent_blocked_on_full_queue`` frame of ``found`` (rank -> [stream,
    duration, relative duration]); the frame of no rows is built once and kept."""
    if not found and _EMPTY_BLOCKED:
        return _EMPTY_BLOCKED[0]
    out = pd.DataFrame.from_dict(
        found,
        orient="index",
        columns=[
            "stream",
            "duration_at_max_queue_length",
            "relative_duration_at_max_queue_length",
        ],
    ).reset_index(names="rank")
    if not found:
        _EMPTY_BLOCKED.append(out)
    return out


_EMPTY_BLOCKED: List[pd.DataFrame] = []


# --- memory bandwidth ---------------------------------------------------------------


def memory_bw_series(analysis: Any, ranks: List[int]) -> Dict[int, Optional[pd.DataFrame]]:
    """The memory-bandwidth series frames of ``ranks`` (:func:`kept_frames`)."""
    return kept_frames(analysis, "memory_bw", ranks, lambda todo: memory_bw_frame_columns(analysis, todo), None)


def memory_bw_columns(analysis: Any, rank: int) -> Optional[Dict[str, np.ndarray]]:
    """``rank``'s :func:`memory_bw_columns_of`, built on first use and kept: the summary
    and the series ask for the same columns. Callers hand out copies, never what is
    kept."""
    cache: Dict[Tuple[str, int], Optional[Dict[str, np.ndarray]]] = analysis.__dict__.setdefault("_series_cache", {})
    key = ("memory_bw_columns", rank)
    if key not in cache:
        cache[key] = memory_bw_columns_of(analysis._t, rank)
    return cache[key]


def memory_bw_columns_of(trace: Any, rank: int) -> Optional[Dict[str, np.ndarray]]:
    """HTA's memory-bandwidth step function of one rank of the native ``trace`` as the
    columns of its frame (``index`` too; None without memory activities): each
    memcpy/memset adds its ``memory bandwidth (GB/s)`` at its start and takes it back at
    its end (a 0 µs activity lasts 1 µs, as in HTA), summed per memory type (``Memcpy
    DtoH``, …, ``Memset``) in time order."""
    # The activities in file order (HTA's frame order), with their memory types (name
    # order) and the type of each as a code into them.
    types, cols = trace.memory_ops(int(rank))
    start, end, device, code, bw = (
        np.frombuffer(c, dtype=np.int64 if i in (2, 3) else np.float64) for i, c in enumerate(cols)
    )
    if not len(start):
        return None
    dur = end - start
    dur[dur == 0] = 1
    # HTA's `ts` is whole µs and its `dur` float64: the end points make `ts` float64.
    start_t = _times(start)
    pid = device.astype(object)
    ts = np.concatenate([start_t, start_t + dur])
    # The same rows in the same order as HTA's (starts then ends), sorted by the same
    # (unstable) sort, numpy's quicksort under pandas': ties at one µs then fall as
    # HTA's do.
    order = np.argsort(ts, kind="quicksort")
    # Type by type (in name order, each in `ts` order), the running sum: numpy's
    # cumsum over each type's rows, as `Series.cumsum` sums (pandas' group cumsum
    # compensates its sums, and a bandwidth back to 0 must stay what HTA's is).
    code = np.concatenate([code, code])[order]
    order = order[np.argsort(code, kind="stable")]
    code = np.sort(code, kind="stable")
    step = np.concatenate([bw, -bw])[order]
    cut = np.searchsorted(code, np.arange(len(types) + 1))
    total = np.concatenate([np.cumsum(step[x:y]) for x, y in zip(cut, cut[1:])])
    names_out = np.asarray(types, dtype=object)[code]
    return {
        "ts": ts[order],
        "pid": np.concatenate([pid, pid])[order],
        "name": names_out,
        "memory_bw_gbps": total,
        "index": order.astype("int64"),
    }


def memory_bw_frame_columns(analysis: Any, ranks: List[int]) -> Dict[int, Columns]:
    """:func:`memory_bw_columns` of each of ``ranks`` as HTA's frame's columns and
    index."""
    out: Dict[int, Columns] = {}
    for rank in ranks:
        cols = memory_bw_columns(analysis, rank)
        out[rank] = None if cols is None else ({c: v for c, v in cols.items() if c != "index"}, cols["index"])
    return out


def memory_bw_summary(analysis: Any, ranks: List[int]) -> Optional[pd.DataFrame]:
    """HTA's ``get_memory_bw_summary`` of ``ranks`` (checked): ``describe()`` of the
    memory bandwidth in use per rank and memory type, over the points of the series where
    it is above 0; None when no rank has memory activities."""
    # From the kept columns: a frame per rank only where the one group-by over the
    # ranks' rows does not give HTA's frame (see `_describe_per_rank`).
    series = {}
    for rank in ranks:
        cols = memory_bw_columns(analysis, int(rank))
        if cols is not None:
            series[rank] = {c: v[cols["memory_bw_gbps"] > 0] for c, v in cols.items()}
    if series and list(series) == sorted(series) and all(len(c["name"]) for c in series.values()):
        rank_col = np.repeat(np.asarray(list(series), dtype="int64"), [len(c["name"]) for c in series.values()])
        fast = _describe_groups(
            rank_col,
            np.concatenate([c["name"] for c in series.values()]),
            np.concatenate([c["memory_bw_gbps"] for c in series.values()]),
            "name",
            "memory_bw_gbps",
        )
        if fast is not None:
            return fast
    frames = {
        rank: pd.DataFrame({c: v for c, v in cols.items() if c != "index"}, index=pd.Index(cols["index"]))
        for rank, cols in series.items()
    }
    return _describe_per_rank(frames, "name", "memory_bw_gbps")
