//! Several ranks replayed together: their collective kernels matched across ranks, so that
//! a collective cannot end before every peer has started it.
//!
//! [`match_collectives`] pairs the n-th collective kernel of one kind (all-reduce,
//! all-gather, reduce-scatter, … as `trace_model::CollectiveKind` names them) on each rank,
//! in the order of their measured starts (send/recv kernels are point-to-point and are
//! not matched); where every rank runs that kind on streams of
//! the same ordinals with the same counts, the n-th of each stream instead (the stream's
//! order is the communicator's order there). The captures record no communicator, so two
//! communicators of one kind on one stream are matched by order alone. A kind whose count
//! differs between ranks is not matched ("cannot match: counts differ"), nor is a group
//! whose measured times cannot be one collective (a member ended before a peer started:
//! clocks that disagree).
//!
//! [`predict_ranks`] replays every rank's graph in one joint topological order. A matched
//! collective's end is the latest replayed start of its members plus its own measured
//! transfer time (its measured end minus the latest measured start of its members): the
//! measured delay idea of the single-rank graph, with the wait for the slowest peer
//! replayed instead of kept. The unchanged replay therefore reproduces the measured ends.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;

use serde::{Deserialize, Serialize};
use trace_model::{Capture, CollectiveKind, KernelClass, Labelled, Nanos, Provenance};

use crate::graph::{Durations, EdgeKind, Graph, Lane};
use crate::replay::{NONE, StepSpan, Timeline, scale};
use crate::{
    ASSUMPTIONS, HostLabels, LaneName, LaneTime, Prediction, StepPrediction, StepWindow, WhatIf,
    relative,
};

/// The assumptions of a replay of several ranks, beside [`ASSUMPTIONS`].
pub const RANK_ASSUMPTIONS: &str = "collectives matched across ranks by kind and order (the \
     n-th of a kind on each rank is one collective; communicators are not recorded); a \
     matched collective ends at the latest replayed start of its members plus its own \
     measured transfer time; the ranks' clocks are taken as one";

/// One rank of a joint replay: its capture, the graph built from it and its step windows.
#[derive(Debug, Clone, Copy)]
pub struct RankCapture<'a> {
    /// The rank's capture.
    pub capture: &'a Capture,
    /// [`Graph::build`] of it.
    pub graph: &'a Graph,
    /// Its steps.
    pub windows: &'a [StepWindow],
}

/// A collective matched across ranks: one member per rank.
#[derive(Debug, Clone, PartialEq)]
struct Group {
    /// `(rank, node, measured transfer time)`: the transfer is the member's measured end
    /// minus the latest measured start of the group.
    members: Vec<(u32, u32, Nanos)>,
}

/// Why collectives of one kind were not matched across ranks (each is then replayed on
/// its own rank); `Display` writes it in words, serde tags it by `code`
/// (`{"code": "counts-differ", "kind": "all_reduce", "counts": [3, 4]}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "kebab-case")]
pub enum NotMatched {
    /// Send/receive kernels: point-to-point, their peer is one rank the capture does not
    /// name.
    PointToPoint,
    /// Each rank has a different number of collectives of `kind`.
    CountsDiffer {
        /// The collective kind.
        kind: CollectiveKind,
        /// Its kernels per rank, in rank order.
        counts: Vec<usize>,
    },
    /// `count` collectives of `kind` had a member that ended before a peer started (the
    /// ranks' clocks disagree).
    ClocksDisagree {
        /// The collective kind.
        kind: CollectiveKind,
        /// How many such collectives.
        count: usize,
    },
}

impl fmt::Display for NotMatched {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotMatched::PointToPoint => f.write_str(
                "send/recv kernels are not matched: point-to-point, their peer is one rank \
                 the capture does not name; each is replayed on its own rank",
            ),
            NotMatched::CountsDiffer { kind, counts } => {
                let counts: Vec<String> = counts
                    .iter()
                    .enumerate()
                    .map(|(r, n)| format!("rank {r}: {n}"))
                    .collect();
                write!(
                    f,
                    "cannot match: counts differ: {} kernels per rank ({}); this kind is \
                     replayed on each rank alone",
                    kind.label(),
                    counts.join(", ")
                )
            }
            NotMatched::ClocksDisagree { kind, count } => write!(
                f,
                "cannot match {count} {} kernels: a member ended before a peer started \
                 (the ranks' clocks disagree); each is replayed on its own rank",
                kind.label()
            ),
        }
    }
}

