//! Why two sides are not comparable: each reason typed (`report` words it).

use crate::{Config, STEP_COUNT_FACTOR, Side};

/// Which side of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// The side before the change.
    Before,
    /// The side after the change.
    After,
}

/// Why two sides are not comparable (`Outcome::Inconclusive`); report words each (not
/// `non_exhaustive`, so that a new reason does not build until it has its words).
#[derive(Debug, Clone, PartialEq)]
pub enum NotComparable {
    /// A side found no steps (the whole capture is one step).
    NoSteps {
        /// The side.
        side: Which,
        /// What its steps came from (`None` when not recorded).
        origin: Option<investigation::StepsOrigin>,
    },
    /// A side has fewer steady-state steps than a spread needs.
    TooFewSteps {
        /// The side.
        side: Which,
        /// Its steady-state steps.
        steps: usize,
        /// [`Config::min_steps`].
        needed: usize,
    },
    /// The sides' GPU models differ (each sorted, one per device).
    GpuModels {
        /// Before.
        before: Vec<String>,
        /// After.
        after: Vec<String>,
    },
    /// The sides' GPU vendors differ (each sorted, one per device whose vendor is known),
    /// where a side does not name its models.
    GpuVendors {
        /// Before.
        before: Vec<String>,
        /// After.
        after: Vec<String>,
    },
    /// The sides have different numbers of GPUs with activity.
    GpuCounts {
        /// Before.
        before: usize,
        /// After.
        after: usize,
    },
    /// The steady-state step counts differ by more than [`STEP_COUNT_FACTOR`].
    StepCounts {
        /// Before.
        before: usize,
        /// After.
        after: usize,
    },
    /// The steps were found by different kinds of evidence.
    StepDefinitions {
        /// Before.
        before: Option<investigation::StepsOrigin>,
        /// After.
        after: Option<investigation::StepsOrigin>,
    },
    /// Too little of a side's kernel time is in kernels the other side runs too.
    KernelOverlap {
        /// The side.
        side: Which,
        /// Its kernel time in kernels both sides run, in [0, 1].
        share: f64,
        /// [`Config::min_kernel_overlap`].
        needed: f64,
    },
}

/// Why the sides are not comparable (empty when they are).
pub(crate) fn reasons(before: &Side, after: &Side, config: &Config) -> Vec<NotComparable> {
    let mut reasons = Vec::new();
    for (side, s) in [(Which::Before, before), (Which::After, after)] {
        if !s.has_steps {
            reasons.push(NotComparable::NoSteps {
                side,
                origin: s.step_origin.clone(),
            });
        } else if s.steady_steps < config.min_steps {
            reasons.push(NotComparable::TooFewSteps {
                side,
                steps: s.steady_steps,
                needed: config.min_steps,
            });
        }
    }
    if !before.gpu_models.is_empty()
        && !after.gpu_models.is_empty()
        && before.gpu_models != after.gpu_models
    {
        reasons.push(NotComparable::GpuModels {
            before: before.gpu_models.clone(),
            after: after.gpu_models.clone(),
        });
    }
    // A side that does not name its GPUs may still say whose they are.
    else if !before.gpu_vendors.is_empty()
        && !after.gpu_vendors.is_empty()
        && before.gpu_vendors != after.gpu_vendors
    {
        reasons.push(NotComparable::GpuVendors {
            before: before.gpu_vendors.clone(),
            after: after.gpu_vendors.clone(),
        });
    }
    if before.devices != after.devices {
        reasons.push(NotComparable::GpuCounts {
            before: before.devices,
            after: after.devices,
        });
    }
    let counts = [before.steady_steps, after.steady_steps];
    if before.has_steps
        && after.has_steps
        && counts[0].min(counts[1]) > 0
        && counts[0].max(counts[1]) as f64 > STEP_COUNT_FACTOR * counts[0].min(counts[1]) as f64
    {
        reasons.push(NotComparable::StepCounts {
            before: counts[0],
            after: counts[1],
        });
    }
    if before.has_steps
        && after.has_steps
        && !same_step_definition(before.step_origin.as_ref(), after.step_origin.as_ref())
    {
        reasons.push(NotComparable::StepDefinitions {
            before: before.step_origin.clone(),
            after: after.step_origin.clone(),
        });
    }
    reasons
}

/// Whether two sides' steps were found by the same kind of evidence: the same origin
/// (for a repeated host range, of the same kind; for a kernel sequence, on the same
/// stream), and, where a capture keeps steps per GPU, the figures from the same GPU. The
/// names a change may rename (markers, annotations, modules, kernels) are not compared.
fn same_step_definition(
    before: Option<&investigation::StepsOrigin>,
    after: Option<&investigation::StepsOrigin>,
) -> bool {
    use analysis::StepOrigin as O;
    let (Some(b), Some(a)) = (before, after) else {
        return before.is_none() && after.is_none();
    };
    let same_origin = match (&b.origin, &a.origin) {
        (O::RepeatedHostRange { kind: x, .. }, O::RepeatedHostRange { kind: y, .. }) => x == y,
        (O::KernelSequence { stream: x, .. }, O::KernelSequence { stream: y, .. }) => x == y,
        (x, y) => std::mem::discriminant(x) == std::mem::discriminant(y),
    };
    let figures = |o: &investigation::StepsOrigin| o.per_gpu.as_ref().map(|p| p.figures);
    same_origin && figures(b) == figures(a)
}
