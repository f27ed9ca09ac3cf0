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

use investigation::{Check, CheckKind, Investigation, Swimlanes};
use trace_model::{Nanos, Provenance};

use crate::doc::{Block, Cell, Document, Finding, Section, Span, Table};
use crate::label::{Figure, Value};
use crate::swimlane;

mod advice;
mod gpu_time;
mod what_if;

pub(crate) use advice::cannot_replay_spans;
use advice::{ask_text, change_section, trust_entry};
use gpu_time::{ops_section, roofline_section};
pub use what_if::what_if_text;

/// Which capture: `rank 3`, else its file's name; `all ranks`.
pub(crate) fn who_text(who: &investigation::Who) -> String {
    match who {
        investigation::Who::Rank(n) => format!("rank {n}"),
        investigation::Who::File(name) => name.clone(),
        investigation::Who::AllRanks => "all ranks".to_owned(),
    }
}

/// What found a capture's steps, in words; with the GPU whose own steps are the figures
/// and every GPU's steps, where the capture keeps steps per GPU.
pub(crate) fn steps_origin_text(o: &investigation::StepsOrigin) -> String {
    let origin = o.origin.describe();
    match &o.per_gpu {
        Some(p) => format!(
            "{origin}; the figures are GPU {}'s own steps, not their union over the GPUs (per GPU: {})",
            p.figures,
            p.gpus
                .iter()
                .map(|g| format!(
                    "GPU {} {} step(s), median {}",
                    g.gpu,
                    g.steps,
                    g.median.human()
                ))
                .collect::<Vec<_>>()
                .join("; ")
        ),
        None => origin,
    }
}

