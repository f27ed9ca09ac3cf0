//! The reader's integration tests: exports made by the tests (exact captures, bad input)
//! and the shared real exports (`TRACEWISE_TRACES`).

mod bad_input;
mod bounds;
mod export;
mod fixtures;
mod real_traces;
mod synthetic;
