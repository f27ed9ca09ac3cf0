//! HTA 0.5.0's `get_aten_op_kernels_and_delay` before its grouping
//! (`hta/analyzers/cuda_kernel_analysis.py`): each kernel launch with the `aten::`
//! operator that wraps it, over a timeline in HTA's view (re-exported by [`crate::hta`]).

use std::collections::HashMap;

use serde::Serialize;

use crate::timeline::Timeline;

/// One kernel launch that an `aten::` operator wraps (HTA 0.5.0's
/// `get_aten_op_kernels_and_delay`, `cuda_kernel_analysis.py`), times in whole µs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AtenLaunch {
    /// The operator's thread: the `tid` text of its `pid/tid` (HTA groups by `tid`).
    pub thread: String,
    /// The operator's name (`aten::…`).
    pub op: String,
    /// The operator's start, in ns (a key of its call, with the thread and the name).
    pub op_start: i64,
    /// launch start − operator start, in µs (`aten_op_delay`).
    pub op_delay_us: i64,
    /// kernel start − launch start, in µs (`runtime_delay`).
    pub runtime_delay_us: i64,
    /// The launched GPU activity's name.
    pub kernel: String,
}

/// A wrapped launch without exactly one GPU activity: HTA 0.5.0 fails on it
/// (`.item()` of its activities).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AtenLaunchError {
    /// The launch's place in `traceEvents`.
    pub event_index: i64,
    /// How many GPU activities (on a stream) it launched.
    pub activities: usize,
}

impl std::fmt::Display for AtenLaunchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "kernel launch (event {}) has {} GPU activities; HTA's \
             get_aten_op_kernels_and_delay needs exactly one",
            self.event_index, self.activities
        )
    }
}

impl std::error::Error for AtenLaunchError {}

/// Whether HTA 0.5.0 counts `name` as a kernel launch in `get_aten_op_kernels_and_delay`
/// (`TraceSymbolTable.get_kernel_launch_ids`: Python's `re.match` of
/// `(cuda.*LaunchKernel)|(cuLaunchKernel)|(^runFunction)`, `.` not matching a newline).
pub fn is_aten_kernel_launch(name: &str) -> bool {
    let first_line = name.split('\n').next().unwrap_or("");
    (first_line.starts_with("cuda") && first_line["cuda".len()..].contains("LaunchKernel"))
        || name.starts_with("cuLaunchKernel")
        || name.starts_with("runFunction")
}

