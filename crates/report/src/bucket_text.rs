//! How `analyze-profile` shows its summaries. `--compat` output is the original script's
//! bytes, produced with its own number formatting by `analysis::bucket_summary`;
//! the default mode's text and JSON are rendered here.

use std::cmp::Reverse;

use analysis::{
    Basis, GpuSummary, HINTS, MATH_BACKEND, Phase, ProfileConfig as Config,
    ProfileOutput as Output, buckets, hints, percent_of, python_prefix_len, truncate_name,
};
use serde::Serialize;
use trace_model::{Nanos, Provenance};

use crate::doc::{Block, Cell, Column, Document, Section, Span, Table, TextLayout, bracketed};
use crate::label::{Figure, NumberFormat};
use crate::measured;

/// What `analyze-profile` prints for one run.
pub fn render(output: &Output, config: &Config) -> String {
    match output {
        Output::Compat(text) => text.clone(),
        Output::Gpu(summaries) => render_gpu(summaries, &[], config),
        Output::GpuPartial(summaries, unread) => render_gpu(summaries, unread, config),
        // `Output` is non-exhaustive: a kind of output this renderer predates shows nothing.
        _ => String::new(),
    }
}

/// The default mode's summaries; `unread` are the errors of the files of a directory that
/// could not be read (a partial result: listed after the ranks, and as `not_read` in
/// JSON).
fn render_gpu(summaries: &[GpuSummary], unread: &[String], config: &Config) -> String {
    let shown = |s: &GpuSummary| {
        let mut s = s.clone();
        s.ops.truncate(python_prefix_len(s.ops.len(), config.top_n));
        s
    };
    match (config.json, config.all_ranks) {
        (true, false) => json_line(&summaries.iter().map(shown).next()),
        (true, true) if unread.is_empty() => json_line(&serde_json::json!({
            "ranks": summaries.iter().map(shown).collect::<Vec<_>>()
        })),
        (true, true) => json_line(&serde_json::json!({
            "ranks": summaries.iter().map(shown).collect::<Vec<_>>(),
            "not_read": unread,
        })),
        (false, false) => summaries
            .iter()
            .map(|s| render_text(s, config.top_n))
            .collect(),
        (false, true) => {
            let mut doc = ranks_document(summaries);
            let mut sec = Section::new("not_read", "");
            for err in unread {
                sec.push(Block::blank());
                sec.para(format!(
                    "[analyze-profile] not read (not in the columns above): {err}"
                ));
            }
            doc.sections.push(sec);
            crate::text::render(&doc)
        }
    }
}

/// Renders one summary as text; `top_n` rows of the op table (negative: all but the
/// last `-top_n`, as Python slices).
pub fn render_text(summary: &GpuSummary, top_n: i64) -> String {
    crate::text::render(&document(summary, top_n))
}

