//! The typed view of one rank's frame that the analyses walk: GPU activities and host
//! events with integer-nanosecond times, taken from the frame's columns (so a frame read
//! back from the Parquet cache gives the same analyses).

use std::path::PathBuf;

use polars::prelude::*;
use trace_model::FastMap;

use crate::Error;
use crate::frame::RankFrame;
use crate::hta::{HtaKernelType, hta_kernel_type};

/// What kind of GPU activity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuKind {
    /// `cat: kernel`.
    Kernel,
    /// `cat: gpu_memcpy`.
    Memcpy,
    /// `cat: gpu_memset`.
    Memset,
}

/// A GPU activity (`kernel`, `gpu_memcpy`, `gpu_memset` with a stream).
#[derive(Debug, Clone)]
pub struct Gpu {
    /// Position of the event in `traceEvents`.
    pub event_index: i64,
    /// Id of the name in [`Timeline::names`] (see [`Timeline::name`]).
    pub name: u32,
    /// Kernel, memcpy or memset.
    pub kind: GpuKind,
    /// `args.device`, 0 when absent.
    pub device: i64,
    /// `args.stream`.
    pub stream: i64,
    /// Start, in integer nanoseconds (`ts_ns`).
    pub start: i64,
    /// Start + duration, in integer nanoseconds.
    pub end: i64,
    /// `args.correlation`: the id shared with the runtime call that launched it.
    pub correlation: Option<i64>,
    /// Index into `Timeline::host` of the launch with the same correlation id.
    pub launch: Option<usize>,
}

/// What a CUDA synchronisation event (`cat: cuda_sync`, recorded when the profiler runs
/// with `enable_cuda_sync_events`) waits for; Kineto names them by `cuda_sync_kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncKind {
    /// `cudaDeviceSynchronize`: the host waits for every stream of the device.
    Context,
    /// `cudaStreamSynchronize`: the host waits for one stream.
    Stream,
    /// `cudaEventSynchronize`: the host waits for the work before a `cudaEventRecord`.
    Event,
    /// `cudaStreamWaitEvent`: a stream waits for the work before a `cudaEventRecord`.
    StreamWaitEvent,
}

impl SyncKind {
    fn from_name(name: &str) -> Option<SyncKind> {
        Some(match name {
            "Context Sync" => SyncKind::Context,
            "Stream Sync" => SyncKind::Stream,
            "Event Sync" => SyncKind::Event,
            "Stream Wait Event" => SyncKind::StreamWaitEvent,
            _ => return None,
        })
    }
}

/// A CUDA synchronisation event.
#[derive(Debug, Clone)]
pub struct SyncEvent {
    /// Position of the event in `traceEvents`.
    pub event_index: i64,
    /// What it waits for (from the event's name).
    pub kind: SyncKind,
    /// `args.device`, 0 when absent.
    pub device: i64,
    /// The stream synchronised (`Stream Sync`) or made to wait (`Stream Wait Event`); −1
    /// when the event names none.
    pub stream: i64,
    /// Start, in integer nanoseconds.
    pub start: i64,
    /// Start + duration, in integer nanoseconds.
    pub end: i64,
    /// `args.correlation`: the id shared with the runtime call that issued it.
    pub correlation: Option<i64>,
    /// Index into `Timeline::host` of the runtime call with the same correlation id.
    pub runtime: Option<usize>,
    /// `Event Sync` / `Stream Wait Event`: the stream the awaited event was recorded on
    /// (`wait_on_stream`) and the correlation id of its `cudaEventRecord` call.
    pub wait_on_stream: Option<i64>,
    /// `Event Sync` / `Stream Wait Event`: the correlation id of the `cudaEventRecord`
    /// call (`wait_on_cuda_event_record_corr_id`).
    pub wait_on_record: Option<i64>,
}

