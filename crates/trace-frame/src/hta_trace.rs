//! HTA's `generate_trace_with_counters`, `overlay_critical_path_analysis` and
//! `get_frequent_cuda_kernel_sequences` outputs, written beside trace-frame's other outputs
//! (the `timeline` crate's analyses read no file and write none).
//!
//! The trace is read once and written back in one pass: each event is kept as its JSON text
//! ([`serde_json::value::RawValue`]) and copied out as read unless the edit changes it, so
//! only the events an edit touches are parsed into values and serialised again.

use std::borrow::Cow;

use chrome_reader::json::skip_ws;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// The top-level values of some keys of an event, each as its JSON text (None where
/// absent); None where the event is not a JSON object ([`TraceEvent::top_fields`]).
pub type Found<'a, const N: usize> = Option<[Option<&'a str>; N]>;

/// One event of a trace being written back: its text as read, or a changed or added one.
#[derive(Debug)]
pub enum TraceEvent<'a> {
    /// Unchanged: written back byte for byte.
    Read(&'a RawValue),
    /// Changed or added.
    New(Box<RawValue>),
    /// Changed, as JSON text made here from checked parts ([`write_fields`]).
    Text(String),
}

impl TraceEvent<'_> {
    /// The event's JSON text.
    pub fn text(&self) -> &str {
        match self {
            TraceEvent::Read(r) => r.get(),
            TraceEvent::New(b) => b.get(),
            TraceEvent::Text(t) => t,
        }
    }

    /// The event as a value (parsed from its text).
    pub fn value(&self) -> Result<serde_json::Value, String> {
        serde_json::from_str(self.text()).map_err(|e| format!("an event is not JSON ({e})"))
    }

    /// A changed event from a value.
    pub fn from_value(v: &serde_json::Value) -> Result<TraceEvent<'static>, String> {
        serde_json::value::to_raw_value(v)
            .map(TraceEvent::New)
            .map_err(|e| format!("an event cannot be written ({e})"))
    }

    /// The top-level fields of the event in file order, each as its JSON text; None when
    /// the event is not a JSON object.
    pub fn fields(&self) -> Option<Vec<(Cow<'_, str>, &RawValue)>> {
        fields_of(self.text())
    }

    /// The string value of the top-level field `key` (None when absent or not a string).
    pub fn str_field(&self, key: &str) -> Option<Cow<'_, str>> {
        let [raw] = self.top_fields([key])?;
        json_str(raw?)
    }

    /// The JSON texts of the top-level values of `keys` (each None where absent; the last
    /// of a key given twice, as a parsed object keeps it); None when the event is not a JSON
    /// object. The event's text is JSON (read as JSON, or made here): its members are found
    /// by chrome-reader's walk of checked JSON (`chrome_reader::json`), which skips strings
    /// and nested values without checking them again and without an allocation; an event
    /// whose walk gives up (a key with an escape) is read as [`TraceEvent::fields`] reads it.
    pub fn top_fields<const N: usize>(&self, keys: [&str; N]) -> Found<'_, N> {
        top_fields_of(self.text(), keys)
    }
}

/// [`TraceEvent::fields`] of an event given as its text.
fn fields_of(text: &str) -> Option<Vec<(Cow<'_, str>, &RawValue)>> {
    let mut de = serde_json::Deserializer::from_str(text);
    de.deserialize_map(Fields(std::marker::PhantomData)).ok()
}

/// [`TraceEvent::top_fields`] of an event given as its text.
fn top_fields_of<'t, const N: usize>(text: &'t str, keys: [&str; N]) -> Found<'t, N> {
    use chrome_reader::json;
    let b = text.as_bytes();
    let mut found: [Option<(usize, usize)>; N] = [None; N];
    let walked = json::scan_members(b, skip_ws(b, 0), &mut |key, at| {
        let end = json::value_end(b, at)?;
        if let Some(k) = keys.iter().position(|k| k.as_bytes() == key) {
            found[k] = Some((at, end));
        }
        Some(end)
    });
    if walked.is_some_and(|end| skip_ws(b, end) == b.len()) {
        return Some(found.map(|f| f.map(|(at, end)| &text[at..end])));
    }
    let fields = fields_of(text)?;
    Some(keys.map(|key| {
        (fields.iter().rev())
            .find(|(k, _)| k == key)
            .map(|f| f.1.get())
    }))
}

