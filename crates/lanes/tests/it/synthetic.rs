//! Synthetic traces: a CUDA-graph replay over hundreds of capture streams, and
//! pipeline-parallel rank sets (complete, and with one rank cut short).

use std::path::Path;

use lanes::synth::{self, GraphTraceSpec, PpSpec};
use lanes::{Trace, validate};

use crate::support::*;

/// Writes `trace`, validates the file structurally and reads it back.
fn write_and_validate(trace: &Trace, gpu_slices: usize) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for name in ["out.json.gz", "out.json"] {
        let path = dir.path().join(name);
        lanes::write_trace_file(trace, &path).expect("the output is written");
        let report = validate::validate_file(&path).expect("the output is a trace");
        assert!(report.is_clean(), "{name}: {report:?}");
        assert_eq!(report.gpu_slices, gpu_slices);
        let capture = chrome_reader::load(&path).expect("the output loads as a capture");
        assert_eq!(capture.activities().len(), gpu_slices, "{name}");
        let again = lanes::write_trace_file(trace, &path);
        assert!(again.is_err(), "an existing output is not replaced");
        lanes::overwrite_trace_file(trace, &path).expect("--overwrite replaces it");
    }
}

#[test]
fn hundreds_of_capture_streams_become_a_few_lanes() {
    let spec = GraphTraceSpec::default();
    let text = synth::graph_trace_json(&spec);
    let trace = Trace::read(text.as_bytes(), Path::new("graph.json")).expect("valid");
    let res = lanes::compact_trace(trace, &lanes::Config::default()).expect("compaction succeeds");
    let s = &res.summary;
    let streams = spec.capture_streams as usize;
    let gathers = streams.div_ceil(spec.all_gather_every as usize);
    assert_eq!(s.original_streams, streams + gathers + 1);
    assert!(s.compacted_lanes <= 12, "{s:?}");
    assert_eq!(
        s.measured_slices,
        (streams + gathers + 1) * spec.replays as usize
    );
    assert_eq!(s.gpu_flow_endpoints_mapped, spec.replays as usize);
    assert_eq!(s.gpu_annotations_mapped, streams * spec.replays as usize);
    // Every projected ProfilerStep span ends on one annotation track per lane.
    assert!(s.gpu_annotations_retained <= s.compacted_lanes * spec.replays as usize);
    assert_eq!(s.cuda_graph_launches, spec.replays as usize);
    write_and_validate(&res.trace, s.measured_slices);
}

fn merge_set(spec: &PpSpec) -> lanes::Merged {
    let traces = synth::pp_rank_traces(spec)
        .into_iter()
        .map(|(name, text)| Trace::read(text.as_bytes(), Path::new(&name)).expect("valid"))
        .collect();
    lanes::merge_pp_traces(traces, &lanes::Config::default()).expect("merge succeeds")
}

#[test]
fn pp_sets_merge_with_every_send_matched() {
    for ranks in [2, 4] {
        let spec = PpSpec {
            ranks,
            ..PpSpec::default()
        };
        let merged = merge_set(&spec);
        let s = &merged.summary;
        let (n, m) = (ranks as usize, spec.microbatches as usize);
        assert_eq!(s.pp_send_recv_unmatched, 0, "{s:?}");
        assert_eq!(s.pp_send_recv_pairs, 2 * (n - 1) * m);
        assert_eq!(s.pp_compute_dependency_unmatched, 0);
        assert_eq!(s.pp_compute_dependency_pairs, 4 * (n - 1) * m);
        assert_eq!(s.pp_unshard_compute_pairs, n);
        assert_eq!(s.pp_unshard_compute_unmatched, 0);
        let offsets: Vec<f64> = s.time_offsets_us.values().copied().collect();
        let expect: Vec<f64> = (0..n).map(|r| (r as f64 * 12_345.0) / 1000.0).collect();
        assert_eq!(offsets, expect);
        let slices: usize = s
            .per_rank_compaction
            .values()
            .map(|c| c.measured_slices)
            .sum();
        write_and_validate(&merged.trace, slices);
        // Aligned: a SEND and its RECV share the absolute time they were generated at.
        let events = events_of(&merged.trace);
        let first_send = events
            .iter()
            .find(|e| cat_is(e, "pp_send_recv") && e["ph"] == "s")
            .expect("a send");
        let send_kernel = events
            .iter()
            .find(|e| cat_is(e, "kernel") && e["args"]["name"] == "PP:0SEND_F0")
            .expect("the first send kernel");
        assert_eq!(f(first_send, "ts"), f(send_kernel, "ts"));
    }
}

