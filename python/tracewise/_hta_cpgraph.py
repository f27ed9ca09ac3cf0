"""HTA 0.5.0's frames on a ``CPGraph`` (``full_trace_df``, ``trace_df``, ``symbol_table``)
and its ``save()``.

``full_trace_df`` is the rank's frame of the analysis (:func:`tracewise._hta_frame.analysis_frames`)
indexed by its ``index`` column, with ``cat`` and ``name`` as ids of ``symbol_table``, one
table over every rank (first appearance first, in rank order; HTA's ids come from a set and
differ between its runs, so only decoded strings can be compared). ``trace_df`` is HTA's
clipped frame: the window spans the selected instances of the annotations whose name
contains the annotation (in frame order; the whole frame for ``""``), and it keeps the CPU
events (stream -1) of positive length that start in the window, and the GPU events whose
launch is such an event, or named ``Stream Wait Event``, in index order, with the
``depth`` and ``parent`` columns of HTA's call graph over it (:func:`depth_and_parent`).

``save(out_dir)`` writes what HTA's writes: ``out_dir/trace_data.csv`` (``trace_df``, index
label ``_index_``), ``out_dir/cp_graph.pkl`` (the pickled node-link data of the graph),
``out_dir/cp_data.pkl`` (the pickled :class:`CPGraphData`: node list, path, maps) and the
zip ``out_dir.zip`` of the three, stored under their paths as given (as ``ZipFile.write``
names them). The pickles hold tracewise's ``CPNode``/``CPEdge``, which unpickle with
tracewise installed. The four files are written through output-file, together.
"""

from __future__ import annotations

import functools
import io
import os
import pickle
import zipfile
from dataclasses import dataclass
from typing import Any, Dict, List, Set, Tuple

import numpy as np
import pandas as pd

from ._hta_frame import SymbolTable


@dataclass(frozen=True)
class CPGraphData:
    """The data members of a ``CPGraph`` that ``save()`` pickles (HTA's ``_CPGraphData``)."""

    node_list: List[Any]
    critical_path_nodes: List[int]
    critical_path_events_set: Set[int]
    critical_path_edges_set: Set[Any]
    event_to_start_node_map: Dict[int, int]
    event_to_end_node_map: Dict[int, int]
    edge_to_event_map: Dict[Tuple[int, int], int]


def encoded(frames: Dict[int, pd.DataFrame]) -> Tuple[Dict[int, pd.DataFrame], SymbolTable]:
    """Every rank's frame indexed by its ``index`` column, with ``cat``/``name`` as ids of
    one symbol table (ranks in order)."""
    table = SymbolTable()
    out = {}
    for rank in sorted(frames):
        f = frames[rank].copy()
        f["cat"] = table.ids(f["cat"])
        f["name"] = table.ids(f["name"])
        # HTA's frame is labelled by its ``index``, with the dtype HTA's parser downcasts it to.
        f.index = pd.Index(pd.to_numeric(f["index"], downcast="integer").to_numpy())
        out[rank] = f
    return out, table


def clipped(full: pd.DataFrame, table: SymbolTable, annotation: str, first: int, last: int) -> pd.DataFrame:
    """HTA's clipped frame of ``full`` (see the module docs); empty where no annotation
    matches."""
    if annotation == "":
        start, end = full["ts"].min(), full["end"].max()
    else:
        ids = [i for s, i in table.index.items() if annotation in s]
        if not ids:
            return full.iloc[0:0].copy()
        ann = full[full["name"].isin(ids)]
        chosen = ann.iloc[first : last + 1]
        start, end = chosen["ts"].min(), (chosen["ts"] + chosen["dur"]).max()
    cpu = full[full["stream"].eq(-1)]
    in_window = cpu[(cpu["ts"] >= start) & (cpu["ts"] <= end) & (cpu["dur"] > 0)]
    gpu = full[full["stream"].ne(-1)]
    launch_ok = set(in_window["index_correlation"].tolist())
    wait_id = table.index.get("Stream Wait Event", -200)
    # A GPU event is kept when a CPU event in the window links to it (HTA joins the GPU
    # events to the CPU events by the CPU events' ``index_correlation``).
    linked = gpu.index.isin(list(launch_ok)) | gpu["name"].eq(wait_id).to_numpy()
    keep = in_window.index.union(gpu.index[linked])
    return full.loc[keep].copy()


_START, _END = 1, -1


def _end_order(x: Tuple[Any, ...], y: Tuple[Any, ...]) -> float:
    """HTA 0.5.0's order of two ends ``(index, time, dur, kind)`` of one thread's events
    (``hta.common.call_stack.compare_events``, read): an event's start before its end; else
    by time; at one time, two starts longer first (then smaller index), two ends shorter
    first (then larger index), a start and an end of positive lengths the end first, of
    zero lengths by index, else the start first. Negative: ``x`` first."""
    if x[0] == y[0]:
        return -1 if x[3] == _START else 1
    if x[1] != y[1]:
        return x[1] - y[1]
    if x[3] == y[3]:
        if x[2] == y[2]:
            smaller = x[0] < y[0]
            if x[3] == _START:
                return -1 if smaller else 1 if x[0] > y[0] else 0
            return 1 if smaller else -1 if x[0] > y[0] else 0
        if x[3] == _START:
            return 1 if x[2] < y[2] else -1
        return -1 if x[2] < y[2] else 1
    if x[2] > 0 and y[2] > 0:
        return 1 if x[3] == _START else -1
    if x[2] == 0 and y[2] == 0:
        return x[0] - y[0]
    return -1 if x[3] == _START else 1


