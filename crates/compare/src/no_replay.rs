//! Why a cause of the before side has no replayed gain ([`crate::CauseRow::replay_note`]).

/// Why a cause has no replayed gain ([`crate::CauseRow::replay_note`]).
#[derive(Debug, Clone, PartialEq)]
pub enum NoReplay {
    /// No change of durations expresses the cause alone.
    NoScenario {
        /// Why, from the investigation.
        reason: investigation::NoScenarioReason,
    },
    /// The before capture cannot be replayed.
    CannotReplay {
        /// Why.
        reason: investigation::CannotReplay,
    },
    /// The before side is a report.json written without the cause's replay.
    FromReport,
    /// The before side holds no replay of the cause.
    NotReplayed,
}
