//! The output-safety matrix: one tool, one output option, every kind of target a careful
//! user or an attacker could give it, with and without `--overwrite`; and the pieces the
//! interrupt and hostile-input tests share (a large synthetic trace, a sandbox snapshot).
//!
//! Every cell runs in a fresh sandbox (`work/` is the current directory, the input is
//! `work/input/<fixture>`, the user's own files are in `work/` and `user/`), snapshots
//! every entry before the run and checks afterwards that each one is still there with the
//! same bytes (or link target), that nothing staged (`.tracewise-`) is left anywhere, and
//! that the exit status is the one the rules give. The one cell where a file may change is
//! an existing file given with `--overwrite` to an option that writes a file: it must then
//! be replaced.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What an output option writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputKind {
    /// A file at the path (`-o`, `--csv`, `--svg`).
    File,
    /// A directory at the path (`--out` of investigate and attribute-kernels, `--export`).
    Dir,
    /// A file inside the directory at the path (skip-stats' `--out DIR` for `rows.csv`).
    FileInDir,
    /// A cache directory: unusable ones are ignored with a warning (`--cache-dir`).
    Cache,
}

/// Where the output option points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A regular file of the user's.
    ExistingFile,
    /// A directory of the user's, with a file in it.
    UserDir,
    /// `.`
    Dot,
    /// `..`
    DotDot,
    /// The input file itself.
    Input,
    /// The directory that holds the input.
    DirHoldingInput,
    /// A symbolic link to a file of the user's.
    SymlinkToFile,
    /// A symbolic link to a directory of the user's.
    SymlinkToDir,
    /// A symbolic link to nothing.
    DanglingSymlink,
    /// A FIFO (reading or writing it would block).
    Fifo,
    /// `/dev/null`.
    DevNull,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 11] = [
        Target::ExistingFile,
        Target::UserDir,
        Target::Dot,
        Target::DotDot,
        Target::Input,
        Target::DirHoldingInput,
        Target::SymlinkToFile,
        Target::SymlinkToDir,
        Target::DanglingSymlink,
        Target::Fifo,
        Target::DevNull,
    ];

    /// The path given to the tool, relative to the sandbox's `work/` (its current
    /// directory) unless absolute.
    fn path(self, input_name: &str) -> PathBuf {
        PathBuf::from(match self {
            Target::ExistingFile => "existing.txt".to_owned(),
            Target::UserDir => "userdir".to_owned(),
            Target::Dot => ".".to_owned(),
            Target::DotDot => "..".to_owned(),
            Target::Input => format!("input/{input_name}"),
            Target::DirHoldingInput => "input".to_owned(),
            Target::SymlinkToFile => "link-to-file".to_owned(),
            Target::SymlinkToDir => "link-to-dir".to_owned(),
            Target::DanglingSymlink => "dangling".to_owned(),
            Target::Fifo => "fifo".to_owned(),
            Target::DevNull => "/dev/null".to_owned(),
        })
    }

    /// The exit status the rules give a run of an option of `kind` at this target.
    fn expected_exit(self, kind: OutputKind, overwrite: bool) -> i32 {
        match kind {
            OutputKind::File => match self {
                Target::ExistingFile if overwrite => 0,
                _ => 2,
            },
            OutputKind::Dir => 2,
            OutputKind::FileInDir => match self {
                // A new rows.csv in a directory loses nothing.
                Target::UserDir
                | Target::Dot
                | Target::DotDot
                | Target::DirHoldingInput
                | Target::SymlinkToDir => 0,
                _ => 2,
            },
            OutputKind::Cache => 0,
        }
    }

    /// Whether a refusal here is one `--overwrite` cannot lift (so the message must not
    /// suggest it).
    fn refused_anyway(self, kind: OutputKind) -> bool {
        !(self == Target::ExistingFile && kind == OutputKind::File)
    }
}

/// One entry of a sandbox: a file's bytes, a link's target, or a directory, FIFO, device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A regular file and its bytes.
    File(Vec<u8>),
    /// A directory.
    Dir,
    /// A symbolic link and what it points to.
    Link(PathBuf),
    /// Anything else (a FIFO): its kind as text.
    Other(String),
}

