//! The traces HTA's methods write, through output-file (`trace_frame::hta`):
//! `overlay_critical_path_analysis`'s (the rank's trace with the critical path's events
//! marked and its edges drawn as flow events), `get_frequent_cuda_kernel_sequences`' (the
//! patterns marked) and `generate_trace_with_counters`' (counter events appended).

use std::path::{Path, PathBuf};

use pyo3::prelude::*;
use trace_frame::hta;
use trace_frame::hta::TraceEvent;

use crate::{Kind, fail, run};

/// One edge of an overlaid trace: (start event index, whether the edge leaves that event's
/// start, end event index, whether it reaches that event's start, HTA's edge type, weight
/// in whole µs, whether it is on the critical path).
type FlowEdge = (usize, bool, usize, bool, String, i64, bool);

/// HTA's `overlay_critical_path_analysis` file: the trace `input` with `args.critical = 1`
/// on the events at the positions `critical` of its `traceEvents`; with `only_critical`,
/// of its complete (`ph: X`) events only those and the user annotations and Python
/// functions kept; and a flow start and end (`ph: s`/`f`, named `critical_path`) per edge
/// of `flows` appended, at its events' start or end (an activity's end 1 µs earlier, as
/// HTA draws it). Written to `output` through output-file (an earlier output replaced;
/// never one of `inputs`).
#[pyfunction]
pub(crate) fn write_overlaid_trace(
    py: Python<'_>,
    input: PathBuf,
    output: PathBuf,
    critical: Vec<usize>,
    only_critical: bool,
    flows: Vec<FlowEdge>,
    inputs: Vec<PathBuf>,
) -> PyResult<()> {
    let p = input.clone();
    run(py, Some(&input), move || {
        let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
        let mark = |ev: &hta::RawEvent<'_, &str>| {
            if only_critical && droppable(ev) {
                DROPPABLE
            } else {
                0
            }
        };
        hta::write_trace_edited(&p, &output, &inputs, mark, |list| {
            overlay(list, &critical, only_critical, &flows)
        })
        .map_err(|e| fail(&e))
    })
}

/// The flow event of one end of an edge, at its event's start or end.
fn flow_event(
    raw: &serde_json::Value,
    id: usize,
    at_start: bool,
    is_start: bool,
    edge: &FlowEdge,
) -> serde_json::Value {
    use serde_json::json;
    let ts = raw["ts"].as_f64().unwrap_or(0.0);
    let dur = raw["dur"].as_f64().unwrap_or(0.0);
    let mut end = ts + dur;
    if raw["args"]["device"].as_i64().unwrap_or(-1) >= 0 {
        end -= dur.min(1.0);
    }
    let at = if at_start { ts } else { end };
    let mut ev = json!({
        "ph": if is_start { "s" } else { "f" },
        "id": id,
        "pid": raw["pid"],
        "tid": raw["tid"],
        "ts": at.trunc() as i64,
        "cat": edge.4,
        "name": "critical_path",
        "args": {"weight": edge.5, "critical": edge.6},
    });
    if !is_start {
        ev["bp"] = json!("e");
    }
    ev
}

/// The mark of an event [`droppable`] as it is read.
const DROPPABLE: u8 = 1;

/// Whether an overlaid trace that keeps only the critical events drops the event unless
/// it is on the path: a complete event (`ph: X`) other than a user annotation or a Python
/// function, without `args.critical` 1 (the event is marked so as it is read).
fn droppable(ev: &hta::RawEvent<'_, &str>) -> bool {
    if ev.ph != "X"
        || matches!(
            ev.cat.as_deref(),
            Some("user_annotation" | "python_function")
        )
    {
        return false;
    }
    // Most events have no `critical` key: their `args` are not parsed (a text without the
    // word and without escapes cannot have the key).
    !ev.args
        .filter(|a| a.contains("critical") || a.contains('\\'))
        .and_then(|a| serde_json::from_str::<serde_json::Value>(a).ok())
        .is_some_and(|a| a["critical"] == 1)
}

