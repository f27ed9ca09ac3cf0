//! `cargo xtask tidy [--snapshot-references FILE] [--print-long]`: repository hygiene that
//! no compiler checks (`--print-long`: every long function and file as a budget line).
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
//! - Length budgets (`xtask/tidy-budgets.txt`): a function over 150 lines or a file over
//!   1,000 lines (tests and generated code aside) must be listed there with its length, and
//!   may only shrink: longer than its budget fails, and so does shorter, until the budget is
//!   lowered to it (the message gives the line to write).
//!
//! The first two checks and the budgets also run as this crate's tests, so `cargo test
//! --workspace` fails on them.

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
            "--print-long" => {
                // Every long item as a budget line: what xtask/tidy-budgets.txt holds.
                let root = crate::workspace_root();
                for f in repository_files(&root)?.iter().filter(|f| measured(f)) {
                    let text = std::fs::read_to_string(root.join(f))
                        .map_err(|e| format!("{}: {e}", f.display()))?;
                    for item in long_items(&f.to_string_lossy(), &text) {
                        println!("{item}");
                    }
                }
                return Ok(());
            }
            other => return Err(format!("tidy: unknown argument `{other}`")),
        }
    }
    let root = crate::workspace_root();
    let files = repository_files(&root)?;
    let mut problems = source_headers(&root, &files);
    problems.extend(committed_pending_snapshots(&files));
    problems.extend(length_budgets(&root, &files));
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

/// A function's length past which it needs a budget.
pub const FUNCTION_LINES: usize = 150;
/// A file's length (its code before `#[cfg(test)]`) past which it needs a budget.
pub const FILE_LINES: usize = 1000;
/// Where the budgets are, relative to the workspace root.
pub const BUDGETS: &str = "xtask/tidy-budgets.txt";

/// One long item: `fn` (a function, named `path:name`) or `file`, and its length in lines.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Long {
    /// `fn` or `file`.
    pub kind: &'static str,
    /// `path` or `path:function`.
    pub name: String,
    /// Lines.
    pub lines: usize,
}

impl std::fmt::Display for Long {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} {}", self.kind, self.lines, self.name)
    }
}

/// Whether a source is measured: Rust or Python (the Python package's modules; only their
/// file length, as their functions are not Rust's `fn`), not a test (a `tests/` folder) and
/// not generated.
fn measured(path: &Path) -> bool {
    let text = path.to_string_lossy();
    path.extension().is_some_and(|e| e == "rs" || e == "py")
        && !text
            .split('/')
            .any(|part| part == "tests" || part == "generated")
}

/// The functions over [`FUNCTION_LINES`] and the file itself when over [`FILE_LINES`], of
/// one source's code before its `#[cfg(test)]` module. A function runs from its `fn` line
/// to the first line that is its indentation and `}`.
pub fn long_items(path: &str, text: &str) -> Vec<Long> {
    let lines: Vec<&str> = text.lines().collect();
    let code = lines
        .iter()
        .position(|l| l.starts_with("#[cfg(test)]"))
        .unwrap_or(lines.len());
    let mut out = Vec::new();
    if code > FILE_LINES {
        out.push(Long {
            kind: "file",
            name: path.to_owned(),
            lines: code,
        });
    }
    for (i, line) in lines[..code].iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let head = [
            "pub ",
            "pub(crate) ",
            "pub(super) ",
            "const ",
            "async ",
            "unsafe ",
        ]
        .iter()
        .fold(trimmed, |t, p| t.strip_prefix(p).unwrap_or(t));
        let Some(rest) = head.strip_prefix("fn ") else {
            continue;
        };
        if line.trim_end().ends_with(';') {
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let close = format!("{indent}}}");
        let Some(end) = lines[i + 1..code].iter().position(|l| *l == close) else {
            continue;
        };
        let length = end + 2;
        if length > FUNCTION_LINES {
            out.push(Long {
                kind: "fn",
                name: format!("{path}:{name}"),
                lines: length,
            });
        }
    }
    out
}

/// The budgets file's entries: `fn LINES path:name` or `file LINES path`; `#` comments.
pub fn parse_budgets(text: &str) -> Result<Vec<Long>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|(n, l)| {
            let mut parts = l.split_whitespace();
            let bad = || format!("{BUDGETS}:{}: not `fn|file LINES NAME`: {l:?}", n + 1);
            let kind = match parts.next() {
                Some("fn") => "fn",
                Some("file") => "file",
                _ => return Err(bad()),
            };
            let lines = parts.next().and_then(|x| x.parse().ok()).ok_or_else(bad)?;
            let name = parts.next().ok_or_else(bad)?.to_owned();
            Ok(Long { kind, name, lines })
        })
        .collect()
}

