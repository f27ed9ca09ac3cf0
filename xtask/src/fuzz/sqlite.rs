//! The SQLite side of the fuzzer: mutations made through SQLite itself (cells, columns,
//! tables, and the schema: views, triggers, generated columns, a change left in a WAL or
//! a hot journal), side files written beside an input, and the check that a reader left
//! the input's directory as it was.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use super::{EXECS, Rng, scratch_file};

/// Writes `input` to `path` with, one run in three each, a `-wal` or a `-journal` file
/// beside it: the input's bytes from a point on (a damaged log), or a real log when the
/// input carries one after [`SIDE_MARK`] (an [`sql_mutate`] mutant made in WAL mode or
/// with a transaction left open). Returns the directory's names, to check after the read
/// that the reader wrote nothing beside its input.
pub(super) fn write_with_side_files(path: &Path, input: &[u8]) -> Option<Vec<std::ffi::OsString>> {
    let side = |suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    for suffix in ["-wal", "-journal", "-shm"] {
        let _ = std::fs::remove_file(side(suffix));
    }
    let (db, log) = match find(input, SIDE_MARK) {
        Some(at) => (&input[..at], Some(&input[at + SIDE_MARK.len()..])),
        None => (input, None),
    };
    std::fs::write(path, db).ok()?;
    let n = EXECS.load(Ordering::Relaxed);
    let suffix = if n % 3 == 1 { "-wal" } else { "-journal" };
    match log {
        Some(log) if log.len() > 1 && log[0] == b'w' => {
            std::fs::write(side("-wal"), &log[1..]).ok()?
        }
        Some(log) if log.len() > 1 => std::fs::write(side("-journal"), &log[1..]).ok()?,
        _ if !n.is_multiple_of(3) && db.len() > 32 => {
            let from = (n as usize / 3) % (db.len() / 2);
            std::fs::write(side(suffix), &db[from..]).ok()?
        }
        _ => {}
    }
    let mut names: Vec<_> = std::fs::read_dir(path.parent()?)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .collect();
    names.sort();
    Some(names)
}

/// Panics (a finding) when the directory of `path` has changed from `before`: a reader
/// of a SQLite input made a `-shm`, `-wal` or journal file beside it.
pub(super) fn assert_nothing_beside(path: &Path, before: &[std::ffi::OsString]) {
    let Some(dir) = path.parent() else { return };
    let mut after: Vec<_> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.file_name())).collect())
        .unwrap_or_default();
    after.sort();
    assert_eq!(after, before, "the reader wrote beside its input");
}

/// Where a mutant's side file (a WAL or journal) begins: after this mark, a `w` (WAL) or
/// `j` (journal), then the file's bytes.
pub(super) const SIDE_MARK: &[u8] = b"\0tracewise-fuzz-side-file\0";

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Values a mutated cell gets: other types than the column's, NULL, boundary integers.
const SQL_VALUES: &[&str] = &[
    "NULL",
    "'soon'",
    "''",
    "'12'",
    "X'00ff'",
    "1.5",
    "-1e300",
    "0",
    "-1",
    "2147483648",
    "4294967296",
    "281474976710656",
    "9223372036854775807",
    "-9223372036854775808",
];

