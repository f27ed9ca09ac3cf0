//! The crate's error type: every variant names the input and where in it decoding failed.

use std::path::PathBuf;

/// Why an XSpace could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be read.
    #[error("{}: cannot read", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The bytes are not protobuf wire format (or are cut short) at `offset`.
    #[error("{}: not an XSpace protobuf: {what} at byte offset {offset}", path.display())]
    Wire {
        path: PathBuf,
        offset: u64,
        what: &'static str,
    },
    /// A length-delimited field runs past the end of the input: the file is truncated.
    #[error(
        "{}: truncated: field {field} at byte offset {offset} needs {needed} bytes, {available} left",
        path.display()
    )]
    Truncated {
        path: PathBuf,
        field: u64,
        offset: u64,
        needed: u64,
        available: u64,
    },
    /// One plane's bytes are not a valid `XPlane`.
    #[error("{}: plane #{plane_index} at byte offset {offset} does not decode", path.display())]
    Plane {
        path: PathBuf,
        plane_index: usize,
        offset: u64,
        #[source]
        source: prost::DecodeError,
    },
    /// A string field of the XSpace holds invalid UTF-8.
    #[error("{}: field {field} at byte offset {offset} is not UTF-8", path.display())]
    Utf8 {
        path: PathBuf,
        field: u64,
        offset: u64,
    },
    /// The input decodes as protobuf but holds no planes at all.
    #[error("{}: not an XSpace: no planes in {len} bytes", path.display())]
    NoPlanes { path: PathBuf, len: u64 },
}
