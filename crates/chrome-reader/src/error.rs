//! The reader's error type: every variant names the file and the place in it.

use std::path::PathBuf;

/// What went wrong while reading a Chrome trace.
///
/// Offsets are byte offsets into the decompressed JSON text; event indices count
/// the elements of `traceEvents` from zero.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be opened or read (including a corrupt or truncated gzip stream).
    #[error("{path}: cannot read (after {offset} bytes of JSON)")]
    Io {
        /// The file (or directory).
        path: PathBuf,
        /// Byte offset in the decompressed JSON text.
        offset: u64,
        /// The OS or gzip error.
        #[source]
        source: std::io::Error,
    },
    /// The JSON text is malformed.
    #[error("{path}: invalid JSON at byte {offset}: {message}")]
    Json {
        /// The file (or directory).
        path: PathBuf,
        /// Byte offset in the decompressed JSON text.
        offset: u64,
        /// The JSON parser's message.
        message: String,
    },
    /// The JSON text ends in the middle of a value.
    #[error("{path}: truncated JSON: the text ends at byte {offset} inside {context}")]
    Truncated {
        /// The file (or directory).
        path: PathBuf,
        /// Byte offset in the decompressed JSON text.
        offset: u64,
        /// What was open when the text ended (`an object`, `a string`, ...).
        context: &'static str,
    },
    /// Valid JSON, but not a Chrome trace.
    #[error("{path}: not a Chrome trace: {reason}")]
    NotATrace {
        /// The file (or directory).
        path: PathBuf,
        /// Why it is not a trace.
        reason: String,
    },
    /// The file is a capture of another format (byte 0 on), which another reader reads.
    #[error("{path}: not a Chrome trace: the bytes from offset 0 are an {}", format.describe())]
    OtherFormat {
        /// The file (or directory).
        path: PathBuf,
        /// The format it is.
        format: trace_model::Format,
    },
    /// One event of `traceEvents` cannot be used at all.
    #[error("{path}: event {index} (byte {offset}): {message}")]
    Event {
        /// The file (or directory).
        path: PathBuf,
        /// Event index in `traceEvents`, from zero.
        index: usize,
        /// Byte offset in the decompressed JSON text.
        offset: u64,
        /// The JSON parser's message.
        message: String,
    },
    /// The text goes past a limit on the work one file may cause (one event, string or
    /// value larger than [`crate::max_event_bytes`]); the message names the limit and the
    /// environment variable that raises it.
    #[error("{path}: at byte {offset} of JSON: {what}")]
    Limit {
        /// The file.
        path: PathBuf,
        /// Byte offset in the decompressed JSON text where the oversized part starts.
        offset: u64,
        /// What went past which limit.
        what: String,
    },
    /// A directory was given that holds no trace files.
    #[error("{path}: no trace files (*.json, *.json.gz) in this directory")]
    EmptyDirectory {
        /// The file (or directory).
        path: PathBuf,
    },
}

impl Error {
    /// The format the file turned out to be, when it is another capture format.
    pub fn other_format(&self) -> Option<trace_model::Format> {
        match self {
            Error::OtherFormat { format, .. } => Some(*format),
            _ => None,
        }
    }

    /// The file the error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            Error::Io { path, .. }
            | Error::Json { path, .. }
            | Error::Truncated { path, .. }
            | Error::NotATrace { path, .. }
            | Error::OtherFormat { path, .. }
            | Error::Event { path, .. }
            | Error::Limit { path, .. }
            | Error::EmptyDirectory { path } => path,
        }
    }
}
