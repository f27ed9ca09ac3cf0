//! The dependency graph of a capture: its nodes (host leaf events, GPU activities), the
//! edges between them with their measured delays, and a topological order.

use serde::Serialize;
use trace_model::{Capture, HostKind, Nanos, StreamId, ThreadId, nesting_order};

use crate::CannotReplay;

/// How long after the event it depends on (a launch call's return, the end of the
/// stream's previous activity, of a producer on another stream) an activity may start and
/// the graph still count the gap as latency it explains: driver submission and scheduling
/// take a few to a few tens of microseconds (the same figure as analysis's
/// `LAUNCH_LATENCY`). A longer wait has a cause the graph does not hold.
pub const EXPLAIN_LIMIT: Nanos = Nanos(30_000);

/// How late, as a share of its idle time, a host thread may resume after another
/// thread's leaf ended and still count as woken by it, where that is more than
/// [`EXPLAIN_LIMIT`] (see [`wake_limit`]). The same figure as `analysis::WAKE_SHARE`,
/// which labels a woken thread's idle time by its waker by the same rule (a test holds
/// the two equal).
pub const WAKE_SHARE: f64 = 0.05;

/// How soon after another thread's leaf ends a thread idle for `idle` must resume for
/// the graph to infer that the leaf woke it: [`EXPLAIN_LIMIT`], or [`WAKE_SHARE`] of the
/// idle time when that is longer. A hand-off between threads costs more than a kernel
/// launch when the woken side returns through Python (PyTorch's autograd thread starts a
/// backward pass a few hundred microseconds after the main thread's last forward launch,
/// and the main thread resumes as long after the backward's last launch), yet stays small
/// beside a wait of many milliseconds: a leaf that ended within a twentieth of the wait
/// before the resume is taken as what the thread waited for.
pub fn wake_limit(idle: Nanos) -> Nanos {
    EXPLAIN_LIMIT.max(Nanos((idle.0 as f64 * WAKE_SHARE) as i64))
}

/// The share of GPU activities that must be linked to a launch call for a replay: below
/// it the capture lacks the correlation ids that tie the GPU to the host.
const MIN_LINKED_SHARE: f64 = 0.5;

/// A row of the timeline: a host thread or a GPU stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lane {
    /// A host thread.
    Host(ThreadId),
    /// A GPU stream.
    Stream(StreamId),
}

/// What a node of the graph is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// A host call that launched GPU work.
    Launch,
    /// A host call that blocks until GPU work is done (device, stream or event
    /// synchronisation, a synchronous copy).
    Sync,
    /// Any other runtime call.
    Runtime,
    /// Host work: a CPU op, Python function or annotation with no event inside it.
    Cpu,
    /// A GPU activity (kernel, copy, set).
    Gpu,
}

/// One node: a host leaf event or a GPU activity, with its measured times.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Node {
    pub(crate) kind: NodeKind,
    pub(crate) lane: Lane,
    pub(crate) start: Nanos,
    pub(crate) end: Nanos,
    /// Index into `Capture::host_events` (host nodes) or `Capture::activities`.
    pub(crate) source: u32,
}

/// What an edge says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EdgeKind {
    /// A host thread's next leaf event starts after the previous one ends, plus the host
    /// time between them (measured; split into time inside CPU ops and outside them).
    HostOrder,
    /// An activity starts after its launch call returns, plus the launch latency
    /// (correlation ids; a graph launch to each of its kernels).
    Launch,
    /// A stream's next activity starts after its previous one ends.
    StreamOrder,
    /// An activity waited for one on another stream of its GPU (inferred: it started
    /// within [`EXPLAIN_LIMIT`] of that one's end, after waiting longer than its launch and
    /// stream order explain).
    CrossStream,
    /// A synchronising call returns after the activities it waited for end.
    Sync,
    /// A host thread that was idle more than [`EXPLAIN_LIMIT`] resumed within
    /// [`wake_limit`] of its idle time after a leaf of another thread of its process ended (inferred: a wake-up, such as the
    /// autograd engine's thread starting a backward pass, or a thread joining another).
    /// It keeps the thread waiting when its own gap shrinks.
    CrossThread,
    /// A host leaf longer than [`EXPLAIN_LIMIT`] that ended within [`wake_limit`] of its
    /// duration after a leaf of another thread of its process ended returns after that
    /// one (inferred: a join, such as `run_backward` on the main thread returning when
    /// the autograd thread's backward pass is done). It keeps the leaf's end when its own
    /// time shrinks.
    Join,
}

