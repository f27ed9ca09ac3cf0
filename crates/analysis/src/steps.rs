//! Steps: which time ranges are the training/inference steps of a capture, and which
//! step each GPU activity belongs to.
//!
//! Sources, in order of preference:
//! 1. Kineto `ProfilerStep#N` annotations, and JAX step markers (`step_num`), both read
//!    into [`Capture::steps`] by the readers: host-side ranges (when a Kineto trace has
//!    only GPU-side `ProfilerStep#N` annotations, those ranges are used and activities
//!    are placed by their own start). An activity belongs to
//!    the step whose host range contains the start of its host launch call (the step
//!    that issued it, even when it runs after the step's host range has ended); an
//!    activity without a launch is placed by its own start.
//! 2. Step annotations of inference and diffusion engines (SGLang, vLLM, diffusion
//!    schedulers), placed like `ProfilerStep#N`, provided they are not nested in a
//!    repeating parent range that launches other work (the parent is the step:
//!    `repeating_parent`) and their steps hold [`MIN_STEP_COVERAGE`] of the GPU time (a
//!    scheduler's update inside a denoising step, a few kernels, is not the step).
//! 3. The framework's iteration annotations: one step per `Optimizer.step#…` (from the
//!    end of the one before to its end), else one per `enumerate(DataLoader)#…` batch
//!    fetch (start to start); with the same nesting and coverage checks.
//! 4. A host range that recurs at the top level of the thread that launches most GPU
//!    work (an annotation or a Python function of one name): starting from the thread's
//!    outermost ranges, a level whose only range holding most launches is a wrapper
//!    (`main`, a training loop) is descended into; a model's `forward` is not (its
//!    repeated children are layers, not iterations). The name chosen has at least two
//!    instances at that level that together launch at least half of the level's GPU
//!    work, with start-to-start intervals and launch counts each within 0.5–2× their
//!    median (a stable period). Host ranges; activities placed by their launch.
//! 5. Repeated executions of the same XLA module: GPU activities in start order, split
//!    into runs of consecutive activities of one `hlo_module`; the module with at least
//!    two runs and the most GPU time gives one step per run, ranged from the run's first
//!    start to its last end, provided it holds at least half of all GPU activity time
//!    (otherwise the capture is a sequence of different programs, not a step loop).
//!    Activities are placed by their own start.
//! 6. A repeating sequence of activity names on the stream with the most compute (GPU time
//!    other than collectives, as for the critical stream), else the most GPU time: the
//!    shortest period p (candidates, the 256 shortest: for every name, the most common
//!    distance between its occurrences, one to four apart) such that, cut into periods at
//!    the phase with the largest mean idle gap before it, every period matches the next in
//!    at least 80 % of positions, including the partial periods at the capture's edges (so
//!    a model's repeated layers between a different prefix and suffix are not taken for
//!    iterations), with at least two whole periods. A step runs from its period's first
//!    start to the next period's; activities on every stream are placed by their own start.
//! 7. Otherwise the whole capture is one step, and a diagnostic says so.
//!
//! The median step is the lower median of step durations (a step that exists, not an
//! average of two); the spread is max − min.

use std::collections::BTreeMap;

use trace_model::{Capture, Diagnostics, KernelClass, Nanos, StepSource};

use crate::budget::Window;

/// One step.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRange {
    /// The step's number (from its annotation or marker, or counted).
    pub number: i64,
    /// The range that defines the step (host-side for annotations and markers,
    /// GPU-side for module executions).
    pub range: Window,
}

impl StepRange {
    /// Length of the step's range.
    pub fn duration(&self) -> Nanos {
        self.range.span()
    }
}

/// The steps of a capture and the step of each GPU activity.
#[derive(Debug, Clone)]
pub struct Steps {
    /// What marked the steps.
    pub origin: StepOrigin,
    /// In time order.
    pub steps: Vec<StepRange>,
    /// For each entry of [`Capture::activities`], the index into `steps`, if any.
    pub activity_step: Vec<Option<u32>>,
    /// For each step, what kind of forward it is when its marker says so (`prefill`,
    /// `decode`, `prefill 9 + decode 37`, `denoise`); empty otherwise.
    pub forward_kinds: Vec<String>,
    /// Odd but usable findings, counted (the workspace's one diagnostic type).
    pub diagnostics: Diagnostics,
    /// Every kind of step evidence looked at, in order of strength, with why it won or
    /// lost.
    pub considered: Vec<StepCandidate>,
}

pub use crate::step_candidates::{CandidateOutcome, StepCandidate, StepEvidence};
use crate::step_nesting::repeating_parent;
pub use crate::step_origin::{HostRangeKind, StepOrigin};

/// A step candidate whose steps hold less than this share of the capture's GPU time is
/// not the step: the step is what repeats and does the work, so its instances hold most
/// of the work (half: less means most of the work runs outside it).
pub const MIN_STEP_COVERAGE: f64 = 0.5;

/// Median, minimum and maximum of a set of durations (all `measured`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Spread {
    /// Lower median.
    pub median: Nanos,
    /// Smallest value.
    pub min: Nanos,
    /// Largest value.
    pub max: Nanos,
}

impl Spread {
    /// Lower median, min and max; `None` for an empty set.
    pub fn of(values: impl IntoIterator<Item = Nanos>) -> Option<Spread> {
        let mut v: Vec<Nanos> = values.into_iter().collect();
        if v.is_empty() {
            return None;
        }
        v.sort_unstable();
        Some(Spread {
            median: v[(v.len() - 1) / 2],
            min: v[0],
            max: v[v.len() - 1],
        })
    }
}

impl Steps {
    /// Median, min and max step duration.
    pub fn duration_spread(&self) -> Option<Spread> {
        Spread::of(self.steps.iter().map(|s| s.duration()))
    }

    /// Per kind of forward, in order of first appearance: the kind without its counts
    /// (`prefill`, `decode`, `prefill + decode`, `denoise`), how many steps are of it,
    /// and the spread of their durations. Empty when no step marker names its forward.
    pub fn forward_spreads(&self) -> Vec<(String, usize, Spread)> {
        let mut kinds: Vec<(String, Vec<Nanos>)> = Vec::new();
        for (step, kind) in self.steps.iter().zip(&self.forward_kinds) {
            let kind: Vec<&str> = kind
                .split_whitespace()
                .filter(|w| !w.chars().all(|c| c.is_ascii_digit()))
                .collect();
            if kind.is_empty() {
                continue;
            }
            let kind = kind.join(" ");
            match kinds.iter_mut().find(|k| k.0 == kind) {
                Some(k) => k.1.push(step.duration()),
                None => kinds.push((kind, vec![step.duration()])),
            }
        }
        kinds
            .into_iter()
            .filter_map(|(kind, d)| Some((kind, d.len(), Spread::of(d.iter().copied())?)))
            .collect()
    }

    /// The index of the median-duration step (lower median).
    pub fn median_step(&self) -> Option<usize> {
        let mut idx: Vec<usize> = (0..self.steps.len()).collect();
        idx.sort_by_key(|&i| (self.steps[i].duration(), i));
        idx.get(idx.len().checked_sub(1)? / 2).copied()
    }
}

/// Whether steps of this origin are host ranges (the host's own step annotations or
/// markers), whose wall time is the step, rather than ranges of GPU activity.
pub(crate) fn host_ranged(origin: &StepOrigin) -> bool {
    matches!(
        origin,
        StepOrigin::ProfilerStep
            | StepOrigin::StepMarker
            | StepOrigin::EngineStep { .. }
            | StepOrigin::RepeatedHostRange { .. }
            | StepOrigin::IterationAnnotation { .. }
    )
}

