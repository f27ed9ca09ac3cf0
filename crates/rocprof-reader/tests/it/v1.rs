//! rocprof v1 `results.csv` / `results.db` against the vendor's `results.stats.csv` of the
//! same run.

use std::collections::BTreeMap;

use rocprof_reader::{Kind, detect, load};

/// Per-kernel calls and total nanoseconds, from the capture.
fn per_kernel(capture: &trace_model::Capture) -> BTreeMap<String, (u64, i64)> {
    let mut out = BTreeMap::new();
    for a in capture.activities() {
        let entry = out
            .entry(capture.name(a.name).to_owned())
            .or_insert((0u64, 0i64));
        entry.0 += 1;
        entry.1 += a.dur.0;
    }
    out
}

#[test]
fn stencil_per_kernel_calls_and_totals_equal_the_vendor_stats() {
    let Some(dir) =
        crate::rocprof_dir("stencil_per_kernel_calls_and_totals_equal_the_vendor_stats")
    else {
        return;
    };
    let dir = dir.join("rocprofv1-stencil-mi250x");
    // The vendor's summary, read with the csv crate: "Name","Calls","TotalDurationNs",...
    let mut stats = BTreeMap::new();
    let mut reader = csv::Reader::from_path(dir.join("results.stats.csv")).unwrap();
    for row in reader.records() {
        let row = row.unwrap();
        let calls: u64 = row[1].parse().unwrap();
        let total: i64 = row[2].parse().unwrap();
        stats.insert(row[0].to_owned(), (calls, total));
    }
    assert_eq!(stats.len(), 13, "the MANIFEST's 13 kernels");
    assert_eq!(stats.values().map(|s| s.0).sum::<u64>(), 1024);
    for (file, kind) in [("results.csv", Kind::V1Csv), ("results.db", Kind::V1Db)] {
        let path = dir.join(file);
        assert_eq!(detect(&path), Some(kind), "{file}");
        let loaded = load(&path).unwrap();
        assert_eq!(loaded.len(), 1, "{file}: one process");
        assert_eq!(loaded[0].pid, Some(12599), "{file}");
        let capture = &loaded[0].capture;
        assert_eq!(capture.format(), trace_model::Format::RocprofV1);
        assert_eq!(per_kernel(capture), stats, "{file}");
        // One MI250X GCD (gpu-id 8) and its queues.
        let ordinals: Vec<i64> = capture.devices().iter().map(|d| d.ordinal).collect();
        assert_eq!(ordinals, [8], "{file}");
        assert!(
            capture
                .devices()
                .iter()
                .all(|d| d.vendor == trace_model::Vendor::Amd)
        );
        // No host API calls in a v1 kernel trace: every activity is unlinked, and says so.
        assert_eq!(
            capture.diagnostics().count("activity-without-launch"),
            1024,
            "{file}"
        );
    }
}
