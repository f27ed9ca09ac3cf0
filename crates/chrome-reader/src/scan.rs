//! A streaming splitter for Chrome trace JSON: finds each element of `traceEvents`
//! without building the whole document, so memory follows the events kept, not the text.
//!
//! The splitter only checks structure (brackets, strings); each event's text is then
//! parsed by serde_json, which checks the rest.

use std::io::Read;
use std::path::Path;

use serde_json::value::RawValue;

use crate::Error;

/// The top-level members of a trace object other than `traceEvents`, in file order,
/// each kept as its exact JSON text.
#[derive(Debug, Default, Clone)]
pub struct TopLevel {
    /// Top-level members other than `traceEvents`, in file order, as raw JSON.
    pub members: Vec<(String, Box<RawValue>)>,
    /// How many of `members` come before `traceEvents` in the file (where the list goes
    /// back when the document is written again); 0 in the array format.
    pub events_member: usize,
    /// True when the document is a bare JSON array of events (the Chrome "array format").
    pub array_format: bool,
    /// Number of elements of `traceEvents`.
    pub event_count: usize,
    /// Length of the JSON text in bytes.
    pub json_bytes: u64,
}

impl TopLevel {
    /// The raw JSON text of a top-level member, if present.
    pub fn get(&self, key: &str) -> Option<&RawValue> {
        self.members
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_ref())
    }
}

/// One element of `traceEvents`, as text, with its place in the file.
pub(crate) struct EventText<'a> {
    pub index: usize,
    pub offset: u64,
    pub text: &'a [u8],
}

/// One batch of the splitter: the texts of consecutive events, end to end, and where each
/// one is (`index`, byte `offset` in the file, `start..end` in `text`).
pub(crate) struct Batch {
    pub text: Vec<u8>,
    pub events: Vec<(usize, u64, usize, usize)>,
}

impl Batch {
    fn new() -> Self {
        Batch {
            text: Vec::with_capacity(BATCH_BYTES + 4096),
            events: Vec::new(),
        }
    }
}

/// About this many bytes of event text go into one batch.
const BATCH_BYTES: usize = 1 << 20;

/// Splits `input` into events, calling `on_event` for each one in file order.
///
/// Splitting runs on its own thread, handing batches of event texts to the caller's
/// thread, so that finding events and parsing them overlap (reading and inflating the
/// input overlap too, see `input.rs`).
pub(crate) fn split_events<R: Read + Send>(
    input: R,
    path: &Path,
    mut on_event: impl FnMut(EventText<'_>) -> Result<(), Error>,
) -> Result<TopLevel, Error> {
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(4);
        let splitter =
            scope.spawn(move || split_batches(input, path, |batch| tx.send(batch).is_ok()));
        let mut consumer_result = Ok(());
        'batches: for batch in rx.iter() {
            for &(index, offset, start, end) in &batch.events {
                let text = &batch.text[start..end];
                if let Err(e) = on_event(EventText {
                    index,
                    offset,
                    text,
                }) {
                    consumer_result = Err(e);
                    break 'batches;
                }
            }
        }
        drop(rx);
        let res = splitter.join().expect("the splitter thread does not panic");
        consumer_result?;
        res
    })
}

/// Splits `input` into batches on the calling thread, handing each full batch to `send`,
/// which returns false when the receiving side has stopped. The last, partial batch is
/// sent only when splitting succeeded.
fn split_batches<R: Read>(
    input: R,
    path: &Path,
    mut send: impl FnMut(Batch) -> bool,
) -> Result<TopLevel, Error> {
    let mut batch = Batch::new();
    let res = split_events_serial(input, path, |ev| {
        let start = batch.text.len();
        batch.text.extend_from_slice(ev.text);
        batch
            .events
            .push((ev.index, ev.offset, start, batch.text.len()));
        if batch.text.len() >= BATCH_BYTES {
            let full = std::mem::replace(&mut batch, Batch::new());
            if !send(full) {
                // The consumer stopped on an error of its own; it reports that one.
                return Err(Error::NotATrace {
                    path: path.to_path_buf(),
                    reason: "reading was abandoned".to_string(),
                });
            }
        }
        Ok(())
    });
    if res.is_ok() && !batch.events.is_empty() {
        send(batch);
    }
    res
}

