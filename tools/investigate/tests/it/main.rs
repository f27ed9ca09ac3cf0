//! investigate end to end: every shared capture gives a full report; golden Markdown for
//! the embedded sample and for one PyTorch trace, one rank directory and one JAX capture;
//! the HTML page in a real (headless) browser.

use std::path::{Path, PathBuf};
use std::process::Command;

use test_support::{traces_dir, workspace_root};

mod nesting;

const BIN: &str = env!("CARGO_BIN_EXE_investigate");
const FILES: [&str; 5] = [
    "report.md",
    "report.html",
    "report.json",
    "rows.csv",
    "budget.csv",
];

fn investigate(input: &Path, out: &Path) -> std::process::Output {
    Command::new(BIN)
        .arg(input)
        .arg("--out")
        .arg(out)
        .output()
        .expect("investigate runs")
}

/// Runs investigate and returns report.md with the machine-specific input path replaced.
fn markdown(input: &Path, shown_as: &str) -> String {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("r");
    let o = investigate(input, &out);
    assert!(
        o.status.success(),
        "{}: {}",
        input.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    md.replace(&input.display().to_string(), shown_as)
}

#[test]
fn the_embedded_sample() {
    let input = workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json");
    insta::assert_snapshot!(
        "tiny_train",
        markdown(&input, "tiny-train/rank0.pt.trace.json")
    );
}

#[test]
fn an_existing_report_is_kept_without_overwrite() {
    let input = workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json");
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("r");
    let with_overwrite = |out: &Path| {
        Command::new(BIN)
            .arg(&input)
            .arg("--out")
            .arg(out)
            .arg("--overwrite")
            .output()
            .expect("runs")
    };
    // A directory of the user's is never replaced, with --overwrite or without, and the
    // message does not suggest a flag that would not help.
    std::fs::create_dir(&out).expect("mkdir");
    std::fs::write(out.join("keep.txt"), "mine").expect("write");
    for o in [investigate(&input, &out), with_overwrite(&out)] {
        assert_eq!(o.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            stderr.contains("not written by a tracewise tool"),
            "{stderr}"
        );
        assert!(!stderr.contains("--overwrite"), "{stderr}");
    }
    assert_eq!(
        std::fs::read_to_string(out.join("keep.txt")).expect("kept"),
        "mine"
    );
    std::fs::remove_dir_all(&out).expect("rm");
    // A report written before is kept without --overwrite and replaced with it.
    assert!(investigate(&input, &out).status.success());
    std::fs::write(out.join("report.md"), "old").expect("write");
    let o = investigate(&input, &out);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--overwrite"));
    assert_eq!(
        std::fs::read_to_string(out.join("report.md")).expect("kept"),
        "old"
    );
    let o = with_overwrite(&out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_ne!(
        std::fs::read_to_string(out.join("report.md")).expect("new"),
        "old"
    );
    for f in FILES {
        assert!(out.join(f).is_file(), "{f}");
    }
    // Nothing but the report is left in the parent (the staging directory is gone).
    let names: Vec<String> = std::fs::read_dir(tmp.path())
        .expect("ls")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["r".to_owned()]);
}

#[test]
fn a_bad_input_fails_cleanly() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let bad = tmp.path().join("bad.json");
    std::fs::write(&bad, "{\"traceEvents\": [ {\"ph\": ").expect("write");
    let out = tmp.path().join("r");
    let o = investigate(&bad, &out);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad.json"));
    assert!(!out.exists());
    let o = Command::new(BIN)
        .arg(workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json"))
        .args(["--step", "99", "--out"])
        .arg(&out)
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no step 99"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A rank directory with one unreadable rank: the report of the readable one is written
/// (a partial result), the unreadable one is named on stderr and in the report's trust
/// list, and the exit code is 3.
#[test]
fn partial_rank_directory_writes_the_readable_ranks_and_exits_3() {
    let ranks = test_support::partial_rank_dir();
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("r");
    let o = investigate(ranks.path(), &out);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{stderr}");
    assert_eq!(
        stderr
            .matches("rank1.pt.trace.json: truncated JSON")
            .count(),
        1,
        "{stderr}"
    );
    // The report names the file it could not read (the reader's message).
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(md.contains("rank1.pt.trace.json: truncated JSON"), "{md}");
    let json = std::fs::read_to_string(out.join("report.json")).expect("report.json");
    let inv = report::report_json::read(&json).expect("reads back");
    assert_eq!(inv.captures.len(), 1, "one rank read");
    assert_eq!(inv.unread.len(), 1, "{:?}", inv.unread);
    assert!(
        inv.trust
            .iter()
            .any(|t| t.from == investigation::TrustSource::Input
                && t.item.code == "file-not-read"
                && t.item.shown_count() == Some(1)
                && t.item.message.contains("rank1.pt.trace.json")),
        "{:?}",
        inv.trust
    );
}

/// Every capture of the shared set, from its manifests: Kineto files, the complete rank
/// folders, the JSON of every JAX capture, XSpace files and JAX capture directories.
fn shared_inputs(set: &test_support::RealTraces) -> Vec<PathBuf> {
    let mut inputs: Vec<PathBuf> = set.kineto.iter().map(|t| t.path.clone()).collect();
    inputs.extend(set.rank_dirs());
    for x in &set.xspaces {
        inputs.push(x.json.clone());
        inputs.push(x.path.clone());
        inputs.push(x.dir().to_path_buf());
    }
    inputs.sort();
    inputs
}

#[test]
fn every_shared_capture_gives_a_full_report() {
    let Some(set) = test_support::real_traces("every_shared_capture_gives_a_full_report") else {
        return;
    };
    let inputs = shared_inputs(&set);
    assert!(
        !set.kineto.is_empty() && !set.xspaces.is_empty() && !set.rank_dirs().is_empty(),
        "{} inputs",
        inputs.len()
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    for (i, input) in inputs.iter().enumerate() {
        let out = tmp.path().join(format!("r{i}"));
        let o = investigate(input, &out);
        assert!(
            o.status.success(),
            "{}: {}",
            input.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        for f in FILES {
            assert!(out.join(f).is_file(), "{}: {f}", input.display());
        }
        let md = std::fs::read_to_string(out.join("report.md")).expect("md");
        for section in [
            "## Findings",
            "## 1. Verdict",
            "## 2. Reconciliation",
            "## 3. Swimlanes",
            "## 6. What to change",
            "## 7. Trust list",
        ] {
            assert!(md.contains(section), "{}: {section}", input.display());
        }
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("report.json")).expect("json"))
                .expect("valid JSON");
        assert!(json["captures"].as_array().is_some_and(|c| !c.is_empty()));
        assert_eq!(json["schema"], investigation::SCHEMA);
        assert_round_trips(&out, &input.display().to_string());
    }
}

/// Every shared Nsight Systems and ROCm capture that has GPU work: a report with a verdict,
/// budgets and swimlanes, through the same loader as the other formats. The export without
/// CUDA tables has nothing to report: exit 2, naming the file, and nothing written.
#[test]
fn nsys_and_rocprof_captures_give_a_full_report() {
    let Some(root) = traces_dir("nsys_and_rocprof_captures_give_a_full_report") else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let inputs = [
        "nsys/nvfuser-h200-matmul/report1.sqlite",
        "nsys/nvfuser-8xh100-matmul/report2.sqlite",
        "nsys/nsys-ai-rtx3080-torch-zeros/mock.sqlite",
        "nsys/pipit-cloverleaf-a100",
        "nsys/pipit-saxpy-mpi-a100/saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
        "rocprof/rocprofv1-stencil-mi250x",
        "rocprof/rocprofv1-stencil-mi250x/results.csv",
        "rocprof/rocprofv3-csv-llamacpp-gfx1151",
        "rocprof/rocprofv3-doc-csv/kernel_trace.csv",
    ];
    for (i, rel) in inputs.iter().enumerate() {
        let out = tmp.path().join(format!("r{i}"));
        let o = investigate(&root.join(rel), &out);
        assert!(
            o.status.success(),
            "{rel}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let md = std::fs::read_to_string(out.join("report.md")).expect("md");
        for section in ["## 1. Verdict", "## 2. Reconciliation", "## 3. Swimlanes"] {
            assert!(md.contains(section), "{rel}: {section}");
        }
        assert!(md.contains("Verdict"), "{rel}");
        let html = std::fs::read_to_string(out.join("report.html")).expect("html");
        assert!(html.contains("<svg"), "{rel}: no swimlane drawing");
        assert_round_trips(&out, rel);
    }
    let none = root.join("nsys/jacc-4xa100-no-cuda-tables/report1.sqlite");
    let out = tmp.path().join("none");
    let o = investigate(&none, &out);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("report1.sqlite"));
    assert!(!out.exists());
}

/// `report.json` read back into an `Investigation` renders the very Markdown the run
/// wrote: the JSON is the whole investigation.
fn assert_round_trips(out: &Path, what: &str) {
    let text = std::fs::read_to_string(out.join("report.json")).expect("report.json");
    let inv = report::report_json::read(&text).unwrap_or_else(|e| panic!("{what}: {e}"));
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    let doc = report::investigate::document(&inv);
    assert_eq!(report::markdown::render(&doc), md, "{what}");
    // The same JSON again, byte for byte (floats read back exactly: serde_json's
    // `float_roundtrip`), and the same value read back from it.
    assert_eq!(report::report_json::write(&inv), text, "{what}");
    assert_eq!(
        report::report_json::read(&report::report_json::write(&inv)).expect("reads"),
        inv,
        "{what}"
    );
}

#[test]
fn report_json_round_trips_on_the_embedded_sample() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("r");
    let input = workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json");
    assert!(investigate(&input, &out).status.success());
    assert_round_trips(&out, "tiny-train");
    // Another schema is refused, naming both versions.
    let text = std::fs::read_to_string(out.join("report.json")).expect("json");
    let other = text.replacen(
        &format!("\"schema\": {},", investigation::SCHEMA),
        "\"schema\": 99,",
        1,
    );
    let err = report::report_json::read(&other).expect_err("schema 99");
    assert!(err.to_string().contains("schema 99"), "{err}");
}

#[test]
fn golden_reports_of_real_captures() {
    let Some(root) = traces_dir("golden_reports_of_real_captures") else {
        return;
    };
    for (name, rel) in [
        (
            "pytorch_bert",
            "pytorch/tracelens-h100/gaunernst_bert-small-uncased__1016001.json.gz",
        ),
        ("rank_directory_dlrm", "pytorch/param-dlrm-8rank"),
        (
            "jax_gemm_xplane",
            "jax/rocm-mi300-jax08-gemm/tw003.xplane.pb",
        ),
        (
            "nsys_nvfuser_h200",
            "nsys/nvfuser-h200-matmul/report1.sqlite",
        ),
        (
            "rocprof_v1_stencil_mi250x",
            "rocprof/rocprofv1-stencil-mi250x",
        ),
    ] {
        insta::assert_snapshot!(name, markdown(&root.join(rel), rel));
    }
}

/// The HTML page in headless Chromium: no console error, one swimlane row per GPU stream
/// and per launching host thread, and a screenshot that is not blank. Skips (saying so)
/// only when no Chromium is installed; .ci/run installs it.
#[test]
fn the_html_page_renders_in_a_browser() {
    let Some(chromium) = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
    else {
        eprintln!(
            "the_html_page_renders_in_a_browser: skipped: no Chromium installed (apt-get install chromium)"
        );
        return;
    };
    let input = workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json");
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("r");
    assert!(investigate(&input, &out).status.success());
    let html = out.join("report.html");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).expect("json"))
            .expect("json");
    let chrome = |extra: &[&str]| {
        Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--enable-logging=stderr",
                "--v=0",
            ])
            .arg(format!(
                "--user-data-dir={}",
                tmp.path().join("profile").display()
            ))
            .args(extra)
            .arg(format!("file://{}", html.display()))
            .output()
            .expect("chromium runs")
    };
    let dom = chrome(&["--dump-dom"]);
    assert!(
        dom.status.success(),
        "{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    let stderr = String::from_utf8_lossy(&dom.stderr);
    let console_errors: Vec<&str> = stderr
        .lines()
        .filter(|l| {
            l.contains("CONSOLE")
                && (l.contains("Uncaught") || l.contains(":ERROR:") || l.contains("Error"))
        })
        .collect();
    assert!(
        console_errors.is_empty(),
        "console errors: {console_errors:#?}"
    );
    let dom = String::from_utf8_lossy(&dom.stdout);
    let gpu_rows = dom.matches("class=\"lane\" data-kind=\"gpu\"").count();
    let host_rows = dom.matches("class=\"lane\" data-kind=\"host\"").count();
    // The sample has 2 GPU streams and one launching thread.
    assert_eq!(
        (gpu_rows, host_rows),
        (2, 1),
        "swimlane rows in the rendered DOM"
    );
    // The rows drawn are report.json's (the Investigation's step-3 chart), kind by kind.
    assert_eq!(json["swimlanes"]["drawn"], "drawn");
    let kinds: Vec<&str> = json["swimlanes"]["chart"]["lanes"]
        .as_array()
        .expect("the chart's lanes")
        .iter()
        .filter_map(|l| l["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["gpu", "gpu", "host"]);
    let png = tmp.path().join("shot.png");
    let shot = chrome(&[
        &format!("--screenshot={}", png.display()),
        "--window-size=1400,1800",
    ]);
    assert!(
        shot.status.success(),
        "{}",
        String::from_utf8_lossy(&shot.stderr)
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&png).expect("screenshot"),
    ));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    let pixels = &buf[..info.buffer_size()];
    let first = &pixels[..info.color_type.samples()];
    let differing = pixels
        .chunks(info.color_type.samples())
        .filter(|p| *p != first)
        .count();
    assert!(
        differing > pixels.len() / info.color_type.samples() / 50,
        "the screenshot is (nearly) blank: {differing} pixels differ from the first"
    );
}

