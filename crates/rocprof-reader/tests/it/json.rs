//! rocprofv3 JSON (`--output-format json`): the shared aorta training run on MI350X gives
//! the kernel count and total kernel time of a plain pass over its JSON, on the GPU its
//! agents name; JSON made here with API calls, copies and markers links them; a file
//! lacking a section names the file, the section and what to run instead.

use std::io::Read;
use std::path::Path;

use rocprof_reader::{Kind, detect, load};
use trace_model::{ActivityKind, HostKind};

fn json_of(path: &Path) -> serde_json::Value {
    let mut text = Vec::new();
    let file = std::fs::File::open(path).unwrap();
    flate2::read::MultiGzDecoder::new(file)
        .read_to_end(&mut text)
        .unwrap();
    serde_json::from_slice(&text).unwrap()
}

#[test]
fn the_shared_json_run_equals_a_plain_count() {
    let Some(dir) = crate::rocprof_dir("rocprofv3 JSON") else {
        return;
    };
    let path = dir.join("rocprofv3-json-mi350x-aorta-train/908_results.json.gz");
    assert_eq!(detect(&path), Some(Kind::Json));
    // The plain count: dispatch records and the sum of end - start.
    let value = json_of(&path);
    let run = &value["rocprofiler-sdk-tool"][0];
    let dispatches = run["buffer_records"]["kernel_dispatch"].as_array().unwrap();
    let plain_time: i64 = dispatches
        .iter()
        .map(|d| d["end_timestamp"].as_i64().unwrap() - d["start_timestamp"].as_i64().unwrap())
        .sum();
    let loaded = load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded[0].pid, Some(908));
    assert!(
        loaded[0]
            .name
            .as_deref()
            .is_some_and(|c| c.contains("train.py")),
        "{:?}",
        loaded[0].name
    );
    let c = &loaded[0].capture;
    assert_eq!(c.format(), trace_model::Format::RocprofJson);
    let kernels: Vec<_> = c
        .activities()
        .iter()
        .filter(|a| a.kind == ActivityKind::Kernel)
        .collect();
    assert_eq!(kernels.len(), dispatches.len());
    assert_eq!(kernels.len(), 43_915);
    assert_eq!(kernels.iter().map(|a| a.dur.0).sum::<i64>(), plain_time);
    // One GPU did the work: the MI350X its agent names, gfx950 (9.5), 256 CUs, 2.2 GHz.
    assert_eq!(c.devices().len(), 1);
    let p = &c.devices()[0].properties;
    assert_eq!(p.name.as_deref(), Some("AMD Instinct MI350X"));
    assert_eq!(p.compute_capability, Some((9, 5)));
    assert_eq!(p.multiprocessors, Some(256));
    assert_eq!(p.clock_rate_khz, Some(2_200_000));
    // No API, marker or copy records: said, not silently empty.
    let empty = c
        .diagnostics()
        .get("rocprof-json-sections-empty")
        .expect("said");
    assert!(empty.message.contains("HIP API calls"), "{}", empty.message);
}

