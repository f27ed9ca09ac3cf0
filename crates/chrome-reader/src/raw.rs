//! The raw event layer: every event of a Chrome trace, with the fields analyses read
//! decoded and the event's exact JSON text kept, so tools that rewrite traces lose nothing.

use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

use serde::Deserialize;
use serde::de::{self, Deserializer};
use serde_json::value::RawValue;

use crate::Error;
use crate::scan::{self, TopLevel};

/// One element of `traceEvents`.
///
/// Strings borrow from the input buffer when they contain no escapes. The whole event
/// is in [`RawEvent::json`], byte for byte as it was in the file. `args` stays undecoded
/// JSON by default; readers that know which keys they need decode it in the same pass
/// by choosing `A` (see [`read_events_with_args`]).
#[derive(Debug, Clone)]
pub struct RawEvent<'a, A = &'a RawValue> {
    /// Position of the event in `traceEvents`, from zero.
    pub index: usize,
    /// Byte offset of the event in the (decompressed) JSON text.
    pub offset: u64,
    /// The event's JSON text, exactly as in the file.
    pub json: &'a str,
    /// Phase (`X`, `B`, `E`, `i`, `s`, `f`, `M`, ...).
    pub ph: Cow<'a, str>,
    /// Event name.
    pub name: Option<Cow<'a, str>>,
    /// Category (`kernel`, `cuda_runtime`, `cpu_op`, ...).
    pub cat: Option<Cow<'a, str>>,
    /// Start in microseconds, as written.
    pub ts: Option<Number<'a>>,
    /// Duration in microseconds, as written.
    pub dur: Option<Number<'a>>,
    /// Process id (a GPU for device events).
    pub pid: Option<Id<'a>>,
    /// Thread id (a stream for device events).
    pub tid: Option<Id<'a>>,
    /// Flow or async id.
    pub id: Option<Id<'a>>,
    /// Flow binding point (`"e"` binds to the enclosing slice).
    pub bp: Option<Cow<'a, str>>,
    /// Instant scope (`g`, `p`, `t`).
    pub s: Option<Cow<'a, str>>,
    /// The event's `args` object: undecoded by default.
    pub args: Option<A>,
}

impl<'a, A> RawEvent<'a, A> {
    /// The error every reader gives for a `ts` or `dur` (`field`) whose text is no number
    /// at all (`"soon"`, `"inf"`): it names the file, the event and its byte. A number too
    /// large for nanoseconds is not this error ([`Number::is_numeric`]).
    pub fn not_a_time(&self, path: &std::path::Path, field: &str, text: &str) -> crate::Error {
        crate::Error::Event {
            path: path.to_path_buf(),
            index: self.index,
            offset: self.offset,
            message: format!("field \"{field}\": {text:?} is not a number of microseconds"),
        }
    }

    /// Every field on one line, `args` last (the tests compare two readers' events by it).
    #[cfg(test)]
    pub(crate) fn fields_line(&self, args: impl std::fmt::Debug) -> String {
        format!(
            "{} {} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {args:?}",
            self.index,
            self.offset,
            self.json,
            self.ph,
            self.name,
            self.cat,
            self.ts,
            self.dur,
            self.pid,
            self.tid,
            self.id,
            self.bp,
            self.s,
        )
    }

    /// An event with no text and no fields, at index and offset 0.
    pub(crate) fn empty() -> Self {
        RawEvent {
            index: 0,
            offset: 0,
            json: "",
            ph: Cow::Borrowed(""),
            name: None,
            cat: None,
            ts: None,
            dur: None,
            pid: None,
            tid: None,
            id: None,
            bp: None,
            s: None,
            args: None,
        }
    }

    /// Whether the event may go without a phase: it has none of the fields an event is
    /// read for (absent and `null` alike). XProf's converter ends `traceEvents` with an
    /// empty object `{}`: harmless, so it is passed on with an empty phase; any other event
    /// without one is unusable. Both parsers (serde's and `build::fast`) ask this.
    pub(crate) fn may_lack_phase(&self) -> bool {
        self.name.is_none()
            && self.cat.is_none()
            && self.ts.is_none()
            && self.args.is_none()
            && self.pid.is_none()
            && self.tid.is_none()
            && self.id.is_none()
    }

    /// The same event with `args` in place of its own.
    pub(crate) fn with_args<B>(self, args: Option<B>) -> RawEvent<'a, B> {
        RawEvent {
            index: self.index,
            offset: self.offset,
            json: self.json,
            ph: self.ph,
            name: self.name,
            cat: self.cat,
            ts: self.ts,
            dur: self.dur,
            pid: self.pid,
            tid: self.tid,
            id: self.id,
            bp: self.bp,
            s: self.s,
            args,
        }
    }
}

