//! Holistic Trace Analysis' analyses, natively, with HTA 0.5.0's definitions (read from
//! `hta/analyzers/*.py`; see `docs/differences.md` for where ours differ). Each function
//! takes timelines already passed through [`Timeline::into_hta_view`]. Times are
//! integer nanoseconds inside; results carry microseconds, as HTA's frames do.
//!
//! Kernel classes here are HTA's own (`hta/utils/utils.py` `get_kernel_type`:
//! `^nccl.*Kernel` communication, `^Memcpy|^Memset|^dma` memory, names containing `Sync`
//! other, the rest computation), not `trace_model::classify_kernel`, so that the numbers
//! can equal HTA's; the tool shows our classes beside them.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::timeline::{Gpu, GpuKind, HostCat, Timeline};

pub use crate::hta_aten::{AtenLaunch, AtenLaunchError, aten_launches, is_aten_kernel_launch};

/// HTA's kernel type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum HtaKernelType {
    /// Every kernel not in the other classes.
    Computation,
    /// `nccl…Kernel…` names: collectives and point-to-point transfers.
    Communication,
    /// Names starting with `Memcpy`, `Memset` or `dma`.
    Memory,
    /// Names containing `Sync` (or `Memcpy`/`Memset` not at the start).
    Other,
}

impl HtaKernelType {
    /// The upper-case name HTA's frames use (`COMPUTATION`, …).
    pub fn label(self) -> &'static str {
        match self {
            HtaKernelType::Computation => "COMPUTATION",
            HtaKernelType::Communication => "COMMUNICATION",
            HtaKernelType::Memory => "MEMORY",
            HtaKernelType::Other => "OTHER",
        }
    }
}

/// The kernel types HTA's kernel breakdown analyses, in its order (memory last: it is
/// left out with `include_memory_kernels=False`).
pub const HTA_TYPES: [HtaKernelType; 3] = [
    HtaKernelType::Computation,
    HtaKernelType::Communication,
    HtaKernelType::Memory,
];

/// `get_kernel_type` of HTA 0.5.0.
pub fn hta_kernel_type(name: &str) -> HtaKernelType {
    if name.starts_with("nccl") && name[4..].contains("Kernel") {
        HtaKernelType::Communication
    } else if name.starts_with("Memcpy") || name.starts_with("Memset") || name.starts_with("dma") {
        HtaKernelType::Memory
    } else if name.contains("Sync") || name.contains("Memcpy") || name.contains("Memset") {
        HtaKernelType::Other
    } else {
        HtaKernelType::Computation
    }
}

fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

fn round_to(v: f64, digits: i32) -> f64 {
    let m = 10f64.powi(digits);
    (v * m).round() / m
}