/// The text of a JSON string value, unescaped only where it has escapes; None when `raw`
/// is not a string.
pub fn raw_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    json_str(raw.get())
}

/// [`raw_str`] of a value given as its JSON text (known to be one JSON value).
pub fn json_str(text: &str) -> Option<Cow<'_, str>> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        serde_json::from_str::<String>(text).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

/// An object's fields in order, values as raw text.
struct Fields<'a>(std::marker::PhantomData<&'a ()>);

impl<'de> Visitor<'de> for Fields<'de> {
    type Value = Vec<(Cow<'de, str>, &'de RawValue)>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
            out.push((k, map.next_value::<&'de RawValue>()?));
        }
        Ok(out)
    }
}

use chrome_reader::json::BorrowedKey as Key;

/// An object of fields written as JSON text (values as given, each valid JSON).
pub fn write_fields(
    fields: &[(Cow<'_, str>, Cow<'_, str>)],
) -> Result<TraceEvent<'static>, String> {
    let mut s = String::with_capacity(
        64 + fields
            .iter()
            .map(|(k, v)| k.len() + v.len() + 4)
            .sum::<usize>(),
    );
    s.push('{');
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&serde_json::to_string(k).map_err(|e| e.to_string())?);
        s.push(':');
        s.push_str(v);
    }
    s.push('}');
    Ok(TraceEvent::Text(s))
}

/// HTA's `generate_trace_with_counters` output: the trace `input` (a Chrome trace, gzip or
/// not) with `events` appended to its `traceEvents`, written to `output` through
/// output-file (gzip when the name ends in `.gz`, as HTA's name keeps the input's `.gz`).
/// The input's text is copied as it is, the events inserted before the list's closing
/// bracket (the list is found by one pass over the JSON, which is checked). An existing
/// output is replaced, as HTA replaces it, but never one of `inputs` (every trace file of
/// the set) nor anything inside them.
pub fn write_trace_with_events(
    input: &std::path::Path,
    output: &std::path::Path,
    events: Vec<Box<RawValue>>,
    inputs: &[&std::path::Path],
) -> Result<(), crate::Error> {
    let text = read_text(input)?;
    let top = top_fields(input, &text)?;
    let list = trace_events(input, &top)?;
    // Where the list's `]` is in the text (the raw value is a slice of it).
    let close = list.get().as_ptr() as usize - text.as_ptr() as usize + list.get().len() - 1;
    let empty = list.get()[1..list.get().len() - 1].trim().is_empty();
    let size = text.len() + events.iter().map(|e| e.get().len() + 1).sum::<usize>();
    write_out(output, inputs, size, |w| {
        w.write_all(&text.as_bytes()[..close])?;
        for (i, ev) in events.iter().enumerate() {
            if i > 0 || !empty {
                w.write_all(b",")?;
            }
            w.write_all(ev.get().as_bytes())?;
        }
        w.write_all(&text.as_bytes()[close..])
    })
}

/// The text of the trace `input` (gzip or not).
fn read_text(input: &std::path::Path) -> Result<String, crate::Error> {
    use std::io::Read;
    let mut bytes = Vec::with_capacity(text_size(input).saturating_add(1));
    chrome_reader::open(input)?
        .read_to_end(&mut bytes)
        .map_err(crate::Error::io(input, "cannot read the trace"))?;
    String::from_utf8(bytes).map_err(|e| not_json(input, &e))
}

