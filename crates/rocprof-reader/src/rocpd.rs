//! rocpd SQLite databases (rocprofv3's default output since ROCm 7, `<pid>_results.db`),
//! read to rocprofiler-sdk's schema version 3 (`source/share/rocprofiler-sdk-rocpd/
//! rocpd_tables.sql` and `rocpd_views.sql`, vendored in `testdata/rocprof/rocpd-sdk/`).
//!
//! rocprofv3 names every table with the run's uuid as a suffix (`rocpd_kernel_dispatch_<uuid>`)
//! and adds views without it (`rocpd_kernel_dispatch`, ...) that show the first run's
//! tables only. So the runs of a database are found by their `rocpd_metadata<uuid>` tables
//! and each is read through its own suffixed tables: several uuids (several processes
//! written to one database) are several sets of captures. A database without suffixed
//! tables is read through the unsuffixed names.
//!
//! Two layouts of schema version 3 are read, told apart by the dispatch table's columns:
//! the one rocprofv3 ships, where `start`/`end` are columns of the region, dispatch and
//! copy tables and `pid`/`tid` name `rocpd_info_process`/`rocpd_info_thread` rows; and an
//! earlier one, where times are `rocpd_timestamp.value` joined by `start_id`/`end_id` and
//! a `rocpd_track` gives the process, thread, agent, queue and stream. Names are
//! `rocpd_string` rows; the correlation id shared by an API call and the GPU work it
//! launched is `rocpd_event.correlation_id` of each row's `event_id`. Rows join on `guid`
//! as well as id, as the schema's own views do. GPU agents become devices numbered by
//! `type_index` (the n-th GPU); one capture per process id.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::Connection;
use trace_model::{DeviceProperties, Format, MemcpyDirection};

use crate::model::{Activity, Host, Tables, api_kind, copy_direction};
use crate::{Error, Process};

/// The tables (or views) every run needs, as the schema names them (before the suffix).
pub(crate) const REQUIRED: &[&str] = &[
    "rocpd_string",
    "rocpd_info_agent",
    "rocpd_info_kernel_symbol",
    "rocpd_event",
    "rocpd_kernel_dispatch",
];

/// An open database ([`sqlite_input::Database`]: immutable, read-only, tables only, WAL
/// or journal content read from one private copy, under the budgets of
/// [`trace_model::limits`]).
pub(crate) type Opened = sqlite_input::Database;

/// Opens a database as data, never as a program or a place to write
/// ([`sqlite_input::open`]); a budget exceeded is [`Error::Limit`].
pub(crate) fn open(path: &Path) -> Result<Opened, Error> {
    sqlite_input::open(path).map_err(|e| match e {
        sqlite_input::OpenError::Io(source) => Error::Io {
            path: path.to_owned(),
            source,
        },
        sqlite_input::OpenError::Open(e) | sqlite_input::OpenError::Schema(e) => {
            sqlite_error(path, "-", &e)
        }
    })
}

/// A SQLite error on `table`: [`Error::Limit`] when a budget stopped the read, else
/// [`Error::Sqlite`].
pub(crate) fn sqlite_error(path: &Path, table: &str, err: &rusqlite::Error) -> Error {
    match sqlite_input::budget_exceeded(path, err) {
        Some(what) => Error::Limit {
            path: path.to_owned(),
            where_: format!("table {table}"),
            what,
        },
        None => Error::Sqlite {
            path: path.to_owned(),
            table: table.to_owned(),
            message: err.to_string(),
        },
    }
}

/// The names of every table ([`sqlite_input::table_names`]). Views are not read: a view
/// the file defines would run as a program (a recursive or cross-joined view never ends),
/// and one named like a schema table is not that table.
pub(crate) fn table_names(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    sqlite_input::table_names(conn)
}

/// The uuid suffixes of the runs a database holds: the rest of every table's name that
/// begins with `rocpd_metadata` (`_0198a1b2...`), in name order; `[""]` when there is no
/// suffixed table (the unsuffixed names are then the tables themselves, or views).
fn runs(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND substr(name, 1, 14) = 'rocpd_metadata' ORDER BY name",
    )?;
    let names: Vec<String> = stmt
        .query_map([], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut suffixes: Vec<String> = names
        .iter()
        .filter_map(|n| n.strip_prefix("rocpd_metadata"))
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    if suffixes.is_empty() {
        suffixes.push(String::new());
    }
    Ok(suffixes)
}

