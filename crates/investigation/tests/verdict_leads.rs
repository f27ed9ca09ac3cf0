//! The ranked causes agree with the verdict by construction: the cause that holds what
//! the verdict says bounds the step is ranked first, whatever else holds more time
//! (`analysis::bounding_cause`). A compute-bound:GEMM step whose elementwise and
//! normalisation kernels together outweigh its GEMMs ranks its GEMMs first, with the
//! knob of the framework in use (ggml's quantised matmuls for llama.cpp, lower-precision
//! GEMMs for PyTorch); and the shared llama.cpp captures class their quantised matmuls
//! (`mul_mat_q`, `mul_mat_vec_q`) as GEMMs in the investigation's kernel ranking.

use analysis::{Diagnosis, HostCause};
use investigation::{Advice, Investigation, Knob, RankedCause, What};
use trace_model::{KernelClass, Nanos};

mod common;
use common::{US, ev, investigate, step};

fn ranked(inv: &Investigation) -> &[RankedCause] {
    match &inv.advice {
        Advice::Ranked(r) => &r.causes,
        other => panic!("not ranked: {other:?}"),
    }
}

/// Two 1 ms steps; in each, launched 1 µs apart at the step's start (the GPU never waits
/// for the host), back to back on stream 7: a 400 µs `gemm`, a 250 µs `elementwise` and a
/// 250 µs `norm` kernel; 100 µs of idle at the step's end.
fn gemm_led_step(gemm: &str, elementwise: &str, norm: &str) -> Vec<String> {
    let mut events = Vec::new();
    for s in 0..2u64 {
        let t = s * 1000;
        events.push(step(s + 1, t, 1000));
        let mut start = t + 10;
        for (k, (name, dur)) in [(gemm, 400), (elementwise, 250), (norm, 250)]
            .into_iter()
            .enumerate()
        {
            let corr = 10 * s + k as u64 + 1;
            events.push(ev(
                "cuda_runtime",
                "cudaLaunchKernel",
                1,
                t + 1 + k as u64,
                1,
                &format!(r#""correlation": {corr}"#),
            ));
            events.push(ev(
                "kernel",
                name,
                7,
                start,
                dur,
                &format!(r#""correlation": {corr}, "stream": 7, "device": 0"#),
            ));
            start += dur;
        }
    }
    events
}

fn knob_code(k: &Knob) -> Option<&str> {
    match k {
        Knob::Compute { code, .. } => Some(code),
        _ => None,
    }
}

#[test]
fn a_gemm_bound_step_ranks_its_gemms_first_with_the_framework_s_knob() {
    for (gemm, elementwise, norm, framework, knob) in [
        (
            "volta_sgemm_128x64_nn",
            "void at::native::vectorized_elementwise_kernel<4, add>",
            "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>",
            "pytorch-eager",
            "gemm-precision",
        ),
        (
            "void mul_mat_q<(ggml_type)2, 128, false>",
            "void quantize_mmq_q8_1<(mmq_q8_1_ds_layout)1>",
            "void rms_norm_f32<1024, true, false>",
            "llama.cpp",
            "ggml-matmul",
        ),
    ] {
        let inv = investigate(&gemm_led_step(gemm, elementwise, norm));
        let d = inv.first.diagnosis.as_ref().expect("a diagnosis");
        assert_eq!(
            (d.diagnosis, d.framework.as_str()),
            (
                Diagnosis::ComputeBound {
                    class: KernelClass::Gemm
                },
                framework
            )
        );
        let causes = ranked(&inv);
        // The GEMMs lead although elementwise and norm kernels hold more (500 µs per
        // step against 400 µs).
        let first = &causes[0];
        assert_eq!(first.key, "compute:gemm");
        assert_eq!(first.time, Nanos(800 * US));
        assert_eq!(first.per_step, Nanos(400 * US));
        let What::Compute { class, evidence } = &first.what else {
            panic!("{:?}", first.what);
        };
        assert_eq!(class, "GEMM");
        assert_eq!(evidence, &[(gemm.to_owned(), Nanos(800 * US))]);
        assert_eq!(
            first.knobs.iter().map(knob_code).collect::<Vec<_>>(),
            [Some(knob)]
        );
        let elementwise = causes
            .iter()
            .find(|c| c.key == "elementwise")
            .expect("elementwise ranked");
        assert_eq!(elementwise.time, Nanos(1000 * US));
        assert!(elementwise.time > first.time);
        // The verdict's own cause is ranked once, and no torch knob reaches llama.cpp.
        assert_eq!(
            causes
                .iter()
                .filter(|c| c.key.starts_with("compute:"))
                .count(),
            1
        );
        if framework == "llama.cpp" {
            // PyTorch's knobs, by variant and by code: none may reach llama.cpp.
            let pytorch = |k: &Knob| match k {
                Knob::Fusion
                | Knob::CompiledFusion
                | Knob::GraphsOnCompile
                | Knob::GraphBreaks
                | Knob::ChannelsLast
                | Knob::NoSyncs
                | Knob::WithoutPythonTracer => true,
                Knob::Compute { code, .. } => {
                    ["gemm-precision", "conv-tuning", "attention-backend"].contains(&code.as_str())
                }
                Knob::Host { code, .. } => {
                    ["torch-compile", "graph-breaks", "cuda-graphs"].contains(&code.as_str())
                }
                _ => false,
            };
            let knobs: Vec<&Knob> = causes.iter().flat_map(|c| &c.knobs).collect();
            assert!(!knobs.iter().any(|k| pytorch(k)), "{knobs:?}");
            assert!(
                knobs
                    .iter()
                    .any(|k| matches!(k, Knob::Compute { code, .. } if code == "ggml-matmul")),
                "{knobs:?}"
            );
        }
    }
}

/// Where the verdict names no single cause (mixed, cannot tell), nothing is moved: the
/// causes stay ranked by time; where it names a host sub-cause, that sub-cause leads.
#[test]
fn a_host_bound_step_ranks_its_sub_cause_first() {
    // Two 10 ms steps: a 1 ms GEMM, then 8 ms in `hipFree` before the next launch.
    let mut events = Vec::new();
    for s in 0..2u64 {
        let t = s * 10_000;
        events.push(step(s + 1, t, 10_000));
        for (k, at) in [(1u64, t + 1), (2, t + 9_010)] {
            let corr = 10 * s + k;
            events.push(ev(
                "cuda_runtime",
                "hipLaunchKernel",
                1,
                at,
                2,
                &format!(r#""correlation": {corr}"#),
            ));
            events.push(ev(
                "kernel",
                "Cijk_Alik_Bljk_SB_MT128x128x16",
                7,
                at + 5,
                500,
                &format!(r#""correlation": {corr}, "stream": 7, "device": 0"#),
            ));
        }
        events.push(ev("cuda_runtime", "hipFree", 1, t + 1_000, 8_000, ""));
    }
    let inv = investigate(&events);
    let d = inv.first.diagnosis.as_ref().expect("a diagnosis");
    let allocator = Diagnosis::HostBound {
        cause: HostCause::Allocator,
    };
    assert_eq!(d.diagnosis, allocator);
    assert_eq!(ranked(&inv)[0].key, "gap:host-not-launched:allocator");
    // The per-capture table shows the same verdict word.
    assert_eq!(inv.captures[0].verdict.diagnosis, allocator);
}

/// Both shared llama.cpp captures (rocprofv3 CSV on gfx1151, rocprof v1 on RDNA4) class
/// their quantised matmuls as GEMMs in the kernel ranking (`CaptureResult::top_ops`,
/// kernels without a launching op ranked by name), detect llama.cpp, and, where the
/// verdict is compute-bound, rank its class first with a ggml knob; no cause of theirs
/// gets a torch.compile knob.
#[test]
fn the_shared_llama_cpp_captures_rank_quantised_matmuls_as_matmuls() {
    let Some(root) =
        test_support::traces_dir("the_shared_llama_cpp_captures_rank_quantised_matmuls_as_matmuls")
    else {
        test_support::skip_notice();
        return;
    };
    for rel in [
        "rocprof/rocprofv3-csv-llamacpp-gfx1151/prefill_kernel_trace.csv",
        "rocprof/rocprofv1-r9700-llamacpp/results.csv",
    ] {
        let path = root.join(rel);
        if !path.exists() {
            continue;
        }
        let inv = investigation::investigate(&path, &Default::default())
            .expect("investigates")
            .investigation;
        let d = inv.first.diagnosis.as_ref().expect("a diagnosis");
        assert_eq!(d.framework, "llama.cpp", "{rel}");
        let row = &inv.captures[0];
        let matmuls: Vec<_> = row
            .top_ops
            .iter()
            .filter(|o| o.name.contains("mul_mat_q") || o.name.contains("mul_mat_vec_q"))
            .collect();
        assert!(!matmuls.is_empty(), "{rel}: {:?}", row.top_ops);
        for o in &matmuls {
            assert_eq!(o.bucket, analysis::buckets::GEMM, "{rel}: {}", o.name);
        }
        // The quantised matmuls are most of the GPU time in the ranking.
        let share: f64 = matmuls.iter().map(|o| o.percent).sum();
        assert!(share > 50.0, "{rel}: {share}");
        if let Diagnosis::ComputeBound { class } = d.diagnosis {
            assert_eq!(class, KernelClass::Gemm, "{rel}");
            let first = &ranked(&inv)[0];
            assert_eq!(first.key, "compute:gemm", "{rel}");
            assert_eq!(
                first.knobs.iter().map(knob_code).collect::<Vec<_>>(),
                [Some("ggml-matmul")],
                "{rel}"
            );
        }
        if let Advice::Ranked(r) = &inv.advice {
            for c in &r.causes {
                for k in &c.knobs {
                    assert!(
                        !matches!(k, Knob::Fusion | Knob::CompiledFusion | Knob::Graphs),
                        "{rel}: {} gets {k:?}",
                        c.key
                    );
                }
            }
        }
    }
}
