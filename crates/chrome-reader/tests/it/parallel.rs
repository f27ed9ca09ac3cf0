//! The parallel build (events parsed on worker threads, merged in file order) gives the
//! sequential build's capture, or its error, on every fixture and every real trace.

use std::fmt::Write as _;
use std::hash::Hasher;
use std::path::{Path, PathBuf};

use chrome_reader::LoadConfig;

use crate::{traces_dir, workspace_root};

/// A digest of everything in a capture: its whole `Debug` text (strings, devices, streams,
/// threads, activities, host events, annotations, steps, metadata, diagnostics), hashed as
/// it is written so large captures need no large string.
fn digest(capture: &trace_model::Capture) -> (u64, usize) {
    struct Sink(std::collections::hash_map::DefaultHasher, usize);
    impl std::fmt::Write for Sink {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0.write(s.as_bytes());
            self.1 += s.len();
            Ok(())
        }
    }
    let mut sink = Sink(std::collections::hash_map::DefaultHasher::new(), 0);
    write!(sink, "{capture:?}").expect("writing to a hasher cannot fail");
    (sink.0.finish(), sink.1)
}

/// What one load gave, comparable across thread counts: the capture's digest and
/// counts, or the error's text (which names the file and byte offset or event index) and
/// its `Debug` form (which holds every field).
fn outcome(abs: &Path, name: &Path, threads: usize) -> String {
    let input = chrome_reader::open(abs).unwrap_or_else(|e| panic!("{e}"));
    match chrome_reader::load_from_with(input, name, &LoadConfig::with_threads(threads)) {
        Ok(c) => format!(
            "ok {:?}: {} activities, {} host events, {} strings, {} steps, {} diagnostics",
            digest(&c),
            c.activities().len(),
            c.host_events().len(),
            c.strings().len(),
            c.steps().len(),
            c.diagnostics().iter().count()
        ),
        Err(e) => format!("error {e} / {e:?}"),
    }
}

/// Loads every file with 1 thread and with several, asserting the same outcome; returns
/// (files that loaded, files that failed).
fn check_same(files: &[(PathBuf, PathBuf)]) -> (usize, usize) {
    let (mut ok, mut failed) = (0, 0);
    for (abs, name) in files {
        let sequential = outcome(abs, name, 1);
        for threads in [2, 3, 8] {
            assert_eq!(
                outcome(abs, name, threads),
                sequential,
                "{} with {threads} threads",
                name.display()
            );
        }
        if sequential.starts_with("ok") {
            ok += 1;
        } else {
            failed += 1;
        }
    }
    (ok, failed)
}

#[test]
fn parallel_build_equals_sequential_on_fixtures() {
    let root = workspace_root();
    let mut ok_count = 0;
    let mut err_count = 0;
    for folder in ["ok", "odd", "err"] {
        let paths = test_support::json_files(&root.join("testdata/chrome").join(folder));
        let files: Vec<_> = paths
            .into_iter()
            .map(|abs| {
                let name = abs
                    .strip_prefix(&root)
                    .expect("under the root")
                    .to_path_buf();
                (abs, name)
            })
            .collect();
        let (ok, failed) = check_same(&files);
        if folder == "err" {
            assert_eq!(ok, 0, "every err fixture fails");
        }
        ok_count += ok;
        err_count += failed;
    }
    assert!(ok_count >= 30, "{ok_count} fixtures loaded");
    assert!(err_count >= 30, "{err_count} fixtures failed");
}

#[test]
fn parallel_build_equals_sequential_on_real_traces() {
    let Some(dir) = traces_dir("parallel_build_equals_sequential_on_real_traces") else {
        return;
    };
    let paths = test_support::json_files(&dir);
    let files: Vec<_> = paths.into_iter().map(|p| (p.clone(), p)).collect();
    let (ok, failed) = check_same(&files);
    // 77 files: 58 traces, and JSON that is no trace (XProf's stats tables, a reference
    // output), whose errors must agree too.
    assert!(ok >= 55, "{ok} real traces loaded");
    assert!(ok + failed >= 70, "{} files", ok + failed);
}

/// A trace of many batches (about 12 MB), with the thing that goes wrong, if any, far
/// into it, so that it lands in a late batch parsed while earlier ones still are.
fn synthetic(events: usize, bad: Option<(usize, &str)>) -> Vec<u8> {
    let mut s = String::from("{\"traceEvents\": [\n");
    for i in 0..events {
        if i > 0 {
            s.push_str(",\n");
        }
        match bad {
            Some((at, text)) if at == i => s.push_str(text),
            _ => write!(
                s,
                "{{\"ph\": \"X\", \"cat\": \"{}\", \"name\": \"op\\u00e9_{}\", \"pid\": {}, \"tid\": \"t{}\", \"ts\": {}.5, \"dur\": {}, \"args\": {{\"correlation\": {i}, \"stream\": 7, \"device\": 0}}}}",
                if i % 3 == 0 { "kernel" } else { "cuda_runtime" },
                i % 977,
                i % 5,
                i % 3,
                i * 10,
                if i % 101 == 0 { -1 } else { 4 }
            )
            .expect("writing to a String cannot fail"),
        }
    }
    s.push_str("\n], \"schemaVersion\": 1}\n");
    s.into_bytes()
}

