//! The before/after comparison (`compare::Comparison`) as a [`Document`]: is the
//! difference real, was the predicted gain realized, and where the time went, row by row.
//! The comparison itself is the `compare` crate's; this module only words it.

use std::path::Path;

use compare::{
    Change, Comparison, NamedRow, NotComparable, Outcome, Presence, Row, SampleStat, StreamPart,
    Which,
};
use trace_model::{Nanos, Provenance};

use crate::doc::{Block, Cell, Document, Finding, Section, Span, Table};
use crate::label::{Figure, Value};
use crate::measured;

/// Rows of the kernel and op tables (every added, removed or renamed one is kept too).
pub const TOP_ROWS: usize = 40;

const DIAGNOSIS: &str = "the investigation's diagnosis of the side's capture (analysis::diagnose): a judgement from its measured budgets, idle-time causes and step sides";
const PREDICTED: &str = "the cause's time inside the before side's analysed window ÷ its steady-state steps: the step would shrink by that much if the cause went away and the rest of the step stayed as it is";
const REALIZED_SHARE: &str = "realized step gain ÷ the prediction for the change that happened (the replayed gain, else the subtraction, × the share of the cause's time that went away); given only where this cause moved most and every other cause moved by at most a tenth of that";
const REPLAYED: &str = "the before capture's dependency graph replayed without the cause: the unchanged replay's mean steady-state step minus the mean step without it";
const FOR_CHANGE: &str = "the replayed gain (else the subtraction) × the share of the cause's time that went away (the gain assumed to scale with it)";

/// The labels of a row's figures: each side's (`read` for a side read from an
/// investigate report.json, naming the file; `measured` for a capture), and the one of a
/// difference of the two (`read` when either side's figures were read).
struct Labels {
    before: Provenance,
    after: Provenance,
    both: Provenance,
}

impl Labels {
    /// Figures of two captures.
    fn measured() -> Labels {
        Labels {
            before: Provenance::Measured,
            after: Provenance::Measured,
            both: Provenance::Measured,
        }
    }

    /// The step figures of the comparison's two sides.
    fn of_steps(c: &Comparison) -> Labels {
        let of = |side: &compare::Side| side_label(side);
        let read: Vec<String> = [&c.before, &c.after]
            .iter()
            .filter(|s| s.from_report)
            .map(|s| s.label.clone())
            .collect();
        Labels {
            before: of(&c.before),
            after: of(&c.after),
            both: if read.is_empty() {
                Provenance::Measured
            } else {
                Provenance::read(format!(
                    "the step figures of investigate report.json {} (the rest measured)",
                    read.join(" and ")
                ))
            },
        }
    }
}

/// `read` (naming the file) for a side read from an investigate report.json: its figures
/// were stated there, not measured here; else `measured`.
fn side_label(side: &compare::Side) -> Provenance {
    if side.from_report {
        Provenance::read(format!("investigate report.json {}", side.label))
    } else {
        Provenance::Measured
    }
}

/// The report of a comparison.
pub fn document(c: &Comparison) -> Document {
    let mut doc = Document::new(format!(
        "Comparison of {} (before) and {} (after)",
        file_name(&c.before.label),
        file_name(&c.after.label)
    ));
    doc.subtitle.push(format!("before: {}", c.before.label));
    doc.subtitle.push(format!("after: {}", c.after.label));
    doc.subtitle.push(format!(
        "noise rule: a row changes only when its difference of medians exceeds the larger side's spread, max(IQR over steady-state steps, {:.0} % of the median); every figure is labelled measured, read or inferred",
        100.0 * c.config.median_floor
    ));
    doc.findings.push(verdict_finding(c));
    if let Some(f) = prediction_finding(c) {
        doc.findings.push(f);
    }
    doc.sections.push(sides_section(c));
    doc.sections.push(causes_section(c));
    doc.sections.push(swimlanes_section(c));
    let mut budgets = Section::new("budgets", "4. Per-stream budget per step");
    budgets.push(Block::Table(keyed_rows_table(
        "budgets",
        "stream: part",
        &c.budgets,
        stream_part_text,
        &Labels::measured(),
    )));
    if let Some(svg) = budget_delta_chart(&c.budgets) {
        budgets.push(Block::Svg {
            caption:
                "Change of each stream's budget parts per step (after − before, medians; measured)"
                    .to_owned(),
            svg,
        });
    }
    doc.sections.push(budgets);
    let mut classes = Section::new("classes", "5. GPU time per kernel class per step");
    classes.push(Block::Table(rows_table(
        "classes",
        "class",
        &c.classes,
        &Labels::measured(),
    )));
    doc.sections.push(classes);
    let mut kernels = Section::new("kernels", "6. Kernels (by normalised name)");
    kernels.push(Block::Table(named_table("kernels", "kernel", &c.kernels)));
    doc.sections.push(kernels);
    let mut ops = Section::new("ops", "7. CPU ops and Python lines");
    ops.push(Block::Table(named_table("ops", "op", &c.ops)));
    if c.python_lines.is_empty() {
        ops.para("Python lines: not compared (a side has no Python stacks: capture with with_stack=True).");
    } else {
        ops.push(Block::Table(named_table(
            "python_lines",
            "Python line",
            &c.python_lines,
        )));
    }
    doc.sections.push(ops);
    doc.sections.push(op_kernels_section(c));
    doc.sections.push(first_step_section(c));
    doc
}

