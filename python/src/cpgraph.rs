//! HTA's critical-path graph of a rank's window (`critical_path_analysis`), held natively:
//! the Python `CPGraph` takes the path's events and the overlay's flows from here, and
//! every node and edge as Python tuples only when first asked for (90k tuples on a large
//! trace, and the cyclic collector's passes over them, were most of the method's time).

use pyo3::prelude::*;

use crate::{HtaTrace, rel_us};

/// A node: (event index, ts in µs from HTA's origin, is_start, is_blocking).
type Node = (i64, f64, bool, bool);
/// An edge: (begin node, end node, weight in µs, HTA's edge type, attributed event index).
type Edge = (usize, usize, f64, &'static str, Option<i64>);
/// A flow of the overlay: (begin event index, whether it leaves the event's start, end
/// event index, whether it reaches the event's start, type, weight in whole µs, on the path).
type Flow = (i64, bool, i64, bool, &'static str, i64, bool);

/// The graph of [`critical_path_data`].
#[pyclass(module = "tracewise._native", frozen)]
pub(crate) struct CpGraphData {
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    path: Option<(Vec<usize>, Vec<usize>)>,
}

#[pymethods]
impl CpGraphData {
    /// Every node, by id (HTA's numbering).
    fn nodes(&self) -> Vec<Node> {
        self.nodes.clone()
    }

    /// Every edge, in the order they were added.
    fn edges(&self) -> Vec<Edge> {
        self.edges.clone()
    }

    /// The longest path as networkx's `dag_longest_path` finds it (its node ids and the
    /// positions of its edges), None when the graph has a cycle or no edge.
    fn path(&self) -> Option<(Vec<usize>, Vec<usize>)> {
        self.path.clone()
    }

    /// The event indices of the path's nodes, in path order (empty without a path).
    fn path_events(&self) -> Vec<i64> {
        let nodes = self.path.as_ref().map_or(&[][..], |p| &p.0[..]);
        nodes.iter().map(|&n| self.nodes[n].0).collect()
    }

    /// The overlay's flows of the path's edges whose type is one of `kinds`, in path
    /// order: (begin event index, whether it leaves the event's start, end event index,
    /// whether it reaches the event's start, type, weight in whole µs (truncated), True).
    fn path_flows(&self, kinds: Vec<String>) -> Vec<Flow> {
        let edges = self.path.as_ref().map_or(&[][..], |p| &p.1[..]);
        (edges.iter().map(|&k| self.edges[k]))
            .filter(|e| kinds.iter().any(|kind| kind == e.3))
            .map(|(begin, end, weight, kind, _)| {
                let (b, e) = (self.nodes[begin], self.nodes[end]);
                (b.0, b.2, e.0, e.2, kind, weight as i64, true)
            })
            .collect()
    }
}

/// HTA's `CPGraph` of `rank` over the instances `first..=last` of `annotation`
/// (`trace_frame::critical_path_graph`): nodes in HTA's numbering, edges in the order they
/// were added, and the longest path as networkx's `dag_longest_path` finds it over HTA's
/// `DiGraph` of those edges (`CriticalPathGraph::networkx_path`); None when the first
/// instance is not in the trace.
#[pyfunction]
pub(crate) fn critical_path_data(
    trace: PyRef<'_, HtaTrace>,
    rank: i64,
    annotation: &str,
    first: usize,
    last: usize,
) -> Option<CpGraphData> {
    let t = trace.of(rank)?;
    let g = trace_frame::critical_path_graph(t, annotation, first..=last)?;
    let min_ts = trace.min_ts;
    let nodes = (g.nodes.iter())
        .map(|n| {
            (
                n.event_index,
                rel_us(n.ts, min_ts),
                n.is_start,
                n.is_blocking,
            )
        })
        .collect();
    let edges = (g.edges.iter())
        .map(|e| {
            (
                e.begin,
                e.end,
                e.weight as f64 / 1000.0,
                e.kind.label(),
                e.attributed,
            )
        })
        .collect();
    Some(CpGraphData {
        nodes,
        edges,
        path: g.networkx_path(),
    })
}
