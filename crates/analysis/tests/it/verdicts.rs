//! Verdicts and idle-gap causes on small synthetic captures with exact expected answers:
//! each gap is judged on its own evidence (launch time, stream-wait-event calls,
//! synchronising calls), and the verdict never calls a dependency wait host-bound.

use std::path::Path;

use analysis::{Bound, CaptureAnalysis, GapCause, SkipConfig as Config};
use trace_model::{Capture, Nanos};

const US: i64 = 1000;

fn load(events: &[String]) -> Capture {
    let json = format!("{{\"traceEvents\": [{}]}}", events.join(","));
    chrome_reader::load_from(json.as_bytes(), Path::new("synthetic.json")).expect("loads")
}

fn report(capture: &Capture) -> CaptureAnalysis {
    analysis::analyze_capture(capture, "synthetic.json", None, &Config::default())
}

/// A host event on the main thread (pid 1, tid 1); `corr` joins a launch to its activity.
fn host(cat: &str, name: &str, ts: f64, dur: f64, corr: Option<u64>) -> String {
    let args = corr.map_or(String::new(), |c| {
        format!(r#", "args": {{"correlation": {c}}}"#)
    });
    format!(
        r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 1, "tid": 1, "ts": {ts}, "dur": {dur}{args}}}"#
    )
}

fn call(name: &str, ts: f64, dur: f64) -> String {
    host("cuda_runtime", name, ts, dur, None)
}

fn launch(corr: u64, ts: f64) -> String {
    host("cuda_runtime", "cudaLaunchKernel", ts, 2.0, Some(corr))
}

fn gpu(cat: &str, name: &str, corr: u64, stream: u64, ts: f64, dur: f64) -> String {
    format!(
        r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 0, "tid": {stream}, "ts": {ts}, "dur": {dur}, "args": {{"correlation": {corr}, "stream": {stream}, "device": 0}}}}"#
    )
}

fn kernel(corr: u64, stream: u64, ts: f64, dur: f64) -> String {
    gpu("kernel", "volta_sgemm_128x64_nn", corr, stream, ts, dur)
}

fn allreduce(corr: u64, stream: u64, ts: f64, dur: f64) -> String {
    gpu(
        "kernel",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
        corr,
        stream,
        ts,
        dur,
    )
}

fn step(ts: f64, dur: f64) -> String {
    host("user_annotation", "ProfilerStep#1", ts, dur, None)
}

/// A kernel queued at +1 µs (its launch call returns at +3 µs) behind a cross-stream wait
/// (`hipStreamWaitEvent` on a collective's event), while the host blocks in a synchronous
/// `hipMemcpyWithStream`: 493 of the 496 µs gap wait on the other stream, 3 µs on the host. Judged by the launch
/// alone, the whole gap was host wait and the capture host/launch-bound.
#[test]
fn a_kernel_queued_behind_a_cross_stream_wait_is_not_host_wait() {
    let c = load(&[
        step(0.0, 801.0),
        launch(1, 1.0),
        kernel(1, 7, 5.0, 100.0),
        launch(2, 3.0),
        allreduce(2, 8, 10.0, 590.0),
        call("hipStreamWaitEvent", 50.0, 2.0),
        launch(3, 106.0),
        host("cuda_runtime", "hipMemcpyWithStream", 110.0, 500.0, Some(4)),
        gpu(
            "gpu_memcpy",
            "Memcpy DtoH (Device -> Host)",
            4,
            8,
            600.0,
            5.0,
        ),
        kernel(3, 7, 601.0, 200.0),
    ]);
    let r = report(&c);
    let crit = r.critical_stream().expect("critical stream");
    assert_eq!(crit.stream, 7);
    let gc = r.gap_causes.as_ref().expect("gap causes");
    assert_eq!(
        gc.host_not_launched,
        Nanos((5 + 3) * US),
        "0..5, and 105..108 (launch 106..108)"
    );
    assert_eq!(
        gc.stream_or_event,
        Nanos(493 * US),
        "queued from 108 to 601"
    );
    assert_eq!(
        gc.sync_call,
        Nanos(0),
        "the host had launched before it blocked"
    );
    assert_eq!(gc.unknown, Nanos(0));
    let top = &gc.evidence[0];
    assert_eq!(
        (top.cause, top.what.as_str(), top.time),
        (
            GapCause::StreamOrEvent,
            "hipStreamWaitEvent",
            Nanos(493 * US)
        )
    );
    // The HTA-style split (launch start against gap start only) calls it all host wait.
    let old = r.idle_causes.expect("idle causes");
    assert_eq!(old.host_wait, Nanos(501 * US));
    let v = &r.verdict;
    assert!(
        (v.idle_share - 501.0 / 801.0).abs() < 1e-12,
        "{}",
        v.idle_share
    );
    assert_ne!(v.bound, Bound::HostLaunchBound);
    assert_eq!(v.bound, Bound::Mixed);
    assert_eq!(v.host_wait_share, Some(8.0 / 501.0));
    assert_eq!(v.stream_wait_share, Some(493.0 / 501.0));
}