/// One incoming edge of a node (the destination is implied by where it is stored).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Edge {
    pub(crate) src: u32,
    pub(crate) kind: EdgeKind,
    /// For every kind but `HostOrder` (whose delay is the destination's host gap, a
    /// duration a scenario may change).
    pub(crate) delay: Nanos,
}

/// The durations a replay runs with: measured ones, or a scenario's.
#[derive(Debug, Clone, PartialEq)]
pub struct Durations {
    /// Each node's own duration (for a synchronising call that waited: the time it took
    /// after the GPU work it waited for ended).
    pub(crate) dur: Vec<Nanos>,
    /// For host nodes: the time between the thread's previous leaf and this one spent
    /// inside CPU ops (op self time).
    pub(crate) gap_in_ops: Vec<Nanos>,
    /// For host nodes: the time between the previous leaf and this one outside every CPU
    /// op (untraced Python, idle).
    pub(crate) gap_outside_ops: Vec<Nanos>,
}

/// Counts that say how much of the capture the graph explains (all `measured`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GraphStats {
    /// Host leaf events (nodes).
    pub host_nodes: usize,
    /// GPU activities (nodes).
    pub gpu_nodes: usize,
    /// Activities linked to a launch call.
    pub linked_activities: usize,
    /// Edges by kind: host order, launch, stream order, cross-stream (inferred), sync.
    pub host_order_edges: usize,
    /// Launch → activity edges.
    pub launch_edges: usize,
    /// Stream order edges.
    pub stream_order_edges: usize,
    /// Inferred cross-stream waits.
    pub cross_stream_edges: usize,
    /// Synchronising call ← activity edges.
    pub sync_edges: usize,
    /// Inferred wake-ups of one host thread by another.
    pub cross_thread_edges: usize,
    /// Join edges inferred ([`EdgeKind::Join`]).
    pub join_edges: usize,
    /// Activities that started more than [`EXPLAIN_LIMIT`] after every event they depend
    /// on in the graph, with no producer on another stream in reach: a dependency the
    /// capture does not record (an event wait, another rank, a graph's internal order).
    pub unexplained_waits: usize,
    /// Their waits beyond the typical latency, summed: time the replay cannot reproduce.
    pub unexplained_time: Nanos,
    /// The unexplained waits grouped by what waited (its class, what launched it and the
    /// edge it waited longest after), most time first: the edges the capture lacks.
    pub unexplained_by: Vec<UnexplainedWaits>,
    /// Activities that started before their launch call began (host and GPU clocks that
    /// disagree): the replay starts them at their launch call.
    pub skewed_starts: usize,
    /// How much earlier than their launch calls they started, summed.
    pub skew_time: Nanos,
    /// Nodes left out of the topological order by a cycle (inconsistent clocks), replayed
    /// in measured order.
    pub cycle_nodes: usize,
    /// The typical delay from a launch call's return to its activity's start where the
    /// launch was the last dependency (median).
    pub launch_latency: Nanos,
    /// The typical gap between back-to-back activities of a stream (median).
    pub stream_gap: Nanos,
}

/// Unexplained waits of one kind (see [`GraphStats::unexplained_by`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnexplainedWaits {
    /// What waited, in words (`gemm launched by cudaGraphLaunch, after its stream order`).
    pub what: String,
    /// How many.
    pub count: usize,
    /// Their waits beyond the typical latency, summed.
    pub time: Nanos,
}

/// The dependency graph of one capture.
#[derive(Debug, Clone)]
pub struct Graph {
    pub(crate) nodes: Vec<Node>,
    /// Nodes `0..host_nodes` are host leaves; node `host_nodes + i` is activity `i`.
    pub(crate) host_nodes: usize,
    /// Incoming edges of node `n`: `edges[offsets[n]..offsets[n + 1]]`, the start edges
    /// first, then from `split[n]` the end edges (sync, join).
    pub(crate) offsets: Vec<u32>,
    pub(crate) split: Vec<u32>,
    pub(crate) edges: Vec<Edge>,
    /// Every node, each after the sources of its edges (cycle nodes last).
    pub(crate) order: Vec<u32>,
    /// Destinations of node `n`'s outgoing edges: `out[out_offsets[n]..out_offsets[n + 1]]`.
    pub(crate) out_offsets: Vec<u32>,
    pub(crate) out: Vec<u32>,
    /// The replay of the measured durations (every scenario's replay starts from it).
    pub(crate) baseline: crate::replay::Timeline,
    pub(crate) measured: Durations,
    /// For host nodes: the part of `gap_outside_ops` during which the stream of the
    /// thread's next launch runs nothing (a gap with some is one that idles the GPU; only
    /// those are what [`crate::Change::HostGapsRemoved`] removes).
    pub(crate) gap_outside_idle: Vec<Nanos>,
    /// The launching paths, for the host sub-cause scenarios ([`crate::Change::HostCause`]).
    pub(crate) paths: crate::paths::LaunchingPaths,
    /// For each activity: when it was issued (its launch call's start, else its own).
    pub(crate) issued: Vec<Nanos>,
    /// The leaves of the thread that launches most GPU work, in order: step boundaries
    /// are placed relative to them.
    pub(crate) anchor: Vec<u32>,
    pub(crate) stats: GraphStats,
}

