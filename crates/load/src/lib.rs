//! The one loader: from a path a user gives a tool to the captures in it.
//!
//! A path is a trace file or a capture directory in any format the readers know:
//! Kineto or JAX Chrome traces (`.json`, `.json.gz`), XSpace (`.xplane.pb`), Nsight Systems
//! SQLite exports, rocprofv3 (`.pftrace`, CSV, rocpd SQLite) and rocprof v1
//! (`results.csv`, `results.db`). A file's format is decided by its name where the name
//! is unambiguous, else by its first bytes; a file of no known format is an error naming
//! it and the formats known, never a guess. See [`detect`].
//!
//! Every capture comes back as a [`Loaded`]: the file, the rank, the capture and, for an
//! XSpace, its HLO programs decoded once, so that the analyses above this crate never
//! open a trace file themselves.
//!
//! ```
//! let root = test_support::workspace_root();
//! let path = root.join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json");
//! let loaded = load::load(&path)?;
//! assert_eq!(loaded.len(), 1);
//! assert_eq!(loaded[0].capture.format(), trace_model::Format::KinetoJson);
//! assert!(loaded[0].programs.is_empty());
//! # Ok::<(), load::Error>(())
//! ```

#![warn(missing_docs)]

mod detect;
mod error;
pub mod files;
mod xspace;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use trace_model::{Capture, Format};

pub use detect::{FileKind, Found, FoundEach, detect, find, find_each};
pub use error::Error;
pub use xspace::Program;

/// The formats the loader reads, for error messages.
pub const KNOWN_FORMATS: &str = "Kineto/JAX Chrome trace (.json, .json.gz), XSpace (.xplane.pb), \
     Nsight Systems SQLite export (nsys export --type sqlite), rocprofv3 (.pftrace, CSV, rocpd \
     .db, JSON), rocprof v1 (results.csv, results.db)";

/// One capture, with where it came from and what only some formats carry.
#[derive(Debug)]
pub struct Loaded {
    /// The file the capture was read from (for rocprofv3 CSV, the directory or file given).
    pub path: PathBuf,
    /// Rank from the trace's metadata, the process (Nsight Systems), or the file name.
    pub rank: Option<i64>,
    /// The capture itself.
    pub capture: Capture,
    /// The HLO programs of an XSpace, each decoded once (empty for other formats).
    pub programs: Vec<Program>,
}

impl Loaded {
    /// The capture's format.
    pub fn format(&self) -> Format {
        self.capture.format()
    }

    /// One process's capture of a file that may hold several (Nsight Systems, ROCm).
    fn process(file: &Path, rank: Option<i64>, capture: Capture) -> Loaded {
        Loaded {
            path: file.to_path_buf(),
            rank,
            capture,
            programs: Vec::new(),
        }
    }

    /// A Chrome trace file given on its own: its rank from the trace's metadata, else
    /// from the file name when the trace says it is one of several ranks.
    fn chrome_file(path: &Path, capture: Capture) -> Loaded {
        let rank = capture.meta().rank.or_else(|| {
            chrome_reader::rank_from_file_name(path).filter(|_| capture.meta().world_size.is_some())
        });
        Loaded {
            path: path.to_path_buf(),
            rank,
            capture,
            programs: Vec::new(),
        }
    }

    /// What [`load`] loads for `input` when it reads only the Chrome trace `file` (see
    /// [`single_chrome_file`]), given the file's capture: for a caller that parsed the
    /// file itself, with other outputs from the same pass.
    pub fn chrome(input: &Path, file: &Path, capture: Capture) -> Loaded {
        if !input.is_dir() {
            return Loaded::chrome_file(file, capture);
        }
        // As a directory of ranks: the file name's rank whatever the metadata says of the
        // world size.
        let rank = capture
            .meta()
            .rank
            .or_else(|| chrome_reader::rank_from_file_name(file));
        Loaded {
            path: file.to_path_buf(),
            rank,
            capture,
            programs: Vec::new(),
        }
    }
}

/// Sets how many threads parse each Chrome trace in every later load (a tool's
/// `--threads`; 0: `chrome_reader::default_threads`). The capture is the same for any
/// number: see `chrome_reader::LoadConfig`.
pub fn set_threads(threads: usize) {
    chrome_reader::set_default_threads(threads);
}

