//! One report model and its renderers.
//!
//! A [`Document`] is findings first, then sections of paragraphs, tables and SVG charts.
//! Every number in it is a [`Figure`]: a value with its unit and its [`Provenance`] (measured,
//! read with its source, inferred with its assumptions). Text is text; there is no way to
//! put a bare number into a table cell, so no renderer can print an unlabelled figure.
//!
//! Renderers: [`markdown`], [`html`] (one self-contained page: inline CSS and SVG, no
//! network, works without JavaScript), [`csv`] (one file per table) and JSON (the model
//! is `Serialize`).
//!
//! ```
//! use report::{Block, Cell, Document, Figure, Provenance, Section, Table};
//! let mut doc = Document::new("Example");
//! let mut t = Table::new("budget", &["stream", "busy"]);
//! t.push(vec![Cell::text("7"), Cell::figure(Figure::percent(42.0, Provenance::Measured))]);
//! doc.sections.push(Section::new("budget", "Budget").with(Block::Table(t)));
//! let md = report::markdown::render(&doc);
//! assert!(md.contains("| stream | busy [measured] |"));
//! assert!(md.contains("| 7 | 42.0 % |"));
//! ```

#![warn(missing_docs)]

pub mod attribution_text;
pub mod bucket_text;
pub mod compare;
pub mod csv;
mod doc;
pub mod heatmap;
pub mod html;
pub mod inventory_text;
pub mod investigate;
mod label;
pub mod markdown;
pub mod measured;
pub mod report_json;
pub mod roofline_text;
pub mod skip_text;
pub mod swimlane;
pub mod text;

pub use doc::{
    Align, Block, Cell, Column, Document, Finding, Section, Span, SpanLine, Table, TextLayout,
    TrustEntry, bracketed, parenthesised, spans_label,
};
pub use label::{Figure, NumberFormat, Value};
pub use trace_model::Provenance;
