//! Prints the closing note's tables (a tool for the maintainers, not a test): for every
//! capture under the shared traces, read back through its report.json value, (a) the
//! steps (count, evidence), the verdict, the top cause and its first knob; (b) the share
//! of the critical stream's idle time each cause holds (the `gap:` causes, and what no
//! cause explains), summing to 100 %; (c) the unchanged replay's median absolute error.
//!
//! `TRACEWISE_TRACES=../shared/traces cargo run -p investigation --example closing_tables`;
//! `TABLES_ONLY` (comma-separated parts of paths) narrows the captures.

use investigation::{Advice, CauseReplay, Investigation};

fn capture_files(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for family in ["pytorch", "jax", "nsys", "rocprof"] {
        let mut stack = vec![root.join(family)];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                let name = p
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .to_string();
                // Licences, notes, reference outputs of other tools and XProf's tool
                // exports are not captures.
                if name == "licenses"
                    || name.starts_with("reference")
                    || name.starts_with("xprof-")
                    || name.ends_with(".md")
                {
                    continue;
                }
                if p.is_dir() {
                    stack.push(p);
                } else {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out
}

/// A knob's key: its report.json tag (with a host knob's own code).
fn knob_code(k: &investigation::Knob) -> String {
    let v = serde_json::to_value(k).unwrap_or_default();
    let tag = v["knob"].as_str().unwrap_or("?").to_owned();
    match v["code"].as_str() {
        Some(code) => format!("{tag}:{code}"),
        None => tag,
    }
}

fn rows(rel: &str, inv: &Investigation) -> (String, String, String) {
    let first = &inv.first;
    let verdict = first
        .diagnosis
        .as_ref()
        .map_or("-".to_owned(), |d| d.diagnosis.code());
    let (top, knob, replay) = match &inv.advice {
        Advice::Ranked(r) => {
            let top = r.causes.first();
            let replay = r.causes.iter().find_map(|c| match &c.replay {
                CauseReplay::Replayed(p) => p.replay_error.map(|e| format!("{:.2} %", e * 100.0)),
                CauseReplay::CannotReplay { reason } => Some(format!("cannot replay: {reason}")),
                _ => None,
            });
            (
                top.map_or("-".to_owned(), |c| c.key.clone()),
                top.and_then(|c| c.knobs.first())
                    .map_or("-".to_owned(), knob_code),
                replay.unwrap_or_else(|| "-".to_owned()),
            )
        }
        // No ranked causes: the advice's kind (cannot tell, warm-up, no window).
        other => (
            format!(
                "({})",
                format!("{other:?}")
                    .split([' ', '{', '('])
                    .next()
                    .unwrap_or("-")
            ),
            "-".to_owned(),
            "-".to_owned(),
        ),
    };
    let a = format!(
        "| {rel} | {} ({}) | {verdict} | {top} | {knob} |",
        first.steps,
        first.steps_origin.origin.describe().replace('|', "/")
    );
    // The idle split of the critical stream.
    let row = &inv.captures[0];
    let idle = row
        .verdict
        .critical
        .and_then(|(d, s)| {
            row.budgets
                .iter()
                .find(|b| b.device == d && b.stream == Some(s))
        })
        .map_or(0, |b| b.idle.0);
    let mut parts: Vec<(String, i64)> = match &inv.advice {
        Advice::Ranked(r) => r
            .causes
            .iter()
            .filter(|c| c.key.starts_with("gap:"))
            .map(|c| (c.key.trim_start_matches("gap:").to_owned(), c.time.0))
            .collect(),
        _ => Vec::new(),
    };
    let explained: i64 = parts.iter().map(|p| p.1).sum();
    if idle > explained {
        parts.push(("no cause (unknown)".to_owned(), idle - explained));
    }
    let total: i64 = parts.iter().map(|p| p.1).sum::<i64>().max(1);
    let b = format!(
        "| {rel} | {:.2} ms | {} |",
        idle as f64 / 1e6,
        parts
            .iter()
            .map(|(k, t)| format!("{k} {:.1} %", 100.0 * *t as f64 / total as f64))
            .collect::<Vec<_>>()
            .join("; ")
    );
    (a, b, format!("| {rel} | {replay} |"))
}

fn main() {
    let Some(root) = std::env::var_os("TRACEWISE_TRACES").map(std::path::PathBuf::from) else {
        eprintln!("closing_tables: set TRACEWISE_TRACES to the shared traces' directory");
        std::process::exit(2);
    };
    let only: Vec<String> = std::env::var("TABLES_ONLY")
        .map(|s| s.split(',').map(str::to_owned).collect())
        .unwrap_or_default();
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    let mut not_read = Vec::new();
    for path in capture_files(&root) {
        let rel = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .display()
            .to_string();
        if !only.is_empty() && !only.iter().any(|o| rel.contains(o.as_str())) {
            continue;
        }
        let started = std::time::Instant::now();
        match investigation::investigate(&path, &Default::default()) {
            Ok(run) => {
                // Through report.json, as the tables are made from report files.
                let inv = investigation::from_json(&investigation::to_json(&run.investigation))
                    .expect("report.json reads back");
                let (ra, rb, rc) = rows(&rel, &inv);
                eprintln!("{rel}: {:.1} s", started.elapsed().as_secs_f64());
                a.push(ra);
                b.push(rb);
                c.push(rc);
            }
            Err(_) => not_read.push(rel),
        }
    }
    println!(
        "(a) | capture | steps (evidence) | verdict | top cause | its knob |\n|---|---|---|---|---|"
    );
    for r in a {
        println!("{r}");
    }
    println!("\n(b) | capture | critical stream idle | share of idle per cause |\n|---|---|---|");
    for r in b {
        println!("{r}");
    }
    println!(
        "\nnot captures (refused with exit code 2): {}",
        not_read.join(", ")
    );
    println!("\n(c) | capture | unchanged replay, median absolute step error |\n|---|---|");
    for r in c {
        println!("{r}");
    }
}
