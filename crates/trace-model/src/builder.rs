//! The capture under construction: readers fill a [`CaptureBuilder`], whose `finish` checks
//! times, sorts and links, and only then hands out a read-only [`Capture`].

use std::path::Path;

use crate::{
    Capture, Device, Diagnostics, Format, GpuActivity, GpuAnnotation, HostEvent, HostEventId,
    HostThread, Interner, Nanos, Step, Stream, TraceMeta,
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
/// ([`crate::StreamId`], [`crate::ThreadId`], ...) index the builder's tables; host event
/// ids (`parent_op`) index `host_events` in push order and are remapped by the sort.
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
        }
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
    /// 2. Sorts activities by `(stream, start, source_index)`, host events by
    ///    `(thread, start, source_index)` (remapping `parent_op`), steps by `(start, number)`.
    /// 3. Links each activity to its launch and each launch to its CPU op (see
    ///    `link_launches` in the source), replacing any `launch` set before.
    ///
    /// A host event dropped in step 1 must not be another's `parent_op`; readers set no
    /// links before `finish`.
    pub fn finish(mut self, source: &Path) -> Capture {
        let source = source.display().to_string();
        self.drop_far_events(&source);
        self.sort();
        self.link_launches(&source);
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
        }
    }

    fn drop_far_events(&mut self, file: &str) {
        let median = median(
            || {
                self.activities
                    .iter()
                    .map(|a| a.start)
                    .chain(self.host_events.iter().map(|e| e.start))
                    .filter(|s| s.in_range())
                    .map(|s| s.0)
            },
            MEDIAN_COPY_LIMIT,
        );
        let fits = |start: Nanos, dur: Nanos| {
            start.in_range()
                && (0..=Nanos::FAR.0).contains(&dur.0)
                && (start + dur).in_range()
                && start.0.abs_diff(median) <= Nanos::FAR.0.unsigned_abs()
        };
        let mut dropped = 0u64;
        let mut first: Option<u64> = None;
        let mut note = |index: u64| {
            dropped += 1;
            first = Some(first.map_or(index, |f| f.min(index)));
        };
        self.activities.retain(|a| {
            let keep = fits(a.start, a.dur);
            if !keep {
                note(a.source_index);
            }
            keep
        });
        self.host_events.retain(|e| {
            let keep = fits(e.start, e.dur);
            if !keep {
                note(e.source_index);
            }
            keep
        });
        let before = self.gpu_annotations.len() + self.steps.len();
        self.gpu_annotations.retain(|a| fits(a.start, a.dur));
        self.steps
            .retain(|s| fits(s.start, Nanos::ZERO) && fits(s.end, Nanos::ZERO));
        let other = (before - self.gpu_annotations.len() - self.steps.len()) as u64;
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

    /// Sorts activities and host events into the documented order and remaps the
    /// `launch`/`parent_op` links accordingly.
    fn sort(&mut self) {
        // Keys end in the unique source index, so unstable (in-place) sorts are deterministic.
        self.activities
            .sort_unstable_by_key(|a| (a.stream, a.start, a.source_index));
        let mut order: Vec<u32> = (0..self.host_events.len() as u32).collect();
        order.sort_unstable_by_key(|&i| {
            let e = &self.host_events[i as usize];
            (e.thread, e.start, e.source_index)
        });
        let mut new_index = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            new_index[old as usize] = new as u32;
        }
        drop(order);
        // Links point at old positions: remap them, then move the events in place, one
        // permutation cycle at a time (no second copy of the events).
        let remap = |id: HostEventId| HostEventId::new(new_index[id.index()]);
        for e in &mut self.host_events {
            e.parent_op = e.parent_op.map(remap);
        }
        for a in &mut self.activities {
            a.launch = a.launch.map(remap);
        }
        for i in 0..new_index.len() {
            while new_index[i] as usize != i {
                let j = new_index[i] as usize;
                self.host_events.swap(i, j);
                new_index.swap(i, j);
            }
        }
        self.steps.sort_by_key(|s| (s.start, s.number));
    }
}

