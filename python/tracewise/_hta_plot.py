"""HTA 0.5.0's figures, for the drop-in's ``visualize=True``.

Each function here draws, from the frame a ``TraceAnalysis`` method returns, the figures
HTA's method draws (the same plotly express kind, axes, titles and layout, read from HTA's
analyzers) and ``.show()``s each as HTA does. The methods return the same data whether
they plot or not. plotly is optional: without it ``visualize=True`` draws nothing, returns
the data, and warns once per process that no plot is drawn.
"""

from __future__ import annotations

import re
import warnings
from typing import Any, Dict, List, Sequence

import pandas as pd

_warned = False
"""Whether the "plotly is not installed" warning was given (once per process)."""


def express() -> Any:
    """``plotly.express``, or None (warning once) when plotly cannot be imported."""
    global _warned
    try:
        import plotly.express as px
    except ImportError:
        if not _warned:
            _warned = True
            warnings.warn(
                "visualize=True draws no plot: plotly is not installed (the data HTA plots "
                "is returned; `pip install plotly` to draw it)",
                RuntimeWarning,
                stacklevel=3,
            )
        return None
    return px


def temporal(df: pd.DataFrame) -> None:
    """``get_temporal_breakdown``'s bar chart: each rank's idle, compute and non-compute
    share of its kernel time."""
    px = express()
    if px is None:
        return
    data = df.copy()
    for c in ("idle_time", "compute_time", "non_compute_time"):
        data[c] = data[f"{c}(us)"] / data["kernel_time(us)"]
    fig = px.bar(
        data,
        x="rank",
        y=["idle_time", "compute_time", "non_compute_time"],
        title="Temporal breakdown across ranks",
        labels={"rank": "Rank"},
    )
    fig.update_layout(
        yaxis_tickformat=".2%", yaxis_title="Percentage", legend_title="Time Breakdown"
    )
    fig.show()


def comm_comp_overlap(df: pd.DataFrame) -> None:
    """``get_comm_comp_overlap``'s bar chart: each rank's overlap ratio (the returned
    percentage / 100; HTA plots its ratio before rounding the percentage to 2 places)."""
    px = express()
    if px is None:
        return
    data = df.copy()
    data["comp_comm_overlap_ratio"] = data["comp_comm_overlap_pctg"] / 100
    fig = px.bar(
        data,
        x="rank",
        y="comp_comm_overlap_ratio",
        title="Computation-Communication Overlap",
        labels={
            "rank": "Rank",
            "comp_comm_overlap_ratio": "Computation-Communication Overlap Percentage",
        },
    )
    fig.update_layout(yaxis_tickformat=".2%")
    fig.show()