/// Every long item against its budget: unlisted, longer or shorter than its budget, and
/// budgets of items that are no longer long, each named with the line to write.
pub fn check_budgets(found: &[Long], budgets: &[Long]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut used = vec![false; budgets.len()];
    for item in found {
        let slot = budgets
            .iter()
            .enumerate()
            .filter(|(i, b)| !used[*i] && b.kind == item.kind && b.name == item.name)
            .max_by_key(|(_, b)| b.lines);
        match slot {
            None => problems.push(format!(
                "{}: {} lines, over the {} of a {}: shorten it (a budget is for what was long already): {item}",
                item.name,
                item.lines,
                if item.kind == "fn" { FUNCTION_LINES } else { FILE_LINES },
                if item.kind == "fn" { "function" } else { "file" },
            )),
            Some((i, budget)) => {
                used[i] = true;
                if item.lines > budget.lines {
                    problems.push(format!(
                        "{}: {} lines, over its budget of {} (budgets may only shrink)",
                        item.name, item.lines, budget.lines
                    ));
                } else if item.lines < budget.lines {
                    problems.push(format!(
                        "{}: {} lines, under its budget of {}: lower it in {BUDGETS} to `{item}`",
                        item.name, item.lines, budget.lines
                    ));
                }
            }
        }
    }
    for (budget, _) in budgets.iter().zip(&used).filter(|(_, u)| !**u) {
        problems.push(format!(
            "{}: no longer over its threshold: remove `{budget}` from {BUDGETS}",
            budget.name
        ));
    }
    problems
}

/// Every measured source's long items against `xtask/tidy-budgets.txt`.
pub fn length_budgets(root: &Path, files: &[PathBuf]) -> Vec<String> {
    let budgets = match std::fs::read_to_string(root.join(BUDGETS)) {
        Ok(text) => match parse_budgets(&text) {
            Ok(b) => b,
            Err(e) => return vec![e],
        },
        Err(e) => return vec![format!("{BUDGETS}: {e}")],
    };
    let found: Vec<Long> = files
        .iter()
        .filter(|f| measured(f))
        .filter_map(|f| {
            let text = std::fs::read_to_string(root.join(f)).ok()?;
            Some(long_items(&f.to_string_lossy(), &text))
        })
        .flatten()
        .collect();
    check_budgets(&found, &budgets)
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

    /// The workspace itself: every long function and file is within its budget.
    #[test]
    fn every_long_function_and_file_keeps_its_budget() {
        let root = crate::workspace_root();
        let files = repository_files(&root).unwrap();
        let problems = length_budgets(&root, &files);
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn long_items_are_measured_and_held_to_their_budgets() {
        let body = "    x();\n".repeat(FUNCTION_LINES);
        let text = format!(
            "//! A file.\npub fn long() {{\n{body}}}\nfn short() {{\n}}\n    pub(crate) fn inner() {{\n{body}    }}\n#[cfg(test)]\nmod tests {{\nfn long_test() {{\n{body}}}\n}}\n"
        );
        let found = long_items("src/a.rs", &text);
        let names: Vec<(&str, usize)> = found.iter().map(|l| (l.name.as_str(), l.lines)).collect();
        assert_eq!(
            names,
            [
                ("src/a.rs:long", FUNCTION_LINES + 2),
                ("src/a.rs:inner", FUNCTION_LINES + 2)
            ]
        );
        let budgets = parse_budgets(&format!(
            "# comment\nfn {} src/a.rs:long\nfn 200 src/a.rs:inner\nfile 1200 src/gone.rs\n",
            FUNCTION_LINES + 2
        ))
        .unwrap();
        let problems = check_budgets(&found, &budgets);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems[0].contains("under its budget of 200"),
            "{problems:?}"
        );
        assert!(
            problems[1].contains("remove `file 1200 src/gone.rs`"),
            "{problems:?}"
        );
        let grown = check_budgets(&found, &parse_budgets("fn 151 src/a.rs:long\n").unwrap());
        assert!(grown[0].contains("over its budget of 151"), "{grown:?}");
        assert!(
            grown[1].starts_with("src/a.rs:inner: 152 lines, over the 150"),
            "{grown:?}"
        );
        assert!(parse_budgets("fn many src/a.rs:long\n").is_err());
    }

    #[test]
    fn python_modules_are_held_to_the_file_length_and_tests_are_not() {
        assert!(measured(Path::new("python/tracewise/hta.py")));
        assert!(!measured(Path::new("python/tests/test_hta.py")));
        assert!(!measured(Path::new("README.md")));
        let text = "def f():\n    pass\n".repeat(FILE_LINES / 2 + 1);
        let found = long_items("python/tracewise/big.py", &text);
        assert_eq!(
            found,
            [Long {
                kind: "file",
                name: "python/tracewise/big.py".into(),
                lines: FILE_LINES + 2,
            }]
        );
    }
}
