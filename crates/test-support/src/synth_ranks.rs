//! A synthetic N-rank Kineto job (what `cargo xtask synth-ranks` writes), for testing and
//! benchmarking the cross-rank analyses at rank counts no real trace corpus has.
//!
//! Each rank's file (`rank{r}.pt.trace.json`, with `distributedInfo` and
//! `deviceProperties`) holds `ProfilerStep#k` steps; each step is an all-gather, compute
//! kernels and an all-reduce on one stream (collectives named as NCCL before 2.19 names
//! them, `ncclKernel_*`, which HTA 0.5.0's straggler detection looks for), every kernel
//! launched by `cudaLaunchKernel` and linked to it by correlation id and `ac2g` flows.
//! Collectives are matched across ranks by their order: the k-th collective of every rank
//! is the same instance, and ends at the same true time on every rank (within
//! [`END_JITTER_NS`]). What is planted, and
//! what an analysis should find, is in [`Job`]:
//! - small rank-dependent delays (under [`COMPUTE_JITTER_NS`]) on each step's compute;
//! - one straggler: from step `straggler_step` on, its compute takes `straggler_delay_ns`
//!   longer, so every other rank waits that long in the step's all-reduce;
//! - skewed clocks: every timestamp of rank r is its true time plus `offsets_ns[r]`
//!   (rank 0's offset is 0).
//!
//! Deterministic for a seed. Generation only: the xtask writes a job through
//! `output-file`; a test writes [`Job::files`] into its temporary directory.

use std::fmt::Write as _;

/// A rank's compute jitter per step is below this (ns).
pub const COMPUTE_JITTER_NS: i64 = 10_000;
/// A collective's end on one rank differs from its true common end by less than this (ns).
pub const END_JITTER_NS: i64 = 2_000;
/// Clock offsets are drawn from ± this (ns).
const MAX_OFFSET_NS: i64 = 300_000;
/// The true time of the first step's start (ns): keeps every skewed timestamp positive.
const ORIGIN_NS: i64 = 1_000_000_000;
const KERNEL_NS: i64 = 50_000;
const KERNEL_GAP_NS: i64 = 5_000;
const ALL_GATHER_NS: i64 = 30_000;
const ALL_REDUCE_NS: i64 = 200_000;
const STEP_GAP_NS: i64 = 30_000;
/// Bytes a compute kernel adds to a file (its launch, flows and kernel events), roughly.
const BYTES_PER_KERNEL: u64 = 900;

/// An N-rank job: its shape and what is planted in it.
#[derive(Debug, Clone)]
pub struct Job {
    /// Ranks in the job.
    pub ranks: usize,
    /// Steps of every rank (`ProfilerStep#0` on).
    pub steps: usize,
    /// Compute kernels per step, between the all-gather and the all-reduce.
    pub kernels_per_step: usize,
    /// The rank whose compute is slow from `straggler_step` on.
    pub straggler_rank: usize,
    /// The first step (its `ProfilerStep#` number) whose compute is slow on the straggler.
    pub straggler_step: usize,
    /// How much longer the straggler's compute takes from that step on (ns).
    pub straggler_delay_ns: i64,
    /// Per rank: its clock minus the true clock.
    pub offsets_ns: Vec<i64>,
    /// The seed everything was drawn from.
    pub seed: u64,
}

