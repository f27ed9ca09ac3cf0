"""HTA 0.5.0's parsed trace frame of one rank, built from tracewise's loaded events.

HTA's parser keeps every event with a duration and a category but the ``Trace`` span; a
GPU event is one on a stream (``args.stream`` ≥ 0) with a correlation (or an ``Event
Sync``/``Context Sync``), every other event is a CPU event; ``index_correlation`` links a
CPU launch and its GPU activity by their shared correlation id; a CPU event's
``iteration`` is the ``ProfilerStep#N`` whose span holds its start (the last such step in
file order), a GPU event's is its launch's, and -1 where there is none. Timestamps are µs;
on a trace with fractional-µs timestamps each start is rounded up and each end down, as
HTA does. ``cat`` and ``name`` are ids of a symbol table (first appearance first); HTA's
ids come from a set and differ from run to run, so only the decoded strings are compared.

Used by ``TraceDiff``/``LabeledTrace`` and the per-operator methods of ``TraceAnalysis``.
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Tuple

import numpy as np
import pandas as pd

_STEP = re.compile(r"ProfilerStep\s*#\s*(\d+)")
_SYNC_NAMES = ("Event Sync", "Context Sync")


class SymbolTable:
    """Ids for the ``cat`` and ``name`` strings of a set of frames, first appearance first."""

    def __init__(self) -> None:
        self.table: List[str] = []
        self.index: Dict[str, int] = {}

    def ids(self, values: pd.Series) -> pd.Series:
        """The id of each string of ``values``, adding new strings to the table."""
        for s in pd.unique(values):
            if s not in self.index:
                self.index[s] = len(self.table)
                self.table.append(s)
        return values.map(self.index).astype("int64")

    # HTA's ``TraceSymbolTable`` accessors, for a user's function that is handed this table
    # as HTA hands it its own (``get_potential_stragglers``' ``straggler_identification_impl``).

    def get_sym_table(self) -> List[str]:
        """The strings, by id (HTA's ``TraceSymbolTable.get_sym_table``)."""
        return list(self.table)

    def get_sym_id_map(self) -> Dict[str, int]:
        """The id of each string (HTA's ``TraceSymbolTable.get_sym_id_map``)."""
        return dict(self.index)

    def get_sym_index(self) -> Dict[str, int]:
        """The id of each string (HTA's ``TraceSymbolTable.get_sym_index``)."""
        return dict(self.index)

    def find_matches(self, patterns: List[str]) -> List[int]:
        """The ids of the strings that contain any of ``patterns`` (HTA's
        ``TraceSymbolTable.find_matches``)."""
        return [i for i, s in enumerate(self.table) if any(p in s for p in patterns)]

    def find_matched_symbols(self, patterns: List[str]) -> List[str]:
        """The strings that contain any of ``patterns`` (HTA's
        ``TraceSymbolTable.find_matched_symbols``)."""
        return [s for s in self.table if any(p in s for p in patterns)]

    def get_symbol_names(self, symbol_ids: List[int]) -> Dict[int, str]:
        """The string of each id of ``symbol_ids`` that the table has (HTA's
        ``TraceSymbolTable.get_symbol_names``)."""
        return {i: self.table[i] for i in symbol_ids if 0 <= i < len(self.table)}

    def get_sym_table_series(self) -> pd.Series:
        """The strings as a series indexed by id."""
        return pd.Series(self.table)

    def get_sym_index_series(self) -> pd.Series:
        """The ids as a series indexed by string."""
        return pd.Series(self.index)


def _by_value(values: pd.Series, f: Any) -> pd.Series:
    """``values`` mapped by ``f`` once per distinct value, as an object column."""
    table = {v: f(v) for v in pd.unique(values)}
    return values.map(table).astype(object)


def _ints(values: pd.Series, f: Any) -> pd.Series:
    """An int64 column: a float column's whole numbers (null as -1), else ``f`` of each
    distinct value."""
    if values.dtype.kind == "f":
        return values.fillna(-1).astype("int64")
    if values.dtype.kind == "i":
        return values.astype("int64")
    table = {v: f(v) for v in pd.unique(values)}
    return pd.Series([table[v] for v in values], index=values.index, dtype="int64")


def _json_id(v: object) -> object:
    """A ``pid``/``tid`` as the JSON held it: the loader gives strings; integers are ints."""
    if isinstance(v, str) and v.lstrip("-").isdigit():
        return int(v)
    return v


def _stream(v: object) -> int:
    """HTA's stream number: the integer of ``args.stream``, else -1."""
    try:
        if v is None or (isinstance(v, float) and np.isnan(v)):
            return -1
        return int(v)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return -1


def events_frame(path: str, fractional: bool) -> pd.DataFrame:
    """The events HTA's parser keeps from the trace file ``path``, in file order, with
    decoded ``cat``/``name`` strings: ``index`` (the place in ``traceEvents``, as HTA's),
    ``cat``, ``name``, ``pid``, ``tid``, ``ts``,
    ``dur``, ``stream``, ``correlation``, ``external_id``, ``index_correlation``,
    ``iteration``, ``end``."""
    from . import load

    capture = load(path)
    present = set(capture.events().columns)
    wanted = {"args_stream": "stream", "args_correlation": "correlation", "args_External id": "ext"}
    picks = ", ".join(
        f'"{col}" AS {alias}' if col in present else f"NULL AS {alias}" for col, alias in wanted.items()
    )
    ev = capture.sql(
        f"SELECT event_index, name, cat, pid, tid, ts_ns, dur_ns, {picks} FROM events "
        "WHERE dur_ns IS NOT NULL AND cat IS NOT NULL AND cat <> 'Trace' ORDER BY event_index"
    ).to_pandas()
    ts_ns = ev["ts_ns"].astype("int64")
    end_ns = ts_ns + ev["dur_ns"].astype("int64")
    if fractional:
        ts = -((-ts_ns) // 1000)
        end = end_ns // 1000
    else:
        ts = ts_ns // 1000
        end = end_ns // 1000
    stream = _ints(ev["stream"], _stream)
    corr = _ints(ev["correlation"], lambda v: -1 if v is None or v != v else int(v))
    ext = _ints(ev["ext"], lambda v: -1 if v is None or v != v else int(v))
    df = pd.DataFrame(
        {
            "index": np.arange(len(ev), dtype="int64"),
            "cat": ev["cat"].astype(object),
            "name": ev["name"].astype(object),
            "pid": _by_value(ev["pid"], _json_id),
            "tid": _by_value(ev["tid"], _json_id),
            "ts": ts.astype("int64"),
            "dur": (end - ts).astype("float64"),
            "stream": stream,
            "correlation": corr,
            "external_id": ext,
        }
    )
    gpu = gpu_mask(df)
    # index_correlation: -1 without a correlation, else 0 until linked.
    ic = np.minimum(df["correlation"].to_numpy(), 0)
    linked = df[df["correlation"] != -1]
    on_cpu = linked[~gpu[linked.index]][["index", "correlation"]]
    on_gpu = linked[gpu[linked.index]][["index", "correlation"]]
    merged = on_cpu.merge(on_gpu, on="correlation", how="inner")
    ic[merged["index_x"].to_numpy()] = merged["index_y"].to_numpy()
    ic[merged["index_y"].to_numpy()] = merged["index_x"].to_numpy()
    df["index_correlation"] = ic
    df["iteration"] = _iterations(df)
    df["end"] = df["ts"] + df["dur"]
    # HTA numbers the events by their place in ``traceEvents`` before it drops those
    # without a duration or a category: the loader's event index. The links above were
    # made by row; they become event indices too (0, unlinked, and -1 stay).
    event_index = ev["event_index"].to_numpy().astype("int64")
    df["index"] = event_index
    df["index_correlation"] = np.where(ic > 0, event_index[np.maximum(ic, 0)], ic)
    return df


ARG_COLUMNS: List[Tuple[str, str, str, Any]] = [
    ("bytes", "bytes", "int", -1),
    ("memory_bw_gbps", "memory bandwidth (GB/s)", "float", 0.0),
    ("wait_on_stream", "wait_on_stream", "int", -1),
    ("wait_on_cuda_event_record_corr_id", "wait_on_cuda_event_record_corr_id", "int", -1),
    ("input_dims", "Input Dims", "object", "-1"),
    ("input_type", "Input type", "object", "-1"),
    ("input_strides", "Input Strides", "object", "-1"),
]
"""HTA 0.5.0's default ``args`` columns beyond ``stream``, ``correlation`` and
``external_id`` (its parser config's bandwidth, sync and input-shape args), in HTA's
column order: (column, ``args`` key, kind, HTA's value for an event without the key)."""


def _json_value(text: Any) -> Any:
    """An ``args`` value that the loader kept as text: an array or object parsed back to
    Python (as ``json.load`` gives it to HTA), any other text as it is."""
    if isinstance(text, str) and text[:1] in ("[", "{"):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def arg_columns(path: str) -> pd.DataFrame:
    """HTA's default ``args`` columns (:data:`ARG_COLUMNS`) of every event its parser keeps
    from the trace file ``path``, indexed by the event's index in ``traceEvents``: the
    value of the ``args`` key, HTA's default where the event has none (a JSON ``null`` reads
    as none too); integer columns downcast over all these events as HTA's parser downcasts
    them, arrays as Python lists. Built only where a frame that shows them is asked for."""
    from . import load

    capture = load(path)
    present = set(capture.events().columns)
    picks = ", ".join(
        f'"args_{key}" AS c{i}' if f"args_{key}" in present else f"NULL AS c{i}"
        for i, (_, key, _, _) in enumerate(ARG_COLUMNS)
    )
    ev = capture.sql(
        f"SELECT event_index, {picks} FROM events "
        "WHERE dur_ns IS NOT NULL AND cat IS NOT NULL AND cat <> 'Trace' ORDER BY event_index"
    ).to_pandas()
    out: Dict[str, Any] = {}
    for i, (name, _, kind, default) in enumerate(ARG_COLUMNS):
        s = ev[f"c{i}"]
        numeric = s.dtype.kind in "iuf"
        if kind == "int" and (numeric or s.isna().all()):
            filled = pd.to_numeric(s, errors="coerce").fillna(default)
            if (filled % 1 == 0).all():
                out[name] = pd.to_numeric(filled.astype("int64"), downcast="integer").to_numpy()
            else:
                out[name] = filled.astype("float64").to_numpy()
        elif kind == "float" and (numeric or s.isna().all()):
            out[name] = pd.to_numeric(s, errors="coerce").fillna(default).astype("float64").to_numpy()
        else:
            values = [default if v is None or (isinstance(v, float) and v != v) else _json_value(v) for v in s]
            out[name] = pd.Series(values, dtype=object).to_numpy()
    return pd.DataFrame(out, index=pd.Index(ev["event_index"].to_numpy().astype("int64")))


def with_args(frame: pd.DataFrame, args: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (with an ``index`` column of event indices) with the columns of ``args``
    (:func:`arg_columns` of its file) inserted after ``correlation``, where HTA's frame has
    them; a new frame."""
    picked = args.reindex(frame["index"].to_numpy())
    out = frame.copy()
    at = list(out.columns).index("correlation") + 1
    for i, (name, _, _, default) in enumerate(ARG_COLUMNS):
        values = picked[name]
        if values.isna().any():  # an event the args were not read for: HTA's default
            values = values.astype(object).where(values.notna(), default)
        out.insert(at + i, name, values.to_numpy())
    return out


def gpu_mask(df: pd.DataFrame) -> pd.Series:
    """HTA's GPU events: on a stream with a correlation, or a device sync; the rest are CPU
    events."""
    return ((df["stream"] >= 0) & (df["correlation"] >= 0)) | df["name"].isin(_SYNC_NAMES)


def analysis_frames(
    rank_files: List[Tuple[int, str]], fractional: Dict[int, bool], include_last_profiler_step: bool
) -> Dict[int, pd.DataFrame]:
    """The frames of HTA's ``TraceAnalysis``: every rank's parsed frame with ``ts`` aligned
    to the earliest start over the ranks (``end`` is left unaligned, as HTA leaves it), and,
    with two or more ``ProfilerStep`` names over the ranks, only the CPU events that start
    before the last step starts (with ``include_last_profiler_step``: at or before the
    latest step end) and the GPU events of their correlation ids, GPU events first."""
    frames = {r: events_frame(p, fractional[r]) for r, p in rank_files}
    starts = [f["ts"].min() for f in frames.values() if len(f)]
    origin = min(starts) if starts else 0
    names: set = set()
    for f in frames.values():
        f["ts"] = f["ts"] - origin
        names.update(n for n in pd.unique(f["name"]) if "ProfilerStep" in n)
    if len(names) < 2:
        return frames
    out = {}
    for r, f in frames.items():
        gpu = gpu_mask(f)
        cpu = f[~gpu]
        steps = cpu[cpu["name"].isin(names)]
        if include_last_profiler_step:
            cpu = cpu[cpu["ts"] <= steps["end"].max()]
        else:
            cpu = cpu[cpu["ts"] < steps["ts"].max()]
        kept = f[gpu].merge(cpu["correlation"], on="correlation", how="inner")
        out[r] = pd.concat([kept, cpu], axis=0)
    return out


def _iterations(df: pd.DataFrame) -> pd.Series:
    """HTA's ``iteration`` column: CPU events (stream < 0) take the last ``ProfilerStep``
    (in file order) whose ``[ts, ts + dur)`` holds their start; GPU events (stream > 0) their
    linked event's; -1 where none; events on stream 0 have none (NaN), as in HTA."""
    it = np.full(len(df), np.nan)
    cpu = (df["stream"] < 0).to_numpy()
    it[cpu] = -1
    ts = df["ts"].to_numpy()
    step_names = [n for n in pd.unique(df["name"]) if n.startswith("ProfilerStep")]
    steps = df[df["name"].isin(step_names)]
    for _, s in steps.iterrows():
        m = _STEP.match(s["name"])
        if m is None:
            continue
        inside = cpu & (ts >= s["ts"]) & (ts < s["ts"] + s["dur"])
        it[inside] = int(m.group(1))
    gpu = (df["stream"] > 0).to_numpy()
    ic = df["index_correlation"].to_numpy()
    link = gpu & (ic > 0)
    it[gpu] = -1
    it[link] = it[ic[link]]
    out = pd.Series(it, index=df.index)
    if not np.isnan(it).any():
        out = pd.to_numeric(out.astype("int64"), downcast="integer")
    return out


def rank_files(trace_dir: str) -> List[Tuple[int, str]]:
    """(rank, file) of every trace file of ``trace_dir``, as ``TraceAnalysis`` reads them."""
    from . import _native

    t = _native.HtaTrace(trace_dir, False)
    return sorted((int(r), p) for r, p in t.files())


def fractional(trace_dir: str) -> Dict[int, bool]:
    """Whether each rank's file has fractional-µs timestamps."""
    from . import _native

    t = _native.HtaTrace(trace_dir, False)
    return {int(r): bool(t.fractional(int(r))) for r, _ in t.files()}
