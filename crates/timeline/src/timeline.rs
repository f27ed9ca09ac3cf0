//! The typed view of one rank's trace that the HTA analyses walk: GPU activities and host
//! events with integer-nanosecond times, built from the capture model
//! ([`Timeline::from_capture`]) or, in trace-frame, from an events frame.

use std::path::PathBuf;

use trace_model::FastMap;

use crate::hta::{HtaKernelType, hta_kernel_type};
use crate::hta_ranges::HtaIntRanges;

/// What kind of GPU activity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuKind {
    /// `cat: kernel`.
    Kernel,
    /// `cat: gpu_memcpy`.
    Memcpy,
    /// `cat: gpu_memset`.
    Memset,
    /// Only in HTA's view ([`Timeline::into_hta_view_with`]): an event HTA 0.5.0 counts as
    /// GPU work that is none of the above, a CUDA synchronisation event or an event of
    /// another category that carries `args.stream` and `args.correlation` (HTA's
    /// `GPUKernelFilter`: `stream >= 0 and correlation >= 0`, or `Event Sync`/`Context
    /// Sync`).
    Other,
}

/// A GPU activity (`kernel`, `gpu_memcpy`, `gpu_memset` with a stream).
#[derive(Debug, Clone)]
pub struct Gpu {
    /// Position of the event in `traceEvents`.
    pub event_index: i64,
    /// Id of the name in [`Timeline::names`] (see [`Timeline::name`]).
    pub name: u32,
    /// Kernel, memcpy or memset.
    pub kind: GpuKind,
    /// `args.device`, 0 when absent.
    pub device: i64,
    /// `args.stream`.
    pub stream: i64,
    /// Start, in integer nanoseconds (`ts_ns`).
    pub start: i64,
    /// Start + duration, in integer nanoseconds.
    pub end: i64,
    /// `args.correlation`: the id shared with the runtime call that launched it.
    pub correlation: Option<i64>,
    /// Index into `Timeline::host` of the launch with the same correlation id.
    pub launch: Option<usize>,
}

pub use trace_model::SyncKind;

/// A CUDA synchronisation event.
#[derive(Debug, Clone)]
pub struct SyncEvent {
    /// Position of the event in `traceEvents`.
    pub event_index: i64,
    /// What it waits for (from the event's name).
    pub kind: SyncKind,
    /// `args.device`, 0 when absent.
    pub device: i64,
    /// The stream synchronised (`Stream Sync`) or made to wait (`Stream Wait Event`); −1
    /// when the event names none.
    pub stream: i64,
    /// Start, in integer nanoseconds.
    pub start: i64,
    /// Start + duration, in integer nanoseconds.
    pub end: i64,
    /// `args.correlation`: the id shared with the runtime call that issued it.
    pub correlation: Option<i64>,
    /// Index into `Timeline::host` of the runtime call with the same correlation id.
    pub runtime: Option<usize>,
    /// `Event Sync` / `Stream Wait Event`: the stream the awaited event was recorded on
    /// (`wait_on_stream`) and the correlation id of its `cudaEventRecord` call.
    pub wait_on_stream: Option<i64>,
    /// `Event Sync` / `Stream Wait Event`: the correlation id of the `cudaEventRecord`
    /// call (`wait_on_cuda_event_record_corr_id`).
    pub wait_on_record: Option<i64>,
}

/// Kineto host categories the analyses tell apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostCat {
    /// `cat: cpu_op` (or `Operator`): a framework operator.
    CpuOp,
    /// `cat: cuda_runtime` (or `Runtime`): a CUDA runtime call such as `cudaLaunchKernel`.
    Runtime,
    /// `cat: cuda_driver`: a CUDA driver call such as `cuLaunchKernel`.
    Driver,
    /// `cat: user_annotation`: a `record_function` range, `ProfilerStep#N` among them.
    Annotation,
    /// Any other host category (`python_function`, …).
    Other,
}

/// A complete (`ph: X`) host event.
#[derive(Debug, Clone)]
pub struct Host {
    /// Position of the event in `traceEvents`.
    pub event_index: i64,
    /// Id of the name in [`Timeline::names`] (see [`Timeline::name`]).
    pub name: u32,
    /// Its Kineto category.
    pub cat: HostCat,
    /// Interned `pid/tid` text: the thread.
    pub thread: u32,
    /// Start, in integer nanoseconds.
    pub start: i64,
    /// Start + duration, in integer nanoseconds.
    pub end: i64,
    /// `args.correlation`: on runtime and driver calls, the id shared with the GPU work
    /// they issue.
    pub correlation: Option<i64>,
}

