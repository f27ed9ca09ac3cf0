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
    None
}

/// The input directory that holds `abs` (resolved), if any: an existing file there may be
/// one the tool read.
pub(crate) fn input_dir_holding(abs: &Path, inputs: &[&Path]) -> Option<PathBuf> {
    inputs.iter().find_map(|input| {
        let input = input.canonicalize().ok()?;
        (input.is_dir() && abs.starts_with(&input) && abs != input).then_some(input)
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
