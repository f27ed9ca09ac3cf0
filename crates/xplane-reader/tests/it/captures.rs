//! Every real capture loads, with the plane, line and event counts and HLO programs of MANIFEST.md.

use std::fmt::Write;

use xplane_reader::{DiagnosticKind, XSpace};

use crate::traces_dir;

/// Per file: the non-empty planes with their per-line event counts, and the HLO program count.
fn summary(space: &XSpace) -> String {
    let mut out = String::new();
    let is_device = |plane: xplane_reader::Plane<'_>| plane.name().starts_with("/device:");
    let mut empty_devices = 0;
    for plane in space.planes() {
        if is_device(plane) && plane.event_count() == 0 {
            empty_devices += 1;
            continue;
        }
        write!(
            out,
            "plane `{}`: {} events; {} lines",
            plane.name(),
            plane.event_count(),
            plane.lines().count()
        )
        .unwrap();
        if plane.gpu_ordinal().is_some() {
            for line in plane.lines() {
                write!(out, "; `{}`={}", line.name(), line.event_count()).unwrap();
            }
        }
        out.push('\n');
    }
    writeln!(out, "empty device planes: {empty_devices}").unwrap();
    writeln!(out, "hlo programs: {}", space.hlo_programs().len()).unwrap();
    out
}

/// The same summary, as `jax/MANIFEST.md`'s "Per-file structure" states it.
fn manifest_summary(x: &test_support::XSpaceCapture) -> String {
    let mut out = String::new();
    for plane in &x.planes {
        write!(
            out,
            "plane `{}`: {} events; {} lines",
            plane.name, plane.events, plane.lines
        )
        .unwrap();
        for (stream, events) in &plane.streams {
            write!(out, "; `{stream}`={events}").unwrap();
        }
        out.push('\n');
    }
    writeln!(out, "empty device planes: {}", x.empty_device_planes).unwrap();
    writeln!(out, "hlo programs: {}", x.hlo_programs).unwrap();
    out
}

#[test]
fn every_capture_matches_manifest() {
    let Some(set) = test_support::real_traces("every_capture_matches_manifest") else {
        return;
    };
    assert!(!set.xspaces.is_empty(), "jax/MANIFEST.md lists no XSpace");
    let (mut all, mut expected) = (String::new(), String::new());
    for x in &set.xspaces {
        let space = XSpace::read(&x.path).unwrap();
        writeln!(all, "#### {}", x.folder).unwrap();
        all.push_str(&summary(&space));
        writeln!(expected, "#### {}", x.folder).unwrap();
        expected.push_str(&manifest_summary(x));
    }
    eprintln!("{all}");
    assert_eq!(all, expected);
}

#[test]
fn cpu_only_capture_loads_with_diagnostic() {
    let Some(traces) = traces_dir("cpu_only_capture_loads_with_diagnostic") else {
        return;
    };
    let space = XSpace::read(&traces.join("jax/cpu-mlp/vm.xplane.pb")).unwrap();
    assert!(space.gpu_planes().is_empty());
    let kinds: Vec<_> = space
        .diagnostics()
        .iter()
        .map(|diagnostic| diagnostic.kind)
        .collect();
    assert!(
        kinds.contains(&DiagnosticKind::NoGpuDevicePlanes),
        "{:?}",
        space.diagnostics()
    );
    assert!(
        space.diagnostics()[0]
            .message
            .contains("no GPU device planes")
    );
    // jaxlib 0.10.2 stores `program_id` as a stat; `jit_train_step(32)` is one of the programs.
    let train_step = space
        .hlo_programs()
        .into_iter()
        .find(|program| program.module_name == "jit_train_step")
        .unwrap();
    assert_eq!(train_step.program_id, 32);
    assert_eq!(train_step.id_source, xplane_reader::ProgramIdSource::Stat);
    // XLA CPU thunks carry interned `hlo_op` / `hlo_module` strings.
    let host = space.host_plane().unwrap();
    let thunk = host
        .lines()
        .flat_map(|line| line.events())
        .find(|event| event.stat("hlo_module").is_some())
        .unwrap();
    assert!(matches!(
        thunk.stat("hlo_op"),
        Some(xplane_reader::StatValue::Ref(_))
    ));
    let (start, stop) = space.profile_window_ns().unwrap();
    assert!(start < stop);
}

