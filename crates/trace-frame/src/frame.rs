//! Events → DataFrame: one row per element of `traceEvents`, streamed from chrome-reader's
//! raw layer, with `args` split into `args_<key>` columns without building a JSON value tree.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use chrome_reader::{Id, RawEvent};
use polars::prelude::*;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use trace_model::FastMap;

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
    let mut b = Builder::default();
    let input = chrome_reader::open(path)?;
    let top = chrome_reader::read_events_with_args_parallel::<_, EventArgs>(
        input,
        path,
        threads,
        |ev| {
            b.push(&ev);
            Ok(())
        },
    )?;
    let rank = top
        .get("distributedInfo")
        .and_then(|raw| serde_json::from_str::<DistributedInfo>(raw.get()).ok())
        .and_then(|d| d.rank)
        .or_else(|| chrome_reader::rank_from_file_name(path));
    let df = b
        .finish(rank)
        .map_err(Error::polars(path.display().to_string()))?;
    Ok(RankFrame {
        path: path.to_path_buf(),
        rank,
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

    /// Uniform integers stay Int64, numbers Float64, booleans Boolean; a mixed column
    /// becomes strings (numbers by their value's text).
    fn into_column(self, name: &str, height: usize) -> Column {
        let name = PlSmallStr::from(name);
        let kinds = [self.ints || self.floats, self.bools, self.strs]
            .iter()
            .filter(|k| **k)
            .count();
        if kinds == 1 && !self.floats && self.ints {
            let out: Vec<Option<i64>> = self
                .per_row(height)
                .map(|v| match v {
                    Some(Val::Int(i)) => Some(i),
                    _ => None,
                })
                .collect();
            return Column::new(name, out);
        }
        if kinds == 1 && (self.ints || self.floats) {
            let out: Vec<Option<f64>> = self
                .per_row(height)
                .map(|v| match v {
                    Some(Val::Int(i)) => Some(i as f64),
                    Some(Val::Float(f)) => Some(f),
                    _ => None,
                })
                .collect();
            return Column::new(name, out);
        }
        if kinds == 1 && self.bools {
            let out: Vec<Option<bool>> = self
                .per_row(height)
                .map(|v| match v {
                    Some(Val::Bool(b)) => Some(b),
                    _ => None,
                })
                .collect();
            return Column::new(name, out);
        }
        let mut out = StringChunkedBuilder::new(name, height);
        let mut num = String::new();
        for v in self.per_row(height) {
            use std::fmt::Write;
            num.clear();
            let s = match v {
                None => {
                    out.append_null();
                    continue;
                }
                Some(Val::Str(s, e)) => &self.text[s..e],
                Some(Val::Int(i)) => {
                    let _ = write!(num, "{i}");
                    &num
                }
                Some(Val::Float(f)) => {
                    let _ = write!(num, "{f}");
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

struct Builder {
    index: Vec<i64>,
    name: StringChunkedBuilder,
    cat: StringChunkedBuilder,
    ph: StringChunkedBuilder,
    ts: Vec<Option<f64>>,
    dur: Vec<Option<f64>>,
    ts_ns: Vec<Option<i64>>,
    dur_ns: Vec<Option<i64>>,
    pid: Sparse,
    tid: Sparse,
    id: Sparse,
    keys: FastMap<Box<str>, usize>,
    /// The slot the `i`-th key of the last event with an `i`-th key went to: events of one
    /// kind list the same keys in the same order, so this usually saves the hash lookup.
    guess: Vec<usize>,
    args: Vec<(String, Sparse)>,
}

impl Default for Builder {
    fn default() -> Builder {
        Builder {
            index: Vec::new(),
            name: StringChunkedBuilder::new("name".into(), 0),
            cat: StringChunkedBuilder::new("cat".into(), 0),
            ph: StringChunkedBuilder::new("ph".into(), 0),
            ts: Vec::new(),
            dur: Vec::new(),
            ts_ns: Vec::new(),
            dur_ns: Vec::new(),
            pid: Sparse::default(),
            tid: Sparse::default(),
            id: Sparse::default(),
            keys: FastMap::default(),
            guess: Vec::new(),
            args: Vec::new(),
        }
    }
}

impl Builder {
    fn push(&mut self, ev: &RawEvent<'_, EventArgs>) {
        let row = self.index.len() as u32;
        self.index.push(ev.index as i64);
        self.name.append_option(ev.name.as_deref());
        self.cat.append_option(ev.cat.as_deref());
        self.ph.append_value(&*ev.ph);
        self.ts.push(ev.ts.and_then(|n| n.as_f64()));
        self.dur.push(ev.dur.and_then(|n| n.as_f64()));
        self.ts_ns.push(ev.ts.and_then(|n| n.micros_to_nanos()));
        self.dur_ns.push(ev.dur.and_then(|n| n.micros_to_nanos()));
        for (col, id) in [
            (&mut self.pid, &ev.pid),
            (&mut self.tid, &ev.tid),
            (&mut self.id, &ev.id),
        ] {
            match id {
                Some(Id::Int(i)) => col.push(row, Val::Int(*i)),
                Some(Id::Str(s)) => col.push_str(row, s),
                None => {}
            }
        }
        let Some(args) = &ev.args else { return };
        for (i, &(ks, ke, v)) in args.items.iter().enumerate() {
            let slot = self.slot(i, &args.text[ks..ke]);
            self.args[slot].1.push_from(row, v, &args.text);
        }
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

    fn finish(self, rank: Option<i64>) -> PolarsResult<DataFrame> {
        let height = self.index.len();
        let mut cols = vec![
            self.name.finish().into_column(),
            self.cat.finish().into_column(),
            self.ph.finish().into_column(),
            Column::new("ts".into(), self.ts),
            Column::new("dur".into(), self.dur),
            self.pid.into_column("pid", height),
            self.tid.into_column("tid", height),
            self.id.into_column("id", height),
            Column::new("ts_ns".into(), self.ts_ns),
            Column::new("dur_ns".into(), self.dur_ns),
            Column::new("event_index".into(), self.index),
            Column::new("rank".into(), vec![rank; height]),
        ];
        let mut args = self.args;
        args.sort_by(|a, b| a.0.cmp(&b.0));
        for (key, sparse) in args {
            let name = if key.is_empty() {
                "args".to_string()
            } else {
                format!("args_{key}")
            };
            cols.push(sparse.into_column(&name, height));
        }
        DataFrame::new(height, cols)
    }
}

/// An event's `args`, decoded on the parsing thread into scalars: its keys and string
/// values end to end in `text`, and per member (in file order) the key's range and the
/// value. A `null` member is left out; an `args` that is not an object (rare, never
/// Kineto) is one member with the empty key and the whole JSON text as a string.
#[derive(Debug, Default)]
struct EventArgs {
    text: String,
    items: Vec<(usize, usize, Val)>,
}

impl EventArgs {
    fn from_raw(raw: &RawValue) -> EventArgs {
        match serde_json::from_str::<ArgsObject>(raw.get()) {
            Ok(a) => a.0,
            Err(_) => {
                let mut out = EventArgs::default();
                out.push("", raw);
                out
            }
        }
    }

    fn push(&mut self, key: &str, raw: &RawValue) {
        let ks = self.text.len();
        self.text.push_str(key);
        let ke = self.text.len();
        match scalar(raw, &mut self.text) {
            Some(v) => self.items.push((ks, ke, v)),
            None => self.text.truncate(ks),
        }
    }
}

impl<'de> serde::Deserialize<'de> for EventArgs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&'de RawValue>::deserialize(d)?;
        Ok(EventArgs::from_raw(raw))
    }
}

/// The text of a JSON value → a scalar, its string (if any) appended to `text`; `null` →
/// none; arrays and objects keep their JSON text.
fn scalar(raw: &RawValue, text: &mut String) -> Option<Val> {
    let t = raw.get().trim();
    let first = *t.as_bytes().first()?;
    let start = text.len();
    Some(match first {
        b'"' => {
            // serde_json checked the string; without escapes its text is the value.
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

/// An `args` object, its members decoded as they are read.
struct ArgsObject(EventArgs);

impl<'de> serde::Deserialize<'de> for ArgsObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ArgsObject;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut out = EventArgs::default();
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    let value: &'de RawValue = map.next_value()?;
                    out.push(&key.0, value);
                }
                Ok(ArgsObject(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// A map key that borrows when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(args: &str, expect: &[(&str, &str)]) {
        let raw: Box<RawValue> = serde_json::from_str(args).unwrap();
        let a = EventArgs::from_raw(&raw);
        let got: Vec<(String, String)> = a
            .items
            .iter()
            .map(|&(ks, ke, v)| {
                let shown = match v {
                    Val::Str(s, e) => format!("Str({:?})", &a.text[s..e]),
                    v => format!("{v:?}"),
                };
                (a.text[ks..ke].to_string(), shown)
            })
            .collect();
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
