//! How skip-stats shows an [`InputAnalysis`]: plain text for people, JSON for programs.
//! The text is a [`Document`] printed by [`crate::text`]; every section names its label
//! (measured / inferred).

use serde_json::{Value, json};
use trace_model::Nanos;

use crate::doc::{
    Block, Cell, Column, Document, Section, Span, SpanLine, Table, TextLayout, bracketed,
    spans_label,
};
use crate::label::{Figure, NumberFormat};
use crate::measured;

use analysis::{
    Bound, Budget, CaptureAnalysis, InputAnalysis, LaunchStats, SkipMetrics, Spread, Window,
};

/// The text report: one block per capture (rank), then the last finisher.
pub fn render_text(analysis: &InputAnalysis) -> String {
    crate::text::render(&document(analysis))
}

/// The text report as a document (see [`render_text`]): one section per capture.
pub fn document(analysis: &InputAnalysis) -> Document {
    let mut doc = Document::new("");
    for (i, r) in analysis.reports.iter().enumerate() {
        let mut sec = Section::new(format!("capture{i}"), "");
        if i > 0 {
            sec.push(Block::blank());
        }
        report(&mut sec, r);
        doc.sections.push(sec);
    }
    if let Some(lf) = &analysis.last_finisher {
        let rank = lf.rank.map_or("?".to_string(), |r| r.to_string());
        let provenance = lf.provenance();
        let clocks = provenance
            .detail()
            .unwrap_or("clocks aligned on baseTimeNanoseconds");
        let mut sec = Section::new("last_finisher", "");
        sec.push(Block::blank());
        sec.push(
            SpanLine::default()
                .text(format!("Last to finish step {}: rank {rank}, ", lf.step))
                .figure(Figure::duration(lf.behind_earliest, provenance.clone()))
                .text(format!(
                    " after the earliest rank [{}; {clocks}]",
                    provenance.word()
                ))
                .take(),
        );
        doc.sections.push(sec);
    }
    doc
}

fn report(sec: &mut Section, r: &CaptureAnalysis) {
    let rank = r.rank.map(|n| format!(", rank {n}")).unwrap_or_default();
    sec.para(format!("== {}{rank}", r.label));
    sec.para(format!("format: {}", r.format.describe()));
    let n = r.steps.steps.len();
    let mut l = SpanLine::default();
    l.text("steps: ")
        .formatted(measured::count(n), NumberFormat::Fixed(0))
        .text(format!(" ({})", r.steps.origin.describe()));
    if let (Some(sp), Some(m)) = (r.steps.duration_spread(), r.steps.median_step()) {
        l.text(format!("; median step #{} ", r.steps.steps[m].number))
            .figure(measured::duration(sp.median))
            .text(" (");
        min_max(&mut l, &sp)
            .text(", spread ")
            .figure(measured::duration(sp.max - sp.min))
            .text(")")
            .label();
    }
    sec.push(l.take());
    let Some(window) = r.window else {
        sec.para("no GPU activity in any step: nothing to budget");
        diagnostics(sec, r);
        return;
    };
    sec.push(
        SpanLine::default()
            .text("window: ")
            .figure(measured::duration(window.span()))
            .text(" (the steady-state steps' wall time, or their GPU activities' span when the steps are not host ranges)")
            .label()
            .take(),
    );
    sec.push(Block::blank());
    verdict(sec, r, window);
    budgets(sec, r);
    gaps(sec, r);
    skip(sec, r);
    launch(sec, r);
    diagnostics(sec, r);
}

