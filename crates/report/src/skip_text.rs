//! How skip-stats shows an [`Analysis`]: plain text for people, JSON for programs.
//! Every section names its label (measured / inferred).

use std::fmt::Write;

use serde_json::{Value, json};
use trace_model::Nanos;

use analysis::{
    Bound, Budget, LaunchStats, SkipAnalysis as Analysis, SkipMetrics, SkipReport as Report,
    Spread, Window,
};

/// The text report: one block per capture (rank), then the last finisher.
pub fn render_text(analysis: &Analysis) -> String {
    let mut out = String::new();
    for (i, r) in analysis.reports.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        render_report(&mut out, r);
    }
    if let Some(lf) = &analysis.last_finisher {
        let rank = lf.rank.map_or("?".to_string(), |r| r.to_string());
        let clocks = if lf.aligned_on_base_time {
            "clocks aligned on baseTimeNanoseconds"
        } else {
            "raw timestamps, assuming the ranks share a clock"
        };
        let _ = writeln!(
            out,
            "\nLast to finish step {}: rank {rank}, {} after the earliest rank [measured; {clocks}]",
            lf.step,
            lf.behind_earliest.human()
        );
    }
    out
}

fn pct(x: f64) -> String {
    format!("{:.1} %", 100.0 * x)
}

fn render_report(out: &mut String, r: &Report) {
    let rank = r.rank.map(|n| format!(", rank {n}")).unwrap_or_default();
    let _ = writeln!(out, "== {}{rank}", r.label);
    let _ = writeln!(out, "format: {}", r.format.describe());
    let n = r.steps.steps.len();
    let _ = write!(out, "steps: {n} ({})", r.steps.origin.describe());
    if let (Some(sp), Some(m)) = (r.steps.duration_spread(), r.steps.median_step()) {
        let _ = write!(
            out,
            "; median step #{} {} (min {}, max {}, spread {}) [measured]",
            r.steps.steps[m].number,
            sp.median.human(),
            sp.min.human(),
            sp.max.human(),
            (sp.max - sp.min).human()
        );
    }
    out.push('\n');
    let Some(window) = r.window else {
        let _ = writeln!(out, "no GPU activity in any step: nothing to budget");
        render_diagnostics(out, r);
        return;
    };
    let _ = writeln!(
        out,
        "window: {} (the steady-state steps' wall time, or their GPU activities' span when the steps are not host ranges) [measured]\n",
        window.span().human()
    );
    render_verdict(out, r, window);
    render_budgets(out, r);
    render_gaps(out, r);
    render_skip(out, r);
    render_launch(out, r);
    render_diagnostics(out, r);
}

