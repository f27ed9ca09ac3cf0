//! The one way tools write their outputs: files and directories.
//!
//! Every output is staged in its destination's directory, under a name no other run can
//! have (`.<name>.tracewise-<pid>-<random>.tmp`, created with `O_EXCL`), and renamed into
//! place only when it is complete; the rules are checked when staging starts and again at
//! the rename, so a path that changed during a long run is seen. A failed run, or one
//! ended by SIGINT, SIGTERM or SIGHUP, leaves nothing staged behind; what SIGKILL leaves is
//! removed by the next run that writes the same output.
//!
//! A file output ([`write()`], [`Pending`]) is refused when the path is a directory, a
//! device (or FIFO, socket), a symbolic link, one of the inputs (any hard link of it), or
//! an existing file inside an input directory (it may be one the tool read); an existing
//! regular file is replaced only with [`Rules::overwrite`], by one rename, so there is no
//! moment without a file. Several files of one run are committed all or nothing
//! ([`commit_all`]).
//!
//! A directory output ([`DirOutput`]) carries a marker file, [`MARKER`]; an existing
//! directory is replaced only when it is empty, or holds the marker and
//! [`Rules::overwrite`] is given, and never when it is `/`, the home directory, the current
//! directory or one above them, or is or holds an input. The new directory is exchanged
//! with the old one in one step (`renameat2(RENAME_EXCHANGE)`, else the old one is renamed
//! aside first), then the old one is removed: the user has the old output or the new one
//! at every moment.
//!
//! Outputs get the usual permissions (0666 or 0777 less the umask), not a temporary
//! file's 0600; [`Pending::create_private`] keeps a file private (a cache).
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("rows.csv");
//! let rules = output_file::Rules { overwrite: false, inputs: &[] };
//! output_file::write(&path, &rules, b"a,b\n").unwrap();
//! // A second write without `overwrite` is refused; the first file stays.
//! assert!(output_file::write(&path, &rules, b"c,d\n").is_err());
//! assert_eq!(std::fs::read(&path).unwrap(), b"a,b\n");
//!
//! // A directory of several files, all or nothing.
//! let report = dir.path().join("report");
//! let out = output_file::DirOutput::create(&report, &rules).unwrap();
//! out.write("report.md", b"# Report\n").unwrap();
//! out.commit().unwrap();
//! assert!(report.join(output_file::MARKER).is_file());
//! ```

#![warn(missing_docs)]

mod dir;
mod fsops;
mod pipe;
mod resolve;
mod staging;

pub use dir::{DirOutput, MARKER, check_dir, private_dir};
pub use pipe::{is_broken_pipe, print};
pub use staging::{
    ScratchDir, abandon_and_exit, install_signal_cleanup, leave_signals_to_host, outputs_committed,
    staged_paths,
};

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// What may be replaced.
#[derive(Debug, Clone, Copy)]
pub struct Rules<'a> {
    /// Replace an existing output (a tool's `--overwrite`); never one the rules refuse.
    pub overwrite: bool,
    /// What the tool reads (files or directories): an output may never be one of them,
    /// hold one, or replace a file inside one.
    pub inputs: &'a [&'a Path],
}

/// Why an output was not written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The path is refused; nothing was written or replaced.
    #[error("{path}: {reason}")]
    Refused {
        /// The output path.
        path: PathBuf,
        /// Why it is refused (and, only when that would help, what to pass instead).
        reason: String,
    },
    /// The file system failed; the OS error is the source (printed by `{:#}` chains).
    #[error(transparent)]
    Io(#[from] FsError),
}

/// A file-system call that failed on a path: the path, what was being done, and the OS
/// error as the source, so `{:#}` chains print `PATH: ACTION: OS ERROR` once. The error of
/// output-file's own calls, and of the crates that read and write files beside it.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {action}")]
pub struct FsError {
    /// The file or directory.
    pub path: PathBuf,
    /// What was being done, as the message says it (`cannot create temporary file`, ...).
    pub action: &'static str,
    /// The OS error.
    #[source]
    pub source: io::Error,
}

impl FsError {
    /// The error of `action` on `path`, for `map_err`:
    /// `std::fs::read_dir(dir).map_err(FsError::at(dir, "cannot list directory"))`.
    pub fn at(path: &Path, action: &'static str) -> impl FnOnce(io::Error) -> FsError {
        let path = path.to_path_buf();
        move |source| FsError {
            path,
            action,
            source,
        }
    }
}