/// The size of the text of `input` as far as it is cheap to know (the length of a plain
/// file; a gzip file's last four bytes, its text's size modulo 2³²), so that the text is
/// read into one allocation; 0 where unknown (a guess: the read grows as needed).
fn text_size(input: &std::path::Path) -> usize {
    use std::io::{Read, Seek, SeekFrom};
    let size = || -> std::io::Result<usize> {
        let mut f = std::fs::File::open(input)?;
        let len = f.metadata()?.len();
        let mut magic = [0u8; 2];
        if len < 18 || f.read_exact(&mut magic).is_err() || magic != [0x1f, 0x8b] {
            return Ok(len as usize);
        }
        let mut tail = [0u8; 4];
        f.seek(SeekFrom::End(-4))?;
        f.read_exact(&mut tail)?;
        Ok(u32::from_le_bytes(tail) as usize)
    };
    size().unwrap_or(0)
}

/// The error of a trace that is not JSON.
fn not_json(input: &std::path::Path, e: &dyn std::fmt::Display) -> crate::Error {
    crate::Error::Missing {
        path: input.to_path_buf(),
        what: format!("the trace is not JSON ({e})"),
    }
}

/// The top-level fields of the trace's text, in order (the whole text checked as JSON).
fn top_fields<'a>(
    input: &std::path::Path,
    text: &'a str,
) -> Result<Vec<(Cow<'a, str>, &'a RawValue)>, crate::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let top = de
        .deserialize_map(Fields(std::marker::PhantomData))
        .map_err(|e| not_json(input, &e))?;
    de.end().map_err(|e| not_json(input, &e))?;
    Ok(top)
}

/// The trace's `traceEvents` list (the last one where the key is given twice, as a parsed
/// value has it).
fn trace_events<'a>(
    input: &std::path::Path,
    top: &[(Cow<'a, str>, &'a RawValue)],
) -> Result<&'a RawValue, crate::Error> {
    match top.iter().rev().find(|(k, _)| k == "traceEvents") {
        Some((_, raw)) if raw.get().starts_with('[') => Ok(*raw),
        _ => Err(crate::Error::Missing {
            path: input.to_path_buf(),
            what: "the trace has no `traceEvents` list to write back".into(),
        }),
    }
}

/// Writes `output` through output-file (an earlier output replaced; never one of
/// `inputs`), gzip when its name ends in `.gz`, at the fastest level: these are whole
/// traces (tens of MB) a user opens in a viewer, and level 6 took several times as long
/// as everything else here. A gzip output is compressed on every core ([`gzip_parallel`])
/// from the whole text, made first in a buffer of `size_hint` bytes (its size, about).
fn write_out(
    output: &std::path::Path,
    inputs: &[&std::path::Path],
    size_hint: usize,
    write: impl Fn(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), crate::Error> {
    use std::io::Write;
    let rules = output_file::Rules {
        overwrite: true,
        inputs,
    };
    let gzip = output.extension().is_some_and(|e| e == "gz");
    output_file::write_with(output, &rules, |file| {
        let mut buffered = std::io::BufWriter::with_capacity(1 << 20, file);
        if gzip {
            // Sized once: growing a buffer of tens of MB by doubling copies it each time.
            let mut text = Vec::with_capacity(size_hint);
            write(&mut text)?;
            gzip_parallel(&text, &mut buffered)?;
        } else {
            write(&mut buffered)?;
        }
        buffered.flush()
    })?;
    Ok(())
}

/// The size of the pieces [`gzip_parallel`] compresses apart.
const GZIP_PIECE: usize = 4 << 20;

/// Writes `text` to `w` as one gzip member (one deflate stream, fastest level, the header
/// flate2's `GzEncoder` writes), its pieces of [`GZIP_PIECE`] bytes compressed in parallel
/// as pigz does: each piece is a deflate stream of its own, ended by a sync flush (byte
/// aligned, not final) except the last; their concatenation is one valid deflate stream
/// (no piece refers back into another), and the CRC-32 of the whole is the pieces' CRCs
/// combined. A piece compresses a little worse than it would with its predecessor as
/// dictionary (a few per cent on a 4 MiB piece).
fn gzip_parallel(text: &[u8], w: &mut dyn std::io::Write) -> std::io::Result<()> {
    use flate2::{Compress, Compression, Crc, FlushCompress, Status};
    use rayon::prelude::*;
    let pieces: Vec<&[u8]> = if text.is_empty() {
        vec![text]
    } else {
        text.chunks(GZIP_PIECE).collect()
    };
    let last = pieces.len() - 1;
    let compressed: Vec<std::io::Result<(Vec<u8>, Crc)>> = (pieces.par_iter().enumerate())
        .map(|(k, piece)| {
            let mut crc = Crc::new();
            crc.update(piece);
            let mut c = Compress::new(Compression::fast(), false);
            let flush = if k == last {
                FlushCompress::Finish
            } else {
                FlushCompress::Sync
            };
            let mut out = Vec::with_capacity(piece.len() / 4 + 4096);
            loop {
                if out.capacity() - out.len() < 4096 {
                    out.reserve(out.capacity().max(4096));
                }
                let read = c.total_in() as usize;
                let status = c
                    .compress_vec(&piece[read..], &mut out, flush)
                    .map_err(std::io::Error::other)?;
                let done = match status {
                    Status::StreamEnd => true,
                    // A flush is complete when it left room in the output.
                    _ => {
                        k != last
                            && c.total_in() as usize == piece.len()
                            && out.len() < out.capacity()
                    }
                };
                if done {
                    return Ok((out, crc));
                }
            }
        })
        .collect();
    // flate2's header at the fastest level: no name, no time, XFL 4, OS unknown (255).
    w.write_all(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 255])?;
    let mut crc = Crc::new();
    for piece in compressed {
        let (out, piece_crc) = piece?;
        w.write_all(&out)?;
        crc.combine(&piece_crc);
    }
    w.write_all(&crc.sum().to_le_bytes())?;
    w.write_all(&crc.amount().to_le_bytes())
}

