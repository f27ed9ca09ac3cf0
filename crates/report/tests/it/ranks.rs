//! investigate on synthetic rank directories (`test_support::synth_ranks`, what
//! `cargo xtask synth-ranks` writes): the report finds what was planted (the straggler,
//! its first step and its delay, every clock offset), the heat map is hottest on the
//! straggler's late steps, steps 3 to 6 describe the straggler, and `rows.csv` is the one
//! skip-stats writes for the directory.

use investigation::{Run, investigate};
use report::{Block, Cell, Document, Figure, Value};
use test_support::synth_ranks::{COMPUTE_JITTER_NS, END_JITTER_NS, Job};

/// An investigation and its document.
struct Investigated {
    run: Run,
    document: Document,
}

/// A written job and its investigation.
fn investigated(ranks: usize, mb: f64, seed: u64) -> (Job, Investigated, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let job = Job::plan(ranks, mb, seed);
    job.write_into(dir.path());
    let run = investigate(dir.path(), &Default::default()).expect("investigates");
    let document = report::investigate::document(&run.investigation);
    (job, Investigated { run, document }, dir)
}

fn table<'a>(doc: &'a Document, name: &str) -> &'a report::Table {
    doc.sections
        .iter()
        .find_map(|s| s.table(name))
        .unwrap_or_else(|| panic!("no table {name}"))
}

fn nanos(c: &Cell) -> Option<i64> {
    match c {
        Cell::Figure(Figure {
            value: Value::Duration(d),
            ..
        }) => Some(*d),
        _ => None,
    }
}

fn text(c: &Cell) -> String {
    match c {
        Cell::Text(t) | Cell::Code(t) => t.clone(),
        Cell::Empty => String::new(),
        other => panic!("not text: {other:?}"),
    }
}

/// The (rank, step, fill) of every heat-map cell.
fn heat_cells(doc: &Document) -> Vec<(String, i64, String)> {
    let svg = doc
        .sections
        .iter()
        .flat_map(|s| &s.blocks)
        .find_map(|b| match b {
            Block::Svg { svg, .. } if svg.contains("class=\"heatmap\"") => Some(svg),
            _ => None,
        })
        .expect("the heat map");
    crate::heatmap::fills(svg)
        .into_iter()
        .map(|(rank, step, fill)| (rank, step.parse().expect("a step"), fill))
        .collect()
}

/// How red a `#rrggbb` fill is: its red over its blue channel (0 for white or blue).
fn redness(fill: &str) -> i64 {
    let c = |i: usize| i64::from_str_radix(&fill[i..i + 2], 16).expect("hex");
    (c(1) - c(5)).max(0)
}

#[test]
fn a_rank_directory_gives_the_planted_straggler_and_offsets() {
    for (ranks, mb, seed) in [(32, 0.05, 1), (64, 0.02, 5)] {
        let (job, inv, _dir) = investigated(ranks, mb, seed);
        let doc = &inv.document;
        let what = format!("{ranks} ranks, seed {seed}");
        let t = table(doc, "ranks");
        assert_eq!(t.rows.len(), ranks, "{what}");
        let col = |name: &str| t.columns.iter().position(|c| c == name).expect(name);
        let (offset, from, by) = (col("clock offset"), col("late from step"), col("late by"));
        for (r, row) in t.rows.iter().enumerate() {
            assert_eq!(text(&row[0]), format!("rank {r}"), "{what}");
            let got = nanos(&row[offset]).expect("an offset");
            assert!(
                (got - job.offsets_ns[r]).abs() <= 5_000,
                "{what}: rank {r}: offset {got} ns, planted {} ns",
                job.offsets_ns[r]
            );
            if r == job.straggler_rank {
                assert_eq!(text(&row[from]), job.straggler_step.to_string(), "{what}");
                let late = nanos(&row[by]).expect("late by");
                assert!(
                    (late - job.straggler_delay_ns).abs() <= COMPUTE_JITTER_NS + END_JITTER_NS,
                    "{what}: late by {late} ns, planted {} ns",
                    job.straggler_delay_ns
                );
            } else {
                assert_eq!(text(&row[from]), "", "{what}: rank {r} is not late");
            }
        }
        // The straggler, where it turns late and for how many steps, and the rank steps 3
        // to 6 describe: on the typed value the sentences are written from.
        let value = &inv.run.investigation;
        let straggler = format!("rank {}", job.straggler_rank);
        let cross = &value.across_ranks.as_ref().expect("across ranks").cross;
        let [found] = cross.stragglers.as_slice() else {
            panic!("{what}: one straggler, got {:?}", cross.stragglers);
        };
        assert_eq!(found.rank, Some(job.straggler_rank as i64), "{what}");
        assert_eq!(found.first_step, job.straggler_step as i64, "{what}");
        assert_eq!(found.late_steps, job.steps - job.straggler_step, "{what}");
        assert_eq!(
            found.steps_from_first,
            job.steps - job.straggler_step,
            "{what}"
        );
        assert_eq!(
            value.drawn,
            Some(investigation::Drawn {
                who: investigation::Who::Rank(job.straggler_rank as i64),
                straggler: true
            }),
            "{what}"
        );
        assert_eq!(value.captures.len(), ranks, "{what}");
        let html = report::html::render(doc);
        assert!(
            html.contains(&format!("{straggler} GPU 0 stream")),
            "{what}: swimlanes"
        );
        // The heat map: one cell per rank and step; the reddest are the straggler's from
        // its first late step on, and no other cell is as red.
        let cells = heat_cells(doc);
        assert_eq!(cells.len(), ranks * job.steps, "{what}");
        let hottest = cells.iter().map(|c| redness(&c.2)).max().expect("cells");
        assert!(
            hottest > 100,
            "{what}: the hottest cell is pale ({hottest})"
        );
        for (rank, step, fill) in &cells {
            let late = *rank == straggler && *step >= job.straggler_step as i64;
            if late {
                assert!(
                    redness(fill) * 10 >= hottest * 9,
                    "{what}: {rank} step {step} {fill}"
                );
            } else {
                assert!(
                    redness(fill) * 2 < hottest,
                    "{what}: {rank} step {step} {fill}"
                );
            }
        }
        // The hottest cell of the heat map's value is the straggler's.
        let map = value
            .across_ranks
            .as_ref()
            .and_then(|a| a.heat_map.as_ref())
            .expect("a heat map");
        let (hot_row, _) = (0..map.rows.len())
            .flat_map(|r| (0..map.steps.len()).filter_map(move |c| map.ratio(r, c).map(|x| (r, x))))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .expect("heat-map cells");
        assert_eq!(
            map.rows[hot_row].rank,
            Some(job.straggler_rank as i64),
            "{what}"
        );
    }
}

/// The rows written a rank at a time are the bytes skip-stats writes for the directory
/// when it loads every rank at once.
#[test]
fn rows_csv_of_a_rank_directory_is_skip_stats_rows() {
    let (_, inv, dir) = investigated(6, 0.02, 3);
    let mut ours = Vec::new();
    inv.run.write_rows(&mut ours).expect("rows");
    let mut theirs = Vec::new();
    analysis::skip_stats(dir.path(), &analysis::SkipConfig::default(), &mut theirs)
        .expect("skip-stats");
    assert!(ours.len() > 1000);
    assert!(ours == theirs, "rows.csv differs");
    assert!(
        !report::investigate::files(&inv.run.investigation)
            .iter()
            .any(|(name, _)| name == "rows.csv")
    );
}
