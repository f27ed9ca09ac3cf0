//! Chunk-parallel splitting and parsing for the model build: the JSON text is cut into large
//! chunks at places that look like a boundary between two events (`}` `,` `{`), each chunk
//! is split and parsed on a worker as if it started there, and the chunks are validated in
//! file order: chunk k is kept only when the true parse of chunk k−1 ended exactly at chunk
//! k's start, expecting an event; otherwise chunk k is redone from the true position.
//!
//! The splitting is the same state machine in every case (the one of `scan.rs`, on a slice
//! instead of a stream), so the result is the sequential build's whatever the chunk size
//! and the number of workers: the same events, indices, byte offsets and errors. The first
//! error in file order is the one reported.
//!
//! The text comes from a stream, which a reader thread reads (and inflates) into recycled
//! buffers, or from memory (a mapped file, see `input.rs`), whose chunks are slices cut in
//! place: then no thread copies the text.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

use serde_json::value::RawValue;

use crate::Error;
use crate::input::MappedFile;
use crate::progress::ReadProgress;
use crate::scan::{TopLevel, json_error_in, show};
use crate::stream_chunks::{Cutter, read_chunks};

/// Where [`prepare_chunks`] gets the JSON text.
pub(crate) enum Source<'m, R> {
    /// Read on a thread of its own into chunk buffers.
    Read(R),
    /// Already in memory: chunks are slices of `text`. When it is a mapped file's, `map`
    /// is that file, whose pages are dropped from the process once they are merged, and
    /// `progress` hears how far the text is cut.
    Slice {
        text: &'m [u8],
        map: Option<&'m MappedFile>,
        progress: Option<Box<dyn ReadProgress>>,
    },
}

/// Where an event's text starts: at `text[start]` (a `{`), the `index`-th event of the
/// trace, at byte `offset` of the file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EventAt<'t> {
    pub text: &'t str,
    pub start: usize,
    pub index: usize,
    pub offset: u64,
}

/// What a run does with the events it splits, on the thread that runs it: the model
/// build's `Prep`, or a caller's [`crate::EventSink`]. A run's output is dropped when its
/// speculation fails, so a sink keeps everything it makes in what [`RunSink::finish`]
/// returns.
pub(crate) trait RunSink {
    type Out: Send;
    /// Handles the event `at` if the fast parser reads it: the index in `at.text` just
    /// past its end, or `None` to split it and call [`RunSink::event_text`].
    fn fast_event(&mut self, at: EventAt<'_>) -> Option<Result<usize, Error>>;
    /// Parses and handles the event whose text is `text`.
    fn event_text(&mut self, index: usize, offset: u64, text: &[u8]) -> Result<(), Error>;
    fn finish(self) -> Self::Out;
}

/// About this many bytes of JSON text go into one chunk.
pub(crate) const CHUNK_BYTES: usize = 2 << 20;

/// At most this many bytes go into a chunk read from a stream (gzip): its buffers, one per
/// token, are memory of their own, where a mapped file's chunks are slices of the map. At
/// 1 MiB rather than 2 (`cargo xtask bench --reader`, 2026-12-02, `df_index_resolver.json.gz`,
/// 53.7 MB of JSON): compact-cuda-graph-trace 1.54× → 1.38× zcat, trace-info 0.62× → 0.56×,
/// analyze-profile 0.62× → 0.55×; profile-model touched 3k fewer pages (29.4k → 26.3k).
/// 512 KiB measured the same as 1 MiB.
const READ_CHUNK_BYTES: usize = 1 << 20;

/// The largest stretch of text without a place to cut it (one event, string or value, or
/// the text around the events) unless `TRACEWISE_MAX_EVENT_BYTES` says otherwise: real
/// events are kilobytes; a chunk this large is held whole in memory and parsed as one.
pub const MAX_EVENT_BYTES: usize = 256 << 20;

/// The limit in force: `TRACEWISE_MAX_EVENT_BYTES` when it is a positive number, else
/// [`MAX_EVENT_BYTES`].
pub fn max_event_bytes() -> usize {
    static LIMIT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let limit = *LIMIT.get_or_init(|| {
        crate::input::env_limit("TRACEWISE_MAX_EVENT_BYTES", MAX_EVENT_BYTES as u64)
    });
    usize::try_from(limit).unwrap_or(usize::MAX)
}

/// The error for a stretch of `len` bytes from `offset` with no place to cut it.
pub(crate) fn too_large(path: &Path, offset: u64, len: usize) -> Error {
    Error::Limit {
        path: path.to_path_buf(),
        offset,
        what: format!(
            "no event boundary in the next {len} bytes: one event, string or value is larger \
             than the limit of {} bytes; set TRACEWISE_MAX_EVENT_BYTES to raise it",
            max_event_bytes()
        ),
    }
}

/// Where the splitter is, at a point from which it can restart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// At the start of the document (byte 0, before a byte-order mark).
    Doc,
    /// Inside the top-level object, before a member or its `}` (after `,` when not first).
    Top { first: bool, seen_events: bool },
    /// Inside `traceEvents`: before the separator after an event (or before the first
    /// event), or just after a `,` (expecting an event).
    Events {
        array_format: bool,
        after_comma: bool,
    },
    /// After the document's value: only whitespace may follow.
    End {
        seen_events: bool,
        array_format: bool,
    },
}

/// A restart point: the byte offset, the state there, and the index of the next event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Resume {
    pub offset: u64,
    pub state: State,
    pub index: usize,
}

impl Resume {
    fn rebased(self, index_base: usize) -> Resume {
        Resume {
            index: self.index + index_base,
            ..self
        }
    }
}

/// An error of a run whose event indices may still be relative to the run's start.
pub(crate) enum Failure {
    Error(Error),
    /// `expected ',' or ']' after event {prev}`.
    AfterEvent {
        prev: usize,
        offset: u64,
        found: u8,
    },
}

impl Failure {
    pub(crate) fn into_error(self, path: &Path, index_base: usize) -> Error {
        match self {
            Failure::Error(Error::Event {
                path,
                index,
                offset,
                message,
            }) => Error::Event {
                path,
                index: index + index_base,
                offset,
                message,
            },
            Failure::Error(e) => e,
            Failure::AfterEvent {
                prev,
                offset,
                found,
            } => Error::Json {
                path: path.to_path_buf(),
                offset,
                message: format!(
                    "expected ',' or ']' after event {}, found {}",
                    prev + index_base,
                    show(found)
                ),
            },
        }
    }
}

