//! The output files as text: `kernels.csv`, `ops.csv`, `lines.csv`, `how.csv`, `summary.txt`,
//! and the JSON summary. (Rendering belongs in the `report` crate once it takes these.)

use analysis::percent_of;
use attribution::{Attribution, MatchKind, SourceFormat};
use trace_model::{Nanos, Provenance};

use crate::doc::{
    Block, Cell, Column, Document, Section, Span, Table, TextLayout, parenthesised, spans_label,
};
use crate::label::{Figure, NumberFormat};
use crate::measured;

/// Every output file: (file name, contents), in a fixed order.
pub fn files(result: &Attribution) -> Vec<(String, String)> {
    let mut out = vec![
        ("kernels.csv".to_owned(), kernels_csv(result)),
        ("ops.csv".to_owned(), ops_csv(result)),
        ("lines.csv".to_owned(), lines_csv(result)),
        ("how.csv".to_owned(), how_csv(result)),
        ("summary.txt".to_owned(), summary_text(result)),
    ];
    if let Some((name, text)) = &result.hlo_text {
        out.push((name.clone(), text.clone()));
    }
    out
}

fn csv_text(header: &[&str], rows: impl Iterator<Item = Vec<String>>) -> String {
    let mut writer = ::csv::Writer::from_writer(Vec::new());
    // Writing to a Vec cannot fail.
    writer
        .write_record(header)
        .expect("invariant: CSV into memory");
    for row in rows {
        writer
            .write_record(&row)
            .expect("invariant: CSV into memory");
    }
    String::from_utf8(writer.into_inner().expect("invariant: CSV into memory"))
        .expect("invariant: CSV of UTF-8 fields is UTF-8")
}

/// `kernels.csv`: one row per GPU activity with what it was attributed to.
pub fn kernels_csv(result: &Attribution) -> String {
    csv_text(
        &[
            "device",
            "stream",
            "start_ns",
            "dur_ns",
            "kind",
            "kernel name",
            "program",
            "hlo instruction",
            "op_name",
            "source line",
            "function",
            "match kind",
            "decided by",
            "in graph",
        ],
        result.kernels.iter().map(|k| {
            vec![
                k.device.to_string(),
                k.stream.to_string(),
                k.start_ns.0.to_string(),
                k.dur_ns.0.to_string(),
                k.kind.to_owned(),
                k.name.to_string(),
                k.program.clone(),
                k.instruction.clone(),
                k.op_name.to_string(),
                k.source_line.clone(),
                k.function.clone(),
                k.match_kind.as_str().to_owned(),
                k.decided_by.as_str().to_owned(),
                k.in_graph.to_string(),
            ]
        }),
    )
}

/// Per device, op rows; `share_pct` of the device's GPU time.
pub fn ops_csv(result: &Attribution) -> String {
    let device_time = |d: i64| -> i64 {
        result
            .kernels
            .iter()
            .filter(|k| k.device == d)
            .map(|k| k.dur_ns.0)
            .sum()
    };
    csv_text(
        &[
            "device",
            "program",
            "op_name",
            "kernels",
            "gpu_time_ns",
            "share_pct",
            "instructions",
            "source line",
        ],
        result.ops_by_device().into_iter().map(|(d, o)| {
            vec![
                d.to_string(),
                o.program,
                o.op_name,
                o.kernels.to_string(),
                o.gpu_time_ns.0.to_string(),
                format!("{:.3}", percent_of(o.gpu_time_ns.0, device_time(d))),
                o.instructions.to_string(),
                o.source_line,
            ]
        }),
    )
}

/// Per device, line rows; shares of the device's attributed time.
pub fn lines_csv(result: &Attribution) -> String {
    csv_text(
        &[
            "device",
            "source line",
            "function",
            "kernels",
            "gpu_time_ns",
            "share_of_attributed_pct",
        ],
        result.lines_by_device().into_iter().map(|(d, l)| {
            vec![
                d.to_string(),
                l.source_line,
                l.function,
                l.kernels.to_string(),
                l.gpu_time_ns.0.to_string(),
                format!("{:.3}", l.share_pct),
            ]
        }),
    )
}

