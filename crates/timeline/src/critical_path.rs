//! The critical path of one step of one rank, with the graph of HTA 0.5.0's
//! `critical_path_analysis` (read from `hta/analyzers/critical_path_analysis.py`):
//! a start and an end node per CPU operator, runtime call and GPU activity; edges for CPU
//! op nesting (weighted by the time between consecutive nodes of a thread's call stack;
//! consecutive top-level ops linked by zero-weight dependencies), each activity's duration,
//! a launch edge from the runtime call when the stream was empty, else a kernel → kernel
//! edge from the previous activity on the stream; zero-weight synchronisation edges from
//! the `cuda_sync` events (see [`SyncKind`]); then the longest path.
//!
//! Synchronisation, as HTA builds it: a `Stream Sync` links the last activity of its stream,
//! a `Context Sync` the last activity of every stream, to the end of the host's
//! synchronising call. An `Event Sync` links the activity launched last on the recorded
//! stream before the `cudaEventRecord` to the end of `cudaEventSynchronize`; a
//! `Stream Wait Event` links it to the start of the next activity the waiting thread
//! launches on the waiting stream, which then gets no launch or kernel → kernel edge unless
//! the awaited activity ended before that edge's source. Syncs are taken in order of their
//! end, activities in order of their start.

use std::collections::BTreeMap;

// Fx-hashed: these maps are keyed by node and event ids (SipHash was a visible share of
// the graph's build).
use trace_model::FastMap;

use serde::Serialize;

use crate::hta::{is_operator, queue_series};
use crate::timeline::{GpuKind, SyncEvent, SyncKind, Timeline};

/// What an edge of the path stands for (HTA's `bound_by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum CriticalPathBound {
    /// Host time: between consecutive start and end nodes of a thread's nested operators
    /// (zero ending a blocking call such as `cudaStreamSynchronize`) (`cpu_bound`).
    CpuBound,
    /// The duration of a GPU activity that is not a communication kernel
    /// (`gpu_compute_bound`).
    GpuCompute,
    /// The duration of a communication (`nccl…Kernel`) kernel (`gpu_communication_bound`).
    GpuCommunication,
    /// The gap from the end of the previous activity on the stream to the start of the next
    /// (`gpu_kernel_kernel_overhead`).
    KernelKernelOverhead,
    /// The time from the start of the runtime launch call to the start of its activity, when
    /// the stream was empty (`gpu_kernel_launch_overhead`).
    KernelLaunchOverhead,
}

impl CriticalPathBound {
    /// HTA's `bound_by` spelling.
    pub fn label(self) -> &'static str {
        match self {
            CriticalPathBound::CpuBound => "cpu_bound",
            CriticalPathBound::GpuCompute => "gpu_compute_bound",
            CriticalPathBound::GpuCommunication => "gpu_communication_bound",
            CriticalPathBound::KernelKernelOverhead => "gpu_kernel_kernel_overhead",
            CriticalPathBound::KernelLaunchOverhead => "gpu_kernel_launch_overhead",
        }
    }
}

/// The summary of a step's critical path.
#[derive(Debug, Clone, Serialize)]
pub struct CriticalPath {
    /// The rank of the trace, when known.
    pub rank: Option<i64>,
    /// The step annotation's name (`ProfilerStep#N`), or `(whole trace)` when no annotation
    /// was asked for.
    pub step: String,
    /// Which matching annotation the step is, counted from 0 in start order.
    pub instance: usize,
    /// The summed edge weights of the path, in µs.
    pub length_us: f64,
    /// Nodes of the graph with an edge: a start and an end per CPU operator, runtime or
    /// driver call that starts in the step (and lasts), and per GPU activity whose launch
    /// call does.
    pub nodes: usize,
    /// Edges of the graph, synchronisation edges included.
    pub edges: usize,
    /// Edges on the critical path.
    pub path_edges: usize,
    /// Synchronisation edges in the graph (zero weight, no [`CriticalPathBound`]).
    pub sync_edges: usize,
    /// Synchronisation edges on the critical path.
    pub sync_edges_on_path: usize,
    /// Share of the path's length per cause, in %, in `CriticalPathBound` order.
    pub split: Vec<(CriticalPathBound, f64)>,
}

