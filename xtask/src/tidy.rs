//! `cargo xtask tidy [--snapshot-references FILE]`: repository hygiene that no compiler
//! checks.
//!
//! - Every Rust source file opens with a `//!` line (what the file is for).
//! - No pending insta snapshot (`*.snap.new`, `*.pending-snap`) is committed.
//! - With `--snapshot-references FILE`: every committed `*.snap` is one a test asserted in
//!   the run that wrote FILE, and no pending snapshot lies in the tree. insta appends the
//!   path of each snapshot an assertion uses to the file named by the environment
//!   variable `INSTA_SNAPSHOT_REFERENCES_FILE` (insta's `env::memoize_snapshot_file`, the
//!   mechanism behind `cargo insta test --unreferenced=reject`), so CI sets it for its
//!   test runs and checks here, without installing cargo-insta.
//!
//! The first two checks also run as this crate's tests, so `cargo test --workspace` fails
//! on them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub fn main(args: &[String]) -> Result<(), String> {
    let mut references = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--snapshot-references" => {
                let file = rest
                    .next()
                    .ok_or("--snapshot-references needs a file (INSTA_SNAPSHOT_REFERENCES_FILE)")?;
                references = Some(PathBuf::from(file));
            }
            other => return Err(format!("tidy: unknown argument `{other}`")),
        }
    }
    let root = crate::workspace_root();
    let files = repository_files(&root)?;
    let mut problems = source_headers(&root, &files);
    problems.extend(committed_pending_snapshots(&files));
    if let Some(references) = references {
        let text = std::fs::read_to_string(&references)
            .map_err(|e| format!("{}: {e}", references.display()))?;
        problems.extend(unreferenced_snapshots(&root, &files, &text));
        problems.extend(pending_snapshots_on_disk(&root));
    }
    if problems.is_empty() {
        println!("tidy: {} files checked, all clean", files.len());
        Ok(())
    } else {
        Err(format!("tidy:\n  {}", problems.join("\n  ")))
    }
}

/// The repository's files, relative to `root`: committed or new but not ignored (`git
/// ls-files`), or, outside a git checkout, every file but `target*/` and `.git/`.
pub fn repository_files(root: &Path) -> Result<Vec<PathBuf>, String> {
    let git = std::process::Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root)
        .output();
    if let Ok(out) = git
        && out.status.success()
    {
        let mut files: Vec<PathBuf> = out
            .stdout
            .split(|b| *b == 0)
            .filter(|name| !name.is_empty())
            .map(|name| PathBuf::from(String::from_utf8_lossy(name).into_owned()))
            // Deleted in the working tree but not yet in the index.
            .filter(|rel| root.join(rel).is_file())
            .collect();
        files.sort();
        files.dedup();
        return Ok(files);
    }
    let mut files = Vec::new();
    walk(root, root, &mut files).map_err(|e| format!("{}: {e}", root.display()))?;
    files.sort();
    Ok(files)
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if name != ".git" && !name.starts_with("target") {
                walk(root, &path, out)?;
            }
        } else {
            out.push(path.strip_prefix(root).unwrap_or(&path).to_path_buf());
        }
    }
    Ok(())
}

/// Rust sources whose first line is not a `//!` doc line.
pub fn source_headers(root: &Path, files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
        .filter_map(|f| {
            let text = std::fs::read_to_string(root.join(f)).ok()?;
            let first = text.lines().next().unwrap_or("");
            (!first.starts_with("//!")).then(|| {
                format!(
                    "{}: the first line is {first:?}, not a `//!` line saying what the file is for",
                    f.display()
                )
            })
        })
        .collect()
}

fn is_pending(path: &Path) -> bool {
    let name = path.to_string_lossy();
    name.ends_with(".snap.new") || name.ends_with(".pending-snap")
}

/// Pending snapshots among the repository's files.
pub fn committed_pending_snapshots(files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .filter(|f| is_pending(f))
        .map(|f| {
            format!(
                "{}: a pending snapshot is committed (review it: accept into the .snap or delete it)",
                f.display()
            )
        })
        .collect()
}