/// Makes the Nsight Systems NVTX ranges whose text matches `pattern` the steps of every
/// later load (a tool's `--step-nvtx`), instead of `ProfilerStep#N` ranges; the step
/// number is the first capture group when it reads as an integer, else the range's
/// position. An empty pattern restores the default.
pub fn set_step_nvtx(pattern: &str) -> Result<(), regex::Error> {
    let re = if pattern.is_empty() {
        None
    } else {
        Some(regex::Regex::new(pattern)?)
    };
    *STEP_NVTX.write().unwrap_or_else(|e| e.into_inner()) = re;
    Ok(())
}

static STEP_NVTX: std::sync::RwLock<Option<regex::Regex>> = std::sync::RwLock::new(None);

/// Makes every later load of a file that holds several processes (an Nsight Systems
/// export, a rocpd database) keep only the process `selector` names (a tool's
/// `--process`): its pid, or its name (the whole command, or its last path component).
/// A file without such a process is [`Error::NoSuchProcess`], which lists the processes
/// it holds. An empty selector restores the default (every process).
pub fn set_process(selector: &str) {
    let selector = selector.trim();
    *PROCESS.write().unwrap_or_else(|e| e.into_inner()) =
        (!selector.is_empty()).then(|| selector.to_owned());
}

static PROCESS: std::sync::RwLock<Option<String>> = std::sync::RwLock::new(None);

/// One process of a multi-process file, as [`Error::NoSuchProcess`] and
/// [`Error::SeveralCaptures`] list it: `pid 30156 (./bin/test_matmul)`.
fn describe_process(pid: Option<i64>, name: Option<&str>) -> String {
    match (pid, name) {
        (Some(pid), Some(name)) => format!("pid {pid} ({name})"),
        (Some(pid), None) => format!("pid {pid}"),
        (None, Some(name)) => name.to_owned(),
        (None, None) => "a process without a pid".to_owned(),
    }
}

/// Whether a process of pid `pid` and name `name` is the one `selector` names.
fn is_selected(selector: &str, pid: Option<i64>, name: Option<&str>) -> bool {
    if let (Ok(wanted), Some(pid)) = (selector.parse::<i64>(), pid)
        && wanted == pid
    {
        return true;
    }
    name.is_some_and(|name| {
        let last = name.rsplit(['/', '\\']).next().unwrap_or(name);
        name == selector || last == selector
    })
}

/// Keeps the processes `--process` names ([`set_process`]), all without it; `None`
/// of them is [`Error::NoSuchProcess`] naming what the file holds.
fn choose_processes<P>(
    file: &Path,
    processes: Vec<P>,
    id: impl Fn(&P) -> (Option<i64>, Option<&str>),
) -> Result<Vec<P>, Error> {
    let Some(selector) = PROCESS.read().unwrap_or_else(|e| e.into_inner()).clone() else {
        return Ok(processes);
    };
    let held: Vec<String> = processes
        .iter()
        .map(|p| {
            let (pid, name) = id(p);
            describe_process(pid, name)
        })
        .collect();
    let chosen: Vec<P> = processes
        .into_iter()
        .filter(|p| {
            let (pid, name) = id(p);
            is_selected(&selector, pid, name)
        })
        .collect();
    if chosen.is_empty() {
        return Err(Error::NoSuchProcess {
            path: file.to_path_buf(),
            wanted: selector,
            held: trace_model::limits::names_shown(&held),
        });
    }
    Ok(chosen)
}

/// How many files the loader has decoded since the process started (every reader, every
/// format): lets a test check that a pipeline reads each input once.
pub fn decodes() -> usize {
    DECODES.load(Ordering::Relaxed)
}

static DECODES: AtomicUsize = AtomicUsize::new(0);

/// Loads the capture(s) at `path`: a file (one capture, or one per process for an Nsight
/// Systems export) or a capture directory (see [`find`]), in rank order for rank
/// directories and file order otherwise. The first file that fails fails the whole; see
/// [`load_each`] to keep the rest.
pub fn load(path: &Path) -> Result<Vec<Loaded>, Error> {
    let each = load_each(path)?;
    match each.failed.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(each.loaded),
    }
}

