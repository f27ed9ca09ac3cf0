//! The `compare` binary end to end: files written, --json, exit codes, --help.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use test_support::workspace_root;

fn sample() -> PathBuf {
    workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json")
}

fn compare(args: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_compare"))
        .args(args)
        .output()
        .expect("runs")
}

#[test]
fn writes_every_file_and_refuses_to_overwrite() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("cmp");
    let s = sample();
    let o = compare(&[&s, &s, Path::new("--out"), &out]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in [
        "report.md",
        "report.html",
        "report.json",
        "sides.csv",
        "step_time.csv",
        "causes.csv",
        "budgets.csv",
        "classes.csv",
        "kernels.csv",
        "ops.csv",
        "first_step.csv",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let md = std::fs::read_to_string(out.join("report.md")).expect("md");
    assert!(
        md.contains("## 2. Predicted against realized, per cause"),
        "{md}"
    );
    // report.json reads back into the same report.
    let json = std::fs::read_to_string(out.join("report.json")).expect("json");
    let doc = report::report_json::from_str(&json).expect("reads back");
    assert_eq!(report::markdown::render(&doc), md);
    // A second run without --overwrite is refused and leaves the files alone.
    let o = compare(&[&s, &s, Path::new("--out"), &out]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--overwrite"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = compare(&[&s, &s, Path::new("--out"), &out, Path::new("--overwrite")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn json_goes_to_stdout_and_nothing_is_written() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let s = sample();
    let o = Command::new(env!("CARGO_BIN_EXE_compare"))
        .args([&s, &s])
        .arg("--json")
        .current_dir(tmp.path())
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert_eq!(v["schema"], report::report_json::SCHEMA);
    assert!(std::fs::read_dir(tmp.path()).expect("dir").next().is_none());
}

#[test]
fn a_missing_side_exits_2_naming_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let missing = tmp.path().join("nope.json");
    let o = compare(&[
        &sample(),
        &missing,
        Path::new("--out"),
        &tmp.path().join("o"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("after") && err.contains("nope.json"), "{err}");
    assert!(!tmp.path().join("o").exists());
}

#[test]
fn help_teaches_the_noise_rule_and_the_exit_codes() {
    let o = compare(&[Path::new("--help")]);
    assert!(o.status.success());
    let help = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "BEFORE",
        "AFTER",
        "noise rule",
        "inconclusive",
        "realized",
        "Exit status",
    ] {
        assert!(help.contains(needle), "{needle}: {help}");
    }
}

#[test]
fn a_closed_stdout_is_quiet() {
    let s = sample();
    let s = s.to_string_lossy();
    test_support::assert_quiet_on_closed_stdout(
        env!("CARGO_BIN_EXE_compare"),
        &[s.as_ref(), s.as_ref(), "--json"],
    );
}