/// Share of the capture's GPU time placed in a step.
fn coverage(capture: &Capture, steps: &Steps) -> f64 {
    let total: i64 = capture.activities().iter().map(|a| a.dur.0).sum();
    let inside: i64 = capture
        .activities()
        .iter()
        .zip(&steps.activity_step)
        .filter(|(_, s)| s.is_some())
        .map(|(a, _)| a.dur.0)
        .sum();
    crate::percent::ratio(inside, total)
}

/// Finds the steps of a capture and places every GPU activity in one (or none): the
/// sources of the module docs in order, each checked (engine markers and iteration
/// annotations must hold [`MIN_STEP_COVERAGE`] of the GPU time); [`Steps::considered`]
/// says which won and why the others lost.
pub(crate) fn find_steps(capture: &Capture) -> Steps {
    type Source = fn(&Capture) -> Option<Steps>;
    let sources: [(StepEvidence, Source, bool); 7] = [
        (StepEvidence::ProfilerStep, capture_steps, false),
        (StepEvidence::GpuProfilerStep, gpu_profiler_steps, false),
        (StepEvidence::EngineStep, engine_steps, true),
        (StepEvidence::IterationAnnotation, iteration_steps, true),
        (StepEvidence::RepeatedHostRange, repeated_host_steps, false),
        (StepEvidence::ModuleExecution, module_steps, false),
        (StepEvidence::KernelSequence, kernel_sequence_steps, false),
    ];
    let mut considered: Vec<StepCandidate> = Vec::new();
    let mut won: Option<Steps> = None;
    for (evidence, source, checked) in sources {
        if won.is_some() {
            considered.push(StepCandidate {
                evidence,
                steps: 0,
                outcome: CandidateOutcome::NotTried,
            });
            continue;
        }
        let Some(found) = source(capture) else {
            considered.push(StepCandidate {
                evidence,
                steps: 0,
                outcome: CandidateOutcome::Absent,
            });
            continue;
        };
        if checked && let Some((parent, instances, share)) = repeating_parent(capture, &found) {
            considered.push(StepCandidate {
                evidence,
                steps: found.steps.len(),
                outcome: CandidateOutcome::NestedInRepeatingParent {
                    parent,
                    instances,
                    share,
                },
            });
            continue;
        }
        let share = coverage(capture, &found);
        if checked && share < MIN_STEP_COVERAGE {
            considered.push(StepCandidate {
                evidence,
                steps: found.steps.len(),
                outcome: CandidateOutcome::TooLittleGpuWork { share },
            });
            continue;
        }
        considered.push(StepCandidate {
            evidence,
            steps: found.steps.len(),
            outcome: CandidateOutcome::Chosen,
        });
        won = Some(found);
    }
    let mut steps = won.unwrap_or_else(|| whole_capture(capture));
    steps.considered = considered;
    steps
}

/// Steps the reader put into the capture (`ProfilerStep#N`, step markers, module
/// executions).
fn capture_steps(capture: &Capture) -> Option<Steps> {
    if let Some(first) = capture.steps().first() {
        let origin = match first.source {
            StepSource::ProfilerStep => StepOrigin::ProfilerStep,
            StepSource::StepMarker => StepOrigin::StepMarker,
            StepSource::ModuleExecution => StepOrigin::ModuleExecution {
                module: String::new(),
            },
            _ => StepOrigin::StepMarker,
        };
        let steps: Vec<StepRange> = capture
            .steps()
            .iter()
            .map(|s| StepRange {
                number: s.number,
                range: Window {
                    start: s.start,
                    end: s.end,
                },
            })
            .collect();
        let activity_step = steps_by_launch(capture, &steps);
        let mut diagnostics = Diagnostics::default();
        diagnostics.add_many(
            "outside-steps",
            count_none(&activity_step) as u64,
            "GPU activities were launched outside every step and are left out of per-step numbers"
                .to_owned(),
            String::new(),
        );
        return Some(Steps {
            origin,
            forward_kinds: vec![String::new(); steps.len()],
            steps,
            activity_step,
            diagnostics,
            considered: Vec::new(),
        });
    }
    None
}

/// Whether a host range ends one training iteration (`Optimizer.step#…`).
fn is_optimizer_step(name: &str) -> bool {
    name.starts_with("Optimizer.step#")
}

/// Whether a host range starts one training or inference iteration: fetching the batch
/// (`enumerate(DataLoader)#…`) or zeroing the gradients (`Optimizer.zero_grad#…`).
fn is_iteration_start(name: &str) -> bool {
    name.starts_with("enumerate(DataLoader)") || name.starts_with("Optimizer.zero_grad#")
}

/// Steps from the framework's iteration annotations (module docs, source 3): with
/// `Optimizer.step#…` ranges, one step per optimizer step, from the end of the one
/// before (the first from the first iteration-start annotation before it, else the
/// thread's first launch) to its end; without them, one step per batch fetch
/// (`enumerate(DataLoader)#…`), from its start to the next one's (the last to the end of
/// the thread's last launch). On the thread with the most such ranges; activities placed
/// by their launch.
fn iteration_steps(capture: &Capture) -> Option<Steps> {
    let mut per_thread: BTreeMap<trace_model::ThreadId, usize> = BTreeMap::new();
    for e in capture.host_events() {
        let n = capture.name(e.name);
        if is_optimizer_step(n) || n.starts_with("enumerate(DataLoader)") {
            *per_thread.entry(e.thread).or_insert(0) += 1;
        }
    }
    let thread = per_thread
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))?
        .0;
    let events = capture.thread_events(thread);
    // Outermost instances only (an annotation may repeat inside itself).
    let outermost = |keep: &dyn Fn(&str) -> bool| {
        let mut v: Vec<Window> = Vec::new();
        for e in events.iter().filter(|e| keep(capture.name(e.name))) {
            if v.last().is_some_and(|w| e.start < w.end) {
                continue;
            }
            v.push(Window {
                start: e.start,
                end: e.end(),
            });
        }
        v
    };
    let optimizer = outermost(&is_optimizer_step);
    let starts = outermost(&is_iteration_start);
    let launches: Vec<&trace_model::HostEvent> = events
        .iter()
        .filter(|e| e.kind == trace_model::HostKind::Launch)
        .collect();
    let (ranges, name): (Vec<Window>, &str) = if !optimizer.is_empty() {
        let first = starts
            .iter()
            .map(|w| w.start)
            .chain(launches.iter().map(|e| e.start))
            .filter(|&t| t < optimizer[0].start)
            .min()
            .unwrap_or(optimizer[0].start);
        let mut from = first;
        let mut v = Vec::new();
        for o in &optimizer {
            v.push(Window {
                start: from,
                end: o.end,
            });
            from = o.end;
        }
        (v, "Optimizer.step#…")
    } else {
        let loads = outermost(&|n: &str| n.starts_with("enumerate(DataLoader)"));
        if loads.len() < 2 {
            return None;
        }
        let last_end = launches
            .iter()
            .map(|e| e.end())
            .max()
            .unwrap_or(Nanos(i64::MIN));
        let mut v: Vec<Window> = loads
            .windows(2)
            .map(|w| Window {
                start: w[0].start,
                end: w[1].start,
            })
            .collect();
        let last = loads[loads.len() - 1];
        v.push(Window {
            start: last.start,
            end: last.end.max(last_end),
        });
        (v, "enumerate(DataLoader)#…")
    };
    let steps: Vec<StepRange> = ranges
        .into_iter()
        .enumerate()
        .map(|(i, range)| StepRange {
            number: i as i64,
            range,
        })
        .collect();
    let activity_step = steps_by_launch(capture, &steps);
    let mut diagnostics = Diagnostics::default();
    diagnostics.add_many(
        "steps-from-iteration-annotations",
        steps.len() as u64,
        format!("no ProfilerStep#N or engine markers: steps are the framework's iteration annotations ({name}), numbered from 0 in time order"),
        String::new(),
    );
    diagnostics.add_many(
        "outside-steps",
        count_none(&activity_step) as u64,
        "GPU activities were launched outside every iteration and are left out of per-step numbers"
            .to_owned(),
        String::new(),
    );
    Some(Steps {
        origin: StepOrigin::IterationAnnotation {
            name: name.to_owned(),
        },
        forward_kinds: vec![String::new(); steps.len()],
        steps,
        activity_step,
        diagnostics,
        considered: Vec::new(),
    })
}

