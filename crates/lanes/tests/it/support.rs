//! Helpers shared by the tests: build traces from `serde_json` values, run the
//! compaction or merge in memory, and look at the output as values.

use std::path::Path;

use lanes::{CompactSummary, MergeSummary, Trace};
use serde_json::{Value, json};

/// A JSON number that stays an integer when it has no fraction (as Python writes it).
pub fn num(x: f64) -> Value {
    if x.fract() == 0.0 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

pub fn kernel(name: &str, stream: i64, ts: f64, dur: f64, annotation: Option<&str>) -> Value {
    let mut args = json!({"stream": stream});
    if let Some(a) = annotation {
        args["name"] = json!(a);
    }
    json!({"name": name, "cat": "kernel", "ph": "X", "pid": 0, "tid": stream,
           "ts": num(ts), "dur": num(dur), "args": args})
}

pub fn annotation(stream: i64, ts: f64, dur: f64, external_id: i64) -> Value {
    json!({"name": "ProfilerStep#19", "cat": "gpu_user_annotation", "ph": "X", "pid": 0,
           "tid": stream, "ts": num(ts), "dur": num(dur), "args": {"External id": external_id}})
}

pub fn memcpy(stream: i64, ts: f64, dur: f64, annotation: &str) -> Value {
    json!({"name": "Memcpy DtoD", "cat": "gpu_memcpy", "ph": "X", "pid": 0, "tid": stream,
           "ts": num(ts), "dur": num(dur), "args": {"stream": stream, "name": annotation}})
}

pub fn flow(stream: i64, ts: f64) -> Value {
    json!({"name": "ac2g", "cat": "ac2g", "ph": "f", "pid": 0, "tid": stream, "ts": num(ts), "id": 1})
}

pub fn thread_metadata(pid: i64, tid: i64, name: &str) -> Value {
    json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}})
}

pub fn rank_trace(rank: i64, base_time_ns: i64, events: Vec<Value>) -> Value {
    json!({
        "baseTimeNanoseconds": base_time_ns,
        "displayTimeUnit": "ms",
        "distributedInfo": {"backend": "fake", "rank": rank,
                            "pg_config": [{"pg_name": "torchtitan_real_pp", "ranks": [0, 4]}]},
        "traceEvents": events,
    })
}

pub fn plain_trace(events: Vec<Value>) -> Value {
    json!({ "traceEvents": events })
}

pub fn read(trace: &Value, name: &str) -> Trace {
    let text = trace.to_string();
    Trace::read(text.as_bytes(), Path::new(name)).expect("test traces are valid")
}

pub fn events_of(trace: &Trace) -> Vec<Value> {
    trace
        .event_texts()
        .map(|t| serde_json::from_str(&t).expect("output events are valid JSON"))
        .collect()
}

pub fn compact(trace: &Value) -> (Vec<Value>, CompactSummary) {
    compact_with(trace, &lanes::Config::default())
}

pub fn compact_with(trace: &Value, config: &lanes::Config) -> (Vec<Value>, CompactSummary) {
    let res = lanes::compact_trace(read(trace, "test.json"), config).expect("compaction succeeds");
    (events_of(&res.trace), res.summary)
}

pub fn merge(traces: &[Value]) -> (Vec<Value>, MergeSummary) {
    let traces = traces
        .iter()
        .enumerate()
        .map(|(i, t)| read(t, &format!("rank{i}.json")))
        .collect();
    let res = lanes::merge_pp_traces(traces, &lanes::Config::default()).expect("merge succeeds");
    (events_of(&res.trace), res.summary)
}

pub fn cat_is(ev: &Value, cat: &str) -> bool {
    ev.get("cat").and_then(Value::as_str) == Some(cat)
}

pub fn f(ev: &Value, key: &str) -> f64 {
    ev[key].as_f64().unwrap_or(f64::NAN)
}
