//! Terminal text: the one renderer of what the tools print (trace-info, skip-stats,
//! analyze-profile, roofline, attribute-kernels' summary, profile-model).
//!
//! The title, subtitle lines and findings come first, one line each; then each section's
//! title (when not empty) and its blocks. A paragraph is one line (it may hold line breaks
//! of its own); an empty paragraph is a blank line. A table with a [`TextLayout`] is written
//! in fixed-width columns, one without as a pipe table. Figures are written as their
//! value (in the column's or the span's [`NumberFormat`], else their unit's default); their label
//! is said once by the text around them (`[measured]`, a heading), as the Markdown renderer
//! says it once per column.

use std::fmt::Write;

use crate::doc::{Align, Block, Cell, Document, Span, Table, TextLayout};
use crate::label::{Figure, NumberFormat, formatted};

/// Renders the document as terminal text.
pub fn render(doc: &Document) -> String {
    let mut out = String::new();
    if !doc.title.is_empty() {
        let _ = writeln!(out, "{}", doc.title);
    }
    for line in &doc.subtitle {
        let _ = writeln!(out, "{line}");
    }
    for f in &doc.findings {
        let _ = writeln!(out, "{}", spans(&f.spans));
    }
    for s in &doc.sections {
        if !s.title.is_empty() {
            let _ = writeln!(out, "{}", s.title);
        }
        for b in &s.blocks {
            block(&mut out, b);
        }
    }
    out
}

/// The text of a sentence: spans in order, figures as their values.
pub fn spans(spans: &[Span]) -> String {
    spans
        .iter()
        .map(|s| match s {
            Span::Text(t) | Span::Code(t) => t.clone(),
            Span::Figure(f) => figure(f, None),
            Span::Formatted(f, format) => figure(f, Some(*format)),
            Span::Tally(n) => crate::doc::tally_text(*n),
        })
        .collect()
}

/// `span` after the spaces that right-align it in `width` characters of terminal text (for
/// a figure inside a sentence or a composite cell).
pub fn padded(span: Span, width: usize) -> Vec<Span> {
    let len = spans(std::slice::from_ref(&span)).chars().count();
    vec![Span::text(" ".repeat(width.saturating_sub(len))), span]
}

fn block(out: &mut String, b: &Block) {
    match b {
        Block::Paragraph(p) => {
            let _ = writeln!(out, "{}", spans(p));
        }
        Block::List(items) => {
            for item in items {
                let _ = writeln!(out, "- {}", spans(item));
            }
        }
        Block::Table(t) => match &t.layout {
            Some(layout) => fixed_table(out, t, layout),
            None => pipe_table(out, t),
        },
        Block::Svg { caption, .. } => {
            let _ = writeln!(out, "[chart: {caption}]");
        }
        Block::Trust(entries) => {
            for e in entries {
                let count = e.count().map_or(String::new(), |f| figure(&f, None));
                let _ = writeln!(out, "{count:>8}  {} [{}]", e.message(), e.code());
            }
        }
    }
}

fn fixed_table(out: &mut String, t: &Table, layout: &TextLayout) {
    let mut line = |cells: Vec<String>| {
        let mut text = String::new();
        for (c, col) in cells.iter().zip(&layout.columns) {
            text.push_str(&" ".repeat(col.gap));
            let w = col.width;
            match col.align {
                Align::Left => {
                    let _ = write!(text, "{c:<w$}");
                }
                Align::Right => {
                    let _ = write!(text, "{c:>w$}");
                }
            }
        }
        let _ = writeln!(out, "{text}");
    };
    if layout.header {
        line(t.columns.clone());
    }
    for row in &t.rows {
        line(
            row.iter()
                .zip(&layout.columns)
                .map(|(c, col)| cell(c, col.format))
                .collect(),
        );
    }
    if let Some(note) = &t.note {
        let _ = writeln!(out, "{}", spans(note));
    }
}

fn pipe_table(out: &mut String, t: &Table) {
    let _ = writeln!(out, "| {} |", t.columns.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(t.columns.len()));
    for row in &t.rows {
        let cells: Vec<String> = row.iter().map(|c| cell(c, None)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    if let Some(note) = &t.note {
        let _ = writeln!(out, "{}", spans(note));
    }
}

fn cell(c: &Cell, format: Option<NumberFormat>) -> String {
    match c {
        Cell::Text(t) | Cell::Code(t) => t.clone(),
        Cell::Figure(f) => figure(f, format),
        Cell::Spans(s) => spans(s),
        Cell::Empty => String::new(),
    }
}

fn figure(f: &Figure, format: Option<NumberFormat>) -> String {
    match format {
        Some(_) => formatted(f.value, format),
        None => f.value_and_range(),
    }
}

#[cfg(test)]
mod tests {
    use trace_model::{Nanos, Provenance};

    use super::*;
    use crate::doc::{Column, Section};

    fn check(doc: &Document, expect: &str) {
        assert_eq!(render(doc), expect);
    }

    #[test]
    fn paragraphs_tables_and_formats() {
        let mut doc = Document::new("title");
        let mut s = Section::new("s", "");
        s.push(Block::Paragraph(crate::doc::labelled(vec![
            Span::text("GPU time: "),
            Span::Figure(Figure::duration(Nanos(1_500_000), Provenance::Measured)),
        ])));
        s.push(Block::Paragraph(Vec::new()));
        let mut t = Table::new("t", &["name", "share"]);
        t.push(vec![
            Cell::text("gemm"),
            Cell::figure(Figure::percent(12.345, Provenance::Measured)),
        ]);
        s.push(Block::Table(t.clone().with_layout(TextLayout::new(vec![
            Column::left(2, 6),
            Column::right(1, 7).format(NumberFormat::PercentSign(1)),
        ]))));
        s.push(Block::Table(t));
        doc.sections.push(s);
        check(
            &doc,
            "title\nGPU time: 1.50 ms [measured]\n\n  name     share\n  gemm     12.3%\n\
             | name | share |\n|---|---|\n| gemm | 12.3 % |\n",
        );
    }
}
