//! Prints the diagnosis of each capture given: steps (count, evidence, the evidence that
//! lost), the verdict, the framework, the top cause with its first knob, and the share of
//! the critical stream's idle time each cause holds (summing to 100 %).
//!
//! `cargo run -p analysis --example diagnose -- <capture or directory>…`

use std::path::Path;

use analysis::{CandidateOutcome, CauseKey, GapCause, HostCause, SkipConfig};

fn main() {
    for arg in std::env::args().skip(1) {
        let path = Path::new(&arg);
        let loaded = match load::load(path) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("{arg}: {e}");
                continue;
            }
        };
        for l in loaded.iter().take(1) {
            let c = &l.capture;
            let r = analysis::analyze_capture(c, &arg, l.rank, &SkipConfig::default());
            let lost: Vec<String> = r
                .steps
                .considered
                .iter()
                .filter(|c| {
                    !matches!(
                        c.outcome,
                        CandidateOutcome::Absent | CandidateOutcome::NotTried
                    )
                })
                .map(|c| c.describe())
                .collect();
            println!("== {arg}");
            println!(
                "steps: {} ({}); warm-up {:?}; considered: {}",
                r.steps.steps.len(),
                r.steps.origin.describe(),
                r.warm_up.steps,
                lost.join(" | ")
            );
            if let Some(s) = r.step_sides {
                println!(
                    "sides: host median {} gpu median {:?} period {:?} lag {:?} basis {:?}",
                    s.host.median.human(),
                    s.gpu.map(|g| g.median.human()),
                    s.period.map(|p| p.median.human()),
                    s.lag.map(|p| p.median.human()),
                    s.basis
                );
            }
            println!(
                "verdict: {} (old: {}); framework {} ({})",
                r.diagnosis.code(),
                r.verdict.bound.label(),
                r.framework.framework.code(),
                r.framework.evidence
            );
            let practices = analysis::practices(c);
            if let Some(w) = r.window {
                let top = analysis::causes(&r, c, w)
                    .into_iter()
                    .find(|c| c.time.0 > 0);
                if let Some(top) = top {
                    let knob = match top.key {
                        CauseKey::Host(h) => {
                            analysis::host_knobs(h, r.framework.framework, &practices)
                                .first()
                                .map_or("-", |k| k.code())
                        }
                        _ => "-",
                    };
                    println!(
                        "top cause: {} {} (first knob: {knob})",
                        top.key.code(),
                        top.time.human()
                    );
                }
            }
            if let Some(gc) = &r.gap_causes {
                let total = gc.total().0.max(1) as f64;
                let mut row: Vec<String> = Vec::new();
                let mut sum = 0.0;
                for h in HostCause::ALL {
                    let p = 100.0 * gc.host.time_of(h).0 as f64 / total;
                    sum += p;
                    row.push(format!("{} {:.1}", h.code(), p));
                }
                for g in [
                    GapCause::StreamOrEvent,
                    GapCause::SyncCall,
                    GapCause::Unknown,
                ] {
                    let p = 100.0 * gc.time(g).0 as f64 / total;
                    sum += p;
                    row.push(format!("{} {:.1}", CauseKey::Gap(g).code(), p));
                }
                println!(
                    "idle {} = {} (sum {:.1} %)",
                    gc.total().human(),
                    row.join(", "),
                    sum
                );
            }
        }
    }
}
