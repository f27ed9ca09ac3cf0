//! Reading an export's tables into one `CaptureBuilder` per process: GPU activities,
//! CUDA runtime calls, NVTX ranges, thread names, devices, ranks and steps.
//!
//! Each table is read once through one prepared statement, row by row; names are looked
//! up in `StringIds` only the first time a process meets an id.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::Connection;
use trace_model::{
    ActivityDetails, ActivityKind, CaptureBuilder, Device, DeviceId, DeviceProperties, FastMap,
    Format, GpuActivity, HostEvent, HostKind, HostThread, KernelClass, MemcpyDirection, Nanos,
    Step, StepSource, Stream, StreamId, StringId, ThreadId, Vendor, classify_kernel,
};

use crate::schema::{self, Cells, Column, Schema, optional, required, sqlite_error};
use crate::strings::StringLookup;
use crate::{Config, Error, Process};

const KERNEL: &str = "CUPTI_ACTIVITY_KIND_KERNEL";
const MEMCPY: &str = "CUPTI_ACTIVITY_KIND_MEMCPY";
const MEMSET: &str = "CUPTI_ACTIVITY_KIND_MEMSET";
const RUNTIME: &str = "CUPTI_ACTIVITY_KIND_RUNTIME";
const NVTX: &str = "NVTX_EVENTS";
const GPU_INFO: &str = "TARGET_INFO_GPU";
const CUDA_DEVICE_INFO: &str = "TARGET_INFO_CUDA_DEVICE";
const CUDA_GPU_INFO: &str = "TARGET_INFO_CUDA_GPU";
const THREAD_NAMES: &str = "ThreadNames";
const PROCESSES: &str = "PROCESSES";

/// Every table the reader reads (its columns are looked up; the other tables' are not).
const TABLES_READ: &[&str] = &[
    KERNEL,
    MEMCPY,
    MEMSET,
    RUNTIME,
    NVTX,
    GPU_INFO,
    CUDA_DEVICE_INFO,
    CUDA_GPU_INFO,
    THREAD_NAMES,
    PROCESSES,
    "StringIds",
    "META_DATA_EXPORT",
    "EXPORT_META_DATA",
    "META_DATA_CAPTURE",
    "TARGET_INFO_SYSTEM_ENV",
    "TARGET_INFO_SESSION_START_TIME",
];

/// `globalTid`/`globalPid` pack the VM and host ids above bit 48, the process id in bits
/// 24..48 and the thread id in bits 0..24 (`globalPid` has thread bits 0).
const TID_BITS: i64 = 0xFF_FFFF;

/// NVTX event types (`ENUM_NSYS_EVENT_TYPE`): ranges we keep, marks we count, and the
/// rows that name a domain.
const NVTX_RANGES: &str = "59, 60, 70, 71";
const NVTX_MARKS: &str = "34, 65";
const NVTX_DOMAIN_CREATE: i64 = 75;

pub(crate) fn load(path: &Path, config: &Config) -> Result<Vec<Process>, Error> {
    if is_report_file(path) {
        return Err(Error::NeedsExport {
            path: path.to_path_buf(),
        });
    }
    if !schema::has_sqlite_header(path)? {
        return Err(Error::NotSqlite {
            path: path.to_path_buf(),
        });
    }
    schema::check_length(path)?;
    let db = schema::open(path)?;
    let conn = &db.conn;
    let schema = Schema::read(path, conn, TABLES_READ)?;
    if !schema.is_export() {
        return Err(Error::NotAnExport {
            path: path.to_path_buf(),
            reason: "it has no StringIds table beside META_DATA_EXPORT, EXPORT_META_DATA, \
                     TARGET_INFO_GPU or the CUPTI_ACTIVITY_KIND_* tables"
                .to_string(),
        });
    }
    let mut reader = Reader {
        path,
        conn,
        schema: &schema,
        config,
        strings: StringLookup::new(path, conn, &schema)?,
        processes: BTreeMap::new(),
        unread: Vec::new(),
    };
    reader.read_kernels()?;
    reader.read_memcpys()?;
    reader.read_memsets()?;
    reader.read_runtime()?;
    reader.processes.retain(|_, p| p.cuda_events > 0);
    if reader.processes.is_empty() {
        return Err(Error::NoCudaActivity {
            path: path.to_path_buf(),
            reason: reader.why_empty(),
        });
    }
    reader.read_nvtx()?;
    reader.finish()
}

/// Whether the file is an Nsight Systems report by its extension (`.nsys-rep`, `.qdrep`).
fn is_report_file(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("nsys-rep") || e.eq_ignore_ascii_case("qdrep"))
}

/// The process part of a `globalTid` or `globalPid` (thread bits cleared): processes are
/// told apart by it, so that equal pids on two hosts of one export stay apart.
fn process_key(global: i64) -> i64 {
    global & !TID_BITS
}

fn pid_of(global: i64) -> i64 {
    (global >> 24) & TID_BITS
}

/// Which of a process's name caches a string id goes through: the same `StringIds` id
/// reads differently as a kernel name and as an API name (whose version suffix goes).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum NameUse {
    Kernel,
    Api,
    Nvtx,
}

/// One process being read.
struct ProcessState {
    pid: i64,
    builder: CaptureBuilder,
    threads: FastMap<i64, ThreadId>,
    streams: FastMap<(i64, i64), StreamId>,
    devices: BTreeMap<i64, DeviceId>,
    names: FastMap<(NameUse, i64), StringId>,
    classes: FastMap<StringId, KernelClass>,
    /// NVTX domain names by `domainId`.
    domains: FastMap<i64, String>,
    /// Step candidates: start, end, and the number the range's text gave.
    steps: Vec<(Nanos, Nanos, Option<i64>)>,
    thread_name_priority: FastMap<ThreadId, i64>,
    /// The rank a thread name (`MPI Rank N`) gave.
    rank: Option<i64>,
    next_index: u64,
    /// GPU activities and runtime calls read: a process with none is left out.
    cuda_events: u64,
}