/// Each side's median steady-state step, before above after, on one time axis from the
/// step's start.
fn swimlanes_section(c: &Comparison) -> Section {
    use crate::swimlane::{Chart, Lane, LaneKind, Slice};
    let mut s = Section::new(
        "swimlanes",
        "3. Swimlanes of the median step, before above after",
    );
    let sides = [
        ("before", &c.before.median_step),
        ("after", &c.after.median_step),
    ];
    let mut lanes = Vec::new();
    let mut names = Vec::new();
    let mut end = 0;
    for (name, step) in sides {
        let Some(step) = step else { continue };
        end = end.max(step.duration.0);
        for l in &step.lanes {
            let lane = Lane {
                rank: None,
                kind: LaneKind::Gpu {
                    gpu: l.gpu,
                    stream: l.stream,
                },
                critical: l.critical,
                last_to_finish: false,
                slices: l
                    .slices
                    .iter()
                    .map(|(start, end, class, title)| Slice {
                        start: start.0,
                        end: end.0,
                        class: (*class).to_owned(),
                        name: title.clone(),
                        dur: *end - *start,
                        op: None,
                    })
                    .collect(),
            };
            names.push(format!(
                "{name} #{} {}",
                step.number,
                crate::swimlane::lane_label(&lane)
            ));
            lanes.push(lane);
        }
    }
    if lanes.is_empty() {
        s.para(
            "Neither side has a step with GPU activity to draw (a report.json side keeps none).",
        );
        return s;
    }
    let mut line = vec![Span::text(
        "The median steady-state step of each side's first capture (",
    )];
    for (i, (name, st)) in sides
        .iter()
        .filter_map(|(name, step)| step.as_ref().map(|st| (name, st)))
        .enumerate()
    {
        if i > 0 {
            line.push(Span::text("; "));
        }
        line.extend([
            Span::text(format!("{name}: step {} (", st.number)),
            Span::Figure(measured::duration(st.duration)),
            Span::text(")"),
        ]);
    }
    line.push(Span::text(
        "), its GPU streams drawn from the step's start, on one time scale: what got shorter, and where the idle gaps went. Kernels are coloured by class; the bare row background is idle time.",
    ));
    s.push(Block::Paragraph(line));
    s.push(Block::Svg {
        caption: "Median steps, before above after".to_owned(),
        svg: crate::swimlane::render_named(
            &Chart {
                start: 0,
                end,
                lanes,
            },
            &names,
        ),
    });
    s
}

/// A horizontal bar per budget row that changed by more than nothing: after − before of
/// the medians, to the left when it went down; `None` without such rows.
fn budget_delta_chart(rows: &[Row<StreamPart>]) -> Option<String> {
    use std::fmt::Write as _;
    let rows: Vec<&Row<StreamPart>> = rows.iter().filter(|r| r.delta.0 != 0).collect();
    let largest = rows.iter().map(|r| r.delta.0.abs()).max()?;
    let (label_w, half, row_h) = (260.0, 220.0, 18.0);
    let width = label_w + 2.0 * half + 90.0;
    let height = row_h * rows.len() as f64 + 10.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"budget-deltas\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"11\">"
    );
    let mid = label_w + half;
    for (i, r) in rows.iter().enumerate() {
        let key = crate::html::esc(&stream_part_text(&r.key));
        let y = 5.0 + row_h * i as f64;
        let w = half * r.delta.0.abs() as f64 / largest as f64;
        let x = if r.delta.0 < 0 { mid - w } else { mid };
        let colour = match r.change {
            Change::Lower => "#2e7d32",
            Change::Higher => "#c62828",
            Change::None => "#9e9e9e",
        };
        let sign = if r.delta.0 < 0 { "−" } else { "+" };
        let _ = write!(
            svg,
            "<text x=\"4\" y=\"{:.1}\">{}</text><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"{colour}\"><title>{}: {sign}{} ({})</title></rect><text x=\"{:.1}\" y=\"{:.1}\">{sign}{}</text>",
            y + 12.0,
            key,
            row_h - 4.0,
            key,
            Nanos(r.delta.0.abs()).human(),
            r.change.describe(),
            mid + half + 6.0,
            y + 12.0,
            Nanos(r.delta.0.abs()).human(),
        );
    }
    let _ = write!(
        svg,
        "<line x1=\"{mid}\" y1=\"0\" x2=\"{mid}\" y2=\"{height}\" stroke=\"#444\"/></svg>"
    );
    Some(svg)
}

