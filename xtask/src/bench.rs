//! `cargo xtask bench`: builds the tools in release mode and measures them against the
//! decompression floor (`zcat`), the Python reference script, and a large synthetic trace.
//!
//! Every figure is a median of several runs of whole commands (wall time), and peak
//! RSS comes from `/usr/bin/time -f %M`. Results go to stdout as a Markdown table and to
//! `target/bench/results.md`. The synthetic trace (about 1 GB) is generated into
//! `target/bench/` once and never committed.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::workspace_root;
use tool_rows::{large_trace_rows, reader_rows, synthetic_tool_rows};

mod floor;
mod hta;
mod nsys;
mod pipeline;
mod python;
mod ranks;
mod tool_rows;

struct Row {
    what: String,
    value: String,
    target: String,
}

/// A measure of one side: its median wall time (s) and largest peak RSS (KiB).
type Measured = (f64, u64);

/// The three rows of a side-by-side measure: `ours` and `theirs` (what each ran, and its
/// time and peak RSS), then `ratio` (theirs ÷ ours) against `target`.
fn side_by_side(
    rows: &mut Vec<Row>,
    [ours_what, theirs_what, ratio]: [String; 3],
    (o, o_kb): Measured,
    (t, t_kb): Measured,
    target: &str,
) {
    for (what, secs, kb) in [(ours_what, o, o_kb), (theirs_what, t, t_kb)] {
        rows.push(Row {
            what: format!("{what}, time / peak RSS"),
            value: format!("{secs:.3} s / {} MB", kb / 1024),
            target: String::new(),
        });
    }
    rows.push(Row {
        what: ratio,
        value: format!("{:.1}×", t / o),
        target: target.into(),
    });
}

/// The number after `flag` in `args` (`default` without the flag); `what` names what the
/// flag takes in the error.
fn number_arg<T: std::str::FromStr>(
    args: &[String],
    flag: &str,
    default: T,
    what: &str,
) -> Result<T, String> {
    match args.iter().position(|a| a == flag) {
        Some(i) => args
            .get(i + 1)
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("{flag} takes {what}")),
        None => Ok(default),
    }
}