impl Graph {
    /// Builds the graph of `capture` (see the crate docs for its edges), or says why it
    /// cannot: no GPU activities, no host events (a GPU-only trace), or too few activities
    /// linked to a launch call (no correlation ids).
    pub fn build(capture: &Capture) -> Result<Graph, CannotReplay> {
        let activities = capture.activities();
        if activities.is_empty() {
            return Err(CannotReplay::NoActivities);
        }
        if capture.host_events().is_empty() {
            return Err(CannotReplay::NoHostEvents);
        }
        let linked = activities.iter().filter(|a| a.launch().is_some()).count();
        if (linked as f64) < MIN_LINKED_SHARE * activities.len() as f64 {
            return Err(CannotReplay::Unlinked {
                linked,
                activities: activities.len(),
            });
        }
        let mut b = Builder::default();
        b.stats.linked_activities = linked;
        b.host_leaves(capture);
        b.cross_thread_edges(capture);
        b.activities(capture);
        b.idle_gaps(capture);
        b.sync_edges(capture);
        let mut graph = b.finish(capture);
        graph.baseline = graph.replay(graph.measured());
        let paths = crate::paths::LaunchingPaths::mark_launching_paths(&graph);
        graph.paths.set_paths(paths);
        Ok(graph)
    }

    /// The measured durations: replaying them reproduces the capture as far as the graph
    /// explains it.
    pub fn measured(&self) -> &Durations {
        &self.measured
    }

    /// How much of the capture the graph explains.
    pub fn stats(&self) -> &GraphStats {
        &self.stats
    }

    /// Nodes in the graph.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the graph has no nodes (never, for a graph that [`Graph::build`] made).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub(crate) fn in_edges(&self, node: usize) -> &[Edge] {
        &self.edges[self.offsets[node] as usize..self.offsets[node + 1] as usize]
    }
}

/// Whether a host call blocks until GPU work finishes: device, stream and event
/// synchronisation and the synchronous copies (a runtime copy call without `Async`) —
/// the rule of analysis's `is_synchronising_call`, which this crate cannot call.
pub fn is_synchronising_call(name: &str) -> bool {
    name.contains("ynchronize")
        || ((name.starts_with("cuda") || name.starts_with("hip") || name.starts_with("cuMemcpy"))
            && name.contains("Memcpy")
            && !name.contains("Async"))
}

/// An edge before its delay is decided: where it comes from and how long after that
/// source's time its destination started.
struct Candidate {
    dst: u32,
    src: u32,
    kind: EdgeKind,
    slack: Nanos,
    binding: bool,
    explained: bool,
}

#[derive(Default)]
struct Builder {
    nodes: Vec<Node>,
    dur: Vec<Nanos>,
    gap_in_ops: Vec<Nanos>,
    gap_outside_ops: Vec<Nanos>,
    gap_outside_idle: Vec<Nanos>,
    /// Edges whose delay is decided.
    edges: Vec<(u32, Edge)>,
    candidates: Vec<Candidate>,
    host_node_of: Vec<u32>,
    host_nodes: usize,
    issued: Vec<Nanos>,
    stats: GraphStats,
}

const NONE: u32 = u32::MAX;

