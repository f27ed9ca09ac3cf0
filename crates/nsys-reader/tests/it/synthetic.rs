//! Exports made by the test with known rows: the captures read from them, in full.

use std::fmt::Write;

use nsys_reader::{Config, Error, Process, load};
use trace_model::Capture;

use crate::export::Export;

/// Everything a capture holds that the reader sets, one line per item, in the capture's
/// order.
pub fn render(process: &Process) -> String {
    let c: &Capture = &process.capture;
    let mut out = String::new();
    let meta = c.meta();
    writeln!(
        out,
        "process {} rank {:?} format {:?} producer {:?} base {:?} world {:?}",
        process.pid,
        process.rank,
        c.format(),
        meta.producer,
        meta.base_time_ns,
        meta.world_size
    )
    .unwrap();
    for d in c.devices() {
        let p = &d.properties;
        writeln!(
            out,
            "device {} {:?} {:?} cc {:?} mem {:?} sms {:?} khz {:?} bw {:?}",
            d.ordinal,
            d.vendor,
            p.name,
            p.compute_capability,
            p.total_memory_bytes,
            p.multiprocessors,
            p.clock_rate_khz,
            p.memory_bandwidth_bytes_per_s
        )
        .unwrap();
    }
    for t in c.threads() {
        let name = t.name.map(|n| c.name(n));
        writeln!(out, "thread {}/{} {name:?}", t.pid, t.tid).unwrap();
    }
    for a in c.activities() {
        let stream = c.stream(a.stream);
        let launch = a.launch().map(|id| {
            let e = c.host_event(id);
            format!("{}@{}", c.name(e.name), c.thread(e.thread).tid)
        });
        writeln!(
            out,
            "{:?} dev {} stream {} {}+{} {:?} {} corr {:?} bytes {:?} graph {:?} launch {:?}",
            a.kind,
            c.device(stream.device).ordinal,
            stream.ordinal,
            a.start.0,
            a.dur.0,
            c.name(a.name),
            a.class.word(),
            a.correlation(),
            c.activity_bytes(a),
            c.activity_graph_id(a),
            launch
        )
        .unwrap();
    }
    for e in c.host_events() {
        writeln!(
            out,
            "{:?} tid {} {}+{} {:?} corr {:?}",
            e.kind,
            c.thread(e.thread).tid,
            e.start.0,
            e.dur.0,
            c.name(e.name),
            e.correlation()
        )
        .unwrap();
    }
    for s in c.steps() {
        writeln!(
            out,
            "step {} {}..{} {:?}",
            s.number, s.start.0, s.end.0, s.source
        )
        .unwrap();
    }
    for d in c.diagnostics().iter() {
        writeln!(out, "diagnostic {} x{}", d.code, d.count).unwrap();
    }
    out
}

/// Two processes with CUDA work and one without; process 200's kernel reuses process
/// 100's correlation id 1, so only a join within each process links both right.
fn two_processes(dir: &std::path::Path) -> Export {
    let mut x = Export::create(dir, "two.sqlite");
    x.gpu(0, "NVIDIA H200");
    x.gpu(1, "NVIDIA H200");
    x.thread_name(100, 100, "python", 5);
    x.thread_name(100, 100, "main", 10);
    x.thread_name(200, 200, "MPI Rank 3", 0);
    // Process 100: a kernel launch, an async copy and set, a graph of two kernels, a
    // synchronisation, and a kernel whose launch is not in the export.
    x.runtime(1000, 1100, 100, 100, 1, "cudaLaunchKernel_v7000");
    x.kernel(
        1500,
        2500,
        0,
        7,
        1,
        100,
        "void sm90_xmma_gemm_f16f16_f32(Params)",
        None,
    );
    x.runtime(3000, 3100, 100, 100, 2, "cudaMemcpyAsync_v3020");
    x.memcpy(3200, 3300, 0, 7, 2, 100, 4096, 1);
    x.runtime(3400, 3450, 100, 101, 3, "cudaMemsetAsync_v3020");
    x.memset(3500, 3600, 0, 7, 3, 100, 256);
    x.runtime(4000, 4100, 100, 100, 4, "cudaGraphLaunch_v10000");
    x.kernel(4200, 4300, 0, 8, 4, 100, "elementwise_kernel", Some(9));
    x.kernel(4300, 4500, 0, 8, 4, 100, "elementwise_kernel", Some(9));
    x.runtime(4600, 5000, 100, 100, 5, "cudaDeviceSynchronize_v3020");
    x.kernel(6000, 6100, 0, 7, 77, 100, "orphan_kernel", None);
    // Its NVTX: two steps (text inline and through StringIds), a range of a named domain,
    // a mark and a range that never ended.
    x.nvtx(59, 900, Some(3150), 100, 100, "ProfilerStep#1", false, 0);
    x.nvtx(59, 3150, Some(5000), 100, 100, "ProfilerStep#2", true, 0);
    x.nvtx(75, 10, None, 100, 100, "NCCL", false, 1);
    x.nvtx(60, 4000, Some(4200), 100, 101, "AllReduce", false, 1);
    x.nvtx(34, 4050, None, 100, 100, "checkpoint", false, 0);
    x.nvtx(59, 5500, None, 100, 100, "unfinished", false, 0);
    // Process 200 on device 1, correlation id 1 again.
    x.runtime(1000, 1050, 200, 200, 1, "cudaLaunchKernel_v7000");
    x.kernel(1200, 1300, 1, 7, 1, 200, "kernel_b", None);
    // Process 300 has NVTX ranges only: no capture.
    x.nvtx(59, 100, Some(200), 300, 300, "ProfilerStep#1", false, 0);
    x
}

