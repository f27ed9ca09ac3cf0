//! Integration tests of chrome-reader: fixtures under testdata/chrome and, when
//! `TRACEWISE_TRACES` names the real-trace folder, every PyTorch and JAX trace in it.

mod fixtures;
mod members;
mod parallel;
mod real_traces;
mod write;

pub use test_support::workspace_root;

pub use test_support::traces_dir;

/// A CPU op keeps its `Input Dims`, `Input type` and `Concrete Inputs` as the file wrote
/// them (both parsers: the second op's escaped name sends it through serde_json); other
/// events and ops without dims keep none, and `deviceProperties` of a GPU without
/// activity stay in the metadata.
#[test]
fn cpu_ops_keep_their_shape_arguments_as_written() {
    let text = r#"{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}, {"id": 1, "name": "NVIDIA H100"}], "traceEvents": [
{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 5, "args": {"Input Dims": [[8, 4], [4, 2]], "Input type": ["float", "float"], "Concrete Inputs": ["", ""]}},
{"ph": "X", "cat": "cpu_op", "name": "aten::\u0061dd", "pid": 1, "tid": 1, "ts": 7, "dur": 1, "args": {"Input Dims":[[3],[]],"Input type":["c10::BFloat16","Scalar"],"Concrete Inputs":["","1"]}},
{"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 9, "dur": 1, "args": {"Input type": ["int"]}},
{"ph": "X", "cat": "user_annotation", "name": "step", "pid": 1, "tid": 1, "ts": 0, "dur": 20, "args": {"Input Dims": [[1]]}},
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 2, "dur": 1, "args": {"device": 0, "stream": 7}}
]}"#;
    let c = chrome_reader::load_from(text.as_bytes(), std::path::Path::new("shapes.json"))
        .expect("reads");
    let shapes: Vec<(String, Option<[Option<String>; 3]>)> = c
        .host_events()
        .iter()
        .map(|e| {
            let s = c.op_shapes(e).map(|s| {
                [Some(s.dims), s.types, s.concrete].map(|id| id.map(|id| c.name(id).to_owned()))
            });
            (c.name(e.name).to_owned(), s)
        })
        .collect();
    let some = |d: &str, t: &str, k: &str| Some([d, t, k].map(|x| Some(x.to_owned())));
    assert_eq!(
        shapes,
        [
            ("step".to_owned(), None),
            (
                "aten::mm".to_owned(),
                some("[[8, 4], [4, 2]]", r#"["float", "float"]"#, r#"["", ""]"#)
            ),
            (
                "aten::add".to_owned(),
                some("[[3],[]]", r#"["c10::BFloat16","Scalar"]"#, r#"["","1"]"#)
            ),
            ("aten::empty".to_owned(), None),
        ]
    );
    assert_eq!(c.devices().len(), 1);
    let described: Vec<i64> = c
        .meta()
        .described_devices
        .iter()
        .map(|d| d.ordinal)
        .collect();
    assert_eq!(described, [0, 1]);
}

/// `deviceProperties` describing device 0 only while the kernels run on device 2 (ROCm
/// traces list the visible device as 0): one model described, so device 2 is that model,
/// said in a diagnostic; with two different models described, it stays unknown.
#[test]
fn an_undescribed_device_takes_the_one_described_model() {
    let trace = |props: &str| {
        format!(
            r#"{{"deviceProperties": [{props}], "traceEvents": [
{{"ph": "X", "cat": "kernel", "name": "k", "pid": 2, "tid": 7, "ts": 2, "dur": 1, "args": {{"device": 2, "stream": 7}}}}
]}}"#
        )
    };
    let one = trace(
        r#"{"id": 0, "name": "AMD Instinct MI300X", "computeMajor": 9, "computeMinor": 4, "numSms": 304}"#,
    );
    let c = chrome_reader::load_from(one.as_bytes(), std::path::Path::new("one.json")).unwrap();
    let device = &c.devices()[0];
    assert_eq!(device.ordinal, 2);
    assert_eq!(
        device.properties.name.as_deref(),
        Some("AMD Instinct MI300X")
    );
    assert_eq!(device.properties.multiprocessors, Some(304));
    let said = c
        .diagnostics()
        .get("device-properties-inferred")
        .expect("said");
    assert!(said.message.contains("device 2"), "{}", said.message);

    let two = trace(
        r#"{"id": 0, "name": "AMD Instinct MI300X"}, {"id": 1, "name": "AMD Instinct MI250X"}"#,
    );
    let c = chrome_reader::load_from(two.as_bytes(), std::path::Path::new("two.json")).unwrap();
    assert_eq!(c.devices()[0].properties.name, None);
    assert!(c.diagnostics().get("device-properties-inferred").is_none());
}

