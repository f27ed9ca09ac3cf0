//! Hive-partitioned Parquet export: `DIR/rank=N/events.parquet`, one file per rank, written
//! in parallel by a small pool (each worker holds one rank's frame at a time, so memory is
//! bounded by the pool size, not the number of ranks), into a directory output
//! (`output_file::DirOutput`: staged beside `DIR` and put in place whole).
//!
//! Every file has the same type for a column: a rank infers its `args_*` types from its own
//! values (uniform numbers stay numeric, mixed become strings), so after the ranks are
//! written, a column typed differently by different ranks is rewritten in the files that
//! disagree, as Float64 when every rank has numbers and as String otherwise (ranks where
//! the column is all null take the others' type). Engines that read the partitions with
//! one schema (Spark, DataFusion, DuckDB without `union_by_name`) then see one.
//!
//! Beside the events, `DIR/_summary/rank=N/summary.parquet` holds one row per rank
//! ([`SUMMARY_COLUMNS`]), computed while that rank's frame is in memory: engines read the
//! per-rank figures without scanning the events (Spark and Hive skip folders whose names
//! start with `_` when they read `DIR`, and `DIR/rank=*/*.parquet` does not match them).
//! docs/export-recipes.md computes the busy time and the stragglers from the events in
//! DuckDB and Spark SQL.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::Error;
use crate::FrameSources;
use crate::frame::{Columns, RankFrame};
use crate::hta;
use ::timeline::{GpuKind, Timeline};

/// The columns of `_summary/rank=N/summary.parquet`, in order, with what each holds. The
/// `*_time_us` ones are HTA 0.5.0's temporal breakdown of the rank (profile-model's
/// `--analysis temporal`, HTA's view of the timeline: [`Timeline::into_hta_view`]).
pub const SUMMARY_COLUMNS: [(&str, &str); 11] = [
    ("file", "the trace file the rank was read from"),
    ("events", "rows of the rank's events.parquet"),
    ("kernels", "GPU kernels (cat kernel) with a stream"),
    ("steps", "ProfilerStep#N instances"),
    (
        "step_median_us",
        "median ProfilerStep duration, µs (null without steps)",
    ),
    (
        "kernel_time_us",
        "first GPU activity's start to the last one's end, µs",
    ),
    (
        "busy_time_us",
        "union of the GPU activities, µs (kernel_time_us - idle_time_us)",
    ),
    ("idle_time_us", "kernel_time_us minus the union, µs"),
    ("compute_time_us", "union of HTA's COMPUTATION kernels, µs"),
    (
        "non_compute_time_us",
        "kernel_time_us - compute_time_us - idle_time_us, µs",
    ),
    (
        "idle_time_pctg",
        "idle_time_us / kernel_time_us, %, 2 decimals",
    ),
];

/// What an export wrote.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Exported {
    /// The export directory (`out` of [`export_hive`]), holding the `rank=N` folders.
    pub dir: PathBuf,
    /// (rank, file, rows) per trace, in rank order (a rank given by two traces has two
    /// files in its partition).
    pub files: Vec<(i64, PathBuf, usize)>,
    /// What to warn about, as every tool words it ([`load::Note`]): ranks given by more
    /// than one trace (each exported).
    pub notes: Vec<String>,
    /// The traces of several that could not be read (not exported), each as its error,
    /// which names the file. Not empty means a partial export.
    pub unread: Vec<String>,
}

/// Exports each trace to `out/rank=N/events.parquet` using at most `workers` threads.
/// `out` must not exist, be empty, or be an export written before (`out` is then not
/// replaced: see [`export_hive_into`] for that). The `rank` column is the partition key,
/// so it lives in the directory name, not in the files (the Hive convention).
pub fn export_hive(traces: &[PathBuf], out: &Path, workers: usize) -> Result<Exported, Error> {
    let inputs: Vec<&Path> = traces.iter().map(PathBuf::as_path).collect();
    let rules = output_file::Rules {
        overwrite: false,
        inputs: &inputs,
    };
    let staged = output_file::DirOutput::create(out, &rules)?;
    let sources = FrameSources::chrome(traces.to_vec());
    let exported = export_hive_into(&sources, &staged, workers)?;
    staged.commit()?;
    Ok(exported)
}

