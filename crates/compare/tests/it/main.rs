//! The comparison on synthetic pairs whose answers follow from how they were made, and
//! on every shared capture against itself.

use std::path::{Path, PathBuf};

use compare::{CauseKey, Change, Comparison, Config, NotComparable, Outcome, Presence, Which};
use trace_model::Nanos;

/// How a synthetic capture is made: `steps` steps of `220 + host_wait` µs, each with a
/// GEMM (launched at the step's start, running 10–110 µs into it) and an elementwise
/// kernel launched `host_wait - 10` µs after the GEMM ends (so the stream idles
/// `host_wait` µs waiting for the host) and running 100 µs; the step ends 10 µs later.
struct Synthetic {
    steps: usize,
    host_wait_us: i64,
    gpu: &'static str,
}

impl Synthetic {
    fn step_us(&self) -> i64 {
        220 + self.host_wait_us
    }

    fn json(&self) -> String {
        let mut events = vec![
            r#"{"name": "process_name", "ph": "M", "ts": 0, "pid": 10, "tid": 0, "args": {"name": "python3"}}"#.to_owned(),
            r#"{"name": "process_name", "ph": "M", "ts": 0, "pid": 0, "tid": 0, "args": {"name": "GPU 0"}}"#.to_owned(),
        ];
        let mut x = |cat: &str, name: &str, pid: i64, tid: i64, ts: i64, dur: i64, args: String| {
            events.push(format!(
                r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": {pid}, "tid": {tid}, "ts": {ts}, "dur": {dur}, "args": {{{args}}}}}"#
            ));
        };
        for i in 0..self.steps as i64 {
            let t = 1000 + i * self.step_us();
            let b = t + 100 + self.host_wait_us;
            x(
                "user_annotation",
                &format!("ProfilerStep#{i}"),
                10,
                11,
                t,
                self.step_us(),
                String::new(),
            );
            for (op, kernel, at, corr) in [
                (
                    "aten::mm",
                    "void ampere_sgemm_128x64_nn<float, 4>(float*, int)",
                    t,
                    2 * i + 1,
                ),
                (
                    "aten::add",
                    "void at::native::vectorized_elementwise_kernel<4, float>(int)",
                    b,
                    2 * i + 2,
                ),
            ] {
                x("cpu_op", op, 10, 11, at, 6, String::new());
                x(
                    "cuda_runtime",
                    "cudaLaunchKernel",
                    10,
                    11,
                    at,
                    5,
                    format!(r#""correlation": {corr}"#),
                );
                x(
                    "kernel",
                    kernel,
                    0,
                    7,
                    at + 10,
                    100,
                    format!(r#""device": 0, "stream": 7, "correlation": {corr}"#),
                );
            }
        }
        format!(
            "{{\"schemaVersion\": 1, \"deviceProperties\": [{{\"id\": 0, \"name\": \"{}\"}}],\n\"traceEvents\": [\n{}\n]}}\n",
            self.gpu,
            events.join(",\n")
        )
    }

    fn write(&self, dir: &Path, name: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, self.json()).expect("write the synthetic trace");
        path
    }
}

const H100: &str = "NVIDIA H100 80GB HBM3";

fn run(before: &Synthetic, after: &Synthetic) -> Comparison {
    let dir = tempfile::tempdir().expect("tempdir");
    let b = before.write(dir.path(), "before.json");
    let a = after.write(dir.path(), "after.json");
    compare::compare(&b, &a, &Config::default()).expect("compares")
}

fn us(n: i64) -> Nanos {
    Nanos(n * 1000)
}

fn cause(c: &Comparison, key: CauseKey) -> &compare::CauseRow {
    c.causes
        .iter()
        .find(|r| r.key == key)
        .unwrap_or_else(|| panic!("no cause {key:?} in {:?}", c.causes))
}

fn assert_no_change_anywhere(c: &Comparison, what: &str) {
    assert_eq!(c.step_time.change, Change::None, "{what}: step time");
    assert_eq!(c.step_time.delta, Nanos::ZERO, "{what}");
    for r in &c.budgets {
        assert_eq!(r.change, Change::None, "{what}: {:?}", r.key);
        assert_eq!(r.delta, Nanos::ZERO, "{what}: {:?}", r.key);
    }
    for r in &c.classes {
        assert_eq!(r.change, Change::None, "{what}: {}", r.key);
        assert_eq!(r.delta, Nanos::ZERO, "{what}: {}", r.key);
    }
    assert!(c.op_kernels.is_empty(), "{what}: {:?}", c.op_kernels);
    for k in c.kernels.iter().chain(&c.ops).chain(&c.python_lines) {
        assert_eq!(k.row.change, Change::None, "{what}: {}", k.row.key);
        assert_eq!(k.presence, Presence::Both, "{what}: {}", k.row.key);
        assert_eq!(k.count[0], k.count[1], "{what}: {}", k.row.key);
        assert_eq!(k.total[0], k.total[1], "{what}: {}", k.row.key);
    }
    for r in &c.first_step_names {
        assert_eq!(r.count[0], r.count[1], "{what}: first step {}", r.name);
        assert_eq!(
            r.total_us[0], r.total_us[1],
            "{what}: first step {}",
            r.name
        );
    }
    assert_eq!(c.realized_gain, Nanos::ZERO, "{what}");
    for r in &c.causes {
        assert_eq!(r.after, Some(r.predicted_gain), "{what}: {:?}", r.key);
    }
}

#[test]
fn a_capture_against_itself_changes_nothing() {
    let s = Synthetic {
        steps: 5,
        host_wait_us: 1000,
        gpu: H100,
    };
    let c = run(&s, &s);
    assert_eq!(c.verdict, Outcome::NoChange);
    assert_no_change_anywhere(&c, "synthetic");
    assert_eq!(c.step_time.before.median, us(s.step_us()));
    assert_eq!(c.step_time.before.samples, 5);
    // Two kernels and two ops, matched by their normalised names.
    let names: Vec<&str> = c.kernels.iter().map(|k| k.row.key.as_str()).collect();
    assert_eq!(
        names,
        [
            "ampere_sgemm_128x64_nn",
            "at::native::vectorized_elementwise_kernel"
        ]
    );
    assert_eq!(c.ops.len(), 2);
    assert!(c.kernels.iter().all(|k| k.count == [5, 5]));
    // Nothing changed, so no prediction was made for a change: no ratio (the step's
    // change is never divided by the prediction of a cause that did not move).
    let host = cause(&c, CauseKey::Host(analysis::HostCause::NothingRecorded));
    assert_eq!(host.cause_change, Some(Nanos::ZERO));
    assert_eq!(host.predicted_for_change, None);
    assert_eq!(host.realized_share, None);
    let md = report::markdown::render(&report::compare::document(&c));
    assert!(md.contains("Verdict: no change beyond noise."), "{md}");
}

#[test]
fn halving_the_host_wait_realizes_the_hand_computed_share() {
    let h = 1000;
    let before = Synthetic {
        steps: 5,
        host_wait_us: h,
        gpu: H100,
    };
    let after = Synthetic {
        steps: 5,
        host_wait_us: h / 2,
        gpu: H100,
    };
    let c = run(&before, &after);
    assert_eq!(c.verdict, Outcome::Faster);
    // Each side's verdict is its diagnosis, not the launch-overhead verdict: the GPU
    // waits for a host that records nothing.
    for side in [&c.before, &c.after] {
        assert_eq!(
            side.diagnosis,
            Some(analysis::Diagnosis::HostBound {
                cause: analysis::HostCause::NothingRecorded
            })
        );
    }
    // Every step is alike: the median step is the step.
    assert_eq!(c.step_time.before.median, us(220 + h));
    assert_eq!(c.step_time.after.median, us(220 + h / 2));
    assert_eq!(c.step_time.change, Change::Lower);
    assert_eq!(c.realized_gain, us(h / 2));
    // Predicted: the critical stream waits for the host, per step, 10 µs before the GEMM
    // (launch at the step's start, start 10 µs later) and 10 µs after the elementwise
    // kernel until the step ends (the next step's launch, or the last step's open host
    // range): 20 µs of launch overhead; and the host wait itself, h, with nothing recorded
    // on the launching thread.
    let host = cause(&c, CauseKey::Host(analysis::HostCause::NothingRecorded));
    assert_eq!(host.predicted_gain, us(h));
    assert_eq!(host.after, Some(us(h / 2)));
    // The replay of the before capture without its host gaps predicts the whole wait
    // (and the few µs of other host gaps); half of the wait went, so the prediction for
    // that change is half the replayed gain, within 5 % of the realized h/2.
    let replayed = host.replayed_gain.expect("replayed");
    assert!(replayed >= us(h) && replayed <= us(h + 30), "{replayed:?}");
    assert_eq!(host.replay_error, Some(0.0));
    assert_eq!(host.cause_change, Some(us(h / 2)));
    let share = host.realized_share.expect("a share");
    assert!((share - 1.0).abs() <= 0.05, "{share} vs 1");
    assert_eq!(
        c.moved_most,
        Some((
            CauseKey::Host(analysis::HostCause::NothingRecorded),
            us(h),
            us(h / 2)
        ))
    );
    let launch = cause(&c, CauseKey::Host(analysis::HostCause::LaunchOverhead));
    assert_eq!(launch.predicted_gain, us(20));
    assert_eq!(launch.after, Some(us(20)));
    // The leading cause is the same, smaller.
    assert_eq!(
        c.leading_after,
        Some((
            CauseKey::Host(analysis::HostCause::NothingRecorded),
            us(h / 2)
        ))
    );
    // The kernels did not change; the idle part of the stream's budget did, by h/2.
    for k in &c.kernels {
        assert_eq!(k.row.change, Change::None, "{}", k.row.key);
    }
    let stream_7 = |part| compare::StreamPart {
        rank: None,
        gpu: 0,
        stream: [Some(7), Some(7)],
        part,
    };
    let idle = c
        .budgets
        .iter()
        .find(|r| r.key == stream_7("idle"))
        .expect("idle row");
    assert_eq!(idle.delta, us(-h / 2));
    assert_eq!(idle.change, Change::Lower);
    let compute = c
        .budgets
        .iter()
        .find(|r| r.key == stream_7("compute"))
        .expect("compute row");
    assert_eq!(
        (compute.before.median, compute.change),
        (us(200), Change::None)
    );
    let doc = report::compare::document(&c);
    let md = report::markdown::render(&doc);
    assert!(md.contains("Verdict: faster."), "{md}");
    assert!(md.contains("gap:host-not-launched"), "{md}");
    // The median steps, before above after on one axis, and the budget deltas as bars: the
    // idle part went down (a bar to the left, green), compute did not move (no bar).
    let svgs: Vec<&str> = doc
        .sections
        .iter()
        .flat_map(|s| &s.blocks)
        .filter_map(|b| match b {
            report::Block::Svg { svg, .. } => Some(svg.as_str()),
            _ => None,
        })
        .collect();
    let lanes = svgs
        .iter()
        .find(|s| s.contains("swimlanes"))
        .expect("swimlanes");
    let (b, a) = (
        lanes.find("before #2 GPU 0 stream 7"),
        lanes.find("after #2 GPU 0 stream 7"),
    );
    assert!(b.is_some() && a.is_some() && b < a, "{lanes}");
    let bars = svgs
        .iter()
        .find(|s| s.contains("budget-deltas"))
        .expect("a bar chart");
    assert!(
        bars.contains("GPU #0 stream 7: idle: −500.00 µs (lower)"),
        "{bars}"
    );
    assert!(!bars.contains("stream 7: compute"), "{bars}");
}

#[test]
fn different_gpus_are_inconclusive_and_say_why() {
    let before = Synthetic {
        steps: 5,
        host_wait_us: 1000,
        gpu: H100,
    };
    let after = Synthetic {
        steps: 5,
        host_wait_us: 500,
        gpu: "AMD Instinct MI300X",
    };
    let c = run(&before, &after);
    let Outcome::Inconclusive(reasons) = &c.verdict else {
        panic!("{:?}", c.verdict)
    };
    assert_eq!(
        reasons,
        &[NotComparable::GpuModels {
            before: vec![H100.to_owned()],
            after: vec!["AMD Instinct MI300X".to_owned()],
        }]
    );
    // The rows are still there; no share of a prediction is claimed.
    assert_eq!(c.step_time.change, Change::Lower);
    assert!(c.causes.iter().all(|r| r.realized_share.is_none()));
}

#[test]
fn too_few_steps_are_inconclusive() {
    let before = Synthetic {
        steps: 2,
        host_wait_us: 1000,
        gpu: H100,
    };
    let c = run(&before, &before);
    let Outcome::Inconclusive(reasons) = &c.verdict else {
        panic!("{:?}", c.verdict)
    };
    assert!(
        reasons.contains(&NotComparable::TooFewSteps {
            side: Which::Before,
            steps: 2,
            needed: 3,
        }),
        "{reasons:?}"
    );
}

#[test]
fn a_renamed_kernel_of_the_same_class_and_time_is_found() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Synthetic {
        steps: 5,
        host_wait_us: 1000,
        gpu: H100,
    };
    let b = s.write(dir.path(), "before.json");
    let a = dir.path().join("after.json");
    std::fs::write(
        &a,
        s.json()
            .replace("ampere_sgemm_128x64_nn", "sm90_xmma_gemm_f32f32_tf32f32"),
    )
    .expect("write");
    let c = compare::compare(&b, &a, &Config::default()).expect("compares");
    let gemm = c
        .kernels
        .iter()
        .find(|k| k.row.key == "ampere_sgemm_128x64_nn")
        .expect("row");
    assert_eq!(
        gemm.presence,
        Presence::RenamedTo("sm90_xmma_gemm_f32f32_tf32f32".to_owned())
    );
    assert_eq!(gemm.row.change, Change::None);
    assert_eq!(c.kernels.len(), 2, "{:?}", c.kernels);
    assert_eq!(c.verdict, Outcome::NoChange);
}

