//! FLOPs and bytes of one HLO instruction, from the shapes and attributes of `hlo-parser`'s
//! model.
//!
//! Conventions (`other_ops_against_xprof_table` in `tests/it/xprof.rs` prints where they
//! differ from XProf):
//! - `dot`: 2 x result elements x the product of the lhs contracting dimensions (so batch
//!   dimensions count once each, as part of the result).
//! - `convolution` (and cuDNN/MIOpen convolution custom calls): 2 x (input features /
//!   feature groups) x output features x (batch / batch groups) x, per spatial dimension, the
//!   number of (output, kernel) position pairs that read a real input element (padding and
//!   the holes of lhs dilation read none), the count XLA's cost analysis uses.
//! - elementwise arithmetic: one FLOP per result element, transcendental ops included (XLA
//!   charges those more; the count of transcendental elements is kept beside the FLOPs);
//!   `convert`, `compare`, `select`, bitwise and data-movement ops: none.
//! - `reduce`: (input elements - result elements) x the reducer's instruction count.
//! - `fusion`: the FLOPs of every instruction of the fused computation (nested fusions
//!   included); bytes are the fusion's operands and result only, since the fused
//!   intermediates stay in registers.
//! - cuBLAS/cuBLASLt/hipBLASLt GEMM custom calls: 2·batch·M·N·K from the operand shapes and
//!   the `dot_dimension_numbers` of the backend config; bytes exclude the workspace.
//! - collectives: bytes only (FLOPs `None`); copies, transposes and other data movement: 0
//!   FLOPs, operand and result bytes.
//! - other custom calls: FLOPs unknown (`None`), operand and result bytes.

use std::collections::HashMap;

use hlo_parser::{Computation, HloModule, Instruction, Shape};
use serde::Serialize;

use crate::Dtype;

/// What kind of op a cost is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum OpKind {
    /// An HLO `dot`.
    Dot,
    /// An HLO `convolution`.
    Convolution,
    /// A GEMM library call (cuBLAS, cuBLASLt, hipBLASLt; ATen mm/addmm/bmm/linear/matmul).
    Gemm,
    /// Fused or custom-call attention.
    Attention,
    /// Elementwise arithmetic (and fusions of it).
    Elementwise,
    /// Reductions.
    Reduce,
    /// Collectives (all-reduce, all-gather, …): bytes moved, no FLOPs model.
    Collective,
    /// Copies, transposes, slices, concatenations and other data movement.
    DataMovement,
    /// A custom call whose cost we do not model.
    CustomCall,
    /// Anything else.
    Other,
}

impl OpKind {
    /// The kind as reports name it.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Dot => "dot",
            OpKind::Convolution => "convolution",
            OpKind::Gemm => "gemm",
            OpKind::Attention => "attention",
            OpKind::Elementwise => "elementwise",
            OpKind::Reduce => "reduce",
            OpKind::Collective => "collective",
            OpKind::DataMovement => "data-movement",
            OpKind::CustomCall => "custom-call",
            OpKind::Other => "other",
        }
    }

    /// Whether the op runs on tensor/matrix cores.
    pub fn is_matrix(self) -> bool {
        matches!(
            self,
            OpKind::Dot | OpKind::Convolution | OpKind::Gemm | OpKind::Attention
        )
    }
}

/// FLOPs and bytes of one execution of an op.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpCost {
    /// What kind of op it is.
    pub kind: OpKind,
    /// `None` when the op's arithmetic is not modelled (collectives, unknown custom calls).
    pub flops: Option<f64>,
    /// Bytes read and written (operands and result, once each).
    pub bytes: f64,
    /// The operand dtype the peak is chosen by.
    pub dtype: Dtype,
    /// Elements of transcendental ops (exp, log, tanh, ...) inside the FLOPs, one FLOP each.
    pub transcendental_elements: f64,
    /// How the cost was computed, or why it is incomplete.
    pub note: String,
}

/// Name lookups over one module (the model's own lookups are linear scans).
#[derive(Debug)]
pub struct ModuleIndex<'a> {
    /// The module indexed.
    pub module: &'a HloModule,
    computations: HashMap<&'a str, &'a Computation>,
    instructions: HashMap<&'a str, (&'a Computation, &'a Instruction)>,
    by_computation: HashMap<&'a str, HashMap<&'a str, &'a Instruction>>,
}

impl<'a> ModuleIndex<'a> {
    /// Indexes the computations and instructions of `module` by name.
    pub fn new(module: &'a HloModule) -> ModuleIndex<'a> {
        let mut computations = HashMap::new();
        let mut instructions = HashMap::new();
        let mut by_computation = HashMap::new();
        for comp in &module.computations {
            computations.insert(comp.name.as_str(), comp);
            let mut local = HashMap::new();
            for inst in &comp.instructions {
                instructions
                    .entry(inst.name.as_str())
                    .or_insert((comp, inst));
                local.insert(inst.name.as_str(), inst);
            }
            by_computation.insert(comp.name.as_str(), local);
        }
        ModuleIndex {
            module,
            computations,
            instructions,
            by_computation,
        }
    }

    /// The instruction with this name and its computation.
    pub fn instruction(&self, name: &str) -> Option<(&'a Computation, &'a Instruction)> {
        self.instructions.get(name).copied()
    }

    fn operand_shapes(&self, comp: &Computation, inst: &Instruction) -> Vec<&'a Shape> {
        let local = self.by_computation.get(comp.name.as_str());
        inst.operands
            .iter()
            .filter_map(|name| local.and_then(|l| l.get(name.as_str())).map(|i| &i.shape))
            .collect()
    }
}