/// What one run of the splitter over a piece of text found.
pub(crate) struct Run<O> {
    /// Where it started (what a speculative run assumed).
    pub start: Resume,
    /// What the sink made of the events, with indices relative to `start.index`'s base.
    pub prepared: O,
    /// Top-level members other than `traceEvents` met on the way, in file order.
    pub members: Vec<(String, Box<RawValue>)>,
    /// How many of `members` it met before `traceEvents`.
    pub members_before_events: usize,
    /// Where it stopped: the last restart point before the end of its text, or the end of
    /// the document.
    pub end: Resume,
    /// The document ended (the last chunk's text was used up after its value).
    pub done: Option<Done>,
    pub failure: Option<Failure>,
}

/// The facts only the end of the document gives.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Done {
    pub array_format: bool,
    pub event_count: usize,
    pub json_bytes: u64,
}

/// A chunk's text: the first `len` bytes of a buffer the reader filled, or a slice of text
/// in memory.
pub(crate) enum Text<'m> {
    /// `buf` is initialised past `len` (zeroes or an earlier chunk's text), so that it is
    /// reused without zeroing it again (see [`read_chunks`]).
    Owned {
        buf: Vec<u8>,
        len: usize,
    },
    Slice(&'m [u8]),
}

impl std::ops::Deref for Text<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Text::Owned { buf, len } => &buf[..*len],
            Text::Slice(text) => text,
        }
    }
}

/// A piece of the input, as the reading thread cut it.
pub(crate) struct Chunk<'m> {
    /// Byte offset of `data[0]` in the JSON text.
    pub base: u64,
    pub data: Text<'m>,
    /// No text follows.
    pub last: bool,
    /// The document's first non-whitespace byte is `[` (as far as this chunk can tell):
    /// the state a speculative run assumes.
    pub array_format: bool,
}

impl Chunk<'_> {
    /// Where a worker assumes the chunk starts.
    fn speculative_start(&self) -> Resume {
        Resume {
            offset: self.base,
            state: if self.base == 0 {
                State::Doc
            } else {
                State::Events {
                    array_format: self.array_format,
                    after_comma: true,
                }
            },
            index: 0,
        }
    }
}

/// How the speculation went: runs kept as the workers made them, and runs redone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stats {
    pub kept: usize,
    pub redone: usize,
}

/// Leave to cut one more chunk, which the coordinator hands back once it has merged a
/// chunk: that chunk's buffer (reused, so its pages are not faulted in again) and where
/// its text ends (so a mapped file's pages before it can be dropped).
pub(crate) struct Token {
    pub(crate) buf: Vec<u8>,
    pub(crate) merged_to: u64,
}

/// Splits `source` into runs on `threads` threads (1: on the caller's thread), each run's
/// events handed to a sink of its own from `new_sink`, and hands each validated run's
/// output to `apply` in file order with the index of its first event.
pub(crate) fn prepare_chunks<R: Read + Send, S: RunSink>(
    source: Source<'_, R>,
    path: &Path,
    threads: usize,
    chunk_bytes: usize,
    new_sink: &(dyn Fn() -> S + Sync),
    mut apply: impl FnMut(S::Out, usize) -> Result<(), Error>,
) -> Result<(TopLevel, Stats), Error> {
    let threads = threads.max(1);
    let workers = if threads == 1 { 0 } else { threads };
    let in_flight = 2 * workers + 2;
    std::thread::scope(|scope| {
        // One token per chunk that may be cut and not yet done with: its buffer (and, with
        // a map, its pages) come back when the chunk is merged.
        let (token_tx, token_rx) = std::sync::mpsc::channel::<Token>();
        for _ in 0..in_flight {
            let token = Token {
                buf: Vec::new(),
                merged_to: 0,
            };
            token_tx.send(token).expect("the token channel is open");
        }
        // The reader hands its pieces straight to whoever parses them: the caller's
        // thread, or the workers (no hop through the coordinator, which would have to wake
        // up for each chunk only to pass it on).
        let (piece_tx, piece_rx) = sync_channel::<Piece<'_>>(in_flight);
        match source {
            Source::Read(input) => {
                // Each chunk read is a buffer of its own, and every token holds one.
                let chunk_bytes = chunk_bytes.min(READ_CHUNK_BYTES);
                scope.spawn(move || read_chunks(input, path, chunk_bytes, &token_rx, &piece_tx));
            }
            Source::Slice {
                text,
                map,
                progress,
            } => {
                scope.spawn(move || {
                    let cutter = Cutter {
                        path,
                        text,
                        map,
                        progress,
                        chunk_bytes,
                        fault_in: workers == 0,
                    };
                    cutter.cut(&token_rx, &piece_tx);
                });
            }
        }
        let mut merge = Merge::new(path, new_sink);
        if workers == 0 {
            for (_, piece) in piece_rx.iter() {
                let done = merge.take(piece?, None, &mut apply, &token_tx)?;
                if done {
                    break;
                }
            }
            return merge.finish();
        }
        let piece_rx = Arc::new(Mutex::new(piece_rx));
        let (done_tx, done_rx) = sync_channel::<(usize, Parsed<'_, S::Out>)>(in_flight);
        for _ in 0..workers {
            let piece_rx = Arc::clone(&piece_rx);
            let done_tx = done_tx.clone();
            scope.spawn(move || worker(path, new_sink, &piece_rx, &done_tx));
        }
        drop(done_tx);
        let res = coordinate(&done_rx, &token_tx, &mut merge, &mut apply);
        // Stop the reader and the workers, whatever happened: once the parsed pieces are
        // no longer received, a worker's send fails and it stops, which closes the
        // reader's channel.
        drop(done_rx);
        drop(piece_rx);
        res?;
        merge.finish()
    })
}

/// What the reader sends: a chunk, or the error that stopped it, with its place in file
/// order (the chunk's `seq`, or the number of chunks sent before the error).
pub(crate) type Piece<'m> = (usize, Result<Chunk<'m>, Error>);

