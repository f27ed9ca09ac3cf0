//! Events → DataFrame: one row per element of `traceEvents`, streamed from chrome-reader's
//! raw layer, with `args` split into `args_<key>` columns without building a JSON value tree.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrome_reader::{Id, RawEvent};
use polars::prelude::*;
use polars_arrow::bitmap::{Bitmap, MutableBitmap};
use rayon::prelude::*;
use trace_model::{Capture, FastMap};

use crate::Error;
use crate::args_text::{for_each_arg, scalar};

/// The events of one trace file.
#[derive(Debug, Clone)]
pub struct RankFrame {
    /// The trace file the frame was read from.
    pub path: PathBuf,
    /// `distributedInfo.rank`, else the number in the file name, else none.
    pub rank: Option<i64>,
    /// `distributedInfo.rank` alone (none when the rank came from the file name or is
    /// unknown): HTA 0.5.0 numbers a trace without it 0.
    pub rank_in_file: Option<i64>,
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
    /// Those profile-model's summary reads beside HTA's analyses (which read the capture):
    /// `name`, `cat`, `ph`, `pid`, `tid`, `ts_ns`, `dur_ns`, `event_index` and `rank`, no
    /// `args_*`. The rows are the same.
    Analyses,
}

impl Columns {
    /// Whether the `args` members get columns: with every column only (the analyses'
    /// frame keeps none, and its events' `args` are not scanned).
    fn keeps_args(self) -> bool {
        self == Columns::All
    }
}

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
        &mut dyn FnMut(Part, usize) -> Result<(), chrome_reader::Error>,
    ) -> Result<R, chrome_reader::Error>,
    top: impl Fn(&R) -> &chrome_reader::TopLevel,
    with_frame: impl FnOnce(RankFrame) -> U + Send,
    beside: impl FnOnce(R) -> T + Send,
) -> Result<(U, T), Error> {
    let mut b = FileColumns::new(columns);
    // Each chunk of the file is parsed into columns of its own on a parsing thread; the
    // chunks' columns are strung together in file order here.
    // A chunk's columns start with room for as many rows as the last chunk merged had, and
    // a little more (chunks are cut at about the same size): they seldom grow and copy.
    let rows_hint = std::sync::atomic::AtomicUsize::new(0);
    let b_path: Arc<Path> = Arc::from(path);
    let new_part = || {
        let rows = rows_hint.load(std::sync::atomic::Ordering::Relaxed);
        Builder::with_rows(b_path.clone(), columns, rows + rows / 8)
    };
    let read = read(&new_part, &mut |part, base| {
        rows_hint.store(part.height, std::sync::atomic::Ordering::Relaxed);
        ARGS_SCANNED.fetch_add(part.args_scanned, std::sync::atomic::Ordering::Relaxed);
        b.append(part, base);
        Ok(())
    })?;
    let rank_in_file = top(&read)
        .get("distributedInfo")
        .and_then(|raw| serde_json::from_str::<DistributedInfo>(raw.get()).ok())
        .and_then(|d| d.rank);
    let rank = rank_in_file.or_else(|| chrome_reader::rank_from_file_name(path));
    let finish = || -> Result<U, Error> {
        let df = b
            .finish(rank)
            .map_err(Error::polars(path.display().to_string()))?;
        Ok(with_frame(RankFrame {
            path: path.to_path_buf(),
            rank,
            rank_in_file,
            df,
        }))
    };
    let (frame, other) = rayon::join(finish, || beside(read));
    Ok((frame?, other))
}

/// The frame of the rows pushed into `b` (a capture's, [`crate::capture_rows`]), as a
/// file's frame is made of its chunks' rows.
pub(crate) fn frame_of_rows(
    b: Builder,
    path: &Path,
    rank: Option<i64>,
    rank_in_file: Option<i64>,
) -> Result<RankFrame, Error> {
    let mut file = FileColumns::new(b.columns);
    file.append(chrome_reader::EventSink::finish(b), 0);
    let df = file
        .finish(rank)
        .map_err(Error::polars(path.display().to_string()))?;
    Ok(RankFrame {
        path: path.to_path_buf(),
        rank,
        rank_in_file,
        df,
    })
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
pub(crate) enum Val {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(usize, usize),
}

/// Which kinds of value a column has seen; they decide its type ([`Kinds::dtype`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Kinds {
    ints: bool,
    floats: bool,
    bools: bool,
    strs: bool,
}

