//! JSON objects of one event, parsed with their values kept as raw text so that a rewrite
//! changes only the keys it sets, and the raw values and numbers the rewriting writes.

use std::borrow::Cow;
use std::io::Write;
use std::path::Path;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::Error;

pub(crate) fn write_json_string(out: &mut impl Write, s: &str) -> std::io::Result<()> {
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
