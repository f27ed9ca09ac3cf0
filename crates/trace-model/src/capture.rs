//! The capture: everything a reader understood of one profile (one rank or one host).

use std::fmt;
use std::num::NonZeroU32;

use crate::side::SideTable;
use crate::{Diagnostics, Interner, KernelClass, Nanos, StringId};

/// Which file format the capture came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// PyTorch profiler (Kineto) Chrome trace JSON.
    KinetoJson,
    /// Chrome trace JSON written by JAX/XProf from an XSpace (pid = plane, tid = line).
    JaxTraceJson,
    /// XSpace protobuf (`*.xplane.pb`).
    XPlane,
    /// Chrome trace JSON from another producer.
    OtherJson,
    /// Nsight Systems SQLite export (`nsys export --type sqlite`).
    NsysSqlite,
    /// Perfetto protobuf trace written by rocprofv3 (`--output-format pftrace`).
    RocprofPerfetto,
    /// rocprofv3 CSV files (`*_kernel_trace.csv`, `*_hip_api_trace.csv`, ...).
    RocprofCsv,
    /// rocprofv3 SQLite database (rocpd, `*_results.db`).
    Rocpd,
    /// Legacy rocprof v1 kernel trace (`results.csv` / `results.db`).
    RocprofV1,
    /// rocprofv3 JSON (`--output-format json`, `*_results.json`): one
    /// `rocprofiler-sdk-tool` object of agents, kernel symbols and buffer records.
    RocprofJson,
}

impl Format {
    /// The format in words, for reports (`Kineto Chrome trace (torch.profiler)`).
    pub fn describe(self) -> &'static str {
        match self {
            Format::KinetoJson => "Kineto Chrome trace (torch.profiler)",
            Format::JaxTraceJson => "JAX Chrome trace (converted from XSpace)",
            Format::XPlane => "XSpace protobuf (XProf)",
            Format::OtherJson => "Chrome trace JSON",
            Format::NsysSqlite => "Nsight Systems SQLite export (nsys export --type sqlite)",
            Format::RocprofPerfetto => {
                "Perfetto protobuf trace (rocprofv3 --output-format pftrace)"
            }
            Format::RocprofCsv => "rocprofv3 CSV trace (--output-format csv)",
            Format::Rocpd => "rocpd SQLite database (rocprofv3)",
            Format::RocprofV1 => "rocprof v1 kernel trace (results.csv / results.db)",
            Format::RocprofJson => "rocprofv3 JSON (--output-format json)",
        }
    }
}

/// GPU vendor, from device properties or kernel/API names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Vendor {
    /// NVIDIA (CUDA).
    Nvidia,
    /// AMD (ROCm/HIP).
    Amd,
    /// Neither the properties nor the names told.
    Unknown,
}

macro_rules! index_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        ///
        /// Stored as `index + 1` in a `NonZeroU32`, so that an `Option` of it is as small as
        /// the id (activities and host events hold several).
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(NonZeroU32);

        impl $name {
            /// The id of the entry at `index` of its table in the capture. Panics on
            /// `u32::MAX`: tables hold fewer entries.
            pub const fn new(index: u32) -> Self {
                match NonZeroU32::new(index.wrapping_add(1)) {
                    Some(id) => $name(id),
                    None => panic!("invariant: a capture's tables hold fewer than 2^32 - 1 entries"),
                }
            }

            /// The entry's position in its table in the capture.
            pub const fn index(self) -> usize {
                (self.0.get() - 1) as usize
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_tuple(stringify!($name)).field(&self.index()).finish()
            }
        }
    };
}

index_id!(
    /// Index of a device in [`Capture::devices`].
    DeviceId
);
index_id!(
    /// Index of a stream in [`Capture::streams`].
    StreamId
);
index_id!(
    /// Index of a host thread in [`Capture::threads`].
    ThreadId
);
index_id!(
    /// Index of a host event in [`Capture::host_events`].
    HostEventId
);
index_id!(
    /// Index of an XLA module in [`Capture::hlo_modules`].
    ModuleId
);