/// The edit of [`write_overlaid_trace`]: only the events marked critical and those the
/// flows start or end at are parsed; with `only_critical`, the events read as
/// [`droppable`] go unless they are on the path (changed here).
fn overlay(
    list: &mut Vec<TraceEvent<'_>>,
    critical: &[usize],
    only_critical: bool,
    flows: &[FlowEdge],
) -> Result<(), String> {
    let missing = |k: usize| format!("event {k} of the critical path is not in the trace");
    for &k in critical {
        let mut ev = list.get(k).ok_or_else(|| missing(k))?.value()?;
        let Some(obj) = ev.as_object_mut() else {
            return Err(format!("event {k} of the critical path is not an object"));
        };
        let args = obj.entry("args").or_insert_with(|| serde_json::json!({}));
        if let Some(a) = args.as_object_mut() {
            a.insert("critical".into(), 1.into());
        }
        list[k] = TraceEvent::from_value(&ev)?;
    }
    let mut parsed: std::collections::HashMap<usize, serde_json::Value> = Default::default();
    let mut value_at = |k: usize, list: &[TraceEvent<'_>]| -> Result<serde_json::Value, String> {
        if let Some(v) = parsed.get(&k) {
            return Ok(v.clone());
        }
        let v = list.get(k).ok_or_else(|| missing(k))?.value()?;
        parsed.insert(k, v.clone());
        Ok(v)
    };
    let mut added = Vec::with_capacity(2 * flows.len());
    for (id, edge) in flows.iter().enumerate() {
        let start = value_at(edge.0, list)?;
        added.push(TraceEvent::from_value(&flow_event(
            &start, id, edge.1, true, edge,
        ))?);
        let end = value_at(edge.2, list)?;
        added.push(TraceEvent::from_value(&flow_event(
            &end, id, edge.3, false, edge,
        ))?);
    }
    if only_critical {
        list.retain(|ev| ev.mark() != Some(DROPPABLE));
    }
    list.extend(added);
    Ok(())
}

/// One pattern of HTA's frequent kernel sequences: (its text, its count, the positions in
/// `traceEvents` of the events of its occurrences).
type Pattern = (String, i64, Vec<usize>);

/// HTA's `get_frequent_cuda_kernel_sequences` file: the trace `input` with
/// `args.Patterns` (`{pattern: count}`) on the events of the `patterns`' occurrences; with
/// `compress`, the other complete events' `args` emptied and their names replaced by the
/// id of the name (ids are the positions of the trace's distinct names in sorted order;
/// the `PyTorch Profiler` event of pid `Spans` carries the map from id to name in its
/// `args`). Written to `output` through output-file (an earlier output replaced; never one
/// of `inputs`).
#[pyfunction]
pub(crate) fn write_patterned_trace(
    py: Python<'_>,
    input: PathBuf,
    output: PathBuf,
    patterns: Vec<Pattern>,
    compress: bool,
    inputs: Vec<PathBuf>,
) -> PyResult<()> {
    let p = input.clone();
    run(py, Some(&input), move || {
        let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
        hta::write_trace_edited(
            &p,
            &output,
            &inputs,
            |_| 0,
            |list| mark_patterns(list, &patterns, compress),
        )
        .map_err(|e| fail(&e))
    })
}

/// The edit of [`write_patterned_trace`]: the events of the patterns are parsed; with
/// `compress`, the other complete events get their name and `args` replaced field by field
/// (their other fields copied as read).
fn mark_patterns(
    list: &mut [TraceEvent<'_>],
    patterns: &[Pattern],
    compress: bool,
) -> Result<(), String> {
    use serde_json::{Map, Value};
    use std::borrow::Cow;
    let mut active: std::collections::HashMap<usize, Map<String, Value>> = Default::default();
    for (text, count, events) in patterns {
        for &k in events {
            if k >= list.len() {
                return Err(format!("event {k} of a kernel pattern is not in the trace"));
            }
            active
                .entry(k)
                .or_default()
                .insert(text.clone(), Value::from(*count));
        }
    }
    // Only the patterns' events change when the others are not compressed: no other
    // event is read (each was a parse of its fields, on traces of 200k events).
    if !compress {
        for (k, found) in active {
            let v = list[k].value()?;
            if v.is_object() {
                list[k] = TraceEvent::from_value(&with_patterns(v, found))?;
            }
        }
        return Ok(());
    }
    let mut names: std::collections::BTreeSet<String> = Default::default();
    for ev in list.iter() {
        if let Some(n) = ev.str_field("name")
            && !names.contains(n.as_ref())
        {
            names.insert(n.into_owned());
        }
    }
    let id_of: std::collections::HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let table: Map<String, Value> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (i.to_string(), Value::from(n.clone())))
        .collect();
    for (k, ev) in list.iter_mut().enumerate() {
        let Some(fields) = ev.fields() else {
            continue;
        };
        let field = |key: &str| fields.iter().rev().find(|(f, _)| f == key).map(|f| f.1);
        let is_x = field("ph").and_then(hta::raw_str).as_deref() == Some("X");
        let mut changed: Option<Value> = None;
        if let Some(found) = active.remove(&k) {
            changed = Some(with_patterns(ev.value()?, found));
        } else if is_x {
            // The name becomes its id, `args` becomes empty (added where absent).
            let id = field("name")
                .and_then(hta::raw_str)
                .and_then(|n| id_of.get(n.as_ref()).copied());
            let mut out: Vec<(Cow<'_, str>, Cow<'_, str>)> = Vec::with_capacity(fields.len() + 1);
            let mut has_args = false;
            for (i, (key, raw)) in fields.iter().enumerate() {
                if fields[i + 1..].iter().any(|(later, _)| later == key) {
                    continue; // a key given twice: the last one counts
                }
                let value: Cow<'_, str> = match (&**key, id) {
                    ("args", _) => {
                        has_args = true;
                        Cow::Borrowed("{}")
                    }
                    ("name", Some(id)) => Cow::Owned(format!("\"{id}\"")),
                    _ => Cow::Borrowed(raw.get()),
                };
                out.push((key.clone(), value));
            }
            if !has_args {
                out.push((Cow::Borrowed("args"), Cow::Borrowed("{}")));
            }
            let new = hta::write_fields(&out)?;
            drop(fields);
            *ev = new;
            continue;
        }
        // The profiler's span (never a compressed one: its name is an id then) carries
        // the table of names.
        let profiler = field("name")
            .and_then(hta::raw_str)
            .is_some_and(|n| n.contains("PyTorch Profiler"));
        let spans = field("pid").and_then(hta::raw_str).as_deref() == Some("Spans");
        if profiler && spans {
            let mut v = match changed.take() {
                Some(v) => v,
                None => ev.value()?,
            };
            v["args"] = Value::Object(table.clone());
            changed = Some(v);
        }
        drop(fields);
        if let Some(v) = changed {
            *ev = TraceEvent::from_value(&v)?;
        }
    }
    Ok(())
}