impl Builder {
    /// Each thread's leaf events (those with no event inside them) in order, chained by
    /// host-order edges whose delay is the measured time between them.
    fn host_leaves(&mut self, capture: &Capture) {
        let events = capture.host_events();
        self.host_node_of = vec![NONE; events.len()];
        // Whether each name is a synchronising call, decided once per name (0: not yet).
        let mut sync_name = vec![0u8; capture.strings().len()];
        let mut synchronising = |name: trace_model::StringId| {
            let known = &mut sync_name[name.index()];
            if *known == 0 {
                *known = 1 + u8::from(is_synchronising_call(capture.name(name)));
            }
            *known == 2
        };
        for thread in capture.threads() {
            let lo = events.partition_point(|e| e.thread < thread.id);
            let hi = events.partition_point(|e| e.thread <= thread.id);
            let mut order: Vec<usize> = (lo..hi).collect();
            order.sort_by_key(|&i| nesting_order(&events[i]));
            let ops = merged(
                order
                    .iter()
                    .map(|&i| &events[i])
                    .filter(|e| e.kind == HostKind::CpuOp)
                    .map(|e| (e.start, e.end())),
            );
            let mut cover = 0;
            let mut prev: Option<u32> = None;
            for (p, &i) in order.iter().enumerate() {
                let e = &events[i];
                let leaf = order
                    .get(p + 1)
                    .is_none_or(|&next| events[next].start >= e.end());
                if !leaf {
                    continue;
                }
                let kind = match e.kind {
                    HostKind::Launch => NodeKind::Launch,
                    HostKind::Runtime if synchronising(e.name) => NodeKind::Sync,
                    HostKind::Runtime => NodeKind::Runtime,
                    _ => NodeKind::Cpu,
                };
                let n = self.nodes.len() as u32;
                self.host_node_of[i] = n;
                self.nodes.push(Node {
                    kind,
                    lane: Lane::Host(thread.id),
                    start: e.start,
                    end: e.end(),
                    source: i as u32,
                });
                self.dur.push(e.dur);
                match prev {
                    Some(prev) => {
                        let from = self.nodes[prev as usize].end;
                        let gap = (e.start - from).max(Nanos::ZERO);
                        let inside = overlap(&ops, &mut cover, from, e.start);
                        self.gap_in_ops.push(inside);
                        self.gap_outside_ops.push(gap - inside);
                        // Decided once the activities are known (`idle_gaps`).
                        self.gap_outside_idle.push(Nanos::ZERO);
                        self.edges.push((
                            n,
                            Edge {
                                src: prev,
                                kind: EdgeKind::HostOrder,
                                delay: Nanos::ZERO,
                            },
                        ));
                        self.stats.host_order_edges += 1;
                    }
                    None => {
                        self.gap_in_ops.push(Nanos::ZERO);
                        self.gap_outside_ops.push(Nanos::ZERO);
                        self.gap_outside_idle.push(Nanos::ZERO);
                    }
                }
                prev = Some(n);
            }
        }
        self.host_nodes = self.nodes.len();
        self.stats.host_nodes = self.host_nodes;
    }

    /// For each host leaf with a gap before it outside every CPU op: how much of that gap
    /// the stream of the thread's next launch (this leaf's, or a later one's) spent with
    /// nothing running, i.e. waiting for the host (the gaps that idle the GPU).
    fn idle_gaps(&mut self, capture: &Capture) {
        // The stream each launch call's activity runs on.
        let mut launch_stream: Vec<Option<StreamId>> = vec![None; self.host_nodes];
        for a in capture.activities() {
            if let Some(l) = a.launch() {
                let n = self.host_node_of[l.index()];
                if n != NONE {
                    launch_stream[n as usize].get_or_insert(a.stream);
                }
            }
        }
        let busy: Vec<Vec<(Nanos, Nanos)>> = capture
            .streams()
            .iter()
            .map(|s| {
                merged(
                    capture
                        .stream_activities(s.id)
                        .iter()
                        .map(|a| (a.start, a.end())),
                )
            })
            .collect();
        let events = capture.host_events();
        let mut next: Option<StreamId> = None;
        let mut ops: Vec<(Nanos, Nanos)> = Vec::new();
        let mut ops_thread = None;
        for n in (0..self.host_nodes).rev() {
            let node = self.nodes[n];
            let Lane::Host(thread) = node.lane else {
                continue;
            };
            if ops_thread != Some(thread) {
                ops_thread = Some(thread);
                next = None;
                let mut mine: Vec<(Nanos, Nanos)> = capture
                    .thread_events(thread)
                    .iter()
                    .filter(|e| e.kind == HostKind::CpuOp)
                    .map(|e| (e.start, e.end()))
                    .collect();
                // Nearly in order already: the stable sort finds the runs (equal
                // intervals are alike, so the result is the unstable sort's).
                mine.sort();
                ops = merged(mine.into_iter());
            }
            if let Some(s) = launch_stream[n] {
                next = Some(s);
            }
            let gap = self.gap_outside_ops[n];
            let (Some(stream), true) = (next, gap > Nanos::ZERO) else {
                continue;
            };
            let to = events[node.source as usize].start;
            let from = to - self.gap_in_ops[n] - gap;
            self.gap_outside_idle[n] = outside_idle(&ops, &busy[stream.index()], from, to).min(gap);
        }
    }

