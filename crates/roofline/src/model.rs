//! The roofline result: one row per op, the device and its peaks, the trust list.

use serde::Serialize;
use trace_model::{Labelled, Nanos, Provenance};

use crate::Dtype;
use crate::hlo_cost::OpKind;
use crate::peaks::{DevicePeaks, Peak};

/// A device peak of an op: the figure with its provenance, or no figure and the reason (the
/// peak table has none for the op's dtype). Serialized flat: `{"value": …, "label": …}` or
/// `{"value": null, "reason": …}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeakFigure {
    /// The peak, when the device's peak table has one.
    pub value: Option<f64>,
    /// Where the peak comes from; `None` exactly when `value` is.
    #[serde(flatten)]
    pub provenance: Option<Provenance>,
    /// Why there is no value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Whether an op is limited by arithmetic or by memory traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum RooflineBound {
    /// Intensity above the ridge point: arithmetic is the limit.
    Compute,
    /// Intensity below the ridge point: memory traffic is the limit.
    Memory,
    /// Collectives: neither roof applies.
    Communication,
    /// No FLOPs model or no peak.
    Unknown,
}

impl RooflineBound {
    /// The bound as reports name it.
    pub fn name(self) -> &'static str {
        match self {
            RooflineBound::Compute => "compute",
            RooflineBound::Memory => "memory",
            RooflineBound::Communication => "communication",
            RooflineBound::Unknown => "unknown",
        }
    }
}

/// One op: an HLO instruction of one program (JAX) or an ATen op with one set of input
/// shapes (PyTorch), summed over its executions.
#[derive(Debug, Clone, Serialize)]
pub struct RooflineOp {
    /// `hlo_op` (JAX) or `op` (PyTorch), for display.
    pub name: String,
    /// JAX: the program the instruction belongs to.
    pub program_id: Option<i64>,
    /// JAX: the HLO module's name.
    pub module: Option<String>,
    /// JAX: the instruction's name.
    pub hlo_op: Option<String>,
    /// PyTorch: the ATen op's name.
    pub op: Option<String>,
    /// HLO opcode (JAX) or the Input Dims text (PyTorch).
    pub detail: String,
    /// What kind of op it is.
    pub kind: OpKind,
    /// The operand dtype the peak is chosen by.
    pub dtype: Dtype,
    /// Executions of the op (JAX: inferred from runs and kernel names; PyTorch: op calls).
    pub occurrences: Labelled<u64>,
    /// GPU kernels attributed to the op.
    pub kernels: Labelled<u64>,
    /// FLOPs of one execution.
    pub flops_per_occurrence: Labelled<Option<f64>>,
    /// FLOPs and bytes over all executions.
    pub flops: Labelled<Option<f64>>,
    /// Bytes read and written over all executions.
    pub bytes: Labelled<f64>,
    /// Sum of the GPU time of the op's kernels.
    pub time_ns: Labelled<Nanos>,
    /// Elements of transcendental ops inside the FLOPs, one FLOP each (XLA counts more).
    pub transcendental_elements: f64,
    /// Arithmetic intensity: FLOPs per byte.
    pub intensity: Labelled<Option<f64>>,
    /// Achieved FLOP/s: FLOPs over the op's GPU time.
    pub achieved_flops_per_s: Labelled<Option<f64>>,
    /// Achieved bytes/s: bytes over the op's GPU time.
    pub achieved_bytes_per_s: Labelled<Option<f64>>,
    /// The device's FLOP/s peak for the op's kind and dtype.
    pub peak_flops_per_s: PeakFigure,
    /// The device's memory-bandwidth peak.
    pub peak_bytes_per_s: PeakFigure,
    /// Which peak figure the op is held against (`matrix bf16`, `vector fp32`, ...).
    pub peak_basis: String,
    /// The intensity at which the two roofs meet: peak FLOP/s over peak bytes/s.
    pub ridge_point: Labelled<Option<f64>>,
    /// Achieved over peak, 0..1 (XProf's utilisation view).
    pub flops_share_of_peak: Labelled<Option<f64>>,
    /// Achieved bytes/s over peak, 0..1.
    pub bytes_share_of_peak: Labelled<Option<f64>>,
    /// Intensity against the ridge point of the op's dtype.
    pub bound: Labelled<RooflineBound>,
    /// The larger of the two shares (XProf's `bound_by`): `compute`, `memory` or `unknown`.
    pub bound_by_utilization: Labelled<RooflineBound>,
    /// How the op's cost was computed, or why it is incomplete.
    pub note: String,
}

