//! Issue 45, finding 13: attribute-kernels with `--overwrite`, interrupted near the end,
//! left a staged directory in 6 of 70 trials (cleanup raced with files still being
//! written). Here SIGINT, SIGTERM and SIGKILL at points spread over a run and packed near
//! its end: the output directory is the old one or the new one, whole; after SIGINT and
//! SIGTERM nothing staged is left, and what SIGKILL left is removed by the next run.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn command(input: &Path, out: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_attribute-kernels"));
    cmd.arg(input).arg("--out").arg(out).arg("--overwrite");
    cmd
}

#[test]
fn interrupts_near_the_end_leave_nothing_staged() {
    use std::os::unix::process::ExitStatusExt;
    let tmp = tempfile::tempdir().expect("tempdir");
    let big = tmp.path().join("big.pt.trace.json");
    test_support::write_synthetic_trace(&big, 20_000_000);
    let small =
        test_support::workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json");
    let out = tmp.path().join("attributed");
    let start = Instant::now();
    let o = command(&big, &out).output().expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let whole = start.elapsed();
    let new = test_support::snapshot(&out);
    assert!(command(&small, &out).status().expect("runs").success());
    let old = test_support::snapshot(&out);
    assert_ne!(old, new);
    let mut trials = 0;
    for signal in ["INT", "TERM", "KILL"] {
        for percent in [10u32, 50, 80, 88, 92, 95, 97, 99, 100, 102, 105, 110] {
            assert!(command(&small, &out).status().expect("runs").success());
            let status =
                test_support::run_interrupted(command(&big, &out), whole * percent / 100, signal);
            let cell = format!("SIG{signal} after {percent}% of {whole:?}: {status:?}");
            let now = test_support::snapshot(&out);
            assert!(
                now == new || now == old,
                "{cell}: the output is neither the old one nor the new one"
            );
            if signal == "KILL" {
                assert!(command(&small, &out).status().expect("runs").success());
                let left = test_support::staged_left(tmp.path());
                assert!(left.is_empty(), "{cell}: left after the next run: {left:?}");
            } else {
                let left = test_support::staged_left(tmp.path());
                assert!(left.is_empty(), "{cell}: staged left: {left:?}");
                assert!(
                    status.success() || status.signal().is_some(),
                    "{cell}: ended otherwise"
                );
            }
            trials += 1;
        }
    }
    eprintln!("{trials} interrupted runs of {whole:?}: nothing staged left");
}
