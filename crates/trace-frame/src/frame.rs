//! Events → DataFrame: one row per element of `traceEvents`, streamed from chrome-reader's
//! raw layer, with `args` split into `args_<key>` columns without building a JSON value tree.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrome_reader::json::{skip_ws, value_end};
use chrome_reader::{Id, RawEvent};
use polars::prelude::*;
use polars_arrow::bitmap::{Bitmap, MutableBitmap};
use rayon::prelude::*;
use trace_model::{Capture, FastMap};

use crate::Error;

/// The events of one trace file.
#[derive(Debug, Clone)]
pub struct RankFrame {
    /// The trace file the frame was read from.
    pub path: PathBuf,
    /// `distributedInfo.rank`, else the number in the file name, else none.
    pub rank: Option<i64>,
    /// One row per event; see the crate docs for the columns.
    pub df: DataFrame,
}

impl RankFrame {
    /// Number of events (rows).
    pub fn event_count(&self) -> usize {
        self.df.height()
    }
}

/// Reads the trace file at `path` (plain or gzip JSON) into a frame, parsing with
/// chrome-reader's default number of threads.
pub fn read_frame(path: &Path) -> Result<RankFrame, Error> {
    read_frame_with(path, chrome_reader::default_threads())
}

/// [`read_frame`] with `threads` parsing threads (1: parse on the reading thread, as
/// callers that already read several files at once want). The frame is the same.
pub fn read_frame_with(path: &Path, threads: usize) -> Result<RankFrame, Error> {
    read_frame_columns(path, threads, Columns::All)
}

/// Which columns a frame gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Columns {
    /// Every column of the crate docs: for SQL, the cache and export.
    All,
    /// Only those the analyses read ([`crate::Timeline::from_frame`] and the summary):
    /// `name`, `cat`, `ph`, `pid`, `tid`, `ts_ns`, `dur_ns`, `event_index`, `rank` and
    /// the `args_*` of [`crate::timeline::ARGS_READ`]. The rows are the same.
    Analyses,
}

impl Columns {
    /// Whether the `args` member `key` gets a column.
    fn keeps_arg(self, key: &str) -> bool {
        self == Columns::All || crate::timeline::ARGS_READ.contains(&key)
    }

    /// Whether the `args` text may hold a member that gets a column: `false` only when it
    /// cannot (no escape, and none of [`ARGS_NEEDLES`] in it), which spares the member scan
    /// of most events' `args` in the analyses' frame (CPU ops, Python calls).
    fn may_keep_args(self, args: &str) -> bool {
        if self == Columns::All {
            return true;
        }
        let text = args.as_bytes();
        // Every key of `ARGS_READ` contains one of these (a test checks it).
        memchr::memchr(b'\\', text).is_some() || ARGS_NEEDLES.iter().any(|n| n.find(text).is_some())
    }
}

