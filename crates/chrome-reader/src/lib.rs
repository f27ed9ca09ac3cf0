//! Chrome trace JSON reader: PyTorch/Kineto `.json[.gz]` and JAX `*.trace.json.gz`.
//!
//! Two layers:
//! - [`read_raw_events`] / [`read_raw_file`]: a streaming pass over `traceEvents` that
//!   hands each event to a callback as a [`RawEvent`], with the common fields decoded and
//!   the exact JSON text kept. Memory does not grow with the file.
//! - the model builder (`load`), which turns the events into a format-independent
//!   `trace_model::Capture`.
//!
//! ```no_run
//! use std::path::Path;
//! let path = Path::new("trace.json.gz");
//! let mut kernels = 0;
//! chrome_reader::read_raw_file(path, |ev| {
//!     if ev.cat.as_deref() == Some("kernel") {
//!         kernels += 1;
//!     }
//!     Ok(())
//! })?;
//! println!("{kernels} kernels");
//! # Ok::<(), chrome_reader::Error>(())
//! ```

mod build;
mod error;
mod input;
pub mod progress;
mod raw;
mod scan;

use std::path::Path;

pub use build::{
    LoadConfig, RankCapture, default_threads, load, load_dir, load_dir_each, load_from,
    load_from_with, load_with, rank_from_file_name, set_default_threads, trace_files,
};
pub use error::Error;
pub use input::open;
pub use raw::{
    Id, Number, RawEvent, decode_args, read_events_with_args, read_events_with_args_parallel,
    read_raw_events,
};
pub use scan::TopLevel;

/// Streams the events of the trace file at `path` (plain or gzip JSON).
pub fn read_raw_file(
    path: &Path,
    on_event: impl FnMut(RawEvent<'_>) -> Result<(), Error>,
) -> Result<TopLevel, Error> {
    let input = open(path)?;
    read_raw_events(input, path, on_event)
}