impl ProcessState {
    fn new(pid: i64) -> Self {
        ProcessState {
            pid,
            builder: CaptureBuilder::new(Format::NsysSqlite),
            threads: FastMap::default(),
            streams: FastMap::default(),
            devices: BTreeMap::new(),
            names: FastMap::default(),
            classes: FastMap::default(),
            domains: FastMap::default(),
            steps: Vec::new(),
            thread_name_priority: FastMap::default(),
            rank: None,
            next_index: 0,
            cuda_events: 0,
        }
    }

    fn next_index(&mut self) -> u64 {
        let index = self.next_index;
        self.next_index += 1;
        index
    }

    fn device(&mut self, ordinal: i64) -> DeviceId {
        if let Some(&id) = self.devices.get(&ordinal) {
            return id;
        }
        let id = DeviceId::new(self.builder.devices.len() as u32);
        self.builder.devices.push(Device {
            id,
            ordinal,
            vendor: Vendor::Nvidia,
            properties: DeviceProperties::default(),
        });
        self.devices.insert(ordinal, id);
        id
    }

    fn stream(&mut self, device: i64, stream: i64) -> StreamId {
        if let Some(&id) = self.streams.get(&(device, stream)) {
            return id;
        }
        let device_id = self.device(device);
        let id = StreamId::new(self.builder.streams.len() as u32);
        self.builder.streams.push(Stream {
            id,
            device: device_id,
            ordinal: stream,
            name: None,
        });
        self.streams.insert((device, stream), id);
        id
    }

    fn thread(&mut self, global_tid: i64) -> ThreadId {
        if let Some(&id) = self.threads.get(&global_tid) {
            return id;
        }
        let id = ThreadId::new(self.builder.threads.len() as u32);
        self.builder.threads.push(HostThread {
            id,
            pid: self.pid,
            tid: global_tid & TID_BITS,
            name: None,
            pid_text: None,
            tid_text: None,
        });
        self.threads.insert(global_tid, id);
        id
    }

    /// The interned name of `StringIds` id `id` as used by `usage`, looked up once.
    fn name(
        &mut self,
        strings: &mut StringLookup<'_>,
        usage: NameUse,
        id: i64,
    ) -> Result<Option<StringId>, Error> {
        if let Some(&name) = self.names.get(&(usage, id)) {
            return Ok(Some(name));
        }
        let Some(text) = strings.text(id)? else {
            return Ok(None);
        };
        let text = match usage {
            NameUse::Api => strip_api_version(&text),
            NameUse::Kernel | NameUse::Nvtx => &text,
        };
        let name = self.builder.strings.intern(text);
        self.names.insert((usage, id), name);
        Ok(Some(name))
    }

    fn class(&mut self, name: StringId) -> KernelClass {
        let strings = &self.builder.strings;
        *self
            .classes
            .entry(name)
            .or_insert_with(|| classify_kernel(strings.get(name)))
    }
}

/// `cudaLaunchKernel_v7000` → `cudaLaunchKernel`: nsys names runtime calls with the
/// version of their entry point; the name without it is the API's (and Kineto's).
fn strip_api_version(name: &str) -> &str {
    match name.rfind("_v") {
        Some(at)
            if at > 0
                && name.len() > at + 2
                && name[at + 2..].bytes().all(|b| b.is_ascii_digit()) =>
        {
            &name[..at]
        }
        _ => name,
    }
}

/// Whether a CUDA runtime or driver call puts work on a GPU stream (kernel and graph
/// launches, memcpys, memsets).
fn is_launch_api(name: &str) -> bool {
    name.contains("Launch")
        || ["cuda", "cu"].iter().any(|prefix| {
            name.strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with("Memcpy") || rest.starts_with("Memset"))
        })
}

/// `copyKind` (`ENUM_CUDA_MEMCPY_OPER`) as the model's direction and the short form that
/// names the copy (`Memcpy HtoD`).
fn copy_kind(kind: Option<i64>) -> (MemcpyDirection, &'static str) {
    use MemcpyDirection::*;
    match kind {
        Some(1) => (HostToDevice, "HtoD"),
        Some(2) => (DeviceToHost, "DtoH"),
        Some(3) => (HostToDevice, "HtoA"),
        Some(4) => (DeviceToHost, "AtoH"),
        Some(5) => (DeviceToDevice, "AtoA"),
        Some(6) => (DeviceToDevice, "AtoD"),
        Some(7) => (DeviceToDevice, "DtoA"),
        Some(8) => (DeviceToDevice, "DtoD"),
        Some(9) => (HostToHost, "HtoH"),
        Some(10) => (PeerToPeer, "PtoP"),
        Some(11) => (HostToDevice, "HtoD (Unified)"),
        Some(12) => (DeviceToHost, "DtoH (Unified)"),
        Some(13) => (DeviceToDevice, "DtoD (Unified)"),
        _ => (Unknown, "unknown"),
    }
}

/// `srcKind`/`dstKind`/`memKind` (`ENUM_CUDA_MEM_KIND`) in Kineto's words.
fn memory_kind(kind: Option<i64>) -> Option<&'static str> {
    Some(match kind? {
        0 => "Pageable",
        1 => "Pinned",
        2 => "Device",
        3 => "Array",
        4 => "Managed",
        5 => "Device Static",
        6 => "Managed Static",
        _ => return None,
    })
}

