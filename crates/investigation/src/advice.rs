//! Step 6: the causes `analysis::causes` finds on the critical stream, ranked by their
//! share of its window, each with its time per step, the step time if it went away
//! (inferred twice: by subtraction, and by replaying its what-if scenario on the
//! capture's dependency graph, with the replay's error), and the knobs the advice rules choose for it given what the capture
//! already does (torch.compile, graph replay, checkpointing, the Python tracer).

use analysis::CaptureAnalysis;
use trace_model::{Capture, Nanos};

use crate::model::*;

/// How a cause's time per step is computed (the label of every such figure).
pub const PER_STEP_FORMULA: &str = "time per step = the cause's time inside the analysed window (the steady-state steps' wall time), on the critical stream (or on the device, for exposed communication and copies), divided by the number of steady-state steps in the window; the step it is taken from is the window's mean step (its span / those steps); share of window = the cause's time / the window's span";

/// What the step-time estimate assumes.
pub const WINDOW_ASSUMPTION: &str = "by subtraction: the other work of the step stays as it is and fills the time the cause took; overlaps on other streams are ignored";

/// What every replayed estimate rests on (`replay::ASSUMPTIONS`).
pub const REPLAY_ASSUMPTIONS: &str = replay::ASSUMPTIONS;

/// Step 6 of the capture `r` was computed from: causes on the critical stream, ranked by
/// their share of its window.
pub fn advise(r: &CaptureAnalysis, capture: &Capture) -> Advice {
    let (Some(window), Some(_)) = (r.window, r.steady_step_spread()) else {
        return Advice::NoWindow;
    };
    if r.verdict.bound == analysis::Bound::WarmUp {
        return Advice::WarmUp;
    }
    if let analysis::Diagnosis::CannotTell { reason } = r.diagnosis {
        return Advice::CannotTell { reason };
    }
    let span = window.span();
    let steps = r.steady_step_count().max(1) as i64;
    let per_step = |x: Nanos| Nanos(x.0 / steps);
    // The step the estimates subtract from: the window's own mean step, so a cause's time
    // per step and the step come from the same window (a median of step annotations can
    // leave out time between steps that the window holds).
    let mean_step = per_step(span);
    // The wording of the knobs follows the framework the capture shows
    // (`analysis::detect_framework`), not its file format: a TensorFlow XSpace gets
    // TensorFlow's knobs, not JAX's.
    let framework = r.framework.framework;
    let practices = analysis::practices(capture);
    // What the capture already does, named, so no advice suggests it.
    let in_use = in_use_of(&practices);
    let host_knobs = host_wait_knobs(framework, &practices);
    let evidence = |c: analysis::GapCause| {
        r.gap_causes.as_ref().map_or_else(Vec::new, |gc| {
            gc.evidence_of(c)
                .take(2)
                .map(|e| e.what.clone())
                .collect::<Vec<_>>()
        })
    };
    let mut causes: Vec<(analysis::CauseKey, What, Nanos, Vec<Knob>)> = Vec::new();
    let all = analysis::causes(r, capture, window);
    let bounding = analysis::bounding_cause(r, &all);
    for cause in all {
        use analysis::{CauseKey, GapCause};
        let gpu = cause.device.unwrap_or_default();
        let (what, knobs) = match cause.key {
            CauseKey::Gap(GapCause::HostNotLaunched) => (
                What::HostNotLaunched {
                    evidence: evidence(GapCause::HostNotLaunched),
                },
                host_knobs.clone(),
            ),
            CauseKey::Host(h) => (
                What::HostCause {
                    code: h.code().to_owned(),
                    label: h.label().to_owned(),
                    evidence: r.gap_causes.as_ref().map_or_else(Vec::new, |gc| {
                        gc.host
                            .top_of(h)
                            .take(3)
                            .map(|t| (t.name.clone(), t.time))
                            .collect()
                    }),
                },
                analysis::host_knobs(h, r.framework.framework, &practices)
                    .iter()
                    .map(|k| Knob::Host {
                        code: k.code().to_owned(),
                        text: k.text().to_owned(),
                    })
                    .collect(),
            ),
            CauseKey::Gap(GapCause::StreamOrEvent) => (
                What::StreamOrEvent {
                    evidence: evidence(GapCause::StreamOrEvent),
                },
                vec![Knob::AwaitedStream],
            ),
            CauseKey::Gap(GapCause::SyncCall) => (
                What::SyncCall {
                    evidence: evidence(GapCause::SyncCall),
                },
                vec![framework_knob(Kind::Sync, framework, &practices)],
            ),
            CauseKey::ExposedCollective { .. } => (
                What::ExposedCollective { gpu },
                vec![Knob::OverlapCollectives],
            ),
            CauseKey::ExposedMemcpy { .. } => {
                (What::ExposedMemcpy { gpu }, vec![Knob::OverlapCopies])
            }
            CauseKey::Layout => (
                What::Layout,
                vec![framework_knob(Kind::Layout, framework, &practices)],
            ),
            CauseKey::Elementwise => (
                What::Elementwise,
                vec![framework_knob(Kind::Elementwise, framework, &practices)],
            ),
            CauseKey::EagerAttention => {
                let Some(e) = &practices.eager_attention else {
                    continue;
                };
                (
                    What::EagerAttention {
                        evidence: e.evidence.clone(),
                        share: practices.share(e),
                    },
                    vec![Knob::FusedAttention],
                )
            }
            CauseKey::MoeGemm => {
                let moe = analysis::moe_gemm_activities(capture);
                (
                    What::MoeGemm {
                        evidence: top_kernels(r, capture, window, |i, _| moe[i]),
                    },
                    vec![Knob::MoeGemm],
                )
            }
            CauseKey::Compute(class) => {
                let moe = analysis::moe_gemm_activities(capture);
                (
                    What::Compute {
                        class: class.label().to_owned(),
                        evidence: top_kernels(r, capture, window, |i, a| {
                            a.class == class && !moe[i]
                        }),
                    },
                    compute_knobs(class, framework),
                )
            }
            _ => continue,
        };
        causes.push((cause.key, what, cause.time, knobs));
    }
    causes.retain(|c| c.2.0 > 0);
    // The verdict's own cause first (`analysis::bounding_cause`: the ranked causes never
    // contradict the verdict), then most time first; ties by key, so the order does not
    // depend on wording.
    let leads = |k: &analysis::CauseKey| Some(*k) == bounding;
    causes.sort_by(|a, b| {
        leads(&b.0)
            .cmp(&leads(&a.0))
            .then_with(|| b.2.cmp(&a.2))
            .then_with(|| a.0.cmp(&b.0))
    });
    let share = |t: Nanos| t.0 as f64 / span.0.max(1) as f64;
    let keys: Vec<String> = causes.iter().map(|c| c.0.code()).collect();
    let replays = crate::replayed::replay_causes(r, capture, &keys);
    Advice::Ranked(Ranked {
        steps,
        span,
        mean_step,
        in_use,
        causes: causes
            .into_iter()
            .zip(keys)
            .zip(replays)
            .map(|(((_, what, time, knobs), key), replay)| {
                let each = per_step(time);
                RankedCause {
                    key,
                    what,
                    time,
                    share: share(time),
                    per_step: each,
                    step_after: Nanos((mean_step.0 - each.0).max(0)),
                    knobs,
                    replay,
                }
            })
            .collect(),
    })
}

