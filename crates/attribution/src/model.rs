//! The result of an attribution: one row per GPU activity, and the per-op, per-line and
//! per-match-kind tables computed from those rows (so they always add up to the rows).

use std::collections::BTreeMap;

use trace_model::{Nanos, Provenance, TrustItem};

use crate::SharedName;

/// Options of an attribution.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// JAX: attribute only this program's kernels (the others are counted in the summary).
    /// Without it every program is attributed, and the one with the most GPU time is the
    /// program whose HLO text is written.
    pub program: Option<i64>,
    /// Which Python frame counts as user code: a regex over the frame's file path. Default:
    /// JAX, the first frame outside site-packages and JAX; PyTorch, the first frame outside
    /// site-packages, torch and the Python standard library.
    pub user_re: Option<regex::Regex>,
}

/// How a kernel was matched. Each kernel gets exactly one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum MatchKind {
    /// JAX: the tracer's own `hlo_op` stat names an instruction of the program. PyTorch: the
    /// whole chain kernel → launch → CPU op → Python user frame is in the trace.
    Exact,
    /// A graph (command-buffer) kernel, or a kernel without `hlo_op`, whose name is the only
    /// candidate in its window.
    Name,
    /// Matched in schedule order to the next candidate of its kind in its window (library
    /// GEMMs, copies, collectives, async collectives missing from the stored module).
    Order,
    /// Nsight Systems and ROCm captures (no CPU ops): the kernel's launch lies inside an
    /// annotation range (NVTX, rocprof marker) on the launching thread, and the innermost
    /// such range names it.
    EnclosingRange,
    /// No candidate left (or, PyTorch, a broken chain).
    None,
}

impl MatchKind {
    /// Every match kind, from the most to the least certain.
    pub const ALL: [MatchKind; 5] = [
        MatchKind::Exact,
        MatchKind::Name,
        MatchKind::Order,
        MatchKind::EnclosingRange,
        MatchKind::None,
    ];

    /// The kind as the CSV files name it.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchKind::Exact => "exact",
            MatchKind::Name => "name",
            MatchKind::Order => "order",
            MatchKind::EnclosingRange => "enclosing range",
            MatchKind::None => "none",
        }
    }
}

/// Which record decided a kernel's match (`how.csv`'s `decided by` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum DecidedBy {
    /// `hlo_op` + `program_id` stats.
    HloOpProgramId,
    /// `hlo_op` + `hlo_module` stats (no `program_id`, or an id with no stored module).
    HloOpModule,
    /// The kernel name, the only candidate of its window.
    KernelNameInWindow,
    /// The kernel name, the only candidate inside its command buffer / CUDA graph.
    KernelNameInGraph,
    /// The next free launching instruction of the window, in schedule order.
    ScheduleOrder,
    /// An async collective's `hlo_op` missing from the module: the next collective-start
    /// instruction of the same kind, in schedule order.
    AsyncStartOrder,
    /// A graph kernel whose name matches no candidate, or several.
    GraphAmbiguous,
    /// Kernels in a window with no free candidate.
    NoCandidate,
    /// No `program_id`/`hlo_module` stat, or one naming no stored module (runtime copies,
    /// transfers outside any program).
    NoProgram,
    /// PyTorch: correlation id → runtime launch → CPU op → Python user frame.
    CorrelationChain,
    /// PyTorch: no runtime launch with the kernel's correlation id.
    NoLaunch,
    /// PyTorch: a launch with no enclosing CPU op.
    NoCpuOp,
    /// A launch with no enclosing CPU op, inside an annotation range (NVTX, ROCm marker,
    /// `record_function`) on the launching thread: the innermost such range stands for the
    /// op (Nsight Systems and ROCm captures have no CPU ops; PyTorch's `emit_nvtx` names the
    /// ranges after the ops).
    EnclosingRange,
    /// TensorFlow's XSpace (no HLO programs): the op of its `TensorFlow Ops` line whose
    /// span encloses the kernel on the same GPU.
    TensorFlowOpLine,
    /// PyTorch: a CPU op with no enclosing `python_function` frame (or none in the trace).
    NoPythonStack,
    /// PyTorch: a Python stack with no frame that counts as user code.
    NoUserFrame,
}

