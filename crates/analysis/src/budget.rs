//! Time budgets: how a window of one GPU stream (or of a whole device) splits into
//! compute, collective, memcpy, memset and idle.
//!
//! Overlapping activities are merged as a union of intervals, so no instant is counted
//! twice. When activities of different kinds overlap (possible across the streams of a
//! device, and inside one stream when timestamps jitter or graph kernels overlap), the
//! instant goes to the first kind in this precedence:
//!
//! **compute > collective > memcpy > memset**.
//!
//! Compute comes first because an instant in which a compute kernel runs is not lost to
//! communication or copies; this is also how Holistic Trace Analysis' temporal
//! breakdown splits a rank's time (compute = union of compute kernels, non-compute =
//! the rest of the union of all activities, idle = the remainder of the span).
//!
//! The parts sum to the span by construction; [`BudgetCheck`] verifies it, and also
//! that the busy parts equal an independent union of all intervals (a second,
//! separate computation), and it is part of every [`Budget`].

use serde::Serialize;
use trace_model::{Capture, DeviceId, GpuActivity, KernelClass, Nanos, StreamId};

use crate::labels::Provenance;

/// The budget categories of GPU time, in precedence order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BusyKind {
    Compute,
    Collective,
    Memcpy,
    Memset,
}

impl BusyKind {
    pub const ALL: [BusyKind; 4] = [
        BusyKind::Compute,
        BusyKind::Collective,
        BusyKind::Memcpy,
        BusyKind::Memset,
    ];

    /// The category of an activity.
    pub fn of(class: KernelClass) -> BusyKind {
        match class {
            KernelClass::Collective(_) => BusyKind::Collective,
            KernelClass::Memcpy(_) => BusyKind::Memcpy,
            KernelClass::Memset => BusyKind::Memset,
            _ => BusyKind::Compute,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            BusyKind::Compute => "compute",
            BusyKind::Collective => "collective",
            BusyKind::Memcpy => "memcpy",
            BusyKind::Memset => "memset",
        }
    }
}

/// A time window `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub start: Nanos,
    pub end: Nanos,
}

impl Window {
    pub fn span(self) -> Nanos {
        (self.end - self.start).max(Nanos::ZERO)
    }

    /// Overlap of `[start, end)` with the window.
    pub fn overlap(self, start: Nanos, end: Nanos) -> Nanos {
        (end.min(self.end) - start.max(self.start)).max(Nanos::ZERO)
    }
}

/// The split of one window of GPU time. All fields are `measured`.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    pub window: Window,
    pub compute: Nanos,
    pub collective: Nanos,
    pub memcpy: Nanos,
    pub memset: Nanos,
    pub idle: Nanos,
    /// Activities that overlap the window.
    pub activity_count: usize,
    pub check: BudgetCheck,
    pub provenance: Provenance,
}

/// The reconciliation of a budget: parts against span, busy parts against an
/// independently merged union of the intervals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetCheck {
    pub parts_sum: Nanos,
    pub span: Nanos,
    pub busy: Nanos,
    pub union_busy: Nanos,
}

impl BudgetCheck {
    pub fn holds(&self) -> bool {
        self.parts_sum == self.span && self.busy == self.union_busy
    }
}

impl Budget {
    pub fn span(&self) -> Nanos {
        self.window.span()
    }

    /// Time with any activity running.
    pub fn busy(&self) -> Nanos {
        self.compute + self.collective + self.memcpy + self.memset
    }

    pub fn part(&self, kind: BusyKind) -> Nanos {
        match kind {
            BusyKind::Compute => self.compute,
            BusyKind::Collective => self.collective,
            BusyKind::Memcpy => self.memcpy,
            BusyKind::Memset => self.memset,
        }
    }

    /// Share of the span, in [0, 1]; 0 for an empty span.
    pub fn share(&self, part: Nanos) -> f64 {
        let span = self.span().0;
        if span == 0 {
            0.0
        } else {
            part.0 as f64 / span as f64
        }
    }
}

/// The budget of one stream.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamBudget {
    pub device: DeviceId,
    pub stream: StreamId,
    pub budget: Budget,
}

/// The budget of every stream of the capture over `window`, in stream order, followed
/// by nothing else; streams with no activity in the window are included (all idle).
pub fn stream_budgets(capture: &Capture, window: Window) -> Vec<StreamBudget> {
    capture
        .streams()
        .iter()
        .map(|s| StreamBudget {
            device: s.device,
            stream: s.id,
            budget: budget_of(capture.stream_activities(s.id).iter(), window),
        })
        .collect()
}

/// The budget of a whole device: the union over all its streams, with the kind
/// precedence above deciding instants where streams overlap.
pub fn device_budget(capture: &Capture, device: DeviceId, window: Window) -> Budget {
    let streams: Vec<StreamId> = capture
        .streams()
        .iter()
        .filter(|s| s.device == device)
        .map(|s| s.id)
        .collect();
    budget_of(
        streams
            .iter()
            .flat_map(|&s| capture.stream_activities(s).iter()),
        window,
    )
}

