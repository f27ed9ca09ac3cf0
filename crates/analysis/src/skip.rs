//! SKIP metrics (Vellaisamy et al., ISPASS 2025, arXiv 2504.11750) and the whole
//! skip-stats analysis of one capture or one directory of ranks.
//!
//! Per step and in total, over the step's *kernels* (GPU activities of kind kernel,
//! collectives included; memcpys and memsets are not kernels):
//! - TKLQT = Σ (kernel start − start of the host launch call that issued it), over
//!   kernels with a launch;
//! - AKD = mean kernel duration;
//! - IL = end of the last kernel − start of the first top-level host operation, where
//!   the first top-level host operation is the earliest of: a CPU op not nested in
//!   another CPU op on its thread, starting inside the step's range; the launch call of
//!   any of the step's kernels; the step's first kernel;
//! - GPU idle = IL − the union of the kernel intervals (kernels that run at the same
//!   time on several streams count once, so it is never negative; the paper's
//!   IL − Σ durations assumes one stream).
//!
//! Kernels that were in flight when the capture began (see [`InFlight`]) and kernels that
//! start before their launch call (clock skew) are left out of TKLQT, and the former out
//! of steps, budgets and every SKIP number; both are counted and reported.
//!
//! All SKIP numbers are `measured`.

use std::path::{Path, PathBuf};

use trace_model::{
    ActivityKind, Capture, DeviceId, Diagnostics, Format, GpuActivity, HostKind, Nanos, StreamId,
};

use crate::Error;
use crate::budget::{self, Budget, Window};
use crate::gaps::{self, GapCauses, GapHost, IdleCauses};
use crate::host_cause::EarlyLabels;
use crate::launch::{self, LaunchStats};
use crate::practices::Practices;
use crate::steps::{self, Spread, Steps};
use crate::verdict::{self, Verdict};
use crate::warmup::{self, WarmUp};
use trace_model::Provenance;

mod beside;
mod window;
use beside::analyze_beside_rows;
use window::AnalysedWindow;

/// Options of the analysis.
#[derive(Debug, Clone)]
pub struct Config {
    /// Rows in the table of host events during GPU-idle gaps.
    pub top_host_events: usize,
    /// Under this much GPU work in the window the diagnosis cannot tell what bounds a
    /// step ([`crate::MIN_GPU_WORK`] by default; tests of rules on toy captures set 0).
    pub min_gpu_work: Nanos,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            top_host_events: 15,
            min_gpu_work: crate::MIN_GPU_WORK,
        }
    }
}

/// SKIP metrics of one step or of all steps together.
#[derive(Debug, Clone, PartialEq)]
pub struct SkipMetrics {
    /// Kernels in the step (collectives included).
    pub kernels: usize,
    /// Kernels with a launch call that precedes them.
    pub launched_kernels: usize,
    /// Total kernel launch-queue time: Σ (kernel start − launch start) over `launched_kernels`.
    pub tklqt: Nanos,
    /// Kernels launched by a CUDA/HIP graph launch, and their share of TKLQT. Their delay
    /// counts from the graph launch, so it includes the run time of the graph's earlier
    /// kernels: it is not queueing.
    pub graph_kernels: usize,
    /// The part of `tklqt` from graph-launched kernels.
    pub graph_tklqt: Nanos,
    /// Kernels that start before their launch call (clock skew); left out of TKLQT.
    pub skewed_kernels: usize,
    /// Mean kernel duration (integer ns, rounded toward zero).
    pub akd: Nanos,
    /// Σ kernel durations.
    pub kernel_time: Nanos,
    /// The union of the kernel intervals (≤ `kernel_time` when streams overlap).
    pub kernel_union: Nanos,
    /// Inference latency: end of the last kernel − start of the first top-level host operation.
    pub il: Nanos,
    /// IL − `kernel_union`.
    pub gpu_idle: Nanos,
    /// Median launch-to-start delay of the kernels launched one by one.
    pub median_direct_delay: Option<Nanos>,
    /// Always [`Provenance::Measured`].
    pub provenance: Provenance,
}

impl SkipMetrics {
    /// Kernels launched one by one (not through a graph), with a launch in the trace
    /// that precedes them.
    pub fn direct_kernels(&self) -> usize {
        self.launched_kernels - self.graph_kernels
    }

    /// Mean launch-to-start delay of the kernels launched one by one.
    pub fn mean_direct_delay(&self) -> Option<Nanos> {
        let n = self.direct_kernels();
        (n > 0).then(|| Nanos((self.tklqt.0 - self.graph_tklqt.0) / n as i64))
    }

    /// The verdict's Q: mean launch-to-start delay of kernels launched one by one / AKD.
    /// Graph kernels are left out (see [`SkipMetrics::graph_kernels`]).
    pub fn queue_ratio(&self) -> Option<f64> {
        let mean = self.mean_direct_delay()?;
        (self.akd.0 > 0).then(|| mean.0 as f64 / self.akd.0 as f64)
    }
}

