//! `xla.HloProto` / `xla.HloModuleProto` bytes → [`HloModule`].

use std::collections::HashMap;

use prost::Message;

use crate::generated as proto;
use crate::model::{
    ArrayShape, Computation, FileLocation, HloModule, Instruction, Layout, OpMetadata,
    ProgramShape, Shape, StackFrame, StackFrameIndex,
};
use crate::{Error, attributes, literal};

/// Decode a serialized `xla.HloProto` (what `/host:metadata` stores as `Hlo Proto`, and what XLA
/// dumps as `*.hlo.pb`).
pub fn module_from_hlo_proto(bytes: &[u8]) -> Result<HloModule, Error> {
    let hlo = proto::HloProto::decode(bytes).map_err(|source| Error::Decode { source })?;
    let module = hlo.hlo_module.unwrap_or_default();
    convert_module(&module)
}

/// Decode a serialized `xla.HloModuleProto`.
pub fn module_from_module_proto(bytes: &[u8]) -> Result<HloModule, Error> {
    let module = proto::HloModuleProto::decode(bytes).map_err(|source| Error::Decode { source })?;
    convert_module(&module)
}

fn convert_module(module: &proto::HloModuleProto) -> Result<HloModule, Error> {
    let fail = |message: String| Error::Proto {
        module: module.name.clone(),
        message,
    };
    let computation_names: HashMap<i64, &str> = module
        .computations
        .iter()
        .map(|computation| (computation.id, computation.name.as_str()))
        .collect();
    let entry_computation = if module.entry_computation_name.is_empty() {
        computation_names
            .get(&module.entry_computation_id)
            .map(|name| (*name).to_owned())
            .ok_or_else(|| {
                fail(format!(
                    "entry computation id {} not found",
                    module.entry_computation_id
                ))
            })?
    } else {
        module.entry_computation_name.clone()
    };
    let schedule = module.schedule.as_ref();
    let is_scheduled = schedule.is_some_and(|schedule| !schedule.sequences.is_empty());
    let mut computations = Vec::with_capacity(module.computations.len());
    for computation in &module.computations {
        let sequence = schedule
            .and_then(|schedule| schedule.sequences.get(&computation.id))
            .map(|sequence| sequence.instruction_ids.as_slice());
        computations.push(convert_computation(
            computation,
            &computation_names,
            sequence,
            &fail,
        )?);
    }
    let entry_computation_layout = match &module.host_program_shape {
        Some(program_shape) => Some(convert_program_shape(program_shape, &fail)?),
        None => match module
            .computations
            .iter()
            .find(|computation| computation.name == entry_computation)
        {
            Some(proto::HloComputationProto {
                program_shape: Some(program_shape),
                ..
            }) => Some(convert_program_shape(program_shape, &fail)?),
            _ => None,
        },
    };
    Ok(HloModule {
        name: module.name.clone(),
        entry_computation,
        is_scheduled,
        entry_computation_layout,
        frontend_attributes: frontend_attributes(module.frontend_attributes.as_ref()),
        computations,
        stack_frames: convert_stack_frames(module.stack_frame_index.as_ref()),
    })
}

