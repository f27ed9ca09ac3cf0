//! The causes of lost step time investigate ranks and compare checks: each with a key that
//! survives rewording ([`CauseKey`]) and its time inside the analysed window, computed in
//! one place so that a prediction and its later check count the same time.

use trace_model::{Capture, KernelClass, Nanos};

use crate::{
    CaptureAnalysis, GapCause, HostCause, Window, is_eager_attention_kernel, practices, stream_time,
};

/// A cause investigate ranks, by a key that survives rewording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum CauseKey {
    /// Idle time of the critical stream by gap cause (never [`GapCause::Unknown`]; the
    /// host-wait time is ranked by its [`CauseKey::Host`] sub-causes instead).
    Gap(GapCause),
    /// Host-wait time of the critical stream ([`GapCause::HostNotLaunched`]) by what the
    /// launching thread was doing.
    Host(HostCause),
    /// Collective time no compute overlaps on a GPU.
    ExposedCollective {
        /// The GPU's position among the capture's GPUs, by ordinal (a rank's one GPU is
        /// 0, whatever its ordinal).
        gpu: usize,
    },
    /// Copy time no compute or collective overlaps on a GPU.
    ExposedMemcpy {
        /// The GPU's position, as for `ExposedCollective`.
        gpu: usize,
    },
    /// Layout transposes on the critical stream.
    Layout,
    /// Elementwise, activation and normalisation kernels on the critical stream.
    Elementwise,
    /// Eager (unfused) attention kernels on the critical stream.
    EagerAttention,
    /// Mixture-of-experts GEMMs (grouped/fused expert GEMMs, [`crate::moe_gemm_activities`])
    /// on the critical stream: a GEMM family of its own, with its own knobs.
    MoeGemm,
    /// The kernels of one compute class on the critical stream (GEMM, convolution,
    /// attention, reduction, memset, other; MoE GEMMs left out of GEMM): the cause of a
    /// compute-bound verdict whose class has no key of its own ([`bounding_cause`]).
    Compute(KernelClass),
}

/// The classes a [`CauseKey::Compute`] names, by their [`KernelClass::word`].
const COMPUTE_CLASSES: [KernelClass; 6] = [
    KernelClass::Gemm,
    KernelClass::Convolution,
    KernelClass::Attention,
    KernelClass::Reduction,
    KernelClass::Memset,
    KernelClass::Other,
];

impl CauseKey {
    /// A stable machine-readable name (`gap:host-not-launched`, `exposed-collective:0`);
    /// [`CauseKey::from_code`] reads it back.
    pub fn code(self) -> String {
        match self {
            CauseKey::Gap(c) => format!(
                "gap:{}",
                match c {
                    GapCause::HostNotLaunched => "host-not-launched",
                    GapCause::StreamOrEvent => "stream-or-event",
                    GapCause::SyncCall => "sync-call",
                    GapCause::Unknown => "unknown",
                }
            ),
            CauseKey::Host(h) => format!("gap:host-not-launched:{}", h.code()),
            CauseKey::ExposedCollective { gpu } => format!("exposed-collective:{gpu}"),
            CauseKey::ExposedMemcpy { gpu } => format!("exposed-memcpy:{gpu}"),
            CauseKey::Layout => "layout".to_owned(),
            CauseKey::Elementwise => "elementwise".to_owned(),
            CauseKey::EagerAttention => "eager-attention".to_owned(),
            CauseKey::MoeGemm => "moe-gemm".to_owned(),
            CauseKey::Compute(class) => format!("compute:{}", class.word()),
        }
    }

    /// The key a [`CauseKey::code`] names.
    pub fn from_code(code: &str) -> Option<CauseKey> {
        let gpu = |rest: &str| rest.parse::<usize>().ok();
        Some(match code {
            "gap:host-not-launched" => CauseKey::Gap(GapCause::HostNotLaunched),
            "gap:stream-or-event" => CauseKey::Gap(GapCause::StreamOrEvent),
            "gap:sync-call" => CauseKey::Gap(GapCause::SyncCall),
            "gap:unknown" => CauseKey::Gap(GapCause::Unknown),
            "layout" => CauseKey::Layout,
            "elementwise" => CauseKey::Elementwise,
            "eager-attention" => CauseKey::EagerAttention,
            "moe-gemm" => CauseKey::MoeGemm,
            _ => {
                if let Some(rest) = code.strip_prefix("compute:") {
                    CauseKey::Compute(*COMPUTE_CLASSES.iter().find(|c| c.word() == rest)?)
                } else if let Some(rest) = code.strip_prefix("gap:host-not-launched:") {
                    CauseKey::Host(HostCause::from_code(rest)?)
                } else if let Some(rest) = code.strip_prefix("exposed-collective:") {
                    CauseKey::ExposedCollective { gpu: gpu(rest)? }
                } else {
                    CauseKey::ExposedMemcpy {
                        gpu: gpu(code.strip_prefix("exposed-memcpy:")?)?,
                    }
                }
            }
        })
    }

