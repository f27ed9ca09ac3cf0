//! The [`Investigation`] value: what the investigation decided, typed, with no text
//! formatted. `report` renders it; `report.json` is its serde form (with [`SCHEMA`]).
//!
//! Numbers are kept as numbers (`Nanos`, shares as fractions 0..1 unless a field says
//! percent); what labels them (measured, read, inferred and the assumptions) is the
//! renderer's, from the field's meaning documented here.

use serde::{Deserialize, Serialize};
use trace_model::Nanos;

pub use crate::knob::Knob;
pub use analysis::{CrossRank, Spread as StepSpread, StepHeatMap};

mod swimlanes;
pub use swimlanes::{Chart, Lane, LaneKind, LastActivity, Slice, Swimlanes};

/// The schema version of the serialised [`Investigation`] (`report.json`). It changes when
/// a field changes meaning or is removed; new optional fields keep it. Schema 1 was the
/// rendered document; 2 is this value; 3 makes every trust entry a `trace_model::TrustItem`
/// ([`TrustNote`]); 4 types why a cause cannot be replayed; 5 keeps typed what 4 held in
/// words (why the capture cannot tell what bounds the step, ...).
pub const SCHEMA: u32 = 6;

/// The whole investigation of one input (a capture, a rank directory, a JAX capture
/// directory, a multi-process export).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Investigation {
    /// [`SCHEMA`] when written by this version.
    pub schema: u32,
    /// The input path as given.
    pub input: String,
    /// Its file name.
    pub input_name: String,
    /// The first capture's format, in words.
    pub format: String,
    /// One per capture (rank), in the analysis' order.
    pub captures: Vec<CaptureResult>,
    /// What the findings say of the first capture.
    pub first: FirstCapture,
    /// The rank that finished a step last, over a rank directory.
    pub last_finisher: Option<LastFinisher>,
    /// Across ranks (two or more ranks), computed once.
    pub across_ranks: Option<AcrossRanks>,
    /// Step 2: every reconciliation check, in order.
    pub reconciliation: Vec<Check>,
    /// Step 3.
    pub swimlanes: Swimlanes,
    /// Step 4: where the GPU time goes.
    pub ops: Ops,
    /// Step 5: `None` where no single capture with shapes was read, `Err` when it failed.
    pub roofline: Option<Result<RooflineView, String>>,
    /// Step 6.
    pub advice: Advice,
    /// Step 7: the trust list, in order.
    pub trust: Vec<TrustNote>,
    /// What a new capture would answer, in order.
    pub new_capture: Vec<Ask>,
    /// For a rank directory of two ranks or more: the rank steps 3 to 6 describe, and why.
    pub drawn: Option<Drawn>,
    /// The step drawn was chosen (`--step`), not the median.
    pub step_chosen: bool,
    /// The files of a capture directory that could not be read, each as its error.
    pub unread: Vec<String>,
    /// What to know about a capture directory's set of ranks.
    pub notes: Vec<RankNote>,
}

/// One capture (rank) of the input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaptureResult {
    /// Its rank, else the file name of its label.
    pub who: Who,
    /// How per-capture op and bucket tables name it: its rank, else its path's file name.
    pub file_who: Who,
    /// The rank, when known.
    pub rank: Option<i64>,
    /// The verdict and its shares (of the critical stream's window).
    pub verdict: VerdictRow,
    /// Median, shortest and longest step (every step, warm-up included).
    pub step_spread: Option<StepSpread>,
    /// What found the steps.
    pub steps_origin: StepsOrigin,
    /// Steady-state step durations (warm-up left out), in step order (`measured`).
    pub steady_steps: Vec<Nanos>,
    /// The analysed window's span over its steady-state steps.
    pub window_mean_step: Option<Nanos>,
    /// GPU models, one per device, sorted.
    pub gpu_models: Vec<String>,
    /// GPU vendors, one per device whose vendor is known, sorted.
    pub gpu_vendors: Vec<String>,
    /// Devices with GPU activity.
    pub devices_with_activity: usize,
    /// Per stream, then per device (`stream: None`), over the analysed window.
    pub budgets: Vec<BudgetRow>,
    /// GPU time by bucket, largest first.
    pub buckets: Vec<Bucket>,
    /// The top 20 CPU ops by the GPU time they launched.
    pub top_ops: Vec<LaunchingOp>,
}

