//! Writing any [`Capture`] as Chrome trace JSON that Perfetto and `chrome://tracing` open,
//! laid out as Kineto lays out its traces, so that [`crate::load`] reads it back.
//!
//! Layout:
//! - GPU activities: complete (`X`) events with `cat` `kernel`, `gpu_memcpy` or
//!   `gpu_memset`, one process per device (pid = the device's ordinal, as Kineto's) and one
//!   thread per stream (tid = the stream's ordinal), with `args` `device`, `stream`,
//!   `correlation` and, where the capture has them, `External id`, `bytes`, `graph id`,
//!   `hlo_op`, `hlo_module`, `program_id`.
//! - Host events: `X` events on their own pid and tid, `cat` by kind (`cuda_runtime`, or
//!   `hip_runtime` on AMD devices, for runtime calls and launches; `cpu_op`,
//!   `user_annotation`, `python_function`, `host` for the rest), with `correlation` and
//!   `External id` where present.
//! - GPU annotations: `gpu_user_annotation` events on their stream.
//! - Every activity linked to its launch: a flow arrow (`ph` `s` on the launch, `f` with
//!   `bp` `e` on the activity; `cat` and `name` `ac2g`, one id per arrow).
//! - Metadata: `process_name` (`GPU N`) and `thread_name` (`stream N` or the stream's
//!   name; host threads' names) events; top-level `deviceProperties` (Kineto's keys),
//!   `baseTimeNanoseconds` and `distributedInfo` where known; `displayTimeUnit` `ns`.
//!
//! Times are written as decimal microseconds from the integer nanoseconds (`1234.567`),
//! never through floats, so that they read back exactly. Events stream out one at a time
//! through a `BufWriter`: memory does not grow with the capture.
//!
//! Reading the JSON back gives the same activities (count, names, kinds, starts,
//! durations, devices and streams, correlation ids and launches) and host events. Steps
//! come back where they came from `ProfilerStep#N` annotations (Kineto's rule); steps
//! found another way (a step regex over NVTX ranges, XLA module executions) and the
//! capture's diagnostics are not written.

use std::collections::BTreeSet;
use std::io::{self, BufWriter, Write};

use trace_model::{ActivityKind, Capture, HostKind, Vendor};

/// Writes `capture` to `out` as Chrome trace JSON (see the module docs for the layout).
///
/// ```
/// use std::path::Path;
/// use trace_model::{
///     ActivityDetails, ActivityKind, CaptureBuilder, Device, DeviceId, DeviceProperties,
///     Format, GpuActivity, HostEvent, HostKind, HostThread, KernelClass, Nanos, Stream,
///     StreamId, ThreadId, Vendor,
/// };
///
/// let mut b = CaptureBuilder::new(Format::NsysSqlite);
/// b.devices.push(Device {
///     id: DeviceId::new(0),
///     ordinal: 0,
///     vendor: Vendor::Nvidia,
///     properties: DeviceProperties::default(),
/// });
/// b.streams.push(Stream { id: StreamId::new(0), device: DeviceId::new(0), ordinal: 7, name: None });
/// b.threads.push(HostThread {
///     id: ThreadId::new(0), pid: 4242, tid: 4242, name: None, pid_text: None, tid_text: None,
/// });
/// let launch_name = b.strings.intern("cudaLaunchKernel");
/// let mut launch = HostEvent::new(
///     ThreadId::new(0), Nanos(1_000), Nanos(2_500), launch_name, HostKind::Launch, 0,
/// );
/// launch.set_correlation(Some(9));
/// b.push_host_event(launch, None);
/// let kernel_name = b.strings.intern("gemm_kernel");
/// let mut kernel = GpuActivity::new(
///     StreamId::new(0), Nanos(5_000), Nanos(1_234), kernel_name, ActivityKind::Kernel,
///     KernelClass::Gemm, 1,
/// );
/// kernel.set_correlation(Some(9));
/// b.push_activity(kernel, ActivityDetails::default());
/// let capture = b.finish(Path::new("capture.sqlite"));
///
/// let mut json = Vec::new();
/// chrome_reader::write_chrome_trace(&capture, &mut json)?;
/// let text = String::from_utf8(json.clone()).unwrap();
/// assert!(text.contains(r#""ph":"X","cat":"kernel","name":"gemm_kernel","pid":0,"tid":7,"ts":5,"dur":1.234"#));
///
/// // Read back: the same kernel, to the nanosecond, linked to its launch.
/// let back = chrome_reader::load_from(&json[..], Path::new("capture.json"))?;
/// let kernel = &back.activities()[0];
/// assert_eq!((back.name(kernel.name), kernel.start, kernel.dur), ("gemm_kernel", Nanos(5_000), Nanos(1_234)));
/// let launch = back.host_event(kernel.launch().expect("linked by correlation id"));
/// assert_eq!(back.name(launch.name), "cudaLaunchKernel");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_chrome_trace(capture: &Capture, out: impl Write) -> io::Result<()> {
    let mut w = Writer {
        out: BufWriter::new(out),
        first: true,
        gpu_pid_offset: gpu_pid_offset(capture),
    };
    w.begin(capture)?;
    w.metadata(capture)?;
    w.host_events(capture)?;
    w.activities(capture)?;
    w.gpu_annotations(capture)?;
    w.flows(capture)?;
    w.end()
}

