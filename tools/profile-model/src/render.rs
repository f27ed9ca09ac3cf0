//! profile-model's text: a [`ProfileModelReport`] (the typed value trace-frame returns) as
//! a `report::Document`, printed by `report::text`, the one terminal renderer. It is built
//! here, in the tool, so that neither library depends on the other: trace-frame (polars)
//! does not depend on report, and report does not reach polars. The JSON is the report's
//! own serialisation (`trace_frame::render_json`).

use report::measured::{count, number};
use report::{
    Block, Cell, Document, Figure, NumberFormat, Section, Span, SpanLine, Table, parenthesised,
    spans_label,
};

use trace_frame::{
    Bottleneck, CriticalPath, ProfileModelReport, Recommendation, SkipStatsSummary, Summary, hta,
};

/// The report as Markdown-flavoured text, in profile-model's fixed output order.
pub fn render_text(r: &ProfileModelReport) -> String {
    report::text::render(&document(r))
}

/// The report as a document (see [`render_text`]): a section per analysis, pipe tables,
/// in profile-model's fixed output order.
pub fn document(r: &ProfileModelReport) -> Document {
    let mut doc = Document::new(format!("## Trace Analysis Summary ({})", r.input.display()));
    doc.sections.push(summary_section(&r.summary));
    doc.sections.push(findings_section(r));
    if !r.kernel_types.is_empty() {
        doc.sections.push(kernels_section(r));
    }
    if !r.temporal.is_empty() {
        doc.sections.push(temporal_section(&r.temporal));
    }
    if let Some(skip) = &r.skip_stats {
        doc.sections.push(skip_stats_section(skip));
    }
    if !r.idle.is_empty() {
        doc.sections.push(idle_section(&r.idle));
    }
    if !r.overlap.is_empty() {
        doc.sections.push(overlap_section(&r.overlap));
    }
    if let Some(st) = &r.stragglers {
        doc.sections.push(stragglers_section(st));
    }
    if !r.launch_stats.is_empty() {
        doc.sections.push(launch_stats_section(&r.launch_stats));
    }
    if !r.queue_length.is_empty() {
        doc.sections.push(queue_length_section(&r.queue_length));
    }
    for cp in &r.critical_path {
        doc.sections.push(critical_path_section(cp));
    }
    doc.sections.push(not_run_section(r));
    doc
}

/// A rank's cell: its number, or `-` for a capture without one.
fn rank(r: Option<i64>) -> Cell {
    Cell::text(r.map_or("-".to_string(), |r| r.to_string()))
}

/// The summary: the main finding, what the trace lacks, the counts and the events per
/// category.
fn summary_section(s: &Summary) -> Section {
    let mut sec = Section::new("summary", "");
    sec.push(Block::blank());
    sec.push(main_finding(s));
    sec.push(Block::blank());
    for m in &s.missing {
        sec.para(format!("**Missing**: {m}"));
    }
    if !s.missing.is_empty() {
        sec.push(Block::blank());
    }
    sec.push(
        SpanLine::default()
            .text("Events: ")
            .formatted(count(s.events.value), NumberFormat::Fixed(0))
            .text(" in ")
            .formatted(count(s.ranks), NumberFormat::Fixed(0))
            .text(format!(
                " rank(s) ({}); kernels: ",
                s.events.provenance.word()
            ))
            .formatted(count(s.kernels.value), NumberFormat::Fixed(0))
            .text(format!(" ({}), ", s.kernels.provenance.word()))
            .formatted(number(s.kernel_time_us.value), NumberFormat::Fixed(1))
            .text(format!(
                " µs in total ({})",
                s.kernel_time_us.provenance.word()
            ))
            .take(),
    );
    sec.push(Block::blank());
    let mut t = Table::new("categories", &["cat", "events"]);
    for (c, n) in &s.by_category {
        t.push(vec![Cell::text(c.clone()), fixed(count(*n), 0)]);
    }
    t.columns[1] = format!("events{}", parenthesised(t.label()));
    sec.push(Block::Table(t));
    sec
}