/// The cost of one execution of `inst` (in `comp` of the indexed module).
pub fn instruction_cost(index: &ModuleIndex<'_>, comp: &Computation, inst: &Instruction) -> OpCost {
    let operands = index.operand_shapes(comp, inst);
    let operand_bytes: f64 = operands.iter().map(|s| s.byte_size() as f64).sum();
    let result_bytes = inst.shape.byte_size() as f64;
    let float_dtype = widest_float(operands.iter().copied().chain([&inst.shape]));
    let op = inst.opcode.as_str();
    let simple = |kind, flops: Option<f64>, note: &str| OpCost {
        kind,
        flops,
        bytes: operand_bytes + result_bytes,
        dtype: float_dtype,
        transcendental_elements: 0.0,
        note: note.to_owned(),
    };
    match op {
        "dot" => {
            let flops = dot_flops(inst, &operands);
            OpCost {
                dtype: matrix_dtype(&operands),
                ..simple(OpKind::Dot, flops, "2 x result elements x contracting size")
            }
        }
        "convolution" => {
            let shapes = ConvShapes::forward(&operands, &inst.shape);
            OpCost {
                dtype: matrix_dtype(&operands),
                ..simple(
                    OpKind::Convolution,
                    shapes.and_then(|s| conv_flops(inst, s)),
                    "2 x in-features/groups x out-features x batch x valid window positions",
                )
            }
        }
        "fusion" => fusion_cost(index, inst, &operands, operand_bytes, result_bytes),
        "custom-call" => custom_call_cost(inst, &operands, operand_bytes),
        "reduce" => {
            let flops = reduce_flops(index, inst, &operands);
            simple(
                OpKind::Reduce,
                Some(flops),
                "(input - result elements) x reducer ops",
            )
        }
        _ if is_collective(op) => simple(
            OpKind::Collective,
            None,
            "collective: bytes only (operands and result)",
        ),
        _ if is_data_movement(op) => simple(OpKind::DataMovement, Some(0.0), "data movement"),
        _ => {
            let (flops, transcendental) = elementwise_flops(op, &inst.shape);
            if flops > 0.0 || is_zero_flop_elementwise(op) {
                OpCost {
                    transcendental_elements: transcendental,
                    ..simple(
                        OpKind::Elementwise,
                        Some(flops),
                        "one FLOP per result element",
                    )
                }
            } else {
                simple(OpKind::Other, None, "cost not modelled for this opcode")
            }
        }
    }
}

/// Operand and result shapes of a convolution in forward terms.
#[derive(Debug, Clone, Copy)]
struct ConvShapes<'a> {
    input: &'a Shape,
    kernel: &'a Shape,
    output: &'a Shape,
}

impl<'a> ConvShapes<'a> {
    fn forward(operands: &[&'a Shape], result: &'a Shape) -> Option<ConvShapes<'a>> {
        Some(ConvShapes {
            input: operands.first()?,
            kernel: operands.get(1)?,
            output: result,
        })
    }
}

fn array_dims(shape: &Shape) -> Option<&[i64]> {
    match shape {
        Shape::Array(a) => Some(&a.dimensions),
        _ => None,
    }
}

fn first_array(shape: &Shape) -> &Shape {
    match shape {
        Shape::Tuple(items) => items.first().map_or(shape, first_array),
        _ => shape,
    }
}

fn elements(shape: &Shape) -> f64 {
    match shape {
        Shape::Array(a) => a.dimensions.iter().product::<i64>() as f64,
        Shape::Tuple(items) => items.iter().map(elements).sum(),
        _ => 0.0,
    }
}

fn shape_dtype(shape: &Shape) -> Option<Dtype> {
    match first_array(shape) {
        Shape::Array(a) => Some(Dtype::from_element_type(a.element_type)),
        _ => None,
    }
}

fn widest_float<'s>(shapes: impl Iterator<Item = &'s Shape>) -> Dtype {
    let mut best: Option<Dtype> = None;
    for shape in shapes {
        let mut push = |s: &Shape| {
            if let Shape::Array(a) = s {
                best = Some(Dtype::widest(
                    best,
                    Dtype::from_element_type(a.element_type),
                ));
            }
        };
        match shape {
            Shape::Tuple(items) => items.iter().for_each(&mut push),
            other => push(other),
        }
    }
    best.unwrap_or(Dtype::Other)
}

/// The dtype a matrix op is held against: the wider of its two inputs.
fn matrix_dtype(operands: &[&Shape]) -> Dtype {
    widest_float(operands.iter().take(2).copied())
}

/// `{1,2}` → `[1, 2]`.
fn int_list(text: &str) -> Vec<i64> {
    text.trim_matches(|c| c == '{' || c == '}')
        .split(',')
        .filter_map(|t| t.trim().parse().ok())
        .collect()
}

fn dot_flops(inst: &Instruction, operands: &[&Shape]) -> Option<f64> {
    let lhs = array_dims(operands.first()?)?;
    let contracting = int_list(inst.attribute("lhs_contracting_dims").unwrap_or("{}"));
    let k: f64 = contracting
        .iter()
        .map(|&d| usize::try_from(d).ok().and_then(|d| lhs.get(d)).copied())
        .collect::<Option<Vec<i64>>>()?
        .iter()
        .product::<i64>() as f64;
    Some(2.0 * elements(first_array(&inst.shape)) * k)
}

