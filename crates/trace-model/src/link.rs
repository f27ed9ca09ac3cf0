//! Launch linking, shared by every reader: GPU activities to their host launch call (by
//! correlation id) and each launch to the innermost CPU op around it.

use crate::side::SideTable;
use crate::{CaptureBuilder, FastMap, GpuActivity, HostEvent, HostEventId, HostKind};

impl CaptureBuilder {
    /// Sorts host events by `(thread, start, source_index)` and steps by `(start, number)`,
    /// then joins activities to launches and launches to their enclosing CPU op (host event
    /// indices are final by then, and each thread's events contiguous and in start order);
    /// it leaves activities sorted by `(stream, start, source_index)`. `finish` calls it once.
    ///
    /// - An activity's launch is the first `Launch` or `Runtime` host event with the same
    ///   correlation id; that event becomes a `Launch`. Activities with none are counted in
    ///   the `activity-without-launch` diagnostic, whose first place is
    ///   `{path_for_diagnostics}: event {source_index}` of the first in the final order.
    /// - A launch or runtime call's `parent_op` is the innermost `CpuOp` on its thread that
    ///   contains it, else the `CpuOp` with the same external id (Kineto).
    ///
    /// With `parallel` (on a rayon pool: `finish_on` installs one), the sorts of host events
    /// and activities, and then the final sort of activities and the parent-op linking, run
    /// beside each other, each sort itself split across the pool's threads (keys are unique,
    /// so the order is the same as a sequential sort's).
    pub(crate) fn sort_and_link(&mut self, path_for_diagnostics: &str, parallel: bool) {
        // Activities by correlation id, so that each launch finds its activities by a search
        // (`lower_bound_from`), and only then in their final order: this needs nothing beside the rows, where a
        // table of (id, event) pairs took 12 bytes a launch at the capture's memory peak.
        // Keys end in the unique source index, so unstable (in-place) sorts are deterministic.
        let CaptureBuilder {
            activities,
            host_events,
            steps,
            sides,
            ..
        } = self;
        join(
            parallel,
            || {
                sort_by_key(parallel, host_events, |e| {
                    (e.thread, e.start, e.source_index)
                });
                steps.sort_by_key(|s| (s.start, s.number));
            },
            || sort_by_key(parallel, activities, |a| (a.correlation(), a.source_index)),
        );
        link_by_correlation(activities, host_events);
        join(
            parallel,
            || {
                sort_by_key(parallel, activities, |a| {
                    (a.stream, a.start, a.source_index)
                })
            },
            || link_parent_ops(host_events, &sides.host_external_ids),
        );
        let mut unlinked = self.activities.iter().filter(|a| a.launch().is_none());
        if let Some(first) = unlinked.next() {
            self.diagnostics.add_many(
                "activity-without-launch",
                1 + unlinked.count() as u64,
                "GPU activities with no host launch call in the trace (no matching correlation id)"
                    .to_string(),
                format!("{path_for_diagnostics}: event {}", first.source_index),
            );
        }
    }
}

/// Runs `a` and `b`, beside each other on the current rayon pool when `parallel`.
pub(crate) fn join<A: Send, B: Send>(
    parallel: bool,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if parallel {
        rayon::join(a, b)
    } else {
        (a(), b())
    }
}

/// Sorts `rows` by a unique `key` in place, split across the current rayon pool when
/// `parallel`.
///
/// The rows come in file order, which is nearly sorted already (Kineto writes a thread's
/// events, and a stream's activities, in time and correlation order: 3 descents in 2,199
/// host events on a rank of param-dlrm-8rank, 9 in 101,089 on hta-v100-2rank-large). A
/// stable sort merges such runs in about one pass where the unstable one sorts from
/// scratch (the constructor of `tracewise.hta` on param-dlrm-8rank: 175.2M -> 169.8M
/// instructions, callgrind), but it takes a scratch copy of up to the rows' size. So the
/// stable sort is taken while that copy is at most [`STABLE_SORT_SCRATCH`] bytes, and a
/// larger table, whose copy would raise the capture's memory peak, is sorted in place as
/// before. The key is unique, so both give the same order.
fn sort_by_key<T: Send, K: Ord>(parallel: bool, rows: &mut [T], key: impl Fn(&T) -> K + Sync) {
    use rayon::slice::ParallelSliceMut;
    let stable = std::mem::size_of_val(rows) <= STABLE_SORT_SCRATCH;
    match (parallel, stable) {
        (true, true) => rows.par_sort_by_key(key),
        (true, false) => rows.par_sort_unstable_by_key(key),
        (false, true) => rows.sort_by_key(key),
        (false, false) => rows.sort_unstable_by_key(key),
    }
}

