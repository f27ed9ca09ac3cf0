//! `profile-model`: a Kineto trace (or a directory of ranks) as a polars DataFrame: the
//! quick summary and the findings, SQL, HTA's analyses natively, Parquet cache and
//! export. Argument parsing and output only; the work is in `trace_frame`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use trace_frame::AnalysisName;

mod render;

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
/// Outputs: --export writes a directory, staged beside it under a temporary name and put
/// in place only when the whole run (SQL and analyses included) succeeded; it holds a
/// `.tracewise-output` file, and an existing directory is replaced only when it has that
/// file and --overwrite is given (or is empty), never when it is or holds an input, `.`, a
/// parent of the current directory, the home directory or `/`. --cache keeps private
/// Parquet files (mode 0600) in --cache-dir (default $XDG_CACHE_HOME/tracewise, else
/// ~/.cache/tracewise; mode 0700, this user's only), keyed on each trace's full path,
/// size, modification time and content.
///
/// --sql reads only the tables above: table functions over files or URLs (read_parquet,
/// read_csv, ...) are refused, and a result over --sql-max-rows rows is an error, as is a
/// join that could make more (one without an equality of two columns, or an equality on a
/// key with too many rows per value, counted before the query runs); lpad, rpad and repeat
/// are refused; a query whose memory grows past TRACEWISE_SQL_MEMORY (default 4G) is
/// stopped (exit 2).
///
/// Exit status: 0 on success; 2 on bad input, a refused output or a failing stdout
/// (nothing is written); 1 when an error came after an output was written (it is
/// complete); 3 when the result is partial: some rank files of a directory could
/// not be read (each is named on stderr with its error, and under "Not read" in the report,
/// `not_read` in JSON), the others are reported, and an --export of them is written. An
/// interrupted run leaves nothing behind.
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

    /// Cache each rank as Parquet in --cache-dir and reuse it while the trace is the same
    /// file with the same bytes. Never done without this flag; a failed write is reported
    /// and ignored.
    #[arg(long)]
    cache: bool,

    /// Where --cache keeps its files (default: $XDG_CACHE_HOME/tracewise, else
    /// ~/.cache/tracewise). Used only when it is private to this user (mode 0700).
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,

    /// Write Hive-partitioned Parquet (DIR/rank=N/events.parquet, and one row per rank in
    /// DIR/_summary/rank=N/summary.parquet) for DuckDB, Spark or DataFusion; recipes in
    /// docs/export-recipes.md. DIR must not exist, be empty, or be an export written before
    /// (with --overwrite).
    #[arg(long, value_name = "DIR")]
    export: Option<PathBuf>,

    /// Replace an existing --export directory that a tracewise tool wrote.
    #[arg(long)]
    overwrite: bool,

    /// Ranks exported at the same time (memory grows with this, not with the ranks; at
    /// most four per core).
    #[arg(long, value_name = "N", default_value_t = 4)]
    export_workers: usize,

    /// --sql: the most rows a result may have (and a join may make); more is an error.
    #[arg(long, value_name = "N", default_value_t = trace_frame::SQL_MAX_ROWS)]
    sql_max_rows: usize,
}

const TOOL: tool_cli::Tool = tool_cli::Tool("profile-model");

/// `--sql`'s default memory budget (`TRACEWISE_SQL_MEMORY`): resident memory the query may
/// add to what the loaded trace holds. Queries over a trace's tables take a few times the
/// frame at most; this leaves room for the largest captures and stops a runaway join
/// well before a 16-32 GB machine swaps.
const SQL_MEMORY: u64 = 4 << 30;

fn main() -> ExitCode {
    TOOL.main(run)
}

