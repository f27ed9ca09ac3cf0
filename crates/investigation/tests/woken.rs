//! A launching thread that idles until another thread wakes it: the GPU waits for what
//! the waker was doing, so the idle split names the waker's work (not "nothing recorded"
//! on the launching thread) and removing that work in the replay shortens the step
//! (host_cause rule 9; the replay's cross-thread edges, inferred by the same rule).

use trace_model::Nanos;

mod common;
use common::{US, cause, causes, ev, investigate, replayed, step};

/// A launch call on host thread `tid` at `ts` (5 µs) and the kernel it issued on stream 7.
fn launch(tid: u64, corr: u64, ts: u64, kernel: (&str, u64, u64)) -> Vec<String> {
    vec![
        ev(
            "cuda_runtime",
            "cudaLaunchKernel",
            tid,
            ts,
            5,
            &format!(r#""correlation": {corr}"#),
        ),
        ev(
            "kernel",
            kernel.0,
            7,
            kernel.1,
            kernel.2,
            &format!(r#""correlation": {corr}, "stream": 7, "device": 0"#),
        ),
    ]
}

/// JAX's dispatch: the Python thread (tid 1) prepares each 1 ms step for 800 µs and
/// enqueues it for 200 µs; the stream thread (tid 2) records only its launch calls, and
/// launches each step's 200 µs GEMM 10 µs after `prepare` ends. The GPU idles 800 µs of
/// each step while the stream thread records nothing: it waits for the Python thread.
/// The idle time is the Python thread's CPU work, and without it the step is the GPU's:
/// 200 µs a step.
#[test]
fn a_stream_thread_woken_by_the_dispatching_thread_waits_for_its_cpu_work() {
    // The stream thread's first event, just before the steps: each step's launch then
    // follows an idle gap that a wake-up ends (a thread's first event has nothing to wait
    // for), and the first step's start, placed on the replayed timeline by the stream
    // thread's events, stays at the steps' start.
    let mut events = vec![ev("cpu_op", "aten::empty", 2, 990, 5, "")];
    for s in 0..6u64 {
        let t = 1000 + s * 1000;
        events.push(step(s + 1, t, 1000));
        events.push(ev("cpu_op", "aten::prepare", 1, t, 800, ""));
        events.push(ev("cpu_op", "aten::enqueue", 1, t + 800, 200, ""));
        events.extend(launch(
            2,
            s + 1,
            t + 810,
            ("volta_sgemm_128x64_nn", t + 830, 200),
        ));
    }
    events.push(ev("cpu_op", "aten::empty", 1, 7000, 5, ""));
    let inv = investigate(&events);
    let causes = causes(&inv);
    let cpu = cause(causes, "gap:host-not-launched:cpu-work");
    // 785 of each step's 800 idle µs (the rest: the launch call and its latency).
    assert_eq!(causes[0].key, cpu.key, "{causes:#?}");
    assert!(cpu.share > 0.75, "{cpu:#?}");
    assert!(
        causes
            .iter()
            .find(|c| c.key == "gap:host-not-launched:nothing-recorded")
            .is_none_or(|c| c.share < 0.05),
        "the stream thread's wait is not 'nothing recorded': {causes:#?}"
    );
    let r = replayed(cpu);
    assert_eq!(r.scenario, "host:cpu-work=0");
    assert_eq!(r.replay_error, Some(0.0), "{r:?}");
    assert_eq!(r.replayed_step, r.measured_step, "{r:?}");
    // The GPU's 200 µs a step, plus at most the few µs of launch and wake-up latency.
    assert!(
        r.step_after >= Nanos(200 * US) && r.step_after <= Nanos(230 * US),
        "{r:?}"
    );
}

/// PyTorch's autograd hand-off: each 4.6 ms step on the main thread (tid 1) loads its
/// batch for 4 ms (DataLoader), runs the forward op (its 1 ms GEMM) and waits in
/// `backward()`; the autograd thread (tid 2), idle since its last step, starts the
/// backward 150 µs after the forward's launch call returns (more than the 30 µs of a
/// launch, a twentieth of its 4.6 ms wait) and launches a 1 ms GEMM; the main thread
/// resumes 100 µs after that and launches a 100 µs optimizer kernel. The GPU (2.1 ms a
/// step) idles while the main thread loads data; without the data loading it runs back
/// to back, and the step is its 2.1 ms. The replay gets there only if the autograd
/// thread waits for the main thread rather than for its own measured idle time.
#[test]
fn removing_data_loading_moves_the_thread_it_wakes() {
    // The autograd thread's first event, before the steps (as `a_stream_thread_woken…`).
    let mut events = vec![ev("cpu_op", "aten::empty", 2, 0, 5, "")];
    for s in 0..6u64 {
        let t = 5000 + s * 4600;
        events.push(step(s + 1, t, 4600));
        events.push(ev(
            "user_annotation",
            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
            1,
            t,
            4000,
            "",
        ));
        events.push(ev("cpu_op", "aten::mm", 1, t + 4000, 10, ""));
        events.extend(launch(
            1,
            3 * s + 1,
            t + 4002,
            ("volta_sgemm_128x64_nn", t + 4015, 1000),
        ));
        events.push(ev("cpu_op", "MmBackward0", 2, t + 4157, 10, ""));
        events.extend(launch(
            2,
            3 * s + 2,
            t + 4159,
            ("volta_sgemm_128x64_tn", t + 5015, 1000),
        ));
        events.push(ev("cpu_op", "aten::add_", 1, t + 4267, 10, ""));
        events.extend(launch(
            1,
            3 * s + 3,
            t + 4269,
            ("vectorized_elementwise_kernel", t + 6015, 100),
        ));
    }
    events.push(ev("cpu_op", "aten::empty", 1, 5000 + 6 * 4600, 5, ""));
    let inv = investigate(&events);
    let causes = causes(&inv);
    let loading = cause(causes, "gap:host-not-launched:data-loading");
    let r = replayed(loading);
    assert_eq!(r.scenario, "host:data-loading=0");
    assert_eq!(r.replay_error, Some(0.0), "{r:?}");
    assert_eq!(r.replayed_step, r.measured_step, "{r:?}");
    // The GPU's 2.1 ms a step, within the launch latencies of the first step.
    assert!(
        r.step_after >= Nanos(2100 * US) && r.step_after <= Nanos(2200 * US),
        "{r:?}"
    );
}
