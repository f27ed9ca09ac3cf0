//! The analysis crate's integration tests (one binary; modules by topic).

mod accounting;
mod skip;
mod steps;
mod verdicts;
