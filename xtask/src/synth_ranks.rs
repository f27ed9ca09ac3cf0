//! `cargo xtask synth-ranks`: writes a synthetic N-rank Kineto job (the generator is
//! `test_support::synth_ranks`, which tests use too) into a directory, through
//! `output-file` (a staged directory renamed to `DIR`), so an interrupted run leaves no
//! half-written job under that name.

use std::path::{Path, PathBuf};

pub(crate) use test_support::synth_ranks::Job;
#[cfg(test)]
use test_support::synth_ranks::{COMPUTE_JITTER_NS, END_JITTER_NS};

/// Writes every file of `job` into `dir`, through `output-file` (staged beside it, put in
/// place when complete). An existing `dir` is replaced only with `overwrite` and only when
/// a tool wrote it.
pub(crate) fn write(job: &Job, dir: &Path, overwrite: bool) -> Result<(), String> {
    let rules = output_file::Rules {
        overwrite,
        inputs: &[],
    };
    let err = |e: output_file::Error| format!("{e:#}");
    let out = output_file::DirOutput::create(dir, &rules).map_err(err)?;
    for (name, bytes) in job.files() {
        out.write(name, &bytes).map_err(err)?;
    }
    out.commit().map_err(err)
}

/// `cargo xtask synth-ranks --ranks N --out DIR [--mb-per-rank M] [--seed S] [--overwrite]`
/// (`--overwrite` replaces a job written before, never another directory).
pub(crate) fn main(args: &[String]) -> Result<(), String> {
    let mut ranks = None;
    let mut out = None;
    let mut mb = 1.0;
    let mut seed = 1u64;
    let mut overwrite = false;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match arg.as_str() {
            "--ranks" => {
                ranks = Some(
                    value("--ranks")?
                        .parse::<usize>()
                        .map_err(|e| format!("--ranks: {e}"))?,
                )
            }
            "--out" => out = Some(PathBuf::from(value("--out")?)),
            "--mb-per-rank" => {
                mb = value("--mb-per-rank")?
                    .parse::<f64>()
                    .map_err(|e| format!("--mb-per-rank: {e}"))?
            }
            "--seed" => {
                seed = value("--seed")?
                    .parse::<u64>()
                    .map_err(|e| format!("--seed: {e}"))?
            }
            "--overwrite" => overwrite = true,
            other => return Err(format!("synth-ranks: unknown argument `{other}`")),
        }
    }
    let ranks = ranks
        .filter(|&n| n > 0)
        .ok_or("synth-ranks: --ranks N (N ≥ 1) is required")?;
    let out = out.ok_or("synth-ranks: --out DIR is required")?;
    let job = Job::plan(ranks, mb, seed);
    write(&job, &out, overwrite)?;
    eprint!("{}", job.describe());
    eprintln!("wrote {}", out.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cross-rank analysis, run on a written job through the loader as the tools run
    /// it, finds what was planted: the straggler, its first step and its delay (within
    /// the compute jitter both ways plus the collective end jitter), and every clock
    /// offset within 5 µs.
    #[test]
    fn cross_rank_finds_what_was_planted() {
        let tmp = tempfile::tempdir().expect("a temporary directory");
        // Small files, and one with steps long enough that a fixed threshold would miss
        // a straggler that costs each step a few per cent.
        for (seed, mb) in [(1, 0.05), (7, 0.05), (3, 1.0)] {
            let dir = tmp.path().join(format!("job{seed}"));
            let job = Job::plan(16, mb, seed);
            write(&job, &dir, false).expect("the job is written");
            let timelines: Vec<analysis::RankTimeline> = load::map_each(&dir, |l| {
                analysis::rank_timeline(&l.capture, &l.path.to_string_lossy(), l.rank)
            })
            .expect("the job loads")
            .into_iter()
            .map(|r| r.expect("every rank loads").2)
            .collect();
            assert_eq!(timelines.len(), 16);
            let x = analysis::cross_rank(
                &timelines,
                &analysis::CrossRankConfig {
                    late_threshold: None,
                },
            )
            .expect("16 ranks");
            assert_eq!(x.matched_collectives, 2 * job.steps);
            assert!(!x.collective_counts_differ);
            for (r, row) in x.ranks.iter().enumerate() {
                assert_eq!(row.rank, Some(r as i64));
                let got = row.clock_offset.expect("an offset").0;
                assert!(
                    (got - job.offsets_ns[r]).abs() <= 5_000,
                    "seed {seed} rank {r}: offset {got} ns, planted {} ns",
                    job.offsets_ns[r]
                );
            }
            assert_eq!(x.stragglers.len(), 1, "seed {seed}: {:?}", x.stragglers);
            let s = &x.stragglers[0];
            assert_eq!(s.rank, Some(job.straggler_rank as i64));
            assert_eq!(s.first_step, job.straggler_step as i64);
            assert_eq!(s.late_steps, job.steps - job.straggler_step);
            let tolerance = COMPUTE_JITTER_NS + END_JITTER_NS;
            assert!(
                (s.late_by.0 - job.straggler_delay_ns).abs() <= tolerance,
                "seed {seed}: late by {} ns, planted {} ns",
                s.late_by.0,
                job.straggler_delay_ns
            );
            // The straggler is the last to arrive at every all-reduce from its step on.
            let last: Vec<Option<i64>> = x
                .skew
                .iter()
                .filter(|k| k.index % 2 == 1 && k.step >= Some(job.straggler_step as i64))
                .map(|k| k.last_rank)
                .collect();
            assert_eq!(
                last,
                vec![Some(job.straggler_rank as i64); job.steps - job.straggler_step]
            );
        }
    }

    #[test]
    fn same_seed_same_bytes() {
        let a = Job::plan(4, 0.01, 3);
        let b = Job::plan(4, 0.01, 3);
        assert_eq!(a.rank_trace(2), b.rank_trace(2));
        assert_ne!(a.rank_trace(2), Job::plan(4, 0.01, 4).rank_trace(2));
    }
}
