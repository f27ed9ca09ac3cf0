//! End-to-end tests of the `analyze-profile` binary: the synthetic fixture (always), the
//! the reference script's golden outputs on the real traces (when `TRACEWISE_TRACES` is
//! set), errors, a closed pipe.
//!
//! Every run uses the workspace root as its current directory and passes trace paths as
//! `testdata/...` or `<TRACEWISE_TRACES>/pytorch/...`, the spellings the golden files
//! were made with (see `xtask/src/fixtures.rs`). When `TRACEWISE_TRACES` is spelled
//! other than `../shared/traces`, the one `[loading] PATH` line of our output is
//! rewritten to the canonical spelling before comparing; nothing else is normalised.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const TINY_RANK0: &str = "testdata/chrome/ok/tiny-train/rank0.pt.trace.json";
const TINY_DIR: &str = "testdata/chrome/ok/tiny-train";
const EDGE_CASES: &str = "testdata/chrome/ok/compat-edge-cases.json";
const GOLDEN_DIR: &str = "testdata/golden/analyze-profile";
const CANONICAL_TRACES: &str = "../shared/traces";

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn analyze_profile(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_analyze-profile"))
        .args(args)
        .current_dir(workspace_root())
        .output()
        .expect("the test can start the analyze-profile binary")
}

fn stdout_of(args: &[&str]) -> String {
    let out = analyze_profile(args);
    assert!(
        out.status.success(),
        "analyze-profile {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("output is UTF-8")
}

fn golden(key: &str, ext: &str) -> String {
    let path = workspace_root()
        .join(GOLDEN_DIR)
        .join(format!("{key}.{ext}"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: missing golden file ({e}); run `cargo xtask fixtures`",
            path.display()
        )
    })
}

/// Parsed JSON equality with numbers compared as f64 (the reference script mixes ints and
/// floats).
fn assert_same_json(ours: &str, theirs: &str, what: &str) {
    let ours: serde_json::Value = serde_json::from_str(ours).expect("our --json is JSON");
    let theirs: serde_json::Value = serde_json::from_str(theirs).expect("golden is JSON");
    fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
        use serde_json::Value;
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len()
                    && x.keys().eq(y.keys())
                    && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
            }
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w))
            }
            _ => a == b,
        }
    }
    assert!(
        same(&ours, &theirs),
        "{what}: --compat --json differs from the reference script's --json"
    );
}

#[test]
fn cli_is_consistent() {
    // `Args` lives in main.rs; its debug_assert runs as a unit test there. Here: --help
    // explains both modes.
    let help = stdout_of(&["--help"]);
    assert!(help.contains("--compat"), "{help}");
    assert!(help.contains("Default mode"), "{help}");
    assert!(help.contains("--trace-file"), "{help}");
}

#[test]
fn compat_matches_the_reference_script_on_the_synthetic_traces() {
    let paths = [
        format!("{TINY_DIR}/rank0.pt.trace.json"),
        format!("{TINY_DIR}/rank1.pt.trace.json"),
        EDGE_CASES.to_owned(),
    ];
    for path in &paths {
        let key = path.replace('/', "__");
        assert_eq!(
            stdout_of(&["--compat", "--trace_file", path]),
            golden(&key, "txt"),
            "{path}"
        );
        let json = stdout_of(&["--compat", "--json", "--trace-file", path]);
        assert_same_json(&json, &golden(&key, "json"), path);
        // Byte for byte too: we write floats and escapes as json.dumps does.
        assert_eq!(json, golden(&key, "json"), "{path}");
    }
}

#[test]
fn compat_flag_spellings_are_accepted() {
    let a = stdout_of(&["--compat", "--trace_dir", TINY_DIR, "--top_n", "3"]);
    let b = stdout_of(&["--compat", "--trace-dir", TINY_DIR, "--top-n", "3"]);
    assert_eq!(a, b);
    // --trace-dir takes the first matching file, as the reference script does.
    assert!(
        a.contains(&format!("[loading] {TINY_DIR}/rank0.pt.trace.json")),
        "{a}"
    );
    assert!(!a.contains("rank1"), "{a}");
    assert!(a.contains(" Top 3 CUDA ops:"), "{a}");
}

#[test]
fn default_mode_on_the_synthetic_trace() {
    let text = stdout_of(&["--trace-file", TINY_RANK0]);
    insta::assert_snapshot!("default_text_rank0", text);
    let json = stdout_of(&["--trace-file", TINY_RANK0, "--json", "--top-n", "5"]);
    insta::assert_snapshot!("default_json_rank0", json);

    let value: serde_json::Value = serde_json::from_str(&json).expect("--json is JSON");
    let gpu = value["gpu_time_ns"].as_i64().expect("gpu_time_ns");
    let buckets = value["buckets"].as_array().expect("buckets");
    let sum: i64 = buckets
        .iter()
        .map(|b| b["time_ns"].as_i64().expect("time_ns"))
        .sum();
    assert_eq!(sum, gpu, "buckets sum to the GPU time");
    assert!(buckets.iter().any(|b| b["bucket"] == "matmul (GEMM)"));
    assert_eq!(value["ops"].as_array().map(Vec::len), Some(5));
}

