//! Time accounting on small synthetic captures with exact expected numbers: GPU idle
//! over concurrent streams, the verdict on compute streams, work in flight at the
//! capture's start, clock skew, and composite ops in the default-mode buckets.

use std::path::Path;

use analysis::{Bound, CaptureAnalysis, Phase, SkipConfig as Config, buckets};
use trace_model::{Capture, Nanos};

fn load(events: &str) -> Capture {
    let json = format!("{{\"traceEvents\": [{events}]}}");
    chrome_reader::load_from(json.as_bytes(), Path::new("synthetic.json")).expect("loads")
}

fn report(capture: &Capture) -> CaptureAnalysis {
    analysis::analyze_capture(capture, "synthetic.json", None, &Config::default())
}

fn step(ts: u64, dur: u64) -> String {
    format!(
        r#"{{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": {ts}, "dur": {dur}}}"#
    )
}

fn launch(corr: u64, ts: u64) -> String {
    format!(
        r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {ts}, "dur": 2, "args": {{"correlation": {corr}}}}}"#
    )
}

fn kernel(name: &str, corr: u64, stream: u64, ts: u64, dur: u64) -> String {
    format!(
        r#"{{"ph": "X", "cat": "kernel", "name": "{name}", "pid": 0, "tid": {stream}, "ts": {ts}, "dur": {dur}, "args": {{"correlation": {corr}, "stream": {stream}, "device": 0}}}}"#
    )
}

fn op(name: &str, ts: u64, dur: u64) -> String {
    format!(
        r#"{{"ph": "X", "cat": "cpu_op", "name": "{name}", "pid": 1, "tid": 1, "ts": {ts}, "dur": {dur}}}"#
    )
}

const US: i64 = 1000;

/// Two kernels overlap on two streams: SKIP's GPU idle is IL minus their union (20 µs),
/// where IL minus the sum of durations would be -20 µs.
#[test]
fn gpu_idle_is_il_minus_the_union_of_kernels() {
    let c = load(
        &[
            step(0, 200),
            op("aten::mm", 0, 15),
            launch(1, 10),
            launch(2, 12),
            kernel("volta_sgemm_128x64_nn", 1, 7, 20, 50),
            kernel("volta_sgemm_128x64_nn", 2, 8, 30, 50),
        ]
        .join(","),
    );
    let t = report(&c).total.expect("kernels");
    assert_eq!(t.kernels, 2);
    assert_eq!(
        t.il,
        Nanos(80 * US),
        "last end 80 µs - first top-level op 0"
    );
    assert_eq!(t.kernel_time, Nanos(100 * US));
    assert_eq!(t.kernel_union, Nanos(60 * US));
    assert_eq!(t.gpu_idle, Nanos(20 * US));
    assert_eq!(t.tklqt, Nanos((10 + 18) * US));
}

/// A collective stream busy the whole window does not make the capture GPU-bound: the
/// critical stream is the one with the most compute, and the communication stream is
/// reported beside it.
#[test]
fn the_verdict_is_decided_on_the_compute_stream() {
    let c = load(
        &[
            step(0, 100),
            launch(1, 0),
            launch(2, 5),
            launch(3, 60),
            kernel(
                "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                1,
                9,
                0,
                100,
            ),
            kernel("volta_sgemm_128x64_nn", 2, 7, 10, 20),
            kernel("volta_sgemm_128x64_nn", 3, 7, 70, 10),
        ]
        .join(","),
    );
    let r = report(&c);
    let critical = r.critical_stream().expect("critical");
    assert_eq!(critical.stream, 7);
    let comm = r.comm_stream.as_ref().expect("communication stream");
    assert_eq!(r.streams[comm.stream].stream, 9);
    assert_eq!(comm.share, 1.0);
    assert_eq!(r.window.expect("window").span(), Nanos(100 * US));
    assert!(
        (r.verdict.busy_share - 0.30).abs() < 1e-12,
        "{}",
        r.verdict.busy_share
    );
    assert_ne!(r.verdict.bound, Bound::GpuBound);
    // Stream 7 idles 0..10 and 30..70 µs waiting for kernels launched after each gap
    // began (host wait, 50 µs), then 80..100 µs with nothing after while the host is
    // still inside the step (host wait too, 20 µs).
    assert_eq!(r.verdict.host_wait_share, Some(1.0));
    assert!((r.verdict.idle_share - 0.70).abs() < 1e-12);
    assert_eq!(r.verdict.bound, Bound::HostLaunchBound);
}

