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
/// the spill file. A first read that spills skips the CRC-32 (the second reads the spill
/// file, checking its length only), unless the spill fails, which needs it after all
/// (`crc_lost` when the spilled part could not be read back for it).
#[derive(Default)]
pub(super) struct Digest {
    pub(super) bytes: u64,
    pub(super) crc: crc32fast::Hasher,
    pub(super) skip_crc: bool,
    pub(super) crc_lost: bool,
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
        let before = self.digest.bytes;
        self.digest.bytes += n as u64;
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
                Err(_) => {
                    // The text is read again from the input after all, which needs its
                    // CRC-32: the part before this read is taken from the spill file
                    // (whole up to here), or else the check is given up as failed.
                    if self.digest.skip_crc {
                        self.digest.skip_crc = false;
                        if crc_of_start(spill, before, &mut self.digest.crc).is_err() {
                            self.digest.crc_lost = true;
                        }
                    }
                    self.spill = None;
                }
            }
        }
        if !self.digest.skip_crc {
            self.digest.crc.update(&buf[..n]);
        }
        Ok(n)
    }
}

/// Adds the first `len` bytes of `file` to `crc`.
pub(super) fn crc_of_start(
    file: &std::fs::File,
    len: u64,
    crc: &mut crc32fast::Hasher,
) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom};
    let mut file = file.try_clone()?;
    file.seek(SeekFrom::Start(0))?;
    let mut start = std::io::BufReader::with_capacity(1 << 16, file.take(len));
    let mut read = 0u64;
    loop {
        let buf = start.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        crc.update(buf);
        let k = buf.len();
        read += k as u64;
        start.consume(k);
    }
    if read == len {
        Ok(())
    } else {
        Err(std::io::ErrorKind::UnexpectedEof.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CRC-32 of the text read, as a whole read gives it.
    fn crc(text: &[u8]) -> u32 {
        let mut h = crc32fast::Hasher::new();
        h.update(text);
        h.finalize()
    }

    /// A first read that spills skips the CRC-32; one whose spill fails part-way gets it
    /// whole after all (the spilled part read back); one that ends before the input's end
    /// gets it from the spill file.
    #[test]
    fn a_failed_or_unfinished_spill_still_gives_the_crc() {
        let text: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        // Scratch files as the compaction makes its spill (`output_file::ScratchDir`).
        let dir = output_file::ScratchDir::create("reread-test").expect("a scratch directory");
        let spill_file = |name: &str| dir.create_file(name).expect("a scratch file");
        // Read to the end: spilled whole, no CRC-32 worked out.
        let mut digest = Digest {
            skip_crc: true,
            ..Digest::default()
        };
        let mut r = DigestRead {
            inner: &text[..],
            digest: &mut digest,
            spill: Some(spill_file("a")),
        };
        std::io::copy(&mut r, &mut std::io::sink()).expect("reads");
        assert!(digest.spilled && digest.skip_crc && !digest.crc_lost);
        assert_eq!(digest.bytes, text.len() as u64);

        // The spill fails after 100 000 bytes: a file that takes no more (a read-only
        // handle of one already that long stands for a full disk).
        std::io::Write::write_all(&mut spill_file("b"), &text[..100_000]).expect("write");
        let read_only = std::fs::File::open(dir.path().join("b")).expect("open");
        let mut digest = Digest {
            skip_crc: true,
            bytes: 0,
            ..Digest::default()
        };
        let mut r = DigestRead {
            inner: &text[100_000..],
            digest: &mut digest,
            spill: Some(read_only),
        };
        // The first 100 000 bytes were read and spilled before.
        r.digest.bytes = 100_000;
        std::io::copy(&mut r, &mut std::io::sink()).expect("reads");
        assert!(!digest.spilled && !digest.skip_crc && !digest.crc_lost);
        assert_eq!(digest.crc.clone().finalize(), crc(&text));

        // Part of the text read and spilled, then the read ends: the CRC-32 of that part
        // comes from the spill file.
        let spill = spill_file("c");
        let mut digest = Digest {
            skip_crc: true,
            ..Digest::default()
        };
        let mut r = DigestRead {
            inner: &text[..],
            digest: &mut digest,
            spill: Some(spill.try_clone().expect("clone")),
        };
        let mut part = vec![0u8; 123_457];
        r.read_exact(&mut part).expect("reads");
        assert!(!digest.spilled && digest.skip_crc);
        crc_of_start(&spill, digest.bytes, &mut digest.crc).expect("reads the spill back");
        assert_eq!(digest.crc.finalize(), crc(&text[..digest.bytes as usize]));
    }
}