fn load_bytes(bytes: &[u8], threads: usize) -> String {
    let name = Path::new("synthetic.json");
    match chrome_reader::load_from_with(bytes, name, &LoadConfig::with_threads(threads)) {
        Ok(c) => format!("ok {:?} {}", digest(&c), c.activities().len()),
        Err(e) => format!("error {e} / {e:?}"),
    }
}

#[test]
fn parallel_build_gives_the_sequential_error_deep_in_a_large_trace() {
    let cases = deep_cases();
    assert!(cases[0].len() > 10_000_000, "{} bytes", cases[0].len());
    for (k, case) in cases.iter().enumerate() {
        let sequential = load_bytes(case, 1);
        if k == 0 {
            assert!(sequential.starts_with("ok"), "{sequential}");
        } else {
            assert!(sequential.starts_with("error"), "case {k}: {sequential}");
        }
        for threads in [2, 5] {
            assert_eq!(
                load_bytes(case, threads),
                sequential,
                "case {k}, {threads} threads"
            );
        }
    }
}

/// A plain file is mapped (its chunks are slices of the map) and a pipe is read by the
/// chunk reader's thread: both give what the same bytes read from memory give, the
/// capture or the error with its byte offset or event index, deep in the file. (The pipe
/// is named by its `/proc/self/fd` path, which only Linux has.)
#[cfg(target_os = "linux")]
#[test]
fn a_mapped_file_and_a_pipe_give_the_streamed_capture_and_errors() {
    use std::io::Write as _;
    use std::os::fd::AsRawFd as _;

    let dir = std::env::temp_dir().join(format!("chrome-reader-mapped-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let mut offsets = 0;
    for (k, case) in deep_cases().iter().enumerate() {
        for threads in [1, 2] {
            let config = LoadConfig::with_threads(threads);
            let show = |res: Result<trace_model::Capture, chrome_reader::Error>| match res {
                Ok(c) => format!("ok {:?}", digest(&c)),
                Err(e) => format!("error {e} / {e:?}"),
            };
            let file = dir.join(format!("case{k}.json"));
            std::fs::write(&file, case).expect("writes the temporary file");
            let streamed = show(chrome_reader::load_from_with(&case[..], &file, &config));
            let mapped = show(chrome_reader::load_with(&file, &config));
            assert_eq!(mapped, streamed, "case {k}, {threads} threads, mapped");
            offsets += usize::from(streamed.contains("offset: "));

            // A pipe, opened by a path as `/dev/stdin` would be: not a regular file.
            let (reader, mut writer) = std::io::pipe().expect("a pipe");
            let pipe = PathBuf::from(format!("/proc/self/fd/{}", reader.as_raw_fd()));
            let piped = std::thread::scope(|scope| {
                scope.spawn(move || {
                    // A load that stops at an error closes the pipe early: a failed write.
                    let _ = writer.write_all(case);
                });
                let piped = show(chrome_reader::load_with(&pipe, &config));
                drop(reader);
                piped
            });
            let streamed = show(chrome_reader::load_from_with(&case[..], &pipe, &config));
            assert_eq!(piped, streamed, "case {k}, {threads} threads, piped");
        }
    }
    std::fs::remove_dir_all(&dir).expect("removes its temporary directory");
    assert!(offsets >= 8, "{offsets} errors with a byte offset");
}

/// A large synthetic trace, then the same with an error deep in it: a bad field, a
/// missing phase, an event that is not an object, two commas, a truncation and invalid
/// UTF-8.
fn deep_cases() -> Vec<Vec<u8>> {
    let events = 80_000;
    let at = 71_234;
    let mut invalid_utf8 = b"{\"ph\": \"X\", \"name\": \"".to_vec();
    invalid_utf8.extend_from_slice(b"\xff\xfe\", \"ts\": 1}");
    let cases: Vec<Vec<u8>> = vec![
        synthetic(events, None),
        synthetic(
            events,
            Some((at, "{\"ph\": \"X\", \"ts\": \"soon\", \"dur\": 1}")),
        ),
        synthetic(events, Some((at, "{\"name\": \"no phase\"}"))),
        synthetic(events, Some((at, "[1, 2]"))),
        synthetic(
            events,
            Some((at, "{\"ph\": \"X\", \"ts\": 1,, \"dur\": 1}")),
        ),
        {
            let mut t = synthetic(events, None);
            let cut = t.len() - 5_000;
            t.truncate(cut);
            t
        },
        {
            let text = synthetic(events, Some((at, "@@@")));
            let at = text
                .windows(3)
                .position(|w| w == b"@@@")
                .expect("the marker is in the text");
            let mut t = text[..at].to_vec();
            t.extend_from_slice(&invalid_utf8);
            t.extend_from_slice(&text[at + 3..]);
            t
        },
    ];
    cases
}
