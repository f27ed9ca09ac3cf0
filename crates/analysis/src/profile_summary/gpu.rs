//! Default mode: correct GPU accounting.
//!
//! Only GPU activities (kernels, memcpys, memsets) are counted, in integer nanoseconds.
//! Each is attributed to the CPU op that launched it ([`Capture::launching_op`]:
//! correlation id → runtime launch call → innermost `cpu_op` around that call on the
//! same thread, or the op with the same `External id`) and bucketed by the seed's rules
//! applied to that op's name, then, if the op's name matches no rule, to the activity's
//! own name. Every activity lands in exactly one bucket, so the buckets sum to the GPU
//! time exactly.
//!
//! The top-ops table groups GPU time by the launching CPU op's name (an activity with no
//! launching op is grouped under its own name, marked `[no op]`): that is the unit a
//! user changes in the model, and it gathers the many kernels one op launches.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use trace_model::{ActivityKind, Capture, KernelClass, Nanos, StringId};

use super::rules::{self, OTHER, SDPA_BACKENDS};
use super::{Config, py};
use crate::Error;

/// How an activity's bucket was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// The launching CPU op's name matched a bucket rule.
    OpName,
    /// The launching op's name matched no rule; the activity's own name decided.
    KernelNameUnderOp,
    /// No launching op was found; the activity's own name decided.
    KernelNameNoOp,
    /// Neither the launching op's name (if any) nor the activity's own name matched a
    /// rule; the workspace's kernel classification (`trace_model::classify_kernel`) put it
    /// in a bucket (cuBLAS/hipBLASLt GEMMs, fused attention, NCCL/RCCL, copies).
    KernelClass,
}

/// The seed bucket of a kernel class, for activities no name rule matched; `other`
/// where the seed has no bucket for the class (convolutions, reductions, memsets).
fn bucket_of_class(class: KernelClass) -> &'static str {
    match class {
        KernelClass::Gemm => rules::GEMM,
        KernelClass::Attention => rules::ATTENTION,
        KernelClass::Elementwise => rules::ELEMENTWISE,
        KernelClass::Collective(_) => rules::COLLECTIVE,
        KernelClass::Memcpy(_) => rules::MEMORY,
        KernelClass::Convolution
        | KernelClass::Reduction
        | KernelClass::Memset
        | KernelClass::Other => OTHER,
    }
}

/// GPU time in one bucket.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BucketRow {
    pub bucket: &'static str,
    pub time_ns: i64,
    /// Percent of the GPU time.
    pub percent: f64,
    pub activities: u64,
}

/// GPU time attributed to one backend by the seed's attention-backend patterns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BackendRow {
    pub backend: &'static str,
    pub time_ns: i64,
    pub activities: u64,
}

/// GPU time launched by one CPU op name (or of one activity name with no launching op).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpRow {
    pub name: String,
    /// False when no launching CPU op was found and `name` is the activity's own name.
    pub is_cpu_op: bool,
    pub time_ns: i64,
    pub percent: f64,
    pub activities: u64,
    /// The bucket most of this row's GPU time went to.
    pub bucket: &'static str,
}

/// GPU time and activity count per attribution basis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BasisRow {
    pub basis: Basis,
    pub time_ns: i64,
    pub activities: u64,
}

/// One diagnostic of the reader, as the trust list shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrustItem {
    pub code: &'static str,
    pub message: String,
    pub count: u64,
}

/// The default-mode summary of one capture.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuSummary {
    pub file: String,
    pub rank: Option<i64>,
    /// Sum of the durations of all GPU activities (streams that overlap count twice).
    pub gpu_time_ns: i64,
    pub kernels: u64,
    pub memcpys: u64,
    pub memsets: u64,
    /// Non-empty buckets, by GPU time descending (ties in rule order).
    pub buckets: Vec<BucketRow>,
    pub attribution: Vec<BasisRow>,
    /// Backends with any hit, by GPU time descending (ties in the seed's order).
    pub attention_backends: Vec<BackendRow>,
    /// The first backend with the most time, as the seed's `max()` picks it.
    pub dominant_backend: Option<&'static str>,
    /// Every op row, by GPU time descending (ties in first-launch order).
    pub ops: Vec<OpRow>,
    /// Percent of GPU time in the GEMM and attention buckets together.
    pub core_compute_percent: f64,
    pub trust: Vec<TrustItem>,
}

