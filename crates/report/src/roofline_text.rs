//! Text table (a [`Document`] printed by [`crate::text`]), CSV and SVG chart of a
//! [`Roofline`] (JSON is its serde form).

use std::fmt::Write as _;

use roofline::{Roofline, RooflineOp};
use trace_model::Provenance;

use crate::doc::{Block, Cell, Column, Document, Section, Span, Table, TextLayout};
use crate::label::{Figure, NumberFormat};

/// The ops the chart shows: those with a positive intensity and a positive achieved FLOP/s.
pub fn chart_ops(report: &Roofline) -> Vec<&RooflineOp> {
    report
        .ops
        .iter()
        .filter(|o| {
            o.intensity.value.is_some_and(|i| i > 0.0)
                && o.achieved_flops_per_s.value.is_some_and(|f| f > 0.0)
        })
        .collect()
}

fn short(name: &str, width: usize) -> String {
    if name.chars().count() <= width {
        name.to_owned()
    } else {
        let head: String = name.chars().take(width.saturating_sub(1)).collect();
        format!("{head}…")
    }
}

/// `custom-call.1(49)` for an HLO op; `linear 1x141x512,512x512,512` for an ATen op.
pub fn display_name(o: &RooflineOp) -> String {
    display_name_of(&o.name, o.program_id, &o.detail)
}

/// [`display_name`] of an op's name, program (JAX) and detail (HLO opcode or Input Dims).
pub fn display_name_of(name: &str, program_id: Option<i64>, detail: &str) -> String {
    if let Some(id) = program_id {
        return format!("{name}({id})");
    }
    let dims_text = detail.split(' ').next().unwrap_or("");
    let dims: Vec<Vec<i64>> = serde_json::from_str(dims_text).unwrap_or_default();
    let shapes: Vec<String> = dims
        .iter()
        .filter(|d| !d.is_empty())
        .map(|d| d.iter().map(i64::to_string).collect::<Vec<_>>().join("x"))
        .collect();
    format!("{} {}", name.trim_start_matches("aten::"), shapes.join(","))
}

/// The text report: device and peak source, the top `top` ops by time, the trust list.
pub fn text(report: &Roofline, top: usize) -> String {
    crate::text::render(&document(report, top))
}

