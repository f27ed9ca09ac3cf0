//! `tracewise._native`, the extension module behind the `tracewise` Python package: thin
//! bindings over the workspace's libraries (the loader through trace-frame's frames, its
//! SQL and HTA analyses, the investigation and the other tools' results). No analysis logic
//! lives here: each function makes one library call on a worker thread, turns its error
//! into a `TraceError` subclass, and hands back frames (Arrow C streams) or JSON text that
//! the Python layer (`python/tracewise/`) turns into objects.
//!
//! Every call runs on a thread of its own while the interpreter is released; the calling
//! thread waits in 100 ms slices and checks for signals between them, so Ctrl-C during a
//! long load raises `KeyboardInterrupt` at once (the abandoned work finishes in the
//! background and is dropped). A panic in a library is caught and raised as
//! `InternalError`, never as a crash of the interpreter.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule};
use trace_frame::{DataFrame, Timeline, hta};

mod callstack;
mod columns;
mod cpgraph;
mod overlay;
mod queue;
mod save;
use columns::to_bytes;
use overlay::{write_overlaid_trace, write_patterned_trace, write_trace_with_counters};
use save::write_files;

create_exception!(
    tracewise,
    TraceError,
    PyException,
    "A capture could not be read or analysed; the message names the file and where."
);
create_exception!(
    tracewise,
    TraceFormatError,
    TraceError,
    "The file is not a readable capture: malformed or truncated (the message names the byte offset, event or field)."
);
create_exception!(
    tracewise,
    UnknownFormatError,
    TraceFormatError,
    "No known capture format: the message names the file and the formats known."
);
create_exception!(
    tracewise,
    TraceIOError,
    TraceError,
    "A file or directory could not be read."
);
create_exception!(
    tracewise,
    SqlError,
    TraceError,
    "A SQL query was refused or failed (it may read only events, kernels and launches)."
);
create_exception!(
    tracewise,
    OutputError,
    TraceError,
    "An output (a report directory) was refused or could not be written."
);
create_exception!(
    tracewise,
    AnalysisError,
    TraceError,
    "The capture lacks what an analysis needs (named in the message)."
);
create_exception!(
    tracewise,
    InternalError,
    TraceError,
    "A bug in tracewise (a panic, caught): please report it with the capture."
);

/// What a worker returns: the value, or the exception class and its message.
type Outcome<T> = Result<T, (Kind, String)>;

/// Which `TraceError` subclass an error becomes.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Format,
    UnknownFormat,
    Io,
    Sql,
    Output,
    Analysis,
    Internal,
}

/// The exception class of `err`, from the first error of its chain that says what it is.
fn kind_of(err: &(dyn std::error::Error + 'static)) -> Kind {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cur {
        if let Some(e) = e.downcast_ref::<load::Error>() {
            return load_kind(e);
        }
        if let Some(e) = e.downcast_ref::<trace_frame::Error>() {
            match e {
                // A transparent variant's `source()` skips the inner error itself.
                trace_frame::Error::Load(e) => return load_kind(e),
                trace_frame::Error::Sql { .. } => return Kind::Sql,
                trace_frame::Error::Polars { context, .. } if context.starts_with("SQL") => {
                    return Kind::Sql;
                }
                trace_frame::Error::Io(_) => return Kind::Io,
                trace_frame::Error::Output(_) => return Kind::Output,
                trace_frame::Error::Missing { .. } => return Kind::Analysis,
                _ => {}
            }
        }
        if e.downcast_ref::<output_file::Error>().is_some() {
            return Kind::Output;
        }
        if e.downcast_ref::<std::io::Error>().is_some() {
            return Kind::Io;
        }
        cur = e.source();
    }
    Kind::Format
}

/// The exception class of a loader error.
fn load_kind(e: &load::Error) -> Kind {
    match e {
        load::Error::UnknownFormat { .. } | load::Error::NoCapture { .. } => Kind::UnknownFormat,
        load::Error::Io { .. } => Kind::Io,
        // A reader's error: an I/O failure when its cause is one (the variants are
        // transparent, so the chain starts at the reader error's own source).
        _ => {
            let mut cur = std::error::Error::source(e);
            while let Some(s) = cur {
                if s.downcast_ref::<std::io::Error>().is_some() {
                    return Kind::Io;
                }
                cur = s.source();
            }
            Kind::Format
        }
    }
}

