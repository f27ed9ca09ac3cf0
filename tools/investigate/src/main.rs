//! `investigate`: the whole investigation of a capture in one command. Argument parsing
//! and file writing only; the investigation is `report::investigate`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

/// The whole investigation of a GPU profiler capture, written as a report.
///
/// Reads a Kineto trace (`.json`, `.json.gz`), a directory of rank traces, an XSpace
/// (`*.xplane.pb`), a JAX capture directory, an Nsight Systems SQLite export (`nsys export --type sqlite`), a ROCm profiler capture
/// (rocprofv3 `.pftrace`, CSV files or rocpd database; rocprof v1 `results.csv`/`results.db`), and runs the seven steps an engineer would
/// otherwise do by hand:
///   1. the verdict (GPU-bound, host/launch-bound, mixed) and its host-side cause;
///   2. reconciliation checks (launches found, kernels per step, GPUs and ranks doing the
///      same work, budgets that sum to their span); failures go to the trust list;
///   3. swimlanes of the median step (or --step N): every GPU x stream and the host
///      threads that launch work, kernels coloured by class, the critical stream and the
///      rank that finished last marked;
///   4. GPU time by bucket and by launching op;
///   5. roofline of the top ops (FLOPs and bytes from shapes, vendor peak of the dtype);
///   6. what to change, ranked, with the step time if each cause went away (inferred)
///      and the knobs to try;
///   7. the trust list, then what a new capture would answer.
///
/// Writes into --out (default `./<capture name>-report/`): report.md (findings first),
/// report.html (one self-contained page: inline CSS and SVG, opens from disk, works
/// without JavaScript), report.json (the report model), rows.csv (one row per GPU
/// activity, as skip-stats writes it) and one CSV per table. An existing report
/// directory is only replaced with --overwrite. Every figure is labelled measured, read
/// or inferred.
///
/// Examples:
///   investigate trace.json.gz
///   investigate run/ --out /tmp/run-report --overwrite
///   investigate capture.xplane.pb --step 3
#[derive(Debug, Parser)]
#[command(name = "investigate", version, verbatim_doc_comment)]
struct Args {
    /// A Kineto trace, a directory of rank traces, an .xplane.pb, a JAX capture directory, an
    /// Nsight Systems SQLite export or a ROCm profiler capture.
    #[arg(value_name = "CAPTURE")]
    capture: PathBuf,

    /// Directory to write the report into (default: ./<capture name>-report/).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,

    /// The step to draw in the swimlanes (its ProfilerStep number); default: the median.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    step: Option<i64>,

    /// Replace an existing report directory.
    #[arg(long)]
    overwrite: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(dir) => {
            let said = format!(
                "report written to {}\n             and {}\n",
                dir.join("report.md").display(),
                dir.join("report.html").display()
            );
            let mut stdout = std::io::stdout().lock();
            match stdout
                .write_all(said.as_bytes())
                .and_then(|()| stdout.flush())
            {
                // The report is written either way; a closed stdout (`| head -0`) is fine.
                Ok(()) => ExitCode::SUCCESS,
                Err(e) if output_file::is_broken_pipe(&e) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("investigate: writing to stdout: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Err(e) => {
            eprintln!("investigate: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// The default output directory: `<capture name without extensions>-report` here.
fn default_out(capture: &Path) -> PathBuf {
    let name = capture.file_name().map_or_else(
        || "capture".to_owned(),
        |n| n.to_string_lossy().into_owned(),
    );
    let stem = [
        ".pt.trace.json.gz",
        ".trace.json.gz",
        ".json.gz",
        ".json",
        ".xplane.pb",
        ".sqlite",
        ".pftrace",
        ".csv",
        ".db",
    ]
    .iter()
    .find_map(|ext| name.strip_suffix(ext))
    .unwrap_or(&name)
    .to_owned();
    PathBuf::from(format!("{stem}-report"))
}

fn run(args: &Args) -> anyhow::Result<PathBuf> {
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&args.capture));
    if out.exists() && !args.overwrite {
        anyhow::bail!(
            "{} exists; pass --overwrite to replace it, or --out another directory",
            out.display()
        );
    }
    if out.exists() && !out.is_dir() {
        anyhow::bail!("{} exists and is not a directory", out.display());
    }
    let options = report::investigate::Options { step: args.step };
    let inv = report::investigate::investigate(&args.capture, &options)
        .with_context(|| format!("investigating {}", args.capture.display()))?;
    // Everything is written into a temporary sibling directory, then renamed into place.
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).with_context(|| format!("creating {}", parent.display()))?;
    let tmp = tempfile::Builder::new()
        .prefix(".investigate-")
        .tempdir_in(&parent)
        .with_context(|| format!("creating a temporary directory in {}", parent.display()))?;
    let write = |name: &str, bytes: &[u8]| -> anyhow::Result<()> {
        let path = tmp.path().join(name);
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))
    };
    write(
        "report.md",
        report::markdown::render(&inv.document).as_bytes(),
    )?;
    write(
        "report.html",
        report::html::render(&inv.document).as_bytes(),
    )?;
    let mut json = serde_json::to_string_pretty(&inv.document)?;
    json.push('\n');
    write("report.json", json.as_bytes())?;
    write("rows.csv", &inv.rows_csv)?;
    for table in inv.document.tables() {
        write(
            &format!("{}.csv", table.name),
            report::csv::render(table).as_bytes(),
        )?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755))?;
    }
    let staged = tmp.keep();
    if out.exists() {
        std::fs::remove_dir_all(&out)
            .with_context(|| format!("removing the old {}", out.display()))?;
    }
    std::fs::rename(&staged, &out).with_context(|| format!("renaming into {}", out.display()))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn args() {
        Args::command().debug_assert();
    }

    #[test]
    fn default_out_drops_trace_extensions() {
        assert_eq!(
            default_out(Path::new("a/rank0.pt.trace.json.gz")),
            PathBuf::from("rank0-report")
        );
        assert_eq!(
            default_out(Path::new("x.xplane.pb")),
            PathBuf::from("x-report")
        );
        assert_eq!(
            default_out(Path::new("runs/dir")),
            PathBuf::from("dir-report")
        );
    }
}
