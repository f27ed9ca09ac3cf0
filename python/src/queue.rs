//! HTA's queue-length time series as columns of bytes, which numpy reads without a Python
//! object per value.

use trace_frame::{Timeline, hta};

use crate::rel_us;

/// The queue-length series of one rank, stream by stream in stream order, points in time
/// order, as five columns of native-endian bytes: event index, ts in µs from HTA's origin
/// `min_ts` (f64), device, stream, length (i64).
pub(crate) fn queue_columns(t: &Timeline, min_ts: i64) -> [Vec<u8>; 5] {
    let mut cols: [Vec<u8>; 5] = Default::default();
    for (stream, points) in hta::queue_points(t) {
        for (ts, q, is_launch, g) in points {
            let a = &t.gpu[g];
            let index = if is_launch {
                a.launch.map(|l| t.host[l].event_index).unwrap_or(-1)
            } else {
                a.event_index
            };
            cols[1].extend(rel_us(ts, min_ts).to_ne_bytes());
            for (c, v) in [(0, index), (2, a.device), (3, stream), (4, q)] {
                cols[c].extend(v.to_ne_bytes());
            }
        }
    }
    cols
}
