//! Unusable input: each gives an error naming the file and the table (and row and column
//! where there is one); nothing panics.

use std::path::Path;

use nsys_reader::{Config, Error, is_nsys_export, load};

use crate::export::Export;

fn load_err(path: &Path) -> Error {
    match load(path, &Config::default()) {
        Ok(processes) => panic!("{}: read {} processes", path.display(), processes.len()),
        Err(e) => e,
    }
}

/// An export with enough kernels that its table spans many pages.
fn big_export(dir: &Path, name: &str) -> Export {
    let mut x = Export::create(dir, name);
    x.conn.execute_batch("BEGIN").unwrap();
    for i in 0..3000 {
        x.runtime(i * 100, i * 100 + 10, 7, 7, i, "cudaLaunchKernel_v7000");
        x.kernel(i * 100 + 20, i * 100 + 50, 0, 7, i, 7, "k", None);
    }
    x.conn.execute_batch("COMMIT").unwrap();
    x
}

#[test]
fn truncated_file() {
    let dir = tempfile::tempdir().unwrap();
    let x = big_export(dir.path(), "whole.sqlite");
    let whole = std::fs::read(&x.path).unwrap();
    drop(x);
    assert!(whole.len() > 100_000, "{} bytes", whole.len());
    let mut errors = 0;
    for keep in [whole.len() / 2, whole.len() / 5, 4096 + 100, 10] {
        let path = dir.path().join(format!("cut-{keep}.sqlite"));
        std::fs::write(&path, &whole[..keep]).unwrap();
        let err = load_err(&path);
        let text = err.to_string();
        assert!(text.contains(&format!("cut-{keep}.sqlite")), "{text}");
        match &err {
            // The header's page count says how long the file was.
            Error::Truncated { size, expected, .. } => {
                assert_eq!((*size, *expected), (keep as u64, whole.len() as u64));
                assert!(text.contains(&format!("ends at byte {keep}")), "{text}");
                errors += 1;
            }
            // 10 bytes hold no SQLite header.
            Error::NotSqlite { .. } => assert_eq!(keep, 10),
            other => panic!("{keep} bytes: {other:?}"),
        }
    }
    assert_eq!(errors, 3);
}

#[test]
fn a_sqlite_file_that_is_not_an_export() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shop.sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE orders (id INTEGER, item TEXT); INSERT INTO orders VALUES (1, 'x');",
    )
    .unwrap();
    drop(conn);
    assert!(!is_nsys_export(&path));
    let err = load_err(&path);
    assert!(matches!(err, Error::NotAnExport { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("shop.sqlite") && text.contains("StringIds"),
        "{text}"
    );
}

#[test]
fn text_where_an_integer_belongs() {
    let dir = tempfile::tempdir().unwrap();
    let mut x = Export::create(dir.path(), "typed.sqlite");
    x.runtime(10, 20, 7, 7, 1, "cudaLaunchKernel");
    x.kernel(30, 40, 0, 7, 1, 7, "k", None);
    x.kernel(50, 60, 0, 7, 1, 7, "k", None);
    x.conn
        .execute_batch("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'soon' WHERE rowid = 2")
        .unwrap();
    assert!(is_nsys_export(&x.path));
    let err = load_err(&x.path);
    let text = err.to_string();
    assert_eq!(
        text,
        format!(
            "{}: table CUPTI_ACTIVITY_KIND_KERNEL, row 2, column start: text \"soon\" where an integer was expected",
            x.path.display()
        )
    );
    // A NULL where nsys always writes a value, in another table.
    x.conn
        .execute_batch(
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 50 WHERE rowid = 2;
             UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = NULL",
        )
        .unwrap();
    let text = load_err(&x.path).to_string();
    assert!(
        text.ends_with("table CUPTI_ACTIVITY_KIND_RUNTIME, row 1, column globalTid: NULL where an integer was expected"),
        "{text}"
    );
}

#[test]
fn a_table_without_a_column_it_needs() {
    let dir = tempfile::tempdir().unwrap();
    let x = Export::create(dir.path(), "narrow.sqlite");
    x.conn
        .execute_batch(
            "DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY;
             CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, deviceId INTEGER, streamId INTEGER);
             INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (1, 0, 7);",
        )
        .unwrap();
    let err = load_err(&x.path);
    assert_eq!(
        err.to_string(),
        format!(
            "{}: table CUPTI_ACTIVITY_KIND_MEMCPY has no column end",
            x.path.display()
        )
    );
}

