//! `report.json`: the [`Investigation`] itself as JSON ([`write()`], [`read()`]), with its
//! schema version ([`investigation::SCHEMA`]), so that other programs (compare, a
//! notebook) read what the investigation decided, typed, and a report read back renders
//! the same pages. The layout is documented in `docs/report-json.md`.
//!
//! Other tools' documents (compare's `--format json`) are written as the rendered
//! [`Document`] with its own schema ([`SCHEMA`], [`to_string`], [`from_str`]).
//!
//! ```
//! let mut doc = report::Document::new("Investigation of x.json");
//! doc.subtitle.push("input: x.json".to_owned());
//! let text = report::report_json::to_string(&doc);
//! assert!(text.starts_with("{\n  \"schema\": 1,"));
//! assert_eq!(report::report_json::from_str(&text)?, doc);
//! # Ok::<(), report::report_json::Error>(())
//! ```

use investigation::Investigation;
use serde::{Deserialize, Serialize};

use crate::Document;

/// The schema version of a rendered [`Document`]'s JSON. It changes when a field changes
/// meaning or is removed; new optional fields keep it.
pub const SCHEMA: u32 = 1;

/// `report.json`: the investigation (pretty-printed, ending in a newline); its first key is
/// `schema`.
pub fn write(investigation: &Investigation) -> String {
    investigation::to_json(investigation)
}

/// The investigation of a `report.json` text (its schema checked first).
pub fn read(text: &str) -> Result<Investigation, investigation::JsonError> {
    investigation::from_json(text)
}

#[derive(Serialize)]
struct Out<'a> {
    schema: u32,
    #[serde(flatten)]
    document: &'a Document,
}

#[derive(Deserialize)]
struct In {
    schema: u32,
    #[serde(flatten)]
    document: Document,
}

/// Why a `report.json` could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Not JSON, or not a report of this layout.
    #[error("not a tracewise report.json: {0}")]
    Json(#[from] serde_json::Error),
    /// Written by a version of tracewise with another schema.
    #[error("report.json schema {found}; this version reads schema {SCHEMA}")]
    Schema {
        /// The file's schema version.
        found: u32,
    },
}

/// The document as `report.json` text (pretty-printed, ending in a newline).
pub fn to_string(document: &Document) -> String {
    let mut text = serde_json::to_string_pretty(&Out {
        schema: SCHEMA,
        document,
    })
    .unwrap_or_else(|e| unreachable!("a Document always serialises: {e}"));
    text.push('\n');
    text
}

/// The document of a `report.json` text.
pub fn from_str(text: &str) -> Result<Document, Error> {
    let read: In = serde_json::from_str(text)?;
    if read.schema != SCHEMA {
        return Err(Error::Schema { found: read.schema });
    }
    Ok(read.document)
}
