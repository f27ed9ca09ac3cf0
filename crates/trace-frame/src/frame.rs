//! Events → DataFrame: one row per element of `traceEvents`, streamed from chrome-reader's
//! raw layer, with `args` split into `args_<key>` columns without building a JSON value tree.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use chrome_reader::{Id, RawEvent};
use polars::prelude::*;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

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

/// Reads the trace file at `path` (plain or gzip JSON) into a frame.
pub fn read_frame(path: &Path) -> Result<RankFrame, Error> {
    let mut b = Builder::default();
    let top = chrome_reader::read_raw_file(path, |ev| {
        b.push(&ev);
        Ok(())
    })?;
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

/// A decoded scalar of `args` (or of `pid`/`tid`/`id`).
#[derive(Debug, Clone)]
enum Val {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(Box<str>),
}

/// The values one column has seen, with the rows they are on.
#[derive(Debug, Default)]
struct Sparse {
    rows: Vec<u32>,
    vals: Vec<Val>,
    ints: bool,
    floats: bool,
    bools: bool,
    strs: bool,
}

impl Sparse {
    fn push(&mut self, row: u32, v: Val) {
        match v {
            Val::Int(_) => self.ints = true,
            Val::Float(_) => self.floats = true,
            Val::Bool(_) => self.bools = true,
            Val::Str(_) => self.strs = true,
        }
        self.rows.push(row);
        self.vals.push(v);
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
            let mut out = vec![None; height];
            for (r, v) in self.rows.iter().zip(&self.vals) {
                if let Val::Int(i) = v {
                    out[*r as usize] = Some(*i);
                }
            }
            return Column::new(name, out);
        }
        if kinds == 1 && (self.ints || self.floats) {
            let mut out = vec![None; height];
            for (r, v) in self.rows.iter().zip(&self.vals) {
                out[*r as usize] = match v {
                    Val::Int(i) => Some(*i as f64),
                    Val::Float(f) => Some(*f),
                    _ => None,
                };
            }
            return Column::new(name, out);
        }
        if kinds == 1 && self.bools {
            let mut out = vec![None; height];
            for (r, v) in self.rows.iter().zip(&self.vals) {
                if let Val::Bool(b) = v {
                    out[*r as usize] = Some(*b);
                }
            }
            return Column::new(name, out);
        }
        let mut out: Vec<Option<String>> = vec![None; height];
        for (r, v) in self.rows.into_iter().zip(self.vals) {
            out[r as usize] = Some(match v {
                Val::Int(i) => i.to_string(),
                Val::Float(f) => f.to_string(),
                Val::Bool(b) => b.to_string(),
                Val::Str(s) => s.into_string(),
            });
        }
        Column::new(name, out)
    }
}

#[derive(Default)]
struct Builder {
    index: Vec<i64>,
    name: Vec<Option<String>>,
    cat: Vec<Option<String>>,
    ph: Vec<String>,
    ts: Vec<Option<f64>>,
    dur: Vec<Option<f64>>,
    ts_ns: Vec<Option<i64>>,
    dur_ns: Vec<Option<i64>>,
    pid: Sparse,
    tid: Sparse,
    id: Sparse,
    keys: HashMap<String, usize>,
    args: Vec<(String, Sparse)>,
}

impl Builder {
    fn push(&mut self, ev: &RawEvent<'_>) {
        let row = self.index.len() as u32;
        self.index.push(ev.index as i64);
        self.name.push(ev.name.as_deref().map(str::to_owned));
        self.cat.push(ev.cat.as_deref().map(str::to_owned));
        self.ph.push(ev.ph.to_string());
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
                Some(Id::Str(s)) => col.push(row, Val::Str(Box::from(&**s))),
                None => {}
            }
        }
        let Some(args) = ev.args else { return };
        // An `args` that is not an object (rare, never Kineto) is kept whole in `args`.
        let pairs = match serde_json::from_str::<ArgPairs<'_>>(args.get()) {
            Ok(p) => p.0,
            Err(_) => vec![(Cow::Borrowed(""), args)],
        };
        for (key, raw) in pairs {
            let Some(v) = scalar(raw) else { continue };
            let slot = match self.keys.get(&*key) {
                Some(&s) => s,
                None => {
                    let s = self.args.len();
                    self.keys.insert(key.to_string(), s);
                    self.args.push((key.to_string(), Sparse::default()));
                    s
                }
            };
            self.args[slot].1.push(row, v);
        }
    }

    fn finish(self, rank: Option<i64>) -> PolarsResult<DataFrame> {
        let height = self.index.len();
        let mut cols = vec![
            Column::new("name".into(), self.name),
            Column::new("cat".into(), self.cat),
            Column::new("ph".into(), self.ph),
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

/// The text of a JSON value → a scalar; `null` → none; arrays and objects keep their JSON text.
fn scalar(raw: &RawValue) -> Option<Val> {
    let text = raw.get().trim();
    let first = *text.as_bytes().first()?;
    Some(match first {
        b'"' => Val::Str(serde_json::from_str::<String>(text).ok()?.into_boxed_str()),
        b't' => Val::Bool(true),
        b'f' => Val::Bool(false),
        b'n' => return None,
        b'[' | b'{' => Val::Str(text.into()),
        _ if text.bytes().any(|c| matches!(c, b'.' | b'e' | b'E')) => {
            Val::Float(text.parse().ok()?)
        }
        // Integers beyond i64 (NCCL comm ids) keep their exact text.
        _ => match text.parse::<i64>() {
            Ok(i) => Val::Int(i),
            Err(_) => Val::Str(text.into()),
        },
    })
}

/// The members of an `args` object in file order, each value undecoded.
struct ArgPairs<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for ArgPairs<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ArgPairs<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut out = Vec::new();
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    let value: &'de RawValue = map.next_value()?;
                    out.push((key.0, value));
                }
                Ok(ArgPairs(out))
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
        let pairs = serde_json::from_str::<ArgPairs<'_>>(args).unwrap().0;
        let got: Vec<(String, String)> = pairs
            .into_iter()
            .map(|(k, v)| (k.into_owned(), format!("{:?}", scalar(v))))
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
                ("a", "Some(Int(1))"),
                ("b", "Some(Float(2.5))"),
                ("c", "Some(Str(\"x\\\"y\"))"),
                ("d", "None"),
                ("e", "Some(Str(\"[1, 2]\"))"),
                ("f", "Some(Bool(true))"),
                ("g\n", "Some(Str(\"18446744073709551615\"))"),
            ],
        );
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
        s.push(1, Val::Str("x".into()));
        let c = s.into_column("m", 3);
        assert_eq!(c.dtype(), &DataType::String);
        assert_eq!(c.null_count(), 1);
        let mut s = Sparse::default();
        s.push(1, Val::Int(7));
        let c = s.into_column("i", 2);
        assert_eq!(c.dtype(), &DataType::Int64);
    }
}