#[test]
fn a_renumbered_stream_is_the_same_row() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Synthetic {
        steps: 5,
        host_wait_us: 1000,
        gpu: H100,
    };
    let b = s.write(dir.path(), "before.json");
    let a = dir.path().join("after.json");
    let renumbered = s
        .json()
        .replace("\"tid\": 7,", "\"tid\": 9,")
        .replace("\"stream\": 7,", "\"stream\": 9,");
    std::fs::write(&a, renumbered).expect("write");
    let c = compare::compare(&b, &a, &Config::default()).expect("compares");
    let keys: Vec<(usize, [Option<i64>; 2], &str)> = c
        .budgets
        .iter()
        .map(|r| (r.key.gpu, r.key.stream, r.key.part))
        .collect();
    assert_eq!(
        keys,
        [
            (0, [Some(7), Some(9)], "compute"),
            (0, [Some(7), Some(9)], "idle")
        ]
    );
    assert!(c.budgets.iter().all(|r| r.change == Change::None));
    assert_eq!(c.verdict, Outcome::NoChange);
}

/// H100 against MI300X, the same model: not comparable (two GPU models, of two vendors:
/// the MI300X capture's device is read from its device properties), and the attention and
/// elementwise kernels each replaced by the other vendor's one.
#[test]
fn h100_against_mi300x_names_the_kernel_renames() {
    let Some(root) = test_support::traces_dir("h100_against_mi300x_names_the_kernel_renames")
    else {
        return;
    };
    let base = root.join("pytorch/tracelens-h100-qwen");
    let c = compare::compare(&base.join("h100"), &base.join("mi300"), &Config::default())
        .expect("compares");
    let Outcome::Inconclusive(reasons) = &c.verdict else {
        panic!("{:?}", c.verdict)
    };
    assert!(
        reasons
            .iter()
            .any(|r| matches!(r, NotComparable::GpuModels { before, after }
            if before.iter().any(|m| m.contains("NVIDIA H100"))
                && after.iter().any(|m| m.contains("AMD Instinct MI300X")))),
        "{reasons:?}"
    );
    let renamed = |from: &str| {
        c.kernels
            .iter()
            .find(|k| k.row.key == from)
            .map(|k| k.presence.clone())
    };
    assert_eq!(
        renamed("pytorch_flash::flash_fwd_kernel"),
        Some(Presence::RenamedTo("attn_fwd".to_owned()))
    );
    assert_eq!(
        renamed("at::native::unrolled_elementwise_kernel"),
        Some(Presence::RenamedTo(
            "at::native::elementwise_kernel_manual_unroll".to_owned()
        ))
    );
    // GEMMs: cuBLAS/CUTLASS before, hipBLASLt (Cijk_…) after, never paired by name.
    assert!(c.kernels.iter().any(|k| k.class == "gemm"
        && k.presence == Presence::Added
        && k.row.key.starts_with("Cijk_")));
}

