//! How `analyze-profile` shows its summaries. `--compat` output is the original script's
//! bytes, produced with its own number formatting by `analysis::profile_summary`;
//! the default mode's text and JSON are rendered here.

use std::cmp::Reverse;
use std::fmt::Write;

use analysis::{
    Basis, GpuSummary, HINTS, MATH_BACKEND, Phase, ProfileConfig as Config,
    ProfileOutput as Output, buckets, group_thousands, hints, percent_of, python_prefix_len,
    truncate_name,
};
use serde::Serialize;
use trace_model::Nanos;

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
            let mut out = render_ranks_text(summaries);
            for err in unread {
                let _ = writeln!(
                    out,
                    "\n[analyze-profile] not read (not in the columns above): {err}"
                );
            }
            out
        }
    }
}

/// Renders one summary as text; `top_n` rows of the op table (negative: all but the
/// last `-top_n`, as Python slices).
pub fn render_text(summary: &GpuSummary, top_n: i64) -> String {
    let mut out = String::new();
    let rule = "=".repeat(80);
    let _ = writeln!(out, "\n[analyze-profile] {}", summary.file);
    if let Some(rank) = summary.rank {
        let _ = writeln!(out, " rank {rank}");
    }
    let _ = writeln!(
        out,
        " {} GPU activities: {} kernels, {} memcpys, {} memsets",
        group_thousands(summary.kernels + summary.memcpys + summary.memsets),
        group_thousands(summary.kernels),
        group_thousands(summary.memcpys),
        group_thousands(summary.memsets),
    );
    let _ = writeln!(out, "\n{rule}");
    let _ = writeln!(
        out,
        " GPU time: {} (measured: sum of kernel, memcpy and memset durations; concurrent streams add up)",
        Nanos(summary.gpu_time_ns).human()
    );
    let _ = writeln!(out, "{rule}");

    let _ = writeln!(
        out,
        "\n GPU time by bucket [measured] (an ATen op's name when its kernels are of its kind, else the kernel's class, else the op's or kernel's name):"
    );
    let _ = writeln!(
        out,
        " {:40} {:>12} {:>7} {:>10}",
        "bucket", "time", "% GPU", "activities"
    );
    let mut total_count = 0;
    for row in &summary.buckets {
        total_count += row.activities;
        let _ = writeln!(
            out,
            " {:40} {:>12} {:>6.1}% {:>10}",
            row.bucket,
            Nanos(row.time_ns).human(),
            row.percent,
            row.activities
        );
    }
    let total_pct = if summary.gpu_time_ns > 0 { 100.0 } else { 0.0 };
    let _ = writeln!(
        out,
        " {:40} {:>12} {:>6.1}% {:>10}",
        "total",
        Nanos(summary.gpu_time_ns).human(),
        total_pct,
        total_count
    );

    let _ = writeln!(out, "\n How each activity was bucketed [measured]:");
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
        let _ = writeln!(
            out,
            " {:>6.1}% {:>12} {:>10}  {what}",
            percent_of(row.time_ns, summary.gpu_time_ns),
            Nanos(row.time_ns).human(),
            row.activities
        );
    }

    render_backends(&mut out, summary);

    let shown = python_prefix_len(summary.ops.len(), top_n);
    let _ = writeln!(
        out,
        "\n Top {top_n} CPU ops by the GPU time they launched [measured] ([no op]: activity with no launching CPU op; bucket*: the op's time went to several buckets, the largest is shown):"
    );
    let _ = writeln!(
        out,
        " {:>4} {:>12} {:>7} {:>10} {:28} name",
        "rank", "time", "% GPU", "activities", "bucket"
    );
    for (idx, op) in summary.ops[..shown].iter().enumerate() {
        let marker = if op.is_cpu_op { "" } else { "[no op] " };
        let _ = writeln!(
            out,
            " {:>4} {:>12} {:>6.1}% {:>10} {:28} {marker}{}",
            idx + 1,
            Nanos(op.time_ns).human(),
            op.percent,
            op.activities,
            if op.mixed {
                format!("{}*", op.bucket)
            } else {
                op.bucket.to_owned()
            },
            truncate_name(&op.name)
        );
    }

    let _ = writeln!(out, "\n{rule}");
    let _ = writeln!(
        out,
        " Hints [inferred] (the original script's thresholds, over shares of GPU time; advice for {})",
        summary.phase.label()
    );
    let _ = writeln!(out, "{rule}");
    let applicable = hints(summary);
    if applicable.is_empty() {
        let _ = writeln!(
            out,
            " none: communication <= 15 %, elementwise <= 15 %, memory movement <= 8 %"
        );
    }
    for (bucket, pct, text) in applicable {
        let _ = writeln!(out, " {bucket} {pct:.1}%: {text}");
    }
    let _ = writeln!(
        out,
        "\n Matmul + convolution + attention (core compute): {:.1}% of GPU time [measured]",
        summary.core_compute_percent
    );
    if summary.phase == Phase::Training {
        let _ = writeln!(
            out,
            " Below 50 %, most GPU time goes to non-core ops: there is room to optimise (in Llama 3 training this is usually 60-75 %; the original script's rule of thumb)."
        );
    }
    render_trust(&mut out, summary);
    out
}