/// `ProfilerStep#N` ranges that only exist GPU-side (`gpu_user_annotation`): the union
/// over streams of each number's annotations; activities are placed by their own start.
fn gpu_profiler_steps(capture: &Capture) -> Option<Steps> {
    let mut ranges: BTreeMap<i64, Window> = BTreeMap::new();
    for a in capture.gpu_annotations() {
        let Some(n) = capture
            .name(a.name)
            .strip_prefix("ProfilerStep#")
            .and_then(|n| n.parse::<i64>().ok())
        else {
            continue;
        };
        let w = ranges.entry(n).or_insert(Window {
            start: a.start,
            end: a.start + a.dur,
        });
        w.start = w.start.min(a.start);
        w.end = w.end.max(a.start + a.dur);
    }
    if ranges.is_empty() {
        return None;
    }
    let mut steps: Vec<StepRange> = ranges
        .into_iter()
        .map(|(number, range)| StepRange { number, range })
        .collect();
    steps.sort_by_key(|s| (s.range.start, s.number));
    let index = StepIndex::new(&steps);
    let activity_step: Vec<Option<u32>> = capture
        .activities()
        .iter()
        .map(|a| index.containing(a.start))
        .collect();
    let mut diagnostics = Diagnostics::default();
    diagnostics.add_many(
        "steps-gpu-side-only",
        steps.len() as u64,
        "steps from GPU-side ProfilerStep#N annotations only (no host-side ones)".to_owned(),
        String::new(),
    );
    diagnostics.add_many(
        "outside-steps",
        count_none(&activity_step) as u64,
        "GPU activities start outside every step and are left out of per-step numbers".to_owned(),
        String::new(),
    );
    Some(Steps {
        origin: StepOrigin::ProfilerStep,
        forward_kinds: vec![String::new(); steps.len()],
        steps,
        activity_step,
        diagnostics,
        considered: Vec::new(),
    })
}

/// What an engine's step marker says: which engine, and the forward's kind when named.
fn engine_marker(name: &str) -> Option<(&'static str, String)> {
    if let Some(rest) = name.strip_prefix("step[") {
        let upper = rest.to_ascii_uppercase();
        let kind = if upper.starts_with("EXTEND") || upper.starts_with("PREFILL") {
            "prefill"
        } else if upper.starts_with("DECODE") {
            "decode"
        } else if upper.starts_with("MIXED") {
            "prefill + decode"
        } else {
            ""
        };
        return Some(("SGLang step[…]", kind.to_owned()));
    }
    if name == "execute_model" || name.ends_with("): execute_model") {
        return Some(("vLLM execute_model", String::new()));
    }
    // vLLM's range around one forward: `execute_<tokens>_context_<n>(…)_generation_<m>(…)`.
    if let Some(rest) = name.strip_prefix("execute_")
        && rest.contains("_context_")
    {
        let count = |key: &str| {
            rest.split(key)
                .nth(1)
                .map(|t| {
                    t.chars()
                        .take_while(char::is_ascii_digit)
                        .collect::<String>()
                })
                .and_then(|d| d.parse::<u64>().ok())
        };
        let kind = match (count("_context_"), count("_generation_")) {
            (Some(0), Some(g)) if g > 0 => format!("decode {g}"),
            (Some(c), Some(0)) if c > 0 => format!("prefill {c}"),
            (Some(c), None) if c > 0 => format!("prefill {c}"),
            (Some(c), Some(g)) => format!("prefill {c} + decode {g}"),
            _ => String::new(),
        };
        return Some(("vLLM execute_…_context_… ranges", kind));
    }
    // vLLM capturing a CUDA graph for one batch size: `capture_<size>_<FULL|PIECEWISE>`.
    if name.starts_with("capture_") && (name.ends_with("_FULL") || name.ends_with("_PIECEWISE")) {
        return Some(("vLLM CUDA-graph capture", "graph capture".to_owned()));
    }
    // A diffusion scheduler's step: one denoising iteration (diffusers, xDiT).
    if name.contains("schedul") && name.ends_with("): step") {
        return Some(("diffusion scheduler step", "denoise".to_owned()));
    }
    None
}

/// Steps from inference/diffusion engines' step markers (see [`engine_marker`]): the
/// outermost marked host ranges; activities are placed by their launch, as for
/// `ProfilerStep#N`.
fn engine_steps(capture: &Capture) -> Option<Steps> {
    let mut marked: Vec<(Window, &'static str, String)> = capture
        .host_events()
        .iter()
        .filter_map(|e| {
            let (engine, kind) = engine_marker(capture.name(e.name))?;
            Some((
                Window {
                    start: e.start,
                    end: e.end(),
                },
                engine,
                kind,
            ))
        })
        .collect();
    if marked.is_empty() {
        return None;
    }
    marked.sort_by(|a, b| a.0.start.cmp(&b.0.start).then(b.0.end.cmp(&a.0.end)));
    let mut steps: Vec<StepRange> = Vec::new();
    let mut forward_kinds: Vec<String> = Vec::new();
    let mut engines: Vec<&'static str> = Vec::new();
    for (w, engine, kind) in &marked {
        if !engines.contains(engine) {
            engines.push(engine);
        }
        match steps.last() {
            // Nested in the step before: it may name the forward's kind.
            Some(last) if w.start < last.range.end => {
                let k = forward_kinds.last_mut().expect("one kind per step");
                if k.is_empty() {
                    k.clone_from(kind);
                }
            }
            _ => {
                steps.push(StepRange {
                    number: steps.len() as i64,
                    range: *w,
                });
                forward_kinds.push(kind.clone());
            }
        }
    }
    let activity_step = steps_by_launch(capture, &steps);
    let markers = engines.join(", ");
    let mut diagnostics = Diagnostics::default();
    diagnostics.add_many(
        "steps-from-engine-markers",
        steps.len() as u64,
        format!("no ProfilerStep#N: steps are the engine's step markers ({markers}), numbered from 0 in time order"),
        String::new(),
    );
    diagnostics.add_many(
        "outside-steps",
        count_none(&activity_step) as u64,
        "GPU activities were launched outside every engine step and are left out of per-step numbers".to_owned(),
        String::new(),
    );
    Some(Steps {
        origin: StepOrigin::EngineStep { markers },
        steps,
        activity_step,
        forward_kinds,
        diagnostics,
        considered: Vec::new(),
    })
}

/// Each activity's step: the step that contains its launch call (its own start when it has
/// no launch), as [`StepIndex`] decides.
fn steps_by_launch(capture: &Capture, steps: &[StepRange]) -> Vec<Option<u32>> {
    let index = StepIndex::new(steps);
    capture
        .activities()
        .iter()
        .map(|a| {
            let t = a.launch().map_or(a.start, |l| capture.host_event(l).start);
            index.containing(t)
        })
        .collect()
}

fn count_none(v: &[Option<u32>]) -> usize {
    v.iter().filter(|s| s.is_none()).count()
}

/// The step whose range contains a time, for many times over one set of steps: O(n) to
/// build, O(log n) per time. Ranges are in time order and, when they overlap, the later
/// step wins (a new step starts when its annotation starts); a step of no duration holds
/// its own instant. The step is the latest-starting one whose range holds the time, so
/// nested steps
/// (each inside the one before) once made a backward scan per time, quadratic in the
/// steps (200,000 nested `ProfilerStep`s took 9.5 s). Here a max-tree over the steps'
/// ends finds the last step, among those started by `t`, that has not ended by `t`.
struct StepIndex<'a> {
    steps: &'a [StepRange],
    /// Leaves from `leaves` on: each step's end, one past it for a step of no duration
    /// (which holds only its own instant); each inner node the larger of its two children.
    tree: Vec<i64>,
    leaves: usize,
}

