//! A trace held in memory for rewriting: each event keeps its exact JSON text and the
//! few fields the compaction reads; only events that change are re-serialized.

use output_file::FsError;
use std::borrow::Cow;
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};

use chrome_reader::{Id, RawEvent};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::Error;
use crate::json_object::write_json_string;
use piece::{Piece, PieceSink, PieceText, Reading};
use reread::{Digest, DigestRead};

mod piece;
mod reread;
pub(crate) use crate::json_object::{
    Object, micros_text, raw, raw_i64, raw_micros, raw_str, rewrite,
};

/// Sentinel for an absent integer field, to keep [`Event`] small.
const NONE: i64 = i64::MIN;

/// What the compaction needs to know about an event's category.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `kernel`, `Kernel`, `gpu_memcpy` or `gpu_memset`: a measured GPU slice.
    Slice,
    Ac2g,
    GpuAnnotation,
    Other,
}

/// The event phase, reduced to the ones the compaction distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ph {
    Complete,
    Metadata,
    Flow,
    Other,
}

/// Names (and `dur`) kept only for metadata and GPU annotation events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Names {
    pub name: Option<Box<str>>,
    /// `args.name` of a metadata event, if it is a string.
    pub arg_name: Option<Box<str>>,
    /// `dur` in nanoseconds ([`NONE`] when absent); a slice's is read from its text.
    pub dur: i64,
}

impl Names {
    pub fn new(name: Option<&str>, arg_name: Option<&str>) -> Names {
        Names {
            name: name.map(Box::from),
            arg_name: arg_name.map(Box::from),
            dur: NONE,
        }
    }
}

/// Where an event's JSON text lives, in 58 bits (the event keeps its flags beside it): a
/// span of the trace's [`Arena`] (the input's text, no allocation per event), one of the
/// arena's own texts (rewritten GPU annotations, texts too long for a span), one of its
/// splices or new tids (an input text whose `tid` changes, applied whenever the text is
/// read, so that the input's text is never held twice), or only the place of an input
/// text that is not held (the input event's index and length): written from a second
/// read of the file ([`Trace::read_file_for_compaction`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Text(u64);

const TAG_SHIFT: u32 = 55;
const TAG_SPAN: u64 = 0;
const TAG_OWNED: u64 = 1;
const TAG_SPLICE: u64 = 2;
const TAG_RETID: u64 = 3;
const TAG_INPUT: u64 = 4;
const TEXT_BITS: u32 = 58;
const INDEX_MASK: u64 = (1 << TAG_SHIFT) - 1;

/// A span's chunk (7 bits), offset in the chunk (26 bits) and length (22 bits), from the
/// top down. Beyond 4 GiB of text copied into chunks (after the pieces adopted whole, see
/// [`Arena::adopt`]), events get their own boxes.
const ARENA_CHUNK: usize = 1 << 26;
const MAX_SPAN_LEN: usize = (1 << 22) - 1;
const MAX_CHUNKS: usize = 1 << 7;
/// At most this many chunks are a read's pieces' own texts, taken as they are
/// ([`Arena::adopt`]); the other half of the chunk numbers is left for texts copied into
/// chunks of [`ARENA_CHUNK`] bytes.
const MAX_ADOPTED: usize = MAX_CHUNKS / 2;
/// An input place's event index (32 bits) sits above its length (22 bits, as a span's).
const INPUT_INDEX_SHIFT: u32 = OFFSET_SHIFT;
const _: () =
    assert!(INPUT_INDEX_SHIFT + 32 <= TAG_SHIFT && TAG_INPUT < 1 << (TEXT_BITS - TAG_SHIFT));
/// Where a span's offset starts: above the length bits.
const OFFSET_SHIFT: u32 = MAX_SPAN_LEN.count_ones();
/// Where a span's chunk index starts: above the offset bits.
const CHUNK_SHIFT: u32 = OFFSET_SHIFT + ARENA_CHUNK.trailing_zeros();
const OFFSET_MASK: u64 = ARENA_CHUNK as u64 - 1;
const _: () = assert!((MAX_SPAN_LEN + 1).is_power_of_two() && ARENA_CHUNK.is_power_of_two());
const _: () = assert!(CHUNK_SHIFT + MAX_CHUNKS.trailing_zeros() == TAG_SHIFT);

/// A measured slice's input text with its `tid` and `args.stream` values replaced, in 24
/// bytes.
#[derive(Debug, Clone, Copy)]
struct Splice {
    /// The input text (a span).
    span: Text,
    value: i64,
    /// The byte ranges (start, end, start, end) of the two values; every other byte is
    /// kept.
    ranges: [u16; 4],
}

/// An input text (a span) written anew with `tid` set to the value, as [`rewrite`] does
/// (a flow endpoint).
#[derive(Debug, Clone, Copy)]
struct Retid {
    span: Text,
    tid: i64,
}

/// Storage for event texts: the input's text appended in chunks of 64 MiB that never
/// move, the texts of rewritten events, and the edits of input texts.
#[derive(Debug, Clone, Default)]
pub(crate) struct Arena {
    chunks: Vec<String>,
    /// How many of `chunks` were adopted ([`Arena::adopt`]).
    adopted: usize,
    owned: Vec<Box<str>>,
    splices: Vec<Splice>,
    retids: Vec<Retid>,
}

impl Arena {
    /// Stores `text` in a chunk, or in its own box when it is too long for a span or
    /// the chunks are used up.
    pub fn store(&mut self, text: &str) -> Text {
        match self.push(text) {
            Some(text) => text,
            None => self.own(Box::from(text)),
        }
    }

