//! The events frame of a loaded capture of any format (Nsight Systems, rocprof, XSpace):
//! its rows built straight from the [`trace_model::Capture`], through the same row sink
//! as a Chrome trace's events (`frame::Builder`), with nothing written out and read again.
//!
//! The rows are the events the capture has in Kineto's layout, in this order (the layout
//! of `chrome_reader::write_chrome_trace`, so that a capture and its Chrome JSON export
//! give the same frame, row for row; a test holds the two equal on every shared capture):
//! - metadata (`ph` `M`, no `cat`): `process_name` per device (`args_name` `GPU N`),
//!   `thread_name` per stream (its name, else `stream N`) and per named host thread;
//! - host events (`X`), `cat` by kind (`cuda_runtime`, or `hip_runtime` on AMD devices,
//!   for runtime calls and launches; `cpu_op`, `user_annotation`, `python_function`,
//!   `host` for the rest), with `args_correlation` and `args_External id` where present;
//! - GPU activities (`X`, `cat` `kernel`, `gpu_memcpy` or `gpu_memset`): `pid` the device's
//!   ordinal, `tid` the stream's, `args_device`, `args_stream`, and where the capture has
//!   them `args_correlation`, `args_External id`, `args_bytes`, `args_graph id`,
//!   `args_hlo_op`, `args_hlo_module`, `args_program_id`;
//! - GPU annotations (`X`, `gpu_user_annotation`) on their stream, with `args_device`;
//! - a flow pair per activity linked to its launch (`s` on the launch's thread at its
//!   start, `f` on the activity's stream at its start; `cat` and `name` `ac2g`, `id` the
//!   pair's position).
//!
//! `ts` and `dur` are the nanoseconds in µs, as the decimal text of the nanoseconds would
//! read; the rank is the capture's own, else the loader's (the process or the file name).

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use chrome_reader::Id;
use trace_model::{ActivityKind, Capture, HostKind, HostThread, Vendor};

use crate::Error;
use crate::frame::{Builder, Columns, RankFrame, Row, Val, frame_of_rows};

/// The events frame of `loaded` with every column (see the module docs for its rows).
pub fn capture_frame(loaded: &load::Loaded) -> Result<RankFrame, Error> {
    capture_frame_columns(loaded, Columns::All)
}

/// [`capture_frame`] with only the columns `columns` names.
pub(crate) fn capture_frame_columns(
    loaded: &load::Loaded,
    columns: Columns,
) -> Result<RankFrame, Error> {
    let c = &loaded.capture;
    let flows = c
        .activities()
        .iter()
        .filter(|a| a.launch().is_some())
        .count();
    let rows = c.devices().len()
        + c.streams().len()
        + c.threads().len()
        + c.host_events().len()
        + c.activities().len()
        + c.gpu_annotations().len()
        + 2 * flows;
    let path: Arc<Path> = Arc::from(loaded.path.as_path());
    let mut w = Rows {
        b: Builder::with_rows(path, columns, rows),
        all: columns == Columns::All,
        index: 0,
        text: String::new(),
        gpu_pid_offset: gpu_pid_offset(c),
    };
    w.metadata(c);
    w.host_events(c);
    w.activities(c);
    w.gpu_annotations(c);
    w.flows(c);
    let rank_in_file = c.meta().rank;
    let rank = rank_in_file.or(loaded.rank);
    frame_of_rows(w.b, &loaded.path, rank, rank_in_file)
}

/// Where GPU processes' pids start: 0 (Kineto's layout) unless a host process has the pid
/// of a device ordinal, then past every host pid (as the Chrome JSON export numbers them).
fn gpu_pid_offset(capture: &Capture) -> i64 {
    let host_pids: std::collections::BTreeSet<i64> =
        capture.threads().iter().map(|t| t.pid).collect();
    let collides = capture
        .devices()
        .iter()
        .any(|d| host_pids.contains(&d.ordinal));
    match host_pids.last() {
        Some(&max) if collides => {
            let lowest = capture
                .devices()
                .iter()
                .map(|d| d.ordinal)
                .min()
                .unwrap_or(0);
            max.saturating_add(1).saturating_sub(lowest.min(0))
        }
        _ => 0,
    }
}

/// The rows being pushed.
struct Rows {
    b: Builder,
    /// Every column: `ts` and `dur` in µs are computed.
    all: bool,
    /// The next row's event index.
    index: usize,
    /// The text of the string `args` value being pushed.
    text: String,
    gpu_pid_offset: i64,
}

/// An `args` value of a capture's row.
enum Arg<'a> {
    Int(i64),
    /// An unsigned integer: beyond i64 it is kept as its text, as a read of it would.
    Unsigned(u64),
    Str(&'a str),
}

