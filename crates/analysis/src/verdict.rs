//! The launch-overhead verdict: is the work GPU-bound, host/launch-bound, or mixed.
//!
//! The verdict is a judgement, labelled `inferred`, from measured numbers:
//!
//! - **G**, the work share of the critical stream: the stream with the most compute
//!   time in the analysed window; its busy time (union of its activities) less its
//!   collective time, over the window span. Collective kernels are left out of G: their
//!   time includes waiting for peers, so a busy communication stream (or the collectives
//!   on the critical one) never makes a capture GPU-bound. Their share is reported beside.
//! - **I**, the idle share of the critical stream (no activity running).
//! - **H**, the host-wait share of that stream's idle time: the idle time before the host
//!   issued the next activity while it was not blocked in a synchronising call, decided
//!   gap by gap from the gap's own evidence (see [`crate::gaps::gap_causes`]). The rest
//!   of the idle time waits on another stream or event, on a synchronising call (the host
//!   waiting for the GPU), or has no evidence (**U**, the unknown share).
//! - **C**, the share of the idle time during which host work (framework ops and runtime
//!   calls, not synchronisation; see [`crate::gaps::is_host_work`]) ran on a thread that
//!   launches GPU work. Only used when H is unknown (no activity has a launch).
//! - **Q**, the queueing ratio: mean launch-to-start delay per kernel launched one by one
//!   divided by the mean kernel duration (AKD). Q ≥ 1 means a kernel typically waits in
//!   the queue at least as long as a kernel runs: the host is ahead of the GPU. Kernels
//!   launched through a CUDA/HIP graph are left out: their delay counts from the graph
//!   launch, so it includes the run time of the graph's earlier kernels, not queueing.
//!
//! Rules, first match wins, with the thresholds of [`THRESHOLDS`] (0.90, 0.80, 1 and 0.50
//! today; the rules, [`assumptions`] and these docs' figures all come from that table):
//! 1. no GPU activity in the window → no verdict; every step warm-up (see
//!    [`crate::warmup`]) → **warm-up only**, no steady state to judge;
//! 2. **GPU-bound** if G ≥ `gpu_bound`, or G ≥ `gpu_bound_queued` and Q ≥ `queue_ratio`;
//! 3. **host/launch-bound** if I ≥ `idle` and H ≥ `host_wait` (C ≥ `host_wait` when H is
//!    unknown): the GPU is idle half the time, and mostly because work had not been
//!    issued yet;
//! 4. **inconclusive** if I ≥ `idle` and U ≥ `host_wait`, or I ≥ `idle` with H unknown
//!    and C below `host_wait`: the GPU idles half the time and the trace does not say why;
//! 5. **mixed** otherwise — including a low G with most idle time waiting on other
//!    streams, events or synchronising calls, which more host speed would not fix.
//!
//! Assumptions: the critical stream stands for the step (other streams overlap it);
//! CPU and GPU clocks are aligned in the trace; the activity that ends a gap is the one
//! the stream was waiting for.

use std::sync::LazyLock;

use crate::budget::Budget;
use crate::gaps::{GapCause, GapCauses};
use trace_model::Provenance;

/// The three outcomes (and the absence of GPU work); serde writes them in snake case
/// (`gpu_bound`, `host_launch_bound`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Bound {
    /// The GPU's work share is high: more host speed would not help.
    GpuBound,
    /// The GPU idles half the time or more, mostly waiting for work to be issued.
    HostLaunchBound,
    /// Neither of the above.
    Mixed,
    /// The GPU idles half the time or more and the trace holds no evidence of why.
    Inconclusive,
    /// Every step of the capture is warm-up (module loading, compilation, autotuning,
    /// first executions): no steady state to judge.
    WarmUp,
    /// No GPU activity in the window: no verdict.
    NoGpuWork,
}

impl Bound {
    /// The outcome as reports print it.
    pub fn label(self) -> &'static str {
        match self {
            Bound::GpuBound => "GPU-bound",
            Bound::HostLaunchBound => "host/launch-bound",
            Bound::Mixed => "mixed",
            Bound::Inconclusive => "inconclusive",
            Bound::WarmUp => "warm-up only",
            Bound::NoGpuWork => "no GPU work",
        }
    }
}

/// The thresholds of the verdict's rules (module docs), as shares in [0, 1] except
/// `queue_ratio`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Thresholds {
    /// G at or above this: GPU-bound.
    gpu_bound: f64,
    /// G at or above this with Q ≥ `queue_ratio`: GPU-bound.
    gpu_bound_queued: f64,
    /// Q at or above this: the host is ahead of the GPU.
    queue_ratio: f64,
    /// I at or above this (with H or C): host/launch-bound.
    idle: f64,
    /// H (or C when H is unknown) at or above this (with I): host/launch-bound.
    host_wait: f64,
}