fn verdict(sec: &mut Section, r: &CaptureAnalysis, window: Window) {
    let v = &r.verdict;
    let mut l = SpanLine::default();
    // One vocabulary with investigate: the verdict is the diagnosis's (its stable code),
    // the critical stream's budget below is its measured evidence.
    l.text(format!(
        "Verdict [{}]: {}",
        r.diagnosis.provenance().word(),
        r.diagnosis.code()
    ));
    if v.bound == Bound::NoGpuWork {
        l.text(".");
        sec.push(l.take());
        sec.push(Block::blank());
        return;
    }
    if let Some(c) = r.critical_stream() {
        l.text(format!(
            ": the critical stream (most compute: GPU {} stream {}) is busy ",
            c.device, c.stream
        ))
        .figure(measured::share(v.busy_share))
        .text(" of the ")
        .figure(measured::duration(window.span()))
        .text(" window");
        if v.collective_share > 0.0 {
            l.text(", plus ")
                .figure(measured::share(v.collective_share))
                .text(" in collectives (time that includes waiting for peers)");
        }
    }
    if let Some(cs) = &r.comm_stream {
        let s = &r.streams[cs.stream];
        l.text(format!(
            "; communication runs on GPU {} stream {}, busy ",
            s.device, s.stream
        ))
        .figure(measured::share(cs.share))
        .text(" of the window with collectives (including waiting for peers; not counted as GPU work)");
    }
    if let (Some(t), Some(q), Some(mean)) = (
        &r.total,
        v.queue_ratio,
        r.total.as_ref().and_then(|t| t.mean_direct_delay()),
    ) {
        l.text("; a kernel waits ")
            .figure(measured::duration(mean))
            .text(" on average between launch and start, ")
            .formatted(
                Figure::ratio(q, v.provenance.clone()),
                NumberFormat::Fixed(2),
            )
            .text("x the mean kernel duration of ")
            .figure(measured::duration(t.akd));
    }
    if let Some(t) = r.total.as_ref().filter(|t| t.graph_kernels > 0) {
        l.text(" (")
            .formatted(measured::count(t.graph_kernels), NumberFormat::Fixed(0))
            .text(" of ")
            .formatted(measured::count(t.launched_kernels), NumberFormat::Fixed(0))
            .text(" launched kernels came from graph launches and are left out of that wait: their delay counts from the graph launch)");
    }
    match (
        v.host_wait_share,
        v.stream_wait_share,
        v.sync_wait_share,
        v.unknown_wait_share,
    ) {
        (Some(h), Some(w), Some(s), Some(u)) => {
            l.text("; of its idle time, gap by gap: ")
                .figure(measured::share(h))
                .text(" before the host launched the next work, ")
                .figure(measured::share(w))
                .text(" waiting on another stream or event, ")
                .figure(measured::share(s))
                .text(" while the host was blocked in a synchronising call (waiting for the GPU), ")
                .figure(measured::share(u))
                .text(" without evidence");
        }
        _ => {
            l.text("; no idle gap has evidence of its cause (no launch for the activity after it), so their cause is unknown");
        }
    }
    if let Some(gc) = &r.gap_causes {
        for (i, e) in gc.evidence.iter().take(3).enumerate() {
            l.text(if i == 0 { "; evidence: " } else { ", " })
                .text(format!("{} ({}: ", e.what, e.cause.label()))
                .figure(measured::duration(e.time))
                .text(")");
        }
    }
    l.text("; host work runs during ")
        .figure(measured::share(v.covered_share))
        .text(" of its idle time.");
    sec.push(l.take());
    sec.para(
        "  rules: GPU-bound if busy >= 90 %, or >= 80 % and wait/duration >= 1; host/launch-bound if idle >= 50 % and host wait >= 50 % of idle (host work during >= 50 % of idle, when no gap's cause is known); inconclusive if idle >= 50 % and >= 50 % of idle has no evidence (or none has); else mixed. Busy leaves collectives out. Host wait: the part of a gap before the launch call of the activity after it, while the launching thread was not in a synchronising call.",
    );
    if let Some(h) = r
        .host_only
        .as_ref()
        .filter(|h| (h.before_gpu + h.after_gpu).0 > 0)
    {
        l.text("  Host-only time: the steps have no GPU activity for ")
            .figure(measured::share(h.share()))
            .text(" of their wall time (")
            .figure(measured::duration(h.before_gpu))
            .text(" before the first, ")
            .figure(measured::duration(h.after_gpu))
            .text(" after the last, over ")
            .formatted(measured::count(h.steps), NumberFormat::Fixed(0))
            .text(" steps); the host runs ");
        if h.top.is_empty() {
            l.text("nothing recorded");
        }
        for (i, t) in h.top.iter().take(3).enumerate() {
            l.text(if i == 0 { "" } else { ", " })
                .text(format!("{} (", t.name))
                .figure(measured::duration(t.overlapped))
                .text(")");
        }
        l.text(" then (self time).");
        sec.push(l.take());
    }
    if let Some(b) = &r.gpu_behind {
        l.text("  The GPU runs more than a step behind the host: a kernel starts ")
            .figure(measured::duration(b.median_delay))
            .text(" after its launch (median), longer than the median step (")
            .figure(measured::duration(b.median_step))
            .text("); the host's step markers do not bound the GPU work of the same step.");
        sec.push(l.take());
    }
    if r.in_flight.activities > 0 {
        l.text("  In flight at capture start: ")
            .formatted(measured::count(r.in_flight.activities), NumberFormat::Fixed(0))
            .text(" activities, ")
            .figure(measured::duration(r.in_flight.time))
            .text(" of GPU time, launched before the capture began (left out of steps, budgets and SKIP metrics).");
        sec.push(l.take());
    }
    sec.push(Block::blank());
}