    /// The cause in words.
    pub fn describe(self) -> String {
        match self {
            CauseKey::Gap(c) => format!("critical stream idle: {}", c.label()),
            CauseKey::Host(h) => format!(
                "critical stream idle, host did not launch yet: {}",
                h.label()
            ),
            CauseKey::ExposedCollective { gpu } => {
                format!("exposed collective time on GPU #{gpu}")
            }
            CauseKey::ExposedMemcpy { gpu } => format!("exposed copy time on GPU #{gpu}"),
            CauseKey::Layout => "layout transposes on the critical stream".to_owned(),
            CauseKey::Elementwise => {
                "elementwise/norm/activation kernels on the critical stream".to_owned()
            }
            CauseKey::EagerAttention => "eager attention on the critical stream".to_owned(),
            CauseKey::MoeGemm => {
                "mixture-of-experts (grouped/fused expert) GEMMs on the critical stream".to_owned()
            }
            CauseKey::Compute(class) => {
                format!("{} kernels on the critical stream", class.label())
            }
        }
    }
}

/// One cause and its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cause {
    /// Which cause.
    pub key: CauseKey,
    /// The GPU's ordinal, for the per-GPU causes.
    pub device: Option<i64>,
    /// Its time inside the window (`measured`: a sum of the capture's own intervals).
    pub time: Nanos,
}

/// Every cause of `r`'s analysed window, those of zero time too: the verdict's own cause
/// first ([`bounding_cause`]), then most time first (then by key): the idle time of the critical stream by gap cause (its host-wait time by
/// [`HostCause`], so the causes of idle time add up to it), each GPU's exposed collective
/// and copy time (GPUs by ordinal), the MoE GEMMs (where the capture has any), and the
/// layout, elementwise and (where the capture runs
/// eager attention) attention kernels on the critical stream, and the class a
/// compute-bound verdict names where none of those holds it ([`CauseKey::Compute`]).
pub fn causes(r: &CaptureAnalysis, capture: &Capture, window: Window) -> Vec<Cause> {
    let mut out: Vec<Cause> = Vec::new();
    let mut push = |key, device, time| out.push(Cause { key, device, time });
    if let Some(gc) = &r.gap_causes {
        for h in HostCause::ALL {
            push(CauseKey::Host(h), None, gc.host.time_of(h));
        }
        for cause in [GapCause::StreamOrEvent, GapCause::SyncCall] {
            push(CauseKey::Gap(cause), None, gc.time(cause));
        }
    }
    let mut devices: Vec<&crate::DeviceRow> = r.devices.iter().collect();
    devices.sort_by_key(|d| d.device);
    for (gpu, d) in devices.into_iter().enumerate() {
        let device = Some(d.device);
        push(
            CauseKey::ExposedCollective { gpu },
            device,
            d.budget.collective,
        );
        push(CauseKey::ExposedMemcpy { gpu }, device, d.budget.memcpy);
    }
    if let Some(crit) = r.critical_stream() {
        let on_critical = |keep: &dyn Fn(&trace_model::GpuActivity) -> bool| {
            stream_time(capture, crit.stream_id, window, keep)
        };
        push(
            CauseKey::Layout,
            None,
            on_critical(&|a| a.class == KernelClass::Layout),
        );
        push(
            CauseKey::Elementwise,
            None,
            on_critical(&|a| matches!(a.class, KernelClass::Elementwise | KernelClass::Norm)),
        );
        if practices(capture).eager_attention.is_some() {
            push(
                CauseKey::EagerAttention,
                None,
                on_critical(&|a| is_eager_attention_kernel(capture, a)),
            );
        }
        let moe: std::collections::HashSet<u64> = crate::moe_gemm_activities(capture)
            .iter()
            .zip(capture.activities())
            .filter(|(m, _)| **m)
            .map(|(_, a)| a.source_index)
            .collect();
        if !moe.is_empty() {
            push(
                CauseKey::MoeGemm,
                None,
                on_critical(&|a| moe.contains(&a.source_index)),
            );
        }
        // The class a compute-bound verdict names, where no key above holds it.
        if let crate::Diagnosis::ComputeBound { class } = r.diagnosis
            && COMPUTE_CLASSES.contains(&class)
        {
            push(
                CauseKey::Compute(class),
                None,
                on_critical(&|a| a.class == class && !moe.contains(&a.source_index)),
            );
        }
    }
    let bounding = bounding_cause(r, &out);
    let leads = |c: &Cause| Some(c.key) == bounding;
    out.sort_by(|a, b| {
        leads(b)
            .cmp(&leads(a))
            .then(b.time.cmp(&a.time))
            .then(a.key.cmp(&b.key))
    });
    out
}

