//! The cutting thread of a chunked parse (see `chunks.rs`): over a stream (a gzip or plain
//! file read, a pipe) the text is read into recycled buffers and cut into chunks at event
//! boundaries; text in memory (a mapped file) is cut in place.

use std::io::Read;
use std::path::Path;
use std::sync::mpsc::{Receiver, SyncSender};

use crate::Error;
use crate::chunks::{Chunk, Piece, Text, Token, max_event_bytes, too_large};
use crate::input::MappedFile;
use crate::progress::ReadProgress;

/// Reads `input` into chunks of about `chunk_bytes`, each (but the last) cut just before a
/// `{` that follows `}` `,` (with any whitespace between), and sends them in order; a read
/// error is sent after the text read before it.
///
/// A chunk is sent as soon as it is cut, and only then is the next buffer waited for (the
/// text after the cut waits in `tail`): with the tokens all in use, the parser has the
/// next chunk at hand when it hands a buffer back, instead of waiting for this thread to
/// wake up, take the buffer and send what it had read (with 1 thread, two tokens made
/// that a wait per chunk: 0.25 s of a 2.9 s build of 1 GB, more when the other core was
/// busy).
pub(crate) fn read_chunks<R: Read>(
    mut input: R,
    path: &Path,
    chunk_bytes: usize,
    tokens: &Receiver<Token>,
    out: &SyncSender<Piece<'_>>,
) {
    let chunk_bytes = chunk_bytes.max(1);
    let Ok(Token { mut buf, .. }) = tokens.recv() else {
        return;
    };
    // `buf[..filled]` is the chunk's text so far; the rest of `buf` is initialised too
    // (zeroed once, when the buffer grew): `read` writes into it without zeroing it again.
    // Reading into a cleared `Vec` (`read_to_end`) zeroed every byte of the text before
    // inflating into it: 55M of trace-info's 1,425M instructions on df_index_resolver, on
    // this thread, the one the parsers wait for.
    let mut filled = 0usize;
    let mut tail = Vec::new();
    let mut base = 0u64;
    let mut seq = 0usize;
    let mut array_format = None;
    let mut searched = 0usize;
    let mut want = chunk_bytes;
    loop {
        let mut eof = false;
        let mut error = None;
        if filled < want {
            if buf.len() < want {
                buf.resize(want, 0);
            }
            // Keeps what was read before an error.
            while filled < want {
                match input.read(&mut buf[filled..want]) {
                    Ok(0) => {
                        eof = true;
                        break;
                    }
                    Ok(n) => filled += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(source) => {
                        error = Some(Error::Io {
                            path: path.to_path_buf(),
                            offset: base + filled as u64,
                            source,
                        });
                        break;
                    }
                }
            }
        }
        let text = &buf[..filled];
        if array_format.is_none() {
            let first = text
                .iter()
                .position(|c| !matches!(c, b' ' | b'\n' | b'\r' | b'\t' | 0xEF | 0xBB | 0xBF));
            array_format = first.map(|k| text[k] == b'[');
        }
        let cut = if eof || error.is_some() {
            None
        } else {
            find_cut(text, searched)
        };
        let last = match cut {
            Some(cut) => {
                tail.clear();
                tail.extend_from_slice(&text[cut..]);
                filled = cut;
                false
            }
            None if eof || error.is_some() => error.is_none(),
            None => {
                // No boundary yet (one large event, or the text after the events): read on,
                // up to the limit.
                if filled > max_event_bytes() {
                    let _ = out.send((seq, Err(too_large(path, base, filled))));
                    return;
                }
                searched = filled.saturating_sub(1);
                want = filled + chunk_bytes;
                continue;
            }
        };
        let data = std::mem::take(&mut buf);
        let len = filled as u64;
        let chunk = Chunk {
            base,
            data: Text::Owned {
                buf: data,
                len: filled,
            },
            last,
            array_format: array_format.unwrap_or(false),
        };
        if out.send((seq, Ok(chunk))).is_err() {
            return;
        }
        seq += 1;
        base += len;
        if let Some(e) = error {
            let _ = out.send((seq, Err(e)));
            return;
        }
        if last {
            return;
        }
        // The next buffer: a merged chunk's, once one is done with.
        let Ok(next) = tokens.recv() else { return };
        buf = next.buf;
        if buf.len() < tail.len() {
            buf.resize(tail.len(), 0);
        }
        buf[..tail.len()].copy_from_slice(&tail);
        filled = tail.len();
        searched = 0;
        want = filled + chunk_bytes;
    }
}