/// The kernel names of one side of a TraceLens `kernel_details__summarize_kernel_stats`
/// cell (a Python list of dicts), GPU kernels only (memsets and copies left out).
fn tracelens_kernels(cell: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for part in cell.split("{'name': ").skip(1) {
        let quote = part.chars().next().expect("a quoted name");
        let name = &part[1..part[1..].find(quote).expect("the closing quote") + 1];
        let count = part
            .split("'count': ")
            .nth(1)
            .and_then(|c| c.split([',', '}']).next())
            .and_then(|c| c.trim().parse().ok())
            .expect("a count");
        if !name.starts_with("Memset") && !name.starts_with("Memcpy") {
            out.push((compare::normalise_kernel_name(name), count));
        }
    }
    out.sort();
    out
}

/// H100 against MI300X by op and shapes, against TraceLens's own comparison of the two
/// captures (`compare_h100_mi300_qwen_csvs`): every GEMM and SDPA row it found on both
/// sides is one op row here, with its instances on each side, and the kernels each
/// side's instances launched (cuBLAS/CUTLASS → hipBLASLt `Cijk_…`, FlashAttention →
/// the CK/Triton `attn_fwd`) equal TraceLens's.
#[test]
fn h100_against_mi300x_matches_tracelens_gemm_and_sdpa_rows_by_shape() {
    let Some(root) = test_support::traces_dir(
        "h100_against_mi300x_matches_tracelens_gemm_and_sdpa_rows_by_shape",
    ) else {
        return;
    };
    let base = root.join("pytorch/tracelens-h100-qwen");
    let c = compare::compare(&base.join("h100"), &base.join("mi300"), &Config::default())
        .expect("compares");
    let reference = base.join("reference/compare_h100_mi300_qwen_csvs");
    let mut checked = 0;
    for table in ["GEMM", "SDPA_fwd"] {
        let path = reference.join(format!("{table}_intersect_mi300.csv"));
        let mut rdr = csv::Reader::from_path(&path).expect("the TraceLens CSV");
        let headers = rdr.headers().expect("a header").clone();
        let col = |name: &str| {
            headers
                .iter()
                .position(|h| h == name)
                .unwrap_or_else(|| panic!("{}: no column {name}", path.display()))
        };
        let (name, dims) = (col("name"), col("h100::Input Dims_first"));
        let counts = [col("h100::name_count"), col("mi300::name_count")];
        let kernels = [
            col("h100::kernel_details__summarize_kernel_stats"),
            col("mi300::kernel_details__summarize_kernel_stats"),
        ];
        for rec in rdr.records() {
            let rec = rec.expect("a CSV row");
            let key = compare::OpKey {
                name: rec[name].to_owned(),
                dims: Some(rec[dims].chars().filter(|c| !c.is_whitespace()).collect()),
            };
            let what = format!("{table}: {key}");
            let row = c
                .ops
                .iter()
                .find(|r| r.row.key == key.to_string())
                .unwrap_or_else(|| panic!("{what}: no op row"));
            assert_eq!(row.presence, Presence::Both, "{what}");
            let want = counts.map(|i| rec[i].parse::<u64>().expect("a count"));
            assert_eq!(row.count, want, "{what}");
            for (side, (s, cell)) in [&c.before, &c.after].into_iter().zip(kernels).enumerate() {
                let mut ours: Vec<(String, u64)> = s
                    .op_kernels
                    .get(&key)
                    .unwrap_or_else(|| panic!("{what}: no kernels on side {side}"))
                    .iter()
                    .map(|(k, u)| (k.clone(), u.count))
                    .collect();
                ours.sort();
                assert_eq!(ours, tracelens_kernels(&rec[cell]), "{what}, side {side}");
            }
            checked += 1;
        }
    }
    assert_eq!(
        checked, 6,
        "TraceLens found 5 GEMM and 1 SDPA rows on both sides"
    );
    // The replacements, each with its op and shapes as evidence (the outermost op that
    // launched exactly those kernels: `aten::linear` around `aten::mm`).
    let replaced = |before: &str, after: &str| {
        c.op_kernels.iter().any(|r| {
            r.kernels[0].iter().any(|k| k.0.starts_with(before))
                && r.kernels[1].iter().any(|k| k.0.starts_with(after))
        })
    };
    assert!(replaced("sm90_xmma_gemm_", "Cijk_"), "{:#?}", c.op_kernels);
    assert!(
        replaced("pytorch_flash::flash_fwd_kernel", "attn_fwd"),
        "{:#?}",
        c.op_kernels
    );
}