/// What the capture already does (torch.compile, graph replay, checkpointing, the Python
/// tracer), with its evidence, so no advice suggests it.
fn in_use_of(practices: &analysis::Practices) -> Vec<InUse> {
    let mut in_use = Vec::new();
    if let Some(c) = &practices.compiled {
        in_use.push(InUse {
            practice: PracticeKind::Compiled,
            evidence: c.evidence.clone(),
            share: Some(practices.share(c)),
        });
    }
    if let Some(g) = &practices.graph_replay {
        in_use.push(InUse {
            practice: PracticeKind::GraphReplay,
            evidence: g.evidence.clone(),
            share: Some(practices.share(g)),
        });
    }
    if let Some(c) = &practices.checkpointing {
        in_use.push(InUse {
            practice: PracticeKind::Checkpointing,
            evidence: c.evidence.clone(),
            share: None,
        });
    }
    if let Some(p) = &practices.python_tracer {
        in_use.push(InUse {
            practice: PracticeKind::PythonTracer,
            evidence: p.evidence.clone(),
            share: None,
        });
    }
    in_use
}

/// The top three kernels by time on the critical stream inside `window` among those
/// `keep` takes (by their index in `Capture::activities` and the activity).
fn top_kernels(
    r: &CaptureAnalysis,
    capture: &Capture,
    window: analysis::Window,
    keep: impl Fn(usize, &trace_model::GpuActivity) -> bool,
) -> Vec<(String, Nanos)> {
    let Some(crit) = r.critical_stream() else {
        return Vec::new();
    };
    let mut by_name: std::collections::BTreeMap<&str, Nanos> = std::collections::BTreeMap::new();
    for (_, a) in capture.activities().iter().enumerate().filter(|(i, a)| {
        a.stream == crit.stream_id && a.start < window.end && a.end() > window.start && keep(*i, a)
    }) {
        let clipped = a.end().min(window.end) - a.start.max(window.start);
        *by_name.entry(capture.name(a.name)).or_default() += clipped;
    }
    let mut top: Vec<(String, Nanos)> = by_name
        .into_iter()
        .map(|(n, t)| (n.to_owned(), t))
        .collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    top.truncate(3);
    top
}