/// Kineto host categories the analyses tell apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostCat {
    /// `cat: cpu_op` (or `Operator`): a framework operator.
    CpuOp,
    /// `cat: cuda_runtime` (or `Runtime`): a CUDA runtime call such as `cudaLaunchKernel`.
    Runtime,
    /// `cat: cuda_driver`: a CUDA driver call such as `cuLaunchKernel`.
    Driver,
    /// `cat: user_annotation`: a `record_function` range, `ProfilerStep#N` among them.
    Annotation,
    /// Any other host category (`python_function`, …).
    Other,
}

/// A complete (`ph: X`) host event.
#[derive(Debug, Clone)]
pub struct Host {
    /// Position of the event in `traceEvents`.
    pub event_index: i64,
    /// Id of the name in [`Timeline::names`] (see [`Timeline::name`]).
    pub name: u32,
    /// Its Kineto category.
    pub cat: HostCat,
    /// Interned `pid/tid` text: the thread.
    pub thread: u32,
    /// Start, in integer nanoseconds.
    pub start: i64,
    /// Start + duration, in integer nanoseconds.
    pub end: i64,
    /// `args.correlation`: on runtime and driver calls, the id shared with the GPU work
    /// they issue.
    pub correlation: Option<i64>,
}

/// One rank's events, as the analyses need them.
#[derive(Debug, Clone)]
pub struct Timeline {
    /// The trace file.
    pub path: PathBuf,
    /// The rank of the trace, when known ([`RankFrame::rank`](crate::RankFrame::rank)).
    pub rank: Option<i64>,
    /// Interned texts (event names and `pid/tid` threads), indexed by the `u32` ids.
    pub names: Vec<String>,
    /// GPU activities with a stream, sorted by (start, end, event index).
    pub gpu: Vec<Gpu>,
    /// Complete host events, in file order.
    pub host: Vec<Host>,
    /// CUDA synchronisation events, in file order.
    pub syncs: Vec<SyncEvent>,
    /// Every `ProfilerStep#N` host annotation: (N, start, end), sorted by start.
    pub steps: Vec<(i64, i64, i64)>,
    /// True when some event has a fractional-microsecond timestamp.
    pub fractional_us: bool,
    /// `ts` of the first event of the file (HTA compares launchless activities with it).
    pub first_event_ts: Option<i64>,
    /// HTA's kernel type of each text of [`Timeline::names`] (computed once: the analyses
    /// ask for it of every activity, and kernel names are long).
    hta_types: Vec<HtaKernelType>,
}

/// An Int64 column's values and validity, read by row without [`ChunkedArray::get`]'s
/// search for the chunk (the column is rechunked first).
#[derive(Clone, Copy)]
struct I64s<'a>(&'a <Int64Type as PolarsDataType>::Array);

impl<'a> I64s<'a> {
    fn of(col: &'a Int64Chunked) -> I64s<'a> {
        I64s(col.downcast_as_array())
    }

    /// Row `i`'s value; `None` when null or past the end.
    fn get(self, i: usize) -> Option<i64> {
        let v = *self.0.values().get(i)?;
        match self.0.validity() {
            Some(valid) if !valid.get_bit(i) => None,
            _ => Some(v),
        }
    }
}

/// A `pid` or `tid` column: integers as the frame has them, anything else as text.
enum Ids {
    Int(Int64Chunked),
    Str(StringChunked),
}

/// One row's `pid` or `tid`; shown as the column cast to text shows it (nothing when null).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Id<'a> {
    Int(i64),
    Str(&'a str),
    Null,
}

impl std::fmt::Display for Id<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Id::Int(i) => write!(f, "{i}"),
            Id::Str(s) => f.write_str(s),
            Id::Null => Ok(()),
        }
    }
}

impl Ids {
    /// The column, rechunked.
    fn of(
        s: Series,
        as_str: &impl Fn(Series) -> Result<StringChunked, Error>,
    ) -> Result<Ids, Error> {
        Ok(match s.i64() {
            Ok(i) => Ids::Int(i.rechunk().into_owned()),
            Err(_) => Ids::Str(as_str(s)?),
        })
    }

