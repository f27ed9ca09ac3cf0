//! Default mode's buckets and the rules that fill them.
//!
//! The reference script's table (`--compat`'s rules) matches substrings of any name, so
//! `aten::to` catches `aten::topk`, `cos` catches `accost`, and a GEMM with a SiLU epilogue
//! can land in "elementwise". It stays verbatim for `--compat`; default mode uses these
//! rules:
//!
//! 1. An ATen primitive (`aten::mm`, `aten::convolution`, `aten::_softmax`, …) means one
//!    thing: its name decides (`of_aten_op`, whole op names, never substrings), unless
//!    the kernels it launches in this capture fall into several classes of the workspace
//!    kinds (`is_mixed`: a GEMM op that also launches attention kernels), in which case
//!    each kernel's class decides.
//! 2. Otherwise the kernel's class (`trace_model::classify_kernel`) decides: composite
//!    custom ops (`vllm::*`, `_C::*`, `trtllm::*`, `FlashAttnFunc`) launch kernels of
//!    several kinds, and each goes where its kernel belongs.
//! 3. A kernel the table cannot place goes by its launching op's rule (ATen or named,
//!    `of_op_name`), then to `other`.

use trace_model::KernelClass;

/// Matrix multiplications: `aten::mm`/`addmm`/`bmm`/`linear` and GEMM kernels.
pub const GEMM: &str = "matmul (GEMM)";
/// Convolutions.
pub const CONVOLUTION: &str = "convolution";
/// Scaled dot-product and flash attention.
pub const ATTENTION: &str = "attention (SDPA/FA)";
/// Elementwise work: norms, activations, residual adds, casts.
pub const ELEMENTWISE: &str = "elementwise (norm/act)";
/// Reductions: softmax, sums, sorts, top-k.
pub const REDUCTION: &str = "reduction (softmax/sum/sort)";
/// Rotary position embeddings.
pub const ROPE: &str = "rope";
/// Embedding lookups.
pub const EMBEDDING: &str = "embedding";
/// Dropout.
pub const DROPOUT: &str = "dropout";
/// Collectives and expert-parallel dispatch.
pub const COMMUNICATION: &str = "communication (collectives/EP)";
/// Copies, permutes, transposes, memsets.
pub const MEMORY: &str = "memory (copy/permute/view)";
/// Optimizer steps.
pub const OPTIMIZER: &str = "optimizer";
/// What no rule placed.
pub const OTHER: &str = "other";

/// Every bucket, in the order ties are shown.
pub const ALL: [&str; 12] = [
    GEMM,
    CONVOLUTION,
    ATTENTION,
    ELEMENTWISE,
    REDUCTION,
    ROPE,
    EMBEDDING,
    DROPOUT,
    COMMUNICATION,
    MEMORY,
    OPTIMIZER,
    OTHER,
];

/// Index of a bucket in [`ALL`].
pub(crate) fn index(bucket: &str) -> usize {
    ALL.iter()
        .position(|b| *b == bucket)
        .expect("invariant: buckets come from ALL")
}

/// The bucket of a kernel class; an elementwise kernel whose name says rotary embedding,
/// embedding lookup, dropout or an optimizer step goes to that bucket. `None` for
/// [`KernelClass::Other`].
pub(crate) fn of_class(class: KernelClass, kernel_name: &str) -> Option<&'static str> {
    Some(match class {
        KernelClass::Gemm => GEMM,
        KernelClass::Convolution => CONVOLUTION,
        KernelClass::Attention => ATTENTION,
        KernelClass::Elementwise => of_name(kernel_name).unwrap_or(ELEMENTWISE),
        KernelClass::Norm => ELEMENTWISE,
        // Layout transposes are data movement: the bucket of copies, permutes, transposes.
        KernelClass::Layout => MEMORY,
        KernelClass::Reduction => REDUCTION,
        KernelClass::Collective(_) => COMMUNICATION,
        KernelClass::Memcpy(_) | KernelClass::Memset => MEMORY,
        // `KernelClass::Other`, and classes trace-model adds later.
        _ => return None,
    })
}

