//! Small Nsight Systems exports and ROCm profiler captures made in code: the
//! `testdata/nsys` and `testdata/rocprof` fixtures of `cargo xtask fixtures` (valid ones,
//! and the malformed ones every tool's malformed-input test runs over), which are also the
//! seeds of `cargo xtask fuzz`'s `nsys` and `rocprof` targets.
//!
//! SQLite files are written with 512-byte pages (so that a dozen tables stay a few KiB)
//! by the bundled SQLite, which writes the same bytes for the same statements: `fixtures
//! --check` compares them like any other fixture. A newer bundled SQLite may change the
//! version field of the header; `cargo xtask fixtures` then rewrites them.

use std::path::{Path, PathBuf};

use prost::Message;
use rocprof_reader::proto::{
    DebugAnnotation, EventCategory, EventName, InternedData, ProcessDescriptor, ThreadDescriptor,
    Trace, TracePacket, TrackDescriptor, TrackEvent, trace_packet::SequenceFlags,
    track_event::Type,
};

/// The tables of an export, as nsys-reader's tests declare them.
const NSYS_SCHEMA: &str = include_str!("../../testdata/nsys/export_schema.sql");
/// rocpd's tables (schema version 3) with `{uuid}` for the per-database suffix.
const ROCPD_SCHEMA: &str = include_str!("../../testdata/rocprof/rocpd_schema_v3.sql");
const ROCPD_UUID: &str = "_00000000feed";