/// Capability figures of a device, as the profiler recorded them (labelled `read`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceProperties {
    /// Marketing name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: Option<String>,
    /// CUDA compute capability `(major, minor)`.
    pub compute_capability: Option<(i64, i64)>,
    /// Device memory in bytes.
    pub total_memory_bytes: Option<u64>,
    /// Streaming multiprocessors (compute units on AMD).
    pub multiprocessors: Option<u64>,
    /// Core clock in kHz.
    pub clock_rate_khz: Option<u64>,
    /// Peak memory bandwidth in bytes per second.
    pub memory_bandwidth_bytes_per_s: Option<f64>,
}

/// One GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    /// Its position in [`Capture::devices`].
    pub id: DeviceId,
    /// The device number the profiler used (`args.device`, the plane's `GPU:N`).
    pub ordinal: i64,
    /// Who made it.
    pub vendor: Vendor,
    /// What the profiler recorded about it.
    pub properties: DeviceProperties,
}

/// One GPU stream (queue) on one device.
#[derive(Debug, Clone, PartialEq)]
pub struct Stream {
    /// Its position in [`Capture::streams`].
    pub id: StreamId,
    /// The device it runs on.
    pub device: DeviceId,
    /// The stream number the profiler used (`args.stream`, `Stream #N`).
    pub ordinal: i64,
    /// The stream's display name, if the capture gave one (`Stream #16(Kernel)`).
    pub name: Option<StringId>,
}

/// A host thread that recorded events.
#[derive(Debug, Clone, PartialEq)]
pub struct HostThread {
    /// Its position in [`Capture::threads`].
    pub id: ThreadId,
    /// The process id the profiler recorded.
    pub pid: i64,
    /// The thread id the profiler recorded.
    pub tid: i64,
    /// The thread's name, if the capture gave one.
    pub name: Option<StringId>,
    /// The process id as the trace wrote it, when it was not a 64-bit integer (a string,
    /// a number beyond i64 or with a fraction): `pid` is then a key standing for it.
    pub pid_text: Option<StringId>,
    /// The thread id as the trace wrote it, when it was not a 64-bit integer (see
    /// `pid_text`).
    pub tid_text: Option<StringId>,
}

/// Memory-copy direction (serde: snake case, `host_to_device`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum MemcpyDirection {
    /// Host to device.
    HostToDevice,
    /// Device to host.
    DeviceToHost,
    /// Within one device.
    DeviceToDevice,
    /// Between two devices.
    PeerToPeer,
    /// Host to host (pinned staging).
    HostToHost,
    /// The name did not say.
    Unknown,
}

impl MemcpyDirection {
    /// The profilers' short form: `HtoD`, `DtoH`, `DtoD`, `PtoP`, `HtoH`, `unknown`.
    pub fn short(self) -> &'static str {
        match self {
            MemcpyDirection::HostToDevice => "HtoD",
            MemcpyDirection::DeviceToHost => "DtoH",
            MemcpyDirection::DeviceToDevice => "DtoD",
            MemcpyDirection::PeerToPeer => "PtoP",
            MemcpyDirection::HostToHost => "HtoH",
            MemcpyDirection::Unknown => "unknown",
        }
    }
}

/// What a GPU activity is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ActivityKind {
    /// A compute kernel (including collective kernels).
    Kernel,
    /// A memory copy.
    Memcpy,
    /// A memory set.
    Memset,
}

/// The `correlation` an activity or host event without one holds: readers never see the id
/// `u64::MAX` (CUPTI's and ROCm's ids are 32-bit, Kineto's JSON ones non-negative `i64`), so it
/// marks "none" and an `Option<u64>` (16 bytes) is not needed in every row.
const NO_CORRELATION: u64 = u64::MAX;

fn encode_correlation(correlation: Option<u64>) -> u64 {
    correlation.unwrap_or(NO_CORRELATION)
}

fn decode_correlation(stored: u64) -> Option<u64> {
    (stored != NO_CORRELATION).then_some(stored)
}

