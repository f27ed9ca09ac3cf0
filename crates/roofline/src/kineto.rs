//! PyTorch (Kineto) captures: each GPU activity belongs to the outermost modelled ATen op
//! around the CPU op that launched it (the workspace's launch join, in `CaptureBuilder::finish`);
//! costs come from that op's `Input Dims`, `Input type` and `Concrete Inputs`, which the
//! reader keeps as text ([`Capture::op_shapes`]) and this module parses for modelled ops only.

use std::collections::BTreeMap;

use trace_model::{Capture, HostEvent, HostKind};

use crate::aten_cost::{ShapeArgs, aten_cost, is_costed_op};
use crate::model::{RawRow, Rows, TrustItem};

/// The shape arguments of a CPU op, parsed from the texts the capture keeps (empty when
/// none were recorded; an entry that is not an array of integers reads as no dimensions).
fn shape_args(capture: &Capture, event: &HostEvent) -> ShapeArgs {
    let Some(shapes) = capture.op_shapes(event) else {
        return ShapeArgs::default();
    };
    let values =
        |text: &str| serde_json::from_str::<Vec<serde_json::Value>>(text).unwrap_or_default();
    let dims = values(capture.name(shapes.dims))
        .iter()
        .map(|d| {
            d.as_array()
                .map(|items| items.iter().filter_map(serde_json::Value::as_i64).collect())
                .unwrap_or_default()
        })
        .collect();
    let text = |id: Option<trace_model::StringId>| -> Vec<String> {
        id.map(|id| values(capture.name(id)))
            .unwrap_or_default()
            .into_iter()
            .map(|x| match x {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            })
            .collect()
    };
    ShapeArgs {
        dims,
        types: text(shapes.types),
        concrete: text(shapes.concrete),
    }
}

/// Rows (before peaks), trust items and total GPU time of a capture with CPU ops (a
/// format that records no shapes gives ops without shapes, so no costed rows).
pub(crate) fn rows(capture: &Capture) -> Rows {
    let described = capture.meta().described_devices.clone();
    let events = capture.host_events();

    // The outermost modelled op around (or at) each CPU op, settled parents first.
    let parent = capture.enclosing_cpu_ops();
    let mut owner: Vec<Option<usize>> = vec![None; events.len()];
    let mut ops: Vec<usize> = (0..events.len())
        .filter(|&i| events[i].kind == HostKind::CpuOp)
        .collect();
    ops.sort_by_key(|&i| trace_model::nesting_order(&events[i]));
    for i in ops {
        let inherited = parent[i].and_then(|p| owner[p]);
        owner[i] = inherited.or_else(|| is_costed_op(capture.name(events[i].name)).then_some(i));
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
        let args = shape_args(capture, event);
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
        trust.push(TrustItem::timed(
            "op-without-shapes",
            "modelled ATen ops without Input Dims: capture with record_shapes=True",
            no_shapes.0,
            "ops",
            trace_model::Nanos(no_shapes.1),
        ));
    }
    if bad_shapes.0 > 0 {
        trust.push(TrustItem::timed(
            "op-shapes-unexpected",
            format!(
                "modelled ATen ops whose shapes do not fit the model, e.g. {}",
                bad_shapes.2
            ),
            bad_shapes.0,
            "ops",
            trace_model::Nanos(bad_shapes.1),
        ));
    }
    if not_modelled.0 > 0 {
        trust.push(TrustItem::timed(
            "activity-not-under-modelled-op",
            "GPU activities not launched under a modelled ATen op (GEMM, convolution, attention): no FLOPs",
            not_modelled.0,
            "activities",
            trace_model::Nanos(not_modelled.1),
        ));
    }
    Rows {
        raw: by_signature.into_values().map(|(row, _)| row).collect(),
        trust,
        gpu_time,
        described,
    }
}