/// Cuts text in memory into chunks as [`read_chunks`] does, each a slice of it.
pub(crate) struct Cutter<'m> {
    pub(crate) path: &'m Path,
    pub(crate) text: &'m [u8],
    pub(crate) map: Option<&'m MappedFile>,
    pub(crate) progress: Option<Box<dyn ReadProgress>>,
    pub(crate) chunk_bytes: usize,
    /// Fault a mapped chunk's pages in before sending it. With one parsing thread, whose
    /// time is the build's, this thread has a core of its own (as the reader's copy had):
    /// on the 1 GB synthetic trace the parser's CPU time fell from 2.6–3.0 s to 2.5–2.6 s
    /// and this thread's rose from 0.1 to 0.3–0.4 s (perf, 2 cores). Not with workers:
    /// they take the faults side by side, where this thread would become a serial stage
    /// again, at about 0.3 s a GB.
    pub(crate) fault_in: bool,
}

impl<'m> Cutter<'m> {
    /// Sends the chunks in order, one per token; with a map, drops the pages of the text
    /// merged so far as the tokens come back, so that at most the chunks in flight count
    /// in the process's resident set.
    pub(crate) fn cut(mut self, tokens: &Receiver<Token>, out: &SyncSender<Piece<'m>>) {
        let text = self.text;
        let chunk_bytes = self.chunk_bytes.max(1);
        let array_format = text
            .iter()
            .find(|c| !matches!(c, b' ' | b'\n' | b'\r' | b'\t' | 0xEF | 0xBB | 0xBF))
            .is_some_and(|&c| c == b'[');
        let mut base = 0usize;
        let mut released = 0usize;
        for seq in 0.. {
            let Ok(token) = tokens.recv() else { return };
            if let Some(map) = self.map {
                let merged_to =
                    usize::try_from(token.merged_to).expect("offsets in a map fit usize");
                map.release(released..merged_to);
                released = released.max(merged_to);
            }
            let end = cut_after(text, base, chunk_bytes);
            if end - base > max_event_bytes().max(chunk_bytes) {
                let _ = out.send((seq, Err(too_large(self.path, base as u64, end - base))));
                return;
            }
            if self.map.is_some() && self.fault_in {
                // Reading a byte of each page maps it (and the kernel maps those around it).
                let bytes = text[base..end].iter().step_by(PAGE_BYTES);
                std::hint::black_box(bytes.fold(0u8, |acc, &b| acc ^ b));
            }
            if let Some(progress) = self.progress.as_mut() {
                progress.advance(end as u64);
            }
            let chunk = Chunk {
                base: base as u64,
                data: Text::Slice(&text[base..end]),
                last: end == text.len(),
                array_format,
            };
            if out.send((seq, Ok(chunk))).is_err() || end == text.len() {
                return;
            }
            base = end;
        }
    }
}

/// The page size of [`Cutter::fault_in`]: touching one byte per 4 KiB maps every page
/// whatever the real page size.
const PAGE_BYTES: usize = 4096;

/// Where the chunk of `text` that starts at `base` ends: the last cut (see [`find_cut`])
/// within `chunk_bytes` of `base`, else within twice that, and so on, else the end of the
/// text.
fn cut_after(text: &[u8], base: usize, chunk_bytes: usize) -> usize {
    let mut searched = 0usize;
    let mut want = chunk_bytes;
    while base + want < text.len() {
        let window = &text[base..base + want];
        if let Some(cut) = find_cut(window, searched) {
            return base + cut;
        }
        searched = want - 1;
        want += chunk_bytes;
    }
    text.len()
}

/// The last place in `buf` (at or after `from`, and not at 0) that is a `{` after `}` `,`,
/// whitespace allowed between them.
pub(crate) fn find_cut(buf: &[u8], from: usize) -> Option<usize> {
    let mut end = buf.len();
    while let Some(q) = memchr::memrchr(b'{', &buf[..end]) {
        if q < from.max(1) {
            return None;
        }
        let mut k = q;
        let before = |k: &mut usize| {
            while *k > 0 && matches!(buf[*k - 1], b' ' | b'\n' | b'\r' | b'\t') {
                *k -= 1;
            }
            (*k > 0).then(|| buf[*k - 1])
        };
        if before(&mut k) == Some(b',') {
            k -= 1;
            if before(&mut k) == Some(b'}') {
                return Some(q);
            }
        }
        end = q;
    }
    None
}
