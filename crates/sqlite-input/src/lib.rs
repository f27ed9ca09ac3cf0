//! Untrusted SQLite files (Nsight Systems exports, rocpd and rocprof v1 databases) opened
//! as data, never as a program or a place to write. Both SQLite readers open their files
//! here, so that the rules below are written once:
//!
//! - **Immutable and read-only**: SQLite takes no lock and writes no journal, `-wal` or
//!   `-shm` file beside the input, so the input's directory is left as it was and
//!   read-only media read.
//! - **Tables only** ([`table_names`]): a view or trigger the file defines is never run
//!   (a recursive or cross-joined view never ends), and a view named like a schema table
//!   is not that table.
//! - **WAL or journal content applied to one private copy**: when a non-empty `-wal` or
//!   `-journal` lies beside the input (a database in WAL mode not yet checkpointed, a
//!   write cut short), the file and those files are copied into a private temporary
//!   directory, SQLite applies the log (or rolls the journal back) there and folds it into
//!   the copy, and every connection then reads that copy immutably: the content read is
//!   what `sqlite3` sees, and nothing beside the input changes. Within a [`Scope`] (the
//!   loader holds one while it detects and reads a directory) a file is copied once, however
//!   many times detection and reading open it.
//! - **Budgets** ([`trace_model::limits`], checked by [`guard`]): the longest string or
//!   blob SQLite will make (`TRACEWISE_MAX_EVENT_BYTES`), SQLite's heap
//!   (`TRACEWISE_SQLITE_MEMORY`, with sorts and temporary tables kept in that heap rather
//!   than in temporary files), and a deadline checked by a progress handler every 10,000
//!   virtual-machine steps (`TRACEWISE_SQLITE_SECONDS`). [`budget_exceeded`] says which
//!   budget stopped a read and how to raise it.
//!
//! **SQLite's heap limit is process-wide.** `PRAGMA hard_heap_limit` sets
//! `sqlite3_hard_heap_limit64`, one limit on all of SQLite's allocations in the process:
//! when the loader reads several databases at once (one thread per file), they share the
//! one budget rather than each having its own. This crate counts the databases open at
//! once, and a read stopped by the memory budget says how many shared it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Instant, SystemTime};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, ErrorCode, OpenFlags, limits::Limit};
use trace_model::limits;

/// An open database: the connection, and the private copy it reads when the file had
/// write-ahead-log or rollback-journal content beside it (removed when the last
/// connection to it is dropped, outside a [`Scope`]).
pub struct Database {
    /// The connection, under the budgets.
    pub conn: Connection,
    _copy: Option<Arc<PrivateCopy>>,
    _open: OpenCount,
}

/// Why a file could not be opened.
#[derive(Debug)]
pub enum OpenError {
    /// Reading the input or making the private copy failed.
    Io(std::io::Error),
    /// SQLite could not open the file, or could not set the budgets.
    Open(rusqlite::Error),
    /// The first statement, which reads the schema, failed (a damaged schema, a journal
    /// that cannot be rolled back, a budget).
    Schema(rusqlite::Error),
}

/// Opens `path` as data (see the crate's documentation): immutable, read-only, under the
/// budgets, reading a private copy when a `-wal` or `-journal` beside it has content.
pub fn open(path: &Path) -> Result<Database, OpenError> {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let side = |suffix: &str| {
        let mut name = absolute.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    let non_empty = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() > 0);
    let (wal, journal) = (side("-wal"), side("-journal"));
    let copy = if non_empty(&wal) || non_empty(&journal) {
        let sides: Vec<(PathBuf, &str)> = [(wal, "-wal"), (journal, "-journal")]
            .into_iter()
            .filter(|(p, _)| non_empty(p))
            .collect();
        Some(private_copy(path, &absolute, &sides)?)
    } else {
        None
    };
    let read = copy
        .as_ref()
        .map_or(absolute.as_path(), |c| c.file.as_path());
    let mut conn = open_immutable(read).map_err(OpenError::Open)?;
    let open = OpenCount::new();
    guard(path, &mut conn).map_err(OpenError::Open)?;
    // Every table is read once, front to back: a page is not met twice, so SQLite's page
    // cache (2 MB by default) would only add to the peak memory. The first statement reads
    // the schema, so a damaged schema is an error on `sqlite_master`.
    conn.execute_batch("PRAGMA cache_size = -256")
        .map_err(OpenError::Schema)?;
    Ok(Database {
        conn,
        _copy: copy,
        _open: open,
    })
}

/// Opens `path` read-only and immutable (`file:` URI).
fn open_immutable(path: &Path) -> rusqlite::Result<Connection> {
    let uri = format!("file:{}?immutable=1", uri_path(path));
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags(uri, flags)
}

