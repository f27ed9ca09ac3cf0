//! The capture under construction: readers fill a [`CaptureBuilder`], whose `finish` checks
//! times, sorts and links, and only then hands out a read-only [`Capture`].

use std::path::Path;

use crate::capture::SideTables;
use crate::link::join;
use crate::{
    ActivityDetails, Capture, Device, Diagnostics, FastMap, Format, GpuActivity, GpuAnnotation,
    HloModule, HostEvent, HostThread, Interner, ModuleId, Nanos, Step, Stream, TraceMeta,
};

/// The diagnostic code of events left out for their time (see [`CaptureBuilder::finish`]).
pub const TIME_OUT_OF_RANGE: &str = "time-out-of-range";

fn time_out_of_range_message() -> String {
    "events whose time or end lies outside ±2^62 ns, whose duration is negative or longer than \
     7 days, or that lie more than 7 days from the capture's median event time were left out"
        .to_string()
}

/// A capture being read: the same tables as [`Capture`], public and in any order.
///
/// Readers push what they find and call [`CaptureBuilder::finish`] once. Ids
/// ([`crate::StreamId`], [`crate::ThreadId`], ...) index the builder's tables; the links
/// between events (`launch`, `parent_op`) are only made by `finish`. What only some events
/// have goes in through [`CaptureBuilder::push_activity`] and
/// [`CaptureBuilder::push_host_event`], keyed by the event's source index.
#[derive(Debug, Clone)]
pub struct CaptureBuilder {
    /// The file format being read.
    pub format: Format,
    /// Interned names.
    pub strings: Interner,
    /// Devices, in id order.
    pub devices: Vec<Device>,
    /// Streams, in id order.
    pub streams: Vec<Stream>,
    /// Host threads, in id order.
    pub threads: Vec<HostThread>,
    /// GPU activities, in any order.
    pub activities: Vec<GpuActivity>,
    /// Host events, in any order.
    pub host_events: Vec<HostEvent>,
    /// GPU annotations, in any order.
    pub gpu_annotations: Vec<GpuAnnotation>,
    /// Steps, in any order.
    pub steps: Vec<Step>,
    /// Capture-wide metadata.
    pub meta: TraceMeta,
    /// Oddities met so far.
    pub diagnostics: Diagnostics,
    hlo_modules: Vec<HloModule>,
    module_ids: FastMap<HloModule, ModuleId>,
    pub(crate) sides: SideTables,
}

impl CaptureBuilder {
    /// An empty capture of `format`.
    pub fn new(format: Format) -> Self {
        CaptureBuilder {
            format,
            strings: Interner::new(),
            devices: Vec::new(),
            streams: Vec::new(),
            threads: Vec::new(),
            activities: Vec::new(),
            host_events: Vec::new(),
            gpu_annotations: Vec::new(),
            steps: Vec::new(),
            meta: TraceMeta::default(),
            diagnostics: Diagnostics::default(),
            hlo_modules: Vec::new(),
            module_ids: FastMap::default(),
            sides: SideTables::default(),
        }
    }

    /// Pushes an activity with what only some activities have: each detail present is kept
    /// under the activity's source index, and the module and program id become one entry
    /// of [`Capture::hlo_modules`] per distinct pair.
    pub fn push_activity(&mut self, mut activity: GpuActivity, details: ActivityDetails) {
        let index = activity.source_index;
        let sides = &mut self.sides;
        if let Some(id) = details.external_id {
            sides.activity_external_ids.push(index, id);
        }
        if let Some(bytes) = details.bytes {
            sides.activity_bytes.push(index, bytes);
        }
        if let Some(id) = details.graph_id {
            sides.activity_graph_ids.push(index, id);
        }
        let module = HloModule {
            name: details.hlo_module,
            program_id: details.program_id,
        };
        if module.name.is_some() || module.program_id.is_some() {
            let next = ModuleId::new(self.hlo_modules.len() as u32);
            let id = *self.module_ids.entry(module).or_insert(next);
            if id == next {
                self.hlo_modules.push(module);
            }
            activity.set_module(Some(id));
        }
        self.activities.push(activity);
    }

