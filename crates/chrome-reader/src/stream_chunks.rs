//! The reading thread of a chunked parse over a stream (a gzip or plain file read, a
//! pipe): the text is read into recycled buffers and cut into chunks at event
//! boundaries (see `chunks.rs`).

use std::io::Read;
use std::path::Path;
use std::sync::mpsc::{Receiver, SyncSender};

use crate::Error;
use crate::chunks::{Chunk, Piece, Text, Token, find_cut, max_event_bytes, too_large};

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
