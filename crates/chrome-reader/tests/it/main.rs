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
