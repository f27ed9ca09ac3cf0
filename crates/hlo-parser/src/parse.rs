//! HLO text → [`HloModule`]: what XLA prints and what [`crate::module_text`] prints.

use crate::Error;
use crate::model::{Computation, FileLocation, HloModule, Instruction, OpMetadata, StackFrame};
use crate::text::Cursor;

/// Parse one HLO module from its text.
pub fn parse_module(text: &str) -> Result<HloModule, Error> {
    let mut module = HloModule::default();
    let mut saw_header = false;
    let mut entry: Option<String> = None;
    let mut current: Option<Computation> = None;
    let mut section: Option<&str> = None;
    for (index, raw_line) in text.lines().enumerate() {
        let line_no = index + 1;
        // Cursors see the untrimmed line so that columns count from the line's real start.
        let untrimmed = raw_line.trim_end();
        let indent = untrimmed.len() - untrimmed.trim_start().len();
        let line = untrimmed.trim_start();
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        if let Some(computation) = current.as_mut() {
            if line.starts_with('}') {
                let mut cursor = Cursor::new(line, line_no);
                cursor.expect("}")?;
                cursor.skip_spaces();
                if cursor.eat(",") {
                    cursor.skip_spaces();
                    cursor.expect("execution_thread=")?;
                    computation.execution_thread = cursor.quoted()?;
                }
                if let Some(done) = current.take() {
                    module.computations.push(done);
                }
                continue;
            }
            let mut cursor = Cursor::new(untrimmed, line_no);
            cursor.skip_spaces();
            let is_root = cursor.eat("ROOT ");
            cursor.skip_spaces();
            let instruction = parse_instruction(&mut cursor)?;
            if is_root {
                computation.root = Some(computation.instructions.len());
            }
            computation.instructions.push(instruction);
            continue;
        }
        if let Some(rest) = line.strip_prefix("HloModule ") {
            parse_header(&mut module, rest, line_no)?;
            saw_header = true;
            continue;
        }
        if matches!(
            line,
            "FileNames" | "FunctionNames" | "FileLocations" | "StackFrames"
        ) {
            section = Some(match line {
                "FileNames" => "FileNames",
                "FunctionNames" => "FunctionNames",
                "FileLocations" => "FileLocations",
                _ => "StackFrames",
            });
            continue;
        }
        if line.ends_with('{') && !line.starts_with(|ch: char| ch.is_ascii_digit()) {
            let mut cursor = Cursor::new(line, line_no);
            let is_entry = cursor.eat("ENTRY ");
            cursor.skip_spaces();
            let name = cursor.instruction_name()?.to_owned();
            if is_entry {
                entry = Some(name.clone());
            }
            section = None;
            current = Some(Computation {
                name,
                ..Computation::default()
            });
            continue;
        }
        match section {
            Some(section) => parse_stack_frame_line(&mut module, section, line, line_no)?,
            None => {
                return Err(Cursor::at(untrimmed, line_no, indent)
                    .error("expected `HloModule`, a computation or a stack-frame section"));
            }
        }
    }
    if current.is_some() {
        return Err(Error::Parse {
            line: text.lines().count(),
            column: 1,
            message: "computation not closed with `}`".to_owned(),
        });
    }
    if !saw_header {
        return Err(Error::Parse {
            line: 1,
            column: 1,
            message: "no `HloModule` header".to_owned(),
        });
    }
    module.entry_computation = entry
        .or_else(|| {
            module
                .computations
                .last()
                .map(|computation| computation.name.clone())
        })
        .unwrap_or_default();
    Ok(module)
}

fn parse_header(module: &mut HloModule, rest: &str, line_no: usize) -> Result<(), Error> {
    let mut cursor = Cursor::new(rest, line_no);
    module.name = cursor.name()?.to_owned();
    loop {
        cursor.skip_spaces();
        if cursor.at_end() {
            return Ok(());
        }
        cursor.expect(",")?;
        cursor.skip_spaces();
        let key = cursor.take_while(|ch| ch.is_ascii_alphanumeric() || ch == '_');
        cursor.expect("=")?;
        let value = cursor.balanced_until_comma(None)?;
        let mut inner = Cursor::new(value, line_no);
        match key {
            "is_scheduled" => module.is_scheduled = value == "true",
            "entry_computation_layout" => {
                inner.expect("{")?;
                module.entry_computation_layout = Some(inner.program_shape()?);
                inner.expect("}")?;
            }
            "frontend_attributes" => {
                module.frontend_attributes = parse_frontend_attributes(&mut inner)?
            }
            // Other header attributes (replica_count, num_partitions, ...) are not modelled.
            _ => {}
        }
    }
}

