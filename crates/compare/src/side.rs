//! One side of a comparison: what is kept of its captures after one analysis, as series
//! with one sample per steady-state step (of every rank), so both sides can be held
//! against their own spread.

use std::collections::BTreeMap;
use std::path::Path;

use analysis::{CaptureAnalysis, Window};
use trace_model::{ActivityKind, Capture, HostEvent, HostKind, Nanos};

use crate::CauseKey;
use crate::names::normalise_kernel_name;

/// Per-step totals of one kernel (by normalised name) or one op (by name).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Totals {
    /// The kernel's class word (`gemm`, `collective`, …); empty for ops.
    pub class: &'static str,
    /// Time in each sample (steady-state step of a rank), in sample order.
    pub time: Vec<Nanos>,
    /// Instances over all samples.
    pub count: u64,
}

/// A CPU op as the comparison matches it: its name and, when the profiler recorded them
/// (`record_shapes=True`), its input shapes (`Input Dims`, whitespace removed), so that
/// `aten::mm` on two GEMM shapes is two ops.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpKey {
    /// The op's name.
    pub name: String,
    /// Its `Input Dims`, e.g. `[[8944,1024],[1024,2816]]`; `None` when not recorded.
    pub dims: Option<String>,
}

impl std::fmt::Display for OpKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.dims {
            Some(dims) => write!(f, "{} {dims}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// Instances and GPU time of one kernel under one op.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct KernelUse {
    /// Kernel instances.
    pub count: u64,
    /// Their summed duration.
    pub time: Nanos,
}

/// The GPU streams of one step, drawn on the step's own time axis (0 = the step's start),
/// so two sides' steps share one time scale.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StepLanes {
    /// The step's number.
    pub number: i64,
    /// Its duration.
    pub duration: Nanos,
    /// One row per stream with activity in the step, in stream order.
    pub lanes: Vec<StreamLane>,
}

/// One stream's activities in a step.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StreamLane {
    /// The GPU's ordinal.
    pub gpu: i64,
    /// The stream's ordinal.
    pub stream: i64,
    /// Whether it is the critical (most compute) stream.
    pub critical: bool,
    /// `(start, end, class word, name)`, relative to the step's start, clipped to it.
    pub slices: Vec<(Nanos, Nanos, &'static str, String)>,
}

