//! `write_chrome_trace`: a capture written as Chrome trace JSON and read back with
//! `load_from` has the same activities (names, kinds, starts, durations, devices, streams,
//! correlation ids, launches) and host events; on a synthetic capture, on the committed
//! nsys and rocprof fixtures and on every shared Nsight Systems and ROCm capture.

use std::path::{Path, PathBuf};

use trace_model::{
    ActivityDetails, ActivityKind, Capture, CaptureBuilder, Device, DeviceId, DeviceProperties,
    Format, GpuActivity, GpuAnnotation, HostEvent, HostKind, HostThread, KernelClass, Nanos,
    Stream, StreamId, ThreadId, Vendor,
};

/// One activity as compared: device and stream ordinals, start, duration, name, kind,
/// correlation id, and its launch's name and start.
type ActivityRow = (
    i64,
    i64,
    i64,
    i64,
    String,
    ActivityKind,
    Option<u64>,
    Option<(String, i64)>,
);
/// One host event: pid, tid, start, duration, name, correlation id.
type HostRow = (i64, i64, i64, i64, String, Option<u64>);

fn activity_rows(c: &Capture) -> Vec<ActivityRow> {
    let mut rows: Vec<ActivityRow> = c
        .activities()
        .iter()
        .map(|a| {
            let s = c.stream(a.stream);
            (
                c.device(s.device).ordinal,
                s.ordinal,
                a.start.0,
                a.dur.0,
                c.name(a.name).to_owned(),
                a.kind,
                a.correlation(),
                a.launch().map(|l| {
                    let l = c.host_event(l);
                    (c.name(l.name).to_owned(), l.start.0)
                }),
            )
        })
        .collect();
    rows.sort();
    rows
}

fn host_rows(c: &Capture) -> Vec<HostRow> {
    let mut rows: Vec<HostRow> = c
        .host_events()
        .iter()
        .map(|e| {
            let t = c.thread(e.thread);
            (
                t.pid,
                t.tid,
                e.start.0,
                e.dur.0,
                c.name(e.name).to_owned(),
                e.correlation(),
            )
        })
        .collect();
    rows.sort();
    rows
}

/// Writes `capture`, reads it back and compares; returns the JSON.
fn round_trip(capture: &Capture, what: &str) -> Vec<u8> {
    let mut json = Vec::new();
    chrome_reader::write_chrome_trace(capture, &mut json).expect("writing to a Vec");
    let back = chrome_reader::load_from(&json[..], Path::new("written.json"))
        .unwrap_or_else(|e| panic!("{what}: the written JSON does not read back: {e}"));
    let (before, after) = (activity_rows(capture), activity_rows(&back));
    assert_eq!(before.len(), after.len(), "{what}: activity count");
    assert_eq!(before, after, "{what}: activities");
    assert_eq!(host_rows(capture), host_rows(&back), "{what}: host events");
    let annotations = |c: &Capture| {
        let mut v: Vec<_> = c
            .gpu_annotations()
            .iter()
            .map(|g| (g.start.0, g.dur.0, c.name(g.name).to_owned()))
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        annotations(capture),
        annotations(&back),
        "{what}: GPU annotations"
    );
    let devices = |c: &Capture| {
        c.devices()
            .iter()
            .map(|d| (d.ordinal, d.properties.name.clone()))
            .collect::<Vec<_>>()
    };
    let mut want = devices(capture);
    want.sort();
    let mut got = devices(&back);
    got.sort();
    assert_eq!(want, got, "{what}: devices");
    // Valid JSON, with one flow arrow (two events) per linked activity.
    let value: serde_json::Value = serde_json::from_slice(&json).expect("valid JSON");
    let events = value["traceEvents"].as_array().expect("traceEvents");
    let flows = events
        .iter()
        .filter(|e| matches!(e["ph"].as_str(), Some("s" | "f")))
        .count();
    let linked = capture
        .activities()
        .iter()
        .filter(|a| a.launch().is_some())
        .count();
    assert_eq!(flows, 2 * linked, "{what}: flow events");
    json
}

