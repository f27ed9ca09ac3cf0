//! The one way tools write an output file.
//!
//! An output is written to a temporary file beside it and renamed into place only when it
//! is complete, so a failed run leaves nothing behind. The path is refused when it is a
//! directory, a device (or FIFO, socket), a symbolic link, or one of the inputs; an existing
//! regular file is replaced only with [`Rules::overwrite`]. The file gets the usual
//! permissions (0666 less the umask, 0644 under umask 022), not a temporary file's 0600.
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("rows.csv");
//! let rules = output_file::Rules { overwrite: false, inputs: &[] };
//! output_file::write(&path, &rules, b"a,b\n").unwrap();
//! // A second write without `overwrite` is refused; the first file stays.
//! assert!(output_file::write(&path, &rules, b"c,d\n").is_err());
//! assert_eq!(std::fs::read(&path).unwrap(), b"a,b\n");
//! ```

#![warn(missing_docs)]

mod pipe;

pub use pipe::is_broken_pipe;

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// What may be replaced.
#[derive(Debug, Clone, Copy)]
pub struct Rules<'a> {
    /// Replace an existing regular file (a tool's `--overwrite`).
    pub overwrite: bool,
    /// The files the tool reads: an output may never be one of them.
    pub inputs: &'a [&'a Path],
}

/// Why an output was not written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The path is refused before anything is written.
    #[error("{path}: {reason}")]
    Refused {
        /// The output path.
        path: PathBuf,
        /// Why it is refused.
        reason: &'static str,
    },
    /// The file system failed; the OS error is the source (printed by `{:#}` chains).
    #[error("{path}: {action}")]
    Io {
        /// The output path.
        path: PathBuf,
        /// What was being done (`cannot create temporary file`, ...).
        action: &'static str,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

/// An output being written: a temporary file beside its path, deleted if dropped before
/// [`Pending::commit`].
#[derive(Debug)]
pub struct Pending {
    path: PathBuf,
    overwrite: bool,
    inputs: Vec<PathBuf>,
    tmp: tempfile::NamedTempFile,
}

/// Checks `path` against the rules without writing anything.
pub fn check(path: &Path, rules: &Rules<'_>) -> Result<(), Error> {
    let refuse = |reason| {
        Err(Error::Refused {
            path: path.to_path_buf(),
            reason,
        })
    };
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(Error::Io {
                path: path.to_path_buf(),
                action: "cannot inspect the output path",
                source,
            });
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
    if !rules.overwrite {
        return refuse("the output already exists; pass --overwrite to replace it");
    }
    Ok(())
}

/// Writes `bytes` to `path` under `rules`.
pub fn write(path: &Path, rules: &Rules<'_>, bytes: &[u8]) -> Result<(), Error> {
    write_with(path, rules, |file| file.write_all(bytes))
}

/// Writes `path` under `rules` with `write`, which gets the temporary file.
pub fn write_with(
    path: &Path,
    rules: &Rules<'_>,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> Result<(), Error> {
    let mut pending = Pending::create(path, rules)?;
    write(pending.file_mut()).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        action: "cannot write the output",
        source,
    })?;
    pending.commit()
}

