//! The captures the analyses run on come from the one loader (the `load` crate); this
//! module summarises what only some formats carry.

use serde::Serialize;

pub use load::{Loaded, LoadedEach};

/// What an inventory says of one compiled XLA program of an XSpace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProgramInfo {
    /// The program id that GPU activities refer to.
    pub id: i64,
    /// The HLO module's name.
    pub name: String,
    /// `None` when the HLO proto could not be decoded; `error` says why.
    pub instructions: Option<usize>,
    /// Instructions whose Python source line is known (directly or through stack frames).
    pub with_python_line: Option<usize>,
    /// Why the HLO proto could not be decoded, when it could not.
    pub error: Option<String>,
}

impl ProgramInfo {
    /// The summary of a loaded program.
    pub fn of(program: &load::Program) -> ProgramInfo {
        match &program.module {
            Ok(module) => {
                let mut instructions = 0;
                let mut with_line = 0;
                for (_, inst) in module.instructions() {
                    instructions += 1;
                    if module.source_line(inst).is_some() {
                        with_line += 1;
                    }
                }
                ProgramInfo {
                    id: program.id,
                    name: program.name.clone(),
                    instructions: Some(instructions),
                    with_python_line: Some(with_line),
                    error: None,
                }
            }
            Err(e) => ProgramInfo {
                id: program.id,
                name: program.name.clone(),
                instructions: None,
                with_python_line: None,
                error: Some(e.clone()),
            },
        }
    }
}
