"""docs/hta-api.md, the table of every public method and parameter of HTA 0.5.0's
``TraceAnalysis``, ``TraceDiff`` and ``LabeledTrace`` against tracewise.hta's, is
generated here from both classes (``inspect``) and must equal the committed file; run with
``TRACEWISE_BLESS=1`` to rewrite it. The same introspection checks the signatures: every
HTA parameter is ours, in HTA's order, with HTA's default (but the defaults listed in
``DEFAULT_DIFFERS``), and we take no parameter HTA does not (so that an argument HTA does
not have is a TypeError)."""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

REPO = Path(__file__).resolve().parents[2]
TABLE = REPO / "docs" / "hta-api.md"

# (class, method) -> the parity tests of python/tests that compare it with HTA's.
PARITY: Dict[Tuple[str, str], str] = {
    ("TraceAnalysis", "__init__"): "test_hta_parity.py (every test, both `include_last_profiler_step`), test_hta.py",
    ("TraceAnalysis", "get_temporal_breakdown"): "test_hta_parity.py::test_temporal_breakdown",
    ("TraceAnalysis", "get_comm_comp_overlap"): "test_hta_parity.py::test_comm_comp_overlap",
    ("TraceAnalysis", "get_gpu_kernel_breakdown"): "test_hta_parity.py::test_gpu_kernel_breakdown, test_gpu_kernel_breakdown_without_memory_kernels, test_hta.py::test_gpu_kernel_breakdown",
    ("TraceAnalysis", "get_idle_time_breakdown"): "test_hta_parity.py::test_idle_time_breakdown(_default_rank)",
    ("TraceAnalysis", "get_cuda_kernel_launch_stats"): "test_hta_parity.py::test_cuda_kernel_launch_stats",
    ("TraceAnalysis", "get_queue_length_time_series"): "test_hta_parity.py::test_queue_length_time_series",
    ("TraceAnalysis", "get_queue_length_summary"): "test_hta_parity.py::test_queue_length_summary",
    ("TraceAnalysis", "get_queue_length_summary_from_time_series"): "test_hta_parity.py::test_queue_length_summary_from_time_series_is_pure",
    ("TraceAnalysis", "get_time_spent_blocked_on_full_queue"): "test_hta_parity.py::test_time_spent_blocked_on_full_queue",
    ("TraceAnalysis", "get_profiler_steps"): "test_hta_parity.py::test_profiler_steps",
    ("TraceAnalysis", "get_potential_stragglers"): "test_hta_parity.py::test_potential_stragglers, test_potential_stragglers_selected_steps_and_functions; test_hta_stragglers.py (synthetic multi-rank, multi-step traces: step lists, HTA's and a user's identification function, what the function is handed, HTA's `args` columns included)",
    ("TraceAnalysis", "critical_path_analysis"): "test_hta_critical_path.py::test_cp_graph_equals_htas (nodes, edges, attribution, path, breakdown and summary; a networkx `DiGraph` where networkx is installed; `trace_df`, `full_trace_df`, `symbol_table` and `save()`: test_cp_graph_frames_and_save_equal_htas, with HTA's frame columns, `args` columns and `trace_df`'s `depth`/`parent` included), test_hta.py::test_critical_path_summary",
    ("TraceAnalysis", "overlay_critical_path_analysis"): "test_hta_critical_path.py::test_overlaid_trace_equals_htas (events kept, `critical` marks, flow pairs; ours is plain JSON where the name does not end in `.gz`)",
    ("TraceAnalysis", "get_frequent_cuda_kernel_sequences"): "test_hta_critical_path.py::test_frequent_cuda_kernel_sequences_equal_htas (the frame, and the overlaid trace's `Patterns`; compressed names carry tracewise's own ids)",
    ("TraceAnalysis", "generate_trace_with_counters"): "test_hta_parity.py::test_generate_trace_with_counters (the counter events; ours is plain JSON where the name does not end in `.gz`)",
    ("TraceAnalysis", "get_memory_bw_time_series"): "test_hta_parity.py::test_memory_bw_time_series",
    ("TraceAnalysis", "get_memory_bw_summary"): "test_hta_parity.py::test_memory_bw_summary",
    ("TraceAnalysis", "get_gpu_user_annotation_breakdown"): "test_hta_parity.py::test_user_annotation_breakdown",
    ("TraceAnalysis", "get_aten_op_kernels_and_delay"): "test_hta_parity.py::test_aten_op_kernels_and_delay",
    ("TraceAnalysis", "get_gpu_kernels_with_user_annotations"): "test_hta_parity.py::test_gpu_kernels_with_user_annotations (the decoded and timing columns; HTA's symbol ids and its other frame columns are not compared)",
    ("TraceDiff", "compare_traces"): "test_hta_diff_parity.py::test_compare_traces_with_the_control, test_every_rank_and_iteration_of_the_control_and_test",
    ("TraceDiff", "ops_diff"): "test_hta_diff_parity.py::test_ops_diff_with_the_control",
    ("TraceDiff", "visualize_counts_diff"): "test_hta_diff_parity.py::test_compare_traces_with_the_control (returns the plotted data; plots only when asked)",
    ("TraceDiff", "visualize_duration_diff"): "test_hta.py::test_trace_diff_visualize (returns the plotted data; plots only when asked)",
    ("LabeledTrace", "__init__"): "test_hta_diff_parity.py (every test)",
    ("LabeledTrace", "ranks"): "test_hta_diff_parity.py::test_ranks_and_iterations",
    ("LabeledTrace", "iterations"): "test_hta_diff_parity.py::test_ranks_and_iterations",
    ("LabeledTrace", "extract_ops"): "test_hta_diff_parity.py::test_ops_summary_every_rank_every_iteration, test_frames_have_htas_args_columns (HTA's `bytes`, `memory_bw_gbps`, `wait_on_*`, `input_*` columns)",
    ("LabeledTrace", "get_ops_summary"): "test_hta_diff_parity.py::test_ops_summary_every_rank_every_iteration (rows sorted by name; `cat_id`/`name_id` not compared)",
    ("TraceAnalysis", "get_cupti_counter_data_with_operators"): "test_hta_parity.py::test_cupti_counter_data (the shared traces, none with CUPTI counters: `[]`), test_hta_cupti.py (synthetic CUPTI-mode traces: every column tracewise builds, by value, the call graph's `depth` … `last_kernel_end` also by dtype)",
}

