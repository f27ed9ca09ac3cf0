//! [`Timeline::from_capture`]: one rank's timeline built from its loaded capture
//! (`trace_model::Capture`), names from the capture's strings, each GPU activity's launch
//! from the capture's one launch join (`trace_model::link`), steps from its steps, and
//! what HTA reads beyond the rows from [`trace_model::KinetoDetails`].

use std::path::Path;

use trace_model::{ActivityKind, Capture, FastMap, HostKind, Interner, KinetoDetails, StepSource};

use crate::hta_ranges::HtaIntRanges;
use crate::timeline::{Gpu, GpuKind, Host, HostCat, SyncEvent, Timeline};

/// `v` rounded up to a whole microsecond (in ns).
fn up_to_us(v: i64) -> i64 {
    v.div_euclid(1000) * 1000 + if v.rem_euclid(1000) > 0 { 1000 } else { 0 }
}

/// The end an event has in the file, as HTA's parser reads it: none without a `dur` (the
/// event is left out), before its start with a negative one (the model gives both
/// duration 0).
fn file_end(k: &KinetoDetails, index: u64, start: i64, model_end: i64) -> Option<i64> {
    match k.odd_duration(index) {
        None => Some(model_end),
        Some(Some(d)) => Some(start + d),
        Some(None) => None,
    }
}

/// The positions of `events` in file order (by source index, then position): placed by
/// their source index where the indices are unique and dense enough, sorted otherwise. The
/// capture's host events come sorted by (thread, start), so a comparison sort of their
/// positions was a full `n log n` sort (37M instructions of df_index_resolver's 62M
/// `from_capture`, callgrind).
fn file_order(events: &[trace_model::HostEvent]) -> Vec<usize> {
    let placed = || {
        let max = events.iter().map(|e| e.source_index).max()?;
        // A slot per source index up to the largest: at most a few times the events.
        let slots = usize::try_from(max).ok()?.checked_add(1)?;
        if slots > events.len().saturating_mul(4).max(1024) || events.len() >= u32::MAX as usize {
            return None;
        }
        let mut at: Vec<u32> = vec![u32::MAX; slots];
        for (i, e) in events.iter().enumerate() {
            let slot = &mut at[e.source_index as usize];
            if *slot != u32::MAX {
                return None; // two events with one source index: sorted below
            }
            *slot = i as u32;
        }
        Some(
            at.into_iter()
                .filter(|&i| i != u32::MAX)
                .map(|i| i as usize)
                .collect(),
        )
    };
    placed().unwrap_or_else(|| {
        let mut order: Vec<usize> = (0..events.len()).collect();
        order.sort_unstable_by_key(|&i| events[i].source_index);
        order
    })
}

/// The capture's CUDA sync events, each with its runtime call (`call_of`: the first
/// runtime or driver call of each correlation id, by position in the host events).
fn sync_events(k: &KinetoDetails, call_of: &FastMap<i64, usize>) -> Vec<SyncEvent> {
    (k.syncs.iter())
        .filter_map(|y| {
            let end = file_end(k, y.source_index, y.start.0, (y.start + y.dur).0)?;
            Some(SyncEvent {
                event_index: y.source_index as i64,
                kind: y.kind,
                device: y.device.unwrap_or(0),
                stream: y.stream.unwrap_or(-1),
                start: y.start.0,
                end,
                correlation: y.correlation,
                runtime: y.correlation.and_then(|c| call_of.get(&c).copied()),
                wait_on_stream: y.wait_on_stream.filter(|&s| s >= 0),
                wait_on_record: y.wait_on_record,
            })
        })
        .collect()
}

/// What HTA would read of the times of a capture of another format than Chrome JSON in
/// its Chrome JSON export (`chrome_reader::write_chrome_trace`, whose complete events are
/// the host events, the GPU activities and the GPU annotations, none of category
/// `Trace`): whether some start has a fraction of a microsecond, and the earliest start
/// (not rounded). The export's first event is metadata, without a time.
fn export_times(capture: &Capture) -> (bool, Option<i64>) {
    let starts = (capture.host_events().iter().map(|e| e.start.0))
        .chain(capture.activities().iter().map(|a| a.start.0))
        .chain(capture.gpu_annotations().iter().map(|g| g.start.0));
    let (mut fractional, mut min) = (false, None::<i64>);
    for s in starts {
        fractional |= s.rem_euclid(1000) != 0;
        min = Some(min.map_or(s, |m| m.min(s)));
    }
    (fractional, min)
}