fn render_verdict(out: &mut String, r: &Report, window: Window) {
    let v = &r.verdict;
    let _ = write!(out, "Verdict [inferred]: {}", v.bound.label());
    if v.bound == Bound::NoGpuWork {
        out.push_str(".\n\n");
        return;
    }
    if let Some(c) = r.critical_stream() {
        let _ = write!(
            out,
            ": the critical stream (most compute: GPU {} stream {}) is busy {} of the {} window",
            c.device,
            c.stream,
            pct(v.busy_share),
            window.span().human()
        );
        if v.collective_share > 0.0 {
            let _ = write!(
                out,
                ", plus {} in collectives (time that includes waiting for peers)",
                pct(v.collective_share)
            );
        }
    }
    if let Some(cs) = &r.comm_stream {
        let s = &r.streams[cs.stream];
        let _ = write!(
            out,
            "; communication runs on GPU {} stream {}, busy {} of the window with collectives (including waiting for peers; not counted as GPU work)",
            s.device,
            s.stream,
            pct(cs.share)
        );
    }
    if let (Some(t), Some(q), Some(mean)) = (
        &r.total,
        v.queue_ratio,
        r.total.as_ref().and_then(|t| t.mean_direct_delay()),
    ) {
        let _ = write!(
            out,
            "; a kernel waits {} on average between launch and start, {q:.2}x the mean kernel duration of {}",
            mean.human(),
            t.akd.human()
        );
    }
    if let Some(t) = r.total.as_ref().filter(|t| t.graph_kernels > 0) {
        let _ = write!(
            out,
            " ({} of {} launched kernels came from graph launches and are left out of that wait: their delay counts from the graph launch)",
            t.graph_kernels, t.launched_kernels
        );
    }
    match (
        v.host_wait_share,
        v.stream_wait_share,
        v.sync_wait_share,
        v.unknown_wait_share,
    ) {
        (Some(h), Some(w), Some(s), Some(u)) => {
            let _ = write!(
                out,
                "; of its idle time, gap by gap: {} before the host launched the next work, {} waiting on another stream or event, {} while the host was blocked in a synchronising call (waiting for the GPU), {} without evidence",
                pct(h),
                pct(w),
                pct(s),
                pct(u)
            );
        }
        _ => {
            let _ = write!(
                out,
                "; no idle gap has evidence of its cause (no launch for the activity after it), so their cause is unknown"
            );
        }
    }
    if let Some(gc) = &r.gap_causes {
        let top: Vec<String> = gc
            .evidence
            .iter()
            .take(3)
            .map(|e| format!("{} ({}: {})", e.what, e.cause.label(), e.time.human()))
            .collect();
        if !top.is_empty() {
            let _ = write!(out, "; evidence: {}", top.join(", "));
        }
    }
    let _ = writeln!(
        out,
        "; host work runs during {} of its idle time.",
        pct(v.covered_share)
    );
    let _ = writeln!(
        out,
        "  rules: GPU-bound if busy >= 90 %, or >= 80 % and wait/duration >= 1; host/launch-bound if idle >= 50 % and host wait >= 50 % of idle (host work during >= 50 % of idle, when no gap's cause is known); inconclusive if idle >= 50 % and >= 50 % of idle has no evidence (or none has); else mixed. Busy leaves collectives out. Host wait: the part of a gap before the launch call of the activity after it, while the launching thread was not in a synchronising call."
    );
    if let Some(h) = r
        .host_only
        .as_ref()
        .filter(|h| (h.before_gpu + h.after_gpu).0 > 0)
    {
        let top: Vec<String> = h
            .top
            .iter()
            .take(3)
            .map(|t| format!("{} ({})", t.name, t.overlapped.human()))
            .collect();
        let _ = writeln!(
            out,
            "  Host-only time: the steps have no GPU activity for {} of their wall time ({} before the first, {} after the last, over {} steps); the host runs {} then (self time).",
            pct(h.share()),
            h.before_gpu.human(),
            h.after_gpu.human(),
            h.steps,
            if top.is_empty() {
                "nothing recorded".to_owned()
            } else {
                top.join(", ")
            }
        );
    }
    if let Some(b) = &r.gpu_behind {
        let _ = writeln!(
            out,
            "  The GPU runs more than a step behind the host: a kernel starts {} after its launch (median), longer than the median step ({}); the host's step markers do not bound the GPU work of the same step.",
            b.median_delay.human(),
            b.median_step.human()
        );
    }
    if r.in_flight.activities > 0 {
        let _ = writeln!(
            out,
            "  In flight at capture start: {} activities, {} of GPU time, launched before the capture began (left out of steps, budgets and SKIP metrics).",
            r.in_flight.activities,
            r.in_flight.time.human()
        );
    }
    out.push('\n');
}

fn budget_cells(b: &Budget) -> String {
    let mut s = format!("{:>11}", b.span().human());
    for part in [b.compute, b.collective, b.memcpy, b.memset, b.idle] {
        let _ = write!(
            s,
            " {:>11} {:>6}",
            part.human(),
            format!("{:.1}", 100.0 * b.share(part))
        );
    }
    if b.check.holds() {
        s.push_str("  ok");
    } else {
        let expected: Vec<String> = b.check.expected_parts().iter().map(|p| p.human()).collect();
        let _ = write!(s, "  FAILED (unions give {})", expected.join(" / "));
    }
    s
}

