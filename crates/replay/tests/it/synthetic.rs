//! Synthetic captures with known answers: what a scenario must predict follows from how
//! the capture was made.

use replay::{Graph, LaneKind, LaneName, StepWindow, WhatIf, check, predict};
use trace_model::{Capture, Nanos};

use crate::sim::{COPY, ELEMENTWISE, GEMM, LATENCY, SYNC_POST, Sim, WAIT_LATENCY};

fn what_if(capture: &Capture, windows: &[StepWindow], spec: &str) -> replay::Prediction {
    let graph = Graph::build(capture).expect("a capture with launches replays");
    let c = check(&graph, windows);
    for s in &c.steps {
        assert_eq!(
            s.replayed.value, s.measured.value,
            "{spec}: the unchanged replay"
        );
    }
    predict(&graph, capture, windows, &WhatIf::parse(spec).expect(spec))
}

fn step(p: &replay::Prediction) -> (Nanos, Nanos, Nanos) {
    let s = &p.steps[0];
    (s.measured.value, s.baseline.value, s.predicted.value)
}

/// A copy on its own stream that compute fully overlaps: removing it changes nothing.
#[test]
fn removing_a_fully_overlapped_copy_changes_nothing() {
    let mut sim = Sim::new(2);
    sim.step(1, |sim| {
        sim.launch(3_000, 1, COPY, 200_000, None, Some(1 << 20));
        for _ in 0..10 {
            sim.launch(3_000, 0, GEMM, 100_000, None, None);
        }
        sim.sync();
    });
    let (capture, windows) = sim.finish();
    let p = what_if(&capture, &windows, "memcpy=0");
    assert_eq!(p.matched, [("memcpy=0".to_owned(), 1)]);
    let (measured, baseline, predicted) = step(&p);
    assert_eq!((baseline, predicted), (measured, measured));
    // Removing the GEMMs instead leaves the copy: it bounds the step then.
    let p = what_if(&capture, &windows, "gemm=0");
    assert!(step(&p).2.0 < measured.0 / 3);
}

/// A launch-bound step (host gaps of 20 µs between 5 µs kernels): without the host gaps
/// the kernels run back to back, and the step takes the GPU's time.
#[test]
fn removing_host_gaps_on_a_launch_bound_step_gives_the_gpu_bound_time() {
    let mut sim = Sim::new(1);
    let mut first = None;
    sim.step(1, |sim| {
        for _ in 0..50 {
            sim.gap(20_000);
            let k = sim.launch(3_000, 0, ELEMENTWISE, 5_000, None, None);
            first.get_or_insert(k.start);
        }
        sim.sync();
    });
    let (capture, windows) = sim.finish();
    let first = first.expect("50 launches");
    let gpu = 50 * 5_000;
    let to_first = first - windows[0].start.0;
    for spec in ["host-gaps=0", "host=0"] {
        let p = what_if(&capture, &windows, spec);
        let (measured, _, predicted) = step(&p);
        assert!(measured.0 >= 50 * 23_000, "{spec}: launch-bound as made");
        // The host part before the first kernel stays (it is not a gap between leaves
        // for host-gaps=0; for host=0 the first call is where the thread's time starts).
        let expect = to_first + gpu + SYNC_POST;
        assert!(
            (predicted.0 - expect).abs() <= LATENCY + 3_000,
            "{spec}: predicted {predicted:?}, GPU-bound {expect}"
        );
        if spec == "host-gaps=0" {
            assert_eq!(predicted.0, expect, "{spec}");
        }
    }
}

/// Two streams launched up front: GEMMs on one (1 ms), elementwise kernels on the other
/// (0.9 ms). GEMMs twice as fast leave the other stream critical: the step is its time.
#[test]
fn faster_gemms_make_the_nearly_critical_stream_critical() {
    let mut sim = Sim::new(2);
    let mut other_end = 0;
    sim.step(1, |sim| {
        for _ in 0..10 {
            sim.launch(2_000, 0, GEMM, 100_000, None, None);
            other_end = sim.launch(2_000, 1, ELEMENTWISE, 90_000, None, None).end;
        }
        sim.sync();
    });
    let (capture, windows) = sim.finish();
    let p = what_if(&capture, &windows, "gemm=2x");
    let (measured, _, predicted) = step(&p);
    let other = other_end - windows[0].start.0 + SYNC_POST;
    assert_eq!(predicted.0, other, "the elementwise stream's time");
    assert!(measured.0 > other + 90_000);
    let stream = |stream| LaneName {
        rank: None,
        lane: LaneKind::GpuStream { gpu: 0, stream },
    };
    assert_eq!(p.critical_before[0].lane, stream(7));
    assert_eq!(p.critical_after[0].lane, stream(8));
    // Three times as fast: still the other stream's time.
    let p = what_if(&capture, &windows, "gemm=3x");
    assert_eq!(step(&p).2.0, other);
}

