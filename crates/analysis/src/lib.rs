//! Numbers over a GPU profiler capture, for the tools and for other Rust projects.
//!
//! - Loading: the `load` crate reads a capture of any known format, or a directory of
//!   them, into [`Loaded`] captures; [`inventory`] says what one holds (`trace-info`).
//! - GPU time by bucket ([`gpu_summary`], `analyze-profile`'s default mode): every GPU
//!   activity attributed to the CPU op that launched it and put in one of [`buckets`],
//!   so the buckets sum to the GPU time. [`bucket_summary`] runs the whole tool,
//!   including its `--compat` mode, which reproduces the original script's numbers and
//!   text byte for byte (and with them its name rules, which leave many kernels in
//!   "other").
//! - Time budgets ([`stream_budgets`], [`device_budget`], [`budget_of`]): how a window of
//!   each stream or device splits into compute, collective, memcpy, memset and idle,
//!   each checked against independent interval unions ([`BudgetCheck`]).
//! - What `skip-stats` computes ([`skip_stats`], [`analyze_capture`]; the `report` crate
//!   renders it): steps, budgets, idle gaps and their causes, the launch join, SKIP
//!   metrics and the launch-overhead [`Verdict`]; every number carries a [`trace_model::Provenance`].
//!
//! A capture from an in-memory Chrome trace: the `volta_sgemm` kernel launched by
//! `aten::mm` lands in the GEMM bucket, the NCCL kernel in communication.
//!
//! ```
//! use std::path::Path;
//!
//! let trace = r#"{"traceEvents": [
//!   {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
//!   {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
//!    "ts": 1, "dur": 2, "args": {"correlation": 1}},
//!   {"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7,
//!    "ts": 5, "dur": 30, "args": {"correlation": 1, "device": 0, "stream": 7}},
//!   {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float", "pid": 0,
//!    "tid": 8, "ts": 20, "dur": 10, "args": {"device": 0, "stream": 8}}
//! ]}"#;
//! let capture = chrome_reader::load_from(trace.as_bytes(), Path::new("tiny.json"))?;
//! let summary = analysis::gpu_summary(&capture, "tiny.json", None);
//! let bucket = |name: &str| summary.buckets.iter().find(|b| b.bucket == name).map(|b| b.time_ns.0);
//! assert_eq!(bucket(analysis::buckets::GEMM), Some(30_000));
//! assert_eq!(bucket(analysis::buckets::COMMUNICATION), Some(10_000));
//! assert_eq!(summary.gpu_time_ns, trace_model::Nanos(40_000));
//!
//! // The GEMM and the all-reduce overlap for 10 µs on two streams of one device: the
//! // device budget gives that time to compute, and the check recomputes it from unions.
//! let window = analysis::Window { start: trace_model::Nanos(5_000), end: trace_model::Nanos(35_000) };
//! let budget = analysis::device_budget(&capture, capture.devices()[0].id, window);
//! assert_eq!((budget.compute.0, budget.collective.0, budget.idle.0), (30_000, 0, 0));
//! assert!(budget.check.holds());
//! # Ok::<(), analysis::Error>(())
//! ```

#![warn(missing_docs)]

mod bucket_summary;
mod budget;
mod causes;
mod diagnosis;
mod error;
mod gaps;
mod host_cause;
mod input;
mod interval;
mod inventory;
mod last_finisher;
mod launch;
mod moe;
mod percent;
mod practices;
mod provenance;
mod ranks;
mod rows_csv;
mod skip;
mod step_candidates;
mod step_nesting;
mod step_origin;
mod steps;
mod verdict;
mod warmup;

pub use budget::{
    Budget, BudgetCheck, BusyKind, StreamBudget, Window, budget_of, device_budget, stream_budgets,
};
pub use causes::{Cause, CauseKey, bounding_cause, causes};
pub use diagnosis::{
    BOUND_SHARE, CannotTell, DIAGNOSIS_RULES, Diagnosis, Framework, FrameworkGuess, Knob,
    MIN_GPU_WORK, StepBasis, StepSides, detect_framework, diagnose, diagnose_with, host_knobs,
    step_sides,
};
pub use error::{Error, error_chain};
pub use gaps::{
    Gap, GapCause, GapCauses, GapEvidence, GapHost, HostSplit, HostTime, HostTop, IdleCauses,
    LAUNCH_LATENCY, gap_causes, idle_causes, idle_gaps, is_stream_wait_call, is_synchronising_call,
    launching_threads,
};
pub use host_cause::{
    HostCause, LONG_SELF_STRETCH, WAKE_LIMIT, WAKE_SHARE, host_cause_stretches,
    host_cause_stretches_all, is_allocator_call, is_compilation, is_data_loading,
    is_profiler_overhead, wake_limit,
};
pub use input::{Loaded, LoadedEach, ProgramInfo};
pub use inventory::{
    DeviceInfo, DiagnosticInfo, Inventory, StepsInfo, StreamInfo, ThreadInfo, inventory,
};

pub use bucket_summary::gpu::{
    BackendRow, Basis, BasisRow, BucketRow, GpuSummary, HINTS, HINTS_RULE, Hint, LaunchingOpRow,
    MATH_BACKEND, Phase, TrustItem, UNKNOWN_BACKEND, gpu_summary, gpu_summary_of_file, hints,
};
pub use bucket_summary::{
    Config as ProfileConfig, DIR_PATTERN, Input as ProfileInput, Mode as ProfileMode,
    Output as ProfileOutput, buckets, compat_json_from_reader, group_thousands, python_prefix_len,
    run as bucket_summary, truncate_name,
};
pub use last_finisher::LastFinisher;
pub use launch::LaunchStats;
pub use moe::{is_moe_gemm_name, moe_gemm_activities};
pub use percent::percent_of;
pub use practices::{
    Practice, Practices, is_activation_checkpoint, is_eager_attention_kernel, practices,
    stream_time,
};
pub use ranks::{
    CollectiveSkew, CollectiveTime, Config as CrossRankConfig, CrossRank, HeatRow, RankRow,
    RankTimeline, StepHeatMap, Straggler, cross_rank, rank_timeline, step_heat_map,
};
pub use rows_csv::{
    RankRows as SkipRankRows, RowParts as SkipRowParts, RowsInRankOrder as SkipRowsInRankOrder,
    write_rows_header as skip_rows_header,
};
pub use skip::{
    CaptureAnalysis, CommStream, Config as SkipConfig, DeviceRow, DeviceSteps, GpuBehind, HostOnly,
    InFlight, InputAnalysis, SkipMetrics, StepMetrics, StreamRow, analyze as analyze_capture,
    assemble as skip_stats_assemble, report_with_rows as skip_report_with_rows, run as skip_stats,
    run_loaded as skip_stats_loaded, run_loaded_without_rows as skip_stats_loaded_without_rows,
    run_without_rows as skip_stats_without_rows,
};
pub use steps::{
    CandidateOutcome, HostRangeKind, MIN_STEP_COVERAGE, Spread, StepCandidate, StepEvidence,
    StepOrigin, StepRange, Steps,
};
pub use verdict::{Bound, Verdict, assumptions as verdict_assumptions};
pub use warmup::{
    MATTERS_SHARE, SLOW_FIRST_RATIO, SLOW_LAUNCH, WARM_UP_SHARE, WarmUp, WarmUpEvent,
    is_warm_up_event,
};