impl Kinds {
    /// Uniform integers are Int64, numbers Float64, booleans Boolean; anything mixed (or
    /// nothing at all) is String.
    fn dtype(self) -> DataType {
        let kinds = [self.ints || self.floats, self.bools, self.strs]
            .iter()
            .filter(|k| **k)
            .count();
        match kinds {
            1 if self.ints && !self.floats => DataType::Int64,
            1 if self.ints || self.floats => DataType::Float64,
            1 if self.bools => DataType::Boolean,
            _ => DataType::String,
        }
    }

    fn union(self, other: Kinds) -> Kinds {
        Kinds {
            ints: self.ints || other.ints,
            floats: self.floats || other.floats,
            bools: self.bools || other.bools,
            strs: self.strs || other.strs,
        }
    }
}

/// The values one column has seen, with the rows they are on (increasing), and the text of
/// its string values end to end.
#[derive(Debug, Default)]
struct Sparse {
    rows: Vec<u32>,
    vals: Vec<Val>,
    text: String,
    kinds: Kinds,
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
            Val::Int(_) => self.kinds.ints = true,
            Val::Float(_) => self.kinds.floats = true,
            Val::Bool(_) => self.kinds.bools = true,
            Val::Str(..) => unreachable!("strings go through push_str"),
        }
        self.rows.push(row);
        self.vals.push(v);
    }

    fn push_str(&mut self, row: u32, s: &str) {
        let start = self.text.len();
        self.text.push_str(s);
        self.kinds.strs = true;
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

    /// The column, of type [`Kinds::dtype`]: a mixed column is strings (numbers by their
    /// value's text).
    fn series(&self, name: &str, height: usize) -> Series {
        let dtype = self.kinds.dtype();
        // Straight from the sparse values into the column's buffers.
        match dtype {
            DataType::Int64 => self
                .dense(height, |v| match v {
                    Val::Int(i) => Some(i),
                    _ => None,
                })
                .into_series(name),
            DataType::Float64 => self
                .dense(height, |v| match v {
                    Val::Int(i) => Some(i as f64),
                    Val::Float(f) => Some(f),
                    _ => None,
                })
                .into_series(name),
            DataType::Boolean => {
                let rows = self.per_row(height).map(|v| match v {
                    Some(Val::Bool(b)) => Some(b),
                    _ => None,
                });
                BooleanChunked::from_iter_options(name.into(), rows).into_series()
            }
            _ => self.strings(name, height),
        }
    }

    /// Every value as text.
    fn strings(&self, name: &str, height: usize) -> Series {
        let mut out = Texts::new(name, height);
        for v in self.per_row(height) {
            out.push(v, &self.text);
        }
        out.finish()
    }
}

/// A String column made of values of any kind: numbers by their value's text
/// (`{i}`, `{f}`), booleans `true`/`false`.
struct Texts {
    out: StringChunkedBuilder,
    num: String,
    /// The integer whose text `num` holds: ids repeat row after row (pid, tid).
    num_of: Option<i64>,
}

impl Texts {
    fn new(name: &str, rows: usize) -> Texts {
        Texts {
            out: StringChunkedBuilder::new(name.into(), rows),
            num: String::new(),
            num_of: None,
        }
    }

    /// Appends `v`, whose string (if it is one) is in `text`.
    fn push(&mut self, v: Option<Val>, text: &str) {
        use std::fmt::Write;
        let s = match v {
            None => {
                self.out.append_null();
                return;
            }
            Some(Val::Str(s, e)) => &text[s..e],
            Some(Val::Int(i)) => {
                if self.num_of != Some(i) {
                    self.num.clear();
                    let _ = write!(self.num, "{i}");
                    self.num_of = Some(i);
                }
                &self.num
            }
            Some(Val::Float(f)) => {
                self.num.clear();
                let _ = write!(self.num, "{f}");
                self.num_of = None;
                &self.num
            }
            Some(Val::Bool(b)) => {
                if b {
                    "true"
                } else {
                    "false"
                }
            }
        };
        self.out.append_value(s);
    }

    fn finish(self) -> Series {
        self.out.finish().into_series()
    }
}

