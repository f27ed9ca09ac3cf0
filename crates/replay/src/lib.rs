//! What-if replay: the dependency graph of a capture, re-run with measured or changed
//! durations.
//!
//! [`Graph::build`] turns a [`Capture`] into nodes and edges:
//! - each host thread's leaf events (launch calls, synchronising calls, other runtime
//!   calls, CPU ops and annotations with no event inside) in order, the time between two
//!   of them kept as a measured gap, split into time inside CPU ops (op self time) and
//!   outside them;
//! - each stream's activities in order;
//! - launch call → activity (the capture's one launch join, by correlation id; a graph
//!   launch → each of its kernels);
//! - a producer on another stream → an activity that waited for it (inferred: the capture
//!   model keeps no stream-wait-event or event records, so an activity that started more
//!   than [`EXPLAIN_LIMIT`] after its launch and its stream's previous activity, and
//!   within it of another stream's end, is taken to have waited for that one);
//! - activities in flight when a synchronising call began → that call's return;
//! - a host leaf of another thread of the process → a leaf that resumed within
//!   [`wake_limit`] of its end (30 µs, or a twentieth of the idle time when longer) after
//!   an idle gap longer than [`EXPLAIN_LIMIT`] (inferred wake-up).
//!
//! Each edge's delay is measured where the edge decided its destination's start (the
//! latest one) and that delay is one the graph explains (at most [`EXPLAIN_LIMIT`]); the
//! other edges get the capture's typical latency (never more than their own gap). A wait
//! no edge explains is not kept: it is counted ([`GraphStats::unexplained_waits`]) and is
//! what makes the replay of the unchanged capture differ from the measurement, which
//! [`check`] reports per step. [`Graph::replay`] recomputes every start and end in
//! topological order (O(nodes + edges)); [`WhatIf`] changes durations (a kernel class
//! faster or removed, launch calls shorter, host work faster or removed, copies at a
//! bandwidth) and [`predict`] replays them, with the path that became critical.
//!
//! Several ranks replay together with [`predict_ranks`]: their collective kernels are
//! matched across ranks ([`match_collectives`]: the n-th of a kind on each rank), and a
//! matched collective ends at the latest replayed start of its peers plus its own measured
//! transfer time, so that a rank made faster waits for its slower peers.
//!
//! ```
//! use std::path::Path;
//! use trace_model::{
//!     ActivityDetails, ActivityKind, CaptureBuilder, Format, GpuActivity, HostEvent, HostKind,
//!     Nanos, StreamId, ThreadId, classify_kernel,
//! };
//!
//! let mut b = CaptureBuilder::new(Format::KinetoJson);
//! let launch = b.strings.intern("cudaLaunchKernel");
//! let gemm = b.strings.intern("volta_sgemm_128x64_nn");
//! b.streams.push(trace_model::Stream {
//!     id: StreamId::new(0), device: trace_model::DeviceId::new(0), ordinal: 7, name: None,
//! });
//! b.devices.push(trace_model::Device {
//!     id: trace_model::DeviceId::new(0), ordinal: 0, vendor: trace_model::Vendor::Nvidia,
//!     properties: Default::default(),
//! });
//! b.threads.push(trace_model::HostThread {
//!     id: ThreadId::new(0), pid: 1, tid: 1, name: None, pid_text: None, tid_text: None,
//! });
//! for i in 0..4u64 {
//!     let t = i as i64 * 10_000;
//!     let mut call = HostEvent::new(ThreadId::new(0), Nanos(t), Nanos(5_000), launch, HostKind::Runtime, 2 * i);
//!     call.set_correlation(Some(i));
//!     b.push_host_event(call, None);
//!     let mut k = GpuActivity::new(StreamId::new(0), Nanos(t + 8_000), Nanos(6_000), gemm,
//!         ActivityKind::Kernel, classify_kernel("volta_sgemm_128x64_nn"), 2 * i + 1);
//!     k.set_correlation(Some(i));
//!     b.push_activity(k, ActivityDetails::default());
//! }
//! let capture = b.finish(Path::new("example.json"));
//! let graph = replay::Graph::build(&capture).unwrap();
//! let window = replay::StepWindow { number: 1, start: Nanos(0), end: Nanos(40_000), gpu_ranged: false };
//! // The unchanged replay reproduces the step.
//! let check = replay::check(&graph, &[window]);
//! assert_eq!(check.steps[0].replayed.value, check.steps[0].measured.value);
//! // The step is launch-bound: GEMMs twice as fast save only the last one's 3 µs,
//! // shorter launch calls save more.
//! let what_if = replay::WhatIf::parse("gemm=2x").unwrap();
//! let p = replay::predict(&graph, &capture, &[window], &what_if);
//! assert_eq!(p.steps[0].baseline.value - p.steps[0].predicted.value, Nanos(3_000));
//! let what_if = replay::WhatIf::parse("launch=1us").unwrap();
//! let p = replay::predict(&graph, &capture, &[window], &what_if);
//! assert_eq!(p.steps[0].baseline.value - p.steps[0].predicted.value, Nanos(16_000));
//! ```

