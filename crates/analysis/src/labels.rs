//! Provenance labels: every number that leaves the library says whether it was
//! measured, read or inferred (docs/ARCHITECTURE.md, "Invariants").

use serde::Serialize;

/// Where a number comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "label", rename_all = "lowercase")]
#[non_exhaustive]
pub enum Provenance {
    /// Counted or summed from the trace's own records.
    Measured,
    /// Copied from metadata or a spec sheet; `source` names it.
    Read {
        /// The metadata field or document it was read from.
        source: &'static str,
    },
    /// An estimate or a judgement; `assumptions` states what it rests on.
    Inferred {
        /// What the estimate rests on, in words.
        assumptions: &'static str,
    },
}

impl Provenance {
    /// The bare label, as reports print it.
    pub fn label(self) -> &'static str {
        match self {
            Provenance::Measured => "measured",
            Provenance::Read { .. } => "read",
            Provenance::Inferred { .. } => "inferred",
        }
    }
}