# (class, method, parameter) -> the values that raise NotImplementedError.
PARAM_NOT_BUILT: Dict[Tuple[str, str, str], str] = {}

# (class, method, parameter) -> what the parameter does not do yet (the answer is whole).
PARAM_PARTIAL: Dict[Tuple[str, str, str], str] = {}

# (class, method, parameter) -> what the parameter does, with its test, where the table says it.
PARAM_NOTES: Dict[Tuple[str, str, str], str] = {
    ("TraceAnalysis", m, "visualize"): (
        "`True` draws HTA's figures with plotly and returns the same data "
        f"(test_hta_plots.py::test_figures_are_htas[{t}]); without plotly, no figure and one warning"
    )
    for m, t in (
        ("get_temporal_breakdown", "temporal"),
        ("get_comm_comp_overlap", "overlap"),
        ("get_gpu_kernel_breakdown", "kernel_breakdown"),
        ("get_idle_time_breakdown", "idle"),
        ("get_cuda_kernel_launch_stats", "launch_stats"),
        ("get_gpu_user_annotation_breakdown", "user_annotation"),
        ("get_potential_stragglers", "stragglers"),
    )
}

# (class, method, parameter) -> why our default is not HTA's.
DEFAULT_DIFFERS: Dict[Tuple[str, str, str], str] = {}

CLASSES = ("TraceAnalysis", "TraceDiff", "LabeledTrace")


def _public(cls) -> List[Tuple[str, inspect.Signature]]:
    out = []
    for name in sorted(vars(cls)):
        if name.startswith("_") and name != "__init__":
            continue
        attr = inspect.getattr_static(cls, name)
        if isinstance(attr, (classmethod, staticmethod)):
            fn = attr.__func__
        elif inspect.isfunction(attr):
            fn = attr
        else:
            continue
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            continue
        params = [p for p in sig.parameters.values() if p.name not in ("self", "cls")]
        out.append((name, sig.replace(parameters=params)))
    return out


def _not_built(ours_cls, name: str) -> bool:
    fn = inspect.getattr_static(ours_cls, name, None)
    fn = getattr(fn, "__func__", fn)
    doc = inspect.getdoc(fn) or ""
    return doc.startswith("Not built") or (
        name == "__init__" and (inspect.getdoc(ours_cls) or "").rstrip().endswith("raises NotImplementedError.")
    )


def _default(p: inspect.Parameter) -> str:
    if p.default is inspect.Parameter.empty:
        return "(required)"
    d = p.default
    if inspect.isfunction(d):
        return f"`{d.__name__}`"
    return f"`{d!r}`"


