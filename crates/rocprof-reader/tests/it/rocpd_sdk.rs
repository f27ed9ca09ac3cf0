//! rocpd databases made from rocprofiler-sdk's own schema files (vendored in
//! `testdata/rocprof/rocpd-sdk/`, run as rocprofv3 runs them: `{{uuid}}` and `{{guid}}`
//! substituted), with known dispatches, copies and regions in two runs (two uuids, two
//! processes); and bad input: a wrong schema version, a truncated file.

use std::path::Path;

use rocprof_reader::{Kind, detect, load};
use rusqlite::Connection;
use trace_model::{ActivityKind, HostKind, KernelClass, MemcpyDirection};

fn schema(file: &str) -> String {
    let path = test_support::workspace_root()
        .join("testdata/rocprof/rocpd-sdk")
        .join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Runs the schema files for one run (`uuid`); the views only for the first, as
/// rocprofv3's `CREATE VIEW IF NOT EXISTS` leaves them naming the first run's tables.
fn create_run(conn: &Connection, uuid: &str, views: bool) {
    let mut files = vec!["rocpd_tables.sql"];
    if views {
        files.extend(["rocpd_views.sql", "data_views.sql", "summary_views.sql"]);
    }
    for file in files {
        let sql = schema(file)
            .replace("{{uuid}}", uuid)
            .replace("{{guid}}", &format!("guid{uuid}"));
        conn.execute_batch(&sql)
            .unwrap_or_else(|e| panic!("{file} for {uuid}: {e}"));
    }
}

const RUN_A: &str = "_0198a1b2_c3d4";
const RUN_B: &str = "_0198a1b2_ffff";

/// Run A, process 4242 (`python3 train.py`), thread 4243: `hipLaunchKernel` (corr 11,
/// 1000..1500), `hipMemcpyAsync` (corr 12, 2000..2200), a marker range `step` (corr 14,
/// 500..9000); kernel `gemm_kernel` (corr 11, 3000..7000) on GPU agent 2 (type index 0)
/// stream 1, kernel `relu` (corr 13, 7100..7300) on the same stream, not launched by a
/// recorded call; an HtoD copy (corr 12, 2500..2900, 1 MiB) from the CPU agent to agent 2.
/// Run B, process 5151 (`./bench`), thread 5151: `hipLaunchKernel` (corr 21, 100..200);
/// kernel `reduce_sum` (corr 21, 300..450) on its GPU agent (type index 1) stream 1.
fn fill(conn: &Connection) {
    let a = r#"
INSERT INTO rocpd_info_node{u} (id, hash, machine_id, hostname) VALUES (1, 7, 'm', 'host');
INSERT INTO rocpd_info_process{u} (id, nid, pid, command) VALUES (1, 1, 4242, 'python3 train.py');
INSERT INTO rocpd_info_thread{u} (id, nid, pid, tid, name) VALUES (1, 1, 1, 4243, 'main');
INSERT INTO rocpd_info_agent{u} (id, nid, pid, type, absolute_index, logical_index, type_index, name, product_name)
    VALUES (1, 1, 1, 'CPU', 0, 0, 0, 'cpu', 'AMD EPYC'),
           (2, 1, 1, 'GPU', 2, 2, 0, 'gfx950', 'AMD Instinct MI355X');
INSERT INTO rocpd_info_queue{u} (id, nid, pid, name) VALUES (1, 1, 1, 'queue 1');
INSERT INTO rocpd_info_stream{u} (id, nid, pid, name) VALUES (1, 1, 1, 'stream 1');
INSERT INTO rocpd_info_code_object{u} (id, nid, pid, agent_id, storage_type) VALUES (1, 1, 1, 2, 'FILE');
INSERT INTO rocpd_info_kernel_symbol{u} (id, nid, pid, code_object_id, kernel_name, display_name)
    VALUES (1, 1, 1, 1, '_Z11gemm_kernelv', 'gemm_kernel'), (2, 1, 1, 1, '_Z4reluv', 'relu');
INSERT INTO rocpd_string{u} (id, string) VALUES
    (1, 'hipLaunchKernel'), (2, 'hipMemcpyAsync'), (3, 'step'),
    (4, 'HIP_RUNTIME_API_EXT'), (5, 'MARKER_CORE_API'), (6, 'KERNEL_DISPATCH'),
    (7, 'MEMORY_COPY'), (8, 'MEMORY_COPY_HOST_TO_DEVICE');
INSERT INTO rocpd_event{u} (id, category_id, correlation_id) VALUES
    (1, 4, 11), (2, 4, 12), (3, 5, 14), (4, 6, 11), (5, 6, 13), (6, 7, 12);
INSERT INTO rocpd_region{u} (id, nid, pid, tid, start, end, name_id, event_id) VALUES
    (1, 1, 1, 1, 1000, 1500, 1, 1), (2, 1, 1, 1, 2000, 2200, 2, 2), (3, 1, 1, 1, 500, 9000, 3, 3);
INSERT INTO rocpd_kernel_dispatch{u} (id, nid, pid, tid, agent_id, kernel_id, dispatch_id, queue_id, stream_id,
    start, end, workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, grid_size_z,
    region_name_id, event_id)
    VALUES (1, 1, 1, 1, 2, 1, 1, 1, 1, 3000, 7000, 256, 1, 1, 65536, 1, 1, 3, 4),
           (2, 1, 1, 1, 2, 2, 2, 1, 1, 7100, 7300, 256, 1, 1, 1024, 1, 1, 3, 5);
INSERT INTO rocpd_memory_copy{u} (id, nid, pid, tid, start, end, name_id, dst_agent_id, src_agent_id, size,
    queue_id, stream_id, event_id)
    VALUES (1, 1, 1, 1, 2500, 2900, 8, 2, 1, 1048576, 1, 1, 6);
"#;
    let b = r#"
INSERT INTO rocpd_info_node{u} (id, hash, machine_id, hostname) VALUES (1, 7, 'm', 'host');
INSERT INTO rocpd_info_process{u} (id, nid, pid, command) VALUES (1, 1, 5151, './bench');
INSERT INTO rocpd_info_thread{u} (id, nid, pid, tid) VALUES (1, 1, 1, 5151);
INSERT INTO rocpd_info_agent{u} (id, nid, pid, type, absolute_index, logical_index, type_index, name, product_name)
    VALUES (1, 1, 1, 'GPU', 3, 3, 1, 'gfx950', 'AMD Instinct MI355X');
INSERT INTO rocpd_info_queue{u} (id, nid, pid) VALUES (1, 1, 1);
INSERT INTO rocpd_info_stream{u} (id, nid, pid) VALUES (1, 1, 1);
INSERT INTO rocpd_info_code_object{u} (id, nid, pid, agent_id, storage_type) VALUES (1, 1, 1, 1, 'FILE');
INSERT INTO rocpd_info_kernel_symbol{u} (id, nid, pid, code_object_id, kernel_name, display_name)
    VALUES (1, 1, 1, 1, '_Z10reduce_sumv', 'reduce_sum');
INSERT INTO rocpd_string{u} (id, string) VALUES (1, 'hipLaunchKernel'), (2, 'HIP_RUNTIME_API_EXT'), (3, 'KERNEL_DISPATCH');
INSERT INTO rocpd_event{u} (id, category_id, correlation_id) VALUES (1, 2, 21), (2, 3, 21);
INSERT INTO rocpd_region{u} (id, nid, pid, tid, start, end, name_id, event_id) VALUES (1, 1, 1, 1, 100, 200, 1, 1);
INSERT INTO rocpd_kernel_dispatch{u} (id, nid, pid, tid, agent_id, kernel_id, dispatch_id, queue_id, stream_id,
    start, end, workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, grid_size_z, event_id)
    VALUES (1, 1, 1, 1, 1, 1, 1, 1, 1, 300, 450, 128, 1, 1, 1024, 1, 1, 2);
"#;
    conn.execute_batch(&a.replace("{u}", RUN_A)).unwrap();
    conn.execute_batch(&b.replace("{u}", RUN_B)).unwrap();
}

fn make(path: &Path) {
    let conn = Connection::open(path).unwrap();
    create_run(&conn, RUN_A, true);
    create_run(&conn, RUN_B, false);
    fill(&conn);
}

#[test]
fn the_sdk_schema_with_two_runs_gives_exactly_the_known_work() {
    let dir = crate::scratch();
    let path = dir.path().join("4242_results.db");
    make(&path);
    assert_eq!(detect(&path), Some(Kind::Rocpd));
    let loaded = load(&path).unwrap_or_else(|e| panic!("{e}"));
    let who: Vec<_> = loaded.iter().map(|p| (p.pid, p.name.as_deref())).collect();
    assert_eq!(
        who,
        [
            (Some(4242), Some("python3 train.py")),
            (Some(5151), Some("./bench"))
        ]
    );
    let c = &loaded[0].capture;
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
                c.name(a.name).to_owned(),
                a.kind,
                a.start.0,
                a.dur.0,
                c.device(s.device).ordinal,
                a.launch().map(|l| c.name(c.host_event(l).name).to_owned()),
            )
        })
        .collect();
    let s = |x: &str| x.to_owned();
    assert_eq!(
        activities,
        [
            (
                s("MEMORY_COPY_HOST_TO_DEVICE"),
                ActivityKind::Memcpy,
                2500,
                400,
                0,
                Some(s("hipMemcpyAsync"))
            ),
            (
                s("gemm_kernel"),
                ActivityKind::Kernel,
                3000,
                4000,
                0,
                Some(s("hipLaunchKernel"))
            ),
            (s("relu"), ActivityKind::Kernel, 7100, 200, 0, None),
        ]
    );
    assert_eq!(
        c.activities()[0].class,
        KernelClass::Memcpy(MemcpyDirection::HostToDevice)
    );
    let devices: Vec<_> = c
        .devices()
        .iter()
        .map(|d| (d.ordinal, d.properties.name.as_deref()))
        .collect();
    assert_eq!(devices, [(0, Some("AMD Instinct MI355X"))]);
    let host: Vec<_> = c
        .host_events()
        .iter()
        .map(|e| (c.name(e.name), e.kind, e.start.0, c.thread(e.thread).tid))
        .collect();
    assert_eq!(
        host,
        [
            ("step", HostKind::Annotation, 500, 4243),
            ("hipLaunchKernel", HostKind::Launch, 1000, 4243),
            ("hipMemcpyAsync", HostKind::Launch, 2000, 4243),
        ]
    );

    // The second run, a capture of its own, on its own GPU.
    let other = &loaded[1].capture;
    let kernels: Vec<_> = other
        .activities()
        .iter()
        .map(|a| {
            let device = other.device(other.stream(a.stream).device).ordinal;
            (other.name(a.name), a.dur.0, device, a.launch().is_some())
        })
        .collect();
    assert_eq!(kernels, [("reduce_sum", 150, 1, true)]);

    // The same counts as rocprofv3's own views of the first run (`kernels`,
    // `memory_copies`, `regions`), and as plain SQL over the second run's table.
    let db = Connection::open(&path).unwrap();
    let count = |sql: &str| -> (i64, i64) {
        db.query_row(sql, [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    };
    let kernel_time = |c: &trace_model::Capture| -> (i64, i64) {
        let k = c
            .activities()
            .iter()
            .filter(|a| a.kind == ActivityKind::Kernel);
        k.fold((0, 0), |(n, t), a| (n + 1, t + a.dur.0))
    };
    assert_eq!(
        kernel_time(c),
        count("SELECT count(*), sum(duration) FROM kernels")
    );
    assert_eq!(
        kernel_time(other),
        count(&format!(
            "SELECT count(*), sum(end - start) FROM rocpd_kernel_dispatch{RUN_B}"
        ))
    );
    let copies = c
        .activities()
        .iter()
        .filter(|a| a.kind == ActivityKind::Memcpy);
    assert_eq!(
        (copies.count() as i64, 0),
        (count("SELECT count(*), 0 FROM memory_copies").0, 0)
    );
    assert_eq!(
        c.host_events().len() as i64,
        count("SELECT count(*), 0 FROM regions").0
    );
}

#[test]
fn a_wrong_schema_version_and_a_truncated_database_name_the_file_and_what_is_wrong() {
    let dir = crate::scratch();
    let path = dir.path().join("9_results.db");
    make(&path);
    {
        let db = Connection::open(&path).unwrap();
        db.execute_batch(&format!(
            "UPDATE rocpd_metadata{RUN_A} SET value = '2' WHERE tag = 'schema_version';"
        ))
        .unwrap();
    }
    let err = load(&path).expect_err("schema version 2").to_string();
    assert!(err.starts_with(&path.display().to_string()), "{err}");
    assert!(
        err.contains(&format!("rocpd_metadata{RUN_A}")) && err.contains("schema_version 2"),
        "{err}"
    );

    // Cut at half its length: the header's page count says how long it should be.
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut_results.db");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let err = rocprof_reader::load_as(&cut, Kind::Rocpd)
        .expect_err("truncated")
        .to_string();
    assert!(err.starts_with(&cut.display().to_string()), "{err}");
    assert!(err.contains("truncated"), "{err}");
}
