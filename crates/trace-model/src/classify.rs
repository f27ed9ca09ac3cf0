//! The workspace's kernel-classification table: every analysis classes GPU activities by it.
//! (Two older name tables stay on purpose, to reproduce the original scripts' outputs: the
//! original script's bucket rules in `analysis` under `--compat`, and the original
//! compaction script's lane groups in `lanes`.)
//!
//! Classification is by name, case-insensitive, family by family in a fixed order, on the
//! kernel's base name (template arguments and parameter lists decide nothing). The
//! families cover NVIDIA (cuBLAS/cuBLASLt/CUTLASS/nvjet and block-scaled GEMMs, cuDNN
//! convolutions, flash/cuDNN/FlashInfer/TensorRT-LLM attention, NCCL, symmetric-memory and
//! custom all-reduce, expert-parallel dispatch/combine) and AMD (rocBLAS/hipBLASLt
//! `Cijk_*`, MIOpen and Composable Kernel convolutions, CK/aiter attention, RCCL) kernels,
//! MoE GEMMs and routing, PyTorch's ATen and Inductor kernels, and XLA's fusion names.
//! `testdata/classify/kernels.tsv` is the corpus it is tested against.

use crate::MemcpyDirection;

/// Collective communication kind; serde writes it in snake case (`all_reduce`,
/// `send_recv`, `dispatch`), [`CollectiveKind::label`] in words.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CollectiveKind {
    /// All-reduce.
    AllReduce,
    /// All-gather.
    AllGather,
    /// Reduce-scatter.
    ReduceScatter,
    /// All-to-all.
    AllToAll,
    /// Broadcast.
    Broadcast,
    /// Reduce to one rank.
    Reduce,
    /// Point-to-point send or receive.
    SendRecv,
    /// Expert-parallel token dispatch (DeepEP-style all-to-all before the experts).
    Dispatch,
    /// Expert-parallel combine (the all-to-all that brings expert outputs back).
    Combine,
    /// A collective kernel whose name does not say which.
    Other,
}

impl CollectiveKind {
    /// The kind in words (`all-reduce`, `EP dispatch`, `other collective`).
    pub fn label(self) -> &'static str {
        match self {
            CollectiveKind::AllReduce => "all-reduce",
            CollectiveKind::AllGather => "all-gather",
            CollectiveKind::ReduceScatter => "reduce-scatter",
            CollectiveKind::AllToAll => "all-to-all",
            CollectiveKind::Broadcast => "broadcast",
            CollectiveKind::Reduce => "reduce",
            CollectiveKind::SendRecv => "send/recv",
            CollectiveKind::Dispatch => "EP dispatch",
            CollectiveKind::Combine => "EP combine",
            CollectiveKind::Other => "other collective",
        }
    }
}

/// What a GPU activity does, by its name (serde: snake case, `"gemm"`,
/// `{"collective": "all_reduce"}`, `{"memcpy": "host_to_device"}`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum KernelClass {
    /// Matrix multiplication (library or generated GEMM).
    Gemm,
    /// Convolution (implicit-GEMM and cuDNN/MIOpen kernels).
    Convolution,
    /// Fused attention (flash, memory-efficient, cuDNN, CK/aiter FMHA).
    Attention,
    /// Elementwise and activation kernels (casts, copies, index/gather, RNG, optimizer
    /// steps, KV-cache writes).
    Elementwise,
    /// Normalization: RMSNorm, LayerNorm, GroupNorm, BatchNorm forward and backward,
    /// with their statistics and gamma/beta gradient helpers.
    Norm,
    /// Layout transposes: NCHW↔NHWC conversions, batched transposes, XLA transpose
    /// fusions, im2col/col2im; layout work done for a convolution or GEMM.
    Layout,
    /// Reductions, softmax, scans.
    Reduction,
    /// Communication: collectives of any library (NCCL/RCCL/MSCCL, symmetric memory,
    /// custom all-reduce) and expert-parallel dispatch/combine.
    Collective(CollectiveKind),
    /// Memory copy.
    Memcpy(MemcpyDirection),
    /// Memory set.
    Memset,
    /// Anything else.
    Other,
}

