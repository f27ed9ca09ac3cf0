//! Every GPU kernel to its HLO instruction, `op_name` and Python line (JAX XSpace), or to its
//! CPU op and Python frame (PyTorch/Kineto), with the match kind of each kernel and the stat
//! that decided it.
//!
//! [`attribute_path`] loads a capture and attributes it; [`attribute_xspace`] and
//! [`attribute_kineto`] work on what a caller already loaded. The result, [`Attribution`],
//! holds one [`KernelRow`] per GPU activity (kernels, memcpys and memsets: every one exactly
//! once) and the aggregations of SPEC.md's outputs ([`Attribution::ops`],
//! [`Attribution::lines`], [`Attribution::how`]); `report::attribution_text` turns them into the CSV files and
//! the summary (it belongs in the `report` crate once that exists).
//!
//! ```
//! use attribution::{Config, MatchKind};
//! let hlo = r#"HloModule jit_f, is_scheduled=true
//!
//! ENTRY %main (x: f32[8]) -> f32[8] {
//!   %x = f32[8]{0} parameter(0)
//!   ROOT %neg = f32[8]{0} negate(f32[8]{0} %x), metadata={op_name="jit(f)/neg" source_file="f.py" source_line=3}
//! }
//! "#;
//! let module = hlo_parser::parse_module(hlo)?;
//! let program = attribution::ProgramModule { program_id: 1, module_name: "jit_f".into(), module };
//! let mut capture = trace_model::CaptureBuilder::new(trace_model::Format::XPlane);
//! // One device, one stream, one kernel with `hlo_op = neg`, `program_id = 1`.
//! capture.devices.push(trace_model::Device { id: trace_model::DeviceId::new(0), ordinal: 0,
//!     vendor: trace_model::Vendor::Nvidia, properties: Default::default() });
//! capture.streams.push(trace_model::Stream { id: trace_model::StreamId::new(0),
//!     device: trace_model::DeviceId::new(0), ordinal: 7, name: None });
//! let name = capture.strings.intern("neg");
//! let mut kernel = trace_model::GpuActivity::new(trace_model::StreamId::new(0),
//!     trace_model::Nanos(0), trace_model::Nanos(5), name, trace_model::ActivityKind::Kernel,
//!     trace_model::classify_kernel("neg"), 0);
//! kernel.hlo_op = Some(capture.strings.intern("neg"));
//! kernel.program_id = Some(1);
//! capture.activities.push(kernel);
//! let capture = capture.finish(std::path::Path::new("example.xplane.pb"));
//! let result = attribution::attribute_xspace(&capture, &[program], &Config::default())?;
//! assert_eq!(result.kernels[0].match_kind, MatchKind::Exact);
//! assert_eq!(result.kernels[0].source_line, "f.py:3");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod jax;
mod load;
mod model;
mod torch;
mod user;

pub use error::Error;
pub use jax::{ProgramModule, attribute_xspace};
pub use load::attribute_path;
pub use model::{
    Attribution, Config, DecidedBy, HowRow, KernelRow, LineRow, MatchKind, OpRow, ProgramSummary,
    SourceFormat,
};
pub use torch::attribute_kineto;
pub use user::{is_default_torch_user_frame, parse_python_frame};