impl<'a> StepIndex<'a> {
    fn new(steps: &'a [StepRange]) -> StepIndex<'a> {
        let leaves = steps.len().next_power_of_two();
        let mut tree = vec![i64::MIN; 2 * leaves];
        for (i, s) in steps.iter().enumerate() {
            let instant = i64::from(s.duration().0 == 0);
            tree[leaves + i] = s.range.end.0.saturating_add(instant);
        }
        for node in (1..leaves).rev() {
            tree[node] = tree[2 * node].max(tree[2 * node + 1]);
        }
        StepIndex {
            steps,
            tree,
            leaves,
        }
    }

    fn containing(&self, t: Nanos) -> Option<u32> {
        let started = self.steps.partition_point(|s| s.range.start <= t);
        self.last_open(1, 0, self.leaves, started, t.0)
            .map(|i| i as u32)
    }

    /// The last index below `started`, within node `node` (covering `lo..hi`), whose
    /// effective end is after `t`. Descends one path, plus whole subtrees known to hold
    /// an answer: O(log n).
    fn last_open(
        &self,
        node: usize,
        lo: usize,
        hi: usize,
        started: usize,
        t: i64,
    ) -> Option<usize> {
        if lo >= started || self.tree[node] <= t {
            return None;
        }
        if hi - lo == 1 {
            return Some(lo);
        }
        let mid = lo + (hi - lo) / 2;
        self.last_open(2 * node + 1, mid, hi, started, t)
            .or_else(|| self.last_open(2 * node, lo, mid, started, t))
    }
}

fn module_steps(capture: &Capture) -> Option<Steps> {
    // Activities with a module, in start order across all streams.
    let mut order: Vec<usize> = (0..capture.activities().len())
        .filter(|&i| capture.hlo_module(&capture.activities()[i]).is_some())
        .collect();
    if order.is_empty() {
        return None;
    }
    order.sort_by_key(|&i| (capture.activities()[i].start, i));
    // Runs of one module: (module, first index into `order`, one past last).
    let mut runs: Vec<(trace_model::StringId, usize, usize)> = Vec::new();
    for (pos, &i) in order.iter().enumerate() {
        let m = capture
            .hlo_module(&capture.activities()[i])
            .expect("filtered on hlo_module");
        match runs.last_mut() {
            Some(r) if r.0 == m => r.2 = pos + 1,
            _ => runs.push((m, pos, pos + 1)),
        }
    }
    // Per module: number of runs and GPU time. BTreeMap by name for a stable tie-break.
    let mut per_module: BTreeMap<&str, (usize, i64, trace_model::StringId)> = BTreeMap::new();
    for r in &runs {
        let e = per_module.entry(capture.name(r.0)).or_insert((0, 0, r.0));
        e.0 += 1;
        e.1 += order[r.1..r.2]
            .iter()
            .map(|&i| capture.activities()[i].dur.0)
            .sum::<i64>();
    }
    let (name, &(_, module_time, module)) = per_module
        .iter()
        .filter(|(_, v)| v.0 >= 2)
        .max_by(|a, b| a.1.1.cmp(&b.1.1).then(b.0.cmp(a.0)))?;
    // A module that does not hold most of the GPU time is one of several programs
    // (a sequence of small benchmarks), not the step loop.
    let gpu_time: i64 = capture.activities().iter().map(|a| a.dur.0).sum();
    if 2 * module_time < gpu_time {
        return None;
    }
    let mut steps = Vec::new();
    let mut activity_step = vec![None; capture.activities().len()];
    for r in runs.iter().filter(|r| r.0 == module) {
        let idx = &order[r.1..r.2];
        let start = idx.iter().map(|&i| capture.activities()[i].start).min()?;
        let end = idx.iter().map(|&i| capture.activities()[i].end()).max()?;
        steps.push(StepRange {
            number: steps.len() as i64,
            range: Window { start, end },
        });
    }
    let index = StepIndex::new(&steps);
    for (i, a) in capture.activities().iter().enumerate() {
        activity_step[i] = index.containing(a.start);
    }
    let mut diagnostics = Diagnostics::default();
    diagnostics.add_many(
        "steps-from-module-executions",
        steps.len() as u64,
        format!("no step annotations: steps are the executions of XLA module {name}, numbered from 0 in time order"),
        String::new(),
    );
    diagnostics.add_many(
        "outside-steps",
        count_none(&activity_step) as u64,
        format!("GPU activities start outside every execution of {name} and are left out of per-step numbers"),
        String::new(),
    );
    Some(Steps {
        origin: StepOrigin::ModuleExecution {
            module: name.to_string(),
        },
        forward_kinds: vec![String::new(); steps.len()],
        steps,
        activity_step,
        diagnostics,
        considered: Vec::new(),
    })
}

/// Whether a host range is one model forward: its repeated children are the model's
/// layers, not iterations, so the search for a repeated range does not descend into it.
fn is_model_forward(name: &str) -> bool {
    name.ends_with("forward") || name.starts_with("nn.Module:")
}

/// Whether `v` lies within 0.5–2× `median`.
fn near_median(v: i64, median: i64) -> bool {
    2 * v >= median && v <= 2 * median
}

/// Steps from a host range that recurs at the top level of the launching thread (see the
/// module docs, source 4).
fn repeated_host_steps(capture: &Capture) -> Option<Steps> {
    // The thread that launches the most GPU activities, and its launch times in order.
    let mut per_thread: BTreeMap<trace_model::ThreadId, Vec<Nanos>> = BTreeMap::new();
    for a in capture.activities() {
        if let Some(l) = a.launch() {
            let e = capture.host_event(l);
            per_thread.entry(e.thread).or_default().push(e.start);
        }
    }
    let (&thread, launches) = per_thread
        .iter_mut()
        .max_by(|a, b| a.1.len().cmp(&b.1.len()).then(b.0.cmp(a.0)))?;
    launches.sort_unstable();
    let launches: &[Nanos] = launches;
    let within = |w: Window| {
        launches.partition_point(|&t| t < w.end) - launches.partition_point(|&t| t < w.start)
    };
    // Annotations and Python frames of that thread, outermost first at equal starts.
    let mut ranges: Vec<&trace_model::HostEvent> = capture
        .thread_events(thread)
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                trace_model::HostKind::Annotation | trace_model::HostKind::PythonFrame
            ) && e.dur.0 > 0
        })
        .collect();
    ranges.sort_by(|a, b| a.start.cmp(&b.start).then(b.end().cmp(&a.end())));
    let mut scope = Window {
        start: Nanos(i64::MIN),
        end: Nanos(i64::MAX),
    };
    // Each pass looks at one level; a level is never deeper than the number of ranges.
    for _ in 0..ranges.len().min(256) {
        // The outermost ranges inside the scope (the scope's own range left out).
        let mut level: Vec<&trace_model::HostEvent> = Vec::new();
        let mut covered_to = Nanos(i64::MIN);
        for e in &ranges {
            if e.start < scope.start || e.end() > scope.end || e.start < covered_to {
                continue;
            }
            if e.start == scope.start && e.end() == scope.end {
                continue;
            }
            covered_to = e.end();
            level.push(e);
        }
        let in_scope = within(scope);
        if level.is_empty() || in_scope == 0 {
            return None;
        }
        let window = |e: &trace_model::HostEvent| Window {
            start: e.start,
            end: e.end(),
        };
        // Candidates: names with two or more instances at this level, a stable period,
        // stable launch counts, and at least half of the scope's launches.
        let mut by_name: BTreeMap<&str, Vec<&trace_model::HostEvent>> = BTreeMap::new();
        for e in &level {
            by_name.entry(capture.name(e.name)).or_default().push(e);
        }
        let best = by_name
            .iter()
            .filter(|(_, v)| v.len() >= 2)
            .filter_map(|(name, v)| {
                let counts: Vec<i64> = v.iter().map(|e| within(window(e)) as i64).collect();
                let total: i64 = counts.iter().sum();
                if 2 * total < in_scope as i64 || counts.contains(&0) {
                    return None;
                }
                let periods: Vec<i64> = v.windows(2).map(|w| (w[1].start - w[0].start).0).collect();
                let stable = |x: &[i64]| {
                    let mut s = x.to_vec();
                    s.sort_unstable();
                    let median = s[(s.len() - 1) / 2];
                    x.iter().all(|&p| near_median(p, median))
                };
                (stable(&periods) && stable(&counts)).then_some((total, *name, v))
            })
            .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(a.1)));
        if let Some((_, name, instances)) = best {
            let kind = if instances[0].kind == trace_model::HostKind::PythonFrame {
                HostRangeKind::PythonFunction
            } else {
                HostRangeKind::Annotation
            };
            let steps: Vec<StepRange> = instances
                .iter()
                .enumerate()
                .map(|(i, e)| StepRange {
                    number: i as i64,
                    range: window(e),
                })
                .collect();
            let activity_step = steps_by_launch(capture, &steps);
            let mut diagnostics = Diagnostics::default();
            diagnostics.add_many(
                "steps-from-repeated-range",
                steps.len() as u64,
                format!("no ProfilerStep#N or engine markers: steps are the instances of the top-level {} {name}, numbered from 0 in time order", kind.label()),
                String::new(),
            );
            diagnostics.add_many(
                "outside-steps",
                count_none(&activity_step) as u64,
                format!("GPU activities were launched outside every instance of {name} and are left out of per-step numbers"),
                String::new(),
            );
            return Some(Steps {
                origin: StepOrigin::RepeatedHostRange {
                    name: name.to_owned(),
                    kind,
                },
                forward_kinds: vec![String::new(); steps.len()],
                steps,
                activity_step,
                diagnostics,
                considered: Vec::new(),
            });
        }
        // No repeated range here: descend into the one range holding most launches,
        // unless it is a model's forward (whose repeats are layers).
        let (top, top_launches) = level
            .iter()
            .map(|e| (*e, within(window(e))))
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.start.cmp(&a.0.start)))?;
        if 2 * top_launches < in_scope || is_model_forward(capture.name(top.name)) {
            return None;
        }
        scope = window(top);
    }
    None
}

