//! Synthetic Kineto traces from small declarative descriptions: a CUDA-graph replay
//! trace with hundreds of near-empty capture streams, and pipeline-parallel rank sets.
//! Tests build them in memory; `cargo xtask fixtures` can write them with [`write_fixtures`].

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::event::micros_text;

/// A CUDA-graph replay trace: every captured kernel on its own stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphTraceSpec {
    /// Capture streams, each holding one kernel per replay.
    pub capture_streams: u32,
    /// Graph replays.
    pub replays: u32,
    /// One NCCL all-gather (on its own stream) per this many kernels, overlapping compute.
    pub all_gather_every: u32,
    /// Also project one `ProfilerStep` GPU annotation onto every capture stream, as
    /// PyTorch does, so the compaction has identical overlapping spans to coalesce.
    pub step_annotations: bool,
}

impl Default for GraphTraceSpec {
    fn default() -> Self {
        GraphTraceSpec {
            capture_streams: 300,
            replays: 3,
            all_gather_every: 8,
            step_annotations: true,
        }
    }
}

const GPU_PID: i64 = 0;
const CPU_PID: i64 = 4242;
const CPU_TID: i64 = 77;

/// A timestamp in µs text from ns, as a JSON number.
fn ts(ns: i64) -> Value {
    let n: serde_json::Number = micros_text(ns)
        .parse()
        .expect("micros_text writes a valid JSON number");
    Value::Number(n)
}

fn kernel(name: &str, stream: i64, start: i64, dur: i64, annotation: Option<&str>) -> Value {
    let mut args = json!({"stream": stream, "device": 0, "correlation": start});
    if let Some(a) = annotation {
        args["name"] = json!(a);
    }
    json!({"ph": "X", "cat": "kernel", "name": name, "pid": GPU_PID, "tid": stream,
           "ts": ts(start), "dur": ts(dur), "args": args})
}

/// Streams the events of a CUDA-graph replay trace to `emit`.
pub fn graph_trace_events(spec: &GraphTraceSpec, mut emit: impl FnMut(Value)) {
    let streams = i64::from(spec.capture_streams);
    let period = 10_000; // 10 µs per kernel slot
    let replay_len = streams * period + 50_000;
    emit(
        json!({"ph": "M", "name": "process_name", "pid": GPU_PID, "tid": 0, "args": {"name": "GPU 0"}}),
    );
    emit(
        json!({"ph": "M", "name": "thread_name", "pid": CPU_PID, "tid": CPU_TID, "args": {"name": "python"}}),
    );
    for k in 0..streams {
        emit(
            json!({"ph": "M", "name": "thread_name", "pid": GPU_PID, "tid": 1000 + k,
                    "args": {"name": format!("stream {}", 1000 + k)}}),
        );
    }
    for r in 0..i64::from(spec.replays) {
        let t0 = 1_000_000 + r * replay_len;
        let launch = t0 - 5_000;
        emit(
            json!({"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": CPU_PID,
                    "tid": CPU_TID, "ts": ts(launch), "dur": ts(3_000), "args": {"correlation": r}}),
        );
        emit(
            json!({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": r, "pid": CPU_PID,
                    "tid": CPU_TID, "ts": ts(launch), "bp": "e"}),
        );
        for k in 0..streams {
            let start = t0 + k * period;
            emit(kernel(
                &format!("graph_kernel_{k}"),
                1000 + k,
                start,
                8_000,
                None,
            ));
            if k == 0 {
                emit(
                    json!({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": r, "pid": GPU_PID,
                            "tid": 1000, "ts": ts(start), "bp": "e"}),
                );
            }
            if spec.all_gather_every > 0 && k % i64::from(spec.all_gather_every) == 0 {
                let stream = 5000 + k;
                emit(
                    json!({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL",
                            "pid": GPU_PID, "tid": stream, "ts": ts(start + 1_000),
                            "dur": ts(25_000), "args": {"stream": stream, "device": 0}}),
                );
            }
            if spec.step_annotations {
                emit(
                    json!({"ph": "X", "cat": "gpu_user_annotation", "name": format!("ProfilerStep#{r}"),
                            "pid": GPU_PID, "tid": 1000 + k, "ts": ts(t0 - 1_000),
                            "dur": ts(streams * period + 2_000), "args": {"External id": r}}),
                );
            }
        }
        emit(
            json!({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)",
                    "pid": GPU_PID, "tid": 7, "ts": ts(t0 + streams * period + 1_000),
                    "dur": ts(4_000), "args": {"stream": 7, "device": 0}}),
        );
    }
}

