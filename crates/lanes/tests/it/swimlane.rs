//! The swimlane layout of one window of a synthetic CUDA-graph trace.

use lanes::synth::{self, GraphTraceSpec};
use lanes::{RowKind, RowMode, swimlane_layout};
use trace_model::Nanos;

#[test]
fn one_replay_as_streams_and_as_semantic_lanes() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("graph.json");
    let spec = GraphTraceSpec {
        capture_streams: 40,
        replays: 3,
        all_gather_every: 8,
        step_annotations: false,
    };
    std::fs::write(&path, synth::graph_trace_json(&spec)).expect("writable");
    // The first replay: launch at 995 µs, kernels from 1000 µs, 10 µs apart.
    let (start, end) = (Nanos(990_000), Nanos(1_000_000 + 40 * 10_000 + 10_000));

    let streams = swimlane_layout(&path, start, end, RowMode::Streams).expect("a layout");
    let gpu_rows: Vec<_> = streams
        .rows
        .iter()
        .filter(|r| matches!(r.kind, RowKind::GpuStream { .. }))
        .collect();
    assert_eq!(gpu_rows.len(), 40 + 5 + 1);
    assert_eq!(gpu_rows[0].label, "stream 1000");
    let items: usize = gpu_rows.iter().map(|r| r.items.len()).sum();
    assert_eq!(items, 40 + 5 + 1);
    let host = streams.rows.last().expect("a host row");
    assert!(matches!(host.kind, RowKind::HostThread { .. }));
    assert_eq!(host.label, "python");
    assert_eq!(host.items.len(), 1);
    assert_eq!(host.items[0].name, "cudaGraphLaunch");

    let lanes = swimlane_layout(&path, start, end, RowMode::SemanticLanes).expect("a layout");
    let labels: Vec<&str> = lanes.rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "GPU 0 Compute",
            "GPU 0 NCCL all-gather",
            "GPU 0 GPU memcpy",
            "python"
        ]
    );
    let items: usize = lanes.rows.iter().map(|r| r.items.len()).sum();
    assert_eq!(items, 40 + 5 + 1 + 1);
    for row in &lanes.rows {
        assert!(
            row.items
                .windows(2)
                .all(|w| w[0].start + w[0].dur <= w[1].start)
        );
    }
}
