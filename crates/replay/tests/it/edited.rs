//! Before/after pairs made by editing a shared capture's durations: a kernel class made
//! faster or a cause removed in the loaded capture, the capture re-timed by a small
//! simulator that is not the replay's graph, the step finder re-run on the edited capture
//! (the "after" side), and the before side's replay of the same change checked against
//! the after side's realized steps.
//!
//! The re-timer keeps every delay the capture shows: an activity starts the same time
//! after the later of its launch call's return and its stream's previous end as it did
//! (a wait for another stream, an unexplained wait, a launch latency all stay as long as
//! they were); a host thread's leaves keep their gaps; a synchronising call returns the
//! same time after the last activity it waited for ends, and so does a launch call that
//! returned after its own activity ended (a copy from pageable memory blocks the host). Only the durations of the
//! edited activities change. The replay, by contrast, infers cross-stream producers,
//! drops waits it cannot explain and uses the typical latency on edges that were not
//! binding: the two differ where the capture's dependencies are not what the graph
//! infers, and the tolerance below bounds that difference.

use std::path::Path;

use replay::{Graph, StepWindow, WhatIf, check, is_synchronising_call, predict};
use trace_model::{Capture, HostKind, KernelClass, Nanos, nesting_order};

/// The bound for a predicted step against the realized one (before/after pairs).
/// It is checked on the measured step plus the predicted change against the unchanged
/// replay (as investigate reports a scenario, so the replay's own error on the capture,
/// reported beside it, cancels); the replayed step itself is printed too.
const TOLERANCE: f64 = 0.05;

fn windows(capture: &Capture) -> Vec<StepWindow> {
    let report = analysis::analyze_capture(capture, "edited", None, &Default::default());
    report
        .steps
        .steps
        .iter()
        .enumerate()
        .filter(|(i, _)| report.warm_up.all || report.warm_up.steps.binary_search(i).is_err())
        .map(|(_, s)| StepWindow {
            number: s.number,
            start: s.range.start,
            end: s.range.end,
            gpu_ranged: !report.steps.origin.is_host_ranged(),
        })
        .collect()
}