/// Splits `input` into events on the calling thread.
pub(crate) fn split_events_serial<R: Read>(
    input: R,
    path: &Path,
    mut on_event: impl FnMut(EventText<'_>) -> Result<(), Error>,
) -> Result<TopLevel, Error> {
    let mut sc = Scanner::new(input, path);
    let mut top = TopLevel::default();
    sc.skip_bom()?;
    match sc.peek_non_ws("the start of the document")? {
        Some(b'{') => {
            sc.pos += 1;
            let mut seen_events = false;
            let mut first = true;
            loop {
                match sc.peek_non_ws("the top-level object")? {
                    Some(b'}') => {
                        sc.pos += 1;
                        break;
                    }
                    Some(b',') if !first => {
                        sc.pos += 1;
                        sc.peek_non_ws("the top-level object")?;
                    }
                    Some(_) if first => {}
                    Some(c) => {
                        return Err(
                            sc.json_error(format!("expected ',' or '}}', found {}", show(c)))
                        );
                    }
                    None => return Err(sc.truncated("the top-level object")),
                }
                first = false;
                let key = sc.key()?;
                if key == "traceEvents" && sc.peek_non_ws("traceEvents")? == Some(b'[') {
                    if seen_events {
                        return Err(sc.not_a_trace("two traceEvents members".to_string()));
                    }
                    seen_events = true;
                    top.events_member = top.members.len();
                    top.event_count = sc.events(&mut on_event)?;
                } else {
                    let value = sc.raw_value("a top-level member")?;
                    top.members.push((key, value));
                }
            }
            sc.expect_end()?;
            if !seen_events {
                return Err(
                    sc.not_a_trace("the JSON object has no \"traceEvents\" array".to_string())
                );
            }
        }
        Some(b'[') => {
            top.array_format = true;
            top.event_count = sc.events(&mut on_event)?;
            sc.expect_end()?;
        }
        Some(c) => {
            // An XSpace starts with field 1 (`planes`, length-delimited): tag byte 0x0a,
            // which the JSON whitespace skip has just passed over.
            let xspace_name = path.to_string_lossy().ends_with(".xplane.pb");
            if xspace_name
                || (sc.dropped == 0 && sc.buf[..sc.pos].starts_with(b"\n") && !c.is_ascii_graphic())
            {
                return Err(Error::OtherFormat {
                    path: path.to_path_buf(),
                    format: trace_model::Format::XPlane,
                });
            }
            return Err(sc.not_a_trace(format!(
                "expected a JSON object or array, found {} at byte {}",
                show(c),
                sc.offset()
            )));
        }
        None => return Err(sc.not_a_trace("the file is empty".to_string())),
    }
    top.json_bytes = sc.offset();
    Ok(top)
}

/// The first top-level member named `key` of the trace object in `input`, when it comes
/// before `traceEvents`: only the text before the events is read. `Ok(None)` when the
/// member is not there before the events (or the document is not an object).
pub(crate) fn member_before_events<R: Read>(
    input: R,
    path: &Path,
    key: &str,
) -> Result<Option<Box<RawValue>>, Error> {
    // A small buffer, grown if a member needs it: the start of a trace is a few
    // kilobytes, and freeing a buffer as large as the event scanner's (mapped by glibc on
    // its own) raised glibc's threshold for that, which made the loads that follow copy
    // their growing vectors (0.6 % more instructions on df_index_resolver, callgrind).
    let mut sc = Scanner::with_capacity(input, path, 16 << 10);
    sc.skip_bom()?;
    if sc.peek_non_ws("the start of the document")? != Some(b'{') {
        return Ok(None);
    }
    sc.pos += 1;
    let mut first = true;
    loop {
        match sc.peek_non_ws("the top-level object")? {
            Some(b',') if !first => sc.pos += 1,
            Some(_) if first => {}
            // The end of the object, or text the loader would refuse: no member here.
            _ => return Ok(None),
        }
        first = false;
        let name = sc.key()?;
        if name == "traceEvents" {
            return Ok(None);
        }
        let value = sc.raw_value("a top-level member")?;
        if name == key {
            return Ok(Some(value));
        }
    }
}

pub(crate) fn show(c: u8) -> String {
    if c.is_ascii_graphic() {
        format!("'{}'", c as char)
    } else {
        format!("byte 0x{c:02x}")
    }
}

const CHUNK: usize = 1 << 20;

struct Scanner<'p, R> {
    reader: R,
    path: &'p Path,
    buf: Vec<u8>,
    /// Next unread byte in `buf`.
    pos: usize,
    /// End of valid data in `buf`.
    end: usize,
    /// Bytes dropped from the front of `buf` so far.
    dropped: u64,
    eof: bool,
}

