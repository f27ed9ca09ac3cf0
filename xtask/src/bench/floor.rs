//! `cargo xtask bench --floor`: every reader, skip-stats and compaction on
//! `df_index_resolver.json.gz` against `zcat` of it (the one-stream inflate floor), and
//! trace-info on a multi-member gzip twin of the same JSON against its single-member twin
//! (the parallel inflate). The commands run interleaved, round after round, so that a
//! change of the machine's load falls on all of them alike; each row gives the median and
//! the quartiles, and the load average is printed before and after.

use std::io::{Read, Write};
use std::path::Path;
use std::time::Instant;

use super::{Row, run_quiet};

/// Members of the multi-member twin.
const MEMBERS: usize = 8;

/// (median, lower quartile, upper quartile) of `v` (not empty).
fn quartiles(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.25), at(0.75))
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn gzip_file(path: &Path, parts: &[&[u8]]) -> Result<(), String> {
    let mut out = Vec::new();
    for part in parts {
        let mut w = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        w.write_all(part).map_err(|e| format!("gzip: {e}"))?;
        out.extend(w.finish().map_err(|e| format!("gzip: {e}"))?);
    }
    std::fs::write(path, out).map_err(|e| format!("{}: {e}", path.display()))
}

/// The rows (see the module's comment); `runs` rounds, at least 7.
pub(super) fn rows(
    release: &Path,
    traces: &Path,
    scratch: &Path,
    runs: usize,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let runs = runs.max(7);
    let large = traces.join("pytorch/hta-v100-2rank-large/df_index_resolver.json.gz");
    if !large.is_file() {
        return Err(format!("{} is missing", large.display()));
    }
    let large_s = large.display().to_string();
    // The twins: the same JSON text as one gzip member and as MEMBERS members.
    let mut text = Vec::new();
    chrome_reader::open(&large)
        .map_err(|e| e.to_string())?
        .read_to_end(&mut text)
        .map_err(|e| format!("{large_s}: {e}"))?;
    let single = scratch.join("twin_single.json.gz");
    let multi = scratch.join("twin_multi.json.gz");
    gzip_file(&single, &[&text])?;
    let step = text.len().div_ceil(MEMBERS);
    gzip_file(&multi, &text.chunks(step).collect::<Vec<_>>())?;
    drop(text);
    let (single_s, multi_s) = (single.display().to_string(), multi.display().to_string());
    let scratch_s = scratch.display().to_string();
    let compacted = scratch
        .join("floor_compacted.json.gz")
        .display()
        .to_string();
    let bin = |name: &str| release.join(name).display().to_string();
    let (trace_info, analyze, skip, compact) = (
        bin("trace-info"),
        bin("analyze-profile"),
        bin("skip-stats"),
        bin("compact-cuda-graph-trace"),
    );
    let zcat = format!("zcat '{large_s}' > /dev/null");
    let zcat_single = format!("zcat '{single_s}' > /dev/null");
    // (what, program, arguments, target against zcat)
    let commands: Vec<(&str, &str, Vec<&str>, &str)> = vec![
        (
            "zcat df_index_resolver.json.gz",
            "sh",
            vec!["-c", &zcat],
            "-",
        ),
        ("trace-info", &trace_info, vec![&large_s], "≤ 0.6"),
        (
            "analyze-profile",
            &analyze,
            vec!["--trace-file", &large_s],
            "≤ 0.6",
        ),
        (
            "skip-stats",
            &skip,
            vec![&large_s, "--out", &scratch_s, "--overwrite"],
            "≤ 0.7",
        ),
        (
            "compact-cuda-graph-trace",
            &compact,
            vec![&large_s, "-o", &compacted, "--overwrite"],
            "≤ 1.3",
        ),
        (
            "zcat of the single-member twin",
            "sh",
            vec!["-c", &zcat_single],
            "-",
        ),
        (
            "trace-info, single-member twin",
            &trace_info,
            vec![&single_s],
            "-",
        ),
        (
            "trace-info, 8-member twin",
            &trace_info,
            vec![&multi_s],
            "-",
        ),
    ];
    let before = load_average();
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); commands.len()];
    for _ in 0..runs {
        for (i, (_, program, args, _)) in commands.iter().enumerate() {
            let t = Instant::now();
            run_quiet(program, args)?;
            times[i].push(t.elapsed().as_secs_f64());
        }
    }
    let after = load_average();
    let stats: Vec<(f64, f64, f64)> = times.into_iter().map(quartiles).collect();
    let zcat = stats[0].0;
    rows.push(Row {
        what: format!("load average (1, 5, 15 min) before / after the {runs} interleaved rounds"),
        value: format!("{before} / {after}"),
        target: "-".into(),
    });
    for (i, (what, _, _, target)) in commands.iter().enumerate() {
        let (median, q1, q3) = stats[i];
        let value = if i < 5 {
            format!(
                "{median:.3} s (quartiles {q1:.3}–{q3:.3}), {:.2}× zcat",
                median / zcat
            )
        } else {
            format!("{median:.3} s (quartiles {q1:.3}–{q3:.3})")
        };
        rows.push(Row {
            what: format!("{what}, whole process, median of {runs}"),
            value,
            target: (*target).into(),
        });
    }
    rows.push(Row {
        what: "trace-info: 8-member twin / single-member twin (parallel inflate)".into(),
        value: format!("{:.2}×", stats[7].0 / stats[6].0),
        target: "< 1 on two cores or more".into(),
    });
    let _ = std::fs::remove_file(&single);
    let _ = std::fs::remove_file(&multi);
    Ok(())
}
