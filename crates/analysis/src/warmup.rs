//! Warm-up: the steps of a capture that are not steady state (first calls that load
//! modules, compile or autotune, and first executions far slower than the rest), so the
//! verdict can be decided on the steady-state steps alone.

use trace_model::{Capture, HostKind, Nanos};

use crate::interval;
use crate::steps::Steps;

/// A kernel launch call at least this long is warm-up work (lazy module loading, JIT
/// compilation, autotuning inside the first launch), never a steady-state launch. Copy
/// calls are left out: a long one is a blocking copy, which can recur every step.
pub const SLOW_LAUNCH: Nanos = Nanos(100_000_000);

/// A leading step at least this many times the median of the later steps is warm-up.
pub const SLOW_FIRST_RATIO: f64 = 10.0;

/// A step whose warm-up events cover at least this share of its duration is warm-up: most
/// of it is one-time work, so its figures say nothing of the steady state.
pub const WARM_UP_SHARE: f64 = 0.50;

/// A warm-up event shorter than this share of the median step is left out of the
/// evidence: it changes no step figure by more than that share (a 110 ns `end_compile`
/// marker or a 114 µs autotuner call beside a 100 ms step is not warm-up that matters).
pub const MATTERS_SHARE: f64 = 0.01;

/// One warm-up host event, as evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarmUpEvent {
    /// The event's name.
    pub name: String,
    /// Its start.
    pub start: Nanos,
    /// Its duration.
    pub dur: Nanos,
}

impl WarmUpEvent {
    /// `start + dur`.
    pub fn end(&self) -> Nanos {
        self.start + self.dur
    }
}

/// What the warm-up detection found (all `measured`; the thresholds are this module's
/// constants).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WarmUp {
    /// Host events that are warm-up work, each at least [`MATTERS_SHARE`] of the median
    /// step: kernel launch calls of [`SLOW_LAUNCH`] or more, module
    /// loading (`cuModuleLoad*`, `hipModuleLoad*`, `cuLibraryLoad*`), graph instantiation,
    /// autotuning (a name containing `autotun`), and CUDA/HIP graph captures (begin to
    /// end capture); longest first (at most 10).
    pub events: Vec<WarmUpEvent>,
    /// Number of such events, and the union of their time.
    pub event_count: usize,
    /// Union of the warm-up events' time.
    pub event_time: Nanos,
    /// Indices into the steps of the warm-up steps, in order: steps whose warm-up events
    /// cover [`WARM_UP_SHARE`] of them or more, steps an engine marks as a CUDA-graph
    /// capture, and leading steps [`SLOW_FIRST_RATIO`] times the median of the rest or
    /// slower.
    pub steps: Vec<usize>,
    /// Σ duration of the warm-up steps.
    pub step_time: Nanos,
    /// Every step is warm-up: the capture has no steady state.
    pub all: bool,
}

/// Whether a host event is warm-up work by its name and duration.
pub fn is_warm_up_event(name: &str, kind: HostKind, dur: Nanos) -> bool {
    (kind == HostKind::Launch
        && dur >= SLOW_LAUNCH
        && name.contains("Launch")
        && !name.contains("GraphLaunch"))
        || name.contains("GraphInstantiate")
        || name.contains("ModuleLoad")
        || name.contains("LibraryLoad")
        || name.to_ascii_lowercase().contains("autotun")
}

