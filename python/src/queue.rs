//! HTA's queue-length time series as columns of bytes, which numpy reads without a Python
//! object per value.
//!
//! HTA orders the points of a rank with numpy's quicksort on `ts` (pandas' default,
//! unstable) over the launches and then the starts, each in file order; how it breaks ties
//! depends on numpy's build and the CPU, so that one sort stays numpy's: [`queue_sort_times`]
//! gives the times it sorts, and [`queue_series`] takes its order and does the rest (the
//! stable sort by stream, the running sum per stream).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::PyBytes;
use trace_frame::{Timeline, hta};

use crate::columns::to_bytes;
use crate::{HtaTrace, rel_us};

/// One point as HTA sorts it: (ts in µs from HTA's origin, device, stream, step of the
/// length, event index).
type Point = (f64, i64, i64, i64, i64);

/// The points of one rank in the order HTA hands them to its sort: the launches (a point
/// whose length rose), then the starts, each in event-index order (a stable sort of the
/// native series, stream by stream in time order).
fn presorted(t: &Timeline, min_ts: i64) -> Vec<Point> {
    let (mut launches, mut starts) = (Vec::new(), Vec::new());
    for (stream, points) in hta::queue_points(t) {
        let mut before = 0;
        for (ts, q, is_launch, g) in points {
            let a = &t.gpu[g];
            let index = if is_launch {
                a.launch.map(|l| t.host[l].event_index).unwrap_or(-1)
            } else {
                a.event_index
            };
            let step = q - before;
            before = q;
            let point = (rel_us(ts, min_ts), a.device, stream, step, index);
            if step > 0 {
                launches.push(point);
            } else {
                starts.push(point);
            }
        }
    }
    launches.sort_by_key(|p| p.4);
    starts.sort_by_key(|p| p.4);
    launches.extend(starts);
    launches
}

/// Per rank of `ranks`, the times (f64, µs) that HTA sorts, in the order it sorts them:
/// the caller sorts them with numpy's quicksort and hands the order to [`queue_series`].
#[pyfunction]
pub(crate) fn queue_sort_times<'py>(
    py: Python<'py>,
    trace: PyRef<'py, HtaTrace>,
    ranks: Vec<i64>,
) -> Vec<Bound<'py, PyBytes>> {
    let times = ranks.iter().map(|&r| {
        let points = (trace.of(r)).map_or_else(Vec::new, |t| presorted(t, trace.min_ts));
        points.iter().flat_map(|p| p.0.to_ne_bytes()).collect()
    });
    to_bytes(py, times)
}

/// Per rank of `ranks`, its queue-length series given `orders` (per rank, numpy's quicksort
/// order (i64) of [`queue_sort_times`]' times): stream by stream in stream order, the
/// points of each in that order, as five columns of native-endian bytes: ts in µs (f64),
/// device, stream, length, event index (i64). ValueError where an order is not a
/// permutation of its rank's points.
#[pyfunction]
pub(crate) fn queue_series<'py>(
    py: Python<'py>,
    trace: PyRef<'py, HtaTrace>,
    ranks: Vec<i64>,
    orders: Vec<PyBackedBytes>,
) -> PyResult<Vec<Vec<Bound<'py, PyBytes>>>> {
    if orders.len() != ranks.len() {
        return Err(PyValueError::new_err("one order per rank"));
    }
    let mut out = Vec::with_capacity(ranks.len());
    for (&r, order) in ranks.iter().zip(&orders) {
        let points = (trace.of(r)).map_or_else(Vec::new, |t| presorted(t, trace.min_ts));
        let order = permutation(order, points.len()).ok_or_else(|| {
            PyValueError::new_err(format!("rank {r}: not an order of its points"))
        })?;
        let mut sorted: Vec<&Point> = order.iter().map(|&k| &points[k]).collect();
        sorted.sort_by_key(|p| p.2);
        let mut cols: [Vec<u8>; 5] = Default::default();
        let (mut stream, mut length) = (None, 0);
        for &&(ts, device, s, step, index) in &sorted {
            if stream != Some(s) {
                (stream, length) = (Some(s), 0);
            }
            length += step;
            cols[0].extend(ts.to_ne_bytes());
            for (c, v) in [(1, device), (2, s), (3, length), (4, index)] {
                cols[c].extend(v.to_ne_bytes());
            }
        }
        out.push(to_bytes(py, cols));
    }
    Ok(out)
}

/// `bytes` as i64 positions, when they are each of `0..n` once.
fn permutation(bytes: &[u8], n: usize) -> Option<Vec<usize>> {
    if bytes.len() != 8 * n {
        return None;
    }
    let mut seen = vec![false; n];
    let mut out = Vec::with_capacity(n);
    for chunk in bytes.chunks_exact(8) {
        let k = usize::try_from(i64::from_ne_bytes(chunk.try_into().ok()?)).ok()?;
        if k >= n || std::mem::replace(&mut seen[k], true) {
            return None;
        }
        out.push(k);
    }
    Some(out)
}
