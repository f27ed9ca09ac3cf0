//! profile-model's quick summary and its findings, typed: the shares the bottleneck rule
//! reads, the bottleneck, the top kernels, the symptoms of the fixed recommendation table
//! with their figures, and what is missing when the trace is not what the analysis
//! expects. profile-model words them (its `render.rs`).

use std::collections::BTreeMap;

use polars::prelude::*;
use serde::Serialize;
use trace_model::{FastMap, Labelled};

use crate::Error;
use crate::hta::{self, HtaKernelType};
use ::timeline::{GpuKind, Timeline};

/// One of the top kernels.
#[derive(Debug, Clone, Serialize)]
pub struct TopKernel {
    /// The kernel's name, as in the trace.
    pub name: String,
    /// Activities with this name, all ranks together.
    pub calls: usize,
    /// Their summed duration, in µs.
    pub total_us: f64,
    /// `total_us` / `calls`, in µs.
    pub avg_us: f64,
    /// Share of the summed kernel time of all ranks, in %.
    pub pct: f64,
}

/// profile-model's quick summary and findings.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Trace files (ranks) loaded.
    pub ranks: usize,
    /// Rows of the events frame, all ranks together.
    pub events: Labelled<usize>,
    /// (cat, events), most first; `null` for events without `cat`.
    pub by_category: Vec<(String, usize)>,
    /// Kernel activities (not memcpy/memset) of all ranks, as HTA sees the timelines.
    pub kernels: Labelled<usize>,
    /// Their summed durations (not a union: overlapping kernels count twice), in µs.
    pub kernel_time_us: Labelled<f64>,
    /// The five kernel names with the most total time, most first.
    pub top_kernels: Vec<TopKernel>,
    /// The shares the bottleneck rule reads: the main finding is these and the bottleneck.
    pub shares: Labelled<Shares>,
    /// What bounds the GPU, by the rule its provenance states ([`BOTTLENECK_RULE`]).
    pub bottleneck: Labelled<Bottleneck>,
    /// The symptoms seen, from a fixed table, each with its measured figures; the tool
    /// words each symptom and its fix.
    pub recommendations: Vec<Recommendation>,
    /// What the trace lacks, in sentences (empty when it has what the analyses need).
    pub missing: Vec<String>,
}

/// Builds the summary from the combined frame and the ranks' timelines (HTA's view).
pub fn summarize(df: &DataFrame, timelines: &[Timeline]) -> Result<Summary, Error> {
    let mut part = SummaryPart::of_frame(df)?;
    for t in timelines {
        part.merge(SummaryPart::of_timeline(t));
    }
    Ok(part.finish())
}

/// A share of the summary: of one rank's frame ([`SummaryPart::of_frame`]) or timeline
/// ([`SummaryPart::of_timeline`]), merged in rank order and finished into the
/// [`Summary`] that [`summarize`] gives for the same ranks, so that ranks read one at a
/// time need not be held.
#[derive(Debug, Clone, Default)]
pub struct SummaryPart {
    events: usize,
    categories: BTreeMap<Option<String>, usize>,
    has_cat: bool,
    timelines: usize,
    per_name: BTreeMap<String, (usize, i64)>,
    kernels: usize,
    kernel_ns: i64,
    comm_ns: i64,
    mem_ns: i64,
    mem_ops: usize,
    any_steps: bool,
    any_launch: bool,
    /// Per rank with GPU activities: (kernel time, idle) of HTA's temporal breakdown, µs.
    temporal: Vec<(f64, f64)>,
    /// Per stream of every rank: (host wait, kernel wait) of HTA's idle breakdown, µs.
    waits: Vec<(f64, f64)>,
}

