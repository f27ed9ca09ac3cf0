//! Integration tests of the lanes crate: the reference's five scenarios, error cases,
//! semantic lane groups, synthetic CUDA-graph and pipeline-parallel traces, and the real
//! traces named by `TRACEWISE_TRACES`.

mod errors;
mod real;
mod reference;
mod semantic;
mod support;
mod swimlane;
mod synthetic;