/// HTA's `CPEdgeType`: what an edge of the graph stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CpEdgeType {
    /// The span of an operator or activity, or the time between consecutive nodes of a
    /// thread's nested operators (`critical_path_operator`).
    Operator,
    /// The zero-weight link from one top-level operator of a thread to the next
    /// (`critical_path_dependency`).
    Dependency,
    /// From the start of the runtime launch call to the start of its activity, when the
    /// stream was empty (`critical_path_kernel_launch_delay`).
    KernelLaunchDelay,
    /// From the end of the previous activity on the stream to the start of the next
    /// (`critical_path_kernel_kernel_delay`).
    KernelKernelDelay,
    /// A zero-weight synchronisation dependency (`critical_path_sync_dependency`).
    SyncDependency,
}

impl CpEdgeType {
    /// HTA's spelling (`CPEdgeType.value`).
    pub fn label(self) -> &'static str {
        match self {
            CpEdgeType::Operator => "critical_path_operator",
            CpEdgeType::Dependency => "critical_path_dependency",
            CpEdgeType::KernelLaunchDelay => "critical_path_kernel_launch_delay",
            CpEdgeType::KernelKernelDelay => "critical_path_kernel_kernel_delay",
            CpEdgeType::SyncDependency => "critical_path_sync_dependency",
        }
    }
}

/// A node of the graph: the start or the end of an event (HTA's `CPNode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CpNode {
    /// Position of the event in `traceEvents` (HTA's `ev_idx`).
    pub event_index: i64,
    /// The event's start (`is_start`) or end, in integer nanoseconds.
    pub ts: i64,
    /// Whether the node is the event's start.
    pub is_start: bool,
    /// Whether the event is a blocking runtime call (`cudaStreamSynchronize`, …), whose
    /// time on the host counts zero.
    pub is_blocking: bool,
}

/// An edge of the graph (HTA's `CPEdge`, with the event it is attributed to).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CpEdge {
    /// The node it leaves (an index into [`CriticalPathGraph::nodes`]).
    pub begin: usize,
    /// The node it reaches.
    pub end: usize,
    /// Its weight in nanoseconds: the time between its nodes, zero for dependencies and
    /// for the end of a blocking call. A negative weight (rounding noise) counts as zero
    /// in the longest path, and is kept here as HTA keeps it in its edge objects.
    pub weight: i64,
    /// What it stands for.
    pub kind: CpEdgeType,
    /// What it is bound by on the path, None for the zero-weight dependencies.
    pub bound: Option<CriticalPathBound>,
    /// The event it is attributed to (HTA's `edge_to_event_map`): operator and activity
    /// spans and kernel → kernel gaps only.
    pub attributed: Option<i64>,
}

/// The whole graph of one step and its longest path.
#[derive(Debug, Clone, Serialize)]
pub struct CriticalPathGraph {
    /// The rank of the trace, when known.
    pub rank: Option<i64>,
    /// The annotation's name, or `(whole trace)`.
    pub step: String,
    /// Which matching annotation the step is, counted from 0 in start order.
    pub instance: usize,
    /// The nodes, ordered as HTA numbers them: by time, starts before ends at one time
    /// (nodes no edge reaches included, as in HTA's node list).
    pub nodes: Vec<CpNode>,
    /// The edges, in the order they were added (a second edge between two nodes replaces
    /// the first in place, as in a networkx `DiGraph`).
    pub edges: Vec<CpEdge>,
    /// The nodes of the longest path, first to last; None when the graph has a cycle or no
    /// node (HTA's analysis fails then).
    pub path: Option<Vec<usize>>,
}

/// The weight an edge has in the longest path: HTA zeroes negative weights (rounding noise
/// of nested events, `_validate_graph`).
fn path_weight(w: i64) -> i64 {
    w.max(0)
}

/// The graph as it is built: nodes in pairs (start, end) per event, edges in order.
struct Builder {
    nodes: Vec<CpNode>,
    edges: Vec<CpEdge>,
    at: FastMap<(usize, usize), usize>,
}

