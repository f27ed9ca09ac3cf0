//! GPU-idle gaps of a stream, and the host events on the launching threads that
//! overlap them: what the host was doing while the GPU waited.

use std::collections::BTreeMap;

use trace_model::{Capture, Format, HostEvent, HostKind, Nanos, StreamId, ThreadId};

use crate::budget::{Window, busy_intervals};
use crate::interval;
use crate::labels::Provenance;
use crate::percent::ratio;

/// A stretch of a stream with nothing running, `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gap {
    /// First idle instant.
    pub start: Nanos,
    /// First instant after the gap (the next activity's start, or the window's end).
    pub end: Nanos,
}

impl Gap {
    /// Length of the gap.
    pub fn len(&self) -> Nanos {
        self.end - self.start
    }

    /// Whether the gap has no length.
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }
}

/// The idle gaps of one stream inside `window`: the complement of the union of its
/// activities, including the idle stretches at both ends of the window. Their total
/// equals the idle part of the stream's budget over the same window.
pub fn idle_gaps(capture: &Capture, stream: StreamId, window: Window) -> Vec<Gap> {
    let busy = busy_intervals(capture.stream_activities(stream).iter(), window);
    let mut gaps = Vec::new();
    let mut at = window.start;
    for (s, e) in busy {
        if s > at {
            gaps.push(Gap { start: at, end: s });
        }
        at = at.max(e);
    }
    if window.end > at {
        gaps.push(Gap {
            start: at,
            end: window.end,
        });
    }
    gaps
}

/// Why a stream sat idle, gap by gap (all `measured`), judged by the activity that ends
/// each gap:
/// - **host wait**: its launch call started after the gap began — nothing was queued,
///   the GPU waited for the host to issue work;
/// - **queued wait**: its launch call started before the gap began — the work was already
///   issued, yet the stream idled: it waited on a dependency (an event, another stream, a
///   collective's peers, a synchronisation), not on the host;
/// - **unattributed**: the activity has no launch in the trace, or no activity ends the gap
///   (the idle stretch at the end of the window).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IdleCauses {
    /// Idle time before activities whose launch call started after the gap began.
    pub host_wait: Nanos,
    /// Idle time before activities whose launch call started before the gap began.
    pub queued_wait: Nanos,
    /// Idle time with no launch to judge by.
    pub unattributed: Nanos,
}

impl IdleCauses {
    /// Sum of the three causes: the stream's idle time in the window.
    pub fn total(&self) -> Nanos {
        self.host_wait + self.queued_wait + self.unattributed
    }

    /// Share of the idle time, in [0, 1]; 0 without idle time.
    pub fn share(&self, part: Nanos) -> f64 {
        ratio(part.0, self.total().0)
    }
}

/// Splits the idle gaps of `stream` (from [`idle_gaps`]) by cause.
pub fn idle_causes(capture: &Capture, stream: StreamId, gaps: &[Gap]) -> IdleCauses {
    let acts = capture.stream_activities(stream);
    let mut causes = IdleCauses::default();
    for g in gaps {
        // Activities are sorted by start: the first one starting at or after the gap's end
        // is the one that ends it.
        let next = acts.get(acts.partition_point(|a| a.start < g.end));
        let launch = next
            .filter(|a| a.start == g.end)
            .and_then(|a| a.launch())
            .map(|l| capture.host_event(l).start);
        match launch {
            Some(start) if start >= g.start => causes.host_wait += g.len(),
            Some(_) => causes.queued_wait += g.len(),
            None => causes.unattributed += g.len(),
        }
    }
    causes
}

/// The threads that issued at least one GPU activity, in id order.
pub fn launching_threads(capture: &Capture) -> Vec<ThreadId> {
    let mut threads: Vec<ThreadId> = capture
        .activities()
        .iter()
        .filter_map(|a| a.launch().map(|l| capture.host_event(l).thread))
        .collect();
    threads.sort_unstable();
    threads.dedup();
    threads
}