/// Ops on both sides whose kernels differ: which kernel replaced which, with the op and
/// its shapes as the evidence (what TraceLens compares per op row).
fn op_kernels_section(c: &Comparison) -> Section {
    let mut s = Section::new("op_kernels", "8. Kernels replaced under the same op");
    if c.op_kernels.is_empty() {
        s.para("No op found on both sides launched other kernels after than before.");
        return s;
    }
    let mut t = Table::new(
        "op_kernels",
        &[
            "op",
            "count before",
            "count after",
            "kernels before",
            "kernels after",
        ],
    );
    // Each kernel by name with its instances and GPU time, as labelled figures.
    let kernels = |list: &[(String, compare::KernelUse)]| {
        let mut spans = Vec::new();
        for (i, (name, used)) in list.iter().enumerate() {
            if i > 0 {
                spans.push(Span::text("; "));
            }
            spans.extend([
                Span::code(short_name(name)),
                Span::text(" ×"),
                Span::Figure(measured::count(used.count)),
                Span::text(" ("),
                Span::Figure(measured::duration(used.time)),
                Span::text(")"),
            ]);
        }
        Cell::Spans(spans)
    };
    for r in c.op_kernels.iter().take(TOP_ROWS) {
        t.push(vec![
            Cell::code(r.op.clone()),
            Cell::figure(Figure::count(r.count[0], Provenance::Measured)),
            Cell::figure(Figure::count(r.count[1], Provenance::Measured)),
            kernels(&r.kernels[0]),
            kernels(&r.kernels[1]),
        ]);
    }
    s.push(Block::Table(t.with_note_spans(vec![
        Span::text("An op (by name and input shapes, when both sides recorded shapes) on both sides, launching at most 4 kernels on each, and not the same ones: the kernels its instances launched, by normalised name, with their instances and GPU time over the steady-state steps. Of an op and the op inside it that launched the very same kernels, only the outer one is listed. Most time first; "),
        Span::Figure(measured::count(c.op_kernels.len().min(TOP_ROWS))),
        Span::text(" of "),
        Span::Figure(measured::count(c.op_kernels.len())),
        Span::text(format!(" rows shown; long kernel names are cut at {SHORT_NAME} characters (section 6 lists them whole).")),
    ])));
    s
}

/// Longest kernel name a table cell shows.
const SHORT_NAME: usize = 60;

fn short_name(name: &str) -> String {
    match name.char_indices().nth(SHORT_NAME) {
        Some((cut, _)) => format!("{}…", &name[..cut]),
        None => name.to_owned(),
    }
}

/// Every event of the first step by name, as Holistic Trace Analysis' `TraceDiff`
/// compares one iteration of one rank.
fn first_step_section(c: &Comparison) -> Section {
    let mut s = Section::new("first_step", "9. First step, every event by name");
    let (Some((b, _)), Some((a, _))) = (&c.before.first_step, &c.after.first_step) else {
        s.para("A side has no steps in its capture: no first step to compare.");
        return s;
    };
    let mut t = Table::new(
        "first_step",
        &[
            "name",
            "count before",
            "count after",
            "total before",
            "total after",
            "difference",
        ],
    );
    let us = |n: i64| Cell::figure(duration(Nanos(n * 1000), Provenance::Measured));
    for r in c.first_step_names.iter().take(TOP_ROWS) {
        t.push(vec![
            Cell::code(r.name.clone()),
            Cell::figure(Figure::count(r.count[0], Provenance::Measured)),
            Cell::figure(Figure::count(r.count[1], Provenance::Measured)),
            us(r.total_us[0]),
            us(r.total_us[1]),
            us(r.total_us[1] - r.total_us[0]),
        ]);
    }
    s.push(Block::Table(t.with_note_spans(vec![
        Span::text(format!("Step {b} before and step {a} after, of the first capture of each side: host events starting in the step, GPU work launched from it, each event's time rounded inward to whole microseconds (as Holistic Trace Analysis' TraceDiff counts them). Largest change of total time first; ")),
        Span::Figure(measured::count(c.first_step_names.len().min(TOP_ROWS))),
        Span::text(" of "),
        Span::Figure(measured::count(c.first_step_names.len())),
        Span::text(" names shown."),
    ])));
    s
}