/// Every fixture file, by path below the workspace root, with the `.md` that says how it
/// was made and what reading it gives.
pub(crate) fn corpus_files() -> Result<Vec<(PathBuf, Vec<u8>)>, String> {
    let mut out = Vec::new();
    let mut add = |rel: &str, bytes: Vec<u8>, about: &str| {
        out.push((PathBuf::from(rel), bytes));
        if !about.is_empty() {
            let name = Path::new(rel)
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or(rel);
            let md = format!(
                "# {name}\n{about}\n\nMade by `cargo xtask fixtures` (`xtask/src/synth_gpu.rs`); \
                 `cargo xtask fixtures --check` fails when it would change.\n"
            );
            out.push((PathBuf::from(format!("{rel}.md")), md.into_bytes()));
        }
    };

    let export = nsys_export()?;
    add(
        "testdata/nsys/ok/small.sqlite",
        export.clone(),
        "An Nsight Systems export (schema 3.16 tables of `testdata/nsys/export_schema.sql`) of \
         one process (pid 100, thread 101 `main`) on one NVIDIA H200: two `ProfilerStep#N` \
         NVTX ranges, each with two kernel launches, an async memcpy (HtoD, 4 KiB) and \
         memset, and a synchronisation; every kernel, copy and set has the correlation id of \
         its runtime call.",
    );
    add(
        "testdata/nsys/err/truncated.sqlite",
        export[..export.len() / 2].to_vec(),
        "`testdata/nsys/ok/small.sqlite` cut to its first half, as a copy or download cut \
         short. Expected: `truncated: the file ends at byte N, but its SQLite header says it \
         has M bytes` (SQLite itself refuses such a file as a malformed disk image when it \
         reads the schema).",
    );
    add(
        "testdata/nsys/err/wrong_column_type.sqlite",
        nsys_wrong_column_type()?,
        "`testdata/nsys/ok/small.sqlite` with the text `soon` in `start` of row 2 of \
         `CUPTI_ACTIVITY_KIND_KERNEL`. Expected: `table CUPTI_ACTIVITY_KIND_KERNEL, row 2, \
         column start: text \"soon\" where an integer was expected`.",
    );
    add(
        "testdata/nsys/err/not_an_export.sqlite",
        sqlite_bytes(
            "BEGIN;
             CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT NOT NULL, placed INTEGER);
             INSERT INTO orders VALUES (1, 'gpu', 1733877925), (2, 'cable', 1733877926);
             COMMIT;",
        )?,
        "A SQLite database of one table `orders`, none of an Nsight Systems export's. \
         Expected: `a SQLite file, but not an Nsight Systems export`, naming the tables \
         looked for.",
    );

    let trace = perfetto_trace();
    add(
        "testdata/rocprof/ok/small.pftrace",
        trace.clone(),
        "A Perfetto trace laid out as rocprofv3 writes one (`--output-format pftrace`): a \
         process (pid 300) and thread (301) track with `hip_api` slices (two \
         `hipLaunchKernel`, one `hipMemcpyAsync`) and a `marker_api` range, a `COMPUTE AGENT \
         [1] STREAM [0]` track with two `kernel_dispatch` slices and a `COPY to AGENT [1] \
         STREAM [0]` track with one `memory_copy` slice, joined by `corr_id` annotations; \
         names interned in sequence 1.",
    );
    let packets = packet_offsets(&trace);
    let cut = packets[packets.len() - 2] + 3;
    add(
        "testdata/rocprof/err/truncated.pftrace",
        trace[..cut].to_vec(),
        &format!(
            "`testdata/rocprof/ok/small.pftrace` cut 3 bytes into its last-but-one packet \
             (at byte {}). Expected: an error naming the file, the packet and its byte \
             offset (the packet's length runs past the end of the file).",
            packets[packets.len() - 2]
        ),
    );
    let at = packets[3];
    let mut bad = trace[..at + 1].to_vec();
    bad.extend([0xff; 11]);
    bad.extend_from_slice(&trace[at + 2..]);
    add(
        "testdata/rocprof/err/bad_varint.pftrace",
        bad,
        &format!(
            "`testdata/rocprof/ok/small.pftrace` whose fourth packet (at byte {at}) has a \
             length varint of 11 continuation bytes (a varint holds at most 10). Expected: \
             an error naming the file, byte {at} and packet 3."
        ),
    );
    add(
        "testdata/rocprof/err/missing_column_kernel_trace.csv",
        "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Kernel_Name\",\"Start_Timestamp\",\"End_Timestamp\"\n\
         \"KERNEL_DISPATCH\",1,1,\"gemm_kernel\",1000,2000\n"
            .as_bytes()
            .to_vec(),
        "",
    );
    add(
        "testdata/rocprof/err/bad_number_kernel_trace.csv",
        format!(
            "{KERNEL_HEADER}\n\
             \"KERNEL_DISPATCH\",1,0,0,301,1,1,\"gemm_kernel\",1,10000,14000,256,1,1,65536,1,1\n\
             \"KERNEL_DISPATCH\",1,0,0,301,2,2,\"relu_kernel\",2,15000.5,16000,64,1,1,4096,1,1\n"
        )
        .into_bytes(),
        "",
    );
    add(
        "testdata/rocprof/err/other_schema.db",
        roctracer_rocpd()?,
        "A SQLite database of the older roctracer `rocpd` schema (`rocpd_string`, \
         `rocpd_op`, `rocpd_api`, `rocpd_api_ops`, `rocpd_kernelapi`, `rocpd_copyapi`, \
         `rocpd_metadata`; ROCm 5's rocpd_tools), not rocprofv3's rocpd (schema 3). \
         Expected: an error naming the file and the first table of schema 3 it lacks.",
    );
    add(
        "testdata/rocprof/err/README.md",
        ROCPROF_ERR_README.as_bytes().to_vec(),
        "",
    );

    for (name, text) in rocprof_csv_capture() {
        add(
            &format!("testdata/rocprof/ok/csv/{name}"),
            text.into_bytes(),
            "",
        );
    }
    add(
        "testdata/rocprof/ok/v1/results.csv",
        V1_RESULTS_CSV.as_bytes().to_vec(),
        "",
    );
    add(
        "testdata/rocprof/ok/v1/results.db",
        v1_results_db()?,
        "rocprof v1's `results.db` of the same three dispatches as `results.csv` beside it \
         (table `KERN`, columns as rocprof v1 declares them).",
    );
    add(
        "testdata/rocprof/ok/rocpd/300_results.db",
        rocpd_db()?,
        "A rocpd database (rocprofv3's schema 3 tables of \
         `testdata/rocprof/rocpd_schema_v3.sql`, read through unsuffixed views) of one \
         process (pid 300, thread 301) on one MI300X: two `hipLaunchKernel` calls and their \
         kernels on stream 1, correlation ids 1 and 2.",
    );
    add(
        "testdata/rocprof/ok/README.md",
        ROCPROF_OK_README.as_bytes().to_vec(),
        "",
    );
    Ok(out)
}

