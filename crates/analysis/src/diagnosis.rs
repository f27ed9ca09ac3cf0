//! What bounds a step, as typed values: the framework the capture comes from
//! ([`Framework`]), the step's host and GPU sides ([`StepSides`]), the verdict
//! ([`Diagnosis`], including [`CannotTell`] with what capture would decide it), and the
//! knobs for each host sub-cause in that framework ([`Knob`]).
//!
//! The verdict is a judgement (`inferred`) from measured numbers; its rules, first match
//! wins:
//! 1. no GPU work: cannot tell;
//! 2. the capture is not steady state: a CUDA/HIP graph capture with at most one replay,
//!    or graph captures over half the window ([`CannotTell::GraphCapture`]); compilation,
//!    module loading or autotuning over half the window ([`CannotTell::Compilation`]);
//!    every step warm-up ([`CannotTell::WarmUpOnly`]); under [`MIN_GPU_WORK`] of GPU work in the window
//!    ([`CannotTell::TooLittleGpuWork`]); one steady step of host-ranged steps whose GPU
//!    work runs past its host range by [`BOUND_SHARE`] of it or more (or with earlier
//!    work in flight at the capture's start) ([`CannotTell::SingleOverlappedStep`]);
//! 3. copies no compute or collective overlaps take [`BOUND_SHARE`] of the critical
//!    device's window or more: copy-bound; exposed collectives likewise:
//!    collective-bound;
//! 4. the launch-overhead verdict ([`crate::Verdict`]) is GPU-bound: compute-bound, by the
//!    kernel class with most time on the critical stream;
//! 5. it is host/launch-bound: host-bound, with the host sub-cause of most time;
//! 6. it is inconclusive: cannot tell ([`CannotTell::NoEvidence`]);
//! 7. otherwise, where the critical stream idles [`BOUND_SHARE`] of the window or more,
//!    and [`BOUND_SHARE`] of that idle time or more waits on another stream or event:
//!    waiting on a dependency; on a synchronising call: host blocked in synchronisation;
//!    else mixed.

use std::collections::BTreeMap;

use trace_model::{
    Capture, Format, HostEvent, KernelClass, Nanos, Provenance, is_graph_launch_api,
};

use crate::host_cause::{HostCause, is_compilation};
use crate::practices::Practices;
use crate::steps::{Spread, host_ranged};
use crate::{Bound, CaptureAnalysis, GapCause, Window, interval};

/// The framework that ran the capture's work, as the capture shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Framework {
    /// PyTorch running ops one by one.
    PyTorchEager,
    /// PyTorch with torch.compile (Inductor/Triton kernels, compiled regions).
    PyTorchCompiled,
    /// PyTorch replaying CUDA/HIP graphs.
    PyTorchGraphReplay,
    /// JAX (XLA).
    Jax,
    /// TensorFlow.
    TensorFlow,
    /// A TensorRT engine.
    TensorRt,
    /// llama.cpp / ggml.
    LlamaCpp,
    /// vLLM.
    Vllm,
    /// SGLang.
    Sglang,
    /// Nothing in the capture says.
    Unknown,
}

impl Framework {
    /// A stable machine-readable name.
    pub fn code(self) -> &'static str {
        match self {
            Framework::PyTorchEager => "pytorch-eager",
            Framework::PyTorchCompiled => "pytorch-compiled",
            Framework::PyTorchGraphReplay => "pytorch-graph-replay",
            Framework::Jax => "jax",
            Framework::TensorFlow => "tensorflow",
            Framework::TensorRt => "tensorrt",
            Framework::LlamaCpp => "llama.cpp",
            Framework::Vllm => "vllm",
            Framework::Sglang => "sglang",
            Framework::Unknown => "unknown",
        }
    }
}

/// The framework found and the evidence that decided it (`measured`: names seen).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameworkGuess {
    /// The framework.
    pub framework: Framework,
    /// The names that decided it, in words.
    pub evidence: String,
}

/// Whether a kernel is llama.cpp/ggml's by name.
fn is_ggml_kernel(name: &str) -> bool {
    name.contains("mul_mat_q")
        || name.contains("mul_mat_vec_q")
        || name.contains("ggml")
        || name.contains("quantize_q8_1")
        || name.contains("flash_attn_ext")
        || name.contains("dequantize_block")
}

/// Whether a kernel or host name is TensorRT's.
fn is_tensorrt_name(name: &str) -> bool {
    name.contains("TensorRT")
        || name.contains("enqueueV")
        || name.contains("ExecutionContext::")
        || name.starts_with("trt_")
        || name.contains("myelin")
        || name.starts_with("__myl_")
}

