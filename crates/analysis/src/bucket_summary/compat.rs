//! The reference script's computation and report, reproduced exactly (`--compat`).
//!
//! The reference script sums `dur` of kernels, memcpys and memsets *and* of runtime calls,
//! user annotations and a few CPU ops into one table keyed by event name, then divides by
//! GPU time alone, so bucket shares can exceed 100 %. This module keeps that on purpose:
//! its output is byte for byte what `analyze_profile.py` prints.

use std::collections::HashMap;
use std::fmt::Write;
use std::io::Read;
use std::path::Path;

use load::chrome::{Number, RawEvent};

use super::py::{self, PyNum};
use super::rules::{self, SDPA_BACKENDS};
use crate::Error;

/// One row of the reference script's `stats`: an event name with its summed `dur` and
/// count.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CompatOp {
    pub(crate) name: String,
    pub(crate) time_us: PyNum,
    pub(crate) count: u64,
}

/// The reference script's `analyze()` result for one file, with Python's dict orders kept.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct CompatSummary {
    /// `len(traceEvents)`.
    pub(crate) event_count: usize,
    /// The reference script's `stats`, in first-appearance order.
    pub(crate) ops: Vec<CompatOp>,
    /// Sum of `dur` over `kernel`, `gpu_memcpy` and `gpu_memset` events.
    pub(crate) total_cuda_us: PyNum,
    /// The reference script's `sdpa_backend_hits`, in first-hit order.
    pub(crate) sdpa_hits: Vec<(&'static str, PyNum)>,
}

/// Categories the reference script counts.
const COUNTED_CATS: &[&str] = &[
    "kernel",
    "cuda_runtime",
    "user_annotation",
    "gpu_memcpy",
    "gpu_memset",
    "cpu_op",
];
const GPU_CATS: &[&str] = &["kernel", "gpu_memcpy", "gpu_memset"];

/// Reads the trace at `path` and computes the reference script's numbers.
pub(crate) fn compat_summary(path: &Path) -> Result<CompatSummary, Error> {
    let mut acc = Accumulator::default();
    let top = load::chrome::read_raw_file(path, |ev| {
        acc.add(&ev);
        Ok(())
    })?;
    Ok(acc.finish(top.event_count))
}

/// Like [`compat_summary`], from decompressed JSON text (`path` only names it in errors).
pub(crate) fn compat_summary_from_reader(
    input: impl Read + Send,
    path: &Path,
) -> Result<CompatSummary, Error> {
    let mut acc = Accumulator::default();
    let top = load::chrome::read_raw_events(input, path, |ev| {
        acc.add(&ev);
        Ok(())
    })?;
    Ok(acc.finish(top.event_count))
}

/// What the reference script prints before it loads a file: the path as given and its size.
#[derive(Debug, Clone)]
pub(crate) struct CompatHeader<'a> {
    pub(crate) path_as_given: &'a str,
    pub(crate) file_bytes: u64,
}

/// The reference script's text report for one file (`[loading]` line included), byte for
/// byte.
pub(crate) fn render_compat_text(
    header: &CompatHeader<'_>,
    summary: &CompatSummary,
    top_n: i64,
) -> String {
    let mut out = String::new();
    let mb = header.file_bytes as f64 / 1e6;
    let _ = writeln!(out, "\n[loading] {} ({mb:.1} MB)", header.path_as_given);
    let _ = writeln!(
        out,
        "[loaded] {} events",
        py::group_thousands(summary.event_count as u64)
    );
    report(&mut out, summary, top_n);
    out
}

/// The reference script's `--json` output for one file (one line), as `json.dumps` writes
/// it.
pub(crate) fn render_compat_json(summary: &CompatSummary) -> String {
    let mut out = String::new();
    out.push_str("{\"total_cuda_us\": ");
    py::write_json_number(&mut out, summary.total_cuda_us);
    out.push_str(", \"buckets\": {");
    // `defaultdict(float)`: every bucket starts at 0.0.
    let buckets = bucket_totals(summary, PyNum::Float(0.0));
    for (idx, (bucket, time, _)) in buckets.iter().enumerate() {
        if idx > 0 {
            out.push_str(", ");
        }
        py::write_json_string(&mut out, bucket);
        out.push_str(": ");
        py::write_json_number(&mut out, *time);
    }
    out.push_str("}, \"sdpa\": {");
    for (idx, (backend, time)) in summary.sdpa_hits.iter().enumerate() {
        if idx > 0 {
            out.push_str(", ");
        }
        py::write_json_string(&mut out, backend);
        out.push_str(": ");
        py::write_json_number(&mut out, *time);
    }
    out.push_str("}, \"ops\": {");
    for (idx, op) in summary.ops.iter().enumerate() {
        if idx > 0 {
            out.push_str(", ");
        }
        py::write_json_string(&mut out, &op.name);
        out.push_str(": {\"time_us\": ");
        py::write_json_number(&mut out, op.time_us);
        let _ = write!(out, ", \"count\": {}}}", op.count);
    }
    out.push_str("}}\n");
    out
}

