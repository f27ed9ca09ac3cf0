//! The synthetic XSpace `testdata/attribution/synth.xplane.pb` (see its `.md`): exact
//! counts per match kind and deciding stat, the while loop's iterations, the async
//! collective missing from the module, the program under two ids, the graph share.

use attribution::{Config, DecidedBy, MatchKind};
use trace_model::Nanos;

fn synth() -> attribution::Attribution {
    let path = test_support::workspace_root().join("testdata/attribution/synth.xplane.pb");
    attribution::attribute_path(&path, &Config::default()).expect("the fixture attributes")
}

#[test]
fn counts_per_match_kind() {
    let result = synth();
    assert_eq!(result.kernels.len(), 18);
    let counts: Vec<(MatchKind, u64)> = result
        .by_match_kind()
        .into_iter()
        .map(|(kind, (count, _))| (kind, count))
        .collect();
    assert_eq!(
        counts,
        [
            (MatchKind::Exact, 7),
            (MatchKind::Name, 3),
            (MatchKind::Order, 5),
            (MatchKind::EnclosingRange, 0),
            (MatchKind::None, 3)
        ]
    );
    let how: Vec<(String, MatchKind, DecidedBy, u64)> = result
        .how()
        .into_iter()
        .filter(|h| h.device == "all")
        .map(|h| (h.device, h.match_kind, h.decided_by, h.kernels))
        .collect();
    let all = |kind, by, n| ("all".to_owned(), kind, by, n);
    assert_eq!(
        how,
        [
            all(MatchKind::Exact, DecidedBy::HloOpProgramId, 7),
            all(MatchKind::Name, DecidedBy::KernelNameInWindow, 1),
            all(MatchKind::Name, DecidedBy::KernelNameInGraph, 2),
            all(MatchKind::Order, DecidedBy::ScheduleOrder, 2),
            all(MatchKind::Order, DecidedBy::AsyncStartOrder, 3),
            all(MatchKind::None, DecidedBy::GraphAmbiguous, 1),
            all(MatchKind::None, DecidedBy::NoCandidate, 1),
            all(MatchKind::None, DecidedBy::NoProgram, 1),
        ]
    );
}

#[test]
fn while_iterations_and_async_collectives() {
    let result = synth();
    // Each of the three all-gathers keeps its label and takes the line of the
    // all-gather-start of its own iteration (line 22), after that iteration's sin (line 21).
    let gathers: Vec<_> = result
        .kernels
        .iter()
        .filter(|k| k.name.starts_with("ncclDevKernel_AllGather"))
        .collect();
    assert_eq!(gathers.len(), 3);
    for k in gathers {
        assert_eq!(k.instruction, "all-gather.34");
        assert_eq!(k.op_name, "jit(step)/while/body/all_gather");
        assert_eq!(k.source_line, "/work/synth_step.py:22");
        assert_eq!(k.match_kind, MatchKind::Order);
    }
    let copy = result
        .kernels
        .iter()
        .find(|k| k.kind == "memcpy")
        .expect("the memcpy");
    assert_eq!(
        (copy.instruction.as_str(), copy.match_kind),
        ("copy.14", MatchKind::Order)
    );
}

#[test]
fn program_under_two_ids_and_graph_share() {
    let result = synth();
    let programs: Vec<(i64, u64, Vec<i64>)> = result
        .programs
        .iter()
        .map(|p| (p.program_id, p.kernels, p.same_bytes_as.clone()))
        .collect();
    assert_eq!(programs, [(7, 14, vec![8]), (8, 3, vec![7])]);
    assert_eq!(result.chosen_program, Some(7));
    let (name, text) = result.hlo_text.as_ref().expect("HLO text");
    assert_eq!(name, "jit_synth_step(7).hlo.txt");
    assert!(text.contains("known_trip_count"), "{text}");
    // Graph kernels: 2 + 2 + 6 µs, of which the two fusions (4 µs) were attributed.
    assert_eq!(result.graph_time_ns(), (Nanos(10_000), Nanos(4_000)));
    assert_eq!(result.needs_new_capture.len(), 1);
    // Devices: GPU 1's kernels carry program id 8.
    assert!(
        result
            .kernels
            .iter()
            .filter(|k| k.device == 1)
            .all(|k| k.program == "jit_synth_step(8)")
    );
}

#[test]
fn one_program_keeps_only_its_kernels() {
    let path = test_support::workspace_root().join("testdata/attribution/synth.xplane.pb");
    let config = Config {
        program: Some(8),
        ..Config::default()
    };
    let result = attribution::attribute_path(&path, &config).expect("attributes");
    assert_eq!(result.kernels.len(), 3);
    assert_eq!(result.other_program_kernels.0, 15);
    let config = Config {
        program: Some(99),
        ..Config::default()
    };
    let err = attribution::attribute_path(&path, &config).expect_err("no program 99");
    assert!(err.to_string().contains("no program with id 99"), "{err}");
}

#[test]
fn per_device_tables() {
    let result = synth();
    assert_eq!(result.devices(), [0, 1]);
    // GPU 1: all three kernels attributed (4 + 9 + 5 µs), each with a line.
    let gpu1: Nanos = result
        .lines_by_device()
        .iter()
        .filter(|(d, _)| *d == 1)
        .map(|(_, l)| l.gpu_time_ns)
        .sum();
    assert_eq!(gpu1, Nanos(18_000));
    let all: Nanos = result.lines().iter().map(|l| l.gpu_time_ns).sum();
    let by_device: Nanos = result
        .lines_by_device()
        .iter()
        .map(|(_, l)| l.gpu_time_ns)
        .sum();
    assert_eq!(all, by_device);
    assert_eq!(all, result.attributed_time_ns());
    let ops: u64 = result.ops_by_device().iter().map(|(_, o)| o.kernels).sum();
    assert_eq!(ops, result.ops().iter().map(|o| o.kernels).sum::<u64>());
}