pub fn main(args: &[String]) -> Result<(), String> {
    let quick = args.iter().any(|a| a == "--quick");
    // `--attribution`: only the attribute-kernels rows (a short run).
    let attribution_only = args.iter().any(|a| a == "--attribution");
    // `--reader`: only the rows of the reader's speed (tools ÷ zcat, model build by threads).
    let reader_only = args.iter().any(|a| a == "--reader");
    // `--floor [--runs N]`: only the tools on df_index_resolver against zcat, interleaved,
    // with quartiles and the load average, and the multi-member twin (see `floor`).
    let floor_only = args.iter().any(|a| a == "--floor");
    let floor_runs: usize = number_arg(args, "--runs", 9, "a number of rounds")?;
    // `--xplane`: only the xplane-reader rows (decode and load_capture: speed, peak RSS).
    let xplane_only = args.iter().any(|a| a == "--xplane");
    // `--synthetic-mb N`: the size of the synthetic trace (default 1000, 1 GB).
    let synthetic_mb: u64 = number_arg(args, "--synthetic-mb", 1000, "a number of MB")?;
    let runs = if quick { 3 } else { 5 };
    let root = workspace_root();
    let traces = std::env::var_os("TRACEWISE_TRACES")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/traces"));
    let traces = if traces.is_relative() {
        root.join(traces)
    } else {
        traces
    };
    let out_dir = root.join("target/bench");
    let scratch = out_dir.join("scratch");
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;

    // `--hta [--python PATH]`: only profile-model against Holistic Trace Analysis.
    if args.iter().any(|a| a == "--hta") {
        let python = python_arg(args)?;
        let mut rows = Vec::new();
        hta::rows(&root, &traces, python, runs, &mut rows)?;
        return print_rows(&out_dir, &rows);
    }

    // `--pipeline`: only investigate and compare against the tools that load once.
    if args.iter().any(|a| a == "--pipeline") {
        let mut rows = Vec::new();
        pipeline::rows(&root, &traces, &scratch, runs, &mut rows)?;
        return print_rows(&out_dir, &rows);
    }

    // `--python-package [--python PATH] [--runs N] [--methods A,B] [--capture NAME]`.
    if args.iter().any(|a| a == "--python-package") {
        return python_package(args, &traces, runs, &out_dir);
    }

    // `--ranks N [--mb-per-rank M]`: only the tools on a synthetic N-rank job.
    if let Some(i) = args.iter().position(|a| a == "--ranks") {
        let ranks: usize = args
            .get(i + 1)
            .and_then(|n| n.parse().ok())
            .filter(|&n| n > 1)
            .ok_or("--ranks takes a number of ranks (2 or more)")?;
        let mb: f64 = number_arg(args, "--mb-per-rank", 5.0, "a number of MB")?;
        let python = python_arg(args)?;
        let mut rows = Vec::new();
        let with_profile_model = !args.iter().any(|a| a == "--no-profile-model");
        ranks::rows(
            &root,
            &scratch,
            ranks,
            mb,
            python,
            with_profile_model,
            &mut rows,
        )?;
        return print_rows(&out_dir, &rows);
    }

    // `--nsys`: only nsys-reader's rows (load ÷ `sqlite3 .dump`, peak RSS ÷ file size).
    if args.iter().any(|a| a == "--nsys") {
        let mut rows = Vec::new();
        nsys::rows(&root, &traces, &out_dir, runs, &mut rows)?;
        return print_rows(&out_dir, &rows);
    }

    if attribution_only {
        let release = build_attribution_tools(&root)?;
        let mut rows = Vec::new();
        attribution_rows(&release, &traces, &scratch, runs, &mut rows)?;
        return print_rows(&out_dir, &rows);
    }

    if xplane_only {
        eprintln!("building decode_speed…");
        let status = cargo()
            .current_dir(&root)
            .args([
                "build",
                "--release",
                "--quiet",
                "-p",
                "xplane-reader",
                "--example",
                "decode_speed",
            ])
            .status()
            .map_err(|e| format!("cargo build: {e}"))?;
        if !status.success() {
            return Err("release build failed".to_string());
        }
        let decode_speed = target_dir(&root).join("release/examples/decode_speed");
        let mut rows = Vec::new();
        xplane_rows(&decode_speed, &out_dir, runs, &mut rows)?;
        return print_rows(&out_dir, &rows);
    }

    eprintln!("building release binaries…");
    // (package, target kind, target). With `--example` given, cargo builds only the named
    // targets: name the binaries too, or a fresh target dir has no analyze-profile.
    let targets = [
        ("analyze-profile", "--bin", "analyze-profile"),
        ("skip-stats", "--bin", "skip-stats"),
        (
            "compact-cuda-graph-trace",
            "--bin",
            "compact-cuda-graph-trace",
        ),
        ("chrome-reader", "--example", "read_speed"),
        ("xplane-reader", "--example", "decode_speed"),
        ("trace-info", "--bin", "trace-info"),
        ("attribute-kernels", "--bin", "attribute-kernels"),
    ];
    let mut build_args = vec!["build", "--release", "--quiet"];
    for (package, kind, target) in targets {
        // The reader rows run neither the xplane decoder nor attribute-kernels.
        if (reader_only || floor_only) && matches!(package, "xplane-reader" | "attribute-kernels") {
            continue;
        }
        build_args.extend(["-p", package, kind, target]);
    }
    let status = cargo()
        .current_dir(&root)
        .args(&build_args)
        .status()
        .map_err(|e| format!("cargo build: {e}"))?;
    if !status.success() {
        return Err("release build failed".to_string());
    }
    let release = target_dir(&root).join("release");
    let read_speed = release.join("examples/read_speed");
    let decode_speed = release.join("examples/decode_speed");

    let mut rows = Vec::new();
    if floor_only {
        floor::rows(&release, &traces, &scratch, floor_runs, &mut rows)?;
        return print_rows(&out_dir, &rows);
    }
    let large = traces.join("pytorch/hta-v100-2rank-large/df_index_resolver.json.gz");
    if reader_only {
        reader_rows(
            &release,
            &traces,
            &out_dir,
            &scratch,
            synthetic_mb,
            runs,
            &mut rows,
        )?;
        return print_rows(&out_dir, &rows);
    }
    if large.is_file() {
        large_trace_rows(&root, &release, &out_dir, &scratch, &large, runs, &mut rows)?;
    } else {
        eprintln!("{} not found: real-trace figures skipped", large.display());
    }

    let synthetic = synthetic_trace(&out_dir, synthetic_mb)?;
    model_build_rows(&read_speed, &synthetic, runs, &mut rows)?;
    synthetic_tool_rows(&release, &synthetic, &scratch, &mut rows)?;

    xplane_rows(&decode_speed, &out_dir, runs, &mut rows)?;
    attribution_rows(&release, &traces, &scratch, runs, &mut rows)?;
    print_rows(&out_dir, &rows)
}