/// Writes the export of `sources`' frames into the staged directory `out` (not committed: the
/// caller commits it when the rest of its run succeeded, or drops it). Of several traces,
/// one that cannot be read is left out and listed in [`Exported::unread`], unless none
/// can be read.
pub fn export_hive_into(
    sources: &FrameSources,
    out: &output_file::DirOutput,
    workers: usize,
) -> Result<Exported, Error> {
    // Ranks on plain threads, each read on its own thread ([`crate::threads`]).
    type Written = (i64, PathBuf, usize, Schema, PathBuf);
    let claimed = std::sync::Mutex::new(std::collections::BTreeSet::new());
    let each: Vec<usize> = (0..sources.len()).collect();
    let results: Vec<Result<Result<Written, Error>, Error>> =
        crate::threads::each(&each, workers, |_, &i| {
            let trace = sources.path(i);
            let (frame, timeline) = match sources.read_with_timeline(i, 1, Columns::All) {
                Ok(read) => read,
                Err(e) => return Ok(Err(e)),
            };
            let rank = frame.rank.unwrap_or(i as i64);
            let mut summary = rank_summary(&frame, timeline)?;
            let mut df = frame
                .df
                .drop("rank")
                .map_err(Error::polars(trace.display().to_string()))?;
            let rows = df.height();
            // A second trace of a rank (a duplicate rank 0) is a second file of its
            // partition, as every Hive reader reads it: `events.<i>.parquet`.
            let first = claimed
                .lock()
                .map(|mut ranks| ranks.insert(rank))
                .unwrap_or(false);
            let (events, summary_name) = if !first {
                (
                    format!("events.{i}.parquet"),
                    format!("summary.{i}.parquet"),
                )
            } else {
                ("events.parquet".to_owned(), "summary.parquet".to_owned())
            };
            let rel = PathBuf::from(format!("rank={rank}")).join(events);
            write_parquet(&mut df, out.create_file(&rel)?, &out.path().join(&rel))?;
            let srel = PathBuf::from("_summary")
                .join(format!("rank={rank}"))
                .join(summary_name);
            let shown = out.path().join(&srel);
            write_parquet(&mut summary, out.create_file(&srel)?, &shown)?;
            Ok(Ok((
                rank,
                rel,
                rows,
                df.schema().as_ref().clone(),
                trace.to_path_buf(),
            )))
        });
    let results: Result<Vec<_>, Error> = results.into_iter().collect();
    let (mut written, mut failed) = (Vec::new(), Vec::new());
    for w in results? {
        match w {
            Ok(w) => written.push(w),
            Err(e) => failed.push(e),
        }
    }
    if (written.is_empty() || sources.len() == 1) && !failed.is_empty() {
        return Err(failed.remove(0));
    }
    written.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    // Two traces of one rank: both exported, and said, as every tool says it.
    let mut notes = Vec::new();
    let mut at = 0;
    while at < written.len() {
        let same = written[at..]
            .iter()
            .take_while(|w| w.0 == written[at].0)
            .count();
        if same > 1 {
            let note = load::Note::DuplicateRank {
                rank: written[at].0,
                files: written[at..at + same].iter().map(|w| w.4.clone()).collect(),
            };
            notes.push(note.to_string());
        }
        at += same;
    }
    let schemas: Vec<(PathBuf, Schema)> = written
        .iter()
        .map(|(_, rel, _, schema, _)| (rel.clone(), schema.clone()))
        .collect();
    unify_types(out, &schemas, workers)?;
    Ok(Exported {
        dir: out.path().to_path_buf(),
        files: written
            .into_iter()
            .map(|(rank, rel, rows, _, _)| (rank, out.path().join(rel), rows))
            .collect(),
        unread: failed.iter().map(|e| e.to_string()).collect(),
        notes,
    })
}

/// The one-row `_summary` frame of a rank ([`SUMMARY_COLUMNS`]).
fn rank_summary(frame: &RankFrame, timeline: Timeline) -> Result<DataFrame, Error> {
    let kernels = timeline
        .gpu
        .iter()
        .filter(|g| g.kind == GpuKind::Kernel)
        .count() as i64;
    let mut steps: Vec<i64> = timeline.steps.iter().map(|s| s.2 - s.1).collect();
    steps.sort_unstable();
    let step_median_us = (!steps.is_empty()).then(|| {
        let n = steps.len();
        let mid = if n % 2 == 1 {
            steps[n / 2] as f64
        } else {
            (steps[n / 2 - 1] + steps[n / 2]) as f64 / 2.0
        };
        mid / 1000.0
    });
    let temporal = hta::temporal(&timeline.into_hta_view());
    let t = |f: fn(&hta::Temporal) -> f64| temporal.as_ref().map(f);
    let path = frame.path.display().to_string();
    let [
        file,
        events,
        kernel_col,
        step_col,
        median,
        span,
        busy,
        idle,
        comp,
        non,
        idle_pct,
    ] = SUMMARY_COLUMNS.map(|(name, _)| PlSmallStr::from(name));
    DataFrame::new(
        1,
        vec![
            Column::new(file, [path.clone()]),
            Column::new(events, [frame.df.height() as i64]),
            Column::new(kernel_col, [kernels]),
            Column::new(step_col, [steps.len() as i64]),
            Column::new(median, [step_median_us]),
            Column::new(span, [t(|t| t.kernel_time_us)]),
            Column::new(busy, [t(|t| t.kernel_time_us - t.idle_us)]),
            Column::new(idle, [t(|t| t.idle_us)]),
            Column::new(comp, [t(|t| t.compute_us)]),
            Column::new(non, [t(|t| t.non_compute_us)]),
            Column::new(idle_pct, [t(|t| t.idle_pct)]),
        ],
    )
    .map_err(Error::polars(path))
}

