//! HTA 0.5.0's call stacks of a rank (`hta.common.trace_call_graph`), built natively from
//! the events the timeline holds: the roots of `get_frequent_cuda_kernel_sequences` in them
//! ([`kernel_sequence_roots`]), and the stacks themselves as columns ([`call_stacks`]: the
//! CUPTI counter analysis' operator stacks and call-graph columns).
//!
//! The rules: each thread's host events nested by their ends in time order (at one time:
//! the zero-length events inside the event that closes there, else inside the one that
//! opens there; then closes, shorter first; then opens, longer first; [`stack_order`]),
//! every GPU activity with a stream above 0 under the host event that launched it, and,
//! when the rank has one thread with `ProfilerStep#` events (main) and one other with
//! `autograd::` events (backward), the backward thread's top-level events under the main
//! thread's `## backward ##` annotation (else `ProfilerStep#`) that spans them.
//!
//! Times are the µs floats the frames hand to Python (`rel_us`), compared and
//! summed in the order HTA compares and sums its frame's values, so that the nesting and
//! the sums are HTA's to the bit.

use std::cmp::Ordering;

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use trace_frame::Timeline;

use crate::columns::to_bytes;
use crate::{HtaTrace, rel_us};

/// One root of [`kernel_sequence_roots`]: (its name, then its activities' names in start
/// order; the summed duration of its activities in µs, None where HTA's table has no entry
/// for it; its duration in µs; the event indices of it and every event beneath it).
type Root = (Vec<String>, Option<f64>, f64, Vec<i64>);

/// The roots of HTA's frequent kernel sequences of `rank`: the shallowest events whose
/// name contains `operator_name` in HTA's call stacks, with at least `min_len` activities
/// beneath them, in event-index order.
#[pyfunction]
pub(crate) fn kernel_sequence_roots(
    trace: PyRef<'_, HtaTrace>,
    rank: i64,
    operator_name: &str,
    min_len: i64,
) -> Vec<Root> {
    let Some(t) = trace.of(rank) else {
        return Vec::new();
    };
    let stacks = Stacks::new(t, trace.min_ts);
    stacks.roots(t, operator_name, min_len)
}

/// HTA's call stacks of `rank` as columns, one row per node (the host events in the
/// timeline's order, then the GPU activities): (the names, each once; then, as bytes of
/// native-endian i64: the event index; the parent's event index, -1 for a top-level event
/// and -2 outside every stack; the depth from the tops, -1 outside; the activities beneath;
/// the name, as a position in the names; 1 for a GPU activity, else 0).
#[pyfunction]
pub(crate) fn call_stacks<'py>(
    py: Python<'py>,
    trace: PyRef<'py, HtaTrace>,
    rank: i64,
) -> (Vec<String>, Vec<Bound<'py, PyBytes>>) {
    let Some(t) = trace.of(rank) else {
        return (Vec::new(), to_bytes(py, vec![Vec::new(); 6]));
    };
    let s = Stacks::new(t, trace.min_ts);
    let mut names = Vec::new();
    let mut code_of: std::collections::HashMap<u32, i64> = Default::default();
    let mut cols: [Vec<u8>; 6] = Default::default();
    for k in 0..s.index.len() {
        let parent = match s.parent[k] {
            None => -2,
            Some(None) => -1,
            Some(Some(p)) => s.index[p],
        };
        let code = *code_of.entry(s.name[k]).or_insert_with(|| {
            names.push(t.name(s.name[k]).to_owned());
            names.len() as i64 - 1
        });
        let depth = s.depth[k].map_or(-1, |d| d as i64);
        let gpu = i64::from(k >= s.host_count);
        for (c, v) in [s.index[k], parent, depth, s.num_kernels[k], code, gpu]
            .into_iter()
            .enumerate()
        {
            cols[c].extend(v.to_ne_bytes());
        }
    }
    (names, to_bytes(py, cols))
}

/// One thread's events: (its interned `pid/tid`, its events as (node, start, end) in file
/// order).
type Thread = (u32, Vec<(usize, f64, f64)>);

/// One end of an event in [`stack_order`]: (time, position among the 2n ends, node,
/// is_open, duration).
type End = (f64, usize, usize, bool, f64);

/// The call stacks of one rank. Nodes are the host events (`t.host`'s positions) and then
/// the GPU activities (`t.gpu`'s, offset by the host count).
struct Stacks {
    /// Event index, name id, start and duration (µs) per node.
    index: Vec<i64>,
    name: Vec<u32>,
    start: Vec<f64>,
    dur: Vec<f64>,
    /// None: not in a stack (an activity without a launch); Some(None): a top-level event.
    parent: Vec<Option<Option<usize>>>,
    children: Vec<Vec<usize>>,
    /// The first GPU node.
    host_count: usize,
    /// Depth from the tops (None: not in a stack), activities beneath and their summed
    /// duration (None where not in a stack).
    depth: Vec<Option<usize>>,
    num_kernels: Vec<i64>,
    kernel_dur: Vec<Option<f64>>,
}

