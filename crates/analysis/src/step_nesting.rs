//! The explicit nesting rule of step evidence: a marked range (an engine marker, an
//! iteration annotation) nested in a repeating parent range that launches other work is a
//! part of the parent's step, not the step.

use trace_model::{Capture, Nanos};

use crate::budget::Window;
use crate::steps::Steps;

/// A parent whose GPU work outside the nested ranges is less than this share of its own
/// is a wrapper of them (a Python frame that only calls the marked function, a range
/// around it), not a step of which they are a part: a wrapper launches nothing else, and
/// a tenth leaves room for a few kernels of its own.
pub const WRAPPER_OUTSIDE_SHARE: f64 = 0.1;

/// The explicit nesting rule for marked step ranges (engine markers, iteration
/// annotations): the host range of another name, on the thread of the first step's
/// range, that contains every step range, repeats (at least two instances, each holding
/// the same number of step ranges, at least one), and launches GPU work outside the step
/// ranges (at least [`WRAPPER_OUTSIDE_SHARE`] of its own: it is not a wrapper). The
/// innermost such range (shortest mean instance) is returned, with its instance count and
/// the share of its GPU work that the step ranges launch. GPU work is placed by its
/// launch call's start (its own start without one).
pub(crate) fn repeating_parent(capture: &Capture, steps: &Steps) -> Option<(String, usize, f64)> {
    let ranges: Vec<Window> = steps.steps.iter().map(|s| s.range).collect();
    let first = *ranges.first()?;
    let events = capture.host_events();
    // The thread of the first step's range: an event with exactly its bounds.
    let thread = events
        .iter()
        .find(|e| e.start == first.start && e.end() == first.end)?
        .thread;
    let thread_events = capture.thread_events(thread);
    let inside =
        |outer: &Window, inner: &Window| outer.start <= inner.start && inner.end <= outer.end;
    let mut names: Vec<trace_model::StringId> = thread_events
        .iter()
        .filter(|e| {
            let w = Window {
                start: e.start,
                end: e.end(),
            };
            inside(&w, &first) && w.span() > first.span()
        })
        .map(|e| e.name)
        .collect();
    names.sort_unstable();
    names.dedup();
    // GPU work by launch time, sorted, with prefix sums: the work launched in a range.
    let mut launched: Vec<(Nanos, i64)> = capture
        .activities()
        .iter()
        .map(|a| {
            (
                a.launch().map_or(a.start, |l| capture.host_event(l).start),
                a.dur.0,
            )
        })
        .collect();
    launched.sort_unstable();
    let mut prefix = Vec::with_capacity(launched.len() + 1);
    prefix.push(0i64);
    for &(_, d) in &launched {
        prefix.push(prefix.last().copied().unwrap_or(0) + d);
    }
    let work = |w: &Window| {
        let lo = launched.partition_point(|&(t, _)| t < w.start);
        let hi = launched.partition_point(|&(t, _)| t < w.end);
        prefix[hi] - prefix[lo]
    };
    let nested_work: i64 = ranges.iter().map(work).sum();
    let mut best: Option<(Nanos, String, usize, f64)> = None;
    for name in names {
        let instances: Vec<Window> = thread_events
            .iter()
            .filter(|e| e.name == name)
            .map(|e| Window {
                start: e.start,
                end: e.end(),
            })
            .collect();
        if instances.len() < 2 {
            continue;
        }
        let mut held = vec![0usize; instances.len()];
        let all_inside = ranges.iter().all(|r| {
            let k = instances.partition_point(|w| w.start <= r.start);
            match k.checked_sub(1) {
                Some(k) if inside(&instances[k], r) => {
                    held[k] += 1;
                    true
                }
                _ => false,
            }
        });
        if !all_inside || held[0] == 0 || held.iter().any(|&h| h != held[0]) {
            continue;
        }
        let parent_work: i64 = instances.iter().map(work).sum();
        if parent_work <= 0 {
            continue;
        }
        let outside = (parent_work - nested_work) as f64 / parent_work as f64;
        if outside < WRAPPER_OUTSIDE_SHARE {
            continue;
        }
        let mean =
            Nanos(instances.iter().map(|w| w.span().0).sum::<i64>() / instances.len() as i64);
        if best.as_ref().is_none_or(|b| mean < b.0) {
            best = Some((
                mean,
                capture.name(name).to_owned(),
                instances.len(),
                nested_work as f64 / parent_work as f64,
            ));
        }
    }
    best.map(|(_, name, n, share)| (name, n, share))
}
