# %% [markdown]
# # HTA's `TraceAnalysis`, without the wait
#
# `from tracewise.hta import TraceAnalysis` in place of `from hta.trace_analysis import
# TraceAnalysis`: the same arguments (positional order, defaults, `include_last_profiler_step`
# false unless asked), the same frames. This notebook looks at the CUDA launch queues of a
# trace: the queue length time series, its summary, and the time the host spent blocked on
# a full queue. Runs as a script too (`python python/examples/hta_dropin.py`); the test
# suite runs it. `TRACEWISE_TRACES` names the shared traces; without it the example uses the
# small trace that ships in the repository.

# %%
import os
from pathlib import Path

from tracewise.hta import TraceAnalysis

repo = Path(__file__).resolve().parents[2] if "__file__" in globals() else Path.cwd()
traces = os.environ.get("TRACEWISE_TRACES")
trace_dir = (
    Path(traces) / "pytorch" / "hta-v100-2rank-large"
    if traces
    else repo / "testdata" / "chrome" / "ok" / "tiny-train"
)
analyzer = TraceAnalysis(trace_dir=str(trace_dir))
ranks = analyzer.get_profiler_steps(), sorted(analyzer.get_temporal_breakdown(visualize=False)["rank"])
ranks

# %% [markdown]
# The queue length of each stream: +1 when the host enqueues a kernel or a copy, −1 when
# the GPU starts it. One frame per rank, a row per change.

# %%
rank = ranks[1][0]
series = analyzer.get_queue_length_time_series(ranks=[rank])
queue = series[rank]
queue.head()

# %% [markdown]
# Its statistics per stream, from the same series (no second pass over the trace).

# %%
summary = analyzer.get_queue_length_summary_from_time_series(series)
summary

# %% [markdown]
# How long the launch queue of each rank stayed at a length (1024 is CUDA's per-stream
# limit: there the host blocks); with a small length, how much of the time the host ran
# ahead of the GPU by that many operations.

# %%
blocked_full = analyzer.get_time_spent_blocked_on_full_queue(series)
deepest = int(queue["queue_length"].max())
blocked_deep = analyzer.get_time_spent_blocked_on_full_queue(series, max_queue_length=max(deepest // 2, 1))
blocked_full, blocked_deep

# %% [markdown]
# The memory bandwidth in use over time, per kind of copy (`Memcpy HtoD`, `Memset`, …):
# each copy adds the bandwidth the profiler measured for it while it runs. One frame per
# rank with copies (none on a trace without them).

# %%
bandwidth = analyzer.get_memory_bw_time_series(ranks=[rank])
bandwidth.get(rank)

# %% [markdown]
# Its statistics per rank and kind of copy, over the times some copy runs.

# %%
bandwidth_summary = analyzer.get_memory_bw_summary(ranks=[rank])
bandwidth_summary

# %% [markdown]
# The host time of each `record_function` range (`user_annotation`) per rank, the long
# tail folded into `others` as HTA folds it (None on a trace without such ranges).

# %%
annotations = analyzer.get_gpu_user_annotation_breakdown(use_gpu_annotation=False, visualize=False)
annotations

# %% [markdown]
# For each ATen operator and the kernels it launches, how long the host took from the
# operator's start to its first launch, and the launch to the kernel's start (µs, means
# over the occurrences).

# %%
delays = analyzer.get_aten_op_kernels_and_delay(ranks=[rank])[rank]
delays.head()

# %% [markdown]
# HTA's `TraceDiff`: the GPU kernels of the first and the last profiled step side by side,
# by name (counts and total µs), and which kernels came, went or ran more or less often.

# %%
from tracewise.hta import DeviceType, LabeledTrace, TraceDiff

first = LabeledTrace("first", trace_dir=str(trace_dir))
last = LabeledTrace("last", trace_dir=str(trace_dir))
steps = first.iterations()
step_diff = TraceDiff.compare_traces(
    first, last, rank, rank, steps[0], steps[-1], device_type=DeviceType.GPU
)
step_changes = TraceDiff.ops_diff(first, last, rank, rank, steps[0], steps[-1], device_type=DeviceType.GPU)
step_diff.head(), {k: len(v) for k, v in step_changes.items()}
