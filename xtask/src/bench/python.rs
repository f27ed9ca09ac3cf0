//! `cargo xtask bench --python-package --python PATH`: the Python package against what a
//! notebook user runs today:
//! - the notebook case, the target: in one interpreter with the imports done,
//!   `TraceAnalysis(trace_dir=…)` plus each method through `tracewise.hta` and through
//!   HTA 0.5.0, on hta-v100-2rank-large and param-dlrm-8rank, at least 11 alternating runs,
//!   median and quartiles of each side and of the ratio run by run (target ≥ 30×), with
//!   the machine's load average before and after;
//! - as information, whole processes from `python -c` (interpreter start, imports, load
//!   and `get_temporal_breakdown(visualize=False)`, as HTA's), medians of alternating runs,
//!   with peak RSS;
//! - `tracewise.load(p).kernels()` to a polars DataFrame against `json.load` of the same
//!   file (target ≥ 3×), and the peak RSS of each beside HTA's load of that trace.
//!
//! PATH is a Python whose environment has the package (`pip install ./python`: a release
//! build; with `MATURIN_PEP517_ARGS="--profile dev"` the dev build, whose polars is
//! unoptimised), polars and HolisticTraceAnalysis 0.5.0; the rows name the build found.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{Measured, Row, median, side_by_side, timed_rss};

/// The captures of the drop-in rows, relative to the traces directory.
const CAPTURES: [&str; 2] = ["pytorch/hta-v100-2rank-large", "pytorch/param-dlrm-8rank"];

/// The trace of the load rows: the largest shared Kineto trace by events (216,092).
const LARGEST: &str = "pytorch/hta-v100-2rank-large/df_index_resolver.json.gz";

/// Which rows a run of the bench takes (`--methods`, `--capture`).
#[derive(Debug, Default)]
pub(super) struct Only {
    /// Just the notebook rows of these methods (labels of [`METHODS`]), to re-time them.
    pub(super) methods: Option<Vec<String>>,
    /// Just the notebook rows of this capture (its folder's name), to time the two apart.
    pub(super) capture: Option<String>,
}

