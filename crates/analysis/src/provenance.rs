//! Where the numbers of the results that carry no label field come from, as
//! `trace_model::Provenance`: the renderers take each label from here, never from a
//! string of their own.

use trace_model::Provenance;

use crate::skip::{HostOnly, InFlight};
use crate::steps::Steps;

impl InFlight {
    /// Where the count and the time come from: counted and summed from the capture.
    pub fn provenance(&self) -> Provenance {
        Provenance::Measured
    }
}

impl HostOnly {
    /// Where the times come from: measured from the capture's step ranges, activities and
    /// host events.
    pub fn provenance(&self) -> Provenance {
        Provenance::Measured
    }
}

impl Steps {
    /// Where the step count and durations come from: measured from the evidence that
    /// [`Steps::origin`] names, recorded in the capture.
    pub fn provenance(&self) -> Provenance {
        Provenance::Measured
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::last_finisher::LastFinisher;
    use trace_model::Nanos;

    #[test]
    fn a_last_finisher_on_raw_clocks_is_inferred() {
        let mut lf = LastFinisher {
            step: 3,
            rank: Some(1),
            behind_earliest: Nanos(10),
            aligned_on_base_time: true,
        };
        assert_eq!(lf.provenance(), Provenance::Measured);
        lf.aligned_on_base_time = false;
        assert_eq!(lf.provenance().word(), "inferred");
    }
}
