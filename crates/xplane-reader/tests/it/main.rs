//! Integration tests of xplane-reader over the real captures in `$TRACEWISE_TRACES/jax/`.

mod captures;
mod fixtures;
mod model;

use std::path::PathBuf;

pub use test_support::traces_dir;

/// Every `*.xplane.pb` that `<traces>/jax/MANIFEST.md` lists (test-support checks that
/// the folders hold no other), sorted by folder.
pub fn xplane_files(traces: &std::path::Path) -> Vec<PathBuf> {
    test_support::RealTraces::read(traces)
        .xspaces
        .into_iter()
        .map(|x| x.path)
        .collect()
}