/// Rank and world-size variables, most specific first (`LOCAL_RANK` only when nothing
/// else says).
const RANK_VARIABLES: &[&str] = &[
    "RANK",
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
    "SLURM_PROCID",
    "LOCAL_RANK",
];
const WORLD_SIZE_VARIABLES: &[&str] = &[
    "WORLD_SIZE",
    "OMPI_COMM_WORLD_SIZE",
    "PMI_SIZE",
    "SLURM_NTASKS",
];

struct Reader<'a> {
    path: &'a Path,
    conn: &'a Connection,
    schema: &'a Schema,
    config: &'a Config,
    strings: StringLookup<'a>,
    processes: BTreeMap<i64, ProcessState>,
    /// Optional tables that could not be read (a column the reader needs is absent): the
    /// table, the column, and what the capture lacks for it.
    unread: Vec<(&'static str, &'static str, &'static str)>,
}

/// Column positions of the activity tables' common columns.
const START: usize = 0;
const END: usize = 1;
const DEVICE: usize = 2;
const STREAM: usize = 3;
const CORRELATION: usize = 4;
const GLOBAL_PID: usize = 5;

const ACTIVITY_COLUMNS: [Column; 6] = [
    required("start"),
    required("end"),
    required("deviceId"),
    required("streamId"),
    optional("correlationId"),
    optional("globalPid"),
];

/// The common part of one activity row.
struct ActivityRow {
    process: i64,
    start: i64,
    end: i64,
    device: i64,
    stream: i64,
    correlation: Option<u64>,
    rowid: i64,
}

impl ActivityRow {
    fn read(cells: &Cells<'_, '_>) -> Result<Self, Error> {
        Ok(ActivityRow {
            // Rows without a process (no `globalPid`) share process key -1.
            process: cells.opt_int(GLOBAL_PID)?.map_or(-1, process_key),
            start: cells.int(START)?,
            end: cells.int(END)?,
            device: cells.int(DEVICE)?,
            stream: cells.int(STREAM)?,
            // CUPTI's ids are unsigned; SQLite stores them as signed 64-bit integers.
            correlation: cells.opt_int(CORRELATION)?.map(|c| c as u64),
            rowid: cells.rowid,
        })
    }
}

/// The process of key `key`, made when first met.
fn state_of(processes: &mut BTreeMap<i64, ProcessState>, key: i64) -> &mut ProcessState {
    processes
        .entry(key)
        .or_insert_with(|| ProcessState::new(if key < 0 { -1 } else { pid_of(key) }))
}

impl<'a> Reader<'a> {
    /// Runs `SELECT rowid, columns FROM table filter` and calls `each` on every row; an
    /// absent table reads as no rows (`false`).
    fn scan(
        &mut self,
        table: &str,
        columns: &[Column],
        filter: &str,
        mut each: impl FnMut(&mut Self, &Cells<'_, '_>) -> Result<(), Error>,
    ) -> Result<bool, Error> {
        let Some(sql) = self.schema.select(self.path, table, columns, filter)? else {
            return Ok(false);
        };
        let path = self.path;
        let err = |e: rusqlite::Error| sqlite_error(path, table, &e);
        let mut statement = self.conn.prepare(&sql).map_err(err)?;
        let mut rows = statement.query([]).map_err(err)?;
        while let Some(row) = rows.next().map_err(err)? {
            let cells = Cells::new(path, table, columns, row)?;
            each(self, &cells)?;
        }
        Ok(true)
    }

    /// [`Reader::scan`] of a table beyond kernels, runtime calls, copies and sets: when it
    /// lacks a column the reader needs, it is not read and the capture says what that
    /// costs (`cost`, e.g. "no GPU names") instead of refusing the export.
    fn scan_optional(
        &mut self,
        table: &'static str,
        columns: &[Column],
        filter: &str,
        cost: &'static str,
        each: impl FnMut(&mut Self, &Cells<'_, '_>) -> Result<(), Error>,
    ) -> Result<bool, Error> {
        if !self.schema.has_table(table) {
            return Ok(false);
        }
        if let Some(missing) = columns
            .iter()
            .find(|c| c.required && !self.schema.has_column(table, c.name))
        {
            self.unread.push((table, missing.name, cost));
            return Ok(false);
        }
        self.scan(table, columns, filter, each)
    }

    /// Pushes one activity; `name` and the details come from the table's own columns.
    fn push_activity(
        &mut self,
        table: &str,
        row: &ActivityRow,
        kind: ActivityKind,
        name: impl FnOnce(&mut ProcessState, &mut StringLookup<'_>) -> Result<StringId, Error>,
        class: Option<KernelClass>,
        details: ActivityDetails,
    ) -> Result<(), Error> {
        let path = self.path;
        let strings = &mut self.strings;
        let state = state_of(&mut self.processes, row.process);
        let name = name(state, strings)?;
        let class = match class {
            Some(class) => class,
            None => state.class(name),
        };
        let stream = state.stream(row.device, row.stream);
        let index = state.next_index();
        state.cuda_events += 1;
        if row.process < 0 {
            let place = format!("{}: table {table}, row {}", path.display(), row.rowid);
            state.builder.diagnostics.add(
                "nsys-activity-without-process",
                || {
                    "GPU activities without a globalPid were gathered in a process of pid -1"
                        .to_string()
                },
                || place,
            );
        }
        let Some(dur) = row.end.checked_sub(row.start) else {
            let rowid = row.rowid;
            state.builder.note_time_out_of_range(|| {
                format!("{}: table {table}, row {rowid}", path.display())
            });
            return Ok(());
        };
        let mut activity = GpuActivity::new(
            stream,
            Nanos(row.start),
            Nanos(dur),
            name,
            kind,
            class,
            index,
        );
        activity.set_correlation(row.correlation);
        state.builder.push_activity(activity, details);
        Ok(())
    }

    fn read_kernels(&mut self) -> Result<(), Error> {
        const DEMANGLED: usize = 6;
        const SHORT: usize = 7;
        const MANGLED: usize = 8;
        const GRAPH: usize = 9;
        let mut columns = ACTIVITY_COLUMNS.to_vec();
        columns.extend([
            optional("demangledName"),
            optional("shortName"),
            optional("mangledName"),
            optional("graphId"),
        ]);
        self.scan(KERNEL, &columns, "", |reader, cells| {
            let row = ActivityRow::read(cells)?;
            let ids = [
                cells.opt_int(DEMANGLED)?,
                cells.opt_int(SHORT)?,
                cells.opt_int(MANGLED)?,
            ];
            let details = ActivityDetails {
                graph_id: cells.opt_int(GRAPH)?,
                ..ActivityDetails::default()
            };
            let name = |state: &mut ProcessState, strings: &mut StringLookup<'_>| {
                // The demangled name is the kernel's name (as in Kineto); the others
                // stand in when it is missing or empty.
                for id in ids.into_iter().flatten() {
                    if let Some(name) = state.name(strings, NameUse::Kernel, id)?
                        && !state.builder.strings.get(name).is_empty()
                    {
                        return Ok(name);
                    }
                }
                Ok(state.builder.strings.intern("(unnamed kernel)"))
            };
            reader.push_activity(KERNEL, &row, ActivityKind::Kernel, name, None, details)
        })?;
        Ok(())
    }