/// A JSON number (or a string holding one) kept as its text, so integer and decimal
/// microseconds convert to nanoseconds exactly.
///
/// Two numbers are equal when their texts and quoting are: the nanoseconds a parser may
/// have worked out while it read the text (the third field) are a cache of
/// [`Number::micros_to_nanos`], not part of the value.
#[derive(Clone, Copy)]
pub struct Number<'a>(&'a str, bool, i64);

/// [`Number`]'s third field when the parser did not work the nanoseconds out.
const NANOS_UNREAD: i64 = i64::MIN;

impl std::fmt::Debug for Number<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Number")
            .field(&self.0)
            .field(&self.1)
            .finish()
    }
}

impl PartialEq for Number<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0 && self.1 == other.1
    }
}

impl Eq for Number<'_> {}

impl<'a> Number<'a> {
    /// Wraps number text (for tests and for callers that build events by hand).
    pub fn from_text(text: &'a str) -> Self {
        Number(text, false, NANOS_UNREAD)
    }

    /// An unquoted JSON number's text whose microseconds the parser has converted to
    /// `nanos` while reading it (as [`Number::micros_to_nanos`] converts them).
    pub(crate) fn with_nanos(text: &'a str, nanos: i64) -> Self {
        debug_assert_eq!(micros_text_to_nanos(text), Some(nanos), "{text}");
        Number(text, false, nanos)
    }

    /// Reads a JSON value's text as a number: a JSON number, or a string holding one
    /// (`"12.5"`, spaces around it allowed, no escapes). `None` for anything else,
    /// `null` included.
    ///
    /// ```
    /// use chrome_reader::Number;
    /// let n = Number::from_json(r#"" 12.5""#).expect("a quoted number");
    /// assert_eq!((n.text(), n.was_quoted(), n.micros_to_nanos()), ("12.5", true, Some(12_500)));
    /// assert_eq!(Number::from_json("null"), None);
    /// assert_eq!(Number::from_json(r#""1\u0030""#), None);
    /// ```
    pub fn from_json(text: &'a str) -> Option<Self> {
        match text.as_bytes().first()? {
            b'"' => {
                let inner = text[1..text.len() - 1].trim();
                (!inner.contains('\\') && !inner.is_empty()).then_some(Number(
                    inner,
                    true,
                    NANOS_UNREAD,
                ))
            }
            b'-' | b'0'..=b'9' => Some(Number(text, false, NANOS_UNREAD)),
            _ => None,
        }
    }

    /// The number's text, without quotes.
    pub fn text(&self) -> &'a str {
        self.0
    }

    /// Whether the file gave the number as a string (`"ts": "12.5"`), which readers accept
    /// but count as a diagnostic.
    pub fn was_quoted(&self) -> bool {
        self.1
    }

    /// Whether the text is a decimal number (digits, sign, point, exponent) whatever its
    /// size: tells a number too large for nanoseconds from text that is no number at all.
    pub fn is_numeric(&self) -> bool {
        self.0.bytes().any(|b| b.is_ascii_digit())
            && self.0.parse::<f64>().is_ok()
            && self
                .0
                .bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
    }

    /// Whether Python's `json` would read this as an `int` (no fraction, no exponent).
    pub fn is_integer(&self) -> bool {
        !self.0.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
    }

    /// The value as f64, rounded correctly from the decimal text (as Python reads it).
    pub fn as_f64(&self) -> Option<f64> {
        self.0.parse().ok()
    }

    /// The value as i64 if it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        self.0.parse().ok()
    }

    /// Reads the number as microseconds and returns nanoseconds, exactly for decimal text
    /// with up to three fractional digits, rounded to the nearest nanosecond beyond that.
    pub fn micros_to_nanos(&self) -> Option<i64> {
        if self.2 != NANOS_UNREAD {
            return Some(self.2);
        }
        micros_text_to_nanos(self.0)
    }
}

/// Converts decimal microsecond text to integer nanoseconds without going through f64.
fn micros_text_to_nanos(text: &str) -> Option<i64> {
    micros_fast(text.as_bytes()).or_else(|| micros_general(text))
}

