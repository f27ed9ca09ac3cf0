//! Default mode: correct GPU accounting.
//!
//! Only GPU activities (kernels, memcpys, memsets) are counted, in integer nanoseconds.
//! Each is attributed to the CPU op that launched it ([`Capture::launching_op`]:
//! correlation id → runtime launch call → innermost `cpu_op` around that call on the
//! same thread, or the op with the same `External id`) and bucketed by the rules of
//! [`super::buckets`]: an ATen primitive's name when its kernels are of the kind it
//! names, else the kernel's class from the workspace table, else the op's or kernel's
//! name.
//! Every activity lands in exactly one bucket, so the buckets sum to the GPU time
//! exactly.
//!
//! The top-ops table groups GPU time by the launching CPU op's name (an activity with no
//! launching op is grouped under its own name, marked `[no op]`): that is the unit a
//! user changes in the model, and it gathers the many kernels one op launches.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use trace_model::{
    ActivityKind, Capture, HostEventId, KernelClass, Labelled, Nanos, Provenance, StringId,
};

use super::buckets::{self, OTHER};
use crate::Error;
use crate::percent::percent_of;

/// How an activity's bucket was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Basis {
    /// The launching op is an ATen primitive whose kernels are of the kind its name says
    /// (plus helpers: elementwise, reduction, copies): the op's name decided.
    AtenOp,
    /// The workspace's kernel classification (`trace_model::classify_kernel`) decided:
    /// the launching op is composite or custom, or launches kernels of several classes,
    /// or there is no launching op.
    KernelClass,
    /// The table could not place the kernel; the launching op's name decided.
    OpName,
    /// The table could not place the kernel and there is no usable op name; the
    /// kernel's own name decided.
    KernelName,
    /// Nothing decided: the activity is in `other`.
    Unclassified,
}

impl Basis {
    const ALL: [Basis; 5] = [
        Basis::AtenOp,
        Basis::KernelClass,
        Basis::OpName,
        Basis::KernelName,
        Basis::Unclassified,
    ];
}

/// GPU time in one bucket.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BucketRow {
    /// One of [`buckets::ALL`].
    pub bucket: &'static str,
    /// GPU time in the bucket, ns.
    pub time_ns: Nanos,
    /// Percent of the GPU time.
    pub percent: f64,
    /// GPU activities in the bucket.
    pub activities: u64,
}

/// GPU time of one attention backend, recognised by kernel name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BackendRow {
    /// The backend's name (`flash`, `mem_efficient`, …, or [`UNKNOWN_BACKEND`]).
    pub backend: &'static str,
    /// GPU time of its kernels, ns.
    pub time_ns: Nanos,
    /// Its kernels.
    pub activities: u64,
}

/// GPU time launched by one CPU op name (or of one activity name with no launching op).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LaunchingOpRow {
    /// The CPU op name (or the activity's own name, see `is_cpu_op`).
    pub name: String,
    /// False when no launching CPU op was found and `name` is the activity's own name.
    pub is_cpu_op: bool,
    /// GPU time launched by the op, ns.
    pub time_ns: Nanos,
    /// Percent of the GPU time.
    pub percent: f64,
    /// GPU activities launched by the op.
    pub activities: u64,
    /// The bucket most of this row's GPU time went to.
    pub bucket: &'static str,
    /// True when the row's GPU time went to more than one bucket.
    pub mixed: bool,
    /// Of `time_ns`, the layout transposes' (NCHW/NHWC conversions, batched transposes,
    /// im2col) that this op's convolution or GEMM needed, ns.
    pub layout_ns: Nanos,
}

/// GPU time and activity count per attribution basis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BasisRow {
    /// How the bucket was chosen.
    pub basis: Basis,
    /// GPU time bucketed that way, ns.
    pub time_ns: Nanos,
    /// Activities bucketed that way.
    pub activities: u64,
}

/// One diagnostic of the reader, as the trust list shows it: the workspace's one trust
/// type (code, message, count).
pub use trace_model::TrustItem;

/// Whether the capture trains or only runs the model, which decides which hints apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Phase {
    /// A backward pass or an optimizer step is in the capture.
    Training,
    /// Neither is: forward passes only (inference, or evaluation).
    Inference,
}