impl Error {
    /// Whether the output was refused by the rules (as opposed to a failing file system).
    pub fn is_refused(&self) -> bool {
        matches!(self, Error::Refused { .. })
    }
}

/// An output file being written: a staged file beside its path, removed if dropped before
/// [`Pending::commit`] (or by a signal).
#[derive(Debug)]
pub struct Pending {
    path: PathBuf,
    overwrite: bool,
    inputs: Vec<PathBuf>,
    staged: PathBuf,
    file: Option<File>,
    id: u64,
    /// Directories made for the output, removed again if it is not committed.
    created: Vec<PathBuf>,
}

/// Checks the file output `path` against the rules without writing anything.
pub fn check(path: &Path, rules: &Rules<'_>) -> Result<(), Error> {
    let refuse = |reason: &str| {
        Err(Error::Refused {
            path: path.to_path_buf(),
            reason: reason.to_owned(),
        })
    };
    if resolve::last_name(path).is_none() {
        return refuse("the output is a directory (., .. or /); give a file name");
    }
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(Error::Io(FsError {
                path: path.to_path_buf(),
                action: "cannot inspect the output path",
                source,
            }));
        }
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        return refuse("the output is a symbolic link; give the path it points to, or another");
    }
    if kind.is_dir() {
        return refuse("the output is a directory; give a file name");
    }
    if !kind.is_file() {
        return refuse("the output is not a regular file (a device, FIFO or socket)");
    }
    if rules
        .inputs
        .iter()
        .any(|input| same_file(input, path, &meta))
    {
        return refuse("the output is the input; give another path");
    }
    if let Some(link) = resolve::linked_inputs(rules.inputs)
        .into_iter()
        .find(|l| same_file(&l.target, path, &meta))
    {
        return Err(Error::Refused {
            path: path.to_path_buf(),
            reason: format!(
                "the output is a file the input's link {} points to; it is never replaced: \
                 give another path",
                link.link.display()
            ),
        });
    }
    if let Ok(Some(abs)) = resolve::resolve(path)
        && let Some(dir) = resolve::input_dir_holding(&abs, rules.inputs)
    {
        return Err(Error::Refused {
            path: path.to_path_buf(),
            reason: format!(
                "the output exists inside the input directory {} and may be one of the files \
                 read; it is never replaced: give another path",
                dir.display()
            ),
        });
    }
    if !rules.overwrite {
        return refuse("the output already exists; pass --overwrite to replace it");
    }
    Ok(())
}

/// Writes `bytes` to `path` under `rules`.
pub fn write(path: &Path, rules: &Rules<'_>, bytes: &[u8]) -> Result<(), Error> {
    write_with(path, rules, |file| file.write_all(bytes))
}

/// Writes `path` under `rules` with `write`, which gets the staged file.
pub fn write_with(
    path: &Path,
    rules: &Rules<'_>,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> Result<(), Error> {
    let mut pending = Pending::create(path, rules)?;
    write(pending.file_mut()).map_err(|source| {
        Error::Io(FsError {
            path: path.to_path_buf(),
            action: "cannot write the output",
            source,
        })
    })?;
    pending.commit()
}

impl Pending {
    /// Checks the rules and creates the staged file (and the output's directory).
    pub fn create(path: &Path, rules: &Rules<'_>) -> Result<Pending, Error> {
        Pending::create_mode(path, rules, 0o666)
    }

    /// [`Pending::create`] for a file only its owner may read (mode 0600).
    pub fn create_private(path: &Path, rules: &Rules<'_>) -> Result<Pending, Error> {
        Pending::create_mode(path, rules, 0o600)
    }

    fn create_mode(path: &Path, rules: &Rules<'_>, mode: u32) -> Result<Pending, Error> {
        check(path, rules)?;
        let io = |action| {
            move |source| {
                Error::Io(FsError {
                    path: path.to_path_buf(),
                    action,
                    source,
                })
            }
        };
        let dir = parent_dir(path);
        let created =
            fsops::create_dirs(dir).map_err(io("cannot create the output's directory"))?;
        let name = file_name(path);
        staging::remove_stale(dir, &name);
        let (staged, file, id) = match fsops::create_staged_file(dir, &name, mode) {
            Ok(staged) => staged,
            Err(e) => {
                fsops::remove_created(&created);
                return Err(io("cannot create a staged file beside the output")(e));
            }
        };
        Ok(Pending {
            path: path.to_path_buf(),
            overwrite: rules.overwrite,
            inputs: rules.inputs.iter().map(|p| p.to_path_buf()).collect(),
            staged,
            file: Some(file),
            id,
            created,
        })
    }

