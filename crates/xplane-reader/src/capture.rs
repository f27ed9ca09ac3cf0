//! XSpace → `trace_model::Capture`: devices, streams, GPU activities, host threads and events,
//! steps, and diagnostics; `CaptureBuilder::finish` then joins launches to activities.

use std::collections::BTreeMap;
use std::path::Path;

use trace_model::{
    ActivityDetails, ActivityKind, Capture, CaptureBuilder, Device, DeviceId, DeviceProperties,
    FastMap, Format, GpuActivity, HostEvent, HostKind, HostThread, KernelClass, Nanos, Step,
    StepSource, Stream, StreamId, StringId, ThreadId, Vendor, classify_kernel, memcpy_direction,
};

use crate::stream::{self, LineReader, Stop};
use crate::view::Line;
use crate::view::{DiagnosticKind, Event, Plane, Stat, StatValue};
use crate::{Error, XSpace};

/// Read a `.xplane.pb` and build its capture; the XSpace comes back too, for the HLO
/// programs and anything else the model does not keep, but without its events (its lines
/// are there, each with no events): those are in the capture.
///
/// The file is read a chunk of a line at a time, never whole (see `stream.rs`), so memory
/// peaks at about the size of the model, not the file plus the model. Errors are those of
/// [`XSpace::read`].
pub fn load_capture(path: &Path) -> Result<(Capture, XSpace), Error> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    match stream::read_skeleton(path) {
        Ok((mut space, lines)) => match build(&space, path, Some(lines)) {
            Ok(capture) => {
                space.drop_events();
                Ok((capture, space))
            }
            Err(Stop::Io(source)) => Err(io(source)),
            Err(Stop::Unexpected) => load_whole(path),
        },
        Err(Stop::Io(source)) => Err(io(source)),
        Err(Stop::Unexpected) => load_whole(path),
    }
}

/// `load_capture` the ordinary way: the whole file in memory, for files the streaming
/// reader does not take (and to report their errors in the usual words).
fn load_whole(path: &Path) -> Result<(Capture, XSpace), Error> {
    let mut space = XSpace::read(path)?;
    let capture = to_capture(&space, path);
    space.drop_events();
    Ok((capture, space))
}

/// Build the format-independent capture of a decoded XSpace; `path` only names places in
/// diagnostics.
pub fn to_capture(space: &XSpace, path: &Path) -> Capture {
    match build(space, path, None) {
        Ok(capture) => capture,
        Err(stop) => unreachable!("invariant: lines in memory are never read back ({stop:?})"),
    }
}

/// The capture of `space`, whose lines' events are read back through `lines` when given
/// (`load_capture`), else are in `space`'s bytes.
fn build(space: &XSpace, path: &Path, lines: Option<LineReader>) -> Result<Capture, Stop> {
    let mut builder = Builder {
        capture: CaptureBuilder::new(Format::XPlane),
        path,
        kernel_classes: FastMap::default(),
        source_index: 0,
        lines,
        long_names: FastMap::default(),
    };
    builder.devices(space)?;
    if let Some(host) = space.host_plane() {
        builder.host(host)?;
    }
    // The line buffer goes before `finish` needs its memory.
    builder.lines = None;
    builder.meta(space);
    Ok(builder.capture.finish(path))
}

struct Builder<'p> {
    capture: CaptureBuilder,
    path: &'p Path,
    kernel_classes: FastMap<String, KernelClass>,
    /// Running index over every event of the XSpace, in plane/line/event order.
    source_index: u64,
    /// Where the lines' events are read from, when they are not in the XSpace's bytes.
    lines: Option<LineReader>,
    /// Names longer than [`trace_model::limits::max_name_bytes`], cut, by where the text
    /// lies and its length: an XSpace interns a name once in its metadata and every event
    /// names it, so a long name is cut once, not once per event.
    long_names: FastMap<(usize, usize), StringId>,
}

