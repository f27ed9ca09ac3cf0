//! End-to-end runs of the roofline tool on the synthetic Kineto fixture and on bad input.

use std::process::Command;

use test_support::workspace_root;

fn roofline(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_roofline"))
        .current_dir(workspace_root())
        .args(args)
        .output()
        .expect("roofline runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const FIXTURE: &str = "testdata/roofline/kineto_shapes.json";

#[test]
fn json_has_the_labelled_fields_and_files_are_written() {
    let dir = tempfile::tempdir().expect("temp dir");
    let svg = dir.path().join("chart.svg");
    let csv = dir.path().join("ops.csv");
    let (code, out, err) = roofline(&[
        FIXTURE,
        "--json",
        "--svg",
        svg.to_str().expect("utf-8 path"),
        "--csv",
        csv.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(v["device"]["label"], "read");
    assert!(
        v["device"]["source"]
            .as_str()
            .is_some_and(|s| s.contains("H100 Tensor Core GPU Datasheet"))
    );
    let ops = v["ops"].as_array().expect("ops");
    assert_eq!(ops.len(), 5);
    for op in ops {
        for key in ["name", "op", "dtype", "kind"] {
            assert!(op[key].is_string(), "{key}: {op}");
        }
        assert!(op.get("program_id").is_some() && op.get("hlo_op").is_some());
        assert_eq!(op["time_ns"]["label"], "measured");
        assert_eq!(op["flops"]["label"], "inferred");
        assert_eq!(op["bytes"]["label"], "inferred");
        assert_eq!(op["peak_flops_per_s"]["label"], "read");
        assert_eq!(op["peak_bytes_per_s"]["label"], "read");
        assert_eq!(op["bound"]["label"], "inferred");
        assert!(op["flops"]["value"].as_f64().is_some_and(|f| f > 0.0));
    }
    let text = std::fs::read_to_string(&svg).expect("svg written");
    roxmltree::Document::parse(&text).expect("well-formed SVG");
    let csv_text = std::fs::read_to_string(&csv).expect("csv written");
    assert_eq!(csv_text.lines().count(), 1 + ops.len());
    // Nothing but the two outputs is left in the directory (no temporary files).
    assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 2);
}

#[test]
fn text_table_names_the_peak_source() {
    let (code, out, err) = roofline(&[FIXTURE, "--top", "3"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("NVIDIA H100 SXM5 80GB [read: NVIDIA H100 Tensor Core GPU Datasheet"));
    assert!(out.contains("... 2 more ops"), "{out}");
    assert!(out.contains("capture with record_shapes=True"));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let (code, out, err) = roofline(&["testdata/chrome/err/not_a_trace.json"]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(
        err.starts_with("roofline: analysing testdata/chrome/err/not_a_trace.json: testdata/chrome/err/not_a_trace.json:"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// Every malformed or odd fixture (testdata/*/{err,odd}): no panic, an error names the
/// file and the position, nothing is left behind.
#[test]
fn malformed_inputs_never_panic() {
    let run = test_support::run_on_malformed(env!("CARGO_BIN_EXE_roofline"), |input, out| {
        vec![
            input.into(),
            "--csv".into(),
            out.join("ops.csv").into(),
            "--svg".into(),
            out.join("r.svg").into(),
        ]
    });
    eprintln!("roofline: {run:?}");
}

/// `roofline … | head -0`: a closed stdout is the reader stopping, not an error (exit 0,
/// nothing on stderr).
#[test]
fn a_closed_stdout_exits_0_quietly() {
    test_support::assert_quiet_on_closed_stdout(env!("CARGO_BIN_EXE_roofline"), &[FIXTURE]);
}

/// `--csv` and `--svg` at every kind of target: the user's files and the capture stay
/// byte-identical (an existing file is replaced only with --overwrite), nothing staged is
/// left.
#[test]
fn output_matrix_csv_and_svg() {
    let fixture = test_support::workspace_root().join(FIXTURE);
    for option in ["--csv", "--svg"] {
        test_support::output_matrix(
            env!("CARGO_BIN_EXE_roofline"),
            option,
            test_support::OutputKind::File,
            &fixture,
            |input, target, overwrite| {
                test_support::with_overwrite(
                    vec![input.into(), option.into(), target.into()],
                    overwrite,
                )
            },
        );
    }
}

/// `--help` states the exit statuses (0 ok, 2 bad input or refused output, 3 partial).
#[test]
fn help_names_the_exit_codes() {
    test_support::assert_help_names_exit_codes(env!("CARGO_BIN_EXE_roofline"));
}

/// `roofline cap --csv cap/<the capture file> --overwrite`: a file inside the capture
/// directory may be the one read, so it is never replaced (exit 2, bytes unchanged).
#[test]
fn a_file_read_from_the_capture_directory_is_never_replaced() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cap = tmp.path().join("cap");
    std::fs::create_dir(&cap).expect("mkdir");
    let pb = cap.join("host.xplane.pb");
    std::fs::copy(
        workspace_root().join("testdata/attribution/synth.xplane.pb"),
        &pb,
    )
    .expect("copy");
    let before = std::fs::read(&pb).expect("read");
    let out = Command::new(env!("CARGO_BIN_EXE_roofline"))
        .arg(&cap)
        .arg("--csv")
        .arg(&pb)
        .arg("--overwrite")
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("inside the input directory"), "{stderr}");
    assert_eq!(std::fs::read(&pb).expect("read"), before);
}