impl Stacks {
    fn new(t: &Timeline, min_ts: i64) -> Stacks {
        let host_count = t.host.len();
        let n = host_count + t.gpu.len();
        let mut s = Stacks {
            index: Vec::with_capacity(n),
            name: Vec::with_capacity(n),
            start: Vec::with_capacity(n),
            dur: Vec::with_capacity(n),
            parent: vec![None; n],
            children: vec![Vec::new(); n],
            host_count,
            depth: vec![None; n],
            num_kernels: vec![0; n],
            kernel_dur: vec![None; n],
        };
        // Threads in order of first appearance, each with its events (node, start, end).
        let mut threads: Vec<Thread> = Vec::new();
        let mut thread_of: std::collections::HashMap<u32, usize> = Default::default();
        for (k, h) in t.host.iter().enumerate() {
            let (start, end) = (rel_us(h.start, min_ts), rel_us(h.end, min_ts));
            s.index.push(h.event_index);
            s.name.push(h.name);
            s.start.push(start);
            s.dur.push(end - start);
            let at = *thread_of.entry(h.thread).or_insert_with(|| {
                threads.push((h.thread, Vec::new()));
                threads.len() - 1
            });
            threads[at].1.push((k, start, end));
        }
        let mut tops: Vec<Vec<usize>> = threads.iter().map(|(_, evs)| s.nest(evs)).collect();
        s.link_backward(t, &threads, &mut tops);
        for (k, g) in t.gpu.iter().enumerate() {
            let node = host_count + k;
            let (start, end) = (rel_us(g.start, min_ts), rel_us(g.end, min_ts));
            s.index.push(g.event_index);
            s.name.push(g.name);
            s.start.push(start);
            s.dur.push(end - start);
            // HTA links an activity to its launch when its stream is above 0 and the
            // launch's event index is.
            if let Some(l) = g.launch
                && g.stream > 0
                && t.host[l].event_index > 0
                && s.parent[l].is_some()
            {
                s.parent[node] = Some(Some(l));
                s.children[l].push(node);
            }
        }
        s.measure();
        s
    }

    /// Nests one thread's events in HTA's order ([`stack_order`]); returns its top-level
    /// events.
    fn nest(&mut self, evs: &[(usize, f64, f64)]) -> Vec<usize> {
        let mut tops = Vec::new();
        let mut stack: Vec<usize> = Vec::new();
        for (node, is_open) in stack_order(evs, &self.index) {
            if !is_open {
                stack.pop();
                continue;
            }
            if self.parent[node].is_none() {
                let parent = stack.last().copied();
                self.parent[node] = Some(parent);
                match parent {
                    None => tops.push(node),
                    Some(p) => self.children[p].push(node),
                }
            }
            stack.push(node);
        }
        tops
    }

    /// HTA's `_connect_stacks`: when exactly two threads are labelled (one with
    /// `ProfilerStep#` events, "main"; one with `autograd::` events, "bwd"; sorted by label
    /// then thread), the second's `## backward ##` (else `ProfilerStep#`) events take the
    /// first's top-level events that they span.
    fn link_backward(&mut self, t: &Timeline, threads: &[Thread], tops: &mut [Vec<usize>]) {
        let label = |evs: &[(usize, f64, f64)]| {
            let names = || evs.iter().map(|&(k, _, _)| t.name(self.name[k]));
            if names().any(|n| n.starts_with("ProfilerStep#")) {
                "main"
            } else if names().any(|n| n.contains("autograd::")) {
                "bwd"
            } else {
                ""
            }
        };
        let mut linked: Vec<(&str, &str, usize)> = (threads.iter().enumerate())
            .map(|(at, (thread, evs))| (label(evs), t.name(*thread), at))
            .filter(|(l, _, _)| !l.is_empty())
            .collect();
        if linked.len() != 2 {
            return;
        }
        linked.sort();
        let (bwd, main) = (linked[0].2, linked[1].2);
        let mut parents: Vec<(usize, f64, f64)> = Vec::new();
        for prefix in ["## backward ##", "ProfilerStep#"] {
            parents = (threads[main].1.iter())
                .filter(|&&(k, _, _)| t.name(self.name[k]).starts_with(prefix))
                .copied()
                .collect();
            if !parents.is_empty() {
                break;
            }
        }
        for (p, start, end) in parents {
            let (moved, kept): (Vec<usize>, Vec<usize>) = tops[bwd]
                .iter()
                .partition(|&&c| self.start[c] >= start && self.start[c] + self.dur[c] <= end);
            for c in moved {
                self.parent[c] = Some(Some(p));
                self.children[p].push(c);
            }
            tops[bwd] = kept;
        }
    }

