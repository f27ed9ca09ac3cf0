//! Directory outputs: a report or export of several files, staged as one directory and
//! exchanged with the old one in one step.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use crate::{Error, FsError, Rules, fsops, resolve, staging};

/// The file that marks a directory as one a tracewise tool wrote, and so one a later run
/// may replace (with `--overwrite`).
pub const MARKER: &str = ".tracewise-output";

pub(crate) const MARKER_TEXT: &str = "This directory was written by a tracewise tool. With --overwrite, \
a later run replaces it whole; without this file it is never replaced.\n";

/// A directory output being written: a staged directory beside its path, removed if
/// dropped before [`DirOutput::commit`] (or by a signal).
#[derive(Debug)]
pub struct DirOutput {
    path: PathBuf,
    overwrite: bool,
    inputs: Vec<PathBuf>,
    staged: PathBuf,
    id: Option<u64>,
    /// Directories made for the output, removed again if it is not committed.
    created: Vec<PathBuf>,
}

/// What is at a directory output's path now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Existing {
    Nothing,
    /// An empty directory, or one with the marker when overwriting is allowed.
    Replaceable,
}

/// Checks the directory output `path` against the rules without writing anything.
pub fn check_dir(path: &Path, rules: &Rules<'_>) -> Result<(), Error> {
    existing(path, rules).map(|_| ())
}

fn existing(path: &Path, rules: &Rules<'_>) -> Result<Existing, Error> {
    let refuse = |reason: String| {
        Err(Error::Refused {
            path: path.to_path_buf(),
            reason,
        })
    };
    let io = |action| {
        move |source| {
            Error::Io(FsError {
                path: path.to_path_buf(),
                action,
                source,
            })
        }
    };
    let Some(abs) = resolve::resolve(path).map_err(io("cannot resolve the output path"))? else {
        return refuse(
            "the output is the current directory, a parent of it or the root; it is never \
             replaced: give a new directory"
                .into(),
        );
    };
    if let Some(reason) = resolve::protected_reason(&abs, rules.inputs) {
        return refuse(format!(
            "{reason}; it is never replaced: give a new directory"
        ));
    }
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Existing::Nothing),
        Err(source) => return Err(io("cannot inspect the output path")(source)),
    };
    if meta.file_type().is_symlink() {
        return refuse(
            "the output is a symbolic link; it is never replaced: give a new directory".into(),
        );
    }
    if !meta.is_dir() {
        return refuse("the output exists and is not a directory; give a new directory".into());
    }
    replaceable(path, rules.overwrite).map_err(io("cannot read the output directory"))?
}

/// Whether the existing directory `dir` may be replaced: it is empty, or holds the marker
/// and `overwrite` is set. The refusal says why otherwise.
fn replaceable(dir: &Path, overwrite: bool) -> io::Result<Result<Existing, Error>> {
    let mut empty = true;
    let mut marked = false;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        empty = false;
        if entry.file_name() == MARKER && entry.file_type()?.is_file() {
            marked = true;
            break;
        }
    }
    let refuse = |reason: &str| {
        Err(Error::Refused {
            path: dir.to_path_buf(),
            reason: reason.into(),
        })
    };
    Ok(if empty || (marked && overwrite) {
        Ok(Existing::Replaceable)
    } else if marked {
        refuse("the output directory exists; pass --overwrite to replace it")
    } else {
        refuse(
            "the output directory exists and was not written by a tracewise tool (it has no \
             .tracewise-output file); it is never replaced: give a new directory",
        )
    })
}