/// `err` as a worker's failure: its class and its whole chain as the message.
fn fail(err: &(dyn std::error::Error + 'static)) -> (Kind, String) {
    (kind_of(err), analysis::error_chain(err))
}

/// The exception for a worker's failure; `path` is set on it as `.path` when known.
fn to_py(py: Python<'_>, (kind, msg): (Kind, String), path: Option<&Path>) -> PyErr {
    let err = match kind {
        Kind::Format => TraceFormatError::new_err(msg),
        Kind::UnknownFormat => UnknownFormatError::new_err(msg),
        Kind::Io => TraceIOError::new_err(msg),
        Kind::Sql => SqlError::new_err(msg),
        Kind::Output => OutputError::new_err(msg),
        Kind::Analysis => AnalysisError::new_err(msg),
        Kind::Internal => InternalError::new_err(msg),
    };
    let value = err.value(py);
    let path = path.map(|p| p.to_string_lossy().into_owned());
    // Setting an attribute on a fresh exception instance cannot fail but for memory; the
    // message already names the file, so a failure here loses nothing essential.
    let _ = value.setattr("path", path);
    err
}

/// Runs `work` on a thread of its own with the interpreter released, checking for signals
/// every 100 ms; a panic becomes `InternalError`.
fn run<T, F>(py: Python<'_>, path: Option<&Path>, work: F) -> PyResult<T>
where
    T: Send + 'static,
    F: FnOnce() -> Outcome<T> + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    // The receiver is waited on with the interpreter released, from a closure that must be
    // `Send`; a lock makes the `!Sync` receiver shareable.
    let rx = std::sync::Mutex::new(rx);
    std::thread::Builder::new()
        .name("tracewise".into())
        .spawn(move || {
            let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
            // The receiver is gone when the caller was interrupted: nobody wants the value.
            let _ = tx.send(res);
        })
        .map_err(|e| InternalError::new_err(format!("cannot start a thread: {e}")))?;
    loop {
        let next = py.detach(|| {
            let rx = rx.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            rx.recv_timeout(Duration::from_millis(100))
        });
        match next {
            Ok(Ok(Ok(v))) => return Ok(v),
            Ok(Ok(Err(e))) => return Err(to_py(py, e, path)),
            Ok(Err(panic)) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".into());
                let msg = format!("internal error (a bug in tracewise): {what}");
                return Err(to_py(py, (Kind::Internal, msg), path));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(InternalError::new_err("the worker thread vanished"));
            }
        }
    }
}

/// A frame handed to Python through the Arrow PyCapsule interface.
#[pyclass(module = "tracewise._native", frozen)]
struct Table {
    df: Arc<DataFrame>,
}

#[pymethods]
impl Table {
    /// The frame as an Arrow C stream (`arrow_array_stream` capsule); the columns'
    /// buffers are shared with the consumer, not copied. A requested schema is ignored
    /// (allowed by the interface): the stream has the frame's own types.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let stream = trace_frame::arrow_stream(&self.df);
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    /// Rows of the frame.
    #[getter]
    fn num_rows(&self) -> usize {
        self.df.height()
    }

    /// Column names, in order.
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.df
            .get_column_names()
            .iter()
            .map(|c| c.to_string())
            .collect()
    }

    fn __len__(&self) -> usize {
        self.df.height()
    }
}

/// Every rank of a trace path, loaded as trace-frame frames.
#[pyclass(module = "tracewise._native", frozen)]
struct Capture {
    loaded: Arc<trace_frame::LoadedRanks>,
}

impl Capture {
    fn table(&self, py: Python<'_>, name: &'static str) -> PyResult<Table> {
        let loaded = Arc::clone(&self.loaded);
        let path = self.loaded.input.clone();
        run(py, Some(&path), move || {
            match trace_frame::table(&loaded.events, name) {
                Ok(Some(df)) => Ok(Table { df: Arc::new(df) }),
                Ok(None) => Err((Kind::Internal, format!("no table {name}"))),
                Err(e) => Err(fail(&e)),
            }
        })
    }
}

#[pymethods]
impl Capture {
    /// Every event of every rank (`rank` column), one row per element of `traceEvents`.
    fn events(&self) -> Table {
        Table {
            df: Arc::new(self.loaded.events.clone()),
        }
    }

