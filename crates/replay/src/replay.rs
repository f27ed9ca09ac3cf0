//! Replay: every node's start and end recomputed along the graph from a set of
//! durations, the steps measured on the result, and the path that decided each step.

use serde::Serialize;
use trace_model::Nanos;

use crate::graph::{Durations, EdgeKind, Graph, Lane};

/// One step's host range, as the caller's step finder gives it (`analysis::steps`, or
/// the capture's `ProfilerStep#N` ranges).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StepWindow {
    /// The step's number.
    pub number: i64,
    /// Its start on the capture's axis.
    pub start: Nanos,
    /// Its end.
    pub end: Nanos,
    /// Whether the window is a GPU-side range (a module execution, a repeating kernel
    /// sequence: its activities placed by their own start) rather than a host range: its
    /// members are then the activities that start in it, and its span runs from their
    /// first start to their last end (a host anchor does not place it).
    pub gpu_ranged: bool,
}

/// Every node's replayed times, and which edge decided each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Timeline {
    pub(crate) start: Vec<Nanos>,
    pub(crate) end: Vec<Nanos>,
    /// The index into `Graph::edges` of the edge that set the start (`NONE`: the node
    /// kept its measured start, having no incoming edge).
    pub(crate) start_bound: Vec<u32>,
    /// The sync edge that set the end (`NONE`: start plus duration).
    pub(crate) end_bound: Vec<u32>,
}

pub(crate) const NONE: u32 = u32::MAX;

impl Graph {
    /// Replays the graph with `durations`: in topological order, each node starts at the
    /// latest of its start edges (source time plus delay; a host-order edge's delay is
    /// the node's host gap in `durations`; a node without one keeps its measured start)
    /// and ends at its start plus its duration, or later when a sync edge says so.
    /// O(nodes + edges).
    pub fn replay(&self, durations: &Durations) -> Timeline {
        self.replay_with(durations, false)
    }

    /// [`Graph::replay`] with every launch, stream-order and cross-stream edge at the
    /// capture's typical delay ([`GraphStats::launch_latency`](crate::GraphStats),
    /// `stream_gap`) instead of its own measured one: how well the graph's structure alone,
    /// with measured durations and host gaps, reproduces the capture (Lumos's check).
    pub fn replay_typical(&self, durations: &Durations) -> Timeline {
        self.replay_with(durations, true)
    }

    fn replay_with(&self, durations: &Durations, typical: bool) -> Timeline {
        let mut timeline = self.blank_timeline();
        for &n in &self.order {
            if typical {
                self.replay_node::<true>(n as usize, durations, &mut timeline);
            } else {
                self.replay_node::<false>(n as usize, durations, &mut timeline);
            }
        }
        timeline
    }

    /// Replays node `n` on `timeline` (its sources already replayed): its start
    /// ([`Graph::node_start`]) and end ([`Graph::finish_node`]), with the edges that set
    /// them. Whether the start or the end moved from what `timeline` held.
    #[inline(always)]
    fn replay_node<const TYPICAL: bool>(
        &self,
        n: usize,
        durations: &Durations,
        timeline: &mut Timeline,
    ) -> bool {
        let (s, bound) = self.start_of::<TYPICAL>(n, durations, &timeline.start, &timeline.end);
        let (e, end_bound) = self.end_of(n, s + durations.dur[n], &timeline.end);
        let moved = s != timeline.start[n] || e != timeline.end[n];
        timeline.start[n] = s;
        timeline.start_bound[n] = bound;
        timeline.end[n] = e;
        timeline.end_bound[n] = end_bound;
        moved
    }

