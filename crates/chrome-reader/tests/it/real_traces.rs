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
        let copies = cats.get("gpu_memcpy").copied().unwrap_or(0)
            + cats.get("gpu_memset").copied().unwrap_or(0);
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
