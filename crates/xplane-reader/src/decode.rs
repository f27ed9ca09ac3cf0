//! Decodes XSpace bytes plane by plane, so that an error can name the byte offset and plane.

use std::path::Path;

use prost::Message;

use crate::Error;
use crate::generated as proto;

/// Decode a whole XSpace. The top level is walked by hand (it is only four fields) so that a
/// truncated or foreign file fails with the offset where it stops making sense.
pub(crate) fn decode_xspace(bytes: &[u8], path: &Path) -> Result<proto::XSpace, Error> {
    let mut space = proto::XSpace::default();
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
                let body = &bytes[pos..end];
                match field {
                    1 => {
                        let plane = proto::XPlane::decode(body).map_err(|source| Error::Plane {
                            path: path.to_path_buf(),
                            plane_index: space.planes.len(),
                            offset: pos as u64,
                            source,
                        })?;
                        space.planes.push(plane);
                    }
                    2..=4 => {
                        let text = std::str::from_utf8(body).map_err(|_| Error::Utf8 {
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
fn read_varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
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

    fn check_err(bytes: &[u8], expect: &str) {
        let err = decode_xspace(bytes, Path::new("t.xplane.pb")).unwrap_err();
        assert_eq!(err.to_string(), expect);
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
}
