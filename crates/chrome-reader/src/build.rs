//! The model builder: raw Chrome trace events → `trace_model::Capture`.
//!
//! One streaming pass collects a compact record per useful event; a second pass over
//! those records (after process and thread names are known, since producers write
//! metadata events anywhere in the file) sorts them into devices, streams, threads,
//! GPU activities and host events; `CaptureBuilder::finish` (trace-model) then joins
//! launches to activities by correlation id and launches to their enclosing CPU op.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use trace_model::{
    ActivityDetails, ActivityKind, Capture, CaptureBuilder, Device, DeviceId, DeviceProperties,
    FastMap, Format, GpuActivity, GpuAnnotation, HostEvent, HostKind, HostThread, KernelClass,
    Nanos, OpShapes, ProcessGroup, Step, StepSource, Stream, StreamId, StringId, ThreadId, Vendor,
    classify_kernel, memcpy_direction,
};

pub(crate) mod fast;
pub(crate) mod prepare;

use crate::{Error, RawEvent, TopLevel};
use prepare::{Diag, Key, KinetoCat, Local, MetaName, Op, Prepared};

/// An event with the `args` keys the builder reads decoded.
type Event<'a> = RawEvent<'a, KnownArgs>;

/// How the model builder reads a trace.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LoadConfig {
    /// Threads that split and parse events (chunks of the JSON text, validated and merged
    /// back in file order, so the capture is the same for any number). 1 splits and parses
    /// on the caller's thread; with more, the caller's thread only merges. Reading and
    /// inflating (or, for a mapped file, cutting the chunks) have their own thread either
    /// way.
    pub threads: usize,
    /// The kernel classes already found, shared by every load given this config (or a
    /// clone of it): the ranks of one job launch the same kernels, and classifying a name
    /// is string matching over long names (11 % of the CPU time of reading the eight
    /// param-dlrm-8rank files, perf, before it was shared).
    classes: KernelClasses,
    /// Whether CPU ops' input shapes (`Input Dims`, `Input type`, `Concrete Inputs`) are
    /// kept ([`trace_model::OpShapes`]); see [`LoadConfig::without_shapes`].
    shapes: bool,
}

impl Default for LoadConfig {
    /// [`default_threads`] parsing threads.
    fn default() -> Self {
        LoadConfig::with_threads(default_threads())
    }
}

impl LoadConfig {
    /// A configuration that parses on `threads` threads (at least one).
    pub fn with_threads(threads: usize) -> Self {
        LoadConfig {
            threads: threads.max(1),
            classes: KernelClasses::default(),
            shapes: true,
        }
    }

    /// The same configuration, but the captures keep no CPU op input shapes (a reader
    /// that never asks for them, such as the HTA drop-in's timelines: on a trace recorded
    /// with `record_shapes=True` each CPU op's three texts were copied and interned for
    /// nothing).
    pub fn without_shapes(self) -> Self {
        LoadConfig {
            shapes: false,
            ..self
        }
    }
}

/// [`classify_kernel`] of each kernel name seen, shared between the loads of one
/// [`LoadConfig`] (files read side by side: hence the lock, taken once per distinct name
/// of a file). The class is a function of the name alone, so sharing changes no capture.
#[derive(Debug, Clone, Default)]
struct KernelClasses(std::sync::Arc<std::sync::Mutex<FastMap<Box<str>, KernelClass>>>);

impl KernelClasses {
    fn classify(&self, name: &str) -> KernelClass {
        if let Some(&class) = self.known().get(name) {
            return class;
        }
        // Classified without the lock: the other files' loads go on meanwhile.
        let class = classify_kernel(name);
        self.known().insert(name.into(), class);
        class
    }

