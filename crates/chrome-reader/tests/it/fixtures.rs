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

/// Integers beyond i64 (pids, tids, `External id`) load: ids keep their text, the
/// correlation join still works, and the pid and tid beyond i64 are one diagnostic.
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
    let thread = &capture.threads()[0];
    let text = |t: Option<trace_model::StringId>| t.map(|t| capture.name(t).to_owned());
    assert_eq!(
        (text(thread.pid_text), text(thread.tid_text)),
        (
            Some("18446744073709551615".to_owned()),
            Some("9223372036854775808".to_owned())
        )
    );
    let codes: Vec<(&str, u64)> = capture
        .diagnostics()
        .iter()
        .map(|d| (d.code, d.count))
        .collect();
    assert_eq!(codes, [("id-not-i64", 2)], "{:?}", capture.diagnostics());
}

/// pids and tids that are numbers but not 64-bit integers (`1e20`, 2^64 + 1, `3.5`) keep
/// the text the trace wrote, in the model and in the Chrome JSON written back, and are a
/// diagnostic: never wrapped, rounded or silently replaced by a key.
#[test]
fn numeric_ids_beyond_i64_keep_their_text() {
    let path = Path::new("testdata/chrome/odd/ids_not_i64.json");
    let capture = load(path).unwrap_or_else(|e| panic!("{e}"));
    let text = |t: Option<trace_model::StringId>| t.map(|t| capture.name(t).to_owned());
    let mut ids: Vec<(Option<String>, Option<String>)> = capture
        .threads()
        .iter()
        .map(|t| (text(t.pid_text), text(t.tid_text)))
        .collect();
    ids.sort();
    assert_eq!(
        ids,
        [
            (Some("18446744073709551617".to_owned()), None),
            (Some("1e20".to_owned()), Some("3.5".to_owned())),
        ]
    );
    let d = capture
        .diagnostics()
        .iter()
        .find(|d| d.code == "id-not-i64")
        .expect("a diagnostic for the ids");
    assert_eq!(d.count, 3);
    assert_eq!(d.first, "the id 1e20");
    let mut out = Vec::new();
    chrome_reader::write_chrome_trace(&capture, &mut out).expect("written");
    let out = String::from_utf8(out).expect("UTF-8");
    for written in [
        r#""pid":1e20,"tid":3.5"#,
        r#""pid":18446744073709551617,"tid":1"#,
    ] {
        assert!(out.contains(written), "{written} in {out}");
    }
    assert!(!out.contains("-1000000000000"), "{out}");
}