/// Steps from a repeating kernel sequence on the stream with the most compute (source 6).
fn kernel_sequence_steps(capture: &Capture) -> Option<Steps> {
    let stream = capture
        .streams()
        .iter()
        .map(|s| {
            let (mut compute, mut busy) = (0i64, 0i64);
            for a in capture.stream_activities(s.id) {
                busy += a.dur.0;
                compute += a.dur.0 * i64::from(!matches!(a.class, KernelClass::Collective(_)));
            }
            ((compute, busy), s)
        })
        .filter(|((_, busy), _)| *busy > 0)
        .max_by(|a, b| a.0.cmp(&b.0).then(b.1.id.cmp(&a.1.id)))?
        .1;
    let acts = capture.stream_activities(stream.id);
    let names: Vec<trace_model::StringId> = acts.iter().map(|a| a.name).collect();
    let idle_before: Vec<i64> = (0..acts.len())
        .map(|i| {
            if i == 0 {
                0
            } else {
                (acts[i].start - acts[i - 1].end()).0.max(0)
            }
        })
        .collect();
    let (period, phase) = repeating_period(&names, &idle_before)?;
    let whole = (names.len() - phase) / period;
    let mut steps: Vec<StepRange> = (0..whole)
        .map(|j| {
            let first = phase + j * period;
            let end = match acts.get(first + period) {
                Some(next) => next.start,
                None => acts[first..first + period]
                    .iter()
                    .map(|a| a.end())
                    .max()
                    .expect("a period holds at least one activity"),
            };
            StepRange {
                number: j as i64,
                range: Window {
                    start: acts[first].start,
                    end,
                },
            }
        })
        .collect();
    steps.sort_by_key(|s| (s.range.start, s.number));
    let index = StepIndex::new(&steps);
    let activity_step: Vec<Option<u32>> = capture
        .activities()
        .iter()
        .map(|a| index.containing(a.start))
        .collect();
    let device = capture.device(stream.device).ordinal;
    let stream_name = format!("GPU {device} stream {}", stream.ordinal);
    let first = capture.name(names[phase]).to_owned();
    let mut diagnostics = Diagnostics::default();
    diagnostics.add_many(
        "steps-from-kernel-sequence",
        steps.len() as u64,
        format!("no step annotations, repeated host ranges or XLA modules: steps are the periods of the activity sequence on {stream_name} ({period} activities each), numbered from 0 in time order"),
        String::new(),
    );
    diagnostics.add_many(
        "outside-steps",
        count_none(&activity_step) as u64,
        "GPU activities start outside every whole period (a partial period at the capture's start or end) and are left out of per-step numbers".to_owned(),
        String::new(),
    );
    Some(Steps {
        origin: StepOrigin::KernelSequence {
            stream: stream_name,
            period,
            first,
        },
        forward_kinds: vec![String::new(); steps.len()],
        steps,
        activity_step,
        diagnostics,
        considered: Vec::new(),
    })
}

