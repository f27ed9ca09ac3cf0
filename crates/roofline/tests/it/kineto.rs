//! Kineto captures: the synthetic fixture end to end, and hand computations on the
//! tracelens-h100 captures (taken with record_shapes=True).

use roofline::{Dtype, Roofline, RooflineBound, RooflineOp};
use test_support::{traces_dir, workspace_root};

use crate::read_gz_json;

fn fixture() -> Roofline {
    roofline::analyze(&workspace_root().join("testdata/roofline/kineto_shapes.json"))
        .expect("fixture analyses")
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() <= 1e-9 * b.abs())
}

fn row<'a>(report: &'a Roofline, op: &str) -> &'a RooflineOp {
    report
        .ops
        .iter()
        .find(|o| o.op.as_deref() == Some(op))
        .unwrap_or_else(|| panic!("no row for {op}"))
}

#[test]
fn fixture_ops_costs_times_and_peaks() {
    let r = fixture();
    assert_eq!(r.device.model.as_deref(), Some("NVIDIA H100 SXM5 80GB"));
    assert_eq!(r.device.label(), "read");

    // linear (FP32, its addmm's kernel says tf32): one op, not linear and addmm twice.
    let linear = row(&r, "aten::linear");
    assert!(r.ops.iter().all(|o| o.op.as_deref() != Some("aten::addmm")));
    assert_eq!(linear.flops.value, Some(2.0 * 512.0 * 512.0 * 256.0));
    assert_eq!(linear.time_ns.value.0, 50_000);
    assert_eq!(linear.dtype, Dtype::Tf32);
    assert!(close(linear.peak_flops_per_s.value, 494.7e12));

    // mm on an sgemm kernel: FP32 on CUDA cores, never a tensor-core peak.
    let mm = r
        .ops
        .iter()
        .find(|o| o.op.as_deref() == Some("aten::mm") && o.flops.value.is_some())
        .expect("mm row");
    assert_eq!(mm.flops.value, Some(2.0 * 64.0 * 32.0 * 96.0));
    assert_eq!(mm.dtype, Dtype::Fp32);
    assert!(close(mm.peak_flops_per_s.value, 66.9e12));
    assert!(!close(mm.peak_flops_per_s.value, 989.4e12));

    let bmm = row(&r, "aten::bmm");
    assert_eq!(bmm.dtype, Dtype::Bf16);
    assert!(close(bmm.peak_flops_per_s.value, 989.4e12));
    assert!(close(bmm.peak_bytes_per_s.value, 3350e9));

    // Causal SDPA: 4·B·H·N²·d / 2, over both of its kernels' time.
    let sdpa = row(&r, "aten::scaled_dot_product_attention");
    assert_eq!(
        sdpa.flops.value,
        Some(4.0 * 2.0 * 4.0 * 128.0 * 128.0 * 64.0 / 2.0)
    );
    assert_eq!((sdpa.kernels.value, sdpa.time_ns.value.0), (2, 45_000));

    // conv2d: 8 outputs x 3 taps per dim, one tap in the padding → 23² positions;
    // 2 x batch 2 x (8 / 2 groups) x 12 x 529.
    let conv = row(&r, "aten::conv2d");
    assert_eq!(conv.flops.value, Some(2.0 * 2.0 * 4.0 * 12.0 * 529.0));

    // Bound: intensity against the ridge of the op's own dtype.
    for o in &r.ops {
        let (Some(i), Some(ridge)) = (o.intensity.value, o.ridge_point.value) else {
            continue;
        };
        let want = if i >= ridge {
            RooflineBound::Compute
        } else {
            RooflineBound::Memory
        };
        assert_eq!(o.bound.value, want, "{}", o.name);
        let peak = o.peak_flops_per_s.value.expect("peak") / o.peak_bytes_per_s.value.expect("bw");
        assert_eq!(ridge, peak);
    }

    // The trust list: the op without shapes, and the add that has no model.
    let codes: Vec<(&str, u64)> = r.trust.iter().map(|t| (t.code.as_ref(), t.count)).collect();
    assert!(codes.contains(&("op-without-shapes", 1)), "{codes:?}");
    assert!(
        codes.contains(&("activity-not-under-modelled-op", 1)),
        "{codes:?}"
    );
    assert_eq!(r.gpu_time_ns.value.0, 180_000);
    assert_eq!(r.costed_time_ns.value.0, 170_000);
}