/// The column names of a table or view.
fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
    let names = stmt.query_map([table], |row| row.get(0))?;
    names.collect()
}

/// Fails with [`Error::Truncated`] when the file is shorter than its SQLite header says
/// (a copy cut short, which SQLite itself calls only "malformed").
fn check_length(path: &Path) -> Result<(), Error> {
    use std::io::Read;
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    let mut header = [0u8; 100];
    if size < header.len() as u64 {
        return Err(Error::Truncated {
            path: path.to_owned(),
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
    // SQLite trusts the page count when the change counter equals version-valid-for; a
    // page size that is no power of two from 512 on is no SQLite header (SQLite says so).
    let valid_page_size = page_size.is_power_of_two() && page_size >= 512;
    if valid_page_size && pages > 0 && be32(24) == be32(92) && size < page_size * pages {
        return Err(Error::Truncated {
            path: path.to_owned(),
            size,
            expected: page_size * pages,
        });
    }
    Ok(())
}

/// How a run stores times.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// `start`/`end` columns (rocprofv3 as shipped).
    Columns,
    /// `start_id`/`end_id` into `rocpd_timestamp`, process and agent from `rocpd_track`.
    Stamps,
}

pub(crate) fn load(path: &Path) -> Result<Vec<Process>, Error> {
    check_length(path)?;
    let db = open(path)?;
    let conn = &db.conn;
    let sqlite = |table: &str, err: rusqlite::Error| sqlite_error(path, table, &err);
    let names = table_names(conn).map_err(|e| sqlite("sqlite_master", e))?;
    let suffixes = runs(conn).map_err(|e| sqlite("sqlite_master", e))?;
    let mut out = Vec::new();
    for suffix in &suffixes {
        out.extend(load_run(path, conn, &names, suffix)?);
    }
    Ok(out)
}

/// Reads the run whose tables end with `suffix`.
fn load_run(
    path: &Path,
    conn: &Connection,
    names: &[String],
    suffix: &str,
) -> Result<Vec<Process>, Error> {
    let table = |base: &str| format!("{base}{suffix}");
    let has = |base: &str| names.iter().any(|n| *n == table(base));
    let missing = |base: &str, why: &str| Error::Sqlite {
        path: path.to_owned(),
        table: table(base),
        message: format!(
            "not in the database, so it is not a rocpd database (schema version 3){why}; it has: {}",
            if names.is_empty() {
                "no tables".to_owned()
            } else {
                trace_model::limits::names_shown(names)
            }
        ),
    };
    if let Some(absent) = REQUIRED.iter().find(|t| !has(t)) {
        return Err(missing(absent, ""));
    }
    let mut reader = Reader {
        path,
        conn,
        suffix,
        layout: Layout::Columns,
        processes: BTreeMap::new(),
        agents: BTreeMap::new(),
        commands: BTreeMap::new(),
        repeated: BTreeMap::new(),
        negative: BTreeMap::new(),
    };
    let version = reader.schema_version(has("rocpd_metadata"))?;
    let dispatch_columns = columns(conn, &table("rocpd_kernel_dispatch"))
        .map_err(|e| reader.error("rocpd_kernel_dispatch", e))?;
    let has_column = |c: &str| dispatch_columns.iter().any(|d| d == c);
    reader.layout = if has_column("start") && has_column("end") {
        for base in ["rocpd_info_process", "rocpd_info_thread"] {
            if !has(base) {
                return Err(missing(base, ""));
            }
        }
        Layout::Columns
    } else if has_column("start_id") && has_column("end_id") {
        for base in ["rocpd_timestamp", "rocpd_track"] {
            if !has(base) {
                return Err(missing(base, " with start_id/end_id times"));
            }
        }
        Layout::Stamps
    } else {
        return Err(reader.error(
            "rocpd_kernel_dispatch",
            "neither start/end nor start_id/end_id columns: not rocpd schema version 3",
        ));
    };
    reader.agents()?;
    reader.commands()?;
    if has("rocpd_region") {
        reader.regions()?;
    }
    reader.kernels()?;
    if has("rocpd_memory_copy") {
        reader.copies()?;
    }
    let Reader {
        mut processes,
        agents,
        commands,
        repeated,
        negative,
        ..
    } = reader;
    if processes.is_empty() {
        processes.insert(None, Tables::new(Format::Rocpd));
    }
    let file = path.display();
    for tables in processes.values_mut() {
        for (table, &(count, first)) in &repeated {
            tables.b.diagnostics.add_many(
                "rocpd-repeated-id",
                count,
                "rows a join gave again for one id (the database repeats an id of a \
                 timestamp, string, event or process row): each id's first row was read"
                    .to_owned(),
                format!("{file}: table {table}{suffix}, row {first}"),
            );
        }
        for (table, &(count, first)) in &negative {
            tables.b.diagnostics.add_many(
                "rocpd-negative-time",
                count,
                "rows with a negative start or end time were left out".to_owned(),
                format!("{file}: table {table}{suffix}, row {first}"),
            );
        }
    }
    Ok(processes
        .into_iter()
        .map(|(pid, mut tables)| {
            // Every process's capture lists every GPU the run describes.
            for agent in agents.values().filter(|a| a.gpu) {
                tables.set_device_properties(agent.ordinal, agent.properties.clone());
            }
            tables.b.meta.producer = Some(match &version {
                Some(v) => format!("rocprofv3 rocpd (schema version {v})"),
                None => "rocprofv3 rocpd".to_owned(),
            });
            Process {
                pid,
                name: pid.and_then(|p| commands.get(&p).cloned()),
                rank: None,
                capture: tables.finish(path),
            }
        })
        .collect())
}

struct Agent {
    ordinal: i64,
    gpu: bool,
    properties: DeviceProperties,
}

struct Reader<'a> {
    path: &'a Path,
    conn: &'a Connection,
    /// The run's table-name suffix (its uuid), or empty.
    suffix: &'a str,
    layout: Layout,
    processes: BTreeMap<Option<i64>, Tables>,
    /// By `rocpd_info_agent.id`.
    agents: BTreeMap<i64, Agent>,
    /// Process commands (`rocpd_info_process.command`) by OS pid.
    commands: BTreeMap<i64, String>,
    /// Rows left out because a join repeated their id: by table, the count and the first.
    repeated: BTreeMap<String, (u64, i64)>,
    /// Rows left out for a negative time: by table, the count and the first.
    negative: BTreeMap<String, (u64, i64)>,
}

impl Reader<'_> {
    /// The run's name of a table.
    fn t(&self, base: &str) -> String {
        format!("`{base}{}`", self.suffix)
    }

    fn error(&self, table: &str, err: impl std::fmt::Display) -> Error {
        Error::Sqlite {
            path: self.path.to_owned(),
            table: format!("{table}{}", self.suffix),
            message: err.to_string(),
        }
    }

    /// A SQLite error while running a query on `table` (a budget, or SQLite's message).
    fn sql_error(&self, table: &str, err: &rusqlite::Error) -> Error {
        sqlite_error(self.path, &format!("{table}{}", self.suffix), err)
    }

    fn tables(&mut self, pid: Option<i64>) -> &mut Tables {
        self.processes
            .entry(pid)
            .or_insert_with(|| Tables::new(Format::Rocpd))
    }

    /// The run's `schema_version`; one that is not 3 is an error naming it.
    fn schema_version(&self, has_metadata: bool) -> Result<Option<String>, Error> {
        if !has_metadata {
            return Ok(None);
        }
        let sql = format!(
            "SELECT value FROM {} WHERE tag = 'schema_version' LIMIT 1",
            self.t("rocpd_metadata")
        );
        let version: Option<String> = match self.conn.query_row(&sql, [], |row| row.get(0)) {
            Ok(v) => Some(v),
            Err(rusqlite::Error::QueryReturnedNoRows) => None,
            Err(e) => return Err(self.error("rocpd_metadata", e)),
        };
        if let Some(v) = &version {
            let major = v.trim().split('.').next().unwrap_or("");
            if major != "3" {
                return Err(self.error(
                    "rocpd_metadata",
                    format!(
                        "schema_version {v}: this reader reads rocpd schema version 3 (rocprofiler-sdk's rocpd_tables.sql); convert the database with the rocprofv3 that reads it, or run rocprofv3 --output-format csv|pftrace"
                    ),
                ));
            }
        }
        Ok(version)
    }

    /// Runs `sql` and calls `each` with every row and its `id` (the first column).
    fn each(
        &mut self,
        table: &str,
        sql: &str,
        mut each: impl FnMut(&mut Self, i64, &rusqlite::Row<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let conn = self.conn;
        let mut stmt = conn.prepare(sql).map_err(|e| self.sql_error(table, &e))?;
        let mut rows = stmt.query([]).map_err(|e| self.sql_error(table, &e))?;
        // Rows come in id order; a join on ids the file repeats (two timestamps or
        // strings with one id) would give a row's id again: its first row is read, the
        // others counted and left out, so rows never multiply.
        let mut last = None;
        while let Some(row) = rows.next().map_err(|e| self.sql_error(table, &e))? {
            let id: i64 = row.get(0).map_err(|e| self.error(table, e))?;
            if last == Some(id) {
                self.repeated.entry(table.to_owned()).or_insert((0, id)).0 += 1;
                continue;
            }
            last = Some(id);
            each(self, id, row)?;
        }
        Ok(())
    }

    /// The columns every timed row's query begins with after its id, and the joins they
    /// need: start, end, OS pid; then `extra` (the row's own columns, `X.`), then the
    /// event's correlation id. In the shipped layout the row's `pid`/`tid` name
    /// `rocpd_info_process`/`rocpd_info_thread` rows and its agent, queue and stream are
    /// its own columns; in the earlier one they come from its track.
    fn timed_select(&self, base: &str, extra: &[&str], joins: &str) -> String {
        let (event, string) = (self.t("rocpd_event"), self.t("rocpd_string"));
        let table = self.t(base);
        let mut columns = Vec::new();
        let from = match self.layout {
            Layout::Columns => {
                columns.extend(["X.start", "X.end", "P.pid"]);
                format!(
                    "{table} X
                     LEFT JOIN {process} P ON P.id = X.pid AND P.guid = X.guid
                     LEFT JOIN {thread} TH ON TH.id = X.tid AND TH.guid = X.guid",
                    process = self.t("rocpd_info_process"),
                    thread = self.t("rocpd_info_thread"),
                )
            }
            Layout::Stamps => {
                columns.extend(["DS.value", "DE.value", "T.pid"]);
                format!(
                    "{table} X
                     LEFT JOIN {stamp} DS ON DS.id = X.start_id AND DS.guid = X.guid
                     LEFT JOIN {stamp} DE ON DE.id = X.end_id AND DE.guid = X.guid
                     LEFT JOIN {track} T ON T.id = X.track_id AND T.guid = X.guid",
                    stamp = self.t("rocpd_timestamp"),
                    track = self.t("rocpd_track"),
                )
            }
        };
        let extra: Vec<String> = extra
            .iter()
            .map(|c| match (self.layout, c.strip_prefix("T.")) {
                // Thread, agent, queue, stream: the track's in the earlier layout, the
                // row's own (the thread by its `rocpd_info_thread` row) in the shipped one.
                (Layout::Stamps, _) | (_, None) => (*c).to_owned(),
                (Layout::Columns, Some("tid")) => "TH.tid".to_owned(),
                (Layout::Columns, Some(column)) => format!("X.{column}"),
            })
            .collect();
        format!(
            "SELECT X.id, {}, {}, E.correlation_id
             FROM {from}
             LEFT JOIN {event} E ON E.id = X.event_id AND E.guid = X.guid
             {}
             ORDER BY X.id",
            columns.join(", "),
            extra.join(", "),
            joins
                .replace("{string}", &string)
                .replace("{symbol}", &self.t("rocpd_info_kernel_symbol")),
        )
    }

    /// Process commands by OS pid (`rocpd_info_process`, when the run has it).
    fn commands(&mut self) -> Result<(), Error> {
        let has = table_names(self.conn)
            .map(|names| {
                names
                    .iter()
                    .any(|n| *n == format!("rocpd_info_process{}", self.suffix))
            })
            .unwrap_or(false);
        if !has {
            return Ok(());
        }
        let sql = format!(
            "SELECT id, pid, command FROM {} ORDER BY id",
            self.t("rocpd_info_process")
        );
        self.each("rocpd_info_process", &sql, |reader, _, row| {
            let at = |e| reader.error("rocpd_info_process", e);
            let pid: Option<i64> = row.get(1).map_err(at)?;
            let command: Option<String> = row.get(2).map_err(at)?;
            if let (Some(pid), Some(command)) = (pid, command.filter(|c| !c.is_empty())) {
                reader.commands.entry(pid).or_insert(command);
            }
            Ok(())
        })
    }

    fn agents(&mut self) -> Result<(), Error> {
        let sql = format!(
            "SELECT id, type, type_index, logical_index, absolute_index, product_name, \
             model_name, name FROM {} ORDER BY id",
            self.t("rocpd_info_agent")
        );
        self.each("rocpd_info_agent", &sql, |reader, id, row| {
            let at = |e| reader.error(&format!("rocpd_info_agent row {id}"), e);
            let kind: Option<String> = row.get(1).map_err(at)?;
            let mut ordinal = None;
            for index in 2..=4 {
                ordinal = ordinal.or(row.get::<_, Option<i64>>(index).map_err(at)?);
            }
            let mut name = None;
            for index in 5..=7 {
                name = name.or(row
                    .get::<_, Option<String>>(index)
                    .map_err(at)?
                    .filter(|n| !n.is_empty()));
            }
            reader.agents.insert(
                id,
                Agent {
                    ordinal: ordinal.unwrap_or(id),
                    gpu: kind.as_deref() == Some("GPU"),
                    properties: DeviceProperties {
                        name,
                        ..DeviceProperties::default()
                    },
                },
            );
            Ok(())
        })
    }

    fn regions(&mut self) -> Result<(), Error> {
        let sql = self.timed_select(
            "rocpd_region",
            &["T.tid", "NS.string", "C.string"],
            "LEFT JOIN {string} NS ON NS.id = X.name_id AND NS.guid = X.guid
             LEFT JOIN {string} C ON C.id = E.category_id AND C.guid = E.guid",
        );
        self.each("rocpd_region", &sql, |reader, id, row| {
            let Some((start, end)) = reader.stamps("rocpd_region", id, row)? else {
                return Ok(());
            };
            let table = format!("rocpd_region row {id}");
            let at = |e| reader.error(&table, e);
            let pid: Option<i64> = row.get(3).map_err(at)?;
            let tid: Option<i64> = row.get(4).map_err(at)?;
            let name: Option<String> = row.get(5).map_err(at)?;
            let category: Option<String> = row.get(6).map_err(at)?;
            let correlation: Option<i64> = row.get(7).map_err(at)?;
            let name = name.ok_or_else(|| reader.error(&table, "name_id names no rocpd_string"))?;
            let kind = api_kind(category.as_deref().unwrap_or(""));
            let correlation = correlation.and_then(|c| u64::try_from(c).ok());
            reader.tables(pid).push_host(Host {
                pid: pid.unwrap_or(0),
                tid: tid.unwrap_or(0),
                start,
                end,
                name: &name,
                kind,
                correlation,
            });
            Ok(())
        })
    }

    fn kernels(&mut self) -> Result<(), Error> {
        let sql = self.timed_select(
            "rocpd_kernel_dispatch",
            &[
                "T.agent_id",
                "T.queue_id",
                "T.stream_id",
                "S.display_name",
                "S.kernel_name",
            ],
            "LEFT JOIN {symbol} S ON S.id = X.kernel_id AND S.guid = X.guid",
        );
        self.each("rocpd_kernel_dispatch", &sql, |reader, id, row| {
            let Some((start, end)) = reader.stamps("rocpd_kernel_dispatch", id, row)? else {
                return Ok(());
            };
            let table = format!("rocpd_kernel_dispatch row {id}");
            let at = |e| reader.error(&table, e);
            let pid: Option<i64> = row.get(3).map_err(at)?;
            let agent: Option<i64> = row.get(4).map_err(at)?;
            let queue: Option<i64> = row.get(5).map_err(at)?;
            let stream: Option<i64> = row.get(6).map_err(at)?;
            let display: Option<String> = row.get(7).map_err(at)?;
            let symbol: Option<String> = row.get(8).map_err(at)?;
            let correlation: Option<i64> = row.get(9).map_err(at)?;
            let name = display
                .filter(|n| !n.is_empty())
                .or(symbol)
                .ok_or_else(|| reader.error(&table, "kernel_id names no kernel symbol"))?;
            let device = reader.device(&table, agent)?;
            let (ordinal, stream_name) = stream_of(stream, queue);
            let tables = reader.tables(pid);
            tables.stream(device, ordinal, Some(&stream_name));
            tables.push_activity(Activity {
                device,
                stream: ordinal,
                start,
                end,
                name: &name,
                correlation: correlation.and_then(|c| u64::try_from(c).ok()),
                copy: None,
                bytes: None,
            });
            Ok(())
        })
    }

    fn copies(&mut self) -> Result<(), Error> {
        let sql = self.timed_select(
            "rocpd_memory_copy",
            &[
                "T.queue_id",
                "T.stream_id",
                "NS.string",
                "X.size",
                "X.src_agent_id",
                "X.dst_agent_id",
            ],
            "LEFT JOIN {string} NS ON NS.id = X.name_id AND NS.guid = X.guid",
        );
        self.each("rocpd_memory_copy", &sql, |reader, id, row| {
            let Some((start, end)) = reader.stamps("rocpd_memory_copy", id, row)? else {
                return Ok(());
            };
            let table = format!("rocpd_memory_copy row {id}");
            let at = |e| reader.error(&table, e);
            let pid: Option<i64> = row.get(3).map_err(at)?;
            let queue: Option<i64> = row.get(4).map_err(at)?;
            let stream: Option<i64> = row.get(5).map_err(at)?;
            let name: Option<String> = row.get(6).map_err(at)?;
            let size: Option<i64> = row.get(7).map_err(at)?;
            let src: Option<i64> = row.get(8).map_err(at)?;
            let dst: Option<i64> = row.get(9).map_err(at)?;
            let correlation: Option<i64> = row.get(10).map_err(at)?;
            let name = name.ok_or_else(|| reader.error(&table, "name_id names no rocpd_string"))?;
            let direction = copy_direction(&name);
            // The GPU end of the copy: the destination unless it is not a GPU.
            let dst_is_gpu = dst
                .and_then(|d| reader.agents.get(&d))
                .is_some_and(|a| a.gpu);
            let gpu_end = if dst_is_gpu || direction != MemcpyDirection::DeviceToHost {
                dst.or(src)
            } else {
                src.or(dst)
            };
            let device = reader.device(&table, gpu_end)?;
            let (ordinal, stream_name) = match (stream, queue) {
                (None, None) => (-1, "memory copies".to_owned()),
                _ => stream_of(stream, queue),
            };
            let tables = reader.tables(pid);
            tables.stream(device, ordinal, Some(&stream_name));
            tables.push_activity(Activity {
                device,
                stream: ordinal,
                start,
                end,
                name: &name,
                correlation: correlation.and_then(|c| u64::try_from(c).ok()),
                copy: Some(direction),
                bytes: size.and_then(|s| u64::try_from(s).ok()),
            });
            Ok(())
        })
    }

    /// Columns 1 and 2: the start and end stamps, which every timed row must have;
    /// `None` (the row counted in `negative` and left out) when one is negative. An end
    /// before its start is left out, and counted, by the capture builder.
    fn stamps(
        &mut self,
        base: &str,
        id: i64,
        row: &rusqlite::Row<'_>,
    ) -> Result<Option<(u64, u64)>, Error> {
        let table = format!("{base} row {id}");
        let mut out = [0u64; 2];
        for (slot, (index, what)) in out.iter_mut().zip([(1, "start_id"), (2, "end_id")]) {
            let value: Option<i64> = row.get(index).map_err(|e| self.error(&table, e))?;
            let value = value.ok_or_else(|| {
                self.error(&table, format!("{what} names no rocpd_timestamp row"))
            })?;
            match u64::try_from(value) {
                Ok(v) => *slot = v,
                Err(_) => {
                    self.negative.entry(base.to_owned()).or_insert((0, id)).0 += 1;
                    return Ok(None);
                }
            }
        }
        Ok(Some((out[0], out[1])))
    }

    /// The device ordinal of an agent id.
    fn device(&self, table: &str, agent: Option<i64>) -> Result<i64, Error> {
        let agent = agent.ok_or_else(|| self.error(table, "its track names no agent"))?;
        self.agents
            .get(&agent)
            .map(|a| a.ordinal)
            .ok_or_else(|| self.error(table, format!("agent {agent} is not in rocpd_info_agent")))
    }
}

/// A stream's ordinal and name: the HIP stream where recorded, else the HSA queue.
fn stream_of(stream: Option<i64>, queue: Option<i64>) -> (i64, String) {
    match (stream, queue) {
        (Some(s), _) => (s, format!("Stream {s}")),
        (None, Some(q)) => (q, format!("Queue {q}")),
        (None, None) => (0, "Stream 0".to_owned()),
    }
}
