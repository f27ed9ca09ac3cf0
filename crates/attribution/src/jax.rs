//! JAX / XLA: kernels to HLO instructions of the programs stored in `/host:metadata`.
//!
//! Per device and program, kernels are taken in start order. A kernel whose `hlo_op` names a
//! launching instruction of its program is `exact`; it also places a cursor in the program's
//! schedule (computations inlined, `while` bodies unrolled `known_trip_count` times, a new
//! execution when the instruction lies behind the cursor). The kernels between two adjacent
//! exact kernels form a window; their candidates are the free launching instructions between
//! the two exact instructions in the schedule. Graph kernels (CUDA graph ids, or an `hlo_op`
//! naming a call into a `command_buffer*` computation) match by name inside their graph when
//! that is unique (`name`), else `none`; other kernels match by name, else by schedule order
//! (`order`); async collectives whose `hlo_op` is missing from the module take the next
//! collective-start of the same kind, keeping their label.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use hlo_parser::{Frame, HloModule, Instruction};
use trace_model::{ActivityKind, Capture, GpuActivity, KernelClass, Nanos, TrustItem};

use crate::model::{Attribution, Config, DecidedBy, KernelRow, MatchKind, ProgramSummary};
use crate::shared::{NameCache, SharedName};
use crate::{Error, SourceFormat};

/// One decoded program: its id, module name and HLO module.
#[derive(Debug, Clone, Copy)]
pub struct ProgramModule<'a> {
    /// The program id GPU activities carry (`program_id` stat).
    pub program_id: i64,
    /// The HLO module's name.
    pub module_name: &'a str,
    /// The parsed module.
    pub module: &'a HloModule,
}

/// The most slots one program's unrolled schedule may take; a loop nest beyond it is cut and
/// said in the notes.
const MAX_SLOTS: usize = 4_000_000;

/// Opcodes that never launch GPU work of their own.
const NO_KERNEL: &[&str] = &[
    "parameter",
    "constant",
    "get-tuple-element",
    "tuple",
    "bitcast",
    "while",
    "call",
    "conditional",
    "after-all",
    "add-dependency",
    "partition-id",
    "replica-id",
    "opt-barrier",
    "domain",
    "async-start",
    "async-update",
    "async-done",
    "all-gather-done",
    "all-reduce-done",
    "collective-permute-done",
    "copy-done",
    "send-done",
    "recv-done",
    "get-dimension-size",
];