/// The metrics of one step.
#[derive(Debug, Clone, PartialEq)]
pub struct StepMetrics {
    /// The step's number (`ProfilerStep#N`, the step marker's, or a counter).
    pub number: i64,
    /// The step's range, as its origin defines it.
    pub range: Window,
    /// From the first start to the last end of the step's GPU activities.
    pub gpu_range: Option<Window>,
    /// The step's SKIP metrics; `None` when it has no kernels.
    pub skip: Option<SkipMetrics>,
}

/// The steps a GPU keeps on its own timeline (TensorFlow's per-GPU `Steps` line), for
/// the GPU whose window is analysed: the step figures are that GPU's, not those of the
/// union step over all GPUs, which may run their steps far apart.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceSteps {
    /// The GPU's ordinal.
    pub ordinal: i64,
    /// Its steps in start order: each range is the GPU's own step, its GPU range the
    /// span of that GPU's activities starting in it; no SKIP metrics (`skip` is `None`).
    pub steps: Vec<StepMetrics>,
    /// Every GPU that keeps its own steps, by ordinal: how many, and the spread of their
    /// durations (`measured`).
    pub per_gpu: Vec<(i64, usize, Spread)>,
}

/// The budget of one stream, with its printed names.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamRow {
    /// The device ordinal, as printed.
    pub device: i64,
    /// The stream ordinal, as printed.
    pub stream: i64,
    /// The stream's id in the capture.
    pub stream_id: StreamId,
    /// The stream's split over the analysed window.
    pub budget: Budget,
}

/// The budget of a whole device (union over its streams).
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceRow {
    /// The device ordinal, as printed.
    pub device: i64,
    /// The device's id in the capture.
    pub device_id: DeviceId,
    /// The device's split over the analysed window.
    pub budget: Budget,
}

/// GPU activities that were already queued or running when the capture began: they have
/// no launch in the capture, and either their correlation id is below the first launch's
/// or they start before the first host event. Their launch-to-start delay, step and host
/// cause are unknowable, so they are kept out of steps, budgets and SKIP metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InFlight {
    /// Number of such activities.
    pub activities: usize,
    /// Their summed duration.
    pub time: Nanos,
}

/// The mask of [`InFlight`] activities, one flag per entry of `capture.activities()`.
pub(crate) fn in_flight_at_start(capture: &Capture) -> Vec<bool> {
    let first_launch_corr = capture
        .host_events()
        .iter()
        .filter(|e| e.kind == HostKind::Launch)
        .filter_map(|e| e.correlation())
        .min();
    let first_host = capture.host_events().iter().map(|e| e.start).min();
    capture
        .activities()
        .iter()
        .map(|a| {
            a.launch().is_none()
                && (a
                    .correlation()
                    .zip(first_launch_corr)
                    .is_some_and(|(c, first)| c < first)
                    || first_host.is_some_and(|h| a.start < h))
        })
        .collect()
}

/// The stream with the most collective time, reported beside the verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct CommStream {
    /// Index into `CaptureAnalysis::streams`.
    pub stream: usize,
    /// Collective time / window span on that stream (it includes waiting for peers).
    pub share: f64,
}

/// How far behind the host the GPU runs, when it is more than a step behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuBehind {
    /// Median launch-to-start delay of kernels launched one by one.
    pub median_delay: Nanos,
    /// Median step duration.
    pub median_step: Nanos,
}

