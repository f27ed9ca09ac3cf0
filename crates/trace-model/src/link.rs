//! Launch linking, shared by every reader: GPU activities to their host launch call (by
//! correlation id) and each launch to the innermost CPU op around it.

use crate::{CaptureBuilder, FastMap, HostEvent, HostEventId, HostKind};

impl CaptureBuilder {
    /// Joins activities to launches and launches to their enclosing CPU op. `finish` calls
    /// it once, after sorting, so that indices are final and each thread's events are
    /// contiguous and in start order.
    ///
    /// - An activity's launch is the first `Launch` or `Runtime` host event with the same
    ///   correlation id; that event becomes a `Launch`. Activities with none are counted in
    ///   the `activity-without-launch` diagnostic, whose first place is
    ///   `{path_for_diagnostics}: event {source_index}`.
    /// - A launch or runtime call's `parent_op` is the innermost `CpuOp` on its thread that
    ///   contains it, else the `CpuOp` with the same `external_id` (Kineto).
    pub(crate) fn link_launches(&mut self, path_for_diagnostics: &str) {
        let by_correlation = LaunchTable::new(&self.host_events);
        let mut unlinked = 0u64;
        let mut first_unlinked = None;
        for activity in &mut self.activities {
            activity.launch = activity
                .correlation
                .and_then(|correlation| by_correlation.get(correlation))
                .map(HostEventId::new);
            match activity.launch {
                Some(launch) => self.host_events[launch.index()].kind = HostKind::Launch,
                None => {
                    unlinked += 1;
                    first_unlinked.get_or_insert(activity.source_index);
                }
            }
        }
        if let Some(first) = first_unlinked {
            self.diagnostics.add_many(
                "activity-without-launch",
                unlinked,
                "GPU activities with no host launch call in the trace (no matching correlation id)"
                    .to_string(),
                format!("{path_for_diagnostics}: event {first}"),
            );
        }
        self.link_parent_ops();
    }

    /// Events are sorted by (thread, start): a stack of open CPU ops gives the innermost one
    /// around each launch or runtime call.
    fn link_parent_ops(&mut self) {
        let mut by_external: FastMap<i64, u32> = FastMap::default();
        for (index, event) in self.host_events.iter().enumerate() {
            if event.kind == HostKind::CpuOp
                && let Some(external) = event.external_id
            {
                by_external.entry(external).or_insert(index as u32);
            }
        }
        let events = &mut self.host_events;
        let mut stack: Vec<u32> = Vec::new();
        let mut current_thread = None;
        for index in 0..events.len() {
            let event = &events[index];
            if current_thread != Some(event.thread) {
                stack.clear();
                current_thread = Some(event.thread);
            }
            while stack
                .last()
                .is_some_and(|&top| events[top as usize].end() <= event.start)
            {
                stack.pop();
            }
            match event.kind {
                HostKind::CpuOp => stack.push(index as u32),
                HostKind::Launch | HostKind::Runtime => {
                    let end = event.end();
                    let parent = stack
                        .iter()
                        .rev()
                        .copied()
                        .find(|&op| events[op as usize].end() >= end)
                        .or_else(|| {
                            event
                                .external_id
                                .and_then(|external| by_external.get(&external).copied())
                        });
                    events[index].parent_op = parent.map(HostEventId::new);
                }
                _ => {}
            }
        }
    }
}

/// The first `Launch` or `Runtime` host event of each correlation id: `(id, index)` pairs
/// sorted by id, searched by halving. A capture holds millions of launches, and this is
/// 12 bytes each where a hash map took about 24 at the capture's memory peak.
struct LaunchTable {
    /// `[low 32 bits, high 32 bits, host event index]`, sorted.
    entries: Vec<[u32; 3]>,
}

impl LaunchTable {
    fn new(events: &[HostEvent]) -> Self {
        let candidates = |event: &HostEvent| {
            matches!(event.kind, HostKind::Launch | HostKind::Runtime)
                .then_some(event.correlation)
                .flatten()
        };
        let mut entries = Vec::with_capacity(events.iter().filter_map(candidates).count());
        for (index, event) in events.iter().enumerate() {
            if let Some(correlation) = candidates(event) {
                entries.push([correlation as u32, (correlation >> 32) as u32, index as u32]);
            }
        }
        // By (id, index), so that the first entry of an id is its first event.
        entries.sort_unstable_by_key(|&[low, high, index]| (high, low, index));
        entries.dedup_by_key(|&mut [low, high, _]| (high, low));
        LaunchTable { entries }
    }