impl Phase {
    /// Inferred from host op names: autograd's `*Backward*` nodes and `aten::*_backward`
    /// ops, `Optimizer.step`, `zero_grad`, fused optimizer kernels' ops.
    pub fn of(capture: &Capture) -> Phase {
        let mut seen: HashMap<StringId, bool> = HashMap::new();
        let training = capture.host_events().iter().any(|e| {
            *seen.entry(e.name).or_insert_with(|| {
                let name = capture.name(e.name);
                name.contains("Backward")
                    || name.contains("_backward")
                    || name.starts_with("autograd::engine")
                    || name.starts_with("Optimizer.step")
                    || name.contains("Optimizer.zero_grad")
                    || name.starts_with("aten::_fused_adam")
            })
        });
        if training {
            Phase::Training
        } else {
            Phase::Inference
        }
    }

    /// The phase and why, as the report prints it.
    pub fn label(self) -> &'static str {
        match self {
            Phase::Training => "training (a backward pass or optimizer step is in the capture)",
            Phase::Inference => "inference (no backward pass and no optimizer step in the capture)",
        }
    }
}

/// The default-mode summary of one capture.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuSummary {
    /// The file the capture was read from, as given.
    pub file: String,
    /// The rank, from the trace's metadata or the file name.
    pub rank: Option<i64>,
    /// Sum of the durations of all GPU activities (streams that overlap count twice).
    pub gpu_time_ns: Nanos,
    /// Kernels in the capture.
    pub kernels: u64,
    /// Memcpys in the capture.
    pub memcpys: u64,
    /// Memsets in the capture.
    pub memsets: u64,
    /// Non-empty buckets, by GPU time descending (ties in [`buckets::ALL`] order).
    pub buckets: Vec<BucketRow>,
    /// GPU time and activities by how their bucket was chosen, in [`Basis`] order.
    pub attribution: Vec<BasisRow>,
    /// Backends of the attention bucket's activities, by GPU time descending; attention
    /// time whose kernel names say no backend is under `unknown`.
    pub attention_backends: Vec<BackendRow>,
    /// The backend with the most attention time (`unknown` included).
    pub dominant_backend: Option<&'static str>,
    /// When some attention time has no recognised backend: the largest such kernels
    /// (name, GPU time in ns), at most five.
    pub unknown_attention_kernels: Vec<(String, Nanos)>,
    /// Every op row, by GPU time descending (ties in first-launch order).
    pub ops: Vec<LaunchingOpRow>,
    /// Percent of GPU time in the GEMM, convolution and attention buckets together.
    pub core_compute_percent: f64,
    /// Training or inference, which decides which hints apply.
    pub phase: Phase,
    /// The reader's diagnostics, for the trust list.
    pub trust: Vec<TrustItem>,
}

/// The backend name for attention time whose kernels say none.
pub const UNKNOWN_BACKEND: &str = "unknown";
/// The backend name for attention done as separate kernels under the math SDPA op.
pub const MATH_BACKEND: &str = "math (unfused SDPA)";

