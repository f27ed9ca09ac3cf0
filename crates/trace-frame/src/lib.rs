//! Chrome-trace (Kineto) events as a polars DataFrame: SQL over them, a Parquet cache,
//! Hive-partitioned Parquet export, and Holistic Trace Analysis' analyses natively.
//! This is the only crate of the workspace that depends on polars.
//!
//! # The events frame
//!
//! One row per element of `traceEvents`, in file order, built from chrome-reader's raw
//! event layer (no JSON value tree). A capture of another format (Nsight Systems, rocprof,
//! XSpace) has the rows its Chrome JSON export would have, built straight from the loaded
//! capture ([`capture_frame`]):
//!
//! | column | type | what |
//! |---|---|---|
//! | `name`, `cat`, `ph` | String | as in the event (null when absent) |
//! | `ts`, `dur` | Float64 | microseconds, as in the file |
//! | `pid`, `tid`, `id` | Int64, or String when some are strings | as in the event |
//! | `ts_ns`, `dur_ns` | Int64 | the same times in integer nanoseconds, converted exactly from the text |
//! | `event_index` | Int64 | position in `traceEvents` |
//! | `rank` | Int64 | `distributedInfo.rank`, else the number in the file name, else null |
//! | `args_<key>` | one per key of any event's `args` | Int64 when every value is an integer, Float64 when all are numbers, Boolean when all are booleans, else String (numbers as text; arrays and objects as their JSON text); null where the event lacks the key |
//!
//! # Export layout
//!
//! `--export DIR` writes `DIR/rank=N/events.parquet` (zstd), one per rank, with the columns
//! above except `rank`, which is the Hive partition key in the directory name. A column has
//! one type in every file: where ranks typed it differently, the files that disagree are
//! rewritten with Float64 (numbers in every rank) or String. Ranks can have different
//! `args_*` columns; engines that union by name (DuckDB
//! `read_parquet('DIR/**/*.parquet', hive_partitioning = true, union_by_name = true)`,
//! Spark `mergeSchema`, polars' Hive scan) read them as one table.
//!
//! # Example
//!
//! ```no_run
//! let loaded = trace_frame::load(std::path::Path::new("rank0.json.gz"), None).unwrap();
//! let counts = trace_frame::run_sql(&loaded.events, "SELECT cat, COUNT(*) FROM events GROUP BY cat").unwrap();
//! println!("{counts}");
//! ```

#![warn(missing_docs)]

mod args_text;
mod arrow;
mod cache;
mod capture_rows;
mod error;
mod export;
mod frame;
mod hta_trace;
mod skip_stats;
mod sources;
mod sql;
mod summary;
mod threads;

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

pub use ::timeline::{
    CpEdge, CpEdgeType, CpNode, CriticalPath, CriticalPathBound, CriticalPathGraph, Gpu, GpuKind,
    Host, HostCat, HtaIntRanges, HtaView, SyncEvent, SyncKind, Timeline, critical_path,
    critical_path_graph,
};
pub use arrow::{ArrowArrayStream, arrow_stream};
pub use cache::{
    CacheUse, cache_path, is_fresh, read_frame_cached, read_frame_cached_with, read_parquet,
    write_parquet_atomic,
};
pub use capture_rows::capture_frame;
pub use error::Error;
pub use export::{Exported, SUMMARY_COLUMNS, export_hive, export_hive_into, read_export};
pub use frame::{RankFrame, args_scanned, concat_frames, read_frame, read_frame_with, trace_paths};
/// polars' frame, re-exported so that the Python package holds frames without depending on
/// polars itself.
pub use polars::prelude::DataFrame;
pub use skip_stats::{LateRank, SkipStatsRank, SkipStatsSummary, skip_stats_summary};
pub use sources::{FrameSources, frame_sources};
pub use sql::{SQL_MAX_ROWS, check_sql, frame_to_json, run_sql, run_sql_limited, table};
pub use summary::{
    BOTTLENECK_RULE, Bottleneck, Recommendation, Shares, Summary, SummaryPart, TopKernel, summarize,
};

/// Holistic Trace Analysis 0.5.0's analyses (the `timeline` crate's), and its
/// `generate_trace_with_counters` and `overlay_critical_path_analysis` outputs.
pub mod hta {
    pub use crate::hta_trace::{
        Found, TraceEvent, json_str, raw_str, write_fields, write_trace_edited,
    };
    pub use ::timeline::hta::*;
    /// An event as the trace writer's `mark` sees it ([`write_trace_edited`]).
    pub use chrome_reader::RawEvent;
}

