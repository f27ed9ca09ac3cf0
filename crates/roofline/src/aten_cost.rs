//! FLOPs and bytes of ATen ops from Kineto's `Input Dims`, `Input type` and `Concrete Inputs`
//! (captures taken with `record_shapes=True`).
//!
//! Conventions:
//! - GEMMs (`mm`, `addmm`, `bmm`, `baddbmm`, `linear`, `matmul`, `_scaled_mm`): 2·batch·M·N·K;
//!   the bias add of `addmm`/`linear` is not counted. Bytes: both inputs, the bias if given,
//!   and the output (in the first input's dtype: Kineto records no output dtype).
//! - Convolutions (`conv1d/2d/3d`, `convolution`, `_convolution`, `convolution_backward`): the
//!   HLO convention (valid window positions only, see `hlo_cost`), output size from stride,
//!   padding and dilation; the backward is one forward's FLOPs per gradient asked for by
//!   `output_mask` (input, weight).
//! - Attention (SDPA and its flash/efficient/cuDNN forms): forward 2·B·H·Nq·Nkv·(d_qk + d_v)
//!   (softmax not counted); backward 2.5x the forward (five matmuls: QKᵀ recomputed, dV, dP,
//!   dQ, dK); causal halves both when Nq = Nkv.

use crate::Dtype;
use crate::hlo_cost::{OpKind, WindowDim, valid_positions};

/// The shape arguments of one Kineto CPU op.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ShapeArgs {
    /// `Input Dims`: one list per input; empty for non-tensors.
    pub dims: Vec<Vec<i64>>,
    /// `Input type`.
    pub types: Vec<String>,
    /// `Concrete Inputs`: scalar and list arguments as text.
    pub concrete: Vec<String>,
}

/// The cost of one ATen op call.
#[derive(Debug, Clone, PartialEq)]
pub struct AtenCost {
    /// What kind of op it is.
    pub kind: OpKind,
    /// FLOPs of the call.
    pub flops: f64,
    /// Bytes read and written (operands and result, once each).
    pub bytes: f64,
    /// The operand dtype the peak is chosen by.
    pub dtype: Dtype,
    /// How the cost was computed, or why it is incomplete.
    pub note: String,
}