/// One item of the trust list: something the numbers do not cover, with what its count
/// counts (`ops`, `activities`, `modules`, `captures`) and the GPU time concerned
/// ([`TrustItem::timed`]); the workspace's one trust type.
pub use trace_model::TrustItem;

/// The whole result for one capture.
#[derive(Debug, Clone, Serialize)]
pub struct Roofline {
    /// The capture that was read.
    pub capture: String,
    /// The trace format, in words.
    pub format: &'static str,
    /// The device the capture ran on and where its peaks come from.
    pub device: DevicePeaks,
    /// Ops by GPU time, longest first.
    pub ops: Vec<RooflineOp>,
    /// GPU time of every activity, of those attributed to an op, and of ops with a FLOPs model.
    pub gpu_time_ns: Labelled<Nanos>,
    /// GPU time of the activities attributed to an op.
    pub attributed_time_ns: Labelled<Nanos>,
    /// GPU time of the ops with a FLOPs model.
    pub costed_time_ns: Labelled<Nanos>,
    /// What the numbers do not cover.
    pub trust: Vec<TrustItem>,
}

/// What a reader-specific pass hands back: rows before peaks, trust items, the capture's
/// total GPU time, and the devices whose properties the file describes.
#[derive(Debug)]
pub(crate) struct Rows {
    pub raw: Vec<RawRow>,
    pub trust: Vec<TrustItem>,
    pub gpu_time: i64,
    pub described: Vec<trace_model::Device>,
}

/// What the rows are built from before peaks are applied.
#[derive(Debug, Clone)]
pub(crate) struct RawRow {
    pub name: String,
    pub program_id: Option<i64>,
    pub module: Option<String>,
    pub hlo_op: Option<String>,
    pub op: Option<String>,
    pub detail: String,
    pub kind: OpKind,
    pub dtype: Dtype,
    pub occurrences: u64,
    /// Set when the execution count is an estimate.
    pub occurrences_assumption: Option<String>,
    pub kernels: u64,
    pub flops_per_occurrence: Option<f64>,
    pub bytes_per_occurrence: f64,
    pub time_ns: i64,
    pub transcendental_elements: f64,
    pub cost_assumptions: String,
    /// Whether a kernel name of the op says TF32 (`tf32`, `xf32`): the capture shows it on.
    pub tf32_kernels: bool,
}

