//! PyTorch captures: the launch chain to Python lines on the traces taken with
//! `with_stack=True`, and the plain message on one without stacks.

use attribution::{Config, DecidedBy, MatchKind};
use trace_model::Nanos;

const WITH_STACKS: &[&str] = &[
    "tracelens-h100/gaunernst_bert-small-uncased__1016001.json.gz",
    "tracelens-h100/google_owlv2-large-patch14-ensemble__1016001.json.gz",
    "tracelens-h100-qwen/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    "tracelens-h100-qwen/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    "tracelens-vllm-rocm-graph/vllm_decode_full/graph_execution.json.gz",
    "tracelens-vllm-rocm-graph/vllm_prefilldecode_piecewise/graph_execution.json.gz",
];

#[test]
fn lines_sum_to_attributed_time() {
    let Some(dir) = test_support::traces_dir("lines_sum_to_attributed_time") else {
        return;
    };
    for file in WITH_STACKS {
        let path = dir.join("pytorch").join(file);
        let result = attribution::attribute_path(&path, &Config::default()).expect("attributes");
        assert!(result.has_python_stacks, "{file}");
        let lines = result.lines();
        assert!(!lines.is_empty(), "{file}");
        let line_time: Nanos = lines.iter().map(|l| l.gpu_time_ns).sum();
        let exact_time: Nanos = result
            .kernels
            .iter()
            .filter(|k| k.match_kind == MatchKind::Exact)
            .map(|k| k.dur_ns)
            .sum();
        assert_eq!(line_time, exact_time, "{file}");
        assert_eq!(line_time, result.attributed_time_ns(), "{file}");
        // Every kernel once, and every `none` with its reason.
        let capture = chrome_reader::load(&path).expect("loads");
        assert_eq!(result.kernels.len(), capture.activities().len(), "{file}");
        for k in &result.kernels {
            match k.match_kind {
                MatchKind::Exact => assert_eq!(k.decided_by, DecidedBy::CorrelationChain),
                MatchKind::None => assert!(matches!(
                    k.decided_by,
                    DecidedBy::NoLaunch
                        | DecidedBy::NoCpuOp
                        | DecidedBy::NoPythonStack
                        | DecidedBy::NoUserFrame
                )),
                other => panic!("{file}: PyTorch kernels are exact or none, not {other:?}"),
            }
        }
        // The default user rule never picks torch's own files or the standard library.
        assert!(
            lines.iter().all(|l| !l.source_line.starts_with("torch/")
                && !l.source_line.starts_with("threading.py")),
            "{file}"
        );
    }
}

#[test]
fn user_re_chooses_the_frame() {
    let Some(dir) = test_support::traces_dir("user_re_chooses_the_frame") else {
        return;
    };
    let path = dir.join("pytorch").join(WITH_STACKS[0]);
    let config = Config {
        user_re: Some(regex::Regex::new("^moca/").expect("regex")),
        ..Config::default()
    };
    let result = attribution::attribute_path(&path, &config).expect("attributes");
    let lines = result.lines();
    assert!(!lines.is_empty());
    assert!(
        lines.iter().all(|l| l.source_line.starts_with("moca/")),
        "{lines:?}"
    );
}

#[test]
fn without_stacks_ops_and_the_message() {
    let path =
        test_support::workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json");
    let result = attribution::attribute_path(&path, &Config::default()).expect("attributes");
    assert!(!result.has_python_stacks);
    assert!(result.lines().is_empty());
    assert!(!result.ops().is_empty(), "ops.csv still has the CPU ops");
    assert!(
        result.notes.iter().any(|n| n.code == "no-python-stacks"),
        "{:?}",
        result.notes
    );
    assert!(
        result
            .kernels
            .iter()
            .all(|k| k.match_kind == MatchKind::None)
    );
    assert!(
        result
            .kernels
            .iter()
            .any(|k| k.decided_by == DecidedBy::NoPythonStack)
    );
}

#[test]
fn graph_replay_goes_on_the_new_capture_list() {
    let Some(dir) = test_support::traces_dir("graph_replay_goes_on_the_new_capture_list") else {
        return;
    };
    let path = dir.join("pytorch").join(WITH_STACKS[4]);
    let result = attribution::attribute_path(&path, &Config::default()).expect("attributes");
    let (graph, attributed) = result.graph_time_ns();
    // vllm_decode_full: 421 of 434 kernels are graph replays without an enclosing CPU op
    // (measured), so most graph time has no line.
    assert!(
        graph > Nanos::ZERO && attributed.0 * 10 < graph.0,
        "{graph} {attributed}"
    );
    assert!(
        result
            .needs_new_capture
            .iter()
            .any(|n| n.contains("without CUDA/HIP graphs"))
    );
}

#[test]
fn rows_naming_the_same_string_share_one_allocation() {
    // Issue 45, finding 6: a row holds a shared name, not a copy; every row that names the
    // same text holds the same allocation (kernel names and op names alike).
    let path =
        test_support::workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json");
    let result = attribution::attribute_path(&path, &Config::default()).expect("attributes");
    let mut first: std::collections::HashMap<&str, &attribution::SharedName> =
        std::collections::HashMap::new();
    let mut shared = 0;
    for k in &result.kernels {
        for name in [&k.name, &k.op_name] {
            if name.is_empty() {
                continue;
            }
            match first.get(name.as_str()) {
                Some(seen) => {
                    assert!(seen.ptr_eq(name), "{name} copied, not shared");
                    shared += 1;
                }
                None => {
                    first.insert(name.as_str(), name);
                }
            }
        }
    }
    assert!(
        shared > 0,
        "the capture repeats no name: the test shows nothing"
    );
}
