//! `cargo xtask fuzz [--secs N] [--target NAME]`: a fuzzing harness on the stable toolchain.
//!
//! cargo-fuzz needs a nightly compiler, so this is our own, in process: each target's seeds
//! come from `testdata/` (files of at most 16 KiB), and every execution mutates one of them
//! (bit flips, random and boundary bytes, deletions, duplications, truncation, splices with
//! another seed, inserted JSON or protobuf tokens, numbers replaced by boundary values such
//! as i64::MAX µs) and runs the target under `catch_unwind`. There is no coverage feedback;
//! a mutant that a reader accepts joins the pool, which keeps mutants near valid input.
//!
//! Targets: `chrome` (splitter, raw events, model build, then analyze-profile's both modes,
//! skip-stats and trace-info over the capture), `xplane` (decode, capture, HLO protos, the
//! analyses), `hlo` (HLO text parser, print and parse again), `lanes` (raw events,
//! compaction with both groupings, writing), `nsys` (Nsight Systems SQLite exports, with
//! and without a step regex, then the analyses) and `rocprof` (rocprofv3 Perfetto traces,
//! CSV files, rocpd databases and rocprofv3 JSON, rocprof v1 `results.csv`/`results.db`, then the
//! analyses), `compare` (an investigate report.json side, mutated, compared with its seed
//! both ways and worded as text, Markdown and HTML; its seeds are investigations of the
//! Chrome fixtures). The two SQLite-reading targets take their seeds from `testdata/nsys` and
//! `testdata/rocprof` (made by `cargo xtask fixtures`, so no real trace is needed) and
//! mutate SQLite seeds a second way, through SQLite itself: a cell set to a value of
//! another type (text, blob, real, NULL, boundary integers), a column dropped or renamed,
//! a table dropped, a row duplicated; and through the schema (issue 45): a table replaced
//! by a view of its rows, of a four-way cross join, or of a recursive query that never
//! ends; a trigger and a view beside the tables; a generated column; the change left in a
//! WAL or in the journal of an open transaction, written beside the input. A damaged
//! `-wal` or `-journal` file is also written beside one run in three, and a reader must
//! leave the input's directory as it was. Their readers take paths, so each input is written
//! to a scratch file under `target/fuzz-scratch/`. Besides not panicking, every error of
//! these two (and of `load::load`, the tools' loader, on the same file) must name the file, and every capture they read must come back with the same
//! activities from the Chrome trace JSON that `chrome_reader::write_chrome_trace` writes
//! of it (a message or a capture that does not is saved like a panic).
//!
//! The run builds xtask with the `fuzz` profile (release with overflow checks and debug
//! assertions, so that arithmetic overflow panics as in a debug build) and re-runs itself.
//! A panicking input is saved under `target/fuzz-crashes/<target>/`; an input that runs
//! for more than 10 s is saved as `hang-*` and ends the run. `--dev` runs in the debug
//! build instead (no second build; for CI's smoke run). Prints executions and
//! executions per second per target; exits 1 when anything was saved.

use std::io::Write;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::workspace_root;

mod sqlite;

use sqlite::{assert_nothing_beside, sql_mutate, write_with_side_files};

const TARGETS: [&str; 7] = [
    "chrome", "xplane", "hlo", "lanes", "nsys", "rocprof", "compare",
];
const MAX_SEED: usize = 16 << 10;
/// SQLite seeds are bigger: a page per table (512 bytes in the fixtures) and the schema.
const MAX_SQLITE_SEED: usize = 32 << 10;
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";
const MAX_INPUT: usize = 128 << 10;
const POOL_CAP: usize = 4096;

/// The last panic's message (the hook runs on whichever thread panicked).
static PANIC_MESSAGE: Mutex<Option<String>> = Mutex::new(None);
/// The input being run, and a counter the watchdog watches, for hangs.
static CURRENT: Mutex<(String, Vec<u8>)> = Mutex::new((String::new(), Vec::new()));
static EXECS: AtomicU64 = AtomicU64::new(0);
/// Where the inputs of targets whose readers take paths are written.
static SCRATCH: OnceLock<PathBuf> = OnceLock::new();

