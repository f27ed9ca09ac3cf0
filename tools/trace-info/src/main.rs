//! trace-info: the first command to run on a new capture. Says what it holds and what the
//! readers understood of it.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use tool_cli::Outcome;

/// What a profiler capture holds, and what tracewise understood of it.
///
/// Reads a Kineto trace (`.json`, `.json.gz`), a JAX trace (`*.trace.json.gz`), an XSpace
/// (`*.xplane.pb`), an Nsight Systems SQLite export (`nsys export --type sqlite`), a ROCm profiler capture
/// (rocprofv3 `.pftrace`, CSV files or rocpd database; rocprof v1 `results.csv`/`results.db`),
/// or a directory of them (one per rank or host), and prints: format and
/// producer, time window, GPU devices with their streams (kernel/memcpy/memset counts, busy
/// time, share of activities whose host launch was found), host threads, steps, the HLO
/// programs of an XSpace with the share of instructions whose Python line is known, and every
/// diagnostic (odd input the readers accepted) with its count.
///
/// Counts and times are measured from the capture; device properties are read from the
/// profiler's metadata.
///
/// Exit status: 0 when everything was read; 2 on an error (nothing printed); 3 when the
/// result is partial: some files of a directory could not be read (each is named on
/// stderr with its error) and the others are reported.
#[derive(Debug, Parser)]
#[command(name = "trace-info", version)]
struct Args {
    /// A capture file or a directory of captures.
    capture: PathBuf,
    /// Print JSON (one array, one object per capture) instead of text.
    #[arg(long)]
    json: bool,

    /// Also write the capture as Chrome trace JSON to FILE, which Perfetto
    /// (ui.perfetto.dev) and chrome://tracing open, and which every tool reads like a
    /// Kineto trace (e.g. an Nsight Systems export, for compact-cuda-graph-trace --lanes).
    /// The input must hold one capture.
    #[arg(long, value_name = "FILE")]
    to_chrome_trace: Option<PathBuf>,

    /// Replace the --to-chrome-trace file if it exists (never an input, a directory, a
    /// symbolic link or a device).
    #[arg(long, requires = "to_chrome_trace")]
    overwrite: bool,
}

const TOOL: tool_cli::Tool = tool_cli::Tool("trace-info");

fn main() -> ExitCode {
    TOOL.main(run)
}

/// Writes the one capture at `args.capture` as Chrome trace JSON to `out`.
fn write_chrome_trace(args: &Args, out: &std::path::Path) -> anyhow::Result<()> {
    let loaded = load::load(&args.capture)?;
    let [one] = loaded.as_slice() else {
        anyhow::bail!(
            "{}: {} captures; --to-chrome-trace writes one: give one file (or one process's export)",
            args.capture.display(),
            loaded.len()
        );
    };
    let inputs = [args.capture.as_path(), one.path.as_path()];
    let rules = output_file::Rules {
        overwrite: args.overwrite,
        inputs: &inputs,
    };
    output_file::write_with(out, &rules, |file| {
        load::chrome::write_chrome_trace(&one.capture, file)
    })?;
    eprintln!("trace-info: Chrome trace written to {}", out.display());
    Ok(())
}

fn run(args: &Args) -> anyhow::Result<Outcome> {
    // Every reader error names the file and the place: no context to add.
    if let Some(out) = &args.to_chrome_trace {
        write_chrome_trace(args, out)?;
    }
    // One capture at a time per core: each is summarised and dropped, so a directory of
    // many ranks needs the memory of a few.
    let mut inventories = Vec::new();
    let mut failed = 0;
    let mut ranks = Vec::new();
    for res in load::map_each(&args.capture, |l| analysis::inventory(&l))? {
        match res {
            Ok((path, rank, inventory)) => {
                ranks.push((path, rank));
                inventories.push(inventory);
            }
            Err(err) => {
                failed += 1;
                TOOL.warn_unread([analysis::error_chain(&err)]);
            }
        }
    }
    let ranks = ranks.iter().map(|(path, rank)| (path.as_path(), *rank));
    for note in load::rank_notes(&args.capture, ranks) {
        TOOL.warn(note);
    }
    if inventories.is_empty() {
        anyhow::bail!("no capture in {} could be read", args.capture.display());
    }
    let out = if args.json {
        let mut s = serde_json::to_string_pretty(&inventories)?;
        s.push('\n');
        s
    } else {
        inventories
            .iter()
            .map(report::inventory_text::render_text)
            .collect::<Vec<_>>()
            .join("\n")
    };
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(if failed == 0 {
        Outcome::Complete
    } else {
        Outcome::Partial
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_are_consistent() {
        tool_cli::command::<Args>().debug_assert();
    }
}