def depth_and_parent(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` (a frame indexed by its ``index``) with the ``depth`` and ``parent`` columns
    of HTA 0.5.0's call graph (``hta.common.call_stack.CallGraph``, which its critical path
    analysis builds over the clipped frame, read): per (``pid``, ``tid``), a thread with
    GPU work (a stream above 0) keeps only that work, at depth -1; another thread's events
    are nested by their ends in HTA's order (:func:`_end_order`; negative lengths as 0),
    a top-level event at depth 0 with parent -1, every other at its parent's depth + 1.
    ``parent`` of an event on a stream (not -1) is its ``index_correlation``. Events left
    out (a thread's events not on a stream above 0 beside its GPU work) have NaN in both, as
    in HTA (the columns are then float64)."""
    depths: List[pd.Series] = []
    parents: Dict[Any, Any] = {}
    for _, thread in df.groupby(["pid", "tid"], sort=False):
        gpu = thread["stream"].gt(0)
        if gpu.any():
            depths.append(pd.Series(np.full(int(gpu.sum()), -1), index=thread.index[gpu.to_numpy()]))
            continue
        durs = np.maximum(thread["dur"].to_numpy(), 0)
        ends = []
        for index, ts, dur in zip(thread["index"].tolist(), thread["ts"].tolist(), durs.tolist()):
            ends.append((index, ts, dur, _START))
            ends.append((index, ts + dur, dur, _END))
        ends.sort(key=functools.cmp_to_key(_end_order))
        nodes: Dict[int, Tuple[int, int]] = {-1: (-1, -1)}
        stack: List[int] = []
        for index, _, _, kind in ends:
            if kind == _START:
                parent = stack[-1] if stack else -1
                if index not in nodes:
                    nodes[index] = (parent, nodes[parent][1] + 1)
                stack.append(index)
            elif stack:
                stack.pop()
        kept = {i: v for i, v in nodes.items() if i >= 0}
        depths.append(pd.Series({i: d for i, (_, d) in kept.items()}, dtype="int64"))
        parents.update({i: p for i, (p, _) in kept.items()})
    out = df.copy()
    out["depth"] = pd.concat(depths) if depths else pd.Series(dtype="float64")
    on_stream = out[out["stream"].ne(-1)]["index_correlation"]
    parents.update(on_stream.to_dict())
    out["parent"] = pd.Series(parents, dtype="int64" if parents else "float64")
    return out


def _arcname(path: str) -> str:
    """The name ``ZipFile.write(path)`` stores ``path`` under."""
    name = os.path.normpath(os.path.splitdrive(path)[1])
    while name[:1] in (os.sep, os.altsep) and name:
        name = name[1:]
    return name.replace(os.sep, "/")


def _node_link(graph: Any) -> Dict[str, Any]:
    """The graph's node-link data: networkx's own where the graph is a networkx graph,
    else the same layout built here."""
    try:
        import networkx as nx
    except ImportError:
        nx = None
    if nx is not None and isinstance(graph, nx.DiGraph):
        return nx.node_link_data(graph)
    nodes: List[int] = []
    for e in graph.edge_objects():
        for n in (e.begin, e.end):
            if n not in nodes:
                nodes.append(n)
    return {
        "directed": True,
        "multigraph": False,
        "graph": {},
        "nodes": [{"id": n} for n in nodes],
        "edges": [
            {"weight": max(e.weight, 0), "object": e, "source": e.begin, "target": e.end}
            for e in graph.edge_objects()
        ],
    }


def save(graph: Any, trace_df: pd.DataFrame, out_dir: str, inputs: List[str]) -> str:
    """Writes ``graph``'s saved form (see the module docs); returns the zip's path."""
    from . import _native

    data = CPGraphData(
        node_list=graph.node_list,
        critical_path_nodes=graph.critical_path_nodes,
        critical_path_events_set=graph.critical_path_events_set,
        critical_path_edges_set=graph.critical_path_edges_set,
        event_to_start_node_map=graph.event_to_start_node_map,
        event_to_end_node_map=graph.event_to_end_node_map,
        edge_to_event_map=graph.edge_to_event_map,
    )
    csv_path = os.path.join(out_dir, "trace_data.csv")
    graph_path = os.path.join(out_dir, "cp_graph.pkl")
    data_path = os.path.join(out_dir, "cp_data.pkl")
    files = [
        (csv_path, trace_df.to_csv(index=True, index_label="_index_").encode()),
        (graph_path, pickle.dumps(_node_link(graph))),
        (data_path, pickle.dumps(data)),
    ]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for path, content in files:
            z.writestr(_arcname(path), content)
    zip_path = f"{out_dir}.zip"
    files.append((zip_path, buf.getvalue()))
    _native.write_files(files, inputs)
    return zip_path
