//! profile-model end to end: the summary, SQL, analyses, export, and malformed input.

use std::path::PathBuf;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_profile-model"))
}

fn fixture(rel: &str) -> PathBuf {
    test_support::workspace_root().join("testdata").join(rel)
}

#[test]
fn summary_and_findings_on_the_fixture() {
    let out = bin().arg(fixture("chrome/ok/tiny-train")).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    for part in [
        "Main Finding",
        "Top GPU Kernels",
        "Bottleneck:",
        "| kernel |",
    ] {
        assert!(text.contains(part), "{part} missing:\n{text}");
    }
}

#[test]
fn sql_as_json() {
    let out = bin()
        .arg(fixture("chrome/ok/tiny-train"))
        .args([
            "--sql",
            "SELECT rank, COUNT(*) AS n FROM kernels GROUP BY rank ORDER BY rank",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["rank"], 0);
    assert!(rows[0]["n"].as_i64().unwrap() > 0);
}

#[test]
fn every_analysis_as_json() {
    let out = bin()
        .arg(fixture("chrome/ok/tiny-train"))
        .args(["--analysis", "all", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!r["temporal"].as_array().unwrap().is_empty());
    assert!(!r["launch_stats"].as_array().unwrap().is_empty());
}

#[test]
fn unknown_analysis_and_bad_sql_exit_2() {
    let out = bin()
        .arg(fixture("chrome/ok/tiny-train"))
        .args(["--analysis", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("critical-path"));
    let out = bin()
        .arg(fixture("chrome/ok/tiny-train"))
        .args(["--sql", "SELEKT 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn malformed_inputs_give_errors_and_write_nothing() {
    let run = test_support::run_on_malformed(env!("CARGO_BIN_EXE_profile-model"), |input, out| {
        vec![input.into(), "--export".into(), out.join("export").into()]
    });
    assert!(run.errors >= 30, "{run:?}");
}

#[test]
fn param_dlrm_all_analyses() {
    let Some(root) = test_support::traces_dir("profile-model param_dlrm_all_analyses") else {
        return;
    };
    let out = bin()
        .arg(root.join("pytorch/param-dlrm-8rank"))
        .args(["--analysis", "all"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("ranks [2, 7]") || text.contains("ranks [7, 2]"),
        "{text}"
    );
    assert!(text.contains("cpu_bound"), "{text}");
}

/// `profile-model … | head -0`: a closed stdout is the reader stopping, not an error
/// (exit 0, nothing on stderr).
#[test]
fn a_closed_stdout_exits_0_quietly() {
    test_support::assert_quiet_on_closed_stdout(
        env!("CARGO_BIN_EXE_profile-model"),
        &[fixture("chrome/ok/tiny-train")],
    );
}

/// The number of rows per GPU category of `--sql` over `input`.
fn gpu_rows(input: &std::path::Path) -> Vec<(String, i64)> {
    let out = bin()
        .arg(input)
        .args([
            "--json",
            "--sql",
            "select cat, count(*) as n from events where cat in ('kernel', 'gpu_memcpy', 'gpu_memset') group by cat order by cat",
        ])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    v.as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r["cat"].as_str().unwrap_or("").to_owned(),
                r["n"].as_i64().unwrap_or(-1),
            )
        })
        .collect()
}

/// Nsight Systems and ROCm captures become the same events table as a Kineto trace: one
/// row per GPU activity, as many as the loader's capture has.
#[test]
fn nsys_and_rocprof_captures_are_frames_too() {
    for (rel, kernels, memcpys, memsets) in [
        ("nsys/ok/small.sqlite", 4, 2, 2),
        ("rocprof/ok/small.pftrace", 2, 1, 0),
    ] {
        let input = fixture(rel);
        let capture = load::load_single(&input).expect("loads");
        let count = |kind: trace_model::ActivityKind| {
            capture
                .capture
                .activities()
                .iter()
                .filter(|a| a.kind == kind)
                .count() as i64
        };
        assert_eq!(
            (
                count(trace_model::ActivityKind::Kernel),
                count(trace_model::ActivityKind::Memcpy),
                count(trace_model::ActivityKind::Memset)
            ),
            (kernels, memcpys, memsets),
            "{rel}"
        );
        let mut want = vec![
            ("gpu_memcpy".to_owned(), memcpys),
            ("gpu_memset".to_owned(), memsets),
            ("kernel".to_owned(), kernels),
        ];
        want.retain(|(_, n)| *n > 0);
        assert_eq!(gpu_rows(&input), want, "{rel}");
        // The analyses run on it too.
        let out = bin().arg(&input).output().expect("runs");
        assert!(
            out.status.success(),
            "{rel}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            String::from_utf8_lossy(&out.stdout)
                .contains(&format!("kernels: {kernels} (measured)")),
            "{rel}"
        );
    }
}