/// What the comparison keeps of one input.
#[derive(Debug, Clone)]
pub struct Side {
    /// The input path as given.
    pub label: String,
    /// The trace format, in words (`investigation::Investigation::format`; for a side read
    /// from a report.json, of the trace it was investigated from).
    pub format: String,
    /// The GPU models recorded, one per device of every capture, sorted (`read` from the
    /// capture's device properties); empty when no capture names its devices.
    pub gpu_models: Vec<String>,
    /// The GPU vendors, one per device of every capture whose vendor is known (from its
    /// properties or its kernel and API names), sorted.
    pub gpu_vendors: Vec<String>,
    /// Devices with GPU activity, over all captures.
    pub devices: usize,
    /// Captures (ranks) read.
    pub captures: usize,
    /// What marked the steps (of the first capture); `None` until a side is read.
    pub step_origin: Option<investigation::StepsOrigin>,
    /// Whether steps were found at all (not the whole-capture fallback).
    pub has_steps: bool,
    /// What bounds the step of the capture the investigation draws, as its diagnosis
    /// says it (`analysis::Diagnosis`: code, words; `inferred`); `None` from a report
    /// written before the diagnosis was kept.
    pub diagnosis: Option<analysis::Diagnosis>,
    /// Steady-state steps of the first capture (warm-up left out).
    pub steady_steps: usize,
    /// Steady-state step durations, one per sample: every rank's steps in rank order.
    pub step_time: Vec<Nanos>,
    /// Per-stream budget part per sample, keyed by (rank, GPU position, stream place,
    /// part): a GPU's position among the capture's GPUs with activity, by ordinal, so that
    /// rank 3's GPU 3 and rank 1's GPU 1, each alone in its capture, are the same row; a
    /// stream's place on its GPU, busiest first over the steady-state steps.
    pub budgets: BTreeMap<(Option<i64>, usize, usize, &'static str), Vec<Nanos>>,
    /// The stream number at each (rank, GPU position, stream place).
    pub stream_ordinals: BTreeMap<(Option<i64>, usize, usize), i64>,
    /// GPU time per kernel class per sample (Σ durations), keyed by class word.
    pub classes: BTreeMap<&'static str, Vec<Nanos>>,
    /// Per kernel, by normalised name.
    pub kernels: BTreeMap<String, Totals>,
    /// Per CPU op, by name and shapes (every CPU op, nested ones too, by inclusive
    /// duration).
    pub ops: BTreeMap<OpKey, Totals>,
    /// Whether any CPU op recorded its shapes.
    pub ops_have_shapes: bool,
    /// Per Python line (`file.py(123): function`, the profiler's `with_stack` frames), by
    /// inclusive duration.
    pub python_lines: BTreeMap<String, Totals>,
    /// The kernels (by normalised name) launched under each op, by the op and every op
    /// around it: what TraceLens lists as an op's `kernel_details`.
    pub op_kernels: BTreeMap<OpKey, BTreeMap<String, KernelUse>>,
    /// The causes the investigation ranks (`investigation::Ranked::causes`, of the
    /// capture it draws: the first, or a rank directory's straggler or slowest rank), by
    /// key, with their time per steady-state step (`inferred`: the cause's time in the
    /// analysed window ÷ steady-state steps), most time first.
    pub causes: Vec<(CauseKey, Nanos)>,
    /// Each ranked cause's scenario replayed on that capture (`RankedCause::replay`: the
    /// step without it, and the replay's error).
    pub replays: BTreeMap<CauseKey, investigation::CauseReplay>,
    /// The drawn capture's analysed window ÷ its steady-state steps (`Ranked::mean_step`),
    /// else the first capture's.
    pub mean_step: Option<Nanos>,
    /// The first capture's first step (lowest number), every event in it by name (see
    /// [`crate::names_in_step`]); `None` without steps in the capture.
    pub first_step: Option<(i64, BTreeMap<String, crate::NameTotals>)>,
    /// The first capture's median steady-state step, its streams drawn; `None` without
    /// steps.
    pub median_step: Option<StepLanes>,
    /// Read from an investigate report.json, not a capture: only the step figures and
    /// the causes are known.
    pub from_report: bool,
    /// The step-time figures a report states (`read`), in place of `step_time`'s samples.
    pub step_stat: Option<crate::SampleStat>,
}

impl Side {
    /// Number of samples: steady-state steps summed over captures.
    pub fn samples(&self) -> usize {
        self.step_time.len()
    }

    /// A side of `input` with nothing in it yet.
    pub fn empty(input: &Path) -> Side {
        Side {
            label: input.display().to_string(),
            format: String::new(),
            gpu_models: Vec::new(),
            gpu_vendors: Vec::new(),
            devices: 0,
            captures: 0,
            step_origin: None,
            has_steps: false,
            diagnosis: None,
            steady_steps: 0,
            step_time: Vec::new(),
            budgets: BTreeMap::new(),
            stream_ordinals: BTreeMap::new(),
            classes: BTreeMap::new(),
            kernels: BTreeMap::new(),
            ops: BTreeMap::new(),
            ops_have_shapes: false,
            python_lines: BTreeMap::new(),
            op_kernels: BTreeMap::new(),
            causes: Vec::new(),
            replays: BTreeMap::new(),
            mean_step: None,
            first_step: None,
            median_step: None,
            from_report: false,
            step_stat: None,
        }
    }

