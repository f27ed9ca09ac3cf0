//! Constant literals from the proto, as HLO text (`constant(0)`, `constant({1, 2})`).

use crate::generated as proto;
use crate::model::{ElementType, Shape};

/// Literals with more elements print as `{...}`, as XLA does without `print_large_constants`.
const MAX_PRINTED_ELEMENTS: usize = 1024;

/// The text between the parentheses of `constant(...)`.
pub(crate) fn literal_text(literal: Option<&proto::LiteralProto>, shape: &Shape) -> String {
    match (shape, literal) {
        (Shape::Tuple(elements), Some(literal))
            if elements.len() == literal.tuple_literals.len() =>
        {
            let parts: Vec<String> = elements
                .iter()
                .zip(&literal.tuple_literals)
                .map(|(shape, literal)| literal_text(Some(literal), shape))
                .collect();
            format!("({})", parts.join(", "))
        }
        (Shape::Array(array), Some(literal)) => {
            let Some(values) = values(literal, array.element_type) else {
                return "{...}".to_owned();
            };
            let count: i64 = array.dimensions.iter().product();
            if usize::try_from(count).ok() != Some(values.len())
                || values.len() > MAX_PRINTED_ELEMENTS
            {
                return "{...}".to_owned();
            }
            if array.dimensions.is_empty() {
                return values.into_iter().next().unwrap_or_default();
            }
            nested(&values, &array.dimensions)
        }
        _ => "{...}".to_owned(),
    }
}

/// Row-major values nested by dimension: `{ {1, 2}, {3, 4} }`.
fn nested(values: &[String], dimensions: &[i64]) -> String {
    match dimensions {
        [] | [_] => format!("{{{}}}", values.join(", ")),
        [outer, inner @ ..] => {
            let chunk = usize::try_from(inner.iter().product::<i64>()).unwrap_or(0);
            if chunk == 0 || *outer == 0 {
                return "{}".to_owned();
            }
            let parts: Vec<String> = values
                .chunks(chunk)
                .map(|part| nested(part, inner))
                .collect();
            format!("{{ {} }}", parts.join(", "))
        }
    }
}

fn values(literal: &proto::LiteralProto, element_type: ElementType) -> Option<Vec<String>> {
    let text = |values: &mut dyn Iterator<Item = String>| values.collect::<Vec<_>>();
    let pairs = |bytes: &[u8]| -> Vec<[u8; 2]> {
        bytes
            .chunks_exact(2)
            .map(|pair| [pair[0], pair[1]])
            .collect()
    };
    Some(match element_type {
        ElementType::Pred => text(&mut literal.preds.iter().map(|value| value.to_string())),
        ElementType::S8 => text(&mut literal.s8s.iter().map(|byte| (*byte as i8).to_string())),
        ElementType::U8 => text(&mut literal.u8s.iter().map(u8::to_string)),
        ElementType::S16 => text(
            &mut pairs(&literal.s16s)
                .into_iter()
                .map(|pair| i16::from_le_bytes(pair).to_string()),
        ),
        ElementType::U16 => text(
            &mut pairs(&literal.u16s)
                .into_iter()
                .map(|pair| u16::from_le_bytes(pair).to_string()),
        ),
        ElementType::S32 => text(&mut literal.s32s.iter().map(i32::to_string)),
        ElementType::S64 => text(&mut literal.s64s.iter().map(i64::to_string)),
        ElementType::U32 => text(&mut literal.u32s.iter().map(u32::to_string)),
        ElementType::U64 => text(&mut literal.u64s.iter().map(u64::to_string)),
        ElementType::F32 => text(&mut literal.f32s.iter().map(|value| float(f64::from(*value)))),
        ElementType::F64 => text(&mut literal.f64s.iter().map(|value| float(*value))),
        ElementType::Bf16 => text(&mut pairs(&literal.bf16s).into_iter().map(|pair| {
            float(f64::from(f32::from_bits(
                u32::from(u16::from_le_bytes(pair)) << 16,
            )))
        })),
        ElementType::F16 => text(
            &mut pairs(&literal.f16s)
                .into_iter()
                .map(|pair| float(half_to_f64(u16::from_le_bytes(pair)))),
        ),
        _ => return None,
    })
}

fn float(value: f64) -> String {
    if value.is_nan() {
        "nan".to_owned()
    } else if value.is_infinite() {
        if value > 0.0 {
            "inf".to_owned()
        } else {
            "-inf".to_owned()
        }
    } else {
        value.to_string()
    }
}

/// IEEE binary16 → f64.
fn half_to_f64(bits: u16) -> f64 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((bits >> 10) & 0x1f);
    let mantissa = f64::from(bits & 0x3ff);
    match exponent {
        0 => sign * mantissa * 2f64.powi(-24),
        31 if mantissa == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        _ => sign * (1.0 + mantissa / 1024.0) * 2f64.powi(exponent - 15),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves() {
        assert_eq!(half_to_f64(0x3c00), 1.0);
        assert_eq!(half_to_f64(0xc000), -2.0);
        assert_eq!(half_to_f64(0x0001), 2f64.powi(-24));
        assert!(half_to_f64(0x7e00).is_nan());
    }

    #[test]
    fn nesting() {
        let values: Vec<String> = (1..=6).map(|value| value.to_string()).collect();
        assert_eq!(nested(&values, &[2, 3]), "{ {1, 2, 3}, {4, 5, 6} }");
        assert_eq!(nested(&values, &[6]), "{1, 2, 3, 4, 5, 6}");
    }
}
