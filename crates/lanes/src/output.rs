//! Output paths and writing: `.json.gz` or `.json` by the name's suffix, through a
//! temporary file in the same directory renamed into place.

use output_file::FsError;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::{Error, Trace};

/// The deflate level of `.json.gz` output. zlib-rs's levels 4 to 6 share one matcher and
/// differ in how far it searches (hash chains of 16 at 4, 32 at 5, 128 at 6). Sizes on
/// hta-cudagraph-a100 rank 0 against `gzip -9` of the same JSON: 1.11× at 6, 1.13× at 5,
/// 1.22× at 4, 1.37× at 3 (where a faster matcher starts), 1.87× at 1. At 4 a compaction
/// of df_index_resolver takes about 6% less CPU than at 5 (25-30 ms of 0.46 s, `perf stat`
/// medians of 8, 2026-12-01), the output staying within the 1.25× the bench allows.
const GZIP_LEVEL: u32 = 4;

/// The default output of a single-trace compaction: `<stem>_compacted.json.gz` beside a
/// `.json.gz` input, `<stem>_compacted.json` beside a `.json` one, else
/// `<name>_compacted.json.gz`.
pub fn default_output(input: &Path) -> PathBuf {
    let name = input
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = if let Some(stem) = name.strip_suffix(".json.gz") {
        format!("{stem}_compacted.json.gz")
    } else if let Some(stem) = name.strip_suffix(".json") {
        format!("{stem}_compacted.json")
    } else {
        format!("{name}_compacted.json.gz")
    };
    input.with_file_name(name)
}

/// The default output of a merge: `pp_traces_merged_compacted.json.gz` in the input
/// directory (or beside the input file).
pub fn default_merged_output(input: &Path) -> PathBuf {
    let dir = if input.is_dir() {
        input
    } else {
        input.parent().unwrap_or(Path::new(""))
    };
    dir.join("pp_traces_merged_compacted.json.gz")
}

/// Writes `trace` to `path`, gzip if the name ends in `.gz`; fails if `path` exists.
pub fn write_trace_file(trace: &Trace, path: &Path) -> Result<(), Error> {
    let inputs = [trace.source.as_path()];
    let rules = output_file::Rules {
        overwrite: false,
        inputs: &inputs,
    };
    write_trace(trace, path, &rules)
}

/// Writes `trace` to `path`, gzip if the name ends in `.gz`, replacing a regular file there
/// (never a directory, device, symlink or the trace's own source).
pub fn overwrite_trace_file(trace: &Trace, path: &Path) -> Result<(), Error> {
    let inputs = [trace.source.as_path()];
    let rules = output_file::Rules {
        overwrite: true,
        inputs: &inputs,
    };
    write_trace(trace, path, &rules)
}

/// Writes `trace` to `path` under the workspace's output rules (`output_file`): through a
/// temporary file renamed into place, refusing what `rules` refuses.
pub fn write_trace(
    trace: &Trace,
    path: &Path,
    rules: &output_file::Rules<'_>,
) -> Result<(), Error> {
    stage_trace(trace, path, rules)?.commit()?;
    Ok(())
}

/// Writes `trace` as [`write_trace`] does, but leaves it staged: the caller commits it
/// (`output_file::Pending::commit`) when the rest of its run succeeded, or drops it.
pub fn stage_trace(
    trace: &Trace,
    path: &Path,
    rules: &output_file::Rules<'_>,
) -> Result<output_file::Pending, Error> {
    let pending = output_file::Pending::create(path, rules)?;
    let io = |source| {
        Error::Io(FsError {
            path: path.to_path_buf(),
            action: "cannot write the output",
            source,
        })
    };
    let file = pending.file().try_clone().map_err(io)?;
    let gzip = path.extension().is_some_and(|e| e == "gz");
    let res = if gzip {
        // Deflated at `GZIP_LEVEL` on every core, in order, by chunks (see `gzip`).
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let out = BufWriter::with_capacity(64 << 10, file);
        let level = flate2::Compression::new(GZIP_LEVEL);
        let mut w = crate::gzip::ParallelGzWriter::new(out, threads, level);
        trace.write_json(&mut w).and_then(|()| w.finish())
    } else {
        let mut w = BufWriter::with_capacity(1 << 20, file);
        trace.write_json(&mut w).and_then(|()| w.flush())
    };
    // A second read of the input (see `Trace::read_file_for_compaction`) fails with an
    // error of ours inside the I/O error.
    res.map_err(|e| match e.downcast::<Error>() {
        Ok(e) => e,
        Err(e) => io(e),
    })?;
    Ok(pending)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expect: &str) {
        assert_eq!(default_output(Path::new(input)), PathBuf::from(expect));
    }

    #[test]
    fn default_names() {
        check("d/rank0_trace.json.gz", "d/rank0_trace_compacted.json.gz");
        check("d/rank0_trace.json", "d/rank0_trace_compacted.json");
        check("trace.pt", "trace.pt_compacted.json.gz");
    }

    /// Every name a compaction writes by default is one the loader passes over in a rank
    /// directory, so the output is never read back as one more rank.
    #[test]
    fn default_names_are_not_read_back_as_ranks() {
        let outputs = [
            default_output(Path::new("d/rank0.pt.trace.json.gz")),
            default_output(Path::new("d/rank0.pt.trace.json")),
            default_output(Path::new("d/trace.pt")),
            default_merged_output(Path::new("d/rank0_trace.json")),
        ];
        for out in outputs {
            let name = out.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            assert!(chrome_reader::is_compaction_output(name), "{name}");
        }
        assert!(!chrome_reader::is_compaction_output(
            "rank0.pt.trace.json.gz"
        ));
    }
}
