//! Text and JSON renderings of a [`ProfileModelReport`]. Every figure says whether it is
//! measured or inferred. They stay here rather than in the `report` crate beside the other
//! renderers: a `ProfileModelReport` is built from polars frames, and only this crate may
//! depend on polars.

use std::fmt::Write;

use crate::ProfileModelReport;

/// The report as JSON.
pub fn render_json(r: &ProfileModelReport) -> String {
    serde_json::to_string_pretty(r).expect("the report serialises: plain data")
}

/// The report as Markdown-flavoured text, in profile-model's fixed output order.
pub fn render_text(r: &ProfileModelReport) -> String {
    let mut o = String::new();
    let s = &r.summary;
    let _ = writeln!(o, "## Trace Analysis Summary ({})\n", r.input.display());
    let _ = writeln!(o, "**Main Finding** (inferred): {}\n", s.main_finding.value);
    for m in &s.missing {
        let _ = writeln!(o, "**Missing**: {m}");
    }
    if !s.missing.is_empty() {
        o.push('\n');
    }
    let _ = writeln!(
        o,
        "Events: {} in {} rank(s) (measured); kernels: {} (measured), {:.1} µs in total (measured)\n",
        s.events.value, s.ranks, s.kernels.value, s.kernel_time_us.value
    );
    let _ = writeln!(o, "| cat | events (measured) |\n|---|---|");
    for (c, n) in &s.by_category {
        let _ = writeln!(o, "| {c} | {n} |");
    }
    let _ = writeln!(o, "\n### Top GPU Kernels (by time, measured)");
    let _ = writeln!(
        o,
        "| % Time | Calls | Avg (µs) | Kernel |\n|---|---|---|---|"
    );
    for k in &s.top_kernels {
        let _ = writeln!(
            o,
            "| {:.1}% | {} | {:.1} | {} |",
            k.pct, k.calls, k.avg_us, k.name
        );
    }
    let _ = writeln!(o, "\n### Bottleneck: {} (inferred)", s.bottleneck.value);
    let _ = writeln!(
        o,
        "Rule: {}\n",
        s.bottleneck.provenance.detail().unwrap_or("")
    );
    if !s.recommendations.is_empty() {
        let _ = writeln!(o, "### Recommendations");
        for (i, (sym, fix)) in s.recommendations.iter().enumerate() {
            let _ = writeln!(o, "{}. {sym} (measured) → {fix}", i + 1);
        }
        o.push('\n');
    }
    for c in &r.cache {
        let _ = writeln!(o, "Cache: {c:?}");
    }
    let rank = |r: Option<i64>| r.map_or("-".to_string(), |r| r.to_string());
    if !r.kernel_types.is_empty() {
        let _ = writeln!(
            o,
            "\n### Kernel-type breakdown, all ranks (HTA's definition, measured)"
        );
        let _ = writeln!(o, "| kernel_type | sum (µs) | % |\n|---|---|---|");
        for k in &r.kernel_types {
            let _ = writeln!(
                o,
                "| {} | {:.0} | {:.1} |",
                k.kernel_type, k.sum_us, k.percentage
            );
        }
        let _ = writeln!(
            o,
            "\n### Kernels per rank (top 10 per rank by time, measured; HTA type and our class)"
        );
        let _ = writeln!(
            o,
            "| rank | kernel | HTA type | our class | count | sum (µs) | mean (µs) |\n|---|---|---|---|---|---|---|"
        );
        let mut shown = std::collections::BTreeMap::<Option<i64>, usize>::new();
        for k in &r.kernels {
            let n = shown.entry(k.rank).or_default();
            if *n >= 10 {
                continue;
            }
            *n += 1;
            let _ = writeln!(
                o,
                "| {} | {} | {:?} | {} | {} | {:.1} | {:.1} |",
                rank(k.rank),
                k.name,
                k.kernel_type,
                k.our_class,
                k.count,
                k.sum_us,
                k.mean_us
            );
        }
    }
    if !r.temporal.is_empty() {
        let _ = writeln!(
            o,
            "\n### Temporal breakdown (HTA's definition: span of all GPU activities, measured)"
        );
        let _ = writeln!(
            o,
            "| rank | span (µs) | idle % | compute % | non-compute % |\n|---|---|---|---|---|"
        );
        for t in &r.temporal {
            let _ = writeln!(
                o,
                "| {} | {:.0} | {:.2} | {:.2} | {:.2} |",
                rank(t.rank),
                t.kernel_time_us,
                t.idle_pct,
                t.compute_pct,
                t.non_compute_pct
            );
        }
    }
    if let Some(skip) = &r.skip_stats {
        let _ = writeln!(
            o,
            "\n### Ours beside (skip-stats' window: GPU work of steps, in-flight work left out, measured)"
        );
        let _ = writeln!(
            o,
            "| rank | window (µs) | idle % | compute % | collective % | memcpy+memset % | critical stream | host wait (µs) | queued wait (µs) | unattributed (µs) | in flight |\n|---|---|---|---|---|---|---|---|---|---|---|"
        );
        for x in &skip.ranks {
            let _ = writeln!(
                o,
                "| {} | {:.0} | {:.2} | {:.2} | {:.2} | {:.2} | {} | {:.0} | {:.0} | {:.0} | {} |",
                rank(x.rank),
                x.window_us,
                x.idle_pct,
                x.compute_pct,
                x.collective_pct,
                x.memcpy_memset_pct,
                x.critical_stream.map_or("-".into(), |s| s.to_string()),
                x.host_wait_us,
                x.queued_wait_us,
                x.unattributed_us,
                x.in_flight
            );
        }
        if let Some((rk, behind)) = skip.last_finisher {
            let _ = writeln!(
                o,
                "Last to finish the step's GPU work: rank {} ({behind:.0} µs after the first, measured)",
                rank(rk)
            );
        }
    }
    if !r.idle.is_empty() {
        let _ = writeln!(
            o,
            "\n### Idle time per stream (HTA's categories, measured; kernel wait = gap < 30 µs after an earlier launch)"
        );
        let _ = writeln!(
            o,
            "| rank | stream | host wait (µs) | kernel wait (µs) | other (µs) | host / kernel / other ratio |\n|---|---|---|---|---|---|"
        );
        for i in &r.idle {
            let _ = writeln!(
                o,
                "| {} | {} | {:.0} | {:.0} | {:.0} | {:.2} / {:.2} / {:.2} |",
                rank(i.rank),
                i.stream,
                i.host_wait_us,
                i.kernel_wait_us,
                i.other_us,
                i.host_wait_ratio,
                i.kernel_wait_ratio,
                i.other_ratio
            );
        }
    }
    if !r.overlap.is_empty() {
        let _ = writeln!(o, "\n### Communication/computation overlap (measured)");
        let _ = writeln!(
            o,
            "| rank | comm (µs) | under compute (µs) | overlap % |\n|---|---|---|---|"
        );
        for x in &r.overlap {
            let _ = writeln!(
                o,
                "| {} | {:.0} | {:.0} | {:.2} |",
                rank(x.rank),
                x.comm_us,
                x.overlapped_us,
                x.overlap_pct
            );
        }
    }
    if let Some(st) = &r.stragglers {
        let _ = writeln!(
            o,
            "\n### Potential stragglers (HTA's rule, inferred): ranks {:?}\nMetric: normalised start of the last long `{}` on stream {} (measured per rank): {}",
            st.ranks,
            st.kernel,
            st.stream,
            st.metric
                .iter()
                .map(|(r, m)| format!("rank {r} {m:.3}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if !r.launch_stats.is_empty() {
        let _ = writeln!(o, "\n### CUDA launch statistics (measured)");
        let _ = writeln!(
            o,
            "| rank | launches | gpu < cpu | runtime > 50 µs | delay > 100 µs | Σ launch delay (µs) |\n|---|---|---|---|---|---|"
        );
        for l in &r.launch_stats {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} | {:.0} |",
                rank(l.rank),
                l.launches,
                l.short_kernels,
                l.runtime_outliers,
                l.launch_delay_outliers,
                l.total_launch_delay_us
            );
        }
    }
    if !r.queue_length.is_empty() {
        let _ = writeln!(o, "\n### Queue length per stream (measured)");
        let _ = writeln!(
            o,
            "| rank | stream | samples | max | mean | time at ≥ 1024 (µs) |\n|---|---|---|---|---|---|"
        );
        for q in &r.queue_length {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {:.2} | {:.0} |",
                rank(q.rank),
                q.stream,
                q.samples,
                q.max,
                q.mean,
                q.time_at_1024_us
            );
        }
    }
    for cp in &r.critical_path {
        let _ = writeln!(
            o,
            "\n### Critical path, rank {}, {} (instance {}): {:.0} µs over {} edges, {} of them \
             synchronisation (graph: {} nodes, {} edges, {} synchronisation) (measured)",
            rank(cp.rank),
            cp.step,
            cp.instance,
            cp.length_us,
            cp.path_edges,
            cp.sync_edges_on_path,
            cp.nodes,
            cp.edges,
            cp.sync_edges,
        );
        for (b, pct) in &cp.split {
            let _ = writeln!(o, "- {}: {pct:.1} %", b.label());
        }
    }
    for (a, why) in &r.not_run {
        let _ = writeln!(o, "\nNot run: {a}: {why}");
    }
    for err in &r.not_read {
        let _ = writeln!(o, "\nNot read (not in the numbers above): {err}");
    }
    o
}
