//! The HLO protos of every program, from the `/host:metadata` plane.

use std::collections::BTreeMap;

use crate::view::{Diagnostic, DiagnosticKind, EventMetadata, XSpace};

/// One compiled program stored in `/host:metadata`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HloProgram<'a> {
    /// The `program_id` stat, or the event-metadata id when that stat is absent.
    pub program_id: i64,
    /// Where `program_id` came from.
    pub id_source: ProgramIdSource,
    /// The id of the `XEventMetadata` that holds this program.
    pub metadata_id: i64,
    /// The metadata name, `module(program_id)`.
    pub name: &'a str,
    /// The module name: `name` without its `(id)` suffix.
    pub module_name: &'a str,
    /// A serialized `xla.HloProto`.
    pub hlo_proto: &'a [u8],
}

/// Where [`HloProgram::program_id`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ProgramIdSource {
    /// The `program_id` stat (jaxlib 0.10 and later).
    Stat,
    /// The event-metadata id (older JAX, where it equals the program id).
    MetadataId,
}

const HLO_PROTO_STAT: &str = "Hlo Proto";

impl XSpace {
    /// Every program with HLO proto bytes, ordered by program id then metadata id.
    /// A program stored twice under two ids appears twice (see the `DuplicateProgram` diagnostic).
    pub fn hlo_programs(&self) -> Vec<HloProgram<'_>> {
        let Some(plane) = self.metadata_plane() else {
            return Vec::new();
        };
        let mut programs: Vec<_> = plane.all_event_metadata().filter_map(program).collect();
        programs.sort_by_key(|program| (program.program_id, program.metadata_id));
        programs
    }
}

fn program(meta: EventMetadata<'_>) -> Option<HloProgram<'_>> {
    let hlo_proto = meta.stat(HLO_PROTO_STAT)?.as_bytes()?;
    let (program_id, id_source) = match meta.stat("program_id").and_then(|value| value.as_i64()) {
        Some(id) => (id, ProgramIdSource::Stat),
        None => (meta.id(), ProgramIdSource::MetadataId),
    };
    let name = meta.name();
    Some(HloProgram {
        program_id,
        id_source,
        metadata_id: meta.id(),
        name,
        module_name: module_name(name),
        hlo_proto,
    })
}

/// `jit_train_step(32)` → `jit_train_step`.
fn module_name(name: &str) -> &str {
    match name
        .strip_suffix(')')
        .and_then(|rest| rest.rfind('(').map(|open| (rest, open)))
    {
        Some((rest, open)) if rest[open + 1..].chars().all(|ch| ch.is_ascii_digit()) => {
            &name[..open]
        }
        _ => name,
    }
}

pub(crate) fn program_diagnostics(space: &XSpace) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(plane) = space.metadata_plane() else {
        return out;
    };
    for meta in plane.all_event_metadata() {
        let has_proto = meta
            .stat(HLO_PROTO_STAT)
            .and_then(|value| value.as_bytes())
            .is_some();
        if !has_proto {
            out.push(Diagnostic {
                kind: DiagnosticKind::MissingHloProto,
                message: format!(
                    "program `{}` (metadata id {}) has no `Hlo Proto` bytes",
                    meta.name(),
                    meta.id()
                ),
            });
        }
    }
    let mut by_bytes: BTreeMap<&[u8], Vec<i64>> = BTreeMap::new();
    for program in space.hlo_programs() {
        by_bytes
            .entry(program.hlo_proto)
            .or_default()
            .push(program.program_id);
    }
    for ids in by_bytes.values().filter(|ids| ids.len() > 1) {
        let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
        out.push(Diagnostic {
            kind: DiagnosticKind::DuplicateProgram,
            message: format!(
                "the same HLO program is stored under ids {}; both are kept",
                ids.join(", ")
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::module_name;

    #[test]
    fn module_names() {
        assert_eq!(module_name("jit_train_step(32)"), "jit_train_step");
        assert_eq!(module_name("jit_f(x)"), "jit_f(x)");
        assert_eq!(module_name("plain"), "plain");
    }
}
