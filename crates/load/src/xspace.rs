//! An XSpace and its HLO programs, each decoded once.

use std::hash::{Hash, Hasher};
use std::path::Path;

use hlo_parser::HloModule;

use crate::{Error, Loaded};

/// One compiled XLA program embedded in an XSpace's `/host:metadata` plane.
#[derive(Debug)]
pub struct Program {
    /// The program id that GPU activities refer to.
    pub id: i64,
    /// The HLO module's name.
    pub name: String,
    /// The decoded module, or why its HLO proto could not be decoded.
    pub module: Result<HloModule, String>,
    /// A digest of the serialized HLO proto: programs stored twice under two ids have
    /// the same one.
    pub proto_digest: u64,
}

pub(crate) fn load(path: &Path) -> Result<Loaded, Error> {
    let (capture, space) = xplane_reader::load_capture(path)?;
    let programs = space
        .hlo_programs()
        .iter()
        .map(|p| {
            let mut digest = std::hash::DefaultHasher::new();
            p.hlo_proto.hash(&mut digest);
            Program {
                id: p.program_id,
                name: p.module_name.to_owned(),
                module: hlo_parser::module_from_hlo_proto(p.hlo_proto).map_err(|e| e.to_string()),
                proto_digest: digest.finish(),
            }
        })
        .collect();
    Ok(Loaded {
        path: path.to_path_buf(),
        rank: None,
        capture,
        programs,
    })
}
