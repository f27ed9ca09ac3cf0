//! Decodes XSpace bytes plane by plane, so that an error can name the byte offset and plane.
//!
//! Events are most of a capture, so they are not copied into structs: every plane and line is
//! walked and checked here (wire format, UTF-8 of strings), lines keep the byte range of their
//! body, and the views of `view.rs` parse an event from those bytes when it is asked for.
//! Memory stays close to the file size. Metadata, plane stats and the top-level lists are
//! small and are decoded into the prost types.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use prost::Message;

use crate::Error;
use crate::generated as proto;

/// A decoded XSpace: the top-level lists and an index of every plane.
#[derive(Debug, Clone, Default)]
pub(crate) struct Decoded {
    pub planes: Vec<PlaneData>,
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
    pub hostnames: Vec<String>,
}

/// One `XPlane`, everything but its events decoded.
#[derive(Debug, Clone, Default)]
pub(crate) struct PlaneData {
    pub id: i64,
    pub name: String,
    pub lines: Vec<LineData>,
    pub event_metadata: BTreeMap<i64, proto::XEventMetadata>,
    pub stat_metadata: BTreeMap<i64, proto::XStatMetadata>,
    pub stats: Vec<proto::XStat>,
}

/// One `XLine`; its events stay in the file's bytes.
#[derive(Debug, Clone, Default)]
pub(crate) struct LineData {
    pub id: i64,
    pub display_id: i64,
    pub name: String,
    pub display_name: String,
    pub timestamp_ns: i64,
    pub duration_ps: i64,
    /// The line's body in the XSpace bytes; its field-4 entries are the events.
    pub body: Range<usize>,
    pub event_count: usize,
}

/// One field of a message on the wire.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Wire<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32,
    Len(&'a [u8]),
    /// A (deprecated) group, skipped whole.
    Group,
}

/// The fields of one message, in order. Stops at the first malformed field; the views only
/// walk bytes that [`decode_xspace`] has already checked, so there they never stop early.
#[derive(Debug, Clone)]
pub(crate) struct Fields<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Fields<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Fields { bytes, pos: 0 }
    }

    /// The next field with its number, or why the bytes are not protobuf.
    #[inline]
    fn try_next(&mut self) -> Result<Option<(u64, Wire<'a>)>, &'static str> {
        if self.pos >= self.bytes.len() {
            return Ok(None);
        }
        let key = read_varint(self.bytes, &mut self.pos).ok_or("bad varint key")?;
        let field = key >> 3;
        if field == 0 {
            return Err("field number 0");
        }
        let wire = match key & 7 {
            0 => Wire::Varint(read_varint(self.bytes, &mut self.pos).ok_or("bad varint value")?),
            1 => {
                let raw = self.take(8)?;
                let mut word = [0u8; 8];
                word.copy_from_slice(raw);
                Wire::Fixed64(u64::from_le_bytes(word))
            }
            2 => {
                let len = read_varint(self.bytes, &mut self.pos).ok_or("bad length varint")?;
                let len = usize::try_from(len).map_err(|_| "length past the end")?;
                Wire::Len(self.take(len)?)
            }
            3 => {
                self.skip_group(field)?;
                Wire::Group
            }
            5 => {
                self.take(4)?;
                Wire::Fixed32
            }
            _ => return Err("invalid wire type"),
        };
        Ok(Some((field, wire)))
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], &'static str> {
        let end = self
            .pos
            .checked_add(len)
            .filter(|&end| end <= self.bytes.len())
            .ok_or("length past the end")?;
        let taken = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(taken)
    }

    /// Skips to the end-group key of `field`, nested groups included.
    fn skip_group(&mut self, field: u64) -> Result<(), &'static str> {
        let mut open = vec![field];
        while let Some(&current) = open.last() {
            let key = read_varint(self.bytes, &mut self.pos).ok_or("bad varint key in group")?;
            match key & 7 {
                0 => {
                    read_varint(self.bytes, &mut self.pos).ok_or("bad varint value")?;
                }
                1 => {
                    self.take(8)?;
                }
                2 => {
                    let len = read_varint(self.bytes, &mut self.pos).ok_or("bad length varint")?;
                    let len = usize::try_from(len).map_err(|_| "length past the end")?;
                    self.take(len)?;
                }
                3 => open.push(key >> 3),
                4 if key >> 3 == current => {
                    open.pop();
                }
                5 => {
                    self.take(4)?;
                }
                _ => return Err("unbalanced group"),
            }
        }
        Ok(())
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = (u64, Wire<'a>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        // Fast path: a one-byte key of a varint or length-delimited field, as nearly every
        // field of an event or stat is.
        let &key = self.bytes.get(self.pos)?;
        if (0x08..0x80).contains(&key) {
            let field = u64::from(key >> 3);
            match key & 7 {
                0 => {
                    let mut pos = self.pos + 1;
                    let value = read_varint(self.bytes, &mut pos)?;
                    self.pos = pos;
                    return Some((field, Wire::Varint(value)));
                }
                2 => {
                    let mut pos = self.pos + 1;
                    let body = take_len(self.bytes, &mut pos).ok()?;
                    self.pos = pos;
                    return Some((field, Wire::Len(body)));
                }
                _ => {}
            }
        }
        self.try_next().ok().flatten()
    }
}

