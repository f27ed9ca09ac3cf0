//! Semantic groups of GPU slices: classification, lane order and lane labels, for the
//! original script's name rules ([`Group`]) and for the workspace's kernel classes
//! ([`ClassGroup`]).

use serde::Serialize;
use trace_model::{CollectiveKind, KernelClass, classify_kernel};

/// Which rules group GPU slices into lanes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LaneGrouping {
    /// The original script's groups ([`Group`]): compute, symmetric-memory barrier, NCCL
    /// all-gather/reduce-scatter/all-reduce/other, memcpy, memset. Output identical to the
    /// reference.
    #[default]
    Original,
    /// The workspace's kernel classes ([`ClassGroup`], by `trace_model::classify_kernel`):
    /// GEMM, convolution, attention, elementwise, reduction, other, communication by
    /// collective kind (NCCL, RCCL, custom all-reduce, ... alike), memcpy, memset.
    Semantic,
}

impl LaneGrouping {
    /// The annotation tracks that represent a PP F/B block (the reference: the first
    /// compute lane's; here also: the first lane of every compute class).
    pub(crate) fn main_compute_tracks(self) -> Vec<String> {
        let labels = match self {
            LaneGrouping::Original => vec![Group::Compute.label().to_string()],
            LaneGrouping::Semantic => ClassGroup::COMPUTE.iter().map(|g| g.label()).collect(),
        };
        labels
            .iter()
            .flat_map(|l| [format!("{l} annotations"), format!("{l} 1 annotations")])
            .collect()
    }

    /// The annotation tracks that hold `PP:<stage>UNSHARD` spans (the first two
    /// all-gather lanes, as the reference).
    pub(crate) fn unshard_tracks(self) -> Vec<String> {
        let label = match self {
            LaneGrouping::Original => Group::NcclAllGather.label().to_string(),
            LaneGrouping::Semantic => ClassGroup::Communication(CollectiveKind::AllGather).label(),
        };
        ["", " 1", " 2"]
            .iter()
            .map(|n| format!("{label}{n} annotations"))
            .collect()
    }
}

/// Options of a compaction (and of each rank's compaction in a merge).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Config {
    /// Which rules group the slices.
    pub lanes: LaneGrouping,
}

/// The group of a slice under either grouping. Within one compaction all slices use the
/// same grouping, so the order between the two variants never matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum LaneGroup {
    Original(Group),
    Class(ClassGroup),
}

impl LaneGroup {
    pub fn classify(grouping: LaneGrouping, cat: &str, name: &str) -> LaneGroup {
        match grouping {
            LaneGrouping::Original => LaneGroup::Original(Group::classify(cat, name)),
            LaneGrouping::Semantic => LaneGroup::Class(ClassGroup::classify(cat, name)),
        }
    }

    /// The key used in summaries.
    pub fn key(self) -> String {
        match self {
            LaneGroup::Original(g) => g.key().to_string(),
            LaneGroup::Class(g) => g.key(),
        }
    }

    /// The lane label shown in Perfetto.
    pub fn label(self) -> String {
        match self {
            LaneGroup::Original(g) => g.label().to_string(),
            LaneGroup::Class(g) => g.label(),
        }
    }
}

/// A lane group by the workspace's kernel class. The declaration order is the lane order:
/// compute classes, then communication (by collective kind), then copies and sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ClassGroup {
    /// GEMM kernels.
    Gemm,
    /// Convolutions.
    Convolution,
    /// Attention kernels.
    Attention,
    /// Elementwise, norm and activation kernels.
    Elementwise,
    /// Reductions.
    Reduction,
    /// Kernels the table does not classify.
    Other,
    /// Every collective, whatever its library, by kind.
    Communication(CollectiveKind),
    /// Memory copies.
    Memcpy,
    /// Memory sets.
    Memset,
}

impl ClassGroup {
    /// The compute groups, whose first lanes are the main compute lanes of PP blocks.
    pub const COMPUTE: [ClassGroup; 6] = [
        ClassGroup::Gemm,
        ClassGroup::Convolution,
        ClassGroup::Attention,
        ClassGroup::Elementwise,
        ClassGroup::Reduction,
        ClassGroup::Other,
    ];