/// A kernel on one stream waits for a producer on another (an event wait the capture
/// model does not record): the inferred edge moves it with its producer.
#[test]
fn a_cross_stream_wait_moves_with_its_producer() {
    let mut sim = Sim::new(2);
    sim.step(1, |sim| {
        let producer = sim.launch(3_000, 0, "producer_kernel", 500_000, None, None);
        sim.launch(
            3_000,
            1,
            "consumer_kernel",
            100_000,
            Some(producer.end),
            None,
        );
        sim.sync();
    });
    let (capture, windows) = sim.finish();
    let graph = Graph::build(&capture).expect("replays");
    assert_eq!(graph.stats().cross_stream_edges, 1);
    assert_eq!(graph.stats().unexplained_waits, 0);
    let what_if = WhatIf::parse("kernel:producer=2x").expect("parses");
    let (durations, _) = what_if.durations(&graph, &capture);
    let before = graph.replay(graph.measured());
    let after = graph.replay(&durations);
    // Activities are in (stream, start) order: the producer, then the consumer.
    let (p0, c0) = (
        graph.activity_times(&before, 0).expect("producer"),
        graph.activity_times(&before, 1).expect("consumer"),
    );
    let (p1, c1) = (
        graph.activity_times(&after, 0).expect("producer"),
        graph.activity_times(&after, 1).expect("consumer"),
    );
    assert_eq!(p1.1 - p0.1, Nanos(-250_000));
    assert_eq!(c1.0 - p1.1, Nanos(WAIT_LATENCY));
    assert_eq!(c1.0 - c0.0, Nanos(-250_000));
    let p = predict(&graph, &capture, &windows, &what_if);
    let (_, baseline, predicted) = step(&p);
    assert_eq!(baseline - predicted, Nanos(250_000));
}

/// A GPU-only capture and one without correlation ids cannot be replayed, and say why.
#[test]
fn missing_edges_are_said() {
    let mut sim = Sim::new(1);
    sim.step(1, |sim| {
        sim.launch(3_000, 0, GEMM, 10_000, None, None);
    });
    let (capture, _) = sim.finish();
    let mut b = trace_model::CaptureBuilder::new(trace_model::Format::KinetoJson);
    b.devices = capture.devices().to_vec();
    b.streams = capture.streams().to_vec();
    for a in capture.activities() {
        let name = b.strings.intern(capture.name(a.name));
        let fresh = trace_model::GpuActivity::new(
            a.stream,
            a.start,
            a.dur,
            name,
            a.kind,
            a.class,
            a.source_index,
        );
        b.push_activity(fresh, Default::default());
    }
    let gpu_only = b.clone().finish(std::path::Path::new("gpu-only.json"));
    let err = Graph::build(&gpu_only).expect_err("GPU-only");
    assert_eq!(err, replay::CannotReplay::NoHostEvents);
    b.threads = capture.threads().to_vec();
    for e in capture.host_events() {
        let name = b.strings.intern(capture.name(e.name));
        let fresh = trace_model::HostEvent::new(
            e.thread,
            e.start,
            e.dur,
            name,
            trace_model::HostKind::Runtime,
            e.source_index,
        );
        b.push_host_event(fresh, None);
    }
    let unlinked = b.finish(std::path::Path::new("unlinked.json"));
    let err = Graph::build(&unlinked).expect_err("no ids");
    let activities = capture.activities().len();
    assert!(activities > 0);
    assert_eq!(
        err,
        replay::CannotReplay::Unlinked {
            linked: 0,
            activities
        }
    );
}