/// Texts one of which every key of [`crate::timeline::ARGS_READ`] contains.
static ARGS_NEEDLES: std::sync::LazyLock<[memchr::memmem::Finder<'static>; 4]> =
    std::sync::LazyLock::new(|| {
        ["stream", "device", "correlation", "corr_id"].map(memchr::memmem::Finder::new)
    });

/// [`read_frame_with`] with only the columns `columns` names.
pub(crate) fn read_frame_columns(
    path: &Path,
    threads: usize,
    columns: Columns,
) -> Result<RankFrame, Error> {
    let (frame, ()) = frame_from(
        path,
        columns,
        // A plain file is mapped, gzip inflated on the chunk reader's thread.
        |new_part, apply| chrome_reader::read_file_events_chunked(path, threads, new_part, apply),
        |top| top,
        |frame| frame,
        drop,
    )?;
    Ok(frame)
}

/// [`read_frame_columns`] and, from the same parse, the model's capture of the file (or
/// the error a load of it alone would give): `with_frame` is given the finished frame
/// while, beside it, the capture is finished and given to `with_capture`.
pub(crate) fn read_frame_and_capture<U: Send, T: Send>(
    path: &Path,
    threads: usize,
    columns: Columns,
    with_frame: impl FnOnce(RankFrame) -> U + Send,
    with_capture: impl FnOnce(Result<Capture, chrome_reader::Error>) -> T + Send,
) -> Result<(U, T), Error> {
    frame_from(
        path,
        columns,
        |new_part, apply| chrome_reader::load_with_sink(path, threads, new_part, apply),
        chrome_reader::PendingCapture::top,
        with_frame,
        |pending| with_capture(pending.finish()),
    )
}

/// A frame from `read`, which hands each chunk's columns to `apply` in file order and
/// returns `R` (whose document members `top` gives): the frame is finished and given to
/// `with_frame` while `beside(R)` runs.
fn frame_from<R: Send, T: Send, U: Send>(
    path: &Path,
    columns: Columns,
    read: impl FnOnce(
        &(dyn Fn() -> Builder + Sync),
        &mut dyn FnMut(Builder, usize) -> Result<(), chrome_reader::Error>,
    ) -> Result<R, chrome_reader::Error>,
    top: impl Fn(&R) -> &chrome_reader::TopLevel,
    with_frame: impl FnOnce(RankFrame) -> U + Send,
    beside: impl FnOnce(R) -> T + Send,
) -> Result<(U, T), Error> {
    let mut b = Builder::new(path, columns);
    // Each chunk of the file is parsed into columns of its own on a parsing thread; the
    // chunks' columns are appended in file order here.
    let mut failed = None;
    // A chunk's columns start with room for as many rows as the last chunk merged had, and
    // a little more (chunks are cut at about the same size): they seldom grow and copy.
    let rows_hint = std::sync::atomic::AtomicUsize::new(0);
    let b_path: Arc<Path> = Arc::from(path);
    let new_part = || {
        let rows = rows_hint.load(std::sync::atomic::Ordering::Relaxed);
        Builder::with_rows(b_path.clone(), columns, rows + rows / 8)
    };
    let read = read(&new_part, &mut |part, base| {
        rows_hint.store(part.index.len(), std::sync::atomic::Ordering::Relaxed);
        if let Err(e) = b.append(part, base) {
            failed.get_or_insert(e);
        }
        Ok(())
    })?;
    if let Some(e) = failed {
        return Err(Error::polars(path.display().to_string())(e));
    }
    let rank = top(&read)
        .get("distributedInfo")
        .and_then(|raw| serde_json::from_str::<DistributedInfo>(raw.get()).ok())
        .and_then(|d| d.rank)
        .or_else(|| chrome_reader::rank_from_file_name(path));
    let finish = || -> Result<U, Error> {
        let df = b
            .finish(rank)
            .map_err(Error::polars(path.display().to_string()))?;
        Ok(with_frame(RankFrame {
            path: path.to_path_buf(),
            rank,
            df,
        }))
    };
    let (frame, other) = rayon::join(finish, || beside(read));
    Ok((frame?, other))
}

/// The trace files a path stands for: the file itself, or the `*.json(.gz)` files of a
/// directory, sorted by name.
pub fn trace_paths(path: &Path) -> Result<Vec<PathBuf>, Error> {
    if path.is_dir() {
        Ok(chrome_reader::trace_files(path)?)
    } else {
        Ok(vec![path.to_path_buf()])
    }
}

/// One frame of several ranks (their `rank` columns tell them apart), rows in rank order.
pub fn concat_frames(frames: &[RankFrame]) -> Result<DataFrame, Error> {
    let lazy: Vec<LazyFrame> = frames.iter().map(|f| f.df.clone().lazy()).collect();
    if lazy.is_empty() {
        return Err(Error::Missing {
            path: PathBuf::new(),
            what: "no trace files".into(),
        });
    }
    let args = UnionArgs {
        diagonal: true,
        to_supertypes: true,
        ..Default::default()
    };
    concat(lazy, args)
        .and_then(|lf| lf.collect())
        .map_err(Error::polars("joining the ranks' frames"))
}

#[derive(serde::Deserialize)]
struct DistributedInfo {
    rank: Option<i64>,
}

/// A decoded scalar of `args` (or of `pid`/`tid`/`id`). A string is the range `start..end`
/// of the text buffer that holds it (the column's, or the event's [`EventArgs::text`]).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Val {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(usize, usize),
}

