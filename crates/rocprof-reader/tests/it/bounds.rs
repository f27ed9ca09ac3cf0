//! Databases and traces as a hostile or careless user leaves them (findings 5, 6, 14, 15
//! and 18 of issue 45): a rocpd database in WAL mode, views where the schema has tables,
//! ids a join repeats, generated columns that make huge strings, negative times, and one
//! long interned name under every Perfetto event. Each is read as data under its budgets,
//! and never writes beside the input.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use prost::Message;
use rocprof_reader::proto::{EventName, InternedData, TracePacket, TrackEvent};
use rocprof_reader::{Error, Process, load};
use trace_model::ActivityKind;

use crate::rocpd::{create_schema, fill};

const UUID: &str = "_0198a1b2c3d4";

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

fn kernels(loaded: &[Process]) -> usize {
    loaded
        .iter()
        .map(|p| {
            p.capture
                .activities()
                .iter()
                .filter(|a| a.kind == ActivityKind::Kernel)
                .count()
        })
        .sum()
}

fn diagnostic_count(loaded: &[Process], code: &str) -> u64 {
    loaded
        .iter()
        .map(|p| p.capture.diagnostics().count(code))
        .max()
        .unwrap_or(0)
}

#[test]
fn a_wal_mode_rocpd_database_is_read_whole_and_its_directory_left_alone() {
    let dir = crate::scratch();
    let path = dir.path().join("4242_results.db");
    let conn = create_schema(&path);
    conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;")
        .unwrap();
    fill(&conn);
    let copied = crate::scratch();
    for name in ["4242_results.db", "4242_results.db-wal"] {
        std::fs::copy(dir.path().join(name), copied.path().join(name)).unwrap();
    }
    drop(conn);
    let copy = copied.path().join("4242_results.db");
    let before = listing(copied.path());
    // A read-only directory reads the same (nothing needs writing beside the input).
    let mut permissions = std::fs::metadata(copied.path()).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o555);
    std::fs::set_permissions(copied.path(), permissions.clone()).unwrap();
    let loaded = load(&copy);
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(copied.path(), permissions).unwrap();
    assert_eq!(kernels(&loaded.unwrap()), 3);
    assert_eq!(
        listing(copied.path()),
        before,
        "no -shm/-wal made or changed"
    );

    // Closed (checkpointed): the WAL-mode file alone gains no side files either.
    let before = listing(dir.path());
    assert_eq!(kernels(&load(&path).unwrap()), 3);
    assert_eq!(listing(dir.path()), before);
}

#[test]
fn a_view_named_like_a_schema_table_is_never_run() {
    let dir = crate::scratch();
    let path = dir.path().join("4242_results.db");
    let conn = create_schema(&path);
    fill(&conn);
    conn.execute_batch(&format!(
        "DROP TABLE `rocpd_timestamp{UUID}`;
         CREATE VIEW `rocpd_timestamp{UUID}` AS
           WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)
           SELECT n AS id, 'g' AS guid, n AS value FROM r;"
    ))
    .unwrap();
    drop(conn);
    let start = Instant::now();
    let err = load(&path).unwrap_err();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    let text = err.to_string();
    assert!(
        text.contains(&format!("rocpd_timestamp{UUID}")) && text.contains("not in the database"),
        "{text}"
    );
}

/// Issue 45, finding 19: a refusal listed every table of the file (5.5 MB of names). A
/// rocpd database lacking a required table, with 3,000 more tables of 2,000-byte names:
/// the error names the missing table and lists ten names, each cut, and the count of the
/// rest.
#[test]
fn a_refusal_lists_few_table_names_however_many_the_file_has() {
    let dir = crate::scratch();
    let path = dir.path().join("4242_results.db");
    let conn = create_schema(&path);
    fill(&conn);
    conn.execute_batch("BEGIN").unwrap();
    for i in 0..3_000 {
        let name = format!("rocpd_extra_{i:04}_{}", "n".repeat(2_000));
        conn.execute_batch(&format!("CREATE TABLE `{name}` (x INTEGER);"))
            .unwrap();
    }
    conn.execute_batch(&format!("DROP TABLE `rocpd_event{UUID}`; COMMIT;"))
        .unwrap();
    drop(conn);
    let text = load(&path).unwrap_err().to_string();
    assert!(text.contains(&format!("rocpd_event{UUID}")), "{text}");
    assert!(text.contains("more"), "{text}");
    assert!(text.len() < 4_000, "{} bytes: {}", text.len(), &text[..500]);
}

#[test]
fn ids_a_join_repeats_give_each_row_once() {
    let dir = crate::scratch();
    let path = dir.path().join("4242_results.db");
    let conn = create_schema(&path);
    fill(&conn);
    // The timestamp table without its primary key, each stamp 300 times.
    conn.execute_batch(&format!(
        "ALTER TABLE `rocpd_timestamp{UUID}` RENAME TO stamps;
         CREATE TABLE `rocpd_timestamp{UUID}` (id INTEGER, guid TEXT DEFAULT 'g', value BIGINT);
         WITH RECURSIVE k(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM k WHERE n < 300)
         INSERT INTO `rocpd_timestamp{UUID}` (id, guid, value)
           SELECT id, guid, value FROM stamps, k;"
    ))
    .unwrap();
    drop(conn);
    let loaded = load(&path).unwrap();
    assert_eq!(kernels(&loaded), 3);
    // Each dispatch row was joined 300 × 300 times; all but its first are counted.
    assert!(diagnostic_count(&loaded, "rocpd-repeated-id") >= 3 * (300 * 300 - 1));
}