    fn rows(&self) -> IdRows<'_> {
        match self {
            Ids::Int(c) => IdRows::Int(I64s::of(c)),
            Ids::Str(c) => IdRows::Str(c.downcast_as_array()),
        }
    }
}

/// [`Ids`] read by row.
#[derive(Clone, Copy)]
enum IdRows<'a> {
    Int(I64s<'a>),
    Str(&'a <StringType as PolarsDataType>::Array),
}

impl<'a> IdRows<'a> {
    fn get(self, i: usize) -> Id<'a> {
        let id = match self {
            IdRows::Int(c) => c.get(i).map(Id::Int),
            IdRows::Str(c) => c.get(i).map(Id::Str),
        };
        id.unwrap_or(Id::Null)
    }
}

/// The `args` members [`Timeline::from_frame`] reads (as `args_<key>` columns), in the
/// order it binds them; a frame built for the analyses alone keeps only these.
pub(crate) const ARGS_READ: [&str; 5] = [
    "correlation",
    "stream",
    "device",
    "wait_on_stream",
    "wait_on_cuda_event_record_corr_id",
];

impl Timeline {
    /// The interned text with id `id` (a name or a thread).
    pub fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }

    /// HTA's kernel type of the text with id `id` ([`crate::hta::hta_kernel_type`]).
    pub fn hta_type(&self, id: u32) -> HtaKernelType {
        self.hta_types[id as usize]
    }

    /// Reads the columns of a frame.
    pub fn from_frame(frame: &RankFrame) -> Result<Timeline, Error> {
        let df = &frame.df;
        let ctx = frame.path.display().to_string();
        let need = |c: &str| -> Result<Series, Error> {
            df.column(c)
                .map(|c| c.as_materialized_series().clone())
                .map_err(|_| Error::Missing {
                    path: frame.path.clone(),
                    what: format!(
                        "the trace has no `{c}` field on any event, so it is not a Kineto trace"
                    ),
                })
        };
        // Every column is rechunked, so that rows are read straight from one array.
        let opt_i64 = |c: &str| -> Result<Option<Int64Chunked>, Error> {
            match df.column(c) {
                Ok(col) => Ok(Some(
                    col.as_materialized_series()
                        .cast(&DataType::Int64)
                        .map_err(Error::polars(ctx.clone()))?
                        .i64()
                        .map_err(Error::polars(ctx.clone()))?
                        .rechunk()
                        .into_owned(),
                )),
                Err(_) => Ok(None),
            }
        };
        let as_str = |s: Series| -> Result<StringChunked, Error> {
            Ok(s.cast(&DataType::String)
                .map_err(Error::polars(ctx.clone()))?
                .str()
                .map_err(Error::polars(ctx.clone()))?
                .rechunk()
                .into_owned())
        };
        let i64_of = |s: Series| -> Result<Int64Chunked, Error> {
            Ok(s.i64()
                .map_err(Error::polars(ctx.clone()))?
                .rechunk()
                .into_owned())
        };
        // The string columns are read with their iterators, in whatever chunks they come.
        let strs = |c: &str| -> Result<StringChunked, Error> {
            let s = need(c)?
                .cast(&DataType::String)
                .map_err(Error::polars(ctx.clone()))?;
            Ok(s.str().map_err(Error::polars(ctx.clone()))?.clone())
        };
        let name = strs("name")?;
        let cat = strs("cat")?;
        let ph = strs("ph")?;
        let pid = Ids::of(need("pid")?, &as_str)?;
        let tid = Ids::of(need("tid")?, &as_str)?;
        let ts = i64_of(need("ts_ns")?)?;
        let dur = i64_of(need("dur_ns")?)?;
        let index = i64_of(need("event_index")?)?;
        let [corr, stream, device, wait_on_stream, wait_on_record] = ARGS_READ;
        let arg = |key: &str| opt_i64(&format!("args_{key}"));
        let corr = arg(corr)?;
        let stream = arg(stream)?;
        let device = arg(device)?;
        let wait_on_stream = arg(wait_on_stream)?;
        let wait_on_record = arg(wait_on_record)?;
        let (pid, tid) = (pid.rows(), tid.rows());
        let (ts, dur, index) = (I64s::of(&ts), I64s::of(&dur), I64s::of(&index));
        fn rows(c: &Option<Int64Chunked>) -> Option<I64s<'_>> {
            c.as_ref().map(I64s::of)
        }
        let (corr, stream, device) = (rows(&corr), rows(&stream), rows(&device));
        let (wait_on_stream, wait_on_record) = (rows(&wait_on_stream), rows(&wait_on_record));

        let mut names: Vec<String> = Vec::new();
        let mut name_ids: FastMap<String, u32> = FastMap::default();
        let mut intern = |s: &str| -> u32 {
            if let Some(&id) = name_ids.get(s) {
                return id;
            }
            let id = names.len() as u32;
            names.push(s.to_owned());
            name_ids.insert(s.to_owned(), id);
            id
        };
        // The interned `pid/tid` of each thread seen, by the two values.
        let mut threads: FastMap<(Id<'_>, Id<'_>), u32> = FastMap::default();
        let mut last_thread = None;
        let mut gpu = Vec::new();
        let mut host = Vec::new();
        let mut syncs = Vec::new();
        let mut steps = Vec::new();
        let mut fractional_us = false;
        let first_event_ts = ts.get(0);
        let rows = name.iter().zip(cat.iter()).zip(ph.iter()).enumerate();
        for (i, ((name, cat), ph)) in rows {
            if ts.get(i).is_some_and(|t| t % 1000 != 0) {
                fractional_us = true;
            }
            if ph != Some("X") {
                continue;
            }
            let (Some(start), Some(d)) = (ts.get(i), dur.get(i)) else {
                continue;
            };
            // An end past the nanosecond range is no interval (the model's reader counts it
            // as an out-of-range diagnostic and leaves the event out too).
            let Some(end) = start.checked_add(d) else {
                continue;
            };
            let c = cat.unwrap_or("");
            let n = name.unwrap_or("");
            let get = |col: &Option<I64s<'_>>| col.and_then(|c| c.get(i));
            let kind = match c {
                "kernel" | "Kernel" => Some(GpuKind::Kernel),
                "gpu_memcpy" | "Memcpy" => Some(GpuKind::Memcpy),
                "gpu_memset" | "Memset" => Some(GpuKind::Memset),
                _ => None,
            };
            if c == "cuda_sync" {
                if let Some(kind) = SyncKind::from_name(n) {
                    syncs.push(SyncEvent {
                        event_index: index.get(i).unwrap_or(i as i64),
                        kind,
                        device: get(&device).unwrap_or(0),
                        stream: get(&stream).unwrap_or(-1),
                        start,
                        end,
                        correlation: get(&corr),
                        runtime: None,
                        wait_on_stream: get(&wait_on_stream).filter(|&s| s >= 0),
                        wait_on_record: get(&wait_on_record),
                    });
                }
                continue;
            }
            if let Some(kind) = kind {
                let Some(s) = get(&stream) else { continue };
                gpu.push(Gpu {
                    event_index: index.get(i).unwrap_or(i as i64),
                    name: intern(n),
                    kind,
                    device: get(&device).unwrap_or(0),
                    stream: s,
                    start,
                    end,
                    correlation: get(&corr),
                    launch: None,
                });
                continue;
            }
            if c.starts_with("gpu_") || c == "ac2g" {
                continue;
            }
            let hc = match c {
                "cpu_op" | "Operator" => HostCat::CpuOp,
                "cuda_runtime" | "Runtime" => HostCat::Runtime,
                "cuda_driver" => HostCat::Driver,
                "user_annotation" => HostCat::Annotation,
                _ => HostCat::Other,
            };
            if matches!(hc, HostCat::Annotation | HostCat::CpuOp)
                && let Some(k) = n.strip_prefix("ProfilerStep#")
                && let Ok(k) = k.trim().parse::<i64>()
            {
                steps.push((k, start, end));
            }
            // The name is interned before the thread, as the names' order has always been.
            let name = intern(n);
            let key = (pid.get(i), tid.get(i));
            // A thread's events mostly follow each other: the last one found is tried first.
            let thread = match last_thread {
                Some((k, thread)) if k == key => thread,
                _ => {
                    let (p, t) = key;
                    let thread = *threads
                        .entry(key)
                        .or_insert_with(|| intern(&format!("{p}/{t}")));
                    last_thread = Some((key, thread));
                    thread
                }
            };
            host.push(Host {
                event_index: index.get(i).unwrap_or(i as i64),
                name,
                cat: hc,
                thread,
                start,
                end,
                correlation: get(&corr),
            });
        }
        steps.sort_by_key(|s| (s.1, s.0));
        steps.dedup();
        let mut launch_of: FastMap<i64, usize> = FastMap::default();
        for (i, h) in host.iter().enumerate() {
            if matches!(h.cat, HostCat::Runtime | HostCat::Driver)
                && let Some(c) = h.correlation
            {
                launch_of.entry(c).or_insert(i);
            }
        }
        for g in &mut gpu {
            g.launch = g.correlation.and_then(|c| launch_of.get(&c).copied());
        }
        for s in &mut syncs {
            s.runtime = s.correlation.and_then(|c| launch_of.get(&c).copied());
        }
        // Keys end in the row's event index (unique): an in-place sort gives the one order.
        gpu.sort_unstable_by_key(|g| (g.start, g.end, g.event_index));
        let hta_types = names.iter().map(|n| hta_kernel_type(n)).collect();
        Ok(Timeline {
            path: frame.path.clone(),
            rank: frame.rank,
            hta_types,
            names,
            gpu,
            host,
            syncs,
            steps,
            fractional_us,
            first_event_ts,
        })
    }

    /// The timeline as Holistic Trace Analysis 0.5.0 sees it (`hta/common/trace_parser.py`,
    /// `hta/common/trace.py`): when any timestamp has a fraction of a microsecond, every
    /// start is rounded up and every end down to whole microseconds; with two or more
    /// ProfilerStep names, GPU activities whose launch is not at or before the last step's
    /// end are dropped (`include_last_profiler_step=True`).
    pub fn into_hta_view(self) -> Timeline {
        let mut t = self;
        if t.fractional_us {
            let up =
                |v: i64| v.div_euclid(1000) * 1000 + if v.rem_euclid(1000) > 0 { 1000 } else { 0 };
            let down = |v: i64| v.div_euclid(1000) * 1000;
            for g in &mut t.gpu {
                let (s, e) = (up(g.start), down(g.end));
                g.start = s;
                g.end = e;
            }
            for h in &mut t.host {
                let (s, e) = (up(h.start), down(h.end));
                h.start = s;
                h.end = e;
            }
            for y in &mut t.syncs {
                let (s, e) = (up(y.start), down(y.end));
                y.start = s;
                y.end = e;
            }
            t.first_event_ts = t.first_event_ts.map(up);
        }
        let distinct: std::collections::BTreeSet<i64> = t.steps.iter().map(|s| s.0).collect();
        if distinct.len() >= 2 {
            let last_end = t.steps.iter().map(|s| s.2).max().unwrap_or(i64::MAX);
            let host = &t.host;
            t.gpu
                .retain(|g| g.launch.is_some_and(|l| host[l].start <= last_end));
        }
        t.gpu
            .sort_unstable_by_key(|g| (g.start, g.end, g.event_index));
        t
    }
}