    /// For each host leaf after a gap longer than [`EXPLAIN_LIMIT`], the latest leaf of
    /// another thread of the same process that ended within [`wake_limit`] of the gap
    /// before it: the event that woke it.
    fn cross_thread_edges(&mut self, capture: &Capture) {
        let pid = |node: &Node| match node.lane {
            Lane::Host(t) => capture.thread(t).pid,
            Lane::Stream(_) => 0,
        };
        let mut by_end: Vec<(i64, Nanos, u32)> = (0..self.host_nodes)
            .map(|n| (pid(&self.nodes[n]), self.nodes[n].end, n as u32))
            .collect();
        // Each thread's leaves end in order: the stable sort merges the runs (every key
        // is distinct, so the result is the unstable sort's).
        by_end.sort();
        for n in 0..self.host_nodes {
            let node = self.nodes[n];
            let idle = self.gap_in_ops[n] + self.gap_outside_ops[n];
            if idle <= EXPLAIN_LIMIT {
                continue;
            }
            let limit = wake_limit(idle);
            let key = pid(&node);
            let upto = by_end.partition_point(|&(p, end, _)| (p, end) <= (key, node.start));
            let waker = by_end[..upto]
                .iter()
                .rev()
                .take_while(|&&(p, end, _)| p == key && node.start - end <= limit)
                .find(|&&(_, _, w)| self.nodes[w as usize].lane != node.lane);
            if let Some(&(_, end, w)) = waker {
                // The idle time was a wait, not host work: the wake-up edge carries it.
                self.gap_in_ops[n] = Nanos::ZERO;
                self.gap_outside_ops[n] = Nanos::ZERO;
                self.gap_outside_idle[n] = Nanos::ZERO;
                self.edges.push((
                    n as u32,
                    Edge {
                        src: w,
                        kind: EdgeKind::CrossThread,
                        delay: node.start - end,
                    },
                ));
                self.stats.cross_thread_edges += 1;
            }
        }
        // Joins: a long leaf that returned just after another thread's leaf ended.
        for n in 0..self.host_nodes {
            let node = self.nodes[n];
            let own = node.end - node.start;
            if own <= EXPLAIN_LIMIT {
                continue;
            }
            let limit = wake_limit(own);
            let key = pid(&node);
            let upto = by_end.partition_point(|&(p, end, _)| (p, end) <= (key, node.end));
            let joined = by_end[..upto]
                .iter()
                .rev()
                .take_while(|&&(p, end, _)| p == key && node.end - end <= limit)
                .find(|&&(_, end, w)| self.nodes[w as usize].lane != node.lane && end > node.start);
            if let Some(&(_, end, w)) = joined {
                self.edges.push((
                    n as u32,
                    Edge {
                        src: w,
                        kind: EdgeKind::Join,
                        delay: node.end - end,
                    },
                ));
                self.stats.join_edges += 1;
            }
        }
    }

    /// One node per activity, with its launch and stream-order candidates; where neither
    /// explains its start, a producer on another stream of its GPU.
    fn activities(&mut self, capture: &Capture) {
        let activities = capture.activities();
        let events = capture.host_events();
        // Each GPU's activities by end, to find a producer on another stream.
        let device_of = |a: &trace_model::GpuActivity| capture.stream(a.stream).device.index();
        let devices = activities
            .iter()
            .map(|a| device_of(a) + 1)
            .max()
            .unwrap_or(0);
        let mut by_end: Vec<Vec<(Nanos, u32)>> = vec![Vec::new(); devices];
        for (i, a) in activities.iter().enumerate() {
            by_end[device_of(a)].push((a.end(), i as u32));
        }
        for list in &mut by_end {
            // Each stream's activities end in order: runs the stable sort merges (every
            // key is distinct).
            list.sort();
        }
        for (i, a) in activities.iter().enumerate() {
            let n = self.nodes.len() as u32;
            self.nodes.push(Node {
                kind: NodeKind::Gpu,
                lane: Lane::Stream(a.stream),
                start: a.start,
                end: a.end(),
                source: i as u32,
            });
            self.dur.push(a.dur);
            self.gap_in_ops.push(Nanos::ZERO);
            self.gap_outside_ops.push(Nanos::ZERO);
            self.gap_outside_idle.push(Nanos::ZERO);
            let launch = a
                .launch()
                .map(|l| (l, self.host_node_of[l.index()]))
                .filter(|&(_, node)| node != NONE);
            self.issued
                .push(a.launch().map_or(a.start, |l| events[l.index()].start));
            let first = self.candidates.len();
            if i > 0 && activities[i - 1].stream == a.stream {
                self.candidates.push(Candidate {
                    dst: n,
                    src: n - 1,
                    kind: EdgeKind::StreamOrder,
                    slack: a.start - activities[i - 1].end(),
                    binding: false,
                    explained: false,
                });
            }
            if let Some((l, node)) = launch {
                let call = &events[l.index()];
                if a.start < call.start {
                    self.stats.skewed_starts += 1;
                    self.stats.skew_time += call.start - a.start;
                }
                self.candidates.push(Candidate {
                    dst: n,
                    src: node,
                    kind: EdgeKind::Launch,
                    slack: a.start - events[l.index()].end(),
                    binding: false,
                    explained: false,
                });
            }
            let mine = &mut self.candidates[first..];
            let Some(binding) = mine.iter_mut().min_by_key(|c| c.slack) else {
                continue;
            };
            binding.binding = true;
            if binding.slack <= EXPLAIN_LIMIT {
                binding.explained = true;
                continue;
            }
            // Waited longer than its launch and stream order explain: for a producer
            // that ended just before on another stream of the GPU.
            let list = &by_end[device_of(a)];
            let upto = list.partition_point(|&(end, _)| end <= a.start);
            let producer = list[..upto]
                .iter()
                .rev()
                .take_while(|&&(end, _)| a.start - end <= EXPLAIN_LIMIT)
                .find(|&&(_, p)| {
                    let p = &activities[p as usize];
                    p.stream != a.stream && p.start < a.start
                });
            if let Some(&(end, p)) = producer {
                binding.binding = false;
                self.candidates.push(Candidate {
                    dst: n,
                    src: self.host_nodes as u32 + p,
                    kind: EdgeKind::CrossStream,
                    slack: a.start - end,
                    binding: true,
                    explained: true,
                });
            }
        }
        self.stats.gpu_nodes = activities.len();
    }

