//! Running a tool whose stdout reader has gone (`tool | head -0`).

use std::ffi::OsStr;
use std::process::{Command, Stdio};

/// Runs `bin args` in the workspace root with stdout a pipe whose reading end is closed
/// before the tool starts, so its first write to stdout fails with a broken pipe, and
/// checks what every tool owes a reader that stopped: exit 0 and nothing on stderr (no
/// panic, no error message).
pub fn assert_quiet_on_closed_stdout<S: AsRef<OsStr>>(bin: &str, args: &[S]) {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    // No reader: every write to the pipe fails with EPIPE, however early it comes.
    drop(reader);
    let out = Command::new(bin)
        .args(args)
        .current_dir(crate::workspace_root())
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("the tool runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{bin} with stdout closed: {stderr}"
    );
    assert!(stderr.is_empty(), "{bin} with stdout closed: {stderr}");
}
