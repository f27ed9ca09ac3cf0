//! The capture: everything a reader understood of one profile (one rank or one host).

use crate::{Diagnostics, Interner, KernelClass, Nanos, StringId};

/// The diagnostic code of events left out for their time (`Capture::drop_far_events`).
pub const TIME_OUT_OF_RANGE: &str = "time-out-of-range";

fn time_out_of_range_message() -> String {
    "events whose time or end lies outside ±2^62 ns, whose duration is negative or longer than \
     7 days, or that lie more than 7 days from the capture's median event time were left out"
        .to_string()
}

/// Which file format the capture came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// PyTorch profiler (Kineto) Chrome trace JSON.
    KinetoJson,
    /// Chrome trace JSON written by JAX/XProf from an XSpace (pid = plane, tid = line).
    JaxTraceJson,
    /// XSpace protobuf (`*.xplane.pb`).
    XPlane,
    /// Chrome trace JSON from another producer.
    OtherJson,
}

impl Format {
    pub fn describe(self) -> &'static str {
        match self {
            Format::KinetoJson => "Kineto Chrome trace (torch.profiler)",
            Format::JaxTraceJson => "JAX Chrome trace (converted from XSpace)",
            Format::XPlane => "XSpace protobuf (jax.profiler / XProf)",
            Format::OtherJson => "Chrome trace JSON",
        }
    }
}

/// GPU vendor, from device properties or kernel/API names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Vendor {
    Nvidia,
    Amd,
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DeviceId(pub u32);

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId(pub u32);

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ThreadId(pub u32);

/// Index of a host event in [`Capture::host_events`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HostEventId(pub u32);

/// Capability figures of a device, as the profiler recorded them (labelled `read`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceProperties {
    pub name: Option<String>,
    pub compute_capability: Option<(i64, i64)>,
    pub total_memory_bytes: Option<u64>,
    pub multiprocessors: Option<u64>,
    pub clock_rate_khz: Option<u64>,
    pub memory_bandwidth_bytes_per_s: Option<f64>,
}

/// One GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    pub id: DeviceId,
    /// The device number the profiler used (`args.device`, the plane's `GPU:N`).
    pub ordinal: i64,
    pub vendor: Vendor,
    pub properties: DeviceProperties,
}

/// One GPU stream (queue) on one device.
#[derive(Debug, Clone, PartialEq)]
pub struct Stream {
    pub id: StreamId,
    pub device: DeviceId,
    /// The stream number the profiler used (`args.stream`, `Stream #N`).
    pub ordinal: i64,
    /// The stream's display name, if the capture gave one (`Stream #16(Kernel)`).
    pub name: Option<StringId>,
}

/// A host thread that recorded events.
#[derive(Debug, Clone, PartialEq)]
pub struct HostThread {
    pub id: ThreadId,
    pub pid: i64,
    pub tid: i64,
    pub name: Option<StringId>,
}

/// Memory-copy direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MemcpyDirection {
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
    PeerToPeer,
    HostToHost,
    Unknown,
}

impl MemcpyDirection {
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
pub enum ActivityKind {
    Kernel,
    Memcpy,
    Memset,
}

/// One kernel, memcpy or memset on a GPU stream.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuActivity {
    pub stream: StreamId,
    pub start: Nanos,
    pub dur: Nanos,
    pub name: StringId,
    pub kind: ActivityKind,
    /// Classification of the activity by name (and kind for copies).
    pub class: KernelClass,
    /// Correlation id linking the activity to its host launch.
    pub correlation: Option<u64>,
    /// The host call that launched it (runtime or driver API), if found.
    pub launch: Option<HostEventId>,
    /// Kineto's `External id`: links to the CPU op that issued the launch.
    pub external_id: Option<i64>,
    /// Bytes moved or set (memcpy/memset).
    pub bytes: Option<u64>,
    /// CUDA/HIP graph id, for kernels launched from a graph.
    pub graph_id: Option<i64>,
    /// XLA instruction and module that issued the activity (JAX captures).
    pub hlo_op: Option<StringId>,
    pub hlo_module: Option<StringId>,
    pub program_id: Option<i64>,
    /// Index of the event in the source file (for error messages and joins).
    pub source_index: u64,
}

impl GpuActivity {
    pub fn end(&self) -> Nanos {
        self.start + self.dur
    }
}

/// What a host event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
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
#[derive(Debug, Clone, PartialEq)]
pub struct HostEvent {
    pub thread: ThreadId,
    pub start: Nanos,
    pub dur: Nanos,
    pub name: StringId,
    pub kind: HostKind,
    pub correlation: Option<u64>,
    pub external_id: Option<i64>,
    /// For launches and runtime calls: the innermost CPU op around it on the same thread.
    pub parent_op: Option<HostEventId>,
    pub source_index: u64,
}

