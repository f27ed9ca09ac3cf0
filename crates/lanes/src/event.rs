//! A trace held in memory for rewriting: each event keeps its exact JSON text and the
//! few fields the compaction reads; only events that change are re-serialized.

use std::borrow::Cow;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use chrome_reader::{Id, RawEvent};
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::Error;

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

/// Names kept only for metadata and GPU annotation events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Names {
    pub name: Option<Box<str>>,
    /// `args.name` of a metadata event, if it is a string.
    pub arg_name: Option<Box<str>>,
}

/// Where an event's JSON text lives: in the trace's [`Arena`] (the input's text, no
/// allocation per event), or in its own allocation once rewritten.
#[derive(Debug, Clone)]
pub(crate) enum Text {
    Arena(Span),
    Owned(Box<str>),
}

/// A piece of an [`Arena`]: chunk (16 bits), offset in the chunk (26 bits) and length
/// (22 bits) packed in one word, so that [`Text`] is no larger than a `Box<str>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span(u64);

const ARENA_CHUNK: usize = 1 << 26;
const MAX_SPAN_LEN: usize = (1 << 22) - 1;
const MAX_CHUNKS: usize = 1 << 16;

/// Append-only storage for event texts, in chunks of 64 MiB that never move.
#[derive(Debug, Clone, Default)]
pub(crate) struct Arena {
    chunks: Vec<String>,
}

impl Arena {
    /// Stores `text`, or `None` when it is too long for a span (it then gets its own box).
    pub fn push(&mut self, text: &str) -> Option<Span> {
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
        Some(Span(
            (chunk_index as u64) << 48 | (offset as u64) << 22 | text.len() as u64,
        ))
    }

    pub fn get(&self, span: Span) -> &str {
        let chunk = (span.0 >> 48) as usize;
        let offset = ((span.0 >> 22) & ((1 << 26) - 1)) as usize;
        let len = (span.0 & MAX_SPAN_LEN as u64) as usize;
        &self.chunks[chunk][offset..offset + len]
    }
}

impl Text {
    pub fn get<'a>(&'a self, arena: &'a Arena) -> &'a str {
        match self {
            Text::Arena(span) => arena.get(*span),
            Text::Owned(text) => text,
        }
    }

    pub fn store(text: &str, arena: &mut Arena) -> Text {
        match arena.push(text) {
            Some(span) => Text::Arena(span),
            None => Text::Owned(Box::from(text)),
        }
    }
}

/// One element of `traceEvents`.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    /// The event's JSON text: the input's text until the event is rewritten.
    pub text: Text,
    pub names: Option<Box<Names>>,
    pid: i64,
    tid: i64,
    ts: i64,
    dur: i64,
    pub kind: Kind,
    pub ph: Ph,
    /// `name == "cudaGraphLaunch"`.
    pub graph_launch: bool,
    /// The event has an `id` member.
    pub has_id: bool,
}

fn opt(v: i64) -> Option<i64> {
    (v != NONE).then_some(v)
}

fn unopt(v: Option<i64>) -> i64 {
    v.unwrap_or(NONE)
}

impl Event {
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
    /// `dur` in nanoseconds, when it is a number.
    pub fn dur(&self) -> Option<i64> {
        opt(self.dur)
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
        self.dur = dur;
    }
    pub fn name(&self) -> Option<&str> {
        self.names.as_ref().and_then(|n| n.name.as_deref())
    }
    pub fn arg_name(&self) -> Option<&str> {
        self.names.as_ref().and_then(|n| n.arg_name.as_deref())
    }