const ROCPROF_ERR_README: &str = "# ROCm profiler inputs that must fail\n\
Each file here gives an error naming the file and the place (byte offset and packet, CSV \
line and column, or table), never a panic; rocprof-reader's `fixtures` test pins the \
messages and every tool runs over them (`test_support::run_on_malformed`). All are made by \
`cargo xtask fixtures` (`xtask/src/synth_gpu.rs`); the binary ones have a `.md` each.\n\n\
- `missing_column_kernel_trace.csv`: a rocprofv3 kernel trace without `Correlation_Id` \
(line 1, column Correlation_Id).\n\
- `bad_number_kernel_trace.csv`: `15000.5` as a `Start_Timestamp` (line 3, column \
Start_Timestamp).\n";

const ROCPROF_OK_README: &str = "# Small ROCm profiler captures\n\
Made by `cargo xtask fixtures` (`xtask/src/synth_gpu.rs`): the seeds of `cargo xtask fuzz \
--target rocprof` and inputs for end-to-end runs that need no real trace.\n\n\
- `small.pftrace`, `rocpd/300_results.db`, `v1/results.db`: see their `.md`.\n\
- `csv/`: a rocprofv3 CSV capture (`run_` prefix) of pid 300: kernel, HIP API and \
memory-copy traces, the kernels and the copy joined to their API calls by \
`Correlation_Id`.\n\
- `v1/results.csv`: rocprof v1's kernel trace of three dispatches on gpu-id 8.\n";

const KERNEL_HEADER: &str = "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\",\"Grid_Size_Z\"";

const V1_RESULTS_CSV: &str = "\"Index\",\"KernelName\",\"gpu-id\",\"queue-id\",\"queue-index\",\"pid\",\"tid\",\"grd\",\"wgr\",\"DispatchNs\",\"BeginNs\",\"EndNs\",\"CompleteNs\",\"DurationNs\"\n\
0,\"initialize_kernel\",8,0,0,400,400,1048576,256,1000,2000,12000,12100,10000\n\
1,\"stencil_kernel\",8,0,1,400,400,1048576,256,12200,13000,20000,20100,7000\n\
2,\"stencil_kernel\",8,0,2,400,400,1048576,256,20200,21000,28500,28600,7500\n";

/// The rocprofv3 CSV capture of `ok/csv/`: file name and text.
fn rocprof_csv_capture() -> Vec<(&'static str, String)> {
    vec![
        (
            "run_kernel_trace.csv",
            format!(
                "{KERNEL_HEADER}\n\
                 \"KERNEL_DISPATCH\",1,0,0,301,1,1,\"gemm_kernel(float*, int)\",1,10000,14000,256,1,1,65536,1,1\n\
                 \"KERNEL_DISPATCH\",1,0,0,301,2,2,\"relu_kernel\",2,15000,16000,64,1,1,4096,1,1\n"
            ),
        ),
        (
            "run_hip_api_trace.csv",
            "\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n\
             \"HIP_RUNTIME_API\",\"hipLaunchKernel\",300,301,1,9000,9500\n\
             \"HIP_RUNTIME_API\",\"hipLaunchKernel\",300,301,2,9600,9900\n\
             \"HIP_RUNTIME_API\",\"hipMemcpyAsync\",300,301,3,16500,16800\n\
             \"HIP_RUNTIME_API\",\"hipStreamSynchronize\",300,301,4,16900,19000\n"
                .to_owned(),
        ),
        (
            "run_memory_copy_trace.csv",
            "\"Kind\",\"Direction\",\"Source_Agent_Id\",\"Destination_Agent_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n\
             \"MEMORY_COPY\",\"MEMORY_COPY_DEVICE_TO_HOST\",1,0,3,17000,18500\n"
                .to_owned(),
        ),
    ]
}