/// Two host threads: the second idles until the first's forward op ends, then runs its
/// own op (as PyTorch's autograd thread does for a backward pass). The inferred wake-up
/// keeps it waiting when host gaps go, and moves it with the first thread's work.
#[test]
fn a_woken_thread_waits_for_its_waker() {
    use trace_model::{CaptureBuilder, Format, HostEvent, HostKind, HostThread, Nanos, ThreadId};
    let mut b = CaptureBuilder::new(Format::KinetoJson);
    for (t, tid) in [(0u32, 10i64), (1, 11)] {
        b.threads.push(HostThread {
            id: ThreadId::new(t),
            pid: 1,
            tid,
            name: None,
            pid_text: None,
            tid_text: None,
        });
    }
    let op = b.strings.intern("aten::op");
    let mut index = 0;
    let mut push = |b: &mut CaptureBuilder, thread: u32, start: i64, dur: i64| {
        index += 1;
        let e = HostEvent::new(
            ThreadId::new(thread),
            Nanos(start),
            Nanos(dur),
            op,
            HostKind::CpuOp,
            index,
        );
        b.push_host_event(e, None);
    };
    // Thread 0: forward 0–100 µs, its launch call, then (woken by the backward's end) the
    // optimizer 305–315 µs. Thread 1: a short op at 0, then backward 103–303 µs.
    push(&mut b, 0, 0, 100_000);
    push(&mut b, 0, 305_000, 10_000);
    push(&mut b, 1, 0, 5_000);
    push(&mut b, 1, 103_000, 200_000);
    // One GPU activity, so that the capture replays (its launch is the forward op's call).
    let mut sim = Sim::new(1);
    sim.step(1, |sim| {
        sim.launch(3_000, 0, GEMM, 10_000, None, None);
    });
    let (gpu, _) = sim.finish();
    b.devices = gpu.devices().to_vec();
    b.streams = gpu.streams().to_vec();
    let launch = b.strings.intern("cudaLaunchKernel");
    let mut call = HostEvent::new(
        ThreadId::new(0),
        Nanos(100_000),
        Nanos(1_000),
        launch,
        HostKind::Runtime,
        100,
    );
    call.set_correlation(Some(9));
    b.push_host_event(call, None);
    let a = &gpu.activities()[0];
    let mut k = trace_model::GpuActivity::new(
        a.stream,
        Nanos(105_000),
        a.dur,
        b.strings.intern(GEMM),
        a.kind,
        a.class,
        101,
    );
    k.set_correlation(Some(9));
    b.push_activity(k, Default::default());
    let capture = b.finish(std::path::Path::new("threads.json"));
    let graph = Graph::build(&capture).expect("replays");
    assert_eq!(graph.stats().cross_thread_edges, 2);
    let windows = [StepWindow {
        number: 1,
        start: Nanos(0),
        end: Nanos(315_000),
        gpu_ranged: false,
    }];
    let c = check(&graph, &windows);
    assert_eq!(c.steps[0].replayed.value, Nanos(315_000));
    let what = |spec: &str| {
        step(&predict(
            &graph,
            &capture,
            &windows,
            &WhatIf::parse(spec).expect(spec),
        ))
        .2
    };
    assert_eq!(
        what("host-gaps=0"),
        Nanos(315_000),
        "each thread still waits for the other"
    );
    // Forward 50 µs, the call 1 µs, the wake-up 2 µs later, backward 100 µs, the
    // optimizer 2 µs after it, 5 µs.
    assert_eq!(what("cpu=2x"), Nanos(160_000));
}

/// Every cause scenario parses to its own key, and one predictor gives what `predict`
/// gives.
#[test]
fn cause_scenarios_replay_on_one_predictor() {
    let (capture, windows) = crate::sim::Program {
        steps: 2,
        layers: 3,
        gap: 20_000,
        cpu: 10_000,
        launch: 8_000,
        gemm: 50_000,
        elementwise: 10_000,
        allreduce: 30_000,
        copy_bytes: 1 << 20,
        copy_bandwidth: 12e9,
    }
    .run();
    let graph = Graph::build(&capture).expect("replays");
    let predictor = replay::Predictor::new(&graph, &capture, &windows);
    let scenarios = replay::cause_scenarios();
    assert_eq!(scenarios.len(), 15);
    for (cause, what_if) in &scenarios {
        let p = predictor.predict(what_if);
        assert_eq!(p, predict(&graph, &capture, &windows, what_if), "{cause}");
        // The predictor replays from the unchanged replay: the full replay's timeline.
        let (durations, _) = what_if.durations(&graph, &capture);
        assert!(
            graph.replay_incremental(&durations) == graph.replay(&durations),
            "{cause}: the incremental replay differs from the full one"
        );
        assert!(
            p.steps
                .iter()
                .all(|s| s.predicted.value <= s.baseline.value),
            "{cause}: removing or speeding up never lengthens this program's steps"
        );
    }
}

