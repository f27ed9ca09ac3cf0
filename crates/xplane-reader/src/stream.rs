//! `load_capture`'s reader: the file is read front to back and never held whole.
//!
//! Events are nearly all of a capture, and an `XPlane` stores its lines (field 3) before
//! the event and stat metadata (fields 4 and 5) that name them, so the file is read twice:
//! the first pass checks every line as `decode.rs` does, keeps everything but the events
//! (the XSpace's skeleton) and the byte range of each line; the second pass, while the
//! model is built, reads each line back a chunk of whole fields (about 1 MB) at a time into
//! a reused buffer. Peak memory is then the model plus a chunk, not the file plus the model.
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

/// How much of a line the second pass reads at a time: a host thread's line can be tens of
/// MB, which held whole sat on top of the model at the capture's memory peak.
const CHUNK: usize = 1 << 20;

/// The file, for the second pass: each line's bytes read back on demand, a chunk of whole
/// fields at a time.
#[derive(Debug)]
pub(crate) struct LineReader {
    file: File,
    buf: Vec<u8>,
    /// Bytes read at a time: `CHUNK`, smaller in tests.
    pub(crate) chunk: usize,
}

impl LineReader {
    /// Reads `line`'s body (a byte range of the file) back in chunks of whole fields and
    /// calls `f` on each, with the line's data whose `body` is the chunk (`0..len`). Each
    /// chunk is checked again and the events are counted, so that a file changed since the
    /// first pass is noticed.
    pub(crate) fn for_each_chunk(
        &mut self,
        line: &LineData,
        mut f: impl FnMut(&[u8], &LineData),
    ) -> Result<(), Stop> {
        self.file.seek(SeekFrom::Start(line.body.start as u64))?;
        let mut left = line.body.end - line.body.start;
        let mut events = 0;
        let mut chunk_line = line.clone();
        self.buf.clear();
        while left > 0 || !self.buf.is_empty() {
            if left == 0 {
                // The file ended inside a field.
                return Err(Stop::Unexpected);
            }
            let take = left.min(self.chunk);
            let before = self.buf.len();
            self.buf
                .try_reserve_exact(take)
                .map_err(|_| Stop::Unexpected)?;
            (&mut self.file)
                .take(take as u64)
                .read_to_end(&mut self.buf)?;
            if self.buf.len() - before != take {
                return Err(Stop::Unexpected);
            }
            left -= take;
            let whole = whole_fields(&self.buf).ok_or(Stop::Unexpected)?;
            if whole == 0 {
                // One field longer than a chunk: read on.
                continue;
            }
            let again = decode::check_line(&self.buf[..whole], 0).map_err(|_| Stop::Unexpected)?;
            events += again.event_count;
            chunk_line.body = 0..whole;
            f(&self.buf[..whole], &chunk_line);
            self.buf.drain(..whole);
        }
        if events != line.event_count {
            return Err(Stop::Unexpected);
        }
        Ok(())
    }
}

/// The length of the longest prefix of `bytes` made of whole protobuf fields, or `None`
/// when a field is malformed rather than cut off by the end of `bytes`.
fn whole_fields(bytes: &[u8]) -> Option<usize> {
    let mut whole = 0;
    loop {
        let mut pos = whole;
        let Some(key) = chunk_varint(bytes, &mut pos)? else {
            return Some(whole);
        };
        let len = match key & 7 {
            0 => match chunk_varint(bytes, &mut pos)? {
                Some(_) => 0,
                None => return Some(whole),
            },
            1 => 8,
            5 => 4,
            2 => match chunk_varint(bytes, &mut pos)? {
                Some(len) => usize::try_from(len).ok()?,
                None => return Some(whole),
            },
            _ => return None,
        };
        match pos.checked_add(len) {
            Some(end) if end <= bytes.len() => whole = end,
            Some(_) => return Some(whole),
            None => return None,
        }
    }
}

/// A varint at `pos`: `Some(None)` when `bytes` ends first, `None` when it is malformed.
fn chunk_varint(bytes: &[u8], pos: &mut usize) -> Option<Option<u64>> {
    let mut value = 0u64;
    for shift in 0..10 {
        let Some(&byte) = bytes.get(*pos) else {
            return Some(None);
        };
        *pos += 1;
        value |= u64::from(byte & 0x7f) << (7 * shift);
        if byte & 0x80 == 0 {
            return Some(Some(value));
        }
    }
    None
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
            chunk: CHUNK,
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
