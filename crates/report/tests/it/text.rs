//! Every tool's terminal text is a `Document` printed by the one renderer, `report::text`:
//! each `*_text` module's printed text is `report::text::render` of its `document`, the
//! numbers in it are labelled figures, and the same document renders as Markdown, HTML and
//! CSV. (profile-model's document is built in trace-frame and checked there.)

use report::{Block, Cell, Document, Span};
use test_support::workspace_root;

/// The checks every tool's document passes; `printed` is what the tool prints.
fn check(doc: &Document, printed: &str) {
    assert_eq!(report::text::render(doc), printed);
    let figures = figures(doc);
    assert!(figures > 0, "numbers are figures: {doc:?}");
    assert!(!report::markdown::render(doc).is_empty());
    assert!(report::html::render(doc).contains("<html"));
    for t in doc.tables() {
        let csv = report::csv::render(t);
        assert_eq!(
            csv.lines().count(),
            1 + t.rows.len() + newlines(t),
            "{}",
            t.name
        );
    }
}

fn figures(doc: &Document) -> usize {
    let in_spans = |spans: &[Span]| {
        spans
            .iter()
            .filter(|s| matches!(s, Span::Figure(_) | Span::Formatted(..)))
            .count()
    };
    let mut n = 0;
    for s in &doc.sections {
        for b in &s.blocks {
            n += match b {
                Block::Paragraph(p) => in_spans(p),
                Block::Table(t) => t
                    .rows
                    .iter()
                    .flatten()
                    .map(|c| match c {
                        Cell::Figure(_) => 1,
                        Cell::Spans(s) => in_spans(s),
                        _ => 0,
                    })
                    .sum(),
                _ => 0,
            };
        }
    }
    n
}

/// Line breaks inside quoted CSV fields.
fn newlines(t: &report::Table) -> usize {
    t.rows
        .iter()
        .flatten()
        .map(|c| match c {
            Cell::Text(s) | Cell::Code(s) => s.matches('\n').count(),
            _ => 0,
        })
        .sum()
}

fn fixture(path: &str) -> load::Loaded {
    load::load_single(&workspace_root().join(path)).expect("the fixture loads")
}

#[test]
fn trace_info_prints_a_document() {
    for path in [
        "testdata/roofline/kineto_shapes.json",
        "testdata/attribution/synth.xplane.pb",
    ] {
        let inv = analysis::inventory(&fixture(path));
        check(
            &report::inventory_text::document(&inv),
            &report::inventory_text::render_text(&inv),
        );
    }
}

#[test]
fn skip_stats_prints_a_document() {
    let loaded = fixture("testdata/roofline/kineto_shapes.json");
    let r = analysis::analyze_capture(
        &loaded.capture,
        "kineto_shapes.json",
        None,
        &analysis::SkipConfig::default(),
    );
    let a = analysis::InputAnalysis {
        input: "kineto_shapes.json".into(),
        reports: vec![r],
        last_finisher: None,
    };
    check(
        &report::skip_text::document(&a),
        &report::skip_text::render_text(&a),
    );
}

#[test]
fn analyze_profile_prints_a_document() {
    let loaded = fixture("testdata/roofline/kineto_shapes.json");
    let s = analysis::gpu_summary(&loaded.capture, "kineto_shapes.json", Some(0));
    check(
        &report::bucket_text::document(&s, 10),
        &report::bucket_text::render_text(&s, 10),
    );
    let ranks = [s.clone(), s];
    check(
        &report::bucket_text::ranks_document(&ranks),
        &report::bucket_text::render_ranks_text(&ranks),
    );
}

#[test]
fn roofline_prints_a_document() {
    let r = roofline::analyze(&workspace_root().join("testdata/roofline/kineto_shapes.json"))
        .expect("the fixture analyses");
    check(
        &report::roofline_text::document(&r, 3),
        &report::roofline_text::text(&r, 3),
    );
}

#[test]
fn attribute_kernels_prints_a_document() {
    for path in [
        "testdata/roofline/kineto_shapes.json",
        "testdata/attribution/synth.xplane.pb",
    ] {
        let a = attribution::attribute_loaded(&fixture(path), &attribution::Config::default())
            .expect("the fixture attributes");
        check(
            &report::attribution_text::summary_document(&a),
            &report::attribution_text::summary_text(&a),
        );
    }
}

/// The formats the tools' fixed columns use.
#[test]
fn formats_read_as_the_tools_wrote_them() {
    use report::{Figure, NumberFormat, Provenance, Value};
    let check = |v: Value, f: NumberFormat, expect: &str| {
        let doc_text =
            report::text::spans(&[Span::Formatted(Figure::new(v, Provenance::Measured), f)]);
        assert_eq!(doc_text, expect);
    };
    check(
        Value::Percent(12.345),
        NumberFormat::PercentSign(1),
        "12.3%",
    );
    check(Value::Count(1234567), NumberFormat::Fixed(0), "1234567");
    check(Value::Number(57407.04), NumberFormat::Fixed(1), "57407.0");
    check(
        Value::Duration(1_234_567),
        NumberFormat::Millis(3),
        "1.235 ms",
    );
    check(Value::Duration(1_500), NumberFormat::Fixed(0), "1.50 µs");
}
