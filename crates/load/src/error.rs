//! Why a path could not be loaded: the reader's own error (naming the file and the place in
//! it), or the loader's when no reader applies.

use std::path::PathBuf;

/// Why a path could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A Chrome trace (Kineto, JAX) could not be read.
    #[error(transparent)]
    Chrome(#[from] chrome_reader::Error),
    /// An XSpace could not be read.
    #[error(transparent)]
    XSpace(#[from] xplane_reader::Error),
    /// An Nsight Systems export could not be read, or holds no CUDA work.
    #[error(transparent)]
    Nsys(#[from] nsys_reader::Error),
    /// A ROCm profiler capture could not be read.
    #[error(transparent)]
    Rocprof(#[from] rocprof_reader::Error),
    /// A file or directory could not be listed or inspected.
    #[error("{path}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The file is none of the formats this loader reads.
    #[error("{path}: not a capture this tool reads ({why}); known formats: {known}", known = crate::KNOWN_FORMATS)]
    UnknownFormat {
        /// The file.
        path: PathBuf,
        /// What the file looked like.
        why: String,
    },
    /// A directory holds no capture of any known format.
    #[error("{path}: no capture in this directory; known formats: {known}", known = crate::KNOWN_FORMATS)]
    NoCapture {
        /// The directory.
        path: PathBuf,
    },
    /// One capture was asked for, and the path holds several.
    #[error("{path}: {count} captures here ({first} ...); {how}")]
    SeveralCaptures {
        /// The file or directory.
        path: PathBuf,
        /// How many captures it holds.
        count: usize,
        /// The first one.
        first: String,
        /// How to choose one: `name one file` for a directory; for a file of several
        /// processes, the processes it holds and the flag that chooses one (`it holds
        /// pid 1 (a), pid 2 (b): choose one with --process PID|NAME`).
        how: String,
    },
    /// `--process` named no process of the file.
    #[error("{path}: no process {wanted} in this file (--process); it holds {held}")]
    NoSuchProcess {
        /// The file.
        path: PathBuf,
        /// What `--process` gave.
        wanted: String,
        /// The processes the file holds, as `pid 30156 (./bin/test_matmul)`.
        held: String,
    },
}

impl Error {
    /// The Chrome reader's error, when a file could not be read as a Chrome trace.
    pub fn chrome(&self) -> Option<&chrome_reader::Error> {
        match self {
            Error::Chrome(e) => Some(e),
            _ => None,
        }
    }

    /// The input was read, and holds nothing any tool could report on (an Nsight Systems
    /// export without CUDA work): the tools say so and exit 2, as for unreadable input.
    pub fn is_nothing_to_report(&self) -> bool {
        matches!(self, Error::Nsys(e) if e.is_nothing_to_report())
    }
}
