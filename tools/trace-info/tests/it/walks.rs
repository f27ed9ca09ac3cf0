//! Issue 45, finding 10: N symbolic links to `.` inside a capture directory cost about N⁵
//! directory reads (16 links took 6 s, 30 never finished). Directory walks (the loader's
//! search, the output rules' walk of the inputs) now enter each directory once, by
//! (device, inode). The stated budget: 30 links, done within 10 s under 512 MB.

use std::ffi::OsString;
use std::time::Duration;

use test_support::{run_measured, workspace_root};

#[cfg(unix)]
#[test]
fn links_to_the_capture_directory_itself_are_walked_once() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let run = tmp.path().join("run");
    std::fs::create_dir(&run).expect("mkdir");
    std::fs::copy(
        workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json"),
        run.join("rank0.pt.trace.json"),
    )
    .expect("copy");
    for i in 0..30 {
        std::os::unix::fs::symlink(".", run.join(format!("loop{i}"))).expect("link");
    }
    let out = tmp.path().join("out.json");
    let args: Vec<OsString> = vec![
        run.clone().into_os_string(),
        "--to-chrome-trace".into(),
        out.clone().into_os_string(),
    ];
    let m = run_measured(
        env!("CARGO_BIN_EXE_trace-info"),
        &args,
        &[],
        Duration::from_secs(60),
    );
    eprintln!(
        "30 links to .: exit {:?} in {:.2} s, peak {} KiB",
        m.code,
        m.elapsed.as_secs_f64(),
        m.peak_kib
    );
    assert!(!m.timed_out, "{m:?}");
    assert_eq!(m.code, Some(0), "{}", m.stderr);
    assert!(m.busy() < Duration::from_secs(10), "{m:?}");
    assert!(m.peak_kib < 512 * 1000, "{m:?}");
    assert!(out.is_file());
}