#[test]
fn all_ranks_side_by_side() {
    let text = stdout_of(&["--trace-dir", TINY_DIR, "--all-ranks"]);
    insta::assert_snapshot!("all_ranks_text", text);
    let json = stdout_of(&["--trace-dir", TINY_DIR, "--all-ranks", "--json"]);
    let value: serde_json::Value = serde_json::from_str(&json).expect("--json is JSON");
    let ranks = value["ranks"].as_array().expect("ranks");
    assert_eq!(ranks.len(), 2);
    assert_eq!(ranks[0]["rank"], 0);
    assert_eq!(ranks[1]["rank"], 1);
    // --compat --all-ranks: the reference script's report for each file, one after the
    // other.
    let compat = stdout_of(&["--compat", "--trace-dir", TINY_DIR, "--all-ranks"]);
    let expected = golden(
        &format!("{TINY_DIR}/rank0.pt.trace.json").replace('/', "__"),
        "txt",
    ) + &golden(
        &format!("{TINY_DIR}/rank1.pt.trace.json").replace('/', "__"),
        "txt",
    );
    assert_eq!(compat, expected);
}

/// `--trace-dir --all-ranks` over a directory with an unreadable rank: the readable rank
/// is reported, the unreadable one named on stderr and in the output (`not_read` in
/// JSON), exit 3. Without --all-ranks only the first file is read: rank 0, complete.
#[test]
fn partial_rank_directory_reports_the_readable_ranks_and_exits_3() {
    let ranks = test_support::partial_rank_dir();
    let dir = ranks.path().to_str().expect("UTF-8 path");
    let out = analyze_profile(&["--trace-dir", dir, "--all-ranks"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert_eq!(
        stderr
            .matches("rank1.pt.trace.json: truncated JSON")
            .count(),
        1,
        "{stderr}"
    );
    assert!(stdout.contains("1 files"), "{stdout}");
    assert!(stdout.contains("rank0.pt.trace.json"), "{stdout}");
    assert!(
        stdout.contains("not read (not in the columns above)")
            && stdout.contains("rank1.pt.trace.json: truncated JSON"),
        "{stdout}"
    );
    let out = analyze_profile(&["--trace-dir", dir, "--all-ranks", "--json"]);
    assert_eq!(out.status.code(), Some(3));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(json["ranks"].as_array().map(Vec::len), Some(1), "{json}");
    assert_eq!(json["not_read"].as_array().map(Vec::len), Some(1), "{json}");
    let out = analyze_profile(&["--trace-dir", dir]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn default_mode_on_the_compat_edge_cases() {
    let text = stdout_of(&["--trace-file", EDGE_CASES, "--top-n", "-3"]);
    insta::assert_snapshot!("default_text_edge_cases", text);
}

#[test]
fn same_input_gives_identical_output() {
    let a = stdout_of(&["--trace-file", TINY_RANK0, "--json"]);
    let b = stdout_of(&["--trace-file", TINY_RANK0, "--json"]);
    assert_eq!(a, b);
}

#[test]
fn a_file_that_is_not_a_trace_is_a_one_line_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("config.json");
    std::fs::write(&path, r#"{"model": "llama", "layers": 32}"#).expect("write temp file");
    let path = path.to_str().expect("temp path is UTF-8");
    for args in [
        vec!["--trace-file", path],
        vec!["--compat", "--trace-file", path],
    ] {
        let out = analyze_profile(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!("analyze-profile: {path}: not a Chrome trace: ")),
            "{stderr}"
        );
    }
    let missing = analyze_profile(&["--trace-file", "no/such/trace.json"]);
    assert_eq!(missing.status.code(), Some(2));
    let dir_text = dir.path().to_str().expect("temp path is UTF-8");
    let empty_dir = analyze_profile(&["--trace-dir", dir_text]);
    assert_eq!(empty_dir.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&empty_dir.stderr).contains("*.pt.trace.json*"));
    // --compat behaves as the reference script: a line on stdout, success.
    let compat = analyze_profile(&["--compat", "--trace_dir", dir_text]);
    assert_eq!(compat.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&compat.stdout),
        format!("no trace file found in {dir_text}\n")
    );
}

#[test]
fn a_closed_pipe_exits_quietly() {
    test_support::assert_quiet_on_closed_stdout(
        env!("CARGO_BIN_EXE_analyze-profile"),
        &["--compat", "--trace-file", TINY_RANK0],
    );
}

#[test]
fn compat_matches_the_reference_script_on_every_real_trace() {
    let Some(set) =
        test_support::real_traces("compat_matches_the_reference_script_on_every_real_trace")
    else {
        return;
    };
    // The path as given, for the `[loading]` line the original script prints.
    let traces = std::env::var("TRACEWISE_TRACES").expect("set: real_traces read it");
    // The traces of pytorch/MANIFEST.md, as `/`-separated paths below pytorch/.
    let files: Vec<&str> = set.kineto.iter().map(|t| t.rel.as_str()).collect();
    assert!(!files.is_empty(), "pytorch/MANIFEST.md lists no traces");
    let given_prefix = format!("{}/pytorch/", traces.trim_end_matches('/'));
    let canonical_prefix = format!("{CANONICAL_TRACES}/pytorch/");
    let mut mismatches = Vec::new();
    for rel in &files {
        let key = rel.replace('/', "__");
        let given = format!("{given_prefix}{rel}");
        let ours = stdout_of(&["--compat", "--trace_file", &given]);
        let ours = ours.replacen(
            &format!("[loading] {given} ("),
            &format!("[loading] {canonical_prefix}{rel} ("),
            1,
        );
        if ours != golden(&key, "txt") {
            mismatches.push(*rel);
        }
        let json = stdout_of(&["--compat", "--json", "--trace_file", &given]);
        assert_same_json(&json, &golden(&key, "json"), rel);
    }
    assert!(
        mismatches.is_empty(),
        "--compat differs from the reference script on {} of {} traces: {mismatches:#?}",
        mismatches.len(),
        files.len()
    );
    eprintln!(
        "{} real traces: --compat equals the reference script byte for byte",
        files.len()
    );
}

#[test]
fn default_mode_buckets_sum_to_gpu_time_on_every_real_trace() {
    let Some(set) =
        test_support::real_traces("default_mode_buckets_sum_to_gpu_time_on_every_real_trace")
    else {
        return;
    };
    let traces = std::env::var("TRACEWISE_TRACES").expect("set: real_traces read it");
    for rel in set.kineto.iter().map(|t| t.rel.as_str()) {
        let given = format!("{}/pytorch/{rel}", traces.trim_end_matches('/'));
        let json = stdout_of(&["--trace-file", &given, "--json"]);
        let value: serde_json::Value = serde_json::from_str(&json).expect("--json is JSON");
        let gpu = value["gpu_time_ns"].as_i64().expect("gpu_time_ns");
        let buckets = value["buckets"].as_array().expect("buckets");
        let sum: i64 = buckets
            .iter()
            .map(|b| b["time_ns"].as_i64().expect("time_ns"))
            .sum();
        assert!(
            (sum - gpu).abs() <= 1,
            "{rel}: buckets {sum} ns, GPU time {gpu} ns"
        );
        let gemm = buckets
            .iter()
            .find(|b| b["bucket"] == "matmul (GEMM)")
            .and_then(|b| b["time_ns"].as_i64())
            .unwrap_or(0);
        if rel == "hta-v100-2rank-large/df_index_resolver.json.gz" {
            assert!(gemm > 0, "{rel}: the GEMM bucket is empty");
        }
    }
}

/// Every malformed or odd fixture (testdata/*/{err,odd}), in both modes: no panic, an
/// error names the file and the position, nothing is left behind.
#[test]
fn malformed_inputs_never_panic() {
    for compat in [false, true] {
        let run =
            test_support::run_on_malformed(env!("CARGO_BIN_EXE_analyze-profile"), |input, _out| {
                let mut args: Vec<std::ffi::OsString> = vec!["--trace-file".into(), input.into()];
                if compat {
                    args.push("--compat".into());
                }
                args
            });
        eprintln!("analyze-profile (compat {compat}): {run:?}");
    }
}

/// The default mode works on the model, so it reads an XSpace; --compat names the format
/// and the tools that read it.
#[test]
fn default_mode_reads_an_xspace_and_compat_says_which_tool_does() {
    let input = "testdata/xplane/ok/small.xplane.pb";
    let out = analyze_profile(&["--trace-file", input]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("12 GPU activities"), "{text}");
    let out = analyze_profile(&["--compat", "--trace-file", input]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("XSpace protobuf"), "{stderr}");
    assert!(stderr.contains("without --compat"), "{stderr}");
}

/// A FIFO named like a rank trace in `--trace-dir` is skipped (opening it would block
/// forever); the regular traces are read, with and without `--all-ranks` and `--compat`.
#[test]
fn a_fifo_in_the_trace_dir_is_skipped() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    for name in ["rank0.pt.trace.json", "rank1.pt.trace.json"] {
        std::fs::copy(workspace_root().join(TINY_DIR).join(name), dir.join(name)).expect("copy");
    }
    // Sorted before the real ones, so a reader that opened it would hang first.
    test_support::make_fifo(&dir.join("a.pt.trace.json"));
    for extra in [&[][..], &["--all-ranks"][..], &["--compat"][..]] {
        let mut args: Vec<std::ffi::OsString> = vec!["--trace-dir".into(), dir.into()];
        args.extend(extra.iter().map(Into::into));
        let m = test_support::run_measured(
            env!("CARGO_BIN_EXE_analyze-profile"),
            &args,
            &[],
            std::time::Duration::from_secs(30),
        );
        assert!(!m.timed_out, "{extra:?}: blocked on the FIFO");
        assert_eq!(m.code, Some(0), "{extra:?}: {}", m.stderr);
    }
}

/// `--help` states the exit statuses (0 ok, 2 bad input or refused output, 3 partial).
#[test]
fn help_names_the_exit_codes() {
    test_support::assert_help_names_exit_codes(env!("CARGO_BIN_EXE_analyze-profile"));
}