fn file_name(p: &str) -> String {
    Path::new(p)
        .file_name()
        .map_or_else(|| p.to_owned(), |n| n.to_string_lossy().into_owned())
}

fn duration(n: Nanos, label: Provenance) -> Figure {
    Figure::duration(n, label)
}

/// A median with its interquartile range.
fn median(s: &SampleStat, label: Provenance) -> Cell {
    Cell::figure(
        Figure::duration(s.median, label)
            .with_range(Value::Duration(s.q1.0), Value::Duration(s.q3.0)),
    )
}

fn verdict_finding(c: &Comparison) -> Finding {
    let s = &c.step_time;
    let labels = Labels::of_steps(c);
    let mut spans = vec![Span::text("Median steady-state step: ")];
    spans.push(Span::Figure(duration(
        s.before.median,
        labels.before.clone(),
    )));
    spans.push(Span::text(" before, "));
    spans.push(Span::Figure(duration(s.after.median, labels.after.clone())));
    spans.push(Span::text(" after (difference "));
    spans.push(Span::Figure(duration(s.delta, labels.both.clone())));
    spans.push(Span::text(", noise "));
    spans.push(Span::Figure(duration(s.noise, labels.both)));
    let samples = |n: usize, label: Provenance| {
        Span::Figure(Figure::count(u64::try_from(n).unwrap_or(u64::MAX), label))
    };
    spans.push(Span::text(", over "));
    spans.push(samples(s.before.samples, labels.before));
    spans.push(Span::text(" and "));
    spans.push(samples(s.after.samples, labels.after));
    spans.push(Span::text(" step sample(s)). "));
    spans.push(Span::text(match &c.verdict {
        Outcome::Faster => "Verdict: faster.".to_owned(),
        Outcome::Slower => "Verdict: slower.".to_owned(),
        Outcome::NoChange => "Verdict: no change beyond noise.".to_owned(),
        Outcome::Inconclusive(reasons) => format!(
            "Verdict: inconclusive: {}.",
            reasons
                .iter()
                .map(not_comparable_text)
                .collect::<Vec<_>>()
                .join("; ")
        ),
    }));
    Finding::new(spans)
}

fn prediction_finding(c: &Comparison) -> Option<Finding> {
    let (key, b, a) = c.moved_most.filter(|m| m.1 != m.2)?;
    let mut spans = vec![Span::text(format!(
        "The cause that moved most: {} ({}), from ",
        key.describe(),
        key.code()
    ))];
    spans.push(Span::Figure(duration(b, Provenance::inferred(PREDICTED))));
    spans.push(Span::text(" to "));
    spans.push(Span::Figure(duration(a, Provenance::inferred(PREDICTED))));
    spans.push(Span::text(
        " per step; the realized step gain (median step before − after) is ",
    ));
    spans.push(Span::Figure(duration(
        c.realized_gain,
        Labels::of_steps(c).both,
    )));
    match c.causes.iter().find(|r| r.key == key) {
        Some(row) => {
            if let Some(p) = row.predicted_for_change {
                spans.push(Span::text(", predicted for that change "));
                spans.push(Span::Figure(duration(p, Provenance::inferred(FOR_CHANGE))));
                match row.replayed_gain {
                    Some(_) => {
                        spans.push(Span::text(" (from the before capture's replay, error "));
                        spans.push(match row.replay_error {
                            Some(e) => {
                                Span::Figure(Figure::percent(100.0 * e, replay_error_label()))
                            }
                            None => Span::text("unknown"),
                        });
                        spans.push(Span::text(")"));
                    }
                    None => spans.push(Span::text(" (by subtraction)")),
                }
            }
            match row.realized_share {
                Some(r) => {
                    spans.push(Span::text("; realized ÷ predicted "));
                    spans.push(Span::Figure(Figure::ratio(
                        r,
                        Provenance::inferred(REALIZED_SHARE),
                    )));
                    spans.push(Span::text("."));
                }
                None => spans.push(Span::text(
                    "; no ratio: the sides are not comparable, the cause did not go down, or other causes moved too.",
                )),
            }
        }
        None => spans.push(Span::text(
            "; the before side did not rank it, so nothing was predicted for it.",
        )),
    }
    if let Some((key, t)) = c.leading_after {
        spans.push(Span::text(format!(
            " Leading cause after: {} (",
            key.describe()
        )));
        spans.push(Span::Figure(duration(t, Provenance::inferred(PREDICTED))));
        spans.push(Span::text(" per step)."));
    }
    Some(Finding::new(spans))
}

