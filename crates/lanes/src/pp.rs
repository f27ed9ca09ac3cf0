//! Pipeline-parallel blocks from `PP:<stage><op><microbatch>` GPU annotations, and the
//! flow arrows between them: SEND→RECV across ranks, RECV→compute→SEND within a rank,
//! and UNSHARD all-gathers → the first later compute block of their stage.

use std::collections::{BTreeMap, BTreeSet};

use crate::LaneGrouping;
use crate::event::{Event, Generated, Kind, Object, Ph, raw, raw_i64, raw_micros, raw_str};

/// Flow ids of the PP arrows count up from here, clear of profiler ids.
pub(crate) const FIRST_FLOW_ID: i64 = 1_000_000_000_000;

/// A PP operation. The declaration order is the order of the operation strings
/// (`B` < `F` < `RECV_B` < ...), which decides the order flows are numbered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Op {
    B,
    F,
    RecvB,
    RecvF,
    SendB,
    SendF,
    Unshard,
}

impl Op {
    fn text(self) -> &'static str {
        match self {
            Op::B => "B",
            Op::F => "F",
            Op::RecvB => "RECV_B",
            Op::RecvF => "RECV_F",
            Op::SendB => "SEND_B",
            Op::SendF => "SEND_F",
            Op::Unshard => "UNSHARD",
        }
    }
}

/// One PP operation span on a GPU annotation track; times in ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Block {
    pub stage: u64,
    pub op: Op,
    pub microbatch: Option<u64>,
    pub pid: i64,
    pub tid: i64,
    pub start: i64,
    pub end: i64,
}

impl Block {
    fn label(&self) -> String {
        match self.microbatch {
            Some(mb) => format!("{}{}{mb}", self.stage, self.op.text()),
            None => format!("{}{}", self.stage, self.op.text()),
        }
    }
}

/// Pairs made and endpoints left unmatched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FlowCount {
    pub pairs: usize,
    pub unmatched: usize,
}

fn digits(s: &str) -> Option<(u64, &str)> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    if end == 0 {
        return None;
    }
    Some((s[..end].parse().ok()?, &s[end..]))
}

/// Parses `PP:<stage><op><microbatch>`.
pub(crate) fn parse_annotation(name: &str) -> Option<(u64, Op, u64)> {
    let (stage, rest) = digits(name.strip_prefix("PP:")?)?;
    let ops = [
        ("SEND_F", Op::SendF),
        ("RECV_F", Op::RecvF),
        ("SEND_B", Op::SendB),
        ("RECV_B", Op::RecvB),
        ("F", Op::F),
        ("B", Op::B),
    ];
    let (text, op) = ops.into_iter().find(|(t, _)| rest.starts_with(t))?;
    let (mb, rest) = digits(&rest[text.len()..])?;
    rest.is_empty().then_some((stage, op, mb))
}

/// Parses `PP:<stage>UNSHARD`.
pub(crate) fn parse_unshard(name: &str) -> Option<u64> {
    let (stage, rest) = digits(name.strip_prefix("PP:")?)?;
    (rest == "UNSHARD").then_some(stage)
}

/// An annotation X event with integer pid/tid and numeric ts/dur: (pid, tid, start, end).
fn annotation_span(ev: &Event) -> Option<(i64, i64, i64, i64)> {
    if ev.kind() != Kind::GpuAnnotation || ev.ph() != Ph::Complete {
        return None;
    }
    let ts = ev.ts()?;
    Some((ev.pid()?, ev.tid()?, ts, ts.checked_add(ev.dur()?)?))
}

/// Annotation tracks whose `thread_name` (after any `"PP rank N | "` prefix) is one of `names`.
fn named_lanes(events: &[Event], names: &[String]) -> BTreeSet<(i64, i64)> {
    events
        .iter()
        .filter(|e| e.ph() == Ph::Metadata && e.name() == Some("thread_name"))
        .filter_map(|e| {
            let name = e.arg_name()?;
            let lane = name.rsplit(" | ").next().unwrap_or(name);
            names
                .iter()
                .any(|n| n == lane)
                .then_some((e.pid()?, e.tid()?))
        })
        .collect()
}

