//! The capture built from an xplane against two independent records: the Chrome trace that
//! jaxlib's converter wrote from the same XSpace, and XProf's kernel_stats.

use std::collections::BTreeMap;
use std::path::Path;

use trace_model::{ActivityKind, Capture};

use crate::{traces_dir, xplane_files};

/// Per device ordinal: the sorted (name, duration ns) of every GPU activity.
fn activities_by_device(capture: &Capture) -> BTreeMap<i64, Vec<(String, i64)>> {
    let mut out: BTreeMap<i64, Vec<(String, i64)>> = BTreeMap::new();
    for activity in capture.activities() {
        let device = capture.device(capture.stream(activity.stream).device);
        out.entry(device.ordinal)
            .or_default()
            .push((capture.name(activity.name).to_owned(), activity.dur.0));
    }
    for list in out.values_mut() {
        list.sort();
    }
    out
}

fn regenerated_json(xplane: &Path) -> Option<std::path::PathBuf> {
    let json = xplane
        .parent()?
        .join("regenerated-jaxlib0.10.2.trace.json.gz");
    json.exists().then_some(json)
}

#[test]
fn xplane_and_converted_json_have_the_same_gpu_activities() {
    let Some(traces) = traces_dir("xplane_and_converted_json_have_the_same_gpu_activities") else {
        return;
    };
    let mut compared = 0;
    for xplane in xplane_files(&traces) {
        let Some(json) = regenerated_json(&xplane) else {
            continue;
        };
        let (ours, _) = xplane_reader::load_capture(&xplane).unwrap();
        let theirs = chrome_reader::load(&json).unwrap();
        let ours = activities_by_device(&ours);
        let theirs = activities_by_device(&theirs);
        assert_eq!(
            ours.keys().collect::<Vec<_>>(),
            theirs.keys().collect::<Vec<_>>(),
            "{}: devices with activities",
            xplane.display()
        );
        for (device, list) in &ours {
            let other = &theirs[device];
            assert_eq!(
                list.len(),
                other.len(),
                "{} GPU:{device}: count",
                xplane.display()
            );
            for ((name, dur), (other_name, other_dur)) in list.iter().zip(other) {
                assert_eq!(name, other_name, "{} GPU:{device}", xplane.display());
                // The JSON holds microseconds with three decimals: allow the last nanosecond.
                assert!(
                    (dur - other_dur).abs() <= 1,
                    "{} GPU:{device} {name}: {dur} vs {other_dur} ns",
                    xplane.display()
                );
            }
        }
        compared += 1;
    }
    assert_eq!(compared, 5);
}

/// XProf's kernel_stats rows grouped by kernel name: (occurrences, total µs).
fn xprof_kernel_stats(path: &Path) -> BTreeMap<String, (u64, f64)> {
    let file = std::fs::File::open(path).unwrap();
    let json: serde_json::Value =
        serde_json::from_reader(flate2::read::GzDecoder::new(file)).unwrap();
    let columns: Vec<&str> = json["cols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|col| col["id"].as_str().unwrap())
        .collect();
    let column = |id: &str| columns.iter().position(|col| *col == id).unwrap();
    let (name_col, count_col, total_col) = (
        column("kernel_name"),
        column("occurrences"),
        column("total_duration_us"),
    );
    let mut out: BTreeMap<String, (u64, f64)> = BTreeMap::new();
    for row in json["rows"].as_array().unwrap() {
        let cells = row["c"].as_array().unwrap();
        let entry = out
            .entry(cells[name_col]["v"].as_str().unwrap().to_owned())
            .or_default();
        entry.0 += cells[count_col]["v"].as_f64().unwrap() as u64;
        entry.1 += cells[total_col]["v"].as_f64().unwrap();
    }
    out
}

#[test]
fn kernels_match_xprof_kernel_stats() {
    let Some(traces) = traces_dir("kernels_match_xprof_kernel_stats") else {
        return;
    };
    let mut compared = 0;
    for xplane in xplane_files(&traces) {
        let stats_path = xplane
            .parent()
            .unwrap()
            .join("xprof-2.24.2/kernel_stats.json.gz");
        if !stats_path.exists() {
            continue;
        }
        let expected = xprof_kernel_stats(&stats_path);
        let (capture, _) = xplane_reader::load_capture(&xplane).unwrap();
        let mut ours: BTreeMap<String, (u64, i64)> = BTreeMap::new();
        for activity in capture
            .activities()
            .iter()
            .filter(|activity| activity.kind == ActivityKind::Kernel)
        {
            let entry = ours
                .entry(capture.name(activity.name).to_owned())
                .or_default();
            entry.0 += 1;
            entry.1 += activity.dur.0;
        }
        assert_eq!(
            ours.keys().collect::<Vec<_>>(),
            expected.keys().collect::<Vec<_>>(),
            "{}: kernel names",
            xplane.display()
        );
        for (name, (count, total_ns)) in &ours {
            let (xprof_count, xprof_total_us) = expected[name];
            assert_eq!(
                *count,
                xprof_count,
                "{}: {name} occurrences",
                xplane.display()
            );
            let diff_ns = (*total_ns as f64 - xprof_total_us * 1e3).abs();
            assert!(
                diff_ns <= *count as f64,
                "{}: {name}: ours {total_ns} ns, xprof {xprof_total_us} µs",
                xplane.display()
            );
        }
        compared += 1;
    }
    assert!(compared >= 5, "{compared}");
}

#[test]
fn launches_join_activities_by_correlation_id() {
    let Some(traces) = traces_dir("launches_join_activities_by_correlation_id") else {
        return;
    };
    let (capture, _) =
        xplane_reader::load_capture(&traces.join("jax/rocm-mi300-jax08-gemm/tw003.xplane.pb"))
            .unwrap();
    assert_eq!(capture.activities().len(), 54);
    let linked = capture
        .activities()
        .iter()
        .filter(|activity| activity.launch().is_some())
        .count();
    assert_eq!(linked, 54, "{:?}", capture.diagnostics());
    // MANIFEST: median launch→kernel-start latency on this capture is 14.9 µs.
    let mut delays: Vec<i64> = capture
        .activities()
        .iter()
        .filter_map(|activity| {
            Some(activity.start.0 - capture.host_event(activity.launch()?).start.0)
        })
        .collect();
    delays.sort_unstable();
    let median = delays[delays.len() / 2];
    assert!(
        (14_000..16_000).contains(&median),
        "median launch delay {median} ns"
    );
    let device = &capture.devices()[0];
    assert_eq!(device.vendor, trace_model::Vendor::Amd);

    let (cpu, _) = xplane_reader::load_capture(&traces.join("jax/cpu-mlp/vm.xplane.pb")).unwrap();
    assert!(cpu.activities().is_empty());
    assert_eq!(cpu.diagnostics().count("no-gpu-device-planes"), 1);
    assert_eq!(cpu.steps().len(), 3);
    // Line timestamps here are session-relative, the Task Environment window is epoch ns: the
    // window is dropped, with a diagnostic, rather than put on the wrong axis.
    assert!(cpu.meta().window.is_none());
    assert_eq!(cpu.diagnostics().count("profile-window-off-axis"), 1);
    assert_eq!(cpu.meta().producer.as_deref(), Some("jaxlib 0.10.2"));
}
