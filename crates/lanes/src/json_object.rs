//! JSON objects of one event, parsed with their values kept as raw text so that a rewrite
//! changes only the keys it sets, and the raw values and numbers the rewriting writes.

use std::borrow::Cow;
use std::io::Write;
use std::path::Path;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::Error;

/// The decimal digits of `v` (with a `-` when negative), in `buf`: what `v.to_string()`
/// gives, without the formatting machinery (a fifth of the main thread's write of
/// df_index_resolver's 67k rewritten tids went to `core::fmt`).
pub(crate) fn decimal(v: i64, buf: &mut [u8; 20]) -> &[u8] {
    let mut n = v.unsigned_abs();
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    &buf[at..]
}

pub(crate) fn write_json_string(out: &mut impl Write, s: &str) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, s).map_err(std::io::Error::other)
}

/// A JSON object as its members in order, each value kept as raw text (borrowed from
/// the parsed text where possible), so that editing one member leaves every other byte
/// as it was.
#[derive(Debug, Clone, Default)]
pub(crate) struct Object<'a>(pub Vec<(Cow<'a, str>, Cow<'a, RawValue>)>);

use chrome_reader::json::BorrowedKey as Key;

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

/// The object `text` (valid JSON, already parsed once) with its `tid` member set to `tid`
/// (the last one when the key repeats, a new last member when absent), written as
/// [`Object::to_json`] writes it after [`Object::set`]. Where the members are walked
/// without a parse (keys without escapes, see `chrome_reader::json`) they are copied as
/// they are; else `text` is parsed. The parse was 83M of a compaction's 3,567M
/// instructions on df_index_resolver (the flow endpoints it moves).
pub(crate) fn with_tid(text: &str, tid: i64) -> String {
    let mut out = Vec::with_capacity(text.len() + 24);
    push_with_tid(text, tid, &mut out);
    String::from_utf8(out).expect("members of a str and ASCII punctuation are UTF-8")
}

/// [`with_tid`], appended to `out` (a buffer the caller reuses: the compaction writes
/// every flow endpoint it moves this way, without a `String` of each).
pub(crate) fn push_with_tid(text: &str, tid: i64, out: &mut Vec<u8>) {
    if !push_walked_with_tid(text, tid, out) {
        let mut object = Object::parse(text).expect("a text retidded was parsed as an object");
        object.set("tid", raw_i64(tid));
        out.extend_from_slice(object.to_json().as_bytes());
    }
}

/// [`push_with_tid`] where the scanner walks the members of `text` (see
/// `chrome_reader::json`); `false`, with nothing appended, where it does not (keys with
/// escapes, or not an object), which only a parse can rewrite (and check).
pub(crate) fn push_walked_with_tid(text: &str, tid: i64, out: &mut Vec<u8>) -> bool {
    let mut digits = [0u8; 20];
    let tid_text = decimal(tid, &mut digits);
    let mark = out.len();
    // Written as the members are walked, the first `tid` (if any) set; a text with several
    // (which the last one counts for) is written once more, with that one set.
    match push_members_with_tid(text.as_bytes(), tid_text, 1, out) {
        None => {
            out.truncate(mark);
            false
        }
        Some(tids) if tids > 1 => {
            out.truncate(mark);
            push_members_with_tid(text.as_bytes(), tid_text, tids, out).is_some()
        }
        Some(_) => true,
    }
}

/// The members of the object `bytes` written as [`Object::to_json`] writes them, the
/// `nth` `tid` member's value (counting from 1) replaced by `tid_text`, and a last `tid`
/// member added where there is none; the number of `tid` members, or `None` (with a part
/// written) where the scanner does not walk the members.
fn push_members_with_tid(
    bytes: &[u8],
    tid_text: &[u8],
    nth: usize,
    out: &mut Vec<u8>,
) -> Option<usize> {
    use chrome_reader::json::{scan_members, value_end};
    let (mut members, mut tids) = (0usize, 0usize);
    out.push(b'{');
    let walked = scan_members(bytes, 0, &mut |key, value| {
        let end = value_end(bytes, value)?;
        if members > 0 {
            out.push(b',');
        }
        members += 1;
        // A key without escapes is its own JSON text (`push_json_string` leaves it so).
        out.push(b'"');
        out.extend_from_slice(key);
        out.extend_from_slice(b"\":");
        let is_tid = key == b"tid";
        tids += usize::from(is_tid);
        out.extend_from_slice(if is_tid && tids == nth {
            tid_text
        } else {
            &bytes[value..end]
        });
        Some(end)
    });
    if walked != Some(bytes.len()) {
        return None;
    }
    if tids == 0 {
        if members > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"\"tid\":");
        out.extend_from_slice(tid_text);
    }
    out.push(b'}');
    Some(tids)
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
) -> Result<String, Error> {
    let rewrite_err = |message: String| Error::Rewrite {
        path: path.to_path_buf(),
        index,
        message,
    };
    let mut object = Object::parse(text).map_err(|e| rewrite_err(e.to_string()))?;
    edit(&mut object).map_err(rewrite_err)?;
    Ok(object.to_json())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_is_to_string() {
        let mut values = vec![0, 1, -1, 9, 10, -10, 100, i64::MAX, i64::MIN];
        let mut v: i64 = 7;
        while let Some(next) = v.checked_mul(3) {
            values.extend([v, -v, v - 1, 1 - v]);
            v = next;
        }
        for v in values {
            let mut buf = [0u8; 20];
            assert_eq!(decimal(v, &mut buf), v.to_string().as_bytes(), "{v}");
        }
    }

    /// The walked copy is the parse-and-write, byte for byte, on texts with spaces,
    /// a repeated or absent `tid`, nested values, and keys with escapes (parsed).
    #[test]
    fn with_tid_writes_what_set_and_to_json_write() {
        let texts = [
            r#"{"ph": "f", "id": 5, "pid": 1, "tid": 7, "ts": 9.5, "cat": "ac2g", "name": "ac2g", "bp": "e"}"#,
            r#"{"tid":1,"args":{"tid":3,"s":"a}\"b,"},"tid" : 2 ,"x":[1,{"y":"]"}]}"#,
            r#"{ "ph":"s" , "name" : "n\"q" }"#,
            r#"{}"#,
            r#"{"tid": 1, "a": 2, "tid": 3, "b": {}, "tid": 4, "c": 5}"#,
            r#"{"t\u0069d": 4, "tid": 5}"#,
            r#"{"ts": -1.5e3, "tid": "thread 1", "b": true, "n": null}"#,
        ];
        for text in texts {
            for tid in [0, -3, 1_234_567_890_123] {
                let mut object = Object::parse(text).expect("valid JSON");
                object.set("tid", raw_i64(tid));
                assert_eq!(with_tid(text, tid), object.to_json(), "{text}");
            }
        }
    }
}
