//! The rows of HTA's launch statistics, idle gaps, kernel-type intervals, memory activities
//! and user annotations as columns of native-endian bytes: `tracewise.hta` reads each with
//! `np.frombuffer`, without a Python object per value (a list of row tuples cost more than
//! the analysis itself, and fed Python's cyclic GC).

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use trace_frame::{HostCat, Timeline, hta};

use crate::rel_us;

/// Each column as one Python `bytes`.
pub(crate) fn to_bytes<'py>(
    py: Python<'py>,
    cols: impl IntoIterator<Item = Vec<u8>>,
) -> Vec<Bound<'py, PyBytes>> {
    cols.into_iter().map(|c| PyBytes::new(py, &c)).collect()
}

/// Names and `N` columns of bytes of a rank's timeline, from its HTA origin (`min_ts`).
type NamedColumns<const N: usize> = fn(&Timeline, i64) -> (Vec<String>, [Vec<u8>; N]);

/// The (names, columns) that `columns_of` gives for a rank's timeline `t` (empty where
/// the rank has none), the columns as Python `bytes`.
pub(crate) fn named<'py, const N: usize>(
    py: Python<'py>,
    t: Option<&Timeline>,
    min_ts: i64,
    columns_of: NamedColumns<N>,
) -> (Vec<String>, Vec<Bound<'py, PyBytes>>) {
    match t {
        Some(t) => {
            let (names, cols) = columns_of(t, min_ts);
            (names, to_bytes(py, cols))
        }
        None => (Vec::new(), to_bytes(py, (0..N).map(|_| Vec::new()))),
    }
}

/// `get_cuda_kernel_launch_stats`' rows of one rank (`hta::launch_stats_with`), in HTA's
/// order: correlation (i64), cpu duration, gpu duration, launch delay (f64, µs).
pub(crate) fn launches(t: &Timeline, include_memory_events: bool) -> [Vec<u8>; 4] {
    let mut cols: [Vec<u8>; 4] = Default::default();
    for r in hta::launch_stats_with(t, include_memory_events).rows {
        cols[0].extend(r.correlation.to_ne_bytes());
        cols[1].extend(r.cpu_duration_us.to_ne_bytes());
        cols[2].extend(r.gpu_duration_us.to_ne_bytes());
        cols[3].extend(r.launch_delay_us.to_ne_bytes());
    }
    cols
}

/// The idle gaps of each stream (`hta::idle_gaps`), in HTA's stream order (first event
/// index, then stream): (stream, categories (u8: 0 host wait, 1 kernel wait, 2 other),
/// gaps (f64, µs)).
pub(crate) fn idle_gaps(
    t: &Timeline,
    consecutive_kernel_delay_us: i64,
) -> Vec<(i64, Vec<u8>, Vec<u8>)> {
    let mut streams = hta::idle_gaps(t, consecutive_kernel_delay_us);
    streams.sort_by_key(|s| (s.first_index, s.stream));
    let columns = |s: hta::StreamGaps| {
        let category = s.gaps.iter().map(|&(c, _)| c as u8).collect();
        let gap = s
            .gaps
            .iter()
            .flat_map(|&(_, g)| (g as f64 / 1000.0).to_ne_bytes());
        (s.stream, category, gap.collect())
    };
    streams.into_iter().map(columns).collect()
}

/// Each of HTA's kernel types' merged busy intervals (`hta::kernel_type_intervals`;
/// memory last, left out without `include_memory`): starts and ends (f64, µs from HTA's
/// origin `min_ts`), two columns per type.
pub(crate) fn kernel_type_intervals(
    t: &Timeline,
    min_ts: i64,
    include_memory: bool,
) -> Vec<Vec<u8>> {
    let classes = &hta::HTA_TYPES[..if include_memory { 3 } else { 2 }];
    let mut cols = Vec::new();
    for (_, intervals) in hta::kernel_type_intervals(t, classes) {
        let point = |at: fn(&(i64, i64)) -> i64| {
            let us = intervals.iter().map(|iv| rel_us(at(iv), min_ts));
            us.flat_map(f64::to_ne_bytes).collect::<Vec<u8>>()
        };
        cols.push(point(|iv| iv.0));
        cols.push(point(|iv| iv.1));
    }
    cols
}

/// HTA's memory type of a memcpy/memset name: `Memset`, the first 11 characters of a
/// `Memcpy` name (`Memcpy DtoH`), else `Memcpy Unknown`.
fn memory_type(name: &str) -> String {
    if name.starts_with("Memset") {
        "Memset".to_owned()
    } else if name.starts_with("Memcpy") {
        name.chars().take(11).collect()
    } else {
        "Memcpy Unknown".to_owned()
    }
}

/// The memory activities of one rank on a stream, in event-index (file) order: the memory
/// types present (sorted), and the columns start, end (f64, µs from `min_ts`), device
/// (i64), memory type (i64, into the types), `args["memory bandwidth (GB/s)"]` (f64, 0
/// where absent).
pub(crate) fn memory_ops(t: &Timeline, min_ts: i64) -> (Vec<String>, [Vec<u8>; 5]) {
    let mut ops: Vec<_> = (t.gpu.iter())
        .filter(|g| g.stream != -1 && t.hta_type(g.name) == hta::HtaKernelType::Memory)
        .collect();
    ops.sort_by_key(|g| g.event_index);
    let kinds: Vec<String> = ops.iter().map(|g| memory_type(t.name(g.name))).collect();
    let mut types = kinds.clone();
    types.sort_unstable();
    types.dedup();
    let mut cols: [Vec<u8>; 5] = Default::default();
    for (g, kind) in ops.iter().zip(&kinds) {
        let code = types.binary_search(kind).unwrap_or(0) as i64;
        let bw = t.memory_bw.get(&g.event_index).copied().unwrap_or(0.0);
        cols[0].extend(rel_us(g.start, min_ts).to_ne_bytes());
        cols[1].extend(rel_us(g.end, min_ts).to_ne_bytes());
        cols[2].extend(g.device.to_ne_bytes());
        cols[3].extend(code.to_ne_bytes());
        cols[4].extend(bw.to_ne_bytes());
    }
    (types, cols)
}

/// The `user_annotation` host events of one rank HTA keeps, in file order: their names
/// (sorted, each once), and the columns name (i64, into the names) and duration (f64, µs:
/// end − start, each in µs from `min_ts`, as HTA's frame subtracts them).
pub(crate) fn host_annotations(t: &Timeline, min_ts: i64) -> (Vec<String>, [Vec<u8>; 2]) {
    let rows: Vec<_> = (t.host.iter())
        .filter(|h| h.cat == HostCat::Annotation)
        .collect();
    let mut names: Vec<&str> = rows.iter().map(|h| t.name(h.name)).collect();
    names.sort_unstable();
    names.dedup();
    let mut cols: [Vec<u8>; 2] = Default::default();
    for h in rows {
        let code = names.binary_search(&t.name(h.name)).unwrap_or(0) as i64;
        let dur = rel_us(h.end, min_ts) - rel_us(h.start, min_ts);
        cols[0].extend(code.to_ne_bytes());
        cols[1].extend(dur.to_ne_bytes());
    }
    (names.into_iter().map(str::to_owned).collect(), cols)
}