fn sides_section(c: &Comparison) -> Section {
    let mut s = Section::new("difference", "1. Is the difference real?");
    let mut t = Table::new(
        "sides",
        &[
            "side",
            "input",
            "format",
            "GPU models",
            "captures",
            "steps",
            "steady-state steps",
            "verdict",
        ],
    );
    for (name, side) in [("before", &c.before), ("after", &c.after)] {
        t.push(vec![
            Cell::text(name),
            Cell::code(side.label.clone()),
            Cell::text(if side.from_report {
                // Any other schema is refused when the file is read.
                format!(
                    "investigate report.json (schema {}): step figures and ranked causes only",
                    investigation::SCHEMA
                )
            } else {
                side.format.clone()
            }),
            Cell::text(if side.gpu_models.is_empty() {
                "not recorded".to_owned()
            } else {
                side.gpu_models.join(", ")
            }),
            Cell::figure(Figure::count(side.captures as u64, side_label(side))),
            Cell::text(origin_text(side.step_origin.as_ref())),
            Cell::figure(Figure::count(side.steady_steps as u64, side_label(side))),
            side.diagnosis
                .as_ref()
                .map_or(Cell::text("not recorded"), |d| {
                    Cell::figure_text(&d.code(), Provenance::inferred(DIAGNOSIS))
                }),
        ]);
    }
    s.push(Block::Table(t.with_note(
        "GPU models are read from the captures' device properties. Verdict: what bounds each side's step, as the investigation of its first capture diagnoses it (for a rank directory, the first rank).",
    )));
    for (name, side) in [("before", &c.before), ("after", &c.after)] {
        if let Some(d) = &side.diagnosis {
            s.para(format!(
                "Verdict {name} ({}, inferred): {}.",
                d.code(),
                d.describe()
            ));
        }
    }
    s.push(Block::Table(rows_table(
        "step_time",
        "figure",
        std::slice::from_ref(&c.step_time),
        &Labels::of_steps(c),
    )));
    if let Outcome::Inconclusive(reasons) = &c.verdict {
        s.para("Inconclusive: the sides are not comparable, because");
        s.push(Block::List(
            reasons
                .iter()
                .map(|r| vec![Span::text(not_comparable_text(r))])
                .collect(),
        ));
    }
    let mut overlap = vec![Span::text("Kernel time in kernels both sides run: ")];
    overlap.push(Span::Figure(Figure::percent(
        100.0 * c.kernel_overlap[0],
        Provenance::Measured,
    )));
    overlap.push(Span::text(" of before's, "));
    overlap.push(Span::Figure(Figure::percent(
        100.0 * c.kernel_overlap[1],
        Provenance::Measured,
    )));
    overlap.push(Span::text(" of after's (renames counted)."));
    s.push(Block::Paragraph(overlap));
    s
}

