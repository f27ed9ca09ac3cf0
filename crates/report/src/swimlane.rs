//! Swimlanes as SVG: one row per GPU stream and per host thread on one time axis, slices
//! coloured by kernel class, idle time as the bare row background.
//!
//! A step can hold 100k kernels; drawing each as a rectangle makes a heavy page and
//! shows nothing more. Slices at least one pixel wide are drawn (each with a `<title>`
//! naming it); narrower ones are merged, per row and pixel column, into a density bar
//! whose opacity is the share of that pixel's time they cover.

use std::fmt::Write;

use crate::html::esc;

/// The chart's types are the investigation's swimlane data, drawn and named here.
pub use investigation::{Chart, Lane, LaneKind, Slice};

/// Colours by class key.
pub const COLORS: &[(&str, &str)] = &[
    ("gemm", "#4e79a7"),
    ("convolution", "#59a14f"),
    ("attention", "#e15759"),
    ("elementwise", "#f28e2b"),
    ("norm", "#ff9da7"),
    ("layout", "#8cd17d"),
    ("reduction", "#edc948"),
    ("collective", "#b07aa1"),
    ("memcpy", "#76b7b2"),
    ("memset", "#9c755f"),
    ("other", "#bab0ac"),
    ("host", "#6b6b6b"),
];

fn color(class: &str) -> &'static str {
    crate::html::colour_in(COLORS, class, "#bab0ac")
}

const LABEL_W: f64 = 230.0;
const PLOT_W: f64 = 1100.0;
const ROW_H: f64 = 18.0;
const AXIS_H: f64 = 26.0;
const LEGEND_H: f64 = 22.0;

/// Renders the chart as one `<svg>` element, each row named by [`lane_label`]. Each row is
/// a `<g class="lane">` with `data-kind` `gpu` or `host`.
pub fn render(chart: &Chart) -> String {
    let names: Vec<String> = chart.lanes.iter().map(lane_label).collect();
    render_named(chart, &names)
}

/// [`render`] with each row named by `names` (one per lane, in order; a lane without one
/// is named by [`lane_label`]), for charts whose rows are not one input's (compare's
/// before and after).
pub fn render_named(chart: &Chart, names: &[String]) -> String {
    let span = (chart.end - chart.start).max(1) as f64;
    let px = |t: i64| LABEL_W + ((t - chart.start) as f64 / span * PLOT_W).clamp(0.0, PLOT_W);
    let height = LEGEND_H + AXIS_H + ROW_H * chart.lanes.len() as f64 + 8.0;
    let width = LABEL_W + PLOT_W + 10.0;
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"swimlanes\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"11\">"
    );
    // Legend.
    let mut x = LABEL_W;
    for (class, c) in COLORS {
        let _ = write!(
            out,
            "<rect x=\"{x}\" y=\"4\" width=\"10\" height=\"10\" fill=\"{c}\"/><text x=\"{}\" y=\"13\">{class}</text>",
            x + 13.0
        );
        x += 14.0 + 7.0 * class.len() as f64 + 14.0;
    }
    // Axis: five ticks.
    let axis_y = LEGEND_H + AXIS_H - 6.0;
    for i in 0..=4 {
        let t = chart.start + ((chart.end - chart.start) as f64 * i as f64 / 4.0) as i64;
        let x = px(t);
        let _ = write!(
            out,
            "<line x1=\"{x:.1}\" y1=\"{axis_y}\" x2=\"{x:.1}\" y2=\"{height}\" stroke=\"#ddd\"/><text x=\"{x:.1}\" y=\"{}\" text-anchor=\"{}\">+{}</text>",
            axis_y - 4.0,
            match i {
                0 => "start",
                4 => "end",
                _ => "middle",
            },
            esc(&trace_model::Nanos(t - chart.start).human())
        );
    }
    for (row, lane) in chart.lanes.iter().enumerate() {
        let y = LEGEND_H + AXIS_H + ROW_H * row as f64;
        let kind = match lane.kind {
            LaneKind::Gpu { .. } => "gpu",
            LaneKind::Host { .. } => "host",
        };
        let mark = lane_mark(lane);
        let name = names.get(row).cloned().unwrap_or_else(|| lane_label(lane));
        let label = match mark {
            Some(m) => format!("{name} [{m}]"),
            None => name,
        };
        let _ = write!(
            out,
            "<g class=\"lane\" data-kind=\"{kind}\"><rect x=\"{LABEL_W}\" y=\"{y}\" width=\"{PLOT_W}\" height=\"{}\" fill=\"{}\"/><text x=\"4\" y=\"{}\"{}>{}</text>",
            ROW_H - 2.0,
            if mark.is_some() { "#fdf3e1" } else { "#f3f3f3" },
            y + ROW_H - 6.0,
            if mark.is_some() {
                " font-weight=\"bold\""
            } else {
                ""
            },
            esc(&label)
        );
        // Sub-pixel slices: covered time per pixel column and the dominant class there.
        let mut density: Vec<(f64, &str)> = vec![(0.0, "other"); PLOT_W as usize + 1];
        let ns_per_px = span / PLOT_W;
        for s in &lane.slices {
            let (x0, x1) = (px(s.start), px(s.end));
            if x1 - x0 >= 1.0 {
                let _ = write!(
                    out,
                    "<rect x=\"{x0:.2}\" y=\"{}\" width=\"{:.2}\" height=\"{}\" fill=\"{}\"><title>{}</title></rect>",
                    y + 1.0,
                    x1 - x0,
                    ROW_H - 4.0,
                    color(&s.class),
                    esc(&slice_title(s))
                );
            } else if s.end > s.start || x1 > x0 {
                let col = ((x0 - LABEL_W) as usize).min(density.len() - 1);
                let d = &mut density[col];
                d.0 += (s.end - s.start) as f64 / ns_per_px;
                d.1 = &s.class;
            }
        }
        let mut col = 0;
        while col < density.len() {
            if density[col].0 <= 0.0 {
                col += 1;
                continue;
            }
            let (start, class) = (col, density[col].1);
            let mut covered = 0.0;
            while col < density.len() && density[col].0 > 0.0 && density[col].1 == class {
                covered += density[col].0;
                col += 1;
            }
            let w = (col - start) as f64;
            let _ = write!(
                out,
                "<rect class=\"density\" x=\"{:.1}\" y=\"{}\" width=\"{w}\" height=\"{}\" fill=\"{}\" fill-opacity=\"{:.2}\"><title>{} short {class} slices merged</title></rect>",
                LABEL_W + start as f64,
                y + 1.0,
                ROW_H - 4.0,
                color(class),
                (covered / w).clamp(0.15, 1.0),
                esc(&trace_model::Nanos((covered * ns_per_px) as i64).human())
            );
        }
        out.push_str("</g>");
    }
    out.push_str("</svg>");
    out
}