/// Detects the framework from names in the capture, first match wins: SGLang (`step[…]`
/// markers, `sglang` frames), vLLM (`execute_model`, `vllm` frames), llama.cpp/ggml
/// kernels, TensorRT (`enqueueV*`, `ExecutionContext::`, `trt_*`/Myelin kernels),
/// TensorFlow (`__inference_*` functions, `tensorflow::` names, executor ops), JAX (an
/// XPlane or JAX trace without TensorFlow names, `PjitFunction`), PyTorch (`aten::` ops,
/// `ProfilerStep#`): graph-replayed where graph launches run GPU work, compiled where
/// Triton kernels or compiled regions do, else eager.
pub fn detect_framework(capture: &Capture, practices: &Practices) -> FrameworkGuess {
    let mut first: BTreeMap<Framework, String> = BTreeMap::new();
    let mut note = |f: Framework, name: &str| {
        first.entry(f).or_insert_with(|| name.to_owned());
    };
    // Each distinct name is classified once: the first event of a name decides as all
    // its others would.
    let mut seen = vec![false; capture.strings().len()];
    for e in capture.host_events() {
        if seen
            .get_mut(e.name.index())
            .is_some_and(|s| std::mem::replace(s, true))
        {
            continue;
        }
        let name = capture.name(e.name);
        if name.starts_with("step[") || name.contains("sglang") {
            note(Framework::Sglang, name);
        } else if name == "execute_model"
            || name.ends_with("): execute_model")
            || name.contains("vllm")
        {
            note(Framework::Vllm, name);
        } else if is_tensorrt_name(name) {
            note(Framework::TensorRt, name);
        } else if name.starts_with("__inference_")
            || name.contains("tensorflow")
            || name.starts_with("ExecutorState")
            || name.starts_with("IteratorGetNext")
        {
            note(Framework::TensorFlow, name);
        } else if name.starts_with("PjitFunction") || name.contains("jax/_src") {
            note(Framework::Jax, name);
        } else if name.starts_with("aten::") || name.starts_with("ProfilerStep#") {
            note(Framework::PyTorchEager, name);
        }
    }
    seen.fill(false);
    for a in capture.activities() {
        if seen
            .get_mut(a.name.index())
            .is_some_and(|s| std::mem::replace(s, true))
        {
            continue;
        }
        let name = capture.name(a.name);
        if is_ggml_kernel(name) {
            note(Framework::LlamaCpp, name);
        } else if is_tensorrt_name(name) {
            note(Framework::TensorRt, name);
        }
    }
    let pick = |f: Framework, why: &str, first: &BTreeMap<Framework, String>| {
        first.get(&f).map(|n| FrameworkGuess {
            framework: f,
            evidence: format!("{why} (`{n}`)"),
        })
    };
    let order = [
        (Framework::Sglang, "SGLang step markers or frames"),
        (Framework::Vllm, "vLLM model execution"),
        (Framework::LlamaCpp, "ggml kernels"),
        (Framework::TensorRt, "TensorRT engine calls or kernels"),
        (Framework::TensorFlow, "TensorFlow functions or executor"),
        (Framework::Jax, "JAX/XLA dispatch"),
    ];
    for (f, why) in order {
        if let Some(g) = pick(f, why, &first) {
            return g;
        }
    }
    let xla = matches!(capture.format(), Format::XPlane | Format::JaxTraceJson);
    if xla && !first.contains_key(&Framework::PyTorchEager) {
        return FrameworkGuess {
            framework: Framework::Jax,
            evidence: "an XLA capture (XSpace or JAX trace) without TensorFlow names".to_owned(),
        };
    }
    let torch =
        first.contains_key(&Framework::PyTorchEager) || capture.format() == Format::KinetoJson;
    if !torch {
        return FrameworkGuess {
            framework: Framework::Unknown,
            evidence: "no framework's names in the capture".to_owned(),
        };
    }
    let (framework, evidence) = if let Some(g) = &practices.graph_replay {
        (Framework::PyTorchGraphReplay, g.evidence.clone())
    } else if let Some(c) = &practices.compiled {
        (Framework::PyTorchCompiled, c.evidence.clone())
    } else {
        (
            Framework::PyTorchEager,
            first
                .get(&Framework::PyTorchEager)
                .map_or("a Kineto capture".to_owned(), |n| {
                    format!("PyTorch names (`{n}`)")
                }),
        )
    };
    FrameworkGuess {
        framework,
        evidence,
    }
}

