//! Opening an export and learning its schema: which tables and columns this file has,
//! and typed access to the cells of a row, with errors that name the table, row and
//! column.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use rusqlite::Connection;
use rusqlite::types::ValueRef;

use crate::Error;

/// The first 16 bytes of every SQLite 3 database file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Tables only an Nsight Systems export has (any one of them, beside `StringIds`, makes a
/// SQLite file an export).
const EXPORT_TABLES: &[&str] = &[
    "META_DATA_EXPORT",
    "EXPORT_META_DATA",
    "TARGET_INFO_GPU",
    "TARGET_INFO_SESSION_START_TIME",
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "NVTX_EVENTS",
];

/// Whether the file begins with the SQLite header and has the export's tables.
pub(crate) fn sniff(path: &Path) -> bool {
    matches!(has_sqlite_header(path), Ok(true))
        && open(path)
            .and_then(|db| Schema::read(path, &db.conn, &[]))
            .is_ok_and(|schema| schema.is_export())
}

/// Whether the first 16 bytes are SQLite's header.
pub(crate) fn has_sqlite_header(path: &Path) -> Result<bool, Error> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut head = [0u8; 16];
    let mut filled = 0;
    while filled < head.len() {
        match file.read(&mut head[filled..]) {
            Ok(0) => return Ok(false),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io(e)),
        }
    }
    Ok(&head == SQLITE_MAGIC)
}

/// Fails with [`Error::Truncated`] when the file is shorter than its SQLite header says.
///
/// The header (the first 100 bytes) gives the page size (bytes 16..18, big-endian; 1 means
/// 65536) and the page count (bytes 28..32), which SQLite trusts when the change counter
/// (24..28) equals the version-valid-for number (92..96). Call it on a file that begins
/// with SQLite's magic.
pub(crate) fn check_length(path: &Path) -> Result<(), Error> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    let mut header = [0u8; 100];
    if size < header.len() as u64 {
        return Err(Error::Truncated {
            path: path.to_path_buf(),
            size,
            expected: header.len() as u64,
        });
    }
    file.read_exact(&mut header).map_err(io)?;
    let be32 = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65536,
        n => u64::from(n),
    };
    let pages = u64::from(be32(28));
    let count_is_valid = pages > 0 && be32(24) == be32(92);
    let expected = page_size * pages;
    if count_is_valid && size < expected {
        return Err(Error::Truncated {
            path: path.to_path_buf(),
            size,
            expected,
        });
    }
    Ok(())
}

/// An open export ([`sqlite_input::Database`]: immutable, read-only, tables only, WAL or
/// journal content read from one private copy, under the budgets of
/// [`trace_model::limits`]).
pub(crate) type Opened = sqlite_input::Database;

/// Opens the file as data, never as a program or a place to write
/// ([`sqlite_input::open`]); a budget exceeded is [`Error::Limit`].
pub(crate) fn open(path: &Path) -> Result<Opened, Error> {
    sqlite_input::open(path).map_err(|e| match e {
        sqlite_input::OpenError::Io(source) => Error::Io {
            path: path.to_path_buf(),
            source,
        },
        sqlite_input::OpenError::Open(e) => sqlite_error(path, "(opening)", &e),
        sqlite_input::OpenError::Schema(e) => sqlite_error(path, "sqlite_master", &e),
    })
}

/// A SQLite error on `table`, as [`Error::Sqlite`].
pub(crate) fn sqlite_error(path: &Path, table: &str, e: &rusqlite::Error) -> Error {
    if let Some(what) = sqlite_input::budget_exceeded(path, e) {
        return Error::Limit {
            path: path.to_path_buf(),
            table: table.to_string(),
            what,
        };
    }
    Error::Sqlite {
        path: path.to_path_buf(),
        table: table.to_string(),
        message: e.to_string(),
    }
}

/// The tables of the file, by name, with the column names of those the reader reads.
#[derive(Debug, Default)]
pub(crate) struct Schema {
    tables: BTreeMap<String, Vec<String>>,
}

impl Schema {
    /// Reads the table names from `sqlite_master` (tables only: a view or trigger the file
    /// defines is never run, and a view named like an export table is not that table), and
    /// the columns of the tables named in
    /// `columns_of` (an export has about a hundred tables; the reader reads a dozen).
    pub(crate) fn read(
        path: &Path,
        conn: &Connection,
        columns_of: &[&str],
    ) -> Result<Schema, Error> {
        let err = |table: &str, e: rusqlite::Error| sqlite_error(path, table, &e);
        let names = sqlite_input::table_names(conn).map_err(|e| err("sqlite_master", e))?;
        let mut tables = BTreeMap::new();
        let mut stmt = conn
            .prepare("SELECT name FROM pragma_table_info(?1)")
            .map_err(|e| err("sqlite_master", e))?;
        for name in names {
            let mut columns = Vec::new();
            if !columns_of.contains(&name.as_str()) {
                tables.insert(name, columns);
                continue;
            }
            let mut rows = stmt.query([&name]).map_err(|e| err(&name, e))?;
            while let Some(row) = rows.next().map_err(|e| err(&name, e))? {
                if let Ok(ValueRef::Text(column)) = row.get_ref(0) {
                    columns.push(String::from_utf8_lossy(column).into_owned());
                }
            }
            tables.insert(name, columns);
        }
        Ok(Schema { tables })
    }

    /// Whether the file has the tables of an Nsight Systems export.
    pub(crate) fn is_export(&self) -> bool {
        self.has_table("StringIds") && EXPORT_TABLES.iter().any(|t| self.has_table(t))
    }

    pub(crate) fn has_table(&self, table: &str) -> bool {
        self.tables.contains_key(table)
    }

