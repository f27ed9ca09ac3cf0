"""tracewise.hta.TraceAnalysis against HTA 0.5.0 run in the same environment, on
param-dlrm-8rank: every drop-in method's frame equals HTA's (columns, dtypes, index,
values within 1e-9 relative), but for the differences docs/differences.md names."""

from __future__ import annotations

import contextlib
import io
import logging
import warnings

import pandas as pd
import pytest

RANKS = list(range(8))


@pytest.fixture(scope="module")
def pair(traces):
    hta_ta = pytest.importorskip("hta.trace_analysis", reason="SKIPPED: HolisticTraceAnalysis is not installed")
    from tracewise.hta import TraceAnalysis

    trace_dir = str(traces / "pytorch" / "param-dlrm-8rank")
    warnings.simplefilter("ignore", FutureWarning)
    logging.getLogger("hta").setLevel(logging.ERROR)
    with contextlib.redirect_stdout(io.StringIO()):
        theirs = hta_ta.TraceAnalysis(trace_dir=trace_dir)
    ours = TraceAnalysis(trace_dir=trace_dir)
    return theirs, ours


def equal(theirs, ours):
    if isinstance(theirs, pd.Series):
        pd.testing.assert_series_equal(ours, theirs, rtol=1e-9, atol=0)
    else:
        pd.testing.assert_frame_equal(ours, theirs, rtol=1e-9, atol=0)


def test_temporal_breakdown(pair):
    theirs, ours = pair
    equal(theirs.get_temporal_breakdown(visualize=False), ours.get_temporal_breakdown(visualize=False))


def test_comm_comp_overlap(pair):
    theirs, ours = pair
    equal(theirs.get_comm_comp_overlap(visualize=False), ours.get_comm_comp_overlap(visualize=False))


@pytest.mark.parametrize("num_kernels,duration_ratio", [(10, 0.8), (3, 0.5), (1000, 1.0)])
def test_gpu_kernel_breakdown(pair, num_kernels, duration_ratio):
    theirs, ours = pair
    t_types, t_kernels = theirs.get_gpu_kernel_breakdown(
        visualize=False, num_kernels=num_kernels, duration_ratio=duration_ratio
    )
    o_types, o_kernels = ours.get_gpu_kernel_breakdown(
        visualize=False, num_kernels=num_kernels, duration_ratio=duration_ratio
    )
    equal(t_types, o_types)
    equal(t_kernels, o_kernels)
    assert len(o_kernels) >= 30


@pytest.mark.parametrize("delay", [30, 5])
def test_idle_time_breakdown(pair, delay):
    theirs, ours = pair
    t_idle, t_stats = theirs.get_idle_time_breakdown(
        ranks=RANKS, visualize=False, consecutive_kernel_delay=delay, show_idle_interval_stats=True
    )
    o_idle, o_stats = ours.get_idle_time_breakdown(
        ranks=RANKS, visualize=False, consecutive_kernel_delay=delay, show_idle_interval_stats=True
    )
    equal(t_idle, o_idle)
    equal(t_stats, o_stats)
    assert len(o_idle) >= 60 and len(o_stats) == len(o_idle)


def test_idle_time_breakdown_default_rank(pair):
    theirs, ours = pair
    t_idle, t_stats = theirs.get_idle_time_breakdown(visualize=False)
    o_idle, o_stats = ours.get_idle_time_breakdown(visualize=False)
    equal(t_idle, o_idle)
    assert t_stats is None and o_stats is None


def test_cuda_kernel_launch_stats(pair):
    theirs, ours = pair
    t = theirs.get_cuda_kernel_launch_stats(ranks=RANKS, visualize=False)
    o = ours.get_cuda_kernel_launch_stats(ranks=RANKS, visualize=False)
    assert sorted(t) == sorted(o) == RANKS
    for rank in RANKS:
        equal(t[rank], o[rank])