/// A scratch file path for building one SQLite database; removed by the caller.
fn scratch_path(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "tracewise-xtask-{}-{tag}.sqlite",
        std::process::id()
    ))
}

/// Runs `sql` on a new database with 512-byte pages and returns the file's bytes.
pub(crate) fn sqlite_bytes(sql: &str) -> Result<Vec<u8>, String> {
    let path = scratch_path("fixture");
    let _ = std::fs::remove_file(&path);
    let res = (|| {
        let conn = rusqlite::Connection::open(&path).map_err(|e| e.to_string())?;
        conn.execute_batch("PRAGMA page_size = 512;")
            .and_then(|()| conn.execute_batch(sql))
            .map_err(|e| format!("fixture SQL: {e}"))?;
        conn.close().map_err(|(_, e)| e.to_string())?;
        std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))
    })();
    let _ = std::fs::remove_file(&path);
    res
}

/// nsys's `globalTid` of thread `tid` of process `pid` (on VM 1): its `globalPid` is the
/// same with tid 0.
fn global_tid(pid: i64, tid: i64) -> i64 {
    (1 << 48) | (pid << 24) | tid
}

/// The statements of `ok/small.sqlite`.
fn nsys_export_sql() -> String {
    let (pid, tid) = (100, 101);
    let gtid = global_tid(pid, tid);
    let gpid = global_tid(pid, 0);
    let mut sql = String::from("BEGIN;\n");
    sql.push_str(NSYS_SCHEMA);
    sql.push_str(
        "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2024.6.2.25');
         INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.16.1');
         INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1733877925987393218, '', '');\n",
    );
    sql.push_str(&format!(
        "INSERT INTO TARGET_INFO_GPU VALUES ({vm}, 0, 'NVIDIA H200', '0000:45:00.0', \
         150137864192, 4916736000000, 1980000000, 132, 9, 0);\n",
        vm = 1i64 << 48
    ));
    let strings = [
        "main",
        "cudaLaunchKernel_v7000",
        "cudaMemcpyAsync_v3020",
        "cudaMemsetAsync_v3020",
        "cudaStreamSynchronize_v3020",
        "void gemm_kernel<float>(float*, int)",
        "gemm_kernel",
        "relu_kernel(float*)",
        "relu_kernel",
    ];
    for (id, s) in strings.iter().enumerate() {
        sql.push_str(&format!(
            "INSERT INTO StringIds VALUES ({}, '{s}');\n",
            id + 1
        ));
    }
    sql.push_str(&format!(
        "INSERT INTO ThreadNames VALUES (1, 10, {gtid});\n"
    ));
    let mut corr = 0;
    for step in 0..2i64 {
        let t = 1_000_000 + step * 100_000;
        sql.push_str(&format!(
            "INSERT INTO NVTX_EVENTS VALUES ({t}, {}, 59, NULL, NULL, NULL, 'ProfilerStep#{}', \
             {gtid}, NULL, NULL, 0);\n",
            t + 90_000,
            step + 1
        ));
        // Two kernel launches, a copy, a set, then a synchronisation.
        for (k, (demangled, short)) in [(6, 7), (8, 9)].into_iter().enumerate() {
            corr += 1;
            let launch = t + 1_000 + k as i64 * 10_000;
            sql.push_str(&format!(
                "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({launch}, {}, 0, {gtid}, \
                 {corr}, 2, 0, NULL);\n\
                 INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({}, {}, 0, 1, 7, {corr}, \
                 {gpid}, {demangled}, {short}, NULL, 32, 128, 256, NULL, NULL);\n",
                launch + 4_000,
                launch + 8_000,
                launch + 8_000 + 20_000,
            ));
        }
        corr += 1;
        let copy = t + 30_000;
        sql.push_str(&format!(
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({copy}, {}, 0, {gtid}, {corr}, 3, \
             0, NULL);\n\
             INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES ({}, {}, 0, 1, 7, {corr}, {gpid}, \
             4096, 1, 0, 2, NULL);\n",
            copy + 3_000,
            copy + 45_000,
            copy + 47_000,
        ));
        corr += 1;
        let set = t + 50_000;
        sql.push_str(&format!(
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({set}, {}, 0, {gtid}, {corr}, 4, \
             0, NULL);\n\
             INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES ({}, {}, 0, 1, 7, {corr}, {gpid}, 0, \
             1024, NULL, 2);\n",
            set + 2_000,
            set + 48_000,
            set + 49_000,
        ));
        corr += 1;
        sql.push_str(&format!(
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({}, {}, 0, {gtid}, {corr}, 5, 0, \
             NULL);\n",
            t + 60_000,
            t + 85_000,
        ));
    }
    sql.push_str("COMMIT;\n");
    sql
}

