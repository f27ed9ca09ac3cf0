//! A rank directory's `rows.csv` made one rank at a time (`SkipRowParts`): the header once,
//! then each part in the order given; `drain` removes its own parts and nothing else.

use std::io::Write;

use analysis::{SkipConfig, SkipRowParts};

#[test]
fn parts_are_written_in_order_and_drain_removes_only_its_own() {
    let path =
        test_support::workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json");
    let loaded = load::load_single(&path).expect("the fixture loads");
    let parts = SkipRowParts::create("test-row-parts").expect("a scratch directory");
    let config = SkipConfig::default();
    let (_, a) = parts.report(&loaded, &config).expect("a report");
    let (_, b) = parts.report(&loaded, &config).expect("a report");
    assert_ne!(a, b);

    let mut whole = Vec::new();
    parts
        .write(&[a.clone(), b.clone()], &mut whole)
        .expect("written");
    let whole = String::from_utf8(whole).expect("UTF-8");
    let lines: Vec<&str> = whole.lines().collect();
    let rows = (lines.len() - 1) / 2;
    assert!(
        rows > 0 && lines.len() == 1 + 2 * rows,
        "{} lines",
        lines.len()
    );
    assert!(
        lines[0].contains("rank"),
        "the header has the rank column: {}",
        lines[0]
    );
    assert_eq!(
        lines[1..=rows],
        lines[rows + 1..],
        "two parts of the same capture"
    );

    // A file that is not one of its parts is copied but never removed.
    let other_dir = output_file::ScratchDir::create("test-row-parts-other").expect("a directory");
    let mut other = other_dir.create_file("other.csv").expect("a file");
    other.write_all(b"x\n").expect("written");
    let other = other_dir.path().join("other.csv");
    let mut drained = Vec::new();
    parts
        .drain(&[a.clone(), b.clone(), other.clone()], &mut drained)
        .expect("drained");
    assert_eq!(
        String::from_utf8(drained).expect("UTF-8"),
        format!("{whole}x\n")
    );
    assert!(!a.exists() && !b.exists(), "its parts are removed");
    assert!(other.exists(), "another file stays");
}