/// The bucket an ATen primitive's name means (`aten::mm` → GEMM), from the whole op name
/// with `aten::`, leading underscores and a trailing in-place `_` removed. `None` for
/// ops that are not `aten::`, and for ATen ops whose kernels' own classes say more
/// (`aten::add` launches an elementwise kernel either way).
pub(crate) fn of_aten_op(name: &str) -> Option<&'static str> {
    let op = name.strip_prefix("aten::")?;
    let op = op.trim_start_matches('_');
    let op = op.strip_suffix('_').unwrap_or(op);
    let base = op.strip_suffix("_backward").unwrap_or(op);
    const GEMM_OPS: &[&str] = &[
        "mm",
        "bmm",
        "addmm",
        "addmv",
        "mv",
        "linear",
        "matmul",
        "baddbmm",
        "addbmm",
        "scaled_mm",
        "scaled_grouped_mm",
        "grouped_mm",
        "dot",
        "vdot",
        "int_mm",
        "weight_int4pack_mm",
        "weight_int8pack_mm",
    ];
    const REDUCTION_OPS: &[&str] = &[
        "softmax",
        "log_softmax",
        "softmax_backward_data",
        "log_softmax_backward_data",
        "cross_entropy_loss",
        "nll_loss",
        "nll_loss2d",
        "nll_loss_forward",
        "nll_loss2d_forward",
        "sum",
        "mean",
        "amax",
        "amin",
        "argmax",
        "argmin",
        "topk",
        "sort",
        "argsort",
        "cumsum",
        "cumprod",
        "logsumexp",
        "linalg_vector_norm",
    ];
    const EMBEDDING_OPS: &[&str] = &[
        "embedding",
        "embedding_dense_backward",
        "embedding_bag",
        "embedding_renorm",
    ];
    const DROPOUT_OPS: &[&str] = &["dropout", "native_dropout", "fused_dropout", "dropout_add"];
    const MEMORY_OPS: &[&str] = &[
        "to",
        "to_copy",
        "copy",
        "contiguous",
        "clone",
        "permute",
        "view",
        "reshape",
        "transpose",
        "t",
        "cat",
        "stack",
        "unsafe_view",
        "expand",
        "repeat",
        "copy_from",
        "copy_from_and_resize",
    ];
    Some(if GEMM_OPS.contains(&op) {
        GEMM
    } else if base.starts_with("conv")
        || base.contains("convolution")
        || base.starts_with("slow_conv")
        || base.starts_with("thnn_conv")
        || base.contains("conv_depthwise")
    {
        CONVOLUTION
    } else if base.contains("scaled_dot_product")
        || base.starts_with("flash_attention")
        || base.starts_with("efficient_attention")
        || base.starts_with("cudnn_attention")
    {
        ATTENTION
    } else if REDUCTION_OPS.contains(&op) {
        REDUCTION
    } else if EMBEDDING_OPS.contains(&op) || EMBEDDING_OPS.contains(&base) {
        EMBEDDING
    } else if DROPOUT_OPS.contains(&base) || base == "native_dropout" {
        DROPOUT
    } else if MEMORY_OPS.contains(&op) {
        MEMORY
    } else if op.starts_with("fused_adam")
        || op.starts_with("fused_sgd")
        || op.starts_with("fused_adagrad")
        || op.starts_with("foreach_")
    {
        OPTIMIZER
    } else {
        return None;
    })
}

/// Buckets that names outside ATen say by a whole word: rotary embeddings, embedding
/// lookups, dropout, optimizer steps, process-group collectives. Used for kernels the
/// classification table calls elementwise or cannot place, and for non-ATen ops.
pub(crate) fn of_name(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let word = |w: &str| words.contains(&w);
    let any_sub = |subs: &[&str]| subs.iter().any(|s| lower.contains(s));
    Some(
        if any_sub(&["rotary", "apply_rope", "rope_"]) || word("rope") {
            ROPE
        } else if any_sub(&["embedding"]) {
            EMBEDDING
        } else if any_sub(&["dropout"]) {
            DROPOUT
        } else if any_sub(&[
            "optimizer.step",
            "adamw",
            "adam_",
            "fused_adam",
            "fusedadam",
            "fusedsgd",
            "clip_grad",
        ]) || word("adam")
        {
            OPTIMIZER
        } else if any_sub(&["nccl", "processgroup", "c10d::", "record_param_comms"]) {
            COMMUNICATION
        } else {
            return None;
        },
    )
}

/// The rule for a launching op's name: an ATen primitive's, else a named one.
pub(crate) fn of_op_name(name: &str) -> Option<&'static str> {
    of_aten_op(name).or_else(|| of_name(name))
}

/// The kinds of compute that make an op "mixed", a bit each: GEMM, convolution,
/// attention and communication kernels. Elementwise, reduction, copy and set kernels
/// are an op's helpers (cuDNN's layout transposes, a split-K reduction, a workspace
/// memset, a bias add) and never make it mixed. Under a convolution op a GEMM kernel is
/// the convolution (cuDNN and MIOpen run 1x1 and im2col convolutions as GEMMs).
pub(crate) fn kind_bit(class: KernelClass, op_bucket: Option<&str>) -> u8 {
    match class {
        KernelClass::Gemm if op_bucket == Some(CONVOLUTION) => 1 << 1,
        KernelClass::Gemm => 1,
        KernelClass::Convolution => 1 << 1,
        KernelClass::Attention => 1 << 2,
        KernelClass::Collective(_) => 1 << 3,
        _ => 0,
    }
}

/// Whether an ATen op whose name means `op_bucket` launched kernels of a kind its name
/// does not cover (`kinds`: the union of [`kind_bit`] over its kernels).
pub(crate) fn is_mixed(op_bucket: &str, kinds: u8) -> bool {
    let own = match op_bucket {
        GEMM => 1,
        CONVOLUTION => 1 << 1,
        ATTENTION => 1 << 2,
        _ => 0,
    };
    kinds & !own != 0
}

