//! Step 6's replayed estimates: each ranked cause's what-if scenario
//! (`replay::cause_scenario`) replayed on the dependency graph of the capture the
//! investigation already holds, over the steady-state steps, with the replay's error on
//! the unchanged capture beside it.

use analysis::CaptureAnalysis;
use trace_model::{Capture, Nanos};

use crate::model::{CauseReplay, NoScenarioReason, Replayed};

/// `what_if` replayed on `capture` as step 6's estimates replay a cause: over the
/// steady-state steps of `r` (the capture's own step ranges where it has none), with the
/// host sub-causes' time from the idle-time split; or the reason it cannot be replayed.
pub(crate) fn what_if_prediction(
    r: &CaptureAnalysis,
    capture: &Capture,
    what_if: &replay::WhatIf,
) -> Result<replay::Prediction, replay::CannotReplay> {
    let graph = replay::Graph::build(capture)?;
    let mut windows = steady_windows(r);
    if windows.is_empty() {
        windows = replay::capture_windows(capture);
    }
    let labels = Labels::of(capture);
    Ok(replay::Predictor::new(&graph, capture, &windows)
        .with_labels(&labels)
        .predict(what_if))
}

/// Whether the causes' replays are turned off (`TRACEWISE_REPLAY=0`): the baseline of
/// the benchmark row that measures what the replays add to investigate (`cargo xtask
/// bench --pipeline`); every cause's replay is then "not computed".
pub(crate) fn replay_off() -> bool {
    std::env::var_os("TRACEWISE_REPLAY").is_some_and(|v| v == "0")
}

/// The steady-state steps of `r` as replay windows, in step order.
pub(crate) fn steady_windows(r: &CaptureAnalysis) -> Vec<replay::StepWindow> {
    r.steps
        .steps
        .iter()
        .enumerate()
        .filter(|(i, _)| r.warm_up.all || r.warm_up.steps.binary_search(i).is_err())
        .map(|(_, s)| replay::StepWindow {
            number: s.number,
            start: s.range.start,
            end: s.range.end,
            gpu_ranged: !r.steps.origin.is_host_ranged(),
        })
        .collect()
}

/// The replayed estimate of each cause key of `keys`, in order. The graph is built once
/// and the unchanged capture replayed once ([`replay::Predictor`]); nothing is built
/// when no cause has a scenario.
pub(crate) fn replay_causes(
    r: &CaptureAnalysis,
    capture: &Capture,
    keys: &[String],
) -> Vec<CauseReplay> {
    if replay_off() {
        return keys.iter().map(|_| CauseReplay::NotComputed).collect();
    }
    let scenarios: Vec<Option<replay::WhatIf>> =
        keys.iter().map(|k| replay::cause_scenario(k)).collect();
    if scenarios.iter().all(Option::is_none) {
        return keys.iter().map(|k| no_scenario(k)).collect();
    }
    // The host labels (only for host sub-cause scenarios) are computed on a second
    // thread while the graph is built and the unchanged capture replayed: the replays'
    // wall time, which the bench row `investigate ÷ investigate without the replays`
    // holds to 1.25×.
    let needs_labels = scenarios.iter().flatten().any(|w| {
        w.changes
            .iter()
            .any(|c| matches!(c, replay::Change::HostCause(_)))
    });
    std::thread::scope(|scope| {
        let labels = needs_labels.then(|| scope.spawn(|| Labels::of(capture)));
        replay_with(r, capture, keys, &scenarios, labels)
    })
}

/// Why the cause of `key` has no scenario: the compute class a compute-bound verdict names
/// (removing it is no change a knob makes), or a cause no change of durations expresses.
fn no_scenario(key: &str) -> CauseReplay {
    let reason = if key.starts_with("compute:") {
        NoScenarioReason::ComputeClass
    } else {
        NoScenarioReason::NoDurationChange
    };
    CauseReplay::NoScenario { reason }
}