def test_queue_length_summary(pair):
    """Equal but for mean and std on the streams where a launch and an activity start share
    a timestamp: HTA orders those with an unstable sort (docs/differences.md, "Queue
    length"); count, min, quartiles and max are equal everywhere."""
    theirs, ours = pair
    t = theirs.get_queue_length_summary(ranks=RANKS)
    o = ours.get_queue_length_summary(ranks=RANKS)
    assert list(o.columns) == list(t.columns)
    assert list(o.index) == list(t.index)
    exact = [c for c in t.columns if c[1] not in ("mean", "std")]
    equal(t[exact], o[exact])
    for stat in ("mean", "std"):
        diff = (o[("queue_length", stat)] - t[("queue_length", stat)]).abs()
        # The documented bound: at most a few of the ~450 points of a stream move by one.
        assert diff.max() < 0.05, diff[diff > 0]
        assert (diff == 0).sum() >= 24, diff


def test_kept_series_are_never_handed_out(pair):
    """The queue-length and memory-bandwidth series are kept per TraceAnalysis (one frame
    of all the ranks asked, each rank's a slice of it) and the empty blocked-queue frame
    once per process: what a caller changes in a result never reaches a later result, and
    a later result still equals HTA's."""
    theirs, ours = pair
    for get in (ours.get_queue_length_time_series, ours.get_memory_bw_time_series):
        first = get(ranks=RANKS)
        assert sorted(first) == RANKS
        for df in first.values():
            df.iloc[:, 0] = -7
            df.drop(df.index[:3], inplace=True)
        again = get(ranks=RANKS[::-1])
        with contextlib.redirect_stdout(io.StringIO()):
            expected = getattr(theirs, get.__name__)(ranks=RANKS[::-1])
        assert list(again) == RANKS[::-1]
        for rank in RANKS:
            equal(expected[rank], again[rank])
    series = ours.get_queue_length_time_series(ranks=RANKS)
    empty = ours.get_time_spent_blocked_on_full_queue(series)
    assert len(empty) == 0
    empty.loc[0] = [0, 1, 2.0, 3.0]
    with contextlib.redirect_stdout(io.StringIO()):
        expected = theirs.get_time_spent_blocked_on_full_queue(theirs.get_queue_length_time_series(ranks=RANKS))
    equal(expected, ours.get_time_spent_blocked_on_full_queue(series))


def test_potential_stragglers(pair):
    theirs, ours = pair
    assert ours.get_potential_stragglers(visualize=False) == theirs.get_potential_stragglers(visualize=False)
    assert ours.get_potential_stragglers() == [2, 7]


def test_critical_path_summary(pair):
    theirs, ours = pair
    with contextlib.redirect_stdout(io.StringIO()):
        t_graph, t_ok = theirs.critical_path_analysis(rank=0, annotation="ProfilerStep", instance_id=0)
        t_summary = t_graph.summary()
    o_graph, o_ok = ours.critical_path_analysis(rank=0, annotation="ProfilerStep", instance_id=0)
    assert t_ok and o_ok
    equal(t_summary, o_summary := o_graph.summary())
    assert o_summary["cpu_bound"] > 70


def test_profiler_steps(pair):
    theirs, ours = pair
    assert ours.get_profiler_steps() == [int(s) for s in theirs.get_profiler_steps()] == [10]


@pytest.mark.parametrize("num_kernels,duration_ratio", [(10, 0.8), (3, 0.5)])
def test_gpu_kernel_breakdown_without_memory_kernels(pair, num_kernels, duration_ratio):
    """``include_memory_kernels=False``: HTA's frames, with no MEMORY row or overlap, and
    the memory kernels' time gone from the type totals."""
    theirs, ours = pair
    kw = dict(visualize=False, num_kernels=num_kernels, duration_ratio=duration_ratio, include_memory_kernels=False)
    t_types, t_kernels = theirs.get_gpu_kernel_breakdown(**kw)
    o_types, o_kernels = ours.get_gpu_kernel_breakdown(**kw)
    equal(t_types, o_types)
    equal(t_kernels, o_kernels)
    assert not o_types["kernel_type"].str.contains("MEMORY").any()
    assert set(o_kernels["kernel_type"]) == {"COMPUTATION", "COMMUNICATION"}
    with_memory, _ = ours.get_gpu_kernel_breakdown(visualize=False, num_kernels=num_kernels, duration_ratio=duration_ratio)
    assert with_memory["kernel_type"].str.contains("MEMORY").any()
    assert o_types["sum"].sum() < with_memory["sum"].sum()


