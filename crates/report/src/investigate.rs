//! The seven-step investigation of one capture, as a [`Document`].
//!
//! 1. verdict and host-side cause (skip-stats' analysis);
//!    for a directory of ranks, then: across ranks (per-rank step time, clock offsets
//!    from matched collectives, stragglers, the rank × step heat map; `analysis::cross_rank`);
//! 2. reconciliation: each check holds or goes to the trust list;
//! 3. swimlanes of the median step (or a chosen one), every GPU × stream and the host
//!    threads that launch work, the critical stream and the last rank to finish marked;
//! 4. kernel → op (and, where the capture allows, Python line);
//! 5. roofline of the top ops;
//! 6. what to change, ranked by share of the critical stream's window, each with the
//!    step time if the cause went away (inferred) and the knobs to try;
//! 7. the trust list, then what a new capture would answer.
//!
//! A directory of rank traces is read one rank at a time (`load::map_each`): each rank is
//! reduced to its skip-stats report, GPU summary, cross-rank timeline and the few facts
//! the tables need, its `rows.csv` rows go to a scratch file, and its capture is dropped.
//! Only one rank's capture is kept: the one that gets steps 3 to 6 (the straggler the
//! cross-rank pass names, else the slowest by median step; reloaded when it is not the one
//! kept). Memory is bounded by the ranks being read, not by the directory.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use analysis::{GpuSummary, Loaded, SkipAnalysis as Analysis, SkipReport as Report};
use trace_model::{Capture, HostKind, Nanos, Provenance};

use crate::doc::{Block, Cell, Document, Finding, Section, Span, Table, TrustEntry};
use crate::label::{Figure, Value};
use crate::swimlane::{self, Chart, Lane, LaneKind, Slice};

/// Options of an investigation.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The step to draw (its number); default: the median step.
    pub step: Option<i64>,
}

/// What went wrong reading the capture (nothing is written then).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The capture could not be read or analysed.
    #[error(transparent)]
    Analysis(#[from] analysis::Error),
    /// `--step` names a step the capture does not have.
    #[error("{path}: no step {step} (steps: {available})")]
    NoSuchStep {
        /// The capture.
        path: PathBuf,
        /// The step asked for.
        step: i64,
        /// The step numbers the capture has, comma-separated.
        available: String,
    },
}

/// The investigation's result: the document and the raw `rows.csv` of skip-stats.
#[derive(Debug)]
pub struct Investigation {
    /// The report.
    pub document: Document,
    /// skip-stats' `rows.csv` of the same capture, one row per GPU activity: in memory for
    /// one capture, in a scratch directory per rank for a rank directory
    /// ([`Investigation::write_rows`]).
    rows: Rows,
    /// The files of a capture directory that could not be read, each as its error (which
    /// names the file): the report covers the others and lists these in its trust list.
    /// Not empty means a partial result.
    pub unread: Vec<String>,
    /// What to know about the capture directory's set of ranks (duplicate ranks, files
    /// not read as ranks): also in the trust list.
    pub notes: Vec<load::Note>,
}

/// Where `rows.csv` is.
#[derive(Debug)]
enum Rows {
    Bytes(Vec<u8>),
    /// A rank directory's: each rank's part in rank order, kept until the investigation is
    /// dropped.
    Parts {
        parts: Vec<PathBuf>,
        row_parts: analysis::SkipRowParts,
    },
}

