//! HTA's `generate_trace_with_counters`, `overlay_critical_path_analysis` and
//! `get_frequent_cuda_kernel_sequences` outputs, written beside trace-frame's other outputs
//! (the `timeline` crate's analyses read no file and write none).
//!
//! The trace is read once and written back in one pass: each event is kept as its JSON text
//! ([`serde_json::value::RawValue`]) and copied out as read unless the edit changes it, so
//! only the events an edit touches are parsed into values and serialised again.

use std::borrow::Cow;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

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
        let mut de = serde_json::Deserializer::from_str(self.text());
        de.deserialize_map(Fields(std::marker::PhantomData)).ok()
    }

    /// The string value of the top-level field `key` (None when absent or not a string).
    pub fn str_field(&self, key: &str) -> Option<Cow<'_, str>> {
        let fields = self.fields()?;
        let raw = fields.iter().rev().find(|(k, _)| k == key)?.1;
        raw_str(raw)
    }
}

/// The text of a JSON string value, unescaped only where it has escapes; None when `raw`
/// is not a string.
pub fn raw_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    let t = raw.get();
    let inner = t.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        serde_json::from_str::<String>(t).ok().map(Cow::Owned)
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
    write_out(output, inputs, |w| {
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
    let mut bytes = Vec::new();
    chrome_reader::open(input)?
        .read_to_end(&mut bytes)
        .map_err(crate::Error::io(input, "cannot read the trace"))?;
    String::from_utf8(bytes).map_err(|e| not_json(input, &e))
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
/// as everything else here.
fn write_out(
    output: &std::path::Path,
    inputs: &[&std::path::Path],
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
            let mut enc = flate2::write::GzEncoder::new(buffered, flate2::Compression::fast());
            write(&mut enc)?;
            enc.finish()?.flush()
        } else {
            write(&mut buffered)?;
            buffered.flush()
        }
    })?;
    Ok(())
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
    // One pass over the text: the top-level fields as read, and the events of the
    // `traceEvents` list each as read (a raw value of the whole list and then its events
    // read from it was a second pass over the tens of MB of a large trace).
    let mut de = serde_json::Deserializer::from_str(&text);
    let mut top = de
        .deserialize_map(TopFields(std::marker::PhantomData))
        .map_err(|e| not_json(input, &e))?;
    de.end().map_err(|e| not_json(input, &e))?;
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
    write_out(output, inputs, |w| {
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
