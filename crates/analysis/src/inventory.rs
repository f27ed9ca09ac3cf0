//! What a capture holds and what the readers understood of it: the numbers behind
//! `trace-info`. Everything here is `measured` (counted from the capture) except device
//! capability figures, which are `read` from the profiler's metadata.

use serde::Serialize;
use trace_model::{ActivityKind, HostKind, Nanos, Vendor};

use crate::budget::{Window, busy_intervals};
use crate::input::{Loaded, ProgramInfo};

/// The inventory of one capture.
#[derive(Debug, Clone, Serialize)]
pub struct Inventory {
    /// The file the capture was read from.
    pub path: String,
    /// The trace format, in words.
    pub format: &'static str,
    /// The profiler that wrote the capture, when the trace says.
    pub producer: Option<String>,
    /// The rank, from the trace's metadata or the file name.
    pub rank: Option<i64>,
    /// The number of ranks, when the trace says.
    pub world_size: Option<i64>,
    /// First start and last end over GPU activities and host events, in ns on the capture's axis.
    pub window_ns: Option<(Nanos, Nanos)>,
    /// Length of `window_ns` (0 without events).
    pub window_dur_ns: Nanos,
    /// The GPUs, in ordinal order.
    pub devices: Vec<DeviceInfo>,
    /// The host threads, in id order.
    pub threads: Vec<ThreadInfo>,
    /// The steps the reader found.
    pub steps: StepsInfo,
    /// The HLO programs of an XSpace (empty for JSON traces).
    pub programs: Vec<ProgramInfo>,
    /// The reader's diagnostics, counted.
    pub diagnostics: Vec<DiagnosticInfo>,
}

/// One GPU of a capture.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceInfo {
    /// The device number the profiler gave.
    pub ordinal: i64,
    /// `NVIDIA`, `AMD` or `unknown`.
    pub vendor: &'static str,
    /// Device properties as the profiler recorded them (`read`).
    pub name: Option<String>,
    /// Compute capability, `major.minor` (NVIDIA).
    pub compute_capability: Option<String>,
    /// Streaming multiprocessors (compute units on AMD).
    pub multiprocessors: Option<u64>,
    /// Device memory in bytes.
    pub memory_bytes: Option<u64>,
    /// Clock rate in kHz.
    pub clock_khz: Option<u64>,
    /// Memory bandwidth in GB/s.
    pub memory_bandwidth_gb_s: Option<f64>,
    /// The device's streams, in ordinal order.
    pub streams: Vec<StreamInfo>,
}

/// One GPU stream and what ran on it.
#[derive(Debug, Clone, Serialize)]
pub struct StreamInfo {
    /// The stream number the profiler gave.
    pub ordinal: i64,
    /// The stream's name, when the trace gives one.
    pub name: Option<String>,
    /// Kernels that ran on the stream.
    pub kernels: usize,
    /// Memcpys that ran on the stream.
    pub memcpys: usize,
    /// Memsets that ran on the stream.
    pub memsets: usize,
    /// Union of the stream's activity intervals.
    pub busy_ns: Nanos,
    /// Activities with a host launch found by correlation id.
    pub launched: usize,
}

/// One host thread and its events.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadInfo {
    /// Process id.
    pub pid: i64,
    /// Thread id.
    pub tid: i64,
    /// The process id as the trace wrote it, when it is not a 64-bit integer (`pid` is
    /// then a key standing for it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid_text: Option<String>,
    /// The thread id as the trace wrote it, when it is not a 64-bit integer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tid_text: Option<String>,
    /// The thread's name, when the trace gives one.
    pub name: Option<String>,
    /// Host events on the thread.
    pub events: usize,
    /// Launch calls (kernel, memcpy and graph launches) on the thread.
    pub launches: usize,
    /// CPU ops on the thread.
    pub cpu_ops: usize,
}

/// The steps a reader found in the capture.
#[derive(Debug, Clone, Serialize)]
pub struct StepsInfo {
    /// Number of steps.
    pub count: usize,
    /// What marked them, in words; `None` without steps.
    pub source: Option<&'static str>,
    /// Step numbers, in time order.
    pub numbers: Vec<i64>,
    /// Median step duration (upper median), in ns.
    pub median_ns: Option<Nanos>,
    /// Shortest step duration, in ns.
    pub min_ns: Option<Nanos>,
    /// Longest step duration, in ns.
    pub max_ns: Option<Nanos>,
}