/// `ok/small.sqlite`: a valid export (see its `.md`).
pub(crate) fn nsys_export() -> Result<Vec<u8>, String> {
    sqlite_bytes(&nsys_export_sql())
}

fn nsys_wrong_column_type() -> Result<Vec<u8>, String> {
    let sql = nsys_export_sql().replace(
        "COMMIT;\n",
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'soon' WHERE rowid = 2;\nCOMMIT;\n",
    );
    sqlite_bytes(&sql)
}

/// The older roctracer rocpd schema (rocpd_tools of ROCm 5), a few rows.
fn roctracer_rocpd() -> Result<Vec<u8>, String> {
    sqlite_bytes(
        "BEGIN;
         CREATE TABLE rocpd_string (id INTEGER PRIMARY KEY AUTOINCREMENT, string VARCHAR(4096) NOT NULL);
         CREATE TABLE rocpd_op (id INTEGER PRIMARY KEY AUTOINCREMENT, gpuId INTEGER NOT NULL,
           queueId INTEGER NOT NULL, sequenceId INTEGER NOT NULL, completionSignal VARCHAR(18) NOT NULL,
           start INTEGER NOT NULL, end INTEGER NOT NULL, description_id INTEGER NOT NULL,
           opType_id INTEGER NOT NULL);
         CREATE TABLE rocpd_api (id INTEGER PRIMARY KEY AUTOINCREMENT, pid INTEGER NOT NULL,
           tid INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL,
           apiName_id INTEGER NOT NULL, args_id INTEGER NOT NULL);
         CREATE TABLE rocpd_api_ops (id INTEGER PRIMARY KEY AUTOINCREMENT, api_id INTEGER NOT NULL,
           op_id INTEGER NOT NULL);
         CREATE TABLE rocpd_kernelapi (api_ptr_id INTEGER NOT NULL PRIMARY KEY, stream VARCHAR(18),
           gridX INTEGER, gridY INTEGER, gridZ INTEGER, workgroupX INTEGER, workgroupY INTEGER,
           workgroupZ INTEGER, groupSegmentSize INTEGER, privateSegmentSize INTEGER,
           kernelArgAddress VARCHAR(18), aquireFence VARCHAR(8), releaseFence VARCHAR(8),
           codeObject_id INTEGER, kernelName_id INTEGER);
         CREATE TABLE rocpd_copyapi (api_ptr_id INTEGER NOT NULL PRIMARY KEY, stream VARCHAR(18),
           size INTEGER, width INTEGER, height INTEGER, kind INTEGER, dst VARCHAR(18),
           src VARCHAR(18), dstDevice INTEGER, srcDevice INTEGER, sync BOOL, pinned BOOL);
         CREATE TABLE rocpd_metadata (id INTEGER PRIMARY KEY AUTOINCREMENT, tag VARCHAR(4096),
           value VARCHAR(4096));
         INSERT INTO rocpd_metadata (tag, value) VALUES ('schema_version', '2');
         INSERT INTO rocpd_string (string) VALUES (''), ('hipLaunchKernel'), ('gemm_kernel'),
           ('KernelExecution');
         INSERT INTO rocpd_api (pid, tid, start, end, apiName_id, args_id) VALUES (300, 301, 1000, 1500, 2, 1);
         INSERT INTO rocpd_op (gpuId, queueId, sequenceId, completionSignal, start, end,
           description_id, opType_id) VALUES (0, 0, 0, '', 2000, 6000, 3, 4);
         INSERT INTO rocpd_api_ops (api_id, op_id) VALUES (1, 1);
         COMMIT;",
    )
}