/// Every shared capture: Kineto files, complete rank folders, JAX captures (JSON, XSpace
/// and directory), and the Nsight Systems and ROCm captures with GPU work.
fn shared_inputs(root: &Path) -> Vec<PathBuf> {
    let set = test_support::RealTraces::read(root);
    let mut inputs: Vec<PathBuf> = set.kineto.iter().map(|t| t.path.clone()).collect();
    inputs.extend(set.rank_dirs());
    for x in &set.xspaces {
        inputs.push(x.json.clone());
        inputs.push(x.path.clone());
        inputs.push(x.dir().to_path_buf());
    }
    for rel in [
        "nsys/nvfuser-h200-matmul/report1.sqlite",
        "nsys/nvfuser-8xh100-matmul/report2.sqlite",
        "nsys/nsys-ai-rtx3080-torch-zeros/mock.sqlite",
        "nsys/pipit-cloverleaf-a100",
        "nsys/pipit-saxpy-mpi-a100/saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
        "rocprof/rocprofv1-stencil-mi250x",
        "rocprof/rocprofv3-csv-llamacpp-gfx1151",
        "rocprof/rocprofv3-doc-csv/kernel_trace.csv",
    ] {
        inputs.push(root.join(rel));
    }
    inputs.sort();
    inputs
}