/// Kernels with no launch in the capture and a correlation id below the first launch's
/// were issued before the capture began: counted apart, kept out of steps and SKIP.
#[test]
fn work_in_flight_at_the_start_is_counted_apart() {
    let c = load(
        &[
            kernel("volta_sgemm_128x64_nn", 1, 7, 0, 40),
            kernel("volta_sgemm_128x64_nn", 2, 7, 40, 30),
            step(50, 200),
            op("aten::mm", 50, 15),
            launch(5, 55),
            kernel("volta_sgemm_128x64_nn", 5, 7, 80, 10),
        ]
        .join(","),
    );
    let r = report(&c);
    assert_eq!(r.in_flight.activities, 2);
    assert_eq!(r.in_flight.time, Nanos(70 * US));
    let t = r.total.expect("kernels");
    assert_eq!(t.kernels, 1);
    assert_eq!(t.il, Nanos(40 * US), "90 - 50 µs");
    assert_eq!(t.gpu_idle, Nanos(30 * US));
    // The window is the step's wall time, which the in-flight kernels do not widen.
    let w = r.window.expect("window");
    assert_eq!((w.start, w.end), (Nanos(50 * US), Nanos(250 * US)));
    assert_eq!(r.diagnostics.count("in-flight-at-start"), 2);
}

/// A kernel that starts before its launch call is clock skew: counted, never a
/// negative delay in a statistic.
#[test]
fn a_start_before_the_launch_is_clock_skew() {
    let c = load(
        &[
            step(0, 200),
            launch(1, 100),
            kernel("volta_sgemm_128x64_nn", 1, 7, 90, 5),
            launch(2, 110),
            kernel("volta_sgemm_128x64_nn", 2, 7, 130, 5),
        ]
        .join(","),
    );
    let r = report(&c);
    assert_eq!(r.launch_kernels.with_launch, 2);
    assert_eq!(r.launch_kernels.negative, 1);
    let d = r.launch_kernels.delay.expect("one delay");
    assert_eq!((d.min, d.max), (Nanos(20 * US), Nanos(20 * US)));
    let t = r.total.expect("kernels");
    assert_eq!(t.skewed_kernels, 1);
    assert_eq!(t.tklqt, Nanos(20 * US));
    assert_eq!(r.diagnostics.count("clock-skew"), 1);

    let mut rows = Vec::new();
    let loaded = [analysis::Loaded {
        path: "synthetic.json".into(),
        rank: None,
        capture: c,
        programs: Vec::new(),
    }];
    analysis::skip_stats_loaded(
        Path::new("synthetic.json"),
        &loaded,
        &Config::default(),
        &mut rows,
    )
    .expect("rows");
    let text = String::from_utf8(rows).expect("utf-8");
    assert!(
        !text.contains(",-"),
        "no negative number in rows.csv:\n{text}"
    );
}

/// A composite custom op's kernels go where each kernel belongs; an ATen primitive whose
/// kernels are of one class keeps its name's bucket; one whose kernels are of several
/// classes gives each its class; `aten::topk` is not `aten::to`.
#[test]
fn composite_ops_are_bucketed_by_kernel() {
    let c = load(&[
        op("vllm::fused_moe", 0, 100),
        launch(1, 1),
        launch(2, 3),
        launch(3, 5),
        kernel("moe_align_block_size_kernel", 1, 7, 10, 4),
        kernel("fused_moe_kernel", 2, 7, 14, 50),
        kernel("void vllm::act_and_mul_kernel<c10::BFloat16>()", 3, 7, 64, 6),
        op("aten::mm", 200, 10),
        launch(4, 201),
        launch(5, 202),
        kernel("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN", 4, 7, 210, 20),
        kernel("mystery_kernel", 5, 7, 230, 3),
        op("aten::linear", 300, 10),
        launch(6, 301),
        launch(7, 302),
        kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 6, 7, 310, 30),
        kernel("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>()", 7, 7, 340, 2),
        op("aten::matmul", 500, 10),
        launch(9, 501),
        launch(10, 502),
        kernel("nvjet_tst_64x8_64x16_4x1_v_bz_TNT", 9, 7, 510, 8),
        kernel("void c10d::symmetric_memory::multimem_all_reduce_kernel<float, 4>()", 10, 8, 520, 9),
        op("aten::topk", 400, 10),
        launch(8, 401),
        kernel("void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>()", 8, 7, 410, 7),
    ]
    .join(","));
    let s = analysis::gpu_summary(&c, "synthetic.json", None);
    let bucket = |b: &str| {
        s.buckets
            .iter()
            .find(|r| r.bucket == b)
            .map_or(0, |r| r.time_ns.0)
    };
    // The bias add under aten::linear is a helper of its GEMM; the all-reduce under
    // aten::matmul is not, so that op's kernels each go by class.
    assert_eq!(bucket(buckets::GEMM), (50 + 20 + 3 + 30 + 2 + 8) * US);
    assert_eq!(bucket(buckets::REDUCTION), (4 + 7) * US);
    assert_eq!(bucket(buckets::ELEMENTWISE), 6 * US);
    assert_eq!(bucket(buckets::COMMUNICATION), 9 * US);
    assert_eq!(bucket(buckets::MEMORY), 0);
    assert_eq!(
        s.buckets
            .iter()
            .map(|b| b.time_ns)
            .sum::<trace_model::Nanos>(),
        s.gpu_time_ns
    );
    let row = |name: &str| s.ops.iter().find(|o| o.name == name).expect(name);
    let moe = row("vllm::fused_moe");
    assert_eq!((moe.bucket, moe.mixed), (buckets::GEMM, true));
    let mm = row("aten::mm");
    assert_eq!((mm.bucket, mm.mixed), (buckets::GEMM, false));
    assert!(!row("aten::linear").mixed);
    let matmul = row("aten::matmul");
    assert_eq!(
        (matmul.bucket, matmul.mixed),
        (buckets::COMMUNICATION, true)
    );
    assert_eq!(row("aten::topk").bucket, buckets::REDUCTION);
    assert_eq!(s.phase, Phase::Inference);
    assert_eq!(s.dominant_backend, None);
}

