//! `cargo xtask fixtures [--check]`: synthetic Kineto traces for tests, and the golden
//! outputs of the reference script (`analyze_profile.py`) that `analyze-profile --compat`
//! must reproduce.
//!
//! - Synthetic traces are generated from the declarative [`SYNTHETIC`] descriptions into
//!   `testdata/chrome/ok/`, plus `compat-edge-cases.json` ([`COMPAT_EDGE_CASES`]), events
//!   chosen to exercise the reference script's Python semantics.
//! - The CUDA-graph and pipeline-parallel traces of `lanes::synth` go to `testdata/lanes/`.
//! - Small Nsight Systems exports and ROCm profiler captures, valid and malformed, go to
//!   `testdata/nsys/` and `testdata/rocprof/` (`synth_gpu.rs`).
//! - Golden outputs: `python3 ../shared/reference/analyze_profile.py --trace_file F` and
//!   `... --json` for every synthetic trace and every real PyTorch trace under
//!   `$TRACEWISE_TRACES/pytorch` (default `../shared/traces`, relative to the workspace
//!   root), written to `testdata/golden/analyze-profile/<path with / replaced by __>.txt`
//!   and `.json`. Real traces are named by their path below `pytorch/`, synthetic ones by
//!   their path below the workspace root (`testdata__chrome__ok__...`).
//! - The `[loading] PATH` line of a golden `.txt` always spells the path as the script
//!   sees it when run from the workspace root with the default `TRACEWISE_TRACES`
//!   (`../shared/traces/pytorch/...`, or `testdata/chrome/ok/...`); when the traces live
//!   elsewhere, that one line is rewritten to this canonical spelling.
//!
//! `--check` regenerates everything in memory and fails if any file would change, or if a
//! golden file has no trace any more.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::workspace_root;

const GOLDEN_DIR: &str = "testdata/golden/analyze-profile";
const SYNTHETIC_DIR: &str = "testdata/chrome/ok";
const LANES_DIR: &str = "testdata/lanes";
const REFERENCE_SCRIPT: &str = "../shared/reference/analyze_profile.py";
const DEFAULT_TRACES: &str = "../shared/traces";