/// One kernel, memcpy or memset on a GPU stream.
///
/// Built with [`GpuActivity::new`], which leaves every optional field empty; readers set
/// the correlation id and HLO op they found and push it with
/// [`CaptureBuilder::push_activity`](crate::CaptureBuilder::push_activity), which keeps what only some
/// activities have beside the rows: external and graph ids and bytes in side tables, read
/// back with [`Capture::activity_external_id`] and its siblings, the XLA module and program
/// id as one entry of [`Capture::hlo_modules`] per distinct pair. `launch` is set by
/// [`CaptureBuilder::finish`](crate::CaptureBuilder::finish).
///
/// Activities are most of a capture's memory, so the row holds only what most activities
/// have, and ids whose `Option` would double their size are stored with a sentinel.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct GpuActivity {
    /// Start on the capture's time axis.
    pub start: Nanos,
    /// Duration (never negative in a finished capture).
    pub dur: Nanos,
    /// `NO_CORRELATION` when none.
    correlation: u64,
    /// Index of the event in the source file (for error messages and joins); readers give
    /// each event its own.
    pub source_index: u64,
    /// The stream it ran on.
    pub stream: StreamId,
    /// Kernel or copy name.
    pub name: StringId,
    launch: Option<HostEventId>,
    hlo_op: Option<StringId>,
    module: Option<ModuleId>,
    /// Kernel, memcpy or memset.
    pub kind: ActivityKind,
    /// Classification of the activity by name (and kind for copies).
    pub class: KernelClass,
}

impl GpuActivity {
    /// An activity with what every reader knows; the optional fields (correlation, HLO op,
    /// launch) start empty.
    pub fn new(
        stream: StreamId,
        start: Nanos,
        dur: Nanos,
        name: StringId,
        kind: ActivityKind,
        class: KernelClass,
        source_index: u64,
    ) -> Self {
        GpuActivity {
            start,
            dur,
            correlation: NO_CORRELATION,
            source_index,
            stream,
            name,
            launch: None,
            hlo_op: None,
            module: None,
            kind,
            class,
        }
    }

    /// `start + dur`.
    pub fn end(&self) -> Nanos {
        self.start + self.dur
    }

    /// Correlation id linking the activity to its host launch.
    pub fn correlation(&self) -> Option<u64> {
        decode_correlation(self.correlation)
    }

    /// Sets the correlation id. `Some(u64::MAX)` reads back as `None`: that value marks
    /// "none" in the row, and no reader meets it (CUPTI's and ROCm's ids are 32-bit,
    /// Kineto's JSON ones non-negative `i64`).
    pub fn set_correlation(&mut self, correlation: Option<u64>) {
        self.correlation = encode_correlation(correlation);
    }

    /// The host call that launched it (runtime or driver API), if
    /// [`CaptureBuilder::finish`](crate::CaptureBuilder::finish) found it.
    pub fn launch(&self) -> Option<HostEventId> {
        self.launch
    }

    pub(crate) fn set_launch(&mut self, launch: Option<HostEventId>) {
        self.launch = launch;
    }

    /// XLA instruction that issued the activity (JAX captures).
    pub fn hlo_op(&self) -> Option<StringId> {
        self.hlo_op
    }

    /// Sets the XLA instruction.
    pub fn set_hlo_op(&mut self, hlo_op: Option<StringId>) {
        self.hlo_op = hlo_op;
    }

    /// The XLA module (and program) that issued the activity, an entry of
    /// [`Capture::hlo_modules`] (JAX captures).
    pub fn module(&self) -> Option<ModuleId> {
        self.module
    }

    pub(crate) fn set_module(&mut self, module: Option<ModuleId>) {
        self.module = module;
    }
}

impl fmt::Debug for GpuActivity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GpuActivity")
            .field("stream", &self.stream)
            .field("start", &self.start)
            .field("dur", &self.dur)
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("class", &self.class)
            .field("correlation", &self.correlation())
            .field("launch", &self.launch)
            .field("hlo_op", &self.hlo_op)
            .field("module", &self.module)
            .field("source_index", &self.source_index)
            .finish()
    }
}

