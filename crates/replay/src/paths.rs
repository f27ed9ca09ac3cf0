//! The launching paths: the host leaves a GPU waited for, which is what a host sub-cause
//! scenario ([`crate::Change::HostCause`]) removes.
//!
//! A host sub-cause (analysis's allocator, data loading, CPU work, …) is a cause of step
//! time where the GPU waited for it. Its time off the path the GPU waited for delayed
//! nothing measured: removing it would claim more than the cause holds, and where the
//! "work" is a wait in disguise (`run_backward`'s self time on the main thread while the
//! autograd thread launches the backward pass, labelled CPU work) it lets the thread run
//! ahead of work it waits for. So the scenario removes the sub-cause's time only on the
//! launching paths: for each activity that started after its stream ran dry because its
//! launch came late (the launch edge set its start), the host leaves on the path that
//! decided that launch (its thread's order, a wake-up from another thread: a Python
//! thread that prepared the work), walked back to the stretch's start, with the host gap
//! before each. On those leaves all of the sub-cause's time goes (once the GPU no longer
//! waits, the part that ran while it was busy can decide the next launch).

use trace_model::Nanos;

use crate::graph::{EdgeKind, Graph, Lane};
use crate::replay::NONE;

/// Per host leaf on a launching path, the stream whose idle stretch it ended.
#[derive(Debug, Clone, Default)]
pub(crate) struct LaunchingPaths {
    /// Per host node: the stream (by index) that idled waiting for the launch this leaf
    /// leads to (on the path that decided that launch's start), `NONE` off every such
    /// path ([`LaunchingPaths::mark_launching_paths`]).
    path_stream: Vec<u32>,
}

impl LaunchingPaths {
    /// Marks the launching paths of `graph`: for each activity that started after its
    /// stream ran dry, because its launch came late (the launch edge set its start on the
    /// replay of the measured durations), the host leaves walked back from its launch
    /// call along the edges that set each start (host order, a wake-up from another
    /// thread) down to the stretch's start. Stops at a leaf already marked.
    pub(crate) fn mark_launching_paths(graph: &Graph) -> Vec<u32> {
        let timeline = &graph.baseline;
        let mut path = vec![NONE; graph.host_nodes];
        for m in graph.host_nodes..graph.nodes.len() {
            let bound = timeline.start_bound[m];
            let Lane::Stream(stream) = graph.nodes[m].lane else {
                continue;
            };
            let Some(launch) = (bound != NONE)
                .then(|| &graph.edges[bound as usize])
                .filter(|e| e.kind == EdgeKind::Launch)
            else {
                continue;
            };
            // The stream's first activity: it idled since the capture began.
            let idle_start = graph
                .in_edges(m)
                .iter()
                .find(|e| e.kind == EdgeKind::StreamOrder)
                .map_or(Nanos(i64::MIN), |e| timeline.end[e.src as usize]);
            if idle_start >= timeline.start[m] {
                continue;
            }
            let mut n = launch.src as usize;
            for _ in 0..graph.host_nodes {
                if n >= graph.host_nodes || path[n] != NONE {
                    break;
                }
                path[n] = stream.index() as u32;
                if timeline.start[n] <= idle_start {
                    break;
                }
                let b = timeline.start_bound[n];
                let Some(e) = (b != NONE)
                    .then(|| &graph.edges[b as usize])
                    .filter(|e| matches!(e.kind, EdgeKind::HostOrder | EdgeKind::CrossThread))
                else {
                    break;
                };
                n = e.src as usize;
            }
        }
        path
    }

    /// Sets the launching paths ([`LaunchingPaths::mark_launching_paths`]).
    pub(crate) fn set_paths(&mut self, path: Vec<u32>) {
        self.path_stream = path;
    }

    /// Whether host node `n` is on a launching path.
    pub(crate) fn on_launching_path(&self, n: usize) -> bool {
        self.path_stream.get(n).is_some_and(|&s| s != NONE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_is_on_a_launching_path_once_marked() {
        let mut idle = LaunchingPaths::default();
        idle.set_paths(vec![0, NONE]);
        assert!(idle.on_launching_path(0));
        assert!(!idle.on_launching_path(1));
        assert!(!idle.on_launching_path(2));
    }
}