pub(crate) fn main(args: &[String]) -> Result<(), String> {
    let check = match args {
        [] => false,
        [flag] if flag == "--check" => true,
        _ => return Err("usage: cargo xtask fixtures [--check]".to_owned()),
    };
    let root = workspace_root();
    let mut files: BTreeMap<PathBuf, Vec<u8>> = BTreeMap::new();

    // Synthetic traces.
    let mut traces: Vec<(String, String)> = Vec::new(); // (path as given to the script, golden key)
    for spec in SYNTHETIC {
        for rank in 0..spec.world_size {
            let rel = format!("{SYNTHETIC_DIR}/{}/rank{rank}.pt.trace.json", spec.name);
            files.insert(PathBuf::from(&rel), generate(spec, rank).into_bytes());
            traces.push((rel.clone(), rel.replace('/', "__")));
        }
    }
    // Synthetic CUDA-graph and pipeline-parallel traces for compact-cuda-graph-trace.
    for (rel, text) in lanes::synth::fixture_files() {
        files.insert(Path::new(LANES_DIR).join(rel), text.into_bytes());
    }
    // The synthetic XSpace of attribute-kernels (match kinds, command buffer, while, async
    // collective missing from the module, a program under two ids).
    files.insert(
        PathBuf::from("testdata/attribution/synth.xplane.pb"),
        crate::synth_xplane::attribution_fixture(),
    );
    // The synthetic XSpace corpus of xplane-reader's tests (ok, odd and malformed files).
    for (rel, bytes) in crate::synth_xplane::corpus_files() {
        files.insert(rel, bytes);
    }
    // Small Nsight Systems and ROCm profiler captures, valid and malformed.
    for (rel, bytes) in crate::synth_gpu::corpus_files()? {
        files.insert(rel, bytes);
    }
    // Hand-written edge cases of the reference script's Python semantics.
    let rel = format!("{SYNTHETIC_DIR}/compat-edge-cases.json");
    files.insert(PathBuf::from(&rel), COMPAT_EDGE_CASES.as_bytes().to_vec());
    traces.push((rel.clone(), rel.replace('/', "__")));
    // Synthetic traces must be on disk before the script reads them.
    if !check {
        write_files(&root, &files)?;
    }

    // Real traces.
    let traces_dir_text =
        std::env::var("TRACEWISE_TRACES").unwrap_or_else(|_| DEFAULT_TRACES.to_owned());
    let pytorch_dir = root.join(&traces_dir_text).join("pytorch");
    let real_available = pytorch_dir.is_dir();
    if real_available {
        for rel in real_trace_files(&pytorch_dir)? {
            let given = format!("{}/pytorch/{rel}", traces_dir_text.trim_end_matches('/'));
            traces.push((given, rel.replace('/', "__")));
        }
    } else {
        eprintln!(
            "fixtures: {} not found (set TRACEWISE_TRACES): golden outputs of the real traces are neither written nor checked",
            pytorch_dir.display()
        );
    }

    // Golden outputs of the reference script.
    let script = root.join(REFERENCE_SCRIPT);
    if !script.is_file() {
        return Err(format!(
            "{}: the reference script is missing; it is needed to regenerate the golden outputs",
            script.display()
        ));
    }
    python_version()?;
    for (given, key) in &traces {
        let text = run_reference_script(&root, given, false)?;
        let text = canonical_loading_line(&text, given, &traces_dir_text);
        let json = run_reference_script(&root, given, true)?;
        files.insert(
            Path::new(GOLDEN_DIR).join(format!("{key}.txt")),
            text.into_bytes(),
        );
        files.insert(
            Path::new(GOLDEN_DIR).join(format!("{key}.json")),
            json.into_bytes(),
        );
    }

    // Golden files whose trace is gone.
    let mut stale = Vec::new();
    if real_available && let Ok(entries) = std::fs::read_dir(root.join(GOLDEN_DIR)) {
        for entry in entries.flatten() {
            let rel = Path::new(GOLDEN_DIR).join(entry.file_name());
            if !files.contains_key(&rel) {
                stale.push(rel);
            }
        }
    }
    stale.sort();

    if check {
        let mut drift: Vec<String> = files
            .iter()
            .filter(|(rel, content)| std::fs::read(root.join(rel)).ok().as_ref() != Some(*content))
            .map(|(rel, _)| format!("  changed or missing: {}", rel.display()))
            .collect();
        drift.extend(
            stale
                .iter()
                .map(|rel| format!("  no longer generated: {}", rel.display())),
        );
        if !drift.is_empty() {
            return Err(format!(
                "fixtures are out of date (run `cargo xtask fixtures`):\n{}",
                drift.join("\n")
            ));
        }
        eprintln!("fixtures: {} files up to date", files.len());
    } else {
        write_files(&root, &files)?;
        for rel in &stale {
            std::fs::remove_file(root.join(rel))
                .map_err(|e| format!("{}: cannot remove: {e}", rel.display()))?;
        }
        eprintln!(
            "fixtures: wrote {} files, removed {}",
            files.len(),
            stale.len()
        );
    }
    Ok(())
}

fn write_files(root: &Path, files: &BTreeMap<PathBuf, Vec<u8>>) -> Result<(), String> {
    for (rel, content) in files {
        let path = root.join(rel);
        if std::fs::read(&path).ok().as_ref() == Some(content) {
            continue;
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
        }
        // Write to a temporary name, then rename into place.
        let tmp = path.with_extension("tmp-xtask");
        std::fs::write(&tmp, content)
            .map_err(|e| format!("{}: cannot write: {e}", tmp.display()))?;
        std::fs::rename(&tmp, &path)
            .map_err(|e| format!("{}: cannot rename into place: {e}", path.display()))?;
    }
    Ok(())
}

