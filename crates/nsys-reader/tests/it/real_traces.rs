//! The shared Nsight Systems exports (`$TRACEWISE_TRACES/nsys`), checked against plain
//! SQL over the same files and against the `nsys stats`-derived CSV of one capture.

use std::path::{Path, PathBuf};

use nsys_reader::{Config, Process, load};
use rusqlite::{Connection, OpenFlags};
use trace_model::{ActivityKind, HostKind, MemcpyDirection};

/// Every `*.sqlite` below `$TRACEWISE_TRACES/nsys`, sorted; `None` (skipped) when unset.
fn exports(test: &str) -> Option<Vec<PathBuf>> {
    let dir = test_support::traces_dir(test)?.join("nsys");
    let mut out = Vec::new();
    for folder in std::fs::read_dir(&dir).expect("the nsys folder is readable") {
        let folder = folder.expect("entry").path();
        let Ok(files) = std::fs::read_dir(&folder) else {
            continue;
        };
        for file in files {
            let file = file.expect("entry").path();
            if file.extension().is_some_and(|e| e == "sqlite") {
                out.push(file);
            }
        }
    }
    out.sort();
    assert!(
        out.len() >= 6,
        "{} exports under {}",
        out.len(),
        dir.display()
    );
    Some(out)
}

fn open(path: &Path) -> Connection {
    Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).expect("the export opens")
}

/// `SELECT count(*)` of a table, 0 when the table is absent.
fn sql_count(db: &Connection, table: &str) -> u64 {
    let exists: i64 = db
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [table],
            |r| r.get(0),
        )
        .unwrap();
    if exists == 0 {
        return 0;
    }
    let n: i64 = db
        .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap();
    n as u64
}

fn kind_count(processes: &[Process], kind: ActivityKind) -> u64 {
    processes
        .iter()
        .map(|p| {
            p.capture
                .activities()
                .iter()
                .filter(|a| a.kind == kind)
                .count() as u64
        })
        .sum()
}

#[test]
fn counts_and_links_equal_plain_sql() {
    let Some(files) = exports("nsys counts and links") else {
        return;
    };
    let (mut kernels_seen, mut exports_read) = (0, 0);
    for path in &files {
        let db = open(path);
        let kernels = sql_count(&db, "CUPTI_ACTIVITY_KIND_KERNEL");
        let memcpys = sql_count(&db, "CUPTI_ACTIVITY_KIND_MEMCPY");
        let memsets = sql_count(&db, "CUPTI_ACTIVITY_KIND_MEMSET");
        let runtime = sql_count(&db, "CUPTI_ACTIVITY_KIND_RUNTIME");
        let shown = path.display();
        let processes = match load(path, &Config::default()) {
            Ok(processes) => processes,
            Err(e) if e.is_nothing_to_report() => {
                assert_eq!(
                    (kernels, memcpys, memsets, runtime),
                    (0, 0, 0, 0),
                    "{shown}: {e}"
                );
                continue;
            }
            Err(e) => panic!("{shown}: {e}"),
        };
        exports_read += 1;
        assert_eq!(
            kind_count(&processes, ActivityKind::Kernel),
            kernels,
            "{shown}: kernels"
        );
        assert_eq!(
            kind_count(&processes, ActivityKind::Memcpy),
            memcpys,
            "{shown}: memcpys"
        );
        assert_eq!(
            kind_count(&processes, ActivityKind::Memset),
            memsets,
            "{shown}: memsets"
        );
        let calls: u64 = processes
            .iter()
            .map(|p| {
                let events = p.capture.host_events().iter();
                events
                    .filter(|e| matches!(e.kind, HostKind::Launch | HostKind::Runtime))
                    .count() as u64
            })
            .sum();
        assert_eq!(calls, runtime, "{shown}: runtime calls");
        kernels_seen += kernels;

        // Kernels with a runtime call of their correlation id in their own process, by SQL;
        // each must be linked to a call of that id.
        let joinable: i64 = db
            .query_row(
                "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE EXISTS (
                   SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r
                   WHERE r.correlationId = k.correlationId
                     AND (r.globalTid >> 24) = (k.globalPid >> 24))",
                [],
                |r| r.get(0),
            )
            .unwrap_or(0);
        let mut linked = 0;
        for p in &processes {
            let c = &p.capture;
            for a in c
                .activities()
                .iter()
                .filter(|a| a.kind == ActivityKind::Kernel)
            {
                if let Some(launch) = a.launch() {
                    let launch = c.host_event(launch);
                    assert_eq!(launch.correlation(), a.correlation(), "{shown}");
                    assert_eq!(launch.kind, HostKind::Launch, "{shown}");
                    linked += 1;
                }
            }
        }
        assert_eq!(linked, joinable, "{shown}: kernels linked to their launch");
        let unlinked = kernels as i64 - linked;
        eprintln!(
            "{shown}: {kernels} kernels, {memcpys} memcpys, {memsets} memsets, {runtime} runtime calls; \
             {unlinked} kernels without a launch ({:.1}%)",
            100.0 * unlinked as f64 / kernels.max(1) as f64
        );
    }
    // MANIFEST.md: 2 + 19 + 19 + 1312 + 5 + 6 kernels in the six exports with CUDA tables
    // (the Extra-P export of an old schema among them).
    assert_eq!(exports_read, 6);
    assert!(kernels_seen >= 1363, "{kernels_seen} kernels");
}