/// Attributes the GPU activities of an XSpace capture to the given programs.
pub fn attribute_xspace(
    capture: &Capture,
    programs: &[ProgramModule<'_>],
    config: &Config,
) -> Result<Attribution, Error> {
    let path = String::new();
    attribute(capture, programs, config, &path, &[])
}

pub(crate) fn attribute(
    capture: &Capture,
    programs: &[ProgramModule<'_>],
    config: &Config,
    path: &str,
    same_bytes: &[Vec<i64>],
) -> Result<Attribution, Error> {
    let user = |frame: &Frame<'_>| match &config.user_re {
        Some(re) => re.is_match(frame.file),
        None => hlo_parser::is_default_user_frame(frame),
    };
    let mut notes = Vec::new();
    // Resolve each activity's program.
    let by_id: HashMap<i64, usize> = programs
        .iter()
        .enumerate()
        .map(|(index, p)| (p.program_id, index))
        .collect();
    let program_of = |activity: &GpuActivity| -> Option<(usize, DecidedBy)> {
        if let Some(&index) = capture.program_id(activity).and_then(|id| by_id.get(&id)) {
            return Some((index, DecidedBy::HloOpProgramId));
        }
        let module = capture.name(capture.hlo_module(activity)?);
        let hlo_op = activity.hlo_op().map(|op| capture.name(op));
        // Several programs of the same module name: the one that holds the instruction.
        let mut same = programs
            .iter()
            .enumerate()
            .filter(|(_, p)| p.module_name == module || p.module.name == module);
        let first = same.clone().next()?;
        let holding = same.find(|(_, p)| hlo_op.is_some_and(|op| schedule_has(p, op)));
        Some((holding.unwrap_or(first).0, DecidedBy::HloOpModule))
    };

    let mut names = NameCache::default();
    let mut rows: Vec<Option<KernelRow>> = vec![None; capture.activities().len()];
    // Group activities by (device, program), in start order.
    let mut groups: BTreeMap<(i64, usize), Vec<usize>> = BTreeMap::new();
    for (index, activity) in capture.activities().iter().enumerate() {
        let device = capture
            .device(capture.stream(activity.stream).device)
            .ordinal;
        match program_of(activity) {
            Some((program, _)) => groups.entry((device, program)).or_default().push(index),
            None => rows[index] = Some(base_row(capture, activity, None, &mut names)),
        }
    }
    // Schedules only for programs that ran: an unrolled schedule can be large.
    let mut schedules: HashMap<usize, Schedule<'_>> = HashMap::new();
    for &(_, program_index) in groups.keys() {
        schedules.entry(program_index).or_insert_with(|| {
            let schedule = Schedule::new(&programs[program_index]);
            if schedule.truncated {
                let program = &programs[program_index];
                notes.push(TrustItem::note(
                    "schedule-truncated",
                    format!(
                        "program {}({}): the unrolled schedule was cut at {MAX_SLOTS} slots; later kernels of a window may go unmatched",
                        program.module_name, program.program_id
                    ),
                ));
            }
            schedule
        });
    }
    for ((_, program_index), mut members) in groups {
        members.sort_by_key(|&i| {
            let a = &capture.activities()[i];
            (a.start, a.stream, a.source_index)
        });
        let program = &programs[program_index];
        let schedule = &schedules[&program_index];
        let decided_exact = program_of(&capture.activities()[members[0]])
            .map_or(DecidedBy::HloOpProgramId, |(_, d)| d);
        let matched = match_group(capture, program, schedule, &members, decided_exact);
        for (index, m) in members.iter().zip(matched) {
            let activity = &capture.activities()[*index];
            let mut row = base_row(capture, activity, Some(program), &mut names);
            row.match_kind = m.kind;
            row.decided_by = m.decided_by;
            row.in_graph |= m.in_graph;
            if let Some(label) = m.label {
                row.instruction = label;
            }
            if let Some(slot) = m.slot {
                let (computation, instruction) = schedule.slots[slot];
                let inst = &program.module.computations[computation].instructions[instruction];
                if row.instruction.is_empty() {
                    row.instruction = inst.name.clone();
                }
                row.op_name = names.text(&inst.metadata.op_name);
                if let Some((file, line, function)) =
                    python_line(program.module, inst, config, &user)
                {
                    row.source_line = format!("{file}:{line}");
                    row.function = function.to_owned();
                }
            }
            rows[*index] = Some(row);
        }
    }
    let mut kernels: Vec<KernelRow> = rows
        .into_iter()
        .map(|row| row.expect("invariant: every activity gets a row (program group or none)"))
        .collect();

    // Programs, their GPU time, the chosen one.
    let mut summaries = program_summaries(programs, same_bytes);
    for kernel in &kernels {
        if let Some(summary) = kernel
            .program_id
            .and_then(|id| summaries.iter_mut().find(|s| s.program_id == id))
        {
            summary.kernels += 1;
            summary.gpu_time_ns += kernel.dur_ns;
        }
    }
    let chosen = match config.program {
        Some(id) => {
            if !programs.iter().any(|p| p.program_id == id) {
                let known: Vec<String> =
                    programs.iter().map(|p| p.program_id.to_string()).collect();
                return Err(Error::NoSuchProgram {
                    path: path.to_owned(),
                    program: id,
                    known: known.join(", "),
                });
            }
            Some(id)
        }
        None => summaries
            .iter()
            .filter(|s| s.kernels > 0)
            .max_by_key(|s| (s.gpu_time_ns, std::cmp::Reverse(s.program_id)))
            .map(|s| s.program_id),
    };
    let mut other = (0u64, Nanos::ZERO);
    if let Some(id) = config.program {
        kernels.retain(|k| {
            let keep = k.program_id == Some(id);
            if !keep {
                other.0 += 1;
                other.1 += k.dur_ns;
            }
            keep
        });
    }
    let hlo_text = chosen.and_then(|id| {
        let p = programs.iter().find(|p| p.program_id == id)?;
        Some((
            format!(
                "{}({}).hlo.txt",
                p.module_name.replace(['/', '\\'], "_"),
                p.program_id
            ),
            hlo_parser::module_text(p.module),
        ))
    });
    notes.extend(stored_again_notes(&summaries));
    let mut result = Attribution {
        path: path.to_owned(),
        format: SourceFormat::XSpace,
        kernels,
        programs: summaries,
        chosen_program: chosen,
        hlo_text,
        other_program_kernels: other,
        has_python_stacks: true,
        notes,
        needs_new_capture: Vec::new(),
    };
    result.note_graphs(
        |graph, attributed, label| format!(
            "{graph:.1} % of GPU time runs inside CUDA graphs / command buffers; {attributed:.1} % of that was attributed ({label})"
        ),
        "graph kernels that could not be attributed: profile again with command buffers disabled (XLA_FLAGS=--xla_gpu_enable_command_buffer=) or with per-node graph tracing",
    );
    Ok(result)
}

/// The programs stored again under other ids: one note per group of ids, on its smallest
/// id.
fn stored_again_notes(summaries: &[ProgramSummary]) -> Vec<TrustItem> {
    summaries
        .iter()
        .filter(|s| s.same_bytes_as.iter().any(|&id| id > s.program_id))
        .filter(|s| s.same_bytes_as.iter().all(|&id| id > s.program_id))
        .map(|summary| {
            let ids: Vec<String> = summary.same_bytes_as.iter().map(i64::to_string).collect();
            TrustItem::note(
                "program-stored-again",
                format!(
                    "program {}({}) is stored again under id(s) {}: kernels are matched by the id they carry (read)",
                    summary.module_name,
                    summary.program_id,
                    ids.join(", ")
                ),
            )
        })
        .collect()
}

/// Each program's summary (its instructions, those with a Python line, the programs of the
/// same bytes), before its kernels are counted.
fn program_summaries(
    programs: &[ProgramModule<'_>],
    same_bytes: &[Vec<i64>],
) -> Vec<ProgramSummary> {
    programs
        .iter()
        .map(|p| {
            let mut with_line = 0;
            let mut instructions = 0;
            for (_, inst) in p.module.instructions() {
                instructions += 1;
                if p.module.source_line(inst).is_some() {
                    with_line += 1;
                }
            }
            let same_bytes_as = same_bytes
                .iter()
                .find(|ids| ids.contains(&p.program_id))
                .map(|ids| {
                    ids.iter()
                        .copied()
                        .filter(|&id| id != p.program_id)
                        .collect()
                })
                .unwrap_or_default();
            ProgramSummary {
                program_id: p.program_id,
                module_name: p.module_name.to_owned(),
                instructions,
                with_python_line: with_line,
                kernels: 0,
                gpu_time_ns: Nanos::ZERO,
                same_bytes_as,
            }
        })
        .collect()
}

/// The instruction's Python line. With `--user-re`, the stack frames decide when the
/// instruction has them (the metadata's `source_file` is one fixed frame); otherwise
/// `source_file:source_line`, else the first user frame of the stack.
fn python_line<'m>(
    module: &'m HloModule,
    inst: &'m Instruction,
    config: &Config,
    user: &dyn Fn(&Frame<'_>) -> bool,
) -> Option<(&'m str, i32, &'m str)> {
    if config.user_re.is_some() && inst.metadata.stack_frame_id > 0 {
        let stack = module.stack(inst.metadata.stack_frame_id);
        if let Some(frame) = stack
            .iter()
            .find(|frame| user(frame) && !frame.file.is_empty() && frame.line > 0)
        {
            return Some((frame.file, frame.line, frame.function));
        }
    }
    let line = module.source_line_with(inst, user)?;
    Some((line.file, line.line, line.function))
}

fn schedule_has(program: &ProgramModule<'_>, op: &str) -> bool {
    program.module.instruction(op).is_some()
}

fn base_row(
    capture: &Capture,
    activity: &GpuActivity,
    program: Option<&ProgramModule<'_>>,
    names: &mut NameCache<'_>,
) -> KernelRow {
    let stream = capture.stream(activity.stream);
    KernelRow {
        device: capture.device(stream.device).ordinal,
        stream: stream.ordinal,
        start_ns: activity.start,
        dur_ns: activity.dur,
        kind: kind_name(activity.kind),
        name: names.id(capture, activity.name),
        program: program
            .map(|p| format!("{}({})", p.module_name, p.program_id))
            .unwrap_or_default(),
        program_id: program.map(|p| p.program_id),
        instruction: String::new(),
        op_name: SharedName::default(),
        source_line: String::new(),
        function: String::new(),
        match_kind: MatchKind::None,
        decided_by: DecidedBy::NoProgram,
        in_graph: capture.activity_graph_id(activity).is_some(),
    }
}

pub(crate) fn kind_name(kind: ActivityKind) -> &'static str {
    match kind {
        ActivityKind::Kernel => "kernel",
        ActivityKind::Memcpy => "memcpy",
        ActivityKind::Memset => "memset",
        _ => "other",
    }
}

/// A program's schedule, unrolled: one slot per launching instruction execution.
struct Schedule<'m> {
    /// (computation index, instruction index) of each slot.
    slots: Vec<(usize, usize)>,
    /// For each slot, the `command_buffer*` call it lies in (slot range of the call), if any.
    graph: Vec<Option<u32>>,
    /// Slots of each launching instruction, by name, ascending.
    positions: HashMap<&'m str, Vec<usize>>,
    /// Instruction names that are calls into `command_buffer*` computations → call id.
    graph_calls: HashMap<&'m str, u32>,
    truncated: bool,
}