impl SummaryPart {
    /// The frame's share: its rows and their categories.
    pub fn of_frame(df: &DataFrame) -> Result<SummaryPart, Error> {
        let cat_col = df
            .column("cat")
            .and_then(|c| c.cast(&DataType::String))
            .map_err(Error::polars("summary"))?;
        let mut counts: FastMap<Option<&str>, usize> = FastMap::default();
        for cat in cat_col.str().map_err(Error::polars("summary"))?.iter() {
            *counts.entry(cat).or_default() += 1;
        }
        Ok(SummaryPart {
            events: df.height(),
            categories: counts
                .into_iter()
                .map(|(cat, n)| (cat.map(str::to_owned), n))
                .collect(),
            has_cat: df.get_column_names().iter().any(|c| c.as_str() == "cat"),
            ..SummaryPart::default()
        })
    }

    /// The timeline's share: its kernels, memory operations, steps, launches and HTA's
    /// temporal and idle breakdowns.
    pub fn of_timeline(t: &Timeline) -> SummaryPart {
        let mut part = SummaryPart {
            timelines: 1,
            any_steps: !t.steps.is_empty(),
            any_launch: t.gpu.iter().any(|g| g.launch.is_some()),
            ..SummaryPart::default()
        };
        // Calls and time per name id of this rank, then per name.
        let mut per_id: Vec<(usize, i64)> = vec![(0, 0); t.names.len()];
        for g in &t.gpu {
            let d = g.end - g.start;
            if g.kind == GpuKind::Kernel {
                part.kernels += 1;
                part.kernel_ns += d;
                let e = &mut per_id[g.name as usize];
                e.0 += 1;
                e.1 += d;
                if t.hta_type(g.name) == HtaKernelType::Communication {
                    part.comm_ns += d;
                }
            } else {
                part.mem_ns += d;
                part.mem_ops += 1;
            }
        }
        for (id, &(calls, total)) in per_id.iter().enumerate() {
            if calls > 0 {
                let e = part.per_name.entry(t.names[id].clone()).or_default();
                e.0 += calls;
                e.1 += total;
            }
        }
        part.temporal
            .extend(hta::temporal(t).map(|x| (x.kernel_time_us, x.idle_us)));
        part.waits.extend(
            hta::idle_breakdown(t, 30)
                .into_iter()
                .map(|r| (r.host_wait_us, r.kernel_wait_us)),
        );
        part
    }

    /// Adds `other` (the next rank's share) to this one.
    pub fn merge(&mut self, other: SummaryPart) {
        self.events += other.events;
        for (cat, n) in other.categories {
            *self.categories.entry(cat).or_default() += n;
        }
        self.has_cat |= other.has_cat;
        self.timelines += other.timelines;
        for (name, (calls, total)) in other.per_name {
            let e = self.per_name.entry(name).or_default();
            e.0 += calls;
            e.1 += total;
        }
        self.kernels += other.kernels;
        self.kernel_ns += other.kernel_ns;
        self.comm_ns += other.comm_ns;
        self.mem_ns += other.mem_ns;
        self.mem_ops += other.mem_ops;
        self.any_steps |= other.any_steps;
        self.any_launch |= other.any_launch;
        self.temporal.extend(other.temporal);
        self.waits.extend(other.waits);
    }

    /// The summary of the shares merged.
    pub fn finish(self) -> Summary {
        let by_category = category_counts(self.categories);
        let SummaryPart {
            events,
            has_cat,
            timelines,
            per_name,
            kernels,
            kernel_ns,
            comm_ns,
            mem_ns,
            mem_ops,
            any_steps,
            any_launch,
            temporal,
            waits,
            ..
        } = self;
        let top = top_kernels(per_name, kernel_ns);
        let missing = missing_inputs(has_cat, kernels, any_steps, any_launch);
        let shares = Shares::of(&temporal, &waits, kernel_ns, comm_ns, mem_ns);
        let bottleneck = shares.bottleneck(kernels);
        let recs = shares.recommendations(kernels, kernel_ns, mem_ops, &top);
        Summary {
            ranks: timelines,
            events: Labelled::measured(events),
            by_category,
            kernels: Labelled::measured(kernels),
            kernel_time_us: Labelled::measured(kernel_ns as f64 / 1000.0),
            top_kernels: top,
            bottleneck: Labelled::inferred(bottleneck, BOTTLENECK_RULE),
            shares: Labelled::measured(shares),
            recommendations: recs,
            missing,
        }
    }
}