/// [`micros_general`] for the text profilers write: up to 16 integer digits (so that they
/// fit a u64 unchecked) and at most three fractional ones; `None` for anything else, which
/// the general path then reads.
#[inline]
fn micros_fast(bytes: &[u8]) -> Option<i64> {
    let mut int: u64 = 0;
    let mut i = 0;
    // Eight digits at a time while there are eight (a timestamp has 16).
    while let Some(word) = bytes.get(i..i + 8) {
        let w = u64::from_le_bytes(word.try_into().ok()?);
        if !eight_digits(w) {
            break;
        }
        if i == 16 {
            return None;
        }
        int = int * 100_000_000 + eight_digits_value(w);
        i += 8;
    }
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        if i == 16 {
            return None;
        }
        int = int * 10 + u64::from(bytes[i] - b'0');
        i += 1;
    }
    if i == 0 {
        return None;
    }
    let mut frac: u64 = 0;
    if i < bytes.len() {
        if bytes[i] != b'.' {
            return None;
        }
        let digits = &bytes[i + 1..];
        if digits.is_empty() || digits.len() > 3 || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let mut scale = 100;
        for &b in digits {
            frac += u64::from(b - b'0') * scale;
            scale /= 10;
        }
    }
    let ns = i64::try_from(int).ok()?.checked_mul(1000)?;
    ns.checked_add(i64::try_from(frac).ok()?)
}

/// Whether the eight bytes of `w` are all ASCII digits: each byte's high nibble is 3, as
/// it is and plus 6 (a byte whose low nibble is above 9 carries out of it).
#[inline]
fn eight_digits(w: u64) -> bool {
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const THREES: u64 = 0x3030_3030_3030_3030;
    const SIXES: u64 = 0x0606_0606_0606_0606;
    ((w & HIGH) ^ THREES) | ((w.wrapping_add(SIXES) & HIGH) ^ THREES) == 0
}

/// The value of eight ASCII digits (the first in the lowest byte), combined in pairs,
/// then fours, then the eight: three multiplications instead of eight.
#[inline]
fn eight_digits_value(w: u64) -> u64 {
    eight_digit_values(w.wrapping_sub(0x3030_3030_3030_3030))
}

/// [`eight_digits_value`] of the digits' values (0 to 9 a byte) rather than their text.
#[inline]
pub(crate) fn eight_digit_values(v: u64) -> u64 {
    let v = (v.wrapping_mul(10) + (v >> 8)) & 0x00FF_00FF_00FF_00FF;
    let v = (v.wrapping_mul(100) + (v >> 16)) & 0x0000_FFFF_0000_FFFF;
    v.wrapping_mul(10_000).wrapping_add(v >> 32) & 0xFFFF_FFFF
}

/// The conversion for any decimal text: a sign, an exponent (through f64), fractional
/// digits beyond the third rounded half up.
fn micros_general(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    let (neg, digits) = match bytes.first()? {
        b'-' => (true, &bytes[1..]),
        _ => (false, bytes),
    };
    if digits.iter().any(|b| matches!(b, b'e' | b'E')) {
        let v: f64 = text.parse().ok()?;
        let ns = (v * 1000.0).round();
        return (ns.is_finite() && ns.abs() < 9.2e18).then_some(ns as i64);
    }
    let (int_part, frac_part) = match digits.iter().position(|&b| b == b'.') {
        Some(dot) => (&digits[..dot], &digits[dot + 1..]),
        None => (digits, &digits[..0]),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut ns: i64 = 0;
    for &b in int_part {
        if !b.is_ascii_digit() {
            return None;
        }
        ns = ns.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
    }
    ns = ns.checked_mul(1000)?;
    let mut scale = 100;
    for (k, &b) in frac_part.iter().enumerate() {
        if !b.is_ascii_digit() {
            return None;
        }
        let d = i64::from(b - b'0');
        if k < 3 {
            ns = ns.checked_add(d * scale)?;
            scale /= 10;
        } else {
            // Round half up on the first dropped digit.
            if k == 3 && d >= 5 {
                ns = ns.checked_add(1)?;
            }
            continue;
        }
    }
    Some(if neg { -ns } else { ns })
}

/// A `pid`, `tid` or `id`: Kineto writes numbers, some producers write strings
/// (`"Spans"`, `"Traces"`), and some numbers exceed i64.
///
/// Deliberately not `#[non_exhaustive]`: JSON gives a number or a string and nothing else,
/// so callers' matches stay exhaustive.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Id<'a> {
    /// A number that fits i64.
    Int(i64),
    /// A string, or a number beyond i64 as its text.
    Str(Cow<'a, str>),
}

impl Id<'_> {
    /// The id as an integer: numbers, and strings that hold a decimal integer.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Id::Int(v) => Some(*v),
            Id::Str(s) => s.parse().ok(),
        }
    }

    /// The same id, owning its text.
    pub fn into_owned(self) -> Id<'static> {
        match self {
            Id::Int(v) => Id::Int(v),
            Id::Str(s) => Id::Str(Cow::Owned(s.into_owned())),
        }
    }
}

