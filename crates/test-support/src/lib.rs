//! Helpers shared by the workspace's integration tests (a dev-dependency only).
//!
//! The real GPU captures are not in the repository: tests that need them call
//! [`traces_dir`], which reads `TRACEWISE_TRACES` and, when it is unset, says on stderr
//! that the test was skipped, so a fresh clone's `cargo test` passes and says why.
//!
//! ```
//! if let Some(dir) = test_support::traces_dir("doc example") {
//!     assert!(dir.join("pytorch").is_dir());
//! }
//! ```

use std::path::PathBuf;

/// The workspace root (integration tests run with their own crate as current directory).
pub fn workspace_root() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// The real-trace folder named by `TRACEWISE_TRACES` (a relative path is taken from the
/// workspace root, as CI's `TRACEWISE_TRACES=../shared/traces` means), or `None` after
/// printing that `test` was skipped.
pub fn traces_dir(test: &str) -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("TRACEWISE_TRACES") else {
        eprintln!("{test}: skipped (set TRACEWISE_TRACES to the real-trace folder to run it)");
        return None;
    };
    let dir = PathBuf::from(dir);
    let dir = if dir.is_relative() {
        workspace_root().join(dir)
    } else {
        dir
    };
    assert!(
        dir.is_dir(),
        "TRACEWISE_TRACES={} is not a directory",
        dir.display()
    );
    Some(dir)
}