/// One summary as a document (see [`render_text`]).
pub fn document(summary: &GpuSummary, top_n: i64) -> Document {
    let mut doc = Document::new("");
    let rule = "=".repeat(80);
    let mut head = Section::new("summary", "");
    head.push(Block::blank());
    head.para(format!("[analyze-profile] {}", summary.file));
    if let Some(rank) = summary.rank {
        head.para(format!(" rank {rank}"));
    }
    head.push(Block::line(vec![
        Span::text(" "),
        count(summary.kernels + summary.memcpys + summary.memsets),
        Span::text(" GPU activities: "),
        count(summary.kernels),
        Span::text(" kernels, "),
        count(summary.memcpys),
        Span::text(" memcpys, "),
        count(summary.memsets),
        Span::text(" memsets"),
    ]));
    head.push(Block::blank());
    head.para(rule.clone());
    head.push(Block::line(vec![
        Span::text(" GPU time: "),
        duration(summary.gpu_time_ns),
        Span::text(
            " (measured: sum of kernel, memcpy and memset durations; concurrent streams add up)",
        ),
    ]));
    head.para(rule.clone());
    doc.sections.push(head);

    let mut sec = Section::new("buckets", "");
    sec.push(Block::blank());
    let mut t = Table::new("buckets", &["bucket", "time", "% GPU", "activities"]);
    let mut total_count = 0;
    for row in &summary.buckets {
        total_count += row.activities;
        t.push(vec![
            Cell::text(row.bucket),
            Cell::figure(duration_figure(row.time_ns)),
            Cell::figure(measured::percent(row.percent)),
            Cell::figure(measured::count(row.activities)),
        ]);
    }
    let total_pct = if summary.gpu_time_ns > Nanos::ZERO {
        100.0
    } else {
        0.0
    };
    t.push(vec![
        Cell::text("total"),
        Cell::figure(duration_figure(summary.gpu_time_ns)),
        Cell::figure(measured::percent(total_pct)),
        Cell::figure(measured::count(total_count)),
    ]);
    sec.para(format!(
        " GPU time by bucket{} (an ATen op's name when its kernels are of its kind, else the kernel's class, else the op's or kernel's name):",
        bracketed(t.label())
    ));
    sec.push(Block::Table(t.with_layout(TextLayout::new(vec![
        Column::left(1, 40),
        Column::right(1, 12),
        Column::right(1, 7).format(NumberFormat::PercentSign(1)),
        Column::right(1, 10).format(NumberFormat::Fixed(0)),
    ]))));

    sec.push(Block::blank());
    bucketed_by(&mut sec, summary);
    doc.sections.push(sec);

    doc.sections.push(backends(summary));

    let mut sec = Section::new("ops", "");
    let shown = python_prefix_len(summary.ops.len(), top_n);
    sec.push(Block::blank());
    let mut t = Table::new(
        "ops",
        &["rank", "time", "% GPU", "activities", "bucket", "name"],
    );
    for (idx, op) in summary.ops[..shown].iter().enumerate() {
        let marker = if op.is_cpu_op { "" } else { "[no op] " };
        t.push(vec![
            Cell::text((idx + 1).to_string()),
            Cell::figure(duration_figure(op.time_ns)),
            Cell::figure(measured::percent(op.percent)),
            Cell::figure(measured::count(op.activities)),
            Cell::text(if op.mixed {
                format!("{}*", op.bucket)
            } else {
                op.bucket.to_owned()
            }),
            Cell::code(format!("{marker}{}", truncate_name(&op.name))),
        ]);
    }
    sec.para(format!(
        " Top {top_n} CPU ops by the GPU time they launched{} ([no op]: activity with no launching CPU op; bucket*: the op's time went to several buckets, the largest is shown):",
        bracketed(t.label())
    ));
    sec.push(Block::Table(t.with_layout(TextLayout::new(vec![
        Column::right(1, 4),
        Column::right(1, 12),
        Column::right(1, 7).format(NumberFormat::PercentSign(1)),
        Column::right(1, 10).format(NumberFormat::Fixed(0)),
        Column::left(1, 28),
        Column::left(1, 0),
    ]))));
    doc.sections.push(sec);

    doc.sections.push(hints_section(summary, rule));
    if !summary.trust.is_empty() {
        let mut sec = Section::new("trust", "");
        sec.push(Block::blank());
        sec.para(" Trust list (what the reader could not use, with counts):");
        let mut t = Table::new("trust", &["count", "item"]);
        for item in &summary.trust {
            t.push(vec![
                Cell::figure(Figure::count(item.count, item.provenance())),
                Cell::text(format!("{} [{}]", item.message, item.code)),
            ]);
        }
        sec.push(Block::Table(
            t.with_layout(
                TextLayout::new(vec![
                    Column::right(1, 8).format(NumberFormat::Fixed(0)),
                    Column::left(2, 0),
                ])
                .without_header(),
            ),
        ));
        doc.sections.push(sec);
    }
    doc
}

/// The hints section: the hints that fired, labelled by their provenance, between rules
/// of `rule`, and the core-compute share.
fn hints_section(summary: &GpuSummary, rule: String) -> Section {
    let mut sec = Section::new("hints", "");
    sec.push(Block::blank());
    sec.para(rule.clone());
    let applicable = hints(summary);
    sec.para(format!(
        " Hints [{}] (the original script's thresholds, over shares of GPU time; advice for {})",
        applicable.provenance.word(),
        summary.phase.label()
    ));
    sec.para(rule);
    let applicable = applicable.value;
    if applicable.is_empty() {
        sec.para(" none: communication <= 15 %, elementwise <= 15 %, memory movement <= 8 %");
    }
    for (bucket, pct, text) in applicable {
        sec.push(Block::line(vec![
            Span::text(format!(" {bucket} ")),
            Span::formatted(measured::percent(pct), NumberFormat::PercentSign(1)),
            Span::text(format!(": {text}")),
        ]));
    }
    sec.push(Block::blank());
    sec.push(Block::line(crate::doc::labelled(vec![
        Span::text(" Matmul + convolution + attention (core compute): "),
        Span::formatted(
            measured::percent(summary.core_compute_percent),
            NumberFormat::PercentSign(1),
        ),
        Span::text(" of GPU time"),
    ])));
    if summary.phase == Phase::Training {
        sec.para(
            " Below 50 %, most GPU time goes to non-core ops: there is room to optimise (in Llama 3 training this is usually 60-75 %; the original script's rule of thumb).",
        );
    }
    sec
}