impl std::fmt::Display for Id<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Id::Int(v) => write!(f, "{v}"),
            Id::Str(s) => f.write_str(s),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Id<'a> {
    /// From JSON text only (the raw layer's parsers): a number keeps its text unless it is
    /// an integer that fits i64, or a float with an exact integer value (`7.0`) below 2^53.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw: &'de RawValue = Deserialize::deserialize(d)?;
        let text = raw.get();
        match text.as_bytes().first() {
            Some(b'"') => {
                // Borrowed when the string has no escapes.
                let s: Cow<'de, str> = match serde_json::from_str::<&'de str>(text) {
                    Ok(s) => Cow::Borrowed(s),
                    Err(_) => {
                        Cow::Owned(serde_json::from_str::<String>(text).map_err(de::Error::custom)?)
                    }
                };
                Ok(Id::Str(s))
            }
            Some(b'-' | b'0'..=b'9') => Ok(Id::from_number_text(text)),
            _ => Err(de::Error::custom("expected an integer or a string")),
        }
    }
}

impl<'a> Id<'a> {
    /// The id of a JSON number's text: an integer that fits i64, or a float with an exact
    /// integer value below 2^53, is [`Id::Int`]; any other number (beyond i64, a
    /// fraction, `1e20`) keeps its text as [`Id::Str`], so it is never wrapped or rounded.
    pub fn from_number_text(text: &'a str) -> Id<'a> {
        if let Ok(v) = text.parse::<i64>() {
            return Id::Int(v);
        }
        match text.parse::<f64>() {
            Ok(v) if v.fract() == 0.0 && v.abs() < 9_007_199_254_740_992.0 => Id::Int(v as i64),
            _ => Id::Str(Cow::Borrowed(text)),
        }
    }

    /// Whether the id is a number that is not a 64-bit integer (kept as its text).
    pub fn is_number_text(&self) -> bool {
        matches!(self, Id::Str(s) if is_number_text(s))
    }
}

/// Whether `text` reads as a JSON number (an id that is one, kept as its text).
pub fn is_number_text(text: &str) -> bool {
    text.as_bytes()
        .first()
        .is_some_and(|c| matches!(c, b'-' | b'0'..=b'9'))
        && text.parse::<f64>().is_ok()
}

/// Accepts a JSON number or a string holding one, keeping the text.
fn number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Number<'de>>, D::Error> {
    let raw: Option<&'de RawValue> = Option::deserialize(d)?;
    let Some(raw) = raw else { return Ok(None) };
    if raw.get() == "null" {
        return Ok(None);
    }
    Number::from_json(raw.get())
        .map(Some)
        .ok_or_else(|| de::Error::custom("expected a number"))
}

#[derive(Deserialize)]
#[serde(bound(deserialize = "'de: 'a, A: Deserialize<'de>"))]
struct Fields<'a, A> {
    #[serde(borrow)]
    ph: Option<Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    cat: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "number")]
    ts: Option<Number<'a>>,
    #[serde(borrow, default, deserialize_with = "number")]
    dur: Option<Number<'a>>,
    #[serde(borrow)]
    pid: Option<Id<'a>>,
    #[serde(borrow)]
    tid: Option<Id<'a>>,
    #[serde(borrow)]
    id: Option<Id<'a>>,
    #[serde(borrow)]
    bp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    s: Option<Cow<'a, str>>,
    args: Option<A>,
}

/// Decodes one event's text. A missing `ph` is an error (an event without a phase has no
/// meaning in the Chrome trace format), except for the empty object `{}`, whose `ph` is `""`.
pub(crate) fn parse_event<'a, A: Deserialize<'a>>(
    path: &Path,
    index: usize,
    offset: u64,
    text: &'a [u8],
) -> Result<RawEvent<'a, A>, Error> {
    if text.first() != Some(&b'{') {
        return Err(not_an_object(path, index, offset));
    }
    // Validate UTF-8 once for the whole event; `from_str` then skips per-string checks.
    let json = std::str::from_utf8(text).map_err(|e| Error::Json {
        path: path.to_path_buf(),
        offset: offset + e.valid_up_to() as u64,
        message: "invalid UTF-8".to_string(),
    })?;
    parse_event_str(path, index, offset, json)
}

