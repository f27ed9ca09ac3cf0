//! One self-contained HTML page: inline CSS and SVG, no network, readable without
//! JavaScript; a few lines of inline script make the tables sortable.

use std::fmt::Write;

use crate::doc::{Block, Cell, Document, Span};
use crate::label::Figure;

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1500px;padding:0 16px;color:#222}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0;font-size:13px}th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4;cursor:pointer}td.num{text-align:right;white-space:nowrap}code{font-size:12px;background:#f6f6f6;padding:0 3px}
.label{color:#777;font-size:11px}.note{color:#555;font-size:12px}.findings li{margin:4px 0}
figure{margin:12px 0;overflow-x:auto}figcaption{color:#555;font-size:12px}";

const SCRIPT: &str = "document.querySelectorAll('table.sortable th').forEach(function(th,i){th.addEventListener('click',function(){var t=th.closest('table'),b=t.tBodies[0],r=Array.prototype.slice.call(b.rows),d=th.dataset.dir==='a'?-1:1;th.dataset.dir=d===1?'a':'d';r.sort(function(x,y){var p=x.cells[i].dataset.v,q=y.cells[i].dataset.v;if(p!==undefined&&q!==undefined)return d*(parseFloat(p)-parseFloat(q));return d*x.cells[i].textContent.localeCompare(y.cells[i].textContent);});r.forEach(function(x){b.appendChild(x);});});});";

/// Renders the document as one HTML page.
pub fn render(doc: &Document) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        esc(&doc.title),
        esc(&doc.title)
    );
    for line in &doc.subtitle {
        let _ = writeln!(out, "<div class=\"note\">{}</div>", esc(line));
    }
    if !doc.findings.is_empty() {
        let _ = writeln!(
            out,
            "<h2 id=\"findings\">Findings</h2><ul class=\"findings\">"
        );
        for f in &doc.findings {
            let _ = writeln!(out, "<li>{}</li>", spans(&f.spans));
        }
        out.push_str("</ul>\n");
    }
    for s in &doc.sections {
        let _ = writeln!(out, "<h2 id=\"{}\">{}</h2>", esc(&s.id), esc(&s.title));
        for b in &s.blocks {
            block(&mut out, b);
        }
    }
    let _ = write!(out, "<script>{SCRIPT}</script>\n</body></html>\n");
    out
}

fn block(out: &mut String, b: &Block) {
    match b {
        Block::Paragraph(p) => {
            let _ = writeln!(out, "<p>{}</p>", spans(p));
        }
        Block::List(items) => {
            out.push_str("<ul>");
            for item in items {
                let _ = write!(out, "<li>{}</li>", spans(item));
            }
            out.push_str("</ul>\n");
        }
        Block::Table(t) => {
            let _ = write!(
                out,
                "<table class=\"sortable\" data-name=\"{}\"><thead><tr>",
                esc(&t.name)
            );
            for c in &t.columns {
                let _ = write!(out, "<th>{}</th>", esc(c));
            }
            out.push_str("</tr></thead><tbody>\n");
            for row in &t.rows {
                out.push_str("<tr>");
                for c in row {
                    cell(out, c);
                }
                out.push_str("</tr>\n");
            }
            out.push_str("</tbody></table>\n");
            if let Some(note) = &t.note {
                let _ = writeln!(out, "<div class=\"note\">{}</div>", spans(note));
            }
        }
        Block::Svg { caption, svg } => {
            let _ = writeln!(
                out,
                "<figure>{svg}<figcaption>{}</figcaption></figure>",
                esc(caption)
            );
        }
        Block::Trust(entries) => {
            if entries.is_empty() {
                out.push_str("<p>Nothing on the trust list.</p>\n");
                return;
            }
            out.push_str("<table class=\"sortable\" data-name=\"trust\"><thead><tr><th>item</th><th>count</th><th>share</th><th>code</th></tr></thead><tbody>\n");
            for e in entries {
                let _ = write!(out, "<tr><td>{}</td>", esc(e.message()));
                match &e.count() {
                    Some(f) => figure_cell(out, f),
                    None => out.push_str("<td>-</td>"),
                }
                match &e.share() {
                    Some(f) => figure_cell(out, f),
                    None => out.push_str("<td>-</td>"),
                }
                let _ = writeln!(out, "<td><code>{}</code></td></tr>", esc(e.code()));
            }
            out.push_str("</tbody></table>\n");
        }
    }
}

fn cell(out: &mut String, c: &Cell) {
    match c {
        Cell::Text(t) => {
            let _ = write!(out, "<td>{}</td>", esc(t));
        }
        Cell::Code(t) => {
            let _ = write!(
                out,
                "<td><code title=\"{}\">{}</code></td>",
                esc(t),
                esc(&cut(t))
            );
        }
        Cell::Figure(f) => figure_cell(out, f),
        Cell::Spans(s) => {
            let _ = write!(out, "<td>{}</td>", spans(s));
        }
        Cell::Empty => out.push_str("<td></td>"),
    }
}

fn figure_cell(out: &mut String, f: &Figure) {
    let _ = write!(
        out,
        "<td class=\"num\" data-v=\"{}\" title=\"{}\">{} <span class=\"label\">{}</span></td>",
        crate::csv::raw(f.value),
        esc(f.label.detail().unwrap_or("")),
        esc(&f.value_and_range()),
        f.label.word()
    );
}

fn spans(spans: &[Span]) -> String {
    let mut out = String::new();
    for s in spans {
        match s {
            Span::Text(t) => out.push_str(&esc(t)),
            Span::Code(c) => {
                let _ = write!(out, "<code>{}</code>", esc(c));
            }
            Span::Figure(f) | Span::Formatted(f, _) => {
                let _ = write!(
                    out,
                    "<span title=\"{}\">{}</span> <span class=\"label\">({})</span>",
                    esc(f.label.detail().unwrap_or("")),
                    esc(&f.value_and_range()),
                    f.label.word()
                );
            }
            Span::Tally(n) => out.push_str(&crate::doc::tally_text(*n)),
        }
    }
    out
}

fn cut(s: &str) -> String {
    if s.chars().count() > 90 {
        s.chars().take(87).chain("...".chars()).collect()
    } else {
        s.to_owned()
    }
}

/// The colour of `key` in `palette`, else `fallback` (the SVG charts' fills).
pub(crate) fn colour_in(
    palette: &[(&str, &'static str)],
    key: &str,
    fallback: &'static str,
) -> &'static str {
    palette
        .iter()
        .find(|(k, _)| *k == key)
        .map_or(fallback, |(_, c)| c)
}

/// Escapes text for HTML and XML (element content and attribute values).
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}
