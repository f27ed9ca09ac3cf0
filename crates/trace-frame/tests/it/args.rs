//! Issue 46, must-show 2: the frame's `args_*` columns, when asked for (the full frame of
//! [`trace_frame::read_frame`]), equal a full serde_json parse of each event's `args`, on
//! every Kineto fixture and every shared Kineto trace: the same keys, the type the crate
//! docs give a column (only integers: Int64; numbers: Float64; booleans: Boolean; anything
//! mixed, or arrays and objects: String), and each event's value in its row.

use std::collections::BTreeMap;
use std::path::Path;

use polars::prelude::*;
use serde_json::Value;

/// What a column of `args` values holds, by the kinds of its non-null values.
#[derive(Default, Clone, Copy)]
struct Kinds {
    ints: bool,
    floats: bool,
    bools: bool,
    strs: bool,
}

impl Kinds {
    fn add(&mut self, v: &Value) {
        match v {
            Value::Number(n) if n.is_i64() => self.ints = true,
            // Beyond i64 (NCCL comm ids): kept as their text.
            Value::Number(n) if n.is_u64() => self.strs = true,
            // An integer beyond u64 parses as a float here; the frame keeps its text.
            Value::Number(_) => self.floats = true,
            Value::Bool(_) => self.bools = true,
            Value::Null => {}
            _ => self.strs = true,
        }
    }

    /// The column type of the crate docs.
    fn dtype(self) -> DataType {
        let kinds = [self.ints || self.floats, self.bools, self.strs]
            .iter()
            .filter(|k| **k)
            .count();
        match kinds {
            1 if self.ints && !self.floats => DataType::Int64,
            1 if self.ints || self.floats => DataType::Float64,
            1 if self.bools => DataType::Boolean,
            _ => DataType::String,
        }
    }
}

/// Whether the frame's cell `got` (as text for a String column) is the event's value `want`.
fn text_equals(got: &str, want: &Value) -> bool {
    match want {
        Value::String(s) => got == s,
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), ..) => got.parse::<i64>() == Ok(i),
            (None, Some(u), _) => got == u.to_string(),
            (None, None, Some(f)) => got.parse::<f64>() == Ok(f),
            _ => false,
        },
        Value::Bool(b) => got == if *b { "true" } else { "false" },
        Value::Array(_) | Value::Object(_) => {
            serde_json::from_str::<Value>(got).ok().as_ref() == Some(want)
        }
        Value::Null => false,
    }
}

/// A column's kinds and its values by row.
type Column<'a> = (Kinds, Vec<(usize, &'a Value)>);