impl RawRow {
    pub(crate) fn finish(self, device: &DevicePeaks) -> RooflineOp {
        let occurrences = self.occurrences as f64;
        let mut note = self.cost_assumptions.clone();
        let dtype = if self.dtype == Dtype::Fp32 && self.kind.is_matrix() && self.tf32_kernels {
            note.push_str("; FP32 operands on TF32 tensor cores (a kernel name says tf32/xf32)");
            Dtype::Tf32
        } else {
            self.dtype
        };
        let flops = self.flops_per_occurrence.map(|f| f * occurrences);
        let bytes = self.bytes_per_occurrence * occurrences;
        let seconds = self.time_ns as f64 * 1e-9;
        let peak: Peak = device.peak_for(dtype, self.kind.is_matrix());
        let intensity = flops.filter(|_| bytes > 0.0).map(|f| f / bytes);
        let rate = |x: f64| (seconds > 0.0).then(|| x / seconds);
        let achieved_flops = flops.and_then(rate);
        let achieved_bytes = rate(bytes);
        let ridge = peak.flops_per_s.zip(peak.bytes_per_s).map(|(f, b)| f / b);
        let flops_share = achieved_flops.zip(peak.flops_per_s).map(|(a, p)| a / p);
        let bytes_share = achieved_bytes.zip(peak.bytes_per_s).map(|(a, p)| a / p);
        let bound = if self.kind == OpKind::Collective {
            RooflineBound::Communication
        } else {
            match (intensity, ridge) {
                // No arithmetic at all: only memory traffic can limit it.
                _ if flops == Some(0.0) && bytes > 0.0 => RooflineBound::Memory,
                (Some(i), Some(r)) if i >= r => RooflineBound::Compute,
                (Some(_), Some(_)) => RooflineBound::Memory,
                _ => RooflineBound::Unknown,
            }
        };
        let by_util = match (flops_share, bytes_share) {
            _ if self.kind == OpKind::Collective => RooflineBound::Communication,
            (Some(f), Some(b)) if f >= b && f > 0.0 => RooflineBound::Compute,
            (_, Some(b)) if b > 0.0 => RooflineBound::Memory,
            (Some(f), None) if f > 0.0 => RooflineBound::Compute,
            _ => RooflineBound::Unknown,
        };
        let cost = self.cost_assumptions.clone();
        let peak_label = |value: Option<f64>, what: &str| -> PeakFigure {
            let provenance = device
                .provenance
                .clone()
                .unwrap_or_else(|| Provenance::inferred(device.source.clone()));
            PeakFigure {
                value,
                reason: value.is_none().then(|| format!("{what}: {}", peak.basis)),
                provenance: value.map(|_| provenance),
            }
        };
        let from_cost = |v| Labelled::inferred(v, format!("from shapes: {cost}"));
        let against = "measured time, shapes-derived FLOPs/bytes and the peak";
        RooflineOp {
            name: self.name,
            program_id: self.program_id,
            module: self.module,
            hlo_op: self.hlo_op,
            op: self.op,
            detail: self.detail,
            kind: self.kind,
            dtype,
            occurrences: match self.occurrences_assumption {
                Some(a) => Labelled::inferred(self.occurrences, a),
                None => Labelled::measured(self.occurrences),
            },
            kernels: Labelled::measured(self.kernels),
            flops_per_occurrence: from_cost(self.flops_per_occurrence),
            flops: from_cost(flops),
            bytes: Labelled::inferred(bytes, format!("from shapes: {}", self.cost_assumptions)),
            time_ns: Labelled::measured(Nanos(self.time_ns)),
            transcendental_elements: self.transcendental_elements * occurrences,
            intensity: Labelled::inferred(intensity, "FLOPs / bytes, both from shapes"),
            achieved_flops_per_s: Labelled::inferred(
                achieved_flops,
                "shapes-derived FLOPs / measured kernel time",
            ),
            achieved_bytes_per_s: Labelled::inferred(
                achieved_bytes,
                "shapes-derived bytes / measured kernel time",
            ),
            peak_flops_per_s: peak_label(peak.flops_per_s, "FLOP/s peak"),
            peak_bytes_per_s: peak_label(peak.bytes_per_s, "HBM peak"),
            peak_basis: peak.basis.clone(),
            ridge_point: Labelled::inferred(
                ridge,
                "peak FLOP/s / peak HBM bytes/s for the op's dtype",
            ),
            flops_share_of_peak: Labelled::inferred(flops_share, against),
            bytes_share_of_peak: Labelled::inferred(bytes_share, against),
            bound: Labelled::inferred(
                bound,
                "arithmetic intensity against the ridge point of the op's dtype",
            ),
            bound_by_utilization: Labelled::inferred(
                by_util,
                "the larger of the FLOP/s and bytes/s shares of peak (XProf's bound_by)",
            ),
            note,
        }
    }
}
