//! What a launching thread was doing on the way to a late launch: every instant of a
//! thread's time gets one label ([`HostCause`], or a synchronising call), from the
//! innermost event that covers it and the ranges around it, so that the idle time the GPU
//! spent waiting for the host splits into causes that add up to it.
//!
//! The label of an instant, first match wins (the innermost event covering it is the
//! *leaf*; the events around it are its *enclosing ranges*):
//! 1. the leaf is a runtime call that synchronises ([`crate::is_synchronising_call`]):
//!    the host waits for the GPU (a gap cause of its own, not a host cause);
//! 2. the leaf is an allocator call ([`is_allocator_call`]): [`HostCause::Allocator`];
//! 3. the leaf or an enclosing range is compilation, JIT or autotuning
//!    ([`is_compilation`]): [`HostCause::Compilation`];
//! 4. the leaf or an enclosing range is data loading ([`is_data_loading`]):
//!    [`HostCause::DataLoading`];
//! 5. the leaf or an enclosing range is the profiler's own measured overhead
//!    ([`is_profiler_overhead`]): [`HostCause::ProfilerOverhead`];
//! 6. the leaf is a launch call: [`HostCause::LaunchOverhead`];
//! 7. the leaf is an event whose own subtree issues a launch (a framework op or a Python
//!    frame on the launch path): a stretch of its self time shorter than
//!    [`LONG_SELF_STRETCH`] is [`HostCause::LaunchOverhead`] (dispatch between launches);
//!    a longer one is [`HostCause::CpuWork`] for a framework op (its own CPU work) and
//!    [`HostCause::NothingRecorded`] for an annotation, Python frame or other wrapper
//!    (the thread did something the profiler did not record);
//! 8. any other leaf (an op, a Python frame or an annotation that launches nothing):
//!    [`HostCause::CpuWork`], named by the leaf;
//! 9. no event covers the instant, and the thread, idle longer than [`WAKE_LIMIT`],
//!    resumed within [`wake_limit`] of its idle time after a leaf event of another thread
//!    of its process ended
//!    (a wake-up: JAX's dispatch handing work to a stream thread, PyTorch's autograd
//!    thread starting a backward pass): the label the waker's time has at that instant
//!    (rules 1–8 on the waker; where the waker itself idled until another thread woke
//!    it, that thread's, along the chain up to four threads deep). The thread
//!    waited for the waker, so what bounds the GPU is what the waker was doing; the
//!    replay's inferred cross-thread edge is the same wake-up, so removing that cause
//!    there moves the waker, and with it the woken thread's launches;
//! 10. no event covers the instant otherwise: [`HostCause::NothingRecorded`] (the thread
//!     was idle, in I/O, or waiting on another process).

use std::collections::BTreeMap;

use trace_model::{Capture, FastMap, HostKind, Nanos, StringId, ThreadId, nesting_order};

use crate::gaps::{LAUNCH_LATENCY, is_synchronising_call};

/// How soon after another thread's leaf event ends a thread idle for longer than this
/// must resume for its idle time to count as a wait for that thread (rule 9 of the module
/// docs): a wake-up takes a few to a few tens of microseconds, the figure of
/// [`LAUNCH_LATENCY`] and of the replay's `EXPLAIN_LIMIT`, whose cross-thread edges are
/// inferred by the same rule.
pub const WAKE_LIMIT: Nanos = LAUNCH_LATENCY;

/// How late, as a share of its idle time, a thread may resume after another thread's
/// leaf ended and still count as woken by it, where that is more than [`WAKE_LIMIT`]: a
/// hand-off through Python (PyTorch's autograd thread starting a backward pass, the main
/// thread resuming after it) costs a few hundred microseconds, small beside a wait of many
/// milliseconds. The replay's `WAKE_SHARE`, which infers its cross-thread edges by the
/// same rule (a test holds the two equal).
pub const WAKE_SHARE: f64 = 0.05;