    /// Pushes a host event with Kineto's `External id`, if it has one.
    pub fn push_host_event(&mut self, event: HostEvent, external_id: Option<i64>) {
        if let Some(id) = external_id {
            self.sides.host_external_ids.push(event.source_index, id);
        }
        self.host_events.push(event);
    }

    /// Records the shape arguments of the CPU op with this source index.
    pub fn set_op_shapes(&mut self, source_index: u64, shapes: crate::OpShapes) {
        self.sides.host_shapes.push(source_index, shapes);
    }

    /// Counts one event left out because its time or end does not fit the representable
    /// range (`Nanos::LIMIT`); readers call it where they meet one. `place` names the file
    /// and the event.
    pub fn note_time_out_of_range(&mut self, place: impl FnOnce() -> String) {
        self.diagnostics
            .add(TIME_OUT_OF_RANGE, time_out_of_range_message, place);
    }

    /// Makes the capture; `source` names the file in diagnostics. In order:
    ///
    /// 1. Leaves out every activity, host event, GPU annotation and step whose start or end
    ///    is outside ±`Nanos::LIMIT`, whose duration is negative or exceeds `Nanos::FAR`, or
    ///    which starts more than `Nanos::FAR` from the median start of the capture's events,
    ///    counting them in the [`TIME_OUT_OF_RANGE`] diagnostic. Afterwards every difference
    ///    of two times in the capture is small enough for plain `Nanos` arithmetic.
    /// 2. Sorts host events by `(thread, start, source_index)` and steps by
    ///    `(start, number)`.
    /// 3. Links each activity to its launch and each launch to its CPU op (see
    ///    `sort_and_link` in the source), sorting activities by
    ///    `(stream, start, source_index)` on the way.
    pub fn finish(self, source: &Path) -> Capture {
        self.finish_on(source, 1)
    }