/// [`replay_causes`] once the scenarios are known, with the host labels being computed
/// on `labels` (joined once the unchanged replay is done).
fn replay_with(
    r: &CaptureAnalysis,
    capture: &Capture,
    keys: &[String],
    scenarios: &[Option<replay::WhatIf>],
    labels: Option<std::thread::ScopedJoinHandle<'_, Labels>>,
) -> Vec<CauseReplay> {
    let windows = steady_windows(r);
    let graph = match replay::Graph::build(capture) {
        Ok(g) => g,
        Err(reason) => {
            return scenarios
                .iter()
                .zip(keys)
                .map(|(s, k)| match s {
                    Some(_) => CauseReplay::CannotReplay {
                        reason: reason.clone(),
                    },
                    None => no_scenario(k),
                })
                .collect();
        }
    };
    if windows.is_empty() {
        return scenarios
            .iter()
            .map(|_| CauseReplay::CannotReplay {
                reason: replay::CannotReplay::NoSteadySteps,
            })
            .collect();
    }
    let predictor = replay::Predictor::new(&graph, capture, &windows);
    let labels = labels.map(|h| h.join().unwrap_or_else(|_| Labels::of(capture)));
    let predictor = match &labels {
        Some(labels) => predictor.with_labels(labels),
        None => predictor,
    };
    let jobs: Vec<_> = scenarios
        .iter()
        .zip(keys)
        .map(|(s, k)| (s.as_ref(), k.as_str()))
        .collect();
    replay_on_threads(&predictor, &jobs)
}