/// The reference script's per-event accumulation (`analyze()`).
#[derive(Default)]
struct Accumulator {
    index: HashMap<String, usize>,
    ops: Vec<CompatOp>,
    total_cuda_us: PyNum,
    sdpa_hits: Vec<(&'static str, PyNum)>,
}

impl Accumulator {
    fn add(&mut self, ev: &RawEvent<'_>) {
        if ev.ph != "X" {
            return;
        }
        let cat = ev.cat.as_deref().unwrap_or("");
        let name = ev.name.as_deref().unwrap_or("");
        if !COUNTED_CATS.contains(&cat) {
            return;
        }
        if cat == "cpu_op"
            && !name.contains("ncclAllReduce")
            && !name.to_lowercase().contains("sync")
        {
            return;
        }
        let dur = ev.dur.map_or(PyNum::Int(0), py_number);
        let slot = match self.index.get(name) {
            Some(&slot) => slot,
            None => {
                self.index.insert(name.to_owned(), self.ops.len());
                self.ops.push(CompatOp {
                    name: name.to_owned(),
                    time_us: PyNum::Int(0),
                    count: 0,
                });
                self.ops.len() - 1
            }
        };
        let op = &mut self.ops[slot];
        op.time_us = op.time_us.plus(dur);
        op.count += 1;
        if GPU_CATS.contains(&cat) {
            self.total_cuda_us = self.total_cuda_us.plus(dur);
        }
        for (backend, patterns) in SDPA_BACKENDS {
            for pattern in *patterns {
                if name.contains(pattern) {
                    match self.sdpa_hits.iter_mut().find(|(b, _)| b == backend) {
                        Some((_, time)) => *time = time.plus(dur),
                        None => self.sdpa_hits.push((backend, PyNum::Int(0).plus(dur))),
                    }
                }
            }
        }
    }

