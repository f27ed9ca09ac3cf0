//! The HLO model shared by the proto reader, the text parser and the printer.
//!
//! The model keeps what the analyses read (names, opcodes, shapes, operands, called computations,
//! op metadata, backend config, schedule order, stack frames) as typed fields, and every other
//! instruction attribute as its XLA text (`dimensions={0,1}`), in order.

/// One HLO module.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HloModule {
    /// The module name (`jit_train_step`).
    pub name: String,
    /// Name of the `ENTRY` computation.
    pub entry_computation: String,
    /// True when the module carries a schedule: then each scheduled computation's instructions
    /// are in schedule order.
    pub is_scheduled: bool,
    /// Entry parameter and result shapes with layouts.
    pub entry_computation_layout: Option<ProgramShape>,
    /// Module frontend attributes, sorted by key.
    pub frontend_attributes: Vec<(String, String)>,
    /// Callees before callers, as XLA orders them.
    pub computations: Vec<Computation>,
    /// Python stack frames referenced by op metadata.
    pub stack_frames: StackFrameIndex,
}

/// One computation: the entry, a fusion body, a while condition or body, a reducer, ...
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Computation {
    /// The computation name.
    pub name: String,
    /// Operands before users; in schedule order when the module is scheduled.
    pub instructions: Vec<Instruction>,
    /// Index of the `ROOT` instruction in `instructions`.
    pub root: Option<usize>,
    /// Empty for the main thread.
    pub execution_thread: String,
}

/// One HLO instruction.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Instruction {
    /// Unique in the module, e.g. `loop_convert_fusion.2`; equals a kernel's `hlo_op` stat.
    pub name: String,
    /// `fusion`, `custom-call`, `while`, `dot`, ...
    pub opcode: String,
    /// The result shape.
    pub shape: Shape,
    /// Operand instruction names, in the same computation.
    pub operands: Vec<String>,
    /// Called computation names, in XLA's order (while: body then condition).
    pub called_computations: Vec<String>,
    /// Instructions that must run before this one.
    pub control_predecessors: Vec<String>,
    /// `parameter(N)` only.
    pub parameter_number: Option<i64>,
    /// `constant(...)` only: the literal as HLO text.
    pub literal: Option<String>,
    /// Where the instruction came from.
    pub metadata: OpMetadata,
    /// JSON text, empty when there is none.
    pub backend_config: String,
    /// Every other attribute, as `(key, XLA text of the value)`, in print order.
    pub attributes: Vec<(String, String)>,
}

/// `OpMetadata`: where the instruction came from. Empty strings and zeros mean unset.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OpMetadata {
    /// The framework op type.
    pub op_type: String,
    /// The JAX path, e.g. `jit(train_step)/jvp()/dot_general`.
    pub op_name: String,
    /// Python file.
    pub source_file: String,
    /// First line, from 1.
    pub source_line: i32,
    /// Last line.
    pub source_end_line: i32,
    /// First column.
    pub source_column: i32,
    /// Last column.
    pub source_end_column: i32,
    /// Name shared by deduplicated computations.
    pub deduplicated_name: String,
    /// Name used by the scheduler.
    pub scheduling_name: String,
    /// 1-based index into [`StackFrameIndex::frames`]; 0 = unset.
    pub stack_frame_id: i32,
}

/// The module's stack-frame index: flat, 1-based tables, as in `StackFrameIndexProto`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StackFrameIndex {
    /// File names, 1-based.
    pub file_names: Vec<String>,
    /// Function names, 1-based.
    pub function_names: Vec<String>,
    /// Locations, 1-based.
    pub file_locations: Vec<FileLocation>,
    /// Frames, 1-based.
    pub frames: Vec<StackFrame>,
}

/// A (file, function, line, column) entry; ids are 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileLocation {
    /// Index into `file_names`.
    pub file_name_id: i32,
    /// Index into `function_names`.
    pub function_name_id: i32,
    /// Line, from 1.
    pub line: i32,
    /// Column.
    pub column: i32,
}

