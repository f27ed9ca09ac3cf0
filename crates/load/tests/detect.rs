//! Format detection and directory layouts: every file goes to its reader or is refused
//! naming the formats known, never guessed.

use load::{Error, FileKind, Found};
use trace_model::Format;

#[test]
fn names_decide_where_they_are_unambiguous() {
    let dir = tempfile::tempdir().unwrap();
    for (name, kind) in [
        ("a.xplane.pb", FileKind::XSpace),
        ("a.nsys-rep", FileKind::Nsys),
        ("a.qdrep", FileKind::Nsys),
        ("a.json", FileKind::Chrome),
        ("a.pt.trace.json.gz", FileKind::Chrome),
    ] {
        // The content does not matter for these names: the reader then says what is wrong.
        let path = dir.path().join(name);
        std::fs::write(&path, b"not what the name says").unwrap();
        assert_eq!(load::detect(&path).unwrap(), kind, "{name}");
    }
}

#[test]
fn content_decides_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("trace.txt");
    std::fs::write(&json, b"\n  {\"traceEvents\": []}").unwrap();
    assert_eq!(load::detect(&json).unwrap(), FileKind::Chrome);
    let gz = dir.path().join("trace.bin");
    std::fs::write(&gz, [0x1f, 0x8b, 8, 0]).unwrap();
    assert_eq!(load::detect(&gz).unwrap(), FileKind::Chrome);
    let v1 = dir.path().join("kernels.csv");
    std::fs::write(
        &v1,
        b"Index,KernelName,gpu-id,queue-id,BeginNs,EndNs\n0,\"k\",0,0,10,20\n",
    )
    .unwrap();
    assert_eq!(
        load::detect(&v1).unwrap(),
        FileKind::Rocprof(rocprof_reader::Kind::V1Csv)
    );
}

#[test]
fn an_unknown_file_is_an_error_naming_it_and_the_known_formats() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes, why) in [
        ("empty.bin", &b""[..], "empty"),
        (
            "notes.txt",
            &b"hello, world\n"[..],
            "neither JSON nor a rocprof CSV header",
        ),
        ("blob.dat", &[0u8, 1, 2, 3, 200][..], "binary data"),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let err = load::load(&path).expect_err(name);
        assert!(
            matches!(err, Error::UnknownFormat { .. }),
            "{name}: {err:?}"
        );
        let text = err.to_string();
        assert!(text.starts_with(&path.display().to_string()), "{text}");
        assert!(text.contains(why), "{name}: {text}");
        assert!(text.contains(load::KNOWN_FORMATS), "{text}");
    }
    // A SQLite database of another schema is refused as such; a damaged one goes to the
    // Nsight Systems reader, which says where the damage is.
    let other = test_support::workspace_root().join("testdata/nsys/err/not_an_export.sqlite");
    let err = load::load(&other).expect_err("another schema");
    assert!(
        err.to_string()
            .contains("neither an Nsight Systems export nor a rocpd"),
        "{err}"
    );
    let header_only = dir.path().join("header.sqlite");
    std::fs::write(&header_only, b"SQLite format 3\0").unwrap();
    let err = load::load(&header_only).expect_err("truncated");
    assert!(err.to_string().contains("truncated"), "{err}");
}

#[test]
fn a_directory_without_captures_says_so() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README"), b"nothing here").unwrap();
    let err = load::load(dir.path()).expect_err("no capture");
    assert!(matches!(err, Error::NoCapture { .. }), "{err:?}");
    assert!(err.to_string().contains(load::KNOWN_FORMATS));
}

#[test]
fn a_fifo_named_like_a_trace_is_passed_over() {
    let dir = tempfile::tempdir().unwrap();
    let tiny =
        test_support::workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json");
    std::fs::copy(&tiny, dir.path().join("rank0.pt.trace.json")).unwrap();
    let fifo = dir.path().join("rank1.xplane.pb");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo");
    // Opening the FIFO would block forever; the directory loads its one regular trace.
    let loaded = load::load(dir.path()).expect("loads");
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded[0].format(), Format::KinetoJson);
}

