//! The synthetic XSpace corpus of `testdata/xplane/` (`cargo xtask fixtures`), so these
//! tests run on a fresh clone: `ok/` loads with its known counts, every file of `odd/`
//! loads with its diagnostic, every file of `err/` fails with an error naming the file and
//! the place (never a panic).

use std::fmt::Write;
use std::path::{Path, PathBuf};

use test_support::workspace_root;

fn fixtures(folder: &str) -> Vec<PathBuf> {
    let dir = workspace_root().join("testdata/xplane").join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entries are readable").path())
        .filter(|p| p.to_string_lossy().ends_with(".xplane.pb"))
        .map(|p| {
            Path::new("testdata/xplane")
                .join(folder)
                .join(p.file_name().expect("named"))
        })
        .collect();
    files.sort();
    files
}

fn load(rel: &Path) -> Result<trace_model::Capture, xplane_reader::Error> {
    let bytes = std::fs::read(workspace_root().join(rel)).expect("fixtures are readable");
    let space = xplane_reader::XSpace::from_bytes(&bytes, rel)?;
    Ok(xplane_reader::to_capture(&space, rel))
}

/// The error and its sources, as the tools print them (`{:#}`).
fn chain(err: &xplane_reader::Error) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        write!(text, ": {s}").expect("String");
        source = s.source();
    }
    text
}

#[test]
fn ok_capture_loads_with_its_counts() {
    let rel = Path::new("testdata/xplane/ok/small.xplane.pb");
    let capture = load(rel).unwrap_or_else(|e| panic!("{}", chain(&e)));
    assert_eq!(capture.activities().len(), 12);
    assert_eq!(capture.steps().len(), 2);
    assert!(capture.activities().iter().all(|a| a.launch().is_some()));
    assert_eq!(
        capture.diagnostics().count(trace_model::TIME_OUT_OF_RANGE),
        0
    );
}

#[test]
fn odd_captures_leave_out_the_absurd_kernel() {
    let files = fixtures("odd");
    assert!(files.len() >= 6, "{} odd fixtures", files.len());
    let mut out = String::new();
    for rel in &files {
        let capture = load(rel).unwrap_or_else(|e| panic!("{}", chain(&e)));
        let left_out = capture.diagnostics().count(trace_model::TIME_OUT_OF_RANGE);
        assert!(left_out > 0, "{}: nothing left out", rel.display());
        writeln!(
            out,
            "{}: {} GPU activities, {left_out} left out",
            rel.display(),
            capture.activities().len()
        )
        .expect("String");
        // What is kept is usable: every end fits and every duration is sane.
        for a in capture.activities() {
            assert!(a.dur.0 >= 0 && a.start.checked_add(a.dur).is_some());
        }
    }
    insta::assert_snapshot!(out);
}

#[test]
fn err_files_give_their_errors() {
    let files = fixtures("err");
    assert!(files.len() >= 7, "{} err fixtures", files.len());
    let mut out = String::new();
    for rel in &files {
        match load(rel) {
            Ok(_) => panic!("{} loaded, but it must fail", rel.display()),
            Err(e) => writeln!(out, "{}", chain(&e)).expect("String"),
        }
    }
    insta::assert_snapshot!(out);
}
