//! Vendor peaks by GPU model and dtype, read from `peaks.json` (a data file, each entry with
//! the vendor document it comes from), and the identification of a capture's device.

use serde::{Deserialize, Serialize};
use trace_model::{Device, Provenance, Vendor};

use crate::Dtype;

/// The peak table shipped with the crate.
const PEAKS_JSON: &str = include_str!("peaks.json");

/// The parsed peak table.
#[derive(Debug, Clone, Deserialize)]
pub struct PeakTable {
    /// One entry per GPU model.
    pub gpus: Vec<GpuPeaks>,
    pub(crate) per_core_per_clock: PerCoreRates,
}

/// One GPU model's dense peaks, with its source document.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct GpuPeaks {
    /// Short key of the entry (`a100-sxm4-80gb`, …).
    pub id: String,
    /// The model's name.
    pub model: String,
    /// `nvidia` or `amd`.
    pub vendor: String,
    /// How a capture's device is recognised as this model.
    #[serde(rename = "match")]
    pub match_rule: MatchRule,
    /// The vendor document the figures are read from.
    pub source: String,
    /// CUDA-core / vector-ALU TFLOP/s by dtype key (`fp64`, `fp32`).
    pub vector: RateSet,
    /// Tensor-core / matrix-core TFLOP/s by dtype key.
    pub matrix: RateSet,
    /// Memory (HBM, or GDDR on cards) bandwidth in GB/s; `None` where no document
    /// that could be cited gives it (see `omitted`).
    pub hbm_gb_per_s: Option<f64>,
    /// Which figures the document does not give (or gives inconsistently), and why: a
    /// figure that cannot be cited is left out, never guessed.
    #[serde(default)]
    pub omitted: Option<String>,
}

/// TFLOP/s per dtype; `None` where the vendor document gives no figure.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RateSet {
    /// 64-bit float.
    pub fp64: Option<f64>,
    /// 32-bit float.
    pub fp32: Option<f64>,
    /// TF32 (FP32 operands on tensor cores).
    pub tf32: Option<f64>,
    /// bfloat16.
    pub bf16: Option<f64>,
    /// IEEE half precision.
    pub fp16: Option<f64>,
    /// 8-bit floats.
    pub fp8: Option<f64>,
    /// 4-bit floats.
    pub fp4: Option<f64>,
}

/// How a capture's device is recognised as this model.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MatchRule {
    /// Substrings of the recorded device name (any one, ignoring case).
    pub names: Vec<String>,
    /// Compute capability the device must have, when recorded.
    pub compute_capability: Option<(i64, i64)>,
    /// Streaming-multiprocessor (compute-unit) count the device must have, when recorded.
    pub cores: Option<u64>,
    /// Memory range in GiB the device must lie in, when recorded.
    pub memory_gib: Option<(f64, f64)>,
    /// Clock range in MHz the device must lie in, when recorded.
    pub clock_mhz: Option<(f64, f64)>,
    /// Whether a device with no recorded name may match on vendor, compute capability and cores.
    pub nameless: bool,
}

/// Per-architecture matrix rates for the inferred peak of an unknown model.
#[derive(Debug, Clone, Deserialize)]
pub struct PerCoreRates {
    pub about: String,
    pub rates: Vec<ArchRate>,
}

/// FLOPs per core per clock of one architecture.
#[derive(Debug, Clone, Deserialize)]
pub struct ArchRate {
    pub vendor: String,
    pub compute_capability: (i64, i64),
    pub bf16: Option<f64>,
    pub fp16: Option<f64>,
    pub tf32: Option<f64>,
    pub fp8: Option<f64>,
    pub fp4: Option<f64>,
}

