"""Holistic Trace Analysis' ``TraceAnalysis`` as a drop-in.

Change ``from hta.trace_analysis import TraceAnalysis`` to
``from tracewise.hta import TraceAnalysis``: the methods below take HTA 0.5.0's arguments
and return pandas frames with its column names, dtypes and row order, computed by
tracewise's native HTA analyses (``trace_frame::hta``, ``critical_path``) instead of
pandas over a parsed trace. ``docs/differences.md`` lists where the numbers may differ
from HTA's. ``visualize=True`` draws HTA's figures with plotly (``tracewise._hta_plot``:
the same kinds, axes and titles, each ``.show()``n as HTA shows it) and returns the same
data as ``visualize=False``; without plotly it draws nothing and warns once. ``TraceDiff``'s
``visualize_*`` plot only when ``show_image`` or ``export_image_path`` asks. ``docs/hta-api.md`` lists every public method and parameter of HTA
0.5.0's ``TraceAnalysis`` and ``TraceDiff`` with its parity tests; none raises
``NotImplementedError``.

pandas is imported when this module is.
"""

from __future__ import annotations

import functools
import os
import tempfile
from enum import Flag, auto
from typing import Any, Callable, Dict, List, Optional, Set, Tuple, Union

import numpy as np
import pandas as pd

from . import (
    _hta_annotations,
    _hta_callstack,
    _hta_cupti,
    _hta_frame,
    _hta_overlay,
    _hta_plot,
    _hta_series,
    _hta_straggler,
    _hta_symbols,
    _native,
)
from ._hta_critical_path import (
    CPEdge,
    CPEdgeType,
    CPGraph,
    CPNode,
    CriticalPathSummary,
    _graph_type,
)
from ._hta_diff import DeviceType, LabeledTrace, TraceDiff
from ._hta_stats import (
    _IDLE_CATEGORIES,
    _describe_per_rank,
    _idle_describe,
    _idle_frame,
    _int_dtype,
    _kernel_stats_frame,
    _kernel_type_frame,
    _kernel_type_time_of,
)

__all__ = [
    "TraceAnalysis",
    "CPGraph",
    "CPNode",
    "CPEdge",
    "CPEdgeType",
    "CriticalPathSummary",
    "TimeSeriesTypes",
    "TraceDiff",
    "LabeledTrace",
    "DeviceType",
]

DEFAULT_TRACE_DIR = "/tmp/trace"
"""HTA 0.5.0's default ``trace_dir`` (``hta.configs.default_values``)."""

CUDA_MAX_LAUNCH_QUEUE_PER_STREAM = 1024
"""HTA 0.5.0's default ``max_queue_length`` (``hta.common.constants``)."""


class TimeSeriesTypes(Flag):
    """HTA's time series kinds for ``generate_trace_with_counters``."""

    QUEUE_LENGTH = auto()
    MEMCPY_BANDWIDTH = auto()


