//! The SVG chart is well-formed XML with one dot per charted op.

use test_support::{traces_dir, workspace_root};

fn check(report: &roofline::Roofline) {
    let svg = report::roofline_text::svg(report, 5);
    let doc = roxmltree::Document::parse(&svg).expect("the SVG is well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    let class = |c: &str| {
        doc.descendants()
            .filter(|n| n.attribute("class") == Some(c))
            .count()
    };
    let charted = report::roofline_text::chart_ops(report);
    assert!(!charted.is_empty());
    assert_eq!(class("op"), charted.len(), "one dot per charted op");
    assert_eq!(class("label"), charted.len().min(5));
    // One roof per (dtype, peak figure) among the charted ops that have both peaks.
    let mut roofs: Vec<(String, String)> = charted
        .iter()
        .filter(|o| o.peak_flops_per_s.value.is_some() && o.peak_bytes_per_s.value.is_some())
        .map(|o| (o.dtype.name().to_owned(), o.peak_basis.clone()))
        .collect();
    roofs.sort();
    roofs.dedup();
    assert_eq!(class("roof"), roofs.len());
}

#[test]
fn fixture_chart_is_well_formed() {
    let report = roofline::analyze(&workspace_root().join("testdata/roofline/kineto_shapes.json"))
        .expect("fixture analyses");
    // linear (tf32), mm (fp32), bmm, SDPA and conv2d (bf16): three roofs.
    assert_eq!(report::roofline_text::chart_ops(&report).len(), 5);
    check(&report);
}

#[test]
fn real_captures_charts_are_well_formed() {
    let Some(traces) = traces_dir("real_captures_charts_are_well_formed") else {
        return;
    };
    for path in [
        "jax/rocm-gfx950-te-fused-attn/934987a2fc2f.xplane.pb",
        "jax/rocm-mi300-jax08-attention/tw003.xplane.pb",
        "pytorch/tracelens-h100/google_owlv2-large-patch14-ensemble__1016001.json.gz",
    ] {
        let report = roofline::analyze(&traces.join(path)).expect("capture analyses");
        check(&report);
    }
}