    /// [`Graph::replay`], computed from the replay of the measured durations: only the
    /// nodes whose durations changed, and those downstream of a node whose replayed start
    /// or end moved, are replayed again; every other node keeps its unchanged-replay times
    /// and bounds, which a full replay would compute again from the same inputs. The same
    /// timeline as [`Graph::replay`] (a graph with cycle nodes, whose sources a full
    /// replay reads before they are replayed, is replayed in full).
    pub fn replay_incremental(&self, durations: &Durations) -> Timeline {
        if self.stats.cycle_nodes > 0 || self.baseline.start.len() != self.nodes.len() {
            return self.replay(durations);
        }
        let m = &self.measured;
        let mut dirty: Vec<bool> = (0..self.nodes.len())
            .map(|n| {
                durations.dur[n] != m.dur[n]
                    || durations.gap_in_ops[n] != m.gap_in_ops[n]
                    || durations.gap_outside_ops[n] != m.gap_outside_ops[n]
            })
            .collect();
        let mut timeline = self.baseline.clone();
        if !dirty.contains(&true) {
            return timeline;
        }
        for &n in &self.order {
            let n = n as usize;
            if dirty[n] && self.replay_node::<false>(n, durations, &mut timeline) {
                let out = self.out_offsets[n] as usize..self.out_offsets[n + 1] as usize;
                for &dst in &self.out[out] {
                    dirty[dst as usize] = true;
                }
            }
        }
        timeline
    }

    /// The latest of node `n`'s start edges on the replayed `start` and `end` (source
    /// time plus delay; a host-order edge's delay is the node's host gap in `durations`;
    /// with `TYPICAL`, every launch, stream-order and cross-stream edge at the capture's
    /// typical delay), its measured start without one; with the edge that set it.
    #[inline(always)]
    fn start_of<const TYPICAL: bool>(
        &self,
        n: usize,
        durations: &Durations,
        start: &[Nanos],
        end: &[Nanos],
    ) -> (Nanos, u32) {
        let lo = self.offsets[n] as usize;
        let mut at = self.nodes[n].start;
        let mut bound = NONE;
        for (k, e) in self.edges[lo..self.split[n] as usize].iter().enumerate() {
            let src = e.src as usize;
            let value = match e.kind {
                EdgeKind::HostOrder => {
                    end[src] + durations.gap_in_ops[n] + durations.gap_outside_ops[n]
                }
                EdgeKind::Launch if TYPICAL => {
                    (end[src] + self.stats.launch_latency).max(start[src])
                }
                EdgeKind::Launch => (end[src] + e.delay).max(start[src]),
                EdgeKind::StreamOrder | EdgeKind::CrossStream if TYPICAL => {
                    end[src] + self.stats.stream_gap
                }
                _ => end[src] + e.delay,
            };
            if bound == NONE || value > at {
                at = value;
                bound = (lo + k) as u32;
            }
        }
        (at, bound)
    }

    /// Node `n`'s end: `own_end`, or later when a sync or join edge says so (the source's
    /// replayed end plus the edge's delay); with the edge that set it (`NONE`: its own).
    #[inline(always)]
    fn end_of(&self, n: usize, own_end: Nanos, end: &[Nanos]) -> (Nanos, u32) {
        let mid = self.split[n] as usize;
        let mut e_end = own_end;
        let mut bound = NONE;
        for (k, e) in self.edges[mid..self.offsets[n + 1] as usize]
            .iter()
            .enumerate()
        {
            let value = end[e.src as usize] + e.delay;
            if value > e_end {
                e_end = value;
                bound = (mid + k) as u32;
            }
        }
        (e_end, bound)
    }

    /// A timeline holding the measured times and no bounds, to be replayed over.
    pub(crate) fn blank_timeline(&self) -> Timeline {
        let count = self.nodes.len();
        Timeline {
            start: self.nodes.iter().map(|n| n.start).collect(),
            end: self.nodes.iter().map(|n| n.end).collect(),
            start_bound: vec![NONE; count],
            end_bound: vec![NONE; count],
        }
    }

    /// Node `n`'s replayed start: the latest of its start edges (source time plus delay;
    /// a host-order edge's delay is the node's host gap in `durations`), its measured
    /// start without one; with the edge that set it (`NONE` without).
    pub(crate) fn node_start(
        &self,
        n: usize,
        durations: &Durations,
        typical: bool,
        timeline: &Timeline,
    ) -> (Nanos, u32) {
        if typical {
            self.start_of::<true>(n, durations, &timeline.start, &timeline.end)
        } else {
            self.start_of::<false>(n, durations, &timeline.start, &timeline.end)
        }
    }

