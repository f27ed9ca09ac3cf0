//! Semantic lane packing for GPU profiler traces, after torchtitan's
//! `compact_cuda_graph_trace.py`.
//!
//! CUDA-graph replay gives each captured region its own stream, so a Kineto trace opens
//! in Perfetto as hundreds of near-empty rows. [`compact_trace`] repacks the measured GPU
//! slices (kernel, memcpy, memset) into a few lanes per process and semantic group
//! (compute, NCCL all-gather, ..., memcpy, memset) by greedy interval partitioning. Only
//! `tid` and `args.stream` of a slice change; every other event is written back byte for
//! byte, except the documented remaps (flow endpoints and GPU annotations follow their
//! slices, per-kernel CUDA-graph annotations become spans, identical overlapping
//! annotations are coalesced, lane metadata is added). A self-check fails the call if a
//! measured slice changed (every byte of its text but the `tid` and `args.stream` values
//! is hashed when it is read and again as it will be written, and the new tid must stand
//! at both places) or a lane holds overlapping slices. Slice fields are read by a
//! one-pass scanner of the text, serde only for the shapes it leaves alone.
//!
//! [`Config::lanes`] chooses the groups: [`LaneGrouping::Original`] (the default) keeps the
//! script's name rules ([`Group`]) and its output; [`LaneGrouping::Semantic`] groups by the
//! workspace's kernel classes ([`ClassGroup`], from `trace_model::classify_kernel`), so
//! every collective of any library (NCCL, RCCL, custom all-reduce, ...) gets a
//! `Communication <kind>` lane and compute splits into GEMM, attention, elementwise, ...
//! lanes; PP blocks are then read from the first lane of every compute class.
//!
//! [`merge_pp_traces`] compacts the traces of a pipeline's ranks, aligns them on the
//! smallest `baseTimeNanoseconds`, stacks them in pipeline order and draws flow arrows
//! between `PP:<stage><op><microbatch>` annotations.
//!
//! [`swimlane_layout`] lays out one time window as rows of items, for a report to draw.
//!
//! # Differences from the reference script
//!
//! On all 31 real PyTorch traces of the corpus and on the synthetic sets, the summaries
//! and the output events equal those of torchtitan's `compact_cuda_graph_trace.py`
//! (numbers compared as values), except where the script fails or loses information:
//! - An `ac2g` flow endpoint on a GPU stream that starts at no slice (Kineto also binds
//!   flows to `cuda_sync` events there) stays on its stream and is reported in
//!   [`Compacted::diagnostics`]; the script stops with "mapped m/n GPU ac2g flow endpoints".
//! - An old stream's `thread_name`/`thread_sort_index` is kept while other events (e.g.
//!   `cuda_sync`, `async_cpu_to_gpu`) still sit on that row; the script drops it.
//! - Times are integer nanoseconds: a strictly-forward SEND→RECV arrow lands 1 ns after
//!   the send (the script uses the next float), and merged timestamps are exact.
//! - Untouched events keep their exact bytes; rewritten ones keep every other member's
//!   bytes. `traceEvents` is written after the other top-level members, and `.gz` output
//!   is deflated at level 4 in 1 MiB chunks on every core (about 1.22× the size of
//!   Python's `gzip` output, which uses level 9; 1.13× at level 5, for about 6% more
//!   CPU).
//! - Errors are values naming the file and event index; the tool exits 2 on all of them.
//! - [`LaneGrouping::Semantic`] is ours: its lanes, their names and the summary's group
//!   keys differ, and `cuda_graph_stream_compaction` gains a `lane_groups` member.
//!
//! ```
//! use std::path::Path;
//! use lanes::synth::{GraphTraceSpec, graph_trace_json};
//!
//! // A CUDA-graph replay over 300 capture streams (or `Trace::read_file(path)`).
//! let json = graph_trace_json(&GraphTraceSpec::default());
//! let trace = lanes::Trace::read(json.as_bytes(), Path::new("graph.json"))?;
//! let compacted = lanes::compact_trace(trace, &lanes::Config::default())?;
//! let s = &compacted.summary;
//! assert_eq!(s.original_streams, 300 + 38 + 1); // capture, all-gather and memcpy streams
//! assert!(s.compacted_lanes <= 12);
//! let dir = tempfile::tempdir().expect("a temporary directory");
//! lanes::write_trace_file(&compacted.trace, &dir.path().join("graph_compacted.json.gz"))?;
//! # Ok::<(), lanes::Error>(())
//! ```

#![warn(missing_docs)]

mod compact;
mod error;
mod event;
mod group;
mod gzip;
mod json_object;
mod merge;
mod output;
mod parts;
mod pp;
mod swimlane;
pub mod synth;
pub mod validate;

pub use compact::{CompactSummary, Compacted, PpLocalFlows, compact_trace, pack};
pub use error::Error;
pub use event::Trace;
pub use group::{ClassGroup, Config, Group, LaneGrouping};
pub use merge::{MergeSummary, Merged, PpRank, merge_pp_files, merge_pp_traces, rank_trace_paths};
pub use output::{
    default_merged_output, default_output, overwrite_trace_file, stage_trace, write_trace,
    write_trace_file,
};
pub use swimlane::{RowKind, RowMode, SwimlaneItem, SwimlaneLayout, SwimlaneRow, swimlane_layout};
