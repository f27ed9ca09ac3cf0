//! Unreadable files and directories for the tests of what a tool does with an entry it
//! cannot open, where the tests run as root.
//!
//! Mode 000 is enough for an ordinary user, but root (as CI runs) reads through it, and a
//! test that then skipped would check nothing. So a test that needs one first calls
//! [`rerun_where_permissions_hold`]: as root it runs that same test again in a child
//! process whose capability bounding set lacks `CAP_DAC_OVERRIDE` and
//! `CAP_DAC_READ_SEARCH` (util-linux's `setpriv`), where mode 000 holds for root too, and
//! the child's result is the test's.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

/// Set in the child, so that a child in which permissions still do not hold reports it
/// rather than starting another.
const CHILD: &str = "TRACEWISE_TEST_PERMISSIONS_CHILD";

/// What a child prints where it reads through mode 000 even so.
const UNENFORCEABLE: &str = "setpriv could not drop CAP_DAC_OVERRIDE here";

/// Makes `path` (a file or a directory) unreadable: mode 000.
pub fn make_unreadable(path: &Path) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o000)).expect("chmod 000");
}

/// Undoes [`make_unreadable`] (mode 755), so the temporary directory can be removed.
pub fn make_readable(path: &Path) {
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755));
}

/// Whether mode 000 keeps this process out of a file.
fn permissions_hold() -> bool {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let probe = dir.path().join("probe");
    std::fs::write(&probe, b"x").expect("write a probe");
    make_unreadable(&probe);
    let held = std::fs::File::open(&probe).is_err();
    make_readable(&probe);
    held
}

/// For the test named `test` (its path within the test binary, as `cargo test --exact`
/// takes it): returns false where permissions hold, and the test goes on. Otherwise runs
/// the test again in a child process without the capabilities that bypass them, asserts
/// that it ran and passed, and returns true: the caller then returns.
pub fn rerun_where_permissions_hold(test: &str) -> bool {
    if permissions_hold() {
        return false;
    }
    if std::env::var_os(CHILD).is_some() {
        // The child reads through mode 000 too: setpriv could not drop the capabilities
        // (no CAP_SETPCAP, as in some containers). The parent says so.
        println!("{UNENFORCEABLE}");
        return true;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = Command::new("setpriv")
        .arg("--bounding-set=-dac_override,-dac_read_search")
        .arg(&exe)
        .args([test, "--exact", "--nocapture"])
        .env(CHILD, "1")
        .output()
        .expect("setpriv (util-linux) runs the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.starts_with("setpriv:") || stdout.contains(UNENFORCEABLE) {
        // Nothing here can make an entry unreadable (setpriv failed, or could not drop the
        // capabilities): the test is skipped, and says so.
        eprintln!("{test}: skipped: root reads through mode 000 and {UNENFORCEABLE} {stderr}");
        return true;
    }
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{test} without CAP_DAC_OVERRIDE: {}\n{stdout}\n{stderr}",
        out.status
    );
    true
}