/// The one table of thresholds that [`decide`] and [`assumptions`] read.
const THRESHOLDS: Thresholds = Thresholds {
    gpu_bound: 0.90,
    gpu_bound_queued: 0.80,
    queue_ratio: 1.0,
    idle: 0.50,
    host_wait: 0.50,
};

static ASSUMPTIONS: LazyLock<String> = LazyLock::new(|| {
    let t = THRESHOLDS;
    format!(
        "warm-up steps (kernel launch calls of 100 ms or more, module loading, autotuning, graph capture covering half a step or more; leading steps 10x the median of the rest) are left out, and a capture of warm-up only gets no other verdict; rules G>={:.2}, or G>={:.2} and Q>={}: GPU-bound; idle>={:.2} and H>={:.2} (C>={:.2} when H is unknown): host/launch-bound; idle>={:.2} and U>={:.2} (or H unknown): inconclusive; else mixed. G is the critical (most compute) stream's busy share without collectives, whose time includes waiting for peers. H is the idle time before the next launch call while the launching thread was not in a synchronising call; U the idle time without evidence. The critical stream stands for the step; CPU and GPU clocks are aligned; the activity that ends an idle gap is the one the stream waited for; a stream-wait-event call between two launches on the launching thread is the wait of the second; graph-launched kernels are left out of Q",
        t.gpu_bound,
        t.gpu_bound_queued,
        t.queue_ratio,
        t.idle,
        t.host_wait,
        t.host_wait,
        t.idle,
        t.host_wait
    )
});

/// The rules and assumptions behind every verdict, as one line for reports (the
/// `assumptions` of its [`Provenance::Inferred`] label).
pub fn assumptions() -> &'static str {
    ASSUMPTIONS.as_str()
}

/// A verdict and the numbers it rests on.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The outcome of the rules.
    pub bound: Bound,
    /// G: busy share of the critical stream, collectives left out.
    pub busy_share: f64,
    /// Collective share of the critical stream's window (includes waiting for peers).
    pub collective_share: f64,
    /// I: idle share of the critical stream's window.
    pub idle_share: f64,
    /// H: share of its idle time before the host issued the next activity (not blocked in a
    /// synchronising call); `None` when no idle time has evidence.
    pub host_wait_share: Option<f64>,
    /// Share of its idle time waiting on another stream or event; `None` as for H.
    pub stream_wait_share: Option<f64>,
    /// Share of its idle time while the host was blocked in a synchronising call; `None`
    /// as for H.
    pub sync_wait_share: Option<f64>,
    /// U: share of its idle time without evidence; `None` without idle time.
    pub unknown_wait_share: Option<f64>,
    /// C: share of its idle time covered by host work.
    pub covered_share: f64,
    /// Q: mean launch-to-start delay / mean kernel duration; `None` without launched kernels.
    pub queue_ratio: Option<f64>,
    /// Always [`Provenance::Inferred`], with [`assumptions`].
    pub provenance: Provenance,
}

