//! One rank's timeline as Holistic Trace Analysis (HTA 0.5.0) sees it, and HTA's analyses
//! over it: the typed view of a trace's GPU activities, host events, CUDA synchronisation
//! events and steps ([`Timeline`]), built from the capture model
//! ([`Timeline::from_capture`]); the HTA analyses ([`hta`]: kernel breakdowns, temporal,
//! idle, overlap, launch statistics, queue length, stragglers) and the critical path
//! ([`critical_path()`]).
//!
//! No polars here: trace-frame (the events frame, SQL, Parquet cache, Arrow export)
//! builds the same timeline from its frame and re-exports these types.

#![warn(missing_docs)]

mod critical_path;
mod from_capture;
pub mod hta;
mod hta_aten;
mod hta_ranges;
mod networkx_path;
mod timeline;

pub use critical_path::{
    CpEdge, CpEdgeType, CpNode, CriticalPath, CriticalPathBound, CriticalPathGraph, critical_path,
    critical_path_graph,
};
pub use hta_ranges::HtaIntRanges;
pub use timeline::{Gpu, GpuKind, Host, HostCat, HtaView, SyncEvent, SyncKind, Timeline};
