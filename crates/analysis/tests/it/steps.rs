//! Iterations of the shared inference captures in `$TRACEWISE_TRACES`: every one has its
//! iterations found and says from which evidence, checked against the capture's own
//! records (TraceLens's execution_details.json, the corpus MANIFEST).

use std::path::Path;

use analysis::{SkipConfig as Config, StepOrigin};

fn steps_of(path: &Path) -> analysis::Steps {
    let out = analysis::skip_stats_without_rows(path, &Config::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(out.reports.len(), 1, "{}", path.display());
    out.reports.into_iter().next().expect("one report").steps
}

/// The batch size TraceLens recorded beside a vLLM capture.
fn batch_size(capture_dir: &Path) -> u64 {
    let text = std::fs::read_to_string(capture_dir.join("execution_details.json"))
        .expect("execution_details.json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    v[0]["batch_size"].as_u64().expect("batch_size")
}

#[test]
fn every_shared_inference_capture_has_its_iterations() {
    let Some(root) = test_support::traces_dir("every_shared_inference_capture_has_its_iterations")
    else {
        return;
    };
    let vllm = root.join("pytorch/tracelens-vllm-rocm-graph");
    let mut checked = 0;
    for (run, mode) in [
        ("vllm_decode_full", "FULL"),
        ("vllm_prefilldecode_piecewise", "PIECEWISE"),
    ] {
        let capture_dir = vllm.join(run).join("capture_traces");
        let batch = batch_size(&capture_dir);
        // The graph-capture run: one step per captured batch size, from vLLM's
        // `capture_<size>_<mode>` range, the size and mode being those recorded.
        let capture = std::fs::read_dir(&capture_dir)
            .expect("capture_traces")
            .map(|e| e.expect("entry").path())
            .find(|p| p.to_string_lossy().ends_with(".pt.trace.json.gz"))
            .expect("a capture trace");
        let s = steps_of(&capture);
        assert_eq!(s.steps.len(), 1, "{run}");
        assert_eq!(
            s.origin,
            StepOrigin::EngineStep {
                markers: "vLLM CUDA-graph capture".to_owned()
            },
            "{run}"
        );
        assert_eq!(s.forward_kinds, ["graph capture"], "{run}");
        // The execution: one forward, from vLLM's execute_model and execute_… ranges,
        // whose kind its range names.
        let s = steps_of(&vllm.join(run).join("graph_execution.json.gz"));
        assert_eq!(s.steps.len(), 1, "{run}");
        assert!(
            s.origin
                .describe()
                .contains("vLLM execute_…_context_… ranges"),
            "{run}: {}",
            s.origin.describe()
        );
        let kinds: Vec<String> = s.forward_spreads().into_iter().map(|k| k.0).collect();
        if mode == "FULL" {
            // A full-graph decode of the recorded batch: `decode <batch>`.
            assert_eq!(s.forward_kinds, [format!("decode {batch}")], "{run}");
            assert_eq!(kinds, ["decode"], "{run}");
        } else {
            assert_eq!(kinds, ["prefill + decode"], "{run}");
        }
        checked += 2;
    }
    // Qwen inference under the profiler's schedule: one ProfilerStep#N (the MANIFEST's
    // count), on H100 and MI300X.
    for gpu in ["h100", "mi300"] {
        let s = steps_of(&root.join(format!(
            "pytorch/tracelens-h100-qwen/{gpu}/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
        )));
        assert_eq!(s.origin, StepOrigin::ProfilerStep, "{gpu}");
        assert_eq!(s.steps.len(), 1, "{gpu}");
        assert_eq!(s.steps[0].number, 6, "{gpu}: ProfilerStep#6");
        checked += 1;
    }
    // llama.cpp prompt processing, kernels only (no host ranges or step markers): the
    // repeated forwards from the kernel sequence of the busiest stream, all of about one
    // length.
    let s = steps_of(&root.join("rocprof/rocprofv3-csv-llamacpp-gfx1151"));
    match &s.origin {
        StepOrigin::KernelSequence { period, .. } => {
            assert_eq!(*period, 140, "llama.cpp: activities per forward");
        }
        other => panic!("llama.cpp: {other:?}"),
    }
    assert_eq!(s.steps.len(), 7, "llama.cpp: whole forwards");
    let spread = s.duration_spread().expect("steps");
    assert!(
        10 * spread.max.0 <= 11 * spread.min.0,
        "llama.cpp: forwards within 10 % of each other: {spread:?}"
    );
    checked += 1;
    assert_eq!(checked, 7);
}