#[test]
fn a_cut_rank_reports_unmatched_sends() {
    let spec = PpSpec {
        cut: Some((3, 2_000)),
        ..PpSpec::default()
    };
    let merged = merge_set(&spec);
    assert!(
        merged.summary.pp_send_recv_unmatched > 0,
        "{:?}",
        merged.summary
    );
    let full = merge_set(&PpSpec::default());
    assert!(merged.summary.pp_send_recv_pairs < full.summary.pp_send_recv_pairs);
}

#[test]
fn output_is_deterministic() {
    let text = synth::graph_trace_json(&GraphTraceSpec::default());
    let run = || {
        let trace = Trace::read(text.as_bytes(), Path::new("graph.json")).expect("valid");
        let res =
            lanes::compact_trace(trace, &lanes::Config::default()).expect("compaction succeeds");
        let mut out = Vec::new();
        res.trace.write_json(&mut out).expect("in memory");
        out
    };
    assert_eq!(run(), run());
}

#[test]
fn fixtures_can_be_written() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let written = synth::write_fixtures(dir.path()).expect("written");
    assert_eq!(written.len(), 1 + 4 + 2 + 4);
    let paths = lanes::rank_trace_paths(&dir.path().join("pp4")).expect("four ranks");
    let merged = lanes::merge_pp_files(&paths, &lanes::Config::default()).expect("merge succeeds");
    assert_eq!(merged.summary.pp_send_recv_unmatched, 0);
}

/// Golden summaries of the synthetic fixtures (review changes with `cargo insta review`).
#[test]
fn fixture_summaries() {
    let text = synth::graph_trace_json(&GraphTraceSpec::default());
    let trace = Trace::read(text.as_bytes(), Path::new("graph.json")).expect("valid");
    let res = lanes::compact_trace(trace, &lanes::Config::default()).expect("compaction succeeds");
    insta::assert_json_snapshot!("graph_300_streams", res.summary);
    let merged = merge_set(&PpSpec::default());
    insta::assert_json_snapshot!("pp4_merge", merged.summary);
    let cut = merge_set(&PpSpec {
        cut: Some((3, 2_000)),
        ..PpSpec::default()
    });
    insta::assert_json_snapshot!("pp4_cut_merge", cut.summary);
}

/// A larger trace (100k events): same counts, same bytes on every run. (The
/// multi-threaded path of traces over a million events is unit-tested in `compact.rs`.)
#[test]
fn larger_trace_is_deterministic() {
    let spec = GraphTraceSpec {
        capture_streams: 300,
        replays: 320,
        all_gather_every: 8,
        step_annotations: false,
    };
    let text = synth::graph_trace_json(&spec);
    let run = || {
        let trace = Trace::read(text.as_bytes(), Path::new("big.json")).expect("valid");
        assert!(trace.event_count() > 100_000);
        let res =
            lanes::compact_trace(trace, &lanes::Config::default()).expect("compaction succeeds");
        let mut out = Vec::new();
        res.trace.write_json(&mut out).expect("in memory");
        (res.summary, out)
    };
    let (summary, out) = run();
    assert_eq!(summary.measured_slices, (300 + 38 + 1) * 320);
    assert!(summary.compacted_lanes <= 12);
    assert_eq!(run().1, out);
}