#[test]
fn a_rocprof_v1_run_is_one_capture_even_beside_its_broken_json() {
    // rocprof v1 writes results.json too, which is not valid JSON (it starts with a comma).
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("results.json"), b",{\"ph\":\"M\"}\n").unwrap();
    std::fs::write(
        dir.path().join("results.csv"),
        b"Index,KernelName,gpu-id,queue-id,queue-index,pid,tid,grd,wgr,lds,scr,arch_vgpr,accum_vgpr,sgpr,wave_size,sig,obj,DispatchNs,BeginNs,EndNs,CompleteNs\n\
0,\"stencil(int) [clone .kd]\",0,0,0,7,7,256,64,0,0,8,0,16,64,0x0,0x0,1,10,30,31\n",
    )
    .unwrap();
    match load::find(dir.path()).unwrap() {
        Found::Files(files) => {
            assert_eq!(files.len(), 1, "{files:?}");
            assert!(files[0].0.ends_with("results.csv"));
        }
        other => panic!("{other:?}"),
    }
    let loaded = load::load_single(dir.path()).expect("loads");
    assert_eq!(loaded.format(), Format::RocprofV1);
    assert_eq!(loaded.capture.activities().len(), 1);
}

#[test]
fn several_captures_where_one_is_asked_for_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let tiny =
        test_support::workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json");
    for rank in 0..2 {
        std::fs::copy(&tiny, dir.path().join(format!("rank{rank}.pt.trace.json"))).unwrap();
    }
    assert_eq!(load::load(dir.path()).unwrap().len(), 2);
    let err = load::load_single(dir.path()).expect_err("two ranks");
    assert!(
        matches!(err, Error::SeveralCaptures { count: 2, .. }),
        "{err:?}"
    );
}

/// An XSpace comes with every HLO program its metadata plane stores, decoded.
#[test]
fn an_xspace_comes_with_its_programs_decoded() {
    let path = test_support::workspace_root().join("testdata/xplane/ok/small.xplane.pb");
    let loaded = load::load_single(&path).expect("loads");
    assert_eq!(loaded.format(), Format::XPlane);
    let space = xplane_reader::XSpace::read(&path).expect("decodes");
    let stored = space.hlo_programs();
    assert_eq!(loaded.programs.len(), stored.len());
    for (program, stored) in loaded.programs.iter().zip(&stored) {
        assert_eq!(program.id, stored.program_id);
        assert_eq!(
            program.module.is_ok(),
            hlo_parser::module_from_hlo_proto(stored.hlo_proto).is_ok()
        );
    }
}

/// Every shared Nsight Systems and ROCm capture with GPU work loads through the one
/// loader, from its directory as from its file.
#[test]
fn shared_nsys_and_rocprof_captures_load() {
    let Some(traces) = test_support::traces_dir("shared_nsys_and_rocprof_captures_load") else {
        return;
    };
    let mut loaded_dirs = 0;
    for (dir, format) in [
        ("nsys/nvfuser-h200-matmul", Format::NsysSqlite),
        ("nsys/nvfuser-8xh100-matmul", Format::NsysSqlite),
        ("nsys/nsys-ai-rtx3080-torch-zeros", Format::NsysSqlite),
        ("nsys/pipit-cloverleaf-a100", Format::NsysSqlite),
        ("nsys/pipit-saxpy-mpi-a100", Format::NsysSqlite),
        ("rocprof/rocprofv1-stencil-mi250x", Format::RocprofV1),
        ("rocprof/rocprofv3-csv-llamacpp-gfx1151", Format::RocprofCsv),
        ("rocprof/rocprofv3-doc-csv", Format::RocprofCsv),
        ("rocprof/rocprofv3-pftrace-jacc", Format::RocprofPerfetto),
        (
            "rocprof/rocprofv3-json-mi350x-aorta-train",
            Format::RocprofJson,
        ),
        ("nsys/nsys-a100pcie-extrap-exgpu", Format::NsysSqlite),
    ] {
        let loaded = load::load(&traces.join(dir)).unwrap_or_else(|e| panic!("{dir}: {e}"));
        assert!(!loaded.is_empty(), "{dir}");
        for l in &loaded {
            assert_eq!(l.format(), format, "{dir}");
        }
        loaded_dirs += 1;
    }
    assert_eq!(loaded_dirs, 11);
    let none = traces.join("nsys/jacc-4xa100-no-cuda-tables/report1.sqlite");
    let err = load::load(&none).expect_err("no CUDA work");
    assert!(err.is_nothing_to_report(), "{err}");
    assert!(err.to_string().contains("report1.sqlite"), "{err}");
}

