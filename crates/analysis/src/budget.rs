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
//! Idle is the span less the busy parts. The parts come from one boundary sweep;
//! [`BudgetCheck`], part of every [`Budget`], recomputes each part from unions of the
//! intervals merged on their own, and fails when the two disagree.

use serde::Serialize;
use trace_model::{Capture, DeviceId, GpuActivity, KernelClass, Nanos, StreamId};

use crate::interval;
use crate::percent::ratio;
use trace_model::Provenance;

/// The budget categories of GPU time, in precedence order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum BusyKind {
    /// Kernels that are not collectives (GEMMs, elementwise, attention, …).
    Compute,
    /// Collective kernels (NCCL/RCCL all-reduce, all-gather, …); their time includes waiting for peers.
    Collective,
    /// Memory copies (host to device, device to host, device to device).
    Memcpy,
    /// Memory sets.
    Memset,
}

impl BusyKind {
    /// Every kind, in precedence order (the order of [`Budget`]'s parts).
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

    /// The kind as `rows.csv` and the reports name it.
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
    /// First instant inside the window.
    pub start: Nanos,
    /// First instant after the window.
    pub end: Nanos,
}

impl Window {
    /// Length of the window; 0 when `end` is not after `start`.
    pub fn span(self) -> Nanos {
        (self.end - self.start).max(Nanos::ZERO)
    }

    /// The capture's span: its recorded profiling window if it has one, else first start
    /// to last end over its GPU activities and host events; `None` for an empty capture.
    pub fn of_capture(capture: &Capture) -> Option<Window> {
        if let Some((start, end)) = capture.meta().window {
            return Some(Window { start, end });
        }
        let starts = capture.activities().iter().map(|a| a.start);
        let starts = starts.chain(capture.host_events().iter().map(|e| e.start));
        let ends = capture.activities().iter().map(|a| a.end());
        let ends = ends.chain(capture.host_events().iter().map(|e| e.end()));
        Some(Window {
            start: starts.min()?,
            end: ends.max()?,
        })
    }

    /// Overlap of `[start, end)` with the window.
    pub fn overlap(self, start: Nanos, end: Nanos) -> Nanos {
        (end.min(self.end) - start.max(self.start)).max(Nanos::ZERO)
    }
}

/// The split of one window of GPU time. All fields are `measured`.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    /// The window the activities were clipped to.
    pub window: Window,
    /// Time with a compute kernel running (any kernel that is not a collective).
    pub compute: Nanos,
    /// Time with a collective running and no compute kernel.
    pub collective: Nanos,
    /// Time with a memcpy running and no kernel.
    pub memcpy: Nanos,
    /// Time with only memsets running.
    pub memset: Nanos,
    /// Time with nothing running: the span less the four parts above.
    pub idle: Nanos,
    /// Activities that overlap the window.
    pub activity_count: usize,
    /// The parts checked against an independent computation from the intervals.
    pub check: BudgetCheck,
    /// Always [`Provenance::Measured`].
    pub provenance: Provenance,
}

/// The reconciliation of a budget's exclusive parts (from the boundary sweep) with the
/// interval unions, merged on their own: with `U(k)` the union of the intervals of the
/// kinds up to `k` in precedence order, each part must equal `U(k) − U(k − 1)` (compute
/// its whole union, collective what compute leaves of its union, and so on), and so the
/// parts must sum to the union of all the activities, `U(memset)`. Both sides are
/// integer nanoseconds, so the tolerance is [`BudgetCheck::TOLERANCE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetCheck {
    /// The budget's parts, in [`BusyKind::ALL`] order.
    pub parts: [Nanos; 4],
    /// `U(k)` in [`BusyKind::ALL`] order: the union of the intervals of that kind and of
    /// every kind before it; the last is the union of all the activities.
    pub prefix_unions: [Nanos; 4],
}

impl BudgetCheck {
    /// How far a part may differ from its union difference.
    pub const TOLERANCE: Nanos = Nanos(0);

    /// Checks `parts` against the unions of `intervals` (`[start, end)` and kind each).
    pub fn new(parts: [Nanos; 4], intervals: &[(Nanos, Nanos, BusyKind)]) -> BudgetCheck {
        let mut prefix_unions = [Nanos::ZERO; 4];
        for (k, union) in prefix_unions.iter_mut().enumerate() {
            let upto: Vec<(i64, i64)> = intervals
                .iter()
                .filter(|iv| (iv.2 as usize) <= k)
                .map(|iv| (iv.0.0, iv.1.0))
                .collect();
            *union = Nanos(interval::union_len(upto));
        }
        BudgetCheck {
            parts,
            prefix_unions,
        }
    }

    /// What each part should be: `U(k) − U(k − 1)`.
    pub fn expected_parts(&self) -> [Nanos; 4] {
        let u = self.prefix_unions;
        [u[0], u[1] - u[0], u[2] - u[1], u[3] - u[2]]
    }

    /// Σ of the parts: the budget's busy time.
    pub fn parts_busy(&self) -> Nanos {
        self.parts.iter().copied().sum()
    }

    /// The union of all the activities' intervals.
    pub fn union_busy(&self) -> Nanos {
        self.prefix_unions[3]
    }