/// The device a capture ran on and where its peaks come from.
#[derive(Debug, Clone, Serialize)]
pub struct DevicePeaks {
    /// What the capture recorded (`NVIDIA H100 80GB HBM3`, or compute capability and cores).
    pub recorded: String,
    /// The matched table entry, if any.
    pub model: Option<String>,
    /// Read (a table entry matched, from its vendor document), inferred (cores x clock x
    /// per-architecture rate, with those assumptions), or `None` (unknown model: no peak,
    /// never another GPU's figure). Serialized as `label`: the provenance's word, or
    /// `none` ([`DevicePeaks::label`]).
    #[serde(rename = "label", serialize_with = "serialize_label")]
    pub provenance: Option<Provenance>,
    /// The provenance's source (read) or assumptions (inferred), or why there is none.
    pub source: String,
    /// Why the entry matched.
    pub matched_by: Option<String>,
    #[serde(skip)]
    pub(crate) entry: Option<GpuPeaks>,
    #[serde(skip)]
    pub(crate) inferred_matrix: RateSet,
    /// The profiler's own memory-bandwidth figure (XSpace `memory_bandwidth`), for comparison.
    pub profiler_memory_bandwidth_bytes_per_s: Option<f64>,
}

impl DevicePeaks {
    /// The peaks' label: `read`, `inferred` (the provenance's word) or `none`.
    pub fn label(&self) -> &'static str {
        label_word(self.provenance.as_ref())
    }
}

/// The word of an optional provenance: `none` where there is none.
fn label_word(provenance: Option<&Provenance>) -> &'static str {
    provenance.map_or("none", Provenance::word)
}

fn serialize_label<S: serde::Serializer>(
    provenance: &Option<Provenance>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_str(label_word(provenance.as_ref()))
}

/// One peak chosen for an op.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Peak {
    /// Peak FLOP/s; `None` without a figure for the op's dtype (or a FLOPs model).
    pub flops_per_s: Option<f64>,
    /// Peak bytes/s; `None` without a bandwidth figure.
    pub bytes_per_s: Option<f64>,
    /// Which figure was used: `matrix bf16`, `vector fp32`, ...
    pub basis: String,
}

impl PeakTable {
    /// The table shipped in `peaks.json`.
    pub fn builtin() -> PeakTable {
        serde_json::from_str(PEAKS_JSON)
            .expect("invariant: peaks.json parses (checked by the crate's tests)")
    }

    /// Identifies a capture's device. No match and no known architecture gives a
    /// `DevicePeaks` without figures.
    pub fn identify(&self, device: &Device) -> DevicePeaks {
        let props = &device.properties;
        let name = props.name.clone().unwrap_or_default();
        let mut recorded = Vec::new();
        if !name.is_empty() {
            recorded.push(name.clone());
        }
        if let Some((major, minor)) = props.compute_capability {
            recorded.push(format!("compute capability {major}.{minor}"));
        }
        if let Some(cores) = props.multiprocessors {
            recorded.push(format!("{cores} SMs/CUs"));
        }
        if let Some(khz) = props.clock_rate_khz {
            recorded.push(format!("{} MHz", khz / 1000));
        }
        if let Some(bytes) = props.total_memory_bytes {
            recorded.push(format!("{:.1} GiB", bytes as f64 / GIB));
        }
        let recorded = if recorded.is_empty() {
            "nothing recorded".to_owned()
        } else {
            recorded.join(", ")
        };
        let base = DevicePeaks {
            recorded,
            model: None,
            provenance: None,
            source: String::new(),
            matched_by: None,
            entry: None,
            inferred_matrix: RateSet::default(),
            profiler_memory_bandwidth_bytes_per_s: props.memory_bandwidth_bytes_per_s,
        };
        for entry in &self.gpus {
            if let Some(why) = matches(entry, device) {
                return DevicePeaks {
                    model: Some(entry.model.clone()),
                    provenance: Some(Provenance::read(entry.source.clone())),
                    source: entry.source.clone(),
                    matched_by: Some(why),
                    entry: Some(entry.clone()),
                    ..base
                };
            }
        }
        if let Some(inferred) = self.infer(device) {
            let cores = props.multiprocessors.unwrap_or(0);
            let mhz = props.clock_rate_khz.unwrap_or(0) / 1000;
            let source = format!(
                "no table entry matches; matrix peaks = {cores} cores x {mhz} MHz (the clock the profiler recorded, which may be the boost clock, above the datasheet's) x the architecture's dense FLOPs per core per clock ({}); no vector or HBM figure",
                self.per_core_per_clock.about
            );
            return DevicePeaks {
                provenance: Some(Provenance::inferred(source.clone())),
                source,
                inferred_matrix: inferred,
                ..base
            };
        }
        DevicePeaks {
            source: "unknown GPU model: no table entry matches what the capture recorded, and no per-architecture rate applies; no peak is given rather than another GPU's".to_owned(),
            ..base
        }
    }

