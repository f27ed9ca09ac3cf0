"""load(): frames through the Arrow PyCapsule interface, SQL, and errors."""

from __future__ import annotations

import os
import signal
import threading
import time

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import tracewise
from conftest import TESTDATA, manifest_kernels

TINY = TESTDATA / "chrome" / "ok" / "tiny-train" / "rank0.pt.trace.json"


def test_frames_reach_polars_pyarrow_and_pandas():
    cap = tracewise.load(TINY)
    events = cap.events()
    assert events.num_rows > 0 and len(events) == events.num_rows
    for col in ["name", "cat", "ph", "ts", "dur", "pid", "tid", "ts_ns", "dur_ns", "rank"]:
        assert col in events.columns
    via_polars = pl.DataFrame(events)
    via_arrow = pa.table(events)
    via_pandas = events.to_pandas()
    assert via_polars.height == via_arrow.num_rows == len(via_pandas) == events.num_rows
    assert via_polars.columns == via_arrow.column_names == list(via_pandas.columns)
    assert via_polars["ts_ns"].dtype == pl.Int64
    # The same values through every consumer.
    assert via_polars["ts_ns"].to_list() == via_arrow.column("ts_ns").to_pylist()
    assert via_pandas["ts_ns"].tolist() == via_polars["ts_ns"].to_list()
    # A capsule can be taken more than once; each is a fresh stream.
    assert pl.DataFrame(events).height == events.num_rows


def test_kernels_and_launches_are_the_sql_views():
    cap = tracewise.load(TINY)
    k = cap.kernels().to_polars()
    assert k.height > 0 and set(k["cat"].unique()) == {"kernel"}
    n = cap.sql("SELECT COUNT(*) AS n FROM kernels").to_polars()["n"][0]
    assert k.height == n
    launches = cap.launches().to_polars()
    assert set(launches["cat"].unique()) <= {"cuda_runtime", "cuda_driver"}
    assert cap.to_polars().height == cap.events().num_rows
    assert isinstance(cap.to_pandas(), pd.DataFrame)


def test_sql_is_confined_and_errors_are_sql_errors():
    cap = tracewise.load(TINY)
    for q in ["SELECT * FROM read_parquet('/etc/passwd')", "DROP TABLE events", "SELECT * FROM nope"]:
        with pytest.raises(tracewise.SqlError):
            cap.sql(q)


@pytest.mark.parametrize(
    "name",
    sorted(
        p.name
        for p in (TESTDATA / "chrome" / "err").iterdir()
        if p.suffix in (".json", ".gz")
    ),
)
def test_malformed_chrome_traces_raise_trace_errors_naming_the_file(name):
    path = TESTDATA / "chrome" / "err" / name
    with pytest.raises(tracewise.TraceError) as err:
        tracewise.load(path)
    assert name in str(err.value)
    assert err.value.path == str(path)
    assert isinstance(err.value, (tracewise.TraceFormatError, tracewise.TraceIOError))


def test_malformed_inputs_of_other_formats_name_the_place():
    with pytest.raises(tracewise.TraceFormatError, match=r"truncated.xplane.pb: .*byte"):
        tracewise.load(TESTDATA / "xplane" / "err" / "truncated.xplane.pb")
    with pytest.raises(tracewise.TraceFormatError, match=r"invalid_json.json: invalid JSON at byte \d+"):
        tracewise.load(TESTDATA / "chrome" / "err" / "invalid_json.json")
    with pytest.raises(tracewise.TraceIOError, match="no-such-file.json"):
        tracewise.load(TESTDATA / "no-such-file.json")
    with pytest.raises(tracewise.TraceError, match="README.md"):
        tracewise.load(TESTDATA / "chrome" / "err" / "README.md")


def test_a_panic_becomes_internal_error_and_the_interpreter_lives_on():
    with pytest.raises(tracewise.InternalError, match="on purpose"):
        tracewise._native._panic_for_test()
    assert tracewise.load(TINY).events().num_rows > 0


def test_ctrl_c_interrupts_a_long_call(interpreter_sigint):
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        tracewise._native._sleep_for_test(30.0)
    assert time.monotonic() - start < 5.0


def test_kernels_have_one_row_per_kernel_of_the_manifest(traces):
    rows = manifest_kernels(traces)
    assert len(rows) >= 25, f"{len(rows)} rows in pytorch/MANIFEST.md"
    for path, kernels in rows:
        got = tracewise.load(path).kernels().num_rows
        assert got == kernels, f"{path}: {got} kernels, MANIFEST {kernels}"