/// The deeper analyses by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum AnalysisName {
    /// Time per HTA kernel type and per kernel name ([`hta::kernel_type_breakdown`],
    /// [`hta::kernel_breakdown`]).
    KernelBreakdown,
    /// Idle, compute and non-compute time per rank ([`hta::temporal`]).
    Temporal,
    /// Idle time per stream split into host wait, kernel wait and other
    /// ([`hta::idle_breakdown`]).
    Idle,
    /// How much communication time computation covers ([`hta::overlap`]).
    Overlap,
    /// The ranks whose last long NCCL kernel starts latest ([`hta::stragglers`]).
    Stragglers,
    /// Launch costs and delays ([`hta::launch_stats`]).
    LaunchStats,
    /// Outstanding GPU operations per stream ([`hta::queue_length`]).
    QueueLength,
    /// The longest dependency path of one step ([`critical_path()`]).
    CriticalPath,
}

impl AnalysisName {
    /// Every analysis, in the order the report shows them.
    pub const ALL: [AnalysisName; 8] = [
        AnalysisName::KernelBreakdown,
        AnalysisName::Temporal,
        AnalysisName::Idle,
        AnalysisName::Overlap,
        AnalysisName::Stragglers,
        AnalysisName::LaunchStats,
        AnalysisName::QueueLength,
        AnalysisName::CriticalPath,
    ];

    /// The command-line spelling (`kernel-breakdown`, `launch-stats`, …).
    pub fn name(self) -> &'static str {
        match self {
            AnalysisName::KernelBreakdown => "kernel-breakdown",
            AnalysisName::Temporal => "temporal",
            AnalysisName::Idle => "idle",
            AnalysisName::Overlap => "overlap",
            AnalysisName::Stragglers => "stragglers",
            AnalysisName::LaunchStats => "launch-stats",
            AnalysisName::QueueLength => "queue-length",
            AnalysisName::CriticalPath => "critical-path",
        }
    }

    /// The analysis whose [`name`](AnalysisName::name) is `s`, if any.
    pub fn parse(s: &str) -> Option<AnalysisName> {
        AnalysisName::ALL.into_iter().find(|a| a.name() == s)
    }
}

/// Every rank of a trace path, loaded.
#[derive(Debug, Clone)]
pub struct LoadedRanks {
    /// The path given to [`load()`]: a trace file or a directory of them.
    pub input: PathBuf,
    /// One frame per trace file, sorted by rank, then path.
    pub frames: Vec<RankFrame>,
    /// One frame of all ranks (its `rank` column tells them apart).
    pub events: DataFrame,
    /// How each file was obtained when a cache directory was given.
    pub cache: Vec<CacheUse>,
    /// The files of a directory that could not be read, each as its error (which names
    /// the file): the frames are of the others. Not empty means a partial result.
    pub unread: Vec<String>,
    /// What to know about a directory's set of ranks: duplicate ranks (every frame is
    /// kept), files not read as ranks (`load::rank_notes`).
    pub notes: Vec<load::Note>,
}

/// Loads a trace file, or every trace file of a directory (in parallel), optionally
/// through the Parquet cache in `cache_dir`. In a directory a file that cannot be read is
/// left out and listed in [`LoadedRanks::unread`], unless none can be read.
pub fn load(input: &Path, cache_dir: Option<&Path>) -> Result<LoadedRanks, Error> {
    load_columns(input, cache_dir, frame::Columns::All)
}