/// Renders several ranks side by side: one column per rank for the bucket table.
pub fn render_ranks_text(summaries: &[GpuSummary]) -> String {
    let mut out = String::new();
    let labels: Vec<String> = summaries
        .iter()
        .enumerate()
        .map(|(idx, s)| match s.rank {
            Some(rank) => format!("rank {rank}"),
            None => format!("file {idx}"),
        })
        .collect();
    let _ = writeln!(out, "\n[analyze-profile] {} files", summaries.len());
    for (label, s) in labels.iter().zip(summaries) {
        let _ = writeln!(out, " {label:>10}: {}", s.file);
    }
    // Buckets with time on any rank, by total time descending, ties in rule order.
    let mut rows: Vec<(&'static str, i64)> = buckets::ALL
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

    let _ = writeln!(
        out,
        "\n GPU time by bucket per rank [measured] (an ATen op's name when its kernels are of its kind, else the kernel's class, else the op's or kernel's name):"
    );
    let mut header = format!(" {:28}", "bucket");
    for label in &labels {
        let _ = write!(header, " {label:>20}");
    }
    let _ = writeln!(out, "{header}");
    for (bucket, _) in &rows {
        let mut line = format!(" {bucket:28}");
        for s in summaries {
            let cell = match s.buckets.iter().find(|b| b.bucket == *bucket) {
                Some(b) => format!("{} {:5.1}%", Nanos(b.time_ns).human(), b.percent),
                None => "-".to_owned(),
            };
            let _ = write!(line, " {cell:>20}");
        }
        let _ = writeln!(out, "{line}");
    }
    let mut line = format!(" {:28}", "total GPU time");
    for s in summaries {
        let cell = format!("{} {:5.1}%", Nanos(s.gpu_time_ns).human(), 100.0);
        let _ = write!(line, " {cell:>20}");
    }
    let _ = writeln!(out, "{line}");
    let mut line = format!(" {:28}", "matmul + conv + attention");
    for s in summaries {
        let _ = write!(line, " {:>19.1}%", s.core_compute_percent);
    }
    let _ = writeln!(out, "{line}");
    let mut line = format!(" {:28}", "dominant attention backend");
    for s in summaries {
        let _ = write!(line, " {:>20}", s.dominant_backend.unwrap_or("-"));
    }
    let _ = writeln!(out, "{line}");
    for hint in HINTS {
        let mut line = format!(
            " {:28}",
            format!(
                "hint: {} > {:.0} %",
                short_bucket(hint.bucket),
                hint.threshold
            )
        );
        for s in summaries {
            let fired = hints(s).iter().any(|h| h.0 == hint.bucket);
            let _ = write!(line, " {:>20}", if fired { "yes" } else { "-" });
        }
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(
        out,
        "\n Per-rank top ops and the hints' advice: run with --trace-file on one rank."
    );
    out
}

fn json_line(value: &impl Serialize) -> String {
    let mut text = serde_json::to_string(value)
        .expect("invariant: summaries serialize (string keys, finite numbers)");
    text.push('\n');
    text
}

fn render_backends(out: &mut String, summary: &GpuSummary) {
    let _ = writeln!(
        out,
        "\n Attention backend [inferred from kernel names] (over the attention bucket):"
    );
    if summary.attention_backends.is_empty() {
        let _ = writeln!(out, " no GPU time in the attention bucket");
        return;
    }
    for row in &summary.attention_backends {
        let marker = if Some(row.backend) == summary.dominant_backend {
            " <- DOMINANT"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            " {:44}: {:>12} {:>6.1}%{marker}",
            row.backend,
            Nanos(row.time_ns).human(),
            percent_of(row.time_ns, summary.gpu_time_ns)
        );
    }
    if !summary.unknown_attention_kernels.is_empty() {
        let _ = writeln!(
            out,
            " unknown: no backend recognised in these kernel names (largest first):"
        );
        for (name, time) in &summary.unknown_attention_kernels {
            let _ = writeln!(
                out,
                "   {:>12}  {}",
                Nanos(*time).human(),
                truncate_name(name)
            );
        }
    }
    if summary.dominant_backend == Some(MATH_BACKEND) {
        let _ = writeln!(
            out,
            " Attention runs unfused (math SDPA). Try `torch.nn.attention.sdpa_kernel(SDPBackend.FLASH_ATTENTION)` or the efficient backend (inferred: which fused backend applies depends on dtype, head size, mask and GPU)."
        );
    }
}

fn render_trust(out: &mut String, summary: &GpuSummary) {
    if summary.trust.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n Trust list (what the reader could not use, with counts):"
    );
    for item in &summary.trust {
        let _ = writeln!(out, " {:>8}  {} [{}]", item.count, item.message, item.code);
    }
}

/// A bucket's name without its parenthesised examples (`matmul (GEMM)` → `matmul`).
fn short_bucket(bucket: &str) -> &str {
    bucket.split(" (").next().unwrap_or(bucket)
}
