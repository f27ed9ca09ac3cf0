//! The text of an event's `args` split into members and scalars, for the frame's `args_*`
//! columns, without building a JSON value tree.

use std::borrow::Cow;

use chrome_reader::json::{skip_ws, value_end};

use crate::frame::Val;

/// Calls `f` with each member of `args` (checked JSON text), its key and its value's text.
/// An `args` that is not an object (rare, never Kineto) is one member with the empty key.
pub(crate) fn for_each_arg(args: &str, mut f: impl FnMut(&str, &str)) {
    if args.starts_with('{') {
        for_each_member(args, |key, value| f(&key, value));
    } else {
        f("", args);
    }
}

/// Calls `f` with each member of the JSON object `text` (checked JSON, as chrome-reader
/// hands `args` on): its key, unescaped, and its value's text.
fn for_each_member(text: &str, mut f: impl FnMut(Cow<'_, str>, &str)) {
    let b = text.as_bytes();
    let mut i = 1;
    loop {
        i = skip_ws(b, i);
        if b.get(i) != Some(&b'"') {
            return; // `}`: the end (or an empty object)
        }
        let Some(key_end) = value_end(b, i) else {
            return;
        };
        let raw_key = &text[i..key_end];
        let key = if raw_key.contains('\\') {
            match serde_json::from_str::<String>(raw_key) {
                Ok(k) => Cow::Owned(k),
                Err(_) => return,
            }
        } else {
            Cow::Borrowed(&raw_key[1..raw_key.len() - 1])
        };
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return;
        }
        let start = skip_ws(b, i + 1);
        let Some(end) = value_end(b, start) else {
            return;
        };
        f(key, &text[start..end]);
        i = skip_ws(b, end);
        if b.get(i) != Some(&b',') {
            return;
        }
        i += 1;
    }
}

/// The text of a JSON value → a scalar, its string (if any) appended to `text`; `null` →
/// none; arrays and objects keep their JSON text.
pub(crate) fn scalar(t: &str, text: &mut String) -> Option<Val> {
    let t = t.trim();
    let first = *t.as_bytes().first()?;
    let start = text.len();
    Some(match first {
        b'"' => {
            // The string was checked; without escapes its text is the value.
            if t.contains('\\') {
                text.push_str(&serde_json::from_str::<String>(t).ok()?);
            } else {
                text.push_str(&t[1..t.len() - 1]);
            }
            Val::Str(start, text.len())
        }
        b't' => Val::Bool(true),
        b'f' => Val::Bool(false),
        b'n' => return None,
        b'[' | b'{' => {
            text.push_str(t);
            Val::Str(start, text.len())
        }
        _ if t.bytes().any(|c| matches!(c, b'.' | b'e' | b'E')) => Val::Float(t.parse().ok()?),
        // Integers beyond i64 (NCCL comm ids) keep their exact text.
        _ => match t.parse::<i64>() {
            Ok(i) => Val::Int(i),
            Err(_) => {
                text.push_str(t);
                Val::Str(start, text.len())
            }
        },
    })
}