fn render_budgets(out: &mut String, r: &Report) {
    let _ = writeln!(
        out,
        "Budget per device x stream over the window [measured] (overlaps merged; precedence compute > collective > memcpy > memset)"
    );
    let _ = writeln!(
        out,
        "{:>6} {:>8} {:>11} {:>11} {:>6} {:>11} {:>6} {:>11} {:>6} {:>11} {:>6} {:>11} {:>6}  check",
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
        "%"
    );
    for d in &r.devices {
        for s in r.streams.iter().filter(|s| s.device == d.device) {
            let _ = writeln!(
                out,
                "{:>6} {:>8} {}",
                s.device,
                s.stream,
                budget_cells(&s.budget)
            );
        }
        let _ = writeln!(
            out,
            "{:>6} {:>8} {}",
            d.device,
            "all",
            budget_cells(&d.budget)
        );
    }
    let failed = r.streams.iter().filter(|s| !s.budget.check.holds()).count()
        + r.devices.iter().filter(|d| !d.budget.check.holds()).count();
    let _ = writeln!(
        out,
        "check: each part = the union of its kind and the kinds before it, less the union of those before it (merged apart from the sweep), so the parts sum to the union of all activities: {} ({} rows)\n",
        if failed == 0 {
            "holds for every row".to_string()
        } else {
            format!("FAILED for {failed} rows")
        },
        r.streams.len() + r.devices.len()
    );
}

fn render_gaps(out: &mut String, r: &Report) {
    let (Some(g), Some(c)) = (&r.gap_host, r.critical_stream()) else {
        return;
    };
    let _ = writeln!(
        out,
        "Host events during the GPU-idle gaps of GPU {} stream {} [measured]: {} gaps, {} idle, host work during {} ({})",
        c.device,
        c.stream,
        g.gap_count,
        g.idle.human(),
        g.covered.human(),
        pct(g.covered_share())
    );
    if g.top.is_empty() {
        let _ = writeln!(
            out,
            "  no host event on a launching thread overlaps the gaps\n"
        );
        return;
    }
    let _ = writeln!(
        out,
        "  (overlapped: sum over the events of one name; nested and concurrent events each count, so shares can exceed 100 %)"
    );
    let _ = writeln!(
        out,
        "{:>11} {:>7} {:>7} {:<12} name",
        "overlapped", "% idle", "events", "kind"
    );
    for h in &g.top {
        let share = if g.idle.0 == 0 {
            0.0
        } else {
            h.overlapped.0 as f64 / g.idle.0 as f64
        };
        let _ = writeln!(
            out,
            "{:>11} {:>7} {:>7} {:<12} {}",
            h.overlapped.human(),
            format!("{:.1}", 100.0 * share),
            h.events,
            format!("{:?}", h.kind),
            h.name
        );
    }
    out.push('\n');
}

fn render_skip(out: &mut String, r: &Report) {
    let steps_with = r.per_step.iter().filter(|s| s.skip.is_some()).count();
    let _ = writeln!(
        out,
        "SKIP metrics [measured] per step ({steps_with} steps with kernels) and in total"
    );
    let _ = writeln!(
        out,
        "{:<10} {:>11} {:>11} {:>11} {:>11}",
        "metric", "median", "min", "max", "total"
    );
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
            None => "-".to_string(),
            Some(n) if name == "kernels" => n.0.to_string(),
            Some(n) => n.human(),
        };
        let _ = writeln!(
            out,
            "{:<10} {:>11} {:>11} {:>11} {:>11}",
            name,
            show(sp.map(|s| s.median)),
            show(sp.map(|s| s.min)),
            show(sp.map(|s| s.max)),
            show(total)
        );
    }
    let _ = writeln!(
        out,
        "  TKLQT = sum(kernel start - launch start), kernels that start before their launch (clock skew) left out; AKD = mean kernel duration; IL = last kernel end - first top-level host op start; GPU idle = IL - union of kernel intervals (concurrent kernels counted once)\n"
    );
}

