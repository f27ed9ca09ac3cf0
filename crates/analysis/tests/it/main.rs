//! The analysis crate's integration tests (one binary; modules by topic).

mod accounting;
mod row_parts;
mod skip;
mod steps;
mod verdicts;