/// The knobs of a compute class that bounds the step, in the framework in use: what
/// makes that class's kernels do less or run faster there (ggml's quantised matmuls and
/// batch size for llama.cpp, an engine's precision for TensorRT, mixed precision in
/// TensorFlow and JAX, autocast/TF32 and cuDNN autotuning in PyTorch).
fn compute_knobs(class: trace_model::KernelClass, framework: analysis::Framework) -> Vec<Knob> {
    use analysis::Framework as F;
    use trace_model::KernelClass as C;
    let knob = |code: &str, text: &str| Knob::Compute {
        code: code.to_owned(),
        text: text.to_owned(),
    };
    let work = knob(
        "less-kernel-work",
        "the GPU is busy with these kernels: a faster step needs less work (smaller shapes, fewer passes, lower precision) or faster kernels; compare their achieved rate with the roofline section first",
    );
    let gemm_or_conv = matches!(class, C::Gemm | C::Convolution);
    let first = match (class, framework) {
        (C::Gemm, F::LlamaCpp) => knob(
            "ggml-matmul",
            "ggml's quantised matmuls bound the step: the quantisation type sets their speed (types with an MMQ path such as Q4_0, Q4_K, Q8_0), prompt processing fills their tiles better with a larger ubatch (-ub), token generation (mul_mat_vec_q) reads every weight once per token, so a smaller type reads less; compare the MMQ and BLAS paths on this GPU (GGML_CUDA_FORCE_MMQ / GGML_CUDA_FORCE_CUBLAS, hipBLAS on ROCm)",
        ),
        (C::Attention, F::LlamaCpp) => knob(
            "ggml-attention",
            "llama.cpp's attention bounds the step: flash attention on (-fa 1), a quantised KV cache (-ctk/-ctv q8_0) reads less; a shorter context costs less per token",
        ),
        (_, F::LlamaCpp) => work,
        (_, F::TensorRt) if gemm_or_conv || class == C::Attention => knob(
            "tensorrt-precision",
            "build the engine in lower precision (FP16/BF16, INT8 or FP8 with calibration: trtexec --fp16 --int8 / --best) and check the tactics it chose (--profilingVerbosity=detailed); larger batches fill the tensor cores",
        ),
        (_, F::Vllm | F::Sglang) if gemm_or_conv => knob(
            "engine-quantisation",
            "quantised weights (FP8, AWQ/GPTQ INT4) read less per token, larger batches (more concurrent requests per step) fill the GEMMs, tensor parallelism splits them across GPUs",
        ),
        (_, F::TensorFlow) if gemm_or_conv => knob(
            "tf-mixed-precision",
            "Keras mixed precision (mixed_float16 / mixed_bfloat16) so matmuls and convolutions run on tensor cores, dimensions multiples of 8",
        ),
        (_, F::Jax) if gemm_or_conv => knob(
            "jax-matmul-precision",
            "bf16 inputs to the dots and convolutions (dtype, precision=DEFAULT), dimensions multiples of 128, larger batches per dot",
        ),
        (C::Gemm, _) => knob(
            "gemm-precision",
            "lower-precision GEMMs on tensor/matrix cores (torch.autocast bf16/fp16, TF32 with torch.backends.cuda.matmul.allow_tf32), dimensions multiples of 8, larger batches for small GEMMs",
        ),
        (C::Convolution, _) => knob(
            "conv-tuning",
            "let cuDNN/MIOpen pick the fastest algorithms (torch.backends.cudnn.benchmark = True), channels-last and autocast bf16/fp16 for tensor-core convolutions",
        ),
        (C::Attention, F::PyTorchEager | F::PyTorchCompiled | F::PyTorchGraphReplay) => knob(
            "attention-backend",
            "the fastest fused attention for this GPU (scaled_dot_product_attention's FlashAttention or cuDNN backend, FlashAttention-3 on Hopper), lower precision where accuracy allows",
        ),
        _ => work,
    };
    vec![first]
}

