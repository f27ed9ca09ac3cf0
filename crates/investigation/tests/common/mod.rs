//! What the investigation's synthetic-trace tests share: a Kineto trace from its events,
//! investigated with no minimum of GPU work (toy captures test the rules), and the events.

#![allow(dead_code)] // Each test file uses its own part of it.

use std::path::{Path, PathBuf};

use investigation::{Advice, CauseReplay, Investigation, RankedCause, Replayed};
use trace_model::Nanos;

pub const US: i64 = 1000;

/// Writes the test's input: a Kineto trace `name` in `dir` (a test's own temporary
/// directory) made of `events`, with `head` (say a `distributedInfo` member and its comma)
/// before its `traceEvents`.
pub fn write_trace(dir: &Path, name: &str, head: &str, events: &[String]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(r#"{{{head}"traceEvents": [{}]}}"#, events.join(",")),
    )
    .expect("the synthetic trace is written");
    path
}

/// The investigation of a Kineto trace made of `events`.
pub fn investigate(events: &[String]) -> Investigation {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = write_trace(dir.path(), "synthetic.json", "", events);
    // Toy captures: the rules under test, not the minimum of GPU work for a verdict.
    let options = investigation::Options {
        min_gpu_work: Some(Nanos(0)),
        ..Default::default()
    };
    investigation::investigate(&path, &options)
        .expect("investigates")
        .investigation
}

/// The ranked causes of an investigation whose advice is a ranking.
pub fn causes(inv: &Investigation) -> &[RankedCause] {
    match &inv.advice {
        Advice::Ranked(r) => &r.causes,
        other => panic!("not ranked: {other:?}"),
    }
}

/// The replayed estimate of a cause that has one.
pub fn replayed(c: &RankedCause) -> &Replayed {
    match &c.replay {
        CauseReplay::Replayed(r) => r,
        other => panic!("{} not replayed: {other:?}", c.key),
    }
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
