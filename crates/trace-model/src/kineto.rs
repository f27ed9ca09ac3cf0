//! What a Kineto (PyTorch profiler) trace records beyond the model's rows, kept for the
//! analyses that follow Holistic Trace Analysis (HTA): CUDA synchronisation events, which
//! runtime calls are driver calls, copy bandwidths, host events' streams, and the facts
//! about the file's times HTA's parser uses. Only chrome-reader fills it (a capture of
//! another format has none: [`crate::TraceMeta::kineto`] is `None`), and each list holds
//! only the events that have the value, so a capture without them pays one pointer.

use crate::{Nanos, ThreadId};

/// What a CUDA synchronisation event (`cat: cuda_sync`, recorded when the profiler runs
/// with `enable_cuda_sync_events`) waits for; Kineto names them by `cuda_sync_kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SyncKind {
    /// `cudaDeviceSynchronize`: the host waits for every stream of the device.
    Context,
    /// `cudaStreamSynchronize`: the host waits for one stream.
    Stream,
    /// `cudaEventSynchronize`: the host waits for the work before a `cudaEventRecord`.
    Event,
    /// `cudaStreamWaitEvent`: a stream waits for the work before a `cudaEventRecord`.
    StreamWaitEvent,
}

impl SyncKind {
    /// The event's name in a Kineto trace.
    pub fn name(self) -> &'static str {
        match self {
            SyncKind::Context => "Context Sync",
            SyncKind::Stream => "Stream Sync",
            SyncKind::Event => "Event Sync",
            SyncKind::StreamWaitEvent => "Stream Wait Event",
        }
    }

    /// The kind a Kineto `cuda_sync` event of this name is; `None` for any other name.
    pub fn from_name(name: &str) -> Option<SyncKind> {
        Some(match name {
            "Context Sync" => SyncKind::Context,
            "Stream Sync" => SyncKind::Stream,
            "Event Sync" => SyncKind::Event,
            "Stream Wait Event" => SyncKind::StreamWaitEvent,
            _ => return None,
        })
    }
}

/// A CUDA synchronisation event (`cat: cuda_sync`) as the trace gives it. The same event
/// is also one of the capture's host events (of kind `Other`, on its thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncEvent {
    /// Start on the capture's time axis.
    pub start: Nanos,
    /// Duration.
    pub dur: Nanos,
    /// Position of the event in the file (`traceEvents`).
    pub source_index: u64,
    /// The thread it is recorded on.
    pub thread: ThreadId,
    /// What it waits for (from the event's name).
    pub kind: SyncKind,
    /// `args.device`, when given.
    pub device: Option<i64>,
    /// `args.stream`: the stream synchronised (`Stream Sync`) or made to wait (`Stream
    /// Wait Event`), when given.
    pub stream: Option<i64>,
    /// `args.correlation` as written (the id shared with the runtime call that issued it).
    pub correlation: Option<i64>,
    /// `args.wait_on_stream`: the stream the awaited event was recorded on.
    pub wait_on_stream: Option<i64>,
    /// `args.wait_on_cuda_event_record_corr_id`: the correlation id of the awaited
    /// `cudaEventRecord` call.
    pub wait_on_record: Option<i64>,
}

/// The range of `args.stream` and of `args.correlation` over the complete events HTA's
/// parser keeps (a category but `python_function` and `Trace`), with -1 for an event
/// without one, and of those events' positions in the file: HTA stores each column in the
/// smallest integer type that holds its range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgRanges {
    /// (min, max) of `args.stream`.
    pub stream: (i64, i64),
    /// (min, max) of `args.correlation`.
    pub correlation: (i64, i64),
    /// (min, max) of the events' positions (`(i64::MAX, i64::MIN)` without events).
    pub index: (i64, i64),
}

impl Default for ArgRanges {
    fn default() -> ArgRanges {
        ArgRanges {
            stream: (-1, -1),
            correlation: (-1, -1),
            index: (i64::MAX, i64::MIN),
        }
    }
}

impl ArgRanges {
    /// Widens the ranges by one event's values.
    pub fn add(&mut self, stream: Option<i64>, correlation: Option<i64>, index: i64) {
        let widen = |r: &mut (i64, i64), v: i64| *r = (r.0.min(v), r.1.max(v));
        widen(&mut self.stream, stream.unwrap_or(-1));
        widen(&mut self.correlation, correlation.unwrap_or(-1));
        widen(&mut self.index, index);
    }

    /// The ranges of both.
    pub fn merge(self, o: ArgRanges) -> ArgRanges {
        let m = |a: (i64, i64), b: (i64, i64)| (a.0.min(b.0), a.1.max(b.1));
        ArgRanges {
            stream: m(self.stream, o.stream),
            correlation: m(self.correlation, o.correlation),
            index: m(self.index, o.index),
        }
    }
}

