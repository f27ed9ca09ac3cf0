//! Replay of the real captures (`TRACEWISE_TRACES`): the unchanged replay against each
//! step as analysis's step finder gives it, a table of errors per capture, and the bound
//! the construction guarantees.

use std::path::Path;

use replay::{Graph, StepWindow, check};

/// One capture's row of the table.
struct Row {
    name: String,
    outcome: Result<Summary, String>,
}

struct Summary {
    steps: usize,
    median_abs_error: f64,
    max_abs_error: f64,
    typical: f64,
    stats: replay::GraphStats,
}

pub(crate) fn windows(
    capture: &trace_model::Capture,
    label: &str,
    rank: Option<i64>,
) -> Vec<StepWindow> {
    let report = analysis::analyze_capture(capture, label, rank, &analysis::SkipConfig::default());
    report
        .steps
        .steps
        .iter()
        .map(|s| StepWindow {
            number: s.number,
            start: s.range.start,
            end: s.range.end,
            gpu_ranged: !report.steps.origin.is_host_ranged(),
        })
        .collect()
}

fn replay_file(root: &Path, path: &Path, rows: &mut Vec<Row>) {
    let rel = path
        .strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string();
    let loaded = match load::load(path) {
        Ok(l) => l,
        Err(e) => {
            rows.push(Row {
                name: rel,
                outcome: Err(format!("not loaded: {e}")),
            });
            return;
        }
    };
    let several = loaded.len() > 1;
    for l in &loaded {
        let name = if several {
            format!(
                "{rel} [{}]",
                l.path.file_name().unwrap_or_default().to_string_lossy()
            )
        } else {
            rel.clone()
        };
        let graph = match Graph::build(&l.capture) {
            Ok(g) => g,
            Err(e) => {
                rows.push(Row {
                    name,
                    outcome: Err(e.to_string()),
                });
                continue;
            }
        };
        let w = windows(&l.capture, &name, l.rank);
        let c = check(&graph, &w);
        let stats = graph.stats();
        // The bound the construction guarantees: every explained delay is measured, so the
        // replay can only lose the unexplained waits (each moves what follows it earlier
        // by at most its own length) and gain where an activity started before its launch
        // call (each moves it later by at most that skew). A step's span differs by at
        // most their sums.
        let bound = stats.unexplained_time + stats.skew_time + trace_model::Nanos(1_000);
        for s in &c.steps {
            let diff = (s.replayed.value - s.measured.value).0.abs();
            assert!(
                diff <= bound.0,
                "{name} step {}: replayed {} against measured {}, beyond the unexplained \
                 and skewed time {}",
                s.number,
                s.replayed.value.human(),
                s.measured.value.human(),
                bound.human()
            );
        }
        // Every cause scenario removes or shortens work: no activity may end later than in
        // the unchanged replay (the replay is a max-plus system, monotone in durations).
        let baseline = graph.replay(graph.measured());
        for (cause, what_if) in replay::cause_scenarios() {
            let (durations, _) = what_if.durations(&graph, &l.capture);
            let changed = graph.replay(&durations);
            // The replay every scenario of a predictor runs: the same timeline.
            assert!(
                graph.replay_incremental(&durations) == changed,
                "{name} {cause}: the incremental replay differs from the full one"
            );
            for i in 0..l.capture.activities().len() {
                let (_, before) = graph.activity_times(&baseline, i).expect("an activity");
                let (_, after) = graph.activity_times(&changed, i).expect("an activity");
                assert!(after <= before, "{name} {cause}: activity {i} ends later");
            }
        }
        let max_abs_error = c.steps.iter().map(|s| s.error.abs()).fold(0.0, f64::max);
        rows.push(Row {
            name,
            outcome: Ok(Summary {
                steps: c.steps.len(),
                median_abs_error: c.median_abs_error.unwrap_or(0.0),
                typical: c.typical_median_abs_error.unwrap_or(0.0),
                max_abs_error,
                stats: stats.clone(),
            }),
        });
    }
}

#[test]
fn unchanged_replay_of_the_real_captures() {
    let Some(root) = test_support::traces_dir("replay") else {
        test_support::skip_notice();
        return;
    };
    let mut rows = Vec::new();
    // Every Kineto trace and XSpace, by walking the folders (the manifests' own tables are
    // read by test-support for other tests).
    let mut files = Vec::new();
    walk(&root.join("pytorch"), &mut files, &|name| {
        name.ends_with(".json") || name.ends_with(".json.gz")
    });
    walk(&root.join("jax"), &mut files, &|name| {
        name.ends_with(".xplane.pb")
    });
    files.sort();
    for file in &files {
        replay_file(&root, file, &mut rows);
    }
    for family in ["nsys", "rocprof"] {
        let Ok(dirs) = std::fs::read_dir(root.join(family)) else {
            continue;
        };
        let mut dirs: Vec<_> = dirs
            .flatten()
            .map(|d| d.path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for dir in dirs.iter().filter(|d| !d.ends_with("licenses")) {
            replay_file(&root, dir, &mut rows);
        }
    }
    let mut table = String::from(
        "| capture | steps | median abs error | max abs error | typical delays: median abs error | activities | unexplained waits (time) | cross-stream | sync edges | skewed starts |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut replayed = 0;
    for r in &rows {
        match &r.outcome {
            Ok(s) => {
                replayed += 1;
                table.push_str(&format!(
                    "| {} | {} | {:.2} % | {:.2} % | {:.2} % | {} | {} ({}) | {} | {} | {} |\n",
                    r.name,
                    s.steps,
                    100.0 * s.median_abs_error,
                    100.0 * s.max_abs_error,
                    100.0 * s.typical,
                    s.stats.gpu_nodes,
                    s.stats.unexplained_waits,
                    s.stats.unexplained_time.human(),
                    s.stats.cross_stream_edges,
                    s.stats.sync_edges,
                    s.stats.skewed_starts,
                ));
            }
            Err(e) => table.push_str(&format!("| {} | {e} ||||||||\n", r.name)),
        }
    }
    println!("{table}");
    for r in &rows {
        if let Ok(s) = &r.outcome
            && s.median_abs_error > 0.03
        {
            println!("{}: the waits the graph does not explain:", r.name);
            for u in &s.stats.unexplained_by {
                println!("  {} × {} ({})", u.count, u.what, u.time.human());
            }
        }
    }
    // The corpus has more than twenty Kineto captures with correlation ids.
    assert!(
        replayed >= 20,
        "only {replayed} captures replayed:\n{table}"
    );
}

/// The files below `dir` whose names `wanted` accepts, leaving out reference outputs
/// (`reference/`, `xprof-*/`) and licences.
fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>, wanted: &dyn Fn(&str) -> bool) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "reference" && name != "licenses" && !name.starts_with("xprof-") {
                walk(&path, out, wanted);
            }
        } else if wanted(&name) {
            out.push(path);
        }
    }
}
