//! What went wrong reading a side of a comparison.

/// What went wrong reading a side.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A side could not be read or investigated (the error names the file).
    #[error("{side}: {source}")]
    Investigation {
        /// `before` or `after`.
        side: &'static str,
        /// The investigation's error (boxed: it is large beside the `Ok` value).
        #[source]
        source: Box<investigation::Error>,
    },
    /// A file of a side could not be read while others could: a comparison needs every
    /// capture of a side.
    #[error("{side}: {message}")]
    Unread {
        /// `before` or `after`.
        side: &'static str,
        /// The file's error (which names it).
        message: String,
    },
    /// A side is a report.json that cannot be read as one.
    #[error("{side}: {path}: {message}")]
    Report {
        /// `before` or `after`.
        side: &'static str,
        /// The report.json.
        path: std::path::PathBuf,
        /// What is wrong with it.
        message: String,
    },
}

impl Error {
    /// The error, said of side `name` (`before` or `after`).
    pub(crate) fn of_side(self, name: &'static str) -> Error {
        match self {
            Error::Investigation { source, .. } => Error::Investigation { side: name, source },
            Error::Unread { message, .. } => Error::Unread {
                side: name,
                message,
            },
            Error::Report { path, message, .. } => Error::Report {
                side: name,
                path,
                message,
            },
        }
    }
}