/// [`parse_event`] for the model build: the `args` are decoded into the keys the model
/// reads only where it reads them (`build::args_wanted`); any other event's object `args`
/// read as [`crate::build::KnownArgs::NONE`], left as text in [`RawEvent::json`]. Where it
/// decodes them, the event and its error are [`parse_event`]'s with those keys; `args` that
/// are not an object (or `null`) are decoded as before, so their error stays the same.
pub(crate) fn parse_model_event<'a>(
    path: &Path,
    index: usize,
    offset: u64,
    text: &'a [u8],
) -> Result<RawEvent<'a, crate::build::KnownArgs>, Error> {
    use crate::build::{KnownArgs, args_wanted};
    let Ok(ev) = parse_event::<&RawValue>(path, index, offset, text) else {
        return parse_event::<KnownArgs>(path, index, offset, text);
    };
    let lazy = match ev.args {
        None => true,
        Some(args) => args.get().starts_with('{') && !args_wanted(&ev.ph, ev.cat.as_deref()),
    };
    if !lazy {
        return parse_event::<KnownArgs>(path, index, offset, text);
    }
    let args = ev.args.map(|_| KnownArgs::NONE);
    Ok(ev.with_args(args))
}

fn not_an_object(path: &Path, index: usize, offset: u64) -> Error {
    Error::Event {
        path: path.to_path_buf(),
        index,
        offset,
        message: "an event must be a JSON object".to_string(),
    }
}

/// [`parse_event`] on text already known to be UTF-8.
fn parse_event_str<'a, A: Deserialize<'a>>(
    path: &Path,
    index: usize,
    offset: u64,
    json: &'a str,
) -> Result<RawEvent<'a, A>, Error> {
    if !json.starts_with('{') {
        return Err(not_an_object(path, index, offset));
    }
    let fields: Fields<'a, A> = serde_json::from_str(json).map_err(|e| {
        if e.is_data() {
            let column = if e.line() <= 1 { e.column() } else { 0 };
            let mut message = e.to_string();
            if let Some(cut) = message.find(" at line ") {
                message.truncate(cut);
            }
            Error::Event {
                path: path.to_path_buf(),
                index,
                offset: offset + column.saturating_sub(1) as u64,
                message,
            }
        } else {
            scan::json_error_in(path, offset, &e)
        }
    })?;
    let ph = fields.ph;
    let mut ev = RawEvent {
        index,
        offset,
        json,
        ph: Cow::Borrowed(""),
        name: fields.name,
        cat: fields.cat,
        ts: fields.ts,
        dur: fields.dur,
        pid: fields.pid,
        tid: fields.tid,
        id: fields.id,
        bp: fields.bp,
        s: fields.s,
        args: fields.args,
    };
    match ph {
        Some(ph) => ev.ph = ph,
        None if ev.may_lack_phase() => {}
        None => {
            return Err(Error::Event {
                path: path.to_path_buf(),
                index,
                offset,
                message: "missing field \"ph\"".to_string(),
            });
        }
    }
    Ok(ev)
}