#![warn(missing_docs)]

mod graph;
mod lane_name;
mod paths;
mod ranks;
mod replay;
mod scenario;

use serde::{Deserialize, Serialize};
use trace_model::{Capture, Labelled, Nanos, Provenance};

pub use graph::{
    Durations, EXPLAIN_LIMIT, EdgeKind, Graph, GraphStats, Lane, NodeKind, UnexplainedWaits,
    WAKE_SHARE, is_synchronising_call, wake_limit,
};
pub use lane_name::{LaneKind, LaneName, ParseLaneError};
pub use ranks::{
    CollectiveMatch, NotMatched, RANK_ASSUMPTIONS, RankCapture, RankSteps, RanksNote,
    RanksPrediction, RanksPredictor, match_collectives, predict_ranks,
};
pub use replay::{StepWindow, Timeline};
pub use scenario::{CLASS_WORDS, Change, HostLabels, Speed, WhatIf};

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The capture lacks the edges a replay needs.
    #[error("cannot replay: {reason}")]
    CannotReplay {
        /// Which edges are missing.
        #[from]
        reason: CannotReplay,
    },
    /// A what-if text that does not parse.
    #[error("what-if `{spec}`: {reason}")]
    WhatIf {
        /// The text given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// Why a capture cannot be replayed: the edges a replay needs are missing, or there is
/// nothing to replay over. Its words are its `Display`; report.json holds it tagged by
/// `code` ([`CannotReplay::code`]) with its figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "code", rename_all = "kebab-case")]
pub enum CannotReplay {
    /// The capture has no GPU activities.
    #[error("the capture has no GPU activities")]
    NoActivities,
    /// A GPU-only trace: no host events, so nothing launches the GPU work.
    #[error("GPU-only trace: no host events, so nothing launches the GPU work")]
    NoHostEvents,
    /// Fewer than half of the GPU activities are linked to a launch call (no correlation
    /// ids): the host-to-GPU edges are missing.
    #[error(
        "only {linked} of {activities} GPU activities are linked to a launch call (no \
         correlation ids): the host-to-GPU edges are missing"
    )]
    Unlinked {
        /// The activities linked to a launch call (measured).
        linked: usize,
        /// The capture's GPU activities (measured).
        activities: usize,
    },
    /// No steady-state step to replay over (the caller's step windows are empty;
    /// [`Graph::build`] never says this).
    #[error("no steady-state steps to replay")]
    NoSteadySteps,
}

impl CannotReplay {
    /// Its stable code (`no-activities`, `no-host-events`, `unlinked`, `no-steady-steps`),
    /// the `code` tag of its serde form.
    pub fn code(&self) -> &'static str {
        match self {
            CannotReplay::NoActivities => "no-activities",
            CannotReplay::NoHostEvents => "no-host-events",
            CannotReplay::Unlinked { .. } => "unlinked",
            CannotReplay::NoSteadySteps => "no-steady-steps",
        }
    }
}