/// Decode a whole XSpace. The top level is walked by hand (it is only four fields) so that a
/// truncated or foreign file fails with the offset where it stops making sense.
pub(crate) fn decode_xspace(bytes: &[u8], path: &Path) -> Result<Decoded, Error> {
    let mut space = Decoded::default();
    let mut pos = 0usize;
    while pos < bytes.len() {
        let key_offset = pos;
        let key =
            read_varint(bytes, &mut pos).ok_or_else(|| wire(path, key_offset, "bad varint key"))?;
        let field = key >> 3;
        if field == 0 {
            return Err(wire(path, key_offset, "field number 0"));
        }
        match key & 7 {
            0 => {
                read_varint(bytes, &mut pos).ok_or_else(|| wire(path, pos, "bad varint value"))?;
            }
            1 => pos = skip_fixed(bytes, pos, 8, field, path)?,
            5 => pos = skip_fixed(bytes, pos, 4, field, path)?,
            2 => {
                let len_offset = pos;
                let len = read_varint(bytes, &mut pos)
                    .ok_or_else(|| wire(path, len_offset, "bad length varint"))?;
                let available = (bytes.len() - pos) as u64;
                if len > available {
                    return Err(Error::Truncated {
                        path: path.to_path_buf(),
                        field,
                        offset: key_offset as u64,
                        needed: len,
                        available,
                    });
                }
                // `len <= available`, which fits in usize.
                let end = pos + len as usize;
                match field {
                    1 => {
                        let plane = decode_plane(bytes, pos..end, space.planes.len(), path)?;
                        space.planes.push(plane);
                    }
                    2..=4 => {
                        let text =
                            std::str::from_utf8(&bytes[pos..end]).map_err(|_| Error::Utf8 {
                                path: path.to_path_buf(),
                                field,
                                offset: pos as u64,
                            })?;
                        let list = match field {
                            2 => &mut space.errors,
                            3 => &mut space.warnings,
                            _ => &mut space.hostnames,
                        };
                        list.push(text.to_owned());
                    }
                    _ => {}
                }
                pos = end;
            }
            _ => return Err(wire(path, key_offset, "invalid wire type")),
        }
    }
    if space.planes.is_empty() {
        return Err(Error::NoPlanes {
            path: path.to_path_buf(),
            len: bytes.len() as u64,
        });
    }
    Ok(space)
}

/// One plane at `range` of `bytes`. When it does not check out, prost decodes the same bytes
/// to say why in its words (and our own reason is the fallback should prost accept them).
fn decode_plane(
    bytes: &[u8],
    range: Range<usize>,
    plane_index: usize,
    path: &Path,
) -> Result<PlaneData, Error> {
    let offset = range.start;
    check_plane(bytes, range.clone()).map_err(|(at, what)| {
        match proto::XPlane::decode(&bytes[range]) {
            Err(source) => Error::Plane {
                path: path.to_path_buf(),
                plane_index,
                offset: offset as u64,
                source,
            },
            Ok(_) => wire(path, at, what),
        }
    })
}

