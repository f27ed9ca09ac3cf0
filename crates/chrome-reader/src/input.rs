//! Opening trace files: plain or gzip JSON, decompressed on a second thread so that
//! inflating and parsing overlap; for the model build, a plain regular file is mapped
//! instead of read, so that no thread copies its text.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::ops::Range;
use std::path::Path;
use std::sync::mpsc;

use crate::Error;

const CHUNK: usize = 1 << 20;

/// Opens `path` for reading as JSON text, transparently inflating gzip (detected by its
/// magic bytes, not by the file name).
pub fn open(path: &Path) -> Result<Box<dyn Read + Send>, Error> {
    let file = File::open(path).map_err(|source| io_error(path, source))?;
    read_file(path, file, |decoder| {
        Box::new(ThreadedReader::spawn(decoder))
    })
}

/// A trace file opened for the chunk reader of `chunks.rs`.
pub(crate) enum Opened {
    /// A plain (not gzip) regular file, mapped: its chunks are slices of the map. The
    /// progress hook's report for it, if a hook is set, is told how far the text is cut.
    Mapped(MappedFile, Option<Box<dyn crate::progress::ReadProgress>>),
    /// A plain (not gzip) regular file of at most [`WHOLE_MAX`] bytes, read whole by one
    /// `read_to_end` into a buffer of its size: its chunks are slices of the buffer. The
    /// progress hook's report for it, if a hook is set, is told how far the text is cut.
    Whole(Vec<u8>, Option<Box<dyn crate::progress::ReadProgress>>),
    /// Gzip, or not a regular file (a pipe, `/dev/stdin`), or a file that could not be
    /// mapped: read, and inflated, by the chunk reader's thread.
    Stream(Box<dyn Read + Send>),
}

/// The largest plain file read whole ([`Opened::Whole`]); a larger one is streamed, in
/// chunks of at most 1 MB (or mapped). Read whole, a small file costs one copy: the stream
/// reader zeroed a 1 MB buffer for each file before reading into it (a rank file of
/// param-dlrm-8rank is 0.9 MB, one chunk: its parse waited for the whole read either way).
pub(crate) const WHOLE_MAX: u64 = 4 << 20;

/// Opens `path` for the chunk reader: as [`open`] does but with gzip inflated on the
/// thread that reads (the chunk reader has a thread of its own, which saves a thread and a
/// copy of the text). With `TRACEWISE_MMAP=1`, a plain regular file is mapped instead (a
/// few per cent faster), at the cost that a file truncated while it is read ends the
/// process with SIGBUS (see [`MappedFile`]); by default a file cut short is a
/// "truncated" error naming it.
pub(crate) fn open_for_chunks(path: &Path) -> Result<Opened, Error> {
    let mut file = File::open(path).map_err(|source| io_error(path, source))?;
    let meta = file.metadata().ok();
    let regular_len = meta.filter(std::fs::Metadata::is_file).map(|m| m.len());
    if mapping_allowed() && regular_len.is_some_and(|n| n > 0) {
        // A file system that cannot map files is read instead, as a pipe is.
        if let Ok(map) = MappedFile::map(&file)
            && !trace_model::files::is_gzip(map.text())
        {
            let progress = crate::progress::report(path, map.text().len() as u64);
            return Ok(Opened::Mapped(map, progress));
        }
    }
    if let Some(len) = regular_len.filter(|&n| n > 0 && n <= WHOLE_MAX) {
        let mut magic = [0u8; 2];
        let n = read_up_to(&mut file, &mut magic).map_err(|source| io_error(path, source))?;
        if !trace_model::files::is_gzip(&magic[..n]) {
            let mut text = Vec::with_capacity(usize::try_from(len).unwrap_or(0) + 1);
            text.extend_from_slice(&magic[..n]);
            file.read_to_end(&mut text)
                .map_err(|source| io_error(path, source))?;
            let progress = crate::progress::report(path, text.len() as u64);
            return Ok(Opened::Whole(text, progress));
        }
        // Gzip: read from its start again, as the stream reader does.
        use std::io::Seek as _;
        file.rewind().map_err(|source| io_error(path, source))?;
    }
    let input = read_file(path, file, |decoder| Box::new(decoder))?;
    Ok(Opened::Stream(input))
}