/// One rank's events, as the analyses need them.
#[derive(Debug, Clone)]
pub struct Timeline {
    /// The trace file.
    pub path: PathBuf,
    /// The rank of the trace, when known (the capture's rank, or trace-frame's `RankFrame::rank`).
    pub rank: Option<i64>,
    /// Interned texts (event names and `pid/tid` threads), indexed by the `u32` ids.
    pub names: Vec<String>,
    /// GPU activities with a stream, sorted by (start, end, event index).
    pub gpu: Vec<Gpu>,
    /// Complete host events, in file order.
    pub host: Vec<Host>,
    /// CUDA synchronisation events, in file order.
    pub syncs: Vec<SyncEvent>,
    /// Every `ProfilerStep#N` host annotation: (N, start, end), sorted by start.
    pub steps: Vec<(i64, i64, i64)>,
    /// True when some event has a fractional-microsecond timestamp.
    pub fractional_us: bool,
    /// `ts` of the first event of the file (HTA compares launchless activities with it).
    pub first_event_ts: Option<i64>,
    /// Host events that carry an `args.stream` other than −1 (a Triton launch's `cpu_op`,
    /// say), as [`GpuKind::Other`] activities; empty after [`Timeline::into_hta_view_with`].
    /// HTA 0.5.0 counts those with `args.stream >= 0` and `args.correlation >= 0` as GPU
    /// work (they join `gpu`) and the others as host events with a stream (they become
    /// [`Timeline::stream_host`]).
    pub stream_ops: Vec<Gpu>,
    /// Only in HTA's view: the host events of [`Timeline::stream_ops`] that HTA's GPU filter
    /// leaves on the host side (no `args.correlation >= 0`, or a negative stream), kept by
    /// the host events' step rule. Their `stream` is not −1, so HTA's temporal, kernel and
    /// overlap breakdowns, which take every row with `stream != -1`, count them as GPU work
    /// (`hta::stream_rows`).
    pub stream_host: Vec<Gpu>,
    /// HTA's time origin of this file (its earliest complete event with a category, in
    /// ns), set by the HTA loader; none elsewhere.
    pub hta_origin: Option<i64>,
    /// `args["memory bandwidth (GB/s)"]` by event index, for the events that carry it
    /// (Kineto writes it on memcpy and memset activities).
    pub memory_bw: FastMap<i64, f64>,
    /// The ranges of `args.stream` and `args.correlation` HTA's parser sees (before any
    /// view's filter), which set its integer dtypes.
    pub hta_int_ranges: HtaIntRanges,
    /// Which of `trace_model::ASKED_SYMBOLS` some event of the file has as its category or
    /// name (`KinetoDetails::asked`); `None` for a capture of another format than Chrome
    /// JSON, whose events' texts were not read.
    pub asked_symbols: Option<u8>,
    /// HTA's kernel type of each text of [`Timeline::names`] (computed once: the analyses
    /// ask for it of every activity, and kernel names are long).
    hta_types: Vec<HtaKernelType>,
}