/// The host cannot launch while it is blocked in a synchronous copy that waits for a
/// collective on another stream: that part of the gap is a synchronising call (the host
/// waiting for the GPU), the 4 µs after it (the launch call included) and the 3 µs of
/// launch latency host time.
#[test]
fn a_host_blocked_in_a_synchronous_copy_is_not_host_wait() {
    let c = load(&[
        step(0.0, 507.0),
        launch(1, 1.0),
        kernel(1, 7, 5.0, 100.0),
        launch(2, 3.0),
        allreduce(2, 8, 10.0, 380.0),
        host("cuda_runtime", "cudaMemcpy", 20.0, 380.0, Some(3)),
        gpu(
            "gpu_memcpy",
            "Memcpy DtoH (Device -> Host)",
            3,
            8,
            390.0,
            5.0,
        ),
        launch(4, 402.0),
        kernel(4, 7, 407.0, 100.0),
    ]);
    let r = report(&c);
    let gc = r.gap_causes.as_ref().expect("gap causes");
    assert_eq!(
        gc.sync_call,
        Nanos(295 * US),
        "gap 105..407, blocked until 400"
    );
    assert_eq!(
        gc.host_not_launched,
        Nanos((5 + 7) * US),
        "400..404, then 404..407"
    );
    assert_eq!(gc.unknown, Nanos(0));
    assert_eq!(gc.stream_or_event, Nanos(0));
    assert_eq!(gc.evidence[0].what, "cudaMemcpy");
    assert_eq!(r.verdict.bound, Bound::Mixed);
    assert_eq!(r.verdict.sync_wait_share, Some(295.0 / 307.0));
}

/// A kernel that starts long after its launch with no wait recorded: beyond the launch
/// latency the trace has no evidence, so the idle time is unknown, not host wait.
#[test]
fn a_long_queue_without_a_recorded_wait_is_unknown() {
    let c = load(&[
        step(0.0, 507.0),
        launch(1, 1.0),
        kernel(1, 7, 5.0, 100.0),
        launch(2, 106.0),
        kernel(2, 7, 407.0, 100.0),
    ]);
    let r = report(&c);
    let gc = r.gap_causes.as_ref().expect("gap causes");
    assert_eq!(
        gc.host_not_launched,
        Nanos((5 + 3 + 30) * US),
        "105..108, then 30 µs latency"
    );
    assert_eq!(gc.unknown, Nanos(269 * US), "138..407");
    assert_eq!(r.verdict.bound, Bound::Inconclusive);
}

/// The GPU waits for a host that is busy with its own work: host/launch-bound, the gap
/// all "host did not launch yet".
#[test]
fn a_host_busy_between_launches_is_host_wait() {
    let c = load(&[
        step(0.0, 507.0),
        launch(1, 1.0),
        kernel(1, 7, 5.0, 100.0),
        host("cpu_op", "aten::nonzero", 10.0, 380.0, None),
        launch(2, 402.0),
        kernel(2, 7, 407.0, 100.0),
    ]);
    let r = report(&c);
    let gc = r.gap_causes.as_ref().expect("gap causes");
    assert_eq!(
        gc.host_not_launched,
        Nanos((5 + 302) * US),
        "105..404, then 3 µs of latency"
    );
    assert_eq!(gc.unknown, Nanos(0));
    assert_eq!(r.verdict.bound, Bound::HostLaunchBound);
}

/// Without any launch in the trace, idle time has no evidence: the verdict says so
/// instead of guessing.
#[test]
fn idle_without_evidence_is_inconclusive() {
    let c = load(&[
        step(0.0, 507.0),
        gpu("kernel", "volta_sgemm_128x64_nn", 1, 7, 5.0, 100.0),
        gpu("kernel", "volta_sgemm_128x64_nn", 2, 7, 407.0, 100.0),
    ]);
    let r = report(&c);
    let gc = r.gap_causes.as_ref().expect("gap causes");
    assert_eq!(gc.unknown, Nanos(302 * US), "nothing is launched");
    assert_eq!(
        gc.host_not_launched,
        Nanos(5 * US),
        "0..5: host-only time before the step's first GPU activity"
    );
    assert_eq!(r.verdict.bound, Bound::Inconclusive);
}