/// A small run with every record kind the reader keeps.
const SMALL: &str = r#"{"rocprofiler-sdk-tool": [{
 "metadata": {"pid": 77, "command": ["./app", "--n", "3"]},
 "agents": [
   {"id": {"handle": 1}, "type": 1, "name": "cpu", "product_name": "EPYC"},
   {"id": {"handle": 2}, "type": 2, "name": "gfx942", "product_name": "AMD Instinct MI300X",
    "cu_count": 304, "gfx_target_version": 90402, "logical_node_type_id": 0,
    "max_engine_clk_fcompute": 2100}
 ],
 "kernel_symbols": [{"kernel_id": 5, "formatted_kernel_name": "gemm", "kernel_name": "gemm.kd"}],
 "strings": {"buffer_records": [
   {"kind": "NONE", "operations": []},
   {"kind": "HIP_RUNTIME_API", "operations": ["hipMalloc", "hipLaunchKernel", "hipMemcpyAsync"]},
   {"kind": "MARKER_CORE_API", "operations": ["roctxRangePush"]},
   {"kind": "MEMORY_COPY", "operations": ["MEMORY_COPY_NONE", "MEMORY_COPY_HOST_TO_DEVICE"]}
 ]},
 "buffer_records": {
   "hip_api": [
     {"kind": 1, "operation": 1, "thread_id": 78, "correlation_id": {"internal": 1}, "start_timestamp": 100, "end_timestamp": 150},
     {"kind": 1, "operation": 2, "thread_id": 78, "correlation_id": {"internal": 2}, "start_timestamp": 200, "end_timestamp": 260}
   ],
   "marker_api": [
     {"kind": 2, "operation": 0, "thread_id": 78, "correlation_id": {"internal": 3}, "start_timestamp": 50, "end_timestamp": 900}
   ],
   "kernel_dispatch": [
     {"thread_id": 78, "correlation_id": {"internal": 1}, "start_timestamp": 300, "end_timestamp": 700,
      "dispatch_info": {"agent_id": {"handle": 2}, "queue_id": {"handle": 9}, "kernel_id": 5}, "stream_id": {"handle": 4}}
   ],
   "memory_copy": [
     {"kind": 3, "operation": 1, "thread_id": 78, "correlation_id": {"internal": 2}, "start_timestamp": 270, "end_timestamp": 290,
      "dst_agent_id": {"handle": 2}, "src_agent_id": {"handle": 1}, "bytes": 4096, "stream_id": {"handle": 4}}
   ]
 }
}]}"#;

#[test]
fn records_of_every_kind_link_by_correlation_id() {
    let dir = crate::scratch();
    let path = dir.path().join("77_results.json");
    std::fs::write(&path, SMALL).unwrap();
    assert_eq!(detect(&path), Some(Kind::Json));
    let loaded = load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loaded[0].name.as_deref(), Some("./app --n 3"));
    let c = &loaded[0].capture;
    let activities: Vec<_> = c
        .activities()
        .iter()
        .map(|a| {
            (
                c.name(a.name),
                a.kind,
                a.start.0,
                a.dur.0,
                a.launch().map(|l| c.name(c.host_event(l).name)),
            )
        })
        .collect();
    assert_eq!(
        activities,
        [
            (
                "MEMORY_COPY_HOST_TO_DEVICE",
                ActivityKind::Memcpy,
                270,
                20,
                Some("hipMemcpyAsync")
            ),
            (
                "gemm",
                ActivityKind::Kernel,
                300,
                400,
                Some("hipLaunchKernel")
            ),
        ]
    );
    let host: Vec<_> = c
        .host_events()
        .iter()
        .map(|e| (c.name(e.name), e.kind))
        .collect();
    assert_eq!(
        host,
        [
            ("roctxRangePush", HostKind::Annotation),
            ("hipLaunchKernel", HostKind::Launch),
            ("hipMemcpyAsync", HostKind::Launch),
        ]
    );
    let p = &c.devices()[0].properties;
    assert_eq!(p.compute_capability, Some((9, 4)));
    assert!(c.diagnostics().get("rocprof-json-sections-empty").is_some());
}

#[test]
fn a_missing_section_names_the_file_the_section_and_the_way_out() {
    let dir = crate::scratch();
    for (section, cut) in [
        ("agents", r#" "agents": ["#),
        ("kernel_symbols", r#" "kernel_symbols": ["#),
        ("buffer_records", r#" "buffer_records": {"#),
    ] {
        // Rename the section's key so that the run lacks it.
        let text = SMALL.replacen(cut, &cut.replace(section, &format!("x_{section}")), 1);
        assert_ne!(text, SMALL, "{section}");
        let path = dir.path().join(format!("no_{section}.json"));
        std::fs::write(&path, text).unwrap();
        let err = load(&path).expect_err(section).to_string();
        assert!(err.starts_with(&path.display().to_string()), "{err}");
        assert!(
            err.contains(&format!("rocprofiler-sdk-tool[0].{section}")),
            "{err}"
        );
        assert!(
            err.contains("--output-format csv, pftrace or rocpd"),
            "{err}"
        );
    }
    // Cut short: the line and column where the JSON ends.
    let path = dir.path().join("cut.json");
    std::fs::write(&path, &SMALL[..SMALL.len() / 2]).unwrap();
    let err = load(&path).expect_err("cut").to_string();
    assert!(
        err.contains("rocprofv3 JSON") && err.contains("line"),
        "{err}"
    );
}
