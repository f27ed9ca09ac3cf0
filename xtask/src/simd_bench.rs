//! `cargo xtask bench` rows for simd-json: its tape and borrowed-value APIs
//! against the reader's serde_json path, on the splitter's batches of a real trace.
//!
//! The events are cut into batches of about 1 MiB as the reader's splitter does; each
//! parser then reads the fields the model builder reads (`ph`, `name`, `cat`, `ts`, `dur`,
//! `pid`, `tid`, `id` and the `args` keys `correlation`, `External id`, `stream`,
//! `device`). serde_json parses event by event into borrowed structs, as
//! `chrome_reader`'s `parse_event_str` does; simd-json parses a whole batch (as a JSON
//! array) at once, which is the form it is built for. One thread, in process, timed from
//! text in memory to fields read; simd-json's copies of the input (it unescapes in place)
//! are made before the clock starts. Each row is the median of `runs`.

use std::borrow::Cow;
use std::path::Path;
use std::time::Instant;

use serde::Deserialize;
use serde_json::value::RawValue;
use simd_json::prelude::*;

/// The batch size of the reader's splitter.
const BATCH_BYTES: usize = 1 << 20;

/// What each parser found: a checksum over the fields, so that the work is not optimized
/// away and the parsers can be checked to agree.
#[derive(Debug, Default, PartialEq, Eq, Clone, Copy)]
struct Sums {
    events: u64,
    complete: u64,
    name_bytes: u64,
    times: u64,
    ids: i64,
    args: i64,
}

#[derive(Deserialize)]
struct SerdeArgs {
    correlation: Option<i64>,
    #[serde(rename = "External id")]
    external_id: Option<i64>,
    stream: Option<i64>,
    device: Option<i64>,
}

#[derive(Deserialize)]
struct SerdeEvent<'a> {
    #[serde(borrow)]
    ph: Option<Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    cat: Option<Cow<'a, str>>,
    #[serde(borrow)]
    ts: Option<&'a RawValue>,
    #[serde(borrow)]
    dur: Option<&'a RawValue>,
    pid: Option<serde_json::Value>,
    tid: Option<serde_json::Value>,
    id: Option<serde_json::Value>,
    args: Option<SerdeArgs>,
}

/// The events of `path` in batches: each batch's event texts end to end, with their
/// ranges, for serde_json; and as one JSON array, for simd-json.
struct Batches {
    serde: Vec<(String, Vec<(usize, usize)>)>,
    arrays: Vec<Vec<u8>>,
    bytes: u64,
}