/// Computes the default-mode summary of a loaded capture.
pub fn gpu_summary(capture: &Capture, file: &str, rank: Option<i64>) -> GpuSummary {
    let mut gpu_time = 0i64;
    let (mut kernels, mut memcpys, mut memsets) = (0u64, 0u64, 0u64);
    let mut bucket_time: Vec<(&'static str, i64, u64)> =
        rules::bucket_names().map(|b| (b, 0, 0)).collect();
    let mut basis_time = [
        (Basis::OpName, 0i64, 0u64),
        (Basis::KernelNameUnderOp, 0, 0),
        (Basis::KernelNameNoOp, 0, 0),
        (Basis::KernelClass, 0, 0),
    ];
    let mut backend_time: Vec<(&'static str, i64, u64)> =
        SDPA_BACKENDS.iter().map(|(b, _)| (*b, 0, 0)).collect();
    // Op rows keyed by (name, is_cpu_op), in first-launch order (activities sorted by stream, start).
    let mut op_index: HashMap<(StringId, bool), usize> = HashMap::new();
    let mut op_rows: Vec<(StringId, bool, i64, u64, Vec<i64>)> = Vec::new();
    let mut bucket_cache: HashMap<StringId, &'static str> = HashMap::new();
    let mut bucket_by_name = |id: StringId| {
        *bucket_cache
            .entry(id)
            .or_insert_with(|| rules::bucket_of(capture.name(id)))
    };

    for activity in &capture.activities {
        let dur = activity.dur.0;
        gpu_time += dur;
        match activity.kind {
            ActivityKind::Kernel => kernels += 1,
            ActivityKind::Memcpy => memcpys += 1,
            ActivityKind::Memset => memsets += 1,
        }
        let op = capture.launching_op(activity);
        let (bucket, basis) = match op {
            Some(op) => match bucket_by_name(op.name) {
                OTHER => (bucket_by_name(activity.name), Basis::KernelNameUnderOp),
                bucket => (bucket, Basis::OpName),
            },
            None => (bucket_by_name(activity.name), Basis::KernelNameNoOp),
        };
        let (bucket, basis) = match (bucket, bucket_of_class(activity.class)) {
            (OTHER, by_class) if by_class != OTHER => (by_class, Basis::KernelClass),
            _ => (bucket, basis),
        };
        let bucket_idx = bucket_time
            .iter()
            .position(|(b, _, _)| *b == bucket)
            .expect("invariant: bucket_of returns one of bucket_names()");
        bucket_time[bucket_idx].1 += dur;
        bucket_time[bucket_idx].2 += 1;
        let basis_row = basis_time
            .iter_mut()
            .find(|(b, _, _)| *b == basis)
            .expect("invariant: every basis has a row");
        basis_row.1 += dur;
        basis_row.2 += 1;

        let kernel_name = capture.name(activity.name);
        let op_name = op.map(|op| capture.name(op.name));
        if let Some(idx) = backend_of(kernel_name).or_else(|| op_name.and_then(backend_of)) {
            backend_time[idx].1 += dur;
            backend_time[idx].2 += 1;
        }

        let key = match op {
            Some(op) => (op.name, true),
            None => (activity.name, false),
        };
        let slot = *op_index.entry(key).or_insert_with(|| {
            op_rows.push((key.0, key.1, 0, 0, vec![0; bucket_time.len()]));
            op_rows.len() - 1
        });
        let row = &mut op_rows[slot];
        row.2 += dur;
        row.3 += 1;
        row.4[bucket_idx] += dur;
    }

    let percent = |time: i64| {
        if gpu_time > 0 {
            time as f64 / gpu_time as f64 * 100.0
        } else {
            0.0
        }
    };
    let mut buckets: Vec<BucketRow> = bucket_time
        .iter()
        .filter(|(_, _, count)| *count > 0)
        .map(|&(bucket, time_ns, activities)| BucketRow {
            bucket,
            time_ns,
            percent: percent(time_ns),
            activities,
        })
        .collect();
    buckets.sort_by_key(|b| Reverse(b.time_ns));

    let mut attention_backends: Vec<BackendRow> = backend_time
        .iter()
        .filter(|(_, _, count)| *count > 0)
        .map(|&(backend, time_ns, activities)| BackendRow {
            backend,
            time_ns,
            activities,
        })
        .collect();
    let dominant_backend = attention_backends
        .iter()
        .fold(None::<&BackendRow>, |best, row| match best {
            Some(best) if best.time_ns >= row.time_ns => Some(best),
            _ => Some(row),
        })
        .map(|row| row.backend);
    attention_backends.sort_by_key(|b| Reverse(b.time_ns));

    let bucket_names: Vec<&'static str> = bucket_time.iter().map(|(b, _, _)| *b).collect();
    let mut ops: Vec<OpRow> = op_rows
        .into_iter()
        .map(|(name, is_cpu_op, time_ns, activities, per_bucket)| {
            // The first bucket (in rule order) with the most time.
            let mut best = 0;
            for (idx, &t) in per_bucket.iter().enumerate() {
                if t > per_bucket[best] {
                    best = idx;
                }
            }
            OpRow {
                name: capture.name(name).to_owned(),
                is_cpu_op,
                time_ns,
                percent: percent(time_ns),
                activities,
                bucket: bucket_names[best],
            }
        })
        .collect();
    ops.sort_by_key(|op| Reverse(op.time_ns));

    let share = |bucket: &str| {
        buckets
            .iter()
            .find(|b| b.bucket == bucket)
            .map_or(0, |b| b.time_ns)
    };
    let core_compute_percent = percent(share(rules::GEMM) + share(rules::ATTENTION));
    let trust = capture
        .diagnostics
        .iter()
        .map(|d| TrustItem {
            code: d.code,
            message: d.message.clone(),
            count: d.count,
        })
        .collect();

    GpuSummary {
        file: file.to_owned(),
        rank,
        gpu_time_ns: gpu_time,
        kernels,
        memcpys,
        memsets,
        buckets,
        attribution: basis_time
            .iter()
            .map(|&(basis, time_ns, activities)| BasisRow {
                basis,
                time_ns,
                activities,
            })
            .collect(),
        attention_backends,
        dominant_backend,
        ops,
        core_compute_percent,
        trust,
    }
}

/// Loads the trace at `path` and summarises it.
pub fn gpu_summary_of_file(path: &Path) -> Result<GpuSummary, Error> {
    let capture = chrome_reader::load(path)?;
    let rank = capture
        .meta
        .rank
        .or_else(|| chrome_reader::rank_from_file_name(path));
    Ok(gpu_summary(&capture, &path.to_string_lossy(), rank))
}

/// The seed's hints, with its thresholds, over GPU-time shares: `(bucket, threshold %,
/// what it suggests)`.
pub const HINTS: &[(&str, f64, &str)] = &[
    (
        rules::COLLECTIVE,
        15.0,
        "collectives are high (> 15 %): wrap gradient accumulation in `no_sync()` to avoid redundant all-reduces; with FSDP, ZeRO-2/3 shards optimizer state so each sync moves less",
    ),
    (
        rules::ELEMENTWISE,
        15.0,
        "elementwise is high (> 15 %), so memory-bandwidth bound: a fused RMSNorm + SiLU + Add kernel (apex or Triton) saves 50 %+",
    ),
    (
        rules::MEMORY,
        8.0,
        "memory movement is high (> 8 %), a layout problem: check how often permute/transpose/contiguous run; layouts may be converted back and forth",
    ),
];

/// The hints that apply to a summary: `(bucket, percent, text)`.
pub fn hints(summary: &GpuSummary) -> Vec<(&'static str, f64, &'static str)> {
    HINTS
        .iter()
        .filter_map(|&(bucket, threshold, text)| {
            let pct = summary
                .buckets
                .iter()
                .find(|b| b.bucket == bucket)
                .map_or(0.0, |b| b.percent);
            (pct > threshold).then_some((bucket, pct, text))
        })
        .collect()
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
        py::group_thousands(summary.kernels + summary.memcpys + summary.memsets),
        py::group_thousands(summary.kernels),
        py::group_thousands(summary.memcpys),
        py::group_thousands(summary.memsets),
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
        "\n GPU time by bucket [measured] (each activity bucketed by its launching CPU op, else its own name, else its kernel class):"
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
        let what = match row.basis {
            Basis::OpName => "by its launching CPU op's name",
            Basis::KernelNameUnderOp => "by its own name (launching op's name matched no rule)",
            Basis::KernelNameNoOp => "by its own name (no launching CPU op found)",
            Basis::KernelClass => "by the kernel classification table (no name rule matched)",
        };
        let _ = writeln!(
            out,
            " {:>6.1}% {:>12} {:>10}  {what}",
            percent_of(row.time_ns, summary.gpu_time_ns),
            Nanos(row.time_ns).human(),
            row.activities
        );
    }

    let _ = writeln!(
        out,
        "\n Attention backend detection [inferred from name patterns] (kernel names; the launching op's name when the kernel's matches no pattern):"
    );
    if summary.attention_backends.is_empty() {
        let _ = writeln!(
            out,
            " no attention kernel recognised (names may be encoded, or SDPA was not used)"
        );
    } else {
        for row in &summary.attention_backends {
            let marker = if Some(row.backend) == summary.dominant_backend {
                " <- DOMINANT"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                " {:20}: {:>12} {:>6.1}%{marker}",
                row.backend,
                Nanos(row.time_ns).human(),
                percent_of(row.time_ns, summary.gpu_time_ns)
            );
        }
        let attention_time = summary
            .buckets
            .iter()
            .find(|b| b.bucket == rules::ATTENTION)
            .map_or(0, |b| b.time_ns);
        if attention_time > 0 && summary.dominant_backend != Some(rules::FLASH) {
            let _ = writeln!(
                out,
                " Not using FlashAttention. Try `torch.nn.attention.sdpa_kernel(SDPBackend.FLASH_ATTENTION)` (inferred: whether FA applies depends on dtype, head size and GPU)."
            );
        }
    }

    let shown = py::python_prefix_len(summary.ops.len(), top_n);
    let _ = writeln!(
        out,
        "\n Top {top_n} CPU ops by the GPU time they launched [measured] ([no op]: activity with no launching CPU op):"
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
            op.bucket,
            py::truncate_name(&op.name)
        );
    }

    let _ = writeln!(out, "\n{rule}");
    let _ = writeln!(
        out,
        " Hints [inferred] (the seed's thresholds, over shares of GPU time):"
    );
    let _ = writeln!(out, "{rule}");
    let applicable = hints(summary);
    if applicable.is_empty() {
        let _ = writeln!(
            out,
            " none: collectives <= 15 %, elementwise <= 15 %, memory movement <= 8 %"
        );
    }
    for (bucket, pct, text) in applicable {
        let _ = writeln!(out, " {bucket} {pct:.1}%: {text}");
    }
    let _ = writeln!(
        out,
        "\n Matmul + attention (core compute): {:.1}% of GPU time [measured]",
        summary.core_compute_percent
    );
    let _ = writeln!(
        out,
        " Below 50 %, most GPU time goes to non-core ops: there is room to optimise (in Llama 3 training this is usually 60-75 %; the seed's rule of thumb)."
    );
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
    let mut rows: Vec<(&'static str, i64)> = rules::bucket_names()
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
        "\n GPU time by bucket per rank [measured] (each activity bucketed by its launching CPU op, else its own name, else its kernel class):"
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
    let mut line = format!(" {:28}", "matmul + attention");
    for s in summaries {
        let _ = write!(line, " {:>19.1}%", s.core_compute_percent);
    }
    let _ = writeln!(out, "{line}");
    let mut line = format!(" {:28}", "dominant attention backend");
    for s in summaries {
        let _ = write!(line, " {:>20}", s.dominant_backend.unwrap_or("-"));
    }
    let _ = writeln!(out, "{line}");
    for &(bucket, threshold, _) in HINTS {
        let mut line = format!(
            " {:28}",
            format!("hint: {} > {threshold:.0} %", short_bucket(bucket))
        );
        for s in summaries {
            let fired = hints(s).iter().any(|h| h.0 == bucket);
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

/// Runs default mode over `files` (one, or every rank with `--all-ranks`).
pub(super) fn run(files: &[PathBuf], config: &Config) -> Result<String, Error> {
    let summaries = files
        .iter()
        .map(|path| gpu_summary_of_file(path))
        .collect::<Result<Vec<_>, _>>()?;
    let shown = |s: &GpuSummary| {
        let mut s = s.clone();
        s.ops
            .truncate(py::python_prefix_len(s.ops.len(), config.top_n));
        s
    };
    Ok(match (config.json, config.all_ranks) {
        (true, false) => json_line(&summaries.iter().map(shown).next()),
        (true, true) => json_line(&serde_json::json!({
            "ranks": summaries.iter().map(shown).collect::<Vec<_>>()
        })),
        (false, false) => summaries
            .iter()
            .map(|s| render_text(s, config.top_n))
            .collect(),
        (false, true) => render_ranks_text(&summaries),
    })
}

fn json_line(value: &impl Serialize) -> String {
    let mut text = serde_json::to_string(value)
        .expect("invariant: summaries serialize (string keys, finite numbers)");
    text.push('\n');
    text
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

fn percent_of(part: i64, whole: i64) -> f64 {
    if whole > 0 {
        part as f64 / whole as f64 * 100.0
    } else {
        0.0
    }
}

/// Index in [`SDPA_BACKENDS`] of the first backend with a pattern in `name`.
fn backend_of(name: &str) -> Option<usize> {
    SDPA_BACKENDS
        .iter()
        .position(|(_, patterns)| patterns.iter().any(|p| name.contains(p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary_of(json: &str) -> GpuSummary {
        let capture = chrome_reader::load_from(json.as_bytes(), Path::new("test.json"))
            .expect("test trace loads");
        gpu_summary(&capture, "test.json", None)
    }

    /// `aten::linear` around `aten::addmm` around the launch: the innermost op decides
    /// (GEMM); a memcpy under `aten::copy_` (no rule) falls back to its own name
    /// (memory); a kernel whose launch is missing is bucketed by its own name.
    #[test]
    fn activities_go_to_the_innermost_launching_op() {
        let trace = r#"{"traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
 {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 10, "dur": 50},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 5, "args": {"correlation": 7}},
 {"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": 30, "dur": 40.5, "args": {"correlation": 7, "stream": 7, "device": 0}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::copy_", "pid": 1, "tid": 1, "ts": 200, "dur": 50},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1, "ts": 210, "dur": 5, "args": {"correlation": 8}},
 {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 220, "dur": 3, "args": {"correlation": 8, "stream": 7, "device": 0}},
 {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float", "pid": 0, "tid": 9, "ts": 230, "dur": 10, "args": {"correlation": 99, "stream": 9, "device": 0}}
]}"#;
        let s = summary_of(trace);
        assert_eq!(s.gpu_time_ns, 53_500);
        assert_eq!(
            s.buckets.iter().map(|b| b.time_ns).sum::<i64>(),
            s.gpu_time_ns
        );
        let bucket = |name: &str| {
            s.buckets
                .iter()
                .find(|b| b.bucket == name)
                .map(|b| b.time_ns)
        };
        assert_eq!(bucket(rules::GEMM), Some(40_500));
        assert_eq!(bucket(rules::MEMORY), Some(3_000));
        assert_eq!(bucket(rules::COLLECTIVE), Some(10_000));
        let basis = |b: Basis| {
            s.attribution
                .iter()
                .find(|r| r.basis == b)
                .map(|r| r.activities)
        };
        assert_eq!(basis(Basis::OpName), Some(1));
        assert_eq!(basis(Basis::KernelNameUnderOp), Some(1));
        assert_eq!(basis(Basis::KernelNameNoOp), Some(1));
        assert_eq!(s.ops[0].name, "aten::addmm");
        assert!(s.ops[0].is_cpu_op);
        assert_eq!(s.ops[1].name, "ncclKernel_AllReduce_RING_LL_Sum_float");
        assert!(!s.ops[1].is_cpu_op);
        assert!((s.core_compute_percent - 40_500.0 / 53_500.0 * 100.0).abs() < 1e-9);
        let text = render_text(&s, 25);
        assert!(text.contains("[no op] ncclKernel_AllReduce"), "{text}");
        assert!(hints(&s).iter().any(|h| h.0 == rules::COLLECTIVE));
    }

    #[test]
    fn an_empty_trace_has_no_buckets_and_no_nan() {
        let s = summary_of(r#"{"traceEvents": []}"#);
        assert_eq!(s.gpu_time_ns, 0);
        assert!(s.buckets.is_empty());
        assert_eq!(s.core_compute_percent, 0.0);
        assert!(render_text(&s, 25).contains("GPU time: 0 ns"));
    }
}