/// A knob to try for a cause, in one framework, by a stable key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Knob {
    /// Keep PyTorch's caching allocator on (no `PYTORCH_NO_CUDA_MEMORY_CACHING`/
    /// `PYTORCH_NO_HIP_MEMORY_CACHING`) and no `torch.cuda.empty_cache()` in the loop.
    CachingAllocator,
    /// `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` (HIP: `PYTORCH_HIP_ALLOC_CONF`).
    ExpandableSegments,
    /// Let XLA preallocate its pool (`XLA_PYTHON_CLIENT_PREALLOCATE`, `…_MEM_FRACTION`).
    XlaPreallocate,
    /// TensorFlow: `TF_GPU_ALLOCATOR=cuda_malloc_async`, no `allow_growth` churn.
    TfAllocator,
    /// Allocate buffers once, outside the loop (engines, llama.cpp, TensorRT).
    AllocateOnce,
    /// DataLoader `num_workers` > 0 with `persistent_workers`.
    LoaderWorkers,
    /// `pin_memory=True` with `non_blocking=True` copies.
    PinnedMemory,
    /// Prefetch the next batch (`prefetch_factor`, a side-stream prefetcher).
    Prefetch,
    /// tf.data: `prefetch(AUTOTUNE)`, parallel `map`, `cache`.
    TfDataPipeline,
    /// JAX: prefetch batches to the device (`jax.device_put` ahead, a prefetch iterator).
    JaxPrefetch,
    /// Move preprocessing to the GPU (batched transforms on device).
    PreprocessOnGpu,
    /// Move preprocessing into loader workers.
    PreprocessInWorkers,
    /// CUDA graphs: torch.compile `mode="reduce-overhead"` or `torch.cuda.graphs`.
    CudaGraphs,
    /// Graphs are in use: capture the ops still launched one by one into them.
    CaptureRemainingOps,
    /// Fewer, larger kernels: torch.compile.
    TorchCompile,
    /// torch.compile is in use: remove graph breaks (`TORCH_LOGS=graph_breaks`).
    GraphBreaks,
    /// JAX: jit the whole step, `lax.scan` over layers.
    JaxJitWholeStep,
    /// XLA command buffers (CUDA graphs in XLA).
    XlaCommandBuffers,
    /// TensorFlow: `tf.function(jit_compile=True)` around the step.
    TfFunctionJit,
    /// Inference engines: CUDA graphs for more batch sizes (`--cuda-graph-max-bs`, no
    /// `--disable-cuda-graph` / `enforce_eager`).
    EngineGraphs,
    /// llama.cpp: CUDA graphs on (the default; `GGML_CUDA_DISABLE_GRAPHS` unset).
    GgmlGraphs,
    /// TensorRT: capture `enqueueV3` into a CUDA graph.
    TensorRtGraph,
    /// Warm up (compile, autotune) before capturing; a compile cache.
    WarmUpBeforeCapture,
    /// Capture again without `with_stack`/`record_shapes`: the profiler's own cost.
    LighterProfiling,
    /// Capture the host side too (all threads, py-spy/perf, `nsys --sample=cpu`).
    CaptureHostSide,
}