fn parse_instruction(cursor: &mut Cursor<'_>) -> Result<Instruction, Error> {
    let mut instruction = Instruction {
        name: cursor.instruction_name()?.to_owned(),
        ..Instruction::default()
    };
    cursor.skip_spaces();
    cursor.expect("=")?;
    cursor.skip_spaces();
    instruction.shape = cursor.shape()?;
    cursor.skip_spaces();
    instruction.opcode = cursor
        .take_while(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_')
        .to_owned();
    if instruction.opcode.is_empty() {
        return Err(cursor.error("expected an opcode"));
    }
    cursor.expect("(")?;
    match instruction.opcode.as_str() {
        "constant" => {
            instruction.literal = Some(cursor.balanced_until_comma(Some(')'))?.to_owned());
            cursor.expect(")")?;
        }
        "parameter" => {
            cursor.skip_spaces();
            instruction.parameter_number = Some(cursor.integer()?);
            cursor.skip_spaces();
            cursor.expect(")")?;
        }
        _ => loop {
            cursor.skip_spaces();
            if cursor.eat(")") {
                break;
            }
            if cursor.peek() != Some('%') && looks_like_shape(cursor.rest()) {
                cursor.shape()?;
                cursor.skip_spaces();
            }
            instruction
                .operands
                .push(cursor.instruction_name()?.to_owned());
            cursor.skip_spaces();
            if !cursor.eat(",") {
                cursor.expect(")")?;
                break;
            }
        },
    }
    let mut while_body = None;
    let mut while_condition = None;
    loop {
        cursor.skip_spaces();
        if cursor.at_end() {
            break;
        }
        cursor.expect(",")?;
        cursor.skip_spaces();
        let key = cursor.take_while(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '-');
        if key.is_empty() {
            return Err(cursor.error("expected an attribute name"));
        }
        cursor.expect("=")?;
        let value_cursor_line = cursor.line();
        let value = cursor.balanced_until_comma(None)?;
        let mut inner = Cursor::new(value, value_cursor_line);
        match key {
            "metadata" => instruction.metadata = parse_metadata(&mut inner)?,
            "backend_config" => {
                instruction.backend_config = if value.starts_with('{') {
                    value.to_owned()
                } else {
                    inner.quoted()?
                };
            }
            "control-predecessors" => instruction.control_predecessors = name_list(&mut inner)?,
            "condition" => while_condition = Some(name_list(&mut inner)?),
            "body" => while_body = Some(name_list(&mut inner)?),
            "calls"
            | "to_apply"
            | "branch_computations"
            | "true_computation"
            | "false_computation"
            | "select"
            | "scatter"
            | "called_computations" => {
                instruction
                    .called_computations
                    .extend(name_list(&mut inner)?);
            }
            _ => instruction
                .attributes
                .push((key.to_owned(), value.to_owned())),
        }
    }
    // XLA stores a while loop's computations as [body, condition].
    if while_body.is_some() || while_condition.is_some() {
        let mut called = while_body.unwrap_or_default();
        called.extend(while_condition.unwrap_or_default());
        called.append(&mut instruction.called_computations);
        instruction.called_computations = called;
    }
    Ok(instruction)
}

/// Whether an operand starts with a shape (`f32[...]`, `(`, `token[]`) rather than a bare name.
fn looks_like_shape(rest: &str) -> bool {
    if rest.starts_with('(') {
        return true;
    }
    let word_len = rest
        .find(|ch: char| !ch.is_ascii_alphanumeric())
        .unwrap_or(rest.len());
    rest[word_len..].starts_with('[')
}

/// `%a` or `{%a, %b}`.
fn name_list(cursor: &mut Cursor<'_>) -> Result<Vec<String>, Error> {
    let mut names = Vec::new();
    if !cursor.eat("{") {
        names.push(cursor.instruction_name()?.to_owned());
        return Ok(names);
    }
    loop {
        cursor.skip_spaces();
        if cursor.eat("}") {
            return Ok(names);
        }
        names.push(cursor.instruction_name()?.to_owned());
        cursor.skip_spaces();
        if !cursor.eat(",") {
            cursor.expect("}")?;
            return Ok(names);
        }
    }
}

fn parse_metadata(cursor: &mut Cursor<'_>) -> Result<OpMetadata, Error> {
    let mut metadata = OpMetadata::default();
    cursor.expect("{")?;
    loop {
        cursor.skip_spaces();
        if cursor.eat("}") {
            return Ok(metadata);
        }
        let key = cursor.take_while(|ch| ch.is_ascii_alphanumeric() || ch == '_');
        cursor.expect("=")?;
        if cursor.peek() == Some('"') {
            let value = cursor.quoted()?;
            match key {
                "op_type" => metadata.op_type = value,
                "op_name" => metadata.op_name = value,
                "source_file" => metadata.source_file = value,
                "deduplicated_name" => metadata.deduplicated_name = value,
                "scheduling_name" => metadata.scheduling_name = value,
                _ => {}
            }
        } else if cursor
            .peek()
            .is_some_and(|ch| ch.is_ascii_digit() || ch == '-')
        {
            let value = cursor.integer()?;
            let value =
                i32::try_from(value).map_err(|_| cursor.error("metadata number out of range"))?;
            match key {
                "source_line" => metadata.source_line = value,
                "source_end_line" => metadata.source_end_line = value,
                "source_column" => metadata.source_column = value,
                "source_end_column" => metadata.source_end_column = value,
                "stack_frame_id" => metadata.stack_frame_id = value,
                _ => {}
            }
        } else {
            // A value we do not model (e.g. `profile_type={...}`): skip one token.
            cursor.take_while(|ch| !ch.is_whitespace() && ch != '}');
        }
    }
}

fn parse_frontend_attributes(cursor: &mut Cursor<'_>) -> Result<Vec<(String, String)>, Error> {
    let mut attributes = Vec::new();
    cursor.expect("{")?;
    loop {
        cursor.skip_spaces();
        if cursor.eat("}") {
            break;
        }
        let key = if cursor.peek() == Some('"') {
            cursor.quoted()?
        } else {
            cursor
                .take_while(|ch| ch != '=' && ch != '}')
                .trim()
                .to_owned()
        };
        cursor.expect("=")?;
        let value = cursor.quoted()?;
        attributes.push((key, value));
        cursor.skip_spaces();
        if !cursor.eat(",") {
            cursor.expect("}")?;
            break;
        }
    }
    attributes.sort();
    Ok(attributes)
}

fn parse_stack_frame_line(
    module: &mut HloModule,
    section: &str,
    line: &str,
    line_no: usize,
) -> Result<(), Error> {
    let mut cursor = Cursor::new(line, line_no);
    cursor.integer()?;
    cursor.skip_spaces();
    let index = &mut module.stack_frames;
    match section {
        "FileNames" => index.file_names.push(cursor.quoted()?),
        "FunctionNames" => index.function_names.push(cursor.quoted()?),
        _ => {
            let fields = key_values(&mut cursor)?;
            let get = |key: &str| {
                fields
                    .iter()
                    .find(|(name, _)| name == key)
                    .map_or(0, |(_, value)| *value)
            };
            if section == "FileLocations" {
                index.file_locations.push(FileLocation {
                    file_name_id: get("file_name_id"),
                    function_name_id: get("function_name_id"),
                    line: get("line"),
                    column: get("column"),
                });
            } else {
                index.frames.push(StackFrame {
                    file_location_id: get("file_location_id"),
                    parent_frame_id: get("parent_frame_id"),
                });
            }
        }
    }
    Ok(())
}

/// `{a=1 b=2}`.
fn key_values(cursor: &mut Cursor<'_>) -> Result<Vec<(String, i32)>, Error> {
    let mut fields = Vec::new();
    cursor.expect("{")?;
    loop {
        cursor.skip_spaces();
        if cursor.eat("}") {
            return Ok(fields);
        }
        let key = cursor
            .take_while(|ch| ch.is_ascii_alphanumeric() || ch == '_')
            .to_owned();
        cursor.expect("=")?;
        let value =
            i32::try_from(cursor.integer()?).map_err(|_| cursor.error("number out of range"))?;
        fields.push((key, value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parse XLA-written text, print it, and check the printed text parses to the same model.
    fn check(text: &str, expect: impl Fn(&HloModule)) {
        let module = parse_module(text).unwrap();
        expect(&module);
        let printed = crate::module_text(&module);
        assert_eq!(parse_module(&printed).unwrap(), module, "{printed}");
    }

    fn check_err(text: &str, expect: &str) {
        assert_eq!(parse_module(text).unwrap_err().to_string(), expect);
    }

    #[test]
    fn xla_text_with_while_and_conditional() {
        let text = r#"HloModule jit_loop, is_scheduled=true, entry_computation_layout={(s32[])->s32[]}, replica_count=1

%cond (p: s32[]) -> pred[] {
  %p = s32[] parameter(0)
  %c = s32[] constant(4)
  ROOT %lt = pred[] compare(s32[] %p, s32[] %c), direction=LT
}

%body (p.1: s32[]) -> s32[] {
  %p.1 = s32[] parameter(0)
  %one = s32[] constant(1)
  ROOT %add = s32[] add(%p.1, %one), sharding={replicated}
}

%t (x: s32[]) -> s32[] {
  ROOT %x = s32[] parameter(0)
}

ENTRY %main.2 (a: s32[]) -> s32[] {
  %a = s32[] parameter(0)
  %w = s32[] while(s32[] %a), condition=%cond, body=%body, backend_config={"known_trip_count":{"n":"4"}}
  %pr = pred[] constant(true)
  ROOT %r = s32[] conditional(pred[] %pr, s32[] %w, s32[] %w), true_computation=%t, false_computation=%t, metadata={op_name="jit(f)/cond" source_file="f.py" source_line=7}
}
"#;
        check(text, |module| {
            assert!(module.is_scheduled);
            assert_eq!(module.entry_computation, "main.2");
            let (_, w) = module.instruction("w").unwrap();
            assert_eq!(w.called_computations, ["body", "cond"]);
            assert_eq!(w.known_trip_count(), Some(4));
            let (_, add) = module.instruction("add").unwrap();
            assert_eq!(add.operands, ["p.1", "one"]);
            assert_eq!(add.attribute("sharding"), Some("{replicated}"));
            let (_, r) = module.instruction("r").unwrap();
            assert_eq!(
                module.source_line(r).map(|line| (line.file, line.line)),
                Some(("f.py", 7))
            );
        });
    }

    #[test]
    fn async_pairs() {
        let text = r#"HloModule m

ENTRY %main (p: f32[8]) -> f32[32] {
  %p = f32[8]{0} parameter(0)
  %ags = (f32[8]{0}, f32[32]{0}) all-gather-start(f32[8]{0} %p), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true
  ROOT %agd = f32[32]{0} all-gather-done((f32[8]{0}, f32[32]{0}) %ags)
}
"#;
        check(text, |module| {
            let pairs = module.async_pairs();
            assert_eq!(pairs.len(), 1);
            assert_eq!(
                (pairs[0].start.name.as_str(), pairs[0].done.name.as_str()),
                ("ags", "agd")
            );
        });
    }

    #[test]
    fn errors_name_line_and_column() {
        check_err(
            "ENTRY %m () -> f32[] {\n",
            "HLO text line 1, column 1: computation not closed with `}`",
        );
        check_err(
            "HloModule m\n\nENTRY %main () -> f32[] {\n  ROOT %c = f99[] constant(0)\n}\n",
            "HLO text line 4, column 13: unknown element type `f99`",
        );
        check_err(
            "%x = f32[] add()\n",
            "HLO text line 1, column 1: expected `HloModule`, a computation or a stack-frame section",
        );
    }
}
