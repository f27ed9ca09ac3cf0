//! The `compare` binary end to end: files written, --json, exit codes, --help.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use test_support::workspace_root;

fn sample() -> PathBuf {
    workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json")
}

fn compare(args: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_compare"))
        .args(args)
        .output()
        .expect("runs")
}

#[test]
fn writes_every_file_and_refuses_to_overwrite() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("cmp");
    let s = sample();
    let o = compare(&[&s, &s, Path::new("--out"), &out]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in [
        "report.md",
        "report.html",
        "report.json",
        "sides.csv",
        "step_time.csv",
        "causes.csv",
        "budgets.csv",
        "classes.csv",
        "kernels.csv",
        "ops.csv",
        "first_step.csv",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let md = std::fs::read_to_string(out.join("report.md")).expect("md");
    assert!(
        md.contains("## 2. Predicted against realized, per cause"),
        "{md}"
    );
    // report.json reads back into the same report.
    let json = std::fs::read_to_string(out.join("report.json")).expect("json");
    let doc = report::report_json::from_str(&json).expect("reads back");
    assert_eq!(report::markdown::render(&doc), md);
    // A second run without --overwrite is refused and leaves the files alone.
    let o = compare(&[&s, &s, Path::new("--out"), &out]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--overwrite"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = compare(&[&s, &s, Path::new("--out"), &out, Path::new("--overwrite")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn json_goes_to_stdout_and_nothing_is_written() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let s = sample();
    let o = Command::new(env!("CARGO_BIN_EXE_compare"))
        .args([&s, &s])
        .arg("--json")
        .current_dir(tmp.path())
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert_eq!(v["schema"], report::report_json::SCHEMA);
    assert!(std::fs::read_dir(tmp.path()).expect("dir").next().is_none());
}

#[test]
fn a_missing_side_exits_2_naming_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let missing = tmp.path().join("nope.json");
    let o = compare(&[
        &sample(),
        &missing,
        Path::new("--out"),
        &tmp.path().join("o"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("after") && err.contains("nope.json"), "{err}");
    assert!(!tmp.path().join("o").exists());
}

#[test]
fn help_teaches_the_noise_rule_and_the_exit_codes() {
    let o = compare(&[Path::new("--help")]);
    assert!(o.status.success());
    let help = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "BEFORE",
        "AFTER",
        "noise rule",
        "inconclusive",
        "realized",
        "Exit status",
    ] {
        assert!(help.contains(needle), "{needle}: {help}");
    }
}

#[test]
fn a_closed_stdout_is_quiet() {
    // Two different captures: one on both sides is warned about.
    let tmp = tempfile::tempdir().expect("tempdir");
    let other = tmp.path().join("other.pt.trace.json");
    let mut text = std::fs::read(sample()).expect("read");
    text.push(b'\n');
    std::fs::write(&other, text).expect("write");
    let s = sample();
    let (s, other) = (s.to_string_lossy(), other.to_string_lossy());
    test_support::assert_quiet_on_closed_stdout(
        env!("CARGO_BIN_EXE_compare"),
        &[s.as_ref(), other.as_ref(), "--json"],
    );
}

/// The report directory `--out` at every kind of target (`.`, `..`, the capture's
/// directory, the capture, a directory of the user's, symbolic links, a FIFO,
/// /dev/null), with and without --overwrite: every cell is refused (exit 2), the user's
/// files and the input stay byte-identical and nothing staged is left.
#[test]
fn output_matrix_out() {
    test_support::output_matrix(
        env!("CARGO_BIN_EXE_compare"),
        "--out",
        test_support::OutputKind::Dir,
        &sample(),
        |input, target, overwrite| {
            test_support::with_overwrite(
                vec![input.into(), input.into(), "--out".into(), target.into()],
                overwrite,
            )
        },
    );
}

/// `--out $HOME` is refused with and without --overwrite, and the user's report.md there
/// is left as it was.
#[test]
fn home_is_never_written_into() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).expect("mkdir");
    std::fs::write(home.join("report.md"), b"mine").expect("write");
    let s = sample();
    for overwrite in [false, true] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_compare"));
        cmd.arg(&s)
            .arg(&s)
            .arg("--out")
            .arg(&home)
            .env("HOME", &home);
        if overwrite {
            cmd.arg("--overwrite");
        }
        let o = cmd.output().expect("runs");
        assert_eq!(o.status.code(), Some(2), "overwrite={overwrite}");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(stderr.contains("home directory"), "{stderr}");
        assert_eq!(
            std::fs::read(home.join("report.md")).expect("read"),
            b"mine"
        );
        let names: Vec<_> = std::fs::read_dir(&home).expect("ls").collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}

