//! Where a path really is: its absolute form with the symbolic links of its existing
//! directories resolved (the last component is kept as written, so a link there is seen as
//! a link), and the places an output may never be.

use std::io;
use std::path::{Component, Path, PathBuf};

/// `path` made absolute, with every existing directory above its last component
/// canonicalized and `.`/`..` in the part that does not exist yet applied by name.
/// `None` when the path has no last component (`.`, `..`, `/`, or one ending in `..`).
pub(crate) fn resolve(path: &Path) -> io::Result<Option<PathBuf>> {
    let Some(name) = last_name(path) else {
        return Ok(None);
    };
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let parent = canonicalize_existing(&parent)?;
    Ok(Some(parent.join(name)))
}

/// The last component when it is a name (not `.`, `..` or the root).
pub(crate) fn last_name(path: &Path) -> Option<&std::ffi::OsStr> {
    match path.components().next_back()? {
        Component::Normal(name) => Some(name),
        _ => None,
    }
}

/// The canonical form of the longest existing ancestor of `path` (made absolute), followed
/// by the rest of `path` with `.` and `..` applied by name.
pub(crate) fn canonicalize_existing(path: &Path) -> io::Result<PathBuf> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()?.join(path)
    };
    let mut tail = Vec::new();
    let mut head = abs.as_path();
    loop {
        match head.canonicalize() {
            Ok(mut base) => {
                for part in tail.iter().rev() {
                    match part {
                        Component::ParentDir => {
                            base.pop();
                        }
                        Component::Normal(n) => base.push(n),
                        _ => {}
                    }
                }
                return Ok(base);
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let Some(last) = head.components().next_back() else {
                    return Err(e);
                };
                tail.push(last);
                head = match head.parent() {
                    Some(p) => p,
                    None => return Err(e),
                };
            }
            Err(e) => return Err(e),
        }
    }
}

/// Why the directory at `abs` (resolved) may never be replaced, whatever the flags: it is
/// `/`, the home directory or one above it, the current directory or one above it, or it
/// is or holds one of `inputs`.
pub(crate) fn protected_reason(abs: &Path, inputs: &[&Path]) -> Option<String> {
    if abs.parent().is_none() {
        return Some("the output is the root directory".into());
    }
    if let Ok(cwd) = std::env::current_dir().and_then(|c| c.canonicalize())
        && cwd.starts_with(abs)
    {
        return Some(if cwd == abs {
            "the output is the current directory".into()
        } else {
            "the output holds the current directory".into()
        });
    }
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        let home = Path::new(&home);
        let home = home.canonicalize().unwrap_or_else(|_| home.to_path_buf());
        if home.starts_with(abs) {
            return Some("the output is the home directory or holds it".into());
        }
    }
    for input in inputs {
        let Ok(input) = canonicalize_existing(input) else {
            continue;
        };
        if input.starts_with(abs) {
            return Some(format!(
                "the output {} the input {}",
                if input == abs { "is" } else { "holds" },
                input.display()
            ));
        }
    }
    for link in linked_inputs(inputs) {
        if link.target.starts_with(abs) {
            return Some(format!(
                "the output {} {}, which the input's link {} points to",
                if link.target == abs { "is" } else { "holds" },
                link.target.display(),
                link.link.display()
            ));
        }
    }
    None
}

/// How deep below an input directory its symbolic links are looked for: deeper than any
/// capture layout the loader walks (a rank directory's files a few levels down).
const LINK_DEPTH: usize = 8;

/// How many entries of the input directories are looked at, at most: a capture directory
/// holds tens of files; a walk that reaches this bound stops there.
const LINK_ENTRIES: usize = 100_000;

/// A symbolic link found inside an input directory, and where it resolves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LinkedInput {
    /// The link, as found below the input.
    pub(crate) link: PathBuf,
    /// Its canonical target (a file or directory a run reading the input may read).
    pub(crate) target: PathBuf,
}

/// The symbolic links inside the input directories (to [`LINK_DEPTH`], at most
/// [`LINK_ENTRIES`] entries) with their resolved targets: a run that reads an input
/// directory reads what its links point to, so those targets are inputs too. Links are
/// never followed while walking (a link to a directory is listed, not entered), so cycles
/// cannot make the walk loop; a link that does not resolve is skipped.
pub(crate) fn linked_inputs(inputs: &[&Path]) -> Vec<LinkedInput> {
    let mut found = Vec::new();
    let mut budget = LINK_ENTRIES;
    for input in inputs {
        let is_dir = std::fs::symlink_metadata(input).is_ok_and(|m| m.is_dir());
        if is_dir {
            walk_links(input, 0, &mut budget, &mut found);
        }
    }
    found
}

fn walk_links(dir: &Path, depth: usize, budget: &mut usize, found: &mut Vec<LinkedInput>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_symlink() {
            if let Ok(target) = path.canonicalize() {
                found.push(LinkedInput { link: path, target });
            }
        } else if kind.is_dir() && depth < LINK_DEPTH {
            walk_links(&path, depth + 1, budget, found);
        }
    }
}

/// The input directory that holds `abs` (resolved), if any: an existing file there may be
/// one the tool read.
pub(crate) fn input_dir_holding(abs: &Path, inputs: &[&Path]) -> Option<PathBuf> {
    let holds = |dir: PathBuf| (dir.is_dir() && abs.starts_with(&dir) && abs != dir).then_some(dir);
    inputs
        .iter()
        .find_map(|input| holds(input.canonicalize().ok()?))
        .or_else(|| {
            linked_inputs(inputs)
                .into_iter()
                .find_map(|l| holds(l.target))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dots_have_no_last_name() {
        for p in [".", "..", "/", "a/..", "../.."] {
            assert_eq!(resolve(Path::new(p)).expect("resolves"), None, "{p}");
        }
    }

    #[test]
    fn missing_parts_are_applied_by_name() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let base = dir.path().canonicalize().expect("canonical");
        let got = canonicalize_existing(&dir.path().join("x/y/../z")).expect("resolves");
        assert_eq!(got, base.join("x/z"));
    }

    #[test]
    fn cwd_and_root_are_protected() {
        let cwd = std::env::current_dir()
            .expect("cwd")
            .canonicalize()
            .expect("canonical");
        assert!(protected_reason(&cwd, &[]).is_some());
        assert!(protected_reason(Path::new("/"), &[]).is_some());
        let parent = cwd.parent().expect("the test runs below /");
        assert!(protected_reason(parent, &[]).is_some());
        assert!(protected_reason(&cwd.join("not-there"), &[]).is_none());
    }
}
