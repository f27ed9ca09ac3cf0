//! From a loaded capture (or a path, through the one loader) to an attribution.

use std::collections::BTreeMap;
use std::path::Path;

use load::Loaded;
use trace_model::Format;

use crate::jax::{ProgramModule, attribute};
use crate::model::{Attribution, Config};
use crate::{Error, attribute_kineto};

/// Loads the capture at `path` and attributes it. A directory must hold exactly one
/// capture: one `*.xplane.pb` (searched four levels deep, as JAX writes
/// `plugins/profile/<run>/`) or one trace file.
pub fn attribute_path(path: &Path, config: &Config) -> Result<Attribution, Error> {
    let loaded = load::load_single(path)?;
    attribute_loaded(&loaded, config)
}

/// Attributes a loaded capture: an XSpace's kernels to HLO instructions of its programs
/// (decoded by the loader), a Kineto trace's to its CPU ops. A JAX Chrome trace holds no
/// HLO modules: that is [`Error::JaxJson`].
pub fn attribute_loaded(loaded: &Loaded, config: &Config) -> Result<Attribution, Error> {
    let shown = loaded.path.display().to_string();
    match loaded.format() {
        Format::XPlane => {
            let mut programs = Vec::new();
            let mut notes = Vec::new();
            let mut by_digest: BTreeMap<u64, Vec<i64>> = BTreeMap::new();
            for program in &loaded.programs {
                by_digest
                    .entry(program.proto_digest)
                    .or_default()
                    .push(program.id);
                match &program.module {
                    Ok(module) => programs.push(ProgramModule {
                        program_id: program.id,
                        module_name: &program.name,
                        module,
                    }),
                    Err(e) => notes.push(format!(
                        "{shown}: HLO module {}({}) could not be decoded, its kernels are `none`: {e}",
                        program.name, program.id
                    )),
                }
            }
            let same: Vec<Vec<i64>> = by_digest
                .into_values()
                .filter(|ids| ids.len() > 1)
                .collect();
            let mut result = attribute(&loaded.capture, &programs, config, &shown, &same)?;
            result.notes.splice(0..0, notes);
            Ok(result)
        }
        Format::JaxTraceJson => Err(Error::JaxJson {
            path: loaded.path.clone(),
        }),
        _ => attribute_kineto(&loaded.capture, config, &shown),
    }
}