/// A frame: its location and its caller (`parent_frame_id`, 0 = outermost); ids are 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StackFrame {
    /// Index into `file_locations`.
    pub file_location_id: i32,
    /// The caller frame; 0 = outermost.
    pub parent_frame_id: i32,
}

/// One resolved Python frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Python file.
    pub file: &'a str,
    /// Function name.
    pub function: &'a str,
    /// Line, from 1.
    pub line: i32,
    /// Column.
    pub column: i32,
}

/// A Python source line an instruction is attributed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceLine<'a> {
    /// Python file.
    pub file: &'a str,
    /// Line, from 1.
    pub line: i32,
    /// Empty when the line came from `OpMetadata.source_file` directly.
    pub function: &'a str,
    /// How it was found.
    pub via: SourceVia,
}

/// How a [`SourceLine`] was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SourceVia {
    /// `OpMetadata.source_file` / `source_line`.
    Metadata,
    /// The stack-frame index, through `OpMetadata.stack_frame_id`.
    StackFrames,
}

/// An array, tuple, token or opaque shape.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Shape {
    /// An array of one element type.
    Array(ArrayShape),
    /// A tuple of shapes.
    Tuple(Vec<Shape>),
    /// A token (ordering only).
    Token,
    /// An opaque value.
    Opaque,
}

impl Default for Shape {
    fn default() -> Shape {
        Shape::Tuple(Vec::new())
    }
}

/// `bf16[8,128]{1,0}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayShape {
    /// The element type.
    pub element_type: ElementType,
    /// Dimension sizes, in logical order as written (`[8,128]`).
    pub dimensions: Vec<i64>,
    /// Per dimension, whether it is dynamic (`<=N`); empty when none is.
    pub dynamic: Vec<bool>,
    /// `None` for scalars and for arrays printed without a layout.
    pub layout: Option<Layout>,
}

/// `{1,0:T(8,128)(2,1)E(4)S(1)}`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Layout {
    /// Dimension order, minor to major.
    pub minor_to_major: Vec<i64>,
    /// Tiles (`T(8,128)(2,1)`), outer to inner.
    pub tiles: Vec<Vec<i64>>,
    /// Element size in bits when it differs from the type (`E(4)`); 0 = unset.
    pub element_size_in_bits: i64,
    /// Memory space (`S(1)`); 0 = default.
    pub memory_space: i64,
}

/// Parameter and result shapes of a computation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramShape {
    /// Parameter shapes.
    pub parameters: Vec<Shape>,
    /// Result shape.
    pub result: Shape,
}

/// An array element type; its HLO text name is [`ElementType::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ElementType {
    /// `pred`.
    Pred,
    /// `s1`.
    S1,
    /// `s2`.
    S2,
    /// `s4`.
    S4,
    /// `s8`.
    S8,
    /// `s16`.
    S16,
    /// `s32`.
    S32,
    /// `s64`.
    S64,
    /// `u1`.
    U1,
    /// `u2`.
    U2,
    /// `u4`.
    U4,
    /// `u8`.
    U8,
    /// `u16`.
    U16,
    /// `u32`.
    U32,
    /// `u64`.
    U64,
    /// `f16`.
    F16,
    /// `bf16`.
    Bf16,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `c64`.
    C64,
    /// `c128`.
    C128,
    /// `f4e2m1fn`.
    F4e2m1fn,
    /// `f8e3m4`.
    F8e3m4,
    /// `f8e4m3`.
    F8e4m3,
    /// `f8e4m3b11fnuz`.
    F8e4m3b11fnuz,
    /// `f8e4m3fn`.
    F8e4m3fn,
    /// `f8e4m3fnuz`.
    F8e4m3fnuz,
    /// `f8e5m2`.
    F8e5m2,
    /// `f8e5m2fnuz`.
    F8e5m2fnuz,
    /// `f8e8m0fnu`.
    F8e8m0fnu,
}