/// analyze-profile (default mode), skip-stats and trace-info on the large real trace, as
/// ratios to `zcat` of it: with every core parsing, and with `--threads 1`.
fn tool_ratio_rows(
    release: &Path,
    large_s: &str,
    scratch_s: &str,
    zcat: f64,
    runs: usize,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let tools: [(&str, Vec<&str>, &str); 3] = [
        (
            "analyze-profile (default mode)",
            vec!["--trace-file", large_s],
            "≤ 1.0",
        ),
        (
            "skip-stats",
            vec![large_s, "--out", scratch_s, "--overwrite"],
            "≤ 1.0",
        ),
        ("trace-info", vec![large_s], "≤ 1.0"),
    ];
    for (what, args, target) in tools {
        let bin = release.join(what.split(' ').next().unwrap_or(what));
        let bin = bin.to_str().unwrap_or("");
        let all = median_secs(runs, || run_quiet(bin, &args))?;
        let mut one_args = vec!["--threads", "1"];
        one_args.extend(&args);
        let one = median_secs(runs, || run_quiet(bin, &one_args))?;
        rows.push(Row {
            what: format!("{what} / zcat (all cores)"),
            value: format!("{:.2}× ({all:.3} s)", all / zcat),
            target: target.into(),
        });
        rows.push(Row {
            what: format!("{what} --threads 1 / zcat"),
            value: format!("{:.2}× ({one:.3} s)", one / zcat),
            target: "-".into(),
        });
    }
    Ok(())
}

/// compact-cuda-graph-trace on `trace` (`zcat` of it took `zcat` s): time ÷ zcat, peak
/// RSS ÷ its JSON size, and the `.json.gz` it writes against gzip level 9 of the same JSON
/// (Python's `gzip.open` default, which the reference script writes with; zlib-rs here,
/// within 0.1% of Python's on hta-cudagraph-a100 rank 0: 1,257,926 vs 1,257,147 bytes).
fn compact_rows(
    release: &Path,
    trace: &Path,
    zcat: f64,
    scratch: &Path,
    runs: usize,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let compact = release.join("compact-cuda-graph-trace");
    let compact = compact.to_str().unwrap_or("");
    let out = scratch.join("compact_rows.json.gz");
    let (trace_s, out_s) = (trace.display().to_string(), out.display().to_string());
    let args = [trace_s.as_str(), "-o", &out_s, "--overwrite"];
    let mut times = Vec::new();
    let mut rss = Vec::new();
    for _ in 0..runs {
        let (secs, kb) = timed_rss(compact, &args)?;
        times.push(secs);
        rss.push(kb);
    }
    times.sort_by(f64::total_cmp);
    rss.sort_unstable();
    let (secs, kb) = (times[runs / 2], rss[runs / 2]);
    let json = {
        let mut text = Vec::new();
        std::io::Read::read_to_end(
            &mut chrome_reader::open(trace).map_err(|e| e.to_string())?,
            &mut text,
        )
        .map_err(|e| format!("{}: {e}", trace.display()))?;
        text.len() as u64
    };
    let ours = std::fs::metadata(&out)
        .map_err(|e| format!("{}: {e}", out.display()))?
        .len();
    let compacted = {
        let mut text = Vec::new();
        std::io::Read::read_to_end(
            &mut chrome_reader::open(&out).map_err(|e| e.to_string())?,
            &mut text,
        )
        .map_err(|e| format!("{}: {e}", out.display()))?;
        text
    };
    let mut level9 = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    level9
        .write_all(&compacted)
        .map_err(|e| format!("gzip: {e}"))?;
    let reference = level9.finish().map_err(|e| format!("gzip: {e}"))?.len() as u64;
    let name = trace
        .parent()
        .and_then(Path::file_name)
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    rows.push(Row {
        what: format!("compact-cuda-graph-trace {name} / zcat"),
        value: format!("{:.2}× ({secs:.3} s, zcat {zcat:.3} s)", secs / zcat),
        target: "≤ 1.5".into(),
    });
    rows.push(Row {
        what: format!("compact-cuda-graph-trace {name}: peak RSS / JSON size"),
        value: format!(
            "{:.2}× ({:.1} MB of {:.1} MB)",
            kb as f64 * 1024.0 / json as f64,
            kb as f64 * 1024.0 / 1e6,
            json as f64 / 1e6
        ),
        target: "≤ 1.5 (inputs over 10 MB)".into(),
    });
    rows.push(Row {
        what: format!("compact-cuda-graph-trace {name}: .json.gz size / gzip -9 of the same JSON"),
        value: format!(
            "{:.2}× ({ours} vs {reference} bytes)",
            ours as f64 / reference as f64
        ),
        target: "≤ 1.25".into(),
    });
    Ok(())
}