impl DirOutput {
    /// Checks the rules and creates the staged directory, with the marker in it (and the
    /// output's parent directory).
    pub fn create(path: &Path, rules: &Rules<'_>) -> Result<DirOutput, Error> {
        existing(path, rules)?;
        let io = |action| {
            move |source| {
                Error::Io(FsError {
                    path: path.to_path_buf(),
                    action,
                    source,
                })
            }
        };
        let parent = crate::parent_dir(path);
        let created =
            fsops::create_dirs(parent).map_err(io("cannot create the output's directory"))?;
        let name = crate::file_name(path);
        staging::remove_stale(parent, &name);
        let (staged, id) = match fsops::create_staged_dir(parent, &name) {
            Ok(staged) => staged,
            Err(e) => {
                fsops::remove_created(&created);
                return Err(io("cannot create a staged directory beside the output")(e));
            }
        };
        let out = DirOutput {
            path: path.to_path_buf(),
            overwrite: rules.overwrite,
            inputs: rules.inputs.iter().map(|p| p.to_path_buf()).collect(),
            staged,
            id: Some(id),
            created,
        };
        out.write(MARKER, MARKER_TEXT.as_bytes())?;
        Ok(out)
    }

    /// The path the output will have.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The staged directory, where the output is written until it is committed.
    pub fn staged(&self) -> &Path {
        &self.staged
    }

    /// Creates the new file `rel` (a relative path without `..`) in the staged directory,
    /// with its directories.
    pub fn create_file(&self, rel: &Path) -> Result<File, Error> {
        let refuse = || Error::Refused {
            path: self.path.join(rel),
            reason: "a file of a directory output must be a relative path without ..".into(),
        };
        if rel.components().any(|c| !matches!(c, Component::Normal(_)))
            || rel.as_os_str().is_empty()
        {
            return Err(refuse());
        }
        let full = self.staged.join(rel);
        let io = |action| {
            let path = self.path.join(rel);
            move |source| {
                Error::Io(FsError {
                    path,
                    action,
                    source,
                })
            }
        };
        if let Some(dir) = full.parent() {
            staging::creating(|| std::fs::create_dir_all(dir))
                .map_err(io("cannot create a directory of the output"))?;
        }
        staging::creating(|| {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&full)
        })
        .map_err(io("cannot create a file of the output"))
    }

    /// Creates the file `rel` of the staged directory anew: one written earlier in this run
    /// is replaced (for a second pass over the files of an export).
    pub fn recreate_file(&self, rel: &Path) -> Result<File, Error> {
        if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
            return self.create_file(rel);
        }
        match std::fs::remove_file(self.staged.join(rel)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                return Err(Error::Io(FsError {
                    path: self.path.join(rel),
                    action: "cannot replace a file of the output",
                    source: e,
                }));
            }
            _ => {}
        }
        self.create_file(rel)
    }

    /// Writes the new file `rel` with `bytes` (see [`DirOutput::create_file`]).
    pub fn write(&self, rel: impl AsRef<Path>, bytes: &[u8]) -> Result<(), Error> {
        let rel = rel.as_ref();
        let mut file = self.create_file(rel)?;
        file.write_all(bytes).map_err(|source| {
            Error::Io(FsError {
                path: self.path.join(rel),
                action: "cannot write a file of the output",
                source,
            })
        })
    }

    /// Puts the complete directory in place: the rules are checked again, the new
    /// directory is exchanged with the old one (if any) in one step, the old one is checked
    /// once more (it is put back if it changed into something the rules refuse) and then
    /// removed. A failure to remove the old one leaves it under its staged name, which the
    /// next run removes; the new output is in place either way.
    pub fn commit(mut self) -> Result<(), Error> {
        let mut registry = staging::lock();
        let inputs: Vec<&Path> = self.inputs.iter().map(PathBuf::as_path).collect();
        let rules = Rules {
            overwrite: self.overwrite,
            inputs: &inputs,
        };
        let state = existing(&self.path, &rules)?;
        let io = |action| {
            let path = self.path.clone();
            move |source| {
                Error::Io(FsError {
                    path,
                    action,
                    source,
                })
            }
        };
        let id = self
            .id
            .take()
            .expect("a staged directory is committed once");
        let changed = || Error::Refused {
            path: self.path.clone(),
            reason: "the output directory changed while it was being written and is no longer \
                     one that may be replaced; it was left as it was"
                .into(),
        };
        match state {
            Existing::Nothing => {
                let res = fsops::rename_noreplace(&self.staged, &self.path);
                if let Err(e) = res {
                    self.id = Some(id);
                    return Err(if e.kind() == io::ErrorKind::AlreadyExists {
                        changed()
                    } else {
                        io("cannot move the output into place")(e)
                    });
                }
                registry.remove(id);
            }
            Existing::Replaceable => {
                let swapped = match fsops::exchange(&self.staged, &self.path) {
                    Ok(swapped) => swapped,
                    Err(e) => {
                        self.id = Some(id);
                        return Err(io("cannot move the output into place")(e));
                    }
                };
                // The old directory, now out of the way (registered, so a signal removes
                // it: the new one is in place).
                let old = if swapped {
                    self.staged.clone()
                } else {
                    let aside = fsops::free_aside_name(
                        crate::parent_dir(&self.path),
                        &crate::file_name(&self.path),
                    );
                    if let Err(e) = std::fs::rename(&self.path, &aside) {
                        self.id = Some(id);
                        return Err(io("cannot move the old output aside")(e));
                    }
                    aside
                };
                let old_id = if swapped {
                    id
                } else {
                    registry.add(old.clone())
                };
                let ok = matches!(replaceable(&old, self.overwrite), Ok(Ok(_)));
                if !ok {
                    // Put the user's directory back; the new one stays staged and is removed.
                    let back = if swapped {
                        fsops::exchange(&self.staged, &self.path).map(|_| ())
                    } else {
                        std::fs::rename(&old, &self.path)
                    };
                    if !swapped {
                        registry.remove(old_id);
                    }
                    if let Err(e) = back {
                        // The directory that was there is now at `old`: it must not be
                        // removed as a staged one.
                        registry.remove(id);
                        return Err(Error::Refused {
                            path: self.path.clone(),
                            reason: format!(
                                "the output directory changed while it was being written; \
                                 it could not be put back ({e}) and is now at {}",
                                old.display()
                            ),
                        });
                    }
                    self.id = Some(id);
                    return Err(changed());
                }
                if !swapped && let Err(e) = fsops::rename_noreplace(&self.staged, &self.path) {
                    let _ = std::fs::rename(&old, &self.path);
                    registry.remove(old_id);
                    self.id = Some(id);
                    return Err(io("cannot move the output into place")(e));
                }
                if !swapped {
                    registry.remove(id);
                }
                // Best effort: what cannot be removed keeps its staged name, and the next
                // run writing this output removes it.
                let _ = staging::remove_path(&old);
                registry.remove(old_id);
            }
        }
        staging::committed();
        Ok(())
    }
}