/// A piece after a worker: the chunk with its speculative run, or the reader's error.
type Parsed<'m, O> = Result<(Chunk<'m>, Run<O>), Error>;

/// Merges the workers' runs in file order, up to the end of the document or the first
/// error in file order.
fn coordinate<'m, S: RunSink>(
    done_rx: &Receiver<(usize, Parsed<'m, S::Out>)>,
    token_tx: &std::sync::mpsc::Sender<Token>,
    merge: &mut Merge<'_, S>,
    apply: &mut impl FnMut(S::Out, usize) -> Result<(), Error>,
) -> Result<(), Error> {
    // At most one entry per token, plus the reader's error.
    let mut waiting: BTreeMap<usize, Parsed<'m, S::Out>> = BTreeMap::new();
    let mut next = 0usize;
    loop {
        if let Some(parsed) = waiting.remove(&next) {
            next += 1;
            let (chunk, run) = parsed?;
            if merge.take(chunk, Some(run), apply, token_tx)? {
                return Ok(());
            }
            continue;
        }
        let Ok((seq, parsed)) = done_rx.recv() else {
            unreachable!(
                "the reader's last piece is a chunk that ends the document or an error, \
                 and the workers pass every piece on"
            );
        };
        waiting.insert(seq, parsed);
    }
}

fn worker<'m, S: RunSink>(
    path: &Path,
    new_sink: &(dyn Fn() -> S + Sync),
    piece_rx: &Mutex<Receiver<Piece<'m>>>,
    done_tx: &SyncSender<(usize, Parsed<'m, S::Out>)>,
) {
    loop {
        let piece = piece_rx
            .lock()
            .expect("no worker panics holding the queue")
            .recv();
        let Ok((seq, piece)) = piece else { break };
        let parsed = piece.map(|chunk| {
            let run = run(
                path,
                new_sink(),
                &chunk.data,
                chunk.speculative_start(),
                chunk.last,
            );
            (chunk, run)
        });
        if done_tx.send((seq, parsed)).is_err() {
            break;
        }
    }
}

/// The coordinator's side: the true position, the text left over from the last chunk
/// (when it did not end at an event boundary), and the top-level members so far.
struct Merge<'p, S> {
    path: &'p Path,
    new_sink: &'p (dyn Fn() -> S + Sync),
    at: Resume,
    carry: Vec<u8>,
    members: Vec<(String, Box<RawValue>)>,
    /// How many of `members` came before `traceEvents`.
    members_before_events: usize,
    done: Option<Done>,
    /// Speculative runs kept, and those redone from the true position.
    kept: usize,
    redone: usize,
}

impl<'p, S: RunSink> Merge<'p, S> {
    fn new(path: &'p Path, new_sink: &'p (dyn Fn() -> S + Sync)) -> Self {
        Merge {
            path,
            new_sink,
            at: Resume {
                offset: 0,
                state: State::Doc,
                index: 0,
            },
            carry: Vec::new(),
            members: Vec::new(),
            members_before_events: 0,
            done: None,
            kept: 0,
            redone: 0,
        }
    }

    /// Takes the next chunk in file order with its speculative run, if any: keeps the run
    /// when it started where the true parse is, else runs the chunk (after the carried
    /// text) from there. Returns true once the document is done.
    fn take(
        &mut self,
        chunk: Chunk<'_>,
        speculative: Option<Run<S::Out>>,
        apply: &mut impl FnMut(S::Out, usize) -> Result<(), Error>,
        tokens: &std::sync::mpsc::Sender<Token>,
    ) -> Result<bool, Error> {
        let res = self.take_chunk(&chunk, speculative, apply);
        let token = Token {
            merged_to: chunk.base + chunk.data.len() as u64,
            buf: match chunk.data {
                Text::Owned { buf, .. } => buf,
                Text::Slice(_) => Vec::new(),
            },
        };
        // The reader may have stopped: then the token is not needed.
        let _ = tokens.send(token);
        res
    }

    fn take_chunk(
        &mut self,
        chunk: &Chunk<'_>,
        speculative: Option<Run<S::Out>>,
        apply: &mut impl FnMut(S::Out, usize) -> Result<(), Error>,
    ) -> Result<bool, Error> {
        let was_speculative = speculative.is_some();
        let run = match speculative {
            Some(run) if self.starts_at_truth(&run) => {
                self.kept += 1;
                run
            }
            _ => {
                self.redone += usize::from(was_speculative);
                let text: std::borrow::Cow<'_, [u8]> = if self.carry.is_empty() {
                    (&chunk.data[..]).into()
                } else {
                    let mut text = std::mem::take(&mut self.carry);
                    text.extend_from_slice(&chunk.data);
                    text.into()
                };
                let start = self.at;
                let run = run(self.path, (self.new_sink)(), &text, start, chunk.last);
                self.carry = tail_after(&text, start.offset, run.end.offset);
                return self.accept(run, apply, None);
            }
        };
        self.accept(run, apply, Some(chunk))
    }

    /// Whether a speculative run started where the true parse is: the last chunk ended at
    /// an event boundary (nothing carried over), in the state the run assumed.
    fn starts_at_truth(&self, run: &Run<S::Out>) -> bool {
        self.carry.is_empty()
            && run.start.offset == self.at.offset
            && run.start.state == self.at.state
    }

    /// Applies a run that starts at the true position; `chunk` is its text when the carry
    /// has not been set from it yet.
    fn accept(
        &mut self,
        run: Run<S::Out>,
        apply: &mut impl FnMut(S::Out, usize) -> Result<(), Error>,
        chunk: Option<&Chunk<'_>>,
    ) -> Result<bool, Error> {
        // Event indices of a speculative run count from its start; a redone run's are true.
        let base = self.at.index - run.start.index;
        if let Some(chunk) = chunk {
            self.carry = tail_after(&chunk.data, chunk.base, run.end.offset);
        }
        apply(run.prepared, base)?;
        self.members_before_events += run.members_before_events;
        self.members.extend(run.members);
        if let Some(failure) = run.failure {
            return Err(failure.into_error(self.path, base));
        }
        self.at = run.end.rebased(base);
        if let Some(mut done) = run.done {
            done.event_count += base;
            self.done = Some(done);
            return Ok(true);
        }
        Ok(false)
    }

    fn finish(self) -> Result<(TopLevel, Stats), Error> {
        let done = self
            .done
            .expect("the document is done before the merge finishes");
        let top = TopLevel {
            members: self.members,
            events_member: self.members_before_events,
            array_format: done.array_format,
            event_count: done.event_count,
            json_bytes: done.json_bytes,
        };
        let stats = Stats {
            kept: self.kept,
            redone: self.redone,
        };
        Ok((top, stats))
    }
}

