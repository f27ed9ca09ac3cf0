//! The rank × step heat map alone: late cells are red, the others white; a thousand ranks
//! stay one pixel row each, and more are bucketed by their hottest rank.

use analysis::{HeatRow, StepHeatMap};
use report::heatmap::render;
use trace_model::Nanos;

/// `ranks` ranks of `steps` steps of 1 ms, rank `hot` 20 % longer from step 2 on.
fn map(ranks: usize, steps: i64, hot: usize) -> StepHeatMap {
    StepHeatMap {
        steps: (0..steps).collect(),
        medians: (0..steps).map(|_| Some(Nanos(1_000_000))).collect(),
        rows: (0..ranks)
            .map(|r| HeatRow {
                rank: Some(r as i64),
                label: format!("rank{r}.json"),
                cells: (0..steps)
                    .map(|s| {
                        Some(Nanos(if r == hot && s >= 2 {
                            1_200_000
                        } else {
                            1_000_000
                        }))
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// The fill of each cell, by (data-rank, data-step).
pub(crate) fn fills(svg: &str) -> Vec<(String, String, String)> {
    svg.split("<rect class=\"cell\"")
        .skip(1)
        .map(|cell| {
            let attr = |name: &str| {
                let start = cell.find(&format!("{name}=\"")).expect(name) + name.len() + 2;
                cell[start..start + cell[start..].find('"').expect("quote")].to_owned()
            };
            (attr("data-rank"), attr("data-step"), attr("fill"))
        })
        .collect()
}

#[test]
fn the_late_cells_are_red_the_others_white() {
    let svg = render(&map(8, 5, 3));
    let cells = fills(&svg);
    assert_eq!(cells.len(), 8 * 5);
    for (rank, step, fill) in cells {
        let hot = rank == "rank 3" && step.parse::<i64>().expect("step") >= 2;
        assert_eq!(
            fill,
            if hot { "#d73027" } else { "#ffffff" },
            "{rank} {step}"
        );
    }
    assert!(svg.contains("+20 %") && svg.contains("median"), "legend");
    assert!(svg.contains(">rank 7</text>"), "every rank labelled");
}

#[test]
fn a_thousand_ranks_stay_one_pixel_row_each() {
    let svg = render(&map(1024, 8, 700));
    assert_eq!(fills(&svg).len(), 1024 * 8);
    assert!(svg.contains("height=\"1\""));
    assert!(svg.len() < 2_000_000, "{} bytes", svg.len());
    // More ranks than rows: buckets of two, each coloured by its hottest rank.
    let svg = render(&map(2048, 8, 701));
    let cells = fills(&svg);
    assert_eq!(cells.len(), 1024 * 8);
    let hot: Vec<_> = cells.iter().filter(|c| c.2 == "#d73027").collect();
    assert_eq!(hot.len(), 6);
    assert!(hot.iter().all(|c| c.0 == "rank 700"));
}