/// The assumptions every replayed number rests on.
pub const ASSUMPTIONS: &str = "replay of the capture's dependency graph (host order, \
     launches, stream order, inferred cross-stream waits, synchronising calls) with the \
     measured delays; waits the graph does not explain are not reproduced";

/// One step of the unchanged replay against the measurement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepCheck {
    /// The step's number.
    pub number: i64,
    /// From the step's start (or the end of the step before it, when later) to the latest
    /// of its end, its activities' ends and its host leaves' ends.
    pub measured: Labelled<Nanos>,
    /// The same span on the replay of the measured durations.
    pub replayed: Labelled<Nanos>,
    /// `(replayed - measured) / measured`; 0 for an empty step.
    pub error: f64,
}

/// The unchanged replay against the measurement, per step and overall.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// One per step window, in the order given.
    pub steps: Vec<StepCheck>,
    /// Median of the steps' absolute errors; `None` without steps.
    pub median_abs_error: Option<f64>,
    /// The same with every GPU edge at the capture's typical delay
    /// ([`Graph::replay_typical`]): the error of the graph's structure alone.
    pub typical_median_abs_error: Option<f64>,
    /// Error of the steps' total.
    pub total_error: Option<f64>,
    /// What the graph holds and what it could not explain.
    pub stats: GraphStats,
}

/// Replays `graph` with its measured durations and compares each step with the
/// measurement (see [`StepCheck::measured`] for what a step's span is).
pub fn check(graph: &Graph, windows: &[StepWindow]) -> Check {
    let measured = graph.measured_timeline();
    let replayed = graph.replay(graph.measured());
    let typical = graph.replay_typical(graph.measured());
    let members = graph.step_members(windows);
    let [a, b, t] = [&measured, &replayed, &typical].map(|timeline| {
        graph
            .step_spans(timeline, windows, &members)
            .iter()
            .map(|s| s.duration())
            .collect::<Vec<_>>()
    });
    let mut steps = Vec::with_capacity(windows.len());
    let mut typical_errors = Vec::with_capacity(windows.len());
    for (i, w) in windows.iter().enumerate() {
        let (a, b) = (a[i], b[i]);
        typical_errors.push(relative(t[i], a).abs());
        steps.push(StepCheck {
            number: w.number,
            measured: Labelled::measured(a),
            replayed: Labelled::new(b, Provenance::inferred(ASSUMPTIONS)),
            error: relative(b, a),
        });
    }
    let errors: Vec<f64> = steps.iter().map(|s| s.error.abs()).collect();
    let total = |f: fn(&StepCheck) -> Nanos| steps.iter().map(f).sum::<Nanos>();
    let total_error = (!steps.is_empty())
        .then(|| relative(total(|s| s.replayed.value), total(|s| s.measured.value)));
    Check {
        steps,
        median_abs_error: median(errors),
        typical_median_abs_error: median(typical_errors),
        total_error,
        stats: graph.stats().clone(),
    }
}

/// A lane of the critical path and its time there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LaneTime {
    /// The lane (in words by its `Display`: `GPU 0 stream 7`, `host thread 1234`).
    pub lane: LaneName,
    /// Time of the step's critical path on that lane (inferred).
    pub time: Nanos,
}

/// One step under a scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepPrediction {
    /// The step's number.
    pub number: i64,
    /// As measured.
    pub measured: Labelled<Nanos>,
    /// The replay of the measured durations (its difference from `measured` is the
    /// replay's error).
    pub baseline: Labelled<Nanos>,
    /// The replay of the scenario's durations.
    pub predicted: Labelled<Nanos>,
}