/// What found a capture's steps, and, where the capture keeps steps per GPU
/// (TensorFlow's `Steps` lines), whose steps the figures are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepsOrigin {
    /// The evidence that gave the steps.
    pub origin: analysis::StepOrigin,
    /// Per GPU, where the capture keeps steps per GPU; `None` otherwise.
    pub per_gpu: Option<PerGpuSteps>,
}

/// No step evidence: the whole capture is one step.
impl Default for StepsOrigin {
    fn default() -> StepsOrigin {
        StepsOrigin {
            origin: analysis::StepOrigin::WholeCapture,
            per_gpu: None,
        }
    }
}

impl StepsOrigin {
    /// Whether steps were found at all (not the whole-capture fallback).
    pub fn has_steps(&self) -> bool {
        self.origin != analysis::StepOrigin::WholeCapture
    }
}

/// The steps of a capture that keeps them per GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerGpuSteps {
    /// The GPU whose own steps the figures are (not their union over the GPUs).
    pub figures: i64,
    /// Every GPU that keeps its own steps, by ordinal.
    pub gpus: Vec<GpuSteps>,
}

/// One GPU's own steps (`measured`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GpuSteps {
    /// The GPU's ordinal.
    pub gpu: i64,
    /// How many steps it keeps.
    pub steps: usize,
    /// Their lower median duration.
    pub median: Nanos,
}

/// The verdict of one capture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerdictRow {
    /// The launch-overhead verdict the diagnosis starts from (`analysis::Bound`,
    /// `inferred`); the verdict shown is [`VerdictRow::diagnosis`].
    pub bound: analysis::Bound,
    /// What bounds the step (`analysis::Diagnosis`, `inferred`): its code is the one
    /// verdict word investigate, skip-stats and compare show; its `describe` words it.
    pub diagnosis: analysis::Diagnosis,
    /// The critical stream: (GPU ordinal, stream number).
    pub critical: Option<(i64, i64)>,
    /// Busy share of the critical stream (collectives left out).
    pub busy: f64,
    /// Collective share.
    pub collective: f64,
    /// Idle share.
    pub idle: f64,
    /// Of idle: the host had not launched yet.
    pub host_wait: Option<f64>,
    /// Of idle: waiting on another stream or event.
    pub stream_wait: Option<f64>,
    /// Of idle: the host was in a synchronising call.
    pub sync_wait: Option<f64>,
    /// Of idle: no evidence.
    pub unknown_wait: Option<f64>,
    /// Wait over kernel time.
    pub queue_ratio: Option<f64>,
}

/// One budget row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetRow {
    /// GPU ordinal.
    pub device: i64,
    /// Stream number; `None` for the device's row (exposed collective and memcpy time).
    pub stream: Option<i64>,
    /// The window's span.
    pub span: Nanos,
    /// Compute time.
    pub compute: Nanos,
    /// Collective time.
    pub collective: Nanos,
    /// Memcpy time.
    pub memcpy: Nanos,
    /// Memset time.
    pub memset: Nanos,
    /// Idle time.
    pub idle: Nanos,
    /// Idle over span.
    pub idle_share: f64,
}

/// GPU time of one bucket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// The bucket.
    pub bucket: String,
    /// Its GPU time.
    pub time: Nanos,
    /// Percent of GPU time.
    pub percent: f64,
    /// Activities.
    pub activities: u64,
}

