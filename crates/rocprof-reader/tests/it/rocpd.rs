//! rocpd databases made here to rocprofiler-sdk's schema version 3 (`rocpd_tables.sql`:
//! tables suffixed with the database's uuid, read through the unsuffixed views of
//! `rocpd_views.sql`), with known kernels, copies and API calls.

use std::path::Path;

use rocprof_reader::{Kind, detect, load};
use rusqlite::Connection;
use trace_model::{ActivityKind, HostKind, KernelClass, MemcpyDirection};

/// The schema's tables this test fills, as documented (columns and types), with `{uuid}`
/// for the per-database suffix.
const TABLES: &str = include_str!("../../../../testdata/rocprof/rocpd_schema_v3.sql");

/// The views of `rocpd_views.sql` that name each table without its suffix.
const VIEWED: &[&str] = &[
    "rocpd_metadata",
    "rocpd_string",
    "rocpd_info_node",
    "rocpd_info_process",
    "rocpd_info_thread",
    "rocpd_info_agent",
    "rocpd_info_queue",
    "rocpd_info_stream",
    "rocpd_info_code_object",
    "rocpd_info_kernel_symbol",
    "rocpd_track",
    "rocpd_timestamp",
    "rocpd_event",
    "rocpd_region",
    "rocpd_kernel_dispatch",
    "rocpd_memory_copy",
];

const UUID: &str = "_0198a1b2c3d4";

/// Makes an empty rocpd database (schema version 3) at `path`.
pub fn create_schema(path: &Path) -> Connection {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(&TABLES.replace("{uuid}", UUID)).unwrap();
    for view in VIEWED {
        conn.execute_batch(&format!(
            "CREATE VIEW `{view}` AS SELECT * FROM `{view}{UUID}`;"
        ))
        .unwrap();
    }
    conn.execute_batch(&format!(
        "INSERT INTO `rocpd_metadata{UUID}` (tag, value) VALUES ('schema_version', '3');"
    ))
    .unwrap();
    conn
}

/// Fills the database with two processes' work:
///
/// - pid 4242, thread 4243: `hipLaunchKernel` (corr 11, 1000..1500), `hipMemcpyAsync`
///   (corr 12, 2000..2200), `hsa_signal_wait` (HSA, corr 13, 2300..2400), marker `phase`
///   (corr 14, 500..5000); kernel `gemm_kernel` (corr 11, 3000..7000) on GPU agent 2
///   stream 1; kernel `orphan` (corr 15, 7100..7200) on GPU agent 3 queue 5 (no stream);
///   an HtoD copy (corr 12, 2500..2900, 1 MiB) from CPU agent 1 to agent 2 on stream 1.
/// - pid 5151, thread 5151: `hipLaunchKernel` (corr 21, 100..200); kernel `reduce_sum`
///   (corr 21, 300..400) on agent 2 stream 2.
pub fn fill(conn: &Connection) {
    let sql = r#"
INSERT INTO rocpd_info_node{uuid} (id, hash, machine_id, hostname) VALUES (1, 7, 'm', 'host');
INSERT INTO rocpd_info_process{uuid} (id, nid, pid, command) VALUES (1, 1, 4242, 'app'), (2, 1, 5151, 'app');
INSERT INTO rocpd_info_thread{uuid} (id, nid, pid, tid, name) VALUES (1, 1, 4242, 4243, 'main'), (2, 1, 5151, 5151, NULL);
INSERT INTO rocpd_info_agent{uuid} (id, nid, pid, type, absolute_index, logical_index, type_index, name, product_name)
    VALUES (1, 1, 4242, 'CPU', 0, 0, 0, 'cpu', 'EPYC'),
           (2, 1, 4242, 'GPU', 2, 2, 0, 'gfx942', 'AMD Instinct MI300X'),
           (3, 1, 4242, 'GPU', 3, 3, 1, 'gfx942', 'AMD Instinct MI300X');
INSERT INTO rocpd_info_stream{uuid} (id, nid, pid, name) VALUES (1, 1, 4242, 'stream 1'), (2, 1, 5151, 'stream 2');
INSERT INTO rocpd_info_queue{uuid} (id, nid, pid, name) VALUES (5, 1, 4242, 'queue 5');
INSERT INTO rocpd_info_code_object{uuid} (id, nid, pid, agent_id, storage_type) VALUES (1, 1, 4242, 2, 'FILE');
INSERT INTO rocpd_string{uuid} (id, string) VALUES
    (1, 'hipLaunchKernel'), (2, 'hipMemcpyAsync'), (3, 'hsa_signal_wait'), (4, 'phase'),
    (5, 'HIP_RUNTIME_API_EXT'), (6, 'HSA_CORE_API'), (7, 'MARKER_CORE_API'),
    (8, 'KERNEL_DISPATCH'), (9, 'MEMORY_COPY'), (10, 'MEMORY_COPY_HOST_TO_DEVICE'), (11, 'thread');
INSERT INTO rocpd_info_kernel_symbol{uuid} (id, nid, pid, code_object_id, kernel_name, display_name)
    VALUES (1, 1, 4242, 1, '_Z11gemm_kernelv', 'gemm_kernel'), (2, 1, 4242, 1, 'orphan.kd', ''),
           (3, 1, 5151, 1, '_Z10reduce_sumv', 'reduce_sum');
INSERT INTO rocpd_track{uuid} (id, nid, pid, tid, agent_id, queue_id, stream_id, name_id) VALUES
    (1, 1, 4242, 4243, NULL, NULL, NULL, 11),
    (2, 1, 4242, 4243, 2, 5, 1, NULL),
    (3, 1, 4242, 4243, 3, 5, NULL, NULL),
    (4, 1, 4242, 4243, 2, NULL, 1, NULL),
    (5, 1, 5151, 5151, NULL, NULL, NULL, 11),
    (6, 1, 5151, 5151, 2, 7, 2, NULL);
INSERT INTO rocpd_timestamp{uuid} (id, value) VALUES
    (1, 1000), (2, 1500), (3, 2000), (4, 2200), (5, 2300), (6, 2400), (7, 500), (8, 5000),
    (9, 3000), (10, 7000), (11, 7100), (12, 7200), (13, 2500), (14, 2900),
    (15, 100), (16, 200), (17, 300), (18, 400);
INSERT INTO rocpd_event{uuid} (id, category_id, correlation_id) VALUES
    (1, 5, 11), (2, 5, 12), (3, 6, 13), (4, 7, 14), (5, 8, 11), (6, 8, 15), (7, 9, 12),
    (8, 5, 21), (9, 8, 21);
INSERT INTO rocpd_region{uuid} (id, track_id, name_id, start_id, end_id, event_id) VALUES
    (1, 1, 1, 1, 2, 1), (2, 1, 2, 3, 4, 2), (3, 1, 3, 5, 6, 3), (4, 1, 4, 7, 8, 4),
    (5, 5, 1, 15, 16, 8);
INSERT INTO rocpd_kernel_dispatch{uuid} (id, track_id, kernel_id, dispatch_id, start_id, end_id,
    workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, grid_size_z, event_id)
    VALUES (1, 2, 1, 1, 9, 10, 256, 1, 1, 65536, 1, 1, 5),
           (2, 3, 2, 2, 11, 12, 64, 1, 1, 64, 1, 1, 6),
           (3, 6, 3, 3, 17, 18, 128, 1, 1, 1024, 1, 1, 9);
INSERT INTO rocpd_memory_copy{uuid} (id, track_id, start_id, end_id, name_id, dst_agent_id, src_agent_id, size, event_id)
    VALUES (1, 4, 13, 14, 10, 2, 1, 1048576, 7);
"#;
    conn.execute_batch(&sql.replace("{uuid}", UUID)).unwrap();
}