    fn finish(self, event_count: usize) -> CompatSummary {
        CompatSummary {
            event_count,
            ops: self.ops,
            total_cuda_us: self.total_cuda_us,
            sdpa_hits: self.sdpa_hits,
        }
    }
}

/// A JSON number as Python's `json` reads it: `int` without fraction or exponent.
fn py_number(n: Number<'_>) -> PyNum {
    if n.is_integer()
        && let Ok(v) = n.text().parse::<i128>()
    {
        return PyNum::Int(v);
    }
    PyNum::Float(n.as_f64().unwrap_or(f64::NAN))
}

/// Buckets in first-appearance order with their summed time and count, each sum
/// starting at `zero` (`defaultdict(int)` in the report, `defaultdict(float)` in `--json`).
fn bucket_totals(summary: &CompatSummary, zero: PyNum) -> Vec<(&'static str, PyNum, u64)> {
    let mut buckets: Vec<(&'static str, PyNum, u64)> = Vec::new();
    for op in &summary.ops {
        let bucket = rules::bucket_of(&op.name);
        match buckets.iter_mut().find(|(b, _, _)| *b == bucket) {
            Some((_, time, count)) => {
                *time = time.plus(op.time_us);
                *count += op.count;
            }
            None => buckets.push((bucket, zero.plus(op.time_us), op.count)),
        }
    }
    buckets
}

/// Python's `sorted(items, key=lambda kv: -value)`: descending, ties in original order.
fn sort_descending<T>(items: &mut [T], value: impl Fn(&T) -> PyNum) {
    items.sort_by(|a, b| value(b).py_cmp(value(a)));
}

/// `t / max(total, 1) * 100`.
fn percent(time: PyNum, total: PyNum) -> f64 {
    time.true_div(total.max_with_one()) * 100.0
}

const RULE: &str =
    "================================================================================";

/// The reference script's `report()`.
fn report(out: &mut String, summary: &CompatSummary, top_n: i64) {
    let total = summary.total_cuda_us;
    let _ = writeln!(out, "\n{RULE}");
    let _ = writeln!(out, " Total CUDA time in trace: {}", py::format_us(total));
    let _ = writeln!(out, "{RULE}");

    let mut buckets = bucket_totals(summary, PyNum::Int(0));
    let _ = writeln!(out, "\n Time by bucket (% of total CUDA):");
    let _ = writeln!(
        out,
        " {:40} {:>12} {:>8} {:>8}",
        "bucket", "time", "% total", "# calls"
    );
    let by_bucket = buckets.clone();
    sort_descending(&mut buckets, |b| b.1);
    for (bucket, time, count) in &buckets {
        let _ = writeln!(
            out,
            " {bucket:40} {:>12} {:>7.1}% {count:>8}",
            py::format_us(*time),
            percent(*time, total)
        );
    }

    let _ = writeln!(out, "\n Attention backend detection:");
    if summary.sdpa_hits.is_empty() {
        let _ = writeln!(
            out,
            " (未识别到 attention kernel——可能 kernel 名 encoded 或未走 SDPA)"
        );
    } else {
        // `max()` keeps the first maximal item.
        let mut winner = summary.sdpa_hits[0];
        for &hit in &summary.sdpa_hits[1..] {
            if hit.1.py_cmp(winner.1) == std::cmp::Ordering::Greater {
                winner = hit;
            }
        }
        let mut hits = summary.sdpa_hits.clone();
        sort_descending(&mut hits, |h| h.1);
        for (backend, time) in &hits {
            let marker = if *backend == winner.0 {
                " ← DOMINANT"
            } else {
                ""
            };
            let _ = writeln!(out, " {backend:20}: {:>12}{marker}", py::format_us(*time));
        }
        if winner.0 != rules::FLASH {
            let _ = writeln!(
                out,
                " ⚠️ Not using FlashAttention. Expected FA2 on A100 for hidden 128/heads 16 → suboptimal."
            );
            let _ = writeln!(
                out,
                " Fix: 训练里用 `torch.nn.attention.sdpa_kernel(SDPBackend.FLASH_ATTENTION)` context"
            );
        }
    }

    let _ = writeln!(out, "\n Top {top_n} CUDA ops:");
    let _ = writeln!(
        out,
        " {:>4} {:>12} {:>8} {:>8} name",
        "rank", "time", "% total", "# calls"
    );
    let mut sorted_ops: Vec<&CompatOp> = summary.ops.iter().collect();
    sort_descending(&mut sorted_ops, |op| op.time_us);
    let shown = py::python_prefix_len(sorted_ops.len(), top_n);
    for (idx, op) in sorted_ops[..shown].iter().enumerate() {
        let _ = writeln!(
            out,
            " {:>4} {:>12} {:>7.1}% {:>8} {}",
            idx + 1,
            py::format_us(op.time_us),
            percent(op.time_us, total),
            op.count,
            py::truncate_name(&op.name)
        );
    }

    let _ = writeln!(out, "\n{RULE}");
    let _ = writeln!(out, " 优化提示（按 bucket 比例）:");
    let _ = writeln!(out, "{RULE}");
    let share = |name: &str| {
        let time = by_bucket
            .iter()
            .find(|(b, _, _)| *b == name)
            .map_or(PyNum::Int(0), |b| b.1);
        percent(time, total)
    };
    let reduce_pct = share(rules::COLLECTIVE);
    if reduce_pct > 15.0 {
        let _ = writeln!(
            out,
            " ⚠️ reduce/collective 占 {reduce_pct:.1}%（>15% 算高）→ 考虑："
        );
        let _ = writeln!(
            out,
            " - `no_sync()` 包 gradient accumulation 减少 3× 冗余 all-reduce"
        );
        let _ = writeln!(
            out,
            " - FSDP: 用 ZeRO-2/3 拆 optimizer state 减少每次 sync 数据量"
        );
    }
    let elem_pct = share(rules::ELEMENTWISE);
    if elem_pct > 15.0 {
        let _ = writeln!(
            out,
            " ⚠️ elementwise 占 {elem_pct:.1}%（>15% 算高）→ memory bandwidth bound"
        );
        let _ = writeln!(
            out,
            " - Fused RMSNorm + SiLU + Add kernel（apex 或 triton）省 50%+"
        );
    }
    let mem_pct = share(rules::MEMORY);
    if mem_pct > 8.0 {
        let _ = writeln!(
            out,
            " ⚠️ memory movement 占 {mem_pct:.1}%（>8% 算高）→ 布局问题"
        );
        let _ = writeln!(
            out,
            " - 检查 permute/transpose/contiguous 频次，可能重复布局转换"
        );
    }
    let attn_pct = share(rules::ATTENTION);
    let matmul_pct = share(rules::GEMM);
    let _ = writeln!(
        out,
        "\n Matmul + Attention (核心 compute): {:.1}%",
        matmul_pct + attn_pct
    );
    let _ = writeln!(
        out,
        " 如果这个数 <50%，多数时间在做非核心 op → 有巨大优化空间"
    );
    let _ = writeln!(out, " Llama 3 训练里这个数一般 60-75%");
}
