//! Malformed input of each format: an `Err` naming the file and where in it, never a panic.

use std::path::Path;

use rocprof_reader::{Error, Kind, detect, load, load_as};

fn err_text(path: &Path) -> String {
    let err = load(path).expect_err("malformed input is an error");
    let text = err.to_string();
    assert!(
        text.contains(&path.display().to_string()),
        "the error names the file: {text}"
    );
    text
}

#[test]
fn truncated_protobuf_names_the_packet_and_byte() {
    let dir = crate::scratch();
    let whole = crate::perfetto::rocprof_like_trace();
    let path = dir.path().join("cut.pftrace");
    std::fs::write(&path, &whole[..whole.len() - 3]).unwrap();
    let err = load(&path).unwrap_err();
    let Error::Protobuf { offset, packet, .. } = &err else {
        panic!("not a protobuf error: {err}");
    };
    assert!(packet.is_some() && *offset > 0, "{err}");
    let text = err_text(&path);
    assert!(
        text.contains("truncated") && text.contains("byte"),
        "{text}"
    );
}

#[test]
fn wrong_varints_name_the_byte() {
    let dir = crate::scratch();
    // A packet key, then a length varint of 11 continuation bytes.
    let path = dir.path().join("varint.pftrace");
    let mut bytes = vec![0x0a];
    bytes.extend([0xff; 11]);
    std::fs::write(&path, &bytes).unwrap();
    let text = err_text(&path);
    assert!(
        text.contains("byte 0 (packet 0)") && text.contains("varint"),
        "{text}"
    );
    // A well-framed packet whose inside holds a bad varint: prost's error, with the packet.
    let path = dir.path().join("inner.pftrace");
    let mut bytes = crate::perfetto::rocprof_like_trace();
    let at = bytes.len();
    bytes.extend([0x0a, 0x03, 0x40, 0xff, 0xff]); // field 8 (timestamp), varint cut short
    std::fs::write(&path, &bytes).unwrap();
    let text = err_text(&path);
    assert!(text.contains(&format!("byte {}", at + 2)), "{text}");
    assert!(text.contains("TracePacket"), "{text}");
}

#[test]
fn csv_with_a_missing_column_or_bad_cell_names_line_and_column() {
    let dir = crate::scratch();
    let path = dir.path().join("run_kernel_trace.csv");
    std::fs::write(
        &path,
        "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Kernel_Name\",\"Start_Timestamp\",\"End_Timestamp\"\n\
         \"KERNEL_DISPATCH\",1,1,\"k\",10,20\n",
    )
    .unwrap();
    let text = err_text(&path);
    assert!(text.contains("line 1, column Correlation_Id"), "{text}");

    std::fs::write(
        &path,
        "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n\
         \"KERNEL_DISPATCH\",1,1,\"k\",5,10,20\n\
         \"KERNEL_DISPATCH\",1,1,\"k\",6,ten,20\n",
    )
    .unwrap();
    let text = err_text(&path);
    assert!(text.contains("line 3, column Start_Timestamp"), "{text}");

    std::fs::write(
        &path,
        "\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n\
         \"HIP_RUNTIME_API\",\"hipMalloc\",1,1,1,10\n",
    )
    .unwrap();
    let text = err_text(&path);
    assert!(
        text.contains("line 2") && text.contains("6 fields"),
        "{text}"
    );

    // rocprof v1: the same for results.csv.
    let path = dir.path().join("results.csv");
    std::fs::write(
        &path,
        "\"KernelName\",\"BeginNs\",\"EndNs\"\n\"k\",1,five\n",
    )
    .unwrap();
    let text = err_text(&path);
    assert!(text.contains("line 2, column EndNs"), "{text}");
}

#[test]
fn sqlite_of_another_schema_names_the_missing_table() {
    let dir = crate::scratch();
    let path = dir.path().join("other.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE rocpd_string (id INTEGER, string TEXT); CREATE TABLE notes (x);",
    )
    .unwrap();
    drop(conn);
    assert_eq!(
        detect(&path),
        Some(Kind::Rocpd),
        "a rocpd table makes it a (broken) rocpd database"
    );
    let text = err_text(&path);
    assert!(text.contains("table rocpd_info_agent"), "{text}");

    // No rocpd table and no KERN: not ours.
    let path = dir.path().join("plain.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("CREATE TABLE notes (x);").unwrap();
    drop(conn);
    assert_eq!(detect(&path), None);
    let text = err_text(&path);
    assert!(text.contains("not a ROCm profiler capture"), "{text}");
    // Read as rocpd anyway (a loader that was told): the first missing table.
    let err = load_as(&path, Kind::Rocpd).unwrap_err().to_string();
    assert!(
        err.contains("table rocpd_string") && err.contains("notes"),
        "{err}"
    );

    // A v1 KERN table without the columns v1 writes.
    let path = dir.path().join("results.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("CREATE TABLE KERN (\"KernelName\" TEXT);")
        .unwrap();
    drop(conn);
    assert_eq!(detect(&path), Some(Kind::V1Db));
    let text = err_text(&path);
    assert!(
        text.contains("table KERN") && text.contains("gpu-id"),
        "{text}"
    );

    // A rocpd row whose timestamp is missing names the table and row.
    let path = dir.path().join("gap.db");
    let conn = crate::rocpd::create_schema(&path);
    crate::rocpd::fill(&conn);
    conn.execute_batch("DELETE FROM rocpd_timestamp_0198a1b2c3d4 WHERE id = 10;")
        .unwrap();
    drop(conn);
    let text = err_text(&path);
    assert!(text.contains("table rocpd_kernel_dispatch row 1"), "{text}");
    assert!(text.contains("end_id"), "{text}");

    // Not a database at all, under a SQLite header.
    let path = dir.path().join("garbage.db");
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.extend([0xAB; 600]);
    std::fs::write(&path, &bytes).unwrap();
    let err = load_as(&path, Kind::Rocpd).unwrap_err().to_string();
    assert!(err.contains("garbage.db") && err.contains("table"), "{err}");
}

/// Every prefix of a trace, and every byte of it flipped, loads or fails without a panic.
#[test]
fn damaged_traces_never_panic() {
    let dir = crate::scratch();
    let whole = crate::perfetto::rocprof_like_trace();
    let path = dir.path().join("damaged.pftrace");
    let (mut ok, mut errors) = (0, 0);
    let mut check = |bytes: &[u8]| {
        std::fs::write(&path, bytes).unwrap();
        match load_as(&path, Kind::Perfetto) {
            Ok(_) => ok += 1,
            Err(err) => {
                assert!(err.to_string().contains("damaged.pftrace"), "{err}");
                errors += 1;
            }
        }
    };
    for len in 0..whole.len() {
        check(&whole[..len]);
    }
    for at in 0..whole.len() {
        let mut bytes = whole.clone();
        bytes[at] ^= 0xff;
        check(&bytes);
    }
    assert!(errors > 0 && ok > 0, "{ok} loaded, {errors} errors");

    // CSV: every prefix of a kernel trace.
    let text = "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n\
                \"KERNEL_DISPATCH\",\"Agent 1\",1,\"k, with a comma\",5,10,20\n";
    let path = dir.path().join("x_kernel_trace.csv");
    for len in 0..text.len() {
        std::fs::write(&path, &text[..len]).unwrap();
        let _ = load_as(&path, Kind::V3Csv);
    }
}
