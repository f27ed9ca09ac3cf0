"""The statistics helpers of ``tracewise.hta``: HTA 0.5.0's ``describe()`` frames, dtypes,
aggregations and kernel-type sums, shared by the breakdowns, the idle analysis and the
queue and memory series."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import pandas as pd


_IDLE_CATEGORIES = ("host_wait", "kernel_wait", "other")


def _int_dtype(lo: int, hi: int) -> np.dtype:
    """The smallest signed integer dtype holding ``[lo, hi]``: what HTA's
    ``pd.to_numeric(downcast="integer")`` gives a column with that range."""
    for t in (np.int8, np.int16, np.int32):
        info = np.iinfo(t)
        if info.min <= lo and hi <= info.max:
            return np.dtype(t)
    return np.dtype(np.int64)


def _integral(s: pd.Series) -> pd.Series:
    """Whole-µs sums are int64 in HTA's frames when every duration is whole."""
    if len(s) and (s % 1 == 0).all():
        return s.astype("int64")
    return s



def _times(v: np.ndarray) -> np.ndarray:
    """HTA's times: int64 where every value is whole (and there is one), else float64."""
    if not len(v) or not (np.mod(v, 1) == 0).all():
        return v.astype("float64")
    return v.astype("int64")


def _describe(g: Any, column: Optional[str], describe: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """``describe()`` of a ``SeriesGroupBy`` (with ``column``: of the ``DataFrameGroupBy``
    that has just that value column, whose columns are ``(column, stat)``) from pandas'
    one-pass group aggregations, where ``describe()`` runs ``Series.describe`` group by
    group in Python (tens of ms a call). The same index, columns and dtypes (float64); the
    values equal to rounding (the group mean and std sum as pandas' group kernels do).
    Without groups, pandas' own ``describe`` (its empty frame's shape)."""
    if g.ngroups == 0:
        return describe()
    out = pd.DataFrame(
        {
            "count": g.count(),
            "mean": g.mean(),
            "std": g.std(),
            "min": g.min(),
            "25%": g.quantile(0.25),
            "50%": g.quantile(0.5),
            "75%": g.quantile(0.75),
            "max": g.max(),
        }
    ).astype("float64")
    if column is not None:
        out.columns = pd.MultiIndex.from_product([[column], list(out.columns)])
    return out


def _describe_groups(
    ranks: np.ndarray, keys: np.ndarray, values: np.ndarray, key: str, column: str
) -> Optional[pd.DataFrame]:
    """:func:`_describe` of ``values`` grouped by (``rank``, ``key``), computed with numpy
    over the values sorted once (pandas' eight group aggregations cost a few ms a call):
    the same index (the groups in sorted order, each level of its column's dtype), columns
    (``(column, stat)``) and float64 values, each quantile by pandas' linear formula; the
    mean and std equal to rounding (pandas compensates its sums). None where a value is
    NaN or a key is not a number or a string (pandas' own group-by then)."""
    v = values.astype("float64")
    if not len(v) or np.isnan(v).any() or keys.dtype.kind not in "iuO":
        return None
    if keys.dtype.kind == "O" and not all(isinstance(k, str) for k in keys):
        return None
    key_codes, key_values = pd.factorize(keys, sort=True)
    rank_codes, rank_values = pd.factorize(ranks, sort=True)
    order = np.lexsort((v, key_codes, rank_codes))
    group = rank_codes[order].astype("int64") * len(key_values) + key_codes[order]
    v = v[order]
    first = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    n = np.diff(np.r_[first, len(v)])
    mean = np.add.reduceat(v, first) / n
    dev = v - np.repeat(mean, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        std = np.sqrt(np.add.reduceat(dev * dev, first) / (n - 1))
    std[n < 2] = np.nan

    def quantile(q: float) -> np.ndarray:
        at = q * (n - 1)
        lo = np.floor(at).astype("int64")
        frac = at - lo
        val = v[first + lo]
        nxt = v[first + np.minimum(lo + 1, n - 1)]
        return np.where(frac == 0, val, val + (nxt - val) * frac)

    g = group[first]
    index = pd.MultiIndex.from_arrays(
        [rank_values[g // len(key_values)], key_values[g % len(key_values)]], names=["rank", key]
    )
    stats = {
        "count": n.astype("float64"),
        "mean": mean,
        "std": std,
        "min": v[first],
        "25%": quantile(0.25),
        "50%": quantile(0.5),
        "75%": quantile(0.75),
        "max": v[first + n - 1],
    }
    out = pd.DataFrame(stats, index=index)
    out.columns = pd.MultiIndex.from_product([[column], list(stats)])
    return out


def _idle_frame(
    ranks_rows: List[List[Tuple[Any, int, str, float, float]]],
    stream_dtypes: List[np.dtype],
    rounded: bool = True,
) -> pd.DataFrame:
    """HTA's concat of the idle-breakdown frames of the ranks (each: its rows with ``stream``
    of that rank's dtype in ``stream_dtypes``, rounded to 2 places unless not ``rounded``).
    One frame where that gives the same (every rank has rows, all of one stream dtype),
    else one per rank."""
    columns = ["rank", "stream", "idle_category", "idle_time", "idle_time_ratio"]
    dtypes = set(stream_dtypes)
    if len(dtypes) == 1 and all(ranks_rows):
        rows = [r for rank_rows in ranks_rows for r in rank_rows]
        rank, stream, category, t, ratio = zip(*rows)
        index = np.concatenate([np.arange(len(r), dtype="int64") for r in ranks_rows])
        df = pd.DataFrame(
            {
                "rank": np.asarray(rank, dtype="int64"),
                "stream": np.asarray(stream, dtype="int64").astype(dtypes.pop()),
                "idle_category": np.asarray(category, dtype=object),
                "idle_time": np.asarray(t, dtype="float64"),
                "idle_time_ratio": np.asarray(ratio, dtype="float64"),
            },
            index=pd.RangeIndex(len(rows)) if len(ranks_rows) == 1 else pd.Index(index),
        )
        return df.round(2) if rounded else df
    frames = []
    for rows, dtype in zip(ranks_rows, stream_dtypes):
        df = pd.DataFrame(rows, columns=columns)
        df["rank"] = df["rank"].astype("int64")
        df["stream"] = df["stream"].astype(dtype)
        df["idle_time"] = df["idle_time"].astype("float64")
        df["idle_time_ratio"] = df["idle_time_ratio"].astype("float64")
        frames.append(df.round(2) if rounded else df)
    return pd.concat(frames)


def _describe_per_rank(
    series: Dict[int, pd.DataFrame], key: str, column: str
) -> Optional[pd.DataFrame]:
    """HTA's concat, rank by rank, of ``describe()`` of ``column`` per (``rank``, ``key``)
    of each rank's frame; None without ranks. One group-by over all the ranks' rows where
    that gives the same frame (integer ranks in ascending order, one dtype per column, no
    empty frame: pandas' per-group kernels then see the same groups), else one per rank."""
    if not series:
        return None
    ranks = list(series)
    frames = list(series.values())
    if (
        all(isinstance(r, (int, np.integer)) for r in ranks)
        and ranks == sorted(ranks)
        and all(len(f) > 0 for f in frames)
        and all(f[c].dtype == frames[0][c].dtype for f in frames for c in (key, column))
    ):
        rank_col = np.repeat(np.asarray(ranks, dtype="int64"), [len(f) for f in frames])
        keys = np.concatenate([f[key].to_numpy() for f in frames]).astype(frames[0][key].dtype)
        values = np.concatenate([f[column].to_numpy() for f in frames]).astype(frames[0][column].dtype)
        fast = _describe_groups(rank_col, keys, values, key, column)
        if fast is not None:
            return fast
        df = pd.DataFrame({"rank": rank_col, key: keys, column: values})
        g = df.groupby(["rank", key])
        return _describe(g[column], column, g.describe)
    parts = []
    for rank, frame in series.items():
        df = frame[[key, column]].copy()
        df.insert(0, "rank", rank)
        g = df.groupby(["rank", key])
        parts.append(_describe(g[column], column, g.describe))
    return pd.concat(parts)


def _json_scalar(v: Any) -> Any:
    """A numpy scalar as the Python number JSON writes."""
    if isinstance(v, np.generic):
        return v.item()
    raise TypeError(f"{type(v).__name__} is not JSON serialisable")


def _aggregate_by_name(
    events: pd.DataFrame,
    num_kernels: int,
    duration_ratio: float,
    keep: Optional[Callable[[str], bool]] = None,
) -> pd.DataFrame:
    """HTA 0.5.0's ``_aggr_gpu_kernel_time`` over (``name``, ``dur``) rows: per name the
    sum, max, min, mean and std of ``dur``, largest sum first; past ``num_kernels`` names,
    or past the ``duration_ratio`` quantile of the cumulative sum, names (but those ``keep``
    accepts) are folded into ``others``."""
    agg = events.groupby(by=["name"])["dur"].agg(["sum", "max", "min", "mean", "std"])
    agg.reset_index(inplace=True)
    agg = agg.sort_values(by=["sum"], ascending=False, ignore_index=True)
    agg.fillna({"std": 0}, inplace=True)
    if agg.shape[0] > num_kernels:
        kept = agg["name"].map(keep).astype(bool) if keep is not None else agg["sum"] < 0
        agg["cumsum"] = agg["sum"].cumsum()
        quantile = agg["cumsum"].quantile(duration_ratio)
        agg.loc[~kept & (agg["cumsum"] > quantile), "name"] = "others"
        agg.loc[~kept & (agg.index >= num_kernels), "name"] = "others"
        agg = agg.groupby(by=["name"])["sum"].agg(["sum", "max", "min", "mean", "std"])
        agg.reset_index(inplace=True)
        agg.fillna({"std": 0}, inplace=True)
    return agg


def _aggregate_ranks(per_rank: List[Tuple[Any, List[Tuple[str, float]]]]) -> pd.DataFrame:
    """:func:`_aggregate_by_name` of each rank's (``name``, ``dur``) rows with its ``rank``
    column, for ranks none of which folds names into ``others``: one group-by over
    (``rank``, ``name``), whose groups are each rank's groups with the same rows in the
    same order."""
    sizes = [len(rows) for _, rows in per_rank]
    events = pd.DataFrame(
        {
            "rank": np.repeat(np.asarray([int(r) for r, _ in per_rank], dtype="int64"), sizes),
            "name": pd.Series([n for _, rows in per_rank for n, _ in rows], dtype="object"),
            # HTA's `dur` column is float64 (the parser fills missing durations).
            "dur": pd.Series([d for _, rows in per_rank for _, d in rows], dtype="float64"),
        }
    )
    agg = events.groupby(by=["rank", "name"])["dur"].agg(["sum", "max", "min", "mean", "std"])
    agg.reset_index(inplace=True)
    agg.fillna({"std": 0}, inplace=True)
    return agg[["name", "sum", "max", "min", "mean", "std", "rank"]]


def _annotation_stats(per_rank: List[Tuple[Any, List[Tuple[str, float]]]]) -> Optional[pd.DataFrame]:
    """The user-annotation breakdown of ranks none of which folds names into ``others``
    (what :func:`_aggregate_ranks`, the concat and the sort by (``rank``, ``name``) give,
    with the columns named), computed with numpy over the rows sorted once by (rank,
    name): per group the sum, max, min, mean and std (n − 1; 0 for one row) of ``dur``.
    The sums are pandas' where the durations are whole µs (exact); the std equal to
    rounding. None without rows or with a NaN duration (pandas' group-by then)."""
    names = [n for _, rows in per_rank for n, _ in rows]
    if not names:
        return None
    dur = np.asarray([d for _, rows in per_rank for _, d in rows], dtype="float64")
    if np.isnan(dur).any() or not (np.mod(dur, 1) == 0).all():
        return None
    rank = np.repeat(np.asarray([int(r) for r, _ in per_rank], dtype="int64"), [len(rows) for _, rows in per_rank])
    name_codes, name_values = pd.factorize(np.asarray(names, dtype=object), sort=True)
    rank_codes, rank_values = pd.factorize(rank, sort=True)
    order = np.lexsort((name_codes, rank_codes))
    group = rank_codes[order].astype("int64") * len(name_values) + name_codes[order]
    v = dur[order]
    first = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    n = np.diff(np.r_[first, len(v)])
    total = np.add.reduceat(v, first)
    mean = total / n
    dev = v - np.repeat(mean, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        std = np.sqrt(np.add.reduceat(dev * dev, first) / (n - 1))
    std[n < 2] = 0.0
    g = group[first]
    return pd.DataFrame(
        {
            "name": np.asarray(name_values, dtype=object)[g % len(name_values)],
            "sum (us)": total,
            "max (us)": np.maximum.reduceat(v, first),
            "min (us)": np.minimum.reduceat(v, first),
            "stddev": std,
            "mean (us)": mean,
            "rank": np.asarray(rank_values, dtype="int64")[g // len(name_values)],
        }
    )


def _memory_kernel_type(name: str) -> str:
    """HTA's memory type of a memcpy/memset name: ``Memset``, the first 11 characters of a
    ``Memcpy`` name (``Memcpy DtoH``), else ``Memcpy Unknown``."""
    if name.startswith("Memset"):
        return "Memset"
    if not name.startswith("Memcpy"):
        return "Memcpy Unknown"
    return name[:11]


def _kernel_type_time(types: List[str], intervals: List[List[Tuple[float, float]]]) -> Dict[str, int]:
    """One rank's time (µs) per combination of kernel types, as HTA 0.5.0's
    ``_get_gpu_kernel_type_time`` counts it from each type's merged busy intervals
    (``types[i]``'s in ``intervals[i]``, bit ``1 << i``): every start (+bit) and end (−bit)
    of a type is added, starts then ends, to the earlier types' points and the whole is
    sorted by time with numpy's quicksort, type after type; the running sum of the bits
    after each point names the types running until the next point. Points at one µs fall
    in the order that sort gives them, so a combination can hold for 0 µs (an end and a
    start at one time): HTA lists it with 0, and so does this."""
    status = np.zeros(0, dtype="int64")
    time = np.zeros(0, dtype="float64")
    for bit, iv in enumerate(intervals):
        ts = np.asarray([a for a, _ in iv], dtype="float64")
        end = np.asarray([b for _, b in iv], dtype="float64")
        value = 1 << bit
        status = np.concatenate([status, np.full(len(ts), value), np.full(len(end), -value)])
        time = np.concatenate([time, ts, end])
        order = np.argsort(time, kind="quicksort")
        status, time = status[order], time[order]
    if len(time) == 0:
        return {}
    running = np.cumsum(status)
    dur = np.r_[time[1:] - time[:-1], np.nan]
    if running[-1] > 0:
        # The last point is a start (a 0 µs interval whose end sorted first): HTA's
        # `astype(int)` of its NaN duration raises this.
        raise pd.errors.IntCastingNaNError("Cannot convert non-finite values (NA or inf) to integer")
    out: Dict[str, int] = {}
    for value in np.unique(running[running > 0]):
        label = " overlapping ".join(t for i, t in enumerate(types) if int(value) & (1 << i))
        # HTA's `astype(int)` of each duration before the sum.
        out[label] = out.get(label, 0) + int(dur[running == value].astype("int64").sum())
    return out


def _fold_kernels(agg: Dict[str, np.ndarray], num_kernels: int, duration_ratio: float) -> Dict[str, List[Any]]:
    """HTA 0.5.0's ``_aggr_gpu_kernel_time`` over per-name statistics already computed
    (natively; columns ``name``, ``sum``, ``max``, ``min``, ``mean``, ``std`` as arrays):
    sorted by total time, and past ``num_kernels`` names, or past the ``duration_ratio``
    quantile of the cumulative time, folded into ``others`` (whose max/min/mean/std are,
    as in HTA, over the folded names' totals; the others' too, each over its one total).
    The sorts are pandas' own (``nargsort``, as ``sort_values`` sorts), so ties fall as in
    HTA; the quantile is numpy's ``percentile``, as pandas computes it."""
    from pandas.core.sorting import nargsort

    o = nargsort(agg["name"], kind="quicksort")
    agg = {c: v[o] for c, v in agg.items()}
    o = nargsort(agg["sum"], kind="quicksort", ascending=False)
    agg = {c: v[o] for c, v in agg.items()}
    agg["std"] = np.where(np.isnan(agg["std"].astype("float64")), 0.0, agg["std"])
    n = len(agg["name"])
    if n <= num_kernels:
        return {c: v.tolist() for c, v in agg.items()}
    total = agg["sum"].astype("float64")
    cumsum = np.cumsum(total)
    quantile = np.percentile(cumsum, duration_ratio * 100.0)
    folded = ~(total < 0) & ((cumsum > quantile) | (np.arange(n) >= num_kernels))
    names = np.where(folded, "others", agg["name"].astype(object)).tolist()
    groups: Dict[str, List[float]] = {}
    for name, t in zip(names, total.tolist()):
        groups.setdefault(name, []).append(t)
    out: Dict[str, List[Any]] = {c: [] for c in ["name", "sum", "max", "min", "mean", "std"]}
    for name in sorted(groups):
        out["name"].append(name)
        if len(groups[name]) == 1:
            t = groups[name][0]
            for c, x in (("sum", t), ("max", t), ("min", t), ("mean", t), ("std", 0.0)):
                out[c].append(x)
            continue
        # pandas' Series reductions (nanops, without bottleneck) in numpy: the sum, the
        # mean as that sum over the count, the std from the squares about that mean.
        v = np.asarray(groups[name], dtype="float64")
        total_v = v.sum()
        mean = total_v / len(v)
        out["sum"].append(float(total_v))
        out["max"].append(float(v.max()))
        out["min"].append(float(v.min()))
        out["mean"].append(float(mean))
        out["std"].append(float(np.sqrt(((mean - v) ** 2).sum() / (len(v) - 1))))
    return out
