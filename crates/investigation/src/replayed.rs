//! Step 6's replayed estimates: each ranked cause's what-if scenario
//! (`replay::cause_scenario`) replayed on the dependency graph of the capture the
//! investigation already holds, over the steady-state steps, with the replay's error on
//! the unchanged capture beside it.

use analysis::CaptureAnalysis;
use trace_model::{Capture, Nanos};

use crate::model::{CauseReplay, Replayed};

/// `what_if` replayed on `capture` as step 6's estimates replay a cause: over the
/// steady-state steps of `r` (the capture's own step ranges where it has none), with the
/// host sub-causes' time from the idle-time split; as text, or the reason it cannot be
/// replayed.
pub(crate) fn what_if_text(
    r: &CaptureAnalysis,
    capture: &Capture,
    what_if: &replay::WhatIf,
) -> String {
    let graph = match replay::Graph::build(capture) {
        Ok(graph) => graph,
        Err(e) => return format!("  {e}\n"),
    };
    let mut windows = steady_windows(r);
    if windows.is_empty() {
        windows = replay::capture_windows(capture);
    }
    let labels = Labels::of(capture);
    replay::Predictor::new(&graph, capture, &windows)
        .with_labels(&labels)
        .predict(what_if)
        .text()
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
        "the compute class that bounds the step: its knobs change how fast its kernels run, \
         which only a new capture measures"
    } else {
        "no change of durations expresses this cause alone (a stream or event wait, a \
         synchronising call, eager attention)"
    };
    CauseReplay::NoScenario {
        reason: reason.to_owned(),
    }
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
        Err(e) => {
            let reason = match e {
                replay::Error::CannotReplay { reason } => reason,
                other => other.to_string(),
            };
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
                reason: "no steady-state steps to replay".to_owned(),
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

/// The causes' scenarios replayed on two threads (each replay walks the whole graph, and
/// they share nothing but the read-only predictor), in the order given.
fn replay_on_threads(
    predictor: &replay::Predictor<'_>,
    jobs: &[(Option<&replay::WhatIf>, &str)],
) -> Vec<CauseReplay> {
    let one = |&(s, k): &(Option<&replay::WhatIf>, &str)| match s {
        None => no_scenario(k),
        Some(what_if) => CauseReplay::Replayed(replayed(&predictor.predict(what_if))),
    };
    let (first, second) = jobs.split_at(jobs.len() / 2);
    std::thread::scope(|scope| {
        let second = scope.spawn(|| second.iter().map(one).collect::<Vec<_>>());
        let mut out: Vec<CauseReplay> = first.iter().map(one).collect();
        match second.join() {
            Ok(rest) => out.extend(rest),
            Err(panic) => std::panic::resume_unwind(panic),
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
    }
}

/// Each thread's time labelled by analysis's host sub-causes, for the replay's host
/// scenarios (`host:allocator=0`): the same labels that split the idle time.
#[derive(Debug)]
pub(crate) struct Labels {
    /// Per thread (by index): the labelled stretches, sorted and disjoint.
    threads: Vec<Vec<(Nanos, Nanos, Option<analysis::HostCause>)>>,
}

impl Labels {
    pub(crate) fn of(capture: &Capture) -> Labels {
        Labels {
            threads: analysis::host_cause_stretches_all(capture),
        }
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
        if to <= from {
            return Nanos::ZERO;
        }
        let first = stretches.partition_point(|&(_, end, _)| end <= from);
        let mut covered = Nanos::ZERO;
        let mut held = Nanos::ZERO;
        for &(s, e, label) in &stretches[first..] {
            if s >= to {
                break;
            }
            let part = (e.min(to) - s.max(from)).max(Nanos::ZERO);
            covered += part;
            if label == Some(cause) {
                held += part;
            }
        }
        if cause == analysis::HostCause::NothingRecorded {
            // Instants no event covers are nothing recorded too.
            held + (to - from) - covered
        } else {
            held
        }
    }
}