/// [`load`] with `columns` (without a cache: the cache keeps every column).
fn load_columns(
    input: &Path,
    cache_dir: Option<&Path>,
    columns: frame::Columns,
) -> Result<LoadedRanks, Error> {
    let sources = frame_sources(input)?;
    // The cache is of Chrome trace files: a capture of another format is loaded again
    // each run.
    let cache_dir = cache_dir.filter(|_| sources.is_chrome());
    // Several files are read in parallel, each parsed on its reading thread; one file is
    // parsed on chrome-reader's default number of threads.
    let threads = if sources.len() == 1 {
        chrome_reader::default_threads()
    } else {
        1
    };
    // On plain threads, not rayon's pool: each file's read waits for polars' pool, and a
    // waiting rayon worker would run the next file's read nested on its stack
    // ([`threads`]), overflowing it with thousands of ranks.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let each: Vec<usize> = (0..sources.len()).collect();
    let res: Vec<Result<(RankFrame, Option<CacheUse>), Error>> =
        crate::threads::each(&each, cores, |_, &i| match cache_dir {
            Some(dir) => {
                read_frame_cached_with(sources.path(i), dir, threads).map(|(f, u)| (f, Some(u)))
            }
            None => sources.read(i, threads, columns).map(|f| (f, None)),
        });
    let mut frames = Vec::new();
    let mut cache = Vec::new();
    let mut failed = Vec::new();
    for r in res {
        match r {
            Ok((f, u)) => {
                frames.push(f);
                cache.extend(u);
            }
            Err(e) => failed.push(e),
        }
    }
    if frames.is_empty() || sources.len() == 1 {
        if let Some(first) = failed.into_iter().next() {
            return Err(first);
        }
        failed = Vec::new();
    }
    let unread = failed.iter().map(|e| e.to_string()).collect();
    frames.sort_by_key(|f| (f.rank, f.path.clone()));
    let notes = load::rank_notes(input, frames.iter().map(|f| (f.path.as_path(), f.rank)));
    let events = if frames.len() == 1 {
        frames[0].df.clone()
    } else {
        concat_frames(&frames)?
    };
    Ok(LoadedRanks {
        input: input.to_path_buf(),
        frames,
        events,
        cache,
        unread,
        notes,
    })
}

/// Everything profile-model reports; the parts not asked for are empty.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileModelReport {
    /// The trace file or directory analysed ([`LoadedRanks::input`]).
    pub input: PathBuf,
    /// The quick summary and findings; always computed.
    pub summary: Summary,
    /// How each file was obtained when a cache directory was given ([`LoadedRanks::cache`]).
    pub cache: Vec<CacheUse>,
    /// Union time per HTA kernel type over all ranks, largest first.
    pub kernel_types: Vec<hta::KernelTypeRow>,
    /// Per rank and kernel name: count and duration statistics.
    pub kernels: Vec<hta::KernelStatsRow>,
    /// One temporal breakdown per rank that has GPU activities.
    pub temporal: Vec<hta::Temporal>,
    /// One row per stream of every rank, with HTA's 30 µs kernel-wait threshold.
    pub idle: Vec<hta::IdleRow>,
    /// One row per rank.
    pub overlap: Vec<hta::Overlap>,
    /// Straggler detection naming the 2 latest ranks; `None` when not asked for or when it
    /// cannot run (then `not_run` says why).
    pub stragglers: Option<hta::Stragglers>,
    /// One entry per rank.
    pub launch_stats: Vec<hta::HtaLaunchStats>,
    /// One row per stream of every rank.
    pub queue_length: Vec<hta::QueueRow>,
    /// The first rank's critical path over the asked step (at most one entry).
    pub critical_path: Vec<CriticalPath>,
    /// Our definitions beside HTA's (temporal, idle and stragglers): skip-stats' analysis
    /// of the same input, per rank. Serialized as `ours`.
    #[serde(rename = "ours")]
    pub skip_stats: Option<SkipStatsSummary>,
    /// Analyses that could not run, with the reason.
    pub not_run: Vec<(String, String)>,
    /// The files of a directory that could not be read ([`LoadedRanks::unread`]): the
    /// report is of the others.
    pub not_read: Vec<String>,
}

/// The report as JSON (profile-model's `--json`): its serialisation, every number with its
/// label.
pub fn render_json(r: &ProfileModelReport) -> String {
    serde_json::to_string_pretty(r).expect("the report serialises: plain data")
}

/// One capture's timeline (before any HTA view): [`Timeline::from_capture`], with the rank
/// its frame has (`distributedInfo.rank`, else the loader's: the file name's number, the
/// process).
fn capture_timeline(l: &load::Loaded) -> Timeline {
    let mut t = Timeline::from_capture(&l.capture, &l.path);
    t.rank = l.capture.meta().rank.or(l.rank);
    t
}

/// The captures' timelines as HTA sees them, in the frames' order (rank, then path).
fn hta_view(loaded: &[load::Loaded]) -> Vec<Timeline> {
    let mut ts: Vec<Timeline> = (loaded.par_iter())
        .map(|l| capture_timeline(l).into_hta_view())
        .collect();
    ts.sort_by(|a, b| (a.rank, &a.path).cmp(&(b.rank, &b.path)));
    ts
}

