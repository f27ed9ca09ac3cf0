//! What-if scenarios: changes of durations with stable keys (`gemm=2x`, `launch=5us`,
//! `host-gaps=0`), parsed from text and applied to a graph's measured durations.

use std::fmt;

use trace_model::{Capture, KernelClass, MemcpyDirection, Nanos, ThreadId};

use crate::Error;
use crate::graph::{Durations, Graph, Lane, NodeKind};

/// Which host time belongs to a host sub-cause: the caller's labelling of each thread's
/// time (analysis's host causes), for [`Change::HostCause`]. `Sync`: a capture's scenarios
/// may be replayed on several threads at once, sharing the labels.
pub trait HostLabels: std::fmt::Debug + Sync {
    /// The time of `[from, to)` on `thread` that `cause` (a sub-cause's code) holds.
    fn time(&self, cause: &str, thread: ThreadId, from: Nanos, to: Nanos) -> Nanos;

    /// [`HostLabels::time`] of each range of `ranges` on `thread`, in order. The ranges
    /// mostly follow each other in time (a thread's leaves and the gaps before them), which
    /// an implementation may use to walk rather than search.
    fn times(&self, cause: &str, thread: ThreadId, ranges: &[(Nanos, Nanos)]) -> Vec<Nanos> {
        ranges
            .iter()
            .map(|&(from, to)| self.time(cause, thread, from, to))
            .collect()
    }
}

/// The class words a scenario may name (`KernelClass::word`).
pub const CLASS_WORDS: [&str; 11] = [
    "gemm",
    "convolution",
    "attention",
    "elementwise",
    "norm",
    "layout",
    "reduction",
    "collective",
    "memcpy",
    "memset",
    "other",
];

/// How much faster something becomes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Speed {
    /// N× faster (durations divided by N).
    Faster(f64),
    /// Removed (duration 0).
    Removed,
}

impl Speed {
    fn apply(self, dur: Nanos) -> Nanos {
        match self {
            Speed::Faster(f) => Nanos((dur.0 as f64 / f).round() as i64),
            Speed::Removed => Nanos::ZERO,
        }
    }
}

impl fmt::Display for Speed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Speed::Faster(x) => write!(f, "{x}x"),
            Speed::Removed => write!(f, "0"),
        }
    }
}

/// One change of durations.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Change {
    /// Every activity of a kernel class (`KernelClass::word`) faster or removed: `gemm=2x`,
    /// `collective=0` (exposed collectives go; overlapped ones change nothing), `memcpy=0`.
    Class {
        /// The class word.
        class: String,
        /// How much faster.
        speed: Speed,
    },
    /// Every activity whose name contains `name`: `kernel:volta_sgemm=2x`.
    Kernel {
        /// Part of the kernel's name.
        name: String,
        /// How much faster.
        speed: Speed,
    },
    /// Each launch call at most this long (CUDA graphs replay many kernels per launch):
    /// `launch=5us`.
    LaunchAt(Nanos),
    /// Host CPU work (CPU ops without events inside, and CPU ops' own time between their
    /// calls) N× faster: `cpu=2x`.
    CpuFaster(f64),
    /// The host gaps that idle the GPU removed: `host-gaps=0`. A gap is the host time
    /// between a thread's events outside every CPU op (untraced Python, idle host); it
    /// idles the GPU when the stream of the thread's next launch has nothing running
    /// during part of it (the stream ran dry while the host was away), and then all of it
    /// goes. Gaps the GPU was busy
    /// through stay: they idle nothing (the host was ahead), and removing them would only
    /// move the host further ahead.
    HostGapsRemoved,
    /// The time the caller's [`HostLabels`] give a host sub-cause (analysis's
    /// `HostCause::code`: `allocator`, `data-loading`, `cpu-work`, `compilation`,
    /// `profiler-overhead`) removed from the host leaves the GPU waited for, in the leaves
    /// and the gaps before them: those on the path that decided a launch that came after
    /// its stream ran dry (the launching paths, see `crate::paths`); the sub-cause's time
    /// on every other leaf stays: `host:allocator=0`. Without labels it changes nothing.
    HostCause(String),
    /// All host time removed but the waits for the GPU: every host call, op and gap takes
    /// no time, so the GPU alone sets the step: `host=0`.
    HostRemoved,
    /// Host↔device copies with a byte count at this bandwidth, in bytes per second
    /// (pinned memory): `copy-bw=25GB/s`.
    CopyBandwidth(f64),
}

