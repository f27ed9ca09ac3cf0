//! Integration tests of the roofline crate: XProf parity and Kineto hand checks on the real
//! captures (with `TRACEWISE_TRACES`). The SVG chart is tested with its renderer, in `report`.

mod kineto;
mod models;
mod xprof;

use std::io::Read;
use std::path::Path;

/// Reads a gzip-compressed JSON file.
pub fn read_gz_json(path: &Path) -> serde_json::Value {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut text = String::new();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
