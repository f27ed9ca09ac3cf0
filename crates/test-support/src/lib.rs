//! Helpers shared by the workspace's integration tests (a dev-dependency only).
//!
//! The real GPU captures are not in the repository: tests that need them call
//! [`traces_dir`] or [`real_traces`], which read `TRACEWISE_TRACES`. When it is unset the
//! test returns early, and the test binary says so once on the terminal (straight to
//! stderr, past the test harness's output capture), so a fresh clone's `cargo test`
//! passes and shows which suites it skipped. The one list of real captures, with the
//! counts each is checked against read from the set's `MANIFEST.md` files, is
//! [`RealTraces`].
//!
//! ```
//! if let Some(set) = test_support::real_traces("doc example") {
//!     assert!(set.kineto.iter().all(|t| t.path.is_file()));
//! }
//! ```

#![warn(missing_docs)]

mod outputs;
mod pipe;
pub mod synth_ranks;
mod traces;
#[cfg(unix)]
mod unreadable;

pub use outputs::{
    Entry, Measured, OutputKind, Target, assert_help_names_exit_codes, gzip_members, make_fifo,
    output_matrix, run_interrupted, run_measured, snapshot, staged_left, string_bomb,
    whitespace_bomb, write_synthetic_trace,
};
pub use pipe::assert_quiet_on_closed_stdout;
pub use traces::{KinetoTrace, Plane, RealTraces, XSpaceCapture};
#[cfg(unix)]
pub use unreadable::{make_readable, make_unreadable, rerun_where_permissions_hold};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Once;

/// The workspace root (integration tests run with their own crate as current directory).
pub fn workspace_root() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// The arguments of one output-matrix cell: `base`, then `--overwrite` when asked.
pub fn with_overwrite(
    mut base: Vec<std::ffi::OsString>,
    overwrite: bool,
) -> Vec<std::ffi::OsString> {
    if overwrite {
        base.push("--overwrite".into());
    }
    base
}

/// A temporary rank directory that can be read only in part: `rank0.pt.trace.json` is the
/// embedded sample's rank 0 (`testdata/chrome/ok/tiny-train`) and `rank1.pt.trace.json`
/// the truncated fixture `testdata/chrome/err/truncated_json.json`, so a tool reports
/// rank 0, names rank 1 with its error and exits 3.
pub fn partial_rank_dir() -> tempfile::TempDir {
    let root = workspace_root();
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (from, to) in [
        (
            "testdata/chrome/ok/tiny-train/rank0.pt.trace.json",
            "rank0.pt.trace.json",
        ),
        (
            "testdata/chrome/err/truncated_json.json",
            "rank1.pt.trace.json",
        ),
    ] {
        std::fs::copy(root.join(from), dir.path().join(to)).expect("copy a fixture");
    }
    dir
}

/// `cargo metadata --format-version 1` of the workspace with `extra` arguments, as JSON
/// text: offline when every platform's dependencies are in the registry cache (a fresh
/// cache holds only this platform's, and `cargo metadata` needs them all), else online.
/// Panics with cargo's message when both fail.
pub fn cargo_metadata(extra: &[&str]) -> Vec<u8> {
    let run = |more: &[&str]| {
        std::process::Command::new(env!("CARGO"))
            .args(["metadata", "--format-version", "1"])
            .args(extra)
            .args(more)
            .current_dir(workspace_root())
            .output()
            .expect("cargo metadata runs")
    };
    let mut out = run(&["--offline"]);
    if !out.status.success() {
        out = run(&[]);
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The real-trace folder named by `TRACEWISE_TRACES` (a relative path is taken from the
/// workspace root, as CI's `TRACEWISE_TRACES=../shared/traces` means), or `None` when it
/// is unset: the test `test` is then skipped, and the first skip of the process says so on
/// the terminal (see [`skip_notice`]).
pub fn traces_dir(test: &str) -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("TRACEWISE_TRACES") else {
        // Captured by the harness (shown with --nocapture or when the test fails).
        eprintln!("{test}: skipped (set TRACEWISE_TRACES to the real-trace folder to run it)");
        skip_notice();
        return None;
    };
    let dir = PathBuf::from(dir);
    let dir = if dir.is_relative() {
        workspace_root().join(dir)
    } else {
        dir
    };
    assert!(
        dir.is_dir(),
        "TRACEWISE_TRACES={} is not a directory",
        dir.display()
    );
    Some(dir)
}

/// Every `*.json` and `*.json.gz` file below `dir`, sorted by path (panics naming the
/// directory that cannot be read).
pub fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    traces::walk(dir, &mut out);
    out.retain(|path| {
        let name = path.to_string_lossy();
        name.ends_with(".json") || name.ends_with(".json.gz")
    });
    out
}

/// The bytes of `path`, inflated when they are gzip (a truncated gzip fixture inflates as
/// far as it goes); panics naming the file that cannot be read.
pub fn inflated(path: &Path) -> Vec<u8> {
    use std::io::Read;
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return bytes;
    }
    let mut text = Vec::new();
    let _ = flate2::read::GzDecoder::new(&bytes[..]).read_to_end(&mut text);
    text
}

/// Every [`json_files`] fixture below `dir` with its [`inflated`] text; panics when there
/// are fewer than `at_least` (a fixture directory moved or emptied).
pub fn json_texts(dir: &Path, at_least: usize) -> Vec<(PathBuf, Vec<u8>)> {
    let texts: Vec<_> = json_files(dir)
        .into_iter()
        .map(|path| {
            let text = inflated(&path);
            (path, text)
        })
        .collect();
    assert!(
        texts.len() >= at_least,
        "{}: {} JSON fixtures, expected at least {at_least}",
        dir.display(),
        texts.len()
    );
    texts
}