impl KernelClass {
    /// The class in words for reports (`GEMM`, `elementwise/norm/activation`, and the
    /// collective's kind for collectives).
    pub fn label(self) -> &'static str {
        match self {
            KernelClass::Gemm => "GEMM",
            KernelClass::Convolution => "convolution",
            KernelClass::Attention => "attention",
            KernelClass::Elementwise => "elementwise/activation",
            KernelClass::Norm => "normalization",
            KernelClass::Layout => "layout transpose",
            KernelClass::Reduction => "reduction",
            KernelClass::Collective(k) => k.label(),
            KernelClass::Memcpy(_) => "memcpy",
            KernelClass::Memset => "memset",
            KernelClass::Other => "other",
        }
    }

    /// One lower-case word per class (`gemm`, `convolution`, …, `collective`, `memcpy`,
    /// `memset`, `other`): the `class` column of CSV outputs and the key of colours.
    pub fn word(self) -> &'static str {
        match self {
            KernelClass::Gemm => "gemm",
            KernelClass::Convolution => "convolution",
            KernelClass::Attention => "attention",
            KernelClass::Elementwise => "elementwise",
            KernelClass::Norm => "norm",
            KernelClass::Layout => "layout",
            KernelClass::Reduction => "reduction",
            KernelClass::Collective(_) => "collective",
            KernelClass::Memcpy(_) => "memcpy",
            KernelClass::Memset => "memset",
            KernelClass::Other => "other",
        }
    }

    /// Communication kernels.
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