/// Streams the events of a Chrome trace from `input` (already decompressed), calling
/// `on_event` for each one in file order. Returns the other top-level members.
///
/// `path` is used only in error messages.
pub fn read_raw_events<R: Read + Send>(
    input: R,
    path: &Path,
    mut on_event: impl FnMut(RawEvent<'_>) -> Result<(), Error>,
) -> Result<TopLevel, Error> {
    scan::split_events(input, path, |ev| {
        let raw = parse_event(path, ev.index, ev.offset, ev.text)?;
        on_event(raw)
    })
}

/// Streams the text of each element of `traceEvents` from `input` (already
/// decompressed), in file order, with its index and byte offset, found by the splitter
/// alone: no field is decoded, and only the structure (brackets, strings) is checked, so
/// an event that [`read_raw_events`] would reject may pass. For a second pass over text
/// already read once (a rewriting tool that did not keep it); runs on the calling thread.
/// Returns the other top-level members.
pub fn read_event_texts<R: Read>(
    input: R,
    path: &Path,
    mut on_event: impl FnMut(usize, u64, &[u8]) -> Result<(), Error>,
) -> Result<TopLevel, Error> {
    scan::split_events_serial(input, path, |ev| on_event(ev.index, ev.offset, ev.text))
}

/// Consumes the events of one piece of the file for [`read_events_chunked`], on the
/// thread that parsed them; `args` is its JSON text (checked, undecoded).
pub trait EventSink: Send {
    /// What the sink made of its piece.
    type Out: Send;
    /// One event. Indices count from the piece's first event (see [`read_events_chunked`]).
    fn event(&mut self, ev: RawEvent<'_, &str>) -> Result<(), Error>;
    /// The piece is done.
    fn finish(self) -> Self::Out;
}

/// Reads `input` (already decompressed) in chunks parsed on `threads` threads, as the model
/// build does: each piece of `traceEvents` goes to a sink of its own from `new_sink`, and
/// `apply` gets the pieces' outputs in file order, with the index of each piece's first
/// event (add it to the indices the sink saw). The events, their order, offsets and the
/// first error are those of [`read_raw_events`]; a piece whose start was guessed wrong is
/// parsed again and its first sink's output dropped. Returns the other top-level members.
pub fn read_events_chunked<R: Read + Send, S: EventSink>(
    input: R,
    path: &Path,
    threads: usize,
    new_sink: impl Fn() -> S + Sync,
    apply: impl FnMut(S::Out, usize) -> Result<(), Error>,
) -> Result<TopLevel, Error> {
    read_events_in_chunks(
        crate::chunks::Source::Read(input),
        path,
        threads,
        crate::chunks::CHUNK_BYTES,
        new_sink,
        apply,
    )
}

/// [`read_events_chunked`] on the trace file at `path` (plain or gzip JSON). A plain
/// regular file is mapped, not read, as [`crate::load_with`] does; the events and errors
/// are those of [`read_events_chunked`] on the same bytes.
pub fn read_file_events_chunked<S: EventSink>(
    path: &Path,
    threads: usize,
    new_sink: impl Fn() -> S + Sync,
    apply: impl FnMut(S::Out, usize) -> Result<(), Error>,
) -> Result<TopLevel, Error> {
    crate::build::with_source(path, |source| {
        read_events_in_chunks(
            source,
            path,
            threads,
            crate::chunks::CHUNK_BYTES,
            new_sink,
            apply,
        )
    })
}

/// [`read_events_chunked`] of `source`, with chunks of about `chunk_bytes`.
pub(crate) fn read_events_in_chunks<R: Read + Send, S: EventSink>(
    source: crate::chunks::Source<'_, R>,
    path: &Path,
    threads: usize,
    chunk_bytes: usize,
    new_sink: impl Fn() -> S + Sync,
    apply: impl FnMut(S::Out, usize) -> Result<(), Error>,
) -> Result<TopLevel, Error> {
    let new_sink = || Sinked {
        path,
        sink: new_sink(),
    };
    let (top, _stats) =
        crate::chunks::prepare_chunks(source, path, threads, chunk_bytes, &new_sink, apply)?;
    Ok(top)
}

/// An [`EventSink`] as the chunk splitter drives it.
struct Sinked<'p, S> {
    path: &'p Path,
    sink: S,
}

impl<S: EventSink> crate::chunks::RunSink for Sinked<'_, S> {
    type Out = S::Out;

    fn fast_event(&mut self, at: crate::chunks::EventAt<'_>) -> Option<Result<usize, Error>> {
        let (ev, end) = crate::build::fast::event::<&str>(at.text, at.start, at.index, at.offset)?;
        Some(self.sink.event(ev).map(|()| end))
    }

    fn event_text(&mut self, index: usize, offset: u64, text: &[u8]) -> Result<(), Error> {
        let ev = parse_event::<&RawValue>(self.path, index, offset, text)?;
        let args = ev.args.map(RawValue::get);
        self.sink.event(ev.with_args(args))
    }

    fn finish(self) -> S::Out {
        self.sink.finish()
    }
}

/// One run's events for both the model build and a caller's sink, parsed once (see
/// `build::load_with_sink`): the model's first error stops only the model's part, as it
/// would stop a load of its own, while the sink sees every event.
pub(crate) struct Both<'p, S> {
    path: &'p Path,
    prep: crate::build::prepare::Prep<'p>,
    model_failure: Option<crate::chunks::Failure>,
    sink: S,
}

impl<'p, S: EventSink> Both<'p, S> {
    pub(crate) fn new(path: &'p Path, spares: &crate::build::prepare::Spares, sink: S) -> Self {
        Both {
            path,
            prep: crate::build::prepare::Prep::new(path, spares),
            model_failure: None,
            sink,
        }
    }

    fn model(&mut self, res: Result<(), Error>) {
        if let Err(e) = res {
            self.model_failure = Some(crate::chunks::Failure::Error(e));
        }
    }
}

