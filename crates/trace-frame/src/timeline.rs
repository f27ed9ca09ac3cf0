//! [`Timeline`]s read from an events frame's columns (so a frame read back from the
//! Parquet cache gives the same analyses): the frame-side builder of the `timeline`
//! crate's type, until the HTA analyses read captures only (issue 40 item 4).

use polars::prelude::*;
use rayon::prelude::*;
use trace_model::{FastMap, Interner};

use crate::Error;
use crate::frame::RankFrame;
use timeline::{Gpu, GpuKind, Host, HostCat, HtaIntRanges, SyncEvent, SyncKind, Timeline};

/// An Int64 array's values and validity, read by row (one chunk of a column).
#[derive(Clone, Copy)]
struct I64s<'a>(&'a <Int64Type as PolarsDataType>::Array);

impl I64s<'_> {
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
    fn of(
        s: Series,
        as_str: &impl Fn(Series) -> Result<StringChunked, Error>,
    ) -> Result<Ids, Error> {
        Ok(match s.i64() {
            Ok(i) => Ids::Int(i.clone()),
            Err(_) => Ids::Str(as_str(s)?),
        })
    }

    fn chunk_lengths(&self) -> Vec<usize> {
        match self {
            Ids::Int(c) => c.chunk_lengths().collect(),
            Ids::Str(c) => c.chunk_lengths().collect(),
        }
    }

    fn rechunk(&mut self) {
        match self {
            Ids::Int(c) => *c = c.rechunk().into_owned(),
            Ids::Str(c) => *c = c.rechunk().into_owned(),
        }
    }

    /// Its chunks, each read by row.
    fn chunks(&self) -> Vec<IdRows<'_>> {
        match self {
            Ids::Int(c) => c.downcast_iter().map(|a| IdRows::Int(I64s(a))).collect(),
            Ids::Str(c) => c.downcast_iter().map(IdRows::Str).collect(),
        }
    }
}

/// A chunk of [`Ids`] read by row.
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

/// The columns [`Timeline::from_frame`] reads, typed, in the frame's chunks.
struct Columns {
    name: StringChunked,
    cat: StringChunked,
    ph: StringChunked,
    pid: Ids,
    tid: Ids,
    ts: Int64Chunked,
    dur: Int64Chunked,
    index: Int64Chunked,
    /// The `args_*` columns of [`ARGS_READ`], in its order; `None` when absent.
    args: [Option<Int64Chunked>; 5],
}

impl Columns {
    /// Every column in the same chunks: a frame's columns come so from its builder; any
    /// that do not are made one chunk each.
    fn aligned(mut self) -> Columns {
        let lengths = |c: &StringChunked| c.chunk_lengths().collect::<Vec<_>>();
        let ints = |c: &Int64Chunked| c.chunk_lengths().collect::<Vec<_>>();
        let first = lengths(&self.name);
        let alike = lengths(&self.cat) == first
            && lengths(&self.ph) == first
            && self.pid.chunk_lengths() == first
            && self.tid.chunk_lengths() == first
            && [&self.ts, &self.dur, &self.index]
                .iter()
                .all(|c| ints(c) == first)
            && self.args.iter().flatten().all(|c| ints(c) == first);
        if !alike {
            for c in [&mut self.name, &mut self.cat, &mut self.ph] {
                *c = c.rechunk().into_owned();
            }
            self.pid.rechunk();
            self.tid.rechunk();
            let ints = [&mut self.ts, &mut self.dur, &mut self.index];
            for c in ints.into_iter().chain(self.args.iter_mut().flatten()) {
                *c = c.rechunk().into_owned();
            }
        }
        self
    }

    /// Each chunk's arrays, read by row (the columns are [`Columns::aligned`]).
    fn chunks(&self) -> Vec<Chunk<'_>> {
        fn ints(c: &Int64Chunked) -> Vec<I64s<'_>> {
            c.downcast_iter().map(I64s).collect()
        }
        let (pid, tid) = (self.pid.chunks(), self.tid.chunks());
        let (ts, dur, index) = (ints(&self.ts), ints(&self.dur), ints(&self.index));
        let args = self.args.each_ref().map(|c| c.as_ref().map(ints));
        let texts = self.name.downcast_iter().zip(self.cat.downcast_iter());
        let mut first = 0;
        (texts.zip(self.ph.downcast_iter()).enumerate())
            .map(|(k, ((name, cat), ph))| {
                let chunk = Chunk {
                    first,
                    name,
                    cat,
                    ph,
                    pid: pid[k],
                    tid: tid[k],
                    ts: ts[k],
                    dur: dur[k],
                    index: index[k],
                    args: args.each_ref().map(|c| c.as_ref().map(|c| c[k])),
                };
                first += name.len();
                chunk
            })
            .collect()
    }
}

