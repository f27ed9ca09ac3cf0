//! A hand-written parser for the common shape of an event: finds its end and decodes the
//! fields the builder reads in one pass, where splitting and then serde_json took two.
//!
//! It reads a strict subset of JSON: keys and the decoded strings without escapes, integer
//! ids, no duplicate known keys, nesting below 100 levels. Anything else (and every
//! malformed event) makes it give up, and the event is split and parsed the general way,
//! which gives the same result or the exact error; so for every event it accepts, it must
//! give what serde_json gives (`chunks.rs` tests both ways on every fixture and real trace).

use std::borrow::Cow;

use super::KnownArgs;
use crate::{Id, Number, RawEvent};

/// How the fast parser reads `args` into `Self`: `Some(None)` for `null`, `None` to give
/// up on the event.
pub(crate) trait FastArgs<'a>: Sized {
    fn read(p: &mut P<'a>) -> Option<Option<Self>>;
}

/// The model build's fields, decoded as they are read.
impl<'a> FastArgs<'a> for KnownArgs {
    fn read(p: &mut P<'a>) -> Option<Option<Self>> {
        p.args()
    }
}

/// The value's exact JSON text, checked as serde_json checks a value it keeps raw.
impl<'a> FastArgs<'a> for &'a str {
    fn read(p: &mut P<'a>) -> Option<Option<Self>> {
        if p.peek_is(b'n') {
            p.literal(b"null")?;
            return Some(None);
        }
        let start = p.i;
        p.skip(0)?;
        Some(Some(p.text.get(start..p.i)?))
    }
}

/// `A` read as its own impl reads it, and the value's exact JSON text beside it.
pub(crate) struct WithText<'a, A>(pub A, pub &'a str);

impl<'a, A: FastArgs<'a>> FastArgs<'a> for WithText<'a, A> {
    fn read(p: &mut P<'a>) -> Option<Option<Self>> {
        let start = p.i;
        let a = A::read(p)?;
        let text = p.text.get(start..p.i)?;
        Some(a.map(|a| WithText(a, text)))
    }
}

/// The event starting at `text[start]` (a `{`), and the index just past its end; `None`
/// when the event is not of the shape this parser reads.
pub(crate) fn event<'a, A: FastArgs<'a>>(
    text: &'a str,
    start: usize,
    index: usize,
    offset: u64,
) -> Option<(RawEvent<'a, A>, usize)> {
    event_with(text, start, index, offset, |ev| {
        std::mem::replace(ev, RawEvent::empty())
    })
}

/// [`event`], handed to `f` where it was read instead of returned: an event with known
/// `args` is 512 bytes, and each move of it is a `memcpy` (3.1M events, a tenth of the
/// 1 GB synthetic trace's model build went to them).
pub(crate) fn event_with<'a, A: FastArgs<'a>, R>(
    text: &'a str,
    start: usize,
    index: usize,
    offset: u64,
    f: impl FnOnce(&mut RawEvent<'a, A>) -> R,
) -> Option<(R, usize)> {
    let mut p = P {
        s: text.as_bytes(),
        text,
        i: start,
    };
    // The fields are read straight into the event; `seen` keeps which keys came, since a
    // second sighting gives up, as serde_json errs.
    let mut ev = RawEvent::empty();
    ev.index = index;
    ev.offset = offset;
    let mut ph = None;
    let mut seen = Seen(0);
    p.eat(b'{')?;
    p.ws();
    if !p.peek_is(b'}') {
        loop {
            let key = p.plain_string()?;
            p.ws();
            p.eat(b':')?;
            p.ws();
            match key {
                "ph" => ph = seen.first(Seen::PH, p.opt_str()?)?,
                "name" => ev.name = seen.first(Seen::NAME, p.opt_str()?)?,
                "cat" => ev.cat = seen.first(Seen::CAT, p.opt_str()?)?,
                "bp" => ev.bp = seen.first(Seen::BP, p.opt_str()?)?,
                "s" => ev.s = seen.first(Seen::S, p.opt_str()?)?,
                "ts" => ev.ts = seen.first(Seen::TS, p.number()?)?,
                "dur" => ev.dur = seen.first(Seen::DUR, p.number()?)?,
                "pid" => ev.pid = seen.first(Seen::PID, p.id()?)?,
                "tid" => ev.tid = seen.first(Seen::TID, p.id()?)?,
                "id" => ev.id = seen.first(Seen::ID, p.id()?)?,
                "args" => ev.args = seen.first(Seen::ARGS, A::read(&mut p)?)?,
                _ => p.skip(0)?,
            }
            p.ws();
            if p.peek_is(b',') {
                p.i += 1;
                p.ws();
            } else {
                break;
            }
        }
    }
    p.eat(b'}')?;
    let end = p.i;
    ev.json = &text[start..end];
    // As `raw::parse_event_str`; an event without a phase that may not lack one takes the
    // general path, which gives the error.
    match ph {
        Some(ph) => ev.ph = ph,
        None if ev.may_lack_phase() => {}
        None => return None,
    }
    Some((f(&mut ev), end))
}

/// The known keys an event (or its `args`) has given so far, a bit each.
struct Seen(u16);

impl Seen {
    const PH: u16 = 1;
    const NAME: u16 = 1 << 1;
    const CAT: u16 = 1 << 2;
    const BP: u16 = 1 << 3;
    const S: u16 = 1 << 4;
    const TS: u16 = 1 << 5;
    const DUR: u16 = 1 << 6;
    const PID: u16 = 1 << 7;
    const TID: u16 = 1 << 8;
    const ID: u16 = 1 << 9;
    const ARGS: u16 = 1 << 10;

    /// `value`, if `key` is given for the first time; `None` (give up) for a second time.
    fn first<T>(&mut self, key: u16, value: T) -> Option<T> {
        if self.0 & key != 0 {
            return None;
        }
        self.0 |= key;
        Some(value)
    }
}

/// The parser's cursor over an event's text.
pub(crate) struct P<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
}

