//! Which Python frame is user code, and Kineto's `python_function` names.

/// Kineto's `python_function` name `file.py(123): function` → (file, line, function).
/// `<built-in method ...>`, `nn.Module: Linear_0` and other names without a line give `None`.
pub fn parse_python_frame(name: &str) -> Option<(&str, i64, &str)> {
    let (location, function) = name.split_once("): ")?;
    let open = location.rfind('(')?;
    let line: i64 = location[open + 1..].parse().ok()?;
    let file = &location[..open];
    if file.is_empty() || file.starts_with('<') {
        return None;
    }
    Some((file, line, function))
}

/// Top-level modules of the Python standard library that show up in profiler stacks. Kineto
/// writes paths relative to their `sys.path` entry, so `threading.py` or
/// `multiprocessing/spawn.py` cannot be told from user code by a directory.
const STDLIB: &[&str] = &[
    "abc",
    "asyncio",
    "concurrent",
    "contextlib",
    "copy",
    "copyreg",
    "dataclasses",
    "enum",
    "functools",
    "importlib",
    "inspect",
    "json",
    "logging",
    "multiprocessing",
    "os",
    "queue",
    "runpy",
    "selectors",
    "socket",
    "threading",
    "traceback",
    "typing",
    "unittest",
    "warnings",
    "weakref",
];

/// The default PyTorch user-code rule: a frame with a file and line that is not under
/// `site-packages`/`dist-packages`, not torch's own (`torch/`, `torch_*`), and not the
/// Python standard library (`/lib/python3.*`, or a bare standard module such as
/// `threading.py`).
pub fn is_default_torch_user_frame(file: &str) -> bool {
    if file.contains("site-packages/")
        || file.contains("dist-packages/")
        || file.contains("/lib/python")
        || file.starts_with("<")
    {
        return false;
    }
    let relative = file.trim_start_matches('/');
    let first = relative.split('/').next().unwrap_or("");
    let module = first.strip_suffix(".py").unwrap_or(first);
    if module == "torch" || module.starts_with("torch_") || file.contains("/torch/") {
        return false;
    }
    !STDLIB.contains(&module)
}

/// Whether a `file:line` is library code rather than the user's, for headlines: empty,
/// under site-packages, torch's own or the standard library (see
/// [`is_default_torch_user_frame`]), JAX's own, or Inductor's generated-code cache
/// (`/tmp/torchinductor_<user>/…`).
pub fn is_library_line(source_line: &str) -> bool {
    let file = source_line
        .rsplit_once(':')
        .filter(|(_, line)| line.chars().all(|c| c.is_ascii_digit()))
        .map_or(source_line, |(file, _)| file);
    file.is_empty()
        || !is_default_torch_user_frame(file)
        || file.contains("torchinductor_")
        || file.contains("/_inductor/")
        || file.starts_with("jax/")
        || file.contains("/jax/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, expect: Option<(&str, i64, &str)>) {
        assert_eq!(parse_python_frame(name), expect, "{name}");
    }

    #[test]
    fn frames() {
        check(
            "moca/profile.py(53): profile_function",
            Some(("moca/profile.py", 53, "profile_function")),
        );
        check("<string>(1): <module>", None);
        check("<built-in method relu of type object at 0x7f>", None);
        check("nn.Module: Linear_0", None);
        check("a(b).py(7): f", Some(("a(b).py", 7, "f")));
    }

    #[test]
    fn user_rule() {
        assert!(is_default_torch_user_frame("moca/library/profile.py"));
        assert!(is_default_torch_user_frame(
            "transformers/models/bert/modeling_bert.py"
        ));
        assert!(!is_default_torch_user_frame("torch/nn/modules/linear.py"));
        assert!(!is_default_torch_user_frame("threading.py"));
        assert!(!is_default_torch_user_frame("multiprocessing/spawn.py"));
        assert!(!is_default_torch_user_frame(
            "/usr/lib/python3.11/site-packages/x/y.py"
        ));
        assert!(!is_default_torch_user_frame(
            "/usr/lib/python3.11/functools.py"
        ));
    }

    #[test]
    fn library_lines() {
        assert!(!is_library_line("train.py:42"));
        assert!(!is_library_line(
            "/workspace/conv-jax/jax_conv_profiling.py:77"
        ));
        assert!(is_library_line(""));
        assert!(is_library_line("torch/nn/modules/linear.py:125"));
        assert!(is_library_line(
            "/usr/lib/python3.10/site-packages/vllm/worker.py:9"
        ));
        assert!(is_library_line("/tmp/torchinductor_root/ab/cabc123.py:88"));
        assert!(is_library_line(
            "/opt/venv/lib/python3.12/site-packages/jax/_src/api.py:3"
        ));
    }
}