/// The launches of one rank that an `aten::` host event wraps, in file order (HTA 0.5.0's
/// `get_aten_op_kernels_and_delay`, before its grouping): each launch
/// ([`is_aten_kernel_launch`]) is timed against the operator, on any thread, that starts
/// at or before it and ends at or after its end, the latest start winning and the first
/// in file order among equal starts; a launch no operator wraps is left out. A wrapped
/// launch must have exactly one GPU activity on a stream, else the error.
pub fn aten_launches(t: &Timeline) -> Result<Vec<AtenLaunch>, AtenLaunchError> {
    // Operators by start (stable: file order among equal starts), with the running
    // maximum of their ends, so that the walk back from a launch stops where no earlier
    // operator can reach its end.
    let mut ops: Vec<usize> = (0..t.host.len())
        .filter(|&i| t.name(t.host[i].name).starts_with("aten::"))
        .collect();
    ops.sort_by_key(|&i| t.host[i].start);
    let starts: Vec<i64> = ops.iter().map(|&i| t.host[i].start).collect();
    let reach: Vec<i64> = (ops.iter())
        .scan(i64::MIN, |m, &i| {
            *m = (*m).max(t.host[i].end);
            Some(*m)
        })
        .collect();
    let mut activities: HashMap<usize, Vec<usize>> = HashMap::new();
    for (k, g) in t.gpu.iter().enumerate() {
        if g.stream != -1
            && let Some(l) = g.launch
        {
            activities.entry(l).or_default().push(k);
        }
    }
    let mut out = Vec::new();
    for (i, h) in t.host.iter().enumerate() {
        if !is_aten_kernel_launch(t.name(h.name)) {
            continue;
        }
        let mut j = starts.partition_point(|&s| s <= h.start);
        let mut found: Option<usize> = None;
        while j > 0 && reach[j - 1] >= h.end {
            j -= 1;
            if let Some(f) = found
                && starts[j] != starts[f]
            {
                break;
            }
            if t.host[ops[j]].end >= h.end {
                found = Some(j);
            }
        }
        let Some(f) = found else { continue };
        let kernels = activities.get(&i).map_or(&[][..], Vec::as_slice);
        let [k] = kernels else {
            return Err(AtenLaunchError {
                event_index: h.event_index,
                activities: kernels.len(),
            });
        };
        let op = &t.host[ops[f]];
        let thread = t.name(op.thread);
        out.push(AtenLaunch {
            thread: thread.rsplit_once('/').map_or(thread, |x| x.1).to_owned(),
            op: t.name(op.name).to_owned(),
            op_start: op.start,
            op_delay_us: (h.start - op.start) / 1000,
            runtime_delay_us: (t.gpu[*k].start - h.start) / 1000,
            kernel: t.name(t.gpu[*k].name).to_owned(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::{Gpu, GpuKind, Host, HostCat};

    #[test]
    fn aten_kernel_launches_are_hta_launch_names() {
        for name in [
            "cudaLaunchKernel",
            "cudaLaunchKernelExC",
            "cuLaunchKernel",
            "runFunction - job_prep_and_submit_for_execution",
        ] {
            assert!(is_aten_kernel_launch(name), "{name}");
        }
        for name in [
            "cudaMemcpyAsync",
            "hipLaunchKernel",
            "xcudaLaunchKernel",
            "cuda\nLaunchKernel",
        ] {
            assert!(!is_aten_kernel_launch(name), "{name}");
        }
    }

    /// A timeline of host events (name, start µs, end µs) on thread `1/7` and GPU
    /// activities (name, start µs, index of the launching host event).
    fn aten_timeline(host: &[(&str, i64, i64)], gpu: &[(&str, i64, usize)]) -> Timeline {
        let mut names: Vec<String> = vec!["1/7".into()];
        let mut id = |s: &str| match names.iter().position(|n| n == s) {
            Some(i) => i as u32,
            None => {
                names.push(s.to_owned());
                names.len() as u32 - 1
            }
        };
        let host: Vec<Host> = (host.iter().enumerate())
            .map(|(i, &(name, start, end))| Host {
                event_index: i as i64,
                name: id(name),
                cat: HostCat::CpuOp,
                thread: 0,
                start: start * 1000,
                end: end * 1000,
                correlation: None,
            })
            .collect();
        let gpu: Vec<Gpu> = (gpu.iter().enumerate())
            .map(|(i, &(name, start, launch))| Gpu {
                event_index: 100 + i as i64,
                name: id(name),
                kind: GpuKind::Kernel,
                device: 0,
                stream: 7,
                start: start * 1000,
                end: (start + 1) * 1000,
                correlation: Some(i as i64),
                launch: Some(launch),
            })
            .collect();
        let mut t = Timeline::new("t.json".into(), Some(0), names);
        t.host = host;
        t.gpu = gpu;
        t
    }

    #[test]
    fn aten_launches_take_the_latest_wrapping_operator_on_any_thread() {
        let host = [
            ("aten::linear", 0, 100),
            ("aten::addmm", 10, 60),
            ("cudaLaunchKernel", 20, 25), // in addmm (the latest start)
            ("cudaMemcpyAsync", 30, 31),  // not a kernel launch
            ("cudaLaunchKernel", 70, 75), // in linear only
            ("cudaLaunchKernel", 200, 201), // in no operator: left out
            ("aten::relu", 300, 400),
            ("aten::mul", 300, 400),
            ("cuLaunchKernel", 310, 320), // equal starts: the first in file order
        ];
        let gpu = [
            ("gemm", 40, 2),
            ("gemm", 80, 4),
            ("copy", 35, 3),
            ("relu", 330, 8),
            ("late", 210, 5),
        ];
        let rows = aten_launches(&aten_timeline(&host, &gpu)).unwrap();
        let got: Vec<(&str, &str, i64, i64, i64, &str)> = (rows.iter())
            .map(|r| {
                let (t, o, k) = (r.thread.as_str(), r.op.as_str(), r.kernel.as_str());
                (t, o, r.op_start, r.op_delay_us, r.runtime_delay_us, k)
            })
            .collect();
        assert_eq!(
            got,
            [
                ("7", "aten::addmm", 10_000, 10, 20, "gemm"),
                ("7", "aten::linear", 0, 70, 10, "gemm"),
                ("7", "aten::relu", 300_000, 10, 20, "relu"),
            ]
        );
        // A wrapped launch with two activities fails, as HTA's `.item()` does.
        let two = [("gemm", 40, 2), ("gemm", 41, 2)];
        let err = aten_launches(&aten_timeline(&host[..3], &two)).unwrap_err();
        assert_eq!((err.event_index, err.activities), (2, 2));
    }
}