impl DecidedBy {
    /// The record as `how.csv` names it.
    pub fn as_str(self) -> &'static str {
        match self {
            DecidedBy::HloOpProgramId => "hlo_op+program_id",
            DecidedBy::HloOpModule => "hlo_op+hlo_module",
            DecidedBy::KernelNameInWindow => "kernel name in window",
            DecidedBy::KernelNameInGraph => "kernel name in graph",
            DecidedBy::ScheduleOrder => "schedule order",
            DecidedBy::AsyncStartOrder => "collective-start in schedule order",
            DecidedBy::GraphAmbiguous => "graph kernel: no unique name",
            DecidedBy::NoCandidate => "no candidate left",
            DecidedBy::NoProgram => "no program",
            DecidedBy::CorrelationChain => "correlation->launch->cpu_op->python_function",
            DecidedBy::NoLaunch => "no launch",
            DecidedBy::NoCpuOp => "no CPU op",
            DecidedBy::EnclosingRange => "correlation->launch->innermost annotation range",
            DecidedBy::TensorFlowOpLine => "TensorFlow Ops line around the kernel",
            DecidedBy::NoPythonStack => "no Python stack",
            DecidedBy::NoUserFrame => "no user frame",
        }
    }
}

/// Which reader the capture came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum SourceFormat {
    /// An XSpace (`.xplane.pb`) of a JAX run.
    XSpace,
    /// A Kineto (PyTorch) Chrome trace.
    Kineto,
}

/// One GPU activity and what it was attributed to (a row of `kernels.csv`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KernelRow {
    /// Device ordinal (`GPU:N`).
    pub device: i64,
    /// Stream ordinal.
    pub stream: i64,
    /// Start in ns on the capture's axis (measured).
    pub start_ns: Nanos,
    /// Duration in ns (measured).
    pub dur_ns: Nanos,
    /// `kernel`, `memcpy` or `memset`.
    pub kind: &'static str,
    /// The activity's name (kernel name, or the memcpy/memset label).
    pub name: SharedName,
    /// JAX: the program the kernel belongs to, `module(id)`; empty when none.
    pub program: String,
    /// JAX: the program id the kernel carries, when it has one.
    pub program_id: Option<i64>,
    /// JAX: the HLO instruction (for `exact`, the event's `hlo_op`; an async collective
    /// missing from the module keeps its label). Empty for PyTorch.
    pub instruction: String,
    /// JAX: the instruction's `op_name`; PyTorch: the CPU op's name.
    pub op_name: SharedName,
    /// `file:line` of the user frame, empty when unknown.
    pub source_line: String,
    /// The function of that frame, when the record names it.
    pub function: String,
    /// How the kernel was matched.
    pub match_kind: MatchKind,
    /// Which record decided the match.
    pub decided_by: DecidedBy,
    /// Launched by a CUDA/HIP graph or inside a command buffer.
    pub in_graph: bool,
}

/// One row of `ops.csv`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct OpRow {
    /// JAX: the program, `module(id)`; empty for PyTorch.
    pub program: String,
    /// The op name (JAX `op_name`, PyTorch CPU op).
    pub op_name: String,
    /// Kernels attributed to the op.
    pub kernels: u64,
    /// Their GPU time, ns.
    pub gpu_time_ns: Nanos,
    /// Distinct instructions (JAX) behind the op.
    pub instructions: u64,
    /// `file:line` of the op's user frame, empty when unknown.
    pub source_line: String,
    /// Of `gpu_time_ns`, the layout transposes' (kernels the classification table calls
    /// layout: NCHW/NHWC conversions, transpose fusions, im2col), ns.
    pub layout_ns: Nanos,
}