/// The collectives of several ranks matched with each other.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectiveMatch {
    groups: Vec<Group>,
    /// What was matched, per kind: `(kind, collectives matched per rank)`.
    pub matched: Vec<(CollectiveKind, usize)>,
    /// Why kinds or collectives were not matched.
    pub reasons: Vec<NotMatched>,
}

impl CollectiveMatch {
    /// Collectives matched (one per group of peers).
    pub fn groups(&self) -> usize {
        self.groups.len()
    }
}

/// Matches the collective kernels of `ranks` (captures with the graphs built from them),
/// as the module docs describe. Fewer than two ranks match nothing.
pub fn match_collectives(ranks: &[(&Capture, &Graph)]) -> CollectiveMatch {
    let mut result = CollectiveMatch {
        groups: Vec::new(),
        matched: Vec::new(),
        reasons: Vec::new(),
    };
    if ranks.len() < 2 {
        return result;
    }
    // Per rank, per kind: (stream ordinal, node) in measured start order.
    type ByKind = BTreeMap<CollectiveKind, Vec<(i64, u32)>>;
    let per_rank: Vec<ByKind> = ranks
        .iter()
        .map(|(capture, graph)| {
            let mut by: ByKind = BTreeMap::new();
            for (i, a) in capture.activities().iter().enumerate() {
                if let KernelClass::Collective(kind) = a.class {
                    let node = (graph.host_nodes + i) as u32;
                    by.entry(kind)
                        .or_default()
                        .push((capture.stream(a.stream).ordinal, node));
                }
            }
            for list in by.values_mut() {
                list.sort_by_key(|&(_, n)| (graph.nodes[n as usize].start, n));
            }
            by
        })
        .collect();
    let mut kinds: Vec<CollectiveKind> = per_rank.iter().flat_map(|b| b.keys().copied()).collect();
    kinds.sort();
    kinds.dedup();
    let empty = Vec::new();
    for kind in kinds {
        if kind == CollectiveKind::SendRecv {
            // A send pairs with one peer's receive, not with every rank's n-th kernel.
            result.reasons.push(NotMatched::PointToPoint);
            continue;
        }
        let lists: Vec<&Vec<(i64, u32)>> = per_rank
            .iter()
            .map(|b| b.get(&kind).unwrap_or(&empty))
            .collect();
        if lists.iter().any(|l| l.len() != lists[0].len()) {
            result.reasons.push(NotMatched::CountsDiffer {
                kind,
                counts: lists.iter().map(|l| l.len()).collect(),
            });
            continue;
        }
        // The same streams with the same counts on every rank: match within each stream.
        let streams = |l: &Vec<(i64, u32)>| {
            let mut m: BTreeMap<i64, usize> = BTreeMap::new();
            for &(s, _) in l {
                *m.entry(s).or_default() += 1;
            }
            m
        };
        let first = streams(lists[0]);
        let sequences: Vec<Vec<Vec<u32>>> = if lists.iter().all(|l| streams(l) == first) {
            first
                .keys()
                .map(|&s| {
                    lists
                        .iter()
                        .map(|l| l.iter().filter(|e| e.0 == s).map(|e| e.1).collect())
                        .collect()
                })
                .collect()
        } else {
            vec![
                lists
                    .iter()
                    .map(|l| l.iter().map(|e| e.1).collect())
                    .collect(),
            ]
        };
        let mut matched = 0;
        let mut disagree = 0;
        for per_rank_nodes in &sequences {
            for i in 0..per_rank_nodes[0].len() {
                let nodes: Vec<(usize, u32)> = per_rank_nodes
                    .iter()
                    .enumerate()
                    .map(|(r, l)| (r, l[i]))
                    .collect();
                let times = |&(r, n): &(usize, u32)| {
                    let node = &ranks[r].1.nodes[n as usize];
                    (node.start, node.end)
                };
                let latest_start = nodes.iter().map(|m| times(m).0).max();
                let earliest_end = nodes.iter().map(|m| times(m).1).min();
                let (Some(latest_start), Some(earliest_end)) = (latest_start, earliest_end) else {
                    continue;
                };
                if earliest_end < latest_start {
                    disagree += 1;
                    continue;
                }
                matched += 1;
                result.groups.push(Group {
                    members: nodes
                        .iter()
                        .map(|m| (m.0 as u32, m.1, times(m).1 - latest_start))
                        .collect(),
                });
            }
        }
        if disagree > 0 {
            result.reasons.push(NotMatched::ClocksDisagree {
                kind,
                count: disagree,
            });
        }
        result.matched.push((kind, matched));
    }
    result
}