/// The text of `data` (which starts at byte `base`) from byte `from` on.
fn tail_after(data: &[u8], base: u64, from: u64) -> Vec<u8> {
    let k = usize::try_from(from - base).expect("a chunk's offsets fit usize");
    data[k.min(data.len())..].to_vec()
}

/// Why a run stopped before the end of its text.
enum Stop {
    /// The text ended where more is needed (and more may follow).
    More,
    Fail(Failure),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Self {
        Stop::Fail(Failure::Error(e))
    }
}

/// The splitter of `scan.rs` over a slice: `last` says whether text follows it.
struct Machine<'t, 'p, S> {
    path: &'p Path,
    text: &'t [u8],
    /// `text` when it is all UTF-8, for the fast event parser.
    text_str: Option<&'t str>,
    base: u64,
    pos: usize,
    last: bool,
    at: Resume,
    members: Vec<(String, Box<RawValue>)>,
    /// How many of `members` came before `traceEvents`.
    members_before_events: usize,
    sink: S,
}

/// Splits and parses `text` (starting at byte `start.offset`, in `start`'s state) up to
/// its end, the end of the document or the first error.
pub(crate) fn run<S: RunSink>(
    path: &Path,
    sink: S,
    text: &[u8],
    start: Resume,
    last: bool,
) -> Run<S::Out> {
    let mut m = Machine {
        path,
        text,
        text_str: std::str::from_utf8(text).ok(),
        base: start.offset,
        pos: 0,
        last,
        at: start,
        members: Vec::new(),
        members_before_events: 0,
        sink,
    };
    let (done, failure) = match m.go() {
        Ok(done) => (Some(done), None),
        Err(Stop::More) => (None, None),
        Err(Stop::Fail(f)) => (None, Some(f)),
    };
    Run {
        start,
        prepared: m.sink.finish(),
        members: m.members,
        members_before_events: m.members_before_events,
        end: m.at,
        done,
        failure,
    }
}

impl<S: RunSink> Machine<'_, '_, S> {
    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn go(&mut self) -> Result<Done, Stop> {
        let mut index = self.at.index;
        let mut state = self.at.state;
        loop {
            self.at = Resume {
                offset: self.offset(),
                state,
                index,
            };
            state = match state {
                State::Doc => self.doc()?,
                State::Top { first, seen_events } => self.top(first, seen_events)?,
                State::Events {
                    array_format,
                    after_comma,
                } => self.event(array_format, after_comma, &mut index)?,
                State::End {
                    seen_events,
                    array_format,
                } => {
                    self.expect_end()?;
                    if !seen_events {
                        return Err(self
                            .not_a_trace("the JSON object has no \"traceEvents\" array".to_string())
                            .into());
                    }
                    return Ok(Done {
                        array_format,
                        event_count: index,
                        json_bytes: self.offset(),
                    });
                }
            };
        }
    }

    /// The start of the document, up to the first member of the top-level object or the
    /// first event of a bare array.
    fn doc(&mut self) -> Result<State, Stop> {
        if self.text.len() < 3 && !self.last {
            return Err(Stop::More);
        }
        if self.text.starts_with(b"\xEF\xBB\xBF") {
            self.pos += 3;
        }
        match self.peek_non_ws()? {
            Some(b'{') => {
                self.pos += 1;
                Ok(State::Top {
                    first: true,
                    seen_events: false,
                })
            }
            Some(b'[') => {
                self.pos += 1;
                Ok(State::Events {
                    array_format: true,
                    after_comma: false,
                })
            }
            Some(c) => {
                // An XSpace starts with field 1 (`planes`, length-delimited): tag byte 0x0a,
                // which the JSON whitespace skip has just passed over.
                let xspace_name = self.path.to_string_lossy().ends_with(".xplane.pb");
                if xspace_name
                    || (self.text[..self.pos].starts_with(b"\n") && !c.is_ascii_graphic())
                {
                    return Err(Error::OtherFormat {
                        path: self.path.to_path_buf(),
                        format: trace_model::Format::XPlane,
                    }
                    .into());
                }
                Err(self
                    .not_a_trace(format!(
                        "expected a JSON object or array, found {} at byte {}",
                        show(c),
                        self.offset()
                    ))
                    .into())
            }
            None => Err(self.not_a_trace("the file is empty".to_string()).into()),
        }
    }

    /// One member of the top-level object (or its end).
    fn top(&mut self, first: bool, seen_events: bool) -> Result<State, Stop> {
        match self.peek_non_ws()? {
            Some(b'}') => {
                self.pos += 1;
                return Ok(State::End {
                    seen_events,
                    array_format: false,
                });
            }
            Some(b',') if !first => {
                self.pos += 1;
                self.peek_non_ws()?;
            }
            Some(_) if first => {}
            Some(c) => {
                return Err(self
                    .json_error(format!("expected ',' or '}}', found {}", show(c)))
                    .into());
            }
            None => return Err(self.truncated("the top-level object").into()),
        }
        let key = self.key()?;
        if key == "traceEvents" && self.peek_non_ws()? == Some(b'[') {
            if seen_events {
                return Err(self
                    .not_a_trace("two traceEvents members".to_string())
                    .into());
            }
            self.pos += 1;
            return Ok(State::Events {
                array_format: false,
                after_comma: false,
            });
        }
        let value = self.raw_value("a top-level member")?;
        self.members.push((key, value));
        self.members_before_events += usize::from(!seen_events);
        Ok(State::Top {
            first: false,
            seen_events,
        })
    }