/// `map_each` gives what `load` gives, in the same order, one capture at a time.
#[test]
fn map_each_follows_load() {
    let dir = tempfile::tempdir().unwrap();
    let tiny =
        test_support::workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json");
    // Names whose order differs from the ranks' order, which the metadata gives.
    let text = std::fs::read_to_string(&tiny).unwrap();
    assert!(text.contains("\"rank\": 0,"));
    for (name, rank) in [("b.json", 2), ("a.json", 10), ("c.json", 1)] {
        let text = text.replacen("\"rank\": 0,", &format!("\"rank\": {rank},"), 1);
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    std::fs::write(dir.path().join("d.json"), b"{\"traceEvents\": [").unwrap();
    let each = load::load_each(dir.path()).unwrap();
    let mapped = load::map_each(dir.path(), |l| l.capture.activities().len()).unwrap();
    let ok: Vec<(std::path::PathBuf, Option<i64>, usize)> = mapped
        .iter()
        .filter_map(|r| r.as_ref().ok().cloned())
        .collect();
    let expected: Vec<_> = each
        .loaded
        .iter()
        .map(|l| (l.path.clone(), l.rank, l.capture.activities().len()))
        .collect();
    assert_eq!(ok, expected);
    assert_eq!(
        ok.iter().map(|(_, r, _)| *r).collect::<Vec<_>>(),
        vec![Some(1), Some(2), Some(10)]
    );
    assert_eq!(
        mapped.iter().filter(|r| r.is_err()).count(),
        each.failed.len()
    );
    assert_eq!(each.failed.len(), 1);
    // A file on its own: its error is the call's.
    let bad = dir.path().join("d.json");
    assert!(load::map_each(&bad, |_| ()).is_err());
}

/// A rank directory's set is said as it is: two files with the same rank are both loaded
/// and named in one note, and a compaction output beside the ranks is not read as one
/// more rank (a note names it). A directory of compaction outputs only is read as ranks.
#[test]
fn duplicate_ranks_and_compaction_outputs_are_notes() {
    let tiny = test_support::workspace_root().join("testdata/chrome/ok/tiny-train");
    let dir = tempfile::tempdir().unwrap();
    let copy = |from: &str, to: &str| {
        std::fs::copy(tiny.join(from), dir.path().join(to)).unwrap();
    };
    copy("rank0.pt.trace.json", "rank0.pt.trace.json");
    copy("rank1.pt.trace.json", "rank1.pt.trace.json");
    // Metadata rank 0 under another name: a second rank 0.
    copy("rank0.pt.trace.json", "worker7.pt.trace.json");
    // What compact-cuda-graph-trace writes beside its inputs (never opened: the second
    // is plain JSON under a gzip name).
    copy("rank0.pt.trace.json", "rank0.pt.trace_compacted.json");
    copy("rank1.pt.trace.json", "pp_traces_merged_compacted.json.gz");
    let each = load::load_each(dir.path()).unwrap();
    let files: Vec<_> = each
        .loaded
        .iter()
        .map(|l| {
            (
                l.path.file_name().unwrap().to_string_lossy().into_owned(),
                l.rank,
            )
        })
        .collect();
    assert_eq!(
        files,
        [
            ("rank0.pt.trace.json".to_owned(), Some(0)),
            ("worker7.pt.trace.json".to_owned(), Some(0)),
            ("rank1.pt.trace.json".to_owned(), Some(1)),
        ]
    );
    let p = |name: &str| dir.path().join(name);
    assert_eq!(
        each.notes,
        [
            load::Note::NotARank {
                path: p("pp_traces_merged_compacted.json.gz")
            },
            load::Note::NotARank {
                path: p("rank0.pt.trace_compacted.json")
            },
            load::Note::DuplicateRank {
                rank: 0,
                files: vec![p("rank0.pt.trace.json"), p("worker7.pt.trace.json")],
            },
        ]
    );
    let said = each.notes[2].to_string();
    assert!(
        said.contains("rank 0 is given by 2 files")
            && said.contains("rank0.pt.trace.json")
            && said.contains("worker7.pt.trace.json"),
        "{said}"
    );
    // map_each reads the same files.
    let mapped = load::map_each(dir.path(), |_| ()).unwrap();
    assert_eq!(mapped.len(), 3);
    // Only compaction outputs: they are what there is to read.
    let only = tempfile::tempdir().unwrap();
    std::fs::copy(
        tiny.join("rank0.pt.trace.json"),
        only.path().join("rank0_compacted.json"),
    )
    .unwrap();
    let each = load::load_each(only.path()).unwrap();
    assert_eq!((each.loaded.len(), each.notes.len()), (1, 0));
}

/// The new input paths refuse bad input through the loader with the file named and what is
/// wrong: rocprofv3 JSON lacking a section (detected by its key, not read as a Chrome
/// trace), and a file whose processes do not include `--process`'s (its own test binary
/// sets the selector: `tests/process.rs`).
#[test]
fn rocprofv3_json_lacking_a_section_names_the_file_and_the_way_out() {
    let seed = test_support::workspace_root().join("testdata/rocprof/json/small_results.json");
    let text = std::fs::read_to_string(&seed).expect("the seed");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("7_results.json");
    std::fs::write(
        &path,
        text.replacen("\"kernel_symbols\":", "\"x_kernel_symbols\":", 1),
    )
    .unwrap();
    assert_eq!(
        load::detect(&path).unwrap(),
        load::FileKind::Rocprof(rocprof_reader::Kind::Json)
    );
    let err = load::load(&path)
        .expect_err("no kernel_symbols")
        .to_string();
    assert!(err.starts_with(&path.display().to_string()), "{err}");
    assert!(
        err.contains("kernel_symbols") && err.contains("--output-format csv, pftrace or rocpd"),
        "{err}"
    );
    // The whole seed loads, as rocprofv3 JSON.
    std::fs::copy(&seed, &path).unwrap();
    let loaded = load::load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loaded[0].format(), Format::RocprofJson);
}

