"""Holistic Trace Analysis' ``TraceAnalysis`` as a drop-in.

Change ``from hta.trace_analysis import TraceAnalysis`` to
``from tracewise.hta import TraceAnalysis``: the methods below take HTA 0.5.0's arguments
and return pandas frames with its column names, dtypes and row order, computed by
tracewise's native HTA analyses (``trace_frame::hta``, ``critical_path``) instead of
pandas over a parsed trace. Where an argument or a method needs what tracewise does not
compute, it raises ``NotImplementedError`` naming it; ``docs/differences.md`` lists where
the numbers may differ from HTA's. ``visualize`` is accepted and ignored (no plots).
``docs/hta-api.md`` lists every public method and parameter of HTA 0.5.0's
``TraceAnalysis`` and ``TraceDiff`` and which of them raise ``NotImplementedError``.

pandas is imported when this module is.
"""

from __future__ import annotations

import os
import tempfile
from enum import Enum, Flag, auto
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import numpy as np
import pandas as pd

from . import _native

__all__ = [
    "TraceAnalysis",
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


def _not_built(feature: str) -> NotImplementedError:
    """The error of an HTA feature tracewise does not build."""
    return NotImplementedError(
        f"tracewise.hta does not implement HTA 0.5.0's {feature}; use HTA for it "
        "(docs/hta-api.md lists what is implemented)"
    )

_IDLE_CATEGORIES = ("host_wait", "kernel_wait", "other")


def _downcast(s: pd.Series) -> pd.Series:
    """HTA's parser stores integer columns with the smallest integer dtype that holds them
    (``pd.to_numeric(downcast="integer")``); its frames carry those dtypes."""
    return pd.to_numeric(s, downcast="integer")


def _integral(s: pd.Series) -> pd.Series:
    """Whole-µs sums are int64 in HTA's frames when every duration is whole."""
    if len(s) and (s % 1 == 0).all():
        return s.astype("int64")
    return s


class CriticalPathSummary:
    """What ``critical_path_analysis`` returns in place of HTA's ``CPGraph``: the path's
    :meth:`summary` (HTA's ``CPGraph.summary()``) and its length."""

    def __init__(self, length_us: float, split: List[Tuple[str, float]]) -> None:
        self.length_us = length_us
        """The critical path's length, in µs."""
        self._split = split

    def summary(self) -> pd.Series:
        """Share of the critical path's duration per ``bound_by``, in %, indexed by
        ``bound_by`` in sorted order; the zero-weight dependency edges are the ``""`` row
        (0.0), as in HTA."""
        shares = {"": 0.0}
        shares.update({b: p for b, p in self._split if p > 0.0})
        s = pd.Series(shares, name="duration", dtype="float64").sort_index()
        s.index.name = "bound_by"
        return s


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
                if rank is not None:
                    rank_of_file[link] = int(rank)
            return _native.HtaTrace(scratch, self.include_last_profiler_step, rank_of_file or None)

    def _check_ranks(self, ranks: List[int]) -> None:
        """HTA raises ValueError for a rank it has no trace of."""
        for rank in ranks:
            if rank not in self._ranks:
                raise ValueError(f"no trace for rank {rank} (the ranks are {self._ranks})")

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
        return df.sort_values("rank", ignore_index=True)

    def get_comm_comp_overlap(self, visualize: bool = True) -> pd.DataFrame:
        """Share of each rank's communication time that computation overlaps, in %."""
        df = pd.DataFrame(self._t.overlap(), columns=["rank", "comp_comm_overlap_pctg"])
        df["rank"] = df["rank"].astype("int64")
        return df.sort_values("rank", ignore_index=True)

    def get_gpu_kernel_breakdown(
        self,
        visualize: bool = True,
        duration_ratio: float = 0.8,
        num_kernels: int = 10,
        include_memory_kernels: bool = True,
        image_renderer: str = "",
    ) -> Tuple[pd.DataFrame, pd.DataFrame]:
        """(time per kernel type over all ranks, per-rank kernel statistics folded into
        ``others`` past ``num_kernels`` or the ``duration_ratio`` quantile), as HTA's."""
        if not include_memory_kernels:
            raise _not_built("get_gpu_kernel_breakdown(include_memory_kernels=False)")
        types = pd.DataFrame(self._t.kernel_types(), columns=["kernel_type", "sum"])
        types["sum"] = _integral(types["sum"])
        types.sort_values(by=["sum"], ignore_index=True, inplace=True, ascending=False)
        types["percentage"] = (types["sum"] / types["sum"].sum()) * 100
        types = types.round({"percentage": 1})

        rows = pd.DataFrame(
            self._t.kernels(),
            columns=["rank", "name", "kernel_type", "count", "sum", "max", "min", "mean", "std"],
        )
        analysed = ["COMPUTATION", "COMMUNICATION", "MEMORY"]
        parts = []
        for rank in sorted(rows["rank"].unique()):
            for kernel_type in analysed:
                sel = rows[(rows["rank"] == rank) & (rows["kernel_type"] == kernel_type)]
                agg = _fold_kernels(
                    sel[["name", "sum", "max", "min", "mean", "std"]],
                    num_kernels=num_kernels,
                    duration_ratio=duration_ratio,
                )
                agg["kernel_type"] = kernel_type
                agg["rank"] = int(rank)
                parts.append(agg)
        kernels = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
            columns=["name", "sum", "max", "min", "mean", "std", "kernel_type", "rank"]
        )
        kernels = kernels[["name", "sum", "max", "min", "std", "mean", "kernel_type", "rank"]]
        for c in ["sum", "max", "min", "std", "mean"]:
            kernels[c] = kernels[c].astype("float64")
        kernels["rank"] = kernels["rank"].astype("int64")
        kernels.sort_values(by=["kernel_type", "name", "rank"], ignore_index=True, inplace=True)
        kernels.rename(
            columns={
                "sum": "sum (us)",
                "mean": "mean (us)",
                "max": "max (us)",
                "min": "min (us)",
                "std": "stddev",
            },
            inplace=True,
        )
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
        stats = []
        for rank in ranks:
            if show_idle_interval_stats:
                stats.append(self._idle_interval_stats(int(rank), int(consecutive_kernel_delay), streams))
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
            df = pd.DataFrame(
                out, columns=["rank", "stream", "idle_category", "idle_time", "idle_time_ratio"]
            )
            df["rank"] = df["rank"].astype("int64")
            df["stream"] = _downcast(df["stream"])
            df["idle_time"] = df["idle_time"].astype("float64")
            df["idle_time_ratio"] = df["idle_time_ratio"].astype("float64")
            frames.append(df.round(2))
        return pd.concat(frames), (pd.concat(stats) if show_idle_interval_stats else None)

    def _idle_interval_stats(
        self, rank: int, delay: int, streams: Optional[List[int]]
    ) -> pd.DataFrame:
        """HTA's idle interval statistics of one rank: per stream, ``describe()`` of the gaps
        by category, the first activity of a stream counting in ``other`` with no gap."""
        rows = self._t.idle_intervals(rank, delay)
        by_stream = {s: gaps for s, gaps in rows}
        order = [s for s in streams if s in by_stream] if streams else [s for s, _ in rows]
        dtype = _downcast(pd.Series([s for s, _ in rows] or [0])).dtype
        parts = []
        for stream in order:
            gaps = by_stream[stream]
            df = pd.DataFrame(
                {
                    "idle_category": [2] + [c for c, _ in gaps],
                    "idle_interval": [float("nan")] + [g for _, g in gaps],
                }
            )
            described = df.groupby("idle_category").idle_interval.describe()
            described.insert(0, "stream", np.array([stream], dtype=dtype)[0])
            parts.append(described)
        out = pd.concat(parts).round(2)
        out.insert(0, "rank", rank)
        out.rename(mapper=dict(enumerate(_IDLE_CATEGORIES)), axis=0, inplace=True)
        return out

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
            df = pd.DataFrame(
                self._t.launch_stats(int(rank), bool(include_memory_events)),
                columns=["correlation", "cpu_duration", "gpu_duration", "launch_delay"],
            )
            df["correlation"] = _downcast(df["correlation"])
            for c in ["cpu_duration", "gpu_duration", "launch_delay"]:
                df[c] = df[c].astype("float64")
            out[rank] = df
        return out

    def _time_dtype(self, rank: int, s: pd.Series) -> pd.Series:
        """HTA's times are float64 on a trace it rounds (fractional µs) and int64 else."""
        if self._t.fractional(int(rank)) or not len(s) or not (s % 1 == 0).all():
            return s.astype("float64")
        return s.astype("int64")

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
        out: Dict[int, pd.DataFrame] = {}
        for rank in ranks:
            rows = self._t.queue_length_points(int(rank))
            if not rows:
                continue
            df = pd.DataFrame(rows, columns=["index", "ts", "pid", "stream", "queue_length"])
            df["tid"] = df["stream"]
            df = df.set_index("index")[["ts", "pid", "tid", "stream", "queue_length"]]
            df["ts"] = self._time_dtype(rank, df["ts"])
            df["stream"] = _downcast(df["stream"])
            df["queue_length"] = df["queue_length"].astype("int64")
            # HTA keeps `pid` and `tid` as the JSON gave them, in an object column.
            for c in ["pid", "tid"]:
                df[c] = pd.Series([int(v) for v in df[c]], index=df.index, dtype="object")
            out[rank] = df
        return out

    def get_queue_length_summary_from_time_series(
        self,
        queue_length_dict: Dict[int, pd.DataFrame],
    ) -> Optional[pd.DataFrame]:
        """``describe()`` of ``queue_length`` per (rank, stream) of a
        :meth:`get_queue_length_time_series` result; None when it is empty."""
        parts = []
        for rank, series in queue_length_dict.items():
            df = series[["stream", "queue_length"]].copy()
            df.insert(0, "rank", rank)
            parts.append(df.groupby(["rank", "stream"]).describe())
        return pd.concat(parts) if parts else None

    def get_queue_length_summary(self, ranks: Optional[List[int]] = None) -> Optional[pd.DataFrame]:
        """``describe()`` of the queue length (outstanding GPU operations) per rank and
        stream, for ``ranks`` (default ``[0]``); None when no stream has launches."""
        if ranks is None or len(ranks) == 0:
            ranks = [0]
        return self.get_queue_length_summary_from_time_series(
            self.get_queue_length_time_series(ranks)
        )

    def get_time_spent_blocked_on_full_queue(
        self,
        queue_length_dict: Dict[int, pd.DataFrame],
        max_queue_length: int = CUDA_MAX_LAUNCH_QUEUE_PER_STREAM,
    ) -> Optional[pd.DataFrame]:
        """Per rank of a :meth:`get_queue_length_time_series` result: the time its streams
        spend at ``max_queue_length`` or more outstanding operations (each point holds until
        the next of its stream), and that time over the rank's trace duration. As HTA's,
        one row per rank: the last stream (in the series' order) that reached the length."""
        found: Dict[int, list] = {}
        for rank, series in queue_length_dict.items():
            for stream in series["stream"].unique():
                df = series.loc[series["stream"] == stream]
                dur = df["ts"].shift(-1) - df["ts"]
                at_max = dur[df["queue_length"] >= max_queue_length]
                if at_max.empty:
                    continue
                total = at_max.sum()
                found[rank] = [stream, total, total * 1.0 / self._t.duration(int(rank))]
        out = pd.DataFrame.from_dict(
            found,
            orient="index",
            columns=[
                "stream",
                "duration_at_max_queue_length",
                "relative_duration_at_max_queue_length",
            ],
        )
        return out.reset_index(names="rank")

    # --- what tracewise does not build ----------------------------------------------

    def get_memory_bw_summary(self, ranks: Optional[List[int]] = None) -> pd.DataFrame:
        """Not built: raises NotImplementedError."""
        raise _not_built("get_memory_bw_summary (memcpy/memset bandwidth)")

    def get_memory_bw_time_series(self, ranks: Optional[List[int]] = None) -> Dict[int, pd.DataFrame]:
        """Not built: raises NotImplementedError."""
        raise _not_built("get_memory_bw_time_series (memcpy/memset bandwidth)")

    def generate_trace_with_counters(
        self,
        time_series: Optional[TimeSeriesTypes] = None,
        ranks: Optional[List[int]] = None,
        output_suffix: str = "_with_counters",
    ) -> None:
        """Not built: raises NotImplementedError."""
        raise _not_built("generate_trace_with_counters (a trace written with counter events)")

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
        """Not built: raises NotImplementedError."""
        raise _not_built("get_frequent_cuda_kernel_sequences")

    def get_gpu_kernels_with_user_annotations(
        self,
        rank: int,
        expand_names: bool = True,
        shortern_names: bool = True,
    ) -> Optional[pd.DataFrame]:
        """Not built: raises NotImplementedError."""
        raise _not_built("get_gpu_kernels_with_user_annotations")

    def get_gpu_user_annotation_breakdown(
        self,
        use_gpu_annotation: bool = True,
        visualize: bool = True,
        duration_ratio: float = 0.8,
        num_kernels: int = 1000,
        allowlist_patterns: Optional[List[str]] = None,
        image_renderer: Optional[str] = None,
    ) -> Optional[pd.DataFrame]:
        """Not built: raises NotImplementedError."""
        raise _not_built("get_gpu_user_annotation_breakdown")

    def get_aten_op_kernels_and_delay(
        self,
        ranks: Optional[List[int]] = None,
        sort_by: Optional[List[str]] = None,
    ) -> Dict[int, pd.DataFrame]:
        """Not built: raises NotImplementedError."""
        raise _not_built("get_aten_op_kernels_and_delay")

    def get_cupti_counter_data_with_operators(
        self,
        ranks: Optional[List[int]] = None,
    ) -> List[pd.DataFrame]:
        """Not built: raises NotImplementedError."""
        raise _not_built("get_cupti_counter_data_with_operators (CUPTI counters)")

    def overlay_critical_path_analysis(
        self,
        rank: int,
        critical_path_graph: Any,
        output_dir: str,
        only_show_critical_events: bool = True,
        show_all_edges: bool = False,
    ) -> str:
        """Not built: raises NotImplementedError."""
        raise _not_built("overlay_critical_path_analysis (the annotated trace)")

    # --- ranks and steps --------------------------------------------------------------

    def get_profiler_steps(self) -> List[int]:
        """The ``ProfilerStep`` numbers of the first rank."""
        return list(self._t.steps())

    def get_potential_stragglers(
        self,
        profiler_steps: Optional[List[int]] = None,
        num_candidates: int = 2,
        visualize: bool = False,
        straggler_identification_impl: Optional[Callable[..., pd.Series]] = None,
    ) -> List[int]:
        """The ``num_candidates`` ranks whose last long NCCL kernel starts latest (HTA's
        default metric, ``find_stragglers_with_late_start_comm_kernels``), in rank order.
        A step selection or another identification function raises NotImplementedError."""
        if profiler_steps is not None:
            raise _not_built("get_potential_stragglers(profiler_steps=...) (a step selection)")
        if not self.get_profiler_steps():
            raise ValueError(
                "invalid value for argument: profiler_steps=None; available profiler steps=[]"
            )
        if straggler_identification_impl is not None:
            raise _not_built(
                "get_potential_stragglers(straggler_identification_impl=...) (a user's metric)"
            )
        found = sorted(self._t.stragglers(int(num_candidates)))
        if not found:
            # HTA's metric fails (ValueError) where there is no long NCCL kernel to time.
            raise ValueError(
                "no straggler metric: no rank has a communication kernel long enough to time"
            )
        return found

    def critical_path_analysis(
        self,
        rank: int,
        annotation: str,
        instance_id: Union[Optional[int], Tuple[int, int]],
    ) -> Tuple[CriticalPathSummary, bool]:
        """The critical path of instance ``instance_id`` of the host annotation containing
        ``annotation`` on ``rank``: (its summary, True), or (an empty summary, False) when
        that annotation is not in the trace."""
        if isinstance(instance_id, tuple):
            raise _not_built("critical_path_analysis(instance_id=(start, end)) (a range of instances)")
        self._check_ranks([rank])
        res = self._t.critical_path(int(rank), annotation, int(instance_id or 0))
        if res is None:
            return CriticalPathSummary(0.0, []), False
        length, split = res
        return CriticalPathSummary(length, split), True


