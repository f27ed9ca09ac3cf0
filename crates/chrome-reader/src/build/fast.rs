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

mod words;

/// How the fast parser reads `args` into `Self`: `Some(None)` for `null`, `None` to give
/// up on the event.
pub(crate) trait FastArgs<'a>: Sized {
    fn read(p: &mut P<'a>) -> Option<Option<Self>>;

    /// [`FastArgs::read`] into `slot`: an impl for a large `Self` reads it in place
    /// rather than moving it there.
    fn read_into(p: &mut P<'a>, slot: &mut Option<Self>) -> Option<()> {
        *slot = Self::read(p)?;
        Some(())
    }

    /// Whether the `args` of an event of phase `ph` and category `cat` are to be decoded;
    /// where not, [`FastArgs::unread`] passes over them.
    fn wanted(_ph: &str, _cat: Option<&str>) -> bool {
        true
    }

    /// Passes over `args` that are not wanted, checking them as [`P::skip`] does.
    fn unread(p: &mut P<'a>) -> Option<Option<Self>> {
        Self::read(p)
    }

    /// What `args` read before the phase was known become once it is: themselves, or
    /// [`FastArgs::unread`]'s value where they are not wanted.
    fn settle(self, _ph: &str, _cat: Option<&str>) -> Self {
        self
    }
}

/// The model build's fields, decoded as they are read, where the model reads them
/// (`build::args_wanted`, as `raw::parse_model_event`); elsewhere an object is passed over
/// (checked, not decoded) and reads as [`KnownArgs::NONE`].
impl<'a> FastArgs<'a> for KnownArgs {
    fn read(p: &mut P<'a>) -> Option<Option<Self>> {
        let mut slot = None;
        Self::read_into(p, &mut slot)?;
        Some(slot)
    }

    /// In place: the struct is 400 bytes, and each move of it was a `memcpy` (three an
    /// event, 27M instructions on df_index_resolver, callgrind).
    fn read_into(p: &mut P<'a>, slot: &mut Option<Self>) -> Option<()> {
        if p.peek_is(b'n') {
            p.literal(b"null")?;
            *slot = None;
            return Some(());
        }
        p.args_into(slot.insert(KnownArgs::NONE))
    }

    fn wanted(ph: &str, cat: Option<&str>) -> bool {
        super::args_wanted(ph, cat)
    }

    fn unread(p: &mut P<'a>) -> Option<Option<Self>> {
        if p.peek_is(b'n') {
            p.literal(b"null")?;
            return Some(None);
        }
        // Anything but an object is decoded (or refused) as before.
        if !p.peek_is(b'{') {
            return Self::read(p);
        }
        p.skip(0)?;
        Some(Some(KnownArgs::NONE))
    }

