//! PyTorch (Kineto) captures: each GPU activity belongs to the outermost modelled ATen op
//! around the CPU op that launched it (the workspace's launch join, in `CaptureBuilder::finish`);
//! costs come from that op's `Input Dims`, `Input type` and `Concrete Inputs`.
//!
//! The model builder keeps no op arguments, so a second streaming pass over the file reads
//! the shape arguments of the modelled ops only, keyed by event index (`source_index`).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::Deserialize;
use trace_model::{Capture, Device, DeviceId, DeviceProperties, HostKind, Vendor};

use crate::Error;
use crate::aten_cost::{ShapeArgs, aten_cost, is_costed_op};
use crate::model::{RawRow, Rows, TrustItem};

#[derive(Debug, Deserialize)]
struct ArgsKeys {
    #[serde(rename = "Input Dims", default)]
    dims: Option<Vec<serde_json::Value>>,
    #[serde(rename = "Input type", default)]
    types: Option<Vec<serde_json::Value>>,
    #[serde(rename = "Concrete Inputs", default)]
    concrete: Option<Vec<serde_json::Value>>,
}

fn to_shape_args(keys: ArgsKeys) -> ShapeArgs {
    let dims = keys
        .dims
        .unwrap_or_default()
        .iter()
        .map(|d| {
            d.as_array()
                .map(|items| items.iter().filter_map(serde_json::Value::as_i64).collect())
                .unwrap_or_default()
        })
        .collect();
    let text = |v: Option<Vec<serde_json::Value>>| -> Vec<String> {
        v.unwrap_or_default()
            .iter()
            .map(|x| match x {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect()
    };
    ShapeArgs {
        dims,
        types: text(keys.types),
        concrete: text(keys.concrete),
    }
}

/// Shape arguments of every modelled `cpu_op`, by event index, and the devices the
/// trace's `deviceProperties` describe (also those without activity, which the model drops).
fn read_shapes(path: &Path) -> Result<(HashMap<u64, ShapeArgs>, Vec<Device>), Error> {
    let input = load::chrome::open(path)?;
    let mut out = HashMap::new();
    let top = load::chrome::read_events_with_args::<_, ArgsKeys>(input, path, |ev| {
        if ev.cat.as_deref() == Some("cpu_op")
            && ev.name.as_deref().is_some_and(is_costed_op)
            && let Some(args) = ev.args
        {
            out.insert(ev.index as u64, to_shape_args(args));
        }
        Ok(())
    })?;
    let described = top
        .get("deviceProperties")
        .and_then(|raw| serde_json::from_str::<Vec<serde_json::Value>>(raw.get()).ok())
        .unwrap_or_default()
        .iter()
        .map(|d| {
            let int = |k: &str| d.get(k).and_then(serde_json::Value::as_i64);
            let uint = |k: &str| int(k).and_then(|v| u64::try_from(v).ok());
            let name = d.get("name").and_then(|v| v.as_str()).unwrap_or("");
            Device {
                id: DeviceId::new(0),
                ordinal: int("id").unwrap_or(-1),
                vendor: if name.contains("AMD")
                    || d.get("warpSize").and_then(|v| v.as_i64()) == Some(64)
                {
                    Vendor::Amd
                } else if name.contains("NVIDIA") || name.contains("Tesla") {
                    Vendor::Nvidia
                } else {
                    Vendor::Unknown
                },
                properties: DeviceProperties {
                    name: (!name.is_empty()).then(|| name.to_owned()),
                    compute_capability: int("computeMajor").zip(int("computeMinor")),
                    total_memory_bytes: uint("totalGlobalMem"),
                    multiprocessors: uint("numSms"),
                    clock_rate_khz: uint("clockRate"),
                    memory_bandwidth_bytes_per_s: None,
                },
            }
        })
        .collect();
    Ok((out, described))
}

/// Rows (before peaks), trust items and total GPU time of a Kineto capture; `shapes_from`
/// is the Chrome trace file to read the ops' shapes from (`None`: a format that records
/// none, so every op is without shapes).
pub(crate) fn rows(shapes_from: Option<&Path>, capture: &Capture) -> Result<Rows, Error> {
    let (shapes, described) = match shapes_from {
        Some(path) => read_shapes(path)?,
        None => Default::default(),
    };
    let events = capture.host_events();

    // The outermost modelled op around (or at) each CPU op, per thread (events are sorted
    // by thread, then start). A parent sorts before its children, so it is settled first.
    let mut owner: Vec<Option<usize>> = vec![None; events.len()];
    for thread in capture.threads() {
        let lo = events.partition_point(|e| e.thread < thread.id);
        let hi = events.partition_point(|e| e.thread <= thread.id);
        let mut ops: Vec<usize> = (lo..hi)
            .filter(|&i| events[i].kind == HostKind::CpuOp)
            .collect();
        // Same start: the longer one encloses the shorter.
        ops.sort_by_key(|&i| {
            (
                events[i].start,
                std::cmp::Reverse(events[i].dur),
                events[i].source_index,
            )
        });
        let mut stack: Vec<usize> = Vec::new();
        for i in ops {
            while let Some(&top) = stack.last() {
                if events[top].end() >= events[i].end() {
                    break;
                }
                stack.pop();
            }
            let inherited = stack.last().and_then(|&p| owner[p]);
            owner[i] =
                inherited.or_else(|| is_costed_op(capture.name(events[i].name)).then_some(i));
            stack.push(i);
        }
    }

    #[derive(Default)]
    struct Instance {
        time: i64,
        kernels: u64,
        tf32: bool,
    }
    let mut instances: BTreeMap<usize, Instance> = BTreeMap::new();
    let mut gpu_time = 0i64;
    let mut not_modelled = (0u64, 0i64);
    for activity in capture.activities() {
        gpu_time += activity.dur.0;
        let launching = activity
            .launch()
            .and_then(|l| capture.host_event(l).parent_op())
            .map(|id| id.index());
        match launching.and_then(|i| owner[i]) {
            Some(op) => {
                let inst = instances.entry(op).or_default();
                inst.time += activity.dur.0;
                inst.kernels += 1;
                inst.tf32 |= crate::is_tf32_kernel(capture.name(activity.name));
            }
            None => {
                not_modelled.0 += 1;
                not_modelled.1 += activity.dur.0;
            }
        }
    }

    // One row per (op, shapes): executions with the same arguments cost the same.
    let mut by_signature: BTreeMap<String, (RawRow, u64)> = BTreeMap::new();
    let mut no_shapes = (0u64, 0i64);
    let mut bad_shapes = (0u64, 0i64, String::new());
    for (op, inst) in instances {
        let event = &events[op];
        let name = capture.name(event.name).to_owned();
        let args = shapes.get(&event.source_index).cloned().unwrap_or_default();
        let cost = match aten_cost(&name, &args) {
            Ok(cost) => cost,
            Err(why) if args.dims.iter().all(Vec::is_empty) => {
                let _ = why;
                no_shapes.0 += 1;
                no_shapes.1 += inst.time;
                continue;
            }
            Err(why) => {
                bad_shapes.0 += 1;
                bad_shapes.1 += inst.time;
                if bad_shapes.2.is_empty() {
                    bad_shapes.2 = why;
                }
                continue;
            }
        };
        let detail = format!(
            "{} {}",
            serde_json::to_string(&args.dims).unwrap_or_default(),
            args.types
                .iter()
                .filter(|t| !t.is_empty())
                .cloned()
                .collect::<Vec<_>>()
                .join(",")
        );
        let signature = format!("{name}\u{1f}{detail}\u{1f}{}", args.concrete.join(","));
        let entry = by_signature.entry(signature).or_insert_with(|| {
            (
                RawRow {
                    name: name.clone(),
                    program_id: None,
                    module: None,
                    hlo_op: None,
                    op: Some(name.clone()),
                    detail,
                    kind: cost.kind,
                    dtype: cost.dtype,
                    occurrences: 0,
                    occurrences_assumption: None,
                    kernels: 0,
                    flops_per_occurrence: Some(cost.flops),
                    bytes_per_occurrence: cost.bytes,
                    time_ns: 0,
                    transcendental_elements: 0.0,
                    cost_assumptions: cost.note.clone(),
                    tf32_kernels: false,
                },
                0,
            )
        });
        entry.0.occurrences += 1;
        entry.0.kernels += inst.kernels;
        entry.0.time_ns += inst.time;
        entry.0.tf32_kernels |= inst.tf32;
        entry.1 += 1;
    }
    let mut trust = Vec::new();
    if no_shapes.0 > 0 {
        trust.push(TrustItem {
            code: "op-without-shapes",
            message: "modelled ATen ops without Input Dims: capture with record_shapes=True"
                .to_owned(),
            count: no_shapes.0,
            unit: "ops",
            time_ns: no_shapes.1,
        });
    }
    if bad_shapes.0 > 0 {
        trust.push(TrustItem {
            code: "op-shapes-unexpected",
            message: format!(
                "modelled ATen ops whose shapes do not fit the model, e.g. {}",
                bad_shapes.2
            ),
            count: bad_shapes.0,
            unit: "ops",
            time_ns: bad_shapes.1,
        });
    }
    if not_modelled.0 > 0 {
        trust.push(TrustItem {
            code: "activity-not-under-modelled-op",
            message: "GPU activities not launched under a modelled ATen op (GEMM, convolution, attention): no FLOPs".to_owned(),
            count: not_modelled.0,
            unit: "activities",
            time_ns: not_modelled.1,
        });
    }
    Ok(Rows {
        raw: by_signature.into_values().map(|(row, _)| row).collect(),
        trust,
        gpu_time,
        described,
    })
}