/// Trace files below `dir` (`*.json`, `*.json.gz`), as `/`-separated relative paths,
/// sorted; the non-trace files (`reference*` folders, `execution_details.json`) are left out.
fn real_trace_files(dir: &Path) -> Result<Vec<String>, String> {
    fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) -> Result<(), String> {
        let entries =
            std::fs::read_dir(dir).map_err(|e| format!("{}: cannot list: {e}", dir.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: cannot list: {e}", dir.display()))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            let path = entry.path();
            if path.is_dir() {
                if !name.starts_with("reference") {
                    walk(&path, &rel, out)?;
                }
            } else if (name.ends_with(".json") || name.ends_with(".json.gz"))
                && name != "execution_details.json"
            {
                out.push(rel);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, "", &mut out)?;
    out.sort();
    Ok(out)
}

fn python_version() -> Result<(), String> {
    match Command::new("python3").arg("--version").output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!(
            "python3 --version failed ({}): python3 is needed to regenerate the reference script's golden outputs",
            out.status
        )),
        Err(e) => Err(format!(
            "python3 not found ({e}): it is needed to regenerate the reference script's golden outputs"
        )),
    }
}

fn run_reference_script(root: &Path, trace: &str, json: bool) -> Result<String, String> {
    let mut cmd = Command::new("python3");
    cmd.current_dir(root)
        .arg(REFERENCE_SCRIPT)
        .arg("--trace_file")
        .arg(trace);
    if json {
        cmd.arg("--json");
    }
    let out = cmd
        .output()
        .map_err(|e| format!("python3 {REFERENCE_SCRIPT}: cannot run: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "python3 {REFERENCE_SCRIPT} --trace_file {trace}{} failed ({}):\n{}",
            if json { " --json" } else { "" },
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8(out.stdout)
        .map_err(|e| format!("{trace}: reference script output is not UTF-8: {e}"))
}

/// Rewrites `[loading] <given> (` to the canonical spelling of the path.
fn canonical_loading_line(text: &str, given: &str, traces_dir_text: &str) -> String {
    let prefix = format!("{}/", traces_dir_text.trim_end_matches('/'));
    let Some(rest) = given.strip_prefix(&prefix) else {
        return text.to_owned();
    };
    let canonical = format!("{DEFAULT_TRACES}/{rest}");
    text.replacen(
        &format!("[loading] {given} ("),
        &format!("[loading] {canonical} ("),
        1,
    )
}

/// A synthetic Kineto capture: one file per rank, each rank running the same steps.
struct TraceSpec {
    /// Folder name under `testdata/chrome/ok/`.
    name: &'static str,
    world_size: u32,
    steps: u32,
    /// CPU ops run in order in every step on the main thread, each launching its GPU work.
    ops: &'static [OpSpec],
}

struct OpSpec {
    name: &'static str,
    /// `cpu_op`, or `user_annotation` (then its GPU work has no launching CPU op).
    cat: &'static str,
    /// Microseconds the op runs on the CPU (launches are placed inside it).
    cpu_us: u32,
    launches: &'static [Launch],
}

enum Launch {
    /// `cudaLaunchKernel` → one kernel on `stream`.
    Kernel {
        name: &'static str,
        stream: u32,
        dur_us: &'static str,
    },
    /// `cudaMemcpyAsync` → `gpu_memcpy`.
    Memcpy {
        name: &'static str,
        stream: u32,
        dur_us: &'static str,
        bytes: u64,
    },
    /// `cudaMemsetAsync` → `gpu_memset`.
    Memset {
        stream: u32,
        dur_us: &'static str,
        bytes: u64,
    },
    /// `cudaGraphLaunch` → several kernels sharing the launch's correlation id.
    Graph {
        graph_id: u32,
        stream: u32,
        kernels: &'static [(&'static str, &'static str)],
    },
    /// A runtime call that launches nothing (synchronisation).
    Sync { name: &'static str, dur_us: u32 },
}

/// The synthetic captures. Durations are JSON number text: Kineto writes integers, newer
/// versions decimals; both occur so the reference script's int/float sums are exercised.
const SYNTHETIC: &[TraceSpec] = &[TraceSpec {
    name: "tiny-train",
    world_size: 2,
    steps: 2,
    ops: &[
        OpSpec {
            name: "aten::to",
            cat: "cpu_op",
            cpu_us: 20,
            launches: &[Launch::Memcpy {
                name: "Memcpy HtoD (Pageable -> Device)",
                stream: 7,
                dur_us: "12",
                bytes: 1_048_576,
            }],
        },
        OpSpec {
            name: "aten::linear",
            cat: "cpu_op",
            cpu_us: 30,
            launches: &[Launch::Kernel {
                name: "ampere_sgemm_128x64_tn",
                stream: 7,
                dur_us: "95",
            }],
        },
        OpSpec {
            name: "aten::_scaled_dot_product_flash_attention",
            cat: "cpu_op",
            cpu_us: 25,
            launches: &[Launch::Kernel {
                name: "void flash_attn::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4>>(Flash_fwd_params)",
                stream: 7,
                dur_us: "60.5",
            }],
        },
        OpSpec {
            name: "aten::rms_norm",
            cat: "cpu_op",
            cpu_us: 15,
            launches: &[Launch::Kernel {
                name: "void at::native::vectorized_elementwise_kernel<4, at::native::rsqrt_kernel_cuda>(int, float*)",
                stream: 7,
                dur_us: "8",
            }],
        },
        OpSpec {
            name: "aten::zero_",
            cat: "cpu_op",
            cpu_us: 10,
            launches: &[Launch::Memset {
                stream: 7,
                dur_us: "2",
                bytes: 4096,
            }],
        },
        OpSpec {
            name: "CompiledFunction",
            cat: "cpu_op",
            cpu_us: 20,
            launches: &[Launch::Graph {
                graph_id: 1,
                stream: 7,
                kernels: &[
                    ("triton_poi_fused_add_mul_0", "5"),
                    ("triton_red_fused_sum_1", "7.25"),
                ],
            }],
        },
        OpSpec {
            name: "nccl:all_reduce",
            cat: "cpu_op",
            cpu_us: 20,
            launches: &[Launch::Kernel {
                name: "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
                stream: 20,
                dur_us: "150",
            }],
        },
        OpSpec {
            name: "Optimizer.step#AdamW.step",
            cat: "user_annotation",
            cpu_us: 20,
            launches: &[
                Launch::Kernel {
                    name: "void at::native::multi_tensor_apply_kernel<FusedAdamMathFunctor>(TensorListMetadata<4>)",
                    stream: 7,
                    dur_us: "30",
                },
                Launch::Sync {
                    name: "cudaStreamSynchronize",
                    dur_us: 3,
                },
            ],
        },
    ],
}];

/// Events that exercise the reference script's Python semantics: ties (stable sorts,
/// `max()` keeps the first), `int` sums turning `float` (`1.5`, `2e1`, `1e-3`, `0.1 +
/// 0.2`), missing `dur`, `name` and `cat`, a negative `dur`, a CPU op the reference script
/// counts (`sync`, `ncclAllReduce`), a name matching two patterns of one attention backend,
/// names of 80+ code points (CJK, an emoji), quotes and backslashes, and a bucket over 1 s.
const COMPAT_EDGE_CASES: &str = r#"{"schemaVersion": 1, "traceName": "compat edge cases", "traceEvents": [
{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "cpu_op", "name": "aten::mm", "dur": 500},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "kernel", "name": "volta_sgemm_128x64_nn", "dur": 300},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "kernel", "name": "tie_b_kernel", "dur": 200},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "kernel", "name": "tie_a_kernel", "dur": 200},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "kernel", "name": "FlashAttn flash_attn_fwd", "dur": 150},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "kernel", "name": "cutlassF_mem_efficient", "dur": 400},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "kernel", "name": "aten::softmax", "dur": 800},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "dur": 1.5},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "gpu_memset", "name": "Memset (Device)"},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "dur": 7},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "cpu_op", "name": "aten::_local_scalar_dense Sync", "dur": 3},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "cpu_op", "name": "ncclAllReduce_custom", "dur": 20.0},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "kernel", "name": "rms_norm_kernel", "dur": 0.001},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "kernel", "name": "aten::add_ elementwise \"quoted\" back\\slash", "dur": 250},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "kernel", "name": "内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核内核", "dur": 90},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "kernel", "name": "emoji 😀 kernel xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "dur": 90},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "kernel", "name": "negative_dur_kernel", "dur": -3},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "kernel", "dur": 4},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "name": "no_cat_event", "dur": 1000},
{"ph": "i", "name": "instant", "cat": "kernel", "pid": 1, "tid": 1, "ts": 11, "s": "t"},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "user_annotation", "name": "ProfilerStep#1", "dur": 3000000},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "kernel", "name": "aten::permute_copy_kernel", "dur": 0.1},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "kernel", "name": "aten::permute_copy_kernel", "dur": 0.2},
{"ph": "X", "pid": 1, "tid": 1, "ts": 10, "cat": "gpu_memcpy", "name": "Memcpy HtoD", "dur": 600}
]}
"#;

