//! rocprofv3 CSV files: every row of every shared trace file becomes one event, and the
//! thinned llama.cpp capture loads with its unmatched correlation ids as a diagnostic.

use std::collections::BTreeSet;
use std::path::Path;

use rocprof_reader::{Kind, detect, load};
use trace_model::{ActivityKind, HostKind};

/// Data rows of a CSV file, read with the csv crate (names hold quoted commas).
fn rows(path: &Path) -> Vec<csv::StringRecord> {
    csv::Reader::from_path(path)
        .unwrap()
        .records()
        .map(Result::unwrap)
        .collect()
}

fn column(path: &Path, name: &str) -> usize {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader.headers().unwrap().clone();
    header.iter().position(|h| h == name).unwrap()
}

#[test]
fn every_row_of_every_doc_csv_is_one_event() {
    let Some(dir) = crate::rocprof_dir("every_row_of_every_doc_csv_is_one_event") else {
        return;
    };
    let dir = dir.join("rocprofv3-doc-csv");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let (mut traces, mut others, mut events) = (0, 0, 0);
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        // Statistics and counter-collection files are not traces: no time per row.
        let is_trace = name.ends_with("_trace.csv") || name.ends_with("_truncated.csv");
        if !is_trace {
            assert_eq!(detect(path), None, "{name}");
            let err = load(path).unwrap_err().to_string();
            assert!(err.contains(&name) && err.contains("not a ROCm"), "{err}");
            others += 1;
            continue;
        }
        assert_eq!(detect(path), Some(Kind::V3Csv), "{name}");
        let loaded = load(path).unwrap();
        assert_eq!(loaded.len(), 1, "{name}");
        let c = &loaded[0].capture;
        let expect = rows(path).len();
        assert!(expect >= 1, "{name}");
        assert_eq!(
            c.activities().len() + c.host_events().len(),
            expect,
            "{name}"
        );
        assert_eq!(
            c.diagnostics().count(trace_model::TIME_OUT_OF_RANGE),
            0,
            "{name}"
        );
        if name.contains("kernel_trace") {
            assert_eq!(c.activities().len(), expect, "{name}");
            assert!(
                c.activities()
                    .iter()
                    .all(|a| a.kind == ActivityKind::Kernel)
            );
        }
        if name.contains("memory_copy") {
            let dirs: Vec<_> = c.activities().iter().map(|a| a.class).collect();
            assert_eq!(
                dirs,
                [
                    trace_model::KernelClass::Memcpy(trace_model::MemcpyDirection::HostToDevice),
                    trace_model::KernelClass::Memcpy(trace_model::MemcpyDirection::DeviceToHost),
                ],
            );
        }
        if name.contains("marker") {
            assert!(
                c.host_events()
                    .iter()
                    .all(|e| e.kind == HostKind::Annotation)
            );
        }
        traces += 1;
        events += expect;
    }
    // The MANIFEST's files: 8 traces (both kernel column sets), 3 other.
    assert_eq!((traces, others), (8, 3));
    assert!(events >= 40, "{events} events");
}

#[test]
fn both_kernel_column_sets_name_streams() {
    let Some(dir) = crate::rocprof_dir("both_kernel_column_sets_name_streams") else {
        return;
    };
    let dir = dir.join("rocprofv3-doc-csv");
    // Without Stream_Id the stream is the HSA queue; with it, the HIP stream.
    for (file, stream_column, device) in [
        ("kernel_trace.csv", "Queue_Id", 1),
        ("rocm-systems_kernel_trace.csv", "Stream_Id", 4),
    ] {
        let path = dir.join(file);
        let c = &load(&path).unwrap()[0].capture;
        let column = column(&path, stream_column);
        let expect: BTreeSet<i64> = rows(&path)
            .iter()
            .map(|r| r[column].parse().unwrap())
            .collect();
        let got: BTreeSet<i64> = c.streams().iter().map(|s| s.ordinal).collect();
        assert_eq!(got, expect, "{file}");
        let devices: Vec<i64> = c.devices().iter().map(|d| d.ordinal).collect();
        assert_eq!(devices, [device], "{file}");
    }
}