/// One chunk's column of a type that may differ from the whole file's (an integer column
/// of a chunk is Float64 or String where other chunks have fractions or text).
struct Piece {
    kinds: Kinds,
    series: Series,
    /// The values, kept when the chunk's column is Float64 with integers in it: as text
    /// they read as written (`{i}`), not as the float they became.
    exact: Option<Sparse>,
}

impl Piece {
    fn of(sparse: Sparse, name: &str, height: usize) -> Piece {
        let kinds = sparse.kinds;
        let series = sparse.series(name, height);
        let lossy = kinds.ints && kinds.floats && series.dtype() == &DataType::Float64;
        Piece {
            kinds,
            series,
            exact: lossy.then_some(sparse),
        }
    }

    /// The column as `dtype` (the whole file's type, which covers this chunk's kinds): as
    /// [`Sparse::series`] would have made it from the whole file's values.
    fn into_dtype(self, dtype: &DataType, height: usize) -> PolarsResult<Series> {
        if self.series.dtype() == dtype {
            return Ok(self.series);
        }
        if self.kinds == Kinds::default() {
            // No values in this chunk.
            return Ok(Series::full_null(self.series.name().clone(), height, dtype));
        }
        match dtype {
            // An Int64 piece: `i as f64`, as `Sparse::series` converts.
            DataType::Float64 => self.series.cast(dtype),
            DataType::String => {
                let name = self.series.name().clone();
                if let Some(sparse) = &self.exact {
                    return Ok(sparse.strings(&name, height));
                }
                let mut out = Texts::new(&name, height);
                match self.series.dtype() {
                    DataType::Int64 => {
                        for v in self.series.i64()?.iter() {
                            out.push(v.map(Val::Int), "");
                        }
                    }
                    DataType::Float64 => {
                        for v in self.series.f64()?.iter() {
                            out.push(v.map(Val::Float), "");
                        }
                    }
                    DataType::Boolean => {
                        for v in self.series.bool()?.iter() {
                            out.push(v.map(Val::Bool), "");
                        }
                    }
                    other => unreachable!("a piece of {other} under a String column"),
                }
                Ok(out.finish())
            }
            other => unreachable!("a {} piece under a {other} column", self.series.dtype()),
        }
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

    /// The values, and the validity when some are null.
    fn into_parts(self) -> (Vec<T>, Option<Bitmap>) {
        let valid = (self.valid.unset_bits() > 0).then(|| self.valid.into());
        (self.values, valid)
    }
}

impl Nullable<i64> {
    fn into_series(self, name: &str) -> Series {
        let (values, valid) = self.into_parts();
        Int64Chunked::from_vec_validity(name.into(), values, valid).into_series()
    }
}

impl Nullable<f64> {
    fn into_series(self, name: &str) -> Series {
        let (values, valid) = self.into_parts();
        Float64Chunked::from_vec_validity(name.into(), values, valid).into_series()
    }
}

/// One row's fields besides `args`, decoded: times in µs (`ts`, `dur`, as the text
/// reads) and in ns.
pub(crate) struct Row<'a> {
    pub(crate) index: usize,
    pub(crate) name: Option<&'a str>,
    pub(crate) cat: Option<&'a str>,
    pub(crate) ph: &'a str,
    pub(crate) ts: Option<f64>,
    pub(crate) dur: Option<f64>,
    pub(crate) ts_ns: Option<i64>,
    pub(crate) dur_ns: Option<i64>,
    pub(crate) pid: Option<&'a Id<'a>>,
    pub(crate) tid: Option<&'a Id<'a>>,
    pub(crate) id: Option<&'a Id<'a>>,
}

/// The columns of one chunk of the file, parsed on a parsing thread (its rows and event
/// indices count from its first event), or of a capture's rows.
pub(crate) struct Builder {
    /// The file, named in the error of an event that cannot be read.
    path: Arc<Path>,
    columns: Columns,
    index: Vec<i64>,
    name: StringChunkedBuilder,
    cat: StringChunkedBuilder,
    ph: StringChunkedBuilder,
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
    args_scanned: u64,
}

/// A chunk's columns, typed by what the chunk holds: made on the parsing thread when the
/// chunk is done, so that the file's frame only strings the chunks together.
pub(crate) struct Part {
    height: usize,
    index: Vec<i64>,
    /// `name`, `cat`, `ph`, (`ts`, `dur` with every column), `ts_ns`, `dur_ns`.
    fixed: Vec<Series>,
    /// `pid`, `tid` (and `id` with every column).
    ids: Vec<Piece>,
    args: Vec<(String, Piece)>,
    /// How many events' `args` the chunk split into members (see [`args_scanned`]).
    args_scanned: u64,
}