class DeviceType(Enum):
    """HTA's ``trace_diff.DeviceType``: which side's operations a diff compares."""

    CPU = 1
    GPU = 2
    ALL = 3


class LabeledTrace:
    """HTA's ``LabeledTrace``. Not built: constructing one raises NotImplementedError."""

    def __init__(
        self,
        label: Optional[str] = None,
        t: Any = None,
        trace_dir: Optional[str] = None,
    ) -> None:
        raise _not_built("LabeledTrace (TraceDiff's labeled trace)")

    def ranks(self) -> List[int]:
        """Not built: raises NotImplementedError."""
        raise _not_built("LabeledTrace.ranks")

    def iterations(self) -> List[int]:
        """Not built: raises NotImplementedError."""
        raise _not_built("LabeledTrace.iterations")

    def extract_ops(
        self,
        rank: Union[int, List[int], None] = None,
        iteration: Union[int, List[int], None] = None,
        device_type: DeviceType = DeviceType.ALL,
    ) -> pd.DataFrame:
        """Not built: raises NotImplementedError."""
        raise _not_built("LabeledTrace.extract_ops")

    def get_ops_summary(self, ops: pd.DataFrame) -> pd.DataFrame:
        """Not built: raises NotImplementedError."""
        raise _not_built("LabeledTrace.get_ops_summary")