    /// Sets node `n`'s replayed end: `own_end`, or later when a sync edge says so.
    pub(crate) fn finish_node(&self, n: usize, own_end: Nanos, timeline: &mut Timeline) {
        let (end, bound) = self.end_of(n, own_end, &timeline.end);
        timeline.end[n] = end;
        timeline.end_bound[n] = bound;
    }

    /// Activity `index` of the capture (an index into `Capture::activities`) on a
    /// timeline: its start and end.
    pub fn activity_times(&self, timeline: &Timeline, index: usize) -> Option<(Nanos, Nanos)> {
        let n = self.host_nodes.checked_add(index)?;
        Some((*timeline.start.get(n)?, *timeline.end.get(n)?))
    }

    /// The nodes of each step: the activities whose launch call starts in its window (their
    /// own start without one), and the host leaves that start and end in it. `windows`
    /// in any order.
    pub(crate) fn step_members(&self, windows: &[StepWindow]) -> Vec<Vec<u32>> {
        let mut sorted: Vec<usize> = (0..windows.len()).collect();
        sorted.sort_by_key(|&i| (windows[i].start, i));
        let mut members = vec![Vec::new(); windows.len()];
        let holding = |t: Nanos| {
            let p = sorted.partition_point(|&w| windows[w].start <= t);
            // The latest window starting at or before it that still holds it.
            sorted[..p]
                .iter()
                .rev()
                .find(|&&w| t < windows[w].end)
                .copied()
        };
        for (n, node) in self.nodes[..self.host_nodes].iter().enumerate() {
            if let Some(w) = holding(node.start)
                .filter(|&w| node.end <= windows[w].end && !windows[w].gpu_ranged)
            {
                members[w].push(n as u32);
            }
        }
        for (i, &issued) in self.issued.iter().enumerate() {
            let n = self.host_nodes + i;
            let gpu_held = holding(self.nodes[n].start).filter(|&w| windows[w].gpu_ranged);
            if let Some(w) =
                gpu_held.or_else(|| holding(issued).filter(|&w| !windows[w].gpu_ranged))
            {
                members[w].push(n as u32);
            }
        }
        members
    }

    /// Where time `t` of the measured capture lies on a replayed timeline, placed by the
    /// anchor thread's leaves: inside a leaf or the gap between two, at the same fraction
    /// of its replayed length; before the first leaf or after the last, at the same
    /// distance. With the leaf that starts last before `t` (else the first).
    pub(crate) fn map_time(&self, timeline: &Timeline, t: Nanos) -> (Nanos, Option<u32>) {
        let anchor = &self.anchor;
        let Some(&first) = anchor.first() else {
            return (t, None);
        };
        let q = anchor.partition_point(|&n| self.nodes[n as usize].start < t);
        let Some(p) = q.checked_sub(1).map(|p| anchor[p]) else {
            let node = &self.nodes[first as usize];
            return (
                timeline.start[first as usize] - (node.start - t),
                Some(first),
            );
        };
        let (pi, node) = (p as usize, &self.nodes[p as usize]);
        let mapped = if t <= node.end {
            timeline.start[pi]
                + scale(
                    t - node.start,
                    timeline.end[pi] - timeline.start[pi],
                    node.end - node.start,
                )
        } else if let Some(&next) = anchor.get(q) {
            let next = next as usize;
            timeline.end[pi]
                + scale(
                    t - node.end,
                    timeline.start[next] - timeline.end[pi],
                    self.nodes[next].start - node.end,
                )
        } else {
            timeline.end[pi] + (t - node.end)
        };
        (mapped, Some(p))
    }

    /// A step's duration on `timeline`: from its mapped start to the latest of its mapped
    /// end and its members' ends (activities, host leaves of every thread); a GPU-ranged
    /// window from its activities' first start to their last end; with the node that
    /// ended it.
    pub(crate) fn step_span(
        &self,
        timeline: &Timeline,
        window: &StepWindow,
        members: &[u32],
    ) -> StepSpan {
        if window.gpu_ranged && !members.is_empty() {
            let start = members
                .iter()
                .map(|&m| timeline.start[m as usize])
                .min()
                .unwrap_or(window.start);
            let last = members
                .iter()
                .copied()
                .max_by_key(|&m| timeline.end[m as usize]);
            let end = last.map_or(window.end, |m| timeline.end[m as usize]);
            return StepSpan { start, end, last };
        }
        let (start, _) = self.map_time(timeline, window.start);
        let (mut end, mut last) = self.map_time(timeline, window.end);
        for &m in members {
            if timeline.end[m as usize] > end {
                end = timeline.end[m as usize];
                last = Some(m);
            }
        }
        StepSpan { start, end, last }
    }

