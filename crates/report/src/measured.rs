//! Figures counted or summed from the capture's own records: the `measured` label, so that
//! the documents of the tools build them one way.

use trace_model::{Nanos, Provenance};

use crate::label::Figure;

/// A measured duration.
pub fn duration(ns: Nanos) -> Figure {
    Figure::duration(ns, Provenance::Measured)
}

/// A measured count (of any integer type; one beyond `u64` reads as `u64::MAX`).
pub fn count(n: impl TryInto<u64>) -> Figure {
    Figure::count(n.try_into().unwrap_or(u64::MAX), Provenance::Measured)
}

/// A measured percentage (0–100).
pub fn percent(p: f64) -> Figure {
    Figure::percent(p, Provenance::Measured)
}

/// A measured share (0–1), as a percentage.
pub fn share(x: f64) -> Figure {
    Figure::percent(100.0 * x, Provenance::Measured)
}

/// A measured number in the unit its column or sentence names (µs, %).
pub fn number(x: f64) -> Figure {
    Figure::number(x, Provenance::Measured)
}