/// How many times `median` copies at most: 8 MB, where a copy of every start of a large
/// capture was about a tenth of its model, at its memory peak.
const MEDIAN_COPY_LIMIT: usize = 1 << 20;

/// The value of rank `len / 2` of `values()` (what sorting them would put in the middle;
/// 0 when there are none), copying at most about `limit` of them: while more share the
/// bits found so far, one counting pass over `values()` finds the next 16.
fn median<I: Iterator<Item = i64>>(values: impl Fn() -> I, limit: usize) -> i64 {
    // Offset binary: the order of the i64 values is that of these u64 keys.
    let keys = || values().map(|value| value as u64 ^ (1 << 63));
    let len = keys().count();
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
        counts.fill(0);
        for key in keys().filter(|key| key & high == prefix) {
            counts[((key >> shift) & 0xffff) as usize] += 1;
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
    let mut rest: Vec<u64> = keys().filter(|key| key & high == prefix).collect();
    let key = *rest.select_nth_unstable(rank).1;
    (key ^ (1 << 63)) as i64
}

#[cfg(test)]
mod tests {
    use crate::{
        ActivityKind, CaptureBuilder, Format, GpuActivity, HostEvent, HostEventId, HostKind,
        KernelClass, Nanos, StreamId, TIME_OUT_OF_RANGE, ThreadId,
    };
    use std::path::Path;

    fn host(c: &mut CaptureBuilder, thread: u32, start: i64, index: u64, parent: Option<u32>) {
        let name = c.strings.intern("op");
        c.host_events.push(HostEvent {
            thread: ThreadId::new(thread),
            start: Nanos(start),
            dur: Nanos(1),
            name,
            kind: HostKind::CpuOp,
            correlation: None,
            external_id: None,
            parent_op: parent.map(HostEventId::new),
            source_index: index,
        });
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
                    let got = super::median(|| values.iter().copied(), limit);
                    assert_eq!(got, expect, "len {len}, spread {spread}, limit {limit}");
                }
            }
        }
        let extremes = [i64::MIN, i64::MAX, 0, -1, i64::MIN, 5];
        assert_eq!(super::median(|| extremes.iter().copied(), 0), 0);
    }

    #[test]
    fn finish_sorts_host_events_and_keeps_links() {
        let mut c = CaptureBuilder::new(Format::KinetoJson);
        // Source order: (thread 1, t=5), (thread 0, t=9), (thread 0, t=2) whose parent is
        // event 1, (thread 1, t=1) whose parent is event 0.
        host(&mut c, 1, 5, 0, None);
        host(&mut c, 0, 9, 1, None);
        host(&mut c, 0, 2, 2, Some(1));
        host(&mut c, 1, 1, 3, Some(0));
        let c = c.finish(Path::new("t.json"));
        let order: Vec<u64> = c.host_events().iter().map(|e| e.source_index).collect();
        assert_eq!(order, [2, 1, 3, 0]);
        // Each link still points at the same event (by source index) as before.
        let parent_of = |src: u64| {
            let e = c
                .host_events()
                .iter()
                .find(|e| e.source_index == src)
                .expect("present");
            e.parent_op.map(|p| c.host_event(p).source_index)
        };
        assert_eq!(parent_of(2), Some(1));
        assert_eq!(parent_of(3), Some(0));
        assert_eq!(parent_of(0), None);
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
        c.activities = vec![
            kernel(1, 10, 5, 0),
            kernel(0, 30, 5, 1),
            kernel(0, 20, -1, 2),
            kernel(0, 20, 5, 3),
            kernel(1, Nanos::FAR.0 * 2, 5, 4),
        ];
        let c = c.finish(Path::new("t.pb"));
        let order: Vec<u64> = c.activities().iter().map(|a| a.source_index).collect();
        assert_eq!(order, [3, 1, 0]);
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
