//! FLOPs and bytes of one HLO instruction, from the shapes and attributes of `hlo-parser`'s
//! model.
//!
//! Conventions (the closing note of issue 10 tabulates where they differ from XProf):
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
pub enum OpKind {
    Dot,
    Convolution,
    /// A GEMM library call (cuBLAS, cuBLASLt, hipBLASLt; ATen mm/addmm/bmm/linear/matmul).
    Gemm,
    Attention,
    Elementwise,
    Reduce,
    Collective,
    DataMovement,
    /// A custom call whose cost we do not model.
    CustomCall,
    Other,
}

impl OpKind {
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
    pub kind: OpKind,
    /// `None` when the op's arithmetic is not modelled (collectives, unknown custom calls).
    pub flops: Option<f64>,
    pub bytes: f64,
    pub dtype: Dtype,
    /// Elements of transcendental ops (exp, log, tanh, ...) inside the FLOPs, one FLOP each.
    pub transcendental_elements: f64,
    /// How the cost was computed, or why it is incomplete.
    pub note: String,
}

/// Name lookups over one module (the model's own lookups are linear scans).
#[derive(Debug)]
pub struct ModuleIndex<'a> {
    pub module: &'a HloModule,
    computations: HashMap<&'a str, &'a Computation>,
    instructions: HashMap<&'a str, (&'a Computation, &'a Instruction)>,
    by_computation: HashMap<&'a str, HashMap<&'a str, &'a Instruction>>,
}

impl<'a> ModuleIndex<'a> {
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
    pub size: i64,
    pub stride: i64,
    pub pad_low: i64,
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
    pub input_batch: usize,
    pub input_feature: usize,
    pub input_spatial: Vec<usize>,
    pub kernel_spatial: Vec<usize>,
    pub output_feature: usize,
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
    unknown(format!("{target}: custom call, FLOPs not modelled"))
}

/// The dtype of an array shape, for callers that hold one.
pub fn dtype_of(shape: &Shape) -> Option<Dtype> {
    shape_dtype(shape)
}