/// What only some activities have, given to
/// [`CaptureBuilder::push_activity`](crate::CaptureBuilder::push_activity): the builder keeps each
/// in a side table of the capture (or, for the module and program, one entry per distinct
/// pair), so rows without them cost nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ActivityDetails {
    /// Kineto's `External id`: links to the CPU op that issued the launch.
    pub external_id: Option<i64>,
    /// Bytes moved or set (memcpy/memset).
    pub bytes: Option<u64>,
    /// CUDA/HIP graph id, for kernels launched from a graph.
    pub graph_id: Option<i64>,
    /// XLA module that issued the activity (JAX captures).
    pub hlo_module: Option<StringId>,
    /// XLA program id of the module (JAX captures).
    pub program_id: Option<i64>,
}

/// An XLA module as activities name it: its name and program id, each if recorded (JAX
/// captures). A capture holds one per distinct pair, in [`Capture::hlo_modules`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HloModule {
    /// The module's name (`jit_train_step`).
    pub name: Option<StringId>,
    /// XLA's program id of the compiled module.
    pub program_id: Option<i64>,
}

/// What a host event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum HostKind {
    /// A runtime/driver call that launches GPU work (kernel launch, async memcpy/memset, graph launch).
    Launch,
    /// Any other runtime/driver call (synchronization, queries).
    Runtime,
    /// A framework operator (`cpu_op`, XLA op on the host).
    CpuOp,
    /// A user annotation (`record_function`, `ProfilerStep#N`, NVTX-like ranges).
    Annotation,
    /// A Python function frame from the Python tracer.
    PythonFrame,
    /// Anything else on a host thread.
    Other,
}

/// One event on a host thread.
///
/// Built with [`HostEvent::new`]; Kineto's `External id` goes to the builder with it
/// ([`CaptureBuilder::push_host_event`](crate::CaptureBuilder::push_host_event)) and is read back with
/// [`Capture::host_external_id`].
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct HostEvent {
    /// Start on the capture's time axis.
    pub start: Nanos,
    /// Duration (never negative in a finished capture).
    pub dur: Nanos,
    /// `NO_CORRELATION` when none.
    correlation: u64,
    /// Index of the event in the source file; readers give each event its own.
    pub source_index: u64,
    /// The thread it ran on.
    pub thread: ThreadId,
    /// Operator, API or annotation name.
    pub name: StringId,
    parent_op: Option<HostEventId>,
    /// What the event is; a runtime call that launched an activity becomes a `Launch`.
    pub kind: HostKind,
}

impl HostEvent {
    /// An event with no correlation id and no parent op.
    pub fn new(
        thread: ThreadId,
        start: Nanos,
        dur: Nanos,
        name: StringId,
        kind: HostKind,
        source_index: u64,
    ) -> Self {
        HostEvent {
            start,
            dur,
            correlation: NO_CORRELATION,
            source_index,
            thread,
            name,
            parent_op: None,
            kind,
        }
    }

    /// `start + dur`.
    pub fn end(&self) -> Nanos {
        self.start + self.dur
    }

    /// Correlation id joining a launch to its GPU activities.
    pub fn correlation(&self) -> Option<u64> {
        decode_correlation(self.correlation)
    }

    /// Sets the correlation id; `Some(u64::MAX)` reads back as `None`, as for activities.
    pub fn set_correlation(&mut self, correlation: Option<u64>) {
        self.correlation = encode_correlation(correlation);
    }

    /// For launches and runtime calls: the innermost CPU op around it on the same thread
    /// (set by [`CaptureBuilder::finish`](crate::CaptureBuilder::finish)).
    pub fn parent_op(&self) -> Option<HostEventId> {
        self.parent_op
    }

    pub(crate) fn set_parent_op(&mut self, parent_op: Option<HostEventId>) {
        self.parent_op = parent_op;
    }
}

impl fmt::Debug for HostEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostEvent")
            .field("thread", &self.thread)
            .field("start", &self.start)
            .field("dur", &self.dur)
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("correlation", &self.correlation())
            .field("parent_op", &self.parent_op)
            .field("source_index", &self.source_index)
            .finish()
    }
}

/// A range on a GPU stream named by the user (`gpu_user_annotation`).
#[derive(Debug, Clone, PartialEq)]
pub struct GpuAnnotation {
    /// The stream it covers.
    pub stream: StreamId,
    /// Start on the capture's time axis.
    pub start: Nanos,
    /// Duration.
    pub dur: Nanos,
    /// The user's name for the range.
    pub name: StringId,
}

