//! `cargo xtask bench --pipeline`: the whole-process cost of the tools that run several
//! analyses on one load, each as a ratio to the tool that only loads and summarises:
//! investigate ÷ skip-stats on `hta-v100-2rank-large` (target ≤ 2×), investigate ÷
//! trace-info on the largest shared XSpace, and compare of a capture with itself ÷ two
//! skip-stats runs on it (target ≤ 2.5×), investigate ÷ investigate with the causes'
//! replays turned off (`TRACEWISE_REPLAY=0`: what the replays of every scenario add,
//! target ≤ 1.25×), and investigate --what-if ÷ investigate (one more scenario, target
//! ≤ 1.25×). Runs alternate between the two tools of a row,
//! so load on the machine falls on both alike; each figure is the median.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::{Row, median, run_quiet, timed_rss};

/// The Kineto capture of the investigate and compare rows, relative to the traces folder.
const KINETO: &str = "pytorch/hta-v100-2rank-large/df_index_resolver.json.gz";

/// Builds the four tools in release mode and appends the rows.
pub(super) fn rows(
    root: &Path,
    traces: &Path,
    scratch: &Path,
    runs: usize,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let release = super::build_release(
        root,
        "skip-stats, trace-info, investigate, compare",
        &[
            "-p",
            "skip-stats",
            "--bin",
            "skip-stats",
            "-p",
            "trace-info",
            "--bin",
            "trace-info",
            "-p",
            "investigate",
            "--bin",
            "investigate",
            "-p",
            "compare-tool",
            "--bin",
            "compare",
        ],
    )?;
    let bin = |name: &str| release.join(name).display().to_string();
    let kineto = traces.join(KINETO);
    if !kineto.is_file() {
        return Err(format!(
            "{}: not found (TRACEWISE_TRACES)",
            kineto.display()
        ));
    }
    let k = kineto.display().to_string();
    let out = |name: &str| scratch.join(name).display().to_string();
    let (inv_out, cmp_out) = (out("pipeline-investigate"), out("pipeline-compare"));
    // skip-stats writes its rows.csv too: into the scratch folder, like the others' reports.
    let skip_out = out("pipeline-skip-stats");
    let skip_args = [k.as_str(), "--out", &skip_out, "--overwrite"];
    let (skip, inv, cmp) = (bin("skip-stats"), bin("investigate"), bin("compare"));

    let (a, b) = alternate(
        runs,
        || run_quiet(&inv, &[&k, "--out", &inv_out, "--overwrite"]),
        || run_quiet(&skip, &skip_args),
    )?;
    push_ratio(rows, "investigate ÷ skip-stats", KINETO, a, b, "≤ 2×");

    // The replays of every ranked cause's scenario (issue #42, must-be-shown 5):
    // investigate against itself with the replays turned off (`TRACEWISE_REPLAY=0`), at
    // least 7 runs each, with the load average before and after.
    let load_before = load_average();
    let (a, b) = alternate(
        runs.max(7),
        || run_quiet(&inv, &[&k, "--out", &inv_out, "--overwrite"]),
        || {
            let status = std::process::Command::new(&inv)
                .args([k.as_str(), "--out", &inv_out, "--overwrite"])
                .env("TRACEWISE_REPLAY", "0")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .map_err(|e| format!("{inv}: {e}"))?;
            if status.success() {
                Ok(())
            } else {
                Err(format!("{inv} (TRACEWISE_REPLAY=0) failed: {status}"))
            }
        },
    )?;
    push_ratio(
        rows,
        &format!(
            "investigate ÷ investigate without the replays (TRACEWISE_REPLAY=0), {} runs \
             each, load average {load_before} before, {} after",
            runs.max(7),
            load_average()
        ),
        KINETO,
        a,
        b,
        "≤ 1.25×",
    );

    // The what-if replay (issue #42): the capture loaded a second time, its graph built
    // and replayed twice (unchanged and changed).
    let what_if = ["--what-if", "gemm=2x,launch=5us"];
    let (a, b) = alternate(
        runs,
        || {
            run_quiet(
                &inv,
                &[&k, "--out", &inv_out, "--overwrite", what_if[0], what_if[1]],
            )
        },
        || run_quiet(&inv, &[&k, "--out", &inv_out, "--overwrite"]),
    )?;
    push_ratio(
        rows,
        "investigate --what-if ÷ investigate",
        KINETO,
        a,
        b,
        "≤ 1.25×",
    );

    let (a, b) = alternate(
        runs,
        || run_quiet(&cmp, &[&k, &k, "--out", &cmp_out, "--overwrite"]),
        || {
            run_quiet(&skip, &skip_args)?;
            run_quiet(&skip, &skip_args)
        },
    )?;
    push_ratio(
        rows,
        "compare (the capture with itself) ÷ two skip-stats runs",
        KINETO,
        a,
        b,
        "≤ 2.5×",
    );
    let (_, rss_kb) = timed_rss(&cmp, &[&k, &k, "--out", &cmp_out, "--overwrite"])?;
    rows.push(Row {
        what: format!("compare peak RSS, {KINETO} with itself"),
        value: format!("{} MB", rss_kb / 1024),
        target: "-".into(),
    });

    if let Some(xspace) = largest_xspace(traces) {
        let x = xspace.display().to_string();
        let name = xspace
            .strip_prefix(traces)
            .unwrap_or(&xspace)
            .display()
            .to_string();
        let info = bin("trace-info");
        let (a, b) = alternate(
            runs,
            || run_quiet(&inv, &[&x, "--out", &inv_out, "--overwrite"]),
            || run_quiet(&info, &[&x]),
        )?;
        push_ratio(rows, "investigate ÷ trace-info", &name, a, b, "-");
    }
    Ok(())
}

/// The 1-minute load average (`/proc/loadavg`), or `?`.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned())
}

/// Median wall seconds of `a` and of `b`, run in turn `runs` times each.
fn alternate(
    runs: usize,
    mut a: impl FnMut() -> Result<(), String>,
    mut b: impl FnMut() -> Result<(), String>,
) -> Result<(f64, f64), String> {
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let t = Instant::now();
        a()?;
        ta.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        b()?;
        tb.push(t.elapsed().as_secs_f64());
    }
    Ok((median(ta), median(tb)))
}

fn push_ratio(rows: &mut Vec<Row>, what: &str, input: &str, a: f64, b: f64, target: &str) {
    rows.push(Row {
        what: format!("{what}, {input}"),
        value: format!("{:.2}× ({a:.3} s vs {b:.3} s)", a / b),
        target: target.into(),
    });
}

/// The largest `.xplane.pb` under `jax/`.
fn largest_xspace(traces: &Path) -> Option<PathBuf> {
    let mut found: Vec<(u64, PathBuf)> = Vec::new();
    let mut dirs = vec![traces.join("jax")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.to_string_lossy().ends_with(".xplane.pb") {
                found.push((entry.metadata().map_or(0, |m| m.len()), path));
            }
        }
    }
    found.into_iter().max().map(|(_, p)| p)
}