    /// The GPU kernels (`cat = 'kernel'`).
    fn kernels(&self, py: Python<'_>) -> PyResult<Table> {
        self.table(py, "kernels")
    }

    /// The CUDA runtime and driver calls (`cat` is `cuda_runtime` or `cuda_driver`).
    fn launches(&self, py: Python<'_>) -> PyResult<Table> {
        self.table(py, "launches")
    }

    /// trace-frame's SQL over `events`, `kernels` and `launches`.
    fn sql(&self, py: Python<'_>, query: String) -> PyResult<Table> {
        let loaded = Arc::clone(&self.loaded);
        run(py, None, move || {
            trace_frame::run_sql(&loaded.events, &query)
                .map(|df| Table { df: Arc::new(df) })
                .map_err(|e| fail(&e))
        })
    }

    /// The path given to `load`.
    #[getter]
    fn path(&self) -> String {
        self.loaded.input.to_string_lossy().into_owned()
    }

    /// (rank, file) of each trace file, sorted by rank; the rank is None when unknown.
    #[getter]
    fn files(&self) -> Vec<(Option<i64>, String)> {
        self.loaded
            .frames
            .iter()
            .map(|f| (f.rank, f.path.to_string_lossy().into_owned()))
            .collect()
    }
}

/// Loads a capture (every format the loader reads) as frames.
#[pyfunction(name = "load")]
fn load_capture(py: Python<'_>, path: PathBuf) -> PyResult<Capture> {
    let p = path.clone();
    run(py, Some(&path), move || {
        trace_frame::load(&p, None)
            .map(|l| Capture {
                loaded: Arc::new(l),
            })
            .map_err(|e| fail(&e))
    })
}

/// The ranks' timelines as HTA sees them, for the HTA drop-in.
#[pyclass(module = "tracewise._native", frozen)]
struct HtaTrace {
    timelines: Arc<Vec<Timeline>>,
    /// HTA's time origin: the earliest event start over the ranks, in ns.
    min_ts: i64,
}

/// HTA's rank of a timeline (set by `load_hta_view`: `distributedInfo.rank`, else 0).
fn rank(t: &Timeline) -> i64 {
    t.rank.unwrap_or(0)
}

impl HtaTrace {
    fn of(&self, rank_: i64) -> Option<&Timeline> {
        self.timelines.iter().find(|t| rank(t) == rank_)
    }
}

/// A time relative to HTA's origin, in µs (whole on the traces HTA rounds).
fn rel_us(t: i64, min_ts: i64) -> f64 {
    (t - min_ts) as f64 / 1000.0
}