    /// Every step's span on `timeline` ([`Graph::step_span`]), each starting no earlier
    /// than the end of the step before it (in start order): when the host runs ahead of
    /// the GPU, a step takes from the previous step's completion to its own, the
    /// throughput of a pipelined loop, not from its host start.
    pub(crate) fn step_spans(
        &self,
        timeline: &Timeline,
        windows: &[StepWindow],
        members: &[Vec<u32>],
    ) -> Vec<StepSpan> {
        let mut spans: Vec<StepSpan> = windows
            .iter()
            .zip(members)
            .map(|(w, m)| self.step_span(timeline, w, m))
            .collect();
        let mut order: Vec<usize> = (0..windows.len()).collect();
        order.sort_by_key(|&i| (windows[i].start, i));
        let mut previous_end: Option<Nanos> = None;
        for i in order {
            let end = spans[i].end;
            if let Some(previous_end) = previous_end {
                spans[i].start = spans[i].start.max(previous_end).min(end);
            }
            previous_end = Some(previous_end.map_or(end, |p| p.max(end)));
        }
        spans
    }

    /// The path that decided a step's end, walked back along the edges that set each
    /// node's start or end down to the step's start, as time per lane (most first).
    pub(crate) fn critical_lanes(
        &self,
        timeline: &Timeline,
        span: &StepSpan,
    ) -> Vec<(Lane, Nanos)> {
        let mut lanes: Vec<(Lane, Nanos)> = Vec::new();
        let mut add = |lane: Lane, from: Nanos, to: Nanos| {
            let time = (to - from.max(span.start)).max(Nanos::ZERO);
            if time > Nanos::ZERO {
                match lanes.iter_mut().find(|(l, _)| *l == lane) {
                    Some(entry) => entry.1 += time,
                    None => lanes.push((lane, time)),
                }
            }
        };
        let Some(mut n) = span.last.map(|n| n as usize) else {
            return lanes;
        };
        let mut exit = span.end;
        for _ in 0..self.nodes.len() {
            if exit <= span.start {
                break;
            }
            let lane = self.nodes[n].lane;
            let end_bound = timeline.end_bound[n];
            if end_bound != NONE {
                let e = &self.edges[end_bound as usize];
                let src_end = timeline.end[e.src as usize];
                add(lane, src_end, exit);
                n = e.src as usize;
                exit = src_end;
                continue;
            }
            add(lane, timeline.start[n], exit);
            let bound = timeline.start_bound[n];
            if bound == NONE {
                break;
            }
            let e = &self.edges[bound as usize];
            let src = e.src as usize;
            let src_time = match e.kind {
                EdgeKind::Launch if timeline.end[src] + e.delay < timeline.start[src] => {
                    timeline.start[src]
                }
                _ => timeline.end[src],
            };
            add(lane, src_time, timeline.start[n]);
            n = src;
            exit = src_time.min(timeline.end[src]);
        }
        lanes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        lanes
    }
}

/// A step on a timeline.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StepSpan {
    pub(crate) start: Nanos,
    pub(crate) end: Nanos,
    /// The node whose end (or the host leaf whose position) ended the step.
    pub(crate) last: Option<u32>,
}

impl StepSpan {
    pub(crate) fn duration(&self) -> Nanos {
        (self.end - self.start).max(Nanos::ZERO)
    }
}

/// `x * replayed / measured`: a part of a measured span placed on its replayed length.
pub(crate) fn scale(x: Nanos, replayed: Nanos, measured: Nanos) -> Nanos {
    if measured.0 <= 0 {
        return Nanos::ZERO;
    }
    Nanos((i128::from(x.0) * i128::from(replayed.0) / i128::from(measured.0)) as i64)
}