/// Whether plain files may be mapped: `TRACEWISE_MMAP=1`.
fn mapping_allowed() -> bool {
    static ALLOWED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ALLOWED.get_or_init(|| std::env::var_os("TRACEWISE_MMAP").is_some_and(|v| v == "1"))
}

/// A read-only map of a whole trace file (only with `TRACEWISE_MMAP=1`).
///
/// Safety invariant: the file is not modified or truncated while it is mapped. The text is
/// handed out as `&[u8]`, which Rust assumes does not change; if another process changes
/// the file in place, the parse may see the text change under it, and if it truncates the
/// file, touching a page past the new end raises SIGBUS, which ends the process. This is
/// the bargain ripgrep makes for the same speed: trace files are finished captures, read
/// after the profiler wrote them, and every writer in this workspace (`output-file`)
/// writes a temporary file and renames it into place, which leaves a mapped file's pages
/// as they were. A file that may still be written (a pipe, a capture in progress) should
/// be given as a stream ([`crate::load_from`]).
pub(crate) struct MappedFile {
    map: memmap2::Mmap,
}

// The only unsafe code of the workspace: mapping the file and dropping pages of the map.
#[allow(unsafe_code)]
impl MappedFile {
    fn map(file: &File) -> io::Result<MappedFile> {
        // SAFETY: see the type's invariant; the map is only ever read.
        let map = unsafe { memmap2::Mmap::map(file) }?;
        Ok(MappedFile { map })
    }

    /// The file's bytes.
    pub(crate) fn text(&self) -> &[u8] {
        &self.map
    }

    /// Drops the pages that hold bytes of `range` and none after it from this process's
    /// page tables (the text before `range` is done with too), so that the text already
    /// parsed does not count in its resident set: the page cache keeps the pages, and a
    /// later read of them faults them in again with the same bytes. Best effort: a kernel
    /// that refuses only leaves the pages resident.
    pub(crate) fn release(&self, range: Range<usize>) {
        let start = range.start / PAGE * PAGE;
        let end = range.end.min(self.map.len()) / PAGE * PAGE;
        if end > start {
            // SAFETY: MADV_DONTNEED on a read-only file map only unmaps pages: the next
            // access to them maps the file's page cache again, so any slice of the map
            // still in use (a chunk in flight that shares a page) reads the same bytes.
            let _ = unsafe {
                self.map.unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    start,
                    end - start,
                )
            };
        }
    }
}

/// The page size that [`MappedFile::release`] rounds to: the smallest of the platforms we
/// run on. Where pages are larger, a start that is not on a page boundary makes `madvise`
/// refuse the range (EINVAL): those pages only stay resident, as `release` allows.
const PAGE: usize = 4096;

/// How many times its compressed size a gzip trace may inflate to, unless
/// `TRACEWISE_MAX_INFLATE_RATIO` says otherwise. Real traces inflate 5 to 25 times (the
/// most in `../shared/traces` is 21); a gzip of whitespace or of one repeated event
/// inflates about a thousand times, which is a bomb, not a trace.
pub const MAX_INFLATE_RATIO: u64 = 100;

/// The compressed bytes that count as read however few were: a small file may inflate to
/// `ratio` times this (100 MiB at the default ratio).
pub(crate) const INFLATE_FLOOR: u64 = 1 << 20;

/// The ratio in force: `TRACEWISE_MAX_INFLATE_RATIO` when it is a positive number, else
/// [`MAX_INFLATE_RATIO`].
pub fn max_inflate_ratio() -> u64 {
    static RATIO: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *RATIO.get_or_init(|| env_limit("TRACEWISE_MAX_INFLATE_RATIO", MAX_INFLATE_RATIO))
}