/// The real captures of the folder named by `TRACEWISE_TRACES`, read from its manifests
/// ([`RealTraces::read`]), or `None` when it is unset, as [`traces_dir`].
pub fn real_traces(test: &str) -> Option<RealTraces> {
    traces_dir(test).map(|dir| RealTraces::read(&dir))
}

/// Says once per process, on stderr itself, that real-trace tests are being skipped.
///
/// libtest captures what a test prints with `eprintln!`, so a skip said that way is
/// invisible unless the test fails; a write to the stderr handle is not captured. The
/// notice names the test binary (cargo prints its path on the line before).
pub fn skip_notice() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let binary = std::env::current_exe()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "this test binary".to_owned());
        // Best effort: a notice that cannot be written changes no result.
        let _ = writeln!(
            std::io::stderr(),
            "note: {binary}: the real-trace tests are SKIPPED: TRACEWISE_TRACES is unset \
             (README.md, \"Real traces\", says where the traces come from and how to lay \
             them out)"
        );
    });
}

/// Every malformed or odd input fixture: the files under `testdata/*/err` and
/// `testdata/*/odd` (not their `.md` descriptions), sorted.
pub fn malformed_inputs() -> Vec<PathBuf> {
    let root = workspace_root().join("testdata");
    let mut files = Vec::new();
    let formats = std::fs::read_dir(&root).expect("testdata/ is readable");
    for format in formats {
        let format = format.expect("testdata/ entries are readable").path();
        for kind in ["err", "odd"] {
            let Ok(entries) = std::fs::read_dir(format.join(kind)) else {
                continue;
            };
            for entry in entries {
                let path = entry.expect("fixture entries are readable").path();
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if path.is_file() && !name.ends_with(".md") {
                    files.push(path);
                }
            }
        }
    }
    files.sort();
    files
}

/// What [`run_on_malformed`] saw.
#[derive(Debug, Default)]
pub struct MalformedRun {
    /// Malformed files the tool was run on.
    pub inputs: usize,
    /// Runs that ended in an error (exit 2 or 3).
    pub errors: usize,
    /// Runs that exited 0 (the tool read past the damage).
    pub successes: usize,
}

/// Runs the tool `bin` on every [`malformed_inputs`] file, with `args(input, out_dir)` as
/// its arguments and a fresh empty `out_dir` each time, and checks what every tool owes a
/// malformed input: no panic (exit 101, "panicked" on stderr), exit 0, 2 or 3; an error
/// that names the file and a position in it (byte, event, offset, field, plane, line; in
/// a SQLite file its table, with the row and column where one is at fault) or says the
/// whole file is at fault (empty, no `traceEvents`, no GPU slices);
/// and, on an error, nothing written into `out_dir`.
pub fn run_on_malformed(
    bin: &str,
    args: impl Fn(&std::path::Path, &std::path::Path) -> Vec<std::ffi::OsString>,
) -> MalformedRun {
    let inputs = malformed_inputs();
    assert!(inputs.len() >= 50, "{} malformed inputs", inputs.len());
    let scratch = std::env::temp_dir().join(format!("tracewise-malformed-{}", std::process::id()));
    let mut run = MalformedRun::default();
    let mut problems = Vec::new();
    for input in &inputs {
        let out = scratch.join(input.file_name().expect("fixtures have names"));
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).expect("the scratch directory can be created");
        let res = std::process::Command::new(bin)
            .args(args(input, &out))
            .output()
            .expect("the tool runs");
        let stderr = String::from_utf8_lossy(&res.stderr);
        let code = res.status.code();
        let shown = input.display();
        run.inputs += 1;
        if stderr.contains("panicked") || !matches!(code, Some(0 | 2 | 3)) {
            problems.push(format!("{shown}: exit {code:?}, stderr: {stderr}"));
            continue;
        }
        if code == Some(0) {
            run.successes += 1;
            continue;
        }
        run.errors += 1;
        let name = input.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !stderr.contains(name) {
            problems.push(format!(
                "{shown}: the error does not name the file: {stderr}"
            ));
        }
        // A position in the file (for a SQLite database, the table, and the row where one
        // row is at fault), or a fault of the whole file (empty; no `traceEvents`).
        let positions = [
            "byte",
            "table ",
            "event",
            "offset",
            "field",
            "line",
            "the file is empty",
            "no \"traceEvents\"",
            "contains no GPU",
            // A format the tool cannot use (a JAX trace for attribution: no HLO modules).
            "carries no HLO modules",
            // A file of no format the loader knows.
            "not a capture this tool reads",
            // A mode that reads one format only, given another (analyze-profile --compat).
            "Kineto Chrome traces only",
        ];
        // Looked for in the message only: the file's own path may hold these words.
        let message = stderr
            .replace(&input.display().to_string(), "")
            .replace(name, "");
        if !positions.iter().any(|p| message.contains(p)) {
            problems.push(format!("{shown}: the error names no position: {stderr}"));
        }
        let left: Vec<_> = std::fs::read_dir(&out)
            .expect("the scratch directory is readable")
            .map(|e| e.expect("entry").file_name())
            .collect();
        if !left.is_empty() {
            problems.push(format!(
                "{shown}: output left behind after an error: {left:?}"
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    run
}