/// The text report as a document (see [`text`]).
pub fn document(report: &Roofline, top: usize) -> Document {
    let mut doc = Document::new(report.capture.clone());
    let d = &report.device;
    let mut head = Section::new("device", "");
    head.para(format!("  format   {}", report.format));
    head.para(format!(
        "  device   {} [read: profiler metadata]",
        d.recorded
    ));
    match &d.model {
        Some(model) => head.para(format!(
            "  peaks    {model} [{}: {}]{}",
            d.label(),
            d.source,
            d.matched_by
                .as_ref()
                .map(|m| format!("; matched by {m}"))
                .unwrap_or_default()
        )),
        None => head.para(format!("  peaks    [{}] {}", d.label(), d.source)),
    }
    let gpu = report.gpu_time_ns.value.0.max(1) as f64;
    // Each share is of two times the roofline labels; the line's label is theirs.
    let share = |part: &trace_model::Labelled<trace_model::Nanos>| {
        let label = if part.provenance == report.gpu_time_ns.provenance {
            part.provenance.clone()
        } else {
            Provenance::inferred("a share of two times of different provenance")
        };
        Span::formatted(
            Figure::percent(part.value.0 as f64 / gpu * 100.0, label),
            NumberFormat::PercentSign(1),
        )
    };
    head.push(Block::Paragraph(crate::doc::labelled(vec![
        Span::text("  GPU time "),
        Span::formatted(
            Figure::number(
                report.gpu_time_ns.value.0 as f64 / 1e6,
                report.gpu_time_ns.provenance.clone(),
            ),
            NumberFormat::Fixed(3),
        ),
        Span::text(" ms; in ops "),
        share(&report.attributed_time_ns),
        Span::text(", in ops with a FLOPs model "),
        share(&report.costed_time_ns),
    ])));
    head.push(Block::Paragraph(Vec::new()));
    doc.sections.push(head);

    let mut sec = Section::new("ops", "");
    let mut t = Table::new(
        "ops",
        &[
            "op", "kind", "dtype", "occ", "time ms", "time%", "GFLOP", "MB", "FLOP/B", "TFLOP/s",
            "%peak", "GB/s", "%HBM", "bound", "peak",
        ],
    );
    for o in report.ops.iter().take(top) {
        let name = display_name(o);
        let scaled = |v: Option<f64>, scale: f64, p: &Provenance| match v {
            Some(v) => Cell::figure(Figure::number(v / scale, p.clone())),
            None => Cell::text("-"),
        };
        let share = |v: Option<f64>, p: &Provenance| match v {
            Some(v) => Cell::figure(Figure::percent(v * 100.0, p.clone())),
            None => Cell::text("-"),
        };
        let time = o.time_ns.value.0 as f64;
        t.push(vec![
            Cell::code(short(&name, 44)),
            Cell::text(o.kind.name()),
            Cell::text(o.dtype.name()),
            Cell::figure(Figure::count(
                o.occurrences.value,
                o.occurrences.provenance.clone(),
            )),
            Cell::figure(Figure::number(time / 1e6, o.time_ns.provenance.clone())),
            Cell::figure(Figure::percent(time / gpu * 100.0, Provenance::Measured)),
            scaled(o.flops.value, 1e9, &o.flops.provenance),
            scaled(Some(o.bytes.value), 1e6, &o.bytes.provenance),
            scaled(o.intensity.value, 1.0, &o.intensity.provenance),
            scaled(
                o.achieved_flops_per_s.value,
                1e12,
                &o.achieved_flops_per_s.provenance,
            ),
            share(
                o.flops_share_of_peak.value,
                &o.flops_share_of_peak.provenance,
            ),
            scaled(
                o.achieved_bytes_per_s.value,
                1e9,
                &o.achieved_bytes_per_s.provenance,
            ),
            share(
                o.bytes_share_of_peak.value,
                &o.bytes_share_of_peak.provenance,
            ),
            Cell::text(o.bound.value.name()),
            Cell::text(o.peak_basis.clone()),
        ]);
    }
    let fixed = |gap, width, d| Column::right(gap, width).format(NumberFormat::Fixed(d));
    let percent = |width| Column::right(1, width).format(NumberFormat::PercentSign(1));
    sec.push(Block::Table(t.with_layout(TextLayout::new(vec![
        Column::left(0, 44),
        Column::left(1, 13),
        Column::left(1, 5),
        fixed(1, 5, 0),
        fixed(1, 10, 3),
        percent(6),
        fixed(1, 10, 3),
        fixed(1, 10, 2),
        fixed(1, 8, 1),
        fixed(1, 8, 2),
        percent(7),
        fixed(1, 8, 1),
        percent(7),
        Column::left(2, 13),
        Column::left(1, 0),
    ]))));
    if report.ops.len() > top {
        sec.para(format!(
            "... {} more ops (--top N, --json or --csv for all)",
            report.ops.len() - top
        ));
    }
    sec.push(Block::Paragraph(Vec::new()));
    sec.para(
        "occ, time: measured (sum of the op's kernel time). GFLOP, MB, FLOP/B: inferred from shapes (GFLOP = 1e9 FLOPs, MB = 1e6 bytes). \
         TFLOP/s, GB/s: inferred (from-shapes work / measured time). %peak, %HBM: share of the read peak for the op's dtype (peak column). \
         bound: intensity against that dtype's ridge point (inferred).",
    );
    doc.sections.push(sec);
    if !report.trust.is_empty() {
        doc.sections.push(trust_section(&report.trust));
    }
    doc
}