    /// The map, locked (a load that panicked holding it left it whole: entries are
    /// inserted in one call).
    fn known(&self) -> std::sync::MutexGuard<'_, FastMap<Box<str>, KernelClass>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// 0: not set, use the machine's parallelism.
static DEFAULT_THREADS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The parsing threads of [`LoadConfig::default`], which [`load`] and every loader that takes
/// no config use: the number given to [`set_default_threads`], else the machine's available
/// parallelism (the thread that merges does little, see `chunks.rs`).
pub fn default_threads() -> usize {
    match DEFAULT_THREADS.load(std::sync::atomic::Ordering::Relaxed) {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// The threads a directory of rank files is loaded with: the number given to
/// [`set_default_threads`], else the machine's available parallelism.
fn directory_threads() -> usize {
    match DEFAULT_THREADS.load(std::sync::atomic::Ordering::Relaxed) {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Sets the process-wide default of parsing threads (a tool's `--threads`): the loaders are
/// reached through many library layers, which need not each pass a config down. 0 restores
/// the machine's available parallelism; more than four threads per core is taken as four
/// per core (`--threads 100000` would spend its time starting threads and splitting the
/// input into slivers; the result is the same for any number).
pub fn set_default_threads(threads: usize) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    DEFAULT_THREADS.store(threads.min(4 * cores), std::sync::atomic::Ordering::Relaxed);
}

/// Reads the trace at `path` (plain or gzip JSON) into a capture, with the default config.
pub fn load(path: &Path) -> Result<Capture, Error> {
    load_with(path, &LoadConfig::default())
}

/// Reads the trace at `path` (plain or gzip JSON) into a capture. A plain regular file is
/// mapped, not read (see `MappedFile` in `input.rs` for what that assumes: the file is not
/// changed while it is read); the capture and errors are those of [`load_from_with`] on
/// the same bytes.
pub fn load_with(path: &Path, config: &LoadConfig) -> Result<Capture, Error> {
    with_source(path, |source| {
        load_source_with(
            source,
            path,
            config.threads,
            crate::chunks::CHUNK_BYTES,
            config,
        )
    })
}

/// Calls `read` with the text of the file at `path` as the chunk splitter takes it: a
/// slice of the mapped file, or a stream that the splitter's reader thread reads (and
/// inflates).
pub(crate) fn with_source<T>(
    path: &Path,
    read: impl FnOnce(crate::chunks::Source<'_, Box<dyn std::io::Read + Send>>) -> Result<T, Error>,
) -> Result<T, Error> {
    use crate::chunks::Source;
    match crate::input::open_for_chunks(path)? {
        crate::input::Opened::Mapped(map, progress) => read(Source::Slice {
            text: map.text(),
            map: Some(&map),
            progress,
        }),
        crate::input::Opened::Whole(text, progress) => read(Source::Slice {
            text: &text,
            map: None,
            progress,
        }),
        crate::input::Opened::Stream(input) => read(Source::Read(input)),
    }
}

/// Reads a trace from already-decompressed JSON text with the default config; `path`
/// names it in errors.
pub fn load_from(input: impl std::io::Read + Send, path: &Path) -> Result<Capture, Error> {
    load_from_with(input, path, &LoadConfig::default())
}

/// Reads a trace from already-decompressed JSON text; `path` names it in errors.
///
/// The events are parsed on `config.threads` threads but built into the capture on the
/// caller's thread in file order, so event indices, string ids, diagnostics and errors are
/// those of the sequential read.
pub fn load_from_with(
    input: impl std::io::Read + Send,
    path: &Path,
    config: &LoadConfig,
) -> Result<Capture, Error> {
    load_source_with(
        crate::chunks::Source::Read(input),
        path,
        config.threads,
        crate::chunks::CHUNK_BYTES,
        config,
    )
}

/// Reads the trace at `path` for a capture and, in the same parse, hands every event to
/// sinks as [`crate::read_events_chunked`] does (`apply` gets their outputs in file order,
/// with each piece's first event index): for a caller that wants both the model and its
/// own view of the raw events without reading the file twice. The error is the raw read's
/// (what `read_events_chunked` alone would give). The capture is left to
/// [`PendingCapture::finish`], so that the caller can finish its own view beside it.
pub fn load_with_sink<'p, S: crate::EventSink>(
    path: &'p Path,
    threads: usize,
    new_sink: impl Fn() -> S + Sync,
    mut apply: impl FnMut(S::Out, usize) -> Result<(), Error>,
) -> Result<PendingCapture<'p>, Error> {
    let mut b = Builder::new(path, KernelClasses::default());
    // The model's first error, in file order; the runs after it are not applied.
    let mut model_error: Option<Error> = None;
    let spares = prepare::Spares::default();
    let new_run = || crate::raw::Both::new(path, &spares, new_sink());
    let (top, _stats) = with_source(path, |source| {
        crate::chunks::prepare_chunks(
            source,
            path,
            threads,
            crate::chunks::CHUNK_BYTES,
            &new_run,
            |(mut prepared, failure, out), base| {
                if model_error.is_none() {
                    b.apply(&mut prepared, base);
                    model_error = failure.map(|f| f.into_error(path, base));
                }
                spares.give(prepared);
                apply(out, base)
            },
        )
    })?;
    Ok(PendingCapture {
        build: match model_error {
            Some(e) => Err(e),
            None => Ok(b),
        },
        top,
        threads,
    })
}

/// The capture of a [`load_with_sink`] read, not yet finished (sorted, linked and
/// checked): every event has been parsed.
pub struct PendingCapture<'p> {
    build: Result<Builder<'p>, Error>,
    top: TopLevel,
    threads: usize,
}

impl PendingCapture<'_> {
    /// The document's members other than `traceEvents`.
    pub fn top(&self) -> &TopLevel {
        &self.top
    }

    /// The capture, or the error a [`load_with`] of the file alone would give (such as a
    /// timestamp that is not a number).
    pub fn finish(self) -> Result<Capture, Error> {
        self.build?.finish(&self.top, self.threads)
    }
}

/// The build of `source` with chunks of about `chunk_bytes` (tests make them tiny, so
/// that events straddle chunks and speculation fails often).
#[cfg(test)]
pub(crate) fn load_source(
    source: crate::chunks::Source<'_, impl std::io::Read + Send>,
    path: &Path,
    threads: usize,
    chunk_bytes: usize,
) -> Result<Capture, Error> {
    load_source_with(
        source,
        path,
        threads,
        chunk_bytes,
        &LoadConfig::with_threads(threads),
    )
}

/// [`load_source`] with the kernel classes of `config` (found before, and added to) and
/// its choice of shapes; its threads are `threads`.
fn load_source_with(
    source: crate::chunks::Source<'_, impl std::io::Read + Send>,
    path: &Path,
    threads: usize,
    chunk_bytes: usize,
    config: &LoadConfig,
) -> Result<Capture, Error> {
    let mut b = Builder::new(path, config.classes.clone());
    let spares = prepare::Spares::default();
    let new_sink = || prepare::Prep::new(path, &spares).with_shapes(config.shapes);
    let (top, _stats) = crate::chunks::prepare_chunks(
        source,
        path,
        threads,
        chunk_bytes,
        &new_sink,
        |mut run, base| {
            b.apply(&mut run, base);
            spares.give(run);
            Ok(())
        },
    )?;
    b.finish(&top, threads)
}

/// The sequential build on the streaming splitter of `scan.rs`, an independent way of
/// finding the events, which the chunked build must equal (first error in file order).
#[cfg(test)]
pub(crate) fn load_with_stream_splitter(
    input: impl std::io::Read,
    path: &Path,
) -> Result<Capture, Error> {
    use crate::chunks::RunSink;
    let mut b = Builder::new(path, KernelClasses::default());
    let mut prep = prepare::Prep::new(path, &prepare::Spares::default());
    let top = crate::scan::split_events_serial(input, path, |ev| {
        prep.event_text(ev.index, ev.offset, ev.text)
    });
    b.apply(&mut prep.finish(), 0);
    b.finish(&top?, 1)
}

/// One rank's capture from a directory of rank files.
#[derive(Debug)]
pub struct RankCapture {
    /// The file it was read from.
    pub path: std::path::PathBuf,
    /// From `distributedInfo.rank`, else from the first number in the file name.
    pub rank: Option<i64>,
    /// The file's capture.
    pub capture: Capture,
}

/// Trace files in a directory: `*.json` and `*.json.gz`, sorted by name, without the
/// compaction outputs among them (see [`list_trace_files`]).
pub fn trace_files(dir: &Path) -> Result<Vec<std::path::PathBuf>, Error> {
    Ok(list_trace_files(dir)?.files)
}

/// The trace files of a rank directory, and the files named like traces that are not
/// ranks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceFiles {
    /// `*.json` and `*.json.gz`, sorted by name: one per rank.
    pub files: Vec<std::path::PathBuf>,
    /// Compaction outputs passed over (see [`is_compaction_output`]), sorted by name.
    pub skipped: Vec<std::path::PathBuf>,
}

/// Whether a file name is one that `compact-cuda-graph-trace` writes (`<stem>_compacted.json`,
/// `<stem>_compacted.json.gz`, `pp_traces_merged_compacted.json.gz`): a rewritten copy of
/// ranks already in the directory, not a rank of its own.
pub fn is_compaction_output(name: &str) -> bool {
    name.ends_with("_compacted.json") || name.ends_with("_compacted.json.gz")
}

/// The trace files of `dir` (see [`TraceFiles`]): a compaction output written beside the
/// ranks it came from is not read back as one more rank. When every trace file of the
/// directory is a compaction output, they are the ranks (nothing else would be read).
pub fn list_trace_files(dir: &Path) -> Result<TraceFiles, Error> {
    // The workspace's one listing (regular files, and names whose metadata cannot be read,
    // kept so that loading them says what happened); an entry the directory cannot give
    // is named by the loader's own listing (`load::find_each`).
    let listing = trace_model::files::list_files(dir, |name| {
        name.ends_with(".json") || name.ends_with(".json.gz")
    })
    .map_err(|e| Error::Io {
        path: e.path,
        offset: 0,
        source: e.source,
    })?;
    let files = listing.files;
    if files.is_empty() {
        return Err(Error::EmptyDirectory {
            path: dir.to_path_buf(),
        });
    }
    let compacted = |p: &std::path::PathBuf| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(is_compaction_output)
    };
    if files.iter().all(compacted) {
        return Ok(TraceFiles {
            files,
            skipped: Vec::new(),
        });
    }
    let (skipped, files) = files.into_iter().partition(compacted);
    Ok(TraceFiles { files, skipped })
}

/// Loads every trace file of a directory (one per rank), in parallel, ordered by rank;
/// the first file that fails fails the whole (see [`load_dir_each`] to keep the rest).
pub fn load_dir(dir: &Path) -> Result<Vec<RankCapture>, Error> {
    load_dir_each(dir)?.into_iter().collect()
}

