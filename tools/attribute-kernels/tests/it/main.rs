//! End-to-end runs of the attribute-kernels binary: the synthetic XSpace, a Kineto trace
//! without Python stacks, refusal to replace outputs, bad input, and (with
//! `TRACEWISE_TRACES`) lines.csv against how.csv on a trace with stacks.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod interrupts;
mod shared_names;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_attribute-kernels"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn testdata(rel: &str) -> String {
    test_support::workspace_root()
        .join("testdata")
        .join(rel)
        .display()
        .to_string()
}

fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("attribute-kernels-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).expect("CSV written");
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    reader
        .records()
        .map(|r| r.expect("CSV row").iter().map(str::to_owned).collect())
        .collect()
}

#[test]
fn synthetic_xspace_writes_every_output() {
    let out = tempdir("synth");
    let fixture = testdata("attribution/synth.xplane.pb");
    let o = run(&[&fixture, "--out", out.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON summary");
    assert_eq!(summary["kernels"], 18);
    assert_eq!(summary["label"], "measured");
    for name in [
        "kernels.csv",
        "ops.csv",
        "lines.csv",
        "how.csv",
        "summary.txt",
        "jit_synth_step(7).hlo.txt",
    ] {
        assert!(out.join(name).is_file(), "{name}");
    }
    assert_eq!(csv_rows(&out.join("kernels.csv")).len(), 18);
    // how.csv: the `all` shares sum to 100 %.
    let share: f64 = csv_rows(&out.join("how.csv"))
        .iter()
        .filter(|r| r[0] == "all")
        .map(|r| r[5].parse::<f64>().expect("share"))
        .sum();
    assert!((share - 100.0).abs() < 1e-4, "{share}");
    // No temporary files left behind; the marker that lets a later run replace it.
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 7, "{names:?}");
    assert!(names.iter().any(|n| n == ".tracewise-output"), "{names:?}");

    // A second run without --overwrite changes nothing and exits 2.
    std::fs::write(out.join("kernels.csv"), "kept\n").unwrap();
    let o = run(&[&fixture, "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--overwrite"));
    assert_eq!(
        std::fs::read_to_string(out.join("kernels.csv")).unwrap(),
        "kept\n"
    );
    let o = run(&[&fixture, "--out", out.to_str().unwrap(), "--overwrite"]);
    assert!(o.status.success());
    assert_ne!(
        std::fs::read_to_string(out.join("kernels.csv")).unwrap(),
        "kept\n"
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn bad_input_exits_2_and_writes_nothing() {
    let out = tempdir("bad");
    let dir = tempdir("bad-input");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("broken.xplane.pb");
    std::fs::write(&bad, b"\x0a\xff\xff\xff\xff\x0fnot protobuf").unwrap();
    let o = run(&[bad.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("broken.xplane.pb"), "{stderr}");
    assert!(stderr.contains("offset"), "{stderr}");
    assert!(!out.exists(), "nothing is written for bad input");
    let o = run(&[
        &testdata("attribution/synth.xplane.pb"),
        "--user-re",
        "(",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--user-re"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn kineto_without_stacks_says_so() {
    let out = tempdir("nostack");
    let o = run(&[
        &testdata("chrome/ok/tiny-train/rank0.pt.trace.json"),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("with_stack=True"), "{stdout}");
    assert!(!csv_rows(&out.join("ops.csv")).is_empty());
    assert!(csv_rows(&out.join("lines.csv")).is_empty());
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn kineto_lines_sum_to_attributed_time() {
    let Some(dir) = test_support::traces_dir("kineto_lines_sum_to_attributed_time") else {
        return;
    };
    let out = tempdir("bert");
    let trace = dir.join("pytorch/tracelens-h100/gaunernst_bert-small-uncased__1016001.json.gz");
    let o = run(&[trace.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = csv_rows(&out.join("lines.csv"));
    assert!(!lines.is_empty());
    let line_time: i64 = lines.iter().map(|r| r[4].parse::<i64>().unwrap()).sum();
    let attributed: i64 = csv_rows(&out.join("how.csv"))
        .iter()
        .filter(|r| r[0] == "all" && r[1] != "none")
        .map(|r| r[4].parse::<i64>().unwrap())
        .sum();
    assert!(attributed > 0);
    assert_eq!(line_time, attributed);
    std::fs::remove_dir_all(&out).unwrap();
}

/// `attribute-kernels … | head -0`: a closed stdout is the reader stopping, not an error (exit 0,
/// nothing on stderr).
#[test]
fn a_closed_stdout_exits_0_quietly() {
    let out = tempdir("closed-stdout");
    test_support::assert_quiet_on_closed_stdout(
        env!("CARGO_BIN_EXE_attribute-kernels"),
        &[
            &testdata("attribution/synth.xplane.pb"),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    std::fs::remove_dir_all(&out).unwrap();
}

/// The output directory `--out` at every kind of target: the user's files and the input
/// stay byte-identical, nothing staged is left, every cell is refused (exit 2).
#[test]
fn output_matrix_out() {
    let fixture = test_support::workspace_root().join("testdata/attribution/synth.xplane.pb");
    test_support::output_matrix(
        env!("CARGO_BIN_EXE_attribute-kernels"),
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

/// `--help` states the exit statuses (0 ok, 2 bad input or refused output, 3 partial).
#[test]
fn help_names_the_exit_codes() {
    test_support::assert_help_names_exit_codes(env!("CARGO_BIN_EXE_attribute-kernels"));
}

/// Every malformed or odd fixture (testdata/*/{err,odd}): no panic, an error names the
/// file and a place in it, and nothing is written.
#[test]
fn malformed_inputs_give_errors_and_write_nothing() {
    let run =
        test_support::run_on_malformed(env!("CARGO_BIN_EXE_attribute-kernels"), |input, out| {
            vec![input.into(), "--out".into(), out.join("attribution").into()]
        });
    assert!(run.errors >= 30, "{run:?}");
}
