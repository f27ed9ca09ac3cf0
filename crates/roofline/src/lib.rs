//! Roofline analysis of a GPU profiler capture: per op, FLOPs and bytes from its shapes
//! (HLO instructions of a JAX XSpace; ATen ops of a Kineto trace taken with
//! `record_shapes=True`), the GPU time of its kernels (measured), the vendor peak for its
//! operand dtype (read from `peaks.json`, with the vendor document), arithmetic intensity
//! against the dtype's ridge point, and the achieved share of each peak.
//!
//! Three kinds of number, never confused: time is `measured` from the trace, FLOPs and bytes
//! are `inferred` from shapes under the conventions of [`hlo_cost`] and [`aten_cost`], peaks
//! are `read` (or `inferred` from cores x clock for a model the table lacks, or absent).
//!
//! The cost of one instruction of an in-memory HLO module: a 64x128 by 128x32 bf16 `dot`
//! is 2·64·128·32 FLOPs over its operand and result bytes, and the built-in peak table
//! says where every figure comes from.
//!
//! ```
//! use roofline::hlo_cost::{ModuleIndex, OpKind, instruction_cost};
//! let hlo = r#"HloModule jit_f, is_scheduled=true
//!
//! ENTRY %main (a: bf16[64,128], b: bf16[128,32]) -> bf16[64,32] {
//!   %a = bf16[64,128]{1,0} parameter(0)
//!   %b = bf16[128,32]{1,0} parameter(1)
//!   ROOT %dot = bf16[64,32]{1,0} dot(bf16[64,128]{1,0} %a, bf16[128,32]{1,0} %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
//! }
//! "#;
//! let module = hlo_parser::parse_module(hlo)?;
//! let index = ModuleIndex::new(&module);
//! let (computation, dot) = index.instruction("dot").expect("the module has %dot");
//! let cost = instruction_cost(&index, computation, dot);
//! assert_eq!(cost.kind, OpKind::Dot);
//! assert_eq!(cost.dtype, roofline::Dtype::Bf16);
//! assert_eq!(cost.flops, Some(2.0 * 64.0 * 128.0 * 32.0));
//! assert_eq!(cost.bytes, 2.0 * (64.0 * 128.0 + 128.0 * 32.0 + 64.0 * 32.0));
//! let table = roofline::PeakTable::builtin();
//! assert!(table.gpus.iter().all(|gpu| !gpu.source.is_empty()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod aten_cost;
mod dtype;
mod error;
pub mod hlo_cost;
mod jax;
mod kineto;
mod model;
mod peaks;

use std::path::Path;

use load::Loaded;
use trace_model::{Format, Labelled, Nanos, Provenance};

pub use dtype::Dtype;
pub use error::Error;
pub use model::{PeakFigure, Roofline, RooflineBound, RooflineOp, TrustItem};
pub use peaks::{DevicePeaks, GpuPeaks, MatchRule, Peak, PeakTable, RateSet};

/// Analyses the capture at `path` (through the one loader, [`load::load_single`]): a
/// Kineto trace (`.json`, `.json.gz`), an XSpace (`.xplane.pb`), a directory holding exactly
/// one capture, or a capture of another format (without op shapes: time only).
pub fn analyze(path: &Path) -> Result<Roofline, Error> {
    analyze_loaded(&load::load_single(path)?)
}

/// Analyses a loaded capture (see [`analyze`]).
pub fn analyze_loaded(loaded: &Loaded) -> Result<Roofline, Error> {
    let table = PeakTable::builtin();
    let capture = &loaded.capture;
    let file = &loaded.path;
    let rows = match capture.format() {
        Format::XPlane => jax::rows(loaded),
        Format::JaxTraceJson => {
            return Err(Error::Unsupported {
                path: file.clone(),
                reason: "a JAX Chrome trace holds no HLO modules; run roofline on the capture's .xplane.pb".to_owned(),
            });
        }
        Format::KinetoJson | Format::OtherJson => kineto::rows(capture),
        other => {
            let mut rows = kineto::rows(capture);
            rows.trust.push(TrustItem::timed(
                "format-without-shapes",
                format!(
                    "a {} records no operator shapes: no FLOPs or bytes, GPU time only",
                    other.describe()
                ),
                1,
                "captures",
                trace_model::Nanos::ZERO,
            ));
            rows
        }
    };
    let model::Rows {
        raw,
        trust,
        gpu_time,
        described,
    } = rows;
    // The device of the capture: the first GPU with activity (else the first listed).
    let active = capture
        .activities()
        .first()
        .map(|a| capture.stream(a.stream).device);
    let device = active
        .map(|id| capture.device(id))
        .or_else(|| capture.devices().first());
    let device = match device {
        Some(d) if d.properties == trace_model::DeviceProperties::default() => {
            same_model_as_described(&table, d, &described).unwrap_or_else(|| table.identify(d))
        }
        Some(d) => table.identify(d),
        None => DevicePeaks {
            recorded: "no GPU device in the capture".to_owned(),
            model: None,
            provenance: None,
            source: "no device recorded: no peak".to_owned(),
            matched_by: None,
            entry: None,
            inferred_matrix: RateSet::default(),
            profiler_memory_bandwidth_bytes_per_s: None,
        },
    };
    let mut ops: Vec<RooflineOp> = raw.into_iter().map(|r| r.finish(&device)).collect();
    ops.sort_by(|a, b| {
        b.time_ns
            .value
            .cmp(&a.time_ns.value)
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.program_id.cmp(&b.program_id))
            .then_with(|| a.detail.cmp(&b.detail))
    });
    let attributed: Nanos = ops.iter().map(|o| o.time_ns.value).sum();
    let costed: Nanos = ops
        .iter()
        .filter(|o| o.flops.value.is_some())
        .map(|o| o.time_ns.value)
        .sum();
    Ok(Roofline {
        capture: file.display().to_string(),
        format: capture.format().describe(),
        device,
        ops,
        gpu_time_ns: Labelled::measured(Nanos(gpu_time)),
        attributed_time_ns: Labelled::measured(attributed),
        costed_time_ns: Labelled::measured(costed),
        trust,
    })
}

/// The active device recorded no properties (Kineto lists `deviceProperties` by the
/// process's device ids, while activities may carry another numbering): when every device
/// the capture does describe is the same table model, that model, labelled inferred.
fn same_model_as_described(
    table: &PeakTable,
    active: &trace_model::Device,
    devices: &[trace_model::Device],
) -> Option<DevicePeaks> {
    let described: Vec<DevicePeaks> = devices
        .iter()
        .filter(|d| d.properties != trace_model::DeviceProperties::default())
        .map(|d| table.identify(d))
        .collect();
    let first = described.first()?;
    let id = first.entry.as_ref()?.id.clone();
    if !described
        .iter()
        .all(|p| p.entry.as_ref().is_some_and(|e| e.id == id))
    {
        return None;
    }
    let mut peaks = first.clone();
    peaks.recorded = format!(
        "GPU {} recorded no properties; the capture describes {} device(s): {}",
        active.ordinal,
        described.len(),
        first.recorded
    );
    peaks.source = format!(
        "{} — assuming the active GPU {} is the same model as every device the capture describes",
        first.source, active.ordinal
    );
    peaks.provenance = Some(Provenance::inferred(peaks.source.clone()));
    Some(peaks)
}

/// Whether a kernel name says it runs FP32 operands in TF32 (NVIDIA) or XF32 (AMD) mode.
pub fn is_tf32_kernel(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("tf32") || n.contains("xf32")
}
