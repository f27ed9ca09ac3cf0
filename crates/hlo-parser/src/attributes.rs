//! Instruction attributes from the proto, rendered as the XLA text of their values.

use std::fmt::Write;

use crate::Error;
use crate::generated as proto;
use crate::text::{ints, quote};

/// Every attribute the model keeps as text, in the order XLA prints them.
pub(crate) fn from_proto(
    instruction: &proto::HloInstructionProto,
    fail: &dyn Fn(String) -> Error,
) -> Result<Vec<(String, String)>, Error> {
    let mut out: Vec<(String, String)> = Vec::new();
    shape_attributes(instruction, fail, &mut out)?;
    let mut push = |key: &str, value: String| out.push((key.to_owned(), value));
    let opcode = instruction.opcode.as_str();

    if let Some(scatter) = &instruction.scatter_dimension_numbers {
        push(
            "update_window_dims",
            format!("{{{}}}", ints(&scatter.update_window_dims)),
        );
        push(
            "inserted_window_dims",
            format!("{{{}}}", ints(&scatter.inserted_window_dims)),
        );
        push(
            "scatter_dims_to_operand_dims",
            format!("{{{}}}", ints(&scatter.scatter_dims_to_operand_dims)),
        );
        if !scatter.input_batching_dims.is_empty() {
            push(
                "input_batching_dims",
                format!("{{{}}}", ints(&scatter.input_batching_dims)),
            );
        }
        if !scatter.scatter_indices_batching_dims.is_empty() {
            push(
                "scatter_indices_batching_dims",
                format!("{{{}}}", ints(&scatter.scatter_indices_batching_dims)),
            );
        }
        push("index_vector_dim", scatter.index_vector_dim.to_string());
    }
    if instruction.indices_are_sorted {
        push("indices_are_sorted", "true".to_owned());
    }
    if instruction.unique_indices {
        push("unique_indices", "true".to_owned());
    }
    if !instruction.comparison_direction.is_empty() {
        push("direction", instruction.comparison_direction.clone());
    }
    if !instruction.comparison_type.is_empty() {
        push("type", instruction.comparison_type.clone());
    }
    if instruction.is_stable {
        push("is_stable", "true".to_owned());
    }
    if opcode == "reduce-precision" {
        push("exponent_bits", instruction.exponent_bits.to_string());
        push("mantissa_bits", instruction.mantissa_bits.to_string());
    }
    if opcode.starts_with("batch-norm") {
        push("epsilon", format!("{:?}", instruction.epsilon));
        push("feature_index", instruction.feature_index.to_string());
    }
    if instruction.channel_id > 0 {
        push("channel_id", instruction.channel_id.to_string());
    }
    if let Some(groups) = replica_groups(instruction) {
        push("replica_groups", groups);
    }
    if instruction.use_global_device_ids {
        push("use_global_device_ids", "true".to_owned());
    }
    if !instruction.source_target_pairs.is_empty() {
        let pairs: Vec<String> = instruction
            .source_target_pairs
            .iter()
            .map(|pair| format!("{{{},{}}}", pair.source, pair.target))
            .collect();
        push("source_target_pairs", format!("{{{}}}", pairs.join(",")));
    }
    if !instruction.custom_call_target.is_empty() {
        push("custom_call_target", quote(&instruction.custom_call_target));
    }
    if instruction.custom_call_has_side_effect {
        push("custom_call_has_side_effect", "true".to_owned());
    }
    if instruction.constrain_layout {
        let mut shapes = Vec::new();
        for shape in &instruction.operand_shapes_with_layout {
            let shape = crate::from_proto::convert_shape(Some(shape), fail)?;
            shapes.push(crate::text::shape_text(&shape));
        }
        push(
            "operand_layout_constraints",
            format!("{{{}}}", shapes.join(", ")),
        );
    }
    if !instruction.output_operand_aliasing.is_empty() {
        let parts: Vec<String> = instruction
            .output_operand_aliasing
            .iter()
            .map(|alias| {
                format!(
                    "{{{}}}: ({}, {{{}}})",
                    ints(&alias.output_shape_index),
                    alias.operand_index,
                    ints(&alias.operand_shape_index)
                )
            })
            .collect();
        push(
            "output_to_operand_aliasing",
            format!("{{{}}}", parts.join(", ")),
        );
    }
    if opcode == "custom-call" && instruction.custom_call_api_version > 1 {
        let name = match instruction.custom_call_api_version {
            2 => "API_VERSION_STATUS_RETURNING".to_owned(),
            3 => "API_VERSION_STATUS_RETURNING_UNIFIED".to_owned(),
            4 => "API_VERSION_TYPED_FFI".to_owned(),
            other => other.to_string(),
        };
        push("api_version", name);
    }
    if let Some(precision) = &instruction.precision_config {
        if precision.operand_precision.iter().any(|value| *value != 0) {
            let names: Vec<String> = precision
                .operand_precision
                .iter()
                .map(|value| match value {
                    0 => "default".to_owned(),
                    1 => "high".to_owned(),
                    2 => "highest".to_owned(),
                    other => other.to_string(),
                })
                .collect();
            push("operand_precision", format!("{{{}}}", names.join(",")));
        }
        if precision.algorithm != 0 {
            push("algorithm", precision.algorithm.to_string());
        }
    }
    if !instruction.async_execution_thread.is_empty()
        && instruction.async_execution_thread != "main"
    {
        push(
            "async_execution_thread",
            quote(&instruction.async_execution_thread),
        );
    }
    if instruction.is_composite {
        push("is_composite", "true".to_owned());
    }
    let frontend = crate::from_proto::frontend_attributes(instruction.frontend_attributes.as_ref());
    if !frontend.is_empty() {
        push("frontend_attributes", frontend_attributes_text(&frontend));
    }
    Ok(out)
}

