//! The second read of a trace file whose untouched event texts a compaction read left
//! there (see [`Trace::read_file_for_compaction`]): copying them into the output, and the
//! length and CRC-32 that show whether the file still holds the text the first read saw.

use std::io::{BufRead, Read, Write};

use super::*;

impl Trace {
    /// The events, in order, with the texts left in the file copied from a second read
    /// of it: each from its offset, without parsing or splitting (the first read checked
    /// every event). The JSON text must have the length and CRC-32 it had then; if not, the
    /// output is an error (and never committed).
    pub(super) fn write_events_from_file(
        &self,
        in_file: &InFile,
        out: &mut impl Write,
    ) -> std::io::Result<()> {
        let path = &self.source;
        let changed = |what: String| {
            std::io::Error::other(Error::InputChanged {
                path: path.clone(),
                what,
            })
        };
        let read_error = |source| {
            std::io::Error::other(Error::Io(FsError {
                path: path.clone(),
                action: "cannot read the trace again",
                source,
            }))
        };
        let input: Box<dyn Read + Send> = match &in_file.spill {
            Some(spill) => Box::new(spill.open().map_err(read_error)?),
            None => open_input(path, Progress::Hidden).map_err(std::io::Error::other)?,
        };
        // The scratch file is ours and nameless: nothing else changes it, so its length is
        // checked, not its CRC-32 (24M instructions on df_index_resolver).
        let mut digest = Digest {
            skip_crc: in_file.spill.is_some(),
            ..Digest::default()
        };
        let mut input = std::io::BufReader::with_capacity(
            1 << 20,
            DigestRead {
                inner: input,
                digest: &mut digest,
                spill: None,
            },
        );
        // Where `input` is in the JSON text.
        let mut at = 0u64;
        let mut scratch = Vec::new();
        for (i, event) in self.events.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            let text = event.text();
            let Some((index, len)) = text.input_place() else {
                self.arena.write(text, &mut scratch, out)?;
                continue;
            };
            let offset = in_file.offsets[index];
            // Input events keep their order, so each starts at or after the previous one's
            // end: past the texts that are held or were dropped.
            assert!(
                offset >= at,
                "the compaction keeps the events it leaves in the file in file order"
            );
            at += skip(&mut input, offset.saturating_sub(at)).map_err(read_error)?;
            let copied = copy(&mut input, len as u64, out, read_error)?;
            at += copied;
            if copied < len as u64 {
                return Err(changed(format!("it ends within event {index}")));
            }
        }
        // The rest counts for the length and CRC-32.
        skip(&mut input, u64::MAX).map_err(read_error)?;
        drop(input);
        if digest.bytes != in_file.json_bytes {
            return Err(changed(format!(
                "its JSON text is {} bytes long, was {}",
                digest.bytes, in_file.json_bytes
            )));
        }
        let crc = digest.crc.finalize();
        if !digest.skip_crc && crc != in_file.crc {
            return Err(changed(format!(
                "its JSON text has CRC-32 {crc:08x}, was {:08x}",
                in_file.crc
            )));
        }
        Ok(())
    }
}

/// Reads past `n` bytes of `input` (fewer at its end); how many. The bytes are consumed
/// where they are buffered: `io::copy` into `io::sink` copied each through a buffer of its
/// own (the held texts and the space between events, 40% of df_index_resolver's text).
fn skip(input: &mut impl BufRead, n: u64) -> std::io::Result<u64> {
    let mut left = n;
    while left > 0 {
        let buffered = input.fill_buf()?.len();
        if buffered == 0 {
            break;
        }
        let k = buffered.min(usize::try_from(left).unwrap_or(usize::MAX));
        input.consume(k);
        left -= k as u64;
    }
    Ok(n - left)
}

/// Copies the next `n` bytes of `input` (fewer at its end) to `out`; how many. An error
/// reading goes through `read_error` (it is the file's), one writing is the output's.
fn copy(
    input: &mut impl BufRead,
    n: u64,
    out: &mut impl Write,
    read_error: impl Fn(std::io::Error) -> std::io::Error,
) -> std::io::Result<u64> {
    let mut left = n;
    while left > 0 {
        let buf = input.fill_buf().map_err(&read_error)?;
        if buf.is_empty() {
            break;
        }
        let k = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        out.write_all(&buf[..k])?;
        input.consume(k);
        left -= k as u64;
    }
    Ok(n - left)
}

/// The length and CRC-32 of a text read (unless `skip_crc`), and whether all of it went to
/// the spill file.
#[derive(Default)]
pub(super) struct Digest {
    pub(super) bytes: u64,
    pub(super) crc: crc32fast::Hasher,
    pub(super) skip_crc: bool,
    pub(super) spilled: bool,
}

/// A reader that adds what it reads to a [`Digest`], and copies it to `spill` when given
/// (a write that fails only drops the spill: the text is then read again from the input).
pub(super) struct DigestRead<'a, R> {
    pub(super) inner: R,
    pub(super) digest: &'a mut Digest,
    pub(super) spill: Option<std::fs::File>,
}

impl<R: Read> Read for DigestRead<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.digest.bytes += n as u64;
        if !self.digest.skip_crc {
            self.digest.crc.update(&buf[..n]);
        }
        if let Some(spill) = &mut self.spill {
            let written = if n == 0 {
                Ok(())
            } else {
                spill.write_all(&buf[..n])
            };
            match written {
                Ok(()) if n == 0 => {
                    self.digest.spilled = true;
                    self.spill = None;
                }
                Ok(()) => {}
                Err(_) => self.spill = None,
            }
        }
        Ok(n)
    }
}
