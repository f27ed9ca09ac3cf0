//! Frames of captures that are not Chrome JSON (Nsight Systems, rocprof, XSpace), built
//! straight from the loaded `Capture`: equal, column for column and value for value, to
//! the frame of the capture's Chrome JSON export (the conversion trace-frame used to make
//! and read again), and the facts of every shared capture pinned.

use std::collections::BTreeMap;
use std::path::Path;

use trace_model::ActivityKind;

/// The shared captures of each non-Chrome format (relative to `TRACEWISE_TRACES`) that the
/// loader reads (the nsys-jax zip is not a capture it reads; the JACC export without CUDA
/// tables has nothing to report).
const SHARED: [&str; 19] = [
    "nsys/nsys-a100pcie-extrap-exgpu/ex-gpu.s1000.sqlite",
    "nsys/nsys-ai-rtx3080-torch-zeros/mock.sqlite",
    "nsys/nvfuser-8xh100-matmul/report2.sqlite",
    "nsys/nvfuser-h200-matmul/report1.sqlite",
    "nsys/pipit-cloverleaf-a100/perlmutter-cloverleaf-cuda.sqlite",
    "nsys/pipit-saxpy-mpi-a100/saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
    "rocprof/rocprofv1-r9700-llamacpp",
    "rocprof/rocprofv1-stencil-mi250x",
    "rocprof/rocprofv3-csv-llamacpp-gfx1151",
    "rocprof/rocprofv3-doc-csv",
    "rocprof/rocprofv3-json-mi350x-aorta-train/908_results.json.gz",
    "rocprof/rocprofv3-pftrace-jacc",
    "jax/cpu-mlp/vm.xplane.pb",
    "jax/rocm-gfx950-te-fused-attn/934987a2fc2f.xplane.pb",
    "jax/rocm-mi300-jax-conv-legacy/chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb",
    "jax/rocm-mi300-jax08-attention/tw003.xplane.pb",
    "jax/rocm-mi300-jax08-elementwise/tw003.xplane.pb",
    "jax/rocm-mi300-jax08-gemm/tw003.xplane.pb",
    "jax/tf-v100-multiworker-xplane/34.83.195.179_6003.xplane.pb",
];

