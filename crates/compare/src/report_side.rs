//! A side read from an earlier `report.json` of investigate (schema 1, docs/report-json.md)
//! instead of a capture: what the user kept of last week's run when the trace is gone.
//!
//! Such a report holds the steady-state step figures (its `steps` table: count, median and
//! quartiles, the mean step of the window, the GPUs) and the ranked causes with their keys
//! and time per step (its `what_to_change` table). So a report side compares step time and
//! predicted against realized gains; budgets, classes, kernels and ops need the capture.

use std::io::Read;
use std::path::Path;

use serde_json::Value;
use trace_model::Nanos;

use crate::{CauseKey, Side, Stat};

/// Whether `path` is an investigate report.json: a regular file whose JSON text opens
/// with a `"schema"` key (a Kineto trace opens with `"schemaVersion"` or `"traceEvents"`).
pub fn is_report(path: &Path) -> bool {
    if !path.is_file() {
        return false;
    }
    let mut head = [0u8; 64];
    let Ok(n) = std::fs::File::open(path).and_then(|mut f| f.read(&mut head)) else {
        return false;
    };
    let text: String = String::from_utf8_lossy(&head[..n])
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    text.starts_with("{\"schema\":")
}

/// The largest report.json read (a report is tens of kilobytes; this bounds a hostile one).
const MAX_REPORT_BYTES: u64 = 64 << 20;

/// Reads the side; the error names what is missing or malformed.
pub fn read(path: &Path) -> Result<Side, String> {
    let len = std::fs::metadata(path).map_err(|e| e.to_string())?.len();
    if len > MAX_REPORT_BYTES {
        return Err(format!(
            "{len} bytes: larger than any report.json ({MAX_REPORT_BYTES} bytes at most)"
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}"))?;
    match doc.get("schema").and_then(Value::as_u64) {
        Some(1) => {}
        other => {
            return Err(format!(
                "report.json schema {other:?}: only schema 1 is read"
            ));
        }
    }
    let title = doc.get("title").and_then(Value::as_str).unwrap_or("");
    if !title.starts_with("Investigation of") {
        return Err(format!(
            "\"{title}\" is not an investigate report (its title says \"Investigation of …\")"
        ));
    }
    let steps = table(&doc, "steps")
        .ok_or("no steps table: a report.json written before tracewise kept it cannot be a side")?;
    let step_rows = rows(steps)?;
    let pooled = step_rows
        .iter()
        .find(|r| r.get("capture").and_then(text_of) == Some("all"))
        .or_else(|| step_rows.first())
        .ok_or("the steps table has no row")?;
    let first = step_rows.first().ok_or("the steps table has no row")?;
    let field = |row: &Row, column: &str| -> Result<Nanos, String> {
        row.get(column)
            .and_then(figure)
            .map(Nanos)
            .ok_or(format!("steps table: no figure under \"{column}\""))
    };
    let count = |row: &Row, column: &str| field(row, column).map(|n| n.0 as usize);
    let steady = count(pooled, "steady-state steps")?;
    let list = |row: &Row, column: &str| -> Vec<String> {
        row.get(column)
            .and_then(text_of)
            .unwrap_or("")
            .split("; ")
            .filter_map(|item| {
                let (n, name) = item.split_once(" × ")?;
                Some(std::iter::repeat_n(name.to_owned(), n.parse().ok()?))
            })
            .flatten()
            .collect()
    };
    let origin = pooled
        .get("steps found by")
        .and_then(text_of)
        .unwrap_or("")
        .to_owned();
    let whole = analysis::StepOrigin::WholeCapture.describe();
    let mut side = Side::empty(path);
    side.format = "investigate report.json (schema 1): step figures and ranked causes only".into();
    side.from_report = true;
    side.gpu_models = list(pooled, "GPU models");
    side.gpu_vendors = list(pooled, "GPU vendors");
    side.devices = count(pooled, "GPUs with activity")?;
    side.captures = step_rows.len() - usize::from(step_rows.len() > 1);
    side.has_steps = origin != whole;
    side.step_origin = origin;
    side.steady_steps = count(first, "steady-state steps")?;
    side.step_stat = Some(Stat {
        median: field(pooled, "median step")?,
        q1: field(pooled, "lower quartile")?,
        q3: field(pooled, "upper quartile")?,
        samples: steady,
    });
    side.mean_step = first
        .get("mean step of the window")
        .and_then(figure)
        .map(Nanos);
    if let Some(change) = table(&doc, "what_to_change") {
        for row in rows(change)? {
            let key = row
                .get("key")
                .and_then(text_of)
                .ok_or("what_to_change: no key column")?;
            let key = CauseKey::from_code(key)
                .ok_or(format!("what_to_change: unknown cause key \"{key}\""))?;
            let time = field(&row, "time per step")
                .map_err(|e| e.replace("steps table", "what_to_change"))?;
            side.causes.push((key, time));
        }
    }
    Ok(side)
}

type Row = std::collections::BTreeMap<String, Value>;

/// The table named `name` in any section.
fn table<'a>(doc: &'a Value, name: &str) -> Option<&'a Value> {
    doc.get("sections")?
        .as_array()?
        .iter()
        .filter_map(|s| s.get("blocks")?.as_array())
        .flatten()
        .filter(|b| b.get("kind").and_then(Value::as_str) == Some("table"))
        .filter_map(|b| b.get("content"))
        .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
}

/// A table's rows, each cell by its column's name (the `[label]` suffix the Markdown adds
/// is not in the JSON).
fn rows(table: &Value) -> Result<Vec<Row>, String> {
    let name = table.get("name").and_then(Value::as_str).unwrap_or("?");
    let columns: Vec<&str> = table
        .get("columns")
        .and_then(Value::as_array)
        .ok_or(format!("table {name}: no columns"))?
        .iter()
        .map(|c| c.as_str().unwrap_or(""))
        .collect();
    let rows = table
        .get("rows")
        .and_then(Value::as_array)
        .ok_or(format!("table {name}: no rows"))?;
    Ok(rows
        .iter()
        .filter_map(Value::as_array)
        .map(|cells| {
            columns
                .iter()
                .zip(cells)
                .map(|(c, v)| ((*c).to_owned(), v.clone()))
                .collect()
        })
        .collect())
}

/// A text (or code) cell's text.
fn text_of(cell: &Value) -> Option<&str> {
    cell.get("value")?.as_str()
}

/// A figure cell's integer value (a duration in nanoseconds, or a count).
fn figure(cell: &Value) -> Option<i64> {
    if cell.get("kind")?.as_str()? != "figure" {
        return None;
    }
    let v = cell.get("value")?.get("value")?;
    match v.get("unit")?.as_str()? {
        "duration" | "count" => v.get("value")?.as_i64(),
        _ => None,
    }
}