impl<'m> Schedule<'m> {
    fn new(program: &'m ProgramModule<'m>) -> Schedule<'m> {
        let module = &program.module;
        let index: HashMap<&str, usize> = module
            .computations
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.as_str(), i))
            .collect();
        let mut schedule = Schedule {
            slots: Vec::new(),
            graph: Vec::new(),
            positions: HashMap::new(),
            graph_calls: HashMap::new(),
            truncated: false,
        };
        if let Some(&entry) = index.get(module.entry_computation.as_str()) {
            let mut next_call = 0;
            schedule.walk(module, &index, entry, None, &mut next_call, 0);
        }
        for (slot, &(c, i)) in schedule.slots.iter().enumerate() {
            let name = module.computations[c].instructions[i].name.as_str();
            schedule.positions.entry(name).or_default().push(slot);
        }
        schedule
    }

    fn walk(
        &mut self,
        module: &'m HloModule,
        index: &HashMap<&str, usize>,
        computation: usize,
        graph: Option<u32>,
        next_call: &mut u32,
        depth: usize,
    ) {
        if depth > 64 {
            return;
        }
        let comp = &module.computations[computation];
        for (i, inst) in comp.instructions.iter().enumerate() {
            if self.slots.len() >= MAX_SLOTS {
                self.truncated = true;
                return;
            }
            let called = |name: &String| index.get(name.as_str()).copied();
            match inst.opcode.as_str() {
                "while" => {
                    let trip = inst.known_trip_count().unwrap_or(1).clamp(0, 1 << 20);
                    let body = inst.called_computations.first().and_then(called);
                    let condition = inst.called_computations.get(1).and_then(called);
                    for _ in 0..trip {
                        if let Some(c) = condition {
                            self.walk(module, index, c, graph, next_call, depth + 1);
                        }
                        if let Some(b) = body {
                            self.walk(module, index, b, graph, next_call, depth + 1);
                        }
                    }
                }
                "call" | "async-start" | "conditional" => {
                    let mut inner = graph;
                    let is_graph = inst
                        .called_computations
                        .iter()
                        .any(|c| c.starts_with("command_buffer"));
                    if is_graph {
                        let id = *next_call;
                        *next_call += 1;
                        self.graph_calls.entry(inst.name.as_str()).or_insert(id);
                        inner = Some(id);
                    }
                    // A conditional's branches are all candidates: the trace cannot say
                    // which one ran.
                    for c in inst.called_computations.iter().filter_map(called) {
                        self.walk(module, index, c, inner, next_call, depth + 1);
                    }
                }
                opcode if launches(opcode) => {
                    self.slots.push((computation, i));
                    self.graph.push(graph);
                }
                _ => {}
            }
        }
    }
}

