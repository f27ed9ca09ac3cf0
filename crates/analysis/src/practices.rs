//! What a capture already does (torch.compile/Inductor, CUDA/HIP graph replay, activation
//! checkpointing, the Python tracer) and what it does eagerly that a fused kernel would
//! do better (eager attention), so advice never suggests what is in use.

use trace_model::{
    Capture, GpuActivity, HostKind, KernelClass, Nanos, StreamId, is_graph_launch_api,
};

use crate::budget::{Window, busy_intervals};

use crate::percent::ratio;

/// One practice found in the capture, with its evidence (all `measured`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Practice {
    /// What was seen, in words (names and counts).
    pub evidence: String,
    /// Events (kernels or host events) that show it.
    pub count: usize,
    /// GPU time of the kernels that show it (0 for host-only evidence).
    pub gpu_time: Nanos,
}

/// The practices of a capture; `None` where the capture shows no evidence of one.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Practices {
    /// Σ duration of all GPU activities: the denominator of the shares.
    pub gpu_time: Nanos,
    /// torch.compile/Inductor: Triton kernels (`triton_*`), or compiled-region ops
    /// (`CompiledFunction`, `Torch-Compiled Region`).
    pub compiled: Option<Practice>,
    /// CUDA/HIP graph replay: graph launch calls, and the kernels they ran.
    pub graph_replay: Option<Practice>,
    /// Attention done eagerly: kernels launched by softmax ops and by bmm/baddbmm ops,
    /// with no fused attention kernel in the capture. `gpu_time` is what a fused kernel
    /// (SDPA/FlashAttention) would replace.
    pub eager_attention: Option<Practice>,
    /// Activation checkpointing: host events that are checkpointing at work
    /// ([`is_activation_checkpoint`]), not every name containing `checkpoint`.
    pub checkpointing: Option<Practice>,
    /// The Python tracer was on (`with_stack`): Python function events, which add their
    /// own overhead to host time and host gaps.
    pub python_tracer: Option<Practice>,
}

impl Practices {
    /// Share of all GPU time of one practice's kernels, in [0, 1].
    pub fn share(&self, p: &Practice) -> f64 {
        ratio(p.gpu_time.0, self.gpu_time.0)
    }
}

/// Whether an activity is part of eager attention: launched by a softmax op or by a
/// bmm/baddbmm op (the two matmuls around the softmax).
pub fn is_eager_attention_kernel(capture: &Capture, activity: &GpuActivity) -> bool {
    capture.launching_op(activity).is_some_and(|op| {
        matches!(
            capture.name(op.name),
            "aten::softmax"
                | "aten::_softmax"
                | "aten::_safe_softmax"
                | "aten::bmm"
                | "aten::baddbmm"
        )
    })
}

/// The time `stream` spends in activities that match `keep` inside `window`: the union
/// of their intervals clipped to the window (`measured`).
pub fn stream_time(
    capture: &Capture,
    stream: StreamId,
    window: Window,
    keep: impl Fn(&GpuActivity) -> bool,
) -> Nanos {
    busy_intervals(
        capture
            .stream_activities(stream)
            .iter()
            .filter(|a| a.start < window.end && a.end() > window.start && keep(a)),
        window,
    )
    .iter()
    .map(|&(s, e)| e - s)
    .sum()
}

/// Whether a kernel name is an Inductor/Triton kernel.
/// Whether a host event is activation checkpointing at work: torch.utils.checkpoint's
/// frames and ranges (`torch/utils/checkpoint.py`, `CheckpointFunction`,
/// `checkpoint_wrapper`, `activation_checkpoint`, a recomputation range). Names that only
/// contain "checkpoint" are not: `_cuda_getCheckpointState` and
/// `_cuda_setCheckpointPoolState` are the CUDA-graph allocator saving its pool, and
/// distributed-checkpoint (`torch.distributed.checkpoint`, `dcp`) saves a model to disk.
pub fn is_activation_checkpoint(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if lower.contains("checkpointstate")
        || lower.contains("checkpointpoolstate")
        || lower.contains("distributed/checkpoint")
        || lower.contains("distributed.checkpoint")
    {
        return false;
    }
    lower.contains("utils/checkpoint")
        || lower.contains("utils.checkpoint")
        || name.contains("CheckpointFunction")
        || lower.contains("checkpoint_wrapper")
        || lower.contains("activation_checkpoint")
        || lower.contains("checkpointwrapper")
        || lower.contains("recompute")
}

/// What [`practices`] tests of an event's name, found once per distinct name.
#[derive(Debug, Clone, Copy)]
struct NameClass {
    triton: bool,
    graph_launch: bool,
    compiled: bool,
    checkpoint: bool,
}