/// How soon after another thread's leaf ends a thread idle for `idle` must resume to
/// count as woken by it: [`WAKE_LIMIT`], or [`WAKE_SHARE`] of the idle time when longer.
pub fn wake_limit(idle: Nanos) -> Nanos {
    WAKE_LIMIT.max(Nanos((idle.0 as f64 * WAKE_SHARE) as i64))
}

/// What the launching thread was doing while the GPU waited for its next launch: the
/// sub-causes of [`crate::GapCause::HostNotLaunched`], each with a stable key (serde
/// writes its [`HostCause::code`]).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum HostCause {
    /// Device or pinned-host memory allocation and release (`cudaMalloc`, `cudaFree`,
    /// `hipMalloc`, `hipFree`, `cudaHostAlloc`, …): the caching allocator bypassed or
    /// emptied.
    Allocator,
    /// Data loading: DataLoader iteration and its waits, input pipelines.
    DataLoading,
    /// CPU work that launches nothing: preprocessing, Python, framework ops' own time.
    CpuWork,
    /// The launch path: launch calls and the short dispatch between them (many short
    /// launches back to back) — the one sub-cause CUDA graphs remove.
    LaunchOverhead,
    /// JIT compilation, module loading and autotuning.
    Compilation,
    /// The profiler's own overhead, where the capture measures it.
    ProfilerOverhead,
    /// Nothing recorded on the thread: idle, I/O, another process, or unrecorded work.
    NothingRecorded,
}

impl HostCause {
    /// Every sub-cause, in key order.
    pub const ALL: [HostCause; 7] = [
        HostCause::Allocator,
        HostCause::DataLoading,
        HostCause::CpuWork,
        HostCause::LaunchOverhead,
        HostCause::Compilation,
        HostCause::ProfilerOverhead,
        HostCause::NothingRecorded,
    ];

    /// A stable machine-readable name (`allocator`, `data-loading`, …).
    pub fn code(self) -> &'static str {
        match self {
            HostCause::Allocator => "allocator",
            HostCause::DataLoading => "data-loading",
            HostCause::CpuWork => "cpu-work",
            HostCause::LaunchOverhead => "launch-overhead",
            HostCause::Compilation => "compilation",
            HostCause::ProfilerOverhead => "profiler-overhead",
            HostCause::NothingRecorded => "nothing-recorded",
        }
    }

    /// The sub-cause a [`HostCause::code`] names.
    pub fn from_code(code: &str) -> Option<HostCause> {
        HostCause::ALL.into_iter().find(|c| c.code() == code)
    }

    /// The sub-cause in words.
    pub fn label(self) -> &'static str {
        match self {
            HostCause::Allocator => "memory allocation/release calls",
            HostCause::DataLoading => "data loading",
            HostCause::CpuWork => "CPU work that launches nothing",
            HostCause::LaunchOverhead => "launch overhead (launch calls and dispatch between them)",
            HostCause::Compilation => "JIT compilation, module loading or autotuning",
            HostCause::ProfilerOverhead => "profiler overhead",
            HostCause::NothingRecorded => "nothing recorded on the launching thread",
        }
    }
}

/// A self-time stretch of an event on the launch path at least this long is not launch
/// overhead: dispatching one op to its launch takes microseconds to a few tens of them
/// (framework dispatch ~5–20 µs, a launch call ~5–10 µs), so 100 µs without a recorded
/// child is several launches' worth of time doing something else (the op's own CPU work,
/// or unrecorded work under a wrapper).
pub const LONG_SELF_STRETCH: Nanos = Nanos(100_000);

/// Whether a host call allocates or releases device or pinned host memory: the CUDA and
/// HIP runtime and driver allocators (`cudaMalloc*`, `cudaFree*`, `cuMemAlloc*`,
/// `cuMemFree*`, `hipMalloc*`, `hipFree*`, `hipHostMalloc`, `cudaHostAlloc`,
/// `cudaMallocHost`, `hipExtMallocWithFlags`), and PyTorch's `empty_cache`.
pub fn is_allocator_call(name: &str) -> bool {
    let runtime = name.starts_with("cuda") || name.starts_with("hip") || name.starts_with("cuMem");
    (runtime
        && (name.contains("Malloc")
            || name.contains("Free")
            || name.contains("HostAlloc")
            || name.contains("MemAlloc")))
        || name.ends_with("empty_cache")
}