/// The trace `input` (a Chrome trace, gzip or not) with its `traceEvents` list changed by
/// `edit`, written to `output` through output-file as [`write_trace_with_events`] writes
/// (HTA's `overlay_critical_path_analysis` and `generate_trace_with_counters`). The other
/// top-level fields and every event `edit` leaves as read are copied as read. An error of
/// `edit` names `input`; nothing is written then.
pub fn write_trace_edited(
    input: &std::path::Path,
    output: &std::path::Path,
    inputs: &[&std::path::Path],
    edit: impl FnOnce(&mut Vec<TraceEvent<'_>>) -> Result<(), String>,
) -> Result<(), crate::Error> {
    let text = read_text(input)?;
    // The events read on every core where the list is found ([`split_events`]), else (and
    // for the error of a text that is not JSON) in one pass over the text: the top-level
    // fields as read, and the events of the `traceEvents` list each as read.
    let rest: String;
    let fast = match split_events(&text) {
        Some((open, close, events)) => {
            rest = format!("{}[]{}", &text[..open], &text[close + 1..]);
            top_with_events(&rest, open, events)
        }
        None => None,
    };
    let mut top = match fast {
        Some(top) => top,
        None => {
            let mut de = serde_json::Deserializer::from_str(&text);
            let top = de
                .deserialize_map(TopFields(std::marker::PhantomData))
                .map_err(|e| not_json(input, &e))?;
            de.end().map_err(|e| not_json(input, &e))?;
            top
        }
    };
    // A key given twice: the last one counts (as in a parsed value).
    let mut seen = std::collections::HashSet::new();
    top.reverse();
    top.retain(|(k, _)| seen.insert(k.clone()));
    top.reverse();
    let events = top.iter_mut().find_map(|(k, v)| match v {
        TopValue::Events(list) if k == "traceEvents" => Some(std::mem::take(list)),
        _ => None,
    });
    let Some(events) = events else {
        return Err(crate::Error::Missing {
            path: input.to_path_buf(),
            what: "the trace has no `traceEvents` list to write back".into(),
        });
    };
    let mut list: Vec<TraceEvent<'_>> = events.into_iter().map(TraceEvent::Read).collect();
    edit(&mut list).map_err(|what| crate::Error::Missing {
        path: input.to_path_buf(),
        what,
    })?;
    write_out(output, inputs, text.len() + 1024, |w| {
        w.write_all(b"{")?;
        for (i, (k, v)) in top.iter().enumerate() {
            if i > 0 {
                w.write_all(b",")?;
            }
            serde_json::to_writer(&mut *w, k)?;
            w.write_all(b":")?;
            match v {
                TopValue::Raw(raw) => w.write_all(raw.get().as_bytes())?,
                // Refused before anything is written.
                TopValue::NotList => {}
                TopValue::Events(_) => {
                    w.write_all(b"[")?;
                    for (j, ev) in list.iter().enumerate() {
                        if j > 0 {
                            w.write_all(b",")?;
                        }
                        w.write_all(ev.text().as_bytes())?;
                    }
                    w.write_all(b"]")?;
                }
            }
        }
        w.write_all(b"}")
    })
}

/// The smallest `traceEvents` list [`split_events`] splits between the cores.
const SPLIT_LIST: usize = 4 << 20;

/// The `traceEvents` list of `text` read on every core: (the position of its `[`, of its
/// `]`, its events as read), or None where the list is not found this way (the caller then
/// reads the text in one pass, which also gives the error of a text that is not JSON).
/// The list is the first `"traceEvents": [` of the text ([`top_with_events`] checks that
/// it is the top-level one); it is cut into pieces at what looks like a boundary between
/// two events (`}`, `,`, `{`), each piece read on a thread of its own, one event at a
/// time. A piece is used only when the piece before it ended on an event that starts
/// exactly where it starts: a cut inside a string or a nested value is passed over by the
/// piece before, which then reads on to the end of the list.
fn split_events(text: &str) -> Option<(usize, usize, Vec<&RawValue>)> {
    let b = text.as_bytes();
    let open = text
        .match_indices("\"traceEvents\"")
        .find_map(|(at, key)| {
            let mut p = skip_ws(b, at + key.len());
            (b.get(p) == Some(&b':')).then_some(())?;
            p = skip_ws(b, p + 1);
            (b.get(p) == Some(&b'[')).then_some(p)
        })?;
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    let pieces = if b.len() - open < SPLIT_LIST {
        1
    } else {
        threads
    };
    split_events_in(text, open, pieces)
}

/// [`split_events`] with the list at `open` cut into (at most) `pieces` pieces.
fn split_events_in(
    text: &str,
    open: usize,
    pieces: usize,
) -> Option<(usize, usize, Vec<&RawValue>)> {
    let b = text.as_bytes();
    let mut starts = vec![open + 1];
    for k in 1..pieces {
        let from = open + (b.len() - open) * k / pieces;
        if let Some(at) = event_start_after(b, from)
            && at > *starts.last().expect("the first start is there")
        {
            starts.push(at);
        }
    }
    let read = |k: usize| read_events(text, starts[k], k == 0, starts.get(k + 1).copied());
    let results: Vec<Option<Read<'_>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..starts.len())
            .map(|k| s.spawn(move || read(k)))
            .collect();
        let first = read(0);
        std::iter::once(first)
            .chain(handles.into_iter().map(|h| h.join().ok().flatten()))
            .collect()
    });
    let mut events = Vec::new();
    for res in results {
        match res? {
            Read::Stopped(part) => events.extend(part),
            Read::Closed(part, close) => {
                events.extend(part);
                return Some((open, close, events));
            }
        }
    }
    None
}

