//! Pipeline-parallel merge: every rank is compacted, aligned on the smallest
//! `baseTimeNanoseconds`, stacked in pipeline order with fresh pids, and connected with
//! SEND→RECV, RECV→compute→SEND and UNSHARD→compute arrows.

use output_file::FsError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::compact::{CompactSummary, compact_without_pp_flows, metadata_event};
use crate::event::{
    Arena, Event, Generated, Kind, Object, Ph, Trace, raw, raw_i64, raw_micros, raw_str, rewrite,
};
use crate::{Config, Error, pp};

/// What the merge did, with the reference's keys in its order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MergeSummary {
    /// Always `"baseTimeNanoseconds"`.
    pub time_alignment: String,
    /// Offset added to each rank's timestamps, by global rank, in microseconds.
    pub time_offsets_us: BTreeMap<i64, f64>,
    /// The ranks in pipeline order.
    pub pp_ranks: Vec<PpRank>,
    /// SEND→RECV arrows drawn across ranks.
    pub pp_send_recv_pairs: usize,
    /// Non-zero usually means a rank's capture window was cut short.
    pub pp_send_recv_unmatched: usize,
    /// RECV→compute→SEND arrows drawn within a rank.
    pub pp_compute_dependency_pairs: usize,
    /// PP blocks that found no partner for such an arrow.
    pub pp_compute_dependency_unmatched: usize,
    /// UNSHARD all-gather → first later compute block arrows.
    pub pp_unshard_compute_pairs: usize,
    /// UNSHARD blocks with no later compute block of their stage.
    pub pp_unshard_compute_unmatched: usize,
    /// Each rank's compaction, by global rank.
    pub per_rank_compaction: BTreeMap<i64, CompactSummary>,
}

/// A rank's place in the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PpRank {
    /// The stage, from zero.
    pub pp_rank: i64,
    /// The rank's `distributedInfo.rank`.
    pub global_rank: i64,
}

/// A merged trace and what was done to it.
#[derive(Debug, Clone)]
pub struct Merged {
    /// The rewritten trace, ready to write.
    pub trace: Trace,
    /// What was done.
    pub summary: MergeSummary,
    /// Odd but usable input, for the trust list.
    pub diagnostics: Vec<String>,
}

/// The `rank<N>_trace.json[.gz]` files in `input` (a directory, or any file in it),
/// sorted by rank.
pub fn rank_trace_paths(input: &Path) -> Result<Vec<PathBuf>, Error> {
    let dir = if input.is_dir() {
        input.to_path_buf()
    } else {
        match input.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    };
    // The one listing of every tool (`load::files`): regular files only (reading a FIFO
    // named like a rank trace would block forever).
    let listing = load::files::list_files(&dir, |name| {
        name.starts_with("rank")
            && (name.ends_with("_trace.json.gz") || name.ends_with("_trace.json"))
    })
    .map_err(|e| listing_error(&dir, e))?;
    if let Some(e) = listing.unread.into_iter().next() {
        return Err(listing_error(&dir, e));
    }
    let mut ranked = Vec::new();
    for path in listing.files {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let rank = name
            .strip_prefix("rank")
            .and_then(|r| {
                r.strip_suffix("_trace.json.gz")
                    .or_else(|| r.strip_suffix("_trace.json"))
            })
            .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|d| d.parse::<u64>().ok());
        let Some(rank) = rank else {
            return Err(Error::BadRankFileName { path });
        };
        ranked.push((rank, path));
    }
    ranked.sort();
    if ranked.len() < 2 {
        return Err(Error::FewerThanTwoRanks { dir });
    }
    Ok(ranked.into_iter().map(|(_, p)| p).collect())
}

/// A directory the rank files could not be listed from, as this crate's error.
fn listing_error(dir: &Path, e: load::Error) -> Error {
    match e {
        load::Error::Io { path, source } => Error::Io(FsError {
            path,
            action: "cannot list the directory",
            source,
        }),
        other => Error::Io(FsError {
            path: dir.to_path_buf(),
            action: "cannot list the directory",
            source: std::io::Error::other(other.to_string()),
        }),
    }
}

/// Reads and merges rank trace files.
pub fn merge_pp_files(paths: &[PathBuf], config: &Config) -> Result<Merged, Error> {
    let traces = paths
        .iter()
        .map(|p| Trace::read_file(p))
        .collect::<Result<Vec<_>, _>>()?;
    merge_pp_traces(traces, config)
}

/// A trace's `distributedInfo`: its global rank and its process groups.
#[derive(Debug, Clone)]
pub(crate) struct DistributedInfo {
    pub rank: i64,
    pub backend: Value,
    pub groups: Vec<ProcessGroup>,
}