/// The texts that HTA 0.5.0's `TraceAnalysis` asks its symbol table for (which holds the
/// category and the name of every event) before some methods run:
/// `get_gpu_user_annotation_breakdown`, `get_gpu_kernels_with_user_annotations` and
/// `get_cupti_counter_data_with_operators` answer nothing without them.
/// [`KinetoDetails::asked`] has bit `i` set when some event's category or name is
/// exactly `ASKED_SYMBOLS[i]`.
pub const ASKED_SYMBOLS: [&str; 3] = [
    "gpu_user_annotation",
    "user_annotation",
    "cuda_profiler_range",
];

/// The bits of [`ASKED_SYMBOLS`] that `text` is exactly (at most one).
pub fn asked_bits(text: &str) -> u8 {
    match text {
        "gpu_user_annotation" => 1,
        "user_annotation" => 2,
        "cuda_profiler_range" => 4,
        _ => 0,
    }
}

/// What a Kineto trace records beyond the model's rows (see the module's doc). The lists
/// keyed by source index are sorted by it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KinetoDetails {
    /// The `cuda_sync` events of a known kind, in file order.
    pub syncs: Vec<SyncEvent>,
    /// Source indices of the host events of category `cuda_driver` (CUDA driver calls
    /// such as `cuLaunchKernel`; the model's kind is `Launch` or `Runtime`, as for runtime
    /// calls).
    pub driver_calls: Vec<u64>,
    /// `args["memory bandwidth (GB/s)"]` by source index (Kineto writes it on copies and
    /// sets).
    pub bandwidth: Vec<(u64, f64)>,
    /// `args.stream` of the host events that carry one (a Triton launch's `cpu_op`), by
    /// source index.
    pub host_streams: Vec<(u64, i64)>,
    /// Whether some event's `ts` has a fraction of a microsecond.
    pub fractional_us: bool,
    /// `ts` of the first event of `traceEvents`, when it has one.
    pub first_event_ts: Option<Nanos>,
    /// HTA's time origin: the earliest start of a complete event with a category other
    /// than `Trace` (not rounded).
    pub hta_origin: Option<Nanos>,
    /// The ranges HTA's parser sees ([`ArgRanges`]).
    pub arg_ranges: ArgRanges,
    /// Source indices of the GPU activities without `args.stream`: the model puts them on
    /// the stream their `tid` (or, in a JAX trace, their line) names (the
    /// `kernel-without-stream` diagnostic); HTA's GPU filter (`stream >= 0`) leaves them
    /// out.
    pub without_stream: Vec<u64>,
    /// The complete events whose `dur` was negative (`Some`, in ns) or absent (`None`), by
    /// source index: the model gives them duration 0 (the `negative-duration` and
    /// `missing-duration` diagnostics); HTA's parser drops an event without `dur` and
    /// keeps a negative one as it is.
    pub odd_durations: Vec<(u64, Option<i64>)>,
    /// Which of [`ASKED_SYMBOLS`] some event of `traceEvents` has as its category or its
    /// name, exactly as written (bit `i`: `ASKED_SYMBOLS[i]`; see [`asked_bits`]).
    pub asked: u8,
}

impl KinetoDetails {
    /// Whether the host event with this source index is a CUDA driver call.
    pub fn is_driver_call(&self, source_index: u64) -> bool {
        self.driver_calls.binary_search(&source_index).is_ok()
    }

    /// The memory bandwidth (GB/s) the event with this source index carries.
    pub fn bandwidth(&self, source_index: u64) -> Option<f64> {
        let at = (self.bandwidth).binary_search_by_key(&source_index, |&(i, _)| i);
        at.ok().map(|k| self.bandwidth[k].1)
    }

    /// `args.stream` of the host event with this source index.
    pub fn host_stream(&self, source_index: u64) -> Option<i64> {
        let at = (self.host_streams).binary_search_by_key(&source_index, |&(i, _)| i);
        at.ok().map(|k| self.host_streams[k].1)
    }

    /// Sorts the lists keyed by source index (readers push them in any order).
    pub fn sort(&mut self) {
        self.syncs.sort_unstable_by_key(|y| y.source_index);
        self.driver_calls.sort_unstable();
        self.driver_calls.dedup();
        self.bandwidth.sort_unstable_by_key(|&(i, _)| i);
        self.host_streams.sort_unstable_by_key(|&(i, _)| i);
        self.without_stream.sort_unstable();
        self.without_stream.dedup();
        self.odd_durations.sort_unstable_by_key(|&(i, _)| i);
    }

    /// Whether the GPU activity with this source index had no `args.stream`.
    pub fn lacks_stream(&self, source_index: u64) -> bool {
        self.without_stream.binary_search(&source_index).is_ok()
    }

    /// The `dur` (ns) the event with this source index had in the file, where the model
    /// changed it to 0: `Some(Some(d))` negative, `Some(None)` absent; `None` for every
    /// other event (its duration is the model's).
    pub fn odd_duration(&self, source_index: u64) -> Option<Option<i64>> {
        let at = (self.odd_durations).binary_search_by_key(&source_index, |&(i, _)| i);
        at.ok().map(|k| self.odd_durations[k].1)
    }
}