    /// The step-time figures: the stated ones of a report, else those of the samples.
    pub fn step_stat(&self) -> crate::SampleStat {
        self.step_stat
            .unwrap_or_else(|| crate::SampleStat::of(&self.step_time))
    }
}

/// The parts of a stream's budget, in the order reports print them.
pub const BUDGET_PARTS: [&str; 4] = ["compute", "collective", "memcpy", "idle"];

/// The side of a capture: investigated (`investigation::investigate_each`, the value
/// investigate computes, so its step figures and ranked causes are the ones its
/// report.json states), and each capture, while it is in memory, reduced to the per-step
/// tables the value does not hold (budgets per stream, kernel classes, kernels, ops,
/// Python lines) and dropped: a rank directory is read one rank at a time.
pub fn investigate(input: &Path) -> Result<Side, crate::Error> {
    let options = investigation::Options {
        skip_rows: true,
        ..Default::default()
    };
    let (run, parts) =
        investigation::investigate_each(input, &options, &tables).map_err(|source| {
            crate::Error::Investigation {
                side: "",
                source: Box::new(source),
            }
        })?;
    let inv = run.investigation;
    // compare needs every capture of a side: one not read is an error, not a smaller side.
    if let Some(first) = inv.unread.first() {
        return Err(crate::Error::Unread {
            side: "",
            message: first.clone(),
        });
    }
    let mut side =
        crate::report_side::side_of(input, &inv).map_err(|message| crate::Error::Report {
            side: "",
            path: input.to_path_buf(),
            message,
        })?;
    side.format.clone_from(&inv.format);
    merge_tables(&mut side, parts);
    Ok(side)
}

/// One capture's tables, with its samples numbered from 0 (its own steady-state steps)
/// and rows keyed by its rank; [`merge_tables`] puts them after the other captures'.
fn tables(l: &analysis::Loaded, r: &CaptureAnalysis) -> Side {
    let mut part = Side::empty(&l.path);
    let steady = steady_indices(r);
    add_capture(&mut part, r, r.rank, &l.capture, &steady, 0, steady.len());
    part.first_step = l
        .capture
        .steps()
        .iter()
        .map(|s| s.number)
        .min()
        .and_then(|step| Some((step, crate::names_in_step(&l.capture, step)?)));
    part.median_step = median_step_lanes(r, &l.capture);
    part
}

/// Adds `series` (one value per sample of a capture) at `offset` into the side's series
/// of `total` samples under `key`.
fn add_series<K: Ord>(
    into: &mut BTreeMap<K, Vec<Nanos>>,
    key: K,
    series: &[Nanos],
    offset: usize,
    total: usize,
) {
    let row = into.entry(key).or_insert_with(|| vec![Nanos::ZERO; total]);
    for (slot, v) in row[offset..].iter_mut().zip(series) {
        *slot += *v;
    }
}

/// Adds one capture's per-name totals at `offset`.
fn add_totals<K: Ord>(
    into: &mut BTreeMap<K, Totals>,
    from: BTreeMap<K, Totals>,
    offset: usize,
    total: usize,
) {
    for (key, t) in from {
        let row = into.entry(key).or_insert_with(|| Totals {
            class: t.class,
            time: vec![Nanos::ZERO; total],
            count: 0,
        });
        for (slot, v) in row.time[offset..].iter_mut().zip(&t.time) {
            *slot += *v;
        }
        row.count += t.count;
    }
}

/// The captures' tables, in capture order, as one side's: capture k's samples follow
/// capture k-1's. With one capture, its rank is no part of a row's key (rank 3 before,
/// rank 1 after is the same row). The first capture gives the first-step names and the
/// median step's lanes.
fn merge_tables(side: &mut Side, parts: Vec<Side>) {
    let total: usize = parts.iter().map(Side::samples).sum();
    let single = parts.len() == 1;
    let rank = |r: Option<i64>| r.filter(|_| !single);
    let mut offset = 0;
    for (k, part) in parts.into_iter().enumerate() {
        let n = part.samples();
        for ((r, device, place, what), series) in part.budgets {
            add_series(
                &mut side.budgets,
                (rank(r), device, place, what),
                &series,
                offset,
                total,
            );
        }
        for ((r, device, place), ordinal) in part.stream_ordinals {
            side.stream_ordinals
                .insert((rank(r), device, place), ordinal);
        }
        for (class, series) in part.classes {
            add_series(&mut side.classes, class, &series, offset, total);
        }
        add_totals(&mut side.kernels, part.kernels, offset, total);
        add_totals(&mut side.ops, part.ops, offset, total);
        add_totals(&mut side.python_lines, part.python_lines, offset, total);
        side.ops_have_shapes |= part.ops_have_shapes;
        for (op, kernels) in part.op_kernels {
            let into = side.op_kernels.entry(op).or_default();
            for (kernel, used) in kernels {
                let u = into.entry(kernel).or_default();
                u.count += used.count;
                u.time += used.time;
            }
        }
        if k == 0 {
            side.first_step = part.first_step;
            side.median_step = part.median_step;
        }
        offset += n;
    }
}

/// The median steady-state step of `r` (the median of all steps when every one is
/// warm-up), its GPU streams on the step's axis.
fn median_step_lanes(r: &CaptureAnalysis, capture: &Capture) -> Option<StepLanes> {
    let steps = &r.steps.steps;
    let mut steady = steady_indices(r);
    steady.sort_by_key(|&i| (steps[i].duration(), i));
    let step = &steps[*steady.get(steady.len().checked_sub(1)? / 2)?];
    let w = step.range;
    let lanes = capture
        .streams()
        .iter()
        .filter_map(|st| {
            let slices: Vec<_> = capture
                .stream_activities(st.id)
                .iter()
                .filter(|a| a.end() > w.start && a.start < w.end)
                .map(|a| {
                    (
                        a.start.max(w.start) - w.start,
                        a.end().min(w.end) - w.start,
                        a.class.word(),
                        capture.name(a.name).to_owned(),
                    )
                })
                .collect();
            (!slices.is_empty()).then(|| StreamLane {
                gpu: capture.device(st.device).ordinal,
                stream: st.ordinal,
                critical: r.critical_stream().is_some_and(|c| c.stream_id == st.id),
                slices,
            })
        })
        .collect();
    Some(StepLanes {
        number: step.number,
        duration: step.duration(),
        lanes,
    })
}

/// A stream's time, split at every start and end of an activity into segments each
/// counted to the first busy kind, in [`analysis::BusyKind::ALL`]'s precedence order,
/// with an activity open there (as [`analysis::budget_of`] counts a window), and the
/// running total of each kind: a window's budget is two lookups.
struct KindTimeline {
    /// Segment starts, ascending; segment `i` is `bounds[i]..bounds[i + 1]` (the last
    /// one, after every activity, is idle).
    bounds: Vec<i64>,
    /// The kind of each segment (0..4 in precedence order; 4 idle).
    kinds: Vec<usize>,
    /// Time of each kind before `bounds[i]`.
    before: Vec<[i64; 4]>,
}

impl KindTimeline {
    fn new(acts: &[trace_model::GpuActivity]) -> KindTimeline {
        let mut events: Vec<(i64, i32, usize)> = Vec::with_capacity(acts.len() * 2);
        for a in acts {
            if a.dur > Nanos::ZERO {
                let k = analysis::BusyKind::of(a.class) as usize;
                events.push((a.start.0, 1, k));
                events.push((a.end().0, -1, k));
            }
        }
        events.sort_unstable();
        let mut open = [0i32; 4];
        let (mut bounds, mut kinds, mut before) = (Vec::new(), Vec::new(), Vec::new());
        let mut total = [0i64; 4];
        let mut i = 0;
        while i < events.len() {
            let t = events[i].0;
            while i < events.len() && events[i].0 == t {
                open[events[i].2] += events[i].1;
                i += 1;
            }
            if let (Some(&last), Some(&kind)) = (bounds.last(), kinds.last())
                && kind < 4
            {
                total[kind] += t - last;
            }
            bounds.push(t);
            kinds.push(open.iter().position(|&n| n > 0).unwrap_or(4));
            before.push(total);
        }
        KindTimeline {
            bounds,
            kinds,
            before,
        }
    }