    /// One event of `traceEvents` (or the array's end).
    fn event(
        &mut self,
        array_format: bool,
        after_comma: bool,
        index: &mut usize,
    ) -> Result<State, Stop> {
        if !after_comma {
            match self.peek_non_ws()? {
                Some(b']') => {
                    self.pos += 1;
                    return Ok(if array_format {
                        State::End {
                            seen_events: true,
                            array_format,
                        }
                    } else {
                        State::Top {
                            first: false,
                            seen_events: true,
                        }
                    });
                }
                Some(b',') if *index > 0 => {
                    self.pos += 1;
                    // After the comma is a restart point: where the reader cuts chunks.
                    match self.peek_non_ws() {
                        Ok(Some(_)) => {}
                        Ok(None) => return Err(self.truncated("traceEvents").into()),
                        Err(stop) => {
                            self.at = Resume {
                                offset: self.offset(),
                                state: State::Events {
                                    array_format,
                                    after_comma: true,
                                },
                                index: *index,
                            };
                            return Err(stop);
                        }
                    }
                }
                Some(_) if *index == 0 => {}
                Some(c) => {
                    return Err(Stop::Fail(Failure::AfterEvent {
                        prev: *index - 1,
                        offset: self.offset(),
                        found: c,
                    }));
                }
                None => return Err(self.truncated("traceEvents").into()),
            }
        } else if self.peek_non_ws()?.is_none() {
            return Err(self.truncated("traceEvents").into());
        }
        let offset = self.offset();
        if let Some(text) = self.text_str
            && let Some(res) = self.sink.fast_event(EventAt {
                text,
                start: self.pos,
                index: *index,
                offset,
            })
        {
            self.pos = res.map_err(|e| Stop::Fail(Failure::Error(e)))?;
            *index += 1;
            return Ok(State::Events {
                array_format,
                after_comma: false,
            });
        }
        let len = self.value_len("an event")?;
        let text = &self.text[self.pos..self.pos + len];
        self.sink
            .event_text(*index, offset, text)
            .map_err(|e| Stop::Fail(Failure::Error(e)))?;
        self.pos += len;
        *index += 1;
        Ok(State::Events {
            array_format,
            after_comma: false,
        })
    }

    fn expect_end(&mut self) -> Result<(), Stop> {
        match self.peek_non_ws()? {
            None => Ok(()),
            Some(c) => Err(self
                .json_error(format!(
                    "unexpected {} after the end of the document",
                    show(c)
                ))
                .into()),
        }
    }