impl Pending {
    /// Checks the rules and creates the temporary file (and the output's directory).
    pub fn create(path: &Path, rules: &Rules<'_>) -> Result<Pending, Error> {
        check(path, rules)?;
        let io = |action| {
            move |source| Error::Io {
                path: path.to_path_buf(),
                action,
                source,
            }
        };
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        std::fs::create_dir_all(dir).map_err(io("cannot create the output's directory"))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let prefix = format!(".{name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        // A temporary file is private (0600); an output is an ordinary file. The mode
        // passes through the umask like any created file's.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let tmp = builder
            .tempfile_in(dir)
            .map_err(io("cannot create a temporary file beside the output"))?;
        Ok(Pending {
            path: path.to_path_buf(),
            overwrite: rules.overwrite,
            inputs: rules.inputs.iter().map(|p| p.to_path_buf()).collect(),
            tmp,
        })
    }

    /// The temporary file, to write the output into.
    pub fn file(&self) -> &File {
        self.tmp.as_file()
    }

    /// The temporary file, mutably (for writers that need `&mut File`).
    pub fn file_mut(&mut self) -> &mut File {
        self.tmp.as_file_mut()
    }

    /// The path the output will have.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the complete output into place, checking the rules again (the path may
    /// have changed while the output was written).
    pub fn commit(self) -> Result<(), Error> {
        let inputs: Vec<&Path> = self.inputs.iter().map(PathBuf::as_path).collect();
        let rules = Rules {
            overwrite: self.overwrite,
            inputs: &inputs,
        };
        check(&self.path, &rules)?;
        let res = if self.overwrite {
            self.tmp.persist(&self.path)
        } else {
            self.tmp.persist_noclobber(&self.path)
        };
        res.map_err(|e| Error::Io {
            path: self.path.clone(),
            action: "cannot move the output into place",
            source: e.error,
        })?;
        Ok(())
    }
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
mod tests {
    use super::*;

    const NEW: Rules<'static> = Rules {
        overwrite: false,
        inputs: &[],
    };
    const REPLACE: Rules<'static> = Rules {
        overwrite: true,
        inputs: &[],
    };

    fn refused(res: Result<(), Error>) -> String {
        match res {
            Err(Error::Refused { reason, .. }) => reason.to_string(),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("the test directory is readable")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn existing_file_is_replaced_only_when_asked() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("out.txt");
        write(&path, &NEW, b"one").expect("a new file is written");
        assert!(refused(write(&path, &NEW, b"two")).contains("--overwrite"));
        assert_eq!(std::fs::read(&path).expect("read"), b"one");
        write(&path, &REPLACE, b"two").expect("--overwrite replaces it");
        assert_eq!(std::fs::read(&path).expect("read"), b"two");
        assert_eq!(
            entries(dir.path()),
            ["out.txt"],
            "no temporary file is left"
        );
    }

    #[test]
    fn directory_is_refused() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        assert!(refused(write(dir.path(), &REPLACE, b"x")).contains("directory"));
    }

    #[cfg(unix)]
    #[test]
    fn device_is_refused() {
        let res = write(Path::new("/dev/null"), &REPLACE, b"x");
        assert!(refused(res).contains("not a regular file"));
    }

    #[cfg(unix)]
    #[test]
    fn symlink_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let target = dir.path().join("target.txt");
        std::fs::write(&target, b"keep").expect("write");
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        assert!(refused(write(&link, &REPLACE, b"x")).contains("symbolic link"));
        assert!(
            std::fs::symlink_metadata(&link)
                .expect("link")
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&target).expect("read"), b"keep");
        // A dangling link is refused too.
        let dangling = dir.path().join("dangling.txt");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).expect("symlink");
        assert!(refused(write(&dangling, &NEW, b"x")).contains("symbolic link"));
    }

    #[test]
    fn the_input_is_refused_even_with_overwrite() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let input = dir.path().join("trace.json");
        std::fs::write(&input, b"{}").expect("write");
        let rules = Rules {
            overwrite: true,
            inputs: &[&input],
        };
        // The same file under another spelling of its path.
        let other = dir.path().join(".").join("trace.json");
        assert!(refused(write(&other, &rules, b"x")).contains("is the input"));
        assert_eq!(std::fs::read(&input).expect("read"), b"{}");
    }

    #[test]
    fn a_failed_write_leaves_nothing() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("out.txt");
        let res = write_with(&path, &NEW, |_| Err(io::Error::other("the writer failed")));
        assert!(matches!(res, Err(Error::Io { .. })));
        assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
    }

    #[cfg(unix)]
    #[test]
    fn outputs_get_the_usual_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("out.txt");
        write(&path, &NEW, b"x").expect("written");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        // The process umask, from /proc on Linux (elsewhere assume the usual 022).
        let umask = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                let line = s.lines().find(|l| l.starts_with("Umask:"))?.to_string();
                u32::from_str_radix(line.trim_start_matches("Umask:").trim(), 8).ok()
            })
            .unwrap_or(0o022);
        assert_eq!(mode, 0o666 & !umask, "mode {mode:o} under umask {umask:o}");
    }
}
