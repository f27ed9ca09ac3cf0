//! The crate's error type: every variant names the file (and, from the reader, the place in it).

use std::path::PathBuf;

/// What went wrong while building, caching, querying or exporting an events frame.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The trace could not be read (the reader's error names the byte offset or event).
    #[error(transparent)]
    Read(#[from] chrome_reader::Error),
    /// The input could not be loaded (a format other than Chrome trace JSON, or none).
    #[error(transparent)]
    Load(#[from] load::Error),
    /// A file or directory could not be read or written.
    #[error(transparent)]
    Io(#[from] output_file::FsError),
    /// An output (the export, a cache file) was refused or could not be written.
    #[error(transparent)]
    Output(#[from] output_file::Error),
    /// polars rejected a frame, a query or a Parquet file.
    #[error("{context}: {source}")]
    Polars {
        /// Where it happened: usually the file or directory, else the step (`summary`,
        /// joining the ranks' frames, the SQL query).
        context: String,
        /// polars' error.
        #[source]
        source: polars::error::PolarsError,
    },
    /// A `--sql` query was refused before it ran (the sentence says why).
    #[error("SQL `{query}`: {what}")]
    Sql {
        /// The query.
        query: String,
        /// Why it was refused.
        what: String,
    },
    /// The trace lacks what an analysis needs (named in the message).
    #[error("{path}: {what}")]
    Missing {
        /// The trace file (or the export directory) concerned.
        path: PathBuf,
        /// What is missing or wrong, as a sentence for the user.
        what: String,
    },
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
        let at = output_file::FsError::at(path, action);
        move |source| Error::Io(at(source))
    }
}
