//! The rank × step heat map as SVG: one column per step, one row per rank (one pixel row
//! each past 64 ranks, so 1,024 ranks make a 1,024-pixel-high chart; past 1,024 ranks each
//! row is a bucket of neighbouring ranks coloured by its hottest one), colour = the rank's
//! work time in the step over that step's median rank (`analysis::StepHeatMap`): white at
//! the median, red when longer, blue when shorter, grey where the rank lacks the step.

use std::fmt::Write;

use analysis::StepHeatMap;

use crate::html::esc;

/// Most drawn rows: more ranks are bucketed.
const MAX_ROWS: usize = 1024;
/// Up to this many ranks each row is tall enough for its label.
const LABELLED_ROWS: usize = 64;
/// Cells with a tooltip each, at most (a tooltip per cell of 1,024 × 100 would weigh
/// megabytes).
const MAX_TITLES: usize = 20_000;
const PLOT_WIDTH: usize = 720;
const LEFT: usize = 90;
const TOP: usize = 24;

/// Renders `map` as one `<svg>` element (class `heatmap`): a `<rect class="cell">` per
/// drawn cell with `data-rank` (the first rank of its row) and `data-step`, the step axis
/// below, rank labels on the left and the colour legend on the right.
pub fn render(map: &StepHeatMap) -> String {
    let ranks = map.rows.len();
    let steps = map.steps.len().max(1);
    let per_row = ranks.div_ceil(MAX_ROWS).max(1);
    let rows = ranks.div_ceil(per_row);
    let row_h = if ranks <= LABELLED_ROWS { 14 } else { 1 };
    let col_w = (PLOT_WIDTH / steps).clamp(3, 60);
    let plot_w = col_w * steps;
    let plot_h = row_h * rows;
    let legend_x = LEFT + plot_w + 20;
    let width = legend_x + 110;
    let height = TOP + plot_h + 40;
    // The colour scale's reach: the largest deviation, between 1 % and 50 %.
    let span = (0..ranks)
        .flat_map(|r| (0..map.steps.len()).filter_map(move |s| map.ratio(r, s)))
        .map(|x| (x - 1.0).abs())
        .fold(0.0_f64, f64::max)
        .clamp(0.01, 0.5);
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"heatmap\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"11\">"
    );
    let _ = write!(
        out,
        "<text x=\"{LEFT}\" y=\"14\">work time per step over the step's median rank ({} ranks{})</text>",
        ranks,
        if per_row > 1 {
            format!(", {per_row} per row, each row its hottest")
        } else {
            String::new()
        }
    );
    let titles = ranks * steps <= MAX_TITLES;
    for row in 0..rows {
        let first = row * per_row;
        let members = first..(first + per_row).min(ranks);
        let y = TOP + row * row_h;
        for (s, number) in map.steps.iter().enumerate() {
            // The hottest rank of the row's bucket.
            let hottest = members
                .clone()
                .filter_map(|r| map.ratio(r, s).map(|x| (r, x)))
                .max_by(|a, b| a.1.total_cmp(&b.1));
            let x = LEFT + s * col_w;
            let fill = hottest.map_or_else(|| "#dddddd".to_owned(), |(_, v)| color(v, span));
            let _ = write!(
                out,
                "<rect class=\"cell\" data-rank=\"{}\" data-step=\"{number}\" x=\"{x}\" y=\"{y}\" width=\"{col_w}\" height=\"{row_h}\" fill=\"{fill}\">",
                rank_name(map, first)
            );
            if titles && let Some((r, v)) = hottest {
                let value = map.rows[r].cells[s].map_or(String::new(), |n| n.human());
                let _ = write!(
                    out,
                    "<title>{}, step {number}: {value}, {:+.1} % vs the step's median</title>",
                    esc(&rank_name(map, r)),
                    100.0 * (v - 1.0)
                );
            }
            out.push_str("</rect>");
        }
    }
    // Rank labels: every row when they fit, else about every 64 pixels.
    let label_every = if row_h >= 14 { 1 } else { 64 };
    for row in (0..rows).step_by(label_every) {
        let y = TOP + row * row_h + row_h.min(11);
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{y}\" text-anchor=\"end\">{}</text>",
            LEFT - 4,
            esc(&rank_name(map, row * per_row))
        );
    }
    // Step axis: a label at least 30 pixels from the previous one.
    let label_step = 30_usize.div_ceil(col_w).max(1);
    let axis_y = TOP + plot_h;
    let _ = write!(
        out,
        "<line x1=\"{LEFT}\" y1=\"{axis_y}\" x2=\"{}\" y2=\"{axis_y}\" stroke=\"#333\"/>",
        LEFT + plot_w
    );
    for (s, number) in map.steps.iter().enumerate().step_by(label_step) {
        let x = LEFT + s * col_w + col_w / 2;
        let _ = write!(
            out,
            "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{number}</text>",
            axis_y + 14
        );
    }
    let _ = write!(
        out,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">step</text>",
        LEFT + plot_w / 2,
        axis_y + 30
    );
    // Legend: from the scale's shortest (blue) to its longest (red), the median white.
    let (lh, lx) = (120, legend_x);
    for i in 0..=12 {
        let v = 1.0 + span - 2.0 * span * i as f64 / 12.0;
        let _ = write!(
            out,
            "<rect class=\"legend\" x=\"{lx}\" y=\"{}\" width=\"14\" height=\"{}\" fill=\"{}\"/>",
            TOP + i * lh / 13,
            lh / 13 + 1,
            color(v, span)
        );
    }
    for (i, text) in [
        (0, format!("+{:.0} %", 100.0 * span)),
        (6, "median".to_owned()),
        (12, format!("−{:.0} %", 100.0 * span)),
    ] {
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{}\">{text}</text>",
            lx + 18,
            TOP + i * lh / 13 + 9
        );
    }
    let _ = write!(
        out,
        "<rect x=\"{lx}\" y=\"{}\" width=\"14\" height=\"9\" fill=\"#dddddd\"/><text x=\"{}\" y=\"{}\">no step</text>",
        TOP + lh + 8,
        lx + 18,
        TOP + lh + 17
    );
    out.push_str("</svg>");
    out
}

/// `rank N`, or the file name of a row without a rank.
fn rank_name(map: &StepHeatMap, row: usize) -> String {
    let r = &map.rows[row];
    r.rank.map_or_else(
        || {
            std::path::Path::new(&r.label)
                .file_name()
                .map_or(r.label.clone(), |n| n.to_string_lossy().into_owned())
        },
        |n| format!("rank {n}"),
    )
}

/// White at 1.0, towards red (#d73027) above and blue (#4575b4) below, full at ±`span`.
fn color(ratio: f64, span: f64) -> String {
    let t = ((ratio - 1.0) / span).clamp(-1.0, 1.0);
    let (target, t) = if t >= 0.0 {
        ((0xd7, 0x30, 0x27), t)
    } else {
        ((0x45, 0x75, 0xb4), -t)
    };
    let mix = |c: u8| (255.0 + (f64::from(c) - 255.0) * t).round() as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        mix(target.0),
        mix(target.1),
        mix(target.2)
    )
}
