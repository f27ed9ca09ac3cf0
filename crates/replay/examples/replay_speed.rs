//! Times the replay's parts on one capture: load (for scale), graph build, the unchanged
//! replay with its check, one scenario's prediction, and every cause scenario on one
//! `Predictor`.
//!
//! `cargo run --release -p replay --example replay_speed -- TRACE [SCENARIO]`

use std::time::Instant;

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: replay_speed TRACE [SCENARIO]")?;
    let spec = args
        .next()
        .unwrap_or_else(|| "gemm=2x,launch=5us".to_owned());
    let what_if = replay::WhatIf::parse(&spec).map_err(|e| e.to_string())?;
    let t = Instant::now();
    let loaded = load::load(std::path::Path::new(&path)).map_err(|e| e.to_string())?;
    let load_s = t.elapsed().as_secs_f64();
    for l in &loaded {
        let windows = replay::capture_windows(&l.capture);
        let t = Instant::now();
        let graph = replay::Graph::build(&l.capture).map_err(|e| e.to_string())?;
        let build_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let check = replay::check(&graph, &windows);
        let check_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let p = replay::predict(&graph, &l.capture, &windows, &what_if);
        let predict_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let predictor = replay::Predictor::new(&graph, &l.capture, &windows);
        let causes = replay::cause_scenarios();
        for (_, what_if) in &causes {
            predictor.predict(what_if);
        }
        let causes_s = t.elapsed().as_secs_f64();
        println!(
            "{}: load {load_s:.3} s, build {build_s:.3} s ({} nodes), check {check_s:.3} s \
             (median error {:.2} %), predict {predict_s:.3} s ({:+.1} %), {} cause scenarios \
             {causes_s:.3} s",
            l.path.display(),
            graph.len(),
            100.0 * check.median_abs_error.unwrap_or(0.0),
            100.0 * p.median_change().unwrap_or(0.0),
            causes.len()
        );
    }
    Ok(())
}