/// compact-cuda-graph-trace's peak RSS ÷ JSON size (median of `runs`) on every shared
/// PyTorch trace with over 10 MB of JSON (the target holds for each), and the largest.
fn compact_rss_rows(
    release: &Path,
    traces: &Path,
    scratch: &Path,
    runs: usize,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let compact = release.join("compact-cuda-graph-trace");
    let compact = compact.to_str().unwrap_or("");
    let out = scratch.join("compact_rss.json.gz").display().to_string();
    let mut files = Vec::new();
    let mut dirs = vec![traces.join("pytorch")];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = path.to_string_lossy();
            if path.is_dir() && !name.ends_with("reference-outputs") {
                dirs.push(path);
            } else if name.ends_with(".json") || name.ends_with(".json.gz") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut worst: Option<(f64, String)> = None;
    for file in files {
        let mut json = 0u64;
        let mut input = chrome_reader::open(&file).map_err(|e| e.to_string())?;
        let mut buf = vec![0u8; 1 << 20];
        loop {
            match std::io::Read::read(&mut input, &mut buf) {
                Ok(0) => break,
                Ok(n) => json += n as u64,
                Err(e) => return Err(format!("{}: {e}", file.display())),
            }
        }
        if json <= 10_000_000 {
            continue;
        }
        let file_s = file.display().to_string();
        let mut rss = Vec::new();
        for _ in 0..runs {
            rss.push(timed_rss(compact, &[&file_s, "-o", &out, "--overwrite"])?.1);
        }
        rss.sort_unstable();
        let ratio = rss[runs / 2] as f64 * 1024.0 / json as f64;
        let name = file
            .strip_prefix(traces)
            .unwrap_or(&file)
            .display()
            .to_string();
        rows.push(Row {
            what: format!("compact-cuda-graph-trace {name}: peak RSS / JSON size"),
            value: format!("{ratio:.2}× ({:.1} MB JSON)", json as f64 / 1e6),
            target: "≤ 1.5".into(),
        });
        if worst.as_ref().is_none_or(|(w, _)| ratio > *w) {
            worst = Some((ratio, name));
        }
    }
    if let Some((ratio, name)) = worst {
        rows.push(Row {
            what: "compact-cuda-graph-trace: largest peak RSS / JSON size, inputs over 10 MB"
                .into(),
            value: format!("{ratio:.2}× ({name})"),
            target: "≤ 1.5".into(),
        });
    }
    Ok(())
}

/// simd-json's tape and borrowed-value APIs against the reader's serde_json path, on the
/// splitter's batches of `trace` (see `simd_bench`).
fn simd_json_rows(trace: &Path, runs: usize, rows: &mut Vec<Row>) -> Result<(), String> {
    let (serde, tape, borrowed) = crate::simd_bench::measure(trace, runs)?;
    rows.push(Row {
        what: "event parsing, serde_json per event (the reader's path), 1 thread".into(),
        value: format!("{serde:.0} MB/s"),
        target: "-".into(),
    });
    rows.push(Row {
        what: "event parsing, simd-json tape per 1 MiB batch, 1 thread".into(),
        value: format!("{tape:.0} MB/s ({:.2}× serde_json)", tape / serde),
        target: "adopt if it wins".into(),
    });
    rows.push(Row {
        what: "event parsing, simd-json borrowed value per 1 MiB batch, 1 thread".into(),
        value: format!("{borrowed:.0} MB/s ({:.2}× serde_json)", borrowed / serde),
        target: "adopt if it wins".into(),
    });
    Ok(())
}