/// The first `cpu_op` event named `name` in a raw trace, with its Input Dims.
fn first_op(trace: &serde_json::Value, name: &str) -> Vec<Vec<i64>> {
    let event = trace["traceEvents"]
        .as_array()
        .expect("traceEvents")
        .iter()
        .find(|e| e["cat"] == "cpu_op" && e["name"] == name)
        .unwrap_or_else(|| panic!("no {name} event"));
    event["args"]["Input Dims"]
        .as_array()
        .expect("Input Dims")
        .iter()
        .map(|d| {
            d.as_array()
                .map(|v| v.iter().filter_map(|x| x.as_i64()).collect())
                .unwrap_or_default()
        })
        .collect()
}

fn dims_text(dims: &[Vec<i64>]) -> String {
    serde_json::to_string(dims).expect("serialises")
}

/// The report row of op `name` with these Input Dims.
fn row_with<'a>(report: &'a Roofline, name: &str, dims: &[Vec<i64>]) -> &'a RooflineOp {
    let text = dims_text(dims);
    report
        .ops
        .iter()
        .find(|o| o.op.as_deref() == Some(name) && o.detail.starts_with(&text))
        .unwrap_or_else(|| panic!("no {name} row with {text}"))
}

#[test]
fn tracelens_h100_gemms_and_sdpa_equal_hand_computation() {
    let Some(traces) = traces_dir("tracelens_h100_gemms_and_sdpa_equal_hand_computation") else {
        return;
    };
    let dir = traces.join("pytorch/tracelens-h100");
    let owl = dir.join("google_owlv2-large-patch14-ensemble__1016001.json.gz");
    let bert = dir.join("gaunernst_bert-small-uncased__1016001.json.gz");
    let owl_raw = read_gz_json(&owl);
    let bert_raw = read_gz_json(&bert);
    let owl_report = roofline::analyze(&owl).expect("owlv2 analyses");
    let bert_report = roofline::analyze(&bert).expect("bert analyses");

    // 1. bmm [B,M,K] x [B,K,N]: 2·B·M·N·K.
    let d = first_op(&owl_raw, "aten::bmm");
    let hand = 2.0 * (d[0][0] * d[0][1] * d[1][2] * d[0][2]) as f64;
    let r = row_with(&owl_report, "aten::bmm", &d);
    assert_eq!(r.flops_per_occurrence.value, Some(hand));
    // 2. linear x[..., K] · W[N, K]ᵀ: 2·(rows of x)·N·K.
    let d = first_op(&owl_raw, "aten::linear");
    let rows: i64 = d[0][..d[0].len() - 1].iter().product();
    let hand = 2.0 * (rows * d[1][0] * d[1][1]) as f64;
    let r = row_with(&owl_report, "aten::linear", &d);
    assert_eq!(r.flops_per_occurrence.value, Some(hand));
    // 3. linear without a bias (owlv2's text projection [1,768] x [768,768]ᵀ, which calls
    // matmul and mm inside: counted once, as the linear).
    let event = owl_raw["traceEvents"]
        .as_array()
        .expect("traceEvents")
        .iter()
        .find(|e| {
            e["cat"] == "cpu_op"
                && e["name"] == "aten::linear"
                && e["args"]["Input Dims"][2]
                    .as_array()
                    .is_some_and(|b| b.is_empty())
        })
        .expect("a linear without bias");
    let d: Vec<Vec<i64>> =
        serde_json::from_value(event["args"]["Input Dims"].clone()).expect("dims");
    let hand = 2.0 * (d[0][0] * d[1][0] * d[1][1]) as f64;
    let r = row_with(&owl_report, "aten::linear", &d);
    assert_eq!(r.flops_per_occurrence.value, Some(hand));
    // 4. SDPA q [B,H,N,d], not causal in this capture: 2 matmuls of 2·B·H·N·N·d.
    let d = first_op(&bert_raw, "aten::scaled_dot_product_attention");
    let (b, h, n, e) = (d[0][0], d[0][1], d[0][2], d[0][3]);
    let hand = 4.0 * (b * h * n * d[1][2] * e) as f64;
    let r = row_with(&bert_report, "aten::scaled_dot_product_attention", &d);
    assert_eq!(r.flops_per_occurrence.value, Some(hand));
    eprintln!(
        "tracelens-h100 hand checks: bmm, linear, linear without bias (owlv2) and SDPA {:?} (bert): {hand} FLOPs",
        [b, h, n, e]
    );

    // Every op is bf16 on an H100 SXM, held against the BF16 tensor peak.
    for report in [&owl_report, &bert_report] {
        assert_eq!(
            report.device.model.as_deref(),
            Some("NVIDIA H100 SXM5 80GB")
        );
        for o in &report.ops {
            assert_eq!(o.dtype, Dtype::Bf16, "{} {}", o.name, o.detail);
            assert!(close(o.peak_flops_per_s.value, 989.4e12));
        }
        assert!(report.attributed_time_ns.value.0 <= report.gpu_time_ns.value.0);
        assert!(report.ops.len() >= 4);
    }
}