/// Whether an op name is one whose cost this module models.
pub fn is_costed_op(name: &str) -> bool {
    op_spec(name).is_some()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spec {
    Mm,
    Addmm,
    Bmm,
    Baddbmm,
    Linear,
    Matmul,
    ScaledMm,
    /// conv1d/2d/3d: (input, weight, bias, stride, padding, dilation, groups).
    ConvNd,
    /// convolution/_convolution: (input, weight, bias, stride, padding, dilation, transposed,
    /// output_padding, groups, ...).
    Convolution,
    /// (grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
    /// output_padding, groups, output_mask).
    ConvolutionBackward,
    /// Attention: index of q, layout, index of is_causal, backward.
    Attention {
        q: usize,
        bnhd: bool,
        causal: usize,
        backward: bool,
    },
}

fn op_spec(name: &str) -> Option<Spec> {
    let name = name.strip_prefix("aten::")?;
    let attn = |q, bnhd, causal, backward| Spec::Attention {
        q,
        bnhd,
        causal,
        backward,
    };
    Some(match name {
        "mm" => Spec::Mm,
        "addmm" => Spec::Addmm,
        "bmm" => Spec::Bmm,
        "baddbmm" => Spec::Baddbmm,
        "linear" => Spec::Linear,
        "matmul" => Spec::Matmul,
        "_scaled_mm" => Spec::ScaledMm,
        "conv1d" | "conv2d" | "conv3d" => Spec::ConvNd,
        "convolution" | "_convolution" => Spec::Convolution,
        "convolution_backward" => Spec::ConvolutionBackward,
        "scaled_dot_product_attention" => attn(0, false, 5, false),
        "_scaled_dot_product_flash_attention" => attn(0, false, 4, false),
        "_scaled_dot_product_efficient_attention" => attn(0, false, 6, false),
        "_scaled_dot_product_cudnn_attention" => attn(0, false, 6, false),
        "_flash_attention_forward" => attn(0, true, 8, false),
        "_scaled_dot_product_flash_attention_backward" => attn(1, false, 11, true),
        "_scaled_dot_product_efficient_attention_backward" => attn(1, false, 11, true),
        "_scaled_dot_product_cudnn_attention_backward" => attn(1, false, 14, true),
        "_flash_attention_backward" => attn(1, true, 11, true),
        _ => return None,
    })
}

impl ShapeArgs {
    fn dims(&self, i: usize) -> Option<&[i64]> {
        self.dims
            .get(i)
            .map(Vec::as_slice)
            .filter(|d| !d.is_empty())
    }

    fn dtype(&self, i: usize) -> Dtype {
        self.types
            .get(i)
            .and_then(|t| Dtype::from_torch(t))
            .unwrap_or(Dtype::Other)
    }

    fn bpe(&self, i: usize) -> f64 {
        self.types
            .get(i)
            .and_then(|t| Dtype::torch_element_bytes(t))
            .unwrap_or(2.0)
    }

    fn elements(&self, i: usize) -> f64 {
        self.dims(i)
            .map_or(0.0, |d| d.iter().product::<i64>() as f64)
    }

    fn concrete(&self, i: usize) -> &str {
        self.concrete.get(i).map_or("", |s| s.trim())
    }

    fn flag(&self, i: usize) -> bool {
        self.concrete(i).eq_ignore_ascii_case("true")
    }

    fn list(&self, i: usize) -> Vec<i64> {
        parse_list(self.concrete(i))
    }

    fn int(&self, i: usize) -> Option<i64> {
        self.concrete(i).parse().ok()
    }
}

/// `[1, 2]` → `[1, 2]`; `[True, False]` → `[1, 0]`.
fn parse_list(text: &str) -> Vec<i64> {
    text.trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .filter_map(|t| {
            let t = t.trim();
            match t {
                "True" | "true" => Some(1),
                "False" | "false" => Some(0),
                _ => t.parse().ok(),
            }
        })
        .collect()
}

/// The cost of op `name` with these shapes; `Err` says what is missing (no shapes, an
/// unexpected rank).
pub fn aten_cost(name: &str, args: &ShapeArgs) -> Result<AtenCost, String> {
    let spec = op_spec(name).ok_or_else(|| format!("{name}: not a modelled op"))?;
    if args.dims.iter().all(Vec::is_empty) {
        return Err("no Input Dims (capture with record_shapes=True)".to_owned());
    }
    let bad = |what: &str| format!("{name}: {what}");
    match spec {
        Spec::Mm | Spec::ScaledMm => {
            let (a, b) = (args.dims(0), args.dims(1));
            let (Some([m, k]), Some([_, n])) = (a, b) else {
                return Err(bad("expected two 2-D inputs"));
            };
            Ok(gemm(
                args,
                0,
                1,
                None,
                1.0,
                *m,
                *n,
                *k,
                spec == Spec::ScaledMm,
            ))
        }
        Spec::Addmm => {
            let (Some([m, k]), Some([_, n])) = (args.dims(1), args.dims(2)) else {
                return Err(bad("expected 2-D mat1 and mat2"));
            };
            Ok(gemm(args, 1, 2, Some(0), 1.0, *m, *n, *k, false))
        }
        Spec::Bmm | Spec::Baddbmm => {
            let (ia, ib, bias) = if spec == Spec::Bmm {
                (0, 1, None)
            } else {
                (1, 2, Some(0))
            };
            let (Some([batch, m, k]), Some([_, _, n])) = (args.dims(ia), args.dims(ib)) else {
                return Err(bad("expected two 3-D inputs"));
            };
            Ok(gemm(args, ia, ib, bias, *batch as f64, *m, *n, *k, false))
        }
        Spec::Linear => {
            let (Some(x), Some([n, k])) = (args.dims(0), args.dims(1)) else {
                return Err(bad("expected input and a 2-D weight"));
            };
            let m: i64 = x[..x.len() - 1].iter().product();
            let bias = args.dims(2).map(|_| 2);
            Ok(gemm(args, 0, 1, bias, 1.0, m, *n, *k, false))
        }
        Spec::Matmul => {
            let (Some(a), Some(b)) = (args.dims(0), args.dims(1)) else {
                return Err(bad("expected two tensor inputs"));
            };
            let (m, k) = match a {
                [k] => (1, *k),
                [.., m, k] => (*m, *k),
                [] => return Err(bad("empty input")),
            };
            let n = match b {
                [_] => 1,
                [.., _, n] => *n,
                [] => return Err(bad("empty input")),
            };
            let lead = |d: &[i64]| -> Vec<i64> {
                if d.len() > 2 {
                    d[..d.len() - 2].to_vec()
                } else {
                    Vec::new()
                }
            };
            let batch = broadcast_product(&lead(a), &lead(b));
            Ok(gemm(args, 0, 1, None, batch, m, n, k, false))
        }
        Spec::ConvNd => conv(args, name, 3, 4, 5, None, None, 6),
        Spec::Convolution => conv(args, name, 3, 4, 5, Some(6), Some(7), 8),
        Spec::ConvolutionBackward => {
            // Shift by one: grad_output first, then (input, weight, bias_sizes, ...).
            let shifted = ShapeArgs {
                dims: args.dims.iter().skip(1).cloned().collect(),
                types: args.types.iter().skip(1).cloned().collect(),
                concrete: args.concrete.iter().skip(1).cloned().collect(),
            };
            let mut forward = conv(&shifted, name, 3, 4, 5, Some(6), Some(7), 8)?;
            let mask = args.list(10);
            let grads = if mask.len() >= 2 {
                (mask[0] + mask[1]) as f64
            } else {
                2.0
            };
            forward.flops *= grads;
            // Reads grad_output, input and weight; writes the gradients asked for.
            let go = args.elements(0) * args.bpe(0);
            let x = args.elements(1) * args.bpe(1);
            let w = args.elements(2) * args.bpe(2);
            let written = if mask.len() >= 2 {
                mask[0] as f64 * x + mask[1] as f64 * w
            } else {
                x + w
            };
            forward.bytes = go + x + w + written;
            forward.note = format!(
                "convolution backward: forward FLOPs x {grads} gradient(s) (output_mask {:?})",
                args.concrete(10)
            );
            Ok(forward)
        }
        Spec::Attention {
            q,
            bnhd,
            causal,
            backward,
        } => attention(args, name, q, bnhd, causal, backward),
    }
}

fn broadcast_product(a: &[i64], b: &[i64]) -> f64 {
    let n = a.len().max(b.len());
    let mut p = 1.0;
    for i in 0..n {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        p *= da.max(db) as f64;
    }
    p
}

#[allow(clippy::too_many_arguments)] // One call site per GEMM form; a struct would only rename them.
fn gemm(
    args: &ShapeArgs,
    a: usize,
    b: usize,
    bias: Option<usize>,
    batch: f64,
    m: i64,
    n: i64,
    k: i64,
    scaled: bool,
) -> AtenCost {
    let (m, n, k) = (m as f64, n as f64, k as f64);
    let out_bpe = if scaled { 2.0 } else { args.bpe(a) };
    let mut bytes = batch * (m * k * args.bpe(a) + k * n * args.bpe(b) + m * n * out_bpe);
    if let Some(i) = bias {
        bytes += args.elements(i) * args.bpe(i);
    }
    let dtype = Dtype::widest(Some(args.dtype(a)), args.dtype(b));
    AtenCost {
        kind: OpKind::Gemm,
        flops: 2.0 * batch * m * n * k,
        bytes,
        dtype,
        note: format!("2 x batch x M x N x K, batch {batch}, M {m}, N {n}, K {k}"),
    }
}

#[allow(clippy::too_many_arguments)] // Argument positions differ between the conv ops.
fn conv(
    args: &ShapeArgs,
    name: &str,
    stride_at: usize,
    padding_at: usize,
    dilation_at: usize,
    transposed_at: Option<usize>,
    output_padding_at: Option<usize>,
    groups_at: usize,
) -> Result<AtenCost, String> {
    let (Some(x), Some(w)) = (args.dims(0), args.dims(1)) else {
        return Err(format!("{name}: expected input and weight shapes"));
    };
    if x.len() < 3 || w.len() != x.len() {
        return Err(format!(
            "{name}: input and weight ranks differ or are below 3"
        ));
    }
    let spatial = x.len() - 2;
    let pick = |list: Vec<i64>, default: i64| -> Vec<i64> {
        match list.len() {
            0 => vec![default; spatial],
            1 => vec![list[0]; spatial],
            _ => list,
        }
    };
    let stride = pick(args.list(stride_at), 1);
    let padding = pick(args.list(padding_at), 0);
    let dilation = pick(args.list(dilation_at), 1);
    let transposed = transposed_at.is_some_and(|i| args.flag(i));
    let output_padding = pick(
        output_padding_at.map(|i| args.list(i)).unwrap_or_default(),
        0,
    );
    let groups = args.int(groups_at).unwrap_or(1).max(1);
    let batch = x[0] as f64;
    let mut positions = 1.0;
    let mut out_spatial = Vec::with_capacity(spatial);
    for s in 0..spatial {
        let (i, k) = (x[2 + s], w[2 + s]);
        let win = WindowDim {
            size: k,
            stride: stride.get(s).copied().unwrap_or(1),
            pad_low: padding.get(s).copied().unwrap_or(0),
            pad_high: padding.get(s).copied().unwrap_or(0),
            lhs_dilation: 1,
            rhs_dilation: dilation.get(s).copied().unwrap_or(1),
        };
        if transposed {
            // A transposed convolution is the gradient of a forward one whose output is this
            // input: count the forward's valid positions, with this op's output as its input.
            let o = (i - 1) * win.stride - 2 * win.pad_low
                + win.rhs_dilation * (k - 1)
                + output_padding.get(s).copied().unwrap_or(0)
                + 1;
            out_spatial.push(o);
            positions *= valid_positions(o, k, i, &win) as f64;
        } else {
            let o = (i + 2 * win.pad_low - win.rhs_dilation * (k - 1) - 1) / win.stride.max(1) + 1;
            out_spatial.push(o);
            positions *= valid_positions(i, k, o, &win) as f64;
        }
    }
    // Weight is [C_out, C_in/groups, k...] (transposed: [C_in, C_out/groups, k...]).
    let (c_in, c_out) = if transposed {
        (x[1], w[1] * groups)
    } else {
        (x[1], w[0])
    };
    let fmas = batch * (c_in / groups) as f64 * c_out as f64 * positions;
    let out_elems = batch * c_out as f64 * out_spatial.iter().product::<i64>() as f64;
    let bias = args.elements(2) * args.bpe(2);
    let bytes = args.elements(0) * args.bpe(0)
        + args.elements(1) * args.bpe(1)
        + bias
        + out_elems * args.bpe(0);
    Ok(AtenCost {
        kind: OpKind::Convolution,
        flops: 2.0 * fmas,
        bytes,
        dtype: Dtype::widest(Some(args.dtype(0)), args.dtype(1)),
        note: format!(
            "convolution: 2 x batch x C_in/groups x C_out x valid window positions; output spatial {out_spatial:?}{}",
            if transposed { ", transposed" } else { "" }
        ),
    })
}

fn attention(
    args: &ShapeArgs,
    name: &str,
    q_at: usize,
    bnhd: bool,
    causal_at: usize,
    backward: bool,
) -> Result<AtenCost, String> {
    let (Some(q), Some(k), Some(v)) = (args.dims(q_at), args.dims(q_at + 1), args.dims(q_at + 2))
    else {
        return Err(format!("{name}: expected q, k and v shapes"));
    };
    let (&[bq, h1, n1, dq], &[_, _, n2, _], &[_, _, _, dv]) = (q, k, v) else {
        return Err(format!("{name}: expected 4-D q, k and v"));
    };
    // (B, H, N, d), or (B, N, H, d) for the _flash_attention_* kernels' own layout.
    let (b, h, nq) = if bnhd { (bq, n1, h1) } else { (bq, h1, n1) };
    let nkv = if bnhd { k[1] } else { n2 };
    let (b, h, nq, nkv, dq, dv) = (
        b as f64, h as f64, nq as f64, nkv as f64, dq as f64, dv as f64,
    );
    let mut flops = 2.0 * b * h * nq * nkv * (dq + dv);
    let causal = args.flag(causal_at);
    let mut note = format!(
        "attention forward 2 x B x H x Nq x Nkv x (d_qk + d_v), B {b}, H {h}, Nq {nq}, Nkv {nkv}, d_qk {dq}, d_v {dv}"
    );
    if backward {
        flops *= 2.5;
        note.push_str("; backward = 2.5 x forward (five matmuls)");
    }
    if causal && nq == nkv {
        flops /= 2.0;
        note.push_str("; causal: halved");
    } else if causal {
        note.push_str("; causal with Nq != Nkv: not halved (an upper bound)");
    }
    let bpe = args.bpe(q_at);
    let tensors = args.elements(q_at) + args.elements(q_at + 1) + args.elements(q_at + 2);
    let out = b * h * nq * dv;
    // Forward reads q, k, v and writes out; backward reads q, k, v, out, dO and writes dq, dk, dv.
    let bytes = if backward {
        (2.0 * tensors + 2.0 * out) * bpe
    } else {
        (tensors + out) * bpe
    };
    Ok(AtenCost {
        kind: OpKind::Attention,
        flops,
        bytes,
        dtype: args.dtype(q_at),
        note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(dims: &[&[i64]], types: &[&str], concrete: &[&str]) -> ShapeArgs {
        ShapeArgs {
            dims: dims.iter().map(|d| d.to_vec()).collect(),
            types: types.iter().map(|t| t.to_string()).collect(),
            concrete: concrete.iter().map(|c| c.to_string()).collect(),
        }
    }

    fn check(name: &str, a: &ShapeArgs, kind: OpKind, flops: f64, bytes: f64) {
        let cost = aten_cost(name, a).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(cost.kind, kind, "{name}");
        assert_eq!(cost.flops, flops, "{name} FLOPs: {}", cost.note);
        assert_eq!(cost.bytes, bytes, "{name} bytes: {}", cost.note);
    }

    const B: &str = "c10::BFloat16";

    #[test]
    fn gemms() {
        // linear: M = 4*128 rows, N 512, K 256; bias not counted in FLOPs, in bytes.
        let a = args(
            &[&[4, 128, 256], &[512, 256], &[512]],
            &[B, B, B],
            &["", "", ""],
        );
        let bytes = (512.0 * 256.0 + 256.0 * 512.0 + 512.0 * 512.0 + 512.0) * 2.0;
        check(
            "aten::linear",
            &a,
            OpKind::Gemm,
            2.0 * 512.0 * 512.0 * 256.0,
            bytes,
        );
        // addmm(bias, mat1 [M,K], mat2 [K,N]).
        let a = args(
            &[&[48], &[16, 32], &[32, 48], &[], &[]],
            &["float", "float", "float", "Scalar", "Scalar"],
            &["", "", "", "1", "1"],
        );
        let bytes = (16.0 * 32.0 + 32.0 * 48.0 + 16.0 * 48.0 + 48.0) * 4.0;
        check(
            "aten::addmm",
            &a,
            OpKind::Gemm,
            2.0 * 16.0 * 48.0 * 32.0,
            bytes,
        );
        // bmm: batch 8 of [128,64] x [64,128].
        let a = args(&[&[8, 128, 64], &[8, 64, 128]], &[B, B], &["", ""]);
        let bytes = 8.0 * (128.0 * 64.0 + 64.0 * 128.0 + 128.0 * 128.0) * 2.0;
        check(
            "aten::bmm",
            &a,
            OpKind::Gemm,
            2.0 * 8.0 * 128.0 * 128.0 * 64.0,
            bytes,
        );
        // matmul broadcasts the batch dimensions: [3,1] with [5] → 15.
        let a = args(&[&[3, 1, 8, 16], &[5, 16, 4]], &[B, B], &["", ""]);
        let cost = aten_cost("aten::matmul", &a).expect("models");
        assert_eq!(cost.flops, 2.0 * 15.0 * 8.0 * 4.0 * 16.0);
    }

    #[test]
    fn sdpa_forward_and_backward_causal() {
        let q: &[i64] = &[2, 4, 128, 64];
        // Forward: 2 x B 2 x H 4 x Nq 128 x Nkv 128 x (64 + 64), halved for causal.
        let full = 2.0 * 2.0 * 4.0 * 128.0 * 128.0 * 128.0;
        let fwd = |causal: &str| {
            args(
                &[q, q, q, &[], &[], &[], &[], &[]],
                &[B, B, B, "", "Scalar", "Scalar", "", "Scalar"],
                &["", "", "", "", "0.", causal, "", "False"],
            )
        };
        let tensor_bytes = 2.0 * 4.0 * 128.0 * 64.0 * 2.0;
        check(
            "aten::scaled_dot_product_attention",
            &fwd("False"),
            OpKind::Attention,
            full,
            4.0 * tensor_bytes,
        );
        check(
            "aten::scaled_dot_product_attention",
            &fwd("True"),
            OpKind::Attention,
            full / 2.0,
            4.0 * tensor_bytes,
        );
        // Backward (grad_out, q, k, v, out, logsumexp, cum_q, cum_k, max_q, max_k, dropout,
        // is_causal, ...): 2.5 x forward, halved for causal; reads q, k, v, out, dO and
        // writes dq, dk, dv.
        let lse: &[i64] = &[2, 4, 128];
        let bwd = args(
            &[
                q,
                q,
                q,
                q,
                q,
                lse,
                &[],
                &[],
                &[],
                &[],
                &[],
                &[],
                &[],
                &[],
                &[],
            ],
            &[
                B, B, B, B, B, "float", "", "", "Scalar", "Scalar", "Scalar", "Scalar", "", "",
                "Scalar",
            ],
            &[
                "", "", "", "", "", "", "", "", "128", "128", "0.", "True", "", "", "0.125",
            ],
        );
        check(
            "aten::_scaled_dot_product_flash_attention_backward",
            &bwd,
            OpKind::Attention,
            2.5 * full / 2.0,
            8.0 * tensor_bytes,
        );
        // _flash_attention_forward's own layout is (B, N, H, d).
        let bnhd: &[i64] = &[2, 128, 4, 64];
        let fa = args(
            &[bnhd, bnhd, bnhd, &[], &[], &[], &[], &[], &[]],
            &[B, B, B, "", "", "Scalar", "Scalar", "Scalar", "Scalar"],
            &["", "", "", "", "", "128", "128", "0.", "True"],
        );
        let cost = aten_cost("aten::_flash_attention_forward", &fa).expect("models");
        assert_eq!(cost.flops, full / 2.0);
    }

    #[test]
    fn grouped_strided_convolution_and_backward() {
        // The HLO test's convolution: input [1,8,9,9], weight [6,4,3,3], stride 2, padding 1,
        // groups 2 → 13 x 13 valid positions, 2 x 4 x 6 x 169 = 8112 FLOPs.
        let a = args(
            &[&[1, 8, 9, 9], &[6, 4, 3, 3], &[], &[], &[], &[], &[]],
            &[
                "float",
                "float",
                "",
                "ScalarList",
                "ScalarList",
                "ScalarList",
                "Scalar",
            ],
            &["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "2"],
        );
        let bytes = (8.0 * 81.0 + 6.0 * 36.0 + 6.0 * 25.0) * 4.0;
        check("aten::conv2d", &a, OpKind::Convolution, 8_112.0, bytes);
        // convolution_backward(grad_output, input, weight, bias_sizes, stride, padding,
        // dilation, transposed, output_padding, groups, output_mask): both gradients.
        let b = args(
            &[
                &[1, 6, 5, 5],
                &[1, 8, 9, 9],
                &[6, 4, 3, 3],
                &[],
                &[],
                &[],
                &[],
                &[],
                &[],
                &[],
                &[],
            ],
            &[
                "float",
                "float",
                "float",
                "",
                "ScalarList",
                "ScalarList",
                "ScalarList",
                "Scalar",
                "ScalarList",
                "Scalar",
                "ScalarList",
            ],
            &[
                "",
                "",
                "",
                "[6]",
                "[2, 2]",
                "[1, 1]",
                "[1, 1]",
                "False",
                "[0, 0]",
                "2",
                "[True, True, False]",
            ],
        );
        let reads = (6.0 * 25.0 + 8.0 * 81.0 + 6.0 * 36.0) * 4.0;
        let writes = (8.0 * 81.0 + 6.0 * 36.0) * 4.0;
        check(
            "aten::convolution_backward",
            &b,
            OpKind::Convolution,
            2.0 * 8_112.0,
            reads + writes,
        );
    }

    #[test]
    fn missing_shapes_are_an_error_not_zero() {
        let err = aten_cost("aten::mm", &ShapeArgs::default()).expect_err("no shapes");
        assert!(err.contains("record_shapes=True"), "{err}");
        assert!(aten_cost("aten::add", &ShapeArgs::default()).is_err());
    }
}