/// Loads every trace file of a directory, in parallel, each on its own: a file that
/// cannot be read keeps its error beside the others' captures. Ordered by rank (failed
/// files, whose rank is unknown, by name, first). Fails only when the directory cannot be
/// listed or holds no trace files.
pub fn load_dir_each(dir: &Path) -> Result<Vec<Result<RankCapture, Error>>, Error> {
    let files = trace_files(dir)?;
    let threads = directory_threads();
    // Files load side by side; each gets its share of the threads for parsing.
    let config = LoadConfig::with_threads(threads / threads.min(files.len()).max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<(usize, Result<Capture, Error>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads.min(files.len()))
            .map(|_| {
                s.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(file) = files.get(i) else { break };
                        out.push((i, load_with(file, &config)));
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
    results.sort_by_key(|(i, _)| *i);
    let mut ranks: Vec<Result<RankCapture, Error>> = results
        .into_iter()
        .map(|(i, res)| {
            res.map(|capture| {
                let path = files[i].clone();
                let rank = capture.meta().rank.or_else(|| rank_from_file_name(&path));
                RankCapture {
                    path,
                    rank,
                    capture,
                }
            })
        })
        .collect();
    let key = |r: &Result<RankCapture, Error>| match r {
        Ok(r) => (r.rank, r.path.clone()),
        Err(e) => (None, e.path().to_path_buf()),
    };
    ranks.sort_by_key(key);
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

/// The Kineto categories the builder distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cat {
    /// No `cat` (JAX traces): routed by process and thread names.
    None,
    Kernel,
    Memcpy,
    Memset,
    GpuAnnotation,
    Runtime,
    CpuOp,
    UserAnnotation,
    Python,
    Trace,
    /// A category Kineto writes that the model keeps as a host event of kind `Other`
    /// (`cpu_instant_event`, `overhead`, `cuda_sync`, …).
    Other,
    /// A category not in [`CATEGORIES`]: kept like `Other`, and counted in the
    /// capture's diagnostics with its spelling.
    Unknown,
}

/// Every category spelling torch.profiler (Kineto) has written since 2021, and what it
/// is in the model. Looked up after lower-casing and turning spaces into underscores,
/// so that `Kernel`, `kernel`, `User annotation`, `gpu_user_Annotation` are one entry.
///
/// - 2021 (PyTorch 1.8–1.9, Kineto's first Chrome writer): `Operator`, `Runtime`,
///   `Kernel`, `Memcpy`, `Memset`, `User annotation`, `GPU user annotation`,
///   `External id`, `Trace`.
/// - Kineto's `ActivityType` names since (libkineto/src/ActivityType.cpp): `cpu_op`,
///   `user_annotation`, `gpu_user_annotation` (`gpu_user_Annotation` in some releases),
///   `gpu_memcpy`, `gpu_memset`, `kernel`, `external_correlation`, `cuda_runtime`,
///   `cuda_driver`, `cpu_instant_event`, `python_function`, `overhead`, `mtia_runtime`,
///   `mtia_ccp_events`, `mtia_insight`, `cuda_sync`, `cuda_event`, `mtia_counters`,
///   `glow_runtime`, `cuda_profiler_range`, `hpu_op`, `xpu_runtime`, `xpu_driver`,
///   `collective_comm`, `privateuse1_runtime`, `privateuse1_driver`; ROCm builds write
///   `hip_runtime`/`hip_driver` in some versions.
const CATEGORIES: &[(&str, Cat)] = &[
    ("kernel", Cat::Kernel),
    ("concurrent_kernel", Cat::Kernel),
    ("gpu_memcpy", Cat::Memcpy),
    ("memcpy", Cat::Memcpy),
    ("gpu_memset", Cat::Memset),
    ("memset", Cat::Memset),
    ("gpu_user_annotation", Cat::GpuAnnotation),
    ("cuda_runtime", Cat::Runtime),
    ("cuda_driver", Cat::Runtime),
    ("runtime", Cat::Runtime),
    ("hip_runtime", Cat::Runtime),
    ("hip_driver", Cat::Runtime),
    ("xpu_runtime", Cat::Runtime),
    ("xpu_driver", Cat::Runtime),
    ("mtia_runtime", Cat::Runtime),
    ("privateuse1_runtime", Cat::Runtime),
    ("privateuse1_driver", Cat::Runtime),
    ("cpu_op", Cat::CpuOp),
    ("operator", Cat::CpuOp),
    ("user_annotation", Cat::UserAnnotation),
    ("python_function", Cat::Python),
    ("trace", Cat::Trace),
    ("external_correlation", Cat::Other),
    ("external_id", Cat::Other),
    ("cpu_instant_event", Cat::Other),
    ("overhead", Cat::Other),
    ("cuda_sync", Cat::Other),
    ("cuda_event", Cat::Other),
    ("cuda_profiler_range", Cat::Other),
    ("glow_runtime", Cat::Other),
    ("mtia_ccp_events", Cat::Other),
    ("mtia_insight", Cat::Other),
    ("mtia_counters", Cat::Other),
    ("hpu_op", Cat::Other),
    ("collective_comm", Cat::Other),
];

impl Cat {
    fn of(cat: Option<&str>) -> Cat {
        let Some(cat) = cat else {
            return Cat::None;
        };
        // The spellings of almost every event by a `match` (a list scan took about 140
        // instructions an event, twice per event); the other spellings of the list without
        // a copy; the rest normalised.
        if let Some(found) = Cat::common(cat) {
            return found;
        }
        if let Some(&(_, found)) = CATEGORIES.iter().find(|(name, _)| *name == cat) {
            return found;
        }
        let normal: String = cat
            .trim()
            .chars()
            .map(|c| match c {
                ' ' | '-' => '_',
                c => c.to_ascii_lowercase(),
            })
            .collect();
        CATEGORIES
            .iter()
            .find(|(name, _)| *name == normal)
            .map_or(Cat::Unknown, |&(_, found)| found)
    }

    /// The categories of nearly every event Kineto writes, as [`CATEGORIES`] has them
    /// (a test checks each against the list).
    fn common(cat: &str) -> Option<Cat> {
        Some(match cat {
            "kernel" => Cat::Kernel,
            "gpu_memcpy" => Cat::Memcpy,
            "gpu_memset" => Cat::Memset,
            "gpu_user_annotation" => Cat::GpuAnnotation,
            "cuda_runtime" | "cuda_driver" => Cat::Runtime,
            "cpu_op" => Cat::CpuOp,
            "user_annotation" => Cat::UserAnnotation,
            "python_function" => Cat::Python,
            "cpu_instant_event" => Cat::Other,
            _ => return None,
        })
    }

    fn is_gpu_activity(self) -> bool {
        matches!(self, Cat::Kernel | Cat::Memcpy | Cat::Memset)
    }

    /// Categories only Kineto writes (used to tell Kineto from other Chrome traces).
    fn is_kineto(self) -> bool {
        matches!(self, Cat::Kernel | Cat::Runtime | Cat::CpuOp)
    }

    /// Whether the category is absent from [`CATEGORIES`] (its events are counted).
    fn is_unknown(self) -> bool {
        self == Cat::Unknown
    }
}

/// Whether a runtime/driver API call launches GPU work.
fn is_launch_api(name: &str) -> bool {
    contains_launch(name.as_bytes())
        || ["cuda", "hip", "cu"].iter().any(|prefix| {
            name.strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with("Memcpy") || rest.starts_with("Memset"))
        })
}

/// `name.contains("Launch")`, by a scan for its `L`: `str::contains` sets up a two-way
/// search for each call, ~290 instructions on a runtime call's short name (12M of
/// df_index_resolver's 1,274M, callgrind), where the scan is a few per byte.
fn contains_launch(name: &[u8]) -> bool {
    let mut rest = name;
    while let Some(k) = rest.iter().position(|&c| c == b'L') {
        if rest[k..].starts_with(b"Launch") {
            return true;
        }
        rest = &rest[k + 1..];
    }
    false
}

/// An integer given as a JSON number or as a string holding one (JAX writes strings).
/// Anything else (a list, an object, a fraction) reads as absent.
fn flex_int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Option<i64>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an integer, or a string holding one")
        }
        fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
            Ok(Some(v))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
            Ok(i64::try_from(v).ok())
        }
        fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
            Ok((v.fract() == 0.0 && v.abs() < 9.2e18).then_some(v as i64))
        }
        fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
            Ok(v.trim().parse().ok())
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(V)
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(None)
        }
    }
    d.deserialize_any(V)
}