#[pymethods]
impl HtaTrace {
    /// Loads the traces of a directory (or one file) and builds HTA's view of each rank.
    #[new]
    #[pyo3(signature = (path, include_last_profiler_step=false, rank_of_file=None))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        include_last_profiler_step: bool,
        rank_of_file: Option<std::collections::HashMap<PathBuf, i64>>,
    ) -> PyResult<HtaTrace> {
        let p = path.clone();
        run(py, Some(&path), move || {
            let (timelines, min_ts) =
                trace_frame::load_hta_view(&p, include_last_profiler_step, rank_of_file.as_ref())
                    .map_err(|e| fail(&e))?;
            Ok(HtaTrace {
                timelines: Arc::new(timelines),
                min_ts: min_ts.unwrap_or(0),
            })
        })
    }

    /// HTA's time origin (`min_ts`), in µs: series times plus it are the trace's own.
    fn origin_us(&self) -> f64 {
        self.min_ts as f64 / 1000.0
    }

    /// The (min, max) of `args.stream`, of `args.correlation` and of the event index over
    /// the events HTA's parser keeps of `rank` (its integer dtypes come from them).
    #[allow(clippy::type_complexity)] // three ranges, unpacked by the Python layer
    fn int_ranges(&self, rank_: i64) -> Option<((i64, i64), (i64, i64), (i64, i64))> {
        let r = self.of(rank_)?.hta_int_ranges;
        Some((r.stream, r.correlation, r.index))
    }

    /// The ranks, in order.
    fn ranks(&self) -> Vec<i64> {
        self.timelines.iter().map(rank).collect()
    }

    /// The trace file of each rank.
    fn files(&self) -> Vec<(i64, String)> {
        self.timelines
            .iter()
            .map(|t| (rank(t), t.path.display().to_string()))
            .collect()
    }

    /// Whether `rank`'s trace had fractional-µs timestamps (HTA's frames are float then).
    fn fractional(&self, rank_: i64) -> bool {
        self.of(rank_).is_some_and(|t| t.fractional_us)
    }

    /// The `ProfilerStep` numbers of the first rank (those HTA keeps).
    fn steps(&self) -> Vec<i64> {
        self.timelines
            .first()
            .map(|t| {
                let mut s: Vec<i64> = t.steps.iter().map(|s| s.0).collect();
                s.sort_unstable();
                s.dedup();
                s
            })
            .unwrap_or_default()
    }

    /// Per rank: (rank, idle, compute, non-compute, span in µs, the three shares in %).
    #[allow(clippy::type_complexity)] // a row of a frame, unpacked by the Python layer
    fn temporal(&self) -> Vec<(i64, f64, f64, f64, f64, f64, f64, f64)> {
        self.timelines
            .iter()
            .filter_map(|t| {
                hta::temporal(t).map(|r| {
                    (
                        rank(t),
                        r.idle_us,
                        r.compute_us,
                        r.non_compute_us,
                        r.kernel_time_us,
                        r.idle_pct,
                        r.compute_pct,
                        r.non_compute_pct,
                    )
                })
            })
            .collect()
    }

    /// Per rank: each HTA type's merged busy intervals, starts and ends as bytes
    /// (`columns::kernel_type_intervals`), for `_kernel_type_time`.
    fn kernel_type_intervals<'py>(
        &self,
        py: Python<'py>,
        include_memory: bool,
    ) -> Vec<(i64, Vec<Bound<'py, PyBytes>>)> {
        let of = |t| {
            to_bytes(
                py,
                columns::kernel_type_intervals(t, self.min_ts, include_memory),
            )
        };
        self.timelines.iter().map(|t| (rank(t), of(t))).collect()
    }

    /// Per rank and name: (rank, name, HTA type, count, sum, max, min, mean, std in µs).
    #[allow(clippy::type_complexity)] // a row of a frame, unpacked by the Python layer
    fn kernels(&self) -> Vec<(i64, String, &'static str, usize, f64, f64, f64, f64, f64)> {
        hta::kernel_breakdown_hta(&self.timelines)
            .into_iter()
            .map(|r| {
                (
                    r.rank.unwrap_or(0),
                    r.name,
                    r.kernel_type.label(),
                    r.count,
                    r.sum_us,
                    r.max_us,
                    r.min_us,
                    r.mean_us,
                    r.std_us,
                )
            })
            .collect()
    }

    /// Per stream of `rank`, in HTA's stream order: (stream, [host wait, kernel wait,
    /// other] µs, the number of activities in each category).
    fn idle(
        &self,
        rank_: i64,
        consecutive_kernel_delay_us: i64,
    ) -> Vec<(i64, [f64; 3], [usize; 3])> {
        let Some(t) = self.of(rank_) else {
            return Vec::new();
        };
        let mut rows = hta::idle_breakdown(t, consecutive_kernel_delay_us);
        rows.sort_by_key(|r| (r.first_index, r.stream));
        rows.into_iter()
            .map(|r| {
                (
                    r.stream,
                    [r.host_wait_us, r.kernel_wait_us, r.other_us],
                    r.category_counts,
                )
            })
            .collect()
    }

    /// The gaps of each stream of `rank`, in HTA's stream order: (stream, categories,
    /// gaps) as bytes (`columns::idle_gaps`).
    fn idle_intervals<'py>(
        &self,
        py: Python<'py>,
        rank_: i64,
        delay_us: i64,
    ) -> Vec<(i64, Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let gaps = self
            .of(rank_)
            .map(|t| columns::idle_gaps(t, delay_us))
            .unwrap_or_default();
        gaps.into_iter()
            .map(|(s, c, g)| (s, PyBytes::new(py, &c), PyBytes::new(py, &g)))
            .collect()
    }

    /// Per rank: (rank, share of communication time overlapped by computation, %; NaN
    /// without communication, as HTA's 0/0).
    fn overlap(&self) -> Vec<(i64, f64)> {
        self.timelines
            .iter()
            .map(|t| {
                let o = hta::overlap(t);
                let pct = if o.comm_us > 0.0 {
                    o.overlap_pct
                } else {
                    f64::NAN
                };
                (rank(t), pct)
            })
            .collect()
    }

    /// The launches of `rank`, in HTA's order, as bytes (`columns::launches`).
    fn launch_stats<'py>(
        &self,
        py: Python<'py>,
        rank_: i64,
        include_memory_events: bool,
    ) -> Vec<Bound<'py, PyBytes>> {
        let cols = self
            .of(rank_)
            .map(|t| columns::launches(t, include_memory_events));
        to_bytes(py, cols.unwrap_or_default())
    }

    /// The queue-length series of each stream of `rank`: (stream, values).
    fn queue_length(&self, rank_: i64) -> Vec<(i64, Vec<i64>)> {
        self.of(rank_)
            .map(hta::queue_length_series)
            .unwrap_or_default()
    }

    /// Whether some event of some rank has `text` (one of `trace_model::ASKED_SYMBOLS`)
    /// as its category or name, as the loader read them; `None` when that is not known
    /// (another text, or a rank read from another format than Chrome JSON).
    fn has_symbol(&self, text: &str) -> Option<bool> {
        let mut known = true;
        for t in self.timelines.iter() {
            match t.has_symbol(text) {
                Some(true) => return Some(true),
                Some(false) => {}
                None => known = false,
            }
        }
        known.then_some(false)
    }

    /// The kernel launches of `rank` that an `aten::` operator wraps, in file order
    /// (`hta::aten_launches`): (operator's tid, operator, operator start in ns, launch
    /// delay µs, runtime delay µs, kernel). ValueError, as HTA's, for a wrapped launch
    /// without exactly one GPU activity.
    #[allow(clippy::type_complexity)] // a row of a frame, unpacked by the Python layer
    fn aten_launches(&self, rank_: i64) -> PyResult<Vec<(String, String, i64, i64, i64, String)>> {
        let Some(t) = self.of(rank_) else {
            return Ok(Vec::new());
        };
        let rows = hta::aten_launches(t)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        let row = |r: hta::AtenLaunch| {
            let (delay, runtime) = (r.op_delay_us, r.runtime_delay_us);
            (r.thread, r.op, r.op_start, delay, runtime, r.kernel)
        };
        Ok(rows.into_iter().map(row).collect())
    }

    /// The memory activities of `rank`: their types and columns (`columns::memory_ops`).
    fn memory_ops<'py>(
        &self,
        py: Python<'py>,
        rank_: i64,
    ) -> (Vec<String>, Vec<Bound<'py, PyBytes>>) {
        columns::named(py, self.of(rank_), self.min_ts, columns::memory_ops)
    }

    /// HTA's `get_trace_duration` of `rank`: last start − first start of the events it
    /// keeps, in µs. The first is the rank's HTA origin (its earliest complete event but
    /// the `Trace` span, which HTA's parser drops and the timeline's host events hold).
    fn duration(&self, rank_: i64) -> Option<f64> {
        let t = self.of(rank_)?;
        let starts = || {
            t.host
                .iter()
                .map(|h| h.start)
                .chain(t.gpu.iter().map(|g| g.start))
        };
        let first = t.hta_origin.or_else(|| starts().min())?;
        Some((starts().max()? - first) as f64 / 1000.0)
    }

    /// The `user_annotation` host events of `rank`: names and columns (`columns::host_annotations`).
    fn host_annotations<'py>(
        &self,
        py: Python<'py>,
        rank_: i64,
    ) -> (Vec<String>, Vec<Bound<'py, PyBytes>>) {
        columns::named(py, self.of(rank_), self.min_ts, columns::host_annotations)
    }

    /// The `num` latest ranks of the straggler metric (empty when it cannot run).
    fn stragglers(&self, num: usize) -> Vec<i64> {
        hta::stragglers(&self.timelines, num)
            .map(|s| s.ranks)
            .unwrap_or_default()
    }

    /// Per rank, in rank order, how many steps found it among the `num` latest (HTA's
    /// series before its sort; empty when the metric cannot run).
    fn straggler_counts(&self, num: usize) -> Vec<(i64, usize)> {
        hta::stragglers(&self.timelines, num)
            .map(|s| s.counts)
            .unwrap_or_default()
    }

    /// The critical path of `rank`'s step: (length µs, [(bound_by, % of the length)]), or
    /// None when the step is not in the trace.
    fn critical_path(
        &self,
        rank_: i64,
        annotation: &str,
        instance: usize,
    ) -> Option<(f64, Vec<(&'static str, f64)>)> {
        let t = self.of(rank_)?;
        let cp = trace_frame::critical_path(t, annotation, instance)?;
        Some((
            cp.length_us,
            cp.split.iter().map(|(b, p)| (b.label(), *p)).collect(),
        ))
    }

    /// Every host event and GPU activity of `rank`: (event index, name, category, pid,
    /// tid, stream), the host's thread split at its `/`, an activity's pid its device and
    /// tid its stream, a host event's stream −1.
    #[allow(clippy::type_complexity)] // rows, unpacked by the Python layer
    fn event_info(&self, rank_: i64) -> Vec<(i64, String, &'static str, String, String, i64)> {
        let Some(t) = self.of(rank_) else {
            return Vec::new();
        };
        let host = t.host.iter().map(|h| {
            let cat = match h.cat {
                trace_frame::HostCat::CpuOp => "cpu_op",
                trace_frame::HostCat::Runtime => "cuda_runtime",
                trace_frame::HostCat::Driver => "cuda_driver",
                trace_frame::HostCat::Annotation => "user_annotation",
                trace_frame::HostCat::Other => "other",
            };
            let (pid, tid) = t
                .name(h.thread)
                .split_once('/')
                .unwrap_or((t.name(h.thread), ""));
            let name = t.name(h.name).to_owned();
            (h.event_index, name, cat, pid.to_owned(), tid.to_owned(), -1)
        });
        let gpu = t.gpu.iter().map(|g| {
            let cat = match g.kind {
                trace_frame::GpuKind::Kernel => "kernel",
                trace_frame::GpuKind::Memcpy => "gpu_memcpy",
                trace_frame::GpuKind::Memset => "gpu_memset",
                trace_frame::GpuKind::Other => "other",
            };
            let name = t.name(g.name).to_owned();
            let (pid, tid) = (g.device.to_string(), g.stream.to_string());
            (g.event_index, name, cat, pid, tid, g.stream)
        });
        host.chain(gpu).collect()
    }
}

