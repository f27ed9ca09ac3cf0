//! Numbers over a GPU profiler capture.
//!
//! - [`profile_summary`]: what `analyze-profile` prints: GPU time by bucket, attention
//!   backend, top ops and hints, both exactly as the seed script computes them
//!   ([`profile_summary::seed`]) and with every GPU activity attributed to the CPU op
//!   that launched it ([`profile_summary::gpu`]).
//! - What `skip-stats` computes ([`skip::run`], [`skip::analyze`]; the `report` crate renders it):
//!   [`steps`] (ProfilerStep#, step markers, repeated XLA modules), [`budget`] (per
//!   device x stream compute / collective / memcpy / memset / idle, reconciled),
//!   [`gaps`] (GPU-idle gaps and the host events inside them), [`launch`] (activity ↔
//!   launch join and delays), SKIP metrics ([`skip`]) and the [`verdict`]; every
//!   number carries a [`labels::Provenance`].
//!
//! ```
//! use analysis::profile_summary::bucket_of;
//! assert_eq!(bucket_of("aten::addmm"), "matmul (GEMM)");
//! assert_eq!(bucket_of("ncclKernel_AllReduce_RING_LL_Sum_float"), "reduce (all-reduce/gather)");
//! assert_eq!(bucket_of("volta_sgemm_128x64_nn"), "other");
//! ```

mod error;
pub mod profile_summary;
// trace-info: loading any capture, and what it holds.
pub mod input;
pub mod inventory;
// skip-stats (issue 4): steps, budgets, idle gaps, launch join, SKIP metrics, verdict.
pub mod budget;
pub mod gaps;
pub mod labels;
pub mod launch;
pub mod skip;
pub mod steps;
pub mod verdict;

pub use error::{Error, error_chain};
