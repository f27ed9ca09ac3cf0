//! End-to-end runs of the binary on synthetic fixtures: default output names, the JSON
//! summary, refusal to replace an output without `--overwrite`, the merge mode, and
//! `--lanes semantic`.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn run(args: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_compact-cuda-graph-trace"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn summary(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is the JSON summary")
}

#[test]
fn compacts_a_graph_trace_and_refuses_to_overwrite() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let written = lanes::synth::write_fixtures(dir.path()).expect("fixtures");
    let input = &written[0];
    let out = run(&[input]);
    let s = summary(&out);
    let keys: Vec<&str> = s
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    // serde_json's map is sorted here; the order on stdout is checked below.
    assert!(keys.contains(&"compacted_lanes"));
    let text = String::from_utf8_lossy(&out.stdout);
    let order = [
        "\"input\"",
        "\"output\"",
        "\"measured_slices\"",
        "\"original_streams\"",
        "\"compacted_lanes\"",
        "\"slice_groups\"",
        "\"lanes_by_group\"",
        "\"gpu_flow_endpoints_mapped\"",
        "\"gpu_annotations_mapped\"",
        "\"gpu_annotations_coalesced\"",
        "\"kernel_annotations_converted\"",
        "\"kernel_annotation_blocks\"",
        "\"gpu_annotations_retained\"",
        "\"cuda_graph_launches\"",
        "\"pp_rank\"",
        "\"pp_compute_dependency_pairs\"",
        "\"pp_compute_dependency_unmatched\"",
        "\"pp_unshard_compute_pairs\"",
        "\"pp_unshard_compute_unmatched\"",
    ];
    let positions: Vec<usize> = order
        .iter()
        .map(|k| text.find(k).unwrap_or_else(|| panic!("{k} missing")))
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
    assert!(s["compacted_lanes"].as_u64().expect("a count") <= 12);
    let output = dir.path().join("cuda_graph_300_streams_compacted.json");
    assert_eq!(s["output"], output.display().to_string());
    assert!(output.exists());

    let again = run(&[input]);
    assert_eq!(again.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("output already exists"), "{stderr}");
    assert!(stderr.contains("--overwrite"), "{stderr}");
    summary(&run(&[input, Path::new("--overwrite")]));

    let gz = dir.path().join("sub/out.json.gz");
    summary(&run(&[input, Path::new("-o"), &gz]));
    let mut magic = [0u8; 2];
    std::io::Read::read_exact(&mut std::fs::File::open(&gz).expect("written"), &mut magic)
        .expect("two bytes");
    assert_eq!(magic, [0x1f, 0x8b]);
}

#[test]
fn merges_pp_ranks_from_a_directory() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    lanes::synth::write_fixtures(dir.path()).expect("fixtures");
    let set = dir.path().join("pp4");
    let s = summary(&run(&[&set, Path::new("--merge-pp-ranks")]));
    assert_eq!(s["pp_send_recv_unmatched"], 0);
    assert_eq!(s["input"].as_array().map(Vec::len), Some(4));
    assert!(set.join("pp_traces_merged_compacted.json.gz").exists());
    assert_eq!(s["time_offsets_us"]["1"], 12.345);

    let cut = dir.path().join("pp4_cut/rank0_trace.json");
    let s = summary(&run(&[&cut, Path::new("--merge-pp-ranks")]));
    assert!(s["pp_send_recv_unmatched"].as_u64().expect("a count") > 0);
}

