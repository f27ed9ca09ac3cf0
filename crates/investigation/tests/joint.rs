//! A rank directory's ranks replayed together by the investigation (`replay::RanksPredictor`):
//! the drawn rank's estimates come from a joint replay whose all-reduces wait for their
//! slowest peer, where each rank replayed alone would keep its measured wait. Asserted on
//! the typed value; a single capture keeps its replay alone.

use investigation::{Advice, CauseReplay};
use replay::{LaneKind, LaneName};
use trace_model::{CollectiveKind, Nanos};

mod common;
use common::{US, cause, causes, ev, replayed, write_trace};

/// Each step of both ranks: 1,820 µs.
const STEP: u64 = 1820;
/// Rank 0 loads data for 800 µs before launching, rank 1 runs CPU ops for 1,200 µs.
const HOST: [u64; 2] = [800, 1200];

/// Rank `r`'s trace: per step, its host work (`HOST[r]`), a 500 µs GEMM and an
/// all-reduce on stream 7, then a device sync. The all-reduces of both ranks end together,
/// 100 µs after rank 1's (the later) starts: rank 0's waits 400 µs for rank 1's.
fn rank_events(r: usize) -> Vec<String> {
    let host = HOST[r];
    let mut events = Vec::new();
    let launch = |events: &mut Vec<String>, corr: u64, ts: u64, name: &str, ks: u64, kd: u64| {
        events.push(ev(
            "cuda_runtime",
            "cudaLaunchKernel",
            1,
            ts,
            5,
            &format!(r#""correlation": {corr}"#),
        ));
        events.push(ev(
            "kernel",
            name,
            7,
            ks,
            kd,
            &format!(r#""correlation": {corr}, "stream": 7, "device": 0"#),
        ));
    };
    for s in 0..6u64 {
        let t = 1000 + s * STEP;
        events.push(common::step(s + 1, t, STEP));
        if r == 0 {
            events.push(ev(
                "user_annotation",
                "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                1,
                t,
                host,
                "",
            ));
        } else {
            events.push(ev("cpu_op", "aten::index_select", 1, t, host, ""));
        }
        let gemm_start = t + host + 10;
        launch(
            &mut events,
            2 * s + 1,
            t + host,
            "volta_sgemm_128x64_nn",
            gemm_start,
            500,
        );
        let ar_start = gemm_start + 500;
        let ar_end = t + HOST[1] + 10 + 500 + 100;
        launch(
            &mut events,
            2 * s + 2,
            t + host + 20,
            "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
            ar_start,
            ar_end - ar_start,
        );
        events.push(ev(
            "cuda_runtime",
            "cudaDeviceSynchronize",
            1,
            t + host + 30,
            ar_end + 5 - (t + host + 30),
            "",
        ));
    }
    events
}

fn write_rank(dir: &std::path::Path, r: usize) -> std::path::PathBuf {
    let head = format!(r#""distributedInfo": {{"rank": {r}, "world_size": 2}}, "#);
    write_trace(dir, &format!("rank{r}.json"), &head, &rank_events(r))
}

fn options(what_if: Option<&str>) -> investigation::Options {
    investigation::Options {
        min_gpu_work: Some(Nanos(0)),
        what_if: what_if.map(|w| replay::WhatIf::parse(w).expect("a what-if")),
        ..Default::default()
    }
}

fn rank_dir(dir: &std::path::Path) -> (std::path::PathBuf, [std::path::PathBuf; 2]) {
    let ranks = dir.join("ranks");
    std::fs::create_dir(&ranks).expect("created");
    let files = [write_rank(&ranks, 0), write_rank(&ranks, 1)];
    (ranks, files)
}

/// Rank 1 arrives last at every all-reduce: it is the straggler, drawn. Its CPU work
/// (1,200 µs a step) removed on every rank: alone, its all-reduce keeps its measured
/// 100 µs and the step shortens by about the CPU work; with rank 0 replayed beside it,
/// the all-reduce waits for rank 0, which still loads data for 800 µs: the step shortens
/// by 400 µs, and the critical path moves from rank 1's host thread to rank 0's.
#[test]
fn a_rank_directory_replays_its_ranks_together() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (ranks, files) = rank_dir(dir.path());
    let joint = investigation::investigate(&ranks, &options(None))
        .expect("investigates")
        .investigation;
    let drawn = joint.drawn.as_ref().expect("a rank drawn");
    assert_eq!(drawn.who, investigation::Who::Rank(1), "{drawn:?}");
    assert!(drawn.straggler, "{drawn:?}");
    let cpu = replayed(cause(causes(&joint), "gap:host-not-launched:cpu-work"));
    assert_eq!(cpu.scenario, "host:cpu-work=0");
    let note = cpu.ranks.as_ref().expect("replayed with the other rank");
    assert_eq!(note.ranks, ["0", "1"]);
    assert_eq!(note.matched, [(CollectiveKind::AllReduce, 6)]);
    assert!(note.not_matched.is_empty(), "{note:?}");
    // The unchanged joint replay reproduces the measured steps.
    assert_eq!(cpu.replay_error, Some(0.0), "{cpu:?}");
    assert_eq!(cpu.replayed_step, cpu.measured_step, "{cpu:?}");
    assert_eq!(cpu.measured_step, Nanos(STEP as i64 * US), "{cpu:?}");
    let saved = cpu.replayed_step - cpu.step_after;
    assert!(
        saved >= Nanos(390 * US) && saved <= Nanos(410 * US),
        "{cpu:?}"
    );
    // Every rank's host events are on thread 1.
    let host_of = |rank: &str| LaneName {
        rank: Some(rank.to_owned()),
        lane: LaneKind::HostThread { tid: 1 },
    };
    assert_eq!(cpu.critical_lane_before, Some(host_of("1")), "{cpu:?}");
    assert_eq!(cpu.critical_lane_after, Some(host_of("0")), "{cpu:?}");

    // Rank 1 investigated alone: the same scenario claims all of its CPU work back.
    let alone = investigation::investigate(&files[1], &options(None))
        .expect("investigates")
        .investigation;
    let cpu_alone = replayed(cause(causes(&alone), "gap:host-not-launched:cpu-work"));
    assert!(cpu_alone.ranks.is_none(), "{cpu_alone:?}");
    assert_eq!(cpu_alone.replayed_step, cpu.replayed_step);
    let saved = cpu_alone.replayed_step - cpu_alone.step_after;
    assert!(
        saved >= Nanos(1100 * US) && saved <= Nanos(1200 * US),
        "{cpu_alone:?}"
    );
}

/// `--what-if` on a rank directory replays every rank: rank 0's data loading removed
/// leaves rank 1 (drawn) as it was, since rank 0 was never the one waited for; replayed
/// alone, rank 0 would have claimed 800 µs a step.
#[test]
fn a_what_if_on_a_rank_directory_is_replayed_together() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (ranks, _) = rank_dir(dir.path());
    let run = investigation::investigate(&ranks, &options(Some("host:data-loading=0")))
        .expect("investigates");
    let [w] = run.what_if.as_slice() else {
        panic!("one drawn rank: {:?}", run.what_if);
    };
    assert_eq!(w.alone, None, "{w:?}");
    let p = w.prediction.as_ref().expect("replayed");
    let note = p.ranks.as_ref().expect("replayed together");
    assert_eq!(note.rank, "1", "{note:?}");
    assert_eq!(note.ranks, ["0", "1"], "{note:?}");
    assert_eq!(note.matched, [(CollectiveKind::AllReduce, 6)], "{note:?}");
    let median = &p.steps[p.median_step.expect("a median step")];
    assert_eq!(median.measured.value, Nanos(STEP as i64 * US), "{median:?}");
    // The unchanged joint replay reproduces the measured step, and rank 0's data loading
    // gone leaves rank 1's step as it was: rank 0 was never the one waited for.
    assert_eq!(median.baseline.value, median.measured.value, "{median:?}");
    assert_eq!(median.predicted.value, median.baseline.value, "{median:?}");
}

/// The shared rank directories (`TRACEWISE_TRACES`) investigated: every replayed cause of
/// the drawn rank comes from the joint replay of all ranks, which reproduces the measured
/// steps (0 % error).
#[test]
fn the_shared_rank_directories_replay_unchanged_together() {
    let Some(root) = test_support::traces_dir("investigation") else {
        return;
    };
    for (dir, ranks) in [
        ("pytorch/hta-sampled-2rank", 2),
        ("pytorch/param-dlrm-8rank", 8),
    ] {
        let options = investigation::Options {
            what_if: Some(replay::WhatIf::parse("gemm=2x").expect("a what-if")),
            ..Default::default()
        };
        let run = investigation::investigate(&root.join(dir), &options).expect("investigates");
        let [w] = run.what_if.as_slice() else {
            panic!("{dir}: one drawn rank: {:?}", run.what_if);
        };
        assert_eq!(w.alone, None, "{dir}");
        let p = w.prediction.as_ref().expect("replayed");
        let note = p.ranks.as_ref().expect("replayed together");
        assert_eq!(note.ranks.len(), ranks, "{dir}: {note:?}");
        let median = &p.steps[p.median_step.expect("a median step")];
        assert_eq!(
            median.baseline.value, median.measured.value,
            "{dir}: {median:?}"
        );
        let inv = &run.investigation;
        let Advice::Ranked(ranked) = &inv.advice else {
            // hta-sampled-2rank: nothing ranked (the what-if above is its check).
            continue;
        };
        let mut replays = 0;
        for c in &ranked.causes {
            let CauseReplay::Replayed(r) = &c.replay else {
                continue;
            };
            replays += 1;
            let note = r.ranks.as_ref().expect("replayed together");
            assert_eq!(note.ranks.len(), ranks, "{dir}: {note:?}");
            assert_eq!(r.replay_error, Some(0.0), "{dir}: {}: {r:?}", c.key);
            assert_eq!(r.replayed_step, r.measured_step, "{dir}: {}: {r:?}", c.key);
            if dir.ends_with("dlrm-8rank") {
                assert_eq!(note.matched, [(CollectiveKind::AllReduce, 3)], "{dir}");
            }
        }
        assert!(replays > 0, "{dir}: no cause replayed");
    }
}

/// Rank 0's kernels carry no correlation ids, so its capture cannot be replayed: the drawn
/// rank (rank 1, the straggler) is replayed alone, and each of its replayed causes says so
/// and names rank 0, where before it was silent; its replays are those of rank 1 alone.
#[test]
fn a_rank_that_cannot_be_replayed_leaves_the_drawn_rank_alone() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let ranks = dir.path().join("ranks");
    std::fs::create_dir(&ranks).expect("created");
    let unlinked: Vec<String> = rank_events(0)
        .into_iter()
        .map(|e| {
            if e.contains(r#""cat": "kernel""#) {
                // `"correlation": N, ` dropped from the kernel's args.
                let (head, tail) = e.split_once(r#""correlation": "#).expect("linked");
                let (_, rest) = tail.split_once(", ").expect("more args");
                format!("{head}{rest}")
            } else {
                e
            }
        })
        .collect();
    let head = r#""distributedInfo": {"rank": 0, "world_size": 2}, "#;
    write_trace(&ranks, "rank0.json", head, &unlinked);
    let one = write_rank(&ranks, 1);
    let run = investigation::investigate(&ranks, &options(Some("host:cpu-work=0")))
        .expect("investigates");
    let inv = &run.investigation;
    assert_eq!(
        inv.drawn.as_ref().expect("a rank drawn").who,
        investigation::Who::Rank(1)
    );
    let mut replays = 0;
    for c in causes(inv) {
        let CauseReplay::Replayed(r) = &c.replay else {
            continue;
        };
        replays += 1;
        assert!(r.ranks.is_none(), "{}: {r:?}", c.key);
        match r.alone.as_deref() {
            Some(investigation::ReplayedAlone::NotReplayable { rank, reason }) => {
                assert_eq!(rank, "0", "{}", c.key);
                assert!(
                    matches!(reason, replay::CannotReplay::Unlinked { linked: 0, .. }),
                    "{}: {reason:?}",
                    c.key
                );
            }
            other => panic!("{}: {other:?}", c.key),
        }
    }
    assert!(replays > 0, "no cause replayed");
    // Rank 1's replays alone: the same figures as investigating its file by itself.
    let alone = investigation::investigate(&one, &options(None))
        .expect("investigates")
        .investigation;
    let key = "gap:host-not-launched:cpu-work";
    let (with, by_itself) = (
        replayed(cause(causes(inv), key)),
        replayed(cause(causes(&alone), key)),
    );
    assert_eq!(with.step_after, by_itself.step_after);
    assert!(by_itself.alone.is_none());
}