/// The values one column has seen, with the rows they are on (increasing), and the text of
/// its string values end to end.
#[derive(Debug, Default)]
struct Sparse {
    rows: Vec<u32>,
    vals: Vec<Val>,
    text: String,
    ints: bool,
    floats: bool,
    bools: bool,
    strs: bool,
}

impl Sparse {
    fn with_capacity(rows: usize) -> Sparse {
        Sparse {
            rows: Vec::with_capacity(rows),
            vals: Vec::with_capacity(rows),
            ..Sparse::default()
        }
    }

    /// Adds a value that is not a string.
    fn push(&mut self, row: u32, v: Val) {
        match v {
            Val::Int(_) => self.ints = true,
            Val::Float(_) => self.floats = true,
            Val::Bool(_) => self.bools = true,
            Val::Str(..) => unreachable!("strings go through push_str"),
        }
        self.rows.push(row);
        self.vals.push(v);
    }

    fn push_str(&mut self, row: u32, s: &str) {
        let start = self.text.len();
        self.text.push_str(s);
        self.strs = true;
        self.rows.push(row);
        self.vals.push(Val::Str(start, self.text.len()));
    }

    /// Adds `v`, whose string (if it is one) is in `text`.
    fn push_from(&mut self, row: u32, v: Val, text: &str) {
        match v {
            Val::Str(s, e) => self.push_str(row, &text[s..e]),
            v => self.push(row, v),
        }
    }

    /// Appends `other`, whose rows count from `row0` here.
    fn append(&mut self, other: &Sparse, row0: u32) {
        let text0 = self.text.len();
        self.text.push_str(&other.text);
        self.rows.extend(other.rows.iter().map(|r| r + row0));
        self.vals.extend(other.vals.iter().map(|&v| match v {
            Val::Str(s, e) => Val::Str(s + text0, e + text0),
            v => v,
        }));
        self.ints |= other.ints;
        self.floats |= other.floats;
        self.bools |= other.bools;
        self.strs |= other.strs;
    }

