//! `cargo xtask bench --ranks N [--mb-per-rank M]`: the tools on a synthetic N-rank job
//! (`cargo xtask synth-ranks`'s, generated into `target/bench/scratch/ranks-N-M/` once):
//! wall time and peak RSS of investigate, skip-stats and trace-info on the whole
//! directory, investigate's time ÷ (its time on one rank × N) (issue target ≤ 0.6 on 2
//! cores), and whether investigate's report names the planted straggler.

use std::path::Path;

use super::{Row, timed_rss};
use crate::synth_ranks::Job;

/// Builds the three tools in release mode and appends the rows.
pub(super) fn rows(
    root: &Path,
    scratch: &Path,
    ranks: usize,
    mb_per_rank: f64,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let release = super::build_release(
        root,
        "investigate, skip-stats, trace-info",
        &["-p", "investigate", "-p", "skip-stats", "-p", "trace-info"],
    )?;
    let bin = |name: &str| release.join(name).display().to_string();
    let job = Job::plan(ranks, mb_per_rank, 1);
    let dir = scratch.join(format!("ranks-{ranks}-{mb_per_rank}"));
    // The job is deterministic: one written before with the same plan is reused.
    let planted = std::fs::read_to_string(dir.join("PLANTED.md")).ok();
    if planted.as_deref() != Some(job.describe().as_str()) {
        eprintln!("writing {ranks} synthetic ranks into {}…", dir.display());
        crate::synth_ranks::write(&job, &dir, true)?;
    }
    let d = dir.display().to_string();
    let one = dir.join("rank0.pt.trace.json").display().to_string();
    let out = |name: &str| scratch.join(name).display().to_string();
    let inv_out = out("ranks-investigate");
    let what = format!("{ranks} synthetic ranks of {mb_per_rank} MB");

    let (one_secs, _) = timed_rss(
        &bin("investigate"),
        &[&one, "--out", &inv_out, "--overwrite"],
    )?;
    let (secs, kb) = timed_rss(&bin("investigate"), &[&d, "--out", &inv_out, "--overwrite"])?;
    rows.push(Row {
        what: format!("investigate, {what}: time, peak RSS"),
        value: format!("{secs:.2} s, {} MB", kb / 1024),
        target: "peak RSS < 1 GB at 1,024 × 5 MB".into(),
    });
    rows.push(Row {
        what: format!("investigate, {what}: time ÷ (one rank's time × {ranks})"),
        value: format!(
            "{:.2} ({secs:.2} s vs {one_secs:.3} s × {ranks})",
            secs / (one_secs * ranks as f64)
        ),
        target: "≤ 0.6".into(),
    });
    let report = std::fs::read_to_string(Path::new(&inv_out).join("report.md"))
        .map_err(|e| format!("{inv_out}/report.md: {e}"))?;
    let expected = format!(
        "Straggler: rank {} arrives late at the last collective of",
        job.straggler_rank
    );
    let found = report
        .lines()
        .find(|l| l.contains(&expected))
        .map(|l| l.trim_start_matches("- ").to_owned());
    rows.push(Row {
        what: format!(
            "investigate, {what}: planted straggler (rank {}, from step {}, {} ns)",
            job.straggler_rank, job.straggler_step, job.straggler_delay_ns
        ),
        value: found.unwrap_or_else(|| "NOT FOUND".to_owned()),
        target: "found".into(),
    });
    let skip_out = out("ranks-skip-stats");
    std::fs::create_dir_all(&skip_out).map_err(|e| format!("{skip_out}: {e}"))?;
    for (tool, args) in [
        (
            "skip-stats",
            vec![d.as_str(), "--out", &skip_out, "--overwrite"],
        ),
        ("trace-info", vec![d.as_str()]),
    ] {
        let (secs, kb) = timed_rss(&bin(tool), &args)?;
        rows.push(Row {
            what: format!("{tool}, {what}: time, peak RSS"),
            value: format!("{secs:.2} s, {} MB", kb / 1024),
            target: "-".into(),
        });
    }
    Ok(())
}
