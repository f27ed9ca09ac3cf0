//! Steps 4 and 5 of the investigation, in words: GPU time by bucket and launching op, the
//! kernel → op → Python line attribution, layout-heavy ops, and the roofline of the top ops.

use investigation::{AttributionView, Investigation, LayoutHeavy, PythonLine, RooflineView};
use trace_model::{Nanos, Provenance};

use crate::doc::{Block, Cell, Finding, Section, Span, Table};
use crate::label::{Figure, Value};

/// Step 4.
pub(super) fn ops_section(inv: &Investigation, findings: &mut Vec<Finding>) -> Section {
    let mut s = Section::new(
        "ops",
        "4. Where the GPU time goes: buckets, ops and Python lines",
    );
    let mut buckets_t = Table::new(
        "buckets",
        &["capture", "bucket", "GPU time", "share", "activities"],
    );
    // The layout column only where some op has layout transposes.
    let any_layout = inv
        .captures
        .iter()
        .any(|c| c.top_ops.iter().any(|o| o.layout > Nanos::ZERO));
    let mut ops_columns = vec!["capture", "op", "bucket", "GPU time", "share", "activities"];
    if any_layout {
        ops_columns.push("layout transposes (of the op)");
    }
    let mut ops_t = Table::new("ops", &ops_columns);
    for c in &inv.captures {
        let who = super::who_text(&c.file_who);
        for b in &c.buckets {
            buckets_t.push(vec![
                Cell::text(who.clone()),
                Cell::text(b.bucket.clone()),
                Cell::figure(Figure::duration(b.time, Provenance::Measured)),
                Cell::figure(Figure::percent(b.percent, Provenance::Measured)),
                Cell::figure(Figure::count(b.activities, Provenance::Measured)),
            ]);
        }
        for o in &c.top_ops {
            let mut row = vec![
                Cell::text(who.clone()),
                Cell::code(if o.is_cpu_op {
                    o.name.clone()
                } else {
                    format!("[no op] {}", o.name)
                }),
                Cell::text(if o.mixed {
                    format!("{} (mixed)", o.bucket)
                } else {
                    o.bucket.clone()
                }),
                Cell::figure(Figure::duration(o.time, Provenance::Measured)),
                Cell::figure(Figure::percent(o.percent, Provenance::Measured)),
                Cell::figure(Figure::count(o.activities, Provenance::Measured)),
            ];
            if any_layout {
                row.push(layout_cell(o.layout, o.time));
            }
            ops_t.push(row);
        }
    }
    findings.extend(inv.ops.layout.iter().map(layout_finding));
    if let Some((bucket, percent, core)) = &inv.ops.top_bucket {
        findings.push(Finding::new(vec![
            Span::text(format!("The largest GPU-time bucket is {bucket}: ")),
            Span::Figure(Figure::percent(*percent, Provenance::Measured)),
            Span::text(" of GPU time; matmul + convolution + attention take "),
            Span::Figure(Figure::percent(*core, Provenance::Measured)),
            Span::text("."),
        ]));
    }
    s.para("GPU time by bucket (default mode of analyze-profile: an ATen op's name when its kernels are of its kind, else each kernel's class):");
    s.push(Block::Table(buckets_t));
    s.para("Top CPU ops by the GPU time they launched (kernel → correlation id → launch → innermost CPU op; a layout transpose goes to the convolution or GEMM op around its launch, which it serves):");
    s.push(Block::Table(ops_t));
    match &inv.ops.attribution {
        None => s.para("Kernel → Python line: run `attribute-kernels` on one rank's file."),
        Some(Err(e)) => s.para(format!("Kernel → Python line could not be attributed: {e}")),
        Some(Ok(at)) => attribution_blocks(&mut s, at, findings),
    }
    s
}