impl Knob {
    /// A stable machine-readable name.
    pub fn code(self) -> &'static str {
        match self {
            Knob::CachingAllocator => "caching-allocator",
            Knob::ExpandableSegments => "expandable-segments",
            Knob::XlaPreallocate => "xla-preallocate",
            Knob::TfAllocator => "tf-allocator",
            Knob::AllocateOnce => "allocate-once",
            Knob::LoaderWorkers => "loader-workers",
            Knob::PinnedMemory => "pinned-memory",
            Knob::Prefetch => "prefetch",
            Knob::TfDataPipeline => "tf-data-pipeline",
            Knob::JaxPrefetch => "jax-prefetch",
            Knob::PreprocessOnGpu => "preprocess-on-gpu",
            Knob::PreprocessInWorkers => "preprocess-in-workers",
            Knob::CudaGraphs => "cuda-graphs",
            Knob::CaptureRemainingOps => "capture-remaining-ops",
            Knob::TorchCompile => "torch-compile",
            Knob::GraphBreaks => "graph-breaks",
            Knob::JaxJitWholeStep => "jax-jit-whole-step",
            Knob::XlaCommandBuffers => "xla-command-buffers",
            Knob::TfFunctionJit => "tf-function-jit",
            Knob::EngineGraphs => "engine-graphs",
            Knob::GgmlGraphs => "ggml-graphs",
            Knob::TensorRtGraph => "tensorrt-graph",
            Knob::WarmUpBeforeCapture => "warm-up-before-capture",
            Knob::LighterProfiling => "lighter-profiling",
            Knob::CaptureHostSide => "capture-host-side",
        }
    }

    /// The knob in words.
    pub fn text(self) -> &'static str {
        match self {
            Knob::CachingAllocator => {
                "keep the caching allocator on (no PYTORCH_NO_CUDA_MEMORY_CACHING / PYTORCH_NO_HIP_MEMORY_CACHING) and no torch.cuda.empty_cache() in the loop"
            }
            Knob::ExpandableSegments => {
                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PYTORCH_HIP_ALLOC_CONF on ROCm) against fragmentation"
            }
            Knob::XlaPreallocate => {
                "let XLA preallocate its memory pool (XLA_PYTHON_CLIENT_PREALLOCATE, XLA_PYTHON_CLIENT_MEM_FRACTION)"
            }
            Knob::TfAllocator => "TF_GPU_ALLOCATOR=cuda_malloc_async, no allow_growth churn",
            Knob::AllocateOnce => "allocate buffers once, outside the loop",
            Knob::LoaderWorkers => "DataLoader num_workers > 0 with persistent_workers=True",
            Knob::PinnedMemory => "pin_memory=True and non_blocking=True copies",
            Knob::Prefetch => "prefetch the next batch (prefetch_factor, a side-stream prefetcher)",
            Knob::TfDataPipeline => {
                "tf.data: prefetch(tf.data.AUTOTUNE), map(num_parallel_calls=AUTOTUNE), cache()"
            }
            Knob::JaxPrefetch => {
                "prefetch batches to the device ahead of the step (device_put on the next batch)"
            }
            Knob::PreprocessOnGpu => {
                "move preprocessing to the GPU (batched transforms on the device)"
            }
            Knob::PreprocessInWorkers => "move preprocessing into the loader workers",
            Knob::CudaGraphs => {
                "CUDA graphs (torch.compile mode=\"reduce-overhead\", or torch.cuda.graphs around the step)"
            }
            Knob::CaptureRemainingOps => {
                "graphs are in use: capture the ops still launched one by one into them, or larger graphs"
            }
            Knob::TorchCompile => "fewer, larger kernels (torch.compile)",
            Knob::GraphBreaks => {
                "torch.compile is in use: remove graph breaks (TORCH_LOGS=graph_breaks) that leave eager ops between compiled regions"
            }
            Knob::JaxJitWholeStep => {
                "jit the whole step, lax.scan over layers: fewer, larger dispatches"
            }
            Knob::XlaCommandBuffers => {
                "XLA command buffers (CUDA graphs in XLA: --xla_gpu_enable_command_buffer)"
            }
            Knob::TfFunctionJit => "tf.function(jit_compile=True) around the step",
            Knob::EngineGraphs => {
                "CUDA graphs for the batch sizes served (--cuda-graph-max-bs / cudagraph_capture_sizes; no --disable-cuda-graph or enforce_eager)"
            }
            Knob::GgmlGraphs => {
                "keep llama.cpp's CUDA graphs on (GGML_CUDA_DISABLE_GRAPHS unset), larger ubatch"
            }
            Knob::TensorRtGraph => "capture enqueueV3 into a CUDA graph and replay it",
            Knob::WarmUpBeforeCapture => {
                "warm up (compilation, autotuning) before capturing, and keep a compile cache"
            }
            Knob::LighterProfiling => {
                "capture again without with_stack/record_shapes: the profiler's own time"
            }
            Knob::CaptureHostSide => {
                "capture the host side too (all threads and processes: py-spy/perf, nsys --sample=cpu) to see what the thread was doing"
            }
        }
    }
}

