"""investigate() and the other tools' results, as Python objects."""

from __future__ import annotations

import json
import os
import runpy
from pathlib import Path

import pytest

import tracewise
from conftest import REPO, TESTDATA

TINY = TESTDATA / "chrome" / "ok" / "tiny-train" / "rank0.pt.trace.json"


def test_investigate_returns_the_report_json_value_and_shows_inline():
    inv = tracewise.investigate(TINY)
    assert inv["schema"] == 6
    assert inv["captures"] and inv["advice"]
    html = inv._repr_html_()
    assert html.startswith("<!DOCTYPE html>") or "<html" in html[:200]
    assert "<svg" in html, "the swimlanes are inline SVG"
    assert inv.out is None


def test_investigate_writes_the_report_directory_like_the_tool(tmp_path):
    out = tmp_path / "report"
    inv = tracewise.investigate(TINY, out)
    for name in ["report.md", "report.html", "report.json", "rows.csv", ".tracewise-output"]:
        assert (out / name).is_file(), name
    # report.json on disk is the value returned.
    assert json.loads((out / "report.json").read_text()) == dict(inv)
    # An existing report is replaced only when asked.
    with pytest.raises(tracewise.OutputError, match="overwrite"):
        tracewise.investigate(TINY, out)
    tracewise.investigate(TINY, out, overwrite=True)
    # Never the capture's own directory.
    with pytest.raises(tracewise.OutputError):
        tracewise.investigate(TINY, TINY.parent, overwrite=True)


def test_investigate_of_a_bad_file_is_a_trace_error():
    with pytest.raises(tracewise.TraceFormatError, match="invalid_json.json"):
        tracewise.investigate(TESTDATA / "chrome" / "err" / "invalid_json.json")
    with pytest.raises(tracewise.TraceError, match="no step 12345"):
        tracewise.investigate(TINY, step=12345)


def test_skip_stats_roofline_attribution_and_compare():
    s = tracewise.skip_stats(TINY)
    assert s["reports"] and "verdict" in json.dumps(s)
    r = tracewise.roofline(TESTDATA / "roofline" / "kineto_shapes.json")
    assert r["ops"], "ops with shapes are costed"
    a = tracewise.attribute_kernels(TESTDATA / "attribution" / "synth.xplane.pb")
    assert a["kernels"] > 0
    kernels = a.table("kernels")
    assert len(kernels) == a["kernels"]
    c = tracewise.compare(TINY, TINY)
    assert c["schema"] == 1 and c["sections"]


def test_the_notebook_example_runs(tmp_path, monkeypatch):
    """python/examples/quickstart.py, cell by cell as a notebook would run it."""
    traces = os.environ.get("TRACEWISE_TRACES")
    if traces:
        monkeypatch.setenv("TRACEWISE_TRACES", str(Path(traces).resolve()))
    monkeypatch.chdir(tmp_path)
    ns = runpy.run_path(str(REPO / "python" / "examples" / "quickstart.py"), run_name="__main__")
    assert ns["kernels"].height > 0
    assert ns["top"].height > 0
    assert "<svg" in ns["report"]._repr_html_()


def test_ctrl_c_still_interrupts_after_a_report_was_written(tmp_path, interpreter_sigint):
    """Writing a report must not take SIGINT from the interpreter (output-file's cleanup
    handler would end the process on Ctrl-C)."""
    import signal
    import threading
    import time

    tracewise.investigate(TINY, tmp_path / "r")
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        tracewise._native._sleep_for_test(30.0)
    assert time.monotonic() - start < 5.0