    /// Each synchronising call waits for the activities in flight when it began that
    /// ended before it returned, the last of each stream (launched before the call, or by
    /// it: a synchronous copy).
    fn sync_edges(&mut self, capture: &Capture) {
        let activities = capture.activities();
        let streams: Vec<(usize, usize)> = capture
            .streams()
            .iter()
            .map(|s| {
                (
                    activities.partition_point(|a| a.stream < s.id),
                    activities.partition_point(|a| a.stream <= s.id),
                )
            })
            .collect();
        for n in 0..self.host_nodes {
            let node = self.nodes[n];
            if node.kind != NodeKind::Sync {
                continue;
            }
            let mut waited: Vec<u32> = Vec::new();
            for &(lo, hi) in &streams {
                let slice = &activities[lo..hi];
                let upto = slice.partition_point(|a| a.start <= node.end);
                for (k, a) in slice[..upto].iter().enumerate().rev().take(32) {
                    if a.end() < node.start {
                        break;
                    }
                    let issued = self.issued[lo + k];
                    if a.end() <= node.end && issued <= node.start && a.launch().is_some() {
                        waited.push(self.host_nodes as u32 + (lo + k) as u32);
                        break;
                    }
                }
            }
            let Some(last) = waited.iter().map(|&w| self.nodes[w as usize].end).max() else {
                continue;
            };
            // The time the call took after the work it waited for ended: its own part.
            let post = node.end - last.max(node.start);
            self.dur[n] = post.min(self.dur[n]);
            for w in waited {
                self.edges.push((
                    n as u32,
                    Edge {
                        src: w,
                        kind: EdgeKind::Sync,
                        delay: post,
                    },
                ));
                self.stats.sync_edges += 1;
            }
        }
    }