/// The knobs for one host sub-cause in one framework, never one already in use (graph
/// replay in use: [`Knob::CaptureRemainingOps`], not [`Knob::CudaGraphs`]; torch.compile
/// in use: [`Knob::GraphBreaks`], not [`Knob::TorchCompile`]). CUDA graphs appear only
/// for [`HostCause::LaunchOverhead`].
pub fn host_knobs(cause: HostCause, framework: Framework, practices: &Practices) -> Vec<Knob> {
    use Framework as F;
    let torch = matches!(
        framework,
        F::PyTorchEager | F::PyTorchCompiled | F::PyTorchGraphReplay | F::Unknown
    );
    let engine = matches!(framework, F::Vllm | F::Sglang);
    match cause {
        HostCause::Allocator => match framework {
            F::Jax => vec![Knob::XlaPreallocate],
            F::TensorFlow => vec![Knob::TfAllocator],
            F::TensorRt | F::LlamaCpp => vec![Knob::AllocateOnce],
            _ => vec![Knob::CachingAllocator, Knob::ExpandableSegments],
        },
        HostCause::DataLoading => match framework {
            F::TensorFlow => vec![Knob::TfDataPipeline],
            F::Jax => vec![Knob::JaxPrefetch, Knob::PinnedMemory],
            _ => vec![Knob::LoaderWorkers, Knob::PinnedMemory, Knob::Prefetch],
        },
        // Python between a JAX or TensorFlow program's dispatches (the dispatching thread
        // a stream thread waits for, host_cause rule 9) goes when more of the step is one
        // compiled program.
        HostCause::CpuWork => match framework {
            F::Jax => vec![Knob::JaxJitWholeStep, Knob::PreprocessOnGpu],
            F::TensorFlow => vec![Knob::TfFunctionJit, Knob::PreprocessOnGpu],
            _ => vec![Knob::PreprocessOnGpu, Knob::PreprocessInWorkers],
        },
        HostCause::LaunchOverhead => match framework {
            F::Jax => vec![Knob::JaxJitWholeStep, Knob::XlaCommandBuffers],
            F::TensorFlow => vec![Knob::TfFunctionJit],
            F::TensorRt => vec![Knob::TensorRtGraph],
            F::LlamaCpp => vec![Knob::GgmlGraphs],
            _ if engine => vec![Knob::EngineGraphs],
            _ => {
                let mut k = Vec::new();
                k.push(if practices.graph_replay.is_some() {
                    Knob::CaptureRemainingOps
                } else {
                    Knob::CudaGraphs
                });
                if torch {
                    k.push(if practices.compiled.is_some() {
                        Knob::GraphBreaks
                    } else {
                        Knob::TorchCompile
                    });
                }
                k
            }
        },
        HostCause::Compilation => vec![Knob::WarmUpBeforeCapture],
        HostCause::ProfilerOverhead => vec![Knob::LighterProfiling],
        HostCause::NothingRecorded => vec![Knob::CaptureHostSide],
    }
}

/// Why the capture cannot decide what bounds the step; serde tags it with its
/// [`CannotTell::code`] (`{"code": "too-little-gpu-work", "gpu_time": 900}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "code", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum CannotTell {
    /// No GPU activity in the window.
    NoGpuWork,
    /// Every step is warm-up.
    WarmUpOnly,
    /// A CUDA/HIP graph capture with at most one replay, or graph captures over half the
    /// window: set-up, not steady state.
    GraphCapture,
    /// Compilation, module loading or autotuning over half the window.
    Compilation,
    /// Under [`MIN_GPU_WORK`] of GPU work in the window.
    TooLittleGpuWork {
        /// GPU activity time in the window (Σ durations).
        gpu_time: Nanos,
    },
    /// One step of host-ranged steps: the host prepares one step while the GPU runs
    /// another, and one step cannot say which side bounds the period.
    SingleOverlappedStep,
    /// The GPU idles half the window and the capture holds no evidence why.
    NoEvidence,
}

impl CannotTell {
    /// A stable machine-readable name.
    pub fn code(self) -> &'static str {
        match self {
            CannotTell::NoGpuWork => "no-gpu-work",
            CannotTell::WarmUpOnly => "warm-up-only",
            CannotTell::GraphCapture => "graph-capture",
            CannotTell::Compilation => "compilation",
            CannotTell::TooLittleGpuWork { .. } => "too-little-gpu-work",
            CannotTell::SingleOverlappedStep => "single-overlapped-step",
            CannotTell::NoEvidence => "no-evidence",
        }
    }

    /// The reason in words.
    pub fn describe(self) -> String {
        match self {
            CannotTell::NoGpuWork => "no GPU work in the window".to_owned(),
            CannotTell::WarmUpOnly => "every step is warm-up".to_owned(),
            CannotTell::GraphCapture => {
                "the capture records a CUDA/HIP graph capture (one replay at most, or captures over half the window): set-up, not steady state".to_owned()
            }
            CannotTell::Compilation => {
                "compilation, module loading or autotuning covers half the window or more".to_owned()
            }
            CannotTell::TooLittleGpuWork { gpu_time } => format!(
                "only {} of GPU work in the window (under {})",
                gpu_time.human(),
                MIN_GPU_WORK.human()
            ),
            CannotTell::SingleOverlappedStep => {
                "one step, whose GPU work outlives its host range: the host and GPU sides overlap and one step has no period".to_owned()
            }
            CannotTell::NoEvidence => {
                "the GPU idles half the window and the capture holds no evidence why".to_owned()
            }
        }
    }

    /// The capture that would decide it.
    pub fn decide_with(self) -> &'static str {
        match self {
            CannotTell::NoGpuWork => "a capture with GPU activity tracing on (kernels, copies)",
            CannotTell::WarmUpOnly | CannotTell::Compilation => {
                "a capture that starts after warm-up (compilation, autotuning, first launches done): a profiler schedule with wait and warm-up steps, several active steps"
            }
            CannotTell::GraphCapture => {
                "a capture of several graph replays after the capture and warm-up (start the profiler after the first iterations)"
            }
            CannotTell::TooLittleGpuWork { .. } => {
                "a capture of the real workload: several steps and at least 1 ms of GPU work"
            }
            CannotTell::SingleOverlappedStep => {
                "a capture of several consecutive steps, so the period (start to start) and each step's GPU span can be measured"
            }
            CannotTell::NoEvidence => {
                "a capture with launch correlation (runtime API tracing) and the host threads, so each gap's next launch can be placed"
            }
        }
    }
}