/// The JSON being written, and where GPU processes' pids start.
struct Writer<W: Write> {
    out: BufWriter<W>,
    /// No event written yet (no comma before the next).
    first: bool,
    /// Added to a device's ordinal to make its pid: 0 (Kineto's layout) unless a host
    /// process has the pid of a device ordinal, then past every host pid.
    gpu_pid_offset: i64,
}

fn gpu_pid_offset(capture: &Capture) -> i64 {
    let host_pids: BTreeSet<i64> = capture.threads().iter().map(|t| t.pid).collect();
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

impl<W: Write> Writer<W> {
    fn begin(&mut self, capture: &Capture) -> io::Result<()> {
        let meta = capture.meta();
        self.out.write_all(b"{\"displayTimeUnit\":\"ns\"")?;
        if let Some(base) = meta.base_time_ns {
            write!(self.out, ",\"baseTimeNanoseconds\":{base}")?;
        }
        if meta.rank.is_some() || meta.world_size.is_some() || meta.backend.is_some() {
            self.out.write_all(b",\"distributedInfo\":{")?;
            let mut sep = "";
            if let Some(rank) = meta.rank {
                write!(self.out, "\"rank\":{rank}")?;
                sep = ",";
            }
            if let Some(world_size) = meta.world_size {
                write!(self.out, "{sep}\"world_size\":{world_size}")?;
                sep = ",";
            }
            if let Some(backend) = &meta.backend {
                write!(self.out, "{sep}\"backend\":")?;
                self.string(backend)?;
            }
            self.out.write_all(b"}")?;
        }
        self.out.write_all(b",\"deviceProperties\":[")?;
        for (i, device) in capture.devices().iter().enumerate() {
            let p = &device.properties;
            if i > 0 {
                self.out.write_all(b",")?;
            }
            write!(self.out, "{{\"id\":{}", device.ordinal)?;
            if let Some(name) = &p.name {
                self.out.write_all(b",\"name\":")?;
                self.string(name)?;
            }
            if let Some((major, minor)) = p.compute_capability {
                write!(
                    self.out,
                    ",\"computeMajor\":{major},\"computeMinor\":{minor}"
                )?;
            }
            if let Some(bytes) = p.total_memory_bytes {
                write!(self.out, ",\"totalGlobalMem\":{bytes}")?;
            }
            if let Some(sms) = p.multiprocessors {
                write!(self.out, ",\"numSms\":{sms}")?;
            }
            if let Some(khz) = p.clock_rate_khz {
                write!(self.out, ",\"clockRate\":{khz}")?;
            }
            self.out.write_all(b"}")?;
        }
        self.out.write_all(b"],\"traceEvents\":[\n")
    }

    fn end(mut self) -> io::Result<()> {
        self.out.write_all(b"\n]}\n")?;
        self.out.flush()
    }

    /// Starts the next event: a comma and newline after the previous one.
    fn next_event(&mut self) -> io::Result<()> {
        if !self.first {
            self.out.write_all(b",\n")?;
        }
        self.first = false;
        Ok(())
    }

    fn string(&mut self, s: &str) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, s).map_err(io::Error::from)
    }

    /// `"ts":…,"dur":…` in microseconds with up to three decimals.
    fn times(&mut self, start: i64, dur: i64) -> io::Result<()> {
        self.out.write_all(b"\"ts\":")?;
        write_micros(&mut self.out, start)?;
        self.out.write_all(b",\"dur\":")?;
        write_micros(&mut self.out, dur)
    }

    fn gpu_pid(&self, capture: &Capture, stream: trace_model::StreamId) -> i64 {
        let device = capture.device(capture.stream(stream).device);
        device.ordinal.saturating_add(self.gpu_pid_offset)
    }

    fn metadata(&mut self, capture: &Capture) -> io::Result<()> {
        for device in capture.devices() {
            self.next_event()?;
            write!(
                self.out,
                "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"tid\":0,\"args\":{{\"name\":\"GPU {}\"}}}}",
                device.ordinal.saturating_add(self.gpu_pid_offset),
                device.ordinal
            )?;
        }
        for stream in capture.streams() {
            let pid = self.gpu_pid(capture, stream.id);
            self.next_event()?;
            write!(
                self.out,
                "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{pid},\"tid\":{},\"args\":{{\"name\":",
                stream.ordinal
            )?;
            match stream.name {
                Some(name) => self.string(capture.name(name))?,
                None => self.string(&format!("stream {}", stream.ordinal))?,
            }
            self.out.write_all(b"}}")?;
        }
        for thread in capture.threads() {
            let Some(name) = thread.name else { continue };
            self.next_event()?;
            self.out
                .write_all(b"{\"ph\":\"M\",\"name\":\"thread_name\",")?;
            self.thread_ids(capture, thread)?;
            self.out.write_all(b",\"args\":{\"name\":")?;
            self.string(capture.name(name))?;
            self.out.write_all(b"}}")?;
        }
        Ok(())
    }

    /// `"pid":…,"tid":…` of a host thread: an id the trace wrote as something other than a
    /// 64-bit integer is written as it was (a number as its text, a string as a string).
    fn thread_ids(
        &mut self,
        capture: &Capture,
        thread: &trace_model::HostThread,
    ) -> io::Result<()> {
        for (key, value, text) in [
            ("pid", thread.pid, thread.pid_text),
            ("tid", thread.tid, thread.tid_text),
        ] {
            if key == "tid" {
                self.out.write_all(b",")?;
            }
            write!(self.out, "\"{key}\":")?;
            match text.map(|t| capture.name(t)) {
                Some(t) if crate::raw::is_number_text(t) => self.out.write_all(t.as_bytes())?,
                Some(t) => self.string(t)?,
                None => write!(self.out, "{value}")?,
            }
        }
        Ok(())
    }

    fn host_events(&mut self, capture: &Capture) -> io::Result<()> {
        let amd = capture.devices().iter().any(|d| d.vendor == Vendor::Amd);
        for event in capture.host_events() {
            let thread = capture.thread(event.thread);
            let cat = match event.kind {
                HostKind::Launch | HostKind::Runtime if amd => "hip_runtime",
                HostKind::Launch | HostKind::Runtime => "cuda_runtime",
                HostKind::CpuOp => "cpu_op",
                HostKind::Annotation => "user_annotation",
                HostKind::PythonFrame => "python_function",
                _ => "host",
            };
            self.next_event()?;
            write!(self.out, "{{\"ph\":\"X\",\"cat\":\"{cat}\",\"name\":")?;
            self.string(capture.name(event.name))?;
            self.out.write_all(b",")?;
            self.thread_ids(capture, thread)?;
            self.out.write_all(b",")?;
            self.times(event.start.0, event.dur.0)?;
            let correlation = event.correlation();
            let external = capture.host_external_id(event);
            if correlation.is_some() || external.is_some() {
                self.out.write_all(b",\"args\":{")?;
                let mut sep = "";
                if let Some(c) = correlation {
                    write!(self.out, "\"correlation\":{c}")?;
                    sep = ",";
                }
                if let Some(e) = external {
                    write!(self.out, "{sep}\"External id\":{e}")?;
                }
                self.out.write_all(b"}")?;
            }
            self.out.write_all(b"}")?;
        }
        Ok(())
    }

    fn activities(&mut self, capture: &Capture) -> io::Result<()> {
        for a in capture.activities() {
            let stream = capture.stream(a.stream);
            let device = capture.device(stream.device);
            let cat = match a.kind {
                ActivityKind::Memcpy => "gpu_memcpy",
                ActivityKind::Memset => "gpu_memset",
                _ => "kernel",
            };
            let pid = self.gpu_pid(capture, a.stream);
            self.next_event()?;
            write!(self.out, "{{\"ph\":\"X\",\"cat\":\"{cat}\",\"name\":")?;
            self.string(capture.name(a.name))?;
            write!(self.out, ",\"pid\":{pid},\"tid\":{},", stream.ordinal)?;
            self.times(a.start.0, a.dur.0)?;
            write!(
                self.out,
                ",\"args\":{{\"device\":{},\"stream\":{}",
                device.ordinal, stream.ordinal
            )?;
            if let Some(c) = a.correlation() {
                write!(self.out, ",\"correlation\":{c}")?;
            }
            if let Some(e) = capture.activity_external_id(a) {
                write!(self.out, ",\"External id\":{e}")?;
            }
            if let Some(bytes) = capture.activity_bytes(a) {
                write!(self.out, ",\"bytes\":{bytes}")?;
            }
            if let Some(graph) = capture.activity_graph_id(a) {
                write!(self.out, ",\"graph id\":{graph}")?;
            }
            if let Some(op) = a.hlo_op() {
                self.out.write_all(b",\"hlo_op\":")?;
                self.string(capture.name(op))?;
            }
            if let Some(module) = capture.hlo_module(a) {
                self.out.write_all(b",\"hlo_module\":")?;
                self.string(capture.name(module))?;
            }
            if let Some(program) = capture.program_id(a) {
                write!(self.out, ",\"program_id\":{program}")?;
            }
            self.out.write_all(b"}}")?;
        }
        Ok(())
    }

    fn gpu_annotations(&mut self, capture: &Capture) -> io::Result<()> {
        for annotation in capture.gpu_annotations() {
            let stream = capture.stream(annotation.stream);
            let device = capture.device(stream.device);
            let pid = self.gpu_pid(capture, annotation.stream);
            self.next_event()?;
            self.out
                .write_all(b"{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":")?;
            self.string(capture.name(annotation.name))?;
            write!(self.out, ",\"pid\":{pid},\"tid\":{},", stream.ordinal)?;
            self.times(annotation.start.0, annotation.dur.0)?;
            write!(self.out, ",\"args\":{{\"device\":{}}}}}", device.ordinal)?;
        }
        Ok(())
    }

    /// One arrow per linked activity, from its launch: ids are the arrows' positions, so
    /// that a launch with several activities (a graph launch) has one arrow to each.
    fn flows(&mut self, capture: &Capture) -> io::Result<()> {
        let mut id = 0u64;
        for a in capture.activities() {
            let Some(launch) = a.launch() else { continue };
            let launch = capture.host_event(launch);
            let thread = capture.thread(launch.thread);
            let pid = self.gpu_pid(capture, a.stream);
            let stream = capture.stream(a.stream).ordinal;
            self.next_event()?;
            write!(
                self.out,
                "{{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":{id},"
            )?;
            self.thread_ids(capture, thread)?;
            self.out.write_all(b",\"ts\":")?;
            write_micros(&mut self.out, launch.start.0)?;
            self.out.write_all(b"}")?;
            self.next_event()?;
            write!(
                self.out,
                "{{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":{id},\"pid\":{pid},\"tid\":{stream},\"ts\":"
            )?;
            write_micros(&mut self.out, a.start.0)?;
            self.out.write_all(b"}")?;
            id += 1;
        }
        Ok(())
    }
}