#[test]
fn not_sqlite_at_all() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [
        ("empty.sqlite", &b""[..]),
        (
            "text.sqlite",
            b"{\"traceEvents\": []} and more than sixteen bytes",
        ),
        ("zeros.sqlite", &[0u8; 4096][..]),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        assert!(!is_nsys_export(&path));
        let err = load_err(&path);
        assert!(matches!(err, Error::NotSqlite { .. }), "{name}: {err:?}");
        assert!(err.to_string().contains(name));
    }
    let missing = dir.path().join("missing.sqlite");
    assert!(!is_nsys_export(&missing));
    let err = load_err(&missing);
    assert!(matches!(err, Error::Io { .. }) && err.to_string().contains("missing.sqlite"));
}

#[test]
fn reports_need_an_export() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["run.nsys-rep", "old.qdrep"] {
        let path = dir.path().join(name);
        std::fs::write(&path, b"not ours to read").unwrap();
        assert!(!is_nsys_export(&path));
        let text = load_err(&path).to_string();
        assert!(
            text.contains(&format!("nsys export --type sqlite {}", path.display())),
            "{text}"
        );
    }
}

/// Damaged copies of a small export (bytes flipped, overwritten and cut, at deterministic
/// places): each reads or fails with an error naming the file; none panics.
#[test]
fn damaged_exports_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let mut x = Export::create(dir.path(), "small.sqlite");
    x.gpu(0, "NVIDIA H200");
    x.thread_name(7, 7, "main", 1);
    for i in 0..40 {
        x.runtime(i * 100, i * 100 + 10, 7, 7, i, "cudaLaunchKernel_v7000");
        x.kernel(i * 100 + 20, i * 100 + 50, 0, 7, i, 7, "k", None);
        x.nvtx(
            59,
            i * 100,
            Some(i * 100 + 90),
            7,
            7,
            &format!("ProfilerStep#{i}"),
            i % 2 == 0,
            0,
        );
    }
    x.memcpy(9000, 9100, 0, 7, 3, 7, 64, 1);
    drop(x.conn);
    let whole = std::fs::read(&x.path).unwrap();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut read, mut failed) = (0, 0);
    for round in 0..300 {
        let mut bytes = whole.clone();
        match round % 3 {
            0 => {
                for _ in 0..1 + next() % 8 {
                    let at = (next() % bytes.len() as u64) as usize;
                    bytes[at] ^= 1 << (next() % 8);
                }
            }
            1 => {
                let at = (next() % bytes.len() as u64) as usize;
                let len = (1 + next() % 64) as usize;
                let fill = [0x00, 0xff, 0x7f, 0x80][(next() % 4) as usize];
                for b in bytes.iter_mut().skip(at).take(len) {
                    *b = fill;
                }
            }
            _ => bytes.truncate((next() % bytes.len() as u64) as usize),
        }
        let path = dir.path().join(format!("damaged-{round}.sqlite"));
        std::fs::write(&path, &bytes).unwrap();
        let res = std::panic::catch_unwind(|| load(&path, &Config::default()));
        match res {
            Ok(Ok(_)) => read += 1,
            Ok(Err(e)) => {
                assert!(
                    e.to_string().contains(&format!("damaged-{round}.sqlite")),
                    "{e}"
                );
                failed += 1;
            }
            Err(_) => panic!("round {round}: load panicked on {}", path.display()),
        }
        std::fs::remove_file(&path).unwrap();
    }
    eprintln!("damaged exports: {read} read, {failed} refused");
    assert!(failed > 0 && read + failed == 300);
}