/// `how.csv`: kernels and GPU time per device, match kind and deciding record.
pub fn how_csv(result: &Attribution) -> String {
    csv_text(
        &[
            "device",
            "match kind",
            "decided by",
            "kernels",
            "gpu_time_ns",
            "share_pct",
        ],
        result.how().into_iter().map(|h| {
            vec![
                h.device,
                h.match_kind.as_str().to_owned(),
                h.decided_by.as_str().to_owned(),
                h.kernels.to_string(),
                h.gpu_time_ns.0.to_string(),
                format!("{:.6}", h.share_pct),
            ]
        }),
    )
}

/// The summary as data (what `--json` prints).
#[derive(Debug, serde::Serialize)]
pub struct AttributionSummary<'a> {
    /// The capture that was read.
    pub path: &'a str,
    /// Which reader read it.
    pub format: SourceFormat,
    /// Every number below is measured (counted from the capture).
    pub label: &'static str,
    /// GPU activities attributed (each exactly once).
    pub kernels: usize,
    /// Σ of their durations, ns.
    pub gpu_time_ns: Nanos,
    /// Σ of the durations of those with a match, ns.
    pub attributed_time_ns: Nanos,
    /// Kernels, time and share per match kind, over all devices.
    pub by_match_kind: Vec<MatchShare>,
    /// The same per device.
    pub per_device: Vec<DeviceShare>,
    /// Kernels with match kind `none`.
    pub kernels_without_candidate: u64,
    /// GPU time of graph (command-buffer) kernels, ns.
    pub graph_time_ns: Nanos,
    /// The part of it with a match, ns.
    pub graph_attributed_ns: Nanos,
    /// JAX: the program whose HLO text is written.
    pub chosen_program: Option<i64>,
    /// JAX: the stored programs.
    pub programs: &'a [attribution::ProgramSummary],
    /// Kernels left out by `--program`.
    pub other_program_kernels: u64,
    /// PyTorch: whether the trace has `python_function` events at all.
    pub has_python_stacks: bool,
    /// The ten Python lines with the most GPU time.
    pub top_lines: Vec<attribution::LineRow>,
    /// What cannot be trusted: each trust item's words.
    pub notes: Vec<&'a str>,
    /// Captures or options that would answer what this one cannot.
    pub needs_new_capture: &'a [String],
}

/// Kernels and GPU time of one match kind.
#[derive(Debug, serde::Serialize)]
pub struct MatchShare {
    /// The match kind.
    pub match_kind: MatchKind,
    /// Kernels matched that way.
    pub kernels: u64,
    /// Their GPU time, ns.
    pub gpu_time_ns: Nanos,
    /// Their share of the GPU time concerned, in percent.
    pub share_pct: f64,
}

/// The match kinds of one device.
#[derive(Debug, serde::Serialize)]
pub struct DeviceShare {
    /// The device ordinal.
    pub device: i64,
    /// Its GPU activities.
    pub kernels: u64,
    /// Their GPU time, ns.
    pub gpu_time_ns: Nanos,
    /// Kernels, time and share per match kind on the device.
    pub by_match_kind: Vec<MatchShare>,
}

/// The summary of an attribution as data.
pub fn summary(result: &Attribution) -> AttributionSummary<'_> {
    let total = result.gpu_time_ns();
    let shares = |rows: &[&attribution::KernelRow]| -> Vec<MatchShare> {
        let time: i64 = rows.iter().map(|k| k.dur_ns.0).sum();
        MatchKind::ALL
            .iter()
            .map(|&kind| {
                let of: Vec<_> = rows.iter().filter(|k| k.match_kind == kind).collect();
                let t: i64 = of.iter().map(|k| k.dur_ns.0).sum();
                MatchShare {
                    match_kind: kind,
                    kernels: of.len() as u64,
                    gpu_time_ns: Nanos(t),
                    share_pct: percent_of(t, time),
                }
            })
            .collect()
    };
    let all: Vec<&attribution::KernelRow> = result.kernels.iter().collect();
    let mut devices: Vec<i64> = result.kernels.iter().map(|k| k.device).collect();
    devices.sort_unstable();
    devices.dedup();
    let per_device = devices
        .into_iter()
        .map(|device| {
            let rows: Vec<&attribution::KernelRow> = result
                .kernels
                .iter()
                .filter(|k| k.device == device)
                .collect();
            DeviceShare {
                device,
                kernels: rows.len() as u64,
                gpu_time_ns: rows.iter().map(|k| k.dur_ns).sum(),
                by_match_kind: shares(&rows),
            }
        })
        .collect();
    let (graph, graph_attributed) = result.graph_time_ns();
    let mut top_lines = result.lines();
    top_lines.truncate(10);
    AttributionSummary {
        path: &result.path,
        format: result.format,
        label: Provenance::Measured.word(),
        kernels: result.kernels.len(),
        gpu_time_ns: total,
        attributed_time_ns: result.attributed_time_ns(),
        by_match_kind: shares(&all),
        per_device,
        kernels_without_candidate: result
            .kernels
            .iter()
            .filter(|k| k.match_kind == MatchKind::None)
            .count() as u64,
        graph_time_ns: graph,
        graph_attributed_ns: graph_attributed,
        chosen_program: result.chosen_program,
        programs: &result.programs,
        other_program_kernels: result.other_program_kernels.0,
        has_python_stacks: result.has_python_stacks,
        top_lines,
        notes: result.notes.iter().map(|n| n.message.as_str()).collect(),
        needs_new_capture: &result.needs_new_capture,
    }
}