/// Applies the rules.
pub(crate) fn decide(
    critical: Option<&Budget>,
    idle: Option<&GapCauses>,
    covered_share: f64,
    queue_ratio: Option<f64>,
    all_warm_up: bool,
) -> Verdict {
    let attributed = idle.filter(|c| (c.total() - c.unknown).0 > 0);
    let host_wait_share = attributed.map(|c| c.share(GapCause::HostNotLaunched));
    let stream_wait_share = attributed.map(|c| c.share(GapCause::StreamOrEvent));
    let sync_wait_share = attributed.map(|c| c.share(GapCause::SyncCall));
    let unknown_wait_share = idle
        .filter(|c| c.total().0 > 0)
        .map(|c| c.share(GapCause::Unknown));
    let busy_share = critical.map_or(0.0, |b| b.share(b.busy() - b.collective));
    let collective_share = critical.map_or(0.0, |b| b.share(b.collective));
    let idle_share = critical.map_or(0.0, |b| b.share(b.idle));
    let has_work = critical.is_some_and(|b| b.busy().0 > 0);
    let t = THRESHOLDS;
    let queued = queue_ratio.is_some_and(|q| q >= t.queue_ratio);
    let host_waited = host_wait_share.map_or(covered_share, |h| h) >= t.host_wait;
    let bound = if !has_work {
        Bound::NoGpuWork
    } else if all_warm_up {
        Bound::WarmUp
    } else if busy_share >= t.gpu_bound || (busy_share >= t.gpu_bound_queued && queued) {
        Bound::GpuBound
    } else if idle_share >= t.idle && host_waited {
        Bound::HostLaunchBound
    } else if idle_share >= t.idle
        && (host_wait_share.is_none() || unknown_wait_share.is_some_and(|u| u >= t.host_wait))
    {
        Bound::Inconclusive
    } else {
        Bound::Mixed
    };
    Verdict {
        bound,
        busy_share,
        collective_share,
        idle_share,
        host_wait_share,
        stream_wait_share,
        sync_wait_share,
        unknown_wait_share,
        covered_share,
        queue_ratio,
        provenance: Provenance::inferred(assumptions()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::{BudgetCheck, Window};
    use trace_model::Nanos;

    /// `host`: host-wait share of the idle time (the rest queued), `None` if unknown.
    fn check(busy: i64, host: Option<f64>, covered: f64, q: Option<f64>, expect: Bound) {
        let b = Budget {
            window: Window {
                start: Nanos(0),
                end: Nanos(100),
            },
            compute: Nanos(busy),
            collective: Nanos(0),
            memcpy: Nanos(0),
            memset: Nanos(0),
            idle: Nanos(100 - busy),
            activity_count: 1,
            check: BudgetCheck {
                parts: [Nanos(busy), Nanos(0), Nanos(0), Nanos(0)],
                prefix_unions: [Nanos(busy); 4],
            },
            provenance: Provenance::Measured,
        };
        let idle = host.map(|h| GapCauses {
            host_not_launched: Nanos((h * 1000.0) as i64),
            stream_or_event: Nanos(((1.0 - h) * 1000.0) as i64),
            ..GapCauses::default()
        });
        assert_eq!(
            decide(Some(&b), idle.as_ref(), covered, q, false).bound,
            expect
        );
    }

    #[test]
    fn rules() {
        check(0, None, 0.0, None, Bound::NoGpuWork);
        check(95, Some(0.9), 0.0, Some(0.1), Bound::GpuBound);
        check(85, Some(0.9), 0.0, Some(3.0), Bound::GpuBound);
        check(85, Some(0.9), 0.0, Some(0.5), Bound::Mixed);
        check(30, Some(0.9), 0.1, Some(0.2), Bound::HostLaunchBound);
        check(30, Some(0.9), 0.1, Some(5.0), Bound::HostLaunchBound);
        // Idle time mostly queued: the GPU waits on dependencies, not on the host.
        check(30, Some(0.2), 0.9, Some(0.2), Bound::Mixed);
        // Without launches, host coverage decides; without it, nothing does.
        check(30, None, 0.8, None, Bound::HostLaunchBound);
        check(30, None, 0.1, None, Bound::Inconclusive);
        check(60, None, 0.1, None, Bound::Mixed);
        check(60, Some(1.0), 0.9, Some(0.1), Bound::Mixed);
        assert_eq!(decide(None, None, 0.0, None, false).bound, Bound::NoGpuWork);
    }

    /// The assumptions line prints the table's thresholds as the rules use them.
    #[test]
    fn assumptions_name_the_thresholds() {
        assert!(
                        assumptions().contains(
                "rules G>=0.90, or G>=0.80 and Q>=1: GPU-bound; idle>=0.50 and H>=0.50 (C>=0.50 when H is unknown): host/launch-bound; idle>=0.50 and U>=0.50 (or H unknown): inconclusive; else mixed."
            ),
            "{}",
            assumptions()
        );
    }

    /// A stream busy with collectives is not GPU-bound, and its little idle time does
    /// not make it host-bound either.
    #[test]
    fn collectives_do_not_count_as_work() {
        let b = Budget {
            window: Window {
                start: Nanos(0),
                end: Nanos(100),
            },
            compute: Nanos(30),
            collective: Nanos(65),
            memcpy: Nanos(0),
            memset: Nanos(0),
            idle: Nanos(5),
            activity_count: 2,
            check: BudgetCheck {
                parts: [Nanos(30), Nanos(65), Nanos(0), Nanos(0)],
                prefix_unions: [Nanos(30), Nanos(95), Nanos(95), Nanos(95)],
            },
            provenance: Provenance::Measured,
        };
        let idle = GapCauses {
            host_not_launched: Nanos(5),
            ..GapCauses::default()
        };
        let v = decide(Some(&b), Some(&idle), 1.0, Some(5.0), false);
        assert_eq!(v.bound, Bound::Mixed);
        assert!((v.busy_share - 0.30).abs() < 1e-12);
        assert!((v.collective_share - 0.65).abs() < 1e-12);
    }
}
