//! The crate's error type: unusable input, naming the file and where it went wrong.

use std::path::PathBuf;

/// Why a capture could not be attributed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The capture could not be loaded (the reader's error names the file and the place).
    #[error(transparent)]
    Load(#[from] load::Error),
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