#[test]
fn rocm_device_plane_stats() {
    let Some(traces) = traces_dir("rocm_device_plane_stats") else {
        return;
    };
    let space = XSpace::read(&traces.join("jax/rocm-mi300-jax08-gemm/tw003.xplane.pb")).unwrap();
    assert!(
        space
            .diagnostics()
            .iter()
            .all(|diagnostic| diagnostic.kind != DiagnosticKind::NoGpuDevicePlanes)
    );
    let gpu = space.device_planes()[0];
    let caps = gpu.device_capabilities();
    assert_eq!(caps.vendor.as_deref(), Some("AMD"), "{caps:?}");
    assert!(caps.core_count.is_some(), "{caps:?}");
    let mut kernels = 0;
    for line in gpu.lines() {
        assert!(line.stream_id().is_some(), "{}", line.name());
        for event in line.events() {
            assert!(event.duration_ps() > 0);
            assert!(
                event
                    .stat("correlation_id")
                    .and_then(|value| value.as_u64())
                    .is_some()
            );
            if event
                .stat("hlo_op")
                .and_then(|value| value.as_str())
                .is_some()
            {
                kernels += 1;
            }
        }
    }
    assert!(kernels > 0);
    // JAX 0.8 has no `program_id` stat in /host:metadata: the metadata id is the program id.
    let programs = space.hlo_programs();
    assert!(
        programs
            .iter()
            .all(|program| program.id_source == xplane_reader::ProgramIdSource::MetadataId)
    );
}

#[test]
fn bad_inputs_are_errors_naming_path_and_offset() {
    let Some(traces) = traces_dir("bad_inputs_are_errors_naming_path_and_offset") else {
        return;
    };
    let json = traces.join("jax/rocm-mi300-jax08-gemm/regenerated-jaxlib0.10.2.trace.json.gz");
    let err = XSpace::read(&json).unwrap_err().to_string();
    assert!(
        err.contains("regenerated-jaxlib0.10.2.trace.json.gz"),
        "{err}"
    );
    assert!(err.contains("offset"), "{err}");

    let path = traces.join("jax/rocm-mi300-jax08-gemm/tw003.xplane.pb");
    let bytes = std::fs::read(&path).unwrap();
    for cut in [1, bytes.len() / 3, bytes.len() / 2, bytes.len() - 1] {
        let err = XSpace::from_bytes(&bytes[..cut], &path)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("tw003.xplane.pb") && err.contains("offset"),
            "cut at {cut}: {err}"
        );
    }
}

/// TensorFlow's XSpace: named TensorFlow from its own lines, one step per GPU from each
/// GPU's `Steps` line (each the span of that GPU's compute stream), and its ops (the
/// `TensorFlow Ops` line) as GPU annotations over their kernels.
#[test]
fn tensorflow_xspace_steps_producer_and_ops() {
    let Some(dir) = traces_dir("tensorflow xspace") else {
        return;
    };
    let path = dir.join("jax/tf-v100-multiworker-xplane/34.83.195.179_6003.xplane.pb");
    let (c, _space) = xplane_reader::load_capture(&path).unwrap_or_else(|e| panic!("{e}"));
    let producer = c.meta().producer.as_deref().unwrap_or("");
    assert!(producer.starts_with("TensorFlow"), "{producer}");
    assert!(!producer.to_ascii_lowercase().contains("jax"), "{producer}");
    // One step per GPU with kernels (GPU:4 and GPU:6), each the compute stream's span.
    let device_steps = &c.meta().device_steps;
    let mut ordinals: Vec<i64> = device_steps
        .iter()
        .map(|(d, _)| c.device(*d).ordinal)
        .collect();
    ordinals.sort_unstable();
    assert_eq!(ordinals, [4, 6]);
    for (device, step) in device_steps {
        let compute = c
            .streams()
            .iter()
            .find(|s| {
                s.device == *device && s.name.is_some_and(|n| c.name(n).contains("(Compute)"))
            })
            .expect("a compute stream");
        let kernels = c.stream_activities(compute.id);
        assert_eq!(kernels.len(), 665);
        let start = kernels.iter().map(|a| a.start).min().unwrap();
        let end = kernels.iter().map(|a| a.end()).max().unwrap();
        assert_eq!(
            (step.start, step.end),
            (start, end),
            "GPU:{}",
            c.device(*device).ordinal
        );
        assert_eq!(step.number, 0);
        assert_eq!(step.source, trace_model::StepSource::DeviceStepsLine);
    }
    // The capture's step: their union.
    assert_eq!(c.steps().len(), 1);
    let union_start = device_steps.iter().map(|(_, s)| s.start).min().unwrap();
    let union_end = device_steps.iter().map(|(_, s)| s.end).max().unwrap();
    assert_eq!(
        (c.steps()[0].start, c.steps()[0].end),
        (union_start, union_end)
    );
    // Every TensorFlow op of both GPUs, on a compute stream, named `scope/op:Type`.
    assert_eq!(c.gpu_annotations().len(), 2 * 665);
    assert!(
        c.gpu_annotations()
            .iter()
            .all(|a| c.name(a.name).contains(':'))
    );
}
