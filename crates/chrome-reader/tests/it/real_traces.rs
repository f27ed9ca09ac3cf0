//! Every real trace loads; per file, event counts by category and phase equal MANIFEST.md.

use std::collections::BTreeMap;
use std::path::Path;

/// Counts by `cat` and by `ph` of one file.
type Counts = (BTreeMap<String, u64>, BTreeMap<String, u64>);

fn count(path: &Path) -> Counts {
    let mut cats = BTreeMap::new();
    let mut phs = BTreeMap::new();
    chrome_reader::read_raw_file(path, |ev| {
        *cats
            .entry(ev.cat.as_deref().unwrap_or("null").to_string())
            .or_insert(0) += 1;
        *phs.entry(ev.ph.to_string()).or_insert(0) += 1;
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    (cats, phs)
}

#[test]
fn pytorch_counts_match_manifest() {
    let Some(set) = test_support::real_traces("pytorch_counts_match_manifest") else {
        return;
    };
    assert!(
        !set.kineto.is_empty(),
        "pytorch/MANIFEST.md lists no traces"
    );
    for trace in &set.kineto {
        let (file, cats, phs, path) = (&trace.rel, &trace.by_cat, &trace.by_ph, &trace.path);
        let (got_cats, got_phs) = count(path);
        assert_eq!(&got_cats, cats, "{file}: counts by cat");
        assert_eq!(&got_phs, phs, "{file}: counts by ph");
        // The model builder accepts every one of them too.
        let capture = chrome_reader::load(path).unwrap_or_else(|e| panic!("{e}"));
        let kernels =
            cats.get("kernel").copied().unwrap_or(0) + cats.get("Kernel").copied().unwrap_or(0);
        // Both spellings of copies and sets: Kineto's since 2022 and 2021's.
        let copies = ["gpu_memcpy", "gpu_memset", "Memcpy", "Memset"]
            .iter()
            .map(|c| cats.get(*c).copied().unwrap_or(0))
            .sum::<u64>();
        assert_eq!(
            capture.activities().len() as u64,
            kernels + copies,
            "{file}: GPU activities"
        );
    }
}

#[test]
fn every_gpu_activity_of_kineto_traces_has_a_stream_and_most_have_launches() {
    let Some(set) = test_support::real_traces("every_gpu_activity_has_a_launch") else {
        return;
    };
    let trace = set.kineto("hta-v100-2rank-large/df_index_resolver.json.gz");
    let capture = chrome_reader::load(&trace.path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(capture.format(), trace_model::Format::KinetoJson);
    assert_eq!(capture.meta().rank, trace.rank.map(i64::from));
    assert_eq!(capture.meta().world_size, trace.world_size.map(i64::from));
    let linked = capture
        .activities()
        .iter()
        .filter(|a| a.launch().is_some())
        .count();
    let unlinked = capture.diagnostics().count("activity-without-launch") as usize;
    assert_eq!(linked + unlinked, capture.activities().len());
    // Every launch-linked kernel found the CPU op that issued it, except launches outside any op.
    let with_op = capture
        .activities()
        .iter()
        .filter(|a| capture.launching_op(a).is_some())
        .count();
    assert!(
        with_op * 10 >= linked * 9,
        "{with_op} of {linked} linked activities have a CPU op"
    );
    assert_eq!(
        capture.steps().len() as u64,
        trace.profiler_steps,
        "ProfilerStep# count from MANIFEST.md"
    );
}

#[test]
fn jax_trace_json_loads_devices_and_streams() {
    let Some(set) = test_support::real_traces("jax_trace_json_loads") else {
        return;
    };
    let xspace = set.xspace("rocm-mi300-jax08-gemm");
    let capture = chrome_reader::load(&xspace.json).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(capture.format(), trace_model::Format::JaxTraceJson);
    // MANIFEST.md's GPU plane of the XSpace, per stream (`Stream #16(Kernel)`=42, …).
    assert_eq!(capture.activities().len() as u64, xspace.gpu_events());
    let mut per_stream: BTreeMap<i64, u64> = BTreeMap::new();
    for a in capture.activities() {
        *per_stream
            .entry(capture.stream(a.stream).ordinal)
            .or_insert(0) += 1;
    }
    let expected: BTreeMap<i64, u64> = xspace
        .planes
        .iter()
        .filter(|p| p.name.starts_with("/device:"))
        .flat_map(|p| &p.streams)
        .map(|(name, n)| (stream_ordinal(name), *n))
        .collect();
    assert_eq!(per_stream, expected);
    let linked = capture
        .activities()
        .iter()
        .filter(|a| a.launch().is_some())
        .count();
    assert_eq!(
        linked as u64,
        xspace.gpu_events(),
        "every JAX GPU event has its launch by correlation_id"
    );
}

/// `Stream #16(Kernel)` → 16.
fn stream_ordinal(name: &str) -> i64 {
    let digits: String = name
        .trim_start_matches("Stream #")
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("stream name {name:?}"))
}

/// The 2021 Kineto trace (PyTorch 1.8, categories `Operator`, `Runtime`, `Kernel`,
/// `Memcpy`, `Memset`): its copies and sets are GPU activities of their kinds and
/// classes (what the budget sums), counted as a plain pass over the file counts them.
#[test]
fn kineto_2021_categories_are_read() {
    let Some(set) = test_support::real_traces("kineto 2021 categories") else {
        return;
    };
    let trace = set.kineto("kineto-v100-resnet50-train/worker0.1623143566756.pt.trace.json.gz");
    // The plain count: events by category and their summed durations in microseconds.
    let mut plain: BTreeMap<String, (u64, f64)> = BTreeMap::new();
    chrome_reader::read_raw_file(&trace.path, |ev| {
        if ev.ph == "X" {
            let dur: f64 = ev
                .dur
                .as_ref()
                .map_or(0.0, |d| d.text().parse().unwrap_or(0.0));
            let entry = plain
                .entry(ev.cat.as_deref().unwrap_or("").to_string())
                .or_insert((0, 0.0));
            entry.0 += 1;
            entry.1 += dur;
        }
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let capture = chrome_reader::load(&trace.path).unwrap_or_else(|e| panic!("{e}"));
    let of = |kind: trace_model::ActivityKind| {
        let activities = capture.activities().iter().filter(|a| a.kind == kind);
        let (n, ns) = activities.fold((0u64, 0i64), |(n, ns), a| (n + 1, ns + a.dur.0));
        (n, ns as f64 / 1e3)
    };
    use trace_model::{ActivityKind, KernelClass};
    for (kind, cat, want) in [
        (ActivityKind::Memcpy, "Memcpy", 12),
        (ActivityKind::Memset, "Memset", 312),
        (ActivityKind::Kernel, "Kernel", 8772),
    ] {
        let (n, us) = of(kind);
        let (plain_n, plain_us) = plain[cat];
        assert_eq!((n, plain_n), (want, want), "{cat}");
        assert!(
            (us - plain_us).abs() < 1.0,
            "{cat}: {us} µs vs {plain_us} µs"
        );
    }
    // Copies are host-to-device memcpy (the budget's memcpy), sets memset.
    for a in capture.activities() {
        match a.kind {
            ActivityKind::Memcpy => assert!(matches!(a.class, KernelClass::Memcpy(_))),
            ActivityKind::Memset => assert_eq!(a.class, KernelClass::Memset),
            _ => {}
        }
    }
    // `Operator` are CPU ops, `Runtime` runtime calls: nothing is an unknown category.
    assert!(capture.diagnostics().get("unknown-category").is_none());
    let ops = capture
        .host_events()
        .iter()
        .filter(|e| e.kind == trace_model::HostKind::CpuOp)
        .count() as u64;
    assert_eq!(ops, plain["Operator"].0);
}

/// Every spelling in the category table reads as its kind, whatever its case; a
/// category the table does not list is kept and counted with its spelling.
#[test]
fn category_spellings_map_onto_the_model_and_unknown_ones_are_counted() {
    let text = r#"{"traceEvents": [
{"ph": "X", "cat": "Operator", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 50},
{"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 2, "dur": 3, "args": {"correlation": 1}},
{"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 1, "tid": 1, "ts": 6, "dur": 3, "args": {"correlation": 2}},
{"ph": "X", "cat": "Kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 10, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 13, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": 2}},
{"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 16, "dur": 2, "args": {"device": 0, "stream": 7}},
{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0, "tid": 7, "ts": 19, "dur": 2, "args": {"device": 0, "stream": 7}},
{"ph": "X", "cat": "Memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 22, "dur": 1, "args": {"device": 0, "stream": 7}},
{"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 24, "dur": 1, "args": {"device": 0, "stream": 7}},
{"ph": "X", "cat": "User annotation", "name": "forward", "pid": 1, "tid": 1, "ts": 0, "dur": 60},
{"ph": "X", "cat": "user_annotation", "name": "backward", "pid": 1, "tid": 1, "ts": 61, "dur": 5},
{"ph": "X", "cat": "gpu_user_Annotation", "name": "forward", "pid": 0, "tid": 7, "ts": 10, "dur": 20, "args": {"device": 0}},
{"ph": "X", "cat": "python_function", "name": "train.py(3): step", "pid": 1, "tid": 1, "ts": 0, "dur": 70},
{"ph": "X", "cat": "cpu_instant_event", "name": "x", "pid": 1, "tid": 1, "ts": 5, "dur": 0},
{"ph": "X", "cat": "my_plugin", "name": "y", "pid": 1, "tid": 1, "ts": 5, "dur": 1},
{"ph": "X", "cat": "my_plugin", "name": "z", "pid": 1, "tid": 1, "ts": 7, "dur": 1},
{"ph": "X", "cat": "Other Thing", "name": "w", "pid": 1, "tid": 1, "ts": 9, "dur": 1}
]}"#;
    use trace_model::{ActivityKind, HostKind};
    let c = chrome_reader::load_from(text.as_bytes(), Path::new("cats.json")).expect("reads");
    let kinds = |kind: ActivityKind| c.activities().iter().filter(|a| a.kind == kind).count();
    assert_eq!(
        [
            ActivityKind::Kernel,
            ActivityKind::Memcpy,
            ActivityKind::Memset
        ]
        .map(kinds),
        [2, 2, 2]
    );
    let host = |kind: HostKind| c.host_events().iter().filter(|e| e.kind == kind).count();
    assert_eq!(host(HostKind::CpuOp), 1);
    assert_eq!(host(HostKind::Launch), 2);
    assert_eq!(host(HostKind::Annotation), 2);
    assert_eq!(host(HostKind::PythonFrame), 1);
    assert_eq!(host(HostKind::Other), 4);
    assert_eq!(c.gpu_annotations().len(), 1);
    let unknown = c.diagnostics().get("unknown-category").expect("counted");
    assert_eq!(unknown.count, 3);
    assert!(
        unknown.message.contains(r#""my_plugin" 2"#)
            && unknown.message.contains(r#""Other Thing" 1"#),
        "{}",
        unknown.message
    );
    assert_eq!(unknown.first, "cats.json: event 14");
}
