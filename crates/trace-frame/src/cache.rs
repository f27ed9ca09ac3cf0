//! The Parquet cache, only when asked: `{dir}/{basename}.parquet`, fresh when its mtime is
//! newer than the trace's; a failed write is reported and the frame is used without it.

use std::fs::File;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::Error;
use crate::frame::{RankFrame, read_frame_with};

/// Where a trace's cache lives in `dir`.
pub fn cache_path(trace: &Path, dir: &Path) -> PathBuf {
    let base = trace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "trace".into());
    dir.join(format!("{base}.parquet"))
}

/// How a frame was obtained when the cache was asked for.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum CacheUse {
    /// Read from a fresh cache file.
    Hit(PathBuf),
    /// Parsed from the trace and written to the cache.
    Written(PathBuf),
    /// Parsed from the trace; writing the cache failed (the reason), so none is used.
    WriteFailed(PathBuf, String),
}

/// Reads `trace` through the cache in `dir`.
pub fn read_frame_cached(trace: &Path, dir: &Path) -> Result<(RankFrame, CacheUse), Error> {
    read_frame_cached_with(trace, dir, chrome_reader::default_threads())
}

/// [`read_frame_cached`], parsing with `threads` threads on a miss ([`read_frame_with`]).
pub fn read_frame_cached_with(
    trace: &Path,
    dir: &Path,
    threads: usize,
) -> Result<(RankFrame, CacheUse), Error> {
    let cache = cache_path(trace, dir);
    if is_fresh(&cache, trace)
        && let Ok(df) = read_parquet(&cache)
    {
        let rank = df
            .column("rank")
            .ok()
            .and_then(|c| c.i64().ok().and_then(|c| c.get(0)));
        let frame = RankFrame {
            path: trace.to_path_buf(),
            rank,
            df,
        };
        return Ok((frame, CacheUse::Hit(cache)));
    }
    let mut frame = read_frame_with(trace, threads)?;
    let used = match write_parquet_atomic(&mut frame.df, &cache) {
        Ok(()) => CacheUse::Written(cache),
        Err(e) => CacheUse::WriteFailed(cache, format!("{e:#}")),
    };
    Ok((frame, used))
}

/// The cache is fresh when it exists and its mtime is newer than the trace's.
pub fn is_fresh(cache: &Path, trace: &Path) -> bool {
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    matches!((mtime(cache), mtime(trace)), (Some(c), Some(t)) if c > t)
}

/// Reads a Parquet file into a frame.
pub fn read_parquet(path: &Path) -> Result<DataFrame, Error> {
    let file = File::open(path).map_err(Error::io(path, "cannot open"))?;
    ParquetReader::new(file)
        .finish()
        .map_err(Error::polars(path.display().to_string()))
}

/// Writes `df` to `path` through a temporary file in the same directory, renamed into
/// place, so a reader never sees half a file.
pub fn write_parquet_atomic(df: &mut DataFrame, path: &Path) -> Result<(), Error> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(Error::io(dir, "cannot create the directory"))?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        std::process::id()
    ));
    let res = (|| {
        let file = File::create(&tmp).map_err(Error::io(&tmp, "cannot create"))?;
        ParquetWriter::new(file)
            .with_compression(ParquetCompression::Zstd(None))
            .finish(df)
            .map_err(Error::polars(tmp.display().to_string()))?;
        std::fs::rename(&tmp, path).map_err(Error::io(path, "cannot rename into place"))
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}