/// A compare report written inside a rank directory is a marked directory of its own,
/// not loose files among the ranks: later runs on the rank directory still read every
/// rank and exit 0 (the loose report.json made them exit 3).
#[test]
fn a_report_inside_a_rank_directory_leaves_the_ranks_readable() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let ranks = tmp.path().join("ranks");
    std::fs::create_dir(&ranks).expect("mkdir");
    for r in 0..2 {
        std::fs::copy(sample(), ranks.join(format!("rank{r}.pt.trace.json"))).expect("copy");
    }
    // Into the rank directory itself: refused, nothing added.
    let o = compare(&[&ranks, &ranks, Path::new("--out"), &ranks]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read_dir(&ranks).expect("ls").count(), 2);
    let inside = ranks.join("cmp");
    let o = compare(&[&ranks, &ranks, Path::new("--out"), &inside]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(inside.join(output_file::MARKER).is_file());
    let o = compare(&[&ranks, &ranks, Path::new("--json")]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A report.json side is input like any other: each crafted value (a negative duration,
/// a step of years, an absurd device or GPU count, a share above 1) is exit 2 naming the
/// field, and nothing is written. The reports are regenerated here from the sample.
#[test]
fn a_crafted_report_json_is_refused_naming_the_field() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let s = tmp.path().join("synthetic.json");
    test_support::write_synthetic_trace(&s, 2_000_000);
    let run = investigation::investigate(&s, &Default::default()).expect("investigates");
    let good: serde_json::Value =
        serde_json::from_str(&report::report_json::write(&run.investigation)).expect("json");
    assert_eq!(
        good["advice"]["ranked"], "ranked",
        "the capture ranks causes"
    );
    type Mutate = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(&str, Mutate)> = vec![
        (
            "captures[0].steady_steps[0]",
            Box::new(|v| v["captures"][0]["steady_steps"][0] = (-5).into()),
        ),
        (
            "captures[0].steady_steps[1]",
            Box::new(|v| v["captures"][0]["steady_steps"][1] = i64::MAX.into()),
        ),
        (
            "captures[0].devices_with_activity",
            Box::new(|v| v["captures"][0]["devices_with_activity"] = u64::MAX.into()),
        ),
        (
            "captures[0].gpu_models",
            Box::new(|v| {
                let many = vec![serde_json::Value::from("NVIDIA H100"); 70_000];
                v["captures"][0]["gpu_models"] = many.into();
            }),
        ),
        (
            "advice.mean_step",
            Box::new(|v| v["advice"]["mean_step"] = (-9_223_372_036_854_775_807i64).into()),
        ),
        (
            "advice.causes[0].per_step",
            Box::new(|v| v["advice"]["causes"][0]["per_step"] = (-1).into()),
        ),
        (
            "advice.causes[0].share",
            Box::new(|v| v["advice"]["causes"][0]["share"] = 7.5.into()),
        ),
        (
            "advice.steps",
            Box::new(|v| v["advice"]["steps"] = (-3).into()),
        ),
    ];
    for (field, mutate) in cases {
        let mut v = good.clone();
        mutate(&mut v);
        let path = tmp.path().join("crafted.report.json");
        std::fs::write(&path, report_text(&v)).expect("write");
        let out = tmp.path().join("cmp");
        let o = compare(&[&path, &s, Path::new("--out"), &out]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{field}: {stderr}");
        assert!(stderr.contains(field), "{field}: {stderr}");
        assert!(!out.exists(), "{field}: nothing is written");
    }
    // The report as investigate wrote it still compares.
    let path = tmp.path().join("good.report.json");
    std::fs::write(&path, report_text(&good)).expect("write");
    let o = compare(&[&path, &s, Path::new("--json")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A report.json's text from its value, `"schema"` first as investigate writes it (how
/// compare tells a report from a trace).
fn report_text(v: &serde_json::Value) -> String {
    let mut v = v.clone();
    let schema = v
        .as_object_mut()
        .and_then(|o| o.remove("schema"))
        .expect("a schema");
    let rest = serde_json::to_string(&v).expect("json");
    format!("{{\"schema\": {schema}, {}", &rest[1..])
}

/// A side of more capture files than compare holds (1,024) is refused before it is
/// loaded: exit 2 naming the side, its count and the limit, nothing written. (10,000
/// tiny ranks passed 8 GiB: a side's samples grow with the square of its ranks.)
#[test]
fn a_side_of_too_many_ranks_is_refused_before_loading() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let ranks = tmp.path().join("ranks");
    std::fs::create_dir(&ranks).expect("mkdir");
    let text = std::fs::read(sample()).expect("read");
    for r in 0..1025 {
        std::fs::write(ranks.join(format!("rank{r}.pt.trace.json")), &text).expect("write");
    }
    let out = tmp.path().join("cmp");
    let start = std::time::Instant::now();
    let o = compare(&[&sample(), &ranks, Path::new("--out"), &out]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("after") && stderr.contains("1025 capture files"),
        "{stderr}"
    );
    assert!(stderr.contains("at most 1024"), "{stderr}");
    assert!(!out.exists());
    // Refused from the listing: loading 1,025 ranks takes seconds, a listing milliseconds.
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
    // At the limit the side is read.
    std::fs::remove_file(ranks.join("rank1024.pt.trace.json")).expect("rm");
    let o = compare(&[&sample(), &ranks, Path::new("--json")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// `compare A A`, `compare A ./dir/../A` and two copies of one file say that both sides
/// are the same capture; two different captures do not.
#[test]
fn the_same_capture_on_both_sides_is_said() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let a = tmp.path().join("a.pt.trace.json");
    let b = tmp.path().join("b.pt.trace.json");
    std::fs::copy(sample(), &a).expect("copy");
    std::fs::copy(sample(), &b).expect("copy");
    let dotted = tmp.path().join("x/../a.pt.trace.json");
    std::fs::create_dir(tmp.path().join("x")).expect("mkdir");
    for (before, after) in [(&a, &a), (&a, &dotted), (&a, &b)] {
        let o = compare(&[before, after, Path::new("--json")]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{stderr}");
        assert!(stderr.contains("the same capture"), "{stderr}");
    }
    // One byte differs: not the same capture.
    let mut text = std::fs::read(&b).expect("read");
    let last = text.iter().rposition(|&c| c == b'}').expect("a brace");
    text.insert(last + 1, b'\n');
    std::fs::write(&b, text).expect("write");
    let o = compare(&[&a, &b, Path::new("--json")]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(!stderr.contains("the same capture"), "{stderr}");
}