/// The cause that holds what the verdict ([`crate::Diagnosis`]) says bounds the step,
/// among `causes` (those of [`causes`]): a compute-bound verdict's class
/// ([`CauseKey::Elementwise`] for elementwise and normalisation, [`CauseKey::Layout`],
/// [`CauseKey::MoeGemm`] for GEMM where MoE GEMMs hold more of the critical stream than
/// the other GEMMs, else [`CauseKey::Compute`]; a collective or copy class as that GPU's
/// exposed time); copy-bound and collective-bound: the critical GPU's exposed copies or
/// collectives; host-bound: its sub-cause; blocked in synchronisation: the sync-call
/// gaps; waiting on a dependency: the stream or event gaps. `None` for mixed and "cannot
/// tell", which name no single cause. [`causes`] ranks it first, so the ranked causes
/// never contradict the verdict.
pub fn bounding_cause(r: &CaptureAnalysis, causes: &[Cause]) -> Option<CauseKey> {
    use crate::Diagnosis as D;
    // The critical GPU's position among the capture's GPUs, as the per-GPU keys count.
    let gpu = || {
        let crit = r.critical_stream()?.device;
        let mut devices: Vec<i64> = r.devices.iter().map(|d| d.device).collect();
        devices.sort_unstable();
        devices.iter().position(|&d| d == crit)
    };
    let time = |k: CauseKey| {
        causes
            .iter()
            .find(|c| c.key == k)
            .map_or(Nanos::ZERO, |c| c.time)
    };
    Some(match r.diagnosis {
        D::ComputeBound { class } => match class {
            KernelClass::Elementwise | KernelClass::Norm => CauseKey::Elementwise,
            KernelClass::Layout => CauseKey::Layout,
            KernelClass::Collective(_) => CauseKey::ExposedCollective { gpu: gpu()? },
            KernelClass::Memcpy(_) => CauseKey::ExposedMemcpy { gpu: gpu()? },
            KernelClass::Gemm
                if time(CauseKey::MoeGemm) > time(CauseKey::Compute(KernelClass::Gemm)) =>
            {
                CauseKey::MoeGemm
            }
            c => CauseKey::Compute(c),
        },
        D::CopyBound => CauseKey::ExposedMemcpy { gpu: gpu()? },
        D::CollectiveBound => CauseKey::ExposedCollective { gpu: gpu()? },
        D::HostBound { cause } => CauseKey::Host(cause),
        D::HostSync => CauseKey::Gap(GapCause::SyncCall),
        D::DependencyWait => CauseKey::Gap(GapCause::StreamOrEvent),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_reads_back() {
        let keys = [
            CauseKey::Gap(GapCause::HostNotLaunched),
            CauseKey::Gap(GapCause::StreamOrEvent),
            CauseKey::Gap(GapCause::SyncCall),
            CauseKey::Gap(GapCause::Unknown),
            CauseKey::Host(HostCause::Allocator),
            CauseKey::Host(HostCause::NothingRecorded),
            CauseKey::ExposedCollective { gpu: 3 },
            CauseKey::ExposedMemcpy { gpu: 0 },
            CauseKey::Layout,
            CauseKey::Elementwise,
            CauseKey::EagerAttention,
            CauseKey::MoeGemm,
            CauseKey::Compute(KernelClass::Gemm),
            CauseKey::Compute(KernelClass::Other),
        ];
        for k in keys {
            assert_eq!(CauseKey::from_code(&k.code()), Some(k), "{}", k.code());
        }
        for bad in [
            "",
            "gap:",
            "exposed-collective:x",
            "exposed-memcpy:-1",
            "layouts",
            "gap:host-not-launched:",
            "gap:host-not-launched:alloc",
            "compute:",
            "compute:elementwise",
            "compute:collective",
        ] {
            assert_eq!(CauseKey::from_code(bad), None, "{bad}");
        }
    }
}
