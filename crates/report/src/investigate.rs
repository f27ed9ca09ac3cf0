//! The seven-step investigation, rendered: an [`investigation::Investigation`] as a
//! [`Document`] (findings first, then one section per step), and the report directory
//! `investigate --out` writes (report.md, report.html, report.json, one CSV per table,
//! rows.csv).
//!
//! Nothing here decides: the verdict, the checks, the ranked causes and their knobs, the
//! trust list and the rank drawn are the value's (the `investigation` crate); this module
//! words them and labels every number (measured, read, inferred with its assumptions).
//! `report.json` is the value itself ([`crate::report_json::write`]), so a report read
//! back renders the same pages.

use std::path::Path;

use investigation::{
    AttributionView, Change, Check, CheckKind, Investigation, Knob, LayoutHeavy, PracticeKind,
    PythonLine, RooflineView, Swimlanes, TrustItem, What,
};
use trace_model::{Nanos, Provenance};

use crate::doc::{Block, Cell, Document, Finding, Section, Span, Table, TrustEntry};
use crate::label::{Figure, Value};
use crate::swimlane;

/// The files of the report directory but `rows.csv`: report.md, report.html, report.json
/// (the value itself) and one CSV per table.
pub fn files(inv: &Investigation) -> Vec<(String, Vec<u8>)> {
    let doc = document(inv);
    let mut files = vec![
        (
            "report.md".to_owned(),
            crate::markdown::render(&doc).into_bytes(),
        ),
        (
            "report.html".to_owned(),
            crate::html::render(&doc).into_bytes(),
        ),
        (
            "report.json".to_owned(),
            crate::report_json::write(inv).into_bytes(),
        ),
    ];
    for table in doc.tables() {
        files.push((
            format!("{}.csv", table.name),
            crate::csv::render(table).into_bytes(),
        ));
    }
    files
}

/// Writes the report directory as `investigate --out` writes it into `dir`: the
/// [`files`] of the run's investigation and its `rows.csv`.
pub fn write_into(
    run: &investigation::Run,
    dir: &output_file::DirOutput,
) -> Result<(), output_file::Error> {
    for (name, bytes) in files(&run.investigation) {
        dir.write(name, &bytes)?;
    }
    let rows = Path::new("rows.csv");
    let file = dir.create_file(rows)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    run.write_rows(&mut w)
        .and_then(|()| std::io::Write::flush(&mut w))
        .map_err(|source| {
            output_file::Error::Io(output_file::FsError {
                path: dir.path().join(rows),
                action: "cannot write a file of the output",
                source,
            })
        })
}

/// The investigation as a document: findings, then steps 1 to 7.
pub fn document(inv: &Investigation) -> Document {
    let mut doc = Document::new(format!("Investigation of {}", inv.input_name));
    doc.subtitle.push(format!("input: {}", inv.input));
    doc.subtitle.push(format!(
        "{} capture(s), format: {}; every figure is labelled measured, read or inferred (hover for its source or assumptions in the HTML page)",
        inv.captures.len(),
        inv.format
    ));
    let mut verdict = verdict_section(inv, &mut doc.findings);
    verdict.push(Block::Table(steps_table(inv)));
    let ranks = inv
        .across_ranks
        .as_ref()
        .map(|x| cross_rank_section(x, &mut doc.findings));
    let reconciliation = reconciliation_section(&inv.reconciliation);
    let budgets = budget_section(inv);
    let mut lanes = swimlane_section(inv);
    let mut ops = ops_section(inv, &mut doc.findings);
    let mut roof = roofline_section(inv.roofline.as_ref());
    let mut change = change_section(&inv.change, &mut doc.findings);
    if let Some(drawn) = &inv.drawn {
        let who = &drawn.who;
        let why = if drawn.straggler {
            "the straggler found across ranks: it arrives latest at the steps' last collectives"
        } else {
            "the slowest rank by median steady-state step"
        };
        doc.findings.push(Finding::new(vec![Span::text(format!(
            "Sections 3, 5 and 6 and the Python lines of section 4 describe {who} only ({why}); the other tables have one row per rank, and every rank was read one at a time."
        ))]));
        for s in [&mut lanes, &mut roof, &mut change] {
            s.blocks.insert(
                0,
                Block::Paragraph(vec![Span::text(format!("Of {who} only ({why})."))]),
            );
        }
        ops.blocks.insert(
            0,
            Block::Paragraph(vec![Span::text(format!(
                "Buckets and ops: rows of every rank. Kernel → Python line: of {who} only ({why})."
            ))]),
        );
    }
    doc.sections.push(verdict);
    doc.sections.extend(ranks);
    doc.sections
        .extend([reconciliation, budgets, lanes, ops, roof, change]);
    let mut trust_section = Section::new(
        "trust",
        "7. Trust list, then what a new capture would answer",
    );
    trust_section.push(Block::Trust(
        inv.trust.iter().map(|t| trust_entry(inv, t)).collect(),
    ));
    trust_section.para("Needs a new capture:");
    if inv.new_capture.is_empty() {
        trust_section.para("nothing: the capture answers the questions above.");
    } else {
        trust_section.push(Block::List(
            inv.new_capture
                .iter()
                .map(|a| vec![Span::text(ask_text(a))])
                .collect(),
        ));
    }
    doc.sections.push(trust_section);
    doc
}

fn file_name(p: &Path) -> String {
    investigation::file_name(p)
}

fn pct(share: f64) -> Figure {
    Figure::percent(100.0 * share, Provenance::Measured)
}