#[test]
fn every_shared_capture_against_itself_changes_nothing() {
    let Some(root) =
        test_support::traces_dir("every_shared_capture_against_itself_changes_nothing")
    else {
        return;
    };
    let inputs = shared_inputs(&root);
    assert!(inputs.len() >= 30, "{} inputs", inputs.len());
    let (mut kernel_rows, mut line_rows) = (0, 0);
    for input in &inputs {
        let what = input.display().to_string();
        let c = compare::compare(input, input, &Config::default())
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_no_change_anywhere(&c, &what);
        match &c.verdict {
            Outcome::NoChange => {}
            // Only the step count may make a capture not comparable with itself.
            Outcome::Inconclusive(reasons) => assert!(
                reasons.iter().all(|r| matches!(
                    r,
                    NotComparable::NoSteps { .. } | NotComparable::TooFewSteps { .. }
                )),
                "{what}: {reasons:?}"
            ),
            v => panic!("{what}: {v:?}"),
        }
        assert_eq!(c.kernel_overlap, [1.0, 1.0], "{what}");
        assert_reports_compare_as_captures(input, &c, &what);
        kernel_rows += c.kernels.len();
        line_rows += c.python_lines.len();
    }
    assert!(
        kernel_rows > 100,
        "{kernel_rows} kernel rows over all captures"
    );
    assert!(
        line_rows > 100,
        "{line_rows} Python line rows over all captures"
    );
}

/// The capture's report.json against itself gives the comparison `from_captures` (the
/// capture against itself) gives of what a report holds: the step-time row, verdict and
/// realized gain, each side's step figures, GPUs and causes by key, and every cause row.
fn assert_reports_compare_as_captures(input: &Path, from_captures: &Comparison, what: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = investigate_report(input, dir.path());
    let from_reports = compare::compare(&json, &json, &Config::default())
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let c = from_captures;
    assert!(
        from_reports.before.from_report && !c.before.from_report,
        "{what}"
    );
    assert_eq!(from_reports.step_time, c.step_time, "{what}");
    assert_eq!(from_reports.verdict, c.verdict, "{what}");
    assert_eq!(from_reports.realized_gain, c.realized_gain, "{what}");
    assert_eq!(from_reports.causes, c.causes, "{what}");
    assert_eq!(from_reports.moved_most, c.moved_most, "{what}");
    assert_eq!(from_reports.leading_after, c.leading_after, "{what}");
    for (r, s) in [
        (&from_reports.before, &c.before),
        (&from_reports.after, &c.after),
    ] {
        assert_eq!(r.step_time, s.step_time, "{what}");
        assert_eq!(r.mean_step, s.mean_step, "{what}");
        assert_eq!(r.causes, s.causes, "{what}");
        assert_eq!(r.replays, s.replays, "{what}");
        assert_eq!(
            (&r.gpu_models, &r.gpu_vendors, r.devices, r.captures),
            (&s.gpu_models, &s.gpu_vendors, s.devices, s.captures),
            "{what}"
        );
        assert_eq!(
            (&r.step_origin, r.has_steps, r.steady_steps),
            (&s.step_origin, s.has_steps, s.steady_steps),
            "{what}"
        );
        // The one verdict word: the diagnosis, the same from a capture or its report.
        assert!(s.diagnosis.is_some(), "{what}");
        assert_eq!(r.diagnosis, s.diagnosis, "{what}");
    }
}