    /// The value of each row (the last one where an event repeated a key), `None` where
    /// the row has none.
    fn per_row(&self, height: usize) -> impl Iterator<Item = Option<Val>> + '_ {
        let mut j = 0;
        (0..height).map(move |r| {
            let mut v = None;
            while j < self.rows.len() && self.rows[j] as usize == r {
                v = Some(self.vals[j]);
                j += 1;
            }
            v
        })
    }

    /// A value per row, `None` where the row has none or `f` gives none.
    fn dense<T: Copy + Default>(&self, height: usize, f: impl Fn(Val) -> Option<T>) -> Nullable<T> {
        let mut out = Nullable::with_capacity(height);
        for v in self.per_row(height) {
            out.push(v.and_then(&f));
        }
        out
    }

    /// Uniform integers stay Int64, numbers Float64, booleans Boolean; a mixed column
    /// becomes strings (numbers by their value's text).
    fn into_column(self, name: &str, height: usize) -> Column {
        let name = PlSmallStr::from(name);
        let kinds = [self.ints || self.floats, self.bools, self.strs]
            .iter()
            .filter(|k| **k)
            .count();
        // Straight from the sparse values into the column's buffers.
        if kinds == 1 && !self.floats && self.ints {
            let rows = self.dense(height, |v| match v {
                Val::Int(i) => Some(i),
                _ => None,
            });
            return rows.into_column(&name);
        }
        if kinds == 1 && (self.ints || self.floats) {
            let rows = self.dense(height, |v| match v {
                Val::Int(i) => Some(i as f64),
                Val::Float(f) => Some(f),
                _ => None,
            });
            return rows.into_column(&name);
        }
        if kinds == 1 && self.bools {
            let rows = self.per_row(height).map(|v| match v {
                Some(Val::Bool(b)) => Some(b),
                _ => None,
            });
            return BooleanChunked::from_iter_options(name, rows).into_column();
        }
        let mut out = StringChunkedBuilder::new(name, height);
        let mut num = String::new();
        // The integer whose text `num` holds: ids repeat row after row (pid, tid).
        let mut num_of = None;
        for v in self.per_row(height) {
            use std::fmt::Write;
            let s = match v {
                None => {
                    out.append_null();
                    continue;
                }
                Some(Val::Str(s, e)) => &self.text[s..e],
                Some(Val::Int(i)) => {
                    if num_of != Some(i) {
                        num.clear();
                        let _ = write!(num, "{i}");
                        num_of = Some(i);
                    }
                    &num
                }
                Some(Val::Float(f)) => {
                    num.clear();
                    let _ = write!(num, "{f}");
                    num_of = None;
                    &num
                }
                Some(Val::Bool(b)) => {
                    if b {
                        "true"
                    } else {
                        "false"
                    }
                }
            };
            out.append_value(s);
        }
        out.finish().into_column()
    }
}

/// A numeric column being built: a value per row (0 where null) and which are valid, as
/// polars keeps them, so that the column takes the values without a copy.
#[derive(Default)]
struct Nullable<T> {
    values: Vec<T>,
    valid: MutableBitmap,
}

impl<T: Copy + Default> Nullable<T> {
    fn with_capacity(rows: usize) -> Nullable<T> {
        Nullable {
            values: Vec::with_capacity(rows),
            valid: MutableBitmap::with_capacity(rows),
        }
    }

    fn push(&mut self, v: Option<T>) {
        self.values.push(v.unwrap_or_default());
        self.valid.push(v.is_some());
    }

    fn append(&mut self, other: &Nullable<T>) {
        self.values.extend_from_slice(&other.values);
        self.valid
            .extend_from_slice(other.valid.as_slice(), 0, other.valid.len());
    }

    /// The values, and the validity when some are null.
    fn into_parts(self) -> (Vec<T>, Option<Bitmap>) {
        let valid = (self.valid.unset_bits() > 0).then(|| self.valid.into());
        (self.values, valid)
    }
}

impl Nullable<i64> {
    fn into_column(self, name: &str) -> Column {
        let (values, valid) = self.into_parts();
        Int64Chunked::from_vec_validity(name.into(), values, valid).into_column()
    }
}

impl Nullable<f64> {
    fn into_column(self, name: &str) -> Column {
        let (values, valid) = self.into_parts();
        Float64Chunked::from_vec_validity(name.into(), values, valid).into_column()
    }
}

/// The frame's columns, for the whole file or for one chunk of it (a chunk's rows and
/// event indices count from its first event).
struct Builder {
    /// The file, named in the error of an event that cannot be read.
    path: Arc<Path>,
    columns: Columns,
    index: Vec<i64>,
    name: Strings,
    cat: Strings,
    ph: Strings,
    ts: Nullable<f64>,
    dur: Nullable<f64>,
    ts_ns: Nullable<i64>,
    dur_ns: Nullable<i64>,
    pid: Sparse,
    tid: Sparse,
    id: Sparse,
    keys: FastMap<Box<str>, usize>,
    /// The slot the `i`-th key of the last event with an `i`-th key went to: events of one
    /// kind list the same keys in the same order, so this usually saves the hash lookup.
    guess: Vec<usize>,
    args: Vec<(String, Sparse)>,
    /// The text of the `args` value being pushed.
    scratch: String,
}

