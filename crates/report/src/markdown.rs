//! Markdown: findings first, then each section; tables as GitHub tables; SVG charts are
//! referred to by caption (they are in the HTML page).

use std::fmt::Write;

use crate::doc::{Block, Cell, Document, Span};

/// Renders the document as Markdown.
pub fn render(doc: &Document) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", escape(&doc.title));
    for line in &doc.subtitle {
        let _ = writeln!(out, "{}  ", escape(line));
    }
    if !doc.subtitle.is_empty() {
        out.push('\n');
    }
    if !doc.findings.is_empty() {
        let _ = writeln!(out, "## Findings\n");
        for f in &doc.findings {
            let _ = writeln!(out, "- {}", spans(&f.spans));
        }
        out.push('\n');
    }
    for s in &doc.sections {
        let _ = writeln!(out, "## {}\n", escape(&s.title));
        for b in &s.blocks {
            block(&mut out, b);
        }
    }
    out
}

fn block(out: &mut String, b: &Block) {
    match b {
        Block::Paragraph(p) => {
            let _ = writeln!(out, "{}\n", spans(p));
        }
        Block::List(items) => {
            for item in items {
                let _ = writeln!(out, "- {}", spans(item));
            }
            out.push('\n');
        }
        Block::Table(t) => {
            // A column whose figures all carry one label says it once, in its header.
            let shared: Vec<Option<&'static str>> = (0..t.columns.len())
                .map(|i| {
                    let mut words = t.rows.iter().filter_map(|r| match &r[i] {
                        Cell::Figure(f) => Some(f.label.word()),
                        _ => None,
                    });
                    let first = words.next()?;
                    words.all(|w| w == first).then_some(first)
                })
                .collect();
            let header: Vec<String> = t
                .columns
                .iter()
                .zip(&shared)
                .map(|(c, w)| match w {
                    Some(w) => format!("{} [{w}]", escape(c)),
                    None => escape(c),
                })
                .collect();
            let _ = writeln!(out, "| {} |", header.join(" | "));
            let _ = writeln!(out, "|{}", "---|".repeat(t.columns.len()));
            for row in &t.rows {
                let cells: Vec<String> = row
                    .iter()
                    .zip(&shared)
                    .map(|(c, w)| match (c, w) {
                        (Cell::Figure(f), Some(_)) => f.value_and_range(),
                        _ => cell(c),
                    })
                    .collect();
                let _ = writeln!(out, "| {} |", cells.join(" | "));
            }
            if let Some(note) = &t.note {
                let _ = writeln!(out, "\n{}", spans(note));
            }
            let _ = writeln!(out, "\n(table: `{}.csv`)\n", t.name);
        }
        Block::Svg { caption, .. } => {
            let _ = writeln!(out, "*Chart: {} (in `report.html`).*\n", escape(caption));
        }
        Block::Trust(entries) => {
            if entries.is_empty() {
                let _ = writeln!(out, "Nothing on the trust list.\n");
                return;
            }
            let _ = writeln!(out, "| item | count | share | code |\n|---|---|---|---|");
            for e in entries {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | `{}` |",
                    escape(e.message()),
                    e.count().map_or("-".to_owned(), |f| f.text()),
                    e.share().map_or("-".to_owned(), |f| f.text()),
                    e.code()
                );
            }
            out.push('\n');
        }
    }
}

fn spans(spans: &[Span]) -> String {
    spans
        .iter()
        .map(|s| match s {
            Span::Text(t) => escape(t),
            Span::Code(c) => code(c),
            Span::Figure(f) | Span::Formatted(f, _) => f.text(),
            Span::Tally(n) => crate::doc::tally_text(*n),
        })
        .collect()
}

fn cell(c: &Cell) -> String {
    match c {
        Cell::Text(t) => escape(t),
        Cell::Code(t) => code(t),
        Cell::Figure(f) => f.text(),
        Cell::Spans(s) => spans_cell(s),
        Cell::Empty => String::new(),
    }
}

/// A cell of spans: where it holds several figures and all have one label, the label is
/// written once, at the cell's end (`×324 (4.93 ms) (measured)`), not after each figure.
fn spans_cell(s: &[Span]) -> String {
    let mut words = s.iter().filter_map(|s| match s {
        Span::Figure(f) | Span::Formatted(f, _) => Some(f.label.word()),
        _ => None,
    });
    let Some(first) = words.next() else {
        return spans(s);
    };
    let (mut more, mut same) = (false, true);
    for w in words {
        more = true;
        same &= w == first;
    }
    if !(more && same) {
        return spans(s);
    }
    let mut out: String = s
        .iter()
        .map(|s| match s {
            Span::Text(t) => escape(t),
            Span::Code(c) => code(c),
            Span::Figure(f) | Span::Formatted(f, _) => f.value_and_range(),
            Span::Tally(n) => crate::doc::tally_text(*n),
        })
        .collect();
    out.push_str(&format!(" ({first})"));
    out
}

/// Inline code; long names are cut so tables stay readable (the CSV has them whole).
fn code(s: &str) -> String {
    let cut: String = if s.chars().count() > 90 {
        s.chars().take(87).chain("...".chars()).collect()
    } else {
        s.to_owned()
    };
    format!("`{}`", cut.replace('`', "'").replace('|', "\\|"))
}

fn escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use trace_model::{Nanos, Provenance};

    use super::*;
    use crate::label::Figure;

    fn kernel_use(label: Provenance) -> Vec<Span> {
        vec![
            Span::code("gemm"),
            Span::text(" ×"),
            Span::Figure(Figure::count(324, Provenance::Measured)),
            Span::text(" ("),
            Span::Figure(Figure::duration(Nanos(4_930_000), label)),
            Span::text(")"),
        ]
    }

    #[test]
    fn a_cell_of_figures_with_one_label_says_it_once() {
        assert_eq!(
            cell(&Cell::Spans(kernel_use(Provenance::Measured))),
            "`gemm` ×324 (4.93 ms) (measured)"
        );
    }

    #[test]
    fn a_cell_of_figures_with_two_labels_says_each() {
        let inferred = Provenance::inferred("assumed");
        assert_eq!(
            cell(&Cell::Spans(kernel_use(inferred))),
            "`gemm` ×324 (measured) (4.93 ms (inferred))"
        );
    }

    #[test]
    fn a_tally_is_a_bare_count_and_no_label() {
        let line = [
            Span::text("The "),
            Span::tally(12_345usize),
            Span::text(" op(s) below cover "),
            Span::Figure(Figure::percent(40.0, Provenance::Measured)),
        ];
        assert_eq!(
            spans(&line),
            "The 12,345 op(s) below cover 40.0 % (measured)"
        );
        assert_eq!(
            crate::text::spans(&line),
            "The 12,345 op(s) below cover 40.0 %"
        );
        // A tally is no figure: a heading or sentence over it takes its word from the
        // figures alone.
        assert_eq!(crate::doc::spans_label(&line), Some("measured"));
    }
}