/// The frame of `loaded`'s Chrome JSON export, read back as trace-frame read the converted
/// captures: a file named after the rank (`rank<N>.json`), or without digits.
fn exported_frame(loaded: &load::Loaded, dir: &Path, i: usize) -> trace_frame::RankFrame {
    let name = match loaded.rank {
        Some(rank) => format!("rank{rank}.json"),
        None => format!("capture-{}.json", char::from(b'a' + (i % 26) as u8)),
    };
    let path = dir.join(format!("{i}")).join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let file = std::fs::File::create_new(&path).unwrap();
    load::chrome::write_chrome_trace(&loaded.capture, file).unwrap();
    let frame = trace_frame::read_frame(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    frame
}

/// Every frame of `input` equals its export's, and the frames trace-frame loads are those.
fn check_equal_to_export(input: &Path) {
    let tmp = tempfile::tempdir().unwrap();
    let loaded = load::load(input).unwrap();
    assert!(!loaded.is_empty(), "{}", input.display());
    for (i, l) in loaded.iter().enumerate() {
        let what = format!("{} (capture {i})", input.display());
        let direct = trace_frame::capture_frame(l).unwrap();
        let exported = exported_frame(l, tmp.path(), i);
        assert_eq!(direct.rank, exported.rank, "{what}");
        assert_eq!(direct.rank_in_file, exported.rank_in_file, "{what}");
        assert_eq!(direct.path, l.path, "{what}");
        assert_eq!(direct.df.schema(), exported.df.schema(), "{what}");
        assert_eq!(direct.df.height(), exported.df.height(), "{what}");
        assert!(direct.df.height() > 0, "{what}");
        for (a, b) in direct.df.columns().iter().zip(exported.df.columns()) {
            let (a, b) = (a.as_materialized_series(), b.as_materialized_series());
            assert!(
                a.equals_missing(b),
                "{what}: column {} differs:\n{a}\n{b}",
                a.name()
            );
        }
    }
    // `load` gives these frames, in rank order.
    let frames = trace_frame::load(input, None).unwrap().frames;
    assert_eq!(frames.len(), loaded.len(), "{}", input.display());
}

#[test]
fn capture_frames_equal_their_chrome_export_on_the_fixtures() {
    for rel in [
        "nsys/ok/small.sqlite",
        "rocprof/ok/small.pftrace",
        "rocprof/ok/v1",
        "rocprof/ok/csv",
    ] {
        check_equal_to_export(&test_support::workspace_root().join("testdata").join(rel));
    }
}

#[test]
fn capture_frames_equal_their_chrome_export_on_the_shared_captures() {
    let Some(root) =
        test_support::traces_dir("capture_frames_equal_their_chrome_export_on_the_shared_captures")
    else {
        return;
    };
    for rel in SHARED {
        check_equal_to_export(&root.join(rel));
    }
}

/// Per frame: `rank=R rows=N` and, per `cat` (`-` for none), its rows and total `dur_ns`.
fn facts(input: &Path) -> String {
    let loaded = trace_frame::load(input, None).unwrap();
    let mut out = Vec::new();
    for f in &loaded.frames {
        let cat = f.df.column("cat").unwrap().str().unwrap();
        let dur = f.df.column("dur_ns").unwrap().i64().unwrap();
        let mut by: BTreeMap<&str, (usize, i64)> = BTreeMap::new();
        for (c, d) in cat.iter().zip(dur.iter()) {
            let e = by.entry(c.unwrap_or("-")).or_default();
            e.0 += 1;
            e.1 += d.unwrap_or(0);
        }
        let rank = f.rank.map_or("-".to_string(), |r| r.to_string());
        let mut s = format!("rank={rank} rows={}", f.df.height());
        for (c, (n, d)) in by {
            s.push_str(&format!(" {c}={n}/{d}"));
        }
        out.push(s);
    }
    out.join("; ")
}

/// The kernels of a capture's frames are its kernels: their count and total time, as the
/// loader's model has them.
fn check_kernels_are_the_models(input: &Path) {
    let loaded = load::load(input).unwrap();
    let frames = trace_frame::load(input, None).unwrap();
    let (mut n, mut d) = (0usize, 0i64);
    for l in &loaded {
        for a in l.capture.activities() {
            if !matches!(a.kind, ActivityKind::Memcpy | ActivityKind::Memset) {
                n += 1;
                d += a.dur.0;
            }
        }
    }
    let (mut rows, mut dur) = (0usize, 0i64);
    for f in &frames.frames {
        let cat = f.df.column("cat").unwrap().str().unwrap();
        let ns = f.df.column("dur_ns").unwrap().i64().unwrap();
        for (c, x) in cat.iter().zip(ns.iter()) {
            if c == Some("kernel") {
                rows += 1;
                dur += x.unwrap_or(0);
            }
        }
    }
    assert_eq!((rows, dur), (n, d), "{}", input.display());
}

#[test]
fn shared_capture_frames_keep_their_facts() {
    let Some(root) = test_support::traces_dir("shared_capture_frames_keep_their_facts") else {
        return;
    };
    let mut got = Vec::new();
    for rel in SHARED {
        check_kernels_are_the_models(&root.join(rel));
        got.push((rel, facts(&root.join(rel))));
    }
    let want: Vec<(&str, String)> = PINNED
        .iter()
        .map(|(rel, f)| (*rel, f.to_string()))
        .collect();
    let shown: Vec<String> = got
        .iter()
        .map(|(r, f)| format!("    (\"{r}\", \"{f}\"),"))
        .collect();
    assert_eq!(
        got.iter().map(|(r, f)| (*r, f.clone())).collect::<Vec<_>>(),
        want,
        "now:\n{}",
        shown.join("\n")
    );
}

/// The facts of [`SHARED`]'s frames ([`facts`]), as the Chrome JSON round trip gave them
/// before the frames were built from the captures (checked equal then, on every column).
const PINNED: [(&str, &str); 19] = [
    (
        "nsys/nsys-a100pcie-extrap-exgpu/ex-gpu.s1000.sqlite",
        "rank=- rows=57 -=3/0 ac2g=12/0 cuda_runtime=36/437722865 kernel=6/177665",
    ),
    (
        "nsys/nsys-ai-rtx3080-torch-zeros/mock.sqlite",
        "rank=- rows=21 -=3/0 ac2g=6/0 cuda_runtime=9/40737950 gpu_memcpy=1/1632 kernel=2/4129",
    ),
    (
        "nsys/nvfuser-8xh100-matmul/report2.sqlite",
        "rank=0 rows=2095 -=3/0 ac2g=42/0 cuda_runtime=975/88202730 gpu_memcpy=1/2976 gpu_memset=1/1056 kernel=19/401436 user_annotation=1054/1049224533",
    ),
    (
        "nsys/nvfuser-h200-matmul/report1.sqlite",
        "rank=- rows=1686 -=3/0 ac2g=42/0 cuda_runtime=968/71087247 gpu_memcpy=1/1632 gpu_memset=1/1088 kernel=19/393539 user_annotation=652/1157662167",
    ),
    (
        "nsys/pipit-cloverleaf-a100/perlmutter-cloverleaf-cuda.sqlite",
        "rank=0 rows=7824 -=3/0 ac2g=3182/0 cuda_runtime=3048/571656984 gpu_memcpy=279/9390923 kernel=1312/294404540",
    ),
    (
        "nsys/pipit-saxpy-mpi-a100/saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
        "rank=0 rows=180 -=3/0 ac2g=40/0 cuda_runtime=95/1087784268 gpu_memcpy=15/284699600 kernel=5/88573480 user_annotation=22/896325758",
    ),
    (
        "rocprof/rocprofv1-r9700-llamacpp",
        "rank=- rows=1967 -=4/0 kernel=1963/662138329",
    ),
    (
        "rocprof/rocprofv1-stencil-mi250x",
        "rank=- rows=1026 -=2/0 kernel=1024/1554596726",
    ),
    (
        "rocprof/rocprofv3-csv-llamacpp-gfx1151",
        "rank=- rows=3384 -=3/0 ac2g=2248/0 hip_runtime=5/1411305 kernel=1128/66066571",
    ),
    (
        "rocprof/rocprofv3-doc-csv",
        "rank=- rows=21 -=6/0 hip_runtime=10/13473 user_annotation=5/4962639; rank=- rows=14 -=5/0 kernel=9/96160",
    ),
    (
        "rocprof/rocprofv3-json-mi350x-aorta-train/908_results.json.gz",
        "rank=- rows=44482 -=567/0 kernel=43915/4441741378",
    ),
    (
        "rocprof/rocprofv3-pftrace-jacc",
        "rank=- rows=6 -=1/0 cuda_runtime=5/20452899; rank=- rows=1134 -=2/0 cuda_runtime=1132/439494339",
    ),
    (
        "jax/cpu-mlp/vm.xplane.pb",
        "rank=- rows=761 -=3/0 cpu_op=317/1475335 host=428/1824533 python_function=10/38080599 user_annotation=3/948654",
    ),
    (
        "jax/rocm-gfx950-te-fused-attn/934987a2fc2f.xplane.pb",
        "rank=- rows=2303 -=11/0 ac2g=300/0 hip_runtime=150/3697277 host=1633/43897931 kernel=150/12133585 python_function=59/9726888595",
    ),
    (
        "jax/rocm-mi300-jax-conv-legacy/chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb",
        "rank=- rows=6210 -=30/0 ac2g=156/0 gpu_memcpy=53/889028 hip_runtime=78/658129 host=3220/651161420 kernel=25/3586493 python_function=2648/30164959398",
    ),
    (
        "jax/rocm-mi300-jax08-attention/tw003.xplane.pb",
        "rank=- rows=4605 -=15/0 ac2g=210/0 hip_runtime=105/1003302 host=2556/81308292 kernel=105/3845562 python_function=1614/53021172",
    ),
    (
        "jax/rocm-mi300-jax08-elementwise/tw003.xplane.pb",
        "rank=- rows=4788 -=15/0 ac2g=150/0 hip_runtime=75/834291 host=1690/37346229 kernel=75/3880724 python_function=2783/49671063",
    ),
    (
        "jax/rocm-mi300-jax08-gemm/tw003.xplane.pb",
        "rank=- rows=3905 -=15/0 ac2g=108/0 hip_runtime=54/673090 host=1450/30886707 kernel=54/3475484 python_function=2224/54944696",
    ),
    (
        "jax/tf-v100-multiworker-xplane/34.83.195.179_6003.xplane.pb",
        "rank=- rows=21391 -=39/0 ac2g=3112/0 cuda_runtime=1556/20921596 gpu_memcpy=226/471357 gpu_user_annotation=1330/29690748 host=13798/167139914 kernel=1330/29690748",
    ),
];