fn launches(opcode: &str) -> bool {
    !NO_KERNEL.contains(&opcode)
}

/// The outcome for one kernel.
#[derive(Debug, Clone)]
struct Matched {
    kind: MatchKind,
    decided_by: DecidedBy,
    slot: Option<usize>,
    label: Option<String>,
    in_graph: bool,
}

impl Matched {
    fn none() -> Matched {
        Matched {
            kind: MatchKind::None,
            decided_by: DecidedBy::NoCandidate,
            slot: None,
            label: None,
            in_graph: false,
        }
    }
}

/// What kind of work a kernel or an instruction is, for matching in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Copy,
    Collective,
    Gemm,
    Other,
}

fn kernel_family(activity: &GpuActivity) -> Family {
    match (activity.kind, activity.class) {
        (ActivityKind::Memcpy | ActivityKind::Memset, _) => Family::Copy,
        (_, KernelClass::Memcpy(_) | KernelClass::Memset) => Family::Copy,
        (_, KernelClass::Collective(_)) => Family::Collective,
        (_, KernelClass::Gemm) => Family::Gemm,
        _ => Family::Other,
    }
}

fn instruction_family(inst: &Instruction) -> Family {
    let op = inst.opcode.as_str();
    if op == "copy" || op == "copy-start" || op.starts_with("dynamic-update-slice") {
        Family::Copy
    } else if collective_kind(op).is_some() {
        Family::Collective
    } else if op == "dot" || (op == "custom-call" && is_gemm_call(inst)) {
        Family::Gemm
    } else {
        Family::Other
    }
}