/// One chunk of [`Columns`]: its arrays, and the number of its first row in the frame.
struct Chunk<'a> {
    first: usize,
    name: &'a <StringType as PolarsDataType>::Array,
    cat: &'a <StringType as PolarsDataType>::Array,
    ph: &'a <StringType as PolarsDataType>::Array,
    pid: IdRows<'a>,
    tid: IdRows<'a>,
    ts: I64s<'a>,
    dur: I64s<'a>,
    index: I64s<'a>,
    args: [Option<I64s<'a>>; 5],
}

/// What a run of chunks gives: its ids are of its own `names`, in the order the run first
/// saw each text.
struct RowsRead {
    names: Interner,
    gpu: Vec<Gpu>,
    stream_ops: Vec<Gpu>,
    host: Vec<Host>,
    syncs: Vec<SyncEvent>,
    steps: Vec<(i64, i64, i64)>,
    fractional_us: bool,
    ranges: HtaIntRanges,
}

/// The fewest rows [`Timeline::from_frame`] gives a thread of their own.
const MIN_PART_ROWS: usize = 32_768;

/// The `args` members [`Timeline::from_frame`] reads (as `args_<key>` columns), in the
/// order it binds them; a frame built for the analyses alone keeps only these.
pub(crate) const ARGS_READ: [&str; 5] = [
    "correlation",
    "stream",
    "device",
    "wait_on_stream",
    "wait_on_cuda_event_record_corr_id",
];

/// The float `args` members [`Timeline::from_frame`] reads besides [`ARGS_READ`], by
/// event (Kineto's memcpy/memset `memory bandwidth (GB/s)`, which HTA's memory-bandwidth
/// counters sum); kept in [`Timeline::memory_bw`].
pub(crate) const ARGS_FLOAT_READ: [&str; 1] = ["memory bandwidth (GB/s)"];

/// The non-null values of the float column `args_<key>` by event index (empty when the
/// frame has no such column).
fn float_args(df: &DataFrame, key: &str, ctx: &str) -> Result<FastMap<i64, f64>, Error> {
    let mut out = FastMap::default();
    let (Ok(col), Ok(index)) = (df.column(&format!("args_{key}")), df.column("event_index")) else {
        return Ok(out);
    };
    let values = col
        .as_materialized_series()
        .cast(&DataType::Float64)
        .map_err(Error::polars(ctx.to_owned()))?;
    let values = values.f64().map_err(Error::polars(ctx.to_owned()))?;
    let index = index.i64().map_err(Error::polars(ctx.to_owned()))?;
    for (i, v) in index.iter().zip(values.iter()) {
        if let (Some(i), Some(v)) = (i, v) {
            out.insert(i, v);
        }
    }
    Ok(out)
}

