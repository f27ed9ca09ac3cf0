//! The analysis crate's integration tests (one binary; modules by topic).

mod accounting;
mod row_parts;
mod rows_in_rank_order;
mod skip;
mod steps;
mod verdicts;