/// Whether a host range is data loading: PyTorch's DataLoader iteration
/// (`enumerate(DataLoader)#…__next__`, `torch/utils/data/…` frames), TensorFlow's input
/// pipeline (`IteratorGetNext`, `Iterator::…`).
pub fn is_data_loading(name: &str) -> bool {
    name.contains("DataLoader")
        || name.contains("utils/data/")
        || name.contains("IteratorGetNext")
        || name.starts_with("Iterator::")
}

/// Whether a host range is compilation, JIT or autotuning: module loading
/// (`cuModuleLoad*`, `hipModuleLoad*`, `cuLibraryLoad*`), runtime compilers (`nvrtc*`,
/// `hiprtc*`, `cuLink*`), graph instantiation, TorchDynamo/Inductor compilation
/// (`torch/_dynamo`, `torch/_inductor`, `compile_fx`, `CompileFunction`), nvFuser's
/// `compileFusion`, XLA compilation (`BackendCompile`, `XlaCompile`, `PjitFunction(…)
/// compile`), and autotuning (a name containing `autotun`).
pub fn is_compilation(name: &str) -> bool {
    name.contains("ModuleLoad")
        || name.contains("LibraryLoad")
        || name.contains("GraphInstantiate")
        || starts_with_ignore_case(name, "nvrtc")
        || starts_with_ignore_case(name, "hiprtc")
        || name.starts_with("cuLink")
        || name.contains("torch/_dynamo")
        || name.contains("torch/_inductor")
        || name.contains("compile_fx")
        || name.contains("CompileFunction")
        || name.contains("compileFusion")
        || name.contains("BackendCompile")
        || name.contains("XlaCompile")
        || contains_ignore_case(name, "autotun")
}

/// Whether a host range is the profiler's own overhead as the profiler measures it
/// (Kineto's `[profiler] …` ranges, a range named `Profiler overhead`, CUPTI's
/// `cuptiActivityFlush…`). Nothing is guessed: a profiler that does not measure its
/// overhead adds none here.
pub fn is_profiler_overhead(name: &str) -> bool {
    name.starts_with("[profiler]")
        || contains_ignore_case(name, "profiler overhead")
        || starts_with_ignore_case(name, "cuptiactivityflush")
}

/// Whether `name` starts with `prefix` (lowercase ASCII), ASCII case ignored: the same
/// answer as `name.to_ascii_lowercase().starts_with(prefix)`, without the allocation.
fn starts_with_ignore_case(name: &str, prefix: &str) -> bool {
    name.len() >= prefix.len()
        && name.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

/// Whether `name` contains `needle` (lowercase ASCII), ASCII case ignored: the same
/// answer as `name.to_ascii_lowercase().contains(needle)`, without the allocation.
fn contains_ignore_case(name: &str, needle: &str) -> bool {
    let (hay, needle) = (name.as_bytes(), needle.as_bytes());
    needle.is_empty()
        || hay
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle))
}

/// Whether a host event launches GPU work, its name classed by [`NameClass::of`].
fn is_launch(kind: HostKind, class: &NameClass) -> bool {
    kind == HostKind::Launch || class.launch
}

/// What [`label_thread`] needs to know of a host event's name. It is found once per
/// distinct name: the substring tests cost more than the rest of the labelling when
/// they run for every event.
#[derive(Debug, Clone, Copy)]
struct NameClass {
    /// [`is_synchronising_call`].
    sync: bool,
    /// [`is_allocator_call`].
    allocator: bool,
    /// A launch call's name (`…LaunchKernel…`, `…GraphLaunch…`, `cuLaunch…`).
    launch: bool,
    /// [`context_of`].
    context: Option<HostCause>,
}

impl NameClass {
    fn of(n: &str) -> Self {
        NameClass {
            sync: is_synchronising_call(n),
            allocator: is_allocator_call(n),
            launch: n.contains("LaunchKernel")
                || n.contains("GraphLaunch")
                || n.starts_with("cuLaunch"),
            context: context_of(n),
        }
    }
}

