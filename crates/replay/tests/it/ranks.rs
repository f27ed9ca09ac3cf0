//! Two ranks replayed together: a collective matched across ranks waits for its slowest
//! peer, so a rank made faster only helps where it was the one waited for.

use replay::{Graph, NotMatched, RankCapture, StepWindow, WhatIf, predict, predict_ranks};
use trace_model::{Capture, CollectiveKind, Nanos};

use crate::sim::{ALLREDUCE, GEMM, LATENCY, SYNC_POST, Sim};

const CALL: i64 = 3_000;
const TRANSFER: i64 = 100_000;

/// One rank: a GEMM of `compute` ns, then an all-reduce on the same stream lasting until
/// `ar_end` (when given; else `TRANSFER`), then a device sync. With the all-reduce's
/// start and end.
fn rank(compute: i64, ar_end: Option<i64>) -> (Capture, Vec<StepWindow>, (i64, i64)) {
    let mut sim = Sim::new(1);
    let mut ar = (0, 0);
    sim.step(1, |sim| {
        let gemm = sim.launch(CALL, 0, GEMM, compute, None, None);
        let dur = ar_end.map_or(TRANSFER, |end| end - gemm.end);
        let a = sim.launch(CALL, 0, ALLREDUCE, dur, None, None);
        ar = (a.start, a.end);
        sim.sync();
    });
    let (capture, windows) = sim.finish();
    (capture, windows, ar)
}

fn what_if(spec: &str) -> WhatIf {
    WhatIf::parse(spec).expect(spec)
}

fn unchanged() -> WhatIf {
    WhatIf {
        changes: Vec::new(),
    }
}

/// Rank 0 computes 1 ms then all-reduces, rank 1 computes 2 ms then all-reduces; as
/// measured, rank 0's all-reduce waits 1 ms for rank 1.
#[test]
fn a_collective_waits_for_its_slowest_peer() {
    let (c1, w1, ar1) = rank(2_000_000, None);
    let (c0, w0, ar0) = rank(1_000_000, Some(ar1.1));
    // Both GEMMs start one call and one launch latency after the step's start.
    assert_eq!(ar1.0 - ar0.0, 1_000_000);
    assert_eq!(ar0.1, ar1.1);
    let (g0, g1) = (Graph::build(&c0).unwrap(), Graph::build(&c1).unwrap());
    let ranks = [
        RankCapture {
            capture: &c0,
            graph: &g0,
            windows: &w0,
        },
        RankCapture {
            capture: &c1,
            graph: &g1,
            windows: &w1,
        },
    ];
    let step = |p: &replay::RanksPrediction, r: usize| {
        let s = &p.ranks[r].steps[0];
        (s.measured.value, s.baseline.value, s.predicted.value)
    };
    // Each step: from its host start to the sync's return, SYNC_POST after the
    // all-reduce ends.
    let measured0 = Nanos(ar0.1 + SYNC_POST - w0[0].start.0);
    let measured1 = Nanos(ar1.1 + SYNC_POST - w1[0].start.0);
    assert_eq!(measured0, measured1);
    assert_eq!(
        measured0,
        Nanos(CALL + LATENCY + 2_000_000 + TRANSFER + SYNC_POST)
    );

    // Unchanged: the joint replay reproduces both ranks exactly, with the matching on.
    let p = predict_ranks(&ranks, &[]);
    assert_eq!(p.matched, [(CollectiveKind::AllReduce, 1)]);
    assert!(p.reasons.is_empty(), "{:?}", p.reasons);
    assert_eq!(p.out_of_order, 0);
    for r in 0..2 {
        let (m, b, c) = step(&p, r);
        assert_eq!((b, c), (m, m), "rank {r}");
    }

    // Rank 1's compute 2x faster: it reaches the all-reduce 1 ms earlier, and so does
    // rank 0's all-reduce end: both steps shorten by 1 ms.
    let p = predict_ranks(&ranks, &[unchanged(), what_if("gemm=2x")]);
    assert_eq!(
        step(&p, 0),
        (measured0, measured0, measured0 - Nanos(1_000_000))
    );
    assert_eq!(
        step(&p, 1),
        (measured1, measured1, measured1 - Nanos(1_000_000))
    );
    // Replayed alone, rank 0 changes nothing (its all-reduce keeps its measured wait):
    // the matching is what carries rank 1's change to it.
    let alone = predict(&g0, &c0, &w0, &unchanged());
    assert_eq!(alone.steps[0].predicted.value, measured0);

    // Rank 0's compute 2x faster: its all-reduce still waits for rank 1; nothing changes
    // on either rank.
    let p = predict_ranks(&ranks, &[what_if("gemm=2x")]);
    assert_eq!(p.ranks[0].changed, [("gemm=2x".to_owned(), 1)]);
    assert_eq!(step(&p, 0), (measured0, measured0, measured0));
    assert_eq!(step(&p, 1), (measured1, measured1, measured1));
    // Replayed alone, rank 0 would wrongly shorten by half its compute.
    let alone = predict(&g0, &c0, &w0, &what_if("gemm=2x"));
    assert_eq!(alone.steps[0].predicted.value, measured0 - Nanos(500_000));
}

