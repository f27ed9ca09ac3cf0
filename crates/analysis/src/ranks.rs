//! Cross-rank answers over a rank directory: per-rank step time and its spread, clock
//! offsets estimated from matched collectives, the arrival skew of each collective
//! instance, and stragglers.
//!
//! Each rank is reduced to a [`RankTimeline`] (its step durations and the start and end
//! of its collectives, a few numbers per step) as soon as it is read, so that the cross-rank
//! pass ([`cross_rank`]) needs no capture in memory: a tool maps each capture to its
//! timeline with `load::map_each` and drops the capture.
//!
//! Collectives are matched across ranks by their order: the k-th collective kernel of
//! every rank (by start time) is taken to be the same instance. A collective ends at
//! about the same true time on every rank (the last arrival releases everyone), so the
//! median over instances of `end(rank) - end(reference)` estimates a rank's clock offset
//! from the reference rank (the first one). Arrivals (collective starts) are compared
//! after that correction: a rank that arrives later than the median by more than the
//! threshold made the others wait.

use trace_model::{Capture, KernelClass, Nanos};

use crate::steps::{Spread, find_steps};

/// One rank, reduced to what the cross-rank analyses need.
#[derive(Debug, Clone)]
pub struct RankTimeline {
    /// The file it was read from, for rows without a rank.
    pub label: String,
    /// The rank, when known.
    pub rank: Option<i64>,
    /// `baseTimeNanoseconds`, when recorded.
    pub base_time_ns: Option<i64>,
    /// Each step's number and duration (`measured`), in time order.
    pub steps: Vec<(i64, Nanos)>,
    /// Every collective kernel, in start order.
    pub collectives: Vec<CollectiveTime>,
    /// Each step's number and the rank's work time in it (`measured`): from the step's
    /// start to the start of its last collective kernel (when the rank arrived to wait for
    /// the others), or the step's duration when no collective kernel is in the step. In
    /// step order, like `steps`.
    pub work: Vec<(i64, Nanos)>,
}

/// One collective kernel on one rank (times on the rank's own capture axis).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollectiveTime {
    /// The step it ran in, when it is in one.
    pub step: Option<i64>,
    /// When it started on the GPU: when this rank arrived.
    pub start: Nanos,
    /// When it ended.
    pub end: Nanos,
}

/// Reduces one capture to its [`RankTimeline`].
pub fn rank_timeline(capture: &Capture, label: &str, rank: Option<i64>) -> RankTimeline {
    let steps = find_steps(capture);
    let mut collectives: Vec<(u64, CollectiveTime)> = capture
        .activities()
        .iter()
        .zip(&steps.activity_step)
        .filter(|(a, _)| matches!(a.class, KernelClass::Collective(_)))
        .map(|(a, s)| {
            (
                a.source_index,
                CollectiveTime {
                    step: s.map(|i| steps.steps[i as usize].number),
                    start: a.start,
                    end: Nanos(a.start.0 + a.dur.0),
                },
            )
        })
        .collect();
    collectives.sort_by_key(|(idx, c)| (c.start, *idx));
    let work = steps
        .steps
        .iter()
        .map(|s| {
            let last_arrival = collectives
                .iter()
                .filter(|(_, c)| c.step == Some(s.number))
                .map(|(_, c)| c.start)
                .max();
            let work = match last_arrival {
                Some(arrival) => Nanos((arrival.0 - s.range.start.0).max(0)),
                None => s.duration(),
            };
            (s.number, work)
        })
        .collect();
    RankTimeline {
        label: label.to_owned(),
        rank,
        base_time_ns: capture.meta().base_time_ns,
        steps: steps
            .steps
            .iter()
            .map(|s| (s.number, s.duration()))
            .collect(),
        collectives: collectives.into_iter().map(|(_, c)| c).collect(),
        work,
    }
}

/// What to call late.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// A rank is late at a collective when it arrives more than this after the median
    /// arrival; `None`: the larger of 50 µs and 1 % of the median step time.
    pub late_threshold: Option<Nanos>,
}

