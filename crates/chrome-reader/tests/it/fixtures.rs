//! Fixtures: every file in testdata/chrome/err gives its expected error (never a panic),
//! every file in testdata/chrome/odd loads with its expected diagnostics.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::workspace_root;

/// Fixture files of one folder, as paths relative to the workspace root.
fn fixtures(folder: &str) -> Vec<PathBuf> {
    let dir = workspace_root().join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entries are readable").path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.ends_with(".json") || name.ends_with(".json.gz")
        })
        .map(|p| Path::new(folder).join(p.file_name().expect("entries have names")))
        .collect();
    files.sort();
    files
}

/// Loads a fixture, naming it by its path relative to the workspace root in messages.
fn load(rel: &Path) -> Result<trace_model::Capture, chrome_reader::Error> {
    let abs = workspace_root().join(rel);
    let input = chrome_reader::open(&abs).map_err(|e| panic!("{e}"))?;
    chrome_reader::load_from(input, rel)
}

#[test]
fn err_fixtures_give_their_errors() {
    let files = fixtures("testdata/chrome/err");
    assert!(files.len() >= 30, "{} err fixtures", files.len());
    let mut out = String::new();
    let mut loaded = Vec::new();
    for rel in &files {
        match load(rel) {
            Ok(_) => loaded.push(rel.display().to_string()),
            Err(e) => {
                // The error and its sources, as the tools print them (`{:#}`).
                let mut text = e.to_string();
                let mut source = std::error::Error::source(&e);
                while let Some(s) = source {
                    write!(text, ": {s}").expect("writing to a String cannot fail");
                    source = s.source();
                }
                writeln!(out, "{text}").expect("writing to a String cannot fail")
            }
        }
    }
    assert!(loaded.is_empty(), "these loaded, but must fail: {loaded:?}");
    insta::assert_snapshot!(out);
}

#[test]
fn odd_fixtures_give_diagnostics() {
    let files = fixtures("testdata/chrome/odd");
    assert!(files.len() >= 25, "{} odd fixtures", files.len());
    let mut out = String::new();
    for rel in &files {
        let capture = load(rel).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            !capture.diagnostics().is_empty(),
            "{}: no diagnostics",
            rel.display()
        );
        writeln!(
            out,
            "{}: {} GPU activities",
            rel.display(),
            capture.activities().len()
        )
        .expect("String");
        for d in capture.diagnostics().iter() {
            writeln!(
                out,
                "  {} ×{}: {} (first: {})",
                d.code, d.count, d.message, d.first
            )
            .expect("String");
        }
    }
    insta::assert_snapshot!(out);
}

/// Integers beyond i64 (pids, tids, `External id`) load: ids become strings, the
/// correlation join still works.
#[test]
fn integers_beyond_i64_load() {
    let capture =
        load(Path::new("testdata/chrome/ok/large_integers.json")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(capture.activities().len(), 1);
    let a = &capture.activities()[0];
    assert_eq!(a.correlation(), Some(9_223_372_036_854_775_807));
    assert!(
        a.launch().is_some(),
        "joined to its launch by correlation id"
    );
    let op = capture
        .launching_op(a)
        .expect("the launch sits inside aten::mm");
    assert_eq!(capture.name(op.name), "aten::mm");
    assert_eq!(capture.threads().len(), 1);
    assert!(
        capture.diagnostics().is_empty(),
        "{:?}",
        capture.diagnostics()
    );
}