/// The names of every table, in byte order; a name that is not text is not one of a
/// reader's and is skipped. Views and triggers are not listed: a reader reads tables only.
pub fn table_names(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt =
        conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")?;
    let mut rows = stmt.query([])?;
    let mut names = Vec::new();
    while let Some(row) = rows.next()? {
        if let ValueRef::Text(name) = row.get_ref(0)? {
            names.push(String::from_utf8_lossy(name).into_owned());
        }
    }
    Ok(names)
}

/// Puts `conn` (reading `path`) under the budgets: the longest string or blob, SQLite's
/// heap (process-wide, see the crate's documentation), and the time budget for a file of
/// `path`'s size, from now.
pub fn guard(path: &Path, conn: &mut Connection) -> rusqlite::Result<()> {
    let longest = i32::try_from(limits::max_string_bytes()).unwrap_or(i32::MAX);
    conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, longest)?;
    // SQL text and expression depth: the reader's own queries are short and flat.
    conn.set_limit(Limit::SQLITE_LIMIT_SQL_LENGTH, 1 << 20)?;
    conn.execute_batch(&format!(
        "PRAGMA hard_heap_limit = {}; PRAGMA temp_store = MEMORY;",
        limits::sqlite_memory_bytes()
    ))?;
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    let deadline = Instant::now() + limits::sqlite_time_budget(size);
    conn.progress_handler(10_000, Some(move || Instant::now() > deadline))?;
    Ok(())
}

/// What budget a SQLite error on `path` means was exceeded, in words naming the budget and
/// how to raise it; `None` for other errors.
pub fn budget_exceeded(path: &Path, e: &rusqlite::Error) -> Option<String> {
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    Some(match e.sqlite_error_code()? {
        ErrorCode::OperationInterrupted => format!(
            "the read ran past its time budget of {:.1} s ({} s + {} s per MB of file; set \
             TRACEWISE_SQLITE_SECONDS to change it)",
            limits::sqlite_time_budget(size).as_secs_f64(),
            limits::SQLITE_BASE_SECONDS,
            limits::SQLITE_SECONDS_PER_MB,
        ),
        ErrorCode::OutOfMemory => {
            let open = OPEN.load(Ordering::Relaxed);
            let shared = if open > 1 {
                format!(
                    ", one budget for the whole process, shared by the {open} SQLite files \
                     open at the time"
                )
            } else {
                String::new()
            };
            format!(
                "SQLite's memory passed its budget of {} bytes{shared} (set \
                 TRACEWISE_SQLITE_MEMORY to raise it)",
                limits::sqlite_memory_bytes()
            )
        }
        ErrorCode::TooBig => format!(
            "a string or blob is longer than the limit of {} bytes (set \
             TRACEWISE_MAX_EVENT_BYTES to raise it)",
            limits::max_string_bytes()
        ),
        _ => return None,
    })
}

/// The path as a `file:` URI path: every byte but unreserved ones and `/` percent-encoded,
/// so that `?`, `#` and `%` in file names stay part of the name.
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for &b in path.as_os_str().as_encoded_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    // `file://host/...` would read a leading `//` as an authority.
    if out.starts_with("//") {
        out.insert_str(0, "//");
    }
    out
}

/// The databases open at once in this process (they share SQLite's heap limit).
static OPEN: AtomicUsize = AtomicUsize::new(0);

/// One open database, counted in [`OPEN`] for its life.
struct OpenCount;

impl OpenCount {
    fn new() -> OpenCount {
        OPEN.fetch_add(1, Ordering::Relaxed);
        OpenCount
    }
}

