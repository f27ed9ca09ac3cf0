//! Staged outputs: their names, the registry of what this process has staged, and its
//! removal on SIGINT, SIGTERM or SIGHUP.
//!
//! A staged file or directory is named `.<output name>.tracewise-<pid>-<random>.tmp` in the
//! output's directory: created with `O_EXCL` (`mkdir` for a directory), so two runs never
//! share one, and recognisable, so a later run can remove what a killed one (SIGKILL, power
//! loss) left behind: an entry whose process no longer exists ([`remove_stale`]).
//!
//! Every staged path is in one registry until it is committed or dropped. The first one
//! starts a thread that waits for SIGINT, SIGTERM and SIGHUP; on one it removes every
//! registered path and then ends the process as the signal would have. A commit holds the
//! registry's lock while it renames, so a signal lands before the commit (nothing of it is
//! in place) or after it (the output is complete), never in the middle.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, Once, RwLock};

/// What the registry holds: staged paths by id.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    next: u64,
    staged: Vec<(u64, PathBuf)>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    next: 0,
    staged: Vec::new(),
});

static SIGNALS: Once = Once::new();

/// The registry, locked; a panic while it was held does not make it unusable.
pub(crate) fn lock() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

impl Registry {
    /// Records `path` as staged; the id removes it again.
    pub(crate) fn add(&mut self, path: PathBuf) -> u64 {
        self.next += 1;
        self.staged.push((self.next, path));
        self.next
    }

    /// Forgets the path of `id` (committed, or removed by its owner).
    pub(crate) fn remove(&mut self, id: u64) {
        self.staged.retain(|(i, _)| *i != id);
    }

    /// The paths staged now, oldest first.
    pub(crate) fn paths(&self) -> Vec<PathBuf> {
        self.staged.iter().map(|(_, p)| p.clone()).collect()
    }
}

/// Registers `path` as staged and makes sure a signal removes it.
pub(crate) fn register(path: PathBuf) -> u64 {
    install_signal_cleanup();
    lock().add(path)
}

/// Forgets `id` (after it was committed or removed).
pub(crate) fn unregister(id: u64) {
    lock().remove(id);
}

/// A private temporary directory for a run's intermediate files (not an output: nothing
/// in it is ever put in place), such as captures converted to another format. It is
/// removed when dropped, and on SIGINT, SIGTERM or SIGHUP with the staged outputs.
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
    id: u64,
}

impl ScratchDir {
    /// Creates `<system temporary directory>/<prefix><random>`, readable by this user only.
    pub fn create(prefix: &str) -> io::Result<ScratchDir> {
        install_signal_cleanup();
        // Created and registered under the registry's lock: a signal's removal, which takes
        // the lock, sees it registered or never created.
        let mut registry = lock();
        let path = tempfile::Builder::new().prefix(prefix).tempdir()?.keep();
        let id = registry.add(path.clone());
        Ok(ScratchDir { path, id })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates the file `name` (one path component) in the directory for reading and
    /// writing, readable by this user only. It must not exist: an existing file or a
    /// symlink of that name is an error, never followed or replaced.
    pub fn create_file(&self, name: &str) -> io::Result<std::fs::File> {
        let path = self.file_path(name)?;
        let mut options = std::fs::OpenOptions::new();
        options.read(true).write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        options.open(path)
    }

    /// Removes the file `name` (one path component) of the directory, before the directory
    /// goes. A symlink of that name is removed itself, never its target; a directory of
    /// that name is an error.
    pub fn remove_file(&self, name: &str) -> io::Result<()> {
        std::fs::remove_file(self.file_path(name)?)
    }

    /// The path of `name` in the directory, when `name` is one plain path component.
    fn file_path(&self, name: &str) -> io::Result<PathBuf> {
        let mut parts = Path::new(name).components();
        if !matches!(
            (parts.next(), parts.next()),
            (Some(std::path::Component::Normal(_)), None)
        ) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{name:?} is not a file name of the scratch directory"),
            ));
        }
        Ok(self.path.join(name))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let mut registry = lock();
        let _ = remove_path(&self.path);
        registry.remove(self.id);
    }
}

/// How many outputs (files, or directories) this process has put in place.
static COMMITTED: AtomicUsize = AtomicUsize::new(0);

/// Counts one commit (of a file, a set of files or a directory).
pub(crate) fn committed() {
    COMMITTED.fetch_add(1, Ordering::SeqCst);
}

/// How many commits this process has made: a tool whose run fails after one (a stdout
/// that cannot be written, a second stage that fails) has written something, and says so
/// by its exit code (`tool-cli`: 1, never 2, which means nothing was written).
pub fn outputs_committed() -> usize {
    COMMITTED.load(Ordering::SeqCst)
}

