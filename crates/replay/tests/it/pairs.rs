//! Before/after pairs: the simulator runs a program, then the same program with one cause
//! changed; the replay of the first capture under that cause's scenario must predict the
//! second capture's step within 5 %. Launch and wait latencies vary from launch to launch,
//! differently in the two runs (as in two captures of one program): the replay knows the
//! first run's, and only the typical one where an edge starts to decide a start.

use replay::{Graph, WhatIf, check, predict};
use trace_model::Nanos;

use crate::sim::Program;

/// A GPU-bound training-like step (long GEMMs) and a launch-bound one (short kernels).
fn programs() -> [(&'static str, Program); 2] {
    let gpu_bound = Program {
        steps: 3,
        layers: 8,
        gap: 20_000,
        cpu: 10_000,
        launch: 8_000,
        gemm: 150_000,
        elementwise: 30_000,
        allreduce: 200_000,
        copy_bytes: 8 << 20,
        copy_bandwidth: 12e9,
    };
    let launch_bound = Program {
        gemm: 5_000,
        elementwise: 3_000,
        allreduce: 20_000,
        copy_bytes: 1 << 20,
        ..gpu_bound
    };
    [("GPU-bound", gpu_bound), ("launch-bound", launch_bound)]
}

type Edit = fn(&mut Program);

/// Each cause's scenario and the same change made to the program.
const CHANGES: [(&str, Edit); 8] = [
    ("gemm=2x", |p| p.gemm /= 2),
    ("elementwise=0", |p| p.elementwise = 0),
    ("collective=0", |p| p.allreduce = 0),
    ("launch=5us", |p| p.launch = 5_000),
    ("cpu=2x", |p| p.cpu /= 2),
    ("host-gaps=0", |p| p.gap = 0),
    ("copy-bw=24GB/s", |p| p.copy_bandwidth = 24e9),
    ("gemm=2x,launch=5us", |p| {
        p.gemm /= 2;
        p.launch = 5_000;
    }),
];

#[test]
fn predicted_steps_are_within_5_percent_of_realized() {
    let mut table =
        String::from("program       scenario             before     predicted  realized   error\n");
    let mut worst: f64 = 0.0;
    for (label, program) in programs() {
        let (before, windows) = program.run_jittered(1);
        let graph = Graph::build(&before).expect("replays");
        for (spec, edit) in CHANGES {
            let mut changed = program;
            edit(&mut changed);
            let (after, after_windows) = changed.run_jittered(2);
            let realized_check = check(&Graph::build(&after).expect("replays"), &after_windows);
            let p = predict(&graph, &before, &windows, &WhatIf::parse(spec).expect(spec));
            assert!(
                p.matched.iter().all(|(_, n)| *n > 0),
                "{spec}: {:?}",
                p.matched
            );
            for (s, r) in p.steps.iter().zip(&realized_check.steps) {
                let (predicted, realized) = (s.predicted.value, r.measured.value);
                let error = (predicted.0 - realized.0) as f64 / realized.0 as f64;
                worst = worst.max(error.abs());
                assert!(
                    error.abs() <= 0.05,
                    "{label} {spec} step {}: predicted {}, realized {} ({:+.1} %)",
                    s.number,
                    predicted.human(),
                    realized.human(),
                    100.0 * error
                );
            }
            let total = |f: &dyn Fn(usize) -> Nanos| (0..p.steps.len()).map(f).sum::<Nanos>();
            let before_total = total(&|i| p.steps[i].measured.value);
            let predicted_total = total(&|i| p.steps[i].predicted.value);
            let realized_total = total(&|i| realized_check.steps[i].measured.value);
            table.push_str(&format!(
                "{label:<13} {spec:<20} {:<10} {:<10} {:<10} {:+.2} %\n",
                before_total.human(),
                predicted_total.human(),
                realized_total.human(),
                100.0 * (predicted_total.0 - realized_total.0) as f64 / realized_total.0 as f64
            ));
        }
    }
    println!("{table}worst step error {:.2} %", 100.0 * worst);
}