class TraceAnalysis:
    """HTA's ``TraceAnalysis`` over the traces of ``trace_dir`` (every rank), read once by
    tracewise's loader, with HTA 0.5.0's positional order and defaults."""

    def __init__(
        self,
        trace_files: Optional[Union[Dict[int, str], List[str]]] = None,
        trace_dir: str = DEFAULT_TRACE_DIR,
        include_last_profiler_step: Optional[bool] = False,
    ) -> None:
        self.trace_dir = os.fspath(trace_dir)
        self.include_last_profiler_step = bool(include_last_profiler_step)
        # The file each trace was read from, by the name the loader gave it (``trace_files``
        # are read through links in a scratch directory, gone after loading).
        self._original: Dict[str, str] = {}
        if trace_files is None:
            self._t = _native.HtaTrace(self.trace_dir, self.include_last_profiler_step)
        else:
            self._t = self._from_files(trace_files)
        self._ranks = list(self._t.ranks())

    def _from_files(self, trace_files: Union[Dict[int, str], List[str]]) -> Any:
        """HTA's ``trace_files``: a ``{rank: file}`` map, or a list whose ranks are read
        from the files; names not absolute are under ``trace_dir``. The files are linked
        into a scratch directory that the loader reads as one trace set."""
        if isinstance(trace_files, dict):
            items = list(trace_files.items())
        elif isinstance(trace_files, list):
            items = [(None, f) for f in trace_files]
        else:
            raise TypeError(
                f"trace_files must be a dict of rank to file or a list of files, not {type(trace_files).__name__}"
            )
        with tempfile.TemporaryDirectory(prefix="tracewise-hta-") as scratch:
            rank_of_file: Dict[str, int] = {}
            for i, (rank, name) in enumerate(items):
                path = name if os.path.isabs(name) else os.path.join(self.trace_dir, name)
                if not (os.path.exists(path) and os.access(path, os.R_OK)) or not (
                    path.endswith(".gz") or path.endswith(".json")
                ):
                    raise ValueError("Trace files validation failed.")
                link = os.path.join(scratch, f"{i:06d}_{os.path.basename(path)}")
                os.symlink(os.path.abspath(path), link)
                self._original[link] = os.path.abspath(path)
                if rank is not None:
                    rank_of_file[link] = int(rank)
            return _native.HtaTrace(scratch, self.include_last_profiler_step, rank_of_file or None)

    def _frame_dtype(self, rank: int, column: str) -> np.dtype:
        """The dtype of HTA's ``stream``, ``correlation`` or ``index`` column of ``rank``: downcast
        over every event its parser keeps, not only the rows a result shows."""
        ranges = self._t.int_ranges(int(rank))
        if ranges is None:
            return np.dtype(np.int64)
        lo, hi = ranges[("stream", "correlation", "index").index(column)]
        return _int_dtype(lo, hi) if lo <= hi else np.dtype(np.int64)

    def _check_ranks(self, ranks: List[int]) -> None:
        """HTA raises ValueError for a rank it has no trace of."""
        for rank in ranks:
            if rank not in self._ranks:
                raise ValueError(f"no trace for rank {rank} (the ranks are {self._ranks})")

    def _frames(self) -> Dict[int, pd.DataFrame]:
        """HTA's per-rank frames of this analysis (``_hta_frame.analysis_frames``), built
        on first use."""
        if getattr(self, "_hta_frames", None) is None:
            files = sorted((int(r), p) for r, p in self._t.files())
            frac = {r: bool(self._t.fractional(r)) for r, _ in files}
            self._hta_frames = _hta_frame.analysis_frames(
                files, frac, self.include_last_profiler_step
            )
        return self._hta_frames

    def _frame_with_args(self, rank: int) -> pd.DataFrame:
        """``rank``'s frame of :meth:`_frames` with HTA's default ``args`` columns
        (``bytes``, ``memory_bw_gbps``, ``wait_on_*``, ``input_*``: ``_hta_frame.with_args``),
        for the frames handed to a user; built on first use (per rank): the constructor and
        the other methods never pay for it."""
        cache: Dict[int, pd.DataFrame] = self.__dict__.setdefault("_hta_frames_args", {})
        if rank not in cache:
            files = {int(r): self._original.get(p, p) for r, p in self._t.files()}
            args = _hta_frame.arg_columns(files[rank])
            cache[rank] = _hta_frame.with_args(self._frames()[rank], args)
        return cache[rank]

    # --- breakdowns -------------------------------------------------------------------

    def get_temporal_breakdown(self, visualize: bool = True) -> pd.DataFrame:
        """Idle, compute and non-compute time per rank (µs and %), as HTA's."""
        cols = [
            "rank",
            "idle_time(us)",
            "compute_time(us)",
            "non_compute_time(us)",
            "kernel_time(us)",
            "idle_time_pctg",
            "compute_time_pctg",
            "non_compute_time_pctg",
        ]
        df = pd.DataFrame(self._t.temporal(), columns=cols)
        df["rank"] = df["rank"].astype("int64")
        df = df.sort_values("rank", ignore_index=True)
        if visualize:
            _hta_plot.temporal(df)
        return df

    def get_comm_comp_overlap(self, visualize: bool = True) -> pd.DataFrame:
        """Share of each rank's communication time that computation overlaps, in %."""
        df = pd.DataFrame(self._t.overlap(), columns=["rank", "comp_comm_overlap_pctg"])
        df["rank"] = df["rank"].astype("int64")
        df = df.sort_values("rank", ignore_index=True)
        if visualize:
            _hta_plot.comm_comp_overlap(df)
        return df

    def get_gpu_kernel_breakdown(
        self,
        visualize: bool = True,
        duration_ratio: float = 0.8,
        num_kernels: int = 10,
        include_memory_kernels: bool = True,
        image_renderer: str = "",
    ) -> Tuple[pd.DataFrame, pd.DataFrame]:
        """(time per kernel type over all ranks, per-rank kernel statistics folded into
        ``others`` past ``num_kernels`` or the ``duration_ratio`` quantile), as HTA's. With
        ``include_memory_kernels=False`` memory kernels are left out of both, and out of
        the overlaps of the first ("COMPUTATION overlapping COMMUNICATION" only)."""
        analysed = ["COMPUTATION", "COMMUNICATION"] + (["MEMORY"] if include_memory_kernels else [])
        totals: Dict[str, float] = {}
        for _, cols in self._t.kernel_type_intervals(bool(include_memory_kernels)):
            points = [np.frombuffer(c, dtype=np.float64) for c in cols]
            for label, t in _kernel_type_time_of(analysed, list(zip(points[::2], points[1::2]))).items():
                totals[label] = totals.get(label, 0) + t
        types = _kernel_type_frame(totals)

        native = self._t.kernels()
        # The native rows' columns as numpy arrays, without a frame of the tuples.
        cols = list(zip(*native)) if native else [()] * 9
        stats = {
            "rank": np.asarray(cols[0], dtype="int64"),
            "kernel_type": np.asarray(cols[2], dtype=object),
            "name": np.asarray(cols[1], dtype=object),
        }
        for c, v in zip(["sum", "max", "min", "mean", "std"], cols[4:]):
            stats[c] = np.asarray(v, dtype="float64")
        kernels = _kernel_stats_frame(stats, analysed, num_kernels, duration_ratio)
        if visualize:
            ranks = sorted(int(r) for r in self._ranks)
            _hta_plot.kernel_breakdown(types, kernels, analysed, ranks, image_renderer)
        return types, kernels

    def get_idle_time_breakdown(
        self,
        ranks: Optional[List[int]] = None,
        streams: Optional[List[int]] = None,
        visualize: bool = True,
        visualize_pctg: bool = True,
        show_idle_interval_stats: bool = False,
        consecutive_kernel_delay: int = 30,
    ) -> Tuple[pd.DataFrame, Optional[pd.DataFrame]]:
        """Idle time per stream of each rank in ``ranks`` (default ``[0]``) split into host
        wait, kernel wait (gaps under ``consecutive_kernel_delay`` µs) and other, as HTA's;
        with ``show_idle_interval_stats``, the second element is ``describe()`` of the gaps
        per category and stream (else None)."""
        if ranks is None or len(ranks) == 0:
            ranks = [0]
        self._check_ranks(ranks)
        frames = []
        stats = (
            self._idle_interval_stats_of(ranks, int(consecutive_kernel_delay), streams)
            if show_idle_interval_stats
            else None
        )
        for rank in ranks:
            out = []
            rows = self._t.idle(int(rank), int(consecutive_kernel_delay))
            by_stream = {r[0]: r for r in rows}
            order = [s for s in streams if s in by_stream] if streams else [r[0] for r in rows]
            for stream in order:
                _, times, counts = by_stream[stream]
                present = [(c, t) for c, t, n in zip(_IDLE_CATEGORIES, times, counts) if n > 0]
                total = sum(t for _, t in present)
                for category, t in present:
                    ratio = t / total if total != 0 else float("nan")
                    out.append((rank, stream, category, t, ratio))
            frames.append(out)
        dtypes = [self._idle_stream_dtype(int(rank), streams) for rank in ranks]
        if visualize:
            # HTA plots the values before it rounds them.
            plotted = _idle_frame(frames, dtypes, rounded=False)
            _hta_plot.idle_time_breakdown(plotted, [int(r) for r in ranks], bool(visualize_pctg))
        return _idle_frame(frames, dtypes), stats

    def _idle_stream_dtype(self, rank: int, streams: Optional[List[int]]) -> np.dtype:
        """The dtype of ``stream`` in HTA's idle frames of ``rank``: HTA sets the column
        from each stream it walks, the values of its frame's ``stream`` column (that
        column's dtype, downcast over every event its parser keeps, a sync event's
        ``4294967295`` among them), or the caller's Python ints (int64)."""
        if streams:
            return np.dtype(np.int64)
        return self._frame_dtype(rank, "stream")

    def _idle_gaps(self, rank: int, delay: int, streams: Optional[List[int]]) -> List[Tuple[int, int, np.ndarray, np.ndarray]]:
        """(rank, stream, categories, gaps in µs) of each stream of ``rank`` HTA shows (the
        ``streams`` asked that it has, else all), in HTA's stream order."""
        rows = self._t.idle_intervals(rank, delay)
        by_stream = {s: (c, g) for s, c, g in rows}
        order = [s for s in streams if s in by_stream] if streams else [s for s, _, _ in rows]
        return [
            (rank, s, np.frombuffer(by_stream[s][0], dtype=np.uint8), np.frombuffer(by_stream[s][1], dtype=np.float64))
            for s in order
        ]

    def _idle_interval_stats_of(
        self, ranks: List[int], delay: int, streams: Optional[List[int]]
    ) -> pd.DataFrame:
        """HTA's concat, rank by rank, of each rank's idle interval statistics: per stream,
        ``describe()`` of the gaps by category, the first activity of a stream counting in
        ``other`` with no gap. One frame for all where that gives the same frame (each rank
        has a stream to show, all with one stream dtype), else rank by rank."""
        per_rank = [self._idle_gaps(int(rank), delay, streams) for rank in ranks]
        dtypes = [self._idle_stream_dtype(int(rank), streams) for rank in ranks]
        if all(per_rank) and len(set(dtypes)) == 1:
            return _idle_describe([p for parts in per_rank for p in parts], dtypes[0])
        # pandas' concat of the ranks' frames (its error where a rank has no stream).
        return pd.concat(
            [_idle_describe(parts, dtype) if parts else pd.concat([]) for parts, dtype in zip(per_rank, dtypes)]
        )

    # --- launches and queues ----------------------------------------------------------

    def get_cuda_kernel_launch_stats(
        self,
        ranks: Optional[List[int]] = None,
        runtime_cutoff: int = 50,
        launch_delay_cutoff: int = 100,
        include_memory_events: bool = True,
        visualize: bool = True,
    ) -> Dict[int, pd.DataFrame]:
        """Per rank (default ``[0]``): one row per GPU activity launched by
        ``cudaLaunchKernel``/``cudaLaunchKernelExC`` (and ``cudaMemcpyAsync``/
        ``cudaMemsetAsync`` with ``include_memory_events``), in the launches' file order:
        ``correlation``, ``cpu_duration``, ``gpu_duration``, ``launch_delay`` (µs). The
        cutoffs only shape HTA's plots."""
        if ranks is None or ranks == []:
            ranks = [0]
        self._check_ranks(ranks)
        out = {}
        for rank in ranks:
            # Columns of bytes from the native rows, made into one frame.
            cols = [np.frombuffer(c, dtype=np.int64 if i == 0 else np.float64)
                    for i, c in enumerate(self._t.launch_stats(int(rank), bool(include_memory_events)))]
            out[rank] = pd.DataFrame(
                {
                    "correlation": cols[0].astype(self._frame_dtype(rank, "correlation")),
                    "cpu_duration": cols[1],
                    "gpu_duration": cols[2],
                    "launch_delay": cols[3],
                }
            )
            if visualize:
                _hta_plot.launch_stats({rank: out[rank]}, runtime_cutoff, launch_delay_cutoff)
        return out

    def get_queue_length_time_series(
        self,
        ranks: Optional[List[int]] = None,
    ) -> Dict[int, pd.DataFrame]:
        """Per rank (default ``[0]``) with launched work: the queue length of each stream,
        +1 at each launch call (``cudaLaunchKernel``, ``cudaMemcpyAsync``, … HTA's list),
        −1 at each start of its GPU activity; columns ``ts`` (µs from the earliest event of
        all ranks), ``pid``, ``tid``, ``stream``, ``queue_length``, indexed by the event's
        index in the file (``index``), stream by stream."""
        if ranks is None or len(ranks) == 0:
            ranks = [0]
        self._check_ranks(ranks)
        kept = _hta_series.queue_series(self, ranks)
        return {rank: kept[int(rank)].copy() for rank in ranks if kept[int(rank)] is not None}

    def get_queue_length_summary_from_time_series(
        self,
        queue_length_dict: Dict[int, pd.DataFrame],
    ) -> Optional[pd.DataFrame]:
        """``describe()`` of ``queue_length`` per (rank, stream) of a
        :meth:`get_queue_length_time_series` result; None when it is empty."""
        return _describe_per_rank(queue_length_dict, "stream", "queue_length")

    def get_queue_length_summary(self, ranks: Optional[List[int]] = None) -> Optional[pd.DataFrame]:
        """``describe()`` of the queue length (outstanding GPU operations) per rank and
        stream, for ``ranks`` (default ``[0]``); None when no stream has launches."""
        if ranks is None or len(ranks) == 0:
            ranks = [0]
        self._check_ranks(ranks)
        # The kept series themselves (the summary reads them, it does not change them).
        series = _hta_series.queue_series(self, ranks)
        return _describe_per_rank({r: series[int(r)] for r in ranks if series[int(r)] is not None}, "stream", "queue_length")

    def get_time_spent_blocked_on_full_queue(
        self,
        queue_length_dict: Dict[int, pd.DataFrame],
        max_queue_length: int = CUDA_MAX_LAUNCH_QUEUE_PER_STREAM,
    ) -> Optional[pd.DataFrame]:
        """Per rank of a :meth:`get_queue_length_time_series` result: the time its streams
        spend at ``max_queue_length`` or more outstanding operations (each point holds until
        the next of its stream), and that time over the rank's trace duration. As HTA's,
        one row per rank: the last stream (in the series' order) that reached the length."""
        return _hta_series.time_blocked(queue_length_dict, max_queue_length, self._t.duration)

    # --- memory bandwidth and counter traces ------------------------------------------

    def get_memory_bw_time_series(self, ranks: Optional[List[int]] = None) -> Dict[int, pd.DataFrame]:
        """Per rank (default ``[0]``) with memory activities: the memory bandwidth in use,
        as HTA's step function: columns ``ts`` (µs from the earliest event of all ranks),
        ``pid``, ``name`` (``Memcpy DtoH``, ``Memcpy HtoD``, ``Memcpy DtoD``, ``Memset``,
        …) and ``memory_bw_gbps`` (GB/s in use from ``ts`` to the next row of that name:
        the sum of Kineto's ``memory bandwidth (GB/s)`` of the activities running)."""
        if ranks is None or len(ranks) == 0:
            ranks = [0]
        self._check_ranks(ranks)
        kept = _hta_series.memory_bw_series(self, ranks)
        return {rank: kept[int(rank)].copy() for rank in ranks if kept[int(rank)] is not None}

    def get_memory_bw_summary(self, ranks: Optional[List[int]] = None) -> Optional[pd.DataFrame]:
        """``describe()`` of the memory bandwidth in use (GB/s) per rank and memory type,
        over the points of :meth:`get_memory_bw_time_series` where it is above 0, as HTA's;
        None when no rank of ``ranks`` (default ``[0]``) has memory activities."""
        if ranks is None or len(ranks) == 0:
            ranks = [0]
        self._check_ranks(ranks)
        return _hta_series.memory_bw_summary(self, ranks)

    def generate_trace_with_counters(
        self,
        time_series: Optional[TimeSeriesTypes] = None,
        ranks: Optional[List[int]] = None,
        output_suffix: str = "_with_counters",
    ) -> None:
        """Writes, for each rank of ``ranks`` (default ``[0]``) with a series, its trace
        with counter events (``"ph": "C"``) added, as HTA's: ``Queue Length`` per stream
        (``id``) from :meth:`get_queue_length_time_series` and ``Memcpy BW`` per memory type
        from :meth:`get_memory_bw_time_series` (``time_series``: both by default). The file
        is the rank's trace file with ``output_suffix`` before ``.json``
        (``rank0.json.gz`` → ``rank0_with_counters.json.gz``), gzip when its name ends in
        ``.gz``; written through tracewise's output rules: staged and renamed into place,
        an earlier output replaced, a trace file of the set never."""
        if ranks is None or len(ranks) == 0:
            ranks = [0]
        if time_series is None:
            time_series = TimeSeriesTypes.QUEUE_LENGTH | TimeSeriesTypes.MEMCPY_BANDWIDTH
        if output_suffix == "":
            output_suffix = "_with_counters"
        origin = self._t.origin_us()
        series: Dict[int, List[tuple]] = {}

        def add(series_of: Dict[int, pd.DataFrame], counter: str, column: str, integer: bool) -> None:
            # Per point: {"pid", "ts", "args": {counter: value}, "ph": "C", "name"[, "id"]},
            # made natively from the columns.
            for rank, df in series_of.items():
                n = len(df)
                names = df["name"].astype(str).tolist() if "name" in df.columns else [counter] * n
                ids = df["stream"].astype("int64").tolist() if "stream" in df.columns else None
                series.setdefault(rank, []).append((
                    counter,
                    [int(v) for v in df["pid"]],
                    (df["ts"].astype("float64") + origin).tolist(),
                    df[column].astype("float64").tolist(),
                    integer,
                    names,
                    ids,
                ))

        # HTA's flag or ours (the same values): a notebook may keep HTA's import of it.
        wanted = int(time_series.value)
        if wanted & TimeSeriesTypes.QUEUE_LENGTH.value:
            add(self.get_queue_length_time_series(ranks), "Queue Length", "queue_length", True)
        if wanted & TimeSeriesTypes.MEMCPY_BANDWIDTH.value:
            add(self.get_memory_bw_time_series(ranks), "Memcpy BW", "memory_bw_gbps", False)
        files = {rank: self._original.get(p, p) for rank, p in self._t.files()}
        inputs = list(files.values())
        for rank, parts in series.items():
            path = files[rank]
            output = path.replace(".json", f"{output_suffix}.json")
            _native.write_trace_with_counters(path, output, parts, inputs)

    # --- kernel sequences, annotations and operators ----------------------------------

    def get_frequent_cuda_kernel_sequences(
        self,
        operator_name: str,
        output_dir: str,
        min_pattern_len: int = 3,
        rank: int = 0,
        top_k: int = 5,
        visualize: bool = False,
        compress_other_kernels: bool = True,
    ) -> pd.DataFrame:
        """HTA's frequent CUDA kernel sequences of ``rank``: the shallowest events whose name
        contains ``operator_name`` in HTA's call stacks (each thread's events nested by
        time, a GPU activity under its launch) that have at least ``min_pattern_len``
        activities beneath them; per distinct sequence (the event's name, then its
        activities' names in start order, joined by ``|``): ``pattern``, ``count``,
        ``GPU kernel duration (us)`` and ``CPU op duration (us)`` (sums), sorted by count
        (descending) then pattern. Also writes ``output_dir/overlaid_<trace file name>``:
        the trace with ``args.Patterns`` on the events of the ``top_k`` patterns (and,
        with ``compress_other_kernels``, the other complete events' names replaced by ids
        and their args emptied), through tracewise's output rules. An empty frame where
        ``operator_name`` is empty or matches nothing, or ``output_dir`` is not a writable
        directory, as HTA. ``visualize`` plots the top patterns' counts with plotly."""
        if not operator_name:
            return pd.DataFrame()
        if not (os.path.isdir(output_dir) and os.access(output_dir, os.W_OK)):
            return pd.DataFrame()
        self._check_ranks([rank])
        counts: Dict[Tuple[str, ...], int] = {}
        durations: Dict[Tuple[str, ...], List[float]] = {}
        occurrences: Dict[Tuple[str, ...], Set[int]] = {}
        # The roots in HTA's call stacks (``callstack::kernel_sequence_roots``, native: the
        # Python build was most of this method's time on large traces), each with its
        # pattern (its name, then its activities' names in start order), its activities'
        # summed duration, its duration and the events beneath it.
        roots = _native.kernel_sequence_roots(self._t, int(rank), operator_name, int(min_pattern_len))
        for names, kernel_dur, dur, below in roots:
            if kernel_dur is None:  # HTA's table has no entry for an unlinked activity
                raise KeyError(below[0])
            pattern = tuple(names)
            counts[pattern] = counts.get(pattern, 0) + 1
            d = durations.setdefault(pattern, [0.0, 0.0])
            d[0] += kernel_dur
            d[1] += dur
            occurrences.setdefault(pattern, set()).update(below)
        if not counts:
            return pd.DataFrame()
        # HTA's sort by (count descending, pattern): the keys are unique (one row per
        # pattern), so any sort gives its order; the frame is built once, sorted.
        text = {p: "|".join(p) for p in counts}
        order = sorted(counts, key=lambda p: (-counts[p], text[p]))
        df = pd.DataFrame(
            {
                "pattern": pd.Series([text[p] for p in order], dtype=object),
                "count": np.asarray([counts[p] for p in order], dtype="int64"),
                "GPU kernel duration (us)": np.asarray([durations[p][0] for p in order], dtype="float64"),
                "CPU op duration (us)": np.asarray([durations[p][1] for p in order], dtype="float64"),
            }
        )
        top = order[: min(int(top_k), len(order))]
        files = {int(r): self._original.get(p, p) for r, p in self._t.files()}
        source = files[int(rank)]
        output = os.path.join(output_dir, "overlaid_" + os.path.basename(source))
        _native.write_patterned_trace(
            source,
            output,
            [(text[p], counts[p], sorted(occurrences[p])) for p in top],
            bool(compress_other_kernels),
            list(files.values()),
        )
        if visualize:
            _hta_plot.frequent_patterns(df[: len(top)], int(rank))
        return df

    def get_gpu_user_annotation_breakdown(
        self,
        use_gpu_annotation: bool = True,
        visualize: bool = True,
        duration_ratio: float = 0.8,
        num_kernels: int = 1000,
        allowlist_patterns: Optional[List[str]] = None,
        image_renderer: Optional[str] = None,
    ) -> Optional[pd.DataFrame]:
        """Time per user annotation (``record_function`` ranges) of each rank: ``name``,
        ``sum (us)``, ``max (us)``, ``min (us)``, ``stddev``, ``mean (us)``, ``rank``, past
        ``num_kernels`` names or the ``duration_ratio`` quantile of the cumulative time
        folded into ``others`` (names matching one of ``allowlist_patterns`` kept), as HTA's.
        ``use_gpu_annotation`` times the GPU ranges (``gpu_user_annotation``), else the
        host ranges (``user_annotation``); None when the trace has none of the kind asked."""
        annotation = "gpu_user_annotation" if use_gpu_annotation else "user_annotation"
        if not _hta_symbols.has_category(self, annotation):
            return None
        out = _hta_annotations.breakdown(
            self, use_gpu_annotation, num_kernels, duration_ratio, allowlist_patterns
        )
        if visualize:
            _hta_plot.user_annotation_breakdown(out, [int(r) for r in self._ranks], image_renderer or "")
        return out

    def get_gpu_kernels_with_user_annotations(
        self,
        rank: int,
        expand_names: bool = True,
        shortern_names: bool = True,
    ) -> Optional[pd.DataFrame]:
        """The GPU events of ``rank`` (HTA's frame columns but its symbol ids, see
        docs/differences.md), each with the GPU user annotation (``gpu_user_annotation``) of
        its own device and stream that it overlaps, the shortest one where several do
        (``user_annotation``, "" where none; with ``expand_names`` also ``s_name``,
        ``s_cat``, ``s_user_annotation``, shortened with ``shortern_names``). None when the
        trace has no GPU user annotations."""
        if not _hta_symbols.has_category(self, "gpu_user_annotation"):
            return None
        self._check_ranks([rank])
        return _hta_annotations.kernels_with_annotations(self._frames()[int(rank)], expand_names, shortern_names)

    def get_aten_op_kernels_and_delay(
        self,
        ranks: Optional[List[int]] = None,
        sort_by: Optional[List[str]] = None,
    ) -> Dict[int, pd.DataFrame]:
        """Per rank (default ``[0]``): for each ATen operator and the sequence of kernels
        its launches start (each launch timed against the deepest ``aten::`` event, on any
        thread, that wraps it), ``occurrence_count``, ``avg_aten_op_launch_delay`` (operator
        start to its first launch, µs) and ``avg_runtime_delay`` (first launch to its
        kernel's start, µs), rounded to 3 places, sorted by ``sort_by`` (default
        ``["occurrence_count"]``) descending, as HTA's. As in HTA 0.5.0, a rank's table also
        counts the launches of the ranks listed before it, and a wrapped launch with no
        single GPU activity raises ValueError."""
        if not ranks:
            ranks = [0]
        if not sort_by:
            sort_by = ["occurrence_count"]
        self._check_ranks(ranks)
        # HTA groups the launches per operator call (thread, name, start), in the calls'
        # (sorted) order, then per (name, kernel sequence): the calls are kept across the
        # ranks (a rank's table counts those of the ranks before it, as HTA's), each with
        # its first launch's delays and its kernels in launch order. The launches come from
        # the native trace (`aten_launches`), not from a frame read again.
        calls: Dict[Tuple[str, str, int], Tuple[int, int, List[str]]] = {}
        # (name, sequence) -> [count, sum of launch delays, sum of runtime delays] over the
        # calls so far; the delays are whole µs, so the sums are exact and each mean is
        # pandas' mean. Kept from rank to rank: a rank's launches add calls, or extend a
        # call of an earlier rank with the same key, which then moves to its new sequence.
        groups: Dict[Tuple[str, str], List[int]] = {}
        out: Dict[int, pd.DataFrame] = {}
        for rank in ranks:
            before: Dict[Tuple[str, str, int], Optional[str]] = {}
            for thread, op, start, delay, runtime, kernel in self._t.aten_launches(int(rank)):
                key = (thread, op, start)
                call = calls.get(key)
                if call is None:
                    calls[key] = (delay, runtime, [kernel])
                    before[key] = None
                else:
                    if key not in before:
                        before[key] = " -> ".join(call[2])
                    call[2].append(kernel)
            for key, old in before.items():
                delay, runtime, kernels = calls[key]
                if old is not None:
                    g = groups[(key[1], old)]
                    g[0] -= 1
                    g[1] -= delay
                    g[2] -= runtime
                    if g[0] == 0:
                        del groups[(key[1], old)]
                g = groups.setdefault((key[1], " -> ".join(kernels)), [0, 0, 0])
                g[0] += 1
                g[1] += delay
                g[2] += runtime
            if not calls:
                raise KeyError("thread_id: no kernel launch inside an aten:: operator")
            keys = sorted(groups)
            rows = [groups[k] for k in keys]
            final = pd.DataFrame(
                {
                    "aten_op_name": pd.Series([k[0] for k in keys], dtype=object),
                    "kernel_sequence": pd.Series([k[1] for k in keys], dtype=object),
                    "occurrence_count": np.array([r[0] for r in rows], dtype="int64"),
                    "avg_aten_op_launch_delay": np.array([r[1] / r[0] for r in rows], dtype="float64"),
                    "avg_runtime_delay": np.array([r[2] / r[0] for r in rows], dtype="float64"),
                }
            ).sort_values(sort_by, ascending=False)
            final["avg_runtime_delay"] = final["avg_runtime_delay"].round(3)
            final["avg_aten_op_launch_delay"] = final["avg_aten_op_launch_delay"].round(3)
            out[rank] = final
        return out

    def get_cupti_counter_data_with_operators(
        self,
        ranks: Optional[List[int]] = None,
    ) -> List[pd.DataFrame]:
        """CUPTI performance counters of each kernel with the operators that launched it,
        one frame per rank of ``ranks`` (default ``[0]``), as HTA's
        (``tracewise._hta_cupti``): the rank's ``cuda_profiler_range`` events (HTA's frame
        columns that tracewise builds, ``name``/``cat`` as strings, one column per counter),
        each paired in start order with a ``cudaLaunchKernel`` call, with that call's frame
        index (``index_runtime``), its ``cpu_op`` call stack (``op_stack``, outermost
        first), ``top_level_op`` and ``bottom_level_op``. A rank whose ranges and launches
        do not pair one to one is left out (an error is logged), as HTA. A trace recorded
        without the CUPTI profiler (no ``cuda_profiler_range`` events) has none: ``[]``."""
        if not _hta_symbols.has_category(self, _hta_cupti.PROFILER_RANGE):
            return []
        if ranks is None or len(ranks) == 0:
            ranks = [0]
        self._check_ranks(ranks)
        files = dict(self._t.files())
        out = []
        for rank in ranks:
            df = _hta_cupti.counter_frame(
                self._frame_with_args(int(rank)),
                files[int(rank)],
                int(rank),
                _hta_cupti.parents(_hta_callstack.call_stacks(self._t, int(rank))),
            )
            if df is not None:
                out.append(df)
        return out

    # --- ranks and steps --------------------------------------------------------------

    def get_profiler_steps(self) -> List[int]:
        """The ``ProfilerStep`` numbers of the first rank."""
        return list(self._t.steps())

    def get_potential_stragglers(
        self,
        profiler_steps: Optional[List[int]] = None,
        num_candidates: int = 2,
        visualize: bool = False,
        straggler_identification_impl: Callable[
            ..., pd.Series
        ] = _hta_straggler.find_stragglers_with_late_start_comm_kernels,
    ) -> List[int]:
        """The ``num_candidates`` ranks whose last long NCCL kernel starts latest (HTA's
        default metric, ``find_stragglers_with_late_start_comm_kernels``), most often
        found first, as HTA orders them. Without a step selection or another
        identification function, computed natively; with either, HTA's procedure over
        its frames (``tracewise._hta_straggler``): the
        selected steps that the trace has (ValueError where none), every rank's frame of
        those steps stacked (``rank``, ``idx``, ``cat``/``name`` as symbol ids) and handed
        with the symbol table, ``num_candidates`` and ``visualize`` to
        ``straggler_identification_impl`` (HTA's function, or your own, is called as HTA
        calls it), and the ranks of its largest values, largest first. ValueError where
        no communication kernel has a spread across ranks (HTA 0.5.0 fails there too)."""
        available = self.get_profiler_steps()
        default = _hta_straggler.find_stragglers_with_late_start_comm_kernels
        impl = straggler_identification_impl
        if profiler_steps is not None or (impl is not None and impl is not default) or visualize:
            # A user's function is handed HTA's columns; ours reads only the common ones.
            frames = self._frames()
            if impl is not default and impl is not None:
                frames = {r: self._frame_with_args(r) for r in frames}
            return _hta_straggler.potential_stragglers(
                frames,
                available,
                None if profiler_steps is None else list(profiler_steps),
                num_candidates,
                visualize,
                impl,
            )
        if not available:
            raise ValueError(
                "invalid value for argument: profiler_steps=None; available profiler steps=[]"
            )
        num = max(int(num_candidates), 1)
        counts = self._t.straggler_counts(num)
        if not counts:
            raise ValueError(_hta_straggler.NO_METRIC)
        # HTA's own sort of its per-rank series, so that ties fall as they fall in HTA.
        series = pd.Series([c for _, c in counts], index=[r for r, _ in counts], dtype="int64")
        return [int(r) for r in series.sort_values(ascending=False)[:num].index.tolist()]

    # --- critical path ----------------------------------------------------------------

    def _event_info(self, rank: int) -> Dict[int, Tuple[str, str, Any, Any, int]]:
        """Per event index of ``rank``: (name, category, pid, tid, stream) of its host events
        (stream −1) and GPU activities (pid the device, tid the stream)."""

        def num(v: str) -> Any:
            try:
                return int(v)
            except ValueError:
                return v

        return {
            int(index): (name, cat, num(pid), num(tid), int(stream))
            for index, name, cat, pid, tid, stream in self._t.event_info(int(rank))
        }

    def critical_path_analysis(
        self,
        rank: int,
        annotation: str,
        instance_id: Union[Optional[int], Tuple[int, int]],
    ) -> Tuple[CPGraph, bool]:
        """HTA's critical path analysis of ``rank`` over instance ``instance_id`` (an int,
        or an inclusive ``(start, end)`` range; None is the first) of the host annotations
        whose name contains ``annotation`` (in start order; ``""``: the whole trace):
        (the :class:`CPGraph`, True when the longest path was found). When no annotation
        matches, (an empty graph, False) where HTA returns None."""
        self._check_ranks([rank])
        if instance_id is None:
            first, last = 0, 0
        elif isinstance(instance_id, tuple):
            first, last = int(instance_id[0]), int(instance_id[1])
        else:
            first = last = int(instance_id)
        # The native graph (lists of tuples that the graph object only reads) is kept per
        # query: a notebook asks for the same step's path again to overlay it, and each
        # call still gets a graph object of its own, as HTA's does.
        kept: Dict[Tuple[int, str, int, int], Any] = self.__dict__.setdefault("_cp_graphs", {})
        key = (int(rank), annotation, first, max(first, last))
        if key not in kept:
            kept[key] = _native.critical_path_data(self._t, *key)
        native = kept[key]
        graph_type = _graph_type()
        if native is None:
            return graph_type(int(rank), ([], [], None), dict), False
        graph = graph_type(int(rank), native, functools.partial(self._event_info, int(rank)))
        graph._hta_source = (self, annotation, first, max(first, last))
        return graph, graph.critical_path()

    def overlay_critical_path_analysis(
        self,
        rank: int,
        critical_path_graph: CPGraph,
        output_dir: str,
        only_show_critical_events: bool = True,
        show_all_edges: bool = False,
    ) -> str:
        """Writes HTA's overlaid trace of ``rank``: its trace file with ``args.critical = 1``
        on the events of the path, and a flow (``ph`` s/f, ``critical_path``) per drawn
        edge: the path's dependency, launch and sync edges, or with ``show_all_edges``
        every edge (zero-weight launch edges only when ``CRITICAL_PATH_SHOW_ZERO_WEIGHT_LAUNCH_EDGE=1``);
        with ``only_show_critical_events`` (which turns ``show_all_edges`` off) only the
        path's complete events, user annotations and Python functions stay. The file is
        ``output_dir/overlaid_critical_path_<trace file name>`` (gzip when the name ends in
        ``.gz``), written through tracewise's output rules: staged and renamed into place,
        an earlier output replaced, a trace file of the set never. Returns its path ("" when
        ``output_dir`` is not a directory, as HTA)."""
        from pathlib import Path

        self._check_ranks([rank])
        g = critical_path_graph
        if not isinstance(g, CPGraph):
            raise TypeError(
                "critical_path_graph must be the CPGraph critical_path_analysis returned, "
                f"not {type(g).__name__}"
            )
        if only_show_critical_events:
            show_all_edges = False
        out_dir = Path(output_dir).expanduser()
        if not out_dir.exists():
            os.makedirs(out_dir)
        elif not out_dir.is_dir():
            return ""
        files = {int(r): self._original.get(p, p) for r, p in self._t.files()}
        source = files[int(rank)]
        output = os.path.join(str(out_dir), "overlaid_critical_path_" + os.path.basename(source))
        flows = _hta_overlay.flows(g, show_all_edges)
        _native.write_overlaid_trace(
            source,
            output,
            sorted(g.critical_path_events_set),
            bool(only_show_critical_events),
            flows,
            list(files.values()),
        )
        return output