fn is_gemm_call(inst: &Instruction) -> bool {
    inst.custom_call_target().is_some_and(|t| {
        let t = t.to_ascii_lowercase();
        t.contains("gemm") || t.contains("blas") || t.contains("matmul")
    })
}

/// `all-gather-start` / `all-gather.34` / `all-reduce-start.2` → `all-gather` / `all-reduce`.
fn collective_kind(name: &str) -> Option<&'static str> {
    const KINDS: &[&str] = &[
        "all-gather",
        "all-reduce",
        "reduce-scatter",
        "collective-permute",
        "all-to-all",
        "collective-broadcast",
        "ragged-all-to-all",
    ];
    KINDS.iter().copied().find(|k| name.starts_with(k))
}

/// XLA names a fusion's kernel after the instruction, `.` → `_`; ROCm code objects add `.kd`.
fn normalize_kernel(name: &str) -> String {
    name.strip_suffix(".kd").unwrap_or(name).replace('.', "_")
}

fn match_group(
    capture: &Capture,
    program: &ProgramModule<'_>,
    schedule: &Schedule<'_>,
    members: &[usize],
    decided_exact: DecidedBy,
) -> Vec<Matched> {
    let module = &program.module;
    let inst_at = |slot: usize| {
        let (c, i) = schedule.slots[slot];
        &module.computations[c].instructions[i]
    };
    let mut out: Vec<Matched> = vec![Matched::none(); members.len()];
    // Pass 1: exact kernels and their slots (a cursor through the unrolled schedule).
    let mut exact_slot: Vec<Option<usize>> = vec![None; members.len()];
    let mut cursor = 0usize;
    let mut last: Option<(usize, BTreeSet<trace_model::StringId>)> = None;
    for (k, &index) in members.iter().enumerate() {
        let activity = &capture.activities()[index];
        let Some(op) = activity.hlo_op().map(|op| capture.name(op)) else {
            continue;
        };
        let Some(positions) = schedule.positions.get(op) else {
            continue;
        };
        // Another kernel of the instruction just matched (one instruction, several kernels).
        if let Some((slot, names)) = &mut last
            && inst_at(*slot).name == op
            && !names.contains(&activity.name)
        {
            names.insert(activity.name);
            exact_slot[k] = Some(*slot);
            continue;
        }
        let next = positions
            .iter()
            .copied()
            .find(|&p| p >= cursor)
            .unwrap_or(positions[0]);
        exact_slot[k] = Some(next);
        cursor = next + 1;
        last = Some((next, BTreeSet::from([activity.name])));
    }
    for (k, slot) in exact_slot.iter().enumerate() {
        if let Some(slot) = slot {
            out[k] = Matched {
                kind: MatchKind::Exact,
                decided_by: decided_exact,
                slot: Some(*slot),
                label: None,
                in_graph: schedule.graph[*slot].is_some(),
            };
        }
    }
    // Pass 2: windows between adjacent exact kernels.
    let mut k = 0;
    let mut previous_slot: Option<usize> = None;
    while k < members.len() {
        if let Some(slot) = exact_slot[k] {
            previous_slot = Some(slot);
            k += 1;
            continue;
        }
        let begin = k;
        while k < members.len() && exact_slot[k].is_none() {
            k += 1;
        }
        let next_slot = exact_slot.get(k).copied().flatten();
        let lo = previous_slot.map_or(0, |s| s + 1);
        // The next exact kernel behind the previous one: a new execution began in between.
        let hi = match next_slot {
            Some(s) if s >= lo => s,
            _ => schedule.slots.len(),
        };
        let window: Vec<usize> = (lo..hi).collect();
        let mut claimed = vec![false; window.len()];
        for w in begin..k {
            let activity = &capture.activities()[members[w]];
            out[w] = match_in_window(capture, module, schedule, activity, &window, &mut claimed);
        }
    }
    out
}

