//! Kernel names as the comparison matches them: template arguments, argument lists and
//! trailing hashes set aside, so one kernel compiled for two shapes or builds is one row.

/// The name a kernel is matched by: `void ns::kern<float, 4>(Args)` → `ns::kern` (a generic
/// wrapper such as `cutlass::Kernel` keeps its first template argument); a trailing
/// `_`-separated hex hash of 8 or more digits (`…_0a1b2c3d4e`) is dropped too.
pub fn normalise_kernel_name(name: &str) -> String {
    let name = name.trim();
    let name = name.strip_prefix("void ").unwrap_or(name);
    let name = name.replace("(anonymous namespace)", "anon");
    let mut out = String::with_capacity(name.len());
    let mut depth = 0usize;
    for ch in name.chars() {
        match ch {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            // The argument list: nothing after it names the kernel.
            '(' if depth == 0 => break,
            _ if depth == 0 => out.push(ch),
            _ => {}
        }
    }
    let mut out = out.trim().to_owned();
    // A generic wrapper (`cutlass::Kernel<cutlass_80_tensorop_s1688gemm_…>`) is named by
    // its first template argument: without it every CUTLASS kernel would be one row.
    let generic = ["::Kernel", "::Kernel2", "::device_kernel"];
    if generic.iter().any(|g| out.ends_with(g))
        && let Some(open) = name.find('<')
    {
        let inner = &name[open + 1..];
        let end = inner.find(['<', '>', ',', '(']).unwrap_or(inner.len());
        let arg = inner[..end].trim();
        if !arg.is_empty() {
            out = format!("{out}<{arg}>");
        }
    }
    if let Some((head, tail)) = out.rsplit_once('_')
        && tail.len() >= 8
        && tail.chars().all(|c| c.is_ascii_hexdigit())
        && tail.chars().any(|c| c.is_ascii_digit())
        && !head.is_empty()
    {
        out.truncate(head.len());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::normalise_kernel_name;

    fn check(input: &str, expect: &str) {
        assert_eq!(normalise_kernel_name(input), expect, "{input}");
    }

    #[test]
    fn sets_aside_templates_arguments_and_hashes() {
        check(
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
            "at::native::vectorized_elementwise_kernel",
        );
        check(
            "void at::native::(anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>(float*, float const*, int, int, int, bool const*, int, bool)",
            "at::native::anon::softmax_warp_forward",
        );
        check("volta_sgemm_128x64_nn", "volta_sgemm_128x64_nn");
        check(
            "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x5_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_16x5_nn_align4::Params)",
            "cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x5_nn_align4>",
        );
        check("triton_poi_fused_add_0", "triton_poi_fused_add_0");
        check("fusion_12_0a1b2c3d4e", "fusion_12");
        check(
            "ncclKernel_AllReduce_RING_LL_Sum_float",
            "ncclKernel_AllReduce_RING_LL_Sum_float",
        );
    }
}
