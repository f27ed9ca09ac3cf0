//! The critical path of one step of one rank, with the graph of HTA 0.5.0's
//! `critical_path_analysis` (read from `hta/analyzers/critical_path_analysis.py`):
//! a start and an end node per CPU operator, runtime call and GPU activity; edges for CPU
//! op nesting (weighted by the time between consecutive nodes of a thread's call stack;
//! consecutive top-level ops linked by zero-weight dependencies), each activity's duration,
//! a launch edge from the runtime call when the stream was empty, else a kernel → kernel
//! edge from the previous activity on the stream; then the longest path.
//!
//! Not modelled yet (FIXME): the synchronisation edges of `cuda_sync` events (stream, context
//! and event syncs, `cudaStreamWaitEvent`); traces without them (param-dlrm) are unaffected.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::hta::{is_operator, queue_series};
use crate::timeline::Timeline;

/// What an edge of the path stands for (HTA's `bound_by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Bound {
    CpuBound,
    GpuCompute,
    GpuCommunication,
    KernelKernelOverhead,
    KernelLaunchOverhead,
}

impl Bound {
    pub fn label(self) -> &'static str {
        match self {
            Bound::CpuBound => "cpu_bound",
            Bound::GpuCompute => "gpu_compute_bound",
            Bound::GpuCommunication => "gpu_communication_bound",
            Bound::KernelKernelOverhead => "gpu_kernel_kernel_overhead",
            Bound::KernelLaunchOverhead => "gpu_kernel_launch_overhead",
        }
    }
}

/// The summary of a step's critical path.
#[derive(Debug, Clone, Serialize)]
pub struct CriticalPath {
    pub rank: Option<i64>,
    /// The step annotation (`ProfilerStep#N`) and its instance number (0 = first).
    pub step: String,
    pub instance: usize,
    pub length_us: f64,
    pub nodes: usize,
    pub edges: usize,
    pub path_edges: usize,
    /// Share of the path's length per cause, in %, in `Bound` order.
    pub split: Vec<(Bound, f64)>,
}

#[derive(Clone, Copy)]
struct Edge {
    to: usize,
    weight: i64,
    bound: Option<Bound>,
}

fn add_edge(adj: &mut [Vec<Edge>], from: usize, to: usize, weight: i64, bound: Option<Bound>) {
    if from != to {
        adj[from].push(Edge { to, weight, bound });
    }
}

const BLOCKING: [&str; 6] = [
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize",
    "cudaEventQuery",
    "cudaEventSynchronize",
    "cudaMemcpy",
    "cudaMemcpyAsync",
];

/// The critical path of instance `instance` (in start order) of the host annotations whose
/// name contains `annotation`. None when there is no such instance.
pub fn critical_path(t: &Timeline, annotation: &str, instance: usize) -> Option<CriticalPath> {
    let mut anns: Vec<(i64, i64, &str)> = t
        .host
        .iter()
        .filter(|h| t.name(h.name).contains(annotation))
        .map(|h| (h.start, h.end, t.name(h.name)))
        .collect();
    anns.sort();
    let &(ws, we, step_name) = anns.get(instance)?;

    // Nodes: 2 per clipped event; host events first (index h*2, h*2+1), then GPU.
    let in_window = |s: i64| ws <= s && s <= we;
    let host_sel: Vec<usize> = (0..t.host.len())
        .filter(|&i| {
            let h = &t.host[i];
            in_window(h.start) && h.end > h.start
        })
        .collect();
    let gpu_sel: Vec<usize> = (0..t.gpu.len())
        .filter(|&i| {
            t.gpu[i].launch.is_some_and(|l| {
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
                add_edge(adj, l, end, w, Some(Bound::CpuBound));
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
                    Some(Bound::CpuBound),
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
    let mut order = gpu_sel.clone();
    order.sort_by_key(|&i| (t.gpu[i].start, t.gpu[i].event_index));
    let mut last_on_stream: BTreeMap<i64, usize> = BTreeMap::new();
    for &i in &order {
        let g = &t.gpu[i];
        let n = gpu_node[i].expect("selected activities have nodes");
        let class = if crate::hta::hta_kernel_type(t.name(g.name))
            == crate::hta::HtaKernelType::Communication
        {
            Bound::GpuCommunication
        } else {
            Bound::GpuCompute
        };
        add_edge(&mut adj, n, n + 1, g.end - g.start, Some(class));
        let launch = g.launch.expect("selected activities have launches");
        let rt_start = t.host[launch].start;
        let prev = last_on_stream.get(&g.stream).copied();
        let empty = q_at_launch[i] == 1 && q_at_start[i] == 0;
        if empty && prev.is_none_or(|p| node_ts[p] < rt_start) {
            if let Some(rn) = host_node[launch] {
                add_edge(
                    &mut adj,
                    rn,
                    n,
                    g.start - rt_start,
                    Some(Bound::KernelLaunchOverhead),
                );
            }
        } else if let Some(p) = prev {
            add_edge(
                &mut adj,
                p,
                n,
                g.start - node_ts[p],
                Some(Bound::KernelKernelOverhead),
            );
        }
        last_on_stream.insert(g.stream, n + 1);
    }

    // Longest path over a topological order (HTA zeroes weights of −1 µs, rounding noise).
    let nodes = node_ts.len();
    let mut indeg = vec![0usize; nodes];
    let mut edges = 0;
    for e in adj.iter_mut().flatten() {
        if e.weight < 0 && e.weight >= -1000 {
            e.weight = 0;
        }
        indeg[e.to] += 1;
        edges += 1;
    }
    let mut queue: Vec<usize> = (0..nodes).filter(|&v| indeg[v] == 0).collect();
    queue.sort_by_key(|&v| std::cmp::Reverse((node_ts[v], v)));
    let mut dist = vec![0i64; nodes];
    let mut pred: Vec<Option<(usize, Option<Bound>, i64)>> = vec![None; nodes];
    let mut seen = 0;
    let mut stack = queue;
    while let Some(u) = stack.pop() {
        seen += 1;
        for e in &adj[u] {
            let d = dist[u] + e.weight;
            if pred[e.to].is_none() || d > dist[e.to] {
                dist[e.to] = d;
                pred[e.to] = Some((u, e.bound, e.weight));
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
    let mut by: BTreeMap<Bound, i64> = BTreeMap::new();
    let mut path_edges = 0;
    while let Some((u, bound, w)) = pred[v] {
        if let Some(b) = bound {
            *by.entry(b).or_default() += w;
        }
        path_edges += 1;
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
        split,
    })
}
