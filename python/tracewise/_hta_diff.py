"""HTA 0.5.0's ``TraceDiff`` and ``LabeledTrace``: the operators and kernels of two traces
compared by name (counts and total duration), over HTA's parsed frames of the chosen
ranks and iterations (``_hta_frame``).

As in HTA, a ``LabeledTrace`` is the whole trace (not aligned across ranks, no step
filtered); the default rank and iteration are the first ones. ``cat_id``/``name_id`` are
ids of this package's symbol table (first appearance first), where HTA's differ from
run to run; the rows of ``get_ops_summary`` follow those ids, as HTA's follow its own.
"""

from __future__ import annotations

import os
import random
from enum import Enum
from typing import Any, Dict, List, Optional, Union

import pandas as pd

from . import _hta_frame

TraceDir = str


class DeviceType(Enum):
    """HTA's ``trace_diff.DeviceType``: which side's operations a diff compares."""

    CPU = 1
    GPU = 2
    ALL = 3


def _is_memory_name(name: str) -> bool:
    return name.startswith(("Memcpy", "Memset", "dma"))


def shorten_name(name: str) -> str:
    """HTA's short name of an operator or kernel: a memory activity's name unchanged;
    else, without ``->``, every ``<...>`` and ``(...)`` group removed (a closer with no
    opener removes all before it), the last space-separated word."""
    if _is_memory_name(name) or ("<" not in name and "(" not in name):
        return name
    out: List[str] = []
    for c in name.replace("->", ""):
        if c in ">)":
            opener = "<" if c == ">" else "("
            cut = len(out) - 1
            while cut >= 0 and out[cut] != opener:
                cut -= 1
            del out[max(cut, 0):]
        else:
            out.append(c)
    return "".join(out).split(" ")[-1]