/// Replays every rank's graph with its durations in one joint topological order, the
/// matched collectives of `matching` ending at the latest replayed start of their members
/// plus their own transfer time (scaled as the scenario scales the kernel's duration; a
/// removed kernel waits for no peer). With the number of nodes replayed out of the joint
/// order (cycles in the graphs, or a collective whose peers never started: each
/// replayed in its rank's order with the peers that had started).
fn replay_joint(graphs: &[&Graph], durations: &[&Durations], matching: &CollectiveMatch) -> Joint {
    let mut timelines: Vec<Timeline> = graphs.iter().map(|g| g.blank_timeline()).collect();
    let mut group_of: Vec<Vec<u32>> = graphs.iter().map(|g| vec![NONE; g.len()]).collect();
    let mut transfer: Vec<Vec<Nanos>> = graphs.iter().map(|_| Vec::new()).collect();
    for (gi, group) in matching.groups.iter().enumerate() {
        for &(r, n, _) in &group.members {
            group_of[r as usize][n as usize] = gi as u32;
        }
    }
    for (r, g) in graphs.iter().enumerate() {
        transfer[r] = vec![Nanos::ZERO; g.len()];
    }
    for group in &matching.groups {
        for &(r, n, t) in &group.members {
            transfer[r as usize][n as usize] = t;
        }
    }
    // Out-edges and in-degrees, per rank.
    let mut out: Vec<Vec<Vec<u32>>> = Vec::with_capacity(graphs.len());
    let mut indegree: Vec<Vec<u32>> = Vec::with_capacity(graphs.len());
    for g in graphs {
        let mut o = vec![Vec::new(); g.len()];
        let mut d = vec![0u32; g.len()];
        for (n, d) in d.iter_mut().enumerate() {
            for e in g.in_edges(n) {
                o[e.src as usize].push(n as u32);
                *d += 1;
            }
        }
        out.push(o);
        indegree.push(d);
    }
    let mut done: Vec<Vec<bool>> = graphs.iter().map(|g| vec![false; g.len()]).collect();
    let mut started: Vec<Vec<bool>> = done.clone();
    let mut group_started = vec![0usize; matching.groups.len()];
    let mut group_latest: Vec<Option<Nanos>> = vec![None; matching.groups.len()];
    // The member whose start was the latest (the one the others waited for).
    let mut waited_for: Vec<Option<(u32, u32)>> = vec![None; matching.groups.len()];
    let mut queue: VecDeque<(usize, u32)> = VecDeque::new();
    for (r, g) in graphs.iter().enumerate() {
        for &n in &g.order {
            if indegree[r][n as usize] == 0 {
                queue.push_back((r, n));
            }
        }
    }
    // A matched collective's own end: latest start of its started members plus its
    // transfer, scaled with the scenario's duration.
    let collective_end = |r: usize, n: usize, latest: Nanos, start: Nanos| {
        let measured = graphs[r].measured.dur[n];
        let dur = durations[r].dur[n];
        if dur == Nanos::ZERO && measured > Nanos::ZERO {
            return start;
        }
        let t = if dur == measured {
            transfer[r][n]
        } else {
            scale(transfer[r][n], dur, measured)
        };
        latest.max(start) + t
    };
    while let Some((r, n)) = queue.pop_front() {
        let nu = n as usize;
        let (s, bound) = graphs[r].node_start(nu, durations[r], false, &timelines[r]);
        timelines[r].start[nu] = s;
        timelines[r].start_bound[nu] = bound;
        started[r][nu] = true;
        let mut finished: Vec<(usize, u32, Nanos)> = Vec::new();
        let gi = group_of[r][nu];
        if gi == NONE {
            finished.push((r, n, s + durations[r].dur[nu]));
        } else {
            let gi = gi as usize;
            group_started[gi] += 1;
            if group_latest[gi].is_none_or(|l| s > l) {
                waited_for[gi] = Some((r as u32, n));
            }
            group_latest[gi] = Some(group_latest[gi].map_or(s, |l| l.max(s)));
            let members = &matching.groups[gi].members;
            if group_started[gi] == members.len() {
                let latest = group_latest[gi].unwrap_or(s);
                for &(mr, mn, _) in members {
                    let (mr, mnu) = (mr as usize, mn as usize);
                    let own = collective_end(mr, mnu, latest, timelines[mr].start[mnu]);
                    finished.push((mr, mn, own));
                }
            }
        }
        for (fr, fnode, own) in finished {
            let fu = fnode as usize;
            graphs[fr].finish_node(fu, own, &mut timelines[fr]);
            done[fr][fu] = true;
            for &next in &out[fr][fu] {
                let d = &mut indegree[fr][next as usize];
                *d -= 1;
                if *d == 0 {
                    queue.push_back((fr, next));
                }
            }
        }
    }
    // What the joint order could not reach, in each rank's own order.
    let mut out_of_order = 0;
    for (r, g) in graphs.iter().enumerate() {
        for &n in &g.order {
            let nu = n as usize;
            if done[r][nu] {
                continue;
            }
            out_of_order += 1;
            if !started[r][nu] {
                let (s, bound) = g.node_start(nu, durations[r], false, &timelines[r]);
                timelines[r].start[nu] = s;
                timelines[r].start_bound[nu] = bound;
                started[r][nu] = true;
                let gi = group_of[r][nu];
                if gi != NONE {
                    let gi = gi as usize;
                    if group_latest[gi].is_none_or(|l| s > l) {
                        waited_for[gi] = Some((r as u32, n));
                    }
                    group_latest[gi] = Some(group_latest[gi].map_or(s, |l| l.max(s)));
                }
            }
            let s = timelines[r].start[nu];
            let gi = group_of[r][nu];
            let own = if gi == NONE {
                s + durations[r].dur[nu]
            } else {
                collective_end(r, nu, group_latest[gi as usize].unwrap_or(s), s)
            };
            g.finish_node(nu, own, &mut timelines[r]);
            done[r][nu] = true;
        }
    }
    Joint {
        timelines,
        group_of,
        waited_for,
        out_of_order,
    }
}