/// A string column: built on the parsing thread, appended as a chunk of the whole.
enum Strings {
    Building(StringChunkedBuilder),
    Done(Option<StringChunked>),
}

impl Strings {
    fn with_capacity(name: &str, rows: usize) -> Strings {
        Strings::Building(StringChunkedBuilder::new(name.into(), rows))
    }

    fn push(&mut self, s: Option<&str>) {
        match self {
            Strings::Building(b) => b.append_option(s),
            Strings::Done(_) => unreachable!("a chunk's strings are pushed before it is done"),
        }
    }

    fn done(&mut self) {
        if let Strings::Building(b) = self {
            let b = std::mem::replace(b, StringChunkedBuilder::new(PlSmallStr::EMPTY, 0));
            *self = Strings::Done(Some(b.finish()));
        }
    }

    /// Appends a finished chunk's column.
    fn append(&mut self, mut other: Strings) -> PolarsResult<()> {
        other.done();
        self.done();
        let (Strings::Done(all), Strings::Done(Some(more))) = (self, other) else {
            unreachable!("both are done");
        };
        match all {
            Some(all) => all.append_owned(more),
            None => {
                *all = Some(more);
                Ok(())
            }
        }
    }

    /// The column, one chunk per chunk of the file unless `rechunk` (which copies every
    /// string once more).
    fn into_column(mut self, name: &str, rechunk: bool) -> Column {
        self.done();
        let Strings::Done(col) = self else {
            unreachable!("done");
        };
        let col = col.unwrap_or_else(|| StringChunked::full_null(PlSmallStr::EMPTY, 0));
        let col = if rechunk {
            col.rechunk().into_owned()
        } else {
            col
        };
        col.with_name(name.into()).into_column()
    }
}

impl Builder {
    fn new(path: &Path, columns: Columns) -> Builder {
        Builder::with_rows(Arc::from(path), columns, 0)
    }

    /// A builder with room for `rows` rows in its dense columns (and `pid`, `tid`).
    fn with_rows(path: Arc<Path>, columns: Columns, rows: usize) -> Builder {
        let all = columns == Columns::All;
        let floats = || Nullable::with_capacity(if all { rows } else { 0 });
        Builder {
            path,
            columns,
            index: Vec::with_capacity(rows),
            name: Strings::with_capacity("name", rows),
            cat: Strings::with_capacity("cat", rows),
            ph: Strings::with_capacity("ph", rows),
            ts: floats(),
            dur: floats(),
            ts_ns: Nullable::with_capacity(rows),
            dur_ns: Nullable::with_capacity(rows),
            pid: Sparse::with_capacity(rows),
            tid: Sparse::with_capacity(rows),
            id: Sparse::default(),
            keys: FastMap::default(),
            guess: Vec::new(),
            args: Vec::new(),
            scratch: String::new(),
        }
    }
}

/// A chunk's events, parsed on a parsing thread.
impl chrome_reader::EventSink for Builder {
    type Out = Builder;

    fn event(&mut self, ev: RawEvent<'_, &str>) -> Result<(), chrome_reader::Error> {
        self.push(&ev)
    }

    fn finish(mut self) -> Builder {
        self.name.done();
        self.cat.done();
        self.ph.done();
        self
    }
}