impl Change {
    /// What the change removes, in words, where its key alone does not say it (the host
    /// scenarios).
    pub fn removes(&self) -> Option<&'static str> {
        match self {
            Change::HostCause(_) => Some(
                "the sub-cause's time on the host leaves the GPU waited for: the path that \
                 decided each launch that came after its stream ran dry; elsewhere it stays",
            ),
            Change::HostGapsRemoved => Some(
                "the host gaps outside CPU ops during which the stream of the thread's next \
                 launch ran dry",
            ),
            _ => None,
        }
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::Class { class, speed } => write!(f, "{class}={speed}"),
            Change::Kernel { name, speed } => write!(f, "kernel:{name}={speed}"),
            Change::LaunchAt(t) => write!(f, "launch={}us", t.as_micros_f64()),
            Change::CpuFaster(x) => write!(f, "cpu={x}x"),
            Change::HostGapsRemoved => write!(f, "host-gaps=0"),
            Change::HostCause(cause) => write!(f, "host:{cause}=0"),
            Change::HostRemoved => write!(f, "host=0"),
            Change::CopyBandwidth(b) => write!(f, "copy-bw={}GB/s", b / 1e9),
        }
    }
}

/// A scenario: one or more changes applied together. Its key is its changes' text in
/// the order given, joined by commas (`gemm=2x,launch=5us`): stable across runs.
#[derive(Debug, Clone, PartialEq)]
pub struct WhatIf {
    /// The changes.
    pub changes: Vec<Change>,
}

