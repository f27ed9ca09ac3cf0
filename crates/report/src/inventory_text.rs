//! How `trace-info` shows an [`Inventory`]: a [`Document`] for people, printed by
//! [`crate::text`].

use analysis::Inventory;
use trace_model::{Nanos, Provenance};

use crate::doc::{
    Block, Cell, Column, Document, Section, Span, Table, TextLayout, bracketed, labelled,
};
use crate::label::{Figure, NumberFormat};
use crate::measured;

/// Renders the inventory as text for a terminal.
pub fn render_text(inv: &Inventory) -> String {
    crate::text::render(&document(inv))
}

/// The inventory as a document: the capture, its GPU devices and streams, host threads,
/// steps, HLO programs and diagnostics.
pub fn document(inv: &Inventory) -> Document {
    let mut doc = Document::new(inv.path.clone());
    let mut head = Section::new("capture", "");
    head.para(format!("  format      {}", inv.format));
    if let Some(p) = &inv.producer {
        head.para(format!("  producer    {p}"));
    }
    match (inv.rank, inv.world_size) {
        (Some(r), Some(n)) => head.para(format!("  rank        {r} of {n}")),
        (Some(r), None) => head.para(format!("  rank        {r}")),
        _ => {}
    }
    if let Some((s, e)) = inv.window_ns {
        let mut spans = vec![
            Span::text("  window      "),
            Span::Figure(Figure::duration(e - s, Provenance::Measured)),
        ];
        // The ends as figures where they are on the axis's positive side (always, but a
        // count holds no sign: a negative one stays text).
        match (u64::try_from(s.0), u64::try_from(e.0)) {
            (Ok(from), Ok(to)) => spans.extend([
                Span::text(" (from "),
                fixed(measured::count(from), 0),
                Span::text(" ns to "),
                fixed(measured::count(to), 0),
                Span::text(" ns on the capture's axis)"),
            ]),
            _ => spans.push(Span::text(format!(
                " (from {} ns to {} ns on the capture's axis)",
                s.0, e.0
            ))),
        }
        head.push(Block::line(labelled(spans)));
    }
    head.push(Block::blank());
    doc.sections.push(head);
    doc.sections.push(devices(inv));
    doc.sections.push(threads(inv));
    doc.sections.push(steps(inv));
    if !inv.programs.is_empty() {
        doc.sections.push(programs(inv));
    }
    doc.sections.push(diagnostics(inv));
    doc
}

