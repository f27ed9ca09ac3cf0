//! `skip-stats`: is a GPU step GPU-bound or host/launch-bound, and why. Argument
//! parsing and file writing only; the analysis is `analysis::skip_stats_loaded`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use tool_cli::Outcome;

/// Verdict and host-side cause of launch overhead, from one GPU profiler capture.
///
/// Reads a PyTorch profiler (Kineto) trace `.json` / `.json.gz`, a JAX
/// `*.trace.json.gz`, an `.xplane.pb`, an Nsight Systems SQLite export (`nsys export --type sqlite`), a ROCm profiler capture
/// (rocprofv3 `.pftrace`, CSV files or rocpd database; rocprof v1 `results.csv`/`results.db`),
/// or a directory of rank traces (one block per
/// rank, then which rank's last common step ended last).
///
/// Prints, per capture:
///   - the verdict (GPU-bound, host/launch-bound or mixed) in one sentence with its
///     numbers, labelled inferred, and the rules it follows;
///   - the per device x stream time budget over the analysed window (compute,
///     collective, memcpy, memset, idle; overlaps merged, never double counted) and the
///     check that the parts sum to the span;
///   - the host events on launching threads that overlap the GPU-idle gaps of the
///     critical stream (the one with the most compute time; a stream busy with
///     collectives is reported as communication, not as GPU work), ranked by
///     overlapped time;
///   - SKIP metrics (TKLQT, AKD, IL, GPU idle = IL - union of kernel intervals) per
///     step (median, min, max) and total; activities in flight at the capture's start
///     are counted apart and left out;
///   - the launch join: activities with and without a host launch, launch-to-start delay.
///
/// Steps come from ProfilerStep#N, JAX step markers, or repeated executions of one XLA
/// module; with none, the whole capture is one step (a diagnostic says so).
///
/// Writes `rows.csv` into --out: one row per GPU activity joined to its host launch
/// (device, stream, kind, class, collective, name, start_ns, dur_ns, step,
/// launch_thread, launch_name, launch_start_ns, launch_dur_ns, launch_to_start_ns; a
/// leading rank column for a directory). `kind` is the budget category (compute,
/// collective, memcpy, memset); `class` the kernel classification table's class (gemm,
/// convolution, attention, elementwise, reduction, collective, memcpy, memset, other)
/// and `collective` its kind (all-reduce, EP dispatch, ...). Activities without a launch
/// have empty launch columns; activities in flight at the capture's start have an empty
/// step; a start before the launch (clock skew) leaves launch_to_start_ns empty.
///
/// rows.csv is written under a temporary name beside it and renamed into place when the
/// report is printed; an existing rows.csv is replaced only with --overwrite.
///
/// Exit status: 0 when everything was read; 2 on bad input, a refused output or a failing
/// stdout (rows.csv not written); 3 when the result is partial: some rank files of a
/// directory could not be read (each is named on stderr with its error), the others are
/// reported and in rows.csv. An interrupted run leaves nothing behind.
///
/// Examples:
///   skip-stats trace.json.gz
///   skip-stats run/ --out /tmp/skip --json > skip.json
#[derive(Debug, Parser)]
#[command(name = "skip-stats", version, verbatim_doc_comment)]
struct Args {
    /// Kineto .json[.gz], JAX *.trace.json.gz, an .xplane.pb, an Nsight Systems SQLite
    /// export, a ROCm profiler capture, or a directory of rank traces (or of XSpace files).
    #[arg(value_name = "TRACE")]
    trace: PathBuf,

    /// Directory for rows.csv (created if missing).
    #[arg(long, value_name = "DIR", default_value = ".")]
    out: PathBuf,

    /// Replace an existing rows.csv. A directory, device, symbolic link, the input or a
    /// file inside an input directory is never replaced.
    #[arg(long)]
    overwrite: bool,

    /// Print the report as JSON (times in integer nanoseconds, every number labelled).
    #[arg(long)]
    json: bool,

    /// Rows in the table of host events during GPU-idle gaps.
    #[arg(long, value_name = "N", default_value_t = 15)]
    top: usize,
}

