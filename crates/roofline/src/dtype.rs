//! The dtype classes that peaks are quoted for.

use hlo_parser::ElementType;
use serde::{Deserialize, Serialize};

/// The operand dtype of an op, as far as vendor peaks distinguish them; serde writes its
/// [`Dtype::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Dtype {
    /// 64-bit float.
    Fp64,
    /// 32-bit float.
    Fp32,
    /// FP32 operands on tensor cores in TF32 mode (only when the capture shows it).
    Tf32,
    /// bfloat16.
    Bf16,
    /// IEEE half precision.
    Fp16,
    /// 8-bit floats (E4M3, E5M2).
    Fp8,
    /// 4-bit floats.
    Fp4,
    /// Integer or boolean data: no FLOP peak applies.
    Int,
    /// Any other element type (tuples, tokens, opaque values).
    Other,
}

impl Dtype {
    /// The dtype key `peaks.json` uses (`fp32`, `bf16`, …).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Fp64 => "fp64",
            Dtype::Fp32 => "fp32",
            Dtype::Tf32 => "tf32",
            Dtype::Bf16 => "bf16",
            Dtype::Fp16 => "fp16",
            Dtype::Fp8 => "fp8",
            Dtype::Fp4 => "fp4",
            Dtype::Int => "int",
            Dtype::Other => "other",
        }
    }

    /// The key of this dtype in the peak table, `None` when no FLOP peak applies.
    pub fn peak_key(self) -> Option<&'static str> {
        match self {
            Dtype::Int | Dtype::Other => None,
            other => Some(other.name()),
        }
    }

    /// Floating-point width rank, to pick the widest of several operands.
    fn width(self) -> u32 {
        match self {
            Dtype::Fp64 => 64,
            Dtype::Fp32 | Dtype::Tf32 => 32,
            Dtype::Bf16 | Dtype::Fp16 => 16,
            Dtype::Fp8 => 8,
            Dtype::Fp4 => 4,
            Dtype::Int | Dtype::Other => 0,
        }
    }

    /// The wider float of two (a float beats an integer).
    pub fn widest(a: Option<Dtype>, b: Dtype) -> Dtype {
        match a {
            Some(a) if a.width() >= b.width() => a,
            _ => b,
        }
    }

    /// From an HLO element type.
    pub fn from_element_type(t: ElementType) -> Dtype {
        use ElementType as E;
        match t {
            E::F64 | E::C128 => Dtype::Fp64,
            E::F32 | E::C64 => Dtype::Fp32,
            E::Bf16 => Dtype::Bf16,
            E::F16 => Dtype::Fp16,
            E::F8e3m4
            | E::F8e4m3
            | E::F8e4m3b11fnuz
            | E::F8e4m3fn
            | E::F8e4m3fnuz
            | E::F8e5m2
            | E::F8e5m2fnuz
            | E::F8e8m0fnu => Dtype::Fp8,
            E::F4e2m1fn => Dtype::Fp4,
            E::Pred
            | E::S1
            | E::S2
            | E::S4
            | E::S8
            | E::S16
            | E::S32
            | E::S64
            | E::U1
            | E::U2
            | E::U4
            | E::U8
            | E::U16
            | E::U32
            | E::U64 => Dtype::Int,
            _ => Dtype::Other,
        }
    }

    /// From a Kineto `Input type` entry (`float`, `c10::BFloat16`, `c10::Half`, ...).
    /// `None` for non-tensor entries (`Scalar`, `ScalarList`, empty).
    pub fn from_torch(text: &str) -> Option<Dtype> {
        let t = text.trim();
        Some(match t {
            "float" => Dtype::Fp32,
            "double" => Dtype::Fp64,
            "c10::BFloat16" => Dtype::Bf16,
            "c10::Half" => Dtype::Fp16,
            "" | "Scalar" | "ScalarList" | "TensorList" | "GenericList" => return None,
            _ if t.contains("Float8") => Dtype::Fp8,
            _ if t.contains("Float4") => Dtype::Fp4,
            "int" | "long int" | "short int" | "signed char" | "unsigned char" | "bool" => {
                Dtype::Int
            }
            _ => Dtype::Other,
        })
    }

    /// Bytes per element of a Kineto `Input type`.
    pub fn torch_element_bytes(text: &str) -> Option<f64> {
        Some(match text.trim() {
            "double" | "long int" | "c10::complex<float>" => 8.0,
            "float" | "int" => 4.0,
            "c10::BFloat16" | "c10::Half" | "short int" => 2.0,
            "bool" | "signed char" | "unsigned char" => 1.0,
            t if t.contains("Float8") => 1.0,
            t if t.contains("Float4") => 0.5,
            _ => return None,
        })
    }
}
