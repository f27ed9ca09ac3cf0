//! The format-independent model of a GPU profiler capture.
//!
//! Readers (`chrome-reader`, `xplane-reader`) build a [`Capture`]; analyses read it.
//! Time is integer nanoseconds ([`Nanos`]) on one axis per capture; names are interned
//! ([`StringId`]); GPU activities are linked to the host call that launched them and,
//! through it, to the CPU op above that call.
//!
//! ```
//! use trace_model::{classify_kernel, KernelClass, CollectiveKind};
//! assert_eq!(classify_kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"),
//!            KernelClass::Collective(CollectiveKind::AllReduce));
//! assert_eq!(classify_kernel("volta_sgemm_128x64_nn"), KernelClass::Gemm);
//! ```

mod capture;
mod classify;
mod diagnostics;
mod hash;
mod intern;
mod link;
mod time;

pub use capture::{
    ActivityKind, Capture, Device, DeviceId, DeviceProperties, Format, GpuActivity, GpuAnnotation,
    HostEvent, HostEventId, HostKind, HostThread, MemcpyDirection, ProcessGroup, Step, StepSource,
    Stream, StreamId, TIME_OUT_OF_RANGE, ThreadId, TraceMeta, Vendor,
};
pub use classify::{
    CollectiveKind, KernelClass, classify_kernel, is_graph_launch_api, memcpy_direction,
};
pub use diagnostics::{Diagnostic, Diagnostics};
pub use hash::{FastMap, FxHasher};
pub use intern::{Interner, StringId};
pub use time::Nanos;