/// What [`load_each`] read: every capture that loaded, and every file that did not.
#[derive(Debug, Default)]
pub struct LoadedEach {
    /// Captures that loaded, in the order [`load`] gives.
    pub loaded: Vec<Loaded>,
    /// One error per file that could not be read (each names its file).
    pub failed: Vec<Error>,
    /// What a tool should say about the directory's set of ranks ([`rank_notes`]).
    pub notes: Vec<Note>,
}

/// Something about a rank directory's set of files that the captures do not show: not an
/// error (every capture stands), a warning each tool prints.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Note {
    /// Several files give the same rank (from `distributedInfo.rank`, else the file
    /// name): each is kept and reported as a capture of its own, none is dropped.
    DuplicateRank {
        /// The rank.
        rank: i64,
        /// The files that give it, in name order.
        files: Vec<PathBuf>,
    },
    /// A file named like a trace that is not read as a rank: a compaction output
    /// (`chrome_reader::is_compaction_output`), a rewritten copy of ranks beside it.
    NotARank {
        /// The file.
        path: PathBuf,
    },
}

/// The most file names a [`Note`] lists; the rest are counted (`and N more`), so that one
/// warning about 10,000 copies stays a line.
pub const NAMES_SHOWN: usize = 10;

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Note::DuplicateRank { rank, files } => {
                let mut names: Vec<String> = files
                    .iter()
                    .take(NAMES_SHOWN)
                    .map(|p| p.display().to_string())
                    .collect();
                if files.len() > NAMES_SHOWN {
                    names.push(format!("and {} more", files.len() - NAMES_SHOWN));
                }
                write!(
                    f,
                    "rank {rank} is given by {} files ({}): each is reported as a rank of its own; remove the ones that are copies",
                    files.len(),
                    names.join(", ")
                )
            }
            Note::NotARank { path } => write!(
                f,
                "{}: not read as a rank: a compact-cuda-graph-trace output (a rewritten copy of the ranks beside it)",
                path.display()
            ),
        }
    }
}

/// What a tool should say about the set of ranks at `path`, given the `(file, rank)` of
/// each capture it read there: the compaction outputs passed over in a directory of
/// Chrome rank files, and every rank that more than one file gives. Empty for a file.
pub fn rank_notes<'a>(
    path: &Path,
    ranks: impl IntoIterator<Item = (&'a Path, Option<i64>)>,
) -> Vec<Note> {
    if !matches!(find(path), Ok(Found::ChromeDir(_))) {
        return Vec::new();
    }
    let mut notes: Vec<Note> = chrome_reader::list_trace_files(path)
        .map(|t| t.skipped)
        .unwrap_or_default()
        .into_iter()
        .map(|path| Note::NotARank { path })
        .collect();
    let mut by_rank: std::collections::BTreeMap<i64, Vec<PathBuf>> = Default::default();
    for (file, rank) in ranks {
        if let Some(rank) = rank {
            by_rank.entry(rank).or_default().push(file.to_path_buf());
        }
    }
    for (rank, mut files) in by_rank {
        if files.len() > 1 {
            files.sort();
            notes.push(Note::DuplicateRank { rank, files });
        }
    }
    notes
}

/// How many files a [`load`] of `path` reads (each rank file of a Chrome rank
/// directory, each XSpace, export or database; 1 for a file), without reading any: for a
/// tool that bounds what it holds before it loads.
pub fn file_count(path: &Path) -> Result<usize, Error> {
    Ok(match find(path)? {
        Found::ChromeDir(dir) => chrome_reader::trace_files(&dir)?.len(),
        Found::Files(files) => files.len(),
    })
}

