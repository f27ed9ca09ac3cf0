//! The crate's error type: every variant names the input and where in it decoding failed.

use std::path::PathBuf;

/// Why an XSpace could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be read.
    #[error("{}: cannot read", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The bytes are not protobuf wire format (or are cut short) at `offset`.
    #[error("{}: not an XSpace protobuf: {what} at byte offset {offset}", path.display())]
    Wire {
        /// The file.
        path: PathBuf,
        /// Byte offset in the file.
        offset: u64,
        /// What was wrong with the bytes.
        what: &'static str,
    },
    /// A length-delimited field runs past the end of the input: the file is truncated.
    #[error(
        "{}: truncated: field {field} at byte offset {offset} needs {needed} bytes, {available} left",
        path.display()
    )]
    Truncated {
        /// The file.
        path: PathBuf,
        /// The protobuf field number.
        field: u64,
        /// Byte offset in the file.
        offset: u64,
        /// Bytes the field says it holds.
        needed: u64,
        /// Bytes left in the input.
        available: u64,
    },
    /// One plane's bytes are not a valid `XPlane`.
    #[error("{}: plane #{plane_index} at byte offset {offset} does not decode", path.display())]
    Plane {
        /// The file.
        path: PathBuf,
        /// The plane, in file order from zero.
        plane_index: usize,
        /// Byte offset in the file.
        offset: u64,
        /// The underlying error.
        #[source]
        source: prost::DecodeError,
    },
    /// A string field of the XSpace holds invalid UTF-8.
    #[error("{}: field {field} at byte offset {offset} is not UTF-8", path.display())]
    Utf8 {
        /// The file.
        path: PathBuf,
        /// The protobuf field number.
        field: u64,
        /// Byte offset in the file.
        offset: u64,
    },
    /// The input decodes as protobuf but holds no planes at all.
    #[error("{}: not an XSpace: no planes in {len} bytes", path.display())]
    NoPlanes {
        /// The file.
        path: PathBuf,
        /// Size of the input in bytes.
        len: u64,
    },
}
