"""tracewise: GPU profiler captures at Rust speed.

Reads PyTorch/Kineto Chrome traces, JAX ``*.trace.json.gz`` and ``*.xplane.pb``, Nsight
Systems SQLite exports and rocprof captures with the workspace's one loader, and gives:

* :func:`load` -- a :class:`Capture` whose :meth:`~Capture.events`,
  :meth:`~Capture.kernels` and :meth:`~Capture.launches` are :class:`Frame` objects
  implementing the Arrow PyCapsule interface (``__arrow_c_stream__``), so
  ``polars.DataFrame(f)``, ``pyarrow.table(f)`` and pandas (through pyarrow) take them
  without copying the columns; :meth:`~Capture.sql` runs SQL over the trace's tables.
* :func:`investigate` -- the whole investigation (the ``report.json`` value), shown inline
  in notebooks; :func:`skip_stats`, :func:`roofline`, :func:`attribute_kernels`,
  :func:`compare` -- the other tools' results as plain Python objects.
* :mod:`tracewise.hta` -- Holistic Trace Analysis' ``TraceAnalysis`` as a drop-in.

Every error is a :class:`TraceError` (a subclass says which kind) naming the file and the
place in it; a long call is interrupted by Ctrl-C (``KeyboardInterrupt``).
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Tuple, Union

from . import _native
from ._native import (
    AnalysisError,
    InternalError,
    OutputError,
    SqlError,
    TraceError,
    TraceFormatError,
    TraceIOError,
    UnknownFormatError,
)

__all__ = [
    "AnalysisError",
    "Attribution",
    "Capture",
    "Frame",
    "InternalError",
    "Investigation",
    "OutputError",
    "SqlError",
    "TraceError",
    "TraceFormatError",
    "TraceIOError",
    "UnknownFormatError",
    "attribute_kernels",
    "compare",
    "investigate",
    "load",
    "roofline",
    "skip_stats",
]

PathLike = Union[str, "os.PathLike[str]"]


def _path(path: PathLike) -> str:
    return os.fspath(path)


class Frame:
    """A table of a capture, handed over through the Arrow PyCapsule interface.

    ``polars.DataFrame(frame)``, ``pyarrow.table(frame)`` or
    ``pyarrow.table(frame).to_pandas()`` read it; :meth:`to_polars` and :meth:`to_pandas`
    do that for you (importing polars or pandas only when called).
    """

    __slots__ = ("_table",)

    def __init__(self, table: "_native.Table") -> None:
        self._table = table

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The frame as an ``arrow_array_stream`` PyCapsule (the columns are shared, not copied)."""
        return self._table.__arrow_c_stream__(requested_schema)

    @property
    def num_rows(self) -> int:
        """Rows of the frame."""
        return self._table.num_rows

    @property
    def columns(self) -> List[str]:
        """Column names, in order."""
        return self._table.columns

    def __len__(self) -> int:
        return self._table.num_rows

    def __repr__(self) -> str:
        cols = ", ".join(self.columns[:8]) + (", ..." if len(self.columns) > 8 else "")
        return f"<tracewise.Frame {self.num_rows} rows: {cols}>"

    def to_polars(self) -> Any:
        """The frame as a ``polars.DataFrame`` (imports polars)."""
        import polars as pl

        return pl.DataFrame(self)

    def to_arrow(self) -> Any:
        """The frame as a ``pyarrow.Table`` (imports pyarrow)."""
        import pyarrow as pa

        return pa.table(self)

    def to_pandas(self) -> Any:
        """The frame as a ``pandas.DataFrame``, through pyarrow (imports both)."""
        return self.to_arrow().to_pandas()