    /// Memcpy and memset by category (as the original does), everything else by
    /// `trace_model::classify_kernel` on the name.
    pub fn classify(cat: &str, name: &str) -> ClassGroup {
        if cat == "gpu_memcpy" {
            return ClassGroup::Memcpy;
        }
        if cat == "gpu_memset" {
            return ClassGroup::Memset;
        }
        match classify_kernel(name) {
            KernelClass::Gemm => ClassGroup::Gemm,
            KernelClass::Convolution => ClassGroup::Convolution,
            KernelClass::Attention => ClassGroup::Attention,
            // The original compaction script's lane groups know no norm or layout group.
            KernelClass::Elementwise | KernelClass::Norm | KernelClass::Layout => {
                ClassGroup::Elementwise
            }
            KernelClass::Reduction => ClassGroup::Reduction,
            KernelClass::Collective(kind) => ClassGroup::Communication(kind),
            KernelClass::Memcpy(_) => ClassGroup::Memcpy,
            KernelClass::Memset => ClassGroup::Memset,
            // `KernelClass::Other`, and classes trace-model adds later.
            _ => ClassGroup::Other,
        }
    }

    /// The key used in summaries (`gemm`, `communication_all_gather`, ...).
    pub fn key(self) -> String {
        match self {
            ClassGroup::Gemm => "gemm".to_string(),
            ClassGroup::Convolution => "convolution".to_string(),
            ClassGroup::Attention => "attention".to_string(),
            ClassGroup::Elementwise => "elementwise".to_string(),
            ClassGroup::Reduction => "reduction".to_string(),
            ClassGroup::Other => "other".to_string(),
            ClassGroup::Communication(kind) => {
                let kind: String = collective_label(kind)
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                    .collect();
                format!("communication_{kind}")
            }
            ClassGroup::Memcpy => "memcpy".to_string(),
            ClassGroup::Memset => "memset".to_string(),
        }
    }

    /// The lane label shown in Perfetto (`GEMM`, `Communication all-gather`, ...), in the
    /// style of the original's labels.
    pub fn label(self) -> String {
        match self {
            ClassGroup::Gemm => "GEMM".to_string(),
            ClassGroup::Convolution => "Convolution".to_string(),
            ClassGroup::Attention => "Attention".to_string(),
            ClassGroup::Elementwise => "Elementwise".to_string(),
            ClassGroup::Reduction => "Reduction".to_string(),
            ClassGroup::Other => "Other kernels".to_string(),
            ClassGroup::Communication(kind) => format!("Communication {}", collective_label(kind)),
            ClassGroup::Memcpy => "GPU memcpy".to_string(),
            ClassGroup::Memset => "GPU memset".to_string(),
        }
    }
}

/// The semantic group of a measured GPU slice. The declaration order is the lane order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Group {
    /// Compute kernels (anything not below).
    Compute,
    /// Symmetric-memory barrier kernels.
    SymmetricMemoryBarrier,
    /// NCCL all-gather.
    NcclAllGather,
    /// NCCL reduce-scatter.
    NcclReduceScatter,
    /// NCCL all-reduce.
    NcclAllReduce,
    /// Other NCCL kernels.
    NcclOther,
    /// Memory copies.
    Memcpy,
    /// Memory sets.
    Memset,
}

impl Group {
    /// Every group, in lane order.
    pub const ALL: [Group; 8] = [
        Group::Compute,
        Group::SymmetricMemoryBarrier,
        Group::NcclAllGather,
        Group::NcclReduceScatter,
        Group::NcclAllReduce,
        Group::NcclOther,
        Group::Memcpy,
        Group::Memset,
    ];

    /// Classifies a slice by its category and name; the order of the tests matters
    /// (memcpy/memset by category first, then NCCL kinds, then the barrier).
    pub fn classify(cat: &str, name: &str) -> Group {
        if cat == "gpu_memcpy" {
            return Group::Memcpy;
        }
        if cat == "gpu_memset" {
            return Group::Memset;
        }
        let name = name.to_lowercase();
        if name.contains("nccl") {
            return if name.contains("allgather") {
                Group::NcclAllGather
            } else if name.contains("reducescatter") {
                Group::NcclReduceScatter
            } else if name.contains("allreduce") {
                Group::NcclAllReduce
            } else {
                Group::NcclOther
            };
        }
        if name.contains("symmetric_memory") && name.contains("barrier") {
            return Group::SymmetricMemoryBarrier;
        }
        Group::Compute
    }

