//! `rows.csv`: one row per GPU activity (device, stream, kind, class, name, times, step,
//! and its launch), written for skip-stats and investigate; a rank directory's rows are made
//! one rank at a time, and written once in rank order as the ranks come ([`RowsInRankOrder`])
//! or kept in part files and joined in rank order at the end ([`RowParts`]).

use std::io::{Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::PathBuf;

use trace_model::{Capture, KernelClass};

use crate::Error;
use crate::budget;
use crate::launch;
use crate::skip::{CaptureAnalysis, Config, report_with_rows};
use crate::steps::Steps;

/// Writes `rows.csv`'s header (with the rank column when `multi`) to `rows`.
pub fn write_rows_header<W: std::io::Write>(rows: W, multi: bool) -> Result<(), std::io::Error> {
    let mut w = csv::Writer::from_writer(rows);
    write_header(&mut w, multi).map_err(std::io::Error::other)?;
    w.flush()
}

/// A rank directory's `rows.csv` written once into its file, in rank order, as the ranks'
/// reports are made (skip-stats, on `load::map_each_delivered`'s pool): a rank whose turn
/// has come when its report is made writes its rows straight into the file
/// ([`RowsInRankOrder::report`] with `now`); another keeps them in memory until its turn,
/// when they are appended ([`RowsInRankOrder::append`], in the order the ranks are
/// delivered). So only the ranks waiting for their turn hold rows. When the order the ranks
/// were written in turns out not to be rank order (a rank known only after its file's
/// events), [`RowsInRankOrder::finish`] puts the rows in rank order through one scratch
/// copy.
#[derive(Debug)]
pub struct RowsInRankOrder<'f> {
    file: &'f std::fs::File,
    /// Where the rows start: the header's length.
    header_len: u64,
    /// Bytes written so far, header included; held while rows are written.
    written: std::sync::Mutex<u64>,
}

/// One rank's rows for [`RowsInRankOrder`]: in memory until written, then where they are
/// in the file.
#[derive(Debug, Default)]
pub struct RankRows {
    text: Pieces,
    at: Option<Range<u64>>,
}

/// Text kept in pieces of [`PIECE`] bytes: it grows without copying what is already
/// written (a `Vec` that doubles copied a large rank's rows several times over), and each
/// full piece is written to the file as it is.
#[derive(Debug, Default)]
struct Pieces(Vec<Vec<u8>>);

/// The size of one of [`Pieces`]'s pieces: below glibc's threshold for mapping an
/// allocation of its own (128 KiB), whose freeing raises that threshold and so made the
/// next rank's growing vectors be copied where they had been remapped (10 M more
/// instructions of `realloc` on df_index_resolver with 1 MiB pieces, callgrind).
const PIECE: usize = 64 << 10;

