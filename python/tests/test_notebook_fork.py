"""The notebook bench (`xtask/src/bench/notebook.py`) in one interpreter with HTA: HTA's
constructor parses in a fork-start `multiprocessing` pool, and the pool ends its idle
workers with SIGTERM. The bench's own SIGTERM handler (which stops the runs) must not be
inherited by those workers, or a worker survives `terminate()` and the constructor waits
for it forever (issue #44: `cargo xtask bench --python-package` hung 2 times in 5).

The pools here are plain `multiprocessing` pools, as HTA 0.5.0 makes them
(`get_context("fork").Pool(n)` in a `with`, `map` with `chunksize=1`): the hang needs no
trace and no HTA, and without the fix it comes within the first few pools (every one of 3
tries hung; with the fix the 20 pools take about 0.3 s)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "xtask" / "src" / "bench" / "notebook.py"

# Runs in a child interpreter: the handler under test must not touch pytest's process.
SCRIPT = textwrap.dedent(
    """
    import multiprocessing as mp, os, runpy, signal, sys

    notebook = runpy.run_path(sys.argv[1], run_name="notebook_under_test")
    stop = notebook["stop_on_sigterm"]()

    def square(x):
        return x * x

    for _ in range(20):
        with mp.get_context("fork").Pool(2) as pool:
            assert pool.map(square, range(8), chunksize=1) == [x * x for x in range(8)]

    # The bench itself still stops on SIGTERM: the handler is kept in this process.
    os.kill(os.getpid(), signal.SIGTERM)
    assert stop == [True], stop
    print("POOLS DONE")
    """
)


def test_forked_pool_workers_end_on_terminate() -> None:
    assert NOTEBOOK.is_file(), NOTEBOOK
    # Its own session, so that a hung run's pool workers are ended with it.
    child = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(NOTEBOOK)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = child.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        pytest.fail(
            "20 fork-start pools under notebook.py's SIGTERM handler did not finish in 60 s: "
            "a pool worker inherited the handler and survived terminate() (issue #44)"
        )
    assert child.returncode == 0, err
    assert "POOLS DONE" in out