impl<S: EventSink> crate::chunks::RunSink for Both<'_, S> {
    /// The model's ops, its first error (event indices relative to the run), the sink's.
    type Out = (
        crate::build::prepare::Prepared,
        Option<crate::chunks::Failure>,
        S::Out,
    );

    fn fast_event(&mut self, at: crate::chunks::EventAt<'_>) -> Option<Result<usize, Error>> {
        use crate::build::fast::WithText;
        let (mut ev, end) = crate::build::fast::event::<WithText<'_, crate::build::KnownArgs>>(
            at.text, at.start, at.index, at.offset,
        )?;
        let (known, args) = match ev.args.take() {
            Some(WithText(known, args)) => (Some(known), Some(args)),
            None => (None, None),
        };
        let ev = ev.with_args::<()>(None);
        let raw = ev.clone().with_args(args);
        if self.model_failure.is_none() {
            let res = self.prep.event(&mut ev.with_args(known));
            self.model(res);
        }
        Some(self.sink.event(raw).map(|()| end))
    }

    fn event_text(&mut self, index: usize, offset: u64, text: &[u8]) -> Result<(), Error> {
        let raw = parse_event::<&RawValue>(self.path, index, offset, text)?;
        if self.model_failure.is_none() {
            let res = parse_model_event(self.path, index, offset, text)
                .and_then(|mut ev| self.prep.event(&mut ev));
            self.model(res);
        }
        let args = raw.args.map(RawValue::get);
        self.sink.event(raw.with_args(args))
    }

    fn finish(self) -> Self::Out {
        (self.prep.finish(), self.model_failure, self.sink.finish())
    }
}

