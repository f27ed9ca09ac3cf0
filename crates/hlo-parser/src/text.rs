//! Shared pieces of HLO text: shapes, quoting, and a cursor over one line.

use std::fmt::Write;

use crate::Error;
use crate::model::{ArrayShape, ElementType, Layout, ProgramShape, Shape};

/// `1,2,3`.
pub(crate) fn ints(values: &[i64]) -> String {
    let mut out = String::new();
    for (index, value) in values.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        let _ = write!(out, "{value}");
    }
    out
}

/// A C-escaped, double-quoted string.
pub(crate) fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            ch if (ch as u32) < 0x20 || ch == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", ch as u32);
            }
            ch => out.push(ch),
        }
    }
    out.push('"');
    out
}

/// The inverse of [`quote`]; text that is not quoted comes back as it is.
pub(crate) fn unquote_lossy(text: &str) -> String {
    let mut cursor = Cursor::new(text, 0);
    match cursor.quoted() {
        Ok(value) if cursor.at_end() => value,
        _ => text.to_owned(),
    }
}

pub(crate) fn shape_text(shape: &Shape) -> String {
    let mut out = String::new();
    write_shape(&mut out, shape);
    out
}

pub(crate) fn write_shape(out: &mut String, shape: &Shape) {
    match shape {
        Shape::Tuple(elements) => {
            out.push('(');
            for (index, element) in elements.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                write_shape(out, element);
            }
            out.push(')');
        }
        Shape::Token => out.push_str("token[]"),
        Shape::Opaque => out.push_str("opaque[]"),
        Shape::Array(array) => {
            out.push_str(array.element_type.name());
            out.push('[');
            for (index, dimension) in array.dimensions.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                if array.dynamic.get(index).copied().unwrap_or(false) {
                    out.push_str("<=");
                }
                let _ = write!(out, "{dimension}");
            }
            out.push(']');
            if let Some(layout) = &array.layout {
                out.push('{');
                out.push_str(&ints(&layout.minor_to_major));
                if !layout.tiles.is_empty()
                    || layout.element_size_in_bits != 0
                    || layout.memory_space != 0
                {
                    out.push(':');
                    if !layout.tiles.is_empty() {
                        out.push('T');
                        for tile in &layout.tiles {
                            let _ = write!(out, "({})", ints(tile));
                        }
                    }
                    if layout.element_size_in_bits != 0 {
                        let _ = write!(out, "E({})", layout.element_size_in_bits);
                    }
                    if layout.memory_space != 0 {
                        let _ = write!(out, "S({})", layout.memory_space);
                    }
                }
                out.push('}');
            }
        }
    }
}

/// `(f32[8]{0}, s32[])->f32[8]{0}`.
pub(crate) fn program_shape_text(shape: &ProgramShape) -> String {
    let parameters: Vec<String> = shape.parameters.iter().map(shape_text).collect();
    format!("({})->{}", parameters.join(", "), shape_text(&shape.result))
}

