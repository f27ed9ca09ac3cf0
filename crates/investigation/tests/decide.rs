//! The investigation's decisions on synthetic Kineto traces, asserted on the typed value:
//! cause keys, estimates, knobs, practices in use, layout-heavy ops, trust items.

use investigation::{
    Advice, CheckKind, InUse, Investigation, Knob, LayoutHeavy, PracticeKind, RankedCause,
    TrustSource, What,
};
use trace_model::Nanos;

mod common;
use common::{US, cause, ev, investigate, step};

/// The ranked causes and the practices in use.
fn ranked(inv: &Investigation) -> (&[RankedCause], &[InUse]) {
    match &inv.advice {
        Advice::Ranked(r) => (&r.causes, &r.in_use),
        other => panic!("not ranked: {other:?}"),
    }
}

fn launched(
    op: &str,
    api: &str,
    corr: u64,
    ts: u64,
    kernels: &[(&str, u64, u64)],
    extra: &str,
) -> Vec<String> {
    let mut v = vec![
        ev("cpu_op", op, 1, ts, 5, ""),
        ev(
            "cuda_runtime",
            api,
            1,
            ts + 1,
            2,
            &format!(r#""correlation": {corr}"#),
        ),
    ];
    for (name, start, dur) in kernels {
        v.push(ev(
            "kernel",
            name,
            7,
            *start,
            *dur,
            &format!(r#""correlation": {corr}, "stream": 7, "device": 0{extra}"#),
        ));
    }
    v
}

/// Two 1 ms steps of a compiled model, each one Triton kernel of 100 µs launched at
/// +501 µs: host wait 505 + 900 + 395 µs over the 2 ms window (launch latency
/// included), 900 µs per step: 895 µs with nothing recorded, 5 µs of launch call; the
/// elementwise Triton kernels 200 µs, 100 µs per step. No knob suggests torch.compile.
#[test]
fn a_compiled_capture_gets_no_compile_advice_and_exact_estimates() {
    let mut events = vec![step(1, 0, 1000), step(2, 1000, 1000)];
    for (k, s) in [0u64, 1000].into_iter().enumerate() {
        events.extend(launched(
            "CompiledFunction",
            "cudaLaunchKernel",
            k as u64 + 1,
            s + 500,
            &[("triton_poi_fused_add_mul_0", s + 505, 100)],
            "",
        ));
    }
    let inv = investigate(&events);
    let (causes, in_use) = ranked(&inv);
    assert!(
        in_use.iter().any(|u| u.practice == PracticeKind::Compiled),
        "{in_use:?}"
    );
    // The host wait splits by what the thread did: 895 µs per step with nothing recorded
    // under the step's annotation, 5 µs in the launch call.
    let host = &causes[0];
    assert_eq!(host.key, "gap:host-not-launched:nothing-recorded");
    assert!(
        matches!(&host.what, What::HostCause { code, .. } if code == "nothing-recorded"),
        "{:?}",
        host.what
    );
    assert_eq!(
        (host.per_step, host.step_after),
        (Nanos(895 * US), Nanos(105 * US))
    );
    let launch = cause(causes, "gap:host-not-launched:launch-overhead");
    assert_eq!(launch.per_step, Nanos(5 * US));
    let codes: Vec<&str> = launch
        .knobs
        .iter()
        .filter_map(|k| match k {
            Knob::Host { code, .. } => Some(code.as_str()),
            _ => None,
        })
        .collect();
    // torch.compile is in use: its graph breaks, never torch.compile itself.
    assert!(codes.contains(&"graph-breaks"), "{codes:?}");
    assert!(!codes.contains(&"torch-compile"), "{codes:?}");
    let elementwise = cause(causes, "elementwise");
    assert_eq!(
        (elementwise.per_step, elementwise.step_after),
        (Nanos(100 * US), Nanos(900 * US))
    );
    assert_eq!(elementwise.knobs, [Knob::CompiledFusion]);
}

/// A convolution's layout transposes: cuDNN's NCHW→NHWC and back under
/// `aten::cudnn_convolution` (30 + 10 µs beside its 40 µs kernel), and a batched
/// transpose launched by `aten::copy_` inside `aten::contiguous` inside
/// `aten::convolution` (20 µs), which goes to `aten::convolution`, the op it serves.
/// Both are at least 10 % of the 200 µs of GPU time, so both are layout-heavy (PyTorch).
#[test]
fn layout_transposes_count_toward_the_convolution_they_serve() {
    let corr = |c: u64| format!(r#""correlation": {c}"#);
    let kernel = |name: &str, c: u64, ts: u64, dur: u64| {
        ev(
            "kernel",
            name,
            7,
            ts,
            dur,
            &format!(r#""correlation": {c}, "stream": 7, "device": 0"#),
        )
    };
    let events = vec![
        ev("cpu_op", "aten::convolution", 1, 100, 100, ""),
        ev("cpu_op", "aten::cudnn_convolution", 1, 101, 40, ""),
        ev("cuda_runtime", "cudaLaunchKernel", 1, 102, 2, &corr(1)),
        ev("cuda_runtime", "cudaLaunchKernel", 1, 110, 2, &corr(2)),
        ev("cuda_runtime", "cudaLaunchKernel", 1, 120, 2, &corr(3)),
        ev("cpu_op", "aten::contiguous", 1, 150, 40, ""),
        ev("cpu_op", "aten::copy_", 1, 151, 30, ""),
        ev("cuda_runtime", "cudaLaunchKernel", 1, 152, 2, &corr(4)),
        ev("cpu_op", "aten::add", 1, 300, 10, ""),
        ev("cuda_runtime", "cudaLaunchKernel", 1, 301, 2, &corr(5)),
        kernel("void cudnn::nchwToNhwcKernel<float>()", 1, 200, 30),
        kernel("implicit_convolve_sgemm", 2, 230, 40),
        kernel("void cudnn::nhwcToNchwKernel<float>()", 3, 270, 10),
        kernel("batched_transpose_32x32_dword", 4, 280, 20),
        kernel(
            "void at::native::vectorized_elementwise_kernel<add>()",
            5,
            310,
            100,
        ),
    ];
    let inv = investigate(&events);
    let layout: Vec<(&str, i64, i64)> = inv.captures[0]
        .top_ops
        .iter()
        .map(|o| (o.name.as_str(), o.time.0, o.layout.0))
        .collect();
    assert_eq!(
        layout,
        [
            ("aten::add", 100 * US, 0),
            ("aten::cudnn_convolution", 80 * US, 40 * US),
            ("aten::convolution", 20 * US, 20 * US),
        ]
    );
    let heavy = |op: &str, layout: i64, op_time: i64| LayoutHeavy {
        op: op.to_owned(),
        layout: Nanos(layout * US),
        op_time: Nanos(op_time * US),
        gpu: Nanos(200 * US),
        jax: false,
    };
    assert_eq!(
        inv.ops.layout,
        [
            heavy("aten::cudnn_convolution", 40, 80),
            heavy("aten::convolution", 20, 20)
        ]
    );
}

/// One-sided flow arrows are listed only where some activity has no launch.
#[test]
fn one_sided_flows_are_listed_only_when_a_launch_is_missing() {
    let flow =
        r#"{"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 99, "pid": 1, "tid": 1, "ts": 2}"#;
    let codes = |events: &[String]| {
        investigate(events)
            .trust
            .into_iter()
            .filter_map(|t| match t.from {
                TrustSource::Capture => Some(t.item.code.into_owned()),
                _ => None,
            })
            .collect::<Vec<String>>()
    };
    let mut linked = launched(
        "aten::add",
        "cudaLaunchKernel",
        1,
        10,
        &[("vectorized_elementwise_kernel", 20, 10)],
        "",
    );
    linked.push(flow.to_owned());
    let got = codes(&linked);
    assert!(!got.iter().any(|c| c == "flow-one-end"), "{got:?}");
    // A second kernel with no launch: now the arrows are listed.
    linked.push(ev(
        "kernel",
        "orphan_kernel",
        7,
        40,
        5,
        r#""correlation": 77, "stream": 7, "device": 0"#,
    ));
    let got = codes(&linked);
    assert!(
        got.iter().any(|c| c == "activity-without-launch"),
        "{got:?}"
    );
    assert!(got.iter().any(|c| c == "flow-one-end"), "{got:?}");
}

/// Every trust entry is a `trace_model::TrustItem` whose code, count and share come from
/// the investigation's types: a failed launch check counts the activities without a launch
/// and their share, points at its check, and reads back from JSON as it was written.
#[test]
fn a_failed_check_is_a_counted_trust_item() {
    let mut events = launched(
        "aten::add",
        "cudaLaunchKernel",
        1,
        10,
        &[("vectorized_elementwise_kernel", 20, 10)],
        "",
    );
    events.push(ev(
        "kernel",
        "orphan_kernel",
        7,
        40,
        5,
        r#""correlation": 77, "stream": 7, "device": 0"#,
    ));
    let inv = investigate(&events);
    let check = inv
        .trust
        .iter()
        .find(|t| t.from == TrustSource::Check)
        .expect("the launch check failed");
    assert_eq!(check.item.code, "check-launch");
    assert_eq!(check.item.shown_count(), Some(1));
    assert_eq!(check.item.unit.as_deref(), Some("activities"));
    assert_eq!(check.item.share, Some(0.5));
    assert_eq!(check.item.provenance(), trace_model::Provenance::Measured);
    let failed = &inv.reconciliation[check.check.expect("its check")];
    assert!(!failed.holds);
    assert_eq!(
        failed.kind,
        CheckKind::Launch {
            without: 1,
            activities: 2
        }
    );
    assert_eq!(check.item.code, failed.kind.code());
    let diagnostic = inv
        .trust
        .iter()
        .find(|t| t.item.code == "activity-without-launch")
        .expect("the reader's diagnostic");
    assert_eq!(diagnostic.from, TrustSource::Capture);
    assert_eq!(diagnostic.item.shown_count(), Some(1));
    assert_eq!(diagnostic.item.share, Some(0.5));
    let back = investigation::from_json(&investigation::to_json(&inv)).expect("reads back");
    assert_eq!(back.trust, inv.trust);
}

/// A step replayed by a CUDA graph: the knobs name the graphs in use (all of the GPU
/// time) instead of suggesting them.
#[test]
fn a_graph_replayed_capture_gets_no_graph_advice() {
    let mut events = vec![step(1, 0, 1000)];
    events.extend(launched(
        "aten::graph_replay",
        "cudaGraphLaunch",
        1,
        500,
        &[
            ("void gemv_kernel<float>()", 505, 50),
            ("void rmsnorm_kernel<float>()", 560, 50),
        ],
        r#", "graph id": 3"#,
    ));
    let inv = investigate(&events);
    let (causes, in_use) = ranked(&inv);
    let graphs = in_use
        .iter()
        .find(|u| u.practice == PracticeKind::GraphReplay)
        .expect("graph replay in use");
    assert_eq!(graphs.share, Some(1.0));
    let host = cause(causes, "gap:host-not-launched:launch-overhead");
    assert!(
        matches!(&host.knobs[0], Knob::Host { code, .. } if code == "capture-remaining-ops"),
        "{:?}",
        host.knobs
    );
    assert!(
        !host
            .knobs
            .iter()
            .any(|k| matches!(k, Knob::Host { code, .. } if code == "cuda-graphs")),
        "{:?}",
        host.knobs
    );
}

/// Attention done eagerly (bmm, softmax, bmm; no fused attention kernel): a cause of
/// its own, 250 µs per step on the critical stream, a third of all GPU time, with a
/// fused-attention knob.
#[test]
fn eager_attention_gets_sdpa_advice_with_its_share() {
    let mut events = vec![step(1, 0, 1000)];
    events.extend(launched(
        "aten::bmm",
        "cudaLaunchKernel",
        1,
        10,
        &[("ampere_sgemm_128x64_nn", 15, 100)],
        "",
    ));
    events.extend(launched(
        "aten::softmax",
        "cudaLaunchKernel",
        2,
        20,
        &[("void at::native::softmax_warp_forward<float>()", 115, 50)],
        "",
    ));
    events.extend(launched(
        "aten::bmm",
        "cudaLaunchKernel",
        3,
        30,
        &[("ampere_sgemm_128x64_nn", 165, 100)],
        "",
    ));
    events.extend(launched(
        "aten::linear",
        "cudaLaunchKernel",
        4,
        40,
        &[("ampere_sgemm_128x64_tn", 265, 500)],
        "",
    ));
    let inv = investigate(&events);
    let (causes, _) = ranked(&inv);
    let attention = cause(causes, "eager-attention");
    let What::EagerAttention { share, .. } = &attention.what else {
        panic!("{:?}", attention.what);
    };
    assert!((share - 250.0 / 750.0).abs() < 1e-9, "{share}");
    assert_eq!(
        (attention.per_step, attention.step_after),
        (Nanos(250 * US), Nanos(750 * US))
    );
    assert_eq!(attention.knobs, [Knob::FusedAttention]);
}

/// The value is its own JSON: written and read back equal, under its schema.
#[test]
fn the_value_round_trips_through_its_json() {
    let mut events = vec![step(1, 0, 1000), step(2, 1000, 1000)];
    events.extend(launched(
        "aten::add",
        "cudaLaunchKernel",
        1,
        500,
        &[("vectorized_elementwise_kernel", 505, 100)],
        "",
    ));
    let inv = investigate(&events);
    let text = investigation::to_json(&inv);
    assert!(text.starts_with(&format!("{{\n  \"schema\": {},", investigation::SCHEMA)));
    assert_eq!(investigation::from_json(&text).expect("reads back"), inv);
    let other = text.replacen(
        &format!("\"schema\": {}", investigation::SCHEMA),
        "\"schema\": 1",
        1,
    );
    let err = investigation::from_json(&other).expect_err("schema 1 is the old document");
    assert!(
        matches!(err, investigation::JsonError::Schema { found: 1 }),
        "{err}"
    );
    // The schema before this one (5: steps' origins, step evidence and two trust
    // messages in words) is refused, naming both versions.
    let previous = text.replacen(
        &format!("\"schema\": {}", investigation::SCHEMA),
        "\"schema\": 5",
        1,
    );
    let err = investigation::from_json(&previous).expect_err("schema 5 is refused");
    assert!(
        matches!(err, investigation::JsonError::Schema { found: 5 }),
        "{err}"
    );
    assert_eq!(investigation::SCHEMA, 6);
    assert_eq!(
        err.to_string(),
        "report.json schema 5; this version reads schema 6"
    );
}