    /// Decides each candidate's delay (the binding one keeps its measured gap where it is
    /// explained; the others get the typical latency, never more than their own gap),
    /// then stores the edges by destination and orders the nodes.
    fn finish(mut self, capture: &Capture) -> Graph {
        let median_of = |kind: EdgeKind, candidates: &[Candidate]| {
            let mut gaps: Vec<Nanos> = candidates
                .iter()
                .filter(|c| c.kind == kind && c.binding && c.explained)
                .map(|c| c.slack)
                .collect();
            if gaps.is_empty() {
                return Nanos::ZERO;
            }
            let mid = gaps.len() / 2;
            *gaps.select_nth_unstable(mid).1
        };
        let launch_latency = median_of(EdgeKind::Launch, &self.candidates);
        let stream_gap = median_of(EdgeKind::StreamOrder, &self.candidates).max(Nanos::ZERO);
        self.stats.launch_latency = launch_latency;
        self.stats.stream_gap = stream_gap;
        let mut by_what: std::collections::BTreeMap<String, (usize, Nanos)> = Default::default();
        for c in &self.candidates {
            let floor = match c.kind {
                EdgeKind::Launch => launch_latency,
                _ => stream_gap,
            };
            let delay = if c.binding && c.explained {
                c.slack
            } else {
                if c.binding {
                    let lost = (c.slack - floor).max(Nanos::ZERO);
                    self.stats.unexplained_waits += 1;
                    self.stats.unexplained_time += lost;
                    let entry = by_what
                        .entry(waiter(capture, &self.nodes[c.dst as usize], c.kind))
                        .or_default();
                    entry.0 += 1;
                    entry.1 += lost;
                }
                floor.min(c.slack)
            };
            match c.kind {
                EdgeKind::Launch => self.stats.launch_edges += 1,
                EdgeKind::StreamOrder => self.stats.stream_order_edges += 1,
                EdgeKind::CrossStream => self.stats.cross_stream_edges += 1,
                _ => {}
            }
            self.edges.push((
                c.dst,
                Edge {
                    src: c.src,
                    kind: c.kind,
                    delay,
                },
            ));
        }
        let mut by_what: Vec<UnexplainedWaits> = by_what
            .into_iter()
            .map(|(what, (count, time))| UnexplainedWaits { what, count, time })
            .collect();
        by_what.sort_by(|a, b| b.time.cmp(&a.time).then_with(|| a.what.cmp(&b.what)));
        by_what.truncate(5);
        self.stats.unexplained_by = by_what;
        let count = self.nodes.len();
        // By destination; within one, the start edges before the end edges (sync, join),
        // each kind in the order it was added (a stable sort): a replay reads the two
        // groups apart (`split`).
        self.edges
            .sort_by_key(|&(dst, e)| (dst, is_end_edge(e.kind)));
        let mut offsets = vec![0u32; count + 1];
        let mut split = vec![0u32; count];
        for &(dst, e) in &self.edges {
            offsets[dst as usize + 1] += 1;
            if !is_end_edge(e.kind) {
                split[dst as usize] += 1;
            }
        }
        for i in 0..count {
            offsets[i + 1] += offsets[i];
            split[i] += offsets[i];
        }
        let edges: Vec<Edge> = self.edges.into_iter().map(|(_, e)| e).collect();
        let topo = topological_order(&self.nodes, &offsets, &edges);
        self.stats.cycle_nodes = topo.cycle_nodes;
        let anchor = anchor_leaves(capture, &self.nodes[..self.host_nodes]);
        Graph {
            nodes: self.nodes,
            host_nodes: self.host_nodes,
            offsets,
            split,
            edges,
            order: topo.order,
            out_offsets: topo.out_offsets,
            out: topo.out,
            baseline: crate::replay::Timeline::default(),
            measured: Durations {
                dur: self.dur,
                gap_in_ops: self.gap_in_ops,
                gap_outside_ops: self.gap_outside_ops,
            },
            gap_outside_idle: self.gap_outside_idle,
            paths: crate::paths::LaunchingPaths::default(),
            issued: self.issued,
            anchor,
            stats: self.stats,
        }
    }
}

/// An activity that waited without an edge to explain it, in words: its class, the call
/// that launched it and the edge it waited longest after.
fn waiter(capture: &Capture, node: &Node, kind: EdgeKind) -> String {
    let a = &capture.activities()[node.source as usize];
    let launched = a.launch().map_or_else(
        || "no launch call".to_owned(),
        |l| format!("launched by {}", capture.name(capture.host_event(l).name)),
    );
    let after = match kind {
        EdgeKind::Launch => "its launch call",
        _ => "its stream's previous activity",
    };
    format!("{} {launched}, long after {after}", a.class.word())
}

/// Whether an edge sets its destination's end rather than its start.
pub(crate) fn is_end_edge(kind: EdgeKind) -> bool {
    matches!(kind, EdgeKind::Sync | EdgeKind::Join)
}

/// A topological order and the outgoing-edge table it was found with.
struct Topo {
    order: Vec<u32>,
    cycle_nodes: usize,
    out_offsets: Vec<u32>,
    out: Vec<u32>,
}

/// Kahn's order over the incoming-edge table; nodes on a cycle (clocks that contradict
/// the edges) follow in measured start order. Returns the order, how many were left and
/// the destinations of each node's outgoing edges.
fn topological_order(nodes: &[Node], offsets: &[u32], edges: &[Edge]) -> Topo {
    let count = nodes.len();
    let mut pending: Vec<u32> = (0..count).map(|n| offsets[n + 1] - offsets[n]).collect();
    let mut out_offsets = vec![0u32; count + 1];
    for e in edges {
        out_offsets[e.src as usize + 1] += 1;
    }
    for i in 0..count {
        out_offsets[i + 1] += out_offsets[i];
    }
    let mut fill = out_offsets.clone();
    let mut out = vec![0u32; edges.len()];
    for dst in 0..count {
        for e in &edges[offsets[dst] as usize..offsets[dst + 1] as usize] {
            out[fill[e.src as usize] as usize] = dst as u32;
            fill[e.src as usize] += 1;
        }
    }
    let mut ready: Vec<u32> = (0..count as u32)
        .filter(|&n| pending[n as usize] == 0)
        .collect();
    let mut order = Vec::with_capacity(count);
    while let Some(n) = ready.pop() {
        order.push(n);
        for &dst in &out[out_offsets[n as usize] as usize..out_offsets[n as usize + 1] as usize] {
            pending[dst as usize] -= 1;
            if pending[dst as usize] == 0 {
                ready.push(dst);
            }
        }
    }
    let mut left: Vec<u32> = (0..count as u32)
        .filter(|&n| pending[n as usize] > 0)
        .collect();
    left.sort_by_key(|&n| (nodes[n as usize].start, n));
    let cycle_nodes = left.len();
    order.extend(left);
    Topo {
        order,
        cycle_nodes,
        out_offsets,
        out,
    }
}