/// Merged intervals, sorted.
pub(crate) fn merge(mut iv: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    iv.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(iv.len());
    for (s, e) in iv {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

fn length(u: &[(i64, i64)]) -> i64 {
    u.iter().map(|(s, e)| e - s).sum()
}

fn intersection(a: &[(i64, i64)], b: &[(i64, i64)]) -> i64 {
    let (mut i, mut j, mut total) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let s = a[i].0.max(b[j].0);
        let e = a[i].1.min(b[j].1);
        if e > s {
            total += e - s;
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    total
}

fn kind_of(t: &Timeline, g: &Gpu) -> HtaKernelType {
    t.hta_type(g.name)
}

/// The rows HTA 0.5.0's temporal, kernel-type, per-kernel and overlap breakdowns take as
/// GPU work: every row of its frame whose `stream` is not −1 (`trace_df["stream"].ne(-1)`,
/// not its GPU filter): the GPU activities but the synchronisation events on no stream
/// (`Event Sync`, `Context Sync`), and the host events with a stream that its GPU filter
/// leaves out ([`Timeline::stream_host`], a Triton `cpu_op` without a correlation id).
pub fn stream_rows(t: &Timeline) -> impl Iterator<Item = &Gpu> {
    (t.gpu.iter().filter(|g| g.stream != -1)).chain(t.stream_host.iter())
}

/// The merged busy intervals (ns, in start order) of each of `classes` over
/// [`stream_rows`], as HTA's `merge_kernel_intervals` merges them (touching intervals join).
pub fn kernel_type_intervals(
    t: &Timeline,
    classes: &[HtaKernelType],
) -> Vec<(HtaKernelType, Vec<(i64, i64)>)> {
    classes
        .iter()
        .map(|&class| {
            let rows = stream_rows(t).filter(|g| kind_of(t, g) == class);
            (class, merge(rows.map(|g| (g.start, g.end)).collect()))
        })
        .collect()
}

/// Temporal breakdown of one rank (`get_temporal_breakdown`).
#[derive(Debug, Clone, Serialize)]
pub struct Temporal {
    /// The rank of the trace, when known.
    pub rank: Option<i64>,
    /// Time in the span with no GPU activity, in µs (HTA's `idle_time(us)`).
    pub idle_us: f64,
    /// Union of the COMPUTATION kernels' time, in µs (`compute_time(us)`).
    pub compute_us: f64,
    /// Busy time that is not computation (communication, memory, other), in µs
    /// (`non_compute_time(us)`).
    pub non_compute_us: f64,
    /// The span: first start to last end of the rank's GPU activities, in µs
    /// (`kernel_time(us)`).
    pub kernel_time_us: f64,
    /// `idle_us` / `kernel_time_us`, in %, 2 decimals (`idle_time_pctg`).
    pub idle_pct: f64,
    /// `compute_us` / `kernel_time_us`, in %, 2 decimals (`compute_time_pctg`).
    pub compute_pct: f64,
    /// `non_compute_us` / `kernel_time_us`, in %, 2 decimals (`non_compute_time_pctg`).
    pub non_compute_pct: f64,
}

/// span = last end − first start of all GPU activities; idle = span − union(all);
/// compute = union(COMPUTATION); non-compute = the rest.
pub fn temporal(t: &Timeline) -> Option<Temporal> {
    let all = merge(stream_rows(t).map(|g| (g.start, g.end)).collect());
    let span = all.last()?.1 - all.first()?.0;
    let idle = span - length(&all);
    let comp = length(&merge(
        stream_rows(t)
            .filter(|g| kind_of(t, g) == HtaKernelType::Computation)
            .map(|g| (g.start, g.end))
            .collect(),
    ));
    let non = span - comp - idle;
    let pct = |v: i64| {
        if span > 0 {
            round_to(100.0 * v as f64 / span as f64, 2)
        } else {
            0.0
        }
    };
    Some(Temporal {
        rank: t.rank,
        idle_us: us(idle),
        compute_us: us(comp),
        non_compute_us: us(non),
        kernel_time_us: us(span),
        idle_pct: pct(idle),
        compute_pct: pct(comp),
        non_compute_pct: pct(non),
    })
}

/// One row of the kernel-type breakdown over all ranks (`get_gpu_kernel_breakdown`,
/// `include_memory_kernels=True`): union time per class, overlaps as classes of their own.
#[derive(Debug, Clone, Serialize)]
pub struct KernelTypeRow {
    /// A class label (`COMPUTATION`, …) or several joined by ` overlapping `.
    pub kernel_type: String,
    /// Time during which exactly these classes run, summed over the ranks, in µs (`sum`).
    pub sum_us: f64,
    /// `sum_us` over the sum of all rows, in %, 1 decimal (`percentage`).
    pub percentage: f64,
}

/// The classes are COMPUTATION, COMMUNICATION and MEMORY, in HTA's order, and an instant
/// covered by several is named "A overlapping B" in that order.
pub fn kernel_type_breakdown(ts: &[Timeline]) -> Vec<KernelTypeRow> {
    kernel_type_breakdown_of(ts, true)
}

/// [`kernel_type_breakdown`] over COMPUTATION and COMMUNICATION, and MEMORY when
/// `include_memory` (HTA's `include_memory_kernels`): without it, memory kernels are left
/// out of the time and of the overlaps.
pub fn kernel_type_breakdown_of(ts: &[Timeline], include_memory: bool) -> Vec<KernelTypeRow> {
    let classes = &HTA_TYPES[..if include_memory { 3 } else { 2 }];
    let mut sums: BTreeMap<u8, i64> = BTreeMap::new();
    for t in ts {
        let mut points: Vec<(i64, i8, u8)> = Vec::new();
        for (bit, (_, u)) in kernel_type_intervals(t, classes).into_iter().enumerate() {
            for (s, e) in u {
                points.push((s, 1, 1 << bit));
                points.push((e, -1, 1 << bit));
            }
        }
        points.sort_by_key(|p| p.0);
        let mut running: u8 = 0;
        for w in 0..points.len() {
            let (time, dir, bit) = points[w];
            if dir > 0 {
                running |= bit;
            } else {
                running &= !bit;
            }
            if let Some(next) = points.get(w + 1)
                && running > 0
                && next.0 > time
            {
                *sums.entry(running).or_default() += next.0 - time;
            }
        }
    }
    let total: i64 = sums.values().sum();
    let mut rows: Vec<KernelTypeRow> = sums
        .into_iter()
        .map(|(mask, sum)| {
            let label = classes
                .iter()
                .enumerate()
                .filter(|(bit, _)| mask & (1 << bit) != 0)
                .map(|(_, c)| c.label())
                .collect::<Vec<_>>()
                .join(" overlapping ");
            KernelTypeRow {
                kernel_type: label,
                sum_us: us(sum),
                percentage: if total > 0 {
                    round_to(100.0 * sum as f64 / total as f64, 1)
                } else {
                    0.0
                },
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.sum_us
            .total_cmp(&a.sum_us)
            .then(a.kernel_type.cmp(&b.kernel_type))
    });
    rows
}

/// Per kernel name and rank: count, sum, max, min, mean, sample standard deviation.
#[derive(Debug, Clone, Serialize)]
pub struct KernelStatsRow {
    /// The rank of the trace, when known.
    pub rank: Option<i64>,
    /// The kernel's (or memcpy/memset's) name, as in the trace.
    pub name: String,
    /// HTA's class of the name ([`hta_kernel_type`]).
    pub kernel_type: HtaKernelType,
    /// `trace_model::classify_kernel`'s class, beside HTA's type.
    pub our_class: String,
    /// Activities with this name on this rank.
    pub count: usize,
    /// Their summed duration, in µs.
    pub sum_us: f64,
    /// The longest, in µs.
    pub max_us: f64,
    /// The shortest, in µs.
    pub min_us: f64,
    /// `sum_us` / `count`, in µs.
    pub mean_us: f64,
    /// Sample standard deviation (n − 1) of the durations, in µs; 0 for a single call.
    pub std_us: f64,
}

/// Every kernel name of every rank (HTA folds the tail into "others"; we keep them all),
/// sorted by rank, then by total time.
pub fn kernel_breakdown(ts: &[Timeline]) -> Vec<KernelStatsRow> {
    kernel_stats(ts, |name| {
        format!("{:?}", trace_model::classify_kernel(name))
    })
}

/// [`kernel_breakdown`] without our class of each name (`our_class` empty), for the HTA
/// drop-in, which shows HTA's types only: `classify_kernel` of every long kernel name was
/// most of the call's time.
pub fn kernel_breakdown_hta(ts: &[Timeline]) -> Vec<KernelStatsRow> {
    kernel_stats(ts, |_| String::new())
}

fn kernel_stats(ts: &[Timeline], our_class: impl Fn(&str) -> String) -> Vec<KernelStatsRow> {
    let mut rows = Vec::new();
    for t in ts {
        let mut by: HashMap<u32, Vec<i64>> = HashMap::new();
        for g in stream_rows(t) {
            by.entry(g.name).or_default().push(g.end - g.start);
        }
        let mut rank_rows: Vec<KernelStatsRow> = by
            .into_iter()
            .map(|(name, durs)| {
                let n = durs.len();
                let sum: i64 = durs.iter().sum();
                let mean = sum as f64 / n as f64;
                let var = if n > 1 {
                    durs.iter().map(|d| (*d as f64 - mean).powi(2)).sum::<f64>() / (n - 1) as f64
                } else {
                    0.0
                };
                let nm = t.name(name);
                KernelStatsRow {
                    rank: t.rank,
                    name: nm.to_owned(),
                    kernel_type: t.hta_type(name),
                    our_class: our_class(nm),
                    count: n,
                    sum_us: us(sum),
                    max_us: us(*durs.iter().max().unwrap_or(&0)),
                    min_us: us(*durs.iter().min().unwrap_or(&0)),
                    mean_us: mean / 1000.0,
                    std_us: var.sqrt() / 1000.0,
                }
            })
            .collect();
        rank_rows.sort_by(|a, b| b.sum_us.total_cmp(&a.sum_us).then(a.name.cmp(&b.name)));
        rows.extend(rank_rows);
    }
    rows
}

/// Idle time of one stream by HTA's category (`get_idle_time_breakdown`).
#[derive(Debug, Clone, Serialize)]
pub struct IdleRow {
    /// The rank of the trace, when known.
    pub rank: Option<i64>,
    /// The CUDA stream (`args.stream`).
    pub stream: i64,
    /// Gaps whose next activity was launched after the previous one ended: the GPU waited
    /// for the host, in µs (HTA's `host wait`).
    pub host_wait_us: f64,
    /// Gaps shorter than the threshold whose activity was already launched: the delay
    /// between queued kernels, in µs (`kernel wait`).
    pub kernel_wait_us: f64,
    /// The remaining gaps, in µs (`other`).
    pub other_us: f64,
    /// Each category / the stream's idle time, rounded to 2 decimals like HTA's
    /// `idle_time_ratio`.
    pub host_wait_ratio: f64,
    /// `kernel_wait_us` / the stream's idle time, 0–1, 2 decimals.
    pub kernel_wait_ratio: f64,
    /// `other_us` / the stream's idle time, 0–1, 2 decimals.
    pub other_ratio: f64,
    /// Gaps between consecutive activities of the stream (activities − 1).
    pub gaps: usize,
    /// Gaps in each category (host wait, kernel wait, other), as HTA groups them: the
    /// stream's first activity, which has no gap, counts in `other`. Not serialized (the
    /// Python package's HTA frames list the categories that have activities).
    #[serde(skip)]
    pub category_counts: [usize; 3],
    /// Start of the stream's first activity, in ns. Not serialized.
    #[serde(skip)]
    pub first_start_ns: i64,
    /// The least event index of the stream's activities: HTA lists streams in this order.
    /// Not serialized.
    #[serde(skip)]
    pub first_index: i64,
}

/// HTA's idle category of a gap between two activities of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleCategory {
    /// The next activity was launched after the previous one ended (`host wait`).
    HostWait = 0,
    /// Launched in time, and shorter than the threshold (`kernel wait`).
    KernelWait = 1,
    /// The rest (`other`).
    Other = 2,
}

/// The gaps of one stream ([`idle_gaps`]).
#[derive(Debug, Clone)]
pub struct StreamGaps {
    /// The CUDA stream (`args.stream`).
    pub stream: i64,
    /// Start of its first activity, in ns.
    pub first_start_ns: i64,
    /// The least event index of its activities: HTA lists streams in the order they first
    /// appear in its frame, the file's order.
    pub first_index: i64,
    /// (category, gap in ns) between consecutive activities, in start order.
    pub gaps: Vec<(IdleCategory, i64)>,
}

/// Every gap of every stream that has activities, in stream order, by the rule of
/// [`idle_breakdown`].
pub fn idle_gaps(t: &Timeline, consecutive_kernel_delay_us: i64) -> Vec<StreamGaps> {
    let mut streams: BTreeMap<i64, Vec<&Gpu>> = BTreeMap::new();
    // HTA's idle time is of kernels, memcpy and memset (by category), not of the other
    // events its view counts as GPU work.
    for g in t.gpu.iter().filter(|g| g.kind != GpuKind::Other) {
        streams.entry(g.stream).or_default().push(g);
    }
    streams
        .into_iter()
        .filter_map(|(stream, acts)| {
            let first = acts.first()?.start;
            let gaps = acts
                .windows(2)
                .map(|w| {
                    let (p, a) = (w[0], w[1]);
                    let gap = a.start - p.end;
                    let rt = match a.launch {
                        Some(l) => Some(t.host[l].start),
                        None => t.first_event_ts,
                    };
                    let category = if rt.is_some_and(|r| r > p.end) {
                        IdleCategory::HostWait
                    } else if gap < consecutive_kernel_delay_us * 1000 {
                        IdleCategory::KernelWait
                    } else {
                        IdleCategory::Other
                    };
                    (category, gap)
                })
                .collect();
            let first_index = acts.iter().map(|g| g.event_index).min().unwrap_or(0);
            Some(StreamGaps {
                stream,
                first_start_ns: first,
                first_index,
                gaps,
            })
        })
        .collect()
}

/// Per stream, in start order: gap = start − previous end. Host wait when the launch's
/// start is after the previous end; else kernel wait when the gap is under
/// `consecutive_kernel_delay_us` (HTA's default 30, in µs, though its docs say ns); else
/// other. A launchless activity is compared with the file's first event (HTA joins it to
/// row 0). The first activity of a stream has no gap.
pub fn idle_breakdown(t: &Timeline, consecutive_kernel_delay_us: i64) -> Vec<IdleRow> {
    let mut out = Vec::new();
    for StreamGaps {
        stream,
        first_start_ns,
        first_index,
        gaps,
    } in idle_gaps(t, consecutive_kernel_delay_us)
    {
        let (mut host, mut kernel, mut other) = (0i64, 0i64, 0i64);
        // The first activity has no gap; HTA puts it in `other` with a NaN interval.
        let mut counts = [0, 0, 1];
        for &(category, gap) in &gaps {
            match category {
                IdleCategory::HostWait => host += gap,
                IdleCategory::KernelWait => kernel += gap,
                IdleCategory::Other => other += gap,
            }
            counts[category as usize] += 1;
        }
        let total = host + kernel + other;
        let ratio = |v: i64| {
            if total != 0 {
                round_to(v as f64 / total as f64, 2)
            } else {
                0.0
            }
        };
        out.push(IdleRow {
            rank: t.rank,
            stream,
            host_wait_us: us(host),
            kernel_wait_us: us(kernel),
            other_us: us(other),
            host_wait_ratio: ratio(host),
            kernel_wait_ratio: ratio(kernel),
            other_ratio: ratio(other),
            gaps: gaps.len(),
            category_counts: counts,
            first_start_ns,
            first_index,
        });
    }
    out
}

/// Communication/computation overlap of one rank (`get_comm_comp_overlap`).
#[derive(Debug, Clone, Serialize)]
pub struct Overlap {
    /// The rank of the trace, when known.
    pub rank: Option<i64>,
    /// Union of the communication kernels' time, in µs (memcpy/memset not counted).
    pub comm_us: f64,
    /// The part of `comm_us` during which a computation kernel also runs, in µs.
    pub overlapped_us: f64,
    /// union(comm) ∩ union(comp) / union(comm), in %, 2 decimals.
    pub overlap_pct: f64,
}

/// Communication kernels against computation kernels, by HTA's type of their names over
/// [`stream_rows`] (memcpy and memset, of type memory, are left out, as in HTA).
pub fn overlap(t: &Timeline) -> Overlap {
    let of = |k: HtaKernelType| {
        merge(
            stream_rows(t)
                .filter(|g| kind_of(t, g) == k)
                .map(|g| (g.start, g.end))
                .collect(),
        )
    };
    let comm = of(HtaKernelType::Communication);
    let comp = of(HtaKernelType::Computation);
    let c = length(&comm);
    let both = intersection(&comm, &comp);
    Overlap {
        rank: t.rank,
        comm_us: us(c),
        overlapped_us: us(both),
        overlap_pct: if c > 0 {
            round_to(100.0 * both as f64 / c as f64, 2)
        } else {
            0.0
        },
    }
}

/// Straggler detection (`get_potential_stragglers`, `find_stragglers_with_late_start_comm_kernels`).
#[derive(Debug, Clone, Serialize)]
pub struct Stragglers {
    /// The ranks HTA returns: counted most often among each step's latest, ties in rank
    /// order (see `top_ranks`).
    pub ranks: Vec<i64>,
    /// The (stream, kernel) whose duration differs most across ranks: the metric's kernel.
    pub stream: i64,
    /// That kernel's name (an `ncclKernel…`).
    pub kernel: String,
    /// Per rank: the metric, the normalised start of the last long such kernel.
    pub metric: Vec<(i64, f64)>,
    /// Per rank, in rank order: how many steps found it among the latest (HTA's series,
    /// which HTA sorts with pandas; the Python drop-in sorts it the same way).
    #[serde(skip)]
    pub counts: Vec<(i64, usize)>,
}

/// One rank's share of [`stragglers`]: what the detection needs of its timeline, so that
/// ranks read one at a time need not be held (see [`straggler_input`]).
#[derive(Debug, Clone)]
pub struct StragglerInput {
    rank: Option<i64>,
    /// The ProfilerStep ids the rank has.
    step_ids: Vec<i64>,
    /// First start and last end of its host events and launched GPU activities in steps.
    span: (i64, i64),
    /// Its `ncclKernel*` kernels launched inside a step (above step 0, on a stream).
    kernels: Vec<CommKernel>,
}

#[derive(Debug, Clone)]
struct CommKernel {
    rank: i64,
    stream: i64,
    step: i64,
    name: String,
    start: i64,
    dur: i64,
}

/// Reduces one rank's timeline to what [`stragglers_of`] needs.
pub fn straggler_input(t: &Timeline) -> StragglerInput {
    let (mut t_min, mut t_max) = (i64::MAX, i64::MIN);
    let mut kernels = Vec::new();
    let step_of = |at: i64| t.steps.iter().find(|s| s.1 <= at && at <= s.2).map(|s| s.0);
    for h in &t.host {
        if step_of(h.start).is_some() {
            t_min = t_min.min(h.start);
            t_max = t_max.max(h.end);
        }
    }
    for g in &t.gpu {
        let Some(l) = g.launch else { continue };
        let Some(step) = step_of(t.host[l].start) else {
            continue;
        };
        t_min = t_min.min(g.start);
        t_max = t_max.max(g.end);
        let name = t.name(g.name);
        if let Some(rank) = t.rank
            && g.stream > 0
            && step > 0
            && name.starts_with("ncclKernel")
        {
            kernels.push(CommKernel {
                rank,
                stream: g.stream,
                step,
                name: name.to_owned(),
                start: g.start,
                dur: g.end - g.start,
            });
        }
    }
    StragglerInput {
        rank: t.rank,
        step_ids: t.steps.iter().map(|s| s.0).collect(),
        span: (t_min, t_max),
        kernels,
    }
}

/// For each rank, `ncclKernel*` kernels launched inside a ProfilerStep and at least 1 % of
/// the mean step time long; the last one per (stream, step, name); the (stream, name)
/// whose duration has the largest mean standard deviation across ranks; per step, the
/// ranks among the `num` latest starts of that kernel (normalised by the mean step time);
/// the `num` ranks found most often are the stragglers (HTA's order, see `top_ranks`).
/// The ranks' timestamps are compared as they are (HTA assumes one clock).
pub fn stragglers(ts: &[Timeline], num: usize) -> Option<Stragglers> {
    let inputs: Vec<StragglerInput> = ts.iter().map(straggler_input).collect();
    stragglers_of(&inputs, num)
}

/// [`stragglers`] from each rank's [`straggler_input`], in rank order.
pub fn stragglers_of(inputs: &[StragglerInput], num: usize) -> Option<Stragglers> {
    let mut kernels: Vec<&CommKernel> = Vec::new();
    let (mut t_min, mut t_max) = (i64::MAX, i64::MIN);
    let mut step_ids = std::collections::BTreeSet::new();
    for input in inputs {
        input.rank?;
        step_ids.extend(input.step_ids.iter().copied());
        t_min = t_min.min(input.span.0);
        t_max = t_max.max(input.span.1);
        kernels.extend(&input.kernels);
    }
    if kernels.is_empty() || step_ids.is_empty() {
        return None;
    }
    let mean_step = (t_max - t_min) as f64 / step_ids.len() as f64;
    let min_dur = mean_step * 0.01;
    let mut last: BTreeMap<(i64, i64, i64, String), (i64, i64)> = BTreeMap::new();
    for k in kernels.iter().filter(|k| k.dur as f64 >= min_dur) {
        let e = last
            .entry((k.rank, k.stream, k.step, k.name.clone()))
            .or_insert((k.start, k.dur));
        if k.start >= e.0 {
            *e = (k.start, k.dur);
        }
    }
    // std of the normalised duration across ranks, per (stream, step, name); mean over steps.
    let mut groups: BTreeMap<(i64, String), BTreeMap<i64, Vec<f64>>> = BTreeMap::new();
    for ((_, stream, step, name), (_, dur)) in &last {
        groups
            .entry((*stream, name.clone()))
            .or_default()
            .entry(*step)
            .or_default()
            .push(*dur as f64 / mean_step);
    }
    let mut best: Option<((i64, String), f64)> = None;
    for (key, steps) in &groups {
        let stds: Vec<f64> = steps.values().filter_map(|v| sample_std(v)).collect();
        if stds.is_empty() {
            continue;
        }
        let m = stds.iter().sum::<f64>() / stds.len() as f64;
        if best.as_ref().is_none_or(|b| m > b.1) {
            best = Some((key.clone(), m));
        }
    }
    let ((stream, kernel), _) = best?;
    // (rank, step, metric) of the chosen kernel, in (rank, step) order.
    let chosen: Vec<(i64, i64, f64)> = last
        .iter()
        .filter(|((_, s, _, n), _)| *s == stream && *n == kernel)
        .map(|((rank, _, step, _), (start, _))| (*rank, *step, (start - t_min) as f64 / mean_step))
        .collect();
    let counts = straggler_counts(&chosen, num.max(1));
    let ranks = top_ranks(&counts, num.max(1));
    let mut metric: Vec<(i64, f64)> = chosen.iter().map(|c| (c.0, c.2)).collect();
    metric.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Some(Stragglers {
        ranks,
        stream,
        kernel,
        metric,
        counts,
    })
}

/// HTA's candidate counting (`_get_top_k_stragglers_with_metric`) over `chosen`'s (rank,
/// step, metric) rows: in each step, the ranks whose metric is at least the step's `num`-th
/// largest (the smallest where the step has fewer ranks) count once. Per rank, in rank
/// order; with one step every rank's count is 0 or 1.
fn straggler_counts(chosen: &[(i64, i64, f64)], num: usize) -> Vec<(i64, usize)> {
    let mut by_step: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
    for &(_, step, m) in chosen {
        by_step.entry(step).or_default().push(m);
    }
    let threshold: BTreeMap<i64, f64> = by_step
        .into_iter()
        .map(|(step, mut ms)| {
            ms.sort_by(|a, b| b.total_cmp(a));
            (step, ms[num.clamp(1, ms.len()) - 1])
        })
        .collect();
    let mut counts: BTreeMap<i64, usize> = BTreeMap::new();
    for &(rank, step, m) in chosen {
        *counts.entry(rank).or_default() += usize::from(m >= threshold[&step]);
    }
    counts.into_iter().collect()
}

/// The `num` ranks of `counts` counted most often, ties in rank order. (HTA sorts with
/// pandas, whose order among ties depends on numpy's sort; the Python drop-in applies that
/// same sort to [`Stragglers::counts`].)
fn top_ranks(counts: &[(i64, usize)], num: usize) -> Vec<i64> {
    let mut ranked = counts.to_vec();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.into_iter().take(num).map(|r| r.0).collect()
}

fn sample_std(v: &[f64]) -> Option<f64> {
    if v.len() < 2 {
        return None;
    }
    let m = v.iter().sum::<f64>() / v.len() as f64;
    Some((v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt())
}

/// One launch (`get_cuda_kernel_launch_stats`): a GPU activity and its runtime call.
#[derive(Debug, Clone, Serialize)]
pub struct LaunchRow {
    /// The correlation id the runtime call and the activity share.
    pub correlation: i64,
    /// Duration of the runtime launch call, in µs (`cpu_duration`).
    pub cpu_duration_us: f64,
    /// Duration of the GPU activity, in µs (`gpu_duration`).
    pub gpu_duration_us: f64,
    /// activity start − (launch start + launch duration), clipped at 0, in µs
    /// (`launch_delay`).
    pub launch_delay_us: f64,
}

/// Launch statistics of one rank, with HTA's outlier thresholds.
#[derive(Debug, Clone, Serialize)]
pub struct HtaLaunchStats {
    /// The rank of the trace, when known.
    pub rank: Option<i64>,
    /// GPU activities with a runtime launch (matched by correlation id).
    pub launches: usize,
    /// gpu_duration < cpu_duration: the launch costs more than the work.
    pub short_kernels: usize,
    /// cpu_duration > 50 µs.
    pub runtime_outliers: usize,
    /// launch_delay > 100 µs.
    pub launch_delay_outliers: usize,
    /// Sum of `launch_delay_us` over the launches, in µs.
    pub total_launch_delay_us: f64,
    /// Every launch, by correlation id.
    pub rows: Vec<LaunchRow>,
}

/// The runtime calls whose launches HTA 0.5.0's `get_cuda_kernel_launch_stats` pairs
/// (`cuda_kernel_analysis.py`): kernel launches, and with `include_memory_events` the
/// asynchronous memcpy and memset calls. Graph launches, driver (`cuLaunchKernel`) and
/// HIP launches are not among them.
pub const LAUNCH_STATS_CALLS: [&str; 3] = [
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "runFunction - job_prep_and_submit_for_execution",
];

/// The memory calls [`launch_stats_with`] adds with `include_memory_events`.
pub const LAUNCH_STATS_MEMORY_CALLS: [&str; 2] = ["cudaMemcpyAsync", "cudaMemsetAsync"];

/// The runtime calls HTA 0.5.0's queue length counts as enqueuing work on a stream
/// (`TraceSymbolTable.get_runtime_launch_events_query`).
pub const QUEUE_LAUNCH_CALLS: [&str; 11] = [
    "cudaMemsetAsync",
    "cudaMemcpyAsync",
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "cuLaunchKernel",
    "runFunction - job_prep_and_submit_for_execution",
    "hipLaunchKernel",
    "hipExtModuleLaunchKernel",
    "hipMemcpyAsync",
    "hipMemsetAsync",
    "hipMemcpyWithStream",
];

/// Pairs each GPU activity with its runtime launch call and counts the outliers: every
/// launch with a runtime or driver call, in correlation order (the tool's summary).
pub fn launch_stats(t: &Timeline) -> HtaLaunchStats {
    let mut rows: Vec<(i64, i64, LaunchRow)> =
        t.gpu.iter().filter_map(|g| launch_row(t, g)).collect();
    rows.sort_by_key(|r| r.2.correlation);
    stats_of(t, rows.into_iter().map(|r| r.2).collect())
}

/// HTA 0.5.0's `get_cuda_kernel_launch_stats` of one rank: the activities launched by one
/// of [`LAUNCH_STATS_CALLS`] (and [`LAUNCH_STATS_MEMORY_CALLS`] with
/// `include_memory_events`), on a stream, in HTA's row order (the launch call's place in
/// the file, then the activity's).
pub fn launch_stats_with(t: &Timeline, include_memory_events: bool) -> HtaLaunchStats {
    let counted = |name: &str| {
        LAUNCH_STATS_CALLS.contains(&name)
            || (include_memory_events && LAUNCH_STATS_MEMORY_CALLS.contains(&name))
    };
    let mut rows: Vec<(i64, i64, LaunchRow)> = t
        .gpu
        .iter()
        .filter(|g| g.stream != -1)
        .filter(|g| g.launch.is_some_and(|l| counted(t.name(t.host[l].name))))
        .filter_map(|g| launch_row(t, g))
        .collect();
    rows.sort_by_key(|r| (r.0, r.1));
    stats_of(t, rows.into_iter().map(|r| r.2).collect())
}

/// (launch event index, activity event index, row) of an activity with a launch.
fn launch_row(t: &Timeline, g: &Gpu) -> Option<(i64, i64, LaunchRow)> {
    let l = &t.host[g.launch?];
    Some((
        l.event_index,
        g.event_index,
        LaunchRow {
            correlation: g.correlation?,
            cpu_duration_us: us(l.end - l.start),
            gpu_duration_us: us(g.end - g.start),
            launch_delay_us: us((g.start - l.end).max(0)),
        },
    ))
}

fn stats_of(t: &Timeline, rows: Vec<LaunchRow>) -> HtaLaunchStats {
    HtaLaunchStats {
        rank: t.rank,
        launches: rows.len(),
        short_kernels: rows
            .iter()
            .filter(|r| r.gpu_duration_us < r.cpu_duration_us)
            .count(),
        runtime_outliers: rows.iter().filter(|r| r.cpu_duration_us > 50.0).count(),
        launch_delay_outliers: rows.iter().filter(|r| r.launch_delay_us > 100.0).count(),
        total_launch_delay_us: rows.iter().map(|r| r.launch_delay_us).sum(),
        rows,
    }
}

/// Queue length of one stream (`trace_counters.py`): +1 at each launch, −1 at each
/// activity start, over activities that have a launch.
#[derive(Debug, Clone, Serialize)]
pub struct QueueRow {
    /// The rank of the trace, when known.
    pub rank: Option<i64>,
    /// The CUDA stream (`args.stream`).
    pub stream: i64,
    /// Points of the series: two per launched activity (its launch and its start).
    pub samples: usize,
    /// The most operations outstanding at once.
    pub max: i64,
    /// Mean of the series' values (HTA's `describe()`), not time-weighted.
    pub mean: f64,
    /// Time spent with 1024 or more outstanding operations (the launch queue is full).
    pub time_at_1024_us: f64,
}

/// The queue-length series per stream: (time, length after the change), in time order.
pub(crate) fn queue_series(t: &Timeline) -> BTreeMap<i64, Vec<(i64, i64, bool, usize)>> {
    // (time, delta, is_launch, gpu index)
    let mut by: BTreeMap<i64, Vec<(i64, i64, bool, usize)>> = BTreeMap::new();
    for (i, g) in t.gpu.iter().enumerate() {
        let Some(l) = g.launch else { continue };
        if g.stream == -1 || !QUEUE_LAUNCH_CALLS.contains(&t.name(t.host[l].name)) {
            continue;
        }
        let e = by.entry(g.stream).or_default();
        e.push((t.host[l].start, 1, true, i));
        e.push((g.start, -1, false, i));
    }
    for v in by.values_mut() {
        // At equal times a launch counts before a start, as in HTA, which sorts runtime
        // calls concatenated ahead of the GPU events.
        v.sort_by_key(|p| (p.0, !p.2));
        let mut q = 0;
        for p in v.iter_mut() {
            q += p.1;
            p.1 = q;
        }
    }
    by
}

/// A point of a queue-length series: (time in ns, length after the change, whether it is a
/// launch, index of the activity in `Timeline::gpu`).
pub type QueuePoint = (i64, i64, bool, usize);

/// The queue-length series of each stream, in stream order: (stream, [(time in ns, length
/// after the change, whether the point is a launch, index of the activity in `t.gpu`)]),
/// the points in time order, a launch before a start at equal times.
pub fn queue_points(t: &Timeline) -> Vec<(i64, Vec<QueuePoint>)> {
    queue_series(t).into_iter().collect()
}

/// The queue-length series of each stream that has launched activities, in stream order:
/// the length after each launch and each activity start, in time order (HTA's
/// `get_queue_length_time_series` values).
pub fn queue_length_series(t: &Timeline) -> Vec<(i64, Vec<i64>)> {
    queue_series(t)
        .into_iter()
        .map(|(stream, s)| (stream, s.iter().map(|p| p.1).collect()))
        .collect()
}

/// One row per stream that has launched activities, in stream order.
pub fn queue_length(t: &Timeline) -> Vec<QueueRow> {
    queue_series(t)
        .into_iter()
        .map(|(stream, s)| {
            let n = s.len();
            let full: i64 = s
                .windows(2)
                .filter(|w| w[0].1 >= 1024)
                .map(|w| w[1].0 - w[0].0)
                .sum();
            QueueRow {
                rank: t.rank,
                stream,
                samples: n,
                max: s.iter().map(|p| p.1).max().unwrap_or(0),
                mean: if n > 0 {
                    s.iter().map(|p| p.1 as f64).sum::<f64>() / n as f64
                } else {
                    0.0
                },
                time_at_1024_us: us(full),
            }
        })
        .collect()
}

/// Which host events HTA's critical path treats as operators.
pub(crate) fn is_operator(cat: HostCat) -> bool {
    matches!(cat, HostCat::CpuOp | HostCat::Runtime | HostCat::Driver)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_type(name: &str, expect: HtaKernelType) {
        assert_eq!(hta_kernel_type(name), expect, "{name}");
    }

    #[test]
    fn kernel_types_follow_hta() {
        check_type(
            "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
            HtaKernelType::Communication,
        );
        check_type(
            "ncclDevKernel_AllGather_RING_LL",
            HtaKernelType::Communication,
        );
        // No "Kernel" after the prefix: HTA calls it computation.
        check_type("nccl_custom_reduce", HtaKernelType::Computation);
        check_type("Memcpy HtoD (Pageable -> Device)", HtaKernelType::Memory);
        check_type("Memset (Device)", HtaKernelType::Memory);
        check_type("cudaStreamSync", HtaKernelType::Other);
        check_type("volta_sgemm_128x64_nn", HtaKernelType::Computation);
    }

    #[test]
    fn stragglers_are_counted_per_step_as_hta_counts_them() {
        // Step 1: ranks 2 and 1 latest; step 2: ranks 2 and 0; step 3: a tie, 0, 1 and 3
        // all at the second latest.
        let rows = [
            (0, 1, 0.1),
            (1, 1, 0.5),
            (2, 1, 0.9),
            (3, 1, 0.2),
            (0, 2, 0.6),
            (1, 2, 0.3),
            (2, 2, 0.8),
            (3, 2, 0.1),
            (0, 3, 0.4),
            (1, 3, 0.4),
            (2, 3, 0.1),
            (3, 3, 0.4),
        ];
        let top = |rows: &[(i64, i64, f64)], n: usize| top_ranks(&straggler_counts(rows, n), n);
        assert_eq!(
            straggler_counts(&rows, 2),
            vec![(0, 2), (1, 2), (2, 2), (3, 1)]
        );
        // Ties in rank order.
        assert_eq!(top(&rows, 2), vec![0, 1]);
        assert_eq!(top(&rows, 4), vec![0, 1, 2, 3]);
        // One step: 0/1 per rank, the two latest, in rank order.
        assert_eq!(
            straggler_counts(&rows[..4], 2),
            vec![(0, 0), (1, 1), (2, 1), (3, 0)]
        );
        assert_eq!(top(&rows[..4], 2), vec![1, 2]);
        // More candidates than ranks in a step: every rank of it counts.
        assert_eq!(top(&rows[..2], 3), vec![0, 1]);
        // At least one candidate.
        assert_eq!(top(&rows[..4], 1), vec![2]);
        assert_eq!(top(&rows[..4], 0), vec![]);
    }

    /// One rank as HTA 0.5.0's frame has it, in µs: a kernel on stream 7 (launched at 0),
    /// a `Stream Sync` on stream 7 and an `Event Sync` on no stream (-1), a Triton `cpu_op`
    /// with `args.stream` 0 and no correlation id, steps 1 and 2, and a launch after the
    /// last step's end (at 90, of a kernel at 95).
    fn hta_rank(include_last: bool, origin_us: i64) -> Timeline {
        let names = [
            "1/1",
            "gemm",
            "triton_poi_fused",
            "ProfilerStep#1",
            "ProfilerStep#2",
        ];
        let mut t = Timeline::new("t.json".into(), Some(0), names.map(String::from).to_vec());
        let host =
            |i: i64, name: u32, cat: HostCat, start: i64, end: i64, corr: Option<i64>| Host {
                event_index: i,
                name,
                cat,
                thread: 0,
                start: start * 1000,
                end: end * 1000,
                correlation: corr,
            };
        t.host = vec![
            host(0, 3, HostCat::Annotation, 0, 40, None),
            host(1, 1, HostCat::Runtime, 1, 2, Some(1)),
            host(2, 2, HostCat::CpuOp, 20, 60, None),
            host(3, 4, HostCat::Annotation, 40, 80, None),
            host(4, 1, HostCat::Runtime, 90, 91, Some(4)),
        ];
        t.steps = vec![(1, 0, 40_000), (2, 40_000, 80_000)];
        let gpu = |i: i64, name: u32, stream: i64, start: i64, end: i64, corr: i64| Gpu {
            event_index: i,
            name,
            kind: GpuKind::Kernel,
            device: 0,
            stream,
            start: start * 1000,
            end: end * 1000,
            correlation: Some(corr),
            launch: None,
        };
        t.gpu = vec![gpu(10, 1, 7, 10, 15, 1), gpu(11, 1, 7, 95, 99, 4)];
        t.stream_ops = vec![Gpu {
            kind: GpuKind::Other,
            correlation: None,
            ..gpu(2, 2, 0, 20, 60, -1)
        }];
        let sync = |i: i64, kind: SyncKind, stream: i64, start: i64, end: i64| crate::SyncEvent {
            event_index: i,
            kind,
            device: 0,
            stream,
            start: start * 1000,
            end: end * 1000,
            correlation: Some(1),
            runtime: None,
            wait_on_stream: None,
            wait_on_record: None,
        };
        t.syncs = vec![
            sync(12, SyncKind::Stream, 7, 16, 18),
            sync(13, SyncKind::Event, -1, 25, 70),
        ];
        let view = crate::HtaView::hta(include_last, true, origin_us * 1000);
        t.into_hta_view_with(&view)
    }

    use crate::timeline::Host;
    use trace_model::SyncKind;

    #[test]
    fn breakdowns_take_htas_rows_with_a_stream() {
        let t = hta_rank(false, 0);
        // HTA's GPU filter takes the Event Sync (no stream), its breakdowns do not; the
        // Triton op (a stream, no correlation id) is the other way round.
        assert_eq!(t.gpu.len(), 3);
        let rows: Vec<i64> = stream_rows(&t).map(|g| g.event_index).collect();
        assert_eq!(rows, vec![10, 12, 2]);
        let r = temporal(&t).unwrap();
        // Busy [10, 15), [16, 18) and [20, 60): the span 50 µs, idle 3, compute (gemm, the
        // Triton op) 45, the Stream Sync (HTA's OTHER) 2.
        assert_eq!(
            (r.kernel_time_us, r.idle_us, r.compute_us, r.non_compute_us),
            (50.0, 3.0, 45.0, 2.0)
        );
        let names: Vec<(String, usize)> = (kernel_breakdown_hta(std::slice::from_ref(&t))
            .into_iter())
        .map(|k| (k.name, k.count))
        .collect();
        assert_eq!(
            names,
            [
                ("triton_poi_fused".into(), 1),
                ("gemm".into(), 1),
                ("Stream Sync".into(), 1)
            ]
        );
    }

    #[test]
    fn the_last_step_is_kept_as_htas_unaligned_end_keeps_it() {
        // `False`: host events starting before the last step's start, and their GPU work.
        let t = hta_rank(false, 0);
        assert_eq!(t.host.len(), 3);
        // `True`: HTA compares a start from its origin with the step's end in the file's
        // time. With the origin at 0 the launch at 90 is past the end (80) and its kernel
        // is dropped ...
        let t = hta_rank(true, 0);
        assert_eq!((t.host.len(), t.gpu.len()), (4, 3));
        // ... with the file's events 20 µs after HTA's origin (another rank started
        // first), the launch is at 70 and both are kept.
        let t = hta_rank(true, 20);
        assert_eq!((t.host.len(), t.gpu.len()), (5, 4));
    }

    #[test]
    fn merge_and_intersection() {
        let a = merge(vec![(5, 8), (0, 2), (1, 3), (8, 9)]);
        assert_eq!(a, vec![(0, 3), (5, 9)]);
        let b = merge(vec![(2, 6)]);
        assert_eq!(intersection(&a, &b), 1 + 1);
        assert_eq!(length(&a), 7);
    }
}
