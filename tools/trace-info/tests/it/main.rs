//! End-to-end runs of trace-info on fixtures and, with `TRACEWISE_TRACES`, on every real capture.

use std::path::PathBuf;
use std::process::Command;

use test_support::workspace_root;

mod bombs;
mod exit_codes;
mod walks;

fn trace_info(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_trace-info"))
        .current_dir(workspace_root())
        .args(args)
        .output()
        .expect("trace-info runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn odd_fixture_shows_its_diagnostics() {
    let (code, out, err) = trace_info(&["testdata/chrome/odd/flow_one_end.json"]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!(out);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let (code, out, err) = trace_info(&["testdata/chrome/err/not_a_trace.json"]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert_eq!(
        err,
        "trace-info: testdata/chrome/err/not_a_trace.json: not a Chrome trace: the JSON object has no \"traceEvents\" array\n"
    );
}

#[test]
fn json_output_parses() {
    let (code, out, err) =
        trace_info(&["--json", "testdata/chrome/odd/kernel_without_stream.json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(v[0]["devices"][0]["streams"][0]["kernels"], 1);
    assert_eq!(v[0]["diagnostics"][0]["code"], "kernel-without-stream");
}

/// Every capture of the set's manifests: each XSpace shows the HLO program count that
/// `jax/MANIFEST.md` states, each JSON trace (Kineto, and the JSON of every JAX capture)
/// is described with its GPU devices.
#[test]
fn every_real_capture_is_described() {
    let Some(set) = test_support::real_traces("every_real_capture_is_described") else {
        return;
    };
    for x in &set.xspaces {
        let (code, out, err) = trace_info(&[x.path.to_str().expect("UTF-8 path")]);
        assert_eq!(code, 0, "{}: {err}", x.folder);
        // An XSpace without stored programs (TensorFlow's) shows no programs section.
        if x.hlo_programs == 0 {
            assert!(!out.contains("HLO programs:"), "{}:\n{out}", x.folder);
            continue;
        }
        assert!(
            out.contains(&format!("HLO programs: {} (", x.hlo_programs)),
            "{}:\n{out}",
            x.folder
        );
    }
    let mut json_traces: Vec<PathBuf> = set.kineto.iter().map(|t| t.path.clone()).collect();
    json_traces.extend(set.xspaces.iter().map(|x| x.json.clone()));
    for path in &json_traces {
        let (code, out, err) = trace_info(&[path.to_str().expect("UTF-8 path")]);
        assert_eq!(code, 0, "{}: {err}", path.display());
        assert!(out.contains("GPU devices: "), "{}", path.display());
    }
}

/// Every malformed or odd fixture (testdata/*/{err,odd}): no panic, an error names the
/// file and the position, nothing is left behind.
#[test]
fn malformed_inputs_never_panic() {
    let run = test_support::run_on_malformed(env!("CARGO_BIN_EXE_trace-info"), |input, _out| {
        vec![input.into()]
    });
    eprintln!("trace-info: {run:?}");
}

/// A directory whose ranks are not all readable: the readable ones are printed, each
/// unreadable one is named on stderr with its error (once), and the exit code is 3.
#[test]
fn partial_rank_directory_exits_3() {
    let root = workspace_root();
    let ranks = tempfile::tempdir().expect("temporary directory");
    std::fs::copy(
        root.join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json"),
        ranks.path().join("rank0.pt.trace.json"),
    )
    .expect("copy a rank");
    std::fs::write(ranks.path().join("rank1.pt.trace.json"), "").expect("an empty rank");
    let (code, out, err) = trace_info(&[ranks.path().to_str().expect("UTF-8 path")]);
    assert_eq!(code, 3, "{err}");
    assert!(out.contains("rank0.pt.trace.json"), "{out}");
    assert_eq!(err.matches("rank1.pt.trace.json").count(), 1, "{err}");
    assert!(err.contains("the file is empty"), "{err}");
}

/// #45 finding 18: an unreadable subdirectory of a rank directory is a warning naming it,
/// the ranks beside it are printed, and the exit code is 3 (partial), as the README's exit
/// codes say; it used to fail the whole run (exit 2). As root, it runs again without the
/// capabilities that read through mode 000.
#[cfg(unix)]
#[test]
fn an_unreadable_subdirectory_is_a_warning_and_exit_3() {
    if test_support::rerun_where_permissions_hold(
        "an_unreadable_subdirectory_is_a_warning_and_exit_3",
    ) {
        return;
    }
    let root = workspace_root();
    let ranks = tempfile::tempdir().expect("temporary directory");
    for name in ["rank0.pt.trace.json", "rank1.pt.trace.json"] {
        std::fs::copy(
            root.join("testdata/chrome/ok/tiny-train").join(name),
            ranks.path().join(name),
        )
        .expect("copy a rank");
    }
    let sub = ranks.path().join("locked");
    std::fs::create_dir(&sub).expect("a subdirectory");
    test_support::make_unreadable(&sub);
    let (code, out, err) = trace_info(&[ranks.path().to_str().expect("UTF-8 path")]);
    test_support::make_readable(&sub);
    assert_eq!(code, 3, "{err}");
    assert!(
        out.contains("rank0.pt.trace.json") && out.contains("rank1.pt.trace.json"),
        "{out}"
    );
    let warning = format!("warning: not read: {}", sub.display());
    assert_eq!(err.matches(&warning).count(), 1, "{err}");
}

/// A missing file says so once (no repeated OS error text).
#[test]
fn missing_file_says_it_once() {
    let (code, _out, err) = trace_info(&["no/such/trace.json"]);
    assert_eq!(code, 2);
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
}

/// `--threads` changes how the trace is parsed, never what is printed; 0 is refused.
#[test]
fn threads_do_not_change_the_output() {
    let mut files = vec!["testdata/chrome/odd/flow_one_end.json".to_string()];
    if let Some(dir) = test_support::traces_dir("threads_do_not_change_the_output") {
        let large = dir.join("pytorch/hta-v100-2rank-large/df_index_resolver.json.gz");
        files.push(large.display().to_string());
    }
    for file in &files {
        let one = trace_info(&["--json", "--threads", "1", file]);
        assert_eq!(one.0, 0, "{}", one.2);
        for n in ["2", "5"] {
            assert_eq!(
                trace_info(&["--json", "--threads", n, file]),
                one,
                "{file} --threads {n}"
            );
        }
    }
    let (code, _, err) = trace_info(&["--threads", "0", &files[0]]);
    assert_eq!(code, 2, "{err}");
}

/// `trace-info … | head -0`: a closed stdout is the reader stopping, not an error (exit 0,
/// nothing on stderr).
#[test]
fn a_closed_stdout_exits_0_quietly() {
    test_support::assert_quiet_on_closed_stdout(
        env!("CARGO_BIN_EXE_trace-info"),
        &["testdata/chrome/ok/skip_stats_small.json"],
    );
}

/// Per device and stream: (device ordinal, stream ordinal, kernels, memcpys, memsets,
/// busy ns, launched) from `--json`.
fn stream_counts(json: &str) -> Vec<(i64, i64, i64, i64, i64, i64, i64)> {
    let v: serde_json::Value = serde_json::from_str(json).expect("JSON");
    let mut out = Vec::new();
    for capture in v.as_array().expect("array") {
        for d in capture["devices"].as_array().expect("devices") {
            for s in d["streams"].as_array().expect("streams") {
                let n = |k: &str| s[k].as_i64().unwrap_or(-1);
                out.push((
                    d["ordinal"].as_i64().unwrap_or(-1),
                    n("ordinal"),
                    n("kernels"),
                    n("memcpys"),
                    n("memsets"),
                    n("busy_ns"),
                    n("launched"),
                ));
            }
        }
    }
    out
}

/// An Nsight Systems export written as Chrome trace JSON reads back with the same GPU
/// activities per device and stream, the same busy time to the nanosecond and every launch
/// still linked; the output follows the tools' output rules.
#[test]
fn to_chrome_trace_round_trips_an_nsys_export() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = "testdata/nsys/ok/small.sqlite";
    let out = dir.path().join("small.json");
    let out_s = out.to_str().expect("utf-8");
    let (code, direct, err) = trace_info(&[input, "--json", "--to-chrome-trace", out_s]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("Chrome trace written to"), "{err}");
    let (code, back, err) = trace_info(&[out_s, "--json"]);
    assert_eq!(code, 0, "{err}");
    let (a, b) = (stream_counts(&direct), stream_counts(&back));
    assert!(!a.is_empty());
    assert_eq!(a, b);

    // Not replaced without --overwrite; never the input, even with it.
    let before = std::fs::read(&out).expect("written");
    let (code, _, err) = trace_info(&[input, "--to-chrome-trace", out_s]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(std::fs::read(&out).expect("kept"), before);
    let copy = dir.path().join("copy.sqlite");
    std::fs::copy(workspace_root().join(input), &copy).expect("copy");
    let copy_s = copy.to_str().expect("utf-8");
    let original = std::fs::read(&copy).expect("read");
    let (code, _, err) = trace_info(&[copy_s, "--to-chrome-trace", copy_s, "--overwrite"]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(std::fs::read(&copy).expect("kept"), original);
}

/// Every shared Nsight Systems and ROCm capture with GPU work converts and reads back with
/// the same activities per stream.
#[test]
fn to_chrome_trace_round_trips_shared_captures() {
    let Some(root) = test_support::traces_dir("to_chrome_trace_round_trips_shared_captures") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    for (i, rel) in [
        "nsys/nvfuser-h200-matmul/report1.sqlite",
        "nsys/pipit-cloverleaf-a100/perlmutter-cloverleaf-cuda.sqlite",
        "rocprof/rocprofv1-stencil-mi250x/results.db",
        "rocprof/rocprofv3-csv-llamacpp-gfx1151",
    ]
    .iter()
    .enumerate()
    {
        let input = root.join(rel);
        let out = dir.path().join(format!("c{i}.json"));
        let (code, direct, err) = trace_info(&[
            input.to_str().expect("utf-8"),
            "--json",
            "--to-chrome-trace",
            out.to_str().expect("utf-8"),
        ]);
        assert_eq!(code, 0, "{rel}: {err}");
        let (code, back, err) = trace_info(&[out.to_str().expect("utf-8"), "--json"]);
        assert_eq!(code, 0, "{rel}: {err}");
        assert_eq!(stream_counts(&direct), stream_counts(&back), "{rel}");
    }
}

/// `--step-nvtx` makes the matching NVTX ranges of an Nsight Systems export the steps; a
/// bad expression is exit 2.
#[test]
fn step_nvtx_names_the_steps() {
    let input = "testdata/nsys/ok/small.sqlite";
    let steps = |extra: &[&str]| {
        let mut args = vec![input, "--json"];
        args.extend_from_slice(extra);
        let (code, out, err) = trace_info(&args);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        v[0]["steps"]["numbers"].clone()
    };
    assert_eq!(steps(&[]), serde_json::json!([1, 2]));
    assert_eq!(
        steps(&["--step-nvtx", "ProfilerStep#(2)"]),
        serde_json::json!([2])
    );
    let (code, _, err) = trace_info(&[input, "--step-nvtx", "("]);
    assert_eq!(code, 2);
    assert!(err.contains("--step-nvtx"), "{err}");
}

/// `--to-chrome-trace FILE` at every kind of target: the user's files and the input stay
/// byte-identical (an existing file is replaced only with --overwrite), nothing staged is
/// left, the refused cells exit 2.
#[test]
fn output_matrix_to_chrome_trace() {
    let fixture = workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json");
    test_support::output_matrix(
        env!("CARGO_BIN_EXE_trace-info"),
        "--to-chrome-trace",
        test_support::OutputKind::File,
        &fixture,
        |input, target, overwrite| {
            test_support::with_overwrite(
                vec![input.into(), "--to-chrome-trace".into(), target.into()],
                overwrite,
            )
        },
    );
}

/// pids and tids that are numbers but not 64-bit integers print as the trace wrote them,
/// with the `id-not-i64` diagnostic (not a synthetic `-1000000000000` and "Diagnostics:
/// none").
#[test]
fn ids_beyond_i64_print_as_written() {
    let (code, out, err) = trace_info(&["testdata/chrome/odd/ids_not_i64.json"]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("-1000000000000"), "{out}");
    assert!(out.contains("1e20") && out.contains("3.5"), "{out}");
    assert!(out.contains("18446744073709551617"), "{out}");
    assert!(!out.contains("18446744073709552000"), "{out}");
    assert!(out.contains("id-not-i64"), "{out}");
    assert!(!out.contains("Diagnostics: none"), "{out}");
    let (code, json, _) = trace_info(&["testdata/chrome/odd/ids_not_i64.json", "--json"]);
    assert_eq!(code, 0);
    assert!(json.contains("\"pid_text\": \"1e20\""), "{json}");
}

/// A rank directory holding a second file of rank 0 and a compaction output: every rank
/// file is reported, the duplicate rank is a warning naming both files, and the compaction
/// output is not read as a rank (a warning says so).
#[test]
fn duplicate_ranks_and_compaction_outputs_are_warnings() {
    let tiny = workspace_root().join("testdata/chrome/ok/tiny-train");
    let ranks = tempfile::tempdir().expect("temporary directory");
    for (from, to) in [
        ("rank0.pt.trace.json", "rank0.pt.trace.json"),
        ("rank1.pt.trace.json", "rank1.pt.trace.json"),
        ("rank0.pt.trace.json", "again.pt.trace.json"),
        ("rank1.pt.trace.json", "rank1.pt.trace_compacted.json"),
    ] {
        std::fs::copy(tiny.join(from), ranks.path().join(to)).expect("copy");
    }
    let (code, out, err) = trace_info(&[ranks.path().to_str().expect("UTF-8 path")]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches("Kineto Chrome trace").count(), 3, "{out}");
    assert!(!out.contains("_compacted"), "{out}");
    let duplicate = err
        .lines()
        .find(|l| l.contains("rank 0 is given by 2 files"))
        .unwrap_or_else(|| panic!("no duplicate-rank warning: {err}"));
    assert!(
        duplicate.contains("again.pt.trace.json") && duplicate.contains("rank0.pt.trace.json"),
        "{duplicate}"
    );
    assert!(
        err.contains("rank1.pt.trace_compacted.json: not read as a rank"),
        "{err}"
    );
}

/// `--help` states the exit statuses (0 ok, 2 bad input or refused output, 3 partial).
#[test]
fn help_names_the_exit_codes() {
    test_support::assert_help_names_exit_codes(env!("CARGO_BIN_EXE_trace-info"));
}
