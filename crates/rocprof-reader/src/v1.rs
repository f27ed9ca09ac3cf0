//! rocprof v1 kernel traces: `results.csv` (one row per dispatch) and the same rows in
//! `results.db`'s `KERN` table.
//!
//! Each row is one kernel dispatch on GPU `gpu-id`, queue `queue-id`, timed by `BeginNs` and
//! `EndNs` (the vendor's `DurationNs` is their difference). v1 kernel traces carry no host
//! API calls, so nothing links; processes are told apart by the `pid` column.

use std::collections::BTreeMap;
use std::path::Path;

use trace_model::Format;

use crate::model::{Activity, Tables};
use crate::table::CsvFile;
use crate::{Error, Process};

/// One dispatch, as both files give it.
struct Dispatch {
    name: String,
    gpu: i64,
    queue: i64,
    pid: Option<i64>,
    /// Where it is (`line 12`, `KERN row 12`), for the diagnostic of a negative time.
    at: String,
    begin: i64,
    end: i64,
}

pub(crate) fn load_csv(path: &Path) -> Result<Vec<Process>, Error> {
    let mut file = CsvFile::open(path)?;
    let name = file.required("KernelName")?;
    let begin = file.required("BeginNs")?;
    let end = file.required("EndNs")?;
    let gpu = file.optional("gpu-id");
    let queue = file.optional("queue-id");
    let pid = file.optional("pid");
    let mut dispatches = Vec::new();
    file.rows(|row| {
        dispatches.push(Dispatch {
            name: row.str(name).to_owned(),
            gpu: row.opt_int(gpu)?.unwrap_or(0),
            queue: row.opt_int(queue)?.unwrap_or(0),
            pid: row.opt_int(pid)?,
            at: format!("line {}", row.line()),
            begin: row.int(begin)?,
            end: row.int(end)?,
        });
        Ok(())
    })?;
    Ok(build(path, dispatches))
}

pub(crate) fn load_db(path: &Path) -> Result<Vec<Process>, Error> {
    let db = crate::rocpd::open(path)?;
    let conn = &db.conn;
    let fail = |err: rusqlite::Error| crate::rocpd::sqlite_error(path, "KERN", &err);
    // Square brackets, not double quotes: SQLite reads an unknown double-quoted name as a
    // string literal, so a missing column would not be an error.
    let mut stmt = conn
        .prepare(
            "SELECT rowid, [KernelName], [gpu-id], [queue-id], [pid], [BeginNs], [EndNs] FROM KERN",
        )
        .map_err(fail)?;
    let mut rows = stmt.query([]).map_err(fail)?;
    let mut dispatches = Vec::new();
    while let Some(row) = rows.next().map_err(fail)? {
        let rowid: i64 = row.get(0).map_err(fail)?;
        let at = |column: &str, err: rusqlite::Error| Error::Sqlite {
            path: path.to_owned(),
            table: format!("KERN row {rowid}"),
            message: format!("column {column}: {err}"),
        };
        let name: String = row.get(1).map_err(|e| at("KernelName", e))?;
        let stamp = |index: usize, column: &str| -> Result<i64, Error> {
            row.get(index).map_err(|e| at(column, e))
        };
        dispatches.push(Dispatch {
            // The v1 database keeps the CSV's quotes around names.
            name: name.trim_matches('"').to_owned(),
            gpu: row
                .get::<_, Option<i64>>(2)
                .map_err(|e| at("gpu-id", e))?
                .unwrap_or(0),
            queue: row
                .get::<_, Option<i64>>(3)
                .map_err(|e| at("queue-id", e))?
                .unwrap_or(0),
            pid: row.get(4).map_err(|e| at("pid", e))?,
            at: format!("KERN row {rowid}"),
            begin: stamp(5, "BeginNs")?,
            end: stamp(6, "EndNs")?,
        });
    }
    Ok(build(path, dispatches))
}

fn build(path: &Path, dispatches: Vec<Dispatch>) -> Vec<Process> {
    let mut processes: BTreeMap<Option<i64>, Tables> = BTreeMap::new();
    // Rows with a negative time are left out and counted (an end before its start is
    // left out and counted by the capture builder).
    let mut negative: Option<(u64, &str)> = None;
    for d in &dispatches {
        let (Ok(start), Ok(end)) = (u64::try_from(d.begin), u64::try_from(d.end)) else {
            negative.get_or_insert((0, &d.at)).0 += 1;
            continue;
        };
        let tables = processes
            .entry(d.pid)
            .or_insert_with(|| Tables::new(Format::RocprofV1));
        tables.push_activity(Activity {
            device: d.gpu,
            stream: d.queue,
            start,
            end,
            name: &d.name,
            correlation: None,
            copy: None,
            bytes: None,
        });
    }
    if processes.is_empty() {
        processes.insert(None, Tables::new(Format::RocprofV1));
    }
    if let Some((count, first)) = negative {
        for tables in processes.values_mut() {
            tables.b.diagnostics.add_many(
                "rocprof-negative-time",
                count,
                "kernel dispatches with a negative BeginNs or EndNs were left out".to_owned(),
                format!("{}: {first}", path.display()),
            );
        }
    }
    processes
        .into_iter()
        .map(|(pid, tables)| Process {
            pid,
            name: None,
            rank: None,
            capture: tables.finish(path),
        })
        .collect()
}