pub(crate) fn main(args: &[String]) -> Result<(), String> {
    let mut secs = 10u64;
    let mut only: Option<String> = None;
    let mut inner = false;
    let mut seed = 0u64;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--secs" => {
                secs = it
                    .next()
                    .and_then(|s| s.parse().ok())
                    .ok_or("--secs takes a number of seconds per target")?;
            }
            "--target" => only = Some(it.next().ok_or("--target takes a name")?.clone()),
            // Another mutation sequence, so that runs add up instead of repeating.
            "--seed" => {
                seed = it
                    .next()
                    .and_then(|s| s.parse().ok())
                    .ok_or("--seed takes a number")?;
            }
            // `--dev`: run in this (debug) build, without building the fuzz profile: slower,
            // for a smoke run where the debug build exists already (CI).
            "--inner" | "--dev" => inner = true,
            other => return Err(format!("fuzz: unknown argument {other}\n{USAGE}")),
        }
    }
    if let Some(t) = &only
        && !TARGETS.contains(&t.as_str())
    {
        return Err(format!(
            "fuzz: unknown target {t}; targets: {}",
            TARGETS.join(", ")
        ));
    }
    if !inner {
        return rerun_with_fuzz_profile(args);
    }
    let root = workspace_root();
    let crash_dir = target_dir(&root).join("fuzz-crashes");
    std::panic::set_hook(Box::new(|info| {
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        if let Ok(mut m) = PANIC_MESSAGE.lock() {
            *m = Some(format!("{message}{place}"));
        }
    }));
    spawn_watchdog(crash_dir.clone());
    let scratch = target_dir(&root)
        .join("fuzz-scratch")
        .join(std::process::id().to_string());
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let _ = SCRATCH.set(scratch.clone());
    let mut saved = 0;
    println!("target   seeds  executions      exec/s  crashes  pool");
    for target in TARGETS {
        if only.as_deref().is_some_and(|t| t != target) {
            continue;
        }
        let seeds = seeds(&root, target)?;
        let report = fuzz_target(target, seeds, Duration::from_secs(secs), seed, &crash_dir);
        println!(
            "{:<8} {:>5} {:>11} {:>11.0} {:>8} {:>5}",
            target,
            report.seeds,
            report.execs,
            report.execs as f64 / report.elapsed.as_secs_f64(),
            report.crashes.len(),
            report.pool
        );
        for (path, message) in &report.crashes {
            println!("  crash: {} ({message})", path.display());
        }
        saved += report.crashes.len();
        std::io::stdout().flush().ok();
    }
    let _ = std::fs::remove_dir_all(&scratch);
    if saved > 0 {
        return Err(format!(
            "fuzz: {saved} panicking inputs saved under {}",
            crash_dir.display()
        ));
    }
    Ok(())
}

const USAGE: &str = "usage: cargo xtask fuzz [--secs N] [--target chrome|xplane|hlo|lanes|nsys|rocprof|compare] [--dev]";

/// Builds xtask with the `fuzz` profile and runs `fuzz --inner` with it.
fn rerun_with_fuzz_profile(args: &[String]) -> Result<(), String> {
    let root = workspace_root();
    eprintln!("fuzz: building xtask with the fuzz profile (release + overflow checks)…");
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(&root)
        .args(["build", "--quiet", "--profile", "fuzz", "-p", "xtask"])
        .status()
        .map_err(|e| format!("cargo build: {e}"))?;
    if !status.success() {
        return Err("fuzz: the build failed".to_owned());
    }
    let exe = target_dir(&root).join("fuzz").join("xtask");
    let status = Command::new(&exe)
        .arg("fuzz")
        .arg("--inner")
        .args(args)
        .status()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("fuzz: {status}"))
    }
}

fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => root.join(dir),
        None => root.join("target"),
    }
}

/// Saves the running input when one execution takes more than 10 s, and ends the run.
fn spawn_watchdog(crash_dir: PathBuf) {
    std::thread::spawn(move || {
        let mut last = u64::MAX;
        loop {
            std::thread::sleep(Duration::from_secs(10));
            let now = EXECS.load(Ordering::Relaxed);
            if now == last {
                let (target, input) = CURRENT.lock().map(|c| c.clone()).unwrap_or_default();
                let path = save(&crash_dir, &target, "hang", &input);
                eprintln!("fuzz: {target}: an input ran for 10 s: {}", path.display());
                std::process::exit(1);
            }
            last = now;
        }
    });
}

