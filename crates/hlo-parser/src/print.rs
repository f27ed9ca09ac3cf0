//! [`HloModule`] → HLO text, in the form XLA prints (`HloModule`, `ENTRY`, `%name = shape op(...)`).

use std::collections::HashMap;
use std::fmt::{self, Write};

use crate::attributes::frontend_attributes_text;
use crate::model::{Computation, HloModule, Instruction, OpMetadata, Shape};
use crate::text::{program_shape_text, quote, write_shape};

impl fmt::Display for HloModule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&module_text(self))
    }
}

/// The whole module as HLO text.
pub fn module_text(module: &HloModule) -> String {
    let mut out = String::new();
    out.push_str("HloModule ");
    out.push_str(&module.name);
    if module.is_scheduled {
        out.push_str(", is_scheduled=true");
    }
    if let Some(layout) = &module.entry_computation_layout {
        let _ = write!(
            out,
            ", entry_computation_layout={{{}}}",
            program_shape_text(layout)
        );
    }
    if !module.frontend_attributes.is_empty() {
        let _ = write!(
            out,
            ", frontend_attributes={}",
            frontend_attributes_text(&module.frontend_attributes)
        );
    }
    out.push_str("\n\n");
    for computation in &module.computations {
        write_computation(
            &mut out,
            computation,
            computation.name == module.entry_computation,
        );
        out.push('\n');
    }
    write_stack_frames(&mut out, module);
    out
}

fn write_computation(out: &mut String, computation: &Computation, is_entry: bool) {
    if is_entry {
        out.push_str("ENTRY ");
    }
    let _ = write!(out, "%{} (", computation.name);
    let mut parameters: Vec<&Instruction> = computation
        .instructions
        .iter()
        .filter(|instruction| instruction.parameter_number.is_some())
        .collect();
    parameters.sort_by_key(|instruction| instruction.parameter_number);
    for (index, parameter) in parameters.iter().enumerate() {
        if index > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{}: ", parameter.name);
        write_shape(out, &parameter.shape);
    }
    out.push_str(") -> ");
    match computation.root_instruction() {
        Some(root) => write_shape(out, &root.shape),
        None => out.push_str("()"),
    }
    out.push_str(" {\n");
    let shapes: HashMap<&str, &Shape> = computation
        .instructions
        .iter()
        .map(|instruction| (instruction.name.as_str(), &instruction.shape))
        .collect();
    for (index, instruction) in computation.instructions.iter().enumerate() {
        out.push_str("  ");
        if computation.root == Some(index) {
            out.push_str("ROOT ");
        }
        write_instruction(out, instruction, &shapes);
        out.push('\n');
    }
    out.push('}');
    if !computation.execution_thread.is_empty() {
        let _ = write!(
            out,
            ", execution_thread={}",
            quote(&computation.execution_thread)
        );
    }
    out.push('\n');
}

fn write_instruction(out: &mut String, instruction: &Instruction, shapes: &HashMap<&str, &Shape>) {
    let _ = write!(out, "%{} = ", instruction.name);
    write_shape(out, &instruction.shape);
    let _ = write!(out, " {}(", instruction.opcode);
    if let Some(literal) = &instruction.literal {
        out.push_str(literal);
    } else if let Some(number) = instruction.parameter_number {
        let _ = write!(out, "{number}");
    } else {
        for (index, operand) in instruction.operands.iter().enumerate() {
            if index > 0 {
                out.push_str(", ");
            }
            if let Some(shape) = shapes.get(operand.as_str()) {
                write_shape(out, shape);
                out.push(' ');
            }
            let _ = write!(out, "%{operand}");
        }
    }
    out.push(')');
    for (key, value) in &instruction.attributes {
        let _ = write!(out, ", {key}={value}");
    }
    write_called_computations(out, instruction);
    if !instruction.control_predecessors.is_empty() {
        let _ = write!(
            out,
            ", control-predecessors={}",
            name_list(&instruction.control_predecessors)
        );
    }
    if instruction.metadata != OpMetadata::default() {
        out.push_str(", metadata=");
        write_metadata(out, &instruction.metadata);
    }
    let config = &instruction.backend_config;
    if !config.is_empty() {
        out.push_str(", backend_config=");
        if config.starts_with('{')
            && config.ends_with('}')
            && !config.contains('\n')
            && !config.contains('\r')
        {
            out.push_str(config);
        } else {
            out.push_str(&quote(config));
        }
    }
}