    /// Whether every part matches its union difference within the tolerance (and so the
    /// parts sum to the union of all the activities).
    pub fn holds(&self) -> bool {
        let within = |a: Nanos, b: Nanos| (a - b).0.abs() <= Self::TOLERANCE.0;
        self.parts
            .iter()
            .zip(self.expected_parts())
            .all(|(&part, expected)| within(part, expected))
            && within(self.parts_busy(), self.union_busy())
    }
}

impl Budget {
    /// Length of the window.
    pub fn span(&self) -> Nanos {
        self.window.span()
    }

    /// Time with any activity running.
    pub fn busy(&self) -> Nanos {
        self.compute + self.collective + self.memcpy + self.memset
    }

    /// The part of one kind.
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
        ratio(part.0, self.span().0)
    }
}

/// The budget of one stream.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamBudget {
    /// The device the stream belongs to.
    pub device: DeviceId,
    /// The stream.
    pub stream: StreamId,
    /// Its split over the window.
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
    let mut intervals: Vec<(Nanos, Nanos, BusyKind)> = Vec::new();
    for a in activities {
        let start = a.start.max(window.start);
        let end = a.end().min(window.end);
        // Zero-length activities inside the window are counted but take no time.
        let inside =
            end > start || (a.dur.0 == 0 && a.start >= window.start && a.start < window.end);
        if inside {
            intervals.push((start, end.max(start), BusyKind::of(a.class)));
        }
    }
    let parts = sweep(&intervals).map(Nanos);
    let [compute, collective, memcpy, memset] = parts;
    let busy = compute + collective + memcpy + memset;
    Budget {
        window,
        compute,
        collective,
        memcpy,
        memset,
        idle: (window.span() - busy).max(Nanos::ZERO),
        activity_count: intervals.len(),
        check: BudgetCheck::new(parts, &intervals),
        provenance: Provenance::Measured,
    }
}

/// Boundary sweep: between consecutive boundaries, the instant belongs to the first
/// kind (in precedence order) with an open interval.
fn sweep(intervals: &[(Nanos, Nanos, BusyKind)]) -> [i64; 4] {
    // Starts, then ends: each stream's come in runs already in order, which the stable
    // sort merges (equal entries are alike, so the order is the unstable sort's).
    let mut events: Vec<(i64, i32, usize)> = Vec::with_capacity(intervals.len() * 2);
    let open_close = |sign: i32| {
        intervals
            .iter()
            .filter(|&&(s, e, _)| e > s)
            .map(move |&(s, e, k)| (if sign > 0 { s.0 } else { e.0 }, sign, k as usize))
    };
    events.extend(open_close(1));
    events.extend(open_close(-1));
    events.sort();
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

/// Length of the union of `[start, end)` intervals (overlaps count once).
pub(crate) fn union_of(intervals: impl Iterator<Item = (Nanos, Nanos)>) -> Nanos {
    Nanos(interval::union_len(
        intervals.map(|(s, e)| (s.0, e.0)).collect(),
    ))
}

/// The merged busy intervals of a set of activities, clipped to `window`, in time order.
pub(crate) fn busy_intervals<'a>(
    activities: impl Iterator<Item = &'a GpuActivity>,
    window: Window,
) -> Vec<(Nanos, Nanos)> {
    let clipped = activities
        .map(|a| (a.start.0.max(window.start.0), a.end().0.min(window.end.0)))
        .collect();
    interval::merged(clipped)
        .into_iter()
        .map(|(s, e)| (Nanos(s), Nanos(e)))
        .collect()
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

    /// Budget inputs: intervals `(start, end, kind)` and the parts a sweep claimed for them.
    fn check_parts(intervals: &[(i64, i64, BusyKind)], parts: [i64; 4]) -> BudgetCheck {
        let iv: Vec<_> = intervals
            .iter()
            .map(|&(s, e, k)| (Nanos(s), Nanos(e), k))
            .collect();
        BudgetCheck::new(parts.map(Nanos), &iv)
    }

    #[test]
    fn budget_check_passes_on_consistent_parts() {
        use BusyKind::*;
        // Compute [0, 4) over collective [2, 6) and a memcpy inside the compute.
        let iv = [
            (0, 4, Compute),
            (2, 6, Collective),
            (1, 3, Memcpy),
            (8, 9, Memset),
        ];
        let c = check_parts(&iv, [4, 2, 0, 1]);
        assert_eq!(c.prefix_unions.map(|n| n.0), [4, 6, 6, 7]);
        assert!(c.holds(), "{c:?}");
    }

    /// Per-kind times that overlap inconsistently: the collective's overlap with compute
    /// counted again (a plain per-kind sum), so the parts exceed the union of all
    /// activities; and parts that sum right but give the overlap to the wrong kind.
    #[test]
    fn budget_check_fails_on_overlapping_parts() {
        use BusyKind::*;
        let iv = [(0, 4, Compute), (2, 6, Collective)];
        let double_counted = check_parts(&iv, [4, 4, 0, 0]);
        assert!(!double_counted.holds(), "{double_counted:?}");
        assert_eq!(double_counted.parts_busy(), Nanos(8));
        assert_eq!(double_counted.union_busy(), Nanos(6));
        let wrong_kind = check_parts(&iv, [2, 4, 0, 0]);
        assert_eq!(wrong_kind.parts_busy(), wrong_kind.union_busy());
        assert!(!wrong_kind.holds(), "{wrong_kind:?}");
        assert_eq!(wrong_kind.expected_parts().map(|n| n.0), [4, 2, 0, 0]);
    }
}