/// The label of a stretch of a thread's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Label {
    /// Inside a synchronising call: the host waits for the GPU.
    Sync,
    /// Host time of this sub-cause.
    Host(HostCause),
}

/// A labelled stretch `[start, end)` of one thread's time, with the event that names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Labelled {
    pub start: i64,
    pub end: i64,
    pub label: Label,
    pub name: StringId,
}

/// The context an enclosing range gives its children.
fn context_of(name: &str) -> Option<HostCause> {
    if is_compilation(name) {
        Some(HostCause::Compilation)
    } else if is_data_loading(name) {
        Some(HostCause::DataLoading)
    } else if is_profiler_overhead(name) {
        Some(HostCause::ProfilerOverhead)
    } else {
        None
    }
}

/// The labelled stretches of a thread's time (sorted, disjoint; instants no event covers
/// are left out, they are [`HostCause::NothingRecorded`]). Events that overlap without
/// nesting are cut at their parent's end.
pub(crate) fn label_thread(capture: &Capture, thread: ThreadId) -> Vec<Labelled> {
    let events = capture.thread_events(thread);
    let mut order: Vec<usize> = (0..events.len()).filter(|&i| events[i].dur.0 > 0).collect();
    order.sort_by(|&a, &b| {
        events[a]
            .start
            .cmp(&events[b].start)
            .then(events[b].end().cmp(&events[a].end()))
            .then(a.cmp(&b))
    });
    // Each event's name class, each distinct name classed once.
    let mut known: FastMap<StringId, NameClass> = FastMap::default();
    let class: Vec<NameClass> = events
        .iter()
        .map(|e| {
            *known
                .entry(e.name)
                .or_insert_with(|| NameClass::of(capture.name(e.name)))
        })
        .collect();
    // Pass 1: which events have a launch inside them (themselves included).
    let mut launches = vec![false; events.len()];
    let mut stack: Vec<(usize, i64)> = Vec::new();
    for &i in &order {
        let e = &events[i];
        while stack.last().is_some_and(|&(_, end)| end <= e.start.0) {
            stack.pop();
        }
        let end = stack.last().map_or(e.end().0, |&(_, pe)| e.end().0.min(pe));
        if is_launch(e.kind, &class[i]) {
            launches[i] = true;
            for &(p, _) in stack.iter().rev() {
                if launches[p] {
                    break;
                }
                launches[p] = true;
            }
        }
        stack.push((i, end));
    }
    // Pass 2: self-time stretches, labelled.
    struct Frame {
        idx: usize,
        end: i64,
        context: Option<(HostCause, StringId)>,
    }
    let mut out: Vec<Labelled> = Vec::new();
    let emit = |out: &mut Vec<Labelled>, f: &Frame, from: i64, to: i64| {
        if to <= from {
            return;
        }
        let e = &events[f.idx];
        let class = &class[f.idx];
        let call = matches!(e.kind, HostKind::Runtime | HostKind::Launch);
        let (label, by) = if call && class.sync {
            (Label::Sync, e.name)
        } else if class.allocator {
            (Label::Host(HostCause::Allocator), e.name)
        } else if let Some((c, by)) = f.context {
            (Label::Host(c), by)
        } else if is_launch(e.kind, class) {
            (Label::Host(HostCause::LaunchOverhead), e.name)
        } else if launches[f.idx] {
            if to - from < LONG_SELF_STRETCH.0 {
                (Label::Host(HostCause::LaunchOverhead), e.name)
            } else if matches!(e.kind, HostKind::CpuOp | HostKind::Runtime) {
                (Label::Host(HostCause::CpuWork), e.name)
            } else {
                (Label::Host(HostCause::NothingRecorded), e.name)
            }
        } else {
            (Label::Host(HostCause::CpuWork), e.name)
        };
        match out.last_mut() {
            Some(l) if l.end == from && l.label == label && l.name == by => l.end = to,
            _ => out.push(Labelled {
                start: from,
                end: to,
                label,
                name: by,
            }),
        }
    };
    let mut frames: Vec<Frame> = Vec::new();
    let mut cursor = i64::MIN;
    for &i in &order {
        let e = &events[i];
        let s = e.start.0;
        while let Some(top) = frames.last() {
            if top.end > s {
                break;
            }
            emit(&mut out, top, cursor, top.end);
            cursor = cursor.max(top.end);
            frames.pop();
        }
        if let Some(top) = frames.last() {
            emit(&mut out, top, cursor, s);
        }
        cursor = cursor.max(s);
        let end = frames.last().map_or(e.end().0, |p| e.end().0.min(p.end));
        let own = class[i].context.map(|c| (c, e.name));
        let inherited = frames.last().and_then(|p| p.context);
        // The stronger context wins: compilation, then data loading, then the profiler.
        let context = match (own, inherited) {
            (Some(a), Some(b)) => Some(if rank(a.0) <= rank(b.0) { a } else { b }),
            (a, b) => a.or(b),
        };
        frames.push(Frame {
            idx: i,
            end,
            context,
        });
    }
    while let Some(top) = frames.pop() {
        emit(&mut out, &top, cursor, top.end);
        cursor = cursor.max(top.end);
    }
    out
}

