//! Before/after pairs for the host sub-cause scenarios: a synthetic training step is
//! written twice, the second time with one host sub-cause's work gone, and the replay of
//! the first capture under that cause's scenario (`host:cpu-work=0`,
//! `host:data-loading=0`) must predict the second capture's measured step within 5 %.
//!
//! The step holds host time of the sub-cause while the GPU was busy (the main thread's
//! `run_backward`, which waits for the autograd thread: CPU work by its label, a wait in
//! fact), so a scenario that removed all of the sub-cause's time, not only the time on
//! the path the GPU waited for, would predict a shorter step than the realized one.

use investigation::{Advice, CauseReplay, Investigation};
use trace_model::Nanos;

mod common;
use common::{US, ev, investigate, write_trace};

/// One step's program: the main thread (tid 1) prepares the batch (`prepare` µs of CPU
/// work, the GPU idle), launches the forward GEMM (300 µs) and enters `run_backward`; the
/// autograd thread (tid 2) wakes, launches the backward GEMM (100 µs) and returns;
/// `run_backward` returns 10 µs later; the main thread then loads the next batch
/// (`loading` µs, the GPU idle once the backward ends), launches the optimizer kernel
/// (100 µs) and synchronises.
#[derive(Debug, Clone, Copy)]
struct Program {
    prepare: u64,
    loading: u64,
}

fn launch(tid: u64, corr: u64, at: u64, kernel: (&str, u64, u64)) -> [String; 2] {
    [
        ev(
            "cuda_runtime",
            "cudaLaunchKernel",
            tid,
            at,
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

impl Program {
    fn events(self) -> Vec<String> {
        // The autograd thread's first event, before the steps (a thread's first event has
        // nothing to wait for).
        let mut events = vec![ev("cpu_op", "aten::empty", 2, 900, 5, "")];
        let mut t = 1000;
        for s in 0..6u64 {
            let step_start = t;
            let mut step_events = Vec::new();
            if self.prepare > 0 {
                step_events.push(ev("cpu_op", "aten::index_select", 1, t, self.prepare, ""));
            }
            let a = t + self.prepare;
            step_events.extend(launch(
                1,
                3 * s + 1,
                a,
                ("volta_sgemm_128x64_nn", a + 10, 300),
            ));
            step_events.push(ev(
                "python_function",
                "<built-in method run_backward of torch._C._EngineBase object>",
                1,
                a + 5,
                205,
                "",
            ));
            step_events.push(ev(
                "cpu_op",
                "autograd::engine::evaluate_function: MmBackward0",
                2,
                a + 20,
                50,
                "",
            ));
            step_events.extend(launch(
                2,
                3 * s + 2,
                a + 70,
                ("volta_sgemm_128x64_nt", a + 310, 100),
            ));
            step_events.push(ev(
                "cpu_op",
                "autograd::engine::evaluate_function: AccumulateGrad",
                2,
                a + 75,
                125,
                "",
            ));
            let mut b = a + 210;
            if self.loading > 0 {
                step_events.push(ev(
                    "user_annotation",
                    "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                    1,
                    b,
                    self.loading,
                    "",
                ));
                b += self.loading;
            }
            // The optimizer kernel runs after the backward GEMM (stream order).
            let o_start = (b + 10).max(a + 410);
            step_events.extend(launch(
                1,
                3 * s + 3,
                b,
                (
                    "void at::native::vectorized_elementwise_kernel<4, add>",
                    o_start,
                    100,
                ),
            ));
            let sync_end = o_start + 105;
            step_events.push(ev(
                "cuda_runtime",
                "cudaDeviceSynchronize",
                1,
                b + 10,
                sync_end - (b + 10),
                "",
            ));
            t = sync_end + 5;
            events.push(common::step(s + 1, step_start, t - step_start));
            events.extend(step_events);
        }
        events.push(ev("cpu_op", "aten::empty", 1, t, 5, ""));
        events
    }
}

fn ranked(inv: &Investigation) -> &investigation::Ranked {
    match &inv.advice {
        Advice::Ranked(r) => r,
        other => panic!("not ranked: {other:?}"),
    }
}

#[test]
fn host_sub_cause_scenarios_predict_the_realized_step_within_5_percent() {
    let before = Program {
        prepare: 200,
        loading: 300,
    };
    let pairs: [(&str, Program); 3] = [
        (
            "host:cpu-work=0",
            Program {
                prepare: 0,
                ..before
            },
        ),
        (
            "host:data-loading=0",
            Program {
                loading: 0,
                ..before
            },
        ),
        (
            "host:data-loading=0,host:cpu-work=0",
            Program {
                prepare: 0,
                loading: 0,
            },
        ),
    ];
    let inv = investigate(&before.events());
    let before_ranked = ranked(&inv);
    // The step as measured: 200 µs preparing, the launch and `run_backward` (210 µs),
    // 300 µs of loading, the optimizer's launch, its kernel (100 µs) and the sync's
    // return: 830 µs (630 µs without preparing, 720 µs without loading: the optimizer
    // kernel then waits for the backward GEMM; 520 µs without both).
    assert_eq!(
        before_ranked.mean_step,
        Nanos(830 * US),
        "{before_ranked:#?}"
    );
    let mut table = String::new();
    for (spec, after) in pairs {
        let realized = ranked(&investigate(&after.events())).mean_step;
        // The cause's own replay where one is ranked, else the scenario as --what-if.
        let predicted = match before_ranked.causes.iter().find_map(|c| match &c.replay {
            CauseReplay::Replayed(r) if r.scenario == spec => Some(r.step_after),
            _ => None,
        }) {
            Some(p) => p,
            None => what_if_step(&before.events(), spec),
        };
        let error = (predicted.0 - realized.0) as f64 / realized.0 as f64;
        table += &format!(
            "{spec:40} before {:>10} predicted {:>10} realized {:>10} error {:+.1} %\n",
            before_ranked.mean_step.human(),
            predicted.human(),
            realized.human(),
            100.0 * error
        );
        assert!(error.abs() <= 0.05, "{spec}: {table}");
    }
    eprintln!("{table}");
}

/// The mean step (steps' wall over their count) of `spec` replayed on the capture of
/// `events`, through investigate's `--what-if`.
fn what_if_step(events: &[String], spec: &str) -> Nanos {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = write_trace(dir.path(), "synthetic.json", "", events);
    let options = investigation::Options {
        min_gpu_work: Some(Nanos(0)),
        what_if: Some(replay::WhatIf::parse(spec).expect("a what-if")),
        ..Default::default()
    };
    let run = investigation::investigate(&path, &options).expect("investigates");
    let [w] = run.what_if.as_slice() else {
        panic!("one capture: {:?}", run.what_if);
    };
    let p = w.prediction.as_ref().expect("replayed");
    assert!(!p.steps.is_empty(), "{p:?}");
    // The steps' wall with the change (first start to last end) over their count.
    Nanos((p.wall[2].value.0 as f64 / p.steps.len() as f64).round() as i64)
}
