//! The reference's failure cases: each is an error naming the file and place, never a panic.

use std::path::Path;

use lanes::{Error, Trace};
use serde_json::json;

use crate::support::*;

fn compact_err(text: &str) -> Error {
    match Trace::read(text.as_bytes(), Path::new("bad.json")) {
        Err(e) => e,
        Ok(trace) => match lanes::compact_trace(trace, &lanes::Config::default()) {
            Err(e) => e,
            Ok(_) => panic!("expected an error for {text}"),
        },
    }
}

fn check(text: &str, expect: &str) {
    let message = compact_err(text).to_string();
    assert!(
        message.contains(expect),
        "{message:?} should contain {expect:?}"
    );
    assert!(
        message.contains("bad.json"),
        "{message:?} should name the file"
    );
}

#[test]
fn single_trace_failures() {
    check(r#"{"foo": 1}"#, "not a Chrome trace");
    check(r#""just a string""#, "not a Chrome trace");
    check(
        &plain_trace(vec![annotation(1, 1.0, 1.0, 1)]).to_string(),
        "no GPU kernel/memcpy/memset slices",
    );
    let mut k = kernel("k", 7, 1.0, 1.0, None);
    k["args"]["stream"] = json!(8);
    check(
        &plain_trace(vec![k]).to_string(),
        "event 0 has tid 7 != stream 8",
    );
    let k = kernel("k", 7, 1.0, -2.0, None);
    check(
        &plain_trace(vec![json!({"ph": "i"}), k]).to_string(),
        "event 1 has negative duration -2",
    );
    let mut k = kernel("k", 7, 1.0, 1.0, None);
    k["args"] = json!({});
    check(&plain_trace(vec![k]).to_string(), "lacks args.stream");
    let mut k = kernel("k", 7, 1.0, 1.0, None);
    k.as_object_mut().expect("an object").remove("dur");
    check(&plain_trace(vec![k]).to_string(), "lacks dur");
}

/// The reference fails here; we keep the endpoint (and its stream's name) in place and
/// say so, because Kineto also binds ac2g flows to `cuda_sync` events on GPU streams.
#[test]
fn unmapped_flow_endpoints_are_a_diagnostic() {
    let sync = json!({"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7,
                      "ts": 5, "dur": 1, "args": {"stream": 7}});
    let trace = plain_trace(vec![
        thread_metadata(0, 7, "stream 7"),
        kernel("k", 7, 1.0, 1.0, None),
        sync,
        flow(7, 5.0),
    ]);
    let res = lanes::compact_trace(read(&trace, "sync.json"), &lanes::Config::default())
        .expect("usable input");
    assert_eq!(res.diagnostics.len(), 1, "{:?}", res.diagnostics);
    assert!(res.diagnostics[0].contains("1 of 1 ac2g flow endpoints"));
    let events = events_of(&res.trace);
    let flow = events.iter().find(|e| cat_is(e, "ac2g")).expect("kept");
    assert_eq!(flow["tid"], 7);
    assert!(
        events
            .iter()
            .any(|e| e["name"] == "thread_name" && e["args"]["name"] == "stream 7")
    );
}

fn merge_err(traces: &[serde_json::Value]) -> String {
    let traces = traces
        .iter()
        .enumerate()
        .map(|(i, t)| read(t, &format!("rank{i}_trace.json")))
        .collect();
    match lanes::merge_pp_traces(traces, &lanes::Config::default()) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("expected a merge error"),
    }
}

#[test]
fn merge_failures() {
    let ok = |rank| rank_trace(rank, 1_000, vec![kernel("k", 1, 1.0, 1.0, None)]);
    assert!(merge_err(&[ok(0)]).contains("fewer than two rank traces"));
    let mut no_base = ok(4);
    no_base
        .as_object_mut()
        .expect("an object")
        .remove("baseTimeNanoseconds");
    assert!(
        merge_err(&[ok(0), no_base])
            .contains("rank1_trace.json: all PP traces must contain integer baseTimeNanoseconds")
    );
    let mut float_base = ok(4);
    float_base["baseTimeNanoseconds"] = json!(1000.5);
    assert!(merge_err(&[ok(0), float_base]).contains("integer baseTimeNanoseconds"));
    let mut no_info = ok(4);
    no_info
        .as_object_mut()
        .expect("an object")
        .remove("distributedInfo");
    assert!(
        merge_err(&[ok(0), no_info]).contains("rank1_trace.json: trace is missing distributedInfo")
    );
    let mut no_rank = ok(4);
    no_rank["distributedInfo"]["rank"] = json!("4");
    assert!(merge_err(&[ok(0), no_rank]).contains("missing an integer rank"));
    assert!(merge_err(&[ok(4), ok(4)]).contains("duplicate distributed ranks: rank 4"));
}

#[test]
fn rank_file_discovery() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let write = |name: &str| std::fs::write(dir.path().join(name), "{}").expect("writable");
    write("rank0_trace.json");
    let err = lanes::rank_trace_paths(dir.path()).expect_err("one file is too few");
    assert!(
        err.to_string()
            .contains("found fewer than two rank traces in")
    );
    write("rank10_trace.json.gz");
    write("rank2_trace.json");
    write("other.json");
    let paths = lanes::rank_trace_paths(&dir.path().join("rank0_trace.json")).expect("three ranks");
    let names: Vec<String> = paths
        .iter()
        .map(|p| {
            p.file_name()
                .expect("a file")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(
        names,
        [
            "rank0_trace.json",
            "rank2_trace.json",
            "rank10_trace.json.gz"
        ]
    );
    write("rankX_trace.json");
    let err = lanes::rank_trace_paths(dir.path()).expect_err("a bad name");
    assert!(
        err.to_string().contains("invalid PP trace filename"),
        "{err}"
    );
}

/// A trace read by `Trace::read_file_for_compaction` keeps most texts in its file and reads
/// them again when it is written: a file that changed in between is an error naming it,
/// and nothing is written.
#[test]
fn input_changed_before_writing() {
    let trace = |extra: &str, more: bool| {
        let mut events = vec![
            json!({"name": "step", "ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 0, "dur": 9, "args": {"x": extra}}),
            kernel("k", 7, 1.0, 1.0, None),
            json!({"name": "later", "ph": "i", "pid": 1, "tid": 1, "ts": 5}),
        ];
        if more {
            events.push(json!({"name": "new", "ph": "i", "pid": 1, "tid": 1, "ts": 6}));
        }
        plain_trace(events).to_string()
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let input = dir.path().join("in.json");
    let original = trace("a", false);
    let longer = |changed: &str| {
        format!(
            "its JSON text is {} bytes long, was {}",
            changed.len(),
            original.len()
        )
    };
    let (longer_event, one_more) = (trace("longer", false), trace("a", true));
    for (changed, expect) in [
        (longer_event.clone(), longer(&longer_event)),
        (one_more.clone(), longer(&one_more)),
        (
            plain_trace(vec![kernel("k", 7, 1.0, 1.0, None)]).to_string(),
            "it ends within event 2".to_string(),
        ),
        // No event moves: only the CRC-32 tells.
        (trace("b", false), "its JSON text has CRC-32".to_string()),
    ] {
        std::fs::write(&input, &original).expect("writing the input");
        let lean = Trace::read_file_for_compaction(&input).expect("it reads");
        let compacted = lanes::compact_trace(lean, &lanes::Config::default()).expect("it compacts");
        std::fs::write(&input, &changed).expect("changing the input");
        let out = dir.path().join("out.json");
        let err = lanes::write_trace_file(&compacted.trace, &out).expect_err("the input changed");
        assert!(matches!(err, Error::InputChanged { .. }), "{err}");
        let message = err.to_string();
        assert!(
            message.contains(&expect),
            "{message:?} should contain {expect:?}"
        );
        assert!(
            message.contains("in.json"),
            "{message:?} should name the file"
        );
        assert!(!out.exists(), "nothing is written");
    }
    // Unchanged, it writes what a read holding every text writes.
    std::fs::write(&input, trace("a", false)).expect("writing the input");
    let config = lanes::Config::default();
    let mut outputs = [
        Trace::read_file(&input),
        Trace::read_file_for_compaction(&input),
    ]
    .map(|t| lanes::compact_trace(t.expect("it reads"), &config).expect("it compacts"))
    .map(|c| {
        let mut json = Vec::new();
        c.trace.write_json(&mut json).expect("it writes");
        json
    });
    let lean = outputs[1].split_off(0);
    assert!(outputs[0] == lean, "the same output");
    // The merge rewrites every event: it needs every text.
    let lean = || Trace::read_file_for_compaction(&input).expect("it reads");
    let err = lanes::merge_pp_traces(vec![lean(), lean()], &config).expect_err("texts in the file");
    assert!(matches!(err, Error::TextsInFile { .. }), "{err}");
}

/// A gzip input is inflated once: `Trace::read_file_for_compaction` keeps its inflated
/// text in a nameless scratch file, and writing copies the untouched events from there.
/// The output is what a read holding every text writes, even when the input file is
/// replaced between the read and the write (the text read is the one written).
#[test]
fn gzip_input_is_inflated_once() {
    use std::io::Write as _;
    let text = |name: &str| {
        plain_trace(vec![
            json!({"name": name, "ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 0, "dur": 9, "args": {"x": 1}}),
            kernel("k", 7, 1.0, 1.0, None),
            kernel("k2", 9, 3.0, 1.0, None),
            json!({"name": "later", "ph": "i", "pid": 1, "tid": 1, "ts": 5}),
        ])
        .to_string()
    };
    let gzip = |s: &str| {
        let mut w = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        w.write_all(s.as_bytes()).expect("writes to a Vec");
        w.finish().expect("writes to a Vec")
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let input = dir.path().join("in.json.gz");
    std::fs::write(&input, gzip(&text("step"))).expect("writing the input");
    let config = lanes::Config::default();
    let write = |t: Trace| {
        let c = lanes::compact_trace(t, &config).expect("it compacts");
        let mut json = Vec::new();
        c.trace.write_json(&mut json).expect("it writes");
        json
    };
    let full = write(Trace::read_file(&input).expect("it reads"));
    let lean = Trace::read_file_for_compaction(&input).expect("it reads");
    let compacted = lanes::compact_trace(lean, &config).expect("it compacts");
    std::fs::write(&input, gzip(&text("other"))).expect("replacing the input");
    let mut json = Vec::new();
    compacted
        .trace
        .write_json(&mut json)
        .expect("it writes from the scratch text");
    assert!(json == full, "the same output as a read holding every text");
    // Written twice, the same.
    let mut again = Vec::new();
    compacted
        .trace
        .write_json(&mut again)
        .expect("it writes again");
    assert!(again == full);
}
