//! `cargo xtask bench --hta`: profile-model against Holistic Trace Analysis 0.5.0 on the
//! same captures, whole processes (interpreter start, imports, load and the analyses), with
//! the peak RSS of each. HTA is not a dependency: the Python that has it installed is given
//! with `--python PATH` (or `TRACEWISE_HTA_PYTHON`); `hta_bench.py` beside this file is what
//! it runs.

use std::path::{Path, PathBuf};

use super::{Row, median, side_by_side, timed_rss};

/// The captures compared with HTA, relative to the traces directory.
const CAPTURES: [&str; 2] = ["pytorch/hta-v100-2rank-large", "pytorch/param-dlrm-8rank"];

/// Builds profile-model in release mode and appends the rows: each side's median wall time
/// and peak RSS, and the ratio.
pub(super) fn rows(
    root: &Path,
    traces: &Path,
    python: Option<PathBuf>,
    runs: usize,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let python = python
        .or_else(|| std::env::var_os("TRACEWISE_HTA_PYTHON").map(PathBuf::from))
        .ok_or(
            "--hta needs a Python with HolisticTraceAnalysis 0.5.0: --python PATH or \
             TRACEWISE_HTA_PYTHON (python -m venv /tmp/hta && /tmp/hta/bin/pip install \
             HolisticTraceAnalysis==0.5.0 'pandas<3')",
        )?;
    let script = root.join("xtask/src/bench/hta_bench.py");
    eprintln!("building profile-model (release)…");
    let status = super::cargo()
        .current_dir(root)
        // The whole workspace's feature set, as `cargo build --release --workspace` has
        // it, so that the two share every polars crate.
        .args([
            "build",
            "--release",
            "--quiet",
            "--workspace",
            "--bin",
            "profile-model",
        ])
        .status()
        .map_err(|e| format!("cargo build: {e}"))?;
    if !status.success() {
        return Err("cargo build --release --workspace --bin profile-model failed".into());
    }
    let ours = super::target_dir(root).join("release/profile-model");
    let ours_s = ours.display().to_string();
    let python_s = python.display().to_string();
    let script_s = script.display().to_string();
    for capture in CAPTURES {
        let dir = traces.join(capture);
        if !dir.is_dir() {
            return Err(format!("{}: missing (TRACEWISE_TRACES)", dir.display()));
        }
        let dir_s = dir.display().to_string();
        let name = capture.rsplit('/').next().unwrap_or(capture);
        eprintln!("{name}: profile-model and HTA, {runs} runs each…");
        // The two alternate, so that a change in the machine's speed during the runs
        // (on a shared VM it drifts by a fifth) falls on both sides of the ratio alike.
        let (mut ours, mut hta) = (Vec::new(), Vec::new());
        let (mut ours_rss, mut hta_rss) = (0, 0);
        for _ in 0..runs {
            let (s, kb) = timed_rss(&ours_s, &[&dir_s, "--analysis", "all"])?;
            ours.push(s);
            ours_rss = ours_rss.max(kb);
            let (s, kb) = timed_rss(&python_s, &["-W", "ignore", &script_s, &dir_s])?;
            hta.push(s);
            hta_rss = hta_rss.max(kb);
        }
        side_by_side(
            rows,
            [
                format!("{name}: profile-model --analysis all"),
                format!("{name}: HTA 0.5.0 load + the same analyses"),
                format!("{name}: HTA time / profile-model time"),
            ],
            (median(ours), ours_rss),
            (median(hta), hta_rss),
            "≥ 30×",
        );
    }
    Ok(())
}