/// The limit an environment variable sets when it is a positive number, else `default`.
pub(crate) fn env_limit(var: &str, default: u64) -> u64 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(default)
}

/// Inflates the gzip stream `input` (all its members) on the calling thread, failing once
/// it gives more than [`max_inflate_ratio`] times the compressed bytes read: for readers of
/// trace text that do not go through [`open`] (the compaction's two passes).
pub fn inflate_capped<R: Read + Send + 'static>(input: R) -> Box<dyn Read + Send> {
    let compressed = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counted = Counted {
        inner: input,
        count: compressed.clone(),
    };
    Box::new(Capped {
        inner: flate2::read::MultiGzDecoder::new(counted),
        compressed,
        inflated: 0,
        ratio: max_inflate_ratio(),
    })
}

/// A reader that counts the bytes read through it into a shared counter.
pub(crate) struct Counted<R> {
    inner: R,
    count: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

/// An inflating reader that fails once it has given more than the ratio in force times
/// the compressed bytes read so far (see [`max_inflate_ratio`]).
pub(crate) struct Capped<R> {
    inner: R,
    compressed: std::sync::Arc<std::sync::atomic::AtomicU64>,
    inflated: u64,
    ratio: u64,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.inflated += n as u64;
        let compressed = self
            .compressed
            .load(std::sync::atomic::Ordering::Relaxed)
            .max(INFLATE_FLOOR);
        if self.inflated > compressed.saturating_mul(self.ratio) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the gzip stream inflates to more than {} times its compressed size \
                     ({} bytes from {compressed}): a decompression bomb, not a trace; set \
                     TRACEWISE_MAX_INFLATE_RATIO to allow more",
                    self.ratio, self.inflated
                ),
            ));
        }
        Ok(n)
    }
}

/// The JSON text of `file` (opened from `path`, read from its start): inflated by
/// `wrap_gzip`'s decoder when it starts with gzip's magic bytes.
fn read_file(
    path: &Path,
    file: File,
    wrap_gzip: impl FnOnce(Box<dyn Read + Send>) -> Box<dyn Read + Send>,
) -> Result<Box<dyn Read + Send>, Error> {
    let meta = file.metadata().ok();
    let size = meta.as_ref().map_or(0, |m| m.len());
    let regular = meta.as_ref().is_some_and(std::fs::Metadata::is_file);
    let mut file = crate::progress::track(path, size, file);
    let mut magic = [0u8; 2];
    let n = read_up_to(&mut file, &mut magic).map_err(|source| io_error(path, source))?;
    let head = io::Cursor::new(magic[..n].to_vec());
    let mut input = head.chain(file);
    if trace_model::files::is_gzip(&magic[..n]) {
        let compressed = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let threads = crate::default_threads();
        // A regular file that may hold several members is read whole and, when it does,
        // inflated on every core (`members`); a single member stays on one stream. The
        // parser keeps a core busy beside the inflate, so the members are inflated in
        // parallel only where two more cores are left for them: on two cores the
        // 8-member twin of df_index_resolver took 1.5x its one-member twin's time
        // (`cargo xtask bench --floor`, loaded machine) and 1.2x its CPU time.
        let (input, parallel): (Box<dyn Read + Send>, bool) =
            if threads > 2 && regular && size <= crate::members::MAX_WHOLE {
                let mut data = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
                input
                    .read_to_end(&mut data)
                    .map_err(|source| io_error(path, source))?;
                let starts = crate::members::member_starts(&data);
                if starts.is_empty() {
                    let counted = Counted {
                        inner: io::Cursor::new(data),
                        count: compressed.clone(),
                    };
                    (Box::new(flate2::read::MultiGzDecoder::new(counted)), false)
                } else {
                    let members = crate::members::ParallelMembers::spawn(
                        data.into(),
                        &starts,
                        threads,
                        max_inflate_ratio(),
                        compressed.clone(),
                    );
                    (Box::new(members), true)
                }
            } else {
                let counted = Counted {
                    inner: input,
                    count: compressed.clone(),
                };
                let decoder =
                    flate2::read::MultiGzDecoder::new(BufReader::with_capacity(CHUNK, counted));
                (Box::new(decoder), false)
            };
        let capped = Capped {
            inner: input,
            compressed,
            inflated: 0,
            ratio: max_inflate_ratio(),
        };
        // The pieces are inflated by their own threads already.
        if parallel {
            Ok(Box::new(capped))
        } else {
            Ok(wrap_gzip(Box::new(capped)))
        }
    } else {
        Ok(Box::new(input))
    }
}

