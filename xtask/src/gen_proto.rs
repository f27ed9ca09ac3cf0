//! `cargo xtask gen-proto [--check]`: compile `proto/*.proto` with protox (pure Rust, no protoc)
//! and prost-build, and write the Rust into each reading crate's `src/generated/`.
//!
//! The output is committed so that building the workspace never needs a proto compiler.
//! `--check` regenerates into memory and fails when the committed files differ.

use std::fs;
use std::path::{Path, PathBuf};

use crate::workspace_root;

/// One `.proto` file and where its generated Rust goes.
struct Target {
    proto: &'static str,
    /// The file prost-build names after the proto package.
    package_file: &'static str,
    output: &'static str,
}

const TARGETS: &[Target] = &[
    Target {
        proto: "xplane.proto",
        package_file: "tensorflow.profiler.rs",
        output: "crates/xplane-reader/src/generated/xplane.rs",
    },
    Target {
        proto: "hlo.proto",
        package_file: "xla.rs",
        output: "crates/hlo-parser/src/generated/xla.rs",
    },
    Target {
        proto: "perfetto_trace.proto",
        package_file: "perfetto.protos.rs",
        output: "crates/rocprof-reader/src/generated/perfetto.rs",
    },
];

pub(crate) fn main(args: &[String]) -> Result<(), String> {
    let check = match args {
        [] => false,
        [flag] if flag == "--check" => true,
        _ => return Err("usage: cargo xtask gen-proto [--check]".to_owned()),
    };
    let root = workspace_root();
    let generated = generate(&root)?;
    let mut stale = Vec::new();
    for (path, text) in &generated {
        let current = fs::read_to_string(path).unwrap_or_default();
        if current == *text {
            continue;
        }
        if check {
            stale.push(path.display().to_string());
        } else {
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent)
                    .map_err(|err| format!("creating {}: {err}", parent.display()))?;
            }
            write_atomically(path, text)?;
            eprintln!("wrote {}", path.display());
        }
    }
    if !stale.is_empty() {
        return Err(format!(
            "generated proto code is out of date, run `cargo xtask gen-proto`: {}",
            stale.join(", ")
        ));
    }
    if check {
        eprintln!("generated proto code is up to date");
    }
    Ok(())
}

/// Generate every target into memory: (output path, file text).
pub(crate) fn generate(root: &Path) -> Result<Vec<(PathBuf, String)>, String> {
    let proto_dir = root.join("proto");
    let scratch = scratch_dir()?;
    let mut outputs = Vec::new();
    for target in TARGETS {
        let fds = protox::compile([target.proto], [&proto_dir])
            .map_err(|err| format!("compiling proto/{}: {err}", target.proto))?;
        let mut config = prost_build::Config::new();
        config
            .out_dir(&scratch)
            .btree_map(["."])
            .disable_comments(["."]);
        config
            .compile_fds(fds)
            .map_err(|err| format!("prost-build on proto/{}: {err}", target.proto))?;
        let raw_path = scratch.join(target.package_file);
        let raw = fs::read_to_string(&raw_path)
            .map_err(|err| format!("reading {}: {err}", raw_path.display()))?;
        let text = format!(
            "//! Rust types generated from `proto/{}` by `cargo xtask gen-proto`. Do not edit.\n// @generated\n\n{raw}",
            target.proto
        );
        outputs.push((root.join(target.output), text));
    }
    let _ = fs::remove_dir_all(&scratch);
    Ok(outputs)
}

fn scratch_dir() -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("xtask-gen-proto-{}", std::process::id()));
    fs::create_dir_all(&dir).map_err(|err| format!("creating {}: {err}", dir.display()))?;
    Ok(dir)
}

fn write_atomically(path: &Path, text: &str) -> Result<(), String> {
    let tmp = path.with_extension("rs.tmp");
    fs::write(&tmp, text).map_err(|err| format!("writing {}: {err}", tmp.display()))?;
    fs::rename(&tmp, path).map_err(|err| format!("renaming into {}: {err}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed generated code must equal what `cargo xtask gen-proto` writes today.
    #[test]
    fn generated_proto_code_is_fresh() {
        let root = workspace_root();
        let generated = generate(&root).unwrap();
        for (path, text) in generated {
            let current = fs::read_to_string(&path).unwrap_or_default();
            assert!(
                current == text,
                "{} is out of date; run `cargo xtask gen-proto`",
                path.display()
            );
        }
    }
}
