//! skip-stats end to end: the binary on the hand-made fixture (stdout snapshot,
//! rows.csv, JSON, errors) and on every real capture in `$TRACEWISE_TRACES`.

use std::path::Path;
use std::process::{Command, Output};

use test_support::workspace_root;

/// Runs skip-stats in `cwd` with `args`, writing rows.csv into a fresh temporary dir.
fn skip_stats(cwd: &Path, args: &[&str]) -> (Output, tempfile::TempDir) {
    let out = tempfile::tempdir().expect("temporary directory");
    let output = Command::new(env!("CARGO_BIN_EXE_skip-stats"))
        .current_dir(cwd)
        .args(args)
        .arg("--out")
        .arg(out.path())
        .output()
        .expect("skip-stats runs");
    (output, out)
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8 stdout")
}

const FIXTURE: &str = "testdata/chrome/ok/skip_stats_small.json";

#[test]
fn fixture_text() {
    let (o, out) = skip_stats(&workspace_root(), &[FIXTURE]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    insta::assert_snapshot!("skip_stats_small", stdout(&o));
    let rows = std::fs::read_to_string(out.path().join("rows.csv")).expect("rows.csv");
    insta::assert_snapshot!("skip_stats_small_rows", rows);
    // Nothing but rows.csv is left in the out dir (the temporary file was renamed).
    let names: Vec<_> = std::fs::read_dir(out.path())
        .expect("out dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, ["rows.csv"]);
    // rows.csv gets an ordinary file's mode, not the temporary file's private 0600.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
        let plain = out.path().join("plain");
        std::fs::write(&plain, "").expect("plain file");
        assert_eq!(mode(&out.path().join("rows.csv")), mode(&plain));
    }
}

#[test]
fn fixture_json() {
    let (o, _out) = skip_stats(&workspace_root(), &[FIXTURE, "--json"]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON stdout");
    let r = &v["reports"][0];
    assert_eq!(r["verdict"]["label"], "inferred");
    assert_eq!(r["verdict"]["bound"], "host/launch-bound");
    assert_eq!(r["skip"]["total"]["label"], "measured");
    // By hand: kernel delays 7+10+5 and 7+13+5 µs; first op 1002 µs, last kernel end 1195 µs.
    assert_eq!(r["skip"]["total"]["tklqt_ns"], 47_000);
    assert_eq!(r["skip"]["total"]["il_ns"], 193_000);
    assert_eq!(r["skip"]["total"]["akd_ns"], 18_500);
    assert_eq!(r["skip"]["total"]["gpu_idle_ns"], 193_000 - 111_000);
    assert_eq!(r["launch"]["all"]["without_launch"], 1);
    for s in r["streams"].as_array().expect("streams") {
        assert_eq!(s["budget"]["check"]["holds"], true);
    }
}

#[test]
fn same_input_same_bytes() {
    let (a, out_a) = skip_stats(&workspace_root(), &[FIXTURE, "--json"]);
    let (b, out_b) = skip_stats(&workspace_root(), &[FIXTURE, "--json"]);
    assert_eq!(a.stdout, b.stdout);
    let rows = |d: &tempfile::TempDir| std::fs::read(d.path().join("rows.csv")).expect("rows.csv");
    assert_eq!(rows(&out_a), rows(&out_b));
}

#[test]
fn missing_file_exits_2() {
    let (o, out) = skip_stats(&workspace_root(), &["no/such/trace.json"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("skip-stats: analysing no/such/trace.json: "),
        "{err}"
    );
    // Nothing is left behind: no rows.csv, no temporary file.
    let left: Vec<_> = std::fs::read_dir(out.path()).expect("out dir").collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn help_teaches() {
    let o = Command::new(env!("CARGO_BIN_EXE_skip-stats"))
        .arg("--help")
        .output()
        .expect("runs");
    let help = stdout(&o);
    for word in [
        "GPU-bound",
        "rows.csv",
        "TKLQT",
        "ProfilerStep#N",
        "--json",
        "Examples:",
        ".xplane.pb",
    ] {
        assert!(help.contains(word), "--help lacks {word}");
    }
    assert!(!help.contains("not supported"), "{help}");
}

/// An XSpace is read, as --help says: a budget and rows.csv for the fixture's GPU.
#[test]
fn an_xspace_is_read() {
    let out = tempfile::tempdir().expect("temporary directory");
    let o = Command::new(env!("CARGO_BIN_EXE_skip-stats"))
        .current_dir(workspace_root())
        .args(["testdata/xplane/ok/small.xplane.pb", "--out"])
        .arg(out.path())
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = std::fs::read_to_string(out.path().join("rows.csv")).expect("rows.csv");
    assert!(rows.lines().count() > 1, "{rows}");
}

use test_support::traces_dir as traces;

#[test]
fn real_traces_exit_0() {
    let Some(set) = test_support::real_traces("real_traces_exit_0") else {
        return;
    };
    let root = set.root.clone();
    // Every Kineto trace and the JSON of every JAX capture (regenerated from the GPU
    // XSpaces, JAX-written for the CPU-only one), from the set's manifests; then every
    // complete rank folder and one XSpace.
    let mut inputs: Vec<std::path::PathBuf> = set.kineto.iter().map(|t| t.path.clone()).collect();
    let (gpu, cpu) = (set.jax_gpu_json(), set.jax_cpu_json());
    assert!(!gpu.is_empty() && !cpu.is_empty(), "{gpu:?} {cpu:?}");
    inputs.extend(gpu);
    inputs.extend(cpu);
    inputs.extend(set.rank_dirs());
    inputs.push(set.xspace("rocm-mi300-jax08-gemm").path.clone());
    for input in &inputs {
        let input = input.to_str().expect("UTF-8 path");
        let (o, out) = skip_stats(&root, &[input]);
        assert!(
            o.status.success(),
            "{input}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(out.path().join("rows.csv").exists(), "{input}");
    }
}

#[test]
fn real_trace_snapshots() {
    let Some(root) = traces("real_trace_snapshots") else {
        return;
    };
    for (name, input) in [
        (
            "pytorch_dlrm_rank0",
            "pytorch/param-dlrm-8rank/worker0_step_12.1694128201545.pt.trace.json",
        ),
        (
            "jax_te_fused_attn",
            "jax/rocm-gfx950-te-fused-attn/regenerated-jaxlib0.10.2.trace.json.gz",
        ),
        ("pytorch_dlrm_8rank", "pytorch/param-dlrm-8rank"),
    ] {
        let (o, _out) = skip_stats(&root, &[input]);
        assert!(o.status.success(), "{input}");
        insta::assert_snapshot!(name, stdout(&o));
    }
}

/// Every malformed or odd fixture (testdata/*/{err,odd}): no panic, an error names the
/// file and the position, nothing is left behind.
#[test]
fn malformed_inputs_never_panic() {
    let run = test_support::run_on_malformed(env!("CARGO_BIN_EXE_skip-stats"), |input, out| {
        vec![input.into(), "--out".into(), out.into()]
    });
    eprintln!("skip-stats: {run:?}");
}

/// rows.csv follows the workspace's output rules: an existing one is replaced only with
/// --overwrite, and never when it is a symlink or a directory.
#[test]
fn rows_csv_is_replaced_only_with_overwrite() {
    let root = workspace_root();
    let out = tempfile::tempdir().expect("temporary directory");
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_skip-stats"))
            .current_dir(&root)
            .arg(FIXTURE)
            .arg("--out")
            .arg(out.path())
            .args(extra)
            .output()
            .expect("skip-stats runs")
    };
    let rows = out.path().join("rows.csv");
    std::fs::write(&rows, "keep\n").expect("an existing rows.csv");
    let o = run(&[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--overwrite"), "{stderr}");
    assert!(o.stdout.is_empty(), "refused before the analysis");
    assert_eq!(std::fs::read_to_string(&rows).expect("rows.csv"), "keep\n");
    let o = run(&["--overwrite"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        std::fs::read_to_string(&rows)
            .expect("rows.csv")
            .starts_with("device,")
    );
    #[cfg(unix)]
    {
        std::fs::remove_file(&rows).expect("remove");
        std::os::unix::fs::symlink("/dev/null", &rows).expect("symlink");
        let o = run(&["--overwrite"]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("symbolic link"), "{stderr}");
    }
}

/// A rank directory with unreadable ranks: the readable ones are reported (and in
/// rows.csv), each unreadable one is named with its error, and the exit code is 3.
#[test]
fn partial_rank_directory_reports_the_readable_ranks_and_exits_3() {
    let root = workspace_root();
    let ranks = tempfile::tempdir().expect("temporary directory");
    for rank in 0..2 {
        let name = format!("rank{rank}.pt.trace.json");
        std::fs::copy(
            root.join("testdata/chrome/ok/tiny-train").join(&name),
            ranks.path().join(&name),
        )
        .expect("copy a rank");
    }
    std::fs::write(
        ranks.path().join("rank2.pt.trace.json"),
        "{\"traceEvents\": [",
    )
    .expect("write");
    #[cfg(unix)]
    std::os::unix::fs::symlink(
        "rank3.pt.trace.json",
        ranks.path().join("rank3.pt.trace.json"),
    )
    .expect("a symlink loop");
    let (o, out) = skip_stats(&root, &[ranks.path().to_str().expect("UTF-8 path")]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("rank2.pt.trace.json: truncated JSON"),
        "{stderr}"
    );
    #[cfg(unix)]
    assert!(
        stderr.contains("rank3.pt.trace.json: cannot read"),
        "{stderr}"
    );
    assert!(stderr.contains("symbolic links") || !cfg!(unix), "{stderr}");
    let text = stdout(&o);
    assert!(
        text.contains("rank0.pt.trace.json") && text.contains("rank1.pt.trace.json"),
        "{text}"
    );
    let rows = std::fs::read_to_string(out.path().join("rows.csv")).expect("rows.csv");
    assert!(rows.lines().count() > 1);
}

/// `skip-stats … | head -0`: a closed stdout is the reader stopping, not an error (exit 0,
/// nothing on stderr).
#[test]
fn a_closed_stdout_exits_0_quietly() {
    let out = tempfile::tempdir().expect("temporary directory");
    let out = out.path().to_str().expect("UTF-8 path");
    test_support::assert_quiet_on_closed_stdout(
        env!("CARGO_BIN_EXE_skip-stats"),
        &[FIXTURE, "--out", out],
    );
}

/// rows.csv through `--out DIR` at every kind of target: the user's files and the input
/// stay byte-identical, nothing staged is left, the exit status is the rules'.
#[test]
fn output_matrix_rows_csv() {
    let fixture = test_support::workspace_root().join(FIXTURE);
    test_support::output_matrix(
        env!("CARGO_BIN_EXE_skip-stats"),
        "--out (rows.csv)",
        test_support::OutputKind::FileInDir,
        &fixture,
        |input, target, overwrite| {
            test_support::with_overwrite(
                vec![input.into(), "--out".into(), target.into()],
                overwrite,
            )
        },
    );
}

/// SIGINT and SIGKILL at several points of a run that replaces rows.csv, on a large
/// synthetic trace: rows.csv is the old file or the new one, never neither or half; after
/// SIGINT nothing staged is left (rows.csv is staged while the rows are written).
#[test]
fn interrupts_leave_the_old_rows_or_the_new_ones() {
    use std::os::unix::process::ExitStatusExt;
    use std::time::Instant;
    let tmp = tempfile::tempdir().expect("tempdir");
    let big = tmp.path().join("big.json");
    test_support::write_synthetic_trace(&big, 20_000_000);
    let out = tmp.path().join("out");
    let rows = out.join("rows.csv");
    let run = || {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_skip-stats"));
        cmd.arg(&big).arg("--out").arg(&out).arg("--overwrite");
        cmd
    };
    let start = Instant::now();
    assert!(run().output().expect("runs").status.success());
    let whole = start.elapsed();
    let new = std::fs::read(&rows).expect("rows.csv");
    let old = b"the old rows\n".to_vec();
    let mut seen = (0, 0);
    for signal in ["INT", "TERM", "KILL"] {
        // 400 %: a run that is certainly done, however loaded the machine.
        for percent in [5u32, 30, 60, 85, 95, 100, 105, 400] {
            std::fs::write(&rows, &old).expect("write");
            let status = test_support::run_interrupted(run(), whole * percent / 100, signal);
            let cell = format!("SIG{signal} after {percent}% of {whole:?}: {status:?}");
            let now = std::fs::read(&rows).unwrap_or_else(|e| panic!("{cell}: no rows.csv: {e}"));
            if now == new {
                seen.1 += 1;
            } else if now == old {
                seen.0 += 1;
            } else {
                panic!("{cell}: rows.csv is neither the old file nor the new one");
            }
            if signal != "KILL" {
                let staged = test_support::staged_left(tmp.path());
                assert!(staged.is_empty(), "{cell}: staged left: {staged:?}");
                assert!(status.success() || status.signal().is_some(), "{cell}");
            }
        }
    }
    assert!(seen.0 > 0 && seen.1 > 0, "old {}, new {}", seen.0, seen.1);
    // SIGINT and SIGTERM while rows.csv is staged (seen on disk): the staged file is
    // removed and the old rows.csv stays.
    for signal in ["INT", "TERM"] {
        std::fs::write(&rows, &old).expect("write");
        let mut child = run()
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("starts");
        // Its own staged file (SIGKILL above may have left others' behind).
        let own = format!(".tracewise-{}-", child.id());
        let deadline = Instant::now() + whole * 4;
        while !test_support::staged_left(&out)
            .iter()
            .any(|p| p.to_string_lossy().contains(&own))
        {
            assert!(Instant::now() < deadline, "rows.csv was never staged");
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .expect("kill runs");
        assert!(sent.success());
        let status = child.wait().expect("ends");
        assert_eq!(status.signal(), Some(if signal == "INT" { 2 } else { 15 }));
        let staged: Vec<_> = test_support::staged_left(tmp.path())
            .into_iter()
            .filter(|p| p.to_string_lossy().contains(&own))
            .collect();
        assert!(
            staged.is_empty(),
            "SIG{signal} while staged: left {staged:?}"
        );
        assert_eq!(std::fs::read(&rows).expect("rows.csv"), old);
    }
}

/// Hostile input ends in a clear error naming the file, within 10 s and under 1 GiB: a
/// gzip of 2 GiB of whitespace (about 2 MB on disk), a gzip holding one 2 GiB string, and
/// a plain file with one 400 MB string; `--threads 100000` finishes.
#[test]
fn hostile_input_is_bounded() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let bin = env!("CARGO_BIN_EXE_skip-stats");
    let out = tmp.path().join("out");
    let check = |input: &Path, envs: &[(&str, &str)], expect: &str| {
        let args = [
            input.as_os_str().to_owned(),
            "--out".into(),
            out.as_os_str().to_owned(),
        ];
        let m = test_support::run_measured(bin, &args, envs, std::time::Duration::from_secs(60));
        let name = input.file_name().expect("a name").to_string_lossy();
        assert!(!m.timed_out, "{name}: still running after 60 s");
        assert_eq!(m.code, Some(2), "{name}: {m:?}");
        assert!(m.stderr.contains(name.as_ref()), "{name}: {}", m.stderr);
        assert!(m.stderr.contains(expect), "{name}: {}", m.stderr);
        assert!(m.stderr.contains("byte"), "{name}: no offset: {}", m.stderr);
        assert!(m.busy().as_secs_f64() < 10.0, "{name}: took {:?}", m.busy());
        assert!(m.peak_kib < 1 << 20, "{name}: peak {} KiB", m.peak_kib);
        assert!(!out.join("rows.csv").exists());
        eprintln!("{name}: {:?}, peak {} KiB", m.elapsed, m.peak_kib);
    };
    let mib = 1 << 20;
    // Whitespace between events.
    let bomb = tmp.path().join("whitespace.json.gz");
    std::fs::write(&bomb, test_support::whitespace_bomb()).expect("write");
    assert!(std::fs::metadata(&bomb).expect("meta").len() < 4 * mib as u64);
    check(&bomb, &[], "TRACEWISE_MAX_INFLATE_RATIO");
    // One string: the inflation cap stops it first; with that cap raised, the event cap.
    let letters = vec![b'a'; 16 * mib];
    let head = br#"{"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "name": ""#;
    let string = tmp.path().join("string.json.gz");
    std::fs::write(&string, test_support::string_bomb()).expect("write");
    check(&string, &[], "TRACEWISE_MAX_INFLATE_RATIO");
    // The event cap itself, set low (64 MiB) so that the test stays short in a debug build
    // on a busy machine; the plain file below meets the default cap.
    check(
        &string,
        &[
            ("TRACEWISE_MAX_INFLATE_RATIO", "100000"),
            ("TRACEWISE_MAX_EVENT_BYTES", "67108864"),
        ],
        "TRACEWISE_MAX_EVENT_BYTES",
    );
    // A plain file (read in place, not inflated) with one 272 MiB string: past the default
    // cap of 256 MiB.
    let plain = tmp.path().join("string.json");
    {
        use std::io::Write;
        let mut f = std::io::BufWriter::new(std::fs::File::create(&plain).expect("create"));
        f.write_all(head).expect("write");
        for _ in 0..17 {
            f.write_all(&letters).expect("write");
        }
        f.write_all(b"\"}]}").expect("write");
    }
    check(&plain, &[], "TRACEWISE_MAX_EVENT_BYTES");
    std::fs::remove_file(&plain).expect("rm");

    // Absurd thread counts are clamped: the run finishes as with the default.
    let fixture = workspace_root().join(FIXTURE);
    let args = [
        fixture.into_os_string(),
        "--threads".into(),
        "100000".into(),
        "--out".into(),
        out.clone().into_os_string(),
    ];
    let m = test_support::run_measured(bin, &args, &[], std::time::Duration::from_secs(60));
    assert_eq!(m.code, Some(0), "{m:?}");
    assert!(
        m.busy().as_secs_f64() < 10.0,
        "--threads 100000 took {:?}",
        m.busy()
    );
}

/// A gzip trace truncated while skip-stats reads it: exit 2 with a message naming the
/// file, no crash, nothing written.
#[test]
fn an_input_truncated_during_the_read_is_an_error() {
    use std::io::Write;
    let tmp = tempfile::tempdir().expect("tempdir");
    let plain = tmp.path().join("big.json");
    test_support::write_synthetic_trace(&plain, 60_000_000);
    let gz = tmp.path().join("big.json.gz");
    {
        let text = std::fs::read(&plain).expect("read");
        let mut enc = flate2::write::GzEncoder::new(
            std::fs::File::create(&gz).expect("create"),
            flate2::Compression::fast(),
        );
        enc.write_all(&text).expect("deflate");
        enc.finish().expect("deflate");
    }
    // Gzip and plain text alike (plain files are read, not mapped: no SIGBUS). The cut
    // comes 10 ms after the start: since the reader got faster, both 60 MB inputs are read
    // whole in under 150 ms, and a read that ends before the cut rightly succeeds. Cut
    // before the read starts, it is a truncated input: the same error.
    for input in [&gz, &plain] {
        let name = input
            .file_name()
            .and_then(|n| n.to_str())
            .expect("name")
            .to_owned();
        let out = tmp.path().join(format!("out-{name}"));
        let child = Command::new(env!("CARGO_BIN_EXE_skip-stats"))
            .arg(input)
            .arg("--out")
            .arg(&out)
            .arg("--threads")
            .arg("1")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("starts");
        std::thread::sleep(std::time::Duration::from_millis(10));
        let len = std::fs::metadata(input).expect("meta").len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(input)
            .expect("open")
            .set_len(len / 2)
            .expect("truncate");
        let o = child.wait_with_output().expect("ends");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {stderr}");
        assert!(stderr.contains(&name), "{stderr}");
        assert!(!out.join("rows.csv").exists());
    }
}

/// `--help` states the exit statuses (0 ok, 2 bad input or refused output, 3 partial).
#[test]
fn help_names_the_exit_codes() {
    test_support::assert_help_names_exit_codes(env!("CARGO_BIN_EXE_skip-stats"));
}

/// A rank directory is read one rank at a time (each rank's rows through a scratch file);
/// its report and rows.csv are byte for byte what the library's load-everything path
/// (`analysis::skip_stats`) gives for the same directory.
#[test]
fn a_rank_directory_read_rank_by_rank_equals_the_whole_load() {
    let Some(root) = traces("a_rank_directory_read_rank_by_rank_equals_the_whole_load") else {
        return;
    };
    let dir = root.join("pytorch/param-dlrm-8rank");
    let d = dir.to_str().expect("a UTF-8 path");
    let (o, out) = skip_stats(&root, &[d, "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut rows = Vec::new();
    let whole = analysis::skip_stats(&dir, &analysis::SkipConfig::default(), &mut rows)
        .expect("the directory loads");
    assert_eq!(whole.reports.len(), 8);
    let mut json = serde_json::to_string_pretty(&report::skip_text::render_json(&whole))
        .expect("serialisable");
    json.push('\n');
    assert_eq!(stdout(&o), json);
    let written = std::fs::read(out.path().join("rows.csv")).expect("rows.csv");
    assert!(written.len() > 10_000, "rows.csv has rows");
    assert!(written == rows, "rows.csv differs from the whole load's");
}

/// rows.csv of a rank directory is written once, in rank order, whatever order the file
/// names give and wherever the rank is in the file: byte for byte the whole load's rows
/// (and report), each rank's rows once, the rank column never going down. The two ranks
/// of `tiny-train` are copied under names that sort against their ranks: with
/// `distributedInfo` before the events (the ranks are read from the files' first bytes),
/// and after them (the order the names suggest turns out wrong once the files are read).
#[test]
fn rows_of_a_rank_directory_are_in_rank_order_once() {
    let root = workspace_root();
    let fixture = root.join("testdata/chrome/ok/tiny-train");
    let rank_text = |rank: usize| {
        std::fs::read_to_string(fixture.join(format!("rank{rank}.pt.trace.json")))
            .expect("a fixture rank")
    };
    // `distributedInfo` moved after `traceEvents`, as the last member.
    let rank_after_events = |text: String| {
        let line = text
            .lines()
            .find(|l| l.contains("\"distributedInfo\""))
            .expect("the fixture's distributedInfo line")
            .to_string();
        let member = line.trim().trim_end_matches(',');
        let end = text.rfind('}').expect("the end of the object");
        let mut moved = text.replace(&format!("{line}\n"), "");
        let end = end - line.len() - 1;
        moved.replace_range(end..end, &format!(",\n  {member}\n"));
        assert!(
            moved.find("\"distributedInfo\"") > moved.find("\"traceEvents\""),
            "{moved}"
        );
        moved
    };
    for rank_first in [true, false] {
        let ranks = tempfile::tempdir().expect("temporary directory");
        // Rank 1 in the file named rank0 and the other way round.
        for (rank, name) in [(1, "rank0.pt.trace.json"), (0, "rank1.pt.trace.json")] {
            let text = if rank_first {
                rank_text(rank)
            } else {
                rank_after_events(rank_text(rank))
            };
            std::fs::write(ranks.path().join(name), text).expect("a rank file");
        }
        let dir = ranks.path().to_str().expect("UTF-8 path");
        let (o, out) = skip_stats(&root, &[dir, "--json"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let written = std::fs::read_to_string(out.path().join("rows.csv")).expect("rows.csv");

        let mut whole = Vec::new();
        let analysis =
            analysis::skip_stats(ranks.path(), &analysis::SkipConfig::default(), &mut whole)
                .expect("the directory loads");
        let whole = String::from_utf8(whole).expect("UTF-8 rows");
        let mut json = serde_json::to_string_pretty(&report::skip_text::render_json(&analysis))
            .expect("serialisable");
        json.push('\n');
        assert_eq!(stdout(&o), json, "distributedInfo first: {rank_first}");
        assert_eq!(written, whole, "distributedInfo first: {rank_first}");

        // Independently of the whole load: each rank's rows once, ranks in order.
        let column: Vec<i64> = written
            .lines()
            .skip(1)
            .map(|l| {
                l.split(',')
                    .next()
                    .and_then(|r| r.parse().ok())
                    .expect("a rank")
            })
            .collect();
        let count = |rank| column.iter().filter(|&&r| r == rank).count();
        let single = |rank: usize| {
            let (o, out) = skip_stats(
                &root,
                &[fixture
                    .join(format!("rank{rank}.pt.trace.json"))
                    .to_str()
                    .expect("UTF-8")],
            );
            assert!(o.status.success());
            std::fs::read_to_string(out.path().join("rows.csv"))
                .expect("rows.csv")
                .lines()
                .count()
                - 1
        };
        assert!(count(0) > 0 && count(0) == single(0), "{column:?}");
        assert!(count(1) > 0 && count(1) == single(1), "{column:?}");
        assert_eq!(column.len(), count(0) + count(1));
        assert!(column.is_sorted(), "rank column out of order: {column:?}");
    }
}