impl Builder {
    /// Adds an edge; a second edge between the same two nodes replaces the first, as in
    /// HTA's graph (a networkx `DiGraph`, which has no parallel edges).
    fn put(&mut self, edge: CpEdge) {
        if edge.begin == edge.end {
            return;
        }
        match self.at.get(&(edge.begin, edge.end)) {
            Some(&k) => self.edges[k] = edge,
            None => {
                self.at.insert((edge.begin, edge.end), self.edges.len());
                self.edges.push(edge);
            }
        }
    }

    /// An edge weighted by the time between its nodes.
    fn timed(
        &mut self,
        begin: usize,
        end: usize,
        kind: CpEdgeType,
        bound: CriticalPathBound,
        attributed: Option<i64>,
    ) {
        let weight = self.nodes[end].ts - self.nodes[begin].ts;
        self.put(CpEdge {
            begin,
            end,
            weight,
            kind,
            bound: Some(bound),
            attributed,
        });
    }

    /// A zero-weight edge with no cause of its own (a dependency or a synchronisation).
    fn zero(&mut self, begin: usize, end: usize, kind: CpEdgeType) {
        self.put(CpEdge {
            begin,
            end,
            weight: 0,
            kind,
            bound: None,
            attributed: None,
        });
    }
}

/// The runtime calls that launch GPU work (HTA's `get_runtime_launch_events_query`); the
/// event synchronisation edges look for the last of these before a `cudaEventRecord`.
const LAUNCHES: [&str; 11] = [
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "cuLaunchKernel",
    "cudaMemcpyAsync",
    "cudaMemsetAsync",
    "runFunction - job_prep_and_submit_for_execution",
    "hipLaunchKernel",
    "hipExtModuleLaunchKernel",
    "hipMemsetAsync",
    "hipMemcpyAsync",
    "hipMemcpyWithStream",
];

const BLOCKING: [&str; 6] = [
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize",
    "cudaEventQuery",
    "cudaEventSynchronize",
    "cudaMemcpy",
    "cudaMemcpyAsync",
];

/// The critical path of instance `instance` (in start order) of the host annotations whose
/// name contains `annotation`, or of the whole trace when `annotation` is empty (as in HTA).
/// None when there is no such instance, or the graph has a cycle or no node.
pub fn critical_path(t: &Timeline, annotation: &str, instance: usize) -> Option<CriticalPath> {
    critical_path_graph(t, annotation, instance..=instance)?.summary()
}

/// HTA's `CPGraph` of the instances `instances` (in start order, both ends included, the
/// window from the first one's start to the latest end) of the host annotations whose name
/// contains `annotation`, or of the whole trace when `annotation` is empty. None when the
/// first instance is not in the trace.
pub fn critical_path_graph(
    t: &Timeline,
    annotation: &str,
    instances: std::ops::RangeInclusive<usize>,
) -> Option<CriticalPathGraph> {
    let (ws, we, step_name) = window(t, annotation, &instances)?;
    let in_window = |s: i64| ws <= s && s <= we;
    // Host events that start in the window and last; activities whose launch does. HTA's
    // view counts sync events and host events with a stream as GPU work
    // (`GpuKind::Other`); the path takes syncs from `t.syncs`, and those events are no
    // kernels of its graph.
    let host_sel: Vec<usize> = (0..t.host.len())
        .filter(|&i| in_window(t.host[i].start) && t.host[i].end > t.host[i].start)
        .collect();
    let gpu_sel: Vec<usize> = (0..t.gpu.len())
        .filter(|&i| {
            t.gpu[i].kind != GpuKind::Other
                && t.gpu[i].launch.is_some_and(|l| {
                    let h = &t.host[l];
                    in_window(h.start) && h.end > h.start
                })
        })
        .collect();
    // HTA's other GPU work with a stream (sync events, host events with one) whose launch
    // is in the window, and every `Stream Wait Event` with a launch: nodes without edges.
    let other_sel: Vec<usize> = (0..t.gpu.len())
        .filter(|&i| {
            let g = &t.gpu[i];
            g.kind == GpuKind::Other
                && g.stream != -1
                && g.launch.is_some_and(|l| {
                    let h = &t.host[l];
                    (in_window(h.start) && h.end > h.start)
                        || t.name(g.name) == SyncKind::StreamWaitEvent.name()
                })
        })
        .collect();
    let (mut b, host_node, gpu_node) = create_nodes(t, &host_sel, &gpu_sel, &other_sel);
    add_call_stacks(&mut b, t, &host_sel, &host_node);
    let nodes = Nodes {
        host: &host_node,
        gpu: &gpu_node,
    };
    add_kernel_edges(&mut b, t, &gpu_sel, &nodes, in_window);
    let path = longest_path(&b);
    Some(renumbered(
        b,
        path,
        t.rank,
        step_name.to_owned(),
        *instances.start(),
    ))
}