/// Why a cause has no what-if scenario, in words.
pub(crate) fn no_scenario_text(reason: investigation::NoScenarioReason) -> &'static str {
    match reason {
        investigation::NoScenarioReason::ComputeClass => {
            "the compute class that bounds the step: its knobs change how fast its kernels run, \
             which only a new capture measures"
        }
        investigation::NoScenarioReason::NoDurationChange => {
            "no change of durations expresses this cause alone (a stream or event wait, a \
             synchronising call, eager attention)"
        }
    }
}

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
    let mut change = change_section(&inv.advice, &mut doc.findings);
    if let Some(drawn) = &inv.drawn {
        let who = who_text(&drawn.who);
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

/// A count from the capture's records, as a measured figure in a sentence.
fn count(n: impl TryInto<u64>) -> Span {
    Span::Figure(crate::measured::count(n))
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
        let q = compare::SampleStat::of(steps);
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
            who_text(&c.who),
            steps_origin_text(&c.steps_origin),
            steps,
            mean,
            gpus,
            c.devices_with_activity,
        );
    }
    if inv.captures.len() > 1 {
        every_gpu.iter_mut().for_each(|g| g.sort());
        let origin = steps_origin_text(&inv.captures[0].steps_origin);
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

/// The verdict a capture's row shows: the diagnosis's code (what bounds the step).
fn verdict_word(v: &investigation::VerdictRow) -> String {
    v.diagnosis.code()
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
            Cell::text(who_text(&c.who)),
            Cell::figure_text(&verdict_word(v), verdict_label()),
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
        "Verdict: what bounds the step (the diagnosis's code; its rules and words are in the finding \"Diagnosis\"). G: busy share of the critical (most compute) stream, collectives left out (their time includes waiting for peers). Its idle time is split gap by gap on each gap's own evidence: H, before the launch call of the next activity while the launching thread was not in a synchronising call; other stream or event, after the launch with a stream-wait-event call (or graph dependencies) before it; host in a sync call, while the launching thread was blocked in a synchronising call (the host waiting for the GPU); U, no evidence. The diagnosis starts from the launch-overhead rules: GPU-bound if G >= 90 %, or >= 80 % and Q >= 1; host/launch-bound if idle >= 50 % and H >= 50 %; inconclusive if idle >= 50 % and U >= 50 %; else mixed.",
    )));
    let f = &inv.first;
    if let Some(first) = inv.captures.first() {
        let v = &first.verdict;
        let mut spans = vec![
            Span::text(format!("{}: ", who_text(&first.who))),
            Span::Figure(Figure {
                value: Value::Percent(100.0 * v.busy),
                label: Provenance::Measured,
                range: share_range(inv, |c| c.verdict.busy),
            }),
            Span::text(format!(
                " of the window the critical stream computes; verdict {} (inferred)",
                verdict_word(v)
            )),
        ];
        if let Some(gap) = &f.top_gap {
            // The largest cause of the idle time, with the evidence that decided it.
            spans.push(Span::text(", and "));
            spans.push(Span::Figure(pct(gap.share)));
            spans.push(Span::text(format!(
                " of its idle time is \"{}\"",
                gap.cause.label()
            )));
            if let Some(e) = &gap.evidence {
                spans.push(Span::text(format!(" (evidence: {e})")));
            }
        }
        spans.push(Span::text("."));
        findings.push(Finding::new(spans));
        // What bounds the step (analysis::diagnose), the framework, the step evidence.
        if let Some(d) = &f.diagnosis {
            findings.push(Finding::new(vec![Span::text(format!(
                "Diagnosis ({}; inferred): {}. Framework: {} ({}). Step evidence: {}.",
                d.diagnosis.code(),
                d.diagnosis.describe(),
                d.framework,
                d.framework_evidence,
                if d.step_evidence.is_empty() {
                    "none in the capture (the whole capture is one step)".to_owned()
                } else {
                    d.step_evidence
                        .iter()
                        .map(|c| c.describe())
                        .collect::<Vec<_>>()
                        .join("; ")
                }
            ))]));
        }
        // Which evidence found the iterations, and what each forward is when it says so.
        let mut text = format!(
            " step(s), found from {}",
            steps_origin_text(&f.steps_origin)
        );
        if !f.forward_kinds.is_empty() {
            text.push_str(&format!("; forwards: {}", f.forward_kinds.join(", ")));
        }
        let mut spans = vec![Span::text("Iterations: "), count(f.steps), Span::text(text)];
        if let Some(sides) = &f.step_sides {
            spans.extend(step_sides_spans(sides));
        }
        // Per kind of forward (the engine's markers say which): count and step time.
        for (i, (kind, count_of, spread)) in f.forward_spreads.iter().enumerate() {
            spans.push(Span::text(format!(
                "{}{kind}: ",
                if i == 0 { "; per forward: " } else { ", " }
            )));
            spans.push(count(*count_of));
            spans.push(Span::text(" step(s), median "));
            spans.push(Span::Figure(
                Figure::duration(spread.median, Provenance::Measured)
                    .with_range(Value::Duration(spread.min.0), Value::Duration(spread.max.0)),
            ));
        }
        spans.push(Span::text("."));
        findings.push(Finding::new(spans));
    }
    if let Some(w) = &f.warm_up {
        findings.push(warm_up_finding(w, f.steps));
    }
    if let Some(h) = &f.host_only {
        findings.push(host_only_finding(h));
    }
    if let Some(lf) = &inv.last_finisher {
        findings.push(Finding::new(vec![
            Span::text(format!(
                "Rank {} finishes step {} last, ",
                lf.rank.map_or("?".to_owned(), |r| r.to_string()),
                lf.step
            )),
            Span::Figure(Figure::duration(lf.behind_earliest, lf.provenance())),
            Span::text(if lf.aligned_on_base_time {
                " after the earliest rank (clocks aligned on baseTimeNanoseconds)."
            } else {
                " after the earliest rank (raw timestamps: assumes the ranks share a clock)."
            }),
        ]));
    }
    s
}
/// The steady steps' host and GPU sides (medians, measured), and which side times them.
fn step_sides_spans(sides: &investigation::StepSidesView) -> Vec<Span> {
    let med = |s: Option<investigation::StepSpread>| {
        s.map_or(Span::text("-"), |s| {
            Span::Figure(Figure::duration(s.median, Provenance::Measured))
        })
    };
    vec![
        Span::text("; steady steps (medians): period "),
        med(sides.period),
        Span::text(" start to start, host range "),
        med(Some(sides.host)),
        Span::text(", GPU span of the work launched "),
        med(sides.gpu),
        Span::text(", GPU end after host end "),
        med(sides.lag),
        Span::text(if sides.timed_by_gpu {
            "; timed by the GPU span (the host runs ahead)"
        } else {
            "; timed by the host range"
        }),
    ]
}

