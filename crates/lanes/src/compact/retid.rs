//! The flow endpoints a compaction moves (those at a slice's start), written anew with
//! their lanes on several threads before the remap's loop stores them
//! ([`super::remap_related_events`]). Walking their texts was about 40% of that loop's
//! time, on one core while the others waited, and the writer walked them once more.

use std::collections::BTreeMap;

use super::{Slice, slice_starting_at};
use crate::event::{Kind, Ph, Trace};
use crate::parts::{in_ranges, ranges_by_count};

/// Flow endpoints of one part of a trace's events written anew with their lanes: their
/// texts end to end, and each one's event index and where its text ends in `texts`, in
/// event order.
#[derive(Default)]
pub(super) struct Retidded {
    texts: Vec<u8>,
    ends: Vec<(usize, usize)>,
}

/// The `ac2g` endpoints on old streams that start at a slice, each written with that
/// slice's lane (`Arena::push_retidded`), on `threads` threads; those whose texts the
/// scanner does not walk are left out (serde checks them, in the loop, in event order).
pub(super) fn moved_flows(
    trace: &Trace,
    by_old_stream: &BTreeMap<(i64, i64), Vec<&Slice>>,
    threads: usize,
) -> Vec<Retidded> {
    let (events, arena) = (&trace.events, &trace.arena);
    let ranges = ranges_by_count(events, threads, |ev| ev.kind() == Kind::Ac2g);
    in_ranges(ranges, |r| {
        let mut done = Retidded::default();
        for (index, ev) in events[r.clone()].iter().enumerate() {
            let (Kind::Ac2g, Some(p), Some(t)) = (ev.kind(), ev.pid(), ev.tid()) else {
                continue;
            };
            if ev.ph() == Ph::Metadata {
                continue;
            }
            let lane = by_old_stream
                .get(&(p, t))
                .and_then(|stream| slice_starting_at(stream, ev.ts().unwrap_or(0)));
            if let Some(lane) = lane
                && arena.push_retidded(ev.text(), lane.new_tid, &mut done.texts)
            {
                done.ends.push((r.start + index, done.texts.len()));
            }
        }
        done
    })
}

/// Each part's texts, in event order: (event index, text).
pub(super) fn in_order(parts: &[Retidded]) -> impl Iterator<Item = (usize, &str)> {
    parts.iter().flat_map(|part| {
        let starts = std::iter::once(0).chain(part.ends.iter().map(|&(_, end)| end));
        part.ends.iter().zip(starts).map(|(&(index, end), start)| {
            let text = std::str::from_utf8(&part.texts[start..end])
                .expect("members of a str and ASCII punctuation are UTF-8");
            (index, text)
        })
    })
}
