//! The budgets a SQLite read runs under ([`trace_model::limits`]): the longest string or
//! blob SQLite will make (`SQLITE_LIMIT_LENGTH`), SQLite's heap (`hard_heap_limit`, with
//! sorts and temporary tables kept in that heap rather than in temporary files), and a
//! deadline checked by a progress handler every few thousand virtual-machine steps; and
//! the errors that say which budget stopped a read and how to raise it.

use std::path::Path;
use std::time::Instant;

use rusqlite::{Connection, ErrorCode, limits::Limit};
use trace_model::limits;

/// Puts `conn` (reading `path`) under the budgets.
pub(crate) fn guard(path: &Path, conn: &mut Connection) -> rusqlite::Result<()> {
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

/// What budget a SQLite error means was exceeded, in words naming the budget and how to
/// raise it; `None` for other errors.
pub(crate) fn budget_exceeded(path: &Path, e: &rusqlite::Error) -> Option<String> {
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    Some(match e.sqlite_error_code()? {
        ErrorCode::OperationInterrupted => format!(
            "the read ran past its time budget of {:.1} s ({} s + {} s per MB of file; set \
             TRACEWISE_SQLITE_SECONDS to change it)",
            limits::sqlite_time_budget(size).as_secs_f64(),
            limits::SQLITE_BASE_SECONDS,
            limits::SQLITE_SECONDS_PER_MB,
        ),
        ErrorCode::OutOfMemory => format!(
            "SQLite's memory passed its budget of {} bytes (set TRACEWISE_SQLITE_MEMORY to \
             raise it)",
            limits::sqlite_memory_bytes()
        ),
        ErrorCode::TooBig => format!(
            "a string or blob is longer than the limit of {} bytes (set \
             TRACEWISE_MAX_EVENT_BYTES to raise it)",
            limits::max_string_bytes()
        ),
        _ => return None,
    })
}
