//! The model builder: raw Chrome trace events → `trace_model::Capture`.
//!
//! One streaming pass collects a compact record per useful event; a second pass over
//! those records (after process and thread names are known, since producers write
//! metadata events anywhere in the file) sorts them into devices, streams, threads,
//! GPU activities and host events, then joins launches to activities by correlation id
//! and launches to their enclosing CPU op.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny};
use trace_model::{
    ActivityKind, Capture, Device, DeviceId, DeviceProperties, Format, GpuActivity, GpuAnnotation,
    HostEvent, HostEventId, HostKind, HostThread, KernelClass, Nanos, ProcessGroup, Step,
    StepSource, Stream, StreamId, StringId, ThreadId, Vendor, classify_kernel, memcpy_direction,
};

use crate::{Error, Id, RawEvent, TopLevel, decode_args};

/// Reads the trace at `path` (plain or gzip JSON) into a capture.
pub fn load(path: &Path) -> Result<Capture, Error> {
    let input = crate::open(path)?;
    load_from(input, path)
}

/// Reads a trace from already-decompressed JSON text; `path` names it in errors.
pub fn load_from(input: impl std::io::Read, path: &Path) -> Result<Capture, Error> {
    let mut b = Builder::new(path);
    let top = crate::read_raw_events(input, path, |ev| b.event(ev))?;
    b.finish(&top)
}

/// One rank's capture from a directory of rank files.
#[derive(Debug)]
pub struct RankCapture {
    pub path: std::path::PathBuf,
    /// From `distributedInfo.rank`, else from the first number in the file name.
    pub rank: Option<i64>,
    pub capture: Capture,
}

/// Trace files in a directory: `*.json` and `*.json.gz`, sorted by name.
pub fn trace_files(dir: &Path) -> Result<Vec<std::path::PathBuf>, Error> {
    let entries = std::fs::read_dir(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        offset: 0,
        source,
    })?;
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            p.is_file() && (name.ends_with(".json") || name.ends_with(".json.gz"))
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(Error::EmptyDirectory {
            path: dir.to_path_buf(),
        });
    }
    Ok(files)
}

/// Loads every trace file of a directory (one per rank), in parallel, ordered by rank.
pub fn load_dir(dir: &Path) -> Result<Vec<RankCapture>, Error> {
    let files = trace_files(dir)?;
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<Result<(usize, Capture), Error>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads.min(files.len()))
            .map(|_| {
                s.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(file) = files.get(i) else { break };
                        out.push(load(file).map(|c| (i, c)));
                    }
                    out
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("loader threads do not panic"))
            .collect()
    });
    let mut ranks = Vec::with_capacity(files.len());
    for r in results {
        let (i, capture) = r?;
        let path = files[i].clone();
        let rank = capture.meta.rank.or_else(|| rank_from_file_name(&path));
        ranks.push(RankCapture {
            path,
            rank,
            capture,
        });
    }
    ranks.sort_by(|a, b| (a.rank, &a.path).cmp(&(b.rank, &b.path)));
    Ok(ranks)
}

/// The rank in names like `rank3.json.gz`, `rank-3.json`, `worker3_step_12.pt.trace.json`.
pub fn rank_from_file_name(path: &Path) -> Option<i64> {
    let name = path.file_name()?.to_str()?;
    let digits: String = name
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

const KINETO_GPU_CATS: &[&str] = &["kernel", "Kernel", "gpu_memcpy", "gpu_memset"];
const KINETO_RUNTIME_CATS: &[&str] = &["cuda_runtime", "cuda_driver", "Runtime", "hip_runtime"];

/// Whether a runtime/driver API call launches GPU work.
fn is_launch_api(name: &str) -> bool {
    name.contains("Launch")
        || ["cuda", "hip", "cu"].iter().any(|prefix| {
            name.strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with("Memcpy") || rest.starts_with("Memset"))
        })
}