impl Builder<'_> {
    /// The id of the name `text`, cut to [`trace_model::limits::max_name_bytes`] with its
    /// full length stated when longer (the cut counted in a `name-cut` diagnostic): a name
    /// is copied into every row and event of a text output.
    fn name(&mut self, text: &str) -> StringId {
        if text.len() <= trace_model::limits::max_name_bytes() {
            return self.capture.strings.intern(text);
        }
        let key = (text.as_ptr() as usize, text.len());
        if let Some(&id) = self.long_names.get(&key) {
            return id;
        }
        let cut = trace_model::limits::cut_text(text, text.len());
        let id = self.capture.strings.intern(&cut);
        self.long_names.insert(key, id);
        let limit = trace_model::limits::max_name_bytes();
        let place = self.path.display().to_string();
        self.capture.diagnostics.add(
            "name-cut",
            || {
                format!(
                    "names longer than {limit} bytes were cut, each followed by its full \
                     length (set TRACEWISE_MAX_NAME_BYTES to keep longer names)"
                )
            },
            || place,
        );
        id
    }

    fn devices(&mut self, space: &XSpace) -> Result<(), Stop> {
        // Exact capacity: a doubling vector of millions of activities would hold up to twice
        // their size, and three times while it grows.
        let planes = space.gpu_planes();
        let events = planes.iter().map(|plane| plane.event_count()).sum();
        self.capture.activities.reserve_exact(events);
        for plane in planes {
            let Some(ordinal) = plane.gpu_ordinal() else {
                continue;
            };
            let device = DeviceId::new(self.capture.devices.len() as u32);
            let caps = plane.device_capabilities();
            let vendor = match caps
                .vendor
                .as_deref()
                .map(str::to_ascii_lowercase)
                .as_deref()
            {
                Some(vendor) if vendor.contains("nvidia") => Vendor::Nvidia,
                Some(vendor) if vendor.contains("amd") => Vendor::Amd,
                _ => Vendor::Unknown,
            };
            let compute_capability = match (caps.compute_cap_major, caps.compute_cap_minor) {
                (Some(major), Some(minor)) => {
                    i64::try_from(major).ok().zip(i64::try_from(minor).ok())
                }
                _ => None,
            };
            self.capture.devices.push(Device {
                id: device,
                ordinal: i64::from(ordinal),
                vendor,
                properties: DeviceProperties {
                    name: plane
                        .stat("device_name")
                        .and_then(StatValue::as_str)
                        .map(str::to_owned),
                    compute_capability,
                    total_memory_bytes: caps.memory_size_bytes,
                    multiprocessors: caps.core_count,
                    clock_rate_khz: caps.clock_rate_khz,
                    memory_bandwidth_bytes_per_s: caps
                        .memory_bandwidth_bytes_per_s
                        .map(|value| value as f64),
                },
            });
            let mut streams: BTreeMap<i64, StreamId> = BTreeMap::new();
            // TensorFlow's device lines: its ops (one event per kernel, named by the op) and
            // its steps, kept once the device's streams are known.
            let mut tf_ops: Vec<(Nanos, Nanos, StringId)> = Vec::new();
            let mut compute_stream: Option<StreamId> = None;
            for line in plane.lines() {
                if line.stream_id().is_none() && line.name() == "Steps" {
                    let mut position = 0;
                    self.each_event(line, |builder, event| {
                        builder.source_index += 1;
                        let number = event
                            .stat("step_name")
                            .and_then(StatValue::as_str)
                            .unwrap_or(event.name())
                            .trim()
                            .parse::<i64>()
                            .unwrap_or(position);
                        position += 1;
                        let start = Nanos(event.start_ns());
                        let step = Step {
                            number,
                            start,
                            end: start + ps_to_nanos(event.duration_ps()),
                            source: StepSource::DeviceStepsLine,
                        };
                        builder.capture.meta.device_steps.push((device, step));
                    })?;
                    continue;
                }
                if line.stream_id().is_none() && line.name() == "TensorFlow Ops" {
                    self.each_event(line, |builder, event| {
                        builder.source_index += 1;
                        let name = builder.name(event.name());
                        let start = Nanos(event.start_ns());
                        tf_ops.push((start, ps_to_nanos(event.duration_ps()), name));
                    })?;
                    continue;
                }
                let Some(stream_ordinal) = line.stream_id() else {
                    self.source_index += line.event_count() as u64;
                    if line.event_count() > 0 {
                        let place = format!(
                            "{}: plane `{}`, line `{}`",
                            self.path.display(),
                            plane.name(),
                            line.name()
                        );
                        self.capture.diagnostics.add(
                            "device-line-skipped",
                            || "events on device lines that are not streams (e.g. `CUPTI overhead`) were not counted as GPU activities".to_owned(),
                            || place,
                        );
                    }
                    continue;
                };
                let next = StreamId::new(self.capture.streams.len() as u32);
                let stream = *streams.entry(stream_ordinal).or_insert_with(|| {
                    let name = self.name(line.name());
                    self.capture.streams.push(Stream {
                        id: next,
                        device,
                        ordinal: stream_ordinal,
                        name: Some(name),
                    });
                    next
                });
                if line.name().contains("(Compute)") {
                    compute_stream = compute_stream.or(Some(stream));
                }
                let line_name = line.name();
                self.each_event(line, |builder, event| {
                    builder.activity(stream, line_name, event);
                })?;
            }
            // TensorFlow's op of each kernel, as GPU annotations on the compute stream (the
            // line is the device's, and TensorFlow runs its ops' kernels there).
            if let Some(stream) = compute_stream.or_else(|| streams.values().next().copied()) {
                for (start, dur, name) in tf_ops {
                    self.capture
                        .gpu_annotations
                        .push(trace_model::GpuAnnotation {
                            stream,
                            start,
                            dur,
                            name,
                        });
                }
            }
        }
        // The capture's steps from the devices' `Steps` lines: per number, the union of
        // the devices' spans.
        let mut by_number: BTreeMap<i64, (Nanos, Nanos)> = BTreeMap::new();
        for (_, step) in &self.capture.meta.device_steps {
            let span = by_number
                .entry(step.number)
                .or_insert((step.start, step.end));
            span.0 = span.0.min(step.start);
            span.1 = span.1.max(step.end);
        }
        for (number, (start, end)) in by_number {
            self.capture.steps.push(Step {
                number,
                start,
                end,
                source: StepSource::DeviceStepsLine,
            });
        }
        Ok(())
    }

    /// Calls `f` on each event of `line`, in file order.
    fn each_event(
        &mut self,
        line: Line<'_>,
        mut f: impl FnMut(&mut Self, Event<'_>),
    ) -> Result<(), Stop> {
        let Some(mut lines) = self.lines.take() else {
            for event in line.events() {
                f(self, event);
            }
            return Ok(());
        };
        let (plane, raw) = line.raw();
        let result = lines.for_each_chunk(raw, |bytes, chunk| {
            for event in Line::over(bytes, plane, chunk).events() {
                f(self, event);
            }
        });
        self.lines = Some(lines);
        result
    }

    fn activity(&mut self, stream: StreamId, line_name: &str, event: Event<'_>) {
        let index = self.next_index();
        let name_text = event.name();
        let [
            memcpy_details,
            hlo_op,
            hlo_module,
            correlation,
            graph_id,
            graph_exec_id,
            program_id,
        ] = stats_by_name(
            event,
            [
                "memcpy_details",
                "hlo_op",
                "hlo_module",
                "correlation_id",
                "cuda_graph_id",
                "cuda_graph_exec_id",
                "program_id",
            ],
        );
        let memcpy_details = memcpy_details.and_then(StatValue::as_str);
        let (kind, class) = if let Some(details) = memcpy_details {
            (
                ActivityKind::Memcpy,
                KernelClass::Memcpy(memcpy_direction(details)),
            )
        } else if line_name.contains("Memset") || name_text.starts_with("Memset") {
            (ActivityKind::Memset, KernelClass::Memset)
        } else if line_name.contains("Memcpy") || name_text.starts_with("Memcpy") {
            (
                ActivityKind::Memcpy,
                KernelClass::Memcpy(memcpy_direction(name_text)),
            )
        } else {
            (ActivityKind::Kernel, self.kernel_class(name_text))
        };
        let bytes = memcpy_details.and_then(detail_size);
        let name = self.name(name_text);
        let hlo_op = self.intern_text(hlo_op);
        let hlo_module = self.intern_text(hlo_module);
        let mut activity = GpuActivity::new(
            stream,
            Nanos(event.start_ns()),
            ps_to_nanos(event.duration_ps()),
            name,
            kind,
            class,
            index,
        );
        activity.set_correlation(correlation.and_then(StatValue::as_u64));
        activity.set_hlo_op(hlo_op);
        let details = ActivityDetails {
            external_id: None,
            bytes,
            graph_id: graph_id.or(graph_exec_id).and_then(StatValue::as_i64),
            hlo_module,
            program_id: program_id.and_then(StatValue::as_i64),
        };
        self.capture.push_activity(activity, details);
    }

    fn host(&mut self, plane: Plane<'_>) -> Result<(), Stop> {
        self.capture.host_events.reserve_exact(plane.event_count());
        let mut steps: BTreeMap<i64, (Nanos, Nanos)> = BTreeMap::new();
        for line in plane.lines() {
            let thread = ThreadId::new(self.capture.threads.len() as u32);
            let name = self.name(line.name());
            self.capture.threads.push(HostThread {
                id: thread,
                pid: plane.id(),
                tid: line.id(),
                name: Some(name),
                pid_text: None,
                tid_text: None,
            });
            self.each_event(line, |builder, event| {
                let index = builder.next_index();
                let name_text = event.name();
                let [correlation, step_num, hlo_op] =
                    stats_by_name(event, ["correlation_id", "step_num", "hlo_op"]);
                let correlation = correlation.and_then(StatValue::as_u64);
                let step_num = step_num.and_then(StatValue::as_i64);
                let kind = if is_launch_api(name_text) || correlation.is_some() {
                    HostKind::Launch
                } else if step_num.is_some() {
                    HostKind::Annotation
                } else if hlo_op.is_some() {
                    HostKind::CpuOp
                } else if name_text.starts_with('$') {
                    HostKind::PythonFrame
                } else {
                    HostKind::Other
                };
                let start = Nanos(event.start_ns());
                let dur = ps_to_nanos(event.duration_ps());
                if let Some(number) = step_num {
                    let span = steps.entry(number).or_insert((start, start + dur));
                    span.0 = span.0.min(start);
                    span.1 = span.1.max(start + dur);
                }
                let name = builder.name(name_text);
                let mut event = HostEvent::new(thread, start, dur, name, kind, index);
                event.set_correlation(correlation);
                builder.capture.push_host_event(event, None);
            })?;
        }
        for (number, (start, end)) in steps {
            // A device's `Steps` line (TensorFlow) already gave this step.
            if self.capture.steps.iter().any(|s| s.number == number) {
                continue;
            }
            self.capture.steps.push(Step {
                number,
                start,
                end,
                source: StepSource::StepMarker,
            });
        }
        Ok(())
    }

    fn meta(&mut self, space: &XSpace) {
        let meta = &mut self.capture.meta;
        if let Some(plane) = space.metadata_plane() {
            let version = |name: &str| {
                plane
                    .stat(name)
                    .and_then(StatValue::as_str)
                    .map(str::to_owned)
            };
            meta.producer = match (version("jaxlib_version"), version("jax_version")) {
                (Some(jaxlib), _) => Some(format!("jaxlib {jaxlib}")),
                (None, Some(jax)) => Some(format!("jax {jax}")),
                _ => Some("XSpace (jax.profiler / XProf)".to_owned()),
            };
        } else if let Some(what) = tensorflow_lines(space) {
            // TensorFlow's profiler writes no HLO metadata plane, and lines of its own.
            meta.producer = Some(format!("TensorFlow profiler (XSpace; {what})"));
        }
        if let Some((start, stop)) = space.profile_window_ns()
            && let (Ok(start), Ok(stop)) = (i64::try_from(start), i64::try_from(stop))
        {
            // The window is in Unix-epoch ns; JAX 0.8 ROCm lines use a session-relative base,
            // so only keep the window when the events fall inside it.
            let inside = self
                .capture
                .activities
                .iter()
                .map(|activity| activity.start)
                .chain(self.capture.host_events.iter().map(|event| event.start));
            let mut any = false;
            let mut all_inside = true;
            for time in inside {
                any = true;
                all_inside &= time.0 >= start && time.0 <= stop;
            }
            if any && all_inside {
                meta.window = Some((Nanos(start), Nanos(stop)));
            } else if any {
                let place = format!("{}: plane `Task Environment`", self.path.display());
                self.capture.diagnostics.add(
                    "profile-window-off-axis",
                    || "the profile start/stop times are not on the events' time axis (session-relative line timestamps); the window was dropped".to_owned(),
                    || place,
                );
            }
        }
        for diagnostic in space.diagnostics() {
            let code = match diagnostic.kind {
                DiagnosticKind::NoGpuDevicePlanes => "no-gpu-device-planes",
                DiagnosticKind::MissingHloProto => "missing-hlo-proto",
                DiagnosticKind::DuplicateProgram => "duplicate-program",
                _ => "profiler-message",
            };
            let message = diagnostic.message.clone();
            let place = format!("{}", self.path.display());
            self.capture.diagnostics.add(code, || message, || place);
        }
    }

    fn intern_text(&mut self, value: Option<StatValue<'_>>) -> Option<StringId> {
        let text = value.and_then(StatValue::as_str)?;
        Some(self.name(text))
    }

    /// `classify_kernel`, once per distinct name (a capture repeats a few hundred names).
    fn kernel_class(&mut self, name: &str) -> KernelClass {
        // A long name is classified by the part a cut keeps: looking a 20 MB name up once
        // per event hashed it each time.
        let mut keep = name.len().min(trace_model::limits::max_name_bytes());
        while !name.is_char_boundary(keep) {
            keep -= 1;
        }
        let name = &name[..keep];
        if let Some(class) = self.kernel_classes.get(name) {
            return *class;
        }
        let class = classify_kernel(name);
        self.kernel_classes.insert(name.to_owned(), class);
        class
    }

    fn next_index(&mut self) -> u64 {
        let index = self.source_index;
        self.source_index += 1;
        index
    }
}