/// The analysis of one capture: its steps, budgets, verdict, idle-gap causes, SKIP metrics
/// and launch statistics (what skip-stats prints and investigate decides from). Was
/// `SkipReport`, after the one tool.
#[derive(Debug, Clone)]
pub struct CaptureAnalysis {
    /// What the capture is called in the report: its path, for a capture read from a file.
    pub label: String,
    /// The capture's trace format.
    pub format: Format,
    /// The rank, from the trace's metadata or the file name.
    pub rank: Option<i64>,
    /// The trace's `baseTimeNanoseconds`, when recorded (aligns ranks' clocks).
    pub base_time_ns: Option<i64>,
    /// The steps and the step of each activity.
    pub steps: Steps,
    /// The analysed window: the steps' wall time when they are host ranges (annotations,
    /// markers), widened to the first start and last end of their GPU activities;
    /// otherwise first start to last end of the GPU activities in steps.
    pub window: Option<Window>,
    /// The budget of every stream over `window`, in stream order.
    pub streams: Vec<StreamRow>,
    /// The budget of every device over `window`.
    pub devices: Vec<DeviceRow>,
    /// The stream with the most compute time in the window (index into `streams`); the
    /// busiest stream when no stream has compute.
    pub critical: Option<usize>,
    /// The stream with the most collective time, when it is not the critical one.
    pub comm_stream: Option<CommStream>,
    /// Activities in flight at the capture's start (left out of steps and metrics).
    pub in_flight: InFlight,
    /// Set when the median launch-to-start delay is longer than the median step.
    pub gpu_behind: Option<GpuBehind>,
    /// Host events during the critical stream's idle gaps.
    pub gap_host: Option<GapHost>,
    /// Why the critical stream idled: host wait, queued (dependency) wait, unattributed.
    pub idle_causes: Option<IdleCauses>,
    /// Why the critical stream idled, gap by gap from each gap's own evidence: the host
    /// had not launched yet, another stream or event, a synchronising call, unknown.
    pub gap_causes: Option<GapCauses>,
    /// Host-only time of the steps: before their first and after their last GPU activity.
    pub host_only: Option<HostOnly>,
    /// Warm-up events and steps; the warm-up steps are left out of the window, budgets,
    /// idle causes and verdict unless every step is warm-up.
    pub warm_up: WarmUp,
    /// Launch join over all GPU activities of the capture.
    pub launch_all: LaunchStats,
    /// Launch join over the kernels of the capture.
    pub launch_kernels: LaunchStats,
    /// SKIP metrics per step, in step order.
    pub per_step: Vec<StepMetrics>,
    /// SKIP metrics over all steps together; `None` without kernels.
    pub total: Option<SkipMetrics>,
    /// The launch-overhead verdict on the critical stream.
    pub verdict: Verdict,
    /// What bounds the step ([`crate::diagnose`], `inferred`), with "cannot tell" and why.
    pub diagnosis: crate::Diagnosis,
    /// The framework the capture comes from, and the evidence.
    pub framework: crate::FrameworkGuess,
    /// The steady steps' host and GPU sides ([`crate::step_sides`]).
    pub step_sides: Option<crate::StepSides>,
    /// The analysed GPU's own steps, where the capture keeps steps per GPU.
    pub device_steps: Option<DeviceSteps>,
    /// Diagnostics of the reader, of the step finder and of the analysis, counted: the
    /// workspace's one diagnostic type (`trace_model::Diagnostics`), from which reports
    /// build their trust lists.
    pub diagnostics: Diagnostics,
}

impl CaptureAnalysis {
    /// Median, min and max of one SKIP metric over steps that have kernels.
    pub fn step_spread(&self, metric: impl Fn(&SkipMetrics) -> Nanos) -> Option<Spread> {
        Spread::of(
            self.per_step
                .iter()
                .filter_map(|s| s.skip.as_ref().map(&metric)),
        )
    }

    /// Steps inside the analysed window: the steady-state steps (all steps when every
    /// one is warm-up); the analysed GPU's own where it keeps them. The divisor of a
    /// cause's time per step.
    pub fn steady_step_count(&self) -> usize {
        if let Some(d) = &self.device_steps {
            return self.steady_device_steps(d).count();
        }
        if self.warm_up.all {
            self.steps.steps.len()
        } else {
            self.steps.steps.len() - self.warm_up.steps.len()
        }
    }

    /// The analysed GPU's own steps that are steady: those whose number is no warm-up
    /// step's (all when every step is warm-up).
    pub fn steady_device_steps<'a>(
        &'a self,
        d: &'a DeviceSteps,
    ) -> impl Iterator<Item = &'a StepMetrics> + 'a {
        d.steps.iter().filter(move |m| {
            self.warm_up.all
                || !self.warm_up.steps.iter().any(|&i| {
                    self.steps
                        .steps
                        .get(i)
                        .is_some_and(|s| s.number == m.number)
                })
        })
    }

    /// Median, min and max duration of the steady-state steps.
    pub fn steady_step_spread(&self) -> Option<Spread> {
        Spread::of(self.steady_step_durations())
    }

    /// The steady-state steps' durations, in step order (the analysed GPU's own steps
    /// where it keeps them).
    pub fn steady_step_durations(&self) -> Vec<Nanos> {
        if let Some(d) = &self.device_steps {
            return self
                .steady_device_steps(d)
                .map(|m| m.range.span())
                .collect();
        }
        self.steps
            .steps
            .iter()
            .enumerate()
            .filter(|(i, _)| self.warm_up.all || self.warm_up.steps.binary_search(i).is_err())
            .map(|(_, s)| s.duration())
            .collect()
    }

    /// The critical stream's row.
    pub fn critical_stream(&self) -> Option<&StreamRow> {
        self.critical.map(|i| &self.streams[i])
    }
}

/// The analysis of one input: one [`CaptureAnalysis`] per capture (one per rank for a
/// directory) and which rank finished last. Was `SkipAnalysis`.
#[derive(Debug, Clone)]
pub struct InputAnalysis {
    /// The path that was read (a file or a directory of ranks).
    pub input: PathBuf,
    /// One report per capture, in rank (or file-name) order.
    pub reports: Vec<CaptureAnalysis>,
    /// Which rank ended the last common step last; `None` for a single capture.
    pub last_finisher: Option<crate::last_finisher::LastFinisher>,
}