fn io_error(path: &Path, source: io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        offset: 0,
        source,
    }
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Reads from an inner reader on a background thread, handing over 1 MiB chunks.
struct ThreadedReader {
    rx: mpsc::Receiver<io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    pos: usize,
    done: bool,
}

impl ThreadedReader {
    fn spawn<R: Read + Send + 'static>(mut inner: R) -> Self {
        let (tx, rx) = mpsc::sync_channel(4);
        std::thread::spawn(move || {
            loop {
                let mut chunk = vec![0u8; CHUNK];
                let mut n = 0;
                // Fill the chunk; on an error, hand over what was read before it so that
                // the error's offset tells where the stream broke.
                let error = loop {
                    if n == chunk.len() {
                        break None;
                    }
                    match inner.read(&mut chunk[n..]) {
                        Ok(0) => break None,
                        Ok(k) => n += k,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => break Some(e),
                    }
                };
                chunk.truncate(n);
                if n > 0 && tx.send(Ok(chunk)).is_err() {
                    return; // The reader was dropped.
                }
                if let Some(e) = error {
                    let _ = tx.send(Err(e));
                    return;
                }
                if n < CHUNK {
                    return;
                }
            }
        });
        ThreadedReader {
            rx,
            chunk: Vec::new(),
            pos: 0,
            done: false,
        }
    }
}

impl Read for ThreadedReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.chunk.len() {
            if self.done {
                return Ok(0);
            }
            match self.rx.recv() {
                Ok(Ok(chunk)) => {
                    self.chunk = chunk;
                    self.pos = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(_) => {
                    self.done = true;
                    return Ok(0);
                }
            }
        }
        let n = buf.len().min(self.chunk.len() - self.pos);
        buf[..n].copy_from_slice(&self.chunk[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plain regular files are mapped only with `TRACEWISE_MMAP=1`, else read whole up to
    /// `WHOLE_MAX`; gzip, empty files and pipes are always streamed.
    #[test]
    fn plain_files_are_mapped_only_when_asked_and_the_rest_streamed() {
        let dir = std::env::temp_dir().join(format!("chrome-reader-open-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let plain = dir.join("plain.json");
        std::fs::write(&plain, b"{\"traceEvents\": []}").expect("writes");
        let gzip = dir.join("gzip.json");
        std::fs::write(&gzip, [0x1f, 0x8b, 8, 0]).expect("writes");
        let empty = dir.join("empty.json");
        std::fs::write(&empty, b"").expect("writes");
        let how = |path: &Path| match open_for_chunks(path) {
            Ok(Opened::Mapped(map, _)) => format!("mapped {}", map.text().len()),
            Ok(Opened::Whole(text, _)) => format!("whole {}", text.len()),
            Ok(Opened::Stream(_)) => "stream".to_string(),
            Err(e) => format!("error {e}"),
        };
        let plain_expected = if mapping_allowed() {
            "mapped 19"
        } else {
            "whole 19"
        };
        assert_eq!(how(&plain), plain_expected);
        assert_eq!(how(&gzip), "stream");
        assert_eq!(how(&empty), "stream");
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd as _;
            let (reader, writer) = io::pipe().expect("a pipe");
            drop(writer);
            let pipe = format!("/proc/self/fd/{}", reader.as_raw_fd());
            assert_eq!(how(Path::new(&pipe)), "stream");
        }
        std::fs::remove_dir_all(&dir).expect("removes its temporary directory");
    }
}