fn batches(path: &Path) -> Result<Batches, String> {
    let mut out = Batches {
        serde: Vec::new(),
        arrays: Vec::new(),
        bytes: 0,
    };
    let mut text = String::new();
    let mut ranges = Vec::new();
    let flush = |text: &mut String, ranges: &mut Vec<(usize, usize)>, out: &mut Batches| {
        if ranges.is_empty() {
            return;
        }
        let mut array = Vec::with_capacity(text.len() + ranges.len() + 2);
        array.push(b'[');
        for (k, &(start, end)) in ranges.iter().enumerate() {
            if k > 0 {
                array.push(b',');
            }
            array.extend_from_slice(&text.as_bytes()[start..end]);
        }
        array.push(b']');
        out.arrays.push(array);
        out.serde
            .push((std::mem::take(text), std::mem::take(ranges)));
    };
    let top = chrome_reader::read_raw_file(path, |ev| {
        let start = text.len();
        text.push_str(ev.json);
        ranges.push((start, text.len()));
        if text.len() >= BATCH_BYTES {
            flush(&mut text, &mut ranges, &mut out);
        }
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    flush(&mut text, &mut ranges, &mut out);
    out.bytes = top.json_bytes;
    Ok(out)
}

fn id_of_serde(v: &Option<serde_json::Value>) -> i64 {
    v.as_ref().and_then(serde_json::Value::as_i64).unwrap_or(0)
}

fn serde_pass(b: &Batches) -> Result<Sums, String> {
    let mut s = Sums::default();
    for (text, ranges) in &b.serde {
        for &(start, end) in ranges {
            let ev: SerdeEvent<'_> =
                serde_json::from_str(&text[start..end]).map_err(|e| e.to_string())?;
            s.events += 1;
            s.complete += u64::from(ev.ph.as_deref() == Some("X"));
            s.name_bytes += ev.name.as_deref().map_or(0, str::len) as u64
                + ev.cat.as_deref().map_or(0, str::len) as u64;
            s.times += u64::from(ev.ts.is_some()) + u64::from(ev.dur.is_some());
            s.ids = s
                .ids
                .wrapping_add(id_of_serde(&ev.pid))
                .wrapping_add(id_of_serde(&ev.tid))
                .wrapping_add(id_of_serde(&ev.id));
            if let Some(a) = ev.args {
                s.args = s.args.wrapping_add(
                    a.correlation.unwrap_or(0)
                        + a.external_id.unwrap_or(0)
                        + a.stream.unwrap_or(0)
                        + a.device.unwrap_or(0),
                );
            }
        }
    }
    Ok(s)
}

fn tape_pass(arrays: &mut [Vec<u8>]) -> Result<Sums, String> {
    let mut s = Sums::default();
    let mut buffers = simd_json::Buffers::default();
    for array in arrays {
        let tape =
            simd_json::to_tape_with_buffers(array, &mut buffers).map_err(|e| e.to_string())?;
        let events = tape.as_value();
        let events = events.as_array().ok_or("a batch is an array")?;
        for ev in events.iter() {
            let Some(obj) = ev.as_object() else { continue };
            s.events += 1;
            s.complete += u64::from(obj.get("ph").is_some_and(|v| v.as_str() == Some("X")));
            let len = |k: &str| obj.get(k).map_or(0, |v| v.as_str().map_or(0, str::len)) as u64;
            s.name_bytes += len("name") + len("cat");
            s.times += u64::from(obj.get("ts").and_then(|v| v.cast_f64()).is_some())
                + u64::from(obj.get("dur").and_then(|v| v.cast_f64()).is_some());
            let id = |k: &str| obj.get(k).and_then(|v| v.as_i64()).unwrap_or(0);
            s.ids = s
                .ids
                .wrapping_add(id("pid"))
                .wrapping_add(id("tid"))
                .wrapping_add(id("id"));
            if let Some(args) = obj.get("args").and_then(|a| a.as_object()) {
                let arg = |k: &str| args.get(k).and_then(|v| v.as_i64()).unwrap_or(0);
                s.args = s.args.wrapping_add(
                    arg("correlation") + arg("External id") + arg("stream") + arg("device"),
                );
            }
        }
    }
    Ok(s)
}

fn borrowed_pass(arrays: &mut [Vec<u8>]) -> Result<Sums, String> {
    let mut s = Sums::default();
    let mut buffers = simd_json::Buffers::default();
    for array in arrays {
        let value = simd_json::to_borrowed_value_with_buffers(array, &mut buffers)
            .map_err(|e| e.to_string())?;
        let events = value.as_array().ok_or("a batch is an array")?;
        for ev in events {
            if !ev.is_object() {
                continue;
            }
            s.events += 1;
            s.complete += u64::from(ev.get_str("ph") == Some("X"));
            s.name_bytes += ev.get_str("name").map_or(0, str::len) as u64
                + ev.get_str("cat").map_or(0, str::len) as u64;
            s.times += u64::from(ev.get("ts").and_then(|v| v.cast_f64()).is_some())
                + u64::from(ev.get("dur").and_then(|v| v.cast_f64()).is_some());
            let id = |k: &str| ev.get_i64(k).unwrap_or(0);
            s.ids = s
                .ids
                .wrapping_add(id("pid"))
                .wrapping_add(id("tid"))
                .wrapping_add(id("id"));
            if let Some(args) = ev.get("args") {
                let arg = |k: &str| args.get_i64(k).unwrap_or(0);
                s.args = s.args.wrapping_add(
                    arg("correlation") + arg("External id") + arg("stream") + arg("device"),
                );
            }
        }
    }
    Ok(s)
}

/// (serde_json MB/s, simd-json tape MB/s, simd-json borrowed MB/s), medians of `runs`.
pub fn measure(path: &Path, runs: usize) -> Result<(f64, f64, f64), String> {
    let b = batches(path)?;
    let mb = b.bytes as f64 / 1e6;
    let mut serde = Vec::new();
    let mut tape = Vec::new();
    let mut borrowed = Vec::new();
    let mut sums = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let s = serde_pass(&b)?;
        serde.push(mb / t.elapsed().as_secs_f64());
        sums.push(s);
        let mut copy = b.arrays.clone();
        let t = Instant::now();
        let s = tape_pass(&mut copy)?;
        tape.push(mb / t.elapsed().as_secs_f64());
        sums.push(s);
        let mut copy = b.arrays.clone();
        let t = Instant::now();
        let s = borrowed_pass(&mut copy)?;
        borrowed.push(mb / t.elapsed().as_secs_f64());
        sums.push(s);
    }
    // The parsers read the same strings, times, ids and args.
    for w in sums.chunks(3) {
        if w[0] != w[1] || w[1] != w[2] {
            return Err(format!("the parsers disagree: {w:?}"));
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Ok((median(&mut serde), median(&mut tape), median(&mut borrowed)))
}