/// GPU time launched by one CPU op (or one activity name without an op).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchingOp {
    /// The op's (or the activity's) name.
    pub name: String,
    /// False when no launching op was found.
    pub is_cpu_op: bool,
    /// The bucket most of its time went to.
    pub bucket: String,
    /// Its time went to more than one bucket.
    pub mixed: bool,
    /// GPU time.
    pub time: Nanos,
    /// Percent of GPU time.
    pub percent: f64,
    /// Activities.
    pub activities: u64,
    /// Of `time`, layout transposes.
    pub layout: Nanos,
}

/// What the findings say of the first capture.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FirstCapture {
    /// The largest cause of the critical stream's idle time.
    pub top_gap: Option<TopGap>,
    /// Steps found.
    pub steps: usize,
    /// What found them.
    pub steps_origin: StepsOrigin,
    /// The kinds of forward the engine's markers name, consecutive repeats removed.
    pub forward_kinds: Vec<String>,
    /// Per kind of forward: steps and their duration spread.
    pub forward_spreads: Vec<(String, usize, StepSpread)>,
    /// Warm-up, when some step or call is warm-up.
    pub warm_up: Option<WarmUp>,
    /// Host-only time of the steps, when there is some.
    pub host_only: Option<HostOnly>,
    /// What bounds the step (`analysis::diagnose`, `inferred`), the framework and the step
    /// evidence weighed; absent in reports written before it.
    #[serde(default)]
    pub diagnosis: Option<Diagnosed>,
    /// The steady steps' host and GPU sides (`measured`); absent with no steady step.
    #[serde(default)]
    pub step_sides: Option<StepSidesView>,
}

/// The diagnosis of the first capture, with the framework and step evidence weighed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnosed {
    /// What bounds the step (its `code`: `host-bound:allocator`,
    /// `cannot-tell:graph-capture`, ...; its `describe` words it, for "cannot tell" with
    /// the capture that would decide it).
    pub diagnosis: analysis::Diagnosis,
    /// The framework found (its code).
    pub framework: String,
    /// The names that decided the framework.
    pub framework_evidence: String,
    /// Each kind of step evidence tried and what became of it (absent and untried kinds
    /// left out), in the order they were tried.
    pub step_evidence: Vec<analysis::StepCandidate>,
}

/// The host and GPU sides of the steady steps (medians and spreads, `measured`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepSidesView {
    /// Start to start of consecutive steps; `None` with one step.
    pub period: Option<StepSpread>,
    /// The steps' own (host) ranges.
    pub host: StepSpread,
    /// First start to last end of the GPU work each step launched.
    pub gpu: Option<StepSpread>,
    /// End of the GPU work minus end of the step's range.
    pub lag: Option<StepSpread>,
    /// The steps are timed by their GPU span (the host runs ahead), else by the host range.
    pub timed_by_gpu: bool,
}

/// The largest cause of idle time and its evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopGap {
    /// The cause (the renderers word it, `GapCause::label`).
    pub cause: analysis::GapCause,
    /// Its share of the idle time.
    pub share: f64,
    /// The first evidence that decided it.
    pub evidence: Option<String>,
}

/// Warm-up steps and calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WarmUp {
    /// Warm-up steps.
    pub steps: usize,
    /// Time of the warm-up steps.
    pub step_time: Nanos,
    /// Warm-up calls.
    pub event_count: usize,
    /// The longest calls (three at most): name and duration.
    pub longest: Vec<(String, Nanos)>,
    /// Every step is warm-up.
    pub all: bool,
}

/// Host-only time of the steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostOnly {
    /// Share of the steps' wall time.
    pub share: f64,
    /// Before the first GPU activity.
    pub before_gpu: Nanos,
    /// After the last.
    pub after_gpu: Nanos,
    /// Steps.
    pub steps: usize,
    /// What the host runs then (three at most): name and self time.
    pub top: Vec<(String, Nanos)>,
}

/// The rank that finished a step last.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LastFinisher {
    /// The rank.
    pub rank: Option<i64>,
    /// The step.
    pub step: i64,
    /// After the earliest rank.
    pub behind_earliest: Nanos,
    /// Clocks aligned on `baseTimeNanoseconds`.
    pub aligned_on_base_time: bool,
}

