//! The launch-overhead verdict: is the work GPU-bound, host/launch-bound, or mixed.
//!
//! The verdict is a judgement, labelled `inferred`, from three measured numbers:
//!
//! - **G**, the busy share of the critical stream: the stream with the most busy time
//!   in the analysed window (busy = union of its activities), busy time / window span.
//! - **C**, the share of that stream's idle time during which host work (framework ops
//!   and runtime calls, not synchronisation; see [`crate::gaps::is_host_work`]) ran on a
//!   thread that launches GPU work.
//! - **Q**, the queueing ratio: mean launch-to-start delay per launched kernel
//!   (TKLQT / launched kernels) divided by the mean kernel duration (AKD). Q ≥ 1 means
//!   a kernel typically waits in the queue at least as long as a kernel runs: the host
//!   is ahead of the GPU.
//!
//! Rules, first match wins:
//! 1. no GPU activity in the window → no verdict;
//! 2. **GPU-bound** if G ≥ 0.90, or G ≥ 0.80 and Q ≥ 1;
//! 3. **host/launch-bound** if G < 0.50 and (Q < 1 or C ≥ 0.50): the GPU is idle
//!    half the time and work reaches it about as soon as it is issued, or the host is
//!    busy while it waits;
//! 4. **mixed** otherwise.
//!
//! Assumptions: the critical stream stands for the step (other streams overlap it);
//! launch-to-start delay measures queueing (CPU and GPU clocks are aligned in the
//! trace); a kernel without a launch is left out of Q.

use crate::budget::Budget;
use crate::labels::Provenance;

/// The three outcomes (and the absence of GPU work).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    GpuBound,
    HostLaunchBound,
    Mixed,
    NoGpuWork,
}

impl Bound {
    pub fn label(self) -> &'static str {
        match self {
            Bound::GpuBound => "GPU-bound",
            Bound::HostLaunchBound => "host/launch-bound",
            Bound::Mixed => "mixed",
            Bound::NoGpuWork => "no GPU work",
        }
    }
}

/// Assumptions behind every verdict (see the module docs).
pub const ASSUMPTIONS: &str = "rules G>=0.90, or G>=0.80 and Q>=1: GPU-bound; G<0.50 and (Q<1 or C>=0.50): host/launch-bound; else mixed. The critical stream stands for the step; CPU and GPU clocks are aligned";

/// A verdict and the numbers it rests on.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub bound: Bound,
    /// G: busy share of the critical stream.
    pub busy_share: f64,
    /// C: share of its idle time covered by host work.
    pub covered_share: f64,
    /// Q: mean launch-to-start delay / mean kernel duration; `None` without launched kernels.
    pub queue_ratio: Option<f64>,
    pub provenance: Provenance,
}

/// Applies the rules.
pub fn decide(critical: Option<&Budget>, covered_share: f64, queue_ratio: Option<f64>) -> Verdict {
    let busy_share = critical.map_or(0.0, |b| b.share(b.busy()));
    let has_work = critical.is_some_and(|b| b.busy().0 > 0);
    let q_at_least_1 = queue_ratio.is_some_and(|q| q >= 1.0);
    let bound = if !has_work {
        Bound::NoGpuWork
    } else if busy_share >= 0.90 || (busy_share >= 0.80 && q_at_least_1) {
        Bound::GpuBound
    } else if busy_share < 0.50 && (!q_at_least_1 || covered_share >= 0.50) {
        Bound::HostLaunchBound
    } else {
        Bound::Mixed
    };
    Verdict {
        bound,
        busy_share,
        covered_share,
        queue_ratio,
        provenance: Provenance::Inferred {
            assumptions: ASSUMPTIONS,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::{BudgetCheck, Window};
    use trace_model::Nanos;

    fn check(busy: i64, covered: f64, q: Option<f64>, expect: Bound) {
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
                parts_sum: Nanos(100),
                span: Nanos(100),
                busy: Nanos(busy),
                union_busy: Nanos(busy),
            },
            provenance: Provenance::Measured,
        };
        assert_eq!(decide(Some(&b), covered, q).bound, expect);
    }

    #[test]
    fn rules() {
        check(0, 0.0, None, Bound::NoGpuWork);
        check(95, 0.0, Some(0.1), Bound::GpuBound);
        check(85, 0.0, Some(3.0), Bound::GpuBound);
        check(85, 0.0, Some(0.5), Bound::Mixed);
        check(30, 0.1, Some(0.2), Bound::HostLaunchBound);
        check(30, 0.8, Some(5.0), Bound::HostLaunchBound);
        check(30, 0.1, Some(5.0), Bound::Mixed);
        check(60, 0.9, Some(0.1), Bound::Mixed);
        assert_eq!(decide(None, 0.0, None).bound, Bound::NoGpuWork);
    }
}