/// What [`read_events`] read: the events up to the next piece's start, or up to the
/// list's `]` (at the position given).
enum Read<'a> {
    Stopped(Vec<&'a RawValue>),
    Closed(Vec<&'a RawValue>, usize),
}

/// The events of a `traceEvents` list from `p` (the list's first value where `first`,
/// else an event that follows a comma), each read alone, until an event would start at
/// `stop` or the list closes; None where the text there is not a list of JSON values.
fn read_events(text: &str, mut p: usize, first: bool, mut stop: Option<usize>) -> Option<Read<'_>> {
    use serde::Deserialize;
    let b = text.as_bytes();
    let mut out = Vec::new();
    p = skip_ws(b, p);
    if first && b.get(p) == Some(&b']') {
        return Some(Read::Closed(out, p));
    }
    loop {
        if stop == Some(p) {
            return Some(Read::Stopped(out));
        }
        if stop.is_some_and(|s| p > s) {
            stop = None; // the cut was not between two events: read on to the end
        }
        let mut de = serde_json::Deserializer::from_str(&text[p..]);
        let ev = <&RawValue>::deserialize(&mut de).ok()?;
        out.push(ev);
        p = skip_ws(
            b,
            ev.get().as_ptr() as usize - text.as_ptr() as usize + ev.get().len(),
        );
        match b.get(p) {
            Some(b',') => p = skip_ws(b, p + 1),
            Some(b']') => return Some(Read::Closed(out, p)),
            _ => return None,
        }
    }
}