    fn read_memcpys(&mut self) -> Result<(), Error> {
        const BYTES: usize = 6;
        const COPY_KIND: usize = 7;
        const SRC_KIND: usize = 8;
        const DST_KIND: usize = 9;
        const GRAPH: usize = 10;
        let mut columns = ACTIVITY_COLUMNS.to_vec();
        columns.extend([
            optional("bytes"),
            optional("copyKind"),
            optional("srcKind"),
            optional("dstKind"),
            optional("graphId"),
        ]);
        self.scan(MEMCPY, &columns, "", |reader, cells| {
            let row = ActivityRow::read(cells)?;
            let (direction, short) = copy_kind(cells.opt_int(COPY_KIND)?);
            let kinds =
                memory_kind(cells.opt_int(SRC_KIND)?).zip(memory_kind(cells.opt_int(DST_KIND)?));
            let details = ActivityDetails {
                bytes: cells.opt_int(BYTES)?.and_then(|b| u64::try_from(b).ok()),
                graph_id: cells.opt_int(GRAPH)?,
                ..ActivityDetails::default()
            };
            let name = |state: &mut ProcessState, _: &mut StringLookup<'_>| {
                // Kineto's names (`Memcpy HtoD (Pageable -> Device)`), which the
                // classification and the tools already read.
                let text = match kinds {
                    Some((src, dst)) => format!("Memcpy {short} ({src} -> {dst})"),
                    None => format!("Memcpy {short}"),
                };
                Ok(state.builder.strings.intern(&text))
            };
            let class = Some(KernelClass::Memcpy(direction));
            reader.push_activity(MEMCPY, &row, ActivityKind::Memcpy, name, class, details)
        })?;
        Ok(())
    }

    fn read_memsets(&mut self) -> Result<(), Error> {
        const BYTES: usize = 6;
        const MEM_KIND: usize = 7;
        const GRAPH: usize = 8;
        let mut columns = ACTIVITY_COLUMNS.to_vec();
        columns.extend([optional("bytes"), optional("memKind"), optional("graphId")]);
        self.scan(MEMSET, &columns, "", |reader, cells| {
            let row = ActivityRow::read(cells)?;
            let kind = memory_kind(cells.opt_int(MEM_KIND)?);
            let details = ActivityDetails {
                bytes: cells.opt_int(BYTES)?.and_then(|b| u64::try_from(b).ok()),
                graph_id: cells.opt_int(GRAPH)?,
                ..ActivityDetails::default()
            };
            let name = |state: &mut ProcessState, _: &mut StringLookup<'_>| {
                let text = match kind {
                    Some(kind) => format!("Memset ({kind})"),
                    None => "Memset".to_string(),
                };
                Ok(state.builder.strings.intern(&text))
            };
            let class = Some(KernelClass::Memset);
            reader.push_activity(MEMSET, &row, ActivityKind::Memset, name, class, details)
        })?;
        Ok(())
    }

    fn read_runtime(&mut self) -> Result<(), Error> {
        const START: usize = 0;
        const END: usize = 1;
        const GLOBAL_TID: usize = 2;
        const CORRELATION: usize = 3;
        const NAME_ID: usize = 4;
        const NAME_TEXT: usize = 5;
        let columns = [
            required("start"),
            required("end"),
            required("globalTid"),
            optional("correlationId"),
            optional("nameId"),
            optional("name"),
        ];
        let path = self.path;
        self.scan(RUNTIME, &columns, "", |reader, cells| {
            let global_tid = cells.int(GLOBAL_TID)?;
            let (start, end) = (cells.int(START)?, cells.int(END)?);
            let correlation = cells.opt_int(CORRELATION)?.map(|c| c as u64);
            let name_id = cells.opt_int(NAME_ID)?;
            let name_text = cells.opt_text(NAME_TEXT)?;
            let rowid = cells.rowid;
            let key = process_key(global_tid);
            let Reader {
                strings, processes, ..
            } = reader;
            let state = state_of(processes, key);
            let mut name = match name_id {
                Some(id) => state.name(strings, NameUse::Api, id)?,
                None => None,
            };
            if name.is_none()
                && let Some(text) = name_text
            {
                name = Some(state.builder.strings.intern(strip_api_version(&text)));
            }
            let name = name.unwrap_or_else(|| state.builder.strings.intern("(unnamed CUDA call)"));
            let kind = if is_launch_api(state.builder.strings.get(name)) {
                HostKind::Launch
            } else {
                HostKind::Runtime
            };
            let thread = state.thread(global_tid);
            let index = state.next_index();
            state.cuda_events += 1;
            let Some(dur) = end.checked_sub(start) else {
                state.builder.note_time_out_of_range(|| {
                    format!("{}: table {RUNTIME}, row {rowid}", path.display())
                });
                return Ok(());
            };
            let mut event = HostEvent::new(thread, Nanos(start), Nanos(dur), name, kind, index);
            event.set_correlation(correlation);
            state.builder.push_host_event(event, None);
            Ok(())
        })?;
        Ok(())
    }

    fn read_nvtx(&mut self) -> Result<(), Error> {
        const START: usize = 0;
        const END: usize = 1;
        const TYPE: usize = 2;
        const TEXT: usize = 3;
        const TEXT_ID: usize = 4;
        const GLOBAL_TID: usize = 5;
        const DOMAIN: usize = 6;
        let columns = [
            required("start"),
            optional("end"),
            required("eventType"),
            optional("text"),
            optional("textId"),
            optional("globalTid"),
            optional("domainId"),
        ];
        let path = self.path;
        // Domain names first: a range names its domain by id.
        let filter = format!(" WHERE eventType = {NVTX_DOMAIN_CREATE}");
        let cost = "no NVTX ranges (no steps from NVTX, no kernels attributed to ranges)";
        let present = self.scan_optional(NVTX, &columns, &filter, cost, |reader, cells| {
            let (Some(global_tid), Some(domain), Some(text)) = (
                cells.opt_int(GLOBAL_TID)?,
                cells.opt_int(DOMAIN)?,
                cells.opt_text(TEXT)?,
            ) else {
                return Ok(());
            };
            if let Some(state) = reader.processes.get_mut(&process_key(global_tid)) {
                state.domains.insert(domain, text.into_owned());
            }
            Ok(())
        })?;
        if !present {
            return Ok(());
        }
        let step_nvtx = self.config.step_nvtx.clone();
        let filter = format!(" WHERE eventType IN ({NVTX_RANGES}, {NVTX_MARKS})");
        self.scan(NVTX, &columns, &filter, |reader, cells| {
            let Some(global_tid) = cells.opt_int(GLOBAL_TID)? else {
                return Ok(());
            };
            let Reader {
                strings, processes, ..
            } = reader;
            // Ranges of processes without CUDA work are not read.
            let Some(state) = processes.get_mut(&process_key(global_tid)) else {
                return Ok(());
            };
            let rowid = cells.rowid;
            let place = || format!("{}: table {NVTX}, row {rowid}", path.display());
            let event_type = cells.int(TYPE)?;
            let end = cells.opt_int(END)?;
            if [34, 65].contains(&event_type) {
                state.builder.diagnostics.add(
                    "nvtx-marks-not-kept",
                    || {
                        "NVTX marks (instants) were not kept: the model holds ranges only"
                            .to_string()
                    },
                    place,
                );
                return Ok(());
            }
            let Some(end) = end else {
                state.builder.diagnostics.add(
                    "nvtx-range-without-end",
                    || "NVTX ranges that never ended (no end time) were left out".to_string(),
                    place,
                );
                return Ok(());
            };
            let start = cells.int(START)?;
            let text: Option<Cow<'_, str>> = match cells.opt_text(TEXT)? {
                Some(text) => Some(text),
                None => match cells.opt_int(TEXT_ID)? {
                    Some(id) => state
                        .name(strings, NameUse::Nvtx, id)?
                        .map(|name| Cow::Owned(state.builder.strings.get(name).to_string())),
                    None => None,
                },
            };
            let text = text.unwrap_or(Cow::Borrowed("(unnamed NVTX range)"));
            let domain = cells
                .opt_int(DOMAIN)?
                .filter(|&d| d != 0)
                .and_then(|d| state.domains.get(&d));
            let name = match domain {
                Some(domain) => state.builder.strings.intern(&format!("{domain}:{text}")),
                None => state.builder.strings.intern(&text),
            };
            let step = match &step_nvtx {
                Some(pattern) => pattern.captures(&text).map(|found| {
                    found
                        .get(1)
                        .and_then(|number| number.as_str().parse::<i64>().ok())
                }),
                None => text
                    .strip_prefix("ProfilerStep#")
                    .and_then(|n| n.parse::<i64>().ok())
                    .map(Some),
            };
            let thread = state.thread(global_tid);
            let index = state.next_index();
            let Some(dur) = end.checked_sub(start) else {
                state.builder.note_time_out_of_range(place);
                return Ok(());
            };
            if let Some(number) = step {
                state.steps.push((Nanos(start), Nanos(end), number));
            }
            let event = HostEvent::new(
                thread,
                Nanos(start),
                Nanos(dur),
                name,
                HostKind::Annotation,
                index,
            );
            state.builder.push_host_event(event, None);
            Ok(())
        })?;
        Ok(())
    }

    fn read_thread_names(&mut self) -> Result<(), Error> {
        let columns = [
            required("nameId"),
            optional("priority"),
            required("globalTid"),
        ];
        let cost = "no thread names (and no MPI rank from them)";
        self.scan_optional(THREAD_NAMES, &columns, "", cost, |reader, cells| {
            let (Some(name_id), Some(global_tid)) = (cells.opt_int(0)?, cells.opt_int(2)?) else {
                return Ok(());
            };
            let priority = cells.opt_int(1)?.unwrap_or(0);
            let Reader {
                strings, processes, ..
            } = reader;
            let Some(state) = processes.get_mut(&process_key(global_tid)) else {
                return Ok(());
            };
            let Some(name) = state.name(strings, NameUse::Nvtx, name_id)? else {
                return Ok(());
            };
            // nsys's MPI tracing names each rank's main thread `MPI Rank N`.
            if let Some(rank) = state
                .builder
                .strings
                .get(name)
                .strip_prefix("MPI Rank ")
                .and_then(|n| n.trim().parse().ok())
            {
                state.rank.get_or_insert(rank);
            }
            let Some(&thread) = state.threads.get(&global_tid) else {
                return Ok(());
            };
            let best = state.thread_name_priority.entry(thread).or_insert(i64::MIN);
            if priority > *best {
                *best = priority;
                state.builder.threads[thread.index()].name = Some(name);
            }
            Ok(())
        })?;
        Ok(())
    }

    /// Device figures by device id, from `TARGET_INFO_GPU` (with the VM id that tells two
    /// hosts' GPUs apart; its device column is `id`, or `deviceId` in older exports), with
    /// what it lacks taken from `TARGET_INFO_CUDA_GPU` (older exports: names, SM counts,
    /// compute capabilities), else the SM count of `TARGET_INFO_CUDA_DEVICE`.
    fn read_devices(&mut self) -> Result<Vec<(i64, Option<i64>, DeviceProperties)>, Error> {
        let mut out: Vec<(i64, Option<i64>, DeviceProperties)> = Vec::new();
        let id = if self.schema.has_column(GPU_INFO, "id") {
            "id"
        } else {
            "deviceId"
        };
        let columns = [
            required(id),
            optional("vmId"),
            optional("name"),
            optional("totalMemory"),
            optional("clockRate"),
            optional("smCount"),
            optional("computeMajor"),
            optional("computeMinor"),
            optional("memoryBandwidth"),
        ];
        let cost = "no GPU names or figures from TARGET_INFO_GPU";
        self.scan_optional(GPU_INFO, &columns, "", cost, |_, cells| {
            let unsigned = |index| -> Result<Option<u64>, Error> {
                Ok(cells.opt_int(index)?.and_then(|v| u64::try_from(v).ok()))
            };
            let properties = DeviceProperties {
                name: cells.opt_text(2)?.map(Cow::into_owned),
                compute_capability: cells.opt_int(6)?.zip(cells.opt_int(7)?),
                total_memory_bytes: unsigned(3)?,
                multiprocessors: unsigned(5)?,
                // nsys records Hz; the model holds kHz.
                clock_rate_khz: unsigned(4)?.map(|hz| hz / 1000),
                memory_bandwidth_bytes_per_s: unsigned(8)?.map(|b| b as f64),
            };
            out.push((cells.int(0)?, cells.opt_int(1)?, properties));
            Ok(())
        })?;
        let columns = [
            required("deviceId"),
            optional("vmId"),
            optional("name"),
            optional("globalMemorySize"),
            optional("coreClockRate"),
            optional("numMultiprocessors"),
            optional("computeCapabilityMajor"),
            optional("computeCapabilityMinor"),
        ];
        let cost = "no GPU figures from TARGET_INFO_CUDA_GPU";
        self.scan_optional(CUDA_GPU_INFO, &columns, "", cost, |_, cells| {
            let unsigned = |index| -> Result<Option<u64>, Error> {
                Ok(cells.opt_int(index)?.and_then(|v| u64::try_from(v).ok()))
            };
            let found = DeviceProperties {
                name: cells.opt_text(2)?.map(Cow::into_owned),
                compute_capability: cells.opt_int(6)?.zip(cells.opt_int(7)?),
                total_memory_bytes: unsigned(3)?,
                multiprocessors: unsigned(5)?,
                // This older table records the core clock in kHz.
                clock_rate_khz: unsigned(4)?,
                memory_bandwidth_bytes_per_s: None,
            };
            let (device, vm) = (cells.int(0)?, cells.opt_int(1)?);
            let same = out
                .iter_mut()
                .find(|(d, v, _)| *d == device && (v.is_none() || vm.is_none() || *v == vm));
            match same {
                Some((_, _, p)) => {
                    p.name = p.name.take().or(found.name);
                    p.compute_capability = p.compute_capability.or(found.compute_capability);
                    p.total_memory_bytes = p.total_memory_bytes.or(found.total_memory_bytes);
                    p.multiprocessors = p.multiprocessors.or(found.multiprocessors);
                    p.clock_rate_khz = p.clock_rate_khz.or(found.clock_rate_khz);
                }
                None => out.push((device, vm, found)),
            }
            Ok(())
        })?;
        if out.is_empty() {
            let columns = [required("cudaId"), optional("numMultiprocessors")];
            let cost = "no SM counts from TARGET_INFO_CUDA_DEVICE";
            self.scan_optional(CUDA_DEVICE_INFO, &columns, "", cost, |_, cells| {
                let properties = DeviceProperties {
                    multiprocessors: cells.opt_int(1)?.and_then(|v| u64::try_from(v).ok()),
                    ..DeviceProperties::default()
                };
                out.push((cells.int(0)?, None, properties));
                Ok(())
            })?;
        }
        Ok(out)
    }

    /// Process names by process key, from `PROCESSES` (newer exports).
    fn read_process_names(&mut self) -> Result<FastMap<i64, String>, Error> {
        let mut out = FastMap::default();
        let columns = [required("globalPid"), optional("name")];
        let cost = "no process names (a process is chosen by its pid only)";
        self.scan_optional(PROCESSES, &columns, "", cost, |_, cells| {
            if let (Some(global), Some(name)) = (cells.opt_int(0)?, cells.opt_text(1)?) {
                out.insert(process_key(global), name.into_owned());
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// `name → value` of the export's metadata (`META_DATA_EXPORT`, or `EXPORT_META_DATA`
    /// before schema 3) and which table it came from.
    fn read_export_meta(
        &mut self,
    ) -> Result<(Option<&'static str>, BTreeMap<String, String>), Error> {
        let mut meta = BTreeMap::new();
        let columns = [required("name"), optional("value")];
        for table in ["META_DATA_EXPORT", "EXPORT_META_DATA"] {
            let cost = "no export schema version or Nsight Systems version";
            let present = self.scan_optional(table, &columns, "", cost, |_, cells| {
                if let (Some(name), Some(value)) = (cells.opt_text(0)?, cells.opt_text(1)?) {
                    meta.entry(name.into_owned())
                        .or_insert_with(|| value.into_owned());
                }
                Ok(())
            })?;
            if present {
                return Ok((Some(table), meta));
            }
        }
        Ok((None, meta))
    }

    /// Environment variables of the launched processes (`META_DATA_CAPTURE`) and of nsys
    /// itself (`TARGET_INFO_SYSTEM_ENV`), in that order of precedence.
    fn read_environment(&mut self) -> Result<Vec<(String, String)>, Error> {
        let mut out = Vec::new();
        let columns = [required("name"), optional("value")];
        let filter = " WHERE name LIKE 'PROCESS_%:ENVIRONMENT_VARIABLE'";
        let cost = "no rank or world size from the launched process's environment";
        self.scan_optional("META_DATA_CAPTURE", &columns, filter, cost, |_, cells| {
            if let Some(value) = cells.opt_text(1)?
                && let Some((key, value)) = value.split_once('=')
            {
                out.push((key.to_string(), value.trim_matches('"').to_string()));
            }
            Ok(())
        })?;
        let filter = " WHERE name = 'DeviceEnvironment'";
        self.scan_optional(
            "TARGET_INFO_SYSTEM_ENV",
            &columns,
            filter,
            cost,
            |_, cells| {
                if let Some(value) = cells.opt_text(1)? {
                    for pair in value.split(';') {
                        if let Some((key, value)) = pair.split_once('=') {
                            out.push((key.to_string(), value.to_string()));
                        }
                    }
                }
                Ok(())
            },
        )?;
        Ok(out)
    }

    /// The UTC time of the capture's time zero, in Unix-epoch nanoseconds.
    fn read_session_start(&mut self) -> Result<Option<i64>, Error> {
        let mut start = None;
        let columns = [optional("utcEpochNs")];
        self.scan_optional(
            "TARGET_INFO_SESSION_START_TIME",
            &columns,
            "",
            "no wall-clock time of the capture's start",
            |_, cells| {
                start = start.or(cells.opt_int(0)?);
                Ok(())
            },
        )?;
        Ok(start)
    }

    /// Which CUDA tables are absent or empty, for [`Error::NoCudaActivity`].
    fn why_empty(&self) -> String {
        let mut absent = Vec::new();
        let mut present = Vec::new();
        for table in [KERNEL, MEMCPY, MEMSET, RUNTIME] {
            if self.schema.has_table(table) {
                present.push(table);
            } else {
                absent.push(table);
            }
        }
        if present.is_empty() {
            "the export has no CUDA tables (CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET, \
             _RUNTIME): the capture traced no CUDA work (profile with `nsys profile --trace=cuda`)"
                .to_string()
        } else {
            format!(
                "no process has a GPU activity or a CUDA runtime call ({} empty{})",
                present.join(", "),
                if absent.is_empty() {
                    String::new()
                } else {
                    format!("; {} absent", absent.join(", "))
                }
            )
        }
    }

    /// Devices, thread names, ranks, steps, metadata and diagnostics; then each process's
    /// capture.
    fn finish(mut self) -> Result<Vec<Process>, Error> {
        self.read_thread_names()?;
        let devices = self.read_devices()?;
        let process_names = self.read_process_names()?;
        let (meta_table, export_meta) = self.read_export_meta()?;
        let base_time_ns = self.read_session_start()?;
        let environment = if self.processes.len() == 1 {
            self.read_environment()?
        } else {
            Vec::new()
        };
        let env_value = |names: &[&str]| {
            names.iter().find_map(|name| {
                environment
                    .iter()
                    .find(|(key, _)| key == name)
                    .and_then(|(_, value)| value.trim().parse::<i64>().ok())
            })
        };
        let (env_rank, env_world_size) =
            (env_value(RANK_VARIABLES), env_value(WORLD_SIZE_VARIABLES));
        let producer = export_meta.get("EXPORT_PRODUCT_VERSION").map(|version| {
            match export_meta.get("EXPORT_SCHEMA_VERSION") {
                Some(schema) => format!("Nsight Systems {version} (export schema {schema})"),
                None => format!("Nsight Systems {version}"),
            }
        });
        let path = self.path;
        let file = path.display().to_string();
        let missing: Vec<(&str, &'static str, &str)> = [
            (KERNEL, "nsys-no-kernel-table", "kernels"),
            (MEMCPY, "nsys-no-memcpy-table", "memcpys"),
            (MEMSET, "nsys-no-memset-table", "memsets"),
            (RUNTIME, "nsys-no-runtime-table", "CUDA runtime calls"),
            (NVTX, "nsys-no-nvtx-table", "NVTX ranges"),
        ]
        .into_iter()
        .filter(|(table, _, _)| !self.schema.has_table(table))
        .collect();
        let no_device_info = devices.is_empty();
        let mut out = Vec::new();
        for (key, mut state) in std::mem::take(&mut self.processes) {
            let b = &mut state.builder;
            for (table, code, what) in &missing {
                b.diagnostics.add(
                    code,
                    || format!("the export has no {table} table: no {what} were recorded"),
                    || format!("{file}: table {table}"),
                );
            }
            match (meta_table, export_meta.get("EXPORT_SCHEMA_VERSION")) {
                (Some("EXPORT_META_DATA"), version) => b.diagnostics.add(
                    "nsys-old-export-schema",
                    || {
                        format!(
                            "an older export (schema {}, table EXPORT_META_DATA): tables and columns were read by what the file has",
                            version.map_or("unknown", String::as_str)
                        )
                    },
                    || format!("{file}: table EXPORT_META_DATA"),
                ),
                (None, _) => b.diagnostics.add(
                    "nsys-no-export-metadata",
                    || "the export has neither META_DATA_EXPORT nor EXPORT_META_DATA: its schema version is unknown".to_string(),
                    || file.clone(),
                ),
                _ => {}
            }
            if let Some((first, _, _)) = self.unread.first() {
                let each: Vec<String> = self
                    .unread
                    .iter()
                    .map(|(table, column, cost)| format!("{table} (no column {column}: {cost})"))
                    .collect();
                b.diagnostics.add_many(
                    "nsys-table-unread",
                    self.unread.len() as u64,
                    format!(
                        "tables not read, each lacking a column the reader needs: {}",
                        each.join("; ")
                    ),
                    format!("{file}: table {first}"),
                );
            }
            crate::strings::note_cut(b, self.strings.cut, &file);
            if no_device_info {
                b.diagnostics.add(
                    "nsys-no-device-table",
                    || format!("the export has no {GPU_INFO} rows: device names and figures are unknown"),
                    || format!("{file}: table {GPU_INFO}"),
                );
            }
            let vm = key >> 48;
            for device in &mut b.devices {
                let same_id = devices.iter().filter(|(id, _, _)| *id == device.ordinal);
                let found = same_id
                    .clone()
                    .find(|(_, row_vm, _)| row_vm.is_some_and(|v| v >> 48 == vm))
                    .or_else(|| same_id.clone().next());
                if let Some((_, _, properties)) = found {
                    device.properties = properties.clone();
                }
            }
            // Steps in start order; a number given twice keeps its first range.
            state.steps.sort_by_key(|&(start, end, _)| (start, end));
            let mut numbers = std::collections::BTreeSet::new();
            for (position, &(start, end, number)) in state.steps.iter().enumerate() {
                let number = number.unwrap_or(position as i64);
                if numbers.insert(number) {
                    b.steps.push(Step {
                        number,
                        start,
                        end,
                        source: StepSource::ProfilerStep,
                    });
                }
            }
            let rank = state.rank.or(env_rank);
            b.meta.rank = rank;
            b.meta.world_size = env_world_size.filter(|_| rank.is_some());
            b.meta.producer = producer.clone();
            b.meta.base_time_ns = base_time_ns;
            // The process's name: `PROCESSES`, else its main thread's (tid = pid).
            let name = process_names.get(&key).cloned().or_else(|| {
                b.threads
                    .iter()
                    .find(|t| t.tid == state.pid)
                    .and_then(|t| t.name)
                    .map(|n| b.strings.get(n).to_string())
            });
            let capture = state.builder.finish(path);
            out.push(Process {
                pid: state.pid,
                name,
                rank,
                capture,
            });
        }
        out.sort_by_key(|p| (p.rank.is_none(), p.rank, p.pid));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_version_suffixes_go() {
        for (name, expect) in [
            ("cudaLaunchKernel_v7000", "cudaLaunchKernel"),
            ("cuGetProcAddress_v2", "cuGetProcAddress"),
            ("cudaMalloc", "cudaMalloc"),
            ("cuda_v", "cuda_v"),
            ("_v12", "_v12"),
            ("my_value_v1x", "my_value_v1x"),
        ] {
            assert_eq!(strip_api_version(name), expect, "{name}");
        }
    }

    #[test]
    fn launch_calls() {
        for name in [
            "cudaLaunchKernel",
            "cuLaunchKernelEx",
            "cudaGraphLaunch",
            "cudaMemcpyAsync",
            "cuMemsetD8Async",
            "cudaMemcpy",
        ] {
            assert!(is_launch_api(name), "{name}");
        }
        for name in [
            "cudaDeviceSynchronize",
            "cudaMalloc",
            "cuMemAlloc",
            "cudaStreamSynchronize",
        ] {
            assert!(!is_launch_api(name), "{name}");
        }
    }

    #[test]
    fn global_ids_split_into_process_and_thread() {
        // From `nvfuser-h200-matmul`: thread 30156 of process 30156 on VM 1.
        let global_tid = (1i64 << 48) | (30156 << 24) | 30156;
        assert_eq!(pid_of(global_tid), 30156);
        assert_eq!(global_tid & TID_BITS, 30156);
        assert_eq!(process_key(global_tid), (1i64 << 48) | (30156 << 24));
        assert_eq!(
            process_key(process_key(global_tid)),
            process_key(global_tid)
        );
    }

    #[test]
    fn copy_kinds() {
        assert_eq!(copy_kind(Some(1)), (MemcpyDirection::HostToDevice, "HtoD"));
        assert_eq!(copy_kind(Some(10)), (MemcpyDirection::PeerToPeer, "PtoP"));
        assert_eq!(copy_kind(None), (MemcpyDirection::Unknown, "unknown"));
        assert_eq!(memory_kind(Some(1)), Some("Pinned"));
        assert_eq!(memory_kind(Some(7)), None);
    }

    #[test]
    fn report_files_by_extension() {
        assert!(is_report_file(Path::new("a/run.nsys-rep")));
        assert!(is_report_file(Path::new("run.QDREP")));
        assert!(!is_report_file(Path::new("run.sqlite")));
    }
}