/// rocprof v1's `results.db` of the dispatches of [`V1_RESULTS_CSV`].
fn v1_results_db() -> Result<Vec<u8>, String> {
    let mut sql = String::from(
        "BEGIN;
         CREATE TABLE KERN (\"Index\" INTEGER, \"KernelName\" TEXT, \"gpu-id\" INTEGER,
           \"queue-id\" INTEGER, \"queue-index\" INTEGER, \"pid\" INTEGER, \"tid\" INTEGER,
           \"grd\" INTEGER, \"wgr\" INTEGER, \"DispatchNs\" INTEGER, \"BeginNs\" INTEGER,
           \"EndNs\" INTEGER, \"CompleteNs\" INTEGER, \"DurationNs\" INTEGER);\n",
    );
    for line in V1_RESULTS_CSV.lines().skip(1) {
        // The CSV's cells are integers and one double-quoted name: SQL literals as they are,
        // with the name's quotes made single.
        sql.push_str(&format!(
            "INSERT INTO KERN VALUES ({});\n",
            line.replace('"', "'")
        ));
    }
    sql.push_str("COMMIT;");
    sqlite_bytes(&sql)
}

/// A rocpd database of one process with two kernel dispatches and their launches.
pub(crate) fn rocpd_db() -> Result<Vec<u8>, String> {
    let mut sql = String::from("BEGIN;\n");
    sql.push_str(&ROCPD_SCHEMA.replace("{uuid}", ROCPD_UUID));
    for line in ROCPD_SCHEMA.lines() {
        let Some(rest) = line.strip_prefix("CREATE TABLE \"") else {
            continue;
        };
        let Some((view, _)) = rest.split_once("{uuid}") else {
            continue;
        };
        sql.push_str(&format!(
            "CREATE VIEW \"{view}\" AS SELECT * FROM \"{view}{ROCPD_UUID}\";\n"
        ));
    }
    let rows = "
INSERT INTO rocpd_metadata{uuid} (tag, value) VALUES ('schema_version', '3');
INSERT INTO rocpd_info_node{uuid} (id, hash, machine_id, hostname) VALUES (1, 7, 'm', 'host');
INSERT INTO rocpd_info_process{uuid} (id, nid, pid, command) VALUES (1, 1, 300, 'app');
INSERT INTO rocpd_info_thread{uuid} (id, nid, pid, tid, name) VALUES (1, 1, 300, 301, 'main');
INSERT INTO rocpd_info_agent{uuid} (id, nid, pid, type, absolute_index, logical_index, type_index, name, product_name)
    VALUES (1, 1, 300, 'CPU', 0, 0, 0, 'cpu', 'EPYC'), (2, 1, 300, 'GPU', 1, 1, 0, 'gfx942', 'AMD Instinct MI300X');
INSERT INTO rocpd_info_stream{uuid} (id, nid, pid, name) VALUES (1, 1, 300, 'stream 1');
INSERT INTO rocpd_info_code_object{uuid} (id, nid, pid, agent_id, storage_type) VALUES (1, 1, 300, 2, 'FILE');
INSERT INTO rocpd_string{uuid} (id, string) VALUES (1, 'hipLaunchKernel'), (2, 'HIP_RUNTIME_API_EXT'),
    (3, 'KERNEL_DISPATCH'), (4, 'thread');
INSERT INTO rocpd_info_kernel_symbol{uuid} (id, nid, pid, code_object_id, kernel_name, display_name)
    VALUES (1, 1, 300, 1, '_Z11gemm_kernelv', 'gemm_kernel'), (2, 1, 300, 1, '_Z4reluv', 'relu');
INSERT INTO rocpd_track{uuid} (id, nid, pid, tid, agent_id, queue_id, stream_id, name_id) VALUES
    (1, 1, 300, 301, NULL, NULL, NULL, 4), (2, 1, 300, 301, 2, 0, 1, NULL);
INSERT INTO rocpd_timestamp{uuid} (id, value) VALUES (1, 1000), (2, 1500), (3, 1600), (4, 1900),
    (5, 2000), (6, 6000), (7, 6100), (8, 7000);
INSERT INTO rocpd_event{uuid} (id, category_id, correlation_id) VALUES (1, 2, 1), (2, 2, 2),
    (3, 3, 1), (4, 3, 2);
INSERT INTO rocpd_region{uuid} (id, track_id, name_id, start_id, end_id, event_id) VALUES
    (1, 1, 1, 1, 2, 1), (2, 1, 1, 3, 4, 2);
INSERT INTO rocpd_kernel_dispatch{uuid} (id, track_id, kernel_id, dispatch_id, start_id, end_id,
    workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, grid_size_z, event_id)
    VALUES (1, 2, 1, 1, 5, 6, 256, 1, 1, 65536, 1, 1, 3), (2, 2, 2, 2, 7, 8, 64, 1, 1, 4096, 1, 1, 4);
COMMIT;
";
    sql.push_str(&rows.replace("{uuid}", ROCPD_UUID));
    sqlite_bytes(&sql)
}

/// The byte offset of each packet (field 1 of `Trace`) of an encoded trace.
fn packet_offsets(trace: &[u8]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < trace.len() {
        out.push(at);
        // Key byte 0x0a, then the length as a varint.
        let mut pos = at + 1;
        let mut len = 0usize;
        let mut shift = 0;
        while let Some(&b) = trace.get(pos) {
            len |= usize::from(b & 0x7f) << shift;
            shift += 7;
            pos += 1;
            if b & 0x80 == 0 {
                break;
            }
        }
        at = pos + len;
    }
    out
}

const PROCESS_TRACK: u64 = 10;
const THREAD_TRACK: u64 = 11;
const COMPUTE_TRACK: u64 = 12;
const COPY_TRACK: u64 = 13;

/// A Perfetto trace as rocprofv3 lays one out (see `ok/small.pftrace.md`).
pub(crate) fn perfetto_trace() -> Vec<u8> {
    let seq = Some(1);
    let mut packets = vec![TracePacket {
        trusted_packet_sequence_id: seq,
        sequence_flags: Some(SequenceFlags::SeqIncrementalStateCleared as u32),
        interned_data: Some(InternedData {
            event_categories: ["hip_api", "kernel_dispatch", "memory_copy", "marker_api"]
                .iter()
                .zip(1..)
                .map(|(name, iid)| EventCategory {
                    iid: Some(iid),
                    name: Some((*name).to_owned()),
                })
                .collect(),
            event_names: [
                "hipLaunchKernel",
                "hipMemcpyAsync",
                "gemm_kernel(float*, int)",
                "relu_kernel",
                "MEMORY_COPY_DEVICE_TO_HOST",
                "iteration 1",
            ]
            .iter()
            .zip(1..)
            .map(|(name, iid)| EventName {
                iid: Some(iid),
                name: Some((*name).to_owned()),
            })
            .collect(),
            ..InternedData::default()
        }),
        ..TracePacket::default()
    }];
    let track = |uuid, parent, name: Option<&str>| TracePacket {
        trusted_packet_sequence_id: seq,
        track_descriptor: Some(TrackDescriptor {
            uuid: Some(uuid),
            parent_uuid: parent,
            name: name.map(str::to_owned),
            ..TrackDescriptor::default()
        }),
        ..TracePacket::default()
    };
    let mut process = track(PROCESS_TRACK, None, None);
    if let Some(d) = process.track_descriptor.as_mut() {
        d.process = Some(ProcessDescriptor {
            pid: Some(300),
            process_name: Some("app".to_owned()),
            ..ProcessDescriptor::default()
        });
    }
    packets.push(process);
    let mut thread = track(THREAD_TRACK, Some(PROCESS_TRACK), None);
    if let Some(d) = thread.track_descriptor.as_mut() {
        d.thread = Some(ThreadDescriptor {
            pid: Some(300),
            tid: Some(301),
            thread_name: Some("main".to_owned()),
        });
    }
    packets.push(thread);
    packets.push(track(
        COMPUTE_TRACK,
        None,
        Some("COMPUTE AGENT [1] STREAM [0] (GPU)"),
    ));
    packets.push(track(
        COPY_TRACK,
        None,
        Some("COPY to AGENT [1] STREAM [0] (GPU)"),
    ));
    let annotation = |name: &str, uint: Option<u64>, text: Option<&str>| DebugAnnotation {
        name: Some(name.to_owned()),
        uint_value: uint,
        string_value: text.map(str::to_owned),
        ..DebugAnnotation::default()
    };
    // (track, start, end, name iid, category iid, correlation id)
    let slices: [(u64, u64, u64, u64, u64, u64); 7] = [
        (THREAD_TRACK, 8_000, 20_000, 6, 4, 9),
        (THREAD_TRACK, 9_000, 9_500, 1, 1, 1),
        (THREAD_TRACK, 9_600, 9_900, 1, 1, 2),
        (COMPUTE_TRACK, 10_000, 14_000, 3, 2, 1),
        (COMPUTE_TRACK, 15_000, 16_000, 4, 2, 2),
        (THREAD_TRACK, 16_500, 16_800, 2, 1, 3),
        (COPY_TRACK, 17_000, 18_500, 5, 3, 3),
    ];
    // Begin and end packets in time order, as a profiler emits them.
    let mut events: Vec<(u64, bool, usize)> = Vec::new();
    for (i, s) in slices.iter().enumerate() {
        events.push((s.1, true, i));
        events.push((s.2, false, i));
    }
    events.sort_by_key(|&(t, begin, i)| (t, begin, i));
    for (t, begin, i) in events {
        let (track, _, _, name, category, corr) = slices[i];
        let track_event = if begin {
            let mut annotations = vec![annotation("corr_id", Some(corr), None)];
            if track == COMPUTE_TRACK {
                annotations.push(annotation("agent", None, Some("Agent-1")));
                annotations.push(annotation("queue", Some(0), None));
            } else if track == COPY_TRACK {
                annotations.push(annotation("dst_agent", None, Some("Agent-0")));
                annotations.push(annotation("copy_bytes", Some(1 << 20), None));
            } else {
                annotations.push(annotation("tid", Some(301), None));
            }
            TrackEvent {
                r#type: Some(Type::SliceBegin as i32),
                track_uuid: Some(track),
                name_iid: Some(name),
                category_iids: vec![category],
                debug_annotations: annotations,
                ..TrackEvent::default()
            }
        } else {
            TrackEvent {
                r#type: Some(Type::SliceEnd as i32),
                track_uuid: Some(track),
                ..TrackEvent::default()
            }
        };
        packets.push(TracePacket {
            timestamp: Some(t),
            trusted_packet_sequence_id: seq,
            sequence_flags: Some(SequenceFlags::SeqNeedsIncrementalState as u32),
            track_event: Some(track_event),
            ..TracePacket::default()
        });
    }
    Trace { packet: packets }.encode_to_vec()
}
