//! The kinds of step evidence a step finder weighed, and what became of each.

use serde::{Deserialize, Serialize};

/// A kind of step evidence, in the order the step finder tries them (serialised as its
/// stable key, [`StepEvidence::code`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum StepEvidence {
    /// `ProfilerStep#N` annotations and step markers the reader put into the capture.
    ProfilerStep,
    /// GPU-side `ProfilerStep#N` annotations.
    GpuProfilerStep,
    /// An inference or diffusion engine's step annotations.
    EngineStep,
    /// The framework's iteration annotations (`Optimizer.step#…`, `enumerate(DataLoader)#…`).
    IterationAnnotation,
    /// A host range that recurs at the top level of the launching thread.
    RepeatedHostRange,
    /// Repeated executions of one XLA module.
    ModuleExecution,
    /// A repeating sequence of activity names on one stream.
    KernelSequence,
}

impl StepEvidence {
    /// Its stable key (`profiler-step`, `gpu-profiler-step`, `engine-step`,
    /// `iteration-annotation`, `repeated-host-range`, `module-execution`,
    /// `kernel-sequence`), as reports print it.
    pub fn code(self) -> &'static str {
        match self {
            StepEvidence::ProfilerStep => "profiler-step",
            StepEvidence::GpuProfilerStep => "gpu-profiler-step",
            StepEvidence::EngineStep => "engine-step",
            StepEvidence::IterationAnnotation => "iteration-annotation",
            StepEvidence::RepeatedHostRange => "repeated-host-range",
            StepEvidence::ModuleExecution => "module-execution",
            StepEvidence::KernelSequence => "kernel-sequence",
        }
    }
}

impl std::fmt::Display for StepEvidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}

/// One kind of step evidence and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepCandidate {
    /// Which evidence.
    pub evidence: StepEvidence,
    /// Steps it gave (0 when absent).
    pub steps: usize,
    /// Won or why it lost.
    pub outcome: CandidateOutcome,
}

impl StepCandidate {
    /// The candidate and its outcome in words.
    pub fn describe(&self) -> String {
        match &self.outcome {
            CandidateOutcome::Chosen => format!("{}: chosen ({} steps)", self.evidence, self.steps),
            CandidateOutcome::Absent => format!("{}: none in the capture", self.evidence),
            CandidateOutcome::TooLittleGpuWork { share } => format!(
                "{}: lost, its {} steps hold {:.1} % of the GPU time (a part of a step, not the step)",
                self.evidence,
                self.steps,
                100.0 * share
            ),
            CandidateOutcome::NestedInRepeatingParent {
                parent,
                instances,
                share,
            } => format!(
                "{}: lost, its {} steps lie inside the repeating range {parent} ({instances} instances) and launch {:.1} % of its GPU work (a part of the parent's step, not the step)",
                self.evidence,
                self.steps,
                100.0 * share
            ),
            CandidateOutcome::NotTried => {
                format!("{}: not tried, a stronger evidence won", self.evidence)
            }
        }
    }
}

/// Why a step candidate won or lost (serialised tagged by `code`, in kebab case).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum CandidateOutcome {
    /// It gave the steps.
    Chosen,
    /// The capture holds no such evidence (or too little of it: no repeat).
    Absent,
    /// Its steps hold less than [`crate::MIN_STEP_COVERAGE`] of the GPU time: it is a part of a
    /// step (a layer, a block, a scheduler's update), not the step.
    TooLittleGpuWork {
        /// Share of all GPU time inside its steps, in [0, 1].
        share: f64,
    },
    /// Every one of its step ranges lies inside an instance of a host range of another
    /// name that repeats (at least two instances, each holding as many of its ranges) and
    /// launches GPU work outside them (at least a tenth of its own: it is not a wrapper):
    /// the parent is the step, the nested range a part of it (a layer, a block, a
    /// scheduler's update).
    NestedInRepeatingParent {
        /// The parent range's name.
        parent: String,
        /// Its instances.
        instances: usize,
        /// Share of the parent instances' GPU work launched inside the nested ranges,
        /// in [0, 1].
        share: f64,
    },
    /// A stronger evidence won before this one was tried.
    NotTried,
}