/// The position of the first `{` at or after `from` that follows `}` and `,` (with JSON
/// whitespace between): the start of an event, unless inside a string (a guess that
/// [`split_events`] checks).
fn event_start_after(b: &[u8], from: usize) -> Option<usize> {
    let end = b.len().min(from + (1 << 20));
    (from..end).find(|&at| {
        if b[at] != b'{' {
            return false;
        }
        let before = |mut p: usize| {
            while p > 0 && matches!(b[p - 1], b' ' | b'\n' | b'\r' | b'\t') {
                p -= 1;
            }
            p.checked_sub(1)
        };
        before(at).is_some_and(|c| b[c] == b',' && before(c).is_some_and(|e| b[e] == b'}'))
    })
}

/// The top-level fields of `rest` (the trace's text with the events of its list at `open`
/// taken out: `[]` there), with `events` as the value of that `traceEvents`; None unless
/// `rest` is a JSON object whose last `traceEvents` key is the one at `open` (else the
/// list found was not the one a parsed value has).
fn top_with_events<'a>(
    rest: &'a str,
    open: usize,
    events: Vec<&'a RawValue>,
) -> Option<Vec<(Cow<'a, str>, TopValue<'a>)>> {
    let mut de = serde_json::Deserializer::from_str(rest);
    let fields = de.deserialize_map(Fields(std::marker::PhantomData)).ok()?;
    de.end().ok()?;
    let last = fields.iter().rposition(|(k, _)| k == "traceEvents")?;
    let at = fields[last].1.get().as_ptr() as usize - rest.as_ptr() as usize;
    if at != open || fields[last].1.get() != "[]" {
        return None;
    }
    let mut events = Some(events);
    let mut top = Vec::with_capacity(fields.len());
    for (k, (key, raw)) in fields.into_iter().enumerate() {
        let value = if k == last {
            TopValue::Events(events.take()?)
        } else {
            TopValue::Raw(raw)
        };
        top.push((key, value));
    }
    Some(top)
}

/// A top-level field's value in [`write_trace_edited`]: as read, or (`traceEvents`) its
/// events as read, or `NotList` for a `traceEvents` that is no list.
enum TopValue<'a> {
    Raw(&'a RawValue),
    Events(Vec<&'a RawValue>),
    NotList,
}

/// The top-level fields in order: `traceEvents` read as its list of raw events, the
/// others as read.
struct TopFields<'a>(std::marker::PhantomData<&'a ()>);

impl<'de> Visitor<'de> for TopFields<'de> {
    type Value = Vec<(Cow<'de, str>, TopValue<'de>)>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
            let value = if k == "traceEvents" {
                match map.next_value::<EventList<'de>>()? {
                    EventList(Some(list)) => TopValue::Events(list),
                    EventList(None) => TopValue::NotList,
                }
            } else {
                TopValue::Raw(map.next_value::<&'de RawValue>()?)
            };
            out.push((k, value));
        }
        Ok(out)
    }
}

/// A `traceEvents` value: its events as read when it is a list, else None (the value
/// read past).
struct EventList<'a>(Option<Vec<&'a RawValue>>);