/// The cross-rank figures of a rank directory.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CrossRank {
    /// One row per rank, in the order given.
    pub ranks: Vec<RankRow>,
    /// Spread over ranks of their median step time (`measured`).
    pub step_time_spread: Option<Spread>,
    /// The rank clock offsets are relative to (the first one).
    pub reference: Option<i64>,
    /// Collective instances matched across ranks by order (the fewest any rank has).
    pub matched_collectives: usize,
    /// True when ranks have different numbers of collectives (only the first
    /// `matched_collectives` of each are compared, which may mismatch instances).
    pub collective_counts_differ: bool,
    /// True when every rank recorded `baseTimeNanoseconds` and times were put on it
    /// before the offsets were estimated.
    pub aligned_on_base_time: bool,
    /// The lateness threshold used.
    pub late_threshold: Nanos,
    /// Per matched instance: its step (on the reference rank), the rank that arrived
    /// last and the arrival spread (last minus first, after clock correction).
    pub skew: Vec<CollectiveSkew>,
    /// Ranks late at some step's last collective, latest first.
    pub stragglers: Vec<Straggler>,
}

/// One rank's cross-rank figures.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RankRow {
    /// The rank, when known.
    pub rank: Option<i64>,
    /// Its file.
    pub label: String,
    /// Steps seen.
    pub steps: usize,
    /// Median step duration (`measured`).
    pub median_step: Option<Nanos>,
    /// Estimated clock offset from the reference rank (`inferred`: median over matched
    /// collectives of the difference of their ends); `None` without matched collectives.
    pub clock_offset: Option<Nanos>,
    /// How far the per-instance differences lie from that median at most: how well the
    /// offset is determined (`measured`).
    pub offset_residual: Option<Nanos>,
}

/// One collective instance across ranks.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CollectiveSkew {
    /// Its index in every rank's order.
    pub index: usize,
    /// Its step on the reference rank.
    pub step: Option<i64>,
    /// The rank that arrived last.
    pub last_rank: Option<i64>,
    /// Last arrival minus first, after clock correction (`inferred`).
    pub arrival_spread: Nanos,
}

/// A rank that made the others wait.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Straggler {
    /// The rank.
    pub rank: Option<i64>,
    /// Its file.
    pub label: String,
    /// The first step at whose last collective it arrived late.
    pub first_step: i64,
    /// Median over its late steps of how much later than the median rank it arrived
    /// (`inferred`, after clock correction).
    pub late_by: Nanos,
    /// Steps it was late at, from `first_step` on.
    pub late_steps: usize,
    /// Steps compared from `first_step` on.
    pub steps_from_first: usize,
}

