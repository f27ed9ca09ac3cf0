//! `compact-cuda-graph-trace`: repack CUDA-graph replay streams into a few semantic lanes
//! for Perfetto, or merge pipeline-parallel rank traces. Argument parsing and file
//! handling only; the logic is in the `lanes` crate.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Parser, ValueEnum};
use serde::Serialize;

/// Compact CUDA graph replay streams without changing measured GPU slices.
///
/// GPU slices (kernel, memcpy, memset) are packed into a few lanes per lane group (see
/// --lanes) by greedy interval partitioning; only their tid and args.stream change. The
/// output is for viewing: measure on the original trace. Prints a JSON summary; fails,
/// writing nothing, if a measured slice changed or a lane overlaps.
///
/// The output is written under a temporary name beside it and renamed into place after
/// the summary is printed; an existing file is replaced only with --overwrite, and a
/// directory, device, FIFO, symbolic link, an input or a file inside an input directory
/// never.
///
/// Exit status: 0 on success; 2 on bad input, a refused output or a failing stdout
/// (nothing is written); an interrupted run leaves nothing behind.
#[derive(Debug, Parser)]
#[command(name = "compact-cuda-graph-trace", version)]
pub struct Args {
    /// PyTorch trace (.json or .json.gz), or a rank-trace directory with --merge-pp-ranks.
    pub input: PathBuf,

    /// Compacted trace path (gzip if it ends in .gz, else plain JSON). Default: beside the
    /// input, <stem>_compacted.json.gz (<stem>_compacted.json for a .json input); with
    /// --merge-pp-ranks, pp_traces_merged_compacted.json.gz in the rank directory.
    #[arg(short, long)]
    pub output: Option<PathBuf>,

    /// Compact and merge the sibling rank*_trace.json[.gz] PP traces.
    #[arg(long)]
    pub merge_pp_ranks: bool,

    /// Replace an existing output file. A directory, device, symbolic link or an input
    /// is never replaced.
    #[arg(long)]
    pub overwrite: bool,

    /// Which rules group GPU slices into lanes (for single traces and --merge-pp-ranks).
    #[arg(long, value_enum, default_value_t = Lanes::Original)]
    pub lanes: Lanes,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Lanes {
    /// The original script's groups, by name: Compute, Symmetric-memory barrier, NCCL
    /// all-gather, NCCL reduce-scatter, NCCL all-reduce, NCCL other, GPU memcpy, GPU
    /// memset. Output identical to the reference script's. Collectives without "nccl" in
    /// their name (custom all-reduce, MSCCL, expert-parallel dispatch/combine) land in
    /// Compute.
    Original,
    /// By the workspace's kernel-classification table (the classes analyze-profile
    /// reports): GEMM, Convolution, Attention, Elementwise, Reduction, Other kernels,
    /// "Communication <kind>" (all-reduce, all-gather, send/recv, ...) for every
    /// collective the table knows, of any library, GPU memcpy, GPU memset. For seeing
    /// compute by kind and communication apart from it; PP arrows attach to the first lane
    /// of each compute class.
    Semantic,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Inputs {
    One(String),
    Many(Vec<String>),
}

#[derive(Serialize)]
struct Printed<'a, S: Serialize> {
    input: Inputs,
    output: String,
    #[serde(flatten)]
    summary: &'a S,
}

fn main() -> ExitCode {
    let args = Args::parse();
    tool_cli::progress::install();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            if output_file::is_broken_pipe(err.as_ref()) {
                return ExitCode::SUCCESS;
            }
            eprintln!("compact-cuda-graph-trace: error: {err:#}");
            let other_format = err
                .downcast_ref::<lanes::Error>()
                .and_then(lanes::Error::read_error)
                .and_then(|e| e.other_format());
            if let Some(format) = other_format {
                eprintln!(
                    "compact-cuda-graph-trace: the input is an {}; compact-cuda-graph-trace \
                     (and analyze-profile --compat) read Chrome-trace JSON only; use trace-info, \
                     skip-stats, roofline or analyze-profile without --compat",
                    format.describe()
                );
            }
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args) -> anyhow::Result<()> {
    let output = match &args.output {
        Some(o) => o.clone(),
        None if args.merge_pp_ranks => lanes::default_merged_output(&args.input),
        None => lanes::default_output(&args.input),
    };
    let inputs: Vec<PathBuf> = if args.merge_pp_ranks {
        lanes::rank_trace_paths(&args.input)?
    } else {
        vec![args.input.clone()]
    };
    let input_refs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let rules = output_file::Rules {
        overwrite: args.overwrite,
        inputs: &input_refs,
    };
    // Refuse a bad output path before the (long) compaction, and again when writing.
    output_file::check(&output, &rules)?;
    // Staged when written; put in place once the summary is printed, so a failing stdout
    // leaves nothing committed.
    let stage = |trace: &lanes::Trace| -> anyhow::Result<output_file::Pending> {
        Ok(lanes::stage_trace(trace, &output, &rules)?)
    };
    let shown = |p: &Path| p.display().to_string();
    let config = lanes::Config {
        lanes: match args.lanes {
            Lanes::Original => lanes::LaneGrouping::Original,
            Lanes::Semantic => lanes::LaneGrouping::Semantic,
        },
    };
    let (text, staged) = if args.merge_pp_ranks {
        let paths = &inputs;
        let merged =
            lanes::merge_pp_files(paths, &config).context("cannot merge the PP rank traces")?;
        warn(&merged.diagnostics);
        let staged = stage(&merged.trace)?;
        let text = to_json(&Printed {
            input: Inputs::Many(paths.iter().map(|p| shown(p)).collect()),
            output: shown(&output),
            summary: &merged.summary,
        });
        // Freeing millions of events one by one takes a while; the process ends anyway.
        std::mem::forget(merged);
        (text, staged)
    } else {
        if args.input.is_dir() {
            bail!("input must be a trace file without --merge-pp-ranks");
        }
        // Compacted and written once: the texts it does not rewrite stay in a regular
        // file and are read again while writing; a pipe cannot be read twice, so it is
        // held whole.
        let regular = std::fs::metadata(&args.input).is_ok_and(|m| m.is_file());
        let trace = if regular {
            lanes::Trace::read_file_for_compaction(&args.input)?
        } else {
            lanes::Trace::read_file(&args.input)?
        };
        let compacted = lanes::compact_trace(trace, &config)?;
        warn(&compacted.diagnostics);
        let staged = stage(&compacted.trace)?;
        let text = to_json(&Printed {
            input: Inputs::One(shown(&args.input)),
            output: shown(&output),
            summary: &compacted.summary,
        });
        // Freeing millions of events one by one takes a while; the process ends anyway.
        std::mem::forget(compacted);
        (text, staged)
    };
    output_file::print(format!("{text}\n").as_bytes()).context("writing to stdout")?;
    staged.commit()?;
    Ok(())
}

fn warn(diagnostics: &[String]) {
    for d in diagnostics {
        eprintln!("compact-cuda-graph-trace: warning: {d}");
    }
}

fn to_json(value: &impl Serialize) -> String {
    serde_json::to_string_pretty(value).expect("the summary serializes to JSON")
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