/// `investigate … | head -0`: a closed stdout is the reader stopping, not an error (exit 0,
/// nothing on stderr).
#[test]
fn a_closed_stdout_exits_0_quietly() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("report");
    test_support::assert_quiet_on_closed_stdout(
        BIN,
        &[
            "testdata/chrome/ok/tiny-train/rank0.pt.trace.json",
            "--out",
            out.to_str().expect("UTF-8 path"),
        ],
    );
    // The report is written all the same.
    assert!(out.join("report.md").is_file());
}

/// A stdout that cannot be written (a full disk) after the report is in place: exit 1, not
/// 0 (the notice was lost) and not 2 (which means nothing was written).
#[test]
fn a_full_stdout_after_the_report_exits_1() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("report");
    let Ok(full) = std::fs::File::create("/dev/full") else {
        panic!("/dev/full is needed for this test (Linux)");
    };
    let o = Command::new(BIN)
        .arg(workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json"))
        .arg("--out")
        .arg(&out)
        .stdout(full)
        .output()
        .expect("investigate runs");
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("complete and in place"));
    assert!(out.join("report.md").is_file());
}

/// The report directory `--out` at every kind of target: the user's files and the input
/// stay byte-identical, nothing staged is left, every cell is refused (exit 2).
#[test]
fn output_matrix_out() {
    let fixture = workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json");
    test_support::output_matrix(
        BIN,
        "--out",
        test_support::OutputKind::Dir,
        &fixture,
        |input, target, overwrite| {
            test_support::with_overwrite(
                vec![input.into(), "--out".into(), target.into()],
                overwrite,
            )
        },
    );
}