/// A joint replay's result.
#[derive(Debug)]
struct Joint {
    /// One per rank.
    timelines: Vec<Timeline>,
    /// Per rank, per node: its group of matched peers (`NONE`: not matched).
    group_of: Vec<Vec<u32>>,
    /// Per group: the member that started last, `(rank, node)`: the one its peers waited
    /// for.
    waited_for: Vec<Option<(u32, u32)>>,
    /// Nodes replayed out of the joint order.
    out_of_order: usize,
}

/// One rank's steps under a joint replay.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankSteps {
    /// The rank's position in the slice given.
    pub rank: usize,
    /// The scenario's key on this rank ([`WhatIf::key`]).
    pub key: String,
    /// Each change's key and how many events it changed on this rank.
    pub changed: Vec<(String, usize)>,
    /// One per step window, in the order given: measured, the unchanged joint replay and
    /// the joint replay of the scenario.
    pub steps: Vec<StepPrediction>,
}

/// Several ranks replayed together, each with its own scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RanksPrediction {
    /// One per rank, in the order given.
    pub ranks: Vec<RankSteps>,
    /// What was matched: `(kind, collectives matched per rank)`.
    pub matched: Vec<(CollectiveKind, usize)>,
    /// Why collectives were not matched (`cannot match: counts differ …`); those are
    /// replayed on their own rank, as a single-rank replay does.
    pub reasons: Vec<NotMatched>,
    /// Nodes the joint replay could not place in its joint order (cycles, or a
    /// collective whose peers never started), replayed in their rank's order.
    pub out_of_order: usize,
}

