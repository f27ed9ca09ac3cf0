//! The `analyze-profile` summary of a `torch.profiler` (Kineto) trace: GPU time by bucket,
//! attention backend, top ops and the reference script's hints, in two modes.
//!
//! - [`compat`] (`--compat`): the reference script `analyze_profile.py`, reproduced byte
//!   for byte. It sums the `dur` of GPU activities *and* of runtime calls and annotations
//!   by event name and divides by GPU time, so its shares can exceed 100 %.
//! - [`gpu`] (default): only GPU activities (kernels, memcpys, memsets), each attributed to
//!   the CPU op that launched it and bucketed by [`buckets`]' rules (an ATen op's name when
//!   its kernels are of one class, else the kernel's class); the buckets sum to the GPU
//!   time exactly.
//!
//! [`run`] is the whole tool behind one call: it picks the files, runs a mode and
//! renders text or JSON.

pub mod buckets;
mod compat;
pub(crate) mod gpu;
mod py;
mod rules;

use std::io::Read;
use std::path::{Path, PathBuf};

pub use py::{group_thousands, python_prefix_len, truncate_name};

use crate::Error;

/// What to analyse.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Input {
    /// One trace file.
    File(PathBuf),
    /// A directory: its `*.pt.trace.json*` files, sorted by name (the first one only,
    /// unless [`Config::all_ranks`]).
    Dir(PathBuf),
}

/// Which numbers to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mode {
    /// GPU activities attributed to their launching CPU op; buckets sum to GPU time.
    Gpu,
    /// The reference script's numbers and text, exactly.
    Compat,
}

/// Options of one `analyze-profile` run.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file or directory to read.
    pub input: Input,
    /// Rows of the top-ops table (the reference script's `--top_n`; negative values slice
    /// like Python).
    pub top_n: i64,
    /// The numbers to compute.
    pub mode: Mode,
    /// JSON instead of text.
    pub json: bool,
    /// Every matching file of a directory instead of the first.
    pub all_ranks: bool,
}

/// The file-name pattern the reference script globs for in a directory.
pub const DIR_PATTERN: &str = "*.pt.trace.json*";

/// What one `analyze-profile` run found: the original script's text (`--compat`, its
/// exact bytes) or the default mode's summaries, which `report::bucket_text` renders.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Output {
    /// The original script's output, to print as it is.
    Compat(String),
    /// One summary per file read.
    Gpu(Vec<gpu::GpuSummary>),
    /// A partial result of a directory (`--all-ranks`): one summary per file read, and
    /// the error of each file that could not be read (each names its file).
    GpuPartial(Vec<gpu::GpuSummary>, Vec<String>),
}

/// Runs one `analyze-profile` invocation.
pub fn run(config: &Config) -> Result<Output, Error> {
    let mut unread = Vec::new();
    let files = match &config.input {
        Input::File(path) => vec![path.clone()],
        Input::Dir(dir) if config.mode == Mode::Compat => {
            // The reference script's glob finds nothing in a missing or unreadable
            // directory either, and then prints this line and exits successfully.
            let mut files = trace_files_in(dir).map(|l| l.files).unwrap_or_default();
            if files.is_empty() {
                return Ok(Output::Compat(format!(
                    "no trace file found in {}\n",
                    dir.to_string_lossy()
                )));
            }
            if !config.all_ranks {
                files.truncate(1);
            }
            files
        }
        Input::Dir(dir) => {
            let listing = trace_files_in(dir)?;
            unread = listing.unread;
            let mut files = listing.files;
            if !config.all_ranks {
                files.truncate(1);
            }
            files
        }
    };
    match config.mode {
        Mode::Compat => run_compat(&files, config).map(Output::Compat),
        Mode::Gpu => gpu::run(&files).map(|(summaries, failed)| {
            let unread: Vec<String> = unread
                .iter()
                .map(|e| crate::error_chain(e))
                .chain(failed)
                .collect();
            if unread.is_empty() {
                Output::Gpu(summaries)
            } else {
                Output::GpuPartial(summaries, unread)
            }
        }),
    }
}

/// The original script's `--json` line for one trace given as decompressed JSON text
/// (`path` only names it in errors): `--compat --json` without the file.
pub fn compat_json_from_reader(input: impl Read + Send, path: &Path) -> Result<String, Error> {
    let summary = compat::compat_summary_from_reader(input, path)?;
    Ok(compat::render_compat_json(&summary))
}

/// The files of `dir` that the reference script's `glob(os.path.join(dir,
/// '*.pt.trace.json*'))` matches, sorted as Python sorts strings, with the entries of the
/// directory that could not be read (the one listing of every tool, `load::files`: a FIFO
/// or device named like a trace is passed over, a name whose metadata cannot be read is
/// kept so that loading it says what happened).
pub(crate) fn trace_files_in(dir: &Path) -> Result<load::files::Listing, Error> {
    // UTF-8 byte order is code-point order, which is how Python compares strings; the
    // listing is in that order.
    let listing = load::files::list_files(dir, |name| {
        !name.starts_with('.') && name.contains(".pt.trace.json")
    })?;
    if listing.files.is_empty() {
        return Err(Error::NoTraceFiles {
            path: dir.to_path_buf(),
            pattern: DIR_PATTERN,
        });
    }
    Ok(listing)
}

/// The reference script's main loop: one report (or one JSON line) per file.
fn run_compat(files: &[PathBuf], config: &Config) -> Result<String, Error> {
    let mut out = String::new();
    for path in files {
        let file_bytes = std::fs::metadata(path)
            .map_err(|source| Error::Io {
                path: path.clone(),
                source,
            })?
            .len();
        let summary = compat::compat_summary(path)?;
        if config.json {
            out.push_str(&compat::render_compat_json(&summary));
        } else {
            let path_as_given = path.to_string_lossy();
            let header = compat::CompatHeader {
                path_as_given: &path_as_given,
                file_bytes,
            };
            out.push_str(&compat::render_compat_text(&header, &summary, config.top_n));
        }
    }
    Ok(out)
}