    /// Depths from the tops, then the activities beneath each node, children first.
    fn measure(&mut self) {
        let mut todo: Vec<(usize, usize)> = (0..self.parent.len())
            .filter(|&k| self.parent[k] == Some(None))
            .map(|k| (k, 0))
            .collect();
        let mut order = Vec::new();
        while let Some((k, d)) = todo.pop() {
            self.depth[k] = Some(d);
            order.push(k);
            todo.extend(self.children[k].iter().map(|&c| (c, d + 1)));
        }
        order.sort_by_key(|&k| std::cmp::Reverse(self.depth[k]));
        for k in order {
            if k >= self.host_count {
                self.num_kernels[k] = 1;
                self.kernel_dur[k] = Some(self.dur[k]);
                continue;
            }
            let kids = &self.children[k];
            self.num_kernels[k] = kids.iter().map(|&c| self.num_kernels[c]).sum();
            let sum = kids
                .iter()
                .fold(0.0, |a, &c| a + self.kernel_dur[c].unwrap_or(0.0));
            self.kernel_dur[k] = Some(sum);
        }
    }

    /// The roots (the shallowest events whose name holds `operator_name`, with at least
    /// `min_len` activities beneath; depth −1 outside every stack) and, per root, its
    /// pattern and the events beneath it.
    fn roots(&self, t: &Timeline, operator_name: &str, min_len: i64) -> Vec<Root> {
        let found: Vec<usize> = (0..self.index.len())
            .filter(|&k| t.name(self.name[k]).contains(operator_name))
            .collect();
        let depth = |k: usize| self.depth[k].map_or(-1, |d| d as i64);
        let Some(least) = found.iter().map(|&k| depth(k)).min() else {
            return Vec::new();
        };
        let mut roots: Vec<usize> = (found.into_iter())
            .filter(|&k| depth(k) == least && self.num_kernels[k] >= min_len)
            .collect();
        roots.sort_by_key(|&k| self.index[k]);
        roots
            .into_iter()
            .map(|root| {
                let mut below = Vec::new();
                let mut todo = vec![root];
                while let Some(k) = todo.pop() {
                    below.push(k);
                    todo.extend(&self.children[k]);
                }
                let mut kernels: Vec<usize> = below
                    .iter()
                    .copied()
                    .filter(|&k| k >= self.host_count)
                    .collect();
                kernels.sort_by(|&a, &b| {
                    (self.start[a].partial_cmp(&self.start[b]))
                        .unwrap_or(Ordering::Equal)
                        .then(self.index[a].cmp(&self.index[b]))
                });
                let names = std::iter::once(root)
                    .chain(kernels)
                    .map(|k| t.name(self.name[k]).to_owned())
                    .collect();
                let indices = below.iter().map(|&k| self.index[k]).collect();
                (names, self.kernel_dur[root], self.dur[root], indices)
            })
            .collect()
    }
}

/// The ends of one thread's events, (node, is_open), in HTA's call-stack order
/// (`hta.common.call_stack`'s sort of the ends): by time; at one time, where some event of non-zero
/// length closes, the zero-length events (opens by index, then closes by index
/// descending), the closes (shorter first, then index descending), then the opens (longer
/// first, then index); else the opens, then the zero-length events.
fn stack_order(evs: &[(usize, f64, f64)], index: &[i64]) -> Vec<(usize, bool)> {
    // The positions: opens then closes, as numpy's stable sort sees them.
    let n = evs.len();
    let mut ends: Vec<End> = Vec::with_capacity(2 * n);
    for (is_open, offset) in [(true, 0), (false, n)] {
        for (p, &(node, start, end)) in evs.iter().enumerate() {
            let at = if is_open { start } else { end };
            ends.push((at, offset + p, node, is_open, end - start));
        }
    }
    let by_time = |a: &End, b: &End| a.0.partial_cmp(&b.0).unwrap_or(Ordering::Equal);
    ends.sort_by(|a, b| by_time(a, b).then(a.1.cmp(&b.1)));
    let mut out = Vec::with_capacity(2 * n);
    let mut from = 0;
    while from < ends.len() {
        let mut to = from + 1;
        while to < ends.len() && by_time(&ends[from], &ends[to]) == Ordering::Equal {
            to += 1;
        }
        let group = &mut ends[from..to];
        let closes_here = group.iter().any(|e| e.4 != 0.0 && !e.3);
        // (class, duration key, index key) of each end within its time.
        let key = |e: &End| {
            let (zero, open) = (e.4 == 0.0, e.3);
            let class = match (closes_here, zero, open) {
                (true, true, true) => 0,
                (true, true, false) => 1,
                (true, false, false) => 2,
                (true, false, true) => 3,
                (false, false, true) => 0,
                (false, true, true) => 1,
                (false, _, false) => 2,
            };
            let d = if zero {
                0.0
            } else if open {
                -e.4
            } else {
                e.4
            };
            let ix = if open { index[e.2] } else { -index[e.2] };
            (class, d, ix)
        };
        group.sort_by(|a, b| {
            let (ka, kb) = (key(a), key(b));
            (ka.0.cmp(&kb.0))
                .then(ka.1.partial_cmp(&kb.1).unwrap_or(Ordering::Equal))
                .then(ka.2.cmp(&kb.2))
                .then(a.1.cmp(&b.1))
        });
        out.extend(group.iter().map(|e| (e.2, e.3)));
        from = to;
    }
    out
}