    /// Skips whitespace and returns the next byte without consuming it; `None` at the end
    /// of the last text.
    fn peek_non_ws(&mut self) -> Result<Option<u8>, Stop> {
        while let Some(&c) = self.text.get(self.pos) {
            if !matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
                return Ok(Some(c));
            }
            self.pos += 1;
        }
        if self.last { Ok(None) } else { Err(Stop::More) }
    }

    /// The text ended inside `context`: an error at the end of the last text.
    fn ran_out(&self, context: &'static str) -> Stop {
        if self.last {
            self.truncated(context).into()
        } else {
            Stop::More
        }
    }

    /// Length of the JSON value starting at `pos` (which must be its first byte).
    fn value_len(&self, context: &'static str) -> Result<usize, Stop> {
        let text = &self.text[self.pos..];
        let Some(&first) = text.first() else {
            return Err(self.ran_out(context));
        };
        match first {
            b'{' | b'[' => {
                let mut depth = 0usize;
                let mut i = 0usize;
                loop {
                    // Outside strings only brackets and quotes matter.
                    let Some(k) = next_structural(&text[i..]) else {
                        return Err(self.ran_out(context));
                    };
                    i += k;
                    match text[i] {
                        b'{' | b'[' => {
                            depth += 1;
                            i += 1;
                        }
                        b'"' => i = self.string_end(text, i + 1, context)?,
                        _ => {
                            i += 1;
                            depth -= 1;
                            if depth == 0 {
                                return Ok(i);
                            }
                        }
                    }
                }
            }
            b'"' => self.string_end(text, 1, context),
            _ => match text
                .iter()
                .position(|c| matches!(c, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t'))
            {
                Some(k) => Ok(k),
                None if self.last => Ok(text.len()),
                None => Err(Stop::More),
            },
        }
    }

    /// Given `i` just past an opening quote in `text`, returns the index just past the
    /// closing quote.
    fn string_end(&self, text: &[u8], mut i: usize, context: &'static str) -> Result<usize, Stop> {
        loop {
            match memchr::memchr2(b'"', b'\\', &text[i.min(text.len())..]) {
                Some(k) if text[i + k] == b'"' => return Ok(i + k + 1),
                Some(k) => {
                    // A backslash escapes the next byte.
                    i += k + 2;
                    if i > text.len() {
                        return Err(self.ran_out(context));
                    }
                }
                None => return Err(self.ran_out(context)),
            }
        }
    }

    fn key(&mut self) -> Result<String, Stop> {
        if self.peek_non_ws()? != Some(b'"') {
            return Err(self.json_error("expected a string key".to_string()).into());
        }
        let len = self.value_len("an object key")?;
        let start = self.offset();
        let key: String = serde_json::from_slice(&self.text[self.pos..self.pos + len])
            .map_err(|e| json_error_in(self.path, start, &e))?;
        self.pos += len;
        match self.peek_non_ws()? {
            Some(b':') => {
                self.pos += 1;
                Ok(key)
            }
            Some(c) => Err(self
                .json_error(format!("expected ':', found {}", show(c)))
                .into()),
            None => Err(self.truncated("an object member").into()),
        }
    }

    fn raw_value(&mut self, context: &'static str) -> Result<Box<RawValue>, Stop> {
        if self.peek_non_ws()?.is_none() {
            return Err(self.truncated(context).into());
        }
        let len = self.value_len(context)?;
        let start = self.offset();
        let value: Box<RawValue> = serde_json::from_slice(&self.text[self.pos..self.pos + len])
            .map_err(|e| json_error_in(self.path, start, &e))?;
        self.pos += len;
        Ok(value)
    }

    fn truncated(&self, context: &'static str) -> Error {
        Error::Truncated {
            path: self.path.to_path_buf(),
            offset: self.base + self.text.len() as u64,
            context,
        }
    }

    fn json_error(&self, message: String) -> Error {
        Error::Json {
            path: self.path.to_path_buf(),
            offset: self.offset(),
            message,
        }
    }

    fn not_a_trace(&self, reason: String) -> Error {
        Error::NotATrace {
            path: self.path.to_path_buf(),
            reason,
        }
    }
}

/// Index of the next bracket or quote in `text`.
fn next_structural(text: &[u8]) -> Option<usize> {
    text.iter()
        .position(|c| matches!(c, b'{' | b'[' | b'}' | b']' | b'"'))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::stream_chunks::find_cut;

    /// The capture's whole `Debug` text, or the error's text and fields.
    fn outcome(res: Result<trace_model::Capture, Error>) -> String {
        match res {
            Ok(c) => format!("{c:?}"),
            Err(e) => format!("error {e} / {e:?}"),
        }
    }

    /// `text` read by the chunk reader's thread, and cut in place as a mapped file is.
    fn sources(text: &[u8]) -> [(&'static str, Source<'_, &[u8]>); 2] {
        let slice = Source::Slice {
            text,
            map: None,
            progress: None,
        };
        [("read", Source::Read(text)), ("in memory", slice)]
    }

    /// Chunk sizes from one byte (every event its own chunk, most cuts redone) to larger
    /// than the text, on 1, 2 and 4 threads, read and in memory, all equal to the
    /// streaming splitter's build.
    fn check(text: &[u8], path: &Path) -> String {
        let expect = outcome(crate::build::load_with_stream_splitter(text, path));
        for chunk_bytes in [1, 2, 3, 5, 8, 13, 40, 97, 256, 4096, 1 << 20] {
            for threads in [1, 2, 4] {
                for (how, source) in sources(text) {
                    let got = outcome(crate::build::load_source(
                        source,
                        path,
                        threads,
                        chunk_bytes,
                    ));
                    assert_eq!(
                        got,
                        expect,
                        "{}: {chunk_bytes}-byte chunks, {threads} threads, {how}",
                        path.display()
                    );
                }
            }
        }
        expect
    }

    fn event(i: usize, args: &str, name: &str) -> String {
        format!(
            r#"{{"ph": "X", "cat": "kernel", "name": "{name}", "pid": 0, "tid": 7, "ts": {}.5, "dur": 3, "args": {{"stream": 7, "correlation": {i}{args}}}}}"#,
            100 + i
        )
    }

    fn trace(events: &[String], tail: &str) -> Vec<u8> {
        format!(
            "{{\"schemaVersion\": 1, \"deviceProperties\": [{{\"id\": 0}}, {{\"id\": 1}}],\n\"traceEvents\": [\n{}\n]{tail}}}\n",
            events.join(",\n")
        )
        .into_bytes()
    }

    #[test]
    fn adversarial_texts_give_the_sequential_build() {
        let path = Path::new("adversarial.json");
        let plain: Vec<String> = (0..20).map(|i| event(i, "", "k")).collect();
        let mut cases: Vec<(&str, Vec<u8>)> = vec![
            ("plain", trace(&plain, "")),
            (
                "strings holding }, {",
                trace(
                    &(0..20)
                        .map(|i| event(i, r#", "hlo_op": "a}, {\"b\": }, {c"#, "x}, {y},{"))
                        .collect::<Vec<_>>(),
                    "",
                ),
            ),
            (
                "args holding arrays of objects",
                trace(
                    &(0..20)
                        .map(|i| {
                            event(
                                i,
                                r#", "list": [{"a": 1}, {"b": [{"c": 2},{"d": 3}]}]"#,
                                "k",
                            )
                        })
                        .collect::<Vec<_>>(),
                    "",
                ),
            ),
            (
                "arrays of objects after the events",
                trace(
                    &plain,
                    r#", "tail": [{"a": 1}, {"b": 2}], "traceName": "t""#,
                ),
            ),
            (
                "an event far larger than a chunk",
                trace(
                    &(0..5)
                        .map(|i| event(i, &format!(", \"big\": \"{}\"", "}, {".repeat(300)), "k"))
                        .collect::<Vec<_>>(),
                    "",
                ),
            ),
            (
                "bare array, odd whitespace, a byte-order mark",
                format!("\u{feff} [ {} \r\n\t]  \n", plain.join(" ,\t\n ")).into_bytes(),
            ),
            (
                "empty events",
                b"{\"traceEvents\": [], \"x\": [{}, {}]}".to_vec(),
            ),
            ("no events", b"{\"x\": [{}, {}]}".to_vec()),
            (
                "two traceEvents",
                b"{\"traceEvents\": [{}], \"traceEvents\": [{}]}".to_vec(),
            ),
        ];
        let bad_event = |at: usize, bad: &str| {
            let mut events = plain.clone();
            events[at] = bad.to_string();
            trace(&events, "")
        };
        cases.extend([
            (
                "bad ts",
                bad_event(13, r#"{"ph": "X", "ts": "soon", "dur": 1}"#),
            ),
            ("no phase", bad_event(13, r#"{"name": "x}, {"}"#)),
            ("not an object", bad_event(13, "[1, {}]")),
            (
                "two commas",
                bad_event(13, r#"{"ph": "X", "ts": 1,, "dur": 1}"#),
            ),
            ("trailing comma", bad_event(19, "{}, ")),
            ("missing comma", bad_event(13, r#"{"ph": "M"} {"ph": "M"}"#)),
            (
                "invalid escape",
                bad_event(13, r#"{"ph": "X", "name": "\q}, {"}"#),
            ),
            ("a bad event after a bad event", {
                let mut events = plain.clone();
                events[5] = r#"{"ph": "X", "ts": true}"#.to_string();
                events[15] = "nope".to_string();
                trace(&events, "")
            }),
        ]);
        let whole = trace(&plain, "");
        cases.push(("truncated in an event", whole[..whole.len() / 2].to_vec()));
        cases.push(("truncated after a comma", {
            let cut = whole
                .windows(2)
                .rposition(|w| w == b",\n")
                .expect("a comma")
                + 2;
            whole[..cut].to_vec()
        }));
        cases.push(("trailing garbage", {
            let mut t = whole.clone();
            t.extend_from_slice(b" }, {");
            t
        }));
        cases.push(("invalid UTF-8 in a late event", {
            let mut t = whole.clone();
            let at = t.len() - 60;
            t[at] = 0xff;
            t
        }));
        let mut errors = 0;
        for (what, text) in &cases {
            let out = check(text, path);
            errors += usize::from(out.starts_with("error"));
            assert!(!out.is_empty(), "{what}");
        }
        assert!(errors >= 14, "{errors} cases failed");
    }

    /// Every JSON fixture of `testdata/chrome`, decompressed when gzip.
    fn fixtures() -> Vec<(PathBuf, Vec<u8>)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/chrome");
        test_support::json_texts(&root, 60)
    }

    /// Each event as [`crate::read_events_chunked`] hands it on, one line each.
    struct Lines(Vec<String>);

    impl crate::EventSink for Lines {
        type Out = Vec<String>;
        fn event(&mut self, ev: crate::RawEvent<'_, &str>) -> Result<(), Error> {
            self.0.push(ev.fields_line(ev.args));
            Ok(())
        }
        fn finish(self) -> Vec<String> {
            self.0
        }
    }

    /// The events and top-level members of a read, or its error.
    fn sink_outcome(res: Result<(crate::TopLevel, Vec<String>), Error>) -> String {
        match res {
            Ok((top, lines)) => format!("{:?}\n{}", top, lines.join("\n")),
            Err(e) => format!("error {e} / {e:?}"),
        }
    }

    /// Appends a piece's lines to `lines` with their event indices counted from `base`.
    fn rebase_lines(lines: &mut Vec<String>, piece: Vec<String>, base: usize) {
        for line in piece {
            let (index, rest) = line.split_once(' ').expect("an index first");
            let index: usize = index.parse().expect("a number");
            lines.push(format!("{} {rest}", index + base));
        }
    }

    /// A chunked read through [`crate::EventSink`], with the pieces' indices made true.
    fn read_chunked(
        source: Source<'_, impl Read + Send>,
        path: &Path,
        threads: usize,
        chunk_bytes: usize,
    ) -> String {
        let mut lines: Vec<String> = Vec::new();
        let res = crate::raw::read_events_in_chunks(
            source,
            path,
            threads,
            chunk_bytes,
            || Lines(Vec::new()),
            |piece, base| {
                rebase_lines(&mut lines, piece, base);
                Ok(())
            },
        );
        sink_outcome(res.map(|top| (top, lines)))
    }

    /// The same events from the streaming splitter and serde_json alone.
    fn read_serially(text: &[u8], path: &Path) -> String {
        let mut lines = Vec::new();
        let res = crate::read_raw_events(text, path, |ev| {
            lines.push(ev.fields_line(ev.args.map(RawValue::get)));
            Ok(())
        });
        sink_outcome(res.map(|top| (top, lines)))
    }

    #[test]
    fn a_chunked_read_through_sinks_equals_the_streaming_read_on_every_fixture() {
        let mut events = 0;
        for (path, text) in &fixtures() {
            let expect = read_serially(text, path);
            events += expect.lines().count();
            for chunk_bytes in [1, 7, 64, 4096, 1 << 20] {
                for threads in [1, 2] {
                    for (how, source) in sources(text) {
                        let got = read_chunked(source, path, threads, chunk_bytes);
                        assert_eq!(
                            got,
                            expect,
                            "{}: {chunk_bytes}-byte chunks, {threads} threads, {how}",
                            path.display()
                        );
                    }
                }
            }
        }
        assert!(events > 300, "{events} lines");
    }

    #[test]
    fn the_place_of_trace_events_among_the_top_level_members_is_kept() {
        let path = Path::new("members.json");
        let ev = r#"{"ph":"X","name":"k","ts":1,"dur":2,"pid":1,"tid":1}"#;
        let events = vec![ev; 30].join(",");
        let cases = [
            (
                format!(r#"{{"a":1,"b":{{"c":[1]}},"traceEvents":[{events}],"d":"x"}}"#),
                2,
            ),
            (format!(r#"{{"traceEvents":[{events}],"a":1,"b":2}}"#), 0),
            (r#"{"a":"]},{","traceEvents":[]}"#.to_owned(), 1),
            (format!("[{events}]"), 0),
        ];
        for (text, before) in &cases {
            let serial = crate::read_raw_events(text.as_bytes(), path, |_| Ok(())).unwrap();
            assert_eq!(serial.events_member, *before, "{text}");
            for chunk_bytes in [1, 7, 64, 1 << 20] {
                for (how, source) in sources(text.as_bytes()) {
                    let top = crate::raw::read_events_in_chunks(
                        source,
                        path,
                        2,
                        chunk_bytes,
                        || Lines(Vec::new()),
                        |_, _| Ok(()),
                    )
                    .unwrap();
                    assert_eq!(
                        (top.events_member, top.members.len()),
                        (*before, serial.members.len()),
                        "{text}: {chunk_bytes}-byte chunks, {how}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_chunked_read_through_sinks_equals_the_streaming_read_on_real_traces() {
        let Some(dir) = test_support::traces_dir(
            "a_chunked_read_through_sinks_equals_the_streaming_read_on_real_traces",
        ) else {
            return;
        };
        let files = test_support::json_files(&dir);
        assert!(files.len() >= 70, "{} files", files.len());
        let mut compared = 0;
        for path in &files {
            // A truncated gzip fails while inflating: both reads are of what it inflates to.
            let mut text = Vec::new();
            let mut input = crate::open(path).unwrap_or_else(|e| panic!("{e}"));
            let _ = input.read_to_end(&mut text);
            let expect = read_serially(&text, path);
            let got = read_chunked(Source::Read(&text[..]), path, 2, CHUNK_BYTES);
            assert!(got == expect, "{}", path.display());
            // The file itself, mapped when it is plain JSON.
            let mut lines: Vec<String> = Vec::new();
            let from_file = crate::read_file_events_chunked(
                path,
                2,
                || Lines(Vec::new()),
                |piece, base| {
                    rebase_lines(&mut lines, piece, base);
                    Ok(())
                },
            );
            assert!(
                sink_outcome(from_file.map(|top| (top, lines))) == expect,
                "{} read from the file",
                path.display()
            );
            compared += 1;
        }
        assert!(compared >= 70, "{compared} files");
    }

    #[test]
    fn every_fixture_gives_the_sequential_build_in_any_chunks() {
        for (path, text) in &fixtures() {
            check(text, path);
        }
    }

    /// Flow arrows counted a run at a time give the one-ended ids of the whole trace:
    /// ends in one run, in different runs, `t` before an end, ids repeated in another
    /// category, against the count and first index of the trace as written.
    #[test]
    fn flows_with_one_end_are_counted_across_chunks() {
        let path = Path::new("flows.json");
        // (phase, category, id) in file order, and which (category, id) have one end.
        let mut flows: Vec<(&str, &str, i64)> = Vec::new();
        let mut late = Vec::new();
        let mut one_end = Vec::new();
        for id in 0..300 {
            match id % 8 {
                0 => flows.extend([("s", "ac2g", id), ("f", "ac2g", id)]),
                1 => flows.push(("s", "ac2g", id)),
                2 => flows.push(("f", "ac2g", id)),
                3 => {
                    flows.push(("s", "ac2g", id));
                    late.push(("f", "ac2g", id));
                }
                4 => flows.push(("t", "ac2g", id)),
                5 => flows.extend([("s", "ac2g", id), ("s", "ac2g", id)]),
                6 => {
                    flows.push(("t", "ac2g", id));
                    late.push(("s", "ac2g", id));
                }
                _ => {
                    flows.extend([("s", "ac2g", id), ("f", "ac2g", id)]);
                    late.push(("s", "ac2g", id));
                }
            }
            if matches!(id % 8, 1 | 2 | 5 | 6) {
                one_end.push(("ac2g", id));
            }
            // The same id in another category: both ends, or only a start.
            flows.push(("s", "fwdbwd", id));
            if id % 3 == 0 {
                late.push(("f", "fwdbwd", id));
            } else {
                one_end.push(("fwdbwd", id));
            }
        }
        flows.extend(late);
        let events: Vec<String> = flows
            .iter()
            .map(|(ph, cat, id)| {
                format!(r#"{{"ph": "{ph}", "cat": "{cat}", "name": "x", "id": {id}, "pid": 1, "tid": 2, "ts": 5}}"#)
            })
            .collect();
        let first = flows
            .iter()
            .position(|&(_, cat, id)| one_end.contains(&(cat, id)))
            .expect("some flows have one end");
        let expect = (one_end.len() as u64, format!("flows.json: event {first}"));
        let text = trace(&events, "");
        for chunk_bytes in [1, 100, 4096, 1 << 20] {
            for threads in [1, 2] {
                let capture =
                    crate::build::load_source(Source::Read(&text[..]), path, threads, chunk_bytes)
                        .unwrap_or_else(|e| panic!("{e}"));
                let got = capture
                    .diagnostics()
                    .get("flow-one-end")
                    .map(|d| (d.count, d.first.clone()));
                assert_eq!(
                    got.as_ref(),
                    Some(&expect),
                    "{chunk_bytes}-byte chunks, {threads} threads"
                );
            }
        }
    }

    /// Kineto-like events in 4 KiB chunks: every speculative run but the first is kept
    /// (the first starts the document, which is the truth), and the strings holding `}, {`
    /// make some cuts fall inside events, whose runs are redone.
    #[test]
    fn speculation_holds_at_event_boundaries_and_is_redone_inside_strings() {
        let path = Path::new("speculation.json");
        let stats = |text: &[u8]| {
            let mut events = 0;
            let spares = crate::build::prepare::Spares::default();
            let new_sink = || crate::build::prepare::Prep::new(path, &spares);
            let source = Source::Read(text);
            let (top, stats) = prepare_chunks(source, path, 2, 4096, &new_sink, |run, _| {
                events += run.op_count();
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(top.event_count, events);
            stats
        };
        let plain: Vec<String> = (0..2000).map(|i| event(i, "", "k")).collect();
        let plain = stats(&trace(&plain, ""));
        assert!(plain.kept >= 50 && plain.redone == 0, "{plain:?}");
        let tricky: Vec<String> = (0..2000)
            .map(|i| event(i, &format!(", \"hlo_op\": \"{}\"", "}, {".repeat(300)), "k"))
            .collect();
        let tricky = stats(&trace(&tricky, ""));
        assert!(tricky.redone >= 50, "{tricky:?}");
    }

    /// A digest of a load's outcome: the capture's `Debug` text or the error's, hashed.
    fn digest(res: Result<trace_model::Capture, Error>) -> (u64, usize) {
        use std::hash::Hasher;
        let text = outcome(res);
        let mut h = std::collections::hash_map::DefaultHasher::new();
        h.write(text.as_bytes());
        (h.finish(), text.len())
    }

    /// On every shared trace, the chunked build with the fast event parser equals the
    /// streaming splitter's build with serde_json alone.
    #[test]
    fn fast_chunked_build_equals_the_serde_build_on_real_traces() {
        // A relative TRACEWISE_TRACES (CI's `../shared/traces`) is from the workspace root.
        let Some(dir) =
            test_support::traces_dir("fast_chunked_build_equals_the_serde_build_on_real_traces")
        else {
            return;
        };
        let files = test_support::json_files(&dir);
        assert!(files.len() >= 70, "{} files", files.len());
        let mut loaded = 0;
        for path in &files {
            let open = || crate::open(path).unwrap_or_else(|e| panic!("{e}"));
            let serde = digest(crate::build::load_with_stream_splitter(open(), path));
            let chunked = digest(crate::build::load_source(
                Source::Read(open()),
                path,
                2,
                CHUNK_BYTES,
            ));
            assert_eq!(chunked, serde, "{}", path.display());
            // From the file itself: mapped when it is plain JSON.
            let mapped = digest(crate::load_with(path, &crate::LoadConfig::with_threads(2)));
            assert_eq!(mapped, serde, "{} loaded from the file", path.display());
            loaded += 1;
        }
        assert!(loaded >= 70, "{loaded} files");
    }

    #[test]
    fn cuts_fall_after_an_object_and_a_comma() {
        assert_eq!(find_cut(b"{}, {}", 0), Some(4));
        assert_eq!(find_cut(b"{},{} ,\n {", 0), Some(9));
        assert_eq!(find_cut(b"[1, {}]", 0), None);
        assert_eq!(find_cut(b"{}, {}", 5), None);
        assert_eq!(find_cut(b"{} {}", 0), None);
    }
}