pub(super) fn rows(
    traces: &Path,
    python: Option<PathBuf>,
    runs: usize,
    only: &Only,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let python = python
        .or_else(|| std::env::var_os("TRACEWISE_PYTHON").map(PathBuf::from))
        .ok_or(
            "--python-package needs a Python with tracewise (pip install ./python), polars \
             and HolisticTraceAnalysis 0.5.0: --python PATH or TRACEWISE_PYTHON",
        )?;
    let py = python.display().to_string();
    let build = installed_build(&py)?;
    eprintln!("tracewise package: {build}");
    for capture in CAPTURES {
        let dir = traces.join(capture);
        if !dir.is_dir() {
            return Err(format!("{}: missing (TRACEWISE_TRACES)", dir.display()));
        }
        let name = capture.rsplit('/').next().unwrap_or(capture);
        if only.capture.as_ref().is_some_and(|c| c != name) {
            continue;
        }
        let d = dir.display().to_string();
        // `--methods` or `--capture`: the notebook rows alone (of those methods).
        if only.methods.is_some() || only.capture.is_some() {
            let methods: Vec<_> = (METHODS.iter())
                .filter(|(label, ..)| {
                    (only.methods.as_ref()).is_none_or(|m| m.iter().any(|o| o == label))
                })
                .copied()
                .collect();
            if only
                .methods
                .as_ref()
                .is_some_and(|m| m.len() != methods.len())
            {
                return Err(format!(
                    "--methods: each must be a label of xtask/src/bench/python.rs' METHODS: {:?}",
                    only.methods
                ));
            }
            eprintln!(
                "{name}: the notebook rows of {} methods, {} runs…",
                methods.len(),
                runs.max(11)
            );
            notebook_rows(&py, &d, name, runs.max(11), &methods, rows)?;
            continue;
        }
        let call =
            |tail: &str| format!("TraceAnalysis(trace_dir={d:?}).get_temporal_breakdown({tail})");
        // Both sides without plots: `visualize=True` (the default) draws HTA's figures.
        let (ours_call, theirs_call) = (call("visualize=False"), call("visualize=False"));
        let ours = format!("from tracewise.hta import TraceAnalysis; {ours_call}");
        let theirs = format!(
            "import logging; logging.disable(logging.CRITICAL); \
             from hta.trace_analysis import TraceAnalysis; {theirs_call}"
        );
        eprintln!("{name}: tracewise.hta and HTA, {runs} runs each…");
        let (o, t) = alternate(&py, &ours, &theirs, runs)?;
        side_by_side(
            rows,
            [
                format!("{name}: tracewise.hta TraceAnalysis + get_temporal_breakdown ({build})"),
                format!("{name}: HTA 0.5.0 TraceAnalysis + get_temporal_breakdown"),
                format!("{name}: HTA time / tracewise.hta time"),
            ],
            o,
            t,
            "≥ 30×",
        );
        // A notebook pays the imports once: the constructor plus each method in one
        // interpreter, imports done before the clock starts.
        eprintln!("{name}: the notebook rows, {} runs…", runs.max(11));
        notebook_rows(&py, &d, name, runs.max(11), &METHODS, rows)?;
    }
    if only.methods.is_some() || only.capture.is_some() {
        return Ok(());
    }
    let file = traces.join(LARGEST);
    if !file.is_file() {
        return Err(format!("{}: missing (TRACEWISE_TRACES)", file.display()));
    }
    let f = file.display().to_string();
    let ours = format!("import tracewise, polars; tracewise.load({f:?}).kernels().to_polars()");
    let theirs = format!("import gzip, json; json.load(gzip.open({f:?}))");
    eprintln!("load().kernels() and json.load, {runs} runs each…");
    let (ours_load, theirs_load) = alternate(&py, &ours, &theirs, runs)?;
    let hta_load = format!(
        "import logging; logging.disable(logging.CRITICAL); \
         from hta.trace_analysis import TraceAnalysis; TraceAnalysis(trace_dir={:?})",
        file.parent().unwrap_or(&file).display().to_string()
    );
    let (_, h_kb) = timed_rss(&py, &["-W", "ignore", "-c", &hta_load])?;
    let name = "hta-v100-2rank-large (216,092 events, 2.9 MB gzip)";
    side_by_side(
        rows,
        [
            format!("{name}: tracewise.load().kernels() → polars ({build})"),
            format!("{name}: json.load of the same file"),
            format!("{name}: json.load time / load().kernels() time"),
        ],
        ours_load,
        theirs_load,
        "≥ 3×",
    );
    let (o, t) = in_process(
        &py,
        "import gzip, json, polars, tracewise",
        &format!("tracewise.load({f:?}).kernels().to_polars()"),
        &format!("json.load(gzip.open({f:?}))"),
        runs,
    )?;
    rows.push(Row {
        what: format!("{name}: the same in one interpreter, imports done: load().kernels() → polars vs json.load"),
        value: format!("{o:.3} s vs {t:.3} s: {:.1}×", t / o),
        target: "≥ 3×".into(),
    });
    rows.push(Row {
        what: format!("{name}: peak RSS, HTA's TraceAnalysis load / load().kernels()"),
        value: format!("{} MB / {} MB", h_kb / 1024, ours_load.1 / 1024),
        target: String::new(),
    });
    Ok(())
}

/// Median wall time and largest peak RSS of `ours` and `theirs` (`python -c`), run in
/// turn so that a drift of the machine's speed falls on both alike.
fn alternate(
    py: &str,
    ours: &str,
    theirs: &str,
    runs: usize,
) -> Result<(Measured, Measured), String> {
    let (mut o, mut t, mut o_kb, mut t_kb) = (Vec::new(), Vec::new(), 0, 0);
    for _ in 0..runs {
        let (s, kb) = timed_rss(py, &["-W", "ignore", "-c", ours])?;
        o.push(s);
        o_kb = o_kb.max(kb);
        let (s, kb) = timed_rss(py, &["-W", "ignore", "-c", theirs])?;
        t.push(s);
        t_kb = t_kb.max(kb);
    }
    Ok(((median(o), o_kb), (median(t), t_kb)))
}