    /// Stores `text` in its own box (for texts that are replaced later: the box is freed).
    pub fn own(&mut self, text: Box<str>) -> Text {
        self.owned.push(text);
        Text(TAG_OWNED << TAG_SHIFT | (self.owned.len() - 1) as u64)
    }

    /// `text` in place of `old`: in `old`'s box when it has one (which is freed), else in a
    /// new box.
    pub fn replace(&mut self, old: Text, text: String) -> Text {
        match old.tag() {
            TAG_OWNED => {
                self.owned[old.index()] = text.into_boxed_str();
                old
            }
            _ => self.own(text.into_boxed_str()),
        }
    }

    /// `text` with the byte ranges of its `tid` and `args.stream` values replaced by
    /// `value`; every other byte is kept.
    pub fn splice(&mut self, text: Text, ranges: [(u32, u32); 2], value: i64) -> Text {
        let [(a, b), (c, d)] = ranges;
        let short = [a, b, c, d].map(|x| u16::try_from(x).ok());
        match (text.tag(), short) {
            (TAG_SPAN, [Some(a), Some(b), Some(c), Some(d)]) => {
                self.splices.push(Splice {
                    span: text,
                    value,
                    ranges: [a, b, c, d],
                });
                Text(TAG_SPLICE << TAG_SHIFT | (self.splices.len() - 1) as u64)
            }
            _ => {
                let spliced = splice(&self.get(text), ranges, value);
                self.replace(text, spliced)
            }
        }
    }

    /// `text` (a JSON object) written anew with `tid` set to `tid`; the other members keep
    /// their text and order. (The compaction asks [`Arena::walks`] of many texts at once,
    /// on several threads, and calls [`Arena::set_tid_walked`].)
    #[cfg(test)]
    pub fn set_tid(&mut self, text: Text, tid: i64) -> Result<Text, serde_json::Error> {
        let walks = self.walks(text);
        self.set_tid_walked(text, tid, walks)
    }

    /// Appends `text` written anew with `tid` set to `tid`, as [`Arena::get`] gives
    /// [`Arena::set_tid`]'s result, where `text` is an input text (a span) whose members the
    /// scanner walks; `false`, with nothing appended, for any other text (which only
    /// [`Arena::set_tid_walked`] rewrites, after serde's check). Read-only, so the
    /// compaction asks it of many flow endpoints at once, on several threads, and stores
    /// the results: the writer then copies them, where it walked each text once more.
    pub fn push_retidded(&self, text: Text, tid: i64, out: &mut Vec<u8>) -> bool {
        text.tag() == TAG_SPAN
            && crate::json_object::push_walked_with_tid(self.span(text), tid, out)
    }

    /// Whether `text` is an input text (a span) whose members the scanner walks: one that
    /// [`Arena::set_tid`] takes as it is.
    #[cfg(test)]
    pub fn walks(&self, text: Text) -> bool {
        if text.tag() != TAG_SPAN {
            return false;
        }
        let bytes = self.span(text).as_bytes();
        let walked = chrome_reader::json::scan_members(bytes, 0, &mut |_, value| {
            chrome_reader::json::value_end(bytes, value)
        });
        walked == Some(bytes.len())
    }

    /// [`Arena::set_tid`], given [`Arena::walks`] of `text`.
    pub fn set_tid_walked(
        &mut self,
        text: Text,
        tid: i64,
        walks: bool,
    ) -> Result<Text, serde_json::Error> {
        if text.tag() == TAG_SPAN {
            // Checked now, written when the text is read. An input text is valid JSON
            // (the first read checked it), so an object whose members the scanner walks
            // is one serde parses; serde checks only the others (keys with escapes, or
            // not an object), which is most of the cost on the flow endpoints of a trace.
            if !walks {
                Object::parse(self.span(text))?;
            }
            self.retids.push(Retid { span: text, tid });
            return Ok(Text(
                TAG_RETID << TAG_SHIFT | (self.retids.len() - 1) as u64,
            ));
        }
        let current = self.get(text);
        let mut object = Object::parse(&current)?;
        object.set("tid", raw_i64(tid));
        let json = object.to_json();
        drop(current);
        Ok(self.replace(text, json))
    }