/// Replays `ranks` together ([`match_collectives`], then a joint replay), unchanged and
/// with `what_ifs[r]` on rank `r` (a rank without one, `what_ifs` being shorter, is
/// unchanged), and measures each rank's steps as [`crate::predict`] does.
pub fn predict_ranks(ranks: &[RankCapture<'_>], what_ifs: &[WhatIf]) -> RanksPrediction {
    RanksPredictor::new(ranks).predict_each(what_ifs)
}

/// What every scenario of several ranks replayed together shares: the matching, the
/// unchanged joint replay and each rank's step members, computed once (the joint
/// counterpart of [`crate::Predictor`]).
#[derive(Debug)]
pub struct RanksPredictor<'a> {
    ranks: Vec<RankCapture<'a>>,
    labels: Vec<Option<&'a dyn HostLabels>>,
    names: Vec<String>,
    matching: CollectiveMatch,
    baseline: Joint,
    members: Vec<Vec<Vec<u32>>>,
    /// Per rank: the unchanged single-rank replay with typical delays, median absolute
    /// step error (the graph's structure alone).
    typical_errors: Vec<Option<f64>>,
}

impl<'a> RanksPredictor<'a> {
    /// Matches the collectives of `ranks` and replays them together unchanged.
    pub fn new(ranks: &[RankCapture<'a>]) -> Self {
        let pairs: Vec<(&Capture, &Graph)> = ranks.iter().map(|r| (r.capture, r.graph)).collect();
        let matching = match_collectives(&pairs);
        let graphs: Vec<&Graph> = ranks.iter().map(|r| r.graph).collect();
        let measured: Vec<&Durations> = graphs.iter().map(|g| g.measured()).collect();
        let baseline = replay_joint(&graphs, &measured, &matching);
        let members: Vec<Vec<Vec<u32>>> = ranks
            .iter()
            .map(|r| r.graph.step_members(r.windows))
            .collect();
        let typical_errors = ranks
            .iter()
            .zip(&members)
            .map(|(r, m)| {
                let g = r.graph;
                let typical = g.replay_typical(g.measured());
                let a = g.step_spans(&g.blank_timeline(), r.windows, m);
                let t = g.step_spans(&typical, r.windows, m);
                crate::median(
                    a.iter()
                        .zip(&t)
                        .map(|(a, t)| relative(t.duration(), a.duration()).abs())
                        .collect(),
                )
            })
            .collect();
        RanksPredictor {
            ranks: ranks.to_vec(),
            labels: vec![None; ranks.len()],
            names: (0..ranks.len()).map(|r| r.to_string()).collect(),
            matching,
            baseline,
            members,
            typical_errors,
        }
    }

    /// The same predictor with each rank's host sub-causes' time from `labels[r]`
    /// ([`crate::Change::HostCause`]).
    pub fn with_labels(mut self, labels: Vec<Option<&'a dyn HostLabels>>) -> Self {
        self.labels = labels;
        self.labels.resize(self.ranks.len(), None);
        self
    }

    /// The same predictor naming rank `r` `names[r]` in lanes (`rank 3 GPU 0 stream 7`);
    /// by default its position.
    pub fn with_names(mut self, names: Vec<String>) -> Self {
        if names.len() == self.ranks.len() {
            self.names = names;
        }
        self
    }

    /// The collectives matched across the ranks.
    pub fn matching(&self) -> &CollectiveMatch {
        &self.matching
    }

    fn durations(&self, what_if: &WhatIf, r: usize) -> (Durations, Vec<usize>) {
        let rank = &self.ranks[r];
        what_if.durations_labelled(rank.graph, rank.capture, self.labels[r])
    }

    fn replay(&self, scenario: &[Durations]) -> Joint {
        let graphs: Vec<&Graph> = self.ranks.iter().map(|r| r.graph).collect();
        let durations: Vec<&Durations> = scenario.iter().collect();
        replay_joint(&graphs, &durations, &self.matching)
    }

    /// Replays `what_if` on every rank at once (a change of the program runs on every
    /// rank) and measures the steps of rank `rank` as [`crate::Predictor::predict`] does;
    /// its critical path is walked across ranks, through a matched collective to the peer
    /// it waited for, and its lanes are named with their rank. `None` for a rank out of
    /// range.
    pub fn predict(&self, what_if: &WhatIf, rank: usize) -> Option<Prediction> {
        let this = self.ranks.get(rank)?;
        let mut totals = vec![0usize; what_if.changes.len()];
        let scenario: Vec<Durations> = (0..self.ranks.len())
            .map(|r| {
                let (d, counts) = self.durations(what_if, r);
                for (t, c) in totals.iter_mut().zip(counts) {
                    *t += c;
                }
                d
            })
            .collect();
        let changed = self.replay(&scenario);
        let g = this.graph;
        let members = &self.members[rank];
        let measured = g.blank_timeline();
        let all = [
            &measured,
            &self.baseline.timelines[rank],
            &changed.timelines[rank],
        ]
        .map(|t| g.step_spans(t, this.windows, members));
        let provenance = || Provenance::inferred(format!("{ASSUMPTIONS}; {RANK_ASSUMPTIONS}"));
        let placed = crate::place_steps(this.windows, [&all[0], &all[1], &all[2]], provenance);
        let lanes = |joint: &Joint, spans: &[StepSpan]| -> Vec<LaneTime> {
            let Some(i) = placed.median_step else {
                return Vec::new();
            };
            self.critical_lanes(joint, rank, &spans[i])
        };
        Some(Prediction {
            key: what_if.key(),
            matched: what_if
                .changes
                .iter()
                .map(ToString::to_string)
                .zip(totals)
                .collect(),
            critical_before: lanes(&self.baseline, &all[1]),
            critical_after: lanes(&changed, &all[2]),
            steps: placed.steps,
            median_step: placed.median_step,
            wall: placed.wall,
            replay_error: placed.replay_error,
            typical_replay_error: self.typical_errors[rank],
            stats: g.stats().clone(),
            ranks: Some(RanksNote {
                ranks: self.names.clone(),
                rank: self.names[rank].clone(),
                matched: self.matching.matched.clone(),
                reasons: self.matching.reasons.clone(),
                out_of_order: self.baseline.out_of_order.max(changed.out_of_order),
            }),
        })
    }

    /// Replays `what_ifs[r]` on rank `r` (unchanged where `what_ifs` is shorter) and
    /// measures every rank's steps.
    pub fn predict_each(&self, what_ifs: &[WhatIf]) -> RanksPrediction {
        let unchanged = WhatIf {
            changes: Vec::new(),
        };
        let changed: Vec<(Durations, Vec<usize>, &WhatIf)> = (0..self.ranks.len())
            .map(|r| {
                let w = what_ifs.get(r).unwrap_or(&unchanged);
                let (d, counts) = self.durations(w, r);
                (d, counts, w)
            })
            .collect();
        let scenario: Vec<Durations> = changed.iter().map(|c| c.0.clone()).collect();
        let predicted = self.replay(&scenario);
        let inferred = || Provenance::inferred(format!("{ASSUMPTIONS}; {RANK_ASSUMPTIONS}"));
        let per_rank = self
            .ranks
            .iter()
            .enumerate()
            .map(|(r, rank)| {
                let g = rank.graph;
                let members = &self.members[r];
                let as_measured = g.blank_timeline();
                let [a, b, c] = [
                    &as_measured,
                    &self.baseline.timelines[r],
                    &predicted.timelines[r],
                ]
                .map(|t| g.step_spans(t, rank.windows, members));
                let steps = rank
                    .windows
                    .iter()
                    .enumerate()
                    .map(|(i, w)| StepPrediction {
                        number: w.number,
                        measured: Labelled::measured(a[i].duration()),
                        baseline: Labelled::new(b[i].duration(), inferred()),
                        predicted: Labelled::new(c[i].duration(), inferred()),
                    })
                    .collect();
                let (_, counts, w) = &changed[r];
                RankSteps {
                    rank: r,
                    key: w.key(),
                    changed: w
                        .changes
                        .iter()
                        .map(ToString::to_string)
                        .zip(counts.iter().copied())
                        .collect(),
                    steps,
                }
            })
            .collect();
        RanksPrediction {
            ranks: per_rank,
            matched: self.matching.matched.clone(),
            reasons: self.matching.reasons.clone(),
            out_of_order: self.baseline.out_of_order.max(predicted.out_of_order),
        }
    }

    /// [`Graph::critical_lanes`] across ranks: where a matched collective ended after the
    /// latest start of its peers, and that peer is another rank's member, the walk goes
    /// on from that peer's start on its rank. Lanes are named with their rank.
    fn critical_lanes(&self, joint: &Joint, rank: usize, span: &StepSpan) -> Vec<LaneTime> {
        let mut lanes: Vec<((usize, Lane), Nanos)> = Vec::new();
        let mut add = |lane: (usize, Lane), from: Nanos, to: Nanos| {
            let time = (to - from.max(span.start)).max(Nanos::ZERO);
            if time > Nanos::ZERO {
                match lanes.iter_mut().find(|(l, _)| *l == lane) {
                    Some(entry) => entry.1 += time,
                    None => lanes.push((lane, time)),
                }
            }
        };
        let Some(last) = span.last else {
            return Vec::new();
        };
        let (mut r, mut n) = (rank, last as usize);
        let mut exit = span.end;
        let total: usize = self.ranks.iter().map(|x| x.graph.len()).sum();
        for _ in 0..total {
            if exit <= span.start {
                break;
            }
            let g = self.ranks[r].graph;
            let t = &joint.timelines[r];
            let lane = (r, g.nodes[n].lane);
            let end_bound = t.end_bound[n];
            if end_bound != NONE {
                let e = &g.edges[end_bound as usize];
                let src_end = t.end[e.src as usize];
                add(lane, src_end, exit);
                n = e.src as usize;
                exit = src_end;
                continue;
            }
            let gi = joint.group_of[r][n];
            if let Some(&Some((pr, pn))) = (gi != NONE)
                .then(|| joint.waited_for.get(gi as usize))
                .flatten()
            {
                let (pr, pn) = (pr as usize, pn as usize);
                let peer_start = joint.timelines[pr].start[pn];
                if (pr, pn) != (r, n) && peer_start > t.start[n] {
                    add(lane, peer_start, exit);
                    (r, n, exit) = (pr, pn, peer_start);
                    continue;
                }
            }
            add(lane, t.start[n], exit);
            let bound = t.start_bound[n];
            if bound == NONE {
                break;
            }
            let e = &g.edges[bound as usize];
            let src = e.src as usize;
            let src_time = match e.kind {
                EdgeKind::Launch if t.end[src] + e.delay < t.start[src] => t.start[src],
                _ => t.end[src],
            };
            add(lane, src_time, t.start[n]);
            n = src;
            exit = src_time.min(t.end[src]);
        }
        lanes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        lanes
            .into_iter()
            .map(|((r, lane), time)| LaneTime {
                lane: LaneName::of(lane, self.ranks[r].capture).on_rank(self.names[r].clone()),
                time,
            })
            .collect()
    }
}

/// Where a prediction comes from a joint replay of several ranks
/// ([`RanksPredictor::predict`]): which ranks, and what was and was not matched.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RanksNote {
    /// The ranks replayed together, by name.
    pub ranks: Vec<String>,
    /// The rank whose steps the prediction measures.
    pub rank: String,
    /// What was matched: `(kind, collectives matched per rank)`.
    pub matched: Vec<(CollectiveKind, usize)>,
    /// Why collectives were not matched; those replay on their own rank.
    pub reasons: Vec<NotMatched>,
    /// Nodes replayed out of the joint order (cycles, a collective whose peers never
    /// started).
    pub out_of_order: usize,
}

impl RankSteps {
    /// The steps' replay errors against the measurement (unchanged joint replay).
    pub fn errors(&self) -> Vec<f64> {
        self.steps
            .iter()
            .map(|s| relative(s.baseline.value, s.measured.value))
            .collect()
    }
}