/// Every entry below `root` (not following links), by path relative to `root`.
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Entry> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Entry>) {
        let entries = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: cannot list: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("a readable entry").path();
            let rel = path
                .strip_prefix(root)
                .expect("below the root")
                .to_path_buf();
            let meta = std::fs::symlink_metadata(&path).expect("metadata");
            let kind = meta.file_type();
            let e = if kind.is_symlink() {
                Entry::Link(std::fs::read_link(&path).expect("a link"))
            } else if kind.is_dir() {
                walk(root, &path, out);
                Entry::Dir
            } else if kind.is_file() {
                Entry::File(std::fs::read(&path).expect("a readable file"))
            } else {
                Entry::Other(format!("{kind:?}"))
            };
            out.insert(rel, e);
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// The paths below `root` whose name says they were staged by `output-file`
/// (`.<name>.tracewise-<pid>-<random>.tmp`, or `.old` for an old output renamed aside).
pub fn staged_left(root: &Path) -> Vec<PathBuf> {
    snapshot(root)
        .into_keys()
        .filter(|p| {
            // `.<name>.tracewise-<pid>-<random>.tmp`; not the marker `.tracewise-output`.
            p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.contains(".tracewise-") && (n.ends_with(".tmp") || n.ends_with(".old"))
            })
        })
        .collect()
}

