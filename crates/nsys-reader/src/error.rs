//! The reader's error type: every variant names the file, and the table, row and column
//! where the export could not be read.

use std::path::PathBuf;

/// What went wrong while reading an Nsight Systems export.
///
/// Rows are SQLite `rowid`s of the table named beside them (`SELECT * FROM t WHERE
/// rowid = N` finds the row).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be opened or its first bytes read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// An Nsight Systems report (`.nsys-rep`, `.qdrep`): its format is private to Nsight
    /// Systems, which converts it to SQLite.
    #[error(
        "{path}: an Nsight Systems report, not its SQLite export; run `nsys export --type sqlite {}` and give the .sqlite file",
        path.display()
    )]
    NeedsExport {
        /// The file.
        path: PathBuf,
    },
    /// The file does not begin with SQLite's header (`SQLite format 3\0`).
    #[error("{path}: not a SQLite file (no `SQLite format 3` header in its first 16 bytes)")]
    NotSqlite {
        /// The file.
        path: PathBuf,
    },
    /// The file ends before the length its SQLite header gives: a copy or download cut
    /// short. (SQLite itself would only say that the database disk image is malformed.)
    #[error(
        "{path}: truncated: the file ends at byte {size}, but its SQLite header says it has {expected} bytes"
    )]
    Truncated {
        /// The file.
        path: PathBuf,
        /// The file's length in bytes.
        size: u64,
        /// The length the header gives (page size × page count), or 100 when the file
        /// ends inside the header itself.
        expected: u64,
    },
    /// A SQLite file without the tables of an Nsight Systems export.
    #[error("{path}: a SQLite file, but not an Nsight Systems export: {reason}")]
    NotAnExport {
        /// The file.
        path: PathBuf,
        /// What was looked for.
        reason: String,
    },
    /// SQLite could not run a query on a table (a truncated or corrupt file, a table that
    /// lacks the `rowid` the reader needs).
    #[error("{path}: table {table}: {message}")]
    Sqlite {
        /// The file.
        path: PathBuf,
        /// The table being read (`sqlite_master` while reading the schema).
        table: String,
        /// SQLite's message.
        message: String,
    },
    /// A budget stopped the read: its time, SQLite's memory, or the longest string
    /// (the message names the budget and the variable that raises it).
    #[error("{path}: table {table}: {what}")]
    Limit {
        /// The file.
        path: PathBuf,
        /// The table being read.
        table: String,
        /// Which budget, its value, and how to raise it.
        what: String,
    },
    /// A table lacks a column without which its rows mean nothing (`start` of a kernel).
    #[error("{path}: table {table} has no column {column}")]
    MissingColumn {
        /// The file.
        path: PathBuf,
        /// The table.
        table: String,
        /// The column it lacks.
        column: &'static str,
    },
    /// A value of the wrong type (text where nsys writes an integer) or a required value
    /// that is NULL.
    #[error(
        "{path}: table {table}, row {row}, column {column}: {found} where {expected} was expected"
    )]
    Value {
        /// The file.
        path: PathBuf,
        /// The table.
        table: String,
        /// The row's `rowid`.
        row: i64,
        /// The column.
        column: &'static str,
        /// What the cell holds (`text "abc"`, `NULL`, `real 1.5`).
        found: String,
        /// What nsys writes there (`an integer`).
        expected: &'static str,
    },
    /// A well-formed export with nothing to report: no process has a GPU activity or a CUDA
    /// runtime call (the capture traced no CUDA, or the CUDA tables are empty). Callers
    /// tell this apart from unreadable input with [`Error::is_nothing_to_report`].
    #[error("{path}: nothing to report: {reason}")]
    NoCudaActivity {
        /// The file.
        path: PathBuf,
        /// Which tables were missing or empty.
        reason: String,
    },
}

impl Error {
    /// Whether the export was read and simply holds no CUDA work ([`Error::NoCudaActivity`]),
    /// as opposed to a file that could not be read.
    pub fn is_nothing_to_report(&self) -> bool {
        matches!(self, Error::NoCudaActivity { .. })
    }
}