impl NameClass {
    fn of(name: &str) -> NameClass {
        NameClass {
            triton: is_triton_kernel(name),
            graph_launch: is_graph_launch_api(name),
            compiled: name == "CompiledFunction"
                || name.starts_with("Torch-Compiled Region")
                || name == "CompiledFunctionBackward",
            checkpoint: is_activation_checkpoint(name),
        }
    }
}

/// [`NameClass`] of each name of a capture, by its string id, found when first asked.
struct NameMemo(Vec<Option<NameClass>>);

impl NameMemo {
    fn new(capture: &Capture) -> NameMemo {
        NameMemo(vec![None; capture.strings().len()])
    }

    fn get(&mut self, capture: &Capture, name: trace_model::StringId) -> NameClass {
        match self.0.get_mut(name.index()) {
            Some(slot) => *slot.get_or_insert_with(|| NameClass::of(capture.name(name))),
            None => NameClass::of(capture.name(name)),
        }
    }
}

fn is_triton_kernel(name: &str) -> bool {
    name.starts_with("triton_") || name.starts_with("triton__")
}

/// Finds the practices of a capture.
pub fn practices(capture: &Capture) -> Practices {
    let mut p = Practices {
        gpu_time: capture.activities().iter().map(|a| a.dur).sum(),
        ..Practices::default()
    };
    let (mut triton_n, mut triton_t) = (0usize, Nanos(0));
    let (mut graph_kernels, mut graph_t) = (0usize, Nanos(0));
    let (mut softmax_n, mut softmax_t, mut bmm_n, mut bmm_t) = (0usize, Nanos(0), 0usize, Nanos(0));
    let mut fused_attention = false;
    // The substring tests run once per distinct name (a capture repeats a few thousand
    // names over its events), not once per event.
    let mut names = NameMemo::new(capture);
    for a in capture.activities() {
        if names.get(capture, a.name).triton {
            triton_n += 1;
            triton_t += a.dur;
        }
        let graph_launched = capture.activity_graph_id(a).is_some()
            || a.launch()
                .is_some_and(|l| names.get(capture, capture.host_event(l).name).graph_launch);
        if graph_launched {
            graph_kernels += 1;
            graph_t += a.dur;
        }
        if a.class == KernelClass::Attention {
            fused_attention = true;
        }
        if let Some(op) = capture.launching_op(a) {
            match capture.name(op.name) {
                "aten::softmax" | "aten::_softmax" | "aten::_safe_softmax" => {
                    softmax_n += 1;
                    softmax_t += a.dur;
                }
                "aten::bmm" | "aten::baddbmm" => {
                    bmm_n += 1;
                    bmm_t += a.dur;
                }
                _ => {}
            }
        }
    }
    let (mut compiled_ops, mut graph_launches, mut checkpoint, mut python) = (0, 0, 0, 0);
    for e in capture.host_events() {
        let class = names.get(capture, e.name);
        if class.compiled {
            compiled_ops += 1;
        }
        if class.graph_launch {
            graph_launches += 1;
        }
        if class.checkpoint && e.kind != HostKind::Launch {
            checkpoint += 1;
        }
        if e.kind == HostKind::PythonFrame {
            python += 1;
        }
    }
    if triton_n > 0 || compiled_ops > 0 {
        p.compiled = Some(Practice {
            evidence: format!(
                "{triton_n} Triton kernel(s) (triton_*), {compiled_ops} compiled-region op(s) (CompiledFunction, Torch-Compiled Region)"
            ),
            count: triton_n + compiled_ops,
            gpu_time: triton_t,
        });
    }
    if graph_launches > 0 || graph_kernels > 0 {
        p.graph_replay = Some(Practice {
            evidence: format!(
                "{graph_launches} graph launch call(s), {graph_kernels} GPU activities run by graphs"
            ),
            count: graph_launches + graph_kernels,
            gpu_time: graph_t,
        });
    }
    if !fused_attention && softmax_n > 0 && bmm_n > 0 {
        p.eager_attention = Some(Practice {
            evidence: format!(
                "{softmax_n} softmax kernel(s) and {bmm_n} bmm/baddbmm kernel(s), no fused attention kernel"
            ),
            count: softmax_n + bmm_n,
            gpu_time: softmax_t + bmm_t,
        });
    }
    if checkpoint > 0 {
        p.checkpointing = Some(Practice {
            evidence: format!("{checkpoint} host event(s) naming checkpoint"),
            count: checkpoint,
            gpu_time: Nanos(0),
        });
    }
    if python > 0 {
        p.python_tracer = Some(Practice {
            evidence: format!("{python} Python function events (with_stack)"),
            count: python,
            gpu_time: Nanos(0),
        });
    }
    p
}
