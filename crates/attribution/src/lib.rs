//! Every GPU kernel to its HLO instruction, `op_name` and Python line (JAX XSpace), or to its
//! CPU op and Python frame (PyTorch/Kineto), with the match kind of each kernel and the stat
//! that decided it.
//!
//! [`attribute_path`] loads a capture and attributes it; [`attribute_xspace`] and
//! [`attribute_kineto`] work on what a caller already loaded. The result, [`Attribution`],
//! holds one [`KernelRow`] per GPU activity (kernels, memcpys and memsets: every one exactly
//! once) and the aggregations attribute-kernels writes ([`Attribution::ops`],
//! [`Attribution::lines`], [`Attribution::how`]); the `report` crate's `attribution_text`
//! turns them into the CSV files and the summary.
//!
//! A PyTorch trace with `with_stack=True`, in memory: the kernel's launch leads to
//! `aten::mm`, and the `python_function` frames around it to the user's `train.py` line.
//!
//! ```
//! use attribution::{Config, DecidedBy, MatchKind};
//! let trace = r#"{"traceEvents": [
//!   {"ph": "X", "cat": "python_function", "name": "train.py(12): step", "pid": 1, "tid": 1,
//!    "ts": 0, "dur": 20},
//!   {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 10},
//!   {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
//!    "ts": 2, "dur": 2, "args": {"correlation": 1}},
//!   {"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7,
//!    "ts": 5, "dur": 30, "args": {"correlation": 1, "device": 0, "stream": 7}}
//! ]}"#;
//! let path = std::path::Path::new("tiny.json");
//! let capture = chrome_reader::load_from(trace.as_bytes(), path)?;
//! let result = attribution::attribute_kineto(&capture, &Config::default(), "tiny.json")?;
//! let kernel = &result.kernels[0];
//! assert_eq!((kernel.match_kind, kernel.decided_by), (MatchKind::Exact, DecidedBy::CorrelationChain));
//! assert_eq!((kernel.op_name.as_str(), kernel.source_line.as_str()), ("aten::mm", "train.py:12"));
//! assert_eq!(result.attributed_time_ns(), trace_model::Nanos(30_000));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod error;
mod jax;
mod load;
mod model;
mod shared;
mod torch;
mod user;

pub use error::Error;
pub use jax::{ProgramModule, attribute_xspace};
pub use load::{attribute_loaded, attribute_path};
pub use model::{
    Attribution, Config, DecidedBy, HowRow, KernelRow, LineRow, MatchKind, OpRow, ProgramSummary,
    SourceFormat,
};
pub use shared::SharedName;
pub use torch::attribute_kineto;
pub use user::{is_default_torch_user_frame, is_library_line, parse_python_frame};
