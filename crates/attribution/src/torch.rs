//! PyTorch / Kineto: kernel → correlation id → runtime launch → innermost enclosing `cpu_op`
//! → enclosing `python_function` frames (`with_stack=True`) → the first user frame.

use trace_model::{Capture, HostEvent, HostKind, ThreadId, TrustItem};

use crate::jax::kind_name;
use crate::model::{Attribution, Config, DecidedBy, KernelRow, MatchKind};
use crate::shared::{NameCache, SharedName};
use crate::user::{is_default_torch_user_frame, parse_python_frame};
use crate::{Error, SourceFormat};

/// The message for a trace without `python_function` events.
pub const NO_STACKS: &str = "this trace has no python_function events: Python lines need a capture taken with torch.profiler.profile(with_stack=True); ops.csv is still written";

/// Attributes the GPU activities of a Kineto capture to CPU ops and Python lines.
pub fn attribute_kineto(
    capture: &Capture,
    config: &Config,
    path: &str,
) -> Result<Attribution, Error> {
    let frames = NestedRanges::new(capture, HostKind::PythonFrame);
    // Formats without CPU ops (Nsight Systems, ROCm profilers): the annotation ranges stand
    // for the ops. A Kineto trace has its CPU ops; its ranges are steps and
    // `record_function` blocks, too coarse to name an op.
    let profiler_ranges_only = !matches!(
        capture.format(),
        trace_model::Format::KinetoJson | trace_model::Format::OtherJson
    );
    let ranges = profiler_ranges_only.then(|| NestedRanges::new(capture, HostKind::Annotation));
    let is_user = |file: &str| match &config.user_re {
        Some(re) => re.is_match(file),
        None => is_default_torch_user_frame(file),
    };
    let mut names = NameCache::default();
    let mut kernels = Vec::with_capacity(capture.activities().len());
    for activity in capture.activities() {
        let stream = capture.stream(activity.stream);
        let mut row = KernelRow {
            device: capture.device(stream.device).ordinal,
            stream: stream.ordinal,
            start_ns: activity.start,
            dur_ns: activity.dur,
            kind: kind_name(activity.kind),
            name: names.id(capture, activity.name),
            program: String::new(),
            program_id: None,
            instruction: String::new(),
            op_name: SharedName::default(),
            source_line: String::new(),
            function: String::new(),
            match_kind: MatchKind::None,
            decided_by: DecidedBy::NoLaunch,
            in_graph: capture.activity_graph_id(activity).is_some(),
        };
        if let Some(launch) = activity.launch() {
            let launch = capture.host_event(launch);
            row.in_graph |= trace_model::is_graph_launch_api(capture.name(launch.name));
        }
        row.decided_by = match (activity.launch(), capture.launching_op(activity)) {
            (None, _) => DecidedBy::NoLaunch,
            (Some(launch), None) => {
                let launch = capture.host_event(launch);
                let range = ranges
                    .as_ref()
                    .and_then(|r| r.innermost_around(launch).map(|i| r.event(capture, i)));
                match range {
                    Some(range) => {
                        row.op_name = names.id(capture, range.name);
                        row.match_kind = MatchKind::EnclosingRange;
                        DecidedBy::EnclosingRange
                    }
                    None => DecidedBy::NoCpuOp,
                }
            }
            (Some(_), Some(op)) => {
                row.op_name = names.id(capture, op.name);
                let mut decided = DecidedBy::NoPythonStack;
                let mut frame = frames.innermost_around(op);
                while let Some(f) = frame {
                    decided = DecidedBy::NoUserFrame;
                    let event = frames.event(capture, f);
                    if let Some((file, line, function)) =
                        parse_python_frame(capture.name(event.name))
                        && is_user(file)
                    {
                        row.source_line = format!("{file}:{line}");
                        row.function = function.to_owned();
                        decided = DecidedBy::CorrelationChain;
                        row.match_kind = MatchKind::Exact;
                        break;
                    }
                    frame = frames.parent[f];
                }
                decided
            }
        };
        kernels.push(row);
    }
    let mut notes = Vec::new();
    let mut needs = Vec::new();
    let has_python_stacks = !frames.events.is_empty();
    if profiler_ranges_only {
        // Nsight Systems and ROCm profilers record no CPU ops or Python frames.
        notes.push(TrustItem::note("no-cpu-ops", format!(
            "this capture ({}) has no CPU ops or Python stacks: each kernel is attributed to the innermost annotation range (NVTX, ROCm marker) around its launch, on the launching thread; with PyTorch, `torch.autograd.profiler.emit_nvtx()` names those ranges after the ops",
            capture.format().describe()
        )));
    } else if !has_python_stacks {
        notes.push(TrustItem::note("no-python-stacks", NO_STACKS));
        needs.push(
            "Python lines: a capture with torch.profiler.profile(with_stack=True)".to_owned(),
        );
    }
    let mut result = Attribution {
        path: path.to_owned(),
        format: SourceFormat::Kineto,
        kernels,
        programs: Vec::new(),
        chosen_program: None,
        hlo_text: None,
        other_program_kernels: (0, trace_model::Nanos::ZERO),
        has_python_stacks,
        notes,
        needs_new_capture: needs,
    };
    result.note_graphs(
        |graph, attributed, label| format!(
            "{graph:.1} % of GPU time was launched by CUDA/HIP graphs; {attributed:.1} % of that reached a Python line ({label}): a graph replay's kernels have the replay's CPU op, not the op that captured them"
        ),
        "graph-launched kernels without a Python line: profile once without CUDA/HIP graphs (eager mode), or profile the graph capture itself, where each kernel still has its CPU op and stack",
    );
    Ok(result)
}

