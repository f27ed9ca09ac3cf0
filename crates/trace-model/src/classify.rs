//! The one kernel-classification table of the workspace.
//!
//! Classification is by name, first match wins, case-insensitive. The patterns cover
//! NVIDIA (cuBLAS/cuBLASLt/CUTLASS/nvjet GEMMs, flash/cuDNN/xformers attention, NCCL)
//! and AMD (rocBLAS/hipBLASLt `Cijk_*`, Composable Kernel, aiter, RCCL) kernels, plus
//! PyTorch's ATen kernels and XLA's fusion names.

use crate::MemcpyDirection;

/// Collective communication kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CollectiveKind {
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    Broadcast,
    Reduce,
    SendRecv,
    Other,
}

impl CollectiveKind {
    pub fn label(self) -> &'static str {
        match self {
            CollectiveKind::AllReduce => "all-reduce",
            CollectiveKind::AllGather => "all-gather",
            CollectiveKind::ReduceScatter => "reduce-scatter",
            CollectiveKind::AllToAll => "all-to-all",
            CollectiveKind::Broadcast => "broadcast",
            CollectiveKind::Reduce => "reduce",
            CollectiveKind::SendRecv => "send/recv",
            CollectiveKind::Other => "other collective",
        }
    }
}

/// What a GPU activity does, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KernelClass {
    /// Matrix multiplication (library or generated GEMM).
    Gemm,
    /// Convolution (implicit-GEMM and cuDNN/MIOpen kernels).
    Convolution,
    /// Fused attention (flash, memory-efficient, cuDNN, CK/aiter FMHA).
    Attention,
    /// Elementwise, normalization and activation kernels.
    Elementwise,
    /// Reductions, softmax, scans.
    Reduction,
    /// Collective communication (NCCL/RCCL).
    Collective(CollectiveKind),
    /// Memory copy.
    Memcpy(MemcpyDirection),
    /// Memory set.
    Memset,
    /// Anything else.
    Other,
}

impl KernelClass {
    pub fn label(self) -> &'static str {
        match self {
            KernelClass::Gemm => "GEMM",
            KernelClass::Convolution => "convolution",
            KernelClass::Attention => "attention",
            KernelClass::Elementwise => "elementwise/norm/activation",
            KernelClass::Reduction => "reduction",
            KernelClass::Collective(k) => k.label(),
            KernelClass::Memcpy(_) => "memcpy",
            KernelClass::Memset => "memset",
            KernelClass::Other => "other",
        }
    }

    pub fn is_collective(self) -> bool {
        matches!(self, KernelClass::Collective(_))
    }

    /// Compute work: kernels that are not collectives, copies or sets.
    pub fn is_compute(self) -> bool {
        !matches!(
            self,
            KernelClass::Collective(_) | KernelClass::Memcpy(_) | KernelClass::Memset
        )
    }
}

/// Patterns are lower-case substrings; order matters (first match wins).
const COLLECTIVE: &[&str] = &[
    "nccl",
    "rccl",
    "msccl",
    "cross_device_reduce",
    "all_reduce_kernel",
];
const ATTENTION: &[&str] = &[
    "flash",
    "fmha",
    "attn",
    "attention",
    "cutlassf",
    "cutlassb",
    "mem_efficient",
    "sdpa",
    "mha_",
    "_mha",
    "paged_attention",
    "unified_attention",
];
const CONVOLUTION: &[&str] = &[
    "conv2d",
    "conv3d",
    "convolution",
    "implicit_gemm",
    "implicit_convolve",
    "wgrad",
    "dgrad",
    "miopen",
    "igemm",
    "cudnn::detail::",
];
const GEMM: &[&str] = &[
    "gemm",
    "cublas",
    "cutlass",
    "nvjet",
    "cijk_",
    "matmul",
    "_mm_",
    "xmma",
    "hgemm",
    "sgemm",
    "dgemm",
    "wmma",
    "ck::device_gemm",
    "splitk",
    "triton_mm",
    "dot_general",
    "__dot",
    "cublaslt",
];
const REDUCTION: &[&str] = &[
    "reduce",
    "reduction",
    "softmax",
    "scan",
    "welford",
    "argmax",
    "argmin",
    "topk",
    "sort",
    "cumsum",
    "mean",
    "_sum",
];
const ELEMENTWISE: &[&str] = &[
    "elementwise",
    "element_wise",
    "norm",
    "rms",
    "relu",
    "gelu",
    "silu",
    "swiglu",
    "sigmoid",
    "tanh",
    "activation",
    "act_and_mul",
    "dropout",
    "rotary",
    "rope",
    "fill",
    "copy",
    "cat",
    "index",
    "gather",
    "scatter",
    "embedding",
    "adam",
    "multi_tensor_apply",
    "loop_",
    "fusion",
    "bn_fw",
    "bn_bw",
    "add",
    "mul",
    "exp",
    "sqrt",
    "cast",
    "convert",
    "transpose",
];

