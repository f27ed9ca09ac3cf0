//! From a loaded capture (or a path, through the one loader) to an attribution.

use std::collections::BTreeMap;
use std::path::Path;

use load::Loaded;
use trace_model::{Format, TrustItem};

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
                    Err(e) => notes.push(TrustItem::note(
                        "hlo-module-undecodable",
                        format!(
                            "{shown}: HLO module {}({}) could not be decoded, its kernels are `none`: {e}",
                            program.name, program.id
                        ),
                    )),
                }
            }
            let same: Vec<Vec<i64>> = by_digest
                .into_values()
                .filter(|ids| ids.len() > 1)
                .collect();
            let mut result = attribute(&loaded.capture, &programs, config, &shown, &same)?;
            result.notes.splice(0..0, notes);
            if loaded.programs.is_empty() {
                tensorflow_ops(&loaded.capture, &mut result);
            }
            Ok(result)
        }
        Format::JaxTraceJson => Err(Error::JaxJson {
            path: loaded.path.clone(),
        }),
        _ => attribute_kineto(&loaded.capture, config, &shown),
    }
}

/// TensorFlow's XSpace has no HLO programs, but names each kernel's op on a device line
/// (`TensorFlow Ops`, kept as GPU annotations on the compute stream): a kernel of that
/// stream left without a match gets the op whose span encloses it, match kind
/// `enclosing range`.
fn tensorflow_ops(capture: &trace_model::Capture, result: &mut Attribution) {
    use crate::model::{DecidedBy, MatchKind};
    if capture.gpu_annotations().is_empty() {
        return;
    }
    // Per device and stream ordinal (the line's ops are those of the compute stream's
    // kernels): (start, end, name), by start.
    type Ops = BTreeMap<(i64, i64), Vec<(i64, i64, trace_model::StringId)>>;
    let mut ops: Ops = BTreeMap::new();
    for a in capture.gpu_annotations() {
        let stream = capture.stream(a.stream);
        let device = capture.device(stream.device).ordinal;
        ops.entry((device, stream.ordinal)).or_default().push((
            a.start.0,
            a.start.0 + a.dur.0,
            a.name,
        ));
    }
    for list in ops.values_mut() {
        list.sort_unstable();
    }
    let mut names = crate::shared::NameCache::default();
    let mut matched = 0u64;
    for row in result
        .kernels
        .iter_mut()
        .filter(|k| k.match_kind == MatchKind::None)
    {
        let Some(list) = ops.get(&(row.device, row.stream)) else {
            continue;
        };
        let (start, end) = (row.start_ns.0, row.start_ns.0 + row.dur_ns.0);
        let after = list.partition_point(|&(s, _, _)| s <= start);
        // The latest-starting op that starts at or before the kernel and covers it.
        let found = list[..after]
            .iter()
            .rev()
            .take(64)
            .find(|&&(s, e, _)| s <= start && e >= end);
        if let Some(&(_, _, name)) = found {
            row.op_name = names.id(capture, name);
            row.match_kind = MatchKind::EnclosingRange;
            row.decided_by = DecidedBy::TensorFlowOpLine;
            matched += 1;
        }
    }
    if matched > 0 {
        result.notes.push(TrustItem {
            unit: Some("kernels".into()),
            ..TrustItem::new(
                "tensorflow-op-lines",
                format!(
                    "a TensorFlow XSpace (no HLO programs): {matched} kernels were attributed to the TensorFlow op of the `TensorFlow Ops` line around them on the same GPU (match kind `enclosing range`); Python lines need a capture with Python tracing"
                ),
                matched,
            )
        });
    }
}