impl<'de> serde::Deserialize<'de> for EventList<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ListVisitor;
        impl<'de> Visitor<'de> for ListVisitor {
            type Value = EventList<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(ev) = seq.next_element::<&'de RawValue>()? {
                    list.push(ev);
                }
                Ok(EventList(Some(list)))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(EventList(None))
            }

            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(EventList(None))
            }

            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(EventList(None))
            }

            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(EventList(None))
            }

            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(EventList(None))
            }

            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(EventList(None))
            }

            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(EventList(None))
            }
        }
        d.deserialize_any(ListVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The events [`split_events_in`] and [`top_with_events`] give for `text` cut into
    /// `pieces`, checked against the one-pass read ([`TopFields`]); None where the split
    /// read gives up (the writer then reads in one pass).
    fn check(text: &str, pieces: usize) -> Option<Vec<String>> {
        let mut de = serde_json::Deserializer::from_str(text);
        let one_pass = de.deserialize_map(TopFields(std::marker::PhantomData)).ok();
        let at = text.find("\"traceEvents\"")?;
        let open = at + text[at..].find('[')?;
        let (open, close, events) = split_events_in(text, open, pieces)?;
        let rest = format!("{}[]{}", &text[..open], &text[close + 1..]);
        let top = top_with_events(&rest, open, events)?;
        let texts = |top: &[(Cow<'_, str>, TopValue<'_>)]| -> Vec<String> {
            match top.iter().rev().find(|(k, _)| k == "traceEvents") {
                Some((_, TopValue::Events(list))) => {
                    list.iter().map(|e| e.get().to_owned()).collect()
                }
                _ => panic!("the last traceEvents is a list"),
            }
        };
        let split = texts(&top);
        assert_eq!(
            split,
            texts(&one_pass.expect("the one-pass read agrees that it is JSON"))
        );
        Some(split)
    }

    #[test]
    fn events_read_in_pieces_are_those_read_in_one_pass() {
        let ev = |k: usize| format!(r#"{{"ph":"X","name":"e{k}","args":{{"a":[1,{{"b":2}}]}}}}"#);
        let list: Vec<String> = (0..40).map(ev).collect();
        let text = format!(
            r#"{{"schemaVersion":1,"traceEvents":[{}],"displayTimeUnit":"ms"}}"#,
            list.join(",\n ")
        );
        for pieces in 1..6 {
            assert_eq!(check(&text, pieces).unwrap(), list, "{pieces} pieces");
        }
        // Cuts that fall inside a string holding `},{` or inside nested objects: the piece
        // before reads past them.
        let tricky: Vec<String> = (0..30)
            .map(|k| {
                format!(r#"{{"name":"x}},{{y {k}","args":{{"l":[{{}},{{}},{{"c":"}} , {{"}}]}}}}"#)
            })
            .collect();
        let text = format!(r#"{{"traceEvents":[{}]}}"#, tricky.join(","));
        for pieces in 1..8 {
            assert_eq!(check(&text, pieces).unwrap(), tricky, "{pieces} pieces");
        }
        assert_eq!(
            check(r#"{"traceEvents":[ ]}"#, 3).unwrap(),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_list_that_is_not_the_top_level_one_is_left_to_the_one_pass_read() {
        // The first `"traceEvents": [` is nested; the top-level one comes later.
        let text = r#"{"meta":{"traceEvents":[{"a":1}]},"traceEvents":[{"b":2},{"c":3}]}"#;
        assert_eq!(check(text, 2), None);
        // Given twice at the top level: the last counts, as in a parsed value.
        let text = r#"{"traceEvents":[{"a":1}],"traceEvents":[{"b":2}]}"#;
        assert_eq!(check(text, 2), None);
        // Not JSON in the list: no split read (the one-pass read gives the error).
        assert!(split_events_in(r#"{"traceEvents":[{"a":1},{"b":}]}"#, 15, 2).is_none());
    }

    /// [`TraceEvent::top_fields`] of `text` for `keys`, checked against serde's reading of
    /// the same fields ([`TraceEvent::fields`], the last of a repeated key).
    fn top<const N: usize>(text: &str, keys: [&str; N]) -> Option<[Option<String>; N]> {
        let found = top_fields_of(text, keys).map(|f| f.map(|v| v.map(str::to_owned)));
        let by_serde = fields_of(text).map(|fields| {
            keys.map(|key| {
                (fields.iter().rev())
                    .find(|(k, _)| k == key)
                    .map(|f| f.1.get().to_owned())
            })
        });
        assert_eq!(found, by_serde, "{text}");
        found
    }

    #[test]
    fn top_level_fields_are_found_past_strings_and_nested_values() {
        let s = |v: &str| Some(v.to_owned());
        // Nested values holding the keys, brackets and quotes inside strings.
        let text = r#"{"args":{"ph":"B","l":[{"cat":"]}"},"\"{"]},"ph":"X","cat":"k\"e]}"}"#;
        assert_eq!(
            top(text, ["ph", "cat", "args"]).unwrap(),
            [
                s(r#""X""#),
                s(r#""k\"e]}""#),
                s(r#"{"ph":"B","l":[{"cat":"]}"},"\"{"]}"#)
            ]
        );
        // A key given twice: the last one counts, as serde's map keeps it.
        assert_eq!(
            top(r#"{"ph":"X","ts":1,"ph":"i"}"#, ["ph", "ts"]).unwrap(),
            [s(r#""i""#), s("1")]
        );
        // JSON whitespace everywhere, numbers, literals, an absent key.
        let text = "\t{ \"ts\" :\n-1.5e3 ,\r\"b\": true , \"n\":null,\"e\":[ ] }\n";
        assert_eq!(
            top(text, ["ts", "b", "n", "e", "dur"]).unwrap(),
            [s("-1.5e3"), s("true"), s("null"), s("[ ]"), None]
        );
        assert_eq!(top("{}", ["ph"]).unwrap(), [None]);
        assert_eq!(top(" { } ", ["ph"]).unwrap(), [None]);
        // Not an object.
        assert_eq!(top("[1,2]", ["ph"]), None);
        assert_eq!(top(r#""ph""#, ["ph"]), None);
        // A key with an escape is read by serde: `"p\u0068"` is `ph`.
        assert_eq!(
            top(r#"{"ph":"B","p\u0068":"X","c\"at":1}"#, ["ph", "c\"at"]).unwrap(),
            [s(r#""X""#), s("1")]
        );
        // A value whose string ends in an escaped backslash.
        assert_eq!(
            top(r#"{"name":"a\\","ph":"X"}"#, ["name", "ph"]).unwrap(),
            [s(r#""a\\""#), s(r#""X""#)]
        );
    }

    #[test]
    fn string_fields_are_unescaped_only_where_they_have_escapes() {
        let text = r#"{"name":"a\"b\u00e9","cat":"plain","ph":1,"args":{}}"#;
        let ev = TraceEvent::Read(serde_json::from_str(text).unwrap());
        assert_eq!(ev.str_field("name").as_deref(), Some("a\"b\u{e9}"));
        assert!(matches!(ev.str_field("cat"), Some(Cow::Borrowed("plain"))));
        assert_eq!(ev.str_field("ph"), None);
        assert_eq!(ev.str_field("args"), None);
        assert_eq!(ev.str_field("absent"), None);
        assert_eq!(json_str(r#""x""#).as_deref(), Some("x"));
        assert_eq!(json_str("12"), None);
    }

    #[test]
    fn a_gzip_written_in_pieces_is_one_member_that_inflates_to_the_text() {
        use std::io::Read;
        // Three pieces, the last a short one, of text that compresses.
        let text: Vec<u8> = (0..(2 * GZIP_PIECE + 12_345))
            .map(|k| b"{\"ph\":\"X\",\"ts\":12345},"[k % 22] ^ ((k / 4096) % 3) as u8)
            .collect();
        for text in [&text[..], b"", b"{}"] {
            let mut gz = Vec::new();
            gzip_parallel(text, &mut gz).unwrap();
            let mut member = flate2::read::GzDecoder::new(&gz[..]);
            let mut back = Vec::new();
            member.read_to_end(&mut back).unwrap();
            assert_eq!(back, text);
            // One member: nothing is left after it.
            let mut rest = Vec::new();
            member.into_inner().read_to_end(&mut rest).unwrap();
            assert!(rest.is_empty());
        }
    }
}
