//! The real PyTorch traces under `$TRACEWISE_TRACES/pytorch`: every one with GPU slices
//! compacts, passes the self-check, keeps every other event unchanged but for the
//! documented remaps, and writes an output that validates and reads back; with semantic
//! lanes too, where every collective (by the workspace table) is in a communication lane.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use lanes::{Trace, validate};
use serde_json::Value;

const SLICE_CATS: [&str; 4] = ["kernel", "Kernel", "gpu_memcpy", "gpu_memset"];

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

/// One event as the raw reader saw it.
struct Seen {
    text: String,
    slice: bool,
    ph: String,
    cat: Option<String>,
    name: Option<String>,
}

fn read_events(path: &Path) -> Vec<Seen> {
    let mut out = Vec::new();
    chrome_reader::read_raw_file(path, |ev| {
        out.push(Seen {
            text: ev.json.to_string(),
            slice: ev.cat.as_deref().is_some_and(|c| SLICE_CATS.contains(&c)),
            ph: ev.ph.to_string(),
            cat: ev.cat.as_deref().map(str::to_string),
            name: ev.name.as_deref().map(str::to_string),
        });
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    out
}

fn check_trace(path: &Path) -> Option<(usize, usize)> {
    let input = read_events(path);
    let slice_count = input.iter().filter(|e| e.slice).count();
    let trace = Trace::read_file(path).expect("the real traces read");
    let res = lanes::compact_trace(trace, &lanes::Config::default());
    if slice_count == 0 {
        let err = res.expect_err("a trace without GPU slices is an error");
        assert!(matches!(err, lanes::Error::NoGpuSlices { .. }), "{err}");
        println!("{}: no GPU slices (error, as expected)", path.display());
        return None;
    }
    let res = res.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let s = &res.summary;
    assert_eq!(s.measured_slices, slice_count, "{}", path.display());

    // The tool's read leaves the texts it does not rewrite in the file and reads them again
    // when writing: the same output, byte for byte, with less of the text held.
    let lean = Trace::read_file_for_compaction(path).expect("the real traces read");
    let lean = lanes::compact_trace(lean, &lanes::Config::default()).expect("it compacts");
    assert_eq!(lean.summary, res.summary, "{}", path.display());
    let (mut held_json, mut lean_json) = (Vec::new(), Vec::new());
    res.trace.write_json(&mut held_json).expect("in memory");
    lean.trace
        .write_json(&mut lean_json)
        .expect("the input reads again");
    assert!(
        held_json == lean_json,
        "{}: the output differs when texts stay in the file",
        path.display()
    );
    drop((lean, held_json, lean_json));

    // The written output reads back through chrome-reader with the same slices.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = dir.path().join("out.json.gz");
    lanes::write_trace_file(&res.trace, &out).expect("the output is written");
    let output = read_events(&out);
    assert_eq!(output.iter().filter(|e| e.slice).count(), slice_count);

    // The model builder sees the same GPU activities in the output as in the input.
    let before = chrome_reader::load(path)
        .expect("the input loads")
        .activities()
        .len();
    let after = chrome_reader::load(&out)
        .expect("the output loads")
        .activities()
        .len();
    assert_eq!(before, after, "{}: GPU activities", path.display());

    // Measured slices: same order, same fields but tid/args.stream.
    let slices = |events: &[Seen]| -> Vec<Value> {
        events
            .iter()
            .filter(|e| e.slice)
            .map(|e| without_placement(&serde_json::from_str(&e.text).expect("valid JSON")))
            .collect()
    };
    assert!(
        slices(&input) == slices(&output),
        "{}: a measured slice changed",
        path.display()
    );

    // Every other input event is in the output byte for byte, unless it is one of the
    // documented remaps.
    let mut available: HashMap<&str, usize> = HashMap::new();
    for e in &output {
        *available.entry(&e.text).or_default() += 1;
    }
    let (mut flows_moved, mut annotations_moved, mut metadata_dropped) = (0, 0, 0);
    for e in input.iter().filter(|e| !e.slice) {
        if let Some(n) = available.get_mut(e.text.as_str())
            && *n > 0
        {
            *n -= 1;
            continue;
        }
        match (e.ph.as_str(), e.cat.as_deref(), e.name.as_deref()) {
            (_, Some("ac2g"), _) => flows_moved += 1,
            (_, Some("gpu_user_annotation"), _) => annotations_moved += 1,
            ("M", _, Some("thread_name" | "thread_sort_index")) => metadata_dropped += 1,
            _ => panic!(
                "{}: event changed without a documented remap: {}",
                path.display(),
                e.text
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

    // The output is structurally valid.
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
    check_semantic(path, &input, &slices(&input));
    Some((s.original_streams, s.compacted_lanes))
}

/// Semantic lanes on a real trace: the self-check passes, the slices are unchanged, and a
/// kernel is in a `Communication` lane exactly when the workspace table calls it a
/// collective.
fn check_semantic(path: &Path, input: &[Seen], input_slices: &[Value]) {
    let config = lanes::Config {
        lanes: lanes::LaneGrouping::Semantic,
    };
    let trace = Trace::read_file(path).expect("the real traces read");
    let res =
        lanes::compact_trace(trace, &config).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let output: Vec<Value> = res
        .trace
        .event_texts()
        .map(|t| serde_json::from_str(&t).expect("output events are valid JSON"))
        .collect();
    let is_slice = |e: &Value| e["cat"].as_str().is_some_and(|c| SLICE_CATS.contains(&c));
    let output_slices: Vec<Value> = output
        .iter()
        .filter(|e| is_slice(e))
        .map(without_placement)
        .collect();
    assert!(
        output_slices == input_slices,
        "{}: a measured slice changed",
        path.display()
    );
    let lane_names: BTreeMap<(i64, i64), &str> = output
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .filter_map(|e| {
            Some((
                (e["pid"].as_i64()?, e["tid"].as_i64()?),
                e["args"]["name"].as_str()?,
            ))
        })
        .collect();
    let mut collectives = 0;
    for e in output
        .iter()
        .filter(|e| is_slice(e) && e["cat"] != "gpu_memcpy" && e["cat"] != "gpu_memset")
    {
        let name = e["name"].as_str().unwrap_or("");
        let lane = (e["pid"].as_i64(), e["tid"].as_i64());
        let lane = match lane {
            (Some(pid), Some(tid)) => lane_names.get(&(pid, tid)).copied().unwrap_or(""),
            _ => "",
        };
        let collective = trace_model::classify_kernel(name).is_collective();
        collectives += usize::from(collective);
        assert_eq!(
            lane.starts_with("Communication "),
            collective,
            "{}: {name} is in lane {lane:?}",
            path.display()
        );
    }
    let nccl = input
        .iter()
        .filter(|e| {
            e.slice
                && e.name
                    .as_deref()
                    .is_some_and(|n| n.to_lowercase().contains("nccl"))
        })
        .count();
    assert!(
        collectives >= nccl,
        "{}: {collectives} collectives, {nccl} NCCL kernels",
        path.display()
    );
}

#[test]
fn real_pytorch_traces_compact_and_check() {
    let Some(set) = test_support::real_traces("lanes real_pytorch_traces_compact_and_check") else {
        return;
    };
    // Every trace of pytorch/MANIFEST.md (test-support checks the folders hold no other).
    let files: Vec<PathBuf> = set.kineto.iter().map(|t| t.path.clone()).collect();
    assert!(!files.is_empty(), "no traces in {}", set.root.display());
    for path in files {
        if let Some((streams, lanes)) = check_trace(&path) {
            println!(
                "{}: original_streams {streams}, compacted_lanes {lanes}",
                path.display()
            );
        }
    }
}

/// Two real ranks without PP annotations merge: no arrows, nothing unmatched, every
/// slice kept, and a valid output. (The sampled HTA ranks lack `baseTimeNanoseconds`;
/// the test adds one per rank, 1.5 µs apart.)
#[test]
fn real_ranks_merge_without_annotations() {
    let Some(dir) = test_support::traces_dir("lanes real_ranks_merge_without_annotations") else {
        return;
    };
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let mut slices = 0;
    for (rank, base) in [(0, 1_000_000_000_i64), (1, 1_000_001_500)] {
        let source = dir.join(format!(
            "pytorch/hta-sampled-2rank/sampled_rank-{rank}.json.gz"
        ));
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut chrome_reader::open(&source).expect("the sampled ranks open"),
            &mut text,
        )
        .expect("the sampled ranks read");
        let text = text.replacen('{', &format!("{{\"baseTimeNanoseconds\": {base}, "), 1);
        slices += read_events_text(&text);
        std::fs::write(tmp.path().join(format!("rank{rank}_trace.json")), text).expect("writable");
    }
    let paths = lanes::rank_trace_paths(tmp.path()).expect("two ranks");
    let merged = lanes::merge_pp_files(&paths, &lanes::Config::default())
        .expect("the merge works without annotations");
    let s = &merged.summary;
    assert_eq!(s.pp_send_recv_pairs + s.pp_compute_dependency_pairs, 0);
    assert_eq!(
        s.pp_send_recv_unmatched + s.pp_compute_dependency_unmatched,
        0
    );
    assert_eq!(
        s.time_offsets_us.values().copied().collect::<Vec<_>>(),
        [0.0, 1.5]
    );
    let measured: usize = s
        .per_rank_compaction
        .values()
        .map(|c| c.measured_slices)
        .sum();
    assert_eq!(measured, slices);
    let out = tmp.path().join("merged.json.gz");
    lanes::write_trace_file(&merged.trace, &out).expect("written");
    let report = validate::validate_file(&out).expect("the output reads back");
    assert_eq!(report.gpu_slices, slices);
    assert!(report.unnamed_gpu_threads.is_empty(), "{report:?}");
    assert!(
        report.missing_fields.is_empty(),
        "{:?}",
        &report.missing_fields[..3.min(report.missing_fields.len())]
    );
}

fn read_events_text(text: &str) -> usize {
    let mut slices = 0;
    chrome_reader::read_raw_events(text.as_bytes(), Path::new("rank.json"), |ev| {
        slices += usize::from(ev.cat.as_deref().is_some_and(|c| SLICE_CATS.contains(&c)));
        Ok(())
    })
    .expect("valid trace");
    slices
}