impl Write for Pieces {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, mut buf: &[u8]) -> std::io::Result<()> {
        while !buf.is_empty() {
            match self.0.last_mut() {
                Some(last) if last.len() < PIECE => {
                    let n = (PIECE - last.len()).min(buf.len());
                    last.extend_from_slice(&buf[..n]);
                    buf = &buf[n..];
                }
                _ => self.0.push(Vec::with_capacity(PIECE)),
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Pieces {
    fn len(&self) -> u64 {
        self.0.iter().map(|p| p.len() as u64).sum()
    }

    fn write_to(&self, out: &mut impl Write) -> std::io::Result<()> {
        self.0.iter().try_for_each(|piece| out.write_all(piece))
    }
}

impl<'f> RowsInRankOrder<'f> {
    /// Writes `rows.csv`'s header, with the rank column, at the start of `file` (new and
    /// empty), for the rows written after it.
    pub fn new(file: &'f std::fs::File) -> std::io::Result<RowsInRankOrder<'f>> {
        let mut header = Vec::new();
        write_rows_header(&mut header, true)?;
        let mut out = file;
        out.write_all(&header)?;
        let header_len = header.len() as u64;
        Ok(RowsInRankOrder {
            file,
            header_len,
            written: std::sync::Mutex::new(header_len),
        })
    }

    /// The report of one capture, as [`report_with_rows`] makes it, with its rows: written
    /// into the file after those written before when `now` (its turn has come: every rank
    /// before it is written, and none after it can be until it is), else kept in memory.
    /// Safe to call from several threads at once.
    pub fn report(
        &self,
        loaded: &crate::input::Loaded,
        config: &Config,
        now: bool,
    ) -> Result<(CaptureAnalysis, RankRows), Error> {
        let mut rows = RankRows::default();
        if !now {
            let report = report_with_rows(loaded, config, &mut rows.text)?;
            return Ok((report, rows));
        }
        let mut written = self.lock();
        let mut out = Counted {
            out: std::io::BufWriter::with_capacity(PIECE, self.file),
            bytes: 0,
        };
        let report = report_with_rows(loaded, config, &mut out);
        // Counted whatever the outcome (an error ends the caller's run, and the file with it).
        let start = *written;
        *written += out.bytes;
        rows.at = Some(start..*written);
        Ok((report?, rows))
    }

    /// Writes `rows` after the rows written before, and frees their memory; nothing for
    /// rows already written.
    pub fn append(&self, rows: &mut RankRows) -> std::io::Result<()> {
        if rows.at.is_some() {
            return Ok(());
        }
        let text = std::mem::take(&mut rows.text);
        let mut written = self.lock();
        let mut file = self.file;
        text.write_to(&mut file)?;
        let start = *written;
        *written += text.len();
        rows.at = Some(start..*written);
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, u64> {
        self.written.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ends the file: the header, then the rows of `ranks`, in the order given (rank
    /// order), each once. When they were appended in that order (the rule) the file is
    /// already that; otherwise the rows appended so far are copied to a scratch file once
    /// and written back in the order given, with any not appended.
    pub fn finish(self, ranks: &[&RankRows]) -> std::io::Result<()> {
        let mut end = self.header_len;
        let in_order = ranks.iter().all(|r| match &r.at {
            Some(at) if at.start == end => {
                end = at.end;
                true
            }
            _ => false,
        });
        let written = *self.lock();
        if in_order && end == written {
            return Ok(());
        }
        let file = self.file;
        let scratch = output_file::ScratchDir::create("rows-in-rank-order")?;
        let name = "appended.csv";
        let mut copy = scratch.create_file(name)?;
        let mut appended = file;
        appended.seek(SeekFrom::Start(self.header_len))?;
        std::io::copy(&mut appended.take(written - self.header_len), &mut copy)?;
        file.set_len(self.header_len)?;
        let mut out = std::io::BufWriter::with_capacity(PIECE, file);
        out.seek(SeekFrom::Start(self.header_len))?;
        for rows in ranks {
            match &rows.at {
                Some(at) => {
                    copy.seek(SeekFrom::Start(at.start - self.header_len))?;
                    std::io::copy(&mut (&mut copy).take(at.end - at.start), &mut out)?;
                }
                None => rows.text.write_to(&mut out)?,
            }
        }
        out.flush()?;
        scratch.remove_file(name)
    }
}

/// A writer that counts the bytes written through it.
struct Counted<W> {
    out: W,
    bytes: u64,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// A rank directory's `rows.csv`, made one rank at a time (skip-stats, investigate): each
/// rank's rows go to a part file of a scratch directory while its report is made, so only
/// the reports stay in memory; [`RowParts::write`] then writes the header (with the rank
/// column) and the parts in the order given, rank order. The parts go with the value.
#[derive(Debug)]
pub struct RowParts {
    scratch: output_file::ScratchDir,
    next: std::sync::atomic::AtomicUsize,
}

impl RowParts {
    /// A new scratch directory, in the system's temporary directory, named from `prefix`.
    pub fn create(prefix: &str) -> Result<RowParts, Error> {
        let scratch = output_file::ScratchDir::create(prefix).map_err(|source| Error::Io {
            path: std::env::temp_dir(),
            source,
        })?;
        Ok(RowParts {
            scratch,
            next: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// The report of one capture, as [`report_with_rows`] makes it, with the part its
    /// rows went to. Safe to call from several threads at once.
    pub fn report(
        &self,
        loaded: &crate::input::Loaded,
        config: &Config,
    ) -> Result<(CaptureAnalysis, PathBuf), Error> {
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("rank-{i}.csv");
        let part = self.scratch.path().join(&name);
        let file = self
            .scratch
            .create_file(&name)
            .map_err(|source| Error::Io {
                path: part.clone(),
                source,
            })?;
        let rows = std::io::BufWriter::with_capacity(1 << 20, file);
        Ok((report_with_rows(loaded, config, rows)?, part))
    }

    /// Writes `rows.csv` to `out`: the header, then each of `parts` (from
    /// [`RowParts::report`]) in order. A part that cannot be read is an error naming it.
    pub fn write(&self, parts: &[PathBuf], out: &mut dyn std::io::Write) -> std::io::Result<()> {
        self.write_parts(parts, out, false)
    }

    /// [`RowParts::write`], removing each part once it is copied, so that the rows are
    /// on disk about once, not twice (for a caller that writes them only once). Only
    /// files of this value's scratch directory are removed.
    pub fn drain(self, parts: &[PathBuf], out: &mut dyn std::io::Write) -> std::io::Result<()> {
        self.write_parts(parts, out, true)
    }

    fn write_parts(
        &self,
        parts: &[PathBuf],
        out: &mut dyn std::io::Write,
        remove: bool,
    ) -> std::io::Result<()> {
        write_rows_header(&mut *out, true)?;
        for part in parts {
            let named = |e: std::io::Error| {
                std::io::Error::new(e.kind(), format!("{}: {e}", part.display()))
            };
            let mut file = std::fs::File::open(part).map_err(named)?;
            std::io::copy(&mut file, out)?;
            // Only this value's own parts, through the scratch directory's rules.
            if remove
                && part.parent() == Some(self.scratch.path())
                && let Some(name) = part.file_name().and_then(|n| n.to_str())
            {
                self.scratch.remove_file(name).map_err(named)?;
            }
        }
        Ok(())
    }
}

pub(crate) fn write_header<W: std::io::Write>(
    w: &mut csv::Writer<W>,
    multi: bool,
) -> Result<(), csv::Error> {
    let mut header = Vec::new();
    if multi {
        header.push("rank");
    }
    header.extend([
        "device",
        "stream",
        "kind",
        "class",
        "collective",
        "name",
        "start_ns",
        "dur_ns",
        "step",
        "launch_thread",
        "launch_name",
        "launch_start_ns",
        "launch_dur_ns",
        "launch_to_start_ns",
    ]);
    w.write_record(&header)
}

/// `v` in decimal, as `{v}` formats it, written into the end of `buf` (20 bytes hold any
/// `i64`: 19 digits and a sign).
pub(crate) fn decimal(v: i64, buf: &mut [u8; 20]) -> &[u8] {
    // Two digits per step, from a table of the pairs 00..99.
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    let mut n = v.unsigned_abs();
    let mut at = buf.len();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        buf[at] = b'0' + n as u8;
    }
    if v < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    &buf[at..]
}

/// Writes one `rows.csv` row per GPU activity of the capture, in stream then start
/// order. `rank` adds a leading rank column (directories of ranks).
/// Each row is one `write_all` to `out`: give it a buffered writer.
pub(crate) fn write_rows<W: std::io::Write>(
    out: &mut W,
    capture: &Capture,
    steps: &Steps,
    rank: Option<Option<i64>>,
) -> Result<(), std::io::Error> {
    // Each row is made in one reused buffer, quoted as the csv writer quotes (`Row`):
    // going field by field through the csv writer was most of the rows' time.
    let mut row = Row::default();
    for (a, s) in capture.activities().iter().zip(&steps.activity_step) {
        row.clear();
        if let Some(r) = rank {
            row.opt_int(r);
        }
        let stream = capture.stream(a.stream);
        row.int(capture.device(stream.device).ordinal);
        row.int(stream.ordinal);
        row.text(budget::BusyKind::of(a.class).label().as_bytes());
        row.text(a.class.word().as_bytes());
        row.text(match a.class {
            KernelClass::Collective(kind) => kind.label().as_bytes(),
            _ => b"",
        });
        row.name(capture, a.name);
        row.int(a.start.0);
        row.int(a.dur.0);
        row.opt_int(s.map(|i| steps.steps[i as usize].number));
        let j = launch::join(capture, a);
        match j.launch {
            Some(l) => {
                row.int(capture.thread(l.thread).tid);
                row.name(capture, l.name);
                row.int(l.start.0);
                row.int(l.dur.0);
                // A start before the launch is clock skew, not a delay: left empty.
                let delay = a.start - l.start;
                row.opt_int((delay.0 >= 0).then_some(delay.0));
            }
            None => {
                for _ in 0..5 {
                    row.text(b"");
                }
            }
        }
        out.write_all(row.end())?;
    }
    Ok(())
}

/// One `rows.csv` record as the csv writer writes it with its defaults: fields
/// separated by commas, a field with a comma, a double quote, `\r` or `\n` inside double
/// quotes (its quotes doubled), the record ended by `\n`.
#[derive(Default)]
struct Row {
    buf: Vec<u8>,
    fields: usize,
    /// Per string index: 0 not yet seen, 1 written as it is, 2 inside quotes as it is,
    /// 3 inside quotes with its quotes doubled. Names repeat (kernels, launch calls) and
    /// are often long: each is looked at once.
    plain: Vec<u8>,
}

impl Row {
    fn clear(&mut self) {
        self.buf.clear();
        self.fields = 0;
    }

    fn separate(&mut self) {
        if self.fields > 0 {
            self.buf.push(b',');
        }
        self.fields += 1;
    }

    fn int(&mut self, v: i64) {
        self.separate();
        let mut digits = [0u8; 20];
        self.buf.extend_from_slice(decimal(v, &mut digits));
    }

    fn opt_int(&mut self, v: Option<i64>) {
        match v {
            Some(v) => self.int(v),
            None => self.separate(),
        }
    }

    /// The capture's string `id` as a field.
    fn name(&mut self, capture: &Capture, id: trace_model::StringId) {
        let text = capture.name(id).as_bytes();
        let i = id.index();
        if i >= self.plain.len() {
            self.plain.resize(i + 1, 0);
        }
        if self.plain[i] == 0 {
            self.plain[i] = if text.contains(&b'"') {
                3
            } else if needs_quotes(text) {
                2
            } else {
                1
            };
        }
        match self.plain[i] {
            1 => {
                self.separate();
                self.buf.extend_from_slice(text);
            }
            2 => {
                self.separate();
                self.buf.push(b'"');
                self.buf.extend_from_slice(text);
                self.buf.push(b'"');
            }
            _ => self.text(text),
        }
    }

    fn text(&mut self, field: &[u8]) {
        self.separate();
        if needs_quotes(field) {
            // Inside double quotes, each double quote doubled: the pieces between them
            // are copied whole (kernel names with template arguments are long).
            self.buf.push(b'"');
            for (k, piece) in field.split(|&b| b == b'"').enumerate() {
                if k > 0 {
                    self.buf.extend_from_slice(b"\"\"");
                }
                self.buf.extend_from_slice(piece);
            }
            self.buf.push(b'"');
        } else {
            self.buf.extend_from_slice(field);
        }
    }

    /// The record with its terminator.
    fn end(&mut self) -> &[u8] {
        self.buf.push(b'\n');
        &self.buf
    }
}

/// Whether the csv writer quotes `field` (its defaults: a comma, a double quote, `\r` or
/// `\n` inside).
fn needs_quotes(field: &[u8]) -> bool {
    field
        .iter()
        .any(|&b| matches!(b, b',' | b'"' | b'\r' | b'\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Row` writes what the csv writer writes, quoting included.
    #[test]
    fn row_is_the_csv_writers_record() {
        let fields: [&[u8]; 11] = [
            b"\"\"x\"",
            b"f<a, \"b\">",
            b"",
            b"plain",
            b"a,b",
            b"say \"hi\"",
            b"two\nlines",
            b"cr\rhere",
            b"\"",
            b"void at::native::f<float, 4>(int)",
            b"tab\tand ' quote",
        ];
        let mut want = csv::Writer::from_writer(Vec::new());
        let mut row = Row::default();
        let mut got = Vec::new();
        for ints in [[0i64, -1], [i64::MIN, i64::MAX]] {
            row.clear();
            let mut digits = [[0u8; 20]; 2];
            let [d0, d1] = &mut digits;
            let (i0, i1) = (decimal(ints[0], d0), decimal(ints[1], d1));
            let mut record: Vec<&[u8]> = vec![i0];
            row.int(ints[0]);
            for f in fields {
                record.push(f);
                row.text(f);
            }
            record.push(b"");
            row.opt_int(None);
            record.push(i1);
            row.opt_int(Some(ints[1]));
            want.write_record(&record).unwrap();
            got.extend_from_slice(row.end());
        }
        let want = want.into_inner().unwrap();
        assert_eq!(
            String::from_utf8(got).unwrap(),
            String::from_utf8(want).unwrap()
        );
    }
}