/// Writes `df` as zstd Parquet to `file` (`shown` in errors).
pub(crate) fn write_parquet(
    df: &mut DataFrame,
    file: std::fs::File,
    shown: &Path,
) -> Result<(), Error> {
    ParquetWriter::new(file)
        .with_compression(ParquetCompression::Zstd(None))
        .finish(df)
        .map(|_| ())
        .map_err(Error::polars(shown.display().to_string()))
}

/// The one type of a column that ranks typed differently (nulls aside).
fn unified(types: &[&DataType]) -> DataType {
    if types.iter().all(|t| t.is_integer() || t.is_float()) {
        DataType::Float64
    } else {
        DataType::String
    }
}

/// Rewrites, in parallel, the files (relative to `out`) whose type for a column differs
/// from the others'.
fn unify_types(
    out: &output_file::DirOutput,
    files: &[(PathBuf, Schema)],
    workers: usize,
) -> Result<(), Error> {
    let mut types: BTreeMap<&str, Vec<&DataType>> = BTreeMap::new();
    for (_, schema) in files {
        for (name, dtype) in schema.iter() {
            let seen = types.entry(name.as_str()).or_default();
            if *dtype != DataType::Null && !seen.contains(&dtype) {
                seen.push(dtype);
            }
        }
    }
    let target: BTreeMap<&str, DataType> = types
        .into_iter()
        .filter_map(|(name, seen)| match seen.as_slice() {
            [] => None,
            [one] => Some((name, (*one).clone())),
            many => Some((name, unified(many))),
        })
        .collect();
    let done = crate::threads::each(files, workers, |_, (file, schema)| {
        let casts: Vec<(&str, &DataType)> = schema
            .iter()
            .filter_map(|(name, dtype)| {
                let want = target.get(name.as_str())?;
                (dtype != want).then_some((name.as_str(), want))
            })
            .collect();
        if casts.is_empty() {
            return Ok(());
        }
        let shown = out.path().join(file);
        let ctx = shown.display().to_string();
        let mut df = crate::cache::read_parquet(&out.staged().join(file))?;
        for (name, want) in casts {
            let cast = df
                .column(name)
                .and_then(|c| c.cast(want))
                .map_err(Error::polars(ctx.clone()))?;
            df.with_column(cast).map_err(Error::polars(ctx.clone()))?;
        }
        write_parquet(&mut df, out.recreate_file(file)?, &shown)
    });
    done.into_iter().collect()
}

/// Reads an export back: every `rank=N/*.parquet`, with `rank` from the directory name,
/// joined by column name (ranks may have different `args_*` columns).
pub fn read_export(dir: &Path) -> Result<DataFrame, Error> {
    let mut parts: Vec<(i64, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(Error::io(dir, "cannot read"))? {
        let rank_dir = entry.map_err(Error::io(dir, "cannot read"))?.path();
        let name = rank_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Some(rank) = name
            .strip_prefix("rank=")
            .and_then(|r| r.parse::<i64>().ok())
        else {
            continue;
        };
        for file in std::fs::read_dir(&rank_dir).map_err(Error::io(&rank_dir, "cannot read"))? {
            let file = file.map_err(Error::io(&rank_dir, "cannot read"))?.path();
            // A FIFO or device named like a part is skipped (reading a FIFO would block).
            if file.extension().is_some_and(|e| e == "parquet") && file.is_file() {
                parts.push((rank, file));
            }
        }
    }
    parts.sort();
    let mut frames = Vec::new();
    for (rank, file) in &parts {
        let df = crate::cache::read_parquet(file)?;
        let height = df.height();
        let df = df
            .hstack(&[Column::new("rank".into(), vec![*rank; height])])
            .map_err(Error::polars(file.display().to_string()))?;
        frames.push(df.lazy());
    }
    if frames.is_empty() {
        return Err(Error::Missing {
            path: dir.to_path_buf(),
            what: "no rank=N/*.parquet files".into(),
        });
    }
    let args = UnionArgs {
        diagonal: true,
        to_supertypes: true,
        ..Default::default()
    };
    concat(frames, args)
        .and_then(|lf| lf.collect())
        .map_err(Error::polars(dir.display().to_string()))
}