/// A scenario's replay.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    /// The scenario's stable key ([`WhatIf::key`]).
    pub key: String,
    /// Each change's key and how many events it changed.
    pub matched: Vec<(String, usize)>,
    /// One per step window, in the order given.
    pub steps: Vec<StepPrediction>,
    /// The step of median measured duration (lower median), an index into `steps`.
    pub median_step: Option<usize>,
    /// From the first step's start to the last end of any step, as measured, replayed
    /// unchanged and replayed with the change (steps of a pipelined loop overlap, so
    /// their durations do not add up to this).
    pub wall: [Labelled<Nanos>; 3],
    /// The median step's critical path before the change, most time first.
    pub critical_before: Vec<LaneTime>,
    /// And after it.
    pub critical_after: Vec<LaneTime>,
    /// The unchanged replay's median absolute step error.
    pub replay_error: Option<f64>,
    /// The same with every GPU edge at the capture's typical delay
    /// ([`Graph::replay_typical`]): the error of the graph's structure alone, which a
    /// change that moves work off its measured delays is exposed to (the measured-delay
    /// error is 0 wherever every delay was measured).
    pub typical_replay_error: Option<f64>,
    /// What the graph could not explain.
    pub stats: GraphStats,
    /// Where the ranks were replayed together ([`RanksPredictor::predict`]): which, and
    /// what was and was not matched; `None` for a capture replayed alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranks: Option<RanksNote>,
}

impl Prediction {
    /// The median step's predicted change against the unchanged replay, as a fraction
    /// (`-0.2`: 20 % shorter).
    pub fn median_change(&self) -> Option<f64> {
        let s = &self.steps[self.median_step?];
        Some(relative(s.predicted.value, s.baseline.value))
    }

    /// A few lines for a terminal: the median step measured, replayed unchanged and
    /// predicted, the total over steps, and the path that became critical.
    pub fn text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "what-if {} (inferred: a replay of the capture's dependency graph)",
            self.key
        );
        if let Some(i) = self.median_step {
            let s = &self.steps[i];
            let _ = writeln!(
                out,
                "  median step {}: measured {}, replayed unchanged {} (replay error {:+.1} %; \
                 {:.1} % with typical delays), predicted {} ({:+.1} % against the unchanged \
                 replay)",
                s.number,
                s.measured.value.human(),
                s.baseline.value.human(),
                100.0 * relative(s.baseline.value, s.measured.value),
                100.0 * self.typical_replay_error.unwrap_or(0.0),
                s.predicted.value.human(),
                100.0 * self.median_change().unwrap_or(0.0),
            );
        }
        let _ = writeln!(
            out,
            "  all {} steps, first start to last end: measured {}, replayed unchanged {}, \
             predicted {}",
            self.steps.len(),
            self.wall[0].value.human(),
            self.wall[1].value.human(),
            self.wall[2].value.human(),
        );
        let top = |lanes: &[LaneTime]| {
            let sum: Nanos = lanes.iter().map(|l| l.time).sum();
            lanes.first().map_or_else(
                || "none".to_owned(),
                |l| format!("{} ({:.0} %)", l.lane, 100.0 * ratio(l.time, sum)),
            )
        };
        let _ = writeln!(
            out,
            "  critical path of the median step: before {}, after {}",
            top(&self.critical_before),
            top(&self.critical_after)
        );
        let matched: Vec<String> = self
            .matched
            .iter()
            .map(|(k, n)| {
                let what = WhatIf::parse(k)
                    .ok()
                    .and_then(|w| w.changes.first().and_then(Change::removes))
                    .map(|w| format!(" ({w})"))
                    .unwrap_or_default();
                format!("{k}: {n} events changed{what}")
            })
            .collect();
        let _ = writeln!(out, "  {}", matched.join("; "));
        if let Some(note) = &self.ranks {
            let _ = writeln!(
                out,
                "  rank {} replayed together with ranks {} (the scenario on every rank); \
                 collectives matched: {}",
                note.rank,
                note.ranks.join(", "),
                if note.matched.is_empty() {
                    "none".to_owned()
                } else {
                    note.matched
                        .iter()
                        .map(|(k, n)| format!("{n} {} per rank", k.label()))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            );
            for reason in &note.reasons {
                let _ = writeln!(out, "  not matched: {reason}");
            }
        }
        let _ = writeln!(
            out,
            "  the graph: {} activities, {} waits it does not explain ({} not reproduced)",
            self.stats.gpu_nodes,
            self.stats.unexplained_waits,
            self.stats.unexplained_time.human()
        );
        out
    }
}