/// What bounds the step (the verdict of the module docs). serde tags it by `bound`, the
/// head of its [`Diagnosis::code`] (`{"bound": "host-bound", "cause": "allocator"}`,
/// `{"bound": "compute-bound", "class": "gemm"}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "bound", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Diagnosis {
    /// The GPU computes most of the window; the class with most time on the critical
    /// stream.
    ComputeBound {
        /// That class.
        class: KernelClass,
    },
    /// Copies no compute overlaps hold most of the window.
    CopyBound,
    /// Exposed collectives hold most of the window.
    CollectiveBound,
    /// The GPU waits for the host; the sub-cause of most host-wait time.
    HostBound {
        /// That sub-cause.
        cause: HostCause,
    },
    /// The GPU idles with the host blocked in synchronising calls.
    HostSync,
    /// Work was issued but waited on another stream or event.
    DependencyWait,
    /// None of the above dominates.
    Mixed,
    /// The capture cannot decide; no estimate.
    CannotTell {
        /// Why.
        reason: CannotTell,
    },
}

/// What every [`Diagnosis`] rests on (its label is `inferred`): the module docs' rules,
/// first match wins, over measured numbers.
pub const DIAGNOSIS_RULES: &str = "the first rule that matches, over measured numbers: no GPU \
     work, or a capture not in steady state, cannot tell; copies, then exposed collectives, \
     holding half the critical device's window or more; the launch-overhead verdict \
     (compute-bound by the leading kernel class, host-bound by the host sub-cause of most \
     time, or cannot tell); else the critical stream's idle time by what it waits on";

impl Diagnosis {
    /// The verdict's label: a judgement by [`DIAGNOSIS_RULES`] (`inferred`), for every
    /// verdict, "cannot tell" included.
    pub fn provenance(&self) -> Provenance {
        Provenance::inferred(DIAGNOSIS_RULES)
    }

    /// The verdict in words (for "cannot tell", with the capture that would decide it).
    pub fn describe(self) -> String {
        match self {
            Diagnosis::ComputeBound { class } => {
                format!(
                    "compute-bound ({} kernels lead the critical stream)",
                    class.label()
                )
            }
            Diagnosis::CopyBound => {
                "copy-bound: copies no compute overlaps hold half the window or more".to_owned()
            }
            Diagnosis::CollectiveBound => {
                "collective-bound: collectives no compute overlaps hold half the window or more"
                    .to_owned()
            }
            Diagnosis::HostBound { cause } => {
                format!(
                    "host-bound: the GPU waits for the host, mostly {}",
                    cause.label()
                )
            }
            Diagnosis::HostSync => {
                "the host is blocked in synchronising calls while the GPU idles".to_owned()
            }
            Diagnosis::DependencyWait => {
                "waiting on a dependency: issued work waits on another stream or event".to_owned()
            }
            Diagnosis::Mixed => "mixed: no single cause holds half the window".to_owned(),
            Diagnosis::CannotTell { reason } => format!(
                "cannot tell: {}; a capture that would decide it: {}",
                reason.describe(),
                reason.decide_with()
            ),
        }
    }

    /// A stable machine-readable name (`host-bound:allocator`, `cannot-tell:graph-capture`,
    /// `compute-bound:GEMM`).
    pub fn code(self) -> String {
        match self {
            Diagnosis::ComputeBound { class } => format!("compute-bound:{}", class.label()),
            Diagnosis::CopyBound => "copy-bound".to_owned(),
            Diagnosis::CollectiveBound => "collective-bound".to_owned(),
            Diagnosis::HostBound { cause } => format!("host-bound:{}", cause.code()),
            Diagnosis::HostSync => "host-sync".to_owned(),
            Diagnosis::DependencyWait => "dependency-wait".to_owned(),
            Diagnosis::Mixed => "mixed".to_owned(),
            Diagnosis::CannotTell { reason } => format!("cannot-tell:{}", reason.code()),
        }
    }
}

