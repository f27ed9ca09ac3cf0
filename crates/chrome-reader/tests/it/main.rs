//! Integration tests of chrome-reader: fixtures under testdata/chrome and, when
//! `TRACEWISE_TRACES` names the real-trace folder, every PyTorch and JAX trace in it.

mod fixtures;
mod parallel;
mod real_traces;
mod write;

pub use test_support::workspace_root;

pub use test_support::traces_dir;
