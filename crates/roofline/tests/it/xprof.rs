//! Per HLO op FLOPs against XProf's `hlo_stats` (xprof 2.24.2 golden outputs beside each
//! JAX capture in the shared corpus).

use std::collections::BTreeMap;
use std::path::PathBuf;

use roofline::hlo_cost::OpKind;
use test_support::traces_dir;

use crate::read_gz_json;

/// The JAX captures with XProf outputs (traces/jax/MANIFEST.md); cpu-mlp has no GPU rows.
const CAPTURES: &[&str] = &[
    "rocm-mi300-jax08-gemm",
    "rocm-mi300-jax08-attention",
    "rocm-mi300-jax08-elementwise",
    "rocm-mi300-jax-conv-legacy",
    "rocm-gfx950-te-fused-attn",
];

/// One `hlo_stats` row: (program id, op name) → (category, expression, FLOPs per occurrence).
fn hlo_stats(dir: &std::path::Path) -> BTreeMap<(i64, String), (String, String, f64)> {
    hlo_stats_with_bytes(dir)
        .into_iter()
        .map(|(k, (c, e, f, _))| (k, (c, e, f)))
        .collect()
}

type Row = (String, String, f64, f64);

/// As [`hlo_stats`], plus bytes accessed per occurrence (XProf shows GiB/s of total time).
fn hlo_stats_with_bytes(dir: &std::path::Path) -> BTreeMap<(i64, String), Row> {
    let v = read_gz_json(&dir.join("xprof-2.24.2/hlo_stats.json.gz"));
    let cols: Vec<&str> = v["cols"]
        .as_array()
        .expect("hlo_stats has cols")
        .iter()
        .map(|c| c["id"].as_str().expect("col id"))
        .collect();
    let at = |name: &str| {
        cols.iter()
            .position(|c| *c == name)
            .expect("column present")
    };
    let bw = at("measured_memory_bw");
    let (pid, cat, op, expr, occ, time, rate) = (
        at("program_id"),
        at("category"),
        at("hlo_op_name"),
        at("hlo_op_expression"),
        at("occurrences"),
        at("total_time"),
        at("model_flop_rate"),
    );
    let mut out = BTreeMap::new();
    for row in v["rows"].as_array().expect("rows") {
        let c = row["c"].as_array().expect("cells");
        let val = |i: usize| &c[i]["v"];
        let program: i64 = val(pid)
            .as_str()
            .expect("program id text")
            .parse()
            .expect("int");
        // GFLOP/s x µs = 1e3 FLOPs; XProf multiplies by occurrences, so divide them out.
        let flops = val(rate).as_f64().unwrap_or(0.0) * val(time).as_f64().unwrap_or(0.0) * 1e3
            / val(occ).as_f64().unwrap_or(1.0);
        let bytes = val(bw).as_f64().unwrap_or(0.0)
            * val(time).as_f64().unwrap_or(0.0)
            * 1e-6
            * f64::from(1u32 << 30)
            / val(occ).as_f64().unwrap_or(1.0);
        out.insert(
            (program, val(op).as_str().expect("name").to_owned()),
            (
                val(cat).as_str().unwrap_or("").to_owned(),
                val(expr).as_str().unwrap_or("").to_owned(),
                flops,
                bytes,
            ),
        );
    }
    out
}

fn xplane(dir: &std::path::Path) -> PathBuf {
    std::fs::read_dir(dir)
        .expect("capture dir")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(".xplane.pb"))
        .expect("an .xplane.pb in the capture dir")
}

/// `bf16[8192,4096]{1,0} %a.1, bf16[4096,8192]{1,0} %b.1` → the two dimension lists of a
/// cuBLAS custom call's operands, read from XProf's expression text.
fn operand_dims(expression: &str) -> Vec<Vec<i64>> {
    let args = expression
        .split_once("custom-call(")
        .map(|(_, rest)| rest)
        .unwrap_or("");
    args.split('%')
        .filter_map(|part| {
            let open = part.find('[')?;
            let close = part[open..].find(']')? + open;
            Some(
                part[open + 1..close]
                    .split(',')
                    .filter_map(|d| d.trim().parse().ok())
                    .collect(),
            )
        })
        .take(2)
        .collect()
}

/// The first array shape of the expression: the custom call's result (before its workspace).
fn result_dims(expression: &str) -> Vec<i64> {
    let open = expression.find('[').expect("a shape");
    let close = expression[open..].find(']').expect("a shape") + open;
    expression[open + 1..close]
        .split(',')
        .filter_map(|d| d.trim().parse().ok())
        .collect()
}