/// Under this much GPU work (Σ activity durations in the window) the capture cannot say
/// what bounds a step: the fixed costs every capture holds (a first launch's module load
/// or JIT, tens of µs to ms; an idle GPU's clock ramp-up, hundreds of µs) are then of the
/// same order as all of its work.
pub const MIN_GPU_WORK: Nanos = Nanos(1_000_000);

/// The share of a window (or of its idle time) a single cause must hold to be *the*
/// bound: half, so no other cause can hold as much.
pub const BOUND_SHARE: f64 = 0.5;

/// The host side and the GPU side of the steady-state steps (all `measured`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepSides {
    /// Start to start of consecutive steady steps; `None` with one step.
    pub period: Option<Spread>,
    /// The steps' own ranges (host ranges for annotations and markers).
    pub host: Spread,
    /// First start to last end of the GPU work each step launched.
    pub gpu: Option<Spread>,
    /// End of the GPU work minus end of the step's range (positive: the GPU runs behind
    /// the host).
    pub lag: Option<Spread>,
    /// Which side a step is timed by.
    pub basis: StepBasis,
}

/// Which side times a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StepBasis {
    /// The step's range (the host's, for host-ranged steps): the GPU keeps up with it.
    HostRange,
    /// The GPU span of the work the step launched: the host runs ahead (the median GPU
    /// span is longer than the median host range and ends after it).
    GpuSpan,
}

/// Whether the host runs ahead of the GPU: the median GPU span of a step's work is
/// longer than the median host range and ends after it.
pub(crate) fn runs_ahead(host: Spread, gpu: Option<Spread>, lag: Option<Spread>) -> bool {
    matches!((gpu, lag), (Some(g), Some(l)) if g.median > host.median && l.median.0 > 0)
}

/// The host and GPU sides of `r`'s steady steps; `None` without steady steps.
pub fn step_sides(r: &CaptureAnalysis) -> Option<StepSides> {
    // Where the analysed GPU keeps its own steps, they are the step (the capture's are
    // their union over GPUs).
    let steady: Vec<&crate::StepMetrics> = match &r.device_steps {
        Some(d) => r.steady_device_steps(d).collect(),
        None => (0..r.per_step.len())
            .filter(|&i| r.warm_up.all || r.warm_up.steps.binary_search(&i).is_err())
            .map(|i| &r.per_step[i])
            .collect(),
    };
    let host = Spread::of(steady.iter().map(|s| s.range.span()))?;
    let period = Spread::of(
        steady
            .windows(2)
            .map(|w| w[1].range.start - w[0].range.start),
    );
    let gpu = Spread::of(steady.iter().filter_map(|s| s.gpu_range.map(|g| g.span())));
    let lag = Spread::of(
        steady
            .iter()
            .filter_map(|s| s.gpu_range.map(|g| g.end - s.range.end)),
    );
    let ahead = runs_ahead(host, gpu, lag);
    Some(StepSides {
        period,
        host,
        gpu,
        lag,
        basis: if ahead {
            StepBasis::GpuSpan
        } else {
            StepBasis::HostRange
        },
    })
}

/// Union of the host events whose name matches `keep` inside `w`. `keep` runs once per
/// distinct name (a capture repeats a few thousand names over its host events).
fn host_time_in(capture: &Capture, w: Window, keep: impl Fn(&str) -> bool) -> Nanos {
    let mut kept: Vec<Option<bool>> = vec![None; capture.strings().len()];
    let mut keeps = |e: &HostEvent| match kept.get_mut(e.name.index()) {
        Some(slot) => *slot.get_or_insert_with(|| keep(capture.name(e.name))),
        None => keep(capture.name(e.name)),
    };
    Nanos(interval::union_len(
        capture
            .host_events()
            .iter()
            .filter(|e| e.start < w.end && e.end() > w.start && keeps(e))
            .map(|e| (e.start.max(w.start).0, e.end().min(w.end).0))
            .collect(),
    ))
}

/// The verdict of the module docs for one report, with [`MIN_GPU_WORK`].
pub fn diagnose(capture: &Capture, r: &CaptureAnalysis) -> Diagnosis {
    diagnose_with(capture, r, MIN_GPU_WORK)
}

