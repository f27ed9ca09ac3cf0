//! `args` only when asked: the model build decodes the `args` of the events whose `args` it
//! reads (complete events but Python frames, metadata) and no other; a reader that never
//! asks for `args` decodes none. Counted by `chrome_reader::args_decoded`.
//!
//! A test binary of its own: the counter is per process.

use std::path::Path;

use chrome_reader::{Error, EventSink, RawEvent};

/// A sink that keeps nothing: a tool that never asks for `args`.
struct Nothing;

impl EventSink for Nothing {
    type Out = ();
    fn event(&mut self, _: RawEvent<'_, &str>) -> Result<(), Error> {
        Ok(())
    }
    fn finish(self) {}
}

/// How many events of `text` have `args` the model reads (an independent count over
/// serde_json's tree), and how many have an object `args` in all.
fn wanted_and_all(text: &[u8]) -> (u64, u64) {
    let doc: serde_json::Value = serde_json::from_slice(text).expect("a JSON trace");
    let events = doc["traceEvents"].as_array().expect("traceEvents");
    let (mut wanted, mut all) = (0, 0);
    for ev in events {
        if !ev.get("args").is_some_and(serde_json::Value::is_object) {
            continue;
        }
        all += 1;
        let ph = ev.get("ph").and_then(|p| p.as_str()).unwrap_or("");
        let python = ev.get("cat").and_then(|c| c.as_str()) == Some("python_function");
        wanted += u64::from((ph == "X" && !python) || ph == "M");
    }
    (wanted, all)
}

#[test]
fn args_are_decoded_only_where_the_model_reads_them() {
    // A type error in `args` the model never reads (the duplicate `stream` of an instant,
    // the string `graph id` of a flow) is not its error; one event of each kind takes the
    // general path (an escape in its name).
    let json = br#"{"traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 2,
       "args": {"device": 0, "stream": 7, "correlation": 5, "grid": [1, 1, 1]}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
       "ts": 9, "dur": 1, "args": {"correlation": 5, "cbid": 211}},
      {"ph": "X", "cat": "python_function", "name": "f", "pid": 1, "tid": 1, "ts": 8,
       "dur": 4, "args": {"Python id": 3, "stream": 1, "stream": 2}},
      {"ph": "X", "cat": "python_function", "name": "f\"g", "pid": 1, "tid": 1, "ts": 8,
       "dur": 4, "args": {"Python id": 4, "stream": 1, "stream": 2}},
      {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "s": "t",
       "ts": 9, "args": {"Bytes": 512, "stream": 1, "stream": 2}},
      {"ph": "i", "cat": "cpu_instant_event", "name": "[mem\"ory]", "pid": 1, "tid": 1,
       "s": "t", "ts": 9, "args": {"Bytes": 512, "stream": 1, "stream": 2}},
      {"ph": "s", "id": 5, "pid": 1, "tid": 1, "ts": 9, "cat": "ac2g", "name": "ac2g",
       "args": {"graph id": []}},
      {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}},
      {"args": {"name": "thread 1"}, "ph": "M", "name": "thread_name", "pid": 1, "tid": 1}
    ]}"#;
    let path = Path::new("lazy.json");
    let _one = LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (wanted, all) = wanted_and_all(json);
    assert_eq!((wanted, all), (4, 9));

    let before = chrome_reader::args_decoded();
    let capture = chrome_reader::load_from(&json[..], path).expect("the trace loads");
    assert_eq!(chrome_reader::args_decoded() - before, wanted);
    assert_eq!(capture.activities().len(), 1);
    assert!(
        capture.activities()[0].launch().is_some(),
        "joined by correlation"
    );

    // The args left undecoded are still there to read, and their error with them.
    let mut errors = 0;
    chrome_reader::read_raw_events(&json[..], path, |ev| {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Stream {
            stream: Option<i64>,
        }
        if ev.ph == "i" {
            let err = chrome_reader::decode_args::<Stream>(path, &ev)
                .expect_err("a duplicate key is an error when read");
            assert!(err.to_string().contains("duplicate field"), "{err}");
            errors += 1;
        }
        Ok(())
    })
    .expect("the raw reader reads every event");
    assert_eq!(errors, 2);

    // A reader that never asks for `args` decodes none.
    let before = chrome_reader::args_decoded();
    let mut events = 0;
    chrome_reader::read_raw_events(&json[..], path, |_| {
        events += 1;
        Ok(())
    })
    .expect("the raw reader reads every event");
    chrome_reader::read_events_chunked(&json[..], path, 2, || Nothing, |(), _| Ok(()))
        .expect("the chunked reader reads every event");
    assert_eq!((events, chrome_reader::args_decoded() - before), (9, 0));
}

/// The same on every shared trace with `args` the model never reads: the build decodes the
/// wanted ones only (an independent count), fewer than it used to (every object).
#[test]
fn on_shared_traces_only_the_wanted_args_are_decoded() {
    let Some(dir) = test_support::traces_dir("on_shared_traces_only_the_wanted_args_are_decoded")
    else {
        return;
    };
    let mut skipped_somewhere = false;
    for file in [
        "pytorch/hta-v100-2rank-large",
        "pytorch/kineto-v100-resnet50-train",
    ] {
        for path in test_support::json_files(&dir.join(file)) {
            let (wanted, all) = wanted_and_all(&test_support::inflated(&path));
            // Whole loads only: the counter is the process's, and this binary's other
            // test does its own loads, so they do not run at once (one lock).
            let _one = LOCK
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let before = chrome_reader::args_decoded();
            chrome_reader::load(&path).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                chrome_reader::args_decoded() - before,
                wanted,
                "{}",
                path.display()
            );
            let before = chrome_reader::args_decoded();
            chrome_reader::read_file_events_chunked(&path, 2, || Nothing, |(), _| Ok(()))
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(chrome_reader::args_decoded(), before, "{}", path.display());
            skipped_somewhere |= wanted < all;
        }
    }
    assert!(
        skipped_somewhere,
        "no shared trace has args the model skips"
    );
}

static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