/// Reads `input` (a Kineto `.json[.gz]`, a JAX `*.trace.json.gz`, an `.xplane.pb`, or
/// a directory of rank traces; see [`load::load`]), analyses every capture
/// and writes `rows.csv` (one row per GPU activity) to `rows`, as it goes (one write
/// per row: give it a buffered writer).
pub fn run(
    input: &Path,
    config: &Config,
    rows: impl std::io::Write,
) -> Result<InputAnalysis, Error> {
    let loaded = load::load(input)?;
    run_loaded(input, &loaded, config, rows)
}

/// [`run`] over captures already loaded from `input` (by [`load::load`]).
pub fn run_loaded(
    input: &Path,
    loaded: &[crate::input::Loaded],
    config: &Config,
    rows: impl std::io::Write,
) -> Result<InputAnalysis, Error> {
    analyze_loaded(input, loaded, config, Some(rows))
}

/// [`run`] without `rows.csv`: the report only (what profile-model puts beside HTA's
/// analyses).
pub fn run_without_rows(input: &Path, config: &Config) -> Result<InputAnalysis, Error> {
    let loaded = load::load(input)?;
    analyze_loaded::<std::io::Sink>(input, &loaded, config, None)
}

/// [`run_without_rows`] on captures already loaded from `input` (as
/// [`load::load`] would load them).
pub fn run_loaded_without_rows(
    input: &Path,
    loaded: &[crate::input::Loaded],
    config: &Config,
) -> Result<InputAnalysis, Error> {
    analyze_loaded::<std::io::Sink>(input, loaded, config, None)
}

fn analyze_loaded<W: std::io::Write>(
    input: &Path,
    loaded: &[crate::input::Loaded],
    config: &Config,
    mut rows: Option<W>,
) -> Result<InputAnalysis, Error> {
    let captures: Vec<(&Path, Option<i64>, &Capture)> = loaded
        .iter()
        .map(|l| (l.path.as_path(), l.rank, &l.capture))
        .collect();
    let multi = captures.len() > 1 || input.is_dir();
    let mut reports = Vec::with_capacity(captures.len());
    if let Some(rows) = &mut rows {
        crate::rows_csv::write_rows_header(&mut *rows, multi).map_err(io_error(input))?;
    }
    for &(path, rank, capture) in &captures {
        let label = path.to_string_lossy();
        let rank_column = multi.then_some(rank);
        let (written, report) =
            analyze_beside_rows(capture, &label, rank, config, |steps| match &mut rows {
                Some(rows) => crate::rows_csv::write_rows(rows, capture, steps, rank_column),
                None => Ok(()),
            });
        written.map_err(io_error(input))?;
        reports.push(report);
    }
    if let Some(rows) = &mut rows {
        rows.flush().map_err(io_error(input))?;
    }
    Ok(assemble(input, reports, multi))
}

/// One capture of a rank directory read on its own (see `load::map_each`): its report,
/// with its `rows.csv` rows (a leading rank column, no header) written to `rows`. Put the
/// reports together with [`assemble`] and the rows after [`crate::rows_csv::write_rows_header`], in rank
/// order: the result is what [`run`] gives for the directory.
pub fn report_with_rows<W: std::io::Write>(
    loaded: &crate::input::Loaded,
    config: &Config,
    rows: W,
) -> Result<CaptureAnalysis, Error> {
    let capture = &loaded.capture;
    let label = loaded.path.to_string_lossy();
    let mut w = rows;
    let (written, report) = analyze_beside_rows(capture, &label, loaded.rank, config, |steps| {
        crate::rows_csv::write_rows(&mut w, capture, steps, Some(loaded.rank))?;
        w.flush()
    });
    written.map_err(io_error(&loaded.path))?;
    Ok(report)
}

/// The analysis of `input` from its captures' reports, in rank order; `multi` for a
/// directory or several captures (which rank ended the last common step last).
pub fn assemble(input: &Path, reports: Vec<CaptureAnalysis>, multi: bool) -> InputAnalysis {
    let last_finisher = if multi {
        crate::last_finisher::last_finisher(&reports)
    } else {
        None
    };
    InputAnalysis {
        input: input.to_path_buf(),
        reports,
        last_finisher,
    }
}

/// An I/O error of `path` (the input whose rows.csv it writes) as this crate's error.
fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Analyses one capture; `label` names it in the report (e.g. its path), `rank` is the
/// rank it was taken on, when known.
pub fn analyze(
    capture: &Capture,
    label: &str,
    rank: Option<i64>,
    config: &Config,
) -> CaptureAnalysis {
    let (steps, in_flight) = steps_outside_flight(capture);
    let early = EarlyLabels::none(capture);
    analyze_steps(capture, label, rank, config, &steps, in_flight, &early)
}

