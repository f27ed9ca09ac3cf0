//! Watchdog of issue 45 (finding 6, item 3): the kernel rows share their names instead of
//! copying them. A synthetic Nsight Systems export whose kernels all carry one name at the
//! name limit (64 KiB) runs under a stated peak resident set.
//!
//! The budget. `kernels.csv` itself holds the name once per kernel (the file is built in
//! memory before it is written), so the run needs at least `KERNELS × 64 KiB` (256 MiB
//! here) whatever the rows do. Rows that copy the name hold a second `KERNELS × 64 KiB`;
//! rows that share it add one 64 KiB name. Measured (debug build, session 32): 522 MB
//! peak with the rows copying the name, 266 MB sharing it. The budget, 400 MB, lies
//! between the two.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use test_support::run_measured;

const KERNELS: i64 = 4_000;
const NAME_BYTES: usize = 64 * 1024;
const DEADLINE: Duration = Duration::from_secs(120);
const BUDGET_KIB: u64 = 400 * 1000;

/// An Nsight Systems export with `kernels` launches of one kernel named `name` (stored
/// once in `StringIds`, as nsys stores it).
fn nsys_export(path: &Path, kernels: i64, name: &str) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(include_str!("../../../../testdata/nsys/export_schema.sql"))
        .unwrap();
    conn.execute_batch("BEGIN").unwrap();
    conn.execute("INSERT INTO StringIds VALUES (1, ?1)", [name])
        .unwrap();
    conn.execute_batch(&format!(
        "INSERT INTO StringIds VALUES (2, 'cudaLaunchKernel_v7000');
         WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {kernels} - 1)
         INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME
           SELECT i * 100, i * 100 + 10, 0, (1 << 48) | (7 << 24) | 7, i, 2, 0, NULL FROM n;
         INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL
           SELECT start + 20, start + 50, 0, 1, 7, correlationId, globalTid & ~16777215,
                  1, 1, NULL, 32, 128, 256, NULL, NULL FROM CUPTI_ACTIVITY_KIND_RUNTIME;
         COMMIT;"
    ))
    .unwrap();
}

#[test]
fn kernels_sharing_one_long_name_stay_under_the_memory_budget() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("long-name.sqlite");
    let name = "k".repeat(NAME_BYTES);
    nsys_export(&input, KERNELS, &name);
    let out = dir.path().join("attr");
    let args: Vec<OsString> = vec![
        input.as_os_str().to_owned(),
        "--out".into(),
        out.as_os_str().to_owned(),
    ];
    let m = run_measured(
        env!("CARGO_BIN_EXE_attribute-kernels"),
        &args,
        &[],
        DEADLINE,
    );
    eprintln!(
        "{KERNELS} kernels named {NAME_BYTES} bytes: exit {:?} in {:.2} s, peak {} KiB",
        m.code,
        m.elapsed.as_secs_f64(),
        m.peak_kib
    );
    assert!(!m.timed_out, "still running after {DEADLINE:?}");
    assert_eq!(m.code, Some(0), "{m:?}");
    assert!(m.peak_kib > 0, "no peak measured");
    assert!(
        m.peak_kib < BUDGET_KIB,
        "peak {} KiB, budget {BUDGET_KIB} KiB",
        m.peak_kib
    );
    // The run attributed every kernel under that name (not a cut or empty one).
    let text = std::fs::read_to_string(out.join("kernels.csv")).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let column = reader
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "kernel name")
        .expect("a kernel name column");
    let mut rows = 0;
    for record in reader.records() {
        assert_eq!(record.unwrap().get(column), Some(name.as_str()));
        rows += 1;
    }
    assert_eq!(rows, KERNELS);
}
