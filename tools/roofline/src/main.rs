//! `roofline`: FLOPs, bytes and bound per op against the vendor peak of its dtype. Argument
//! parsing and file writing only; the analysis is the `roofline` crate.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

/// Roofline of a GPU profiler capture: which ops are compute-bound, which memory-bound, and
/// how far each is from the peak of its dtype.
///
/// Reads a JAX XSpace (`*.xplane.pb`, or a directory holding one) or a PyTorch profiler
/// (Kineto) trace `.json` / `.json.gz` taken with `record_shapes=True`. Nsight Systems and ROCm
/// profiler captures record no operator shapes: for them it gives the GPU time per kernel only.
///
/// Per op (an HLO instruction of one program; an ATen op with one set of input shapes),
/// summed over its executions:
///   - time: the GPU time of its kernels [measured]. JAX: kernels whose `hlo_op` stat names
///     the instruction; PyTorch: kernels launched under the op (correlation id -> runtime
///     launch -> the outermost GEMM/convolution/attention op around it);
///   - FLOPs and bytes from shapes [inferred]: dot, convolution, fusion (FLOPs of the fused
///     computation; bytes of its operands and result), elementwise (1 FLOP per element,
///     transcendentals included), reduce, cuBLAS/hipBLASLt GEMM and cuDNN/MIOpen
///     convolution calls; collectives and copies count bytes only. ATen: mm, addmm, bmm,
///     baddbmm, linear, matmul, _scaled_mm, convolutions and their backward, SDPA/flash
///     attention forward and backward (causal halves the FLOPs);
///   - the peak for its operand dtype [read: the vendor data sheet named in the output]:
///     an FP32 GEMM is held against FP32 (TF32 only when a kernel name says tf32/xf32),
///     never BF16; elementwise work against the vector FP32 (or FP64) rate;
///   - intensity against the ridge point of that dtype -> compute- or memory-bound, and the
///     achieved FLOP/s and bytes/s as a share of each peak.
///
/// An unknown GPU model gets a peak inferred from cores x clock x the architecture's rate,
/// or none; never another GPU's figures. Ops without shapes are listed on the trust list.
///
/// --csv and --svg are written under temporary names beside them and put in place
/// together when both are complete; an existing file is replaced only with --overwrite.
///
/// Exit status: 0 on success; 2 on bad input, a refused output or a failing stdout
/// (nothing is written); an interrupted run leaves nothing behind.
///
/// Examples:
///   roofline run/host.xplane.pb
///   roofline trace.json.gz --top 40 --svg roofline.svg --csv ops.csv
///   roofline trace.json.gz --json > roofline.json
#[derive(Debug, Parser)]
#[command(name = "roofline", version, verbatim_doc_comment)]
struct Args {
    /// An `.xplane.pb` (or a directory holding one), a Kineto `.json[.gz]`, or another capture
    /// one loader reads (Nsight Systems export, ROCm profiler capture).
    #[arg(value_name = "CAPTURE")]
    capture: PathBuf,

    /// Print JSON: the device with its peak source, and one object per op, every value
    /// with its label (measured, read, inferred).
    #[arg(long)]
    json: bool,

    /// Write every op as CSV to FILE.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,

    /// Write the roofline chart as SVG to FILE.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,

    /// Replace existing --csv/--svg files. A directory, device, symbolic link, the capture
    /// or a file inside a capture directory is never replaced.
    #[arg(long)]
    overwrite: bool,

    /// Ops in the table, and labelled dots in the chart.
    #[arg(long, value_name = "N", default_value_t = 25)]
    top: usize,
}

const TOOL: tool_cli::Tool = tool_cli::Tool("roofline");

fn main() -> ExitCode {
    TOOL.main(run)
}

fn run(args: &Args) -> anyhow::Result<()> {
    let inputs = [args.capture.as_path()];
    let rules = output_file::Rules {
        overwrite: args.overwrite,
        inputs: &inputs,
    };
    // Refused before the analysis, and again when the files are put in place.
    for path in [&args.csv, &args.svg].into_iter().flatten() {
        output_file::check(path, &rules)?;
    }
    if let (Some(csv), Some(svg)) = (&args.csv, &args.svg)
        && csv == svg
    {
        anyhow::bail!("--csv and --svg name the same file {}", csv.display());
    }
    let report = roofline::analyze(&args.capture)
        .with_context(|| format!("analysing {}", args.capture.display()))?;
    let mut files = Vec::new();
    if let Some(path) = &args.csv {
        files.push(stage(path, &rules, &report::roofline_text::csv(&report))?);
    }
    if let Some(path) = &args.svg {
        files.push(stage(
            path,
            &rules,
            &report::roofline_text::svg(&report, args.top),
        )?);
    }
    let text = if args.json {
        let mut s = serde_json::to_string_pretty(&report)?;
        s.push('\n');
        s
    } else {
        report::roofline_text::text(&report, args.top)
    };
    // Printed before the files are put in place: a failing stdout commits nothing.
    output_file::print(text.as_bytes()).context("writing to stdout")?;
    output_file::commit_all(files)?;
    Ok(())
}

/// Stages `text` for `path` under the workspace's output rules (`output_file`).
fn stage(
    path: &Path,
    rules: &output_file::Rules<'_>,
    text: &str,
) -> anyhow::Result<output_file::Pending> {
    let mut pending = output_file::Pending::create(path, rules)?;
    pending
        .file_mut()
        .write_all(text.as_bytes())
        .with_context(|| format!("{}: cannot write", path.display()))?;
    Ok(pending)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args() {
        tool_cli::command::<Args>().debug_assert();
    }
}