const TOOL: tool_cli::Tool = tool_cli::Tool("skip-stats");

fn main() -> ExitCode {
    TOOL.main(run)
}

fn run(args: &Args) -> anyhow::Result<Outcome> {
    let config = analysis::SkipConfig {
        top_host_events: args.top,
        ..analysis::SkipConfig::default()
    };
    let rows_path = args.out.join("rows.csv");
    let inputs = [args.trace.as_path()];
    let rules = output_file::Rules {
        overwrite: args.overwrite,
        inputs: &inputs,
    };
    // Refused paths fail before the analysis; the file is staged only when rows are
    // written and renamed into place only when the analysis and stdout succeeded
    // (dropped, and so deleted, otherwise).
    output_file::check(&rows_path, &rules)?;
    let rows = output_file::Pending::create(&rows_path, &rules)?;
    let (analysis, failed) = if args.trace.is_dir() {
        by_rank(args, &config, rows.file())?
    } else {
        let each = load::load_each(&args.trace)
            .with_context(|| format!("analysing {}", args.trace.display()))?;
        if each.loaded.is_empty() {
            anyhow::bail!("no capture in {} could be read", args.trace.display());
        }
        let analysis = analysis::skip_stats_loaded(
            &args.trace,
            &each.loaded,
            &config,
            std::io::BufWriter::with_capacity(1 << 20, rows.file()),
        )
        .with_context(|| format!("analysing {}", args.trace.display()))?;
        (analysis, each.failed.len())
    };
    let text = if args.json {
        let mut s = serde_json::to_string_pretty(&report::skip_text::render_json(&analysis))?;
        s.push('\n');
        s
    } else {
        report::skip_text::render_text(&analysis)
    };
    output_file::print(text.as_bytes()).context("writing to stdout")?;
    rows.commit()?;
    Ok(if failed == 0 {
        Outcome::Complete
    } else {
        Outcome::Partial
    })
}

/// A directory, one capture at a time on `load::map_each_delivered`'s pool: each rank's
/// rows are written to `rows` once, in rank order, straight from its report when its turn
/// has come, else when it comes (`analysis::SkipRowsInRankOrder`); only its report stays in
/// memory. Returns the analysis and the number of unread files.
fn by_rank(
    args: &Args,
    config: &analysis::SkipConfig,
    rows: &std::fs::File,
) -> anyhow::Result<(analysis::InputAnalysis, usize)> {
    let in_order = analysis::SkipRowsInRankOrder::new(rows)?;
    let mut write_error = None;
    let mapped = load::map_each_delivered(
        &args.trace,
        |l, turn| in_order.report(&l, config, turn.now()),
        |_, _, done| {
            if let Ok((_, rank_rows)) = done
                && write_error.is_none()
            {
                write_error = in_order.append(rank_rows).err();
            }
        },
    )
    .with_context(|| format!("analysing {}", args.trace.display()))?;
    if let Some(e) = write_error {
        return Err(e.into());
    }
    let (mut reports, mut ranks_rows, mut seen, mut failed) =
        (Vec::new(), Vec::new(), Vec::new(), 0);
    for res in mapped {
        match res {
            Ok((path, rank, done)) => {
                let (report, rank_rows) = done?;
                reports.push(report);
                ranks_rows.push(rank_rows);
                seen.push((path, rank));
            }
            Err(err) => {
                failed += 1;
                TOOL.warn_unread([analysis::error_chain(&err)]);
            }
        }
    }
    in_order.finish(&ranks_rows.iter().collect::<Vec<_>>())?;
    let ranks = seen.iter().map(|(path, rank)| (path.as_path(), *rank));
    for note in load::rank_notes(&args.trace, ranks) {
        TOOL.warn(note);
    }
    if reports.is_empty() {
        anyhow::bail!("no capture in {} could be read", args.trace.display());
    }
    Ok((
        analysis::skip_stats_assemble(&args.trace, reports, true),
        failed,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args() {
        tool_cli::command::<Args>().debug_assert();
    }
}