/// Attention time whose kernels name no known backend is `unknown`, with its kernels.
#[test]
fn unrecognised_attention_is_unknown_not_absent() {
    let c = load(
        &[
            op("mylib::attention", 0, 100),
            launch(1, 1),
            kernel("my_custom_attention_kernel", 1, 7, 10, 40),
            op("aten::_scaled_dot_product_flash_attention", 100, 100),
            launch(2, 101),
            kernel(
                "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>(Flash_fwd_params)",
                2,
                7,
                110,
                10,
            ),
        ]
        .join(","),
    );
    let s = analysis::gpu_summary(&c, "synthetic.json", None);
    assert_eq!(s.dominant_backend, Some(analysis::UNKNOWN_BACKEND));
    assert_eq!(
        s.unknown_attention_kernels,
        vec![(
            "my_custom_attention_kernel".to_owned(),
            trace_model::Nanos(40 * US)
        )]
    );
}

/// Training advice only where there is training.
#[test]
fn hints_fit_the_phase() {
    let events = |extra: &str| {
        let mut e = vec![
            op("nccl:all_reduce", 0, 100),
            launch(1, 1),
            kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)", 1, 9, 10, 80),
            op("aten::mm", 100, 10),
            launch(2, 101),
            kernel("volta_sgemm_128x64_nn", 2, 7, 110, 20),
        ];
        if !extra.is_empty() {
            e.push(extra.to_owned());
        }
        e.join(",")
    };
    let inference = analysis::gpu_summary(&load(&events("")), "x", None);
    let training = analysis::gpu_summary(
        &load(&events(&op(
            "autograd::engine::evaluate_function: MmBackward0",
            200,
            10,
        ))),
        "x",
        None,
    );
    assert_eq!(inference.phase, Phase::Inference);
    assert_eq!(training.phase, Phase::Training);
    let text = |s: &analysis::GpuSummary| {
        analysis::hints(s)
            .value
            .iter()
            .map(|h| h.2)
            .collect::<String>()
    };
    assert!(!text(&inference).contains("no_sync"));
    assert!(text(&training).contains("no_sync"));
}

/// Kernels that start long after their launch, later than a whole step: the report says
/// the GPU runs more than a step behind the host.
#[test]
fn a_gpu_more_than_a_step_behind_is_said_in_words() {
    let step_n = |n: u64, ts: u64| {
        format!(
            r#"{{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{n}", "pid": 1, "tid": 1, "ts": {ts}, "dur": 10}}"#
        )
    };
    let c = load(
        &[
            step_n(1, 0),
            launch(1, 1),
            step_n(2, 10),
            launch(2, 11),
            step_n(3, 20),
            launch(3, 21),
            kernel("volta_sgemm_128x64_nn", 1, 7, 50, 30),
            kernel("volta_sgemm_128x64_nn", 2, 7, 80, 30),
            kernel("volta_sgemm_128x64_nn", 3, 7, 110, 30),
        ]
        .join(","),
    );
    let r = report(&c);
    let behind = r.gpu_behind.expect("behind");
    assert_eq!(behind.median_step, Nanos(10 * US));
    assert_eq!(behind.median_delay, Nanos(69 * US));
}
