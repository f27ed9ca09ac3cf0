//! The format-independent model of a GPU profiler capture.
//!
//! Readers (`chrome-reader`, `xplane-reader`) fill a [`CaptureBuilder`] and
//! [`finish`](CaptureBuilder::finish) it into a read-only [`Capture`]; analyses read that.
//! Time is integer nanoseconds ([`Nanos`]) on one axis per capture; names are interned
//! ([`StringId`]); GPU activities are linked to the host call that launched them and,
//! through it, to the CPU op above that call. Odd but usable input is counted in
//! [`Diagnostics`]. Every number a library reports carries a [`Provenance`].
//!
//! ```
//! use std::path::Path;
//! use trace_model::{
//!     ActivityDetails, ActivityKind, CaptureBuilder, Format, GpuActivity, HostEvent, HostKind,
//!     KernelClass, Nanos, StreamId, ThreadId, classify_kernel,
//! };
//!
//! let mut b = CaptureBuilder::new(Format::KinetoJson);
//! let (launch, gemm) = (b.strings.intern("cudaLaunchKernel"), b.strings.intern("volta_sgemm_128x64_nn"));
//! let mut call =
//!     HostEvent::new(ThreadId::new(0), Nanos(1_000), Nanos(5_000), launch, HostKind::Runtime, 0);
//! call.set_correlation(Some(7));
//! b.push_host_event(call, None);
//! let class = classify_kernel("volta_sgemm_128x64_nn");
//! assert_eq!(class, KernelClass::Gemm);
//! let mut kernel = GpuActivity::new(
//!     StreamId::new(0), Nanos(9_000), Nanos(40_000), gemm, ActivityKind::Kernel, class, 1,
//! );
//! kernel.set_correlation(Some(7));
//! b.push_activity(kernel, ActivityDetails::default());
//!
//! // `finish` sorts, drops absurd times and links each activity to its launch.
//! let capture = b.finish(Path::new("example.json"));
//! let kernel = &capture.stream_activities(StreamId::new(0))[0];
//! let launch = capture.host_event(kernel.launch().expect("linked by correlation id"));
//! assert_eq!((capture.name(launch.name), launch.kind), ("cudaLaunchKernel", HostKind::Launch));
//! assert_eq!(kernel.start - launch.start, Nanos(8_000));
//! assert_eq!(capture.gpu_span(), Some((Nanos(9_000), Nanos(49_000))));
//! ```

#![warn(missing_docs)]

mod builder;
mod capture;
mod classify;
mod diagnostics;
pub mod files;
mod hash;
mod intern;
pub mod kineto;
pub mod limits;
mod link;
mod provenance;
mod side;
mod time;

pub use builder::{CaptureBuilder, TIME_OUT_OF_RANGE};
pub use capture::{
    ActivityDetails, ActivityKind, Capture, Device, DeviceId, DeviceProperties, Format,
    GpuActivity, GpuAnnotation, HloModule, HostEvent, HostEventId, HostKind, HostThread,
    MemcpyDirection, ModuleId, OpShapes, ProcessGroup, Step, StepSource, Stream, StreamId,
    ThreadId, TraceMeta, Vendor, nesting_order,
};
pub use classify::{
    CollectiveKind, KernelClass, classify_kernel, is_graph_launch_api, memcpy_direction,
};
pub use diagnostics::{Diagnostic, Diagnostics};
pub use hash::{FastMap, FxHasher};
pub use intern::{Interner, StringId};
pub use kineto::{ASKED_SYMBOLS, ArgRanges, KinetoDetails, SyncEvent, SyncKind, asked_bits};
pub use provenance::{Labelled, Provenance, TrustItem};
pub use time::Nanos;
