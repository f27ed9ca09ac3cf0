//! The crate's error type.

use std::path::PathBuf;

/// What can go wrong in an analysis: the input could not be read, or holds nothing to analyse.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The trace could not be read (the reader's error names the file and the place).
    #[error(transparent)]
    Read(#[from] load::chrome::Error),
    /// A capture could not be loaded (the reader's error names the file and the place).
    #[error(transparent)]
    Load(#[from] load::Error),
    /// A file or directory could not be listed or inspected.
    #[error("{path}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// A directory holds no file matching the pattern the tool looks for.
    #[error("{path}: no trace file matching {pattern} in this directory")]
    NoTraceFiles {
        /// The directory that was searched.
        path: PathBuf,
        /// The file-name pattern searched for.
        pattern: &'static str,
    },
}

impl Error {
    /// The reader's error, when a file could not be read as a Chrome trace.
    pub fn read_error(&self) -> Option<&load::chrome::Error> {
        match self {
            Error::Read(e) => Some(e),
            Error::Load(e) => e.chrome(),
            _ => None,
        }
    }
}

/// An error and its sources, one after the other (`a: b: c`), as anyhow's `{:#}` prints
/// them: for tools that print a library error without wrapping it in anyhow.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
