//! Which rank finished a step last, across the captures of a rank directory, and how far
//! behind the earliest rank (moved out of `skip.rs`, which only assembles it).

use trace_model::{Nanos, Provenance};

use crate::skip::CaptureAnalysis;

/// Which rank's GPU work of a step ended last.
#[derive(Debug, Clone, PartialEq)]
pub struct LastFinisher {
    /// The step compared: the last one that every rank has.
    pub step: i64,
    /// The rank that finished last.
    pub rank: Option<i64>,
    /// How much later than the earliest rank it ended (`measured` on aligned clocks).
    pub behind_earliest: Nanos,
    /// True when every rank recorded `baseTimeNanoseconds` (clocks aligned on it);
    /// otherwise raw timestamps are compared, which assumes the ranks share a clock.
    pub aligned_on_base_time: bool,
}

impl LastFinisher {
    /// Where [`LastFinisher::behind_earliest`] comes from: measured on clocks aligned on
    /// `baseTimeNanoseconds`; on raw timestamps, inferred, as it then assumes the ranks
    /// share a clock.
    pub fn provenance(&self) -> Provenance {
        if self.aligned_on_base_time {
            Provenance::Measured
        } else {
            Provenance::inferred("raw timestamps, assuming the ranks share a clock")
        }
    }
}

/// The last step every rank has, and which rank's GPU work of it ended last; `None`
/// without a common step.
pub(crate) fn last_finisher(reports: &[CaptureAnalysis]) -> Option<LastFinisher> {
    let aligned = reports.iter().all(|r| r.base_time_ns.is_some());
    // The last step number that every rank has.
    let mut common: Option<Vec<i64>> = None;
    for r in reports {
        let nums: Vec<i64> = r
            .per_step
            .iter()
            .filter(|s| s.gpu_range.is_some())
            .map(|s| s.number)
            .collect();
        common = Some(match common {
            None => nums,
            Some(c) => c.into_iter().filter(|n| nums.contains(n)).collect(),
        });
    }
    let step = common?.into_iter().max()?;
    let ends: Vec<(i64, Option<i64>)> = reports
        .iter()
        .filter_map(|r| {
            let s = r.per_step.iter().find(|s| s.number == step)?;
            let base = if aligned {
                r.base_time_ns.unwrap_or(0)
            } else {
                0
            };
            Some((base + s.gpu_range?.end.0, r.rank))
        })
        .collect();
    let (last_end, rank) = ends
        .iter()
        .max_by_key(|(e, r)| (*e, std::cmp::Reverse(*r)))?;
    let first_end = ends.iter().map(|e| e.0).min()?;
    Some(LastFinisher {
        step,
        rank: *rank,
        behind_earliest: Nanos(last_end - first_end),
        aligned_on_base_time: aligned,
    })
}
