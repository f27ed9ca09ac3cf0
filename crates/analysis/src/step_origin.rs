//! Where a capture's steps came from: the evidence that gave them, with its names.

use serde::{Deserialize, Serialize};

/// Where the steps came from (serialised tagged by `origin`, in kebab case).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "origin", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum StepOrigin {
    /// `ProfilerStep#N` annotations (Kineto).
    ProfilerStep,
    /// Step markers with a `step_num` (JAX).
    StepMarker,
    /// Step annotations of an inference or diffusion engine (SGLang `step[EXTEND …]` /
    /// `step[DECODE …]`, vLLM `execute_model` and its `execute_N_context_…` ranges, a
    /// diffusion scheduler's `step`), outermost instances.
    EngineStep {
        /// The markers found, in words.
        markers: String,
    },
    /// The framework's iteration annotations: `Optimizer.step#…` (a step ends with the
    /// optimizer's), else `enumerate(DataLoader)#…` (a step starts with a batch fetch).
    IterationAnnotation {
        /// The annotation, in words.
        name: String,
    },
    /// A host range that recurs at the top level of the thread that launches the GPU
    /// work (a `record_function` annotation or a Python function), with a stable period.
    RepeatedHostRange {
        /// The range's name.
        name: String,
        /// An annotation or a Python function.
        kind: HostRangeKind,
    },
    /// Repeated executions of this XLA module.
    ModuleExecution {
        /// The module's name.
        module: String,
    },
    /// The activity names on the stream with the most compute repeat: a step per period.
    KernelSequence {
        /// The stream, in words (`GPU 0 stream 7`).
        stream: String,
        /// Activities per period.
        period: usize,
        /// The activity that starts each period.
        first: String,
    },
    /// No step information: the whole capture is one step.
    WholeCapture,
}

impl StepOrigin {
    /// Whether steps of this origin are host-side ranges (annotations, markers, repeated
    /// host ranges) rather than GPU-side ones (module executions, kernel sequences).
    pub fn is_host_ranged(&self) -> bool {
        crate::steps::host_ranged(self)
    }

    /// The origin in words, as reports print it.
    pub fn describe(&self) -> String {
        match self {
            StepOrigin::ProfilerStep => "ProfilerStep#N annotations".to_string(),
            StepOrigin::StepMarker => "step markers (step_num)".to_string(),
            StepOrigin::EngineStep { markers } => {
                format!("engine step annotations ({markers})")
            }
            StepOrigin::RepeatedHostRange { name, kind } => {
                let kind = kind.label();
                format!("a repeated top-level {kind} ({name}) with a stable period")
            }
            StepOrigin::IterationAnnotation { name } => {
                format!("the framework's iteration annotations ({name})")
            }
            StepOrigin::ModuleExecution { module } => {
                format!("repeated executions of XLA module {module}")
            }
            StepOrigin::KernelSequence {
                stream,
                period,
                first,
            } => format!(
                "a repeating kernel sequence on {stream} ({period} activities per period, each starting with {first})"
            ),
            StepOrigin::WholeCapture => "none found: the whole capture is one step".to_string(),
        }
    }
}

/// What kind of host range recurs in [`StepOrigin::RepeatedHostRange`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostRangeKind {
    /// A `record_function` (user) annotation.
    Annotation,
    /// A Python function (the profiler's `with_stack` frames).
    PythonFunction,
}

impl HostRangeKind {
    /// The kind in words.
    pub fn label(self) -> &'static str {
        match self {
            HostRangeKind::Annotation => "annotation",
            HostRangeKind::PythonFunction => "Python function",
        }
    }
}
