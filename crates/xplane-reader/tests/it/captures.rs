//! Every real capture loads, with the plane, line and event counts and HLO programs of MANIFEST.md.

use std::fmt::Write;

use xplane_reader::{DiagnosticKind, XSpace};

use crate::{traces_dir, xplane_files};

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

#[test]
fn every_capture_matches_manifest() {
    let Some(traces) = traces_dir("every_capture_matches_manifest") else {
        return;
    };
    let mut all = String::new();
    for path in xplane_files(&traces) {
        let space = XSpace::read(&path).unwrap();
        let folder = path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        writeln!(all, "#### {folder}").unwrap();
        all.push_str(&summary(&space));
    }
    eprintln!("{all}");
    // Transcribed from MANIFEST.md's "Per-file structure" section.
    let expected = "\
#### cpu-mlp
plane `/host:metadata`: 0 events; 0 lines
plane `/host:CPU`: 758 events; 3 lines
plane `Task Environment`: 0 events; 0 lines
empty device planes: 0
hlo programs: 18
#### rocm-gfx950-te-fused-attn
plane `/host:metadata`: 0 events; 0 lines
plane `/device:GPU:0`: 150 events; 1 lines; `Stream #2`=150
plane `/host:CPU`: 1842 events; 2 lines
plane `Task Environment`: 0 events; 0 lines
empty device planes: 8
hlo programs: 9
#### rocm-mi300-jax-conv-legacy
plane `/host:metadata`: 0 events; 0 lines
plane `/device:GPU:0`: 53 events; 4 lines; `Stream #8(MemcpyOther)`=15; `Stream #9(MemcpyOther)`=14; `Stream #7(MemcpyOther)`=10; `Stream #10(MemcpyOther)`=14
plane `/device:GPU:7`: 25 events; 1 lines; `Stream #1(Kernel)`=25
plane `/host:CPU`: 5946 events; 17 lines
plane `Task Environment`: 0 events; 0 lines
empty device planes: 6
hlo programs: 8
#### rocm-mi300-jax08-attention
plane `/host:metadata`: 0 events; 0 lines
plane `/device:GPU:0`: 105 events; 2 lines; `Stream #16(Kernel)`=87; `Stream #17(Kernel)`=18
plane `/host:CPU`: 4275 events; 5 lines
plane `Task Environment`: 0 events; 0 lines
empty device planes: 7
hlo programs: 31
#### rocm-mi300-jax08-elementwise
plane `/host:metadata`: 0 events; 0 lines
plane `/device:GPU:0`: 75 events; 2 lines; `Stream #16(Kernel)`=65; `Stream #17(Kernel)`=10
plane `/host:CPU`: 4548 events; 5 lines
plane `Task Environment`: 0 events; 0 lines
empty device planes: 7
hlo programs: 16
#### rocm-mi300-jax08-gemm
plane `/host:metadata`: 0 events; 0 lines
plane `/device:GPU:0`: 54 events; 2 lines; `Stream #16(Kernel)`=42; `Stream #17(Kernel)`=12
plane `/host:CPU`: 3728 events; 5 lines
plane `Task Environment`: 0 events; 0 lines
empty device planes: 7
hlo programs: 16
";
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
