//! Every shared capture gets its GPU model from whatever device record it has
//! (deviceProperties, XSpace device stats, nsys TARGET_INFO_GPU, rocpd/JSON agents), and
//! roofline peaks where the model is in the table.

use std::path::{Path, PathBuf};

use roofline::PeakTable;

/// Every capture file under `traces`: Chrome traces, XSpaces, SQLite exports and
/// databases, rocprofv3 JSON (reference outputs and archives left out).
fn captures(traces: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if !["licenses", "reference-outputs", "reference", "xprof-2.24.2"]
                    .contains(&name.as_str())
                {
                    walk(&path, out);
                }
            } else if [".json", ".json.gz", ".xplane.pb", ".sqlite", ".db"]
                .iter()
                .any(|e| name.ends_with(e))
                && !name.starts_with("regenerated")
                && !name.starts_with("perfetto_trace")
            {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    for family in ["pytorch", "jax", "nsys", "rocprof"] {
        walk(&traces.join(family), &mut out);
    }
    out.sort();
    out
}

/// Captures whose files record no device at all (a kernel-trace CSV, a rocprof v1 run
/// whose GPU is only named in rocminfo's separate text), or no model and too little to
/// tell one (no name, no compute capability): the reason, by folder name.
const NO_DEVICE_RECORD: &[(&str, &str)] = &[
    ("hta-sampled-2rank", "no deviceProperties in the trace"),
    (
        "rocprofv3-csv-llamacpp-gfx1151",
        "kernel-trace CSV without agent_info",
    ),
    (
        "rocprofv3-doc-csv",
        "documentation excerpts without agent_info",
    ),
    (
        "rocprofv3-pftrace-jacc",
        "the Perfetto tracks name agents by number only",
    ),
    (
        "rocprofv1-stencil-mi250x",
        "results.csv names gpu-id only (the model is in rocminfo's results.sysinfo.txt)",
    ),
    (
        "rocprofv1-r9700-llamacpp",
        "results.csv names gpu-id only (the model is in rocminfo's results.sysinfo.txt)",
    ),
    (
        "jacc-4xa100-no-cuda-tables",
        "no CUDA work: nothing to report",
    ),
    ("cpu-mlp", "a CPU-only capture"),
    (
        "nvidia-a100-nsys-jax-pax-fsdp4",
        "not a capture the loader reads (nsys-jax output archive)",
    ),
];

#[test]
fn every_shared_capture_gets_its_gpu_model_and_peaks_where_known() {
    let Some(traces) = test_support::traces_dir("GPU models of shared captures") else {
        return;
    };
    let table = PeakTable::builtin();
    let mut with_model = 0;
    for file in captures(&traces) {
        let shown = file.display().to_string();
        if NO_DEVICE_RECORD
            .iter()
            .any(|(n, _)| shown.contains(&format!("/{n}/")))
        {
            continue;
        }
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let loaded_all = load::load(&file).unwrap_or_else(|e| panic!("{shown}: {e}"));
        for loaded in &loaded_all {
            let c = &loaded.capture;
            // The devices that did work (an XSpace lists every device plane, also empty ones).
            let busy: std::collections::BTreeSet<_> = c
                .activities()
                .iter()
                .map(|a| c.stream(a.stream).device)
                .collect();
            for device in c.devices().iter().filter(|d| busy.contains(&d.id)) {
                let p = &device.properties;
                let named = p.name.as_deref().is_some_and(|n| !n.is_empty());
                let figures = p.compute_capability.is_some() && p.multiprocessors.is_some();
                assert!(
                    named || figures,
                    "{}: device {} has no model record: {p:?}",
                    loaded.path.display(),
                    device.ordinal
                );
                let peaks = table.identify(device);
                eprintln!(
                    "{name}: GPU:{} {} -> {} ({})",
                    device.ordinal,
                    peaks.recorded,
                    peaks.model.as_deref().unwrap_or("-"),
                    peaks.label()
                );
                // A model the table has is identified (the names these captures record).
                let known = [
                    "V100", "A100", "H100", "H200", "B300", "MI300X", "MI350X", "MI250", "2080 Ti",
                    "RTX 3080",
                ];
                if named
                    && known
                        .iter()
                        .any(|k| p.name.as_deref().unwrap_or("").contains(k))
                {
                    assert_eq!(peaks.label(), "read", "{name}: {}", peaks.recorded);
                }
                // TensorFlow's XSpace names no model: compute capability 7.0, 80 SMs and
                // the SXM2 clock make it a V100 SXM2.
                if name.ends_with("6003.xplane.pb") {
                    assert_eq!(peaks.label(), "read", "{name}: {}", peaks.recorded);
                    assert_eq!(peaks.model.as_deref(), Some("NVIDIA Tesla V100 SXM2"));
                }
                with_model += 1;
            }
        }
    }
    assert!(with_model >= 20, "{with_model} devices with a model");
}
