//! Advice worded for the framework the capture shows, not for its file format: one
//! synthetic step (a layout transpose, an elementwise kernel, a synchronising call while
//! the critical stream idles, a GEMM) read as PyTorch and, with a TensorFlow function
//! around it, as TensorFlow; and MoE expert GEMMs ranked as a family of their own.

use investigation::{Advice, Investigation, Knob, RankedCause, What};

mod common;
use common::{cause, ev, investigate, step};

fn ranked(inv: &Investigation) -> &[RankedCause] {
    match &inv.advice {
        Advice::Ranked(r) => &r.causes,
        other => panic!("not ranked: {other:?}"),
    }
}

/// An op on host thread 1 at `ts` with its runtime call at `ts + 1` (`call` µs long) and
/// the kernel it issued on `stream`.
fn launched(
    op: &str,
    api: &str,
    corr: u64,
    ts: u64,
    call: u64,
    kernel: (&str, u64, u64, u64),
) -> Vec<String> {
    let (name, stream, start, dur) = kernel;
    vec![
        ev("cpu_op", op, 1, ts, call + 2, ""),
        ev(
            "cuda_runtime",
            api,
            1,
            ts + 1,
            call,
            &format!(r#""correlation": {corr}"#),
        ),
        ev(
            "kernel",
            name,
            stream,
            start,
            dur,
            &format!(r#""correlation": {corr}, "stream": {stream}, "device": 0"#),
        ),
    ]
}

/// Two steps of: a layout transpose and an elementwise kernel on stream 7, a 280 µs copy
/// on stream 8, a `cudaStreamSynchronize` from 220 to 500 µs that waits for the copy
/// while stream 7 idles, then a 300 µs GEMM on stream 7.
fn one_step(tf: bool) -> Vec<String> {
    let mut events = Vec::new();
    for s in 0..2u64 {
        let t = s * 1000;
        events.push(step(s + 1, t, 1000));
        if tf {
            events.push(ev(
                "user_annotation",
                "__inference_train_function_1234",
                1,
                t,
                999,
                "",
            ));
        }
        let c = 10 * s;
        events.extend(launched(
            "aten::contiguous",
            "cudaLaunchKernel",
            c + 1,
            t + 5,
            3,
            (
                "void cudnn::ops::nchwToNhwcKernel<float, float>",
                7,
                t + 12,
                100,
            ),
        ));
        events.extend(launched(
            "aten::add",
            "cudaLaunchKernel",
            c + 2,
            t + 12,
            3,
            (
                "void at::native::vectorized_elementwise_kernel<4, add>",
                7,
                t + 113,
                100,
            ),
        ));
        events.extend(launched(
            "aten::copy_",
            "cudaMemcpyAsync",
            c + 3,
            t + 18,
            3,
            ("Memcpy HtoD (Pinned -> Device)", 8, t + 25, 280),
        ));
        events.push(ev(
            "cuda_runtime",
            "cudaStreamSynchronize",
            1,
            t + 220,
            290,
            "",
        ));
        events.extend(launched(
            "aten::mm",
            "cudaLaunchKernel",
            c + 4,
            t + 512,
            3,
            ("volta_sgemm_128x64_nn", 7, t + 520, 300),
        ));
    }
    events
}

#[test]
fn advice_is_worded_for_the_framework_the_capture_shows() {
    let torch = investigate(&one_step(false));
    let tf = investigate(&one_step(true));
    for (inv, layout, elementwise, sync) in [
        (&torch, Knob::ChannelsLast, Knob::Fusion, Knob::NoSyncs),
        (&tf, Knob::TfLayouts, Knob::TfFusion, Knob::TfNoRoundTrips),
    ] {
        let causes = ranked(inv);
        assert_eq!(cause(causes, "layout").knobs, [layout]);
        assert_eq!(cause(causes, "elementwise").knobs, [elementwise]);
        assert_eq!(cause(causes, "gap:sync-call").knobs, [sync]);
    }
}

/// A MoE layer as TensorRT-LLM runs it: a routing kernel, two batched GEMMs whose names
/// say nothing of MoE, a finalize kernel; and a dense GEMM. The batched GEMMs between the
/// MoE kernels are ranked as MoE GEMMs with their knob and evidence; the dense GEMM is
/// not among them.
#[test]
fn moe_expert_gemms_are_a_family_of_their_own() {
    let mut events = Vec::new();
    for s in 0..2u64 {
        let t = s * 1000;
        events.push(step(s + 1, t, 1000));
        let c = 10 * s;
        let kernels = [
            ("void moe::dev::routing::routingIndicesKernel<float>", 20),
            ("bmm_Bfloat16_Bfloat16Bfloat16_Fp32_t128x8x128u2_s6", 200),
            ("bmm_Bfloat16_Bfloat16Bfloat16_Fp32_t128x8x128u2_s5", 100),
            ("void moe::dev::finalize::finalizeKernel<float>", 20),
            ("nvjet_sm103_tst_64x16_64x16_4x1_v_bz_TNT", 300),
        ];
        let mut start = t + 10;
        for (k, (name, dur)) in kernels.into_iter().enumerate() {
            events.extend(launched(
                "aten::op",
                "cudaLaunchKernel",
                c + k as u64 + 1,
                t + 1 + 4 * k as u64,
                2,
                (name, 7, start, dur),
            ));
            start += dur;
        }
    }
    let inv = investigate(&events);
    let moe = cause(ranked(&inv), "moe-gemm");
    assert_eq!(moe.knobs, [Knob::MoeGemm]);
    assert_eq!(moe.per_step, trace_model::Nanos(300_000));
    let What::MoeGemm { evidence } = &moe.what else {
        panic!("{:?}", moe.what)
    };
    let names: Vec<&str> = evidence.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "bmm_Bfloat16_Bfloat16Bfloat16_Fp32_t128x8x128u2_s6",
            "bmm_Bfloat16_Bfloat16Bfloat16_Fp32_t128x8x128u2_s5"
        ]
    );
}