/// Several stats of an event in one pass over its stats, each as [`Event::stat`] finds it:
/// the event's own first match by name, else its metadata's.
fn stats_by_name<'a, const N: usize>(
    event: Event<'a>,
    names: [&str; N],
) -> [Option<StatValue<'a>>; N] {
    let mut found = [None; N];
    fill_stats(&mut found, &names, event.stats());
    if found.iter().any(Option::is_none)
        && let Some(meta) = event.metadata()
    {
        let mut from_metadata = [None; N];
        fill_stats(&mut from_metadata, &names, meta.stats());
        for (value, metadata_value) in found.iter_mut().zip(from_metadata) {
            if value.is_none() {
                *value = metadata_value;
            }
        }
    }
    found
}

/// The first stat of each name among `stats`.
fn fill_stats<'a, const N: usize>(
    found: &mut [Option<StatValue<'a>>; N],
    names: &[&str; N],
    stats: impl Iterator<Item = Stat<'a>>,
) {
    for stat in stats {
        let name = stat.name();
        if let Some(slot) = names.iter().position(|wanted| *wanted == name)
            && found[slot].is_none()
        {
            found[slot] = Some(stat.value());
        }
    }
}

/// Picoseconds → nanoseconds, rounded to nearest (the Chrome-trace converter keeps ns).
/// What marks an XSpace as TensorFlow's: its device lines (`TensorFlow Ops`, `Steps`,
/// `TensorFlow Name Scope`) or its host executor threads (`tf_Compute/...`), in words.
fn tensorflow_lines(space: &XSpace) -> Option<String> {
    let mut found = Vec::new();
    for plane in space.gpu_planes() {
        for line in plane.lines() {
            let name = line.name();
            if ["TensorFlow Ops", "TensorFlow Name Scope"].contains(&name)
                && !found.iter().any(|f: &String| f == name)
            {
                found.push(name.to_owned());
            }
        }
    }
    if let Some(host) = space.host_plane()
        && host.lines().any(|l| l.name().starts_with("tf_Compute"))
    {
        found.push("tf_Compute host threads".to_owned());
    }
    (!found.is_empty()).then(|| format!("lines {}", found.join(", ")))
}

