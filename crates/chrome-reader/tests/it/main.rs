//! Integration tests of chrome-reader: fixtures under testdata/chrome and, when
//! `TRACEWISE_TRACES` names the real-trace folder, every PyTorch and JAX trace in it.

mod fixtures;
mod real_traces;

use std::path::PathBuf;

/// The workspace root (tests run with the crate as current directory).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The real-trace folder, or `None` (and a note on stderr) when the suite is not asked for.
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