/// (pg_name, pg_desc, ranks) of a `pg_config` entry; ranks that are not integers are `None`.
type ProcessGroup = (Option<String>, Option<String>, Option<Vec<Option<i64>>>);

pub(crate) fn distributed_info(trace: &Trace) -> Result<DistributedInfo, Error> {
    let path = || trace.source.clone();
    let value: Value = trace
        .member("distributedInfo")
        .and_then(|v| serde_json::from_str(v.get()).ok())
        .unwrap_or(Value::Null);
    let Value::Object(info) = value else {
        return Err(Error::MissingDistributedInfo { path: path() });
    };
    let rank = info
        .get("rank")
        .and_then(Value::as_i64)
        .ok_or_else(|| Error::MissingRank { path: path() })?;
    let int = |v: &Value| {
        v.as_i64()
            .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
    };
    let groups = info
        .get("pg_config")
        .and_then(Value::as_array)
        .map(|groups| {
            groups
                .iter()
                .filter_map(Value::as_object)
                .map(|g| {
                    let s = |k: &str| g.get(k).and_then(Value::as_str).map(str::to_string);
                    let ranks = g
                        .get("ranks")
                        .and_then(Value::as_array)
                        .map(|r| r.iter().map(int).collect());
                    (s("pg_name"), s("pg_desc"), ranks)
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(DistributedInfo {
        rank,
        backend: info.get("backend").cloned().unwrap_or(Value::Null),
        groups,
    })
}

/// The PP rank of each trace: its index in the first `torchtitan_real_pp` / `mesh_pp`
/// group that holds every global rank, else its position among the sorted global ranks.
pub(crate) fn pp_rank_mapping(infos: &[DistributedInfo]) -> Vec<i64> {
    let ranks: Vec<i64> = infos.iter().map(|i| i.rank).collect();
    for info in infos {
        for (name, desc, group_ranks) in &info.groups {
            if name.as_deref() != Some("torchtitan_real_pp") && desc.as_deref() != Some("mesh_pp") {
                continue;
            }
            let Some(group_ranks) = group_ranks else {
                continue;
            };
            let position = |r: i64| group_ranks.iter().position(|g| *g == Some(r));
            if ranks.iter().all(|&r| position(r).is_some()) {
                return ranks
                    .iter()
                    .map(|&r| position(r).expect("checked above") as i64)
                    .collect();
            }
        }
    }
    let mut sorted = ranks.clone();
    sorted.sort_unstable();
    ranks
        .iter()
        .map(|r| {
            sorted
                .binary_search(r)
                .expect("every rank is in the sorted list") as i64
        })
        .collect()
}

fn base_time(trace: &Trace) -> Result<i64, Error> {
    trace
        .member("baseTimeNanoseconds")
        .and_then(|v| v.get().parse::<i64>().ok())
        .ok_or_else(|| Error::MissingBaseTime {
            path: trace.source.clone(),
        })
}

/// Compacts (with `config`), aligns and merges the traces of the ranks of one pipeline.
pub fn merge_pp_traces(traces: Vec<Trace>, config: &Config) -> Result<Merged, Error> {
    if traces.len() < 2 {
        let dir = traces
            .first()
            .and_then(|t| t.source.parent())
            .map_or_else(PathBuf::new, Path::to_path_buf);
        return Err(Error::FewerThanTwoRanks { dir });
    }
    if let Some(t) = traces.iter().find(|t| t.texts_in_file()) {
        return Err(Error::TextsInFile {
            path: t.source.clone(),
        });
    }
    let bases = traces
        .iter()
        .map(base_time)
        .collect::<Result<Vec<_>, _>>()?;
    let common_base = *bases.iter().min().expect("at least two traces");
    let infos = traces
        .iter()
        .map(distributed_info)
        .collect::<Result<Vec<_>, _>>()?;
    for (i, a) in infos.iter().enumerate() {
        if let Some(j) = infos[..i].iter().position(|b| b.rank == a.rank) {
            return Err(Error::DuplicateRank {
                rank: a.rank,
                first: traces[j].source.clone(),
                second: traces[i].source.clone(),
            });
        }
    }
    let pp_ranks = pp_rank_mapping(&infos);

    let mut offsets = BTreeMap::new();
    let mut per_rank = BTreeMap::new();
    let mut ranked = Vec::new();
    let mut diagnostics = Vec::new();
    for (k, trace) in traces.into_iter().enumerate() {
        let compacted = compact_without_pp_flows(trace, config)?;
        let offset_ns = bases[k] - common_base;
        offsets.insert(infos[k].rank, offset_ns as f64 / 1000.0);
        per_rank.insert(infos[k].rank, compacted.summary);
        diagnostics.extend(compacted.diagnostics);
        ranked.push((pp_ranks[k], infos[k].rank, offset_ns, compacted.trace, k));
    }
    ranked.sort_by_key(|r| r.0);

    let mut events = Vec::new();
    let mut pid_to_pp_rank = BTreeMap::new();
    let mut next_pid = 1;
    let mut arena = Arena::default();
    for (pp_rank, global_rank, offset_ns, trace, _) in &mut ranked {
        let rank = RankInfo {
            pp_rank: *pp_rank,
            global_rank: *global_rank,
            offset_ns: *offset_ns,
        };
        let rank_events = std::mem::take(&mut trace.events);
        // Every event's text moves to the merged arena (most are rewritten); the rank's
        // own arena is freed after its events are done.
        let rank_arena = std::mem::take(&mut trace.arena);
        next_pid = ranked_events(
            &trace.source,
            &rank_arena,
            rank_events,
            &rank,
            next_pid,
            &mut MergedEvents {
                events: &mut events,
                arena: &mut arena,
                pid_to_pp_rank: &mut pid_to_pp_rank,
            },
        )?;
    }

    let rank_of = |pid: i64| pid_to_pp_rank.get(&pid).copied().unwrap_or(0);
    let blocks = pp::annotation_blocks(&events, config.lanes);
    let unshards = pp::unshard_blocks(&events, config.lanes);
    let mut flows = Generated::new(&mut arena);
    let (send_recv, next_id) =
        pp::send_recv_flows(&blocks, &rank_of, pp::FIRST_FLOW_ID, &mut flows);
    let (local, next_id) = pp::local_dependency_flows(&blocks, &rank_of, next_id, &mut flows);
    let (unshard, _) = pp::unshard_flows(&unshards, &blocks, &rank_of, next_id, &mut flows);
    events.extend(flows.events);

    let summary = MergeSummary {
        time_alignment: "baseTimeNanoseconds".to_string(),
        time_offsets_us: offsets,
        pp_ranks: ranked
            .iter()
            .map(|r| PpRank {
                pp_rank: r.0,
                global_rank: r.1,
            })
            .collect(),
        pp_send_recv_pairs: send_recv.pairs,
        pp_send_recv_unmatched: send_recv.unmatched,
        pp_compute_dependency_pairs: local.pairs,
        pp_compute_dependency_unmatched: local.unmatched,
        pp_unshard_compute_pairs: unshard.pairs,
        pp_unshard_compute_unmatched: unshard.unmatched,
        per_rank_compaction: per_rank,
    };

    let (_, _, _, first, first_index) = ranked.into_iter().next().expect("at least two traces");
    let mut trace = Trace {
        source: first.source,
        members: first.members,
        events,
        arena,
        max_int_tid: first.max_int_tid,
        in_file: None,
    };
    trace.set_member("baseTimeNanoseconds", raw_i64(common_base));
    trace.set_member(
        "traceName",
        raw_str("Merged pipeline-parallel CUDA graph trace"),
    );
    #[derive(Serialize)]
    struct Info<'a> {
        backend: &'a Value,
        ranks: Vec<i64>,
        pp_rank_count: usize,
    }
    let info = Info {
        backend: &infos[first_index].backend,
        ranks: summary.pp_ranks.iter().map(|r| r.global_rank).collect(),
        pp_rank_count: summary.pp_ranks.len(),
    };
    let to_raw = |v: &dyn erased::Ser| raw(v.json());
    trace.set_member("distributedInfo", to_raw(&info));
    trace.set_member("cuda_graph_pp_merge", to_raw(&summary));
    Ok(Merged {
        trace,
        summary,
        diagnostics,
    })
}

mod erased {
    //! Serializing different summary types through one closure.
    pub trait Ser {
        fn json(&self) -> String;
    }
    impl<T: serde::Serialize> Ser for T {
        fn json(&self) -> String {
            serde_json::to_string(self).expect("summaries serialize to JSON")
        }
    }
}

/// Where the merge collects the events of all ranks.
struct MergedEvents<'a> {
    events: &'a mut Vec<Event>,
    arena: &'a mut Arena,
    pid_to_pp_rank: &'a mut BTreeMap<i64, i64>,
}

struct RankInfo {
    pp_rank: i64,
    global_rank: i64,
    offset_ns: i64,
}

/// Appends one rank's events with aligned timestamps, fresh pids (non-GPU processes
/// first), rank-unique flow ids and `PP rank N | ` track names, then its process metadata.
/// Returns the next free pid.
fn ranked_events(
    source: &Path,
    rank_arena: &Arena,
    rank_events: Vec<Event>,
    rank: &RankInfo,
    first_pid: i64,
    merged: &mut MergedEvents<'_>,
) -> Result<i64, Error> {
    let MergedEvents {
        events: out,
        arena,
        pid_to_pp_rank,
    } = merged;
    let mut pids: BTreeMap<i64, bool> = BTreeMap::new();
    for ev in &rank_events {
        if let Some(pid) = ev.pid() {
            *pids.entry(pid).or_insert(false) |= ev.kind() == Kind::Slice;
        }
    }
    let mut ordered: Vec<(i64, bool)> = pids.into_iter().collect();
    ordered.sort_by_key(|&(pid, gpu)| (gpu, pid));
    let pid_map: BTreeMap<i64, i64> = ordered
        .iter()
        .enumerate()
        .map(|(i, &(pid, _))| (pid, first_pid + i as i64))
        .collect();
    let prefix = format!("PP rank {} | ", rank.pp_rank);
    let mut flow_ids: std::collections::HashMap<String, i64> = std::collections::HashMap::new();
    for (index, mut ev) in rank_events.into_iter().enumerate() {
        let name = ev.name();
        if ev.ph() == Ph::Metadata && name == Some("process_sort_index") {
            continue;
        }
        let rename = ev.ph() == Ph::Metadata
            && matches!(name, Some("process_name" | "thread_name"))
            && ev.arg_name().is_some();
        let new_pid = ev.pid().map(|p| pid_map[&p]);
        let is_flow = ev.ph() == Ph::Flow && ev.has_id();
        let shift = rank.offset_ns != 0 && ev.ts().is_some();
        let text = rank_arena.get(ev.text());
        let text = if new_pid.is_some() || is_flow || rename || shift {
            let mut new_ts = None;
            let flow_count = flow_ids.len() as i64;
            let base_id = (rank.pp_rank + 1) * 1_000_000_000;
            let text = rewrite(source, index, &text, |o| {
                if let Some(pid) = new_pid {
                    o.set("pid", raw_i64(pid));
                }
                if is_flow && let Some(id) = o.get("id") {
                    let key = id.get().to_string();
                    let next = base_id + flow_count;
                    let id = *flow_ids.entry(key).or_insert(next);
                    o.set("id", raw_i64(id));
                }
                if shift && let Some(ts) = o.get("ts") {
                    let text = ts.get();
                    if text.starts_with(|c: char| c == '-' || c.is_ascii_digit())
                        && let Some(ns) = chrome_reader::Number::from_text(text).micros_to_nanos()
                    {
                        let ns = ns + rank.offset_ns;
                        new_ts = Some(ns);
                        o.set("ts", raw_micros(ns));
                    }
                }
                if rename && let Some(args) = o.get("args") {
                    let mut args = Object::parse(args.get()).map_err(|e| e.to_string())?;
                    if let Some(n) = args.get("name") {
                        let n: String = serde_json::from_str(n.get()).map_err(|e| e.to_string())?;
                        args.set("name", raw_str(&format!("{prefix}{n}")));
                    }
                    o.set("args", args.into_raw());
                }
                Ok(())
            })?;
            if let Some(pid) = new_pid {
                ev.set_pid(pid);
            }
            if let Some(ts) = new_ts {
                ev.set_ts(ts);
            }
            if rename && let Some(names) = ev.names.as_mut() {
                names.arg_name = names
                    .arg_name
                    .as_deref()
                    .map(|n| format!("{prefix}{n}").into_boxed_str());
            }
            std::borrow::Cow::Owned(text)
        } else {
            text
        };
        ev.set_text(arena.store(&text));
        out.push(ev);
    }
    for (index, &(old_pid, gpu)) in ordered.iter().enumerate() {
        let pid = pid_map[&old_pid];
        pid_to_pp_rank.insert(pid, rank.pp_rank);
        let role = if gpu {
            "GPU".to_string()
        } else {
            format!("process {old_pid}")
        };
        let name = format!(
            "PP rank {} (global rank {}) | {role}",
            rank.pp_rank, rank.global_rank
        );
        out.push(metadata_event(
            "process_name",
            pid,
            0,
            "name",
            raw_str(&name),
            Some(&name),
            arena,
        ));
        out.push(metadata_event(
            "process_sort_index",
            pid,
            0,
            "sort_index",
            raw_i64(rank.pp_rank * 1000 + index as i64),
            None,
            arena,
        ));
    }
    Ok(first_pid + ordered.len() as i64)
}