struct Report {
    seeds: usize,
    execs: u64,
    elapsed: Duration,
    crashes: Vec<(PathBuf, String)>,
    pool: usize,
}

fn fuzz_target(
    target: &str,
    seeds: Vec<Vec<u8>>,
    time: Duration,
    seed: u64,
    crash_dir: &Path,
) -> Report {
    let seed_count = seeds.len();
    let mut pool = seeds;
    let mut rng = Rng((0x9e37_79b9_7f4a_7c15 ^ target.len() as u64)
        .wrapping_add(seed.wrapping_mul(0x2545_f491_4f6c_dd1d))
        | 1);
    let start = Instant::now();
    let mut execs = 0u64;
    let mut crashes = Vec::new();
    let mut seen_messages: Vec<String> = Vec::new();
    while start.elapsed() < time {
        // Check the clock every 64 executions.
        for _ in 0..64 {
            let input = mutate_for(target, &pool, &mut rng);
            if let Ok(mut c) = CURRENT.lock() {
                c.0.clear();
                c.0.push_str(target);
                c.1.clear();
                c.1.extend_from_slice(&input);
            }
            let res = std::panic::catch_unwind(AssertUnwindSafe(|| run_target(target, &input)));
            execs += 1;
            EXECS.fetch_add(1, Ordering::Relaxed);
            match res {
                Ok(true) if pool.len() < POOL_CAP && input.len() <= max_seed(target) => {
                    pool.push(input)
                }
                Ok(_) => {}
                Err(_) => {
                    let message = PANIC_MESSAGE
                        .lock()
                        .ok()
                        .and_then(|mut m| m.take())
                        .unwrap_or_default();
                    // One input per distinct panic site is enough.
                    if !seen_messages.contains(&message) {
                        seen_messages.push(message.clone());
                        let path = save(crash_dir, target, "crash", &input);
                        crashes.push((path, message));
                    }
                }
            }
        }
    }
    Report {
        seeds: seed_count,
        execs,
        elapsed: start.elapsed(),
        crashes,
        pool: pool.len(),
    }
}

fn save(dir: &Path, target: &str, kind: &str, input: &[u8]) -> PathBuf {
    let dir = dir.join(target);
    let _ = std::fs::create_dir_all(&dir);
    let hash = input.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let path = dir.join(format!("{kind}-{hash:016x}.bin"));
    let _ = std::fs::write(&path, input);
    path
}

/// Runs one target on one input; true when the input was accepted (a candidate seed).
fn run_target(target: &str, input: &[u8]) -> bool {
    match target {
        "chrome" => chrome(input),
        "xplane" => xplane(input),
        "hlo" => hlo(input),
        "lanes" => lanes_target(input),
        "nsys" => nsys(input),
        "rocprof" => rocprof(input),
        "compare" => compare_target(input),
        _ => unreachable!("targets are checked in main"),
    }
}

/// The largest seed (and pool entry) of a target.
fn max_seed(target: &str) -> usize {
    match target {
        "nsys" | "rocprof" | "compare" => MAX_SQLITE_SEED,
        _ => MAX_SEED,
    }
}

/// `name` in this run's scratch directory.
fn scratch_file(name: &str) -> PathBuf {
    SCRATCH
        .get()
        .expect("invariant: main makes the scratch directory before any target runs")
        .join(name)
}

/// Panics (a finding, saved like a crash) when a reader's error does not name the file.
fn assert_names_file(error: &dyn std::fmt::Display, path: &Path) {
    let text = error.to_string();
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .expect("invariant: scratch files have UTF-8 names");
    assert!(
        text.contains(name),
        "the error does not name the file: {text}"
    );
}

fn nsys(input: &[u8]) -> bool {
    let path = scratch_file("fuzz.sqlite");
    let Some(before) = write_with_side_files(&path, input) else {
        return false;
    };
    let result = nsys_inner(&path);
    assert_nothing_beside(&path, &before);
    result
}

