//! The crate's one error type: every variant names the file and where in it.

use std::path::PathBuf;

/// Why a capture could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file or directory could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The path is not a capture this crate reads (no known file name, header or tables).
    #[error("{}: not a ROCm profiler capture: {why}", path.display())]
    NotRocprof {
        /// The file or directory.
        path: PathBuf,
        /// What was looked at.
        why: String,
    },
    /// A Perfetto protobuf trace is malformed at this byte.
    #[error("{}: byte {offset}{}: {message}", path.display(), packet_text(*packet))]
    Protobuf {
        /// The trace file.
        path: PathBuf,
        /// Byte offset in the file where the damaged field or packet starts.
        offset: u64,
        /// Index of the packet (0-based) the damage is in, once the framing was read.
        packet: Option<u64>,
        /// What is wrong.
        message: String,
    },
    /// A CSV file is malformed at this line and column.
    #[error("{}: line {line}, column {column}: {message}", path.display())]
    Csv {
        /// The CSV file.
        path: PathBuf,
        /// 1-based line number (the header is line 1).
        line: u64,
        /// The column's name (or `header` for a header problem).
        column: String,
        /// What is wrong.
        message: String,
    },
    /// The file ends before the length its SQLite header gives: a copy or download cut
    /// short (SQLite itself would only say that the database disk image is malformed).
    #[error(
        "{}: truncated: the file ends at byte {size}, but its SQLite header says it has {expected} bytes",
        path.display()
    )]
    Truncated {
        /// The database file.
        path: PathBuf,
        /// The file's length in bytes.
        size: u64,
        /// The length the header gives.
        expected: u64,
    },
    /// A rocprofv3 JSON file (`--output-format json`) lacks a section this reader needs,
    /// or holds a bad value there.
    #[error(
        "{}: rocprofv3 JSON (--output-format json): {where_}: {message}; if the file is whole, run rocprofv3 with --output-format csv, pftrace or rocpd instead",
        path.display()
    )]
    Json {
        /// The JSON file.
        path: PathBuf,
        /// The section and record (`rocprofiler-sdk-tool[0].buffer_records.kernel_dispatch[12]`).
        where_: String,
        /// What is wrong.
        message: String,
    },
    /// A budget stopped the read: a SQLite read's time or memory, or the longest string
    /// or CSV line (the message names the budget and the variable that raises it).
    #[error("{}: {where_}: {what}", path.display())]
    Limit {
        /// The file.
        path: PathBuf,
        /// Where in it: the table, or the CSV line.
        where_: String,
        /// Which budget, its value, and how to raise it.
        what: String,
    },
    /// A SQLite database lacks what its schema promises, or a row holds a bad value.
    #[error("{}: table {table}: {message}", path.display())]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// The table or view, with the row id when one row is at fault.
        table: String,
        /// What is wrong (or what SQLite said).
        message: String,
    },
}

fn packet_text(packet: Option<u64>) -> String {
    packet.map_or_else(String::new, |index| format!(" (packet {index})"))
}