/// The window of the step: (start, end, the annotation's name) in ns.
fn window<'t>(
    t: &'t Timeline,
    annotation: &str,
    instances: &std::ops::RangeInclusive<usize>,
) -> Option<(i64, i64, &'t str)> {
    if annotation.is_empty() {
        let starts = t.host.iter().map(|h| h.start);
        let starts = starts.chain(t.gpu.iter().map(|g| g.start));
        let ends = t.host.iter().map(|h| h.end);
        let ends = ends.chain(t.gpu.iter().map(|g| g.end));
        return Some((starts.min()?, ends.max()?, "(whole trace)"));
    }
    let mut anns: Vec<(i64, i64, &str)> = t
        .host
        .iter()
        .filter(|h| t.name(h.name).contains(annotation))
        .map(|h| (h.start, h.end, t.name(h.name)))
        .collect();
    anns.sort();
    let first = *anns.get(*instances.start())?;
    let last = (*instances.end()).min(anns.len() - 1);
    let chosen = anns.get(*instances.start()..=last.max(*instances.start()))?;
    let end = chosen.iter().map(|a| a.1).max().unwrap_or(first.1);
    Some((first.0, end, first.2))
}

/// A start and an end node per selected operator (HTA's operators, runtime and driver
/// calls), per selected activity, and per other selected GPU work (nodes no edge reaches,
/// as in HTA's node list): host events first, then activities. Returns the builder and
/// each host event's and activity's start node.
fn create_nodes(
    t: &Timeline,
    host_sel: &[usize],
    gpu_sel: &[usize],
    other_sel: &[usize],
) -> (Builder, Vec<Option<usize>>, Vec<Option<usize>>) {
    let mut nodes: Vec<CpNode> = Vec::new();
    let mut pair = |event_index: i64, start: i64, end: i64, is_blocking: bool| {
        let n = nodes.len();
        for (ts, is_start) in [(start, true), (end, false)] {
            nodes.push(CpNode {
                event_index,
                ts,
                is_start,
                is_blocking,
            });
        }
        Some(n)
    };
    let mut host_node: Vec<Option<usize>> = vec![None; t.host.len()];
    for &i in host_sel {
        let h = &t.host[i];
        if is_operator(h.cat) {
            let blocking = BLOCKING.contains(&t.name(h.name));
            host_node[i] = pair(h.event_index, h.start, h.end, blocking);
        }
    }
    let mut gpu_node: Vec<Option<usize>> = vec![None; t.gpu.len()];
    for &i in gpu_sel {
        let g = &t.gpu[i];
        gpu_node[i] = pair(g.event_index, g.start, g.end, false);
    }
    for &i in other_sel {
        let g = &t.gpu[i];
        pair(g.event_index, g.start, g.end, false);
    }
    let b = Builder {
        nodes,
        edges: Vec::new(),
        at: FastMap::default(),
    };
    (b, host_node, gpu_node)
}