/// The warm-up finding: the steps left out of steady state, of `steps`, and why.
fn warm_up_finding(w: &investigation::WarmUp, steps: usize) -> Finding {
    let mut spans = vec![
        Span::text("Warm-up: "),
        count(w.steps),
        Span::text(" of "),
        count(steps),
        Span::text(" step(s), "),
    ];
    spans.push(Span::Figure(Figure::duration(
        w.step_time,
        Provenance::Measured,
    )));
    spans.push(Span::text(", are not steady state ("));
    spans.push(count(w.event_count));
    spans.push(Span::text(
        " warm-up call(s): launch calls of 100 ms or more, module loading, autotuning",
    ));
    for (i, (name, dur)) in w.longest.iter().enumerate() {
        let sep = if i == 0 { "; longest: " } else { ", " };
        spans.push(Span::text(format!("{sep}`{name}` ")));
        spans.push(Span::Figure(Figure::duration(*dur, Provenance::Measured)));
    }
    spans.push(Span::text(")"));
    spans.push(Span::text(if w.all {
        "; the whole capture is warm-up, so no steady-state verdict: capture again after warm-up."
    } else if w.steps == 0 {
        "; they cover less than 10 % of any step, so every step is kept."
    } else {
        "; left out of the verdict, budgets and causes."
    }));
    Finding::new(spans)
}

/// The host-only finding: the steps' time the GPU has none of their work.
fn host_only_finding(h: &investigation::HostOnly) -> Finding {
    // Host-only time of the steps: the GPU has nothing of the step yet, or any more.
    let mut spans = vec![
        Span::text("The GPU has no work of the step for "),
        Span::Figure(pct(h.share)),
        Span::text(" of the steps' wall time (host-only: "),
        Span::Figure(Figure::duration(h.before_gpu, Provenance::Measured)),
        Span::text(" before the first GPU activity, "),
        Span::Figure(Figure::duration(h.after_gpu, Provenance::Measured)),
        Span::text(" after the last, over "),
        count(h.steps),
        Span::text(" step(s))"),
    ];
    for (i, (name, overlapped)) in h.top.iter().enumerate() {
        let sep = if i == 0 { "; the host runs " } else { ", " };
        spans.push(Span::text(format!("{sep}`{name}` (")));
        spans.push(Span::Figure(Figure::duration(
            *overlapped,
            Provenance::Measured,
        )));
        spans.push(Span::text(")"));
    }
    if !h.top.is_empty() {
        spans.push(Span::text(" then (self time)"));
    }
    spans.push(Span::text("."));
    Finding::new(spans)
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
            Span::text(" (the median of the "),
            count(x.ranks.len()),
            Span::text(" ranks' median step times, with the fastest and slowest rank's)."),
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
        let matched = Figure::count(
            u64::try_from(x.matched_collectives).unwrap_or(u64::MAX),
            Provenance::inferred(
                "matched by order: the k-th collective of every rank is one instance",
            ),
        );
        let mut spans = vec![
            Span::Figure(matched),
            Span::text(format!(
                " collective instances matched across ranks by order{}; clock offsets are relative to {reference}{}. ",
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
            )),
        ];
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
    s.push(Block::Table(t.with_note_spans(vec![
        Span::text("clock offset: this rank's clock minus the reference rank's; offset residual: the largest distance of one instance's end difference from that offset (small: the offset explains every instance). late by: the median over its late steps (from the first) of how much later than the median rank it arrived; threshold "),
        Span::Figure(Figure::duration(
            x.late_threshold,
            Provenance::inferred("the larger of 50 µs and 1 % of the median step time"),
        )),
        Span::text(" (the larger of 50 µs and 1 % of the median step time)."),
    ])));
    for st in &x.stragglers {
        findings.push(straggler_finding(st, who(st.rank, &st.label), &late_label));
    }
    if let Some(map) = &across.heat_map {
        heat_map_blocks(&mut s, map);
    }
    s
}