/// A GPU-bound step: a 1 ms GEMM launched first (a CPU op covers its launch latency),
/// then ten host gaps of 20 µs between short launches that queue behind it. The gaps idle
/// nothing (the stream is busy through all of them), so `host-gaps=0` changes no gap and
/// the step stays as it is.
#[test]
fn host_gaps_the_gpu_is_busy_through_are_not_removed() {
    let mut sim = Sim::new(1);
    sim.step(1, |sim| {
        sim.launch(3_000, 0, GEMM, 1_000_000, None, None);
        sim.op("aten::empty", 10_000, |_| {});
        for _ in 0..10 {
            sim.gap(20_000);
            sim.launch(3_000, 0, ELEMENTWISE, 5_000, None, None);
        }
        sim.sync();
    });
    let (capture, windows) = sim.finish();
    let p = what_if(&capture, &windows, "host-gaps=0");
    let (_, baseline, predicted) = step(&p);
    assert_eq!(p.matched, [("host-gaps=0".to_owned(), 0)]);
    assert_eq!(predicted, baseline);
}

/// The host's allocator time, as a caller labels it (here: the time inside ops named
/// `cudaFree`).
#[derive(Debug)]
struct FreeCalls(Vec<(trace_model::ThreadId, Nanos, Nanos)>);

impl replay::HostLabels for FreeCalls {
    fn time(&self, cause: &str, thread: trace_model::ThreadId, from: Nanos, to: Nanos) -> Nanos {
        if cause != "allocator" {
            return Nanos::ZERO;
        }
        self.0
            .iter()
            .filter(|(t, _, _)| *t == thread)
            .map(|&(_, s, e)| (e.min(to) - s.max(from)).max(Nanos::ZERO))
            .sum()
    }
}

/// A launch-bound step where each launch follows a 30 µs `cudaFree` (the caching
/// allocator bypassed): removing the allocator's time (`host:allocator=0`, with the
/// caller's labels) predicts the same program run without the frees within 5 %; without
/// labels the scenario changes nothing.
#[test]
fn removing_a_host_sub_cause_predicts_the_run_without_it() {
    let run = |free: i64| {
        let mut sim = Sim::new(1);
        sim.step(1, |sim| {
            for _ in 0..40 {
                sim.gap(4_000);
                if free > 0 {
                    sim.op("cudaFree", free, |_| {});
                }
                sim.launch(3_000, 0, ELEMENTWISE, 6_000, None, None);
            }
            sim.sync();
        });
        sim.finish()
    };
    let (before, windows) = run(30_000);
    let (after, after_windows) = run(0);
    let frees = FreeCalls(
        before
            .host_events()
            .iter()
            .filter(|e| before.name(e.name) == "cudaFree")
            .map(|e| (e.thread, e.start, e.end()))
            .collect(),
    );
    let graph = Graph::build(&before).expect("replays");
    let what_if = WhatIf::parse("host:allocator=0").expect("parses");
    let p = replay::Predictor::new(&graph, &before, &windows)
        .with_labels(&frees)
        .predict(&what_if);
    let realized = check(&Graph::build(&after).expect("replays"), &after_windows).steps[0]
        .measured
        .value;
    let (measured, _, predicted) = step(&p);
    assert!(measured.0 > 40 * 30_000, "allocator-bound as made");
    let error = (predicted.0 - realized.0) as f64 / realized.0 as f64;
    assert!(
        error.abs() <= 0.05,
        "predicted {predicted:?}, realized {realized:?}"
    );
    assert_eq!(p.matched, [("host:allocator=0".to_owned(), 40)]);
    let unlabelled = predict(&graph, &before, &windows, &what_if);
    assert_eq!(unlabelled.matched, [("host:allocator=0".to_owned(), 0)]);
    assert_eq!(step(&unlabelled).2, step(&unlabelled).1);
}

/// The graph infers a wake-up by the rule analysis labels a woken thread's idle time by
/// (`host_cause` rule 9): the same limits, so that removing the waker's sub-cause moves
/// the woken thread's launches exactly where the idle split says the GPU waited for it.
#[test]
fn wake_ups_follow_the_rule_analysis_labels_by() {
    assert_eq!(replay::WAKE_SHARE, analysis::WAKE_SHARE);
    assert_eq!(replay::EXPLAIN_LIMIT, analysis::WAKE_LIMIT);
    for idle in [0, 10_000, 600_000, 100_000_000] {
        assert_eq!(
            replay::wake_limit(Nanos(idle)),
            analysis::wake_limit(Nanos(idle))
        );
    }
    assert_eq!(replay::wake_limit(Nanos(100_000_000)), Nanos(5_000_000));
}