    /// [`CaptureBuilder::finish`] with its sorts and linking passes on a pool of `threads`
    /// threads: the rayon pool it is called on, if any, else one of its own (with 1, or a
    /// pool that cannot be started, everything runs on the caller's thread). The capture
    /// is the same.
    pub fn finish_on(mut self, source: &Path, threads: usize) -> Capture {
        let source = source.display().to_string();
        let mut finish = |parallel: bool| {
            self.drop_far_events(&source, parallel);
            self.sort_and_link(&source, parallel);
        };
        let on_a_pool = rayon::current_thread_index().is_some();
        let pool = (threads > 1 && !on_a_pool)
            .then(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .ok()
            })
            .flatten();
        match &pool {
            Some(pool) => pool.install(|| finish(true)),
            None => finish(threads > 1 && on_a_pool),
        }
        let CaptureBuilder {
            format,
            strings,
            devices,
            streams,
            threads,
            activities,
            host_events,
            gpu_annotations,
            steps,
            meta,
            diagnostics,
            hlo_modules,
            module_ids: _,
            sides,
        } = self;
        Capture {
            format,
            strings,
            devices,
            streams,
            threads,
            activities,
            host_events,
            gpu_annotations,
            steps,
            meta,
            diagnostics,
            hlo_modules,
            sides,
        }
    }

    fn drop_far_events(&mut self, file: &str, parallel: bool) {
        let far = Nanos::FAR.0.unsigned_abs();
        let (activities, host_events) = (&self.activities, &self.host_events);
        let (a, b) = join(
            parallel,
            || TimeSpan::of(activities.iter().map(|a| (a.start, a.dur))),
            || TimeSpan::of(host_events.iter().map(|e| (e.start, e.dur))),
        );
        let (activities_fit, host_events_fit) = (a.all_fit, b.all_fit);
        let span = a.merge(b);
        // The median lies between the least and the greatest start: a time within `FAR`
        // of both is within `FAR` of the median, whatever it is. When every time checked
        // below is, the median's counting passes (a third of this function on the 1 GB
        // synthetic trace) are not needed; with no start at all, the median is 0.
        let surely_near = |start: Nanos| match span.starts {
            Some((least, greatest)) => {
                start.0.abs_diff(least) <= far && start.0.abs_diff(greatest) <= far
            }
            None => start.0.unsigned_abs() <= far,
        };
        let steps = self.steps.iter().flat_map(|s| [s.start, s.end]);
        let window = self
            .meta
            .window
            .into_iter()
            .flat_map(|(start, end)| [start, end]);
        let median_needed = !span.starts_near
            || !self
                .gpu_annotations
                .iter()
                .map(|a| a.start)
                .chain(steps)
                .chain(window)
                .filter(|s| s.in_range())
                .all(surely_near);
        let median = median_needed.then(|| {
            median(
                |part| {
                    // One type for both parts: the activities' starts, or the host events'.
                    let (activities, host_events) = if part == 0 {
                        (&activities[..], &host_events[..0])
                    } else {
                        (&activities[..0], &host_events[..])
                    };
                    activities
                        .iter()
                        .map(|a| a.start)
                        .chain(host_events.iter().map(|e| e.start))
                        .filter(|s| s.in_range())
                        .map(|s| s.0)
                },
                MEDIAN_COPY_LIMIT,
                parallel,
            )
        });
        let fits = |start: Nanos, dur: Nanos| {
            fits_range(start, dur)
                && median.map_or_else(|| surely_near(start), |m| start.0.abs_diff(m) <= far)
        };
        // Without the median, every start in range is near the others (`starts_near`):
        // a table whose rows all fit their range keeps every row, and needs no pass.
        let keeps_all = |all_fit: bool| median.is_none() && all_fit;
        let (keep_activities, keep_host_events) =
            (keeps_all(activities_fit), keeps_all(host_events_fit));
        // Activities and host events, each with its side tables, side by side; what is
        // left out are the source indices of the events dropped (few or none), sorted.
        let SideTables {
            activity_external_ids,
            activity_bytes,
            activity_graph_ids,
            host_external_ids,
            host_shapes,
        } = &mut self.sides;
        let (activities, host_events) = (&mut self.activities, &mut self.host_events);
        let (dropped_activities, dropped_host_events) = join(
            parallel,
            || {
                let dropped = if keep_activities {
                    Vec::new()
                } else {
                    retain_fitting(activities, |a| (a.start, a.dur, a.source_index), &fits)
                };
                let kept = |index: u64| dropped.binary_search(&index).is_err();
                activity_external_ids.finish(kept);
                activity_bytes.finish(kept);
                activity_graph_ids.finish(kept);
                dropped
            },
            || {
                let dropped = if keep_host_events {
                    Vec::new()
                } else {
                    retain_fitting(host_events, |e| (e.start, e.dur, e.source_index), &fits)
                };
                let kept = |index: u64| dropped.binary_search(&index).is_err();
                host_external_ids.finish(kept);
                host_shapes.finish(kept);
                dropped
            },
        );
        let dropped = (dropped_activities.len() + dropped_host_events.len()) as u64;
        let first = dropped_activities
            .first()
            .into_iter()
            .chain(dropped_host_events.first())
            .min()
            .copied();
        let before = self.gpu_annotations.len() + self.steps.len();
        self.gpu_annotations.retain(|a| fits(a.start, a.dur));
        self.steps
            .retain(|s| fits(s.start, Nanos::ZERO) && fits(s.end, Nanos::ZERO));
        let other = (before - self.gpu_annotations.len() - self.steps.len()) as u64;
        if let Some(k) = &mut self.meta.kineto {
            // Each is one of the host events too, counted there when left out.
            k.syncs.retain(|y| fits(y.start, y.dur));
            k.sort();
        }
        if let Some((start, end)) = self.meta.window
            && !(fits(start, Nanos::ZERO) && fits(end, Nanos::ZERO))
        {
            self.meta.window = None;
        }
        let place = match first {
            Some(index) => format!("{file}: event {index}"),
            None => file.to_string(),
        };
        self.diagnostics.add_many(
            TIME_OUT_OF_RANGE,
            dropped + other,
            time_out_of_range_message(),
            place,
        );
    }
}