impl Investigation {
    /// The files of the report directory but `rows.csv` (see
    /// [`Investigation::write_rows`]): report.md, report.html, report.json and one CSV per
    /// table.
    pub fn files(&self) -> Vec<(String, Vec<u8>)> {
        let doc = &self.document;
        let mut files = vec![
            (
                "report.md".to_owned(),
                crate::markdown::render(doc).into_bytes(),
            ),
            (
                "report.html".to_owned(),
                crate::html::render(doc).into_bytes(),
            ),
            (
                "report.json".to_owned(),
                crate::report_json::to_string(doc).into_bytes(),
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

    /// Writes `rows.csv` (one row per GPU activity, as skip-stats writes it) to `out`, a
    /// rank directory's one rank at a time.
    pub fn write_rows(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        match &self.rows {
            Rows::Bytes(bytes) => out.write_all(bytes),
            Rows::Parts { parts, row_parts } => row_parts.write(parts, out),
        }
    }

    /// Writes the report directory as `investigate --out` writes it into `dir`: the
    /// [`Investigation::files`] and `rows.csv`.
    pub fn write_into(&self, dir: &output_file::DirOutput) -> Result<(), output_file::Error> {
        for (name, bytes) in self.files() {
            dir.write(name, &bytes)?;
        }
        let rows = Path::new("rows.csv");
        let file = dir.create_file(rows)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
        self.write_rows(&mut w)
            .and_then(|()| std::io::Write::flush(&mut w))
            .map_err(|source| {
                output_file::Error::Io(output_file::FsError {
                    path: dir.path().join(rows),
                    action: "cannot write a file of the output",
                    source,
                })
            })
    }
}

const WINDOW_ASSUMPTION: &str = "the other work of the step stays as it is and fills the time the cause took; overlaps on other streams are ignored";

/// Runs the investigation of the capture at `input` (a Kineto trace, a directory of rank
/// traces, an `.xplane.pb`, or a JAX capture directory).
///
/// In a directory of captures, a file that cannot be read leaves the others to report:
/// it is listed in [`Investigation::unread`] and in the trust list. Only when no file can
/// be read is the first file's error returned.
///
/// A directory of rank traces is read one rank at a time (see the module's docs): its
/// per-rank tables have a row per rank, and steps 3 to 6 describe one rank (the
/// straggler, else the slowest by median step), which the report names.
pub fn investigate(input: &Path, options: &Options) -> Result<Investigation, Error> {
    if matches!(load::find(input), Ok(load::Found::ChromeDir(_))) {
        return investigate_ranks(input, options);
    }
    investigate_loaded(input, options)
}

/// Every capture of `input` loaded at once (a file, an XSpace, a JAX capture directory, a
/// multi-process export).
fn investigate_loaded(input: &Path, options: &Options) -> Result<Investigation, Error> {
    let each = load::load_each(input).map_err(analysis::Error::from)?;
    let unread: Vec<String> = each
        .failed
        .iter()
        .map(|e| analysis::error_chain(e))
        .collect();
    let loaded = each.loaded;
    let notes = each.notes;
    let mut failed = each.failed;
    if loaded.is_empty() && !failed.is_empty() {
        return Err(analysis::Error::from(failed.remove(0)).into());
    }
    let mut rows_csv = Vec::new();
    let analysis = analysis::skip_stats_loaded(
        input,
        &loaded,
        &analysis::SkipConfig::default(),
        &mut rows_csv,
    )?;
    check_step(input, &analysis.reports[0], options)?;
    let mut captures = PerCapture::default();
    for l in &loaded {
        captures.push(CaptureParts::of(l));
    }
    let drawn: Vec<(&Report, &Loaded)> = analysis.reports.iter().zip(&loaded).collect();
    let document = document(&Parts {
        input,
        options,
        analysis: &analysis,
        captures: &captures,
        drawn: &drawn,
        roofline: roofline_of(&loaded),
        attribution: loaded.first().and_then(attribution_of),
        detail_note: None,
        unread: &unread,
        notes: &notes,
        xplane: match loaded.as_slice() {
            [one] => Some(one),
            _ => None,
        },
    });
    Ok(Investigation {
        document,
        rows: Rows::Bytes(rows_csv),
        unread,
        notes,
    })
}

/// `--step` must name a step of the capture whose steps are drawn.
fn check_step(input: &Path, report: &Report, options: &Options) -> Result<(), Error> {
    let Some(step) = options.step else {
        return Ok(());
    };
    if report.steps.steps.iter().any(|s| s.number == step) {
        return Ok(());
    }
    Err(Error::NoSuchStep {
        path: input.to_path_buf(),
        step,
        available: report
            .steps
            .steps
            .iter()
            .map(|s| s.number.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// One rank of a directory, reduced to what the report needs.
struct RankSummary {
    report: Report,
    parts: CaptureParts,
    /// Its `rows.csv` rows (with the rank column, no header).
    rows: PathBuf,
}

/// What the report keeps of one capture besides its skip-stats report.
struct CaptureParts {
    gpu: GpuSummary,
    timeline: analysis::RankTimeline,
    facts: CaptureFacts,
}

impl CaptureParts {
    fn of(l: &Loaded) -> CaptureParts {
        let label = l.path.to_string_lossy();
        CaptureParts {
            gpu: analysis::gpu_summary(&l.capture, &label, l.rank),
            timeline: analysis::rank_timeline(&l.capture, &label, l.rank),
            facts: capture_facts(l),
        }
    }
}

/// The [`CaptureParts`] of every capture (rank), in the order of `analysis.reports`.
#[derive(Default)]
struct PerCapture {
    summaries: Vec<GpuSummary>,
    facts: Vec<CaptureFacts>,
    timelines: Vec<analysis::RankTimeline>,
}

impl PerCapture {
    fn push(&mut self, parts: CaptureParts) {
        self.summaries.push(parts.gpu);
        self.facts.push(parts.facts);
        self.timelines.push(parts.timeline);
    }
}

/// What orders ranks by slowness: the median steady-state step, ties to the lower rank
/// (then path), so the choice does not depend on the order ranks finish reading in.
type SlowKey = (Option<Nanos>, std::cmp::Reverse<(Option<i64>, PathBuf)>);

fn slow_key(report: &Report, path: &Path) -> SlowKey {
    (
        report.steady_step_spread().map(|s| s.median),
        std::cmp::Reverse((report.rank, path.to_path_buf())),
    )
}

/// A directory of rank traces, one rank at a time on `load::map_each`'s pool.
fn investigate_ranks(input: &Path, options: &Options) -> Result<Investigation, Error> {
    let config = analysis::SkipConfig::default();
    let row_parts = analysis::SkipRowParts::create("investigate-rows")?;
    // The slowest rank so far, by `slow_key`: the one capture kept past its summary.
    let kept: Mutex<Option<(SlowKey, Loaded)>> = Mutex::new(None);
    let mapped = load::map_each(input, |l| -> Result<RankSummary, Error> {
        let (report, part) = row_parts.report(&l, &config)?;
        let summary = RankSummary {
            parts: CaptureParts::of(&l),
            rows: part,
            report,
        };
        let key = slow_key(&summary.report, &l.path);
        let mut kept = kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if kept.as_ref().is_none_or(|(best, _)| key > *best) {
            *kept = Some((key, l));
        }
        Ok(summary)
    })
    .map_err(analysis::Error::from)?;
    let mut ranks = Vec::new();
    let mut failed = Vec::new();
    for m in mapped {
        match m {
            Ok((path, rank, summary)) => ranks.push((path, rank, summary?)),
            Err(e) => failed.push(e),
        }
    }
    if ranks.is_empty() {
        if !failed.is_empty() {
            return Err(analysis::Error::from(failed.remove(0)).into());
        }
        // Nothing in the directory: the loader says what, as for any other input.
        return investigate_loaded(input, options);
    }
    let unread: Vec<String> = failed.iter().map(|e| analysis::error_chain(e)).collect();
    let notes = load::rank_notes(input, ranks.iter().map(|(p, r, _)| (p.as_path(), *r)));
    let (mut reports, mut captures, mut parts, mut paths) =
        (vec![], PerCapture::default(), vec![], vec![]);
    for (path, rank, s) in ranks {
        reports.push(s.report);
        captures.push(s.parts);
        parts.push(s.rows);
        paths.push((path, rank));
    }
    let analysis = analysis::skip_stats_assemble(input, reports, true);
    // The rank of steps 3 to 6: the straggler, else the slowest by median step.
    let cross = analysis::cross_rank(&captures.timelines, &cross_rank_config());
    let straggler = cross
        .as_ref()
        .and_then(|x| x.stragglers.first())
        .and_then(|st| {
            captures
                .timelines
                .iter()
                .position(|t| t.rank == st.rank && t.label == st.label)
        });
    let slowest = (0..paths.len())
        .max_by_key(|&i| slow_key(&analysis.reports[i], &paths[i].0))
        .expect("invariant: at least one rank was read");
    let (chosen, why) = match straggler {
        Some(i) => (
            i,
            "the straggler found across ranks: it arrives latest at the steps' last collectives",
        ),
        None => (slowest, "the slowest rank by median steady-state step"),
    };
    let kept = kept
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let detail = match kept {
        Some((_, l)) if l.path == paths[chosen].0 => l,
        other => {
            drop(other);
            let mut l = load::load_single(&paths[chosen].0).map_err(analysis::Error::from)?;
            l.rank = paths[chosen].1;
            l
        }
    };
    let report = &analysis.reports[chosen];
    check_step(&detail.path, report, options)?;
    let detail_note = (analysis.reports.len() > 1).then(|| (rank_label(report), why));
    let document = document(&Parts {
        input,
        options,
        analysis: &analysis,
        captures: &captures,
        drawn: &[(report, &detail)],
        roofline: roofline_of(std::slice::from_ref(&detail)),
        attribution: attribution_of(&detail),
        detail_note,
        unread: &unread,
        notes: &notes,
        xplane: None,
    });
    Ok(Investigation {
        document,
        rows: Rows::Parts { parts, row_parts },
        unread,
        notes,
    })
}

/// What the report needs of one capture besides its skip-stats report and GPU summary,
/// taken while the capture is in memory.
#[derive(Debug, Clone)]
struct CaptureFacts {
    /// How the capture is named in per-capture tables: `rank N`, else its file name.
    who: String,
    /// Its devices' models and vendors, one entry per device, each list sorted.
    gpus: [Vec<String>; 2],
    /// GPU activities per device ordinal (devices without any left out).
    device_kernels: Vec<(i64, usize)>,
    /// GPU activities.
    activities: usize,
    /// Their summed duration (ns).
    gpu_time: i64,
    /// Whether the capture has steps.
    has_steps: bool,
    format: trace_model::Format,
}

fn capture_facts(l: &Loaded) -> CaptureFacts {
    let c = &l.capture;
    let mut gpus: [Vec<String>; 2] = Default::default();
    for d in c.devices() {
        gpus[0].extend(d.properties.name.clone());
        match d.vendor {
            trace_model::Vendor::Nvidia => gpus[1].push("NVIDIA".to_owned()),
            trace_model::Vendor::Amd => gpus[1].push("AMD".to_owned()),
            _ => {}
        }
    }
    gpus.iter_mut().for_each(|g| g.sort());
    CaptureFacts {
        who: l
            .rank
            .map_or_else(|| file_name(&l.path), |r| format!("rank {r}")),
        gpus,
        device_kernels: device_kernel_counts(c),
        activities: c.activities().len(),
        gpu_time: c.activities().iter().map(|x| x.dur.0).sum(),
        has_steps: !c.steps().is_empty(),
        format: c.format(),
    }
}

/// Everything the document is made from.
struct Parts<'a> {
    input: &'a Path,
    options: &'a Options,
    analysis: &'a Analysis,
    captures: &'a PerCapture,
    /// The captures steps 3 to 6 describe, with their reports: every capture of a single
    /// input, one rank of a rank directory. The first is the one of steps 4 to 6.
    drawn: &'a [(&'a Report, &'a Loaded)],
    roofline: Option<Result<roofline::Roofline, String>>,
    attribution: Option<Result<attribution::Attribution, String>>,
    /// For a rank directory of two ranks or more: which rank steps 3 to 6 describe (`rank
    /// N`), and why.
    detail_note: Option<(String, &'static str)>,
    unread: &'a [String],
    notes: &'a [load::Note],
    /// The one capture of a single input (for the XSpace vs JSON check).
    xplane: Option<&'a Loaded>,
}

fn document(p: &Parts<'_>) -> Document {
    let (input, analysis) = (p.input, p.analysis);
    let mut doc = Document::new(format!("Investigation of {}", file_name(input)));
    doc.subtitle.push(format!("input: {}", input.display()));
    doc.subtitle.push(format!(
        "{} capture(s), format: {}; every figure is labelled measured, read or inferred (hover for its source or assumptions in the HTML page)",
        analysis.reports.len(),
        analysis.reports[0].format.describe()
    ));
    let mut trust = Vec::new();
    let mut new_capture = Vec::new();
    let (detail_report, detail) = p.drawn[0];

    let mut verdict = verdict_section(analysis, &mut doc.findings);
    verdict.push(Block::Table(steps_table(analysis, &p.captures.facts)));
    let ranks = analysis::cross_rank(&p.captures.timelines, &cross_rank_config())
        .map(|x| cross_rank_section(&x, &p.captures.timelines, &mut doc.findings));
    let reconciliation = reconciliation_section(analysis, &p.captures.facts, p.xplane, &mut trust);
    let budgets = budget_section(analysis);
    let mut lanes = swimlane_section(analysis, p.drawn, p.options);
    let mut ops = ops_section(
        &p.captures.summaries,
        &p.captures.facts,
        p.attribution.clone(),
        &mut doc.findings,
        &mut trust,
        &mut new_capture,
    );
    let mut roof = roofline_section(p.roofline.clone(), &mut trust, &mut new_capture);
    let mut change = change_section(detail_report, &detail.capture, &mut doc.findings);
    if let Some((who, why)) = &p.detail_note {
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
    collect_trust(analysis, &p.captures.facts, &mut trust, &mut new_capture);
    unread_trust(p.unread, &mut trust, &mut new_capture);
    for note in p.notes {
        trust.push(TrustEntry {
            code: match note {
                load::Note::DuplicateRank { .. } => "duplicate-rank",
                _ => "not-a-rank",
            }
            .into(),
            message: note.to_string(),
            count: None,
            share: None,
        });
    }
    doc.sections.push(verdict);
    doc.sections.extend(ranks);
    doc.sections
        .extend([reconciliation, budgets, lanes, ops, roof, change]);
    let mut trust_section = Section::new(
        "trust",
        "7. Trust list, then what a new capture would answer",
    );
    trust_section.push(Block::Trust(trust));
    trust_section.para("Needs a new capture:");
    if new_capture.is_empty() {
        trust_section.para("nothing: the capture answers the questions above.");
    } else {
        trust_section.push(Block::List(
            new_capture
                .into_iter()
                .map(|s| vec![Span::text(s)])
                .collect(),
        ));
    }
    doc.sections.push(trust_section);
    doc
}

fn cross_rank_config() -> analysis::CrossRankConfig {
    analysis::CrossRankConfig {
        late_threshold: None,
    }
}

fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn pct(share: f64) -> Figure {
    Figure::percent(100.0 * share, Provenance::Measured)
}

fn rank_label(r: &Report) -> String {
    r.rank
        .map_or_else(|| file_name(Path::new(&r.label)), |n| format!("rank {n}"))
}

/// The steady-state step times each capture (and, over several, all of them) gives, with
/// the quartiles compare's noise rule takes, and its GPUs: what compare reads back when
/// this report.json is one of its sides.
fn steps_table(a: &Analysis, facts: &[CaptureFacts]) -> Table {
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
    for (r, f) in a.reports.iter().zip(facts) {
        let steps = r.steady_step_durations();
        let mean = match (r.window, steps.len()) {
            (Some(w), n) if n > 0 => dur(Nanos(w.span().0 / n as i64)),
            _ => Cell::Empty,
        };
        for (all, one) in every_gpu.iter_mut().zip(&f.gpus) {
            all.extend(one.iter().cloned());
        }
        devices += r.devices.len();
        all.extend(steps.iter().copied());
        row(
            rank_label(r),
            r.steps.origin.describe(),
            &steps,
            mean,
            f.gpus.clone(),
            r.devices.len(),
        );
    }
    if a.reports.len() > 1 {
        every_gpu.iter_mut().for_each(|g| g.sort());
        let origin = a.reports[0].steps.origin.describe();
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
fn verdict_section(a: &Analysis, findings: &mut Vec<Finding>) -> Section {
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
    for r in &a.reports {
        let v = &r.verdict;
        let crit = r.critical_stream().map_or("-".to_owned(), |c| {
            format!("GPU {} stream {}", c.device, c.stream)
        });
        let step = r.steps.duration_spread().map_or(Cell::Empty, |sp| {
            Cell::figure(
                Figure::duration(sp.median, Provenance::Measured)
                    .with_range(Value::Duration(sp.min.0), Value::Duration(sp.max.0)),
            )
        });
        let share = |x: Option<f64>| x.map_or(Cell::Empty, |x| Cell::figure(pct(x)));
        t.push(vec![
            Cell::text(rank_label(r)),
            Cell::figure_text(v.bound.label(), verdict_label()),
            Cell::text(crit),
            Cell::figure(pct(v.busy_share)),
            Cell::figure(pct(v.collective_share)),
            Cell::figure(pct(v.idle_share)),
            share(v.host_wait_share),
            share(v.stream_wait_share),
            share(v.sync_wait_share),
            share(v.unknown_wait_share),
            v.queue_ratio.map_or(Cell::Empty, |q| {
                Cell::figure(Figure::ratio(q, Provenance::Measured))
            }),
            step,
        ]);
    }
    s.push(Block::Table(t.with_note(
        "G: busy share of the critical (most compute) stream, collectives left out (their time includes waiting for peers). Its idle time is split gap by gap on each gap's own evidence: H, before the launch call of the next activity while the launching thread was not in a synchronising call; other stream or event, after the launch with a stream-wait-event call (or graph dependencies) before it; host in a sync call, while the launching thread was blocked in a synchronising call (the host waiting for the GPU); U, no evidence. Rules: GPU-bound if G >= 90 %, or >= 80 % and Q >= 1; host/launch-bound if idle >= 50 % and H >= 50 %; inconclusive if idle >= 50 % and U >= 50 %; else mixed.",
    )));
    if let Some(first) = a.reports.first() {
        let v = &first.verdict;
        let mut spans = vec![
            Span::text(format!("{}: ", rank_label(first))),
            Span::Figure(Figure {
                value: Value::Percent(100.0 * v.busy_share),
                label: Provenance::Measured,
                range: share_range(a, |r| r.verdict.busy_share),
            }),
            Span::text(format!(
                " of the window the critical stream computes; verdict {} (inferred)",
                v.bound.label()
            )),
        ];
        if let Some(gc) = first.gap_causes.as_ref().filter(|g| g.total().0 > 0) {
            // The largest cause of the idle time, with the evidence that decided it.
            let cause = [
                analysis::GapCause::HostNotLaunched,
                analysis::GapCause::StreamOrEvent,
                analysis::GapCause::SyncCall,
                analysis::GapCause::Unknown,
            ]
            .into_iter()
            .max_by_key(|&c| (gc.time(c), std::cmp::Reverse(c)))
            .expect("four causes");
            spans.push(Span::text(", and "));
            spans.push(Span::Figure(pct(gc.share(cause))));
            spans.push(Span::text(format!(
                " of its idle time is \"{}\"",
                cause.label()
            )));
            if let Some(e) = gc.evidence_of(cause).next() {
                spans.push(Span::text(format!(" (evidence: {})", e.what)));
            }
        }
        spans.push(Span::text("."));
        findings.push(Finding::new(spans));
        // What bounds the step (analysis::diagnose), the framework, the step evidence.
        let considered: Vec<String> = first
            .steps
            .considered
            .iter()
            .filter(|c| {
                !matches!(
                    c.outcome,
                    analysis::CandidateOutcome::NotTried | analysis::CandidateOutcome::Absent
                )
            })
            .map(|c| c.describe())
            .collect();
        findings.push(Finding::new(vec![Span::text(format!(
            "Diagnosis ({}; inferred): {}. Framework: {} ({}). Step evidence: {}.",
            first.diagnosis.code(),
            first.diagnosis.describe(),
            first.framework.framework.code(),
            first.framework.evidence,
            if considered.is_empty() {
                "none in the capture (the whole capture is one step)".to_owned()
            } else {
                considered.join("; ")
            }
        ))]));
    }
    if let Some(r) = a.reports.first() {
        // Which evidence found the iterations, and what each forward is when it says so.
        let mut kinds: Vec<&str> = r
            .steps
            .forward_kinds
            .iter()
            .map(String::as_str)
            .filter(|k| !k.is_empty())
            .collect();
        kinds.dedup();
        let mut text = format!(
            "Iterations: {} step(s), found from {}",
            r.steps.steps.len(),
            r.steps.origin.describe()
        );
        if !kinds.is_empty() {
            text.push_str(&format!("; forwards: {}", kinds.join(", ")));
        }
        // The steady steps' host and GPU sides (analysis::step_sides), medians.
        if let Some(sides) = r.step_sides {
            let med = |s: Option<analysis::Spread>| s.map_or("-".to_owned(), |s| s.median.human());
            text.push_str(&format!(
                "; steady steps (medians, measured): period {} start to start, host range {}, GPU span of the work launched {}, GPU end after host end {}; timed by {}",
                med(sides.period),
                sides.host.median.human(),
                med(sides.gpu),
                med(sides.lag),
                match sides.basis {
                    analysis::StepBasis::GpuSpan => "the GPU span (the host runs ahead)",
                    _ => "the host range",
                }
            ));
        }
        let mut spans = vec![Span::text(text)];
        // Per kind of forward (the engine's markers say which): count and step time.
        for (i, (kind, count, spread)) in r.steps.forward_spreads().into_iter().enumerate() {
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
    if let Some(w) = a
        .reports
        .first()
        .map(|r| &r.warm_up)
        .filter(|w| !w.steps.is_empty() || w.event_count > 0)
    {
        {
            let evidence: Vec<String> = w
                .events
                .iter()
                .take(3)
                .map(|e| format!("`{}` {}", e.name, e.dur.human()))
                .collect();
            let mut spans = vec![Span::text(format!(
                "Warm-up: {} of {} step(s), ",
                w.steps.len(),
                a.reports[0].steps.steps.len()
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
            } else if w.steps.is_empty() {
                "; they cover less than 10 % of any step, so every step is kept."
            } else {
                "; left out of the verdict, budgets and causes."
            }));
            findings.push(Finding::new(spans));
        }
    }
    if let Some(h) = a.reports.first().and_then(|r| r.host_only.as_ref()) {
        // Host-only time of the steps: the GPU has nothing of the step yet, or any more.
        if (h.before_gpu + h.after_gpu).0 > 0 {
            let top: Vec<String> = h
                .top
                .iter()
                .take(3)
                .map(|t| format!("`{}` ({})", t.name, t.overlapped.human()))
                .collect();
            let mut spans = vec![
                Span::text("The GPU has no work of the step for "),
                Span::Figure(pct(h.share())),
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
    }
    if let Some(lf) = &a.last_finisher {
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
fn cross_rank_section(
    x: &analysis::CrossRank,
    timelines: &[analysis::RankTimeline],
    findings: &mut Vec<Finding>,
) -> Section {
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
    if let Some(map) = analysis::step_heat_map(timelines) {
        heat_map_blocks(&mut s, &map);
    }
    s
}

/// The rank × step heat map (SVG; the Markdown shows its caption) and its hottest cells
/// as text.
fn heat_map_blocks(s: &mut Section, map: &analysis::StepHeatMap) {
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

/// The range of a share over the reports (ranks), when there are several.
fn share_range(a: &Analysis, f: impl Fn(&Report) -> f64) -> Option<(Value, Value)> {
    if a.reports.len() < 2 {
        return None;
    }
    let v: Vec<f64> = a.reports.iter().map(f).collect();
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((Value::Percent(100.0 * lo), Value::Percent(100.0 * hi)))
}

/// Step 2.
fn reconciliation_section(
    a: &Analysis,
    facts: &[CaptureFacts],
    single: Option<&Loaded>,
    trust: &mut Vec<TrustEntry>,
) -> Section {
    let mut s = Section::new("reconciliation", "2. Reconciliation");
    let mut t = Table::new("reconciliation", &["capture", "check", "holds", "detail"]);
    let mut add = |t: &mut Table, who: &str, check: &str, holds: bool, detail: String| {
        t.push(vec![
            Cell::text(who),
            Cell::text(check),
            Cell::text(if holds { "yes" } else { "NO" }),
            Cell::text(detail.clone()),
        ]);
        if !holds {
            trust.push(TrustEntry {
                code: format!(
                    "check-{}",
                    check.split_whitespace().next().unwrap_or("check")
                ),
                message: format!("{who}: {check}: {detail}"),
                count: None,
                share: None,
            });
        }
    };
    for (r, f) in a.reports.iter().zip(facts) {
        let who = rank_label(r);
        let la = &r.launch_all;
        add(
            &mut t,
            &who,
            "launch: every GPU activity has a host launch",
            la.without_launch == 0,
            format!(
                "{} of {} activities without a launch",
                la.without_launch, la.activities
            ),
        );
        let per_step: Vec<usize> = r
            .per_step
            .iter()
            .filter_map(|s| s.skip.as_ref().map(|m| m.kernels))
            .collect();
        if per_step.len() > 1 {
            let (lo, hi) = (
                per_step.iter().min().copied().unwrap_or(0),
                per_step.iter().max().copied().unwrap_or(0),
            );
            add(
                &mut t,
                &who,
                "steps: kernels per step constant",
                lo == hi,
                format!("{} steps, {lo} to {hi} kernels", per_step.len()),
            );
        }
        let failed = r.streams.iter().filter(|s| !s.budget.check.holds()).count();
        add(
            &mut t,
            &who,
            "budget: each part = its interval-union difference, per stream",
            failed == 0,
            format!("{} streams, {failed} failed", r.streams.len()),
        );
        let devices = &f.device_kernels;
        if devices.len() > 1 {
            let same = devices.windows(2).all(|w| w[0].1 == w[1].1);
            add(
                &mut t,
                &who,
                "devices: all GPUs run the same number of kernels",
                same,
                devices
                    .iter()
                    .map(|(d, n)| format!("GPU {d}: {n}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            );
        }
    }
    // An XSpace next to its converted trace.json.gz (a JAX capture directory): the same
    // GPU activities per device in both.
    if let Some(l) = single
        && l.capture.format() == trace_model::Format::XPlane
        && let Some(json) = sibling_trace_json(&l.path)
    {
        let who = rank_label(&a.reports[0]);
        match load::load_single(&json) {
            Ok(other) => {
                let (x, j) = (
                    device_kernel_counts(&l.capture),
                    device_kernel_counts(&other.capture),
                );
                let show = |v: &[(i64, usize)]| {
                    v.iter()
                        .map(|(d, n)| format!("GPU {d}: {n}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                add(
                    &mut t,
                    &who,
                    "xplane vs json: GPU activities per device equal in the .xplane.pb and its trace.json.gz",
                    x == j,
                    format!("xplane {}; {}: {}", show(&x), file_name(&json), show(&j)),
                );
            }
            Err(e) => add(
                &mut t,
                &who,
                "xplane vs json: GPU activities per device equal in the .xplane.pb and its trace.json.gz",
                false,
                format!("{} could not be read: {e}", json.display()),
            ),
        }
    }
    if a.reports.len() > 1 {
        let counts: Vec<(String, usize)> = a
            .reports
            .iter()
            .map(|r| (rank_label(r), r.launch_kernels.activities))
            .collect();
        let same = counts.windows(2).all(|w| w[0].1 == w[1].1);
        add(
            &mut t,
            "all ranks",
            "ranks: every rank runs the same number of kernels",
            same,
            counts
                .iter()
                .map(|(r, n)| format!("{r}: {n}"))
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
    s.push(Block::Table(t));
    s
}

/// The `*.trace.json.gz` beside an XSpace (XProf writes both into a capture directory).
fn sibling_trace_json(xplane: &Path) -> Option<PathBuf> {
    let dir = xplane.parent()?;
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".trace.json.gz") && p.is_file())
        .collect();
    found.sort();
    (found.len() == 1).then(|| found.remove(0))
}

fn device_kernel_counts(c: &Capture) -> Vec<(i64, usize)> {
    let mut out: Vec<(i64, usize)> = c.devices().iter().map(|d| (d.ordinal, 0)).collect();
    for act in c.activities() {
        let ord = c.device(c.stream(act.stream).device).ordinal;
        if let Some(e) = out.iter_mut().find(|e| e.0 == ord) {
            e.1 += 1;
        }
    }
    out.retain(|e| e.1 > 0);
    out
}

/// The per device × stream budget table.
fn budget_section(a: &Analysis) -> Section {
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
    for r in &a.reports {
        let rows = r
            .streams
            .iter()
            .map(|st| (st.device, st.stream.to_string(), &st.budget))
            .chain(
                r.devices
                    .iter()
                    .map(|d| (d.device, "all".to_owned(), &d.budget)),
            );
        for (dev, stream, b) in rows {
            let part = |x: Nanos| Cell::figure(Figure::duration(x, Provenance::Measured));
            t.push(vec![
                Cell::text(rank_label(r)),
                Cell::text(dev.to_string()),
                Cell::text(stream),
                Cell::figure(Figure::duration(b.span(), Provenance::Measured)),
                part(b.compute),
                part(b.collective),
                part(b.memcpy),
                part(b.memset),
                part(b.idle),
                Cell::figure(pct(b.share(b.idle))),
            ]);
        }
    }
    s.push(Block::Table(t.with_note(
        "Over the analysed window (the steady-state steps' wall time when the steps are host ranges, widened to their GPU activities, else first start to last end of the steps' GPU activities; warm-up steps and work in flight at the capture's start left out). Overlaps merged, precedence compute > collective > memcpy > memset. On the `all` rows, collective and memcpy time is what no compute kernel overlapped: exposed.",
    )));
    s
}

/// Step 3.
fn swimlane_section(a: &Analysis, drawn: &[(&Report, &Loaded)], options: &Options) -> Section {
    let mut s = Section::new("swimlanes", "3. Swimlanes of one step");
    let first = drawn[0].0;
    let chosen = match options.step {
        Some(n) => first.steps.steps.iter().position(|st| st.number == n),
        None => first.steps.median_step(),
    };
    let Some(chosen) = chosen else {
        s.para("No step in the capture: nothing to draw.");
        return s;
    };
    let number = first.steps.steps[chosen].number;
    let aligned = drawn
        .iter()
        .all(|(_, l)| l.capture.meta().base_time_ns.is_some());
    let base = |l: &Loaded| {
        if aligned {
            l.capture.meta().base_time_ns.unwrap_or(0)
        } else {
            0
        }
    };
    let mut lanes = Vec::new();
    let (mut start, mut end) = (i64::MAX, i64::MIN);
    let last_rank = a.last_finisher.as_ref().map(|lf| lf.rank);
    for &(r, l) in drawn {
        let Some(m) = r.per_step.iter().find(|m| m.number == number) else {
            continue;
        };
        let window = m.gpu_range.unwrap_or(m.range);
        let host_window = m.range;
        let off = base(l);
        start = start.min(off + window.start.0.min(host_window.start.0));
        end = end.max(off + window.end.0.max(host_window.end.0));
        let c = &l.capture;
        let multi = a.reports.len() > 1;
        let prefix = if multi {
            format!("{} ", rank_label(r))
        } else {
            String::new()
        };
        let mut last_stream: Option<(usize, i64)> = None;
        for st in c.streams() {
            let acts = c.stream_activities(st.id);
            let slices: Vec<Slice> = acts
                .iter()
                .filter(|x| x.end() > window.start && x.start < window.end)
                .map(|x| Slice {
                    start: off + x.start.0,
                    end: off + x.end().0,
                    class: x.class.word(),
                    title: format!(
                        "{} — {}{}",
                        c.name(x.name),
                        x.dur.human(),
                        c.launching_op(x)
                            .map(|o| format!(" — op {}", c.name(o.name)))
                            .unwrap_or_default()
                    ),
                })
                .collect();
            if slices.is_empty() {
                continue;
            }
            let stream_end = slices.iter().map(|x| x.end).max().unwrap_or(0);
            if last_stream.is_none_or(|(_, e)| stream_end > e) {
                last_stream = Some((lanes.len(), stream_end));
            }
            let critical = r.critical_stream().is_some_and(|cs| cs.stream_id == st.id);
            lanes.push(Lane {
                label: format!(
                    "{prefix}GPU {} stream {}",
                    c.device(st.device).ordinal,
                    st.ordinal
                ),
                kind: LaneKind::Gpu,
                mark: critical.then(|| "critical".to_owned()),
                slices,
            });
        }
        if multi
            && last_rank == Some(r.rank)
            && let Some((idx, _)) = last_stream
        {
            let mark = lanes[idx].mark.take();
            lanes[idx].mark = Some(match mark {
                Some(m) => format!("{m}, last to finish"),
                None => "last to finish".to_owned(),
            });
        }
        for th in analysis::launching_threads(c) {
            let slices: Vec<Slice> = c
                .thread_events(th)
                .iter()
                .filter(|e| matches!(e.kind, HostKind::Launch | HostKind::Runtime))
                .filter(|e| {
                    e.end() > host_window.start && e.start < host_window.end.max(window.end)
                })
                .map(|e| Slice {
                    start: off + e.start.0,
                    end: off + e.end().0,
                    class: "host",
                    title: format!("{} — {}", c.name(e.name), e.dur.human()),
                })
                .collect();
            lanes.push(Lane {
                label: format!("{prefix}host thread {}", c.thread(th).tid),
                kind: LaneKind::Host,
                mark: None,
                slices,
            });
        }
    }
    if lanes.is_empty() || start >= end {
        s.para(format!(
            "Step {number} has no GPU activity: nothing to draw."
        ));
        return s;
    }
    if let Some(lf) = &a.last_finisher
        && let Some(&(r, l)) = drawn.iter().find(|(r, _)| r.rank == lf.rank)
        && let Some(m) = r.per_step.iter().find(|m| m.number == lf.step)
        && let Some(w) = m.gpu_range
    {
        // What the last rank ran last in that step: a collective means it waited for (or
        // with) its peers at the end; compute means it had more work than the others.
        let c = &l.capture;
        let last = c
            .activities()
            .iter()
            .filter(|x| x.start < w.end && x.end() > w.start)
            .max_by_key(|x| x.end());
        if let Some(x) = last {
            s.push(Block::Paragraph(vec![
                Span::text(format!("Straggler (the last rank to finish): {} finished step {} last, ", rank_label(r), lf.step)),
                Span::Figure(Figure::duration(lf.behind_earliest, Provenance::Measured)),
                Span::text(" after the earliest rank; its last activity was "),
                Span::code(c.name(x.name).to_owned()),
                Span::text(format!(
                    " ({}, {}): {}",
                    x.class.word(),
                    x.dur.human(),
                    if x.class.is_collective() {
                        "a collective, so it ended waiting for its peers or they for it; compare when each rank launched it"
                    } else {
                        "compute, so this rank had more (or slower) work in the step than the others"
                    }
                )),
            ]));
        }
    }
    let gpu_rows = lanes.iter().filter(|l| l.kind == LaneKind::Gpu).count();
    let host_rows = lanes.len() - gpu_rows;
    s.para(format!(
        "Step {number} ({}), {gpu_rows} GPU stream rows and {host_rows} host rows (threads that launch GPU work; launch and runtime calls drawn). Kernels are coloured by class; the bare row background is idle time. [critical]: the stream with the most compute; [last to finish]: the stream that ended the step last on the rank that finished last. Slices narrower than a pixel are merged into density bars.",
        if options.step.is_some() { "chosen" } else { "the median step" }
    ));
    s.push(Block::Svg {
        caption: format!("Swimlanes of step {number}"),
        svg: swimlane::render(&Chart { start, end, lanes }),
    });
    s
}

/// Step 4.
fn ops_section(
    summaries: &[GpuSummary],
    facts: &[CaptureFacts],
    attribution: Option<Result<attribution::Attribution, String>>,
    findings: &mut Vec<Finding>,
    trust: &mut Vec<TrustEntry>,
    new_capture: &mut Vec<String>,
) -> Section {
    let mut s = Section::new(
        "ops",
        "4. Where the GPU time goes: buckets, ops and Python lines",
    );
    let mut buckets_t = Table::new(
        "buckets",
        &["capture", "bucket", "GPU time", "share", "activities"],
    );
    // The layout column only where some op has layout transposes.
    let any_layout = summaries
        .iter()
        .any(|sm| sm.ops.iter().take(20).any(|o| o.layout_ns > Nanos::ZERO));
    let mut ops_columns = vec!["capture", "op", "bucket", "GPU time", "share", "activities"];
    if any_layout {
        ops_columns.push("layout transposes (of the op)");
    }
    let mut ops_t = Table::new("ops", &ops_columns);
    for (sm, f) in summaries.iter().zip(facts) {
        let who = &f.who;
        for b in &sm.buckets {
            buckets_t.push(vec![
                Cell::text(who.clone()),
                Cell::text(b.bucket),
                Cell::figure(Figure::duration(b.time_ns, Provenance::Measured)),
                Cell::figure(Figure::percent(b.percent, Provenance::Measured)),
                Cell::figure(Figure::count(b.activities, Provenance::Measured)),
            ]);
        }
        for o in sm.ops.iter().take(20) {
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
                    o.bucket.to_owned()
                }),
                Cell::figure(Figure::duration(o.time_ns, Provenance::Measured)),
                Cell::figure(Figure::percent(o.percent, Provenance::Measured)),
                Cell::figure(Figure::count(o.activities, Provenance::Measured)),
            ];
            if any_layout {
                row.push(layout_cell(o.layout_ns, o.time_ns));
            }
            ops_t.push(row);
        }
    }
    if let Some(sm) = summaries.first() {
        for o in &sm.ops {
            findings.extend(layout_finding(
                &o.name,
                o.layout_ns,
                o.time_ns,
                sm.gpu_time_ns,
                false,
            ));
        }
    }
    if let Some(sm) = summaries.first()
        && let Some(top) = sm.buckets.first()
    {
        findings.push(Finding::new(vec![
            Span::text(format!("The largest GPU-time bucket is {}: ", top.bucket)),
            Span::Figure(Figure::percent(top.percent, Provenance::Measured)),
            Span::text(" of GPU time; matmul + convolution + attention take "),
            Span::Figure(Figure::percent(
                sm.core_compute_percent,
                Provenance::Measured,
            )),
            Span::text("."),
        ]));
    }
    s.para("GPU time by bucket (default mode of analyze-profile: an ATen op's name when its kernels are of its kind, else each kernel's class):");
    s.push(Block::Table(buckets_t));
    s.para("Top CPU ops by the GPU time they launched (kernel → correlation id → launch → innermost CPU op; a layout transpose goes to the convolution or GEMM op around its launch, which it serves):");
    s.push(Block::Table(ops_t));
    match attribution {
        None => s.para("Kernel → Python line: run `attribute-kernels` on one rank's file."),
        Some(Err(e)) => {
            s.para(format!("Kernel → Python line could not be attributed: {e}"));
            trust.push(TrustEntry {
                code: "attribution-failed".into(),
                message: format!("attribute-kernels: {e}"),
                count: None,
                share: None,
            });
        }
        Some(Ok(at)) => attribution_blocks(&mut s, &at, findings, trust, new_capture),
    }
    s
}

/// Attribution of one capture: kernel → op → Python line.
fn attribution_of(first: &Loaded) -> Option<Result<attribution::Attribution, String>> {
    if first.format() == trace_model::Format::JaxTraceJson {
        return None;
    }
    let result = attribution::attribute_loaded(first, &attribution::Config::default());
    Some(result.map_err(|e| e.to_string()))
}

fn attribution_blocks(
    s: &mut Section,
    at: &attribution::Attribution,
    findings: &mut Vec<Finding>,
    trust: &mut Vec<TrustEntry>,
    new_capture: &mut Vec<String>,
) {
    let total = at.gpu_time_ns().0.max(1) as f64;
    s.para(format!(
        "Kernel → {} → Python line, for {} (attribute-kernels; match kinds: exact = the chain is complete, name/order = matched inside a window, none = not attributed):",
        if at.format == attribution::SourceFormat::Kineto { "CPU op" } else { "HLO instruction → op" },
        at.path
    ));
    let mut kinds = Table::new(
        "match_kinds",
        &["match kind", "kernels", "GPU time", "share of GPU time"],
    );
    for (kind, (n, t)) in at.by_match_kind() {
        kinds.push(vec![
            Cell::text(kind.as_str()),
            Cell::figure(Figure::count(n, Provenance::Measured)),
            Cell::figure(Figure::duration(Nanos(t), Provenance::Measured)),
            Cell::figure(Figure::percent(
                100.0 * t as f64 / total,
                Provenance::Measured,
            )),
        ]);
    }
    s.push(Block::Table(kinds));
    let lines = at.lines();
    if !lines.is_empty() {
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
        for l in lines.iter().take(15) {
            t.push(vec![
                Cell::code(l.source_line.clone()),
                Cell::code(l.function.clone()),
                Cell::figure(Figure::count(l.kernels, Provenance::Measured)),
                Cell::figure(Figure::duration(l.gpu_time_ns, Provenance::Measured)),
                Cell::figure(Figure::percent(
                    100.0 * l.gpu_time_ns.0 as f64 / total,
                    Provenance::Measured,
                )),
                Cell::figure(Figure::percent(l.share_pct, Provenance::Measured)),
            ]);
        }
        s.para("Top Python lines by the GPU time of the kernels they launched:");
        s.push(Block::Table(t));
        findings.extend(top_line_finding(
            &lines,
            at.gpu_time_ns(),
            at.attributed_time_ns(),
        ));
    }
    if at.format != attribution::SourceFormat::Kineto {
        let ops = at.ops();
        let any_layout = ops.iter().take(15).any(|o| o.layout_ns > Nanos::ZERO);
        let mut columns = vec!["program", "op", "kernels", "GPU time"];
        if any_layout {
            columns.push("layout transposes (of the op)");
        }
        columns.push("Python line");
        let mut t = Table::new("hlo_ops", &columns);
        for o in ops.iter().take(15) {
            let mut row = vec![
                Cell::text(o.program.clone()),
                Cell::code(o.op_name.clone()),
                Cell::figure(Figure::count(o.kernels, Provenance::Measured)),
                Cell::figure(Figure::duration(o.gpu_time_ns, Provenance::Measured)),
            ];
            if any_layout {
                row.push(layout_cell(o.layout_ns, o.gpu_time_ns));
            }
            row.push(Cell::code(o.source_line.clone()));
            t.push(row);
        }
        for o in &ops {
            findings.extend(layout_finding(
                &o.op_name,
                o.layout_ns,
                o.gpu_time_ns,
                at.gpu_time_ns(),
                true,
            ));
        }
        s.para("Top JAX ops (op_name) by GPU time:");
        s.push(Block::Table(t));
    }
    for n in &at.notes {
        trust.push(TrustEntry {
            code: "attribution".into(),
            message: format!("attribute-kernels: {n}"),
            count: None,
            share: None,
        });
    }
    new_capture.extend(at.needs_new_capture.iter().cloned());
}

/// The headline Python line: the first by GPU time outside library frames (site-packages,
/// torch, JAX, the Inductor cache), or the first of all when every line is one; its share
/// of all GPU time, with its share of the attributed time and the attributed share beside.
fn top_line_finding(
    lines: &[attribution::LineRow],
    gpu_ns: Nanos,
    attributed_ns: Nanos,
) -> Option<Finding> {
    let user = lines
        .iter()
        .find(|l| !attribution::is_library_line(&l.source_line));
    let (top, which) = match user {
        Some(l) => (l, "outside library frames"),
        None => (
            lines.iter().find(|l| !l.source_line.is_empty())?,
            "a library frame: no line outside site-packages, torch, JAX or the Inductor cache has GPU time",
        ),
    };
    let pct = |num: Nanos, den: Nanos| {
        Span::Figure(Figure::percent(
            100.0 * num.0 as f64 / den.0.max(1) as f64,
            Provenance::Measured,
        ))
    };
    Some(Finding::new(vec![
        Span::text("The Python line with the most GPU time ("),
        Span::text(which),
        Span::text(") is "),
        Span::code(top.source_line.clone()),
        Span::text(": "),
        pct(top.gpu_time_ns, gpu_ns),
        Span::text(" of all GPU time ("),
        pct(top.gpu_time_ns, attributed_ns),
        Span::text(" of the attributed GPU time; kernels attributed to a line or op are "),
        pct(attributed_ns, gpu_ns),
        Span::text(" of all GPU time)."),
    ]))
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

/// An op's layout transposes are large when they take at least this share of all GPU time.
const LARGE_LAYOUT_SHARE: f64 = 0.10;

/// A finding with data-layout advice for an op whose layout transposes take at least
/// [`LARGE_LAYOUT_SHARE`] of all GPU time.
fn layout_finding(
    op: &str,
    layout: Nanos,
    op_time: Nanos,
    gpu: Nanos,
    jax: bool,
) -> Option<Finding> {
    let of_all = layout.0 as f64 / gpu.0.max(1) as f64;
    if layout <= Nanos::ZERO || of_all < LARGE_LAYOUT_SHARE {
        return None;
    }
    Some(Finding::new(vec![
        Span::code(op.to_owned()),
        Span::text(" spends "),
        Span::Figure(Figure::percent(
            100.0 * layout.0 as f64 / op_time.0.max(1) as f64,
            Provenance::Measured,
        )),
        Span::text(" of its GPU time ("),
        Span::Figure(Figure::duration(layout, Provenance::Measured)),
        Span::text(", "),
        Span::Figure(Figure::percent(100.0 * of_all, Provenance::Measured)),
        Span::text(if jax {
            " of all GPU time) in layout transposes around its convolution or GEMM (transpose fusions, im2col); hypothesis to test: choose the layouts the kernels take natively (NHWC / channels-last dimension_numbers in lax.conv_general_dilated, a batch-major layout for dot_general) so XLA inserts no transposes."
        } else {
            " of all GPU time) in layout transposes around its convolution or GEMM (NCHW/NHWC conversions, batched transposes, im2col); hypothesis to test: channels-last memory format for the model and its inputs (model.to(memory_format=torch.channels_last)), so cuDNN/MIOpen take the tensors as they are."
        }),
    ]))
}

fn roofline_of(loaded: &[Loaded]) -> Option<Result<roofline::Roofline, String>> {
    // One capture file (or a JAX directory with one XSpace, or the one rank of a rank
    // directory that steps 3 to 6 describe); captures of several processes are left to
    // one at a time.
    match loaded {
        [one] if one.format() != trace_model::Format::JaxTraceJson => {
            Some(roofline::analyze_loaded(one).map_err(|e| e.to_string()))
        }
        _ => None,
    }
}

/// Step 5.
fn roofline_section(
    roofline: Option<Result<roofline::Roofline, String>>,
    trust: &mut Vec<TrustEntry>,
    new_capture: &mut Vec<String>,
) -> Section {
    let mut s = Section::new("roofline", "5. Roofline of the top ops");
    let rl = match roofline {
        None => {
            s.para("Roofline needs one capture with shapes (an XSpace, or a Kineto trace taken with record_shapes=True); run `roofline` on one rank's file.");
            return s;
        }
        Some(Err(e)) => {
            s.para(format!("Roofline could not run: {e}"));
            trust.push(TrustEntry {
                code: "roofline-failed".into(),
                message: format!("roofline: {e}"),
                count: None,
                share: None,
            });
            return s;
        }
        Some(Ok(rl)) => rl,
    };
    s.para(format!(
        "Device: {} ({}: {}). FLOPs and bytes follow from shapes (inferred); time is measured; each op is held against the peak of its own dtype.",
        rl.device.recorded,
        rl.device.model.as_deref().unwrap_or("model not in the peak table"),
        rl.device.source
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
    let costed: Vec<&roofline::RooflineOp> = rl
        .ops
        .iter()
        .filter(|o| o.flops.value.is_some())
        .take(15)
        .collect();
    for o in &costed {
        let inferred = |what: &str| Provenance::inferred(format!("{what} from the op's shapes"));
        // A memory-bound op is held against the memory bandwidth, a compute-bound one
        // against its dtype's FLOP/s.
        let (peak, share, how) = match o.bound.value {
            roofline::RooflineBound::Memory => (
                "peak memory bandwidth".to_owned(),
                o.bytes_share_of_peak.value,
                "achieved bytes/s over the peak memory bandwidth".to_owned(),
            ),
            _ => (
                format!("peak FLOP/s ({})", o.peak_basis),
                o.flops_share_of_peak.value,
                format!("achieved FLOP/s over the {} peak", o.peak_basis),
            ),
        };
        t.push(vec![
            Cell::code(crate::roofline_text::display_name(o)),
            Cell::text(format!("{:?}", o.dtype)),
            Cell::figure(Figure::duration(o.time_ns.value, Provenance::Measured)),
            o.flops.value.map_or(Cell::Empty, |f| {
                Cell::figure(Figure::new(Value::Flops(f), inferred("FLOPs")))
            }),
            Cell::figure(Figure::new(
                Value::Bytes(o.bytes.value as u64),
                inferred("bytes"),
            )),
            o.intensity.value.map_or(Cell::Empty, |i| {
                Cell::figure(Figure::ratio(i, inferred("intensity")))
            }),
            o.achieved_flops_per_s.value.map_or(Cell::Empty, |f| {
                Cell::figure(Figure::new(
                    Value::FlopsPerSecond(f),
                    inferred("FLOPs over measured time"),
                ))
            }),
            Cell::figure_text(
                o.bound.value.name(),
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
    let gpu_ns = rl.gpu_time_ns.value.0.max(1) as f64;
    let shown: i64 = costed.iter().map(|o| o.time_ns.value.0).sum();
    let modelled: i64 = rl
        .ops
        .iter()
        .filter(|o| o.flops.value.is_some())
        .map(|o| o.time_ns.value.0)
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
            svg: crate::roofline_text::svg(&rl, 10),
        });
    }
    for item in &rl.trust {
        trust.push(TrustEntry {
            code: item.code.to_owned(),
            message: format!("roofline: {}", item.message),
            count: Some(Figure::count(item.count, Provenance::Measured)),
            share: (rl.gpu_time_ns.value.0 > 0).then(|| {
                Figure::percent(
                    100.0 * item.time_ns.0 as f64 / rl.gpu_time_ns.value.0 as f64,
                    Provenance::Measured,
                )
            }),
        });
        if item.message.contains("record_shapes") {
            new_capture.push(
                "FLOPs and bytes of the ops without shapes: capture with `record_shapes=True`."
                    .to_owned(),
            );
        }
    }
    s
}

/// How a cause's time per step is computed (the label of every such figure).
const PER_STEP_FORMULA: &str = "time per step = the cause's time inside the analysed window (the steady-state steps' wall time), on the critical stream (or on the device, for exposed communication and copies), divided by the number of steady-state steps in the window; the step it is taken from is the window's mean step (its span / those steps); share of window = the cause's time / the window's span";

/// Step 6: causes on the critical stream, ranked by their share of its window.
fn change_section(r: &Report, capture: &Capture, findings: &mut Vec<Finding>) -> Section {
    let mut s = Section::new("change", "6. What to change, ranked");
    let mut causes: Vec<(analysis::CauseKey, String, Nanos, String)> = Vec::new();
    let (Some(window), Some(_)) = (r.window, r.steady_step_spread()) else {
        s.para("No analysed window: nothing to rank.");
        return s;
    };
    if r.verdict.bound == analysis::Bound::WarmUp {
        s.para("The capture is warm-up only (see the verdict): nothing in it is steady state, so no cause is ranked. Capture again after warm-up.");
        return s;
    }
    if let analysis::Diagnosis::CannotTell { reason } = r.diagnosis {
        s.para(format!(
            "Cannot tell what bounds the step ({}), so no cause is ranked and nothing is estimated. A capture that would decide it: {}.",
            reason.describe(),
            reason.decide_with()
        ));
        return s;
    }
    let span = window.span();
    let steps = r.steady_step_count().max(1) as i64;
    let per_step = |x: Nanos| Nanos(x.0 / steps);
    // The step the estimates subtract from: the window's own mean step, so a cause's time
    // per step and the step come from the same window (a median of step annotations can
    // leave out time between steps that the window holds).
    let mean_step = per_step(span);
    let jax = matches!(
        r.format,
        trace_model::Format::XPlane | trace_model::Format::JaxTraceJson
    );
    let practices = analysis::practices(capture);
    let share_text = |p: &analysis::Practice| format!("{:.1} %", 100.0 * practices.share(p));
    // What the capture already does, named, so no advice suggests it.
    let mut in_use = Vec::new();
    if let Some(c) = &practices.compiled {
        in_use.push(format!(
            "torch.compile/Inductor ({}; {} of GPU time)",
            c.evidence,
            share_text(c)
        ));
    }
    if let Some(g) = &practices.graph_replay {
        in_use.push(format!(
            "CUDA/HIP graph replay ({}; {} of GPU time)",
            g.evidence,
            share_text(g)
        ));
    }
    if let Some(c) = &practices.checkpointing {
        in_use.push(format!("activation checkpointing ({})", c.evidence));
    }
    if let Some(p) = &practices.python_tracer {
        in_use.push(format!(
            "the Python tracer ({}; it adds its own time to every host gap)",
            p.evidence
        ));
    }
    if !in_use.is_empty() {
        findings.push(Finding::new(vec![Span::text(format!(
            "Already in use: {}.",
            in_use.join("; ")
        ))]));
    }
    let host_knobs = if jax {
        "fewer, larger dispatches (jit the whole step; lax.scan over layers), command buffers (XLA CUDA graphs), no host round trips inside the step (block_until_ready, device_get, Python-side logging), donate_argnums for the step's state".to_owned()
    } else {
        let mut k: Vec<String> = Vec::new();
        k.push(match &practices.graph_replay {
            Some(g) => format!(
                "graphs already replay {} of GPU time ({}): capture the work still launched one by one into them (the ops outside the graphs), or larger graphs",
                share_text(g),
                g.evidence
            ),
                        None if practices.compiled.is_some() => "CUDA graphs: mode=\"reduce-overhead\" on the torch.compile already in use, or capture the step".to_owned(),
            None => "CUDA graphs (torch.compile mode=\"reduce-overhead\", or capture the step)".to_owned(),
        });
        k.push(match &practices.compiled {
            Some(_) => "torch.compile is already in use: look for graph breaks (TORCH_LOGS=graph_breaks) that leave eager kernels and host work between compiled regions".to_owned(),
            None => "fewer and larger kernels (fusion, torch.compile)".to_owned(),
        });
        k.push("moving host work (data loading, logging, .item() syncs) off the step, pinned memory with non_blocking copies".to_owned());
        if practices.python_tracer.is_some() {
            k.push("first confirm with a capture without with_stack: the Python tracer inflates host time".to_owned());
        }
        k.join("; ")
    };
    let evidence = |c: analysis::GapCause| {
        r.gap_causes.as_ref().map_or_else(String::new, |gc| {
            gc.evidence_of(c)
                .take(2)
                .map(|e| e.what.clone())
                .collect::<Vec<_>>()
                .join("; ")
        })
    };
    for cause in analysis::causes(r, capture, window) {
        use analysis::{CauseKey, GapCause};
        let gpu = cause.device.unwrap_or_default();
        let (what, knobs) = match cause.key {
            CauseKey::Gap(GapCause::HostNotLaunched) => (
                format!(
                    "the GPU waits for the host to issue work (host did not launch yet, on the critical stream; evidence: {})",
                    evidence(GapCause::HostNotLaunched)
                ),
                host_knobs.clone(),
            ),
            CauseKey::Host(h) => (
                format!(
                    "the GPU waits for the host: {} (on the critical stream; evidence: {})",
                    h.label(),
                    r.gap_causes.as_ref().map_or_else(String::new, |gc| gc
                        .host
                        .top_of(h)
                        .take(3)
                        .map(|t| format!("{} {}", t.name, t.time.human()))
                        .collect::<Vec<_>>()
                        .join("; "))
                ),
                analysis::host_knobs(h, r.framework.framework, &practices)
                    .iter()
                    .map(|k| k.text())
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
            CauseKey::Gap(GapCause::StreamOrEvent) => (
                format!(
                    "work was issued but waited on another stream or event (on the critical stream; evidence: {})",
                    evidence(GapCause::StreamOrEvent)
                ),
                "look at what the awaited stream runs at that time (the swimlanes): overlap it with compute, split it, or remove the cross-stream wait; for collectives, check for a straggler rank".to_owned(),
            ),
            CauseKey::Gap(GapCause::SyncCall) => (
                format!(
                    "the host is blocked in a synchronising call, waiting for the GPU, while the critical stream idles (evidence: {})",
                    evidence(GapCause::SyncCall)
                ),
                if jax {
                    "no host round trips inside the step (block_until_ready, device_get, printing device values); keep values on the device".to_owned()
                } else {
                    "remove synchronisations inside the step (.item(), .cpu(), printing tensors, blocking copies): pinned memory with non_blocking copies, keep values on the GPU, move checks after the step".to_owned()
                },
            ),
            CauseKey::ExposedCollective { .. } => (
                format!("communication no compute overlaps on GPU {gpu} (exposed collective time)"),
                "overlap collectives with compute (FSDP/DDP prefetch and bucket sizes, a second micro-batch in flight), fewer or larger collectives; collective time includes waiting for peers, so look at the last rank to finish first".to_owned(),
            ),
            CauseKey::ExposedMemcpy { .. } => (
                format!("copies no compute overlaps on GPU {gpu} (exposed memcpy time)"),
                "pinned host memory with non_blocking copies, prefetching inputs on a side stream, keeping tensors on the GPU".to_owned(),
            ),
            CauseKey::Layout => (
                "layout transposes on the critical stream (NCHW/NHWC conversions, batched transposes, transpose fusions, im2col: data movement for a convolution or GEMM)".into(),
                if jax {
                    "choose layouts the convolution kernels take natively (NHWC / channels-last dimension_numbers in lax.conv_general_dilated), so XLA inserts no transposes around them".to_owned()
                } else {
                    "channels-last memory format (model.to(memory_format=torch.channels_last) and the inputs), so cuDNN/MIOpen convolutions skip their NCHW/NHWC conversions".to_owned()
                },
            ),
            CauseKey::Elementwise => (
                "elementwise/norm/activation kernels on the critical stream (memory-bound)".into(),
                if jax {
                    "fusion: check the XLA fusion decisions of the top elementwise ops; fewer dtype converts; larger fused regions".to_owned()
                } else if practices.compiled.is_some() {
                    "already compiled: the remaining ones are outside compiled regions (graph breaks) or Inductor's own; fused norm/activation/residual kernels, fewer dtype casts".to_owned()
                } else {
                    "fusion: torch.compile, fused norm/activation/residual kernels; fewer dtype casts".to_owned()
                },
            ),
            CauseKey::EagerAttention => {
                let Some(e) = &practices.eager_attention else {
                    continue;
                };
                (
                    format!(
                        "eager attention on the critical stream ({}; {} of all GPU time)",
                        e.evidence,
                        share_text(e)
                    ),
                    "torch.nn.functional.scaled_dot_product_attention (FlashAttention or memory-efficient backend), or another fused attention kernel: it replaces the softmax and both batched matmuls; the estimate assumes the fused kernel's own time is small beside them".to_owned(),
                )
            }
            _ => continue,
        };
        causes.push((cause.key, what, cause.time, knobs));
    }
    causes.retain(|c| c.2.0 > 0);
    causes.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.1.cmp(&b.1)));
    let share = |t: Nanos| t.0 as f64 / span.0.max(1) as f64;
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
    for (i, (key, what, time, knobs)) in causes.iter().enumerate() {
        let each = per_step(*time);
        let after = Nanos((mean_step.0 - each.0).max(0));
        t.push(vec![
            Cell::text((i + 1).to_string()),
            Cell::text(what.clone()),
            Cell::figure(Figure::percent(100.0 * share(*time), Provenance::Measured)),
            Cell::figure(Figure::duration(each, Provenance::inferred(PER_STEP_FORMULA))),
            Cell::figure(Figure::duration(
                after,
                Provenance::inferred(format!(
                                        "the window's mean steady-state step minus the cause's time per step; {WINDOW_ASSUMPTION}"
                )),
            )),
            Cell::text(knobs.clone()),
            Cell::code(key.code()),
        ]);
    }
    if let Some((_, what, time, _)) = causes.first() {
        findings.push(Finding::new(vec![
            Span::text(format!("First thing to change: {what}, ")),
            Span::Figure(Figure::percent(100.0 * share(*time), Provenance::Measured)),
            Span::text(format!(
                                " of the window ({} over {} steady-state step(s)); without it the mean step of the window would take about ",
                time.human(),
                steps
            )),
            Span::Figure(Figure::duration(
                                Nanos((mean_step.0 - per_step(*time).0).max(0)),
                Provenance::inferred(format!("{PER_STEP_FORMULA}; {WINDOW_ASSUMPTION}")),
            )),
                        Span::text(" instead of "),
            Span::Figure(Figure::duration(mean_step, Provenance::Measured)),
            Span::text("."),
        ]));
    }
    s.push(Block::Table(t.with_note(format!(
        "Causes overlap (host wait and exposed communication can be the same instant on different streams), so the rows are alternatives, not a sum. The step-time estimates are inferred ({PER_STEP_FORMULA}); the knobs are hypotheses to test with a new capture. Key: the cause's stable name, by which compare matches it in a later capture (or in this report.json)."
    ))));
    s
}

/// Step 7: the trust list and the questions a new capture would answer.
/// The files of the capture that could not be read: one trust entry each (the report is
/// of the others), and a new capture to ask for.
fn unread_trust(unread: &[String], trust: &mut Vec<TrustEntry>, new_capture: &mut Vec<String>) {
    for err in unread {
        trust.push(TrustEntry {
            code: "file-not-read".into(),
            message: format!("not read, so not in this report: {err}"),
            count: Some(Figure::count(1, Provenance::Measured)),
            share: None,
        });
    }
    if !unread.is_empty() {
        new_capture.push(format!(
            "The {} file(s) that could not be read (listed in the trust list): capture them again, or investigate the others alone knowing the ranks are incomplete.",
            unread.len()
        ));
    }
}

fn collect_trust(
    a: &Analysis,
    facts: &[CaptureFacts],
    trust: &mut Vec<TrustEntry>,
    new_capture: &mut Vec<String>,
) {
    if a.reports.iter().any(|r| r.warm_up.all) {
        new_capture.push(
            "A steady-state capture: every step of this one is warm-up (module loading, compilation, autotuning, first calls). Profile after a few steps (torch.profiler schedule(wait=1, warmup=2, active=3); in JAX, after the first call of each jitted function).".to_owned(),
        );
    }
    for (r, f) in a.reports.iter().zip(facts) {
        let who = rank_label(r);
        // The one diagnostic list of the workspace: the reader's, the step finder's and
        // the analysis' own, each counted; a share where its denominator is known.
        let activities = f.activities.max(1) as f64;
        let gpu_time = f.gpu_time;
        // One-sided flow arrows are in nearly every Kineto capture (a flow whose other end
        // fell outside the profiling window); they change a reported number only when an
        // activity has no launch, so they are listed only then.
        let without_launch = r
            .diagnostics
            .iter()
            .any(|d| d.code == "activity-without-launch" && d.count > 0);
        for d in r.diagnostics.iter() {
            if d.code == "flow-one-end" && !without_launch {
                continue;
            }
            let share = match d.code {
                "in-flight-at-start" if gpu_time > 0 => Some(Figure::percent(
                    100.0 * r.in_flight.time.0 as f64 / gpu_time as f64,
                    Provenance::Measured,
                )),
                "activity-without-launch" | "clock-skew" | "outside-steps" => Some(
                    Figure::percent(100.0 * d.count as f64 / activities, Provenance::Measured),
                ),
                _ => None,
            };
            trust.push(TrustEntry {
                code: d.code.to_owned(),
                message: if d.code == "flow-one-end" {
                    format!(
                        "{who}: {} (listed because some activities have no launch: the missing ends may be theirs)",
                        d.message
                    )
                } else {
                    format!("{who}: {}", d.message)
                },
                count: Some(Figure::count(d.count, Provenance::Measured)),
                share,
            });
        }
        if let Some(t) = &r.total
            && t.graph_kernels > 0
        {
            let share = t.graph_kernels as f64 / t.kernels.max(1) as f64;
            trust.push(TrustEntry {
                code: "graph-kernels".into(),
                message: format!("{who}: kernels launched by CUDA/HIP graphs: their launch delay counts from the graph launch, and per-op tables may not see them"),
                count: Some(Figure::count(t.graph_kernels as u64, Provenance::Measured)),
                share: Some(Figure::percent(100.0 * share, Provenance::Measured)),
            });
            if share > 0.5 {
                new_capture.push(format!("{who}: which op each graph kernel belongs to: capture once with CUDA graphs off (or per-node graph tracing)."));
            }
        }
        if r.comm_stream.is_some() || r.verdict.collective_share > 0.0 {
            trust.push(TrustEntry {
                code: "collective-includes-waiting".into(),
                message: format!(
                    "{who}: collective kernel time includes waiting for peers, not only transfer"
                ),
                count: None,
                share: r
                    .comm_stream
                    .as_ref()
                    .map(|c| Figure::percent(100.0 * c.share, Provenance::Measured)),
            });
        }
        if !f.has_steps {
            new_capture.push(match f.format {
                trace_model::Format::XPlane | trace_model::Format::JaxTraceJson => format!(
                    "{who}: per-step numbers: wrap each step in `jax.profiler.StepTraceAnnotation(\"train\", step_num=i)` so steps can be compared."
                ),
                _ => format!(
                    "{who}: per-step numbers: profile with a schedule and call `prof.step()` (ProfilerStep#N markers), so steps can be compared."
                ),
            });
        }
    }
    if a.reports.len() == 1 && a.reports[0].comm_stream.is_some() {
        new_capture.push(
            "Whether a straggler makes the collectives wait: capture every rank of the same steps."
                .to_owned(),
        );
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

    /// A ranked cause: (cause, time per step, step time without it, knobs).
    type Row = (String, i64, i64, String);

    /// The capture of a Kineto trace made of `events`, as the loader gives it.
    fn loaded(events: &[String]) -> Vec<Loaded> {
        let json = format!(r#"{{"traceEvents": [{}]}}"#, events.join(","));
        let path = Path::new("synthetic.json");
        let capture = chrome_reader::load_from(json.as_bytes(), path).expect("loads");
        vec![Loaded {
            path: path.to_path_buf(),
            rank: None,
            capture,
            programs: Vec::new(),
        }]
    }

    /// [`loaded`] and skip-stats' analysis of it.
    fn analysed(events: &[String]) -> (Vec<Loaded>, Analysis) {
        let loaded = loaded(events);
        let a = analysis::skip_stats_loaded_without_rows(
            Path::new("synthetic.json"),
            &loaded,
            // Toy captures: the rules under test, not the minimum of GPU work.
            &analysis::SkipConfig {
                min_gpu_work: Nanos(0),
                ..analysis::SkipConfig::default()
            },
        )
        .expect("analyses");
        (loaded, a)
    }

    /// Loads a Kineto trace from events and returns the findings and the ranked causes of
    /// step 6.
    fn check(events: &[String]) -> (Vec<String>, Vec<Row>) {
        let (loaded, a) = analysed(events);
        let mut findings = Vec::new();
        let section = change_section(&a.reports[0], &loaded[0].capture, &mut findings);
        let text = |spans: &[Span]| {
            spans
                .iter()
                .map(|s| match s {
                    Span::Text(t) | Span::Code(t) => t.clone(),
                    Span::Figure(_) | Span::Formatted(..) => "#".to_owned(),
                })
                .collect::<String>()
        };
        let findings = findings.iter().map(|f| text(&f.spans)).collect();
        let duration = |c: &Cell| match c {
            Cell::Figure(Figure {
                value: Value::Duration(d),
                ..
            }) => *d,
            other => panic!("not a duration: {other:?}"),
        };
        let plain = |c: &Cell| match c {
            Cell::Text(t) => t.clone(),
            other => panic!("not text: {other:?}"),
        };
        let rows = section
            .table("what_to_change")
            .expect("the ranking table")
            .rows
            .iter()
            .map(|r| (plain(&r[1]), duration(&r[3]), duration(&r[4]), plain(&r[5])))
            .collect();
        (findings, rows)
    }

    fn ev(cat: &str, name: &str, tid: u64, ts: u64, dur: u64, args: &str) -> String {
        let pid = if tid >= 7 { 0 } else { 1 };
        format!(
            r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": {pid}, "tid": {tid}, "ts": {ts}, "dur": {dur}, "args": {{{args}}}}}"#
        )
    }

    fn launched(
        op: &str,
        api: &str,
        corr: u64,
        ts: u64,
        kernels: &[(&str, u64, u64)],
        extra: &str,
    ) -> Vec<String> {
        let mut v = vec![
            ev("cpu_op", op, 1, ts, 5, ""),
            ev(
                "cuda_runtime",
                api,
                1,
                ts + 1,
                2,
                &format!(r#""correlation": {corr}"#),
            ),
        ];
        for (name, start, dur) in kernels {
            v.push(ev(
                "kernel",
                name,
                7,
                *start,
                *dur,
                &format!(r#""correlation": {corr}, "stream": 7, "device": 0{extra}"#),
            ));
        }
        v
    }

    fn step(n: u64, ts: u64, dur: u64) -> String {
        ev(
            "user_annotation",
            &format!("ProfilerStep#{n}"),
            1,
            ts,
            dur,
            "",
        )
    }

    const US: i64 = 1000;

    /// Two 1 ms steps of a compiled model, each one Triton kernel of 100 µs launched at
    /// +501 µs: host wait 505 + 900 + 395 µs over the 2 ms window (launch latency
    /// included), 900 µs per step: 895 µs with nothing recorded, 5 µs of launch call; the elementwise Triton kernels
    /// 200 µs, 100 µs per step. No advice suggests torch.compile.
    #[test]
    fn a_compiled_capture_gets_no_compile_advice_and_exact_estimates() {
        let mut events = vec![step(1, 0, 1000), step(2, 1000, 1000)];
        for (k, s) in [0u64, 1000].into_iter().enumerate() {
            events.extend(launched(
                "CompiledFunction",
                "cudaLaunchKernel",
                k as u64 + 1,
                s + 500,
                &[("triton_poi_fused_add_mul_0", s + 505, 100)],
                "",
            ));
        }
        let (findings, rows) = check(&events);
        assert!(
            findings
                .iter()
                .any(|f| f.contains("Already in use: torch.compile/Inductor")),
            "{findings:?}"
        );
        // The host wait splits by what the thread did: 895 µs per step with nothing
        // recorded under the step's annotation, 5 µs in the launch call.
        let (cause, per_step, after, _) = &rows[0];
        assert!(
            cause.starts_with("the GPU waits for the host: nothing recorded"),
            "{cause}"
        );
        assert_eq!((*per_step, *after), (895 * US, 105 * US));
        let launch = rows
            .iter()
            .find(|r| {
                r.0.starts_with("the GPU waits for the host: launch overhead")
            })
            .expect("launch overhead row");
        assert_eq!(launch.1, 5 * US);
        assert!(launch.3.contains("torch.compile is in use"), "{}", launch.3);
        assert!(!launch.3.contains("fewer, larger kernels (torch.compile)"));
        let elementwise = rows
            .iter()
            .find(|r| r.0.starts_with("elementwise"))
            .expect("elementwise row");
        assert_eq!((elementwise.1, elementwise.2), (100 * US, 900 * US));
        assert!(
            elementwise.3.starts_with("already compiled"),
            "{}",
            elementwise.3
        );
    }

    /// A convolution's layout transposes: cuDNN's NCHW→NHWC and back under
    /// `aten::cudnn_convolution` (30 + 10 µs beside its 40 µs kernel), and a batched
    /// transpose launched by `aten::copy_` inside `aten::contiguous` inside
    /// `aten::convolution` (20 µs), which goes to `aten::convolution`, the op it serves.
    /// Each op's row says how much of it is layout work; both are at least 10 % of the
    /// 200 µs of GPU time, so both get channels-last advice.
    #[test]
    fn layout_transposes_count_toward_the_convolution_they_serve() {
        let corr = |c: u64| format!(r#""correlation": {c}"#);
        let kernel = |name: &str, c: u64, ts: u64, dur: u64| {
            ev(
                "kernel",
                name,
                7,
                ts,
                dur,
                &format!(r#""correlation": {c}, "stream": 7, "device": 0"#),
            )
        };
        let events = vec![
            ev("cpu_op", "aten::convolution", 1, 100, 100, ""),
            ev("cpu_op", "aten::cudnn_convolution", 1, 101, 40, ""),
            ev("cuda_runtime", "cudaLaunchKernel", 1, 102, 2, &corr(1)),
            ev("cuda_runtime", "cudaLaunchKernel", 1, 110, 2, &corr(2)),
            ev("cuda_runtime", "cudaLaunchKernel", 1, 120, 2, &corr(3)),
            ev("cpu_op", "aten::contiguous", 1, 150, 40, ""),
            ev("cpu_op", "aten::copy_", 1, 151, 30, ""),
            ev("cuda_runtime", "cudaLaunchKernel", 1, 152, 2, &corr(4)),
            ev("cpu_op", "aten::add", 1, 300, 10, ""),
            ev("cuda_runtime", "cudaLaunchKernel", 1, 301, 2, &corr(5)),
            kernel("void cudnn::nchwToNhwcKernel<float>()", 1, 200, 30),
            kernel("implicit_convolve_sgemm", 2, 230, 40),
            kernel("void cudnn::nhwcToNchwKernel<float>()", 3, 270, 10),
            kernel("batched_transpose_32x32_dword", 4, 280, 20),
            kernel(
                "void at::native::vectorized_elementwise_kernel<add>()",
                5,
                310,
                100,
            ),
        ];
        let loaded = loaded(&events);
        let summary = analysis::gpu_summary(&loaded[0].capture, "synthetic.json", None);
        let layout: Vec<(&str, i64, i64)> = summary
            .ops
            .iter()
            .map(|o| (o.name.as_str(), o.time_ns.0, o.layout_ns.0))
            .collect();
        assert_eq!(
            layout,
            [
                ("aten::add", 100 * US, 0),
                ("aten::cudnn_convolution", 80 * US, 40 * US),
                ("aten::convolution", 20 * US, 20 * US),
            ]
        );
        let mut findings = Vec::new();
        let section = ops_section(
            &[summary],
            &[capture_facts(&loaded[0])],
            None,
            &mut findings,
            &mut Vec::new(),
            &mut Vec::new(),
        );
        let ops = section.table("ops").expect("the ops table");
        let layout_share: Vec<Option<f64>> = ops
            .rows
            .iter()
            .map(|r| match r.last() {
                Some(Cell::Figure(Figure {
                    value: Value::Percent(p),
                    ..
                })) => Some(*p),
                _ => None,
            })
            .collect();
        assert_eq!(layout_share, [None, Some(50.0), Some(100.0)]);
        let advice: Vec<String> = findings
            .iter()
            .filter_map(|f| match f.spans.as_slice() {
                [
                    Span::Code(op),
                    _,
                    Span::Figure(Figure {
                        value: Value::Percent(of_op),
                        ..
                    }),
                    _,
                    _,
                    _,
                    Span::Figure(Figure {
                        value: Value::Percent(of_all),
                        ..
                    }),
                    ..,
                ] => Some(format!("{op} {of_op:.1} % {of_all:.1} %")),
                _ => None,
            })
            .collect();
        assert_eq!(
            advice,
            [
                "aten::cudnn_convolution 50.0 % 20.0 %",
                "aten::convolution 100.0 % 10.0 %"
            ]
        );
        assert!(
            findings.iter().all(|f| f
                .spans
                .iter()
                .all(|s| !matches!(s, Span::Text(t) if t.contains("lax.conv")))),
            "PyTorch advice only"
        );
        assert!(findings.iter().any(|f| {
            f.spans
                .iter()
                .any(|s| matches!(s, Span::Text(t) if t.contains("channels_last")))
        }));
    }

    fn line(source_line: &str, gpu_time_ns: i64, share_pct: f64) -> attribution::LineRow {
        attribution::LineRow {
            source_line: source_line.to_owned(),
            function: String::new(),
            kernels: 1,
            gpu_time_ns: Nanos(gpu_time_ns),
            share_pct,
        }
    }

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

    /// The headline Python line skips library frames (torch, site-packages, the Inductor
    /// cache) and gives its share of all GPU time (1000 µs), then of the attributed time
    /// (800 µs), then the attributed share; with library frames only, the first is named
    /// as one.
    #[test]
    fn the_top_python_line_is_user_code_with_its_denominators() {
        let lines = [
            line("/tmp/torchinductor_root/ab/cab.py:10", 400 * US, 50.0),
            line("torch/nn/modules/linear.py:125", 200 * US, 25.0),
            line("train.py:42", 100 * US, 12.5),
        ];
        let f = top_line_finding(&lines, Nanos(1000 * US), Nanos(800 * US)).expect("a finding");
        assert!(
            f.spans
                .iter()
                .any(|s| matches!(s, Span::Code(c) if c == "train.py:42")),
            "{f:?}"
        );
        assert_eq!(percents(&f), [10.0, 12.5, 80.0]);
        let f =
            top_line_finding(&lines[..2], Nanos(1000 * US), Nanos(800 * US)).expect("a finding");
        assert!(
            f.spans
                .iter()
                .any(|s| matches!(s, Span::Code(c) if c == "/tmp/torchinductor_root/ab/cab.py:10"))
        );
        assert!(
            f.spans
                .iter()
                .any(|s| matches!(s, Span::Text(t) if t.starts_with("a library frame"))),
            "{f:?}"
        );
        assert_eq!(percents(&f), [40.0, 50.0, 80.0]);
        assert!(top_line_finding(&[], Nanos(1), Nanos(1)).is_none());
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
        let section = roofline_section(Some(Ok(rl.clone())), &mut Vec::new(), &mut Vec::new());
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

    /// One-sided flow arrows are listed only where some activity has no launch.
    #[test]
    fn one_sided_flows_are_listed_only_when_a_launch_is_missing() {
        let flow =
            r#"{"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 99, "pid": 1, "tid": 1, "ts": 2}"#;
        let codes = |events: Vec<String>| {
            let (loaded, a) = analysed(&events);
            let mut trust = Vec::new();
            let facts: Vec<CaptureFacts> = loaded.iter().map(capture_facts).collect();
            collect_trust(&a, &facts, &mut trust, &mut Vec::new());
            trust.into_iter().map(|t| t.code).collect::<Vec<String>>()
        };
        let mut linked = launched(
            "aten::add",
            "cudaLaunchKernel",
            1,
            10,
            &[("vectorized_elementwise_kernel", 20, 10)],
            "",
        );
        linked.push(flow.to_owned());
        let got = codes(linked.clone());
        assert!(!got.iter().any(|c| c == "flow-one-end"), "{got:?}");
        // A second kernel with no launch: now the arrows are listed.
        linked.push(ev(
            "kernel",
            "orphan_kernel",
            7,
            40,
            5,
            r#""correlation": 77, "stream": 7, "device": 0"#,
        ));
        let got = codes(linked);
        assert!(
            got.iter().any(|c| c == "activity-without-launch"),
            "{got:?}"
        );
        assert!(got.iter().any(|c| c == "flow-one-end"), "{got:?}");
    }

    /// A step replayed by a CUDA graph: the advice names the graphs in use instead of
    /// suggesting them.
    #[test]
    fn a_graph_replayed_capture_gets_no_graph_advice() {
        let mut events = vec![step(1, 0, 1000)];
        events.extend(launched(
            "aten::graph_replay",
            "cudaGraphLaunch",
            1,
            500,
            &[
                ("void gemv_kernel<float>()", 505, 50),
                ("void rmsnorm_kernel<float>()", 560, 50),
            ],
            r#", "graph id": 3"#,
        ));
        let (findings, rows) = check(&events);
        assert!(
            findings.iter().any(|f| f.contains(
                "CUDA/HIP graph replay (1 graph launch call(s), 2 GPU activities run by graphs"
            )),
            "{findings:?}"
        );
        let host = rows
            .iter()
            .find(|r| {
                r.0.starts_with("the GPU waits for the host: launch overhead")
            })
            .expect("host row");
        assert!(
            host.3
                .starts_with("graphs are in use: capture the ops still launched"),
            "{}",
            host.3
        );
        assert!(!host.3.contains("CUDA graphs (torch.compile"), "{}", host.3);
    }

    /// Attention done eagerly (bmm, softmax, bmm; no fused attention kernel): a cause of
    /// its own, 250 µs per step on the critical stream, with SDPA advice.
    #[test]
    fn eager_attention_gets_sdpa_advice_with_its_share() {
        let mut events = vec![step(1, 0, 1000)];
        events.extend(launched(
            "aten::bmm",
            "cudaLaunchKernel",
            1,
            10,
            &[("ampere_sgemm_128x64_nn", 15, 100)],
            "",
        ));
        events.extend(launched(
            "aten::softmax",
            "cudaLaunchKernel",
            2,
            20,
            &[("void at::native::softmax_warp_forward<float>()", 115, 50)],
            "",
        ));
        events.extend(launched(
            "aten::bmm",
            "cudaLaunchKernel",
            3,
            30,
            &[("ampere_sgemm_128x64_nn", 165, 100)],
            "",
        ));
        events.extend(launched(
            "aten::linear",
            "cudaLaunchKernel",
            4,
            40,
            &[("ampere_sgemm_128x64_tn", 265, 500)],
            "",
        ));
        let (_, rows) = check(&events);
        let attention = rows
            .iter()
            .find(|r| r.0.starts_with("eager attention"))
            .expect("eager attention row");
        assert!(
            attention.0.contains("33.3 % of all GPU time"),
            "{}",
            attention.0
        );
        assert_eq!((attention.1, attention.2), (250 * US, 750 * US));
        assert!(attention.3.contains("scaled_dot_product_attention"));
    }
}
