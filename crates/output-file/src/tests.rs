//! The rules, one case per line where possible: what is written, what is refused and with
//! which words, and that nothing staged is left behind.

use super::*;

const NEW: Rules<'static> = Rules {
    overwrite: false,
    inputs: &[],
};
const REPLACE: Rules<'static> = Rules {
    overwrite: true,
    inputs: &[],
};

fn refused<T: std::fmt::Debug>(res: Result<T, Error>) -> String {
    match res {
        Err(Error::Refused { reason, .. }) => reason,
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

fn dir_output(path: &Path, rules: &Rules<'_>, text: &str) -> Result<(), Error> {
    let out = DirOutput::create(path, rules)?;
    out.write("report.md", text.as_bytes())?;
    out.write("tables/a.csv", b"a\n")?;
    out.commit()
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
    assert_eq!(entries(dir.path()), ["out.txt"], "no staged file is left");
}

#[test]
fn directory_is_refused() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let reason = refused(write(dir.path(), &REPLACE, b"x"));
    assert!(reason.contains("directory"), "{reason}");
    for p in [".", ".."] {
        let reason = refused(write(Path::new(p), &REPLACE, b"x"));
        assert!(!reason.contains("--overwrite"), "{reason}");
    }
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
fn a_file_inside_an_input_directory_is_never_replaced() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let capture = dir.path().join("cap");
    std::fs::create_dir(&capture).expect("mkdir");
    let read = capture.join("host.xplane.pb");
    std::fs::write(&read, b"proto").expect("write");
    let inputs = [capture.as_path()];
    let rules = Rules {
        overwrite: true,
        inputs: &inputs,
    };
    let reason = refused(write(&read, &rules, b"csv"));
    assert!(reason.contains("inside the input directory"), "{reason}");
    assert!(!reason.contains("--overwrite"), "{reason}");
    assert_eq!(std::fs::read(&read).expect("read"), b"proto");
    // A new file there is fine: nothing is lost.
    write(&capture.join("ops.csv"), &rules, b"csv").expect("a new file is written");
}

#[test]
fn a_failed_write_leaves_nothing() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("out.txt");
    let res = write_with(&path, &NEW, |_| Err(io::Error::other("the writer failed")));
    assert!(matches!(res, Err(Error::Io(_))));
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
    assert!(staged_paths().iter().all(|p| !p.starts_with(dir.path())));
}

#[test]
fn a_file_that_appears_during_the_run_is_kept() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("out.txt");
    let mut pending = Pending::create(&path, &NEW).expect("staged");
    pending.file_mut().write_all(b"new").expect("write");
    std::fs::write(&path, b"the user's").expect("write");
    assert!(refused(pending.commit()).contains("--overwrite"));
    assert_eq!(std::fs::read(&path).expect("read"), b"the user's");
    assert_eq!(entries(dir.path()), ["out.txt"]);
}

#[test]
fn several_files_are_committed_all_or_nothing() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let a = dir.path().join("a.csv");
    let b = dir.path().join("b.svg");
    std::fs::write(&a, b"old a").expect("write");
    std::fs::write(&b, b"old b").expect("write");
    // Without --overwrite neither is replaced.
    let stage = |rules: &Rules<'_>| {
        let mut pa = Pending::create_mode(&a, &REPLACE, 0o666).expect("staged");
        pa.overwrite = rules.overwrite;
        pa.file_mut().write_all(b"new a").expect("write");
        let mut pb = Pending::create_mode(&b, &REPLACE, 0o666).expect("staged");
        pb.overwrite = rules.overwrite;
        pb.file_mut().write_all(b"new b").expect("write");
        vec![pa, pb]
    };
    assert!(refused(commit_all(stage(&NEW))).contains("--overwrite"));
    assert_eq!(std::fs::read(&a).expect("read"), b"old a");
    // The second path turns into a directory while the run writes: the first file is put
    // back as it was.
    let outputs = stage(&REPLACE);
    std::fs::remove_file(&b).expect("rm");
    std::fs::create_dir(&b).expect("mkdir");
    assert!(refused(commit_all(outputs)).contains("directory"));
    assert_eq!(std::fs::read(&a).expect("read"), b"old a");
    std::fs::remove_dir(&b).expect("rmdir");
    commit_all(stage(&REPLACE)).expect("both replaced");
    assert_eq!(std::fs::read(&a).expect("read"), b"new a");
    assert_eq!(std::fs::read(&b).expect("read"), b"new b");
    assert_eq!(entries(dir.path()), ["a.csv", "b.svg"]);
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
    let private = dir.path().join("cache.parquet");
    let pending = Pending::create_private(&private, &NEW).expect("staged");
    pending.commit().expect("committed");
    let mode = std::fs::metadata(&private)
        .expect("meta")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600 & !umask);
    let report = dir.path().join("report");
    dir_output(&report, &NEW, "x").expect("written");
    let mode = std::fs::metadata(&report)
        .expect("meta")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o777 & !umask, "mode {mode:o} under umask {umask:o}");
}

