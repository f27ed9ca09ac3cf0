//! Exports as a hostile or careless user leaves them (findings 5, 6, 7, 14 and 15 of
//! issue 45): a database in WAL mode or with a hot rollback journal, views and generated
//! columns where the export has tables, an enormous string. Each is read as data, under
//! its budgets, and never writes beside the input.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use nsys_reader::{Config, load};

use crate::export::Export;

/// Every entry of `dir`: name → (length, modification time).
fn listing(dir: &Path) -> BTreeMap<PathBuf, (u64, SystemTime)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            (e.path(), (m.len(), m.modified().unwrap()))
        })
        .collect()
}

fn kernels(path: &Path) -> usize {
    load(path, &Config::default())
        .unwrap_or_else(|e| panic!("{e}"))
        .iter()
        .map(|p| {
            p.capture
                .activities()
                .iter()
                .filter(|a| a.kind == trace_model::ActivityKind::Kernel)
                .count()
        })
        .sum()
}

/// An export of `n` kernels, each launched by a runtime call.
fn fill(x: &mut Export, n: i64) {
    x.conn.execute_batch("BEGIN").unwrap();
    for i in 0..n {
        x.runtime(i * 100, i * 100 + 10, 7, 7, i, "cudaLaunchKernel_v7000");
        x.kernel(i * 100 + 20, i * 100 + 50, 0, 7, i, 7, "k", None);
    }
    x.conn.execute_batch("COMMIT").unwrap();
}

#[test]
fn wal_content_is_read_whole_and_nothing_is_written_beside_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let mut x = Export::create(dir.path(), "run.sqlite");
    x.conn
        .execute_batch("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;")
        .unwrap();
    fill(&mut x, 38);
    let wal = dir.path().join("run.sqlite-wal");
    assert!(
        std::fs::metadata(&wal).unwrap().len() > 0,
        "the rows are in the WAL"
    );

    // A copy of the export and its WAL, as a user moves them (the writer gone).
    let copied = tempfile::tempdir().unwrap();
    for name in ["run.sqlite", "run.sqlite-wal"] {
        std::fs::copy(dir.path().join(name), copied.path().join(name)).unwrap();
    }
    let before = listing(copied.path());
    assert_eq!(kernels(&copied.path().join("run.sqlite")), 38);
    assert_eq!(
        listing(copied.path()),
        before,
        "no -shm/-wal made or changed"
    );

    // The live export, its writer still open: the same rows, and its files untouched.
    let before = listing(dir.path());
    assert_eq!(kernels(&x.path), 38);
    assert_eq!(listing(dir.path()), before);

    // Checkpointed and closed: a WAL-mode file alone reads, and gains no side files.
    let path = x.path.clone();
    drop(x);
    assert!(!wal.exists());
    let before = listing(dir.path());
    assert_eq!(kernels(&path), 38);
    assert_eq!(listing(dir.path()), before);
}

#[test]
fn a_hot_rollback_journal_is_rolled_back_in_a_private_copy() {
    let dir = tempfile::tempdir().unwrap();
    let mut x = Export::create(dir.path(), "run.sqlite");
    fill(&mut x, 2000);
    // A write cut short: pages spill into the file before the transaction ends.
    x.conn
        .execute_batch(
            "PRAGMA cache_size = 2; BEGIN; DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL;
             UPDATE StringIds SET value = 'changed' || value;",
        )
        .unwrap();
    let journal = dir.path().join("run.sqlite-journal");
    assert!(std::fs::metadata(&journal).unwrap().len() > 0);
    let copied = tempfile::tempdir().unwrap();
    for name in ["run.sqlite", "run.sqlite-journal"] {
        std::fs::copy(dir.path().join(name), copied.path().join(name)).unwrap();
    }
    drop(x);
    let before = listing(copied.path());
    assert_eq!(kernels(&copied.path().join("run.sqlite")), 2000);
    assert_eq!(
        listing(copied.path()),
        before,
        "the journal is left as it was"
    );
}