#[test]
fn negative_and_backward_times_leave_their_rows_out_with_a_diagnostic() {
    let dir = crate::scratch();
    let path = dir.path().join("4242_results.db");
    let conn = create_schema(&path);
    fill(&conn);
    // `orphan` starts at a negative time; `reduce_sum` ends before it starts.
    conn.execute_batch(&format!(
        "UPDATE `rocpd_timestamp{UUID}` SET value = -5 WHERE id = 11;
         UPDATE `rocpd_timestamp{UUID}` SET value = 250 WHERE id = 18;"
    ))
    .unwrap();
    drop(conn);
    let loaded = load(&path).unwrap();
    assert_eq!(kernels(&loaded), 1, "gemm_kernel only");
    let negative = loaded[0]
        .capture
        .diagnostics()
        .get("rocpd-negative-time")
        .unwrap();
    assert_eq!(negative.count, 1);
    assert!(
        negative.first.contains(&path.display().to_string()),
        "{}",
        negative.first
    );
    assert!(negative.first.contains("row 2"), "{}", negative.first);
    assert_eq!(
        diagnostic_count(&loaded, trace_model::TIME_OUT_OF_RANGE),
        1,
        "the backward row is counted by the builder"
    );

    // rocprof v1's results.db: the same.
    let path = dir.path().join("results.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE KERN (KernelName TEXT, [gpu-id] INTEGER, [queue-id] INTEGER,
           pid INTEGER, BeginNs INTEGER, EndNs INTEGER);
         INSERT INTO KERN VALUES ('\"a\"', 0, 0, 1, 100, 200), ('\"b\"', 0, 0, 1, -7, 300);",
    )
    .unwrap();
    drop(conn);
    let loaded = load(&path).unwrap();
    assert_eq!(kernels(&loaded), 1);
    let negative = loaded[0]
        .capture
        .diagnostics()
        .get("rocprof-negative-time")
        .unwrap();
    assert_eq!(
        (negative.count, negative.first.ends_with("KERN row 2")),
        (1, true)
    );
}

#[test]
fn a_generated_string_past_the_limit_stops_the_read_naming_the_budget() {
    let dir = crate::scratch();
    let path = dir.path().join("4242_results.db");
    let conn = create_schema(&path);
    fill(&conn);
    // Every kernel's display name made 300 MB long by a generated column, the schema
    // text edited in place as a crafted file would have it (the file stays small).
    conn.execute_batch(&format!(
        "ALTER TABLE `rocpd_info_kernel_symbol{UUID}` RENAME TO symbols;
         CREATE TABLE `rocpd_info_kernel_symbol{UUID}` (id INTEGER PRIMARY KEY,
           guid TEXT DEFAULT 'g', kernel_name TEXT,
           display_name TEXT GENERATED ALWAYS AS (printf('%.*c', 3, 'x')) VIRTUAL);
         INSERT INTO `rocpd_info_kernel_symbol{UUID}` (id, guid, kernel_name)
           SELECT id, guid, kernel_name FROM symbols;
         PRAGMA writable_schema = ON;
         UPDATE sqlite_master SET sql = replace(sql, ', 3,', ', 300000000,')
           WHERE name = 'rocpd_info_kernel_symbol{UUID}';
         PRAGMA writable_schema = OFF;"
    ))
    .unwrap();
    drop(conn);
    assert!(std::fs::metadata(&path).unwrap().len() < 1 << 20);
    let err = load(&path).unwrap_err();
    assert!(matches!(err, Error::Limit { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(text.contains("TRACEWISE_MAX_EVENT_BYTES"), "{text}");
}

/// A Perfetto trace whose one interned name of `name_bytes` names `events` instants.
pub fn one_long_name_trace(name_bytes: usize, events: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let mut push = |packet: TracePacket| {
        out.push(0x0a);
        let bytes = packet.encode_to_vec();
        prost::encoding::encode_varint(bytes.len() as u64, &mut out);
        out.extend(bytes);
    };
    push(TracePacket {
        trusted_packet_sequence_id: Some(1),
        sequence_flags: Some(1),
        interned_data: Some(InternedData {
            event_names: vec![EventName {
                iid: Some(1),
                name: Some("n".repeat(name_bytes)),
            }],
            ..InternedData::default()
        }),
        ..TracePacket::default()
    });
    for i in 0..events {
        push(TracePacket {
            trusted_packet_sequence_id: Some(1),
            timestamp: Some(1000 + i * 10),
            track_event: Some(TrackEvent {
                r#type: Some(3),
                name_iid: Some(1),
                track_uuid: Some(7),
                ..TrackEvent::default()
            }),
            ..TracePacket::default()
        });
    }
    out
}

#[test]
fn one_long_interned_name_is_kept_once_and_cut() {
    let dir = crate::scratch();
    let path = dir.path().join("bomb.pftrace");
    std::fs::write(&path, one_long_name_trace(4 << 20, 20_000)).unwrap();
    let start = Instant::now();
    let loaded = load(&path).unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    let c = &loaded[0].capture;
    assert_eq!(c.host_events().len(), 20_000);
    let names: std::collections::BTreeSet<_> =
        c.host_events().iter().map(|h| c.name(h.name)).collect();
    assert_eq!(names.len(), 1);
    let name = names.into_iter().next().unwrap();
    assert!(name.len() <= trace_model::limits::MAX_NAME_BYTES as usize);
    assert!(name.ends_with(&format!("[cut: {} bytes]", 4 << 20)));
    assert_eq!(c.diagnostics().count("name-cut"), 1);
}