#[test]
fn a_directory_output_is_replaced_only_when_ours_and_asked() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let report = dir.path().join("report");
    dir_output(&report, &NEW, "one").expect("a new directory");
    assert_eq!(
        entries(&report),
        [MARKER, "report.md", "tables"],
        "the marker is in it"
    );
    assert!(refused(dir_output(&report, &NEW, "two")).contains("--overwrite"));
    dir_output(&report, &REPLACE, "two").expect("replaced with --overwrite");
    assert_eq!(
        std::fs::read_to_string(report.join("report.md")).expect("read"),
        "two"
    );
    assert_eq!(entries(dir.path()), ["report"], "nothing staged is left");
}

#[test]
fn a_user_directory_is_never_replaced() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mine = dir.path().join("mine");
    std::fs::create_dir(&mine).expect("mkdir");
    std::fs::write(mine.join("notes.txt"), b"keep").expect("write");
    for rules in [NEW, REPLACE] {
        let reason = refused(dir_output(&mine, &rules, "x"));
        assert!(
            reason.contains("not written by a tracewise tool"),
            "{reason}"
        );
        assert!(!reason.contains("--overwrite"), "{reason}");
    }
    assert_eq!(entries(&mine), ["notes.txt"]);
    // An empty directory loses nothing: it is used.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    dir_output(&empty, &NEW, "x").expect("an empty directory is filled");
}

#[test]
fn protected_directories_are_refused_with_overwrite() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let run = dir.path().join("run");
    std::fs::create_dir(&run).expect("mkdir");
    let input = run.join("rank0.json");
    std::fs::write(&input, b"{}").expect("write");
    std::fs::write(run.join(MARKER), b"").expect("a planted marker changes nothing");
    let inputs = [input.as_path()];
    let rules = Rules {
        overwrite: true,
        inputs: &inputs,
    };
    let cwd = std::env::current_dir().expect("cwd");
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut cases = vec![
        (run.clone(), "holds the input"),
        (input.clone(), "is the input"),
        (PathBuf::from("."), "current directory"),
        (PathBuf::from(".."), "current directory"),
        (cwd.clone(), "current directory"),
        (
            cwd.parent().expect("below /").to_path_buf(),
            "current directory",
        ),
        (PathBuf::from("/"), "root"),
    ];
    if let Some(home) = home.filter(|h| h.is_dir() && !cwd.starts_with(h)) {
        cases.push((home, "home"));
    }
    for (path, why) in cases {
        let reason = refused(dir_output(&path, &rules, "x"));
        assert!(reason.contains(why), "{}: {reason}", path.display());
        assert!(!reason.contains("--overwrite"), "{reason}");
    }
    assert_eq!(std::fs::read(&input).expect("read"), b"{}");
}

#[cfg(unix)]
#[test]
fn links_files_and_devices_are_not_directory_outputs() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let report = dir.path().join("report");
    dir_output(&report, &NEW, "one").expect("a new directory");
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&report, &link).expect("symlink");
    let file = dir.path().join("file");
    std::fs::write(&file, b"keep").expect("write");
    for (path, why) in [
        (link.as_path(), "symbolic link"),
        (file.as_path(), "not a directory"),
        (Path::new("/dev/null"), "not a directory"),
    ] {
        let reason = refused(dir_output(path, &REPLACE, "x"));
        assert!(reason.contains(why), "{}: {reason}", path.display());
    }
    assert_eq!(std::fs::read(&file).expect("read"), b"keep");
    assert_eq!(
        std::fs::read_to_string(report.join("report.md")).expect("read"),
        "one"
    );
}