/// An integer given as a JSON number or as a string holding one (JAX writes strings).
fn flex_int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Flex<'a> {
        I(i64),
        U(u64),
        F(f64),
        #[serde(borrow)]
        S(Cow<'a, str>),
        Other(IgnoredAny),
    }
    Ok(match Option::<Flex>::deserialize(d)? {
        Some(Flex::I(v)) => Some(v),
        Some(Flex::U(v)) => i64::try_from(v).ok(),
        Some(Flex::F(v)) if v.fract() == 0.0 => Some(v as i64),
        Some(Flex::S(s)) => s.trim().parse().ok(),
        _ => None,
    })
}

/// The `args` keys the builder reads.
#[derive(Deserialize, Default)]
struct KnownArgs<'a> {
    #[serde(default, deserialize_with = "flex_int")]
    correlation: Option<i64>,
    #[serde(default, deserialize_with = "flex_int")]
    correlation_id: Option<i64>,
    #[serde(rename = "External id", default, deserialize_with = "flex_int")]
    external_id: Option<i64>,
    #[serde(default, deserialize_with = "flex_int")]
    stream: Option<i64>,
    #[serde(default, deserialize_with = "flex_int")]
    device: Option<i64>,
    #[serde(default, deserialize_with = "flex_int")]
    bytes: Option<i64>,
    #[serde(rename = "graph id", default, deserialize_with = "flex_int")]
    graph_id: Option<i64>,
    #[serde(default, deserialize_with = "flex_int")]
    program_id: Option<i64>,
    #[serde(borrow, default)]
    hlo_op: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    hlo_module: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    memcpy_details: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "flex_int")]
    step_num: Option<i64>,
}

/// A complete (`X`) event, compactly, until the whole file has been seen.
struct Pending {
    pid: i64,
    tid: i64,
    start: i64,
    dur: i64,
    name: StringId,
    cat: Option<StringId>,
    index: u64,
    correlation: Option<i64>,
    external_id: Option<i64>,
    extra: Option<Box<Extra>>,
}

/// Fields only GPU activities have; boxed so host events stay small.
#[derive(Default)]
struct Extra {
    stream: Option<i64>,
    device: Option<i64>,
    bytes: Option<i64>,
    graph_id: Option<i64>,
    program_id: Option<i64>,
    hlo_op: Option<StringId>,
    hlo_module: Option<StringId>,
    memcpy_details: Option<StringId>,
}

struct Builder<'p> {
    path: &'p Path,
    capture: Capture,
    pending: Vec<Pending>,
    process_names: BTreeMap<i64, String>,
    thread_names: BTreeMap<(i64, i64), String>,
    string_ids: HashMap<String, i64>,
    flows: HashMap<(StringId, i64), (u32, u32, usize)>,
    step_markers: Vec<(i64, i64, i64)>,
    devices: BTreeMap<i64, DeviceId>,
    streams: BTreeMap<(i64, i64), StreamId>,
    threads: BTreeMap<(i64, i64), ThreadId>,
    gpu_pid_ordinal: BTreeMap<i64, i64>,
}

impl<'p> Builder<'p> {
    fn new(path: &'p Path) -> Self {
        Builder {
            path,
            capture: Capture::new(Format::OtherJson),
            pending: Vec::new(),
            process_names: BTreeMap::new(),
            thread_names: BTreeMap::new(),
            string_ids: HashMap::new(),
            flows: HashMap::new(),
            step_markers: Vec::new(),
            devices: BTreeMap::new(),
            streams: BTreeMap::new(),
            threads: BTreeMap::new(),
            gpu_pid_ordinal: BTreeMap::new(),
        }
    }

    fn place(&self, ev: &RawEvent<'_>, field: &str) -> String {
        format!(
            "{}: event {} (byte {}), field {field}",
            self.path.display(),
            ev.index,
            ev.offset
        )
    }