impl Timeline {
    /// The interned text with id `id` (a name or a thread).
    pub fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }

    /// Whether some event of the file has `text` as its category or name, when known:
    /// for a text of `trace_model::ASKED_SYMBOLS` in a Chrome JSON capture.
    pub fn has_symbol(&self, text: &str) -> Option<bool> {
        let bit = trace_model::asked_bits(text);
        if bit == 0 {
            return None;
        }
        self.asked_symbols.map(|bits| bits & bit != 0)
    }

    /// HTA's kernel type of the text with id `id` ([`crate::hta::hta_kernel_type`]).
    pub fn hta_type(&self, id: u32) -> HtaKernelType {
        self.hta_types[id as usize]
    }

    /// A timeline of `names` and nothing else yet (its rows are set by the caller);
    /// HTA's kernel type of each name is computed here, once.
    pub fn new(path: PathBuf, rank: Option<i64>, names: Vec<String>) -> Timeline {
        let hta_types = names.iter().map(|n| hta_kernel_type(n)).collect();
        Timeline {
            path,
            rank,
            names,
            gpu: Vec::new(),
            host: Vec::new(),
            syncs: Vec::new(),
            steps: Vec::new(),
            fractional_us: false,
            first_event_ts: None,
            stream_ops: Vec::new(),
            stream_host: Vec::new(),
            hta_origin: None,
            asked_symbols: None,
            memory_bw: FastMap::default(),
            hta_int_ranges: HtaIntRanges::default(),
            hta_types,
        }
    }

    /// The timeline as the tool's HTA summary has always seen it:
    /// [`Timeline::into_hta_view_with`] with [`HtaView::SUMMARY`].
    pub fn into_hta_view(self) -> Timeline {
        self.into_hta_view_with(&HtaView::SUMMARY)
    }

    /// The timeline as Holistic Trace Analysis 0.5.0 sees it (`hta/common/trace_parser.py`,
    /// `hta/common/trace.py`) under `view`:
    /// - when any timestamp has a fraction of a microsecond, every start is rounded up and
    ///   every end down to whole microseconds;
    /// - with [`HtaView::hta_gpu_rule`], the CUDA synchronisation events HTA counts as GPU
    ///   work and the [`Timeline::stream_ops`] its GPU filter takes join `gpu` as
    ///   [`GpuKind::Other`], and the other stream ops are [`Timeline::stream_host`];
    /// - with two or more ProfilerStep names ([`HtaView::multi_step`], else this rank's),
    ///   HTA's `_filter_irrelevant_gpu_kernels`: host events are kept when they start
    ///   before the last ProfilerStep starts (`include_last_profiler_step=False`) or, with
    ///   `True`, when their start from HTA's origin ([`HtaView::origin`]) is at or before
    ///   the last step's end in the file's own time (HTA compares its aligned `ts` with
    ///   the `end` it computed before aligning, so on a real capture every host event is
    ///   kept), and GPU activities when a kept host event has their correlation id; the
    ///   steps kept are those whose event is kept.
    pub fn into_hta_view_with(self, view: &HtaView) -> Timeline {
        let mut t = self;
        let stream_ops = std::mem::take(&mut t.stream_ops);
        if view.hta_gpu_rule {
            let mut sync_gpu = Vec::new();
            for y in &t.syncs {
                let counted = (y.stream >= 0 && y.correlation.is_some_and(|c| c >= 0))
                    || matches!(y.kind, SyncKind::Event | SyncKind::Context);
                if counted {
                    sync_gpu.push((y.kind, y.clone()));
                }
            }
            for (kind, y) in sync_gpu {
                let name = t.intern_late(kind.name());
                t.gpu.push(Gpu {
                    event_index: y.event_index,
                    name,
                    kind: GpuKind::Other,
                    device: y.device,
                    stream: y.stream,
                    start: y.start,
                    end: y.end,
                    correlation: y.correlation,
                    launch: y.runtime,
                });
            }
            let (gpu_work, host_side): (Vec<Gpu>, Vec<Gpu>) = stream_ops
                .into_iter()
                .partition(|g| g.stream >= 0 && g.correlation.is_some_and(|c| c >= 0));
            t.gpu.extend(gpu_work);
            t.stream_host = host_side;
        }
        if t.fractional_us {
            let up =
                |v: i64| v.div_euclid(1000) * 1000 + if v.rem_euclid(1000) > 0 { 1000 } else { 0 };
            let down = |v: i64| v.div_euclid(1000) * 1000;
            for g in t.gpu.iter_mut().chain(t.stream_host.iter_mut()) {
                let (s, e) = (up(g.start), down(g.end));
                g.start = s;
                g.end = e;
            }
            for h in &mut t.host {
                let (s, e) = (up(h.start), down(h.end));
                h.start = s;
                h.end = e;
            }
            for y in &mut t.syncs {
                let (s, e) = (up(y.start), down(y.end));
                y.start = s;
                y.end = e;
            }
            if view.filter_host {
                t.steps = t
                    .steps
                    .iter()
                    .map(|&(k, s, e)| (k, up(s), down(e)))
                    .collect();
            }
            t.first_event_ts = t.first_event_ts.map(up);
        }
        let multi_step = view.multi_step.unwrap_or_else(|| {
            let distinct: std::collections::BTreeSet<i64> = t.steps.iter().map(|s| s.0).collect();
            distinct.len() >= 2
        });
        if multi_step && !t.steps.is_empty() {
            if view.filter_host {
                t.filter_to_steps(view.include_last_profiler_step, view.origin);
            } else {
                let last_end = t.steps.iter().map(|s| s.2).max().unwrap_or(i64::MAX);
                let host = &t.host;
                t.gpu
                    .retain(|g| g.launch.is_some_and(|l| host[l].start <= last_end));
            }
        }
        // Sorted already but for the stream ops and syncs appended above: the stable sort
        // merges those runs (the keys are unique, so the order is an unstable sort's).
        t.gpu.sort_by_key(|g| (g.start, g.end, g.event_index));
        t
    }

    /// HTA's `_filter_irrelevant_gpu_kernels` on a timeline with steps (see
    /// [`Timeline::into_hta_view_with`]); `origin` is HTA's time origin, in ns.
    fn filter_to_steps(&mut self, include_last: bool, origin: i64) {
        let last_start = self.steps.iter().map(|s| s.1).max().unwrap_or(i64::MAX);
        let last_end = self.steps.iter().map(|s| s.2).max().unwrap_or(i64::MAX);
        // HTA's `ts` is aligned to its origin when it filters, its `end` is not.
        let keep = |start: i64| {
            if include_last {
                start.saturating_sub(origin) <= last_end
            } else {
                start < last_start
            }
        };
        let mut new_index: Vec<Option<usize>> = vec![None; self.host.len()];
        let mut kept = Vec::with_capacity(self.host.len());
        for (i, h) in std::mem::take(&mut self.host).into_iter().enumerate() {
            if keep(h.start) {
                new_index[i] = Some(kept.len());
                kept.push(h);
            }
        }
        self.host = kept;
        self.stream_host.retain(|g| keep(g.start));
        // A set with the workspace's fast hash (std's SipHash set was 18M instructions of
        // df_index_resolver's 26M `into_hta_view_with`, callgrind): only membership is asked.
        let mut correlations: std::collections::HashSet<
            i64,
            std::hash::BuildHasherDefault<trace_model::FxHasher>,
        > = std::collections::HashSet::with_capacity_and_hasher(
            self.host.len(),
            Default::default(),
        );
        correlations.extend(self.host.iter().filter_map(|h| h.correlation));
        self.gpu
            .retain(|g| g.correlation.is_some_and(|c| correlations.contains(&c)));
        for g in &mut self.gpu {
            g.launch = g.launch.and_then(|l| new_index[l]);
        }
        for y in &mut self.syncs {
            y.runtime = y.runtime.and_then(|l| new_index[l]);
        }
        self.steps.retain(|s| keep(s.1));
    }

    /// The earliest start of any event (host, GPU, sync), in ns, rounded up to a whole µs
    /// when the trace has fractional timestamps (as HTA's parser rounds them).
    pub fn earliest_start(&self) -> Option<i64> {
        let starts = self.host.iter().map(|h| h.start);
        let starts = starts.chain(self.gpu.iter().map(|g| g.start));
        let starts = starts.chain(self.syncs.iter().map(|y| y.start));
        let min = starts
            .chain(self.stream_ops.iter().map(|g| g.start))
            .min()?;
        Some(if self.fractional_us {
            min.div_euclid(1000) * 1000 + if min.rem_euclid(1000) > 0 { 1000 } else { 0 }
        } else {
            min
        })
    }

    /// The id of `text` in [`Timeline::names`], added (with its HTA type) when absent.
    fn intern_late(&mut self, text: &str) -> u32 {
        if let Some(i) = self.names.iter().position(|n| n == text) {
            return i as u32;
        }
        self.names.push(text.to_owned());
        self.hta_types.push(hta_kernel_type(text));
        (self.names.len() - 1) as u32
    }
}

