//! A gzip writer that deflates on every core: the text is cut into 1 MiB chunks, each
//! compressed at the caller's level on a pool of threads with the previous chunk's last
//! 32 KiB as its dictionary, and ended with a sync flush, so that the chunks written end to
//! end in order form one ordinary deflate stream in one gzip member (as pigz does). The
//! CRC-32 of the whole is combined from the chunks' own.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crc32fast::Hasher;
use flate2::{Compress, Compression, FlushCompress, Status};

/// Uncompressed bytes per chunk. Each chunk costs a fresh deflate state and a 32 KiB
/// dictionary; at 512 KiB instead of 256 KiB a compaction of df_index_resolver takes about
/// 5% less CPU (`perf stat -r 5`, four rounds alternating: 412-432 → 385-415 ms), with the
/// same peak RSS on hta-cudagraph-a100 (medians of 11: 35.0 and 34.9 MB). At 1 MiB the
/// deflating threads of that compaction take 1,557M instructions instead of 1,611M
/// (callgrind: half the states and dictionaries), for 2 MB more peak RSS on
/// hta-cudagraph-a100 (33.2 → 35.3 MB, medians of 5: 1.39× its JSON, the bench allows 1.5×).
const CHUNK: usize = 1 << 20;
/// The deflate window: the dictionary a chunk is compressed with.
const WINDOW: usize = 32 << 10;

struct Job {
    seq: usize,
    data: Vec<u8>,
    dictionary: Vec<u8>,
    last: bool,
}

struct Done {
    seq: usize,
    deflated: Vec<u8>,
    /// The chunk's CRC-32 (crc32fast: flate2's `Crc` on zlib-rs took 5% of a compaction's
    /// time).
    crc: Hasher,
    len: usize,
}

/// Buffers handed back for reuse: the chunks' text (filled by the caller, emptied by a
/// compressing thread) and their deflated bytes (filled there, emptied by the writing
/// thread), so that each chunk does not allocate them anew on one thread and free them on
/// another, which adds to the freed memory that glibc keeps resident per thread.
#[derive(Default)]
struct Pools {
    text: Mutex<Vec<Vec<u8>>>,
    deflated: Mutex<Vec<Vec<u8>>>,
}

/// An empty buffer from `pool` (or a new one) with room for `capacity` bytes.
fn take(pool: &Mutex<Vec<Vec<u8>>>, capacity: usize) -> Vec<u8> {
    let mut buf = pool
        .lock()
        .expect("no thread panics holding a buffer pool")
        .pop()
        .unwrap_or_default();
    buf.clear();
    buf.reserve(capacity);
    buf
}

fn give(pool: &Mutex<Vec<Vec<u8>>>, buf: Vec<u8>) {
    pool.lock()
        .expect("no thread panics holding a buffer pool")
        .push(buf);
}

/// Writes a gzip stream to `out`, compressing on `threads` threads; call
/// [`ParallelGzWriter::finish`] at the end (dropping it without leaves the stream cut short).
pub struct ParallelGzWriter {
    buf: Vec<u8>,
    seq: usize,
    /// The last [`WINDOW`] bytes of the previous chunk.
    dictionary: Vec<u8>,
    pools: Arc<Pools>,
    jobs: Option<SyncSender<Job>>,
    workers: Vec<JoinHandle<()>>,
    writer: Option<JoinHandle<io::Result<()>>>,
}