/// The attributes of an instruction's shape and layout operands, in HLO text's order (the
/// first of them: tuple index to gather); [`from_proto`] adds the rest.
fn shape_attributes(
    instruction: &proto::HloInstructionProto,
    fail: &dyn Fn(String) -> Error,
    out: &mut Vec<(String, String)>,
) -> Result<(), Error> {
    let mut push = |key: &str, value: String| out.push((key.to_owned(), value));
    let opcode = instruction.opcode.as_str();

    if opcode == "get-tuple-element" {
        push("index", instruction.tuple_index.to_string());
    }
    if !instruction.fusion_kind.is_empty() {
        push("kind", instruction.fusion_kind.clone());
    }
    if opcode == "iota" {
        if let Some(dimension) = instruction.dimensions.first() {
            push("iota_dimension", dimension.to_string());
        }
    } else if !instruction.dimensions.is_empty() {
        push(
            "dimensions",
            format!("{{{}}}", ints(&instruction.dimensions)),
        );
    }
    if !instruction.slice_dimensions.is_empty() {
        let parts: Vec<String> = instruction
            .slice_dimensions
            .iter()
            .map(|slice| {
                if slice.stride == 1 {
                    format!("[{}:{}]", slice.start, slice.limit)
                } else {
                    format!("[{}:{}:{}]", slice.start, slice.limit, slice.stride)
                }
            })
            .collect();
        push("slice", format!("{{{}}}", parts.join(", ")));
    }
    if !instruction.dynamic_slice_sizes.is_empty() {
        push(
            "dynamic_slice_sizes",
            format!("{{{}}}", ints(&instruction.dynamic_slice_sizes)),
        );
    }
    if let Some(padding) = &instruction.padding_config {
        let parts: Vec<String> = padding
            .dimensions
            .iter()
            .map(|dimension| {
                if dimension.interior_padding == 0 {
                    format!(
                        "{}_{}",
                        dimension.edge_padding_low, dimension.edge_padding_high
                    )
                } else {
                    format!(
                        "{}_{}_{}",
                        dimension.edge_padding_low,
                        dimension.edge_padding_high,
                        dimension.interior_padding
                    )
                }
            })
            .collect();
        push("padding", parts.join("x"));
    }
    if let Some(window) = &instruction.window
        && !window.dimensions.is_empty()
    {
        push("window", format!("{{{}}}", window_text(window)));
    }
    if let Some(numbers) = &instruction.convolution_dimension_numbers {
        push("dim_labels", conv_dim_labels(numbers, fail)?);
    }
    if instruction.feature_group_count > 1 {
        push(
            "feature_group_count",
            instruction.feature_group_count.to_string(),
        );
    }
    if instruction.batch_group_count > 1 {
        push(
            "batch_group_count",
            instruction.batch_group_count.to_string(),
        );
    }
    if let Some(dot) = &instruction.dot_dimension_numbers {
        for (key, dims) in [
            ("lhs_batch_dims", &dot.lhs_batch_dimensions),
            ("lhs_contracting_dims", &dot.lhs_contracting_dimensions),
            ("rhs_batch_dims", &dot.rhs_batch_dimensions),
            ("rhs_contracting_dims", &dot.rhs_contracting_dimensions),
        ] {
            if !dims.is_empty() {
                push(key, format!("{{{}}}", ints(dims)));
            }
        }
    }
    if let Some(gather) = &instruction.gather_dimension_numbers {
        push("offset_dims", format!("{{{}}}", ints(&gather.offset_dims)));
        push(
            "collapsed_slice_dims",
            format!("{{{}}}", ints(&gather.collapsed_slice_dims)),
        );
        push(
            "start_index_map",
            format!("{{{}}}", ints(&gather.start_index_map)),
        );
        if !gather.operand_batching_dims.is_empty() {
            push(
                "operand_batching_dims",
                format!("{{{}}}", ints(&gather.operand_batching_dims)),
            );
        }
        if !gather.start_indices_batching_dims.is_empty() {
            push(
                "start_indices_batching_dims",
                format!("{{{}}}", ints(&gather.start_indices_batching_dims)),
            );
        }
        push("index_vector_dim", gather.index_vector_dim.to_string());
    }
    if !instruction.gather_slice_sizes.is_empty() {
        push(
            "slice_sizes",
            format!("{{{}}}", ints(&instruction.gather_slice_sizes)),
        );
    }
    Ok(())
}