fn budget_row(device: String, stream: String, b: &Budget) -> Vec<Cell> {
    let mut row = vec![
        Cell::text(device),
        Cell::text(stream),
        Cell::figure(measured::duration(b.span())),
    ];
    for part in [b.compute, b.collective, b.memcpy, b.memset, b.idle] {
        row.push(Cell::figure(measured::duration(part)));
        row.push(Cell::figure(measured::share(b.share(part))));
    }
    row.push(if b.check.holds() {
        Cell::text("ok")
    } else {
        // What the interval unions give for each part, as measured durations.
        let mut spans = vec![Span::text("FAILED (unions give ")];
        for (i, part) in b.check.expected_parts().iter().enumerate() {
            if i > 0 {
                spans.push(Span::text(" / "));
            }
            spans.push(Span::Figure(measured::duration(*part)));
        }
        spans.push(Span::text(")"));
        Cell::Spans(spans)
    });
    row
}

fn budgets(sec: &mut Section, r: &CaptureAnalysis) {
    let at = sec.blocks.len();
    let mut t = Table::new(
        "budget",
        &[
            "device",
            "stream",
            "span",
            "compute",
            "%",
            "collective",
            "%",
            "memcpy",
            "%",
            "memset",
            "%",
            "idle",
            "%",
            "check",
        ],
    );
    for d in &r.devices {
        for s in r.streams.iter().filter(|s| s.device == d.device) {
            t.push(budget_row(
                s.device.to_string(),
                s.stream.to_string(),
                &s.budget,
            ));
        }
        t.push(budget_row(
            d.device.to_string(),
            "all".to_owned(),
            &d.budget,
        ));
    }
    let part = || Column::right(1, 11);
    let percent = || Column::right(1, 6).format(NumberFormat::Fixed(1));
    sec.push(Block::Table(t.with_layout(TextLayout::new(vec![
        Column::right(0, 6),
        Column::right(1, 8),
        part(),
        part(),
        percent(),
        part(),
        percent(),
        part(),
        percent(),
        part(),
        percent(),
        part(),
        percent(),
        Column::left(2, 0),
    ]))));
    sec.insert_heading(at, |label| {
        format!(
            "Budget per device x stream over the window{label} (overlaps merged; precedence compute > collective > memcpy > memset)"
        )
    });
    let failed = r.streams.iter().filter(|s| !s.budget.check.holds()).count()
        + r.devices.iter().filter(|d| !d.budget.check.holds()).count();
    let count = |n: usize| Span::formatted(measured::count(n), NumberFormat::Fixed(0));
    let mut check = vec![Span::text(
        "check: each part = the union of its kind and the kinds before it, less the union of those before it (merged apart from the sweep), so the parts sum to the union of all activities: ",
    )];
    if failed == 0 {
        check.push(Span::text("holds for every row"));
    } else {
        check.extend([
            Span::text("FAILED for "),
            count(failed),
            Span::text(" rows"),
        ]);
    }
    check.extend([
        Span::text(" ("),
        count(r.streams.len() + r.devices.len()),
        Span::text(" rows)"),
    ]);
    sec.push(Block::Paragraph(check));
    sec.push(Block::blank());
}