/// The keyword XLA uses for each opcode's called computations.
fn write_called_computations(out: &mut String, instruction: &Instruction) {
    let called = &instruction.called_computations;
    match (instruction.opcode.as_str(), called.as_slice()) {
        (_, []) => {}
        ("while", [body, condition]) => {
            let _ = write!(out, ", condition=%{condition}, body=%{body}");
        }
        ("select-and-scatter", [select, scatter]) => {
            let _ = write!(out, ", select=%{select}, scatter=%{scatter}");
        }
        ("conditional", _) => {
            let _ = write!(out, ", branch_computations={}", name_list(called));
        }
        ("fusion" | "async-start" | "async-update" | "async-done" | "call", [single]) => {
            let key = if instruction.opcode == "call" {
                "to_apply"
            } else {
                "calls"
            };
            let _ = write!(out, ", {key}=%{single}");
        }
        ("custom-call", _) => {
            let _ = write!(out, ", called_computations={}", name_list(called));
        }
        (_, [single]) => {
            let _ = write!(out, ", to_apply=%{single}");
        }
        (_, _) => {
            let _ = write!(out, ", called_computations={}", name_list(called));
        }
    }
}

fn name_list(names: &[String]) -> String {
    let names: Vec<String> = names.iter().map(|name| format!("%{name}")).collect();
    format!("{{{}}}", names.join(", "))
}

fn write_metadata(out: &mut String, metadata: &OpMetadata) {
    let mut parts: Vec<String> = Vec::new();
    for (key, value) in [
        ("op_type", &metadata.op_type),
        ("op_name", &metadata.op_name),
        ("source_file", &metadata.source_file),
    ] {
        if !value.is_empty() {
            parts.push(format!("{key}={}", quote(value)));
        }
    }
    for (key, value) in [
        ("source_line", metadata.source_line),
        ("source_end_line", metadata.source_end_line),
        ("source_column", metadata.source_column),
        ("source_end_column", metadata.source_end_column),
    ] {
        if value != 0 {
            parts.push(format!("{key}={value}"));
        }
    }
    for (key, value) in [
        ("deduplicated_name", &metadata.deduplicated_name),
        ("scheduling_name", &metadata.scheduling_name),
    ] {
        if !value.is_empty() {
            parts.push(format!("{key}={}", quote(value)));
        }
    }
    if metadata.stack_frame_id != 0 {
        parts.push(format!("stack_frame_id={}", metadata.stack_frame_id));
    }
    let _ = write!(out, "{{{}}}", parts.join(" "));
}

fn write_stack_frames(out: &mut String, module: &HloModule) {
    let index = &module.stack_frames;
    for (title, names) in [
        ("FileNames", &index.file_names),
        ("FunctionNames", &index.function_names),
    ] {
        if names.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{title}");
        for (id, name) in names.iter().enumerate() {
            let _ = writeln!(out, "{} {}", id + 1, quote(name));
        }
    }
    if !index.file_locations.is_empty() {
        out.push_str("FileLocations\n");
        for (id, location) in index.file_locations.iter().enumerate() {
            let _ = writeln!(
                out,
                "{} {{file_name_id={} function_name_id={} line={} column={}}}",
                id + 1,
                location.file_name_id,
                location.function_name_id,
                location.line,
                location.column
            );
        }
    }
    if !index.frames.is_empty() {
        out.push_str("StackFrames\n");
        for (id, frame) in index.frames.iter().enumerate() {
            let _ = writeln!(
                out,
                "{} {{file_location_id={} parent_frame_id={}}}",
                id + 1,
                frame.file_location_id,
                frame.parent_frame_id
            );
        }
    }
}