    /// The staged file, to write the output into.
    pub fn file(&self) -> &File {
        self.file
            .as_ref()
            .expect("a pending output holds its file until it is committed")
    }

    /// The staged file, mutably (for writers that need `&mut File`).
    pub fn file_mut(&mut self) -> &mut File {
        self.file
            .as_mut()
            .expect("a pending output holds its file until it is committed")
    }

    /// The path the output will have.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the complete output into place, checking the rules again (the path may
    /// have changed while the output was written).
    pub fn commit(self) -> Result<(), Error> {
        commit_all(vec![self])
    }

    fn rules_check(&self) -> Result<(), Error> {
        let inputs: Vec<&Path> = self.inputs.iter().map(PathBuf::as_path).collect();
        let rules = Rules {
            overwrite: self.overwrite,
            inputs: &inputs,
        };
        check(&self.path, &rules)
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        // Committed outputs were renamed away from `staged` and forgotten already.
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.staged);
            staging::unregister(self.id);
            fsops::remove_created(&self.created);
        }
    }
}

/// Commits several outputs of one run all or nothing: every path is checked again, every
/// replaced file is kept aside until all are in place, and if one rename fails the others
/// are put back as they were.
pub fn commit_all(mut outputs: Vec<Pending>) -> Result<(), Error> {
    let mut registry = staging::lock();
    for out in &outputs {
        out.rules_check()?;
    }
    for out in &mut outputs {
        out.file_mut().flush().map_err(|source| {
            Error::Io(FsError {
                path: out.path.clone(),
                action: "cannot write the output",
                source,
            })
        })?;
    }
    // The old files, kept (hard links, or copies) until every new one is in place.
    let mut kept: Vec<Option<(PathBuf, u64)>> = Vec::new();
    let restore = |done: &[&Pending], kept: &[Option<(PathBuf, u64)>]| {
        for (out, old) in done.iter().zip(kept) {
            match old {
                Some((aside, _)) => {
                    let _ = std::fs::rename(aside, &out.path);
                }
                None => {
                    let _ = std::fs::remove_file(&out.path);
                }
            }
        }
    };
    for out in &outputs {
        let old = match std::fs::symlink_metadata(&out.path) {
            Ok(_) if outputs.len() > 1 => {
                match fsops::keep_aside(&out.path, parent_dir(&out.path)) {
                    Ok(aside) => {
                        let id = registry.add(aside.clone());
                        Some((aside, id))
                    }
                    Err(source) => {
                        for (aside, id) in kept.iter().flatten() {
                            let _ = std::fs::remove_file(aside);
                            registry.remove(*id);
                        }
                        return Err(Error::Io(FsError {
                            path: out.path.clone(),
                            action: "cannot keep the old output aside while replacing it",
                            source,
                        }));
                    }
                }
            }
            _ => None,
        };
        kept.push(old);
    }
    let mut done: Vec<&Pending> = Vec::new();
    for out in &outputs {
        let res = if out.overwrite {
            std::fs::rename(&out.staged, &out.path)
        } else {
            fsops::rename_noreplace(&out.staged, &out.path)
        };
        if let Err(source) = res {
            restore(&done, &kept);
            for (aside, id) in kept.iter().flatten() {
                let _ = std::fs::remove_file(aside);
                registry.remove(*id);
            }
            return Err(if source.kind() == io::ErrorKind::AlreadyExists {
                Error::Refused {
                    path: out.path.clone(),
                    reason: "the output appeared while it was being written; pass --overwrite \
                             to replace it"
                        .into(),
                }
            } else {
                Error::Io(FsError {
                    path: out.path.clone(),
                    action: "cannot move the output into place",
                    source,
                })
            });
        }
        done.push(out);
    }
    for (aside, id) in kept.iter().flatten() {
        let _ = std::fs::remove_file(aside);
        registry.remove(*id);
    }
    for out in &mut outputs {
        out.file = None;
        registry.remove(out.id);
    }
    staging::committed();
    Ok(())
}

/// The directory an output goes into (`.` for a bare name).
pub(crate) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// The output's file name, as text for staged names.
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into())
}

#[cfg(unix)]
fn same_file(input: &Path, _output: &Path, meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(input).is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino())
}

#[cfg(not(unix))]
fn same_file(input: &Path, output: &Path, _meta: &std::fs::Metadata) -> bool {
    match (input.canonicalize(), output.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests;
