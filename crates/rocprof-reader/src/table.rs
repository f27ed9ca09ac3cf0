//! CSV files read by column name, with errors that name the line and column.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use crate::Error;

/// An open CSV file and its header.
pub(crate) struct CsvFile {
    path: PathBuf,
    reader: csv::Reader<LineBound<BufReader<File>>>,
    header: Vec<String>,
}

/// One data row, with where it is for error messages.
pub(crate) struct Row<'a> {
    path: &'a Path,
    header: &'a [String],
    record: &'a csv::StringRecord,
    line: u64,
}

impl CsvFile {
    pub(crate) fn open(path: &Path) -> Result<CsvFile, Error> {
        let file = File::open(path).map_err(|source| Error::Io {
            path: path.to_owned(),
            source,
        })?;
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(false)
            .from_reader(LineBound {
                inner: BufReader::new(file),
                limit: trace_model::limits::max_string_bytes(),
                run: 0,
                line: 1,
            });
        let header = reader
            .headers()
            .map_err(|err| csv_error(path, &err, "header"))?
            .iter()
            .map(|h| h.trim().to_owned())
            .collect();
        Ok(CsvFile {
            path: path.to_owned(),
            reader,
            header,
        })
    }

    /// The header's column names.
    pub(crate) fn header(&self) -> &[String] {
        &self.header
    }

    /// The index of a column the format requires.
    pub(crate) fn required(&self, name: &str) -> Result<usize, Error> {
        self.optional(name).ok_or_else(|| Error::Csv {
            path: self.path.clone(),
            line: 1,
            column: name.to_owned(),
            message: format!(
                "the header lacks column `{name}` (it has: {})",
                trace_model::limits::names_shown(&self.header)
            ),
        })
    }

    /// The index of a column that only some versions write (case-insensitive).
    pub(crate) fn optional(&self, name: &str) -> Option<usize> {
        self.header
            .iter()
            .position(|h| h.eq_ignore_ascii_case(name))
    }

    /// Calls `each` on every data row, in order.
    pub(crate) fn rows(
        &mut self,
        mut each: impl FnMut(&Row<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut record = csv::StringRecord::new();
        loop {
            match self.reader.read_record(&mut record) {
                Ok(false) => return Ok(()),
                Ok(true) => {}
                Err(err) => return Err(csv_error(&self.path, &err, "-")),
            }
            let line = record.position().map_or(0, |p| p.line());
            each(&Row {
                path: &self.path,
                header: &self.header,
                record: &record,
                line,
            })?;
        }
    }
}

impl Row<'_> {
    /// The row's line in the file (1-based; the header is line 1).
    pub(crate) fn line(&self) -> u64 {
        self.line
    }

    pub(crate) fn str(&self, column: usize) -> &str {
        self.record.get(column).unwrap_or("")
    }

    pub(crate) fn error(&self, column: usize, message: String) -> Error {
        Error::Csv {
            path: self.path.to_owned(),
            line: self.line,
            column: self
                .header
                .get(column)
                .cloned()
                .unwrap_or_else(|| column.to_string()),
            message,
        }
    }

    /// An integer cell (a signed one: ids and process numbers).
    pub(crate) fn int(&self, column: usize) -> Result<i64, Error> {
        let text = self.str(column).trim();
        text.parse()
            .map_err(|_| self.error(column, format!("`{text}` is not an integer")))
    }

    /// A non-negative integer cell (timestamps, sizes, correlation ids).
    pub(crate) fn uint(&self, column: usize) -> Result<u64, Error> {
        let text = self.str(column).trim();
        text.parse()
            .map_err(|_| self.error(column, format!("`{text}` is not a non-negative integer")))
    }

    /// An optional integer column: `None` when the file has no such column or the cell is
    /// empty.
    pub(crate) fn opt_int(&self, column: Option<usize>) -> Result<Option<i64>, Error> {
        match column {
            Some(c) if !self.str(c).trim().is_empty() => self.int(c).map(Some),
            _ => Ok(None),
        }
    }
}

/// Fails a read once a line grows past `limit` bytes without a line break, so that one
/// huge field (a "CSV bomb") stops at the string limit instead of being gathered whole.
pub(crate) struct LineBound<R> {
    inner: R,
    limit: u64,
    /// Bytes since the last line break.
    run: u64,
    /// The line being read (1-based).
    line: u64,
}

/// The message of [`LineBound`]'s error (found again in [`csv_error`]).
const LINE_TOO_LONG: &str = "tracewise-line-too-long";

impl<R: std::io::Read> std::io::Read for LineBound<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        for &b in &buf[..n] {
            if b == b'\n' {
                self.run = 0;
                self.line += 1;
            } else {
                self.run += 1;
            }
        }
        if self.run > self.limit {
            return Err(std::io::Error::other(format!(
                "{LINE_TOO_LONG} {}",
                self.line
            )));
        }
        Ok(n)
    }
}

fn csv_error(path: &Path, err: &csv::Error, column: &str) -> Error {
    if let csv::ErrorKind::Io(io) = err.kind()
        && let Some(line) = io
            .to_string()
            .strip_prefix(LINE_TOO_LONG)
            .and_then(|l| l.trim().parse::<u64>().ok())
    {
        return Error::Limit {
            path: path.to_owned(),
            where_: format!("line {line}"),
            what: format!(
                "a line longer than the limit of {} bytes (set TRACEWISE_MAX_EVENT_BYTES to \
                 raise it)",
                trace_model::limits::max_string_bytes()
            ),
        };
    }
    let line = err.position().map_or(1, |p| p.line());
    let message = match err.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("{len} fields where the header has {expected_len}"),
        csv::ErrorKind::Utf8 { .. } => "not UTF-8 text".to_owned(),
        _ => err.to_string(),
    };
    Error::Csv {
        path: path.to_owned(),
        line,
        column: column.to_owned(),
        message,
    }
}
