//! `cargo xtask`: project automation, one module per subcommand.
//!
//! Subcommands:
//! - `gen-proto [--check]`: regenerate the committed prost code from `proto/`.
//! - `fixtures [--check]`: synthetic traces and golden outputs under `testdata/`.
//! - `bench [--quick]`: release build, then the performance figures against their targets.
//! - `fuzz [--secs N] [--target NAME]`: mutate testdata/ seeds through the readers
//!   (chrome, xplane, hlo, lanes, nsys, rocprof) under catch_unwind; save panicking inputs.
//! - `synth-ranks --ranks N --out DIR [--mb-per-rank M] [--seed S]`: a synthetic N-rank
//!   Kineto job with a planted straggler and skewed clocks (`synth_ranks.rs`).
//! - `tidy [--snapshot-references FILE]`: every Rust source opens with `//!`; no pending
//!   insta snapshot; with FILE, no committed snapshot that no test asserted.
//!
//! To add a subcommand, add a module and one arm to `run`.

mod bench;
mod fixtures;
mod fuzz;
mod gen_proto;
mod simd_bench;
mod synth_gpu;
mod synth_ranks;
mod synth_xplane;
mod tidy;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &[String]) -> Result<(), String> {
    let (command, rest) = match args.split_first() {
        Some((command, rest)) => (command.as_str(), rest),
        None => return Err(usage()),
    };
    match command {
        "bench" => bench::main(rest),
        "fixtures" => fixtures::main(rest),
        "fuzz" => fuzz::main(rest),
        "gen-proto" => gen_proto::main(rest),
        "synth-ranks" => synth_ranks::main(rest),
        "tidy" => tidy::main(rest),
        "help" | "--help" | "-h" => {
            println!("{}", usage());
            Ok(())
        }
        other => Err(format!("unknown subcommand `{other}`\n{}", usage())),
    }
}

fn usage() -> String {
    "usage: cargo xtask <subcommand>\n\nsubcommands:\n  fixtures [--check]   regenerate (or check) the synthetic traces and golden outputs in testdata/\n  gen-proto [--check]  regenerate (or check) the prost code generated from proto/\n  bench [--quick] [--reader] [--floor [--runs N]] [--xplane] [--hta --python PATH] [--python-package --python PATH] [--nsys] [--pipeline] [--ranks N [--mb-per-rank M]] [--synthetic-mb N]\n                       release build, then time and memory against zcat, the original Python script and a 1 GB synthetic trace\n                       (--reader: only the reader rows, tools ÷ zcat and model build by threads;\n                        --floor: only every reader, skip-stats and compaction ÷ zcat on df_index_resolver, N interleaved rounds (default 9) with quartiles and the load average, and trace-info on an 8-member gzip twin ÷ its single-member twin;\n                        --xplane: only xplane-reader's rows, decode and load_capture speed and peak RSS;\n                        --hta: only profile-model against HTA 0.5.0 run by the Python at PATH;\n                        --python-package: only the Python package's rows (tracewise.hta and load().kernels() against HTA and json.load), with the Python at PATH;\n                        --nsys: only nsys-reader's rows, load ÷ sqlite3 .dump and peak RSS ÷ file size;
                        --pipeline: only investigate ÷ skip-stats, investigate ÷ trace-info, compare ÷ two skip-stats;\n                        --ranks: only investigate, skip-stats and trace-info on N synthetic ranks (synth-ranks), time, peak RSS, straggler found)\n  fuzz [--secs N] [--target chrome|xplane|hlo|lanes|nsys|rocprof] [--dev]\n                       fuzz the readers for N seconds per target (stable harness; crashes go to target/fuzz-crashes/)\n  synth-ranks --ranks N --out DIR [--mb-per-rank M] [--seed S] [--overwrite]\n                       a synthetic N-rank Kineto job: one straggler, skewed clocks, collectives matched by order (PLANTED.md says what)\n  tidy [--snapshot-references FILE]\n                       every Rust source opens with //!, no pending snapshot; with FILE (written by the\n                       tests under INSTA_SNAPSHOT_REFERENCES_FILE), every committed .snap is asserted".to_owned()
}

/// The workspace root: xtask lives one level below it.
pub(crate) fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .expect("invariant: xtask's manifest dir has a parent (the workspace root)")
        .to_path_buf()
}
