//! Resource bombs of issue 45 (findings 5, 6, 7): crafted SQLite databases, CSV files and
//! Perfetto traces, each run through trace-info under a watchdog. The stated budget for
//! every one: done within 10 s with a peak resident set under 512 MB (`/usr/bin/time`),
//! and, where the input is past a limit, exit 2 naming the file and the limit.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use test_support::{Measured, run_measured};

const DEADLINE: Duration = Duration::from_secs(30);
const BUDGET_S: f64 = 10.0;
const BUDGET_KIB: u64 = 512 * 1000;

fn run(input: &Path, envs: &[(&str, &str)]) -> Measured {
    let args: Vec<OsString> = vec![input.as_os_str().to_owned()];
    let m = run_measured(env!("CARGO_BIN_EXE_trace-info"), &args, envs, DEADLINE);
    let name = input.file_name().unwrap().to_string_lossy();
    eprintln!(
        "{name}: exit {:?} in {:.2} s, peak {} KiB",
        m.code,
        m.elapsed.as_secs_f64(),
        m.peak_kib
    );
    assert!(!m.timed_out, "{name}: still running after {DEADLINE:?}");
    assert!(
        m.busy().as_secs_f64() < BUDGET_S,
        "{name}: took {:?} wall, {:?} CPU",
        m.elapsed,
        m.cpu
    );
    assert!(m.peak_kib > 0, "{name}: no peak measured");
    assert!(m.peak_kib < BUDGET_KIB, "{name}: peak {} KiB", m.peak_kib);
    m
}

/// Exit 2, naming the file and `limit` (the variable that raises it).
fn refused(m: &Measured, input: &Path, limit: &str) {
    assert_eq!(m.code, Some(2), "{m:?}");
    assert!(
        m.stderr.contains(&input.display().to_string()),
        "{}",
        m.stderr
    );
    assert!(m.stderr.contains(limit), "{}", m.stderr);
}

/// A minimal rocpd database (schema version 3, the earlier layout: times through
/// `rocpd_timestamp`) with one GPU, `kernels` dispatches of kernel `k`, and each
/// timestamp row written `copies` times (a table without its primary key).
fn rocpd(path: &Path, kernels: i64, copies: i64) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(&format!(
        "BEGIN;
         CREATE TABLE rocpd_metadata (id INTEGER PRIMARY KEY, tag TEXT, value TEXT);
         INSERT INTO rocpd_metadata (tag, value) VALUES ('schema_version', '3');
         CREATE TABLE rocpd_string (id INTEGER PRIMARY KEY, guid TEXT DEFAULT 'g', string TEXT);
         CREATE TABLE rocpd_info_agent (id INTEGER PRIMARY KEY, guid TEXT DEFAULT 'g',
           type TEXT, type_index INTEGER, logical_index INTEGER, absolute_index INTEGER,
           product_name TEXT, model_name TEXT, name TEXT);
         INSERT INTO rocpd_info_agent (id, type, type_index) VALUES (1, 'GPU', 0);
         CREATE TABLE rocpd_info_kernel_symbol (id INTEGER PRIMARY KEY, guid TEXT DEFAULT 'g',
           kernel_name TEXT, display_name TEXT);
         INSERT INTO rocpd_info_kernel_symbol (id, kernel_name, display_name) VALUES (1, 'k', 'k');
         CREATE TABLE rocpd_event (id INTEGER PRIMARY KEY, guid TEXT DEFAULT 'g',
           category_id INTEGER, correlation_id INTEGER);
         CREATE TABLE rocpd_track (id INTEGER PRIMARY KEY, guid TEXT DEFAULT 'g', pid INTEGER,
           tid INTEGER, agent_id INTEGER, queue_id INTEGER, stream_id INTEGER);
         INSERT INTO rocpd_track (id, pid, tid, agent_id, queue_id, stream_id)
           VALUES (1, 7, 7, 1, 0, 1);
         CREATE TABLE rocpd_timestamp (id INTEGER, guid TEXT DEFAULT 'g', value INTEGER);
         CREATE TABLE rocpd_kernel_dispatch (id INTEGER PRIMARY KEY, guid TEXT DEFAULT 'g',
           track_id INTEGER, kernel_id INTEGER, start_id INTEGER, end_id INTEGER,
           event_id INTEGER);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {kernels})
           INSERT INTO rocpd_kernel_dispatch (id, track_id, kernel_id, start_id, end_id)
           SELECT i, 1, 1, 2 * i, 2 * i + 1 FROM n;
         WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i < 2 * {kernels} + 1),
              c(j) AS (SELECT 1 UNION ALL SELECT j + 1 FROM c WHERE j < {copies})
           INSERT INTO rocpd_timestamp (id, value) SELECT i, i * 1000 FROM n, c;
         COMMIT;"
    ))
    .unwrap();
    conn
}