class Capture:
    """Every rank of a capture, loaded: a trace file, a directory of rank traces, or any
    format the loader reads (converted to Kineto-shaped events).

    The events frame has one row per event: ``name``, ``cat``, ``ph``, ``ts``, ``dur``
    (µs), ``pid``, ``tid``, ``id``, ``ts_ns``, ``dur_ns`` (integer ns), ``event_index``,
    ``rank``, and one ``args_<key>`` column per args key.
    """

    __slots__ = ("_capture",)

    def __init__(self, capture: "_native.Capture") -> None:
        self._capture = capture

    @property
    def path(self) -> str:
        """The path given to :func:`load`."""
        return self._capture.path

    @property
    def files(self) -> List[Tuple[Optional[int], str]]:
        """``(rank, file)`` of each trace file, sorted by rank (None when unknown)."""
        return self._capture.files

    def events(self) -> Frame:
        """Every event of every rank."""
        return Frame(self._capture.events())

    def kernels(self) -> Frame:
        """The GPU kernels (``cat`` ``kernel``, or ``Kernel`` of older Kineto traces), one row per kernel."""
        return Frame(self._capture.kernels())

    def launches(self) -> Frame:
        """The CUDA runtime and driver calls (``cat`` ``cuda_runtime`` or ``cuda_driver``)."""
        return Frame(self._capture.launches())

    def sql(self, query: str) -> Frame:
        """Runs one SQL ``SELECT`` (polars SQL) over the tables ``events``, ``kernels`` and
        ``launches``; anything else (other tables, files, several statements) raises
        :class:`SqlError`."""
        return Frame(self._capture.sql(query))

    def to_polars(self) -> Any:
        """The events as a ``polars.DataFrame``."""
        return self.events().to_polars()

    def to_pandas(self) -> Any:
        """The events as a ``pandas.DataFrame``."""
        return self.events().to_pandas()

    def __repr__(self) -> str:
        return f"<tracewise.Capture {self.path!r}: {len(self.files)} file(s)>"


def load(path: PathLike) -> Capture:
    """Loads a capture (every format the loader reads) as frames.

    Raises :class:`TraceError` (a subclass) naming the file and the place when it cannot
    be read.
    """
    return Capture(_native.load(_path(path)))


class Investigation(dict):
    """The investigation of a capture: the ``report.json`` value (the serialised
    ``Investigation``, schema 6, ``docs/report-json.md``) as Python objects. In Jupyter it shows as the HTML report
    with its swimlanes (:meth:`_repr_html_`)."""

    def __init__(self, value: Dict[str, Any], html: str, out: Optional[str]) -> None:
        super().__init__(value)
        self.html = html
        """The self-contained HTML report (``report.html``)."""
        self.out = out
        """The report directory written, when ``out`` was given."""

    def _repr_html_(self) -> str:
        return self.html


def investigate(
    path: PathLike,
    out: Optional[PathLike] = None,
    *,
    overwrite: bool = False,
    step: Optional[int] = None,
) -> Investigation:
    """Runs the whole investigation of a capture (what ``investigate CAPTURE`` does).

    With ``out``, the report directory (report.md, report.html, report.json, rows.csv and
    the tables' CSVs) is written there as the tool writes it: staged and renamed into
    place; an existing directory is replaced only when a tracewise tool wrote it and
    ``overwrite`` is true. ``step`` picks the step drawn in the swimlanes (default: the
    median).
    """
    out_s = _path(out) if out is not None else None
    text, html = _native.investigate(_path(path), out_s, overwrite, step)
    return Investigation(json.loads(text), html, out_s)


def skip_stats(path: PathLike) -> Dict[str, Any]:
    """skip-stats' analysis (verdict, per-stream budgets, host work during GPU idle, SKIP
    metrics) of a capture or directory of ranks, as ``skip-stats --json`` prints it."""
    return json.loads(_native.skip_stats(_path(path)))


def roofline(path: PathLike) -> Dict[str, Any]:
    """The roofline of a capture's ops with shapes (FLOPs, bytes, intensity, the peak of
    the op's dtype, with its source), as a dict; ``ops`` is its list of rows."""
    return json.loads(_native.roofline(_path(path)))


class Attribution(dict):
    """Kernel attribution (``attribute-kernels``): the summary as a dict, and the files
    the tool writes (``kernels.csv``, ``ops.csv``, ``lines.csv``, ``how.csv``, ...) in
    :attr:`files`; :meth:`table` reads one of them into pandas."""

    def __init__(self, summary: Dict[str, Any], files: Dict[str, str]) -> None:
        super().__init__(summary)
        self.files = files
        """File name -> text, as the tool writes them."""

    def table(self, name: str = "kernels") -> Any:
        """``<name>.csv`` as a ``pandas.DataFrame`` (imports pandas)."""
        import io

        import pandas as pd

        return pd.read_csv(io.StringIO(self.files[f"{name}.csv"]))


def attribute_kernels(path: PathLike) -> Attribution:
    """Every GPU kernel to its HLO instruction and Python line (XSpace) or to its CPU op
    and Python frame (Kineto), with its match kind."""
    summary, files = _native.attribute_kernels(_path(path))
    return Attribution(json.loads(summary), dict(files))


def compare(before: PathLike, after: PathLike) -> Dict[str, Any]:
    """Before/after comparison of two captures (or ``report.json`` files) of the same
    job, as the report JSON that ``compare --json`` writes."""
    return json.loads(_native.compare(_path(before), _path(after)))
