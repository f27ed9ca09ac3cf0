"""HTA 0.5.0's critical-path graph objects (``hta.analyzers.critical_path_analysis``):
``CPNode``, ``CPEdge``, ``CPEdgeType`` and ``CPGraph``, the result of
``TraceAnalysis.critical_path_analysis``, over the native graph
(``trace_frame::critical_path_graph``). ``tracewise.hta`` re-exports them."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

import pandas as pd

from . import _hta_cpgraph, _hta_diff


@dataclass
class CPNode:
    """A node of a :class:`CPGraph` (HTA's ``CPNode``): the start or the end of an event,
    ``ev_idx`` its position in the trace's ``traceEvents``, ``ts`` in µs from HTA's origin."""

    idx: int = -1
    ev_idx: int = -1
    ts: float = 0
    is_start: bool = False
    is_blocking: bool = False

    def __repr__(self) -> str:
        return (
            f"CPNode(event: {self.ev_idx}, node_id={self.idx}, ts={self.ts}, "
            f"is_start={self.is_start}, is_blocking={self.is_blocking})"
        )


class CPEdgeType(Enum):
    """What an edge of a :class:`CPGraph` stands for (HTA's ``CPEdgeType`` values)."""

    OPERATOR_KERNEL = "critical_path_operator"
    DEPENDENCY = "critical_path_dependency"
    KERNEL_LAUNCH_DELAY = "critical_path_kernel_launch_delay"
    KERNEL_KERNEL_DELAY = "critical_path_kernel_kernel_delay"
    SYNC_DEPENDENCY = "critical_path_sync_dependency"


_EDGE_TYPES = {t.value: t for t in CPEdgeType}

DEFAULT_EDGE_TYPES_IN_VIZ = {
    CPEdgeType.DEPENDENCY,
    CPEdgeType.KERNEL_LAUNCH_DELAY,
    CPEdgeType.SYNC_DEPENDENCY,
}
"""The edge types ``overlay_critical_path_analysis`` draws by default (HTA's)."""


@dataclass(frozen=True)
class CPEdge:
    """An edge of a :class:`CPGraph` (HTA's ``CPEdge``): node ids, weight in µs, type."""

    begin: int
    end: int
    weight: float = 0
    type: CPEdgeType = CPEdgeType.OPERATOR_KERNEL


def _bound_by(edge_type: str, stream: float, s_name: Any) -> str:
    """HTA's ``bound_by`` of a critical-path edge."""
    if edge_type == CPEdgeType.KERNEL_KERNEL_DELAY.value:
        return "gpu_kernel_kernel_overhead"
    if edge_type == CPEdgeType.KERNEL_LAUNCH_DELAY.value:
        return "gpu_kernel_launch_overhead"
    if edge_type in (CPEdgeType.DEPENDENCY.value, CPEdgeType.SYNC_DEPENDENCY.value):
        return ""
    if stream < 0:
        return "cpu_bound"
    if "ncclKernel" in s_name or "ncclDevKernel" in s_name:
        return "gpu_communication_bound"
    return "gpu_compute_bound"


class CPGraph:
    """HTA's ``CPGraph``: the critical-path graph of one rank's step, built natively
    (``trace_frame::critical_path_graph``). Nodes are ids into :attr:`node_list`
    (:class:`CPNode`), numbered as HTA numbers them (by time, starts first); edges are
    :class:`CPEdge`. With networkx installed (HTA's dependency; tracewise does not
    require it) the object is also a ``networkx.DiGraph`` holding the same nodes and
    edges (attributes ``weight`` and ``object``), as HTA's is. HTA's frames
    (``trace_df``, ``full_trace_df``, ``symbol_table``) are built on first use, and
    ``save()`` writes HTA's files (``tracewise._hta_cpgraph``).

    The Python objects are made when first used: the node and edge objects, the lookups,
    the events' names, and the networkx storage (filled on the first access to the
    graph's nodes or edges). The longest path is found natively, as networkx's
    ``dag_longest_path`` finds it over this graph (``CriticalPathGraph::networkx_path``:
    the same path, ties included)."""

    def __init__(self, rank: int, native: Any, events: Callable[[], Dict[int, Tuple[str, str, Any, Any, int]]]) -> None:
        self.rank = rank
        if isinstance(native, tuple):  # (nodes, edges, path) as lists
            nodes, edges, path = native
            self.__dict__["_raw_nodes"] = nodes
            self.__dict__["_raw_edges"] = edges
            self._native = None
        else:  # the graph held natively (``_native.critical_path_data``)
            path = native.path()
            self._native = native
        self._events_of = events
        self._native_path: Optional[Tuple[List[int], List[int]]] = path
        self._edge_at: Dict[int, CPEdge] = {}
        self.critical_path_nodes: List[int] = []
        self.critical_path_events_set: Set[int] = set()
        self._path_edges: List[int] = []  # positions in the native edges

    # --- made on first use -----------------------------------------------------------

    @functools.cached_property
    def _raw_nodes(self) -> List[Tuple[int, float, bool, bool]]:
        """The nodes as (event index, ts, is_start, is_blocking), by id."""
        return self._native.nodes()

    @functools.cached_property
    def _raw_edges(self) -> List[Tuple[int, int, float, str, Optional[int]]]:
        """The edges as (begin, end, weight, type, attributed event index), in order."""
        return self._native.edges()

    def _edge(self, k: int) -> CPEdge:
        """The edge object of the ``k``-th native edge (one object per edge)."""
        e = self._edge_at.get(k)
        if e is None:
            begin, end, weight, kind, _ = self._raw_edges[k]
            e = self._edge_at[k] = CPEdge(begin, end, weight, _EDGE_TYPES[kind])
        return e

    @functools.cached_property
    def node_list(self) -> List[CPNode]:
        """The nodes, by id."""
        return [
            CPNode(i, int(ev), ts, bool(start), bool(blocking))
            for i, (ev, ts, start, blocking) in enumerate(self._raw_nodes)
        ]

    @functools.cached_property
    def event_to_start_node_map(self) -> Dict[int, int]:
        """Event index → its start node's id."""
        return {int(ev): i for i, (ev, _, start, _) in enumerate(self._raw_nodes) if start}

    @functools.cached_property
    def event_to_end_node_map(self) -> Dict[int, int]:
        """Event index → its end node's id."""
        return {int(ev): i for i, (ev, _, start, _) in enumerate(self._raw_nodes) if not start}

    @functools.cached_property
    def _edges(self) -> Dict[Tuple[int, int], CPEdge]:
        """(begin, end) → the edge (a later edge between two nodes replaces the first in
        place, as in a networkx ``DiGraph``)."""
        return {(e[0], e[1]): self._edge(k) for k, e in enumerate(self._raw_edges)}

    @functools.cached_property
    def edge_to_event_map(self) -> Dict[Tuple[int, int], int]:
        """(begin, end) → the event the edge is attributed to."""
        out: Dict[Tuple[int, int], int] = {}
        for begin, end, _, _, attributed in self._raw_edges:
            if attributed is not None:
                out[(begin, end)] = int(attributed)
        return out

    @functools.cached_property
    def _path_order(self) -> List[CPEdge]:
        """The edges of the path, first to last."""
        return [self._edge(k) for k in self._path_edges]

    @functools.cached_property
    def critical_path_edges_set(self) -> Set[CPEdge]:
        """The edges of the path (set by :meth:`critical_path`)."""
        return set(self._path_order)

    @functools.cached_property
    def _events(self) -> Dict[int, Tuple[str, str, Any, Any, int]]:
        return self._events_of()

    def _fill_networkx(self) -> None:
        """Fills the networkx storage (as HTA's graph: the nodes are those of the edges, in
        the edges' order; edge data ``weight`` (negative as 0) and ``object``), once."""
        od = self.__dict__
        if od.get("_nx_filled", True):
            return
        od["_nx_filled"] = True
        node, succ, pred = od["_node"], od["_adj"], od["_pred"]
        for k, (u, v, w, _, _) in enumerate(self._raw_edges):
            if u not in node:
                node[u] = {}
                succ[u] = {}
                pred[u] = {}
            if v not in node:
                node[v] = {}
                succ[v] = {}
                pred[v] = {}
            data = succ[u].get(v)
            if data is None:
                data = succ[u][v] = pred[v][u] = {}
            data["weight"] = max(w, 0)
            data["object"] = self._edge(k)

    # --- HTA's lookups ---------------------------------------------------------------

    def get_nodes_for_event(self, ev_id: int) -> Tuple[Optional[CPNode], Optional[CPNode]]:
        """The (start, end) nodes of the event at ``ev_id`` (None where it has none)."""
        s = self.event_to_start_node_map.get(ev_id, -1)
        e = self.event_to_end_node_map.get(ev_id, -1)
        return (self.node_list[s] if s >= 0 else None, self.node_list[e] if e >= 0 else None)

    def get_events_for_edge(self, edge: CPEdge) -> Tuple[int, int]:
        """The events of an edge's two nodes."""
        return int(self._raw_nodes[edge.begin][0]), int(self._raw_nodes[edge.end][0])

    def get_event_attribution_for_edge(self, edge: CPEdge) -> Optional[int]:
        """The event an edge is attributed to (operator/kernel spans and kernel gaps)."""
        return self.edge_to_event_map.get((edge.begin, edge.end), None)

    def get_edges_attributed_to_event(self, ev_idx: int) -> List[CPEdge]:
        """The edges attributed to the event at ``ev_idx``."""
        return [self._edges[uv] for uv, ev in self.edge_to_event_map.items() if ev == ev_idx]

    def edge_objects(self) -> List[CPEdge]:
        """Every edge, in the order the graph was built (also without networkx)."""
        return list(self._edges.values())

    # --- the path --------------------------------------------------------------------

    def critical_path(self) -> bool:
        """Finds the longest path and sets :attr:`critical_path_nodes`,
        :attr:`critical_path_events_set` and :attr:`critical_path_edges_set`; False when
        the graph has a cycle or no edge. The path is networkx's ``dag_longest_path`` over
        this graph, as HTA's (ties go as in HTA's graph, whose nodes and edges come in the
        same order), computed natively: the same with or without networkx."""
        if self._native_path is None or len(self._native_path[0]) < 2:
            return False
        nodes, edges = self._native_path
        self.critical_path_nodes = list(nodes)
        if self._native is not None:
            self.critical_path_events_set = set(self._native.path_events())
        else:
            raw = self._raw_nodes
            self.critical_path_events_set = {raw[n][0] for n in nodes}
        self._path_edges = list(edges)
        # The edge objects of the path are made when first asked for.
        self.__dict__.pop("_path_order", None)
        self.__dict__.pop("critical_path_edges_set", None)
        return True

    def get_critical_path_breakdown(self) -> Optional[pd.DataFrame]:
        """One row per edge of the path, in path order: ``event_idx`` (the event it is
        attributed to), ``duration`` (µs), ``type``, the event's ``s_name``, ``cat``,
        ``pid``, ``tid``, ``stream``, ``index``, and ``bound_by`` (HTA's columns; ``cat``
        is the category's name where HTA has a symbol id). None without a path."""
        if len(self.critical_path_nodes) == 0:
            return None
        rows = [
            {
                "event_idx": self.get_event_attribution_for_edge(e),
                "duration": e.weight,
                "type": str(e.type.value),
            }
            for e in self._path_order
        ]
        edge_df = pd.DataFrame.from_records(rows)
        wanted = sorted({int(r["event_idx"]) for r in rows if r["event_idx"] is not None})
        info = pd.DataFrame(
            {
                "s_name": pd.Series([_hta_diff.shorten_name(self._events[i][0]) for i in wanted], dtype="object"),
                "cat": pd.Series([self._events[i][1] for i in wanted], dtype="object"),
                "pid": pd.Series([self._events[i][2] for i in wanted], dtype="object"),
                "tid": pd.Series([self._events[i][3] for i in wanted], dtype="object"),
                "stream": pd.Series([self._events[i][4] for i in wanted], dtype="int64"),
                "index": pd.Series(wanted, dtype="int64"),
            }
        )
        out = pd.merge(edge_df, info, left_on="event_idx", right_on="index", how="left")
        out["bound_by"] = [
            _bound_by(t, s, n) for t, s, n in zip(out["type"], out["stream"], out["s_name"])
        ]
        return out

    def summary(self) -> pd.Series:
        """Share of the path's duration per ``bound_by``, in % (the zero-weight
        dependency edges are the ``""`` row), as HTA's; it prints HTA's heading too."""
        edf = self.get_critical_path_breakdown()
        if edf is None:
            return pd.Series(dtype="float64", name="duration")
        out = edf.groupby("bound_by").duration.sum() / edf.duration.sum() * 100
        print("Critical Path broken down by boundedness = (in % of duration)")
        return out

    @property
    def length_us(self) -> float:
        """The path's length in µs (its edges' weights, negative ones as 0)."""
        return float(sum(max(e.weight, 0) for e in self._path_order))

    def show_critical_path(self) -> None:
        """Logs the path's nodes, as HTA's does."""
        import logging

        log = logging.getLogger("tracewise.hta")
        for n in self.critical_path_nodes:
            node = self.node_list[n]
            name = self._events.get(node.ev_idx, ("?",))[0]
            log.info(f"Critical {node}, ev_id = {node.ev_idx} ev_name = {name}")

    # --- HTA's frames and save() (``tracewise._hta_cpgraph``) ---------------------------

    def _hta_frames(self) -> Tuple[pd.DataFrame, pd.DataFrame, Any]:
        """(clipped frame, full frame, symbol table), built on first use from the analysis
        that built this graph."""
        cached = getattr(self, "_hta_cache", None)
        if cached is None:
            source = getattr(self, "_hta_source", None)
            if source is None:
                raise ValueError(
                    "this CPGraph was not built by TraceAnalysis.critical_path_analysis: "
                    "it has no trace frames"
                )
            analysis, annotation, first, last = source
            # One symbol table over every rank (as HTA's); HTA's `args` columns on this one.
            frames = dict(analysis._frames())
            frames[self.rank] = analysis._frame_with_args(self.rank)
            frames, table = _hta_cpgraph.encoded(frames)
            full = frames[self.rank]
            clipped = _hta_cpgraph.depth_and_parent(_hta_cpgraph.clipped(full, table, annotation, first, last))
            cached = self._hta_cache = (clipped, full, table)
        return cached

    def save(self, out_dir: str) -> str:
        """Writes the graph as HTA's ``save`` does: ``out_dir/trace_data.csv``
        (:attr:`trace_df`), ``out_dir/cp_graph.pkl`` (its node-link data),
        ``out_dir/cp_data.pkl`` (node list, path, maps) and their zip ``out_dir.zip``,
        through tracewise's output rules; returns the zip's path."""
        inputs = [p for _, p in self._hta_source[0]._t.files()] if getattr(self, "_hta_source", None) else []
        return _hta_cpgraph.save(self, self.trace_df, out_dir, inputs)

    @property
    def trace_df(self) -> pd.DataFrame:
        """HTA's clipped trace frame of the analysed window (``cat``/``name`` as ids of
        :attr:`symbol_table`; see ``tracewise._hta_cpgraph``)."""
        return self._hta_frames()[0]

    @property
    def full_trace_df(self) -> pd.DataFrame:
        """HTA's trace frame of the rank (``cat``/``name`` as ids of :attr:`symbol_table`)."""
        return self._hta_frames()[1]

    @property
    def symbol_table(self) -> Any:
        """The symbol table of :attr:`trace_df` and :attr:`full_trace_df` (HTA's
        ``TraceSymbolTable`` accessors: ``get_sym_table``, ``get_sym_id_map``, ...)."""
        return self._hta_frames()[2]

    @property
    def sym_table(self) -> List[str]:
        """The symbol table's strings, by id (HTA's ``CPGraph.sym_table``)."""
        return self._hta_frames()[2].get_sym_table()


class _NxStorage:
    """A networkx ``DiGraph`` storage attribute (``_node``, ``_adj``/``_succ``, ``_pred``)
    of a :class:`CPGraph`, filled from the native edges on its first read (every networkx
    function and view reads the graph through these). Setting it is networkx's own
    setter (which clears networkx's cached views)."""

    def __init__(self, base: type) -> None:
        self.base = base

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.setter = next((k.__dict__[name] for k in self.base.__mro__ if name in k.__dict__), None)

    def __get__(self, obj: Any, owner: Optional[type] = None) -> Any:
        if obj is None:
            return self
        obj._fill_networkx()
        return obj.__dict__[self.name]

    def __set__(self, obj: Any, value: Any) -> None:
        if hasattr(self.setter, "__set__"):
            self.setter.__set__(obj, value)
        else:
            obj.__dict__[self.name] = value


_NX_CPGRAPH: List[Any] = []


def _graph_type() -> type:
    """:class:`CPGraph`, made a ``networkx.DiGraph`` too when networkx is installed."""
    if not _NX_CPGRAPH:
        try:
            import networkx as nx
        except ImportError:
            _NX_CPGRAPH.append(CPGraph)
        else:

            class NxCPGraph(CPGraph, nx.DiGraph):
                __doc__ = CPGraph.__doc__
                _node = _NxStorage(nx.DiGraph)
                _adj = _NxStorage(nx.DiGraph)
                _succ = _NxStorage(nx.DiGraph)
                _pred = _NxStorage(nx.DiGraph)

                def __init__(self, *args: Any) -> None:
                    nx.DiGraph.__init__(self)
                    # No arguments (networkx's `copy()`, `subgraph()`, …): an empty graph.
                    CPGraph.__init__(self, *(args or (-1, ([], [], None), dict)))
                    self.__dict__["_nx_filled"] = False

            NxCPGraph.__name__ = NxCPGraph.__qualname__ = "CPGraph"
            _NX_CPGRAPH.append(NxCPGraph)
    return _NX_CPGRAPH[0]


CriticalPathSummary = CPGraph
"""The name ``critical_path_analysis``'s result had before it was HTA's ``CPGraph``."""