/// The CPU call stacks, per thread: a depth-first walk in nesting order (HTA's
/// `_construct_graph_from_call_stack`).
fn add_call_stacks(b: &mut Builder, t: &Timeline, host_sel: &[usize], host_node: &[Option<usize>]) {
    let mut threads: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for &i in host_sel {
        threads.entry(t.host[i].thread).or_default().push(i);
    }
    for evs in threads.values_mut() {
        evs.sort_by_key(|&i| {
            (
                t.host[i].start,
                std::cmp::Reverse(t.host[i].end),
                t.host[i].event_index,
            )
        });
        let mut walk = StackWalk {
            host_node,
            last_node: None,
            last_top: None,
            depth: 0,
            last_parent: -1,
        };
        // (host event, the event index of its parent, −1 at the top).
        let mut stack: Vec<(usize, i64)> = Vec::new();
        for &i in evs.iter() {
            let h = &t.host[i];
            while let Some(&(top, parent)) = stack.last() {
                let p = &t.host[top];
                if h.start < p.end && h.end <= p.end {
                    break;
                }
                stack.pop();
                walk.exit(b, t, top, parent);
            }
            let parent = stack.last().map_or(-1, |&(p, _)| t.host[p].event_index);
            stack.push((i, parent));
            walk.enter(b, i, parent);
        }
        while let Some((top, parent)) = stack.pop() {
            walk.exit(b, t, top, parent);
        }
    }
}

/// The state of one thread's walk.
struct StackWalk<'a> {
    host_node: &'a [Option<usize>],
    last_node: Option<usize>,
    last_top: Option<usize>,
    depth: usize,
    /// The parent of the event `last_node` belongs to: an edge from an end to a start is
    /// attributed to it (HTA's case 4).
    last_parent: i64,
}

impl StackWalk<'_> {
    fn enter(&mut self, b: &mut Builder, i: usize, parent: i64) {
        let Some(n) = self.host_node[i] else { return };
        if self.depth == 0
            && let Some(top) = self.last_top
        {
            b.zero(top, n, CpEdgeType::Dependency);
        }
        self.depth += 1;
        if let Some(l) = self.last_node {
            let from = b.nodes[l];
            let to = if from.is_start {
                from.event_index
            } else {
                self.last_parent
            };
            b.timed(
                l,
                n,
                CpEdgeType::Operator,
                CriticalPathBound::CpuBound,
                Some(to),
            );
        }
        self.last_node = Some(n);
        self.last_parent = parent;
    }

    fn exit(&mut self, b: &mut Builder, t: &Timeline, i: usize, parent: i64) {
        let Some(n) = self.host_node[i] else { return };
        self.depth -= 1;
        let end = n + 1;
        if let Some(l) = self.last_node {
            let from = b.nodes[l];
            let to = if from.is_start {
                from.event_index
            } else {
                b.nodes[end].event_index
            };
            let weight = if BLOCKING.contains(&t.name(t.host[i].name)) {
                0
            } else {
                b.nodes[end].ts - from.ts
            };
            b.put(CpEdge {
                begin: l,
                end,
                weight,
                kind: CpEdgeType::Operator,
                bound: Some(CriticalPathBound::CpuBound),
                attributed: Some(to),
            });
        }
        if self.depth == 0 {
            self.last_node = None;
            self.last_top = Some(end);
        } else {
            self.last_node = Some(end);
            self.last_parent = parent;
        }
    }
}

/// Each host event's and activity's start node.
struct Nodes<'a> {
    host: &'a [Option<usize>],
    gpu: &'a [Option<usize>],
}

/// Launches per (device, stream) and per (host thread, stream) in host time order, over
/// the whole trace (HTA looks them up in the unclipped frame): what an event sync waits
/// for, and what a stream wait holds back.
struct Launches {
    on_stream: FastMap<(i64, i64), Vec<(i64, usize)>>,
    from_thread: FastMap<(u32, i64), Vec<(i64, usize)>>,
    /// `cudaEventRecord` start by correlation id.
    records: FastMap<i64, i64>,
}

impl Launches {
    fn of(t: &Timeline) -> Launches {
        let mut on_stream: FastMap<(i64, i64), Vec<(i64, usize)>> = FastMap::default();
        let mut from_thread: FastMap<(u32, i64), Vec<(i64, usize)>> = FastMap::default();
        for (i, g) in t.gpu.iter().enumerate() {
            let Some(l) = g.launch else { continue };
            if g.kind == GpuKind::Other {
                continue;
            }
            let h = &t.host[l];
            if LAUNCHES.contains(&t.name(h.name)) {
                let at = (h.start, i);
                on_stream.entry((g.device, g.stream)).or_default().push(at);
                from_thread
                    .entry((h.thread, g.stream))
                    .or_default()
                    .push(at);
            }
        }
        for v in on_stream.values_mut().chain(from_thread.values_mut()) {
            v.sort_unstable();
        }
        let records = t
            .host
            .iter()
            .filter(|h| t.name(h.name) == "cudaEventRecord")
            .filter_map(|h| Some((h.correlation?, h.start)))
            .collect();
        Launches {
            on_stream,
            from_thread,
            records,
        }
    }