/// The synthetic Kineto trace of about `mb` MB, generated once into `out_dir`.
fn synthetic_trace(out_dir: &Path, mb: u64) -> Result<PathBuf, String> {
    let name = if mb == 1000 {
        "synthetic_1g.json".to_string()
    } else {
        format!("synthetic_{mb}m.json")
    };
    let synthetic = out_dir.join(name);
    if !synthetic.is_file() {
        eprintln!("generating {} (about {mb} MB)…", synthetic.display());
        write_synthetic(&synthetic, mb * 1_000_000)
            .map_err(|e| format!("{}: {e}", synthetic.display()))?;
    }
    Ok(synthetic)
}

/// Model build throughput on the synthetic trace (plain JSON, in the page cache after the
/// first run) with 1, 2 and all parsing threads, not pinned: splitting and building have
/// threads of their own whatever the number. At least 9 rounds: single runs on the 2-core
/// VM spread by ±25%. Beside the ratio of the medians, the median of each round's own
/// ratio, which a drift in the machine's speed over minutes does not move.
fn model_build_rows(
    read_speed: &Path,
    synthetic: &Path,
    runs: usize,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let size = std::fs::metadata(synthetic)
        .map_err(|e| format!("{}: {e}", synthetic.display()))?
        .len();
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut one = 0.0;
    let mut counts = vec![1, 2, all];
    counts.sort_unstable();
    counts.dedup();
    // Round after round of every count, so that a drift in the machine's speed (a fifth
    // between quiet spells on a shared VM) falls on every count alike.
    let mut speeds = vec![Vec::new(); counts.len()];
    for _ in 0..runs.max(9) {
        for (threads, speeds) in counts.iter().zip(&mut speeds) {
            speeds.push(model_build_mbps(read_speed, synthetic, *threads)?);
        }
    }
    let ones = speeds[0].clone();
    for (threads, speeds) in counts.into_iter().zip(speeds) {
        let per_round: Vec<f64> = speeds.iter().zip(&ones).map(|(s, o)| s / o).collect();
        let (low, high) = per_round
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), &r| (l.min(r), h.max(r)));
        let mbps = median(speeds);
        if threads == 1 {
            one = mbps;
        }
        let label = if threads == all {
            format!("{all} (all)")
        } else {
            threads.to_string()
        };
        rows.push(Row {
            what: format!(
                "model build, synthetic {:.2} GB plain JSON, {label} parsing thread(s)",
                size as f64 / 1e9
            ),
            value: if threads == 1 {
                format!("{mbps:.0} MB/s")
            } else {
                format!(
                    "{mbps:.0} MB/s ({:.2}× 1 thread; per round {:.2}×, {low:.2}–{high:.2})",
                    mbps / one,
                    median(per_round)
                )
            },
            target: if threads == 2 {
                "≥ 1.8× 1 thread on 2 cores".into()
            } else {
                "-".into()
            },
        });
    }
    Ok(())
}

fn model_build_mbps(bin: &Path, file: &Path, threads: usize) -> Result<f64, String> {
    let out = Command::new(bin)
        .arg("model")
        .arg(file)
        .arg(threads.to_string())
        .output()
        .map_err(|e| format!("read_speed: {e}"))?;
    parse_mbps(&out.stdout)
}

fn parse_mbps(stdout: &[u8]) -> Result<f64, String> {
    let text = String::from_utf8_lossy(stdout);
    text.split("\"mb_per_s\":")
        .nth(1)
        .and_then(|s| s.trim().trim_end_matches('}').parse().ok())
        .ok_or_else(|| format!("read_speed printed {text:?}"))
}

fn print_rows(out_dir: &Path, rows: &[Row]) -> Result<(), String> {
    let mut table =
        String::from("| measure (median of runs, measured) | value | target |\n|---|---|---|\n");
    for r in rows {
        table.push_str(&format!("| {} | {} | {} |\n", r.what, r.value, r.target));
    }
    print!("{table}");
    let results = out_dir.join("results.md");
    std::fs::write(&results, &table).map_err(|e| format!("{}: {e}", results.display()))?;
    Ok(())
}

/// Release builds of the two binaries the attribution rows run.
fn build_attribution_tools(root: &Path) -> Result<PathBuf, String> {
    let targets = [
        "-p",
        "trace-info",
        "--bin",
        "trace-info",
        "-p",
        "attribute-kernels",
        "--bin",
        "attribute-kernels",
    ];
    build_release(root, "trace-info, attribute-kernels", &targets)
}