impl Builder {
    /// Appends the event's row; a `ts` or `dur` that is text but no number fails the file,
    /// as in every other reader.
    fn push(&mut self, ev: &RawEvent<'_, &str>) -> Result<(), chrome_reader::Error> {
        let nanos = |field: &str, n: Option<chrome_reader::Number<'_>>| match n {
            None => Ok(None),
            Some(n) => match n.micros_to_nanos() {
                Some(ns) => Ok(Some(ns)),
                None if n.is_numeric() => Ok(None),
                None => Err(ev.not_a_time(&self.path, field, n.text())),
            },
        };
        let (ts_ns, dur_ns) = (nanos("ts", ev.ts)?, nanos("dur", ev.dur)?);
        let row = self.index.len() as u32;
        self.index.push(ev.index as i64);
        self.name.push(ev.name.as_deref());
        self.cat.push(ev.cat.as_deref());
        self.ph.push(Some(&*ev.ph));
        let all = self.columns == Columns::All;
        if all {
            self.ts.push(ev.ts.and_then(|n| n.as_f64()));
            self.dur.push(ev.dur.and_then(|n| n.as_f64()));
        }
        self.ts_ns.push(ts_ns);
        self.dur_ns.push(dur_ns);
        let id = if all { ev.id.as_ref() } else { None };
        for (col, id) in [
            (&mut self.pid, ev.pid.as_ref()),
            (&mut self.tid, ev.tid.as_ref()),
            (&mut self.id, id),
        ] {
            match id {
                Some(Id::Int(i)) => col.push(row, Val::Int(*i)),
                Some(Id::Str(s)) => col.push_str(row, s),
                None => {}
            }
        }
        let Some(args) = ev.args else { return Ok(()) };
        if !self.columns.may_keep_args(args) {
            return Ok(());
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut i = 0;
        let mut member = |b: &mut Builder, key: &str, value: &str| {
            if !b.columns.keeps_arg(key) {
                return;
            }
            scratch.clear();
            // A `null` member is left out.
            if let Some(v) = scalar(value, &mut scratch) {
                let slot = b.slot(i, key);
                i += 1;
                b.args[slot].1.push_from(row, v, &scratch);
            }
        };
        for_each_arg(args, |key, value| member(self, key, value));
        self.scratch = scratch;
        Ok(())
    }

    /// The column of `key`, the `i`-th key of its event, created when new.
    fn slot(&mut self, i: usize, key: &str) -> usize {
        if let Some(&s) = self.guess.get(i)
            && self.args[s].0 == key
        {
            return s;
        }
        let s = match self.keys.get(key) {
            Some(&s) => s,
            None => {
                let s = self.args.len();
                self.keys.insert(key.into(), s);
                self.args.push((key.to_string(), Sparse::default()));
                s
            }
        };
        if i < self.guess.len() {
            self.guess[i] = s;
        } else {
            self.guess.push(s);
        }
        s
    }

    /// Appends a chunk's columns; its event indices count from `base`.
    fn append(&mut self, part: Builder, base: usize) -> Result<(), PolarsError> {
        let row0 = self.index.len() as u32;
        self.index
            .extend(part.index.iter().map(|i| i + base as i64));
        self.name.append(part.name)?;
        self.cat.append(part.cat)?;
        self.ph.append(part.ph)?;
        self.ts.append(&part.ts);
        self.dur.append(&part.dur);
        self.ts_ns.append(&part.ts_ns);
        self.dur_ns.append(&part.dur_ns);
        self.pid.append(&part.pid, row0);
        self.tid.append(&part.tid, row0);
        self.id.append(&part.id, row0);
        for (key, col) in &part.args {
            let slot = match self.keys.get(key.as_str()) {
                Some(&s) => s,
                None => {
                    let s = self.args.len();
                    self.keys.insert(key.as_str().into(), s);
                    self.args.push((key.clone(), Sparse::default()));
                    s
                }
            };
            self.args[slot].1.append(col, row0);
        }
        Ok(())
    }