impl LastFinisher {
    /// Where `behind_earliest` comes from, as the analysis labels it: measured on aligned
    /// clocks, inferred on raw timestamps (`analysis::LastFinisher::provenance`).
    pub fn provenance(&self) -> trace_model::Provenance {
        analysis::LastFinisher {
            step: self.step,
            rank: self.rank,
            behind_earliest: self.behind_earliest,
            aligned_on_base_time: self.aligned_on_base_time,
        }
        .provenance()
    }
}

/// Across ranks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcrossRanks {
    /// Step time, clock offsets, stragglers.
    pub cross: CrossRank,
    /// Rank × step work time.
    pub heat_map: Option<StepHeatMap>,
}

/// One reconciliation check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// The capture (a rank, a file name, or all ranks).
    pub who: Who,
    /// What is checked, with its figures.
    pub kind: CheckKind,
    /// Whether it holds (a failed check is in the trust list).
    pub holds: bool,
}

/// What a check compares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "check", rename_all = "snake_case")]
pub enum CheckKind {
    /// Every GPU activity has a host launch.
    Launch {
        /// Activities without one.
        without: usize,
        /// Activities.
        activities: usize,
    },
    /// Kernels per step are constant.
    KernelsPerStep {
        /// Steps.
        steps: usize,
        /// Fewest kernels in a step.
        fewest: usize,
        /// Most.
        most: usize,
    },
    /// Each budget part equals its interval-union difference, per stream.
    Budget {
        /// Streams.
        streams: usize,
        /// Streams whose check failed.
        failed: usize,
    },
    /// Every GPU runs the same number of kernels.
    Devices {
        /// (GPU ordinal, activities).
        kernels: Vec<(i64, usize)>,
    },
    /// An XSpace and its sibling `trace.json.gz` hold the same activities per device.
    XplaneVsJson {
        /// (GPU ordinal, activities) in the XSpace.
        xplane: Vec<(i64, usize)>,
        /// The JSON file's path.
        json: String,
        /// Its (GPU ordinal, activities), or why it could not be read.
        json_kernels: Result<Vec<(i64, usize)>, String>,
    },
    /// Every rank runs the same number of kernels.
    Ranks {
        /// (rank, kernels).
        kernels: Vec<(Who, usize)>,
    },
}

impl CheckKind {
    /// The check's stable code, as its trust item's (`check-launch`).
    pub fn code(&self) -> &'static str {
        match self {
            CheckKind::Launch { .. } => "check-launch",
            CheckKind::KernelsPerStep { .. } => "check-steps",
            CheckKind::Budget { .. } => "check-budget",
            CheckKind::Devices { .. } => "check-devices",
            CheckKind::XplaneVsJson { .. } => "check-xplane-vs-json",
            CheckKind::Ranks { .. } => "check-ranks",
        }
    }

    /// What the check asserts, in words (`launch: every GPU activity has a host launch`).
    pub fn name(&self) -> &'static str {
        match self {
            CheckKind::Launch { .. } => "launch: every GPU activity has a host launch",
            CheckKind::KernelsPerStep { .. } => "steps: kernels per step constant",
            CheckKind::Budget { .. } => {
                "budget: each part = its interval-union difference, per stream"
            }
            CheckKind::Devices { .. } => "devices: all GPUs run the same number of kernels",
            CheckKind::XplaneVsJson { .. } => {
                "xplane vs json: GPU activities per device equal in the .xplane.pb and its trace.json.gz"
            }
            CheckKind::Ranks { .. } => "ranks: every rank runs the same number of kernels",
        }
    }

    /// The check as a trust item (it failed): counted where one number says how far it
    /// failed (activities without a launch, streams whose budget failed), with that
    /// number's share; else a note.
    pub fn trust_item(&self) -> trace_model::TrustItem {
        let counted = |n: usize, of: usize, unit: &'static str| {
            trace_model::TrustItem {
                unit: Some(unit.into()),
                ..trace_model::TrustItem::new(self.code(), self.name(), n as u64)
            }
            .with_share((of > 0).then(|| n as f64 / of as f64))
        };
        match self {
            CheckKind::Launch {
                without,
                activities,
            } => counted(*without, *activities, "activities"),
            CheckKind::Budget { streams, failed } => counted(*failed, *streams, "streams"),
            _ => trace_model::TrustItem::note(self.code(), self.name()),
        }
    }
}