class LabeledTrace:
    """A trace with a label, as HTA's ``LabeledTrace``: built from ``trace_dir`` (or from
    a ``tracewise.hta.TraceAnalysis`` as ``t``); every rank's parsed frame."""

    def __init__(
        self,
        label: Optional[str] = None,
        t: Any = None,
        trace_dir: Optional[str] = None,
    ) -> None:
        self.label = label if label else f"t{random.randint(0, 10)}"
        if t is not None:
            files = getattr(t, "_t", None)
            if files is None:
                raise TypeError(
                    "LabeledTrace(t=...) takes a tracewise.hta.TraceAnalysis; HTA's Trace objects "
                    "are not read by tracewise"
                )
            rank_files = sorted((int(r), p) for r, p in files.files())
            frac = {int(r): bool(files.fractional(int(r))) for r, _ in rank_files}
        elif trace_dir is not None and os.path.isdir(trace_dir):
            rank_files = _hta_frame.rank_files(trace_dir)
            frac = _hta_frame.fractional(trace_dir)
        else:
            raise ValueError(
                "either a trace object or a valid trace dir must be provided in LabeledTrace.__init__()"
            )
        self._symbols = _hta_frame.SymbolTable()
        self._frames: Dict[int, pd.DataFrame] = {}
        self._paths: Dict[int, str] = dict(rank_files)
        self._with_args: Dict[int, pd.DataFrame] = {}
        for rank, path in rank_files:
            df = _hta_frame.events_frame(path, frac[rank])
            df["cat"] = self._symbols.ids(df["cat"])
            df["name"] = self._symbols.ids(df["name"])
            self._frames[rank] = df
        self.s_map = pd.Series(self._symbols.index, dtype="int64")
        self.s_tab = pd.Series(self._symbols.table, dtype="object")
        self.iteration_df = self._extract_iterations()

    def _extract_iterations(self) -> pd.DataFrame:
        """The ``ProfilerStep#N`` symbols: ``symbol``, ``id``, ``iteration`` (N)."""
        steps = self.s_map[self.s_map.index.str.startswith("ProfilerStep")].reset_index()
        steps.columns = ["symbol", "id"]
        steps["iteration"] = steps["symbol"].map(lambda s: int(s.replace("ProfilerStep#", "")))
        return steps

    def ranks(self) -> List[int]:
        """The trace's ranks, sorted."""
        return sorted(self._frames)

    def iterations(self) -> List[int]:
        """The ``ProfilerStep`` numbers of every rank, sorted."""
        return sorted(self.iteration_df["iteration"].values.tolist())

    def get_trace(self, rank: int) -> pd.DataFrame:
        """The parsed frame of ``rank`` (``cat``/``name`` as ids of ``s_tab``), with HTA's
        default ``args`` columns (``bytes``, ``memory_bw_gbps``, ``wait_on_*``, ``input_*``)."""
        return self._full(rank)

    def _full(self, rank: int) -> pd.DataFrame:
        """The frame of ``rank`` with HTA's default ``args`` columns, built on first use
        (``compare_traces`` and ``ops_diff`` read the frame without them)."""
        if rank not in self._with_args:
            args = _hta_frame.arg_columns(self._paths[rank])
            self._with_args[rank] = _hta_frame.with_args(self._frames[rank], args)
        return self._with_args[rank]

    def extract_ops(
        self,
        rank: Union[int, List[int], None] = None,
        iteration: Union[int, List[int], None] = None,
        device_type: DeviceType = DeviceType.ALL,
    ) -> pd.DataFrame:
        """The events of the ranks and iterations asked (default: the first of each),
        CPU events only (stream -1), GPU ones only, or both, as HTA's, with HTA's default
        ``args`` columns (``bytes``, ``memory_bw_gbps``, ``wait_on_*``, ``input_*``)."""
        return self._ops(rank, iteration, device_type, self._full)

    def _ops(
        self,
        rank: Union[int, List[int], None],
        iteration: Union[int, List[int], None],
        device_type: DeviceType,
        frame: Any,
    ) -> pd.DataFrame:
        """:meth:`extract_ops` over ``frame(rank)``."""
        all_ranks = self.ranks()
        ranks = _selection(rank, all_ranks, "rank", f"Trace {self.label} doesn't have any rank.")
        for r in ranks:
            if r not in all_ranks:
                raise ValueError(f"Invalid argument rank={rank}.")
        all_iters = self.iterations()
        iters = _selection(
            iteration, all_iters, "iteration", f"Trace {self.label} doesn't have any iteration."
        )
        for i in iters:
            if i not in all_iters:
                raise ValueError(f"Invalid argument iteration={i}.")
        if len(ranks) == 1:
            df = frame(ranks[0])
        else:
            # HTA labels the frames with the first ranks of the trace (its `keys=`).
            df = pd.concat(
                [frame(r) for r in ranks], axis=0, keys=all_ranks, names=["rank", "idx"]
            ).reset_index()
        df = df[df["iteration"].isin(iters)]
        if device_type == DeviceType.CPU:
            return df[df["stream"].eq(-1)]
        if device_type == DeviceType.GPU:
            return df[df["stream"].ne(-1)]
        return df

    def get_ops_summary(self, ops: pd.DataFrame) -> pd.DataFrame:
        """Per (category, name) of ``ops``: ``cat``, ``name``, ``short_name``, ``counts``,
        ``total_duration`` (µs), ``cat_id``, ``name_id``."""
        df = ops[["cat", "name", "dur"]].groupby(["cat", "name"])["dur"].agg(["count", "sum"])
        df = df.reset_index().rename(
            columns={"cat": "cat_id", "name": "name_id", "count": "counts", "sum": "total_duration"}
        )
        tab = self._symbols.table
        df["cat"] = df["cat_id"].map(lambda i: tab[i])
        df["name"] = df["name_id"].map(lambda i: tab[i])
        df["short_name"] = df["name"].map(shorten_name)
        return df[["cat", "name", "short_name", "counts", "total_duration", "cat_id", "name_id"]]


def _selection(value: Any, available: List[int], what: str, none_msg: str) -> List[int]:
    if value is None:
        if not available:
            raise ValueError(none_msg)
        return available[:1]
    if isinstance(value, int):
        return [value]
    if isinstance(value, list):
        return value
    raise ValueError(f"Invalid type for argument `{what}` {value}.")


def _labeled(t: Any, default_label: str) -> LabeledTrace:
    if isinstance(t, str):
        return LabeledTrace(label=default_label, trace_dir=t)
    if isinstance(t, LabeledTrace):
        return t
    if hasattr(t, "_t"):
        return LabeledTrace(label=default_label, t=t)
    raise ValueError(f"Invalid argument type for ({t}).")