/// The methods of the notebook rows: (label: a word, for `--methods`; the call after `ta.`, the most runs it gets
/// (0: every run) and why fewer). Each is timed with the constructor (a user's cell:
/// `TraceAnalysis(...)` then the method), on the object of that run, after the methods
/// before it in this list (on both sides alike, so each side's caches help it as they help
/// a notebook). `R` is the sorted ranks, `OUT` a fresh scratch directory. Every public
/// method of HTA 0.5.0's `TraceAnalysis` (docs/hta-api.md), every mode of those with modes
/// that change the work (`include_memory_events`, `use_gpu_annotation`); the two that take
/// `get_queue_length_time_series`' output are timed with that call, as a user runs them.
pub(super) const METHODS: [(&str, &str, usize, &str); 23] = [
    (
        "get_temporal_breakdown",
        "get_temporal_breakdown(visualize=False)",
        0,
        "",
    ),
    (
        "get_comm_comp_overlap",
        "get_comm_comp_overlap(visualize=False)",
        0,
        "",
    ),
    (
        "get_gpu_kernel_breakdown",
        "get_gpu_kernel_breakdown(visualize=False)",
        0,
        "",
    ),
    (
        "get_idle_time_breakdown",
        "get_idle_time_breakdown(ranks=R, visualize=False, show_idle_interval_stats=True)",
        0,
        "",
    ),
    (
        "get_cuda_kernel_launch_stats",
        "get_cuda_kernel_launch_stats(ranks=R, visualize=False)",
        0,
        "",
    ),
    (
        "get_cuda_kernel_launch_stats/no_memory_events",
        "get_cuda_kernel_launch_stats(ranks=R, include_memory_events=False, visualize=False)",
        0,
        "",
    ),
    (
        "get_queue_length_time_series",
        "get_queue_length_time_series(ranks=R)",
        0,
        "",
    ),
    (
        "get_queue_length_summary",
        "get_queue_length_summary(ranks=R)",
        0,
        "",
    ),
    (
        "get_queue_length_summary_from_time_series",
        "get_queue_length_summary_from_time_series(ta.get_queue_length_time_series(ranks=R))",
        0,
        "",
    ),
    (
        "get_time_spent_blocked_on_full_queue",
        "get_time_spent_blocked_on_full_queue(ta.get_queue_length_time_series(ranks=R))",
        0,
        "",
    ),
    (
        "get_potential_stragglers",
        "get_potential_stragglers()",
        0,
        "",
    ),
    (
        "get_memory_bw_summary",
        "get_memory_bw_summary(ranks=R)",
        0,
        "",
    ),
    (
        "get_memory_bw_time_series",
        "get_memory_bw_time_series(ranks=R)",
        0,
        "",
    ),
    (
        "get_gpu_user_annotation_breakdown",
        "get_gpu_user_annotation_breakdown(visualize=False)",
        0,
        "",
    ),
    (
        "get_gpu_user_annotation_breakdown/cpu_annotations",
        "get_gpu_user_annotation_breakdown(use_gpu_annotation=False, visualize=False)",
        0,
        "",
    ),
    (
        "get_gpu_kernels_with_user_annotations",
        "get_gpu_kernels_with_user_annotations(R[0])",
        0,
        "",
    ),
    ("get_profiler_steps", "get_profiler_steps()", 0, ""),
    (
        "get_cupti_counter_data_with_operators",
        "get_cupti_counter_data_with_operators(ranks=R)",
        0,
        "",
    ),
    (
        "critical_path_analysis",
        "critical_path_analysis(R[0], 'ProfilerStep', 0)",
        0,
        "",
    ),
    (
        "overlay_critical_path_analysis",
        "overlay_critical_path_analysis(R[0], ta.critical_path_analysis(R[0], 'ProfilerStep', 0)[0], OUT)",
        0,
        "",
    ),
    // The slow ones last, on fewer runs: HTA's time for one call, one run on
    // param-dlrm-8rank at load average 16 on this 2-core machine (HTA's constructor 9.7 s).
    (
        "get_frequent_cuda_kernel_sequences",
        "get_frequent_cuda_kernel_sequences('aten::addmm', OUT, 1, R[0], 5, False)",
        3,
        "HTA builds its call graph in pandas: 12 s a call on param-dlrm-8rank at load 16",
    ),
    (
        "generate_trace_with_counters",
        "generate_trace_with_counters(ranks=R)",
        3,
        "HTA computes its time series and writes every rank's trace gzipped: 33 s a call on \
         param-dlrm-8rank at load 16",
    ),
    (
        "get_aten_op_kernels_and_delay",
        "get_aten_op_kernels_and_delay(ranks=R)",
        2,
        "HTA scans every ATen operator for each launch: 81 s a call on param-dlrm-8rank at \
         load 16, 99 s on hta-v100-2rank-large at load 14",
    ),
];

/// The script that times the notebook rows (`argv[1]`: a JSON object; see its docstring).
const NOTEBOOK: &str = include_str!("notebook.py");