/// Which capture of the input something is of: its rank, else its file's name
/// (serialised `{"rank": 1}`, `{"file": "trace.json"}`, `"all_ranks"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Who {
    /// The capture's rank.
    Rank(i64),
    /// The capture's file name, where it names no rank.
    File(String),
    /// Every rank of a rank directory (a check across ranks).
    AllRanks,
}

/// Step 4 beside the per-capture buckets and ops.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Ops {
    /// Ops of the first capture whose layout transposes take a large share of GPU time.
    pub layout: Vec<LayoutHeavy>,
    /// The first capture's largest bucket, its percent, and the percent of matmul,
    /// convolution and attention together.
    pub top_bucket: Option<(String, f64, f64)>,
    /// Kernel → op → Python line; `None` where not attributed (a JAX trace JSON).
    pub attribution: Option<Result<AttributionView, String>>,
}

/// An op whose layout transposes take at least [`crate::LARGE_LAYOUT_SHARE`] of all GPU time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayoutHeavy {
    /// The op.
    pub op: String,
    /// Its layout transposes' time.
    pub layout: Nanos,
    /// The op's GPU time.
    pub op_time: Nanos,
    /// All GPU time.
    pub gpu: Nanos,
    /// A JAX op (else PyTorch).
    pub jax: bool,
}

/// Attribution, as step 4 shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttributionView {
    /// The capture attributed.
    pub path: String,
    /// A Kineto trace (CPU ops), else HLO instructions.
    pub kineto: bool,
    /// Kernels and GPU time per match kind.
    pub match_kinds: Vec<(String, u64, Nanos)>,
    /// All GPU time.
    pub gpu_time: Nanos,
    /// GPU time attributed to a line or op.
    pub attributed_time: Nanos,
    /// The top 15 Python lines.
    pub lines: Vec<PythonLine>,
    /// The headline line, and whether it is a library frame (no user line has GPU time).
    pub top_line: Option<(PythonLine, bool)>,
    /// JAX: the top 15 ops.
    pub hlo_ops: Vec<HloOp>,
    /// JAX: ops whose layout transposes take a large share.
    pub hlo_layout: Vec<LayoutHeavy>,
    /// What attribution could not do, as its trust items.
    pub notes: Vec<trace_model::TrustItem>,
}

/// One Python line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PythonLine {
    /// `file:line`.
    pub source_line: String,
    /// Its function.
    pub function: String,
    /// Kernels.
    pub kernels: u64,
    /// Their GPU time.
    pub gpu_time: Nanos,
    /// Percent of the attributed time.
    pub share_pct: f64,
}

/// One JAX op.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HloOp {
    /// `module(id)`.
    pub program: String,
    /// `op_name`.
    pub op_name: String,
    /// Kernels.
    pub kernels: u64,
    /// Their GPU time.
    pub gpu_time: Nanos,
    /// Of it, layout transposes.
    pub layout: Nanos,
    /// `file:line`.
    pub source_line: String,
}

/// The roofline of one capture, as step 5 and its chart show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RooflineView {
    /// The capture.
    pub capture: String,
    /// What the capture recorded of its device.
    pub device_recorded: String,
    /// The peak table's entry.
    pub device_model: Option<String>,
    /// `read`, `inferred` or `none`.
    pub device_label: String,
    /// Where the peaks come from.
    pub device_source: String,
    /// Every op, by GPU time.
    pub ops: Vec<RoofOp>,
    /// All GPU time.
    pub gpu_time: Nanos,
}