/// The investigation of a capture: (report.json text, report.html text). With `out`, the
/// report directory is written there as `investigate --out` writes it.
#[pyfunction]
#[pyo3(signature = (path, out=None, overwrite=false, step=None))]
fn investigate(
    py: Python<'_>,
    path: PathBuf,
    out: Option<PathBuf>,
    overwrite: bool,
    step: Option<i64>,
) -> PyResult<(String, String)> {
    let p = path.clone();
    run(py, Some(&path), move || {
        let inputs = [p.as_path()];
        let rules = output_file::Rules {
            overwrite,
            inputs: &inputs,
        };
        if let Some(out) = &out {
            output_file::check_dir(out, &rules).map_err(|e| fail(&e))?;
        }
        let options = investigation::Options {
            step,
            ..Default::default()
        };
        let run = investigation::investigate(&p, &options).map_err(|e| fail(&e))?;
        if let Some(out) = &out {
            let dir = output_file::DirOutput::create(out, &rules).map_err(|e| fail(&e))?;
            report::investigate::write_into(&run, &dir).map_err(|e| fail(&e))?;
            dir.commit().map_err(|e| fail(&e))?;
        }
        let inv = &run.investigation;
        Ok((
            report::report_json::write(inv),
            report::html::render(&report::investigate::document(inv)),
        ))
    })
}