/// The rows of `chunks`, in order.
fn read_rows(chunks: &[Chunk<'_>]) -> RowsRead {
    let mut names = Interner::new();
    let mut intern = |s: &str| names.intern(s).index() as u32;
    // The interned `pid/tid` of each thread seen, by the two values.
    let mut threads: FastMap<(Id<'_>, Id<'_>), u32> = FastMap::default();
    let mut last_thread = None;
    let mut gpu = Vec::new();
    let mut stream_ops = Vec::new();
    let mut host = Vec::new();
    let mut syncs = Vec::new();
    let mut steps = Vec::new();
    let mut fractional_us = false;
    let mut ranges = HtaIntRanges::default();
    for chunk in chunks {
        let Chunk {
            first,
            pid,
            tid,
            ts,
            dur,
            index,
            args: [corr, stream, device, wait_on_stream, wait_on_record],
            ..
        } = *chunk;
        let rows = chunk.name.iter().zip(chunk.cat.iter()).zip(chunk.ph.iter());
        for (j, ((name, cat), ph)) in rows.enumerate() {
            if ts.get(j).is_some_and(|t| t % 1000 != 0) {
                fractional_us = true;
            }
            if ph != Some("X") {
                continue;
            }
            let (Some(start), Some(d)) = (ts.get(j), dur.get(j)) else {
                continue;
            };
            // An end past the nanosecond range is no interval (the model's reader counts it
            // as an out-of-range diagnostic and leaves the event out too).
            let Some(end) = start.checked_add(d) else {
                continue;
            };
            let c = cat.unwrap_or("");
            let n = name.unwrap_or("");
            let get = |col: Option<I64s<'_>>| col.and_then(|c| c.get(j));
            let event_index = index.get(j).unwrap_or((first + j) as i64);
            // HTA's parser keeps every event with a category but `python_function` and
            // `Trace`.
            let hta_keeps = !c.is_empty() && c != "python_function" && c != "Trace";
            if hta_keeps {
                ranges.add(get(stream), get(corr), event_index);
            }
            let kind = gpu_kind(c);
            if c == "cuda_sync" {
                if let Some(kind) = SyncKind::from_name(n) {
                    syncs.push(SyncEvent {
                        event_index,
                        kind,
                        device: get(device).unwrap_or(0),
                        stream: get(stream).unwrap_or(-1),
                        start,
                        end,
                        correlation: get(corr),
                        runtime: None,
                        wait_on_stream: get(wait_on_stream).filter(|&s| s >= 0),
                        wait_on_record: get(wait_on_record),
                    });
                }
                continue;
            }
            if let Some(kind) = kind {
                let Some(s) = get(stream) else { continue };
                gpu.push(Gpu {
                    event_index,
                    name: intern(n),
                    kind,
                    device: get(device).unwrap_or(0),
                    stream: s,
                    start,
                    end,
                    correlation: get(corr),
                    launch: None,
                });
                continue;
            }
            // HTA counts as GPU work any event it keeps with a stream and a correlation id.
            if hta_keeps
                && let (Some(s), Some(k)) = (get(stream), get(corr))
                && s >= 0
                && k >= 0
            {
                stream_ops.push(Gpu {
                    event_index,
                    name: intern(n),
                    kind: GpuKind::Other,
                    device: get(device).unwrap_or(0),
                    stream: s,
                    start,
                    end,
                    correlation: Some(k),
                    launch: None,
                });
            }
            if c.starts_with("gpu_") || c == "ac2g" {
                continue;
            }
            let hc = host_cat(c);
            if matches!(hc, HostCat::Annotation | HostCat::CpuOp)
                && let Some(k) = n.strip_prefix("ProfilerStep#")
                && let Ok(k) = k.trim().parse::<i64>()
            {
                steps.push((k, start, end));
            }
            // The name is interned before the thread, as the names' order has always been.
            let name = intern(n);
            let key = (pid.get(j), tid.get(j));
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
                event_index,
                name,
                cat: hc,
                thread,
                start,
                end,
                correlation: get(corr),
            });
        }
    }
    RowsRead {
        names,
        gpu,
        stream_ops,
        host,
        syncs,
        steps,
        fractional_us,
        ranges,
    }
}

/// The GPU activity kind of a Kineto (or HTA-style) category, if it is one.
fn gpu_kind(cat: &str) -> Option<GpuKind> {
    match cat {
        "kernel" | "Kernel" => Some(GpuKind::Kernel),
        "gpu_memcpy" | "Memcpy" => Some(GpuKind::Memcpy),
        "gpu_memset" | "Memset" => Some(GpuKind::Memset),
        _ => None,
    }
}

/// The host category of a Kineto (or HTA-style) category.
fn host_cat(cat: &str) -> HostCat {
    match cat {
        "cpu_op" | "Operator" => HostCat::CpuOp,
        "cuda_runtime" | "Runtime" => HostCat::Runtime,
        "cuda_driver" => HostCat::Driver,
        "user_annotation" => HostCat::Annotation,
        _ => HostCat::Other,
    }
}

