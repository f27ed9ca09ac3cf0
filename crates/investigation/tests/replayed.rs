//! Step 6's replayed estimates on synthetic Kineto traces with known answers: a cause whose
//! time is overlapped by the path that sets the step changes nothing when replayed (the
//! subtraction says otherwise); removing the host's gaps on a launch-bound step leaves the
//! GPU-bound time; a GPU-only trace says why it cannot be replayed.

use investigation::{Advice, CauseReplay};
use trace_model::Nanos;

mod common;
use common::{US, cause, causes, ev, investigate, replayed, step};

/// An op at `ts` (5 µs) with its runtime call at `ts + 1` (2 µs), and what it issued on
/// `stream` (tid) as `cat`.
fn issued(
    op: &str,
    api: &str,
    corr: u64,
    ts: u64,
    (cat, name, stream, start, dur): (&str, &str, u64, u64, u64),
) -> Vec<String> {
    vec![
        ev("cpu_op", op, 1, ts, 5, ""),
        ev(
            "cuda_runtime",
            api,
            1,
            ts + 1,
            2,
            &format!(r#""correlation": {corr}"#),
        ),
        ev(
            cat,
            name,
            stream,
            start,
            dur,
            &format!(r#""correlation": {corr}, "stream": {stream}, "device": 0"#),
        ),
    ]
}

/// Four 1 ms steps: a 400 µs GEMM, then a 200 µs host-to-device copy on stream 8 while
/// the compute stream waits for the host to launch the next GEMM at +700 µs (200 µs).
/// The copy is exposed (nothing computes meanwhile) but off the path that sets the step:
/// the step is the host's. Removing it leaves the step as it is; the subtraction says
/// 200 µs shorter.
#[test]
fn removing_an_exposed_copy_off_the_critical_path_changes_nothing() {
    let mut events = Vec::new();
    for s in 0..4u64 {
        let t = s * 1000;
        events.push(step(s + 1, t, 1000));
        let corr = 3 * s + 1;
        let gemm = ("kernel", "volta_sgemm_128x64_nn", 7, 0, 0);
        events.extend(issued(
            "aten::mm",
            "cudaLaunchKernel",
            corr,
            t,
            (gemm.0, gemm.1, 7, t + 5, 400),
        ));
        events.extend(issued(
            "aten::copy_",
            "cudaMemcpyAsync",
            corr + 1,
            t + 400,
            (
                "gpu_memcpy",
                "Memcpy HtoD (Pinned -> Device)",
                8,
                t + 405,
                200,
            ),
        ));
        events.extend(issued(
            "aten::mm",
            "cudaLaunchKernel",
            corr + 2,
            t + 700,
            (gemm.0, gemm.1, 7, t + 705, 200),
        ));
    }
    events.push(ev("cpu_op", "aten::empty", 1, 4000, 5, ""));
    let inv = investigate(&events);
    let causes = causes(&inv);
    let copy = cause(causes, "exposed-memcpy:0");
    let r = replayed(copy);
    assert_eq!(r.scenario, "memcpy=0");
    assert!(r.events_changed >= 3, "{r:?}");
    // The unchanged replay reproduces the measured steps, and without the copy the step
    // is the same.
    assert_eq!(r.replay_error, Some(0.0), "{r:?}");
    assert_eq!(r.replayed_step, r.measured_step, "{r:?}");
    assert_eq!(r.step_after, r.measured_step, "{r:?}");
    assert_eq!(r.change, 0.0);
    // The subtraction takes the copy's 200 µs off.
    assert_eq!(copy.per_step, Nanos(200 * US));
    assert!(
        copy.step_after <= r.step_after - Nanos(150 * US),
        "subtraction {} against replay {}",
        copy.step_after.human(),
        r.step_after.human()
    );
}

/// Four 1 ms launch-bound steps: four 50 µs GEMMs launched 250 µs apart, the host idle
/// (nothing recorded) between the launches. Without the host's gaps the launches come
/// back to back and the step is its GPU work: 4 × 50 µs, plus the first launch's few µs.
#[test]
fn removing_host_gaps_on_a_launch_bound_step_gives_the_gpu_bound_time() {
    let mut events = Vec::new();
    for s in 0..4u64 {
        let t = s * 1000;
        events.push(step(s + 1, t, 1000));
        for k in 0..4u64 {
            let at = t + 250 * k;
            events.extend(issued(
                "aten::mm",
                "cudaLaunchKernel",
                4 * s + k + 1,
                at,
                ("kernel", "volta_sgemm_128x64_nn", 7, at + 5, 50),
            ));
        }
    }
    events.push(ev("cpu_op", "aten::empty", 1, 4000, 5, ""));
    let inv = investigate(&events);
    let causes = causes(&inv);
    let host = cause(causes, "gap:host-not-launched:nothing-recorded");
    let r = replayed(host);
    assert_eq!(r.scenario, "host:nothing-recorded=0");
    assert_eq!(r.measured_step, Nanos(1000 * US), "{r:?}");
    assert_eq!(r.replayed_step, r.measured_step, "{r:?}");
    let gpu_bound = Nanos(4 * 50 * US);
    assert!(
        r.step_after >= gpu_bound && r.step_after <= gpu_bound + Nanos(10 * US),
        "replayed {} against the GPU-bound {}",
        r.step_after.human(),
        gpu_bound.human()
    );
    assert!(
        r.critical_lane_after
            .as_ref()
            .is_some_and(|l| l.rank.is_none() && l.is_stream()),
        "the GPU sets the step once the host's gaps are gone: {r:?}"
    );
}

/// A GPU-only trace (no host events): nothing launches the GPU work, so the replayed
/// estimate says it cannot replay and why; the subtraction stays.
#[test]
fn a_gpu_only_trace_cannot_be_replayed_and_says_why() {
    let mut events = Vec::new();
    for s in 0..4u64 {
        let t = s * 1000;
        for (k, (cat, name, stream, start, dur)) in [
            ("kernel", "volta_sgemm_128x64_nn", 7, t, 600),
            (
                "gpu_memcpy",
                "Memcpy HtoD (Pinned -> Device)",
                8,
                t + 600,
                380,
            ),
        ]
        .into_iter()
        .enumerate()
        {
            events.push(ev(
                cat,
                name,
                stream,
                start,
                dur,
                &format!(
                    r#""correlation": {}, "stream": {stream}, "device": 0"#,
                    2 * s + k as u64
                ),
            ));
        }
        events.push(ev(
            "gpu_user_annotation",
            &format!("ProfilerStep#{}", s + 1),
            7,
            t,
            1000,
            r#""device": 0"#,
        ));
    }
    let inv = investigate(&events);
    let Advice::Ranked(ranked) = &inv.advice else {
        panic!("not ranked: {:?}", inv.advice);
    };
    assert!(
        ranked
            .causes
            .iter()
            .any(|c| matches!(c.replay, CauseReplay::CannotReplay { .. })),
        "{:#?}",
        ranked.causes
    );
    for c in &ranked.causes {
        match &c.replay {
            CauseReplay::CannotReplay { reason } => {
                assert_eq!(reason, &replay::CannotReplay::NoHostEvents);
            }
            CauseReplay::NoScenario { .. } => {}
            other => panic!("{}: {other:?}", c.key),
        }
    }
}