fn nsys_inner(path: &Path) -> bool {
    static STEP_NVTX: OnceLock<regex::Regex> = OnceLock::new();
    let path = path.to_path_buf();
    let _ = nsys_reader::is_nsys_export(&path);
    // Every other execution names the steps by a regex, the other path through the NVTX code.
    let step_nvtx = (EXECS.load(Ordering::Relaxed) % 2 == 1).then(|| {
        STEP_NVTX
            .get_or_init(|| {
                regex::Regex::new(r"(?:ProfilerStep#|step )(\d+)")
                    .expect("invariant: the step expression is valid")
            })
            .clone()
    });
    through_the_loader(&path);
    match nsys_reader::load(&path, &nsys_reader::Config { step_nvtx }) {
        Ok(processes) => {
            for process in processes {
                chrome_round_trip(&process.capture);
                analyses(process.capture, &path);
            }
            true
        }
        Err(e) => {
            assert_names_file(&e, &path);
            false
        }
    }
}

/// An investigate report.json side of compare (mutated JSON bytes: numbers at their
/// boundaries, broken tokens), compared with the seed it came from both ways and worded
/// as text, Markdown and HTML. An error must name the file.
fn compare_target(input: &[u8]) -> bool {
    static GOOD: OnceLock<PathBuf> = OnceLock::new();
    let good = GOOD.get_or_init(|| {
        let path = scratch_file("good.report.json");
        let seed = report_seeds().into_iter().next().unwrap_or_default();
        std::fs::write(&path, seed).expect("invariant: the scratch directory is writable");
        path
    });
    let path = scratch_file("fuzz.report.json");
    if std::fs::write(&path, input).is_err() {
        return false;
    }
    let config = compare::Config::default();
    let mut accepted = false;
    for (before, after) in [(&path, good), (good, &path)] {
        match compare::compare(before, after, &config) {
            Ok(c) => {
                let doc = report::compare::document(&c);
                let _ = report::text::render(&doc);
                let _ = report::markdown::render(&doc);
                let _ = report::html::render(&doc);
                accepted = true;
            }
            Err(e) => assert_names_file(&e, &path),
        }
    }
    accepted
}

/// report.json texts of investigations of the small Chrome fixtures: the compare seeds.
fn report_seeds() -> Vec<Vec<u8>> {
    let mut files = Vec::new();
    walk(&workspace_root().join("testdata/chrome/ok"), &mut files);
    files.retain(|p| p.to_string_lossy().ends_with(".json"));
    files.sort();
    let mut out = Vec::new();
    for file in files {
        if std::fs::metadata(&file).map_or(true, |m| m.len() > MAX_SEED as u64) {
            continue;
        }
        if let Ok(run) = investigation::investigate(&file, &Default::default()) {
            out.push(report::report_json::write(&run.investigation).into_bytes());
        }
    }
    out
}

fn rocprof(input: &[u8]) -> bool {
    // The name decides only between Perfetto (by extension) and the rest (by content).
    let path = if input.starts_with(SQLITE_MAGIC) {
        scratch_file("fuzz_results.db")
    } else if input.first() == Some(&0x0a) {
        scratch_file("fuzz.pftrace")
    } else if input.first() == Some(&b'{') {
        scratch_file("fuzz_results.json")
    } else {
        scratch_file("fuzz_kernel_trace.csv")
    };
    let before = if input.starts_with(SQLITE_MAGIC) {
        match write_with_side_files(&path, input) {
            Some(names) => Some(names),
            None => return false,
        }
    } else {
        if std::fs::write(&path, input).is_err() {
            return false;
        }
        None
    };
    let accepted = rocprof_inner(&path, input);
    if let Some(before) = before {
        assert_nothing_beside(&path, &before);
    }
    accepted
}

fn rocprof_inner(path: &Path, input: &[u8]) -> bool {
    use rocprof_reader::Kind;
    let path = path.to_path_buf();
    through_the_loader(&path);
    let mut accepted = false;
    let mut run = |res: Result<Vec<rocprof_reader::Process>, rocprof_reader::Error>| match res {
        Ok(loaded) => {
            for one in loaded {
                chrome_round_trip(&one.capture);
                analyses(one.capture, &path);
            }
            accepted = true;
        }
        Err(e) => assert_names_file(&e, &path),
    };
    run(rocprof_reader::load(&path));
    // JSON goes through the rocprofv3 JSON reader whatever its first key is.
    if input.first() == Some(&b'{') {
        run(rocprof_reader::load_as(&path, Kind::Json));
        return accepted;
    }
    // Text goes through both CSV readers whatever its header says.
    if !input.starts_with(SQLITE_MAGIC) && input.first() != Some(&0x0a) {
        run(rocprof_reader::load_as(&path, Kind::V3Csv));
        run(rocprof_reader::load_as(&path, Kind::V1Csv));
    }
    accepted
}

