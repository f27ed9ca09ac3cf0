//! `profile-model`: a Kineto trace (or a directory of ranks) as a polars DataFrame: the
//! quick summary and the findings, SQL, HTA's analyses natively, Parquet cache and
//! export. Argument parsing and output only; the work is in `trace_frame`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use trace_frame::AnalysisName;

/// Loads a PyTorch profiler (Kineto) trace as a DataFrame and answers questions about it.
///
/// Without options: the quick summary (events by category, kernel count and time, top
/// kernels) and the findings (main finding, bottleneck type, recommendations, what the
/// trace lacks). Every number is labelled measured or inferred.
///
/// The frame has one row per event: name, cat, ph, ts, dur (µs), pid, tid, id, ts_ns,
/// dur_ns, event_index, rank, and one args_<key> column per args key (uniform numbers
/// stay numeric, mixed columns become strings).
///
/// Analyses (--analysis, repeatable; HTA 0.5.0's definitions, ours beside where they
/// differ): kernel-breakdown, temporal, idle, overlap, stragglers, launch-stats,
/// queue-length, critical-path (rank 0's first ProfilerStep; --annotation and --instance
/// choose another step), or all.
///
/// Exit status: 0 on success, 2 on an error (nothing is written).
///
/// Examples:
///   profile-model trace.json.gz
///   profile-model run/ --analysis all
///   profile-model run/ --sql "SELECT rank, COUNT(*) FROM kernels GROUP BY rank"
///   profile-model run/ --export /tmp/run-parquet
#[derive(Debug, Parser)]
#[command(name = "profile-model", version, verbatim_doc_comment)]
struct Args {
    /// Kineto .json[.gz], or a directory of rank traces.
    #[arg(value_name = "TRACE|DIR")]
    trace: PathBuf,

    /// polars SQL over the tables `events`, `kernels` (cat = 'kernel') and `launches`
    /// (cat cuda_runtime / cuda_driver); column names with spaces in double quotes.
    #[arg(long, value_name = "QUERY")]
    sql: Option<String>,

    /// Deeper analyses to run (names above, or `all`).
    #[arg(long = "analysis", value_name = "NAME", num_args = 1..)]
    analyses: Vec<String>,

    /// critical-path: the step is an annotation whose name contains TEXT (an empty TEXT is
    /// the whole trace, as in HTA).
    #[arg(long, value_name = "TEXT", default_value = "ProfilerStep")]
    annotation: String,

    /// critical-path: which instance of the annotation, 0 = the first in time.
    #[arg(long, value_name = "N", default_value_t = 0)]
    instance: usize,

    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,

    /// Cache each rank as Parquet in --cache-dir and reuse it while it is newer than the
    /// trace. Never done without this flag; a failed write is reported and ignored.
    #[arg(long)]
    cache: bool,

    /// Where --cache keeps its files.
    #[arg(long, value_name = "DIR", default_value = "/tmp/trace_cache")]
    cache_dir: PathBuf,

    /// Write Hive-partitioned Parquet (DIR/rank=N/events.parquet) for DuckDB, Spark or
    /// DataFusion. DIR must not exist or be empty.
    #[arg(long, value_name = "DIR")]
    export: Option<PathBuf>,

    /// Ranks exported at the same time (memory grows with this, not with the ranks).
    #[arg(long, value_name = "N", default_value_t = 4)]
    export_workers: usize,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if output_file::is_broken_pipe(e.as_ref()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("profile-model: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args) -> anyhow::Result<()> {
    let mut names = Vec::new();
    for a in &args.analyses {
        if a == "all" {
            names.extend(AnalysisName::ALL);
        } else {
            names.push(AnalysisName::parse(a).with_context(|| {
                let all: Vec<_> = AnalysisName::ALL.iter().map(|a| a.name()).collect();
                format!("unknown analysis `{a}`; one of: {}, all", all.join(", "))
            })?);
        }
    }
    let mut out = std::io::stdout().lock();
    if let Some(dir) = &args.export {
        let sources = trace_frame::chrome_sources(&args.trace)?;
        let ex = trace_frame::export_hive(&sources.paths, dir, args.export_workers)
            .with_context(|| format!("exporting {}", args.trace.display()))?;
        for (rank, file, rows) in &ex.files {
            eprintln!(
                "profile-model: rank {rank}: {rows} events → {}",
                file.display()
            );
        }
        if args.sql.is_none() && names.is_empty() {
            return Ok(());
        }
    }
    let cache = args.cache.then_some(args.cache_dir.as_path());
    let step = trace_frame::StepQuery {
        annotation: args.annotation.clone(),
        instance: args.instance,
    };
    let loaded = match &args.sql {
        Some(_) => trace_frame::load(&args.trace, cache).map(|l| (l, None)),
        // The analyses' second read of the input runs beside the load.
        None => trace_frame::load_and_analyze(&args.trace, cache, &names, &step)
            .map(|(l, r)| (l, Some(r))),
    };
    let (loaded, report) = loaded.with_context(|| format!("loading {}", args.trace.display()))?;
    for c in &loaded.cache {
        if let trace_frame::CacheUse::WriteFailed(p, why) = c {
            eprintln!(
                "profile-model: warning: cache not written ({}): {why}; carrying on without it",
                p.display()
            );
        }
    }
    let Some(report) = report else {
        let q = args.sql.as_deref().unwrap_or_default();
        let df = trace_frame::run_sql(&loaded.events, q)?;
        if args.json {
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&trace_frame::frame_to_json(&df))?
            )?;
        } else {
            writeln!(out, "{df}")?;
        }
        return Ok(());
    };
    let report = report?;
    if args.json {
        writeln!(out, "{}", trace_frame::render_json(&report))?;
    } else {
        write!(out, "{}", trace_frame::render_text(&report))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn args_are_consistent() {
        Args::command().debug_assert();
    }
}