impl Rows {
    /// Pushes a row and its `args` (those the frame keeps).
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        ph: &str,
        cat: Option<&str>,
        name: &str,
        (pid, tid): (&Id<'_>, &Id<'_>),
        times: (Option<i64>, Option<i64>),
        id: Option<&Id<'_>>,
        args: &[(&str, Arg<'_>)],
    ) {
        let micros = |ns: Option<i64>| ns.filter(|_| self.all).map(micros_f64);
        let row = self.b.row(&Row {
            index: self.index,
            name: Some(name),
            cat,
            ph,
            ts: micros(times.0),
            dur: micros(times.1),
            ts_ns: times.0,
            dur_ns: times.1,
            pid: Some(pid),
            tid: Some(tid),
            id,
        });
        self.index += 1;
        let mut i = 0;
        for (key, value) in args {
            if !self.b.keeps_args() {
                break;
            }
            self.text.clear();
            let v = match *value {
                Arg::Int(v) => Val::Int(v),
                Arg::Unsigned(v) => match i64::try_from(v) {
                    Ok(v) => Val::Int(v),
                    Err(_) => {
                        self.text.push_str(&v.to_string());
                        Val::Str(0, self.text.len())
                    }
                },
                Arg::Str(s) => {
                    self.text.push_str(s);
                    Val::Str(0, self.text.len())
                }
            };
            self.b.arg(row, &mut i, key, v, &self.text);
        }
    }

    fn gpu_pid(&self, capture: &Capture, stream: trace_model::StreamId) -> Id<'static> {
        let device = capture.device(capture.stream(stream).device);
        Id::Int(device.ordinal.saturating_add(self.gpu_pid_offset))
    }

    fn metadata(&mut self, c: &Capture) {
        for device in c.devices() {
            let pid = Id::Int(device.ordinal.saturating_add(self.gpu_pid_offset));
            let name = format!("GPU {}", device.ordinal);
            let args = [("name", Arg::Str(&name))];
            self.push(
                "M",
                None,
                "process_name",
                (&pid, &Id::Int(0)),
                (None, None),
                None,
                &args,
            );
        }
        for stream in c.streams() {
            let pid = self.gpu_pid(c, stream.id);
            let name = match stream.name {
                Some(name) => Cow::Borrowed(c.name(name)),
                None => Cow::Owned(format!("stream {}", stream.ordinal)),
            };
            let tid = Id::Int(stream.ordinal);
            let args = [("name", Arg::Str(&name))];
            self.push(
                "M",
                None,
                "thread_name",
                (&pid, &tid),
                (None, None),
                None,
                &args,
            );
        }
        for thread in c.threads() {
            let Some(name) = thread.name else { continue };
            let (pid, tid) = thread_ids(c, thread);
            let args = [("name", Arg::Str(c.name(name)))];
            self.push(
                "M",
                None,
                "thread_name",
                (&pid, &tid),
                (None, None),
                None,
                &args,
            );
        }
    }

    fn host_events(&mut self, c: &Capture) {
        let amd = c.devices().iter().any(|d| d.vendor == Vendor::Amd);
        for event in c.host_events() {
            let cat = match event.kind {
                HostKind::Launch | HostKind::Runtime if amd => "hip_runtime",
                HostKind::Launch | HostKind::Runtime => "cuda_runtime",
                HostKind::CpuOp => "cpu_op",
                HostKind::Annotation => "user_annotation",
                HostKind::PythonFrame => "python_function",
                _ => "host",
            };
            let ids = thread_ids(c, c.thread(event.thread));
            let mut args = Vec::new();
            if let Some(v) = event.correlation() {
                args.push(("correlation", Arg::Unsigned(v)));
            }
            if let Some(v) = c.host_external_id(event) {
                args.push(("External id", Arg::Int(v)));
            }
            let times = (Some(event.start.0), Some(event.dur.0));
            let name = c.name(event.name);
            self.push("X", Some(cat), name, (&ids.0, &ids.1), times, None, &args);
        }
    }

