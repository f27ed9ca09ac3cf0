//! Step 3 of the [`Investigation`](super::Investigation): one step drawn as swimlanes, the
//! GPU streams and launching host threads of the rank(s) drawn, typed (report names the
//! rows and titles the slices).

use serde::{Deserialize, Serialize};
use trace_model::Nanos;

use super::Who;

/// Step 3.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "drawn", rename_all = "snake_case")]
pub enum Swimlanes {
    /// The capture has no step.
    NoStep,
    /// The step has no GPU activity.
    NoActivity {
        /// The step.
        number: i64,
    },
    /// The step drawn.
    Drawn {
        /// The step.
        number: i64,
        /// Its streams and launching threads.
        chart: Chart,
        /// What the rank that finished last ran last.
        straggler: Option<LastActivity>,
    },
}

/// What the rank that finished a step last ran last in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LastActivity {
    /// The rank.
    pub who: Who,
    /// The step.
    pub step: i64,
    /// After the earliest rank.
    pub behind_earliest: Nanos,
    /// The activity's name.
    pub name: String,
    /// Its class word.
    pub class: String,
    /// Its duration.
    pub dur: Nanos,
    /// A collective (it waited for its peers, or they for it), else compute.
    pub collective: bool,
}

/// What a swimlane row shows (serialised flattened into its [`Lane`], tagged by `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LaneKind {
    /// A GPU stream.
    Gpu {
        /// The GPU's ordinal.
        gpu: i64,
        /// The stream's ordinal.
        stream: i64,
    },
    /// A host thread.
    Host {
        /// The thread's id.
        thread: i64,
    },
}

/// One slice of a row: `[start, end)` in the chart's time unit (ns).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Slice {
    /// Slice start, ns.
    pub start: i64,
    /// Slice end, ns.
    pub end: i64,
    /// Colour key: a kernel class word (`gemm`, `collective`, …) or `host`.
    pub class: String,
    /// The activity's (or host call's) name.
    pub name: String,
    /// Its duration (`measured`).
    pub dur: Nanos,
    /// The CPU op that launched it (GPU slices), where one is linked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
}

/// One row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lane {
    /// The rank whose row it is, over a rank directory (its rows are named by it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<Who>,
    /// What the row shows: which GPU stream or host thread.
    #[serde(flatten)]
    pub kind: LaneKind,
    /// The stream with the most compute.
    pub critical: bool,
    /// The stream that ended the step last on the rank that finished last.
    pub last_to_finish: bool,
    /// The row's slices, in time order.
    pub slices: Vec<Slice>,
}

/// The swimlane chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chart {
    /// Start of the drawn window, ns.
    pub start: i64,
    /// End of the drawn window, ns.
    pub end: i64,
    /// The rows, top to bottom.
    pub lanes: Vec<Lane>,
}