/// The event `v` with `args.Patterns` set to `found` (`args` made an object where it is
/// absent or not one).
fn with_patterns(
    mut v: serde_json::Value,
    found: serde_json::Map<String, serde_json::Value>,
) -> serde_json::Value {
    if let Some(obj) = v.as_object_mut() {
        let args = obj
            .entry("args")
            .or_insert_with(|| serde_json::Value::Object(Default::default()));
        if !args.is_object() {
            *args = serde_json::Value::Object(Default::default());
        }
        args["Patterns"] = serde_json::Value::Object(found);
    }
    v
}

/// One counter series of [`write_trace_with_counters`]: (the counter's name, which is the
/// key of each event's `args`; per point its pid, `ts` (µs), value, whether values are
/// integers, per point the event's name, and per point its `id` or none).
type CounterSeries = (
    String,
    Vec<i64>,
    Vec<f64>,
    Vec<f64>,
    bool,
    Vec<String>,
    Option<Vec<i64>>,
);

/// HTA's `generate_trace_with_counters` file: the trace `input` with a counter event
/// (`{"pid", "ts", "args": {counter: value}, "ph": "C", "name"[, "id"]}`) per point of
/// each of `series` appended to its `traceEvents`, written to `output` through output-file
/// (an earlier output replaced; never one of `inputs`). The trace's own events are copied
/// as read.
#[pyfunction]
pub(crate) fn write_trace_with_counters(
    py: Python<'_>,
    input: PathBuf,
    output: PathBuf,
    series: Vec<CounterSeries>,
    inputs: Vec<PathBuf>,
) -> PyResult<()> {
    let p = input.clone();
    run(py, Some(&input), move || {
        let events = counter_events(&series).map_err(|e| {
            (
                Kind::Analysis,
                format!("the counter events cannot be written: {e}"),
            )
        })?;
        let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
        hta::write_trace_edited(
            &p,
            &output,
            &inputs,
            |_| 0,
            |list| {
                list.extend(events.into_iter().map(TraceEvent::New));
                Ok(())
            },
        )
        .map_err(|e| fail(&e))
    })
}

/// The counter events of [`write_trace_with_counters`], as JSON text.
fn counter_events(
    series: &[CounterSeries],
) -> Result<Vec<Box<serde_json::value::RawValue>>, serde_json::Error> {
    use std::fmt::Write;
    let mut out = Vec::new();
    for (counter, pid, ts, value, integer, name, id) in series {
        let counter = serde_json::to_string(counter)?;
        let names: Vec<String> = name
            .iter()
            .map(serde_json::to_string)
            .collect::<Result<_, _>>()?;
        for k in 0..pid.len().min(ts.len()).min(value.len()).min(name.len()) {
            let mut s = String::with_capacity(128);
            let v = if *integer {
                (value[k] as i64).to_string()
            } else {
                serde_json::to_string(&value[k])?
            };
            let _ = write!(
                s,
                "{{\"pid\":{},\"ts\":{},\"args\":{{{counter}:{v}}},\"ph\":\"C\",\"name\":{}",
                pid[k],
                serde_json::to_string(&ts[k])?,
                names[k]
            );
            if let Some(id) = id.as_ref().and_then(|i| i.get(k)) {
                let _ = write!(s, ",\"id\":{id}");
            }
            s.push('}');
            out.push(serde_json::value::RawValue::from_string(s)?);
        }
    }
    Ok(out)
}