/// The whole trace as JSON text.
pub fn graph_trace_json(spec: &GraphTraceSpec) -> String {
    let mut out = Vec::new();
    write_trace(&mut out, &json!({"schemaVersion": 1}), |emit| {
        graph_trace_events(spec, emit)
    })
    .expect("writing to a Vec cannot fail");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// A pipeline-parallel rank set: one stage per rank, GPipe-like schedule, CUDA-graph
/// kernels carrying their `PP:` annotation in `args.name`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PpSpec {
    /// Pipeline ranks (stages).
    pub ranks: u32,
    /// Microbatches per step.
    pub microbatches: u32,
    /// `baseTimeNanoseconds` of rank 0; rank r gets `base + r * base_stagger_ns`.
    pub base_time_ns: i64,
    /// How far apart the ranks' base times are.
    pub base_stagger_ns: i64,
    /// Drop every event of this rank that starts after this many µs of the schedule.
    pub cut: Option<(u32, i64)>,
}

impl Default for PpSpec {
    fn default() -> Self {
        PpSpec {
            ranks: 4,
            microbatches: 4,
            base_time_ns: 1_700_000_000_000_000_000,
            base_stagger_ns: 12_345,
            cut: None,
        }
    }
}

/// The events of rank `rank` of a PP set (times relative to its own base time).
pub fn pp_rank_events(spec: &PpSpec, rank: u32, mut emit: impl FnMut(Value)) {
    let n = i64::from(spec.ranks);
    let m_count = i64::from(spec.microbatches);
    let s = i64::from(rank);
    let shift = s * spec.base_stagger_ns; // absolute = base0 + t; local = t - shift
    let us = 1_000;
    let cut_ns = spec.cut.filter(|(r, _)| *r == rank).map(|(_, t)| t * us);
    let mut stream_seq = 100;
    let mut correlation = 0;
    let put = |emit: &mut dyn FnMut(Value), v: Value, start: i64| {
        if cut_ns.is_none_or(|c| start <= c) {
            emit(v);
        }
    };
    let local = |t: i64| t - shift;
    emit(
        json!({"ph": "M", "name": "process_name", "pid": s, "tid": 0, "args": {"name": format!("GPU {s}")}}),
    );
    emit(
        json!({"ph": "M", "name": "process_name", "pid": CPU_PID, "tid": 0, "args": {"name": "python"}}),
    );
    // Graph kernels, each on a fresh capture stream, a launch and ac2g flow for the first.
    let mut graph = |emit: &mut dyn FnMut(Value),
                     name: &str,
                     start: i64,
                     count: i64,
                     label: &str| {
        for k in 0..count {
            stream_seq += 1;
            let stream = stream_seq;
            let t = start + k * 25 * us;
            let mut ev = kernel(name, stream, local(t), 20 * us, Some(label));
            ev["pid"] = json!(s);
            put(emit, ev, t);
            if k == 0 {
                correlation += 1;
                let launch = t - 10 * us;
                put(
                    emit,
                    json!({"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": CPU_PID,
                                 "tid": CPU_TID, "ts": ts(local(launch)), "dur": ts(5 * us),
                                 "args": {"correlation": correlation}}),
                    launch,
                );
                put(
                    emit,
                    json!({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": correlation, "pid": CPU_PID,
                                 "tid": CPU_TID, "ts": ts(local(launch)), "bp": "e"}),
                    launch,
                );
                put(
                    emit,
                    json!({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": correlation, "pid": s,
                                 "tid": stream, "ts": ts(local(t)), "bp": "e"}),
                    launch,
                );
            }
        }
    };
    let slot = 200 * us;
    let forward = |m: i64, stage: i64| 1_000 * us + (stage + m) * slot;
    let backward_start = 1_000 * us + (n + m_count) * slot + 500 * us;
    let backward = |m: i64, stage: i64| backward_start + ((n - 1 - stage) + m) * slot;
    // One unshard (FSDP all-gather) per stage, before its first forward: neighbouring
    // kernels with the same annotation would merge into one span anyway.
    graph(
        &mut emit,
        "ncclDevKernel_AllGather_RING_LL",
        forward(0, s) - 100 * us,
        1,
        &format!("PP:{s}UNSHARD"),
    );
    for m in 0..m_count {
        let f = forward(m, s);
        if s > 0 {
            graph(
                &mut emit,
                "ncclDevKernel_SendRecv",
                f - 20 * us,
                1,
                &format!("PP:{s}RECV_F{m}"),
            );
        }
        graph(
            &mut emit,
            "sm90_xmma_gemm_bf16",
            f + 20 * us,
            4,
            &format!("PP:{s}F{m}"),
        );
        if s < n - 1 {
            graph(
                &mut emit,
                "ncclDevKernel_SendRecv",
                f + 180 * us,
                1,
                &format!("PP:{s}SEND_F{m}"),
            );
        }
        let b = backward(m, s);
        if s < n - 1 {
            graph(
                &mut emit,
                "ncclDevKernel_SendRecv",
                b - 20 * us,
                1,
                &format!("PP:{s}RECV_B{m}"),
            );
        }
        graph(
            &mut emit,
            "sm90_xmma_gemm_bf16_dgrad",
            b + 20 * us,
            4,
            &format!("PP:{s}B{m}"),
        );
        if s > 0 {
            graph(
                &mut emit,
                "ncclDevKernel_SendRecv",
                b + 180 * us,
                1,
                &format!("PP:{s}SEND_B{m}"),
            );
        }
    }
}