/// The steady-state step times each capture (and, over several, all of them) gives, with
/// the quartiles compare's noise rule takes, and its GPUs.
fn steps_table(inv: &Investigation) -> Table {
    let mut t = Table::new(
        "steps",
        &[
            "capture",
            "steps found by",
            "steady-state steps",
            "median step",
            "lower quartile",
            "upper quartile",
            "mean step of the window",
            "GPUs with activity",
            "GPU models",
            "GPU vendors",
        ],
    );
    let dur = |n: Nanos| Cell::figure(Figure::duration(n, Provenance::Measured));
    let mut all = Vec::new();
    let mut row = |label: String,
                   origin: String,
                   steps: &[Nanos],
                   mean: Cell,
                   gpus: [Vec<String>; 2],
                   count: usize| {
        let q = compare::Stat::of(steps);
        t.push(vec![
            Cell::text(label),
            Cell::text(origin),
            Cell::figure(Figure::count(steps.len() as u64, Provenance::Measured)),
            dur(q.median),
            dur(q.q1),
            dur(q.q3),
            mean,
            Cell::figure(Figure::count(count as u64, Provenance::Measured)),
            Cell::text(counted(&gpus[0])),
            Cell::text(counted(&gpus[1])),
        ]);
    };
    let mut every_gpu: [Vec<String>; 2] = Default::default();
    let mut devices = 0;
    for c in &inv.captures {
        let steps = &c.steady_steps;
        let mean = c.window_mean_step.map_or(Cell::Empty, dur);
        let gpus = [c.gpu_models.clone(), c.gpu_vendors.clone()];
        for (all, one) in every_gpu.iter_mut().zip(&gpus) {
            all.extend(one.iter().cloned());
        }
        devices += c.devices_with_activity;
        all.extend(steps.iter().copied());
        row(
            c.who.clone(),
            c.steps_origin.clone(),
            steps,
            mean,
            gpus,
            c.devices_with_activity,
        );
    }
    if inv.captures.len() > 1 {
        every_gpu.iter_mut().for_each(|g| g.sort());
        let origin = inv.captures[0].steps_origin.clone();
        row(
            "all".to_owned(),
            origin,
            &all,
            Cell::Empty,
            every_gpu,
            devices,
        );
    }
    t.with_note("Steady-state steps only (warm-up left out); quartiles by nearest rank, as compare's noise rule takes them (the row \"all\" pools every capture's steps); GPU models and vendors one count per device. compare reads this table, the cause keys of section 6 and their time per step back when this report.json is one of its sides.")
}