/// A cursor over one line of HLO text; errors carry the 1-based line and column.
pub(crate) struct Cursor<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(text: &'a str, line: usize) -> Cursor<'a> {
        Cursor { text, pos: 0, line }
    }

    pub(crate) fn error(&self, message: impl Into<String>) -> Error {
        Error::Parse {
            line: self.line,
            column: self.text[..self.pos].chars().count() + 1,
            message: message.into(),
        }
    }

    /// A cursor starting at byte `pos` of `text`.
    pub(crate) fn at(text: &'a str, line: usize, pos: usize) -> Cursor<'a> {
        Cursor {
            text,
            pos: pos.min(text.len()),
            line,
        }
    }

    pub(crate) fn line(&self) -> usize {
        self.line
    }

    pub(crate) fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.text.len()
    }

    pub(crate) fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    pub(crate) fn skip_spaces(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start().len();
    }

    /// Consume `token` if the text continues with it.
    pub(crate) fn eat(&mut self, token: &str) -> bool {
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    pub(crate) fn expect(&mut self, token: &str) -> Result<(), Error> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.error(format!("expected `{token}`")))
        }
    }

    /// Consume the longest prefix whose chars satisfy `accept`.
    pub(crate) fn take_while(&mut self, accept: impl Fn(char) -> bool) -> &'a str {
        let rest = self.rest();
        let len = rest.find(|ch: char| !accept(ch)).unwrap_or(rest.len());
        self.pos += len;
        &rest[..len]
    }

    /// An HLO name: letters, digits, `_`, `.`, `-`.
    pub(crate) fn name(&mut self) -> Result<&'a str, Error> {
        let name =
            self.take_while(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '_' | '.' | '-'));
        if name.is_empty() {
            Err(self.error("expected a name"))
        } else {
            Ok(name)
        }
    }

    /// `%name` (the `%` is optional, as in XLA's parser).
    pub(crate) fn instruction_name(&mut self) -> Result<&'a str, Error> {
        self.eat("%");
        self.name()
    }

    pub(crate) fn integer(&mut self) -> Result<i64, Error> {
        let start = self.pos;
        self.eat("-");
        self.take_while(|ch| ch.is_ascii_digit());
        self.text[start..self.pos]
            .parse()
            .map_err(|_| self.error("expected an integer"))
    }

    /// `"..."` with C escapes.
    pub(crate) fn quoted(&mut self) -> Result<String, Error> {
        self.expect("\"")?;
        let mut out = String::new();
        loop {
            let Some(ch) = self.peek() else {
                return Err(self.error("unterminated string"));
            };
            self.pos += ch.len_utf8();
            match ch {
                '"' => return Ok(out),
                '\\' => {
                    let Some(escaped) = self.peek() else {
                        return Err(self.error("unterminated escape"));
                    };
                    self.pos += escaped.len_utf8();
                    match escaped {
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        'x' => {
                            let hex = self.take_while(|ch| ch.is_ascii_hexdigit());
                            let value = u32::from_str_radix(hex, 16)
                                .map_err(|_| self.error("bad \\x escape"))?;
                            out.push(
                                char::from_u32(value)
                                    .ok_or_else(|| self.error("bad \\x escape"))?,
                            );
                        }
                        '0'..='7' => {
                            let mut value = escaped.to_digit(8).unwrap_or(0);
                            for _ in 0..2 {
                                match self.peek().and_then(|ch| ch.to_digit(8)) {
                                    Some(digit) => {
                                        value = value * 8 + digit;
                                        self.pos += 1;
                                    }
                                    None => break,
                                }
                            }
                            out.push(
                                char::from_u32(value)
                                    .ok_or_else(|| self.error("bad octal escape"))?,
                            );
                        }
                        other => out.push(other),
                    }
                }
                other => out.push(other),
            }
        }
    }

    /// Raw text up to the next `,` (or `stop`) outside brackets and strings, trimmed.
    pub(crate) fn balanced_until_comma(&mut self, stop: Option<char>) -> Result<&'a str, Error> {
        let start = self.pos;
        let mut depth = 0usize;
        let mut in_string = false;
        let mut escaped = false;
        let bytes = self.text.as_bytes();
        while self.pos < bytes.len() {
            let byte = bytes[self.pos];
            if in_string {
                if escaped {
                    escaped = false;
                } else if byte == b'\\' {
                    escaped = true;
                } else if byte == b'"' {
                    in_string = false;
                }
            } else {
                match byte {
                    b'"' => in_string = true,
                    b'{' | b'(' | b'[' => depth += 1,
                    b'}' | b')' | b']' => {
                        if depth == 0 {
                            if stop == Some(char::from(byte)) {
                                break;
                            }
                            return Err(self.error("unbalanced brackets"));
                        }
                        depth -= 1;
                    }
                    b',' if depth == 0 => break,
                    _ => {}
                }
            }
            self.pos += 1;
        }
        if in_string || depth > 0 {
            return Err(self.error("unbalanced brackets or string"));
        }
        Ok(self.text[start..self.pos].trim())
    }

    pub(crate) fn shape(&mut self) -> Result<Shape, Error> {
        if self.eat("(") {
            let mut elements = Vec::new();
            self.skip_spaces();
            if self.eat(")") {
                return Ok(Shape::Tuple(elements));
            }
            loop {
                self.skip_spaces();
                elements.push(self.shape()?);
                self.skip_spaces();
                if self.eat(")") {
                    return Ok(Shape::Tuple(elements));
                }
                self.expect(",")?;
            }
        }
        let type_start = self.pos;
        let type_name = self.take_while(|ch| ch.is_ascii_alphanumeric());
        match type_name {
            "token" => {
                self.expect("[]")?;
                return Ok(Shape::Token);
            }
            "opaque" => {
                self.expect("[]")?;
                return Ok(Shape::Opaque);
            }
            _ => {}
        }
        let Some(element_type) = ElementType::from_name(type_name) else {
            self.pos = type_start;
            return Err(self.error(format!("unknown element type `{type_name}`")));
        };
        self.expect("[")?;
        let mut dimensions = Vec::new();
        let mut dynamic = Vec::new();
        if !self.eat("]") {
            loop {
                dynamic.push(self.eat("<="));
                dimensions.push(self.integer()?);
                if self.eat("]") {
                    break;
                }
                self.expect(",")?;
            }
        }
        if !dynamic.iter().any(|value| *value) {
            dynamic.clear();
        }
        let layout = if self.peek() == Some('{') {
            Some(self.layout()?)
        } else {
            None
        };
        Ok(Shape::Array(ArrayShape {
            element_type,
            dimensions,
            dynamic,
            layout,
        }))
    }

    fn layout(&mut self) -> Result<Layout, Error> {
        self.expect("{")?;
        let mut layout = Layout::default();
        while let Some(ch) = self.peek() {
            if !(ch.is_ascii_digit()) {
                break;
            }
            layout.minor_to_major.push(self.integer()?);
            if !self.eat(",") {
                break;
            }
        }
        if self.eat(":") {
            loop {
                if self.eat("T") {
                    while self.eat("(") {
                        let mut tile = Vec::new();
                        if !self.eat(")") {
                            loop {
                                tile.push(self.integer()?);
                                if self.eat(")") {
                                    break;
                                }
                                self.expect(",")?;
                            }
                        }
                        layout.tiles.push(tile);
                    }
                } else if self.eat("E(") {
                    layout.element_size_in_bits = self.integer()?;
                    self.expect(")")?;
                } else if self.eat("S(") {
                    layout.memory_space = self.integer()?;
                    self.expect(")")?;
                } else {
                    break;
                }
            }
        }
        self.expect("}")?;
        Ok(layout)
    }

    /// `(shapes)->shape`.
    pub(crate) fn program_shape(&mut self) -> Result<ProgramShape, Error> {
        let Shape::Tuple(parameters) = self.shape()? else {
            return Err(self.error("expected `(` of a program shape"));
        };
        self.expect("->")?;
        let result = self.shape()?;
        Ok(ProgramShape { parameters, result })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_shape(text: &str) {
        let mut cursor = Cursor::new(text, 1);
        let shape = cursor.shape().unwrap();
        assert!(cursor.at_end(), "{text}: left {}", cursor.rest());
        assert_eq!(shape_text(&shape), text);
    }

    #[test]
    fn shapes() {
        check_shape("f32[]");
        check_shape("bf16[8,128]{1,0}");
        check_shape("(f32[8]{0}, (s32[], pred[]), token[])");
        check_shape("f32[<=8,4]{1,0:T(8,128)(2,1)E(16)S(1)}");
        check_shape("()");
    }

    #[test]
    fn quoting() {
        let text = "a \"b\" \\ \n\t\u{1}é";
        assert_eq!(unquote_lossy(&quote(text)), text);
        assert_eq!(unquote_lossy("\"\\101\""), "A");
    }
}