/// Computes the default-mode summary of a loaded capture.
pub fn gpu_summary(capture: &Capture, file: &str, rank: Option<i64>) -> GpuSummary {
    // First pass: the kinds of kernel each launching op name launches, to tell ATen ops
    // of one meaning from those whose kernels fall into several kinds.
    // Layout transposes go to the convolution or GEMM op they serve: the launching op when
    // it is one, else the innermost such op around it (`aten::contiguous` under
    // `aten::convolution`).
    let layout_owner = layout_owners(capture);
    let op_of = |activity: &trace_model::GpuActivity| match activity.class {
        KernelClass::Layout => activity
            .launch()
            .and_then(|l| capture.host_event(l).parent_op())
            .and_then(|op| layout_owner.get(&op).copied())
            .map(|owner| capture.host_event(owner))
            .or_else(|| capture.launching_op(activity)),
        _ => capture.launching_op(activity),
    };
    let mut op_kinds: HashMap<StringId, u8> = HashMap::new();
    for activity in capture.activities() {
        if let Some(op) = op_of(activity) {
            let rule = buckets::of_aten_op(capture.name(op.name));
            *op_kinds.entry(op.name).or_default() |= buckets::kind_bit(activity.class, rule);
        }
    }

    let mut gpu_time = 0i64;
    let (mut kernels, mut memcpys, mut memsets) = (0u64, 0u64, 0u64);
    let mut bucket_time = [(0i64, 0u64); buckets::ALL.len()];
    let mut basis_time = Basis::ALL.map(|b| (b, 0i64, 0u64));
    let mut backend_time: Vec<(&'static str, i64, u64)> = Vec::new();
    let mut unknown_attention: HashMap<StringId, i64> = HashMap::new();
    // Op rows keyed by (name, is_cpu_op), in first-launch order (activities sorted by stream, start).
    let mut op_index: HashMap<(StringId, bool), usize> = HashMap::new();
    let mut op_rows: Vec<(StringId, bool, i64, u64, [i64; buckets::ALL.len()], i64)> = Vec::new();
    let mut decided: HashMap<(StringId, Option<StringId>, KernelClass), (&'static str, Basis)> =
        HashMap::new();

    for activity in capture.activities() {
        let dur = activity.dur.0;
        gpu_time = gpu_time.saturating_add(dur);
        match activity.kind {
            ActivityKind::Kernel => kernels += 1,
            ActivityKind::Memcpy => memcpys += 1,
            ActivityKind::Memset => memsets += 1,
            _ => {}
        }
        let op = op_of(activity);
        let (bucket, basis) = *decided
            .entry((activity.name, op.map(|o| o.name), activity.class))
            .or_insert_with(|| {
                let kernel_name = capture.name(activity.name);
                let op_name = op.map(|o| capture.name(o.name));
                let aten_rule = op_name.and_then(buckets::of_aten_op);
                let mixed = |rule| op.is_some_and(|o| buckets::is_mixed(rule, op_kinds[&o.name]));
                if let Some(rule) = aten_rule.filter(|&rule| !mixed(rule)) {
                    (rule, Basis::AtenOp)
                } else if let Some(bucket) = buckets::of_class(activity.class, kernel_name) {
                    (bucket, Basis::KernelClass)
                } else if let Some(rule) = op_name.and_then(buckets::of_op_name) {
                    (rule, Basis::OpName)
                } else if let Some(rule) = buckets::of_name(kernel_name) {
                    (rule, Basis::KernelName)
                } else {
                    (OTHER, Basis::Unclassified)
                }
            });
        let bucket_idx = buckets::index(bucket);
        bucket_time[bucket_idx].0 = bucket_time[bucket_idx].0.saturating_add(dur);
        bucket_time[bucket_idx].1 += 1;
        let basis_row = basis_time
            .iter_mut()
            .find(|(b, _, _)| *b == basis)
            .expect("invariant: every basis has a row");
        basis_row.1 = basis_row.1.saturating_add(dur);
        basis_row.2 += 1;

        if bucket == buckets::ATTENTION {
            let under_math = op.is_some_and(|o| capture.name(o.name) == buckets::MATH_SDPA_OP);
            let backend = if under_math {
                Some(MATH_BACKEND)
            } else {
                buckets::attention_backend(capture.name(activity.name))
            };
            let backend = backend.unwrap_or_else(|| {
                let time = unknown_attention.entry(activity.name).or_default();
                *time = time.saturating_add(dur);
                UNKNOWN_BACKEND
            });
            match backend_time.iter_mut().find(|(b, _, _)| *b == backend) {
                Some(row) => {
                    row.1 = row.1.saturating_add(dur);
                    row.2 += 1;
                }
                None => backend_time.push((backend, dur, 1)),
            }
        }

        let key = match op {
            Some(op) => (op.name, true),
            None => (activity.name, false),
        };
        let slot = *op_index.entry(key).or_insert_with(|| {
            op_rows.push((key.0, key.1, 0, 0, [0; buckets::ALL.len()], 0));
            op_rows.len() - 1
        });
        let row = &mut op_rows[slot];
        row.2 = row.2.saturating_add(dur);
        row.3 += 1;
        row.4[bucket_idx] = row.4[bucket_idx].saturating_add(dur);
        if activity.class == KernelClass::Layout && op.is_some() {
            row.5 = row.5.saturating_add(dur);
        }
    }

    let percent = |time: i64| percent_of(time, gpu_time);
    let mut bucket_rows: Vec<BucketRow> = buckets::ALL
        .iter()
        .zip(bucket_time)
        .filter(|(_, (_, count))| *count > 0)
        .map(|(&bucket, (time_ns, activities))| BucketRow {
            bucket,
            time_ns: Nanos(time_ns),
            percent: percent(time_ns),
            activities,
        })
        .collect();
    bucket_rows.sort_by_key(|b| Reverse(b.time_ns));

    let attention_backends = backend_rows(&backend_time);
    let dominant_backend = attention_backends.first().map(|b| b.backend);
    let unknown_attention_kernels = top_unknown_attention(capture, unknown_attention);

    let mut ops: Vec<LaunchingOpRow> = op_rows
        .into_iter()
        .map(
            |(name, is_cpu_op, time_ns, activities, per_bucket, layout_ns)| {
                // The first bucket (in ALL order) with the most time.
                let mut best = 0;
                for (idx, &t) in per_bucket.iter().enumerate() {
                    if t > per_bucket[best] {
                        best = idx;
                    }
                }
                LaunchingOpRow {
                    name: capture.name(name).to_owned(),
                    is_cpu_op,
                    time_ns: Nanos(time_ns),
                    percent: percent(time_ns),
                    activities,
                    bucket: buckets::ALL[best],
                    mixed: per_bucket.iter().filter(|&&t| t > 0).count() > 1,
                    layout_ns: Nanos(layout_ns),
                }
            },
        )
        .collect();
    ops.sort_by_key(|op| Reverse(op.time_ns));

    let share = |bucket: &str| {
        bucket_rows
            .iter()
            .find(|b| b.bucket == bucket)
            .map_or(0, |b| b.time_ns.0)
    };
    let core_compute_percent =
        percent(share(buckets::GEMM) + share(buckets::CONVOLUTION) + share(buckets::ATTENTION));
    let trust = capture
        .diagnostics()
        .iter()
        .map(|d| TrustItem::new(d.code, d.message.clone(), d.count))
        .collect();

    GpuSummary {
        file: file.to_owned(),
        rank,
        gpu_time_ns: Nanos(gpu_time),
        kernels,
        memcpys,
        memsets,
        buckets: bucket_rows,
        attribution: basis_time
            .iter()
            .map(|&(basis, time_ns, activities)| BasisRow {
                basis,
                time_ns: Nanos(time_ns),
                activities,
            })
            .collect(),
        attention_backends,
        dominant_backend,
        unknown_attention_kernels,
        ops,
        core_compute_percent,
        phase: Phase::of(capture),
        trust,
    }
}

/// The attention backends by their GPU time, most first.
fn backend_rows(backend_time: &[(&'static str, i64, u64)]) -> Vec<BackendRow> {
    let mut rows: Vec<BackendRow> = backend_time
        .iter()
        .map(|&(backend, time_ns, activities)| BackendRow {
            backend,
            time_ns: Nanos(time_ns),
            activities,
        })
        .collect();
    rows.sort_by_key(|b| Reverse(b.time_ns));
    rows
}

/// The five attention kernels of no known backend with the most GPU time, by name.
fn top_unknown_attention(
    capture: &Capture,
    unknown_attention: HashMap<StringId, i64>,
) -> Vec<(String, Nanos)> {
    let mut kernels: Vec<(String, Nanos)> = unknown_attention
        .into_iter()
        .map(|(name, t)| (capture.name(name).to_owned(), Nanos(t)))
        .collect();
    kernels.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    kernels.truncate(5);
    kernels
}

/// Loads the trace at `path` and summarises it (the first capture of an export that holds
/// several processes; see [`load::load`]).
pub fn gpu_summary_of_file(path: &Path) -> Result<GpuSummary, Error> {
    let loaded = load::load(path)?;
    let first = loaded.first().ok_or_else(|| load::Error::NoCapture {
        path: path.to_path_buf(),
    })?;
    // A Chrome trace file's name gives its rank even when the trace does not say it is
    // one of several (as the original script labels files).
    let chrome = matches!(
        first.format(),
        trace_model::Format::KinetoJson
            | trace_model::Format::JaxTraceJson
            | trace_model::Format::OtherJson
    );
    let rank = first.rank.or_else(|| {
        chrome
            .then(|| load::chrome::rank_from_file_name(path))
            .flatten()
    });
    Ok(gpu_summary(&first.capture, &path.to_string_lossy(), rank))
}

/// One hint: it fires when `bucket`'s share of GPU time exceeds `threshold` percent,
/// with advice for the capture's [`Phase`] (`None`: nothing to say for that phase).
#[derive(Debug, Clone, Copy)]
pub struct Hint {
    /// The bucket whose share is compared.
    pub bucket: &'static str,
    /// The share, in percent, above which the hint fires.
    pub threshold: f64,
    /// Advice for a training capture.
    pub training: Option<&'static str>,
    /// Advice for an inference capture.
    pub inference: Option<&'static str>,
}

/// The reference script's thresholds, with advice that fits the phase: training-only knobs
/// (`no_sync`, optimizer-state sharding) never reach an inference capture.
pub const HINTS: &[Hint] = &[
    Hint {
        bucket: buckets::COMMUNICATION,
        threshold: 15.0,
        training: Some(
            "communication is high (> 15 %): wrap gradient accumulation in `no_sync()` to avoid redundant all-reduces; with FSDP, ZeRO-2/3 shards optimizer state so each sync moves less; check that gradient all-reduces overlap the backward pass. Collective kernel time includes waiting for peers, so a slow rank inflates it on every other rank.",
        ),
        inference: Some(
            "communication is high (> 15 %): check the parallel layout (tensor- vs expert-parallel degree for the batch size), whether communication overlaps compute (e.g. two micro-batches in flight), and the all-reduce implementation for small messages (custom or symmetric-memory all-reduce). Collective kernel time includes waiting for peers.",
        ),
    },
    Hint {
        bucket: buckets::ELEMENTWISE,
        threshold: 15.0,
        training: Some(
            "elementwise is high (> 15 %), which is memory-bandwidth bound: fuse norm, activation and residual chains (torch.compile, or fused kernels) so each tensor makes fewer round trips through memory; the top-ops table shows which ops to start with",
        ),
        inference: Some(
            "elementwise is high (> 15 %), which is memory-bandwidth bound: fuse norm, activation, residual and quantisation steps (torch.compile, or the serving engine's fused kernels); at small batch sizes, CUDA graphs also remove the launch gaps between these short kernels",
        ),
    },
    Hint {
        bucket: buckets::MEMORY,
        threshold: 8.0,
        training: Some(
            "memory movement is high (> 8 %), a layout problem: check how often permute/transpose/contiguous/copy run; layouts may be converted back and forth",
        ),
        inference: Some(
            "memory movement is high (> 8 %): check host-device copies per step (inputs, sampled tokens) and layout conversions; KV-cache copies and dtype casts show here too",
        ),
    },
];

/// What the hints rest on (their label is `inferred`).
pub const HINTS_RULE: &str = "the original script's thresholds over shares of GPU time: \
     a bucket over its threshold (`HINTS`) fires its advice for the phase";

/// The hints that apply to a summary: `(bucket, percent, text)`, labelled by the rule
/// they come from ([`HINTS_RULE`], `inferred`).
pub fn hints(summary: &GpuSummary) -> Labelled<Vec<(&'static str, f64, &'static str)>> {
    let fired = HINTS
        .iter()
        .filter_map(|hint| {
            let text = match summary.phase {
                Phase::Training => hint.training,
                Phase::Inference => hint.inference,
            }?;
            let pct = summary
                .buckets
                .iter()
                .find(|b| b.bucket == hint.bucket)
                .map_or(0.0, |b| b.percent);
            (pct > hint.threshold).then_some((hint.bucket, pct, text))
        })
        .collect();
    Labelled::new(fired, Provenance::inferred(HINTS_RULE))
}

/// Runs default mode over `files` (one, or every rank with `--all-ranks`): one summary
/// per file. `report::bucket_text` renders them.
/// Summarises every file: with several, a file that cannot be read is left out and its
/// error kept (the second list) unless none can be read; one file's error is the error.
pub(super) fn run(files: &[PathBuf]) -> Result<(Vec<GpuSummary>, Vec<String>), Error> {
    let mut summaries = Vec::new();
    let mut failed = Vec::new();
    for path in files {
        match gpu_summary_of_file(path) {
            Ok(s) => summaries.push(s),
            Err(e) if files.len() == 1 => return Err(e),
            Err(e) => failed.push(e),
        }
    }
    if summaries.is_empty() && !failed.is_empty() {
        return Err(failed.remove(0));
    }
    Ok((
        summaries,
        failed.iter().map(|e| crate::error_chain(e)).collect(),
    ))
}

/// For each CPU op that launched a layout transpose, the convolution or GEMM op it serves:
/// itself when it is one, else the innermost such op around it on its thread. Empty when
/// the capture has no layout transposes.
fn layout_owners(capture: &Capture) -> HashMap<HostEventId, HostEventId> {
    let launching: std::collections::HashSet<HostEventId> = capture
        .activities()
        .iter()
        .filter(|a| a.class == KernelClass::Layout)
        .filter_map(|a| capture.host_event(a.launch()?).parent_op())
        .collect();
    let mut owners = HashMap::new();
    if launching.is_empty() {
        return owners;
    }
    let serves = |name: &str| {
        matches!(
            buckets::of_aten_op(name),
            Some(buckets::CONVOLUTION | buckets::GEMM)
        ) || name.to_ascii_lowercase().contains("convolution")
    };
    // CPU ops by thread, start, outermost first; per thread, the enclosing ops with the
    // innermost serving op at or above each.
    let mut ops: Vec<(
        trace_model::ThreadId,
        Nanos,
        std::cmp::Reverse<Nanos>,
        usize,
    )> = capture
        .host_events()
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind == trace_model::HostKind::CpuOp)
        .map(|(i, e)| (e.thread, e.start, std::cmp::Reverse(e.end()), i))
        .collect();
    ops.sort_unstable();
    let mut stack: Vec<(Nanos, Option<HostEventId>)> = Vec::new();
    let mut thread = None;
    for (t, start, std::cmp::Reverse(end), index) in ops {
        if thread != Some(t) {
            thread = Some(t);
            stack.clear();
        }
        while stack.last().is_some_and(|(top_end, _)| *top_end <= start) {
            stack.pop();
        }
        let id = HostEventId::new(index as u32);
        let owner = if serves(capture.name(capture.host_event(id).name)) {
            Some(id)
        } else {
            stack.last().and_then(|(_, o)| *o)
        };
        if let Some(owner) = owner.filter(|_| launching.contains(&id)) {
            owners.insert(id, owner);
        }
        stack.push((end, owner));
    }
    owners
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
        assert_eq!(s.gpu_time_ns, Nanos(53_500));
        assert_eq!(
            s.buckets.iter().map(|b| b.time_ns).sum::<Nanos>(),
            s.gpu_time_ns
        );
        let bucket = |name: &str| {
            s.buckets
                .iter()
                .find(|b| b.bucket == name)
                .map(|b| b.time_ns)
        };
        assert_eq!(bucket(buckets::GEMM), Some(Nanos(40_500)));
        assert_eq!(bucket(buckets::MEMORY), Some(Nanos(3_000)));
        assert_eq!(bucket(buckets::COMMUNICATION), Some(Nanos(10_000)));
        let basis = |b: Basis| {
            s.attribution
                .iter()
                .find(|r| r.basis == b)
                .map(|r| r.activities)
        };
        assert_eq!(basis(Basis::AtenOp), Some(2));
        assert_eq!(basis(Basis::KernelClass), Some(1));
        assert_eq!(basis(Basis::OpName), Some(0));
        assert_eq!(s.ops[0].name, "aten::addmm");
        assert!(s.ops[0].is_cpu_op);
        assert_eq!(s.ops[1].name, "ncclKernel_AllReduce_RING_LL_Sum_float");
        assert!(!s.ops[1].is_cpu_op);
        assert!((s.core_compute_percent - 40_500.0 / 53_500.0 * 100.0).abs() < 1e-9);
        // No backward pass: inference advice, never `no_sync`.
        assert_eq!(s.phase, Phase::Inference);
        let fired = hints(&s);
        assert_eq!(fired.provenance.word(), "inferred");
        let fired = fired.value;
        assert!(fired.iter().any(|h| h.0 == buckets::COMMUNICATION));
        assert!(fired.iter().all(|h| !h.2.contains("no_sync")));
    }

    #[test]
    fn an_empty_trace_has_no_buckets_and_no_nan() {
        let s = summary_of(r#"{"traceEvents": []}"#);
        assert_eq!(s.gpu_time_ns, Nanos::ZERO);
        assert!(s.buckets.is_empty());
        assert_eq!(s.core_compute_percent, 0.0);
    }
}