/// One way a pattern can match a name (all patterns are lower case).
#[derive(Clone, Copy)]
enum Pat {
    /// Anywhere in the text.
    Sub(&'static str),
    /// At the start of the text.
    Prefix(&'static str),
    /// A whole token: a maximal run of ASCII letters and digits, optionally followed by
    /// digits (`mul` matches `mul` and `mul2`, not `multi`).
    Tok(&'static str),
    /// Anywhere in the text, when the second text is not: cuDNN's `…_dgrad_…` kernels
    /// are convolutions, cuBLAS's `…gemm…_dgrad` a linear layer's input gradient.
    SubWithout(&'static str, &'static str),
}

use Pat::{Prefix, Sub, SubWithout, Tok};

impl Pat {
    fn matches(self, text: &str) -> bool {
        match self {
            Sub(p) => text.contains(p),
            SubWithout(p, q) => text.contains(p) && !text.contains(q),
            Prefix(p) => text.starts_with(p),
            Tok(p) => text.split(|c: char| !c.is_ascii_alphanumeric()).any(|t| {
                t.strip_prefix(p)
                    .is_some_and(|rest| rest.bytes().all(|b| b.is_ascii_digit()))
            }),
        }
    }
}

/// The families, in the order they are tried (first match wins); each is matched on a
/// kernel's *base name* (see [`base_name`]) so that words inside template arguments and
/// parameter lists (`element_wise::PassThrough`, `RMSNorm` in a type name) decide nothing.
///
/// The order is the point of the table:
/// - Inductor's prefixes come first: `triton_poi_fused_convolution_relu` is a pointwise
///   epilogue, not a convolution.
/// - Communication before everything: `cross_device_reduce` and `all_gather` are not
///   reductions or gathers, and expert-parallel `dispatch`/`combine` kernels are not compute.
/// - MoE routing, sorting and finalize before GEMMs (they sit in MoE namespaces).
/// - KV-cache writes before attention (`reshape_and_cache_flash` is a copy).
/// - Attention before convolution and GEMM (flash kernels name their GEMM tiles).
/// - Convolution before GEMM (`implicit_gemm`, `igemm_fwd`).
/// - GEMM before reduction and elementwise: an epilogue (`_swiGlu_`, `_gelu_`, `_bias_`)
///   or a split-K reduction keeps a GEMM a GEMM.
/// - Reduction before elementwise (`reduce_kernel<…NormOps…>`).
const FAMILIES: &[(Family, &[Pat])] = &[
    (
        Family::Memcpy,
        &[
            Prefix("memcpy"),
            Sub("rocclr_copybuffer"),
            Sub("copydevicetodevice"),
            Sub("copydevicetohost"),
            Sub("copyhosttodevice"),
        ],
    ),
    (
        Family::Memset,
        &[Prefix("memset"), Sub("rocclr_fillbuffer")],
    ),
    // TorchInductor: pointwise, reduction and persistent-reduction kernels by prefix.
    (
        Family::Class(KernelClass::Elementwise),
        &[Prefix("triton_poi_")],
    ),
    (
        Family::Class(KernelClass::Reduction),
        &[Prefix("triton_red_"), Prefix("triton_per_")],
    ),
    (
        Family::Collective,
        &[
            Sub("nccl"),
            Sub("rccl"),
            Sub("msccl"),
            // Expert-parallel dispatch/combine (DeepEP and alike).
            Sub("ep::internode"),
            Sub("ep::intranode"),
            Sub("internode_ll"),
            Sub("ep::ll::"),
            Sub("notify_dispatch"),
            Sub("epdispatch"),
            Sub("epcombine"),
            Sub("notify_combine"),
            Sub("cached_notify"),
            Sub("nvshmem"),
            Sub("pplx"),
            // Symmetric-memory and custom all-reduce.
            Sub("multimem_"),
            Sub("one_shot_all_reduce"),
            Sub("two_shot_"),
            Sub("symm_mem"),
            Sub("cross_device_reduce"),
            Sub("quickreduce"),
            Sub("quick_all_reduce"),
            Sub("lamport"),
            Sub("custom_ar"),
            Sub("allreduce"),
            Sub("all_reduce"),
            Sub("allgather"),
            Sub("all_gather"),
            Sub("reducescatter"),
            Sub("reduce_scatter"),
            Sub("alltoall"),
            Sub("all_to_all"),
        ],
    ),
    (
        Family::Class(KernelClass::Reduction),
        &[
            Sub("moe::dev::routing"),
            Sub("routing"),
            Sub("dispatch_layout"),
            Prefix("_finalize"),
            Prefix("finalize"),
            Sub("moe_align"),
            Sub("moe::dev::finalize"),
            Sub("finalizemoe"),
            Sub("finalize_moe"),
            Sub("moe_sum"),
            Sub("topk_softmax"),
            Sub("topkgating"),
            Sub("topk_gating"),
            Sub("count_and_sort"),
            Sub("grouped_topk"),
        ],
    ),
    // Layout transposes (cuDNN's NCHW/NHWC conversions, MIOpen's and CK's batched
    // transposes, XLA transpose fusions, im2col) before everything that would call them
    // elementwise or a convolution.
    (
        Family::Class(KernelClass::Layout),
        &[
            Sub("tonhwc"),
            Sub("tonchw"),
            Sub("nchw2nhwc"),
            Sub("nhwc2nchw"),
            Sub("batched_transpose"),
            Sub("batchedtranspose"),
            Sub("transpose_fusion"),
            Sub("im2col"),
            Sub("im3d2col"),
            Sub("col2im"),
            Sub("vol2col"),
            Sub("col2vol"),
        ],
    ),
    (
        Family::Class(KernelClass::Elementwise),
        &[
            // KV-cache writes (`reshape_and_cache_flash` is a copy, not attention).
            Sub("store_kvcache"),
            Sub("reshape_and_cache"),
            Sub("concat_and_cache"),
            Sub("updatekvcache"),
            Sub("update_kv_cache"),
            // MoE token permutation and MIOpen tensor ops (`SubTensorOpWithScalar`).
            Sub("expandinputrows"),
            Sub("moe_permute"),
            Sub("moe_unpermute"),
            Sub("subtensorop"),
            Sub("optensor"),
            Prefix("op1dtensor"),
            Prefix("op2dtensor"),
            Prefix("op3dtensor"),
            Prefix("op4dtensor"),
            Prefix("op5dtensor"),
            // Element-by-element searches (not sorts).
            Sub("searchsorted"),
            Sub("bucketize"),
            // ggml/llama.cpp rotary embeddings (`rope_norm`, `rope_neox`: not a norm).
            Prefix("rope_"),
        ],
    ),
    (
        Family::Class(KernelClass::Attention),
        &[
            Sub("flash_fwd"),
            Sub("flash_bwd"),
            Sub("flashattn"),
            Sub("flash_attn"),
            // SageAttention (quantised attention) and its Q/K quantisation.
            Sub("sage_fwd"),
            Sub("sage_bwd"),
            Sub("sage_quant"),
            Sub("sageattn"),
            Sub("flash::"),
            Sub("flashmla"),
            Sub("flash_mla"),
            Sub("triton_flash"),
            Sub("flash_decod"),
            Sub("fmha"),
            Sub("attn"),
            Sub("attention"),
            Sub("sdpa"),
            Sub("mha_"),
            Sub("_mha"),
            Sub("mmha"),
            Sub("xqa"),
            Sub("batchprefill"),
            Sub("batchdecode"),
            Sub("batchmla"),
            Sub("cutlassf"),
            Sub("cutlassb"),
            Sub("mem_efficient"),
            Sub("memefficient"),
            // Linear/recurrent attention (gated delta rule; ggml's `gated_delta_net`).
            Sub("delta_rule"),
            Sub("gated_delta_net"),
        ],
    ),
    (
        Family::Class(KernelClass::Convolution),
        &[
            Sub("convolution"),
            Sub("convolve"),
            Sub("conv1d"),
            Sub("conv2d"),
            Sub("conv3d"),
            Sub("conv_fwd"),
            // CK's weight-gradient convolution as a batched GEMM (MIOpen's wrw solver).
            Sub("xdlops_bwd_weight"),
            Sub("conv_bwd"),
            Sub("conv_wrw"),
            Sub("convfwd"),
            Sub("convbwd"),
            Sub("grouped_conv"),
            Sub("groupedconv"),
            Sub("deviceconv"),
            Sub("naive_conv"),
            Prefix("igemm_"),
            Sub("miopenconv"),
            Sub("miopencv"),
            Sub("miopengcnasmconv"),
            Sub("asmconv"),
            Sub("scudnn"),
            Sub("hcudnn"),
            Prefix("fft2d_"),
            Prefix("fft3d_"),
            Sub("implicit_gemm"),
            Sub("implicitgemm"),
            SubWithout("fprop", "gemm"),
            SubWithout("dgrad", "gemm"),
            SubWithout("wgrad", "gemm"),
            Sub("winograd"),
            Sub("im2col"),
            Sub("im3d2col"),
            Sub("col2im"),
            Sub("depthwise"),
            Tok("conv"),
        ],
    ),
    (
        Family::Class(KernelClass::Gemm),
        &[
            Sub("gemm"),
            Sub("gemv"),
            Sub("cublas"),
            Sub("cutlass"),
            Sub("nvjet"),
            Prefix("cijk_"),
            Sub("hipblaslt"),
            Sub("rocblas"),
            Sub("matmul"),
            Sub("_mm_"),
            Prefix("bmm_"),
            Sub("scaled_mm"),
            Sub("grouped_mm"),
            Sub("wmma"),
            Sub("xmma"),
            Sub("fused_moe"),
            Sub("moe_stage"),
            // ggml/llama.cpp quantised matmuls (`mul_mat_q`, `mul_mat_vec_q`, `mul_mat_f`,
            // `dequantize_mul_mat_vec`): GEMM/GEMV on quantised weights.
            Prefix("mul_mat"),
            Sub("dequantize_mul_mat"),
            Sub("splitk"),
            Sub("triton_mm"),
            Tok("mm"),
            Tok("bmm"),
            Tok("addmm"),
            Tok("baddbmm"),
            Tok("dot"),
            Sub("dot_general"),
            Sub("__dot"),
        ],
    ),
    // Normalization before reductions and elementwise: its statistics (`welford`,
    // moments) and gradients are the norm's own; `normal` (RNG) is not a norm.
    (
        Family::Class(KernelClass::Norm),
        &[
            SubWithout("norm", "normal"),
            Tok("rms"),
            Sub("gammabeta"),
            Sub("rowwisemoments"),
            Sub("computeinternalgradients"),
            // TensorRT Myelin fusions are named by their ops: a mean (of squares), the
            // epsilon added, its square root: RMSNorm/LayerNorm
            // (`__myl_CastMulMeanAddSqrtDivMulMul`).
            Sub("meanaddsqrt"),
        ],
    ),
    (
        Family::Class(KernelClass::Reduction),
        &[
            Sub("reduce"),
            Sub("reduction"),
            Sub("softmax"),
            // ggml's `soft_max_f32`.
            Sub("soft_max"),
            Sub("scan"),
            Sub("welford"),
            Sub("argmax"),
            Sub("argmin"),
            Sub("topk"),
            Sub("sort"),
            Sub("cumsum"),
            Sub("cumprod"),
            Sub("logsumexp"),
            Sub("nll_loss"),
            Sub("cross_entropy"),
            Sub("histogram"),
            Tok("pool"),
            Sub("pooling"),
            Sub("_sum"),
            Tok("sum"),
            Tok("mean"),
            Tok("max"),
            Tok("min"),
        ],
    ),
    (
        Family::Class(KernelClass::Elementwise),
        &[
            Sub("elementwise"),
            Sub("element_wise"),
            Sub("pointwise"),
            Tok("rng"),
            Tok("pow"),
            Sub("relu"),
            Sub("gelu"),
            Sub("silu"),
            Sub("swiglu"),
            Sub("sigmoid"),
            Sub("tanh"),
            Sub("activation"),
            Sub("act_and_mul"),
            Sub("dropout"),
            Sub("rotary"),
            Tok("rope"),
            Sub("fill"),
            Sub("copy"),
            Tok("cat"),
            Sub("catarray"),
            Sub("concat"),
            Sub("index"),
            Sub("gather"),
            Sub("scatter"),
            Sub("embedding"),
            Sub("adam"),
            Sub("multi_tensor_apply"),
            Sub("foreach"),
            Prefix("loop_"),
            Prefix("wrapped_"),
            Sub("fusion"),
            Sub("bn_fw"),
            Sub("bn_bw"),
            Tok("add"),
            Tok("mul"),
            Tok("div"),
            Tok("sub"),
            Tok("exp"),
            Sub("sqrt"),
            Tok("cast"),
            Sub("convert"),
            Sub("to_dense"),
            Sub("transpose"),
            Sub("permute"),
            Sub("quant"),
            Sub("distribution"),
            Sub("philox"),
            Sub("curand"),
            Tok("where"),
            Sub("clamp"),
            Sub("broadcast"),
            Sub("functor"),
            // ggml/llama.cpp: broadcast binary ops, row gathers/scatters, unary ops,
            // scalar copies, scaling.
            Sub("bin_bcast"),
            Sub("get_rows"),
            Sub("set_rows"),
            Sub("unary"),
            Prefix("cpy_"),
            Prefix("scale_f"),
        ],
    ),
    // Whatever else cuDNN launches (offset tables, helpers) serves a convolution.
    (
        Family::Class(KernelClass::Convolution),
        &[Sub("cudnn"), Sub("cask_")],
    ),
];

/// What a row of [`FAMILIES`] decides.
#[derive(Clone, Copy)]
enum Family {
    Class(KernelClass),
    Collective,
    Memcpy,
    Memset,
}

/// Names of generic launch wrappers whose meaning is in their template arguments
/// (`cutlass::Kernel2<cutlass_80_tensorop_s1688gemm…>`, FlashAttention-3's
/// `cutlass::device_kernel<flash::FlashAttnFwdSm90…>`, `ck_tile::kentry<…FmhaFwdKernel…>`).
/// A wrapper is recognised by its last name component.
const WRAPPERS: &[&str] = &["kernel", "kernel2", "device_kernel", "kentry"];

/// CuTe DSL names its kernels `kernel_cutlass_kernel_<module>_<function>_…`: the meaning
/// is in the rest of the name.
const CUTE_DSL_PREFIX: &str = "kernel_cutlass_kernel_";

/// Families that may be read from the whole name when the base name decided nothing:
/// words too specific to occur by accident inside a template argument.
const WHOLE_NAME: &[(KernelClass, &[Pat])] = &[
    (
        KernelClass::Attention,
        &[
            Sub("fmha"),
            Sub("flash_fwd"),
            Sub("flash_bwd"),
            Sub("flashattn"),
        ],
    ),
    (
        KernelClass::Convolution,
        &[
            Sub("implicit_gemm"),
            Sub("grouped_conv"),
            Sub("groupedconv"),
            Sub("convolution"),
        ],
    ),
    (
        KernelClass::Gemm,
        &[
            Sub("gemm"),
            Sub("cutlass"),
            Sub("cublas"),
            Sub("wmma"),
            Sub("xmma"),
        ],
    ),
];

/// Classifies a GPU kernel by name. Memcpy and memset activities should use
/// [`memcpy_direction`] / [`KernelClass::Memset`] from their category instead; this
/// function recognises them by name too, for formats that have no category.
///
/// The name is matched case-insensitively, family by family in a fixed order (see the
/// module source for the table and why its order is what it is), on the kernel's base
/// name: a demangled C++ signature `void ns::kernel<template args>(params)` is read as
/// `ns::kernel`. A generic launch wrapper (`cutlass::device_kernel`, `ck_tile::kentry`)
/// is classified by its template arguments instead, and a name whose base decides
/// nothing falls back to a few unambiguous words anywhere in it (`gemm`, `fmha`).
pub fn classify_kernel(name: &str) -> KernelClass {
    let lower = name.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix(CUTE_DSL_PREFIX) {
        return classify_base(rest, &lower).unwrap_or(KernelClass::Other);
    }
    let sig = Signature::parse(&lower);
    let class = if WRAPPERS.contains(&last_component(sig.base)) {
        sig.template_args()
            .find_map(|arg| classify_base(Signature::parse(arg).base, &lower))
            .or_else(|| sig.base.contains("cutlass").then_some(KernelClass::Gemm))
    } else {
        classify_base(sig.base, &lower)
    };
    if let Some(class) = class {
        // cuDNN's GEMM-shaped kernels are implicit-GEMM convolutions.
        return match class {
            KernelClass::Gemm if sig.base.contains("cudnn") => KernelClass::Convolution,
            class => class,
        };
    }
    WHOLE_NAME
        .iter()
        .find(|(_, pats)| pats.iter().any(|p| p.matches(&lower)))
        .map_or(KernelClass::Other, |(class, _)| *class)
}

/// The first family of [`FAMILIES`] that matches `base`; `full` is the whole lower-case
/// name, read for a copy's direction and a collective's kind.
///
/// The function's own name (the last `::` component) is tried first, then the qualified
/// name: `transformer_engine::fused_attn::populate_rng_state_kernel` is an RNG kernel,
/// while `deep_ep::intranode::dispatch` needs its namespace.
fn classify_base(base: &str, full: &str) -> Option<KernelClass> {
    let find = |text: &str| {
        FAMILIES
            .iter()
            .find(|(_, pats)| pats.iter().any(|p| p.matches(text)))
    };
    let (family, _) = find(last_component(base)).or_else(|| find(base))?;
    Some(match *family {
        Family::Class(class) => class,
        Family::Collective => KernelClass::Collective(collective_kind(full)),
        Family::Memcpy => KernelClass::Memcpy(memcpy_direction(full)),
        Family::Memset => KernelClass::Memset,
    })
}

/// The last `::` component of a qualified name.
fn last_component(base: &str) -> &str {
    base.rsplit("::").next().unwrap_or(base)
}

/// A lower-case kernel name split into its base name and template arguments.
struct Signature<'a> {
    /// The qualified name without return type, template arguments and parameters.
    base: &'a str,
    /// The text between the base name's `<` and its matching `>` (empty without one).
    template: &'a str,
}

impl<'a> Signature<'a> {
    fn parse(name: &'a str) -> Signature<'a> {
        let name = name.trim();
        let name = name.strip_prefix("void ").unwrap_or(name).trim_start();
        // The base name ends at the first `<` or `(` that does not open
        // `(anonymous namespace)`.
        let bytes = name.as_bytes();
        let mut end = name.len();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'(' if name[i..].starts_with("(anonymous namespace)") => {
                    i += "(anonymous namespace)".len();
                    continue;
                }
                b'<' if name[i..].starts_with("<unnamed>") => {
                    i += "<unnamed>".len();
                    continue;
                }
                b'<' | b'(' => {
                    end = i;
                    break;
                }
                _ => i += 1,
            }
        }
        let base = name[..end].trim();
        let template = if bytes.get(end) == Some(&b'<') {
            let mut depth = 0usize;
            let mut close = name.len();
            for (j, b) in name.bytes().enumerate().skip(end) {
                match b {
                    b'<' => depth += 1,
                    b'>' => {
                        depth -= 1;
                        if depth == 0 {
                            close = j;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            &name[end + 1..close]
        } else {
            ""
        };
        Signature { base, template }
    }

    /// The top-level template arguments, in order.
    fn template_args(&self) -> impl Iterator<Item = &'a str> {
        let t = self.template;
        let mut depth = 0i32;
        let mut start = 0;
        let mut out = Vec::new();
        for (i, b) in t.bytes().enumerate() {
            match b {
                b'<' | b'(' => depth += 1,
                b'>' | b')' => depth -= 1,
                b',' if depth == 0 => {
                    out.push(t[start..i].trim());
                    start = i + 1;
                }
                _ => {}
            }
        }
        if !t.is_empty() {
            out.push(t[start..].trim());
        }
        out.into_iter()
    }
}

/// The collective's kind from its (lower-case) name.
fn collective_kind(lower: &str) -> CollectiveKind {
    let squashed: String = lower.chars().filter(|c| *c != '_' && *c != '-').collect();
    let expert_parallel = [
        "epdispatch",
        "epcombine",
        "ep::",
        "internodell",
        "notifydispatch",
        "notifycombine",
        "cachednotify",
        "pplx",
        "nvshmem",
    ]
    .iter()
    .any(|p| squashed.contains(p));
    if expert_parallel && squashed.contains("dispatch") {
        CollectiveKind::Dispatch
    } else if expert_parallel && squashed.contains("combine") {
        CollectiveKind::Combine
    } else if squashed.contains("allreduce")
        || squashed.contains("crossdevicereduce")
        || squashed.contains("quickreduce")
        || squashed.contains("lamport")
        || squashed.contains("customar")
    {
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
    fn gradient_words_mean_convolution_only_without_gemm() {
        check(
            "sm80_xmma_dgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16",
            KernelClass::Convolution,
        );
        check(
            "void cutlass::Kernel<cutlass_tensorop_s1688wgrad_optimized_tf32_256x128_16x3_nhwc_align4>(Params)",
            KernelClass::Convolution,
        );
        check(
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_dgrad",
            KernelClass::Gemm,
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
