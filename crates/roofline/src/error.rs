//! The crate's error type.

use std::path::PathBuf;

/// Why a capture could not be analysed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The capture could not be loaded (the reader's error names the file and the place).
    #[error(transparent)]
    Load(#[from] load::Error),
    /// The second pass over a Kineto trace, for op shapes, failed (the reader's error names
    /// the file and the place).
    #[error(transparent)]
    Read(#[from] load::chrome::Error),
    /// The input is readable but not something a roofline can be computed from.
    #[error("{path}: {reason}")]
    Unsupported {
        /// The capture.
        path: PathBuf,
        /// Why, and what to run it on instead.
        reason: String,
    },
}
