//! The seven-step investigation of a capture, as a value: [`Investigation`].
//!
//! 1. verdict and host-side cause (skip-stats' analysis); for a directory of ranks, then:
//!    across ranks (per-rank step time, clock offsets from matched collectives,
//!    stragglers, the rank × step heat map; `analysis::cross_rank`, computed once);
//! 2. reconciliation: each check holds or goes to the trust list (an XSpace is checked
//!    against its sibling `trace.json.gz`, read here);
//! 3. swimlanes of the median step (or a chosen one), every GPU × stream and the host
//!    threads that launch work, the critical stream and the last rank to finish marked;
//! 4. kernel → op (and, where the capture allows, Python line);
//! 5. roofline of the top ops;
//! 6. what to change: the causes `analysis::causes` finds, ranked by share of the critical
//!    stream's window, each with the step time if it went away (inferred), the knobs the
//!    advice rules choose and what the capture already does;
//! 7. the trust list, then what a new capture would answer.
//!
//! Everything here decides; nothing formats text. `report` renders the value (Markdown,
//! HTML, CSV) and `report.json` is its serde form ([`SCHEMA`]).
//!
//! A directory of rank traces is read one rank at a time (`load::map_each`): each rank is
//! reduced to its skip-stats report, GPU summary, cross-rank timeline and the few facts
//! the tables need, its `rows.csv` rows go to a scratch file, and its capture is dropped.
//! Only one rank's capture is kept: the one that gets steps 3 to 6 (the straggler the
//! cross-rank pass names, else the slowest by median step; reloaded when it is not the one
//! kept). Memory is bounded by the ranks being read, not by the directory, except for
//! the replay: the drawn rank's replayed estimates come from a joint replay of every rank
//! (their collectives matched, `replay::RanksPredictor`), for which the ranks are loaded
//! again and held together (at most 64 ranks; more keep the drawn rank's replay alone).

#![warn(missing_docs)]

mod advice;
mod joint;
mod knob;
mod model;
mod replayed;
mod sections;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use analysis::{CaptureAnalysis, GpuSummary, InputAnalysis, Loaded};
use trace_model::Nanos;

pub use advice::{PER_STEP_FORMULA, REPLAY_ASSUMPTIONS, WINDOW_ASSUMPTION, advise};
pub use joint::{MAX_JOINT_RANKS, RanksReplayed, ReplayedAlone};
pub use model::*;
pub use replay::{CannotReplay, NotMatched};
pub use sections::LARGE_LAYOUT_SHARE;

/// Options of an investigation.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The step to draw (its number); default: the median step.
    pub step: Option<i64>,
    /// The least GPU work a capture must hold for a verdict (`analysis::SkipConfig::
    /// min_gpu_work`); default [`analysis::MIN_GPU_WORK`]. Tests of the rules on toy
    /// captures set it to zero.
    pub min_gpu_work: Option<trace_model::Nanos>,
    /// A what-if scenario to replay on the captures already loaded ([`Run::what_if`]).
    pub what_if: Option<replay::WhatIf>,
    /// Leave `rows.csv` out (a caller that only needs the value, such as compare): a
    /// single input's rows are then not held in memory and [`Run::write_rows`] writes
    /// nothing. A rank directory's rows still go to its scratch files.
    pub skip_rows: bool,
}

