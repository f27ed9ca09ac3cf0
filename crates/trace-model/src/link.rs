//! Launch linking, shared by every reader: GPU activities to their host launch call (by
//! correlation id) and each launch to the innermost CPU op around it.

use crate::{CaptureBuilder, FastMap, HostEventId, HostKind};

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
        // Sized once: growing a map of millions of launches would hold the old table and
        // the new, twice as large, at once, at the capture's peak of memory.
        let candidates = self
            .host_events
            .iter()
            .filter(|event| {
                matches!(event.kind, HostKind::Launch | HostKind::Runtime)
                    && event.correlation.is_some()
            })
            .count();
        let mut by_correlation: FastMap<u64, u32> =
            FastMap::with_capacity_and_hasher(candidates, Default::default());
        for (index, event) in self.host_events.iter().enumerate() {
            if matches!(event.kind, HostKind::Launch | HostKind::Runtime)
                && let Some(correlation) = event.correlation
            {
                by_correlation.entry(correlation).or_insert(index as u32);
            }
        }
        let mut unlinked = 0u64;
        let mut first_unlinked = None;
        for activity in &mut self.activities {
            activity.launch = activity
                .correlation
                .and_then(|correlation| by_correlation.get(&correlation))
                .map(|&index| HostEventId::new(index));
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
}