fn gaps(sec: &mut Section, r: &CaptureAnalysis) {
    let (Some(g), Some(c)) = (&r.gap_host, r.critical_stream()) else {
        return;
    };
    let mut figures = SpanLine::default();
    figures
        .formatted(measured::count(g.gap_count), NumberFormat::Fixed(0))
        .text(" gaps, ")
        .figure(measured::duration(g.idle))
        .text(" idle, host work during ")
        .figure(measured::duration(g.covered))
        .text(" (")
        .figure(measured::share(g.covered_share()))
        .text(")");
    let mut spans = vec![Span::text(format!(
        "Host events during the GPU-idle gaps of GPU {} stream {}{}: ",
        c.device,
        c.stream,
        bracketed(spans_label(&figures.0))
    ))];
    spans.append(&mut figures.0);
    sec.push(Block::Paragraph(spans));
    if g.top.is_empty() {
        sec.para("  no host event on a launching thread overlaps the gaps");
        sec.push(Block::blank());
        return;
    }
    sec.para(
        "  (overlapped: sum over the events of one name; nested and concurrent events each count, so shares can exceed 100 %)",
    );
    let mut t = Table::new(
        "gap_host",
        &["overlapped", "% idle", "events", "kind", "name"],
    );
    for h in &g.top {
        let part = if g.idle.0 == 0 {
            0.0
        } else {
            h.overlapped.0 as f64 / g.idle.0 as f64
        };
        t.push(vec![
            Cell::figure(measured::duration(h.overlapped)),
            Cell::figure(measured::share(part)),
            Cell::figure(measured::count(h.events)),
            Cell::text(format!("{:?}", h.kind)),
            Cell::code(h.name.clone()),
        ]);
    }
    sec.push(Block::Table(t.with_layout(TextLayout::new(vec![
        Column::right(0, 11),
        Column::right(1, 7).format(NumberFormat::Fixed(1)),
        Column::right(1, 7).format(NumberFormat::Fixed(0)),
        Column::left(1, 12),
        Column::left(1, 0),
    ]))));
    sec.push(Block::blank());
}

fn skip(sec: &mut Section, r: &CaptureAnalysis) {
    let steps_with = r.per_step.iter().filter(|s| s.skip.is_some()).count();
    let mut t = Table::new("skip", &["metric", "median", "min", "max", "total"]);
    type Metric = fn(&SkipMetrics) -> Nanos;
    let rows: [(&str, Metric); 5] = [
        ("TKLQT", |m| m.tklqt),
        ("AKD", |m| m.akd),
        ("IL", |m| m.il),
        ("GPU idle", |m| m.gpu_idle),
        ("kernels", |m| Nanos(m.kernels as i64)),
    ];
    for (name, f) in rows {
        let sp = r.step_spread(f);
        let total = r.total.as_ref().map(f);
        let show = |n: Option<Nanos>| match n {
            None => Cell::text("-"),
            Some(n) if name == "kernels" => Cell::figure(measured::count(n.0)),
            Some(n) => Cell::figure(measured::duration(n)),
        };
        t.push(vec![
            Cell::text(name),
            show(sp.map(|s| s.median)),
            show(sp.map(|s| s.min)),
            show(sp.map(|s| s.max)),
            show(total),
        ]);
    }
    // Durations read as people read them; the kernel counts as plain integers.
    let value = || Column::right(1, 11).format(NumberFormat::Fixed(0));
    sec.push(Block::Paragraph(vec![
        Span::text(format!("SKIP metrics{} per step (", bracketed(t.label()))),
        Span::formatted(measured::count(steps_with), NumberFormat::Fixed(0)),
        Span::text(" steps with kernels) and in total"),
    ]));
    sec.push(Block::Table(t.with_layout(TextLayout::new(vec![
        Column::left(0, 10),
        value(),
        value(),
        value(),
        value(),
    ]))));
    sec.para(
        "  TKLQT = sum(kernel start - launch start), kernels that start before their launch (clock skew) left out; AKD = mean kernel duration; IL = last kernel end - first top-level host op start; GPU idle = IL - union of kernel intervals (concurrent kernels counted once)",
    );
    sec.push(Block::blank());
}