/// The top kernels, the bottleneck with its rule, the recommendations and the cache use.
fn findings_section(r: &ProfileModelReport) -> Section {
    let s = &r.summary;
    let mut sec = Section::new("top_kernels", "");
    sec.push(Block::blank());
    let mut t = Table::new("top_kernels", &["% Time", "Calls", "Avg (µs)", "Kernel"]);
    for k in &s.top_kernels {
        t.push(vec![
            Cell::Spans(vec![Span::formatted(
                report::measured::percent(k.pct),
                NumberFormat::PercentSign(1),
            )]),
            fixed(count(k.calls), 0),
            fixed(number(k.avg_us), 1),
            Cell::code(k.name.clone()),
        ]);
    }
    sec.para(format!("### Top GPU Kernels (by time{})", also(t.label())));
    sec.push(Block::Table(t));
    sec.push(Block::blank());
    sec.para(format!(
        "### Bottleneck: {} ({})",
        s.bottleneck.value.name(),
        s.bottleneck.provenance.word()
    ));
    sec.push(bottleneck_rule(s));
    sec.push(Block::blank());
    if !s.recommendations.is_empty() {
        sec.para("### Recommendations");
        for (i, rec) in s.recommendations.iter().enumerate() {
            sec.push(recommendation(i + 1, rec));
        }
        sec.push(Block::blank());
    }
    for c in &r.cache {
        sec.para(format!("Cache: {c:?}"));
    }
    sec
}

/// The main finding, labelled by the bottleneck's provenance: how idle the GPU is and
/// why (host wait, or the communication share of its busy time), ending with the
/// bottleneck.
fn main_finding(s: &Summary) -> Block {
    let sh = &s.shares.value;
    let number = |x: f64| Figure::number(x, s.shares.provenance.clone());
    let share = |x: f64| Figure::percent(100.0 * x, s.shares.provenance.clone());
    let mut line = SpanLine::default();
    line.text(format!(
        "**Main Finding** ({}): ",
        s.bottleneck.provenance.word()
    ));
    match s.bottleneck.value {
        Bottleneck::NoKernels => {
            line.text("The trace has no GPU kernels, so there is nothing to attribute GPU time to.")
        }
        Bottleneck::CpuBound => line
            .text("GPU is idle ")
            .formatted(number(sh.idle_pct), NumberFormat::Fixed(0))
            .text(" % of the time, mostly waiting for the host (")
            .formatted(share(sh.host_share), NumberFormat::Fixed(0))
            .text(" % of the idle gaps are host wait): CPU-bound."),
        b => line
            .text("GPU is idle ")
            .formatted(number(sh.idle_pct), NumberFormat::Fixed(0))
            .text(" % of the time; ")
            .formatted(number(sh.comm_pct), NumberFormat::Fixed(0))
            .text(format!(
                " % of its busy time is communication: {}.",
                b.name()
            )),
    };
    line.take()
}

/// The bottleneck rule with the shares it read.
fn bottleneck_rule(s: &Summary) -> Block {
    let sh = &s.shares.value;
    let number = |x: f64| Figure::number(x, s.shares.provenance.clone());
    let share = |x: f64| Figure::percent(100.0 * x, s.shares.provenance.clone());
    SpanLine::default()
        .text("Rule: GPU idle ")
        .formatted(number(sh.idle_pct), NumberFormat::Fixed(1))
        .text(" % of the GPU span with host wait ")
        .formatted(share(sh.host_share), NumberFormat::Fixed(0))
        .text(
            " % of the stream gaps → CPU-bound if idle ≥ 30 % and host wait ≥ 50 %; else \
             communication ",
        )
        .formatted(number(sh.comm_pct), NumberFormat::Fixed(1))
        .text(" % of GPU busy time ≥ 50 % → communication-bound; else memcpy/memset ")
        .formatted(number(sh.mem_pct), NumberFormat::Fixed(1))
        .text(" % ≥ 30 % → memory-bound; else compute-bound")
        .take()
}