#[test]
fn dot_convolution_and_gemm_flops_match_xprof() {
    let Some(traces) = traces_dir("dot_convolution_and_gemm_flops_match_xprof") else {
        return;
    };
    let mut compared = 0;
    let mut gemm_calls = 0;
    let mut attention_calls = 0;
    let mut max_rel: f64 = 0.0;
    for name in CAPTURES {
        let dir = traces.join("jax").join(name);
        let xprof = hlo_stats(&dir);
        let report = roofline::analyze(&xplane(&dir)).expect("capture analyses");
        for op in &report.ops {
            if !op.kind.is_matrix() {
                continue;
            }
            let key = (
                op.program_id.expect("JAX rows have a program id"),
                op.name.clone(),
            );
            let (category, expression, xprof_flops) = xprof
                .get(&key)
                .unwrap_or_else(|| panic!("{name}: {key:?} is in XProf's hlo_stats"));
            let ours = op
                .flops_per_occurrence
                .value
                .expect("matrix ops have FLOPs");
            if op.kind == OpKind::Gemm && *xprof_flops == 0.0 {
                // XProf 2.24.2 gives cuBLAS/hipBLASLt custom calls no cost (0 FLOPs); check
                // against 2·M·N·K from the operand shapes in XProf's own expression text.
                assert_eq!(category, "custom-call");
                let dims = operand_dims(expression);
                let [lhs, rhs] = dims.as_slice() else {
                    panic!("{name}: two operands in {expression}");
                };
                // Layout-free: lhs = B·M·K, rhs = B·K·N and result = B·M·N elements, with B
                // the result's leading dimensions, so K = sqrt(lhs·rhs / (result·B)).
                let result = result_dims(expression);
                let elems = |d: &[i64]| d.iter().product::<i64>() as f64;
                let batch = elems(&result[..result.len() - 2]);
                let k = (elems(lhs) * elems(rhs) / (elems(&result) * batch)).sqrt();
                assert_eq!(k.fract(), 0.0, "{name} {key:?}: {expression}");
                assert_eq!(
                    ours,
                    2.0 * elems(&result) * k,
                    "{name} {key:?}: {expression}"
                );
                gemm_calls += 1;
                continue;
            }
            if op.kind == OpKind::Attention && *xprof_flops == 0.0 {
                // Transformer Engine fused attention: XProf has no cost for it either. From
                // the packed qkv [B, S, 3, H, D] in XProf's expression, and the causal mask
                // the MANIFEST records: 4·B·H·S²·D / 2, backward 2.5x.
                let args = expression
                    .split_once("custom-call(")
                    .expect("a custom call")
                    .1;
                let qkv = operand_dims(&format!("custom-call({args}"))[0].clone();
                let [b, s, 3, h, d] = qkv[..] else {
                    panic!("{name} {key:?}: qkv shape {qkv:?}");
                };
                let forward = 4.0 * (b * h * s * s * d) as f64 / 2.0;
                let want = if expression.contains("backward") {
                    2.5 * forward
                } else {
                    forward
                };
                assert_eq!(ours, want, "{name} {key:?}");
                attention_calls += 1;
                continue;
            }
            let rel = (ours - xprof_flops).abs() / xprof_flops;
            assert!(
                rel <= 0.01,
                "{name} {key:?}: ours {ours} vs XProf {xprof_flops} ({category}: {expression})"
            );
            max_rel = max_rel.max(rel);
            compared += 1;
        }
    }
    eprintln!(
        "XProf parity: {compared} dot/convolution ops within 1 % (max relative difference {max_rel:.2e}); {gemm_calls} GEMM custom calls (0 in XProf) equal 2MNK of XProf's expression; {attention_calls} TE attention calls (0 in XProf) equal the hand formula"
    );
    assert_eq!(attention_calls, 4);
    // gemm: 1 gemm fusion + 5 calls; attention: 1 + 4; conv: 1; te: 5 gemm fusions + 1 call.
    assert!(compared >= 8, "only {compared} ops compared");
    assert!(
        gemm_calls >= 10,
        "only {gemm_calls} GEMM custom calls checked"
    );
}

/// Per op kind, how our FLOPs compare with XProf's (printed only;
/// the conventions differ on purpose for elementwise and transcendental ops).
#[test]
fn other_ops_against_xprof_table() {
    let Some(traces) = traces_dir("other_ops_against_xprof_table") else {
        return;
    };
    let mut rows = 0;
    for name in CAPTURES {
        let dir = traces.join("jax").join(name);
        let xprof = hlo_stats(&dir);
        let report = roofline::analyze(&xplane(&dir)).expect("capture analyses");
        for op in report.ops.iter().filter(|o| !o.kind.is_matrix()) {
            let key = (op.program_id.expect("program id"), op.name.clone());
            let Some((_, _, xprof_flops)) = xprof.get(&key) else {
                continue;
            };
            rows += 1;
            eprintln!(
                "{name}\t{}\t{}\t{}\tours {:?}\txprof {:.4e}\ttranscendental elements {:.4e}",
                key.0,
                key.1,
                op.kind.name(),
                op.flops_per_occurrence.value,
                xprof_flops,
                op.transcendental_elements / op.occurrences.value.max(1) as f64
            );
        }
    }
    assert!(rows > 20, "only {rows} non-matrix ops matched XProf rows");
}

/// Bytes per execution equal XProf's bytes accessed wherever XProf counts them (it leaves
/// library custom calls at 0): fusions (operands and result only), convolutions, copies.
#[test]
fn bytes_match_xprof_where_it_counts_them() {
    let Some(traces) = traces_dir("bytes_match_xprof_where_it_counts_them") else {
        return;
    };
    let mut compared = 0;
    let mut max_rel: f64 = 0.0;
    for name in CAPTURES {
        let dir = traces.join("jax").join(name);
        let xprof = hlo_stats_with_bytes(&dir);
        let report = roofline::analyze(&xplane(&dir)).expect("capture analyses");
        for op in &report.ops {
            let key = (op.program_id.expect("program id"), op.name.clone());
            let Some((_, expression, _, xprof_bytes)) = xprof.get(&key) else {
                continue;
            };
            if *xprof_bytes == 0.0 {
                assert!(
                    expression.contains("custom-call("),
                    "{name} {key:?}: XProf counts no bytes for a non-custom-call"
                );
                continue;
            }
            let ours = op.bytes.value / op.occurrences.value as f64;
            let rel = (ours - xprof_bytes).abs() / xprof_bytes;
            // XProf's GiB/s is rounded in its JSON: 1 %.
            assert!(
                rel <= 0.01,
                "{name} {key:?}: ours {ours} vs XProf {xprof_bytes}"
            );
            max_rel = max_rel.max(rel);
            compared += 1;
        }
    }
    eprintln!(
        "XProf bytes parity: {compared} ops within 1 % (max relative difference {max_rel:.2e})"
    );
    assert!(compared >= 40, "only {compared} ops compared");
}