/// A JSON number as `f64`; anything else (a string, a list, `null`) reads as absent.
fn flex_f64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Option<f64>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a number")
        }
        fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
            Ok(Some(v as f64))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
            Ok(Some(v as f64))
        }
        fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
            Ok(Some(v))
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(V)
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(None)
        }
    }
    d.deserialize_any(V)
}

/// The top-level `distributedInfo` member of a Kineto trace, as far as the model keeps it.
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

/// One process group of `distributedInfo.pg_config`.
#[derive(Deserialize)]
struct Pg {
    #[serde(default)]
    pg_name: Option<serde_json::Value>,
    #[serde(default)]
    pg_desc: Option<String>,
    #[serde(default)]
    ranks: Vec<i64>,
}

/// `distributedInfo` read from its JSON text: the one reading of it, for the capture's
/// metadata and for [`rank_before_events`].
fn distributed_info(raw: &serde_json::value::RawValue) -> Result<Dist, serde_json::Error> {
    serde_json::from_str::<Dist>(raw.get())
}

/// How many bytes of a trace's text [`rank_before_events`] reads at most: Kineto writes
/// `distributedInfo` within the first few kilobytes (26 KB is the most in
/// `../shared/traces`, after a long `deviceProperties`).
const HEADER_BYTES: u64 = 1 << 20;

/// The rank a trace file gives before its events: `distributedInfo.rank` when that member
/// comes before `traceEvents`, as Kineto writes it, read as [`load`] reads it, from the
/// first bytes of the (inflated) text only (at most 1 MiB; the events are not read). None
/// when the start of the file gives no such rank (no `distributedInfo` before the events,
/// one without an integer rank, a file that cannot be read there): only a load then tells.
/// For ordering a rank directory's files before they are loaded; a trace with two
/// `distributedInfo` members gives the first, as its capture does.
pub fn rank_before_events(path: &Path) -> Option<i64> {
    use std::io::{BufRead, Read};
    let mut input = std::io::BufReader::new(std::fs::File::open(path).ok()?);
    let text: Box<dyn Read> = if trace_model::files::is_gzip(input.fill_buf().ok()?) {
        Box::new(flate2::bufread::MultiGzDecoder::new(input))
    } else {
        Box::new(input)
    };
    let raw = crate::scan::member_before_events(text.take(HEADER_BYTES), path, "distributedInfo")
        .ok()??;
    distributed_info(&raw).ok()?.rank
}

/// A `distributedInfo.rank` that is there but not an integer of i64 (`1e20`, `3.5`,
/// 2^64): said with its text, since the rank then comes from the file name, if at all.
fn rank_not_read(diagnostics: &mut trace_model::Diagnostics, path: &Path, distributed_info: &str) {
    #[derive(Deserialize)]
    struct RankText<'a> {
        #[serde(borrow, default)]
        rank: Option<&'a serde_json::value::RawValue>,
    }
    let Ok(RankText { rank: Some(rank) }) = serde_json::from_str(distributed_info) else {
        return;
    };
    let text = rank.get();
    if text == "null" {
        return;
    }
    let place = format!("{}: distributedInfo.rank", path.display());
    diagnostics.add(
        "rank-not-i64",
        || format!("distributedInfo.rank is {text}, not a 64-bit integer: the rank is not taken from it (a number in the file name is used, if there is one)"),
        || place,
    );
}

/// The `args` keys the builder reads.
///
/// Strings are owned: they are rare among these keys (JAX's `hlo_op`, metadata names;
/// CPU ops' shape arguments, as JSON text), and owning them lets the reader decode `args`
/// in the same pass as the event.
#[derive(Deserialize)]
pub(crate) struct KnownArgs {
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
    #[serde(default)]
    hlo_op: Option<String>,
    #[serde(default)]
    hlo_module: Option<String>,
    #[serde(default)]
    memcpy_details: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default, deserialize_with = "flex_int")]
    step_num: Option<i64>,
    #[serde(rename = "Input Dims", default, deserialize_with = "raw_text")]
    input_dims: Option<String>,
    #[serde(rename = "Input type", default, deserialize_with = "raw_text")]
    input_types: Option<String>,
    #[serde(rename = "Concrete Inputs", default, deserialize_with = "raw_text")]
    concrete_inputs: Option<String>,
    /// A `cuda_sync` event's awaited stream.
    #[serde(default, deserialize_with = "flex_int")]
    wait_on_stream: Option<i64>,
    /// A `cuda_sync` event's awaited `cudaEventRecord` call.
    #[serde(default, deserialize_with = "flex_int")]
    wait_on_cuda_event_record_corr_id: Option<i64>,
    /// A copy's or set's `memory bandwidth (GB/s)`.
    #[serde(
        rename = "memory bandwidth (GB/s)",
        default,
        deserialize_with = "flex_f64"
    )]
    memory_bandwidth: Option<f64>,
    /// Whether the members were decoded (`false` for [`KnownArgs::NONE`], and for the
    /// `args` of an event whose `args` the model never reads, left as text: see
    /// [`args_wanted`]).
    #[serde(skip_deserializing, default = "decoded")]
    pub(crate) decoded: bool,
}

/// What serde's decode of [`KnownArgs`] sets [`KnownArgs::decoded`] to.
fn decoded() -> bool {
    true
}

/// Whether the model reads the `args` of an event of phase `ph` and category `cat`:
/// complete events (`X`) but Python frames, and metadata (`M`, the process or thread name).
/// Every other event's `args` (instants, flows, counters, Python calls) stays undecoded
/// text, in the event's [`crate::RawEvent::json`], where a caller that wants them reads
/// them ([`crate::decode_args`]); so a type error in them (a duplicate key, `"stream":
/// "x"`) is not the model's error.
pub(crate) fn args_wanted(ph: &str, cat: Option<&str>) -> bool {
    match ph {
        "X" => Cat::of(cat) != Cat::Python,
        "M" => true,
        _ => false,
    }
}

/// How many `args` objects the model builder has decoded (into the keys it reads) since the
/// process started, over every load: lets a test check that the `args` of events the model
/// never reads stay undecoded. Counted per applied batch, so a speculated run that is redone
/// counts once.
pub fn args_decoded() -> u64 {
    ARGS_DECODED.load(std::sync::atomic::Ordering::Relaxed)
}

static ARGS_DECODED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A value's JSON text as the file wrote it (PyTorch's shape arguments, kept as text).
fn raw_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let raw = <Box<serde_json::value::RawValue> as serde::Deserialize>::deserialize(d)?;
    Ok(Some(raw.get().to_owned()))
}

impl KnownArgs {
    /// No known key: what an event without `args` (or a Python frame's) reads as.
    pub(crate) const NONE: KnownArgs = KnownArgs {
        correlation: None,
        correlation_id: None,
        external_id: None,
        stream: None,
        device: None,
        bytes: None,
        graph_id: None,
        program_id: None,
        hlo_op: None,
        hlo_module: None,
        memcpy_details: None,
        name: None,
        step_num: None,
        input_dims: None,
        input_types: None,
        concrete_inputs: None,
        wait_on_stream: None,
        wait_on_cuda_event_record_corr_id: None,
        memory_bandwidth: None,
        decoded: false,
    };
}

impl Default for KnownArgs {
    fn default() -> Self {
        KnownArgs::NONE
    }
}

/// A `ts` or `dur` as read: absent, nanoseconds, or a number too large for nanoseconds.
enum Time {
    Missing,
    Value(i64),
    OutOfRange,
}