#[test]
fn errors_exit_2_with_a_message() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let not_trace = dir.path().join("x.json");
    std::fs::write(&not_trace, "[1, 2]").expect("writable");
    let out = run(&[&not_trace]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("x.json"), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    let out = run(&[dir.path()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("without --merge-pp-ranks"));

    let out = run(&[dir.path(), Path::new("--merge-pp-ranks")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("fewer than two rank traces"));
    assert!(!dir.path().join("x_compacted.json").exists());
}

#[test]
fn committed_fixtures_compact_and_merge() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/lanes");
    let out = tempfile::tempdir().expect("a temporary directory");
    let graph_out = out.path().join("graph.json.gz");
    let s = summary(&run(&[
        &root.join("cuda_graph_300_streams.json"),
        Path::new("-o"),
        &graph_out,
    ]));
    assert!(
        s["original_streams"].as_u64().expect("a count") >= 300,
        "{s}"
    );
    assert!(s["compacted_lanes"].as_u64().expect("a count") <= 12, "{s}");
    for (set, unmatched_is_zero) in [("pp2", true), ("pp4", true), ("pp4_cut", false)] {
        let merged = out.path().join(format!("{set}.json.gz"));
        let s = summary(&run(&[
            &root.join(set),
            Path::new("--merge-pp-ranks"),
            Path::new("-o"),
            &merged,
        ]));
        let unmatched = s["pp_send_recv_unmatched"].as_u64().expect("a count");
        assert_eq!(
            unmatched == 0,
            unmatched_is_zero,
            "{set}: {unmatched} unmatched"
        );
    }
}

/// The `thread_name`s of a written (plain JSON) trace, after any `PP rank N | ` prefix.
fn lane_names(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("the output is written");
    let trace: Value = serde_json::from_str(&text).expect("the output is valid JSON");
    trace["traceEvents"]
        .as_array()
        .expect("traceEvents is a list")
        .iter()
        .filter(|e| e["name"] == "thread_name" && e["ph"] == "M")
        .filter_map(|e| e["args"]["name"].as_str())
        .map(|n| n.rsplit(" | ").next().unwrap_or(n).to_string())
        .collect()
}

/// Whether `name` is a lane (or annotation track) label of the semantic grouping.
fn is_semantic_lane(name: &str) -> bool {
    let name = name.strip_suffix(" annotations").unwrap_or(name);
    let name = name
        .trim_end_matches(|c: char| c.is_ascii_digit())
        .trim_end();
    [
        "GEMM",
        "Convolution",
        "Attention",
        "Elementwise",
        "Reduction",
        "Other kernels",
        "GPU memcpy",
        "GPU memset",
    ]
    .contains(&name)
        || name.starts_with("Communication ")
}

#[test]
fn semantic_lanes_on_committed_fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/lanes");
    let input = root.join("cuda_graph_300_streams.json");
    let out = tempfile::tempdir().expect("a temporary directory");
    let path = |name: &str| out.path().join(name);
    let semantic = [Path::new("--lanes"), Path::new("semantic")];
    let original = [Path::new("--lanes"), Path::new("original")];

    let s = summary(&run(&[&input, Path::new("-o"), &path("plain.json")]));
    summary(&run(&[
        &[&*input, Path::new("-o"), &path("original.json")][..],
        &original,
    ]
    .concat()));
    let s_semantic = summary(&run(&[
        &[&*input, Path::new("-o"), &path("semantic.json")][..],
        &semantic,
    ]
    .concat()));
    let bytes = |name: &str| std::fs::read(path(name)).expect("written");
    assert_eq!(
        bytes("plain.json"),
        bytes("original.json"),
        "the default is --lanes original"
    );
    assert_ne!(bytes("plain.json"), bytes("semantic.json"));

    // The original has its NCCL lane; the semantic grouping names classes only.
    assert!(
        lane_names(&path("plain.json"))
            .iter()
            .any(|n| n == "NCCL all-gather")
    );
    let names = lane_names(&path("semantic.json"));
    assert!(
        names.iter().any(|n| n == "Communication all-gather"),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n == "GPU memcpy"), "{names:?}");
    let capture_streams = names.iter().filter(|n| n.starts_with("stream ")).count();
    assert_eq!(
        capture_streams, 0,
        "old stream names are dropped: {names:?}"
    );
    // Every added name (the CPU thread's is kept) is a semantic lane's.
    let kept = lane_names(&input);
    for n in names.iter().filter(|n| !kept.contains(n)) {
        assert!(is_semantic_lane(n), "{n} is not a semantic lane name");
    }
    assert_eq!(s["measured_slices"], s_semantic["measured_slices"]);
    assert_eq!(
        s_semantic["slice_groups"]["communication_all_gather"],
        s["slice_groups"]["nccl_all_gather"]
    );
    assert!(
        s_semantic["compacted_lanes"].as_u64().expect("a count") <= 16,
        "{s_semantic}"
    );

    // The merge groups each rank the same way, and its PP arrows still find their blocks.
    let set = root.join("pp4");
    let merge = |extra: &[&Path], name: &str| {
        let output = path(name);
        let mut args = vec![
            &*set,
            Path::new("--merge-pp-ranks"),
            Path::new("-o"),
            &output,
        ];
        args.extend_from_slice(extra);
        summary(&run(&args))
    };
    let m_original = merge(&[], "pp4.json");
    let m_semantic = merge(&semantic, "pp4_semantic.json");
    for key in [
        "pp_send_recv_pairs",
        "pp_send_recv_unmatched",
        "pp_compute_dependency_pairs",
        "pp_compute_dependency_unmatched",
        "pp_unshard_compute_pairs",
        "pp_unshard_compute_unmatched",
    ] {
        assert_eq!(m_semantic[key], m_original[key], "{key}");
    }
    assert!(
        m_semantic["pp_compute_dependency_pairs"]
            .as_u64()
            .expect("a count")
            > 0
    );
    assert!(
        m_semantic["pp_unshard_compute_pairs"]
            .as_u64()
            .expect("a count")
            > 0
    );
    let names = lane_names(&path("pp4_semantic.json"));
    assert!(
        names.iter().any(|n| n == "Communication send/recv"),
        "{names:?}"
    );
    assert!(
        names
            .iter()
            .any(|n| n == "Communication all-gather annotations"),
        "{names:?}"
    );
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("Compute") || n.starts_with("NCCL")),
        "{names:?}"
    );
}

