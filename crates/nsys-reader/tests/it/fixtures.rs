//! The committed fixtures (`testdata/nsys/`, made by `cargo xtask fixtures`): each file
//! under `err/` gives its error, naming the file and the table (and row and column where
//! one is at fault); the valid export under `ok/` reads as plain SQL over it says.

use std::path::{Path, PathBuf};

use nsys_reader::{Config, load};
use rusqlite::{Connection, OpenFlags};
use trace_model::{ActivityKind, HostKind};

fn fixture(rel: &str) -> PathBuf {
    test_support::workspace_root()
        .join("testdata/nsys")
        .join(rel)
}

/// The error of `err/NAME`, without the leading `PATH: ` (which must be there).
fn error_of(name: &str) -> String {
    let path = fixture(&format!("err/{name}"));
    let err = match load(&path, &Config::default()) {
        Ok(processes) => panic!("{name}: read {} processes", processes.len()),
        Err(e) => e.to_string(),
    };
    let prefix = format!("{}: ", path.display());
    err.strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{name}: the error does not begin with the path: {err}"))
        .to_owned()
}

fn check(name: &str, expect: &str) {
    assert_eq!(error_of(name), expect, "{name}");
}

/// Every `err/` fixture with its message: a new fixture without a line here fails.
const EXPECTED: &[(&str, &str)] = &[
    (
        "not_an_export.sqlite",
        "a SQLite file, but not an Nsight Systems export: it has no StringIds table beside \
         META_DATA_EXPORT, EXPORT_META_DATA, TARGET_INFO_GPU or the CUPTI_ACTIVITY_KIND_* tables",
    ),
    (
        "truncated.sqlite",
        "truncated: the file ends at byte 4608, but its SQLite header says it has 9216 bytes",
    ),
    (
        "wrong_column_type.sqlite",
        "table CUPTI_ACTIVITY_KIND_KERNEL, row 2, column start: text \"soon\" where an integer \
         was expected",
    ),
];

#[test]
fn err_fixtures_give_their_errors() {
    for (name, expect) in EXPECTED {
        check(name, expect);
    }
    let mut on_disk: Vec<String> = std::fs::read_dir(fixture("err"))
        .expect("testdata/nsys/err is readable")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".md"))
        .collect();
    on_disk.sort();
    let listed: Vec<&str> = EXPECTED.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        on_disk, listed,
        "every err fixture has its expected error here"
    );
}

fn sql_count(path: &Path, sql: &str) -> usize {
    let db = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let n: i64 = db.query_row(sql, [], |r| r.get(0)).unwrap();
    usize::try_from(n).unwrap()
}

#[test]
fn ok_export_reads_as_sql_counts_it() {
    let path = fixture("ok/small.sqlite");
    let processes = load(&path, &Config::default()).unwrap();
    assert_eq!(processes.len(), 1);
    assert_eq!(processes[0].pid, 100);
    let c = &processes[0].capture;
    let count = |kind| c.activities().iter().filter(|a| a.kind == kind).count();
    for (kind, table) in [
        (ActivityKind::Kernel, "KERNEL"),
        (ActivityKind::Memcpy, "MEMCPY"),
        (ActivityKind::Memset, "MEMSET"),
    ] {
        let sql = format!("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_{table}");
        assert_eq!(count(kind), sql_count(&path, &sql), "{table}");
        assert!(count(kind) > 0, "{table}");
    }
    let runtime = c
        .host_events()
        .iter()
        .filter(|e| matches!(e.kind, HostKind::Launch | HostKind::Runtime))
        .count();
    assert_eq!(
        runtime,
        sql_count(&path, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME")
    );
    assert!(
        c.activities().iter().all(|a| a.launch().is_some()),
        "every activity has its runtime call"
    );
    assert_eq!(
        c.steps().len(),
        sql_count(
            &path,
            "SELECT count(*) FROM NVTX_EVENTS WHERE text LIKE 'ProfilerStep#%'"
        )
    );
    assert_eq!(
        c.devices()[0].properties.name.as_deref(),
        Some("NVIDIA H200")
    );
}