fn chrome(input: &[u8]) -> bool {
    let path = Path::new("fuzz.json");
    let _ = chrome_reader::read_raw_events(input, path, |_| Ok(()));
    let _ = analysis::compat_json_from_reader(input, path);
    match chrome_reader::load_from(input, path) {
        Ok(capture) => {
            analyses(capture, path);
            true
        }
        Err(e) => {
            let _ = e.to_string();
            false
        }
    }
}

fn xplane(input: &[u8]) -> bool {
    let path = Path::new("fuzz.xplane.pb");
    let Ok(space) = xplane_reader::XSpace::from_bytes(input, path) else {
        return false;
    };
    for program in space.hlo_programs() {
        if let Ok(module) = hlo_parser::module_from_hlo_proto(program.hlo_proto) {
            let _ = module.to_string();
        }
    }
    let capture = xplane_reader::to_capture(&space, path);
    analyses(capture, path);
    true
}

/// The tools' way in: `load::load` detects the format and reads it; its error must name
/// the file too.
fn through_the_loader(path: &Path) {
    if let Err(e) = load::load(path) {
        assert_names_file(&e, path);
    }
}

/// The capture written as Chrome trace JSON (`trace-info --to-chrome-trace`) reads back
/// with the same activities; a difference is a finding, saved like a panic.
fn chrome_round_trip(capture: &trace_model::Capture) {
    let mut json = Vec::new();
    if let Err(e) = chrome_reader::write_chrome_trace(capture, &mut json) {
        panic!("writing Chrome trace JSON to memory failed: {e}");
    }
    let back = match chrome_reader::load_from(&json[..], Path::new("written.json")) {
        Ok(back) => back,
        Err(e) => panic!("the written Chrome trace JSON does not read back: {e}"),
    };
    let rows = |c: &trace_model::Capture| {
        let mut rows: Vec<(i64, i64, String)> = c
            .activities()
            .iter()
            .map(|a| (a.start.0, a.dur.0, c.name(a.name).to_owned()))
            .collect();
        rows.sort();
        rows
    };
    assert!(
        rows(capture) == rows(&back),
        "the written Chrome trace JSON reads back other activities"
    );
}

/// What the tools compute over a capture: analyze-profile's default mode (as JSON),
/// skip-stats (with rows.csv) and trace-info's inventory.
fn analyses(capture: trace_model::Capture, path: &Path) {
    let summary = analysis::gpu_summary(&capture, "fuzz", None);
    let _ = serde_json::to_string(&summary);
    let loaded = [analysis::Loaded {
        path: path.to_path_buf(),
        rank: None,
        capture,
        programs: Vec::new(),
    }];
    let _ = serde_json::to_string(&analysis::inventory(&loaded[0]));
    let config = analysis::SkipConfig::default();
    let _ = analysis::skip_stats_loaded(path, &loaded, &config, Vec::new());
}

fn hlo(input: &[u8]) -> bool {
    let text = String::from_utf8_lossy(input);
    match hlo_parser::parse_module(&text) {
        Ok(module) => {
            let printed = module.to_string();
            let _ = hlo_parser::parse_module(&printed);
            true
        }
        Err(_) => false,
    }
}

fn lanes_target(input: &[u8]) -> bool {
    let path = Path::new("fuzz.json");
    let mut accepted = false;
    for lanes in [lanes::LaneGrouping::Original, lanes::LaneGrouping::Semantic] {
        let Ok(trace) = lanes::Trace::read(input, path) else {
            return false;
        };
        if let Ok(compacted) = lanes::compact_trace(trace, &lanes::Config { lanes }) {
            let _ = compacted.trace.write_json(&mut std::io::sink());
            accepted = true;
        }
    }
    accepted
}