class TraceDiff:
    """HTA's ``TraceDiff``. Not built: every method raises NotImplementedError."""

    @classmethod
    def compare_traces(
        cls,
        control: Union[LabeledTrace, str],
        test: Union[LabeledTrace, str],
        control_rank: Union[int, List[int], None] = None,
        test_rank: Union[int, List[int], None] = None,
        control_iteration: Union[int, List[int], None] = None,
        test_iteration: Union[int, List[int], None] = None,
        device_type: DeviceType = DeviceType.ALL,
        use_short_name: bool = False,
    ) -> pd.DataFrame:
        """Not built: raises NotImplementedError."""
        raise _not_built("TraceDiff.compare_traces")

    @classmethod
    def ops_diff(
        cls,
        control: Union[LabeledTrace, str],
        test: Union[LabeledTrace, str],
        control_rank: Union[int, List[int], None] = None,
        test_rank: Union[int, List[int], None] = None,
        control_iteration: Union[int, List[int], None] = None,
        test_iteration: Union[int, List[int], None] = None,
        device_type: DeviceType = DeviceType.ALL,
    ) -> Dict[str, List[str]]:
        """Not built: raises NotImplementedError."""
        raise _not_built("TraceDiff.ops_diff")

    @classmethod
    def visualize_counts_diff(
        cls,
        df: pd.DataFrame,
        show_image: bool = True,
        export_image_path: Optional[str] = None,
    ) -> None:
        """Not built: raises NotImplementedError."""
        raise _not_built("TraceDiff.visualize_counts_diff")

    @classmethod
    def visualize_duration_diff(
        cls,
        df: pd.DataFrame,
        show_image: bool = True,
        export_image_path: Optional[str] = None,
    ) -> None:
        """Not built: raises NotImplementedError."""
        raise _not_built("TraceDiff.visualize_duration_diff")