/// The shortest period of `names` and the phase its periods start at (see the module
/// docs, source 5); `idle_before[i]` is the idle time before activity `i`.
fn repeating_period<T: Ord + Copy>(names: &[T], idle_before: &[i64]) -> Option<(usize, usize)> {
    let n = names.len();
    let mut positions: BTreeMap<T, Vec<usize>> = BTreeMap::new();
    for (i, &name) in names.iter().enumerate() {
        positions.entry(name).or_default().push(i);
    }
    // Candidate periods: per name, the most common distance between an occurrence and
    // the one 1..=4 occurrences later (a name that occurs m times per period gives the
    // period at m).
    let mut candidates: Vec<usize> = Vec::new();
    for pos in positions.values() {
        for m in 1..=4 {
            if pos.len() <= m {
                break;
            }
            let mut counts: BTreeMap<usize, usize> = BTreeMap::new();
            for w in pos.windows(m + 1) {
                *counts.entry(w[m] - w[0]).or_default() += 1;
            }
            let (&distance, _) = counts
                .iter()
                .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                .expect("at least one distance");
            candidates.push(distance);
        }
    }
    candidates.sort_unstable();
    candidates.dedup();
    candidates
        .into_iter()
        .filter(|&p| 2 * p <= n)
        .take(256)
        .find_map(|p| {
            // Mean idle gap before each phase, in one pass (activity 0 has none).
            let mut sums = vec![0i128; p];
            let mut counts = vec![0i128; p];
            for (i, &idle) in idle_before.iter().enumerate().skip(1) {
                sums[i % p] += i128::from(idle);
                counts[i % p] += 1;
            }
            // Compared as fractions without floats; ties go to the earliest phase.
            let phase = (0..p)
                .max_by(|&a, &b| {
                    (sums[a] * counts[b].max(1))
                        .cmp(&(sums[b] * counts[a].max(1)))
                        .then(b.cmp(&a))
                })
                .expect("p >= 1");
            ((n - phase) / p >= 2 && periods_repeat(names, p, phase)).then_some((p, phase))
        })
}

/// Whether every period of `names` (cut at `phase`, partial ones at the edges included)
/// matches the next one position by position in at least 80 % of the positions they
/// share.
fn periods_repeat<T: PartialEq>(names: &[T], p: usize, phase: usize) -> bool {
    let n = names.len();
    // Position i is compared with i + p wherever both exist: a partial period at the
    // start is aligned at its end with the first whole one, a partial one at the end at
    // its start with the last whole one.
    let mut start = 0;
    let mut cut = if phase == 0 { p } else { phase };
    while start < n {
        let end = cut.min(n);
        let (mut same, mut compared) = (0usize, 0usize);
        for i in start..end {
            if i + p < n {
                compared += 1;
                same += usize::from(names[i] == names[i + p]);
            }
        }
        if compared > 0 && 5 * same < 4 * compared {
            return false;
        }
        start = end;
        cut = end + p;
    }
    true
}