/// A sorted list as `2 × NVIDIA H100; 1 × NVIDIA A100`.
fn counted(sorted: &[String]) -> String {
    sorted
        .chunk_by(|a, b| a == b)
        .map(|run| format!("{} × {}", run.len(), run[0]))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Step 1.
fn verdict_section(inv: &Investigation, findings: &mut Vec<Finding>) -> Section {
    let mut s = Section::new("verdict", "1. Verdict and host-side cause");
    let mut t = Table::new(
        "verdict",
        &[
            "capture",
            "verdict",
            "critical stream",
            "busy (G)",
            "collectives",
            "idle",
            "host did not launch yet (H, of idle)",
            "other stream or event",
            "host in a sync call",
            "no evidence (U)",
            "wait / kernel (Q)",
            "median step",
        ],
    );
    for c in &inv.captures {
        let v = &c.verdict;
        let crit = v.critical.map_or("-".to_owned(), |(device, stream)| {
            format!("GPU {device} stream {stream}")
        });
        let step = c.step_spread.map_or(Cell::Empty, |sp| {
            Cell::figure(
                Figure::duration(sp.median, Provenance::Measured)
                    .with_range(Value::Duration(sp.min.0), Value::Duration(sp.max.0)),
            )
        });
        let share = |x: Option<f64>| x.map_or(Cell::Empty, |x| Cell::figure(pct(x)));
        t.push(vec![
            Cell::text(c.who.clone()),
            Cell::figure_text(&v.bound, verdict_label()),
            Cell::text(crit),
            Cell::figure(pct(v.busy)),
            Cell::figure(pct(v.collective)),
            Cell::figure(pct(v.idle)),
            share(v.host_wait),
            share(v.stream_wait),
            share(v.sync_wait),
            share(v.unknown_wait),
            v.queue_ratio.map_or(Cell::Empty, |q| {
                Cell::figure(Figure::ratio(q, Provenance::Measured))
            }),
            step,
        ]);
    }
    s.push(Block::Table(t.with_note(
        "G: busy share of the critical (most compute) stream, collectives left out (their time includes waiting for peers). Its idle time is split gap by gap on each gap's own evidence: H, before the launch call of the next activity while the launching thread was not in a synchronising call; other stream or event, after the launch with a stream-wait-event call (or graph dependencies) before it; host in a sync call, while the launching thread was blocked in a synchronising call (the host waiting for the GPU); U, no evidence. Rules: GPU-bound if G >= 90 %, or >= 80 % and Q >= 1; host/launch-bound if idle >= 50 % and H >= 50 %; inconclusive if idle >= 50 % and U >= 50 %; else mixed.",
    )));
    let f = &inv.first;
    if let Some(first) = inv.captures.first() {
        let v = &first.verdict;
        let mut spans = vec![
            Span::text(format!("{}: ", first.who)),
            Span::Figure(Figure {
                value: Value::Percent(100.0 * v.busy),
                label: Provenance::Measured,
                range: share_range(inv, |c| c.verdict.busy),
            }),
            Span::text(format!(
                " of the window the critical stream computes; verdict {} (inferred)",
                v.bound
            )),
        ];
        if let Some(gap) = &f.top_gap {
            // The largest cause of the idle time, with the evidence that decided it.
            spans.push(Span::text(", and "));
            spans.push(Span::Figure(pct(gap.share)));
            spans.push(Span::text(format!(
                " of its idle time is \"{}\"",
                gap.cause
            )));
            if let Some(e) = &gap.evidence {
                spans.push(Span::text(format!(" (evidence: {e})")));
            }
        }
        spans.push(Span::text("."));
        findings.push(Finding::new(spans));
        // Which evidence found the iterations, and what each forward is when it says so.
        let mut text = format!(
            "Iterations: {} step(s), found from {}",
            f.steps, f.steps_origin
        );
        if !f.forward_kinds.is_empty() {
            text.push_str(&format!("; forwards: {}", f.forward_kinds.join(", ")));
        }
        let mut spans = vec![Span::text(text)];
        // Per kind of forward (the engine's markers say which): count and step time.
        for (i, (kind, count, spread)) in f.forward_spreads.iter().enumerate() {
            spans.push(Span::text(format!(
                "{}{kind}: {count} step(s), median ",
                if i == 0 { "; per forward: " } else { ", " }
            )));
            spans.push(Span::Figure(
                Figure::duration(spread.median, Provenance::Measured)
                    .with_range(Value::Duration(spread.min.0), Value::Duration(spread.max.0)),
            ));
        }
        spans.push(Span::text("."));
        findings.push(Finding::new(spans));
    }
    if let Some(w) = &f.warm_up {
        let evidence: Vec<String> = w
            .longest
            .iter()
            .map(|(name, dur)| format!("`{name}` {}", dur.human()))
            .collect();
        let mut spans = vec![Span::text(format!(
            "Warm-up: {} of {} step(s), ",
            w.steps, f.steps
        ))];
        spans.push(Span::Figure(Figure::duration(
            w.step_time,
            Provenance::Measured,
        )));
        spans.push(Span::text(format!(
            ", are not steady state ({} warm-up call(s): launch calls of 100 ms or more, module loading, autotuning{}{})",
            w.event_count,
            if evidence.is_empty() { "" } else { "; longest: " },
            evidence.join(", ")
        )));
        spans.push(Span::text(if w.all {
            "; the whole capture is warm-up, so no steady-state verdict: capture again after warm-up."
        } else if w.steps == 0 {
            "; they cover less than 10 % of any step, so every step is kept."
        } else {
            "; left out of the verdict, budgets and causes."
        }));
        findings.push(Finding::new(spans));
    }
    if let Some(h) = &f.host_only {
        // Host-only time of the steps: the GPU has nothing of the step yet, or any more.
        let top: Vec<String> = h
            .top
            .iter()
            .map(|(name, overlapped)| format!("`{name}` ({})", overlapped.human()))
            .collect();
        let mut spans = vec![
            Span::text("The GPU has no work of the step for "),
            Span::Figure(pct(h.share)),
            Span::text(" of the steps' wall time (host-only: "),
            Span::Figure(Figure::duration(h.before_gpu, Provenance::Measured)),
            Span::text(" before the first GPU activity, "),
            Span::Figure(Figure::duration(h.after_gpu, Provenance::Measured)),
            Span::text(format!(" after the last, over {} step(s))", h.steps)),
        ];
        if !top.is_empty() {
            spans.push(Span::text(format!(
                "; the host runs {} then (self time)",
                top.join(", ")
            )));
        }
        spans.push(Span::text("."));
        findings.push(Finding::new(spans));
    }
    if let Some(lf) = &inv.last_finisher {
        findings.push(Finding::new(vec![
            Span::text(format!(
                "Rank {} finishes step {} last, ",
                lf.rank.map_or("?".to_owned(), |r| r.to_string()),
                lf.step
            )),
            Span::Figure(Figure::duration(lf.behind_earliest, Provenance::Measured)),
            Span::text(if lf.aligned_on_base_time {
                " after the earliest rank (clocks aligned on baseTimeNanoseconds)."
            } else {
                " after the earliest rank (raw timestamps: assumes the ranks share a clock)."
            }),
        ]));
    }
    s
}
/// Across ranks (a directory of two or more): per-rank step time and its spread, clock
/// offsets from matched collectives, and the ranks that arrive late at collectives.
fn cross_rank_section(across: &investigation::AcrossRanks, findings: &mut Vec<Finding>) -> Section {
    let x = &across.cross;
    let mut s = Section::new(
        "ranks",
        "Across ranks: step time, clock offsets, stragglers",
    );
    let who = |rank: Option<i64>, label: &str| {
        rank.map_or_else(|| file_name(Path::new(label)), |r| format!("rank {r}"))
    };
    let offset_label = || {
        Provenance::inferred(
            "a collective instance (the k-th collective of every rank) ends at the same true time on every rank; the offset is the median over instances of this rank's end minus the reference rank's",
        )
    };
    let late_label = || {
        Provenance::inferred(
            "arrival = the start of the rank's collective kernel, on the reference rank's clock after the estimated offset; late = after the median rank's arrival by more than the threshold, at the last collective of a step",
        )
    };
    if let Some(sp) = x.step_time_spread {
        s.push(Block::Paragraph(vec![
            Span::text("Median step time across ranks: "),
            Span::Figure(
                Figure::duration(sp.median, Provenance::Measured)
                    .with_range(Value::Duration(sp.min.0), Value::Duration(sp.max.0)),
            ),
            Span::text(format!(
                " (the median of the {} ranks' median step times, with the fastest and slowest rank's).",
                x.ranks.len()
            )),
        ]));
    }
    let reference = who(x.reference, &x.ranks[0].label);
    if x.matched_collectives == 0 {
        s.para("No collective on some rank: clock offsets and stragglers need collectives matched across ranks.");
    } else {
        let largest = x
            .ranks
            .iter()
            .filter_map(|r| r.clock_offset.map(|o| (o.0.abs(), r)))
            .max_by_key(|(o, _)| *o);
        let mut spans = vec![Span::text(format!(
            "{} collective instances matched across ranks by order{}; clock offsets are relative to {reference}{}. ",
            x.matched_collectives,
            if x.collective_counts_differ {
                " (ranks have different numbers of collectives: only the first ones of each are compared, which may pair different instances)"
            } else {
                ""
            },
            if x.aligned_on_base_time {
                ", after putting every rank on its baseTimeNanoseconds"
            } else {
                ""
            },
        ))];
        if let Some((abs, r)) = largest {
            spans.push(Span::text(format!(
                "The largest correction is {}'s, ",
                who(r.rank, &r.label)
            )));
            spans.push(Span::Figure(Figure::duration(Nanos(abs), offset_label())));
            spans.push(Span::text("."));
            // The last-finisher figures (findings, section 3) compare uncorrected times.
            if abs > 10_000 {
                spans.push(Span::text(" The rank that \"finishes last\" in the findings and section 3 is found on uncorrected timestamps: with corrections this large it may not be the rank that made the others wait (the late ranks below are found after correction)."));
            }
        }
        s.push(Block::Paragraph(spans));
        if let Some(k) = x
            .skew
            .iter()
            .max_by_key(|k| (k.arrival_spread, std::cmp::Reverse(k.index)))
        {
            let mut spans = vec![Span::text(format!(
                "Largest arrival spread: collective #{}{}, {} arrived last, ",
                k.index,
                k.step.map_or(String::new(), |s| format!(" (step {s})")),
                who(k.last_rank, "?"),
            ))];
            spans.push(Span::Figure(Figure::duration(
                k.arrival_spread,
                late_label(),
            )));
            spans.push(Span::text(" after the first rank."));
            s.push(Block::Paragraph(spans));
        }
    }
    let mut t = Table::new(
        "ranks",
        &[
            "capture",
            "steps",
            "median step",
            "clock offset",
            "offset residual",
            "late from step",
            "late by",
        ],
    );
    for r in &x.ranks {
        let late = x
            .stragglers
            .iter()
            .find(|st| st.rank == r.rank && st.label == r.label);
        t.push(vec![
            Cell::text(who(r.rank, &r.label)),
            Cell::figure(Figure::count(r.steps as u64, Provenance::Measured)),
            r.median_step.map_or(Cell::Empty, |m| {
                Cell::figure(Figure::duration(m, Provenance::Measured))
            }),
            r.clock_offset.map_or(Cell::Empty, |o| {
                Cell::figure(Figure::duration(o, offset_label()))
            }),
            r.offset_residual.map_or(Cell::Empty, |o| {
                Cell::figure(Figure::duration(o, Provenance::Measured))
            }),
            late.map_or(Cell::Empty, |st| Cell::text(st.first_step.to_string())),
            late.map_or(Cell::Empty, |st| {
                Cell::figure(Figure::duration(st.late_by, late_label()))
            }),
        ]);
    }
    s.push(Block::Table(t.with_note(format!(
        "clock offset: this rank's clock minus the reference rank's; offset residual: the largest distance of one instance's end difference from that offset (small: the offset explains every instance). late by: the median over its late steps (from the first) of how much later than the median rank it arrived; threshold {} (the larger of 50 µs and 1 % of the median step time).",
        x.late_threshold.human()
    ))));
    for st in &x.stragglers {
        findings.push(Finding::new(vec![
            Span::text(format!(
                "Straggler: {} arrives late at the last collective of {} of {} steps from step {} on, by ",
                who(st.rank, &st.label),
                st.late_steps,
                st.steps_from_first,
                st.first_step
            )),
            Span::Figure(Figure::duration(st.late_by, late_label())),
            Span::text(" (median); the other ranks wait for it there."),
        ]));
    }
    if let Some(map) = &across.heat_map {
        heat_map_blocks(&mut s, map);
    }
    s
}

/// The rank × step heat map (SVG; the Markdown shows its caption) and its hottest cells
/// as text.
fn heat_map_blocks(s: &mut Section, map: &investigation::StepHeatMap) {
    let work_label = || {
        Provenance::inferred(
            "work time = from the step's start to the rank's arrival at the step's last collective kernel (its start), or the step's duration when the step has no collective; each on the rank's own clock; median over the ranks that have the step",
        )
    };
    let mut cells: Vec<(usize, usize, f64)> = (0..map.rows.len())
        .flat_map(|r| (0..map.steps.len()).filter_map(move |c| map.ratio(r, c).map(|x| (r, c, x))))
        .filter(|c| c.2 > 1.0)
        .collect();
    cells.sort_by(|a, b| b.2.total_cmp(&a.2).then((a.0, a.1).cmp(&(b.0, b.1))));
    let mut spans = vec![Span::text(format!(
        "Rank × step heat map ({} ranks × {} step(s)): each cell is the rank's work time in the step over that step's median rank. ",
        map.rows.len(),
        map.steps.len()
    ))];
    if cells.is_empty() {
        spans.push(Span::text("No rank took longer than its step's median."));
    } else {
        spans.push(Span::text("Hottest cells: "));
        for (i, &(r, c, x)) in cells.iter().take(5).enumerate() {
            let row = &map.rows[r];
            spans.push(Span::text(format!(
                "{}{}, step {}: ",
                if i == 0 { "" } else { "; " },
                row.rank
                    .map_or_else(|| file_name(Path::new(&row.label)), |n| format!("rank {n}")),
                map.steps[c]
            )));
            spans.push(Span::Figure(Figure::duration(
                row.cells[c].unwrap_or_default(),
                work_label(),
            )));
            spans.push(Span::text(" ("));
            spans.push(Span::Figure(Figure::percent(
                100.0 * (x - 1.0),
                work_label(),
            )));
            spans.push(Span::text(" over the median)"));
        }
        spans.push(Span::text("."));
    }
    s.push(Block::Paragraph(spans));
    s.push(Block::Svg {
        caption: "Rank × step: work time before the step's last collective over the step's median rank (red: longer, blue: shorter, grey: no such step; measured times, inferred split)".into(),
        svg: crate::heatmap::render(map),
    });
}

fn verdict_label() -> Provenance {
    Provenance::inferred(analysis::verdict_assumptions())
}

/// The range of a share over the captures (ranks), when there are several.
fn share_range(
    inv: &Investigation,
    f: impl Fn(&investigation::CaptureResult) -> f64,
) -> Option<(Value, Value)> {
    if inv.captures.len() < 2 {
        return None;
    }
    let v: Vec<f64> = inv.captures.iter().map(f).collect();
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((Value::Percent(100.0 * lo), Value::Percent(100.0 * hi)))
}

/// `GPU 0: 12, GPU 1: 12`.
fn per_gpu(v: &[(i64, usize)]) -> String {
    v.iter()
        .map(|(d, n)| format!("GPU {d}: {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A check's name and its figures, in words.
fn check_text(kind: &CheckKind) -> (&'static str, String) {
    match kind {
        CheckKind::Launch {
            without,
            activities,
        } => (
            "launch: every GPU activity has a host launch",
            format!("{without} of {activities} activities without a launch"),
        ),
        CheckKind::KernelsPerStep {
            steps,
            fewest,
            most,
        } => (
            "steps: kernels per step constant",
            format!("{steps} steps, {fewest} to {most} kernels"),
        ),
        CheckKind::Budget { streams, failed } => (
            "budget: each part = its interval-union difference, per stream",
            format!("{streams} streams, {failed} failed"),
        ),
        CheckKind::Devices { kernels } => (
            "devices: all GPUs run the same number of kernels",
            per_gpu(kernels),
        ),
        CheckKind::XplaneVsJson {
            xplane,
            json,
            json_kernels,
        } => (
            "xplane vs json: GPU activities per device equal in the .xplane.pb and its trace.json.gz",
            match json_kernels {
                Ok(j) => format!(
                    "xplane {}; {}: {}",
                    per_gpu(xplane),
                    file_name(Path::new(json)),
                    per_gpu(j)
                ),
                Err(e) => format!("{json} could not be read: {e}"),
            },
        ),
        CheckKind::Ranks { kernels } => (
            "ranks: every rank runs the same number of kernels",
            kernels
                .iter()
                .map(|(r, n)| format!("{r}: {n}"))
                .collect::<Vec<_>>()
                .join(", "),
        ),
    }
}

/// Step 2.
fn reconciliation_section(checks: &[Check]) -> Section {
    let mut s = Section::new("reconciliation", "2. Reconciliation");
    let mut t = Table::new("reconciliation", &["capture", "check", "holds", "detail"]);
    for c in checks {
        let (check, detail) = check_text(&c.kind);
        t.push(vec![
            Cell::text(c.who.clone()),
            Cell::text(check),
            Cell::text(if c.holds { "yes" } else { "NO" }),
            Cell::text(detail),
        ]);
    }
    s.push(Block::Table(t));
    s
}

/// The per device × stream budget table.
fn budget_section(inv: &Investigation) -> Section {
    let mut s = Section::new("budget", "Per GPU × stream budget");
    let mut t = Table::new(
        "budget",
        &[
            "capture",
            "GPU",
            "stream",
            "span",
            "compute",
            "collective",
            "memcpy",
            "memset",
            "idle",
            "idle share",
        ],
    );
    for c in &inv.captures {
        for b in &c.budgets {
            let part = |x: Nanos| Cell::figure(Figure::duration(x, Provenance::Measured));
            t.push(vec![
                Cell::text(c.who.clone()),
                Cell::text(b.device.to_string()),
                Cell::text(b.stream.map_or_else(|| "all".to_owned(), |s| s.to_string())),
                Cell::figure(Figure::duration(b.span, Provenance::Measured)),
                part(b.compute),
                part(b.collective),
                part(b.memcpy),
                part(b.memset),
                part(b.idle),
                Cell::figure(pct(b.idle_share)),
            ]);
        }
    }
    s.push(Block::Table(t.with_note(
        "Over the analysed window (the steady-state steps' wall time when the steps are host ranges, widened to their GPU activities, else first start to last end of the steps' GPU activities; warm-up steps and work in flight at the capture's start left out). Overlaps merged, precedence compute > collective > memcpy > memset. On the `all` rows, collective and memcpy time is what no compute kernel overlapped: exposed.",
    )));
    s
}

/// Step 3.
fn swimlane_section(inv: &Investigation) -> Section {
    let mut s = Section::new("swimlanes", "3. Swimlanes of one step");
    let (number, chart, straggler) = match &inv.swimlanes {
        Swimlanes::NoStep => {
            s.para("No step in the capture: nothing to draw.");
            return s;
        }
        Swimlanes::NoActivity { number } => {
            s.para(format!(
                "Step {number} has no GPU activity: nothing to draw."
            ));
            return s;
        }
        Swimlanes::Drawn {
            number,
            chart,
            straggler,
        } => (*number, chart, straggler),
    };
    if let Some(x) = straggler {
        s.push(Block::Paragraph(vec![
            Span::text(format!("Straggler (the last rank to finish): {} finished step {} last, ", x.who, x.step)),
            Span::Figure(Figure::duration(x.behind_earliest, Provenance::Measured)),
            Span::text(" after the earliest rank; its last activity was "),
            Span::code(x.name.clone()),
            Span::text(format!(
                " ({}, {}): {}",
                x.class,
                x.dur.human(),
                if x.collective {
                    "a collective, so it ended waiting for its peers or they for it; compare when each rank launched it"
                } else {
                    "compute, so this rank had more (or slower) work in the step than the others"
                }
            )),
        ]));
    }
    let gpu_rows = chart
        .lanes
        .iter()
        .filter(|l| l.kind == swimlane::LaneKind::Gpu)
        .count();
    let host_rows = chart.lanes.len() - gpu_rows;
    s.para(format!(
        "Step {number} ({}), {gpu_rows} GPU stream rows and {host_rows} host rows (threads that launch GPU work; launch and runtime calls drawn). Kernels are coloured by class; the bare row background is idle time. [critical]: the stream with the most compute; [last to finish]: the stream that ended the step last on the rank that finished last. Slices narrower than a pixel are merged into density bars.",
        if inv.step_chosen { "chosen" } else { "the median step" }
    ));
    s.push(Block::Svg {
        caption: format!("Swimlanes of step {number}"),
        svg: swimlane::render(chart),
    });
    s
}
/// Step 4.
fn ops_section(inv: &Investigation, findings: &mut Vec<Finding>) -> Section {
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
        let who = &c.file_who;
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
fn roofline_section(roofline: Option<&Result<RooflineView, String>>) -> Section {
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
            Cell::text(o.dtype_shown.clone()),
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
            Span::text(format!("The {} op(s) below cover ", costed.len())),
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

/// A practice in use, in words.
fn in_use_text(u: &investigation::InUse) -> String {
    let share = u.share.map_or_else(String::new, share_text);
    match u.practice {
        PracticeKind::Compiled => {
            format!(
                "torch.compile/Inductor ({}; {share} of GPU time)",
                u.evidence
            )
        }
        PracticeKind::GraphReplay => {
            format!(
                "CUDA/HIP graph replay ({}; {share} of GPU time)",
                u.evidence
            )
        }
        PracticeKind::Checkpointing => format!("activation checkpointing ({})", u.evidence),
        PracticeKind::PythonTracer => format!(
            "the Python tracer ({}; it adds its own time to every host gap)",
            u.evidence
        ),
    }
}

fn share_text(share: f64) -> String {
    format!("{:.1} %", 100.0 * share)
}

/// A knob, in words.
fn knob_text(k: &Knob) -> String {
    match k {
        Knob::JaxDispatch => "fewer, larger dispatches (jit the whole step; lax.scan over layers), command buffers (XLA CUDA graphs), no host round trips inside the step (block_until_ready, device_get, Python-side logging), donate_argnums for the step's state".to_owned(),
        Knob::GraphsWiden { share, evidence } => format!(
            "graphs already replay {} of GPU time ({evidence}): capture the work still launched one by one into them (the ops outside the graphs), or larger graphs",
            share_text(*share)
        ),
        Knob::GraphsOnCompile => "CUDA graphs: mode=\"reduce-overhead\" on the torch.compile already in use, or capture the step".to_owned(),
        Knob::Graphs => "CUDA graphs (torch.compile mode=\"reduce-overhead\", or capture the step)".to_owned(),
        Knob::GraphBreaks => "torch.compile is already in use: look for graph breaks (TORCH_LOGS=graph_breaks) that leave eager kernels and host work between compiled regions".to_owned(),
        Knob::FewerKernels => "fewer and larger kernels (fusion, torch.compile)".to_owned(),
        Knob::HostWorkOffStep => "moving host work (data loading, logging, .item() syncs) off the step, pinned memory with non_blocking copies".to_owned(),
        Knob::WithoutPythonTracer => "first confirm with a capture without with_stack: the Python tracer inflates host time".to_owned(),
        Knob::AwaitedStream => "look at what the awaited stream runs at that time (the swimlanes): overlap it with compute, split it, or remove the cross-stream wait; for collectives, check for a straggler rank".to_owned(),
        Knob::JaxNoRoundTrips => "no host round trips inside the step (block_until_ready, device_get, printing device values); keep values on the device".to_owned(),
        Knob::NoSyncs => "remove synchronisations inside the step (.item(), .cpu(), printing tensors, blocking copies): pinned memory with non_blocking copies, keep values on the GPU, move checks after the step".to_owned(),
        Knob::OverlapCollectives => "overlap collectives with compute (FSDP/DDP prefetch and bucket sizes, a second micro-batch in flight), fewer or larger collectives; collective time includes waiting for peers, so look at the last rank to finish first".to_owned(),
        Knob::OverlapCopies => "pinned host memory with non_blocking copies, prefetching inputs on a side stream, keeping tensors on the GPU".to_owned(),
        Knob::JaxLayouts => "choose layouts the convolution kernels take natively (NHWC / channels-last dimension_numbers in lax.conv_general_dilated), so XLA inserts no transposes around them".to_owned(),
        Knob::ChannelsLast => "channels-last memory format (model.to(memory_format=torch.channels_last) and the inputs), so cuDNN/MIOpen convolutions skip their NCHW/NHWC conversions".to_owned(),
        Knob::JaxFusion => "fusion: check the XLA fusion decisions of the top elementwise ops; fewer dtype converts; larger fused regions".to_owned(),
        Knob::CompiledFusion => "already compiled: the remaining ones are outside compiled regions (graph breaks) or Inductor's own; fused norm/activation/residual kernels, fewer dtype casts".to_owned(),
        Knob::Fusion => "fusion: torch.compile, fused norm/activation/residual kernels; fewer dtype casts".to_owned(),
        Knob::FusedAttention => "torch.nn.functional.scaled_dot_product_attention (FlashAttention or memory-efficient backend), or another fused attention kernel: it replaces the softmax and both batched matmuls; the estimate assumes the fused kernel's own time is small beside them".to_owned(),
    }
}

/// A cause, in words, with its evidence.
fn what_text(w: &What) -> String {
    match w {
        What::HostNotLaunched { evidence } => format!(
            "the GPU waits for the host to issue work (host did not launch yet, on the critical stream; evidence: {})",
            evidence.join("; ")
        ),
        What::StreamOrEvent { evidence } => format!(
            "work was issued but waited on another stream or event (on the critical stream; evidence: {})",
            evidence.join("; ")
        ),
        What::SyncCall { evidence } => format!(
            "the host is blocked in a synchronising call, waiting for the GPU, while the critical stream idles (evidence: {})",
            evidence.join("; ")
        ),
        What::ExposedCollective { gpu } => {
            format!("communication no compute overlaps on GPU {gpu} (exposed collective time)")
        }
        What::ExposedMemcpy { gpu } => {
            format!("copies no compute overlaps on GPU {gpu} (exposed memcpy time)")
        }
        What::Layout => "layout transposes on the critical stream (NCHW/NHWC conversions, batched transposes, transpose fusions, im2col: data movement for a convolution or GEMM)".into(),
        What::Elementwise => {
            "elementwise/norm/activation kernels on the critical stream (memory-bound)".into()
        }
        What::EagerAttention { evidence, share } => format!(
            "eager attention on the critical stream ({evidence}; {} of all GPU time)",
            share_text(*share)
        ),
    }
}

/// Step 6: causes on the critical stream, ranked by their share of its window.
fn change_section(change: &Change, findings: &mut Vec<Finding>) -> Section {
    let mut s = Section::new("change", "6. What to change, ranked");
    let ranked = match change {
        Change::NoWindow => {
            s.para("No analysed window: nothing to rank.");
            return s;
        }
        Change::WarmUp => {
            s.para("The capture is warm-up only (see the verdict): nothing in it is steady state, so no cause is ranked. Capture again after warm-up.");
            return s;
        }
        Change::Ranked(r) => r,
    };
    if !ranked.in_use.is_empty() {
        findings.push(Finding::new(vec![Span::text(format!(
            "Already in use: {}.",
            ranked
                .in_use
                .iter()
                .map(in_use_text)
                .collect::<Vec<_>>()
                .join("; ")
        ))]));
    }
    let per_step_formula = investigation::PER_STEP_FORMULA;
    let window_assumption = investigation::WINDOW_ASSUMPTION;
    let mut t = Table::new(
        "what_to_change",
        &[
            "rank",
            "cause",
            "share of window",
            "time per step",
            "step time if it went away",
            "knobs to try (hypotheses)",
            "key",
        ],
    );
    for (i, c) in ranked.causes.iter().enumerate() {
        t.push(vec![
            Cell::text((i + 1).to_string()),
            Cell::text(what_text(&c.what)),
            Cell::figure(Figure::percent(100.0 * c.share, Provenance::Measured)),
            Cell::figure(Figure::duration(
                c.per_step,
                Provenance::inferred(per_step_formula),
            )),
            Cell::figure(Figure::duration(
                c.step_after,
                Provenance::inferred(format!(
                    "the window's mean steady-state step minus the cause's time per step; {window_assumption}"
                )),
            )),
            Cell::text(
                c.knobs
                    .iter()
                    .map(knob_text)
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
            Cell::code(c.key.clone()),
        ]);
    }
    if let Some(c) = ranked.causes.first() {
        findings.push(Finding::new(vec![
            Span::text(format!("First thing to change: {}, ", what_text(&c.what))),
            Span::Figure(Figure::percent(100.0 * c.share, Provenance::Measured)),
            Span::text(format!(
                " of the window ({} over {} steady-state step(s)); without it the mean step of the window would take about ",
                c.time.human(),
                ranked.steps
            )),
            Span::Figure(Figure::duration(
                c.step_after,
                Provenance::inferred(format!("{per_step_formula}; {window_assumption}")),
            )),
            Span::text(" instead of "),
            Span::Figure(Figure::duration(ranked.mean_step, Provenance::Measured)),
            Span::text("."),
        ]));
    }
    s.push(Block::Table(t.with_note(format!(
        "Causes overlap (host wait and exposed communication can be the same instant on different streams), so the rows are alternatives, not a sum. The step-time estimates are inferred ({per_step_formula}); the knobs are hypotheses to test with a new capture. Key: the cause's stable name, by which compare matches it in a later capture (or in this report.json)."
    ))));
    s
}

/// Step 7: one trust item, in words, with its count and share.
fn trust_entry(inv: &Investigation, item: &TrustItem) -> TrustEntry {
    let count = |n: u64| Some(Figure::count(n, Provenance::Measured));
    let share = |x: f64| Some(pct(x));
    let entry = |code: &str, message: String| TrustEntry {
        code: code.to_owned(),
        message,
        count: None,
        share: None,
    };
    match item {
        TrustItem::FailedCheck { check } => match inv.reconciliation.get(*check) {
            Some(c) => {
                let (name, detail) = check_text(&c.kind);
                entry(
                    &format!(
                        "check-{}",
                        name.split_whitespace().next().unwrap_or("check")
                    ),
                    format!("{}: {name}: {detail}", c.who),
                )
            }
            None => entry("check", "a reconciliation check failed".to_owned()),
        },
        TrustItem::AttributionFailed { error } => {
            entry("attribution-failed", format!("attribute-kernels: {error}"))
        }
        TrustItem::Attribution { note } => {
            entry("attribution", format!("attribute-kernels: {note}"))
        }
        TrustItem::RooflineFailed { error } => {
            entry("roofline-failed", format!("roofline: {error}"))
        }
        TrustItem::Roofline {
            code,
            message,
            count: n,
            percent,
        } => TrustEntry {
            count: count(*n),
            share: percent.map(|p| Figure::percent(p, Provenance::Measured)),
            ..entry(code, format!("roofline: {message}"))
        },
        TrustItem::Diagnostic {
            who,
            code,
            message,
            count: n,
            percent,
        } => TrustEntry {
            count: count(*n),
            share: percent.map(|p| Figure::percent(p, Provenance::Measured)),
            ..entry(
                code,
                if code == "flow-one-end" {
                    format!(
                        "{who}: {message} (listed because some activities have no launch: the missing ends may be theirs)"
                    )
                } else {
                    format!("{who}: {message}")
                },
            )
        },
        TrustItem::GraphKernels {
            who,
            count: n,
            share: s,
        } => TrustEntry {
            count: count(*n),
            share: share(*s),
            ..entry(
                "graph-kernels",
                format!(
                    "{who}: kernels launched by CUDA/HIP graphs: their launch delay counts from the graph launch, and per-op tables may not see them"
                ),
            )
        },
        TrustItem::CollectiveWaiting { who, share: s } => TrustEntry {
            share: s.and_then(share),
            ..entry(
                "collective-includes-waiting",
                format!(
                    "{who}: collective kernel time includes waiting for peers, not only transfer"
                ),
            )
        },
        TrustItem::FileNotRead { error } => TrustEntry {
            count: count(1),
            ..entry(
                "file-not-read",
                format!("not read, so not in this report: {error}"),
            )
        },
        TrustItem::Rank(note) => entry(
            if note.duplicate {
                "duplicate-rank"
            } else {
                "not-a-rank"
            },
            note.message.clone(),
        ),
    }
}

/// What a new capture would answer, in words.
fn ask_text(ask: &investigation::Ask) -> String {
    use investigation::Ask;
    match ask {
        Ask::Attribution { text } => text.clone(),
        Ask::RecordShapes => {
            "FLOPs and bytes of the ops without shapes: capture with `record_shapes=True`."
                .to_owned()
        }
        Ask::SteadyState => "A steady-state capture: every step of this one is warm-up (module loading, compilation, autotuning, first calls). Profile after a few steps (torch.profiler schedule(wait=1, warmup=2, active=3); in JAX, after the first call of each jitted function).".to_owned(),
        Ask::GraphsOff { who } => format!("{who}: which op each graph kernel belongs to: capture once with CUDA graphs off (or per-node graph tracing)."),
        Ask::StepMarkers { who, jax: true } => format!(
            "{who}: per-step numbers: wrap each step in `jax.profiler.StepTraceAnnotation(\"train\", step_num=i)` so steps can be compared."
        ),
        Ask::StepMarkers { who, jax: false } => format!(
            "{who}: per-step numbers: profile with a schedule and call `prof.step()` (ProfilerStep#N markers), so steps can be compared."
        ),
        Ask::AllRanks => {
            "Whether a straggler makes the collectives wait: capture every rank of the same steps."
                .to_owned()
        }
        Ask::Unread { files } => format!(
            "The {files} file(s) that could not be read (listed in the trust list): capture them again, or investigate the others alone knowing the ranks are incomplete."
        ),
    }
}

impl Cell {
    /// A text cell carrying a judgement: the text and its label (e.g. the verdict).
    pub fn figure_text(text: &str, label: Provenance) -> Cell {
        Cell::Text(format!("{text} ({})", label.word()))
    }
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
                    if matches!(&spans[0], Span::Text(t) if t.contains("op(s) below cover")) =>
                {
                    Some(spans)
                }
                _ => None,
            })
            .expect("the coverage sentence");
        let want = 100.0 * costed_ns as f64 / gpu as f64;
        assert!(
            matches!(coverage[1], Span::Figure(Figure { value: Value::Percent(p), .. }) if (p - want).abs() < 1e-9),
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