    /// The activity launched last on the recorded stream at or before the cudaEventRecord.
    fn awaited(&self, y: &SyncEvent) -> Option<usize> {
        let recorded = *self.records.get(&y.wait_on_record?)?;
        let v = self.on_stream.get(&(y.device, y.wait_on_stream?))?;
        let k = v.partition_point(|&(ts, _)| ts <= recorded);
        k.checked_sub(1).map(|k| v[k].1)
    }

    /// The first activity the waiting thread launches on the waiting stream after the wait.
    fn held_back(&self, t: &Timeline, y: &SyncEvent) -> Option<usize> {
        let h = &t.host[y.runtime?];
        let v = self.from_thread.get(&(h.thread, y.stream))?;
        v.get(v.partition_point(|&(ts, _)| ts < h.start))
            .map(|&(_, g)| g)
    }
}

/// The queue length of each activity's stream at its launch and at its start.
fn queue_at(t: &Timeline) -> (Vec<i64>, Vec<i64>) {
    let series = queue_series(t);
    let mut q_at_launch: Vec<i64> = vec![-1; t.gpu.len()];
    let mut q_at_start: Vec<i64> = vec![-1; t.gpu.len()];
    for s in series.values() {
        for &(_, q, is_launch, g) in s {
            if is_launch {
                q_at_launch[g] = q;
            } else {
                q_at_start[g] = q;
            }
        }
    }
    (q_at_launch, q_at_start)
}

/// Activities in start order and syncs in end order (a stream sync can overlap the copy it
/// waits for): each activity's span, its launch or kernel → kernel edge, and the
/// synchronisation edges (HTA's `_construct_graph_from_kernels`).
fn add_kernel_edges(
    b: &mut Builder,
    t: &Timeline,
    gpu_sel: &[usize],
    nodes: &Nodes<'_>,
    in_window: impl Fn(i64) -> bool,
) {
    let (q_at_launch, q_at_start) = queue_at(t);
    // Synchronisation events: a stream's sync when its host call is in the window (as for
    // activities), a host-wide one when it starts in the window, every stream wait.
    let sync_sel = (0..t.syncs.len()).filter(|&i| {
        let y = &t.syncs[i];
        let Some(rt) = y.runtime else { return false };
        let h = &t.host[rt];
        match y.kind {
            SyncKind::StreamWaitEvent => true,
            _ if y.stream >= 0 => in_window(h.start) && h.end > h.start,
            _ => in_window(y.start) && y.end > y.start,
        }
    });
    let launches = Launches::of(t);
    let gpu_items = gpu_sel
        .iter()
        .map(|&i| (t.gpu[i].start, t.gpu[i].event_index, Item::Gpu(i)));
    let sync_items = sync_sel.map(|i| (t.syncs[i].end, t.syncs[i].event_index, Item::Sync(i)));
    let mut order: Vec<(i64, i64, Item)> = gpu_items.chain(sync_items).collect();
    order.sort_unstable_by_key(|&(ts, index, _)| (ts, index));
    let mut last_on_stream: BTreeMap<i64, usize> = BTreeMap::new();
    // Destination activity → the activity it waits for (a pending `Stream Wait Event`).
    let mut waits_for: FastMap<usize, usize> = FastMap::default();
    for (_, _, item) in &order {
        match *item {
            Item::Gpu(i) => {
                let qs = (q_at_launch[i], q_at_start[i]);
                add_activity(b, t, i, nodes, qs, &mut last_on_stream, &mut waits_for);
            }
            Item::Sync(y) => {
                add_sync(b, t, y, nodes, &launches, &last_on_stream, &mut waits_for);
            }
        }
    }
}

enum Item {
    Gpu(usize),
    Sync(usize),
}

