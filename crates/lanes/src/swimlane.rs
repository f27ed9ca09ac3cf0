//! A swimlane layout of one time window as plain data: one row per GPU stream (or per
//! semantic lane), then one per host thread that launched work, for a report to draw.

use std::collections::BTreeMap;
use std::path::Path;

use chrome_reader::RawEvent;
use trace_model::Nanos;

use crate::event::is_gpu_slice;
use crate::{Error, Group, pack};

/// How GPU slices are split into rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RowMode {
    /// One row per (device process, stream), as recorded.
    Streams,
    /// One row per (device process, semantic group, packed lane), as the compaction packs them.
    SemanticLanes,
}

/// What a row shows.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum RowKind {
    /// A GPU stream as recorded.
    GpuStream {
        /// The process, as written in the trace.
        pid: String,
        /// The stream, as written.
        stream: String,
    },
    /// A packed lane of one semantic group.
    SemanticLane {
        /// The process, as written in the trace.
        pid: String,
        /// The lane group.
        group: Group,
        /// The lane within its group, from zero.
        lane: u32,
    },
    /// A host thread.
    HostThread {
        /// The process, as written in the trace.
        pid: String,
        /// The thread, as written.
        tid: String,
    },
}

/// One drawn interval; times in ns on the trace's time base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwimlaneItem {
    /// Start.
    pub start: Nanos,
    /// Duration.
    pub dur: Nanos,
    /// Event name.
    pub name: String,
    /// Event category.
    pub cat: String,
}

/// One row of a layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwimlaneRow {
    /// What the row shows.
    pub kind: RowKind,
    /// The row title.
    pub label: String,
    /// Sorted by start.
    pub items: Vec<SwimlaneItem>,
}

/// Rows over `[start, end)`: GPU rows first (by pid, then stream or lane), then
/// host launch threads (by pid, tid). Items overlapping the window are kept whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwimlaneLayout {
    /// Start.
    pub start: Nanos,
    /// End of the window.
    pub end: Nanos,
    /// The rows, in display order.
    pub rows: Vec<SwimlaneRow>,
}

fn is_host_launch(ev: &RawEvent<'_>) -> bool {
    matches!(ev.cat.as_deref(), Some("cuda_runtime" | "cuda_driver"))
}

/// Lays out the window `[start, end)` of the trace at `path`.
pub fn swimlane_layout(
    path: &Path,
    start: Nanos,
    end: Nanos,
    mode: RowMode,
) -> Result<SwimlaneLayout, Error> {
    let mut gpu: BTreeMap<(String, String), Vec<(Group, SwimlaneItem)>> = BTreeMap::new();
    let mut host: BTreeMap<(String, String), Vec<SwimlaneItem>> = BTreeMap::new();
    let mut thread_names: BTreeMap<(String, String), String> = BTreeMap::new();
    chrome_reader::read_raw_file(path, |ev| {
        let key = || {
            (
                ev.pid.as_ref().map(ToString::to_string).unwrap_or_default(),
                ev.tid.as_ref().map(ToString::to_string).unwrap_or_default(),
            )
        };
        if &*ev.ph == "M" && ev.name.as_deref() == Some("thread_name") {
            #[derive(serde::Deserialize)]
            struct A {
                name: Option<String>,
            }
            if let Ok(Some(A { name: Some(name) })) = chrome_reader::decode_args::<A>(path, &ev) {
                thread_names.insert(key(), name);
            }
            return Ok(());
        }
        let slice = is_gpu_slice(ev.cat.as_deref());
        if !(slice || is_host_launch(&ev)) || &*ev.ph != "X" {
            return Ok(());
        }
        let (Some(ts), Some(dur)) = (
            ev.ts.and_then(|n| n.micros_to_nanos()),
            ev.dur.and_then(|n| n.micros_to_nanos()),
        ) else {
            return Ok(());
        };
        if ts >= end.0 || ts.saturating_add(dur.max(0)) < start.0 {
            return Ok(());
        }
        let item = SwimlaneItem {
            start: Nanos(ts),
            dur: Nanos(dur.max(0)),
            name: ev.name.as_deref().unwrap_or("").to_string(),
            cat: ev.cat.as_deref().unwrap_or("").to_string(),
        };
        if slice {
            let group = Group::classify(&item.cat, &item.name);
            gpu.entry(key()).or_default().push((group, item));
        } else {
            host.entry(key()).or_default().push(item);
        }
        Ok(())
    })?;

    let mut rows = Vec::new();
    match mode {
        RowMode::Streams => {
            for ((pid, stream), items) in gpu {
                let mut items: Vec<SwimlaneItem> = items.into_iter().map(|(_, i)| i).collect();
                items.sort_by_key(|i| (i.start, i.dur));
                let label = thread_names
                    .get(&(pid.clone(), stream.clone()))
                    .cloned()
                    .unwrap_or_else(|| format!("GPU {pid} stream {stream}"));
                rows.push(SwimlaneRow {
                    kind: RowKind::GpuStream { pid, stream },
                    label,
                    items,
                });
            }
        }
        RowMode::SemanticLanes => {
            let mut by_group: BTreeMap<(String, Group), Vec<SwimlaneItem>> = BTreeMap::new();
            for ((pid, _), items) in gpu {
                for (group, item) in items {
                    by_group.entry((pid.clone(), group)).or_default().push(item);
                }
            }
            for ((pid, group), items) in by_group {
                let intervals: Vec<(i64, i64)> = items
                    .iter()
                    .map(|i| (i.start.0, (i.start + i.dur).0))
                    .collect();
                let lanes = pack(&intervals);
                let count = lanes.iter().copied().max().map_or(0, |m| m + 1);
                let mut per_lane: Vec<Vec<SwimlaneItem>> = vec![Vec::new(); count as usize];
                for (item, lane) in items.into_iter().zip(lanes) {
                    per_lane[lane as usize].push(item);
                }
                for (lane, mut items) in per_lane.into_iter().enumerate() {
                    items.sort_by_key(|i| (i.start, i.dur));
                    let label = if count > 1 {
                        format!("GPU {pid} {} {}", group.label(), lane + 1)
                    } else {
                        format!("GPU {pid} {}", group.label())
                    };
                    rows.push(SwimlaneRow {
                        kind: RowKind::SemanticLane {
                            pid: pid.clone(),
                            group,
                            lane: lane as u32,
                        },
                        label,
                        items,
                    });
                }
            }
        }
    }
    for ((pid, tid), mut items) in host {
        items.sort_by_key(|i| (i.start, i.dur));
        let label = thread_names
            .get(&(pid.clone(), tid.clone()))
            .cloned()
            .unwrap_or_else(|| format!("host {pid} thread {tid}"));
        rows.push(SwimlaneRow {
            kind: RowKind::HostThread { pid, tid },
            label,
            items,
        });
    }
    Ok(SwimlaneLayout { start, end, rows })
}