/// One reader diagnostic: odd but usable input.
#[derive(Debug, Clone, Serialize)]
pub struct DiagnosticInfo {
    /// Stable short name of the finding.
    pub code: &'static str,
    /// How many times it occurred.
    pub count: u64,
    /// What it means, in words.
    pub message: String,
    /// Where it first occurred.
    pub first: String,
}

/// Builds the inventory of a loaded capture.
pub fn inventory(loaded: &Loaded) -> Inventory {
    let c = &loaded.capture;
    let window = Window::of_capture(c).map(|w| (w.start, w.end));
    let devices = c
        .devices()
        .iter()
        .map(|d| {
            let streams = c
                .streams()
                .iter()
                .filter(|s| s.device == d.id)
                .map(|s| {
                    let acts = c.stream_activities(s.id);
                    let count = |k: ActivityKind| acts.iter().filter(|a| a.kind == k).count();
                    let busy: Nanos = match window {
                        Some((start, end)) => busy_intervals(acts.iter(), Window { start, end })
                            .iter()
                            .map(|(s, e)| *e - *s)
                            .sum(),
                        None => Nanos::ZERO,
                    };
                    StreamInfo {
                        ordinal: s.ordinal,
                        name: s.name.map(|n| c.name(n).to_string()),
                        kernels: count(ActivityKind::Kernel),
                        memcpys: count(ActivityKind::Memcpy),
                        memsets: count(ActivityKind::Memset),
                        busy_ns: busy,
                        launched: acts.iter().filter(|a| a.launch().is_some()).count(),
                    }
                })
                .collect();
            let p = &d.properties;
            DeviceInfo {
                ordinal: d.ordinal,
                vendor: match d.vendor {
                    Vendor::Nvidia => "NVIDIA",
                    Vendor::Amd => "AMD",
                    _ => "unknown",
                },
                name: p.name.clone(),
                compute_capability: p.compute_capability.map(|(a, b)| format!("{a}.{b}")),
                multiprocessors: p.multiprocessors,
                memory_bytes: p.total_memory_bytes,
                clock_khz: p.clock_rate_khz,
                memory_bandwidth_gb_s: p.memory_bandwidth_bytes_per_s.map(|b| b / 1e9),
                streams,
            }
        })
        .collect();
    let threads = c
        .threads()
        .iter()
        .map(|t| {
            let events = c.thread_events(t.id);
            ThreadInfo {
                pid: t.pid,
                tid: t.tid,
                pid_text: t.pid_text.map(|n| c.name(n).to_string()),
                tid_text: t.tid_text.map(|n| c.name(n).to_string()),
                name: t.name.map(|n| c.name(n).to_string()),
                events: events.len(),
                launches: events.iter().filter(|e| e.kind == HostKind::Launch).count(),
                cpu_ops: events.iter().filter(|e| e.kind == HostKind::CpuOp).count(),
            }
        })
        .collect();
    let mut durations: Vec<Nanos> = c.steps().iter().map(|s| s.end - s.start).collect();
    durations.sort_unstable();
    let steps = StepsInfo {
        count: c.steps().len(),
        source: c.steps().first().map(|s| match s.source {
            trace_model::StepSource::ProfilerStep => "ProfilerStep# annotations",
            trace_model::StepSource::StepMarker => "step markers (step_num)",
            trace_model::StepSource::ModuleExecution => "repeated XLA module executions",
            _ => "other step boundaries",
        }),
        numbers: c.steps().iter().map(|s| s.number).collect(),
        median_ns: durations.get(durations.len() / 2).copied(),
        min_ns: durations.first().copied(),
        max_ns: durations.last().copied(),
    };
    Inventory {
        path: loaded.path.display().to_string(),
        format: c.format().describe(),
        producer: c.meta().producer.clone(),
        rank: loaded.rank,
        world_size: c.meta().world_size,
        window_ns: window,
        window_dur_ns: window.map_or(Nanos::ZERO, |(s, e)| e - s),
        devices,
        threads,
        steps,
        programs: loaded.programs.iter().map(ProgramInfo::of).collect(),
        diagnostics: c
            .diagnostics()
            .iter()
            .map(|d| DiagnosticInfo {
                code: d.code,
                count: d.count,
                message: d.message.clone(),
                first: d.first.clone(),
            })
            .collect(),
    }
}
