//! Multi-member gzip inflated on every core: a file made of several gzip members end to
//! end (concatenated `.gz` files, a log appended member by member, bgzf-style blocks) is cut
//! at its members' starts, and the pieces are inflated at once on a pool of threads and
//! handed over in order. A single-member file has nothing to cut and stays on one stream.
//!
//! A member's start is not recorded anywhere before it, so the cuts are guessed from the
//! bytes: a gzip header (`1f 8b 08`, no reserved flag bits, a known extra-flags and OS
//! byte) after a trailer whose size field is one that the member before could have. A
//! guess is proved by the inflate itself: a piece counts only when its members end exactly
//! at the piece's end (each with its CRC-32 and length checked by the decoder). When a
//! piece fails (a guess inside a member, or a damaged file), everything from that piece's
//! start, which the piece before proved to be a member's start, is inflated again on one
//! stream, which gives what the serial read gives there: the same text, or the same error.

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Condvar, Mutex};

/// A piece is at least this many compressed bytes (several small members share one), so
/// that a file of tiny members does not cost a hand-over per member.
const MIN_PIECE: usize = 64 << 10;

/// The shortest gzip member: a 10-byte header, an empty deflate block (2 bytes) and the
/// 8-byte trailer.
const MIN_MEMBER: usize = 20;

/// The largest compressed file read whole into memory to be cut; a larger one is inflated
/// on one stream.
pub(crate) const MAX_WHOLE: u64 = 1 << 30;

/// Where the members after the first may start in the gzip file `data`: offsets of gzip
/// headers that follow a plausible trailer. Empty for a single-member file (but a guess can
/// be wrong; see the module's comment).
pub(crate) fn member_starts(data: &[u8]) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut previous = 0usize;
    for at in memchr::memmem::find_iter(data, &[0x1f, 0x8b, 0x08]) {
        if at < previous + MIN_MEMBER || data.len() < at + 10 {
            continue;
        }
        let (flags, xfl, os) = (data[at + 3], data[at + 8], data[at + 9]);
        let header = flags & 0xe0 == 0 && matches!(xfl, 0 | 2 | 4) && (os <= 13 || os == 255);
        // The trailer's ISIZE (the member's length mod 2^32): a deflate stream is never much
        // larger than its text (stored blocks add 5 bytes per 64 KiB).
        let isize = u32::from_le_bytes([data[at - 4], data[at - 3], data[at - 2], data[at - 1]]);
        let compressed = (at - previous - 18) as u64;
        let plausible = u64::from(isize) + 5 * (u64::from(isize) >> 16) + 16 >= compressed
            || compressed >= 1 << 32;
        if header && plausible {
            starts.push(at);
            previous = at;
        }
    }
    starts
}

/// The pieces `data` is inflated in: cut at `starts`, each of at least [`MIN_PIECE`]
/// compressed bytes (the last may be smaller).
fn pieces(data_len: usize, starts: &[usize]) -> Vec<Range<usize>> {
    let mut pieces = Vec::new();
    let mut from = 0;
    for &at in starts {
        if at - from >= MIN_PIECE {
            pieces.push(from..at);
            from = at;
        }
    }
    pieces.push(from..data_len);
    pieces
}

/// What a worker hands over: piece `index` inflated, or `None` when it is not a run of
/// whole members (or inflates past the ratio).
type Inflated = (usize, Option<Vec<u8>>);

/// The workers' shared state: the next piece to take and the next to be handed over (a
/// worker waits while it would be more than `window` pieces ahead).
struct Queue {
    next: usize,
    delivered: usize,
}

struct Shared {
    data: Arc<[u8]>,
    pieces: Vec<Range<usize>>,
    queue: Mutex<Queue>,
    moved: Condvar,
    stop: AtomicBool,
    window: usize,
    ratio: u64,
    /// Texts handed back by the reader, for the next pieces (fresh memory for every
    /// piece cost a page fault per page).
    spare: Mutex<Vec<Vec<u8>>>,
}

/// The text of a multi-member gzip file, inflated on `threads` threads in pieces and read
/// in order. `compressed` counts the compressed bytes whose text was handed over (for the
/// inflate ratio check of [`crate::input`]).
pub(crate) struct ParallelMembers {
    shared: Arc<Shared>,
    done: Receiver<Inflated>,
    early: BTreeMap<usize, Option<Vec<u8>>>,
    current: Vec<u8>,
    pos: usize,
    /// Pieces handed over (the index of the one in `current` plus one).
    next_piece: usize,
    /// After a piece failed: the rest of the file on one stream.
    serial: Option<Box<dyn Read + Send>>,
    compressed: Arc<AtomicU64>,
}