/// Recommendation `n`: the symptom with its figures, their label, and the fix of the
/// fixed table.
fn recommendation(n: usize, rec: &Recommendation) -> Block {
    let mut line = SpanLine::default();
    line.text(format!("{n}. "));
    // The symptom's words around its one figure (a percentage unless it says otherwise),
    // and the fix, from the tool's fixed table.
    let (before, x, decimals, after, fix) = match *rec {
        Recommendation::SmallKernels { mean_us } => (
            "many small kernels (mean ",
            mean_us,
            1,
            " µs < 10 µs): launch overhead",
            "use torch.compile, fuse operations",
        ),
        Recommendation::CollectiveDominates { pct } => (
            "one collective dominates (",
            pct,
            0,
            " % of kernel time)",
            "its time includes waiting for peers: look for late ranks and overlap it with computation",
        ),
        Recommendation::KernelDominates { pct } => (
            "one kernel dominates (",
            pct,
            0,
            " % of kernel time)",
            "normal for compute-heavy work; check that the kernel is the optimised one",
        ),
        Recommendation::MemoryOperations { count: ops, pct } => {
            line.text("many memory operations (")
                .formatted(count(ops), NumberFormat::Fixed(0));
            (
                ", ",
                pct,
                0,
                " % of GPU busy time)",
                "reduce copies, use pinned memory and in-place ops, fewer .cpu()/.cuda() calls",
            )
        }
        Recommendation::Communication { pct } => (
            "communication is ",
            pct,
            0,
            " % of GPU busy time",
            "overlap communication with computation; use async collectives",
        ),
        Recommendation::IdleHostWait { idle_pct } => (
            "GPU idle ",
            idle_pct,
            0,
            " %, mostly host wait",
            "more DataLoader num_workers, pin_memory=True, move preprocessing to the GPU",
        ),
        Recommendation::IdleKernelWait { idle_pct } => (
            "GPU idle ",
            idle_pct,
            0,
            " %, mostly kernel wait",
            "fuse operations, remove synchronisations between launches",
        ),
    };
    line.text(before)
        .formatted(number(x), NumberFormat::Fixed(decimals))
        .text(after);
    let word = spans_label(&line.0);
    line.text(format!("{} → {fix}", parenthesised(word)));
    line.take()
}

/// HTA's kernel-type breakdown over all ranks, and each rank's top ten kernels.
fn kernels_section(r: &ProfileModelReport) -> Section {
    let mut sec = Section::new("kernel_types", "");
    sec.push(Block::blank());
    let mut t = Table::new("kernel_types", &["kernel_type", "sum (µs)", "%"]);
    for k in &r.kernel_types {
        t.push(vec![
            Cell::text(k.kernel_type.clone()),
            fixed(number(k.sum_us), 0),
            fixed(number(k.percentage), 1),
        ]);
    }
    sec.para(format!(
        "### Kernel-type breakdown, all ranks (HTA's definition{})",
        also(t.label())
    ));
    sec.push(Block::Table(t));
    sec.push(Block::blank());
    let at = sec.blocks.len();
    let mut t = Table::new(
        "kernels",
        &[
            "rank",
            "kernel",
            "HTA type",
            "our class",
            "count",
            "sum (µs)",
            "mean (µs)",
        ],
    );
    let mut shown = std::collections::BTreeMap::<Option<i64>, usize>::new();
    for k in &r.kernels {
        let n = shown.entry(k.rank).or_default();
        if *n >= 10 {
            continue;
        }
        *n += 1;
        t.push(vec![
            rank(k.rank),
            Cell::code(k.name.clone()),
            Cell::text(format!("{:?}", k.kernel_type)),
            Cell::text(k.our_class.to_string()),
            fixed(count(k.count), 0),
            fixed(number(k.sum_us), 1),
            fixed(number(k.mean_us), 1),
        ]);
    }
    let word = also(t.label());
    sec.blocks.insert(
        at,
        Block::Paragraph(vec![Span::text(format!(
            "### Kernels per rank (top 10 per rank by time{word}; HTA type and our class)"
        ))]),
    );
    sec.push(Block::Table(t));
    sec
}

/// HTA's temporal breakdown per rank.
fn temporal_section(temporal: &[hta::Temporal]) -> Section {
    table_section(
        "temporal",
        |w| format!("### Temporal breakdown (HTA's definition: span of all GPU activities{w})"),
        &["rank", "span (µs)", "idle %", "compute %", "non-compute %"],
        temporal,
        |x| {
            vec![
                rank(x.rank),
                fixed(number(x.kernel_time_us), 0),
                fixed(number(x.idle_pct), 2),
                fixed(number(x.compute_pct), 2),
                fixed(number(x.non_compute_pct), 2),
            ]
        },
    )
}

