//! The integer ranges HTA's parser sees in a trace, which decide the integer dtypes of
//! its frames (HTA stores a column in the smallest type that holds its range).

/// The range of `args.stream` and of `args.correlation` over the complete events HTA's
/// parser keeps (a category but `python_function` and `Trace`), with HTA's -1 for an
/// event without one: HTA stores each column in the smallest integer type that holds its
/// range, and its frames carry that type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HtaIntRanges {
    /// (min, max) of `args.stream`.
    pub stream: (i64, i64),
    /// (min, max) of `args.correlation`.
    pub correlation: (i64, i64),
    /// (min, max) of the events' positions in `traceEvents` (HTA's `index` column; empty,
    /// `(i64::MAX, i64::MIN)`, without events).
    pub index: (i64, i64),
}

impl Default for HtaIntRanges {
    fn default() -> HtaIntRanges {
        HtaIntRanges {
            stream: (-1, -1),
            correlation: (-1, -1),
            index: (i64::MAX, i64::MIN),
        }
    }
}

impl HtaIntRanges {
    /// Widens the ranges by one event's values.
    pub fn add(&mut self, stream: Option<i64>, correlation: Option<i64>, index: i64) {
        let widen = |r: &mut (i64, i64), v: i64| *r = (r.0.min(v), r.1.max(v));
        widen(&mut self.stream, stream.unwrap_or(-1));
        widen(&mut self.correlation, correlation.unwrap_or(-1));
        widen(&mut self.index, index);
    }

    /// The ranges of both.
    pub fn merge(self, o: HtaIntRanges) -> HtaIntRanges {
        let m = |a: (i64, i64), b: (i64, i64)| (a.0.min(b.0), a.1.max(b.1));
        HtaIntRanges {
            stream: m(self.stream, o.stream),
            correlation: m(self.correlation, o.correlation),
            index: m(self.index, o.index),
        }
    }
}
