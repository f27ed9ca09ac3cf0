"""``visualize=True``: the figures tracewise.hta draws against those HTA 0.5.0 draws, in the
same test, on a seeded synthetic 4-rank, 5-step trace with communication kernels (the one
of test_hta_stragglers.py) and on a shared HTA set. Nothing is opened: conftest's
``shown_figures`` records every figure passed to ``show``. Compared per figure, in order:
the plotly trace kinds and names, the title, the axis and legend titles, the plotted x
and y values and each pie's slices (floats at 1e-3 absolute: HTA plots the overlap ratio
before rounding it, ours from the rounded percentage). Each method's data is the same with and without ``visualize``.
Without plotly, ``visualize=True`` returns the data and warns once."""

from __future__ import annotations

import contextlib
import io
import logging
import sys
import warnings
from typing import Any, Callable, List, Tuple

import numpy as np
import pandas as pd
import pytest

hta_ta = pytest.importorskip("hta.trace_analysis", reason="SKIPPED: HolisticTraceAnalysis is not installed")
pytest.importorskip("plotly", reason="SKIPPED: plotly is not installed (HTA depends on it)")

from test_hta_stragglers import _write  # noqa: E402 - after the skips above


def _values(v: Any) -> List[Any]:
    if v is None:
        return []
    return [x.item() if hasattr(x, "item") else x for x in np.asarray(v, dtype=object).ravel().tolist()]


def _describe(fig: Any) -> dict:
    """What is compared of one figure."""
    layout = fig.layout
    return {
        "kinds": [t.type for t in fig.data],
        "names": [getattr(t, "name", None) for t in fig.data],
        "title": layout.title.text,
        "xaxis": layout.xaxis.title.text if "xaxis" in layout else None,
        "yaxis": layout.yaxis.title.text if "yaxis" in layout else None,
        "yformat": layout.yaxis.tickformat if "yaxis" in layout else None,
        "legend": layout.legend.title.text,
        "x": [_values(t.x) for t in fig.data if t.type != "pie"],
        "y": [_values(t.y) for t in fig.data if t.type != "pie"],
        # A pie's slices in any order (plotly sorts them by value to draw them).
        "slices": [sorted(zip(_values(t.labels), _values(t.values))) for t in fig.data if t.type == "pie"],
    }


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (float, int)) and isinstance(b, (float, int)) and not isinstance(a, bool):
        if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
            return True
        return abs(float(a) - float(b)) <= 1e-3
    return a == b


def _figures(shown: list, call: Callable[[], Any]) -> Tuple[Any, List[dict]]:
    start = len(shown)
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = call()
    return out, [_describe(f) for f, _, _ in shown[start:]]


def _equal_data(a: Any, b: Any) -> None:
    if isinstance(a, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _equal_data(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _equal_data(a[k], b[k])
    elif isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b)
    else:
        assert a == b


CALLS = [
    ("temporal", lambda ta, v: ta.get_temporal_breakdown(visualize=v)),
    ("overlap", lambda ta, v: ta.get_comm_comp_overlap(visualize=v)),
    ("kernel_breakdown", lambda ta, v: ta.get_gpu_kernel_breakdown(visualize=v)),
    ("kernel_breakdown_no_memory", lambda ta, v: ta.get_gpu_kernel_breakdown(visualize=v, include_memory_kernels=False, num_kernels=1)),
    ("user_annotation", lambda ta, v: ta.get_gpu_user_annotation_breakdown(use_gpu_annotation=False, visualize=v)),
    ("idle", lambda ta, v: ta.get_idle_time_breakdown(ranks=[0, 2], visualize=v)),
    ("idle_time", lambda ta, v: ta.get_idle_time_breakdown(visualize=v, visualize_pctg=False)),
    ("launch_stats", lambda ta, v: ta.get_cuda_kernel_launch_stats(ranks=[0, 1], visualize=v, runtime_cutoff=5, launch_delay_cutoff=20)),
    ("stragglers", lambda ta, v: ta.get_potential_stragglers(visualize=v)),
    ("stragglers_one_step", lambda ta, v: ta.get_potential_stragglers(profiler_steps=[3], visualize=v)),
]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    from tracewise.hta import TraceAnalysis

    trace_dir = _write(tmp_path_factory.mktemp("plots"), 2)
    logging.getLogger("hta").setLevel(logging.CRITICAL)
    with contextlib.redirect_stdout(io.StringIO()):
        theirs = hta_ta.TraceAnalysis(trace_dir=trace_dir)
    return theirs, TraceAnalysis(trace_dir=trace_dir)


@pytest.mark.parametrize("label,call", CALLS, ids=[c[0] for c in CALLS])
def test_figures_are_htas(pair, shown_figures, label, call):
    theirs, ours = pair
    _, want = _figures(shown_figures, lambda: call(theirs, True))
    got_data, got = _figures(shown_figures, lambda: call(ours, True))
    assert want, f"{label}: HTA drew no figure"
    assert len(got) == len(want), (label, [w["title"] for w in want], [g["title"] for g in got])
    for w, g in zip(want, got):
        for key in w:
            assert _same(g[key], w[key]), (label, w["title"], key, w[key], g[key])
    # The data is the data of visualize=False, and nothing more is drawn then.
    plain, none = _figures(shown_figures, lambda: call(ours, False))
    assert none == []
    _equal_data(got_data, plain)


def test_renderer_is_passed_as_hta_passes_it(pair, shown_figures):
    _, ours = pair
    with contextlib.redirect_stdout(io.StringIO()):
        ours.get_gpu_kernel_breakdown(image_renderer="notebook")
    assert shown_figures and all(k == {"renderer": "notebook"} for _, _, k in shown_figures)


def test_without_plotly_the_data_and_one_warning(pair, shown_figures, monkeypatch):
    from tracewise import _hta_plot

    _, ours = pair
    for name in ["plotly", "plotly.express", "plotly.graph_objects", "plotly.subplots"]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setattr(_hta_plot, "_warned", False)
    with pytest.warns(RuntimeWarning, match="plotly is not installed"):
        first = ours.get_temporal_breakdown()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        second = ours.get_idle_time_breakdown()
        ours.get_gpu_kernel_breakdown()
    assert shown_figures == []
    _equal_data(first, ours.get_temporal_breakdown(visualize=False))
    _equal_data(second, ours.get_idle_time_breakdown(visualize=False))