/// A malformed field: the absolute byte offset of the message that holds it, and why.
type Bad = (usize, &'static str);

pub(crate) fn check_plane(bytes: &[u8], range: Range<usize>) -> Result<PlaneData, Bad> {
    let start = range.start;
    let body = &bytes[range];
    let mut plane = PlaneData::default();
    let mut fields = Fields::new(body);
    loop {
        let field_start = start + fields.pos;
        let Some((field, value)) = fields.try_next().map_err(|what| (field_start, what))? else {
            break;
        };
        let bad = |what| (field_start, what);
        match (field, value) {
            (1, Wire::Varint(id)) => plane.id = id as i64,
            (2, Wire::Len(text)) => plane.name = utf8(text).map_err(bad)?.to_owned(),
            (3, Wire::Len(line)) => {
                // The line's body starts where its bytes sit inside `bytes`.
                let line_start = start + fields.pos - line.len();
                plane.lines.push(check_line(line, line_start)?);
            }
            (4, Wire::Len(entry)) => {
                let (key, value) = map_entry(entry).map_err(bad)?;
                let meta = plane.event_metadata.entry(key).or_default();
                meta.merge(value).map_err(|_| bad("bad event metadata"))?;
            }
            (5, Wire::Len(entry)) => {
                let (key, value) = map_entry(entry).map_err(bad)?;
                let meta = plane.stat_metadata.entry(key).or_default();
                meta.merge(value).map_err(|_| bad("bad stat metadata"))?;
            }
            (6, Wire::Len(stat)) => plane
                .stats
                .push(proto::XStat::decode(stat).map_err(|_| bad("bad plane stat"))?),
            (1..=6, _) => return Err(bad("wrong wire type")),
            _ => {}
        }
    }
    Ok(plane)
}

pub(crate) fn check_line(body: &[u8], start: usize) -> Result<LineData, Bad> {
    let mut line = LineData {
        body: start..start + body.len(),
        ..LineData::default()
    };
    let mut fields = Fields::new(body);
    loop {
        let field_start = start + fields.pos;
        let Some((field, value)) = fields.try_next().map_err(|what| (field_start, what))? else {
            break;
        };
        let bad = |what| (field_start, what);
        match (field, value) {
            (1, Wire::Varint(id)) => line.id = id as i64,
            (10, Wire::Varint(id)) => line.display_id = id as i64,
            (2, Wire::Len(text)) => line.name = utf8(text).map_err(bad)?.to_owned(),
            (11, Wire::Len(text)) => line.display_name = utf8(text).map_err(bad)?.to_owned(),
            (3, Wire::Varint(ns)) => line.timestamp_ns = ns as i64,
            (9, Wire::Varint(ps)) => line.duration_ps = ps as i64,
            (4, Wire::Len(event)) => {
                check_event(event).map_err(bad)?;
                line.event_count += 1;
            }
            (1..=4 | 9..=11, _) => return Err(bad("wrong wire type")),
            _ => {}
        }
    }
    Ok(line)
}

/// Events and stats are nearly all of a capture, so their usual keys (one byte each) are
/// matched directly; anything else goes through [`Fields`].
fn check_event(body: &[u8]) -> Result<(), &'static str> {
    let mut pos = 0;
    while let Some(&key) = body.get(pos) {
        match key {
            // metadata_id (1), offset_ps (2), duration_ps (3), num_occurrences (5).
            0x08 | 0x10 | 0x18 | 0x28 => {
                pos += 1;
                read_varint(body, &mut pos).ok_or("bad varint value")?;
            }
            // stats (4).
            0x22 => {
                pos += 1;
                check_stat(take_len(body, &mut pos)?)?;
            }
            _ => {
                let mut fields = Fields { bytes: body, pos };
                match fields.try_next()? {
                    Some((1 | 2 | 3 | 5, Wire::Varint(_))) => {}
                    Some((4, Wire::Len(stat))) => check_stat(stat)?,
                    Some((1..=5, _)) => return Err("wrong wire type in event"),
                    _ => {}
                }
                pos = fields.pos;
            }
        }
    }
    Ok(())
}

fn check_stat(body: &[u8]) -> Result<(), &'static str> {
    let mut pos = 0;
    while let Some(&key) = body.get(pos) {
        match key {
            // metadata_id (1), uint64_value (3), int64_value (4), ref_value (7).
            0x08 | 0x18 | 0x20 | 0x38 => {
                pos += 1;
                read_varint(body, &mut pos).ok_or("bad varint value")?;
            }
            _ => {
                let mut fields = Fields { bytes: body, pos };
                match fields.try_next()? {
                    Some((1 | 3 | 4 | 7, Wire::Varint(_)))
                    | Some((2, Wire::Fixed64(_)))
                    | Some((6, Wire::Len(_))) => {}
                    Some((5, Wire::Len(text))) => {
                        utf8(text)?;
                    }
                    Some((1..=7, _)) => return Err("wrong wire type in stat"),
                    _ => {}
                }
                pos = fields.pos;
            }
        }
    }
    Ok(())
}

/// A length-delimited body after its key.
#[inline]
fn take_len<'a>(bytes: &'a [u8], pos: &mut usize) -> Result<&'a [u8], &'static str> {
    let len = read_varint(bytes, pos).ok_or("bad length varint")?;
    let end = usize::try_from(len)
        .ok()
        .and_then(|len| pos.checked_add(len))
        .filter(|&end| end <= bytes.len())
        .ok_or("length past the end")?;
    let body = &bytes[*pos..end];
    *pos = end;
    Ok(body)
}

/// A map entry: key (field 1, varint) and value message (field 2), as prost reads them.
fn map_entry(entry: &[u8]) -> Result<(i64, &[u8]), &'static str> {
    let mut key = 0i64;
    let mut value: &[u8] = &[];
    let mut fields = Fields::new(entry);
    while let Some((field, wire)) = fields.try_next()? {
        match (field, wire) {
            (1, Wire::Varint(raw)) => key = raw as i64,
            (2, Wire::Len(body)) => value = body,
            (1 | 2, _) => return Err("wrong wire type in map entry"),
            _ => {}
        }
    }
    Ok((key, value))
}

