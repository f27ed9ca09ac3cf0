//! Whole files the Python drop-in writes (HTA's `CPGraph.save`: a frame as CSV, two
//! pickles and their zip), through output-file: staged, then renamed into place together.

use std::io::Write;
use std::path::{Path, PathBuf};

use pyo3::prelude::*;

use crate::{fail, run};

/// Writes each (path, bytes) of `files` through output-file, an earlier output replaced
/// and never one of `inputs`. All are staged first and committed together
/// (`output_file::commit_all`): on an error none is left half-written.
#[pyfunction]
pub(crate) fn write_files(
    py: Python<'_>,
    files: Vec<(PathBuf, Vec<u8>)>,
    inputs: Vec<PathBuf>,
) -> PyResult<()> {
    run(py, None, move || {
        let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
        let rules = output_file::Rules {
            overwrite: true,
            inputs: &inputs,
        };
        let mut pending = Vec::with_capacity(files.len());
        for (path, bytes) in &files {
            let mut out = output_file::Pending::create(path, &rules).map_err(|e| fail(&e))?;
            out.file_mut().write_all(bytes).map_err(|source| {
                let e = output_file::Error::Io(output_file::FsError {
                    path: path.clone(),
                    action: "cannot write the output",
                    source,
                });
                fail(&e)
            })?;
            pending.push(out);
        }
        output_file::commit_all(pending).map_err(|e| fail(&e))
    })
}