/// The PP blocks of all ranks: F/B spans clustered by overlap and represented by their
/// members on the main compute annotation tracks (which depend on the lane grouping);
/// every SEND/RECV span is its own block.
pub(crate) fn annotation_blocks(events: &[Event], grouping: LaneGrouping) -> Vec<Block> {
    let main = named_lanes(events, &grouping.main_compute_tracks());
    // (pid, stage, op, mb) -> spans (pid, tid, start, end) in event order.
    type Span = (i64, i64, i64, i64);
    let mut grouped: BTreeMap<(i64, u64, Op, u64), Vec<Span>> = BTreeMap::new();
    for ev in events {
        let Some(span) = annotation_span(ev) else {
            continue;
        };
        let Some((stage, op, mb)) = ev.name().and_then(parse_annotation) else {
            continue;
        };
        grouped
            .entry((span.0, stage, op, mb))
            .or_default()
            .push(span);
    }
    let mut blocks = Vec::new();
    for ((_, stage, op, mb), mut spans) in grouped {
        let block = |members: &[Span]| {
            let rep = members
                .iter()
                .min_by_key(|s| (s.2, s.1))
                .expect("a block has members");
            Block {
                stage,
                op,
                microbatch: Some(mb),
                pid: rep.0,
                tid: rep.1,
                start: members.iter().map(|s| s.2).min().expect("non-empty"),
                end: members.iter().map(|s| s.3).max().expect("non-empty"),
            }
        };
        if matches!(op, Op::F | Op::B) {
            spans.sort_by_key(|s| (s.2, s.3 - s.2));
            let mut emit = |cluster: &[Span]| {
                let on_main: Vec<Span> = cluster
                    .iter()
                    .copied()
                    .filter(|s| main.contains(&(s.0, s.1)))
                    .collect();
                if !on_main.is_empty() {
                    blocks.push(block(&on_main));
                }
            };
            let mut start_of_cluster = 0;
            let mut cluster_end = spans[0].3;
            for k in 1..spans.len() {
                if spans[k].2 <= cluster_end {
                    cluster_end = cluster_end.max(spans[k].3);
                } else {
                    emit(&spans[start_of_cluster..k]);
                    start_of_cluster = k;
                    cluster_end = spans[k].3;
                }
            }
            emit(&spans[start_of_cluster..]);
        } else {
            blocks.extend(spans.iter().map(|s| block(std::slice::from_ref(s))));
        }
    }
    blocks
}

/// `PP:<stage>UNSHARD` spans on the first all-gather annotation tracks, sorted by
/// (pid, start, stage).
pub(crate) fn unshard_blocks(events: &[Event], grouping: LaneGrouping) -> Vec<Block> {
    let lanes = named_lanes(events, &grouping.unshard_tracks());
    let mut blocks: Vec<Block> = events
        .iter()
        .filter_map(|ev| {
            let (pid, tid, start, end) = annotation_span(ev)?;
            let stage = parse_unshard(ev.name()?)?;
            lanes.contains(&(pid, tid)).then_some(Block {
                stage,
                op: Op::Unshard,
                microbatch: None,
                pid,
                tid,
                start,
                end,
            })
        })
        .collect();
    blocks.sort_by_key(|b| (b.pid, b.start, b.stage));
    blocks
}