/// A step whose first 60.5 % is host-only work (a Python function preprocessing the
/// batch) before one kernel that then runs to the step's end: over the GPU's part alone
/// the stream is 100 % busy (GPU-bound); over the step it idles 60.5 %, waiting for the
/// host, and the host-only time names the function.
#[test]
fn the_step_is_the_step_not_the_gpus_part_of_it() {
    let c = load(&[
        step(0.0, 1000.0),
        host(
            "python_function",
            "data.py(42): decode_images",
            0.0,
            600.0,
            None,
        ),
        launch(1, 601.0),
        kernel(1, 7, 605.0, 395.0),
    ]);
    let r = report(&c);
    let w = r.window.expect("window");
    assert_eq!((w.start, w.end), (Nanos(0), Nanos(1000 * US)));
    let v = &r.verdict;
    assert!((v.idle_share - 0.605).abs() < 1e-12, "{}", v.idle_share);
    assert_eq!(v.bound, Bound::HostLaunchBound);
    let gc = r.gap_causes.as_ref().expect("gap causes");
    assert_eq!(
        gc.host_not_launched,
        Nanos(605 * US),
        "0..603 and 2 µs latency"
    );
    let h = r.host_only.as_ref().expect("host-only time");
    assert_eq!(h.before_gpu, Nanos(605 * US));
    assert_eq!(h.after_gpu, Nanos(0));
    assert_eq!(h.step_time, Nanos(1000 * US));
    assert_eq!(h.top[0].name, "data.py(42): decode_images");
    assert_eq!(h.top[0].overlapped, Nanos(600 * US));
}

/// Host-only time after the step's last kernel (the host still inside the step) is the
/// GPU waiting for the host, not an unknown.
#[test]
fn host_time_after_the_last_kernel_of_the_step_is_host_wait() {
    let c = load(&[
        step(0.0, 1000.0),
        launch(1, 1.0),
        kernel(1, 7, 5.0, 395.0),
        host("cpu_op", "aten::item", 400.0, 590.0, None),
    ]);
    let r = report(&c);
    let gc = r.gap_causes.as_ref().expect("gap causes");
    assert_eq!(gc.host_not_launched, Nanos(605 * US), "0..5 and 400..1000");
    assert_eq!(gc.unknown, Nanos(0));
    let h = r.host_only.as_ref().expect("host-only time");
    assert_eq!(
        (h.before_gpu, h.after_gpu),
        (Nanos(5 * US), Nanos(600 * US))
    );
    assert_eq!(h.top[0].name, "aten::item");
    assert_eq!(r.verdict.bound, Bound::HostLaunchBound);
}

fn numbered_step(n: u32, ts: f64, dur: f64) -> String {
    host(
        "user_annotation",
        &format!("ProfilerStep#{n}"),
        ts,
        dur,
        None,
    )
}

/// A first step whose launch call takes 200 ms (lazy module loading) before three steady
/// steps 99 % busy: the first step is warm-up, left out of the window, and the verdict is
/// decided on the steady steps (GPU-bound), not on a window that is mostly the 200 ms
/// launch (which read as host/launch-bound).
#[test]
fn a_first_launch_of_200_ms_is_warm_up_not_steady_state() {
    let mut events = vec![
        numbered_step(1, 0.0, 210_000.0),
        host("cuda_runtime", "cudaLaunchKernel", 10.0, 200_000.0, Some(1)),
        kernel(1, 7, 200_015.0, 100.0),
    ];
    for k in 0..3u32 {
        let s = 210_000.0 + f64::from(k) * 1000.0;
        events.push(numbered_step(k + 2, s, 1000.0));
        events.push(launch(u64::from(k) + 2, s + 1.0));
        events.push(kernel(u64::from(k) + 2, 7, s + 5.0, 990.0));
    }
    let r = report(&load(&events));
    assert_eq!(r.warm_up.steps, vec![0]);
    assert!(!r.warm_up.all);
    assert_eq!(r.warm_up.event_count, 1);
    assert_eq!(r.warm_up.events[0].name, "cudaLaunchKernel");
    assert_eq!(r.warm_up.events[0].dur, Nanos(200_000 * US));
    let w = r.window.expect("window");
    assert_eq!((w.start, w.end), (Nanos(210_000 * US), Nanos(213_000 * US)));
    assert!((r.verdict.busy_share - 0.99).abs() < 1e-12);
    assert_eq!(r.verdict.bound, Bound::GpuBound);
}