/// A complete (`X`) event, compactly, until the whole file has been seen.
struct Pending {
    pid: i64,
    tid: i64,
    start: i64,
    dur: i64,
    name: StringId,
    cat: Cat,
    index: u64,
    correlation: Option<i64>,
    external_id: Option<i64>,
    extra: Option<Box<Extra>>,
    kineto: KinetoCat,
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
    shapes: Option<OpShapes>,
    wait_on_stream: Option<i64>,
    wait_on_record: Option<i64>,
    bandwidth: Option<f64>,
}

/// One batch's strings mapped to the capture's: each is interned (or given a pid/tid key)
/// when first used, so in the order the sequential build met it.
struct Remap<'a> {
    strings: &'a [Box<str>],
    ids: Vec<Option<StringId>>,
    keys: Vec<Option<i64>>,
}

impl Remap<'_> {
    fn string(&mut self, interner: &mut trace_model::Interner, l: Local) -> StringId {
        *self.ids[l as usize].get_or_insert_with(|| interner.intern(&self.strings[l as usize]))
    }

    /// Integer key for a pid/tid; string ids get stable negative keys.
    fn key(&mut self, string_ids: &mut FastMap<String, i64>, key: Key) -> i64 {
        match key {
            Key::Int(v) => v,
            Key::Str(l) => *self.keys[l as usize].get_or_insert_with(|| {
                let text = &self.strings[l as usize];
                if let Some(&key) = string_ids.get(&**text) {
                    return key;
                }
                let next = -(string_ids.len() as i64) - 1_000_000_000_000;
                string_ids.insert(text.to_string(), next);
                next
            }),
        }
    }
}

struct Builder<'p> {
    path: &'p Path,
    capture: CaptureBuilder,
    pending: Vec<Pending>,
    process_names: BTreeMap<i64, String>,
    thread_names: BTreeMap<(i64, i64), String>,
    string_ids: FastMap<String, i64>,
    /// Flow ids that may have only one end, by category: how many events start and finish
    /// an arrow, and the first event's index. Each run's flows of one id come in as one
    /// [`prepare::FlowEnds`]; those with both ends go to `complete_flows` instead, as the
    /// id can no longer have only one end.
    flows: FastMap<(StringId, i64), (u32, u32, usize)>,
    /// Flow ids with both ends in one run, looked at only for those left in `flows`.
    complete_flows: Vec<(StringId, i64)>,
    step_markers: Vec<(i64, i64, i64)>,
    devices: BTreeMap<i64, DeviceId>,
    // Ids are handed out in order of first sight; iteration order never reaches output.
    streams: FastMap<(i64, i64), StreamId>,
    threads: FastMap<(i64, i64), ThreadId>,
    gpu_pid_ordinal: BTreeMap<i64, i64>,
    saw_kineto_cat: bool,
    /// Complete events of categories [`CATEGORIES`] does not list: by spelling, their
    /// count and the first event's index.
    unknown_cats: BTreeMap<StringId, (u64, u64)>,
    /// Kernel classes by name: names repeat, classification is string matching.
    classes: FastMap<StringId, KernelClass>,
    /// The classes of the names seen by the other loads of the same config.
    shared_classes: KernelClasses,
    /// The numbers of the `ProfilerStep#N` steps already in `capture.steps`: looking each
    /// new one up in the list made 200,000 steps quadratic (issue 45, finding 11).
    step_numbers: FastMap<i64, ()>,
    /// What the trace records beyond the rows (the capture's `meta.kineto`).
    kineto: trace_model::KinetoDetails,
}

impl<'p> Builder<'p> {
    fn new(path: &'p Path, shared_classes: KernelClasses) -> Self {
        Builder {
            path,
            capture: CaptureBuilder::new(Format::OtherJson),
            pending: Vec::new(),
            process_names: BTreeMap::new(),
            thread_names: BTreeMap::new(),
            string_ids: FastMap::default(),
            flows: FastMap::default(),
            complete_flows: Vec::new(),
            step_markers: Vec::new(),
            devices: BTreeMap::new(),
            streams: FastMap::default(),
            threads: FastMap::default(),
            gpu_pid_ordinal: BTreeMap::new(),
            saw_kineto_cat: false,
            unknown_cats: BTreeMap::new(),
            classes: FastMap::default(),
            shared_classes,
            step_numbers: FastMap::default(),
            kineto: trace_model::KinetoDetails::default(),
        }
    }

    /// Applies one prepared run of events (see `prepare`) whose event indices count from
    /// `index_base`, taking its ops (the caller hands the emptied batch to the spares).
    fn apply(&mut self, batch: &mut Prepared, index_base: usize) {
        ARGS_DECODED.fetch_add(
            std::mem::take(&mut batch.args_decoded),
            std::sync::atomic::Ordering::Relaxed,
        );
        let k = &mut self.kineto;
        k.fractional_us |= batch.fractional_us;
        k.asked |= batch.asked;
        if index_base == 0
            && let Some(ts) = batch.first_ts
        {
            k.first_event_ts = ts.map(Nanos);
        }
        if let Some(origin) = batch.hta_origin {
            let o = k.hta_origin.get_or_insert(Nanos(origin));
            *o = (*o).min(Nanos(origin));
        }
        let mut ranges = batch.arg_ranges;
        if ranges.index.0 <= ranges.index.1 {
            let base = index_base as i64;
            ranges.index = (ranges.index.0 + base, ranges.index.1 + base);
        }
        k.arg_ranges = k.arg_ranges.merge(ranges);
        let odd = batch.odd_durations.drain(..);
        (k.odd_durations).extend(odd.map(|(i, d)| (i + index_base as u64, d)));
        let mut map = Remap {
            strings: &batch.strings,
            ids: vec![None; batch.strings.len()],
            keys: vec![None; batch.strings.len()],
        };
        for op in batch.ops.drain(..) {
            match op {
                Op::Complete(mut c) => {
                    c.index += index_base as u64;
                    self.complete(c, &batch.extras, &mut map);
                }
                Op::Meta { pid, name } => {
                    let pid = map.key(&mut self.string_ids, pid);
                    match name {
                        MetaName::Process(n) => {
                            self.process_names.insert(pid, n);
                        }
                        MetaName::Thread(tid, n) => {
                            let tid = map.key(&mut self.string_ids, tid);
                            self.thread_names.insert((pid, tid), n);
                        }
                        MetaName::None => {}
                    }
                }
                Op::Flow { cat } => {
                    map.string(&mut self.capture.strings, cat);
                }
                Op::Diag {
                    diag,
                    index,
                    offset,
                    field,
                } => self.diag(diag, index + index_base, offset, field),
            }
        }
        for ends in &batch.flows {
            // Interned by the run's `Op::Flow` of this category.
            let key = (map.string(&mut self.capture.strings, ends.cat), ends.id);
            if ends.starts > 0 && ends.finishes > 0 {
                self.complete_flows.push(key);
                continue;
            }
            let first = ends.first + index_base;
            let entry = self.flows.entry(key).or_insert((0, 0, first));
            entry.0 += ends.starts;
            entry.1 += ends.finishes;
        }
    }

    fn diag(&mut self, diag: Diag, index: usize, offset: u64, field: &'static str) {
        // Only the first occurrence's place is kept: build it only then.
        let path = self.path;
        let place = move || {
            format!(
                "{}: event {index} (byte {offset}), field {field}",
                path.display()
            )
        };
        let diagnostics = &mut self.capture.diagnostics;
        match diag {
            Diag::NumberAsString => diagnostics.add(
                "number-as-string",
                || "times given as strings (\"ts\": \"12.5\") were read as numbers".to_string(),
                place,
            ),
            Diag::MissingTimestamp => diagnostics.add(
                "missing-timestamp",
                || "complete events without \"ts\" were skipped".to_string(),
                place,
            ),
            Diag::NegativeDuration => diagnostics.add(
                "negative-duration",
                || "events with a negative \"dur\" were given duration 0".to_string(),
                place,
            ),
            Diag::MissingDuration => diagnostics.add(
                "missing-duration",
                || "complete events without \"dur\" were given duration 0".to_string(),
                place,
            ),
            // Counts an event left out because its time does not fit (see `Nanos::LIMIT`).
            Diag::OutOfRange => self.capture.note_time_out_of_range(place),
            Diag::BeginEnd => diagnostics.add(
                "begin-end-ignored",
                || "begin/end (B/E) events are not read; only complete (X) events are".to_string(),
                place,
            ),
        }
    }