impl ParallelGzWriter {
    /// A writer onto `out` with `threads` compressing threads (at least one), plus one
    /// that writes the compressed chunks in order.
    pub fn new<W: Write + Send + 'static>(out: W, threads: usize, level: Compression) -> Self {
        let threads = threads.max(1);
        // A chunk is handed over only when a thread takes it (no queue): filling one is
        // far quicker than deflating it, so a thread that is done finds the next one
        // waiting, and at most `threads + 1` chunks' text is held.
        let (jobs, job_rx) = sync_channel::<Job>(0);
        let job_rx = Arc::new(Mutex::new(job_rx));
        let (done_tx, done_rx) = sync_channel::<Done>(threads);
        let pools = Arc::new(Pools::default());
        let workers = (0..threads)
            .map(|_| {
                let job_rx = Arc::clone(&job_rx);
                let done_tx = done_tx.clone();
                let pools = Arc::clone(&pools);
                std::thread::spawn(move || compress_jobs(&job_rx, &done_tx, &pools, level))
            })
            .collect();
        drop(done_tx);
        let writer_pools = Arc::clone(&pools);
        let writer = std::thread::spawn(move || write_in_order(out, &done_rx, &writer_pools));
        ParallelGzWriter {
            buf: Vec::with_capacity(CHUNK),
            seq: 0,
            dictionary: Vec::new(),
            pools,
            jobs: Some(jobs),
            workers,
            writer: Some(writer),
        }
    }

    fn send(&mut self) -> io::Result<()> {
        let data = std::mem::replace(&mut self.buf, take(&self.pools.text, CHUNK));
        let tail = data.len().saturating_sub(WINDOW);
        let next_dictionary = data[tail..].to_vec();
        let job = Job {
            seq: self.seq,
            data,
            dictionary: std::mem::replace(&mut self.dictionary, next_dictionary),
            last: false,
        };
        self.seq += 1;
        let sent = self
            .jobs
            .as_ref()
            .is_some_and(|jobs| jobs.send(job).is_ok());
        if !sent {
            // The writer stopped on an error (and the workers with it): finish reports it.
            return self.finish();
        }
        Ok(())
    }

    /// Compresses what is left, writes the gzip trailer and waits for the output to be
    /// written; the first write error, if any.
    pub fn finish(&mut self) -> io::Result<()> {
        if self.jobs.is_some() {
            // A send error means the writer stopped on an error, which join reports.
            let _ = self.send_last();
        }
        self.jobs = None;
        for worker in self.workers.drain(..) {
            worker
                .join()
                .map_err(|_| io::Error::other("a compression thread panicked"))?;
        }
        match self.writer.take() {
            Some(writer) => writer
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the output thread panicked"))),
            None => Err(io::Error::other("the output was already finished")),
        }
    }

    fn send_last(&mut self) -> io::Result<()> {
        let data = std::mem::take(&mut self.buf);
        let job = Job {
            seq: self.seq,
            data,
            dictionary: std::mem::take(&mut self.dictionary),
            last: true,
        };
        self.seq += 1;
        match self.jobs.as_ref().map(|jobs| jobs.send(job)) {
            Some(Ok(())) => Ok(()),
            _ => Err(io::Error::other("the output stopped")),
        }
    }
}