def _rank_pies(parts: Sequence[Any], title: str, n_ranks: int, renderer: Any) -> None:
    """HTA's grid of pies, two per row: one per (rank, frame with ``name``/``sum (us)``).
    HTA places rank r at row r // 2, column r % 2; here the i-th rank is at i // 2, i % 2,
    the same place for ranks 0, 1, 2, … and a valid one for other rank numbers."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    specs = [[{"type": "domain"}, {"type": "domain"}] for _ in range((len(parts) + 1) // 2)]
    fig = make_subplots(rows=max(len(specs), 1), cols=2, specs=specs or None)
    for i, (rank, frame) in enumerate(parts):
        fig.add_trace(
            go.Pie(
                labels=frame["name"],
                values=frame["sum (us)"],
                title=f"Rank {rank}",
                automargin=False,
            ),
            i // 2 + 1,
            i % 2 + 1,
        )
    fig.update_layout(
        title_text=title,
        margin=dict(l=50, r=50, b=50, t=50),
        showlegend=True,
        height=400 * (1 + n_ranks / 2),
        legend=dict(yanchor="bottom", y=-0.1, xanchor="left", x=0),
    )
    fig.show(renderer=renderer)


def _mean_bars(px: Any, df: pd.DataFrame, title: str, renderer: Any) -> None:
    """HTA's bar of one name's mean duration per rank, max and min as error bars."""
    fig = px.bar(
        df,
        x="rank",
        y="mean (us)",
        title=df["name"].iloc[0],
        labels={"rank": "Rank", "mean (us)": "Mean Duration (us)"},
        error_y=df["max (us)"] - df["mean (us)"],
        error_y_minus=df["mean (us)"] - df["min (us)"],
    )
    fig.update_layout(title_text=title, xaxis=dict(tickmode="linear", tick0=0, dtick=1))
    fig.show(renderer=renderer)


def kernel_breakdown(
    types: pd.DataFrame,
    kernels: pd.DataFrame,
    kernel_types: List[str],
    ranks: List[int],
    renderer: Any,
) -> None:
    """``get_gpu_kernel_breakdown``'s figures: a pie of the kernel types' shares over all
    ranks; per kernel type, a pie of each rank's kernels; per kernel (``others`` aside), a
    bar of its mean duration per rank."""
    px = express()
    if px is None:
        return
    fig = px.pie(
        types[types["percentage"] > 0],
        values="percentage",
        names="kernel_type",
        height=500,
        title="Kernel Type Percentage Across All Ranks",
    )
    fig.update_layout(
        margin=dict(l=50, r=50, b=50, t=50),
        showlegend=True,
        legend=dict(yanchor="bottom", y=-0.4, xanchor="left", x=0),
    )
    fig.show(renderer=renderer)
    for kernel in kernel_types:
        of_type = kernels[kernels["kernel_type"].eq(kernel)]
        parts = [(r, of_type[of_type["rank"].eq(r)]) for r in ranks]
        _rank_pies(parts, f'Kernel type "{kernel}" - kernel distribution on each rank', len(ranks), renderer)
        for name in of_type["name"].unique():
            if name != "others":
                rows = of_type[of_type["name"].eq(name)]
                _mean_bars(px, rows, f'Kernel type "{kernel}" - {name}', renderer)


def user_annotation_breakdown(df: pd.DataFrame, ranks: List[int], renderer: Any) -> None:
    """``get_gpu_user_annotation_breakdown``'s figures: a pie of each rank's annotations,
    and per annotation (``others`` aside) a bar of its mean duration per rank."""
    px = express()
    if px is None:
        return
    parts = [(r, df[df["rank"].eq(r)]) for r in ranks]
    _rank_pies(parts, "User annotation distribution on each rank", len(ranks), renderer)
    for name in df["name"].unique():
        if name != "others":
            _mean_bars(px, df[df["name"].eq(name)], f"User annotation = {name}", renderer)


def idle_time_breakdown(df: pd.DataFrame, ranks: List[int], pctg: bool) -> None:
    """``get_idle_time_breakdown``'s bar chart of each rank: idle time (or its share, with
    ``pctg``) per stream, by category. HTA turns the returned frame's ``stream`` into
    strings to plot it; here a copy is plotted and the returned frame keeps its integers."""
    px = express()
    if px is None:
        return
    for rank in ranks:
        data = df[df["rank"].eq(rank)].drop(columns=["rank"]).copy()
        data["stream"] = data["stream"].astype(str)
        ycol = "idle_time_ratio" if pctg else "idle_time"
        fig = px.bar(
            data,
            x="stream",
            y=ycol,
            color="idle_category",
            hover_data=["idle_time", "idle_time_ratio"],
            title=f"Idle time breakdown on rank {rank} per CUDA stream",
        )
        if pctg:
            fig.update_layout(
                yaxis_tickformat=".2%", yaxis_title="Percentage", legend_title="Idle Time Breakdown"
            )
        else:
            fig.update_layout(yaxis_title="Idle time (us)", legend_title="Idle Time Breakdown")
        fig.show()


def launch_stats(frames: Dict[int, pd.DataFrame], runtime_cutoff: int, launch_delay_cutoff: int) -> None:
    """``get_cuda_kernel_launch_stats``' three histograms per rank: the short kernels' CPU
    durations, the CPU durations over ``runtime_cutoff`` and the launch delays over
    ``launch_delay_cutoff``."""
    px = express()
    if px is None:
        return
    for rank, df in frames.items():
        short = df[(df["cpu_duration"] <= runtime_cutoff) & (df["gpu_duration"] < df["cpu_duration"])]
        fig = px.histogram(
            short,
            x=short["cpu_duration"],
            title="Short GPU kernels (gpu op duration < cpu op duration) on rank %d" % rank,
            labels={"cpu_duration": "Cuda Runtime Event Duration (us)"},
        )
        fig.show()
        slow = df[df["cpu_duration"] > runtime_cutoff]
        fig = px.histogram(
            slow,
            x=slow["cpu_duration"],
            nbins=300,
            title="Runtime Event Duration Outliers (duration > %s us)  on rank %d" % (runtime_cutoff, rank),
            labels={"cpu_duration": "Cuda Runtime Event Duration (us)"},
        )
        fig.show()
        late = df[df["launch_delay"] > launch_delay_cutoff]
        fig = px.histogram(
            late,
            x=late["launch_delay"],
            nbins=300,
            title="Launch Delay Outliers (duration > %s us) on rank %d" % (launch_delay_cutoff, rank),
            labels={"launch_delay": "Launch Delay Duration (us)"},
        )
        fig.show()


_SIMPLIFY = [r"\(.+\)", r"<[^<]+>?", r"^void\s+", r"\s+", r"autograd::engine::evaluate_function"]


def _short_name(name: str) -> str:
    """A kernel name as HTA's timeline labels it: argument lists, template arguments, a
    leading ``void``, spaces and ``autograd::engine::evaluate_function`` removed, cut to 45
    characters."""
    for pattern in _SIMPLIFY:
        name = re.sub(pattern, "", name)
    return name if len(name) < 45 else name[:42] + "..."


def gpu_timeline(title: str, df: pd.DataFrame, sym: List[str], duration_threshold: int = 1000) -> None:
    """HTA's timeline of the GPU events of ``df`` (a stacked frame with ``rank``,
    ``iteration``, ``stream`` and symbol ids): one row per (rank, stream), each event at
    least ``duration_threshold`` µs wide, coloured by its short name."""
    px = express()
    if px is None:
        return

    def values(col: str) -> List[Any]:
        return sorted(v for v in df[col].unique().tolist() if v != -1)

    ranks = values("rank")
    events = df.loc[
        df["rank"].isin(ranks) & df["iteration"].isin(values("iteration")) & df["stream"].isin(values("stream"))
    ].copy()
    events["s_name"] = events["name"].map(lambda i: _short_name(sym[i]))
    events["s_cat"] = events["cat"].map(lambda i: sym[i])
    events["calibrated_start_global"] = pd.to_datetime(events["ts"], unit="us")
    events["calibrated_end_global"] = pd.to_datetime(
        events["ts"] + events["dur"].clip(lower=duration_threshold), unit="us"
    )
    events["label"] = events["s_name"]
    events["task"] = "rank " + events["rank"].astype("str") + " stream " + events["stream"].astype("str")
    events = events.sort_values(by=["rank", "stream", "ts"])
    hover = sorted(
        set(events.columns) & {"rank", "stream", "iteration", "s_cat", "cat", "s_name", "name", "dur"}
    )
    fig = px.timeline(
        events,
        x_start="calibrated_start_global",
        x_end="calibrated_end_global",
        y="task",
        hover_data=hover,
        category_orders={"task": sorted(events["task"].unique())},
        color="label",
        color_discrete_sequence=px.colors.qualitative.D3,
        width=1600,
        height=200 + 120 * len(sorted(events["rank"].unique())),
        title=title,
    )
    fig.show()


def stragglers(metric: pd.DataFrame, metric_name: str, flags: pd.Series, with_iteration: bool) -> None:
    """HTA's "Potential Stragglers" bar chart: each rank's metric (one facet per step with
    several steps), red where the rank was found a straggler in that step."""
    px = express()
    if px is None:
        return
    data = metric.copy()
    data["is_straggler"] = flags.map(lambda x: "Yes" if x > 0 else "No")
    columns = ["rank", "iteration", metric_name] if with_iteration else ["rank", metric_name]
    for c in columns:
        data[c] = pd.to_numeric(data[c])
    n_iterations = data["iteration"].nunique() if "iteration" in data.columns else 1
    fig = px.bar(
        data,
        x="rank",
        y=metric_name,
        facet_col="iteration" if with_iteration else None,
        color="is_straggler",
        color_discrete_map={"Yes": "red", "No": "blue"},
        hover_data=columns,
        width=300 * n_iterations,
        title="Potential Stragglers",
    )
    fig.show()



def frequent_patterns(top: pd.DataFrame, rank: int) -> None:
    """``get_frequent_cuda_kernel_sequences``' bar chart: the count of each of the top
    patterns, the pattern's names one per line in the hover."""
    px = express()
    if px is None:
        return
    data = top.copy()
    data["pattern"] = data["pattern"].str.replace("|", "<br>", regex=False)
    fig = px.bar(
        data,
        x=data.index,
        y="count",
        hover_data=["pattern", "count"],
        title=f"Top {len(top)} frequent patterns for rank {rank}",
        labels={"x": "Pattern Index", "count": "Pattern Count"},
    )
    fig.update_xaxes(type="category")
    fig.show()
