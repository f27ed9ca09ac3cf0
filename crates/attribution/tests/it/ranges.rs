//! Nsight Systems and ROCm captures have no CPU ops: a kernel whose launch lies inside an
//! annotation range (NVTX, ROCm marker) on the launching thread is attributed to the
//! innermost such range, and one outside every range says it has no CPU op.

use attribution::{Config, DecidedBy};

#[test]
fn kernels_launched_inside_ranges_get_the_innermost_range() {
    let root = test_support::workspace_root();
    for rel in [
        "testdata/nsys/ok/small.sqlite",
        "testdata/rocprof/ok/small.pftrace",
    ] {
        let path = root.join(rel);
        let loaded = load::load_single(&path).expect("loads");
        let result =
            attribution::attribute_loaded(&loaded, &Config::default()).expect("attributes");
        let capture = &loaded.capture;
        assert_eq!(result.kernels.len(), capture.activities().len(), "{rel}");
        let mut in_range = 0;
        for (row, activity) in result.kernels.iter().zip(capture.activities()) {
            let Some(launch) = activity.launch() else {
                assert_eq!(row.decided_by, DecidedBy::NoLaunch, "{rel}");
                continue;
            };
            let launch = capture.host_event(launch);
            // Independently: the shortest annotation on the launch's thread that contains it.
            let innermost = capture
                .thread_events(launch.thread)
                .iter()
                .filter(|e| e.kind == trace_model::HostKind::Annotation)
                .filter(|e| e.start <= launch.start && e.end() >= launch.end())
                .min_by_key(|e| e.dur);
            match innermost {
                Some(range) => {
                    in_range += 1;
                    assert_eq!(row.decided_by, DecidedBy::EnclosingRange, "{rel}");
                    assert_eq!(row.op_name, capture.name(range.name), "{rel}");
                }
                None => assert_eq!(row.decided_by, DecidedBy::NoCpuOp, "{rel}"),
            }
        }
        assert!(in_range > 0, "{rel}: no kernel launched inside a range");
        assert!(
            result
                .notes
                .iter()
                .any(|n| n.contains("innermost annotation range")),
            "{rel}: {:?}",
            result.notes
        );
    }
}