/// skip-stats' analysis of a capture (a file or a directory of ranks), as its `--json`.
#[pyfunction]
fn skip_stats(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    let p = path.clone();
    run(py, Some(&path), move || {
        let loaded = load::load(&p).map_err(|e| fail(&e))?;
        let res = analysis::skip_stats_loaded(
            &p,
            &loaded,
            &analysis::SkipConfig::default(),
            std::io::sink(),
        )
        .map_err(|e| fail(&e))?;
        Ok(report::skip_text::render_json(&res).to_string())
    })
}

/// The roofline of a capture's ops, as JSON.
#[pyfunction(name = "roofline")]
fn roofline_json(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    let p = path.clone();
    run(py, Some(&path), move || {
        let r = roofline::analyze(&p).map_err(|e| fail(&e))?;
        serde_json::to_string(&r).map_err(|e| fail(&e))
    })
}

/// Kernel attribution: (summary JSON, [(file name, CSV or text)]) as attribute-kernels
/// writes them.
#[pyfunction]
fn attribute_kernels(py: Python<'_>, path: PathBuf) -> PyResult<(String, Vec<(String, String)>)> {
    let p = path.clone();
    run(py, Some(&path), move || {
        let r = attribution::attribute_path(&p, &attribution::Config::default())
            .map_err(|e| fail(&e))?;
        Ok((
            report::attribution_text::summary_json(&r),
            report::attribution_text::files(&r),
        ))
    })
}

