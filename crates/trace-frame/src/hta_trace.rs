//! HTA's `generate_trace_with_counters`, `overlay_critical_path_analysis` and
//! `get_frequent_cuda_kernel_sequences` outputs, written beside trace-frame's other outputs
//! (the `timeline` crate's analyses read no file and write none).
//!
//! The trace is read once and written back in one pass: each event is kept as its JSON text
//! and copied out as read unless the edit changes it, so only the events an edit touches
//! are parsed into values and serialised again.

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
    Read {
        /// The event's text as read (checked as one JSON object by chrome-reader).
        text: &'a str,
        /// What the writer's `mark` said of the event as it was read
        /// ([`write_trace_edited`]).
        mark: u8,
    },
    /// Changed or added.
    New(Box<RawValue>),
    /// Changed, as JSON text made here from checked parts ([`write_fields`]).
    Text(String),
}

impl TraceEvent<'_> {
    /// The event's JSON text.
    pub fn text(&self) -> &str {
        match self {
            TraceEvent::Read { text, .. } => text,
            TraceEvent::New(b) => b.get(),
            TraceEvent::Text(t) => t,
        }
    }

    /// The mark the event was read with ([`write_trace_edited`]); None for a changed or
    /// added one.
    pub fn mark(&self) -> Option<u8> {
        match self {
            TraceEvent::Read { mark, .. } => Some(*mark),
            TraceEvent::New(_) | TraceEvent::Text(_) => None,
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
/// `edit`, written to `output` through output-file (an earlier output replaced, never one
/// of `inputs`; gzip at the fastest level when the name ends in `.gz`, as HTA's name keeps
/// the input's): HTA's `overlay_critical_path_analysis`,
/// `get_frequent_cuda_kernel_sequences` and `generate_trace_with_counters` (events
/// appended).
///
/// The trace is read as every reader here reads it (chrome-reader's chunks, parsed on
/// every core while the text is inflated, each event checked): `edit` gets each event of
/// the list as [`TraceEvent::Read`], its text as read, with the `mark` that `mark` gave
/// it from its parsed fields (what an edit would otherwise find by reading every event
/// again). The other top-level fields are copied as read, in their place around the list
/// (the last of a key given twice, as a parsed value has it); a bare array of events is
/// written back as one. An error of `edit` names `input`; nothing is written then.
pub fn write_trace_edited(
    input: &std::path::Path,
    output: &std::path::Path,
    inputs: &[&std::path::Path],
    mark: impl Fn(&chrome_reader::RawEvent<'_, &str>) -> u8 + Sync,
    edit: impl FnOnce(&mut Vec<TraceEvent<'_>>) -> Result<(), String>,
) -> Result<(), crate::Error> {
    let mut pieces: Vec<Piece> = Vec::new();
    let mut read = 0;
    let top = chrome_reader::read_file_events_chunked(
        input,
        chrome_reader::default_threads(),
        || PieceSink {
            mark: &mark,
            piece: Piece::default(),
        },
        |piece, base| {
            // The pieces come in file order, each starting where the last one ended.
            debug_assert_eq!(base, read);
            read += piece.events.len();
            pieces.push(piece);
            Ok(())
        },
    )?;
    let mut list: Vec<TraceEvent<'_>> = Vec::with_capacity(top.event_count);
    for piece in &pieces {
        let mut start = 0;
        for &(end, mark) in &piece.events {
            list.push(TraceEvent::Read {
                text: &piece.text[start..end],
                mark,
            });
            start = end;
        }
    }
    edit(&mut list).map_err(|what| crate::Error::Missing {
        path: input.to_path_buf(),
        what,
    })?;
    // The other members, each the last of its key; a `traceEvents` that is not the list
    // gives way to the list.
    let kept = |k: usize| {
        let key = &top.members[k].0;
        key != "traceEvents" && !top.members[k + 1..].iter().any(|(later, _)| later == key)
    };
    let members =
        |range: std::ops::Range<usize>| range.filter(|&k| kept(k)).map(|k| &top.members[k]);
    let size = (list.iter().map(|ev| ev.text().len() + 1))
        .chain(top.members.iter().map(|(k, v)| k.len() + v.get().len() + 4))
        .sum::<usize>();
    write_out(output, inputs, size + 1024, |w| {
        let write_list = |w: &mut dyn std::io::Write| -> std::io::Result<()> {
            w.write_all(b"[")?;
            for (j, ev) in list.iter().enumerate() {
                if j > 0 {
                    w.write_all(b",")?;
                }
                w.write_all(ev.text().as_bytes())?;
            }
            w.write_all(b"]")
        };
        if top.array_format {
            return write_list(w);
        }
        w.write_all(b"{")?;
        let mut first = true;
        let mut member = |w: &mut dyn std::io::Write, key: &str| -> std::io::Result<()> {
            if !std::mem::take(&mut first) {
                w.write_all(b",")?;
            }
            serde_json::to_writer(&mut *w, key)?;
            w.write_all(b":")
        };
        for (k, v) in members(0..top.events_member) {
            member(w, k)?;
            w.write_all(v.get().as_bytes())?;
        }
        member(w, "traceEvents")?;
        write_list(w)?;
        for (k, v) in members(top.events_member..top.members.len()) {
            member(w, k)?;
            w.write_all(v.get().as_bytes())?;
        }
        w.write_all(b"}")
    })
}

/// The events of one chunk of a trace read by [`write_trace_edited`]: their texts end to
/// end, and where each ends in `text` with its mark.
#[derive(Default)]
struct Piece {
    text: String,
    events: Vec<(usize, u8)>,
}

/// Collects a chunk's events into a [`Piece`] on the thread that parsed them.
struct PieceSink<'m, M> {
    mark: &'m M,
    piece: Piece,
}

impl<M: Fn(&chrome_reader::RawEvent<'_, &str>) -> u8 + Sync> chrome_reader::EventSink
    for PieceSink<'_, M>
{
    type Out = Piece;

    fn event(&mut self, ev: chrome_reader::RawEvent<'_, &str>) -> Result<(), chrome_reader::Error> {
        let mark = (self.mark)(&ev);
        self.piece.text.push_str(ev.json);
        self.piece.events.push((self.piece.text.len(), mark));
        Ok(())
    }

    fn finish(self) -> Piece {
        self.piece
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let ev = TraceEvent::Read { text, mark: 0 };
        assert_eq!(ev.str_field("name").as_deref(), Some("a\"b\u{e9}"));
        assert!(matches!(ev.str_field("cat"), Some(Cow::Borrowed("plain"))));
        assert_eq!(ev.str_field("ph"), None);
        assert_eq!(ev.str_field("args"), None);
        assert_eq!(ev.str_field("absent"), None);
        assert_eq!(json_str(r#""x""#).as_deref(), Some("x"));
        assert_eq!(json_str("12"), None);
    }

    /// `text` written to `dir/name` (gzip when the name ends in `.gz`), then written back
    /// by [`write_trace_edited`] with the complete events (`ph: X`) named `drop` dropped
    /// and the event at `change` replaced by `{"changed": k}`: the output's text.
    fn edited(
        dir: &std::path::Path,
        name: &str,
        text: &str,
        change: usize,
    ) -> Result<String, String> {
        use std::io::{Read, Write};
        let input = dir.join(name);
        let output = dir.join(format!("out-{name}"));
        let gzip = name.ends_with(".gz");
        // The test's own input, in its scratch directory (the writer's output goes through
        // output-file, whose rules the next test checks).
        let mut file = std::fs::File::create(&input).unwrap();
        if gzip {
            let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
            gz.write_all(text.as_bytes()).unwrap();
            gz.finish().unwrap();
        } else {
            file.write_all(text.as_bytes()).unwrap();
        }
        let mark = |ev: &chrome_reader::RawEvent<'_, &str>| {
            u8::from(ev.ph == "X" && ev.name.as_deref() == Some("drop"))
        };
        write_trace_edited(&input, &output, &[&input], mark, |list| {
            if let Some(ev) = list.get_mut(change) {
                *ev = TraceEvent::Text(format!(r#"{{"changed":{change}}}"#));
            }
            list.retain(|ev| ev.mark() != Some(1));
            Ok(())
        })
        .map_err(|e| e.to_string())?;
        let mut out = String::new();
        let file = std::fs::File::open(&output).unwrap();
        if gzip {
            flate2::read::GzDecoder::new(file)
                .read_to_string(&mut out)
                .unwrap();
        } else {
            std::io::BufReader::new(file)
                .read_to_string(&mut out)
                .unwrap();
        }
        Ok(out)
    }

    #[test]
    fn an_edited_trace_keeps_its_other_fields_in_place_and_its_events_as_read() {
        let dir = tempfile::tempdir().unwrap();
        let ev = |k: usize| {
            let name = if k.is_multiple_of(3) { "drop" } else { "keep" };
            format!(
                r#"{{"ph":"X", "name":"{name}","ts":{k},"dur":1,"pid":1,"tid":1,"args":{{"s":"}}, {{"}}}}"#
            )
        };
        let events: Vec<String> = (0..3000).map(ev).collect();
        let kept: Vec<String> = (0..3000)
            .map(|k| {
                if k == 4 {
                    r#"{"changed":4}"#.to_owned()
                } else {
                    ev(k)
                }
            })
            .filter(|e| !e.contains("\"drop\""))
            .collect();
        let list = events.join(",\n");
        let text = format!(
            "{{\"schemaVersion\": 1,\"a\":{{\"traceEvents\":[1]}},\"a\":2,\"traceEvents\": [{list}], \"z\":[]}}"
        );
        let want = format!(
            r#"{{"schemaVersion":1,"a":2,"traceEvents":[{}],"z":[]}}"#,
            kept.join(",")
        );
        for name in ["t.json", "t.json.gz"] {
            assert_eq!(edited(dir.path(), name, &text, 4).unwrap(), want, "{name}");
        }
        // A bare array of events is written back as one; an empty list stays empty.
        let bare = format!("[{list}]");
        assert_eq!(
            edited(dir.path(), "bare.json", &bare, 4).unwrap(),
            format!("[{}]", kept.join(","))
        );
        let empty = r#"{"traceEvents":[],"b":true}"#;
        assert_eq!(edited(dir.path(), "e.json", empty, 0).unwrap(), empty);
    }

    #[test]
    fn an_edited_trace_never_replaces_an_input_a_directory_or_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let text = r#"{"traceEvents":[{"ph":"X","name":"k","ts":1,"dur":1,"pid":1,"tid":1}]}"#;
        let input = dir.path().join("t.json");
        std::fs::write(&input, text).unwrap();
        let other = dir.path().join("other.json");
        std::fs::write(&other, "kept").unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&other, &link).unwrap();
        let inputs = [input.as_path(), other.as_path()];
        for output in [&input, &other, &sub, &link, &dir.path().join(".")] {
            let res = write_trace_edited(&input, output, &inputs, |_| 0, |_| Ok(()));
            assert!(res.is_err(), "{} was written", output.display());
        }
        assert_eq!(std::fs::read_to_string(&input).unwrap(), text);
        assert_eq!(std::fs::read_to_string(&other).unwrap(), "kept");
        assert!(sub.is_dir() && link.is_symlink());
        // An output of its own is written (and replaced, as HTA replaces it).
        let out = dir.path().join("out.json");
        for _ in 0..2 {
            write_trace_edited(&input, &out, &inputs, |_| 0, |_| Ok(())).unwrap();
        }
        assert_eq!(std::fs::read_to_string(&out).unwrap(), text);
    }

    #[test]
    fn a_trace_that_cannot_be_read_is_an_error_naming_it_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in [
            ("bad.json", r#"{"traceEvents":[{"ph":"X","ts":1},{"ph":}]}"#),
            ("none.json", r#"{"other":[]}"#),
            ("scalar.json", r#"{"traceEvents":[{"ph":"X"},3]}"#),
        ] {
            let err = edited(dir.path(), name, text, 0).unwrap_err();
            assert!(err.contains(name), "{err}");
            assert!(!dir.path().join(format!("out-{name}")).exists(), "{name}");
        }
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