/// The notebook rows of one capture: per run, in turn (the sides take turns at going
/// first), each side's constructor and then each method of `methods` on it, timed apart
/// (notebook.py); a method's figure is constructor + method of the same run. Rows: the
/// constructor alone and each method, medians and quartiles of both sides and of the
/// per-run ratio; and the load average before and after.
pub(super) fn notebook_rows(
    py: &str,
    dir: &str,
    name: &str,
    runs: usize,
    methods: &[(&str, &str, usize, &str)],
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let config = serde_json::json!({
        "dir": dir,
        "runs": runs,
        "sides": ["ours", "theirs"],
        "methods": methods.iter().map(|(l, c, n, _)| serde_json::json!([l, c, n])).collect::<Vec<_>>(),
    });
    let out = Command::new(py)
        .args(["-W", "ignore", "-c", NOTEBOOK, &config.to_string()])
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("{py}: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!("{py}: the notebook timing failed: {text}"));
    }
    for line in text.lines() {
        notebook_row(line, name, runs, methods, rows)
            .ok_or_else(|| format!("{py}: a notebook row did not parse: {line}"))?;
    }
    Ok(())
}

/// The row of one line of notebook.py's output (none for a line that is no row), or `None`
/// when the line does not parse.
fn notebook_row(
    line: &str,
    name: &str,
    runs: usize,
    methods: &[(&str, &str, usize, &str)],
    rows: &mut Vec<Row>,
) -> Option<()> {
    let Some((kind, rest)) = line.split_once(' ') else {
        return Some(());
    };
    match kind {
        "LOAD" => {
            let v: Vec<&str> = rest.split_whitespace().collect();
            let (before, after) = v.split_at(3.min(v.len()));
            rows.push(Row {
                what: format!(
                    "{name}: load average (1, 5, 15 min) before / after the notebook rows \
                     (a shared machine: not quiet-machine figures)"
                ),
                value: format!("{} / {}", before.join(", "), after.join(", ")),
                target: String::new(),
            });
        }
        "STOPPED" => {
            let v: Vec<&str> = rest.split_whitespace().collect();
            rows.push(Row {
                what: format!("{name}: the notebook rows were stopped (SIGTERM)"),
                value: format!(
                    "after {} of {} runs: each row says its own number of runs",
                    v.first()?,
                    v.get(1)?
                ),
                target: String::new(),
            });
        }
        // A method that raises on this trace (on either side, in any run) has no timing
        // row; the bench says so rather than stopping.
        "RAISED" => {
            let (m, why) = rest.split_once(' ')?;
            rows.push(Row {
                what: format!("{name}: TraceAnalysis(trace_dir=…) + {m}"),
                value: format!("not timed: it raises here ({why})"),
                target: "≥ 30×".into(),
            });
        }
        "ROW" => {
            let mut f = rest.split_whitespace();
            let m = f.next()?;
            let n: usize = f.next()?.parse().ok()?;
            let v: Vec<f64> = f.map(|x| x.parse().ok()).collect::<Option<_>>()?;
            if v.len() != 9 {
                return None;
            }
            let method = methods.iter().find(|(l, ..)| *l == m);
            let what = match method {
                Some((_, call, ..)) => format!("TraceAnalysis(trace_dir=…) + ta.{call}"),
                None => "TraceAnalysis(trace_dir=…)".to_owned(),
            };
            let fewer = match method {
                Some((_, _, cap, why)) if n < runs && n == *cap => {
                    format!(" (of the {runs} runs, the first {n} only: {why})")
                }
                _ => String::new(),
            };
            rows.push(Row {
                what: format!(
                    "{name}: {what}, one interpreter, imports done, {n} alternating runs{fewer}: \
                     tracewise.hta vs HTA 0.5.0, median [quartiles]"
                ),
                value: format!(
                    "{:.3} [{:.3}–{:.3}] s vs {:.3} [{:.3}–{:.3}] s: {:.1}× [{:.1}–{:.1}×]",
                    v[1], v[0], v[2], v[4], v[3], v[5], v[7], v[6], v[8]
                ),
                target: "≥ 30×".into(),
            });
        }
        _ => {}
    }
    Some(())
}