    /// The text; an input place's (not held: see [`Trace::write_json`]) is a broken
    /// invariant of the compaction, which reads only the texts it holds.
    pub fn get(&self, text: Text) -> Cow<'_, str> {
        match text.tag() {
            TAG_SPAN => Cow::Borrowed(self.span(text)),
            TAG_OWNED => Cow::Borrowed(&self.owned[text.index()]),
            TAG_SPLICE => {
                let Splice {
                    span,
                    value,
                    ranges,
                } = self.splices[text.index()];
                let [a, b, c, d] = ranges.map(u32::from);
                Cow::Owned(splice(self.span(span), [(a, b), (c, d)], value))
            }
            TAG_INPUT => panic!(
                "the compaction reads only texts it holds (kernels, flows, annotations), \
                 never an input event's that it left in the file"
            ),
            _ => {
                let Retid { span, tid } = self.retids[text.index()];
                Cow::Owned(crate::json_object::with_tid(self.span(span), tid))
            }
        }
    }

    /// Writes the text to `out`, as [`Arena::get`] gives it: an edited one through
    /// `scratch` (cleared first), without a `String` of its own.
    fn write(
        &self,
        text: Text,
        scratch: &mut Vec<u8>,
        out: &mut impl Write,
    ) -> std::io::Result<()> {
        scratch.clear();
        match text.tag() {
            TAG_SPAN => return out.write_all(self.span(text).as_bytes()),
            TAG_OWNED => return out.write_all(self.owned[text.index()].as_bytes()),
            TAG_SPLICE => {
                let Splice {
                    span,
                    value,
                    ranges,
                } = self.splices[text.index()];
                let [a, b, c, d] = ranges.map(u32::from);
                push_spliced(scratch, self.span(span), [(a, b), (c, d)], value);
            }
            // The broken invariant that `get` reports.
            TAG_INPUT => return out.write_all(self.get(text).as_bytes()),
            _ => {
                let Retid { span, tid } = self.retids[text.index()];
                crate::json_object::push_with_tid(self.span(span), tid, scratch);
            }
        }
        out.write_all(scratch)
    }

    /// Takes `texts` (a piece's texts, end to end) as a chunk of its own, without copying
    /// them; the index of that chunk, or `None` (`texts` is then handed back) when every
    /// offset in it would not fit a span or [`MAX_ADOPTED`] chunks were adopted already.
    /// Copying each piece's texts into the chunks was 22 MB of copies and 5.5k page faults
    /// on the main thread of a compaction of df_index_resolver.
    fn adopt(&mut self, texts: String) -> Result<usize, String> {
        let room = self.adopted < MAX_ADOPTED && self.chunks.len() < MAX_CHUNKS;
        if !room || texts.is_empty() || texts.capacity() > ARENA_CHUNK {
            return Err(texts);
        }
        self.adopted += 1;
        self.chunks.push(texts);
        Ok(self.chunks.len() - 1)
    }

    /// The span of `len` bytes at `offset` of chunk `chunk`, or `None` when it is too long
    /// for a span.
    fn span_at(&self, chunk: usize, offset: usize, len: usize) -> Option<Text> {
        debug_assert!(offset + len <= self.chunks[chunk].len() && offset < ARENA_CHUNK);
        let span = (chunk as u64) << CHUNK_SHIFT | (offset as u64) << OFFSET_SHIFT | len as u64;
        (len <= MAX_SPAN_LEN).then_some(Text(span))
    }

    /// Stores `text` in a chunk, or `None` when it is too long for a span or the chunks
    /// are used up.
    fn push(&mut self, text: &str) -> Option<Text> {
        if text.len() > MAX_SPAN_LEN {
            return None;
        }
        let fits = self
            .chunks
            .last()
            .is_some_and(|c| c.capacity() - c.len() >= text.len());
        if !fits {
            if self.chunks.len() == MAX_CHUNKS {
                return None;
            }
            self.chunks.push(String::with_capacity(ARENA_CHUNK));
        }
        let chunk_index = self.chunks.len() - 1;
        let chunk = self.chunks.last_mut().expect("a chunk was just ensured");
        let offset = chunk.len();
        chunk.push_str(text);
        Some(Text(
            (chunk_index as u64) << CHUNK_SHIFT
                | (offset as u64) << OFFSET_SHIFT
                | text.len() as u64,
        ))
    }

    /// The `len` bytes at `offset` of chunk `chunk`.
    fn span_text(&self, chunk: usize, offset: usize, len: usize) -> &str {
        &self.chunks[chunk][offset..offset + len]
    }

    fn span(&self, text: Text) -> &str {
        debug_assert_eq!(text.tag(), TAG_SPAN);
        let chunk = (text.0 >> CHUNK_SHIFT) as usize;
        let offset = ((text.0 >> OFFSET_SHIFT) & OFFSET_MASK) as usize;
        let len = (text.0 & MAX_SPAN_LEN as u64) as usize;
        &self.chunks[chunk][offset..offset + len]
    }
}

impl Text {
    /// The place of input event `index`, `len` bytes long, whose text is not held; `None`
    /// when it does not fit (the text is then held).
    fn input(index: usize, len: usize) -> Option<Text> {
        let index = u32::try_from(index).ok()?;
        (len <= MAX_SPAN_LEN).then(|| {
            Text(TAG_INPUT << TAG_SHIFT | u64::from(index) << INPUT_INDEX_SHIFT | len as u64)
        })
    }

    /// The input event's index and text length, for a text left in the file.
    fn input_place(self) -> Option<(usize, usize)> {
        (self.tag() == TAG_INPUT).then(|| {
            let index = (self.0 & INDEX_MASK) >> INPUT_INDEX_SHIFT;
            (index as usize, (self.0 & MAX_SPAN_LEN as u64) as usize)
        })
    }

    fn tag(self) -> u64 {
        self.0 >> TAG_SHIFT
    }

    fn index(self) -> usize {
        (self.0 & INDEX_MASK) as usize
    }

    pub fn get(self, arena: &Arena) -> Cow<'_, str> {
        arena.get(self)
    }
}

/// Replaces two disjoint byte ranges of `text` with `value`.
fn splice(text: &str, ranges: [(u32, u32); 2], value: i64) -> String {
    let mut out = Vec::with_capacity(text.len() + 40);
    push_spliced(&mut out, text, ranges, value);
    String::from_utf8(out).expect("a str with whole values replaced by digits is UTF-8")
}

/// [`splice`], appended to `out`.
fn push_spliced(out: &mut Vec<u8>, text: &str, ranges: [(u32, u32); 2], value: i64) {
    let mut digits = [0u8; 20];
    let value = crate::json_object::decimal(value, &mut digits);
    let [mut a, mut b] = ranges.map(|(s, e)| (s as usize, e as usize));
    if b.0 < a.0 {
        std::mem::swap(&mut a, &mut b);
    }
    let text = text.as_bytes();
    out.extend_from_slice(&text[..a.0]);
    out.extend_from_slice(value);
    out.extend_from_slice(&text[a.1..b.0]);
    out.extend_from_slice(value);
    out.extend_from_slice(&text[b.1..]);
}