#[test]
fn a_directory_that_appears_or_changes_during_the_run_is_kept() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let report = dir.path().join("report");
    // Appears: another run, or the user, put a directory there.
    let out = DirOutput::create(&report, &NEW).expect("staged");
    std::fs::create_dir(&report).expect("mkdir");
    std::fs::write(report.join("notes.txt"), b"keep").expect("write");
    let reason = refused(out.commit());
    assert!(
        reason.contains("not written by a tracewise tool"),
        "{reason}"
    );
    assert_eq!(entries(&report), ["notes.txt"]);
    // Was empty when the run started, holds the user's file at the end.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    let out = DirOutput::create(&empty, &REPLACE).expect("staged");
    std::fs::write(empty.join("notes.txt"), b"keep").expect("write");
    assert!(out.commit().is_err());
    assert_eq!(entries(&empty), ["notes.txt"]);
    assert_eq!(
        entries(dir.path()),
        ["empty", "report"],
        "nothing staged is left"
    );
}

#[test]
fn two_runs_with_one_output_never_both_succeed_without_overwrite() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let report = dir.path().join("report");
    let a = DirOutput::create(&report, &NEW).expect("staged");
    let b = DirOutput::create(&report, &NEW).expect("staged");
    a.write("report.md", b"a").expect("write");
    b.write("report.md", b"b").expect("write");
    a.commit().expect("the first commit wins");
    assert!(refused(b.commit()).contains("--overwrite"));
    assert_eq!(
        std::fs::read_to_string(report.join("report.md")).expect("read"),
        "a"
    );
    assert_eq!(entries(dir.path()), ["report"]);
}

#[test]
fn what_a_dead_run_staged_is_removed_by_the_next() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    // A pid that cannot exist (above the kernel's limit of 2^22).
    let stale = dir.path().join(".out.txt.tracewise-99999999-abc.tmp");
    std::fs::write(&stale, b"half").expect("write");
    let other = dir.path().join(".other.txt.tracewise-99999999-abc.tmp");
    std::fs::write(&other, b"half").expect("write");
    write(&dir.path().join("out.txt"), &NEW, b"x").expect("written");
    let expect: &[&str] = if Path::new("/proc/self").exists() {
        &[".other.txt.tracewise-99999999-abc.tmp", "out.txt"]
    } else {
        &[
            ".other.txt.tracewise-99999999-abc.tmp",
            ".out.txt.tracewise-99999999-abc.tmp",
            "out.txt",
        ]
    };
    assert_eq!(entries(dir.path()), expect);
}

#[test]
fn staged_paths_are_registered_until_committed() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = DirOutput::create(&dir.path().join("r"), &NEW).expect("staged");
    assert!(staged_paths().contains(&out.staged().to_path_buf()));
    let staged = out.staged().to_path_buf();
    out.commit().expect("committed");
    assert!(!staged_paths().contains(&staged));
    let pending = Pending::create(&dir.path().join("f"), &NEW).expect("staged");
    let staged = pending.staged.clone();
    assert!(staged_paths().contains(&staged));
    drop(pending);
    assert!(!staged_paths().contains(&staged));
    assert!(!staged.exists());
}

#[test]
fn directories_made_for_an_output_that_is_not_committed_are_removed() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let deep = dir.path().join("a/b/c");
    let res = write_with(&deep.join("out.txt"), &NEW, |_| {
        Err(io::Error::other("failed"))
    });
    assert!(res.is_err());
    let out = DirOutput::create(&deep.join("report"), &NEW).expect("staged");
    drop(out);
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
    // Committed: they stay.
    write(&deep.join("out.txt"), &NEW, b"x").expect("written");
    assert!(deep.join("out.txt").is_file());
}

