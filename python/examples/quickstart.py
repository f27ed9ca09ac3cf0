# %% [markdown]
# # tracewise in a notebook
#
# Load a capture, look at its kernels with polars, ask SQL questions, and show the whole
# investigation inline. Runs as a script too (`python python/examples/quickstart.py`);
# the test suite runs it. `TRACEWISE_TRACES` names the shared traces; without it the
# example uses the small synthetic trace that ships in the repository.

# %%
import os
from pathlib import Path

import polars as pl

import tracewise

repo = Path(__file__).resolve().parents[2] if "__file__" in globals() else Path.cwd()
traces = os.environ.get("TRACEWISE_TRACES")
path = (
    Path(traces) / "pytorch" / "param-dlrm-8rank"
    if traces
    else repo / "testdata" / "chrome" / "ok" / "tiny-train" / "rank0.pt.trace.json"
)
capture = tracewise.load(path)
capture

# %% [markdown]
# Frames cross into polars (or pyarrow, pandas) through the Arrow PyCapsule interface.

# %%
kernels = pl.DataFrame(capture.kernels())
print(kernels.select("rank", "name", "dur").head())

# %% [markdown]
# SQL over `events`, `kernels` and `launches`: the kernels that take the most time.

# %%
top = capture.sql(
    """
    SELECT name, COUNT(*) AS calls, SUM(dur) AS total_us
    FROM kernels GROUP BY name ORDER BY total_us DESC LIMIT 5
    """
).to_polars()
print(top)

# %% [markdown]
# The whole investigation; in Jupyter the last expression shows the HTML report with its
# swimlanes.

# %%
report = tracewise.investigate(path)
# The verdict of the first capture, and what the diagnosis says bounds its step.
diagnosis = report["first"].get("diagnosis") or {}
print(report["captures"][0]["verdict"]["bound"], "|", diagnosis.get("describe", "no diagnosis"))
report