/// `capture` with each activity's duration from `edit` (`None`: unchanged), re-timed as
/// the module's docs say; `None` when the re-timed capture breaks an order.
pub fn retime(
    capture: &Capture,
    edit: &dyn Fn(&Capture, usize) -> Option<Nanos>,
) -> Option<Capture> {
    let events = capture.host_events();
    let acts = capture.activities();
    // Host leaves (no event of their thread inside them), per thread in order.
    let mut order: Vec<usize> = (0..events.len()).collect();
    order.sort_by_key(|&i| nesting_order(&events[i]));
    let mut leaf = vec![false; events.len()];
    let mut prev_leaf = vec![usize::MAX; events.len()];
    let mut last: Option<usize> = None;
    for (p, &i) in order.iter().enumerate() {
        let e = &events[i];
        let is_leaf = order
            .get(p + 1)
            .is_none_or(|&n| events[n].thread != e.thread || events[n].start >= e.end());
        if !is_leaf {
            continue;
        }
        leaf[i] = true;
        if let Some(l) = last.filter(|&l| events[l].thread == e.thread) {
            prev_leaf[i] = l;
        }
        last = Some(i);
    }
    // What each synchronising call waited for: the last activity launched before its end
    // that ended inside it. A launch call that returned after its own activity ended
    // (a copy from pageable memory) waited for it.
    let mut waited: Vec<Option<usize>> = vec![None; events.len()];
    let mut by_end: Vec<usize> = (0..acts.len()).collect();
    by_end.sort_by_key(|&a| acts[a].end());
    for (a, act) in acts.iter().enumerate() {
        if let Some(l) = act.launch().map(|l| l.index())
            && leaf[l]
            && act.end() <= events[l].end()
            && act.end() >= events[l].start
            && waited[l].is_none_or(|w| acts[w].end() < act.end())
        {
            waited[l] = Some(a);
        }
    }
    for (i, e) in events.iter().enumerate() {
        if !(leaf[i] && e.kind == HostKind::Runtime && is_synchronising_call(capture.name(e.name)))
        {
            continue;
        }
        let hi = by_end.partition_point(|&a| acts[a].end() <= e.end());
        waited[i] = by_end[..hi]
            .iter()
            .rev()
            .take_while(|&&a| acts[a].end() >= e.start)
            .copied()
            .find(|&a| {
                acts[a]
                    .launch()
                    .is_none_or(|l| events[l.index()].start < e.end())
            });
    }
    // Every node processed in order of its measured end: what it depends on ended before.
    #[derive(Clone, Copy)]
    enum Node {
        Host(usize),
        Gpu(usize),
    }
    let mut nodes: Vec<(Nanos, u8, Node)> = Vec::new();
    nodes.extend(
        (0..events.len())
            .filter(|&i| leaf[i])
            .map(|i| (events[i].end(), 1, Node::Host(i))),
    );
    nodes.extend((0..acts.len()).map(|a| (acts[a].end(), 0, Node::Gpu(a))));
    nodes.sort_by_key(|&(end, rank, n)| {
        (
            end,
            rank,
            match n {
                Node::Host(i) | Node::Gpu(i) => i,
            },
        )
    });
    let mut host: Vec<Option<(Nanos, Nanos)>> = vec![None; events.len()];
    let mut gpu: Vec<Option<(Nanos, Nanos)>> = vec![None; acts.len()];
    // A host leaf's new end, or its measured one moved by its thread's latest shift when
    // not processed yet (a launch call that returned after its activity ended: skew).
    let host_end = |host: &[Option<(Nanos, Nanos)>], i: usize| host[i].map(|(_, e)| e);
    for &(_, _, node) in &nodes {
        match node {
            Node::Host(i) => {
                let e = &events[i];
                let start = match prev_leaf.get(i).copied().filter(|&p| p != usize::MAX) {
                    Some(p) => {
                        let (_, pe) = host[p].unwrap_or((events[p].start, events[p].end()));
                        pe + (e.start - events[p].end())
                    }
                    None => e.start,
                };
                let end = match waited[i] {
                    Some(a) => {
                        let post = e.end() - acts[a].end();
                        let (_, ae) = gpu[a].unwrap_or((acts[a].start, acts[a].end()));
                        (ae + post).max(start)
                    }
                    None => start + e.dur,
                };
                host[i] = Some((start, end));
            }
            Node::Gpu(a) => {
                let act = &acts[a];
                let prev = (a > 0 && acts[a - 1].stream == act.stream).then(|| a - 1);
                let launch = act.launch().map(|l| l.index()).filter(|&l| leaf[l]);
                // A launch call that returns after its activity starts (a blocking copy,
                // or clocks that disagree): the activity follows the call's start.
                let by_start = launch.is_some_and(|l| events[l].end() > act.start);
                let launch_time = |l: usize| -> (Nanos, Nanos) {
                    if by_start {
                        let start = host[l]
                            .map(|(s, _)| s)
                            .unwrap_or_else(|| match prev_leaf[l] {
                                p if p != usize::MAX => {
                                    let pe = host[p].map_or(events[p].end(), |(_, e)| e);
                                    pe + (events[l].start - events[p].end())
                                }
                                _ => events[l].start,
                            });
                        (events[l].start, start)
                    } else {
                        (
                            events[l].end(),
                            host_end(&host, l).unwrap_or(events[l].end()),
                        )
                    }
                };
                let measured_after = [
                    prev.map(|p| acts[p].end()),
                    launch.map(|l| launch_time(l).0),
                ]
                .into_iter()
                .flatten()
                .max();
                let new_after = [
                    prev.map(|p| gpu[p].map_or(acts[p].end(), |(_, e)| e)),
                    launch.map(|l| launch_time(l).1),
                ]
                .into_iter()
                .flatten()
                .max();
                let start = match (measured_after, new_after) {
                    (Some(m), Some(n)) => n + (act.start - m),
                    _ => act.start,
                };
                // A stream's order stays (activities that overlapped on a stream, as
                // graph kernels can, keep overlapping).
                let start = prev
                    .and_then(|p| gpu[p])
                    .map_or(start, |(ps, _)| start.max(ps));
                let dur = edit(capture, a).unwrap_or(act.dur);
                gpu[a] = Some((start, start + dur));
            }
        }
    }
    // Events that are not leaves keep their offsets from the leaves of their thread they
    // start before and end after.
    let leaves_of: Vec<usize> = order.iter().copied().filter(|&i| leaf[i]).collect();
    let shift_at = |thread, t: Nanos, at_end: bool| -> Nanos {
        // The leaf of `thread` that ends last at or before `t` (for an end) or starts
        // first at or after `t` (for a start).
        let lo = leaves_of.partition_point(|&l| events[l].thread < thread);
        let hi = leaves_of.partition_point(|&l| events[l].thread <= thread);
        let slice = &leaves_of[lo..hi];
        if at_end {
            let k = slice.partition_point(|&l| events[l].end() <= t);
            k.checked_sub(1).map_or(Nanos::ZERO, |k| {
                host[slice[k]].map_or(Nanos::ZERO, |(_, e)| e - events[slice[k]].end())
            })
        } else {
            let k = slice.partition_point(|&l| events[l].start < t);
            slice.get(k).map_or_else(
                || {
                    k.checked_sub(1).map_or(Nanos::ZERO, |k| {
                        host[slice[k]].map_or(Nanos::ZERO, |(_, e)| e - events[slice[k]].end())
                    })
                },
                |&l| host[l].map_or(Nanos::ZERO, |(s, _)| s - events[l].start),
            )
        }
    };
    let host_times: Vec<(Nanos, Nanos)> = events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            host[i].unwrap_or_else(|| {
                (
                    e.start + shift_at(e.thread, e.start, false),
                    e.end() + shift_at(e.thread, e.end(), true),
                )
            })
        })
        .collect();
    let gpu_times: Vec<(Nanos, Nanos)> = gpu
        .iter()
        .enumerate()
        .map(|(a, t)| t.unwrap_or((acts[a].start, acts[a].end())))
        .collect();
    // Other times (steps, annotations) move with the thread that launches most work.
    let anchor = {
        let mut count = vec![0usize; capture.threads().len()];
        for a in acts {
            if let Some(l) = a.launch() {
                count[events[l.index()].thread.index()] += 1;
            }
        }
        (0..count.len()).max_by_key(|&t| count[t])?
    };
    let anchor = capture.threads()[anchor].id;
    let other = |t: Nanos| t + shift_at(anchor, t, false);
    capture.retimed(&host_times, &gpu_times, &other)
}

