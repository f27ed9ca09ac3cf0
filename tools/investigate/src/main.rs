//! `investigate`: the whole investigation of a capture in one command. Argument parsing
//! and file writing only; the investigation is the `investigation` crate's, rendered by
//! `report::investigate`.

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
/// activity, as skip-stats writes it) and one CSV per table. Every figure is labelled
/// measured, read or inferred.
///
/// The report directory is written beside --out under a temporary name and put in place
/// whole when complete. It holds a `.tracewise-output` file; an existing directory is
/// replaced only when it has that file and --overwrite is given (or is empty), and never
/// when it is or holds the capture, `.`, a parent of the current directory, the home
/// directory or `/`.
///
/// Exit status: 0 when the report was written; 2 on bad input or a refused output
/// (nothing is written); 3 when the result is partial: some files of a capture directory
/// could not be read (each is named on stderr with its error, and in the report's trust
/// list), and the report of the others is written. An interrupted run (SIGINT, SIGTERM)
/// leaves nothing behind.
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

    /// Replace an existing report directory that a tracewise tool wrote.
    #[arg(long)]
    overwrite: bool,

    /// Also replay the capture's dependency graph with changed durations and print the
    /// predicted step and the path that became critical, e.g. 'gemm=2x,launch=5us'
    /// (keys: a kernel class, kernel:NAME, launch, cpu, host-gaps, host, copy-bw).
    #[arg(long, value_name = "CHANGES", value_parser = replay::WhatIf::parse)]
    what_if: Option<replay::WhatIf>,
}

const TOOL: tool_cli::Tool = tool_cli::Tool("investigate");

fn main() -> ExitCode {
    TOOL.main(|args: &Args| {
        // Replayed by the investigation on the captures it loaded, before the report is
        // written: an error leaves nothing behind.
        let (dir, outcome, what_if) = run(args)?;
        let said = format!(
            "report written to {}\n             and {}\n{what_if}",
            dir.join("report.md").display(),
            dir.join("report.html").display()
        );
        // The report is in place; a stdout that fails now loses this notice, and the exit
        // code says so (1: written, but the run did not end well).
        output_file::print(said.as_bytes())
            .map_err(|e| anyhow::anyhow!("writing to stdout: {e}"))?;
        Ok(outcome)
    })
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

fn run(args: &Args) -> anyhow::Result<(PathBuf, tool_cli::Outcome, String)> {
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&args.capture));
    let inputs = [args.capture.as_path()];
    let rules = output_file::Rules {
        overwrite: args.overwrite,
        inputs: &inputs,
    };
    // Refused before the investigation, and again when the report is put in place.
    output_file::check_dir(&out, &rules)?;
    let options = investigation::Options {
        step: args.step,
        what_if: args.what_if.clone(),
        ..Default::default()
    };
    let run = investigation::investigate(&args.capture, &options)
        .with_context(|| format!("investigating {}", args.capture.display()))?;
    let inv = &run.investigation;
    let outcome = TOOL.warn_unread(&inv.unread);
    for note in &inv.notes {
        TOOL.warn(&note.message);
    }
    let dir = output_file::DirOutput::create(&out, &rules)?;
    report::investigate::write_into(&run, &dir)?;
    dir.commit()?;
    Ok((
        out,
        outcome,
        report::investigate::what_if_text(&run.what_if),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args() {
        tool_cli::command::<Args>().debug_assert();
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