class TraceDiff:
    """HTA's ``TraceDiff``: operator and kernel counts and durations of two traces."""

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
        """Per name (or short name), sorted: ``<label>_counts`` and
        ``<label>_total_duration`` (µs) of both traces, ``diff_counts``, ``diff_duration``
        (test − control) and ``counts_change_categories`` (``+``, ``-``, ``=``)."""
        c = _labeled(control, "Control")
        t = _labeled(test, "Test")
        if c.label == t.label:
            # HTA renames the test trace twice.
            t.label = f"{t.label}_control_test"
        key = "short_name" if use_short_name else "name"

        def summary(lt: LabeledTrace, rank: Any, iteration: Any) -> pd.DataFrame:
            ops = lt.get_ops_summary(lt._ops(rank, iteration, device_type, lambda r: lt._frames[r]))
            return ops.groupby(key)[["counts", "total_duration"]].sum()

        comp = pd.concat(
            [summary(c, control_rank, control_iteration), summary(t, test_rank, test_iteration)],
            axis=1,
            join="outer",
            keys=[c.label, t.label],
        )
        comp.fillna(0, inplace=True)
        comp.columns = ["_".join(col).rstrip("_") for col in comp.columns]
        comp["diff_counts"] = comp[f"{t.label}_counts"] - comp[f"{c.label}_counts"]
        comp["diff_duration"] = comp[f"{t.label}_total_duration"] - comp[f"{c.label}_total_duration"]
        comp["counts_change_categories"] = comp["diff_counts"].map(
            lambda d: "+" if d > 0 else "-" if d < 0 else "="
        )
        return comp

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
        """The names ``added``, ``deleted``, ``increased``, ``decreased`` and ``unchanged``
        (in count) from the control trace to the test trace."""
        c = _labeled(control, "Control")
        t = _labeled(test, "Test")
        df = cls.compare_traces(
            c, t, control_rank, test_rank, control_iteration, test_iteration, device_type
        )
        nc = df[f"{c.label}_counts"]
        nt = df[f"{t.label}_counts"]
        d = df["diff_counts"]
        return {
            "added": df.index[nc.eq(0) & nt.gt(0)].tolist(),
            "deleted": df.index[nc.gt(0) & nt.eq(0)].tolist(),
            "increased": df.index[nc.gt(0) & d.gt(0)].tolist(),
            "decreased": df.index[nt.gt(0) & d.lt(0)].tolist(),
            "unchanged": df.index[nt.gt(0) & d.eq(0)].tolist(),
        }

    @classmethod
    def visualize_counts_diff(
        cls,
        df: pd.DataFrame,
        show_image: bool = True,
        export_image_path: Optional[str] = None,
    ) -> pd.DataFrame:
        """The data of HTA's grouped bar chart of ``compare_traces``' counts (each label's
        counts and ``diff_counts``, by name); plotted with plotly only when ``show_image``
        or ``export_image_path`` asks."""
        return _bars(df, "counts", "diff_counts", "Ops Count Comparison", show_image, export_image_path)

    @classmethod
    def visualize_duration_diff(
        cls,
        df: pd.DataFrame,
        show_image: bool = True,
        export_image_path: Optional[str] = None,
    ) -> pd.DataFrame:
        """The data of HTA's grouped bar chart of ``compare_traces``' total durations (µs)
        and ``diff_duration``, by name; plotted only when asked, as
        :meth:`visualize_counts_diff`."""
        return _bars(
            df, "total_duration", "diff_duration", "Ops Duration Comparison", show_image, export_image_path
        )


def _bars(
    df: pd.DataFrame,
    column: str,
    diff: str,
    title: str,
    show_image: bool,
    export_image_path: Optional[str],
) -> pd.DataFrame:
    labels = [c[: -len("_total_duration")] for c in df.columns if c.endswith("_total_duration")]
    if len(labels) < 2:
        raise ValueError("the frame is not one compare_traces returned (fewer than two labels)")
    data = pd.DataFrame(
        {labels[0]: df[f"{labels[0]}_{column}"], labels[1]: df[f"{labels[1]}_{column}"], "Difference": df[diff]}
    )
    if show_image or export_image_path:
        try:
            import plotly.graph_objects as go
        except ImportError as e:  # pragma: no cover - plotly is optional
            raise ImportError("plotting needs plotly (pip install plotly)") from e
        fig = go.Figure(data=[go.Bar(name=c, x=data.index, y=data[c]) for c in data.columns])
        fig.update_layout(barmode="group", title_text=title)
        if show_image:
            fig.show()
        if export_image_path:
            fig.write_image(export_image_path)
    return data