/// The capture's steps, with the activities in flight at its start taken out of them
/// (and counted).
fn steps_outside_flight(capture: &Capture) -> (Steps, InFlight) {
    let mut steps = steps::find_steps(capture);
    let in_flight_mask = in_flight_at_start(capture);
    let mut in_flight = InFlight::default();
    for ((a, step), flying) in capture
        .activities()
        .iter()
        .zip(steps.activity_step.iter_mut())
        .zip(&in_flight_mask)
    {
        if *flying {
            *step = None;
            in_flight.activities += 1;
            in_flight.time += a.dur;
        }
    }
    (steps, in_flight)
}

/// [`analyze`] over steps already found (the report keeps a copy), with one thread's
/// labels from `early`.
fn analyze_steps<'c>(
    capture: &'c Capture,
    label: &str,
    rank: Option<i64>,
    config: &Config,
    steps: &Steps,
    in_flight: InFlight,
    early: &EarlyLabels<'c>,
) -> CaptureAnalysis {
    // Warm-up steps are kept out of the steady-state window and verdict, unless every
    // step is warm-up (then the verdict says so).
    let warm_up = warmup::find(capture, steps);
    let steady = |i: usize| warm_up.all || warm_up.steps.binary_search(&i).is_err();
    let host_ranges = steps::host_ranged(&steps.origin);
    let AnalysedWindow {
        per_device,
        window_device,
        window,
        device_steps,
    } = window::analysed_window(capture, steps, &steady, host_ranges);
    let (streams, devices) = budget_rows(capture, window);
    let (critical, comm_stream) = critical_streams(&streams);
    // What does not depend on the gaps is worked out beside their causes (the longest
    // part), on the thread that finds the host events in the gaps.
    let beside = || {
        let (per_step, total) = step_metrics(capture, steps);
        let host_only = host_ranges
            .then(|| {
                let steady_metrics: Vec<StepMetrics> = (0..per_step.len())
                    .filter(|&i| steady(i))
                    .map(|i| per_step[i].clone())
                    .collect();
                crate::host_cause::host_only_time(capture, &steady_metrics, config.top_host_events)
            })
            .flatten();
        let launch_all = launch::launch_stats(capture, capture.activities().iter());
        let launch_kernels = launch::launch_stats(
            capture,
            capture
                .activities()
                .iter()
                .filter(|a| a.kind == ActivityKind::Kernel),
        );
        (per_step, total, host_only, launch_all, launch_kernels)
    };
    let GapFindings {
        gap_host,
        practices,
        idle_causes,
        gap_causes,
        aside: (per_step, total, host_only, launch_all, launch_kernels),
    } = gap_findings(
        capture,
        config,
        steps,
        (host_ranges, &steady),
        &streams,
        critical.zip(window),
        (beside, early),
    );
    let gpu_behind = gpu_behind(total.as_ref(), steps);
    let verdict = verdict::decide(
        critical.map(|i| &streams[i].budget),
        gap_causes.as_ref(),
        gap_host.as_ref().map_or(0.0, |g| g.covered_share()),
        total.as_ref().and_then(|t| t.queue_ratio()),
        warm_up.all,
    );
    let diagnostics = capture_diagnostics(
        capture,
        steps,
        &launch_all,
        window_device.map(|d| (d, per_device.len())),
        &in_flight,
        &streams,
    );
    let framework = crate::detect_framework(capture, &practices);
    let mut report = CaptureAnalysis {
        label: label.to_owned(),
        format: capture.format(),
        rank,
        base_time_ns: capture.meta().base_time_ns,
        steps: steps.clone(),
        window,
        streams,
        devices,
        critical,
        comm_stream,
        in_flight,
        gpu_behind,
        gap_host,
        idle_causes,
        gap_causes,
        host_only,
        warm_up,
        launch_all,
        launch_kernels,
        per_step,
        total,
        verdict,
        diagnosis: crate::Diagnosis::Mixed,
        framework,
        step_sides: None,
        device_steps,
        diagnostics,
    };
    report.diagnosis = crate::diagnosis::diagnose_with(capture, &report, config.min_gpu_work);
    report.step_sides = crate::step_sides(&report);
    report
}

/// The window's budget of each stream and of each device (none without a window).
fn budget_rows(capture: &Capture, window: Option<Window>) -> (Vec<StreamRow>, Vec<DeviceRow>) {
    let mut streams = Vec::new();
    let mut devices = Vec::new();
    if let Some(w) = window {
        for sb in budget::stream_budgets(capture, w) {
            streams.push(StreamRow {
                device: capture.device(sb.device).ordinal,
                stream: capture.stream(sb.stream).ordinal,
                stream_id: sb.stream,
                budget: sb.budget,
            });
        }
        for d in capture.devices() {
            devices.push(DeviceRow {
                device: d.ordinal,
                device_id: d.id,
                budget: budget::device_budget(capture, d.id, w),
            });
        }
    }
    (streams, devices)
}