/// The summary as pretty-printed JSON (what `--json` prints).
pub fn summary_json(result: &Attribution) -> String {
    serde_json::to_string_pretty(&summary(result)).expect("invariant: the summary serializes")
}

/// The summary as text (what `attribute-kernels` prints).
pub fn summary_text(result: &Attribution) -> String {
    crate::text::render(&summary_document(result))
}

/// The summary as a document (see [`summary_text`]).
pub fn summary_document(result: &Attribution) -> Document {
    let s = summary(result);
    let mut doc = Document::new(format!("attribute-kernels: {}", s.path));
    let mut sec = Section::new("summary", "");
    let mut line = vec![
        count(s.kernels),
        Span::text(" GPU activities, "),
        ms(s.gpu_time_ns),
    ];
    let word = parenthesised(spans_label(&line));
    line.extend([
        Span::text(format!(" GPU time{word}; attributed ")),
        ms(s.attributed_time_ns),
        Span::text(" ("),
        share(s.attributed_time_ns, s.gpu_time_ns),
        Span::text(")"),
    ]);
    sec.push(Block::line(line));
    sec.push(Block::blank());
    let mut t = Table::new(
        "match_kinds",
        &["match kind", "kernels", "", "time", "share"],
    );
    for m in &s.by_match_kind {
        t.push(vec![
            Cell::text(m.match_kind.as_str()),
            Cell::figure(measured::count(m.kernels)),
            Cell::text("kernels"),
            Cell::figure(ms_figure(m.gpu_time_ns)),
            Cell::Spans(
                crate::text::padded(
                    Span::formatted(measured::percent(m.share_pct), NumberFormat::Fixed(1)),
                    6,
                )
                .into_iter()
                .chain([Span::text(" %")])
                .collect(),
            ),
        ]);
    }
    sec.para(format!(
        "share of GPU time by match kind{}:",
        parenthesised(t.label())
    ));
    sec.push(Block::Table(
        t.with_layout(
            TextLayout::new(vec![
                Column::left(2, 6),
                Column::right(1, 7).format(NumberFormat::Fixed(0)),
                Column::left(1, 0),
                Column::right(1, 12).format(NumberFormat::Millis(3)),
                Column::left(1, 0),
            ])
            .without_header(),
        ),
    ));
    let mut line = vec![
        Span::text("kernels with no candidate (none): "),
        count(s.kernels_without_candidate),
    ];
    let reasons = result
        .how()
        .into_iter()
        .filter(|h| h.device == "all" && h.match_kind == MatchKind::None);
    for (i, h) in reasons.enumerate() {
        line.push(Span::text(if i == 0 { " (" } else { ", " }));
        line.push(count(h.kernels));
        line.push(Span::text(format!(" {}", h.decided_by.as_str())));
    }
    if line.len() > 2 {
        line.push(Span::text(")"));
    }
    sec.push(Block::line(line));
    per_device(&mut sec, &s);
    if s.graph_time_ns > Nanos::ZERO {
        sec.push(Block::blank());
        let mut line = vec![
            Span::text("GPU time inside graphs / command buffers: "),
            ms(s.graph_time_ns),
            Span::text(" ("),
            share(s.graph_time_ns, s.gpu_time_ns),
            Span::text(" of GPU time), attributed "),
            share(s.graph_attributed_ns, s.graph_time_ns),
        ];
        let word = parenthesised(spans_label(&line));
        line.push(Span::text(format!(" of it{word}")));
        sec.push(Block::line(line));
    }
    if !s.programs.is_empty() {
        sec.push(Block::blank());
        sec.para("programs with GPU time (read from /host:metadata; time measured):");
        for p in s.programs.iter().filter(|p| p.kernels > 0) {
            let chosen = if Some(p.program_id) == s.chosen_program {
                "  <- chosen"
            } else {
                ""
            };
            sec.push(Block::line(vec![
                Span::text(format!("  {}({}): ", p.module_name, p.program_id)),
                count(p.kernels),
                Span::text(" kernels, "),
                ms(p.gpu_time_ns),
                Span::text("; "),
                count(p.with_python_line),
                Span::text(" of "),
                count(p.instructions),
                Span::text(format!(" instructions with a Python line{chosen}")),
            ]));
        }
        let lines: usize = s.programs.iter().map(|p| p.with_python_line).sum();
        let instructions: usize = s.programs.iter().map(|p| p.instructions).sum();
        sec.push(Block::line(vec![
            Span::text("  all "),
            count(s.programs.len()),
            Span::text(" stored programs: "),
            count(lines),
            Span::text(" of "),
            count(instructions),
            Span::text(" instructions with a resolved Python line"),
        ]));
    }
    if s.other_program_kernels > 0 {
        sec.push(Block::line(vec![
            Span::text("kernels of other programs left out by --program: "),
            count(s.other_program_kernels),
        ]));
    }
    if !s.top_lines.is_empty() {
        sec.push(Block::blank());
        let mut t = Table::new("top_lines", &["time", "share", "line"]);
        for l in s.top_lines.iter().take(5) {
            let mut share = crate::text::padded(
                Span::formatted(measured::percent(l.share_pct), NumberFormat::Fixed(1)),
                6,
            );
            share.push(Span::text(" %"));
            t.push(vec![
                Cell::figure(ms_figure(l.gpu_time_ns)),
                Cell::Spans(share),
                Cell::code(format!("{} {}", l.source_line, l.function)),
            ]);
        }
        sec.para(format!(
            "top Python lines by GPU time{}:",
            parenthesised(t.label())
        ));
        sec.push(Block::Table(
            t.with_layout(
                TextLayout::new(vec![
                    Column::right(2, 12).format(NumberFormat::Millis(3)),
                    Column::left(1, 0),
                    Column::left(2, 0),
                ])
                .without_header(),
            ),
        ));
    }
    if !s.notes.is_empty() {
        sec.push(Block::blank());
        sec.para("notes:");
        for n in &s.notes {
            sec.para(format!("  - {n}"));
        }
    }
    if !s.needs_new_capture.is_empty() {
        sec.push(Block::blank());
        sec.para("needs a new capture:");
        for n in s.needs_new_capture {
            sec.para(format!("  - {n}"));
        }
    }
    doc.sections.push(sec);
    doc
}

