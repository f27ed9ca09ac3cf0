//! Integration tests of xplane-reader over the real captures in `$TRACEWISE_TRACES/jax/`.

mod captures;
mod fixtures;
mod model;

use std::path::PathBuf;

pub use test_support::traces_dir;

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