fn causes_section(c: &Comparison) -> Section {
    let mut s = Section::new("predicted", "2. Predicted against realized, per cause");
    let mut t = Table::new(
        "causes",
        &[
            "cause",
            "key",
            "predicted gain per step (subtraction)",
            "predicted gain per step (replayed)",
            "replay error (before)",
            "time per step after",
            "cause's change per step",
            "predicted for that change",
            "realized step gain",
            "realized ÷ predicted",
        ],
    );
    for r in &c.causes {
        t.push(vec![
            Cell::text(r.key.describe()),
            Cell::code(r.key.code()),
            Cell::figure(duration(r.predicted_gain, Provenance::inferred(PREDICTED))),
            r.replayed_gain.map_or_else(
                || r.replay_note.as_ref().map_or(Cell::Empty, no_replay_cell),
                |g| Cell::figure(duration(g, Provenance::inferred(REPLAYED))),
            ),
            r.replay_error.map_or(Cell::Empty, |e| {
                Cell::figure(Figure::percent(100.0 * e, replay_error_label()))
            }),
            r.after.map_or(Cell::Empty, |a| {
                Cell::figure(duration(a, Provenance::inferred(PREDICTED)))
            }),
            r.cause_change.map_or(Cell::Empty, |d| {
                Cell::figure(duration(d, Provenance::inferred(PREDICTED)))
            }),
            r.predicted_for_change.map_or(Cell::Empty, |p| {
                Cell::figure(duration(p, Provenance::inferred(FOR_CHANGE)))
            }),
            Cell::figure(duration(c.realized_gain, Labels::of_steps(c).both)),
            r.realized_share.map_or(Cell::Empty, |x| {
                Cell::figure(Figure::ratio(x, Provenance::inferred(REALIZED_SHARE)))
            }),
        ]);
    }
    s.push(Block::Table(t.with_note(
        "Causes are matched by key, not by their wording. The realized gain is the before median step minus the after median step; causes overlap, so their predictions are alternatives, not a sum. The predicted gain is stated twice: by subtraction (the cause's time per step) and by replaying the before capture's dependency graph without the cause (with the replay's error on the unchanged capture). A ratio is given only for the cause whose change the step's change can be credited to (it moved most, the others by at most a tenth of that) and only against the prediction for the change that happened; it is left empty otherwise, or when the sides are not comparable.",
    )));
    s
}

fn change_cell(change: Change) -> Cell {
    Cell::text(change.describe())
}

fn rows_table(name: &str, what: &str, rows: &[Row], labels: &Labels) -> Table {
    keyed_rows_table(name, what, rows, String::clone, labels)
}

/// A table of rows, each keyed in the words `key` gives.
fn keyed_rows_table<K>(
    name: &str,
    what: &str,
    rows: &[Row<K>],
    key: impl Fn(&K) -> String,
    labels: &Labels,
) -> Table {
    let mut t = Table::new(
        name,
        &[
            what,
            "before (median, IQR)",
            "after (median, IQR)",
            "difference",
            "noise",
            "change",
        ],
    );
    for r in rows {
        t.push(row_cells(Cell::text(key(&r.key)), r, labels));
    }
    t.with_note(
        "Per steady-state step of every rank; noise is the larger side's max(IQR, 1 % of the median).",
    )
}

fn row_cells<K>(first: Cell, r: &Row<K>, labels: &Labels) -> Vec<Cell> {
    vec![
        first,
        median(&r.before, labels.before.clone()),
        median(&r.after, labels.after.clone()),
        Cell::figure(duration(r.delta, labels.both.clone())),
        Cell::figure(duration(r.noise, labels.both.clone())),
        change_cell(r.change),
    ]
}

fn named_table(name: &str, what: &str, rows: &[NamedRow]) -> Table {
    let mut t = Table::new(
        name,
        &[
            what,
            "class",
            "found",
            "count before",
            "count after",
            "total before",
            "total after",
            "before per step (median, IQR)",
            "after per step (median, IQR)",
            "difference",
            "noise",
            "change",
        ],
    );
    let mut left_out = 0;
    for (i, r) in rows.iter().enumerate() {
        if i >= TOP_ROWS && r.presence == Presence::Both {
            left_out += 1;
            continue;
        }
        let found = match &r.presence {
            Presence::Both => "both".to_owned(),
            Presence::Removed => "removed".to_owned(),
            Presence::Added => "added".to_owned(),
            Presence::RenamedTo(to) => format!("renamed to {to}"),
        };
        let mut cells = vec![
            Cell::code(r.row.key.clone()),
            Cell::text(r.class),
            Cell::text(found),
            Cell::figure(Figure::count(r.count[0], Provenance::Measured)),
            Cell::figure(Figure::count(r.count[1], Provenance::Measured)),
            Cell::figure(duration(r.total[0], Provenance::Measured)),
            Cell::figure(duration(r.total[1], Provenance::Measured)),
        ];
        cells.extend(
            row_cells(Cell::Empty, &r.row, &Labels::measured())
                .into_iter()
                .skip(1),
        );
        t.push(cells);
    }
    t.with_note_spans(vec![
        Span::text("Most time first; totals over the steady-state steps of every rank. "),
        Span::Figure(measured::count(left_out)),
        Span::text(format!(
            " more row(s) found on both sides, below the top {TOP_ROWS}, are left out."
        )),
    ])
}

/// The label of a replay's error on the unchanged before capture.
fn replay_error_label() -> Provenance {
    Provenance::inferred("the unchanged replay's median absolute step error")
}

