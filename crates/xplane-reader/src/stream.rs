//! `load_capture`'s reader: the file is read front to back and never held whole.
//!
//! Events are nearly all of a capture, and an `XPlane` stores its lines (field 3) before
//! the event and stat metadata (fields 4 and 5) that name them, so the file is read twice:
//! the first pass checks every line as `decode.rs` does, keeps everything but the events
//! (the XSpace's skeleton) and the byte range of each line; the second pass, while the
//! model is built, reads one line at a time back into a reused buffer. Peak memory is then
//! the model plus the longest line, not the file plus the model.
//!
//! Anything this reader does not expect (a malformed field, a group inside a plane, a
//! file that changed between the passes) makes `load_capture` read the whole file the
//! ordinary way instead, so errors and results are exactly those of [`XSpace::read`].

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use crate::XSpace;
use crate::decode::{self, Decoded, LineData, PlaneData};

/// Why a streaming read stopped.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The file could not be read.
    Io(io::Error),
    /// The bytes are not what this reader expects: read the file whole to say why.
    Unexpected,
}

impl From<io::Error> for Stop {
    fn from(err: io::Error) -> Self {
        Stop::Io(err)
    }
}

/// The file, for the second pass: each line's bytes read back on demand.
#[derive(Debug)]
pub(crate) struct LineReader {
    file: File,
    buf: Vec<u8>,
}

impl LineReader {
    /// Reads `line`'s body (a byte range of the file) and checks it again, so that a file
    /// changed since the first pass is noticed. The bytes are in [`LineReader::bytes`].
    pub(crate) fn load(&mut self, line: &LineData) -> Result<LineData, Stop> {
        let len = line.body.end - line.body.start;
        self.file.seek(SeekFrom::Start(line.body.start as u64))?;
        self.buf.clear();
        self.buf
            .try_reserve_exact(len)
            .map_err(|_| Stop::Unexpected)?;
        (&mut self.file)
            .take(len as u64)
            .read_to_end(&mut self.buf)?;
        if self.buf.len() != len {
            return Err(Stop::Unexpected);
        }
        let again = decode::check_line(&self.buf, 0).map_err(|_| Stop::Unexpected)?;
        if again.event_count != line.event_count {
            return Err(Stop::Unexpected);
        }
        Ok(again)
    }

    /// The bytes of the line last loaded.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.buf
    }
}

/// First pass: the XSpace without its events' bytes (each line's `body` is its range in
/// the file) and the file to read the lines from.
pub(crate) fn read_skeleton(path: &Path) -> Result<(XSpace, LineReader), Stop> {
    let file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut input = Input {
        reader: BufReader::with_capacity(1 << 20, file.try_clone()?),
        pos: 0,
        len,
    };
    let mut decoded = Decoded::default();
    let mut buf = Vec::new();
    let mut rest = Vec::new();
    while input.pos < len {
        let key = input.varint()?;
        let field = key >> 3;
        if field == 0 {
            return Err(Stop::Unexpected);
        }
        match key & 7 {
            0 => {
                input.varint()?;
            }
            1 => input.skip(8)?,
            5 => input.skip(4)?,
            2 => {
                let body = input.len_prefix()?;
                match field {
                    1 => {
                        let plane = read_plane(&mut input, body, &mut buf, &mut rest)?;
                        decoded.planes.push(plane);
                    }
                    2..=4 => {
                        input.read_into(body, &mut buf)?;
                        let text = std::str::from_utf8(&buf).map_err(|_| Stop::Unexpected)?;
                        let list = match field {
                            2 => &mut decoded.errors,
                            3 => &mut decoded.warnings,
                            _ => &mut decoded.hostnames,
                        };
                        list.push(text.to_owned());
                    }
                    _ => input.skip(body)?,
                }
            }
            _ => return Err(Stop::Unexpected),
        }
    }
    if decoded.planes.is_empty() {
        return Err(Stop::Unexpected);
    }
    let space = XSpace::from_decoded(decoded);
    Ok((
        space,
        LineReader {
            file,
            buf: Vec::new(),
        },
    ))
}

/// One plane of `len` bytes at the input's position: its lines are checked one by one and
/// left in the file; every other field is copied into `rest` and decoded as `decode.rs`
/// decodes a plane.
fn read_plane(
    input: &mut Input,
    len: u64,
    buf: &mut Vec<u8>,
    rest: &mut Vec<u8>,
) -> Result<PlaneData, Stop> {
    let end = input.pos + len;
    let mut lines = Vec::new();
    rest.clear();
    while input.pos < end {
        let key = input.varint()?;
        if key == (3 << 3) | 2 {
            let body = input.len_prefix()?;
            let start = usize::try_from(input.pos).map_err(|_| Stop::Unexpected)?;
            input.read_into(body, buf)?;
            lines.push(decode::check_line(buf, start).map_err(|_| Stop::Unexpected)?);
        } else {
            put_varint(rest, key);
            match key & 7 {
                0 => put_varint(rest, input.varint()?),
                1 => input.append(8, rest)?,
                5 => input.append(4, rest)?,
                2 => {
                    let body = input.len_prefix()?;
                    put_varint(rest, body);
                    input.append(body, rest)?;
                }
                // Groups (deprecated) and invalid wire types: the whole-file reader decides.
                _ => return Err(Stop::Unexpected),
            }
        }
        if input.pos > end {
            return Err(Stop::Unexpected);
        }
    }
    let mut plane = decode::check_plane(rest, 0..rest.len()).map_err(|_| Stop::Unexpected)?;
    plane.lines = lines;
    Ok(plane)
}

/// The file, read front to back, with the position reached.
struct Input {
    reader: BufReader<File>,
    pos: u64,
    len: u64,
}

impl Input {
    fn byte(&mut self) -> Result<u8, Stop> {
        let mut byte = [0u8];
        self.reader.read_exact(&mut byte)?;
        self.pos += 1;
        Ok(byte[0])
    }

    fn varint(&mut self) -> Result<u64, Stop> {
        let mut value = 0u64;
        for shift in 0..10 {
            if self.pos >= self.len {
                return Err(Stop::Unexpected);
            }
            let byte = self.byte()?;
            value |= u64::from(byte & 0x7f) << (7 * shift);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(Stop::Unexpected)
    }

    /// A length that must fit in what is left of the file.
    fn len_prefix(&mut self) -> Result<u64, Stop> {
        let len = self.varint()?;
        if len > self.len - self.pos {
            return Err(Stop::Unexpected);
        }
        Ok(len)
    }

    fn skip(&mut self, len: u64) -> Result<(), Stop> {
        if len > self.len - self.pos {
            return Err(Stop::Unexpected);
        }
        let len = i64::try_from(len).map_err(|_| Stop::Unexpected)?;
        self.reader.seek_relative(len)?;
        self.pos += len as u64;
        Ok(())
    }

    fn read_into(&mut self, len: u64, buf: &mut Vec<u8>) -> Result<(), Stop> {
        buf.clear();
        self.append(len, buf)
    }

    fn append(&mut self, len: u64, buf: &mut Vec<u8>) -> Result<(), Stop> {
        if len > self.len - self.pos {
            return Err(Stop::Unexpected);
        }
        let before = buf.len();
        buf.try_reserve_exact(len as usize)
            .map_err(|_| Stop::Unexpected)?;
        (&mut self.reader).take(len).read_to_end(buf)?;
        if (buf.len() - before) as u64 != len {
            return Err(Stop::Unexpected);
        }
        self.pos += len;
        Ok(())
    }
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}