/// Every capture of `input` ([`load::load_each`]): a directory's files that cannot be read
/// are left out ([`LoadedRanks::unread`] names them), unless none can be read.
fn load_captures(input: &Path) -> Result<load::LoadedEach, Error> {
    let mut each = load::load_each(input)?;
    if each.loaded.is_empty() && !each.failed.is_empty() {
        return Err(each.failed.remove(0).into());
    }
    Ok(each)
}

/// The ranks' timelines as HTA sees them (rounded to whole µs when the trace has
/// fractional timestamps; pre-capture work dropped on multi-step traces), each built from
/// its capture ([`Timeline::from_capture`]) of `loaded`'s input, in the frames' order.
pub fn hta_timelines(loaded: &LoadedRanks) -> Result<Vec<Timeline>, Error> {
    Ok(hta_view(&load_captures(&loaded.input)?.loaded))
}

/// The timelines [`hta_timelines`] gives, without the frames: each capture of `input`
/// becomes its timeline on the thread that read it and is dropped. As in [`load()`], a
/// directory's unreadable files are left out unless none can be read.
pub fn load_hta_timelines(input: &Path) -> Result<Vec<Timeline>, Error> {
    let read = read_timelines(input)?;
    Ok(read.into_iter().map(|(_, t)| t.into_hta_view()).collect())
}

/// The ranks' timelines as HTA 0.5.0's `TraceAnalysis(trace_dir=input,
/// include_last_profiler_step=…)` sees them ([`Timeline::into_hta_view_with`] with
/// [`HtaView::hta`]): each rank is `distributedInfo.rank`, else 0 (HTA's numbering, not
/// the file name's), in rank order; with two files of one rank, the last by name is kept
/// (as HTA keeps the last it lists, with a warning). With them, the earliest start of an
/// event over the ranks, in ns (whole µs on a trace with fractional ones): HTA's times are
/// relative to it. `rank_of_file`, when given, numbers the files it names (HTA's
/// `trace_files={rank: file}`).
pub fn load_hta_view(
    input: &Path,
    include_last_profiler_step: bool,
    rank_of_file: Option<&std::collections::HashMap<PathBuf, i64>>,
) -> Result<(Vec<Timeline>, Option<i64>), Error> {
    let read = read_timelines(input)?;
    let min_ts = read.iter().filter_map(|(_, t)| t.hta_origin).min();
    let names: std::collections::BTreeSet<i64> = read
        .iter()
        .flat_map(|(_, t)| t.steps.iter().map(|s| s.0))
        .collect();
    let view = HtaView::hta(
        include_last_profiler_step,
        names.len() >= 2,
        min_ts.unwrap_or(0),
    );
    let mut by_rank: std::collections::BTreeMap<i64, Timeline> = std::collections::BTreeMap::new();
    for (rank_in_file, mut t) in read {
        let given = rank_of_file.and_then(|m| m.get(&t.path).copied());
        let rank = given.or(rank_in_file).unwrap_or(0);
        t.rank = Some(rank);
        by_rank.insert(rank, t);
    }
    let timelines = by_rank
        .into_values()
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|t| t.into_hta_view_with(&view))
        .collect();
    Ok((timelines, min_ts))
}

/// Every capture of `input` read into its timeline (as read, before any HTA view, with
/// HTA's origin), with its `distributedInfo.rank`, sorted by (rank, path): each capture
/// is dropped once it is a timeline ([`load::map_each`]).
fn read_timelines(input: &Path) -> Result<Vec<(Option<i64>, Timeline)>, Error> {
    // A timeline has no input shapes: the captures are read without them.
    let res = load::map_each_with(input, &load::Keep::NO_SHAPES, |l| {
        (l.capture.meta().rank, capture_timeline(&l))
    })?;
    let single = res.len() == 1;
    let mut read = Vec::new();
    let mut failed = Vec::new();
    for r in res {
        match r {
            Ok((_, _, t)) => read.push(t),
            Err(e) => failed.push(e),
        }
    }
    if (read.is_empty() || single)
        && let Some(first) = failed.into_iter().next()
    {
        return Err(first.into());
    }
    read.sort_by(|a, b| (a.1.rank, &a.1.path).cmp(&(b.1.rank, &b.1.path)));
    Ok(read)
}

