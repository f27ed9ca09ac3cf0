//! JAX (XSpace) captures: kernels are attributed to HLO instructions by their `hlo_op` and
//! `program_id` stats; costs come from the HLO modules stored in `/host:metadata`.

use std::collections::BTreeMap;

use trace_model::Nanos;

use load::Loaded;

use crate::hlo_cost::{ModuleIndex, instruction_cost};
use crate::model::{RawRow, Rows, TrustItem};

const OCCURRENCES: &str = "executions = runs of consecutive kernels of the op on a stream (one run: kernels / distinct kernel names); the capture records no execution id";

/// Rows (before peaks) and trust items of an XSpace capture, its HLO programs decoded by
/// the loader.
pub(crate) fn rows(loaded: &Loaded) -> Rows {
    let (capture, path) = (&loaded.capture, &loaded.path);
    let mut trust = Vec::new();
    let mut modules = Vec::new();
    for program in &loaded.programs {
        match &program.module {
            Ok(module) => modules.push((program.id, program.name.as_str(), module)),
            Err(e) => trust.push(TrustItem::timed(
                "hlo-module-unreadable",
                format!(
                    "{}: HLO module {}({}) could not be decoded: {e}",
                    path.display(),
                    program.name,
                    program.id
                ),
                1,
                "modules",
                trace_model::Nanos::ZERO,
            )),
        }
    }
    let indexes: Vec<(i64, &str, ModuleIndex<'_>)> = modules
        .iter()
        .map(|(id, name, module)| (*id, *name, ModuleIndex::new(module)))
        .collect();

    // Executions: a run of consecutive activities on one stream with the same (program,
    // hlo_op) is one execution of that instruction, however many kernels it launched.
    #[derive(Default)]
    struct Acc {
        occurrences: u64,
        kernels: u64,
        time: Nanos,
        tf32: bool,
        runs: u64,
        names: std::collections::BTreeSet<trace_model::StringId>,
    }
    let mut by_op: BTreeMap<(Option<i64>, String, String), Acc> = BTreeMap::new();
    let mut unattributed = (0u64, 0i64);
    let mut gpu_time = 0i64;
    let mut previous: Option<(trace_model::StreamId, Option<i64>, trace_model::StringId)> = None;
    for activity in capture.activities() {
        gpu_time += activity.dur.0;
        let Some(hlo_op) = activity.hlo_op() else {
            unattributed.0 += 1;
            unattributed.1 += activity.dur.0;
            previous = None;
            continue;
        };
        let text = capture.name(hlo_op);
        let leaf = text.rsplit("::").next().unwrap_or(text).to_owned();
        let module = capture
            .hlo_module(activity)
            .map(|m| capture.name(m).to_owned())
            .unwrap_or_default();
        let program_id = capture.program_id(activity);
        let key = (program_id, module, leaf);
        let this = (activity.stream, program_id, hlo_op);
        let acc = by_op.entry(key).or_default();
        if previous != Some(this) {
            acc.runs += 1;
        }
        acc.names.insert(activity.name);
        previous = Some(this);
        acc.kernels += 1;
        acc.time += activity.dur;
        acc.tf32 |= crate::is_tf32_kernel(capture.name(activity.name));
    }
    if unattributed.0 > 0 {
        trust.push(TrustItem::timed(
            "activity-without-hlo-op",
            "GPU activities without an hlo_op stat are in no op's time",
            unattributed.0,
            "activities",
            trace_model::Nanos(unattributed.1),
        ));
    }

    // Executions: the kernels of one execution of an HLO op are consecutive on its stream,
    // so each run of them is one execution. A single run (a program of one op, executed
    // back to back) holds several executions when its kernel names repeat: then count
    // kernels per distinct name.
    for acc in by_op.values_mut() {
        let names = acc.names.len().max(1) as u64;
        acc.occurrences = if acc.runs > 1 {
            acc.runs
        } else {
            (acc.kernels / names).max(1)
        };
    }
    let mut rows = Vec::new();
    let mut missing = (0u64, 0i64);
    for ((program_id, module_name, leaf), acc) in by_op {
        // By program id; older captures name only the module.
        let index = indexes
            .iter()
            .find(|(id, _, _)| program_id == Some(*id))
            .or_else(|| {
                let mut same = indexes.iter().filter(|(_, name, _)| *name == module_name);
                match (same.next(), same.next()) {
                    (Some(one), None) => Some(one),
                    _ => None,
                }
            });
        let found = index.and_then(|(id, name, index)| {
            index
                .instruction(&leaf)
                .map(|(comp, inst)| (*id, *name, index, comp, inst))
        });
        let Some((id, name, index, comp, inst)) = found else {
            missing.0 += 1;
            missing.1 += acc.time.0;
            continue;
        };
        let cost = instruction_cost(index, comp, inst);
        let tf32_kernels = acc.tf32;
        rows.push(RawRow {
            name: leaf.clone(),
            program_id: Some(id),
            module: Some(name.to_owned()),
            hlo_op: Some(leaf),
            op: None,
            detail: format!("{} {}", inst.opcode, hlo_parser_shape(&inst.shape)),
            kind: cost.kind,
            dtype: cost.dtype,
            occurrences: acc.occurrences,
            occurrences_assumption: Some(OCCURRENCES.to_owned()),
            kernels: acc.kernels,
            flops_per_occurrence: cost.flops,
            bytes_per_occurrence: cost.bytes,
            time_ns: acc.time.0,
            transcendental_elements: cost.transcendental_elements,
            cost_assumptions: cost.note,
            tf32_kernels,
        });
    }
    if missing.0 > 0 {
        trust.push(TrustItem::timed(
            "hlo-op-not-in-module",
            "ops named by kernels' hlo_op but not found in any stored HLO module",
            missing.0,
            "ops",
            trace_model::Nanos(missing.1),
        ));
    }
    let described = capture.devices().to_vec();
    Rows {
        raw: rows,
        trust,
        gpu_time,
        described,
    }
}

fn hlo_parser_shape(shape: &hlo_parser::Shape) -> String {
    match shape {
        hlo_parser::Shape::Array(a) => {
            let dims: Vec<String> = a.dimensions.iter().map(i64::to_string).collect();
            format!("{}[{}]", a.element_type.name(), dims.join(","))
        }
        hlo_parser::Shape::Tuple(items) => {
            let parts: Vec<String> = items.iter().map(hlo_parser_shape).collect();
            format!("({})", parts.join(", "))
        }
        hlo_parser::Shape::Token => "token[]".to_owned(),
        hlo_parser::Shape::Opaque => "opaque[]".to_owned(),
        // A shape kind hlo-parser adds later.
        _ => "unknown[]".to_owned(),
    }
}