/// The budget of any set of activities over `window`.
pub fn budget_of<'a>(activities: impl Iterator<Item = &'a GpuActivity>, window: Window) -> Budget {
    let mut intervals: Vec<(i64, i64, BusyKind)> = Vec::new();
    for a in activities {
        let start = a.start.0.max(window.start.0);
        let end = a.end().0.min(window.end.0);
        // Zero-length activities inside the window are counted but take no time.
        let inside =
            end > start || (a.dur.0 == 0 && a.start >= window.start && a.start < window.end);
        if inside {
            intervals.push((start, end.max(start), BusyKind::of(a.class)));
        }
    }
    let activity_count = intervals.len();
    let parts = sweep(&intervals);
    let busy: i64 = parts.iter().sum();
    let idle = window.span().0.saturating_sub(busy);
    let union_busy = union_length(&mut intervals);
    let span = window.span();
    let [compute, collective, memcpy, memset] = parts.map(Nanos);
    let parts_sum = compute + collective + memcpy + memset + Nanos(idle);
    Budget {
        window,
        compute,
        collective,
        memcpy,
        memset,
        idle: Nanos(idle),
        activity_count,
        check: BudgetCheck {
            parts_sum,
            span,
            busy: Nanos(busy),
            union_busy: Nanos(union_busy),
        },
        provenance: Provenance::Measured,
    }
}

/// Boundary sweep: between consecutive boundaries, the instant belongs to the first
/// kind (in precedence order) with an open interval.
fn sweep(intervals: &[(i64, i64, BusyKind)]) -> [i64; 4] {
    let mut events: Vec<(i64, i32, usize)> = Vec::with_capacity(intervals.len() * 2);
    for &(s, e, k) in intervals {
        if e > s {
            events.push((s, 1, k as usize));
            events.push((e, -1, k as usize));
        }
    }
    events.sort_unstable();
    let mut open = [0i32; 4];
    let mut parts = [0i64; 4];
    let mut prev = match events.first() {
        Some(e) => e.0,
        None => return parts,
    };
    for (t, delta, k) in events {
        if t > prev {
            if let Some(first) = open.iter().position(|&n| n > 0) {
                parts[first] += t - prev;
            }
            prev = t;
        }
        open[k] += delta;
    }
    parts
}

/// Length of the union of intervals, by sort-and-merge (independent of [`sweep`]).
fn union_length(intervals: &mut [(i64, i64, BusyKind)]) -> i64 {
    intervals.sort_unstable_by_key(|&(s, e, _)| (s, e));
    let mut total = 0;
    let mut cur: Option<(i64, i64)> = None;
    for &(s, e, _) in intervals.iter() {
        match cur {
            Some((cs, ce)) if s <= ce => cur = Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                cur = Some((s, e));
            }
            None => cur = Some((s, e)),
        }
    }
    if let Some((cs, ce)) = cur {
        total += ce - cs;
    }
    total
}

/// Length of the union of `[start, end)` intervals (overlaps count once).
pub fn union_of(intervals: impl Iterator<Item = (Nanos, Nanos)>) -> Nanos {
    let mut iv: Vec<(i64, i64, BusyKind)> = intervals
        .filter(|(s, e)| e > s)
        .map(|(s, e)| (s.0, e.0, BusyKind::Compute))
        .collect();
    Nanos(union_length(&mut iv))
}

/// The merged busy intervals of a set of activities, clipped to `window`, in time order.
pub fn busy_intervals<'a>(
    activities: impl Iterator<Item = &'a GpuActivity>,
    window: Window,
) -> Vec<(Nanos, Nanos)> {
    let mut iv: Vec<(i64, i64)> = activities
        .map(|a| (a.start.0.max(window.start.0), a.end().0.min(window.end.0)))
        .filter(|(s, e)| e > s)
        .collect();
    iv.sort_unstable();
    let mut out: Vec<(Nanos, Nanos)> = Vec::new();
    for (s, e) in iv {
        match out.last_mut() {
            Some(last) if s <= last.1.0 => last.1 = Nanos(last.1.0.max(e)),
            _ => out.push((Nanos(s), Nanos(e))),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace_model::{ActivityKind, Interner};

    fn act(start: i64, dur: i64, class: KernelClass) -> GpuActivity {
        GpuActivity::new(
            StreamId::new(0),
            Nanos(start),
            Nanos(dur),
            Interner::new().intern("k"),
            ActivityKind::Kernel,
            class,
            0,
        )
    }

    /// `(compute, collective, memcpy, memset, idle)` of activities over `[0, span)`.
    fn check(acts: &[(i64, i64, KernelClass)], span: i64, expect: [i64; 5]) {
        let acts: Vec<_> = acts.iter().map(|&(s, d, c)| act(s, d, c)).collect();
        let b = budget_of(
            acts.iter(),
            Window {
                start: Nanos(0),
                end: Nanos(span),
            },
        );
        assert!(b.check.holds(), "{:?}", b.check);
        assert_eq!(
            [
                b.compute.0,
                b.collective.0,
                b.memcpy.0,
                b.memset.0,
                b.idle.0
            ],
            expect
        );
    }

    #[test]
    fn budgets() {
        use KernelClass::*;
        let ar = Collective(trace_model::CollectiveKind::AllReduce);
        check(&[], 10, [0, 0, 0, 0, 10]);
        check(&[(0, 4, Gemm), (6, 2, Memset)], 10, [4, 0, 0, 2, 4]);
        // Overlap of two compute kernels: union, not sum.
        check(&[(0, 4, Gemm), (2, 4, Other)], 10, [6, 0, 0, 0, 4]);
        // Compute wins over a collective it overlaps.
        check(&[(0, 10, ar), (2, 3, Gemm)], 10, [3, 7, 0, 0, 0]);
        // Clipped to the window on both sides.
        check(&[(-5, 7, Gemm), (8, 10, ar)], 10, [2, 2, 0, 0, 6]);
        // Zero-length activities take no time.
        check(&[(3, 0, Gemm)], 10, [0, 0, 0, 0, 10]);
    }
}