/// Classifies a GPU kernel by name. Memcpy and memset activities should use
/// [`memcpy_direction`] / [`KernelClass::Memset`] from their category instead; this
/// function recognises them by name too, for formats that have no category.
pub fn classify_kernel(name: &str) -> KernelClass {
    let lower = name.to_ascii_lowercase();
    let has = |patterns: &[&str]| patterns.iter().any(|p| lower.contains(p));
    if lower.starts_with("memcpy") || lower.contains("copybuffer") && lower.contains("rocclr") {
        return KernelClass::Memcpy(memcpy_direction(name));
    }
    if lower.starts_with("memset") || lower.contains("fillbuffer") && lower.contains("rocclr") {
        return KernelClass::Memset;
    }
    if has(COLLECTIVE) {
        return KernelClass::Collective(collective_kind(&lower));
    }
    if has(ATTENTION) {
        return KernelClass::Attention;
    }
    if has(CONVOLUTION) {
        return KernelClass::Convolution;
    }
    if has(GEMM) {
        return KernelClass::Gemm;
    }
    if has(REDUCTION) {
        return KernelClass::Reduction;
    }
    if has(ELEMENTWISE) {
        return KernelClass::Elementwise;
    }
    KernelClass::Other
}

fn collective_kind(lower: &str) -> CollectiveKind {
    let squashed: String = lower.chars().filter(|c| *c != '_' && *c != '-').collect();
    if squashed.contains("allreduce") || squashed.contains("crossdevicereduce") {
        CollectiveKind::AllReduce
    } else if squashed.contains("allgather") {
        CollectiveKind::AllGather
    } else if squashed.contains("reducescatter") {
        CollectiveKind::ReduceScatter
    } else if squashed.contains("alltoall") {
        CollectiveKind::AllToAll
    } else if squashed.contains("broadcast") {
        CollectiveKind::Broadcast
    } else if squashed.contains("sendrecv")
        || squashed.contains("send")
        || squashed.contains("recv")
    {
        CollectiveKind::SendRecv
    } else if squashed.contains("reduce") {
        CollectiveKind::Reduce
    } else {
        CollectiveKind::Other
    }
}

/// Whether a host API call launches a whole CUDA/HIP graph (`cudaGraphLaunch`,
/// `hipGraphLaunch`, `cuGraphLaunch`): every kernel of the graph shares its correlation id.
pub fn is_graph_launch_api(name: &str) -> bool {
    name.contains("GraphLaunch")
}

/// Memcpy direction from a Kineto name (`Memcpy HtoD (Pageable -> Device)`), a CUDA/HIP
/// API name (`cudaMemcpyDtoHAsync`) or XProf's `memcpy_details` (`kind:HtoD`).
pub fn memcpy_direction(text: &str) -> MemcpyDirection {
    let t = text.to_ascii_lowercase();
    if t.contains("htod") || t.contains("host -> device") || t.contains("hosttodevice") {
        MemcpyDirection::HostToDevice
    } else if t.contains("dtoh") || t.contains("device -> host") || t.contains("devicetohost") {
        MemcpyDirection::DeviceToHost
    } else if t.contains("dtod") || t.contains("device -> device") || t.contains("devicetodevice") {
        MemcpyDirection::DeviceToDevice
    } else if t.contains("ptop") || t.contains("peer") {
        MemcpyDirection::PeerToPeer
    } else if t.contains("htoh") || t.contains("host -> host") {
        MemcpyDirection::HostToHost
    } else {
        MemcpyDirection::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, expect: KernelClass) {
        assert_eq!(classify_kernel(name), expect, "{name}");
    }

    #[test]
    fn nvidia_names() {
        check("volta_sgemm_128x64_nn", KernelClass::Gemm);
        check(
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
            KernelClass::Gemm,
        );
        check(
            "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN",
            KernelClass::Gemm,
        );
        check(
            "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)",
            KernelClass::Gemm,
        );
        check(
            "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>(Flash_fwd_params)",
            KernelClass::Attention,
        );
        check(
            "fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel)",
            KernelClass::Attention,
        );
        check(
            "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
            KernelClass::Collective(CollectiveKind::AllReduce),
        );
        check(
            "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            KernelClass::Collective(CollectiveKind::ReduceScatter),
        );
        check(
            "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
            KernelClass::Collective(CollectiveKind::SendRecv),
        );
        check(
            "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            KernelClass::Collective(CollectiveKind::AllGather),
        );
        check(
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>()",
            KernelClass::Elementwise,
        );
        check(
            "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>()",
            KernelClass::Reduction,
        );
        check(
            "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 32, true, 1>(float)",
            KernelClass::Elementwise,
        );
        check(
            "void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1>()",
            KernelClass::Convolution,
        );
    }

    #[test]
    fn amd_names() {
        check(
            "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT256x128x64_MI16x16x1_SN",
            KernelClass::Gemm,
        );
        check("attn_fwd", KernelClass::Attention);
        check(
            "ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)",
            KernelClass::Collective(CollectiveKind::Other),
        );
        check(
            "__amd_rocclr_copyBuffer.kd",
            KernelClass::Memcpy(MemcpyDirection::Unknown),
        );
        check("__amd_rocclr_fillBufferAligned.kd", KernelClass::Memset);
        check("aiter::fmha_fwd_hd128_bf16_causal", KernelClass::Attention);
    }

    #[test]
    fn copies() {
        check(
            "Memcpy HtoD (Pageable -> Device)",
            KernelClass::Memcpy(MemcpyDirection::HostToDevice),
        );
        check(
            "Memcpy DtoD (Device -> Device)",
            KernelClass::Memcpy(MemcpyDirection::DeviceToDevice),
        );
        check("Memset (Device)", KernelClass::Memset);
        assert_eq!(
            memcpy_direction("kind:DtoH size:4 dest:1"),
            MemcpyDirection::DeviceToHost
        );
    }
}