/// Whether a host event is host *work* for the coverage share: framework ops and
/// runtime calls, but not synchronisation calls (the host waiting for the GPU), not
/// user annotations or Python frames (they enclose whole steps), and, in Kineto traces,
/// not the uncategorised events (the profiler's own `Trace` span). In JAX traces the
/// XLA runtime's host events are mostly uncategorised, so there they count.
pub(crate) fn is_host_work(capture: &Capture, e: &HostEvent) -> bool {
    let kind_counts = match e.kind {
        HostKind::CpuOp | HostKind::Launch | HostKind::Runtime => true,
        HostKind::Other => capture.format() != Format::KinetoJson,
        HostKind::Annotation | HostKind::PythonFrame => false,
        _ => false,
    };
    kind_counts && !capture.name(e.name).contains("ynchronize")
}

/// Host time overlapping idle gaps, for one host event name.
#[derive(Debug, Clone, PartialEq)]
pub struct HostTime {
    /// The host event name.
    pub name: String,
    /// Its kind (CPU op, runtime call, annotation, …).
    pub kind: HostKind,
    /// Σ over events with this name of their overlap with the gaps.
    pub overlapped: Nanos,
    /// Events with this name that overlap a gap.
    pub events: usize,
}

/// The host side of a stream's idle gaps (all numbers `measured`).
#[derive(Debug, Clone, PartialEq)]
pub struct GapHost {
    /// Number of idle gaps.
    pub gap_count: usize,
    /// Total idle time of the gaps.
    pub idle: Nanos,
    /// Idle time during which at least one host-work event (a framework op or runtime
    /// call, not a synchronisation) ran on a thread that launches GPU work.
    pub covered: Nanos,
    /// Host event names ranked by overlapped time (ties by name), at most `top` of them.
    pub top: Vec<HostTime>,
    /// Always [`Provenance::Measured`].
    pub provenance: Provenance,
}

impl GapHost {
    /// `covered / idle`, 0 without idle time.
    pub fn covered_share(&self) -> f64 {
        ratio(self.covered.0, self.idle.0)
    }
}

/// Ranks host events on `threads` by their overlap with `gaps` (sorted, disjoint).
/// `ProfilerStep#N` annotations are left out: they span every gap of their step.
pub(crate) fn host_in_gaps(
    capture: &Capture,
    gaps: &[Gap],
    threads: &[ThreadId],
    top: usize,
) -> GapHost {
    let mut per_name: BTreeMap<(trace_model::StringId, HostKind), (i64, usize)> = BTreeMap::new();
    let mut covered_iv: Vec<(i64, i64)> = Vec::new();
    for &t in threads {
        for e in capture.thread_events(t) {
            // First gap ending after the event starts; walk while gaps start before it ends.
            let first = gaps.partition_point(|g| g.end <= e.start);
            let mut overlap = 0;
            let mut touched = false;
            let work = is_host_work(capture, e);
            for g in &gaps[first..] {
                if g.start >= e.end() {
                    break;
                }
                let s = g.start.0.max(e.start.0);
                let en = g.end.0.min(e.end().0);
                if en > s {
                    overlap += en - s;
                    touched = true;
                    if work {
                        covered_iv.push((s, en));
                    }
                }
            }
            if touched && !capture.name(e.name).starts_with("ProfilerStep#") {
                let entry = per_name.entry((e.name, e.kind)).or_insert((0, 0));
                entry.0 += overlap;
                entry.1 += 1;
            }
        }
    }
    let mut ranked: Vec<HostTime> = per_name
        .into_iter()
        .map(|((name, kind), (overlapped, events))| HostTime {
            name: capture.name(name).to_string(),
            kind,
            overlapped: Nanos(overlapped),
            events,
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.overlapped
            .cmp(&a.overlapped)
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.kind.cmp(&b.kind))
    });
    ranked.truncate(top);
    GapHost {
        gap_count: gaps.len(),
        idle: gaps.iter().map(|g| g.len()).sum(),
        covered: Nanos(interval::union_len(covered_iv)),
        top: ranked,
        provenance: Provenance::Measured,
    }
}