/// A late rank's finding: at how many of its steps from the first it arrived late, and
/// by how much (the median), each figure with its label.
fn straggler_finding(
    st: &analysis::Straggler,
    who: String,
    late_label: &dyn Fn() -> Provenance,
) -> Finding {
    Finding::new(vec![
        Span::text(format!(
            "Straggler: {who} arrives late at the last collective of "
        )),
        Span::Figure(Figure::count(
            u64::try_from(st.late_steps).unwrap_or(u64::MAX),
            late_label(),
        )),
        Span::text(" of "),
        count(st.steps_from_first),
        Span::text(format!(" steps from step {} on, by ", st.first_step)),
        Span::Figure(Figure::duration(st.late_by, late_label())),
        Span::text(" (median); the other ranks wait for it there."),
    ])
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
    let mut spans = vec![
        Span::text("Rank × step heat map ("),
        Span::tally(map.rows.len()),
        Span::text(" ranks × "),
        Span::tally(map.steps.len()),
        Span::text(
            " step(s)): each cell is the rank's work time in the step over that step's median rank. ",
        ),
    ];
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
/// A check's figures, in words (`64 of 326 activities without a launch`).
fn check_detail(kind: &CheckKind) -> String {
    match kind {
        CheckKind::Launch {
            without,
            activities,
        } => format!("{without} of {activities} activities without a launch"),
        CheckKind::KernelsPerStep {
            steps,
            fewest,
            most,
        } => format!("{steps} steps, {fewest} to {most} kernels"),
        CheckKind::Budget { streams, failed } => format!("{streams} streams, {failed} failed"),
        CheckKind::Devices { kernels } => per_gpu(kernels),
        CheckKind::XplaneVsJson {
            xplane,
            json,
            json_kernels,
        } => match json_kernels {
            Ok(j) => format!(
                "xplane {}; {}: {}",
                per_gpu(xplane),
                file_name(Path::new(json)),
                per_gpu(j)
            ),
            Err(e) => format!("{json} could not be read: {e}"),
        },
        CheckKind::Ranks { kernels } => kernels
            .iter()
            .map(|(r, n)| format!("{}: {n}", who_text(r)))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Step 2.
fn reconciliation_section(checks: &[Check]) -> Section {
    let mut s = Section::new("reconciliation", "2. Reconciliation");
    let mut t = Table::new("reconciliation", &["capture", "check", "holds", "detail"]);
    for c in checks {
        t.push(vec![
            Cell::text(who_text(&c.who)),
            Cell::text(c.kind.name()),
            Cell::text(if c.holds { "yes" } else { "NO" }),
            Cell::text(check_detail(&c.kind)),
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
                Cell::text(who_text(&c.who)),
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
            Span::text(format!("Straggler (the last rank to finish): {} finished step {} last, ", who_text(&x.who), x.step)),
            Span::Figure(Figure::duration(x.behind_earliest, Provenance::Measured)),
            Span::text(" after the earliest rank; its last activity was "),
            Span::code(x.name.clone()),
            Span::text(format!(" ({}, ", x.class)),
            Span::Figure(Figure::duration(x.dur, Provenance::Measured)),
            Span::text(format!(
                "): {}",
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
        .filter(|l| matches!(l.kind, swimlane::LaneKind::Gpu { .. }))
        .count();
    let host_rows = chart.lanes.len() - gpu_rows;
    s.push(Block::Paragraph(vec![
        Span::text(format!(
            "Step {number} ({}), ",
            if inv.step_chosen { "chosen" } else { "the median step" }
        )),
        Span::tally(gpu_rows),
        Span::text(" GPU stream rows and "),
        Span::tally(host_rows),
        Span::text(" host rows (threads that launch GPU work; launch and runtime calls drawn). Kernels are coloured by class; the bare row background is idle time. [critical]: the stream with the most compute; [last to finish]: the stream that ended the step last on the rank that finished last. Slices narrower than a pixel are merged into density bars."),
    ]));
    s.push(Block::Svg {
        caption: format!("Swimlanes of step {number}"),
        svg: swimlane::render(chart),
    });
    s
}
impl Cell {
    /// A text cell carrying a judgement: the text and its label (e.g. the verdict).
    pub fn figure_text(text: &str, label: Provenance) -> Cell {
        Cell::Text(format!("{text} ({})", label.word()))
    }
}