/// The cross-rank figures of `timelines` (one per rank, in rank order); `None` for fewer
/// than two ranks.
pub fn cross_rank(timelines: &[RankTimeline], config: &Config) -> Option<CrossRank> {
    if timelines.len() < 2 {
        return None;
    }
    let aligned = timelines.iter().all(|t| t.base_time_ns.is_some());
    let base = |t: &RankTimeline| {
        if aligned {
            t.base_time_ns.unwrap_or(0)
        } else {
            0
        }
    };
    let medians: Vec<Option<Nanos>> = timelines
        .iter()
        .map(|t| Spread::of(t.steps.iter().map(|s| s.1)).map(|s| s.median))
        .collect();
    let step_time_spread = Spread::of(medians.iter().flatten().copied());
    let late_threshold = config
        .late_threshold
        .unwrap_or_else(|| Nanos(50_000.max(step_time_spread.map_or(0, |s| s.median.0 / 100))));
    let matched = timelines
        .iter()
        .map(|t| t.collectives.len())
        .min()
        .unwrap_or(0);
    let counts_differ = timelines.iter().any(|t| t.collectives.len() != matched);
    let reference = &timelines[0];
    let mut offsets: Vec<Option<(Nanos, Nanos)>> = Vec::with_capacity(timelines.len());
    for t in timelines {
        let diffs: Vec<Nanos> = (0..matched)
            .map(|k| {
                Nanos(
                    (base(t) + t.collectives[k].end.0)
                        - (base(reference) + reference.collectives[k].end.0),
                )
            })
            .collect();
        offsets.push(Spread::of(diffs.iter().copied()).map(|s| {
            let residual = diffs
                .iter()
                .map(|d| (d.0 - s.median.0).abs())
                .max()
                .unwrap_or(0);
            (s.median, Nanos(residual))
        }));
    }
    // Arrival of rank r at instance k on the reference rank's clock.
    let arrival = |r: usize, k: usize| -> i64 {
        let t = &timelines[r];
        base(t) + t.collectives[k].start.0 - offsets[r].map_or(0, |o| o.0.0)
    };
    let mut skew = Vec::with_capacity(matched);
    // lateness[k][r]: rank r's arrival minus the median arrival at instance k.
    let mut lateness: Vec<Vec<i64>> = Vec::with_capacity(matched);
    for (k, first_rank) in reference.collectives.iter().take(matched).enumerate() {
        let arrivals: Vec<i64> = (0..timelines.len()).map(|r| arrival(r, k)).collect();
        let mut sorted = arrivals.clone();
        sorted.sort_unstable();
        let median = sorted[(sorted.len() - 1) / 2];
        lateness.push(arrivals.iter().map(|a| a - median).collect());
        let (last, _) = arrivals
            .iter()
            .enumerate()
            .max_by_key(|(r, a)| (**a, std::cmp::Reverse(*r)))
            .expect("invariant: at least two ranks");
        skew.push(CollectiveSkew {
            index: k,
            step: first_rank.step,
            last_rank: timelines[last].rank,
            arrival_spread: Nanos(sorted[sorted.len() - 1] - sorted[0]),
        });
    }
    let mut stragglers = Vec::new();
    for (r, t) in timelines.iter().enumerate() {
        // Each step's last matched collective on this rank, in step order.
        let mut per_step: Vec<(i64, i64)> = Vec::new();
        for (k, c) in t.collectives.iter().take(matched).enumerate() {
            let Some(step) = c.step else {
                continue;
            };
            let late = lateness[k][r];
            match per_step.last_mut() {
                Some(last) if last.0 == step => last.1 = late,
                _ => per_step.push((step, late)),
            }
        }
        let Some(first) = per_step.iter().position(|(_, l)| *l > late_threshold.0) else {
            continue;
        };
        let late: Vec<Nanos> = per_step[first..]
            .iter()
            .filter(|(_, l)| *l > late_threshold.0)
            .map(|(_, l)| Nanos(*l))
            .collect();
        stragglers.push(Straggler {
            rank: t.rank,
            label: t.label.clone(),
            first_step: per_step[first].0,
            late_by: Spread::of(late.iter().copied())
                .expect("invariant: the first late step is in the list")
                .median,
            late_steps: late.len(),
            steps_from_first: per_step.len() - first,
        });
    }
    stragglers.sort_by_key(|s| std::cmp::Reverse(s.late_by));
    let ranks = timelines
        .iter()
        .zip(&medians)
        .zip(&offsets)
        .map(|((t, median), offset)| RankRow {
            rank: t.rank,
            label: t.label.clone(),
            steps: t.steps.len(),
            median_step: *median,
            clock_offset: offset.map(|o| o.0),
            offset_residual: offset.map(|o| o.1),
        })
        .collect();
    Some(CrossRank {
        ranks,
        step_time_spread,
        reference: reference.rank,
        matched_collectives: matched,
        collective_counts_differ: counts_differ,
        aligned_on_base_time: aligned,
        late_threshold,
        skew,
        stragglers,
    })
}

/// Rank × step: each rank's work time in each step ([`RankTimeline::work`]) beside that
/// step's median over the ranks. In a job whose ranks wait for each other at collectives
/// every rank's step takes about as long; the time before the step's last collective is
/// what differs, and a rank that takes longer there made the others wait.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepHeatMap {
    /// The step numbers (columns), ascending: every step some rank has.
    pub steps: Vec<i64>,
    /// Per step: the median over the ranks that have it (`measured`).
    pub medians: Vec<Option<Nanos>>,
    /// One row per rank, in the order given.
    pub rows: Vec<HeatRow>,
}

/// One rank's row of a [`StepHeatMap`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HeatRow {
    /// The rank, when known.
    pub rank: Option<i64>,
    /// Its file.
    pub label: String,
    /// Per step (as [`StepHeatMap::steps`]): its work time, `None` when it lacks the step.
    pub cells: Vec<Option<Nanos>>,
}

impl StepHeatMap {
    /// A cell over its step's median: 1.0 is the median rank, 1.1 took 10 % longer.
    pub fn ratio(&self, row: usize, step: usize) -> Option<f64> {
        let value = self.rows.get(row)?.cells.get(step).copied().flatten()?;
        let median = self.medians.get(step).copied().flatten()?;
        (median.0 > 0).then(|| value.0 as f64 / median.0 as f64)
    }

    /// The hottest cell: (row, step index, ratio); ties go to the first row, then step.
    pub fn hottest(&self) -> Option<(usize, usize, f64)> {
        let mut best: Option<(usize, usize, f64)> = None;
        for row in 0..self.rows.len() {
            for step in 0..self.steps.len() {
                if let Some(r) = self.ratio(row, step)
                    && best.is_none_or(|b| r > b.2)
                {
                    best = Some((row, step, r));
                }
            }
        }
        best
    }
}

