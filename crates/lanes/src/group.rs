//! Semantic groups of GPU slices: classification, lane order and lane labels.

use serde::Serialize;

/// The semantic group of a measured GPU slice. The declaration order is the lane order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    Compute,
    SymmetricMemoryBarrier,
    NcclAllGather,
    NcclReduceScatter,
    NcclAllReduce,
    NcclOther,
    Memcpy,
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
}