impl HostEvent {
    pub fn end(&self) -> Nanos {
        self.start + self.dur
    }
}

/// A range on a GPU stream named by the user (`gpu_user_annotation`).
#[derive(Debug, Clone, PartialEq)]
pub struct GpuAnnotation {
    pub stream: StreamId,
    pub start: Nanos,
    pub dur: Nanos,
    pub name: StringId,
}

/// Where a step boundary came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepSource {
    /// `ProfilerStep#N` host annotations (Kineto).
    ProfilerStep,
    /// `step_num` stats or `StepMarker` events (JAX).
    StepMarker,
    /// Repeated executions of the same XLA module.
    ModuleExecution,
}

/// One training/inference step, as a host-side time range.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub number: i64,
    pub start: Nanos,
    pub end: Nanos,
    pub source: StepSource,
}

/// A process group from Kineto's `distributedInfo.pg_config`.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessGroup {
    pub name: String,
    pub description: String,
    pub ranks: Vec<i64>,
}

/// Capture-wide metadata.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TraceMeta {
    pub rank: Option<i64>,
    pub world_size: Option<i64>,
    pub backend: Option<String>,
    pub process_groups: Vec<ProcessGroup>,
    /// Unix-epoch nanoseconds of time zero of this capture's axis, if recorded.
    pub base_time_ns: Option<i64>,
    /// Producer and version, e.g. `Kineto schemaVersion 1`, `jaxlib 0.8.0`.
    pub producer: Option<String>,
    /// Start and end of the profiling window on the capture's axis, if recorded.
    pub window: Option<(Nanos, Nanos)>,
}

/// One profile: devices, streams, threads, GPU activities and host events.
///
/// Architecture invariant: `activities` are sorted by `(stream, start, source_index)`
/// and `host_events` by `(thread, start, source_index)`, so per-stream and per-thread
/// slices are contiguous.
#[derive(Debug, Clone)]
pub struct Capture {
    pub format: Format,
    pub strings: Interner,
    pub devices: Vec<Device>,
    pub streams: Vec<Stream>,
    pub threads: Vec<HostThread>,
    pub activities: Vec<GpuActivity>,
    pub host_events: Vec<HostEvent>,
    pub gpu_annotations: Vec<GpuAnnotation>,
    pub steps: Vec<Step>,
    pub meta: TraceMeta,
    pub diagnostics: Diagnostics,
}

impl Capture {
    pub fn new(format: Format) -> Self {
        Capture {
            format,
            strings: Interner::new(),
            devices: Vec::new(),
            streams: Vec::new(),
            threads: Vec::new(),
            activities: Vec::new(),
            host_events: Vec::new(),
            gpu_annotations: Vec::new(),
            steps: Vec::new(),
            meta: TraceMeta::default(),
            diagnostics: Diagnostics::default(),
        }
    }

    pub fn name(&self, id: StringId) -> &str {
        self.strings.get(id)
    }

    pub fn device(&self, id: DeviceId) -> &Device {
        &self.devices[id.0 as usize]
    }

    pub fn stream(&self, id: StreamId) -> &Stream {
        &self.streams[id.0 as usize]
    }

    pub fn thread(&self, id: ThreadId) -> &HostThread {
        &self.threads[id.0 as usize]
    }