/// Like [`load`], but a directory's files load each on their own: an unreadable rank or
/// host, and a subdirectory or file that could not be searched for captures
/// ([`find_each`]), is listed in [`LoadedEach::failed`] and the others are still returned. A file
/// path, an unlistable directory or one without captures is an error as with [`load`].
pub fn load_each(path: &Path) -> Result<LoadedEach, Error> {
    // A SQLite file with WAL or journal content is copied once for detection and reading.
    let _copies = sqlite_input::Scope::new();
    let found = find_each(path)?;
    let mut each = LoadedEach {
        failed: found.unread,
        ..LoadedEach::default()
    };
    match found.found {
        Found::ChromeDir(dir) => {
            DECODES.fetch_add(
                chrome_reader::trace_files(&dir).map_or(0, |f| f.len()),
                Ordering::Relaxed,
            );
            for res in chrome_reader::load_dir_each(&dir)? {
                match res {
                    Ok(r) => each.loaded.push(Loaded {
                        path: r.path,
                        rank: r.rank,
                        capture: r.capture,
                        programs: Vec::new(),
                    }),
                    Err(e) => each.failed.push(e.into()),
                }
            }
            each.notes = rank_notes(&dir, each.loaded.iter().map(|l| (l.path.as_path(), l.rank)));
        }
        Found::Files(files) => {
            let single = files.len() == 1 && !path.is_dir();
            for (file, kind) in files {
                match load_found(&file, kind) {
                    Ok(loaded) => each.loaded.extend(loaded),
                    // A file named on its own fails the load; a directory's keeps the rest.
                    Err(e) if single => return Err(e),
                    Err(e) => each.failed.push(e),
                }
            }
        }
    }
    Ok(each)
}

/// Loads exactly one capture: `path` must hold one (a directory with one trace file, or
/// one XSpace; an Nsight Systems export with one process).
pub fn load_single(path: &Path) -> Result<Loaded, Error> {
    let mut loaded = load(path)?;
    match loaded.len() {
        1 => Ok(loaded.remove(0)),
        count => Err(Error::SeveralCaptures {
            path: path.to_path_buf(),
            count,
            how: how_to_choose(path, &loaded),
            first: loaded
                .first()
                .map(|l| l.path.display().to_string())
                .unwrap_or_default(),
        }),
    }
}

/// How to choose one of several captures: for a file that holds several processes, `it
/// holds pid 1 (a), pid 2 (b): choose one with --process PID|NAME`; for a directory,
/// `name one file`.
fn how_to_choose(path: &Path, loaded: &[Loaded]) -> String {
    if path.is_dir() {
        return "name one file".to_owned();
    }
    let held: Vec<String> = loaded
        .iter()
        .map(|l| {
            let capture = &l.capture;
            let pid = capture.threads().first().map(|t| t.pid);
            let name = capture
                .threads()
                .iter()
                .find(|t| Some(t.tid) == pid)
                .and_then(|t| t.name)
                .map(|n| capture.name(n));
            describe_process(pid, name)
        })
        .collect();
    format!(
        "it holds {}: choose one with --process PID|NAME",
        trace_model::limits::names_shown(&held)
    )
}

/// The one Chrome trace file [`load`] reads for `input` when it reads exactly one Chrome
/// trace: the file itself, or the only trace file of a directory of Chrome traces. Give
/// its capture to [`Loaded::chrome`] to get what `load` would have loaded.
pub fn single_chrome_file(input: &Path) -> Result<Option<PathBuf>, Error> {
    Ok(match find(input)? {
        Found::ChromeDir(dir) => {
            let mut files = chrome_reader::trace_files(&dir)?;
            (files.len() == 1).then(|| files.remove(0))
        }
        Found::Files(mut files) => match files.as_slice() {
            [(_, detect::FileKind::Chrome)] => Some(files.remove(0).0),
            _ => None,
        },
    })
}

/// Reads `file`'s bytes as the format `kind` says.
fn load_found(file: &Path, kind: detect::FileKind) -> Result<Vec<Loaded>, Error> {
    use detect::FileKind;
    DECODES.fetch_add(1, Ordering::Relaxed);
    Ok(match kind {
        FileKind::Chrome => vec![Loaded::chrome_file(file, chrome_reader::load(file)?)],
        FileKind::XSpace => vec![xspace::load(file)?],
        FileKind::Nsys => {
            let config = nsys_reader::Config {
                step_nvtx: STEP_NVTX.read().unwrap_or_else(|e| e.into_inner()).clone(),
            };
            let processes = nsys_reader::load(file, &config)?;
            choose_processes(file, processes, |p| (Some(p.pid), p.name.as_deref()))?
                .into_iter()
                .map(|p| Loaded::process(file, p.rank, p.capture))
                .collect()
        }
        FileKind::Rocprof(kind) => {
            let processes = rocprof_reader::load_as(file, kind)?;
            choose_processes(file, processes, |p| (p.pid, None))?
                .into_iter()
                .map(|p| Loaded::process(file, p.rank, p.capture))
                .collect()
        }
    })
}