/// Why a cause has no replayed gain, in a cell.
fn no_replay_cell(note: &compare::NoReplay) -> Cell {
    match note {
        compare::NoReplay::NoScenario { reason } => Cell::text(format!(
            "no scenario: {}",
            crate::investigate::no_scenario_text(*reason)
        )),
        compare::NoReplay::CannotReplay { reason } => {
            let mut spans = vec![Span::text("cannot replay: ")];
            spans.extend(crate::investigate::cannot_replay_spans(reason));
            Cell::Spans(spans)
        }
        compare::NoReplay::FromReport => {
            Cell::text("not replayed: the before side is a report.json")
        }
        compare::NoReplay::NotReplayed => Cell::text("not replayed"),
    }
}

/// A budget row's stream and part in words: `rank R GPU #P stream S: part`, P the GPU's
/// position in its capture (rank left out for one-capture sides), S `7 → 20` when the
/// matched streams have different numbers.
fn stream_part_text(at: &StreamPart) -> String {
    let stream = match at.stream {
        [Some(b), Some(a)] if a != b => format!("{b} → {a}"),
        [Some(x), _] | [None, Some(x)] => x.to_string(),
        [None, None] => "?".to_owned(),
    };
    let (gpu, part) = (at.gpu, at.part);
    match at.rank {
        Some(r) => format!("rank {r} GPU #{gpu} stream {stream}: {part}"),
        None => format!("GPU #{gpu} stream {stream}: {part}"),
    }
}

/// A side's name in words.
fn which_text(side: Which) -> &'static str {
    match side {
        Which::Before => "before",
        Which::After => "after",
    }
}

/// What found a side's steps, in words (empty when not recorded).
fn origin_text(origin: Option<&investigation::StepsOrigin>) -> String {
    origin.map_or_else(String::new, crate::investigate::steps_origin_text)
}

/// GPU models or vendors, sorted, as counts: `2 × NVIDIA H100, 1 × …`.
fn models(sorted: &[String]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let n = sorted[i..].iter().take_while(|m| **m == sorted[i]).count();
        out.push(format!("{n} × {}", sorted[i]));
        i += n;
    }
    out.join(", ")
}

