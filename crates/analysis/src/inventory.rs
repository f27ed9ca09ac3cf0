//! What a capture holds and what the readers understood of it: the numbers behind
//! `trace-info`. Everything here is `measured` (counted from the capture) except device
//! capability figures, which are `read` from the profiler's metadata.

use std::fmt::Write;

use serde::Serialize;
use trace_model::{ActivityKind, Capture, HostKind, Nanos, Vendor};

use crate::budget::{Window, busy_intervals};
use crate::input::{Loaded, Program};

/// The inventory of one capture.
#[derive(Debug, Clone, Serialize)]
pub struct Inventory {
    pub path: String,
    pub format: &'static str,
    pub producer: Option<String>,
    pub rank: Option<i64>,
    pub world_size: Option<i64>,
    /// First start and last end over GPU activities and host events, in ns on the capture's axis.
    pub window_ns: Option<(i64, i64)>,
    pub window_dur_ns: i64,
    pub devices: Vec<DeviceInfo>,
    pub threads: Vec<ThreadInfo>,
    pub steps: StepsInfo,
    pub programs: Vec<Program>,
    pub diagnostics: Vec<DiagnosticInfo>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DeviceInfo {
    pub ordinal: i64,
    pub vendor: &'static str,
    /// Device properties as the profiler recorded them (`read`).
    pub name: Option<String>,
    pub compute_capability: Option<String>,
    pub multiprocessors: Option<u64>,
    pub memory_bytes: Option<u64>,
    pub clock_khz: Option<u64>,
    pub memory_bandwidth_gb_s: Option<f64>,
    pub streams: Vec<StreamInfo>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StreamInfo {
    pub ordinal: i64,
    pub name: Option<String>,
    pub kernels: usize,
    pub memcpys: usize,
    pub memsets: usize,
    /// Union of the stream's activity intervals.
    pub busy_ns: i64,
    /// Activities with a host launch found by correlation id.
    pub launched: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct ThreadInfo {
    pub pid: i64,
    pub tid: i64,
    pub name: Option<String>,
    pub events: usize,
    pub launches: usize,
    pub cpu_ops: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct StepsInfo {
    pub count: usize,
    pub source: Option<&'static str>,
    pub numbers: Vec<i64>,
    pub median_ns: Option<i64>,
    pub min_ns: Option<i64>,
    pub max_ns: Option<i64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DiagnosticInfo {
    pub code: &'static str,
    pub count: u64,
    pub message: String,
    pub first: String,
}

/// Builds the inventory of a loaded capture.
pub fn inventory(loaded: &Loaded) -> Inventory {
    let c = &loaded.capture;
    let window = capture_window(c);
    let devices = c
        .devices
        .iter()
        .map(|d| {
            let streams = c
                .streams
                .iter()
                .filter(|s| s.device == d.id)
                .map(|s| {
                    let acts = c.stream_activities(s.id);
                    let count = |k: ActivityKind| acts.iter().filter(|a| a.kind == k).count();
                    let busy: i64 = match window {
                        Some((start, end)) => busy_intervals(acts.iter(), Window { start, end })
                            .iter()
                            .map(|(s, e)| e.0 - s.0)
                            .sum(),
                        None => 0,
                    };
                    StreamInfo {
                        ordinal: s.ordinal,
                        name: s.name.map(|n| c.name(n).to_string()),
                        kernels: count(ActivityKind::Kernel),
                        memcpys: count(ActivityKind::Memcpy),
                        memsets: count(ActivityKind::Memset),
                        busy_ns: busy,
                        launched: acts.iter().filter(|a| a.launch.is_some()).count(),
                    }
                })
                .collect();
            let p = &d.properties;
            DeviceInfo {
                ordinal: d.ordinal,
                vendor: match d.vendor {
                    Vendor::Nvidia => "NVIDIA",
                    Vendor::Amd => "AMD",
                    Vendor::Unknown => "unknown",
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
        .threads
        .iter()
        .map(|t| {
            let events = c.thread_events(t.id);
            ThreadInfo {
                pid: t.pid,
                tid: t.tid,
                name: t.name.map(|n| c.name(n).to_string()),
                events: events.len(),
                launches: events.iter().filter(|e| e.kind == HostKind::Launch).count(),
                cpu_ops: events.iter().filter(|e| e.kind == HostKind::CpuOp).count(),
            }
        })
        .collect();
    let mut durations: Vec<i64> = c.steps.iter().map(|s| (s.end - s.start).0).collect();
    durations.sort_unstable();
    let steps = StepsInfo {
        count: c.steps.len(),
        source: c.steps.first().map(|s| match s.source {
            trace_model::StepSource::ProfilerStep => "ProfilerStep# annotations",
            trace_model::StepSource::StepMarker => "step markers (step_num)",
            trace_model::StepSource::ModuleExecution => "repeated XLA module executions",
        }),
        numbers: c.steps.iter().map(|s| s.number).collect(),
        median_ns: durations.get(durations.len() / 2).copied(),
        min_ns: durations.first().copied(),
        max_ns: durations.last().copied(),
    };
    Inventory {
        path: loaded.path.display().to_string(),
        format: c.format.describe(),
        producer: c.meta.producer.clone(),
        rank: loaded.rank,
        world_size: c.meta.world_size,
        window_ns: window.map(|(s, e)| (s.0, e.0)),
        window_dur_ns: window.map_or(0, |(s, e)| (e - s).0),
        devices,
        threads,
        steps,
        programs: loaded.programs.clone(),
        diagnostics: c
            .diagnostics
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

/// The capture's window: the recorded profiling window if any, else the extent of its events.
fn capture_window(c: &Capture) -> Option<(Nanos, Nanos)> {
    if let Some(w) = c.meta.window {
        return Some(w);
    }
    let starts = c
        .activities
        .iter()
        .map(|a| a.start)
        .chain(c.host_events.iter().map(|e| e.start));
    let ends = c
        .activities
        .iter()
        .map(|a| a.end())
        .chain(c.host_events.iter().map(|e| e.end()));
    Some((starts.min()?, ends.max()?))
}

/// Renders the inventory as text for a terminal.
pub fn render_text(inv: &Inventory) -> String {
    let mut o = String::new();
    let w = &mut o;
    let _ = writeln!(w, "{}", inv.path);
    let _ = writeln!(w, "  format      {}", inv.format);
    if let Some(p) = &inv.producer {
        let _ = writeln!(w, "  producer    {p}");
    }
    match (inv.rank, inv.world_size) {
        (Some(r), Some(n)) => {
            let _ = writeln!(w, "  rank        {r} of {n}");
        }
        (Some(r), None) => {
            let _ = writeln!(w, "  rank        {r}");
        }
        _ => {}
    }
    if let Some((s, e)) = inv.window_ns {
        let _ = writeln!(
            w,
            "  window      {} (from {} ns to {} ns on the capture's axis) [measured]",
            Nanos(e - s).human(),
            s,
            e
        );
    }
    let _ = writeln!(w);
    let _ = writeln!(w, "GPU devices: {}", inv.devices.len());
    for d in &inv.devices {
        let mut props = Vec::new();
        if let Some(cc) = &d.compute_capability {
            props.push(format!("compute capability {cc}"));
        }
        if let Some(n) = d.multiprocessors {
            props.push(format!("{n} SMs/CUs"));
        }
        if let Some(m) = d.memory_bytes {
            props.push(format!("{:.1} GiB", m as f64 / (1u64 << 30) as f64));
        }
        if let Some(k) = d.clock_khz {
            props.push(format!("{:.0} MHz", k as f64 / 1e3));
        }
        if let Some(b) = d.memory_bandwidth_gb_s {
            props.push(format!("{b:.0} GB/s memory bandwidth"));
        }
        let props = if props.is_empty() {
            String::new()
        } else {
            format!(" — {} [read: profiler metadata]", props.join(", "))
        };
        let _ = writeln!(
            w,
            "  GPU {} ({}, {}){props}",
            d.ordinal,
            d.vendor,
            d.name
                .as_deref()
                .filter(|n| !n.is_empty())
                .unwrap_or("model not recorded")
        );
        if d.streams.is_empty() {
            let _ = writeln!(w, "    no activity");
            continue;
        }
        let _ = writeln!(
            w,
            "    {:<28} {:>8} {:>8} {:>8} {:>12} {:>9}",
            "stream", "kernels", "memcpy", "memset", "busy", "launched"
        );
        for s in &d.streams {
            let label = match &s.name {
                Some(n) => n.clone(),
                None => format!("stream {}", s.ordinal),
            };
            let total = s.kernels + s.memcpys + s.memsets;
            let _ = writeln!(
                w,
                "    {:<28} {:>8} {:>8} {:>8} {:>12} {:>8.1}%",
                label,
                s.kernels,
                s.memcpys,
                s.memsets,
                Nanos(s.busy_ns).human(),
                if total == 0 {
                    0.0
                } else {
                    100.0 * s.launched as f64 / total as f64
                }
            );
        }
    }
    if inv.devices.is_empty() {
        let _ = writeln!(
            w,
            "  none: this capture holds no GPU activity (a CPU-only capture?)"
        );
    } else {
        let _ = writeln!(
            w,
            "  (counts and busy time [measured]; busy = union of activity intervals; launched = share with a host launch found by correlation id)"
        );
    }
    let _ = writeln!(w);
    let _ = writeln!(w, "Host threads: {} [measured]", inv.threads.len());
    let _ = writeln!(
        w,
        "  {:>10} {:>12} {:>9} {:>9} {:>9}  name",
        "pid", "tid", "events", "launches", "cpu ops"
    );
    for t in &inv.threads {
        let _ = writeln!(
            w,
            "  {:>10} {:>12} {:>9} {:>9} {:>9}  {}",
            t.pid,
            t.tid,
            t.events,
            t.launches,
            t.cpu_ops,
            t.name.as_deref().unwrap_or("")
        );
    }
    let _ = writeln!(w);
    match (inv.steps.count, inv.steps.source) {
        (0, _) | (_, None) => {
            let _ = writeln!(
                w,
                "Steps: none found (no ProfilerStep# annotations or step markers)"
            );
        }
        (n, Some(source)) => {
            let _ = writeln!(
                w,
                "Steps: {n} from {source}; numbers {}; duration median {}, min {}, max {} [measured]",
                compact_numbers(&inv.steps.numbers),
                Nanos(inv.steps.median_ns.unwrap_or(0)).human(),
                Nanos(inv.steps.min_ns.unwrap_or(0)).human(),
                Nanos(inv.steps.max_ns.unwrap_or(0)).human(),
            );
        }
    }
    if !inv.programs.is_empty() {
        let _ = writeln!(w);
        let _ = writeln!(
            w,
            "HLO programs: {} (instructions and Python-line coverage [measured])",
            inv.programs.len()
        );
        let _ = writeln!(
            w,
            "  {:>12} {:>12} {:>14}  name",
            "program id", "instructions", "Python line"
        );
        for p in &inv.programs {
            match (p.instructions, p.with_python_line) {
                (Some(n), Some(k)) => {
                    let pct = if n == 0 {
                        0.0
                    } else {
                        100.0 * k as f64 / n as f64
                    };
                    let _ = writeln!(
                        w,
                        "  {:>12} {:>12} {:>6} ({:>4.1}%)  {}",
                        p.id, n, k, pct, p.name
                    );
                }
                _ => {
                    let _ = writeln!(
                        w,
                        "  {:>12} {:>12} {:>14}  {} (undecodable: {})",
                        p.id,
                        "-",
                        "-",
                        p.name,
                        p.error.as_deref().unwrap_or("unknown error")
                    );
                }
            }
        }
    }
    let _ = writeln!(w);
    if inv.diagnostics.is_empty() {
        let _ = writeln!(w, "Diagnostics: none");
    } else {
        let _ = writeln!(w, "Diagnostics: {}", inv.diagnostics.len());
        for d in &inv.diagnostics {
            let _ = writeln!(w, "  {:>8} × {}: {}", d.count, d.code, d.message);
            let _ = writeln!(w, "             first at {}", d.first);
        }
    }
    o
}

/// `1, 2, 3, 7` → `1–3, 7`.
fn compact_numbers(numbers: &[i64]) -> String {
    let mut sorted = numbers.to_vec();
    sorted.sort_unstable();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}–{}", sorted[i], sorted[j])
        } else {
            sorted[i].to_string()
        });
        i = j + 1;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::compact_numbers;

    #[test]
    fn numbers_compact_into_ranges() {
        assert_eq!(compact_numbers(&[3, 1, 2, 7, 9, 10]), "1–3, 7, 9–10");
        assert_eq!(compact_numbers(&[]), "");
    }
}
