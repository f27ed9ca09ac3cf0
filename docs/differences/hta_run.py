#!/usr/bin/env python3
"""Runs Holistic Trace Analysis itself, for the cross-checks in docs/differences.md.

Not needed by any test. Needs `pip install HolisticTraceAnalysis==0.5.0 "pandas<3"`.

    python3 hta_run.py RANK_DIR 1 > out.json                            # include_last_profiler_step=True
    HTA_DISABLE_NS_ROUNDING=1 python3 hta_run.py RANK_DIR 1 > out.json  # without µs rounding

RANK_DIR holds one or more rank traces (a directory of symlinks to shared traces will do).
Prints JSON: temporal breakdown, kernel-type breakdown, per-rank GPU events kept after
HTA's filter (count, duration sum, how many have dur <= 0 and < 0), idle-time breakdown;
an analysis that raises is recorded with its error.
"""
import json
import logging
import sys

logging.disable(logging.WARNING)
import warnings  # noqa: E402

warnings.simplefilter("ignore")
import pandas as pd  # noqa: E402
from hta.trace_analysis import TraceAnalysis  # noqa: E402


def attempt(out, key, fn):
    try:
        out[key] = fn()
    except Exception as e:  # noqa: BLE001 - recorded, not hidden
        out[key] = {"error": f"{type(e).__name__}: {e}"}


def main():
    d, last = sys.argv[1], sys.argv[2] == "1"
    ta = TraceAnalysis(trace_dir=d, include_last_profiler_step=last)
    out = {}
    attempt(out, "temporal", lambda: ta.get_temporal_breakdown(visualize=False).to_dict(orient="records"))
    attempt(
        out,
        "kernel_type",
        lambda: ta.get_gpu_kernel_breakdown(visualize=False, include_memory_kernels=True)[0].to_dict(orient="records"),
    )
    kept = {}
    for r, df in ta.t.traces.items():
        g = df[df["stream"].ne(-1)]
        kept[int(r)] = {
            "gpu_events": int(len(g)),
            "dur_sum": float(g["dur"].sum()),
            "dur_le_0": int((g["dur"] <= 0).sum()),
            "dur_lt_0": int((g["dur"] < 0).sum()),
        }
    out["kept"] = kept

    def idle():
        frames = []
        for r in ta.t.traces:
            ib, _ = ta.get_idle_time_breakdown(ranks=[r], visualize=False)
            ib["rank"] = r
            frames.append(ib)
        return pd.concat(frames).to_dict(orient="records")

    attempt(out, "idle", idle)
    print(json.dumps(out, default=float))


if __name__ == "__main__":
    main()