/// attribute-kernels on the largest shared XSpace and on the OWLv2 Kineto trace: wall time
/// as a ratio to trace-info on the same file (both load the whole capture), and peak RSS.
fn attribution_rows(
    release: &Path,
    traces: &Path,
    scratch: &Path,
    runs: usize,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let attribute = release.join("attribute-kernels");
    let info = release.join("trace-info");
    let mut xplanes = Vec::new();
    if let Ok(dirs) = std::fs::read_dir(traces.join("jax")) {
        for dir in dirs.flatten() {
            for file in std::fs::read_dir(dir.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let path = file.path();
                if path.to_string_lossy().ends_with(".xplane.pb") {
                    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
                    xplanes.push((size, path));
                }
            }
        }
    }
    xplanes.sort();
    let owlv2 =
        traces.join("pytorch/tracelens-h100/google_owlv2-large-patch14-ensemble__1016001.json.gz");
    let mut inputs = Vec::new();
    if let Some((_, largest)) = xplanes.last() {
        inputs.push(largest.clone());
    }
    if owlv2.is_file() {
        inputs.push(owlv2);
    }
    if inputs.is_empty() {
        eprintln!(
            "{}: no shared traces: attribute-kernels rows skipped",
            traces.display()
        );
        return Ok(());
    }
    let out = scratch.join("attribution");
    // attribute-kernels replaces only a directory it wrote (one with `.tracewise-output`);
    // a scratch directory left by an older build has none, so it is cleared first.
    if !out.join(".tracewise-output").is_file() {
        let _ = std::fs::remove_dir_all(&out);
    }
    let out_s = out.display().to_string();
    for input in inputs {
        let input_s = input.display().to_string();
        let name = input
            .strip_prefix(traces)
            .unwrap_or(&input)
            .display()
            .to_string();
        let size = std::fs::metadata(&input).map_err(|e| e.to_string())?.len();
        let ours = median_secs(runs, || {
            run_quiet(
                attribute.to_str().unwrap_or(""),
                &[&input_s, "--out", &out_s, "--overwrite"],
            )
        })?;
        let base = median_secs(runs, || run_quiet(info.to_str().unwrap_or(""), &[&input_s]))?;
        let (_, rss_kb) = timed_rss(
            attribute.to_str().unwrap_or(""),
            &[&input_s, "--out", &out_s, "--overwrite"],
        )?;
        let (_, info_kb) = timed_rss(info.to_str().unwrap_or(""), &[&input_s])?;
        rows.push(Row {
            what: format!("attribute-kernels / trace-info, {name}"),
            value: format!("{:.2}× ({:.3} s vs {:.3} s)", ours / base, ours, base),
            target: "-".into(),
        });
        rows.push(Row {
            what: format!(
                "attribute-kernels peak RSS, {name} ({:.1} MB file)",
                size as f64 / 1e6
            ),
            value: format!(
                "{} MB ({:.2}× trace-info's {} MB)",
                rss_kb / 1024,
                rss_kb as f64 / info_kb.max(1) as f64,
                info_kb / 1024
            ),
            target: "-".into(),
        });
    }
    Ok(())
}

/// Decode throughput (one core) and peak RSS of xplane-reader on a synthetic XSpace of about
/// 400 MB, for `XSpace::read` alone and for the full `trace_model::Capture`.
fn xplane_rows(
    decode_speed: &Path,
    out_dir: &Path,
    runs: usize,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let synthetic = out_dir.join("synthetic_400m.xplane.pb");
    if !synthetic.is_file() {
        eprintln!("generating {} (about 400 MB)…", synthetic.display());
        crate::synth_xplane::write(&synthetic, 400_000_000)
            .map_err(|e| format!("{}: {e}", synthetic.display()))?;
    }
    let size = std::fs::metadata(&synthetic)
        .map_err(|e| format!("{}: {e}", synthetic.display()))?
        .len();
    let load = std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "unknown".to_owned());
    let synth_s = synthetic.display().to_string();
    let program = decode_speed.to_str().unwrap_or("");
    for (mode, what, rss_target) in [
        ("decode", "XSpace::read", "≤ 2"),
        ("capture", "load_capture (full model)", "≤ 1.5"),
    ] {
        let mbps = median_of(runs, || read_speed_mbps(decode_speed, mode, &synthetic))?;
        let (_, rss_kb) = timed_rss(program, &[mode, &synth_s])?;
        rows.push(Row {
            what: format!(
                "xplane-reader {what}, synthetic {:.0} MB XSpace (8 GPUs × 4 streams), 1 core",
                size as f64 / 1e6
            ),
            value: format!("{mbps:.0} MB/s"),
            target: if mode == "decode" {
                "≥ 300 MB/s"
            } else {
                "-"
            }
            .into(),
        });
        rows.push(Row {
            what: format!("xplane-reader {what}: peak RSS / file size"),
            value: format!(
                "{:.2} ({} MB)",
                rss_kb as f64 * 1024.0 / size as f64,
                rss_kb / 1024
            ),
            target: rss_target.into(),
        });
    }
    rows.push(Row {
        what: "load average during the xplane rows (1, 5, 15 min)".into(),
        value: load,
        target: "-".into(),
    });
    Ok(())
}

