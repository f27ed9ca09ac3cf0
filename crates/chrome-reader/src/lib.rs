//! Chrome trace JSON reader: PyTorch/Kineto `.json[.gz]` and JAX `*.trace.json.gz`; and
//! the writer of any capture as such JSON ([`write_chrome_trace`]), so that a capture read
//! from another format opens in Perfetto.
//!
//! Two layers:
//! - [`read_raw_events`] / [`read_raw_file`]: a streaming pass over `traceEvents` that
//!   hands each event to a callback as a [`RawEvent`], with the common fields decoded and
//!   the exact JSON text kept. Memory does not grow with the file.
//! - the model builder ([`load`], [`load_from`], [`load_dir`]), which turns the events into
//!   a format-independent [`trace_model::Capture`]. It decodes `args` only where the model
//!   reads them (complete events but Python frames, metadata), and there only the keys it
//!   uses; every other event's `args` stays text in its [`RawEvent::json`], checked as JSON
//!   but not decoded ([`args_decoded`] counts the decodes).
//!
//! ```
//! use std::path::Path;
//! use trace_model::{Format, HostKind, KernelClass};
//!
//! let json = br#"{"schemaVersion": 1, "traceEvents": [
//!   {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
//!    "ts": 100.5, "dur": 4, "args": {"correlation": 7}},
//!   {"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7,
//!    "ts": 110, "dur": 20.25, "args": {"device": 0, "stream": 7, "correlation": 7}}
//! ]}"#;
//! let path = Path::new("trace.json");
//! let capture = chrome_reader::load_from(&json[..], path)?;
//! assert_eq!(capture.format(), Format::KinetoJson);
//! let kernel = &capture.activities()[0];
//! assert_eq!((kernel.start.0, kernel.dur.0), (110_000, 20_250)); // exact nanoseconds
//! assert_eq!(kernel.class, KernelClass::Gemm);
//! let launch = capture.host_event(kernel.launch().expect("joined by correlation id"));
//! assert_eq!(launch.kind, HostKind::Launch);
//!
//! // The raw layer: every event, its exact text kept.
//! let mut kernels = 0;
//! chrome_reader::read_raw_events(&json[..], path, |ev| {
//!     kernels += usize::from(ev.cat.as_deref() == Some("kernel"));
//!     Ok(())
//! })?;
//! assert_eq!(kernels, 1);
//! # Ok::<(), chrome_reader::Error>(())
//! ```

#![warn(missing_docs)]

mod build;
mod chunks;
mod error;
mod input;
pub mod json;
mod members;
pub mod progress;
mod raw;
mod scan;
mod stream_chunks;
mod write;

use std::path::Path;

pub use build::{
    LoadConfig, PendingCapture, RankCapture, TraceFiles, args_decoded, default_threads,
    is_compaction_output, list_trace_files, load, load_dir, load_dir_each, load_from,
    load_from_with, load_with, load_with_sink, rank_before_events, rank_from_file_name,
    set_default_threads, trace_files,
};
pub use chunks::{MAX_EVENT_BYTES, max_event_bytes};
pub use error::Error;
pub use input::{MAX_INFLATE_RATIO, inflate_capped, max_inflate_ratio, open};
pub use raw::{
    EventSink, Id, Number, RawEvent, decode_args, read_event_texts, read_events_chunked,
    read_events_with_args, read_file_events_chunked, read_raw_events,
};
pub use scan::TopLevel;
pub use write::write_chrome_trace;

/// Streams the events of the trace file at `path` (plain or gzip JSON).
pub fn read_raw_file(
    path: &Path,
    on_event: impl FnMut(RawEvent<'_>) -> Result<(), Error>,
) -> Result<TopLevel, Error> {
    let input = open(path)?;
    read_raw_events(input, path, on_event)
}