    fn complete(&mut self, c: prepare::Complete, extras: &[prepare::LocalExtra], map: &mut Remap) {
        self.saw_kineto_cat |= c.cat.is_kineto();
        if let Some(cat) = c.unknown_cat {
            let cat = map.string(&mut self.capture.strings, cat);
            let entry = self.unknown_cats.entry(cat).or_insert((0, c.index));
            entry.0 += 1;
        }
        if let Some(step) = c.step_num {
            self.step_markers.push((step, c.start, c.start + c.dur));
        }
        let name = map.string(&mut self.capture.strings, c.name);
        let pid = map.key(&mut self.string_ids, c.pid);
        let tid = map.key(&mut self.string_ids, c.tid);
        let extra = c.extra.map(|i| {
            let e = &extras[i as usize];
            let strings = &mut self.capture.strings;
            Extra {
                stream: e.stream,
                device: e.device,
                bytes: e.bytes,
                graph_id: e.graph_id,
                program_id: e.program_id,
                hlo_op: e.hlo_op.map(|l| map.string(strings, l)),
                hlo_module: e.hlo_module.map(|l| map.string(strings, l)),
                memcpy_details: e.memcpy_details.map(|l| map.string(strings, l)),
                shapes: e.shapes.map(|(dims, types, concrete)| OpShapes {
                    dims: map.string(strings, dims),
                    types: types.map(|l| map.string(strings, l)),
                    concrete: concrete.map(|l| map.string(strings, l)),
                }),
                wait_on_stream: e.wait_on_stream,
                wait_on_record: e.wait_on_record,
                bandwidth: e.bandwidth,
            }
        });
        let mut p = Pending {
            pid,
            tid,
            start: c.start,
            dur: c.dur,
            name,
            cat: c.cat,
            index: c.index,
            correlation: c.correlation,
            external_id: c.external_id,
            extra: None,
            kineto: c.kineto,
        };
        if p.cat != Cat::None {
            self.route(p, extra.as_ref(), false);
        } else {
            p.extra = extra.map(Box::new);
            self.pending.push(p);
        }
    }

    /// Sorts one complete event into the capture. Kineto events (with a category) are
    /// routed as they stream by; JAX events (no category) once process names are known.
    fn route(&mut self, p: Pending, extra: Option<&Extra>, is_jax: bool) {
        let cat = p.cat;
        let gpu = if is_jax {
            self.gpu_pid_ordinal.get(&p.pid).copied().map(|ordinal| {
                let line = self.thread_names.get(&(p.pid, p.tid));
                let is_stream = line.is_none_or(|l| l.starts_with("Stream"));
                (ordinal, is_stream)
            })
        } else if cat.is_gpu_activity() {
            let ordinal = extra.and_then(|e| e.device).unwrap_or(p.pid);
            Some((ordinal, true))
        } else if cat == Cat::GpuAnnotation {
            let ordinal = extra.and_then(|e| e.device).unwrap_or(p.pid);
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
            Some((ordinal, true)) => self.gpu_activity(ordinal, p, extra, cat, is_jax),
            None => {
                let kind = host_kind(cat, self.capture.strings.get(p.name), is_jax, &p, extra);
                let Some(kind) = kind else { return };
                let key = (p.pid, p.tid);
                let next = ThreadId::new(self.threads.len() as u32);
                let thread = *self.threads.entry(key).or_insert(next);
                if kind == HostKind::Annotation || kind == HostKind::CpuOp {
                    let name = self.capture.strings.get(p.name);
                    if let Some(n) = name
                        .strip_prefix("ProfilerStep#")
                        .and_then(|n| n.parse().ok())
                        && self.step_numbers.insert(n, ()).is_none()
                    {
                        self.capture.steps.push(Step {
                            number: n,
                            start: Nanos(p.start),
                            end: Nanos(p.start + p.dur),
                            source: StepSource::ProfilerStep,
                        });
                    }
                }
                if cat == Cat::Trace && self.capture.meta.window.is_none() {
                    self.capture.meta.window = Some((Nanos(p.start), Nanos(p.start + p.dur)));
                }
                self.kinetos_host_event(&p, thread, extra);
                let mut event =
                    HostEvent::new(thread, Nanos(p.start), Nanos(p.dur), p.name, kind, p.index);
                event.set_correlation(p.correlation.and_then(|c| u64::try_from(c).ok()));
                self.capture.push_host_event(event, p.external_id);
                if let Some(shapes) = extra.and_then(|e| e.shapes) {
                    self.capture.set_op_shapes(p.index, shapes);
                }
            }
        }
    }

    /// Keeps what a host event has for [`trace_model::KinetoDetails`]: whether it is a
    /// driver call, its `args.stream`, and, for a `cuda_sync` event of a known kind, the
    /// event and what it waits on.
    fn kinetos_host_event(&mut self, p: &Pending, thread: ThreadId, extra: Option<&Extra>) {
        let k = &mut self.kineto;
        if let Some(stream) = extra.and_then(|e| e.stream) {
            k.host_streams.push((p.index, stream));
        }
        match p.kineto {
            KinetoCat::None => {}
            KinetoCat::Driver => k.driver_calls.push(p.index),
            KinetoCat::Sync => {
                let name = self.capture.strings.get(p.name);
                if let Some(kind) = trace_model::SyncKind::from_name(name) {
                    k.syncs.push(trace_model::SyncEvent {
                        start: Nanos(p.start),
                        dur: Nanos(p.dur),
                        source_index: p.index,
                        thread,
                        kind,
                        device: extra.and_then(|e| e.device),
                        stream: extra.and_then(|e| e.stream),
                        correlation: p.correlation,
                        wait_on_stream: extra.and_then(|e| e.wait_on_stream),
                        wait_on_record: extra.and_then(|e| e.wait_on_record),
                    });
                }
            }
        }
    }