fn devices(inv: &Inventory) -> Section {
    let mut sec = Section::new("devices", "");
    sec.push(count_line("GPU devices", inv.devices.len(), ""));
    let metadata = || Provenance::read("profiler metadata");
    for d in &inv.devices {
        let mut props: Vec<Vec<Span>> = Vec::new();
        if let Some(cc) = &d.compute_capability {
            props.push(vec![Span::text(format!("compute capability {cc}"))]);
        }
        if let Some(n) = d.multiprocessors {
            props.push(vec![
                fixed(Figure::count(n, metadata()), 0),
                Span::text(" SMs/CUs"),
            ]);
        }
        if let Some(m) = d.memory_bytes {
            props.push(vec![
                fixed(
                    Figure::number(m as f64 / (1u64 << 30) as f64, metadata()),
                    1,
                ),
                Span::text(" GiB"),
            ]);
        }
        if let Some(k) = d.clock_khz {
            props.push(vec![
                fixed(Figure::number(k as f64 / 1e3, metadata()), 0),
                Span::text(" MHz"),
            ]);
        }
        if let Some(b) = d.memory_bandwidth_gb_s {
            props.push(vec![
                fixed(Figure::number(b, metadata()), 0),
                Span::text(" GB/s memory bandwidth"),
            ]);
        }
        let mut spans = vec![Span::text(format!(
            "  GPU {} ({}, {})",
            d.ordinal,
            d.vendor,
            d.name
                .as_deref()
                .filter(|n| !n.is_empty())
                .unwrap_or("model not recorded")
        ))];
        if !props.is_empty() {
            spans.push(Span::text(" — "));
            for (i, p) in props.into_iter().enumerate() {
                if i > 0 {
                    spans.push(Span::text(", "));
                }
                spans.extend(p);
            }
            let source = metadata();
            spans.push(Span::text(format!(
                " [{}: {}]",
                source.word(),
                source.detail().unwrap_or_default()
            )));
        }
        sec.push(Block::line(spans));
        if d.streams.is_empty() {
            sec.para("    no activity");
            continue;
        }
        let mut t = Table::new(
            format!("gpu{}_streams", d.ordinal),
            &["stream", "kernels", "memcpy", "memset", "busy", "launched"],
        );
        for s in &d.streams {
            let label = match &s.name {
                Some(n) => n.clone(),
                None => format!("stream {}", s.ordinal),
            };
            let total = s.kernels + s.memcpys + s.memsets;
            let launched = if total == 0 {
                0.0
            } else {
                100.0 * s.launched as f64 / total as f64
            };
            t.push(vec![
                Cell::text(label),
                Cell::figure(measured::count(s.kernels)),
                Cell::figure(measured::count(s.memcpys)),
                Cell::figure(measured::count(s.memsets)),
                Cell::figure(Figure::duration(s.busy_ns, Provenance::Measured)),
                Cell::figure(Figure::percent(launched, Provenance::Measured)),
            ]);
        }
        sec.push(Block::Table(t.with_layout(TextLayout::new(vec![
            Column::left(4, 28),
            Column::right(1, 8).format(NumberFormat::Fixed(0)),
            Column::right(1, 8).format(NumberFormat::Fixed(0)),
            Column::right(1, 8).format(NumberFormat::Fixed(0)),
            Column::right(1, 12),
            Column::right(1, 9).format(NumberFormat::PercentSign(1)),
        ]))));
    }
    if inv.devices.is_empty() {
        sec.para("  none: this capture holds no GPU activity (a CPU-only capture?)");
    } else {
        let tables: Vec<Block> = sec
            .blocks
            .iter()
            .filter(|b| matches!(b, Block::Table(_)))
            .cloned()
            .collect();
        sec.para(format!(
            "  (counts and busy time{}; busy = union of activity intervals; launched = share with a host launch found by correlation id)",
            bracketed(Block::label(&tables))
        ));
    }
    sec.push(Block::blank());
    sec
}

fn threads(inv: &Inventory) -> Section {
    let mut sec = Section::new("threads", "");
    sec.push(Block::line(labelled(count_spans(
        "Host threads",
        inv.threads.len(),
    ))));
    let mut t = Table::new(
        "threads",
        &["pid", "tid", "events", "launches", "cpu ops", "name"],
    );
    for th in &inv.threads {
        t.push(vec![
            // An id that is not a 64-bit integer shows as the trace wrote it.
            Cell::text(th.pid_text.clone().unwrap_or_else(|| th.pid.to_string())),
            Cell::text(th.tid_text.clone().unwrap_or_else(|| th.tid.to_string())),
            Cell::figure(measured::count(th.events)),
            Cell::figure(measured::count(th.launches)),
            Cell::figure(measured::count(th.cpu_ops)),
            Cell::text(th.name.as_deref().unwrap_or("")),
        ]);
    }
    sec.push(Block::Table(t.with_layout(TextLayout::new(vec![
        Column::right(2, 10),
        Column::right(1, 12),
        Column::right(1, 9).format(NumberFormat::Fixed(0)),
        Column::right(1, 9).format(NumberFormat::Fixed(0)),
        Column::right(1, 9).format(NumberFormat::Fixed(0)),
        Column::left(2, 0),
    ]))));
    sec.push(Block::blank());
    sec
}

fn steps(inv: &Inventory) -> Section {
    let mut sec = Section::new("steps", "");
    match (inv.steps.count, inv.steps.source) {
        (0, _) | (_, None) => {
            sec.para("Steps: none found (no ProfilerStep# annotations or step markers)");
        }
        (n, Some(source)) => {
            let d = |ns: Option<Nanos>| {
                Span::Figure(Figure::duration(
                    ns.unwrap_or(Nanos::ZERO),
                    Provenance::Measured,
                ))
            };
            sec.push(Block::line(crate::doc::labelled(vec![
                Span::text("Steps: "),
                fixed(measured::count(n), 0),
                Span::text(format!(
                    " from {source}; numbers {}; duration median ",
                    compact_numbers(&inv.steps.numbers)
                )),
                d(inv.steps.median_ns),
                Span::text(", min "),
                d(inv.steps.min_ns),
                Span::text(", max "),
                d(inv.steps.max_ns),
            ])));
        }
    }
    sec
}