    fn activities(&mut self, c: &Capture) {
        for a in c.activities() {
            let stream = c.stream(a.stream);
            let device = c.device(stream.device);
            let cat = match a.kind {
                ActivityKind::Memcpy => "gpu_memcpy",
                ActivityKind::Memset => "gpu_memset",
                _ => "kernel",
            };
            let pid = self.gpu_pid(c, a.stream);
            let tid = Id::Int(stream.ordinal);
            let mut args = vec![
                ("device", Arg::Int(device.ordinal)),
                ("stream", Arg::Int(stream.ordinal)),
            ];
            if let Some(v) = a.correlation() {
                args.push(("correlation", Arg::Unsigned(v)));
            }
            if let Some(v) = c.activity_external_id(a) {
                args.push(("External id", Arg::Int(v)));
            }
            if let Some(v) = c.activity_bytes(a) {
                args.push(("bytes", Arg::Unsigned(v)));
            }
            if let Some(v) = c.activity_graph_id(a) {
                args.push(("graph id", Arg::Int(v)));
            }
            if let Some(op) = a.hlo_op() {
                args.push(("hlo_op", Arg::Str(c.name(op))));
            }
            if let Some(module) = c.hlo_module(a) {
                args.push(("hlo_module", Arg::Str(c.name(module))));
            }
            if let Some(v) = c.program_id(a) {
                args.push(("program_id", Arg::Int(v)));
            }
            let times = (Some(a.start.0), Some(a.dur.0));
            let name = c.name(a.name);
            self.push("X", Some(cat), name, (&pid, &tid), times, None, &args);
        }
    }

    fn gpu_annotations(&mut self, c: &Capture) {
        for annotation in c.gpu_annotations() {
            let stream = c.stream(annotation.stream);
            let device = c.device(stream.device);
            let pid = self.gpu_pid(c, annotation.stream);
            let tid = Id::Int(stream.ordinal);
            let args = [("device", Arg::Int(device.ordinal))];
            let times = (Some(annotation.start.0), Some(annotation.dur.0));
            let name = c.name(annotation.name);
            let cat = Some("gpu_user_annotation");
            self.push("X", cat, name, (&pid, &tid), times, None, &args);
        }
    }

    /// One pair per linked activity, from its launch; ids are the pairs' positions, so
    /// that a launch with several activities (a graph launch) has a pair for each.
    fn flows(&mut self, c: &Capture) {
        let mut id = 0i64;
        for a in c.activities() {
            let Some(launch) = a.launch() else { continue };
            let launch = c.host_event(launch);
            let (pid, tid) = thread_ids(c, c.thread(launch.thread));
            let flow = Id::Int(id);
            let start = (Some(launch.start.0), None);
            self.push(
                "s",
                Some("ac2g"),
                "ac2g",
                (&pid, &tid),
                start,
                Some(&flow),
                &[],
            );
            let pid = self.gpu_pid(c, a.stream);
            let tid = Id::Int(c.stream(a.stream).ordinal);
            let start = (Some(a.start.0), None);
            self.push(
                "f",
                Some("ac2g"),
                "ac2g",
                (&pid, &tid),
                start,
                Some(&flow),
                &[],
            );
            id += 1;
        }
    }
}

/// The `pid` and `tid` of a host thread: an id the trace had as something other than a
/// 64-bit integer keeps its text (a number as a read of its text gives it, a string as a
/// string).
fn thread_ids<'c>(c: &'c Capture, thread: &HostThread) -> (Id<'c>, Id<'c>) {
    let id = |value: i64, text: Option<trace_model::StringId>| match text.map(|t| c.name(t)) {
        Some(t) if is_number_text(t) => Id::from_number_text(t),
        Some(t) => Id::Str(Cow::Borrowed(t)),
        None => Id::Int(value),
    };
    (
        id(thread.pid, thread.pid_text),
        id(thread.tid, thread.tid_text),
    )
}

/// Whether `text` reads as a JSON number (chrome-reader's rule for ids kept as text).
fn is_number_text(text: &str) -> bool {
    text.as_bytes()
        .first()
        .is_some_and(|c| matches!(c, b'-' | b'0'..=b'9'))
        && text.parse::<f64>().is_ok()
}

/// Nanoseconds as µs, the f64 nearest to `ns / 1000` (what the decimal text of the µs
/// reads as): a division of exact operands where `ns` is exact in f64, else through the
/// text.
fn micros_f64(ns: i64) -> f64 {
    const EXACT: i64 = 1 << 53;
    if (-EXACT..=EXACT).contains(&ns) {
        return ns as f64 / 1000.0;
    }
    let sign = if ns < 0 { "-" } else { "" };
    let abs = ns.unsigned_abs();
    format!("{sign}{}.{:03}", abs / 1000, abs % 1000)
        .parse()
        .unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::micros_f64;

    #[test]
    fn microseconds_are_those_of_the_decimal_text() {
        for (ns, text) in [
            (0i64, "0"),
            (1_234, "1.234"),
            (-7, "-0.007"),
            (1_733_877_925_987_393_218, "1733877925987393.218"),
            ((1 << 53) + 1, "9007199254740.993"),
            (i64::MIN, "-9223372036854775.808"),
        ] {
            assert_eq!(micros_f64(ns), text.parse::<f64>().unwrap(), "{ns}");
        }
    }
}