/// Every thread's labels with rule 9 of the module docs applied: a thread's idle stretches
/// that end at a wake-up carry its waker's labels. Each thread's own labels and each
/// process's leaf ends are worked out once, when first asked for.
pub(crate) struct ThreadLabels<'a> {
    capture: &'a Capture,
    own: BTreeMap<ThreadId, Vec<Labelled>>,
    /// Per process id: the ends of its threads' leaf events (events with no event inside
    /// them), sorted.
    leaf_ends: BTreeMap<i64, Vec<(i64, ThreadId)>>,
}

impl<'a> ThreadLabels<'a> {
    pub(crate) fn new(capture: &'a Capture) -> Self {
        ThreadLabels {
            capture,
            own: BTreeMap::new(),
            leaf_ends: BTreeMap::new(),
        }
    }

    fn own(&mut self, thread: ThreadId) -> &[Labelled] {
        let capture = self.capture;
        self.own
            .entry(thread)
            .or_insert_with(|| label_thread(capture, thread))
    }

    /// The leaf ends of process `pid`'s threads, sorted by end.
    fn leaf_ends(&mut self, pid: i64) -> &[(i64, ThreadId)] {
        let capture = self.capture;
        self.leaf_ends.entry(pid).or_insert_with(|| {
            let mut ends = Vec::new();
            for t in capture.threads().iter().filter(|t| t.pid == pid) {
                let events = capture.thread_events(t.id);
                let mut order: Vec<usize> = (0..events.len()).collect();
                order.sort_by_key(|&i| nesting_order(&events[i]));
                for (p, &i) in order.iter().enumerate() {
                    let e = &events[i];
                    if order
                        .get(p + 1)
                        .is_none_or(|&next| events[next].start >= e.end())
                    {
                        ends.push((e.end().0, t.id));
                    }
                }
            }
            // Each thread's leaves end in order: the stable sort merges those runs (equal
            // entries are alike, so the order is the unstable sort's).
            ends.sort();
            ends
        })
    }

    /// `thread`'s labelled stretches (sorted, disjoint), its idle stretches that end at a
    /// wake-up labelled as its waker's time is.
    pub(crate) fn labels(&mut self, thread: ThreadId) -> Vec<Labelled> {
        let mut out = self.own(thread).to_vec();
        let mut borrowed: Vec<Labelled> = Vec::new();
        for k in 1..out.len() {
            let (from, to) = (out[k - 1].end, out[k].start);
            if let Some(waker) = self.waker(thread, from, to) {
                self.borrow(waker, from, to, 1, &mut borrowed);
            }
        }
        if !borrowed.is_empty() {
            out.extend(borrowed);
            out.sort_by_key(|l| l.start);
        }
        out
    }