/// Integer nanoseconds as decimal microseconds: `1234567` → `1234.567`, `5000` → `5`.
fn write_micros(out: &mut impl Write, ns: i64) -> io::Result<()> {
    let sign = if ns < 0 { "-" } else { "" };
    let abs = ns.unsigned_abs();
    let (micros, frac) = (abs / 1000, abs % 1000);
    if frac == 0 {
        write!(out, "{sign}{micros}")
    } else {
        let digits = format!("{frac:03}");
        write!(out, "{sign}{micros}.{}", digits.trim_end_matches('0'))
    }
}

#[cfg(test)]
mod tests {
    use super::write_micros;

    fn micros(ns: i64) -> String {
        let mut out = Vec::new();
        write_micros(&mut out, ns).expect("writing to a Vec cannot fail");
        String::from_utf8(out).expect("ASCII")
    }

    #[test]
    fn nanoseconds_become_exact_microsecond_text() {
        let cases = [
            (0, "0"),
            (5_000, "5"),
            (1_234, "1.234"),
            (1_230, "1.23"),
            (1_200, "1.2"),
            (7, "0.007"),
            (-1_500, "-1.5"),
            (-7, "-0.007"),
            (1_733_877_925_987_393_218, "1733877925987393.218"),
            (1 << 62, "4611686018427387.904"),
            (-(1 << 62), "-4611686018427387.904"),
        ];
        for (ns, text) in cases {
            assert_eq!(micros(ns), text, "{ns}");
        }
    }
}