/// The roofline's trust list: each `trace_model::TrustItem` with its count and GPU time,
/// labelled by the item's provenance.
fn trust_section(trust: &[trace_model::TrustItem]) -> Section {
    let mut sec = Section::new("trust", "");
    sec.push(Block::Paragraph(Vec::new()));
    sec.para("Trust list:");
    for t in trust {
        sec.push(Block::Paragraph(vec![
            Span::text(format!("  - {} ({}): ", t.message, t.code)),
            Span::formatted(
                Figure::count(t.count, t.provenance()),
                NumberFormat::Fixed(0),
            ),
            Span::text(format!(" {}, ", t.unit.as_deref().unwrap_or_default())),
            Span::formatted(
                Figure::number(t.time_ns.unwrap_or_default().0 as f64 / 1e6, t.provenance()),
                NumberFormat::Fixed(3),
            ),
            Span::text(format!(" ms of GPU time [{}]", t.provenance().word())),
        ]));
    }
    sec
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// One CSV row per op, every op; numbers in base units (FLOPs, bytes, ns, per second).
pub fn csv(report: &Roofline) -> String {
    let mut s = String::from(
        "name,program_id,module,kind,dtype,detail,occurrences,kernels,time_ns,flops,bytes,intensity,achieved_flops_per_s,achieved_bytes_per_s,peak_flops_per_s,peak_bytes_per_s,peak_basis,flops_share_of_peak,bytes_share_of_peak,bound,bound_by_utilization\n",
    );
    let num = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    for o in &report.ops {
        let fields = [
            csv_field(&o.name),
            o.program_id.map(|p| p.to_string()).unwrap_or_default(),
            csv_field(o.module.as_deref().unwrap_or("")),
            o.kind.name().to_owned(),
            o.dtype.name().to_owned(),
            csv_field(&o.detail),
            o.occurrences.value.to_string(),
            o.kernels.value.to_string(),
            o.time_ns.value.0.to_string(),
            num(o.flops.value),
            o.bytes.value.to_string(),
            num(o.intensity.value),
            num(o.achieved_flops_per_s.value),
            num(o.achieved_bytes_per_s.value),
            num(o.peak_flops_per_s.value),
            num(o.peak_bytes_per_s.value),
            csv_field(&o.peak_basis),
            num(o.flops_share_of_peak.value),
            num(o.bytes_share_of_peak.value),
            o.bound.value.name().to_owned(),
            o.bound_by_utilization.value.name().to_owned(),
        ];
        s.push_str(&fields.join(","));
        s.push('\n');
    }
    s
}

const DTYPE_COLOURS: &[(&str, &str)] = &[
    ("fp64", "#8c564b"),
    ("fp32", "#1f77b4"),
    ("tf32", "#17becf"),
    ("bf16", "#d62728"),
    ("fp16", "#ff7f0e"),
    ("fp8", "#2ca02c"),
    ("fp4", "#9467bd"),
];

fn colour(dtype: &str) -> &'static str {
    crate::html::colour_in(DTYPE_COLOURS, dtype, "#7f7f7f")
}

/// The SVG roofline chart: log-log axes (FLOP/byte against FLOP/s), one roof per dtype
/// (and peak basis) present, one dot per charted op (area by GPU time), the top `top`
/// ops labelled.
pub fn svg(report: &Roofline, top: usize) -> String {
    svg_of(&investigation::RooflineView::of(report), top)
}