/// How many events' `args` texts the frames split into members since the process started
/// (per merged chunk): a test checks that a frame does not parse the `args` it does not ask for.
pub fn args_scanned() -> u64 {
    ARGS_SCANNED.load(std::sync::atomic::Ordering::Relaxed)
}

static ARGS_SCANNED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The names of [`Part::fixed`] and [`Part::ids`].
fn fixed_names(columns: Columns) -> (&'static [&'static str], &'static [&'static str]) {
    match columns {
        Columns::All => (
            &["name", "cat", "ph", "ts", "dur", "ts_ns", "dur_ns"],
            &["pid", "tid", "id"],
        ),
        Columns::Analyses => (&["name", "cat", "ph", "ts_ns", "dur_ns"], &["pid", "tid"]),
    }
}

/// The whole file's columns: each chunk's [`Part`] in file order.
struct FileColumns {
    columns: Columns,
    heights: Vec<usize>,
    index: Vec<Vec<i64>>,
    fixed: Vec<Vec<Series>>,
    ids: Vec<Vec<Piece>>,
    keys: FastMap<String, usize>,
    /// Per `args` key: its pieces, `None` for a chunk without the key.
    args: Vec<(String, Vec<Option<Piece>>)>,
}

impl Builder {
    /// A builder with room for `rows` rows in its dense columns (and `pid`, `tid`).
    pub(crate) fn with_rows(path: Arc<Path>, columns: Columns, rows: usize) -> Builder {
        let all = columns == Columns::All;
        let floats = || Nullable::with_capacity(if all { rows } else { 0 });
        let strings = |name: &str| StringChunkedBuilder::new(name.into(), rows);
        Builder {
            path,
            columns,
            index: Vec::with_capacity(rows),
            name: strings("name"),
            cat: strings("cat"),
            ph: strings("ph"),
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
            args_scanned: 0,
        }
    }
}

/// A chunk's events, parsed on a parsing thread.
impl chrome_reader::EventSink for Builder {
    type Out = Part;

    fn event(&mut self, ev: RawEvent<'_, &str>) -> Result<(), chrome_reader::Error> {
        self.push(&ev)
    }

    fn finish(self) -> Part {
        let height = self.index.len();
        let all = self.columns == Columns::All;
        let mut fixed = vec![
            self.name.finish().into_series(),
            self.cat.finish().into_series(),
            self.ph.finish().into_series(),
        ];
        if all {
            fixed.push(self.ts.into_series("ts"));
            fixed.push(self.dur.into_series("dur"));
        }
        fixed.push(self.ts_ns.into_series("ts_ns"));
        fixed.push(self.dur_ns.into_series("dur_ns"));
        let mut ids = vec![
            Piece::of(self.pid, "pid", height),
            Piece::of(self.tid, "tid", height),
        ];
        if all {
            ids.push(Piece::of(self.id, "id", height));
        }
        let args = self
            .args
            .into_iter()
            .map(|(key, sparse)| {
                let piece = Piece::of(sparse, &key, height);
                (key, piece)
            })
            .collect();
        Part {
            height,
            index: self.index,
            fixed,
            ids,
            args,
            args_scanned: self.args_scanned,
        }
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
        let all = self.columns == Columns::All;
        let row = self.row(&Row {
            index: ev.index,
            name: ev.name.as_deref(),
            cat: ev.cat.as_deref(),
            ph: &ev.ph,
            ts: ev.ts.filter(|_| all).and_then(|n| n.as_f64()),
            dur: ev.dur.filter(|_| all).and_then(|n| n.as_f64()),
            ts_ns,
            dur_ns,
            pid: ev.pid.as_ref(),
            tid: ev.tid.as_ref(),
            id: ev.id.as_ref(),
        });
        let Some(args) = ev.args else { return Ok(()) };
        if !self.columns.keeps_args() {
            return Ok(());
        }
        self.args_scanned += 1;
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut i = 0;
        for_each_arg(args, |key, value| {
            scratch.clear();
            // A `null` member is left out.
            if let Some(v) = scalar(value, &mut scratch) {
                self.arg(row, &mut i, key, v, &scratch);
            }
        });
        self.scratch = scratch;
        Ok(())
    }

