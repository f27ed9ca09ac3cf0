//! profile-model end to end: the summary, SQL, analyses, export, and malformed input.

use std::path::PathBuf;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_profile-model"))
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
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

/// A rank directory with an unreadable rank: the readable rank is reported (summary,
/// analyses, SQL and export), the unreadable one named on stderr and in the report, exit 3;
/// the export of the readable rank is written.
#[test]
fn partial_rank_directory_reports_the_readable_ranks_and_exits_3() {
    let ranks = test_support::partial_rank_dir();
    let stderr = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();
    let out = bin()
        .arg(ranks.path())
        .args(["--analysis", "temporal"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(
        stderr(&out)
            .matches("rank1.pt.trace.json: truncated JSON")
            .count(),
        1,
        "{}",
        stderr(&out)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Main Finding"), "{text}");
    assert!(
        text.contains("Not read (not in the numbers above)")
            && text.contains("rank1.pt.trace.json"),
        "{text}"
    );
    assert!(!text.contains("Not run: ours"), "{text}");
    let out = bin()
        .arg(ranks.path())
        .args(["--sql", "SELECT DISTINCT rank FROM events", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.as_array().map(Vec::len), Some(1), "{rows}");
    let tmp = tempfile::tempdir().unwrap();
    let export = tmp.path().join("e");
    let out = bin()
        .arg(ranks.path())
        .arg("--export")
        .arg(&export)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(export.join("rank=0/events.parquet").is_file());
    assert!(!export.join("rank=1").exists());
}

/// A query the row checks cannot count (a self-join of a CTE that joins) is stopped by
/// the memory budget: exit 2 naming TRACEWISE_SQL_MEMORY, within seconds, nothing printed.
#[test]
fn a_runaway_query_is_stopped_by_its_memory_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("one-cat.json");
    // 40,000 kernels of one category: a self-join on it is 1.6 billion rows.
    let events: Vec<String> = (0..40_000)
        .map(|i| {
            format!(
                r#"{{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":{i},"dur":1,"args":{{"stream":7,"correlation":{i}}}}}"#
            )
        })
        .collect();
    std::fs::write(
        &trace,
        format!(r#"{{"traceEvents":[{}]}}"#, events.join(",")),
    )
    .unwrap();
    let query = "WITH c AS (SELECT cat, COUNT(*) AS k FROM kernels GROUP BY cat), \
                 d AS (SELECT a.cat FROM kernels a JOIN c ON a.cat = c.cat) \
                 SELECT COUNT(*) AS n FROM d x JOIN d y ON x.cat = y.cat";
    let started = std::time::Instant::now();
    let out = bin()
        .arg(&trace)
        .args(["--sql", query, "--sql-max-rows", "100000000000"])
        .env("TRACEWISE_SQL_MEMORY", "256M")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("TRACEWISE_SQL_MEMORY"), "{stderr}");
    assert!(out.stdout.is_empty());
    // A watchdog, not a timing target: the unbounded join ran for minutes.
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
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

/// `--export` and `--cache-dir` at every kind of target: the user's files and the input
/// stay byte-identical, nothing staged is left; an export is never put over anything, and
/// an unusable cache directory is ignored (exit 0).
#[test]
fn output_matrix_export_and_cache_dir() {
    let fixture = fixture("chrome/ok/tiny-train/rank0.pt.trace.json");
    test_support::output_matrix(
        env!("CARGO_BIN_EXE_profile-model"),
        "--export",
        test_support::OutputKind::Dir,
        &fixture,
        |input, target, overwrite| {
            test_support::with_overwrite(
                vec![input.into(), "--export".into(), target.into()],
                overwrite,
            )
        },
    );
    test_support::output_matrix(
        env!("CARGO_BIN_EXE_profile-model"),
        "--cache-dir",
        test_support::OutputKind::Cache,
        &fixture,
        |input, target, overwrite| {
            let mut args: Vec<std::ffi::OsString> = vec![
                input.into(),
                "--cache".into(),
                "--cache-dir".into(),
                target.into(),
            ];
            if overwrite {
                // --overwrite is about --export; the cache is never anything but a cache.
                args.push("--json".into());
            }
            args
        },
    );
}

/// `--help` states the exit statuses (0 ok, 2 bad input or refused output, 3 partial).
#[test]
fn help_names_the_exit_codes() {
    test_support::assert_help_names_exit_codes(env!("CARGO_BIN_EXE_profile-model"));
}

/// `--export DIR --sql BAD` exits 2 and writes no export (it is committed only when the
/// whole run succeeded); `--export-workers 100000` is clamped and finishes; a file table
/// function in `--sql` is refused.
#[test]
fn a_failed_run_commits_no_export_and_workers_are_clamped() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("export");
    let trace = fixture("chrome/ok/tiny-train");
    let o = bin()
        .arg(&trace)
        .arg("--export")
        .arg(&out)
        .args(["--sql", "SELECT nope FROM nowhere"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(!out.exists(), "the export was committed by a failing run");
    assert_eq!(test_support::staged_left(tmp.path()), Vec::<PathBuf>::new());
    let o = bin()
        .arg(&trace)
        .args(["--sql", "SELECT * FROM read_parquet('/etc/x.parquet')"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("table functions"));
    let m = test_support::run_measured(
        env!("CARGO_BIN_EXE_profile-model"),
        &[
            trace.into_os_string(),
            "--export".into(),
            out.clone().into_os_string(),
            "--export-workers".into(),
            "100000".into(),
        ],
        &[],
        std::time::Duration::from_secs(60),
    );
    assert_eq!(m.code, Some(0), "{m:?}");
    assert!(
        m.busy().as_secs_f64() < 20.0,
        "{:?} wall, {:?} CPU",
        m.elapsed,
        m.cpu
    );
    assert!(out.join("rank=0/events.parquet").is_file());
    assert!(out.join(".tracewise-output").is_file());
}

/// `--cache` without `--cache-dir` keeps its files in `$XDG_CACHE_HOME/tracewise`, a
/// directory only this user may enter, and reads them back on the next run.
#[test]
fn the_default_cache_is_per_user_and_private() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let xdg = tmp.path().join("xdg");
    let run = || {
        let o = bin()
            .arg(fixture("chrome/ok/tiny-train/rank0.pt.trace.json"))
            .arg("--cache")
            .env("XDG_CACHE_HOME", &xdg)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let first = run();
    let dir = xdg.join("tracewise");
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(
        std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o077,
        0
    );
    let second = run();
    assert!(first.contains("Cache: Written("), "{first}");
    assert!(second.contains("Cache: Hit("), "{second}");
    let body = |s: &str| s[..s.find("Cache:").unwrap()].to_owned();
    assert_eq!(
        body(&second),
        body(&first),
        "the cached frame gives the same summary"
    );
}

/// A rocprofv3 CSV capture of `kernels` kernels, each launched by a HIP call, in `dir`: a
/// capture profile-model converts to Chrome JSON before it reads it.
fn write_rocprof_csv(dir: &std::path::Path, kernels: u64) {
    use std::io::Write;
    let file = |name: &str| {
        std::io::BufWriter::new(std::fs::File::create(dir.join(name)).expect("create"))
    };
    let mut k = file("run_kernel_trace.csv");
    let mut api = file("run_hip_api_trace.csv");
    writeln!(k, "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\",\"Grid_Size_Z\"").expect("write");
    writeln!(api, "\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"").expect("write");
    for i in 1..=kernels {
        let t = 10_000 + i * 5_000;
        writeln!(
            k,
            "\"KERNEL_DISPATCH\",1,0,0,301,{i},{},\"gemm_kernel_{}\",{i},{},{},256,1,1,65536,1,1",
            i % 7,
            i % 13,
            t + 600,
            t + 3_000
        )
        .expect("write");
        writeln!(
            api,
            "\"HIP_RUNTIME_API\",\"hipLaunchKernel\",300,301,{i},{t},{}",
            t + 500
        )
        .expect("write");
    }
    k.flush().expect("flush");
    api.flush().expect("flush");
}

/// A capture that is not Chrome JSON is no longer converted into a scratch directory (its
/// frames are built from the loaded capture): a run, its `--sql` and its `--export` write
/// nothing under the temporary directory, and the query sees every kernel.
#[test]
fn a_capture_is_read_without_scratch_files() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let capture = tmp.path().join("capture");
    std::fs::create_dir(&capture).expect("mkdir");
    write_rocprof_csv(&capture, 2_000);
    let scratch = tmp.path().join("tmp");
    std::fs::create_dir(&scratch).expect("mkdir");
    let export = tmp.path().join("export");
    let runs: [&[&str]; 3] = [
        &[],
        &[
            "--json",
            "--sql",
            "select count(*) as n from events where cat = 'kernel'",
        ],
        &["--export", export.to_str().expect("UTF-8 path")],
    ];
    for args in runs {
        let out = bin()
            .arg(&capture)
            .args(args)
            .env("TMPDIR", &scratch)
            .output()
            .expect("runs");
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        if args.contains(&"--sql") {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
            assert_eq!(v[0]["n"], 2_000, "{v}");
        }
        let left: Vec<PathBuf> = std::fs::read_dir(&scratch)
            .expect("ls")
            .map(|e| e.expect("entry").path())
            .collect();
        assert!(left.is_empty(), "{args:?}: {left:?}");
    }
    let back = std::fs::read_dir(&export).expect("the export").count();
    assert!(back > 0, "the export has its rank directories");
}

/// `--export` of 2,000 tiny ranks (issue 45, finding 4): every rank exported, exit 0, no
/// stack overflow (each rank's polars work nested on a rayon worker's stack before) and
/// no staged directory left.
#[test]
fn export_of_two_thousand_ranks_does_not_overflow_the_stack() {
    let tmp = tempfile::tempdir().unwrap();
    let ranks = tmp.path().join("ranks");
    std::fs::create_dir(&ranks).unwrap();
    test_support::synth_ranks::Job::plan(2000, 0.001, 7).write_into(&ranks);
    let export = tmp.path().join("e");
    let out = bin()
        .arg(&ranks)
        .arg("--export")
        .arg(&export)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for rank in [0, 999, 1999] {
        assert!(export.join(format!("rank={rank}/events.parquet")).is_file());
    }
    let parts = std::fs::read_dir(&export)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().starts_with("rank="))
        })
        .count();
    assert_eq!(parts, 2000);
    assert!(test_support::staged_left(tmp.path()).is_empty());
}

/// Two files that are both rank 0: `--export` warns as every tool does, and exports both
/// into the rank's partition (it failed before).
#[test]
fn export_with_a_duplicate_rank_warns_and_keeps_both() {
    let tmp = tempfile::tempdir().unwrap();
    let ranks = tmp.path().join("ranks");
    std::fs::create_dir(&ranks).unwrap();
    test_support::synth_ranks::Job::plan(2, 0.01, 3).write_into(&ranks);
    let first = std::fs::read_dir(&ranks)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.to_string_lossy().contains("rank0"))
        .expect("rank 0's file");
    std::fs::copy(&first, ranks.join("copy-of-rank0.pt.trace.json")).unwrap();
    let export = tmp.path().join("e");
    let out = bin()
        .arg(&ranks)
        .arg("--export")
        .arg(&export)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("warning: rank 0 is given by 2 files") && err.contains("copy-of-rank0"),
        "{err}"
    );
    let files: Vec<_> = std::fs::read_dir(export.join("rank=0"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(export.join("rank=1/events.parquet").is_file());
}