fn attribution_blocks(s: &mut Section, at: &AttributionView, findings: &mut Vec<Finding>) {
    let total = at.gpu_time.0.max(1) as f64;
    s.para(format!(
        "Kernel → {} → Python line, for {} (attribute-kernels; match kinds: exact = the chain is complete, name/order = matched inside a window, none = not attributed):",
        if at.kineto { "CPU op" } else { "HLO instruction → op" },
        at.path
    ));
    let mut kinds = Table::new(
        "match_kinds",
        &["match kind", "kernels", "GPU time", "share of GPU time"],
    );
    for (kind, n, t) in &at.match_kinds {
        kinds.push(vec![
            Cell::text(kind.clone()),
            Cell::figure(Figure::count(*n, Provenance::Measured)),
            Cell::figure(Figure::duration(*t, Provenance::Measured)),
            Cell::figure(Figure::percent(
                100.0 * t.0 as f64 / total,
                Provenance::Measured,
            )),
        ]);
    }
    s.push(Block::Table(kinds));
    if !at.lines.is_empty() {
        let mut t = Table::new(
            "lines",
            &[
                "Python line",
                "function",
                "kernels",
                "GPU time",
                "share of all GPU time",
                "share of attributed",
            ],
        );
        for l in &at.lines {
            t.push(vec![
                Cell::code(l.source_line.clone()),
                Cell::code(l.function.clone()),
                Cell::figure(Figure::count(l.kernels, Provenance::Measured)),
                Cell::figure(Figure::duration(l.gpu_time, Provenance::Measured)),
                Cell::figure(Figure::percent(
                    100.0 * l.gpu_time.0 as f64 / total,
                    Provenance::Measured,
                )),
                Cell::figure(Figure::percent(l.share_pct, Provenance::Measured)),
            ]);
        }
        s.para("Top Python lines by the GPU time of the kernels they launched:");
        s.push(Block::Table(t));
        findings.extend(at.top_line.as_ref().map(|(top, library)| {
            top_line_finding(top, *library, at.gpu_time, at.attributed_time)
        }));
    }
    if !at.kineto {
        let any_layout = at.hlo_ops.iter().any(|o| o.layout > Nanos::ZERO);
        let mut columns = vec!["program", "op", "kernels", "GPU time"];
        if any_layout {
            columns.push("layout transposes (of the op)");
        }
        columns.push("Python line");
        let mut t = Table::new("hlo_ops", &columns);
        for o in &at.hlo_ops {
            let mut row = vec![
                Cell::text(o.program.clone()),
                Cell::code(o.op_name.clone()),
                Cell::figure(Figure::count(o.kernels, Provenance::Measured)),
                Cell::figure(Figure::duration(o.gpu_time, Provenance::Measured)),
            ];
            if any_layout {
                row.push(layout_cell(o.layout, o.gpu_time));
            }
            row.push(Cell::code(o.source_line.clone()));
            t.push(row);
        }
        findings.extend(at.hlo_layout.iter().map(layout_finding));
        s.para("Top JAX ops (op_name) by GPU time:");
        s.push(Block::Table(t));
    }
}

/// The headline Python line (the investigation chose it: the first by GPU time outside
/// library frames, else the first of all, `library`): its share of all GPU time, with its
/// share of the attributed time and the attributed share beside.
fn top_line_finding(
    top: &PythonLine,
    library: bool,
    gpu_ns: Nanos,
    attributed_ns: Nanos,
) -> Finding {
    let which = if library {
        "a library frame: no line outside site-packages, torch, JAX or the Inductor cache has GPU time"
    } else {
        "outside library frames"
    };
    let pct = |num: Nanos, den: Nanos| {
        Span::Figure(Figure::percent(
            100.0 * num.0 as f64 / den.0.max(1) as f64,
            Provenance::Measured,
        ))
    };
    Finding::new(vec![
        Span::text("The Python line with the most GPU time ("),
        Span::text(which),
        Span::text(") is "),
        Span::code(top.source_line.clone()),
        Span::text(": "),
        pct(top.gpu_time, gpu_ns),
        Span::text(" of all GPU time ("),
        pct(top.gpu_time, attributed_ns),
        Span::text(" of the attributed GPU time; kernels attributed to a line or op are "),
        pct(attributed_ns, gpu_ns),
        Span::text(" of all GPU time)."),
    ])
}

/// The share of an op's GPU time that is layout transposes, empty when none.
fn layout_cell(layout: Nanos, op: Nanos) -> Cell {
    if layout <= Nanos::ZERO {
        return Cell::Empty;
    }
    Cell::figure(Figure::percent(
        100.0 * layout.0 as f64 / op.0.max(1) as f64,
        Provenance::Measured,
    ))
}