/// What a Kineto trace records beyond the rows is kept in `meta.kineto`: driver calls by
/// their category, `cuda_sync` events of a known kind with what they wait on (others
/// stay host events only), copy bandwidths, host events' streams, the fractional-µs flag,
/// the first event's time, HTA's origin (earliest complete event but `Trace`) and the
/// ranges of `stream`/`correlation` over the events HTA keeps (not Python frames).
#[test]
fn kineto_details_are_kept_beside_the_rows() {
    let text = r#"{"traceEvents": [
      {"ph": "M", "name": "process_name", "pid": 1, "ts": 7, "args": {"name": "python"}},
      {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler", "pid": 1, "tid": 1, "ts": 90, "dur": 100},
      {"ph": "X", "cat": "cpu_op", "name": "triton_op", "pid": 1, "tid": 1, "ts": 100, "dur": 10, "args": {"stream": 9, "correlation": 4}},
      {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 1, "tid": 1, "ts": 101, "dur": 2, "args": {"correlation": 5}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1, "ts": 104, "dur": 2, "args": {"correlation": 6}},
      {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 1, "tid": 1, "ts": 106.5, "dur": 1, "args": {"stream": 7, "correlation": 8, "wait_on_stream": 13, "wait_on_cuda_event_record_corr_id": 6}},
      {"ph": "X", "cat": "cuda_sync", "name": "Other Sync", "pid": 1, "tid": 1, "ts": 108, "dur": 1},
      {"ph": "X", "cat": "python_function", "name": "f", "pid": 1, "tid": 1, "ts": 95, "dur": 1, "args": {"stream": 99}},
      {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 110, "dur": 5, "args": {"device": 0, "stream": 7, "correlation": 5}},
      {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 7, "ts": 116, "dur": 5, "args": {"device": 0, "stream": 7, "correlation": 6, "memory bandwidth (GB/s)": 12.5}}
    ]}"#;
    let c = chrome_reader::load_from(text.as_bytes(), std::path::Path::new("k.json")).unwrap();
    let k = c.meta().kineto.as_deref().expect("a Chrome trace has them");
    assert_eq!(k.driver_calls, [3]);
    assert!(k.is_driver_call(3) && !k.is_driver_call(4));
    assert_eq!(k.syncs.len(), 1, "{:?}", k.syncs);
    let y = k.syncs[0];
    assert_eq!(y.kind, trace_model::SyncKind::StreamWaitEvent);
    assert_eq!((y.source_index, y.start.0, y.dur.0), (5, 106_500, 1_000));
    assert_eq!((y.stream, y.correlation), (Some(7), Some(8)));
    assert_eq!((y.wait_on_stream, y.wait_on_record), (Some(13), Some(6)));
    // Both sync events stay host events too.
    let names: Vec<&str> = c.host_events().iter().map(|e| c.name(e.name)).collect();
    assert!(names.contains(&"Stream Wait Event") && names.contains(&"Other Sync"));
    assert_eq!(k.bandwidth(9), Some(12.5));
    assert_eq!(k.bandwidth(8), None);
    assert_eq!(k.host_stream(2), Some(9));
    assert!(k.fractional_us);
    assert_eq!(k.first_event_ts, Some(trace_model::Nanos(7_000)));
    assert_eq!(k.hta_origin, Some(trace_model::Nanos(95_000)));
    let r = k.arg_ranges;
    assert_eq!(
        (r.stream, r.correlation, r.index),
        ((-1, 9), (-1, 8), (2, 9))
    );
    assert_eq!(
        k.asked, 0,
        "no event is named or of category one of ASKED_SYMBOLS"
    );
}

/// `KinetoDetails::asked` notes which of HTA's asked texts some event, of any phase, has
/// as its category or name, exactly as written (another spelling is another text).
#[test]
fn the_texts_hta_asks_for_are_noted_by_category_or_name() {
    let text = r#"{"traceEvents": [
      {"ph": "X", "cat": "gpu_user_Annotation", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
      {"ph": "i", "cat": "cuda_profiler_range", "name": "r", "pid": 1, "tid": 1, "ts": 2, "s": "t"},
      {"ph": "X", "cat": "cpu_op", "name": "user_annotation", "pid": 1, "tid": 1, "ts": 3, "dur": 1}
    ]}"#;
    let c = chrome_reader::load_from(text.as_bytes(), std::path::Path::new("a.json")).unwrap();
    let k = c.meta().kineto.as_deref().expect("a Chrome trace has them");
    let noted: Vec<&str> = (trace_model::ASKED_SYMBOLS.iter())
        .filter(|s| k.asked & trace_model::asked_bits(s) != 0)
        .copied()
        .collect();
    assert_eq!(noted, ["user_annotation", "cuda_profiler_range"]);
}
