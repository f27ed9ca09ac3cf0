//! Issue 46, must-show 3: `args` only when asked, in the frame. The full frame (every
//! `args_*` column) splits every event's `args`; profile-model's analyses, whose frame
//! keeps no `args_*` column (their timelines come from the capture), split none. Counted by
//! `trace_frame::args_scanned`, as `chrome_reader::args_decoded` counts the model's decodes.
//!
//! A test binary of its own: the counter is per process.

use std::collections::HashMap;
use std::path::Path;

use serde_json::value::RawValue;

/// The `args` text of each event of `path` that has `args`, as the file wrote it.
fn args_texts(path: &Path) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Doc {
        #[serde(rename = "traceEvents")]
        events: Vec<HashMap<String, Box<RawValue>>>,
    }
    let text = test_support::inflated(path);
    let doc: Doc =
        serde_json::from_slice(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (doc.events.iter())
        .filter_map(|e| e.get("args").map(|a| a.get().to_owned()))
        .collect()
}

/// How many `args` texts `f` makes the frames split.
fn scanned(f: impl FnOnce()) -> u64 {
    let before = trace_frame::args_scanned();
    f();
    trace_frame::args_scanned() - before
}

/// The counts of one trace: the full frame splits every event's `args`, profile-model's
/// analyses none. Returns (all, analyses).
fn check(path: &Path) -> (u64, u64) {
    let texts = args_texts(path);
    let all = scanned(|| {
        trace_frame::read_frame(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    });
    let analyses = scanned(|| {
        let analyses = [trace_frame::AnalysisName::Temporal];
        let step = trace_frame::StepQuery::default();
        // The frame is read whether or not the report can be made of it (a trace without
        // GPU work has none): the count is the frame's.
        let (_loaded, _report) = trace_frame::load_and_analyze(path, None, &analyses, &step)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    });
    assert_eq!(
        all,
        texts.len() as u64,
        "{}: the full frame",
        path.display()
    );
    assert_eq!(analyses, 0, "{}: the analyses' frame", path.display());
    (all, analyses)
}

#[test]
fn a_frame_splits_only_the_args_it_asks_for() {
    // A trace none of whose `args` the analyses read but a kernel's: CPU ops, a Python
    // frame, an instant, metadata.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rank0.json");
    std::fs::write(
        &path,
        r#"{"traceEvents": [
  {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
   "args": {"External id": 3, "Ev Idx": 1, "Input Dims": [[2, 2], [2, 2]]}},
  {"ph": "X", "cat": "python_function", "name": "f", "pid": 1, "tid": 1, "ts": 9, "dur": 7,
   "args": {"Python id": 4, "Python parent id": 2}},
  {"ph": "i", "cat": "cpu_instant_event", "name": "x", "pid": 1, "tid": 1, "ts": 12, "s": "t",
   "args": {"Ev Idx": 5}},
  {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 20, "dur": 3,
   "args": {"stream": 7, "correlation": 9, "device": 0}}
]}"#,
    )
    .unwrap();
    assert_eq!(check(&path), (5, 0));

    // The Kineto fixtures the analyses' frame reads, and every shared Kineto trace.
    let root = test_support::workspace_root().join("testdata/chrome/ok");
    let mut files: Vec<_> = test_support::json_files(&root)
        .into_iter()
        .filter(|p| {
            trace_frame::read_frame(p).is_ok()
                && serde_json::from_slice::<serde_json::Value>(&test_support::inflated(p))
                    .is_ok_and(|d| d.get("traceEvents").is_some_and(|e| e.is_array()))
        })
        .collect();
    assert!(files.len() >= 5, "{} fixtures", files.len());
    if let Some(set) = test_support::real_traces("a_frame_splits_only_the_args_it_asks_for") {
        files.extend(set.kineto.iter().map(|t| t.path.clone()));
    }
    let (mut all, mut analyses) = (0, 0);
    for path in &files {
        let (a, b) = check(path);
        all += a;
        analyses += b;
    }
    eprintln!(
        "{} traces: the full frames split {all} args, the analyses' frames {analyses}",
        files.len()
    );
    assert!(all > 0 && analyses == 0, "{analyses} of {all}");
}
