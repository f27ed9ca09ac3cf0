"""tracewise.hta's ``TraceDiff`` and ``LabeledTrace`` against HTA 0.5.0's, run in the same
interpreter, on every shared HTA trace set (the folders of ``test_hta_parity``), every
rank, each ``DeviceType``, and both name forms.

Tolerances, per column: counts exactly; durations at 1e-9 relative (the same integer µs);
names, index, column order and dtypes exactly. ``get_ops_summary``'s ``cat_id`` and
``name_id`` are not compared, and its rows are compared sorted by (``cat``, ``name``):
HTA's ids come from a Python set and change from run to run (docs/differences.md §14).
A trace set without ``ProfilerStep`` has no iteration: both raise ValueError."""

from __future__ import annotations

import contextlib
import io
import logging
import warnings
from pathlib import Path
from typing import Dict, Tuple

import pandas as pd
import pytest

hta_diff = pytest.importorskip("hta.trace_diff", reason="SKIPPED: HolisticTraceAnalysis is not installed")

from test_hta_parity import _names, same_arg_columns  # noqa: E402


def _params():
    import os

    env = os.environ.get("TRACEWISE_TRACES")
    if not env or not (Path(env) / "pytorch").is_dir():
        return ["(TRACEWISE_TRACES unset)"]
    return _names(env)


_CACHE: Dict[str, Tuple[object, object]] = {}
CONTROL = "hta-trace-diff/control"


def _load(traces: Path, name: str):
    if name not in _CACHE:
        from tracewise.hta import LabeledTrace

        warnings.simplefilter("ignore", FutureWarning)
        logging.getLogger("hta").setLevel(logging.CRITICAL)
        d = str(traces / "pytorch" / name)
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = hta_diff.LabeledTrace(label=name, trace_dir=d)
        ours = LabeledTrace(label=name, trace_dir=d)
        if len(_CACHE) > 2:
            _CACHE.pop(next(k for k in _CACHE if k != CONTROL))
        _CACHE[name] = (theirs, ours)
    return _CACHE[name]


@pytest.fixture(params=_params())
def pair(request, traces):
    name = request.param
    if name.startswith("("):
        pytest.skip("SKIPPED: TRACEWISE_TRACES is not set")
    return name, _load(traces, name), _load(traces, CONTROL)


def _same_outcome(theirs_fn, ours_fn):
    """Both raise the same class, or both return; returns (theirs, ours) or None."""
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            a = theirs_fn()
        except Exception as e:  # noqa: BLE001 - HTA's error, to be matched
            with pytest.raises(type(e)):
                ours_fn()
            return None
    return a, ours_fn()


def _summary(df: pd.DataFrame) -> pd.DataFrame:
    return (
        df.drop(columns=["cat_id", "name_id"]).sort_values(["cat", "name"], ignore_index=True)
    )


def test_ranks_and_iterations(pair):
    _, (theirs, ours), _ = pair
    assert ours.ranks() == theirs.ranks()
    assert ours.iterations() == [int(i) for i in theirs.iterations()]


@pytest.mark.parametrize("device", ["CPU", "GPU", "ALL"])
def test_ops_summary_every_rank_every_iteration(pair, device):
    from tracewise.hta import DeviceType

    _, (theirs, ours), _ = pair
    for rank in theirs.ranks():
        iterations = [int(i) for i in theirs.iterations()] or None
        got = _same_outcome(
            lambda: theirs.get_ops_summary(
                theirs.extract_ops(rank, iterations, hta_diff.DeviceType[device])),
            lambda: ours.get_ops_summary(ours.extract_ops(rank, iterations, DeviceType[device])),
        )
        if got is not None:
            pd.testing.assert_frame_equal(_summary(got[1]), _summary(got[0]), rtol=1e-9, atol=0)


@pytest.mark.parametrize("device", ["CPU", "GPU", "ALL"])
@pytest.mark.parametrize("short", [False, True])
def test_compare_traces_with_the_control(pair, device, short):
    from tracewise.hta import DeviceType, TraceDiff

    _, (theirs, ours), (theirs_c, ours_c) = pair
    got = _same_outcome(
        lambda: hta_diff.TraceDiff.compare_traces(
            theirs_c, theirs, device_type=hta_diff.DeviceType[device], use_short_name=short),
        lambda: TraceDiff.compare_traces(ours_c, ours, device_type=DeviceType[device], use_short_name=short),
    )
    if got is not None:
        pd.testing.assert_frame_equal(got[1], got[0], rtol=1e-9, atol=0)
        assert TraceDiff.visualize_counts_diff(got[1], show_image=False).shape[0] == len(got[0])


@pytest.mark.parametrize("device", ["CPU", "GPU", "ALL"])
def test_ops_diff_with_the_control(pair, device):
    from tracewise.hta import DeviceType, TraceDiff

    _, (theirs, ours), (theirs_c, ours_c) = pair
    got = _same_outcome(
        lambda: hta_diff.TraceDiff.ops_diff(theirs_c, theirs, device_type=hta_diff.DeviceType[device]),
        lambda: TraceDiff.ops_diff(ours_c, ours, device_type=DeviceType[device]),
    )
    if got is not None:
        assert got[1] == got[0]


def test_every_rank_and_iteration_of_the_control_and_test(traces):
    """The shipped diff pair, all ranks and iterations on both sides (rank 3 vs rank 1)."""
    from tracewise.hta import TraceDiff

    theirs_c, ours_c = _load(traces, CONTROL)
    theirs_t, ours_t = _load(traces, "hta-trace-diff/test")
    kw = dict(control_rank=theirs_c.ranks(), test_rank=theirs_t.ranks(),
              control_iteration=[int(i) for i in theirs_c.iterations()],
              test_iteration=[int(i) for i in theirs_t.iterations()])
    a = hta_diff.TraceDiff.compare_traces(theirs_c, theirs_t, **kw)
    b = TraceDiff.compare_traces(ours_c, ours_t, **kw)
    pd.testing.assert_frame_equal(b, a, rtol=1e-9, atol=0)


def test_frames_have_htas_args_columns(pair):
    """``get_trace`` (against HTA's ``t.get_trace``) and ``extract_ops`` (every rank, every
    iteration, several ranks at once) carry HTA's ``bytes``, ``memory_bw_gbps``,
    ``wait_on_*`` and ``input_*`` columns, equal to HTA's by value and dtype."""
    from tracewise.hta import DeviceType

    name, (theirs, ours), _ = pair
    ranks = theirs.ranks()
    for rank in ranks:
        same_arg_columns(theirs.t.get_trace(rank), ours.get_trace(rank), f"{name} get_trace({rank})")
    iterations = [int(i) for i in theirs.iterations()] or None
    got = _same_outcome(
        lambda: theirs.extract_ops(ranks, iterations, hta_diff.DeviceType.ALL),
        lambda: ours.extract_ops(ranks, iterations, DeviceType.ALL),
    )
    if got is not None:
        same_arg_columns(got[0], got[1], f"{name} extract_ops({ranks})")
