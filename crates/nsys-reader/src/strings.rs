//! Names by `StringIds` id: one prepared lookup, each name read once and cut at the name
//! limit ([`trace_model::limits::max_name_bytes`]) before it is copied.

use std::path::Path;

use rusqlite::{Connection, Statement};

use crate::Error;
use crate::schema::{Schema, sqlite_error};

/// Looks names up in `StringIds` by id.
pub(crate) struct StringLookup<'c> {
    path: &'c Path,
    statement: Option<Statement<'c>>,
    /// Names cut at the name limit.
    pub(crate) cut: u64,
}

impl<'c> StringLookup<'c> {
    pub(crate) fn new(
        path: &'c Path,
        conn: &'c Connection,
        schema: &Schema,
    ) -> Result<Self, Error> {
        let statement =
            if schema.has_column("StringIds", "id") && schema.has_column("StringIds", "value") {
                let sql = "SELECT value FROM StringIds WHERE id = ?1";
                Some(
                    conn.prepare(sql)
                        .map_err(|e| sqlite_error(path, "StringIds", &e))?,
                )
            } else {
                None
            };
        Ok(StringLookup {
            path,
            statement,
            cut: 0,
        })
    }

    /// The text of string `id`, `None` when there is no such id.
    pub(crate) fn text(&mut self, id: i64) -> Result<Option<String>, Error> {
        let Some(statement) = &mut self.statement else {
            return Ok(None);
        };
        let err = |e: rusqlite::Error| sqlite_error(self.path, "StringIds", &e);
        let mut rows = statement.query([id]).map_err(err)?;
        let Some(row) = rows.next().map_err(err)? else {
            return Ok(None);
        };
        match row.get_ref(0).map_err(err)? {
            rusqlite::types::ValueRef::Text(bytes) => {
                // A name longer than the name limit is cut here, before it is copied: it
                // would be copied into every row of every text output.
                let limit = trace_model::limits::max_name_bytes();
                if bytes.len() > limit {
                    self.cut += 1;
                    let head = String::from_utf8_lossy(&bytes[..limit]);
                    let text = trace_model::limits::cut_text(&head, bytes.len());
                    return Ok(Some(text));
                }
                Ok(Some(String::from_utf8_lossy(bytes).into_owned()))
            }
            rusqlite::types::ValueRef::Null => Ok(None),
            other => Err(Error::Value {
                path: self.path.to_path_buf(),
                table: "StringIds".to_string(),
                row: id,
                column: "value",
                found: format!("{:?}", other.data_type()),
                expected: "text",
            }),
        }
    }
}

/// The name-cut diagnostic of a capture whose names `cut` were cut (none when 0).
pub(crate) fn note_cut(b: &mut trace_model::CaptureBuilder, cut: u64, file: &str) {
    if cut == 0 {
        return;
    }
    b.diagnostics.add_many(
        "name-cut",
        cut,
        format!(
            "names longer than {} bytes were cut, each followed by its full length \
             (set TRACEWISE_MAX_NAME_BYTES to keep longer names)",
            trace_model::limits::max_name_bytes()
        ),
        format!("{file}: table StringIds"),
    );
}