/// Pairs blocks one to one, nearest midpoints first.
fn pair_nearest<'a>(
    sources: &[&'a Block],
    destinations: &[&'a Block],
) -> Vec<(&'a Block, &'a Block)> {
    let mut candidates = Vec::with_capacity(sources.len() * destinations.len());
    for (i, s) in sources.iter().enumerate() {
        for (j, d) in destinations.iter().enumerate() {
            let distance = ((i128::from(s.start) + i128::from(s.end))
                - (i128::from(d.start) + i128::from(d.end)))
            .unsigned_abs();
            candidates.push((distance, i, j));
        }
    }
    candidates.sort_unstable();
    let mut used_sources = vec![false; sources.len()];
    let mut used_destinations = vec![false; destinations.len()];
    let mut pairs = Vec::new();
    for (_, i, j) in candidates {
        if used_sources[i] || used_destinations[j] {
            continue;
        }
        used_sources[i] = true;
        used_destinations[j] = true;
        pairs.push((sources[i], destinations[j]));
    }
    pairs
}

/// Appends the two events of a flow from `source` to `destination`, or nothing when the
/// destination ends before the arrow could land. Returns whether a flow was made.
fn flow_pair(
    source: &Block,
    destination: &Block,
    rank_of: &dyn Fn(i64) -> i64,
    category: &str,
    id: i64,
    strictly_forward: bool,
    out: &mut Generated<'_>,
) -> bool {
    let mut destination_ts = source.start.max(destination.start);
    if strictly_forward && destination_ts == source.start {
        // One nanosecond is the smallest step of our time base.
        destination_ts = source.start.saturating_add(1);
    }
    if destination_ts > destination.end {
        return false;
    }
    let name = format!("{} -> {}", source.label(), destination.label());
    let microbatch = source.microbatch.or(destination.microbatch);
    let args = Object::default()
        .with("source_pp_rank", raw_i64(rank_of(source.pid)))
        .with("destination_pp_rank", raw_i64(rank_of(destination.pid)))
        .with("source_stage", raw(source.stage.to_string()))
        .with("destination_stage", raw(destination.stage.to_string()))
        .with("source_operation", raw_str(source.op.text()))
        .with("destination_operation", raw_str(destination.op.text()))
        .with(
            "microbatch",
            raw(microbatch.map_or_else(|| "null".to_string(), |m| m.to_string())),
        )
        .into_raw();
    for (ph, block, ts) in [
        ("s", source, source.start),
        ("f", destination, destination_ts),
    ] {
        let object = Object::default()
            .with("name", raw_str(&name))
            .with("cat", raw_str(category))
            .with("ph", raw_str(ph))
            .with("bp", raw_str("e"))
            .with("pid", raw_i64(block.pid))
            .with("tid", raw_i64(block.tid))
            .with("ts", raw_micros(ts))
            .with("id", raw_i64(id))
            .with("args", args.clone());
        out.push(&object, Kind::Other, Ph::Flow, None);
    }
    true
}

/// SEND_F(stage s) → RECV_F(stage s+1) and SEND_B(s) → RECV_B(s-1) across ranks.
pub(crate) fn send_recv_flows(
    blocks: &[Block],
    rank_of: &dyn Fn(i64) -> i64,
    first_id: i64,
    out: &mut Generated<'_>,
) -> (FlowCount, i64) {
    let mut grouped: BTreeMap<(u64, Op, Option<u64>), Vec<&Block>> = BTreeMap::new();
    for b in blocks {
        grouped
            .entry((b.stage, b.op, b.microbatch))
            .or_default()
            .push(b);
    }
    let mut count = FlowCount::default();
    let mut matched_recv_keys = BTreeSet::new();
    let mut next_id = first_id;
    let mut flows = 0;
    for (&(stage, op, mb), sends) in &grouped {
        let (peer_stage, recv_op) = match op {
            Op::SendF => (stage.checked_add(1), Op::RecvF),
            Op::SendB => (stage.checked_sub(1), Op::RecvB),
            _ => continue,
        };
        let recvs: &[&Block] = match peer_stage {
            Some(peer) => {
                let key = (peer, recv_op, mb);
                matched_recv_keys.insert(key);
                grouped.get(&key).map_or(&[], Vec::as_slice)
            }
            None => &[],
        };
        let pairs = pair_nearest(sends, recvs);
        count.unmatched += sends.len() + recvs.len() - 2 * pairs.len();
        for (send, recv) in pairs {
            if flow_pair(send, recv, rank_of, "pp_send_recv", next_id, true, out) {
                flows += 1;
            } else {
                count.unmatched += 2;
            }
            next_id += 1;
        }
    }
    count.unmatched += grouped
        .iter()
        .filter(|(k, _)| matches!(k.1, Op::RecvF | Op::RecvB) && !matched_recv_keys.contains(*k))
        .map(|(_, v)| v.len())
        .sum::<usize>();
    count.pairs = flows;
    (count, next_id)
}

/// RECV_op → compute and compute → SEND_op within each (pid, stage, op, microbatch).
pub(crate) fn local_dependency_flows(
    blocks: &[Block],
    rank_of: &dyn Fn(i64) -> i64,
    first_id: i64,
    out: &mut Generated<'_>,
) -> (FlowCount, i64) {
    let mut grouped: BTreeMap<(i64, u64, Op, Option<u64>), Vec<&Block>> = BTreeMap::new();
    for b in blocks {
        grouped
            .entry((b.pid, b.stage, b.op, b.microbatch))
            .or_default()
            .push(b);
    }
    let mut count = FlowCount::default();
    let mut next_id = first_id;
    let empty = Vec::new();
    for (&(pid, stage, op, mb), computes) in &grouped {
        let (recv_op, send_op) = match op {
            Op::F => (Op::RecvF, Op::SendF),
            Op::B => (Op::RecvB, Op::SendB),
            _ => continue,
        };
        let recv = grouped.get(&(pid, stage, recv_op, mb)).unwrap_or(&empty);
        let send = grouped.get(&(pid, stage, send_op, mb)).unwrap_or(&empty);
        for (sources, destinations) in [(recv, computes), (computes, send)] {
            if sources.is_empty() || destinations.is_empty() {
                continue;
            }
            let pairs = pair_nearest(sources, destinations);
            count.unmatched += sources.len() + destinations.len() - 2 * pairs.len();
            for (s, d) in pairs {
                if flow_pair(s, d, rank_of, "pp_compute_dependency", next_id, false, out) {
                    count.pairs += 1;
                } else {
                    count.unmatched += 2;
                }
                next_id += 1;
            }
        }
    }
    (count, next_id)
}

/// Each UNSHARD → the first F/B block of the same (pid, stage) starting at or after it.
pub(crate) fn unshard_flows(
    unshards: &[Block],
    blocks: &[Block],
    rank_of: &dyn Fn(i64) -> i64,
    first_id: i64,
    out: &mut Generated<'_>,
) -> (FlowCount, i64) {
    let mut computes: BTreeMap<(i64, u64), Vec<&Block>> = BTreeMap::new();
    for b in blocks.iter().filter(|b| matches!(b.op, Op::F | Op::B)) {
        computes.entry((b.pid, b.stage)).or_default().push(b);
    }
    for values in computes.values_mut() {
        values.sort_by_key(|b| (b.start, b.end));
    }
    let mut count = FlowCount::default();
    let mut next_id = first_id;
    for u in unshards {
        let destination = computes
            .get(&(u.pid, u.stage))
            .and_then(|v| v.iter().find(|b| b.start >= u.start));
        let Some(destination) = destination else {
            count.unmatched += 1;
            continue;
        };
        if flow_pair(
            u,
            destination,
            rank_of,
            "pp_unshard_dependency",
            next_id,
            false,
            out,
        ) {
            count.pairs += 1;
        } else {
            count.unmatched += 1;
        }
        next_id += 1;
    }
    (count, next_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotation_names_parse() {
        assert_eq!(parse_annotation("PP:0F0"), Some((0, Op::F, 0)));
        assert_eq!(parse_annotation("PP:12SEND_B3"), Some((12, Op::SendB, 3)));
        assert_eq!(parse_annotation("PP:1RECV_F10"), Some((1, Op::RecvF, 10)));
        assert_eq!(parse_annotation("PP:0F"), None);
        assert_eq!(parse_annotation("PP:F0"), None);
        assert_eq!(parse_annotation("PP:0F0x"), None);
        assert_eq!(parse_annotation("PP:0UNSHARD"), None);
        assert_eq!(parse_unshard("PP:3UNSHARD"), Some(3));
        assert_eq!(parse_unshard("PP:UNSHARD"), None);
    }
}