/// The files of a PP set: (`rank<r>_trace.json`, JSON text) per rank.
pub fn pp_rank_traces(spec: &PpSpec) -> Vec<(String, String)> {
    (0..spec.ranks)
        .map(|rank| {
            let top = json!({
                "schemaVersion": 1,
                "distributedInfo": {
                    "backend": "nccl",
                    "rank": rank,
                    "world_size": spec.ranks,
                    "pg_config": [{"pg_name": "torchtitan_real_pp", "pg_desc": "mesh_pp",
                                   "ranks": (0..spec.ranks).collect::<Vec<_>>()}],
                },
                "baseTimeNanoseconds": spec.base_time_ns + i64::from(rank) * spec.base_stagger_ns,
            });
            let mut out = Vec::new();
            write_trace(&mut out, &top, |emit| pp_rank_events(spec, rank, emit))
                .expect("writing to a Vec cannot fail");
            (
                format!("rank{rank}_trace.json"),
                String::from_utf8(out).expect("serde_json writes UTF-8"),
            )
        })
        .collect()
}

/// Writes a trace object: the members of `top` (an object), then `traceEvents`.
pub fn write_trace(
    out: &mut impl Write,
    top: &Value,
    events: impl FnOnce(&mut dyn FnMut(Value)),
) -> io::Result<()> {
    out.write_all(b"{")?;
    if let Value::Object(map) = top {
        for (k, v) in map {
            serde_json::to_writer(&mut *out, k)?;
            out.write_all(b":")?;
            serde_json::to_writer(&mut *out, v)?;
            out.write_all(b",")?;
        }
    }
    out.write_all(b"\"traceEvents\":[")?;
    let mut first = true;
    let mut res: io::Result<()> = Ok(());
    events(&mut |ev: Value| {
        if res.is_err() {
            return;
        }
        res = (|| {
            if !first {
                out.write_all(b",\n")?;
            }
            first = false;
            serde_json::to_writer(&mut *out, &ev)?;
            Ok(())
        })();
    });
    res?;
    out.write_all(b"]}\n")
}

/// The synthetic fixtures, as (path relative to their folder, JSON text):
/// `cuda_graph_300_streams.json`, and the PP sets `pp4/`, `pp2/` and `pp4_cut/` (rank 3
/// cut short). `cargo xtask fixtures` commits them under `testdata/lanes/`.
pub fn fixture_files() -> Vec<(PathBuf, String)> {
    let mut files = vec![(
        PathBuf::from("cuda_graph_300_streams.json"),
        graph_trace_json(&GraphTraceSpec::default()),
    )];
    let sets = [
        ("pp4", PpSpec::default()),
        (
            "pp2",
            PpSpec {
                ranks: 2,
                ..PpSpec::default()
            },
        ),
        (
            "pp4_cut",
            PpSpec {
                cut: Some((3, 2_000)),
                ..PpSpec::default()
            },
        ),
    ];
    for (name, spec) in sets {
        for (file, text) in pp_rank_traces(&spec) {
            files.push((Path::new(name).join(file), text));
        }
    }
    files
}

/// Writes [`fixture_files`] into `dir` (through `output_file`, replacing earlier copies).
/// Returns the files written.
pub fn write_fixtures(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let rules = output_file::Rules {
        overwrite: true,
        inputs: &[],
    };
    let mut written = Vec::new();
    for (rel, text) in fixture_files() {
        let path = dir.join(rel);
        output_file::write(&path, &rules, text.as_bytes()).map_err(io::Error::other)?;
        written.push(path);
    }
    Ok(written)
}
