//! The Parquet cache, only when asked: `{dir}/{basename}-{key}.parquet`, where the key
//! hashes the trace's canonical path, size, modification time and content, so a file is
//! only ever read back for the same bytes at the same place. The directory must be private
//! (mode 0700, this user's; `output_file::private_dir`), and cache files are written
//! through `output_file` (staged with `O_EXCL`, mode 0600, renamed into place). A failed
//! write is reported and the frame is used without it.

use std::fs::File;
use std::hash::Hasher;
use std::io::Read;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::Error;
use crate::frame::{RankFrame, read_frame_with};

/// Where a trace's cache lives in `dir`: the file name and a key of the trace's canonical
/// path, size, modification time and content (`None` when the trace cannot be read).
pub fn cache_path(trace: &Path, dir: &Path) -> PathBuf {
    let base = trace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "trace".into());
    let key = cache_key(trace).unwrap_or(0);
    dir.join(format!("{base}-{key:016x}.parquet"))
}

/// The key of `trace`: its canonical path, size and modification time, then every byte.
fn cache_key(trace: &Path) -> std::io::Result<u64> {
    let canonical = trace.canonicalize()?;
    let mut file = File::open(&canonical)?;
    let meta = file.metadata()?;
    let mut h = trace_model::FxHasher::default();
    h.write(canonical.as_os_str().as_encoded_bytes());
    h.write_u64(meta.len());
    let mtime = meta
        .modified()?
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.write_u128(mtime);
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.write(&buf[..n]);
    }
    Ok(h.finish())
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
    let usable = output_file::private_dir(dir);
    if usable.is_ok()
        && is_fresh(&cache, trace)
        && let Ok(df) = read_parquet(&cache)
    {
        let rank = df
            .column("rank")
            .ok()
            .and_then(|c| c.i64().ok().and_then(|c| c.get(0)));
        // The cache keeps the rank, not where it came from: the file name's number is
        // taken as the file's own (HTA's drop-in reads traces without the cache).
        let frame = RankFrame {
            path: trace.to_path_buf(),
            rank,
            rank_in_file: rank,
            df,
        };
        return Ok((frame, CacheUse::Hit(cache)));
    }
    let mut frame = read_frame_with(trace, threads)?;
    let used = match usable
        .map_err(Error::from)
        .and_then(|()| write_parquet_atomic(&mut frame.df, &cache))
    {
        Ok(()) => CacheUse::Written(cache),
        Err(e) => CacheUse::WriteFailed(cache, format!("{e:#}")),
    };
    Ok((frame, used))
}

/// The cache file is fresh when it exists as a regular file and is newer than the trace
/// (its name already says which bytes it holds).
pub fn is_fresh(cache: &Path, trace: &Path) -> bool {
    let mtime = |p: &Path| {
        std::fs::symlink_metadata(p)
            .ok()
            .filter(|m| m.is_file())
            .and_then(|m| m.modified().ok())
    };
    matches!((mtime(cache), mtime(trace)), (Some(c), Some(t)) if c >= t)
}

/// Reads a Parquet file into a frame.
pub fn read_parquet(path: &Path) -> Result<DataFrame, Error> {
    let file = File::open(path).map_err(Error::io(path, "cannot open"))?;
    ParquetReader::new(file)
        .finish()
        .map_err(Error::polars(path.display().to_string()))
}

/// Writes `df` to `path` as a private file (mode 0600) through `output_file`: staged beside
/// it and renamed into place, so a reader never sees half a file.
pub fn write_parquet_atomic(df: &mut DataFrame, path: &Path) -> Result<(), Error> {
    let rules = output_file::Rules {
        overwrite: true,
        inputs: &[],
    };
    let pending = output_file::Pending::create_private(path, &rules)?;
    let file = pending
        .file()
        .try_clone()
        .map_err(Error::io(path, "cannot write"))?;
    crate::export::write_parquet(df, file, path)?;
    pending.commit()?;
    Ok(())
}