/// One element of `traceEvents`, in 40 bytes (five million of them for a 1 GB trace).
#[derive(Debug, Clone)]
pub(crate) struct Event {
    /// The [`Text`] in the low 58 bits; the kind, phase, `graph_launch` and `has_id`
    /// flags in the high 6 bits.
    word: u64,
    pub names: Option<Box<Names>>,
    pid: i64,
    tid: i64,
    ts: i64,
}

const KIND_SHIFT: u32 = 58;
const PH_SHIFT: u32 = 60;
const GRAPH_LAUNCH_BIT: u64 = 1 << 62;
const HAS_ID_BIT: u64 = 1 << 63;
const TEXT_MASK: u64 = (1 << TEXT_BITS) - 1;
const _: () = assert!(TAG_SHIFT + 2 <= TEXT_BITS);

fn opt(v: i64) -> Option<i64> {
    (v != NONE).then_some(v)
}

fn unopt(v: Option<i64>) -> i64 {
    v.unwrap_or(NONE)
}

impl Event {
    fn new(text: Text, kind: Kind, ph: Ph, graph_launch: bool, has_id: bool) -> Event {
        let kind = match kind {
            Kind::Slice => 0,
            Kind::Ac2g => 1,
            Kind::GpuAnnotation => 2,
            Kind::Other => 3,
        };
        let ph = match ph {
            Ph::Complete => 0,
            Ph::Metadata => 1,
            Ph::Flow => 2,
            Ph::Other => 3,
        };
        let mut word = text.0 | kind << KIND_SHIFT | ph << PH_SHIFT;
        if graph_launch {
            word |= GRAPH_LAUNCH_BIT;
        }
        if has_id {
            word |= HAS_ID_BIT;
        }
        Event {
            word,
            names: None,
            pid: NONE,
            tid: NONE,
            ts: NONE,
        }
    }

    /// The event's JSON text: the input's text until the event is rewritten.
    pub fn text(&self) -> Text {
        Text(self.word & TEXT_MASK)
    }
    pub fn set_text(&mut self, text: Text) {
        self.word = self.word & !TEXT_MASK | text.0;
    }
    fn with_text(mut self, text: Text) -> Event {
        self.set_text(text);
        self
    }
    pub fn kind(&self) -> Kind {
        match (self.word >> KIND_SHIFT) & 3 {
            0 => Kind::Slice,
            1 => Kind::Ac2g,
            2 => Kind::GpuAnnotation,
            _ => Kind::Other,
        }
    }
    pub fn ph(&self) -> Ph {
        match (self.word >> PH_SHIFT) & 3 {
            0 => Ph::Complete,
            1 => Ph::Metadata,
            2 => Ph::Flow,
            _ => Ph::Other,
        }
    }
    /// `name == "cudaGraphLaunch"`.
    pub fn graph_launch(&self) -> bool {
        self.word & GRAPH_LAUNCH_BIT != 0
    }
    /// The event has an `id` member.
    pub fn has_id(&self) -> bool {
        self.word & HAS_ID_BIT != 0
    }
    /// `pid`, when it is a JSON integer.
    pub fn pid(&self) -> Option<i64> {
        opt(self.pid)
    }
    /// `tid`, when it is a JSON integer.
    pub fn tid(&self) -> Option<i64> {
        opt(self.tid)
    }
    /// `ts` in nanoseconds, when it is a number.
    pub fn ts(&self) -> Option<i64> {
        opt(self.ts)
    }
    /// `dur` in nanoseconds, when it is a number, for metadata and GPU annotations (a
    /// slice's is in its text).
    pub fn dur(&self) -> Option<i64> {
        self.names.as_ref().and_then(|n| opt(n.dur))
    }
    pub fn set_pid(&mut self, pid: i64) {
        self.pid = pid;
    }
    pub fn set_tid(&mut self, tid: i64) {
        self.tid = tid;
    }
    pub fn set_ts(&mut self, ts: i64) {
        self.ts = ts;
    }
    pub fn set_dur(&mut self, dur: i64) {
        if let Some(names) = self.names.as_mut() {
            names.dur = dur;
        }
    }
    pub fn name(&self) -> Option<&str> {
        self.names.as_ref().and_then(|n| n.name.as_deref())
    }
    pub fn arg_name(&self) -> Option<&str> {
        self.names.as_ref().and_then(|n| n.arg_name.as_deref())
    }

