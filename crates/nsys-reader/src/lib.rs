//! Reads Nsight Systems SQLite exports (`nsys export --type sqlite`, or the file `nsys
//! stats` writes) into [`trace_model::Capture`]s, one per process with CUDA work.
//!
//! Kernels, memcpys and memsets come from the `CUPTI_ACTIVITY_KIND_*` tables, host calls
//! from `CUPTI_ACTIVITY_KIND_RUNTIME`, user ranges from `NVTX_EVENTS`, device figures from
//! `TARGET_INFO_GPU`. Tables and columns are looked up in the file's own schema, so every
//! export schema from 2.9 on reads the same way; a table that is absent means "none of that
//! kind" and is said in the capture's diagnostics. Rows are streamed from SQLite: memory
//! grows with the events kept, not with the file.
//!
//! ```
//! use std::path::Path;
//!
//! // A SQLite file with none of the export's tables is refused, naming the file.
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("other.sqlite");
//! let db = rusqlite::Connection::open(&path).unwrap();
//! db.execute_batch("CREATE TABLE t (x INTEGER);").unwrap();
//! drop(db);
//! assert!(!nsys_reader::is_nsys_export(&path));
//! let err = nsys_reader::load(&path, &nsys_reader::Config::default()).unwrap_err();
//! assert!(err.to_string().contains("not an Nsight Systems export"));
//! ```

#![warn(missing_docs)]

mod error;
mod read;
mod schema;
mod strings;

use std::path::Path;

pub use error::Error;

/// How to read an export.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// NVTX ranges whose text matches this expression are the steps, instead of
    /// `ProfilerStep#N` ranges. The step number is the first capture group when it reads
    /// as an integer, else the range's position in start order from 0.
    pub step_nvtx: Option<regex::Regex>,
}

/// The capture of one process of the export.
#[derive(Debug)]
pub struct Process {
    /// The operating system's process id.
    pub pid: i64,
    /// The process's name (its command), from the export's `PROCESSES` table, else its
    /// main thread's name; `None` when the export names neither.
    pub name: Option<String>,
    /// The process's rank in a distributed job, when the export tells it: a thread named
    /// `MPI Rank N` (nsys's MPI tracing), or, when only one process has CUDA work, `RANK`,
    /// `OMPI_COMM_WORLD_RANK`, `PMI_RANK`, `SLURM_PROCID` or `LOCAL_RANK` in the launched
    /// process's environment or nsys's own.
    pub rank: Option<i64>,
    /// What the process did: its GPU activities, host calls and NVTX ranges.
    pub capture: trace_model::Capture,
}

/// Whether `path` is an Nsight Systems SQLite export: it begins with SQLite's header and
/// has the export's tables. Reads the header and the schema only; never fails (an
/// unreadable file is not one).
pub fn is_nsys_export(path: &Path) -> bool {
    schema::sniff(path)
}

/// Reads the export at `path`: one capture per process that has a GPU activity or a CUDA
/// runtime call, ranked processes first by rank, then the others by pid.
///
/// An export that was read but holds no CUDA work at all is
/// [`Error::NoCudaActivity`] ([`Error::is_nothing_to_report`]); unreadable input is any
/// other error, naming the file and the table, row and column.
pub fn load(path: &Path, config: &Config) -> Result<Vec<Process>, Error> {
    read::load(path, config)
}