/// Which step the critical path is of: instance `instance` (0 = the first, in start order)
/// of the host annotations whose name contains `annotation`; an empty annotation is the
/// whole trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepQuery {
    /// Text the annotation's name must contain (`ProfilerStep` by default).
    pub annotation: String,
    /// Which of the matching annotations, counted from 0 in start order.
    pub instance: usize,
}

impl Default for StepQuery {
    /// The first `ProfilerStep`.
    fn default() -> StepQuery {
        StepQuery {
            annotation: "ProfilerStep".into(),
            instance: 0,
        }
    }
}

/// The summary and the named analyses over a loaded trace. The critical path is of the
/// first rank, over the step `step` names. HTA's analyses run on the timelines of the
/// input's captures ([`hta_timelines`]); the summary counts the frames' events too.
pub fn analyze(
    loaded: &LoadedRanks,
    analyses: &[AnalysisName],
    step: &StepQuery,
) -> Result<ProfileModelReport, Error> {
    let each = load_captures(&loaded.input)?;
    let frame_part = SummaryPart::of_frame(&loaded.events)?;
    let (hta, skip_stats) = analyze_captures(&loaded.input, &each.loaded, true, analyses, step);
    Ok(with_skip_stats(
        report(loaded, frame_part, hta?),
        skip_stats,
    ))
}

/// HTA's analyses on the timelines of `captures` and, beside them, our definitions
/// (`across_ranks`: with the stragglers across the captures), when asked.
fn analyze_captures(
    input: &Path,
    captures: &[load::Loaded],
    across_ranks: bool,
    analyses: &[AnalysisName],
    step: &StepQuery,
) -> (
    Result<HtaResults, Error>,
    Option<Result<SkipStatsSummary, Error>>,
) {
    // Our definitions on cores of their own while HTA's run on the timelines.
    let (hta, skip_stats) = rayon::join(
        || hta_results(&hta_view(captures), analyses, step),
        || {
            needs_skip_stats(analyses)
                .then(|| skip_stats::skip_stats_summary_of_loaded(input, captures, across_ranks))
        },
    );
    (Ok(hta), skip_stats)
}

/// [`load()`] and then [`analyze`] (the inner result), with the captures read beside the
/// frames instead of after them: the same report, sooner. Without a cache the frames get
/// only the columns the summary reads (the same rows; `--sql` and `--export` load every
/// column).
pub fn load_and_analyze(
    input: &Path,
    cache_dir: Option<&Path>,
    analyses: &[AnalysisName],
    step: &StepQuery,
) -> Result<(LoadedRanks, Result<ProfileModelReport, Error>), Error> {
    let single = match cache_dir {
        None => load::single_chrome_file(input).ok().flatten(),
        Some(_) => None,
    };
    if let Some(file) = single {
        // One file: the frame and the capture come from one parse; the capture goes on to
        // its analyses as soon as it is finished, while the frame is finished.
        let threads = chrome_reader::default_threads();
        let ((loaded, frame_part), (hta, skip_stats)) = frame::read_frame_and_capture(
            &file,
            threads,
            frame::Columns::Analyses,
            |frame| {
                let part = SummaryPart::of_frame(&frame.df);
                let loaded = LoadedRanks {
                    input: input.to_path_buf(),
                    events: frame.df.clone(),
                    notes: load::rank_notes(input, [(frame.path.as_path(), frame.rank)]),
                    frames: vec![frame],
                    cache: Vec::new(),
                    unread: Vec::new(),
                };
                (loaded, part)
            },
            |capture| match capture {
                Ok(c) => {
                    let captures = [load::Loaded::chrome(input, &file, c)];
                    analyze_captures(input, &captures, false, analyses, step)
                }
                Err(e) => (Err(e.into()), None),
            },
        )?;
        let report = frame_part.and_then(|part| Ok(report(&loaded, part, hta?)));
        return Ok((loaded, report.map(|r| with_skip_stats(r, skip_stats))));
    }
    let columns = match cache_dir {
        Some(_) => frame::Columns::All,
        None => frame::Columns::Analyses,
    };
    let (each, loaded) = rayon::join(
        || load_captures(input),
        || load_columns(input, cache_dir, columns),
    );
    let loaded = loaded?;
    let report = each.and_then(|each| {
        let frame_part = SummaryPart::of_frame(&loaded.events)?;
        let (hta, skip_stats) = analyze_captures(input, &each.loaded, true, analyses, step);
        Ok(with_skip_stats(
            report(&loaded, frame_part, hta?),
            skip_stats,
        ))
    });
    Ok((loaded, report))
}