    /// Builds the record of an event read from a file, on a reading thread: its text has
    /// no place yet (see [`Reading::add`]), only what [`PieceText`] says to do with it.
    fn from_raw(ev: &RawEvent<'_, &str>, hold: Hold) -> (Event, PieceText) {
        let cat = ev.cat.as_deref();
        let kind = match cat {
            Some("ac2g") => Kind::Ac2g,
            Some("gpu_user_annotation") => Kind::GpuAnnotation,
            _ if is_gpu_slice(cat) => Kind::Slice,
            _ => Kind::Other,
        };
        let ph = match &*ev.ph {
            "X" => Ph::Complete,
            "M" => Ph::Metadata,
            "s" | "t" | "f" => Ph::Flow,
            _ => Ph::Other,
        };
        let names = if ph == Ph::Metadata || kind == Kind::GpuAnnotation {
            let arg_name = if ph == Ph::Metadata {
                ev.args.and_then(|a| {
                    #[derive(Deserialize)]
                    struct A {
                        name: Option<Box<RawValue>>,
                    }
                    let a: A = serde_json::from_str(a).ok()?;
                    let raw = a.name?;
                    serde_json::from_str::<String>(raw.get()).ok()
                })
            } else {
                None
            };
            Some(Box::new(Names {
                name: ev.name.as_deref().map(Box::from),
                arg_name: arg_name.map(String::into_boxed_str),
                dur: unopt(ev.dur.and_then(|n| n.micros_to_nanos())),
            }))
        } else {
            None
        };
        let int = |id: &Option<Id<'_>>| match id {
            Some(Id::Int(v)) if *v != NONE => *v,
            _ => NONE,
        };
        // GPU annotations are rewritten (some twice): they get their own box, replaced
        // in place. Slices and flow endpoints are patched, other events never change.
        // Other events are only written back: their texts may stay in the file.
        let len = ev.json.len();
        let text = match (kind, hold) {
            (Kind::GpuAnnotation, _) => PieceText::Own { len },
            (Kind::Other, Hold::Touched) if len <= MAX_SPAN_LEN => PieceText::Input { len },
            _ => PieceText::Held { len },
        };
        let graph_launch = ev.name.as_deref() == Some("cudaGraphLaunch");
        // The text is set when the piece is added to the trace.
        let mut event = Event::new(Text(0), kind, ph, graph_launch, ev.id.is_some());
        event.names = names;
        event.pid = int(&ev.pid);
        event.tid = int(&ev.tid);
        event.ts = unopt(ev.ts.and_then(|n| n.micros_to_nanos()));
        (event, text)
    }

    /// Builds an event we generate, from its members in output order.
    pub fn generated(
        object: &Object,
        kind: Kind,
        ph: Ph,
        names: Option<Names>,
        arena: &mut Arena,
    ) -> Event {
        let get_i64 = |key: &str| {
            object
                .get(key)
                .and_then(|v| v.get().parse::<i64>().ok())
                .unwrap_or(NONE)
        };
        let text = arena.store(&object.to_json());
        let mut event = Event::new(text, kind, ph, false, object.get("id").is_some());
        event.names = names.map(|mut n| {
            n.dur = object.get("dur").and_then(micros_to_nanos).unwrap_or(NONE);
            Box::new(n)
        });
        event.pid = get_i64("pid");
        event.tid = get_i64("tid");
        event.ts = object.get("ts").and_then(micros_to_nanos).unwrap_or(NONE);
        event
    }
}

/// Which input texts a trace holds in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hold {
    /// Every event's.
    All,
    /// Only those the compaction reads or rewrites (measured slices, flow endpoints, GPU
    /// annotations); the others are read again from the file when the trace is written.
    Touched,
}

/// Events being generated, with the arena their texts go to.
pub(crate) struct Generated<'a> {
    pub events: Vec<Event>,
    arena: &'a mut Arena,
}

impl<'a> Generated<'a> {
    pub fn new(arena: &'a mut Arena) -> Generated<'a> {
        Generated {
            events: Vec::new(),
            arena,
        }
    }

    pub fn push(&mut self, object: &Object, kind: Kind, ph: Ph, names: Option<Names>) {
        let event = Event::generated(object, kind, ph, names, self.arena);
        self.events.push(event);
    }
}

/// Whether an event's `cat` marks a measured GPU slice: a kernel, memcpy or memset.
pub(crate) fn is_gpu_slice(cat: Option<&str>) -> bool {
    matches!(cat, Some("kernel" | "Kernel" | "gpu_memcpy" | "gpu_memset"))
}

/// A `ts` or `dur` value in nanoseconds, as the reader takes it: a JSON number of
/// microseconds, or a string holding one.
pub(crate) fn micros_to_nanos(raw: &RawValue) -> Option<i64> {
    chrome_reader::Number::from_json(raw.get())?.micros_to_nanos()
}

/// A Chrome trace in memory: the top-level members other than `traceEvents`, in file
/// order, and the events.
///
/// Events that the compaction does not touch are written back byte for byte.
#[derive(Debug, Clone)]
pub struct Trace {
    /// The file the trace was read from (for error messages).
    pub(crate) source: PathBuf,
    pub(crate) members: Vec<(String, Box<RawValue>)>,
    pub(crate) events: Vec<Event>,
    /// The input text of the events.
    pub(crate) arena: Arena,
    /// Largest JSON-integer `tid` of the input (0 when none), for new lane numbers.
    pub(crate) max_int_tid: i64,
    /// Where the event texts left in the file (`source`) are, to be read again when the
    /// trace is written; `None` when every text is held.
    pub(crate) in_file: Option<InFile>,
}

/// What the first read of a file saw, for copying the texts it left there from a second
/// read: where each event starts, and the length and CRC-32 of the whole JSON text, which
/// must be the same then (so any change to the file is found, not only one that moves an
/// event).
#[derive(Debug, Clone)]
pub(crate) struct InFile {
    /// The byte offset of each input event in the JSON text, by event index.
    offsets: Vec<u64>,
    json_bytes: u64,
    crc: u32,
    /// The inflated text of a gzip input, kept in a scratch file by the first read, so
    /// that the second reads it there instead of inflating the input again; `None` for a
    /// plain input (read again as it is) or when the scratch file could not be written.
    spill: Option<std::sync::Arc<Spill>>,
}

/// A scratch file holding the inflated JSON text of a gzip input (see [`InFile`]). Its
/// name is removed as soon as it is made (the open file lives on, nameless), so nothing
/// is left behind however the process ends; where a name cannot be removed, the file goes
/// with its scratch directory.
#[derive(Debug)]
pub(crate) struct Spill {
    file: std::fs::File,
    _dir: Option<output_file::ScratchDir>,
}

impl Spill {
    /// A new scratch file and a writer onto it; `None` when it cannot be made.
    fn create() -> Option<(Spill, std::fs::File)> {
        const NAME: &str = "text.json";
        let dir = output_file::ScratchDir::create("compact-text").ok()?;
        let file = dir.create_file(NAME).ok()?;
        let writer = file.try_clone().ok()?;
        let dir = match dir.remove_file(NAME) {
            Ok(()) => None,
            Err(_) => Some(dir),
        };
        Some((Spill { file, _dir: dir }, writer))
    }