    /// Integer key for a pid/tid; string ids get stable negative keys.
    fn id_key(&mut self, id: Option<&Id<'_>>) -> i64 {
        match id {
            None => 0,
            Some(id) => match id.as_i64() {
                Some(v) => v,
                None => {
                    let s = id.to_string();
                    let next = -(self.string_ids.len() as i64) - 1_000_000_000_000;
                    *self.string_ids.entry(s).or_insert(next)
                }
            },
        }
    }

    fn time(&self, ev: &RawEvent<'_>, field: &'static str) -> Result<Option<i64>, Error> {
        let n = if field == "ts" { ev.ts } else { ev.dur };
        match n {
            None => Ok(None),
            Some(n) => n.micros_to_nanos().map(Some).ok_or_else(|| Error::Event {
                path: self.path.to_path_buf(),
                index: ev.index,
                offset: ev.offset,
                message: format!(
                    "field \"{field}\": {:?} is not a number of microseconds",
                    n.text()
                ),
            }),
        }
    }

    fn event(&mut self, ev: RawEvent<'_>) -> Result<(), Error> {
        match ev.ph.as_ref() {
            "X" => self.complete(ev),
            "M" => {
                let args: Option<KnownArgs> = decode_args(self.path, &ev)?;
                let name = args.and_then(|a| a.name).map(|n| n.into_owned());
                let pid = self.id_key(ev.pid.as_ref());
                match (ev.name.as_deref(), name) {
                    (Some("process_name"), Some(n)) => {
                        self.process_names.insert(pid, n);
                    }
                    (Some("thread_name"), Some(n)) => {
                        let tid = self.id_key(ev.tid.as_ref());
                        self.thread_names.insert((pid, tid), n);
                    }
                    _ => {}
                }
                Ok(())
            }
            "s" | "f" | "t" => {
                let cat = self.capture.strings.intern(ev.cat.as_deref().unwrap_or(""));
                let Some(id) = ev.id.as_ref().and_then(Id::as_i64) else {
                    return Ok(());
                };
                let entry = self.flows.entry((cat, id)).or_insert((0, 0, ev.index));
                if ev.ph == "s" {
                    entry.0 += 1;
                } else if ev.ph == "f" {
                    entry.1 += 1;
                }
                Ok(())
            }
            "B" | "E" => {
                let place = self.place(&ev, "ph");
                self.capture.diagnostics.add(
                    "begin-end-ignored",
                    || {
                        "begin/end (B/E) events are not read; only complete (X) events are"
                            .to_string()
                    },
                    || place,
                );
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn complete(&mut self, ev: RawEvent<'_>) -> Result<(), Error> {
        let Some(start) = self.time(&ev, "ts")? else {
            let place = self.place(&ev, "ts");
            self.capture.diagnostics.add(
                "missing-timestamp",
                || "complete events without \"ts\" were skipped".to_string(),
                || place,
            );
            return Ok(());
        };
        let dur = match self.time(&ev, "dur")? {
            Some(d) if d < 0 => {
                let place = self.place(&ev, "dur");
                self.capture.diagnostics.add(
                    "negative-duration",
                    || "events with a negative \"dur\" were given duration 0".to_string(),
                    || place,
                );
                0
            }
            Some(d) => d,
            None => {
                let place = self.place(&ev, "dur");
                self.capture.diagnostics.add(
                    "missing-duration",
                    || "complete events without \"dur\" were given duration 0".to_string(),
                    || place,
                );
                0
            }
        };
        let cat = ev.cat.as_deref();
        let name_text = ev.name.as_deref().unwrap_or("");
        // Python frames carry nothing the model needs beyond time and name.
        let args: KnownArgs = if cat == Some("python_function") {
            KnownArgs::default()
        } else {
            decode_args(self.path, &ev)?.unwrap_or_default()
        };
        if let Some(step) = args.step_num {
            self.step_markers.push((step, start, start + dur));
        }
        let name = self.capture.strings.intern(name_text);
        let cat = cat.map(|c| self.capture.strings.intern(c));
        let pid = self.id_key(ev.pid.as_ref());
        let tid = self.id_key(ev.tid.as_ref());
        let has_gpu_fields = args.stream.is_some()
            || args.device.is_some()
            || args.bytes.is_some()
            || args.graph_id.is_some()
            || args.hlo_op.is_some()
            || args.program_id.is_some()
            || args.memcpy_details.is_some();
        let extra = has_gpu_fields.then(|| {
            let strings = &mut self.capture.strings;
            Box::new(Extra {
                stream: args.stream,
                device: args.device,
                bytes: args.bytes,
                graph_id: args.graph_id,
                program_id: args.program_id,
                hlo_op: args.hlo_op.as_deref().map(|s| strings.intern(s)),
                hlo_module: args.hlo_module.as_deref().map(|s| strings.intern(s)),
                memcpy_details: args.memcpy_details.as_deref().map(|s| strings.intern(s)),
            })
        });
        let p = Pending {
            pid,
            tid,
            start,
            dur,
            name,
            cat,
            index: ev.index as u64,
            correlation: args.correlation.or(args.correlation_id),
            external_id: args.external_id,
            extra,
        };
        if p.cat.is_some() {
            self.route(p, false);
        } else {
            self.pending.push(p);
        }
        Ok(())
    }

    /// Sorts one complete event into the capture. Kineto events (with a category) are
    /// routed as they stream by; JAX events (no category) once process names are known.
    fn route(&mut self, p: Pending, is_jax: bool) {
        let cat = p.cat.map(|c| self.capture.strings.get(c).to_owned());
        let cat = cat.as_deref();
        let gpu = if is_jax {
            self.gpu_pid_ordinal.get(&p.pid).copied().map(|ordinal| {
                let line = self.thread_names.get(&(p.pid, p.tid));
                let is_stream = line.is_none_or(|l| l.starts_with("Stream"));
                (ordinal, is_stream)
            })
        } else if cat.is_some_and(|c| KINETO_GPU_CATS.contains(&c)) {
            let ordinal = p.extra.as_ref().and_then(|e| e.device).unwrap_or(p.pid);
            Some((ordinal, true))
        } else if cat == Some("gpu_user_annotation") {
            let ordinal = p.extra.as_ref().and_then(|e| e.device).unwrap_or(p.pid);
            let stream = self.stream_id(ordinal, p.tid);
            self.capture.gpu_annotations.push(GpuAnnotation {
                stream,
                start: Nanos(p.start),
                dur: Nanos(p.dur),
                name: p.name,
            });
            return;
        } else {
            None
        };
        match gpu {
            Some((_, false)) => {
                let place = format!("{}: event {}", self.path.display(), p.index);
                self.capture.diagnostics.add(
                    "device-line-skipped",
                    || "events on device lines that are not streams (e.g. XLA op summaries) were not counted as GPU activities".to_string(),
                    || place,
                );
            }
            Some((ordinal, true)) => self.gpu_activity(ordinal, p, cat, is_jax),
            None => {
                let kind = host_kind(cat, self.capture.strings.get(p.name), is_jax, &p);
                let Some(kind) = kind else { return };
                let key = (p.pid, p.tid);
                let next = ThreadId(self.threads.len() as u32);
                let thread = *self.threads.entry(key).or_insert(next);
                if kind == HostKind::Annotation || kind == HostKind::CpuOp {
                    let name = self.capture.strings.get(p.name);
                    if let Some(n) = name
                        .strip_prefix("ProfilerStep#")
                        .and_then(|n| n.parse().ok())
                        && !self.capture.steps.iter().any(|s| s.number == n)
                    {
                        self.capture.steps.push(Step {
                            number: n,
                            start: Nanos(p.start),
                            end: Nanos(p.start + p.dur),
                            source: StepSource::ProfilerStep,
                        });
                    }
                }
                if cat == Some("Trace") && self.capture.meta.window.is_none() {
                    self.capture.meta.window = Some((Nanos(p.start), Nanos(p.start + p.dur)));
                }
                self.capture.host_events.push(HostEvent {
                    thread,
                    start: Nanos(p.start),
                    dur: Nanos(p.dur),
                    name: p.name,
                    kind,
                    correlation: p.correlation.and_then(|c| u64::try_from(c).ok()),
                    external_id: p.external_id,
                    parent_op: None,
                    source_index: p.index,
                });
            }
        }
    }

    fn finish(mut self, top: &TopLevel) -> Result<Capture, Error> {
        self.read_top_level(top)?;
        let is_jax = self
            .process_names
            .values()
            .any(|n| n.starts_with("/device:") || n.starts_with("/host:"));
        let strings = &self.capture.strings;
        let has_kineto_cats = ["kernel", "cpu_op", "Kernel", "cuda_runtime"]
            .iter()
            .any(|c| strings.find(c).is_some());
        self.capture.format = if is_jax {
            Format::JaxTraceJson
        } else if has_kineto_cats || top.get("schemaVersion").is_some() {
            Format::KinetoJson
        } else {
            Format::OtherJson
        };
        let kineto_devices = top
            .get("deviceProperties")
            .map(|raw| parse_device_properties(raw.get()))
            .unwrap_or_default();
        self.gpu_pid_ordinal = self
            .process_names
            .iter()
            .filter_map(|(&pid, name)| {
                let rest = name.strip_prefix("/device:GPU:")?;
                let n: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
                Some((pid, n.parse().ok()?))
            })
            .collect();
        for p in std::mem::take(&mut self.pending) {
            self.route(p, is_jax);
        }
        if self.capture.steps.is_empty() && !self.step_markers.is_empty() {
            self.step_markers.sort();
            for &(n, start, end) in &self.step_markers {
                match self.capture.steps.iter_mut().find(|s| s.number == n) {
                    Some(s) => {
                        s.start = s.start.min(Nanos(start));
                        s.end = s.end.max(Nanos(end));
                    }
                    None => self.capture.steps.push(Step {
                        number: n,
                        start: Nanos(start),
                        end: Nanos(end),
                        source: StepSource::StepMarker,
                    }),
                }
            }
        }
        for (&(pid, tid), &id) in &self.threads {
            let name = self
                .thread_names
                .get(&(pid, tid))
                .map(|n| self.capture.strings.intern(n));
            self.capture.threads.push(HostThread { id, pid, tid, name });
        }
        self.capture.threads.sort_by_key(|t| t.id);
        let devices = std::mem::take(&mut self.devices);
        self.finish_devices(&devices, &kineto_devices);
        self.capture.finish();
        self.link();
        self.count_flows();
        Ok(self.capture)
    }

    fn stream_id(&mut self, ordinal: i64, stream: i64) -> StreamId {
        let next_device = DeviceId(self.devices.len() as u32);
        let device = *self.devices.entry(ordinal).or_insert(next_device);
        let next = StreamId(self.streams.len() as u32);
        *self.streams.entry((ordinal, stream)).or_insert_with(|| {
            self.capture.streams.push(Stream {
                id: next,
                device,
                ordinal: stream,
                name: None,
            });
            next
        })
    }

    fn gpu_activity(&mut self, ordinal: i64, p: Pending, cat: Option<&str>, is_jax: bool) {
        let extra = p.extra.as_deref();
        let stream_no = if is_jax {
            let line = self.thread_names.get(&(p.pid, p.tid));
            line.and_then(|l| stream_number(l)).unwrap_or(p.tid)
        } else {
            match extra.and_then(|e| e.stream) {
                Some(s) => s,
                None => {
                    let place = format!(
                        "{}: event {}, field args.stream",
                        self.path.display(),
                        p.index
                    );
                    self.capture.diagnostics.add(
                        "kernel-without-stream",
                        || "GPU activities without args.stream were placed on the stream named by their tid".to_string(),
                        || place,
                    );
                    p.tid
                }
            }
        };
        let stream = self.stream_id(ordinal, stream_no);
        if is_jax && let Some(line) = self.thread_names.get(&(p.pid, p.tid)) {
            let id = self.capture.strings.intern(line);
            self.capture.streams[stream.0 as usize].name = Some(id);
        }
        let name = self.capture.strings.get(p.name);
        let (kind, class) = match cat {
            Some("gpu_memcpy") => (
                ActivityKind::Memcpy,
                KernelClass::Memcpy(memcpy_direction(name)),
            ),
            Some("gpu_memset") => (ActivityKind::Memset, KernelClass::Memset),
            _ => match extra.and_then(|e| e.memcpy_details) {
                Some(d) if is_jax => (
                    ActivityKind::Memcpy,
                    KernelClass::Memcpy(memcpy_direction(self.capture.strings.get(d))),
                ),
                _ => {
                    let class = classify_kernel(name);
                    let kind = match class {
                        KernelClass::Memcpy(_) if name.starts_with("Memcpy") => {
                            ActivityKind::Memcpy
                        }
                        KernelClass::Memset if name.starts_with("Memset") => ActivityKind::Memset,
                        _ => ActivityKind::Kernel,
                    };
                    (kind, class)
                }
            },
        };
        self.capture.activities.push(GpuActivity {
            stream,
            start: Nanos(p.start),
            dur: Nanos(p.dur),
            name: p.name,
            kind,
            class,
            correlation: p.correlation.and_then(|c| u64::try_from(c).ok()),
            launch: None,
            external_id: p.external_id,
            bytes: extra
                .and_then(|e| e.bytes)
                .and_then(|b| u64::try_from(b).ok()),
            graph_id: extra.and_then(|e| e.graph_id),
            hlo_op: extra.and_then(|e| e.hlo_op),
            hlo_module: extra.and_then(|e| e.hlo_module),
            program_id: extra.and_then(|e| e.program_id),
            source_index: p.index,
        });
    }

    fn read_top_level(&mut self, top: &TopLevel) -> Result<(), Error> {
        let meta = &mut self.capture.meta;
        if let Some(raw) = top.get("baseTimeNanoseconds") {
            let v: serde_json::Value = serde_json::from_str(raw.get()).unwrap_or_default();
            meta.base_time_ns = match v {
                serde_json::Value::Number(n) => n.as_i64(),
                serde_json::Value::String(s) => s.parse().ok(),
                _ => None,
            };
        }
        if let Some(raw) = top.get("schemaVersion") {
            meta.producer = Some(format!(
                "Kineto (schemaVersion {})",
                raw.get().trim_matches('"')
            ));
        }
        if let Some(raw) = top.get("distributedInfo") {
            #[derive(Deserialize)]
            struct Pg {
                #[serde(default)]
                pg_name: Option<serde_json::Value>,
                #[serde(default)]
                pg_desc: Option<String>,
                #[serde(default)]
                ranks: Vec<i64>,
            }
            #[derive(Deserialize)]
            struct Dist {
                #[serde(default, deserialize_with = "flex_int")]
                rank: Option<i64>,
                #[serde(default, deserialize_with = "flex_int")]
                world_size: Option<i64>,
                #[serde(default)]
                backend: Option<String>,
                #[serde(default)]
                pg_config: Vec<Pg>,
            }
            match serde_json::from_str::<Dist>(raw.get()) {
                Ok(d) => {
                    meta.rank = d.rank;
                    meta.world_size = d.world_size;
                    meta.backend = d.backend;
                    meta.process_groups = d
                        .pg_config
                        .into_iter()
                        .map(|pg| ProcessGroup {
                            name: match pg.pg_name {
                                Some(serde_json::Value::String(s)) => s,
                                Some(v) => v.to_string(),
                                None => String::new(),
                            },
                            description: pg.pg_desc.unwrap_or_default(),
                            ranks: pg.ranks,
                        })
                        .collect();
                }
                Err(e) => {
                    let place = format!("{}: top-level field distributedInfo", self.path.display());
                    self.capture.diagnostics.add(
                        "bad-distributed-info",
                        || format!("distributedInfo could not be read ({e}); rank and world size unknown"),
                        || place,
                    );
                }
            }
        }
        Ok(())
    }

    fn finish_devices(
        &mut self,
        devices: &BTreeMap<i64, DeviceId>,
        kineto: &[(i64, DeviceProperties)],
    ) {
        let vendor_hint = self.vendor_from_names();
        let mut list: Vec<Device> = devices
            .iter()
            .map(|(&ordinal, &id)| {
                let properties = kineto
                    .iter()
                    .find(|(i, _)| *i == ordinal)
                    .map(|(_, p)| p.clone())
                    .unwrap_or_default();
                let vendor = properties
                    .name
                    .as_deref()
                    .map(vendor_from_device_name)
                    .filter(|v| *v != Vendor::Unknown)
                    .unwrap_or(vendor_hint);
                Device {
                    id,
                    ordinal,
                    vendor,
                    properties,
                }
            })
            .collect();
        list.sort_by_key(|d| d.id);
        self.capture.devices = list;
    }

    /// Vendor from API and kernel names, for captures without device properties.
    fn vendor_from_names(&self) -> Vendor {
        let mut amd = 0;
        let mut nvidia = 0;
        for e in self
            .capture
            .host_events
            .iter()
            .filter(|e| matches!(e.kind, HostKind::Launch | HostKind::Runtime))
        {
            let n = self.capture.strings.get(e.name);
            if n.starts_with("hip") {
                amd += 1;
            } else if n.starts_with("cu") {
                nvidia += 1;
            }
        }
        match (amd, nvidia) {
            (0, 0) => Vendor::Unknown,
            (a, n) if a > n => Vendor::Amd,
            _ => Vendor::Nvidia,
        }
    }

    /// Joins activities to launches (correlation id) and launches to their enclosing CPU op.
    fn link(&mut self) {
        let c = &mut self.capture;
        let mut by_correlation: HashMap<u64, u32> = HashMap::new();
        for (i, e) in c.host_events.iter().enumerate() {
            if matches!(e.kind, HostKind::Launch | HostKind::Runtime)
                && let Some(corr) = e.correlation
            {
                by_correlation.entry(corr).or_insert(i as u32);
            }
        }
        let mut unlinked = 0u64;
        let mut first_unlinked = None;
        for a in &mut c.activities {
            a.launch = a
                .correlation
                .and_then(|corr| by_correlation.get(&corr))
                .map(|&i| HostEventId(i));
            match a.launch {
                Some(l) => c.host_events[l.0 as usize].kind = HostKind::Launch,
                None => {
                    unlinked += 1;
                    first_unlinked.get_or_insert(a.source_index);
                }
            }
        }
        if let Some(first) = first_unlinked {
            c.diagnostics.add_many(
                "activity-without-launch",
                unlinked,
                "GPU activities with no host launch call in the trace (no matching correlation id)"
                    .to_string(),
                format!("{}: event {first}", self.path.display()),
            );
        }
        // Enclosing CPU op on the same thread: events are sorted by (thread, start);
        // a stack of open CPU ops gives the innermost one around each runtime call.
        let mut by_external: HashMap<i64, u32> = HashMap::new();
        for (i, e) in c.host_events.iter().enumerate() {
            if e.kind == HostKind::CpuOp
                && let Some(x) = e.external_id
            {
                by_external.entry(x).or_insert(i as u32);
            }
        }
        let mut stack: Vec<u32> = Vec::new();
        let mut current_thread = None;
        for i in 0..c.host_events.len() {
            let e = &c.host_events[i];
            if current_thread != Some(e.thread) {
                stack.clear();
                current_thread = Some(e.thread);
            }
            while let Some(&top) = stack.last() {
                if c.host_events[top as usize].end() <= e.start {
                    stack.pop();
                } else {
                    break;
                }
            }
            match e.kind {
                HostKind::CpuOp => stack.push(i as u32),
                HostKind::Launch | HostKind::Runtime => {
                    let parent = stack
                        .iter()
                        .rev()
                        .copied()
                        .find(|&op| c.host_events[op as usize].end() >= e.end())
                        .or_else(|| e.external_id.and_then(|x| by_external.get(&x).copied()));
                    c.host_events[i].parent_op = parent.map(HostEventId);
                }
                _ => {}
            }
        }
    }

    fn count_flows(&mut self) {
        let mut one_end = 0u64;
        let mut first = usize::MAX;
        for &(starts, finishes, index) in self.flows.values() {
            if (starts == 0) != (finishes == 0) {
                one_end += 1;
                first = first.min(index);
            }
        }
        self.capture.diagnostics.add_many(
            "flow-one-end",
            one_end,
            "flow arrows (ph s/f) with only one end in the trace".to_string(),
            format!("{}: event {first}", self.path.display()),
        );
    }
}

fn host_kind(cat: Option<&str>, name: &str, is_jax: bool, p: &Pending) -> Option<HostKind> {
    if is_jax {
        return Some(if is_launch_api(name) || p.correlation.is_some() {
            HostKind::Launch
        } else if p.extra.as_ref().is_some_and(|e| e.hlo_op.is_some()) {
            HostKind::CpuOp
        } else {
            HostKind::Other
        });
    }
    Some(match cat? {
        c if KINETO_RUNTIME_CATS.contains(&c) => {
            if is_launch_api(name) {
                HostKind::Launch
            } else {
                HostKind::Runtime
            }
        }
        "cpu_op" | "Operator" => HostKind::CpuOp,
        "user_annotation" => HostKind::Annotation,
        "python_function" => HostKind::PythonFrame,
        _ => HostKind::Other,
    })
}

fn stream_number(line: &str) -> Option<i64> {
    let rest = line.strip_prefix("Stream #")?;
    let n: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    n.parse().ok()
}

fn vendor_from_device_name(name: &str) -> Vendor {
    let l = name.to_ascii_lowercase();
    if ["nvidia", "tesla", "geforce", "quadro", "a100", "h100"]
        .iter()
        .any(|p| l.contains(p))
    {
        Vendor::Nvidia
    } else if ["amd", "radeon", "instinct", "mi300", "mi250", "gfx"]
        .iter()
        .any(|p| l.contains(p))
    {
        Vendor::Amd
    } else {
        Vendor::Unknown
    }
}

fn parse_device_properties(raw: &str) -> Vec<(i64, DeviceProperties)> {
    let Ok(serde_json::Value::Array(items)) = serde_json::from_str::<serde_json::Value>(raw) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|d| {
            let id = d.get("id")?.as_i64()?;
            let int = |k: &str| d.get(k).and_then(|v| v.as_i64());
            let props = DeviceProperties {
                name: d.get("name").and_then(|v| v.as_str()).map(str::to_owned),
                compute_capability: int("computeMajor").zip(int("computeMinor")),
                total_memory_bytes: int("totalGlobalMem").and_then(|v| u64::try_from(v).ok()),
                multiprocessors: int("numSms").and_then(|v| u64::try_from(v).ok()),
                clock_rate_khz: int("clockRate").and_then(|v| u64::try_from(v).ok()),
                memory_bandwidth_bytes_per_s: None,
            };
            Some((id, props))
        })
        .collect()
}
