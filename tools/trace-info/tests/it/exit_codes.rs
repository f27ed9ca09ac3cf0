//! Issue 45, finding 17 for trace-info: a stdout that cannot be written (`/dev/full`) is
//! never exit 0, and exit 2 ("nothing written") only when no file was put in place: the
//! Chrome export, once committed, makes a later failure exit 1.

use std::process::Command;

use test_support::workspace_root;

fn full() -> std::fs::File {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full is needed for this test (Linux)")
}

#[test]
fn a_full_stdout_is_an_error_and_2_only_when_nothing_was_written() {
    let input = workspace_root().join("testdata/nsys/ok/small.sqlite");
    // Only stdout to write: 2.
    let o = Command::new(env!("CARGO_BIN_EXE_trace-info"))
        .arg(&input)
        .stdout(full())
        .output()
        .expect("trace-info runs");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    // A Chrome export and stdout: the export is written first, so the failure is 1.
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("small.json");
    let o = Command::new(env!("CARGO_BIN_EXE_trace-info"))
        .arg(&input)
        .arg("--to-chrome-trace")
        .arg(&out)
        .stdout(full())
        .output()
        .expect("trace-info runs");
    let stderr = String::from_utf8_lossy(&o.stderr);
    let code = o.status.code();
    assert_ne!(code, Some(0), "{stderr}");
    assert_eq!(
        code == Some(2),
        !out.exists(),
        "exit {code:?}; export written: {}; {stderr}",
        out.exists()
    );
}
