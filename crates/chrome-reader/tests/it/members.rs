//! A multi-member gzip file (members end to end, as `cat a.gz b.gz` makes them) is read
//! on every core, member by member, in order: it gives the same capture as its
//! single-member twin holding the same JSON text, through the model build and through
//! [`chrome_reader::open`].

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::traces_dir;

fn gzip(text: &[u8]) -> Vec<u8> {
    let mut w = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    w.write_all(text).expect("writes to a Vec");
    w.finish().expect("writes to a Vec")
}

/// `text` as one gzip member, and as `members` members cut at even byte offsets (inside
/// events too: only the text end to end counts).
fn twins(text: &[u8], members: usize) -> (Vec<u8>, Vec<u8>) {
    let mut multi = Vec::new();
    let step = text.len().div_ceil(members);
    for part in text.chunks(step) {
        multi.extend(gzip(part));
    }
    (gzip(text), multi)
}

/// A synthetic Kineto trace of `n` kernels, each with its launch.
fn synthetic(n: usize) -> Vec<u8> {
    let mut s = String::from("{\"schemaVersion\": 1, \"traceEvents\": [\n");
    for i in 0..n {
        let ts = 1000 + i * 10;
        s.push_str(&format!(
            "{{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": {ts}, \"dur\": 3, \"args\": {{\"correlation\": {i}}}}},\n\
             {{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"kernel_{}\", \"pid\": 0, \"tid\": 7, \"ts\": {}, \"dur\": 4, \"args\": {{\"device\": 0, \"stream\": 7, \"correlation\": {i}}}}},\n",
            i % 97,
            ts + 5
        ));
    }
    s.push_str("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"end\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}\n]}");
    s.into_bytes()
}

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chrome-reader-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

/// Loads both twins of `text` (through the model build and through `open`) and asserts
/// the same capture and the same text.
fn check(text: &[u8], members: usize, dir: &Path) {
    // Members are inflated in parallel only with more than two threads (input.rs); the
    // result is the same for any number, so every test of this binary may take four.
    chrome_reader::set_default_threads(4);
    let (single, multi) = twins(text, members);
    let (one, many) = (dir.join("single.json.gz"), dir.join("multi.json.gz"));
    std::fs::write(&one, single).expect("writes");
    std::fs::write(&many, multi).expect("writes");
    let load = |p: &Path| {
        let capture = chrome_reader::load(p).expect("the twin loads");
        format!(
            "{} activities, {} host events\n{:?}",
            capture.activities().len(),
            capture.host_events().len(),
            capture.activities()
        )
    };
    let (a, b) = (load(&one), load(&many));
    assert!(!a.starts_with("0 activities"), "{a}");
    assert_eq!(a, b, "the multi-member twin loads as the single-member one");
    let mut read = Vec::new();
    chrome_reader::open(&many)
        .expect("opens")
        .read_to_end(&mut read)
        .expect("reads");
    assert!(read == text, "open() gives the members' text end to end");
}

#[test]
fn multi_member_gzip_loads_as_its_single_member_twin() {
    let dir = scratch("members");
    let text = synthetic(60_000);
    for members in [2, 7, 40] {
        check(&text, members, &dir);
    }
    std::fs::remove_dir_all(&dir).expect("removes its temporary directory");
}

/// A multi-member twin of a real trace (hta-cudagraph-a100 rank 0, 26 MB of JSON).
#[test]
fn multi_member_twin_of_a_real_trace() {
    let Some(traces) = traces_dir("multi_member_twin_of_a_real_trace") else {
        return;
    };
    let path = traces.join("pytorch/hta-cudagraph-a100/rank0.json.gz");
    let mut text = Vec::new();
    chrome_reader::open(&path)
        .expect("opens")
        .read_to_end(&mut text)
        .expect("reads");
    let dir = scratch("members-real");
    check(&text, 8, &dir);
    std::fs::remove_dir_all(&dir).expect("removes its temporary directory");
}