impl Drop for OpenCount {
    fn drop(&mut self) {
        OPEN.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A private copy of a database with its log applied and folded in: one file, read
/// immutably by every connection to it. The directory is removed when dropped.
struct PrivateCopy {
    file: PathBuf,
    _dir: tempfile::TempDir,
}

/// What identifies an input and its side files: the resolved path, and each file's length
/// and modification time (a changed file is copied again).
type Key = (PathBuf, Vec<(u64, Option<SystemTime>)>);

/// The private copies: shared while any connection holds one, and kept while a [`Scope`]
/// is open.
#[derive(Default)]
struct Copies {
    live: Vec<(Key, Weak<PrivateCopy>)>,
    scopes: usize,
    kept: Vec<Arc<PrivateCopy>>,
}

static COPIES: Mutex<Copies> = Mutex::new(Copies {
    live: Vec::new(),
    scopes: 0,
    kept: Vec::new(),
});

fn copies() -> std::sync::MutexGuard<'static, Copies> {
    // A panic while holding the lock leaves nothing half-done: the lists stay usable.
    COPIES.lock().unwrap_or_else(|e| e.into_inner())
}

/// While a `Scope` lives, private copies are kept and shared, so that a file detected and
/// then read (or opened by two readers in turn) is copied once; they are removed when the
/// last scope ends. Scopes nest and may be held by several threads.
pub struct Scope(());

impl Scope {
    /// Opens a scope.
    pub fn new() -> Scope {
        copies().scopes += 1;
        Scope(())
    }
}

impl Default for Scope {
    fn default() -> Scope {
        Scope::new()
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        let kept = {
            let mut c = copies();
            c.scopes -= 1;
            if c.scopes == 0 {
                std::mem::take(&mut c.kept)
            } else {
                Vec::new()
            }
        };
        // Removed outside the lock.
        drop(kept);
    }
}

/// The key of `absolute` with its side files, if all can be read.
fn key_of(absolute: &Path, sides: &[(PathBuf, &str)]) -> Option<Key> {
    let stamp = |p: &Path| {
        std::fs::metadata(p)
            .ok()
            .map(|m| (m.len(), m.modified().ok()))
    };
    let mut stamps = vec![stamp(absolute)?];
    for (p, _) in sides {
        stamps.push(stamp(p)?);
    }
    Some((absolute.canonicalize().ok()?, stamps))
}

/// The private copy of `absolute` with `sides` applied: one already made for the same
/// files if any is alive, else a new one.
fn private_copy(
    path: &Path,
    absolute: &Path,
    sides: &[(PathBuf, &str)],
) -> Result<Arc<PrivateCopy>, OpenError> {
    let key = key_of(absolute, sides);
    if let Some(key) = &key {
        let mut c = copies();
        c.live.retain(|(_, w)| w.strong_count() > 0);
        if let Some(found) = c
            .live
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, w)| w.upgrade())
        {
            return Ok(found);
        }
    }
    let dir = tempfile::Builder::new()
        .prefix("tracewise-sqlite-")
        .tempdir()
        .map_err(OpenError::Io)?;
    let file = dir.path().join("db");
    std::fs::copy(absolute, &file).map_err(OpenError::Io)?;
    for (from, suffix) in sides {
        let mut to = file.as_os_str().to_owned();
        to.push(suffix);
        std::fs::copy(from, PathBuf::from(to)).map_err(OpenError::Io)?;
    }
    {
        // Read-write on the private copy: applying a log or rolling a journal back writes.
        // The first read applies it; leaving WAL mode folds the log into the file, so that
        // later connections read one file immutably. Under the budgets: a hostile log is
        // bounded like any read.
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(&file, flags).map_err(OpenError::Open)?;
        guard(path, &mut conn).map_err(OpenError::Open)?;
        conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))
            .map_err(OpenError::Schema)?;
        conn.query_row("PRAGMA journal_mode = DELETE", [], |_| Ok(()))
            .map_err(OpenError::Schema)?;
    }
    let copy = Arc::new(PrivateCopy { file, _dir: dir });
    let mut c = copies();
    if let Some(key) = key {
        c.live.push((key, Arc::downgrade(&copy)));
    }
    if c.scopes > 0 {
        c.kept.push(Arc::clone(&copy));
    }
    Ok(copy)
}

/// How many private copies this process has made and holds now (for tests).
pub fn private_copies_alive() -> usize {
    copies()
        .live
        .iter()
        .filter(|(_, w)| w.strong_count() > 0)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_paths_keep_odd_characters_in_the_name() {
        assert_eq!(uri_path(Path::new("/a b/c?d#e%f")), "/a%20b/c%3Fd%23e%25f");
        assert_eq!(
            uri_path(Path::new("/a b/c?d#e%.sqlite")),
            "/a%20b/c%3Fd%23e%25.sqlite"
        );
        assert_eq!(uri_path(Path::new("//net/x")), "////net/x");
    }

    /// A database in WAL mode whose rows are only in the `-wal`: the copy sees them, the
    /// input's directory is unchanged, and within a scope two opens make one copy.
    #[test]
    fn wal_content_is_read_from_one_private_copy() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db");
        let writer = Connection::open(&path).unwrap();
        writer
            .execute_batch(
                "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; \
                 CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3); \
                 CREATE VIEW v AS SELECT * FROM t;",
            )
            .unwrap();
        // Copy the three files while the writer holds them un-checkpointed.
        let snap = tempfile::tempdir().unwrap();
        for suffix in ["", "-wal"] {
            let from = dir.path().join(format!("w.db{suffix}"));
            std::fs::copy(&from, snap.path().join(format!("w.db{suffix}"))).unwrap();
        }
        drop(writer);
        let input = snap.path().join("w.db");
        let listing = |d: &Path| {
            let mut v: Vec<_> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            v.sort();
            v
        };
        let before = listing(snap.path());
        let baseline = private_copies_alive();
        {
            let _scope = Scope::new();
            let a = open(&input).unwrap();
            let n: i64 = a
                .conn
                .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
                .unwrap();
            assert_eq!(n, 3);
            assert_eq!(table_names(&a.conn).unwrap(), ["t"]);
            drop(a);
            let b = open(&input).unwrap();
            let n: i64 = b
                .conn
                .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
                .unwrap();
            assert_eq!(n, 3);
            assert_eq!(private_copies_alive(), baseline + 1);
        }
        assert_eq!(private_copies_alive(), baseline);
        assert_eq!(listing(snap.path()), before);
    }
}