/// GEMM FLOPs from operand shapes and dot dimension numbers (contracting and batch
/// dimension lists of lhs and rhs): 2 x batch x M x N x K.
pub fn gemm_flops(
    lhs: &[i64],
    rhs: &[i64],
    lhs_contracting: &[i64],
    rhs_contracting: &[i64],
    lhs_batch: &[i64],
    rhs_batch: &[i64],
) -> Option<f64> {
    let pick = |dims: &[i64], which: &[i64]| -> Option<f64> {
        which
            .iter()
            .map(|&d| usize::try_from(d).ok().and_then(|d| dims.get(d)).copied())
            .collect::<Option<Vec<i64>>>()
            .map(|v| v.iter().product::<i64>() as f64)
    };
    let k = pick(lhs, lhs_contracting)?;
    let batch = pick(lhs, lhs_batch)?;
    let lhs_all = lhs.iter().product::<i64>() as f64;
    let rhs_all = rhs.iter().product::<i64>() as f64;
    let m = lhs_all / (k * batch).max(1.0);
    let n = rhs_all / (pick(rhs, rhs_contracting)? * pick(rhs, rhs_batch)?).max(1.0);
    Some(2.0 * batch * m * n * k)
}

/// A convolution's window, one entry per spatial dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowDim {
    /// Window size.
    pub size: i64,
    /// Stride.
    pub stride: i64,
    /// Padding before the first element.
    pub pad_low: i64,
    /// Padding after the last element.
    pub pad_high: i64,
    /// lhs (base) dilation.
    pub lhs_dilation: i64,
    /// rhs (window) dilation.
    pub rhs_dilation: i64,
}

/// Parses `{size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=2x2}`.
pub fn parse_window(text: &str) -> Option<Vec<WindowDim>> {
    let body = text.trim().trim_start_matches('{').trim_end_matches('}');
    let mut fields: HashMap<&str, &str> = HashMap::new();
    for part in body.split_whitespace() {
        let (k, v) = part.split_once('=')?;
        fields.insert(k, v);
    }
    let nums = |key: &str| -> Option<Vec<i64>> {
        fields
            .get(key)
            .map(|v| v.split('x').map(|t| t.parse().ok()).collect())
            .unwrap_or(Some(Vec::new()))
    };
    let size = nums("size")?;
    let stride = nums("stride")?;
    let lhs_dilate = nums("lhs_dilate")?;
    let rhs_dilate = nums("rhs_dilate")?;
    let pads: Vec<(i64, i64)> = match fields.get("pad") {
        Some(v) => v
            .split('x')
            .map(|p| {
                let (lo, hi) = p.split_once('_')?;
                Some((lo.parse().ok()?, hi.parse().ok()?))
            })
            .collect::<Option<_>>()?,
        None => Vec::new(),
    };
    Some(
        (0..size.len())
            .map(|i| WindowDim {
                size: size[i],
                stride: stride.get(i).copied().unwrap_or(1),
                pad_low: pads.get(i).map_or(0, |p| p.0),
                pad_high: pads.get(i).map_or(0, |p| p.1),
                lhs_dilation: lhs_dilate.get(i).copied().unwrap_or(1),
                rhs_dilation: rhs_dilate.get(i).copied().unwrap_or(1),
            })
            .collect(),
    )
}

/// Dimension numbers from `dim_labels=b01f_01io->b01f`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvLabels {
    /// Batch dimension of the input.
    pub input_batch: usize,
    /// Feature dimension of the input.
    pub input_feature: usize,
    /// Spatial dimensions of the input, in window order.
    pub input_spatial: Vec<usize>,
    /// Spatial dimensions of the kernel, in window order.
    pub kernel_spatial: Vec<usize>,
    /// Output-feature dimension of the kernel.
    pub output_feature: usize,
    /// Spatial dimensions of the output, in window order.
    pub output_spatial: Vec<usize>,
}

/// Parses `b01f_01io->b01f` (batch `b`, feature `f`, kernel input/output features `i`/`o`,
/// spatial dimensions `0`, `1`, ... in window order).
pub fn parse_dim_labels(text: &str) -> Option<ConvLabels> {
    let (lhs_rhs, out) = text.trim().split_once("->")?;
    let (lhs, rhs) = lhs_rhs.split_once('_')?;
    let spatial = |labels: &str| -> Vec<usize> {
        let mut digits: Vec<(u32, usize)> = labels
            .chars()
            .enumerate()
            .filter_map(|(pos, c)| c.to_digit(10).map(|d| (d, pos)))
            .collect();
        digits.sort();
        digits.into_iter().map(|(_, pos)| pos).collect()
    };
    Some(ConvLabels {
        input_batch: lhs.find('b')?,
        input_feature: lhs.find('f')?,
        input_spatial: spatial(lhs),
        kernel_spatial: spatial(rhs),
        output_feature: out.find('f')?,
        output_spatial: spatial(out),
    })
}

/// Number of (output, kernel) position pairs along one spatial dimension that read a real
/// input element: not padding, not a hole of lhs dilation.
pub fn valid_positions(input: i64, kernel: i64, output: i64, w: &WindowDim) -> i64 {
    let mut count = 0;
    for k in 0..kernel {
        for o in 0..output {
            let undilated = o * w.stride - w.pad_low + k * w.rhs_dilation;
            let base = w.lhs_dilation.max(1);
            if undilated.rem_euclid(base) != 0 {
                continue;
            }
            let index = undilated.div_euclid(base);
            if (0..input).contains(&index) {
                count += 1;
            }
        }
    }
    count
}