/// The most bytes of rows [`sort_by_key`] sorts stably (its scratch copy): the 8 MB up to
/// which the standard library's stable sort takes a whole copy anyway.
const STABLE_SORT_SCRATCH: usize = 8_000_000;

/// Links each activity (sorted by correlation id) to the first launch or runtime call of
/// its id, which becomes a `Launch`.
fn link_by_correlation(activities: &mut [GpuActivity], host_events: &mut [HostEvent]) {
    // Ids mostly grow along a thread's launches: each search starts from the last one.
    let mut hint = 0;
    for (index, event) in host_events.iter_mut().enumerate() {
        if !matches!(event.kind, HostKind::Launch | HostKind::Runtime) {
            continue;
        }
        let Some(correlation) = event.correlation() else {
            continue;
        };
        let lo = lower_bound_from(activities, Some(correlation), hint);
        hint = lo;
        let same = activities[lo..]
            .iter_mut()
            .take_while(|a| a.correlation() == Some(correlation));
        // The first event of an id takes all its activities; a later one finds them
        // taken at the first and stops there.
        let mut linked = false;
        for activity in same {
            if activity.launch().is_some() {
                break;
            }
            activity.set_launch(Some(HostEventId::new(index as u32)));
            linked = true;
        }
        if linked {
            event.kind = HostKind::Launch;
        }
    }
}

/// The first index whose activity's correlation is not below `key` in `activities` (sorted
/// by correlation), as `partition_point` finds it, searched from `hint` outwards: a few
/// steps when `key` is near the previous key, never more than twice a binary search.
fn lower_bound_from(activities: &[GpuActivity], key: Option<u64>, hint: usize) -> usize {
    let below = |i: usize| activities[i].correlation() < key;
    let len = activities.len();
    let hint = hint.min(len);
    if hint < len && below(hint) {
        // Gallop forward: the answer is past `hint`.
        let (mut lo, mut step) = (hint + 1, 1);
        while lo + step <= len && below(lo + step - 1) {
            lo += step;
            step *= 2;
        }
        let hi = (lo + step).min(len);
        lo + activities[lo..hi].partition_point(|a| a.correlation() < key)
    } else if hint == 0 || !below(hint - 1) {
        // Gallop backward: the answer is at or before `hint`.
        let (mut hi, mut step) = (hint, 1);
        while hi >= step && !below(hi - step) {
            hi -= step;
            step *= 2;
        }
        let lo = hi.saturating_sub(step);
        lo + activities[lo..hi].partition_point(|a| a.correlation() < key)
    } else {
        hint
    }
}