    fn finish(self, rank: Option<i64>) -> PolarsResult<DataFrame> {
        let height = self.index.len();
        let all = self.columns == Columns::All;
        // The columns are built beside each other, each from its own part of the builder.
        type Build = Box<dyn FnOnce() -> Column + Send>;
        let mut builds: Vec<Build> = Vec::new();
        // The analyses' frame is read row by row once and dropped: its string columns keep
        // their chunks.
        let (name, cat, ph) = (self.name, self.cat, self.ph);
        builds.push(Box::new(move || name.into_column("name", all)));
        builds.push(Box::new(move || cat.into_column("cat", all)));
        builds.push(Box::new(move || ph.into_column("ph", all)));
        if all {
            let (ts, dur) = (self.ts, self.dur);
            builds.push(Box::new(move || ts.into_column("ts")));
            builds.push(Box::new(move || dur.into_column("dur")));
        }
        let (pid, tid, id) = (self.pid, self.tid, self.id);
        builds.push(Box::new(move || pid.into_column("pid", height)));
        builds.push(Box::new(move || tid.into_column("tid", height)));
        if all {
            builds.push(Box::new(move || id.into_column("id", height)));
        }
        let (ts_ns, dur_ns, index) = (self.ts_ns, self.dur_ns, self.index);
        builds.push(Box::new(move || ts_ns.into_column("ts_ns")));
        builds.push(Box::new(move || dur_ns.into_column("dur_ns")));
        builds.push(Box::new(move || {
            Int64Chunked::from_vec("event_index".into(), index).into_column()
        }));
        builds.push(Box::new(move || {
            let rank = match rank {
                Some(r) => Scalar::new(DataType::Int64, AnyValue::Int64(r)),
                None => Scalar::null(DataType::Int64),
            };
            Column::new_scalar("rank".into(), rank, height)
        }));
        let mut args = self.args;
        args.sort_by(|a, b| a.0.cmp(&b.0));
        for (key, sparse) in args {
            let name = if key.is_empty() {
                "args".to_string()
            } else {
                format!("args_{key}")
            };
            builds.push(Box::new(move || sparse.into_column(&name, height)));
        }
        let cols: Vec<Column> = builds.into_par_iter().map(|build| build()).collect();
        DataFrame::new(height, cols)
    }
}

/// Calls `f` with each member of `args` (checked JSON text), its key and its value's text.
/// An `args` that is not an object (rare, never Kineto) is one member with the empty key.
fn for_each_arg(args: &str, mut f: impl FnMut(&str, &str)) {
    if args.starts_with('{') {
        for_each_member(args, |key, value| f(&key, value));
    } else {
        f("", args);
    }
}

/// Calls `f` with each member of the JSON object `text` (checked JSON, as chrome-reader
/// hands `args` on): its key, unescaped, and its value's text.
fn for_each_member(text: &str, mut f: impl FnMut(Cow<'_, str>, &str)) {
    let b = text.as_bytes();
    let mut i = 1;
    loop {
        i = skip_ws(b, i);
        if b.get(i) != Some(&b'"') {
            return; // `}`: the end (or an empty object)
        }
        let Some(key_end) = value_end(b, i) else {
            return;
        };
        let raw_key = &text[i..key_end];
        let key = if raw_key.contains('\\') {
            match serde_json::from_str::<String>(raw_key) {
                Ok(k) => Cow::Owned(k),
                Err(_) => return,
            }
        } else {
            Cow::Borrowed(&raw_key[1..raw_key.len() - 1])
        };
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return;
        }
        let start = skip_ws(b, i + 1);
        let Some(end) = value_end(b, start) else {
            return;
        };
        f(key, &text[start..end]);
        i = skip_ws(b, end);
        if b.get(i) != Some(&b',') {
            return;
        }
        i += 1;
    }
}