/// [`diagnose`] with another minimum of GPU work.
pub fn diagnose_with(capture: &Capture, r: &CaptureAnalysis, min_gpu_work: Nanos) -> Diagnosis {
    let cannot = |reason| Diagnosis::CannotTell { reason };
    let v = &r.verdict;
    let Some(window) = r.window else {
        return cannot(CannotTell::NoGpuWork);
    };
    if v.bound == Bound::NoGpuWork {
        return cannot(CannotTell::NoGpuWork);
    }
    let span = window.span().0.max(1) as f64;
    // Graph capture: set-up, not steady state.
    let captures = crate::warmup::graph_captures(capture);
    if !captures.is_empty() {
        let replays = capture
            .host_events()
            .iter()
            .filter(|e| is_graph_launch_api(capture.name(e.name)))
            .count();
        let inside = interval::union_len(
            captures
                .iter()
                .filter(|c| c.start < window.end && c.end() > window.start)
                .map(|c| (c.start.max(window.start).0, c.end().min(window.end).0))
                .collect(),
        );
        if replays <= 1 || inside as f64 >= BOUND_SHARE * span {
            return cannot(CannotTell::GraphCapture);
        }
    }
    let compiling = host_time_in(capture, window, is_compilation);
    if compiling.0 as f64 >= BOUND_SHARE * span {
        return cannot(CannotTell::Compilation);
    }
    if v.bound == Bound::WarmUp {
        return cannot(CannotTell::WarmUpOnly);
    }
    let steady = |i: usize| r.warm_up.all || r.warm_up.steps.binary_search(&(i)).is_err();
    let gpu_time: Nanos = capture
        .activities()
        .iter()
        .zip(&r.steps.activity_step)
        .filter(|(_, s)| s.is_some_and(|s| steady(s as usize)))
        .map(|(a, _)| a.dur)
        .sum();
    if gpu_time < min_gpu_work {
        return cannot(CannotTell::TooLittleGpuWork { gpu_time });
    }
    // One host-ranged step whose GPU work runs past its host range by half of it or
    // more, or with work of an earlier step still in flight: which side times the step
    // is then a matter of what is measured, and one step has no period to decide it.
    if r.steady_step_count() == 1 && host_ranged(&r.steps.origin) {
        let overlapped = r.in_flight.activities > 0
            || r.per_step.iter().enumerate().any(|(i, s)| {
                steady(i)
                    && s.gpu_range.is_some_and(|g| {
                        (g.end - s.range.end).0 as f64 >= BOUND_SHARE * s.range.span().0 as f64
                    })
            });
        if overlapped {
            return cannot(CannotTell::SingleOverlappedStep);
        }
    }
    // Exposed copies or collectives on the critical stream's device.
    if let Some(crit) = r.critical_stream()
        && let Some(d) = r.devices.iter().find(|d| d.device == crit.device)
    {
        let b = &d.budget;
        if b.share(b.memcpy) >= BOUND_SHARE {
            return Diagnosis::CopyBound;
        }
        if b.share(b.collective) >= BOUND_SHARE {
            return Diagnosis::CollectiveBound;
        }
    }
    match v.bound {
        Bound::GpuBound => {
            let class = r
                .critical_stream()
                .map(|c| {
                    let mut per: BTreeMap<KernelClass, i64> = BTreeMap::new();
                    for a in capture.stream_activities(c.stream_id) {
                        if a.start < window.end && a.end() > window.start {
                            *per.entry(a.class).or_insert(0) += a.dur.0;
                        }
                    }
                    per.into_iter()
                        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
                        .map_or(KernelClass::Other, |(c, _)| c)
                })
                .unwrap_or(KernelClass::Other);
            Diagnosis::ComputeBound { class }
        }
        Bound::HostLaunchBound => Diagnosis::HostBound {
            cause: r
                .gap_causes
                .as_ref()
                .and_then(|g| g.host.largest())
                .map_or(HostCause::NothingRecorded, |(c, _)| c),
        },
        Bound::Inconclusive => cannot(CannotTell::NoEvidence),
        _ => {
            let gc = r.gap_causes.as_ref();
            let share = |c: GapCause| gc.map_or(0.0, |g| g.share(c));
            if v.idle_share >= BOUND_SHARE && share(GapCause::StreamOrEvent) >= BOUND_SHARE {
                Diagnosis::DependencyWait
            } else if v.idle_share >= BOUND_SHARE && share(GapCause::SyncCall) >= BOUND_SHARE {
                Diagnosis::HostSync
            } else {
                Diagnosis::Mixed
            }
        }
    }
}