#[test]
fn rocpd_with_repeated_timestamp_ids_stops_at_its_time_budget() {
    // Each dispatch's two stamps 3,000 times over: 9 million joined rows per dispatch.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("1_results.db");
    drop(rocpd(&path, 20, 3000));
    eprintln!("{} bytes", std::fs::metadata(&path).unwrap().len());
    let m = run(&path, &[]);
    refused(&m, &path, "TRACEWISE_SQLITE_SECONDS");
}

#[test]
fn rocpd_whose_query_grows_sqlite_s_heap_stops_at_its_memory_budget() {
    // A sort of the dispatches by id (their table has no primary key), each row carrying
    // a 4 MB kernel name made by a generated column: the sort holds every row in
    // SQLite's heap (800 MB), past a budget of 64 MiB.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("2_results.db");
    let conn = rocpd(&path, 200, 1);
    conn.execute_batch(
        "ALTER TABLE rocpd_kernel_dispatch RENAME TO dispatches;
         CREATE TABLE rocpd_kernel_dispatch (id INTEGER, guid TEXT DEFAULT 'g',
           track_id INTEGER, kernel_id INTEGER, start_id INTEGER, end_id INTEGER,
           event_id INTEGER);
         INSERT INTO rocpd_kernel_dispatch SELECT * FROM dispatches;
         DROP TABLE dispatches;
         DROP TABLE rocpd_info_kernel_symbol;
         CREATE TABLE rocpd_info_kernel_symbol (id INTEGER PRIMARY KEY, guid TEXT DEFAULT 'g',
           kernel_name TEXT, display_name TEXT GENERATED ALWAYS AS (printf('%.*c', 3, 'k')));
         INSERT INTO rocpd_info_kernel_symbol (id, kernel_name) VALUES (1, 'k');
         PRAGMA writable_schema = ON;
         UPDATE sqlite_master SET sql = replace(sql, ', 3,', ', 4000000,')
           WHERE name = 'rocpd_info_kernel_symbol';
         PRAGMA writable_schema = OFF;",
    )
    .unwrap();
    drop(conn);
    let m = run(&path, &[("TRACEWISE_SQLITE_MEMORY", "64M")]);
    refused(&m, &path, "TRACEWISE_SQLITE_MEMORY");
}

fn nsys_export(path: &Path, kernels: i64, name: &str) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(include_str!("../../../../testdata/nsys/export_schema.sql"))
        .unwrap();
    conn.execute_batch("BEGIN").unwrap();
    conn.execute("INSERT INTO StringIds VALUES (1, ?1)", [name])
        .unwrap();
    conn.execute_batch(&format!(
        "INSERT INTO StringIds VALUES (2, 'cudaLaunchKernel_v7000');
         WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {kernels} - 1)
         INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME
           SELECT i * 100, i * 100 + 10, 0, (1 << 48) | (7 << 24) | 7, i, 2, 0, NULL FROM n;
         INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL
           SELECT start + 20, start + 50, 0, 1, 7, correlationId, globalTid & ~16777215,
                  1, 1, NULL, 32, 128, 256, NULL, NULL FROM CUPTI_ACTIVITY_KIND_RUNTIME;
         COMMIT;"
    ))
    .unwrap();
    conn
}

#[test]
fn nsys_kernel_table_replaced_by_an_endless_view_is_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("view.sqlite");
    let conn = nsys_export(&path, 10, "k");
    conn.execute_batch(
        "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL;
         CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS
           WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)
           SELECT n AS start, n + 1 AS end, 0 AS deviceId, 1 AS contextId, 7 AS streamId,
                  n AS correlationId, (1 << 48) | (7 << 24) AS globalPid,
                  1 AS demangledName, 1 AS shortName FROM r;",
    )
    .unwrap();
    drop(conn);
    let m = run(&path, &[]);
    assert_eq!(m.code, Some(0), "{m:?}");
}