/// How [`Timeline::into_hta_view_with`] shapes a timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HtaView {
    /// HTA's `include_last_profiler_step`.
    pub include_last_profiler_step: bool,
    /// Whether the trace set has two or more ProfilerStep names (HTA counts them over all
    /// ranks' symbols); None: this rank's.
    pub multi_step: Option<bool>,
    /// Whether host events outside the steps are dropped and GPU activities are kept by
    /// correlation id, as HTA 0.5.0 does (false: only activities launched after the last
    /// step's end are dropped, the summary's rule).
    pub filter_host: bool,
    /// Whether the events HTA counts as GPU work beyond kernels, memcpy and memset (CUDA
    /// synchronisation events, host events with a stream) join `gpu`.
    pub hta_gpu_rule: bool,
    /// HTA's time origin over the trace set (the earliest `ts` of all ranks, in ns), which
    /// its step filter subtracts from the starts but not from the step's end.
    pub origin: i64,
}

impl HtaView {
    /// The view of the tool's HTA summary: the last step included, no sync events as GPU
    /// work.
    pub const SUMMARY: HtaView = HtaView {
        include_last_profiler_step: true,
        multi_step: None,
        filter_host: false,
        hta_gpu_rule: false,
        origin: 0,
    };

    /// HTA 0.5.0's `TraceAnalysis(include_last_profiler_step=…)` over a trace set whose
    /// earliest event starts at `origin` (ns).
    pub fn hta(include_last_profiler_step: bool, multi_step: bool, origin: i64) -> HtaView {
        HtaView {
            include_last_profiler_step,
            multi_step: Some(multi_step),
            filter_host: true,
            hta_gpu_rule: true,
            origin,
        }
    }
}