/// Ranks with different numbers of all-reduces are not matched: the reason is given,
/// and each rank replays as it does alone.
#[test]
fn collectives_are_not_matched_when_counts_differ() {
    let (c1, w1, ar1) = rank(2_000_000, None);
    let mut sim = Sim::new(1);
    sim.step(1, |sim| {
        let gemm = sim.launch(CALL, 0, GEMM, 1_000_000, None, None);
        sim.launch(CALL, 0, ALLREDUCE, ar1.1 - gemm.end, None, None);
        sim.launch(CALL, 0, ALLREDUCE, TRANSFER, None, None);
        sim.sync();
    });
    let (c0, w0) = sim.finish();
    let (g0, g1) = (Graph::build(&c0).unwrap(), Graph::build(&c1).unwrap());
    let ranks = [
        RankCapture {
            capture: &c0,
            graph: &g0,
            windows: &w0,
        },
        RankCapture {
            capture: &c1,
            graph: &g1,
            windows: &w1,
        },
    ];
    let p = predict_ranks(&ranks, &[unchanged(), what_if("gemm=2x")]);
    assert!(p.matched.is_empty(), "{:?}", p.matched);
    assert_eq!(
        p.reasons,
        [NotMatched::CountsDiffer {
            kind: CollectiveKind::AllReduce,
            counts: vec![2, 1],
        }]
    );
    // The words the text output writes for it (unchanged from when it was a string).
    assert_eq!(
        p.reasons[0].to_string(),
        "cannot match: counts differ: all-reduce kernels per rank (rank 0: 2, rank 1: 1); \
         this kind is replayed on each rank alone"
    );
    for (r, (g, c, w)) in [(&g0, &c0, &w0), (&g1, &c1, &w1)].into_iter().enumerate() {
        let w_if = if r == 0 {
            unchanged()
        } else {
            what_if("gemm=2x")
        };
        let alone = predict(g, c, w, &w_if);
        let values = |s: &[replay::StepPrediction]| -> Vec<(Nanos, Nanos, Nanos)> {
            s.iter()
                .map(|s| (s.measured.value, s.baseline.value, s.predicted.value))
                .collect()
        };
        assert_eq!(values(&p.ranks[r].steps), values(&alone.steps), "rank {r}");
    }
}

/// Two all-reduces that cannot be one collective (rank 0's ended before rank 1's
/// started: clocks that disagree) are not matched, and say so.
#[test]
fn collectives_whose_times_cannot_meet_are_not_matched() {
    let (c0, w0, ar0) = rank(1_000_000, None);
    let (c1, w1, ar1) = rank(2_000_000, None);
    assert!(ar0.1 < ar1.0);
    let (g0, g1) = (Graph::build(&c0).unwrap(), Graph::build(&c1).unwrap());
    let ranks = [
        RankCapture {
            capture: &c0,
            graph: &g0,
            windows: &w0,
        },
        RankCapture {
            capture: &c1,
            graph: &g1,
            windows: &w1,
        },
    ];
    let p = predict_ranks(&ranks, &[what_if("gemm=2x")]);
    assert_eq!(p.matched, [(CollectiveKind::AllReduce, 0)]);
    assert_eq!(
        p.reasons,
        [NotMatched::ClocksDisagree {
            kind: CollectiveKind::AllReduce,
            count: 1,
        }]
    );
    // Rank 0 then replays as it does alone: half its compute saved.
    let alone = predict(&g0, &c0, &w0, &what_if("gemm=2x"));
    assert_eq!(
        p.ranks[0].steps[0].predicted.value,
        alone.steps[0].predicted.value
    );
    assert_eq!(
        alone.steps[0].measured.value - alone.steps[0].predicted.value,
        Nanos(500_000)
    );
}

