"""The flows of HTA 0.5.0's overlaid critical-path trace
(``TraceAnalysis.overlay_critical_path_analysis``): which edges of a :class:`CPGraph` it
draws, each as the (begin event, begin is a start, end event, end is a start, edge type,
weight, on the path) tuple that ``_native.write_overlaid_trace`` writes as a ``ph`` s/f
pair."""

from __future__ import annotations

import os
from typing import List, Tuple

from ._hta_critical_path import DEFAULT_EDGE_TYPES_IN_VIZ, CPEdgeType, CPGraph

Flow = Tuple[int, bool, int, bool, str, int, bool]


def flows(g: CPGraph, show_all_edges: bool) -> List[Flow]:
    """The flows HTA draws for graph ``g``: the path's dependency, launch and sync edges,
    or with ``show_all_edges`` every edge (zero-weight launch edges only when
    ``CRITICAL_PATH_SHOW_ZERO_WEIGHT_LAUNCH_EDGE=1``)."""
    if show_all_edges:
        show_zero = os.environ.get("CRITICAL_PATH_SHOW_ZERO_WEIGHT_LAUNCH_EDGE", "0") == "1"
        edges = [
            e
            for e in g.edge_objects()
            if show_zero or not (e.type == CPEdgeType.KERNEL_LAUNCH_DELAY and e.weight == 0)
        ]
        raw = g._raw_nodes  # (event index, ts, is_start, is_blocking) by node id
        on_path = g.critical_path_edges_set
        return [
            (
                int(raw[e.begin][0]),
                bool(raw[e.begin][2]),
                int(raw[e.end][0]),
                bool(raw[e.end][2]),
                e.type.value,
                int(e.weight),
                e in on_path,
            )
            for e in edges
        ]
    # The path's edges of the drawn types, from the native edges (no edge objects).
    drawn = {t.value for t in DEFAULT_EDGE_TYPES_IN_VIZ}
    out: List[Flow] = []
    if g._native is not None:
        # The same edges read natively (g._path_edges is the native path's edges).
        out = g._native.path_flows(sorted(drawn)) if g._path_edges else []
    else:
        raw = g._raw_nodes
        for k in g._path_edges:
            begin, end, weight, kind, _ = g._raw_edges[k]
            if kind in drawn:
                out.append((
                    int(raw[begin][0]), bool(raw[begin][2]), int(raw[end][0]), bool(raw[end][2]),
                    kind, int(weight), True,
                ))
    return out
