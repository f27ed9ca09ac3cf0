//! The real PyTorch traces under `$TRACEWISE_TRACES/pytorch`: every one with GPU slices
//! compacts, passes the self-check, keeps every other event unchanged but for the
//! documented remaps, and writes an output that validates and reads back.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use lanes::{Trace, validate};
use serde_json::Value;

use crate::support::*;

fn trace_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
    entries.sort();
    for path in entries {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if path.is_dir() {
            if name != "reference-outputs" {
                trace_files(&path, out);
            }
        } else if (name.ends_with(".json") || name.ends_with(".json.gz"))
            && name != "execution_details.json"
        {
            out.push(path);
        }
    }
}

const SLICE_CATS: [&str; 4] = ["kernel", "Kernel", "gpu_memcpy", "gpu_memset"];

fn is_slice(v: &Value) -> bool {
    v.get("cat")
        .and_then(Value::as_str)
        .is_some_and(|c| SLICE_CATS.contains(&c))
}

/// A slice without the two fields the compaction may change.
fn without_placement(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove("tid");
    }
    if let Some(a) = v.get_mut("args").and_then(Value::as_object_mut) {
        a.remove("stream");
    }
    v
}

fn check_trace(path: &Path) -> Option<(usize, usize)> {
    let mut input_texts = Vec::new();
    chrome_reader::read_raw_file(path, |ev| {
        input_texts.push(ev.json.to_string());
        Ok(())
    })
    .expect("the real traces read");
    let input: Vec<Value> = input_texts
        .iter()
        .map(|t| serde_json::from_str(t).expect("valid JSON"))
        .collect();
    let slice_count = input.iter().filter(|v| is_slice(v)).count();
    let trace = Trace::read_file(path).expect("the real traces read");
    let res = lanes::compact_trace(trace);
    if slice_count == 0 {
        let err = res.expect_err("a trace without GPU slices is an error");
        assert!(matches!(err, lanes::Error::NoGpuSlices { .. }), "{err}");
        println!("{}: no GPU slices (error, as expected)", path.display());
        return None;
    }
    let res = res.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let s = &res.summary;
    assert_eq!(s.measured_slices, slice_count, "{}", path.display());

    // Measured slices: same order, same fields but tid/args.stream.
    let output_texts: Vec<&str> = res.trace.event_texts().collect();
    let output: Vec<Value> = output_texts
        .iter()
        .map(|t| serde_json::from_str(t).expect("valid JSON"))
        .collect();
    let before: Vec<Value> = input
        .iter()
        .filter(|v| is_slice(v))
        .map(without_placement)
        .collect();
    let after: Vec<Value> = output
        .iter()
        .filter(|v| is_slice(v))
        .map(without_placement)
        .collect();
    assert!(
        before == after,
        "{}: a measured slice changed",
        path.display()
    );

    // Every other input event is in the output byte for byte, unless it is one of the
    // documented remaps.
    let mut available: HashMap<&str, usize> = HashMap::new();
    for t in &output_texts {
        *available.entry(t).or_default() += 1;
    }
    let (mut flows_moved, mut annotations_moved, mut metadata_dropped) = (0, 0, 0);
    for (text, value) in input_texts.iter().zip(&input) {
        if is_slice(value) {
            continue;
        }
        if let Some(n) = available.get_mut(text.as_str())
            && *n > 0
        {
            *n -= 1;
            continue;
        }
        let cat = value.get("cat").and_then(Value::as_str);
        let name = value.get("name").and_then(Value::as_str);
        match (value["ph"].as_str(), cat, name) {
            (_, Some("ac2g"), _) => flows_moved += 1,
            (_, Some("gpu_user_annotation"), _) => annotations_moved += 1,
            (Some("M"), _, Some("thread_name" | "thread_sort_index")) => metadata_dropped += 1,
            _ => panic!(
                "{}: event changed without a documented remap: {text}",
                path.display()
            ),
        }
    }
    assert_eq!(
        flows_moved,
        s.gpu_flow_endpoints_mapped,
        "{}",
        path.display()
    );
    assert!(
        annotations_moved <= s.gpu_annotations_mapped,
        "{}",
        path.display()
    );
    assert!(
        metadata_dropped <= 2 * s.original_streams,
        "{}",
        path.display()
    );

    // The written output validates and reads back with the same GPU slice count.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = dir.path().join("out.json.gz");
    lanes::write_trace_file(&res.trace, &out).expect("the output is written");
    let input_report = validate::validate_file(path).expect("input validates");
    let report = validate::validate_file(&out).expect("output reads back");
    assert_eq!(report.gpu_slices, slice_count);
    assert!(
        report.unnamed_gpu_threads.is_empty(),
        "{}: {report:?}",
        path.display()
    );
    assert!(report.missing_fields.len() <= input_report.missing_fields.len());
    let new_one_sided: BTreeSet<&String> = report
        .one_sided_flows
        .difference(&input_report.one_sided_flows)
        .collect();
    assert!(
        new_one_sided.is_empty(),
        "{}: {new_one_sided:?}",
        path.display()
    );
    let mut readback = 0;
    chrome_reader::read_raw_file(&out, |ev| {
        if ev.cat.as_deref().is_some_and(|c| SLICE_CATS.contains(&c)) {
            readback += 1;
        }
        Ok(())
    })
    .expect("the output reads back");
    assert_eq!(readback, slice_count);
    Some((s.original_streams, s.compacted_lanes))
}

#[test]
fn real_pytorch_traces_compact_and_check() {
    let Some(dir) = traces_dir() else {
        println!("skipped: TRACEWISE_TRACES is not set");
        return;
    };
    let mut files = Vec::new();
    trace_files(&dir.join("pytorch"), &mut files);
    assert!(!files.is_empty(), "no traces under {}", dir.display());
    for path in files {
        if let Some((streams, lanes)) = check_trace(&path) {
            println!(
                "{}: original_streams {streams}, compacted_lanes {lanes}",
                path.display()
            );
        }
    }
}