/// Where a step boundary came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StepSource {
    /// `ProfilerStep#N` host annotations (Kineto).
    ProfilerStep,
    /// `step_num` stats or `StepMarker` events (JAX).
    StepMarker,
    /// Repeated executions of the same XLA module.
    ModuleExecution,
    /// A device's own `Steps` line (TensorFlow's XSpace: one per GPU, each the span of
    /// that GPU's work in the step); the capture's step is their union, the per-device
    /// ones are in [`TraceMeta::device_steps`].
    DeviceStepsLine,
}

/// One training/inference step, as a host-side time range.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The step number the capture gave (`ProfilerStep#12` is 12).
    pub number: i64,
    /// Start on the capture's time axis.
    pub start: Nanos,
    /// End on the capture's time axis.
    pub end: Nanos,
    /// Where the boundary came from.
    pub source: StepSource,
}

/// A process group from Kineto's `distributedInfo.pg_config`.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessGroup {
    /// `pg_name`.
    pub name: String,
    /// `pg_desc`.
    pub description: String,
    /// The global ranks in the group.
    pub ranks: Vec<i64>,
}

/// Capture-wide metadata.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TraceMeta {
    /// This capture's rank in a distributed job, if recorded.
    pub rank: Option<i64>,
    /// Ranks in the job, if recorded.
    pub world_size: Option<i64>,
    /// Collective backend, e.g. `nccl`.
    pub backend: Option<String>,
    /// Process groups, if recorded.
    pub process_groups: Vec<ProcessGroup>,
    /// Unix-epoch nanoseconds of time zero of this capture's axis, if recorded.
    pub base_time_ns: Option<i64>,
    /// Producer and version, e.g. `Kineto schemaVersion 1`, `jaxlib 0.8.0`.
    pub producer: Option<String>,
    /// Start and end of the profiling window on the capture's axis, if recorded.
    pub window: Option<(Nanos, Nanos)>,
    /// Every device the file's metadata describes (Kineto's `deviceProperties`), also
    /// those without activity, which [`Capture::devices`] leaves out; their `id` is not a
    /// capture device id and means nothing.
    pub described_devices: Vec<Device>,
    /// Steps a device's own timeline gives (TensorFlow's per-GPU `Steps` line), with the
    /// device: empty for formats that record steps on the host only.
    pub device_steps: Vec<(DeviceId, Step)>,
    /// What a Kineto trace records beyond the rows (sync events, driver calls, copy
    /// bandwidths, HTA's time facts): chrome-reader fills it for a Kineto trace, other
    /// readers leave it `None`.
    pub kineto: Option<Box<crate::KinetoDetails>>,
}

/// The shape arguments PyTorch's profiler records on a CPU op with `record_shapes=True`,
/// each the JSON text of its array as the file wrote it, interned: `Input Dims`
/// (`[[8944, 1024], [1024, 2816]]`), `Input type` and `Concrete Inputs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpShapes {
    /// `Input Dims`: one array per input, empty for non-tensors.
    pub dims: StringId,
    /// `Input type`, when recorded.
    pub types: Option<StringId>,
    /// `Concrete Inputs` (scalars' values), when recorded.
    pub concrete: Option<StringId>,
}

/// One profile: devices, streams, threads, GPU activities and host events, read-only.
///
/// Only [`CaptureBuilder::finish`](crate::CaptureBuilder::finish) makes one, so its invariants hold for every `Capture`:
/// `activities` are sorted by `(stream, start, source_index)` and `host_events` by
/// `(thread, start, source_index)`, so per-stream and per-thread slices are contiguous;
/// every start and end lies within ±[`Nanos::LIMIT`] and no duration is negative; launches
/// and parent ops are linked.
#[derive(Debug, Clone)]
pub struct Capture {
    pub(crate) format: Format,
    pub(crate) strings: Interner,
    pub(crate) devices: Vec<Device>,
    pub(crate) streams: Vec<Stream>,
    pub(crate) threads: Vec<HostThread>,
    pub(crate) activities: Vec<GpuActivity>,
    pub(crate) host_events: Vec<HostEvent>,
    pub(crate) gpu_annotations: Vec<GpuAnnotation>,
    pub(crate) steps: Vec<Step>,
    pub(crate) meta: TraceMeta,
    pub(crate) diagnostics: Diagnostics,
    pub(crate) hlo_modules: Vec<HloModule>,
    pub(crate) sides: SideTables,
}

