//! Every real trace loads; per file, event counts by category and phase equal MANIFEST.md.

use std::collections::BTreeMap;
use std::path::Path;

use crate::traces_dir;

/// Counts by `cat` and by `ph` of one file.
type Counts = (BTreeMap<String, u64>, BTreeMap<String, u64>);

/// Parses MANIFEST.md's "Event counts by `cat`" list: file → (cat counts, ph counts).
fn manifest_counts(manifest: &str) -> BTreeMap<String, Counts> {
    let mut out = BTreeMap::new();
    for line in manifest.lines() {
        let Some(rest) = line.strip_prefix("- `") else {
            continue;
        };
        let Some((file, rest)) = rest.split_once('`') else {
            continue;
        };
        let Some((_, counts)) = rest.split_once("): ") else {
            continue;
        };
        let Some((cats, phs)) = counts.split_once(". ph: ") else {
            continue;
        };
        let parse = |s: &str| -> BTreeMap<String, u64> {
            s.split(", ")
                .filter_map(|kv| {
                    let (k, v) = kv.trim().rsplit_once(':')?;
                    Some((k.to_string(), v.trim().parse().ok()?))
                })
                .collect()
        };
        out.insert(file.to_string(), (parse(cats), parse(phs)));
    }
    out
}

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
    let Some(dir) = traces_dir("pytorch_counts_match_manifest") else {
        return;
    };
    let dir = dir.join("pytorch");
    let manifest =
        std::fs::read_to_string(dir.join("MANIFEST.md")).expect("MANIFEST.md is readable");
    let expected = manifest_counts(&manifest);
    assert!(
        expected.len() >= 25,
        "MANIFEST.md lists {} traces",
        expected.len()
    );
    for (file, (cats, phs)) in &expected {
        let path = dir.join(file);
        let (got_cats, got_phs) = count(&path);
        assert_eq!(&got_cats, cats, "{file}: counts by cat");
        assert_eq!(&got_phs, phs, "{file}: counts by ph");
        // The model builder accepts every one of them too.
        let capture = chrome_reader::load(&path).unwrap_or_else(|e| panic!("{e}"));
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
    let Some(dir) = traces_dir("every_gpu_activity_has_a_launch") else {
        return;
    };
    let path = dir.join("pytorch/hta-v100-2rank-large/df_index_resolver.json.gz");
    let capture = chrome_reader::load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(capture.format(), trace_model::Format::KinetoJson);
    assert_eq!(capture.meta().rank, Some(1));
    assert_eq!(capture.meta().world_size, Some(2));
    let linked = capture
        .activities()
        .iter()
        .filter(|a| a.launch.is_some())
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
        capture.steps().len(),
        5,
        "ProfilerStep# count from MANIFEST.md"
    );
}

#[test]
fn jax_trace_json_loads_devices_and_streams() {
    let Some(dir) = traces_dir("jax_trace_json_loads") else {
        return;
    };
    let path = dir.join("jax/rocm-mi300-jax08-gemm/regenerated-jaxlib0.10.2.trace.json.gz");
    let capture = chrome_reader::load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(capture.format(), trace_model::Format::JaxTraceJson);
    // MANIFEST.md: GPU:0 has 54 events, Stream #16 = 42, Stream #17 = 12.
    assert_eq!(capture.activities().len(), 54);
    let mut per_stream: BTreeMap<i64, usize> = BTreeMap::new();
    for a in capture.activities() {
        *per_stream
            .entry(capture.stream(a.stream).ordinal)
            .or_insert(0) += 1;
    }
    assert_eq!(per_stream, BTreeMap::from([(16, 42), (17, 12)]));
    let linked = capture
        .activities()
        .iter()
        .filter(|a| a.launch.is_some())
        .count();
    assert_eq!(
        linked, 54,
        "every JAX GPU event has its launch by correlation_id"
    );
}