const CPU_PID: u32 = 4242;
const CPU_TID: u32 = 4243;

/// Writes the Kineto JSON of one rank: one event per line, Kineto's field order.
fn generate(spec: &TraceSpec, rank: u32) -> String {
    let mut events: Vec<String> = Vec::new();
    events.push(format!(
        r#"{{"name": "process_name", "ph": "M", "ts": 0, "pid": {CPU_PID}, "tid": 0, "args": {{"name": "python3"}}}}"#
    ));
    events.push(format!(
        r#"{{"name": "thread_name", "ph": "M", "ts": 0, "pid": {CPU_PID}, "tid": {CPU_TID}, "args": {{"name": "thread {CPU_TID} (python3)"}}}}"#
    ));
    events.push(
        r#"{"name": "process_name", "ph": "M", "ts": 0, "pid": 0, "tid": 0, "args": {"name": "GPU 0"}}"#
            .to_owned(),
    );
    let mut correlation = 100u32 + rank * 1000;
    let mut external = 1u32 + rank * 1000;
    let mut cpu_t = 1000u64; // µs
    let mut stream_free: BTreeMap<u32, f64> = BTreeMap::new();
    // Stragglers: rank r's kernels run a little longer, so ranks differ.
    let stretch = 1.0 + f64::from(rank) * 0.5;
    for step in 0..spec.steps {
        let step_start = cpu_t;
        let mut body: Vec<String> = Vec::new();
        cpu_t += 5;
        for op in spec.ops {
            let op_start = cpu_t;
            let op_first_event = body.len();
            let op_external = external;
            external += 1;
            let mut launch_t = op_start + 2;
            for launch in op.launches {
                let (api, gpu_events): (&str, Vec<(String, &str, String, u32)>) = match launch {
                    Launch::Kernel {
                        name,
                        stream,
                        dur_us,
                    } => (
                        "cudaLaunchKernel",
                        vec![(name.to_string(), "kernel", dur_us.to_string(), *stream)],
                    ),
                    Launch::Memcpy {
                        name,
                        stream,
                        dur_us,
                        ..
                    } => (
                        "cudaMemcpyAsync",
                        vec![(name.to_string(), "gpu_memcpy", dur_us.to_string(), *stream)],
                    ),
                    Launch::Memset { stream, dur_us, .. } => (
                        "cudaMemsetAsync",
                        vec![(
                            "Memset (Device)".to_owned(),
                            "gpu_memset",
                            dur_us.to_string(),
                            *stream,
                        )],
                    ),
                    Launch::Graph {
                        stream, kernels, ..
                    } => (
                        "cudaGraphLaunch",
                        kernels
                            .iter()
                            .map(|(n, d)| (n.to_string(), "kernel", d.to_string(), *stream))
                            .collect(),
                    ),
                    Launch::Sync { name, dur_us } => {
                        body.push(format!(
                            r#"{{"ph": "X", "cat": "cuda_runtime", "name": "{name}", "pid": {CPU_PID}, "tid": {CPU_TID}, "ts": {launch_t}, "dur": {dur_us}, "args": {{"External id": {op_external}}}}}"#
                        ));
                        launch_t += u64::from(*dur_us) + 1;
                        continue;
                    }
                };
                let corr = correlation;
                correlation += 1;
                body.push(format!(
                    r#"{{"ph": "X", "cat": "cuda_runtime", "name": "{api}", "pid": {CPU_PID}, "tid": {CPU_TID}, "ts": {launch_t}, "dur": 4, "args": {{"External id": {op_external}, "correlation": {corr}}}}}"#
                ));
                body.push(format!(
                    r#"{{"ph": "s", "id": {corr}, "pid": {CPU_PID}, "tid": {CPU_TID}, "ts": {launch_t}, "cat": "ac2g", "name": "ac2g"}}"#
                ));
                let mut first = true;
                for (name, cat, dur_text, stream) in gpu_events {
                    let dur: f64 = dur_text.parse().unwrap_or(0.0) * stretch;
                    let dur_text = if dur_text.contains('.') || dur.fract() != 0.0 {
                        format!("{dur:.3}")
                    } else {
                        format!("{dur:.0}")
                    };
                    let free = stream_free.entry(stream).or_insert(0.0);
                    let start = free.max(launch_t as f64 + 5.0);
                    *free = start + dur;
                    let mut args = format!(
                        r#""External id": {op_external}, "device": 0, "stream": {stream}, "correlation": {corr}"#
                    );
                    match launch {
                        Launch::Memcpy { bytes, .. } | Launch::Memset { bytes, .. } => {
                            let _ = write!(args, r#", "bytes": {bytes}"#);
                        }
                        Launch::Graph { graph_id, .. } => {
                            let _ = write!(args, r#", "graph id": {graph_id}"#);
                        }
                        _ => {}
                    }
                    body.push(format!(
                        r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 0, "tid": {stream}, "ts": {start:.3}, "dur": {dur_text}, "args": {{{args}}}}}"#
                    ));
                    if first {
                        body.push(format!(
                            r#"{{"ph": "f", "id": {corr}, "pid": 0, "tid": {stream}, "ts": {start:.3}, "cat": "ac2g", "name": "ac2g", "bp": "e"}}"#
                        ));
                        first = false;
                    }
                }
                launch_t += 5;
            }
            let cpu_dur = u64::from(op.cpu_us).max(launch_t - op_start + 1);
            let cat = op.cat;
            body.insert(
                op_first_event,
                format!(
                    r#"{{"ph": "X", "cat": "{cat}", "name": "{}", "pid": {CPU_PID}, "tid": {CPU_TID}, "ts": {op_start}, "dur": {cpu_dur}, "args": {{"External id": {op_external}}}}}"#,
                    op.name
                ),
            );
            cpu_t = op_start + cpu_dur + 3;
        }
        cpu_t += 5;
        events.push(format!(
            r#"{{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{step}", "pid": {CPU_PID}, "tid": {CPU_TID}, "ts": {step_start}, "dur": {}, "args": {{"External id": {external}}}}}"#,
            cpu_t - step_start
        ));
        external += 1;
        events.extend(body);
        cpu_t += 10;
    }
    let mut out = String::new();
    out.push_str("{\n  \"schemaVersion\": 1,\n");
    let _ = writeln!(
        out,
        "  \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": {rank}, \"world_size\": {}}},",
        spec.world_size
    );
    out.push_str("  \"deviceProperties\": [{\"id\": 0, \"name\": \"Synthetic GPU\", \"totalGlobalMem\": 85899345920, \"computeMajor\": 8, \"computeMinor\": 0, \"numSms\": 108}],\n");
    out.push_str("  \"traceEvents\": [\n");
    for (idx, ev) in events.iter().enumerate() {
        out.push_str("    ");
        out.push_str(ev);
        out.push_str(if idx + 1 < events.len() { ",\n" } else { "\n" });
    }
    out.push_str("  ],\n  \"traceName\": \"synthetic\"\n}\n");
    out
}