impl Job {
    /// A job of `ranks` ranks of about `mb_per_rank` MB each (at least 4 kernels a step),
    /// with its straggler, delay and offsets drawn from `seed`.
    pub fn plan(ranks: usize, mb_per_rank: f64, seed: u64) -> Job {
        let steps = 8;
        let bytes = (mb_per_rank * 1e6).max(0.0) as u64;
        let kernels_per_step = ((bytes / BYTES_PER_KERNEL) as usize / steps).max(4);
        let mut rng = Rng(seed);
        let straggler_rank = if ranks > 1 {
            1 + rng.below(ranks as u64 - 1) as usize
        } else {
            0
        };
        let straggler_step = 2 + rng.below(3) as usize;
        // At least 5 % of a step's compute, so that it stands out at any size.
        let straggler_delay_ns = 500_000
            + rng.below(500) as i64 * 1_000
            + kernels_per_step as i64 * (KERNEL_NS + KERNEL_GAP_NS) / 20;
        let offsets_ns = (0..ranks)
            .map(|r| {
                if r == 0 {
                    0
                } else {
                    rng.below(2 * MAX_OFFSET_NS as u64 + 1) as i64 - MAX_OFFSET_NS
                }
            })
            .collect();
        Job {
            ranks,
            steps,
            kernels_per_step,
            straggler_rank,
            straggler_step,
            straggler_delay_ns,
            offsets_ns,
            seed,
        }
    }

    /// A deterministic value in `0..n` for (rank, step, what).
    fn jitter(&self, rank: usize, step: usize, what: u64, n: i64) -> i64 {
        let mut rng = Rng(self.seed ^ ((rank as u64) << 32) ^ ((step as u64) << 8) ^ what);
        rng.next();
        rng.below(n as u64) as i64
    }

