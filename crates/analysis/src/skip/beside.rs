//! One capture's analysis spread over the cores: its rows.csv rows written beside it, and
//! the labels its gaps' causes need worked out from the start.

use trace_model::Capture;

use super::{CaptureAnalysis, Config, analyze_steps, steps_outside_flight};
use crate::host_cause::EarlyLabels;
use crate::steps::Steps;

/// Analyses `capture` while `rows` writes its rows (they need only the steps) on this
/// thread; with more than one core, the analysis on a thread of its own, and another works
/// out the busiest launching thread's labels ([`EarlyLabels`]) from the start.
pub(super) fn analyze_beside_rows<E>(
    capture: &Capture,
    label: &str,
    rank: Option<i64>,
    config: &Config,
    rows: impl FnOnce(&Steps) -> Result<(), E>,
) -> (Result<(), E>, CaptureAnalysis) {
    let early = &EarlyLabels::new(capture);
    let parallel = load::chrome::default_threads() > 1;
    std::thread::scope(|outer| {
        if parallel {
            outer.spawn(|| early.work());
        }
        let (steps, in_flight) = steps_outside_flight(capture);
        let analyse = || analyze_steps(capture, label, rank, config, &steps, in_flight, early);
        if !parallel {
            return (rows(&steps), analyse());
        }
        std::thread::scope(|inner| {
            let analysis = inner.spawn(analyse);
            let written = rows(&steps);
            let report = analysis.join();
            (
                written,
                report.unwrap_or_else(|p| std::panic::resume_unwind(p)),
            )
        })
    })
}
