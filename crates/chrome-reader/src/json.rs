//! Walking JSON text that is already known to be valid (the reader checked it: an event's
//! text, its `args`): the members of an object and where a value ends, found by looking
//! only for quotes, escapes and the brackets of the value's own kind. On text that is not
//! valid JSON the answers are unspecified (but never a panic).

/// Reads the members of the JSON object starting at `bytes[start]` (valid JSON), in
/// order: `member(key, value start)` reads or skips the value and says where it ends.
/// The index past the object; `None` if it is not an object, a key has escapes (whose
/// text is not the key) or `member` gives up.
pub fn scan_members(
    bytes: &[u8],
    start: usize,
    member: &mut dyn FnMut(&[u8], usize) -> Option<usize>,
) -> Option<usize> {
    let mut i = start;
    if *bytes.get(i)? != b'{' {
        return None;
    }
    i = skip_ws(bytes, i + 1);
    if *bytes.get(i)? == b'}' {
        return Some(i + 1);
    }
    loop {
        // Keys are short: a byte loop beats a search there.
        if *bytes.get(i)? != b'"' {
            return None;
        }
        let key_len = bytes
            .get(i + 1..)?
            .iter()
            .position(|&b| b == b'"' || b == b'\\')?;
        let key_end = i + 1 + key_len;
        if bytes[key_end] != b'"' {
            return None;
        }
        let key = &bytes[i + 1..key_end];
        i = skip_ws(bytes, key_end + 1);
        if *bytes.get(i)? != b':' {
            return None;
        }
        let value_end = member(key, skip_ws(bytes, i + 1))?;
        i = skip_ws(bytes, value_end);
        match *bytes.get(i)? {
            b',' => i = skip_ws(bytes, i + 1),
            b'}' => return Some(i + 1),
            _ => return None,
        }
    }
}

/// The index of the first byte at or after `i` that is not JSON whitespace.
pub fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while bytes
        .get(i)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        i += 1;
    }
    i
}

/// The index past the string starting at `bytes[i]` (a `"`).
fn string_end(bytes: &[u8], mut i: usize) -> Option<usize> {
    if *bytes.get(i)? != b'"' {
        return None;
    }
    i += 1;
    loop {
        i += memchr::memchr2(b'"', b'\\', bytes.get(i..)?)?;
        match bytes[i] {
            b'"' => return Some(i + 1),
            _ => i += 2,
        }
    }
}

/// The index past the value starting at `bytes[i]`. In valid JSON an object's braces
/// (and an array's brackets) balance by themselves outside strings, so only they and
/// the strings are looked for.
pub fn value_end(bytes: &[u8], mut i: usize) -> Option<usize> {
    let (open, close) = match *bytes.get(i)? {
        b'"' => return string_end(bytes, i),
        b'{' => (b'{', b'}'),
        b'[' => (b'[', b']'),
        _ => {
            let scalar_start = i;
            while bytes
                .get(i)
                .is_some_and(|b| !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
            {
                i += 1;
            }
            return (i > scalar_start).then_some(i);
        }
    };
    let mut depth = 0usize;
    loop {
        i += memchr::memchr3(b'"', open, close, bytes.get(i..)?)?;
        match bytes[i] {
            b'"' => i = string_end(bytes, i)?,
            b if b == open => {
                depth += 1;
                i += 1;
            }
            _ => {
                depth -= 1;
                i += 1;
                if depth == 0 {
                    return Some(i);
                }
            }
        }
    }
}

/// A JSON object's key for serde, borrowed from the text where it has no escape (owned
/// where it has): `map.next_key::<BorrowedKey>()` reads members without a `String` each.
pub struct BorrowedKey<'de>(pub std::borrow::Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for BorrowedKey<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> serde::de::Visitor<'de> for KeyVisitor {
            type Value = BorrowedKey<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<BorrowedKey<'de>, E> {
                Ok(BorrowedKey(std::borrow::Cow::Borrowed(v)))
            }

            fn visit_str<E>(self, v: &str) -> Result<BorrowedKey<'de>, E> {
                Ok(BorrowedKey(std::borrow::Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_and_value_ends_of_checked_json() {
        let text = br#"{ "a": 1.5e3, "b" : {"c": [1, "]}"], "d": {}}, "e": "x\"y", "f": null }"#;
        let mut seen = Vec::new();
        let end = scan_members(text, 0, &mut |key, start| {
            let end = value_end(text, start)?;
            seen.push((
                String::from_utf8_lossy(key).into_owned(),
                String::from_utf8_lossy(&text[start..end]).into_owned(),
            ));
            Some(end)
        });
        assert_eq!(end, Some(text.len()));
        let expect = [
            ("a", "1.5e3"),
            ("b", r#"{"c": [1, "]}"], "d": {}}"#),
            ("e", r#""x\"y""#),
            ("f", "null"),
        ];
        let seen: Vec<(&str, &str)> = seen.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(seen, expect);
        assert_eq!(scan_members(b"{}", 0, &mut |_, _| None), Some(2));
        // A key with escapes, or a text that is no object, is for a full parser.
        let escaped = br#"{"t\u0069d": 7}"#;
        assert_eq!(
            scan_members(escaped, 0, &mut |_, s| value_end(escaped, s)),
            None
        );
        assert_eq!(scan_members(b"[1]", 0, &mut |_, s| Some(s)), None);
        assert_eq!(skip_ws(b" \t\n\r x", 0), 5);
    }
}
