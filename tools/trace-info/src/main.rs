//! trace-info: the first command to run on a new capture. Says what it holds and what the
//! readers understood of it.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

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

    /// Threads that split and parse each trace (default: every core); the result is the same for
    /// any number.
    #[arg(long, value_name = "N")]
    threads: Option<std::num::NonZeroUsize>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    tool_progress::install();
    if let Some(n) = args.threads {
        load::set_threads(n.get());
    }
    match run(&args) {
        Ok(Outcome::Complete) => ExitCode::SUCCESS,
        Ok(Outcome::Partial) => ExitCode::from(3),
        Err(e) if output_file::is_broken_pipe(e.as_ref()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("trace-info: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Whether every file of the input was read.
enum Outcome {
    Complete,
    Partial,
}

fn run(args: &Args) -> anyhow::Result<Outcome> {
    // Every reader error names the file and the place: no context to add.
    let each = load::load_each(&args.capture)?;
    for err in &each.failed {
        eprintln!(
            "trace-info: warning: not read: {}",
            analysis::error_chain(err)
        );
    }
    if each.loaded.is_empty() {
        anyhow::bail!("no capture in {} could be read", args.capture.display());
    }
    let loaded = each.loaded;
    let inventories: Vec<_> = loaded.iter().map(analysis::inventory).collect();
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
    Ok(if each.failed.is_empty() {
        Outcome::Complete
    } else {
        Outcome::Partial
    })
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