/// One op of the roofline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoofOp {
    /// Its name.
    pub name: String,
    /// JAX: its program.
    pub program_id: Option<i64>,
    /// HLO opcode or Input Dims text.
    pub detail: String,
    /// Its kind.
    pub kind: String,
    /// Its dtype (serialised as its key, `bf16`).
    pub dtype: roofline::Dtype,
    /// GPU time (`measured`).
    pub time: Nanos,
    /// FLOPs (`inferred` from shapes).
    pub flops: Option<f64>,
    /// Bytes (`inferred` from shapes).
    pub bytes: f64,
    /// FLOP per byte.
    pub intensity: Option<f64>,
    /// FLOP/s.
    pub achieved_flops_per_s: Option<f64>,
    /// `compute`, `memory`, `communication` or `unknown`.
    pub bound: String,
    /// The peak it is held against.
    pub peak_basis: String,
    /// Achieved FLOP/s over the peak.
    pub flops_share_of_peak: Option<f64>,
    /// Achieved bytes/s over the peak.
    pub bytes_share_of_peak: Option<f64>,
    /// The peak FLOP/s.
    pub peak_flops_per_s: Option<f64>,
    /// The peak bytes/s.
    pub peak_bytes_per_s: Option<f64>,
}

/// Step 6.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "ranked", rename_all = "snake_case")]
pub enum Advice {
    /// No analysed window: nothing to rank.
    NoWindow,
    /// Warm-up only: nothing is steady state.
    WarmUp,
    /// The capture cannot decide what bounds the step: nothing is ranked or estimated.
    CannotTell {
        /// Why (`analysis::CannotTell`: its code and figures; its `describe` words it and
        /// its `decide_with` names the capture that would decide it).
        reason: analysis::CannotTell,
    },
    /// The causes, most time first.
    Ranked(Ranked),
}

/// The ranked causes of the capture steps 3 to 6 describe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ranked {
    /// Steady-state steps in the window.
    pub steps: i64,
    /// The window's span.
    pub span: Nanos,
    /// Its mean step: span / steps.
    pub mean_step: Nanos,
    /// What the capture already does.
    pub in_use: Vec<InUse>,
    /// The causes, most time first.
    pub causes: Vec<RankedCause>,
}

/// A practice the capture shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InUse {
    /// Which.
    pub practice: PracticeKind,
    /// What shows it.
    pub evidence: String,
    /// Share of GPU time of its kernels (none for host-only evidence).
    pub share: Option<f64>,
}

/// The practices a capture can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PracticeKind {
    /// torch.compile / Inductor.
    Compiled,
    /// CUDA/HIP graph replay.
    GraphReplay,
    /// Activation checkpointing.
    Checkpointing,
    /// The Python tracer (`with_stack`).
    PythonTracer,
}

/// One ranked cause.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankedCause {
    /// Its stable key (`analysis::CauseKey::code`), by which compare matches it.
    pub key: String,
    /// What it is, with its evidence.
    pub what: What,
    /// Its time in the window (`measured`).
    pub time: Nanos,
    /// Its share of the window (`measured`).
    pub share: f64,
    /// Its time per steady-state step (`inferred`: time / steps).
    pub per_step: Nanos,
    /// The window's mean step minus its time per step (`inferred`, by subtraction, with
    /// [`crate::WINDOW_ASSUMPTION`]): wrong where its time was overlapped or would be
    /// replaced by the next wait; [`RankedCause::replay`] is the replayed figure.
    pub step_after: Nanos,
    /// The knobs to try (hypotheses), in order.
    pub knobs: Vec<Knob>,
    /// The mean step with the cause's what-if scenario replayed on the capture's
    /// dependency graph, beside the replay's error on the unchanged capture; or why there
    /// is none. Absent from report.json files written before replays were made.
    #[serde(default)]
    pub replay: CauseReplay,
}

/// A cause's replayed estimate, or why there is none.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum CauseReplay {
    /// Not computed (a report.json written before replays were made).
    #[default]
    NotComputed,
    /// No change of durations expresses this cause alone.
    NoScenario {
        /// Why.
        reason: NoScenarioReason,
    },
    /// The capture cannot be replayed.
    CannotReplay {
        /// Which edges are missing, or that there is no steady-state step.
        reason: replay::CannotReplay,
    },
    /// The scenario's replay.
    Replayed(Box<Replayed>),
}