/// [`svg`] of the roofline as the investigation keeps it.
pub fn svg_of(report: &investigation::RooflineView, top: usize) -> String {
    let ops: Vec<&investigation::RoofOp> = report
        .ops
        .iter()
        .filter(|o| {
            o.intensity.is_some_and(|i| i > 0.0) && o.achieved_flops_per_s.is_some_and(|f| f > 0.0)
        })
        .collect();
    let (w, h) = (960.0_f64, 640.0_f64);
    let (left, right, top_m, bottom) = (80.0, 200.0, 50.0, 60.0);
    let (pw, ph) = (w - left - right, h - top_m - bottom);

    // Roofs: one per (dtype, basis) of the charted ops that has both peaks.
    let mut roofs: Vec<(String, String, f64, f64)> = Vec::new();
    for o in &ops {
        if let (Some(f), Some(b)) = (o.peak_flops_per_s, o.peak_bytes_per_s) {
            let key = (o.dtype.name().to_owned(), o.peak_basis.clone());
            if !roofs.iter().any(|r| (r.0.clone(), r.1.clone()) == key) {
                roofs.push((key.0, key.1, f, b));
            }
        }
    }
    roofs.sort_by(|a, b| a.2.total_cmp(&b.2));

    let mut xs: Vec<f64> = ops.iter().filter_map(|o| o.intensity).collect();
    let mut ys: Vec<f64> = ops.iter().filter_map(|o| o.achieved_flops_per_s).collect();
    for r in &roofs {
        xs.push(r.2 / r.3);
        ys.push(r.2);
    }
    let bounds = |v: &[f64], lo_default: f64, hi_default: f64| -> (f64, f64) {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !lo.is_finite() || !hi.is_finite() {
            return (lo_default, hi_default);
        }
        let (mut lo, mut hi) = (lo.log10().floor() - 0.0, hi.log10().ceil());
        if hi - lo < 2.0 {
            lo = hi - 2.0;
        }
        if lo == hi {
            hi += 1.0;
        }
        (lo, hi)
    };
    let (x0, x1) = bounds(&xs, -1.0, 3.0);
    let (y0, y1) = bounds(&ys, 9.0, 15.0);
    let (x0, y0) = (x0 - 0.5, y0 - 0.5);
    let px = |x: f64| left + (x.log10() - x0) / (x1 - x0) * pw;
    let py = |y: f64| top_m + ph - (y.log10() - y0) / (y1 - y0) * ph;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(
        s,
        r#"<title>Roofline: {}</title>
<rect x="0" y="0" width="{w}" height="{h}" fill="white"/>"#,
        crate::html::esc(&report.capture)
    );
    let model = report.device_model.as_deref().unwrap_or("unknown model");
    let _ = writeln!(
        s,
        r#"<text x="{left}" y="22" font-size="14">{} — peaks {} ({})</text>"#,
        crate::html::esc(&short(&report.capture, 70)),
        crate::html::esc(model),
        report.device_label
    );
    // Axes and decade grid.
    let _ = writeln!(
        s,
        r##"<g class="axes" stroke="#444" fill="none"><rect x="{left}" y="{top_m}" width="{pw}" height="{ph}"/></g>"##
    );
    let mut decade = x0.ceil() as i64;
    while (decade as f64) <= x1 {
        let x = px(10f64.powi(decade as i32));
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{top_m}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">1e{decade}</text>"##,
            top_m + ph,
            top_m + ph + 16.0
        );
        decade += 1;
    }
    let mut decade = y0.ceil() as i64;
    while (decade as f64) <= y1 {
        let y = py(10f64.powi(decade as i32));
        let _ = writeln!(
            s,
            r##"<line x1="{left}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">1e{decade}</text>"##,
            left + pw,
            left - 6.0,
            y + 4.0
        );
        decade += 1;
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">arithmetic intensity (FLOP/byte, from shapes)</text>"#,
        left + pw / 2.0,
        h - 18.0
    );
    let _ = writeln!(
        s,
        r#"<text x="18" y="{:.1}" text-anchor="middle" transform="rotate(-90 18 {:.1})">achieved FLOP/s (from-shapes FLOPs / measured time)</text>"#,
        top_m + ph / 2.0,
        top_m + ph / 2.0
    );
    // Roofs.
    for (i, (dtype, basis, f, b)) in roofs.iter().enumerate() {
        let ridge = f / b;
        let xa = 10f64.powf(x0);
        let xb = 10f64.powf(x1);
        let c = colour(dtype);
        let _ = writeln!(
            s,
            r#"<polyline class="roof" data-dtype="{dtype}" fill="none" stroke="{c}" stroke-width="2" points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}"/>"#,
            px(xa),
            py(xa * b),
            px(ridge),
            py(*f),
            px(xb),
            py(*f)
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" fill="{c}">{} peak {:.1} TFLOP/s, HBM {:.0} GB/s</text>"#,
            left + pw + 8.0,
            top_m + 14.0 + 16.0 * i as f64,
            crate::html::esc(basis),
            f / 1e12,
            b / 1e9
        );
    }
    // Dots, largest first so small ones stay visible on top.
    let max_time = ops.iter().map(|o| o.time.0).max().unwrap_or(1).max(1) as f64;
    let mut order: Vec<&investigation::RoofOp> = ops.clone();
    order.sort_by_key(|o| std::cmp::Reverse(o.time.0));
    for o in &order {
        let (Some(x), Some(y)) = (o.intensity, o.achieved_flops_per_s) else {
            continue;
        };
        let r = 2.5 + 12.0 * (o.time.0 as f64 / max_time).sqrt();
        let _ = writeln!(
            s,
            r##"<circle class="op" cx="{:.1}" cy="{:.1}" r="{r:.1}" fill="{}" fill-opacity="0.55" stroke="#333" stroke-width="0.5"><title>{} ({}, {}): {:.3} ms, {:.1} FLOP/B, {:.2} TFLOP/s</title></circle>"##,
            px(x),
            py(y),
            colour(o.dtype.name()),
            crate::html::esc(&o.name),
            o.kind,
            o.dtype.name(),
            o.time.0 as f64 / 1e6,
            x,
            y / 1e12
        );
    }
    for o in order.iter().take(top) {
        let (Some(x), Some(y)) = (o.intensity, o.achieved_flops_per_s) else {
            continue;
        };
        let _ = writeln!(
            s,
            r#"<text class="label" x="{:.1}" y="{:.1}">{}</text>"#,
            px(x) + 6.0,
            py(y) - 6.0,
            crate::html::esc(&short(
                &display_name_of(&o.name, o.program_id, &o.detail),
                40
            ))
        );
    }
    let _ = writeln!(
        s,
        r##"<text x="{left}" y="{:.1}" fill="#555">dot area ~ GPU time; {} ops charted of {}</text>"##,
        h - 4.0,
        ops.len(),
        report.ops.len()
    );
    s.push_str("</svg>\n");
    s
}