/// SIGINT and SIGKILL at several points of a run that replaces a report, on a large
/// synthetic trace: afterwards the report directory is the old one or the new one, whole,
/// never neither; after SIGINT nothing staged is left, and what SIGKILL left is removed by
/// the next run.
#[test]
fn interrupts_leave_the_old_report_or_the_new_one() {
    use std::os::unix::process::ExitStatusExt;
    use std::time::Instant;
    let tmp = tempfile::tempdir().expect("tempdir");
    let big = tmp.path().join("big.json");
    test_support::write_synthetic_trace(&big, 20_000_000);
    let small = workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json");
    let report = tmp.path().join("report");
    let run = |input: &Path| {
        let mut cmd = Command::new(BIN);
        cmd.arg(input).arg("--out").arg(&report).arg("--overwrite");
        cmd
    };
    // The new report, and how long a whole run takes.
    let start = Instant::now();
    assert!(run(&big).output().expect("runs").status.success());
    let whole = start.elapsed();
    let new = test_support::snapshot(&report);
    assert!(run(&small).output().expect("runs").status.success());
    let old = test_support::snapshot(&report);
    assert_ne!(old, new);
    let mut seen_new = 0;
    let mut seen_old = 0;
    for signal in ["INT", "TERM", "KILL"] {
        // 400 %: a run that is certainly done, however loaded the machine.
        for percent in [5u32, 30, 60, 85, 95, 100, 105, 400] {
            // Back to the old report before each run.
            assert!(run(&small).output().expect("runs").status.success());
            let after = whole * percent / 100;
            let status = test_support::run_interrupted(run(&big), after, signal);
            let cell = format!("SIG{signal} after {percent}% of {whole:?}: {status:?}");
            let now = test_support::snapshot(&report);
            if now == new {
                seen_new += 1;
            } else if now == old {
                seen_old += 1;
            } else {
                panic!("{cell}: the report is neither the old one nor the new one");
            }
            let staged = test_support::staged_left(tmp.path());
            if signal == "KILL" {
                // The next run removes what a killed one staged.
                assert!(run(&small).output().expect("runs").status.success());
                let left = test_support::staged_left(tmp.path());
                assert!(left.is_empty(), "{cell}: left after the next run: {left:?}");
            } else {
                assert!(staged.is_empty(), "{cell}: staged left: {staged:?}");
                // Ended by the signal (as it would without a handler), or done before it.
                assert!(
                    status.success() || status.signal().is_some(),
                    "{cell}: ended otherwise"
                );
            }
        }
    }
    // The points span the run: some found the old report, some the new one.
    assert!(
        seen_old > 0 && seen_new > 0,
        "old {seen_old}, new {seen_new}"
    );
}