/// Replays `what_if` on `graph` (built from `capture`) and measures each step. For
/// several scenarios of one capture, [`Predictor`] replays the unchanged graph once.
pub fn predict(
    graph: &Graph,
    capture: &Capture,
    windows: &[StepWindow],
    what_if: &WhatIf,
) -> Prediction {
    Predictor::new(graph, capture, windows).predict(what_if)
}

/// What every scenario of one capture shares: the measured and unchanged-replay
/// timelines, each step's members and its spans on both, the median step's critical path
/// before any change, computed once.
#[derive(Debug)]
pub struct Predictor<'a> {
    graph: &'a Graph,
    capture: &'a Capture,
    windows: &'a [StepWindow],
    /// The step spans as measured and on the unchanged replay.
    spans: [Vec<replay::StepSpan>; 2],
    /// The median step's critical path on the unchanged replay.
    critical_before: Vec<LaneTime>,
    members: Vec<Vec<u32>>,
    /// The unchanged replay with typical delays: median absolute step error.
    typical_error: Option<f64>,
    labels: Option<&'a dyn HostLabels>,
}

impl<'a> Predictor<'a> {
    /// Replays the unchanged graph and places the steps.
    pub fn new(graph: &'a Graph, capture: &'a Capture, windows: &'a [StepWindow]) -> Self {
        let measured = graph.measured_timeline();
        let members = graph.step_members(windows);
        let typical = graph.replay_typical(graph.measured());
        let [a, t] =
            [&measured, &typical].map(|timeline| graph.step_spans(timeline, windows, &members));
        let typical_error = median(
            a.iter()
                .zip(&t)
                .map(|(a, t)| relative(t.duration(), a.duration()).abs())
                .collect(),
        );
        let b = graph.step_spans(&graph.baseline, windows, &members);
        let critical_before = median_step(&a).map_or_else(Vec::new, |i| {
            lane_times(graph, capture, &graph.baseline, &b[i])
        });
        Predictor {
            graph,
            capture,
            windows,
            spans: [a, b],
            critical_before,
            members,
            typical_error,
            labels: None,
        }
    }

    /// The same predictor with the host sub-causes' time from `labels`
    /// ([`Change::HostCause`]).
    pub fn with_labels(mut self, labels: &'a dyn HostLabels) -> Self {
        self.labels = Some(labels);
        self
    }

    /// Replays `what_if` and measures each step against the measurement and the
    /// unchanged replay.
    pub fn predict(&self, what_if: &WhatIf) -> Prediction {
        let Predictor {
            graph,
            capture,
            windows,
            spans,
            critical_before,
            members,
            typical_error,
            labels,
        } = self;
        let (durations, counts) = what_if.durations_labelled(graph, capture, *labels);
        let changed = graph.replay_incremental(&durations);
        let after = graph.step_spans(&changed, windows, members);
        let placed = place_steps(windows, [&spans[0], &spans[1], &after], || {
            Provenance::inferred(ASSUMPTIONS)
        });
        let median_step = placed.median_step;
        Prediction {
            key: what_if.key(),
            wall: placed.wall,
            matched: what_if
                .changes
                .iter()
                .map(Change::to_string)
                .zip(counts)
                .collect(),
            steps: placed.steps,
            median_step,
            critical_before: critical_before.clone(),
            critical_after: median_step.map_or_else(Vec::new, |i| {
                lane_times(graph, capture, &changed, &after[i])
            }),
            replay_error: placed.replay_error,
            typical_replay_error: *typical_error,
            stats: graph.stats().clone(),
            ranks: None,
        }
    }
}