/// Pending snapshots anywhere in the tree but `target*/` (ignored by git, so not in
/// [`repository_files`]): a test run left a snapshot nobody reviewed.
pub fn pending_snapshots_on_disk(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    if let Err(e) = walk(root, root, &mut files) {
        return vec![format!("{}: {e}", root.display())];
    }
    files
        .iter()
        .filter(|f| is_pending(f))
        .map(|f| {
            format!(
                "{}: a pending snapshot (the test's output changed)",
                f.display()
            )
        })
        .collect()
}

/// Committed `*.snap` files that no assertion named in `references` (one absolute or
/// root-relative path a line, as insta writes them).
pub fn unreferenced_snapshots(root: &Path, files: &[PathBuf], references: &str) -> Vec<String> {
    let referenced: BTreeSet<PathBuf> = references
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let p = Path::new(l.trim());
            let p = if p.is_relative() {
                root.join(p)
            } else {
                p.to_path_buf()
            };
            p.canonicalize().unwrap_or(p)
        })
        .collect();
    let mut problems = Vec::new();
    if referenced.is_empty() {
        problems.push(
            "the snapshot reference file is empty: was INSTA_SNAPSHOT_REFERENCES_FILE set for the tests?"
                .to_owned(),
        );
    }
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "snap"))
    {
        let abs = root.join(f);
        let abs = abs.canonicalize().unwrap_or(abs);
        if !referenced.contains(&abs) {
            problems.push(format!(
                "{}: no test asserts this snapshot (delete it, or restore its test)",
                f.display()
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-tidy-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src/snapshots")).unwrap();
        dir
    }

    /// The workspace itself: every Rust source opens with `//!`.
    #[test]
    fn every_source_file_opens_with_a_doc_line() {
        let root = crate::workspace_root();
        let files = repository_files(&root).unwrap();
        assert!(
            files
                .iter()
                .filter(|f| f.extension().is_some_and(|e| e == "rs"))
                .count()
                > 50,
            "the listing finds the workspace's sources"
        );
        let problems = source_headers(&root, &files);
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    /// The workspace itself: no `*.snap.new` or `*.pending-snap` is committed.
    #[test]
    fn no_pending_snapshot_is_committed() {
        let root = crate::workspace_root();
        let files = repository_files(&root).unwrap();
        let problems = committed_pending_snapshots(&files);
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn a_source_without_a_doc_line_is_named() {
        let dir = scratch("headers");
        std::fs::write(dir.join("src/good.rs"), "//! Good.\nfn f() {}\n").unwrap();
        std::fs::write(dir.join("src/bad.rs"), "// Not a doc line.\n").unwrap();
        std::fs::write(dir.join("src/empty.rs"), "").unwrap();
        let files: Vec<PathBuf> = ["src/good.rs", "src/bad.rs", "src/empty.rs"]
            .iter()
            .map(PathBuf::from)
            .collect();
        let problems = source_headers(&dir, &files);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("src/bad.rs:"));
        assert!(problems[1].starts_with("src/empty.rs:"));
    }

    #[test]
    fn unreferenced_and_pending_snapshots_are_named() {
        let dir = scratch("snaps");
        for f in ["used.snap", "stale.snap", "used.snap.new"] {
            std::fs::write(dir.join("src/snapshots").join(f), "x").unwrap();
        }
        let files: Vec<PathBuf> = ["src/snapshots/used.snap", "src/snapshots/stale.snap"]
            .iter()
            .map(PathBuf::from)
            .collect();
        let references = format!("{}\n", dir.join("src/snapshots/used.snap").display());
        let unreferenced = unreferenced_snapshots(&dir, &files, &references);
        let pending = pending_snapshots_on_disk(&dir);
        let empty = unreferenced_snapshots(&dir, &files, "");
        let committed = committed_pending_snapshots(&[PathBuf::from("a/b.pending-snap")]);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(unreferenced.len(), 1, "{unreferenced:?}");
        assert!(unreferenced[0].starts_with("src/snapshots/stale.snap:"));
        assert_eq!(pending.len(), 1, "{pending:?}");
        assert!(pending[0].contains("used.snap.new"));
        // No reference at all: the run did not record, which is said, and every .snap
        // is unreferenced.
        assert_eq!(empty.len(), 3, "{empty:?}");
        assert_eq!(committed.len(), 1);
    }
}