    /// The text from its start.
    fn open(&self) -> std::io::Result<std::fs::File> {
        use std::io::Seek;
        let mut file = self.file.try_clone()?;
        file.seek(std::io::SeekFrom::Start(0))?;
        Ok(file)
    }
}

impl Trace {
    /// Reads a trace file (plain or gzip JSON), holding every event's text.
    pub fn read_file(path: &Path) -> Result<Trace, Error> {
        Trace::read_input(open_input(path, Progress::Shown)?, path, Hold::All)
    }

    /// Reads a trace file to compact and write once: only the texts that
    /// [`compact_trace`](crate::compact_trace) reads or rewrites (measured slices, flow
    /// endpoints, GPU annotations) are held; the others, most of a trace, are read again
    /// by [`Trace::write_json`]: from the file itself when it is plain JSON, which fails if
    /// the file changed, and from a nameless scratch file of the inflated text when it is
    /// gzip, so that it is inflated once (or from the file again if that scratch file
    /// could not be written). The
    /// output is the same, byte for byte, as from [`Trace::read_file`]; peak memory drops
    /// by about the text left in the file. [`merge_pp_traces`](crate::merge_pp_traces)
    /// and [`Trace::event_texts`] need [`Trace::read_file`].
    pub fn read_file_for_compaction(path: &Path) -> Result<Trace, Error> {
        Trace::read_file_for_compaction_on(path, chrome_reader::default_threads())
    }

    /// [`Trace::read_file_for_compaction`] on `threads` reading threads.
    fn read_file_for_compaction_on(path: &Path, threads: usize) -> Result<Trace, Error> {
        let (input, gzip) = open_input_sniffed(path, Progress::Shown)?;
        // The text of a gzip input is kept in a scratch file as it is inflated, so that
        // the input is inflated once: a second inflate was a tenth of a compaction's
        // instructions. A plain input is read again from itself.
        let spill = if gzip { Spill::create() } else { None };
        Trace::read_input_spilled(input, path, Hold::Touched, spill, threads)
    }

    /// Reads a trace from decompressed JSON text; `path` names it in errors.
    pub fn read(input: impl Read + Send, path: &Path) -> Result<Trace, Error> {
        Trace::read_input(input, path, Hold::All)
    }

    fn read_input(input: impl Read + Send, path: &Path, hold: Hold) -> Result<Trace, Error> {
        Trace::read_input_spilled(input, path, hold, None, chrome_reader::default_threads())
    }

    fn read_input_spilled(
        input: impl Read + Send,
        path: &Path,
        hold: Hold,
        spill: Option<(Spill, std::fs::File)>,
        threads: usize,
    ) -> Result<Trace, Error> {
        // Each read (a few hundred KiB of inflated text) is written to the scratch file as
        // it is: through a `BufWriter` every byte was copied once more on the inflating
        // thread (32M instructions on df_index_resolver) for fewer, larger writes.
        let (spill, spill_file) = match spill {
            Some((spill, file)) => (Some(spill), Some(file)),
            None => (None, None),
        };
        let mut read = Reading {
            hold,
            events: Vec::new(),
            arena: Arena::default(),
            max_int_tid: None,
            offsets: Vec::new(),
            texts_in_file: false,
        };
        // While the text goes to the spill file its CRC-32 is not needed (see `Digest`).
        let mut digest = Digest {
            skip_crc: spill_file.is_some(),
            ..Digest::default()
        };
        let input = DigestRead {
            inner: input,
            digest: &mut digest,
            spill: spill_file,
        };
        // Why adding a piece failed: an error of ours, which the reader cannot carry.
        let mut stopped: Option<Error> = None;
        let new_sink = || PieceSink {
            hold,
            piece: Piece::default(),
        };
        // The index of a piece's first event is counted here, as its events are added:
        // the reader's own count is 0 for every piece it parses on the caller's thread
        // (one thread), where a text left in the file needs its event's true index.
        let top = chrome_reader::read_events_chunked(input, path, threads, new_sink, |piece, _| {
            read.add(piece, path).map_err(|e| {
                stopped = Some(e);
                chrome_reader::Error::NotATrace {
                    path: path.to_path_buf(),
                    reason: "reading the trace stopped".to_string(),
                }
            })
        });
        if let Some(e) = stopped {
            return Err(e);
        }
        let top = top?;
        let spilled = digest.spilled;
        if !spilled && digest.skip_crc {
            // The read ended before the end of the input: the text is read again from it,
            // and its CRC-32 comes from the spill file, which holds all that was read.
            let file = spill.as_ref().map(|s| &s.file);
            let res = file.map(|f| reread::crc_of_start(f, digest.bytes, &mut digest.crc));
            digest.crc_lost = !matches!(res, Some(Ok(())));
        }
        if digest.crc_lost && read.texts_in_file {
            return Err(Error::Io(FsError {
                path: path.to_path_buf(),
                action: "cannot keep the trace's text for writing it",
                source: std::io::Error::other("the scratch copy of its text failed"),
            }));
        }
        let in_file = read.texts_in_file.then(|| InFile {
            offsets: read.offsets,
            json_bytes: digest.bytes,
            crc: digest.crc.finalize(),
            spill: spill.filter(|_| spilled).map(std::sync::Arc::new),
        });
        Ok(Trace {
            source: path.to_path_buf(),
            members: top.members,
            events: read.events,
            arena: read.arena,
            max_int_tid: read.max_int_tid.unwrap_or(0),
            in_file,
        })
    }

    /// Whether some event texts are in the file only (see
    /// [`Trace::read_file_for_compaction`]).
    pub(crate) fn texts_in_file(&self) -> bool {
        self.in_file.is_some()
    }