/// The critical stream (an index into `streams`) and the communication stream beside it.
/// The critical stream does the most compute: a collective stream's busy time includes
/// waiting for peers, so it says nothing about whether the GPU is the limit.
fn critical_streams(streams: &[StreamRow]) -> (Option<usize>, Option<CommStream>) {
    let most = |key: fn(&Budget) -> Nanos| {
        (0..streams.len())
            .filter(|&i| key(&streams[i].budget).0 > 0)
            .max_by(|&a, &b| {
                key(&streams[a].budget)
                    .cmp(&key(&streams[b].budget))
                    .then(b.cmp(&a))
            })
    };
    let critical = most(|b| b.compute).or_else(|| most(|b| b.busy()));
    let comm_stream = most(|b| b.collective)
        .filter(|&i| Some(i) != critical)
        .map(|i| CommStream {
            stream: i,
            share: streams[i].budget.share(streams[i].budget.collective),
        });
    (critical, comm_stream)
}

/// What the critical stream's idle gaps hold and why they are there, and the practices
/// in use (for the framework).
struct GapFindings<T> {
    gap_host: Option<GapHost>,
    practices: Practices,
    idle_causes: Option<IdleCauses>,
    gap_causes: Option<GapCauses>,
    /// What `beside` gave.
    aside: T,
}

/// The idle gaps of the critical stream (`critical`: its index and the window) with the
/// host events in them and their causes; `host_steps` says whether the steps are the
/// host's own ranges and which are steady. The host events and the practices are found
/// on a thread of their own while the gaps' causes are found (neither reads the other),
/// and then `beside`, whose result comes with them as `aside`.
fn gap_findings<'c, T: Send>(
    capture: &'c Capture,
    config: &Config,
    steps: &Steps,
    host_steps: (bool, &dyn Fn(usize) -> bool),
    streams: &[StreamRow],
    critical: Option<(usize, Window)>,
    (beside, early): (impl FnOnce() -> T + Send, &EarlyLabels<'c>),
) -> GapFindings<T> {
    let (host_ranges, steady) = host_steps;
    let critical_gaps =
        critical.map(|(i, w)| (i, gaps::idle_gaps(capture, streams[i].stream_id, w)));
    let host_side = || {
        let gap_host = critical_gaps.as_ref().map(|(_, gaps)| {
            let threads = gaps::launching_threads(capture);
            gaps::host_in_gaps(capture, gaps, &threads, config.top_host_events)
        });
        (gap_host, crate::practices(capture), beside())
    };
    let gap_causes_of = || {
        critical_gaps.as_ref().map(|(i, gaps)| {
            let (tails, heads) = host_ranged_edges(capture, steps, host_ranges, steady);
            let edges = (tails.as_slice(), heads.as_slice());
            gaps::gap_causes_with(capture, streams[*i].stream_id, gaps, edges, early)
        })
    };
    let causes = || {
        let idle_causes = critical_gaps
            .as_ref()
            .map(|(i, gaps)| gaps::idle_causes(capture, streams[*i].stream_id, gaps));
        (idle_causes, gap_causes_of())
    };
    let ((gap_host, practices, aside), (idle_causes, gap_causes)) =
        if load::chrome::default_threads() > 1 {
            std::thread::scope(|scope| {
                let host = scope.spawn(host_side);
                let causes = causes();
                let host = host
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                (host, causes)
            })
        } else {
            (host_side(), causes())
        };
    GapFindings {
        gap_host,
        practices,
        idle_causes,
        gap_causes,
        aside,
    }
}

/// Each step's GPU span and SKIP metrics, and the SKIP metrics over all steps.
fn step_metrics(capture: &Capture, steps: &Steps) -> (Vec<StepMetrics>, Option<SkipMetrics>) {
    let top_level = top_level_op_starts(capture);
    let mut per_step: Vec<StepMetrics> = steps
        .steps
        .iter()
        .map(|s| StepMetrics {
            number: s.number,
            range: s.range,
            gpu_range: None,
            skip: None,
        })
        .collect();
    let mut by_step: Vec<Vec<&GpuActivity>> = vec![Vec::new(); steps.steps.len()];
    for (a, s) in capture.activities().iter().zip(&steps.activity_step) {
        if let Some(s) = s {
            by_step[*s as usize].push(a);
        }
    }
    for (m, acts) in per_step.iter_mut().zip(&by_step) {
        m.gpu_range = match (
            acts.iter().map(|a| a.start).min(),
            acts.iter().map(|a| a.end()).max(),
        ) {
            (Some(start), Some(end)) => Some(Window { start, end }),
            _ => None,
        };
        let first_op = first_in(&top_level, m.range);
        m.skip = skip_metrics(capture, acts, first_op);
    }
    let all: Vec<&GpuActivity> = by_step.iter().flatten().copied().collect();
    let first_op = per_step.first().and_then(|s| first_in(&top_level, s.range));
    let total = skip_metrics(capture, &all, first_op);
    (per_step, total)
}

