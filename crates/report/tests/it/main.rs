//! The renderers on the real captures in `$TRACEWISE_TRACES`: no report prints a
//! negative duration (skip-stats text and JSON, analyze-profile text, investigate's
//! Markdown); and the skip-stats text on a synthetic capture.

use std::path::{Path, PathBuf};

mod heatmap;
mod ranks;
mod roofline_svg;
mod text;

/// Every duration-like figure in `text` that is negative (`-12.5 µs`, `-3 ms`), with
/// its context.
fn negative_durations(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let b = text.as_bytes();
    for (i, _) in text.match_indices('-') {
        let rest = &text[i + 1..];
        let digits = rest
            .bytes()
            .take_while(|c| c.is_ascii_digit() || *c == b'.')
            .count();
        if digits == 0 || (i > 0 && b[i - 1].is_ascii_alphanumeric()) {
            continue;
        }
        let after = rest[digits..].trim_start_matches(' ');
        if ["ns", "µs", "ms", "s ", "s\n", "s,", "s)", "s;"]
            .iter()
            .any(|u| after.starts_with(u))
        {
            let start = text[..i].rfind('\n').map_or(0, |n| n + 1);
            let end = text[i..].find('\n').map_or(text.len(), |n| i + n);
            found.push(text[start..end].to_owned());
        }
    }
    found
}

#[test]
fn negative_durations_are_found() {
    assert_eq!(negative_durations("GPU idle -114.61 ms\n").len(), 1);
    assert_eq!(negative_durations("x -3 ns, y\n").len(), 1);
    assert!(negative_durations("top-5 ms-level; 12.5 µs; rank-1 s\n").is_empty());
}

/// skip-stats' and analyze-profile's reports print no negative duration on any real
/// capture (text and JSON), PyTorch, JAX JSON and XSpace alike.
#[test]
fn no_report_prints_a_negative_duration() {
    let Some(set) = test_support::real_traces("no_report_prints_a_negative_duration") else {
        return;
    };
    // Every Kineto trace, the regenerated JSON of every GPU capture, every XSpace and every
    // complete rank folder of the set's manifests.
    let mut inputs: Vec<PathBuf> = set.kineto.iter().map(|t| t.path.clone()).collect();
    inputs.extend(set.jax_gpu_json());
    inputs.extend(set.xspaces.iter().map(|x| x.path.clone()));
    inputs.extend(set.rank_dirs());
    assert!(
        inputs.len() > set.kineto.len() + set.xspaces.len(),
        "{} inputs",
        inputs.len()
    );
    for input in &inputs {
        let out = analysis::skip_stats(input, &analysis::SkipConfig::default(), std::io::sink())
            .expect("reads");
        let text = report::skip_text::render_text(&out);
        let bad = negative_durations(&text);
        assert!(
            bad.is_empty(),
            "{}: skip-stats text: {bad:#?}",
            input.display()
        );
        let json = report::skip_text::render_json(&out);
        let mut stack = vec![("", &json)];
        while let Some((key, v)) = stack.pop() {
            match v {
                serde_json::Value::Object(m) => {
                    stack.extend(m.iter().map(|(k, v)| (k.as_str(), v)))
                }
                serde_json::Value::Array(a) => stack.extend(a.iter().map(|v| (key, v))),
                serde_json::Value::Number(n) => {
                    let duration =
                        key.ends_with("_ns") && !key.contains("start") && !key.contains("end");
                    assert!(
                        !duration || n.as_f64().is_some_and(|x| x >= 0.0),
                        "{}: skip-stats JSON {key} = {n}",
                        input.display()
                    );
                }
                _ => {}
            }
        }
        if input.is_file() && !input.to_string_lossy().ends_with(".xplane.pb") {
            let s = analysis::gpu_summary_of_file(input).expect("summary");
            let text = report::bucket_text::render_text(&s, 25);
            let bad = negative_durations(&text);
            assert!(
                bad.is_empty(),
                "{}: analyze-profile text: {bad:#?}",
                input.display()
            );
        }
    }
}

/// A capture whose GPU runs more than a step behind its host says so in words.
#[test]
fn a_gpu_more_than_a_step_behind_is_said_in_words() {
    let mut events = Vec::new();
    for (n, corr) in [(1u64, 1u64), (2, 2), (3, 3)] {
        let ts = (n - 1) * 10;
        events.push(format!(r#"{{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{n}", "pid": 1, "tid": 1, "ts": {ts}, "dur": 10}}"#));
        events.push(format!(r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {}, "dur": 2, "args": {{"correlation": {corr}}}}}"#, ts + 1));
        events.push(format!(r#"{{"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": {}, "dur": 30, "args": {{"correlation": {corr}, "stream": 7, "device": 0}}}}"#, 20 + 30 * n));
    }
    let json = format!("{{\"traceEvents\": [{}]}}", events.join(","));
    let c = chrome_reader::load_from(json.as_bytes(), Path::new("synthetic.json")).expect("loads");
    let r = analysis::analyze_capture(&c, "synthetic.json", None, &analysis::SkipConfig::default());
    assert!(r.gpu_behind.is_some());
    let out = report::skip_text::render_text(&analysis::InputAnalysis {
        input: "synthetic.json".into(),
        reports: vec![r],
        last_finisher: None,
    });
    assert!(out.contains("more than a step behind the host"), "{out}");
}

fn summary_of(events: &str) -> analysis::GpuSummary {
    let json = format!("{{\"traceEvents\": [{events}]}}");
    let c = chrome_reader::load_from(json.as_bytes(), Path::new("synthetic.json")).expect("loads");
    analysis::gpu_summary(&c, "synthetic.json", None)
}

/// The default mode's text: unknown attention is named with its kernels, inference
/// captures get no training rule of thumb, launch-less kernels are marked, an empty
/// capture prints zeros (no NaN).
#[test]
fn analyze_profile_default_text() {
    let unknown = summary_of(
        r#"{"ph": "X", "cat": "cpu_op", "name": "mylib::attention", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1, "dur": 2, "args": {"correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "my_custom_attention_kernel", "pid": 0, "tid": 7, "ts": 10, "dur": 40, "args": {"correlation": 1, "stream": 7, "device": 0}},
 {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float", "pid": 0, "tid": 9, "ts": 60, "dur": 10, "args": {"correlation": 99, "stream": 9, "device": 0}}"#,
    );
    let text = report::bucket_text::render_text(&unknown, 10);
    assert!(text.contains("unknown: no backend recognised"), "{text}");
    assert!(text.contains("my_custom_attention_kernel"), "{text}");
    assert!(!text.contains("no attention kernel"), "{text}");
    assert!(text.contains("[no op] ncclKernel_AllReduce"), "{text}");
    assert!(!text.contains("Llama 3 training"), "{text}");
    let empty = summary_of("");
    let text = report::bucket_text::render_text(&empty, 10);
    assert!(text.contains("GPU time: 0 ns"), "{text}");
    assert!(!text.contains("NaN"), "{text}");
}