/// The rank × step heat map of `timelines` (one per rank, in rank order); `None` for
/// fewer than two ranks or no step.
pub fn step_heat_map(timelines: &[RankTimeline]) -> Option<StepHeatMap> {
    if timelines.len() < 2 {
        return None;
    }
    let steps: Vec<i64> = timelines
        .iter()
        .flat_map(|t| t.work.iter().map(|w| w.0))
        .collect::<std::collections::BTreeSet<i64>>()
        .into_iter()
        .collect();
    if steps.is_empty() {
        return None;
    }
    let rows: Vec<HeatRow> = timelines
        .iter()
        .map(|t| HeatRow {
            rank: t.rank,
            label: t.label.clone(),
            cells: steps
                .iter()
                .map(|n| t.work.iter().find(|w| w.0 == *n).map(|w| w.1))
                .collect(),
        })
        .collect();
    let medians = (0..steps.len())
        .map(|i| Spread::of(rows.iter().filter_map(|r| r.cells[i])).map(|s| s.median))
        .collect();
    Some(StepHeatMap {
        steps,
        medians,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rank with `steps` steps of 1 ms and one collective per step, starting at
    /// `arrive(step)` and ending at `1_000_000 * (step + 1) + offset` (its clock).
    fn timeline(rank: i64, offset: i64, arrive: impl Fn(i64) -> i64) -> RankTimeline {
        RankTimeline {
            label: format!("rank{rank}"),
            rank: Some(rank),
            base_time_ns: None,
            steps: (0..6).map(|s| (s, Nanos(1_000_000))).collect(),
            work: (0..6)
                .map(|s| (s, Nanos(arrive(s) - 1_000_000 * s)))
                .collect(),
            collectives: (0..6)
                .map(|s| CollectiveTime {
                    step: Some(s),
                    start: Nanos(arrive(s) + offset),
                    end: Nanos(1_000_000 * (s + 1) + offset),
                })
                .collect(),
        }
    }

    fn check(ranks: &[RankTimeline], offsets: &[i64], straggler: Option<(i64, i64, i64)>) {
        let x = cross_rank(
            ranks,
            &Config {
                late_threshold: None,
            },
        )
        .expect("two ranks or more");
        let got: Vec<i64> = x.ranks.iter().map(|r| r.clock_offset.unwrap().0).collect();
        assert_eq!(got, offsets);
        let found = x
            .stragglers
            .first()
            .map(|s| (s.rank.unwrap(), s.first_step, s.late_by.0));
        assert_eq!(found, straggler);
    }

    #[test]
    fn offsets_and_straggler() {
        let on_time = |s: i64| 1_000_000 * s + 600_000;
        let late_from_3 = |s: i64| 1_000_000 * s + 600_000 + if s >= 3 { 200_000 } else { 0 };
        check(
            &[
                timeline(0, 0, on_time),
                timeline(1, 7_000, on_time),
                timeline(2, -9_000, late_from_3),
            ],
            &[0, 7_000, -9_000],
            Some((2, 3, 200_000)),
        );
        check(
            &[timeline(0, 0, on_time), timeline(1, 123, on_time)],
            &[0, 123],
            None,
        );
    }

    /// The late rank's cells from its first late step on are the hottest, by its delay
    /// over the median rank's work.
    #[test]
    fn heat_map_marks_the_late_steps() {
        let on_time = |s: i64| 1_000_000 * s + 600_000;
        let late_from_3 = |s: i64| 1_000_000 * s + 600_000 + if s >= 3 { 200_000 } else { 0 };
        let ranks = [
            timeline(0, 0, on_time),
            timeline(1, 7_000, on_time),
            timeline(2, -9_000, late_from_3),
        ];
        let map = step_heat_map(&ranks).expect("three ranks");
        assert_eq!(map.steps, (0..6).collect::<Vec<_>>());
        assert_eq!(map.medians[4], Some(Nanos(600_000)));
        assert_eq!(map.hottest(), Some((2, 3, 800_000.0 / 600_000.0)));
        assert_eq!(map.ratio(2, 2), Some(1.0));
        assert_eq!(map.ratio(0, 5), Some(1.0));
        assert!(step_heat_map(&ranks[..1]).is_none());
    }

    #[test]
    fn one_rank_has_no_cross_rank_figures() {
        assert!(
            cross_rank(
                &[timeline(0, 0, |s| s)],
                &Config {
                    late_threshold: None
                }
            )
            .is_none()
        );
    }
}
