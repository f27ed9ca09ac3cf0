//! `analyze-profile`: summarize a torch.profiler (Kineto) trace — GPU time by bucket,
//! attention backend, top ops, hints. Argument parsing only; the logic is in
//! `analysis::bucket_summary`.

use std::path::PathBuf;
use std::process::ExitCode;

use analysis::{ProfileConfig as Config, ProfileInput as Input, ProfileMode as Mode};
use anyhow::Context;
use clap::{ArgGroup, Parser};

/// Summarize a torch.profiler (Kineto) Chrome trace: total GPU time, GPU time by
/// bucket, attention backend, top ops, and the original script's hints.
///
/// Default mode (correct GPU accounting): only GPU activities (kernels, memcpys,
/// memsets) are counted. Each is attributed to the CPU op that launched it
/// (correlation id → runtime launch call → innermost `cpu_op` around that call on the
/// same thread, or `External id`) and bucketed by the original script's bucket rules
/// applied to that op's name, then to its own name, then (no rule matching either) by
/// the kernel classification table (GEMM, attention, collective, copy, elementwise). The
/// buckets therefore sum to exactly 100 % of GPU time, and a GEMM lands in
/// "matmul (GEMM)" whether it was launched by `aten::mm` or, in a CUDA/HIP graph with
/// no CPU op, is named `Cijk_*`.
///
/// --compat reproduces the original script (analyze_profile.py) byte for byte. That
/// script sums the `dur` of kernels *and* of CUDA runtime calls, user annotations (e.g.
/// ProfilerStep#N) and some CPU ops by event name, buckets by event name only, and
/// divides by GPU time: its shares can exceed 100 % and GEMM kernels named by cuBLAS
/// land in "other". Use it to compare with old reports. It reads Chrome-trace JSON
/// only; the default mode works on the capture model and so reads an XSpace too.
#[derive(Debug, Parser)]
#[command(name = "analyze-profile", version, after_long_help = EXAMPLES)]
#[command(group(ArgGroup::new("input").required(true).args(["trace_file", "trace_dir"])))]
struct Args {
    /// A Kineto trace: .json or .json.gz; without --compat also a JAX trace, an XSpace
    /// (.xplane.pb), an Nsight Systems SQLite export or a ROCm profiler capture (rocprofv3
    /// .pftrace, CSV or rocpd database; rocprof v1 results.csv/results.db).
    #[arg(long = "trace-file", alias = "trace_file", value_name = "FILE")]
    trace_file: Option<PathBuf>,

    /// A directory of traces: the files matching *.pt.trace.json*, sorted by name; the
    /// first one only, as the original script does, unless --all-ranks.
    #[arg(long = "trace-dir", alias = "trace_dir", value_name = "DIR")]
    trace_dir: Option<PathBuf>,

    /// Rows in the top-ops table.
    #[arg(
        long = "top-n",
        alias = "top_n",
        value_name = "N",
        default_value_t = 25,
        allow_negative_numbers = true
    )]
    top_n: i64,

    /// Print exactly what the original script (analyze_profile.py) prints (its numbers,
    /// order and text).
    #[arg(long)]
    compat: bool,

    /// Machine-readable output. With --compat: the original script's --json, one line per
    /// file.
    #[arg(long)]
    json: bool,

    /// With --trace-dir: every matching file, one column per rank (rank from
    /// distributedInfo.rank, else from the file name).
    #[arg(long = "all-ranks", requires = "trace_dir")]
    all_ranks: bool,
}

const EXAMPLES: &str = "\
Examples:
  analyze-profile --trace-file rank0.pt.trace.json.gz
  analyze-profile --trace-dir ./profile_out --all-ranks
  analyze-profile --compat --trace_file rank0.pt.trace.json   (the original script's report and flags)

In default mode the top-ops table groups GPU time by the launching CPU op's name; an
activity with no launching op is listed under its own name, marked [no op]. \"How each
activity was bucketed\" and the trust list say how much of the GPU time rests on which
evidence.

The original script's spellings --trace_file, --trace_dir and --top_n are accepted.
Exit status: 0 on success (also when stdout is closed early, e.g. `| head`), 2 on error
(unreadable file, not a Chrome trace, no matching file in the directory; with --compat an
empty directory prints the original script's \"no trace file found\" line and exits 0, as
that script does), 3 for a partial result: with --trace-dir --all-ranks, some files could
not be read (each is named on stderr with its error, and after the ranks in the output,
`not_read` in JSON) and the others are reported.";

const XSPACE_HINT: &str = "analyze-profile --compat (and compact-cuda-graph-trace) read \
Chrome-trace JSON only; for an XSpace (.xplane.pb) use analyze-profile without --compat, \
trace-info, skip-stats or roofline";

const TOOL: tool_cli::Tool = tool_cli::Tool("analyze-profile");

fn main() -> ExitCode {
    // --threads is not used by --compat, which reads the events once, in order.
    TOOL.main(run)
}

fn run(args: &Args) -> anyhow::Result<tool_cli::Outcome> {
    // clap's `input` group requires exactly one of the two.
    let input = match (args.trace_file.clone(), args.trace_dir.clone()) {
        (Some(file), _) => Input::File(file),
        (None, Some(dir)) => Input::Dir(dir),
        (None, None) => anyhow::bail!("give --trace-file FILE or --trace-dir DIR"),
    };
    if args.compat
        && let Input::File(file) = &input
        && let Ok(kind) = load::detect(file)
        && kind != load::FileKind::Chrome
    {
        anyhow::bail!(
            "{}: --compat reads Kineto Chrome traces only, as the original script does; this file is a {}. Run without --compat.",
            file.display(),
            kind.describe()
        );
    }
    let config = Config {
        input,
        top_n: args.top_n,
        mode: if args.compat { Mode::Compat } else { Mode::Gpu },
        json: args.json,
        all_ranks: args.all_ranks,
    };
    let output = analysis::bucket_summary(&config).map_err(|err| {
        let chain = analysis::error_chain(&err);
        // The hint is a line of its own after the error, with the tool's name like it.
        match err.read_error().and_then(|e| e.other_format()) {
            Some(_) => anyhow::anyhow!("{chain}\nanalyze-profile: {XSPACE_HINT}"),
            None => anyhow::anyhow!(chain),
        }
    })?;
    warn_rank_notes(&config, &output);
    let outcome = match &output {
        analysis::ProfileOutput::GpuPartial(_, unread) => TOOL.warn_unread(unread),
        _ => tool_cli::Outcome::Complete,
    };
    let text = report::bucket_text::render(&output, &config);
    output_file::print(text.as_bytes()).context("writing to stdout")?;
    Ok(outcome)
}

/// With --all-ranks, says which ranks several files give (each is a column of its own).
fn warn_rank_notes(config: &Config, output: &analysis::ProfileOutput) {
    let (Input::Dir(dir), true) = (&config.input, config.all_ranks) else {
        return;
    };
    let summaries = match output {
        analysis::ProfileOutput::Gpu(s) | analysis::ProfileOutput::GpuPartial(s, _) => s,
        _ => return,
    };
    let ranks = summaries
        .iter()
        .map(|s| (std::path::Path::new(&s.file), s.rank));
    for note in load::rank_notes(dir, ranks) {
        TOOL.warn(note);
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn cli_is_consistent() {
        tool_cli::command::<super::Args>().debug_assert();
    }
}