/// The critical path of the step `span` on `timeline`, as time per lane.
fn lane_times(
    graph: &Graph,
    capture: &Capture,
    timeline: &Timeline,
    span: &replay::StepSpan,
) -> Vec<LaneTime> {
    graph
        .critical_lanes(timeline, span)
        .into_iter()
        .map(|(lane, time)| LaneTime {
            lane: LaneName::of(lane, capture),
            time,
        })
        .collect()
}

/// The step of median measured duration (lower median; ties by index) of the measured
/// spans `measured`, as [`place_steps`] takes it.
fn median_step(measured: &[replay::StepSpan]) -> Option<usize> {
    let mut by: Vec<usize> = (0..measured.len()).collect();
    by.sort_by_key(|&i| (measured[i].duration(), i));
    by.get(by.len().saturating_sub(1) / 2).copied()
}

/// The steps of one capture measured on three timelines (as measured, replayed unchanged,
/// replayed with a scenario).
struct Placed {
    steps: Vec<StepPrediction>,
    median_step: Option<usize>,
    wall: [Labelled<Nanos>; 3],
    replay_error: Option<f64>,
}

/// Each window's step on the measured, unchanged and changed timelines' spans `all`, the
/// median step, the walls and the unchanged replay's median absolute error.
fn place_steps(
    windows: &[StepWindow],
    all: [&[replay::StepSpan]; 3],
    inferred: impl Fn() -> Provenance,
) -> Placed {
    let mut steps = Vec::with_capacity(windows.len());
    let mut errors = Vec::with_capacity(windows.len());
    let mut walls: [Option<(Nanos, Nanos)>; 3] = [None; 3];
    for (i, w) in windows.iter().enumerate() {
        let spans = [&all[0][i], &all[1][i], &all[2][i]];
        for (wall, span) in walls.iter_mut().zip(spans) {
            let (lo, hi) = wall.unwrap_or((span.start, span.end));
            *wall = Some((lo.min(span.start), hi.max(span.end)));
        }
        let [a, b, c] = spans.map(|s| s.duration());
        errors.push(relative(b, a).abs());
        steps.push(StepPrediction {
            number: w.number,
            measured: Labelled::measured(a),
            baseline: Labelled::new(b, inferred()),
            predicted: Labelled::new(c, inferred()),
        });
    }
    let median_step = median_step(all[0]);
    let wall = walls.map(|w| w.map_or(Nanos::ZERO, |(lo, hi)| hi - lo));
    Placed {
        steps,
        median_step,
        wall: [
            Labelled::measured(wall[0]),
            Labelled::new(wall[1], inferred()),
            Labelled::new(wall[2], inferred()),
        ],
        replay_error: median(errors),
    }
}

/// One scenario per cause investigate ranks (analysis's `CauseKey`), where a change of
/// durations expresses it, with the cause's code: `gap:host-not-launched` → `host-gaps=0`
/// (the gaps that idle the GPU); its sub-causes → the time the caller's [`HostLabels`]
/// give them removed (`host:nothing-recorded=0`, `host:allocator=0`,
/// `host:data-loading=0`, `host:cpu-work=0`, `host:compilation=0`,
/// `host:profiler-overhead=0`: the labels' time on the host leaves the GPU waited for, the
/// launching paths, not their time elsewhere),
/// and `…:launch-overhead` → `launch=5us`; `exposed-collective` → `collective=0` (only the exposed part can
/// shorten the step), `exposed-memcpy` → `memcpy=0`, `layout` → `layout=0`,
/// `elementwise` → `elementwise=0,norm=0`; and the knobs: `launch=5us` (CUDA graphs),
/// `cpu=2x`, `host=0` (the GPU-bound time). Eager attention has no class of its own and
/// is left to the caller (`kernel:NAME=0`).
pub fn cause_scenarios() -> Vec<(&'static str, WhatIf)> {
    [
        ("gap:host-not-launched", "host-gaps=0"),
        (
            "gap:host-not-launched:nothing-recorded",
            "host:nothing-recorded=0",
        ),
        ("gap:host-not-launched:allocator", "host:allocator=0"),
        ("gap:host-not-launched:data-loading", "host:data-loading=0"),
        ("gap:host-not-launched:cpu-work", "host:cpu-work=0"),
        ("gap:host-not-launched:compilation", "host:compilation=0"),
        (
            "gap:host-not-launched:profiler-overhead",
            "host:profiler-overhead=0",
        ),
        ("gap:host-not-launched:launch-overhead", "launch=5us"),
        ("exposed-collective", "collective=0"),
        ("exposed-memcpy", "memcpy=0"),
        ("layout", "layout=0"),
        ("elementwise", "elementwise=0,norm=0"),
        ("launch-overhead", "launch=5us"),
        ("host-cpu", "cpu=2x"),
        ("gpu-bound", "host=0"),
    ]
    .into_iter()
    .filter_map(|(cause, spec)| Some((cause, WhatIf::parse(spec).ok()?)))
    .collect()
}