impl<'p, R: Read> Scanner<'p, R> {
    fn new(reader: R, path: &'p Path) -> Self {
        Scanner::with_capacity(reader, path, CHUNK)
    }

    /// A scanner whose buffer starts at `bytes` (it grows as a value needs).
    fn with_capacity(reader: R, path: &'p Path, bytes: usize) -> Self {
        Scanner {
            reader,
            path,
            buf: vec![0; bytes],
            pos: 0,
            end: 0,
            dropped: 0,
            eof: false,
        }
    }

    fn offset(&self) -> u64 {
        self.dropped + self.pos as u64
    }

    /// Reads more input, keeping `buf[pos..end]`; returns false at end of input.
    /// Data before `pos` is dropped, so offsets relative to `pos` stay valid.
    fn fill(&mut self) -> Result<bool, Error> {
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.dropped += self.pos as u64;
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.end == self.buf.len() {
            let grown = self.buf.len() * 2;
            self.buf.resize(grown, 0);
        }
        loop {
            match self.reader.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(true);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(Error::Io {
                        path: self.path.to_path_buf(),
                        offset: self.dropped + self.end as u64,
                        source,
                    });
                }
            }
        }
    }

    fn skip_bom(&mut self) -> Result<(), Error> {
        while self.end - self.pos < 3 && self.fill()? {}
        if self.buf[self.pos..self.end].starts_with(b"\xEF\xBB\xBF") {
            self.pos += 3;
        }
        Ok(())
    }

    /// Skips whitespace and returns the next byte without consuming it.
    fn peek_non_ws(&mut self, _context: &'static str) -> Result<Option<u8>, Error> {
        loop {
            while self.pos < self.end {
                let c = self.buf[self.pos];
                if !matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
                    return Ok(Some(c));
                }
                self.pos += 1;
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    /// Length of the JSON value starting at `pos` (which must be its first byte).
    fn value_len(&mut self, context: &'static str) -> Result<usize, Error> {
        let mut i = 0usize;
        let first = loop {
            if self.pos < self.end {
                break self.buf[self.pos];
            }
            if !self.fill()? {
                return Err(self.truncated(context));
            }
        };
        match first {
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    // Outside strings: look for brackets and quotes.
                    while self.pos + i < self.end {
                        let c = self.buf[self.pos + i];
                        i += 1;
                        match c {
                            b'{' | b'[' => depth += 1,
                            b'}' | b']' => {
                                depth -= 1;
                                if depth == 0 {
                                    return Ok(i);
                                }
                            }
                            b'"' => i = self.string_end(i, context)?,
                            _ => {}
                        }
                    }
                    if !self.fill()? {
                        return Err(self.truncated(context));
                    }
                }
            }
            b'"' => self.string_end(1, context),
            _ => loop {
                while self.pos + i < self.end {
                    if matches!(
                        self.buf[self.pos + i],
                        b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t'
                    ) {
                        return Ok(i);
                    }
                    i += 1;
                }
                if !self.fill()? {
                    return Ok(i);
                }
            },
        }
    }

    /// Given `i` just past an opening quote (relative to `pos`), returns the index just past
    /// the closing quote.
    fn string_end(&mut self, mut i: usize, context: &'static str) -> Result<usize, Error> {
        loop {
            let hay = &self.buf[self.pos + i..self.end];
            match memchr::memchr2(b'"', b'\\', hay) {
                Some(k) if hay[k] == b'"' => return Ok(i + k + 1),
                Some(k) => {
                    // A backslash escapes the next byte, which may not be read yet.
                    i += k + 2;
                    while self.pos + i > self.end {
                        if !self.fill()? {
                            return Err(self.truncated(context));
                        }
                    }
                }
                None => {
                    i = self.end - self.pos;
                    if !self.fill()? {
                        return Err(self.truncated(context));
                    }
                }
            }
        }
    }

    fn key(&mut self) -> Result<String, Error> {
        if self.peek_non_ws("an object key")? != Some(b'"') {
            return Err(self.json_error("expected a string key".to_string()));
        }
        let len = self.value_len("an object key")?;
        let start = self.offset();
        let key: String = serde_json::from_slice(&self.buf[self.pos..self.pos + len])
            .map_err(|e| self.json_error_at(start, e))?;
        self.pos += len;
        match self.peek_non_ws("an object member")? {
            Some(b':') => {
                self.pos += 1;
                Ok(key)
            }
            Some(c) => Err(self.json_error(format!("expected ':', found {}", show(c)))),
            None => Err(self.truncated("an object member")),
        }
    }

    fn raw_value(&mut self, context: &'static str) -> Result<Box<RawValue>, Error> {
        if self.peek_non_ws(context)?.is_none() {
            return Err(self.truncated(context));
        }
        let len = self.value_len(context)?;
        let start = self.offset();
        let value: Box<RawValue> = serde_json::from_slice(&self.buf[self.pos..self.pos + len])
            .map_err(|e| self.json_error_at(start, e))?;
        self.pos += len;
        Ok(value)
    }

    /// Reads the events array (at its `[`), returns the number of events.
    fn events(
        &mut self,
        on_event: &mut impl FnMut(EventText<'_>) -> Result<(), Error>,
    ) -> Result<usize, Error> {
        self.pos += 1; // '['
        let mut index = 0usize;
        loop {
            match self.peek_non_ws("traceEvents")? {
                Some(b']') => {
                    self.pos += 1;
                    return Ok(index);
                }
                Some(b',') if index > 0 => {
                    self.pos += 1;
                    if self.peek_non_ws("traceEvents")?.is_none() {
                        return Err(self.truncated("traceEvents"));
                    }
                }
                Some(_) if index == 0 => {}
                Some(c) => {
                    return Err(self.json_error(format!(
                        "expected ',' or ']' after event {}, found {}",
                        index - 1,
                        show(c)
                    )));
                }
                None => return Err(self.truncated("traceEvents")),
            }
            let len = self.value_len("an event")?;
            let offset = self.offset();
            on_event(EventText {
                index,
                offset,
                text: &self.buf[self.pos..self.pos + len],
            })?;
            self.pos += len;
            index += 1;
        }
    }

    fn expect_end(&mut self) -> Result<(), Error> {
        match self.peek_non_ws("the end of the document")? {
            None => Ok(()),
            Some(c) => Err(self.json_error(format!(
                "unexpected {} after the end of the document",
                show(c)
            ))),
        }
    }

    fn truncated(&self, context: &'static str) -> Error {
        Error::Truncated {
            path: self.path.to_path_buf(),
            offset: self.dropped + self.end as u64,
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

    fn json_error_at(&self, start: u64, e: serde_json::Error) -> Error {
        json_error_in(self.path, start, &e)
    }

    fn not_a_trace(&self, reason: String) -> Error {
        Error::NotATrace {
            path: self.path.to_path_buf(),
            reason,
        }
    }
}

/// Converts a serde_json error inside a value that starts at byte `start` into our error.
/// Values are usually one line, so the column is the offset within the value.
pub(crate) fn json_error_in(path: &Path, start: u64, e: &serde_json::Error) -> Error {
    let offset = if e.line() <= 1 {
        start + e.column().saturating_sub(1) as u64
    } else {
        start
    };
    let mut message = e.to_string();
    if let Some(cut) = message.find(" at line ") {
        message.truncate(cut);
    }
    Error::Json {
        path: path.to_path_buf(),
        offset,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that returns 1 to 7 bytes per call (cycling), so refills fall inside
    /// strings, escapes, numbers and between any two tokens.
    struct TinyReads<'a> {
        data: &'a [u8],
        pos: usize,
        call: usize,
    }

    impl Read for TinyReads<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            self.call += 1;
            let n = (self.call % 7 + 1)
                .min(out.len())
                .min(self.data.len() - self.pos);
            out[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }

    /// Events and top-level members as found, or the error's message.
    fn split(reader: impl Read, path: &Path) -> String {
        let mut out = String::new();
        let res = split_events_serial(reader, path, |ev| {
            out.push_str(&format!(
                "{} @{}: {}\n",
                ev.index,
                ev.offset,
                String::from_utf8_lossy(ev.text)
            ));
            Ok(())
        });
        match res {
            Ok(top) => {
                for (key, value) in &top.members {
                    out.push_str(&format!("member {key} = {}\n", value.get()));
                }
                out.push_str(&format!(
                    "array {} events {} bytes {}\n",
                    top.array_format, top.event_count, top.json_bytes
                ));
            }
            Err(e) => out.push_str(&format!("error: {e}\n")),
        }
        out
    }

    fn check(text: &[u8], path: &Path) {
        let whole = split(text, path);
        for start in 0..3 {
            let tiny = TinyReads {
                data: text,
                pos: 0,
                call: start,
            };
            assert_eq!(split(tiny, path), whole, "{}", path.display());
        }
    }

    /// Every JSON fixture of the workspace (traces and malformed inputs; not golden
    /// outputs), decompressed when gzip.
    fn fixtures() -> Vec<(PathBuf, Vec<u8>)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
        let mut texts = test_support::json_texts(&root, 60);
        texts.retain(|(path, _)| !path.components().any(|c| c.as_os_str() == "golden"));
        assert!(texts.len() >= 60, "{} fixtures", texts.len());
        texts
    }

    use std::path::PathBuf;

    #[test]
    fn tiny_reads_split_every_fixture_as_whole_reads_do() {
        for (path, text) in &fixtures() {
            check(text, path);
        }
    }

    #[test]
    fn tiny_reads_inside_strings_escapes_and_numbers() {
        let path = Path::new("tricky.json");
        let cases: [&[u8]; 6] = [
            br#"{"a": "x\"]}\\", "traceEvents": [{"name": "\u005d\"\\}", "ts": -1.25e+3}, [1, [2]], "s\\"], "z": {"k": [0.5]}}"#,
            b"\xef\xbb\xbf[{\"ph\": \"X\", \"ts\": 123456789012345.678}]",
            br#"{"traceEvents": [{"n": "\ud83d\ude00 {[\"]}"}, 12345678901234567890, -0.0e-0, true, null]}"#,
            br#"{"traceEvents": [{"a": "unterminated \"}]}"#,
            br#"{"traceEvents": [{"a": 1}, ]}"#,
            br#"  {"traceEvents" : [ ] , "x" : "\\\\" }  "#,
        ];
        for text in cases {
            check(text, path);
        }
    }
}