/// A capture with what the writer must carry: two devices (one with properties), a named
/// stream, launches with several activities (a graph launch), copies with bytes, a
/// memset, an unlinked kernel, an annotation with a `ProfilerStep#` step, a GPU
/// annotation, a name that needs escaping, a host pid equal to a device ordinal, times
/// with nanosecond digits and a Unix-epoch base.
fn synthetic() -> Capture {
    let mut b = CaptureBuilder::new(Format::NsysSqlite);
    for (i, name) in [Some("NVIDIA H200"), None].into_iter().enumerate() {
        b.devices.push(Device {
            id: DeviceId::new(i as u32),
            ordinal: i as i64,
            vendor: Vendor::Nvidia,
            properties: DeviceProperties {
                name: name.map(str::to_owned),
                multiprocessors: name.map(|_| 132),
                ..DeviceProperties::default()
            },
        });
    }
    let named = b.strings.intern("Compute \"main\"");
    b.streams.push(Stream {
        id: StreamId::new(0),
        device: DeviceId::new(0),
        ordinal: 7,
        name: Some(named),
    });
    b.streams.push(Stream {
        id: StreamId::new(1),
        device: DeviceId::new(1),
        ordinal: 7,
        name: None,
    });
    let thread_name = b.strings.intern("main");
    b.threads.push(HostThread {
        id: ThreadId::new(0),
        pid: 1,
        tid: 11,
        name: Some(thread_name),
        pid_text: None,
        tid_text: None,
    });
    b.threads.push(HostThread {
        id: ThreadId::new(1),
        pid: 1,
        tid: 12,
        name: None,
        pid_text: None,
        tid_text: None,
    });
    b.meta.base_time_ns = Some(1_733_877_925_987_393_218);
    let mut index = 0;
    let mut host = |b: &mut CaptureBuilder,
                    thread: u32,
                    start: i64,
                    dur: i64,
                    name: &str,
                    kind,
                    corr: Option<u64>| {
        let name = b.strings.intern(name);
        let mut e = HostEvent::new(
            ThreadId::new(thread),
            Nanos(start),
            Nanos(dur),
            name,
            kind,
            index,
        );
        index += 1;
        e.set_correlation(corr);
        b.push_host_event(e, None);
    };
    host(
        &mut b,
        0,
        1_000,
        200_001,
        "ProfilerStep#3",
        HostKind::Annotation,
        None,
    );
    host(
        &mut b,
        0,
        2_001,
        3_003,
        "cudaLaunchKernel",
        HostKind::Launch,
        Some(1),
    );
    host(
        &mut b,
        0,
        9_000,
        1_000,
        "cudaGraphLaunch",
        HostKind::Launch,
        Some(2),
    );
    host(
        &mut b,
        1,
        9_500,
        700,
        "cudaMemcpyAsync",
        HostKind::Launch,
        Some(3),
    );
    host(
        &mut b,
        1,
        20_000,
        50_000,
        "cudaStreamSynchronize",
        HostKind::Runtime,
        Some(4),
    );
    let mut source = 100;
    let mut gpu = |b: &mut CaptureBuilder,
                   stream: u32,
                   start: i64,
                   dur: i64,
                   name: &str,
                   kind,
                   corr: Option<u64>,
                   bytes: Option<u64>| {
        let class = match kind {
            ActivityKind::Memcpy => {
                trace_model::KernelClass::Memcpy(trace_model::memcpy_direction(name))
            }
            ActivityKind::Memset => KernelClass::Memset,
            _ => trace_model::classify_kernel(name),
        };
        let name = b.strings.intern(name);
        let mut a = GpuActivity::new(
            StreamId::new(stream),
            Nanos(start),
            Nanos(dur),
            name,
            kind,
            class,
            source,
        );
        source += 1;
        a.set_correlation(corr);
        b.push_activity(
            a,
            ActivityDetails {
                bytes,
                ..ActivityDetails::default()
            },
        );
    };
    gpu(
        &mut b,
        0,
        6_001,
        10_999,
        "void gemm<float, 128>(float const*, int)",
        ActivityKind::Kernel,
        Some(1),
        None,
    );
    gpu(
        &mut b,
        0,
        17_123,
        1_001,
        "graph_node_a",
        ActivityKind::Kernel,
        Some(2),
        None,
    );
    gpu(
        &mut b,
        0,
        18_200,
        999,
        "graph_node_b",
        ActivityKind::Kernel,
        Some(2),
        None,
    );
    gpu(
        &mut b,
        1,
        12_000,
        4_000,
        "Memcpy HtoD (Pageable -> Device)",
        ActivityKind::Memcpy,
        Some(3),
        Some(1 << 20),
    );
    gpu(
        &mut b,
        1,
        16_500,
        10,
        "Memset (Device)",
        ActivityKind::Memset,
        None,
        Some(64),
    );
    gpu(
        &mut b,
        1,
        30_000,
        0,
        "orphan_kernel",
        ActivityKind::Kernel,
        Some(99),
        None,
    );
    let gpu_step = b.strings.intern("gpu step");
    b.gpu_annotations.push(GpuAnnotation {
        stream: StreamId::new(0),
        start: Nanos(6_000),
        dur: Nanos(14_000),
        name: gpu_step,
    });
    b.finish(Path::new("synthetic.sqlite"))
}