#[test]
fn documented_schema_gives_exactly_the_known_activities_links_and_devices() {
    let dir = crate::scratch();
    let path = dir.path().join("4242_results.db");
    fill(&create_schema(&path));
    assert_eq!(detect(&path), Some(Kind::Rocpd));
    let loaded = load(&path).unwrap();
    let pids: Vec<_> = loaded.iter().map(|l| l.pid).collect();
    assert_eq!(pids, [Some(4242), Some(5151)]);

    let c = &loaded[0].capture;
    assert_eq!(c.format(), trace_model::Format::Rocpd);
    assert_eq!(
        c.meta().producer.as_deref(),
        Some("rocprofv3 rocpd (schema version 3)")
    );
    let activities: Vec<_> = c
        .activities()
        .iter()
        .map(|a| {
            let s = c.stream(a.stream);
            (
                c.name(a.name),
                a.kind,
                a.start.0,
                a.dur.0,
                c.device(s.device).ordinal,
                s.ordinal,
                a.correlation(),
                a.launch().map(|l| c.name(c.host_event(l).name)),
                c.activity_bytes(a),
            )
        })
        .collect();
    use ActivityKind::{Kernel, Memcpy};
    assert_eq!(
        activities,
        [
            (
                "MEMORY_COPY_HOST_TO_DEVICE",
                Memcpy,
                2500,
                400,
                0,
                1,
                Some(12),
                Some("hipMemcpyAsync"),
                Some(1 << 20)
            ),
            (
                "gemm_kernel",
                Kernel,
                3000,
                4000,
                0,
                1,
                Some(11),
                Some("hipLaunchKernel"),
                None
            ),
            ("orphan.kd", Kernel, 7100, 100, 1, 5, Some(15), None, None),
        ]
    );
    assert_eq!(
        c.activities()[0].class,
        KernelClass::Memcpy(MemcpyDirection::HostToDevice)
    );
    // Both GPUs, by type index, with their names; not the CPU agent.
    let devices: Vec<_> = c
        .devices()
        .iter()
        .map(|d| (d.ordinal, d.properties.name.as_deref()))
        .collect();
    assert_eq!(
        devices,
        [
            (0, Some("AMD Instinct MI300X")),
            (1, Some("AMD Instinct MI300X"))
        ]
    );
    let host: Vec<_> = c
        .host_events()
        .iter()
        .map(|e| {
            (
                c.name(e.name),
                e.kind,
                e.start.0,
                e.dur.0,
                c.thread(e.thread).tid,
            )
        })
        .collect();
    assert_eq!(
        host,
        [
            ("phase", HostKind::Annotation, 500, 4500, 4243),
            ("hipLaunchKernel", HostKind::Launch, 1000, 500, 4243),
            ("hipMemcpyAsync", HostKind::Launch, 2000, 200, 4243),
            ("hsa_signal_wait", HostKind::Runtime, 2300, 100, 4243),
        ]
    );
    assert_eq!(c.diagnostics().count("activity-without-launch"), 1);

    let other = &loaded[1].capture;
    let kernels: Vec<_> = other
        .activities()
        .iter()
        .map(|a| {
            (
                other.name(a.name),
                other.stream(a.stream).ordinal,
                a.launch().is_some(),
            )
        })
        .collect();
    assert_eq!(kernels, [("reduce_sum", 2, true)]);
    assert!(other.diagnostics().get("activity-without-launch").is_none());
}
