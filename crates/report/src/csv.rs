//! Tables as CSV: one file per table, figures as raw numbers in base units (durations in
//! ns, percentages as percent) with a label column beside each figure column.

use std::fmt::Write;

use crate::doc::{Cell, Table};
use crate::label::Value;

/// The raw number of a value, in its base unit.
pub fn raw(v: Value) -> String {
    match v {
        Value::Duration(ns) => ns.to_string(),
        Value::Percent(p)
        | Value::Ratio(p)
        | Value::FlopsPerSecond(p)
        | Value::Flops(p)
        | Value::Number(p) => {
            format!("{p}")
        }
        Value::Count(n) | Value::Bytes(n) => n.to_string(),
    }
}

fn unit(v: Value) -> &'static str {
    match v {
        Value::Duration(_) => " [ns]",
        Value::Percent(_) => " [%]",
        Value::Bytes(_) => " [bytes]",
        Value::FlopsPerSecond(_) => " [FLOP/s]",
        Value::Flops(_) => " [FLOP]",
        Value::Count(_) | Value::Ratio(_) | Value::Number(_) => "",
    }
}

/// Renders one table as CSV text (RFC 4180 quoting).
pub fn render(t: &Table) -> String {
    // A column holds figures when any of its cells does; it gets a label column.
    let figure_unit: Vec<Option<&'static str>> = (0..t.columns.len())
        .map(|i| {
            t.rows.iter().find_map(|r| match &r[i] {
                Cell::Figure(f) => Some(unit(f.value)),
                _ => None,
            })
        })
        .collect();
    let mut out = String::new();
    let mut header = Vec::new();
    for (c, u) in t.columns.iter().zip(&figure_unit) {
        match u {
            Some(u) => {
                header.push(format!("{c}{u}"));
                header.push(format!("{c} label"));
            }
            None => header.push(c.clone()),
        }
    }
    line(&mut out, &header);
    for row in &t.rows {
        let mut fields = Vec::new();
        for (c, u) in row.iter().zip(&figure_unit) {
            let (value, label) = match c {
                Cell::Text(s) | Cell::Code(s) => (s.clone(), String::new()),
                Cell::Figure(f) => (raw(f.value), f.label.word().to_owned()),
                Cell::Spans(spans) => (spans.iter().map(|s| s.plain()).collect(), String::new()),
                Cell::Empty => (String::new(), String::new()),
            };
            fields.push(value);
            if u.is_some() {
                fields.push(label);
            }
        }
        line(&mut out, &fields);
    }
    out
}

fn line(out: &mut String, fields: &[String]) {
    let quoted: Vec<String> = fields
        .iter()
        .map(|f| {
            if f.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", f.replace('"', "\"\""))
            } else {
                f.clone()
            }
        })
        .collect();
    let _ = writeln!(out, "{}", quoted.join(","));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Figure, Provenance};

    #[test]
    fn figures_get_a_label_column() {
        let mut t = Table::new("x", &["name", "time"]);
        t.push(vec![
            Cell::code("a,b"),
            Cell::figure(Figure::duration(
                trace_model::Nanos(5),
                Provenance::Measured,
            )),
        ]);
        assert_eq!(
            render(&t),
            "name,time [ns],time label\n\"a,b\",5,measured\n"
        );
    }
}