/// The edges a synchronisation event adds (or schedules, for a stream wait).
fn add_sync(
    b: &mut Builder,
    t: &Timeline,
    y: usize,
    nodes: &Nodes<'_>,
    launches: &Launches,
    last_on_stream: &BTreeMap<i64, usize>,
    waits_for: &mut FastMap<usize, usize>,
) {
    let sync = &t.syncs[y];
    let host_end = sync.runtime.and_then(|r| nodes.host[r]).map(|n| n + 1);
    match sync.kind {
        SyncKind::Context => {
            if let Some(to) = host_end {
                for &from in last_on_stream.values() {
                    b.zero(from, to, CpEdgeType::SyncDependency);
                }
            }
        }
        SyncKind::Stream => {
            if let (Some(to), Some(&from)) = (host_end, last_on_stream.get(&sync.stream)) {
                b.zero(from, to, CpEdgeType::SyncDependency);
            }
        }
        SyncKind::Event => {
            let awaited = launches.awaited(sync).and_then(|g| nodes.gpu[g]);
            if let (Some(to), Some(from)) = (host_end, awaited) {
                b.zero(from + 1, to, CpEdgeType::SyncDependency);
            }
        }
        SyncKind::StreamWaitEvent => {
            if let (Some(src), Some(dest)) = (launches.awaited(sync), launches.held_back(t, sync)) {
                waits_for.insert(dest, src);
            }
        }
    }
}

/// An activity's span, the synchronisation edge it waits on, and its launch edge (the
/// stream was empty at its launch) or kernel → kernel edge (from the previous activity on
/// its stream).
fn add_activity(
    b: &mut Builder,
    t: &Timeline,
    i: usize,
    nodes: &Nodes<'_>,
    (q_at_launch, q_at_start): (i64, i64),
    last_on_stream: &mut BTreeMap<i64, usize>,
    waits_for: &mut FastMap<usize, usize>,
) {
    let g = &t.gpu[i];
    let n = nodes.gpu[i].expect("selected activities have nodes");
    let class = if t.hta_type(g.name) == crate::hta::HtaKernelType::Communication {
        CriticalPathBound::GpuCommunication
    } else {
        CriticalPathBound::GpuCompute
    };
    b.timed(n, n + 1, CpEdgeType::Operator, class, Some(g.event_index));
    // The end of the awaited activity, when it is in the graph.
    let awaited_end = waits_for
        .remove(&i)
        .and_then(|src| nodes.gpu[src])
        .map(|s| s + 1);
    if let Some(from) = awaited_end {
        b.zero(from, n, CpEdgeType::SyncDependency);
    }
    let ts = |k: usize| b.nodes[k].ts;
    let ended_before = |at: i64| awaited_end.is_none_or(|e| ts(e) < at);
    let launch = g.launch.expect("selected activities have launches");
    let rt_start = t.host[launch].start;
    let prev = last_on_stream.get(&g.stream).copied();
    let empty = q_at_launch == 1 && q_at_start == 0;
    if empty && prev.is_none_or(|p| ts(p) < rt_start) && ended_before(rt_start) {
        if let Some(rn) = nodes.host[launch] {
            let bound = CriticalPathBound::KernelLaunchOverhead;
            b.timed(rn, n, CpEdgeType::KernelLaunchDelay, bound, None);
        }
    } else if let Some(p) = prev
        && ended_before(ts(p))
    {
        let bound = CriticalPathBound::KernelKernelOverhead;
        let attributed = Some(b.nodes[p].event_index);
        b.timed(p, n, CpEdgeType::KernelKernelDelay, bound, attributed);
    }
    last_on_stream.insert(g.stream, n + 1);
}