/// Renders several ranks side by side: one column per rank for the bucket table.
pub fn render_ranks_text(summaries: &[GpuSummary]) -> String {
    crate::text::render(&ranks_document(summaries))
}

/// Several ranks side by side as a document (see [`render_ranks_text`]).
pub fn ranks_document(summaries: &[GpuSummary]) -> Document {
    let mut doc = Document::new("");
    let labels: Vec<String> = summaries
        .iter()
        .enumerate()
        .map(|(idx, s)| match s.rank {
            Some(rank) => format!("rank {rank}"),
            None => format!("file {idx}"),
        })
        .collect();
    let mut sec = Section::new("files", "");
    sec.push(Block::blank());
    sec.para(format!("[analyze-profile] {} files", summaries.len()));
    let mut t = Table::new("files", &["rank", "file"]);
    for (label, s) in labels.iter().zip(summaries) {
        t.push(vec![Cell::text(label), Cell::text(format!(": {}", s.file))]);
    }
    sec.push(Block::Table(t.with_layout(
        TextLayout::new(vec![Column::right(1, 10), Column::left(0, 0)]).without_header(),
    )));
    doc.sections.push(sec);
    // Buckets with time on any rank, by total time descending, ties in rule order.
    let mut rows: Vec<(&'static str, Nanos)> = buckets::ALL
        .into_iter()
        .map(|bucket| {
            let total = summaries
                .iter()
                .filter_map(|s| s.buckets.iter().find(|b| b.bucket == bucket))
                .map(|b| b.time_ns)
                .sum();
            (bucket, total)
        })
        .filter(|(bucket, _)| {
            summaries
                .iter()
                .any(|s| s.buckets.iter().any(|b| b.bucket == *bucket))
        })
        .collect();
    rows.sort_by_key(|(_, total)| Reverse(*total));

    let mut sec = Section::new("buckets", "");
    sec.push(Block::blank());
    let mut columns = vec!["bucket"];
    columns.extend(labels.iter().map(String::as_str));
    let mut t = Table::new("buckets_per_rank", &columns);
    let time_and_share = |time_ns: Nanos, pct: f64| {
        let mut spans = vec![duration(time_ns), Span::text(" ")];
        spans.extend(crate::text::padded(
            Span::formatted(measured::percent(pct), NumberFormat::Fixed(1)),
            5,
        ));
        spans.push(Span::text("%"));
        Cell::Spans(spans)
    };
    for (bucket, _) in &rows {
        let mut row = vec![Cell::text(*bucket)];
        for s in summaries {
            row.push(match s.buckets.iter().find(|b| b.bucket == *bucket) {
                Some(b) => time_and_share(b.time_ns, b.percent),
                None => Cell::text("-"),
            });
        }
        t.push(row);
    }
    let mut row = vec![Cell::text("total GPU time")];
    row.extend(
        summaries
            .iter()
            .map(|s| time_and_share(s.gpu_time_ns, 100.0)),
    );
    t.push(row);
    let mut row = vec![Cell::text("matmul + conv + attention")];
    row.extend(
        summaries
            .iter()
            .map(|s| Cell::figure(measured::percent(s.core_compute_percent))),
    );
    t.push(row);
    let mut row = vec![Cell::text("dominant attention backend")];
    row.extend(
        summaries
            .iter()
            .map(|s| Cell::text(s.dominant_backend.unwrap_or("-"))),
    );
    t.push(row);
    for hint in HINTS {
        let mut row = vec![Cell::text(format!(
            "hint: {} > {:.0} %",
            short_bucket(hint.bucket),
            hint.threshold
        ))];
        for s in summaries {
            let fired = hints(s).value.iter().any(|h| h.0 == hint.bucket);
            row.push(Cell::text(if fired { "yes" } else { "-" }));
        }
        t.push(row);
    }
    let mut layout = vec![Column::left(1, 28)];
    layout.extend(
        summaries
            .iter()
            .map(|_| Column::right(1, 20).format(NumberFormat::PercentSign(1))),
    );
    sec.para(format!(
        " GPU time by bucket per rank{} (an ATen op's name when its kernels are of its kind, else the kernel's class, else the op's or kernel's name):",
        bracketed(t.label())
    ));
    sec.push(Block::Table(t.with_layout(TextLayout::new(layout))));
    sec.push(Block::blank());
    sec.para(" Per-rank top ops and the hints' advice: run with --trace-file on one rank.");
    doc.sections.push(sec);
    doc
}

fn json_line(value: &impl Serialize) -> String {
    let mut text = serde_json::to_string(value)
        .expect("invariant: summaries serialize (string keys, finite numbers)");
    text.push('\n');
    text
}

/// How each activity was bucketed: GPU time, share and count per rule.
fn bucketed_by(sec: &mut Section, summary: &GpuSummary) {
    let mut t = Table::new("bucketed_by", &["% GPU", "time", "activities", "rule"]);
    for row in &summary.attribution {
        if row.activities == 0 {
            continue;
        }
        let what = match row.basis {
            Basis::AtenOp => "by its launching ATen op's name (the op's kernels are of its kind)",
            Basis::KernelClass => "by the kernel classification table",
            Basis::OpName => "by its launching op's name (kernel not in the table)",
            Basis::KernelName => "by its own name (kernel not in the table, no op rule)",
            Basis::Unclassified => "not placed: bucket other",
            _ => "by a rule this report does not describe",
        };
        t.push(vec![
            Cell::figure(measured::percent(percent_of(
                row.time_ns.0,
                summary.gpu_time_ns.0,
            ))),
            Cell::figure(duration_figure(row.time_ns)),
            Cell::figure(measured::count(row.activities)),
            Cell::text(what),
        ]);
    }
    sec.para(format!(
        " How each activity was bucketed{}:",
        bracketed(t.label())
    ));
    sec.push(Block::Table(
        t.with_layout(
            TextLayout::new(vec![
                Column::right(1, 7).format(NumberFormat::PercentSign(1)),
                Column::right(1, 12),
                Column::right(1, 10).format(NumberFormat::Fixed(0)),
                Column::left(2, 0),
            ])
            .without_header(),
        ),
    ));
}

fn backends(summary: &GpuSummary) -> Section {
    let mut sec = Section::new("attention", "");
    sec.push(Block::blank());
    sec.para(" Attention backend [inferred from kernel names] (over the attention bucket):");
    if summary.attention_backends.is_empty() {
        sec.para(" no GPU time in the attention bucket");
        return sec;
    }
    let mut t = Table::new("attention_backends", &["backend", "", "time", "% GPU", ""]);
    for row in &summary.attention_backends {
        let marker = if Some(row.backend) == summary.dominant_backend {
            " <- DOMINANT"
        } else {
            ""
        };
        t.push(vec![
            Cell::text(row.backend),
            Cell::text(":"),
            Cell::figure(duration_figure(row.time_ns)),
            Cell::figure(measured::percent(percent_of(
                row.time_ns.0,
                summary.gpu_time_ns.0,
            ))),
            Cell::text(marker),
        ]);
    }
    sec.push(Block::Table(
        t.with_layout(
            TextLayout::new(vec![
                Column::left(1, 44),
                Column::left(0, 0),
                Column::right(1, 12),
                Column::right(1, 7).format(NumberFormat::PercentSign(1)),
                Column::left(0, 0),
            ])
            .without_header(),
        ),
    ));
    if !summary.unknown_attention_kernels.is_empty() {
        sec.para(" unknown: no backend recognised in these kernel names (largest first):");
        let mut t = Table::new("unknown_attention_kernels", &["time", "kernel"]);
        for (name, time) in &summary.unknown_attention_kernels {
            t.push(vec![
                Cell::figure(duration_figure(*time)),
                Cell::code(truncate_name(name)),
            ]);
        }
        sec.push(Block::Table(t.with_layout(
            TextLayout::new(vec![Column::right(3, 12), Column::left(2, 0)]).without_header(),
        )));
    }
    if summary.dominant_backend == Some(MATH_BACKEND) {
        sec.para(
            " Attention runs unfused (math SDPA). Try `torch.nn.attention.sdpa_kernel(SDPBackend.FLASH_ATTENTION)` or the efficient backend (inferred: which fused backend applies depends on dtype, head size, mask and GPU).",
        );
    }
    sec
}

fn duration_figure(ns: Nanos) -> Figure {
    Figure::duration(ns, Provenance::Measured)
}

fn duration(ns: Nanos) -> Span {
    Span::Figure(duration_figure(ns))
}

fn count(n: u64) -> Span {
    Span::Figure(measured::count(n))
}

/// A bucket's name without its parenthesised examples (`matmul (GEMM)` → `matmul`).
fn short_bucket(bucket: &str) -> &str {
    bucket.split(" (").next().unwrap_or(bucket)
}