fn match_in_window(
    capture: &Capture,
    module: &HloModule,
    schedule: &Schedule<'_>,
    activity: &GpuActivity,
    window: &[usize],
    claimed: &mut [bool],
) -> Matched {
    let inst_at = |slot: usize| {
        let (c, i) = schedule.slots[slot];
        &module.computations[c].instructions[i]
    };
    let name = normalize_kernel(capture.name(activity.name));
    let hlo_op = activity.hlo_op().map(|op| capture.name(op));
    // A graph kernel: launched from a CUDA graph, or its hlo_op names a command-buffer call.
    let graph_call = hlo_op.and_then(|op| schedule.graph_calls.get(op).copied());
    let is_graph = capture.activity_graph_id(activity).is_some() || graph_call.is_some();
    if is_graph {
        let candidates: Vec<usize> = (0..window.len())
            .filter(|&w| !claimed[w])
            .filter(|&w| match graph_call {
                Some(call) => schedule.graph[window[w]] == Some(call),
                None => schedule.graph[window[w]].is_some(),
            })
            .filter(|&w| normalize_kernel(&inst_at(window[w]).name) == name)
            .collect();
        return match candidates.as_slice() {
            [w] => {
                claimed[*w] = true;
                Matched {
                    kind: MatchKind::Name,
                    decided_by: DecidedBy::KernelNameInGraph,
                    slot: Some(window[*w]),
                    label: None,
                    in_graph: true,
                }
            }
            _ => Matched {
                kind: MatchKind::None,
                decided_by: DecidedBy::GraphAmbiguous,
                slot: None,
                label: hlo_op.map(str::to_owned),
                in_graph: true,
            },
        };
    }
    // An async collective whose hlo_op the stored module lacks: the next collective-start of
    // its kind, in order; the label stays.
    if let Some(op) = hlo_op
        && let Some(kind) = collective_kind(op)
    {
        let found = (0..window.len()).find(|&w| {
            let inst = inst_at(window[w]);
            !claimed[w]
                && (inst.opcode == format!("{kind}-start")
                    || (inst.opcode == kind && schedule.graph[window[w]].is_none()))
        });
        return match found {
            Some(w) => {
                claimed[w] = true;
                Matched {
                    kind: MatchKind::Order,
                    decided_by: DecidedBy::AsyncStartOrder,
                    slot: Some(window[w]),
                    label: Some(op.to_owned()),
                    in_graph: false,
                }
            }
            None => Matched {
                kind: MatchKind::None,
                decided_by: DecidedBy::NoCandidate,
                slot: None,
                label: Some(op.to_owned()),
                in_graph: false,
            },
        };
    }
    // By name, when unique among the free candidates.
    let by_name: Vec<usize> = (0..window.len())
        .filter(|&w| !claimed[w] && normalize_kernel(&inst_at(window[w]).name) == name)
        .collect();
    if let [w] = by_name.as_slice() {
        claimed[*w] = true;
        return Matched {
            kind: MatchKind::Name,
            decided_by: DecidedBy::KernelNameInWindow,
            slot: Some(window[*w]),
            label: None,
            in_graph: false,
        };
    }
    // In schedule order: the next free candidate of the same family.
    let family = kernel_family(activity);
    let found = (0..window.len()).find(|&w| {
        !claimed[w]
            && schedule.graph[window[w]].is_none()
            && instruction_family(inst_at(window[w])) == family
    });
    match found {
        Some(w) => {
            claimed[w] = true;
            Matched {
                kind: MatchKind::Order,
                decided_by: DecidedBy::ScheduleOrder,
                slot: Some(window[w]),
                label: None,
                in_graph: false,
            }
        }
        None => Matched {
            kind: MatchKind::None,
            decided_by: DecidedBy::NoCandidate,
            slot: None,
            label: hlo_op.map(str::to_owned),
            in_graph: false,
        },
    }
}