/// Median seconds of the expressions `ours` and `theirs`, evaluated in turn `runs` times
/// in one interpreter after `imports` ran (so neither pays an import or the start).
fn in_process(
    py: &str,
    imports: &str,
    ours: &str,
    theirs: &str,
    runs: usize,
) -> Result<(f64, f64), String> {
    let script = format!(
        "{imports}\n\
         import time, statistics\n\
         o, t = [], []\n\
         for _ in range({runs}):\n\
         \x20   s = time.perf_counter(); {ours}; o.append(time.perf_counter() - s)\n\
         \x20   s = time.perf_counter(); {theirs}; t.append(time.perf_counter() - s)\n\
         print(statistics.median(o), statistics.median(t))\n"
    );
    let out = Command::new(py)
        .args(["-W", "ignore", "-c", &script])
        .output()
        .map_err(|e| format!("{py}: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let parsed: Vec<f64> = text
        .split_whitespace()
        .filter_map(|v| v.parse().ok())
        .collect();
    match (out.status.success(), parsed.as_slice()) {
        (true, [o, t]) => Ok((*o, *t)),
        _ => Err(format!(
            "{py}: the in-process timing failed: {}{}",
            text,
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}

/// Which build of the extension module the Python imports: its `BUILD` (`release` or
/// `dev`, the cargo profile; a module built before it existed says `unknown`) and its size.
fn installed_build(py: &str) -> Result<String, String> {
    let out = Command::new(py)
        .args([
            "-c",
            "import os, tracewise._native as n; \
             print(getattr(n, 'BUILD', 'unknown')); print(os.path.getsize(n.__file__))",
        ])
        .output()
        .map_err(|e| format!("{py}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{py} cannot import tracewise: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let kind = lines.next().unwrap_or("unknown").trim().to_owned();
    let mb = lines
        .next()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(0)
        / (1 << 20);
    Ok(format!("{kind} build, {mb} MB module"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every public method of HTA 0.5.0's `TraceAnalysis` (docs/hta-api.md, which a test of
    /// the package keeps current) is called by a notebook row.
    #[test]
    fn the_notebook_rows_call_every_method_of_hta() {
        let table = std::fs::read_to_string(crate::workspace_root().join("docs/hta-api.md"))
            .expect("docs/hta-api.md");
        let section = table
            .split("## `TraceAnalysis`")
            .nth(1)
            .and_then(|s| s.split("\n## ").next())
            .expect("the TraceAnalysis section");
        let methods: Vec<&str> = (section.lines())
            .filter_map(|l| l.strip_prefix("| `")?.split('`').next())
            .filter(|m| *m != "__init__")
            .collect();
        assert!(methods.len() >= 20, "{methods:?}");
        for m in methods {
            assert!(
                METHODS
                    .iter()
                    .any(|(_, call, ..)| call.starts_with(&format!("{m}("))
                        || call.contains(&format!("ta.{m}("))),
                "{m} has no notebook row"
            );
        }
        // Labels are words (`--methods` splits at commas, the rows at spaces), each once.
        for (i, (label, ..)) in METHODS.iter().enumerate() {
            assert!(!label.contains([' ', ',']), "{label}");
            assert!(
                METHODS[..i].iter().all(|(l, ..)| l != label),
                "{label} twice"
            );
        }
    }

    #[test]
    fn a_notebook_row_names_its_call_and_its_fewer_runs() {
        let mut rows = Vec::new();
        let m = &METHODS[METHODS.len() - 1];
        let line = format!("ROW {} 2 0.1 0.2 0.3 8 9 10 40 45 50", m.0);
        notebook_row(&line, "t", 11, &METHODS, &mut rows).unwrap();
        notebook_row(
            "RAISED get_profiler_steps ours: ValueError: x y",
            "t",
            11,
            &METHODS,
            &mut rows,
        )
        .unwrap();
        assert!(notebook_row("ROW __init__ 11 0.1 x", "t", 11, &METHODS, &mut rows).is_none());
        assert_eq!(rows.len(), 2);
        assert!(
            rows[0].what.contains(&format!("ta.{}", m.1)),
            "{}",
            rows[0].what
        );
        assert!(
            rows[0].what.contains("the first 2 only"),
            "{}",
            rows[0].what
        );
        assert_eq!(
            rows[0].value,
            "0.200 [0.100–0.300] s vs 9.000 [8.000–10.000] s: 45.0× [40.0–50.0×]"
        );
        assert!(
            rows[1].value.contains("ours: ValueError: x y"),
            "{}",
            rows[1].value
        );
    }
}