/// Events per category, most first, then by name with the events without one last
/// (as `SELECT cat, COUNT(*) AS n FROM events GROUP BY cat ORDER BY n DESC, cat`
/// gives them, without planning a query); `null` names the events without one.
fn category_counts(categories: BTreeMap<Option<String>, usize>) -> Vec<(String, usize)> {
    let mut counts: Vec<(Option<String>, usize)> = categories.into_iter().collect();
    counts.sort_by(|a, b| {
        (std::cmp::Reverse(a.1), a.0.is_none(), &a.0).cmp(&(
            std::cmp::Reverse(b.1),
            b.0.is_none(),
            &b.0,
        ))
    });
    counts
        .into_iter()
        .map(|(cat, n)| (cat.unwrap_or_else(|| "null".to_owned()), n))
        .collect()
}

/// The five kernel names with the most total time (`per_name`: calls and summed ns),
/// with their share of all kernel time (`kernel_ns`).
fn top_kernels(per_name: BTreeMap<String, (usize, i64)>, kernel_ns: i64) -> Vec<TopKernel> {
    let mut top: Vec<TopKernel> = per_name
        .into_iter()
        .map(|(name, (calls, total))| TopKernel {
            name,
            calls,
            total_us: total as f64 / 1000.0,
            avg_us: total as f64 / 1000.0 / calls as f64,
            pct: if kernel_ns > 0 {
                100.0 * total as f64 / kernel_ns as f64
            } else {
                0.0
            },
        })
        .collect();
    top.sort_by(|a, b| b.total_us.total_cmp(&a.total_us).then(a.name.cmp(&b.name)));
    top.truncate(5);
    top
}

/// What the trace lacks that the analyses need, in sentences.
fn missing_inputs(has_cat: bool, kernels: usize, any_steps: bool, any_launch: bool) -> Vec<String> {
    let mut missing = Vec::new();
    if !has_cat {
        missing
            .push("no event has a `cat` field: this is not a Kineto (torch.profiler) trace".into());
    }
    if kernels == 0 {
        missing.push(
            "no `cat == \"kernel\"` events: the capture has no GPU activities (record with \
             ProfilerActivity.CUDA)"
                .into(),
        );
    }
    if !any_steps {
        missing.push(
            "no ProfilerStep#N annotations: steps, stragglers and the critical path need \
             a torch.profiler schedule (prof.step())"
                .into(),
        );
    }
    if !any_launch && kernels > 0 {
        missing.push(
            "no GPU activity has a runtime launch with its correlation id: host wait and \
             launch delay cannot be measured"
                .into(),
        );
    }
    missing
}

/// The shares the bottleneck rule reads, over all ranks with HTA's definitions
/// (`measured`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Shares {
    /// GPU idle, % of the GPU span.
    pub idle_pct: f64,
    /// Communication, % of GPU busy time (kernels and memory operations).
    pub comm_pct: f64,
    /// Memory operations, % of GPU busy time.
    pub mem_pct: f64,
    /// Host wait / (host wait + kernel wait) of the stream gaps.
    pub host_share: f64,
}

/// The rule [`Summary::bottleneck`] follows, over [`Shares`].
pub const BOTTLENECK_RULE: &str = "CPU-bound if the GPU is idle ≥ 30 % of its span and host \
    wait is ≥ 50 % of the stream gaps; else communication-bound if communication is ≥ 50 % \
    of GPU busy time; else memory-bound if memcpy/memset is ≥ 30 % of it; else compute-bound";

