//! Output paths and writing: `.json.gz` or `.json` by the name's suffix, through a
//! temporary file in the same directory renamed into place.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use crate::{Error, Trace};

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
    let pending = output_file::Pending::create(path, rules)?;
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        action: "cannot write the output",
        source,
    };
    let file = pending.file().try_clone().map_err(io)?;
    let gzip = path.extension().is_some_and(|e| e == "gz");
    let res = if gzip {
        let mut w = ThreadedGzWriter::spawn(file);
        trace.write_json(&mut w).and_then(|()| w.finish())
    } else {
        let mut w = BufWriter::with_capacity(1 << 20, file);
        trace.write_json(&mut w).and_then(|()| w.flush())
    };
    res.map_err(io)?;
    pending.commit()?;
    Ok(())
}

/// Compresses on a second thread, so that serializing and deflating overlap.
/// Fast compression: the output is for viewing, and level 6+ would dominate the run time.
struct ThreadedGzWriter {
    buf: Vec<u8>,
    tx: Option<mpsc::SyncSender<Vec<u8>>>,
    worker: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

const CHUNK: usize = 256 << 10;

impl ThreadedGzWriter {
    fn spawn(file: File) -> Self {
        let (tx, rx) = mpsc::sync_channel::<Vec<u8>>(2);
        let worker = std::thread::spawn(move || {
            let mut enc = flate2::write::GzEncoder::new(
                BufWriter::with_capacity(CHUNK, file),
                flate2::Compression::fast(),
            );
            for chunk in rx {
                enc.write_all(&chunk)?;
            }
            enc.finish()?.flush()
        });
        ThreadedGzWriter {
            buf: Vec::with_capacity(CHUNK),
            tx: Some(tx),
            worker: Some(worker),
        }
    }

    fn send(&mut self) -> std::io::Result<()> {
        let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK));
        let Some(tx) = self.tx.as_ref() else {
            return Err(std::io::Error::other("the output was already finished"));
        };
        if tx.send(chunk).is_err() {
            // The worker stopped on an error: finish() reports it.
            return self.finish();
        }
        Ok(())
    }

    fn finish(&mut self) -> std::io::Result<()> {
        if let Some(tx) = self.tx.as_ref()
            && !self.buf.is_empty()
        {
            // A send error means the worker stopped on an error, which join reports.
            let _ = tx.send(std::mem::take(&mut self.buf));
        }
        self.tx = None;
        match self.worker.take() {
            Some(worker) => worker
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("the compression thread panicked"))),
            None => Err(std::io::Error::other("the output was already finished")),
        }
    }
}

impl Write for ThreadedGzWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK {
            self.send()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
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
}