fn ps_to_nanos(ps: i64) -> Nanos {
    Nanos(ps.saturating_add(500).div_euclid(1000))
}

/// Whether a runtime/driver API call launches GPU work.
fn is_launch_api(name: &str) -> bool {
    name.contains("Launch")
        || ["cuda", "hip", "cu"].iter().any(|prefix| {
            name.strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with("Memcpy") || rest.starts_with("Memset"))
        })
}

/// `size:N` of `memcpy_details` (`kind:.. size:.. dest:.. async:..`).
fn detail_size(details: &str) -> Option<u64> {
    details
        .split_whitespace()
        .find_map(|part| part.strip_prefix("size:"))
        .and_then(|size| size.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The streamed build and the whole-file build of one file give the same capture, and
    /// the streamed one did not fall back.
    fn check_streamed(path: &Path) {
        check_streamed_in_chunks(path, None);
    }

    /// `check_streamed`, reading lines `chunk` bytes at a time when given (so that fields
    /// cut by a chunk's end are met in small files).
    fn check_streamed_in_chunks(path: &Path, chunk: Option<usize>) {
        let (space, mut lines) = stream::read_skeleton(path)
            .unwrap_or_else(|stop| panic!("{}: streaming stopped: {stop:?}", path.display()));
        if let Some(chunk) = chunk {
            lines.chunk = chunk;
        }
        let streamed = build(&space, path, Some(lines))
            .unwrap_or_else(|stop| panic!("{}: second pass stopped: {stop:?}", path.display()));
        let whole = to_capture(&XSpace::read(path).expect("reads whole"), path);
        assert_eq!(
            streamed.activities(),
            whole.activities(),
            "{}",
            path.display()
        );
        assert_eq!(streamed.host_events(), whole.host_events());
        assert_eq!(streamed.steps(), whole.steps());
        assert_eq!(streamed.devices(), whole.devices());
        assert_eq!(streamed.streams(), whole.streams());
        assert_eq!(streamed.threads(), whole.threads());
        assert_eq!(streamed.gpu_annotations(), whole.gpu_annotations());
        assert_eq!(streamed.meta(), whole.meta());
        assert_eq!(streamed.diagnostics(), whole.diagnostics());
        assert_eq!(streamed.strings().len(), whole.strings().len());
        let (_, returned) = load_capture(path).expect("loads");
        let events: usize = returned.planes().map(|plane| plane.event_count()).sum();
        assert_eq!(events, 0, "load_capture's XSpace holds no events");
        assert_eq!(
            returned.hlo_programs(),
            XSpace::read(path).expect("reads whole").hlo_programs()
        );
    }

    fn files(dir: &Path) -> Vec<std::path::PathBuf> {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.expect("readable").path())
            .filter(|path| path.to_string_lossy().ends_with(".xplane.pb"))
            .collect();
        files.sort();
        files
    }

    #[test]
    fn streamed_load_equals_whole_file_load() {
        let root = test_support::workspace_root();
        let mut checked = 0;
        for folder in [
            "testdata/xplane/ok",
            "testdata/xplane/odd",
            "testdata/attribution",
        ] {
            for path in files(&root.join(folder)) {
                check_streamed(&path);
                for chunk in [1, 5, 64, 1000] {
                    check_streamed_in_chunks(&path, Some(chunk));
                }
                checked += 1;
            }
        }
        assert!(checked >= 8, "{checked} fixtures");
        if let Some(traces) = test_support::real_traces("streamed_load_equals_whole_file_load") {
            let real = traces.xspaces;
            assert!(real.len() >= 6, "{} real XSpaces", real.len());
            for x in real {
                check_streamed(&x.path);
            }
        }
    }

    /// A file the streaming reader does not take fails as `XSpace::read` fails.
    #[test]
    fn streamed_errors_are_whole_file_errors() {
        let root = test_support::workspace_root();
        let bad = files(&root.join("testdata/xplane/err"));
        assert!(bad.len() >= 7);
        for path in bad {
            let streamed = load_capture(&path).map(|_| ()).unwrap_err().to_string();
            let whole = XSpace::read(&path).map(|_| ()).unwrap_err().to_string();
            assert_eq!(streamed, whole);
        }
        let missing = root.join("testdata/xplane/no-such.xplane.pb");
        let err = load_capture(&missing).map(|_| ()).unwrap_err().to_string();
        assert_eq!(err, format!("{}: cannot read", missing.display()));
    }

    /// A 1 MB kernel name in the event metadata, named by 2,000 events: interned once, cut
    /// to the name limit with its full length, in one `name-cut` diagnostic; the streamed
    /// and whole-file builds agree.
    #[test]
    fn a_long_interned_name_is_cut_once() {
        use prost::Message;

        use crate::generated::{self as proto, x_event};
        let long = "k".repeat(1 << 20);
        let events = (0..2_000)
            .map(|i| proto::XEvent {
                metadata_id: 5,
                data: Some(x_event::Data::OffsetPs(i * 10_000)),
                duration_ps: 5_000,
                stats: Vec::new(),
            })
            .collect();
        let plane = proto::XPlane {
            id: 9,
            name: "/device:GPU:0".to_owned(),
            event_metadata: [(
                5,
                proto::XEventMetadata {
                    id: 5,
                    name: long.clone(),
                    ..Default::default()
                },
            )]
            .into_iter()
            .collect(),
            lines: vec![proto::XLine {
                id: 1,
                name: "Stream #16(Compute)".to_owned(),
                timestamp_ns: 2_000,
                events,
                ..Default::default()
            }],
            ..Default::default()
        };
        let bytes = proto::XSpace {
            planes: vec![plane],
            ..Default::default()
        }
        .encode_to_vec();
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("long.xplane.pb");
        std::fs::write(&path, &bytes).expect("written");
        check_streamed(&path);
        let (capture, _) = load_capture(&path).expect("loads");
        assert_eq!(capture.activities().len(), 2_000);
        let names: std::collections::BTreeSet<_> = capture
            .activities()
            .iter()
            .map(|a| capture.name(a.name))
            .collect();
        assert_eq!(names.len(), 1, "one interned name");
        let name = names.into_iter().next().expect("one");
        assert!(
            name.len() <= trace_model::limits::max_name_bytes(),
            "{}",
            name.len()
        );
        assert!(name.ends_with("[cut: 1048576 bytes]"));
        let cut = capture
            .diagnostics()
            .iter()
            .find(|d| d.code == "name-cut")
            .expect("a name-cut diagnostic");
        assert_eq!(cut.count, 1);
    }

    #[test]
    fn helpers() {
        assert_eq!(ps_to_nanos(1_499), Nanos(1));
        assert_eq!(ps_to_nanos(1_500), Nanos(2));
        assert_eq!(
            detail_size("kind:Unknown size:4096 dest:512 async:1"),
            Some(4096)
        );
        assert!(is_launch_api("hipModuleLaunchKernel"));
        assert!(is_launch_api("hipMemcpyDtoDAsync"));
        assert!(!is_launch_api("hipStreamSynchronize"));
    }
}