/// Chrome traces read as raw events, for the passes that need what the model does not
/// keep (operator arguments, the original script's event fields). The files are opened
/// here, below the analyses, like every other input.
pub mod chrome {
    pub use chrome_reader::{
        Error, Number, RawEvent, TopLevel, default_threads, open, rank_from_file_name,
        read_events_with_args, read_raw_events, read_raw_file, write_chrome_trace,
    };
}

/// What [`map_each`] gives for one capture: its file, rank and `summarise`'s result, or
/// the error of the file that could not be read.
pub type Mapped<T> = Result<(PathBuf, Option<i64>, T), Error>;

/// Loads every capture at `path` and hands each to `summarise` as soon as it is read, on
/// a pool of workers (one per core, or [`set_threads`]'s number): at most that many
/// captures are in memory at once, whatever the number of ranks, and each is dropped when
/// `summarise` returns. The results come in the order [`load`] gives (ranks in rank
/// order, unreadable files first by name, after what could not be searched: see
/// [`find_each`]), whatever order the files finish in. As with [`load_each`], a file named
/// on its own that cannot be read is an error of the call.
///
/// For tools that keep a summary per rank (an inventory, a per-rank budget) rather than
/// every rank's capture.
pub fn map_each<T: Send>(
    path: &Path,
    summarise: impl Fn(Loaded) -> T + Sync,
) -> Result<Vec<Mapped<T>>, Error> {
    map_each_with(path, &Keep::ALL, summarise)
}

/// What of a capture [`map_each_with`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Keep {
    /// CPU ops' input shapes of Chrome traces (`trace_model::OpShapes`): the readers that
    /// never ask for them skip them (`chrome_reader::LoadConfig::without_shapes`).
    pub shapes: bool,
}

impl Keep {
    /// Everything: [`map_each`]'s captures.
    pub const ALL: Keep = Keep { shapes: true };
    /// Everything but CPU ops' input shapes.
    pub const NO_SHAPES: Keep = Keep { shapes: false };

    /// The Chrome reader's configuration for one of `workers` files read side by side:
    /// each gets its share of the cores for parsing, and keeps what `self` says.
    fn config(&self, workers: usize) -> chrome_reader::LoadConfig {
        let config = chrome_reader::LoadConfig::with_threads(
            (chrome_reader::default_threads() / workers).max(1),
        );
        if self.shapes {
            config
        } else {
            config.without_shapes()
        }
    }
}

/// [`map_each`], keeping of each capture what `keep` says.
pub fn map_each_with<T: Send>(
    path: &Path,
    keep: &Keep,
    summarise: impl Fn(Loaded) -> T + Sync,
) -> Result<Vec<Mapped<T>>, Error> {
    map_files(path, keep, &|l, _| summarise(l), None)
}

/// [`map_each`], also handing each result that loaded to `deliver` (its file, rank and
/// summary) on the calling thread, in rank order, as soon as the results before it are in:
/// for a tool that writes something per rank in rank order (rows.csv) without keeping every
/// rank's output until the end.
///
/// A rank directory's rank order is known for sure only once every file is read (the rank
/// is inside the file), so the files are read, and delivered, in the order their first
/// bytes give: `distributedInfo.rank` where it comes before the events, as Kineto writes it
/// ([`chrome_reader::rank_before_events`]), else the number in the file name, as the
/// capture's rank is found. That is the returned order (as [`map_each`]'s) unless a file
/// gives its rank only after its events, or its rank is not the one its start gives: a
/// caller that needs `deliver`'s order to be the returned one checks it (each delivered
/// summary can record its turn) and puts right what differs.
///
/// Summaries wait for `deliver` while a file before them is still being read: at most
/// twice the number of workers of them, after which the workers wait too. `summarise` is
/// told, with each capture, whether its turn has come already ([`Turn::now`]): then what it
/// makes can go out straight away, without waiting in memory.
pub fn map_each_delivered<T: Send>(
    path: &Path,
    summarise: impl Fn(Loaded, &Turn<'_>) -> T + Sync,
    mut deliver: impl FnMut(&Path, Option<i64>, &mut T),
) -> Result<Vec<Mapped<T>>, Error> {
    map_files(path, &Keep::ALL, &summarise, Some(&mut deliver))
}

/// A capture's place in [`map_each_delivered`]'s order, for its `summarise`.
pub struct Turn<'a> {
    /// The file's place in reading order, or None for a capture after the first of its file.
    at: Option<usize>,
    turns: &'a (std::sync::Mutex<Turns>, std::sync::Condvar),
}