fn delay_line(l: &LaunchStats) -> String {
    let spread = l
        .delay
        .map(|d| {
            format!(
                "; launch-to-start delay sum {}, median {}, min {}, max {}",
                l.delay_sum.human(),
                d.median.human(),
                d.min.human(),
                d.max.human()
            )
        })
        .unwrap_or_default();
    format!(
        "{} activities, {} with a host launch, {} without{spread}",
        l.activities, l.with_launch, l.without_launch
    )
}

fn render_launch(out: &mut String, r: &Report) {
    let _ = writeln!(out, "Launch join [measured]");
    let _ = writeln!(out, "  all GPU activities: {}", delay_line(&r.launch_all));
    let _ = writeln!(
        out,
        "  kernels:            {}",
        delay_line(&r.launch_kernels)
    );
}

fn render_diagnostics(out: &mut String, r: &Report) {
    if r.diagnostics.is_empty() {
        return;
    }
    let _ = writeln!(out, "Diagnostics (counted):");
    for d in r.diagnostics.iter() {
        let _ = write!(out, "  - {} ({}×): {}", d.code, d.count, d.message);
        if !d.first.is_empty() {
            let _ = write!(out, "; first: {}", d.first);
        }
        out.push('\n');
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
pub fn render_json(analysis: &Analysis) -> Value {
    let reports: Vec<Value> = analysis.reports.iter().map(report_json).collect();
    json!({
        "input": analysis.input.display().to_string(),
        "reports": reports,
        "last_finisher": analysis.last_finisher.as_ref().map(|lf| json!({
            "step": lf.step,
            "rank": lf.rank,
            "behind_earliest_ns": lf.behind_earliest.0,
            "aligned_on_base_time": lf.aligned_on_base_time,
            "label": "measured",
        })),
    })
}

fn report_json(r: &Report) -> Value {
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
            "label": "measured",
        },
        "window": r.window.map(|w| json!({"start_ns": w.start.0, "end_ns": w.end.0, "span_ns": w.span().0})),
        "host_only": r.host_only.as_ref().map(|h| json!({
            "before_gpu_ns": h.before_gpu.0, "after_gpu_ns": h.after_gpu.0,
            "step_time_ns": h.step_time.0, "steps": h.steps, "share": h.share(),
            "top": h.top.iter().map(|t| json!({"name": t.name, "self_ns": t.overlapped.0, "events": t.events})).collect::<Vec<_>>(),
            "label": "measured",
        })),
        "verdict": {
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
            "label": "measured",
        },
                "diagnostics": r.diagnostics.iter().map(|d| json!({
            "code": d.code, "count": d.count, "message": d.message, "first": d.first,
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use analysis::{BudgetCheck, BusyKind};
    use trace_model::Nanos;
    use trace_model::Provenance;

    use super::*;

    /// A budget over `[0, 10)` whose parts claim `parts` for compute `[0, 4)` and a
    /// collective `[2, 6)`.
    fn cells(parts: [i64; 4]) -> String {
        let intervals = [
            (Nanos(0), Nanos(4), BusyKind::Compute),
            (Nanos(2), Nanos(6), BusyKind::Collective),
        ];
        let busy: i64 = parts.iter().sum();
        budget_cells(&Budget {
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
        })
    }

    #[test]
    fn a_failed_budget_check_prints_the_union_figures() {
        assert!(
            cells([4, 2, 0, 0]).ends_with("  ok"),
            "{}",
            cells([4, 2, 0, 0])
        );
        // The overlap counted for both kinds: the unions give the collective 2 ns, not 4.
        let failed = cells([4, 4, 0, 0]);
        assert!(
            failed.ends_with("FAILED (unions give 4 ns / 2 ns / 0 ns / 0 ns)"),
            "{failed}"
        );
    }
}