/// Host events in an order where an enclosing CPU op comes before the ops inside it:
/// by thread, start, longest first, then as read.
pub fn nesting_order(e: &HostEvent) -> (ThreadId, Nanos, std::cmp::Reverse<Nanos>, u64) {
    (e.thread, e.start, std::cmp::Reverse(e.dur), e.source_index)
}

/// What only some activities and host events have, by source index (see `SideTable`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct SideTables {
    pub(crate) activity_external_ids: SideTable<i64>,
    pub(crate) activity_bytes: SideTable<u64>,
    pub(crate) activity_graph_ids: SideTable<i64>,
    pub(crate) host_external_ids: SideTable<i64>,
    pub(crate) host_shapes: SideTable<OpShapes>,
}

impl Capture {
    /// The file format it was read from.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Every interned string (names of activities, events, streams, threads).
    pub fn strings(&self) -> &Interner {
        &self.strings
    }

    /// The text of an interned string.
    pub fn name(&self, id: StringId) -> &str {
        self.strings.get(id)
    }

    /// The devices, in id order.
    pub fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// The streams, in id order.
    pub fn streams(&self) -> &[Stream] {
        &self.streams
    }

    /// The host threads, in id order.
    pub fn threads(&self) -> &[HostThread] {
        &self.threads
    }

    /// Every GPU activity, sorted by `(stream, start, source_index)`.
    pub fn activities(&self) -> &[GpuActivity] {
        &self.activities
    }

    /// Every host event, sorted by `(thread, start, source_index)`.
    pub fn host_events(&self) -> &[HostEvent] {
        &self.host_events
    }

    /// User annotations on GPU streams, in the order read.
    pub fn gpu_annotations(&self) -> &[GpuAnnotation] {
        &self.gpu_annotations
    }

    /// The steps, sorted by `(start, number)`.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// Capture-wide metadata.
    pub fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    /// Oddities the reader met and worked around.
    pub fn diagnostics(&self) -> &Diagnostics {
        &self.diagnostics
    }

    /// The diagnostics, to add more: they are the one part of a finished capture that
    /// no invariant depends on.
    pub fn diagnostics_mut(&mut self) -> &mut Diagnostics {
        &mut self.diagnostics
    }

    /// A copy of this capture with new times: `host[i]` and `activities[i]` are the new
    /// `(start, end)` of host event `i` and activity `i`, and `other` maps every other time
    /// on the capture's axis (steps, GPU annotations, the profiling window, device steps).
    /// For what-if checks: an "after" capture made by editing a capture's durations and
    /// re-timing it. `None` when the lengths do not match, an end precedes its start, a
    /// time leaves ±[`Nanos::LIMIT`], or the new times change the order of a thread's
    /// events or a stream's activities (the links between them are by position, so the
    /// order must stay).
    pub fn retimed(
        &self,
        host: &[(Nanos, Nanos)],
        activities: &[(Nanos, Nanos)],
        other: &dyn Fn(Nanos) -> Nanos,
    ) -> Option<Capture> {
        let valid = |&(s, e): &(Nanos, Nanos)| {
            s <= e && s.0.abs() <= Nanos::LIMIT.0 && e.0.abs() <= Nanos::LIMIT.0
        };
        if host.len() != self.host_events.len()
            || activities.len() != self.activities.len()
            || !host.iter().all(valid)
            || !activities.iter().all(valid)
        {
            return None;
        }
        let mut out = self.clone();
        for (e, &(s, end)) in out.host_events.iter_mut().zip(host) {
            e.start = s;
            e.dur = end - s;
        }
        for (a, &(s, end)) in out.activities.iter_mut().zip(activities) {
            a.start = s;
            a.dur = end - s;
        }
        let hosts_sorted = out.host_events.windows(2).all(|w| {
            (w[0].thread, w[0].start, w[0].source_index)
                <= (w[1].thread, w[1].start, w[1].source_index)
        });
        let activities_sorted = out.activities.windows(2).all(|w| {
            (w[0].stream, w[0].start, w[0].source_index)
                <= (w[1].stream, w[1].start, w[1].source_index)
        });
        if !hosts_sorted || !activities_sorted {
            return None;
        }
        for s in &mut out.steps {
            (s.start, s.end) = (other(s.start), other(s.end));
        }
        out.steps.sort_by_key(|s| (s.start, s.number));
        for a in &mut out.gpu_annotations {
            let (s, e) = (other(a.start), other(a.start + a.dur));
            a.start = s;
            a.dur = (e - s).max(Nanos::ZERO);
        }
        if let Some((s, e)) = out.meta.window {
            out.meta.window = Some((other(s), other(e)));
        }
        for (_, s) in &mut out.meta.device_steps {
            (s.start, s.end) = (other(s.start), other(s.end));
        }
        if let Some(k) = &mut out.meta.kineto {
            for y in &mut k.syncs {
                let (s, e) = (other(y.start), other(y.start + y.dur));
                y.start = s;
                y.dur = (e - s).max(Nanos::ZERO);
            }
            k.first_event_ts = k.first_event_ts.map(other);
            k.hta_origin = k.hta_origin.map(other);
        }
        Some(out)
    }