/// Every knob of every ranked cause.
fn knobs(inv: &Investigation) -> Vec<&Knob> {
    match &inv.advice {
        Advice::Ranked(r) => r.causes.iter().flat_map(|c| &c.knobs).collect(),
        _ => Vec::new(),
    }
}

/// The TensorFlow XSpace of the corpus is read as TensorFlow (not as JAX, whose format it
/// shares), and none of its knobs is JAX's.
#[test]
fn a_tensorflow_xspace_gets_no_jax_knobs() {
    let Some(root) = test_support::traces_dir("a_tensorflow_xspace_gets_no_jax_knobs") else {
        test_support::skip_notice();
        return;
    };
    let path = root.join("jax/tf-v100-multiworker-xplane/34.83.195.179_6003.xplane.pb");
    if !path.exists() {
        return;
    }
    let inv = investigation::investigate(&path, &Default::default())
        .expect("investigates")
        .investigation;
    let d = inv.first.diagnosis.as_ref().expect("diagnosed");
    assert_eq!(d.framework, "tensorflow", "{}", d.framework_evidence);
    let all = knobs(&inv);
    assert!(!all.is_empty(), "{:?}", inv.advice);
    assert!(
        !all.iter().any(|k| matches!(
            k,
            Knob::JaxDispatch | Knob::JaxNoRoundTrips | Knob::JaxLayouts | Knob::JaxFusion
        )),
        "{all:?}"
    );
}

/// The SGLang MoE decodes of the corpus: on MI300X the expert GEMMs carry their name
/// (`ck::kernel_moe_gemm`), on B300 they are `bmm_…` kernels between MoE routing and
/// finalize kernels; both are MoE GEMMs, and dense GEMMs (`nvjet_…`, `Cijk_…`) are not.
#[test]
fn the_shared_moe_decodes_have_moe_gemms() {
    let Some(root) = test_support::traces_dir("the_shared_moe_decodes_have_moe_gemms") else {
        test_support::skip_notice();
        return;
    };
    for (dir, moe_part, dense_part) in [
        (
            "sglang-qwen3-30b-a3b-decode-mi300x",
            "kernel_moe_gemm",
            "Cijk_",
        ),
        ("sglang-qwen3-30b-a3b-decode-b300", "bmm_Bfloat16", "nvjet_"),
    ] {
        let Ok(entries) = std::fs::read_dir(root.join("pytorch").join(dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            let loaded = load::load(&entry.path()).expect("loads");
            let c = &loaded[0].capture;
            let moe = analysis::moe_gemm_activities(c);
            let (mut moe_named, mut dense_named) = (0, 0);
            for (a, m) in c.activities().iter().zip(&moe) {
                let name = c.name(a.name);
                if name.contains(moe_part) {
                    assert!(*m, "{dir}: {name} is a MoE GEMM");
                    moe_named += 1;
                }
                if name.contains(dense_part) {
                    assert!(!*m, "{dir}: {name} is a dense GEMM");
                    dense_named += 1;
                }
            }
            assert!(
                moe_named > 0 && dense_named > 0,
                "{dir}: {moe_named} {dense_named}"
            );
        }
    }
}

/// The TensorFlow XSpace keeps a `Steps` line per GPU (two GPUs run step 0 about 650 ms
/// apart): its step figures are the analysed GPU's own step, not the union step over the
/// GPUs, and every GPU's own count and median is said. Each is checked against the
/// steps as the reader gives them.
#[test]
fn a_tensorflow_xspace_gives_its_step_figures_per_gpu() {
    let Some(root) = test_support::traces_dir("a_tensorflow_xspace_gives_its_step_figures_per_gpu")
    else {
        test_support::skip_notice();
        return;
    };
    let path = root.join("jax/tf-v100-multiworker-xplane/34.83.195.179_6003.xplane.pb");
    if !path.exists() {
        return;
    }
    let loaded = load::load(&path).expect("loads");
    let c = &loaded[0].capture;
    let mut own: std::collections::BTreeMap<i64, Vec<trace_model::Nanos>> = Default::default();
    for (d, s) in &c.meta().device_steps {
        own.entry(c.device(*d).ordinal)
            .or_default()
            .push(s.end - s.start);
    }
    assert!(own.len() > 1, "{own:?}");
    let union = c
        .steps()
        .iter()
        .map(|s| s.end - s.start)
        .max()
        .expect("a step");
    let inv = investigation::investigate(&path, &Default::default())
        .expect("investigates")
        .investigation;
    let sides = inv.first.step_sides.expect("step sides");
    assert!(
        own.values().any(|v| v.contains(&sides.host.median)),
        "{sides:?} against {own:?}"
    );
    assert!(
        sides.host.median < union,
        "{sides:?}, union {}",
        union.human()
    );
    let per_gpu = inv
        .first
        .steps_origin
        .per_gpu
        .as_ref()
        .expect("steps per GPU");
    let counted: Vec<(i64, usize)> = per_gpu.gpus.iter().map(|g| (g.gpu, g.steps)).collect();
    let expected: Vec<(i64, usize)> = own.iter().map(|(&o, spans)| (o, spans.len())).collect();
    assert_eq!(counted, expected);
    let row = &inv.captures[0];
    let spread = row.step_spread.expect("a spread");
    assert_eq!(spread.median, sides.host.median);
}