    /// The thread that woke `thread` at `to` after it idled since `from` (rule 9), if any.
    fn waker(&mut self, thread: ThreadId, from: i64, to: i64) -> Option<ThreadId> {
        if to - from <= WAKE_LIMIT.0 {
            return None;
        }
        let limit = wake_limit(Nanos(to - from)).0;
        let pid = self.capture.thread(thread).pid;
        let ends = self.leaf_ends(pid);
        let upto = ends.partition_point(|&(end, _)| end <= to);
        ends[..upto]
            .iter()
            .rev()
            .take_while(|&&(end, _)| to - end <= limit)
            .find(|&&(_, t)| t != thread)
            .map(|&(_, t)| t)
    }

    /// Adds `thread`'s labels over `[from, to)` to `out`; where it idled there until
    /// something woke it, the labels of what woke it (a chain of hand-offs, such as a
    /// stream thread woken by a thread pool woken by the Python thread), at most
    /// [`MAX_WAKE_CHAIN`] threads deep.
    fn borrow(
        &mut self,
        thread: ThreadId,
        from: i64,
        to: i64,
        depth: usize,
        out: &mut Vec<Labelled>,
    ) {
        let theirs = self.own(thread);
        let first = theirs.partition_point(|l| l.end <= from);
        let upto = theirs.partition_point(|l| l.start < to);
        // Each stretch in range, with the end of the thread's stretch before it.
        let pieces: Vec<(Labelled, Option<i64>)> = (first..upto.max(first))
            .map(|i| (theirs[i], i.checked_sub(1).map(|p| theirs[p].end)))
            .collect();
        let mut cursor = from;
        for (l, before) in pieces {
            if l.start > cursor && depth < MAX_WAKE_CHAIN {
                // Idle in range until it resumed at `l.start`: what woke it.
                if let Some(w) = before.and_then(|b| self.waker(thread, b, l.start)) {
                    self.borrow(w, cursor, l.start, depth + 1, out);
                }
            }
            let (s, e) = (l.start.max(from), l.end.min(to));
            if e > s {
                out.push(Labelled {
                    start: s,
                    end: e,
                    ..l
                });
            }
            cursor = cursor.max(e);
        }
    }
}

/// The labels ([`ThreadLabels::labels`]) of the thread that launched most of a capture's
/// GPU activities, worked out once by whichever asks first: a thread started as soon as the
/// capture is read ([`EarlyLabels::work`]), while the rest of the analysis finds the gaps
/// whose host time they split, or [`gap_causes`](crate::gaps::gap_causes) itself (it waits
/// for a thread already at work). They were the longest part of skip-stats' analysis, on
/// one thread at its end, with the other core idle.
pub(crate) struct EarlyLabels<'a> {
    capture: &'a Capture,
    thread: Option<ThreadId>,
    labels: std::sync::OnceLock<Vec<Labelled>>,
    /// What working them out found of the other threads (their own labels, the leaf
    /// ends), for the labels of the threads asked for later ([`EarlyLabels::take_rest`]).
    rest: std::sync::Mutex<Option<ThreadLabels<'a>>>,
}

impl<'a> EarlyLabels<'a> {
    /// For `capture`'s busiest launching thread (ties: the lowest id); nothing is worked
    /// out yet.
    pub(crate) fn new(capture: &'a Capture) -> Self {
        let mut launches = vec![0usize; capture.threads().len()];
        for a in capture.activities() {
            if let Some(l) = a.launch() {
                launches[capture.host_event(l).thread.index()] += 1;
            }
        }
        let busiest = (0..launches.len())
            .filter(|&i| launches[i] > 0)
            .max_by(|&a, &b| launches[a].cmp(&launches[b]).then(b.cmp(&a)));
        EarlyLabels {
            capture,
            thread: busiest.map(|i| capture.threads()[i].id),
            labels: std::sync::OnceLock::new(),
            rest: std::sync::Mutex::new(None),
        }
    }

    /// For no thread: every thread's labels are worked out when asked for.
    pub(crate) fn none(capture: &'a Capture) -> Self {
        EarlyLabels {
            capture,
            thread: None,
            labels: std::sync::OnceLock::new(),
            rest: std::sync::Mutex::new(None),
        }
    }