/// One row of `lines.csv`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LineRow {
    /// `file:line` of the user frame, empty for kernels without one.
    pub source_line: String,
    /// The function of that frame, when the record names it.
    pub function: String,
    /// Kernels attributed to the line.
    pub kernels: u64,
    /// Their GPU time, ns.
    pub gpu_time_ns: Nanos,
    /// Share of the attributed (not `none`) GPU time.
    pub share_pct: f64,
}

/// One row of `how.csv`: a device (or `all`), a match kind and the stat that decided it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HowRow {
    /// The device ordinal, or `all`.
    pub device: String,
    /// How the kernels were matched.
    pub match_kind: MatchKind,
    /// Which record decided it.
    pub decided_by: DecidedBy,
    /// Kernels matched that way.
    pub kernels: u64,
    /// Their GPU time, ns.
    pub gpu_time_ns: Nanos,
    /// Share of the device's GPU time (of all devices' for `all`).
    pub share_pct: f64,
}

/// A stored program (JAX).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ProgramSummary {
    /// The program id GPU activities carry.
    pub program_id: i64,
    /// The HLO module's name.
    pub module_name: String,
    /// Instructions in the module.
    pub instructions: usize,
    /// Instructions whose Python line resolves (metadata or stack frames; measured).
    pub with_python_line: usize,
    /// Kernels attributed to the program.
    pub kernels: u64,
    /// Their GPU time, ns.
    pub gpu_time_ns: Nanos,
    /// Other ids under which the same HLO bytes are stored.
    pub same_bytes_as: Vec<i64>,
}

/// Everything an attribution found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Attribution {
    /// The capture that was read.
    pub path: String,
    /// Which reader read it.
    pub format: SourceFormat,
    /// One row per GPU activity (kernels, memcpys, memsets), each exactly once.
    pub kernels: Vec<KernelRow>,
    /// JAX: the stored programs, by id.
    pub programs: Vec<ProgramSummary>,
    /// The program with the most GPU time, or `--program`.
    pub chosen_program: Option<i64>,
    /// `<program>(<id>).hlo.txt` and its text, for the chosen program.
    pub hlo_text: Option<(String, String)>,
    /// Kernels left out by `--program` (count, GPU time).
    pub other_program_kernels: (u64, Nanos),
    /// PyTorch: whether the trace has `python_function` events at all.
    pub has_python_stacks: bool,
    /// What cannot be trusted, as items of the workspace's one trust type (a stable code,
    /// the words, and where the note counts them the kernels, their GPU time and share).
    pub notes: Vec<TrustItem>,
    /// Captures or options that would answer what this one cannot.
    pub needs_new_capture: Vec<String>,
}

impl Attribution {
    /// Σ of all activities' durations, ns (overlapping streams count twice).
    pub fn gpu_time_ns(&self) -> Nanos {
        self.kernels.iter().map(|k| k.dur_ns).sum()
    }

    /// Σ of the durations of the activities with a match (not [`MatchKind::None`]), ns.
    pub fn attributed_time_ns(&self) -> Nanos {
        self.kernels
            .iter()
            .filter(|k| k.match_kind != MatchKind::None)
            .map(|k| k.dur_ns)
            .sum()
    }

    /// Kernels and GPU time per match kind, over all devices.
    pub fn by_match_kind(&self) -> BTreeMap<MatchKind, (u64, i64)> {
        let mut out: BTreeMap<MatchKind, (u64, i64)> =
            MatchKind::ALL.iter().map(|&kind| (kind, (0, 0))).collect();
        for kernel in &self.kernels {
            let entry = out.entry(kernel.match_kind).or_default();
            entry.0 += 1;
            entry.1 += kernel.dur_ns.0;
        }
        out
    }