/// The leaves of the thread with the most launch calls (ties: the lowest id).
fn anchor_leaves(capture: &Capture, host: &[Node]) -> Vec<u32> {
    let mut launches = vec![0usize; capture.threads().len()];
    for n in host {
        if let (NodeKind::Launch, Lane::Host(t)) = (n.kind, n.lane) {
            launches[t.index()] += 1;
        }
    }
    let Some(best) = (0..launches.len()).max_by_key(|&t| (launches[t], std::cmp::Reverse(t)))
    else {
        return Vec::new();
    };
    host.iter()
        .enumerate()
        .filter(|(_, n)| n.lane == Lane::Host(ThreadId::new(best as u32)))
        .map(|(i, _)| i as u32)
        .collect()
}

/// The union of intervals given in start order, as disjoint intervals in order.
pub(crate) fn merged(intervals: impl Iterator<Item = (Nanos, Nanos)>) -> Vec<(Nanos, Nanos)> {
    let mut out: Vec<(Nanos, Nanos)> = Vec::new();
    for (start, end) in intervals {
        match out.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => out.push((start, end)),
        }
    }
    out
}

/// The time of `[from, to)` outside every interval of `ops` and of `busy` (both disjoint,
/// in order): host time outside CPU ops while a stream runs nothing.
fn outside_idle(ops: &[(Nanos, Nanos)], busy: &[(Nanos, Nanos)], from: Nanos, to: Nanos) -> Nanos {
    let busy_in = |a: Nanos, b: Nanos| {
        let mut cursor = busy.partition_point(|&(_, end)| end <= a);
        overlap(busy, &mut cursor, a, b)
    };
    let mut idle = Nanos::ZERO;
    let mut t = from;
    let mut k = ops.partition_point(|&(_, end)| end <= from);
    while t < to {
        let (op_start, op_end) = ops.get(k).copied().unwrap_or((to, to));
        let seg_end = op_start.max(t).min(to);
        if seg_end > t {
            idle += (seg_end - t) - busy_in(t, seg_end);
        }
        if op_start >= to {
            break;
        }
        t = op_end.max(t);
        k += 1;
    }
    idle
}

/// The time of `[from, to)` inside `intervals` (disjoint, in order); `cursor` moves
/// forward over intervals that end before `from`, so calls with growing `from` are
/// linear overall.
fn overlap(intervals: &[(Nanos, Nanos)], cursor: &mut usize, from: Nanos, to: Nanos) -> Nanos {
    while *cursor < intervals.len() && intervals[*cursor].1 <= from {
        *cursor += 1;
    }
    let mut total = Nanos::ZERO;
    for &(start, end) in &intervals[*cursor..] {
        if start >= to {
            break;
        }
        total += (end.min(to) - start.max(from)).max(Nanos::ZERO);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_of_gaps_with_ops() {
        let ops = merged(
            [(0, 10), (5, 20), (30, 40)]
                .map(|(a, b)| (Nanos(a), Nanos(b)))
                .into_iter(),
        );
        assert_eq!(ops, [(Nanos(0), Nanos(20)), (Nanos(30), Nanos(40))]);
        let mut cursor = 0;
        assert_eq!(overlap(&ops, &mut cursor, Nanos(15), Nanos(35)), Nanos(10));
        assert_eq!(overlap(&ops, &mut cursor, Nanos(36), Nanos(50)), Nanos(4));
        assert_eq!(overlap(&ops, &mut cursor, Nanos(50), Nanos(60)), Nanos(0));
    }

    #[test]
    fn synchronising_calls() {
        assert!(is_synchronising_call("cudaDeviceSynchronize"));
        assert!(is_synchronising_call("cudaMemcpy"));
        assert!(!is_synchronising_call("cudaMemcpyAsync"));
        assert!(!is_synchronising_call("cudaLaunchKernel"));
    }
}