fn delay_line(l: &mut SpanLine, s: &LaunchStats) {
    l.formatted(measured::count(s.activities), NumberFormat::Fixed(0))
        .text(" activities, ")
        .formatted(measured::count(s.with_launch), NumberFormat::Fixed(0))
        .text(" with a host launch, ")
        .formatted(measured::count(s.without_launch), NumberFormat::Fixed(0))
        .text(" without");
    if let Some(d) = s.delay {
        l.text("; launch-to-start delay sum ")
            .figure(measured::duration(s.delay_sum))
            .text(", median ")
            .figure(measured::duration(d.median))
            .text(", ");
        min_max(l, &d);
    }
}

/// `min X, max Y` of a spread of durations, measured.
fn min_max<'l>(l: &'l mut SpanLine, s: &analysis::Spread) -> &'l mut SpanLine {
    l.text("min ")
        .figure(measured::duration(s.min))
        .text(", max ")
        .figure(measured::duration(s.max))
}

fn launch(sec: &mut Section, r: &CaptureAnalysis) {
    let at = sec.blocks.len();
    let mut l = SpanLine::default();
    l.text("  all GPU activities: ");
    delay_line(&mut l, &r.launch_all);
    sec.push(l.take());
    l.text("  kernels:            ");
    delay_line(&mut l, &r.launch_kernels);
    sec.push(l.take());
    sec.insert_heading(at, |label| format!("Launch join{label}"));
}

fn diagnostics(sec: &mut Section, r: &CaptureAnalysis) {
    if r.diagnostics.is_empty() {
        return;
    }
    sec.para("Diagnostics (counted):");
    for d in r.diagnostics.iter() {
        let mut l = SpanLine::default();
        l.text(format!("  - {} (", d.code))
            .formatted(measured::count(d.count), NumberFormat::Fixed(0))
            .text(format!("×): {}", d.message));
        if !d.first.is_empty() {
            l.text(format!("; first: {}", d.first));
        }
        sec.push(l.take());
    }
}

fn budget_json(b: &Budget) -> Value {
    json!({
        "window_start_ns": b.window.start.0,
        "window_end_ns": b.window.end.0,
        "span_ns": b.span().0,
        "compute_ns": b.compute.0,
        "collective_ns": b.collective.0,
        "memcpy_ns": b.memcpy.0,
        "memset_ns": b.memset.0,
        "idle_ns": b.idle.0,
        "activities": b.activity_count,
        "check": {
            "parts_ns": b.check.parts.map(|p| p.0),
            "expected_parts_ns": b.check.expected_parts().map(|p| p.0),
            "busy_ns": b.check.parts_busy().0,
            "union_busy_ns": b.check.union_busy().0,
            "tolerance_ns": analysis::BudgetCheck::TOLERANCE.0,
            "holds": b.check.holds(),
        },
        "label": b.provenance.word(),
    })
}

fn spread_json(s: Option<Spread>) -> Value {
    s.map_or(
        Value::Null,
        |s| json!({"median_ns": s.median.0, "min_ns": s.min.0, "max_ns": s.max.0}),
    )
}