    /// Time of each kind before `t`.
    fn until(&self, t: i64) -> [i64; 4] {
        let i = self.bounds.partition_point(|&b| b <= t);
        let Some(at) = i.checked_sub(1) else {
            return [0; 4];
        };
        let mut out = self.before[at];
        if self.kinds[at] < 4 {
            out[self.kinds[at]] += t - self.bounds[at];
        }
        out
    }

    /// Compute, collective, memcpy, memset and idle time of `w`, as
    /// [`analysis::budget_of`] gives them.
    fn budget(&self, w: Window) -> [Nanos; 5] {
        if w.end <= w.start {
            return [Nanos::ZERO; 5];
        }
        let (a, b) = (self.until(w.start.0), self.until(w.end.0));
        let part = |k: usize| Nanos(b[k] - a[k]);
        let busy = (0..4).map(|k| b[k] - a[k]).sum::<i64>();
        [
            part(0),
            part(1),
            part(2),
            part(3),
            (w.span() - Nanos(busy)).max(Nanos::ZERO),
        ]
    }
}

/// Indices into the report's steps of its steady-state steps.
fn steady_indices(r: &CaptureAnalysis) -> Vec<usize> {
    (0..r.steps.steps.len())
        .filter(|i| r.warm_up.all || r.warm_up.steps.binary_search(i).is_err())
        .collect()
}

fn add_capture(
    side: &mut Side,
    report: &CaptureAnalysis,
    rank: Option<i64>,
    capture: &Capture,
    steady: &[usize],
    offset: usize,
    total: usize,
) {
    let steps = &report.steps.steps;
    // Sample of each step index (None for warm-up steps).
    let mut sample_of = vec![None; steps.len()];
    for (k, &i) in steady.iter().enumerate() {
        sample_of[i] = Some(offset + k);
        side.step_time.push(steps[i].duration());
    }
    // Budgets: each stream over each steady step's range. Streams are keyed by their
    // place on their GPU, busiest first, not by their number: a change of streams (or of
    // the library that makes them) renumbers them, while the main compute stream stays the
    // busiest.
    let positions = gpu_positions(capture);
    let mut per_stream: Vec<(usize, Nanos, i64, Vec<[Nanos; 4]>)> = Vec::new();
    for stream in capture.streams() {
        let acts = capture.stream_activities(stream.id);
        if acts.is_empty() {
            continue;
        }
        // One sweep of the stream, then each step's budget from prefix sums: nested or
        // overlapping steps cost a binary search each, not a pass over their activities.
        let timeline = KindTimeline::new(acts);
        let mut parts = Vec::with_capacity(steady.len());
        let mut busy = Nanos::ZERO;
        for &i in steady {
            let b = timeline.budget(steps[i].range);
            busy += b[0] + b[1] + b[2] + b[3];
            parts.push([b[0], b[1], b[2] + b[3], b[4]]);
        }
        per_stream.push((
            positions[stream.device.index()],
            busy,
            stream.ordinal,
            parts,
        ));
    }
    per_stream.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    let mut place = 0;
    for (idx, (device, _, ordinal, parts)) in per_stream.iter().enumerate() {
        place = if idx > 0 && per_stream[idx - 1].0 == *device {
            place + 1
        } else {
            0
        };
        side.stream_ordinals
            .insert((rank, *device, place), *ordinal);
        for (k, values) in parts.iter().enumerate() {
            for (part, value) in BUDGET_PARTS.iter().zip(values) {
                side.budgets
                    .entry((rank, *device, place, part))
                    .or_insert_with(|| vec![Nanos::ZERO; total])[offset + k] += *value;
            }
        }
    }
    // Kernel classes and kernels, by the step the analysis placed each activity in; each
    // kernel also under the op that launched it and every op around that one.
    let events = capture.host_events();
    let enclosing = capture.enclosing_cpu_ops();
    let mut op_keys: Vec<Option<OpKey>> = vec![None; events.len()];
    for (a, s) in capture.activities().iter().zip(&report.steps.activity_step) {
        let Some(sample) = s.and_then(|s| sample_of[s as usize]) else {
            continue;
        };
        side.classes
            .entry(a.class.word())
            .or_insert_with(|| vec![Nanos::ZERO; total])[sample] += a.dur;
        if a.kind != ActivityKind::Kernel {
            continue;
        }
        let kernel = normalise_kernel_name(capture.name(a.name));
        let mut op = a
            .launch()
            .and_then(|l| capture.host_event(l).parent_op())
            .map(|id| id.index());
        while let Some(i) = op {
            let used = side
                .op_kernels
                .entry(
                    op_keys[i]
                        .get_or_insert_with(|| op_key(capture, &events[i]))
                        .clone(),
                )
                .or_default()
                .entry(kernel.clone())
                .or_default();
            used.count += 1;
            used.time += a.dur;
            op = enclosing[i];
        }
        let t = side.kernels.entry(kernel).or_insert_with(|| Totals {
            class: a.class.word(),
            time: vec![Nanos::ZERO; total],
            count: 0,
        });
        t.time[sample] += a.dur;
        t.count += 1;
    }
    // CPU ops and Python lines, by the steady step whose range holds their start.
    let ranges: Vec<(Window, usize)> = steady
        .iter()
        .enumerate()
        .map(|(k, &i)| (steps[i].range, offset + k))
        .collect();
    let mut sorted = ranges.clone();
    sorted.sort_by_key(|(w, _)| w.start);
    for e in capture.host_events() {
        if !matches!(e.kind, HostKind::CpuOp | HostKind::PythonFrame) {
            continue;
        }
        let at = sorted.partition_point(|(w, _)| w.start <= e.start);
        let Some(&(w, sample)) = at.checked_sub(1).map(|i| &sorted[i]) else {
            continue;
        };
        if e.start >= w.end {
            continue;
        }
        let t = if e.kind == HostKind::PythonFrame {
            side.python_lines
                .entry(capture.name(e.name).to_owned())
                .or_insert_with(|| Totals {
                    class: "",
                    time: vec![Nanos::ZERO; total],
                    count: 0,
                })
        } else {
            let key = op_key(capture, e);
            side.ops_have_shapes |= key.dims.is_some();
            side.ops.entry(key).or_insert_with(|| Totals {
                class: "",
                time: vec![Nanos::ZERO; total],
                count: 0,
            })
        };
        t.time[sample] += e.dur;
        t.count += 1;
    }
}

/// The op's name and recorded shapes.
fn op_key(capture: &Capture, event: &HostEvent) -> OpKey {
    OpKey {
        name: capture.name(event.name).to_owned(),
        dims: capture.op_shapes(event).map(|s| {
            let text = capture.name(s.dims);
            text.chars().filter(|c| !c.is_whitespace()).collect()
        }),
    }
}

/// Each device's position among the devices with activity, in ordinal order (devices
/// without activity get the position after the last).
fn gpu_positions(capture: &Capture) -> Vec<usize> {
    let mut active = vec![false; capture.devices().len()];
    for s in capture.streams() {
        if !capture.stream_activities(s.id).is_empty() {
            active[s.device.index()] = true;
        }
    }
    let mut order: Vec<usize> = (0..active.len()).filter(|&i| active[i]).collect();
    order.sort_by_key(|&i| (capture.devices()[i].ordinal, i));
    let mut positions = vec![order.len(); active.len()];
    for (p, &i) in order.iter().enumerate() {
        positions[i] = p;
    }
    positions
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace_model::{ActivityKind, GpuActivity, Interner, KernelClass, StreamId};

    /// The prefix-sum budget equals `analysis::budget_of` on random activities of every
    /// kind (overlapping, nested, zero-length) and random windows, nested ones included.
    #[test]
    fn kind_timeline_budgets_equal_budget_of() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let classes = [
            KernelClass::Gemm,
            KernelClass::Collective(trace_model::CollectiveKind::AllReduce),
            KernelClass::Memcpy(trace_model::MemcpyDirection::HostToDevice),
            KernelClass::Memset,
        ];
        let name = Interner::new().intern("k");
        for round in 0..200 {
            let mut acts: Vec<GpuActivity> = (0..1 + next(40))
                .map(|i| {
                    GpuActivity::new(
                        StreamId::new(0),
                        Nanos(next(1000) as i64),
                        Nanos(if next(8) == 0 { 0 } else { next(300) as i64 }),
                        name,
                        ActivityKind::Kernel,
                        classes[next(4) as usize],
                        i,
                    )
                })
                .collect();
            acts.sort_by_key(|a| a.start);
            let timeline = KindTimeline::new(&acts);
            for _ in 0..20 {
                let start = next(1400) as i64 - 100;
                let w = Window {
                    start: Nanos(start),
                    end: Nanos(start + next(900) as i64),
                };
                let b = analysis::budget_of(acts.iter(), w);
                let want = [b.compute, b.collective, b.memcpy, b.memset, b.idle];
                assert_eq!(timeline.budget(w), want, "round {round}, {w:?}");
            }
        }
    }
}