#[test]
fn an_old_output_a_killed_run_renamed_aside_is_put_back() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let report = dir.path().join("report");
    dir_output(&report, &NEW, "old").expect("written");
    // As a run killed between renaming the old report aside and renaming the new one in.
    let aside = dir.path().join(".report.tracewise-99999999-abc.old");
    std::fs::rename(&report, &aside).expect("rename");
    let other = DirOutput::create(&report, &NEW).expect("staged");
    drop(other);
    if Path::new("/proc/self").exists() {
        assert_eq!(
            std::fs::read_to_string(report.join("report.md")).expect("put back"),
            "old"
        );
        assert_eq!(entries(dir.path()), ["report"]);
    }
}

#[cfg(unix)]
#[test]
fn what_an_input_directory_links_to_is_an_input_too() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let rep = dir.path().join("rep");
    dir_output(&rep, &NEW, "old").expect("a report directory");
    let trace = rep.join("rank0.pt.trace.json");
    std::fs::write(&trace, b"{}").expect("write");
    let run = dir.path().join("run");
    std::fs::create_dir_all(run.join("deep")).expect("mkdir");
    std::os::unix::fs::symlink(&trace, run.join("deep/rank0.pt.trace.json")).expect("link");
    let inputs = [run.as_path()];
    let rules = Rules {
        overwrite: true,
        inputs: &inputs,
    };
    // The report directory holds a file the input links to: never replaced.
    let reason = refused(dir_output(&rep, &rules, "new"));
    assert!(reason.contains("rank0.pt.trace.json"), "{reason}");
    assert!(reason.contains("link"), "{reason}");
    assert_eq!(std::fs::read(&trace).expect("kept"), b"{}");
    // Nor is that file replaced as a file output.
    let reason = refused(write(&trace, &rules, b"x"));
    assert!(reason.contains("link"), "{reason}");
    assert_eq!(std::fs::read(&trace).expect("kept"), b"{}");
    // A link cycle inside the input is listed once, never followed.
    std::os::unix::fs::symlink(&run, run.join("deep/loop")).expect("link");
    let other = dir.path().join("other");
    dir_output(&other, &rules, "x").expect("an unrelated output is still written");
}

#[test]
fn a_dead_run_s_staged_directory_is_removed_whatever_it_holds_if_marked() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    // Killed while writing (or while its removal was under way): the marker is still there.
    let marked = dir.path().join(".exp.tracewise-99999999-abc.tmp");
    std::fs::create_dir_all(marked.join("rank=7")).expect("mkdir");
    std::fs::write(marked.join(MARKER), b"m").expect("write");
    for i in 0..181 {
        std::fs::write(marked.join(format!("rank=7/part-{i}.parquet")), b"p").expect("write");
    }
    // Killed between making the directory and marking it: empty.
    let empty = dir.path().join(".exp.tracewise-99999998-abd.tmp");
    std::fs::create_dir(&empty).expect("mkdir");
    // Unmarked and not empty: not ours to remove.
    let unmarked = dir.path().join(".exp.tracewise-99999997-abe.tmp");
    std::fs::create_dir(&unmarked).expect("mkdir");
    std::fs::write(unmarked.join("notes.txt"), b"keep").expect("write");
    dir_output(&dir.path().join("exp"), &NEW, "x").expect("written");
    if Path::new("/proc/self").exists() {
        assert_eq!(
            entries(dir.path()),
            [".exp.tracewise-99999997-abe.tmp", "exp"]
        );
    }
}

#[test]
fn a_directory_is_removed_while_a_writer_is_still_adding_to_it() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let staged = dir.path().join(".r.tracewise-1-x.tmp");
    std::fs::create_dir_all(staged.join("sub")).expect("mkdir");
    std::fs::write(staged.join(MARKER), b"m").expect("write");
    let writer = {
        let staged = staged.clone();
        std::thread::spawn(move || {
            for i in 0..2_000 {
                // Fails once the directory is gone, as a writer's next file would.
                if std::fs::write(staged.join(format!("f{i}")), b"x").is_err() {
                    break;
                }
            }
        })
    };
    let removed = staging::remove_path(&staged);
    writer.join().expect("the writer ends");
    // Either gone, or (a writer outran every round) still carrying its marker.
    assert!(
        removed.is_ok() && !staged.exists() || staged.join(MARKER).is_file(),
        "{removed:?}"
    );
}