/// `--help` states the exit statuses (0 ok, 2 bad input or refused output, 3 partial).
#[test]
fn help_names_the_exit_codes() {
    test_support::assert_help_names_exit_codes(env!("CARGO_BIN_EXE_investigate"));
}

/// Every malformed or odd fixture (testdata/*/{err,odd}): no panic, an error names the
/// file and a place in it, and nothing is written.
#[test]
fn malformed_inputs_give_errors_and_write_nothing() {
    let run = test_support::run_on_malformed(BIN, |input, out| {
        vec![input.into(), "--out".into(), out.join("report").into()]
    });
    assert!(run.errors >= 30, "{run:?}");
}

/// Two runs with the same `--out` at the same time, without `--overwrite`: one report is
/// written, the other run says it was refused (exit 2); never two "written" for one
/// report, never a mixed directory, nothing staged left.
#[test]
fn two_runs_with_one_out_never_both_claim_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let big = tmp.path().join("a.json");
    test_support::write_synthetic_trace(&big, 5_000_000);
    let small = workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json");
    let out = tmp.path().join("report");
    for _ in 0..3 {
        let _ = std::fs::remove_dir_all(&out);
        let spawn = |input: &Path| {
            Command::new(BIN)
                .arg(input)
                .arg("--out")
                .arg(&out)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("starts")
        };
        let a = spawn(&big);
        let b = spawn(&small);
        let (a, b) = (
            a.wait_with_output().expect("ends"),
            b.wait_with_output().expect("ends"),
        );
        let codes = [a.status.code(), b.status.code()];
        assert!(
            codes == [Some(0), Some(2)] || codes == [Some(2), Some(0)],
            "{codes:?}: {} / {}",
            String::from_utf8_lossy(&a.stderr),
            String::from_utf8_lossy(&b.stderr)
        );
        let (won, lost) = if codes[0] == Some(0) {
            (&big, &b)
        } else {
            (&small, &a)
        };
        assert!(String::from_utf8_lossy(&lost.stderr).contains("--overwrite"));
        let md = std::fs::read_to_string(out.join("report.md")).expect("a report");
        assert!(
            md.contains(&won.display().to_string()),
            "the report is the winner's"
        );
        assert!(test_support::staged_left(tmp.path()).is_empty());
    }
}