/// The analyses that reduce each rank to a summary of its own: a rank directory asked only
/// these (the summary always) is read one rank at a time by [`analyze_by_rank`].
const PER_RANK: [AnalysisName; 6] = [
    AnalysisName::Stragglers,
    AnalysisName::Temporal,
    AnalysisName::Idle,
    AnalysisName::Overlap,
    AnalysisName::LaunchStats,
    AnalysisName::QueueLength,
];

/// Whether [`analyze_by_rank`] can answer `analyses` for `input`: a directory of two or
/// more Chrome rank traces, and only analyses that reduce each rank on its own (the
/// kernel breakdown and the critical path need the ranks together, `--sql` and the cache
/// every column).
pub fn reads_by_rank(input: &Path, analyses: &[AnalysisName]) -> bool {
    analyses.iter().all(|a| PER_RANK.contains(a))
        && matches!(load::find(input), Ok(load::Found::ChromeDir(_)))
        && trace_paths(input).is_ok_and(|p| p.len() > 1)
}

/// A report of a rank directory read one rank at a time, and what to know about its set
/// of ranks.
#[derive(Debug)]
pub struct ByRank {
    /// The report [`load_and_analyze`] gives for the same input and analyses (with
    /// `cache` empty).
    pub report: ProfileModelReport,
    /// Duplicate ranks, files not read as ranks ([`LoadedRanks::notes`]).
    pub notes: Vec<load::Note>,
}

/// One rank reduced to its share of the report.
struct RankPart {
    path: PathBuf,
    rank: Option<i64>,
    summary: SummaryPart,
    stragglers: Option<hta::StragglerInput>,
    temporal: Option<hta::Temporal>,
    idle: Vec<hta::IdleRow>,
    overlap: Option<hta::Overlap>,
    launch_stats: Option<hta::HtaLaunchStats>,
    queue_length: Vec<hta::QueueRow>,
    ours: Option<Result<(analysis::CaptureAnalysis, analysis::RankTimeline), analysis::Error>>,
}