/// (type, HLO text name, `xla.PrimitiveType` number, bits per element).
const ELEMENT_TYPES: &[(ElementType, &str, i32, u32)] = &[
    (ElementType::Pred, "pred", 1, 8),
    (ElementType::S1, "s1", 30, 1),
    (ElementType::S2, "s2", 26, 2),
    (ElementType::S4, "s4", 21, 4),
    (ElementType::S8, "s8", 2, 8),
    (ElementType::S16, "s16", 3, 16),
    (ElementType::S32, "s32", 4, 32),
    (ElementType::S64, "s64", 5, 64),
    (ElementType::U1, "u1", 31, 1),
    (ElementType::U2, "u2", 27, 2),
    (ElementType::U4, "u4", 22, 4),
    (ElementType::U8, "u8", 6, 8),
    (ElementType::U16, "u16", 7, 16),
    (ElementType::U32, "u32", 8, 32),
    (ElementType::U64, "u64", 9, 64),
    (ElementType::F16, "f16", 10, 16),
    (ElementType::Bf16, "bf16", 16, 16),
    (ElementType::F32, "f32", 11, 32),
    (ElementType::F64, "f64", 12, 64),
    (ElementType::C64, "c64", 15, 64),
    (ElementType::C128, "c128", 18, 128),
    (ElementType::F4e2m1fn, "f4e2m1fn", 32, 4),
    (ElementType::F8e3m4, "f8e3m4", 29, 8),
    (ElementType::F8e4m3, "f8e4m3", 28, 8),
    (ElementType::F8e4m3b11fnuz, "f8e4m3b11fnuz", 23, 8),
    (ElementType::F8e4m3fn, "f8e4m3fn", 20, 8),
    (ElementType::F8e4m3fnuz, "f8e4m3fnuz", 25, 8),
    (ElementType::F8e5m2, "f8e5m2", 19, 8),
    (ElementType::F8e5m2fnuz, "f8e5m2fnuz", 24, 8),
    (ElementType::F8e8m0fnu, "f8e8m0fnu", 33, 8),
];

impl ElementType {
    /// The HLO text name: `f32`, `bf16`, `pred`, ...
    pub fn name(self) -> &'static str {
        self.entry().1
    }

    /// Bits per element (`pred` is stored as one byte).
    pub fn bits(self) -> u32 {
        self.entry().3
    }

    /// The element type of an HLO text name (`f32`, `bf16`).
    pub fn from_name(name: &str) -> Option<ElementType> {
        ELEMENT_TYPES
            .iter()
            .find(|entry| entry.1 == name)
            .map(|entry| entry.0)
    }

    /// From an `xla.PrimitiveType` number (array types only).
    pub fn from_primitive_type(value: i32) -> Option<ElementType> {
        ELEMENT_TYPES
            .iter()
            .find(|entry| entry.2 == value)
            .map(|entry| entry.0)
    }

    fn entry(self) -> &'static (ElementType, &'static str, i32, u32) {
        ELEMENT_TYPES
            .iter()
            .find(|entry| entry.0 == self)
            .expect("invariant: ELEMENT_TYPES lists every ElementType")
    }
}

impl Shape {
    /// Number of elements of an array shape; `None` for tuples, tokens and opaque shapes.
    pub fn element_count(&self) -> Option<i64> {
        match self {
            Shape::Array(array) => Some(array.dimensions.iter().product()),
            _ => None,
        }
    }

    /// Bytes of the whole value (tuples: the sum of their elements; sub-byte types rounded up).
    pub fn byte_size(&self) -> i64 {
        match self {
            Shape::Array(array) => {
                let bits =
                    array.dimensions.iter().product::<i64>() * i64::from(array.element_type.bits());
                (bits + 7) / 8
            }
            Shape::Tuple(elements) => elements.iter().map(Shape::byte_size).sum(),
            Shape::Token | Shape::Opaque => 0,
        }
    }
}