/// Convolution FLOPs from the three shapes, dimension labels, window and group counts.
pub fn convolution_flops(
    input: &[i64],
    kernel: &[i64],
    output: &[i64],
    labels: &ConvLabels,
    window: &[WindowDim],
    feature_groups: i64,
    batch_groups: i64,
) -> Option<f64> {
    let get = |dims: &[i64], i: usize| dims.get(i).copied();
    let in_features = get(input, labels.input_feature)?;
    let out_features = get(output, labels.output_feature)?;
    let batch = get(input, labels.input_batch)?;
    let mut positions: f64 = 1.0;
    for (s, w) in window.iter().enumerate() {
        let i = get(input, *labels.input_spatial.get(s)?)?;
        let k = get(kernel, *labels.kernel_spatial.get(s)?)?;
        let o = get(output, *labels.output_spatial.get(s)?)?;
        positions *= valid_positions(i, k, o, w) as f64;
    }
    let fmas = (in_features / feature_groups.max(1)) as f64
        * out_features as f64
        * (batch / batch_groups.max(1)) as f64
        * positions;
    Some(2.0 * fmas)
}

fn conv_flops(inst: &Instruction, shapes: ConvShapes<'_>) -> Option<f64> {
    let labels = parse_dim_labels(inst.attribute("dim_labels")?)?;
    let window = match inst.attribute("window") {
        Some(w) => parse_window(w)?,
        None => Vec::new(),
    };
    let group = |key: &str| {
        inst.attribute(key)
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(1)
    };
    convolution_flops(
        array_dims(first_array(shapes.input))?,
        array_dims(first_array(shapes.kernel))?,
        array_dims(first_array(shapes.output))?,
        &labels,
        &window,
        group("feature_group_count"),
        group("batch_group_count"),
    )
}

const TRANSCENDENTAL: &[&str] = &[
    "exponential",
    "exponential-minus-one",
    "log",
    "log-plus-one",
    "logistic",
    "tanh",
    "sqrt",
    "rsqrt",
    "cbrt",
    "sine",
    "cosine",
    "tan",
    "erf",
    "power",
    "atan2",
];

const ARITHMETIC: &[&str] = &[
    "add",
    "subtract",
    "multiply",
    "divide",
    "remainder",
    "maximum",
    "minimum",
    "negate",
    "abs",
    "sign",
    "clamp",
    "floor",
    "ceil",
    "round-nearest-afz",
    "round-nearest-even",
    "real",
    "imag",
    "complex",
];

fn is_zero_flop_elementwise(op: &str) -> bool {
    matches!(
        op,
        "convert"
            | "compare"
            | "select"
            | "and"
            | "or"
            | "xor"
            | "not"
            | "shift-left"
            | "shift-right-logical"
            | "shift-right-arithmetic"
            | "popcnt"
            | "count-leading-zeros"
            | "bitcast-convert"
            | "is-finite"
            | "reduce-precision"
            | "stochastic-convert"
    )
}

/// (FLOPs, transcendental elements) of an elementwise op: one per result element.
fn elementwise_flops(op: &str, shape: &Shape) -> (f64, f64) {
    let n = elements(shape);
    if TRANSCENDENTAL.contains(&op) {
        (n, n)
    } else if ARITHMETIC.contains(&op) {
        (n, 0.0)
    } else {
        (0.0, 0.0)
    }
}

fn is_collective(op: &str) -> bool {
    let base = op
        .strip_suffix("-start")
        .or_else(|| op.strip_suffix("-done"))
        .unwrap_or(op);
    matches!(
        base,
        "all-reduce"
            | "all-gather"
            | "reduce-scatter"
            | "all-to-all"
            | "ragged-all-to-all"
            | "collective-permute"
            | "collective-broadcast"
            | "send"
            | "recv"
    )
}

fn is_data_movement(op: &str) -> bool {
    matches!(
        op,
        "copy"
            | "copy-start"
            | "copy-done"
            | "transpose"
            | "broadcast"
            | "reshape"
            | "bitcast"
            | "slice"
            | "dynamic-slice"
            | "dynamic-update-slice"
            | "concatenate"
            | "pad"
            | "gather"
            | "scatter"
            | "iota"
            | "reverse"
            | "sort"
            | "get-tuple-element"
            | "tuple"
            | "parameter"
            | "constant"
    )
}

fn reduce_flops(index: &ModuleIndex<'_>, inst: &Instruction, operands: &[&Shape]) -> f64 {
    let Some(input) = operands.first() else {
        return 0.0;
    };
    let reduced = elements(input) - elements(first_array(&inst.shape));
    let reducer_ops = inst
        .called_computations
        .first()
        .and_then(|name| index.computations.get(name.as_str()))
        .map_or(1, |comp| {
            comp.instructions
                .iter()
                .filter(|i| {
                    !matches!(
                        i.opcode.as_str(),
                        "parameter" | "constant" | "tuple" | "get-tuple-element"
                    )
                })
                .count()
        });
    reduced.max(0.0) * reducer_ops as f64
}

/// Sum of FLOPs over a computation, recursing into nested fusions; `(flops, transcendental
/// elements, matrix op found, its dtype, has unmodelled ops)`.
#[derive(Debug, Default)]
struct Fused {
    flops: f64,
    transcendental: f64,
    matrix: Option<(OpKind, Dtype)>,
    has_reduce: bool,
    unknown: Vec<String>,
}