/// The summary and `analyses` (each one that [`reads_by_rank`] accepts) of a rank
/// directory, each rank read once (frame and model from one parse), reduced to its share
/// of the report and dropped: memory is bounded by the ranks being read (one per core),
/// not by the directory. The report equals [`load_and_analyze`]'s.
pub fn analyze_by_rank(input: &Path, analyses: &[AnalysisName]) -> Result<ByRank, Error> {
    let has = |a| analyses.contains(&a);
    let ours = needs_skip_stats(analyses);
    let config = analysis::SkipConfig::default();
    let paths = trace_paths(input)?;
    let read = |path: &PathBuf| -> Result<Result<RankPart, Error>, Error> {
        let (frame_part, part) = frame::read_frame_and_capture(
            path,
            1,
            frame::Columns::Analyses,
            |frame| SummaryPart::of_frame(&frame.df),
            |capture| -> Result<RankPart, Error> {
                let l = load::Loaded::chrome(input, path, capture?);
                let t = capture_timeline(&l).into_hta_view();
                let ours = ours.then(|| {
                    let label = l.path.to_string_lossy();
                    Ok((
                        analysis::analyze_capture(&l.capture, &label, l.rank, &config),
                        analysis::rank_timeline(&l.capture, &label, l.rank),
                    ))
                });
                Ok(RankPart {
                    path: t.path.clone(),
                    rank: t.rank,
                    summary: SummaryPart::of_timeline(&t),
                    stragglers: has(AnalysisName::Stragglers).then(|| hta::straggler_input(&t)),
                    temporal: has(AnalysisName::Temporal)
                        .then(|| hta::temporal(&t))
                        .flatten(),
                    idle: if has(AnalysisName::Idle) {
                        hta::idle_breakdown(&t, 30)
                    } else {
                        Vec::new()
                    },
                    overlap: has(AnalysisName::Overlap).then(|| hta::overlap(&t)),
                    launch_stats: has(AnalysisName::LaunchStats).then(|| hta::launch_stats(&t)),
                    queue_length: if has(AnalysisName::QueueLength) {
                        hta::queue_length(&t)
                    } else {
                        Vec::new()
                    },
                    ours,
                })
            },
        )?;
        let frame_part = frame_part?;
        Ok(part.map(|mut p| {
            let mut summary = frame_part;
            summary.merge(p.summary);
            p.summary = summary;
            p
        }))
    };
    // Ranks side by side on rayon's pool (one per thread), each parsed on its own thread.
    let results: Vec<Result<RankPart, Error>> =
        paths.par_iter().map(|p| read(p).and_then(|r| r)).collect();
    let mut parts = Vec::new();
    let mut failed = Vec::new();
    for r in results {
        match r {
            Ok(p) => parts.push(p),
            Err(e) => failed.push(e),
        }
    }
    if parts.is_empty() {
        return Err(failed.into_iter().next().unwrap_or_else(|| Error::Missing {
            path: input.to_path_buf(),
            what: "no trace files".into(),
        }));
    }
    parts.sort_by(|a, b| (a.rank, &a.path).cmp(&(b.rank, &b.path)));
    let notes = load::rank_notes(input, parts.iter().map(|p| (p.path.as_path(), p.rank)));
    let mut summary = SummaryPart::default();
    let (mut stragglers, mut temporal, mut idle, mut overlap) = (vec![], vec![], vec![], vec![]);
    let (mut launch_stats, mut queue_length, mut reports) = (vec![], vec![], vec![]);
    let mut ours_failed = None;
    for p in parts {
        summary.merge(p.summary);
        stragglers.extend(p.stragglers);
        temporal.extend(p.temporal);
        idle.extend(p.idle);
        overlap.extend(p.overlap);
        launch_stats.extend(p.launch_stats);
        queue_length.extend(p.queue_length);
        match p.ours {
            Some(Ok(r)) => reports.push(r),
            Some(Err(e)) => ours_failed = ours_failed.or(Some(e)),
            None => {}
        }
    }
    // Our definitions' reports in the loader's order (rank, then path), as `load` gives.
    reports.sort_by(|(a, _), (b, _)| (a.rank, &a.label).cmp(&(b.rank, &b.label)));
    let (reports, timelines): (Vec<_>, Vec<_>) = reports.into_iter().unzip();
    let mut not_run = Vec::new();
    let stragglers = if has(AnalysisName::Stragglers) {
        let found = hta::stragglers_of(&stragglers, 2);
        if found.is_none() {
            not_run.push((
                "stragglers".into(),
                "needs ranks with ProfilerStep annotations and ncclKernel* kernels".into(),
            ));
        }
        found
    } else {
        None
    };
    let report = ProfileModelReport {
        skip_stats: None,
        input: input.to_path_buf(),
        summary: summary.finish(),
        cache: Vec::new(),
        kernel_types: Vec::new(),
        kernels: Vec::new(),
        temporal,
        idle,
        overlap,
        stragglers,
        launch_stats,
        queue_length,
        critical_path: Vec::new(),
        not_run,
        not_read: failed.iter().map(|e| e.to_string()).collect(),
    };
    let skip = ours.then(|| {
        let a = match ours_failed {
            Some(e) => Err(e),
            None => Ok((
                analysis::skip_stats_assemble(input, reports, true),
                timelines,
            )),
        };
        skip_stats::from_analysis(input, a)
    });
    Ok(ByRank {
        report: with_skip_stats(report, skip),
        notes,
    })
}

/// Whether an analysis asked for has our definitions beside HTA's.
fn needs_skip_stats(analyses: &[AnalysisName]) -> bool {
    [
        AnalysisName::Temporal,
        AnalysisName::Idle,
        AnalysisName::Stragglers,
    ]
    .iter()
    .any(|a| analyses.contains(a))
}

/// `report` with our definitions' outcome, when they ran.
fn with_skip_stats(
    mut report: ProfileModelReport,
    skip_stats: Option<Result<SkipStatsSummary, Error>>,
) -> ProfileModelReport {
    match skip_stats {
        Some(Ok(o)) => report.skip_stats = Some(o),
        Some(Err(e)) => report.not_run.push(("ours".into(), e.to_string())),
        None => {}
    }
    report
}

/// The critical path of the first rank's step `step`, if it has one.
fn critical_path_of(ts: &[Timeline], step: &StepQuery) -> Vec<CriticalPath> {
    ts.first()
        .and_then(|t| critical_path(t, &step.annotation, step.instance))
        .into_iter()
        .collect()
}