impl WhatIf {
    /// Parses `key=value[,key=value…]`. Keys: a class word ([`CLASS_WORDS`]) or
    /// `kernel:<part of a name>` with `Nx` or `0`; `launch` with a time (`5us`, `800ns`);
    /// `cpu` with `Nx`; `host-gaps` and `host` with `0`; `host:<sub-cause>` with `0`;
    /// `copy-bw` with a bandwidth (`25GB/s`).
    pub fn parse(spec: &str) -> Result<WhatIf, Error> {
        let bad = |reason: String| Error::WhatIf {
            spec: spec.to_owned(),
            reason,
        };
        let mut changes = Vec::new();
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((key, value)) = part.split_once('=') else {
                return Err(bad(format!("`{part}` is not key=value")));
            };
            let (key, value) = (key.trim(), value.trim());
            let change = if CLASS_WORDS.contains(&key) {
                Change::Class {
                    class: key.to_owned(),
                    speed: speed(value).ok_or_else(|| {
                        bad(format!("`{key}` takes Nx (N > 0) or 0, not `{value}`"))
                    })?,
                }
            } else if let Some(cause) = key.strip_prefix("host:") {
                if cause.is_empty() || value != "0" {
                    return Err(bad(format!(
                        "`{key}` takes a host sub-cause and 0 (removed), not `{value}`"
                    )));
                }
                Change::HostCause(cause.to_owned())
            } else if let Some(name) = key.strip_prefix("kernel:") {
                if name.is_empty() {
                    return Err(bad("`kernel:` needs part of a kernel name".to_owned()));
                }
                Change::Kernel {
                    name: name.to_owned(),
                    speed: speed(value).ok_or_else(|| {
                        bad(format!("`{key}` takes Nx (N > 0) or 0, not `{value}`"))
                    })?,
                }
            } else {
                match key {
                    "launch" => Change::LaunchAt(time(value).ok_or_else(|| {
                        bad(format!(
                            "`launch` takes a time per launch (5us), not `{value}`"
                        ))
                    })?),
                    "cpu" => match speed(value) {
                        Some(Speed::Faster(x)) => Change::CpuFaster(x),
                        _ => return Err(bad(format!("`cpu` takes Nx (N > 0), not `{value}`"))),
                    },
                    "host-gaps" | "host" if value == "0" => {
                        if key == "host" {
                            Change::HostRemoved
                        } else {
                            Change::HostGapsRemoved
                        }
                    }
                    "host-gaps" | "host" => {
                        return Err(bad(format!("`{key}` takes 0 (removed), not `{value}`")));
                    }
                    "copy-bw" => Change::CopyBandwidth(bandwidth(value).ok_or_else(|| {
                        bad(format!(
                            "`copy-bw` takes a bandwidth (25GB/s), not `{value}`"
                        ))
                    })?),
                    _ => {
                        return Err(bad(format!(
                            "unknown key `{key}` (a class: {}; kernel:NAME, launch, cpu, \
                             host-gaps, host, host:SUB-CAUSE, copy-bw)",
                            CLASS_WORDS.join(", ")
                        )));
                    }
                }
            };
            changes.push(change);
        }
        if changes.is_empty() {
            return Err(bad("no change given".to_owned()));
        }
        Ok(WhatIf { changes })
    }

    /// The stable key: the changes' canonical text, joined by commas.
    pub fn key(&self) -> String {
        self.changes
            .iter()
            .map(Change::to_string)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The durations of this scenario, from `graph`'s measured ones; with, per change,
    /// how many nodes it changed (a change that matches nothing is said so).
    pub fn durations(&self, graph: &Graph, capture: &Capture) -> (Durations, Vec<usize>) {
        self.durations_labelled(graph, capture, None)
    }

    /// [`WhatIf::durations`] with the host sub-causes' time from `labels`
    /// ([`Change::HostCause`] changes nothing without them).
    pub fn durations_labelled(
        &self,
        graph: &Graph,
        capture: &Capture,
        labels: Option<&dyn HostLabels>,
    ) -> (Durations, Vec<usize>) {
        let mut d = graph.measured.clone();
        let activities = capture.activities();
        let mut matched = Vec::with_capacity(self.changes.len());
        for change in &self.changes {
            if let Change::HostCause(cause) = change {
                matched.push(host_cause_removed(graph, labels, cause, &mut d));
                continue;
            }
            let mut count = 0usize;
            // A change of activities looks at the GPU nodes only, any other at the host's.
            let nodes = if matches!(
                change,
                Change::Class { .. } | Change::Kernel { .. } | Change::CopyBandwidth(_)
            ) {
                graph.host_nodes..graph.nodes.len()
            } else {
                0..graph.host_nodes
            };
            for n in nodes {
                let node = &graph.nodes[n];
                let gpu = (node.kind == NodeKind::Gpu).then(|| &activities[node.source as usize]);
                let changed = match (change, gpu) {
                    (Change::Class { class, speed }, Some(a))
                        if a.class.word() == class.as_str() =>
                    {
                        d.dur[n] = speed.apply(d.dur[n]);
                        true
                    }
                    (Change::Kernel { name, speed }, Some(a))
                        if capture.name(a.name).contains(name.as_str()) =>
                    {
                        d.dur[n] = speed.apply(d.dur[n]);
                        true
                    }
                    (Change::CopyBandwidth(bw), Some(a)) => {
                        match (a.class, capture.activity_bytes(a)) {
                            (
                                KernelClass::Memcpy(
                                    MemcpyDirection::HostToDevice | MemcpyDirection::DeviceToHost,
                                ),
                                Some(bytes),
                            ) => {
                                d.dur[n] = Nanos((bytes as f64 / bw * 1e9).round() as i64);
                                true
                            }
                            _ => false,
                        }
                    }
                    (Change::LaunchAt(t), None) if node.kind == NodeKind::Launch => {
                        d.dur[n] = d.dur[n].min(*t);
                        true
                    }
                    (Change::CpuFaster(x), None) => {
                        let speed = Speed::Faster(*x);
                        if node.kind == NodeKind::Cpu {
                            d.dur[n] = speed.apply(d.dur[n]);
                        }
                        d.gap_in_ops[n] = speed.apply(d.gap_in_ops[n]);
                        true
                    }
                    (Change::HostGapsRemoved, None) => {
                        let idles = graph.gap_outside_idle[n] > Nanos::ZERO;
                        if idles {
                            d.gap_outside_ops[n] = Nanos::ZERO;
                        }
                        idles
                    }
                    (Change::HostRemoved, None) => {
                        d.dur[n] = Nanos::ZERO;
                        d.gap_in_ops[n] = Nanos::ZERO;
                        d.gap_outside_ops[n] = Nanos::ZERO;
                        true
                    }
                    _ => false,
                };
                count += usize::from(changed);
            }
            matched.push(count);
        }
        (d, matched)
    }
}

