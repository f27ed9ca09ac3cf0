//! `compare`: a before/after comparison of two captures. Argument parsing and file
//! writing only; the comparison is `report::compare`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

/// Did the change help, and as much as predicted? Compares two captures of the same job.
///
/// BEFORE and AFTER are anything the other tools read: a Kineto trace (.json, .json.gz),
/// a directory of rank traces, an .xplane.pb or JAX capture directory, an Nsight Systems
/// SQLite export or a ROCm profiler capture. Each is read once and analysed as skip-stats
/// does; every figure is taken per steady-state step (warm-up left out) of every rank, so
/// captures of different lengths compare. Either side may also be a report.json that
/// investigate wrote (when the capture itself is gone): it gives its step figures and
/// ranked causes, so step time and predicted against realized gains compare, and the
/// tables that need the capture (budgets, kernels, ops) stay empty.
///
/// What it says:
///   1. the median step before and after, and a verdict: faster, slower, no change beyond
///      noise, or inconclusive with the reasons (different GPU models or counts, different
///      step definitions, fewer than 3 steady-state steps, kernel sets that share under
///      half their time);
///   2. each cause investigate ranks on BEFORE (idle by gap cause, exposed collectives and
///      copies, layout, elementwise and eager attention kernels), its predicted gain per step, its time per
///      step after, and realized gain / predicted gain;
///   3. the median step of each side drawn one above the other on one time axis (HTML);
///   4. per-stream budgets (compute, collective, memcpy, idle; a bar chart of their
///      changes in the HTML), time per kernel class, kernels by normalised name (template
///      arguments and hashes set aside; added, removed, renamed within class), CPU ops by
///      name and input shapes, Python lines (when both sides have stacks), each with
///      counts and totals;
///   5. the kernels that replaced others under the same op and shapes (cuBLAS → hipBLASLt,
///      FlashAttention → another attention kernel), with the op as evidence.
///
/// The noise rule: a row changes only when its difference of medians exceeds the larger
/// side's spread, max(IQR over steps, 1 % of the median). Every figure is labelled
/// measured, read or inferred; the report says what each inferred one assumes.
///
/// A side of more than 1,024 capture files (ranks) is refused (exit 2).
///
/// Writes the report directory --out (default ./compare-report/): report.md, report.html,
/// report.json and one CSV per table. The directory is written beside --out under a
/// temporary name and put in place whole; an existing one is replaced only with
/// --overwrite and only if a tracewise tool wrote it. `.`, a parent, home, an input,
/// a symbolic link and a directory of the user's are never written into. With --json (and
/// no --out) report.json goes to stdout and nothing is written. Exit status: 0 when the
/// comparison was made (whatever its verdict), 2 on error.
///
/// Examples:
///   compare before.pt.trace.json.gz after.pt.trace.json.gz
///   compare runs/baseline/ runs/fused/ --out /tmp/cmp --overwrite
///   compare before.json after.json --json | jq '.findings'
#[derive(Debug, Parser)]
#[command(name = "compare", version, verbatim_doc_comment)]
struct Args {
    /// The capture before the change (or investigate's report.json of it).
    #[arg(value_name = "BEFORE")]
    before: PathBuf,

    /// The capture after the change (or investigate's report.json of it).
    #[arg(value_name = "AFTER")]
    after: PathBuf,

    /// Directory to write the report into (default: ./compare-report/).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,

    /// Replace existing report files.
    #[arg(long)]
    overwrite: bool,

    /// Print report.json to stdout instead of writing files (unless --out is given too).
    #[arg(long)]
    json: bool,
}

const TOOL: tool_cli::Tool = tool_cli::Tool("compare");

fn main() -> ExitCode {
    TOOL.main(|args: &Args| {
        let said = run(args)?;
        // A closed stdout (`| head`) is fine.
        output_file::print(said.as_bytes()).context("writing to stdout")
    })
}