impl Timeline {
    /// The timeline of one rank's capture read from `path` (before any HTA view), with
    /// the capture's rank and HTA's time origin ([`Timeline::hta_origin`]).
    ///
    /// - Host events are the capture's, in file order (source index), but the CUDA
    ///   synchronisation events, which are [`Timeline::syncs`]; a runtime or launch call
    ///   is [`HostCat::Driver`] when the trace's category was `cuda_driver`.
    /// - GPU activities are the capture's; each one's `launch` is the host event the
    ///   capture linked it to.
    /// - A sync event's runtime call and a stream op's launch are the first runtime or
    ///   driver call (in file order) with its correlation id: the capture links
    ///   activities only.
    /// - Steps are the capture's `ProfilerStep#N` steps.
    ///
    /// A capture of another format than Chrome JSON has no [`KinetoDetails`]: no sync
    /// events, driver calls, stream ops or bandwidths; its fractional-µs flag and HTA's
    /// origin are those HTA would read in its Chrome JSON export.
    pub fn from_capture(capture: &Capture, path: &Path) -> Timeline {
        let none = KinetoDetails::default();
        let k = capture.meta().kineto.as_deref().unwrap_or(&none);
        let mut names = Interner::new();
        // The timeline's id of each of the capture's strings, interned at first use: one
        // hash per distinct name, not one per event (the capture's ids are dense).
        let mut ids: Vec<u32> = vec![u32::MAX; capture.strings().strings().len()];
        let mut intern_id = |names: &mut Interner, id: trace_model::StringId| {
            let slot = &mut ids[id.index()];
            if *slot == u32::MAX {
                *slot = names.intern(capture.name(id)).index() as u32;
            }
            *slot
        };
        let events = capture.host_events();
        let order = file_order(events);
        let end_of = |index: u64, start: i64, model_end: i64| file_end(k, index, start, model_end);
        let is_sync = |index: u64| {
            (k.syncs)
                .binary_search_by_key(&index, |y| y.source_index)
                .is_ok()
        };
        let mut thread_names: Vec<Option<u32>> = vec![None; capture.threads().len()];
        let mut position: Vec<Option<usize>> = vec![None; events.len()];
        let mut host = Vec::with_capacity(events.len());
        let mut stream_ops = Vec::new();
        for i in order {
            let e = &events[i];
            if is_sync(e.source_index) {
                continue;
            }
            let Some(end) = end_of(e.source_index, e.start.0, e.end().0) else {
                continue;
            };
            let cat = match e.kind {
                HostKind::Launch | HostKind::Runtime if k.is_driver_call(e.source_index) => {
                    HostCat::Driver
                }
                HostKind::Launch | HostKind::Runtime => HostCat::Runtime,
                HostKind::CpuOp => HostCat::CpuOp,
                HostKind::Annotation => HostCat::Annotation,
                _ => HostCat::Other,
            };
            let correlation = e.correlation().map(|c| c as i64);
            let name = intern_id(&mut names, e.name);
            if e.kind != HostKind::PythonFrame
                && let Some(s) = k.host_stream(e.source_index)
                && s != -1
            {
                stream_ops.push(Gpu {
                    event_index: e.source_index as i64,
                    name,
                    kind: GpuKind::Other,
                    device: 0,
                    stream: s,
                    start: e.start.0,
                    end,
                    correlation,
                    launch: None,
                });
            }
            let thread = *thread_names[e.thread.index()].get_or_insert_with(|| {
                let t = capture.thread(e.thread);
                let text = |id: Option<trace_model::StringId>, n: i64| {
                    id.map_or_else(|| n.to_string(), |id| capture.name(id).to_owned())
                };
                let pid_tid = format!("{}/{}", text(t.pid_text, t.pid), text(t.tid_text, t.tid));
                names.intern(&pid_tid).index() as u32
            });
            position[i] = Some(host.len());
            host.push(Host {
                event_index: e.source_index as i64,
                name,
                cat,
                thread,
                start: e.start.0,
                end,
                correlation,
            });
        }
        // Sized for every activity: a filtered collect grows from nothing.
        let mut gpu: Vec<Gpu> = Vec::with_capacity(capture.activities().len());
        gpu.extend(
            (capture.activities().iter())
                .filter(|a| !k.lacks_stream(a.source_index))
                .filter_map(|a| {
                    let end = end_of(a.source_index, a.start.0, a.end().0)?;
                    let stream = capture.stream(a.stream);
                    Some(Gpu {
                        event_index: a.source_index as i64,
                        name: intern_id(&mut names, a.name),
                        kind: match a.kind {
                            ActivityKind::Memcpy => GpuKind::Memcpy,
                            ActivityKind::Memset => GpuKind::Memset,
                            _ => GpuKind::Kernel,
                        },
                        device: capture.device(stream.device).ordinal,
                        stream: stream.ordinal,
                        start: a.start.0,
                        end,
                        correlation: a.correlation().map(|c| c as i64),
                        launch: a.launch().and_then(|h| position[h.index()]),
                    })
                }),
        );
        // The activities come sorted by (stream, start): a few sorted runs, which the
        // stable sort merges (the keys are unique, so the order is an unstable sort's).
        gpu.sort_by_key(|g| (g.start, g.end, g.event_index));
        // The first runtime or driver call of each correlation id, for what the capture
        // does not link (sync events, stream ops).
        let mut call_of: FastMap<i64, usize> = FastMap::default();
        for (i, h) in host.iter().enumerate() {
            if matches!(h.cat, HostCat::Runtime | HostCat::Driver)
                && let Some(c) = h.correlation
            {
                call_of.entry(c).or_insert(i);
            }
        }
        for g in &mut stream_ops {
            g.launch = g.correlation.and_then(|c| call_of.get(&c).copied());
        }
        let syncs = sync_events(k, &call_of);
        let steps = (capture.steps().iter())
            .filter(|s| s.source == StepSource::ProfilerStep)
            .map(|s| (s.number, s.start.0, s.end.0))
            .collect();
        let names = names.strings().map(str::to_owned).collect();
        let mut t = Timeline::new(path.to_path_buf(), capture.meta().rank, names);
        t.gpu = gpu;
        t.host = host;
        t.syncs = syncs;
        t.steps = steps;
        t.stream_ops = stream_ops;
        t.fractional_us = k.fractional_us;
        t.first_event_ts = k.first_event_ts.map(|n| n.0);
        let mut origin = k.hta_origin.map(|o| o.0);
        if capture.meta().kineto.is_none() {
            (t.fractional_us, origin) = export_times(capture);
        }
        t.hta_origin = origin.map(|o| if t.fractional_us { up_to_us(o) } else { o });
        t.asked_symbols = capture.meta().kineto.as_ref().map(|k| k.asked);
        t.memory_bw = k.bandwidth.iter().map(|&(i, bw)| (i as i64, bw)).collect();
        let r = k.arg_ranges;
        t.hta_int_ranges = HtaIntRanges {
            stream: r.stream,
            correlation: r.correlation,
            index: r.index,
        };
        t
    }
}