    /// The file the trace was read from.
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// Number of elements of `traceEvents`.
    pub fn event_count(&self) -> usize {
        self.events.len()
    }

    /// The JSON text of each event, in output order.
    ///
    /// # Panics
    ///
    /// On a trace from [`Trace::read_file_for_compaction`], whose texts are partly in the
    /// file: [`Trace::write_json`] writes them.
    pub fn event_texts(&self) -> impl Iterator<Item = Cow<'_, str>> {
        assert!(
            self.in_file.is_none(),
            "Trace::event_texts needs every text in memory (Trace::read_file, not read_file_for_compaction)"
        );
        self.events.iter().map(|e| self.arena.get(e.text()))
    }

    /// The raw JSON of a top-level member.
    pub fn member(&self, key: &str) -> Option<&RawValue> {
        self.members
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_ref())
    }

    /// Sets a top-level member, keeping its place if present, else appending it.
    pub(crate) fn set_member(&mut self, key: &str, value: Box<RawValue>) {
        match self.members.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => self.members.push((key.to_string(), value)),
        }
    }

    /// Writes the trace as compact JSON: the members, then `traceEvents`.
    ///
    /// The texts left in the file by [`Trace::read_file_for_compaction`] are read from it
    /// again; an error if it no longer holds the same events (an [`Error`] inside the
    /// I/O error, which [`write_trace`](crate::write_trace) returns as it is).
    pub fn write_json(&self, out: &mut impl Write) -> std::io::Result<()> {
        out.write_all(b"{")?;
        for (key, value) in &self.members {
            write_json_string(out, key)?;
            out.write_all(b":")?;
            out.write_all(value.get().as_bytes())?;
            out.write_all(b",")?;
        }
        out.write_all(b"\"traceEvents\":[")?;
        if let Some(in_file) = &self.in_file {
            self.write_events_from_file(in_file, out)?;
        } else {
            let mut scratch = Vec::new();
            for (i, ev) in self.events.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                self.arena.write(ev.text(), &mut scratch, out)?;
            }
        }
        out.write_all(b"]}")
    }
}

/// Whether a read reports its progress (a second read of the same file does not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Progress {
    Shown,
    Hidden,
}

/// The decompressed JSON text of a trace file, opened once (so that a pipe works too).
fn open_input(path: &Path, progress: Progress) -> Result<Box<dyn Read + Send>, Error> {
    open_input_sniffed(path, progress).map(|(input, _)| input)
}