    fn settle(self, ph: &str, cat: Option<&str>) -> Self {
        if self.decoded && !super::args_wanted(ph, cat) {
            KnownArgs::NONE
        } else {
            self
        }
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

    fn wanted(ph: &str, cat: Option<&str>) -> bool {
        A::wanted(ph, cat)
    }

    fn unread(p: &mut P<'a>) -> Option<Option<Self>> {
        let start = p.i;
        let a = A::unread(p)?;
        let text = p.text.get(start..p.i)?;
        Some(a.map(|a| WithText(a, text)))
    }

    fn settle(self, ph: &str, cat: Option<&str>) -> Self {
        WithText(self.0.settle(ph, cat), self.1)
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
    let at = At {
        text,
        start,
        index,
        offset,
        shapes: true,
    };
    event_with(at, |ev| std::mem::replace(ev, RawEvent::empty()))
}

/// Where [`event_with`] reads an event, and what of it it keeps.
pub(crate) struct At<'a> {
    /// The text, which holds the event at `start` (a `{`).
    pub text: &'a str,
    pub start: usize,
    /// The event's index in `traceEvents` and byte offset in the file.
    pub index: usize,
    pub offset: u64,
    /// Whether the shape texts of `args` are copied (see [`P`]).
    pub shapes: bool,
}

/// [`event`], handed to `f` where it was read instead of returned: an event with known
/// `args` is 512 bytes, and each move of it is a `memcpy` (3.1M events, a tenth of the
/// 1 GB synthetic trace's model build went to them).
pub(crate) fn event_with<'a, A: FastArgs<'a>, R>(
    at: At<'a>,
    f: impl FnOnce(&mut RawEvent<'a, A>) -> R,
) -> Option<(R, usize)> {
    let At {
        text,
        start,
        index,
        offset,
        shapes,
    } = at;
    let mut p = P {
        s: text.as_bytes(),
        text,
        i: start,
        shapes,
    };
    // The fields are read straight into the event; `seen` keeps which keys came, since a
    // second sighting gives up, as serde_json errs.
    let mut ev = RawEvent::empty();
    ev.index = index;
    ev.offset = offset;
    let mut ph = None;
    let mut seen = Seen(0);
    // Whether `args` came before the phase or the category (and were decoded, wanted or
    // not: `settle` then decides).
    let mut early_args = false;
    p.eat(b'{')?;
    p.ws();
    if !p.peek_is(b'}') {
        loop {
            let key = p.event_key()?;
            p.colon()?;
            match key {
                EvKey::Ph => ph = seen.first(Seen::PH, p.opt_str()?)?,
                EvKey::Name => ev.name = seen.first(Seen::NAME, p.opt_str()?)?,
                EvKey::Cat => ev.cat = seen.first(Seen::CAT, p.opt_str()?)?,
                EvKey::Bp => ev.bp = seen.first(Seen::BP, p.opt_str()?)?,
                EvKey::S => ev.s = seen.first(Seen::S, p.opt_str()?)?,
                EvKey::Ts => ev.ts = seen.first(Seen::TS, p.number()?)?,
                EvKey::Dur => ev.dur = seen.first(Seen::DUR, p.number()?)?,
                EvKey::Pid => ev.pid = seen.first(Seen::PID, p.id()?)?,
                EvKey::Tid => ev.tid = seen.first(Seen::TID, p.id()?)?,
                EvKey::Id => ev.id = seen.first(Seen::ID, p.id()?)?,
                EvKey::Args => {
                    // Kineto writes the phase and category first: `args` an event's
                    // consumer never reads are passed over, not decoded.
                    seen.first(Seen::ARGS, ())?;
                    match &ph {
                        Some(ph) if !A::wanted(ph, ev.cat.as_deref()) => {
                            ev.args = A::unread(&mut p)?;
                        }
                        _ => {
                            early_args = ph.is_none() || ev.cat.is_none();
                            A::read_into(&mut p, &mut ev.args)?;
                        }
                    }
                }
                EvKey::Other => p.skip(0)?,
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
    if early_args {
        ev.args = ev.args.take().map(|a| a.settle(&ev.ph, ev.cat.as_deref()));
    }
    Some((f(&mut ev), end))
}

/// The known keys an event (or its `args`) has given so far, a bit each.
struct Seen(u32);

impl Seen {
    const PH: u32 = 1;
    const NAME: u32 = 1 << 1;
    const CAT: u32 = 1 << 2;
    const BP: u32 = 1 << 3;
    const S: u32 = 1 << 4;
    const TS: u32 = 1 << 5;
    const DUR: u32 = 1 << 6;
    const PID: u32 = 1 << 7;
    const TID: u32 = 1 << 8;
    const ID: u32 = 1 << 9;
    const ARGS: u32 = 1 << 10;

    /// `value`, if `key` is given for the first time; `None` (give up) for a second time.
    fn first<T>(&mut self, key: u32, value: T) -> Option<T> {
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
    /// Whether CPU ops' shape texts (`Input Dims`, `Input type`, `Concrete Inputs`) are
    /// copied out; where not, they are checked and passed over (`LoadConfig::without_shapes`).
    shapes: bool,
}

/// A key of an event: one the parser reads, or another.
#[derive(Clone, Copy)]
enum EvKey {
    Ph,
    Name,
    Cat,
    Bp,
    S,
    Ts,
    Dur,
    Pid,
    Tid,
    Id,
    Args,
    Other,
}

/// A key of `args`: one the model reads, or another.
#[derive(Clone, Copy)]
enum ArgKey {
    Correlation,
    CorrelationId,
    ExternalId,
    Stream,
    Device,
    Bytes,
    GraphId,
    ProgramId,
    StepNum,
    HloOp,
    HloModule,
    MemcpyDetails,
    Name,
    InputDims,
    InputTypes,
    ConcreteInputs,
    WaitOnStream,
    WaitOnRecord,
    /// `memory bandwidth (GB/s)`, a fraction (its number text read by serde_json).
    MemoryBandwidth,
    Other,
}

impl<'a> P<'a> {
    /// A key (at its opening quote) of the `known` ones that begin with its first byte
    /// (each with its closing quote), recognised by its bytes without scanning it and
    /// matching its text against each: keys are most of the strings of an event. Any other
    /// key is read as [`P::plain_string`] reads it (no escapes), and is `other`.
    #[inline(always)]
    fn key_in<K: Copy>(&mut self, known: &[(&[u8], K)], other: K) -> Option<K> {
        let rest = self.s.get(self.i..)?;
        for &(word, key) in known {
            if rest.starts_with(word) {
                self.i += word.len();
                return Some(key);
            }
        }
        let end = self.i + self.string_body(self.i)?;
        if self.s[end] != b'"' {
            return None;
        }
        self.i = end + 1;
        Some(other)
    }

    /// An event's key, any (see [`P::key_in`]); apart from [`P::event_key`]'s inline path,
    /// whose call it would otherwise make as costly as a key matched here.
    #[inline(never)]
    fn any_event_key(&mut self) -> Option<EvKey> {
        use EvKey::*;
        self.eat(b'"')?;
        match self.s.get(self.i)? {
            b'p' => self.key_in(&[(b"ph\"", Ph), (b"pid\"", Pid)], Other),
            b'c' => self.key_in(&[(b"cat\"", Cat)], Other),
            b'n' => self.key_in(&[(b"name\"", Name)], Other),
            b't' => self.key_in(&[(b"tid\"", Tid), (b"ts\"", Ts)], Other),
            b'd' => self.key_in(&[(b"dur\"", Dur)], Other),
            b'a' => self.key_in(&[(b"args\"", Args)], Other),
            b'i' => self.key_in(&[(b"id\"", Id)], Other),
            b'b' => self.key_in(&[(b"bp\"", Bp)], Other),
            b's' => self.key_in(&[(b"s\"", S)], Other),
            _ => self.key_in(&[], Other),
        }
    }

    /// A key of `args` (see [`P::key_in`]).
    fn arg_key(&mut self) -> Option<ArgKey> {
        use ArgKey::*;
        self.eat(b'"')?;
        match self.s.get(self.i)? {
            b'E' => self.key_in(&[(b"External id\"", ExternalId)], Other),
            b'c' => self.key_in(
                &[
                    (b"correlation\"", Correlation),
                    (b"correlation_id\"", CorrelationId),
                ],
                Other,
            ),
            b's' => self.key_in(&[(b"stream\"", Stream), (b"step_num\"", StepNum)], Other),
            b'd' => self.key_in(&[(b"device\"", Device)], Other),
            b'b' => self.key_in(&[(b"bytes\"", Bytes)], Other),
            b'g' => self.key_in(&[(b"graph id\"", GraphId)], Other),
            b'p' => self.key_in(&[(b"program_id\"", ProgramId)], Other),
            b'h' => self.key_in(&[(b"hlo_op\"", HloOp), (b"hlo_module\"", HloModule)], Other),
            b'm' => self.key_in(
                &[
                    (b"memcpy_details\"", MemcpyDetails),
                    (b"memory bandwidth (GB/s)\"", MemoryBandwidth),
                ],
                Other,
            ),
            b'w' => self.key_in(
                &[
                    (b"wait_on_stream\"", WaitOnStream),
                    (b"wait_on_cuda_event_record_corr_id\"", WaitOnRecord),
                ],
                Other,
            ),
            b'n' => self.key_in(&[(b"name\"", Name)], Other),
            b'I' => self.key_in(
                &[(b"Input Dims\"", InputDims), (b"Input type\"", InputTypes)],
                Other,
            ),
            b'C' => self.key_in(&[(b"Concrete Inputs\"", ConcreteInputs)], Other),
            _ => self.key_in(&[], Other),
        }
    }

    /// Skips whitespace: inline, the one space after a colon or a comma and the check
    /// that nothing follows, which are most calls; a longer run (a newline and the next
    /// line's indentation) is [`P::ws_run`]'s.
    ///
    /// Every byte JSON may have there but whitespace is above a space: one test ends the
    /// call where nothing is to be skipped.
    #[inline(always)]
    fn ws(&mut self) {
        let Some(&c) = self.s.get(self.i) else { return };
        if c > b' ' {
            return;
        }
        if c == b' ' {
            self.i += 1;
            if !matches!(self.s.get(self.i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
                return;
            }
        }
        self.ws_run();
    }

    /// A run of whitespace. After a newline the indentation is passed over eight bytes at
    /// a time: a pretty-printed Kineto trace is a quarter whitespace, most of it the
    /// indentation of its lines.
    #[inline(never)]
    fn ws_run(&mut self) {
        while let Some(&c) = self.s.get(self.i) {
            match c {
                b' ' | b'\r' | b'\t' => self.i += 1,
                b'\n' => {
                    self.i += 1;
                    self.spaces();
                }
                _ => return,
            }
        }
    }

    /// Skips a run of spaces, a word at a time (the first byte that is not a space is the
    /// lowest nonzero byte of the word XOR eight spaces).
    #[inline]
    fn spaces(&mut self) {
        const SPACES: u64 = 0x2020_2020_2020_2020;
        while let Some(word) = self.s.get(self.i..self.i + 8) {
            let Ok(word) = <[u8; 8]>::try_from(word) else {
                return;
            };
            let x = u64::from_le_bytes(word) ^ SPACES;
            if x != 0 {
                self.i += (x.trailing_zeros() / 8) as usize;
                return;
            }
            self.i += 8;
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
    ///
    /// Eight bytes at a time (SWAR): a word's bytes that are a quote, a backslash or below
    /// 0x20 are flagged by the classic zero-byte test, whose lowest flag is always exact
    /// (a borrow only flags bytes above a true one). The byte loop, then `memchr2` for
    /// long strings, took 66 instructions a string on df_index_resolver (callgrind).
    #[inline]
    fn string_body(&self, start: usize) -> Option<usize> {
        const ONES: u64 = 0x0101_0101_0101_0101;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        let rest = self.s.get(start..)?;
        let mut words = rest.chunks_exact(8);
        let mut k = 0;
        for word in words.by_ref() {
            let w = u64::from_le_bytes(word.try_into().ok()?);
            let quote = w ^ (ONES * u64::from(b'"'));
            let backslash = w ^ (ONES * u64::from(b'\\'));
            let zero = |v: u64| v.wrapping_sub(ONES) & !v;
            let flags = (zero(quote) | zero(backslash) | w.wrapping_sub(ONES * 0x20) & !w) & HIGH;
            if flags != 0 {
                let j = k + (flags.trailing_zeros() / 8) as usize;
                return (rest[j] >= 0x20).then_some(j);
            }
            k += 8;
        }
        for (j, &c) in words.remainder().iter().enumerate() {
            match c {
                b'"' | b'\\' => return Some(k + j),
                0..0x20 => return None,
                _ => {}
            }
        }
        None
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
        self.number_end()?;
        self.text.get(start..self.i)
    }

    /// Passes over a JSON number (at its first byte), checked against the grammar.
    #[inline]
    fn number_end(&mut self) -> Option<()> {
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
        Some(())
    }

    fn digits(&mut self) {
        self.i += digit_run(self.s.get(self.i..).unwrap_or_default());
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
                if depth < 90
                    && let Some(end) = self.flat_array_end()
                {
                    self.i = end;
                    return Some(());
                }
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
            _ => self.number_end(),
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
            _ => {
                // The common text (integer microseconds, at most three fractional digits)
                // is converted as it is checked; anything else is checked as before.
                if let Some((len, nanos)) = micros(self.s.get(self.i..)?) {
                    let start = self.i;
                    self.i += len;
                    return Some(Some(Number::with_nanos(
                        self.text.get(start..self.i)?,
                        nanos,
                    )));
                }
                Number::from_json(self.number_text()?).map(Some)
            }
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
    ///
    /// One pass (the number's grammar as [`P::number_text`] checks it, and its value):
    /// ids are most of an event's numbers.
    fn int(&mut self) -> Option<i64> {
        let start = self.i;
        let neg = self.eat(b'-').is_some();
        let rest = self.s.get(self.i..)?;
        let len = digit_run(rest);
        // No digit, a leading zero, a fraction, an exponent or a letter: given up, as the
        // general path reads (or refuses) them.
        if len == 0
            || (rest[0] == b'0' && len > 1)
            || rest
                .get(len)
                .is_some_and(|&c| c == b'.' || c.is_ascii_alphanumeric())
        {
            return None;
        }
        self.i += len;
        if len > 18 {
            // May not fit: checked by the standard parser.
            return self.text.get(start..self.i)?.parse().ok();
        }
        let v = match rest.get(..8).and_then(|w| <[u8; 8]>::try_from(w).ok()) {
            // Up to eight digits in one word: the bytes after them shifted out, zeros
            // (leading zero digits) shifted in.
            Some(word) if len <= 8 => {
                let digits = u64::from_le_bytes(word).wrapping_sub(0x3030_3030_3030_3030);
                crate::raw::eight_digit_values(digits << (8 * (8 - len))) as i64
            }
            _ => {
                let mut v: i64 = 0;
                for &c in &rest[..len] {
                    v = v * 10 + i64::from(c - b'0');
                }
                v
            }
        };
        Some(if neg { -v } else { v })
    }

    /// `args` (an object: a struct read from an array is left to serde_json) into `a`,
    /// which holds no key yet.
    fn args_into(&mut self, a: &mut KnownArgs) -> Option<()> {
        self.eat(b'{')?;
        a.decoded = true;
        let mut seen = Seen(0);
        self.ws();
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            let key = self.arg_key()?;
            self.colon()?;
            match key {
                ArgKey::Correlation => a.correlation = seen.first(1, self.flex_int()?)?,
                ArgKey::CorrelationId => a.correlation_id = seen.first(2, self.flex_int()?)?,
                ArgKey::ExternalId => a.external_id = seen.first(4, self.flex_int()?)?,
                ArgKey::Stream => a.stream = seen.first(8, self.flex_int()?)?,
                ArgKey::Device => a.device = seen.first(16, self.flex_int()?)?,
                ArgKey::Bytes => a.bytes = seen.first(32, self.flex_int()?)?,
                ArgKey::GraphId => a.graph_id = seen.first(64, self.flex_int()?)?,
                ArgKey::ProgramId => a.program_id = seen.first(128, self.flex_int()?)?,
                ArgKey::StepNum => a.step_num = seen.first(256, self.flex_int()?)?,
                ArgKey::HloOp => a.hlo_op = seen.first(512, self.opt_string()?)?,
                ArgKey::HloModule => a.hlo_module = seen.first(1024, self.opt_string()?)?,
                ArgKey::MemcpyDetails => {
                    a.memcpy_details = seen.first(2048, self.opt_string()?)?;
                }
                ArgKey::Name => a.name = seen.first(4096, self.opt_string()?)?,
                ArgKey::InputDims => a.input_dims = seen.first(8192, self.shape_text()?)?,
                ArgKey::InputTypes => a.input_types = seen.first(16384, self.shape_text()?)?,
                ArgKey::ConcreteInputs => {
                    a.concrete_inputs = seen.first(32768, self.shape_text()?)?;
                }
                ArgKey::WaitOnStream => a.wait_on_stream = seen.first(1 << 16, self.flex_int()?)?,
                ArgKey::WaitOnRecord => {
                    a.wait_on_cuda_event_record_corr_id = seen.first(1 << 17, self.flex_int()?)?;
                }
                ArgKey::MemoryBandwidth => {
                    a.memory_bandwidth = seen.first(1 << 18, self.flex_f64()?)?;
                }
                ArgKey::Other => self.skip(1)?,
            }
            self.ws();
            if self.eat(b',').is_some() {
                self.ws();
            } else {
                return self.eat(b'}');
            }
        }
    }

    /// Any value, as its JSON text (as `build::raw_text`).
    fn raw_text(&mut self) -> Option<String> {
        let start = self.i;
        self.skip(1)?;
        Some(self.text.get(start..self.i)?.to_owned())
    }

    /// A shape argument's JSON text, owned, where shapes are kept; elsewhere the value
    /// is checked and passed over, and reads as absent (no copy of a text no one reads).
    fn shape_text(&mut self) -> Option<Option<String>> {
        if self.shapes {
            return self.raw_text().map(Some);
        }
        self.skip(1)?;
        Some(None)
    }

    /// `null` or a string without escapes, owned.
    fn opt_string(&mut self) -> Option<Option<String>> {
        self.opt_str().map(|s| s.map(Cow::into_owned))
    }

    /// As `build::flex_f64`: a number; a string, `null`, booleans, arrays and objects read
    /// as absent. Only the number's text goes through serde_json (the same value as the
    /// whole event's general parse, `float_roundtrip` included), where a memcpy or memset
    /// event's one fraction sent the whole event down the general path (2,920 events,
    /// 52M instructions on df_index_resolver, callgrind). A number out of range gives up.
    fn flex_f64(&mut self) -> Option<Option<f64>> {
        match *self.s.get(self.i)? {
            b'"' => self.plain_string().map(|_| None),
            b'n' => self.literal(b"null").map(|()| None),
            b't' => self.literal(b"true").map(|()| None),
            b'f' => self.literal(b"false").map(|()| None),
            b'[' | b'{' => self.skip(1).map(|()| None),
            _ => serde_json::from_str::<f64>(self.number_text()?)
                .ok()
                .map(Some),
        }
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

/// How many ASCII digits `s` starts with, eight bytes at a time (SWAR): a byte is a digit
/// when its high nibble is 3 both as it is and plus 6. The addition carries out of a byte
/// only where its low nibble is above 9, a byte that is no digit, and a carry only reaches
/// the bytes after it, so the first byte flagged is exact. Timestamps are 16 digits.
#[inline]
fn digit_run(s: &[u8]) -> usize {
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const THREES: u64 = 0x3030_3030_3030_3030;
    const SIXES: u64 = 0x0606_0606_0606_0606;
    // Most runs (ids, durations) end within the first word: tested before any loop.
    if let Some(word) = s.first_chunk::<8>() {
        let w = u64::from_le_bytes(*word);
        let flags = ((w & HIGH) ^ THREES) | ((w.wrapping_add(SIXES) & HIGH) ^ THREES);
        if flags != 0 {
            return (flags.trailing_zeros() / 8) as usize;
        }
    }
    let mut words = s.chunks_exact(8);
    let mut k = 0;
    for word in words.by_ref() {
        let Ok(word) = <[u8; 8]>::try_from(word) else {
            break;
        };
        let w = u64::from_le_bytes(word);
        let flags = ((w & HIGH) ^ THREES) | ((w.wrapping_add(SIXES) & HIGH) ^ THREES);
        if flags != 0 {
            return k + (flags.trailing_zeros() / 8) as usize;
        }
        k += 8;
    }
    k + words
        .remainder()
        .iter()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(words.remainder().len())
}

/// A `ts` or `dur` at the start of `s` in the shape profilers write (up to 16 integer
/// digits without a sign or a leading zero, at most three fractional digits, no exponent,
/// not run into a letter): its length and its microseconds in nanoseconds, read in the
/// pass that checks it, where [`P::number_text`] checked the text and
/// `Number::micros_to_nanos` then read it again. `None` for any other text, or a value
/// beyond i64 nanoseconds, which the general path reads.
#[inline]
fn micros(s: &[u8]) -> Option<(usize, i64)> {
    let int_len = digit_run(s);
    if int_len == 0 || int_len > 16 || (s[0] == b'0' && int_len > 1) {
        return None;
    }
    let mut end = int_len;
    let mut frac = 0;
    if s.get(end) == Some(&b'.') {
        let digits = s.get(end + 1..)?;
        let len = digit_run(digits);
        if len == 0 || len > 3 {
            return None;
        }
        for &c in &digits[..len] {
            frac = frac * 10 + i64::from(c - b'0');
        }
        frac *= [100, 10, 1][len - 1];
        end += 1 + len;
    }
    if s.get(end)
        .is_some_and(|&c| c == b'.' || c.is_ascii_alphanumeric())
    {
        return None;
    }
    let int = i64::try_from(digits_value(s, int_len)).ok()?;
    Some((end, int.checked_mul(1000)?.checked_add(frac)?))
}

/// The value of the `len` (1 to 16) ASCII digits `s` starts with: a word of up to eight
/// of them at a time (the bytes after them shifted out, zeros shifted in), where eight
/// bytes can be read.
#[inline]
fn digits_value(s: &[u8], len: usize) -> u64 {
    let word = |at: usize, n: usize| -> Option<u64> {
        let w = u64::from_le_bytes(s.get(at..at + 8)?.try_into().ok()?);
        let digits = w.wrapping_sub(0x3030_3030_3030_3030);
        Some(crate::raw::eight_digit_values(digits << (8 * (8 - n))))
    };
    let words = if len <= 8 {
        word(0, len)
    } else {
        word(0, len - 8)
            .zip(word(len - 8, 8))
            .map(|(high, low)| high * 100_000_000 + low)
    };
    words.unwrap_or_else(|| {
        s[..len]
            .iter()
            .fold(0, |v, &c| v * 10 + u64::from(c - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast parser's event, if it reads `text`, must be serde_json's to the last field;
    /// returns whether it read it.
    fn check(text: &str) -> bool {
        let path = std::path::Path::new("fast.json");
        let general = crate::raw::parse_model_event(path, 3, 9, text.as_bytes());
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
                    (
                        a.wait_on_stream,
                        a.wait_on_cuda_event_record_corr_id,
                        a.memory_bandwidth,
                    ),
                )
            )
        });
        ev.fields_line((ev.args.is_some(), a))
    }

    #[test]
    fn digit_runs_end_at_the_first_byte_that_is_no_digit() {
        for len in 0..20 {
            for stop in 0..=255u8 {
                let mut s: Vec<u8> = (0..len).map(|i| b"0918273645"[i % 10]).collect();
                s.push(stop);
                s.extend_from_slice(b"12345678");
                let expected = s.iter().position(|c| !c.is_ascii_digit());
                assert_eq!(Some(digit_run(&s)), expected.or(Some(s.len())), "{s:?}");
            }
        }
        assert_eq!(digit_run(b"0123456789"), 10);
        assert_eq!(digit_run(b"1669783687464181, "), 16);
        assert_eq!(digit_run(b""), 0);
    }

    /// `ts` and `dur` read in one pass are the text the grammar check reads, converted as
    /// `Number::micros_to_nanos` converts it; what the pass does not read is left to them.
    #[test]
    fn times_read_in_one_pass_equal_the_text_read_twice() {
        let mut texts: Vec<String> = Vec::new();
        for int_len in 1..=18 {
            let int: String = (0..int_len).map(|i| ["9", "1", "0", "5"][i % 4]).collect();
            for frac in ["", ".", ".5", ".25", ".125", ".0625", "e3", ".5e3", ".5.1"] {
                for end in ["", ",", "}", " ", "a", "0x", "\n"] {
                    texts.push(format!("{int}{frac}{end}"));
                    texts.push(format!("0{frac}{end}"));
                }
            }
        }
        texts.extend(
            ["9223372036854775", "9223372036854776", "-5", "+5", "", "."].map(String::from),
        );
        let mut read = 0;
        for text in &texts {
            let mut p = P {
                s: text.as_bytes(),
                text,
                i: 0,
                shapes: true,
            };
            let twice = p
                .number_text()
                .and_then(Number::from_json)
                .map(|n| (n.text().len(), n.micros_to_nanos()));
            if let Some((len, nanos)) = micros(text.as_bytes()) {
                assert_eq!(twice, Some((len, Some(nanos))), "{text}");
                read += 1;
            }
        }
        assert_eq!(
            micros(b"1669783687464181, "),
            Some((16, 1_669_783_687_464_181_000))
        );
        assert_eq!(micros(b"20.25}"), Some((5, 20_250)));
        assert!(read > 300, "{read} read in one pass");
    }

    /// Without shapes, the shape texts are checked and passed over: absent from the
    /// event, which is otherwise the event read with them; a malformed one is still given up.
    #[test]
    fn shape_texts_are_passed_over_where_shapes_are_not_kept() {
        let read = |text: &str, shapes| {
            let at = At {
                text,
                start: 0,
                index: 0,
                offset: 0,
                shapes,
            };
            event_with(at, |ev: &mut RawEvent<'_, KnownArgs>| {
                let a = ev.args.take().expect("the event has args");
                let shapes = (a.input_dims, a.input_types, a.concrete_inputs);
                (a.external_id, a.correlation, shapes)
            })
        };
        let text = r#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2, "args": {"External id": 7, "Input Dims": [[1, 2], [2, 3]], "Input type": ["float", "float"], "Concrete Inputs": ["", "x\"y"], "correlation": 9}}"#;
        let dims = "[[1, 2], [2, 3]]".to_string();
        let types = r#"["float", "float"]"#.to_string();
        let concrete = r#"["", "x\"y"]"#.to_string();
        let len = text.len();
        assert_eq!(
            read(text, true),
            Some((
                (Some(7), Some(9), (Some(dims), Some(types), Some(concrete))),
                len
            ))
        );
        assert_eq!(
            read(text, false),
            Some(((Some(7), Some(9), (None, None, None)), len))
        );
        let malformed = text.replace("[2, 3]]", "[2, 3],]");
        assert_eq!(read(&malformed, false), None);
    }

    /// The flat array scan ends where the general loop ends, or leaves the array to it;
    /// and it reads every shape text of the common form.
    #[test]
    fn flat_arrays_end_where_the_general_skip_ends_or_are_left_to_it() {
        let general_end = |text: &str| {
            let mut p = P {
                s: text.as_bytes(),
                text,
                i: 0,
                shapes: true,
            };
            // The general loop alone: at the depth where the flat scan is not tried.
            p.skip(95).map(|()| p.i)
        };
        let flat_end = |text: &str| {
            let p = P {
                s: text.as_bytes(),
                text,
                i: 0,
                shapes: true,
            };
            p.flat_array_end()
        };
        let read = [
            "[]",
            "[[]]",
            "[[256, 1], [], []]",
            "[[16, 1], [1, 256]]",
            r#"["float", "Scalar", "Scalar"]"#,
            r#"["float", "", "", ""]"#,
            r#"[[0],[10,0],"x",[1234567890123456789012345]]"#,
            r#"["é∑", "a b"], "next": 1"#,
            "[[1, 2]]}",
        ];
        for text in read {
            let end = flat_end(text);
            assert!(end.is_some(), "not read: {text}");
            assert_eq!(end, general_end(text), "{text}");
        }
        let left = [
            "[ ]",
            "[1]",
            "[[1,  2]]",
            "[[1 ,2]]",
            "[[01]]",
            "[[-1]]",
            "[[1.5]]",
            "[[1e3]]",
            "[[1a]]",
            "[[1,]]",
            "[[1],]",
            "[[1], ]",
            "[[1]",
            "[[1], [2]",
            "[[1]\n]",
            r#"["a\"b"]"#,
            r#"["a\u0041"]"#,
            "[\"tab\tin\"]",
            r#"["unterminated]"#,
            "[true]",
            "[null]",
            "[{}]",
            "[[[1]]]",
            r#"[["x"]]"#,
            "[",
            "[[",
            "[[1, ",
        ];
        for text in left {
            assert_eq!(flat_end(text), None, "read: {text}");
        }
        // Where the general loop reads them, it gives what it always gave.
        assert_eq!(general_end("[[1,  2]]"), Some(9));
        assert_eq!(general_end("[[1],]"), None);
        // And a whole event with such texts is still serde_json's, or left to it.
        for args in [
            r#"{"Input Dims": [[1, 2], []], "Concrete Inputs": ["", "x"], "grid": [1, 2, 3]}"#,
            r#"{"Input Dims": [[1,  2], [ ]], "Input type": ["a\"b", "é"]}"#,
            r#"{"Input Dims": [[1, 2],]}"#,
            r#"{"Input Dims": [[01]]}"#,
            r#"{"Input Dims": [[1]] "x": 1}"#,
        ] {
            let text = format!(
                r#"{{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2, "args": {args}}}"#
            );
            let fast = check(&text);
            let serde_reads = crate::raw::parse_model_event(
                std::path::Path::new("fast.json"),
                0,
                0,
                text.as_bytes(),
            )
            .is_ok();
            assert_eq!(fast, serde_reads, "{text}");
        }
    }

    /// Keys recognised by their words are the keys the byte match recognises: a key that
    /// only starts like a known one, or ends a text, takes the general match.
    #[test]
    fn event_keys_read_by_their_words_are_the_keys_matched_byte_by_byte() {
        let keys = [
            "\"ph\"",
            "\"pid\"",
            "\"cat\"",
            "\"name\"",
            "\"tid\"",
            "\"ts\"",
            "\"dur\"",
            "\"args\"",
            "\"id\"",
            "\"bp\"",
            "\"s\"",
            "\"phx\"",
            "\"pi\"",
            "\"p\"",
            "\"catx\"",
            "\"names\"",
            "\"tsx\"",
            "\"t\"",
            "\"ids\"",
            "\"bpp\"",
            "\"dura\"",
            "\"argz\"",
            "\"x\"",
            "\"\"",
            "\"p\\\"h\"",
            "\"a",
        ];
        for key in keys {
            for tail in ["", ": 1", ":1, \"ph\": \"X\"}", "     "] {
                let text = format!("{key}{tail}");
                let mut fast = P {
                    s: text.as_bytes(),
                    text: &text,
                    i: 0,
                    shapes: true,
                };
                let mut slow = P {
                    s: text.as_bytes(),
                    text: &text,
                    i: 0,
                    shapes: true,
                };
                let by_words = fast.event_key().map(|k| (k as u8, fast.i));
                let by_bytes = slow.any_event_key().map(|k| (k as u8, slow.i));
                assert_eq!(by_words, by_bytes, "{text}");
            }
        }
    }

    #[test]
    fn colons_with_any_whitespace_are_read_as_before() {
        for (text, end) in [
            (": 1", Some(2)),
            (":1", Some(1)),
            (" : 1", Some(3)),
            (":  1", Some(3)),
            (": \n 1", Some(4)),
            (":\t1", Some(2)),
            (": ", Some(2)),
            ("; 1", None),
            (" 1", None),
        ] {
            let mut p = P {
                s: text.as_bytes(),
                text,
                i: 0,
                shapes: true,
            };
            assert_eq!(p.colon().map(|()| p.i), end, "{text:?}");
        }
    }

    #[test]
    fn integers_are_read_as_the_standard_parser_reads_them() {
        let int = |text: &str| {
            let mut p = P {
                s: text.as_bytes(),
                text,
                i: 0,
                shapes: true,
            };
            p.int().map(|v| (v, p.i))
        };
        for (text, end) in [
            ("0", 1),
            ("7, ", 1),
            ("-42}", 3),
            ("12345678", 8),
            ("12345678 ", 8),
            ("90817263,\"x\": 1", 8),
            ("123456789", 9),
            ("785244, \"ts\"", 6),
            ("-9223372036854775808", 20),
            ("9223372036854775807]", 19),
        ] {
            let want: i64 = text[..end].parse().expect("an integer");
            assert_eq!(int(text), Some((want, end)), "{text}");
        }
        for text in ["", "-", "01", "1.5", "1e3", "12a", "9223372036854775808"] {
            assert_eq!(int(text), None, "{text}");
        }
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
            r#"{"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 1, "tid": 2, "ts": 5, "dur": 1, "args": {"stream": 7, "correlation": 9, "wait_on_stream": 13, "wait_on_cuda_event_record_corr_id": 8}}"#,
            r#"{"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 1, "tid": 7, "ts": 5, "dur": 1, "args": {"device": 1, "stream": 7, "correlation": 77403, "bytes": 128, "memory bandwidth (GB/s)": 0.08888888888888889}}"#,
            r#"{"ph": "X", "cat": "gpu_memcpy", "args": {"memory bandwidth (GB/s)": 12.5}}"#,
            r#"{"ph": "X", "cat": "gpu_memcpy", "args": {"memory bandwidth (GB/s)": 2.2250738585072011e-308}}"#,
            r#"{"ph": "X", "cat": "gpu_memcpy", "args": {"memory bandwidth (GB/s)": -0}}"#,
            r#"{"ph": "X", "cat": "gpu_memcpy", "args": {"memory bandwidth (GB/s)": 18446744073709551616}}"#,
            r#"{"ph": "X", "cat": "gpu_memcpy", "args": {"memory bandwidth (GB/s)": 9007199254740993}}"#,
            r#"{"ph": "X", "cat": "gpu_memcpy", "args": {"memory bandwidth (GB/s)": "fast"}}"#,
            r#"{"ph": "X", "cat": "gpu_memcpy", "args": {"memory bandwidth (GB/s)": [1.5]}}"#,
            r#"{"ph": "X", "cat": "gpu_memcpy", "args": {"memory bandwidth (GB/s)": null}}"#,
            "{\n    \"ph\": \"X\", \"cat\": \"kernel\",\n    \"ts\": 5, \"dur\": 1,\n    \"args\": {\n      \"stream\": 7,\r\n\t \"correlation\": 9\n                   }\n  \n}",
            "{\n\n\n                \"ph\"\n :\r\n        \"i\"\n}",
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
            r#"{"ph": "X", "cat": "gpu_memcpy", "args": {"memory bandwidth (GB/s)": 1e400}}"#,
            r#"{"ph": "X", "cat": "gpu_memcpy", "args": {"memory bandwidth (GB/s)": 1, "memory bandwidth (GB/s)": 2}}"#,
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

    /// Every event of every shared trace (Kineto and JAX JSON): where the model reads
    /// `args`, the lazy read (fast and general alike) decodes exactly what the eager decode
    /// of today gives; where it does not, nothing is decoded and the text still decodes to
    /// that value later ("readable later"); and the text handed to a sink (a frame's
    /// `args_*` columns) is the `args` text of the raw reader.
    #[test]
    fn args_the_model_asks_for_equal_the_eager_decode_on_every_shared_trace() {
        let Some(dir) = test_support::traces_dir(
            "args_the_model_asks_for_equal_the_eager_decode_on_every_shared_trace",
        ) else {
            return;
        };
        let path = std::path::Path::new("t.json");
        let (mut asked, mut left, mut files) = (0usize, 0usize, 0usize);
        for (file, text) in test_support::json_texts(&dir, 70) {
            let mut checked = 0;
            let res = crate::read_raw_events(&text[..], path, |raw| {
                let json = raw.json;
                // Today's decode, which a caller reading the text later still gets.
                let eager = crate::raw::parse_event::<KnownArgs>(path, 0, 0, json.as_bytes());
                let general = crate::raw::parse_model_event(path, 0, 0, json.as_bytes())
                    .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                let fast = event::<KnownArgs>(json, 0, 0, 0).map(|(ev, _)| ev);
                let wanted = super::super::args_wanted(&raw.ph, raw.cat.as_deref());
                let has_object = raw.args.is_some_and(|a| a.get().starts_with('{'));
                for lazy in std::iter::once(&general).chain(fast.as_ref()) {
                    if wanted || !has_object {
                        let eager = eager.as_ref().expect("the model decodes these args");
                        assert_eq!(show(lazy), show(eager), "{}: {json}", file.display());
                    } else {
                        let a = lazy.args.as_ref().expect("the event has args");
                        assert!(!a.decoded, "{}: decoded {json}", file.display());
                        assert_eq!(show(lazy), show(&general), "{}", file.display());
                    }
                }
                if wanted && has_object {
                    asked += 1;
                    assert!(eager.is_ok_and(|e| e.args.is_some_and(|a| a.decoded)));
                } else if has_object {
                    left += 1;
                }
                // The sink's text (`Both`, a frame's `args_*`) is the raw reader's.
                if let Some((WithText(_, args), _)) =
                    event::<WithText<'_, KnownArgs>>(json, 0, 0, 0)
                        .and_then(|(ev, e)| ev.args.map(|a| (a, e)))
                {
                    assert_eq!(Some(args), raw.args.map(serde_json::value::RawValue::get));
                }
                checked += 1;
                Ok(())
            });
            if res.is_ok() {
                files += 1;
                assert!(checked > 0 || file.to_string_lossy().contains("empty"));
            }
        }
        assert!(files >= 60, "{files} traces read");
        assert!(
            asked > 100_000 && left > 10_000,
            "{asked} asked, {left} left"
        );
    }
}
