//! Issue 45, finding 11: `ProfilerStep` annotations each nested in the one before took
//! quadratic time (200,000 took 9.5 s, 400,000 took 33 s in the release build). Here both
//! sizes run end to end under a watchdog: the stated budget is 30 s of busy time (the
//! smaller of wall and CPU, debug build) and 512 MB peak for 400,000 steps, and doubling the
//! steps may at most triple the time (quadratic work quadruples it).

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// A Kineto trace of `n` `ProfilerStep#i` annotations, step `i` spanning `[i, 2n - i)` µs
/// (each inside the one before), and one launched kernel inside the innermost step.
fn nested_steps(path: &Path, n: u64) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    write!(out, "{{\"schemaVersion\":1,\"traceEvents\":[").expect("write");
    for i in 0..n {
        write!(
            out,
            "{{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#{i}\",\
             \"pid\":1,\"tid\":1,\"ts\":{i},\"dur\":{}}},",
            2 * (n - i)
        )
        .expect("write");
    }
    write!(
        out,
        "{{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\
         \"tid\":1,\"ts\":{n},\"dur\":0.5,\"args\":{{\"correlation\":1}}}},\
         {{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":{n}.6,\
         \"dur\":0.3,\"args\":{{\"correlation\":1,\"device\":0,\"stream\":7}}}}]}}"
    )
    .expect("write");
    out.flush().expect("flush");
}

/// investigate on `n` nested steps: its busy time, after checking exit 0 and the budgets.
fn run(n: u64) -> Duration {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("nested.pt.trace.json");
    nested_steps(&input, n);
    let out = dir.path().join("report");
    let args: Vec<OsString> = vec![
        input.into_os_string(),
        "--out".into(),
        out.clone().into_os_string(),
    ];
    let m = test_support::run_measured(
        env!("CARGO_BIN_EXE_investigate"),
        &args,
        &[],
        Duration::from_secs(120),
    );
    eprintln!(
        "{n} nested steps: exit {:?}, {:.2} s wall, {:.2} s CPU, peak {} KiB",
        m.code,
        m.elapsed.as_secs_f64(),
        m.cpu.as_secs_f64(),
        m.peak_kib
    );
    assert!(!m.timed_out, "{m:?}");
    assert_eq!(m.code, Some(0), "{}", m.stderr);
    assert!(out.join("report.md").is_file());
    assert!(m.peak_kib < 512 * 1000, "peak {} KiB", m.peak_kib);
    m.busy()
}

#[test]
fn nested_profiler_steps_take_n_log_n_time() {
    let half = run(200_000);
    let full = run(400_000);
    assert!(full < Duration::from_secs(30), "{full:?}");
    // Quadratic work would take four times as long; half a second of slack for start-up.
    assert!(
        full.as_secs_f64() < 3.0 * half.as_secs_f64() + 0.5,
        "200k: {half:?}, 400k: {full:?}"
    );
}