impl<'a> P<'a> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    fn peek_is(&self, c: u8) -> bool {
        self.s.get(self.i) == Some(&c)
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        if self.peek_is(c) {
            self.i += 1;
            Some(())
        } else {
            None
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        if self.s[self.i..].starts_with(word) {
            self.i += word.len();
            Some(())
        } else {
            None
        }
    }

    /// A string without escapes or control characters (at its opening quote); its text.
    fn plain_string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.i;
        let end = start + self.string_body(start)?;
        if self.s[end] != b'"' {
            return None;
        }
        self.i = end + 1;
        self.text.get(start..end)
    }

    /// The length of the text from `start` to the next quote or backslash; `None` when a
    /// control character comes first or the text ends.
    fn string_body(&self, start: usize) -> Option<usize> {
        let rest = &self.s[start..];
        // Most strings here are short (keys, categories): a byte loop beats setting up a
        // vector search for them.
        for (k, &c) in rest.iter().take(24).enumerate() {
            match c {
                b'"' | b'\\' => return Some(k),
                0..0x20 => return None,
                _ => {}
            }
        }
        let k = memchr::memchr2(b'"', b'\\', rest)?;
        if rest[..k].iter().fold(false, |bad, &c| bad | (c < 0x20)) {
            return None;
        }
        Some(k)
    }

    /// Skips a string (at its opening quote), allowing the one-character escapes.
    fn skip_string(&mut self) -> Option<()> {
        self.eat(b'"')?;
        loop {
            let start = self.i;
            let k = self.string_body(start)?;
            self.i = start + k + 1;
            if self.s[start + k] == b'"' {
                return Some(());
            }
            match self.s.get(self.i)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 1,
                _ => return None,
            }
        }
    }

    /// A JSON number's text (at its first byte), checked against the grammar.
    fn number_text(&mut self) -> Option<&'a str> {
        let start = self.i;
        self.eat(b'-');
        match self.s.get(self.i)? {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.peek_is(b'.') {
            self.i += 1;
            if !self.s.get(self.i)?.is_ascii_digit() {
                return None;
            }
            self.digits();
        }
        if matches!(self.s.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.s.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !self.s.get(self.i)?.is_ascii_digit() {
                return None;
            }
            self.digits();
        }
        // A number runs into the next token only through a delimiter.
        if self
            .s
            .get(self.i)
            .is_some_and(|c| c.is_ascii_alphanumeric())
        {
            return None;
        }
        self.text.get(start..self.i)
    }

    fn digits(&mut self) {
        while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
    }

    /// Skips any value, checking it as serde_json does when it ignores one.
    fn skip(&mut self, depth: usize) -> Option<()> {
        if depth > 100 {
            return None;
        }
        match *self.s.get(self.i)? {
            b'"' => self.skip_string(),
            b'{' => {
                self.i += 1;
                self.ws();
                if self.eat(b'}').is_some() {
                    return Some(());
                }
                loop {
                    self.skip_string()?;
                    self.ws();
                    self.eat(b':')?;
                    self.ws();
                    self.skip(depth + 1)?;
                    self.ws();
                    if self.eat(b',').is_some() {
                        self.ws();
                    } else {
                        return self.eat(b'}');
                    }
                }
            }
            b'[' => {
                self.i += 1;
                self.ws();
                if self.eat(b']').is_some() {
                    return Some(());
                }
                loop {
                    self.skip(depth + 1)?;
                    self.ws();
                    if self.eat(b',').is_some() {
                        self.ws();
                    } else {
                        return self.eat(b']');
                    }
                }
            }
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.number_text().map(|_| ()),
        }
    }

    /// `null`, or a string without escapes.
    fn opt_str(&mut self) -> Option<Option<Cow<'a, str>>> {
        if self.peek_is(b'n') {
            self.literal(b"null")?;
            return Some(None);
        }
        self.plain_string().map(|s| Some(Cow::Borrowed(s)))
    }

    /// `ts` and `dur`: `null`, a number, or a string holding one (see `raw::number`).
    fn number(&mut self) -> Option<Option<Number<'a>>> {
        match *self.s.get(self.i)? {
            b'n' => {
                self.literal(b"null")?;
                Some(None)
            }
            b'"' => {
                let start = self.i;
                self.plain_string()?;
                Number::from_json(self.text.get(start..self.i)?).map(Some)
            }
            _ => Number::from_json(self.number_text()?).map(Some),
        }
    }

    /// `pid`, `tid`, `id`: `null`, an integer that fits i64, or a string without escapes.
    fn id(&mut self) -> Option<Option<Id<'a>>> {
        match *self.s.get(self.i)? {
            b'n' => {
                self.literal(b"null")?;
                Some(None)
            }
            b'"' => Some(Some(Id::Str(Cow::Borrowed(self.plain_string()?)))),
            _ => Some(Some(Id::Int(self.int()?))),
        }
    }

    /// An integer (no fraction, no exponent) that fits i64.
    fn int(&mut self) -> Option<i64> {
        let text = self.number_text()?;
        if text.bytes().any(|c| matches!(c, b'.' | b'e' | b'E')) {
            return None;
        }
        text.parse().ok()
    }

    /// `args`: `null`, or an object (a struct read from an array is left to serde_json).
    fn args(&mut self) -> Option<Option<KnownArgs>> {
        if self.peek_is(b'n') {
            self.literal(b"null")?;
            return Some(None);
        }
        self.eat(b'{')?;
        let mut a = KnownArgs::default();
        let mut seen = Seen(0);
        self.ws();
        if self.eat(b'}').is_some() {
            return Some(Some(a));
        }
        loop {
            let key = self.plain_string()?;
            self.ws();
            self.eat(b':')?;
            self.ws();
            match key {
                "correlation" => a.correlation = seen.first(1, self.flex_int()?)?,
                "correlation_id" => a.correlation_id = seen.first(2, self.flex_int()?)?,
                "External id" => a.external_id = seen.first(4, self.flex_int()?)?,
                "stream" => a.stream = seen.first(8, self.flex_int()?)?,
                "device" => a.device = seen.first(16, self.flex_int()?)?,
                "bytes" => a.bytes = seen.first(32, self.flex_int()?)?,
                "graph id" => a.graph_id = seen.first(64, self.flex_int()?)?,
                "program_id" => a.program_id = seen.first(128, self.flex_int()?)?,
                "step_num" => a.step_num = seen.first(256, self.flex_int()?)?,
                "hlo_op" => a.hlo_op = seen.first(512, self.opt_string()?)?,
                "hlo_module" => a.hlo_module = seen.first(1024, self.opt_string()?)?,
                "memcpy_details" => a.memcpy_details = seen.first(2048, self.opt_string()?)?,
                "name" => a.name = seen.first(4096, self.opt_string()?)?,
                "Input Dims" => a.input_dims = seen.first(8192, Some(self.raw_text()?))?,
                "Input type" => a.input_types = seen.first(16384, Some(self.raw_text()?))?,
                "Concrete Inputs" => {
                    a.concrete_inputs = seen.first(32768, Some(self.raw_text()?))?;
                }
                _ => self.skip(1)?,
            }
            self.ws();
            if self.eat(b',').is_some() {
                self.ws();
            } else {
                self.eat(b'}')?;
                return Some(Some(a));
            }
        }
    }

    /// Any value, as its JSON text (as `build::raw_text`).
    fn raw_text(&mut self) -> Option<String> {
        let start = self.i;
        self.skip(1)?;
        Some(self.text.get(start..self.i)?.to_owned())
    }

    /// `null` or a string without escapes, owned.
    fn opt_string(&mut self) -> Option<Option<String>> {
        self.opt_str().map(|s| s.map(Cow::into_owned))
    }

    /// As `build::flex_int`: an integer, or a string holding one; `null`, booleans,
    /// arrays and objects read as absent. Fractions and integers beyond i64 are left to
    /// serde_json.
    fn flex_int(&mut self) -> Option<Option<i64>> {
        match *self.s.get(self.i)? {
            b'"' => Some(self.plain_string()?.trim().parse().ok()),
            b'n' => self.literal(b"null").map(|()| None),
            b't' => self.literal(b"true").map(|()| None),
            b'f' => self.literal(b"false").map(|()| None),
            b'[' | b'{' => self.skip(1).map(|()| None),
            _ => self.int().map(Some),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast parser's event, if it reads `text`, must be serde_json's to the last field;
    /// returns whether it read it.
    fn check(text: &str) -> bool {
        let path = std::path::Path::new("fast.json");
        let general = crate::raw::parse_event::<KnownArgs>(path, 3, 9, text.as_bytes());
        let Some((fast, end)) = event(text, 0, 3, 9) else {
            return false;
        };
        assert_eq!(end, text.len(), "{text}");
        let general =
            general.unwrap_or_else(|e| panic!("{text}: fast read what serde did not: {e}"));
        assert_eq!(show(&fast), show(&general), "{text}");
        true
    }

    fn show(ev: &RawEvent<'_, KnownArgs>) -> String {
        let a = ev.args.as_ref().map(|a| {
            format!(
                "{:?} {:?}",
                (
                    a.correlation,
                    a.correlation_id,
                    a.external_id,
                    a.stream,
                    a.device,
                    a.bytes,
                    a.graph_id,
                    a.program_id,
                ),
                (
                    &a.hlo_op,
                    &a.hlo_module,
                    &a.memcpy_details,
                    &a.name,
                    a.step_num,
                    (&a.input_dims, &a.input_types, &a.concrete_inputs),
                )
            )
        });
        ev.fields_line((ev.args.is_some(), a))
    }

    #[test]
    fn common_events_are_read_as_serde_json_reads_them() {
        let read = [
            r#"{"ph": "X", "cat": "kernel", "name": "volta_sgemm", "pid": 0, "tid": 7, "ts": 1712345678901.5, "dur": 20.25, "args": {"External id": 31, "device": 0, "stream": 7, "correlation": 5, "grid": [1, 2, 3], "est. achieved occupancy %": 0, "registers per thread": 128}}"#,
            r#"{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":12,"tid":12,"ts":1.5,"dur":2,"args":{"Input Dims":[[1,2],[2,3]],"Input type":["float","float"],"Sequence number":-7,"Fwd thread id":0,"Concrete Inputs":["", "x\"y\\z\/"],"Ev Idx":1.5e-3}}"#,
            r#"{"ph": "M", "name": "thread_name", "pid": "Spans", "tid": "Traces", "args": {"name": "stream 7"}}"#,
            r#"{"ph": "f", "id": 42, "pid": 0, "tid": 0, "ts": "12.5", "cat": "ac2g", "name": "ac2g", "bp": "e"}"#,
            r#"{"name": "x", "ph": "X", "ts": -0, "dur": null, "pid": -9223372036854775808, "tid": null, "args": {"correlation": "  17 ", "stream": true, "device": [1], "bytes": {"a": 1}, "graph id": null, "hlo_op": "fusion.1", "hlo_module": null}}"#,
            r#"{"ph": "i", "s": "g", "name": "Record Window End", "pid": "", "tid": "", "ts": 0}"#,
            r#"{}"#,
            r#"{ "args" : null , "ph" : "X" }"#,
            r#"{"ph": "X", "unknown": {"deep": [[[{"k": [true, false, null, -0.5E+3]}]]]}}"#,
        ];
        for text in read {
            assert!(check(text), "not read: {text}");
        }
    }

    #[test]
    fn unusual_or_malformed_events_are_left_to_serde_json() {
        let left = [
            r#"{"ph": "X", "name": "a\"b"}"#,
            r#"{"ph": "X", "ph": "X"}"#,
            r#"{"ph": "X", "args": {"stream": 1, "stream": 2}}"#,
            r#"{"ph": "X", "pid": 1.0}"#,
            r#"{"ph": "X", "pid": 18446744073709551615}"#,
            r#"{"ph": "X", "args": {"correlation": 1.5}}"#,
            r#"{"ph": "X", "args": [1, 2]}"#,
            r#"{"ph": "X", "ts": true}"#,
            r#"{"ph": "X", "ts": "  "}"#,
            r#"{"ph": "X", "ts": 01}"#,
            r#"{"ph": "X", "ts": 1.}"#,
            r#"{"ph": "X", "x": [1, ]}"#,
            r#"{"ph": "X", "x": "\u0041"}"#,
            r#"{"ph": "X", "x": "tab	in a string"}"#,
            r#"{"ph": "X",}"#,
            r#"{"name": "no phase"}"#,
            r#"{"ph": 88}"#,
            r#"{"ph": "X", "args": {"hlo_op": 3}}"#,
            r#"{"ph": "X" "name": "x"}"#,
            r#"{"ph": "X", "x": tru}"#,
        ];
        for text in left {
            assert!(!check(text), "read: {text}");
        }
    }
}
