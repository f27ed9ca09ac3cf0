//! The bench rows of the release tools on the large real trace and on the synthetic one,
//! split from `bench::main`.

use std::path::Path;

use super::*;

/// The rows of `--reader`: the tools against `zcat` and the compaction on the large real
/// trace and the CUDA-graph one, the compaction's peak RSS, and the model build by threads.
pub(super) fn reader_rows(
    release: &Path,
    traces: &Path,
    out_dir: &Path,
    scratch: &Path,
    synthetic_mb: u64,
    runs: usize,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let read_speed = release.join("examples/read_speed");
    let scratch_s = scratch.display().to_string();
    let large = traces.join("pytorch/hta-v100-2rank-large/df_index_resolver.json.gz");
    if large.is_file() {
        let large_s = large.display().to_string();
        let zcat = median_secs(runs, || {
            run_quiet("sh", &["-c", &format!("zcat '{large_s}' > /dev/null")])
        })?;
        rows.push(Row {
            what: "zcat df_index_resolver.json.gz (decompression floor)".into(),
            value: format!("{:.3} s", zcat),
            target: "-".into(),
        });
        tool_ratio_rows(release, &large_s, &scratch_s, zcat, runs, rows)?;
        compact_rows(release, &large, zcat, scratch, runs, rows)?;
        simd_json_rows(&large, runs, rows)?;
    }
    let cudagraph = traces.join("pytorch/hta-cudagraph-a100/rank0.json.gz");
    if cudagraph.is_file() {
        let cudagraph_s = cudagraph.display().to_string();
        let zcat = median_secs(runs, || {
            run_quiet("sh", &["-c", &format!("zcat '{cudagraph_s}' > /dev/null")])
        })?;
        compact_rows(release, &cudagraph, zcat, scratch, runs, rows)?;
    }
    compact_rss_rows(release, traces, scratch, runs, rows)?;
    let synthetic = synthetic_trace(out_dir, synthetic_mb)?;
    model_build_rows(&read_speed, &synthetic, runs, rows)?;
    Ok(())
}

/// The rows of the large real trace (`df_index_resolver.json.gz`): the tools against
/// `zcat`, the compaction, the Python reference script, and the reader's throughput on the
/// uncompressed JSON pinned to one core.
pub(super) fn large_trace_rows(
    root: &Path,
    release: &Path,
    out_dir: &Path,
    scratch: &Path,
    large: &Path,
    runs: usize,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let analyze = release.join("analyze-profile");
    let read_speed = release.join("examples/read_speed");
    let scratch_s = scratch.display().to_string();
    let large_s = large.display().to_string();
    let zcat = median_secs(runs, || {
        run_quiet("sh", &["-c", &format!("zcat '{large_s}' > /dev/null")])
    })?;
    let ours = median_secs(runs, || {
        run_quiet(analyze.to_str().unwrap_or(""), &["--trace-file", &large_s])
    })?;
    let compat = median_secs(runs, || {
        run_quiet(
            analyze.to_str().unwrap_or(""),
            &["--compat", "--trace-file", &large_s],
        )
    })?;
    rows.push(Row {
        what: "zcat df_index_resolver.json.gz (decompression floor)".into(),
        value: format!("{:.3} s", zcat),
        target: "-".into(),
    });
    tool_ratio_rows(release, &large_s, &scratch_s, zcat, runs, rows)?;
    rows.push(Row {
        what: "analyze-profile --compat / zcat".into(),
        value: format!("{:.2}× ({:.3} s)", compat / zcat, compat),
        target: "≤ 1.5".into(),
    });
    let compact = release.join("compact-cuda-graph-trace");
    let compacted = scratch.join("compacted.json.gz").display().to_string();
    let compact_time = median_secs(runs, || {
        run_quiet(
            compact.to_str().unwrap_or(""),
            &[&large_s, "-o", &compacted, "--overwrite"],
        )
    })?;
    rows.push(Row {
        what: "compact-cuda-graph-trace / zcat".into(),
        value: format!("{:.2}× ({:.3} s)", compact_time / zcat, compact_time),
        target: "≤ 3".into(),
    });
    let script = root.join("../shared/reference/analyze_profile.py");
    if script.is_file() {
        let script_s = script.display().to_string();
        let python = median_secs(3, || {
            run_quiet("python3", &[&script_s, "--trace_file", &large_s])
        })?;
        rows.push(Row {
            what: "Python reference script / analyze-profile (default mode)".into(),
            value: format!(
                "{:.1}× faster ({:.3} s vs {:.3} s)",
                python / ours,
                python,
                ours
            ),
            target: "≥ 5".into(),
        });
        rows.push(Row {
            what: "Python reference script / analyze-profile --compat".into(),
            value: format!(
                "{:.1}× faster ({:.3} s vs {:.3} s)",
                python / compat,
                python,
                compat
            ),
            target: "≥ 5".into(),
        });
    }
    // Reader throughput on uncompressed JSON, pinned to one core.
    let plain = out_dir.join("df_index_resolver.json");
    if !plain.is_file() {
        run_quiet(
            "sh",
            &["-c", &format!("zcat '{large_s}' > '{}'", plain.display())],
        )?;
    }
    let mbps = median_of(runs, || read_speed_mbps(&read_speed, "raw", &plain))?;
    rows.push(Row {
        what: "reader throughput, raw events, uncompressed JSON, 1 core".into(),
        value: format!("{mbps:.0} MB/s"),
        target: "≥ 400 MB/s".into(),
    });
    let mbps = median_of(runs, || read_speed_mbps(&read_speed, "model", &plain))?;
    rows.push(Row {
        what: "reader throughput, full model build, uncompressed JSON, 1 core".into(),
        value: format!("{mbps:.0} MB/s"),
        target: "-".into(),
    });
    Ok(())
}