def _fold_kernels(agg: pd.DataFrame, num_kernels: int, duration_ratio: float) -> pd.DataFrame:
    """HTA 0.5.0's ``_aggr_gpu_kernel_time`` over per-name statistics already computed
    (natively): sorted by total time, and past ``num_kernels`` names, or past the
    ``duration_ratio`` quantile of the cumulative time, folded into ``others`` (whose
    max/min/mean/std are, as in HTA, over the folded names' totals)."""
    agg = agg.sort_values(by=["name"], ignore_index=True)
    agg = agg.sort_values(by=["sum"], ascending=False, ignore_index=True)
    agg = agg.fillna({"std": 0})
    if agg.shape[0] > num_kernels:
        keep = agg["sum"] < 0
        agg["cumsum"] = agg["sum"].cumsum()
        quantiles = agg["cumsum"].quantile(duration_ratio)
        agg.loc[~keep & (agg["cumsum"] > quantiles), "name"] = "others"
        agg.loc[~keep & (agg.index >= num_kernels), "name"] = "others"
        agg = agg.groupby(by=["name"])["sum"].agg(["sum", "max", "min", "mean", "std"])
        agg.reset_index(inplace=True)
        agg.fillna({"std": 0}, inplace=True)
    return agg.reset_index(drop=True)