/// One row of HTA's `compare_traces` output.
#[derive(Debug, PartialEq)]
struct HtaRow {
    control: (u64, i64),
    test: (u64, i64),
}

fn read_hta_reference() -> std::collections::BTreeMap<String, HtaRow> {
    let path =
        test_support::workspace_root().join("testdata/compare/hta-trace-diff/compare_traces.csv");
    let text = std::fs::read_to_string(&path).expect("the HTA reference");
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    let mut out = std::collections::BTreeMap::new();
    for rec in rdr.records() {
        let rec = rec.expect("a CSV row");
        let num = |i: usize| rec[i].parse::<f64>().expect("a number");
        out.insert(
            rec[0].to_owned(),
            HtaRow {
                control: (num(1) as u64, num(2) as i64),
                test: (num(3) as u64, num(4) as i64),
            },
        );
    }
    out
}

#[test]
fn first_step_names_equal_hta_trace_diff() {
    let Some(root) = test_support::traces_dir("first_step_names_equal_hta_trace_diff") else {
        return;
    };
    let reference = read_hta_reference();
    assert!(reference.len() > 400, "{} rows", reference.len());
    let base = root.join("pytorch/hta-trace-diff");
    let side = |dir: &str| {
        let loaded = load::load(&base.join(dir)).expect("loads");
        // HTA's default: the lowest rank, the lowest ProfilerStep number.
        let first = loaded.iter().min_by_key(|l| l.rank).expect("a capture");
        let step = first
            .capture
            .steps()
            .iter()
            .map(|s| s.number)
            .min()
            .expect("a step");
        compare::names_in_step(&first.capture, step).expect("the step")
    };
    let (control, test) = (side("control"), side("test"));
    assert!(
        control.len() > 250 && test.len() > 250,
        "{} and {} names",
        control.len(),
        test.len()
    );
    let mut names: Vec<&String> = control.keys().chain(test.keys()).collect();
    names.sort();
    names.dedup();
    let mut wrong = Vec::new();
    for name in &names {
        let get = |m: &std::collections::BTreeMap<String, compare::NameTotals>| {
            m.get(*name).map_or((0, 0), |t| (t.count, t.total_us))
        };
        let ours = HtaRow {
            control: get(&control),
            test: get(&test),
        };
        match reference.get(*name) {
            Some(r) if *r == ours => {}
            r => wrong.push(format!("{name}: ours {ours:?}, HTA {r:?}")),
        }
    }
    for name in reference.keys() {
        if !names.contains(&name) {
            wrong.push(format!("{name}: only in HTA"));
        }
    }
    // The comparison's own first-step table, over the same inputs, says the same.
    let c = compare::compare(
        &base.join("control"),
        &base.join("test"),
        &Config::default(),
    )
    .expect("compares");
    assert_eq!(c.first_step_names.len(), reference.len());
    for r in &c.first_step_names {
        let ours = HtaRow {
            control: (r.count[0], r.total_us[0]),
            test: (r.count[1], r.total_us[1]),
        };
        if reference.get(&r.name) != Some(&ours) {
            wrong.push(format!("comparison row {}: {ours:?}", r.name));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} names differ:\n{}",
        wrong.len(),
        reference.len(),
        wrong.join("\n")
    );
}

/// The report.json investigate writes for `input`, into the test's own `dir` (a test
/// input, not a tool output).
fn investigate_report(input: &Path, dir: &Path) -> PathBuf {
    let run = investigation::investigate(input, &Default::default()).expect("investigates");
    let name = format!(
        "{}.report.json",
        input.file_name().expect("a name").to_string_lossy()
    );
    let path = dir.join(name);
    std::fs::write(&path, report::report_json::write(&run.investigation)).expect("write");
    path
}

/// Two synthetic captures of 5 steps, the host wait cut from 1000 to 400 µs per step.
fn host_wait_cut(dir: &Path) -> (PathBuf, PathBuf) {
    let side = |host_wait_us, name| {
        Synthetic {
            steps: 5,
            host_wait_us,
            gpu: H100,
        }
        .write(dir, name)
    };
    (side(1000, "before.json"), side(400, "after.json"))
}

