//! The committed fixtures (`testdata/rocprof/`, made by `cargo xtask fixtures`): each file
//! under `err/` gives its error, naming the file and the byte and packet, CSV line and
//! column, or table; each capture under `ok/` reads as its description says.

use std::path::PathBuf;

use rocprof_reader::{Kind, detect, load};
use trace_model::{ActivityKind, HostKind};

fn fixture(rel: &str) -> PathBuf {
    test_support::workspace_root()
        .join("testdata/rocprof")
        .join(rel)
}

/// The error of `err/NAME`, without the leading `PATH: ` (which must be there).
fn error_of(name: &str) -> String {
    let path = fixture(&format!("err/{name}"));
    let err = match load(&path) {
        Ok(loaded) => panic!("{name}: read {} captures", loaded.len()),
        Err(e) => e.to_string(),
    };
    let prefix = format!("{}: ", path.display());
    err.strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{name}: the error does not begin with the path: {err}"))
        .to_owned()
}

/// Every `err/` fixture with its format and message: a new fixture without a line here
/// fails.
const EXPECTED: &[(&str, Kind, &str)] = &[
    (
        "bad_number_kernel_trace.csv",
        Kind::V3Csv,
        "line 3, column Start_Timestamp: `15000.5` is not a non-negative integer",
    ),
    (
        "bad_varint.pftrace",
        Kind::Perfetto,
        "byte 258 (packet 3): varint longer than 64 bits",
    ),
    (
        "missing_column_kernel_trace.csv",
        Kind::V3Csv,
        "line 1, column Correlation_Id: the header lacks column `Correlation_Id` (it has: Kind, \
         Agent_Id, Queue_Id, Kernel_Name, Start_Timestamp, End_Timestamp)",
    ),
    (
        "other_schema.db",
        Kind::Rocpd,
        "table rocpd_info_agent: not in the database, so it is not a rocpd database (schema \
         version 3); it has: rocpd_api, rocpd_api_ops, rocpd_copyapi, rocpd_kernelapi, \
         rocpd_metadata, rocpd_op, rocpd_string, sqlite_sequence",
    ),
    (
        "truncated.pftrace",
        Kind::Perfetto,
        "byte 788 (packet 17): truncated: field 1 says 14 bytes, 1 remain in the file",
    ),
];

#[test]
fn err_fixtures_give_their_errors() {
    let mut wrong = Vec::new();
    for (name, kind, expect) in EXPECTED {
        assert_eq!(
            detect(&fixture(&format!("err/{name}"))),
            Some(*kind),
            "{name}"
        );
        let got = error_of(name);
        if got != *expect {
            wrong.push(format!("{name}: {got}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let mut on_disk: Vec<String> = std::fs::read_dir(fixture("err"))
        .expect("testdata/rocprof/err is readable")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".md"))
        .collect();
    on_disk.sort();
    let listed: Vec<&str> = EXPECTED.iter().map(|(name, _, _)| *name).collect();
    assert_eq!(
        on_disk, listed,
        "every err fixture has its expected error here"
    );
}

/// Each valid capture: its format, then (kernels, copies, host API calls, linked
/// activities), as its `.md` or README says.
#[test]
fn ok_captures_read_as_described() {
    let check = |rel: &str, kind: Kind, expect: (usize, usize, usize, usize)| {
        let path = fixture(rel);
        assert_eq!(detect(&path), Some(kind), "{rel}");
        let loaded = load(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let (mut kernels, mut copies, mut api, mut linked) = (0, 0, 0, 0);
        for l in &loaded {
            let c = &l.capture;
            kernels += c
                .activities()
                .iter()
                .filter(|a| a.kind == ActivityKind::Kernel)
                .count();
            copies += c
                .activities()
                .iter()
                .filter(|a| a.kind == ActivityKind::Memcpy)
                .count();
            linked += c
                .activities()
                .iter()
                .filter(|a| a.launch().is_some())
                .count();
            api += c
                .host_events()
                .iter()
                .filter(|e| matches!(e.kind, HostKind::Launch | HostKind::Runtime))
                .count();
        }
        assert_eq!((kernels, copies, api, linked), expect, "{rel}");
    };
    check("ok/small.pftrace", Kind::Perfetto, (2, 1, 3, 3));
    check("ok/csv", Kind::V3Csv, (2, 1, 4, 3));
    check("ok/rocpd/300_results.db", Kind::Rocpd, (2, 0, 2, 2));
    check("ok/v1/results.csv", Kind::V1Csv, (3, 0, 0, 0));
    check("ok/v1/results.db", Kind::V1Db, (3, 0, 0, 0));
}