impl Write for ParallelGzWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let room = CHUNK - self.buf.len();
        let n = room.min(data.len());
        self.buf.extend_from_slice(&data[..n]);
        if self.buf.len() == CHUNK {
            self.send()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn compress_jobs(
    jobs: &Mutex<Receiver<Job>>,
    done: &SyncSender<Done>,
    pools: &Pools,
    level: Compression,
) {
    loop {
        let job = jobs
            .lock()
            .expect("no compression thread panics holding the queue")
            .recv();
        let Ok(job) = job else { return };
        let mut crc = Hasher::new();
        crc.update(&job.data);
        let len = job.data.len();
        // A fresh state for each chunk: one reset and reused writes bytes that depend on
        // the chunk its thread deflated before (its window past the new input's end), so
        // the output would change from run to run.
        let mut c = Compress::new(level, false);
        let deflated = deflate_chunk(
            &mut c,
            &job,
            take(&pools.deflated, job.data.len() / 4 + 1024),
        );
        give(&pools.text, job.data);
        if done
            .send(Done {
                seq: job.seq,
                deflated,
                crc,
                len,
            })
            .is_err()
        {
            return;
        }
    }
}

/// Raw deflate of one chunk: sync-flushed (byte-aligned, not final) unless it is the last,
/// which ends the stream.
fn deflate_chunk(c: &mut Compress, job: &Job, mut out: Vec<u8>) -> Vec<u8> {
    if !job.dictionary.is_empty() {
        c.set_dictionary(&job.dictionary)
            .expect("a raw deflate stream takes a dictionary before any input");
    }
    let flush = if job.last {
        FlushCompress::Finish
    } else {
        FlushCompress::Sync
    };
    loop {
        let consumed = c.total_in() as usize;
        let status = c
            .compress_vec(&job.data[consumed..], &mut out, flush)
            .expect("deflate of an in-memory buffer does not fail");
        let all_in = c.total_in() as usize == job.data.len();
        match status {
            Status::StreamEnd => break,
            // Done once all input is in and the flush left room to spare.
            _ if all_in && !job.last && out.len() < out.capacity() => break,
            _ => out.reserve(out.capacity().max(4096)),
        }
    }
    out
}

fn write_in_order<W: Write>(mut out: W, done: &Receiver<Done>, pools: &Pools) -> io::Result<()> {
    // The gzip header: deflate, no flags, no mtime, default extra flags, unknown OS.
    out.write_all(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255])?;
    let mut crc = Hasher::new();
    let mut len = 0usize;
    let mut next = 0usize;
    let mut waiting = BTreeMap::new();
    for chunk in done.iter() {
        waiting.insert(chunk.seq, chunk);
        while let Some(chunk) = waiting.remove(&next) {
            out.write_all(&chunk.deflated)?;
            crc.combine(&chunk.crc);
            len = len.wrapping_add(chunk.len);
            give(&pools.deflated, chunk.deflated);
            next += 1;
        }
    }
    if !waiting.is_empty() {
        return Err(io::Error::other("a compressed chunk is missing"));
    }
    out.write_all(&crc.finalize().to_le_bytes())?;
    // ISIZE: the length modulo 2^32.
    out.write_all(&(len as u32).to_le_bytes())?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// A `Write` that appends to a shared buffer, so the test can read it after `finish`.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            self.0.lock().expect("not poisoned").extend_from_slice(data);
            Ok(data.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn roundtrip(text: &[u8], threads: usize) -> Vec<u8> {
        let out = Shared::default();
        let mut w = ParallelGzWriter::new(out.clone(), threads, Compression::default());
        // Odd-sized writes, so chunk ends fall anywhere.
        for piece in text.chunks(77_777) {
            w.write_all(piece).expect("writing to memory");
        }
        w.finish().expect("finishing to memory");
        let gz = out.0.lock().expect("not poisoned").clone();
        // One member: the single-member decoder reads all of it.
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut back)
            .expect("a valid gzip stream");
        assert_eq!(back.len(), text.len());
        assert!(back == text, "the text comes back");
        gz
    }

    fn sample(bytes: usize) -> Vec<u8> {
        let mut text = Vec::with_capacity(bytes + 100);
        let mut i = 0u64;
        while text.len() < bytes {
            // Repetitive like a trace, with varying numbers.
            text.extend_from_slice(
                format!(
                    "{{\"ph\":\"X\",\"name\":\"kernel_{}\",\"ts\":{},\"dur\":{}}},\n",
                    i % 37,
                    i * 7919 % 1_000_003,
                    i % 13
                )
                .as_bytes(),
            );
            i += 1;
        }
        text
    }

    #[test]
    fn chunks_form_one_gzip_member_that_inflates_to_the_text() {
        for (bytes, threads) in [(0, 1), (10, 2), (CHUNK, 3), (3 * CHUNK + 12_345, 4)] {
            roundtrip(&sample(bytes), threads);
        }
    }

    #[test]
    fn bytes_do_not_depend_on_threads_or_runs() {
        let text = sample(9 * CHUNK + 4_321);
        let once = roundtrip(&text, 1);
        for threads in [2, 3, 4, 4] {
            assert!(roundtrip(&text, threads) == once, "{threads} threads");
        }
    }

    #[test]
    fn compresses_about_as_well_as_one_serial_stream() {
        let text = sample(5 * CHUNK);
        let parallel = roundtrip(&text, 4).len();
        let mut serial = flate2::write::GzEncoder::new(Vec::new(), Compression::default());
        serial.write_all(&text).expect("writing to memory");
        let serial = serial.finish().expect("finishing to memory").len();
        // The dictionaries keep each chunk's start as well compressed as the rest.
        assert!(
            (parallel as f64) < serial as f64 * 1.01,
            "{parallel} vs {serial} bytes"
        );
    }
}