    pub fn host_event(&self, id: HostEventId) -> &HostEvent {
        &self.host_events[id.0 as usize]
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

    /// Earliest start and latest end over all GPU activities.
    pub fn gpu_span(&self) -> Option<(Nanos, Nanos)> {
        let start = self.activities.iter().map(|a| a.start).min()?;
        let end = self.activities.iter().map(|a| a.end()).max()?;
        Some((start, end))
    }

    /// Counts one event left out because its time or end does not fit the representable
    /// range (`Nanos::LIMIT`); readers call it where they meet one. `place` names the file
    /// and the event.
    pub fn note_time_out_of_range(&mut self, place: impl FnOnce() -> String) {
        self.diagnostics
            .add(TIME_OUT_OF_RANGE, time_out_of_range_message, place);
    }

    /// Leaves out every activity, host event, GPU annotation and step whose start or end is
    /// outside ±`Nanos::LIMIT`, whose duration is negative or exceeds `Nanos::FAR`, or which starts more
    /// than `Nanos::FAR` from the median start of the capture's events, counting them in the
    /// `time-out-of-range` diagnostic (first place: `file` and the event index). Readers call
    /// it before `finish`, while no links exist; afterwards every difference of two times in
    /// the capture is small enough for plain `Nanos` arithmetic.
    pub fn drop_far_events(&mut self, file: &str) {
        let mut starts: Vec<i64> = self
            .activities
            .iter()
            .map(|a| a.start.0)
            .chain(self.host_events.iter().map(|e| e.start.0))
            .filter(|&s| Nanos(s).in_range())
            .collect();
        let median = if starts.is_empty() {
            0
        } else {
            let mid = starts.len() / 2;
            *starts.select_nth_unstable(mid).1
        };
        drop(starts);
        let fits = |start: Nanos, dur: Nanos| {
            start.in_range()
                && (0..=Nanos::FAR.0).contains(&dur.0)
                && (start + dur).in_range()
                && start.0.abs_diff(median) <= Nanos::FAR.0.unsigned_abs()
        };
        let mut dropped = 0u64;
        let mut first: Option<u64> = None;
        let mut note = |index: u64| {
            dropped += 1;
            first = Some(first.map_or(index, |f| f.min(index)));
        };
        self.activities.retain(|a| {
            let keep = fits(a.start, a.dur);
            if !keep {
                note(a.source_index);
            }
            keep
        });
        self.host_events.retain(|e| {
            let keep = fits(e.start, e.dur);
            if !keep {
                note(e.source_index);
            }
            keep
        });
        let before = self.gpu_annotations.len() + self.steps.len();
        self.gpu_annotations.retain(|a| fits(a.start, a.dur));
        self.steps
            .retain(|s| fits(s.start, Nanos::ZERO) && fits(s.end, Nanos::ZERO));
        let other = (before - self.gpu_annotations.len() - self.steps.len()) as u64;
        if let Some((start, end)) = self.meta.window
            && !(fits(start, Nanos::ZERO) && fits(end, Nanos::ZERO))
        {
            self.meta.window = None;
        }
        let place = match first {
            Some(index) => format!("{file}: event {index}"),
            None => file.to_string(),
        };
        self.diagnostics.add_many(
            TIME_OUT_OF_RANGE,
            dropped + other,
            time_out_of_range_message(),
            place,
        );
    }

    /// Sorts activities and host events into the documented order and remaps the
    /// `launch`/`parent_op` links accordingly. Readers call this once at the end.
    pub fn finish(&mut self) {
        // Keys end in the unique source index, so unstable (in-place) sorts are deterministic.
        self.activities
            .sort_unstable_by_key(|a| (a.stream, a.start, a.source_index));
        let mut order: Vec<u32> = (0..self.host_events.len() as u32).collect();
        order.sort_unstable_by_key(|&i| {
            let e = &self.host_events[i as usize];
            (e.thread, e.start, e.source_index)
        });
        let mut new_index = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            new_index[old as usize] = new as u32;
        }
        drop(order);
        // Links point at old positions: remap them, then move the events in place, one
        // permutation cycle at a time (no second copy of the events).
        let remap = |id: HostEventId| HostEventId(new_index[id.0 as usize]);
        for e in &mut self.host_events {
            e.parent_op = e.parent_op.map(remap);
        }
        for a in &mut self.activities {
            a.launch = a.launch.map(remap);
        }
        for i in 0..new_index.len() {
            while new_index[i] as usize != i {
                let j = new_index[i] as usize;
                self.host_events.swap(i, j);
                new_index.swap(i, j);
            }
        }
        self.steps.sort_by_key(|s| (s.start, s.number));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(c: &mut Capture, thread: u32, start: i64, index: u64, parent: Option<u32>) {
        let name = c.strings.intern("op");
        c.host_events.push(HostEvent {
            thread: ThreadId(thread),
            start: Nanos(start),
            dur: Nanos(1),
            name,
            kind: HostKind::CpuOp,
            correlation: None,
            external_id: None,
            parent_op: parent.map(HostEventId),
            source_index: index,
        });
    }

    #[test]
    fn finish_sorts_host_events_and_keeps_links() {
        let mut c = Capture::new(Format::KinetoJson);
        // Source order: (thread 1, t=5), (thread 0, t=9), (thread 0, t=2) whose parent is
        // event 1, (thread 1, t=1) whose parent is event 0.
        host(&mut c, 1, 5, 0, None);
        host(&mut c, 0, 9, 1, None);
        host(&mut c, 0, 2, 2, Some(1));
        host(&mut c, 1, 1, 3, Some(0));
        c.finish();
        let order: Vec<u64> = c.host_events.iter().map(|e| e.source_index).collect();
        assert_eq!(order, [2, 1, 3, 0]);
        // Each link still points at the same event (by source index) as before.
        let parent_of = |src: u64| {
            let e = c
                .host_events
                .iter()
                .find(|e| e.source_index == src)
                .expect("present");
            e.parent_op.map(|p| c.host_event(p).source_index)
        };
        assert_eq!(parent_of(2), Some(1));
        assert_eq!(parent_of(3), Some(0));
        assert_eq!(parent_of(0), None);
    }
}