fn mean(steps: impl Iterator<Item = Nanos>) -> Nanos {
    let v: Vec<Nanos> = steps.collect();
    Nanos(v.iter().map(|n| n.0).sum::<i64>() / v.len().max(1) as i64)
}

/// One edit of a capture and the scenario that expresses it.
struct Edit {
    spec: &'static str,
    edit: fn(&Capture, usize) -> Option<Nanos>,
}

const EDITS: [Edit; 4] = [
    Edit {
        spec: "gemm=2x",
        edit: |c, a| {
            let act = &c.activities()[a];
            (act.class == KernelClass::Gemm).then(|| Nanos((act.dur.0 as f64 / 2.0).round() as i64))
        },
    },
    Edit {
        spec: "elementwise=0,norm=0",
        edit: |c, a| {
            let act = &c.activities()[a];
            matches!(act.class, KernelClass::Elementwise | KernelClass::Norm).then_some(Nanos::ZERO)
        },
    },
    Edit {
        spec: "collective=0",
        edit: |c, a| {
            let act = &c.activities()[a];
            matches!(act.class, KernelClass::Collective(_)).then_some(Nanos::ZERO)
        },
    },
    Edit {
        spec: "memcpy=0",
        edit: |c, a| {
            let act = &c.activities()[a];
            matches!(act.class, KernelClass::Memcpy(_)).then_some(Nanos::ZERO)
        },
    },
];

/// The re-timer with no edit reproduces the capture exactly: it is a re-timing, not a
/// model that moves anything by itself.
fn unedited_is_identity(name: &str, capture: &Capture) {
    let same = retime(capture, &|_, _| None).expect("re-times");
    for (a, b) in capture.activities().iter().zip(same.activities()) {
        assert_eq!(
            (a.start, a.dur),
            (b.start, b.dur),
            "{name}: an activity moved"
        );
    }
    for (a, b) in capture.host_events().iter().zip(same.host_events()) {
        assert_eq!(
            (a.start, a.dur),
            (b.start, b.dur),
            "{name}: a host event moved"
        );
    }
}