/// A duration as attribute-kernels writes it: milliseconds with three decimals.
/// `part` as a measured percentage of `whole`.
/// The per-device lines, where there is more than one device.
fn per_device(sec: &mut Section, s: &AttributionSummary<'_>) {
    if s.per_device.len() > 1 {
        sec.push(Block::blank());
        let at = sec.blocks.len();
        for d in &s.per_device {
            let mut spans = vec![
                Span::text(format!("  GPU {}: ", d.device)),
                count(d.kernels),
                Span::text(" kernels, "),
                ms(d.gpu_time_ns),
                Span::text(": "),
            ];
            for (i, m) in d.by_match_kind.iter().enumerate() {
                if i > 0 {
                    spans.push(Span::text(", "));
                }
                spans.push(Span::text(format!("{} ", m.match_kind.as_str())));
                spans.push(Span::Figure(measured::percent(m.share_pct)));
            }
            sec.push(Block::line(spans));
        }
        let word = parenthesised(Block::label(&sec.blocks[at..]));
        sec.blocks.insert(
            at,
            Block::Paragraph(vec![Span::text(format!("per device{word}:"))]),
        );
    }
}

fn share(part: Nanos, whole: Nanos) -> Span {
    Span::Figure(measured::percent(percent_of(part.0, whole.0)))
}

fn ms(ns: Nanos) -> Span {
    Span::formatted(ms_figure(ns), NumberFormat::Millis(3))
}

fn ms_figure(ns: Nanos) -> Figure {
    Figure::duration(ns, Provenance::Measured)
}

fn count(n: impl TryInto<u64>) -> Span {
    Span::formatted(measured::count(n), NumberFormat::Fixed(0))
}