/// The row's name, shown beside it: `GPU 0 stream 7`, `host thread 1234`, after its
/// rank over a rank directory (`rank 1 GPU 0 stream 7`).
pub fn lane_label(lane: &Lane) -> String {
    let rank = lane
        .rank
        .as_ref()
        .map(|w| format!("{} ", crate::investigate::who_text(w)))
        .unwrap_or_default();
    match lane.kind {
        LaneKind::Gpu { gpu, stream } => format!("{rank}GPU {gpu} stream {stream}"),
        LaneKind::Host { thread } => format!("{rank}host thread {thread}"),
    }
}

/// The mark beside a row's label: `critical`, `last to finish`, or both.
fn lane_mark(lane: &Lane) -> Option<&'static str> {
    match (lane.critical, lane.last_to_finish) {
        (true, true) => Some("critical, last to finish"),
        (true, false) => Some("critical"),
        (false, true) => Some("last to finish"),
        (false, false) => None,
    }
}

/// A slice's tooltip: its name, duration and launching op (`sgemm — 12.0 µs — op aten::mm`).
fn slice_title(s: &Slice) -> String {
    match &s.op {
        Some(op) => format!("{} — {} — op {op}", s.name, s.dur.human()),
        None => format!("{} — {}", s.name, s.dur.human()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_slices_merge_into_density_bars() {
        let slices: Vec<Slice> = (0..100_000)
            .map(|i| Slice {
                start: i * 10,
                end: i * 10 + 5,
                class: "elementwise".into(),
                name: format!("k{i}"),
                dur: trace_model::Nanos(5),
                op: None,
            })
            .collect();
        let chart = Chart {
            start: 0,
            end: 1_000_000,
            lanes: vec![Lane {
                rank: None,
                kind: LaneKind::Gpu { gpu: 0, stream: 7 },
                critical: true,
                last_to_finish: false,
                slices,
            }],
        };
        let svg = render(&chart);
        assert!(svg.len() < 50_000, "{} bytes", svg.len());
        assert_eq!(svg.matches("<g class=\"lane\"").count(), 1);
        assert!(svg.contains("class=\"density\""));
        assert!(!svg.contains("<title>k5 — "));
        assert!(svg.contains(">GPU 0 stream 7 [critical]</text>"));
    }

    #[test]
    fn wide_slices_are_drawn_with_titles() {
        let chart = Chart {
            start: 0,
            end: 100,
            lanes: vec![
                Lane {
                    rank: Some(investigation::Who::Rank(1)),
                    kind: LaneKind::Gpu { gpu: 0, stream: 7 },
                    critical: true,
                    last_to_finish: true,
                    slices: vec![Slice {
                        start: 10,
                        end: 60,
                        class: "gemm".into(),
                        name: "sgemm <&>".into(),
                        dur: trace_model::Nanos(50),
                        op: Some("aten::mm".into()),
                    }],
                },
                Lane {
                    rank: Some(investigation::Who::File("b.json".into())),
                    kind: LaneKind::Host { thread: 1 },
                    critical: false,
                    last_to_finish: false,
                    slices: vec![],
                },
            ],
        };
        let svg = render(&chart);
        let title = format!(
            "<title>sgemm &lt;&amp;&gt; — {} — op aten::mm</title>",
            trace_model::Nanos(50).human()
        );
        assert!(svg.contains(&title), "{svg}");
        assert!(svg.contains(">rank 1 GPU 0 stream 7 [critical, last to finish]</text>"));
        assert!(svg.contains(">b.json host thread 1</text>"));
        assert_eq!(svg.matches("data-kind=\"host\"").count(), 1);
    }
}