def generate() -> str:
    import hta.trace_analysis
    import hta.trace_diff

    import tracewise.hta as ours

    theirs = {
        "TraceAnalysis": hta.trace_analysis.TraceAnalysis,
        "TraceDiff": hta.trace_diff.TraceDiff,
        "LabeledTrace": hta.trace_diff.LabeledTrace,
    }
    lines = [
        "# HTA 0.5.0's API in `tracewise.hta`",
        "",
        "Generated by `python/tests/test_hta_api_table.py` from HTA 0.5.0's classes and",
        "tracewise's (`TRACEWISE_BLESS=1 pytest python/tests/test_hta_api_table.py` rewrites it;",
        "the test fails when this file is stale). Every public method of HTA's `TraceAnalysis`,",
        "`TraceDiff` and `LabeledTrace`, and every parameter, with its default; **implemented**",
        "names the parity tests that compare it with HTA 0.5.0 on the shared traces;",
        "**NotImplementedError** means the call raises it, naming the feature (never a partial",
        "answer). docs/differences.md explains every difference the parity tests allow.",
        "",
    ]
    counts = {"implemented": 0, "not built": 0}
    for cname in CLASSES:
        tcls, ocls = theirs[cname], getattr(ours, cname)
        lines += [f"## `{cname}`", "", "| method | parameter (HTA's default) | status |", "|---|---|---|"]
        for name, sig in _public(tcls):
            built = not _not_built(ocls, name)
            counts["implemented" if built else "not built"] += 1
            status = (
                f"implemented: {PARITY.get((cname, name), 'no parity test yet')}"
                if built
                else "NotImplementedError"
            )
            lines.append(f"| `{name}` | | {status} |")
            for p in sig.parameters.values():
                note = PARAM_NOT_BUILT.get((cname, name, p.name))
                pstatus = (
                    f"NotImplementedError for {note}" if built and note else ("" if built else "NotImplementedError")
                )
                partial = PARAM_PARTIAL.get((cname, name, p.name))
                if partial:
                    pstatus = (pstatus + "; " if pstatus else "") + partial
                note = PARAM_NOTES.get((cname, name, p.name))
                if note:
                    pstatus = (pstatus + "; " if pstatus else "") + note
                why = DEFAULT_DIFFERS.get((cname, name, p.name))
                if why:
                    pstatus = (pstatus + "; " if pstatus else "") + f"default differs: {why}"
                lines.append(f"| | `{p.name}` = {_default(p)} | {pstatus} |")
        lines.append("")
    lines += [
        f"Methods implemented: {counts['implemented']}; raising NotImplementedError: {counts['not built']}.",
        "",
    ]
    return "\n".join(lines)


def test_table_is_current():
    pytest.importorskip("hta.trace_analysis", reason="SKIPPED: HolisticTraceAnalysis is not installed")
    text = generate()
    if os.environ.get("TRACEWISE_BLESS") == "1":
        TABLE.write_text(text)
    assert TABLE.read_text() == text, "docs/hta-api.md is stale: rerun with TRACEWISE_BLESS=1"


@pytest.mark.parametrize("cname", CLASSES)
def test_signatures_follow_hta(cname):
    """Every HTA method is ours with HTA's parameters in HTA's order and HTA's defaults."""
    pytest.importorskip("hta.trace_analysis", reason="SKIPPED: HolisticTraceAnalysis is not installed")
    import hta.trace_analysis
    import hta.trace_diff

    import tracewise.hta as ours

    tcls = getattr(hta.trace_analysis, cname, None) or getattr(hta.trace_diff, cname)
    ocls = getattr(ours, cname)
    for name, sig in _public(tcls):
        assert hasattr(ocls, name), f"{cname}.{name} is missing"
        osig = dict(_public(ocls))[name]
        assert list(osig.parameters) == list(sig.parameters), (cname, name)
        for pname, p in sig.parameters.items():
            q = osig.parameters[pname]
            assert q.kind == p.kind, (cname, name, pname)
            if (cname, name, pname) in DEFAULT_DIFFERS:
                continue
            if p.default is inspect.Parameter.empty:
                assert q.default is inspect.Parameter.empty, (cname, name, pname)
            elif inspect.isfunction(p.default):
                # HTA's default function (the straggler metric): ours is tracewise's own,
                # under HTA's name.
                assert inspect.isfunction(q.default) and q.default.__name__ == p.default.__name__, (
                    cname, name, pname)
            elif isinstance(p.default, __import__("enum").Enum):
                assert q.default.name == p.default.name and q.default.value == p.default.value
            else:
                assert q.default == p.default, (cname, name, pname)
        static = isinstance(inspect.getattr_static(tcls, name), (classmethod, staticmethod))
        assert static == isinstance(inspect.getattr_static(ocls, name), (classmethod, staticmethod)), name