/// HTA's analyses of a report, from the timelines alone: the report without the frames'
/// share of the summary ([`report`] adds it) and our definitions.
struct HtaResults {
    /// The timelines' share of the summary.
    summary: SummaryPart,
    kernel_types: Vec<hta::KernelTypeRow>,
    kernels: Vec<hta::KernelStatsRow>,
    temporal: Vec<hta::Temporal>,
    idle: Vec<hta::IdleRow>,
    overlap: Vec<hta::Overlap>,
    stragglers: Option<hta::Stragglers>,
    launch_stats: Vec<hta::HtaLaunchStats>,
    queue_length: Vec<hta::QueueRow>,
    critical_path: Vec<CriticalPath>,
    not_run: Vec<(String, String)>,
}

/// The report of `loaded` with HTA's results and the frames' share of the summary.
fn report(loaded: &LoadedRanks, frame_part: SummaryPart, hta: HtaResults) -> ProfileModelReport {
    let mut summary = frame_part;
    summary.merge(hta.summary);
    ProfileModelReport {
        skip_stats: None,
        input: loaded.input.clone(),
        summary: summary.finish(),
        cache: loaded.cache.clone(),
        kernel_types: hta.kernel_types,
        kernels: hta.kernels,
        temporal: hta.temporal,
        idle: hta.idle,
        overlap: hta.overlap,
        stragglers: hta.stragglers,
        launch_stats: hta.launch_stats,
        queue_length: hta.queue_length,
        critical_path: hta.critical_path,
        not_run: hta.not_run,
        not_read: loaded.unread.clone(),
    }
}

/// HTA's analyses `analyses` on the ranks' timelines (HTA's view).
fn hta_results(ts: &[Timeline], analyses: &[AnalysisName], step: &StepQuery) -> HtaResults {
    let has = |a| analyses.contains(&a);
    // Every analysis reads the timelines only: they run beside each other (the summary
    // and the critical path take longest), on whatever threads are free.
    let (mut summary, mut critical, mut stragglers) = (SummaryPart::default(), None, None);
    let (mut kernel_types, mut kernels) = (Vec::new(), Vec::new());
    let (mut temporal, mut idle, mut overlap) = (Vec::new(), Vec::new(), Vec::new());
    let (mut launch_stats, mut queue_length) = (Vec::new(), Vec::new());
    rayon::scope(|s| {
        s.spawn(|_| {
            for t in ts {
                summary.merge(SummaryPart::of_timeline(t));
            }
        });
        if has(AnalysisName::CriticalPath) {
            s.spawn(|_| critical = Some(critical_path_of(ts, step)));
        }
        if has(AnalysisName::Stragglers) {
            s.spawn(|_| stragglers = Some(hta::stragglers(ts, 2)));
        }
        if has(AnalysisName::KernelBreakdown) {
            s.spawn(|_| kernel_types = hta::kernel_type_breakdown(ts));
            s.spawn(|_| kernels = hta::kernel_breakdown(ts));
        }
        if has(AnalysisName::Temporal) {
            s.spawn(|_| temporal = ts.iter().filter_map(hta::temporal).collect());
        }
        if has(AnalysisName::Idle) {
            s.spawn(|_| idle = ts.iter().flat_map(|t| hta::idle_breakdown(t, 30)).collect());
        }
        if has(AnalysisName::Overlap) {
            s.spawn(|_| overlap = ts.iter().map(hta::overlap).collect());
        }
        if has(AnalysisName::LaunchStats) {
            s.spawn(|_| launch_stats = ts.iter().map(hta::launch_stats).collect());
        }
        if has(AnalysisName::QueueLength) {
            s.spawn(|_| queue_length = ts.iter().flat_map(hta::queue_length).collect());
        }
    });
    let mut not_run = Vec::new();
    if matches!(stragglers, Some(None)) {
        not_run.push((
            "stragglers".into(),
            "needs ranks with ProfilerStep annotations and ncclKernel* kernels".into(),
        ));
    }
    let stragglers = stragglers.flatten();
    let critical_path = match critical {
        Some(cp) => {
            if cp.is_empty() {
                not_run.push((
                    "critical-path".into(),
                    format!(
                        "needs instance {} of an annotation named like `{}`, with CPU ops and \
                         launched kernels in it",
                        step.instance, step.annotation
                    ),
                ));
            }
            cp
        }
        None => Vec::new(),
    };
    HtaResults {
        summary,
        kernel_types,
        kernels,
        temporal,
        idle,
        overlap,
        stragglers,
        launch_stats,
        queue_length,
        critical_path,
        not_run,
    }
}
