//! Mixture-of-experts GEMMs as a kernel family of their own: the grouped or fused expert
//! GEMMs of MoE layers, which are GEMMs by class (`KernelClass::Gemm`) but take other
//! knobs than a dense GEMM (the engine's tuned MoE kernel configuration, expert
//! parallelism, the batch per expert) and should be ranked as such.
//!
//! An activity of class GEMM is a MoE GEMM when
//! 1. its name says so ([`is_moe_gemm_name`]): `fused_moe`, `moe_gemm`/`kernel_moe_gemm`,
//!    `grouped_gemm`/`GroupedGemm`, `moe_mm`, Triton's `matmul_ogs` (the MoE GEMM of
//!    `triton_kernels`), CUTLASS grouped kernels; or
//! 2. it runs on a stream between a MoE kernel that opens the layer's expert GEMMs
//!    (routing, sorting, align, permute, dispatch: `moe` in the name) and one that closes
//!    them (finalize, combine, unpermute, sum, scatter), with only GEMMs between them: the
//!    expert GEMMs of engines whose batched GEMM kernels carry no MoE name (TensorRT-LLM's
//!    `bmm_…` kernels between `moe::dev::routing` and `moe::dev::finalize`). The GEMMs
//!    after the closing kernel (the next attention block's) are not.

use trace_model::{Capture, GpuActivity, KernelClass};

/// Whether a kernel's name names a MoE (grouped/fused expert) GEMM.
pub fn is_moe_gemm_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("fused_moe")
        || lower.contains("moe_gemm")
        || lower.contains("moegemm")
        || lower.contains("moe_mm")
        || lower.contains("grouped_gemm")
        || lower.contains("groupedgemm")
        || lower.contains("grouped_mm")
        || lower.contains("matmul_ogs")
        || (lower.contains("cutlass") && lower.contains("grouped"))
}

/// Whether a kernel opens a MoE layer's expert GEMMs: a MoE kernel (`moe` in its name)
/// that routes, sorts, aligns, permutes or dispatches tokens to experts.
fn opens_moe(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("moe")
        && [
            "rout", "sort", "align", "permut", "expand", "dispatch", "gate", "topk",
        ]
        .iter()
        .any(|w| lower.contains(w))
}

/// Whether a kernel closes a MoE layer's expert GEMMs: a MoE kernel that finalizes,
/// combines, unpermutes, sums or scatters the experts' outputs.
fn closes_moe(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("moe")
        && [
            "finaliz", "combine", "unpermut", "sum", "reduce", "scatter", "gather",
        ]
        .iter()
        .any(|w| lower.contains(w))
}

/// For each activity of `capture` (in `Capture::activities` order), whether it is a MoE
/// GEMM by the module's rules.
pub fn moe_gemm_activities(capture: &Capture) -> Vec<bool> {
    let acts = capture.activities();
    let mut out: Vec<bool> = acts
        .iter()
        .map(|a| a.class == KernelClass::Gemm && is_moe_gemm_name(capture.name(a.name)))
        .collect();
    let opens = |a: &GpuActivity| a.class != KernelClass::Gemm && opens_moe(capture.name(a.name));
    let closes = |a: &GpuActivity| a.class != KernelClass::Gemm && closes_moe(capture.name(a.name));
    // Activities are sorted by stream, then start: a run of GEMMs on one stream between a
    // kernel that opens a MoE layer and one that closes it.
    let mut i = 0;
    while i < acts.len() {
        if !opens(&acts[i]) {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < acts.len()
            && acts[j].stream == acts[i].stream
            && acts[j].class == KernelClass::Gemm
        {
            j += 1;
        }
        if j > i + 1 && j < acts.len() && acts[j].stream == acts[i].stream && closes(&acts[j]) {
            for flag in &mut out[i + 1..j] {
                *flag = true;
            }
        }
        i = j.max(i + 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_moe_gemms() {
        for name in [
            "fused_moe_kernel",
            "void ck::kernel_moe_gemm<ck::GridwiseMoeGemm<...>>",
            "void cutlass::device_kernel<dpsk::grouped_gemm::cuda::GemmKernel>",
            "_matmul_ogs_NNT_bf16xbf16xmxfp4_128x128x128x1_swiglu",
            "void fused_moe::run_global<fused_moe::Fused_Moe_Kernel_sm80<cutlass::bfloat16_t>>",
            "cutlass_grouped_gemm_sm90",
        ] {
            assert!(is_moe_gemm_name(name), "{name}");
        }
        for name in [
            "volta_sgemm_128x64_nn",
            "nvjet_sm103_tst_64x16_64x16_4x1_v_bz_TNT",
            "bmm_Bfloat16_Bfloat16Bfloat16_Fp32_t128x8x128u2",
            "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x16x256",
        ] {
            assert!(!is_moe_gemm_name(name), "{name}");
        }
        assert!(opens_moe(
            "void moe::dev::routing::routingIndicesDynBlockKernel<>"
        ));
        assert!(opens_moe(
            "void ck_tile::kentry<2, ck_tile::MoeSortingKernel<>>"
        ));
        assert!(opens_moe("void moe_align_block_size_kernel<int>"));
        assert!(closes_moe("void moe::dev::finalize::finalizeKernel<>"));
        assert!(closes_moe("moe_sum_kernel"));
        assert!(!opens_moe("void moe::dev::finalize::finalizeKernel<>"));
        assert!(!closes_moe(
            "void moe::dev::routing::routingIndicesDynBlockKernel<>"
        ));
    }
}