#[test]
fn help_explains_both_lane_groupings() {
    let out = Command::new(env!("CARGO_BIN_EXE_compact-cuda-graph-trace"))
        .arg("--help")
        .output()
        .expect("the binary runs");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--lanes <LANES>"), "{help}");
    assert!(
        help.contains("original") && help.contains("semantic"),
        "{help}"
    );
    assert!(help.contains("Communication"), "{help}");
}

/// Every malformed or odd fixture (testdata/*/{err,odd}): no panic, an error names the
/// file and the position, nothing is left behind.
#[test]
fn malformed_inputs_never_panic() {
    let run = test_support::run_on_malformed(
        env!("CARGO_BIN_EXE_compact-cuda-graph-trace"),
        |input, out| vec![input.into(), "-o".into(), out.join("compacted.json").into()],
    );
    eprintln!("compact-cuda-graph-trace: {run:?}");
}

/// The output rules of `output_file`, end to end: with or without --overwrite, a symlink,
/// a directory, a device and the input itself are refused, before any work and with
/// nothing changed; a new output gets the usual permissions.
#[test]
fn refuses_symlink_directory_device_and_the_input() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let written = lanes::synth::write_fixtures(dir.path()).expect("fixtures");
    let input = &written[0];
    let before = std::fs::read(input).expect("the input");
    let refused = |output: &Path, expect: &str| {
        for overwrite in [false, true] {
            let mut args = vec![input.as_path(), Path::new("-o"), output];
            if overwrite {
                args.push(Path::new("--overwrite"));
            }
            let out = run(&args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{}: {stderr}", output.display());
            assert!(stderr.contains(expect), "{}: {stderr}", output.display());
        }
    };
    refused(input, "is the input");
    refused(dir.path(), "is a directory");
    #[cfg(unix)]
    {
        refused(Path::new("/dev/null"), "not a regular file");
        let target = dir.path().join("target.json");
        std::fs::write(&target, b"keep").expect("write");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        refused(&link, "symbolic link");
        assert!(
            std::fs::symlink_metadata(&link)
                .expect("link")
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&target).expect("target"), b"keep");
    }
    assert_eq!(std::fs::read(input).expect("the input"), before);

    let output = dir.path().join("new.json");
    summary(&run(&[input, Path::new("-o"), &output]));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "").expect("plain file");
        assert_eq!(
            mode(&output),
            mode(&plain),
            "an ordinary file's mode, not 0600"
        );
    }
}