impl Drop for DirOutput {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let _ = staging::remove_path(&self.staged);
            staging::unregister(id);
            fsops::remove_created(&self.created);
        }
    }
}

/// Makes sure `dir` is a directory only this user can enter (a cache): created with mode
/// 0700 (and its missing parents as usual) when missing; an existing one is used only when
/// it is a real directory (not a symbolic link), owned by this user and closed to group
/// and others.
pub fn private_dir(dir: &Path) -> Result<(), Error> {
    let io = |action| {
        move |source| {
            Error::Io(FsError {
                path: dir.to_path_buf(),
                action,
                source,
            })
        }
    };
    let refuse = |reason: &str| Error::Refused {
        path: dir.to_path_buf(),
        reason: reason.into(),
    };
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io("cannot create the directory's parent"))?;
    }
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    match builder.create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io("cannot create the directory")(e)),
    }
    let meta = std::fs::symlink_metadata(dir).map_err(io("cannot inspect the directory"))?;
    if !meta.is_dir() {
        return Err(refuse(
            "is not a directory (or is a symbolic link); it is not used",
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.mode() & 0o077 != 0 {
            return Err(refuse(
                "is open to other users (its mode is not 0700); it is not used",
            ));
        }
        if let Ok(me) = std::fs::metadata("/proc/self")
            && me.uid() != meta.uid()
        {
            return Err(refuse("belongs to another user; it is not used"));
        }
    }
    Ok(())
}
