//! HTA's `overlay_critical_path_analysis` file: the rank's trace with the critical path's
//! events marked and its edges drawn as flow events, written through output-file
//! (`trace_frame::hta::write_trace_edited`).

use std::path::{Path, PathBuf};

use pyo3::prelude::*;
use trace_frame::hta;

use crate::{fail, run};

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
        hta::write_trace_edited(&p, &output, &inputs, |list| {
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

/// The edit of [`write_overlaid_trace`].
fn overlay(
    list: &mut Vec<serde_json::Value>,
    critical: &[usize],
    only_critical: bool,
    flows: &[FlowEdge],
) -> Result<(), String> {
    let missing = |k: usize| format!("event {k} of the critical path is not in the trace");
    for &k in critical {
        let ev = list.get_mut(k).ok_or_else(|| missing(k))?;
        let Some(obj) = ev.as_object_mut() else {
            return Err(format!("event {k} of the critical path is not an object"));
        };
        let args = obj.entry("args").or_insert_with(|| serde_json::json!({}));
        if let Some(a) = args.as_object_mut() {
            a.insert("critical".into(), 1.into());
        }
    }
    let mut added = Vec::with_capacity(2 * flows.len());
    for (id, edge) in flows.iter().enumerate() {
        let start = list.get(edge.0).ok_or_else(|| missing(edge.0))?;
        added.push(flow_event(start, id, edge.1, true, edge));
        let end = list.get(edge.2).ok_or_else(|| missing(edge.2))?;
        added.push(flow_event(end, id, edge.3, false, edge));
    }
    if only_critical {
        list.retain(|ev| {
            ev["ph"] != "X"
                || matches!(
                    ev["cat"].as_str(),
                    Some("user_annotation" | "python_function")
                )
                || ev["args"]["critical"] == 1
        });
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
        hta::write_trace_edited(&p, &output, &inputs, |list| {
            mark_patterns(list, &patterns, compress)
        })
        .map_err(|e| fail(&e))
    })
}

/// The edit of [`write_patterned_trace`].
fn mark_patterns(
    list: &mut [serde_json::Value],
    patterns: &[Pattern],
    compress: bool,
) -> Result<(), String> {
    use serde_json::{Map, Value};
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
    let names: std::collections::BTreeSet<String> = list
        .iter()
        .filter_map(|ev| ev["name"].as_str().map(str::to_owned))
        .collect();
    let id_of: std::collections::HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    for (k, ev) in list.iter_mut().enumerate() {
        let Some(obj) = ev.as_object_mut() else {
            continue;
        };
        if let Some(found) = active.remove(&k) {
            let args = obj
                .entry("args")
                .or_insert_with(|| Value::Object(Map::new()));
            if !args.is_object() {
                *args = Value::Object(Map::new());
            }
            args["Patterns"] = Value::Object(found);
        } else if compress && obj.get("ph").and_then(Value::as_str) == Some("X") {
            obj.insert("args".into(), Value::Object(Map::new()));
            let id = obj
                .get("name")
                .and_then(Value::as_str)
                .and_then(|n| id_of.get(n));
            if let Some(&id) = id {
                obj.insert("name".into(), Value::from(id.to_string()));
            }
        }
    }
    if compress {
        let table: Map<String, Value> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (i.to_string(), Value::from(n.clone())))
            .collect();
        for ev in list.iter_mut() {
            let profiler = ev["name"]
                .as_str()
                .is_some_and(|n| n.contains("PyTorch Profiler"));
            if profiler && ev["pid"] == "Spans" {
                ev["args"] = Value::Object(table.clone());
            }
        }
    }
    Ok(())
}