#[test]
fn edited_shared_captures_realize_the_replayed_prediction() {
    let Some(root) = test_support::traces_dir("replay") else {
        test_support::skip_notice();
        return;
    };
    let files = [
        "pytorch/kineto-v100-resnet50-train/worker0.1623143566756.pt.trace.json.gz",
        "pytorch/hta-trace-diff/control/control.json.gz",
        "pytorch/hta-v100-2rank-large/df_index_resolver.json.gz",
        "pytorch/hta-nccl-a100/nccl_data.json.gz",
        "pytorch/hta-cudagraph-a100/rank0.json.gz",
        "pytorch/sglang-qwen3-30b-a3b-decode-b300/1782799835.6885648-TP-0-DECODE.trace.json.gz",
        "pytorch/sglang-qwen3-30b-a3b-decode-mi300x/1782859605.7198358-TP-0-DECODE.trace.json.gz",
        "pytorch/tracelens-h100/google_owlv2-large-patch14-ensemble__1016001.json.gz",
        "jax/rocm-mi300-jax08-gemm/tw003.xplane.pb",
        "nsys/pipit-cloverleaf-a100/perlmutter-cloverleaf-cuda.sqlite",
    ];
    let mut table = String::from(
        "| capture | scenario | events changed | steps | before (measured) | unchanged replay | predicted (replayed) | measured + predicted change | realized (edited capture) | error of the replayed step | error of the change |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut checked = 0;
    for file in files {
        let path = root.join(file);
        if !path.exists() {
            println!("{file}: not in this corpus, left out");
            continue;
        }
        let loaded = load::load(Path::new(&path)).expect("loads");
        let capture = &loaded[0].capture;
        unedited_is_identity(file, capture);
        let before_windows = windows(capture);
        let graph = Graph::build(capture).expect("replays");
        for Edit { spec, edit } in EDITS {
            let changed = (0..capture.activities().len())
                .filter(|&a| edit(capture, a).is_some())
                .count();
            if changed == 0 {
                continue;
            }
            let after = retime(capture, &edit).unwrap_or_else(|| panic!("{file} {spec}: re-times"));
            // The after side: the step finder runs again on the edited capture.
            let after_windows = windows(&after);
            assert_eq!(
                after_windows.len(),
                before_windows.len(),
                "{file} {spec}: the edited capture has other steps"
            );
            let realized = check(&Graph::build(&after).expect("replays"), &after_windows);
            let p = predict(
                &graph,
                capture,
                &before_windows,
                &WhatIf::parse(spec).expect(spec),
            );
            let before = mean(p.steps.iter().map(|s| s.measured.value));
            let baseline = mean(p.steps.iter().map(|s| s.baseline.value));
            let predicted = mean(p.steps.iter().map(|s| s.predicted.value));
            let realized = mean(realized.steps.iter().map(|s| s.measured.value));
            let raw = (predicted.0 - realized.0) as f64 / realized.0.max(1) as f64;
            // The predicted change against the unchanged replay, applied to the measured
            // step (as investigate states it: the replay's own error cancels).
            let applied = before + (predicted - baseline);
            let error = (applied.0 - realized.0) as f64 / realized.0.max(1) as f64;
            table.push_str(&format!(
                "| {file} | {spec} | {changed} | {} | {} | {} | {} | {} | {} | {:+.2} % | {:+.2} % |\n",
                p.steps.len(),
                before.human(),
                baseline.human(),
                predicted.human(),
                applied.human(),
                realized.human(),
                100.0 * raw,
                100.0 * error
            ));
            assert!(
                error.abs() <= TOLERANCE,
                "{file} {spec}: measured {} + predicted change {} = {}, realized {} ({:+.1} %)",
                before.human(),
                (predicted - baseline).human(),
                applied.human(),
                realized.human(),
                100.0 * error
            );
            checked += 1;
        }
    }
    println!("{table}");
    assert!(checked > 0 || !root.join(files[0]).exists());
}