/// What one pass over events' starts tells: the least and greatest start within
/// ±`Nanos::LIMIT` (`None`: no such start), and whether those lie within `Nanos::FAR` of
/// each other.
struct TimeSpan {
    starts: Option<(i64, i64)>,
    starts_near: bool,
    /// Whether every row's `(start, dur)` passes [`fits_range`].
    all_fit: bool,
}

impl TimeSpan {
    fn of(rows: impl Iterator<Item = (Nanos, Nanos)>) -> TimeSpan {
        let mut starts: Option<(i64, i64)> = None;
        let mut all_fit = true;
        for (start, dur) in rows {
            all_fit &= fits_range(start, dur);
            if start.in_range() {
                let s = start.0;
                starts = Some(starts.map_or((s, s), |(lo, hi)| (lo.min(s), hi.max(s))));
            }
        }
        TimeSpan::new(starts, all_fit)
    }

    fn new(starts: Option<(i64, i64)>, all_fit: bool) -> TimeSpan {
        let starts_near =
            starts.is_none_or(|(lo, hi)| hi.abs_diff(lo) <= Nanos::FAR.0.unsigned_abs());
        TimeSpan {
            starts,
            starts_near,
            all_fit,
        }
    }

    fn merge(self, other: TimeSpan) -> TimeSpan {
        let starts = match (self.starts, other.starts) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (one, None) | (None, one) => one,
        };
        TimeSpan::new(starts, self.all_fit && other.all_fit)
    }
}

/// Whether an event's start and end lie within ±[`Nanos::LIMIT`] and its duration within
/// `0..=FAR` (its distance from the other events is checked apart).
fn fits_range(start: Nanos, dur: Nanos) -> bool {
    start.in_range() && (0..=Nanos::FAR.0).contains(&dur.0) && (start + dur).in_range()
}

/// Keeps the rows whose `(start, dur)` `fits` (`fields` gives them and the source index);
/// returns the source indices of the others, sorted.
fn retain_fitting<T>(
    rows: &mut Vec<T>,
    fields: impl Fn(&T) -> (Nanos, Nanos, u64),
    fits: &impl Fn(Nanos, Nanos) -> bool,
) -> Vec<u64> {
    let mut dropped = Vec::new();
    rows.retain(|row| {
        let (start, dur, index) = fields(row);
        let keep = fits(start, dur);
        if !keep {
            dropped.push(index);
        }
        keep
    });
    dropped.sort_unstable();
    dropped
}

/// How many times `median` copies at most: 8 MB, where a copy of every start of a large
/// capture was about a tenth of its model, at its memory peak.
const MEDIAN_COPY_LIMIT: usize = 1 << 20;

/// The value of rank `len / 2` of `values(0)` and `values(1)` together (what sorting them
/// would put in the middle; 0 when there are none), copying at most about `limit` of them:
/// while more share the bits found so far, one counting pass over both finds the next 16.
fn median<I: Iterator<Item = i64>>(
    values: impl Fn(usize) -> I + Sync,
    limit: usize,
    parallel: bool,
) -> i64 {
    // Offset binary: the order of the i64 values is that of these u64 keys. The values
    // come in two parts (activities, host events), counted side by side when `parallel`.
    let keys = |part: usize| values(part).map(|value| value as u64 ^ (1 << 63));
    let (first, second) = join(parallel, || keys(0).count(), || keys(1).count());
    let len = first + second;
    if len == 0 {
        return 0;
    }
    let mut rank = len / 2;
    let (mut prefix, mut matching, mut shift) = (0u64, len, 64u32);
    let mask = |shift: u32| if shift == 64 { 0 } else { !0u64 << shift };
    let mut counts = vec![0usize; 1 << 16];
    while matching > limit && shift > 0 {
        let high = mask(shift);
        shift -= 16;
        let count = |part: usize| {
            let mut counts = vec![0usize; 1 << 16];
            for key in keys(part).filter(|key| key & high == prefix) {
                counts[((key >> shift) & 0xffff) as usize] += 1;
            }
            counts
        };
        let (a, b) = join(parallel, || count(0), || count(1));
        for ((c, a), b) in counts.iter_mut().zip(&a).zip(&b) {
            *c = a + b;
        }
        let mut digit = 0;
        while rank >= counts[digit] {
            rank -= counts[digit];
            digit += 1;
        }
        prefix |= (digit as u64) << shift;
        matching = counts[digit];
    }
    let high = mask(shift);
    let mut rest: Vec<u64> = (0..2)
        .flat_map(|part| keys(part).filter(|key| key & high == prefix))
        .collect();
    let key = *rest.select_nth_unstable(rank).1;
    (key ^ (1 << 63)) as i64
}

