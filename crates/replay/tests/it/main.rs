//! The replay crate's integration tests: synthetic captures with known answers, before/after
//! pairs from a program simulator and from edited shared captures, and the real captures
//! (with `TRACEWISE_TRACES`).

mod edited;
mod pairs;
mod ranks;
mod real;
mod sim;
mod synthetic;