def test_reference_csvs_agree(pair, traces):
    """The stored HTA 0.5.0 outputs (reference-outputs/) agree with the drop-in too."""
    _, ours = pair
    refs = traces / "pytorch" / "reference-outputs" / "hta-0.5.0" / "param-dlrm-8rank"
    temporal = pd.read_csv(refs / "temporal_breakdown.csv", index_col=0)
    equal(temporal, ours.get_temporal_breakdown())
    stragglers = pd.read_csv(refs / "potential_stragglers.csv", index_col=0)
    assert sorted(stragglers["straggler_rank"]) == ours.get_potential_stragglers()


def test_trace_diff_visualize():
    """The visualize methods return the data HTA plots (each label's column and the
    difference, by name) and plot nothing unless asked; a frame that is not
    compare_traces' (fewer than two labels) is a ValueError."""
    from tracewise.hta import TraceDiff

    df = pd.DataFrame(
        {
            "a_counts": [1, 2], "a_total_duration": [10.0, 20.0],
            "b_counts": [3, 2], "b_total_duration": [5.0, 20.0],
            "diff_counts": [2, 0], "diff_duration": [-5.0, 0.0],
        },
        index=pd.Index(["k1", "k2"], name="name"),
    )
    d = TraceDiff.visualize_duration_diff(df, show_image=False)
    assert d.columns.tolist() == ["a", "b", "Difference"]
    assert d["Difference"].tolist() == [-5.0, 0.0] and d["b"].tolist() == [5.0, 20.0]
    c = TraceDiff.visualize_counts_diff(df, show_image=False)
    assert c["a"].tolist() == [1, 2] and c["Difference"].tolist() == [2, 0]
    with pytest.raises(ValueError):
        TraceDiff.visualize_counts_diff(df[["a_counts", "a_total_duration"]], show_image=False)


def test_short_names_are_htas():
    """``use_short_name`` groups by HTA's short names (templates, arguments and return
    types removed), unbalanced brackets included."""
    utils = pytest.importorskip("hta.utils.utils", reason="SKIPPED: HolisticTraceAnalysis is not installed")
    from tracewise._hta_diff import shorten_name

    names = [
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
        "Memcpy HtoD (Pageable -> Device)", "aten::add_", "a) b", "x>y<z", "f(g(h)) -> int", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
        "dma copy", "void foo<(bar)>()", "",
    ]
    assert [shorten_name(n) for n in names] == [utils.shorten_name(n) for n in names]


def test_annotation_checks_and_aten_delays_read_no_trace_again(traces, monkeypatch):
    """Whether the traces have GPU or CPU user annotations or CUPTI ranges comes from what
    the constructor read (the loader notes HTA's asked symbols), and the ATen launches come
    from the native trace: after the constructor, these methods open no trace file and
    load no capture."""
    import builtins

    import tracewise
    from tracewise.hta import TraceAnalysis

    trace_dir = traces / "pytorch" / "param-dlrm-8rank"
    ours = TraceAnalysis(trace_dir=str(trace_dir))
    opened = []
    real_open = builtins.open

    def spy_open(file, *args, **kwargs):
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    def no_load(*args, **kwargs):
        raise AssertionError(f"a capture was loaded again: {args}")

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(tracewise, "load", no_load)
    assert ours.get_gpu_user_annotation_breakdown(visualize=False) is None
    cpu = ours.get_gpu_user_annotation_breakdown(use_gpu_annotation=False, visualize=False)
    assert len(cpu) > 0 and set(cpu["rank"]) == set(RANKS)
    assert ours.get_gpu_kernels_with_user_annotations(0) is None
    assert ours.get_cupti_counter_data_with_operators(ranks=[0]) == []
    aten = ours.get_aten_op_kernels_and_delay(ranks=[0, 1])
    assert sorted(aten) == [0, 1]
    # Rank 1's table also counts rank 0's launches, as HTA 0.5.0's does.
    assert aten[1]["occurrence_count"].sum() > aten[0]["occurrence_count"].sum() > 0
    assert not [f for f in opened if str(trace_dir) in f], opened
