//! The workspace's internal dependency edges, checked against `cargo metadata`: a new edge
//! fails here until it is added below and to docs/ARCHITECTURE.md's map.

use std::collections::BTreeSet;

/// Every allowed normal (not dev) dependency between workspace members.
const EDGES: &[(&str, &[&str])] = &[
    // Layer 0: the model and leaf utilities.
    ("trace-model", &[]),
    ("hlo-parser", &[]),
    ("output-file", &[]),
    ("test-support", &[]),
    // Layer 1: readers, each into trace-model.
    ("chrome-reader", &["trace-model"]),
    ("xplane-reader", &["trace-model"]),
    // Untrusted SQLite opened as data, under budgets: shared by the two SQLite readers.
    ("sqlite-input", &["trace-model"]),
    ("nsys-reader", &["sqlite-input", "trace-model"]),
    ("rocprof-reader", &["sqlite-input", "trace-model"]),
    // Layer 2: the one loader, the only crate above the readers that reads captures.
    (
        "load",
        &[
            "chrome-reader",
            "hlo-parser",
            "nsys-reader",
            "rocprof-reader",
            "sqlite-input",
            "trace-model",
            "xplane-reader",
        ],
    ),
    // lanes rewrites Chrome trace JSON text itself (compaction); it finds rank files and
    // sniffs gzip with the loader's `load::files`, as every tool does.
    (
        "lanes",
        &["chrome-reader", "load", "output-file", "trace-model"],
    ),
    // The tools' shared command line: the loader's flags, the progress bar (chrome-reader's
    // hook) and the exit codes.
    ("tool-cli", &["chrome-reader", "load", "output-file"]),
    // Layer 3: analyses over loaded captures.
    // analysis keeps a rank directory's rows.csv parts in an output-file scratch directory.
    (
        "analysis",
        &["hlo-parser", "load", "output-file", "trace-model"],
    ),
    // One rank's timeline as HTA sees it, built from the capture, and HTA's analyses over
    // it: no polars (trace-frame builds the same timeline from its frame).
    ("timeline", &["trace-model"]),
    ("attribution", &["hlo-parser", "load", "trace-model"]),
    ("roofline", &["hlo-parser", "load", "trace-model"]),
    // The investigation: what the analyses decide about a capture, as one value.
    (
        "investigation",
        &[
            "analysis",
            "attribution",
            "load",
            "replay",
            "roofline",
            "trace-model",
        ],
    ),
    // The before/after comparison of two investigations: each side investigated once
    // (the investigation loads it) or read back from a report.json; analysis for the
    // per-step tables of each capture while it is in memory.
    ("compare", &["analysis", "investigation", "trace-model"]),
    // What-if replay: the capture's dependency graph, below the analyses (step windows
    // come from the caller).
    ("replay", &["trace-model"]),
    // Layer 4: rendering. analysis, attribution, roofline and compare for their result
    // types only (`report_calls_no_analysis` below); output-file writes the report directory.
    (
        "report",
        &[
            "analysis",
            "attribution",
            "compare",
            "investigation",
            "output-file",
            "roofline",
            "trace-model",
        ],
    ),
    // trace-frame builds its DataFrames straight from Chrome trace events (for speed), and
    // from the loader's captures for the other formats; its cache and export are outputs.
    // It returns typed values and renders nothing: it does not depend on report (profile-model
    // builds its Document), and report cannot depend on it (every tool would reach polars).
    (
        "trace-frame",
        &[
            "analysis",
            "chrome-reader",
            "load",
            "output-file",
            "timeline",
            "trace-model",
        ],
    ),
    // Layer 5: the tools.
    (
        "analyze-profile",
        &["analysis", "load", "output-file", "report", "tool-cli"],
    ),
    (
        "attribute-kernels",
        &["attribution", "output-file", "report", "tool-cli"],
    ),
    (
        "compact-cuda-graph-trace",
        &["lanes", "output-file", "tool-cli"],
    ),
    // investigate --what-if: the scenario is parsed here and replayed by the
    // investigation on the captures it loaded.
    (
        "investigate",
        &[
            "investigation",
            "output-file",
            "replay",
            "report",
            "tool-cli",
        ],
    ),
    (
        "compare-tool",
        &["compare", "load", "output-file", "report", "tool-cli"],
    ),
    // profile-model builds its text Document from trace-frame's typed report (render.rs).
    (
        "profile-model",
        &["output-file", "report", "tool-cli", "trace-frame"],
    ),
    // The Python package (python/): bindings over the loader's frames (trace-frame), the
    // investigation and the other tools' results; report directories through output-file.
    (
        "tracewise-python",
        &[
            "analysis",
            "attribution",
            "compare",
            "investigation",
            "load",
            "output-file",
            "report",
            "roofline",
            "trace-frame",
        ],
    ),
    (
        "roofline-tool",
        &["output-file", "report", "roofline", "tool-cli"],
    ),
    (
        "skip-stats",
        &["analysis", "load", "output-file", "report", "tool-cli"],
    ),
    (
        "trace-info",
        &["analysis", "load", "output-file", "report", "tool-cli"],
    ),
    // The developer tasks (fixtures, benchmarks, fuzzing) may use any crate.
    (
        "xtask",
        &[
            "analysis",
            "chrome-reader",
            "compare",
            "hlo-parser",
            "investigation",
            "lanes",
            "load",
            "nsys-reader",
            "output-file",
            "report",
            "rocprof-reader",
            "test-support",
            "trace-model",
            "xplane-reader",
        ],
    ),
];