/// The host events of one kind (`python_function` frames, annotation ranges) of every
/// thread, each with the one of the same kind that encloses it.
struct NestedRanges {
    /// Host-event indices of the ranges, grouped by thread, each group in (start, longest
    /// first) order.
    events: Vec<u32>,
    parent: Vec<Option<usize>>,
    /// Per thread id: the range of `events` that is its frames.
    threads: Vec<(ThreadId, std::ops::Range<usize>)>,
    starts: Vec<i64>,
    ends: Vec<i64>,
}

impl NestedRanges {
    fn new(capture: &Capture, kind: HostKind) -> NestedRanges {
        let mut events: Vec<u32> = capture
            .host_events()
            .iter()
            .enumerate()
            .filter(|(_, e)| e.kind == kind)
            .map(|(i, _)| i as u32)
            .collect();
        let key = |&i: &u32| {
            let e = &capture.host_events()[i as usize];
            (
                e.thread,
                e.start,
                std::cmp::Reverse(e.end()),
                e.source_index,
            )
        };
        events.sort_by_key(key);
        let starts: Vec<i64> = events
            .iter()
            .map(|&i| capture.host_events()[i as usize].start.0)
            .collect();
        let ends: Vec<i64> = events
            .iter()
            .map(|&i| capture.host_events()[i as usize].end().0)
            .collect();
        let mut parent = vec![None; events.len()];
        let mut threads: Vec<(ThreadId, std::ops::Range<usize>)> = Vec::new();
        let mut stack: Vec<usize> = Vec::new();
        for (f, &i) in events.iter().enumerate() {
            let thread = capture.host_events()[i as usize].thread;
            match threads.last_mut() {
                Some((t, range)) if *t == thread => range.end = f + 1,
                _ => {
                    threads.push((thread, f..f + 1));
                    stack.clear();
                }
            }
            while stack.last().is_some_and(|&top| ends[top] <= starts[f]) {
                stack.pop();
            }
            parent[f] = stack.last().copied();
            stack.push(f);
        }
        NestedRanges {
            events,
            parent,
            threads,
            starts,
            ends,
        }
    }

    /// The host event of range `f`.
    fn event<'c>(&self, capture: &'c Capture, f: usize) -> &'c HostEvent {
        capture.host_event(trace_model::HostEventId::new(self.events[f]))
    }

    /// The innermost range on the op's thread that contains the op.
    fn innermost_around(&self, op: &HostEvent) -> Option<usize> {
        let (_, range) = self.threads.iter().find(|(t, _)| *t == op.thread)?;
        let starts = &self.starts[range.clone()];
        let after = starts.partition_point(|&s| s <= op.start.0);
        let mut frame = (after > 0).then(|| range.start + after - 1);
        while let Some(f) = frame {
            if self.ends[f] >= op.end().0 && self.starts[f] <= op.start.0 {
                return Some(f);
            }
            frame = self.parent[f];
        }
        None
    }
}