/// What bounds the GPU, by [`BOTTLENECK_RULE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Bottleneck {
    /// The trace has no GPU kernels.
    #[serde(rename = "unknown (no GPU kernels)")]
    NoKernels,
    /// The GPU idles, mostly waiting for the host.
    #[serde(rename = "CPU-bound")]
    CpuBound,
    /// Communication holds half of GPU busy time or more.
    #[serde(rename = "communication-bound")]
    CommunicationBound,
    /// Memory operations hold 30 % of GPU busy time or more.
    #[serde(rename = "memory-bound")]
    MemoryBound,
    /// None of the above.
    #[serde(rename = "compute-bound")]
    ComputeBound,
}

impl Bottleneck {
    /// Its name, as the JSON writes it (`CPU-bound`, …).
    pub fn name(self) -> &'static str {
        match self {
            Bottleneck::NoKernels => "unknown (no GPU kernels)",
            Bottleneck::CpuBound => "CPU-bound",
            Bottleneck::CommunicationBound => "communication-bound",
            Bottleneck::MemoryBound => "memory-bound",
            Bottleneck::ComputeBound => "compute-bound",
        }
    }
}

/// A symptom of the fixed table, with its measured figures (`measured`); the tool words
/// it and its fix.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "symptom", rename_all = "snake_case")]
pub enum Recommendation {
    /// The mean kernel is under 10 µs: launch overhead.
    SmallKernels {
        /// The mean kernel duration, µs.
        mean_us: f64,
    },
    /// One collective holds over half the kernel time.
    CollectiveDominates {
        /// Its share of kernel time, %.
        pct: f64,
    },
    /// One (non-collective) kernel holds over half the kernel time.
    KernelDominates {
        /// Its share of kernel time, %.
        pct: f64,
    },
    /// Memory operations hold 10 % of GPU busy time or more.
    MemoryOperations {
        /// How many.
        count: usize,
        /// Their share of GPU busy time, %.
        pct: f64,
    },
    /// Communication holds 30 % of GPU busy time or more.
    Communication {
        /// Its share of GPU busy time, %.
        pct: f64,
    },
    /// The GPU idles 30 % of its span or more, mostly waiting for the host.
    IdleHostWait {
        /// GPU idle, % of the GPU span.
        idle_pct: f64,
    },
    /// The GPU idles 30 % of its span or more, mostly between kernels.
    IdleKernelWait {
        /// GPU idle, % of the GPU span.
        idle_pct: f64,
    },
}

impl Shares {
    /// The shares from the ranks' temporal breakdowns, the streams' waits and the kernel,
    /// communication and memory-operation times.
    fn of(
        temporal: &[(f64, f64)],
        waits: &[(f64, f64)],
        kernel_ns: i64,
        comm_ns: i64,
        mem_ns: i64,
    ) -> Shares {
        let (mut span, mut idle) = (0.0, 0.0);
        for (kernel_time, idle_us) in temporal {
            span += kernel_time;
            idle += idle_us;
        }
        let (mut host_wait, mut kernel_wait) = (0.0, 0.0);
        for (host, kernel) in waits {
            host_wait += host;
            kernel_wait += kernel;
        }
        let busy_ns = kernel_ns + mem_ns;
        let of_busy = |ns: i64| {
            if busy_ns > 0 {
                100.0 * ns as f64 / busy_ns as f64
            } else {
                0.0
            }
        };
        Shares {
            idle_pct: if span > 0.0 { 100.0 * idle / span } else { 0.0 },
            comm_pct: of_busy(comm_ns),
            mem_pct: of_busy(mem_ns),
            host_share: if host_wait + kernel_wait > 0.0 {
                host_wait / (host_wait + kernel_wait)
            } else {
                0.0
            },
        }
    }