    /// The device with this id.
    pub fn device(&self, id: DeviceId) -> &Device {
        &self.devices[id.index()]
    }

    /// The stream with this id.
    pub fn stream(&self, id: StreamId) -> &Stream {
        &self.streams[id.index()]
    }

    /// The host thread with this id.
    pub fn thread(&self, id: ThreadId) -> &HostThread {
        &self.threads[id.index()]
    }

    /// The host event with this id.
    pub fn host_event(&self, id: HostEventId) -> &HostEvent {
        &self.host_events[id.index()]
    }

    /// The activities of one stream, in start order.
    pub fn stream_activities(&self, id: StreamId) -> &[GpuActivity] {
        let lo = self.activities.partition_point(|a| a.stream < id);
        let hi = self.activities.partition_point(|a| a.stream <= id);
        &self.activities[lo..hi]
    }

    /// The host events of one thread, in start order.
    pub fn thread_events(&self, id: ThreadId) -> &[HostEvent] {
        let lo = self.host_events.partition_point(|e| e.thread < id);
        let hi = self.host_events.partition_point(|e| e.thread <= id);
        &self.host_events[lo..hi]
    }

    /// The CPU op that issued an activity: the launch's enclosing op.
    pub fn launching_op(&self, activity: &GpuActivity) -> Option<&HostEvent> {
        let launch = self.host_event(activity.launch?);
        launch.parent_op.map(|op| self.host_event(op))
    }

    /// The distinct XLA modules (name and program id) that activities name, in the order
    /// first met.
    pub fn hlo_modules(&self) -> &[HloModule] {
        &self.hlo_modules
    }

    /// The XLA module that issued an activity of this capture (JAX captures).
    pub fn hlo_module(&self, activity: &GpuActivity) -> Option<StringId> {
        activity
            .module
            .and_then(|id| self.hlo_modules[id.index()].name)
    }

    /// The XLA program id of the module that issued an activity of this capture (JAX
    /// captures).
    pub fn program_id(&self, activity: &GpuActivity) -> Option<i64> {
        activity
            .module
            .and_then(|id| self.hlo_modules[id.index()].program_id)
    }

    /// Kineto's `External id` of an activity of this capture: links to the CPU op that
    /// issued the launch.
    pub fn activity_external_id(&self, activity: &GpuActivity) -> Option<i64> {
        self.sides.activity_external_ids.get(activity.source_index)
    }

    /// Bytes moved or set by an activity of this capture (memcpy/memset).
    pub fn activity_bytes(&self, activity: &GpuActivity) -> Option<u64> {
        self.sides.activity_bytes.get(activity.source_index)
    }