    /// Appends a row's fields (the one row sink: a Chrome event's and a capture's rows
    /// come in here) and returns its number in the chunk; its `args` follow through
    /// [`Builder::arg`]. `ts`, `dur` and `id` are kept with [`Columns::All`] only.
    pub(crate) fn row(&mut self, r: &Row<'_>) -> u32 {
        let row = self.index.len() as u32;
        self.index.push(r.index as i64);
        self.name.append_option(r.name);
        self.cat.append_option(r.cat);
        self.ph.append_value(r.ph);
        let all = self.columns == Columns::All;
        if all {
            self.ts.push(r.ts);
            self.dur.push(r.dur);
        }
        self.ts_ns.push(r.ts_ns);
        self.dur_ns.push(r.dur_ns);
        let id = if all { r.id } else { None };
        for (col, id) in [
            (&mut self.pid, r.pid),
            (&mut self.tid, r.tid),
            (&mut self.id, id),
        ] {
            match id {
                Some(Id::Int(i)) => col.push(row, Val::Int(*i)),
                Some(Id::Str(s)) => col.push_str(row, s),
                None => {}
            }
        }
        row
    }

    /// Adds the `args` member `key` (the `i`-th kept one of its row, counted in `i`) of
    /// row `row`: `v`, whose string (if it is one) is in `text`. The caller has checked
    /// [`Builder::keeps_args`].
    pub(crate) fn arg(&mut self, row: u32, i: &mut usize, key: &str, v: Val, text: &str) {
        let slot = self.slot(*i, key);
        *i += 1;
        self.args[slot].1.push_from(row, v, text);
    }

    /// Whether the `args` members get columns.
    pub(crate) fn keeps_args(&self) -> bool {
        self.columns.keeps_args()
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
}

impl FileColumns {
    fn new(columns: Columns) -> FileColumns {
        let (fixed, ids) = fixed_names(columns);
        FileColumns {
            columns,
            heights: Vec::new(),
            index: Vec::new(),
            fixed: fixed.iter().map(|_| Vec::new()).collect(),
            ids: ids.iter().map(|_| Vec::new()).collect(),
            keys: FastMap::default(),
            args: Vec::new(),
        }
    }

    /// Appends a chunk's columns (no values are copied); its event indices count from
    /// `base`.
    fn append(&mut self, mut part: Part, base: usize) {
        if part.height == 0 {
            // No chunk of no rows in the columns (the text after the events).
            return;
        }
        for i in &mut part.index {
            *i += base as i64;
        }
        let before = self.heights.len();
        self.heights.push(part.height);
        self.index.push(part.index);
        for (all, s) in self.fixed.iter_mut().zip(part.fixed) {
            all.push(s);
        }
        for (all, p) in self.ids.iter_mut().zip(part.ids) {
            all.push(p);
        }
        for (key, piece) in part.args {
            let slot = match self.keys.get(key.as_str()) {
                Some(&s) => s,
                None => {
                    let s = self.args.len();
                    self.keys.insert(key.clone(), s);
                    self.args.push((key, (0..before).map(|_| None).collect()));
                    s
                }
            };
            self.args[slot].1.push(Some(piece));
        }
        for (_, pieces) in &mut self.args {
            if pieces.len() == before {
                pieces.push(None);
            }
        }
    }

