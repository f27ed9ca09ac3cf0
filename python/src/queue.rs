//! HTA's queue-length time series as columns of bytes, which numpy reads without a Python
//! object per value.
//!
//! HTA orders the points of a rank with numpy's quicksort on `ts` (pandas' default,
//! unstable) over the launches and then the starts, each in file order; how it breaks ties
//! depends on numpy's build and the CPU, so that one sort stays numpy's: [`queue_presorted`]
//! gives the points with the times it sorts, and [`queue_series`] takes them back with its
//! order and does the rest (the stable sort by stream, the running sum per stream).

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
    // numpy's stable sort by index (each stream's points come in runs that a stable sort
    // merges).
    launches.sort_by_key(|p| p.4);
    starts.sort_by_key(|p| p.4);
    launches.extend(starts);
    launches
}

/// Per rank of `ranks`, its points in the order HTA hands them to its sort, as five
/// columns of native-endian bytes: ts in µs (f64, the values HTA sorts), device, stream,
/// step of the length, event index (i64). The caller sorts the times with numpy's
/// quicksort and hands the columns and that order to [`queue_series`].
#[pyfunction]
pub(crate) fn queue_presorted<'py>(
    py: Python<'py>,
    trace: PyRef<'py, HtaTrace>,
    ranks: Vec<i64>,
) -> Vec<Vec<Bound<'py, PyBytes>>> {
    let columns = |r: i64| {
        let points = (trace.of(r)).map_or_else(Vec::new, |t| presorted(t, trace.min_ts));
        let mut cols: [Vec<u8>; 5] = Default::default();
        for &(ts, device, stream, step, index) in &points {
            cols[0].extend(ts.to_ne_bytes());
            for (c, v) in [(1, device), (2, stream), (3, step), (4, index)] {
                cols[c].extend(v.to_ne_bytes());
            }
        }
        to_bytes(py, cols)
    };
    ranks.into_iter().map(columns).collect()
}

/// Per rank, its queue-length series from its columns of [`queue_presorted`] (`points`)
/// and `orders` (numpy's quicksort order (i64) of its times): stream by stream in stream
/// order, the points of each in that order, as five columns of native-endian bytes: ts in
/// µs (f64), device, stream, length, event index (i64). ValueError where the columns are
/// not five of one length or an order is not a permutation of its points.
#[pyfunction]
pub(crate) fn queue_series<'py>(
    py: Python<'py>,
    points: Vec<Vec<PyBackedBytes>>,
    orders: Vec<PyBackedBytes>,
) -> PyResult<Vec<Vec<Bound<'py, PyBytes>>>> {
    if orders.len() != points.len() {
        return Err(PyValueError::new_err("one order per rank"));
    }
    let mut out = Vec::with_capacity(points.len());
    for (cols, order) in points.iter().zip(&orders) {
        let n = cols.first().map_or(0, |c| c.len() / 8);
        if cols.len() != 5 || cols.iter().any(|c| c.len() != 8 * n) {
            return Err(PyValueError::new_err("five columns of one length per rank"));
        }
        let order = permutation(order, n)
            .ok_or_else(|| PyValueError::new_err("not an order of the points"))?;
        let ints = |c: usize| -> Vec<i64> {
            (cols[c].chunks_exact(8))
                .map(|b| i64::from_ne_bytes(b.try_into().unwrap_or_default()))
                .collect()
        };
        let (ts, device, stream, step, index) = (&cols[0], ints(1), ints(2), ints(3), ints(4));
        // A stable sort by stream: the points of each stream (a few streams) in the order.
        let mut streams: Vec<i64> = stream.clone();
        streams.sort_unstable();
        streams.dedup();
        let mut buckets: Vec<Vec<usize>> = vec![Vec::new(); streams.len()];
        for k in order {
            let at = streams.binary_search(&stream[k]).unwrap_or_default();
            buckets[at].push(k);
        }
        let mut series: [Vec<u8>; 5] = std::array::from_fn(|_| Vec::with_capacity(8 * n));
        for (&s, bucket) in streams.iter().zip(&buckets) {
            let mut length = 0;
            for &k in bucket {
                length += step[k];
                series[0].extend_from_slice(&ts[8 * k..8 * k + 8]);
                for (c, v) in [(1, device[k]), (2, s), (3, length), (4, index[k])] {
                    series[c].extend(v.to_ne_bytes());
                }
            }
        }
        out.push(to_bytes(py, series));
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