#[test]
fn views_named_like_export_tables_are_never_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut x = Export::create(dir.path(), "run.sqlite");
    fill(&mut x, 3);
    // The kernel table replaced by a view over a recursive query that never ends.
    x.conn
        .execute_batch(
            "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL;
             CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS
               WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)
               SELECT n AS start, n + 1 AS end, 0 AS deviceId, 1 AS contextId,
                      7 AS streamId, n AS correlationId, NULL AS globalPid,
                      1 AS demangledName, 1 AS shortName FROM r;",
        )
        .unwrap();
    let path = x.path.clone();
    drop(x);
    let start = Instant::now();
    let processes = load(&path, &Config::default()).unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    let c = &processes[0].capture;
    assert_eq!(c.activities().len(), 0, "the view is not the kernel table");
    assert_eq!(c.host_events().len(), 3);
    assert!(
        c.diagnostics()
            .iter()
            .any(|d| d.code == "nsys-no-kernel-table"),
        "{:?}",
        c.diagnostics()
    );
}

#[test]
fn generated_columns_are_not_read_as_the_export_s_columns() {
    let dir = tempfile::tempdir().unwrap();
    let mut x = Export::create(dir.path(), "run.sqlite");
    fill(&mut x, 3);
    // Every name made 300 MB long by a generated column (the file stays small): the
    // schema text is edited in place, as a crafted file would have it.
    x.conn
        .execute_batch(
            "ALTER TABLE StringIds RENAME TO StringIdsStored;
             CREATE TABLE StringIds (id INTEGER PRIMARY KEY, raw TEXT,
               value TEXT GENERATED ALWAYS AS (printf('%.*c', 3, 'x')) VIRTUAL);
             INSERT INTO StringIds (id, raw) SELECT id, value FROM StringIdsStored;
             PRAGMA writable_schema = ON;
             UPDATE sqlite_master SET sql = replace(sql, ', 3,', ', 300000000,')
               WHERE name = 'StringIds';
             PRAGMA writable_schema = OFF;",
        )
        .unwrap();
    let path = x.path.clone();
    drop(x);
    // `pragma_table_info` lists stored columns only: `value` is not one, so no name is
    // looked up, and nothing 300 MB long is made.
    let start = Instant::now();
    let processes = load(&path, &Config::default()).unwrap();
    assert!(start.elapsed() < Duration::from_secs(5));
    let c = &processes[0].capture;
    assert_eq!(c.activities().len(), 3);
    assert!(
        c.activities()
            .iter()
            .all(|a| c.name(a.name) == "(unnamed kernel)")
    );
}

#[test]
fn a_long_name_is_read_once_and_cut_with_its_length() {
    let dir = tempfile::tempdir().unwrap();
    let mut x = Export::create(dir.path(), "run.sqlite");
    let long = "k".repeat(1_000_000);
    x.conn.execute_batch("BEGIN").unwrap();
    for i in 0..50 {
        x.runtime(i * 100, i * 100 + 10, 7, 7, i, "cudaLaunchKernel_v7000");
    }
    let name = x.string(&long);
    x.conn
        .execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL
             SELECT start + 20, start + 50, 0, 1, 7, correlationId, globalTid & ~16777215,
                    ?1, ?1, NULL, 32, 128, 256, NULL, NULL
             FROM CUPTI_ACTIVITY_KIND_RUNTIME",
            [name],
        )
        .unwrap();
    x.conn.execute_batch("COMMIT").unwrap();
    let path = x.path.clone();
    drop(x);
    let processes = load(&path, &Config::default()).unwrap();
    let c = &processes[0].capture;
    assert_eq!(c.activities().len(), 50);
    let names: std::collections::BTreeSet<_> =
        c.activities().iter().map(|a| c.name(a.name)).collect();
    assert_eq!(names.len(), 1, "one interned name");
    let name = names.into_iter().next().unwrap();
    assert!(name.len() <= trace_model::limits::MAX_NAME_BYTES as usize);
    assert!(
        name.ends_with("[cut: 1000000 bytes]"),
        "{}",
        &name[name.len() - 40..]
    );
    let cut = c
        .diagnostics()
        .iter()
        .find(|d| d.code == "name-cut")
        .unwrap();
    assert_eq!(cut.count, 1);
    assert!(cut.first.contains(&path.display().to_string()));
}