/// skip-stats' window per rank beside HTA's, the last rank to finish and the late ranks.
fn skip_stats_section(skip: &SkipStatsSummary) -> Section {
    let mut sec = table_section(
        "skip_stats",
        |w| {
            format!(
                "### Ours beside (skip-stats' window: GPU work of steps, in-flight work left out{w})"
            )
        },
        &[
            "rank",
            "window (µs)",
            "idle %",
            "compute %",
            "collective %",
            "memcpy+memset %",
            "critical stream",
            "host wait (µs)",
            "queued wait (µs)",
            "unattributed (µs)",
            "in flight",
        ],
        &skip.ranks,
        |x| {
            vec![
                rank(x.rank),
                fixed(number(x.window_us), 0),
                fixed(number(x.idle_pct), 2),
                fixed(number(x.compute_pct), 2),
                fixed(number(x.collective_pct), 2),
                fixed(number(x.memcpy_memset_pct), 2),
                Cell::text(x.critical_stream.map_or("-".into(), |s| s.to_string())),
                fixed(number(x.host_wait_us), 0),
                fixed(number(x.queued_wait_us), 0),
                fixed(number(x.unattributed_us), 0),
                fixed(count(x.in_flight), 0),
            ]
        },
    );
    if let Some((rk, behind)) = skip.last_finisher {
        let mut l = SpanLine::default();
        l.text(format!(
            "Last to finish the step's GPU work: rank {} (",
            rk.map_or("-".to_string(), |r| r.to_string())
        ))
        .formatted(number(behind), NumberFormat::Fixed(0));
        let word = also(report::spans_label(&l.0));
        sec.push(l.text(format!(" µs after the first{word})")).take());
    }
    for late in &skip.stragglers {
        sec.push(
            SpanLine::default()
                .text(format!(
                    "Late at the steps' last collective (clock offsets from matched collective ends corrected, inferred): rank {} from step {}, at ",
                    late.rank.map_or("-".to_string(), |r| r.to_string()),
                    late.first_step,
                ))
                .formatted(count(late.late_steps), NumberFormat::Fixed(0))
                .text(" of ")
                .formatted(count(late.steps_from_first), NumberFormat::Fixed(0))
                .text(" steps, by ")
                .formatted(number(late.late_by_us), NumberFormat::Fixed(0))
                .text(" µs (median)")
                .take(),
        );
    }
    sec
}

/// HTA's idle time per stream, by category.
fn idle_section(idle: &[hta::IdleRow]) -> Section {
    let ratio = |x: f64| Span::formatted(number(x), NumberFormat::Fixed(2));
    table_section(
        "idle",
        |w| {
            format!(
                "### Idle time per stream (HTA's categories{w}; kernel wait = gap < 30 µs after an earlier launch)"
            )
        },
        &[
            "rank",
            "stream",
            "host wait (µs)",
            "kernel wait (µs)",
            "other (µs)",
            "host / kernel / other ratio",
        ],
        idle,
        |i| {
            vec![
                rank(i.rank),
                Cell::text(i.stream.to_string()),
                fixed(number(i.host_wait_us), 0),
                fixed(number(i.kernel_wait_us), 0),
                fixed(number(i.other_us), 0),
                Cell::Spans(vec![
                    ratio(i.host_wait_ratio),
                    Span::text(" / "),
                    ratio(i.kernel_wait_ratio),
                    Span::text(" / "),
                    ratio(i.other_ratio),
                ]),
            ]
        },
    )
}

/// Communication/computation overlap per rank.
fn overlap_section(overlap: &[hta::Overlap]) -> Section {
    table_section(
        "overlap",
        |w| format!("### Communication/computation overlap{}", paren(w)),
        &["rank", "comm (µs)", "under compute (µs)", "overlap %"],
        overlap,
        |x| {
            vec![
                rank(x.rank),
                fixed(number(x.comm_us), 0),
                fixed(number(x.overlapped_us), 0),
                fixed(number(x.overlap_pct), 2),
            ]
        },
    )
}

/// HTA's potential stragglers with the metric of each rank.
fn stragglers_section(st: &hta::Stragglers) -> Section {
    let mut sec = heading(
        "stragglers",
        format!(
            "### Potential stragglers (HTA's rule, inferred): ranks {:?}",
            st.ranks
        ),
    );
    let mut l = SpanLine::default();
    l.text(format!(
        "Metric: normalised start of the last long `{}` on stream {} (measured per rank): ",
        st.kernel, st.stream
    ));
    for (i, (rk, m)) in st.metric.iter().enumerate() {
        l.text(if i == 0 { "" } else { ", " })
            .text(format!("rank {rk} "))
            .formatted(number(*m), NumberFormat::Fixed(3));
    }
    sec.push(l.take());
    sec
}

/// HTA's CUDA launch statistics per rank.
fn launch_stats_section(launch_stats: &[hta::HtaLaunchStats]) -> Section {
    table_section(
        "launch_stats",
        |w| format!("### CUDA launch statistics{}", paren(w)),
        &[
            "rank",
            "launches",
            "gpu < cpu",
            "runtime > 50 µs",
            "delay > 100 µs",
            "Σ launch delay (µs)",
        ],
        launch_stats,
        |l| {
            vec![
                rank(l.rank),
                fixed(count(l.launches), 0),
                fixed(count(l.short_kernels), 0),
                fixed(count(l.runtime_outliers), 0),
                fixed(count(l.launch_delay_outliers), 0),
                fixed(number(l.total_launch_delay_us), 0),
            ]
        },
    )
}

