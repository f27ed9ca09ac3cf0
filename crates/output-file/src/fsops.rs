//! The file-system steps: creating staged entries under names no one else has, keeping an
//! old file aside, and the renames that never replace (`RENAME_NOREPLACE`) or swap two
//! entries in one step (`RENAME_EXCHANGE`).

use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::path::{Path, PathBuf};

use crate::staging;

/// How many names are tried before giving up (each one taken means another run's entry).
const ATTEMPTS: u32 = 64;

/// A random text for a staged name (the standard library's per-process random keys, mixed
/// with the time and a counter).
fn random_part() -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.write_u128(nanos);
    format!("{:012x}", h.finish() & 0xffff_ffff_ffff)
}

/// A staged name for the output `name` in `dir`.
fn staged_name(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!(
        "{}{}{}",
        staging::prefix(name),
        random_part(),
        staging::SUFFIX
    ))
}

/// Creates a staged file for the output `name` in `dir` (`O_EXCL`, mode `mode` less the
/// umask) and registers it.
pub(crate) fn create_staged_file(
    dir: &Path,
    name: &str,
    mode: u32,
) -> io::Result<(PathBuf, File, u64)> {
    for _ in 0..ATTEMPTS {
        let path = staged_name(dir, name);
        let mut options = std::fs::OpenOptions::new();
        options.read(true).write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(mode);
        }
        #[cfg(not(unix))]
        let _ = mode;
        // Registered before it exists, so a signal between the two cannot miss it; created
        // through the gate, so a signal's cleanup that has listed the registry already
        // refuses it rather than leaving it behind.
        let id = staging::register(path.clone());
        match staging::creating(|| options.open(&path)) {
            Ok(file) => return Ok((path, file, id)),
            Err(e) => {
                staging::unregister(id);
                if e.kind() != io::ErrorKind::AlreadyExists {
                    return Err(e);
                }
            }
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free staged name",
    ))
}

/// Creates a staged directory for the output `name` in `dir` (mode 0777 less the umask)
/// and registers it.
pub(crate) fn create_staged_dir(dir: &Path, name: &str) -> io::Result<(PathBuf, u64)> {
    for _ in 0..ATTEMPTS {
        let path = staged_name(dir, name);
        // As a staged file: registered first, created through the gate.
        let id = staging::register(path.clone());
        match staging::creating(|| std::fs::create_dir(&path)) {
            Ok(()) => return Ok((path, id)),
            Err(e) => {
                staging::unregister(id);
                if e.kind() != io::ErrorKind::AlreadyExists {
                    return Err(e);
                }
            }
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free staged name",
    ))
}

/// A free name in `dir` for renaming the old output `name` aside while the new one is
/// renamed in (where the two cannot be exchanged in one step): like a staged name but
/// ending in [`staging::ASIDE_SUFFIX`], so a later run can tell it from a staged one.
pub(crate) fn free_aside_name(dir: &Path, name: &str) -> PathBuf {
    loop {
        let path = dir.join(format!(
            "{}{}{}",
            staging::prefix(name),
            random_part(),
            staging::ASIDE_SUFFIX
        ));
        if std::fs::symlink_metadata(&path).is_err() {
            return path;
        }
    }
}

/// Keeps the file at `path` under a staged name in `dir` (a hard link, or a copy where
/// links are not supported), so it can be put back.
pub(crate) fn keep_aside(path: &Path, dir: &Path) -> io::Result<PathBuf> {
    let name = crate::file_name(path);
    for _ in 0..ATTEMPTS {
        let aside = staged_name(dir, &name);
        match std::fs::hard_link(path, &aside) {
            Ok(()) => return Ok(aside),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(_) => {
                // Not registered here: the caller holds the registry and registers it.
                let mut file = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&aside)?;
                let res = File::open(path).and_then(|mut old| io::copy(&mut old, &mut file));
                return match res {
                    Ok(_) => Ok(aside),
                    Err(e) => {
                        let _ = std::fs::remove_file(&aside);
                        Err(e)
                    }
                };
            }
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free staged name",
    ))
}

/// Renames `from` to `to` only if `to` does not exist (`AlreadyExists` otherwise).
pub(crate) fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        match renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(()),
            Err(e) if e == rustix::io::Errno::INVAL || e == rustix::io::Errno::NOSYS => {}
            Err(e) => return Err(e.into()),
        }
    }
    // Without RENAME_NOREPLACE: a file is linked (which never replaces) and unlinked; a
    // directory is renamed only while nothing is there (a small window, the best a plain
    // rename allows).
    if std::fs::symlink_metadata(from)?.is_dir() {
        if std::fs::symlink_metadata(to).is_ok() {
            return Err(io::ErrorKind::AlreadyExists.into());
        }
        std::fs::rename(from, to)
    } else {
        std::fs::hard_link(from, to)?;
        std::fs::remove_file(from)
    }
}

/// Swaps `a` and `b` in one step; `Ok(false)` where the file system cannot.
pub(crate) fn exchange(a: &Path, b: &Path) -> io::Result<bool> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        match renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE) {
            Ok(()) => Ok(true),
            Err(e) if e == rustix::io::Errno::INVAL || e == rustix::io::Errno::NOSYS => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = (a, b);
        Ok(false)
    }
}

/// Creates `dir` and its missing parents; returns the directories it created, deepest
/// first, so that a run that ends without committing can remove them again
/// ([`remove_created`]) and leave the tree as it found it.
pub(crate) fn create_dirs(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut missing = Vec::new();
    let mut at = Some(dir);
    while let Some(d) = at.filter(|d| !d.as_os_str().is_empty()) {
        if std::fs::symlink_metadata(d).is_ok() {
            break;
        }
        missing.push(d.to_path_buf());
        at = d.parent();
    }
    std::fs::create_dir_all(dir)?;
    Ok(missing)
}

/// Removes the directories [`create_dirs`] made, deepest first, as long as they are empty.
pub(crate) fn remove_created(created: &[PathBuf]) {
    for d in created {
        if std::fs::remove_dir(d).is_err() {
            break;
        }
    }
}