    /// Makes the capture; `sort_threads` are the threads its final sorts may use.
    fn finish(mut self, top: &TopLevel, sort_threads: usize) -> Result<Capture, Error> {
        self.read_top_level(top)?;
        let is_jax = self
            .process_names
            .values()
            .any(|n| n.starts_with("/device:") || n.starts_with("/host:"));
        let has_kineto_cats = self.saw_kineto_cat;
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
        for mut p in std::mem::take(&mut self.pending) {
            let extra = p.extra.take();
            self.route(p, extra.as_deref(), is_jax);
        }
        if self.capture.steps.is_empty() && !self.step_markers.is_empty() {
            self.step_markers.sort();
            // Each step's place in `steps`, so that a marker finds its step at once.
            let mut at: FastMap<i64, usize> = FastMap::default();
            for &(n, start, end) in &self.step_markers {
                match at.get(&n).map(|&i| &mut self.capture.steps[i]) {
                    Some(s) => {
                        s.start = s.start.min(Nanos(start));
                        s.end = s.end.max(Nanos(end));
                    }
                    None => {
                        at.insert(n, self.capture.steps.len());
                        self.capture.steps.push(Step {
                            number: n,
                            start: Nanos(start),
                            end: Nanos(end),
                            source: StepSource::StepMarker,
                        });
                    }
                }
            }
        }
        // String pids/tids (`"Spans"`, `"Traces"`) have synthetic keys: without thread_name
        // metadata, such a thread is named by its original ids, `Spans / PyTorch Profiler`.
        let id_texts: BTreeMap<i64, &str> = self
            .string_ids
            .iter()
            .map(|(text, &key)| (key, text.as_str()))
            .collect();
        let id_text = |key: i64| {
            id_texts
                .get(&key)
                .map_or_else(|| key.to_string(), |text| (*text).to_owned())
        };
        let mut threads: Vec<((i64, i64), ThreadId)> =
            self.threads.iter().map(|(&k, &v)| (k, v)).collect();
        threads.sort_unstable_by_key(|&(_, id)| id);
        for ((pid, tid), id) in threads {
            let name = match self.thread_names.get(&(pid, tid)) {
                Some(n) => Some(self.capture.strings.intern(n)),
                None if id_texts.contains_key(&pid) || id_texts.contains_key(&tid) => {
                    let text = format!("{} / {}", id_text(pid), id_text(tid));
                    Some(self.capture.strings.intern(&text))
                }
                None => None,
            };
            let mut text_of = |key: i64| {
                id_texts
                    .get(&key)
                    .map(|text| self.capture.strings.intern(text))
            };
            let (pid_text, tid_text) = (text_of(pid), text_of(tid));
            self.capture.threads.push(HostThread {
                id,
                pid,
                tid,
                name,
                pid_text,
                tid_text,
            });
        }
        // Numeric ids that are not 64-bit integers (`1e20`, `3.5`, 2^64 + 1) are kept as
        // their text: said, since a tool that wants an integer cannot have one. In order of
        // first sight (keys count down from the first).
        let mut numeric: Vec<(i64, &str)> = id_texts
            .iter()
            .filter(|(_, text)| crate::raw::is_number_text(text))
            .map(|(&key, &text)| (key, text))
            .collect();
        numeric.sort_by_key(|&(key, _)| std::cmp::Reverse(key));
        let numeric_ids = numeric.first().map(|&(_, first)| {
            (
                numeric.len() as u64,
                "pids or tids that are numbers but not 64-bit integers (beyond i64, or with a fraction or an exponent): each is kept as the text the trace wrote, a process or thread of its own, and printed as that text".to_owned(),
                format!("the id {first}"),
            )
        });
        self.capture.threads.sort_by_key(|t| t.id);
        let devices = std::mem::take(&mut self.devices);
        self.finish_devices(&devices, &kineto_devices);
        let flows = self.count_flows();
        let unknown_cats = self.unknown_categories();
        let mut kineto = std::mem::take(&mut self.kineto);
        kineto.sort();
        self.capture.meta.kineto = Some(Box::new(kineto));
        let mut capture = self.capture.finish_on(self.path, sort_threads);
        if let Some((count, message, place)) = flows {
            let diagnostics = capture.diagnostics_mut();
            diagnostics.add_many("flow-one-end", count, message, place);
        }
        if let Some((count, message, place)) = numeric_ids {
            let diagnostics = capture.diagnostics_mut();
            diagnostics.add_many("id-not-i64", count, message, place);
        }
        if let Some((count, message, place)) = unknown_cats {
            let diagnostics = capture.diagnostics_mut();
            diagnostics.add_many("unknown-category", count, message, place);
        }
        Ok(capture)
    }

