//! The knobs step 6 gives for a cause ([`Knob`]): each a hypothesis to test with a new
//! capture, worded by the renderer (a host sub-cause's or a compute class's knob carries
//! its own words).

use serde::{Deserialize, Serialize};

/// A knob to try: each a hypothesis to test with a new capture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "knob", rename_all = "snake_case")]
pub enum Knob {
    /// JAX: fewer, larger dispatches, command buffers, no host round trips, donation.
    JaxDispatch,
    /// Graphs already replay part of the GPU time: capture the rest into them.
    GraphsWiden {
        /// Share of GPU time they replay.
        share: f64,
        /// What shows them.
        evidence: String,
    },
    /// CUDA graphs through the torch.compile already in use.
    GraphsOnCompile,
    /// CUDA graphs.
    Graphs,
    /// torch.compile is in use: look for graph breaks.
    GraphBreaks,
    /// Fewer, larger kernels.
    FewerKernels,
    /// Host work off the step.
    HostWorkOffStep,
    /// Confirm without the Python tracer.
    WithoutPythonTracer,
    /// Look at the awaited stream.
    AwaitedStream,
    /// JAX: no host round trips.
    JaxNoRoundTrips,
    /// PyTorch: no synchronisations in the step.
    NoSyncs,
    /// Overlap collectives with compute.
    OverlapCollectives,
    /// Pinned memory, prefetching.
    OverlapCopies,
    /// JAX: native convolution layouts.
    JaxLayouts,
    /// PyTorch: channels-last.
    ChannelsLast,
    /// JAX: XLA fusion.
    JaxFusion,
    /// PyTorch, compiled: what is left outside compiled regions.
    CompiledFusion,
    /// PyTorch: fusion.
    Fusion,
    /// A fused attention kernel.
    FusedAttention,
    /// TensorFlow: fewer, larger dispatches (the step in one `tf.function`, XLA).
    TfDispatch,
    /// TensorFlow: no host round trips inside the step.
    TfNoRoundTrips,
    /// TensorFlow: native convolution layouts.
    TfLayouts,
    /// TensorFlow: XLA fusion.
    TfFusion,
    /// TensorRT: the engine's layer formats and precisions.
    TrtLayouts,
    /// TensorRT: the engine's layer fusion.
    TrtFusion,
    /// A framework without Python-level knobs (TensorRT, llama.cpp): synchronise once per
    /// step or batch.
    FewerHostWaits,
    /// A framework without Python-level knobs: the framework's fused kernels.
    EngineFusion,
    /// Mixture-of-experts GEMMs: the MoE kernel's tuned configuration, tokens per expert,
    /// expert parallelism.
    MoeGemm,
    /// A knob of the compute class that bounds the step, in the framework in use.
    Compute {
        /// Its stable code (`ggml-matmul`, `gemm-precision`, ...).
        code: String,
        /// In words.
        text: String,
    },
    /// A knob of one host sub-cause in the framework in use (`analysis::host_knobs`).
    Host {
        /// Its stable code (`analysis::Knob::code`).
        code: String,
        /// In words.
        text: String,
    },
}