    /// GPU time launched by graphs / command buffers, and how much of it was attributed.
    pub fn graph_time_ns(&self) -> (Nanos, Nanos) {
        let mut total = Nanos::ZERO;
        let mut attributed = Nanos::ZERO;
        for kernel in self.kernels.iter().filter(|k| k.in_graph) {
            total += kernel.dur_ns;
            if kernel.match_kind != MatchKind::None {
                attributed += kernel.dur_ns;
            }
        }
        (total, attributed)
    }

    /// Says how much GPU time graphs (command buffers) launched and how much of it was
    /// attributed, as `said` words it (two percentages: of all GPU time, attributed; and
    /// their label, the word of their `Provenance`); when more than 5 % of all GPU time is
    /// graph time left unattributed, asks for `capture`.
    pub(crate) fn note_graphs(&mut self, said: fn(f64, f64, &str) -> String, capture: &str) {
        let (graph, attributed) = self.graph_time_ns();
        if graph <= Nanos::ZERO {
            return;
        }
        let total = self.gpu_time_ns();
        let kernels = self.kernels.iter().filter(|k| k.in_graph).count();
        let item = TrustItem::timed(
            "graph-time",
            said(
                percent(graph.0, total.0),
                percent(attributed.0, graph.0),
                Provenance::Measured.word(),
            ),
            kernels as u64,
            "kernels",
            graph,
        );
        self.notes
            .push(item.with_share((total.0 > 0).then(|| graph.0 as f64 / total.0 as f64)));
        if percent((graph - attributed).0, total.0) > 5.0 {
            self.needs_new_capture.push(capture.to_owned());
        }
    }

    /// Per (program, op_name) over all devices, by GPU time, then name.
    pub fn ops(&self) -> Vec<OpRow> {
        self.ops_of(None)
    }

    /// [`Attribution::ops`] of each device, devices in ordinal order.
    pub fn ops_by_device(&self) -> Vec<(i64, OpRow)> {
        self.devices()
            .into_iter()
            .flat_map(|d| self.ops_of(Some(d)).into_iter().map(move |row| (d, row)))
            .collect()
    }

    /// [`Attribution::lines`] of each device (shares of the device's attributed time).
    pub fn lines_by_device(&self) -> Vec<(i64, LineRow)> {
        self.devices()
            .into_iter()
            .flat_map(|d| self.lines_of(Some(d)).into_iter().map(move |row| (d, row)))
            .collect()
    }

    /// Device ordinals with activities, ascending.
    pub fn devices(&self) -> Vec<i64> {
        let mut devices: Vec<i64> = self.kernels.iter().map(|k| k.device).collect();
        devices.sort_unstable();
        devices.dedup();
        devices
    }