/// Why the sides are not comparable, in words.
pub fn not_comparable_text(reason: &NotComparable) -> String {
    match reason {
        NotComparable::NoSteps { side, origin } => format!(
            "the {} side has no steps (steps: {})",
            which_text(*side),
            origin_text(origin.as_ref())
        ),
        NotComparable::TooFewSteps {
            side,
            steps,
            needed,
        } => format!(
            "the {} side has {steps} steady-state step(s); at least {needed} are needed for a spread",
            which_text(*side)
        ),
        NotComparable::GpuModels { before, after } => format!(
            "different GPU models: {} before, {} after",
            models(before),
            models(after)
        ),
        NotComparable::GpuVendors { before, after } => format!(
            "different GPU vendors: {} before, {} after",
            models(before),
            models(after)
        ),
        NotComparable::GpuCounts { before, after } => {
            format!("different GPU counts: {before} before, {after} after")
        }
        NotComparable::StepCounts { before, after } => format!(
            "steady-state step counts differ by more than {}×: {before} before, {after} after (the steps are not the same unit of work)",
            compare::STEP_COUNT_FACTOR
        ),
        NotComparable::StepDefinitions { before, after } => format!(
            "different step definitions: {} before, {} after",
            origin_text(before.as_ref()),
            origin_text(after.as_ref())
        ),
        NotComparable::KernelOverlap {
            side,
            share,
            needed,
        } => format!(
            "only {:.0} % of the {} side's kernel time is in kernels the other side runs too (at least {:.0} % expected of the same work)",
            100.0 * share,
            which_text(*side),
            100.0 * needed
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each reason the sides are not comparable, in the words compare's verdict gives
    /// (the reasons were compare's sentences before they were typed).
    #[test]
    fn each_reason_is_worded() {
        let per_gpu = investigation::StepsOrigin {
            origin: analysis::StepOrigin::StepMarker,
            per_gpu: Some(investigation::PerGpuSteps {
                figures: 1,
                gpus: vec![
                    investigation::GpuSteps {
                        gpu: 0,
                        steps: 3,
                        median: Nanos(2_000_000),
                    },
                    investigation::GpuSteps {
                        gpu: 1,
                        steps: 4,
                        median: Nanos(2_500_000),
                    },
                ],
            }),
        };
        let whole = investigation::StepsOrigin::default();
        let check = |reason: NotComparable, expect: &str| {
            assert_eq!(not_comparable_text(&reason), expect);
        };
        check(
            NotComparable::NoSteps {
                side: Which::After,
                origin: Some(whole),
            },
            "the after side has no steps (steps: none found: the whole capture is one step)",
        );
        check(
            NotComparable::TooFewSteps {
                side: Which::Before,
                steps: 2,
                needed: 3,
            },
            "the before side has 2 steady-state step(s); at least 3 are needed for a spread",
        );
        check(
            NotComparable::GpuModels {
                before: vec!["H100".to_owned(), "H100".to_owned()],
                after: vec!["A100".to_owned(), "H100".to_owned()],
            },
            "different GPU models: 2 × H100 before, 1 × A100, 1 × H100 after",
        );
        check(
            NotComparable::GpuVendors {
                before: vec!["NVIDIA".to_owned()],
                after: vec!["AMD".to_owned()],
            },
            "different GPU vendors: 1 × NVIDIA before, 1 × AMD after",
        );
        check(
            NotComparable::GpuCounts {
                before: 1,
                after: 8,
            },
            "different GPU counts: 1 before, 8 after",
        );
        check(
            NotComparable::StepCounts {
                before: 5,
                after: 160,
            },
            "steady-state step counts differ by more than 4×: 5 before, 160 after (the steps are not the same unit of work)",
        );
        check(
            NotComparable::StepDefinitions {
                before: Some(per_gpu),
                after: Some(investigation::StepsOrigin {
                    origin: analysis::StepOrigin::ProfilerStep,
                    per_gpu: None,
                }),
            },
            "different step definitions: step markers (step_num); the figures are GPU 1's own steps, not their union over the GPUs (per GPU: GPU 0 3 step(s), median 2.00 ms; GPU 1 4 step(s), median 2.50 ms) before, ProfilerStep#N annotations after",
        );
        check(
            NotComparable::KernelOverlap {
                side: Which::After,
                share: 0.2,
                needed: 0.5,
            },
            "only 20 % of the after side's kernel time is in kernels the other side runs too (at least 50 % expected of the same work)",
        );
    }

    /// A side of `step_ms` steps, read from a report.json when `from_report`.
    fn side(path: &str, step_ms: &[i64], from_report: bool) -> compare::Side {
        let mut s = compare::Side::empty(Path::new(path));
        s.from_report = from_report;
        s.captures = 1;
        s.has_steps = true;
        s.steady_steps = step_ms.len();
        s.step_time = step_ms.iter().map(|ms| Nanos(ms * 1_000_000)).collect();
        s
    }

    fn labels_of(spans: &[Span]) -> Vec<Provenance> {
        spans
            .iter()
            .filter_map(|s| match s {
                Span::Figure(f) => Some(f.label.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn figures_from_a_report_json_are_labelled_read_with_the_file() {
        let before = side("/runs/last-week/report.json", &[100, 101, 102, 100], true);
        let after = side("/runs/today/rank0.json", &[80, 81, 80, 82], false);
        let c = compare::compare_sides(before, after, &compare::Config::default());
        let doc = document(&c);
        let verdict = labels_of(&doc.findings[0].spans);
        // Before (read), after (measured), difference and noise (read: one side was).
        assert!(
            matches!(&verdict[0], Provenance::Read { source } if source.contains("/runs/last-week/report.json")),
            "{verdict:?}"
        );
        assert_eq!(verdict[1], Provenance::Measured);
        assert!(
            matches!(&verdict[2], Provenance::Read { .. }),
            "{verdict:?}"
        );
        // The sides table: the report side's counts are read, the capture's measured.
        let Some(Block::Table(sides)) = doc.sections[0].blocks.first() else {
            panic!("the sides table comes first");
        };
        let label = |row: usize, col: usize| match &sides.rows[row][col] {
            Cell::Figure(f) => f.label.clone(),
            other => panic!("{other:?}"),
        };
        assert!(matches!(label(0, 4), Provenance::Read { .. }));
        assert_eq!(label(1, 4), Provenance::Measured);

        // Two captures: every step figure measured.
        let c = compare::compare_sides(
            side("a.json", &[100, 101], false),
            side("b.json", &[90, 91], false),
            &compare::Config::default(),
        );
        let verdict = labels_of(&document(&c).findings[0].spans);
        assert!(
            verdict.iter().all(|l| *l == Provenance::Measured),
            "{verdict:?}"
        );
    }
}