    fn stream_id(&mut self, ordinal: i64, stream: i64) -> StreamId {
        let next_device = DeviceId::new(self.devices.len() as u32);
        let device = *self.devices.entry(ordinal).or_insert(next_device);
        let next = StreamId::new(self.streams.len() as u32);
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

    fn gpu_activity(
        &mut self,
        ordinal: i64,
        p: Pending,
        extra: Option<&Extra>,
        cat: Cat,
        is_jax: bool,
    ) {
        if extra.and_then(|e| e.stream).is_none() {
            self.kineto.without_stream.push(p.index);
        }
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
            self.capture.streams[stream.index()].name = Some(id);
        }
        let name = self.capture.strings.get(p.name);
        let (kind, class) = match cat {
            Cat::Memcpy => (
                ActivityKind::Memcpy,
                KernelClass::Memcpy(memcpy_direction(name)),
            ),
            Cat::Memset => (ActivityKind::Memset, KernelClass::Memset),
            _ => match extra.and_then(|e| e.memcpy_details) {
                Some(d) if is_jax => (
                    ActivityKind::Memcpy,
                    KernelClass::Memcpy(memcpy_direction(self.capture.strings.get(d))),
                ),
                _ => {
                    let shared = &self.shared_classes;
                    let class = *self
                        .classes
                        .entry(p.name)
                        .or_insert_with(|| shared.classify(name));
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
        let mut activity = GpuActivity::new(
            stream,
            Nanos(p.start),
            Nanos(p.dur),
            p.name,
            kind,
            class,
            p.index,
        );
        activity.set_correlation(p.correlation.and_then(|c| u64::try_from(c).ok()));
        activity.set_hlo_op(extra.and_then(|e| e.hlo_op));
        if let Some(bw) = extra.and_then(|e| e.bandwidth) {
            self.kineto.bandwidth.push((p.index, bw));
        }
        let details = ActivityDetails {
            external_id: p.external_id,
            bytes: extra
                .and_then(|e| e.bytes)
                .and_then(|b| u64::try_from(b).ok()),
            graph_id: extra.and_then(|e| e.graph_id),
            hlo_module: extra.and_then(|e| e.hlo_module),
            program_id: extra.and_then(|e| e.program_id),
        };
        self.capture.push_activity(activity, details);
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
            match distributed_info(raw) {
                Ok(d) => {
                    if d.rank.is_none() {
                        rank_not_read(&mut self.capture.diagnostics, self.path, raw.get());
                    }
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
        // Counted over every launch: only when some device's name does not say.
        let vendor_hint = std::cell::OnceCell::new();
        // A device the metadata does not describe (ROCm traces list the visible device as
        // 0 while kernels name the physical one, 2 or 5): when every described device is
        // one model, that model, said in the diagnostics.
        let one_model = kineto.first().map(|(_, p)| p).filter(|first| {
            first.name.as_deref().is_some_and(|n| !n.is_empty())
                && kineto.iter().all(|(_, p)| p == *first)
        });
        let mut inferred = Vec::new();
        let mut list: Vec<Device> = devices
            .iter()
            .map(|(&ordinal, &id)| {
                let described = kineto.iter().find(|(i, _)| *i == ordinal);
                let properties = match (described, one_model) {
                    (Some((_, p)), _) => p.clone(),
                    (None, Some(p)) => {
                        inferred.push(ordinal);
                        p.clone()
                    }
                    (None, None) => DeviceProperties::default(),
                };
                let vendor = properties
                    .name
                    .as_deref()
                    .map(vendor_from_device_name)
                    .filter(|v| *v != Vendor::Unknown)
                    .unwrap_or_else(|| *vendor_hint.get_or_init(|| self.vendor_from_names()));
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
        if let (Some(&first), Some(model)) = (inferred.first(), one_model) {
            let described: Vec<String> = kineto.iter().map(|(i, _)| i.to_string()).collect();
            let name = model.name.clone().unwrap_or_default();
            let place = format!("{}: top-level field deviceProperties", self.path.display());
            self.capture.diagnostics.add_many(
                "device-properties-inferred",
                inferred.len() as u64,
                format!(
                    "devices with activity but not in deviceProperties (which describes device {} only, all {name}) were taken to be that model too; first: device {first}",
                    described.join(", ")
                ),
                place,
            );
        }
        self.capture.meta.described_devices = kineto
            .iter()
            .map(|(ordinal, properties)| Device {
                id: DeviceId::new(0),
                ordinal: *ordinal,
                vendor: properties
                    .name
                    .as_deref()
                    .map_or(Vendor::Unknown, vendor_from_device_name),
                properties: properties.clone(),
            })
            .collect();
    }

    /// The diagnostic of events whose category is not in [`CATEGORIES`]: how many, each
    /// spelling with its count, and the first such event.
    fn unknown_categories(&self) -> Option<(u64, String, String)> {
        let first = self.unknown_cats.values().map(|&(_, first)| first).min()?;
        let total = self.unknown_cats.values().map(|&(n, _)| n).sum();
        let each: Vec<String> = self
            .unknown_cats
            .iter()
            .map(|(&cat, &(n, _))| format!("{:?} {n}", self.capture.strings.get(cat)))
            .collect();
        Some((
            total,
            format!(
                "events of categories this reader does not know were kept as host events of kind other, outside the GPU budget ({})",
                each.join(", ")
            ),
            format!("{}: event {first}", self.path.display()),
        ))
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

    /// Flow arrows with only one end: count, message and first place, for a diagnostic
    /// added after the capture's own (so that diagnostics keep their order). Frees the
    /// flow tables, before the capture's sorts.
    fn count_flows(&mut self) -> Option<(u64, String, String)> {
        let mut one_end: Vec<((StringId, i64), usize)> = std::mem::take(&mut self.flows)
            .into_iter()
            .filter(|(_, (starts, finishes, _))| (*starts == 0) != (*finishes == 0))
            .map(|(key, (_, _, index))| (key, index))
            .collect();
        let mut complete = std::mem::take(&mut self.complete_flows);
        if !one_end.is_empty() {
            // An id with both ends in some run has both ends in the trace.
            complete.sort_unstable();
            one_end.retain(|(key, _)| complete.binary_search(key).is_err());
        }
        let first = one_end.iter().map(|&(_, index)| index).min()?;
        Some((
            one_end.len() as u64,
            "flow arrows (ph s/f) with only one end in the trace".to_string(),
            format!("{}: event {first}", self.path.display()),
        ))
    }
}

fn host_kind(
    cat: Cat,
    name: &str,
    is_jax: bool,
    p: &Pending,
    extra: Option<&Extra>,
) -> Option<HostKind> {
    if is_jax {
        return Some(if is_launch_api(name) || p.correlation.is_some() {
            HostKind::Launch
        } else if extra.is_some_and(|e| e.hlo_op.is_some()) {
            HostKind::CpuOp
        } else {
            HostKind::Other
        });
    }
    Some(match cat {
        Cat::None => return None,
        Cat::Runtime if is_launch_api(name) => HostKind::Launch,
        Cat::Runtime => HostKind::Runtime,
        Cat::CpuOp => HostKind::CpuOp,
        Cat::UserAnnotation => HostKind::Annotation,
        Cat::Python => HostKind::PythonFrame,
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

#[cfg(test)]
mod category_tests {
    use super::{CATEGORIES, Cat};

    /// The `match` of the common spellings says what the list says, for each of them.
    #[test]
    fn the_common_categories_are_the_lists() {
        let common = [
            "kernel",
            "gpu_memcpy",
            "gpu_memset",
            "gpu_user_annotation",
            "cuda_runtime",
            "cuda_driver",
            "cpu_op",
            "user_annotation",
            "python_function",
            "cpu_instant_event",
        ];
        for name in common {
            let listed = CATEGORIES.iter().find(|(n, _)| *n == name).map(|e| e.1);
            assert_eq!(Cat::common(name), listed, "{name}");
            assert!(listed.is_some(), "{name} is in the list");
        }
        // Every other spelling of the list, and one it lacks, go past the `match`.
        for &(name, cat) in CATEGORIES {
            if !common.contains(&name) {
                assert_eq!(Cat::common(name), None, "{name}");
            }
            assert_eq!(Cat::of(Some(name)), cat, "{name}");
        }
        assert_eq!(Cat::common("ac2g"), None);
        assert_eq!(Cat::of(Some("ac2g")), Cat::Unknown);
        assert_eq!(Cat::of(Some("Kernel")), Cat::Kernel);
    }
}

#[cfg(test)]
mod shared_classes_tests {
    use super::{LoadConfig, load_with};
    use trace_model::{Capture, KernelClass, classify_kernel};

    fn classes(c: &Capture) -> Vec<(String, KernelClass)> {
        (c.activities().iter())
            .map(|a| (c.name(a.name).to_owned(), a.class))
            .collect()
    }

    /// Two ranks read with one config share the kernel classes found: the second rank's
    /// capture is the one a load of its own gives, and the shared map holds every kernel
    /// name of both with its class.
    #[test]
    fn ranks_read_with_one_config_share_the_classes_and_equal_lone_reads() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/chrome/ok/tiny-train");
        let config = LoadConfig::with_threads(1);
        let mut names = 0;
        for file in ["rank0.pt.trace.json", "rank1.pt.trace.json"] {
            let path = dir.join(file);
            let shared = load_with(&path, &config).expect("the fixture loads");
            let alone = load_with(&path, &LoadConfig::with_threads(1)).expect("loads");
            assert_eq!(classes(&shared), classes(&alone), "{file}");
            names += shared.activities().len();
        }
        assert!(names > 0, "the fixture has GPU activities");
        let known = config.classes.known();
        assert!(!known.is_empty());
        for (name, class) in known.iter() {
            assert_eq!(*class, classify_kernel(name), "{name}");
        }
    }
}

#[cfg(test)]
mod without_shapes_tests {
    use super::{LoadConfig, load_with};

    /// A capture read without shapes is the capture read with them but for the CPU ops'
    /// shapes, which it lacks: the same host events (names, times) and GPU activities.
    #[test]
    fn a_capture_without_shapes_differs_only_in_the_shapes() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/roofline/kineto_shapes.json");
        let with = load_with(&path, &LoadConfig::with_threads(1)).expect("the fixture loads");
        let without = load_with(&path, &LoadConfig::with_threads(1).without_shapes())
            .expect("the fixture loads");
        let shaped = |c: &trace_model::Capture| {
            (c.host_events().iter())
                .filter(|e| c.op_shapes(e).is_some())
                .count()
        };
        assert!(shaped(&with) > 0, "the fixture records shapes");
        assert_eq!(shaped(&without), 0);
        let rows = |c: &trace_model::Capture| {
            let host: Vec<_> = (c.host_events().iter())
                .map(|e| (c.name(e.name).to_owned(), e.start, e.end(), e.source_index))
                .collect();
            let gpu: Vec<_> = (c.activities().iter())
                .map(|a| (c.name(a.name).to_owned(), a.start, a.end(), a.class))
                .collect();
            (host, gpu)
        };
        assert_eq!(rows(&with), rows(&without));
    }
}

#[cfg(test)]
mod launch_name_tests {
    use super::contains_launch;

    /// The scan answers as `str::contains("Launch")` on names with and without it, at
    /// every place, after partial matches and other `L`s, and on non-ASCII text.
    #[test]
    fn the_launch_scan_is_contains() {
        let names = [
            "",
            "L",
            "Launch",
            "Launc",
            "LLaunch",
            "LaunLaunch",
            "cudaLaunchKernel",
            "cuLaunchKernel",
            "hipLaunchKernel",
            "cudaStreamSynchronize",
            "cudaMemcpyAsync",
            "cudaGraphLaunch",
            "Lau nch",
            "xLaunc",
            "é Launch ü",
            "LLLLL",
            "cudaLaunchCooperativeKernelMultiDevice",
        ];
        let mut hits = 0;
        for name in names {
            let expected = name.contains("Launch");
            hits += usize::from(expected);
            assert_eq!(contains_launch(name.as_bytes()), expected, "{name:?}");
        }
        assert_eq!(hits, 9);
    }
}