    /// The CUDA/HIP graph id of an activity of this capture, for kernels launched from a
    /// graph.
    pub fn activity_graph_id(&self, activity: &GpuActivity) -> Option<i64> {
        self.sides.activity_graph_ids.get(activity.source_index)
    }

    /// Kineto's `External id` of a host event of this capture, shared by a CPU op and the
    /// launches it issued.
    pub fn host_external_id(&self, event: &HostEvent) -> Option<i64> {
        self.sides.host_external_ids.get(event.source_index)
    }

    /// The CPU op around each CPU op on its thread, by host event index (`None` for the
    /// outermost ones and for other kinds of event). A parent starts no later and ends no
    /// earlier than its child; of two with the same start, the longer one (then the one
    /// read first) encloses the other.
    pub fn enclosing_cpu_ops(&self) -> Vec<Option<usize>> {
        let events = &self.host_events;
        let mut parent = vec![None; events.len()];
        for thread in &self.threads {
            let lo = events.partition_point(|e| e.thread < thread.id);
            let hi = events.partition_point(|e| e.thread <= thread.id);
            let mut ops: Vec<usize> = (lo..hi)
                .filter(|&i| events[i].kind == HostKind::CpuOp)
                .collect();
            ops.sort_by_key(|&i| nesting_order(&events[i]));
            let mut stack: Vec<usize> = Vec::new();
            for i in ops {
                while stack
                    .last()
                    .is_some_and(|&top| events[top].end() < events[i].end())
                {
                    stack.pop();
                }
                parent[i] = stack.last().copied();
                stack.push(i);
            }
        }
        parent
    }

    /// The shape arguments of a CPU op of this capture, when the profiler recorded them.
    pub fn op_shapes(&self, event: &HostEvent) -> Option<OpShapes> {
        self.sides.host_shapes.get(event.source_index)
    }

    /// Earliest start and latest end over all GPU activities.
    pub fn gpu_span(&self) -> Option<(Nanos, Nanos)> {
        let start = self.activities.iter().map(|a| a.start).min()?;
        let end = self.activities.iter().map(|a| a.end()).max()?;
        Some((start, end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Activities and host events are most of a capture's memory: these sizes are what
    /// `xtask bench`'s load_capture RSS rows come from (they were 144 and 80 bytes with
    /// plain `u32` ids, 128 and 72 with every optional field in the row).
    #[test]
    fn row_sizes() {
        assert_eq!(size_of::<Option<HostEventId>>(), 4);
        assert_eq!(size_of::<Option<StringId>>(), 4);
        assert_eq!(size_of::<Option<ModuleId>>(), 4);
        assert_eq!(size_of::<KernelClass>(), 2);
        assert_eq!(size_of::<GpuActivity>(), 56);
        assert_eq!(size_of::<HostEvent>(), 48);
    }

    #[test]
    fn correlation_sentinel_reads_back_as_none() {
        let name = Interner::new().intern("k");
        let mut a = GpuActivity::new(
            StreamId::new(0),
            Nanos(0),
            Nanos(1),
            name,
            ActivityKind::Kernel,
            KernelClass::Other,
            0,
        );
        assert_eq!(a.correlation(), None);
        for id in [0, 7, u64::MAX - 1] {
            a.set_correlation(Some(id));
            assert_eq!(a.correlation(), Some(id));
        }
        a.set_correlation(Some(u64::MAX));
        assert_eq!(a.correlation(), None);
        let mut e = HostEvent::new(
            ThreadId::new(0),
            Nanos(0),
            Nanos(1),
            name,
            HostKind::Runtime,
            0,
        );
        e.set_correlation(Some(1 << 40));
        assert_eq!((e.correlation(), e.parent_op()), (Some(1 << 40), None));
        assert!(format!("{a:?}").contains("correlation: None"));
    }

    #[test]
    fn ids_keep_their_index_order_and_debug_form() {
        let (a, b) = (HostEventId::new(0), HostEventId::new(7));
        assert!(a < b);
        assert_eq!((a.index(), b.index()), (0, 7));
        assert_eq!(format!("{b:?}"), "HostEventId(7)");
        assert_eq!(StreamId::new(u32::MAX - 1).index(), u32::MAX as usize - 1);
    }
}