fn whole_capture(capture: &Capture) -> Steps {
    let gpu = capture.gpu_span();
    let host_start = capture.host_events().iter().map(|e| e.start).min();
    let host_end = capture.host_events().iter().map(|e| e.end()).max();
    let start = [gpu.map(|g| g.0), host_start].into_iter().flatten().min();
    let end = [gpu.map(|g| g.1), host_end].into_iter().flatten().max();
    let (steps, activity_step) = match (start, end) {
        (Some(start), Some(end)) => (
            vec![StepRange {
                number: 0,
                range: Window { start, end },
            }],
            vec![Some(0); capture.activities().len()],
        ),
        _ => (Vec::new(), vec![None; capture.activities().len()]),
    };
    Steps {
        origin: StepOrigin::WholeCapture,
        forward_kinds: vec![String::new(); steps.len()],
        steps,
        activity_step,
        considered: Vec::new(),
        diagnostics: {
            let mut d = Diagnostics::default();
            d.add_many(
                "no-steps",
                1,
                "no steps found (no ProfilerStep#, step or engine marker, repeated top-level range, repeated XLA module or repeating kernel sequence): the whole capture is treated as one step".to_owned(),
                String::new(),
            );
            d
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Loads a Kineto trace from JSON events and returns (origin, step numbers, the step
    /// number of each activity in stream/start order).
    fn check(events: &str, origin: StepOrigin, expect: &[Option<i64>]) {
        let json = format!(r#"{{"schemaVersion":1,"traceEvents":[{events}]}}"#);
        let c = chrome_reader::load_from(json.as_bytes(), Path::new("test.json")).expect("loads");
        let s = find_steps(&c);
        assert_eq!(s.origin, origin);
        let got: Vec<Option<i64>> = s
            .activity_step
            .iter()
            .map(|i| i.map(|i| s.steps[i as usize].number))
            .collect();
        assert_eq!(got, expect);
    }

    const K1: &str = r#"{"ph":"X","cat":"kernel","name":"k1","pid":0,"tid":7,"ts":30,"dur":5,"args":{"device":0,"stream":7,"correlation":1}}"#;
    const K2: &str = r#"{"ph":"X","cat":"kernel","name":"k2","pid":0,"tid":7,"ts":120,"dur":5,"args":{"device":0,"stream":7,"correlation":2}}"#;
    const L1: &str = r#"{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":5,"dur":2,"args":{"correlation":1}}"#;
    // Launched in step 1 (host), runs after step 1's host range ended.
    const L2: &str = r#"{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":90,"dur":2,"args":{"correlation":2}}"#;
    const S0: &str = r#"{"ph":"X","cat":"user_annotation","name":"ProfilerStep#0","pid":1,"tid":1,"ts":0,"dur":50}"#;
    const S1: &str = r#"{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":50,"dur":50}"#;
    const G0: &str = r#"{"ph":"X","cat":"gpu_user_annotation","name":"ProfilerStep#0","pid":0,"tid":7,"ts":25,"dur":50,"args":{"device":0}}"#;

    #[test]
    fn steps() {
        // Host steps: placed by the launch, not by the kernel start.
        check(
            &[S0, S1, L1, L2, K1, K2].join(","),
            StepOrigin::ProfilerStep,
            &[Some(0), Some(1)],
        );
        // GPU-side annotations only: placed by the kernel start.
        check(
            &[G0, L1, L2, K1, K2].join(","),
            StepOrigin::ProfilerStep,
            &[Some(0), None],
        );
        // Nothing: one step over the whole capture.
        check(
            &[L1, L2, K1, K2].join(","),
            StepOrigin::WholeCapture,
            &[Some(0), Some(0)],
        );
    }

    /// Engine step markers without ProfilerStep: SGLang's `step[…]` annotations, and
    /// vLLM's `execute_model` frame around its `execute_…_context_…` range (outermost kept,
    /// the inner one names the forward).
    #[test]
    fn engine_steps() {
        let ann = |name: &str, ts: u64, dur: u64| {
            format!(
                r#"{{"ph":"X","cat":"user_annotation","name":"{name}","pid":1,"tid":1,"ts":{ts},"dur":{dur}}}"#
            )
        };
        let py = |name: &str, ts: u64, dur: u64| {
            format!(
                r#"{{"ph":"X","cat":"python_function","name":"{name}","pid":1,"tid":1,"ts":{ts},"dur":{dur}}}"#
            )
        };
        let sglang = [
            ann("step[EXTEND bs=1 tokens=15360]", 0, 50),
            ann("step[DECODE bs=8]", 50, 50),
            L1.to_owned(),
            L2.to_owned(),
            K1.to_owned(),
            K2.to_owned(),
        ]
        .join(",");
        let json = format!(r#"{{"traceEvents":[{sglang}]}}"#);
        let c = chrome_reader::load_from(json.as_bytes(), Path::new("t.json")).expect("loads");
        let s = find_steps(&c);
        assert_eq!(
            s.origin,
            StepOrigin::EngineStep {
                markers: "SGLang step[…]".to_owned()
            }
        );
        assert_eq!(s.forward_kinds, ["prefill", "decode"]);
        assert_eq!(s.activity_step, [Some(0), Some(1)]);
        let per_forward: Vec<(String, usize, i64)> = s
            .forward_spreads()
            .into_iter()
            .map(|(k, n, sp)| (k, n, sp.median.0))
            .collect();
        assert_eq!(
            per_forward,
            [
                ("prefill".to_owned(), 1, 50_000),
                ("decode".to_owned(), 1, 50_000)
            ]
        );
        let vllm = [
            py(
                "vllm/v1/worker/gpu_model_runner.py(3380): execute_model",
                0,
                100,
            ),
            ann(
                "execute_8192_context_9(sq8155sk8430)_generation_37(sq37sk3)",
                2,
                90,
            ),
            L1.to_owned(),
            K1.to_owned(),
        ]
        .join(",");
        let json = format!(r#"{{"traceEvents":[{vllm}]}}"#);
        let c = chrome_reader::load_from(json.as_bytes(), Path::new("t.json")).expect("loads");
        let s = find_steps(&c);
        assert_eq!(s.steps.len(), 1);
        assert_eq!(s.steps[0].range.span(), Nanos(100_000));
        assert_eq!(s.forward_kinds, ["prefill 9 + decode 37"]);
        assert_eq!(s.forward_spreads()[0].0, "prefill + decode");
        assert!(s.origin.describe().contains("vLLM execute_model"));
    }

    /// A kernel on stream 7 at `ts` µs for `dur` µs, launched (when `corr` is some) by a
    /// `cudaLaunchKernel` on thread 1 at `ts - 2`; `extra` goes into its args.
    fn kernel(name: &str, ts: u64, dur: u64, corr: Option<u64>, extra: &str) -> String {
        let k = match corr {
            Some(c) => format!(
                r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":7,"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":7,"correlation":{c}{extra}}}}}"#
            ),
            None => format!(
                r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":7,"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":7{extra}}}}}"#
            ),
        };
        match corr {
            Some(c) => format!(
                r#"{k},{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":1,"args":{{"correlation":{c}}}}}"#,
                ts - 2
            ),
            None => k,
        }
    }

    fn host(cat: &str, name: &str, ts: u64, dur: u64) -> String {
        format!(
            r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":1,"tid":1,"ts":{ts},"dur":{dur}}}"#
        )
    }

    fn steps_of(events: &[String]) -> Steps {
        let json = format!(r#"{{"traceEvents":[{}]}}"#, events.join(","));
        let c = chrome_reader::load_from(json.as_bytes(), Path::new("t.json")).expect("loads");
        find_steps(&c)
    }

    /// Step ranges in µs.
    fn ranges_us(s: &Steps) -> Vec<(i64, i64)> {
        s.steps
            .iter()
            .map(|s| (s.range.start.0 / 1000, s.range.end.0 / 1000))
            .collect()
    }

    /// Three `train_step` ranges inside one `main` (annotations, then Python functions):
    /// `main` is descended into, the steps are exactly the three instances, and each
    /// kernel goes to the instance that launched it. A setup kernel launched in `main`
    /// before the loop is outside every step.
    #[test]
    fn repeated_top_level_ranges() {
        for (cat, wrapper, name, kind) in [
            (
                "user_annotation",
                "main",
                "train_step",
                HostRangeKind::Annotation,
            ),
            (
                "python_function",
                "train.py(1): <module>",
                "train.py(10): train_step",
                HostRangeKind::PythonFunction,
            ),
        ] {
            let mut ev = vec![
                host(cat, wrapper, 0, 400),
                kernel("setup", 12, 2, Some(1), ""),
            ];
            for (i, t) in [100u64, 200, 300].into_iter().enumerate() {
                ev.push(host(cat, name, t, 80));
                let c = 10 + 2 * i as u64;
                ev.push(kernel("gemm", t + 10, 20, Some(c), ""));
                ev.push(kernel("relu", t + 40, 5, Some(c + 1), ""));
            }
            let s = steps_of(&ev);
            assert_eq!(
                s.origin,
                StepOrigin::RepeatedHostRange {
                    name: name.to_owned(),
                    kind
                }
            );
            assert_eq!(ranges_us(&s), [(100, 180), (200, 280), (300, 380)]);
            assert_eq!(
                s.activity_step,
                [None, Some(0), Some(0), Some(1), Some(1), Some(2), Some(2)]
            );
            assert!(host_ranged(&s.origin));
        }
    }

    /// A diffusion scheduler's `step` inside each of four repeating `denoise` ranges that
    /// also launch the transformer's work: the scheduler's kernels are most of the GPU
    /// time (so the 50 % rule alone would take them), but each lies inside a repeating
    /// parent that launches other work, so the parent is the step. A parent that launches
    /// nothing else (a wrapper frame) does not take the step from its child.
    #[test]
    fn a_range_nested_in_a_repeating_parent_is_not_the_step() {
        let mut ev = vec![host("user_annotation", "main", 0, 1000)];
        for (i, t) in [100u64, 300, 500, 700].into_iter().enumerate() {
            let c = 10 + 2 * i as u64;
            ev.push(host("user_annotation", "denoise", t, 150));
            ev.push(kernel("transformer_gemm", t + 10, 30, Some(c), ""));
            ev.push(host(
                "python_function",
                "scheduling_flow.py(3): step",
                t + 60,
                60,
            ));
            ev.push(kernel("scheduler_update", t + 70, 45, Some(c + 1), ""));
        }
        let s = steps_of(&ev);
        let engine = s
            .considered
            .iter()
            .find(|c| c.evidence == StepEvidence::EngineStep)
            .expect("engine markers considered");
        let CandidateOutcome::NestedInRepeatingParent {
            parent,
            instances,
            share,
        } = &engine.outcome
        else {
            panic!("{:?}", engine.outcome)
        };
        assert_eq!((parent.as_str(), *instances), ("denoise", 4));
        assert!((share - 45.0 / 75.0).abs() < 1e-9, "{share}");
        assert_eq!(
            s.origin,
            StepOrigin::RepeatedHostRange {
                name: "denoise".to_owned(),
                kind: HostRangeKind::Annotation
            }
        );
        assert_eq!(s.steps.len(), 4);
        // The same parent as a wrapper (it launches nothing of its own): the markers win.
        let wrapped: Vec<String> = ev
            .iter()
            .filter(|e| !e.contains("transformer_gemm"))
            .cloned()
            .collect();
        let s = steps_of(&wrapped);
        assert!(
            matches!(s.origin, StepOrigin::EngineStep { .. }),
            "{:?}",
            s.considered
        );
    }

    /// One model forward whose layers repeat (an annotation per layer, the same kernels
    /// per layer) between an embedding and a head: neither the host ranges nor the kernel
    /// sequence make iterations of the layers, so the capture stays one step.
    #[test]
    fn layers_of_one_forward_are_not_iterations() {
        let mut ev = vec![
            host("python_function", "model.py(5): forward", 0, 500),
            kernel("embedding", 10, 5, Some(1), ""),
        ];
        for (i, t) in [100u64, 200, 300].into_iter().enumerate() {
            ev.push(host("user_annotation", "decoder_layer", t, 80));
            let c = 10 + 2 * i as u64;
            ev.push(kernel("gemm", t + 10, 20, Some(c), ""));
            ev.push(kernel("relu", t + 40, 5, Some(c + 1), ""));
        }
        ev.push(kernel("lm_head", 420, 10, Some(99), ""));
        let s = steps_of(&ev);
        assert_eq!(s.origin, StepOrigin::WholeCapture);
        assert_eq!(s.steps.len(), 1);
    }

    /// Two executions of `jit_train_step` around one of a small `jit_log` module: one
    /// step per run of the step module, from its first kernel's start to its last's end.
    #[test]
    fn repeated_module_executions() {
        let m = |module: &str| format!(r#","hlo_module":"{module}""#);
        let ev = [
            kernel("fusion.1", 0, 10, None, &m("jit_train_step")),
            kernel("dot.2", 12, 30, None, &m("jit_train_step")),
            kernel("reduce.3", 50, 2, None, &m("jit_log")),
            kernel("fusion.1", 60, 10, None, &m("jit_train_step")),
            kernel("dot.2", 72, 30, None, &m("jit_train_step")),
        ];
        let s = steps_of(&ev);
        assert_eq!(
            s.origin,
            StepOrigin::ModuleExecution {
                module: "jit_train_step".to_owned()
            }
        );
        assert_eq!(ranges_us(&s), [(0, 42), (60, 102)]);
        assert_eq!(s.activity_step, [Some(0), Some(0), None, Some(1), Some(1)]);
    }

    /// Kernels only, no host side: a partial period (`c`), three whole periods `a b c`
    /// with a long idle gap before each `a`, and a partial one (`a`). The period is 3,
    /// starting at `a` (the largest gap), each step from one `a` to the next; the partial
    /// periods are outside every step.
    #[test]
    fn repeating_kernel_sequence() {
        let mut ev = vec![kernel("c", 0, 5, None, "")];
        for t in [100u64, 200, 300] {
            ev.push(kernel("a", t, 10, None, ""));
            ev.push(kernel("b", t + 12, 10, None, ""));
            ev.push(kernel("c", t + 24, 10, None, ""));
        }
        ev.push(kernel("a", 400, 10, None, ""));
        let s = steps_of(&ev);
        assert_eq!(
            s.origin,
            StepOrigin::KernelSequence {
                stream: "GPU 0 stream 7".to_owned(),
                period: 3,
                first: "a".to_owned()
            }
        );
        assert_eq!(ranges_us(&s), [(100, 200), (200, 300), (300, 400)]);
        assert_eq!(
            s.activity_step,
            [
                None,
                Some(0),
                Some(0),
                Some(0),
                Some(1),
                Some(1),
                Some(1),
                Some(2),
                Some(2),
                Some(2),
                None
            ]
        );
        assert!(!host_ranged(&s.origin));
        // One kernel differing in one period of five is tolerated (80 % match).
        let names: Vec<&str> = "abcdeabcdeabXdeabcde"
            .split("")
            .filter(|c| !c.is_empty())
            .collect();
        assert_eq!(repeating_period(&names, &[0; 20]), Some((5, 0)));
        // Not periodic: a different prefix and suffix around repeats.
        let names: Vec<&str> = "EabababH".split("").filter(|c| !c.is_empty()).collect();
        assert_eq!(repeating_period(&names, &[0; 8]), None);
        // The shortest period wins: `aaaa…` repeats every activity.
        assert_eq!(repeating_period(&["a"; 6], &[0; 6]), Some((1, 0)));
    }

    /// The sequence is read on the stream with the most compute, not on a collective
    /// stream that is busier only because its kernels wait for peers: one all-reduce per
    /// iteration, 80 µs each, beside three 10 µs kernels on the compute stream.
    #[test]
    fn kernel_sequence_is_read_on_the_compute_stream() {
        let mut ev = Vec::new();
        for t in [100u64, 200, 300, 400] {
            ev.push(kernel("a", t, 10, None, ""));
            ev.push(kernel("b", t + 12, 10, None, ""));
            ev.push(kernel("c", t + 24, 10, None, ""));
            ev.push(
                kernel(
                    "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                    t + 10,
                    80,
                    None,
                    "",
                )
                .replace("\"stream\":7", "\"stream\":9")
                .replace("\"tid\":7", "\"tid\":9"),
            );
        }
        let s = steps_of(&ev);
        assert_eq!(
            s.origin,
            StepOrigin::KernelSequence {
                stream: "GPU 0 stream 7".to_owned(),
                period: 3,
                first: "a".to_owned()
            }
        );
        assert_eq!(s.steps.len(), 4);
    }

    /// The step containing `t` by the scan [`StepIndex`] replaced: the reference.
    fn containing_by_scan(steps: &[StepRange], t: Nanos) -> Option<u32> {
        let after = steps.partition_point(|s| s.range.start <= t);
        (0..after)
            .rev()
            .find(|&i| {
                t < steps[i].range.end || (t == steps[i].range.end && steps[i].duration().0 == 0)
            })
            .map(|i| i as u32)
    }

    fn range(number: i64, start: i64, end: i64) -> StepRange {
        StepRange {
            number,
            range: Window {
                start: Nanos(start),
                end: Nanos(end),
            },
        }
    }

    /// The index answers as the scan did, for every time around every edge of
    /// overlapping, nested, back-to-back and zero-length steps.
    #[test]
    fn step_index_agrees_with_the_scan() {
        let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n) as i64
        };
        for case in 0..300 {
            let mut steps: Vec<StepRange> = (0..(case % 17))
                .map(|i| {
                    let start = next(60);
                    range(i, start, start + next(25))
                })
                .collect();
            steps.sort_by_key(|s| (s.range.start, s.number));
            let index = StepIndex::new(&steps);
            for t in -2..90 {
                assert_eq!(
                    index.containing(Nanos(t)),
                    containing_by_scan(&steps, Nanos(t)),
                    "case {case}, t {t}"
                );
            }
        }
    }

    /// 200,000 steps each nested in the one before (the shape that took 9.5 s) and a time
    /// after every inner one ended, in each: the scan visits about n²/2 = 2·10¹⁰ steps,
    /// the index about n·log n. A generous watchdog (20 s, unoptimised build) stands for
    /// the work count; each answer is the outermost step still open.
    #[test]
    fn nested_steps_resolve_in_n_log_n() {
        let n = 200_000i64;
        // Step i is [i, 2n - i): each inside the one before.
        let steps: Vec<StepRange> = (0..n).map(|i| range(i, i, 2 * n - i)).collect();
        let start = std::time::Instant::now();
        let index = StepIndex::new(&steps);
        for k in 0..n {
            // Time 2n - k - 1 lies in steps 0..=k; step k is the latest started.
            let t = Nanos(2 * n - k - 1);
            assert_eq!(index.containing(t), Some(k as u32));
        }
        let took = start.elapsed();
        assert!(took < std::time::Duration::from_secs(20), "{took:?}");
    }

    #[test]
    fn spread() {
        let s = |v: &[i64]| {
            Spread::of(v.iter().map(|&n| Nanos(n))).map(|s| (s.median.0, s.min.0, s.max.0))
        };
        assert_eq!(s(&[]), None);
        assert_eq!(s(&[5]), Some((5, 5, 5)));
        assert_eq!(s(&[4, 1, 3, 2]), Some((2, 1, 4)));
    }
}