#[cfg(unix)]
#[test]
fn links_back_to_a_directory_are_walked_once() {
    // 30 links to the directory itself: following each one four levels deep would be
    // 30^4 directory reads (the walk never ended); each directory is now entered once.
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("plugins/profile/run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("host.xplane.pb"), b"").unwrap();
    for i in 0..30 {
        std::os::unix::fs::symlink(dir.path(), dir.path().join(format!("loop{i}"))).unwrap();
    }
    let started = std::time::Instant::now();
    let found = load::find(dir.path()).unwrap();
    let Found::Files(files) = found else {
        panic!("expected the XSpace, got {found:?}");
    };
    assert_eq!(files, [(run.join("host.xplane.pb"), FileKind::XSpace)]);
    // Generous: the walk is a handful of directory reads.
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

/// Makes `path` unreadable (mode 000) for the life of the guard. The tests that use it
/// run again without root's capabilities where root reads through mode 000
/// (`test_support::rerun_where_permissions_hold`).
#[cfg(unix)]
struct Locked(std::path::PathBuf);

#[cfg(unix)]
impl Locked {
    fn new(path: &std::path::Path) -> Locked {
        test_support::make_unreadable(path);
        Locked(path.to_path_buf())
    }
}

#[cfg(unix)]
impl Drop for Locked {
    fn drop(&mut self) {
        test_support::make_readable(&self.0);
    }
}

/// #45 finding 18: an unreadable subdirectory of a capture directory (searched for
/// XSpaces) no longer fails the whole load. `load_each` and `map_each` load the ranks
/// beside it and name it among what could not be read (a tool warns and exits 3); `load`,
/// which fails on the first unreadable file, fails naming it.
#[cfg(unix)]
#[test]
fn an_unreadable_subdirectory_is_named_and_the_rest_loads() {
    if test_support::rerun_where_permissions_hold(
        "an_unreadable_subdirectory_is_named_and_the_rest_loads",
    ) {
        return;
    }
    let tiny = test_support::workspace_root().join("testdata/chrome/ok/tiny-train");
    let dir = tempfile::tempdir().unwrap();
    for name in ["rank0.pt.trace.json", "rank1.pt.trace.json"] {
        std::fs::copy(tiny.join(name), dir.path().join(name)).unwrap();
    }
    let sub = dir.path().join("plugins/profile");
    std::fs::create_dir_all(&sub).unwrap();
    let _locked = Locked::new(&sub);
    let named = |e: &Error| matches!(e, Error::Io { path, .. } if *path == sub);
    let each = load::load_each(dir.path()).unwrap();
    assert_eq!(each.loaded.len(), 2);
    assert_eq!(each.failed.len(), 1, "{:?}", each.failed);
    assert!(named(&each.failed[0]), "{}", each.failed[0]);
    let mapped = load::map_each(dir.path(), |_| ()).unwrap();
    assert_eq!(mapped.len(), 3);
    assert!(matches!(&mapped[0], Err(e) if named(e)));
    assert!(mapped[1..].iter().all(Result::is_ok));
    let err = load::load(dir.path()).expect_err("an unreadable subdirectory");
    assert!(named(&err), "{err}");
    // `find` still finds the ranks; `find_each` names what it could not search.
    assert!(matches!(load::find(dir.path()), Ok(Found::ChromeDir(_))));
    assert_eq!(load::find_each(dir.path()).unwrap().unread.len(), 1);
}

/// An unreadable file among Nsight Systems or ROCm captures is named, not passed over as
/// if it were not a capture; where nothing else is there, its error is the load's rather
/// than "no capture in this directory".
#[cfg(unix)]
#[test]
fn an_unreadable_file_in_a_capture_directory_is_named() {
    if test_support::rerun_where_permissions_hold(
        "an_unreadable_file_in_a_capture_directory_is_named",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("kernels.csv");
    std::fs::write(
        &csv,
        b"Index,KernelName,gpu-id,queue-id,BeginNs,EndNs\n0,\"k\",0,0,10,20\n",
    )
    .unwrap();
    let locked = dir.path().join("other.db");
    std::fs::write(&locked, b"SQLite format 3\0").unwrap();
    std::fs::write(dir.path().join("README.txt"), b"notes\n").unwrap();
    let _locked = Locked::new(&locked);
    let each = load::find_each(dir.path()).unwrap();
    assert_eq!(
        each.found,
        Found::Files(vec![(
            csv.clone(),
            FileKind::Rocprof(rocprof_reader::Kind::V1Csv)
        )])
    );
    // The README is not a capture, and is not named.
    assert_eq!(each.unread.len(), 1, "{:?}", each.unread);
    assert!(matches!(&each.unread[0], Error::Io { path, .. } if *path == locked));
    std::fs::remove_file(&csv).unwrap();
    let err = load::load(dir.path()).expect_err("only an unreadable file");
    assert!(
        matches!(&err, Error::Io { path, .. } if *path == locked),
        "{err}"
    );
}

/// `map_each_delivered` hands each capture over in rank order as soon as the ones before
/// it are in, reading the files in the order their first bytes give; what it returns is
/// `map_each`'s. A file's first capture whose turn has come is told so.
#[test]
fn map_each_delivered_delivers_in_rank_order() {
    let dir = tempfile::tempdir().unwrap();
    let tiny =
        test_support::workspace_root().join("testdata/chrome/ok/tiny-train/rank0.pt.trace.json");
    let text = std::fs::read_to_string(&tiny).unwrap();
    for (name, rank) in [("b.json", 2), ("a.json", 10), ("c.json", 1)] {
        let text = text.replacen("\"rank\": 0,", &format!("\"rank\": {rank},"), 1);
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    std::fs::write(dir.path().join("d.json"), b"{\"traceEvents\": [").unwrap();
    // The ranks are read from the first bytes, before the events.
    assert_eq!(
        chrome_reader::rank_before_events(&dir.path().join("a.json")),
        Some(10)
    );
    assert_eq!(
        chrome_reader::rank_before_events(&dir.path().join("d.json")),
        None
    );
    let mut delivered = Vec::new();
    let mapped = load::map_each_delivered(
        dir.path(),
        |l, turn| (l.capture.activities().len(), turn.now()),
        |path, rank, _| delivered.push((path.to_path_buf(), rank)),
    )
    .unwrap();
    let returned: Vec<_> = mapped
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .map(|(path, rank, _)| (path.clone(), *rank))
        .collect();
    assert_eq!(delivered, returned);
    assert_eq!(
        returned.iter().map(|(_, r)| *r).collect::<Vec<_>>(),
        vec![Some(1), Some(2), Some(10)]
    );
    let plain = load::map_each(dir.path(), |l| l.capture.activities().len()).unwrap();
    let delivered_counts: Vec<Option<usize>> = mapped
        .iter()
        .map(|r| r.as_ref().ok().map(|o| o.2.0))
        .collect();
    let counts: Vec<Option<usize>> = plain.iter().map(|r| r.as_ref().ok().map(|o| o.2)).collect();
    assert_eq!(delivered_counts, counts);
    // Without the unreadable file (read first: its rank is unknown), rank 1's file is read
    // first, and its turn has come when it is.
    std::fs::remove_file(dir.path().join("d.json")).unwrap();
    let mapped = load::map_each_delivered(dir.path(), |_, turn| turn.now(), |_, _, _| {}).unwrap();
    let (_, rank, now) = mapped[0].as_ref().unwrap();
    assert_eq!((*rank, *now), (Some(1), true));
}