/// The most capture files a side may have. A side's per-stream samples grow with the
/// square of its ranks (each rank's rows hold a sample slot for every steady step of
/// every rank): 1,000 tiny ranks took 0.3 GB, 2,000 took 1 GB, 10,000 passed 8 GiB. Past
/// this the comparison is refused before anything is loaded.
const MAX_FILES: usize = 1024;

/// Refuses a side of more than [`MAX_FILES`] capture files, naming it and the limit.
fn check_size(path: &Path, name: &str) -> anyhow::Result<()> {
    // A side that cannot be listed is left to the comparison's own error.
    let Ok(files) = load::file_count(path) else {
        return Ok(());
    };
    if files > MAX_FILES {
        anyhow::bail!(
            "{name}: {}: {files} capture files; compare reads at most {MAX_FILES} per side \
             (its memory grows with the square of the ranks): compare a directory of fewer \
             ranks, or investigate's report.json of each side",
            path.display()
        );
    }
    Ok(())
}

/// Why `before` and `after` are one capture, if they are: the same resolved path (a
/// link, `./x` and `x`), or two files of the same bytes.
fn same_capture(before: &Path, after: &Path) -> Option<String> {
    let (b, a) = (before.canonicalize().ok()?, after.canonicalize().ok()?);
    if b == a {
        return Some(format!("both resolve to {}", b.display()));
    }
    let (mb, ma) = (std::fs::metadata(&b).ok()?, std::fs::metadata(&a).ok()?);
    if !(mb.is_file() && ma.is_file() && mb.len() == ma.len()) {
        return None;
    }
    same_bytes(&b, &a).then(|| {
        format!(
            "{} and {} have the same {} bytes",
            b.display(),
            a.display(),
            mb.len()
        )
    })
}

/// Whether two files hold the same bytes, read in blocks (never whole).
fn same_bytes(a: &Path, b: &Path) -> bool {
    use std::io::Read;
    let (Ok(mut fa), Ok(mut fb)) = (std::fs::File::open(a), std::fs::File::open(b)) else {
        return false;
    };
    let (mut ba, mut bb) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    loop {
        let Ok(n) = fa.read(&mut ba) else {
            return false;
        };
        if n == 0 {
            return fb.read(&mut bb).is_ok_and(|m| m == 0);
        }
        if fb.read_exact(&mut bb[..n]).is_err() || ba[..n] != bb[..n] {
            return false;
        }
    }
}

/// Compares, writes the files, and returns what goes to stdout.
fn run(args: &Args) -> anyhow::Result<String> {
    check_size(&args.before, "before")?;
    check_size(&args.after, "after")?;
    if let Some(why) = same_capture(&args.before, &args.after) {
        TOOL.warn(format_args!(
            "before and after are the same capture ({why}): every difference below is noise"
        ));
    }
    let comparison = compare::compare(&args.before, &args.after, &Default::default())
        .with_context(|| {
            format!(
                "comparing {} with {}",
                args.before.display(),
                args.after.display()
            )
        })?;
    let doc = report::compare::document(&comparison);
    let json = report::report_json::to_string(&doc);
    if args.json && args.out.is_none() {
        return Ok(json);
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("compare-report"));
    let inputs: [&Path; 2] = [&args.before, &args.after];
    let rules = output_file::Rules {
        overwrite: args.overwrite,
        inputs: &inputs,
    };
    // A report directory of its own, as investigate writes one: staged beside --out with
    // its marker and put in place whole; never `.`, a parent, home, an input, a symbolic
    // link or a directory of the user's, so no file of the user's is replaced or mixed in.
    let dir = output_file::DirOutput::create(&out, &rules)?;
    dir.write("report.md", report::markdown::render(&doc).as_bytes())?;
    dir.write("report.html", report::html::render(&doc).as_bytes())?;
    dir.write("report.json", json.as_bytes())?;
    for table in doc.tables() {
        dir.write(
            format!("{}.csv", table.name),
            report::csv::render(table).as_bytes(),
        )?;
    }
    dir.commit()?;
    Ok(if args.json {
        json
    } else {
        format!("report written to {}\n", out.join("report.md").display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args() {
        tool_cli::command::<Args>().debug_assert();
    }
}