/// An investigate report.json as the before side: the step figures and the causes it
/// states give the comparison the capture gives (the same step-time row, verdict,
/// predictions and realized shares), and the tables that need the capture are left empty.
#[test]
fn a_report_json_side_predicts_what_its_capture_predicts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (before, after) = host_wait_cut(dir.path());
    let report_json = investigate_report(&before, dir.path());

    let from_capture = compare::compare(&before, &after, &Config::default()).expect("compares");
    let from_report = compare::compare(&report_json, &after, &Config::default()).expect("compares");
    assert!(from_report.before.from_report);
    assert_eq!(from_report.step_time, from_capture.step_time);
    assert_eq!(from_report.verdict, Outcome::Faster);
    assert_eq!(from_report.verdict, from_capture.verdict);
    assert_eq!(from_report.realized_gain, from_capture.realized_gain);
    let nonzero = |c: &Comparison| -> Vec<compare::CauseRow> {
        c.causes
            .iter()
            .filter(|r| r.predicted_gain.0 > 0)
            .cloned()
            .collect()
    };
    assert_eq!(nonzero(&from_report), nonzero(&from_capture));
    assert!(!nonzero(&from_report).is_empty());
    assert!(from_report.kernels.is_empty() && from_report.budgets.is_empty());

    // A rendered document (compare's own JSON, schema 1), and a report of this schema
    // without its captures: errors that say so.
    let other = dir.path().join("other.json");
    std::fs::write(
        &other,
        r#"{"schema": 1, "title": "Comparison of a and b", "sections": []}"#,
    )
    .expect("write");
    let e = compare::compare(&other, &after, &Config::default()).expect_err("refused");
    assert!(e.to_string().contains("report.json schema 1"), "{e}");
    let old = dir.path().join("old.json");
    std::fs::write(
        &old,
        format!(
            r#"{{"schema": {}, "title": "Investigation of x"}}"#,
            investigation::SCHEMA
        ),
    )
    .expect("write");
    let e = compare::compare(&old, &after, &Config::default()).expect_err("refused");
    assert!(e.to_string().starts_with("before: "), "{e}");
    assert!(e.to_string().contains("missing field"), "{e}");
}

/// Two captures and their two report.json files give the same comparison of what a
/// report holds: the step-time row (the same samples, so the same noise rule), the
/// verdict, the realized gain, and every cause, matched by key, with its predicted gain,
/// its time after and its realized share.
#[test]
fn two_report_json_files_compare_as_their_captures() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (before, after) = host_wait_cut(dir.path());
    let (before_json, after_json) = (
        investigate_report(&before, dir.path()),
        investigate_report(&after, dir.path()),
    );
    let from_captures = compare::compare(&before, &after, &Config::default()).expect("compares");
    let from_reports =
        compare::compare(&before_json, &after_json, &Config::default()).expect("compares");
    assert!(from_reports.before.from_report && from_reports.after.from_report);
    assert_eq!(from_reports.step_time, from_captures.step_time);
    assert_eq!(from_reports.verdict, from_captures.verdict);
    assert_eq!(from_reports.verdict, Outcome::Faster);
    assert_eq!(from_reports.realized_gain, from_captures.realized_gain);
    assert_eq!(from_reports.causes, from_captures.causes);
    assert!(!from_reports.causes.is_empty());
    assert_eq!(from_reports.leading_after, from_captures.leading_after);
    assert_eq!(from_reports.before.causes, from_captures.before.causes);
    assert_eq!(from_reports.after.causes, from_captures.after.causes);
    assert_eq!(
        from_reports.before.gpu_models,
        from_captures.before.gpu_models
    );
}

/// A rank directory's report.json against the directory: the pooled steps row of the
/// report gives the directory's step-time row, and the same GPUs (no change, comparable
/// apart from the step count).
#[test]
fn a_rank_directory_report_reads_back_its_pooled_steps() {
    let Some(root) =
        test_support::traces_dir("a_rank_directory_report_reads_back_its_pooled_steps")
    else {
        return;
    };
    let input = root.join("pytorch/param-dlrm-8rank");
    let dir = tempfile::tempdir().expect("tempdir");
    let report_json = investigate_report(&input, dir.path());
    let from_capture = compare::compare(&input, &input, &Config::default()).expect("compares");
    let from_report = compare::compare(&report_json, &input, &Config::default()).expect("compares");
    assert_eq!(from_report.step_time, from_capture.step_time);
    assert_eq!(
        from_report.before.gpu_models,
        from_capture.before.gpu_models
    );
    assert_eq!(from_report.before.devices, 8);
    assert_eq!(from_report.verdict, from_capture.verdict);
}