/// Why a cause has no what-if scenario (serialised in snake case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoScenarioReason {
    /// The compute class a compute-bound verdict names: its knobs change how fast its
    /// kernels run, which only a new capture measures.
    ComputeClass,
    /// No change of durations expresses the cause alone (a stream or event wait, a
    /// synchronising call, eager attention).
    NoDurationChange,
}

/// One cause's scenario replayed over the steady-state steps (every figure but
/// `measured_step` is `inferred`, with `replay::ASSUMPTIONS`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replayed {
    /// The scenario's stable key (`replay::WhatIf::key`, e.g. `host-gaps=0`).
    pub scenario: String,
    /// How many events the scenario changed.
    pub events_changed: usize,
    /// The steady-state steps' wall (from the first step's start to the last end of any
    /// step's work) over their count, as measured (`measured`; the replay's step span:
    /// from the step's start to the last end of its work, so it can differ from the
    /// window's mean step).
    pub measured_step: Nanos,
    /// The same on the replay of the unchanged capture.
    pub replayed_step: Nanos,
    /// The same with the scenario's durations: the step without the cause.
    pub step_after: Nanos,
    /// `step_after - replayed_step` as a fraction of `replayed_step` (`-0.2`: 20 %
    /// shorter): the change, against the unchanged replay so the replay's own error
    /// cancels.
    pub change: f64,
    /// The unchanged replay's median absolute step error against the measurement.
    pub replay_error: Option<f64>,
    /// The same with every GPU edge at the capture's typical delay instead of its
    /// measured one: the error of the graph's structure alone, which a change that moves
    /// work off its measured delays is exposed to (`replay_error` is 0 wherever every
    /// delay that decided a start was measured). Absent in report.json files written
    /// before it.
    #[serde(default)]
    pub typical_replay_error: Option<f64>,
    /// The lane with most of the median step's critical path before the change
    /// (serialised in words: `GPU 0 stream 7`, `rank 1 host thread 1234`).
    pub critical_lane_before: Option<replay::LaneName>,
    /// And after it.
    pub critical_lane_after: Option<replay::LaneName>,
    /// A rank directory's ranks replayed together: which, and what was matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<crate::joint::RanksReplayed>,
    /// A rank directory's drawn rank replayed alone, not with the other ranks: why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alone: Option<Box<crate::joint::ReplayedAlone>>,
}

/// What a cause is, with the evidence that decided it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum What {
    /// The GPU waits for the host to issue work.
    HostNotLaunched {
        /// Evidence (two at most).
        evidence: Vec<String>,
    },
    /// The GPU waits for the host, by what the launching thread was doing
    /// (`analysis::HostCause`).
    HostCause {
        /// The sub-cause's code (`allocator`, `data-loading`, ...).
        code: String,
        /// Its label.
        label: String,
        /// The host events that explain most of it, with their time (three at most).
        evidence: Vec<(String, Nanos)>,
    },
    /// Work waited on another stream or event.
    StreamOrEvent {
        /// Evidence (two at most).
        evidence: Vec<String>,
    },
    /// The host is blocked in a synchronising call.
    SyncCall {
        /// Evidence (two at most).
        evidence: Vec<String>,
    },
    /// Exposed collective time.
    ExposedCollective {
        /// The GPU.
        gpu: i64,
    },
    /// Exposed memcpy time.
    ExposedMemcpy {
        /// The GPU.
        gpu: i64,
    },
    /// Layout transposes on the critical stream.
    Layout,
    /// Elementwise, norm and activation kernels on the critical stream.
    Elementwise,
    /// Eager attention on the critical stream.
    EagerAttention {
        /// What shows it.
        evidence: String,
        /// Its share of all GPU time.
        share: f64,
    },
    /// Mixture-of-experts GEMMs (grouped/fused expert GEMMs) on the critical stream.
    MoeGemm {
        /// The top MoE GEMM kernels by time on the critical stream, with their time.
        evidence: Vec<(String, Nanos)>,
    },
    /// The compute class a compute-bound verdict names, on the critical stream
    /// (`analysis::CauseKey::Compute`).
    Compute {
        /// The class (`KernelClass::label`).
        class: String,
        /// Its top kernels by time on the critical stream, with their time.
        evidence: Vec<(String, Nanos)>,
    },
}