impl Turn<'_> {
    /// Whether every capture before this one has been delivered (and no other can be
    /// until this one is): what this capture gives may then be written out in order at
    /// once, ahead of its own delivery.
    pub fn now(&self) -> bool {
        let (turns, _) = self.turns;
        self.at == Some(turns.lock().unwrap_or_else(|e| e.into_inner()).delivered)
    }
}

/// What a worker of [`map_files`] hands back for the `k`th file in reading order: each
/// capture's result with the file's index in `files`.
type FileResults<T> = (usize, Vec<(usize, Mapped<T>)>);

/// Where the results of [`map_files`] stand, shared by its workers and the calling thread.
#[derive(Default)]
struct Turns {
    /// Files (in reading order) whose results are delivered.
    delivered: usize,
    /// A worker panicked: the others stop waiting for turns that will not come.
    abandoned: bool,
}

/// Sets [`Turns::abandoned`] when a worker unwinds, so that no other waits for it.
struct AbandonOnPanic<'a>(&'a (std::sync::Mutex<Turns>, std::sync::Condvar));

impl Drop for AbandonOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let (turns, changed) = self.0;
            turns.lock().unwrap_or_else(|e| e.into_inner()).abandoned = true;
            changed.notify_all();
        }
    }
}

/// The order [`map_files`] reads `files` in, as indices: file order, or, `by_rank`, the rank
/// order their first bytes give (the key its results are sorted by in the end).
fn reading_order(files: &[(PathBuf, detect::FileKind)], by_rank: bool) -> Vec<usize> {
    let mut reading: Vec<usize> = (0..files.len()).collect();
    if by_rank {
        let keys: Vec<(Option<i64>, &Path)> = files
            .iter()
            .map(|(f, _)| {
                let rank = chrome_reader::rank_before_events(f)
                    .or_else(|| chrome_reader::rank_from_file_name(f));
                (rank, f.as_path())
            })
            .collect();
        reading.sort_by_key(|&i| keys[i]);
    }
    reading
}

/// [`map_each_delivered`]'s `deliver`: a capture's file, rank and summary.
type Deliver<'d, T> = &'d mut dyn FnMut(&Path, Option<i64>, &mut T);