/// One row of `cloverleaf_gpu_trace.csv`: an `Enter` event with its matching `Leave`.
struct CsvActivity {
    name: String,
    stream: i64,
    kind: String,
    bytes: Option<u64>,
    start: i64,
    end: i64,
}

/// The CSV lists each GPU activity as an `Enter` and a `Leave` row (pipit's layout of
/// `nsys stats --report cuda_gpu_trace`): name (the short kernel name, or the copy kind),
/// streamId, type (`kernel` or `CUDA_MEMCPY_KIND_*`), bytes, and the two timestamps in ns
/// on the export's own axis (`Timestamp (ns)`, `_matching_timestamp`).
fn read_gpu_trace_csv(path: &Path) -> Vec<CsvActivity> {
    let mut reader = csv::Reader::from_path(path).expect("the CSV opens");
    let headers = reader.headers().unwrap().clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("column {name}"))
    };
    let (name, stream, kind, bytes) = (col("Name"), col("streamId"), col("type"), col("bytes"));
    let (event, ts, matching) = (
        col("Event Type"),
        col("Timestamp (ns)"),
        col("_matching_timestamp"),
    );
    let mut out = Vec::new();
    for record in reader.records() {
        let r = record.unwrap();
        if &r[event] != "Enter" {
            continue;
        }
        out.push(CsvActivity {
            name: r[name].to_string(),
            stream: r[stream].parse().unwrap(),
            kind: r[kind].to_string(),
            bytes: r[bytes].parse().ok(),
            start: r[ts].parse().unwrap(),
            end: r[matching].parse().unwrap(),
        });
    }
    out
}

