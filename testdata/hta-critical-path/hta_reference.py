"""Writes expected.tsv: Holistic Trace Analysis 0.5.0's critical path on the shared traces
that carry cuda_sync events (pytorch/hta-critical-path/). Not part of the build; rerun by
hand after changing the cases:

    python -m venv /tmp/hta && /tmp/hta/bin/pip install HolisticTraceAnalysis==0.5.0 'pandas<3'
    /tmp/hta/bin/python -W ignore testdata/hta-critical-path/hta_reference.py "$TRACEWISE_TRACES"

HTA reads a directory of rank files, so each trace is copied into a directory of its own.
"""
import logging
import shutil
import sys
import tempfile
from pathlib import Path

from hta.analyzers.critical_path_analysis import CPEdgeType
from hta.trace_analysis import TraceAnalysis

logging.disable(logging.WARNING)
CASES = [
    ("pytorch/hta-critical-path/cuda_event_sync/event_sync_trace.json.gz", "ProfilerStep", 0),
    ("pytorch/hta-critical-path/cuda_event_sync_multi_stream/event_sync_trace.json.gz", "", 0),
    ("pytorch/hta-critical-path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
     "[param|pytorch.model.alex_net|0|0|0|measure|forward]", 0),
    ("pytorch/hta-critical-path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
     "[param|pytorch.model.alex_net|0|0|0|measure|forward]", 1),
    ("pytorch/hta-critical-path/simple_add/benchmark_result_493459_1694039959_trace.json.gz",
     "[param|pytorch.model.alex_net|0|0|0|measure|forward]", 1),
]
BOUNDS = ["cpu_bound", "gpu_compute_bound", "gpu_communication_bound",
          "gpu_kernel_kernel_overhead", "gpu_kernel_launch_overhead"]

root = Path(sys.argv[1])
out = Path(__file__).with_name("expected.tsv")
rows = ["\t".join(["trace", "annotation", "instance", "nodes", "edges", "sync_edges",
                   "sync_edges_on_path", *BOUNDS])]
for rel, annotation, instance in CASES:
    with tempfile.TemporaryDirectory() as d:
        shutil.copy(root / rel, d)
        a = TraceAnalysis(trace_dir=d)
        cp, ok = a.critical_path_analysis(rank=0, annotation=annotation, instance_id=instance)
        assert ok, rel
        split = cp.summary()
        sync = sum(1 for *_, o in cp.edges(data="object") if o.type == CPEdgeType.SYNC_DEPENDENCY)
        on_path = sum(1 for e in cp.critical_path_edges_set if e.type == CPEdgeType.SYNC_DEPENDENCY)
        rows.append("\t".join([rel, annotation, str(instance), str(cp.number_of_nodes()),
                               str(cp.number_of_edges()), str(sync), str(on_path),
                               *(f"{split.get(b, 0.0):.3f}" for b in BOUNDS)]))
out.write_text("\n".join(rows) + "\n")
print(out.read_text())
