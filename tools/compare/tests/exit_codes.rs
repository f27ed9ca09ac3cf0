//! Issue 45, finding 17 for compare: exit 2 means nothing was written. With stdout on a
//! full device (`/dev/full`) after the report directory is in place, the run exits 1 and
//! says its outputs are complete; with nothing to write but stdout, a full stdout is 2.

use std::process::Command;

fn sample() -> std::path::PathBuf {
    test_support::workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json")
}

fn full() -> std::fs::File {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full is needed for this test (Linux)")
}

#[test]
fn a_full_stdout_after_the_report_is_written_exits_1() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("cmp");
    let o = Command::new(env!("CARGO_BIN_EXE_compare"))
        .arg(sample())
        .arg(sample())
        .arg("--out")
        .arg(&out)
        .stdout(full())
        .output()
        .expect("compare runs");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("complete and in place"), "{stderr}");
    assert!(out.join("report.md").is_file());
}

#[test]
fn a_full_stdout_with_nothing_written_exits_2() {
    let o = Command::new(env!("CARGO_BIN_EXE_compare"))
        .arg(sample())
        .arg(sample())
        .arg("--json")
        .stdout(full())
        .output()
        .expect("compare runs");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("complete and in place"), "{stderr}");
}