#[test]
fn synthetic_capture_round_trips() {
    let capture = synthetic();
    assert_eq!(
        capture
            .activities()
            .iter()
            .filter(|a| a.launch().is_some())
            .count(),
        4
    );
    let json = round_trip(&capture, "synthetic");
    let back = chrome_reader::load_from(&json[..], Path::new("written.json")).unwrap();
    assert_eq!(back.meta().base_time_ns, Some(1_733_877_925_987_393_218));
    assert_eq!(back.steps().len(), 1);
    assert_eq!(
        (back.steps()[0].number, back.steps()[0].start.0),
        (3, 1_000)
    );
    // The pid of host process 1 is device 1's ordinal: GPU processes move past it.
    let text = String::from_utf8(json.clone()).unwrap();
    assert!(
        text.contains(
            r#"{"ph":"M","name":"process_name","pid":2,"tid":0,"args":{"name":"GPU 0"}}"#
        ),
        "{text}"
    );
    assert!(text.contains(r#""name":"Compute \"main\"""#), "{text}");
    // The same capture gives the same bytes.
    let mut again = Vec::new();
    chrome_reader::write_chrome_trace(&capture, &mut again).unwrap();
    assert_eq!(json, again);
}

fn fixture(rel: &str) -> PathBuf {
    test_support::workspace_root().join("testdata").join(rel)
}

/// Captures of the committed fixtures and of the shared traces, with what they are.
fn check_nsys(path: &Path) -> usize {
    match nsys_reader::load(path, &nsys_reader::Config::default()) {
        Ok(processes) => {
            for p in &processes {
                round_trip(&p.capture, &format!("{} pid {}", path.display(), p.pid));
            }
            processes.iter().map(|p| p.capture.activities().len()).sum()
        }
        // An export without CUDA work has nothing to write.
        Err(e) if e.is_nothing_to_report() => 0,
        Err(e) => panic!("{e}"),
    }
}

fn check_rocprof(path: &Path) -> usize {
    let loaded = rocprof_reader::load(path).unwrap_or_else(|e| panic!("{e}"));
    for (i, l) in loaded.iter().enumerate() {
        round_trip(&l.capture, &format!("{} capture {i}", path.display()));
    }
    loaded.iter().map(|l| l.capture.activities().len()).sum()
}

#[test]
fn committed_nsys_and_rocprof_fixtures_round_trip() {
    assert_eq!(check_nsys(&fixture("nsys/ok/small.sqlite")), 8);
    let mut activities = 0;
    for rel in [
        "small.pftrace",
        "csv",
        "rocpd/300_results.db",
        "v1/results.csv",
        "v1/results.db",
    ] {
        activities += check_rocprof(&fixture(&format!("rocprof/ok/{rel}")));
    }
    assert_eq!(activities, 3 + 3 + 2 + 3 + 3);
}

fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for folder in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let folder = folder.expect("entry").path();
        if !folder.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&folder).expect("readable folder") {
            out.push(file.expect("entry").path());
        }
    }
    out.sort();
    out
}

#[test]
fn shared_nsys_exports_round_trip() {
    let Some(dir) = crate::traces_dir("shared_nsys_exports_round_trip") else {
        return;
    };
    let exports: Vec<PathBuf> = files_below(&dir.join("nsys"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "sqlite"))
        .collect();
    assert!(exports.len() >= 6, "{} exports", exports.len());
    let activities: usize = exports.iter().map(|p| check_nsys(p)).sum();
    assert!(activities >= 1_000, "{activities} activities");
}

#[test]
fn shared_rocprof_captures_round_trip() {
    let Some(dir) = crate::traces_dir("shared_rocprof_captures_round_trip") else {
        return;
    };
    let mut captures = 0;
    let mut activities = 0;
    for path in files_below(&dir.join("rocprof")) {
        if rocprof_reader::detect(&path).is_some() {
            captures += 1;
            activities += check_rocprof(&path);
        }
    }
    assert!(captures >= 8, "{captures} captures");
    assert!(activities > 1_000, "{activities} activities");
}
