//! `cargo xtask bench --ranks N [--mb-per-rank M] [--python PATH] [--no-profile-model]`:
//! the tools on a synthetic N-rank job (`cargo xtask synth-ranks`'s, generated into
//! `target/bench/scratch/ranks-N-M/` once): wall time and peak RSS of investigate,
//! profile-model --analysis stragglers, skip-stats and trace-info on the whole directory,
//! investigate's time ÷ (its time on one rank × N) (issue target ≤ 0.6 on 2 cores), and
//! whether investigate's report and profile-model name the planted straggler. With a
//! Python that has HTA 0.5.0 (`--python PATH` or `TRACEWISE_HTA_PYTHON`), HTA's
//! `get_potential_stragglers` and profile-model's on 8 and 64 synthetic ranks of the same
//! size (`hta_stragglers.py` beside this file). `--no-profile-model` leaves out
//! profile-model's rows (its release build is the workspace's polars: long on 2 cores).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use super::{Row, timed_rss};
use crate::synth_ranks::Job;

/// Builds the tools in release mode and appends the rows.
pub(super) fn rows(
    root: &Path,
    scratch: &Path,
    ranks: usize,
    mb_per_rank: f64,
    python: Option<PathBuf>,
    with_profile_model: bool,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let release = super::build_release(
        root,
        "investigate, skip-stats, trace-info",
        &["-p", "investigate", "-p", "skip-stats", "-p", "trace-info"],
    )?;
    // profile-model with the whole workspace's feature set, as the HTA bench builds it, so
    // that both share every polars crate.
    let profile_model = if with_profile_model {
        super::build_release(
            root,
            "profile-model",
            &["--workspace", "--bin", "profile-model"],
        )?;
        Some(release.join("profile-model").display().to_string())
    } else {
        None
    };
    let bin = |name: &str| release.join(name).display().to_string();
    let (job, dir) = job_dir(scratch, ranks, mb_per_rank)?;
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
    profile_model_rows(profile_model.as_deref(), &job, &dir, &what, rows)?;
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
    let python = python.or_else(|| std::env::var_os("TRACEWISE_HTA_PYTHON").map(PathBuf::from));
    match python {
        Some(python) => hta_rows(
            root,
            &python,
            profile_model.as_deref(),
            scratch,
            mb_per_rank,
            rows,
        )?,
        None => rows.push(Row {
            what: "HTA 0.5.0 get_potential_stragglers on 8 and 64 synthetic ranks".into(),
            value: "not run: --python PATH (or TRACEWISE_HTA_PYTHON) with HTA 0.5.0".into(),
            target: "-".into(),
        }),
    }
    Ok(())
}

/// The job of `ranks` ranks of `mb_per_rank` MB, seed 1, written under `scratch` once
/// (a job written before with the same plan is reused: it is deterministic).
fn job_dir(scratch: &Path, ranks: usize, mb_per_rank: f64) -> Result<(Job, PathBuf), String> {
    let job = Job::plan(ranks, mb_per_rank, 1);
    let dir = scratch.join(format!("ranks-{ranks}-{mb_per_rank}"));
    let planted = std::fs::read_to_string(dir.join("PLANTED.md")).ok();
    if planted.as_deref() != Some(job.describe().as_str()) {
        eprintln!("writing {ranks} synthetic ranks into {}…", dir.display());
        crate::synth_ranks::write(&job, &dir, true)?;
    }
    Ok((job, dir))
}

/// profile-model --analysis stragglers on `dir`: time, peak RSS and the ranks it names.
fn profile_model_rows(
    profile_model: Option<&str>,
    job: &Job,
    dir: &Path,
    what: &str,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let Some(profile_model) = profile_model else {
        rows.push(Row {
            what: format!("profile-model --analysis stragglers, {what}"),
            value: "not run (--no-profile-model)".into(),
            target: "-".into(),
        });
        return Ok(());
    };
    let d = dir.display().to_string();
    let (secs, kb, stdout) =
        timed_rss_stdout(profile_model, &[&d, "--analysis", "stragglers", "--json"])?;
    let json = serde_json::from_slice::<serde_json::Value>(&stdout).unwrap_or_default();
    let hta_rule = json["stragglers"]["ranks"].clone();
    let ours: Vec<String> = json["ours"]["stragglers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            format!(
                "rank {} from step {} by {:.0} µs",
                s["rank"], s["first_step"], s["late_by_us"]
            )
        })
        .collect();
    let named = format!(
        "HTA's rule: {hta_rule}; ours (clocks corrected): {}",
        if ours.is_empty() {
            "none".to_owned()
        } else {
            ours.join(", ")
        }
    );
    rows.push(Row {
        what: format!("profile-model --analysis stragglers, {what}: time, peak RSS"),
        value: format!("{secs:.2} s, {} MB", kb / 1024),
        target: "peak RSS < 1 GB at 1,024 × 5 MB".into(),
    });
    rows.push(Row {
        what: format!(
            "profile-model --analysis stragglers, {what}: ranks named (planted: {})",
            job.straggler_rank
        ),
        value: named,
        target: "the planted rank".into(),
    });
    Ok(())
}

/// HTA 0.5.0's `get_potential_stragglers` beside profile-model's on 8 and 64 ranks.
fn hta_rows(
    root: &Path,
    python: &Path,
    profile_model: Option<&str>,
    scratch: &Path,
    mb_per_rank: f64,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let script = root.join("xtask/src/bench/hta_stragglers.py");
    let (python, script) = (python.display().to_string(), script.display().to_string());
    for ranks in [8, 64] {
        let (job, dir) = job_dir(scratch, ranks, mb_per_rank)?;
        let what = format!("{ranks} synthetic ranks of {mb_per_rank} MB");
        let d = dir.display().to_string();
        let (secs, kb, stdout) = timed_rss_stdout(&python, &["-W", "ignore", &script, &d])?;
        let said = String::from_utf8_lossy(&stdout);
        rows.push(Row {
            what: format!("HTA 0.5.0 load + get_potential_stragglers, {what}: time, peak RSS"),
            value: format!("{secs:.2} s, {} MB", kb / 1024),
            target: "-".into(),
        });
        rows.push(Row {
            what: format!(
                "HTA 0.5.0 get_potential_stragglers, {what}: ranks named (planted: {})",
                job.straggler_rank
            ),
            value: said
                .lines()
                .find(|l| l.starts_with("stragglers"))
                .unwrap_or("no output")
                .to_owned(),
            target: "-".into(),
        });
        profile_model_rows(profile_model, &job, &dir, &what, rows)?;
    }
    Ok(())
}

/// [`timed_rss`], keeping the program's stdout.
fn timed_rss_stdout(program: &str, args: &[&str]) -> Result<(f64, u64, Vec<u8>), String> {
    let t = Instant::now();
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(program)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("/usr/bin/time: {e}"))?;
    let secs = t.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!(
            "{program} {args:?} failed: {}: {stderr}",
            out.status
        ));
    }
    let kb = stderr
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .ok_or_else(|| format!("{program}: no RSS figure in {stderr:?}"))?;
    Ok((secs, kb, out.stdout))
}
