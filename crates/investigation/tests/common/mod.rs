//! What the investigation's synthetic-trace tests share: a Kineto trace from its events,
//! investigated with no minimum of GPU work (toy captures test the rules), and the events.

#![allow(dead_code)] // Each test file uses its own part of it.

use investigation::{Investigation, RankedCause};
use trace_model::Nanos;

pub const US: i64 = 1000;

/// The investigation of a Kineto trace made of `events`.
pub fn investigate(events: &[String]) -> Investigation {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("synthetic.json");
    std::fs::write(
        &path,
        format!(r#"{{"traceEvents": [{}]}}"#, events.join(",")),
    )
    .expect("written");
    // Toy captures: the rules under test, not the minimum of GPU work for a verdict.
    let options = investigation::Options {
        min_gpu_work: Some(Nanos(0)),
        ..Default::default()
    };
    investigation::investigate(&path, &options)
        .expect("investigates")
        .investigation
}

/// The ranked cause of `key`.
pub fn cause<'a>(causes: &'a [RankedCause], key: &str) -> &'a RankedCause {
    causes
        .iter()
        .find(|c| c.key == key)
        .unwrap_or_else(|| panic!("no cause {key}: {causes:#?}"))
}

/// A complete event; tids 7 and up are GPU streams (pid 0), the others host threads.
pub fn ev(cat: &str, name: &str, tid: u64, ts: u64, dur: u64, args: &str) -> String {
    let pid = if tid >= 7 { 0 } else { 1 };
    format!(
        r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": {pid}, "tid": {tid}, "ts": {ts}, "dur": {dur}, "args": {{{args}}}}}"#
    )
}

/// The annotation of step `n` on host thread 1.
pub fn step(n: u64, ts: u64, dur: u64) -> String {
    ev(
        "user_annotation",
        &format!("ProfilerStep#{n}"),
        1,
        ts,
        dur,
        "",
    )
}
