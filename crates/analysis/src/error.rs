//! The crate's error type.

use std::path::PathBuf;

/// What can go wrong in an analysis: the input could not be read, or holds nothing to analyse.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The trace could not be read (the reader's error names the file and the place).
    #[error(transparent)]
    Read(#[from] chrome_reader::Error),
    /// An XSpace could not be read (the reader's error names the file and the place).
    #[error(transparent)]
    ReadXPlane(#[from] xplane_reader::Error),
    /// A file or directory could not be listed or inspected.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A directory holds no file matching the pattern the tool looks for.
    #[error("{path}: no trace file matching {pattern} in this directory")]
    NoTraceFiles {
        path: PathBuf,
        pattern: &'static str,
    },
}