/// Removes everything this process has staged and not committed, as a signal would, and
/// ends the process with `code`: for a watchdog that stops a run past its budget. No
/// commit can start afterwards (the registry stays locked), and files being created in a
/// staged directory are refused first.
pub fn abandon_and_exit(code: i32) -> ! {
    let registry = lock();
    STOPPING.store(true, Ordering::SeqCst);
    let _exclusive = GATE.write().unwrap_or_else(|e| e.into_inner());
    for path in registry.paths().iter().rev() {
        let _ = remove_path(path);
    }
    std::process::exit(code)
}

/// The paths this process has staged and not yet committed or removed (for tests and
/// diagnostics).
pub fn staged_paths() -> Vec<PathBuf> {
    lock().paths()
}

/// The prefix of every staged name of the output `name`: `.<name>.tracewise-<pid>-`.
pub(crate) fn prefix(name: &str) -> String {
    format!(".{name}.tracewise-{}-", std::process::id())
}

/// The suffix of every staged name.
pub(crate) const SUFFIX: &str = ".tmp";

/// The suffix of an old output directory renamed aside during a commit (only where the
/// file system cannot exchange two directories in one step).
pub(crate) const ASIDE_SUFFIX: &str = ".old";

/// Removes a staged path: a directory with everything in it, else the entry itself. A
/// symbolic link is removed, never followed.
pub(crate) fn remove_path(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => remove_dir_marker_last(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// How many times a directory's removal lists it again for entries that appeared while it
/// was being removed (a writer thread finishing the file it had opened).
const REMOVAL_ROUNDS: usize = 16;

/// Removes the directory `dir` and everything in it, its marker ([`crate::MARKER`]) last:
/// a removal cut short (SIGKILL, an error) leaves a directory that still carries the
/// marker, which the next run recognises as ours and removes ([`remove_stale`]). Entries
/// that appear during the removal are removed in another round; if one appears after the
/// marker went, the marker is written again before the next round.
fn remove_dir_marker_last(dir: &Path) -> io::Result<()> {
    let marker = dir.join(crate::MARKER);
    let had_marker = marker.is_file();
    let mut last = None;
    for round in 0..REMOVAL_ROUNDS {
        if round > 0 {
            std::thread::sleep(std::time::Duration::from_millis(2 << round.min(6)));
        }
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        let mut entry_error = None;
        for entry in entries {
            let entry = entry?;
            if entry.file_name() == crate::MARKER {
                continue;
            }
            let path = entry.path();
            let removed = match entry.file_type() {
                Ok(t) if t.is_dir() => std::fs::remove_dir_all(&path),
                _ => std::fs::remove_file(&path),
            };
            match removed {
                Err(e) if e.kind() != io::ErrorKind::NotFound => entry_error = Some(e),
                _ => {}
            }
        }
        match std::fs::remove_file(&marker) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        match std::fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => {
                if had_marker {
                    // Something appeared after the marker went: mark the directory again,
                    // so that what is left is still recognisably ours.
                    let _ = std::fs::write(&marker, crate::dir::MARKER_TEXT);
                }
                // An entry that could not be removed says more than "not empty".
                last = Some(entry_error.unwrap_or(e));
            }
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("the directory could not be emptied")))
}

/// Set once a signal's cleanup has begun: no new file is created in a staged directory
/// after that ([`creating`]).
static STOPPING: AtomicBool = AtomicBool::new(false);

/// Held (shared) while a file of a staged directory is being created, and (exclusively) by
/// a signal's cleanup before it removes anything: a creation is either finished before
/// the removal lists the directory, or refused.
static GATE: RwLock<()> = RwLock::new(());

/// Runs `create` (the creation of a staged file or directory, or of an entry inside a
/// staged directory) unless a signal's cleanup has begun, in which case it is refused:
/// parallel writers stop before the stage is removed, so the removal never races with new
/// entries.
pub(crate) fn creating<T>(create: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    let _shared = GATE.read().unwrap_or_else(|e| e.into_inner());
    if STOPPING.load(Ordering::SeqCst) {
        return Err(io::Error::new(
            io::ErrorKind::Interrupted,
            "the run was interrupted; its outputs are being removed",
        ));
    }
    create()
}

/// Removes what runs that no longer exist staged for the output `name` in `dir`: entries
/// named `.<name>.tracewise-<pid>-*.tmp` whose process is gone (Linux only, where `/proc`
/// says which processes exist; elsewhere nothing is removed). An old output such a run had
/// renamed aside (`.old`) is put back when nothing is at `name`, else removed.
pub(crate) fn remove_stale(dir: &Path, name: &str) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let start = format!(".{name}.tracewise-");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else {
            continue;
        };
        let Some(rest) = file_name.strip_prefix(&start) else {
            continue;
        };
        let aside = rest.ends_with(ASIDE_SUFFIX);
        if !rest.ends_with(SUFFIX) && !aside {
            continue;
        }
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        // A staged directory holds the marker from its first moment to its last (written
        // right after it is made, removed last); one without it is not ours to remove (a
        // user's directory that a failed commit could not put back), unless it is empty (a
        // run killed between making it and marking it): removing that loses nothing.
        let path = entry.path();
        let is_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        if is_dir && !path.join(crate::MARKER).is_file() {
            let _ = std::fs::remove_dir(&path);
            continue;
        }
        // An old output renamed aside by a run killed before it put the new one in place:
        // it goes back where it was, unless something is there now.
        let target = dir.join(name);
        if aside && std::fs::symlink_metadata(&target).is_err() {
            let _ = std::fs::rename(&path, &target);
            continue;
        }
        let _ = remove_path(&path);
    }
}