    fn finish(self, rank: Option<i64>) -> PolarsResult<DataFrame> {
        let height: usize = self.heights.iter().sum();
        let heights = Arc::new(self.heights);
        let (fixed_names, id_names) = fixed_names(self.columns);
        // The columns are built beside each other, each from its own part of the file.
        type Build = Box<dyn FnOnce() -> PolarsResult<Column> + Send>;
        let mut fixed: Vec<Option<Build>> = Vec::new();
        for (name, pieces) in fixed_names.iter().zip(self.fixed) {
            let dtype = match *name {
                "ts" | "dur" => DataType::Float64,
                "ts_ns" | "dur_ns" => DataType::Int64,
                _ => DataType::String,
            };
            fixed.push(Some(Box::new(move || chain(name, dtype, pieces))));
        }
        let mut ids: Vec<Option<Build>> = Vec::new();
        for (name, pieces) in id_names.iter().zip(self.ids) {
            let heights = heights.clone();
            let pieces = pieces.into_iter().map(Some).collect();
            ids.push(Some(Box::new(move || typed(name, pieces, &heights))));
        }
        let take =
            |v: &mut Vec<Option<Build>>, i: usize| v[i].take().expect("each column is built once");
        let all = self.columns == Columns::All;
        // The crate docs' column order.
        let mut builds: Vec<Build> = vec![
            take(&mut fixed, 0),
            take(&mut fixed, 1),
            take(&mut fixed, 2),
        ];
        if all {
            builds.push(take(&mut fixed, 3));
            builds.push(take(&mut fixed, 4));
        }
        builds.push(take(&mut ids, 0));
        builds.push(take(&mut ids, 1));
        if all {
            builds.push(take(&mut ids, 2));
        }
        let ns = if all { 5 } else { 3 };
        builds.push(take(&mut fixed, ns));
        builds.push(take(&mut fixed, ns + 1));
        let index = self.index;
        builds.push(Box::new(move || {
            let pieces = index
                .into_iter()
                .map(|i| Int64Chunked::from_vec("event_index".into(), i).into_series())
                .collect();
            chain("event_index", DataType::Int64, pieces)
        }));
        let rank_heights = heights.clone();
        builds.push(Box::new(move || {
            // Cut as the other columns are: a frame whose columns share their chunks is
            // filtered chunk by chunk, where one of another shape (a scalar column) makes
            // polars copy every column into one chunk first.
            let pieces = rank_heights
                .iter()
                .map(|&h| match rank {
                    Some(r) => Int64Chunked::full("rank".into(), r, h).into_series(),
                    None => Series::full_null("rank".into(), h, &DataType::Int64),
                })
                .collect();
            chain("rank", DataType::Int64, pieces)
        }));
        let mut args = self.args;
        args.sort_by(|a, b| a.0.cmp(&b.0));
        for (key, pieces) in args {
            let name = if key.is_empty() {
                "args".to_string()
            } else {
                format!("args_{key}")
            };
            let heights = heights.clone();
            builds.push(Box::new(move || typed(&name, pieces, &heights)));
        }
        let cols = builds
            .into_par_iter()
            .map(|build| build())
            .collect::<PolarsResult<Vec<Column>>>()?;
        DataFrame::new(height, cols)
    }
}

/// The chunks' columns of one type as one column named `name` (no values copied).
fn chain(name: &str, dtype: DataType, pieces: Vec<Series>) -> PolarsResult<Column> {
    let mut pieces = pieces.into_iter();
    let mut all = match pieces.next() {
        Some(first) => first,
        None => Series::new_empty(name.into(), &dtype),
    };
    for p in pieces {
        all.append_owned(p)?;
    }
    Ok(all.with_name(name.into()).into_column())
}

/// The chunks' pieces of a column whose type is decided by every chunk's values
/// ([`Kinds::dtype`]), null where a chunk has none.
fn typed(name: &str, pieces: Vec<Option<Piece>>, heights: &[usize]) -> PolarsResult<Column> {
    let kinds = pieces
        .iter()
        .flatten()
        .fold(Kinds::default(), |k, p| k.union(p.kinds));
    let dtype = kinds.dtype();
    let series = pieces
        .into_iter()
        .zip(heights)
        .map(|(p, &h)| match p {
            Some(p) => p.into_dtype(&dtype, h),
            None => Ok(Series::full_null(name.into(), h, &dtype)),
        })
        .collect::<PolarsResult<Vec<Series>>>()?;
    chain(name, dtype, series)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The analyses' frame has the rows of the full frame and no `args_*` column.
    #[test]
    fn the_analyses_frame_keeps_no_args() {
        let root = test_support::workspace_root().join("testdata/chrome/ok");
        let mut compared = 0;
        for path in test_support::json_files(&root) {
            let (Ok(all), Ok(few)) = (
                read_frame_columns(&path, 1, Columns::All),
                read_frame_columns(&path, 1, Columns::Analyses),
            ) else {
                continue;
            };
            assert_eq!(all.df.height(), few.df.height(), "{}", path.display());
            let names = few.df.get_column_names();
            assert!(
                !names.iter().any(|n| n.starts_with("args_")),
                "{}",
                path.display()
            );
            compared += all
                .df
                .get_column_names()
                .iter()
                .any(|n| n.starts_with("args_")) as usize;
        }
        assert!(compared >= 5, "{compared} fixtures with args");
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

    /// A chunk's values as (row, value) with strings as text.
    enum V {
        I(i64),
        F(f64),
        B(bool),
        S(&'static str),
    }

    fn sparse(values: &[(u32, V)]) -> Sparse {
        let mut s = Sparse::default();
        for (row, v) in values {
            match v {
                V::I(i) => s.push(*row, Val::Int(*i)),
                V::F(f) => s.push(*row, Val::Float(*f)),
                V::B(b) => s.push(*row, Val::Bool(*b)),
                V::S(t) => s.push_str(*row, t),
            }
        }
        s
    }

    /// The chunks' columns strung together equal the column of all their values at once:
    /// `chunks` are (height, values or `None` for a chunk without the key).
    /// A chunk's (row, value) pairs.
    type Values<'a> = &'a [(u32, V)];

    fn check_chunks(chunks: &[(usize, Option<Values<'_>>)], dtype: DataType) {
        let mut whole = Sparse::default();
        let mut row0 = 0;
        let mut heights = Vec::new();
        let mut pieces = Vec::new();
        for (height, values) in chunks {
            if let Some(values) = values {
                let part = sparse(values);
                for (r, v) in part.rows.iter().zip(&part.vals) {
                    whole.push_from(r + row0, *v, &part.text);
                }
                pieces.push(Some(Piece::of(part, "k", *height)));
            } else {
                pieces.push(None);
            }
            heights.push(*height);
            row0 += *height as u32;
        }
        let expect = whole.series("k", row0 as usize);
        let got = typed("k", pieces, &heights).unwrap();
        let got = got.as_materialized_series();
        assert_eq!(got.dtype(), &dtype);
        assert_eq!(expect.dtype(), &dtype);
        assert!(got.equals_missing(&expect), "{got:?} vs {expect:?}");
    }

    #[test]
    fn chunks_typed_on_their_own_give_the_whole_files_column() {
        use V::*;
        let ints: &[(u32, V)] = &[(0, I(3)), (2, I(9_007_199_254_740_993))];
        let floats: &[(u32, V)] = &[(1, F(1.5))];
        let ints_and_floats: &[(u32, V)] = &[(0, I(9_007_199_254_740_993)), (1, F(0.25))];
        let text: &[(u32, V)] = &[(0, S("x"))];
        let bools: &[(u32, V)] = &[(1, B(true)), (2, B(false))];
        check_chunks(
            &[(3, Some(ints)), (2, None), (3, Some(ints))],
            DataType::Int64,
        );
        check_chunks(&[(3, Some(ints)), (2, Some(floats))], DataType::Float64);
        check_chunks(&[(3, Some(ints)), (1, Some(text))], DataType::String);
        check_chunks(&[(2, Some(floats)), (1, Some(text))], DataType::String);
        // Integers beside fractions in one chunk keep their own text in a String column.
        check_chunks(
            &[(2, Some(ints_and_floats)), (1, Some(text))],
            DataType::String,
        );
        check_chunks(&[(3, Some(bools)), (3, Some(ints))], DataType::String);
        check_chunks(&[(3, Some(bools)), (4, None)], DataType::Boolean);
        // A chunk with the key but no value in it (the ids of a chunk without any).
        check_chunks(&[(2, Some(&[])), (3, Some(ints))], DataType::Int64);
        check_chunks(&[(2, Some(&[])), (3, Some(&[]))], DataType::String);
    }

    #[test]
    fn mixed_columns_become_strings_uniform_stay_numeric() {
        let mut s = Sparse::default();
        s.push(0, Val::Int(3));
        s.push(2, Val::Float(1.5));
        let c = s.series("n", 3);
        assert_eq!(c.dtype(), &DataType::Float64);
        let mut s = Sparse::default();
        s.push(0, Val::Int(3));
        s.push_str(1, "x");
        let c = s.series("m", 3);
        assert_eq!(c.dtype(), &DataType::String);
        assert_eq!(c.null_count(), 1);
        let mut s = Sparse::default();
        s.push(1, Val::Int(7));
        let c = s.series("i", 2);
        assert_eq!(c.dtype(), &DataType::Int64);
    }
}