fn programs(inv: &Inventory) -> Section {
    let mut sec = Section::new("programs", "");
    sec.push(Block::blank());
    let at = sec.blocks.len();
    let mut t = Table::new(
        "programs",
        &["program id", "instructions", "Python line", "name"],
    );
    for p in &inv.programs {
        match (p.instructions, p.with_python_line) {
            (Some(n), Some(k)) => {
                let pct = if n == 0 {
                    0.0
                } else {
                    100.0 * k as f64 / n as f64
                };
                let mut python = crate::text::padded(fixed(measured::count(k), 0), 6);
                python.push(Span::text(" ("));
                python.extend(crate::text::padded(
                    Span::formatted(
                        Figure::percent(pct, Provenance::Measured),
                        NumberFormat::Fixed(1),
                    ),
                    4,
                ));
                python.push(Span::text("%)"));
                t.push(vec![
                    Cell::text(p.id.to_string()),
                    Cell::figure(measured::count(n)),
                    Cell::Spans(python),
                    Cell::text(p.name.clone()),
                ]);
            }
            _ => t.push(vec![
                Cell::text(p.id.to_string()),
                Cell::text("-"),
                Cell::text("-"),
                Cell::text(format!(
                    "{} (undecodable: {})",
                    p.name,
                    p.error.as_deref().unwrap_or("unknown error")
                )),
            ]),
        }
    }
    sec.push(Block::Table(t.with_layout(TextLayout::new(vec![
        Column::right(2, 12),
        Column::right(1, 12).format(NumberFormat::Fixed(0)),
        Column::right(1, 14),
        Column::left(2, 0),
    ]))));
    let label = bracketed(Block::label(&sec.blocks[at..]));
    sec.blocks.insert(
        at,
        count_line(
            "HLO programs",
            inv.programs.len(),
            &format!(" (instructions and Python-line coverage{label})"),
        ),
    );
    sec
}

fn diagnostics(inv: &Inventory) -> Section {
    let mut sec = Section::new("diagnostics", "");
    sec.push(Block::blank());
    if inv.diagnostics.is_empty() {
        sec.para("Diagnostics: none");
    } else {
        sec.push(count_line("Diagnostics", inv.diagnostics.len(), ""));
        let mut t = Table::new("diagnostics", &["count", "diagnostic"]);
        for d in &inv.diagnostics {
            t.push(vec![
                Cell::figure(Figure::count(d.count, Provenance::Measured)),
                Cell::text(format!(
                    " × {}: {}\n             first at {}",
                    d.code, d.message, d.first
                )),
            ]);
        }
        sec.push(Block::Table(
            t.with_layout(
                TextLayout::new(vec![
                    Column::right(2, 8).format(NumberFormat::Fixed(0)),
                    Column::left(0, 0),
                ])
                .without_header(),
            ),
        ));
    }
    sec
}

fn fixed(f: Figure, decimals: u8) -> Span {
    Span::formatted(f, NumberFormat::Fixed(decimals))
}

/// `1, 2, 3, 7` → `1–3, 7`.
fn compact_numbers(numbers: &[i64]) -> String {
    let mut sorted = numbers.to_vec();
    sorted.sort_unstable();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}–{}", sorted[i], sorted[j])
        } else {
            sorted[i].to_string()
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// `LABEL: N` (the count measured), then `tail`.
/// `label: n`, the count measured.
fn count_spans(label: &str, n: usize) -> Vec<Span> {
    vec![
        Span::text(format!("{label}: ")),
        fixed(measured::count(n), 0),
    ]
}

fn count_line(label: &str, n: usize, tail: &str) -> Block {
    let mut spans = count_spans(label, n);
    if !tail.is_empty() {
        spans.push(Span::text(tail));
    }
    Block::line(spans)
}

#[cfg(test)]
mod tests {
    use super::compact_numbers;

    #[test]
    fn numbers_compact_into_ranges() {
        assert_eq!(compact_numbers(&[3, 1, 2, 7, 9, 10]), "1–3, 7, 9–10");
        assert_eq!(compact_numbers(&[]), "");
    }
}
