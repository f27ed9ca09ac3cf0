//! Integration tests of xplane-reader over the real captures in `$TRACEWISE_TRACES/jax/`.

mod captures;
mod model;

use std::path::PathBuf;

/// The real-capture folder named by `TRACEWISE_TRACES` (relative paths are resolved against the
/// workspace root), or `None` after printing that the calling test was skipped.
pub fn traces_dir(test: &str) -> Option<PathBuf> {
    let Some(value) = std::env::var_os("TRACEWISE_TRACES") else {
        eprintln!("{test}: skipped, TRACEWISE_TRACES is not set");
        return None;
    };
    let path = PathBuf::from(value);
    let path = if path.is_absolute() {
        path
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(path)
    };
    Some(path)
}

/// Every `*.xplane.pb` under `<traces>/jax/*/`, sorted.
pub fn xplane_files(traces: &std::path::Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let jax = traces.join("jax");
    let folders = std::fs::read_dir(&jax).unwrap_or_else(|err| panic!("{}: {err}", jax.display()));
    for folder in folders {
        let folder = folder.unwrap().path();
        if !folder.is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.to_string_lossy().ends_with(".xplane.pb") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}