/// Leaves SIGINT, SIGTERM and SIGHUP to the host process: no cleanup thread is ever
/// started (call it before anything is staged). For a library loaded into another program,
/// such as the Python package, whose interpreter owns those signals (Ctrl-C must raise
/// `KeyboardInterrupt`, not end the process); what an interrupted run staged is then left
/// for a later run to remove, as after SIGKILL.
pub fn leave_signals_to_host() {
    SIGNALS.call_once(|| {});
}

/// Starts the thread that removes staged paths on SIGINT, SIGTERM and SIGHUP (once per
/// process; the tools need not call it, staging does).
pub fn install_signal_cleanup() {
    SIGNALS.call_once(|| {
        #[cfg(unix)]
        {
            use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
            // Without the handler a signal still ends the process; only its staged files
            // would stay, as after SIGKILL, for the next run to remove.
            let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
            else {
                return;
            };
            let spawned = std::thread::Builder::new()
                .name("output-file-signals".into())
                .spawn(move || {
                    if let Some(signal) = signals.forever().next() {
                        // Held to the end: no commit can start after the removal.
                        let registry = lock();
                        // No file is created in a staged directory from here on; creations
                        // under way finish before anything is removed.
                        STOPPING.store(true, Ordering::SeqCst);
                        let _exclusive = GATE.write().unwrap_or_else(|e| e.into_inner());
                        for path in registry.paths().iter().rev() {
                            let _ = remove_path(path);
                        }
                        let _ = signal_hook::low_level::emulate_default_handler(signal);
                        std::process::exit(128 + signal);
                    }
                });
            drop(spawned);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_file_is_new_and_stays_in_its_directory() {
        let scratch = ScratchDir::create("tracewise-test-scratch").unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("user-file");
        std::fs::write(&target, b"the user's").unwrap();
        let mut file = scratch.create_file("rank-0.csv").unwrap();
        std::io::Write::write_all(&mut file, b"rows").unwrap();
        // An existing name is refused, not truncated.
        let e = scratch.create_file("rank-0.csv").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(
            std::fs::read(scratch.path().join("rank-0.csv")).unwrap(),
            b"rows"
        );
        // A symlink of that name is not followed; removing it removes the link only.
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&target, scratch.path().join("link.csv")).unwrap();
            assert!(scratch.create_file("link.csv").is_err());
            scratch.remove_file("link.csv").unwrap();
            assert!(!scratch.path().join("link.csv").exists());
        }
        // Only one plain component: no way out of the directory, to create or to remove.
        let user_file = target.to_string_lossy().into_owned();
        for name in [
            "../escape.csv",
            "a/b.csv",
            "/tmp/x.csv",
            "..",
            ".",
            &user_file,
        ] {
            let e = scratch.create_file(name).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{name}");
            let e = scratch.remove_file(name).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{name}");
        }
        // A directory of the user's inside it is not removed as a file.
        std::fs::create_dir(scratch.path().join("sub")).unwrap();
        assert!(scratch.remove_file("sub").is_err());
        assert!(scratch.path().join("sub").is_dir());
        scratch.remove_file("rank-0.csv").unwrap();
        assert!(!scratch.path().join("rank-0.csv").exists());
        assert_eq!(std::fs::read(&target).unwrap(), b"the user's");
        let dir = scratch.path().to_path_buf();
        drop(scratch);
        assert!(!dir.exists());
    }
}