    /// The index of the first event with this correlation id.
    fn get(&self, correlation: u64) -> Option<u32> {
        let key = ((correlation >> 32) as u32, correlation as u32);
        self.entries
            .binary_search_by_key(&key, |&[low, high, _]| (high, low))
            .ok()
            .map(|found| self.entries[found][2])
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::{
        ActivityKind, CaptureBuilder, Format, GpuActivity, HostEvent, HostEventId, HostKind,
        KernelClass, Nanos, StreamId, StringId, ThreadId,
    };

    fn host(
        name: StringId,
        kind: HostKind,
        start: i64,
        dur: i64,
        correlation: Option<u64>,
    ) -> HostEvent {
        HostEvent {
            thread: ThreadId::new(0),
            start: Nanos(start),
            dur: Nanos(dur),
            name,
            kind,
            correlation,
            external_id: None,
            parent_op: None,
            source_index: 0,
        }
    }

    fn kernel(name: StringId, correlation: Option<u64>, source_index: u64) -> GpuActivity {
        let mut kernel = GpuActivity::new(
            StreamId::new(0),
            Nanos(100),
            Nanos(5),
            name,
            ActivityKind::Kernel,
            KernelClass::Other,
            source_index,
        );
        kernel.correlation = correlation;
        kernel
    }

    #[test]
    fn links_launches_and_parent_ops() {
        let mut capture = CaptureBuilder::new(Format::XPlane);
        let name = capture.strings.intern("x");
        capture.host_events = vec![
            host(name, HostKind::CpuOp, 0, 50, None),
            host(name, HostKind::CpuOp, 10, 20, None),
            host(name, HostKind::Runtime, 12, 3, Some(7)),
            host(name, HostKind::Launch, 40, 3, Some(8)),
            host(name, HostKind::Launch, 60, 3, Some(9)),
        ];
        capture.activities = vec![
            kernel(name, Some(7), 0),
            kernel(name, Some(8), 1),
            kernel(name, None, 2),
        ];
        let capture = capture.finish(Path::new("t.json"));
        let launches: Vec<_> = capture.activities().iter().map(|a| a.launch).collect();
        assert_eq!(
            launches,
            [Some(HostEventId::new(2)), Some(HostEventId::new(3)), None]
        );
        assert_eq!(capture.host_events()[2].kind, HostKind::Launch);
        let parents: Vec<_> = capture.host_events().iter().map(|e| e.parent_op).collect();
        assert_eq!(
            parents,
            [
                None,
                None,
                Some(HostEventId::new(1)),
                Some(HostEventId::new(0)),
                None
            ]
        );
        let diagnostic = capture
            .diagnostics()
            .get("activity-without-launch")
            .unwrap();
        assert_eq!(
            (diagnostic.count, diagnostic.first.as_str()),
            (1, "t.json: event 2")
        );
    }

    /// The first launch of a correlation id wins, and ids beyond 32 bits are told apart.
    #[test]
    fn first_launch_of_an_id_wins() {
        let mut capture = CaptureBuilder::new(Format::XPlane);
        let name = capture.strings.intern("x");
        let (low, high) = (5u64, (1u64 << 32) | 5);
        capture.host_events = vec![
            host(name, HostKind::Launch, 10, 1, Some(high)),
            host(name, HostKind::Launch, 20, 1, Some(low)),
            host(name, HostKind::Runtime, 30, 1, Some(low)),
            host(name, HostKind::CpuOp, 40, 1, Some(7)),
        ];
        capture.activities = vec![
            kernel(name, Some(low), 0),
            kernel(name, Some(high), 1),
            kernel(name, Some(7), 2),
        ];
        let capture = capture.finish(Path::new("t.pb"));
        let launches: Vec<_> = capture.activities().iter().map(|a| a.launch).collect();
        assert_eq!(
            launches,
            [Some(HostEventId::new(1)), Some(HostEventId::new(0)), None]
        );
        assert_eq!(capture.host_events()[2].kind, HostKind::Runtime);
    }
}