/// Finds the warm-up events and steps of a capture.
pub(crate) fn find(capture: &Capture, steps: &Steps) -> WarmUp {
    let mut w = WarmUp::default();
    // The name's part of `is_warm_up_event`, found once per distinct name: (a launch
    // call that is not a graph launch, a warm-up name whatever the kind).
    let mut by_name: Vec<Option<(bool, bool)>> = vec![None; capture.strings().len()];
    let mut warm_up = |e: &trace_model::HostEvent| {
        let of = |name: &str| {
            (
                is_warm_up_event(name, HostKind::Launch, SLOW_LAUNCH),
                is_warm_up_event(name, HostKind::Other, Nanos(0)),
            )
        };
        let (slow_launch, any) = match by_name.get_mut(e.name.index()) {
            Some(slot) => *slot.get_or_insert_with(|| of(capture.name(e.name))),
            None => of(capture.name(e.name)),
        };
        any || (slow_launch && e.kind == HostKind::Launch && e.dur >= SLOW_LAUNCH)
    };
    let mut events: Vec<WarmUpEvent> = capture
        .host_events()
        .iter()
        .filter(|e| warm_up(e))
        .map(|e| WarmUpEvent {
            name: capture.name(e.name).to_owned(),
            start: e.start,
            dur: e.dur,
        })
        .collect();
    events.extend(graph_captures(capture));
    // Evidence of a size that matters: an event under MATTERS_SHARE of the median step
    // changes no step figure by more than that share.
    if let Some(median) = crate::steps::Spread::of(steps.steps.iter().map(|s| s.duration())) {
        let least = (MATTERS_SHARE * median.median.0 as f64) as i64;
        events.retain(|e| e.dur.0 >= least);
    }
    w.event_count = events.len();
    w.event_time = Nanos(interval::union_len(
        events.iter().map(|e| (e.start.0, e.end().0)).collect(),
    ));
    let mut warm = vec![false; steps.steps.len()];
    for (i, s) in steps.steps.iter().enumerate() {
        let inside: Vec<(i64, i64)> = events
            .iter()
            .filter(|e| e.start < s.range.end && e.end() > s.range.start)
            .map(|e| (e.start.max(s.range.start).0, e.end().min(s.range.end).0))
            .collect();
        let covered = interval::union_len(inside) as f64;
        // A step the engine itself marks as a CUDA-graph capture is set-up by its own word.
        let marked = steps
            .forward_kinds
            .get(i)
            .is_some_and(|k| k == "graph capture");
        warm[i] =
            marked || (s.duration().0 > 0 && covered >= WARM_UP_SHARE * s.duration().0 as f64);
    }
    // Leading steps far slower than the rest: the first executions.
    let n = steps.steps.len();
    let mut lead = 0;
    while n - lead >= 3 {
        let rest = crate::steps::Spread::of(steps.steps[lead + 1..].iter().map(|s| s.duration()));
        let slow = rest.is_some_and(|r| {
            r.median.0 > 0
                && steps.steps[lead].duration().0 as f64 >= SLOW_FIRST_RATIO * r.median.0 as f64
        });
        if !slow {
            break;
        }
        warm[lead] = true;
        lead += 1;
    }
    w.steps = (0..n).filter(|&i| warm[i]).collect();
    w.step_time = w.steps.iter().map(|&i| steps.steps[i].duration()).sum();
    w.all = n > 0 && w.steps.len() == n;
    events.sort_by(|a, b| b.dur.cmp(&a.dur).then(a.start.cmp(&b.start)));
    events.truncate(10);
    w.events = events;
    w
}

/// CUDA/HIP graph captures: from a `*StreamBeginCapture` call to the next
/// `*StreamEndCapture` on the same thread. Work issued in between is recorded into a
/// graph, not run: one-time set-up, not steady state.
pub(crate) fn graph_captures(capture: &Capture) -> Vec<WarmUpEvent> {
    // Each distinct name is looked at once (two substring searches per event were 26M of
    // skip-stats' 1,959M instructions on df_index_resolver): 1 begins a capture, 2 ends one.
    let kind: Vec<u8> = capture
        .strings()
        .strings()
        .map(|name| {
            if name.contains("StreamBeginCapture") {
                1
            } else if name.contains("StreamEndCapture") {
                2
            } else {
                0
            }
        })
        .collect();
    let mut out = Vec::new();
    for t in capture.threads() {
        let mut begin: Option<Nanos> = None;
        for e in capture.thread_events(t.id) {
            let k = kind.get(e.name.index()).copied().unwrap_or(0);
            if k == 1 {
                begin = Some(e.start);
            } else if k == 2
                && let Some(b) = begin.take()
            {
                out.push(WarmUpEvent {
                    name: "CUDA/HIP graph capture (StreamBeginCapture … StreamEndCapture)"
                        .to_owned(),
                    start: b,
                    dur: e.end() - b,
                });
            }
        }
    }
    out
}