/// Makes a FIFO at `path` (with `mkfifo`, which must exist: the test fails otherwise).
pub fn make_fifo(path: &Path) {
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs (coreutils)");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// A sandbox for one cell: `root/work` (the current directory of the run) with the input
/// in `work/input/` and the user's files, and `root/user` with more of them.
struct Sandbox {
    _dir: tempfile::TempDir,
    root: PathBuf,
    work: PathBuf,
    input: PathBuf,
}

impl Sandbox {
    fn new(fixture: &Path) -> Sandbox {
        let dir = tempfile::Builder::new()
            .prefix("tracewise-matrix-")
            .tempdir()
            .expect("a temporary directory");
        let root = dir.path().to_path_buf();
        let work = root.join("work");
        let user = root.join("user");
        for d in [&work, &user, &work.join("input"), &work.join("userdir")] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        let name = fixture.file_name().expect("the fixture has a name");
        let input = work.join("input").join(name);
        std::fs::copy(fixture, &input).expect("the fixture is copied");
        std::fs::write(work.join("input/notes.txt"), b"beside the input").expect("write");
        std::fs::write(work.join("existing.txt"), b"the user's file").expect("write");
        std::fs::write(work.join("userdir/notes.txt"), b"the user's notes").expect("write");
        std::fs::write(user.join("target.txt"), b"a link's target").expect("write");
        std::fs::write(root.join("top.txt"), b"above the current directory").expect("write");
        #[cfg(unix)]
        {
            use std::os::unix::fs::symlink;
            symlink("../user/target.txt", work.join("link-to-file")).expect("symlink");
            symlink("../user", work.join("link-to-dir")).expect("symlink");
            symlink("../user/nowhere", work.join("dangling")).expect("symlink");
        }
        make_fifo(&work.join("fifo"));
        Sandbox {
            _dir: dir,
            root,
            work,
            input,
        }
    }
}

/// Runs the matrix for one output option of the tool `bin`: `args(input, target,
/// overwrite)` are the arguments of one run (paths relative to the run's current
/// directory or absolute). Panics with every cell that broke a rule.
pub fn output_matrix(
    bin: &str,
    option: &str,
    kind: OutputKind,
    fixture: &Path,
    args: impl Fn(&Path, &Path, bool) -> Vec<OsString>,
) {
    let mut problems = Vec::new();
    let mut cells = 0;
    for target in Target::ALL {
        for overwrite in [false, true] {
            cells += 1;
            let sandbox = Sandbox::new(fixture);
            let input_name = sandbox
                .input
                .file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned();
            let path = target.path(&input_name);
            let before = snapshot(&sandbox.root);
            let input_rel = Path::new("input").join(&input_name);
            let out = Command::new(bin)
                .args(args(&input_rel, &path, overwrite))
                .current_dir(&sandbox.work)
                .env("XDG_CACHE_HOME", sandbox.root.join("xdg"))
                .stdin(std::process::Stdio::null())
                .output()
                .expect("the tool runs");
            let after = snapshot(&sandbox.root);
            let cell = format!("{option} {target:?} overwrite={overwrite}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            let want = target.expected_exit(kind, overwrite);
            if out.status.code() != Some(want) {
                problems.push(format!(
                    "{cell}: exit {:?}, expected {want}; stderr: {stderr}",
                    out.status.code()
                ));
            }
            if want == 2
                && overwrite
                && target.refused_anyway(kind)
                && stderr.contains("--overwrite")
            {
                problems.push(format!(
                    "{cell}: refused anyway, but the message suggests --overwrite: {stderr}"
                ));
            }
            let replaced = sandbox.work.join("existing.txt");
            for (rel, entry) in &before {
                let now = after.get(rel);
                let may_change = kind == OutputKind::File
                    && target == Target::ExistingFile
                    && overwrite
                    && sandbox.root.join(rel) == replaced;
                if may_change {
                    if now == Some(entry) {
                        problems.push(format!("{cell}: --overwrite did not replace the file"));
                    }
                    continue;
                }
                if now != Some(entry) {
                    problems.push(format!(
                        "{cell}: {} changed: {:?} -> {:?}",
                        rel.display(),
                        short(Some(entry)),
                        short(now)
                    ));
                }
            }
            let staged = staged_left(&sandbox.root);
            if !staged.is_empty() {
                problems.push(format!("{cell}: staged entries left: {staged:?}"));
            }
            if std::fs::metadata("/dev/null").map_or(true, |m| m.is_file()) {
                problems.push(format!("{cell}: /dev/null is no longer a device"));
            }
        }
    }
    assert_eq!(cells, 22);
    assert!(
        problems.is_empty(),
        "{} of {cells} cells broke a rule:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

fn short(e: Option<&Entry>) -> String {
    match e {
        Some(Entry::File(b)) => format!("file of {} bytes", b.len()),
        Some(other) => format!("{other:?}"),
        None => "missing".into(),
    }
}

/// A large Kineto-shaped trace of about `bytes` bytes at `path` (steps of CPU ops, each
/// with a runtime launch and a kernel on one of four streams, linked by correlation id),
/// for tests that need a run long enough to interrupt.
pub fn write_synthetic_trace(path: &Path, bytes: u64) {
    use std::io::Write;
    let file = std::fs::File::create(path).expect("the synthetic trace can be created");
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    let kernels = [
        "void at::native::vectorized_elementwise_kernel<4>(int)",
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_cublas",
        "void flash_fwd_kernel<Flash_fwd_kernel_traits<128>>(Flash_fwd_params)",
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    ];
    let ops = [
        "aten::add",
        "aten::mm",
        "aten::_scaled_dot_product_flash_attention",
        "nccl:all_reduce",
    ];
    writeln!(
        w,
        "{{\"schemaVersion\": 1, \"deviceProperties\": [{{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\"}}], \"distributedInfo\": {{\"rank\": 0, \"world_size\": 1}}, \"traceEvents\": ["
    )
    .expect("write");
    let (mut written, mut ts, mut corr, mut step) = (0u64, 1_000_000u64, 1u64, 0u64);
    let mut text = String::with_capacity(1 << 16);
    while written < bytes {
        text.clear();
        text.push_str(&format!(
            "{{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#{step}\", \"pid\": 100, \"tid\": 100, \"ts\": {ts}, \"dur\": 20000}},\n"
        ));
        for i in 0..200u64 {
            let k = (i % 4) as usize;
            let t0 = ts + i * 100;
            let stream = 7 + k;
            text.push_str(&format!(
                "{{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"{op}\", \"pid\": 100, \"tid\": 100, \"ts\": {t1}, \"dur\": 60, \"args\": {{\"External id\": {corr}}}}},\n\
{{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 100, \"tid\": 100, \"ts\": {t2}, \"dur\": 8, \"args\": {{\"External id\": {corr}, \"correlation\": {corr}}}}},\n\
{{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"{kernel}\", \"pid\": 0, \"tid\": {stream}, \"ts\": {t3}, \"dur\": 70, \"args\": {{\"External id\": {corr}, \"device\": 0, \"stream\": {stream}, \"correlation\": {corr}}}}},\n",
                op = ops[k],
                t1 = t0 + 10,
                t2 = t0 + 40,
                t3 = t0 + 55,
                kernel = kernels[k],
            ));
            corr += 1;
        }
        w.write_all(text.as_bytes()).expect("write");
        written += text.len() as u64;
        ts += 20_000;
        step += 1;
    }
    writeln!(
        w,
        "{{\"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"\", \"tid\": \"\", \"ts\": {ts}}}\n], \"traceName\": \"synthetic\"}}"
    )
    .expect("write");
    w.flush().expect("flush");
}

/// Runs `cmd` (stdout and stderr discarded), sends it `signal` (`INT`, `TERM`, `KILL`)
/// after `after`, and returns how it ended. A child that finished first is not signalled
/// again: it is a zombie until waited for, so its pid cannot have been reused.
pub fn run_interrupted(
    mut cmd: Command,
    after: std::time::Duration,
    signal: &str,
) -> std::process::ExitStatus {
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the tool starts");
    std::thread::sleep(after);
    if child.try_wait().expect("wait").is_none() {
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .expect("kill runs");
        assert!(sent.success() || child.try_wait().expect("wait").is_some());
    }
    child.wait().expect("the tool ends")
}

/// How a run measured by [`run_measured`] ended.
#[derive(Debug)]
pub struct Measured {
    /// The exit code (`None`: ended by a signal, or killed at the deadline).
    pub code: Option<i32>,
    /// What it wrote to stderr.
    pub stderr: String,
    /// Its peak resident set, in KiB (from `/usr/bin/time -f %M`).
    pub peak_kib: u64,
    /// Wall time.
    pub elapsed: std::time::Duration,
    /// CPU time, user plus system, of the tool and its children (from `/usr/bin/time -f
    /// %U %S`; zero when killed at the deadline, since `time` is killed with it).
    pub cpu: std::time::Duration,
    /// Whether it was killed for running past the deadline.
    pub timed_out: bool,
}

impl Measured {
    /// The time a budget is checked against: the smaller of wall and CPU time. Wall time
    /// alone fails on a machine busy with other work (a debug test run on two cores under
    /// a parallel build took 14 s for a 3 s input); CPU time alone overstates a tool that
    /// runs threads in parallel. A tool that loops or waits on nothing exceeds both.
    pub fn busy(&self) -> std::time::Duration {
        if self.timed_out {
            self.elapsed
        } else {
            self.elapsed.min(self.cpu)
        }
    }
}

/// Runs `bin args` under `/usr/bin/time` (which must exist: the test fails otherwise),
/// killing it after `deadline`, and returns its exit code, stderr, peak memory and time.
pub fn run_measured(
    bin: &str,
    args: &[std::ffi::OsString],
    envs: &[(&str, &str)],
    deadline: std::time::Duration,
) -> Measured {
    let report = tempfile::NamedTempFile::new().expect("a temporary file");
    let start = std::time::Instant::now();
    let mut child = Command::new("/usr/bin/time")
        .arg("-f")
        .arg("%M %U %S")
        .arg("-o")
        .arg(report.path())
        .arg(bin)
        .args(args)
        .envs(envs.iter().copied())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("/usr/bin/time runs the tool");
    let mut stderr_pipe = child.stderr.take().expect("stderr is piped");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr_pipe, &mut text);
        text
    });
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > deadline {
            timed_out = true;
            let _ = child.kill();
            break child.wait().expect("wait");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let elapsed = start.elapsed();
    let stderr = reader.join().expect("stderr is read");
    // The last line is "%M %U %S": peak KiB, user and system seconds.
    let report = std::fs::read_to_string(report.path()).unwrap_or_default();
    let fields: Vec<&str> = report
        .lines()
        .last()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let peak_kib = fields.first().and_then(|f| f.parse().ok()).unwrap_or(0);
    let seconds = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    let cpu = std::time::Duration::from_secs_f64(seconds(1) + seconds(2));
    Measured {
        code: status.code(),
        stderr,
        peak_kib,
        elapsed,
        cpu,
        timed_out,
    }
}

/// Checks that `bin --help` states the exit statuses of the workspace's one policy: 0 on
/// success, 2 on bad input or a refused output (3, a partial result, where the tool has
/// one).
pub fn assert_help_names_exit_codes(bin: &str) {
    let out = Command::new(bin)
        .arg("--help")
        .output()
        .expect("--help runs");
    assert!(out.status.success(), "{bin} --help");
    let help = String::from_utf8_lossy(&out.stdout);
    let at = help
        .find("Exit status:")
        .unwrap_or_else(|| panic!("{bin} --help has no \"Exit status:\" paragraph:\n{help}"));
    let policy = &help[at..];
    assert!(
        policy.contains('0') && policy.contains('2'),
        "{bin}: {policy}"
    );
}

/// `n` gzip members of `text` each between a member of `first` and one of `last`: a file
/// of about `n` times one small member that a gzip reader inflates to `n * text.len()`
/// bytes (for the decompression-bomb tests).
pub fn gzip_members(first: &[u8], text: &[u8], n: usize, last: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let member = |bytes: &[u8]| {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        enc.write_all(bytes).expect("deflate");
        enc.finish().expect("deflate")
    };
    let body = member(text);
    let mut out = member(first);
    for _ in 0..n {
        out.extend_from_slice(&body);
    }
    out.extend_from_slice(&member(last));
    out
}

/// A gzip trace of one event and then 2 GiB of whitespace (about 2 MB on disk).
pub fn whitespace_bomb() -> Vec<u8> {
    let head =
        br#"{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1},"#;
    gzip_members(head, &vec![b' '; 16 << 20], 128, b"]}")
}

/// A gzip trace whose one event has a 2 GiB name (about 2 MB on disk).
pub fn string_bomb() -> Vec<u8> {
    let head = br#"{"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "name": ""#;
    gzip_members(head, &vec![b'a'; 16 << 20], 128, b"\"}]}")
}