/// An XSpace names its format and the tools that read it.
#[test]
fn an_xspace_input_says_which_tool_reads_it() {
    let input = test_support::workspace_root().join("testdata/xplane/ok/small.xplane.pb");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = run(&[&input, Path::new("-o"), &dir.path().join("x.json")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("XSpace protobuf"), "{stderr}");
    assert!(stderr.contains("trace-info"), "{stderr}");
    assert!(std::fs::read_dir(dir.path()).expect("dir").next().is_none());
}

/// `compact-cuda-graph-trace … | head -0`: a closed stdout is the reader stopping, not an error (exit 0,
/// nothing on stderr).
#[test]
fn a_closed_stdout_exits_0_quietly() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let written = lanes::synth::write_fixtures(dir.path()).expect("fixtures");
    test_support::assert_quiet_on_closed_stdout(
        env!("CARGO_BIN_EXE_compact-cuda-graph-trace"),
        &[&written[0]],
    );
}

#[test]
fn a_piped_input_compacts_as_the_file_does() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let written = lanes::synth::write_fixtures(dir.path()).expect("fixtures");
    let plain = &written[0];
    let gz = dir.path().join("input.json.gz");
    summary(&run(&[plain, Path::new("-o"), &gz]));
    for input in [plain.as_path(), gz.as_path()] {
        let from_file = dir.path().join("from_file.json");
        summary(&run(&[
            input,
            Path::new("-o"),
            &from_file,
            Path::new("--overwrite"),
        ]));
        let from_pipe = dir.path().join("from_pipe.json");
        let out = Command::new(env!("CARGO_BIN_EXE_compact-cuda-graph-trace"))
            .args([Path::new("/dev/stdin"), Path::new("-o"), &from_pipe])
            .arg("--overwrite")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                let bytes = std::fs::read(input)?;
                let mut stdin = child.stdin.take().expect("stdin is piped");
                // Written from a thread: the tool may read while we write.
                let feeder =
                    std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &bytes));
                let out = child.wait_with_output()?;
                feeder.join().expect("the feeder does not panic")?;
                Ok(out)
            })
            .expect("the binary runs");
        summary(&out);
        assert_eq!(
            std::fs::read(&from_pipe).expect("written"),
            std::fs::read(&from_file).expect("written"),
            "{}",
            input.display()
        );
    }
}

/// `-o` at every kind of target: the user's files and the input stay byte-identical (an
/// existing file is replaced only with --overwrite), nothing staged is left.
#[test]
fn output_matrix_output() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let written = lanes::synth::write_fixtures(dir.path()).expect("fixtures");
    test_support::output_matrix(
        env!("CARGO_BIN_EXE_compact-cuda-graph-trace"),
        "-o",
        test_support::OutputKind::File,
        &written[0],
        |input, target, overwrite| {
            test_support::with_overwrite(vec![input.into(), "-o".into(), target.into()], overwrite)
        },
    );
}

/// `--help` states the exit statuses (0 ok, 2 bad input or refused output, 3 partial).
#[test]
fn help_names_the_exit_codes() {
    test_support::assert_help_names_exit_codes(env!("CARGO_BIN_EXE_compact-cuda-graph-trace"));
}

/// Decompression bombs end in a clear error naming the file, quickly and without output:
/// the compaction inflates gzip itself and is held to the same cap as every reader.
#[test]
fn decompression_bombs_are_refused() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    for (name, bytes) in [
        ("whitespace.json.gz", test_support::whitespace_bomb()),
        ("string.json.gz", test_support::string_bomb()),
    ] {
        let input = tmp.path().join(name);
        std::fs::write(&input, bytes).expect("write");
        let out = tmp.path().join("out.json.gz");
        let m = test_support::run_measured(
            env!("CARGO_BIN_EXE_compact-cuda-graph-trace"),
            &[
                input.into_os_string(),
                "-o".into(),
                out.clone().into_os_string(),
            ],
            &[],
            std::time::Duration::from_secs(60),
        );
        assert_eq!(m.code, Some(2), "{name}: {m:?}");
        assert!(m.stderr.contains(name), "{name}: {}", m.stderr);
        assert!(
            m.stderr.contains("TRACEWISE_MAX_INFLATE_RATIO"),
            "{name}: {}",
            m.stderr
        );
        assert!(
            m.busy().as_secs_f64() < 10.0,
            "{name}: {:?} wall, {:?} CPU",
            m.elapsed,
            m.cpu
        );
        assert!(m.peak_kib < 1 << 20, "{name}: {} KiB", m.peak_kib);
        assert!(!out.exists());
    }
}