/// [`Change::HostCause`] applied to `d`: the time `labels` give `cause` removed from each
/// host leaf on a launching path (see `crate::paths`) and from the gap before it, the
/// gap's part inside CPU ops first. How many leaves it changed; none without labels. The
/// labels are asked once per thread, for its leaves on a path in order.
fn host_cause_removed(
    graph: &Graph,
    labels: Option<&dyn HostLabels>,
    cause: &str,
    d: &mut Durations,
) -> usize {
    let Some(labels) = labels else {
        return 0;
    };
    let nodes = &graph.nodes[..graph.host_nodes];
    let mut count = 0usize;
    let mut first = 0;
    while first < nodes.len() {
        let lane = nodes[first].lane;
        let last = first + nodes[first..].partition_point(|n| n.lane == lane);
        let Lane::Host(thread) = lane else {
            first = last;
            continue;
        };
        let path: Vec<usize> = (first..last)
            .filter(|&n| graph.paths.on_launching_path(n))
            .collect();
        let mut ranges = Vec::with_capacity(2 * path.len());
        for &n in &path {
            let node = &nodes[n];
            let measured_gap = graph.measured.gap_in_ops[n] + graph.measured.gap_outside_ops[n];
            ranges.push((node.start - measured_gap, node.start));
            ranges.push((node.start, node.end));
        }
        let times = labels.times(cause, thread, &ranges);
        let mut on_path = path.iter().zip(times.chunks_exact(2)).peekable();
        for n in first..last {
            // Off the paths the GPU waited for nothing goes.
            let (mut gap, own) = match on_path.peek() {
                Some(&(&p, t)) if p == n => {
                    on_path.next();
                    (t[0], t[1])
                }
                _ => (Nanos::ZERO, Nanos::ZERO),
            };
            d.dur[n] = (d.dur[n] - own).max(Nanos::ZERO);
            let from_ops = gap.min(d.gap_in_ops[n]);
            d.gap_in_ops[n] -= from_ops;
            gap -= from_ops;
            let from_outside = gap.min(d.gap_outside_ops[n]);
            d.gap_outside_ops[n] -= from_outside;
            count += usize::from(own + from_ops + from_outside > Nanos::ZERO);
        }
        first = last;
    }
    count
}

fn speed(value: &str) -> Option<Speed> {
    if value == "0" {
        return Some(Speed::Removed);
    }
    let x: f64 = value.strip_suffix('x')?.parse().ok()?;
    (x.is_finite() && x > 0.0).then_some(Speed::Faster(x))
}

fn time(value: &str) -> Option<Nanos> {
    let (number, scale) = [("ns", 1.0), ("us", 1e3), ("µs", 1e3), ("ms", 1e6)]
        .iter()
        .find_map(|&(unit, scale)| value.strip_suffix(unit).map(|n| (n, scale)))?;
    let x: f64 = number.parse().ok()?;
    (x.is_finite() && x >= 0.0 && x * scale < 1e15).then(|| Nanos((x * scale).round() as i64))
}

fn bandwidth(value: &str) -> Option<f64> {
    let (number, scale) = [("GB/s", 1e9), ("MB/s", 1e6)]
        .iter()
        .find_map(|&(unit, scale)| value.strip_suffix(unit).map(|n| (n, scale)))?;
    let x: f64 = number.parse().ok()?;
    (x.is_finite() && x > 0.0).then_some(x * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(spec: &str, key: &str) {
        assert_eq!(WhatIf::parse(spec).expect(spec).key(), key);
    }

    #[test]
    fn keys_are_canonical() {
        check("gemm=2x,launch=5us", "gemm=2x,launch=5us");
        check(" gemm = 2.0x , launch=5000ns", "gemm=2x,launch=5us");
        check("kernel:sgemm=0", "kernel:sgemm=0");
        check("host-gaps=0,cpu=1.5x", "host-gaps=0,cpu=1.5x");
        check("copy-bw=25GB/s", "copy-bw=25GB/s");
        check("collective=0,host=0", "collective=0,host=0");
        check("host:allocator=0", "host:allocator=0");
    }

    #[test]
    fn bad_specs_say_why() {
        for (spec, says) in [
            ("gemm", "not key=value"),
            ("gemm=fast", "takes Nx"),
            ("gemm=-2x", "takes Nx"),
            ("warp=2x", "unknown key"),
            ("launch=5", "time per launch"),
            ("host=1", "takes 0"),
            ("", "no change"),
            ("kernel:=2x", "needs part"),
            ("host:allocator=2x", "takes a host sub-cause"),
            ("host:=0", "takes a host sub-cause"),
        ] {
            let err = WhatIf::parse(spec).expect_err(spec).to_string();
            assert!(err.contains(says), "{spec}: {err}");
        }
    }
}