    fn infer(&self, device: &Device) -> Option<RateSet> {
        let props = &device.properties;
        let cc = props.compute_capability?;
        let cores = props.multiprocessors? as f64;
        let hz = props.clock_rate_khz? as f64 * 1e3;
        let vendor = vendor_key(device.vendor)?;
        let rate = self
            .per_core_per_clock
            .rates
            .iter()
            .find(|r| r.vendor == vendor && r.compute_capability == cc)?;
        let tflops = |per: Option<f64>| per.map(|per| per * cores * hz / 1e12);
        Some(RateSet {
            bf16: tflops(rate.bf16),
            fp16: tflops(rate.fp16),
            tf32: tflops(rate.tf32),
            fp8: tflops(rate.fp8),
            fp4: tflops(rate.fp4),
            ..RateSet::default()
        })
    }
}

impl DevicePeaks {
    /// The peak for an op of dtype `dtype`; `matrix` when it runs on tensor/matrix cores
    /// (dot, convolution, GEMM, attention), else the vector rate (FP64 for f64, FP32 for
    /// every other float type: elementwise work does not run on tensor cores).
    pub fn peak_for(&self, dtype: Dtype, matrix: bool) -> Peak {
        let bytes_per_s = self
            .entry
            .as_ref()
            .and_then(|e| e.hbm_gb_per_s)
            .map(|gb| gb * 1e9);
        let (set, key, basis) = match (matrix, dtype.peak_key()) {
            (_, None) => {
                return Peak {
                    flops_per_s: None,
                    bytes_per_s,
                    basis: format!("no peak for {}", dtype.name()),
                };
            }
            (true, Some(key)) => match &self.entry {
                Some(e) => (&e.matrix, key, "matrix"),
                None => (&self.inferred_matrix, key, "matrix (inferred)"),
            },
            (false, Some(key)) => {
                let key = if key == "fp64" { "fp64" } else { "fp32" };
                match &self.entry {
                    Some(e) => (&e.vector, key, "vector"),
                    None => {
                        return Peak {
                            flops_per_s: None,
                            bytes_per_s,
                            basis: format!("no vector {key} figure"),
                        };
                    }
                }
            }
        };
        let mut tflops = set.get(key);
        // A matrix FP32/FP64 op on a GPU whose matrix units have no such rate (NVIDIA FP32)
        // runs on the vector units: use that figure, never a lower-precision one.
        let mut basis = format!("{basis} {key}");
        if tflops.is_none()
            && matrix
            && matches!(key, "fp32" | "fp64")
            && let Some(e) = &self.entry
        {
            tflops = e.vector.get(key);
            basis = format!("vector {key} (no matrix {key} rate)");
        }
        Peak {
            flops_per_s: tflops.map(|t| t * 1e12),
            bytes_per_s,
            basis,
        }
    }
}

impl RateSet {
    /// The figure for a dtype key (`fp32`, `bf16`, ...).
    pub fn get(&self, key: &str) -> Option<f64> {
        match key {
            "fp64" => self.fp64,
            "fp32" => self.fp32,
            "tf32" => self.tf32,
            "bf16" => self.bf16,
            "fp16" => self.fp16,
            "fp8" => self.fp8,
            "fp4" => self.fp4,
            _ => None,
        }
    }
}

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

fn vendor_key(vendor: Vendor) -> Option<&'static str> {
    match vendor {
        Vendor::Nvidia => Some("nvidia"),
        Vendor::Amd => Some("amd"),
        _ => None,
    }
}