impl ParallelMembers {
    /// A reader of the gzip file `data` cut at `starts` (from [`member_starts`], not
    /// empty), inflated on `threads` threads.
    pub(crate) fn spawn(
        data: Arc<[u8]>,
        starts: &[usize],
        threads: usize,
        ratio: u64,
        compressed: Arc<AtomicU64>,
    ) -> ParallelMembers {
        let threads = threads.max(1);
        let pieces = pieces(data.len(), starts);
        let workers = threads.min(pieces.len());
        let shared = Arc::new(Shared {
            data,
            pieces,
            queue: Mutex::new(Queue {
                next: 0,
                delivered: 0,
            }),
            moved: Condvar::new(),
            stop: AtomicBool::new(false),
            window: threads + 1,
            ratio,
            spare: Mutex::new(Vec::new()),
        });
        let (tx, done) = channel();
        for _ in 0..workers {
            let shared = Arc::clone(&shared);
            let tx = tx.clone();
            std::thread::spawn(move || {
                while let Some(i) = shared.take() {
                    let piece = shared.inflate(i);
                    if tx.send((i, piece)).is_err() {
                        return;
                    }
                }
            });
        }
        ParallelMembers {
            shared,
            done,
            early: BTreeMap::new(),
            current: Vec::new(),
            pos: 0,
            next_piece: 0,
            serial: None,
            compressed,
        }
    }

    /// The next piece's text, in order; `None` at the end. A piece that failed switches
    /// the rest of the file to one stream.
    fn next(&mut self) -> Option<Vec<u8>> {
        let i = self.next_piece;
        if i == self.shared.pieces.len() {
            return None;
        }
        let piece = loop {
            if let Some(p) = self.early.remove(&i) {
                break p;
            }
            match self.done.recv() {
                Ok((k, p)) => {
                    self.early.insert(k, p);
                }
                // The workers ended without it (cannot happen while `self` lives).
                Err(_) => break None,
            }
        };
        self.next_piece = i + 1;
        self.shared.delivered(i + 1);
        match piece {
            Some(text) => {
                let range = &self.shared.pieces[i];
                self.compressed
                    .fetch_add((range.end - range.start) as u64, Ordering::Relaxed);
                Some(text)
            }
            None => {
                self.shared.stop.store(true, Ordering::Relaxed);
                self.shared.moved.notify_all();
                let from = self.shared.pieces[i].start;
                let rest = Tail {
                    data: Arc::clone(&self.shared.data),
                    pos: from,
                    compressed: Arc::clone(&self.compressed),
                };
                self.serial = Some(Box::new(flate2::read::MultiGzDecoder::new(
                    io::BufReader::with_capacity(1 << 20, rest),
                )));
                None
            }
        }
    }
}

impl Drop for ParallelMembers {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.moved.notify_all();
    }
}

impl Read for ParallelMembers {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if let Some(serial) = &mut self.serial {
                return serial.read(buf);
            }
            if self.pos < self.current.len() {
                let n = buf.len().min(self.current.len() - self.pos);
                buf[..n].copy_from_slice(&self.current[self.pos..self.pos + n]);
                self.pos += n;
                return Ok(n);
            }
            match self.next() {
                Some(text) => {
                    let done = std::mem::replace(&mut self.current, text);
                    self.shared
                        .spare
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(done);
                    self.pos = 0;
                }
                None if self.serial.is_some() => {}
                None => return Ok(0),
            }
        }
    }
}