/// `--what-if` prints the replayed prediction after the report; a bad spelling is refused
/// before anything is written.
#[test]
fn what_if_prints_the_replayed_step() {
    let input = workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json");
    let tmp = tempfile::tempdir().expect("tempdir");
    let run = |spec: &str, out: &Path| {
        Command::new(BIN)
            .arg(&input)
            .arg("--out")
            .arg(out)
            .args(["--what-if", spec])
            .output()
            .expect("runs")
    };
    let o = run("gemm=2x,launch=5us", &tmp.path().join("r"));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("what-if gemm=2x,launch=5us"), "{stdout}");
    assert!(stdout.contains("critical path"), "{stdout}");
    let o = run("gemm=fast", &tmp.path().join("bad"));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("takes Nx"));
    assert!(!tmp.path().join("bad").exists());
}

/// `--what-if` replays what step 6 replays: the same steady-state steps and the host
/// sub-causes' time from the idle-time split. It used to replay the capture's own step
/// ranges without that split, so `host:…=0` changed no event on a capture where the
/// ranked cause's replay changed 76 (JAX MI300 gemm).
#[test]
fn what_if_replays_as_the_ranked_causes_do() {
    let Some(root) = traces_dir("what_if_replays_as_the_ranked_causes_do") else {
        return;
    };
    let input = root.join("jax/rocm-mi300-jax08-gemm/tw003.xplane.pb");
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("plain");
    let o = Command::new(BIN)
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).expect("report.json"))
            .expect("JSON");
    let advice = &json["advice"];
    let steps = advice["steps"].as_u64().expect("steps");
    let causes = advice["causes"].as_array().expect("causes");
    let host = causes
        .iter()
        .find(|c| {
            c["key"]
                .as_str()
                .is_some_and(|k| k.starts_with("gap:host-not-launched:"))
                && c["replay"]["events_changed"]
                    .as_u64()
                    .is_some_and(|n| n > 0)
        })
        .expect("a replayed host sub-cause");
    let scenario = host["replay"]["scenario"].as_str().expect("scenario");
    let changed = host["replay"]["events_changed"].as_u64().expect("count");
    let o = Command::new(BIN)
        .arg(&input)
        .arg("--out")
        .arg(tmp.path().join("what-if"))
        .args(["--what-if", scenario])
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        stdout.contains(&format!("{scenario}: {changed} events changed")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("all {steps} steps")),
        "{steps} steady steps: {stdout}"
    );
}