fn utf8(bytes: &[u8]) -> Result<&str, &'static str> {
    std::str::from_utf8(bytes).map_err(|_| "string is not UTF-8")
}

fn wire(path: &Path, offset: usize, what: &'static str) -> Error {
    Error::Wire {
        path: path.to_path_buf(),
        offset: offset as u64,
        what,
    }
}

fn skip_fixed(
    bytes: &[u8],
    pos: usize,
    width: usize,
    field: u64,
    path: &Path,
) -> Result<usize, Error> {
    let available = bytes.len() - pos;
    if width > available {
        return Err(Error::Truncated {
            path: path.to_path_buf(),
            field,
            offset: pos as u64,
            needed: width as u64,
            available: available as u64,
        });
    }
    Ok(pos + width)
}

/// Protobuf base-128 varint; `None` when it runs off the end or past ten bytes.
#[inline]
fn read_varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    // Fast path: most varints in a capture are one byte (field keys, small ids).
    let first = *bytes.get(*pos)?;
    if first < 0x80 {
        *pos += 1;
        return Some(u64::from(first));
    }
    let mut value = 0u64;
    for shift in 0..10 {
        let byte = *bytes.get(*pos)?;
        *pos += 1;
        value |= u64::from(byte & 0x7f) << (7 * shift);
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error and its sources, as tools print them (`{:#}`).
    fn chain(err: &Error) -> String {
        let mut text = err.to_string();
        let mut source = std::error::Error::source(err);
        while let Some(s) = source {
            text.push_str(&format!(": {s}"));
            source = s.source();
        }
        text
    }

    fn check_err(bytes: &[u8], expect: &str) {
        let err = decode_xspace(bytes, Path::new("t.xplane.pb")).unwrap_err();
        assert_eq!(chain(&err), expect);
    }

    #[test]
    fn not_protobuf() {
        check_err(
            b"{\"traceEvents\": []}",
            "t.xplane.pb: not an XSpace protobuf: invalid wire type at byte offset 0",
        );
    }

    #[test]
    fn truncated_plane() {
        let plane = proto::XPlane {
            name: "/device:GPU:0".to_owned(),
            ..Default::default()
        };
        let bytes = proto::XSpace {
            planes: vec![plane],
            ..Default::default()
        }
        .encode_to_vec();
        check_err(
            &bytes[..bytes.len() - 3],
            "t.xplane.pb: truncated: field 1 at byte offset 0 needs 15 bytes, 12 left",
        );
    }

    #[test]
    fn empty_input() {
        check_err(b"", "t.xplane.pb: not an XSpace: no planes in 0 bytes");
    }

    #[test]
    fn bad_plane_body() {
        // Field 1 (planes), length 2, body = key of field 1 with wire type 7 (invalid).
        check_err(
            &[0x0a, 0x02, 0x0f, 0x00],
            "t.xplane.pb: plane #0 at byte offset 2 does not decode: failed to decode Protobuf message: invalid wire type value: 7",
        );
    }

    /// A plane whose only line holds one event with a stat of the wrong wire type (a string
    /// where `uint64_value` belongs): prost's reason, with the plane named.
    #[test]
    fn bad_event_inside_a_line() {
        // XStat { uint64_value (field 3) as length-delimited "x" }.
        let stat = [0x1a, 0x01, b'x'];
        let mut event = vec![0x22, stat.len() as u8];
        event.extend_from_slice(&stat);
        let mut line = vec![0x22, event.len() as u8];
        line.extend_from_slice(&event);
        let mut plane = vec![0x1a, line.len() as u8];
        plane.extend_from_slice(&line);
        let mut space = vec![0x0a, plane.len() as u8];
        space.extend_from_slice(&plane);
        let err = decode_xspace(&space, Path::new("t.xplane.pb")).unwrap_err();
        let text = chain(&err);
        assert!(
            text.starts_with("t.xplane.pb: plane #0 at byte offset 2 does not decode: failed to decode Protobuf message: ")
                && text.contains("invalid wire type"),
            "{text}"
        );
    }

    #[test]
    fn unknown_fields_and_groups_are_skipped() {
        // A plane with an unknown varint field 20, an unknown group 21 holding a varint, and
        // its name; prost accepts the same bytes.
        let mut plane = vec![0xa0, 0x01, 0x05, 0xab, 0x01, 0x08, 0x01, 0xac, 0x01];
        plane.extend_from_slice(&[0x12, 0x01, b'p']);
        assert!(proto::XPlane::decode(plane.as_slice()).is_ok());
        let mut space = vec![0x0a, plane.len() as u8];
        space.extend_from_slice(&plane);
        let decoded = decode_xspace(&space, Path::new("t.xplane.pb")).unwrap();
        assert_eq!(decoded.planes[0].name, "p");
    }
}
