//! rocpd SQLite databases (rocprofv3's default output since ROCm 7, `<pid>_results.db`),
//! read to rocprofiler-sdk's documented schema version 3
//! (`source/share/rocprofiler-sdk-rocpd/rocpd_tables.sql` and `rocpd_views.sql`).
//!
//! The data tables carry a per-database suffix (`rocpd_region_<uuid>`); the schema's views
//! without it (`rocpd_region`, `rocpd_kernel_dispatch`, ...) are what this reader queries,
//! so a database made either way reads alike. Times are `rocpd_timestamp.value`
//! nanoseconds, joined by `start_id`/`end_id`; names are `rocpd_string` rows; a track
//! (`rocpd_track`) gives the process and thread (OS ids) of a region, and the agent, queue
//! and stream of a kernel dispatch or copy; the correlation id shared by an API call and
//! the GPU work it launched is `rocpd_event.correlation_id` of each row's `event_id`.
//! Rows join on `guid` as well as id, as the schema's own views do. GPU agents become
//! devices numbered by `type_index` (the n-th GPU); one capture per process id.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{Connection, OpenFlags};
use trace_model::{DeviceProperties, Format, MemcpyDirection};

use crate::model::{Activity, Host, Tables, api_kind, copy_direction};
use crate::{Error, Process};

/// The tables (or views) this reader needs, as the schema names them.
pub(crate) const REQUIRED: &[&str] = &[
    "rocpd_string",
    "rocpd_info_agent",
    "rocpd_info_kernel_symbol",
    "rocpd_track",
    "rocpd_timestamp",
    "rocpd_event",
    "rocpd_region",
    "rocpd_kernel_dispatch",
    "rocpd_memory_copy",
];

/// Opens a database read-only.
pub(crate) fn open(path: &Path) -> Result<Connection, Error> {
    Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|err| Error::Sqlite {
        path: path.to_owned(),
        table: "-".to_owned(),
        message: err.to_string(),
    })
}

/// The names of every table and view (empty for a file SQLite cannot read).
pub(crate) fn table_names(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name")?;
    let names = stmt.query_map([], |row| row.get(0))?;
    names.collect()
}

