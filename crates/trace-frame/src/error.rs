//! The crate's error type: every variant names the file (and, from the reader, the place in it).

use std::path::PathBuf;

/// What went wrong while building, caching, querying or exporting an events frame.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The trace could not be read (the reader's error names the byte offset or event).
    #[error(transparent)]
    Read(#[from] chrome_reader::Error),
    /// A file or directory could not be read or written.
    #[error("{path}: {action}")]
    Io {
        path: PathBuf,
        action: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// polars rejected a frame, a query or a Parquet file.
    #[error("{context}: {source}")]
    Polars {
        context: String,
        #[source]
        source: polars::error::PolarsError,
    },
    /// The trace lacks what an analysis needs (named in the message).
    #[error("{path}: {what}")]
    Missing { path: PathBuf, what: String },
}

impl Error {
    pub(crate) fn polars(
        context: impl Into<String>,
    ) -> impl FnOnce(polars::error::PolarsError) -> Error {
        let context = context.into();
        move |source| Error::Polars { context, source }
    }

    pub(crate) fn io(
        path: &std::path::Path,
        action: &'static str,
    ) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.to_path_buf();
        move |source| Error::Io {
            path,
            action,
            source,
        }
    }
}