impl HloModule {
    /// The computation with this name.
    pub fn computation(&self, name: &str) -> Option<&Computation> {
        self.computations
            .iter()
            .find(|computation| computation.name == name)
    }

    /// The `ENTRY` computation.
    pub fn entry(&self) -> Option<&Computation> {
        self.computation(&self.entry_computation)
    }

    /// Every instruction with its computation.
    pub fn instructions(&self) -> impl Iterator<Item = (&Computation, &Instruction)> + '_ {
        self.computations.iter().flat_map(|computation| {
            computation
                .instructions
                .iter()
                .map(move |instruction| (computation, instruction))
        })
    }

    /// The instruction with this name, in any computation.
    pub fn instruction(&self, name: &str) -> Option<(&Computation, &Instruction)> {
        self.instructions()
            .find(|(_, instruction)| instruction.name == name)
    }

    /// The Python stack of a 1-based frame id, innermost frame first. Unknown ids give an empty
    /// stack; a cycle in the parent links stops the walk.
    pub fn stack(&self, frame_id: i32) -> Vec<Frame<'_>> {
        let index = &self.stack_frames;
        let mut frames = Vec::new();
        let mut id = frame_id;
        while id > 0 && frames.len() <= index.frames.len() {
            let Some(frame) = get_1_based(&index.frames, id) else {
                break;
            };
            if let Some(location) = get_1_based(&index.file_locations, frame.file_location_id) {
                frames.push(Frame {
                    file: get_1_based(&index.file_names, location.file_name_id)
                        .map_or("", String::as_str),
                    function: get_1_based(&index.function_names, location.function_name_id)
                        .map_or("", String::as_str),
                    line: location.line,
                    column: location.column,
                });
            }
            id = frame.parent_frame_id;
        }
        frames
    }

    /// The Python line of an instruction: `source_file:source_line` when set, else the first
    /// frame of its stack that `is_user_frame` accepts, else its innermost frame.
    pub fn source_line_with<'a>(
        &'a self,
        instruction: &'a Instruction,
        is_user_frame: &dyn Fn(&Frame<'_>) -> bool,
    ) -> Option<SourceLine<'a>> {
        let metadata = &instruction.metadata;
        if !metadata.source_file.is_empty() && metadata.source_line > 0 {
            return Some(SourceLine {
                file: &metadata.source_file,
                line: metadata.source_line,
                function: "",
                via: SourceVia::Metadata,
            });
        }
        let stack = self.stack(metadata.stack_frame_id);
        let frame = stack
            .iter()
            .find(|frame| is_user_frame(frame))
            .or_else(|| stack.first())
            .filter(|frame| !frame.file.is_empty() && frame.line > 0)?;
        Some(SourceLine {
            file: frame.file,
            line: frame.line,
            function: frame.function,
            via: SourceVia::StackFrames,
        })
    }

    /// [`HloModule::source_line_with`] with the default user-code rule: the first frame outside
    /// `site-packages` and outside JAX itself.
    pub fn source_line<'a>(&'a self, instruction: &'a Instruction) -> Option<SourceLine<'a>> {
        self.source_line_with(instruction, &is_default_user_frame)
    }

    /// For a scheduled module: each non-fusion computation with its instructions in execution
    /// order. Empty when the module has no schedule.
    pub fn schedule(&self) -> Vec<&Computation> {
        if !self.is_scheduled {
            return Vec::new();
        }
        let fused: std::collections::BTreeSet<&str> = self
            .instructions()
            .filter(|(_, instruction)| instruction.opcode == "fusion")
            .flat_map(|(_, instruction)| instruction.called_computations.iter().map(String::as_str))
            .collect();
        self.computations
            .iter()
            .filter(|computation| !fused.contains(computation.name.as_str()))
            .collect()
    }

    /// Asynchronous start/done pairs (`all-gather-start`/`all-gather-done`, `async-start`/
    /// `async-done`, `copy-start`/`copy-done`, `send`/`send-done`, ...), in program order.
    pub fn async_pairs(&self) -> Vec<AsyncPair<'_>> {
        let mut pairs = Vec::new();
        for computation in &self.computations {
            let by_name: std::collections::HashMap<&str, &Instruction> = computation
                .instructions
                .iter()
                .map(|instruction| (instruction.name.as_str(), instruction))
                .collect();
            for done in &computation.instructions {
                if !done.opcode.ends_with("-done") {
                    continue;
                }
                let mut start = done
                    .operands
                    .first()
                    .and_then(|name| by_name.get(name.as_str()).copied());
                // async-done → async-update → ... → async-start.
                let mut hops = 0;
                while let Some(candidate) = start {
                    if candidate.opcode != "async-update" || hops > computation.instructions.len() {
                        break;
                    }
                    hops += 1;
                    start = candidate
                        .operands
                        .first()
                        .and_then(|name| by_name.get(name.as_str()).copied());
                }
                if let Some(start) = start {
                    pairs.push(AsyncPair {
                        computation,
                        start,
                        done,
                    });
                }
            }
        }
        pairs
    }
}