pub(crate) fn load(path: &Path) -> Result<Vec<Process>, Error> {
    let conn = open(path)?;
    let names = table_names(&conn).map_err(|err| Error::Sqlite {
        path: path.to_owned(),
        table: "sqlite_master".to_owned(),
        message: err.to_string(),
    })?;
    if let Some(missing) = REQUIRED.iter().find(|t| !names.iter().any(|n| n == *t)) {
        return Err(Error::Sqlite {
            path: path.to_owned(),
            table: (*missing).to_owned(),
            message: format!(
                "not in the database, so it is not a rocpd database (schema version 3); it has: {}",
                if names.is_empty() {
                    "no tables".to_owned()
                } else {
                    names.join(", ")
                }
            ),
        });
    }
    let mut reader = Reader {
        path,
        conn: &conn,
        processes: BTreeMap::new(),
        agents: BTreeMap::new(),
    };
    let version = reader.schema_version(&names);
    reader.agents()?;
    reader.regions()?;
    reader.kernels()?;
    reader.copies()?;
    let Reader {
        mut processes,
        agents,
        ..
    } = reader;
    if processes.is_empty() {
        processes.insert(None, Tables::new(Format::Rocpd));
    }
    Ok(processes
        .into_iter()
        .map(|(pid, mut tables)| {
            // Every process's capture lists every GPU the database describes.
            for agent in agents.values().filter(|a| a.gpu) {
                tables.set_device_properties(agent.ordinal, agent.properties.clone());
            }
            tables.b.meta.producer = Some(match &version {
                Some(v) => format!("rocprofv3 rocpd (schema version {v})"),
                None => "rocprofv3 rocpd".to_owned(),
            });
            Process {
                pid,
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
    processes: BTreeMap<Option<i64>, Tables>,
    /// By `rocpd_info_agent.id`.
    agents: BTreeMap<i64, Agent>,
}

/// The joins every timed row needs: its start and end stamps and its track.
const TIMED_JOINS: &str = "
    LEFT JOIN rocpd_timestamp DS ON DS.id = X.start_id AND DS.guid = X.guid
    LEFT JOIN rocpd_timestamp DE ON DE.id = X.end_id AND DE.guid = X.guid
    LEFT JOIN rocpd_track T ON T.id = X.track_id AND T.guid = X.guid
    LEFT JOIN rocpd_event E ON E.id = X.event_id AND E.guid = X.guid";

impl Reader<'_> {
    fn error(&self, table: &str, err: impl std::fmt::Display) -> Error {
        Error::Sqlite {
            path: self.path.to_owned(),
            table: table.to_owned(),
            message: err.to_string(),
        }
    }

    fn tables(&mut self, pid: Option<i64>) -> &mut Tables {
        self.processes
            .entry(pid)
            .or_insert_with(|| Tables::new(Format::Rocpd))
    }

    fn schema_version(&self, names: &[String]) -> Option<String> {
        if !names.iter().any(|n| n == "rocpd_metadata") {
            return None;
        }
        self.conn
            .query_row(
                "SELECT value FROM rocpd_metadata WHERE tag = 'schema_version' LIMIT 1",
                [],
                |row| row.get(0),
            )
            .ok()
    }

    /// Runs `sql` and calls `each` with every row and its `id` (the first column).
    fn each(
        &mut self,
        table: &str,
        sql: &str,
        mut each: impl FnMut(&mut Self, i64, &rusqlite::Row<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let conn = self.conn;
        let mut stmt = conn.prepare(sql).map_err(|e| self.error(table, e))?;
        let mut rows = stmt.query([]).map_err(|e| self.error(table, e))?;
        while let Some(row) = rows.next().map_err(|e| self.error(table, e))? {
            let id: i64 = row.get(0).map_err(|e| self.error(table, e))?;
            each(self, id, row)?;
        }
        Ok(())
    }

    fn agents(&mut self) -> Result<(), Error> {
        let sql = "SELECT id, type, type_index, logical_index, absolute_index, product_name, \
                   model_name, name FROM rocpd_info_agent ORDER BY id";
        self.each("rocpd_info_agent", sql, |reader, id, row| {
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
        let sql = format!(
            "SELECT X.id, DS.value, DE.value, T.pid, T.tid, NS.string, C.string, E.correlation_id
             FROM rocpd_region X {TIMED_JOINS}
             LEFT JOIN rocpd_string NS ON NS.id = X.name_id AND NS.guid = X.guid
             LEFT JOIN rocpd_string C ON C.id = E.category_id AND C.guid = E.guid
             ORDER BY X.id"
        );
        self.each("rocpd_region", &sql, |reader, id, row| {
            let table = format!("rocpd_region row {id}");
            let (start, end) = reader.stamps(&table, row)?;
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
        let sql = format!(
            "SELECT X.id, DS.value, DE.value, T.pid, T.agent_id, T.queue_id, T.stream_id,
                    S.display_name, S.kernel_name, E.correlation_id
             FROM rocpd_kernel_dispatch X {TIMED_JOINS}
             LEFT JOIN rocpd_info_kernel_symbol S ON S.id = X.kernel_id AND S.guid = X.guid
             ORDER BY X.id"
        );
        self.each("rocpd_kernel_dispatch", &sql, |reader, id, row| {
            let table = format!("rocpd_kernel_dispatch row {id}");
            let (start, end) = reader.stamps(&table, row)?;
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
        let sql = format!(
            "SELECT X.id, DS.value, DE.value, T.pid, T.queue_id, T.stream_id, NS.string, X.size,
                    X.src_agent_id, X.dst_agent_id, E.correlation_id
             FROM rocpd_memory_copy X {TIMED_JOINS}
             LEFT JOIN rocpd_string NS ON NS.id = X.name_id AND NS.guid = X.guid
             ORDER BY X.id"
        );
        self.each("rocpd_memory_copy", &sql, |reader, id, row| {
            let table = format!("rocpd_memory_copy row {id}");
            let (start, end) = reader.stamps(&table, row)?;
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

    /// Columns 1 and 2: the start and end stamps, which every timed row must have.
    fn stamps(&self, table: &str, row: &rusqlite::Row<'_>) -> Result<(u64, u64), Error> {
        let mut out = [0u64; 2];
        for (slot, (index, what)) in out.iter_mut().zip([(1, "start_id"), (2, "end_id")]) {
            let value: Option<i64> = row.get(index).map_err(|e| self.error(table, e))?;
            let value = value
                .ok_or_else(|| self.error(table, format!("{what} names no rocpd_timestamp row")))?;
            *slot = u64::try_from(value)
                .map_err(|_| self.error(table, format!("{what}: negative time {value}")))?;
        }
        Ok((out[0], out[1]))
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