    /// The bottleneck by [`BOTTLENECK_RULE`].
    fn bottleneck(&self, kernels: usize) -> Bottleneck {
        let Shares {
            idle_pct,
            comm_pct,
            mem_pct,
            host_share,
        } = *self;
        if kernels == 0 {
            Bottleneck::NoKernels
        } else if idle_pct >= 30.0 && host_share >= 0.5 {
            Bottleneck::CpuBound
        } else if comm_pct >= 50.0 {
            Bottleneck::CommunicationBound
        } else if mem_pct >= 30.0 {
            Bottleneck::MemoryBound
        } else {
            Bottleneck::ComputeBound
        }
    }

    /// The symptoms of the fixed table, each with its measured figures.
    fn recommendations(
        &self,
        kernels: usize,
        kernel_ns: i64,
        mem_ops: usize,
        top: &[TopKernel],
    ) -> Vec<Recommendation> {
        let Shares {
            idle_pct,
            comm_pct,
            mem_pct,
            host_share,
        } = *self;
        let mut recs = Vec::new();
        let mean_us = if kernels > 0 {
            kernel_ns as f64 / 1000.0 / kernels as f64
        } else {
            0.0
        };
        if kernels > 0 && mean_us < 10.0 {
            recs.push(Recommendation::SmallKernels { mean_us });
        }
        if let Some(k) = top.first().filter(|k| k.pct > 50.0) {
            let comm = hta::hta_kernel_type(&k.name) == HtaKernelType::Communication;
            recs.push(if comm {
                Recommendation::CollectiveDominates { pct: k.pct }
            } else {
                Recommendation::KernelDominates { pct: k.pct }
            });
        }
        if mem_pct >= 10.0 {
            recs.push(Recommendation::MemoryOperations {
                count: mem_ops,
                pct: mem_pct,
            });
        }
        if comm_pct >= 30.0 {
            recs.push(Recommendation::Communication { pct: comm_pct });
        }
        if idle_pct >= 30.0 && host_share >= 0.5 {
            recs.push(Recommendation::IdleHostWait { idle_pct });
        } else if idle_pct >= 30.0 {
            recs.push(Recommendation::IdleKernelWait { idle_pct });
        }
        recs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_are_counted_most_first_then_by_name_without_a_category_last() {
        let cats = [
            Some("kernel"),
            None,
            Some("cpu_op"),
            Some("kernel"),
            None,
            Some("ac2g"),
            Some("cpu_op"),
            Some("kernel"),
        ];
        let df = DataFrame::new(cats.len(), vec![Column::new("cat".into(), cats.to_vec())])
            .expect("a frame");
        let s = summarize(&df, &[]).expect("a summary");
        let got: Vec<(&str, usize)> = s
            .by_category
            .iter()
            .map(|(c, n)| (c.as_str(), *n))
            .collect();
        assert_eq!(
            got,
            [("kernel", 3), ("cpu_op", 2), ("null", 2), ("ac2g", 1)]
        );
        // The order SQL gives, which the summary printed before it counted by itself.
        let sql = counted_by_sql(&df);
        assert_eq!(
            got,
            sql.iter()
                .map(|(c, n)| (c.as_str(), *n))
                .collect::<Vec<_>>()
        );
    }

    fn counted_by_sql(df: &DataFrame) -> Vec<(String, usize)> {
        let cats = crate::sql::run_sql(
            df,
            "SELECT cat, COUNT(*) AS n FROM events GROUP BY cat ORDER BY n DESC, cat",
        )
        .expect("the query runs");
        let cat = cats
            .column("cat")
            .expect("cat")
            .str()
            .expect("text")
            .clone();
        let n = cats
            .column("n")
            .expect("n")
            .cast(&DataType::Int64)
            .expect("a count");
        let n = n.i64().expect("ints");
        (0..cats.height())
            .map(|i| {
                (
                    cat.get(i).unwrap_or("null").to_owned(),
                    n.get(i).unwrap_or(0) as usize,
                )
            })
            .collect()
    }
}