fn skip_json(m: &SkipMetrics) -> Value {
    json!({
        "kernels": m.kernels,
        "launched_kernels": m.launched_kernels,
        "graph_kernels": m.graph_kernels,
        "graph_tklqt_ns": m.graph_tklqt.0,
        "tklqt_ns": m.tklqt.0,
        "akd_ns": m.akd.0,
        "kernel_time_ns": m.kernel_time.0,
        "il_ns": m.il.0,
        "kernel_union_ns": m.kernel_union.0,
        "skewed_kernels": m.skewed_kernels,
        "gpu_idle_ns": m.gpu_idle.0,
        "label": m.provenance.word(),
    })
}

fn launch_json(l: &LaunchStats) -> Value {
    json!({
        "activities": l.activities,
        "with_launch": l.with_launch,
        "without_launch": l.without_launch,
        "delay_sum_ns": l.delay_sum.0,
        "delay": spread_json(l.delay),
        "negative_delays": l.negative,
        "label": l.provenance.word(),
    })
}

/// The JSON report (keys sorted; times in integer nanoseconds; each object labelled).
pub fn render_json(analysis: &InputAnalysis) -> Value {
    let reports: Vec<Value> = analysis.reports.iter().map(report_json).collect();
    json!({
        "input": analysis.input.display().to_string(),
        "reports": reports,
        "last_finisher": analysis.last_finisher.as_ref().map(|lf| json!({
            "step": lf.step,
            "rank": lf.rank,
            "behind_earliest_ns": lf.behind_earliest.0,
            "aligned_on_base_time": lf.aligned_on_base_time,
            "label": lf.provenance().word(),
        })),
    })
}