/// The differences between the frame of `path` and serde_json's parse of it (empty: equal),
/// and the number of non-null `args` values compared.
fn differences(path: &Path) -> (Vec<String>, usize) {
    let frame = trace_frame::read_frame(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let text = test_support::inflated(path);
    let doc: Value =
        serde_json::from_slice(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let events = match &doc {
        Value::Array(events) => events,
        Value::Object(top) => match top.get("traceEvents") {
            Some(Value::Array(events)) => events,
            _ => panic!("{}: no traceEvents array", path.display()),
        },
        _ => panic!("{}: neither an object nor an array", path.display()),
    };
    let df = &frame.df;
    let mut out = Vec::new();
    if df.height() != events.len() {
        out.push(format!("{} rows for {} events", df.height(), events.len()));
        return (out, 0);
    }
    // Every key's value by row (the last where an event repeats a key, as a JSON object's
    // parse keeps), and the kinds each column holds.
    let mut columns: BTreeMap<String, Column<'_>> = BTreeMap::new();
    for (row, e) in events.iter().enumerate() {
        let members: Vec<(&str, &Value)> = match e.get("args") {
            Some(Value::Object(args)) => args.iter().map(|(k, v)| (k.as_str(), v)).collect(),
            Some(Value::Null) | None => continue,
            Some(other) => vec![("", other)],
        };
        for (key, v) in members {
            let (kinds, values) = columns.entry(format!("args_{key}")).or_default();
            kinds.add(v);
            if !v.is_null() {
                values.push((row, v));
            }
        }
    }
    // A column of the frame that no event's `args` gives a value holds only nulls.
    for c in df.columns() {
        let name = c.name().as_str();
        if name.starts_with("args_") && !columns.contains_key(name) && c.null_count() != c.len() {
            out.push(format!("{name}: a column no event's args has"));
        }
    }
    let mut compared = 0;
    for (name, (kinds, values)) in &columns {
        if values.is_empty() {
            continue; // only nulls: the frame may or may not have the column
        }
        let Ok(col) = df.column(name) else {
            out.push(format!("{name}: missing"));
            continue;
        };
        if col.dtype() != &kinds.dtype() {
            out.push(format!(
                "{name}: {} where the values make it {}",
                col.dtype(),
                kinds.dtype()
            ));
            continue;
        }
        let cells = cells(col.as_materialized_series());
        let mut expected: Vec<Option<&Value>> = vec![None; df.height()];
        for (row, v) in values {
            expected[*row] = Some(*v);
        }
        for (row, (got, want)) in cells.iter().zip(&expected).enumerate() {
            let same = match (got, want) {
                (None, None) => true,
                (Some(Cell::Int(i)), Some(Value::Number(n))) => n.as_i64() == Some(*i),
                (Some(Cell::Float(f)), Some(Value::Number(n))) => n.as_f64() == Some(*f),
                (Some(Cell::Bool(b)), Some(Value::Bool(w))) => b == w,
                (Some(Cell::Text(t)), Some(w)) => text_equals(t, w),
                _ => false,
            };
            if !same {
                out.push(format!("{name}, row {row}: frame {got:?}, args {want:?}"));
                break; // one per column is enough to see it
            }
            compared += usize::from(want.is_some());
        }
    }
    (out, compared)
}

/// One cell of a frame column.
#[derive(Debug)]
enum Cell {
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(String),
}

fn cells(s: &Series) -> Vec<Option<Cell>> {
    match s.dtype() {
        DataType::Int64 => s.i64().unwrap().iter().map(|v| v.map(Cell::Int)).collect(),
        DataType::Float64 => s
            .f64()
            .unwrap()
            .iter()
            .map(|v| v.map(Cell::Float))
            .collect(),
        DataType::Boolean => s
            .bool()
            .unwrap()
            .iter()
            .map(|v| v.map(Cell::Bool))
            .collect(),
        DataType::String => (s.str().unwrap().iter())
            .map(|v| v.map(|t| Cell::Text(t.to_owned())))
            .collect(),
        other => panic!("{}: an args column of type {other}", s.name()),
    }
}

/// Every Kineto fixture that the frame reads and every shared Kineto trace: the `args_*`
/// columns equal serde_json's parse of each event's `args`, key by key and row by row.
#[test]
fn args_columns_equal_a_full_parse_of_each_events_args() {
    let root = test_support::workspace_root().join("testdata/chrome/ok");
    let mut files = test_support::json_files(&root);
    let fixtures = files.len();
    if let Some(set) =
        test_support::real_traces("args_columns_equal_a_full_parse_of_each_events_args")
    {
        files.extend(set.kineto.iter().map(|t| t.path.clone()));
    }
    let (mut found, mut traces, mut values) = (Vec::new(), 0, 0);
    for (k, path) in files.iter().enumerate() {
        // A fixture the frame does not read (or serde_json does not parse as one document)
        // is not compared; a shared trace must be read both ways.
        let parses = serde_json::from_slice::<Value>(&test_support::inflated(path)).is_ok();
        if !(parses && trace_frame::read_frame(path).is_ok()) {
            assert!(k < fixtures, "{}: not read both ways", path.display());
            continue;
        }
        let (diffs, n) = differences(path);
        found.extend(diffs.iter().map(|d| format!("{}: {d}", path.display())));
        traces += 1;
        values += n;
    }
    eprintln!("{traces} traces, {values} args values compared");
    assert!(
        traces >= 5 && values > 0,
        "{traces} traces, {values} values compared"
    );
    assert!(found.is_empty(), "{}", found.join("\n"));
}