/// Attention backends the default mode recognises, by kernel name (lower case), first
/// match wins: `(backend, patterns)`.
pub(crate) const ATTENTION_BACKENDS: &[(&str, &[&str])] = &[
    (
        "PyTorch memory-efficient (xformers/CUTLASS)",
        &[
            "cutlassf",
            "cutlassb",
            "mem_efficient",
            "memefficient",
            "efficient_attention",
        ],
    ),
    (
        "cuDNN SDPA",
        &["cudnn_generated", "cudnn::fmha", "sdpa_fprop", "cudnn_sdpa"],
    ),
    (
        "FlashInfer",
        &["flashinfer", "batchprefill", "batchdecode", "batchmla"],
    ),
    (
        "TensorRT-LLM",
        &["fmhasm", "fmha_v2", "xqa", "mmha", "trtllm", "tensorrt_llm"],
    ),
    (
        "CK/aiter FMHA",
        &[
            "ck_tile::fmha",
            "fmhafwd",
            "fmhabwd",
            "fmha_fwd",
            "fmha_bwd",
            "aiter",
        ],
    ),
    (
        "FlashAttention",
        &[
            "flash_fwd",
            "flash_bwd",
            "flashattn",
            "flash_attn",
            "flash::",
            "flash_mla",
            "flashmla",
        ],
    ),
    ("paged attention", &["paged_attention", "unified_attention"]),
    (
        "Triton attention",
        &["triton", "_attn_fwd", "attn_fwd", "_attn_bwd", "attn_bwd"],
    ),
    ("other fused (fmha)", &["fmha"]),
];

/// The backend of an attention kernel, if its name says one.
pub(crate) fn attention_backend(kernel_name: &str) -> Option<&'static str> {
    let lower = kernel_name.to_ascii_lowercase();
    ATTENTION_BACKENDS
        .iter()
        .find(|(_, pats)| pats.iter().any(|p| lower.contains(p)))
        .map(|(backend, _)| *backend)
}

/// The unfused ("math") SDPA path: kernels launched under this op are attention done as
/// separate GEMM, softmax and elementwise kernels.
pub(crate) const MATH_SDPA_OP: &str = "aten::_scaled_dot_product_attention_math";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aten_ops_match_whole_names() {
        assert_eq!(of_aten_op("aten::to"), Some(MEMORY));
        assert_eq!(of_aten_op("aten::topk"), Some(REDUCTION));
        assert_eq!(of_aten_op("aten::mm"), Some(GEMM));
        assert_eq!(of_aten_op("aten::_scaled_mm"), Some(GEMM));
        assert_eq!(of_aten_op("aten::cudnn_convolution"), Some(CONVOLUTION));
        assert_eq!(of_aten_op("aten::convolution_backward"), Some(CONVOLUTION));
        assert_eq!(of_aten_op("aten::miopen_convolution"), Some(CONVOLUTION));
        assert_eq!(
            of_aten_op("aten::_scaled_dot_product_flash_attention"),
            Some(ATTENTION)
        );
        assert_eq!(of_aten_op("aten::copy_"), Some(MEMORY));
        assert_eq!(of_aten_op("aten::_softmax"), Some(REDUCTION));
        assert_eq!(of_aten_op("aten::add"), None);
        assert_eq!(of_aten_op("aten::cos"), None);
        assert_eq!(of_aten_op("vllm::unified_attention"), None);
        assert_eq!(of_aten_op("aten::_fused_adamw_"), Some(OPTIMIZER));
        assert_eq!(
            of_aten_op("aten::embedding_dense_backward"),
            Some(EMBEDDING)
        );
    }

    #[test]
    fn names_match_words_not_substrings() {
        assert_eq!(of_name("accost"), None);
        assert_eq!(of_name("cosine_schedule"), None);
        assert_eq!(of_name("vllm::rotary_embedding"), Some(ROPE));
        assert_eq!(of_name("Optimizer.step#AdamW.step"), Some(OPTIMIZER));
        assert_eq!(of_name("record_param_comms"), Some(COMMUNICATION));
        assert_eq!(of_name("europe"), None);
    }

    #[test]
    fn backends() {
        assert_eq!(
            attention_backend("fmhaSm100aKernel_QkvE4m3OBfloat16HQk128HV128"),
            Some("TensorRT-LLM")
        );
        assert_eq!(
            attention_backend("void flashinfer::BatchPrefillWithPagedKVCacheKernel<true>()"),
            Some("FlashInfer")
        );
        assert_eq!(
            attention_backend("fmha_cutlassF_f16_aligned_64x64_rf_sm80(Params)"),
            Some("PyTorch memory-efficient (xformers/CUTLASS)")
        );
        assert_eq!(
            attention_backend("void flash_fwd_kernel<Flash_fwd_kernel_traits<128>>()"),
            Some("FlashAttention")
        );
        assert_eq!(
            attention_backend("void ck_tile::kentry<ck_tile::FmhaFwdKernel<>>()"),
            Some("CK/aiter FMHA")
        );
        assert_eq!(attention_backend("my_attention_kernel"), None);
    }
}