/// `cargo build --release --quiet ARGS` (the targets to build), saying `what` it builds;
/// the release directory.
fn build_release(root: &Path, what: &str, args: &[&str]) -> Result<PathBuf, String> {
    eprintln!("building {what} (release)…");
    let status = cargo()
        .current_dir(root)
        .args(["build", "--release", "--quiet"])
        .args(args)
        .status()
        .map_err(|e| format!("cargo build: {e}"))?;
    if !status.success() {
        return Err(format!("release build of {what} failed"));
    }
    Ok(target_dir(root).join("release"))
}

/// The `--python PATH` argument, if given.
fn python_arg(args: &[String]) -> Result<Option<PathBuf>, String> {
    args.iter()
        .position(|a| a == "--python")
        .map(|i| {
            args.get(i + 1)
                .map(PathBuf::from)
                .ok_or_else(|| "--python takes a path".to_owned())
        })
        .transpose()
}

/// `cargo`, for a build inside `cargo xtask`, without the variables `cargo run` set for
/// xtask itself: a build script that reruns when one changes (ring's, on
/// `CARGO_MANIFEST_DIR`) would otherwise be rerun, and every crate above it rebuilt (all
/// of polars), here and again at the next plain `cargo build`.
fn cargo() -> Command {
    let mut cmd = Command::new("cargo");
    for (key, _) in std::env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        if key.starts_with("CARGO_PKG_")
            || matches!(
                key,
                "CARGO_MANIFEST_DIR"
                    | "CARGO_MANIFEST_PATH"
                    | "CARGO_CRATE_NAME"
                    | "CARGO_BIN_NAME"
                    | "CARGO_PRIMARY_PACKAGE"
            )
        {
            cmd.env_remove(key);
        }
    }
    cmd
}

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
}

fn run_quiet(program: &str, args: &[&str]) -> Result<(), String> {
    let status = Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("{program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{program} {args:?} failed: {status}"))
    }
}

fn median_secs(runs: usize, mut f: impl FnMut() -> Result<(), String>) -> Result<f64, String> {
    median_of(runs, || {
        let t = Instant::now();
        f()?;
        Ok(t.elapsed().as_secs_f64())
    })
}

fn median_of(runs: usize, mut f: impl FnMut() -> Result<f64, String>) -> Result<f64, String> {
    let v = (0..runs)
        .map(|_| f())
        .collect::<Result<Vec<f64>, String>>()?;
    Ok(median(v))
}

/// The middle value (the upper of the two middle ones of an even count); `v` is not empty.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn read_speed_mbps(bin: &Path, mode: &str, file: &Path) -> Result<f64, String> {
    let out = Command::new("taskset")
        .args(["-c", "0"])
        .arg(bin)
        .arg(mode)
        .arg(file)
        .output()
        .map_err(|e| format!("read_speed: {e}"))?;
    parse_mbps(&out.stdout)
}

/// Wall time and peak RSS (KiB) of one run.
fn timed_rss(program: &str, args: &[&str]) -> Result<(f64, u64), String> {
    let t = Instant::now();
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(program)
        .args(args)
        .stdout(Stdio::null())
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
    Ok((secs, kb))
}