/// Runs of `chunks` of about equal rows, at most `parts` of them and each of at least
/// `min_rows` rows (the last may have fewer); one run when there are few rows.
fn runs<'c, 'a>(chunks: &'c [Chunk<'a>], parts: usize, min_rows: usize) -> Vec<&'c [Chunk<'a>]> {
    let rows: usize = chunks.iter().map(|c| c.name.len()).sum();
    let parts = parts.clamp(1, rows.div_ceil(min_rows.max(1)).max(1));
    let per_run = rows.div_ceil(parts).max(1);
    let mut out = Vec::with_capacity(parts);
    let (mut start, mut in_run) = (0, 0);
    for (k, c) in chunks.iter().enumerate() {
        in_run += c.name.len();
        if in_run >= per_run {
            out.push(&chunks[start..=k]);
            (start, in_run) = (k + 1, 0);
        }
    }
    if start < chunks.len() || out.is_empty() {
        out.push(&chunks[start..]);
    }
    out
}

/// Reading a [`Timeline`] from an events frame (trace-frame's builder of the type).
pub trait FromFrame: Sized {
    /// Reads the columns of a frame (runs of its chunks side by side on rayon's pool).
    fn from_frame(frame: &RankFrame) -> Result<Self, Error>;
}

impl FromFrame for Timeline {
    fn from_frame(frame: &RankFrame) -> Result<Timeline, Error> {
        from_frame_in(frame, rayon::current_num_threads(), MIN_PART_ROWS)
    }
}

