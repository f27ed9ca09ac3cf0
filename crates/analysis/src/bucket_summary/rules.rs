//! The reference script's tables, verbatim: bucket rules (first match wins,
//! case-insensitive substring) and attention-backend patterns (case-sensitive substring).

/// `(bucket, patterns)` in the reference script's order; a name goes to the first bucket
/// with a pattern that is a case-insensitive substring of it, else to [`OTHER`].
pub(crate) const BUCKET_RULES: &[(&str, &[&str])] = &[
    (
        GEMM,
        &["aten::mm", "aten::bmm", "aten::addmm", "aten::linear"],
    ),
    (
        ATTENTION,
        &[
            "flash",
            "scaled_dot_product",
            "sdpa",
            "attention",
            "aten::_scaled_dot_product",
            "FlashAttn",
            "mem_efficient",
            "triton_flash",
            "ampere_fp16_s16816gemm_bf16",
        ],
    ),
    (
        ELEMENTWISE,
        &[
            "rms_norm",
            "RMSNorm",
            "aten::silu",
            "aten::mul",
            "aten::add",
            "aten::div",
            "aten::rsqrt",
            "aten::sub",
            "element_wise",
        ],
    ),
    ("softmax", &["softmax", "log_softmax", "cross_entropy"]),
    ("rope", &["rope", "rotary", "cos", "sin"]),
    ("embedding", &["embedding", "aten::embedding"]),
    ("dropout", &["dropout"]),
    (
        COLLECTIVE,
        &[
            "nccl",
            "ncclAllReduce",
            "ncclAllGather",
            "ncclReduceScatter",
            "allreduce",
            "AllReduce",
            "ProcessGroupNCCL",
        ],
    ),
    (
        MEMORY,
        &[
            "aten::to",
            "aten::_to_copy",
            "aten::contiguous",
            "aten::permute",
            "aten::view",
            "aten::reshape",
            "aten::transpose",
            "aten::clone",
            "Memcpy",
        ],
    ),
    ("optimizer", &["adam", "AdamW", "optim", "clip_grad"]),
];

/// The bucket of names that match no rule.
pub(crate) const OTHER: &str = "other";
pub(crate) const GEMM: &str = "matmul (GEMM)";
pub(crate) const ATTENTION: &str = "attention (SDPA/FA)";
pub(crate) const ELEMENTWISE: &str = "elementwise (norm/act)";
pub(crate) const COLLECTIVE: &str = "reduce (all-reduce/gather)";
pub(crate) const MEMORY: &str = "memory (copy/permute/view)";

/// `(backend, patterns)` in the reference script's order; case-sensitive substrings.
pub(crate) const SDPA_BACKENDS: &[(&str, &[&str])] = &[
    (
        FLASH,
        &[
            "FlashAttn",
            "flash_attn",
            "triton_flash",
            "ampere_fp16_s16816gemm",
        ],
    ),
    (
        "mem_efficient",
        &["mem_efficient", "MemEfficient", "cutlassF"],
    ),
    ("math", &["aten::baddbmm", "aten::softmax"]),
];

/// The backend the reference script hopes to see dominate.
pub(crate) const FLASH: &str = "flash";

/// The reference script's `bucket_op`: the first bucket with a pattern in `name`, ignoring
/// case.
pub(crate) fn bucket_of(name: &str) -> &'static str {
    // Python's `str.lower()` on the name; the patterns are ASCII, so comparing them
    // ignoring ASCII case equals comparing their lowercase forms.
    let lower = name.to_lowercase();
    let hay = lower.as_bytes();
    for (bucket, patterns) in BUCKET_RULES {
        for pattern in *patterns {
            let pat = pattern.as_bytes();
            if hay.len() >= pat.len() && hay.windows(pat.len()).any(|w| w.eq_ignore_ascii_case(pat))
            {
                return bucket;
            }
        }
    }
    OTHER
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_rule_wins_case_insensitively() {
        assert_eq!(bucket_of("aten::mm"), GEMM);
        assert_eq!(bucket_of("ATEN::LINEAR"), GEMM);
        // "flash" (attention) comes before "Memcpy" (memory).
        assert_eq!(bucket_of("flash_memcpy"), ATTENTION);
        assert_eq!(bucket_of("Memcpy DtoD (Device -> Device)"), MEMORY);
        // "cos" matches inside unrelated names, as in the reference script.
        assert_eq!(bucket_of("accost"), "rope");
        assert_eq!(bucket_of("aten::addmm"), GEMM);
        assert_eq!(bucket_of("aten::add_"), ELEMENTWISE);
        assert_eq!(bucket_of("volta_sgemm_128x64_nn"), OTHER);
    }
}