    pub(crate) fn has_column(&self, table: &str, column: &str) -> bool {
        self.tables
            .get(table)
            .is_some_and(|columns| columns.iter().any(|c| c == column))
    }

    /// `SELECT rowid, <columns> FROM table`, with `NULL` for optional columns the table
    /// lacks; `None` when the table is absent. Cell `i` of `columns` is at index `i + 1`.
    pub(crate) fn select(
        &self,
        path: &Path,
        table: &str,
        columns: &[Column],
        filter: &str,
    ) -> Result<Option<String>, Error> {
        if !self.has_table(table) {
            return Ok(None);
        }
        let mut sql = String::from("SELECT rowid");
        for column in columns {
            sql.push_str(", ");
            if self.has_column(table, column.name) {
                sql.push('"');
                sql.push_str(column.name);
                sql.push('"');
            } else if column.required {
                return Err(Error::MissingColumn {
                    path: path.to_path_buf(),
                    table: table.to_string(),
                    column: column.name,
                });
            } else {
                sql.push_str("NULL");
            }
        }
        sql.push_str(" FROM \"");
        sql.push_str(table);
        sql.push('"');
        sql.push_str(filter);
        Ok(Some(sql))
    }
}

/// A column the reader asks for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Column {
    pub(crate) name: &'static str,
    /// Whether the table means nothing without it (an error when absent).
    pub(crate) required: bool,
}

/// A column the table must have.
pub(crate) const fn required(name: &'static str) -> Column {
    Column {
        name,
        required: true,
    }
}

/// A column some schema versions lack (read as NULL there).
pub(crate) const fn optional(name: &'static str) -> Column {
    Column {
        name,
        required: false,
    }
}

/// One row of a query built by [`Schema::select`], with typed cell access whose errors
/// name the file, table, row and column.
pub(crate) struct Cells<'a, 'r> {
    pub(crate) path: &'a Path,
    pub(crate) table: &'a str,
    pub(crate) columns: &'a [Column],
    pub(crate) row: &'a rusqlite::Row<'r>,
    /// The row's `rowid` (cell 0).
    pub(crate) rowid: i64,
}

impl<'a, 'r> Cells<'a, 'r> {
    /// Wraps a row, reading its `rowid`.
    pub(crate) fn new(
        path: &'a Path,
        table: &'a str,
        columns: &'a [Column],
        row: &'a rusqlite::Row<'r>,
    ) -> Result<Self, Error> {
        let rowid = match row.get_ref(0) {
            Ok(ValueRef::Integer(id)) => id,
            Ok(other) => {
                return Err(Error::Value {
                    path: path.to_path_buf(),
                    table: table.to_string(),
                    row: -1,
                    column: "rowid",
                    found: describe(other),
                    expected: "an integer",
                });
            }
            Err(e) => return Err(sqlite_error(path, table, &e)),
        };
        Ok(Cells {
            path,
            table,
            columns,
            row,
            rowid,
        })
    }

    fn cell(&self, index: usize) -> Result<ValueRef<'a>, Error> {
        self.row
            .get_ref(index + 1)
            .map_err(|e| sqlite_error(self.path, self.table, &e))
    }

    fn wrong(&self, index: usize, found: ValueRef<'_>, expected: &'static str) -> Error {
        Error::Value {
            path: self.path.to_path_buf(),
            table: self.table.to_string(),
            row: self.rowid,
            column: self.columns[index].name,
            found: describe(found),
            expected,
        }
    }

    /// An integer cell, NULL read as `None`.
    pub(crate) fn opt_int(&self, index: usize) -> Result<Option<i64>, Error> {
        match self.cell(index)? {
            ValueRef::Integer(v) => Ok(Some(v)),
            ValueRef::Null => Ok(None),
            other => Err(self.wrong(index, other, "an integer")),
        }
    }

    /// An integer cell that must not be NULL.
    pub(crate) fn int(&self, index: usize) -> Result<i64, Error> {
        match self.cell(index)? {
            ValueRef::Integer(v) => Ok(v),
            other => Err(self.wrong(index, other, "an integer")),
        }
    }

    /// A text cell, NULL read as `None`; invalid UTF-8 is replaced, not refused.
    pub(crate) fn opt_text(
        &self,
        index: usize,
    ) -> Result<Option<std::borrow::Cow<'a, str>>, Error> {
        match self.cell(index)? {
            ValueRef::Text(bytes) => Ok(Some(String::from_utf8_lossy(bytes))),
            ValueRef::Null => Ok(None),
            other => Err(self.wrong(index, other, "text")),
        }
    }
}

/// A cell's value in words, for error messages (long text cut at 40 characters).
fn describe(value: ValueRef<'_>) -> String {
    match value {
        ValueRef::Null => "NULL".to_string(),
        ValueRef::Integer(v) => format!("integer {v}"),
        ValueRef::Real(v) => format!("real {v}"),
        ValueRef::Text(bytes) => {
            let text = String::from_utf8_lossy(bytes);
            let cut: String = text.chars().take(40).collect();
            let more = if cut.len() < text.len() { "…" } else { "" };
            format!("text {cut:?}{more}")
        }
        ValueRef::Blob(bytes) => format!("a blob of {} bytes", bytes.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_cuts_long_text() {
        assert_eq!(describe(ValueRef::Text(b"abc")), "text \"abc\"");
        let long = "x".repeat(50);
        assert_eq!(
            describe(ValueRef::Text(long.as_bytes())),
            format!("text \"{}\"…", "x".repeat(40))
        );
        assert_eq!(describe(ValueRef::Null), "NULL");
        assert_eq!(describe(ValueRef::Real(1.5)), "real 1.5");
        assert_eq!(describe(ValueRef::Blob(&[1, 2])), "a blob of 2 bytes");
    }
}