/// How far the GPU runs behind the host, where its median launch delay is longer than
/// the median step.
fn gpu_behind(total: Option<&SkipMetrics>, steps: &Steps) -> Option<GpuBehind> {
    match (
        total.and_then(|t| t.median_direct_delay),
        steps.duration_spread(),
    ) {
        (Some(delay), Some(step)) if steps.steps.len() > 1 && delay > step.median => {
            Some(GpuBehind {
                median_delay: delay,
                median_step: step.median,
            })
        }
        _ => None,
    }
}

/// The reader's and the step finder's diagnostics, with the analysis's own: activities
/// without a launch, the window's GPU where there are several (`window_device`: it and
/// the number of GPUs), clock skew, work in flight at the start, failed budget checks.
fn capture_diagnostics(
    capture: &Capture,
    steps: &Steps,
    launch_all: &LaunchStats,
    window_device: Option<(i64, usize)>,
    in_flight: &InFlight,
    streams: &[StreamRow],
) -> Diagnostics {
    let mut diagnostics = capture.diagnostics().clone();
    for d in steps.diagnostics.iter() {
        diagnostics.add_many(d.code, d.count, d.message.clone(), d.first.clone());
    }
    // The reader may already have said so; say it once.
    if capture
        .diagnostics()
        .get("activity-without-launch")
        .is_none()
    {
        diagnostics.add_many(
            "activity-without-launch",
            launch_all.without_launch as u64,
            "GPU activities have no host launch in the trace (rows.csv has empty launch columns for them)".to_owned(),
            String::new(),
        );
    }
    if let Some((d, gpus)) = window_device {
        diagnostics.add_many(
            "window-per-gpu",
            gpus as u64,
            format!("GPUs in one capture: windows are per GPU, never joined across devices; the analysed window is GPU {d}'s (the most steady GPU time)"),
            String::new(),
        );
    }
    diagnostics.add_many(
        "clock-skew",
        launch_all.negative as u64,
        "GPU activities start before their launch call (host and GPU clocks disagree); their delays are left out of the launch statistics and TKLQT".to_owned(),
        String::new(),
    );
    diagnostics.add_many(
        "in-flight-at-start",
        in_flight.activities as u64,
        format!(
            "GPU activities ({} of GPU time) were launched before the capture began; left out of steps, budgets and SKIP metrics",
            in_flight.time.human()
        ),
        String::new(),
    );
    add_failed_budget_checks(&mut diagnostics, streams);
    diagnostics
}

/// The steady host-ranged steps' ranges (`tails`) and each one from its start to its first
/// GPU activity (`heads`): the host-only stretches the gaps' causes count; both empty
/// where the steps are not the host's own ranges.
fn host_ranged_edges(
    capture: &Capture,
    steps: &Steps,
    host_ranges: bool,
    steady: &dyn Fn(usize) -> bool,
) -> (Vec<Window>, Vec<Window>) {
    if !host_ranges {
        return (Vec::new(), Vec::new());
    }
    let tails = (0..steps.steps.len())
        .filter(|&i| steady(i))
        .map(|i| steps.steps[i].range)
        .collect();
    let mut first: Vec<Option<Nanos>> = vec![None; steps.steps.len()];
    for (a, s) in capture.activities().iter().zip(&steps.activity_step) {
        if let Some(s) = s {
            let f = &mut first[*s as usize];
            *f = Some(f.map_or(a.start, |t: Nanos| t.min(a.start)));
        }
    }
    let mut heads = Vec::new();
    for (i, s) in steps.steps.iter().enumerate() {
        if let (true, Some(f)) = (steady(i), first[i]) {
            heads.push(Window {
                start: s.range.start,
                end: f.min(s.range.end),
            });
        }
    }
    (tails, heads)
}

/// The `budget-check-failed` diagnostic: stream budgets whose parts differ from the
/// interval unions, with the first one's figures.
fn add_failed_budget_checks(diagnostics: &mut Diagnostics, streams: &[StreamRow]) {
    let failed: Vec<&StreamRow> = streams.iter().filter(|s| !s.budget.check.holds()).collect();
    if let Some(s) = failed.first() {
        let check = &s.budget.check;
        diagnostics.add_many(
            "budget-check-failed",
            failed.len() as u64,
            "stream budgets whose parts differ from the interval unions (each part should be the union of its kind and the kinds before it, less the union of those before it)".to_owned(),
            format!(
                "GPU {} stream {}: parts {} vs unions {}",
                s.device,
                s.stream,
                nanos_list(&check.parts),
                nanos_list(&check.expected_parts()),
            ),
        );
    }
}