/// One change made through SQLite to a copy of `seed`: a cell (or a whole column) set to
/// one of [`SQL_VALUES`], a column dropped or renamed, a table dropped, a row duplicated.
/// `None` when SQLite cannot read the seed.
pub(super) fn sql_mutate(seed: &[u8], rng: &mut Rng) -> Option<Vec<u8>> {
    let path = scratch_file("mutate.sqlite");
    std::fs::write(&path, seed).ok()?;
    let conn = rusqlite::Connection::open(&path).ok()?;
    let names = |sql: &str| -> Option<Vec<String>> {
        let mut stmt = conn.prepare(sql).ok()?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0)).ok()?;
        Some(rows.filter_map(Result::ok).collect())
    };
    let tables = names(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
         ORDER BY name",
    )?;
    let table = tables.get(rng.below(tables.len()))?.replace('"', "\"\"");
    let columns = names(&format!(
        "SELECT name FROM pragma_table_info('{}')",
        table.replace('\'', "''")
    ))?;
    let column = columns.get(rng.below(columns.len()))?.replace('"', "\"\"");
    let rows: i64 = conn
        .query_row(&format!("SELECT count(*) FROM \"{table}\""), [], |r| {
            r.get(0)
        })
        .ok()?;
    let row = rng.below(usize::try_from(rows).ok()?.max(1));
    let value = SQL_VALUES[rng.below(SQL_VALUES.len())];
    let one_row = format!("SELECT rowid FROM \"{table}\" LIMIT 1 OFFSET {row}");
    let data = match rng.below(8) {
        0..=3 => format!("UPDATE \"{table}\" SET \"{column}\" = {value} WHERE rowid = ({one_row})"),
        4 => format!("UPDATE \"{table}\" SET \"{column}\" = {value}"),
        5 => format!("ALTER TABLE \"{table}\" DROP COLUMN \"{column}\""),
        6 => format!("ALTER TABLE \"{table}\" RENAME COLUMN \"{column}\" TO \"{column}_x\""),
        _ if rng.below(2) == 0 => format!("DROP TABLE \"{table}\""),
        _ => format!("INSERT INTO \"{table}\" SELECT * FROM \"{table}\" WHERE rowid = ({one_row})"),
    };
    // Five times in twelve a change of the schema instead: the file defining a program
    // where the reader expects data (issue 45, finding 5); three in twelve the data change
    // left in a log beside the file (findings 14, 15); else the data change alone.
    let stored = format!("{table}_stored");
    let schema = match rng.below(12) {
        // A table replaced by a view of the same name: its own rows, every row joined
        // with every other, or a recursive query that never ends.
        0 => format!(
            "ALTER TABLE \"{table}\" RENAME TO \"{stored}\";
             CREATE VIEW \"{table}\" AS SELECT * FROM \"{stored}\";"
        ),
        1 => format!(
            "ALTER TABLE \"{table}\" RENAME TO \"{stored}\";
             CREATE VIEW \"{table}\" AS SELECT a.* FROM \"{stored}\" a, \"{stored}\" b,
               \"{stored}\" c, \"{stored}\" d;"
        ),
        2 => format!(
            "ALTER TABLE \"{table}\" RENAME TO \"{stored}\";
             CREATE VIEW \"{table}\" AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL
               SELECT n + 1 FROM r) SELECT s.* FROM r, \"{stored}\" s;"
        ),
        // Triggers (a read never fires one) and a view beside the tables.
        3 => format!(
            "CREATE TRIGGER fuzz_trigger AFTER INSERT ON \"{table}\" BEGIN
               DELETE FROM \"{table}\"; END;
             CREATE VIEW fuzz_view AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL
               SELECT n + 1 FROM r) SELECT n FROM r;"
        ),
        // A generated column: a long string on every read of the row.
        4 => format!(
            "ALTER TABLE \"{table}\" ADD COLUMN fuzz_generated TEXT
               GENERATED ALWAYS AS (printf('%.*c', 100000, 'x')) VIRTUAL;"
        ),
        // The same data change, left in a WAL (5, 6) or a rollback journal (7) beside
        // the file: the mutant carries the log after `SIDE_MARK`.
        5..=7 => return logged_mutant(&conn, &path, &data, rng.below(3) != 2),
        _ => data,
    };
    // A change SQLite refuses (a NOT NULL or key constraint) leaves the copy as it was.
    let _ = conn.execute_batch(&schema);
    drop(conn);
    std::fs::read(&path).ok()
}

/// The database at `path` after `change`, with the change left in its WAL (`wal`) or
/// with the transaction still open, so that its journal holds the pages before it: the
/// file's bytes, [`SIDE_MARK`], `w` or `j`, then the log's bytes.
fn logged_mutant(
    conn: &rusqlite::Connection,
    path: &Path,
    change: &str,
    wal: bool,
) -> Option<Vec<u8>> {
    let side = |suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    let (setup, kind, log) = if wal {
        (
            "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;",
            b'w',
            side("-wal"),
        )
    } else {
        ("PRAGMA cache_size = 1; BEGIN;", b'j', side("-journal"))
    };
    conn.execute_batch(setup).ok()?;
    let _ = conn.execute_batch(change);
    let mut out = std::fs::read(path).ok()?;
    let log = std::fs::read(log).ok()?;
    out.extend_from_slice(SIDE_MARK);
    out.push(kind);
    out.extend(log);
    if !wal {
        let _ = conn.execute_batch("ROLLBACK");
    }
    Some(out)
}