    /// Builds the record of an event read from a file.
    pub fn from_raw(ev: &RawEvent<'_>, arena: &mut Arena) -> Event {
        let cat = ev.cat.as_deref();
        let kind = match cat {
            Some("kernel" | "Kernel" | "gpu_memcpy" | "gpu_memset") => Kind::Slice,
            Some("ac2g") => Kind::Ac2g,
            Some("gpu_user_annotation") => Kind::GpuAnnotation,
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
                    let a: A = serde_json::from_str(a.get()).ok()?;
                    let raw = a.name?;
                    serde_json::from_str::<String>(raw.get()).ok()
                })
            } else {
                None
            };
            Some(Box::new(Names {
                name: ev.name.as_deref().map(Box::from),
                arg_name: arg_name.map(String::into_boxed_str),
            }))
        } else {
            None
        };
        let int = |id: &Option<Id<'_>>| match id {
            Some(Id::Int(v)) if *v != NONE => *v,
            _ => NONE,
        };
        Event {
            // Slices, flow endpoints and GPU annotations are the events the compaction
            // rewrites: they get their own allocation, freed when replaced, so that the
            // arena holds no dead text.
            text: match kind {
                Kind::Slice | Kind::Ac2g | Kind::GpuAnnotation => Text::Owned(Box::from(ev.json)),
                Kind::Other => Text::store(ev.json, arena),
            },
            names,
            pid: int(&ev.pid),
            tid: int(&ev.tid),
            ts: unopt(ev.ts.and_then(|n| n.micros_to_nanos())),
            dur: unopt(ev.dur.and_then(|n| n.micros_to_nanos())),
            kind,
            ph,
            graph_launch: ev.name.as_deref() == Some("cudaGraphLaunch"),
            has_id: ev.id.is_some(),
        }
    }

    /// Builds an event we generate, from its members in output order.
    pub fn generated(object: &Object, kind: Kind, ph: Ph, names: Option<Names>) -> Event {
        let get_i64 = |key: &str| {
            object
                .get(key)
                .and_then(|v| v.get().parse::<i64>().ok())
                .unwrap_or(NONE)
        };
        let get_ns = |key: &str| {
            object
                .get(key)
                .and_then(|v| chrome_reader::Number::from_text(v.get()).micros_to_nanos())
                .unwrap_or(NONE)
        };
        Event {
            text: Text::Owned(object.to_json().into_boxed_str()),
            names: names.map(Box::new),
            pid: get_i64("pid"),
            tid: get_i64("tid"),
            ts: get_ns("ts"),
            dur: get_ns("dur"),
            kind,
            ph,
            graph_launch: false,
            has_id: object.get("id").is_some(),
        }
    }
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
}

impl Trace {
    /// Reads a trace file (plain or gzip JSON).
    pub fn read_file(path: &Path) -> Result<Trace, Error> {
        let input = chrome_reader::open(path)?;
        Trace::read(input, path)
    }

    /// Reads a trace from decompressed JSON text; `path` names it in errors.
    pub fn read(input: impl Read + Send, path: &Path) -> Result<Trace, Error> {
        let mut events = Vec::new();
        let mut arena = Arena::default();
        let mut max_int_tid: Option<i64> = None;
        let top = chrome_reader::read_raw_events(input, path, |ev| {
            if let Some(Id::Int(t)) = ev.tid {
                max_int_tid = Some(max_int_tid.map_or(t, |m| m.max(t)));
            }
            events.push(Event::from_raw(&ev, &mut arena));
            Ok(())
        })?;
        Ok(Trace {
            source: path.to_path_buf(),
            members: top.members,
            events,
            arena,
            max_int_tid: max_int_tid.unwrap_or(0),
        })
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
    pub fn event_texts(&self) -> impl Iterator<Item = &str> {
        self.events.iter().map(|e| e.text.get(&self.arena))
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
    pub fn write_json(&self, out: &mut impl Write) -> std::io::Result<()> {
        out.write_all(b"{")?;
        for (key, value) in &self.members {
            write_json_string(out, key)?;
            out.write_all(b":")?;
            out.write_all(value.get().as_bytes())?;
            out.write_all(b",")?;
        }
        out.write_all(b"\"traceEvents\":[")?;
        for (i, ev) in self.events.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            out.write_all(ev.text.get(&self.arena).as_bytes())?;
        }
        out.write_all(b"]}")
    }
}

fn write_json_string(out: &mut impl Write, s: &str) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, s).map_err(std::io::Error::other)
}

/// A JSON object as its members in order, each value kept as raw text (borrowed from
/// the parsed text where possible), so that editing one member leaves every other byte
/// as it was.
#[derive(Debug, Clone, Default)]
pub(crate) struct Object<'a>(pub Vec<(Cow<'a, str>, Cow<'a, RawValue>)>);

/// An object key, borrowed unless it holds escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> Deserialize<'de> for Object<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Object<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Object<'de>, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(12));
                while let Some((k, v)) = map.next_entry::<Key<'de>, &'de RawValue>()? {
                    members.push((k.0, Cow::Borrowed(v)));
                }
                Ok(Object(members))
            }
        }
        d.deserialize_map(V)
    }
}