#[test]
fn nsys_name_past_the_string_limit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("name.sqlite");
    drop(nsys_export(&path, 10, &"k".repeat(3 << 20)));
    let m = run(&path, &[("TRACEWISE_MAX_EVENT_BYTES", "1M")]);
    refused(&m, &path, "TRACEWISE_MAX_EVENT_BYTES");
}

#[test]
fn nsys_long_name_under_many_kernels_is_cut_in_the_chrome_export() {
    // A 20 MB name shared by 2,000 kernels was copied into each exported event (40 GB);
    // here 500 kernels, each event now with the name cut to 64 KiB.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.sqlite");
    drop(nsys_export(&path, 500, &"k".repeat(20 << 20)));
    let out = dir.path().join("out.json");
    let args: Vec<OsString> = vec![
        path.as_os_str().to_owned(),
        "--to-chrome-trace".into(),
        out.as_os_str().to_owned(),
    ];
    let m = run_measured(env!("CARGO_BIN_EXE_trace-info"), &args, &[], DEADLINE);
    eprintln!("{:?} {} KiB", m.elapsed, m.peak_kib);
    assert_eq!(m.code, Some(0), "{m:?}");
    assert!(
        m.busy().as_secs_f64() < BUDGET_S && m.peak_kib < BUDGET_KIB,
        "{m:?}"
    );
    let size = std::fs::metadata(&out).unwrap().len();
    assert!(size < 500 * 70_000, "{size} bytes");
}

#[test]
fn csv_kernel_name_past_the_string_limit_is_refused() {
    // A 300 MB kernel name in a rocprof v1 results.csv, at the default limit (256 MiB).
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.csv");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    file.write_all(b"\"KernelName\",\"BeginNs\",\"EndNs\"\n\"k\",1,2\n\"")
        .unwrap();
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..300 {
        file.write_all(&chunk).unwrap();
    }
    file.write_all(b"\",3,4\n").unwrap();
    file.flush().unwrap();
    drop(file);
    let m = run(&path, &[]);
    refused(&m, &path, "TRACEWISE_MAX_EVENT_BYTES");
    assert!(m.stderr.contains("line 3"), "{}", m.stderr);
}

/// Appends `value` as a protobuf varint.
fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Appends field `field` of wire type 2 (bytes).
fn bytes_field(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
    varint(out, field << 3 | 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Appends field `field` of wire type 0 (varint).
fn varint_field(out: &mut Vec<u8>, field: u64, value: u64) {
    varint(out, field << 3);
    varint(out, value);
}

#[test]
fn pftrace_long_interned_name_under_every_event_is_kept_once() {
    // Finding 6: a 40 MB interned name used by 300,000 events (a 49 MB file).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bomb.pftrace");
    let mut out = Vec::new();
    // Packet 1: sequence 1, incremental state cleared, interned event name iid 1.
    let mut name = Vec::new();
    varint_field(&mut name, 1, 1);
    bytes_field(&mut name, 2, &vec![b'n'; 40 << 20]);
    let mut interned = Vec::new();
    bytes_field(&mut interned, 2, &name);
    let mut packet = Vec::new();
    varint_field(&mut packet, 10, 1);
    varint_field(&mut packet, 13, 1);
    bytes_field(&mut packet, 12, &interned);
    bytes_field(&mut out, 1, &packet);
    for i in 0..300_000u64 {
        // An instant (type 3) named by iid 1 on track 7.
        let mut event = Vec::new();
        varint_field(&mut event, 9, 3);
        varint_field(&mut event, 10, 1);
        varint_field(&mut event, 11, 7);
        let mut packet = Vec::new();
        varint_field(&mut packet, 8, 1000 + i * 10);
        varint_field(&mut packet, 10, 1);
        bytes_field(&mut packet, 11, &event);
        bytes_field(&mut out, 1, &packet);
    }
    std::fs::write(&path, &out).unwrap();
    drop(out);
    let m = run(&path, &[]);
    assert_eq!(m.code, Some(0), "{m:?}");
}