/// One entry of the investigation's trust list: the workspace's one trust type,
/// `trace_model::TrustItem` (its code, words, count and share, labelled by the item's own
/// provenance), with what gave it and the capture it is of. Every entry is an item: the
/// roofline's and the readers' or analysis' diagnostics as they are, and the
/// investigation's own notes (a failed check, a file not read, a rank note, graph kernels,
/// collectives that include waiting) made into items here, so that a renderer takes every
/// code, count and label from the item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrustNote {
    /// What gave the item.
    pub from: TrustSource,
    /// The capture it is of (a rank, a file name, all ranks), where it is of one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub who: Option<Who>,
    /// For a failed reconciliation check: its index in [`Investigation::reconciliation`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<usize>,
    /// Why the item is listed, where its message alone does not say (the renderer words
    /// it around the message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listed: Option<Listed>,
    /// The item, flattened: `code`, `message`, `count`, and `unit`, `time_ns`, `share`,
    /// `counted` where the item has them.
    #[serde(flatten)]
    pub item: trace_model::TrustItem,
}

/// Why a trust item is listed, beside what its message says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Listed {
    /// A file of the input could not be read, so the report is of the others; the
    /// item's message is the file's error.
    NotRead,
    /// A diagnostic listed only because some activities have no launch (one-sided flow
    /// arrows: the missing ends may be theirs).
    ActivitiesWithoutLaunch,
}

/// What gave a trust item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrustSource {
    /// A reconciliation check that failed (step 2).
    Check,
    /// Kernel attribution (its notes, or its failure).
    Attribution,
    /// The roofline (its trust items, or its failure).
    Roofline,
    /// A capture: its reader's, step finder's or analysis' diagnostics, graph kernels,
    /// collectives that include waiting.
    Capture,
    /// The input as a whole: a file that could not be read, a note on the set of ranks.
    Input,
}

impl TrustNote {
    /// An item of `from`, of the capture `who` where it is of one.
    pub fn new(from: TrustSource, who: Option<Who>, item: trace_model::TrustItem) -> TrustNote {
        TrustNote {
            from,
            who,
            check: None,
            listed: None,
            item,
        }
    }

    /// The same note, listed for `why`.
    pub fn listed(self, why: Listed) -> TrustNote {
        TrustNote {
            listed: Some(why),
            ..self
        }
    }
}

/// A note on a rank directory's set of ranks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankNote {
    /// Two files claim one rank (else: a file not read as a rank).
    pub duplicate: bool,
    /// In words.
    pub message: String,
}

/// What a new capture would answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "ask", rename_all = "snake_case")]
pub enum Ask {
    /// What attribution asks for, in its words.
    Attribution {
        /// In words.
        text: String,
    },
    /// FLOPs and bytes of ops without shapes.
    RecordShapes,
    /// A steady-state capture.
    SteadyState,
    /// Graph kernels' ops: a capture with graphs off.
    GraphsOff {
        /// The capture.
        who: Who,
    },
    /// Step markers.
    StepMarkers {
        /// The capture.
        who: Who,
        /// A JAX capture.
        jax: bool,
    },
    /// Every rank of the same steps.
    AllRanks,
    /// The files that could not be read.
    Unread {
        /// How many.
        files: usize,
    },
}

/// The rank steps 3 to 6 describe, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drawn {
    /// The rank.
    pub who: Who,
    /// The straggler found across ranks (else the slowest by median step).
    pub straggler: bool,
}