/// Why `device` is `entry`'s model, or `None`.
fn matches(entry: &GpuPeaks, device: &Device) -> Option<String> {
    let rule = &entry.match_rule;
    let props = &device.properties;
    let vendor = vendor_key(device.vendor);
    if vendor.is_some_and(|v| v != entry.vendor) {
        return None;
    }
    let name = props.name.as_deref().unwrap_or("").to_ascii_lowercase();
    let by_name = rule
        .names
        .iter()
        .find(|n| !name.is_empty() && name.contains(&n.to_ascii_lowercase()));
    // Every key the capture records must agree, however the model was recognised.
    if let (Some(want), Some(have)) = (rule.compute_capability, props.compute_capability)
        && want != have
    {
        return None;
    }
    if let (Some(want), Some(have)) = (rule.cores, props.multiprocessors)
        && want != have
    {
        return None;
    }
    if let (Some((lo, hi)), Some(bytes)) = (rule.memory_gib, props.total_memory_bytes) {
        let gib = bytes as f64 / GIB;
        if gib < lo || gib > hi {
            return None;
        }
    }
    if let (Some((lo, hi)), Some(khz)) = (rule.clock_mhz, props.clock_rate_khz) {
        let mhz = khz as f64 / 1e3;
        if mhz < lo || mhz > hi {
            return None;
        }
    }
    if let Some(n) = by_name {
        return Some(format!("device name contains \"{n}\""));
    }
    // Without a telling name: only entries that allow it, on the recorded vendor,
    // compute capability and core count (all three required). A device whose vendor is
    // not recorded (TensorFlow's XSpace planes) needs a fourth figure to agree: the clock
    // or the memory range of the entry.
    let fourth = (rule.clock_mhz.is_some() && props.clock_rate_khz.is_some())
        || (rule.memory_gib.is_some() && props.total_memory_bytes.is_some());
    if !rule.nameless
        || (vendor.is_none() && !fourth)
        || rule.compute_capability.is_none()
        || props.compute_capability.is_none()
        || rule.cores.is_none()
        || props.multiprocessors.is_none()
    {
        return None;
    }
    if rule.memory_gib.is_some() && props.total_memory_bytes.is_none() {
        return None;
    }
    if rule.clock_mhz.is_some() && props.clock_rate_khz.is_none() {
        return None;
    }
    let (major, minor) = rule.compute_capability?;
    let vendor_text = match vendor {
        Some(v) => format!("vendor {v}"),
        None => "vendor not recorded".to_owned(),
    };
    let mut why = format!(
        "no model name recorded; {vendor_text}, compute capability {major}.{minor}, {} cores",
        rule.cores?
    );
    if let Some((lo, hi)) = rule.memory_gib {
        why.push_str(&format!(", memory within {lo}-{hi} GiB"));
    }
    if let Some((lo, hi)) = rule.clock_mhz {
        why.push_str(&format!(", clock within {lo}-{hi} MHz"));
    }
    Some(why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace_model::{DeviceId, DeviceProperties};

    fn device(
        vendor: Vendor,
        name: &str,
        cc: (i64, i64),
        cores: u64,
        gib: f64,
        mhz: u64,
    ) -> Device {
        Device {
            id: DeviceId::new(0),
            ordinal: 0,
            vendor,
            properties: DeviceProperties {
                name: (!name.is_empty()).then(|| name.to_owned()),
                compute_capability: Some(cc),
                total_memory_bytes: Some((gib * GIB) as u64),
                multiprocessors: Some(cores),
                clock_rate_khz: Some(mhz * 1000),
                memory_bandwidth_bytes_per_s: None,
            },
        }
    }

    fn check(d: &Device, expect: Option<&str>) -> DevicePeaks {
        let peaks = PeakTable::builtin().identify(d);
        assert_eq!(
            peaks.entry.as_ref().map(|e| e.id.as_str()),
            expect,
            "{}: {}",
            peaks.recorded,
            peaks.source
        );
        peaks
    }

    #[test]
    fn every_entry_has_a_source_and_sane_figures() {
        let table = PeakTable::builtin();
        assert!(table.gpus.len() >= 8);
        for gpu in &table.gpus {
            let s = gpu.source.to_ascii_lowercase();
            assert!(
                [
                    "datasheet",
                    "data sheet",
                    "specification",
                    "whitepaper",
                    "product page"
                ]
                .iter()
                .any(|doc| s.contains(doc)),
                "{}: source must name a vendor document: {}",
                gpu.id,
                gpu.source
            );
            // A figure left out says why; every figure given is positive.
            let omitted = gpu.omitted.as_deref().unwrap_or("");
            if gpu.hbm_gb_per_s.is_none() || gpu.vector.fp32.is_none() {
                assert!(omitted.len() > 20, "{}: what is left out and why", gpu.id);
            }
            assert!(gpu.hbm_gb_per_s.is_none_or(|b| b > 0.0), "{}", gpu.id);
            assert!(gpu.vector.fp32.is_none_or(|v| v > 0.0), "{}: FP32", gpu.id);
            for key in ["fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "fp4"] {
                for set in [&gpu.vector, &gpu.matrix] {
                    if let Some(v) = set.get(key) {
                        assert!(v > 0.0, "{} {key}", gpu.id);
                    }
                }
            }
            // Dense tensor figures are above the vector FP32 rate wherever they exist.
            if let (Some(bf16), Some(fp32)) = (gpu.matrix.bf16.or(gpu.matrix.fp16), gpu.vector.fp32)
            {
                assert!(bf16 > fp32, "{}", gpu.id);
            }
        }
        let ids: Vec<&str> = table.gpus.iter().map(|g| g.id.as_str()).collect();
        // Every datacenter GPU since V100, AMD Instinct since MI100, and the consumer
        // GPUs of the shared captures.
        for want in [
            "v100-sxm2",
            "v100-pcie",
            "t4",
            "a10",
            "a30",
            "a100-pcie-40gb",
            "a100-pcie-80gb",
            "a100-sxm4-40gb",
            "a100-sxm4-80gb",
            "l4",
            "l40s",
            "h100-pcie",
            "h100-sxm5",
            "h100-nvl",
            "h200-sxm",
            "b200",
            "b300",
            "gb200",
            "mi100",
            "mi210",
            "mi250x-gcd",
            "mi300a",
            "mi300x",
            "mi325x",
            "mi350x",
            "mi355x",
            "rtx-2080-ti",
            "rtx-3080",
            "radeon-gfx1151",
            "radeon-ai-pro-r9700",
        ] {
            assert!(ids.contains(&want), "{want} missing");
        }
        let mut unique = ids.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), ids.len(), "ids are unique");
        // MI355X has no TF32; MI250X is one GCD, half the package's 383 TFLOP/s.
        let by_id = |id: &str| table.gpus.iter().find(|g| g.id == id).expect("present");
        assert_eq!(by_id("mi355x").matrix.tf32, None);
        assert_eq!(by_id("mi250x-gcd").matrix.bf16, Some(383.0 / 2.0));
    }

    #[test]
    fn an_fp32_op_never_gets_a_bf16_peak() {
        let table = PeakTable::builtin();
        for gpu in &table.gpus {
            let peaks = DevicePeaks {
                recorded: String::new(),
                model: Some(gpu.model.clone()),
                provenance: Some(Provenance::read(gpu.source.clone())),
                source: gpu.source.clone(),
                matched_by: None,
                entry: Some(gpu.clone()),
                inferred_matrix: RateSet::default(),
                profiler_memory_bandwidth_bytes_per_s: None,
            };
            for matrix in [true, false] {
                let p = peaks.peak_for(Dtype::Fp32, matrix);
                let want = if matrix {
                    gpu.matrix.fp32.or(gpu.vector.fp32)
                } else {
                    gpu.vector.fp32
                };
                assert_eq!(
                    p.flops_per_s,
                    want.map(|t| t * 1e12),
                    "{} matrix={matrix}",
                    gpu.id
                );
                let bf16 = gpu.matrix.bf16.map(|t| t * 1e12);
                if bf16.is_some() {
                    assert_ne!(p.flops_per_s, bf16, "{}: FP32 op got the BF16 peak", gpu.id);
                }
                assert!(p.basis.contains("fp32"), "{}: {}", gpu.id, p.basis);
            }
            let bf16 = peaks.peak_for(Dtype::Bf16, true);
            assert_eq!(
                bf16.flops_per_s,
                gpu.matrix.bf16.map(|t| t * 1e12),
                "{}",
                gpu.id
            );
            // TF32 only where the document gives it.
            assert_eq!(
                peaks.peak_for(Dtype::Tf32, true).flops_per_s,
                gpu.matrix.tf32.map(|t| t * 1e12)
            );
            assert_eq!(peaks.peak_for(Dtype::Int, true).flops_per_s, None);
        }
    }

    #[test]
    fn devices_are_identified_from_what_captures_record() {
        // Names and figures as the shared captures record them (traces MANIFESTs).
        check(
            &device(
                Vendor::Nvidia,
                "NVIDIA H100 80GB HBM3",
                (9, 0),
                132,
                79.2,
                1980,
            ),
            Some("h100-sxm5"),
        );
        check(
            &device(
                Vendor::Nvidia,
                "Tesla V100-SXM2-32GB",
                (7, 0),
                80,
                31.7,
                1530,
            ),
            Some("v100-sxm2"),
        );
        check(
            &device(
                Vendor::Nvidia,
                "NVIDIA A100-SXM4-80GB",
                (8, 0),
                108,
                79.2,
                1410,
            ),
            Some("a100-sxm4-80gb"),
        );
        check(
            &device(
                Vendor::Amd,
                "AMD Instinct MI300X VF",
                (9, 4),
                304,
                192.0,
                2100,
            ),
            Some("mi300x"),
        );
        check(
            &device(Vendor::Amd, "", (9, 4), 304, 192.0, 2100),
            Some("mi300x"),
        );
        check(
            &device(Vendor::Amd, "AMD Radeon Graphics", (9, 0), 104, 64.0, 1700),
            Some("mi250-gcd"),
        );
        check(
            &device(Vendor::Amd, "", (9, 5), 256, 288.0, 2400),
            Some("mi355x"),
        );
        // The H100 PCIe (114 SMs), the MI325X (256 GiB) and the MI350X (2.2 GHz) by name
        // or, nameless, by what tells them from their siblings.
        check(
            &device(Vendor::Nvidia, "NVIDIA H100 PCIe", (9, 0), 114, 79.2, 1755),
            Some("h100-pcie"),
        );
        check(
            &device(Vendor::Amd, "", (9, 4), 304, 256.0, 2100),
            Some("mi325x"),
        );
        check(
            &device(Vendor::Amd, "", (9, 5), 256, 288.0, 2200),
            Some("mi350x"),
        );
        // Names that contain another model's: L40S is not an L4, GB200 not a B200.
        check(
            &device(Vendor::Nvidia, "NVIDIA L40S", (8, 9), 142, 44.4, 2520),
            Some("l40s"),
        );
        check(
            &device(Vendor::Nvidia, "NVIDIA L4", (8, 9), 58, 22.0, 2040),
            Some("l4"),
        );
        // A V100 without a name (TensorFlow's XSpace: compute capability, SMs, clock).
        check(
            &device(Vendor::Nvidia, "", (7, 0), 80, 15.8, 1530),
            Some("v100-sxm2"),
        );
        // Not a model in the table (an H100 with a cut SM count): an inferred matrix
        // peak, never another GPU's figure.
        let other = check(
            &device(
                Vendor::Nvidia,
                "NVIDIA H100 Custom",
                (9, 0),
                120,
                79.2,
                1755,
            ),
            None,
        );
        assert_eq!(other.label(), "inferred");
        let bf16 = other
            .peak_for(Dtype::Bf16, true)
            .flops_per_s
            .expect("inferred");
        assert!((bf16 - 4096.0 * 120.0 * 1.755e9).abs() < 1.0);
        assert_eq!(other.peak_for(Dtype::Fp32, false).flops_per_s, None);
        assert_eq!(other.peak_for(Dtype::Bf16, true).bytes_per_s, None);
        // A model in the table whose figures are not published: identified, no peak.
        let apu = check(
            &device(Vendor::Amd, "gfx1151", (11, 5), 40, 64.0, 2900),
            Some("radeon-gfx1151"),
        );
        assert_eq!(apu.peak_for(Dtype::Bf16, true).flops_per_s, None);
        assert_eq!(apu.peak_for(Dtype::Bf16, true).bytes_per_s, None);
        // Unknown vendor and architecture: no peak at all.
        let none = check(
            &device(Vendor::Unknown, "Mystery", (1, 0), 4, 1.0, 100),
            None,
        );
        assert_eq!(none.label(), "none");
        assert_eq!(none.peak_for(Dtype::Bf16, true).flops_per_s, None);
    }
}