#[test]
fn two_processes_read_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let x = two_processes(dir.path());
    let processes = load(&x.path, &Config::default()).unwrap();
    let got: Vec<String> = processes.iter().map(render).collect();
    let producer = "Some(\"Nsight Systems 2024.6.2.25 (export schema 3.16.1)\")";
    let device = |ordinal: i64| {
        format!(
            "device {ordinal} Nvidia Some(\"NVIDIA H200\") cc Some((9, 0)) mem Some(150137864192) \
             sms Some(132) khz Some(1980000) bw Some(4916736000000.0)"
        )
    };
    let expect_200 = format!(
        "process 200 rank Some(3) format NsysSqlite producer {producer} base Some(1733877925987393218) world None
{}
thread 200/200 Some(\"MPI Rank 3\")
Kernel dev 1 stream 7 1200+100 \"kernel_b\" other corr Some(1) bytes None graph None launch Some(\"cudaLaunchKernel@200\")
Launch tid 200 1000+50 \"cudaLaunchKernel\" corr Some(1)
",
        device(1)
    );
    let expect_100 = format!(
        "process 100 rank None format NsysSqlite producer {producer} base Some(1733877925987393218) world None
{}
thread 100/100 Some(\"main\")
thread 100/101 None
Kernel dev 0 stream 7 1500+1000 \"void sm90_xmma_gemm_f16f16_f32(Params)\" gemm corr Some(1) bytes None graph None launch Some(\"cudaLaunchKernel@100\")
Memcpy dev 0 stream 7 3200+100 \"Memcpy HtoD (Pageable -> Device)\" memcpy corr Some(2) bytes Some(4096) graph None launch Some(\"cudaMemcpyAsync@100\")
Memset dev 0 stream 7 3500+100 \"Memset (Device)\" memset corr Some(3) bytes Some(256) graph None launch Some(\"cudaMemsetAsync@101\")
Kernel dev 0 stream 7 6000+100 \"orphan_kernel\" other corr Some(77) bytes None graph None launch None
Kernel dev 0 stream 8 4200+100 \"elementwise_kernel\" elementwise corr Some(4) bytes None graph Some(9) launch Some(\"cudaGraphLaunch@100\")
Kernel dev 0 stream 8 4300+200 \"elementwise_kernel\" elementwise corr Some(4) bytes None graph Some(9) launch Some(\"cudaGraphLaunch@100\")
Annotation tid 100 900+2250 \"ProfilerStep#1\" corr None
Launch tid 100 1000+100 \"cudaLaunchKernel\" corr Some(1)
Launch tid 100 3000+100 \"cudaMemcpyAsync\" corr Some(2)
Annotation tid 100 3150+1850 \"ProfilerStep#2\" corr None
Launch tid 100 4000+100 \"cudaGraphLaunch\" corr Some(4)
Runtime tid 100 4600+400 \"cudaDeviceSynchronize\" corr Some(5)
Launch tid 101 3400+50 \"cudaMemsetAsync\" corr Some(3)
Annotation tid 101 4000+200 \"NCCL:AllReduce\" corr None
step 1 900..3150 ProfilerStep
step 2 3150..5000 ProfilerStep
diagnostic nvtx-marks-not-kept x1
diagnostic nvtx-range-without-end x1
diagnostic activity-without-launch x1
",
        device(0)
    );
    assert_eq!(got, [expect_200, expect_100]);
    // The process without CUDA work has no capture.
    assert!(processes.iter().all(|p| p.pid != 300));
}

#[test]
fn user_named_steps() {
    let dir = tempfile::tempdir().unwrap();
    let mut x = two_processes(dir.path());
    // Numbered by the capture group; the ProfilerStep ranges no longer count.
    x.nvtx(59, 7000, Some(8000), 100, 100, "iter 41", false, 0);
    x.nvtx(59, 8000, Some(9000), 100, 100, "iter 42", false, 0);
    let config = Config {
        step_nvtx: Some(regex::Regex::new(r"^iter (\d+)$").unwrap()),
    };
    let processes = load(&x.path, &config).unwrap();
    let steps: Vec<_> = processes[1]
        .capture
        .steps()
        .iter()
        .map(|s| (s.number, s.start.0, s.end.0))
        .collect();
    assert_eq!(steps, [(41, 7000, 8000), (42, 8000, 9000)]);
    // Without a number in the text, steps count from 0 in start order.
    let config = Config {
        step_nvtx: Some(regex::Regex::new(r"^ProfilerStep").unwrap()),
    };
    let processes = load(&x.path, &config).unwrap();
    let steps: Vec<_> = processes[1]
        .capture
        .steps()
        .iter()
        .map(|s| (s.number, s.start.0))
        .collect();
    assert_eq!(steps, [(0, 900), (1, 3150)]);
}

#[test]
fn one_process_takes_its_rank_from_the_launch_environment() {
    let dir = tempfile::tempdir().unwrap();
    let mut x = Export::create(dir.path(), "ranked.sqlite");
    x.conn
        .execute_batch(
            "CREATE TABLE META_DATA_CAPTURE (name TEXT NOT NULL, value TEXT);
             INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:ENVIRONMENT_VARIABLE', 'LOCAL_RANK=\"1\"');
             INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:ENVIRONMENT_VARIABLE', 'RANK=\"5\"');
             INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:ENVIRONMENT_VARIABLE', 'WORLD_SIZE=\"8\"');",
        )
        .unwrap();
    x.runtime(10, 20, 42, 42, 1, "cudaLaunchKernel_v7000");
    x.kernel(30, 40, 0, 7, 1, 42, "k", None);
    let processes = load(&x.path, &Config::default()).unwrap();
    assert_eq!(processes.len(), 1);
    assert_eq!((processes[0].pid, processes[0].rank), (42, Some(5)));
    assert_eq!(processes[0].capture.meta().world_size, Some(8));
    // No TARGET_INFO_GPU row for device 0: the device is there, its figures are not.
    let diagnostics: Vec<_> = processes[0]
        .capture
        .diagnostics()
        .iter()
        .map(|d| d.code)
        .collect();
    assert_eq!(diagnostics, ["nsys-no-device-table"]);
}

#[test]
fn empty_cuda_tables_are_nothing_to_report() {
    let dir = tempfile::tempdir().unwrap();
    let mut x = Export::create(dir.path(), "empty.sqlite");
    // NVTX alone is no CUDA work.
    x.nvtx(59, 100, Some(200), 300, 300, "ProfilerStep#1", false, 0);
    let err = load(&x.path, &Config::default()).unwrap_err();
    assert!(err.is_nothing_to_report(), "{err}");
    assert!(matches!(err, Error::NoCudaActivity { .. }));
    let text = err.to_string();
    assert!(
        text.contains("empty.sqlite") && text.contains("CUPTI_ACTIVITY_KIND_KERNEL"),
        "{text}"
    );
}

#[test]
fn absent_tables_are_said_in_the_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let mut x = Export::create(dir.path(), "few.sqlite");
    x.conn
        .execute_batch("DROP TABLE CUPTI_ACTIVITY_KIND_MEMSET; DROP TABLE NVTX_EVENTS; DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY;")
        .unwrap();
    x.gpu(0, "NVIDIA H200");
    x.runtime(10, 20, 42, 42, 1, "cudaLaunchKernel");
    x.kernel(30, 40, 0, 7, 1, 42, "k", None);
    let processes = load(&x.path, &Config::default()).unwrap();
    let c = &processes[0].capture;
    let codes: Vec<_> = c.diagnostics().iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        [
            "nsys-no-memcpy-table",
            "nsys-no-memset-table",
            "nsys-no-nvtx-table"
        ]
    );
    let memset = c.diagnostics().get("nsys-no-memset-table").unwrap();
    assert!(
        memset
            .first
            .ends_with("few.sqlite: table CUPTI_ACTIVITY_KIND_MEMSET"),
        "{}",
        memset.first
    );
    assert_eq!(c.activities().len(), 1);
    assert!(c.activities()[0].launch().is_some());
}