/// The text of a JSON value → a scalar, its string (if any) appended to `text`; `null` →
/// none; arrays and objects keep their JSON text.
fn scalar(t: &str, text: &mut String) -> Option<Val> {
    let t = t.trim();
    let first = *t.as_bytes().first()?;
    let start = text.len();
    Some(match first {
        b'"' => {
            // The string was checked; without escapes its text is the value.
            if t.contains('\\') {
                text.push_str(&serde_json::from_str::<String>(t).ok()?);
            } else {
                text.push_str(&t[1..t.len() - 1]);
            }
            Val::Str(start, text.len())
        }
        b't' => Val::Bool(true),
        b'f' => Val::Bool(false),
        b'n' => return None,
        b'[' | b'{' => {
            text.push_str(t);
            Val::Str(start, text.len())
        }
        _ if t.bytes().any(|c| matches!(c, b'.' | b'e' | b'E')) => Val::Float(t.parse().ok()?),
        // Integers beyond i64 (NCCL comm ids) keep their exact text.
        _ => match t.parse::<i64>() {
            Ok(i) => Val::Int(i),
            Err(_) => {
                text.push_str(t);
                Val::Str(start, text.len())
            }
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_args_prefilter_passes_every_kept_key() {
        for key in crate::timeline::ARGS_READ {
            let has = |n: &memchr::memmem::Finder<'_>| n.find(key.as_bytes()).is_some();
            assert!(ARGS_NEEDLES.iter().any(has), "{key}");
            let args = format!("{{\"{key}\": 7}}");
            assert!(Columns::Analyses.may_keep_args(&args), "{args}");
        }
        let cpu_op = r#"{"External id": 3, "Record function id": 0, "Ev Idx": 1}"#;
        assert!(!Columns::Analyses.may_keep_args(cpu_op));
        assert!(Columns::All.may_keep_args(cpu_op));
        // An escaped key may spell a kept one.
        assert!(Columns::Analyses.may_keep_args(r#"{"\u0073tream": 7}"#));
    }

    fn check(args: &str, expect: &[(&str, &str)]) {
        let mut got: Vec<(String, String)> = Vec::new();
        for_each_arg(args, |key, value| {
            let mut text = String::new();
            let shown = match scalar(value, &mut text) {
                Some(Val::Str(s, e)) => format!("Str({:?})", &text[s..e]),
                Some(v) => format!("{v:?}"),
                None => return,
            };
            got.push((key.to_string(), shown));
        });
        let expect: Vec<(String, String)> = expect
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(got, expect);
    }

    #[test]
    fn args_split_into_scalars() {
        check(
            r#"{"a": 1, "b": 2.5, "c": "x\"y", "d": null, "e": [1, 2], "f": true, "g\n": 18446744073709551615}"#,
            &[
                ("a", "Int(1)"),
                ("b", "Float(2.5)"),
                ("c", "Str(\"x\\\"y\")"),
                ("e", "Str(\"[1, 2]\")"),
                ("f", "Bool(true)"),
                ("g\n", "Str(\"18446744073709551615\")"),
            ],
        );
        // An `args` that is not an object is one value under the empty key.
        check(r#"[1, "x"]"#, &[("", "Str(\"[1, \\\"x\\\"]\")")]);
        check(r#""a b""#, &[("", "Str(\"a b\")")]);
        check("7", &[("", "Int(7)")]);
    }

    #[test]
    fn a_repeated_key_keeps_its_last_value_and_rows_without_one_are_null() {
        let mut s = Sparse::default();
        s.push(0, Val::Int(1));
        s.push(0, Val::Int(2));
        s.push(2, Val::Int(3));
        let got: Vec<Option<Val>> = s.per_row(4).collect();
        assert_eq!(got, vec![Some(Val::Int(2)), None, Some(Val::Int(3)), None]);
    }

    #[test]
    fn mixed_columns_become_strings_uniform_stay_numeric() {
        let mut s = Sparse::default();
        s.push(0, Val::Int(3));
        s.push(2, Val::Float(1.5));
        let c = s.into_column("n", 3);
        assert_eq!(c.dtype(), &DataType::Float64);
        let mut s = Sparse::default();
        s.push(0, Val::Int(3));
        s.push_str(1, "x");
        let c = s.into_column("m", 3);
        assert_eq!(c.dtype(), &DataType::String);
        assert_eq!(c.null_count(), 1);
        let mut s = Sparse::default();
        s.push(1, Val::Int(7));
        let c = s.into_column("i", 2);
        assert_eq!(c.dtype(), &DataType::Int64);
    }
}