fn sum_computation(index: &ModuleIndex<'_>, name: &str, depth: usize, out: &mut Fused) {
    let Some(comp) = index.computations.get(name) else {
        out.unknown.push(format!("computation {name} not found"));
        return;
    };
    if depth > 16 {
        out.unknown.push("fusion nesting deeper than 16".to_owned());
        return;
    }
    for inst in &comp.instructions {
        if matches!(inst.opcode.as_str(), "fusion" | "call") {
            for callee in &inst.called_computations {
                sum_computation(index, callee, depth + 1, out);
            }
            continue;
        }
        let cost = instruction_cost(index, comp, inst);
        if cost.kind.is_matrix() && out.matrix.is_none() {
            out.matrix = Some((cost.kind, cost.dtype));
        }
        if cost.kind == OpKind::Reduce {
            out.has_reduce = true;
        }
        match cost.flops {
            Some(f) => out.flops += f,
            None if cost.kind == OpKind::Collective => {}
            None => out.unknown.push(inst.opcode.clone()),
        }
        out.transcendental += cost.transcendental_elements;
    }
}

fn fusion_cost(
    index: &ModuleIndex<'_>,
    inst: &Instruction,
    operands: &[&Shape],
    operand_bytes: f64,
    result_bytes: f64,
) -> OpCost {
    let mut fused = Fused::default();
    for callee in &inst.called_computations {
        sum_computation(index, callee, 0, &mut fused);
    }
    let (kind, dtype) = match fused.matrix {
        Some((kind, dtype)) => (kind, dtype),
        None => {
            let dtype = widest_float(operands.iter().copied().chain([&inst.shape]));
            let kind = if fused.has_reduce {
                OpKind::Reduce
            } else if fused.flops > 0.0 {
                OpKind::Elementwise
            } else {
                OpKind::DataMovement
            };
            (kind, dtype)
        }
    };
    let mut note =
        "fusion: FLOPs summed over the fused computation; bytes = operands + result".to_owned();
    if !fused.unknown.is_empty() {
        fused.unknown.sort();
        fused.unknown.dedup();
        note.push_str(&format!(
            "; not counted inside: {}",
            fused.unknown.join(", ")
        ));
    }
    OpCost {
        kind,
        flops: Some(fused.flops),
        bytes: operand_bytes + result_bytes,
        dtype,
        transcendental_elements: fused.transcendental,
        note,
    }
}

/// Whether a custom-call target is a GEMM library call.
pub fn is_gemm_target(target: &str) -> bool {
    let t = target.to_ascii_lowercase();
    (t.contains("cublas") || t.contains("hipblas") || t.contains("rocblas"))
        && (t.contains("gemm") || t.contains("matmul"))
}

/// Whether a custom-call target is a cuDNN/MIOpen convolution, and which direction.
fn conv_direction(target: &str) -> Option<&'static str> {
    let t = target.to_ascii_lowercase();
    if !(t.contains("cudnn") || t.contains("miopen")) || !t.contains("conv") {
        return None;
    }
    Some(if t.contains("backwardinput") {
        "backward-input"
    } else if t.contains("backwardfilter") {
        "backward-filter"
    } else {
        "forward"
    })
}

fn json_ints(value: Option<&serde_json::Value>) -> Vec<i64> {
    value
        .and_then(|v| v.as_array())
        .map(|items| {
            items
                .iter()
                .filter_map(|x| x.as_i64().or_else(|| x.as_str()?.parse().ok()))
                .collect()
        })
        .unwrap_or_default()
}