impl<'a> Object<'a> {
    pub fn parse(text: &'a str) -> Result<Object<'a>, serde_json::Error> {
        serde_json::from_str(text)
    }

    pub fn get(&self, key: &str) -> Option<&RawValue> {
        // The last duplicate wins, as in Python's json.
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_ref())
    }

    /// A member still borrowed from the parsed text (`None` if absent or replaced).
    pub fn get_borrowed(&self, key: &str) -> Option<&'a RawValue> {
        match self.0.iter().rev().find(|(k, _)| k == key)?.1 {
            Cow::Borrowed(v) => Some(v),
            Cow::Owned(_) => None,
        }
    }

    pub fn set(&mut self, key: &str, value: Box<RawValue>) {
        match self.0.iter_mut().rev().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = Cow::Owned(value),
            None => self
                .0
                .push((Cow::Owned(key.to_string()), Cow::Owned(value))),
        }
    }

    pub fn with(mut self, key: &str, value: Box<RawValue>) -> Object<'a> {
        self.0
            .push((Cow::Owned(key.to_string()), Cow::Owned(value)));
        self
    }

    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(
            2 + self
                .0
                .iter()
                .map(|(k, v)| k.len() + v.get().len() + 4)
                .sum::<usize>(),
        );
        out.push('{');
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_json_string(&mut out, k);
            out.push(':');
            out.push_str(v.get());
        }
        out.push('}');
        out
    }

    pub fn into_raw(self) -> Box<RawValue> {
        raw(self.to_json())
    }
}

fn push_json_string(out: &mut String, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&serde_json::to_string(s).expect("a str always serializes to JSON"));
    }
}

/// Wraps JSON text we produced ourselves.
pub(crate) fn raw(text: String) -> Box<RawValue> {
    RawValue::from_string(text).expect("text produced by this crate is valid JSON")
}

pub(crate) fn raw_i64(v: i64) -> Box<RawValue> {
    raw(v.to_string())
}

pub(crate) fn raw_str(s: &str) -> Box<RawValue> {
    let mut out = String::with_capacity(s.len() + 2);
    push_json_string(&mut out, s);
    raw(out)
}

/// Nanoseconds as a JSON number of microseconds, always with a fraction (`9.0`,
/// `10.001`), as Python writes the floats the reference computes.
pub(crate) fn raw_micros(ns: i64) -> Box<RawValue> {
    raw(micros_text(ns))
}

pub(crate) fn micros_text(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let abs = ns.unsigned_abs();
    let (int, frac) = (abs / 1000, abs % 1000);
    if frac == 0 {
        format!("{sign}{int}.0")
    } else {
        let frac = format!("{frac:03}");
        format!("{sign}{int}.{}", frac.trim_end_matches('0'))
    }
}

/// Rewrites the members of an event's JSON text.
pub(crate) fn rewrite(
    path: &Path,
    index: usize,
    text: &str,
    edit: impl FnOnce(&mut Object) -> Result<(), String>,
) -> Result<Text, Error> {
    let rewrite_err = |message: String| Error::Rewrite {
        path: path.to_path_buf(),
        index,
        message,
    };
    let mut object = Object::parse(text).map_err(|e| rewrite_err(e.to_string()))?;
    edit(&mut object).map_err(rewrite_err)?;
    Ok(Text::Owned(object.to_json().into_boxed_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arena_spans_round_trip() {
        assert_eq!(std::mem::size_of::<Text>(), 16);
        let mut arena = Arena::default();
        let a = arena.push("{\"a\":1}").expect("fits");
        let b = arena.push("").expect("fits");
        let c = arena.push("{}").expect("fits");
        assert_eq!(
            (arena.get(a), arena.get(b), arena.get(c)),
            ("{\"a\":1}", "", "{}")
        );
        let long = "x".repeat(MAX_SPAN_LEN + 1);
        assert!(arena.push(&long).is_none());
        assert!(matches!(Text::store(&long, &mut arena), Text::Owned(_)));
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
            out.get(&Arena::default()),
            r#"{"ph":"X","ts":1.50,"tid":1100,"args":{"a":1e3,"stream":7}}"#
        );
    }
}