/// Against TraceLens's reference perf report of the same captures (GEMM.csv, SDPA_fwd.csv
/// for H100 and MI300X): per GEMM and SDPA, our FLOPs equal TraceLens's (which adds M·N for
/// a bias) and our kernel time (the launch join) equals its kernel time sum.
#[test]
fn tracelens_reference_gemm_and_sdpa_rows() {
    let Some(traces) = traces_dir("tracelens_reference_gemm_and_sdpa_rows") else {
        return;
    };
    let dir = traces.join("pytorch/tracelens-h100-qwen");
    let mut checked = 0;
    for gpu in ["h100", "mi300"] {
        let report =
            roofline::analyze(&dir.join(format!("{gpu}/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz")))
                .expect("capture analyses");
        for file in ["GEMM.csv", "SDPA_fwd.csv"] {
            let path = dir.join(format!("reference/{gpu}_perf_report_csvs/{file}"));
            let mut reader = csv::Reader::from_path(&path).expect("reference CSV");
            let headers = reader.headers().expect("header").clone();
            for record in reader.records() {
                let record = record.expect("row");
                let field = |name: &str| {
                    let i = headers
                        .iter()
                        .position(|h| h == name)
                        .unwrap_or_else(|| panic!("{name}"));
                    record[i].to_owned()
                };
                let num = |name: &str| {
                    field(name)
                        .parse::<f64>()
                        .unwrap_or_else(|_| panic!("{name}"))
                };
                let count = num("name_count") as u64;
                let tl_flops = num("GFLOPS_first") * 1e9;
                let tl_time = num("Kernel Time (µs)_sum") * 1e3;
                let (want, extra) = if file == "GEMM.csv" {
                    let [b, m, n, k] = ["B", "M", "N", "K"].map(|p| num(&format!("param: {p}")));
                    let bias = if field("param: bias") == "True" {
                        m * n
                    } else {
                        0.0
                    };
                    (Some(2.0 * b * m * n * k), bias)
                } else {
                    (None, 0.0)
                };
                let candidates: Vec<&RooflineOp> = report
                    .ops
                    .iter()
                    .filter(|o| o.occurrences.value == count)
                    .filter(|o| match want {
                        Some(w) => o.flops_per_occurrence.value == Some(w),
                        None => o.kind == roofline::hlo_cost::OpKind::Attention,
                    })
                    .collect();
                let [ours] = candidates.as_slice() else {
                    panic!(
                        "{gpu} {file} {}: {} candidate rows",
                        field("Input Dims_first"),
                        candidates.len()
                    );
                };
                let flops = ours.flops_per_occurrence.value.expect("modelled");
                assert!(
                    (flops + extra - tl_flops).abs() <= 1e-9 * tl_flops,
                    "{gpu} {file}: ours {flops} + bias {extra} vs TraceLens {tl_flops}"
                );
                let time = ours.time_ns.value.0 as f64;
                assert!(
                    (time - tl_time).abs() <= 1e-4 * tl_time,
                    "{gpu} {file}: time {time} vs TraceLens {tl_time}"
                );
                checked += 1;
            }
        }
    }
    eprintln!("TraceLens reference: {checked} GEMM/SDPA rows, FLOPs and kernel time equal");
    assert_eq!(checked, 12);
}
