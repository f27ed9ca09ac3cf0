"""Shared fixtures: the repository's fixtures, and the real traces named by
``TRACEWISE_TRACES`` (a test that needs them says SKIPPED, with the reason, when the
variable is unset: run pytest with ``-rs`` to see the reasons)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

REPO = Path(__file__).resolve().parents[2]
TESTDATA = REPO / "testdata"


@pytest.fixture(scope="session")
def traces() -> Path:
    """The real-trace set (``TRACEWISE_TRACES``), or an explicit skip."""
    value = os.environ.get("TRACEWISE_TRACES")
    if not value:
        pytest.skip("SKIPPED: TRACEWISE_TRACES is not set; the real-trace tests did not run")
    path = Path(value).resolve()
    if not path.is_dir():
        pytest.fail(f"TRACEWISE_TRACES={value} is not a directory")
    return path


def manifest_kernels(traces: Path) -> List[Tuple[Path, int]]:
    """(trace file, kernel count) of every row of pytorch/MANIFEST.md's file table."""
    text = (traces / "pytorch" / "MANIFEST.md").read_text()
    section = text.split("\n## Files\n", 1)[1].split("\n## ", 1)[0]
    rows: List[Tuple[Path, int]] = []
    header: Dict[str, int] = {}
    for line in section.splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if "path" in cells and "kernels" in cells:
            header = {name: i for i, name in enumerate(cells)}
            continue
        if not header or re.fullmatch(r"-+", cells[0].replace(":", "")):
            continue
        # A count may carry a note after it ("8772 (cat `Kernel`)"): the number leads.
        count = re.match(r"\d+", cells[header["kernels"]].replace(",", ""))
        if count is None:
            raise ValueError(f"MANIFEST.md: {cells[header['kernels']]!r} is not a kernel count")
        rows.append((traces / "pytorch" / cells[header["path"]], int(count.group())))
    return rows


@pytest.fixture(autouse=True)
def shown_figures(monkeypatch: pytest.MonkeyPatch) -> List[Tuple[object, tuple, dict]]:
    """No test opens a browser or a window: HTA's methods and ours plot by default
    (``visualize=True``), so every plotly figure's ``show`` is replaced, for every test,
    by one that records (figure, args, kwargs) in the list this fixture returns; plotly's
    default renderer is also set to ``json`` (nothing interactive) should anything call
    ``plotly.io.show`` itself. Without plotly the list stays empty."""
    shown: List[Tuple[object, tuple, dict]] = []
    try:
        import plotly.basedatatypes
        import plotly.io
    except ImportError:
        return shown

    def record(fig: object, *args: object, **kwargs: object) -> None:
        shown.append((fig, args, kwargs))

    monkeypatch.setattr(plotly.basedatatypes.BaseFigure, "show", record)
    monkeypatch.setattr(plotly.io.renderers, "default", "json")
    return shown


@pytest.fixture
def interpreter_sigint():
    """Python's own SIGINT handler for the test, as an interactive interpreter has it.

    A process started in the background by a shell without job control inherits SIGINT
    ignored, and Python then leaves it ignored, so Ctrl-C could not interrupt anything
    there, tracewise or not. Set before the test's first call into tracewise, so a handler
    that tracewise installed later would still take the signal from it (what the tests
    that use this check)."""
    import signal

    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)