    /// Works the labels out, unless done or under way (then returns at once or when done).
    pub(crate) fn work(&self) {
        if let Some(t) = self.thread {
            self.of(t);
        }
    }

    /// `thread`'s labels when it is the thread these are for (worked out now, or waited
    /// for, if not yet done).
    pub(crate) fn of(&self, thread: ThreadId) -> Option<&[Labelled]> {
        (self.thread == Some(thread)).then(|| {
            self.labels
                .get_or_init(|| {
                    let mut threads = ThreadLabels::new(self.capture);
                    let labels = threads.labels(thread);
                    *self.lock_rest() = Some(threads);
                    labels
                })
                .as_slice()
        })
    }

    /// What working the labels out found of other threads, for the labels of more threads
    /// (once: later calls get a new, empty [`ThreadLabels`]). Waits for the labels, or works
    /// them out, first: they share most of that work (a thread's waker's own labels, its
    /// process's leaf ends; 22M instructions of df_index_resolver's 26M second thread).
    pub(crate) fn take_rest(&self) -> ThreadLabels<'a> {
        self.work();
        self.lock_rest()
            .take()
            .unwrap_or_else(|| ThreadLabels::new(self.capture))
    }

    fn lock_rest(&self) -> std::sync::MutexGuard<'_, Option<ThreadLabels<'a>>> {
        self.rest.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// How many threads deep a chain of wake-ups is followed (rule 9): a stream thread woken
/// by a thread pool woken by the Python thread is three.
const MAX_WAKE_CHAIN: usize = 4;

/// The labelled stretches of `thread`'s time, sorted and disjoint, as the module's rules
/// give them (a woken thread's idle time labelled by its waker, rule 9):
/// `(start, end, Some(sub-cause))`, or `None` inside a synchronising call. Instants no
/// stretch covers are [`HostCause::NothingRecorded`]. For callers that remove a
/// sub-cause's time (the replay's host scenarios).
pub fn host_cause_stretches(
    capture: &Capture,
    thread: ThreadId,
) -> Vec<(Nanos, Nanos, Option<HostCause>)> {
    stretches(ThreadLabels::new(capture).labels(thread))
}

/// [`host_cause_stretches`] of every thread, by thread index (the threads share the work
/// of finding wake-ups).
pub fn host_cause_stretches_all(capture: &Capture) -> Vec<Vec<(Nanos, Nanos, Option<HostCause>)>> {
    let mut labels = ThreadLabels::new(capture);
    capture
        .threads()
        .iter()
        .map(|t| stretches(labels.labels(t.id)))
        .collect()
}

fn stretches(labelled: Vec<Labelled>) -> Vec<(Nanos, Nanos, Option<HostCause>)> {
    labelled
        .into_iter()
        .map(|l| {
            let cause = match l.label {
                Label::Sync => None,
                Label::Host(c) => Some(c),
            };
            (Nanos(l.start), Nanos(l.end), cause)
        })
        .collect()
}

/// Precedence of the contexts (lower wins).
fn rank(c: HostCause) -> u8 {
    match c {
        HostCause::Compilation => 0,
        HostCause::DataLoading => 1,
        _ => 2,
    }
}

/// Calls `f(label, naming event, time)` for each labelled piece of `[start, end)` in
/// `labelled` (from [`label_thread`]); instants no stretch covers are
/// [`HostCause::NothingRecorded`] with no name.
pub(crate) fn split(
    labelled: &[Labelled],
    start: i64,
    end: i64,
    mut f: impl FnMut(Label, Option<StringId>, i64),
) {
    if end <= start {
        return;
    }
    let mut at = start;
    let first = labelled.partition_point(|l| l.end <= start);
    for l in &labelled[first..] {
        if l.start >= end {
            break;
        }
        let s = l.start.max(at);
        if s > at {
            f(Label::Host(HostCause::NothingRecorded), None, s - at);
        }
        let e = l.end.min(end);
        if e > s {
            f(l.label, Some(l.name), e - s);
            at = e;
        }
    }
    if end > at {
        f(Label::Host(HostCause::NothingRecorded), None, end - at);
    }
}

/// The steps' host-only time (before the GPU starts a step's work, after it ends), with
/// the host events ranked by their self time in it; `None` without a step on the GPU.
pub(crate) fn host_only_time(
    capture: &Capture,
    per_step: &[crate::skip::StepMetrics],
    top: usize,
) -> Option<crate::skip::HostOnly> {
    let mut ranges = Vec::new();
    let mut h = crate::skip::HostOnly {
        before_gpu: Nanos(0),
        after_gpu: Nanos(0),
        step_time: Nanos(0),
        steps: 0,
        top: Vec::new(),
    };
    for s in per_step {
        let Some(g) = s.gpu_range else { continue };
        h.steps += 1;
        h.step_time += s.range.span();
        // The GPU may start the step's work after the host range ended (it runs
        // behind): host-only time is never longer than the step.
        if g.start > s.range.start {
            h.before_gpu += g.start.min(s.range.end) - s.range.start;
            ranges.push(crate::gaps::Gap {
                start: s.range.start,
                end: g.start.min(s.range.end),
            });
        }
        if s.range.end > g.end {
            h.after_gpu += s.range.end - g.end;
            ranges.push(crate::gaps::Gap {
                start: g.end.max(s.range.start),
                end: s.range.end,
            });
        }
    }
    if h.steps == 0 {
        return None;
    }
    ranges.retain(|r| !r.is_empty());
    ranges.sort_by_key(|r| r.start);
    h.top = crate::gaps::host_self_time_in(
        capture,
        &ranges,
        &crate::gaps::launching_threads(capture),
        top,
    );
    Some(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_reads_back() {
        for c in HostCause::ALL {
            assert_eq!(HostCause::from_code(c.code()), Some(c));
        }
        assert_eq!(HostCause::from_code("allocators"), None);
    }

    #[test]
    fn names() {
        for n in [
            "hipFree",
            "cudaFree",
            "cudaMalloc",
            "hipMalloc",
            "cudaHostAlloc",
            "hipHostMalloc",
            "cuMemAlloc_v2",
            "cudaFreeHost",
        ] {
            assert!(is_allocator_call(n), "{n}");
        }
        for n in ["cudaLaunchKernel", "aten::empty", "cudaMemcpyAsync", "free"] {
            assert!(!is_allocator_call(n), "{n}");
        }
        assert!(is_data_loading(
            "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"
        ));
        assert!(is_data_loading(
            "torch/utils/data/dataloader.py(628): __next__"
        ));
        assert!(!is_data_loading("aten::to"));
        assert!(is_compilation("hipModuleLoadData"));
        assert!(is_compilation("CachingAutotuner.benchmark_all_configs"));
        assert!(is_compilation("FusionExecutor::compileFusion"));
        assert!(!is_compilation("Torch-Compiled Region: 0/0"));
        assert!(is_profiler_overhead("[profiler] flush"));
        assert!(!is_profiler_overhead("ProfilerStep#3"));
        assert!(is_profiler_overhead("Profiler Overhead"));
        assert!(is_profiler_overhead("cuptiActivityFlushAll"));
        assert!(is_compilation("NVRTC compile"));
    }

    #[test]
    fn case_blind_search_answers_as_lowercasing_does() {
        let names = [
            "",
            "a",
            "Autotun",
            "xAUTOTUNe",
            "autotu",
            "ÉautotunÉ",
            "NvRtcX",
            "nvrt",
            "ſnvrtc",
            "hiprtcLinkCreate",
            "profiler overhead",
            "Profiler  overhead",
            "İprofiler overheadİ",
        ];
        for n in names {
            let lower = n.to_ascii_lowercase();
            for needle in ["autotun", "profiler overhead", "a", ""] {
                assert_eq!(
                    contains_ignore_case(n, needle),
                    lower.contains(needle),
                    "{n} {needle}"
                );
            }
            for prefix in ["nvrtc", "hiprtc", "cuptiactivityflush", ""] {
                assert_eq!(
                    starts_with_ignore_case(n, prefix),
                    lower.starts_with(prefix),
                    "{n} {prefix}"
                );
            }
        }
    }
}
