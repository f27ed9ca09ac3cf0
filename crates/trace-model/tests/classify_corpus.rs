//! The kernel classification table against the corpus in `testdata/classify/kernels.tsv`:
//! real kernel names (from the shared traces and public sources), each with the class it
//! was judged to have from what the kernel does, and where the name was seen.

use std::collections::BTreeMap;
use std::path::PathBuf;

use trace_model::{CollectiveKind, KernelClass, classify_kernel};

struct Row {
    line: usize,
    class: String,
    kind: String,
    source: String,
    name: String,
    note: String,
}

fn corpus() -> Vec<Row> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/classify/kernels.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty())
        .map(|(i, l)| {
            let f: Vec<&str> = l.split('\t').collect();
            assert!(
                f.len() == 4 || f.len() == 5,
                "kernels.tsv line {}: {} fields",
                i + 1,
                f.len()
            );
            Row {
                line: i + 1,
                class: f[0].to_owned(),
                kind: f[1].to_owned(),
                source: f[2].to_owned(),
                name: f[3].to_owned(),
                note: f.get(4).copied().unwrap_or("").to_owned(),
            }
        })
        .collect()
}

fn kind_word(c: KernelClass) -> &'static str {
    match c {
        KernelClass::Collective(k) => match k {
            CollectiveKind::AllReduce => "all-reduce",
            CollectiveKind::AllGather => "all-gather",
            CollectiveKind::ReduceScatter => "reduce-scatter",
            CollectiveKind::AllToAll => "all-to-all",
            CollectiveKind::Broadcast => "broadcast",
            CollectiveKind::Reduce => "reduce",
            CollectiveKind::SendRecv => "send-recv",
            CollectiveKind::Dispatch => "dispatch",
            CollectiveKind::Combine => "combine",
            CollectiveKind::Other => "other",
            // A kind added later fails every corpus row of it until it is named here.
            _ => "unnamed kind",
        },
        _ => "-",
    }
}

#[test]
fn every_corpus_name_gets_its_class_and_kind() {
    let rows = corpus();
    let mut wrong = Vec::new();
    for r in &rows {
        let got = classify_kernel(&r.name);
        if got.word() != r.class || kind_word(got) != r.kind {
            wrong.push(format!(
                "line {}: expected {}/{}, got {}/{}: {}  [{}]",
                r.line,
                r.class,
                r.kind,
                got.word(),
                kind_word(got),
                r.name,
                r.note
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} corpus names misclassified:\n{}",
        wrong.len(),
        rows.len(),
        wrong.join("\n")
    );
}

/// The corpus is big enough, names where each came from, and covers every class and the
/// ordering pitfalls the table's order exists for.
#[test]
fn the_corpus_covers_the_families() {
    let rows = corpus();
    assert!(rows.len() >= 300, "{} rows", rows.len());
    let mut per_class: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &rows {
        *per_class.entry(r.class.as_str()).or_default() += 1;
        assert!(
            r.source.starts_with("shared:") || r.source.starts_with("public:"),
            "line {}: source {:?}",
            r.line,
            r.source
        );
    }
    for class in [
        "gemm",
        "convolution",
        "attention",
        "elementwise",
        "norm",
        "layout",
        "reduction",
        "collective",
        "memcpy",
        "memset",
    ] {
        assert!(
            per_class.get(class).copied().unwrap_or(0) >= 3,
            "{class}: {per_class:?}"
        );
    }
    let has = |class: &str, needle: &str| {
        rows.iter()
            .any(|r| r.class == class && r.name.to_ascii_lowercase().contains(needle))
    };
    // Families the table must know: each needle occurs in the corpus under this class.
    for (class, needle) in [
        ("gemm", "mxe2m1"),
        ("gemm", "fused_moe"),
        ("gemm", "matmul_ogs"),
        ("gemm", "nvjet"),
        ("gemm", "cijk_"),
        ("gemm", "swiglu"),
        ("convolution", "igemm_"),
        ("convolution", "naive_conv"),
        ("convolution", "fprop"),
        ("convolution", "conv"),
        ("collective", "dispatch"),
        ("collective", "combine"),
        ("collective", "cross_device_reduce"),
        ("collective", "all_reduce"),
        ("reduction", "routing"),
        ("reduction", "moe_align"),
        ("attention", "fmha"),
        ("attention", "batchprefill"),
        ("attention", "sage_fwd"),
        ("attention", "sage_quant"),
        ("norm", "rmsnorm"),
        ("norm", "layer_norm"),
        ("norm", "batchnorm"),
        ("norm", "computeinternalgradients"),
        ("layout", "nchwtonhwc"),
        ("layout", "batched_transpose"),
        ("layout", "transpose_fusion"),
        ("layout", "im3d2col"),
        ("elementwise", "store_kvcache"),
        ("convolution", "xdlops_bwd_weight"),
    ] {
        assert!(has(class, needle), "no {class} row with {needle:?}");
    }
    let pitfalls = rows
        .iter()
        .filter(|r| r.note.starts_with("pitfall:"))
        .count();
    assert!(pitfalls >= 10, "{pitfalls} pitfall rows");
}
