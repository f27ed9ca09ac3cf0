//! `attribute-kernels`: every GPU kernel to its HLO instruction, op and Python line. Argument
//! parsing and file writing only; the attribution is the `attribution` crate.

use std::io::Write;
use std::path::{Path, PathBuf};
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
/// to --out (default ./attribution/); prints the summary. Every number is measured.
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

    /// Output directory.
    #[arg(long, value_name = "DIR", default_value = "attribution")]
    out: PathBuf,

    /// Replace existing output files.
    #[arg(long)]
    overwrite: bool,

    /// Print the summary as JSON instead of text.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if output_file::is_broken_pipe(e.as_ref()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("attribute-kernels: {e:#}");
            ExitCode::from(2)
        }
    }
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
    let result = attribution::attribute_path(&args.capture, &config)
        .with_context(|| format!("attributing {}", args.capture.display()))?;
    let files = report::attribution_text::files(&result);
    write_all(&args.out, &files, args.overwrite)?;
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
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}

/// Every file goes to a temporary name in the output directory and is renamed into place
/// only when all are written; none is replaced without `--overwrite`, checked before
/// anything is written.
fn write_all(dir: &Path, files: &[(String, String)], overwrite: bool) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    for (name, _) in files {
        let path = dir.join(name);
        if path.exists() && !overwrite {
            anyhow::bail!(
                "{}: exists; pass --overwrite to replace it (nothing was written)",
                path.display()
            );
        }
    }
    let mut pending = Vec::new();
    for (name, text) in files {
        let mut tmp = tempfile::Builder::new()
            .prefix(".attribute-kernels.")
            .tempfile_in(dir)
            .with_context(|| format!("{}: cannot create a temporary file", dir.display()))?;
        tmp.write_all(text.as_bytes())
            .and_then(|()| tmp.flush())
            .with_context(|| format!("{}: cannot write", tmp.path().display()))?;
        pending.push((tmp, dir.join(name)));
    }
    for (tmp, path) in pending {
        tmp.persist(&path)
            .with_context(|| format!("{}: cannot rename into place", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn args() {
        Args::command().debug_assert();
    }
}