/// [`map_each_with`] and [`map_each_delivered`] (with `deliver`), keeping of each capture
/// what `keep` says.
fn map_files<T: Send>(
    path: &Path,
    keep: &Keep,
    summarise: &(impl Fn(Loaded, &Turn<'_>) -> T + Sync),
    mut deliver: Option<Deliver<'_, T>>,
) -> Result<Vec<Mapped<T>>, Error> {
    // A SQLite file with WAL or journal content is copied once for detection and reading.
    let _copies = sqlite_input::Scope::new();
    let found = find_each(path)?;
    let (files, in_rank_dir): (Vec<(PathBuf, detect::FileKind)>, bool) = match found.found {
        Found::ChromeDir(dir) => (
            chrome_reader::trace_files(&dir)?
                .into_iter()
                .map(|f| (f, detect::FileKind::Chrome))
                .collect(),
            true,
        ),
        Found::Files(files) => (files, false),
    };
    let delivering = deliver.is_some();
    let reading = reading_order(&files, delivering && in_rank_dir);
    let workers = chrome_reader::default_threads().clamp(1, files.len().max(1));
    // Without `deliver` nothing waits for a turn.
    let window = if delivering { 2 * workers } else { usize::MAX };
    let config = keep.config(workers);
    let next = AtomicUsize::new(0);
    let turns = (
        std::sync::Mutex::new(Turns::default()),
        std::sync::Condvar::new(),
    );
    let read_one = |file: &Path, kind: detect::FileKind| -> Result<Vec<Loaded>, Error> {
        if kind != detect::FileKind::Chrome {
            return load_found(file, kind);
        }
        DECODES.fetch_add(1, Ordering::Relaxed);
        let capture = chrome_reader::load_with(file, &config)?;
        Ok(vec![if in_rank_dir {
            Loaded::chrome(path, file, capture)
        } else {
            Loaded::chrome_file(file, capture)
        }])
    };
    let mut results: Vec<(usize, Mapped<T>)> = std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel::<FileResults<T>>();
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                let tx = tx.clone();
                let (next, turns, files, reading, read_one) =
                    (&next, &turns, &files, &reading, &read_one);
                s.spawn(move || {
                    let _abandon = AbandonOnPanic(turns);
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&i) = reading.get(k) else {
                            break;
                        };
                        // Not more than `window` files ahead of the last one delivered.
                        let (lock, changed) = turns;
                        let mut t = lock.lock().unwrap_or_else(|e| e.into_inner());
                        while k >= t.delivered.saturating_add(window) && !t.abandoned {
                            t = changed.wait(t).unwrap_or_else(|e| e.into_inner());
                        }
                        if t.abandoned {
                            break;
                        }
                        drop(t);
                        let (file, kind) = &files[i];
                        let out = match read_one(file, *kind) {
                            Ok(loaded) => loaded
                                .into_iter()
                                .enumerate()
                                .map(|(j, l)| {
                                    let (path, rank) = (l.path.clone(), l.rank);
                                    // Only a file's first capture can be next in line.
                                    let turn = Turn {
                                        at: (j == 0 && delivering).then_some(k),
                                        turns,
                                    };
                                    (i, Ok((path, rank, summarise(l, &turn))))
                                })
                                .collect(),
                            Err(e) => vec![(i, Err(e))],
                        };
                        if tx.send((k, out)).is_err() {
                            break;
                        }
                    }
                })
            })
            .collect();
        drop(tx);
        // Results in reading order, each delivered once the ones before it are.
        let mut waiting: std::collections::BTreeMap<usize, Vec<(usize, Mapped<T>)>> =
            Default::default();
        let mut done = Vec::new();
        for (k, out) in rx {
            waiting.insert(k, out);
            let (lock, changed) = &turns;
            let mut t = lock.lock().unwrap_or_else(|e| e.into_inner());
            while let Some(mut out) = waiting.remove(&t.delivered) {
                if let Some(deliver) = deliver.as_mut() {
                    for (_, res) in &mut out {
                        if let Ok((path, rank, summary)) = res {
                            deliver(path, *rank, summary);
                        }
                    }
                }
                done.extend(out);
                t.delivered += 1;
            }
            drop(t);
            changed.notify_all();
        }
        for h in handles {
            h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        }
        done
    });
    // File order first (a multi-process export keeps its processes' order), then, in a
    // rank directory, rank order as `load` gives it.
    results.sort_by_key(|(i, _)| *i);
    // What could not be searched comes first, as unreadable files do.
    let mut mapped: Vec<Mapped<T>> = found.unread.into_iter().map(Err).collect();
    mapped.extend(results.into_iter().map(|(_, r)| r));
    // A file named on its own fails the call, as with `load`.
    if !path.is_dir()
        && let [Err(_)] = mapped.as_slice()
        && let Some(Err(e)) = mapped.pop()
    {
        return Err(e);
    }
    if in_rank_dir {
        mapped.sort_by_key(|r| match r {
            Ok((path, rank, _)) => (*rank, path.clone()),
            Err(e) => (
                None,
                e.chrome()
                    .map(|c| c.path().to_path_buf())
                    .unwrap_or_default(),
            ),
        });
    }
    Ok(mapped)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A duplicate rank given by 10,000 files is one line: ten names, then a count.
    #[test]
    fn a_note_lists_ten_names_and_counts_the_rest() {
        let files: Vec<PathBuf> = (0..10_000)
            .map(|i| PathBuf::from(format!("copies/rank0-copy{i}.pt.trace.json")))
            .collect();
        let text = Note::DuplicateRank { rank: 0, files }.to_string();
        assert!(text.contains("given by 10000 files"), "{text}");
        assert!(text.contains("rank0-copy9.pt.trace.json"), "{text}");
        assert!(!text.contains("rank0-copy10.pt.trace.json"), "{text}");
        assert!(text.contains("and 9990 more"), "{text}");
        assert!(text.len() < 1000, "{} bytes", text.len());
    }
}