/// Events are sorted by (thread, start): a stack of open CPU ops gives the innermost one
/// around each launch or runtime call. Those outside every CPU op of their thread then get
/// the first CPU op with their external id; the table of CPU ops by external id is made
/// only when some call needs it (on the 1 GB synthetic trace, where every launch is inside
/// an op, it was half of this pass).
fn link_parent_ops(events: &mut [HostEvent], external_ids: &SideTable<i64>) {
    let mut outside: Vec<u32> = Vec::new();
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
                    .find(|&op| events[op as usize].end() >= end);
                match parent {
                    Some(parent) => events[index].set_parent_op(Some(HostEventId::new(parent))),
                    None => outside.push(index as u32),
                }
            }
            _ => {}
        }
    }
    if outside.is_empty() {
        return;
    }
    let mut by_external: FastMap<i64, u32> = FastMap::default();
    for (index, event) in events.iter().enumerate() {
        if event.kind == HostKind::CpuOp
            && let Some(external) = external_ids.get(event.source_index)
        {
            by_external.entry(external).or_insert(index as u32);
        }
    }
    for index in outside {
        let event = &mut events[index as usize];
        let parent = external_ids
            .get(event.source_index)
            .and_then(|external| by_external.get(&external).copied());
        event.set_parent_op(parent.map(HostEventId::new));
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
        let mut event = HostEvent::new(ThreadId::new(0), Nanos(start), Nanos(dur), name, kind, 0);
        event.set_correlation(correlation);
        event
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
        kernel.set_correlation(correlation);
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
        let launches: Vec<_> = capture.activities().iter().map(|a| a.launch()).collect();
        assert_eq!(
            launches,
            [Some(HostEventId::new(2)), Some(HostEventId::new(3)), None]
        );
        assert_eq!(capture.host_events()[2].kind, HostKind::Launch);
        let parents: Vec<_> = capture
            .host_events()
            .iter()
            .map(|e| e.parent_op())
            .collect();
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
        let launches: Vec<_> = capture.activities().iter().map(|a| a.launch()).collect();
        assert_eq!(
            launches,
            [Some(HostEventId::new(1)), Some(HostEventId::new(0)), None]
        );
        assert_eq!(capture.host_events()[2].kind, HostKind::Runtime);
    }

    /// A launch outside every CPU op on its thread gets the op with its external id (Kineto),
    /// which lives in the builder's side table, not in the row.
    #[test]
    fn parent_op_by_external_id() {
        let mut capture = CaptureBuilder::new(Format::KinetoJson);
        let name = capture.strings.intern("x");
        let on = |thread: u32, kind: HostKind, start: i64, index: u64| {
            HostEvent::new(
                ThreadId::new(thread),
                Nanos(start),
                Nanos(5),
                name,
                kind,
                index,
            )
        };
        capture.push_host_event(on(0, HostKind::CpuOp, 0, 0), Some(41));
        capture.push_host_event(on(0, HostKind::CpuOp, 10, 1), Some(42));
        capture.push_host_event(on(1, HostKind::Runtime, 100, 2), Some(42));
        capture.push_host_event(on(1, HostKind::Runtime, 200, 3), Some(43));
        let capture = capture.finish(Path::new("t.json"));
        let parents: Vec<_> = capture
            .host_events()
            .iter()
            .map(|e| e.parent_op())
            .collect();
        assert_eq!(parents, [None, None, Some(HostEventId::new(1)), None]);
        let external: Vec<_> = capture
            .host_events()
            .iter()
            .map(|e| capture.host_external_id(e))
            .collect();
        assert_eq!(external, [Some(41), Some(42), Some(42), Some(43)]);
    }

    /// Many events sharing one id (odd producers write 0 everywhere) link every activity to
    /// the first of them, without comparing each event with each activity.
    #[test]
    fn a_shared_id_links_to_its_first_event() {
        let mut capture = CaptureBuilder::new(Format::OtherJson);
        let name = capture.strings.intern("x");
        for start in 0..3000 {
            capture
                .host_events
                .push(host(name, HostKind::Runtime, start, 1, Some(0)));
        }
        capture.activities = (0..3000).map(|i| kernel(name, Some(0), i)).collect();
        let capture = capture.finish(Path::new("t.json"));
        assert!(
            capture
                .activities()
                .iter()
                .all(|a| a.launch() == Some(HostEventId::new(0)))
        );
        let launches = capture
            .host_events()
            .iter()
            .filter(|e| e.kind == HostKind::Launch)
            .count();
        assert_eq!(launches, 1);
    }

    /// The search from a hint finds what `partition_point` finds, from every hint.
    #[test]
    fn lower_bound_from_any_hint_is_partition_point() {
        let name = crate::Interner::new().intern("k");
        let ids = [
            None,
            Some(1),
            Some(1),
            Some(3),
            Some(4),
            Some(4),
            Some(4),
            Some(9),
        ];
        for len in 0..=ids.len() {
            let activities: Vec<GpuActivity> = ids[..len]
                .iter()
                .enumerate()
                .map(|(i, &id)| kernel(name, id, i as u64))
                .collect();
            for key in [
                None,
                Some(0),
                Some(1),
                Some(2),
                Some(3),
                Some(4),
                Some(5),
                Some(10),
            ] {
                let expect = activities.partition_point(|a| a.correlation() < key);
                for hint in 0..=len + 2 {
                    let got = super::lower_bound_from(&activities, key, hint);
                    assert_eq!(got, expect, "len {len}, key {key:?}, hint {hint}");
                }
            }
        }
    }

    /// Both of `sort_by_key`'s ways (stable below its scratch bound, in place above it),
    /// each on the caller's thread and on a pool, give the one order of the unique key, on
    /// nearly sorted rows (file order) and on shuffled ones.
    #[test]
    fn sort_by_key_gives_the_keys_order_on_both_sides_of_the_scratch_bound() {
        let big = super::STABLE_SORT_SCRATCH / std::mem::size_of::<(u32, u32)>() + 1;
        for len in [0, 1, 1000, big] {
            // (key, source index): keys with ties, broken by the unique index.
            let mut seed = 0x2545_f491_u32;
            let mut next = || {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                seed
            };
            let shuffled: Vec<(u32, u32)> = (0..len as u32).map(|i| (next() % 97, i)).collect();
            // File order: sorted runs with a few rows out of place.
            let mut nearly: Vec<(u32, u32)> = (0..len as u32).map(|i| (i / 3, i)).collect();
            for i in (0..nearly.len()).step_by(4099) {
                nearly[i].0 = next() % (len as u32 / 3 + 1);
            }
            for rows in [shuffled, nearly] {
                let mut expected = rows.clone();
                expected.sort();
                for parallel in [false, true] {
                    let mut got = rows.clone();
                    super::sort_by_key(parallel, &mut got, |&(k, i)| (k, i));
                    assert!(got == expected, "len {len}, parallel {parallel}");
                }
            }
        }
    }
}