    /// The key used in summaries (`nccl_all_gather`, ...).
    pub fn key(self) -> &'static str {
        match self {
            Group::Compute => "compute",
            Group::SymmetricMemoryBarrier => "symmetric_memory_barrier",
            Group::NcclAllGather => "nccl_all_gather",
            Group::NcclReduceScatter => "nccl_reduce_scatter",
            Group::NcclAllReduce => "nccl_all_reduce",
            Group::NcclOther => "nccl_other",
            Group::Memcpy => "memcpy",
            Group::Memset => "memset",
        }
    }

    /// The lane label shown in Perfetto (`NCCL all-gather`, ...).
    pub fn label(self) -> &'static str {
        match self {
            Group::Compute => "Compute",
            Group::SymmetricMemoryBarrier => "Symmetric-memory barrier",
            Group::NcclAllGather => "NCCL all-gather",
            Group::NcclReduceScatter => "NCCL reduce-scatter",
            Group::NcclAllReduce => "NCCL all-reduce",
            Group::NcclOther => "NCCL other",
            Group::Memcpy => "GPU memcpy",
            Group::Memset => "GPU memset",
        }
    }
}

/// The table's label of a collective kind, but `other` for its catch-all (the lane label
/// already says communication).
fn collective_label(kind: CollectiveKind) -> &'static str {
    match kind {
        CollectiveKind::Other => "other",
        kind => kind.label(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(cat: &str, name: &str, expect: Group) {
        assert_eq!(Group::classify(cat, name), expect, "{cat} {name}");
    }

    #[test]
    fn classification_order() {
        check("gpu_memcpy", "Memcpy DtoD", Group::Memcpy);
        check("gpu_memset", "Memset", Group::Memset);
        check("gpu_memcpy", "ncclAllGather", Group::Memcpy);
        check(
            "kernel",
            "ncclDevKernel_AllGather_RING_LL",
            Group::NcclAllGather,
        );
        check(
            "kernel",
            "ncclKernel_ReduceScatter",
            Group::NcclReduceScatter,
        );
        check("kernel", "ncclKernel_AllReduce_RING", Group::NcclAllReduce);
        check("kernel", "ncclDevKernel_SendRecv", Group::NcclOther);
        check(
            "kernel",
            "symmetric_memory::barrier_kernel",
            Group::SymmetricMemoryBarrier,
        );
        check("Kernel", "sm90_gemm", Group::Compute);
        let mut sorted = Group::ALL;
        sorted.sort();
        assert_eq!(sorted, Group::ALL);
    }

    #[test]
    fn class_groups_keys_and_labels() {
        let check = |g: ClassGroup, key: &str, label: &str| {
            assert_eq!(
                (g.key().as_str(), g.label().as_str()),
                (key, label),
                "{g:?}"
            );
        };
        check(ClassGroup::Gemm, "gemm", "GEMM");
        check(ClassGroup::Other, "other", "Other kernels");
        let comm = |kind| ClassGroup::Communication(kind);
        check(
            comm(CollectiveKind::AllGather),
            "communication_all_gather",
            "Communication all-gather",
        );
        check(
            comm(CollectiveKind::SendRecv),
            "communication_send_recv",
            "Communication send/recv",
        );
        check(
            comm(CollectiveKind::Other),
            "communication_other",
            "Communication other",
        );
        assert_eq!(
            ClassGroup::classify("gpu_memcpy", "ncclKernel"),
            ClassGroup::Memcpy
        );
        assert_eq!(
            ClassGroup::classify("gpu_memset", "Memset"),
            ClassGroup::Memset
        );
        // Lane order: compute classes, then communication, then copies.
        let mut order = vec![ClassGroup::Memcpy, comm(CollectiveKind::AllReduce)];
        order.extend(ClassGroup::COMPUTE);
        order.sort();
        assert_eq!(order[..6], ClassGroup::COMPUTE);
        assert_eq!(
            order[6..],
            [comm(CollectiveKind::AllReduce), ClassGroup::Memcpy]
        );
    }
}