fn convert_computation(
    computation: &proto::HloComputationProto,
    computation_names: &HashMap<i64, &str>,
    sequence: Option<&[i64]>,
    fail: &dyn Fn(String) -> Error,
) -> Result<Computation, Error> {
    let names: HashMap<i64, &str> = computation
        .instructions
        .iter()
        .map(|instruction| (instruction.id, instruction.name.as_str()))
        .collect();
    let instruction_name = |id: i64, what: &str, user: &str| -> Result<String, Error> {
        names
            .get(&id)
            .map(|name| (*name).to_owned())
            .ok_or_else(|| {
                fail(format!(
                    "instruction `{user}` in `{}`: {what} id {id} not found",
                    computation.name
                ))
            })
    };
    // Schedule order first, then any instruction the sequence does not list, in proto order.
    let mut order: Vec<&proto::HloInstructionProto> =
        Vec::with_capacity(computation.instructions.len());
    if let Some(sequence) = sequence {
        let by_id: HashMap<i64, &proto::HloInstructionProto> = computation
            .instructions
            .iter()
            .map(|instruction| (instruction.id, instruction))
            .collect();
        let mut seen = std::collections::HashSet::new();
        for id in sequence {
            if let Some(instruction) = by_id.get(id)
                && seen.insert(*id)
            {
                order.push(instruction);
            }
        }
        order.extend(
            computation
                .instructions
                .iter()
                .filter(|instruction| !seen.contains(&instruction.id)),
        );
    } else {
        order.extend(computation.instructions.iter());
    }
    let mut instructions = Vec::with_capacity(order.len());
    let mut root = None;
    for instruction in order {
        if instruction.id == computation.root_id {
            root = Some(instructions.len());
        }
        let operands = instruction
            .operand_ids
            .iter()
            .map(|id| instruction_name(*id, "operand", &instruction.name))
            .collect::<Result<Vec<_>, _>>()?;
        let control_predecessors = instruction
            .control_predecessor_ids
            .iter()
            .map(|id| instruction_name(*id, "control predecessor", &instruction.name))
            .collect::<Result<Vec<_>, _>>()?;
        let called_computations = instruction
            .called_computation_ids
            .iter()
            .map(|id| {
                computation_names
                    .get(id)
                    .map(|name| (*name).to_owned())
                    .ok_or_else(|| {
                        fail(format!(
                            "instruction `{}`: called computation id {id} not found",
                            instruction.name
                        ))
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let shape = convert_shape(instruction.shape.as_ref(), fail)
            .map_err(|err| with_context(err, &instruction.name))?;
        let backend_config =
            String::from_utf8(instruction.backend_config.clone()).map_err(|_| {
                fail(format!(
                    "instruction `{}`: backend_config is not UTF-8",
                    instruction.name
                ))
            })?;
        let literal = if instruction.opcode == "constant" {
            Some(literal::literal_text(instruction.literal.as_ref(), &shape))
        } else {
            None
        };
        instructions.push(Instruction {
            name: instruction.name.clone(),
            opcode: instruction.opcode.clone(),
            shape,
            operands,
            called_computations,
            control_predecessors,
            parameter_number: (instruction.opcode == "parameter")
                .then_some(instruction.parameter_number),
            literal,
            metadata: convert_metadata(instruction.metadata.as_ref()),
            backend_config,
            attributes: attributes::from_proto(instruction, fail)?,
        });
    }
    Ok(Computation {
        name: computation.name.clone(),
        instructions,
        root,
        execution_thread: if computation.execution_thread == "main" {
            String::new()
        } else {
            computation.execution_thread.clone()
        },
    })
}

fn with_context(err: Error, instruction: &str) -> Error {
    match err {
        Error::Proto { module, message } => Error::Proto {
            module,
            message: format!("instruction `{instruction}`: {message}"),
        },
        other => other,
    }
}

/// `ShapeProto` → [`Shape`]; a missing shape is the empty tuple.
pub(crate) fn convert_shape(
    shape: Option<&proto::ShapeProto>,
    fail: &dyn Fn(String) -> Error,
) -> Result<Shape, Error> {
    let Some(shape) = shape else {
        return Ok(Shape::Tuple(Vec::new()));
    };
    let element_type = shape.element_type;
    match element_type {
        13 => {
            let elements = shape
                .tuple_shapes
                .iter()
                .map(|element| convert_shape(Some(element), fail))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Shape::Tuple(elements))
        }
        17 => Ok(Shape::Token),
        14 => Ok(Shape::Opaque),
        _ => {
            let element_type = crate::model::ElementType::from_primitive_type(element_type)
                .ok_or_else(|| fail(format!("unsupported element type {element_type}")))?;
            let dynamic = if shape.is_dynamic_dimension.iter().any(|dynamic| *dynamic) {
                shape.is_dynamic_dimension.clone()
            } else {
                Vec::new()
            };
            let layout = shape.layout.as_ref().and_then(|layout| {
                let layout = Layout {
                    minor_to_major: layout.minor_to_major.clone(),
                    tiles: layout
                        .tiles
                        .iter()
                        .map(|tile| tile.dimensions.clone())
                        .collect(),
                    element_size_in_bits: layout.element_size_in_bits,
                    memory_space: layout.memory_space,
                };
                // A scalar's layout prints as nothing: keep the model equal to its text.
                (!shape.dimensions.is_empty() || layout != Layout::default()).then_some(layout)
            });
            Ok(Shape::Array(ArrayShape {
                element_type,
                dimensions: shape.dimensions.clone(),
                dynamic,
                layout,
            }))
        }
    }
}

fn convert_program_shape(
    shape: &proto::ProgramShapeProto,
    fail: &dyn Fn(String) -> Error,
) -> Result<ProgramShape, Error> {
    Ok(ProgramShape {
        parameters: shape
            .parameters
            .iter()
            .map(|parameter| convert_shape(Some(parameter), fail))
            .collect::<Result<Vec<_>, _>>()?,
        result: convert_shape(shape.result.as_ref(), fail)?,
    })
}

fn convert_metadata(metadata: Option<&proto::OpMetadata>) -> OpMetadata {
    let Some(metadata) = metadata else {
        return OpMetadata::default();
    };
    OpMetadata {
        op_type: metadata.op_type.clone(),
        op_name: metadata.op_name.clone(),
        source_file: metadata.source_file.clone(),
        source_line: metadata.source_line,
        source_end_line: metadata.source_end_line,
        source_column: metadata.source_column,
        source_end_column: metadata.source_end_column,
        deduplicated_name: metadata.deduplicated_name.clone(),
        scheduling_name: metadata.scheduling_name.clone(),
        stack_frame_id: metadata.stack_frame_id,
    }
}

fn convert_stack_frames(index: Option<&proto::StackFrameIndexProto>) -> StackFrameIndex {
    let Some(index) = index else {
        return StackFrameIndex::default();
    };
    StackFrameIndex {
        file_names: index.file_names.clone(),
        function_names: index.function_names.clone(),
        file_locations: index
            .file_locations
            .iter()
            .map(|location| FileLocation {
                file_name_id: location.file_name_id,
                function_name_id: location.function_name_id,
                line: location.line,
                column: location.column,
            })
            .collect(),
        frames: index
            .stack_frames
            .iter()
            .map(|frame| StackFrame {
                file_location_id: frame.file_location_id,
                parent_frame_id: frame.parent_frame_id,
            })
            .collect(),
    }
}

pub(crate) fn frontend_attributes(
    attributes: Option<&proto::FrontendAttributes>,
) -> Vec<(String, String)> {
    attributes
        .map(|attributes| {
            attributes
                .map
                .iter()
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SourceVia;

    fn shape(element_type: i32, dimensions: &[i64]) -> Option<proto::ShapeProto> {
        Some(proto::ShapeProto {
            element_type,
            dimensions: dimensions.to_vec(),
            layout: (!dimensions.is_empty()).then(|| proto::LayoutProto {
                minor_to_major: (0..dimensions.len() as i64).rev().collect(),
                ..Default::default()
            }),
            ..Default::default()
        })
    }

    fn instruction(
        id: i64,
        name: &str,
        opcode: &str,
        operands: &[i64],
    ) -> proto::HloInstructionProto {
        proto::HloInstructionProto {
            id,
            name: name.to_owned(),
            opcode: opcode.to_owned(),
            shape: shape(11, &[8]),
            operand_ids: operands.to_vec(),
            ..Default::default()
        }
    }

    /// A module as newer JAX writes it: metadata through the stack-frame index only.
    fn module_bytes() -> Vec<u8> {
        let mut parameter = instruction(1, "p", "parameter", &[]);
        parameter.parameter_number = 0;
        let mut negate = instruction(2, "neg", "negate", &[1]);
        negate.metadata = Some(proto::OpMetadata {
            op_name: "jit(f)/neg".to_owned(),
            stack_frame_id: 2,
            ..Default::default()
        });
        let mut dot = instruction(3, "dot", "dot", &[2, 2]);
        dot.dot_dimension_numbers = Some(proto::DotDimensionNumbers {
            lhs_contracting_dimensions: vec![0],
            rhs_contracting_dimensions: vec![0],
            ..Default::default()
        });
        dot.shape = shape(11, &[]);
        dot.backend_config = br#"{"operation_queue_id":"0"}"#.to_vec();
        let module = proto::HloModuleProto {
            name: "jit_f".to_owned(),
            entry_computation_name: "main".to_owned(),
            computations: vec![proto::HloComputationProto {
                name: "main".to_owned(),
                id: 7,
                root_id: 3,
                instructions: vec![parameter, negate, dot],
                ..Default::default()
            }],
            schedule: Some(proto::HloScheduleProto {
                sequences: [(
                    7,
                    proto::hlo_schedule_proto::InstructionSequence {
                        instruction_ids: vec![1, 2, 3],
                    },
                )]
                .into_iter()
                .collect(),
            }),
            stack_frame_index: Some(proto::StackFrameIndexProto {
                file_names: vec![
                    "/usr/lib/python3/site-packages/jax/api.py".to_owned(),
                    "/work/f.py".to_owned(),
                ],
                function_names: vec!["jit_wrapper".to_owned(), "f".to_owned()],
                file_locations: vec![
                    proto::stack_frame_index_proto::FileLocation {
                        file_name_id: 2,
                        function_name_id: 2,
                        line: 12,
                        column: 4,
                    },
                    proto::stack_frame_index_proto::FileLocation {
                        file_name_id: 1,
                        function_name_id: 1,
                        line: 300,
                        column: 0,
                    },
                ],
                stack_frames: vec![
                    proto::stack_frame_index_proto::StackFrame {
                        file_location_id: 1,
                        parent_frame_id: 0,
                    },
                    proto::stack_frame_index_proto::StackFrame {
                        file_location_id: 2,
                        parent_frame_id: 1,
                    },
                ],
            }),
            ..Default::default()
        };
        proto::HloProto {
            hlo_module: Some(module),
        }
        .encode_to_vec()
    }

    #[test]
    fn proto_to_model_to_text_and_back() {
        let module = module_from_hlo_proto(&module_bytes()).unwrap();
        assert!(module.is_scheduled);
        let (_, neg) = module.instruction("neg").unwrap();
        // The innermost frame is JAX's own; the user frame is f.py:12.
        let stack = module.stack(neg.metadata.stack_frame_id);
        assert_eq!(
            stack.iter().map(|frame| frame.line).collect::<Vec<_>>(),
            [300, 12]
        );
        let line = module.source_line(neg).unwrap();
        assert_eq!(
            (line.file, line.line, line.function, line.via),
            ("/work/f.py", 12, "f", SourceVia::StackFrames)
        );
        let text = module.to_string();
        assert!(text.contains("ROOT %dot = f32[] dot(f32[8]{0} %neg, f32[8]{0} %neg), lhs_contracting_dims={0}, rhs_contracting_dims={0}, backend_config={\"operation_queue_id\":\"0\"}"), "{text}");
        assert_eq!(crate::parse_module(&text).unwrap(), module);
    }

    #[test]
    fn bad_protos_are_errors() {
        assert!(matches!(
            module_from_hlo_proto(b"\x0a\x05abc"),
            Err(Error::Decode { .. })
        ));
        let mut bytes = module_bytes();
        // Point an operand at a missing id by decoding, editing and re-encoding.
        let mut hlo = proto::HloProto::decode(bytes.as_slice()).unwrap();
        hlo.hlo_module.as_mut().unwrap().computations[0].instructions[1].operand_ids = vec![99];
        bytes = hlo.encode_to_vec();
        let err = module_from_hlo_proto(&bytes).unwrap_err().to_string();
        assert_eq!(
            err,
            "HLO module `jit_f`: instruction `neg` in `main`: operand id 99 not found"
        );
    }
}