/// The causes whose knob depends on the framework alone.
#[derive(Clone, Copy)]
enum Kind {
    Sync,
    Layout,
    Elementwise,
}

/// The knob of `kind` in `framework` (JAX, TensorFlow, TensorRT, llama.cpp; PyTorch and
/// engines built on it otherwise).
fn framework_knob(
    kind: Kind,
    framework: analysis::Framework,
    practices: &analysis::Practices,
) -> Knob {
    use analysis::Framework as F;
    match (kind, framework) {
        (Kind::Sync, F::Jax) => Knob::JaxNoRoundTrips,
        (Kind::Sync, F::TensorFlow) => Knob::TfNoRoundTrips,
        (Kind::Sync, F::TensorRt | F::LlamaCpp) => Knob::FewerHostWaits,
        (Kind::Sync, _) => Knob::NoSyncs,
        (Kind::Layout, F::Jax) => Knob::JaxLayouts,
        (Kind::Layout, F::TensorFlow) => Knob::TfLayouts,
        (Kind::Layout, F::TensorRt) => Knob::TrtLayouts,
        (Kind::Layout, _) => Knob::ChannelsLast,
        (Kind::Elementwise, F::Jax) => Knob::JaxFusion,
        (Kind::Elementwise, F::TensorFlow) => Knob::TfFusion,
        (Kind::Elementwise, F::TensorRt) => Knob::TrtFusion,
        (Kind::Elementwise, F::LlamaCpp) => Knob::EngineFusion,
        (Kind::Elementwise, _) if practices.compiled.is_some() => Knob::CompiledFusion,
        (Kind::Elementwise, _) => Knob::Fusion,
    }
}

/// The knobs of "the GPU waits for the host" as a whole, in the framework in use: JAX's
/// and TensorFlow's dispatch knobs, an engine's launch-overhead knobs (TensorRT,
/// llama.cpp), else PyTorch's graphs and fusion (never what is already in use).
fn host_wait_knobs(framework: analysis::Framework, practices: &analysis::Practices) -> Vec<Knob> {
    use analysis::Framework as F;
    match framework {
        F::Jax => return vec![Knob::JaxDispatch],
        F::TensorFlow => return vec![Knob::TfDispatch],
        F::TensorRt | F::LlamaCpp => {
            return analysis::host_knobs(analysis::HostCause::LaunchOverhead, framework, practices)
                .iter()
                .map(|k| Knob::Host {
                    code: k.code().to_owned(),
                    text: k.text().to_owned(),
                })
                .collect();
        }
        _ => {}
    }
    let mut k = vec![match &practices.graph_replay {
        Some(g) => Knob::GraphsWiden {
            share: practices.share(g),
            evidence: g.evidence.clone(),
        },
        None if practices.compiled.is_some() => Knob::GraphsOnCompile,
        None => Knob::Graphs,
    }];
    k.push(match &practices.compiled {
        Some(_) => Knob::GraphBreaks,
        None => Knob::FewerKernels,
    });
    k.push(Knob::HostWorkOffStep);
    if practices.python_tracer.is_some() {
        k.push(Knob::WithoutPythonTracer);
    }
    k
}
