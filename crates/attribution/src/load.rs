//! From a path (an `.xplane.pb`, a capture directory, or a Kineto trace) to an attribution.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use trace_model::Format;

use crate::jax::{ProgramModule, attribute};
use crate::model::{Attribution, Config};
use crate::{Error, attribute_kineto};

/// Loads the capture at `path` and attributes it. A directory must hold exactly one
/// `*.xplane.pb` (searched four levels deep, as JAX writes `plugins/profile/<run>/`) or one
/// Kineto trace file.
pub fn attribute_path(path: &Path, config: &Config) -> Result<Attribution, Error> {
    let file = if path.is_dir() {
        single_capture(path)?
    } else {
        path.to_path_buf()
    };
    let shown = file.display().to_string();
    if is_xplane(&file) {
        let (capture, space) = xplane_reader::load_capture(&file)?;
        let mut programs = Vec::new();
        let mut notes = Vec::new();
        let mut by_bytes: BTreeMap<&[u8], Vec<i64>> = BTreeMap::new();
        for program in space.hlo_programs() {
            by_bytes
                .entry(program.hlo_proto)
                .or_default()
                .push(program.program_id);
            match hlo_parser::module_from_hlo_proto(program.hlo_proto) {
                Ok(module) => programs.push(ProgramModule {
                    program_id: program.program_id,
                    module_name: program.module_name.to_owned(),
                    module,
                }),
                Err(e) => notes.push(format!(
                    "{shown}: HLO module {}({}) could not be decoded, its kernels are `none`: {e}",
                    program.module_name, program.program_id
                )),
            }
        }
        let same: Vec<Vec<i64>> = by_bytes.into_values().filter(|ids| ids.len() > 1).collect();
        let mut result = attribute(&capture, &programs, config, &shown, &same)?;
        result.notes.splice(0..0, notes);
        return Ok(result);
    }
    let capture = chrome_reader::load(&file)?;
    if capture.format() == Format::JaxTraceJson {
        return Err(Error::JaxJson { path: file });
    }
    attribute_kineto(&capture, config, &shown)
}

fn is_xplane(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".xplane.pb"))
}

fn single_capture(dir: &Path) -> Result<PathBuf, Error> {
    let mut xplanes = Vec::new();
    find(dir, 0, &mut xplanes, &is_xplane)?;
    let found = if xplanes.is_empty() {
        chrome_reader::trace_files(dir)?
    } else {
        xplanes
    };
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(Error::Input {
            path: dir.to_path_buf(),
            what: "no `*.xplane.pb` or Kineto trace file in this directory".to_owned(),
        }),
        many => Err(Error::Input {
            path: dir.to_path_buf(),
            what: format!(
                "{} captures in this directory ({} ...); name one file",
                many.len(),
                many[0].display()
            ),
        }),
    }
}

fn find(
    dir: &Path,
    depth: usize,
    out: &mut Vec<PathBuf>,
    wanted: &dyn Fn(&Path) -> bool,
) -> Result<(), Error> {
    if depth > 4 {
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            find(&p, depth + 1, out, wanted)?;
        } else if wanted(&p) {
            out.push(p);
        }
    }
    Ok(())
}
