//! The launch join: each GPU activity with the host call that launched it (by
//! correlation id, as the reader linked them), and the launch-to-start delay
//! (activity start − launch call start), which is the time the work waited between
//! being issued and starting on the GPU.

use trace_model::{Capture, GpuActivity, HostEvent, Nanos};

use crate::steps::Spread;
use trace_model::Provenance;

/// An activity joined to its launch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Joined<'a> {
    pub(crate) activity: &'a GpuActivity,
    pub(crate) launch: Option<&'a HostEvent>,
}

impl Joined<'_> {
    /// Activity start − launch start; `None` without a launch.
    pub(crate) fn delay(&self) -> Option<Nanos> {
        self.launch.map(|l| self.activity.start - l.start)
    }
}

/// Joins one activity.
pub(crate) fn join<'a>(capture: &'a Capture, activity: &'a GpuActivity) -> Joined<'a> {
    Joined {
        activity,
        launch: activity.launch().map(|l| capture.host_event(l)),
    }
}

/// Launch-to-start delays over a set of activities (all `measured`).
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchStats {
    /// Activities looked at.
    pub activities: usize,
    /// Activities whose launch call is in the capture.
    pub with_launch: usize,
    /// Activities with no host launch in the capture (counted, never dropped).
    pub without_launch: usize,
    /// Sum of the non-negative delays.
    pub delay_sum: Nanos,
    /// Median (lower), min and max of the non-negative delays; `None` without any.
    pub delay: Option<Spread>,
    /// Activities that start before their launch call (clock skew between host and
    /// GPU): counted here, left out of `delay_sum` and `delay`.
    pub negative: usize,
    /// Always [`Provenance::Measured`].
    pub provenance: Provenance,
}

impl LaunchStats {
    /// Mean delay per launched activity (clock-skewed ones left out).
    pub fn mean_delay(&self) -> Option<Nanos> {
        let n = self.with_launch - self.negative;
        (n > 0).then(|| Nanos(self.delay_sum.0 / n as i64))
    }
}

/// Launch statistics over `activities` (e.g. all of a capture's, or its kernels).
pub(crate) fn launch_stats<'a>(
    capture: &'a Capture,
    activities: impl Iterator<Item = &'a GpuActivity>,
) -> LaunchStats {
    let mut delays = Vec::new();
    let mut count = 0;
    for a in activities {
        count += 1;
        if let Some(d) = join(capture, a).delay() {
            delays.push(d);
        }
    }
    let with_launch = delays.len();
    let negative = delays.iter().filter(|d| d.0 < 0).count();
    delays.retain(|d| d.0 >= 0);
    LaunchStats {
        activities: count,
        with_launch,
        without_launch: count - with_launch,
        delay_sum: delays.iter().copied().sum(),
        negative,
        delay: Spread::of(delays),
        provenance: Provenance::Measured,
    }
}