/// Seeds of a target: the `testdata/` files of its format, at most 16 KiB each.
fn seeds(root: &Path, target: &str) -> Result<Vec<Vec<u8>>, String> {
    let (dirs, ext): (&[&str], &[&str]) = match target {
        "chrome" => (
            &["testdata/chrome", "testdata/lanes", "testdata/roofline"],
            &[".json", ".json.gz"],
        ),
        "lanes" => (&["testdata/lanes", "testdata/chrome/ok"], &[".json"]),
        "xplane" => (
            &["testdata/xplane", "testdata/attribution"],
            &[".xplane.pb"],
        ),
        "hlo" => (&["testdata/hlo"], &[".hlo", ".txt"]),
        "nsys" => (&["testdata/nsys"], &[".sqlite"]),
        "rocprof" => (&["testdata/rocprof"], &[".pftrace", ".csv", ".db", ".json"]),
        "compare" => {
            let seeds = report_seeds();
            if seeds.is_empty() {
                return Err("fuzz: no investigation of testdata/chrome/ok to seed compare".into());
            }
            return Ok(seeds);
        }
        _ => unreachable!("targets are checked in main"),
    };
    let mut files = Vec::new();
    for dir in dirs {
        walk(&root.join(dir), &mut files);
    }
    files.retain(|p| ext.iter().any(|e| p.to_string_lossy().ends_with(e)));
    files.sort();
    let mut seeds = Vec::new();
    for file in files {
        let bytes = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        if bytes.len() <= max_seed(target) {
            seeds.push(bytes);
        }
    }
    if target == "hlo" {
        // The HLO text of every program in the XSpace seeds, printed by the parser.
        for xspace in self::seeds(root, "xplane")? {
            if let Ok(space) = xplane_reader::XSpace::from_bytes(&xspace, Path::new("seed")) {
                for program in space.hlo_programs() {
                    if let Ok(module) = hlo_parser::module_from_hlo_proto(program.hlo_proto) {
                        seeds.push(module.to_string().into_bytes());
                    }
                }
            }
        }
    }
    if seeds.is_empty() {
        return Err(format!("fuzz: no seeds for {target} under {dirs:?}"));
    }
    Ok(seeds)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// xorshift64*: small, fast, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const TOKENS: &[&[u8]] = &[
    b"\"ts\":",
    b"\"dur\":",
    b"\"ph\":\"X\",",
    b"\"cat\":\"kernel\",",
    b"\"args\":{\"stream\":7},",
    b"\"pid\":",
    b"\"tid\":",
    b"\"name\":",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"\"",
    b"\\",
    b"\\u0000",
    b"\\ud800",
    b"null",
    b"true",
    b"-",
    b".",
    b"e",
    b"E+",
    b"{}",
    b"[]",
    b"\"traceEvents\":[",
    b"\"ProfilerStep#1\"",
    b"\"cudaLaunchKernel\"",
    b"\"correlation\":1",
    b"\"External id\":1",
    b"\"ac2g\"",
    b"\"s\"",
    b"\"f\"",
    b"\"M\"",
    b"\"thread_name\"",
    b"\"process_name\"",
    b"\"/device:GPU:0\"",
    b"\"Stream #7\"",
    // Protobuf: tags of the XSpace fields.
    b"\x0a",
    b"\x12",
    b"\x1a",
    b"\x22",
    b"\x2a",
    b"\x32",
    b"\x08",
    b"\x10",
    b"\x18",
    // rocprofv3 and rocprof v1 CSV.
    b"\"Correlation_Id\",",
    b"\"Start_Timestamp\",",
    b"\"KERNEL_DISPATCH\",",
    b"\"MEMORY_COPY_HOST_TO_DEVICE\",",
    b",,",
    b"\"\"",
    b"\r\n",
    // HLO text.
    b"ROOT ",
    b"%x = f32[8]{0} ",
    b"parameter(0)",
    b"while(",
    b"fusion(",
    b"calls=",
    b"body=",
    b"condition=",
    b"metadata={",
    b"op_name=\"",
    b"source_line=",
    b"s32[]",
    b"(f32[], s32[])",
    b"ENTRY ",
    b"HloModule m\n",
    b"backend_config=",
    b"known_trip_count",
    b"dot(",
    b"}\n",
];

/// Protobuf varints at the boundaries: 127, 128, u32::MAX, i64::MAX, u64::MAX (i64 -1),
/// and one byte too many.
const VARINTS: &[&[u8]] = &[
    b"\x7f",
    b"\x80\x01",
    b"\xff\xff\xff\xff\x0f",
    b"\xff\xff\xff\xff\xff\xff\xff\xff\x7f",
    b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
    b"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01",
];