/// The longest path over a topological order, first node to last; None when the graph has
/// a cycle (HTA gives up too: `nx.NetworkXUnfeasible`) or no node.
fn longest_path(b: &Builder) -> Option<Vec<usize>> {
    let nodes = b.nodes.len();
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); nodes];
    let mut indeg = vec![0usize; nodes];
    for (k, e) in b.edges.iter().enumerate() {
        adj[e.begin].push(k);
        indeg[e.end] += 1;
    }
    let mut stack: Vec<usize> = (0..nodes).filter(|&v| indeg[v] == 0).collect();
    stack.sort_by_key(|&v| std::cmp::Reverse((b.nodes[v].ts, v)));
    let mut dist = vec![0i64; nodes];
    let mut pred: Vec<Option<usize>> = vec![None; nodes];
    let mut seen = 0;
    while let Some(u) = stack.pop() {
        seen += 1;
        for &k in &adj[u] {
            let e = &b.edges[k];
            let d = dist[u] + path_weight(e.weight);
            if pred[e.end].is_none() || d > dist[e.end] {
                dist[e.end] = d;
                pred[e.end] = Some(u);
            }
            indeg[e.end] -= 1;
            if indeg[e.end] == 0 {
                stack.push(e.end);
            }
        }
    }
    if seen != nodes {
        return None;
    }
    let (mut v, _) = dist
        .iter()
        .enumerate()
        .max_by_key(|(i, d)| (**d, std::cmp::Reverse(*i)))?;
    let mut path = vec![v];
    while let Some(u) = pred[v] {
        path.push(u);
        v = u;
    }
    path.reverse();
    Some(path)
}

/// The graph with its nodes numbered as HTA numbers them (by time, starts first at one
/// time, then in the order they were made).
fn renumbered(
    b: Builder,
    path: Option<Vec<usize>>,
    rank: Option<i64>,
    step: String,
    instance: usize,
) -> CriticalPathGraph {
    let mut order: Vec<usize> = (0..b.nodes.len()).collect();
    order.sort_by_key(|&v| (b.nodes[v].ts, !b.nodes[v].is_start, v));
    let mut id = vec![0usize; order.len()];
    for (new, &old) in order.iter().enumerate() {
        id[old] = new;
    }
    let nodes = order.iter().map(|&v| b.nodes[v]).collect();
    let edges = b
        .edges
        .into_iter()
        .map(|e| CpEdge {
            begin: id[e.begin],
            end: id[e.end],
            ..e
        })
        .collect();
    let path = path.map(|p| p.into_iter().map(|v| id[v]).collect());
    CriticalPathGraph {
        rank,
        step,
        instance,
        nodes,
        edges,
        path,
    }
}

impl CriticalPathGraph {
    /// The edges of the longest path, first to last (empty without a path).
    pub fn path_edges(&self) -> Vec<&CpEdge> {
        let at: FastMap<(usize, usize), &CpEdge> =
            self.edges.iter().map(|e| ((e.begin, e.end), e)).collect();
        let Some(path) = &self.path else {
            return Vec::new();
        };
        path.windows(2)
            .filter_map(|w| at.get(&(w[0], w[1])).copied())
            .collect()
    }

    /// The nodes some edge reaches or leaves (those of HTA's networkx graph).
    pub fn linked_nodes(&self) -> usize {
        let mut linked = vec![false; self.nodes.len()];
        for e in &self.edges {
            linked[e.begin] = true;
            linked[e.end] = true;
        }
        linked.iter().filter(|&&l| l).count()
    }

    /// The summary of the path: its length and its split by cause; None without a path.
    pub fn summary(&self) -> Option<CriticalPath> {
        self.path.as_ref()?;
        let on_path = self.path_edges();
        let length: i64 = on_path.iter().map(|e| path_weight(e.weight)).sum();
        let mut by: BTreeMap<CriticalPathBound, i64> = BTreeMap::new();
        for e in &on_path {
            if let Some(b) = e.bound {
                *by.entry(b).or_default() += path_weight(e.weight);
            }
        }
        let sync = CpEdgeType::SyncDependency;
        let share = |w: i64| {
            if length > 0 {
                100.0 * w as f64 / length as f64
            } else {
                0.0
            }
        };
        Some(CriticalPath {
            rank: self.rank,
            step: self.step.clone(),
            instance: self.instance,
            length_us: length as f64 / 1000.0,
            nodes: self.linked_nodes(),
            edges: self.edges.len(),
            path_edges: on_path.len(),
            sync_edges: self.edges.iter().filter(|e| e.kind == sync).count(),
            sync_edges_on_path: on_path.iter().filter(|e| e.kind == sync).count(),
            split: by.into_iter().map(|(b, w)| (b, share(w))).collect(),
        })
    }
}