/// [`Timeline::from_frame`] in at most `parts` runs of chunks, each of at least
/// `min_rows` rows; the timeline is the same for any number.
fn from_frame_in(frame: &RankFrame, parts: usize, min_rows: usize) -> Result<Timeline, Error> {
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
    let opt_i64 = |c: &str| -> Result<Option<Int64Chunked>, Error> {
        match df.column(c) {
            Ok(col) => Ok(Some(
                col.as_materialized_series()
                    .cast(&DataType::Int64)
                    .map_err(Error::polars(ctx.clone()))?
                    .i64()
                    .map_err(Error::polars(ctx.clone()))?
                    .clone(),
            )),
            Err(_) => Ok(None),
        }
    };
    let as_str = |s: Series| -> Result<StringChunked, Error> {
        Ok(s.cast(&DataType::String)
            .map_err(Error::polars(ctx.clone()))?
            .str()
            .map_err(Error::polars(ctx.clone()))?
            .clone())
    };
    let i64_of = |s: Series| -> Result<Int64Chunked, Error> {
        Ok(s.i64().map_err(Error::polars(ctx.clone()))?.clone())
    };
    let strs = |c: &str| as_str(need(c)?);
    let [corr, stream, device, wait_on_stream, wait_on_record] = ARGS_READ;
    let arg = |key: &str| opt_i64(&format!("args_{key}"));
    let columns = Columns {
        name: strs("name")?,
        cat: strs("cat")?,
        ph: strs("ph")?,
        pid: Ids::of(need("pid")?, &as_str)?,
        tid: Ids::of(need("tid")?, &as_str)?,
        ts: i64_of(need("ts_ns")?)?,
        dur: i64_of(need("dur_ns")?)?,
        index: i64_of(need("event_index")?)?,
        args: [
            arg(corr)?,
            arg(stream)?,
            arg(device)?,
            arg(wait_on_stream)?,
            arg(wait_on_record)?,
        ],
    }
    .aligned();
    let chunks = columns.chunks();
    let first_event_ts = chunks.iter().find(|c| c.name.len() > 0);
    let first_event_ts = first_event_ts.and_then(|c| c.ts.get(0));
    // Runs of chunks are read side by side and put together in order (when the other
    // threads are busy, with other ranks of a directory, one reads them in turn).
    let read: Vec<RowsRead> = runs(&chunks, parts, min_rows)
        .into_par_iter()
        .map(read_rows)
        .collect();
    let mut names = Interner::new();
    let (mut gpu, mut host, mut syncs, mut steps) = (vec![], vec![], vec![], vec![]);
    let mut stream_ops = Vec::new();
    let mut fractional_us = false;
    let mut hta_int_ranges = HtaIntRanges::default();
    for r in read {
        // A run's texts in the order it first saw them: the ids of the whole frame read
        // in order (each text's first row is in the first run that has it).
        let id: Vec<u32> = (r.names.strings())
            .map(|s| names.intern(s).index() as u32)
            .collect();
        gpu.extend(r.gpu.into_iter().map(|g| Gpu {
            name: id[g.name as usize],
            ..g
        }));
        stream_ops.extend(r.stream_ops.into_iter().map(|g| Gpu {
            name: id[g.name as usize],
            ..g
        }));
        host.extend(r.host.into_iter().map(|h| Host {
            name: id[h.name as usize],
            thread: id[h.thread as usize],
            ..h
        }));
        syncs.extend(r.syncs);
        steps.extend(r.steps);
        fractional_us |= r.fractional_us;
        hta_int_ranges = hta_int_ranges.merge(r.ranges);
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
    for g in &mut stream_ops {
        g.launch = g.correlation.and_then(|c| launch_of.get(&c).copied());
    }
    // Keys end in the row's event index (unique): an in-place sort gives the one order.
    gpu.sort_unstable_by_key(|g| (g.start, g.end, g.event_index));
    let names: Vec<String> = names.strings().map(str::to_owned).collect();
    let memory_bw = float_args(df, ARGS_FLOAT_READ[0], &ctx)?;
    let mut t = Timeline::new(frame.path.clone(), frame.rank, names);
    t.memory_bw = memory_bw;
    t.hta_int_ranges = hta_int_ranges;
    t.gpu = gpu;
    t.stream_ops = stream_ops;
    t.host = host;
    t.syncs = syncs;
    t.steps = steps;
    t.fractional_us = fractional_us;
    t.first_event_ts = first_event_ts;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{Columns as Read, read_frame_columns};

    /// `frame` with its rows in chunks of `rows` rows (every column alike).
    fn in_chunks(frame: &RankFrame, rows: usize) -> RankFrame {
        let df = &frame.df;
        let mut out = df.slice(0, rows.min(df.height()));
        let mut at = rows;
        while at < df.height() {
            out.vstack_mut(&df.slice(at as i64, rows))
                .expect("slices of one frame stack");
            at += rows;
        }
        RankFrame {
            df: out,
            ..frame.clone()
        }
    }

    /// The timeline read in runs of at most `parts`, shown with `{:?}` (or the error).
    fn read_in(frame: &RankFrame, parts: usize, min_rows: usize) -> String {
        match from_frame_in(frame, parts, min_rows) {
            Ok(t) => format!("{t:?}"),
            Err(e) => format!("error: {e}"),
        }
    }

    /// Runs of chunks read side by side give the timeline of the frame read in one piece:
    /// the same names and ids (first seen first, threads among them), activities, steps
    /// and flags. On every Kineto fixture cut into chunks of 1 and 3 rows, read in up to 2,
    /// 3 and as many runs as rows; with one column in other chunks than the rest; and on
    /// every shared PyTorch trace as read (a chunk per file chunk) in 3 runs.
    #[test]
    fn runs_read_apart_give_the_timeline_of_one_read() {
        let root = test_support::workspace_root().join("testdata/chrome");
        let mut files = test_support::json_files(&root.join("ok"));
        files.extend(test_support::json_files(&root.join("odd")));
        let mut compared = 0;
        for path in &files {
            let Ok(frame) = read_frame_columns(path, 1, Read::All) else {
                continue;
            };
            let whole = read_in(&frame, 1, 1);
            for rows in [1, 3] {
                let chunked = in_chunks(&frame, rows);
                for parts in [1, 2, 3, frame.df.height().max(1)] {
                    assert_eq!(
                        read_in(&chunked, parts, 1),
                        whole,
                        "{}: chunks of {rows} rows, {parts} runs",
                        path.display()
                    );
                }
                // One column in one chunk, the others in many: all are read as one chunk.
                let mut odd = chunked.clone();
                if let Ok(name) = frame.df.column("name") {
                    odd.df.with_column(name.clone()).expect("same height");
                    assert_eq!(read_in(&odd, 3, 1), whole, "{}", path.display());
                }
            }
            compared += 1;
        }
        assert!(compared >= 10, "{compared} fixtures read");
        let Some(set) = test_support::real_traces("runs_read_apart_give_the_timeline_of_one_read")
        else {
            return;
        };
        for trace in &set.kineto {
            let frame = read_frame_columns(&trace.path, 2, Read::Analyses)
                .unwrap_or_else(|e| panic!("{}: {e}", trace.path.display()));
            assert_eq!(
                read_in(&frame, 3, 1),
                read_in(&frame, 1, 1),
                "{}",
                trace.path.display()
            );
        }
    }
}
