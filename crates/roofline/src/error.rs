//! The crate's error type.

use std::path::PathBuf;

/// Why a capture could not be analysed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A Chrome trace could not be read (the reader's error names the file and the place).
    #[error(transparent)]
    Read(#[from] chrome_reader::Error),
    /// An XSpace could not be read (the reader's error names the file and the place).
    #[error(transparent)]
    ReadXPlane(#[from] xplane_reader::Error),
    /// A directory could not be listed.
    #[error("{path}: {source}")]
    Io {
        /// The directory.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The input is readable but not something a roofline can be computed from.
    #[error("{path}: {reason}")]
    Unsupported {
        /// The capture.
        path: PathBuf,
        /// Why, and what to run it on instead.
        reason: String,
    },
}
