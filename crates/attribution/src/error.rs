//! The crate's error type: unusable input, naming the file and where it went wrong.

use std::path::PathBuf;

/// Why a capture could not be attributed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The XSpace could not be read (the reader's error names the file and the place).
    #[error(transparent)]
    XPlane(#[from] xplane_reader::Error),
    /// The Chrome trace could not be read (the reader's error names the file and the place).
    #[error(transparent)]
    Chrome(#[from] chrome_reader::Error),
    /// A file or directory could not be read.
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// A directory with no capture, or with several.
    #[error("{}: {what}", path.display())]
    Input {
        /// The directory.
        path: PathBuf,
        /// What is wrong with it, in words.
        what: String,
    },
    /// `--program` names no stored program.
    #[error("{path}: no program with id {program} (stored ids: {known})")]
    NoSuchProgram {
        /// The capture.
        path: String,
        /// The id asked for.
        program: i64,
        /// The ids the capture stores, comma-separated.
        known: String,
    },
    /// A JAX Chrome trace: it has no HLO modules and no program ids.
    #[error(
        "{}: a JAX Chrome trace carries no HLO modules or program ids; attribute the `<host>.xplane.pb` of the same run",
        path.display()
    )]
    JaxJson {
        /// The trace.
        path: PathBuf,
    },
}