/// `{a="1",b="x"}`.
pub(crate) fn frontend_attributes_text(attributes: &[(String, String)]) -> String {
    let parts: Vec<String> = attributes
        .iter()
        .map(|(key, value)| format!("{key}={}", quote(value)))
        .collect();
    format!("{{{}}}", parts.join(","))
}

fn replica_groups(instruction: &proto::HloInstructionProto) -> Option<String> {
    let list = |groups: &[proto::ReplicaGroup]| {
        let parts: Vec<String> = groups
            .iter()
            .map(|group| format!("{{{}}}", ints(&group.replica_ids)))
            .collect();
        format!("{{{}}}", parts.join(","))
    };
    if let Some(devices) = &instruction.collective_device_list {
        if let Some(iota) = &devices.iota_replica_group_list {
            let mut text = format!(
                "[{},{}]<=[{}]",
                iota.num_replica_groups,
                iota.num_devices_per_group,
                ints(&iota.iota_reshape_dims)
            );
            let identity = iota
                .iota_transpose_perm
                .iter()
                .enumerate()
                .all(|(index, value)| {
                    i64::try_from(index).is_ok_and(|index| index == i64::from(*value))
                });
            if !identity {
                let perm: Vec<i64> = iota
                    .iota_transpose_perm
                    .iter()
                    .map(|value| i64::from(*value))
                    .collect();
                let _ = write!(text, "T({})", ints(&perm));
            }
            return Some(text);
        }
        if !devices.replica_groups.is_empty() {
            return Some(list(&devices.replica_groups));
        }
    }
    (!instruction.replica_groups.is_empty()).then(|| list(&instruction.replica_groups))
}

fn window_text(window: &proto::Window) -> String {
    let dims = &window.dimensions;
    let join = |values: Vec<String>| values.join("x");
    let mut parts = vec![format!(
        "size={}",
        join(dims.iter().map(|d| d.size.to_string()).collect())
    )];
    if dims.iter().any(|d| d.stride != 1) {
        parts.push(format!(
            "stride={}",
            join(dims.iter().map(|d| d.stride.to_string()).collect())
        ));
    }
    if dims
        .iter()
        .any(|d| d.padding_low != 0 || d.padding_high != 0)
    {
        parts.push(format!(
            "pad={}",
            join(
                dims.iter()
                    .map(|d| format!("{}_{}", d.padding_low, d.padding_high))
                    .collect()
            )
        ));
    }
    if dims.iter().any(|d| d.base_dilation != 1) {
        parts.push(format!(
            "lhs_dilate={}",
            join(dims.iter().map(|d| d.base_dilation.to_string()).collect())
        ));
    }
    if dims.iter().any(|d| d.window_dilation != 1) {
        parts.push(format!(
            "rhs_dilate={}",
            join(dims.iter().map(|d| d.window_dilation.to_string()).collect())
        ));
    }
    if dims.iter().any(|d| d.window_reversal) {
        parts.push(format!(
            "rhs_reversal={}",
            join(
                dims.iter()
                    .map(|d| u8::from(d.window_reversal).to_string())
                    .collect()
            )
        ));
    }
    parts.join(" ")
}

/// `b01f_01io->b01f`.
fn conv_dim_labels(
    numbers: &proto::ConvolutionDimensionNumbers,
    fail: &dyn Fn(String) -> Error,
) -> Result<String, Error> {
    let labels = |first: (i64, char),
                  second: (i64, char),
                  spatial: &[i64]|
     -> Result<String, Error> {
        let rank = spatial.len() + 2;
        let mut chars = vec!['?'; rank];
        let mut place = |dimension: i64, label: char| -> Result<(), Error> {
            let slot = usize::try_from(dimension)
                .ok()
                .and_then(|index| chars.get_mut(index))
                .ok_or_else(|| fail(format!("convolution dimension {dimension} out of range")))?;
            *slot = label;
            Ok(())
        };
        place(first.0, first.1)?;
        place(second.0, second.1)?;
        for (index, dimension) in spatial.iter().enumerate() {
            let label = char::from_digit(u32::try_from(index).unwrap_or(u32::MAX), 10)
                .ok_or_else(|| fail("more than 10 spatial dimensions".to_owned()))?;
            place(*dimension, label)?;
        }
        Ok(chars.into_iter().collect())
    };
    let input = labels(
        (numbers.input_batch_dimension, 'b'),
        (numbers.input_feature_dimension, 'f'),
        &numbers.input_spatial_dimensions,
    )?;
    let kernel = labels(
        (numbers.kernel_input_feature_dimension, 'i'),
        (numbers.kernel_output_feature_dimension, 'o'),
        &numbers.kernel_spatial_dimensions,
    )?;
    let output = labels(
        (numbers.output_batch_dimension, 'b'),
        (numbers.output_feature_dimension, 'f'),
        &numbers.output_spatial_dimensions,
    )?;
    Ok(format!("{input}_{kernel}->{output}"))
}
