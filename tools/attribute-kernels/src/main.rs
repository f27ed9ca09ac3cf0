//! `attribute-kernels`: every GPU kernel to its HLO instruction, op and Python line. Argument
//! parsing and file writing only; the attribution is the `attribution` crate.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

/// Attribute every GPU kernel of a capture to the code that launched it.
///
/// JAX (`<host>.xplane.pb`, or a capture directory holding one): kernel -> HLO instruction
/// -> op_name -> Python line, from the HLO modules stored in the capture. Match kinds:
///   exact  the kernel's own `hlo_op` stat names an instruction of its program;
///   name   a graph / command-buffer kernel, or one without `hlo_op`, whose name is the
///          only candidate in its window (between two exact kernels in schedule order);
///   order  library GEMMs, copies, collectives (and async collectives missing from the
///          stored module) matched in schedule order within their window;
///   none   no candidate left.
/// `while` loops are unrolled by their `known_trip_count`. Every program is attributed;
/// `--program` keeps one. The program with the most GPU time has its HLO text written.
///
/// PyTorch (Kineto `.json[.gz]`): kernel -> correlation id -> runtime launch -> innermost
/// CPU op -> enclosing python_function frames (with_stack=True) -> first user frame.
///
/// Writes kernels.csv, ops.csv, lines.csv, how.csv, summary.txt and <program>(<id>).hlo.txt
/// to the directory --out (default ./attribution/); prints the summary. Every number is
/// measured.
///
/// The directory is written under a temporary name beside --out and put in place whole
/// (all files or none). It holds a `.tracewise-output` file; an existing directory is
/// replaced only when it has that file and --overwrite is given (or is empty), and never
/// when it is or holds the capture, `.`, a parent of the current directory, the home
/// directory or `/`.
///
/// Exit status: 0 when the files were written; 2 on bad input, a refused output or a
/// failing stdout (nothing is written); an interrupted run leaves nothing behind.
///
/// Examples:
///   attribute-kernels run/plugins/profile/2025_01_01/host.xplane.pb
///   attribute-kernels trace.json.gz --out attr --overwrite --json
#[derive(Debug, Parser)]
#[command(name = "attribute-kernels", version, verbatim_doc_comment)]
struct Args {
    /// An `.xplane.pb`, a capture directory, a Kineto `.json[.gz]`, an Nsight Systems SQLite
    /// export or a ROCm profiler capture (kernels to their launching host call and thread).
    #[arg(value_name = "CAPTURE")]
    capture: PathBuf,

    /// Attribute only this program id (JAX).
    #[arg(long, value_name = "ID")]
    program: Option<i64>,

    /// Regex over a frame's file path that says which frame is user code (default: the first
    /// frame outside site-packages and jax; for PyTorch also outside torch and the stdlib).
    #[arg(long = "user-re", alias = "user_re", value_name = "REGEX")]
    user_re: Option<String>,

    /// Output directory (written whole; see above).
    #[arg(long, value_name = "DIR", default_value = "attribution")]
    out: PathBuf,

    /// Replace an existing output directory that a tracewise tool wrote.
    #[arg(long)]
    overwrite: bool,

    /// Print the summary as JSON instead of text.
    #[arg(long)]
    json: bool,
}

const TOOL: tool_cli::Tool = tool_cli::Tool("attribute-kernels");

fn main() -> ExitCode {
    TOOL.main(run)
}

fn run(args: &Args) -> anyhow::Result<()> {
    let user_re = match &args.user_re {
        Some(text) => Some(regex::Regex::new(text).with_context(|| format!("--user-re {text:?}"))?),
        None => None,
    };
    let config = attribution::Config {
        program: args.program,
        user_re,
    };
    let inputs = [args.capture.as_path()];
    let rules = output_file::Rules {
        overwrite: args.overwrite,
        inputs: &inputs,
    };
    // Refused before the attribution, and again when the files are put in place.
    output_file::check_dir(&args.out, &rules)?;
    let result = attribution::attribute_path(&args.capture, &config)
        .with_context(|| format!("attributing {}", args.capture.display()))?;
    let files = report::attribution_text::files(&result);
    let out = output_file::DirOutput::create(&args.out, &rules)?;
    for (name, text) in &files {
        out.write(name, text.as_bytes())?;
    }
    let text = if args.json {
        let mut s = report::attribution_text::summary_json(&result);
        s.push('\n');
        s
    } else {
        files
            .iter()
            .find(|(name, _)| name == "summary.txt")
            .map(|(_, text)| text.clone())
            .unwrap_or_default()
    };
    // Printed before the files are put in place: a failing stdout commits nothing.
    output_file::print(text.as_bytes()).context("writing to stdout")?;
    out.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args() {
        tool_cli::command::<Args>().debug_assert();
    }
}