fn run(args: &Args) -> anyhow::Result<tool_cli::Outcome> {
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
    // The export is staged here and put in place only when everything else succeeded.
    let mut export = None;
    if let Some(dir) = &args.export {
        let sources = trace_frame::frame_sources(&args.trace)?;
        let mut inputs: Vec<&Path> = sources.paths();
        inputs.push(&args.trace);
        let rules = output_file::Rules {
            overwrite: args.overwrite,
            inputs: &inputs,
        };
        let staged = output_file::DirOutput::create(dir, &rules)?;
        let workers = clamp_workers(args.export_workers);
        let ex = trace_frame::export_hive_into(&sources, &staged, workers)
            .with_context(|| format!("exporting {}", args.trace.display()))?;
        for (rank, file, rows) in &ex.files {
            eprintln!(
                "profile-model: rank {rank}: {rows} events → {}",
                file.display()
            );
        }
        // Two traces of one rank are both exported, with the warning every tool gives.
        for note in &ex.notes {
            eprintln!("profile-model: warning: {note}");
        }
        if args.sql.is_none() && names.is_empty() {
            staged.commit()?;
            for note in &sources.notes {
                eprintln!("profile-model: warning: {note}");
            }
            return Ok(TOOL.warn_unread(&ex.unread));
        }
        export = Some(staged);
    }
    let cache_dir = match (&args.cache_dir, args.cache) {
        (Some(dir), _) => Some(dir.clone()),
        (None, true) => Some(
            default_cache_dir()
                .context("--cache: neither XDG_CACHE_HOME nor HOME is set; give --cache-dir")?,
        ),
        (None, false) => None,
    };
    let cache = cache_dir.as_deref().filter(|_| args.cache);
    let step = trace_frame::StepQuery {
        annotation: args.annotation.clone(),
        instance: args.instance,
    };
    // A rank directory asked only per-rank analyses: one rank at a time, nothing held.
    if args.sql.is_none()
        && cache.is_none()
        && export.is_none()
        && trace_frame::reads_by_rank(&args.trace, &names)
    {
        let by_rank = trace_frame::analyze_by_rank(&args.trace, &names)
            .with_context(|| format!("analysing {}", args.trace.display()))?;
        for note in &by_rank.notes {
            eprintln!("profile-model: warning: {note}");
        }
        let outcome = TOOL.warn_unread(&by_rank.report.not_read);
        let text = if args.json {
            format!("{}\n", trace_frame::render_json(&by_rank.report))
        } else {
            render::render_text(&by_rank.report)
        };
        output_file::print(text.as_bytes()).context("writing to stdout")?;
        return Ok(outcome);
    }
    let loaded = match &args.sql {
        Some(_) => trace_frame::load(&args.trace, cache).map(|l| (l, None)),
        // The analyses' second read of the input runs beside the load.
        None => trace_frame::load_and_analyze(&args.trace, cache, &names, &step)
            .map(|(l, r)| (l, Some(r))),
    };
    let (loaded, report) = loaded.with_context(|| format!("loading {}", args.trace.display()))?;
    for note in &loaded.notes {
        eprintln!("profile-model: warning: {note}");
    }
    let outcome = TOOL.warn_unread(&loaded.unread);
    for c in &loaded.cache {
        if let trace_frame::CacheUse::WriteFailed(p, why) = c {
            eprintln!(
                "profile-model: warning: cache not written ({}): {why}; carrying on without it",
                p.display()
            );
        }
    }
    let text = match report {
        None => {
            let q = args.sql.as_deref().unwrap_or_default();
            // The row limits are checked before the query runs; what they cannot see (a
            // join over a grouped or joined CTE, a huge aggregate) is bounded by memory.
            let budget = tool_cli::MemoryBudget::start(
                TOOL,
                "the SQL query",
                "TRACEWISE_SQL_MEMORY",
                SQL_MEMORY,
            );
            let df = trace_frame::run_sql_limited(&loaded.events, q, args.sql_max_rows)?;
            drop(budget);
            if args.json {
                let mut s = serde_json::to_string_pretty(&trace_frame::frame_to_json(&df))?;
                s.push('\n');
                s
            } else {
                format!("{df}\n")
            }
        }
        Some(report) => {
            let report = report?;
            if args.json {
                format!("{}\n", trace_frame::render_json(&report))
            } else {
                render::render_text(&report)
            }
        }
    };
    // Printed before the export is put in place: a failing stdout commits nothing.
    output_file::print(text.as_bytes()).context("writing to stdout")?;
    if let Some(staged) = export {
        staged.commit()?;
    }
    Ok(outcome)
}

/// The per-user cache directory: `$XDG_CACHE_HOME/tracewise`, else `~/.cache/tracewise`.
fn default_cache_dir() -> Option<PathBuf> {
    let nonempty = |v: &str| {
        std::env::var_os(v)
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
    };
    nonempty("XDG_CACHE_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| nonempty("HOME").map(|h| h.join(".cache")))
        .map(|base| base.join("tracewise"))
}

/// Export workers: as asked, at most four per core (each holds one rank's frame).
fn clamp_workers(asked: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    asked.clamp(1, 4 * cores)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_are_consistent() {
        tool_cli::command::<Args>().debug_assert();
    }
}