fn custom_call_cost(inst: &Instruction, operands: &[&Shape], operand_bytes: f64) -> OpCost {
    let target = inst.custom_call_target().unwrap_or_default();
    // Library calls return (result, workspace): the workspace is scratch, not traffic.
    let result = first_array(&inst.shape);
    let unknown = |note: String| OpCost {
        kind: OpKind::CustomCall,
        flops: None,
        bytes: operand_bytes + inst.shape.byte_size() as f64,
        dtype: widest_float(operands.iter().copied().chain([&inst.shape])),
        transcendental_elements: 0.0,
        note,
    };
    if is_gemm_target(&target) {
        let config = inst.backend_config_json();
        let dims = config
            .as_ref()
            .and_then(|c| c.get("gemm_backend_config"))
            .and_then(|g| g.get("dot_dimension_numbers"));
        let (Some(dims), Some(lhs), Some(rhs)) = (
            dims,
            operands.first().and_then(|s| array_dims(s)),
            operands.get(1).and_then(|s| array_dims(s)),
        ) else {
            return unknown(format!(
                "{target}: no dot_dimension_numbers in the backend config"
            ));
        };
        let flops = gemm_flops(
            lhs,
            rhs,
            &json_ints(dims.get("lhs_contracting_dimensions")),
            &json_ints(dims.get("rhs_contracting_dimensions")),
            &json_ints(dims.get("lhs_batch_dimensions")),
            &json_ints(dims.get("rhs_batch_dimensions")),
        );
        return OpCost {
            kind: OpKind::Gemm,
            flops,
            bytes: operand_bytes + result.byte_size() as f64,
            dtype: matrix_dtype(operands),
            transcendental_elements: 0.0,
            note: format!("{target}: 2 x batch x M x N x K from operands and backend config"),
        };
    }
    if let Some(direction) = conv_direction(&target) {
        // The window and labels describe the forward convolution; map the call's operands
        // and result onto (input, kernel, output).
        let shapes = match direction {
            "backward-input" => operands.get(1).map(|k| ConvShapes {
                input: result,
                kernel: k,
                output: operands[0],
            }),
            "backward-filter" => operands.get(1).map(|dy| ConvShapes {
                input: operands[0],
                kernel: result,
                output: dy,
            }),
            _ => ConvShapes::forward(operands, result),
        };
        let flops = shapes.and_then(|s| conv_flops(inst, s));
        let dtype = match direction {
            "forward" => matrix_dtype(operands),
            _ => widest_float(operands.iter().take(1).copied().chain([result])),
        };
        return OpCost {
            kind: OpKind::Convolution,
            flops,
            bytes: operand_bytes + result.byte_size() as f64,
            dtype,
            transcendental_elements: 0.0,
            note: format!("{target} ({direction}): convolution FLOPs from window and labels"),
        };
    }
    if let Some(backward) = te_attention_direction(&target)
        && let Some(flops) = te_attention_flops(&inst.backend_config, backward)
    {
        // Results: the output (or gradients), softmax statistics, RNG state, a workspace.
        let results: f64 = match &inst.shape {
            Shape::Tuple(items) => items
                .iter()
                .filter(|s| !is_scratch(s))
                .map(|s| s.byte_size() as f64)
                .sum(),
            other => other.byte_size() as f64,
        };
        return OpCost {
            kind: OpKind::Attention,
            flops: Some(flops.0),
            bytes: operand_bytes + results,
            dtype: operands
                .first()
                .and_then(|s| shape_dtype(s))
                .unwrap_or(Dtype::Other),
            transcendental_elements: 0.0,
            note: format!("{target}: {}", flops.1),
        };
    }
    unknown(format!("{target}: custom call, FLOPs not modelled"))
}

/// A byte (u8/s8) buffer of a library call's result tuple: a workspace, not data.
fn is_scratch(shape: &Shape) -> bool {
    matches!(shape, Shape::Array(a) if a.element_type.bits() == 8
        && matches!(a.element_type, hlo_parser::ElementType::U8 | hlo_parser::ElementType::S8))
}

/// Transformer Engine's fused attention custom calls: `Some(backward)`.
fn te_attention_direction(target: &str) -> Option<bool> {
    if target.starts_with("te_fused_attn_forward") {
        Some(false)
    } else if target.starts_with("te_fused_attn_backward") {
        Some(true)
    } else {
        None
    }
}

/// FLOPs of a Transformer Engine fused attention from its backend config (an attribute
/// dictionary: `input_batch = 2 : i64, attn_heads = 16 : i64, ...`): forward
/// 2·B·H·Nq·Nkv·(d_qk + d_v), backward 2.5x, halved for a causal `mask_type` (2-5 in
/// NVTE_Mask_Type) when Nq = Nkv — the convention of `aten_cost` for SDPA.
pub fn te_attention_flops(config: &str, backward: bool) -> Option<(f64, String)> {
    let body = config.trim().trim_start_matches('{').trim_end_matches('}');
    let get = |key: &str| -> Option<f64> {
        body.split(',').find_map(|part| {
            let (k, v) = part.split_once('=')?;
            if k.trim() != key {
                return None;
            }
            v.split(':').next()?.trim().parse().ok()
        })
    };
    let b = get("input_batch")?;
    let h = get("attn_heads")?;
    let nq = get("q_max_seqlen")?;
    let nkv = get("kv_max_seqlen")?;
    let dqk = get("qk_head_dim")?;
    let dv = get("v_head_dim").unwrap_or(dqk);
    let mask = get("mask_type").unwrap_or(0.0) as i64;
    let mut flops = 2.0 * b * h * nq * nkv * (dqk + dv);
    let mut note = format!(
        "attention 2 x B x H x Nq x Nkv x (d_qk + d_v) from the backend config, B {b}, H {h}, Nq {nq}, Nkv {nkv}, d_qk {dqk}, d_v {dv}"
    );
    if backward {
        flops *= 2.5;
        note.push_str("; backward = 2.5 x forward");
    }
    if (2..=5).contains(&mask) && nq == nkv {
        flops /= 2.0;
        note.push_str(&format!("; causal mask_type {mask}: halved"));
    }
    Some((flops, note))
}