/// Writes a Kineto-shaped trace of about `target_bytes`: steps of CPU ops, each with a
/// launch on the host and a kernel on one of four streams, linked by correlation id and
/// `ac2g` flows, plus Python frames. Deterministic.
fn write_synthetic(path: &Path, target_bytes: u64) -> std::io::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let mut w = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
    writeln!(
        w,
        "{{\"schemaVersion\": 1, \"deviceProperties\": [{{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"computeMajor\": 9, \"computeMinor\": 0, \"numSms\": 132}}], \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 1}}, \"traceEvents\": ["
    )?;
    let kernels = [
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
        "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>>(Flash_fwd_params)",
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    ];
    let ops = [
        "aten::add",
        "aten::mm",
        "aten::_scaled_dot_product_flash_attention",
        "nccl:all_reduce",
    ];
    let mut written = 0u64;
    let mut ts: u64 = 1_000_000;
    let mut corr: u64 = 1;
    let mut step = 0u64;
    let mut line = String::with_capacity(1024);
    while written < target_bytes {
        line.clear();
        let step_start = ts;
        line.push_str(&format!(
            "{{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#{step}\", \"pid\": 100, \"tid\": 100, \"ts\": {step_start}, \"dur\": 20000, \"args\": {{\"External id\": {corr}}}}},\n"
        ));
        for i in 0..200u64 {
            let k = (i % 4) as usize;
            let t0 = ts + i * 100;
            line.push_str(&format!(
                "{{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"model.py(42): forward\", \"pid\": 100, \"tid\": 100, \"ts\": {t0}, \"dur\": 90, \"args\": {{\"Python id\": {corr}, \"Python parent id\": 1}}}},\n\
{{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"{op}\", \"pid\": 100, \"tid\": 100, \"ts\": {t1}, \"dur\": 60, \"args\": {{\"External id\": {corr}, \"Sequence number\": {corr}, \"Fwd thread id\": 0, \"Record function id\": 0, \"Ev Idx\": {i}}}}},\n\
{{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 100, \"tid\": 100, \"ts\": {t2}, \"dur\": 8, \"args\": {{\"External id\": {corr}, \"cbid\": 211, \"correlation\": {corr}}}}},\n\
{{\"ph\": \"s\", \"id\": {corr}, \"pid\": 100, \"tid\": 100, \"ts\": {t2}, \"cat\": \"ac2g\", \"name\": \"ac2g\"}},\n\
{{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"{kernel}\", \"pid\": 0, \"tid\": {stream}, \"ts\": {t3}, \"dur\": 70, \"args\": {{\"External id\": {corr}, \"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": {stream}, \"correlation\": {corr}, \"registers per thread\": 32, \"shared memory\": 0, \"blocks per SM\": 0.5, \"warps per SM\": 2.0, \"grid\": [64, 1, 1], \"block\": [128, 1, 1], \"est. achieved occupancy %\": 3}}}},\n\
{{\"ph\": \"f\", \"id\": {corr}, \"pid\": 0, \"tid\": {stream}, \"ts\": {t3}, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}},\n",
                op = ops[k],
                t1 = t0 + 10,
                t2 = t0 + 40,
                t3 = t0 + 55,
                kernel = kernels[k],
                stream = 7 + k as u64,
            ));
            corr += 1;
        }
        w.write_all(line.as_bytes())?;
        written += line.len() as u64;
        ts += 20_000;
        step += 1;
    }
    write!(
        w,
        "{{\"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"\", \"tid\": \"\", \"ts\": {ts}}}\n], \"traceName\": \"synthetic\", \"baseTimeNanoseconds\": 1700000000000000000}}\n"
    )?;
    w.flush()?;
    drop(w);
    std::fs::rename(&tmp, path)
}

/// `--python-package [--python PATH] [--runs N] [--methods A,B] [--capture NAME]`: only the
/// Python package's rows (the HTA drop-in and load().kernels() against HTA and json.load);
/// the notebook rows take N runs (at least 11), the others N too (5 without it); with
/// `--methods`, only the notebook rows of those methods (labels of python::METHODS); with
/// `--capture`, only the notebook rows of that capture.
fn python_package(
    args: &[String],
    traces: &Path,
    runs: usize,
    out_dir: &Path,
) -> Result<(), String> {
    let python = python_arg(args)?;
    let runs: usize = number_arg(args, "--runs", runs, "a number of runs")?;
    let value = |flag: &str| {
        (args.iter().position(|a| a == flag))
            .map(|i| {
                args.get(i + 1)
                    .cloned()
                    .ok_or(format!("{flag} needs a value"))
            })
            .transpose()
    };
    let only = python::Only {
        methods: value("--methods")?.map(|l| l.split(',').map(str::to_owned).collect()),
        capture: value("--capture")?,
    };
    let mut rows = Vec::new();
    python::rows(traces, python, runs, &only, &mut rows)?;
    print_rows(out_dir, &rows)
}
