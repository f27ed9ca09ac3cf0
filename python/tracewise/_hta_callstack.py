"""HTA 0.5.0's call stacks of one rank (each thread's events nested by time, a GPU
activity under its launch), read from the native ones (``callstack::call_stacks``) as
numpy columns: the CUPTI counter analysis (``_hta_cupti.parents``) walks them."""

from __future__ import annotations

from typing import Any, Dict

import numpy as np

from . import _native


def call_stacks(trace: Any, rank: int) -> Dict[str, np.ndarray]:
    """HTA's call stacks of ``rank`` of the native ``trace`` (``callstack::call_stacks``),
    one row per event in them or not: ``index`` (event index), ``parent`` (its parent's
    event index; -1 for a top-level event, -2 outside every stack), ``depth`` (-1
    outside), ``num_kernels`` (activities beneath), ``gpu`` (a GPU activity) and
    ``name``."""
    names, cols = _native.call_stacks(trace, int(rank))
    index, parent, depth, num_kernels, code, gpu = (np.frombuffer(c, dtype=np.int64) for c in cols)
    return {
        "index": index,
        "parent": parent,
        "depth": depth,
        "num_kernels": num_kernels,
        "gpu": gpu.astype(bool),
        "name": np.asarray(names, dtype=object)[code] if len(code) else np.zeros(0, dtype=object),
    }