/// HTA's queue length per stream.
fn queue_length_section(queue_length: &[hta::QueueRow]) -> Section {
    table_section(
        "queue_length",
        |w| format!("### Queue length per stream{}", paren(w)),
        &[
            "rank",
            "stream",
            "samples",
            "max",
            "mean",
            "time at ≥ 1024 (µs)",
        ],
        queue_length,
        |q| {
            vec![
                rank(q.rank),
                Cell::text(q.stream.to_string()),
                fixed(count(q.samples), 0),
                fixed(count(q.max), 0),
                fixed(number(q.mean), 2),
                fixed(number(q.time_at_1024_us), 0),
            ]
        },
    )
}

/// One step's critical path: its length, edges and split by bound.
fn critical_path_section(cp: &CriticalPath) -> Section {
    let mut sec = Section::new("critical_path", "");
    sec.push(Block::blank());
    sec.push(
        SpanLine::default()
            .text(format!(
                "### Critical path, rank {}, {} (instance {}): ",
                cp.rank.map_or("-".to_string(), |r| r.to_string()),
                cp.step,
                cp.instance
            ))
            .formatted(number(cp.length_us), NumberFormat::Fixed(0))
            .text(" µs over ")
            .formatted(count(cp.path_edges), NumberFormat::Fixed(0))
            .text(" edges, ")
            .formatted(count(cp.sync_edges_on_path), NumberFormat::Fixed(0))
            .text(" of them synchronisation (graph: ")
            .formatted(count(cp.nodes), NumberFormat::Fixed(0))
            .text(" nodes, ")
            .formatted(count(cp.edges), NumberFormat::Fixed(0))
            .text(" edges, ")
            .formatted(count(cp.sync_edges), NumberFormat::Fixed(0))
            .text(" synchronisation)")
            .take(),
    );
    if let Some(Block::Paragraph(line)) = sec.blocks.last_mut() {
        let word = parenthesised(report::spans_label(line));
        line.push(Span::text(word));
    }
    for (b, pct) in &cp.split {
        sec.push(
            SpanLine::default()
                .text(format!("- {}: ", b.label()))
                .figure(report::measured::percent(*pct))
                .take(),
        );
    }
    sec
}

/// The analyses not run and the files not read, with why.
fn not_run_section(r: &ProfileModelReport) -> Section {
    let mut sec = Section::new("not_run", "");
    for (a, why) in &r.not_run {
        sec.push(Block::blank());
        sec.para(format!("Not run: {a}: {why}"));
    }
    for err in &r.not_read {
        sec.push(Block::blank());
        sec.para(format!("Not read (not in the numbers above): {err}"));
    }
    sec
}

/// A section opened by a blank line and a Markdown heading line.
fn heading(id: &str, title: impl Into<String>) -> Section {
    let mut sec = Section::new(id, "");
    sec.push(Block::blank());
    sec.para(title);
    sec
}

/// A [`heading`] section holding one table with `columns`, a row per item (the table's id
/// is the section's).
///
/// `title` is given `, word` for the one label every figure of the table carries (`,
/// measured`), else nothing, so that the heading cannot disagree with its figures.
fn table_section<T>(
    id: &'static str,
    title: impl FnOnce(&str) -> String,
    columns: &[&str],
    items: &[T],
    row: impl Fn(&T) -> Vec<Cell>,
) -> Section {
    let mut t = Table::new(id, columns);
    for item in items {
        t.push(row(item));
    }
    let mut sec = heading(id, title(&also(t.label())));
    sec.push(Block::Table(t));
    sec
}

/// `, word` for a label `word` closing a heading's parenthesis; nothing without one.
fn also(word: Option<&str>) -> String {
    word.map_or_else(String::new, |w| format!(", {w}"))
}

/// ` (word)` from [`also`]'s `, word`; nothing from nothing.
fn paren(also: &str) -> String {
    parenthesised(also.strip_prefix(", "))
}

/// A table cell written with `decimals` digits and nothing else.
fn fixed(f: Figure, decimals: u8) -> Cell {
    Cell::Spans(vec![Span::formatted(f, NumberFormat::Fixed(decimals))])
}