/// The comparison of two captures (or report.json files), as the report JSON.
#[pyfunction(name = "compare")]
fn compare_json(py: Python<'_>, before: PathBuf, after: PathBuf) -> PyResult<String> {
    let b = before.clone();
    run(py, Some(&before), move || {
        let c = compare::compare(&b, &after, &Default::default()).map_err(|e| fail(&e))?;
        Ok(report::report_json::to_string(&report::compare::document(
            &c,
        )))
    })
}

/// A panic inside the library, on purpose: the tests check that it becomes
/// `InternalError` and leaves the interpreter running.
#[pyfunction]
fn _panic_for_test(py: Python<'_>) -> PyResult<()> {
    run(py, None, || -> Outcome<()> {
        panic!("a panic raised on purpose by _panic_for_test")
    })
}

/// A call that takes `seconds`, for the interrupt test.
#[pyfunction]
fn _sleep_for_test(py: Python<'_>, seconds: f64) -> PyResult<()> {
    run(py, None, move || {
        std::thread::sleep(Duration::from_secs_f64(seconds));
        Ok(())
    })
}

/// The module `tracewise._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    // The interpreter owns SIGINT: a report directory being written must not install a
    // handler that ends the process on Ctrl-C.
    output_file::leave_signals_to_host();
    // Which cargo profile built the module (benchmarks name it): optimised or not.
    m.add(
        "BUILD",
        if cfg!(debug_assertions) {
            "dev"
        } else {
            "release"
        },
    )?;
    m.add("TraceError", py.get_type::<TraceError>())?;
    m.add("TraceFormatError", py.get_type::<TraceFormatError>())?;
    m.add("UnknownFormatError", py.get_type::<UnknownFormatError>())?;
    m.add("TraceIOError", py.get_type::<TraceIOError>())?;
    m.add("SqlError", py.get_type::<SqlError>())?;
    m.add("OutputError", py.get_type::<OutputError>())?;
    m.add("AnalysisError", py.get_type::<AnalysisError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    m.add_class::<Table>()?;
    m.add_class::<Capture>()?;
    m.add_class::<HtaTrace>()?;
    m.add_function(wrap_pyfunction!(load_capture, m)?)?;
    m.add_function(wrap_pyfunction!(investigate, m)?)?;
    m.add_function(wrap_pyfunction!(write_trace_with_counters, m)?)?;
    m.add_function(wrap_pyfunction!(write_overlaid_trace, m)?)?;
    m.add_function(wrap_pyfunction!(write_patterned_trace, m)?)?;
    m.add_function(wrap_pyfunction!(write_files, m)?)?;
    m.add_function(wrap_pyfunction!(callstack::kernel_sequence_roots, m)?)?;
    m.add_function(wrap_pyfunction!(callstack::call_stacks, m)?)?;
    m.add_function(wrap_pyfunction!(queue::queue_presorted, m)?)?;
    m.add_function(wrap_pyfunction!(queue::queue_series, m)?)?;
    m.add_function(wrap_pyfunction!(cpgraph::critical_path_data, m)?)?;
    m.add_function(wrap_pyfunction!(skip_stats, m)?)?;
    m.add_function(wrap_pyfunction!(roofline_json, m)?)?;
    m.add_function(wrap_pyfunction!(attribute_kernels, m)?)?;
    m.add_function(wrap_pyfunction!(compare_json, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add_function(wrap_pyfunction!(_sleep_for_test, m)?)?;
    Ok(())
}