#[test]
fn internal_dependencies_are_the_allowed_edges() {
    let meta: serde_json::Value =
        serde_json::from_slice(&test_support::cargo_metadata(&["--no-deps"])).expect("JSON");
    let packages = meta["packages"].as_array().expect("packages");
    let members: BTreeSet<&str> = packages
        .iter()
        .map(|p| p["name"].as_str().expect("name"))
        .collect();
    let mut problems = Vec::new();
    for package in packages {
        let name = package["name"].as_str().expect("name");
        let actual: BTreeSet<&str> = package["dependencies"]
            .as_array()
            .expect("dependencies")
            .iter()
            .filter(|d| d["kind"].is_null())
            .filter_map(|d| d["name"].as_str())
            .filter(|d| members.contains(d))
            .collect();
        let Some((_, allowed)) = EDGES.iter().find(|(n, _)| *n == name) else {
            problems.push(format!("{name}: a new crate; add its edges to EDGES"));
            continue;
        };
        let allowed: BTreeSet<&str> = allowed.iter().copied().collect();
        for extra in actual.difference(&allowed) {
            problems.push(format!("{name} -> {extra}: an edge the map does not allow"));
        }
        // xtask's list is what it may use, not what it must.
        for gone in allowed.difference(&actual).filter(|_| name != "xtask") {
            problems.push(format!(
                "{name} -> {gone}: allowed but gone; remove it from EDGES"
            ));
        }
    }
    for (name, _) in EDGES {
        if !members.contains(name) {
            problems.push(format!("{name}: in EDGES but not in the workspace"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The captures are read in one place: no crate above the loader names a reader crate,
/// except those EDGES allows with a reason.
#[test]
fn only_the_loader_reaches_the_structured_readers() {
    let readers = ["xplane-reader", "nsys-reader", "rocprof-reader"];
    for (name, deps) in EDGES {
        if ["load", "xtask"].contains(name) {
            continue;
        }
        for reader in readers {
            assert!(
                !deps.contains(&reader),
                "{name} depends on {reader}: read captures through the load crate"
            );
        }
    }
}

/// `report` only renders: it names analysis, attribution, roofline and compare for their
/// result types, calls none of their functions (the one exception: the verdict's wording of
/// its assumptions), reads no file, and writes only through output-file. Its unit tests
/// (after `#[cfg(test)]`) are left out.
#[test]
fn report_calls_no_analysis() {
    let src = test_support::workspace_root().join("crates/report/src");
    let mut problems = Vec::new();
    let mut files = Vec::new();
    let mut dirs = vec![src];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("crates/report/src") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("a source file");
        // Unit tests may load fixtures and run analyses to check a rendering.
        let library = text.split("#[cfg(test)]").next().unwrap_or("");
        for (n, line) in library.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let called = [
                "analysis::",
                "attribution::",
                "roofline::",
                "compare::",
                "load::",
            ]
            .iter()
            .any(|krate| {
                code.match_indices(krate).any(|(at, _)| {
                    let rest = &code[at + krate.len()..];
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    let is_fn = name.starts_with(|c: char| c.is_ascii_lowercase())
                        && rest[name.len()..].starts_with('(');
                    is_fn && name != "verdict_assumptions"
                })
            });
            let io = ["std::fs", "File::open", "read_dir", "load_single"]
                .iter()
                .any(|w| code.contains(w));
            if called || io {
                problems.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
