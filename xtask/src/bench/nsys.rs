//! `cargo xtask bench --nsys`: nsys-reader's `load` against `sqlite3 FILE .dump` (SQLite's
//! own full read of the same file, written to /dev/null) and its peak RSS against the
//! file's size, on the largest shared export and on a large one made from it.
//!
//! The largest shared export is 2 MB, and a process that opens a SQLite file at all
//! (`nsys_read` on the 9 KiB `testdata/nsys/ok/small.sqlite`) already peaks at about 4 MB:
//! on that file the peak ÷ size mostly measures this fixed cost. So each file also gets a
//! row of the peak's growth over that baseline ÷ its size: what reading the file added.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use super::{Row, median, timed_rss};

/// The largest shared export, relative to the traces directory.
const LARGEST: &str = "nsys/pipit-cloverleaf-a100/perlmutter-cloverleaf-cuda.sqlite";

/// How many copies of its rows the large export holds (about 99 MB; 1.86 M rows).
const COPIES: &str = "400";

/// Builds the `nsys_read` example in release mode and appends the rows.
pub(super) fn rows(
    root: &Path,
    traces: &Path,
    out_dir: &Path,
    runs: usize,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let release = super::build_release(
        root,
        "nsys_read",
        &["-p", "nsys-reader", "--example", "nsys_read"],
    )?;
    let bin = release.join("examples/nsys_read");
    let largest = traces.join(LARGEST);
    if !largest.is_file() {
        return Err(format!(
            "{}: not found (TRACEWISE_TRACES)",
            largest.display()
        ));
    }
    // The fixed cost: the same binary reading the smallest valid export.
    let tiny = root.join("testdata/nsys/ok/small.sqlite");
    let (_, baseline_kb) = timed_rss(path_str(&bin)?, &["load", path_str(&tiny)?])?;
    let large = out_dir.join("nsys_synthetic.sqlite");
    if !large.is_file() {
        eprintln!(
            "generating {} ({COPIES} copies of {})…",
            large.display(),
            largest.display()
        );
        run(
            &bin,
            &["synth", path_str(&largest)?, path_str(&large)?, COPIES],
        )?;
    }
    for (label, file) in [
        ("largest shared export", largest),
        ("synthetic export", large),
    ] {
        let size = std::fs::metadata(&file)
            .map_err(|e| format!("{}: {e}", file.display()))?
            .len();
        let file_s = path_str(&file)?;
        let load = median(
            (0..runs)
                .map(|_| seconds(&bin, &["load", file_s]))
                .collect::<Result<_, _>>()?,
        );
        let dump = median(
            (0..runs)
                .map(|_| seconds(Path::new("sqlite3"), &[file_s, ".dump"]))
                .collect::<Result<_, _>>()?,
        );
        let (_, rss_kb) = timed_rss(path_str(&bin)?, &["load", file_s])?;
        let what = format!("nsys-reader load, {label} ({:.1} MB)", size as f64 / 1e6);
        rows.push(Row {
            what: format!("{what}: time ÷ `sqlite3 FILE .dump > /dev/null`"),
            value: format!("{:.2} ({:.3} s ÷ {:.3} s)", load / dump, load, dump),
            target: "≤ 1".into(),
        });
        rows.push(Row {
            what: format!("{what}: peak RSS ÷ file size"),
            value: format!(
                "{:.2} ({} MB)",
                rss_kb as f64 * 1024.0 / size as f64,
                rss_kb / 1024
            ),
            target: "< 2".into(),
        });
        rows.push(Row {
            what: format!(
                "{what}: (peak RSS − {:.1} MB on the 9 KiB fixture export) ÷ file size",
                baseline_kb as f64 / 1024.0
            ),
            value: format!(
                "{:.2} ({:.1} MB)",
                rss_kb.saturating_sub(baseline_kb) as f64 * 1024.0 / size as f64,
                rss_kb.saturating_sub(baseline_kb) as f64 / 1024.0
            ),
            target: "< 2 (issue 28)".into(),
        });
    }
    Ok(())
}

fn path_str(path: &Path) -> Result<&str, String> {
    path.to_str()
        .ok_or_else(|| format!("{}: not UTF-8", path.display()))
}

/// Wall time of one run of `program args`, its output discarded.
fn seconds(program: &Path, args: &[&str]) -> Result<f64, String> {
    let t = Instant::now();
    run(program, args)?;
    Ok(t.elapsed().as_secs_f64())
}

fn run(program: &Path, args: &[&str]) -> Result<(), String> {
    let status = Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("{}: {e}", program.display()))?;
    if !status.success() {
        return Err(format!("{} {args:?}: {status}", program.display()));
    }
    Ok(())
}