/// Like [`read_raw_events`], but decodes each event's `args` into `A` in the same pass
/// (a struct of the keys the caller needs; unknown keys are skipped). An `args` that does
/// not fit `A` is an error naming the event.
pub fn read_events_with_args<R: Read + Send, A>(
    input: R,
    path: &Path,
    mut on_event: impl FnMut(RawEvent<'_, A>) -> Result<(), Error>,
) -> Result<TopLevel, Error>
where
    A: for<'de> Deserialize<'de>,
{
    scan::split_events(input, path, |ev| {
        let raw = parse_event::<A>(path, ev.index, ev.offset, ev.text)?;
        on_event(raw)
    })
}

/// Decodes the `args` of an event into `T` (usually a struct of borrowed optional fields).
pub fn decode_args<'a, T: Deserialize<'a>>(
    path: &Path,
    event: &RawEvent<'a>,
) -> Result<Option<T>, Error> {
    let Some(args) = event.args else {
        return Ok(None);
    };
    serde_json::from_str(args.get())
        .map(Some)
        .map_err(|e| Error::Event {
            path: path.to_path_buf(),
            index: event.index,
            offset: event.offset,
            message: format!("field \"args\": {e}"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_ns(text: &str, expect: Option<i64>) {
        assert_eq!(micros_text_to_nanos(text), expect, "{text}");
        assert_eq!(micros_general(text), expect, "{text}");
    }

    /// Where the fast path reads a text, it reads it as the general one does.
    #[test]
    fn the_fast_micros_path_agrees_with_the_general_one() {
        let mut texts: Vec<String> = [
            "0",
            "7",
            "0.5",
            "1.",
            ".5",
            "12.345",
            "12.3456",
            "00012.010",
            "-4",
            "1e3",
            "1.5.2",
            "9223372036854775",
            "9223372036854775.807",
            "9223372036854775.808",
            "9223372036854776",
            "1234567890123456",
            "12345678901234567",
            "1669783687464181",
            "1669783687464181.5",
            "12a",
            "",
            "+5",
        ]
        .iter()
        .map(|t| t.to_string())
        .collect();
        // A spread of timestamps and durations as profilers print them.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Up to 16 integer digits, the fast path's limit.
            let int = (x >> 8) % 10u64.pow((x % 17) as u32);
            let frac = match x % 4 {
                0 => String::new(),
                1 => format!(".{}", x % 10),
                2 => format!(".{:03}", x % 1000),
                _ => format!(".{:04}", x % 10000),
            };
            texts.push(format!("{int}{frac}"));
        }
        for t in &texts {
            if let Some(fast) = micros_fast(t.as_bytes()) {
                assert_eq!(Some(fast), micros_general(t), "{t}");
            }
        }
        assert_eq!(
            micros_fast(b"1669783687464181.5"),
            Some(1_669_783_687_464_181_500)
        );
        assert_eq!(
            micros_fast(b"1669783687464181"),
            Some(1_669_783_687_464_181_000)
        );
        assert_eq!(micros_fast(b"16697836874641812"), None);
        assert_eq!(micros_fast(b"1669783687464181234"), None);
        assert_eq!(micros_fast(b"98765432.105"), Some(98_765_432_105));
        assert_eq!(micros_fast(b"12345678x"), None);
        for word in [*b"00000000", *b"99999999", *b"12345678", *b"90807060"] {
            let text = std::str::from_utf8(&word).expect("digits");
            assert!(eight_digits(u64::from_le_bytes(word)), "{text}");
            assert_eq!(
                eight_digits_value(u64::from_le_bytes(word)),
                text.parse::<u64>().expect("digits"),
            );
        }
        for c in (0..=255u8).filter(|c| !c.is_ascii_digit()) {
            for at in 0..8 {
                let mut word = *b"55555555";
                word[at] = c;
                assert!(!eight_digits(u64::from_le_bytes(word)), "{word:?}");
            }
        }
    }

    #[test]
    fn micros_convert_exactly() {
        check_ns("0", Some(0));
        check_ns("12", Some(12_000));
        check_ns("4458676522690.655", Some(4_458_676_522_690_655));
        check_ns("1.5", Some(1_500));
        check_ns("-3.25", Some(-3_250));
        check_ns("0.0004", Some(0));
        check_ns("0.0005", Some(1));
        check_ns("1.5e3", Some(1_500_000));
        check_ns("abc", None);
        check_ns("", None);
    }

    /// An event's index, byte offset and text.
    type Placed = (usize, u64, String);

    /// Each event's index, offset and text, the top-level members and the event count.
    fn texts_of(json: &str) -> (Vec<Placed>, Vec<(String, String)>, usize) {
        let path = Path::new("t.json");
        let mut texts = Vec::new();
        let top = read_event_texts(json.as_bytes(), path, |index, offset, text| {
            texts.push((index, offset, String::from_utf8_lossy(text).into_owned()));
            Ok(())
        })
        .expect("test input is a trace");
        let members = top
            .members
            .iter()
            .map(|(k, v)| (k.clone(), v.get().to_string()))
            .collect();
        (texts, members, top.event_count)
    }

    #[test]
    fn event_texts_are_the_raw_events_texts() {
        let json = concat!(
            "\u{feff}{\"a\": [1, {\"b\": \"]\"}], \"traceEvents\": [ \n",
            r#"{"ph": "X", "name": "k}\"[", "args": {"x": [1, {"y": "}"}]}},"#,
            "\n\t{\"ph\": \"M\"} , {}\n], \"z\": \"end\"}\n"
        );
        let mut expect = Vec::new();
        let top = read_raw_events(json.as_bytes(), Path::new("t.json"), |ev| {
            expect.push((ev.index, ev.offset, ev.json.to_string()));
            Ok(())
        })
        .expect("test input is a trace");
        let (texts, members, count) = texts_of(json);
        assert_eq!(texts, expect);
        assert_eq!((texts.len(), count), (3, top.event_count));
        assert_eq!(
            members,
            [
                ("a".to_string(), r#"[1, {"b": "]"}]"#.to_string()),
                ("z".to_string(), r#""end""#.to_string())
            ]
        );
        // The array format, and a structural error, as the raw reader gives them.
        assert_eq!(
            texts_of("[{\"ph\":\"i\"}]").0,
            [(0, 1, "{\"ph\":\"i\"}".to_string())]
        );
        let err = read_event_texts(
            &b"{\"traceEvents\": [{\"ph\": 1}"[..],
            Path::new("t.json"),
            |_, _, _| Ok(()),
        )
        .expect_err("a truncated trace");
        assert!(matches!(err, Error::Truncated { .. }), "{err:?}");
    }

    #[test]
    fn ids_accept_numbers_and_strings() {
        let ids: Vec<Id> = serde_json::from_str(
            r#"[1, "Spans", 18446744073709551615, 2.0, 1e20, 18446744073709551617, 3.5, "a\"b"]"#,
        )
        .expect("test input is valid");
        assert_eq!(ids[0], Id::Int(1));
        assert_eq!(ids[1], Id::Str("Spans".into()));
        assert_eq!(ids[2], Id::Str("18446744073709551615".into()));
        assert_eq!(ids[3], Id::Int(2));
        // Numbers that are not 64-bit integers keep their text, never rounded or wrapped.
        assert_eq!(ids[4], Id::Str("1e20".into()));
        assert_eq!(ids[5], Id::Str("18446744073709551617".into()));
        assert_eq!(ids[6], Id::Str("3.5".into()));
        assert_eq!(ids[7], Id::Str("a\"b".into()));
        let numbers: Vec<bool> = ids.iter().map(Id::is_number_text).collect();
        assert_eq!(
            numbers,
            [false, false, true, false, true, true, true, false]
        );
    }
}
