"""Holistic Trace Analysis' ``TraceAnalysis`` as a drop-in.

Change ``from hta.trace_analysis import TraceAnalysis`` to
``from tracewise.hta import TraceAnalysis``: the methods below take HTA 0.5.0's arguments
and return pandas frames with its column names, dtypes and row order, computed by
tracewise's native HTA analyses (``trace_frame::hta``, ``critical_path``) instead of
pandas over a parsed trace. Where an argument or a method needs what tracewise does not
compute, it raises ``NotImplementedError`` naming it; ``docs/differences.md`` lists where
the numbers may differ from HTA's. ``visualize`` is accepted and ignored (no plots).

pandas is imported when this module is.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import pandas as pd

from . import _native

__all__ = ["TraceAnalysis", "CriticalPathSummary"]

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
    tracewise's loader."""

    def __init__(
        self,
        trace_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
        trace_files: Optional[Dict[int, str]] = None,
        include_last_profiler_step: Optional[bool] = False,
        **kwargs: Any,
    ) -> None:
        if trace_dir is None:
            raise NotImplementedError(
                "tracewise.hta.TraceAnalysis reads a trace_dir (every trace file in it); "
                "trace_files is not supported"
            )
        if trace_files:
            raise NotImplementedError("trace_files is not supported; pass trace_dir")
        self.trace_dir = os.fspath(trace_dir)
        self._t = _native.HtaTrace(self.trace_dir)

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
            raise NotImplementedError(
                "include_memory_kernels=False: the kernel-type union is computed with the "
                "MEMORY class"
            )
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
        """Per rank (default ``[0]``): one row per GPU activity with a runtime launch, by
        correlation id: ``cpu_duration``, ``gpu_duration``, ``launch_delay`` (µs)."""
        if not include_memory_events:
            raise NotImplementedError(
                "include_memory_events=False: memcpy/memset launches are always included"
            )
        if ranks is None:
            ranks = [0]
        out = {}
        for rank in ranks:
            df = pd.DataFrame(
                self._t.launch_stats(int(rank)),
                columns=["correlation", "cpu_duration", "gpu_duration", "launch_delay"],
            )
            df["correlation"] = _downcast(df["correlation"])
            for c in ["cpu_duration", "gpu_duration", "launch_delay"]:
                df[c] = df[c].astype("float64")
            out[rank] = df
        return out

    def get_queue_length_summary(self, ranks: Optional[List[int]] = None) -> Optional[pd.DataFrame]:
        """``describe()`` of the queue length (outstanding GPU operations) per rank and
        stream, for ``ranks`` (default ``[0]``); None when no stream has launches."""
        if ranks is None or len(ranks) == 0:
            ranks = [0]
        results = []
        for rank in ranks:
            series = self._t.queue_length(int(rank))
            if not series:
                continue
            streams = [s for s, values in series for _ in values]
            values = [v for _, vs in series for v in vs]
            df = pd.DataFrame(
                {"rank": int(rank), "stream": _downcast(pd.Series(streams)), "queue_length": values}
            )
            results.append(df.groupby(["rank", "stream"]).describe())
        return pd.concat(results) if results else None

    # --- ranks and steps --------------------------------------------------------------

    def get_profiler_steps(self) -> List[int]:
        """The ``ProfilerStep`` numbers of the first rank."""
        return list(self._t.steps())

    def get_potential_stragglers(
        self,
        profiler_steps: Optional[List[int]] = None,
        num_candidates: int = 2,
        visualize: bool = False,
        **kwargs: Any,
    ) -> List[int]:
        """The ``num_candidates`` ranks whose last long NCCL kernel starts latest (HTA's
        default metric), in rank order."""
        if profiler_steps is not None or kwargs:
            raise NotImplementedError(
                "profiler_steps and straggler_identification_impl are not supported"
            )
        return sorted(self._t.stragglers(int(num_candidates)))

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
            raise NotImplementedError("a range of annotation instances is not supported")
        res = self._t.critical_path(int(rank), annotation, int(instance_id or 0))
        if res is None:
            return CriticalPathSummary(0.0, []), False
        length, split = res
        return CriticalPathSummary(length, split), True


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
