//! Small Nsight Systems exports made by the tests: the tables and columns nsys writes
//! (schema 3.x), filled with known rows.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, params};

/// The tables of an export, as nsys declares them (the columns the reader reads, and a
/// few it does not).
pub const SCHEMA: &str = include_str!("../../../../testdata/nsys/export_schema.sql");

/// The `globalTid` nsys writes for thread `tid` of process `pid` on VM 1.
pub fn global_tid(pid: i64, tid: i64) -> i64 {
    (1 << 48) | (pid << 24) | tid
}

/// The `globalPid` of process `pid` on VM 1.
pub fn global_pid(pid: i64) -> i64 {
    global_tid(pid, 0)
}

/// An export being written.
pub struct Export {
    pub path: PathBuf,
    pub conn: Connection,
    next_string: i64,
}

impl Export {
    /// A new export at `dir/name` with the tables of [`SCHEMA`] and its metadata rows.
    pub fn create(dir: &Path, name: &str) -> Export {
        let path = dir.join(name);
        let conn = Connection::open(&path).expect("the test export can be created");
        conn.execute_batch(SCHEMA).expect("the schema is valid SQL");
        conn.execute_batch(
            "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2024.6.2.25');
             INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.16.1');
             INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1733877925987393218, '', '');",
        )
        .expect("metadata rows");
        Export {
            path,
            conn,
            next_string: 1,
        }
    }

    /// Adds a string to `StringIds` and returns its id.
    pub fn string(&mut self, value: &str) -> i64 {
        let id = self.next_string;
        self.next_string += 1;
        self.conn
            .execute("INSERT INTO StringIds VALUES (?1, ?2)", params![id, value])
            .expect("string row");
        id
    }

    pub fn gpu(&self, id: i64, name: &str) {
        self.conn
            .execute(
                "INSERT INTO TARGET_INFO_GPU VALUES (?1, ?2, ?3, '0000:45:00.0', 150137864192,
                 4916736000000, 1980000000, 132, 9, 0)",
                params![1i64 << 48, id, name],
            )
            .expect("gpu row");
    }

    pub fn thread_name(&mut self, pid: i64, tid: i64, name: &str, priority: i64) {
        let name = self.string(name);
        self.conn
            .execute(
                "INSERT INTO ThreadNames VALUES (?1, ?2, ?3)",
                params![name, priority, global_tid(pid, tid)],
            )
            .expect("thread name row");
    }

    /// A kernel: `(start, end, device, stream, correlation, pid, name)`, with its
    /// demangled name and a short one.
    #[allow(clippy::too_many_arguments)] // One argument per column the test sets.
    pub fn kernel(
        &mut self,
        start: i64,
        end: i64,
        device: i64,
        stream: i64,
        correlation: i64,
        pid: i64,
        name: &str,
        graph_id: Option<i64>,
    ) {
        let demangled = self.string(name);
        let short = self.string("short");
        self.conn
            .execute(
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
                 (?1, ?2, ?3, 1, ?4, ?5, ?6, ?7, ?8, NULL, 32, 128, 256, NULL, ?9)",
                params![
                    start,
                    end,
                    device,
                    stream,
                    correlation,
                    global_pid(pid),
                    demangled,
                    short,
                    graph_id
                ],
            )
            .expect("kernel row");
    }

    /// A memcpy of `bytes` with `copyKind` `kind` from pageable memory to the device.
    #[allow(clippy::too_many_arguments)] // One argument per column the test sets.
    pub fn memcpy(
        &self,
        start: i64,
        end: i64,
        device: i64,
        stream: i64,
        correlation: i64,
        pid: i64,
        bytes: i64,
        kind: i64,
    ) {
        self.conn
            .execute(
                "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES
                 (?1, ?2, ?3, 1, ?4, ?5, ?6, ?7, ?8, 0, 2, NULL)",
                params![
                    start,
                    end,
                    device,
                    stream,
                    correlation,
                    global_pid(pid),
                    bytes,
                    kind
                ],
            )
            .expect("memcpy row");
    }

    #[allow(clippy::too_many_arguments)] // One argument per column the test sets.
    pub fn memset(
        &self,
        start: i64,
        end: i64,
        device: i64,
        stream: i64,
        correlation: i64,
        pid: i64,
        bytes: i64,
    ) {
        self.conn
            .execute(
                "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES
                 (?1, ?2, ?3, 1, ?4, ?5, ?6, 0, ?7, NULL, 2)",
                params![
                    start,
                    end,
                    device,
                    stream,
                    correlation,
                    global_pid(pid),
                    bytes
                ],
            )
            .expect("memset row");
    }

    /// A runtime call `name` on thread `tid` of process `pid`.
    pub fn runtime(
        &mut self,
        start: i64,
        end: i64,
        pid: i64,
        tid: i64,
        correlation: i64,
        name: &str,
    ) {
        let name = self.string(name);
        self.conn
            .execute(
                "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?1, ?2, 0, ?3, ?4, ?5, 0, NULL)",
                params![start, end, global_tid(pid, tid), correlation, name],
            )
            .expect("runtime row");
    }

    /// An NVTX event of type `event_type` (59 push/pop, 60 start/end, 34 mark, 75 domain
    /// creation); the text inline or through `StringIds`.
    #[allow(clippy::too_many_arguments)] // One argument per column the test sets.
    pub fn nvtx(
        &mut self,
        event_type: i64,
        start: i64,
        end: Option<i64>,
        pid: i64,
        tid: i64,
        text: &str,
        through_string_ids: bool,
        domain: i64,
    ) {
        let (text, text_id) = if through_string_ids {
            (None, Some(self.string(text)))
        } else {
            (Some(text.to_string()), None)
        };
        self.conn
            .execute(
                "INSERT INTO NVTX_EVENTS VALUES (?1, ?2, ?3, NULL, NULL, NULL, ?4, ?5, NULL, ?6, ?7)",
                params![start, end, event_type, text, global_tid(pid, tid), text_id, domain],
            )
            .expect("nvtx row");
    }
}