/// [`open_input`], and whether the file is gzip.
fn open_input_sniffed(
    path: &Path,
    progress: Progress,
) -> Result<(Box<dyn Read + Send>, bool), Error> {
    let io = |source| {
        Error::Io(FsError {
            path: path.to_path_buf(),
            action: "cannot open the trace",
            source,
        })
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let input: Box<dyn Read + Send> = match progress {
        Progress::Shown => {
            let size = file.metadata().map_or(0, |m| m.len());
            Box::new(chrome_reader::progress::track(path, size, file))
        }
        Progress::Hidden => Box::new(file),
    };
    let mut input = std::io::BufReader::with_capacity(1 << 16, input);
    // Gzip is inflated on the thread that reads: the chunk reader's own in the first read
    // (overlapped with parsing), the writing thread in the second. `chrome_reader::open`
    // would add a thread and its queue of 1 MiB chunks, which sits at the peak of a
    // compaction (its end of reading).
    if load::files::is_gzip(input.fill_buf().map_err(io)?) {
        return Ok((chrome_reader::inflate_capped(input), true));
    }
    Ok((Box::new(input), false))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace of `events` events (CPU ops, left in the file by a compaction read, and
    /// kernels, held), one a line as Kineto writes them.
    fn many_events(events: usize) -> String {
        let mut text = String::from("{\"schemaVersion\": 1,\n\"traceEvents\": [\n");
        for i in 0..events {
            if i > 0 {
                text.push_str(",\n");
            }
            let (cat, tid) = if i % 5 == 0 {
                ("kernel", 7)
            } else {
                ("cpu_op", 1)
            };
            text.push_str(&format!(
                "  {{\"ph\": \"X\", \"cat\": \"{cat}\", \"name\": \"op_{}\", \"pid\": 1, \
                 \"tid\": {tid}, \"ts\": {}, \"dur\": 3, \"args\": {{\"n\": {i}}}}}",
                i % 17,
                i * 10
            ));
        }
        text.push_str("\n]}\n");
        text
    }

    #[test]
    fn texts_left_in_the_file_are_written_back_on_one_thread_or_more() {
        // Several of the reader's chunks (1 MiB each), so that pieces after the first
        // must know their events' true indices.
        let text = many_events(40_000);
        assert!(text.len() > 4 << 20, "{} bytes", text.len());
        let dir = tempfile::tempdir().expect("a temporary directory");
        let plain = dir.path().join("t.json");
        std::fs::write(&plain, &text).expect("writing the test input");
        let gz = dir.path().join("t.json.gz");
        let mut w = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        w.write_all(text.as_bytes()).expect("writing to memory");
        std::fs::write(&gz, w.finish().expect("finishing to memory"))
            .expect("writing the test input");
        let written = |trace: &Trace| {
            let mut out = Vec::new();
            trace.write_json(&mut out).expect("writing to memory");
            out
        };
        let whole = written(&Trace::read_file(&plain).expect("a valid trace"));
        for path in [&plain, &gz] {
            for threads in [1, 2, 3] {
                let trace =
                    Trace::read_file_for_compaction_on(path, threads).expect("a valid trace");
                assert!(trace.texts_in_file(), "{}", path.display());
                assert!(
                    written(&trace) == whole,
                    "{}, {threads} threads",
                    path.display()
                );
            }
        }
    }

    #[test]
    fn arena_texts_round_trip() {
        assert_eq!(std::mem::size_of::<Event>(), 40);
        let mut arena = Arena::default();
        let a = arena.store("{\"a\":1}");
        let b = arena.store("");
        let c = arena.store("{}");
        assert_eq!(
            (arena.get(a), arena.get(b), arena.get(c)),
            ("{\"a\":1}".into(), "".into(), "{}".into())
        );
        let long = "x".repeat(MAX_SPAN_LEN + 1);
        assert!(arena.push(&long).is_none());
        let d = arena.store(&long);
        assert_eq!((d.tag(), arena.get(d).len()), (TAG_OWNED, long.len()));
        let e = arena.replace(d, "{}".to_string());
        assert_eq!((e, arena.get(e)), (d, "{}".into()));
        // An input place keeps its event index and length, and shares no tag.
        let place = Text::input(u32::MAX as usize, MAX_SPAN_LEN).expect("fits");
        assert_eq!(place.input_place(), Some((u32::MAX as usize, MAX_SPAN_LEN)));
        assert_eq!(Text::input(u32::MAX as usize + 1, 1), None);
        assert_eq!(Text::input(0, MAX_SPAN_LEN + 1), None);
        assert_eq!([a, d, e].map(|t| t.input_place()), [None; 3]);
        // Flags and text share a word.
        let mut ev = Event::new(place, Kind::GpuAnnotation, Ph::Flow, true, true);
        assert_eq!((ev.text(), ev.has_id()), (place, true));
        ev.set_text(a);
        assert_eq!(
            (
                ev.text(),
                ev.kind(),
                ev.ph(),
                ev.graph_launch(),
                ev.has_id()
            ),
            (a, Kind::GpuAnnotation, Ph::Flow, true, true)
        );
    }

    #[test]
    fn patches_read_as_rewritten_text() {
        let text = r#"{"ph": "X", "tid": 7, "args": {"stream": 7, "a": 1}}"#;
        let mut arena = Arena::default();
        let span = arena.store(text);
        let at = |i: Option<usize>| {
            let i = u32::try_from(i.expect("a 7")).expect("a short text");
            (i, i + 1)
        };
        let (tid_at, stream_at) = (at(text.find('7')), at(text.rfind('7')));
        let spliced = arena.splice(span, [stream_at, tid_at], 1100);
        assert_eq!(
            arena.get(spliced),
            r#"{"ph": "X", "tid": 1100, "args": {"stream": 1100, "a": 1}}"#
        );
        // `text` with its tid set by serde, as `set_tid` must write it.
        let with_tid = |text: &str, tid: i64| {
            rewrite(Path::new("t"), 0, text, |o| {
                o.set("tid", raw_i64(tid));
                Ok(())
            })
            .expect("an object")
        };
        let moved = arena.set_tid(span, 1001).expect("an object");
        assert_eq!(arena.get(moved), with_tid(text, 1001));
        // The same text where the compaction works it out ahead, appended to `out`.
        let mut out = b"before ".to_vec();
        assert!(arena.push_retidded(span, 1001, &mut out));
        assert_eq!(out, format!("before {}", with_tid(text, 1001)).into_bytes());
        // The input text is still there, unchanged.
        assert_eq!(arena.get(span), text);
        // A key with escapes is serde's to check, and a text that is no object fails.
        let escaped_text = r#"{"t\u0069d": 7, "ph": "f"}"#;
        let escaped = arena.store(escaped_text);
        let moved = arena.set_tid(escaped, 3).expect("an object");
        assert_eq!(arena.get(moved), with_tid(escaped_text, 3));
        // Neither it nor an edited text is worked out ahead.
        let mut out = Vec::new();
        assert!(!arena.push_retidded(escaped, 3, &mut out));
        assert!(!arena.push_retidded(moved, 3, &mut out));
        assert!(out.is_empty());
        for not_object in ["[1, 2]", "7"] {
            let span = arena.store(not_object);
            assert!(arena.set_tid(span, 3).is_err(), "{not_object}");
        }
        // The writer writes each kind of text as `get` gives it, through one buffer.
        let negative = arena.splice(span, [tid_at, stream_at], i64::MIN);
        let owned = arena.own(Box::from("{\"own\":1}"));
        let walked = arena.set_tid(span, 1001).expect("an object");
        let mut scratch = b"left over".to_vec();
        for text in [span, spliced, negative, walked, moved, escaped, owned] {
            let mut out = Vec::new();
            arena
                .write(text, &mut scratch, &mut out)
                .expect("writing to memory");
            assert_eq!(String::from_utf8(out).expect("UTF-8"), arena.get(text));
        }
        assert!(arena.get(negative).contains(&i64::MIN.to_string()));
    }

    #[test]
    fn micros_text_is_exact() {
        assert_eq!(micros_text(9000), "9.0");
        assert_eq!(micros_text(10_001), "10.001");
        assert_eq!(micros_text(10_500), "10.5");
        assert_eq!(micros_text(-1_250), "-1.25");
        assert_eq!(micros_text(0), "0.0");
    }

    #[test]
    fn rewrite_keeps_other_members_verbatim() {
        let text = r#"{"ph":"X","ts":1.50,"tid":7,"args":{"a":1e3,"stream":7}}"#;
        let out = rewrite(Path::new("t"), 0, text, |o| {
            o.set("tid", raw_i64(1100));
            Ok(())
        })
        .expect("valid object");
        assert_eq!(
            out,
            r#"{"ph":"X","ts":1.50,"tid":1100,"args":{"a":1e3,"stream":7}}"#
        );
    }
}