#[test]
fn thinned_llamacpp_loads_with_unmatched_correlations_as_a_diagnostic() {
    let Some(dir) =
        crate::rocprof_dir("thinned_llamacpp_loads_with_unmatched_correlations_as_a_diagnostic")
    else {
        return;
    };
    let dir = dir.join("rocprofv3-csv-llamacpp-gfx1151");
    assert_eq!(detect(&dir), Some(Kind::V3Csv));
    let loaded = load(&dir).unwrap();
    assert_eq!(loaded.len(), 1, "one prefix, `prefill`");
    assert_eq!(loaded[0].pid, Some(3985093));
    let c = &loaded[0].capture;
    let kernels = dir.join("prefill_kernel_trace.csv");
    let api = dir.join("prefill_hip_api_trace.csv");
    let (kernel_rows, api_rows) = (rows(&kernels), rows(&api));
    assert_eq!(
        (kernel_rows.len(), api_rows.len()),
        (1128, 5),
        "MANIFEST counts"
    );
    assert_eq!(c.activities().len(), kernel_rows.len());
    assert_eq!(c.host_events().len(), api_rows.len());
    // Independently: the kernels whose correlation id no API row has.
    let api_ids: BTreeSet<&str> = api_rows.iter().map(|r| &r[4]).collect();
    let corr = column(&kernels, "Correlation_Id");
    let unmatched = kernel_rows
        .iter()
        .filter(|r| !api_ids.contains(&r[corr]))
        .count();
    assert!(unmatched > 0 && unmatched < kernel_rows.len());
    assert_eq!(
        c.diagnostics().count("activity-without-launch"),
        unmatched as u64
    );
    let linked = c
        .activities()
        .iter()
        .filter(|a| a.launch().is_some())
        .count();
    assert_eq!(linked, kernel_rows.len() - unmatched);
    // Every link joins equal correlation ids, to the API row of that id.
    let function_of: std::collections::BTreeMap<u64, &str> = api_rows
        .iter()
        .map(|r| (r[4].parse().unwrap(), &r[1]))
        .collect();
    for a in c.activities() {
        if let Some(launch) = a.launch() {
            let launch = c.host_event(launch);
            assert_eq!(launch.correlation(), a.correlation());
            let id = a.correlation().unwrap();
            assert_eq!(c.name(launch.name), function_of[&id]);
            assert_eq!(launch.kind, HostKind::Launch);
        }
    }
    // The streams are the file's Stream_Id values (not its queues), on agent 1.
    let stream = column(&kernels, "Stream_Id");
    let expect: BTreeSet<(i64, String)> = kernel_rows
        .iter()
        .map(|r| (r[stream].parse().unwrap(), format!("Stream {}", &r[stream])))
        .collect();
    let got: BTreeSet<(i64, String)> = c
        .streams()
        .iter()
        .map(|s| (s.ordinal, c.name(s.name.unwrap()).to_owned()))
        .collect();
    assert_eq!(got, expect);
    let devices: Vec<i64> = c.devices().iter().map(|d| d.ordinal).collect();
    assert_eq!(devices, [1]);
}

/// A directory with an agent file, two processes' kernel and API files and statistics
/// files: one capture per prefix, devices named from the agent file, statistics left out
/// (with a diagnostic where one carries a trace's name).
#[test]
fn a_directory_is_one_capture_per_prefix() {
    let dir = crate::scratch();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    let kernels = "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n\
                   \"KERNEL_DISPATCH\",\"Agent 2\",1,7,11,1,1,\"gemm, tiled\",5,1000,2000\n";
    let api = |pid: u32| {
        format!(
            "\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n\
             \"HIP_RUNTIME_API\",\"hipLaunchKernel\",{pid},11,5,900,950\n"
        )
    };
    write("11_kernel_trace.csv", kernels);
    write("11_hip_api_trace.csv", &api(11));
    write("22_kernel_trace.csv", kernels);
    write("22_hip_api_trace.csv", &api(22));
    write(
        "11_agent_info.csv",
        "\"Node_Id\",\"Logical_Node_Id\",\"Agent_Type\",\"Cu_Count\",\"Product_Name\"\n\
         0,0,\"CPU\",0,\"EPYC\"\n9,2,\"GPU\",304,\"AMD Instinct MI300X\"\n",
    );
    // Statistics are no part of a capture; under a trace's name they are skipped and said.
    write(
        "11_hip_api_stats.csv",
        "\"Name\",\"Calls\"\n\"hipLaunchKernel\",1\n",
    );
    write(
        "11_marker_api_trace.csv",
        "\"Name\",\"Calls\"\n\"roctxRangePush\",1\n",
    );
    assert_eq!(detect(dir.path()), Some(Kind::V3Csv));
    let loaded = load(dir.path()).unwrap();
    let pids: Vec<_> = loaded.iter().map(|l| l.pid).collect();
    assert_eq!(pids, [Some(11), Some(22)]);
    for l in &loaded {
        let c = &l.capture;
        let a = &c.activities()[0];
        assert_eq!(c.name(a.name), "gemm, tiled");
        assert_eq!(c.stream(a.stream).ordinal, 7);
        assert_eq!(
            c.name(c.host_event(a.launch().unwrap()).name),
            "hipLaunchKernel"
        );
        assert_eq!(c.devices()[0].ordinal, 2);
    }
    let first = &loaded[0].capture;
    let gpu = &first.devices()[0].properties;
    assert_eq!(gpu.name.as_deref(), Some("AMD Instinct MI300X"));
    assert_eq!(gpu.multiprocessors, Some(304));
    assert_eq!(first.devices().len(), 1, "the CPU agent is no device");
    assert_eq!(loaded[1].capture.devices()[0].properties.name, None);
    let skipped = first.diagnostics().get("rocprof-csv-skipped").unwrap();
    assert_eq!(skipped.count, 1);
    assert!(
        skipped.first.ends_with("11_marker_api_trace.csv"),
        "{skipped:?}"
    );
}