    fn ops_of(&self, device: Option<i64>) -> Vec<OpRow> {
        type Acc<'a> = (
            u64,
            i64,
            std::collections::BTreeSet<&'a str>,
            BTreeMap<&'a str, i64>,
            i64,
        );
        let mut by_op: BTreeMap<(&str, &str), Acc<'_>> = BTreeMap::new();
        for kernel in &self.kernels {
            if kernel.op_name.is_empty() || device.is_some_and(|d| d != kernel.device) {
                continue;
            }
            let acc = by_op
                .entry((kernel.program.as_str(), kernel.op_name.as_str()))
                .or_default();
            acc.0 += 1;
            acc.1 += kernel.dur_ns.0;
            if !kernel.instruction.is_empty() {
                acc.2.insert(kernel.instruction.as_str());
            }
            if !kernel.source_line.is_empty() {
                *acc.3.entry(kernel.source_line.as_str()).or_default() += kernel.dur_ns.0;
            }
            if kernel.kind == "kernel"
                && trace_model::classify_kernel(&kernel.name) == trace_model::KernelClass::Layout
            {
                acc.4 += kernel.dur_ns.0;
            }
        }
        let mut rows: Vec<OpRow> = by_op
            .into_iter()
            .map(
                |((program, op_name), (kernels, time, instructions, lines, layout))| {
                    let line = lines
                        .iter()
                        .max_by_key(|(line, time)| (**time, std::cmp::Reverse(**line)))
                        .map(|(line, _)| (*line).to_owned())
                        .unwrap_or_default();
                    OpRow {
                        program: program.to_owned(),
                        op_name: op_name.to_owned(),
                        kernels,
                        gpu_time_ns: Nanos(time),
                        instructions: instructions.len() as u64,
                        source_line: line,
                        layout_ns: Nanos(layout),
                    }
                },
            )
            .collect();
        rows.sort_by(|a, b| {
            b.gpu_time_ns
                .cmp(&a.gpu_time_ns)
                .then_with(|| (&a.program, &a.op_name).cmp(&(&b.program, &b.op_name)))
        });
        rows
    }

    /// Per Python line, over the attributed kernels of all devices, by GPU time, then line.
    pub fn lines(&self) -> Vec<LineRow> {
        self.lines_of(None)
    }

    fn lines_of(&self, device: Option<i64>) -> Vec<LineRow> {
        let on = |k: &&KernelRow| device.is_none_or(|d| d == k.device);
        let attributed: i64 = self
            .kernels
            .iter()
            .filter(on)
            .filter(|k| k.match_kind != MatchKind::None)
            .map(|k| k.dur_ns.0)
            .sum();
        let mut by_line: BTreeMap<(&str, &str), (u64, i64)> = BTreeMap::new();
        for kernel in self.kernels.iter().filter(on) {
            if kernel.match_kind == MatchKind::None || kernel.source_line.is_empty() {
                continue;
            }
            let acc = by_line
                .entry((kernel.source_line.as_str(), kernel.function.as_str()))
                .or_default();
            acc.0 += 1;
            acc.1 += kernel.dur_ns.0;
        }
        let mut rows: Vec<LineRow> = by_line
            .into_iter()
            .map(|((line, function), (kernels, time))| LineRow {
                source_line: line.to_owned(),
                function: function.to_owned(),
                kernels,
                gpu_time_ns: Nanos(time),
                share_pct: percent(time, attributed),
            })
            .collect();
        rows.sort_by(|a, b| {
            b.gpu_time_ns
                .cmp(&a.gpu_time_ns)
                .then_with(|| (&a.source_line, &a.function).cmp(&(&b.source_line, &b.function)))
        });
        rows
    }

    /// Per device (`all` first, then each ordinal), match kind and deciding stat.
    pub fn how(&self) -> Vec<HowRow> {
        type ByKind = BTreeMap<(MatchKind, DecidedBy), (u64, i64)>;
        let mut groups: BTreeMap<Option<i64>, ByKind> = BTreeMap::new();
        for kernel in &self.kernels {
            for device in [None, Some(kernel.device)] {
                let acc = groups
                    .entry(device)
                    .or_default()
                    .entry((kernel.match_kind, kernel.decided_by))
                    .or_default();
                acc.0 += 1;
                acc.1 += kernel.dur_ns.0;
            }
        }
        let mut rows = Vec::new();
        for (device, by_kind) in groups {
            let total: i64 = by_kind.values().map(|(_, time)| time).sum();
            let count: u64 = by_kind.values().map(|(count, _)| count).sum();
            for ((match_kind, decided_by), (kernels, time)) in by_kind {
                rows.push(HowRow {
                    device: device.map_or_else(|| "all".to_owned(), |d| d.to_string()),
                    match_kind,
                    decided_by,
                    kernels,
                    gpu_time_ns: Nanos(time),
                    // A device whose activities all last 0 ns: shares by count.
                    share_pct: if total > 0 {
                        percent(time, total)
                    } else {
                        percent(kernels as i64, count as i64)
                    },
                });
            }
        }
        rows
    }
}

pub(crate) fn percent(part: i64, whole: i64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}