impl Options {
    /// The analyses' configuration these options ask for.
    fn skip_config(&self) -> analysis::SkipConfig {
        let default = analysis::SkipConfig::default();
        analysis::SkipConfig {
            min_gpu_work: self.min_gpu_work.unwrap_or(default.min_gpu_work),
            ..default
        }
    }
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

/// An investigation and skip-stats' `rows.csv` of the same capture.
#[derive(Debug)]
pub struct Run {
    /// What was found.
    pub investigation: Investigation,
    /// One row per GPU activity: in memory for one capture, in a scratch directory per
    /// rank for a rank directory ([`Run::write_rows`]).
    rows: Rows,
    /// [`Options::what_if`] replayed on each capture steps 3 to 6 describe (every capture
    /// of a file; the drawn rank of a rank directory): one per capture, with its
    /// prediction or the reason it cannot be replayed; empty without a scenario.
    pub what_if: Vec<WhatIfRun>,
}

/// [`Options::what_if`] replayed on one capture, over the steps the investigation judged
/// (as step 6's estimates replay a cause). `report::investigate::what_if_text` words it.
#[derive(Debug, Clone, PartialEq)]
pub struct WhatIfRun {
    /// The capture's file.
    pub path: PathBuf,
    /// Why a rank directory's drawn rank was replayed alone, not with the other ranks
    /// (`None`: replayed with them, or a single capture).
    pub alone: Option<ReplayedAlone>,
    /// The scenario's replay (`replay::Prediction::ranks` says which ranks were replayed
    /// together), or why the capture cannot be replayed.
    pub prediction: Result<replay::Prediction, replay::CannotReplay>,
}

/// `what_if` replayed on each drawn capture, over the steps the investigation judged
/// (as step 6's estimates replay a cause).
fn what_if_runs(
    drawn: &[(&CaptureAnalysis, &Loaded)],
    what_if: Option<&replay::WhatIf>,
) -> Vec<WhatIfRun> {
    let Some(what_if) = what_if else {
        return Vec::new();
    };
    drawn
        .iter()
        .map(|(report, loaded)| WhatIfRun {
            path: loaded.path.clone(),
            alone: None,
            prediction: replayed::what_if_prediction(report, &loaded.capture, what_if),
        })
        .collect()
}

/// Where `rows.csv` is.
#[derive(Debug)]
enum Rows {
    Bytes(Vec<u8>),
    /// A rank directory's: each rank's part in rank order, kept until the run is dropped.
    Parts {
        parts: Vec<PathBuf>,
        row_parts: analysis::SkipRowParts,
    },
}

impl Run {
    /// Writes `rows.csv` (one row per GPU activity, as skip-stats writes it) to `out`, a
    /// rank directory's one rank at a time.
    pub fn write_rows(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        match &self.rows {
            Rows::Bytes(bytes) => out.write_all(bytes),
            Rows::Parts { parts, row_parts } => row_parts.write(parts, out),
        }
    }
}

/// Runs the investigation of the capture at `input` (a Kineto trace, a directory of rank
/// traces, an `.xplane.pb`, or a JAX capture directory).
///
/// In a directory of captures, a file that cannot be read leaves the others to report:
/// it is listed in [`Investigation::unread`] and in the trust list. Only when no file can
/// be read is the first file's error returned.
///
/// A directory of rank traces is read one rank at a time (see the crate's docs): its
/// per-rank tables have a row per rank, and steps 3 to 6 describe one rank (the
/// straggler, else the slowest by median step), which [`Investigation::drawn`] names.
pub fn investigate(input: &Path, options: &Options) -> Result<Run, Error> {
    Ok(investigate_each(input, options, &|_, _| ())?.0)
}

/// What a caller reduces each capture to, beside the investigation, while the capture is
/// in memory (after its skip-stats analysis).
pub type Keep<'a, T> = dyn Fn(&Loaded, &CaptureAnalysis) -> T + Sync + 'a;

/// [`investigate`], with `keep` called on each capture while it is in memory: what a
/// caller (compare) needs of a capture that the investigation does not hold, one `T` per
/// capture in the order of [`Investigation::captures`]. A rank directory's ranks are still
/// read one at a time and dropped after `keep`.
pub fn investigate_each<T: Send>(
    input: &Path,
    options: &Options,
    keep: &Keep<'_, T>,
) -> Result<(Run, Vec<T>), Error> {
    if matches!(load::find(input), Ok(load::Found::ChromeDir(_))) {
        return investigate_ranks(input, options, keep);
    }
    investigate_loaded(input, options, keep)
}

/// Every capture of `input` loaded at once (a file, an XSpace, a JAX capture directory, a
/// multi-process export).
fn investigate_loaded<T>(
    input: &Path,
    options: &Options,
    keep: &Keep<'_, T>,
) -> Result<(Run, Vec<T>), Error> {
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
    let analysis = if options.skip_rows {
        analysis::skip_stats_loaded_without_rows(input, &loaded, &options.skip_config())?
    } else {
        analysis::skip_stats_loaded(input, &loaded, &options.skip_config(), &mut rows_csv)?
    };
    check_step(input, &analysis.reports[0], options)?;
    let kept = analysis
        .reports
        .iter()
        .zip(&loaded)
        .map(|(r, l)| keep(l, r))
        .collect();
    let mut captures = PerCapture::default();
    for l in &loaded {
        captures.push(CaptureParts::of(l));
    }
    let drawn: Vec<(&CaptureAnalysis, &Loaded)> = analysis.reports.iter().zip(&loaded).collect();
    let what_if = what_if_runs(&drawn, options.what_if.as_ref());
    let investigation = assemble(&Parts {
        input,
        options,
        analysis: &analysis,
        captures: &captures,
        drawn: &drawn,
        roofline: sections::roofline_of(&loaded),
        attribution: loaded.first().and_then(sections::attribution_of),
        detail_note: None,
        unread: &unread,
        notes: &notes,
        xplane: match loaded.as_slice() {
            [one] => Some(one),
            _ => None,
        },
    });
    let run = Run {
        investigation,
        rows: Rows::Bytes(rows_csv),
        what_if,
    };
    Ok((run, kept))
}

/// `--step` must name a step of the capture whose steps are drawn.
fn check_step(input: &Path, report: &CaptureAnalysis, options: &Options) -> Result<(), Error> {
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
struct RankSummary<T> {
    report: CaptureAnalysis,
    parts: CaptureParts,
    /// Its `rows.csv` rows (with the rank column, no header).
    rows: PathBuf,
    /// What the caller keeps of it.
    kept: T,
}

/// What the investigation keeps of one capture besides its skip-stats report.
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

fn slow_key(report: &CaptureAnalysis, path: &Path) -> SlowKey {
    (
        report.steady_step_spread().map(|s| s.median),
        std::cmp::Reverse((report.rank, path.to_path_buf())),
    )
}

/// A directory of rank traces, one rank at a time on `load::map_each`'s pool.
fn investigate_ranks<T: Send>(
    input: &Path,
    options: &Options,
    keep: &Keep<'_, T>,
) -> Result<(Run, Vec<T>), Error> {
    let config = options.skip_config();
    let row_parts = analysis::SkipRowParts::create("investigate-rows")?;
    // The slowest rank so far, by `slow_key`: the one capture kept past its summary.
    let kept: Mutex<Option<(SlowKey, Loaded)>> = Mutex::new(None);
    let mapped = load::map_each(input, |l| -> Result<RankSummary<T>, Error> {
        let (report, part) = row_parts.report(&l, &config)?;
        let summary = RankSummary {
            parts: CaptureParts::of(&l),
            rows: part,
            kept: keep(&l, &report),
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
        return investigate_loaded(input, options, keep);
    }
    let unread: Vec<String> = failed.iter().map(|e| analysis::error_chain(e)).collect();
    let notes = load::rank_notes(input, ranks.iter().map(|(p, r, _)| (p.as_path(), *r)));
    let (mut reports, mut captures, mut parts, mut paths, mut kept_each) =
        (vec![], PerCapture::default(), vec![], vec![], vec![]);
    for (path, rank, s) in ranks {
        reports.push(s.report);
        captures.push(s.parts);
        parts.push(s.rows);
        paths.push((path, rank));
        kept_each.push(s.kept);
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
    let (chosen, is_straggler) = match straggler {
        Some(i) => (i, true),
        None => (slowest, false),
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
    let detail_note = (analysis.reports.len() > 1).then(|| Drawn {
        who: who(report),
        straggler: is_straggler,
    });
    let mut investigation = assemble(&Parts {
        input,
        options,
        analysis: &analysis,
        captures: &captures,
        drawn: &[(report, &detail)],
        roofline: sections::roofline_of(std::slice::from_ref(&detail)),
        attribution: sections::attribution_of(&detail),
        detail_note,
        unread: &unread,
        notes: &notes,
        xplane: None,
    });
    let joint = joint::Ranks {
        paths: &paths,
        reports: &analysis.reports,
        chosen,
        detail: &detail,
    };
    let what_if = joint::replay_ranks(&joint, &mut investigation, options.what_if.as_ref())
        .unwrap_or_else(|| what_if_runs(&[(report, &detail)], options.what_if.as_ref()));
    let run = Run {
        investigation,
        rows: Rows::Parts { parts, row_parts },
        what_if,
    };
    Ok((run, kept_each))
}

/// What the investigation needs of one capture besides its skip-stats report and GPU
/// summary, taken while the capture is in memory.
#[derive(Debug, Clone)]
struct CaptureFacts {
    /// How the capture is named in per-capture tables: its rank, else its file name.
    who: Who,
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
            .map_or_else(|| Who::File(file_name(&l.path)), Who::Rank),
        gpus,
        device_kernels: sections::device_kernel_counts(c),
        activities: c.activities().len(),
        gpu_time: c.activities().iter().map(|x| x.dur.0).sum(),
        has_steps: !c.steps().is_empty(),
        format: c.format(),
    }
}

/// Everything the investigation is assembled from.
struct Parts<'a> {
    input: &'a Path,
    options: &'a Options,
    analysis: &'a InputAnalysis,
    captures: &'a PerCapture,
    /// The captures steps 3 to 6 describe, with their reports: every capture of a single
    /// input, one rank of a rank directory. The first is the one of steps 4 to 6.
    drawn: &'a [(&'a CaptureAnalysis, &'a Loaded)],
    roofline: Option<Result<roofline::Roofline, String>>,
    attribution: Option<Result<attribution::Attribution, String>>,
    /// For a rank directory of two ranks or more: which rank steps 3 to 6 describe.
    detail_note: Option<Drawn>,
    unread: &'a [String],
    notes: &'a [load::Note],
    /// The one capture of a single input (for the XSpace vs JSON check).
    xplane: Option<&'a Loaded>,
}

/// The investigation, in the order the report shows it (trust items and asks in the
/// order the steps add them).
fn assemble(p: &Parts<'_>) -> Investigation {
    let analysis = p.analysis;
    let mut trust = Vec::new();
    let mut new_capture = Vec::new();
    let (detail_report, detail) = p.drawn[0];
    let captures: Vec<CaptureResult> = analysis
        .reports
        .iter()
        .zip(&p.captures.facts)
        .zip(&p.captures.summaries)
        .map(|((r, f), sm)| sections::capture_result(r, f, sm))
        .collect();
    let across_ranks =
        analysis::cross_rank(&p.captures.timelines, &cross_rank_config()).map(|cross| {
            AcrossRanks {
                cross,
                heat_map: analysis::step_heat_map(&p.captures.timelines),
            }
        });
    let reconciliation =
        sections::reconciliation(analysis, &p.captures.facts, p.xplane, &mut trust);
    let swimlanes = sections::swimlanes(analysis, p.drawn, p.options);
    let ops = sections::ops(
        &p.captures.summaries,
        p.attribution.clone(),
        &mut trust,
        &mut new_capture,
    );
    let roofline = sections::roofline(p.roofline.clone(), &mut trust, &mut new_capture);
    let advice = advice::advise(detail_report, &detail.capture);
    sections::collect_trust(analysis, &p.captures.facts, &mut trust, &mut new_capture);
    sections::unread_trust(p.unread, &mut trust, &mut new_capture);
    for note in p.notes {
        let code = if matches!(note, load::Note::DuplicateRank { .. }) {
            "duplicate-rank"
        } else {
            "not-a-rank"
        };
        trust.push(TrustNote::new(
            TrustSource::Input,
            None,
            trace_model::TrustItem::note(code, note.to_string()),
        ));
    }
    Investigation {
        schema: SCHEMA,
        input: p.input.display().to_string(),
        input_name: file_name(p.input),
        format: analysis.reports[0].format.describe().to_string(),
        captures,
        first: sections::first_capture(analysis),
        last_finisher: analysis.last_finisher.as_ref().map(|lf| LastFinisher {
            rank: lf.rank,
            step: lf.step,
            behind_earliest: lf.behind_earliest,
            aligned_on_base_time: lf.aligned_on_base_time,
        }),
        across_ranks,
        reconciliation,
        swimlanes,
        ops,
        roofline,
        advice,
        trust,
        new_capture,
        drawn: p.detail_note.clone(),
        step_chosen: p.options.step.is_some(),
        unread: p.unread.to_vec(),
        notes: p
            .notes
            .iter()
            .map(|note| RankNote {
                duplicate: matches!(note, load::Note::DuplicateRank { .. }),
                message: note.to_string(),
            })
            .collect(),
    }
}

fn cross_rank_config() -> analysis::CrossRankConfig {
    analysis::CrossRankConfig {
        late_threshold: None,
    }
}

/// A path's file name (the whole path when it has none).
pub fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// `rank N`, else the file name of the report's label.
/// Which capture `r` is of: its rank, else its label's file name.
fn who(r: &CaptureAnalysis) -> Who {
    r.rank
        .map_or_else(|| Who::File(file_name(Path::new(&r.label))), Who::Rank)
}

/// Why a serialised investigation (`report.json`) could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JsonError {
    /// Not JSON, or not an investigation of this layout.
    #[error("not a tracewise report.json: {0}")]
    Json(#[from] serde_json::Error),
    /// Written by a version of tracewise with another schema.
    #[error("report.json schema {found}; this version reads schema {SCHEMA}")]
    Schema {
        /// The file's schema version.
        found: u32,
    },
}

/// The investigation as `report.json` text (pretty-printed, ending in a newline); its
/// first key is `schema`.
pub fn to_json(investigation: &Investigation) -> String {
    let mut text = serde_json::to_string_pretty(investigation)
        .unwrap_or_else(|e| unreachable!("an Investigation always serialises: {e}"));
    text.push('\n');
    text
}

/// The investigation of a `report.json` text. Its schema is checked first, so a report of
/// another version says so rather than which field it lacks.
pub fn from_json(text: &str) -> Result<Investigation, JsonError> {
    #[derive(serde::Deserialize)]
    struct Head {
        schema: u32,
    }
    let head: Head = serde_json::from_str(text)?;
    if head.schema != SCHEMA {
        return Err(JsonError::Schema { found: head.schema });
    }
    Ok(serde_json::from_str(text)?)
}