    /// One rank's trace, as Kineto writes it.
    pub fn rank_trace(&self, rank: usize) -> String {
        let mut out = String::with_capacity(
            (self.steps * self.kernels_per_step) * BYTES_PER_KERNEL as usize + 4096,
        );
        let _ = writeln!(
            out,
            "{{\"schemaVersion\": 1, \"deviceProperties\": [{{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85899345920, \"computeMajor\": 9, \"computeMinor\": 0, \"numSms\": 132}}], \
\"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": {rank}, \"world_size\": {}}}, \"traceEvents\": [",
            self.ranks
        );
        let _ = writeln!(
            out,
            "{{\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": 100, \"tid\": 0, \"args\": {{\"name\": \"python3\"}}}},"
        );
        let offset = self.offsets_ns[rank];
        // Timestamps in microseconds with three decimals: exact nanoseconds.
        let us = |true_ns: i64| {
            let t = true_ns + offset;
            format!("{}.{:03}", t / 1000, t % 1000)
        };
        let mut corr = 1u64;
        let mut step_start = ORIGIN_NS;
        for step in 0..self.steps {
            // Arrival at the all-gather: everyone leaves the previous step together.
            let gather_arrival = |r: usize| step_start + self.jitter(r, step, 1, 3_000);
            let gather_end = (0..self.ranks)
                .map(gather_arrival)
                .max()
                .unwrap_or(step_start)
                + ALL_GATHER_NS;
            let compute_end = |r: usize| {
                let mut t = gather_end
                    + END_JITTER_NS
                    + self.kernels_per_step as i64 * (KERNEL_NS + KERNEL_GAP_NS)
                    + self.jitter(r, step, 2, COMPUTE_JITTER_NS);
                if r == self.straggler_rank && step >= self.straggler_step {
                    t += self.straggler_delay_ns;
                }
                t
            };
            let reduce_arrival = |r: usize| compute_end(r) + 2_000;
            let reduce_end = (0..self.ranks)
                .map(reduce_arrival)
                .max()
                .unwrap_or(step_start)
                + ALL_REDUCE_NS;
            let next_start = reduce_end + STEP_GAP_NS;
            let host_start = step_start - 50_000;
            let _ = writeln!(
                out,
                "{{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#{step}\", \"pid\": 100, \"tid\": 100, \"ts\": {}, \"dur\": {}, \"args\": {{\"External id\": {corr}}}}},",
                us(host_start),
                micros(next_start - step_start)
            );
            // (start, end, name) of every activity of the step on this rank.
            let mut activities: Vec<(i64, i64, &str)> = Vec::new();
            activities.push((
                gather_arrival(rank),
                gather_end + self.jitter(rank, step, 3, END_JITTER_NS),
                "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)",
            ));
            let mut t = gather_end + END_JITTER_NS;
            for k in 0..self.kernels_per_step {
                let mut dur = KERNEL_NS;
                if k + 1 == self.kernels_per_step {
                    // The rank's extra time lands on its last kernel before the all-reduce.
                    dur = compute_end(rank) - t;
                }
                let name = if k % 2 == 0 {
                    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
                } else {
                    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)"
                };
                activities.push((t, t + dur, name));
                t += dur + KERNEL_GAP_NS;
            }
            activities.push((
                reduce_arrival(rank),
                reduce_end + self.jitter(rank, step, 4, END_JITTER_NS),
                "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
            ));
            for (i, (start, end, name)) in activities.into_iter().enumerate() {
                // Launches run ahead of the GPU, one a microsecond from the step's start.
                let launch = host_start + 10_000 + i as i64 * 1_000;
                let _ = writeln!(
                    out,
                    "{{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 100, \"tid\": 100, \"ts\": {l}, \"dur\": 0.500, \"args\": {{\"External id\": {corr}, \"cbid\": 211, \"correlation\": {corr}}}}},\n\
{{\"ph\": \"s\", \"id\": {corr}, \"pid\": 100, \"tid\": 100, \"ts\": {l}, \"cat\": \"ac2g\", \"name\": \"ac2g\"}},\n\
{{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"{name}\", \"pid\": 0, \"tid\": 7, \"ts\": {s}, \"dur\": {d}, \"args\": {{\"External id\": {corr}, \"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": 7, \"correlation\": {corr}, \"grid\": [132, 1, 1], \"block\": [256, 1, 1]}}}},\n\
{{\"ph\": \"f\", \"id\": {corr}, \"pid\": 0, \"tid\": 7, \"ts\": {s}, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}},",
                    l = us(launch),
                    s = us(start),
                    d = micros(end - start),
                );
                corr += 1;
            }
            step_start = next_start;
        }
        let _ = write!(
            out,
            "{{\"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"\", \"tid\": \"\", \"ts\": {}}}\n], \"traceName\": \"synth-ranks\", \"baseTimeNanoseconds\": 1700000000000000000}}\n",
            us(step_start)
        );
        out
    }

    /// Every file of the job, by name: one trace per rank, then `PLANTED.md`.
    pub fn files(&self) -> impl Iterator<Item = (String, Vec<u8>)> + '_ {
        (0..self.ranks)
            .map(|rank| {
                (
                    format!("rank{rank}.pt.trace.json"),
                    self.rank_trace(rank).into_bytes(),
                )
            })
            .chain(std::iter::once((
                "PLANTED.md".to_owned(),
                self.describe().into_bytes(),
            )))
    }

    /// Writes the job into `dir` (a test's temporary directory, which must exist).
    pub fn write_into(&self, dir: &std::path::Path) {
        for (name, bytes) in self.files() {
            let path = dir.join(&name);
            std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }

    /// What was planted, in words (the job's `PLANTED.md`).
    pub fn describe(&self) -> String {
        let mut s = format!(
            "# synth-ranks job\n\nMade by `cargo xtask synth-ranks` (`crates/test-support/src/synth_ranks.rs`), seed {}.\n\n\
             - ranks: {}, steps: {} (ProfilerStep#0..{}), compute kernels per step: {}\n\
             - straggler: rank {}, from step {}, compute longer by {} ns\n\
             - per-rank compute jitter below {} ns; collective end jitter below {} ns\n\n\
             | rank | clock offset (ns) |\n|---:|---:|\n",
            self.seed,
            self.ranks,
            self.steps,
            self.steps - 1,
            self.kernels_per_step,
            self.straggler_rank,
            self.straggler_step,
            self.straggler_delay_ns,
            COMPUTE_JITTER_NS,
            END_JITTER_NS,
        );
        for (r, o) in self.offsets_ns.iter().enumerate() {
            let _ = writeln!(s, "| {r} | {o} |");
        }
        s
    }
}

/// Nanoseconds as Kineto's microsecond text, exactly.
fn micros(ns: i64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// splitmix64: a small deterministic generator (no dependency).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}