#[cfg(test)]
mod tests {
    use crate::{
        ActivityDetails, ActivityKind, CaptureBuilder, Format, GpuActivity, HostEvent, HostKind,
        KernelClass, Nanos, StreamId, TIME_OUT_OF_RANGE, ThreadId,
    };
    use std::path::Path;

    fn host(c: &mut CaptureBuilder, thread: u32, start: i64, index: u64) {
        let name = c.strings.intern("op");
        let event = HostEvent::new(
            ThreadId::new(thread),
            Nanos(start),
            Nanos(1),
            name,
            HostKind::CpuOp,
            index,
        );
        c.push_host_event(event, Some(index as i64 * 10));
    }

    /// The counting median is the sorted middle, whatever the limit on copying.
    #[test]
    fn median_is_the_sorted_middle() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for len in [0usize, 1, 2, 3, 10, 1000, 5001] {
            for spread in [1u64, 1000, 1 << 40, u64::MAX] {
                let values: Vec<i64> = (0..len)
                    .map(|_| ((next() % spread) as i64).wrapping_sub((spread / 2) as i64))
                    .collect();
                let mut sorted = values.clone();
                sorted.sort_unstable();
                let expect = sorted.get(len / 2).copied().unwrap_or(0);
                for limit in [0, 1, 7, usize::MAX] {
                    // In one part, and split in two (counted on one thread and on two).
                    let got = super::median(
                        |part| values[..if part == 0 { len } else { 0 }].iter().copied(),
                        limit,
                        false,
                    );
                    assert_eq!(got, expect, "len {len}, spread {spread}, limit {limit}");
                    let (a, b) = values.split_at(len / 3);
                    for parallel in [false, true] {
                        let got = super::median(
                            |part| if part == 0 { a } else { b }.iter().copied(),
                            limit,
                            parallel,
                        );
                        assert_eq!(got, expect, "len {len}, spread {spread}, limit {limit}");
                    }
                }
            }
        }
        let extremes = [i64::MIN, i64::MAX, 0, -1, i64::MIN, 5];
        let (a, b) = extremes.split_at(2);
        let parts = |part: usize| if part == 0 { a } else { b }.iter().copied();
        assert_eq!(super::median(parts, 0, true), 0);
    }

    /// A step farther than `FAR` from the first and last event starts is judged by the
    /// median: kept when within `FAR` of it, left out when not; on one and two threads.
    #[test]
    fn steps_far_from_the_events_are_judged_by_the_median() {
        use crate::{Step, StepSource};
        for threads in [1, 2] {
            let mut c = CaptureBuilder::new(Format::KinetoJson);
            for (index, start) in [0, 5, 10].into_iter().enumerate() {
                host(&mut c, 0, start, index as u64);
            }
            for (number, start) in [(1, 3), (2, Nanos::FAR.0 + 5), (3, Nanos::FAR.0 + 20)] {
                c.steps.push(Step {
                    number,
                    start: Nanos(start),
                    end: Nanos(start),
                    source: StepSource::StepMarker,
                });
            }
            let c = c.finish_on(Path::new("t.json"), threads);
            let kept: Vec<i64> = c.steps().iter().map(|s| s.number).collect();
            assert_eq!(kept, [1, 2], "{threads} threads");
            let far = c
                .diagnostics()
                .get(TIME_OUT_OF_RANGE)
                .expect("one left out");
            assert_eq!(far.count, 1);
        }
    }

    #[test]
    fn finish_sorts_host_events_with_their_external_ids() {
        let mut c = CaptureBuilder::new(Format::KinetoJson);
        // Source order: (thread 1, t=5), (thread 0, t=9), (thread 0, t=2), (thread 1, t=1).
        host(&mut c, 1, 5, 0);
        host(&mut c, 0, 9, 1);
        host(&mut c, 0, 2, 2);
        host(&mut c, 1, 1, 3);
        let c = c.finish(Path::new("t.json"));
        let order: Vec<u64> = c.host_events().iter().map(|e| e.source_index).collect();
        assert_eq!(order, [2, 1, 3, 0]);
        let external: Vec<_> = c
            .host_events()
            .iter()
            .map(|e| c.host_external_id(e))
            .collect();
        assert_eq!(external, [Some(20), Some(10), Some(30), Some(0)]);
    }

    #[test]
    fn finish_sorts_activities_by_stream_and_drops_far_ones() {
        let mut c = CaptureBuilder::new(Format::XPlane);
        let name = c.strings.intern("k");
        let kernel = |stream: u32, start: i64, dur: i64, index: u64| {
            GpuActivity::new(
                StreamId::new(stream),
                Nanos(start),
                Nanos(dur),
                name,
                ActivityKind::Kernel,
                KernelClass::Other,
                index,
            )
        };
        let (jit, other) = (c.strings.intern("jit_step"), c.strings.intern("jit_other"));
        // Each activity carries details that follow it through the sort, by source index.
        for (stream, start, dur, index) in [
            (1, 10, 5, 0),
            (0, 30, 5, 1),
            (0, 20, -1, 2),
            (0, 20, 5, 3),
            (1, Nanos::FAR.0 * 2, 5, 4),
        ] {
            let details = ActivityDetails {
                external_id: Some(index as i64 + 100),
                bytes: (index % 2 == 1).then_some(index * 1000),
                graph_id: (index != 0).then_some(7),
                hlo_module: Some(if index == 3 { other } else { jit }),
                program_id: Some(1),
            };
            c.push_activity(kernel(stream, start, dur, index), details);
        }
        let c = c.finish(Path::new("t.pb"));
        let order: Vec<u64> = c.activities().iter().map(|a| a.source_index).collect();
        assert_eq!(order, [3, 1, 0]);
        let details: Vec<_> = c
            .activities()
            .iter()
            .map(|a| {
                (
                    c.activity_external_id(a),
                    c.activity_bytes(a),
                    c.activity_graph_id(a),
                    c.hlo_module(a).map(|m| c.name(m)),
                    c.program_id(a),
                )
            })
            .collect();
        assert_eq!(
            details,
            [
                (Some(103), Some(3000), Some(7), Some("jit_other"), Some(1)),
                (Some(101), Some(1000), Some(7), Some("jit_step"), Some(1)),
                (Some(100), None, None, Some("jit_step"), Some(1)),
            ]
        );
        // One module entry per distinct (name, program id); the entries of the events left
        // out are gone from the side tables.
        assert_eq!(c.hlo_modules().len(), 2);
        assert_eq!(c.sides.activity_external_ids.len(), 3);
        assert_eq!(c.sides.activity_bytes.len(), 2);
        let ones: Vec<u64> = c
            .stream_activities(StreamId::new(1))
            .iter()
            .map(|a| a.source_index)
            .collect();
        assert_eq!(ones, [0]);
        let far = c
            .diagnostics()
            .get(TIME_OUT_OF_RANGE)
            .expect("two left out");
        assert_eq!((far.count, far.first.as_str()), (2, "t.pb: event 2"));
    }
}