/// The dtype of an array shape, for callers that hold one.
pub fn dtype_of(shape: &Shape) -> Option<Dtype> {
    shape_dtype(shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cost of instruction `name` in a module given as HLO text.
    fn cost_of(text: &str, name: &str) -> OpCost {
        let module = hlo_parser::parse_module(text).expect("test HLO parses");
        let index = ModuleIndex::new(&module);
        let (comp, inst) = index.instruction(name).expect("instruction present");
        instruction_cost(&index, comp, inst)
    }

    fn check(text: &str, name: &str, kind: OpKind, flops: Option<f64>, bytes: f64) {
        let cost = cost_of(text, name);
        assert_eq!(cost.kind, kind, "{name}: {cost:?}");
        assert_eq!(cost.flops, flops, "{name} FLOPs: {}", cost.note);
        assert_eq!(cost.bytes, bytes, "{name} bytes: {}", cost.note);
    }

    #[test]
    fn dot_with_batch_dimensions() {
        let text = r#"HloModule m

ENTRY %main (a: f32[4,32,64], b: f32[4,64,16]) -> f32[4,32,16] {
  %a = f32[4,32,64]{2,1,0} parameter(0)
  %b = f32[4,64,16]{2,1,0} parameter(1)
  ROOT %dot.1 = f32[4,32,16]{2,1,0} dot(f32[4,32,64]{2,1,0} %a, f32[4,64,16]{2,1,0} %b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}
"#;
        // 2 x batch 4 x M 32 x N 16 x K 64; bytes (4*32*64 + 4*64*16 + 4*32*16) * 4.
        check(text, "dot.1", OpKind::Dot, Some(262_144.0), 57_344.0);
        assert_eq!(cost_of(text, "dot.1").dtype, Dtype::Fp32);
    }

    #[test]
    fn grouped_strided_padded_convolution() {
        let text = r#"HloModule m

ENTRY %main (x: f32[1,8,9,9], w: f32[6,4,3,3]) -> f32[1,6,5,5] {
  %x = f32[1,8,9,9]{3,2,1,0} parameter(0)
  %w = f32[6,4,3,3]{3,2,1,0} parameter(1)
  ROOT %conv = f32[1,6,5,5]{3,2,1,0} convolution(f32[1,8,9,9]{3,2,1,0} %x, f32[6,4,3,3]{3,2,1,0} %w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, feature_group_count=2
}
"#;
        // Per spatial dim: 5 outputs x 3 taps = 15 pairs, 2 of them in the padding (output 0
        // tap 0 reads -1, output 4 tap 2 reads 9) → 13; 13 x 13 = 169 positions.
        // 2 x (8 in / 2 groups) x 6 out x batch 1 x 169 = 8112.
        let bytes = (8.0 * 81.0 + 6.0 * 4.0 * 9.0 + 6.0 * 25.0) * 4.0;
        check(text, "conv", OpKind::Convolution, Some(8_112.0), bytes);
    }

    #[test]
    fn dilated_and_batch_grouped_convolution() {
        let text = r#"HloModule m

ENTRY %main (x: f32[4,2,4], w: f32[2,6,3]) -> f32[2,6,7] {
  %x = f32[4,2,4]{2,1,0} parameter(0)
  %w = f32[2,6,3]{2,1,0} parameter(1)
  ROOT %conv = f32[2,6,7]{2,1,0} convolution(f32[4,2,4]{2,1,0} %x, f32[2,6,3]{2,1,0} %w), window={size=3 pad=1_1 lhs_dilate=2}, dim_labels=bf0_io0->bf0, batch_group_count=2
}
"#;
        // lhs dilation 2 over 4 inputs: taps land on input positions only at even offsets.
        // Outputs 0..6, taps 0..2: undilated index o - 1 + k; valid when even and /2 in 0..4:
        // o=0: k=1 (0); o=1: k=0 (0), k=2 (2); o=2: k=1 (2); o=3: k=0, k=2; o=4: k=1;
        // o=5: k=0 (4), k=2 (6); o=6: k=1 (6) → 1+2+1+2+1+2+1 = 10 positions.
        // 2 x in-features 2 x out-features 6 x (batch 4 / 2 groups) x 10 = 480.
        let bytes = (4.0 * 2.0 * 4.0 + 2.0 * 6.0 * 3.0 + 2.0 * 6.0 * 7.0) * 4.0;
        check(text, "conv", OpKind::Convolution, Some(480.0), bytes);
    }

    #[test]
    fn fusion_flops_summed_and_bytes_at_the_boundary() {
        let text = r#"HloModule m

%fused (p0: f32[128,256], p1: f32[256]) -> f32[128,256] {
  %p0 = f32[128,256]{1,0} parameter(0)
  %p1 = f32[256]{0} parameter(1)
  %b = f32[128,256]{1,0} broadcast(f32[256]{0} %p1), dimensions={1}
  %add = f32[128,256]{1,0} add(f32[128,256]{1,0} %p0, f32[128,256]{1,0} %b)
  ROOT %exp = f32[128,256]{1,0} exponential(f32[128,256]{1,0} %add)
}

ENTRY %main (x: f32[128,256], y: f32[256]) -> f32[128,256] {
  %x = f32[128,256]{1,0} parameter(0)
  %y = f32[256]{0} parameter(1)
  ROOT %fusion = f32[128,256]{1,0} fusion(f32[128,256]{1,0} %x, f32[256]{0} %y), kind=kLoop, calls=%fused
}
"#;
        // add + exp, one FLOP per element each; the broadcast and the intermediates move no
        // HBM bytes: operands 128*256*4 + 256*4, result 128*256*4.
        check(
            text,
            "fusion",
            OpKind::Elementwise,
            Some(65_536.0),
            131_072.0 + 1_024.0 + 131_072.0,
        );
        assert_eq!(cost_of(text, "fusion").transcendental_elements, 32_768.0);
    }

    #[test]
    fn gemm_fusion_is_a_dot_and_reduce_counts_the_reducer() {
        let text = r#"HloModule m

%gemm (p0: bf16[64,32], p1: bf16[32,16]) -> f32[64,16] {
  %p0 = bf16[64,32]{1,0} parameter(0)
  %p1 = bf16[32,16]{1,0} parameter(1)
  ROOT %d = f32[64,16]{1,0} dot(bf16[64,32]{1,0} %p0, bf16[32,16]{1,0} %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main (x: bf16[64,32], y: bf16[32,16]) -> f32[64] {
  %x = bf16[64,32]{1,0} parameter(0)
  %y = bf16[32,16]{1,0} parameter(1)
  %gemm_fusion = f32[64,16]{1,0} fusion(bf16[64,32]{1,0} %x, bf16[32,16]{1,0} %y), kind=kCustom, calls=%gemm
  %zero = f32[] constant(0)
  ROOT %r = f32[64]{0} reduce(f32[64,16]{1,0} %gemm_fusion, f32[] %zero), dimensions={1}, to_apply=%sum
}
"#;
        let bytes = (64.0 * 32.0 + 32.0 * 16.0) * 2.0 + 64.0 * 16.0 * 4.0;
        check(
            text,
            "gemm_fusion",
            OpKind::Dot,
            Some(2.0 * 64.0 * 16.0 * 32.0),
            bytes,
        );
        assert_eq!(cost_of(text, "gemm_fusion").dtype, Dtype::Bf16);
        // 64*16 inputs reduced to 64 outputs by a one-add reducer.
        check(
            text,
            "r",
            OpKind::Reduce,
            Some(1024.0 - 64.0),
            4096.0 + 4.0 + 256.0,
        );
    }

    #[test]
    fn cublas_gemm_custom_call_and_collective() {
        let text = r#"HloModule m

ENTRY %main (a: bf16[2,64,32], b: bf16[2,32,48], c: f32[1024]) -> f32[1024] {
  %a = bf16[2,64,32]{2,1,0} parameter(0)
  %b = bf16[2,32,48]{2,1,0} parameter(1)
  %gemm = (bf16[2,64,48]{2,1,0}, s8[1024]{0}) custom-call(bf16[2,64,32]{2,1,0} %a, bf16[2,32,48]{2,1,0} %b), custom_call_target="__cublas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["2"],"rhs_contracting_dimensions":["1"],"lhs_batch_dimensions":["0"],"rhs_batch_dimensions":["0"]}}}
  %c = f32[1024]{0} parameter(2)
  ROOT %ar = f32[1024]{0} all-reduce(f32[1024]{0} %c), replica_groups={}, to_apply=%sum
}

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %x, f32[] %y)
}
"#;
        // 2 x batch 2 x M 64 x N 48 x K 32; bytes exclude the s8 workspace.
        let bytes = (2.0 * 64.0 * 32.0 + 2.0 * 32.0 * 48.0 + 2.0 * 64.0 * 48.0) * 2.0;
        check(text, "gemm", OpKind::Gemm, Some(393_216.0), bytes);
        check(text, "ar", OpKind::Collective, None, 8192.0);
    }

    #[test]
    fn cudnn_backward_filter_uses_forward_shapes() {
        let text = r#"HloModule m

ENTRY %main (x: f32[1,8,9,9], dy: f32[1,6,5,5]) -> f32[6,4,3,3] {
  %x = f32[1,8,9,9]{3,2,1,0} parameter(0)
  %dy = f32[1,6,5,5]{3,2,1,0} parameter(1)
  %conv = (f32[6,4,3,3]{3,2,1,0}, u8[0]{0}) custom-call(f32[1,8,9,9]{3,2,1,0} %x, f32[1,6,5,5]{3,2,1,0} %dy), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, feature_group_count=2, custom_call_target="__cudnn$convBackwardFilter"
  ROOT %w = f32[6,4,3,3]{3,2,1,0} get-tuple-element((f32[6,4,3,3]{3,2,1,0}, u8[0]{0}) %conv), index=0
}
"#;
        // The same convolution as `grouped_strided_padded_convolution`: 8112 FLOPs.
        let bytes = (8.0 * 81.0 + 6.0 * 25.0 + 6.0 * 4.0 * 9.0) * 4.0;
        check(text, "conv", OpKind::Convolution, Some(8_112.0), bytes);
    }

    #[test]
    fn transformer_engine_fused_attention() {
        let config = "{attn_heads = 16 : i64, input_batch = 2 : i64, kv_max_seqlen = 2048 : i64, mask_type = 2 : i64, q_max_seqlen = 2048 : i64, qk_head_dim = 128 : i64, v_head_dim = 128 : i64}";
        let full = 2.0 * 2.0 * 16.0 * 2048.0 * 2048.0 * 256.0;
        let (fwd, _) = te_attention_flops(config, false).expect("parses");
        assert_eq!(fwd, full / 2.0);
        let (bwd, note) = te_attention_flops(config, true).expect("parses");
        assert_eq!(bwd, 2.5 * full / 2.0, "{note}");
        let no_mask = config.replace("mask_type = 2", "mask_type = 0");
        assert_eq!(te_attention_flops(&no_mask, false).map(|f| f.0), Some(full));
        assert_eq!(te_attention_flops("{attn_heads = 16 : i64}", false), None);
    }

    #[test]
    fn window_and_labels_parse() {
        let w = parse_window("{size=3x1 stride=2x1 pad=-1_2x0_0 rhs_dilate=2x1}").expect("parses");
        assert_eq!(
            w[0],
            WindowDim {
                size: 3,
                stride: 2,
                pad_low: -1,
                pad_high: 2,
                lhs_dilation: 1,
                rhs_dilation: 2
            }
        );
        let l = parse_dim_labels("b01f_01io->b01f").expect("parses");
        assert_eq!(
            (l.input_batch, l.input_feature, l.input_spatial.clone()),
            (0, 3, vec![1, 2])
        );
        assert_eq!(
            (l.kernel_spatial.clone(), l.output_feature),
            (vec![0, 1], 3)
        );
    }
}