/// The time of host-ranged steps with no GPU activity of the step running yet (before
/// the first) or any more (after the last), summed over steps, and the host events that
/// ran then on the launching threads, ranked by self time (`measured`).
#[derive(Debug, Clone, PartialEq)]
pub struct HostOnly {
    /// Σ over steps of (first GPU activity start − step start), when positive.
    pub before_gpu: Nanos,
    /// Σ over steps of (step end − last GPU activity end), when positive.
    pub after_gpu: Nanos,
    /// Σ of the step durations (of steps with GPU activity).
    pub step_time: Nanos,
    /// Steps counted.
    pub steps: usize,
    /// Host events in those stretches by self time (time not inside a child event),
    /// most first; step annotations left out.
    pub top: Vec<gaps::HostTime>,
}

impl HostOnly {
    /// `(before + after) / step time`, in [0, 1].
    pub fn share(&self) -> f64 {
        crate::percent::ratio((self.before_gpu + self.after_gpu).0, self.step_time.0)
    }
}

/// `[a, b, c, d]` in human units.
fn nanos_list(parts: &[Nanos]) -> String {
    let parts: Vec<String> = parts.iter().map(|p| p.human()).collect();
    format!("[{}]", parts.join(", "))
}

/// Start times of CPU ops not nested in another CPU op on the same thread, sorted.
fn top_level_op_starts(capture: &Capture) -> Vec<Nanos> {
    let mut out = Vec::new();
    for t in capture.threads() {
        let mut open_until = Nanos(i64::MIN);
        for e in capture.thread_events(t.id) {
            if e.kind != HostKind::CpuOp {
                continue;
            }
            if e.start >= open_until {
                out.push(e.start);
                open_until = e.end();
            } else {
                open_until = open_until.max(e.end());
            }
        }
    }
    out.sort_unstable();
    out
}

fn first_in(sorted: &[Nanos], w: Window) -> Option<Nanos> {
    let i = sorted.partition_point(|&t| t < w.start);
    sorted.get(i).copied().filter(|&t| t < w.end)
}

/// SKIP metrics over the kernels among `acts`; `None` without kernels.
pub(crate) fn skip_metrics(
    capture: &Capture,
    acts: &[&GpuActivity],
    first_top_level_op: Option<Nanos>,
) -> Option<SkipMetrics> {
    let kernels: Vec<&GpuActivity> = acts
        .iter()
        .copied()
        .filter(|a| a.kind == ActivityKind::Kernel)
        .collect();
    if kernels.is_empty() {
        return None;
    }
    let mut tklqt = Nanos::ZERO;
    let mut launched = 0;
    let mut graph_tklqt = Nanos::ZERO;
    let mut graph_kernels = 0;
    let mut skewed_kernels = 0;
    let mut direct_delays = Vec::new();
    let mut first = kernels.iter().map(|a| a.start).min()?;
    for a in &kernels {
        let joined = launch::join(capture, a);
        if let Some(launch) = joined.launch {
            first = first.min(launch.start);
        }
        match joined.delay() {
            Some(d) if d.0 < 0 => skewed_kernels += 1,
            Some(d) => {
                tklqt += d;
                launched += 1;
                if joined
                    .launch
                    .is_some_and(|l| trace_model::is_graph_launch_api(capture.name(l.name)))
                {
                    graph_tklqt += d;
                    graph_kernels += 1;
                } else {
                    direct_delays.push(d);
                }
            }
            None => {}
        }
    }
    if let Some(op) = first_top_level_op {
        first = first.min(op);
    }
    let kernel_time: Nanos = kernels.iter().map(|a| a.dur).sum();
    let kernel_union = crate::budget::union_of(kernels.iter().map(|a| (a.start, a.end())));
    let last = kernels.iter().map(|a| a.end()).max()?;
    let il = last - first;
    Some(SkipMetrics {
        kernels: kernels.len(),
        launched_kernels: launched,
        tklqt,
        graph_kernels,
        graph_tklqt,
        skewed_kernels,
        akd: Nanos(kernel_time.0 / kernels.len() as i64),
        kernel_time,
        kernel_union,
        il,
        gpu_idle: il - kernel_union,
        median_direct_delay: Spread::of(direct_delays).map(|s| s.median),
        provenance: Provenance::Measured,
    })
}

#[cfg(test)]
mod tests {
    /// `decimal` writes what `{v}` formats, at the edges of `i64` too.
    #[test]
    fn decimal_is_display() {
        let mut buf = [0u8; 20];
        for v in [
            0,
            1,
            -1,
            9,
            10,
            -10,
            123_456_789,
            i64::MAX,
            i64::MIN,
            -1_000_000_007,
        ]
        .into_iter()
        // Every digit count, each side of every power of ten (the digits go in pairs).
        .chain((0..19).flat_map(|e| {
            let p = 10i64.pow(e);
            [p - 1, p, p + 1, -p, 7 * p + 3]
        }))
        .chain(-1_000..1_000)
        {
            assert_eq!(
                crate::rows_csv::decimal(v, &mut buf),
                v.to_string().as_bytes(),
                "{v}"
            );
        }
    }
}