#[test]
fn cloverleaf_matches_the_gpu_trace_csv_row_for_row() {
    let Some(files) = exports("nsys cloverleaf CSV") else {
        return;
    };
    let path = files
        .iter()
        .find(|p| p.to_string_lossy().contains("pipit-cloverleaf-a100"))
        .expect("the cloverleaf export");
    let mut expect = read_gpu_trace_csv(&path.with_file_name("cloverleaf_gpu_trace.csv"));
    expect.sort_by_key(|a| (a.start, a.stream));
    assert!(expect.len() >= 1591, "{} CSV rows", expect.len());
    let processes = load(path, &Config::default()).unwrap();
    assert_eq!(processes.len(), 1);
    let c = &processes[0].capture;
    let mut got: Vec<_> = c.activities().iter().collect();
    got.sort_by_key(|a| (a.start, c.stream(a.stream).ordinal));
    assert_eq!(got.len(), expect.len());
    // The CSV has no device column: every activity of this rank ran on device 0
    // (`SELECT DISTINCT deviceId` of both tables), an A100 by TARGET_INFO_GPU.
    let db = open(path);
    let devices: Vec<i64> = db
        .prepare(
            "SELECT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL UNION SELECT deviceId FROM CUPTI_ACTIVITY_KIND_MEMCPY",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(devices, [0]);
    for (i, (a, e)) in got.iter().zip(&expect).enumerate() {
        let stream = c.stream(a.stream);
        let device = c.device(stream.device);
        let at = format!("row {i} ({} at {})", e.name, e.start);
        assert_eq!((a.start.0, a.end().0), (e.start, e.end), "{at}");
        assert_eq!(stream.ordinal, e.stream, "{at}");
        assert_eq!(device.ordinal, 0, "{at}");
        assert_eq!(
            device.properties.name.as_deref(),
            Some("NVIDIA A100-SXM4-80GB"),
            "{at}"
        );
        match e.kind.as_str() {
            "kernel" => {
                assert_eq!(a.kind, ActivityKind::Kernel, "{at}");
                // Our name is the demangled one; the CSV's is nsys's short name.
                assert!(c.name(a.name).contains(&e.name), "{at}: {}", c.name(a.name));
            }
            copy => {
                assert_eq!(a.kind, ActivityKind::Memcpy, "{at}");
                let direction = match copy {
                    "CUDA_MEMCPY_KIND_HTOD" => MemcpyDirection::HostToDevice,
                    "CUDA_MEMCPY_KIND_DTOH" => MemcpyDirection::DeviceToHost,
                    other => panic!("{at}: copy kind {other}"),
                };
                assert_eq!(a.class, trace_model::KernelClass::Memcpy(direction), "{at}");
                assert_eq!(c.activity_bytes(a), e.bytes, "{at}");
            }
        }
    }
}

#[test]
fn no_cuda_tables_and_the_older_schema() {
    let Some(files) = exports("nsys edge exports") else {
        return;
    };
    let find = |folder: &str| {
        files
            .iter()
            .find(|p| p.to_string_lossy().contains(folder))
            .unwrap_or_else(|| panic!("{folder}"))
    };
    // No CUDA tables at all: nothing to report, and the message says why.
    let path = find("jacc-4xa100-no-cuda-tables");
    let err = load(path, &Config::default()).unwrap_err();
    assert!(err.is_nothing_to_report(), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("report1.sqlite") && text.contains("no CUDA tables"),
        "{text}"
    );

    // Schema 2.9.1 (EXPORT_META_DATA): read, with the schema said in the diagnostics.
    let path = find("pipit-saxpy-mpi-a100");
    let processes = load(path, &Config::default()).unwrap();
    assert_eq!(processes.len(), 1);
    let p = &processes[0];
    let c = &p.capture;
    let old = c.diagnostics().get("nsys-old-export-schema").expect("said");
    assert!(old.message.contains("2.9.1"), "{}", old.message);
    assert!(
        old.first.ends_with("table EXPORT_META_DATA"),
        "{}",
        old.first
    );
    // nsys's MPI tracing named the main thread `MPI Rank 0`.
    assert_eq!((p.pid, p.rank), (1230493, Some(0)));
    assert_eq!(
        c.meta().producer.as_deref(),
        Some("Nsight Systems 2022.2.1.31 (export schema 2.9.1)")
    );
    let device = &c.devices()[0];
    assert_eq!(
        device.properties.name.as_deref(),
        Some("NVIDIA A100-SXM4-40GB")
    );
    assert_eq!(device.properties.multiprocessors, Some(108));
    assert_eq!(device.properties.compute_capability, Some((8, 0)));
    // Its NVTX ranges (22 push/pop ranges in MANIFEST.md's 24 events: a thread name and a
    // domain make the other two) are annotations.
    let annotations = c
        .host_events()
        .iter()
        .filter(|e| e.kind == HostKind::Annotation)
        .count();
    assert_eq!(annotations, 22);

    // An older schema still (no export metadata table; TARGET_INFO_GPU has `deviceId`,
    // not `id`; an extra Extra-P table): read, its GPU named from TARGET_INFO_GPU and
    // figured from TARGET_INFO_CUDA_GPU.
    let path = find("nsys-a100pcie-extrap-exgpu");
    let processes = load(path, &Config::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(processes.len(), 1);
    let c = &processes[0].capture;
    let kernels = c
        .activities()
        .iter()
        .filter(|a| a.kind == ActivityKind::Kernel)
        .count();
    let calls = c
        .host_events()
        .iter()
        .filter(|e| matches!(e.kind, HostKind::Launch | HostKind::Runtime))
        .count();
    assert_eq!((kernels, calls), (6, 36));
    assert!(c.diagnostics().get("nsys-no-export-metadata").is_some());
    assert!(c.diagnostics().get("nsys-no-nvtx-table").is_some());
    let device = &c.devices()[0];
    assert_eq!(device.ordinal, 0);
    assert_eq!(device.properties.name.as_deref(), Some("A100-PCIE-40GB"));
    assert_eq!(device.properties.compute_capability, Some((8, 0)));
    assert_eq!(device.properties.multiprocessors, Some(108));
}

/// A table beyond kernels, runtime calls, copies and sets that lacks a column the reader
/// needs is passed over with a diagnostic naming what that costs, never a refusal.
#[test]
fn an_optional_table_without_its_columns_is_a_diagnostic() {
    let Some(files) = exports("nsys optional tables") else {
        return;
    };
    let src = files
        .iter()
        .find(|p| p.to_string_lossy().contains("nvfuser-h200-matmul"))
        .expect("nvfuser-h200-matmul");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.sqlite");
    std::fs::copy(src, &path).unwrap();
    let db = rusqlite::Connection::open(&path).unwrap();
    db.execute_batch(
        "ALTER TABLE TARGET_INFO_GPU DROP COLUMN id;
         ALTER TABLE ThreadNames DROP COLUMN nameId;
         ALTER TABLE NVTX_EVENTS RENAME COLUMN eventType TO kind;",
    )
    .unwrap();
    drop(db);
    let processes = load(&path, &Config::default()).unwrap_or_else(|e| panic!("{e}"));
    let c = &processes[0].capture;
    let kernels = c
        .activities()
        .iter()
        .filter(|a| a.kind == ActivityKind::Kernel)
        .count();
    assert_eq!(kernels, 19);
    let unread = c.diagnostics().get("nsys-table-unread").expect("said");
    assert_eq!(unread.count, 3, "{}", unread.message);
    for want in [
        "ThreadNames (no column nameId: no thread names",
        "TARGET_INFO_GPU (no column deviceId: no GPU names",
        "NVTX_EVENTS (no column eventType: no NVTX ranges",
    ] {
        assert!(unread.message.contains(want), "{want}: {}", unread.message);
    }
    // No NVTX ranges were read.
    assert!(
        !c.host_events()
            .iter()
            .any(|e| e.kind == HostKind::Annotation)
    );
}

#[test]
fn devices_ranks_and_metadata_of_the_nvfuser_exports() {
    let Some(files) = exports("nsys nvfuser metadata") else {
        return;
    };
    let path = files
        .iter()
        .find(|p| p.to_string_lossy().contains("nvfuser-8xh100-matmul"))
        .expect("the 8xH100 export");
    let processes = load(path, &Config::default()).unwrap();
    assert_eq!(processes.len(), 1);
    let p = &processes[0];
    // `RANK="0"` in the launched process's environment (META_DATA_CAPTURE).
    assert_eq!((p.pid, p.rank), (3410277, Some(0)));
    let c = &p.capture;
    assert_eq!(
        c.meta().producer.as_deref(),
        Some("Nsight Systems 2024.6.2.25 (export schema 3.16.1)")
    );
    assert_eq!(c.meta().base_time_ns, Some(1733861216912637995));
    assert_eq!(c.devices().len(), 1, "kernels ran on one of the eight GPUs");
    let d = &c.devices()[0].properties;
    assert_eq!(d.name.as_deref(), Some("NVIDIA H100 80GB HBM3"));
    assert_eq!(
        (d.multiprocessors, d.clock_rate_khz),
        (Some(132), Some(1_980_000))
    );
    assert_eq!(d.compute_capability, Some((9, 0)));
    assert_eq!(d.memory_bandwidth_bytes_per_s, Some(3_352_320_000_000.0));
    let nvtx = c
        .host_events()
        .iter()
        .filter(|e| e.kind == HostKind::Annotation)
        .count();
    assert_eq!(
        nvtx, 1054,
        "MANIFEST.md: 1054 NVTX_EVENTS, all push/pop ranges"
    );
}