/// A pair made by removing one cause (the host wait between the two launches): the
/// before capture's replay without its host gaps predicts the realized step gain within
/// 5 %, and that cause is the headline.
#[test]
fn removing_one_cause_is_predicted_within_five_percent() {
    let h = 1000;
    let before = Synthetic {
        steps: 5,
        host_wait_us: h,
        gpu: H100,
    };
    let after = Synthetic {
        steps: 5,
        host_wait_us: 0,
        gpu: H100,
    };
    let c = run(&before, &after);
    assert_eq!(c.verdict, Outcome::Faster);
    assert_eq!(c.realized_gain, us(h));
    let key = CauseKey::Host(analysis::HostCause::NothingRecorded);
    let host = cause(&c, key);
    // 10 µs of it stay: the second launch is 10 µs after the first kernel's launch.
    assert_eq!(host.after, Some(us(10)));
    let predicted = host.predicted_for_change.expect("a prediction");
    let replayed = host.replayed_gain.expect("replayed");
    assert_eq!(
        predicted,
        Nanos((replayed.0 as f64 * (h - 10) as f64 / h as f64).round() as i64),
        "the replayed gain for the 99 % of the cause that went"
    );
    let off = (predicted.0 - c.realized_gain.0).abs() as f64 / c.realized_gain.0 as f64;
    assert!(
        off <= 0.05,
        "predicted {predicted:?}, realized {:?}",
        c.realized_gain
    );
    assert_eq!(c.moved_most.map(|m| m.0), Some(key));
    // Only the cause that moved gets a ratio.
    for r in c.causes.iter().filter(|r| r.key != key) {
        assert_eq!(r.realized_share, None, "{:?}", r.key);
    }
    let md = report::markdown::render(&report::compare::document(&c));
    assert!(md.contains("The cause that moved most"), "{md}");
}

/// A side with `steps` steady-state steps of 1 ms marked by `origin`, on one GPU.
fn side_of(
    name: &str,
    origin: &analysis::StepOrigin,
    steps: usize,
    models: &[&str],
    vendors: &[&str],
) -> compare::Side {
    let mut s = compare::Side::empty(Path::new(name));
    s.step_origin = Some(investigation::StepsOrigin {
        origin: origin.clone(),
        per_gpu: None,
    });
    s.has_steps = true;
    s.steady_steps = steps;
    s.step_time = vec![us(1000); steps];
    s.devices = 1;
    s.captures = 1;
    s.gpu_models = models.iter().map(|m| (*m).to_owned()).collect();
    s.gpu_vendors = vendors.iter().map(|v| (*v).to_owned()).collect();
    s
}

/// A per-layer window (a repeated top-level annotation of each layer, many "steps")
/// against a per-step one (ProfilerStep): not the same work, inconclusive with both
/// reasons.
#[test]
fn a_per_layer_window_against_a_per_step_one_is_inconclusive() {
    let per_step = analysis::StepOrigin::ProfilerStep;
    let per_layer = analysis::StepOrigin::RepeatedHostRange {
        name: "DecoderLayer".to_owned(),
        kind: analysis::HostRangeKind::Annotation,
    };
    let c = compare::compare_sides(
        side_of("steps.json", &per_step, 5, &[H100], &["NVIDIA"]),
        side_of("layers.json", &per_layer, 160, &[H100], &["NVIDIA"]),
        &Config::default(),
    );
    let Outcome::Inconclusive(reasons) = &c.verdict else {
        panic!("{:?}", c.verdict)
    };
    assert!(
        reasons
            .iter()
            .any(|r| matches!(r, NotComparable::StepDefinitions { .. })),
        "{reasons:?}"
    );
    assert!(
        reasons.contains(&NotComparable::StepCounts {
            before: 5,
            after: 160
        }),
        "{reasons:?}"
    );
    // The same kind of evidence under another name (a renamed layer annotation) is the
    // same step definition.
    let renamed = analysis::StepOrigin::RepeatedHostRange {
        name: "Block".to_owned(),
        kind: analysis::HostRangeKind::Annotation,
    };
    let python = analysis::StepOrigin::RepeatedHostRange {
        name: "Block".to_owned(),
        kind: analysis::HostRangeKind::PythonFunction,
    };
    let c = compare::compare_sides(
        side_of("a.json", &per_layer, 160, &[H100], &["NVIDIA"]),
        side_of("b.json", &renamed, 160, &[H100], &["NVIDIA"]),
        &Config::default(),
    );
    assert_eq!(c.verdict, Outcome::NoChange);
    let c = compare::compare_sides(
        side_of("a.json", &per_layer, 160, &[H100], &["NVIDIA"]),
        side_of("b.json", &python, 160, &[H100], &["NVIDIA"]),
        &Config::default(),
    );
    assert!(
        matches!(&c.verdict, Outcome::Inconclusive(r)
            if matches!(r[..], [NotComparable::StepDefinitions { .. }])),
        "{:?}",
        c.verdict
    );
    // The same step evidence with counts a changed schedule gives stays comparable.
    let c = compare::compare_sides(
        side_of("a.json", &per_step, 5, &[H100], &["NVIDIA"]),
        side_of("b.json", &per_step, 10, &[H100], &["NVIDIA"]),
        &Config::default(),
    );
    assert_eq!(c.verdict, Outcome::NoChange);
}

/// Two GPUs of different vendors, neither side naming its model: inconclusive.
#[test]
fn two_gpus_of_different_vendors_are_inconclusive() {
    let per_step = analysis::StepOrigin::ProfilerStep;
    let c = compare::compare_sides(
        side_of("nvidia.json", &per_step, 5, &[], &["NVIDIA"]),
        side_of("amd.json", &per_step, 5, &[], &["AMD"]),
        &Config::default(),
    );
    assert_eq!(
        c.verdict,
        Outcome::Inconclusive(vec![NotComparable::GpuVendors {
            before: vec!["NVIDIA".to_owned()],
            after: vec!["AMD".to_owned()],
        }])
    );
}