/// The scenario of the cause whose key is `code` (analysis's `CauseKey::code`), as
/// [`cause_scenarios`] maps it; a per-GPU key (`exposed-collective:0`) takes its
/// class's scenario, which changes that class on every GPU (only exposed time can
/// shorten the step). `None` for a cause no change of durations expresses alone (a stream
/// or event wait, a synchronising call, eager attention).
pub fn cause_scenario(code: &str) -> Option<WhatIf> {
    let base = match code.rsplit_once(':') {
        Some((head, gpu))
            if gpu.parse::<u32>().is_ok()
                && matches!(head, "exposed-collective" | "exposed-memcpy") =>
        {
            head
        }
        _ => code,
    };
    cause_scenarios()
        .into_iter()
        .find(|(cause, _)| *cause == base)
        .map(|(_, w)| w)
}

/// The capture's own step ranges (`ProfilerStep#N`, step markers); without any, one
/// window over every host event and activity. For callers without a step finder.
pub fn capture_windows(capture: &Capture) -> Vec<StepWindow> {
    let steps: Vec<StepWindow> = capture
        .steps()
        .iter()
        .map(|s| StepWindow {
            number: s.number,
            start: s.start,
            end: s.end,
            gpu_ranged: false,
        })
        .collect();
    if !steps.is_empty() {
        return steps;
    }
    let times = capture
        .host_events()
        .iter()
        .map(|e| (e.start, e.end()))
        .chain(capture.activities().iter().map(|a| (a.start, a.end())));
    let span = times.fold(None, |acc: Option<(Nanos, Nanos)>, (s, e)| {
        Some(acc.map_or((s, e), |(lo, hi)| (lo.min(s), hi.max(e))))
    });
    span.map(|(start, end)| StepWindow {
        number: 0,
        start,
        end: end + Nanos(1),
        gpu_ranged: false,
    })
    .into_iter()
    .collect()
}

impl Graph {
    /// The measured times as a timeline (what a replay is compared with).
    fn measured_timeline(&self) -> Timeline {
        let none = vec![u32::MAX; self.nodes.len()];
        Timeline {
            start: self.nodes.iter().map(|n| n.start).collect(),
            end: self.nodes.iter().map(|n| n.end).collect(),
            start_bound: none.clone(),
            end_bound: none,
        }
    }
}

/// The lower median.
fn median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    (!values.is_empty()).then(|| values[(values.len() - 1) / 2])
}

fn relative(value: Nanos, base: Nanos) -> f64 {
    if base.0 == 0 {
        0.0
    } else {
        (value.0 - base.0) as f64 / base.0 as f64
    }
}

fn ratio(part: Nanos, whole: Nanos) -> f64 {
    if whole.0 == 0 {
        0.0
    } else {
        part.0 as f64 / whole.0 as f64
    }
}