/// The shared multi-rank captures (`TRACEWISE_TRACES`) replayed together, unchanged: what
/// was matched, why not, and each rank's median step error beside its replay alone.
#[test]
fn joint_replay_of_the_shared_rank_directories() {
    let Some(root) = test_support::traces_dir("replay") else {
        test_support::skip_notice();
        return;
    };
    for dir in ["pytorch/hta-sampled-2rank", "pytorch/param-dlrm-8rank"] {
        let Ok(loaded) = load::load(&root.join(dir)) else {
            eprintln!("{dir}: not loaded");
            continue;
        };
        let built: Vec<(Graph, Vec<StepWindow>)> = loaded
            .iter()
            .filter_map(|l| {
                let g = Graph::build(&l.capture).ok()?;
                Some((g, crate::real::windows(&l.capture, "rank", l.rank)))
            })
            .collect();
        if built.len() != loaded.len() || built.len() < 2 {
            eprintln!("{dir}: {} of {} ranks replay", built.len(), loaded.len());
            continue;
        }
        let ranks: Vec<RankCapture<'_>> = loaded
            .iter()
            .zip(&built)
            .map(|(l, (g, w))| RankCapture {
                capture: &l.capture,
                graph: g,
                windows: w,
            })
            .collect();
        let p = predict_ranks(&ranks, &[]);
        assert_eq!(p.ranks.len(), ranks.len());
        eprintln!(
            "{dir}: matched {:?}; {:?}; out of joint order {}",
            p.matched, p.reasons, p.out_of_order
        );
        // Where every rank replays exactly alone, every matched collective's members start
        // at their measured times, so the joint replay must be exact too.
        let all_exact = ranks.iter().all(|rank| {
            replay::check(rank.graph, rank.windows)
                .steps
                .iter()
                .all(|s| s.replayed.value == s.measured.value)
        });
        for (r, rank) in ranks.iter().enumerate() {
            let alone = replay::check(rank.graph, rank.windows);
            if all_exact {
                for s in &p.ranks[r].steps {
                    assert_eq!(s.baseline.value, s.measured.value, "{dir} rank {r}");
                }
            }
            let errors = p.ranks[r].errors();
            assert_eq!(errors.len(), rank.windows.len());
            // Baseline and prediction are the same replay when nothing changes.
            for s in &p.ranks[r].steps {
                assert_eq!(s.baseline.value, s.predicted.value);
            }
            let mut abs: Vec<f64> = errors.iter().map(|e| e.abs()).collect();
            abs.sort_by(f64::total_cmp);
            let joint = abs.get(abs.len().saturating_sub(1) / 2).copied();
            eprintln!(
                "  rank {r}: {} steps, median |error| joint {:?}, alone {:?}",
                abs.len(),
                joint.map(|e| format!("{:.2} %", 100.0 * e)),
                alone
                    .median_abs_error
                    .map(|e| format!("{:.2} %", 100.0 * e)),
            );
        }
    }
}

/// Why collectives were not matched serialises typed, tagged by `code`, with the kind in
/// snake case, and reads back as itself (report.json keeps it so).
#[test]
fn not_matched_serialises_tagged() {
    let reasons = [
        NotMatched::PointToPoint,
        NotMatched::CountsDiffer {
            kind: CollectiveKind::AllReduce,
            counts: vec![2, 1],
        },
        NotMatched::ClocksDisagree {
            kind: CollectiveKind::Dispatch,
            count: 3,
        },
    ];
    let json = serde_json::to_value(&reasons).expect("serialises");
    assert_eq!(
        json,
        serde_json::json!([
            {"code": "point-to-point"},
            {"code": "counts-differ", "kind": "all_reduce", "counts": [2, 1]},
            {"code": "clocks-disagree", "kind": "dispatch", "count": 3},
        ])
    );
    let back: Vec<NotMatched> = serde_json::from_value(json).expect("reads back");
    assert_eq!(back, reasons);
}
