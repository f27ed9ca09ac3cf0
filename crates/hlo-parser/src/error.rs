//! The crate's error type: every variant names the module, instruction or text position involved.

/// Why an HLO module could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes are not a serialized `xla.HloProto` / `xla.HloModuleProto`.
    #[error("not an HloProto")]
    Decode {
        /// prost's decode error.
        #[source]
        source: prost::DecodeError,
    },
    /// The proto decodes but is inconsistent (a dangling id, an unknown element type, ...).
    #[error("HLO module `{module}`: {message}")]
    Proto {
        /// The module name.
        module: String,
        /// What is wrong.
        message: String,
    },
    /// HLO text that does not parse, at a 1-based line and column.
    #[error("HLO text line {line}, column {column}: {message}")]
    Parse {
        /// Line, from 1.
        line: usize,
        /// Column, from 1.
        column: usize,
        /// What is wrong.
        message: String,
    },
}
