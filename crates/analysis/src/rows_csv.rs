//! `rows.csv`: one row per GPU activity (device, stream, kind, class, name, times, step,
//! and its launch), written for skip-stats and investigate; a rank directory's rows are made
//! one rank at a time in part files ([`RowParts`]) and joined in rank order.

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
    let mut n = v.unsigned_abs();
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    &buf[at..]
}

/// Writes one `rows.csv` row per GPU activity of the capture, in stream then start
/// order. `rank` adds a leading rank column (directories of ranks).
pub(crate) fn write_rows<W: std::io::Write>(
    w: &mut csv::Writer<W>,
    capture: &Capture,
    steps: &Steps,
    rank: Option<Option<i64>>,
) -> Result<(), csv::Error> {
    // Fields go to the writer one by one, numbers through one scratch buffer: a `String`
    // per field was most of the rows' time.
    let int = |w: &mut csv::Writer<W>, v: i64| {
        let mut buf = [0u8; 20];
        w.write_field(decimal(v, &mut buf))
    };
    const EMPTY: &[u8] = b"";
    for (a, s) in capture.activities().iter().zip(&steps.activity_step) {
        if let Some(r) = rank {
            match r {
                Some(r) => int(w, r)?,
                None => w.write_field(EMPTY)?,
            }
        }
        let stream = capture.stream(a.stream);
        int(w, capture.device(stream.device).ordinal)?;
        int(w, stream.ordinal)?;
        w.write_field(budget::BusyKind::of(a.class).label())?;
        w.write_field(a.class.word())?;
        w.write_field(match a.class {
            KernelClass::Collective(kind) => kind.label(),
            _ => "",
        })?;
        w.write_field(capture.name(a.name))?;
        int(w, a.start.0)?;
        int(w, a.dur.0)?;
        match s {
            Some(i) => int(w, steps.steps[*i as usize].number)?,
            None => w.write_field(EMPTY)?,
        }
        let j = launch::join(capture, a);
        match j.launch {
            Some(l) => {
                int(w, capture.thread(l.thread).tid)?;
                w.write_field(capture.name(l.name))?;
                int(w, l.start.0)?;
                int(w, l.dur.0)?;
                // A start before the launch is clock skew, not a delay: left empty.
                let delay = a.start - l.start;
                if delay.0 >= 0 {
                    int(w, delay.0)?;
                } else {
                    w.write_field(EMPTY)?;
                }
            }
            None => {
                for _ in 0..5 {
                    w.write_field(EMPTY)?;
                }
            }
        }
        w.write_record(std::iter::empty::<&[u8]>())?;
    }
    Ok(())
}