/// One asynchronous operation: its start and done instructions.
#[derive(Debug, Clone, Copy)]
pub struct AsyncPair<'a> {
    /// The computation holding both.
    pub computation: &'a Computation,
    /// The `*-start` instruction.
    pub start: &'a Instruction,
    /// The matching `*-done` instruction.
    pub done: &'a Instruction,
}

impl Instruction {
    /// The text of attribute `key`, e.g. `attribute("custom_call_target")` → `"\"__cublas$gemm\""`.
    pub fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.as_str())
    }

    /// `kLoop`, `kInput`, `kOutput`, `kCustom` for fusions.
    pub fn fusion_kind(&self) -> Option<&str> {
        self.attribute("kind")
    }

    /// The custom-call target without quotes.
    pub fn custom_call_target(&self) -> Option<String> {
        self.attribute("custom_call_target")
            .map(crate::text::unquote_lossy)
    }

    /// The backend config parsed as JSON, when it is JSON.
    pub fn backend_config_json(&self) -> Option<serde_json::Value> {
        if self.backend_config.is_empty() {
            return None;
        }
        serde_json::from_str(&self.backend_config).ok()
    }

    /// A while loop's `known_trip_count.n` from its backend config (written as a JSON string).
    pub fn known_trip_count(&self) -> Option<i64> {
        let json = self.backend_config_json()?;
        let n = json.get("known_trip_count")?.get("n")?;
        match n {
            serde_json::Value::String(text) => text.parse().ok(),
            serde_json::Value::Number(number) => number.as_i64(),
            _ => None,
        }
    }
}

impl Computation {
    /// The `ROOT` instruction.
    pub fn root_instruction(&self) -> Option<&Instruction> {
        self.instructions.get(self.root?)
    }

    /// The instruction with this name.
    pub fn instruction(&self, name: &str) -> Option<&Instruction> {
        self.instructions
            .iter()
            .find(|instruction| instruction.name == name)
    }
}

/// The default user-code rule: not under `site-packages`/`dist-packages`, not JAX's own files.
pub fn is_default_user_frame(frame: &Frame<'_>) -> bool {
    let file = frame.file;
    !(file.contains("site-packages/")
        || file.contains("dist-packages/")
        || file.contains("/jax/")
        || file.contains("/jaxlib/")
        || file.starts_with("<frozen "))
}

fn get_1_based<T>(items: &[T], id: i32) -> Option<&T> {
    let index = usize::try_from(id).ok()?.checked_sub(1)?;
    items.get(index)
}