fn report_json(r: &CaptureAnalysis) -> Value {
    let v = &r.verdict;
    json!({
        "path": r.label.to_string(),
        "format": r.format.describe(),
        "rank": r.rank,
        "steps": {
            "origin": r.steps.origin.describe(),
            "count": r.steps.steps.len(),
            "duration": spread_json(r.steps.duration_spread()),
            "median_step": r.steps.median_step().map(|i| r.steps.steps[i].number),
            "label": r.steps.provenance().word(),
        },
        "window": r.window.map(|w| json!({"start_ns": w.start.0, "end_ns": w.end.0, "span_ns": w.span().0})),
        "host_only": r.host_only.as_ref().map(|h| json!({
            "before_gpu_ns": h.before_gpu.0, "after_gpu_ns": h.after_gpu.0,
            "step_time_ns": h.step_time.0, "steps": h.steps, "share": h.share(),
            "top": h.top.iter().map(|t| json!({"name": t.name, "self_ns": t.overlapped.0, "events": t.events})).collect::<Vec<_>>(),
            "label": h.provenance().word(),
        })),
        "verdict": {
            "diagnosis": r.diagnosis.code(),
            "diagnosis_text": r.diagnosis.describe(),
            "bound": v.bound.label(),
            "busy_share": v.busy_share,
            "collective_share": v.collective_share,
            "idle_share": v.idle_share,
            "communication_stream": r.comm_stream.as_ref().map(|c| json!({
                "device": r.streams[c.stream].device,
                "stream": r.streams[c.stream].stream,
                "collective_share": c.share,
            })),
            "gpu_behind": r.gpu_behind.map(|b| json!({
                "median_delay_ns": b.median_delay.0,
                "median_step_ns": b.median_step.0,
            })),
            "covered_share": v.covered_share,
            "host_wait_share": v.host_wait_share,
            "stream_wait_share": v.stream_wait_share,
            "sync_wait_share": v.sync_wait_share,
            "unknown_wait_share": v.unknown_wait_share,
            "gap_evidence": r.gap_causes.as_ref().map(|g| g.evidence.iter().map(|e| json!({
                "cause": e.cause.label(), "what": e.what, "time_ns": e.time.0, "gaps": e.gaps,
            })).collect::<Vec<_>>()),
            "queue_ratio": v.queue_ratio,
            "critical_stream": r.critical_stream().map(|c| json!({"device": c.device, "stream": c.stream})),
            "label": v.provenance.word(),
            "assumptions": analysis::verdict_assumptions(),
        },
        "streams": r.streams.iter().map(|s| json!({
            "device": s.device, "stream": s.stream, "budget": budget_json(&s.budget),
        })).collect::<Vec<_>>(),
        "devices": r.devices.iter().map(|d| json!({
            "device": d.device, "budget": budget_json(&d.budget),
        })).collect::<Vec<_>>(),
        "gap_host": r.gap_host.as_ref().map(|g| json!({
            "gaps": g.gap_count,
            "idle_ns": g.idle.0,
            "covered_ns": g.covered.0,
            "top": g.top.iter().map(|h| json!({
                "name": h.name, "kind": format!("{:?}", h.kind),
                "overlapped_ns": h.overlapped.0, "events": h.events,
            })).collect::<Vec<_>>(),
            "label": g.provenance.word(),
        })),
        "skip": {
            "per_step": r.per_step.iter().map(|s| json!({
                "step": s.number,
                "range_start_ns": s.range.start.0,
                "range_end_ns": s.range.end.0,
                "metrics": s.skip.as_ref().map(skip_json),
            })).collect::<Vec<_>>(),
            "total": r.total.as_ref().map(skip_json),
        },
        "launch": {"all": launch_json(&r.launch_all), "kernels": launch_json(&r.launch_kernels)},
        "in_flight_at_start": {
            "activities": r.in_flight.activities,
            "time_ns": r.in_flight.time.0,
            "label": r.in_flight.provenance().word(),
        },
                "diagnostics": r.diagnostics.iter().map(|d| json!({
            "code": d.code, "count": d.count, "message": d.message, "first": d.first,
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use analysis::{BudgetCheck, BusyKind};
    use trace_model::{Nanos, Provenance};

    use super::*;

    /// The check column of a budget over `[0, 10)` whose parts claim `parts` for compute `[0, 4)` and a
    /// collective `[2, 6)`.
    fn cells(parts: [i64; 4]) -> Cell {
        let intervals = [
            (Nanos(0), Nanos(4), BusyKind::Compute),
            (Nanos(2), Nanos(6), BusyKind::Collective),
        ];
        let busy: i64 = parts.iter().sum();
        let row = budget_row(
            String::new(),
            String::new(),
            &Budget {
                window: Window {
                    start: Nanos(0),
                    end: Nanos(10),
                },
                compute: Nanos(parts[0]),
                collective: Nanos(parts[1]),
                memcpy: Nanos(parts[2]),
                memset: Nanos(parts[3]),
                idle: Nanos(10 - busy),
                activity_count: 2,
                check: BudgetCheck::new(parts.map(Nanos), &intervals),
                provenance: Provenance::Measured,
            },
        );
        row.last().expect("a check column").clone()
    }

    /// The union figures of a failed check, as labelled durations.
    fn unions(cell: &Cell) -> Vec<i64> {
        let Cell::Spans(spans) = cell else {
            panic!("a failed check holds its figures: {cell:?}");
        };
        spans
            .iter()
            .filter_map(|s| match s {
                Span::Figure(Figure {
                    value: crate::label::Value::Duration(ns),
                    label: Provenance::Measured,
                    ..
                }) => Some(*ns),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_failed_budget_check_prints_the_union_figures() {
        assert_eq!(cells([4, 2, 0, 0]), Cell::text("ok"));
        // The overlap counted for both kinds: the unions give the collective 2 ns, not 4.
        let failed = cells([4, 4, 0, 0]);
        assert_eq!(unions(&failed), [4, 2, 0, 0]);
        // Terminal text still reads as before (figures without their label).
        let Cell::Spans(spans) = &failed else {
            unreachable!()
        };
        assert_eq!(
            crate::text::spans(spans),
            "FAILED (unions give 4 ns / 2 ns / 0 ns / 0 ns)"
        );
    }
}
