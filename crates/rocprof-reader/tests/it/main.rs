//! Integration tests of rocprof-reader: the real ROCm captures in
//! `$TRACEWISE_TRACES/rocprof/`, checked against the vendor's own summaries and independent
//! decodes, and inputs made here (Perfetto packets, rocpd databases, malformed files).

mod bad;
mod bounds;
mod csv_v3;
mod fixtures;
mod json;
mod perfetto;
mod rocpd;
mod rocpd_sdk;
mod v1;

use std::path::PathBuf;

/// `$TRACEWISE_TRACES/rocprof`, or `None` (the test says it skipped) when unset.
pub fn rocprof_dir(test: &str) -> Option<PathBuf> {
    test_support::traces_dir(test).map(|dir| dir.join("rocprof"))
}

/// A fresh scratch directory for one test.
pub fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary directory can be made")
}