impl Shared {
    /// The next piece for a worker, once it is within the window; `None` when all are
    /// taken or the reader stopped.
    fn take(&self) -> Option<usize> {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if self.stop.load(Ordering::Relaxed) || q.next == self.pieces.len() {
                return None;
            }
            if q.next < q.delivered + self.window {
                q.next += 1;
                return Some(q.next - 1);
            }
            q = self.moved.wait(q).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn delivered(&self, n: usize) {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        q.delivered = n;
        drop(q);
        self.moved.notify_all();
    }

    /// Piece `i` inflated whole: `None` unless it is a run of complete members, or when it
    /// gives more than the ratio allows for the compressed bytes up to its end.
    fn inflate(&self, i: usize) -> Option<Vec<u8>> {
        let range = self.pieces[i].clone();
        let limit = (range.end as u64)
            .max(crate::input::INFLATE_FLOOR)
            .saturating_mul(self.ratio);
        let compressed = &self.data[range];
        // The last member's trailer gives its length (mod 2^32): room for a one-member
        // piece without growing.
        let last = compressed.len().checked_sub(4).map_or(0, |at| {
            u32::from_le_bytes([
                compressed[at],
                compressed[at + 1],
                compressed[at + 2],
                compressed[at + 3],
            ]) as usize
        });
        let want = last.min(usize::try_from(limit).unwrap_or(usize::MAX));
        let mut text = self
            .spare
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_default();
        text.clear();
        text.reserve(want);
        let decoder = flate2::read::MultiGzDecoder::new(compressed);
        match decoder.take(limit + 1).read_to_end(&mut text) {
            Ok(_) if (text.len() as u64) <= limit => Some(text),
            _ => None,
        }
    }
}

/// The compressed bytes of `data` from `pos` on, counted into `compressed` as read.
struct Tail {
    data: Arc<[u8]>,
    pos: usize,
    compressed: Arc<AtomicU64>,
}

impl Read for Tail {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let rest = &self.data[self.pos..];
        let n = buf.len().min(rest.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        self.compressed.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(text: &[u8]) -> Vec<u8> {
        let mut w = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        w.write_all(text).expect("writes to a Vec");
        w.finish().expect("writes to a Vec")
    }

    fn text(n: usize, seed: u64) -> Vec<u8> {
        // Varied enough that deflate does not shrink it to nothing.
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                b"abcdefghij{}\",:0123456789"[(x >> 59) as usize % 25]
            })
            .collect()
    }

    fn read_all(data: Vec<u8>, threads: usize) -> io::Result<Vec<u8>> {
        let data: Arc<[u8]> = data.into();
        let starts = member_starts(&data);
        let mut r = ParallelMembers::spawn(data, &starts, threads, 1000, Arc::default());
        let mut out = Vec::new();
        r.read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn members_are_found_and_inflated_in_order() {
        let parts: Vec<Vec<u8>> = (0..6).map(|i| text(400_000 + i * 1000, i as u64)).collect();
        let mut file = Vec::new();
        let mut ends = Vec::new();
        for p in &parts {
            file.extend(gzip(p));
            ends.push(file.len());
        }
        let starts = member_starts(&file);
        assert_eq!(starts, ends[..5].to_vec());
        let whole = parts.concat();
        for threads in [1, 2, 4] {
            assert_eq!(read_all(file.clone(), threads).expect("inflates"), whole);
        }
    }

    #[test]
    fn a_wrong_guess_or_a_damaged_member_reads_as_one_stream_would() {
        let a = text(600_000, 1);
        let b = text(600_000, 2);
        let mut file = gzip(&a);
        let first = file.len();
        file.extend(gzip(&b));
        // A header planted inside the first member's deflate data: the guess is wrong
        // and the piece before it cannot end there.
        let mut planted = file.clone();
        let at = first / 2;
        planted[at - 4..at].copy_from_slice(&[0, 0, 0x10, 0]);
        planted[at..at + 10].copy_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);
        assert!(member_starts(&planted).contains(&at));
        let mut serial = Vec::new();
        let serial_result =
            flate2::read::MultiGzDecoder::new(&planted[..]).read_to_end(&mut serial);
        let parallel = read_all(planted, 2);
        assert_eq!(serial_result.is_err(), parallel.is_err());
        // Undamaged: the two members' text.
        assert_eq!(read_all(file, 2).expect("inflates"), [a, b].concat());
    }

    #[test]
    fn a_damaged_second_member_is_an_error_after_the_first_members_text() {
        let a = text(600_000, 3);
        let mut file = gzip(&a);
        let first = file.len();
        file.extend(gzip(&text(600_000, 4)));
        let n = file.len();
        file[n - 6] ^= 0xff; // the second member's CRC-32
        let data: Arc<[u8]> = file.into();
        let starts = member_starts(&data);
        assert_eq!(starts, vec![first]);
        let mut r = ParallelMembers::spawn(data, &starts, 2, 1000, Arc::default());
        let mut out = vec![0u8; a.len()];
        r.read_exact(&mut out).expect("the first member reads");
        assert_eq!(out, a);
        assert!(r.read_to_end(&mut Vec::new()).is_err());
    }
}
