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
//! 2. Repeated executions of the same XLA module: GPU activities in start order, split
//!    into runs of consecutive activities of one `hlo_module`; the module with at least
//!    two runs and the most GPU time gives one step per run, ranged from the run's first
//!    start to its last end, provided it holds at least half of all GPU activity time
//!    (otherwise the capture is a sequence of different programs, not a step loop).
//!    Activities are placed by their own start.
//! 3. Otherwise the whole capture is one step, and a diagnostic says so.
//!
//! The median step is the lower median of step durations (a step that exists, not an
//! average of two); the spread is max − min.

use std::collections::BTreeMap;

use trace_model::{Capture, Diagnostics, Nanos, StepSource};

use crate::budget::Window;

/// Where the steps came from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StepOrigin {
    /// `ProfilerStep#N` annotations (Kineto).
    ProfilerStep,
    /// Step markers with a `step_num` (JAX).
    StepMarker,
    /// Step annotations of an inference or diffusion engine (SGLang `step[EXTEND …]` /
    /// `step[DECODE …]`, vLLM `execute_model` and its `execute_N_context_…` ranges, a
    /// diffusion scheduler's `step`), outermost instances.
    EngineStep {
        /// The markers found, in words.
        markers: String,
    },
    /// Repeated executions of this XLA module.
    ModuleExecution {
        /// The module's name.
        module: String,
    },
    /// No step information: the whole capture is one step.
    WholeCapture,
}

impl StepOrigin {
    /// The origin in words, as reports print it.
    pub fn describe(&self) -> String {
        match self {
            StepOrigin::ProfilerStep => "ProfilerStep#N annotations".to_string(),
            StepOrigin::StepMarker => "step markers (step_num)".to_string(),
            StepOrigin::EngineStep { markers } => {
                format!("engine step annotations ({markers})")
            }
            StepOrigin::ModuleExecution { module } => {
                format!("repeated executions of XLA module {module}")
            }
            StepOrigin::WholeCapture => "none found: the whole capture is one step".to_string(),
        }
    }
}

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
}

/// Median, minimum and maximum of a set of durations (all `measured`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
        StepOrigin::ProfilerStep | StepOrigin::StepMarker | StepOrigin::EngineStep { .. }
    )
}

/// Finds the steps of a capture and places every GPU activity in one (or none).
pub(crate) fn find_steps(capture: &Capture) -> Steps {
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
        let activity_step: Vec<Option<u32>> = capture
            .activities()
            .iter()
            .map(|a| {
                let t = a.launch().map_or(a.start, |l| capture.host_event(l).start);
                step_containing(&steps, t)
            })
            .collect();
        let mut diagnostics = Diagnostics::default();
        diagnostics.add_many(
            "outside-steps",
            count_none(&activity_step) as u64,
            "GPU activities were launched outside every step and are left out of per-step numbers"
                .to_owned(),
            String::new(),
        );
        return Steps {
            origin,
            forward_kinds: vec![String::new(); steps.len()],
            steps,
            activity_step,
            diagnostics,
        };
    }
    if let Some(steps) = gpu_profiler_steps(capture) {
        return steps;
    }
    if let Some(steps) = engine_steps(capture) {
        return steps;
    }
    if let Some(steps) = module_steps(capture) {
        return steps;
    }
    whole_capture(capture)
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
    let activity_step: Vec<Option<u32>> = capture
        .activities()
        .iter()
        .map(|a| step_containing(&steps, a.start))
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
    let activity_step: Vec<Option<u32>> = capture
        .activities()
        .iter()
        .map(|a| {
            let t = a.launch().map_or(a.start, |l| capture.host_event(l).start);
            step_containing(&steps, t)
        })
        .collect();
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
    })
}

fn count_none(v: &[Option<u32>]) -> usize {
    v.iter().filter(|s| s.is_none()).count()
}

/// The index of the step whose range contains `t`; ranges are in time order and, when
/// they overlap, the later step wins (a new step starts when its annotation starts).
fn step_containing(steps: &[StepRange], t: Nanos) -> Option<u32> {
    let after = steps.partition_point(|s| s.range.start <= t);
    (0..after)
        .rev()
        .find(|&i| {
            t < steps[i].range.end || (t == steps[i].range.end && steps[i].duration().0 == 0)
        })
        .map(|i| i as u32)
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
    for (i, a) in capture.activities().iter().enumerate() {
        activity_step[i] = step_containing(&steps, a.start);
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
    })
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
        diagnostics: {
            let mut d = Diagnostics::default();
            d.add_many(
                "no-steps",
                1,
                "no steps found (no ProfilerStep#, step marker or repeated XLA module): the whole capture is treated as one step".to_owned(),
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
        assert!(s.origin.describe().contains("vLLM execute_model"));
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
