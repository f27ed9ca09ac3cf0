//! `--process` (`load::set_process`) on an Nsight Systems export of two processes: made
//! from the shared `nvfuser-h200-matmul` export by copying every kernel and runtime call
//! into a second process. Its own test binary, since the selector is process-wide.

use std::path::{Path, PathBuf};

use load::Error;

/// The second process's pid and name.
const OTHER_PID: i64 = 40000;
const OTHER_NAME: &str = "/opt/bin/other_job";

/// A copy of the export at `src` in `dir` with every kernel and runtime call also in a
/// second process (`OTHER_PID`, named `OTHER_NAME` in `PROCESSES`).
fn two_process_export(src: &Path, dir: &Path) -> PathBuf {
    let path = dir.join("two-processes.sqlite");
    std::fs::copy(src, &path).expect("copies the export");
    let db = rusqlite::Connection::open(&path).expect("opens the copy");
    let pid_bits = 0xFF_FFFFi64 << 24;
    let tid_bits = 0xFF_FFFFi64;
    db.execute_batch(&format!(
        "CREATE TEMP TABLE k AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL;
         UPDATE k SET globalPid = (globalPid & ~{pid_bits}) | ({OTHER_PID} << 24);
         INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM k;
         CREATE TEMP TABLE r AS SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME;
         UPDATE r SET globalTid = (globalTid & ~({pid_bits} | {tid_bits})) | ({OTHER_PID} << 24) | {OTHER_PID};
         INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT * FROM r;
         INSERT INTO PROCESSES (globalPid, pid, name)
             SELECT (globalPid & ~{pid_bits}) | ({OTHER_PID} << 24), {OTHER_PID}, '{OTHER_NAME}'
             FROM PROCESSES WHERE pid = 30156;"
    ))
    .expect("adds the second process");
    path
}

fn kernels(loaded: &[load::Loaded]) -> Vec<usize> {
    loaded
        .iter()
        .map(|l| {
            let activities = l.capture.activities().iter();
            activities
                .filter(|a| a.kind == trace_model::ActivityKind::Kernel)
                .count()
        })
        .collect()
}

#[test]
fn process_chooses_one_process_of_an_export_and_names_the_others() {
    let Some(traces) = test_support::traces_dir("--process on a two-process export") else {
        return;
    };
    let src = traces.join("nsys/nvfuser-h200-matmul/report1.sqlite");
    let dir = tempfile::tempdir().unwrap();
    let path = two_process_export(&src, dir.path());

    // Without --process: two captures, and asking for one names them and the flag.
    load::set_process("");
    let all = load::load(&path).expect("reads");
    assert_eq!(kernels(&all), [19, 19]);
    let err = load::load_single(&path).expect_err("two processes");
    let text = err.to_string();
    assert!(
        matches!(err, Error::SeveralCaptures { count: 2, .. }),
        "{err:?}"
    );
    for want in ["pid 30156", "pid 40000", "--process PID|NAME"] {
        assert!(text.contains(want), "{want}: {text}");
    }

    // By pid, by whole name, by the name's last component.
    for selector in ["40000", OTHER_NAME, "other_job"] {
        load::set_process(selector);
        let one = load::load_single(&path).unwrap_or_else(|e| panic!("{selector}: {e}"));
        let pid = one.capture.threads().first().map(|t| t.pid);
        assert_eq!(pid, Some(OTHER_PID), "{selector}");
    }
    load::set_process("test_matmul");
    let one = load::load_single(&path).expect("the nvFuser test");
    assert_eq!(one.capture.threads().first().map(|t| t.pid), Some(30156));

    // A process the file does not hold: the error lists those it does.
    load::set_process("12345");
    let err = load::load(&path).expect_err("no such process");
    let text = err.to_string();
    assert!(matches!(err, Error::NoSuchProcess { .. }), "{err:?}");
    assert!(text.starts_with(&path.display().to_string()), "{text}");
    for want in [
        "no process 12345",
        "pid 30156 (./bin/test_matmul)",
        "pid 40000 (/opt/bin/other_job)",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    load::set_process("");
}