const NUMBERS: &[&[u8]] = &[
    b"0",
    b"-0",
    b"1",
    b"-1",
    b"9223372036854775807",
    b"-9223372036854775808",
    b"9223372036854775808",
    b"18446744073709551615",
    b"18446744073709551616",
    b"9223372036854775",
    b"9223372036854776",
    b"4611686018427387",
    b"4611686018427388",
    b"-9223372036854776",
    b"1e308",
    b"1e309",
    b"-1e308",
    b"1e-320",
    b"0.0005",
    b"0.0015",
    b"123456789012345.6789",
    b"2147483647",
    b"4294967296",
    b"604800000000",
    b"604800000001",
    b"1.5e19",
    b"99999999999999999999999999",
];

const INTERESTING_BYTES: &[u8] = b"\x00\xff\x7f\x80\"\\{}[],:-.e0 \n\x0a\x08\x12\x1a\x22";

/// Byte-level mutations for every target; for SQLite seeds of `nsys` and `rocprof`, half
/// the time a mutation through SQLite ([`sql_mutate`]) instead.
fn mutate_for(target: &str, pool: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
    if matches!(target, "nsys" | "rocprof") && rng.below(2) == 0 {
        let seed = &pool[rng.below(pool.len())];
        if seed.starts_with(SQLITE_MAGIC)
            && let Some(mutant) = sql_mutate(seed, rng)
        {
            return mutant;
        }
    }
    mutate(pool, rng)
}

fn mutate(pool: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
    let mut data = pool[rng.below(pool.len())].clone();
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        let len = data.len();
        match rng.below(10) {
            0 if len > 0 => {
                let i = rng.below(len);
                data[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                data[i] = rng.next() as u8;
            }
            2 if len > 0 => {
                let i = rng.below(len);
                data[i] = INTERESTING_BYTES[rng.below(INTERESTING_BYTES.len())];
            }
            3 if len > 0 => {
                let i = rng.below(len);
                let n = (1 + rng.below(16)).min(len - i);
                data.drain(i..i + n);
            }
            4 if len > 0 => {
                let i = rng.below(len);
                let n = (1 + rng.below(64)).min(len - i);
                let piece = data[i..i + n].to_vec();
                let at = rng.below(len + 1);
                data.splice(at..at, piece);
            }
            5 => {
                let token = TOKENS[rng.below(TOKENS.len())];
                let at = rng.below(len + 1);
                data.splice(at..at, token.iter().copied());
            }
            6 if len > 0 => data.truncate(rng.below(len)),
            7 => {
                let other = &pool[rng.below(pool.len())];
                let cut = rng.below(len + 1);
                let from = rng.below(other.len() + 1);
                data.truncate(cut);
                data.extend_from_slice(&other[from..]);
            }
            8 => replace_number(&mut data, rng),
            _ if len > 0 => {
                // Overwrite with a boundary varint (protobuf inputs).
                let token = VARINTS[rng.below(VARINTS.len())];
                let at = rng.below(len);
                let end = (at + token.len()).min(len);
                data.splice(at..end, token.iter().copied());
            }
            _ => data.extend_from_slice(NUMBERS[rng.below(NUMBERS.len())]),
        }
    }
    data.truncate(MAX_INPUT);
    data
}

/// Replaces one run of digits (with its sign and fraction) by a boundary number.
fn replace_number(data: &mut Vec<u8>, rng: &mut Rng) {
    let starts: Vec<usize> = (0..data.len())
        .filter(|&i| data[i].is_ascii_digit() && (i == 0 || !data[i - 1].is_ascii_digit()))
        .collect();
    let number = NUMBERS[rng.below(NUMBERS.len())];
    if starts.is_empty() {
        let at = rng.below(data.len() + 1);
        data.splice(at..at, number.iter().copied());
        return;
    }
    let start = starts[rng.below(starts.len())];
    let start = if start > 0 && data[start - 1] == b'-' {
        start - 1
    } else {
        start
    };
    let mut end = start + 1;
    while end < data.len() && matches!(data[end], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') {
        end += 1;
    }
    data.splice(start..end, number.iter().copied());
}