/// The tools on the synthetic trace: time and peak RSS against its size.
pub(super) fn synthetic_tool_rows(
    release: &Path,
    synthetic: &Path,
    scratch: &Path,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let analyze = release.join("analyze-profile");
    let scratch_s = scratch.display().to_string();
    let size = std::fs::metadata(synthetic)
        .map_err(|e| e.to_string())?
        .len();
    let synth_s = synthetic.display().to_string();
    let (secs, rss_kb) = timed_rss(analyze.to_str().unwrap_or(""), &["--trace-file", &synth_s])?;
    rows.push(Row {
        what: format!(
            "analyze-profile on synthetic {:.2} GB: time",
            size as f64 / 1e9
        ),
        value: format!("{secs:.2} s"),
        target: "-".into(),
    });
    rows.push(Row {
        what: "analyze-profile on synthetic: peak RSS / JSON size".into(),
        value: format!(
            "{:.3} ({} MB)",
            rss_kb as f64 * 1024.0 / size as f64,
            rss_kb / 1024
        ),
        target: "≤ 0.5".into(),
    });
    let (secs, rss_kb) = timed_rss(
        analyze.to_str().unwrap_or(""),
        &["--compat", "--trace-file", &synth_s],
    )?;
    rows.push(Row {
        what: "analyze-profile --compat on synthetic: time, peak RSS / JSON size".into(),
        value: format!("{secs:.2} s, {:.3}", rss_kb as f64 * 1024.0 / size as f64),
        target: "≤ 0.5".into(),
    });

    let (secs, rss_kb) = timed_rss(
        release.join("skip-stats").to_str().unwrap_or(""),
        &[&synth_s, "--out", &scratch_s, "--overwrite"],
    )?;
    rows.push(Row {
        what: "skip-stats on synthetic: time, peak RSS / JSON size".into(),
        value: format!("{secs:.2} s, {:.3}", rss_kb as f64 * 1024.0 / size as f64),
        target: "-".into(),
    });
    let compacted = scratch
        .join("synthetic_compacted.json.gz")
        .display()
        .to_string();
    let (secs, rss_kb) = timed_rss(
        release
            .join("compact-cuda-graph-trace")
            .to_str()
            .unwrap_or(""),
        &[&synth_s, "-o", &compacted, "--overwrite"],
    )?;
    rows.push(Row {
        what: "compact-cuda-graph-trace on synthetic: time, peak RSS / JSON size".into(),
        value: format!("{secs:.2} s, {:.3}", rss_kb as f64 * 1024.0 / size as f64),
        target: "≤ 1.5 (RSS)".into(),
    });

    Ok(())
}