/// The causes' scenarios replayed on two threads (they share nothing but the read-only
/// predictor), in the order given. The scenarios alternate between the threads: causes
/// come ranked, and neighbours tend to be alike in cost (the host sub-causes' scenarios
/// replay the whole graph, a GPU class's only what its change moves), so each thread gets
/// a share of both.
fn replay_on_threads(
    predictor: &replay::Predictor<'_>,
    jobs: &[(Option<&replay::WhatIf>, &str)],
) -> Vec<CauseReplay> {
    let one = |&(s, k): &(Option<&replay::WhatIf>, &str)| match s {
        None => no_scenario(k),
        Some(what_if) => CauseReplay::Replayed(Box::new(replayed(&predictor.predict(what_if)))),
    };
    std::thread::scope(|scope| {
        let odd = scope.spawn(|| jobs.iter().skip(1).step_by(2).map(one).collect::<Vec<_>>());
        let even: Vec<CauseReplay> = jobs.iter().step_by(2).map(one).collect();
        let odd = match odd.join() {
            Ok(odd) => odd,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let mut out = Vec::with_capacity(jobs.len());
        let (mut even, mut odd) = (even.into_iter(), odd.into_iter());
        for i in 0..jobs.len() {
            let next = if i % 2 == 0 { even.next() } else { odd.next() };
            out.extend(next);
        }
        out
    })
}

pub(crate) fn replayed(p: &replay::Prediction) -> Replayed {
    // The steps' wall (first start to last end) over their count: the window's mean step,
    // as the subtraction's estimate takes it. A mean of step spans can grow when a cause
    // goes (a step's first kernel moves earlier while its end stays), although no
    // activity ends later: the wall cannot.
    let n = p.steps.len().max(1) as i64;
    let mean = |wall: &trace_model::Labelled<Nanos>| Nanos(wall.value.0 / n);
    let replayed_step = mean(&p.wall[1]);
    let step_after = mean(&p.wall[2]);
    Replayed {
        scenario: p.key.clone(),
        events_changed: p.matched.iter().map(|(_, n)| n).sum(),
        measured_step: mean(&p.wall[0]),
        replayed_step,
        step_after,
        change: if replayed_step.0 == 0 {
            0.0
        } else {
            (step_after.0 - replayed_step.0) as f64 / replayed_step.0 as f64
        },
        replay_error: p.replay_error,
        typical_replay_error: p.typical_replay_error,
        critical_lane_before: p.critical_before.first().map(|l| l.lane.clone()),
        critical_lane_after: p.critical_after.first().map(|l| l.lane.clone()),
        ranks: p.ranks.as_ref().map(|n| crate::joint::RanksReplayed {
            ranks: n.ranks.clone(),
            matched: n.matched.clone(),
            not_matched: n.reasons.clone(),
        }),
        alone: None,
    }
}

/// Each thread's time labelled by analysis's host sub-causes, for the replay's host
/// scenarios (`host:allocator=0`): the same labels that split the idle time.
#[derive(Debug)]
pub(crate) struct Labels {
    /// Per thread (by index): its labelled stretches and their running sums.
    threads: Vec<ThreadStretches>,
}

/// One thread's labelled stretches (sorted, disjoint), with running sums that make the
/// time of a range two binary searches: `H(to) - H(from)`, where `H(t)` is the time
/// before `t` that a stretch (of one sub-cause, or of any) covers.
#[derive(Debug)]
struct ThreadStretches {
    starts: Vec<Nanos>,
    ends: Vec<Nanos>,
    labels: Vec<Option<analysis::HostCause>>,
    /// Time covered by stretches `..i`: `covered[i]` (one more entry than stretches).
    covered: Vec<Nanos>,
    /// The same for each sub-cause's stretches alone (by `HostCause::ALL`'s order),
    /// worked out when first asked for.
    held: [std::sync::OnceLock<Vec<Nanos>>; analysis::HostCause::ALL.len()],
}

impl ThreadStretches {
    fn new(stretches: Vec<(Nanos, Nanos, Option<analysis::HostCause>)>) -> ThreadStretches {
        let mut covered = Vec::with_capacity(stretches.len() + 1);
        let mut sum = Nanos::ZERO;
        covered.push(sum);
        for &(s, e, _) in &stretches {
            sum += (e - s).max(Nanos::ZERO);
            covered.push(sum);
        }
        ThreadStretches {
            starts: stretches.iter().map(|s| s.0).collect(),
            ends: stretches.iter().map(|s| s.1).collect(),
            labels: stretches.iter().map(|s| s.2).collect(),
            covered,
            held: Default::default(),
        }
    }

    /// The running sums of `cause`'s stretches.
    fn held(&self, cause: analysis::HostCause) -> &[Nanos] {
        let i = analysis::HostCause::ALL
            .iter()
            .position(|&c| c == cause)
            .unwrap_or(0);
        self.held[i].get_or_init(|| {
            let mut out = Vec::with_capacity(self.labels.len() + 1);
            let mut sum = Nanos::ZERO;
            out.push(sum);
            for (k, &label) in self.labels.iter().enumerate() {
                if label == Some(cause) {
                    sum += (self.ends[k] - self.starts[k]).max(Nanos::ZERO);
                }
                out.push(sum);
            }
            out
        })
    }

    /// The stretch that holds or follows `t` (the first ending after it): walked to from
    /// `hint` where `t` is at or after the end of the stretch before it (a later range
    /// of the same thread), else a binary search.
    fn at(&self, t: Nanos, hint: usize) -> usize {
        if hint == 0 || self.ends.get(hint - 1).is_some_and(|&end| end <= t) {
            let mut k = hint;
            while k < self.ends.len() && self.ends[k] <= t {
                k += 1;
            }
            k
        } else {
            self.ends.partition_point(|&end| end <= t)
        }
    }

    /// `H(t)` of the running sums `sums`, where stretch `k` (from [`ThreadStretches::at`])
    /// holds or follows `t` and counts only where `counts(k)`: the stretches ending by `t`
    /// in full, and the part before `t` of the one that holds it.
    fn before(&self, sums: &[Nanos], t: Nanos, k: usize, counts: impl Fn(usize) -> bool) -> Nanos {
        let mut h = sums[k];
        if k < self.starts.len() && counts(k) {
            h += (t - self.starts[k]).max(Nanos::ZERO);
        }
        h
    }
}

impl Labels {
    pub(crate) fn of(capture: &Capture) -> Labels {
        Labels {
            threads: analysis::host_cause_stretches_all(capture)
                .into_iter()
                .map(ThreadStretches::new)
                .collect(),
        }
    }
}

impl Labels {
    /// The time `cause` holds in `[from, to)` of `stretches`, with the stretch to start
    /// looking from (`hint`); and the stretch where `to` fell, the next range's hint.
    fn range_time(
        stretches: &ThreadStretches,
        cause: analysis::HostCause,
        (from, to): (Nanos, Nanos),
        hint: usize,
    ) -> (Nanos, usize) {
        if to <= from {
            return (Nanos::ZERO, hint);
        }
        let sums = stretches.held(cause);
        let mine = |k: usize| stretches.labels[k] == Some(cause);
        // A range spans few stretches: walked from the last one, searched otherwise.
        let k_from = stretches.at(from, hint);
        let k_to = stretches.at(to, k_from);
        let held =
            stretches.before(sums, to, k_to, mine) - stretches.before(sums, from, k_from, mine);
        let time = if cause == analysis::HostCause::NothingRecorded {
            // Instants no event covers are nothing recorded too.
            let all = |_| true;
            let covered = stretches.before(&stretches.covered, to, k_to, all)
                - stretches.before(&stretches.covered, from, k_from, all);
            held + (to - from) - covered
        } else {
            held
        };
        (time, k_to)
    }
}

impl replay::HostLabels for Labels {
    fn time(&self, cause: &str, thread: trace_model::ThreadId, from: Nanos, to: Nanos) -> Nanos {
        let (Some(stretches), Some(cause)) = (
            self.threads.get(thread.index()),
            analysis::HostCause::from_code(cause),
        ) else {
            return Nanos::ZERO;
        };
        Labels::range_time(stretches, cause, (from, to), usize::MAX).0
    }

    fn times(
        &self,
        cause: &str,
        thread: trace_model::ThreadId,
        ranges: &[(Nanos, Nanos)],
    ) -> Vec<Nanos> {
        let (Some(stretches), Some(cause)) = (
            self.threads.get(thread.index()),
            analysis::HostCause::from_code(cause),
        ) else {
            return vec![Nanos::ZERO; ranges.len()];
        };
        let mut hint = 0;
        ranges
            .iter()
            .map(|&range| {
                let (time, next) = Labels::range_time(stretches, cause, range, hint);
                hint = next;
                time
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use analysis::HostCause;
    use replay::HostLabels as _;

    /// The time of `[from, to)` the stretches give `cause`, summed stretch by stretch
    /// (what the running sums replace).
    fn scanned(
        stretches: &[(Nanos, Nanos, Option<HostCause>)],
        cause: HostCause,
        from: Nanos,
        to: Nanos,
    ) -> Nanos {
        if to <= from {
            return Nanos::ZERO;
        }
        let (mut covered, mut held) = (Nanos::ZERO, Nanos::ZERO);
        for &(s, e, label) in stretches {
            let part = (e.min(to) - s.max(from)).max(Nanos::ZERO);
            covered += part;
            if label == Some(cause) {
                held += part;
            }
        }
        if cause == HostCause::NothingRecorded {
            held + (to - from) - covered
        } else {
            held
        }
    }

    #[test]
    fn running_sums_give_the_time_a_scan_of_the_stretches_gives() {
        // Disjoint stretches with gaps, touching ends, an empty one and a synchronising
        // call (no cause), over 0..10 ms.
        let mut stretches = Vec::new();
        let causes = [
            Some(HostCause::CpuWork),
            None,
            Some(HostCause::Allocator),
            Some(HostCause::NothingRecorded),
            Some(HostCause::CpuWork),
            Some(HostCause::LaunchOverhead),
        ];
        let mut t = 100;
        for k in 0..200i64 {
            let len = (k * 37) % 90;
            stretches.push((Nanos(t), Nanos(t + len), causes[k as usize % causes.len()]));
            t += len + (k * 13) % 3 * 20;
        }
        let labels = Labels {
            threads: vec![ThreadStretches::new(stretches.clone())],
        };
        let thread = trace_model::ThreadId::new(0);
        let mut x: u64 = 12345;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            Nanos(((x >> 33) % (t as u64 + 200)) as i64)
        };
        let mut ranges = Vec::new();
        for _ in 0..2_000 {
            let (a, b) = (next(), next());
            ranges.push((a, b));
            for cause in HostCause::ALL {
                assert_eq!(
                    labels.time(cause.code(), thread, a, b),
                    scanned(&stretches, cause, a, b),
                    "{cause:?} over {a:?}..{b:?}"
                );
            }
        }
        // In a batch, walking from range to range: ranges in order (touching, as a
        // leaf and the gap before the next one), then in any order.
        let mut walk: Vec<(Nanos, Nanos)> = Vec::new();
        let mut points: Vec<Nanos> = ranges.iter().map(|r| r.0).collect();
        points.sort();
        for p in points.windows(2) {
            walk.push((p[0], p[1]));
        }
        for batch in [walk, ranges] {
            for cause in HostCause::ALL {
                let got = labels.times(cause.code(), thread, &batch);
                for (&(a, b), got) in batch.iter().zip(got) {
                    assert_eq!(
                        got,
                        scanned(&stretches, cause, a, b),
                        "{cause:?} {a:?}..{b:?}"
                    );
                }
            }
        }
        assert_eq!(
            labels.time(
                "cpu-work",
                trace_model::ThreadId::new(1),
                Nanos(0),
                Nanos(5)
            ),
            Nanos::ZERO
        );
    }
}
