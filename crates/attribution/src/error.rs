//! The crate's error type: unusable input, naming the file and where it went wrong.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error(transparent)]
    XPlane(#[from] xplane_reader::Error),
    #[error(transparent)]
    Chrome(#[from] chrome_reader::Error),
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A directory with no capture, or with several.
    #[error("{}: {what}", path.display())]
    Input { path: PathBuf, what: String },
    /// `--program` names no stored program.
    #[error("{path}: no program with id {program} (stored ids: {known})")]
    NoSuchProgram {
        path: String,
        program: i64,
        known: String,
    },
    /// A JAX Chrome trace: it has no HLO modules and no program ids.
    #[error(
        "{}: a JAX Chrome trace carries no HLO modules or program ids; attribute the `<host>.xplane.pb` of the same run",
        path.display()
    )]
    JaxJson { path: PathBuf },
}