/// A capture that is all warm-up (each launch 200 ms) gets no steady-state verdict.
#[test]
fn a_capture_of_warm_up_only_says_so() {
    let r = report(&load(&[
        step(0.0, 420_000.0),
        host("cuda_runtime", "cudaLaunchKernel", 10.0, 200_000.0, Some(1)),
        kernel(1, 7, 200_015.0, 100.0),
        host(
            "cuda_runtime",
            "cudaLaunchKernel",
            200_020.0,
            200_000.0,
            Some(2),
        ),
        kernel(2, 7, 400_025.0, 100.0),
    ]));
    assert!(r.warm_up.all);
    assert_eq!(r.warm_up.event_count, 2);
    assert_eq!(r.verdict.bound, Bound::WarmUp);
}

/// Iterations on the shared inference captures, with the evidence used: the vLLM graph
/// executions have no ProfilerStep and are found from vLLM's own markers (one forward
/// each, as their one `execute_…` annotation in the MANIFEST's category counts says), the
/// Qwen capture from its ProfilerStep (as many as the MANIFEST counts).
#[test]
fn iterations_of_the_shared_inference_captures() {
    let Some(set) = test_support::real_traces("iterations_of_the_shared_inference_captures") else {
        return;
    };
    let mut seen = 0;
    for t in &set.kineto {
        let vllm = t.rel.starts_with("tracelens-vllm-rocm-graph/");
        let qwen = t.rel.starts_with("tracelens-h100-qwen/");
        if !vllm && !qwen {
            continue;
        }
        let loaded = load::load(&t.path).expect("loads");
        let r = analysis::analyze_capture(&loaded[0].capture, &t.rel, None, &Config::default());
        let origin = r.steps.origin.describe();
        eprintln!(
            "{}: {} step(s) from {origin}; kinds {:?}",
            t.rel,
            r.steps.steps.len(),
            r.steps.forward_kinds
        );
        assert!(!r.steps.steps.is_empty(), "{}: no iteration", t.rel);
        if qwen {
            assert_eq!(origin, "ProfilerStep#N annotations", "{}", t.rel);
            assert_eq!(r.steps.steps.len() as u64, t.profiler_steps, "{}", t.rel);
        } else if t.rel.ends_with("graph_execution.json.gz") {
            assert!(origin.contains("vLLM execute"), "{}: {origin}", t.rel);
            let annotations = t.by_cat.get("user_annotation").copied().unwrap_or(0);
            assert_eq!(r.steps.steps.len() as u64, annotations, "{}", t.rel);
            let expected = if t.rel.contains("decode_full") {
                "decode 32"
            } else {
                "prefill 9 + decode 37"
            };
            assert_eq!(r.steps.forward_kinds, [expected], "{}", t.rel);
        } else {
            // The graph-capture runs: one capture each, all of it warm-up.
            assert!(
                origin.contains("vLLM CUDA-graph capture"),
                "{}: {origin}",
                t.rel
            );
            assert_eq!(r.steps.forward_kinds, ["graph capture"], "{}", t.rel);
            assert!(r.warm_up.all, "{}: {:?}", t.rel, r.warm_up);
            assert_eq!(r.verdict.bound, Bound::WarmUp, "{}", t.rel);
        }
        seen += 1;
    }
    assert!(seen >= 5, "{seen} inference captures");
}

/// A "cannot tell" reason serialises tagged with its stable code, with its figures as
/// numbers, and reads back as itself: the investigation keeps it typed in report.json.
#[test]
fn cannot_tell_serialises_as_its_code() {
    use analysis::CannotTell;
    let all = [
        CannotTell::NoGpuWork,
        CannotTell::WarmUpOnly,
        CannotTell::GraphCapture,
        CannotTell::Compilation,
        CannotTell::TooLittleGpuWork {
            gpu_time: Nanos(900 * US),
        },
        CannotTell::SingleOverlappedStep,
        CannotTell::NoEvidence,
    ];
    for reason in all {
        let json = serde_json::to_value(reason).expect("serialises");
        assert_eq!(json["code"], reason.code(), "{json}");
        let back: CannotTell = serde_json::from_value(json).expect("reads back");
        assert_eq!(back, reason);
    }
    let json = serde_json::to_value(all[4]).expect("serialises");
    assert_eq!(json["gpu_time"], 900 * US);
}

/// The capture that would decide a "cannot tell" names what the capture lacked: graph
/// replays after the capture, launch correlation for gaps without evidence.
#[test]
fn cannot_tell_names_the_capture_that_decides() {
    use analysis::CannotTell;
    assert!(
        CannotTell::GraphCapture
            .decide_with()
            .contains("graph replays")
    );
    assert!(
        CannotTell::NoEvidence
            .decide_with()
            .contains("launch correlation")
    );
}
