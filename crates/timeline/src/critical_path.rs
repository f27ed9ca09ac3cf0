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

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::hta::{is_operator, queue_series};
use crate::timeline::{GpuKind, SyncKind, Timeline};

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
    /// Nodes of the graph: a start and an end per CPU operator, runtime or driver call that
    /// starts in the step (and lasts), and per GPU activity whose launch call does.
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

#[derive(Clone, Copy)]
struct Edge {
    to: usize,
    weight: i64,
    bound: Option<CriticalPathBound>,
    sync: bool,
}

/// Adds an edge; a second edge between the same two nodes replaces the first, as in HTA's
/// graph (a networkx `DiGraph`, which has no parallel edges).
fn put_edge(adj: &mut [Vec<Edge>], from: usize, edge: Edge) {
    if from == edge.to {
        return;
    }
    match adj[from].iter_mut().find(|e| e.to == edge.to) {
        Some(old) => *old = edge,
        None => adj[from].push(edge),
    }
}

fn add_edge(
    adj: &mut [Vec<Edge>],
    from: usize,
    to: usize,
    weight: i64,
    bound: Option<CriticalPathBound>,
) {
    let edge = Edge {
        to,
        weight,
        bound,
        sync: false,
    };
    put_edge(adj, from, edge);
}

/// A synchronisation dependency: weight 0, no cause of its own.
fn add_sync_edge(adj: &mut [Vec<Edge>], from: usize, to: usize) {
    let edge = Edge {
        to,
        weight: 0,
        bound: None,
        sync: true,
    };
    put_edge(adj, from, edge);
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
/// None when there is no such instance.
pub fn critical_path(t: &Timeline, annotation: &str, instance: usize) -> Option<CriticalPath> {
    let (ws, we, step_name) = if annotation.is_empty() {
        let starts = t.host.iter().map(|h| h.start);
        let starts = starts.chain(t.gpu.iter().map(|g| g.start));
        let ends = t
            .host
            .iter()
            .map(|h| h.end)
            .chain(t.gpu.iter().map(|g| g.end));
        (starts.min()?, ends.max()?, "(whole trace)")
    } else {
        let mut anns: Vec<(i64, i64, &str)> = t
            .host
            .iter()
            .filter(|h| t.name(h.name).contains(annotation))
            .map(|h| (h.start, h.end, t.name(h.name)))
            .collect();
        anns.sort();
        *anns.get(instance)?
    };

    // Nodes: 2 per clipped event; host events first (index h*2, h*2+1), then GPU.
    let in_window = |s: i64| ws <= s && s <= we;
    let host_sel: Vec<usize> = (0..t.host.len())
        .filter(|&i| {
            let h = &t.host[i];
            in_window(h.start) && h.end > h.start
        })
        .collect();
    // HTA's view counts sync events and host events with a stream as GPU work
    // (`GpuKind::Other`); the path takes syncs from `t.syncs`, and those events are no
    // kernels of its graph.
    let gpu_sel: Vec<usize> = (0..t.gpu.len())
        .filter(|&i| {
            t.gpu[i].kind != GpuKind::Other
                && t.gpu[i].launch.is_some_and(|l| {
                    let h = &t.host[l];
                    in_window(h.start) && h.end > h.start
                })
        })
        .collect();
    let mut node_ts: Vec<i64> = Vec::new();
    let mut host_node: Vec<Option<usize>> = vec![None; t.host.len()];
    for &i in &host_sel {
        if is_operator(t.host[i].cat) {
            host_node[i] = Some(node_ts.len());
            node_ts.push(t.host[i].start);
            node_ts.push(t.host[i].end);
        }
    }
    let mut gpu_node: Vec<Option<usize>> = vec![None; t.gpu.len()];
    for &i in &gpu_sel {
        gpu_node[i] = Some(node_ts.len());
        node_ts.push(t.gpu[i].start);
        node_ts.push(t.gpu[i].end);
    }
    let mut adj: Vec<Vec<Edge>> = vec![Vec::new(); node_ts.len()];

    // CPU call stacks, per thread: a depth-first walk in nesting order.
    let mut threads: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for &i in &host_sel {
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
        let mut last_node: Option<usize> = None;
        let mut last_top: Option<usize> = None;
        let mut depth = 0usize;
        let mut stack: Vec<usize> = Vec::new();
        let exit = |adj: &mut [Vec<Edge>],
                    i: usize,
                    depth: &mut usize,
                    last_node: &mut Option<usize>,
                    last_top: &mut Option<usize>| {
            let Some(n) = host_node[i] else { return };
            *depth -= 1;
            let end = n + 1;
            if let Some(l) = *last_node {
                let blocking = BLOCKING.contains(&t.name(t.host[i].name));
                let w = if blocking {
                    0
                } else {
                    node_ts[end] - node_ts[l]
                };
                add_edge(adj, l, end, w, Some(CriticalPathBound::CpuBound));
            }
            if *depth == 0 {
                *last_node = None;
                *last_top = Some(end);
            } else {
                *last_node = Some(end);
            }
        };
        for &i in evs.iter() {
            let h = &t.host[i];
            while let Some(&top) = stack.last() {
                let p = &t.host[top];
                if h.start < p.end && h.end <= p.end {
                    break;
                }
                stack.pop();
                exit(&mut adj, top, &mut depth, &mut last_node, &mut last_top);
            }
            stack.push(i);
            let Some(n) = host_node[i] else { continue };
            if depth == 0
                && let Some(top) = last_top
            {
                add_edge(&mut adj, top, n, 0, None);
            }
            depth += 1;
            if let Some(l) = last_node {
                add_edge(
                    &mut adj,
                    l,
                    n,
                    node_ts[n] - node_ts[l],
                    Some(CriticalPathBound::CpuBound),
                );
            }
            last_node = Some(n);
        }
        while let Some(top) = stack.pop() {
            exit(&mut adj, top, &mut depth, &mut last_node, &mut last_top);
        }
    }

    // GPU activities in start order, with the queue length at their launch and start.
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
    // Synchronisation events: a stream's sync when its host call is in the window (as for
    // activities), a host-wide one when it starts in the window, every stream wait.
    let sync_sel: Vec<usize> = (0..t.syncs.len())
        .filter(|&i| {
            let y = &t.syncs[i];
            let Some(rt) = y.runtime else { return false };
            let h = &t.host[rt];
            match y.kind {
                SyncKind::StreamWaitEvent => true,
                _ if y.stream >= 0 => in_window(h.start) && h.end > h.start,
                _ => in_window(y.start) && y.end > y.start,
            }
        })
        .collect();

    // Launches per (device, stream) and per (host thread, stream) in host time order, over
    // the whole trace (HTA looks them up in the unclipped frame): what an event sync waits
    // for, and what a stream wait holds back.
    let mut on_stream: HashMap<(i64, i64), Vec<(i64, usize)>> = HashMap::new();
    let mut from_thread: HashMap<(u32, i64), Vec<(i64, usize)>> = HashMap::new();
    for (i, g) in t.gpu.iter().enumerate() {
        let Some(l) = g.launch else { continue };
        if g.kind == GpuKind::Other {
            continue;
        }
        let h = &t.host[l];
        if LAUNCHES.contains(&t.name(h.name)) {
            on_stream
                .entry((g.device, g.stream))
                .or_default()
                .push((h.start, i));
            from_thread
                .entry((h.thread, g.stream))
                .or_default()
                .push((h.start, i));
        }
    }
    for v in on_stream.values_mut().chain(from_thread.values_mut()) {
        v.sort_unstable();
    }
    let records: HashMap<i64, i64> = t
        .host
        .iter()
        .filter(|h| t.name(h.name) == "cudaEventRecord")
        .filter_map(|h| Some((h.correlation?, h.start)))
        .collect();
    // The activity launched last on the recorded stream at or before the cudaEventRecord.
    let awaited = |i: usize| -> Option<usize> {
        let y = &t.syncs[i];
        let recorded = *records.get(&y.wait_on_record?)?;
        let v = on_stream.get(&(y.device, y.wait_on_stream?))?;
        let k = v.partition_point(|&(ts, _)| ts <= recorded);
        k.checked_sub(1).map(|k| v[k].1)
    };
    // The first activity the waiting thread launches on the waiting stream after the wait.
    let held_back = |i: usize| -> Option<usize> {
        let y = &t.syncs[i];
        let h = &t.host[y.runtime?];
        let v = from_thread.get(&(h.thread, y.stream))?;
        v.get(v.partition_point(|&(ts, _)| ts < h.start))
            .map(|&(_, g)| g)
    };

    // Activities in start order and syncs in end order (a stream sync can overlap the copy
    // it waits for), with the queue length at each activity's launch and start.
    enum Item {
        Gpu(usize),
        Sync(usize),
    }
    let mut order: Vec<(i64, i64, Item)> = gpu_sel
        .iter()
        .map(|&i| (t.gpu[i].start, t.gpu[i].event_index, Item::Gpu(i)))
        .chain(
            sync_sel
                .iter()
                .map(|&i| (t.syncs[i].end, t.syncs[i].event_index, Item::Sync(i))),
        )
        .collect();
    order.sort_unstable_by_key(|&(ts, index, _)| (ts, index));
    let mut last_on_stream: BTreeMap<i64, usize> = BTreeMap::new();
    // Destination activity → the activity it waits for (a pending `Stream Wait Event`).
    let mut waits_for: HashMap<usize, usize> = HashMap::new();
    for (_, _, item) in &order {
        let i = match *item {
            Item::Gpu(i) => i,
            Item::Sync(y) => {
                let sync = &t.syncs[y];
                let host_end = sync.runtime.and_then(|r| host_node[r]).map(|n| n + 1);
                match sync.kind {
                    SyncKind::Context => {
                        if let Some(to) = host_end {
                            for &from in last_on_stream.values() {
                                add_sync_edge(&mut adj, from, to);
                            }
                        }
                    }
                    SyncKind::Stream => {
                        if let (Some(to), Some(&from)) =
                            (host_end, last_on_stream.get(&sync.stream))
                        {
                            add_sync_edge(&mut adj, from, to);
                        }
                    }
                    SyncKind::Event => {
                        if let (Some(to), Some(from)) =
                            (host_end, awaited(y).and_then(|g| gpu_node[g]))
                        {
                            add_sync_edge(&mut adj, from + 1, to);
                        }
                    }
                    SyncKind::StreamWaitEvent => {
                        if let (Some(src), Some(dest)) = (awaited(y), held_back(y)) {
                            waits_for.insert(dest, src);
                        }
                    }
                }
                continue;
            }
        };
        let g = &t.gpu[i];
        let n = gpu_node[i].expect("selected activities have nodes");
        let class = if t.hta_type(g.name) == crate::hta::HtaKernelType::Communication {
            CriticalPathBound::GpuCommunication
        } else {
            CriticalPathBound::GpuCompute
        };
        add_edge(&mut adj, n, n + 1, g.end - g.start, Some(class));
        // The end of the awaited activity, when it is in the graph.
        let awaited_end = waits_for
            .remove(&i)
            .and_then(|src| gpu_node[src])
            .map(|s| s + 1);
        if let Some(from) = awaited_end {
            add_sync_edge(&mut adj, from, n);
        }
        let ended_before = |ts: i64| awaited_end.is_none_or(|e| node_ts[e] < ts);
        let launch = g.launch.expect("selected activities have launches");
        let rt_start = t.host[launch].start;
        let prev = last_on_stream.get(&g.stream).copied();
        let empty = q_at_launch[i] == 1 && q_at_start[i] == 0;
        if empty && prev.is_none_or(|p| node_ts[p] < rt_start) && ended_before(rt_start) {
            if let Some(rn) = host_node[launch] {
                add_edge(
                    &mut adj,
                    rn,
                    n,
                    g.start - rt_start,
                    Some(CriticalPathBound::KernelLaunchOverhead),
                );
            }
        } else if let Some(p) = prev
            && ended_before(node_ts[p])
        {
            add_edge(
                &mut adj,
                p,
                n,
                g.start - node_ts[p],
                Some(CriticalPathBound::KernelKernelOverhead),
            );
        }
        last_on_stream.insert(g.stream, n + 1);
    }

    // Longest path over a topological order (HTA zeroes weights of −1 µs, rounding noise).
    let nodes = node_ts.len();
    let mut indeg = vec![0usize; nodes];
    let mut edges = 0;
    let mut sync_edges = 0;
    for e in adj.iter_mut().flatten() {
        sync_edges += usize::from(e.sync);
        if e.weight < 0 && e.weight >= -1000 {
            e.weight = 0;
        }
        indeg[e.to] += 1;
        edges += 1;
    }
    let mut queue: Vec<usize> = (0..nodes).filter(|&v| indeg[v] == 0).collect();
    queue.sort_by_key(|&v| std::cmp::Reverse((node_ts[v], v)));
    let mut dist = vec![0i64; nodes];
    let mut pred: Vec<Option<(usize, &Edge)>> = vec![None; nodes];
    let mut seen = 0;
    let mut stack = queue;
    while let Some(u) = stack.pop() {
        seen += 1;
        for e in &adj[u] {
            let d = dist[u] + e.weight;
            if pred[e.to].is_none() || d > dist[e.to] {
                dist[e.to] = d;
                pred[e.to] = Some((u, e));
            }
            indeg[e.to] -= 1;
            if indeg[e.to] == 0 {
                stack.push(e.to);
            }
        }
    }
    if seen != nodes {
        // A cycle: HTA gives up too (`nx.NetworkXUnfeasible`).
        return None;
    }
    let (mut v, &length) = dist
        .iter()
        .enumerate()
        .max_by_key(|(i, d)| (**d, std::cmp::Reverse(*i)))?;
    let mut by: BTreeMap<CriticalPathBound, i64> = BTreeMap::new();
    let mut path_edges = 0;
    let mut sync_edges_on_path = 0;
    while let Some((u, e)) = pred[v] {
        if let Some(b) = e.bound {
            *by.entry(b).or_default() += e.weight;
        }
        path_edges += 1;
        sync_edges_on_path += usize::from(e.sync);
        v = u;
    }
    let split = by
        .into_iter()
        .map(|(b, w)| {
            (
                b,
                if length > 0 {
                    100.0 * w as f64 / length as f64
                } else {
                    0.0
                },
            )
        })
        .collect();
    Some(CriticalPath {
        rank: t.rank,
        step: step_name.to_owned(),
        instance,
        length_us: length as f64 / 1000.0,
        nodes,
        edges,
        path_edges,
        sync_edges,
        sync_edges_on_path,
        split,
    })
}