/// A finding with data-layout advice for an op whose layout transposes take at least
/// [`investigation::LARGE_LAYOUT_SHARE`] of all GPU time.
fn layout_finding(h: &LayoutHeavy) -> Finding {
    let of_all = h.layout.0 as f64 / h.gpu.0.max(1) as f64;
    Finding::new(vec![
        Span::code(h.op.clone()),
        Span::text(" spends "),
        Span::Figure(Figure::percent(
            100.0 * h.layout.0 as f64 / h.op_time.0.max(1) as f64,
            Provenance::Measured,
        )),
        Span::text(" of its GPU time ("),
        Span::Figure(Figure::duration(h.layout, Provenance::Measured)),
        Span::text(", "),
        Span::Figure(Figure::percent(100.0 * of_all, Provenance::Measured)),
        Span::text(if h.jax {
            " of all GPU time) in layout transposes around its convolution or GEMM (transpose fusions, im2col); hypothesis to test: choose the layouts the kernels take natively (NHWC / channels-last dimension_numbers in lax.conv_general_dilated, a batch-major layout for dot_general) so XLA inserts no transposes."
        } else {
            " of all GPU time) in layout transposes around its convolution or GEMM (NCHW/NHWC conversions, batched transposes, im2col); hypothesis to test: channels-last memory format for the model and its inputs (model.to(memory_format=torch.channels_last)), so cuDNN/MIOpen take the tensors as they are."
        }),
    ])
}
/// Step 5.
pub(super) fn roofline_section(roofline: Option<&Result<RooflineView, String>>) -> Section {
    let mut s = Section::new("roofline", "5. Roofline of the top ops");
    let rl = match roofline {
        None => {
            s.para("Roofline needs one capture with shapes (an XSpace, or a Kineto trace taken with record_shapes=True); run `roofline` on one rank's file.");
            return s;
        }
        Some(Err(e)) => {
            s.para(format!("Roofline could not run: {e}"));
            return s;
        }
        Some(Ok(rl)) => rl,
    };
    s.para(format!(
        "Device: {} ({}: {}). FLOPs and bytes follow from shapes (inferred); time is measured; each op is held against the peak of its own dtype.",
        rl.device_recorded,
        rl.device_model.as_deref().unwrap_or("model not in the peak table"),
        rl.device_source
    ));
    let mut t = Table::new(
        "roofline",
        &[
            "op",
            "dtype",
            "GPU time",
            "FLOPs",
            "bytes",
            "intensity (FLOP/B)",
            "achieved",
            "bound",
            "held against",
            "share of that peak",
        ],
    );
    let costed: Vec<&investigation::RoofOp> = rl
        .ops
        .iter()
        .filter(|o| o.flops.is_some())
        .take(15)
        .collect();
    for o in &costed {
        let inferred = |what: &str| Provenance::inferred(format!("{what} from the op's shapes"));
        // A memory-bound op is held against the memory bandwidth, a compute-bound one
        // against its dtype's FLOP/s.
        let (peak, share, how) = if o.bound == "memory" {
            (
                "peak memory bandwidth".to_owned(),
                o.bytes_share_of_peak,
                "achieved bytes/s over the peak memory bandwidth".to_owned(),
            )
        } else {
            (
                format!("peak FLOP/s ({})", o.peak_basis),
                o.flops_share_of_peak,
                format!("achieved FLOP/s over the {} peak", o.peak_basis),
            )
        };
        t.push(vec![
            Cell::code(crate::roofline_text::display_name_of(
                &o.name,
                o.program_id,
                &o.detail,
            )),
            Cell::text(format!("{:?}", o.dtype)),
            Cell::figure(Figure::duration(o.time, Provenance::Measured)),
            o.flops.map_or(Cell::Empty, |f| {
                Cell::figure(Figure::new(Value::Flops(f), inferred("FLOPs")))
            }),
            Cell::figure(Figure::new(Value::Bytes(o.bytes as u64), inferred("bytes"))),
            o.intensity.map_or(Cell::Empty, |i| {
                Cell::figure(Figure::ratio(i, inferred("intensity")))
            }),
            o.achieved_flops_per_s.map_or(Cell::Empty, |f| {
                Cell::figure(Figure::new(
                    Value::FlopsPerSecond(f),
                    inferred("FLOPs over measured time"),
                ))
            }),
            Cell::figure_text(
                &o.bound,
                Provenance::inferred(
                    "arithmetic intensity against the ridge point of the op's dtype",
                ),
            ),
            Cell::text(peak),
            share.map_or(Cell::Empty, |f| {
                Cell::figure(Figure::percent(100.0 * f, Provenance::inferred(how)))
            }),
        ]);
    }
    // What the table covers, of all GPU time.
    let gpu_ns = rl.gpu_time.0.max(1) as f64;
    let shown: i64 = costed.iter().map(|o| o.time.0).sum();
    let modelled: i64 = rl
        .ops
        .iter()
        .filter(|o| o.flops.is_some())
        .map(|o| o.time.0)
        .sum();
    if !costed.is_empty() {
        s.push(Block::Paragraph(vec![
            Span::text("The "),
            Span::tally(costed.len()),
            Span::text(" op(s) below cover "),
            Span::Figure(Figure::percent(
                100.0 * shown as f64 / gpu_ns,
                Provenance::Measured,
            )),
            Span::text(" of all GPU time; every op with a FLOPs model covers "),
            Span::Figure(Figure::percent(
                100.0 * modelled as f64 / gpu_ns,
                Provenance::Measured,
            )),
            Span::text(" (the rest has no cost model: see the trust list)."),
        ]));
    }
    if costed.is_empty() {
        s.para("No op has a FLOPs model in this capture.");
    } else {
        s.push(Block::Table(t));
        s.push(Block::Svg {
            caption: "Roofline: one dot per op, sized by its GPU time; one roof per dtype present"
                .into(),
            svg: crate::roofline_text::svg_of(rl, 10),
        });
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: i64 = 1000;

    /// The figures of a finding, as percents.
    fn percents(f: &Finding) -> Vec<f64> {
        f.spans
            .iter()
            .filter_map(|s| match s {
                Span::Figure(Figure {
                    value: Value::Percent(p),
                    ..
                }) => Some((10.0 * p).round() / 10.0),
                _ => None,
            })
            .collect()
    }

    /// The headline Python line gives its share of all GPU time (1000 µs), then of the
    /// attributed time (800 µs), then the attributed share.
    #[test]
    fn the_top_python_line_has_its_denominators() {
        let line = PythonLine {
            source_line: "train.py:42".to_owned(),
            function: String::new(),
            kernels: 1,
            gpu_time: Nanos(100 * US),
            share_pct: 12.5,
        };
        let f = top_line_finding(&line, false, Nanos(1000 * US), Nanos(800 * US));
        assert!(
            f.spans
                .iter()
                .any(|s| matches!(s, Span::Code(c) if c == "train.py:42")),
            "{f:?}"
        );
        assert_eq!(percents(&f), [10.0, 12.5, 80.0]);
    }

    /// The roofline says what share of all GPU time its rows cover, and holds each op
    /// against the peak that bounds it: bandwidth for a memory-bound op, its dtype's
    /// FLOP/s for a compute-bound one.
    #[test]
    fn the_roofline_gives_its_coverage_and_the_bounding_peak() {
        let path = test_support::workspace_root().join("testdata/roofline/kineto_shapes.json");
        let rl = roofline::analyze(&path).expect("fixture analyses");
        let loaded = load::load(&path).expect("loads");
        let gpu: i64 = loaded[0].capture.activities().iter().map(|a| a.dur.0).sum();
        let costed: Vec<&roofline::RooflineOp> =
            rl.ops.iter().filter(|o| o.flops.value.is_some()).collect();
        let costed_ns: i64 = costed.iter().map(|o| o.time_ns.value.0).sum();
        assert!(costed.len() >= 3 && costed_ns < gpu, "{costed_ns} of {gpu}");
        let section = roofline_section(Some(&Ok(RooflineView::of(&rl))));
        let coverage = section
            .blocks
            .iter()
            .find_map(|b| match b {
                Block::Paragraph(spans)
                    if matches!(spans.get(2), Some(Span::Text(t)) if t.contains("op(s) below cover")) =>
                {
                    Some(spans)
                }
                _ => None,
            })
            .expect("the coverage sentence");
        assert!(
            matches!(&coverage[1], Span::Tally(n) if *n == costed.len() as u64),
            "{coverage:?}: {} ops",
            costed.len()
        );
        let want = 100.0 * costed_ns as f64 / gpu as f64;
        assert!(
            matches!(coverage[3], Span::Figure(Figure { value: Value::Percent(p), .. }) if (p - want).abs() < 1e-9),
            "{coverage:?} vs {want}"
        );
        let table = section.table("roofline").expect("the roofline table");
        let mut kinds = Vec::new();
        for (row, op) in table.rows.iter().zip(&costed) {
            let Cell::Text(against) = &row[8] else {
                panic!("held against: {:?}", row[8]);
            };
            let want = match op.bound.value {
                roofline::RooflineBound::Memory => {
                    assert_eq!(against, "peak memory bandwidth");
                    op.bytes_share_of_peak.value
                }
                _ => {
                    assert!(against.starts_with("peak FLOP/s ("), "{against}");
                    op.flops_share_of_peak.value
                }
            };
            kinds.push(op.bound.value.name());
            match (&row[9], want) {
                (
                    Cell::Figure(Figure {
                        value: Value::Percent(p),
                        ..
                    }),
                    Some(w),
                ) => assert!((p - 100.0 * w).abs() < 1e-9),
                (Cell::Empty, None) => {}
                other => panic!("{other:?}"),
            }
        }
        assert!(kinds.contains(&"memory"), "{kinds:?}");
    }
}
