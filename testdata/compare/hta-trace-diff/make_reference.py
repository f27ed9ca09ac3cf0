"""Writes compare_traces.csv: HTA's TraceDiff.compare_traces on the shared hta-trace-diff
captures (control vs test), with HTA's defaults (first rank, first iteration, CPU ops and
GPU kernels together, full names).

Run from the repository root, in a venv with the PyPI packages:
    python3 -m venv /tmp/hta && /tmp/hta/bin/pip install HolisticTraceAnalysis 'pandas<3'
    /tmp/hta/bin/python testdata/compare/hta-trace-diff/make_reference.py ../shared/traces
"""

import importlib.metadata
import os
import sys

from hta.trace_diff import LabeledTrace, TraceDiff

root = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
base = os.path.join(root, "pytorch", "hta-trace-diff")
control = LabeledTrace(label="control", trace_dir=os.path.join(base, "control"))
test = LabeledTrace(label="test", trace_dir=os.path.join(base, "test"))
df = TraceDiff.compare_traces(control, test)
df = df.reset_index().rename(columns={"index": "name"})
df = df.sort_values("name", kind="stable")
df.to_csv(os.path.join(here, "compare_traces.csv"), index=False)
with open(os.path.join(here, "versions.txt"), "w") as f:
    f.write(f"HolisticTraceAnalysis {importlib.metadata.version('HolisticTraceAnalysis')}\n")
    f.write(f"pandas {importlib.metadata.version('pandas')}\n")
    f.write(f"control ranks {control.ranks()} iterations {control.iterations()}\n")
    f.write(f"test ranks {test.ranks()} iterations {test.iterations()}\n")
