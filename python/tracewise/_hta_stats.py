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



def _whole(v: np.ndarray) -> bool:
    """Whether every value of ``v`` (float) is a whole number: ``np.mod(v, 1) == 0``
    everywhere, without its division (the mod of a large array cost ms)."""
    return bool(np.isfinite(v).all() and (np.trunc(v) == v).all())


def _times(v: np.ndarray) -> np.ndarray:
    """HTA's times: int64 where every value is whole (and there is one), else float64."""
    if not len(v) or not _whole(v):
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
        out.columns = _stat_columns(column, list(out.columns))
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
    g, stats = _group_describe(rank_codes.astype("int64") * len(key_values) + key_codes, v)
    # What `MultiIndex.from_arrays` of the groups' values gives (each level the sorted
    # values present, in its column's dtype), built from the codes: from_arrays
    # factorizes the values again, a few hundred µs.
    index = pd.MultiIndex(
        levels=[pd.Index(rank_values), pd.Index(key_values)],
        codes=[g // len(key_values), g % len(key_values)],
        names=["rank", key],
        verify_integrity=False,
    )
    out = pd.DataFrame(stats, index=index)
    out.columns = _stat_columns(column, list(stats))
    return out


def _stat_columns(column: str, stats: List[str]) -> pd.MultiIndex:
    """``MultiIndex.from_product([[column], stats])`` (its levels sorted, as from_product's
    factorization sorts them) from codes: from_product costs about 0.5 ms a call."""
    levels = sorted(stats)
    return pd.MultiIndex(
        levels=[[column], levels],
        codes=[[0] * len(stats), [levels.index(s) for s in stats]],
        verify_integrity=False,
    )


def _group_describe(group: np.ndarray, v: np.ndarray) -> Tuple[np.ndarray, Dict[str, np.ndarray]]:
    """The groups of ``group`` (integer codes, sorted) and ``describe()``'s statistics of
    ``v`` (float64) in each, as pandas' group aggregations compute them: NaN values
    skipped (a group of NaN only: count 0, the rest NaN), each quantile by pandas' linear
    formula over the group's values sorted, the mean and std equal to rounding (pandas
    compensates its sums)."""
    # By group, each group's values ascending with its NaNs last: a group's numbers are
    # the first `n` of its rows.
    names = ["count", "mean", "std", "min", "25%", "50%", "75%", "max"]
    if not len(v):
        return group[:0], {c: np.zeros(0) for c in names}
    order = np.lexsort((v, group))
    group, v = group[order], v[order]
    first = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    size = np.diff(np.r_[first, len(v)])
    nan = np.isnan(v)
    n = np.add.reduceat((~nan).astype("int64"), first)
    # NaNs as 0: they add nothing to the sums below.
    v = np.where(nan, 0.0, v)
    has = n > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.add.reduceat(v, first) / n
        dev = v - np.repeat(np.where(has, mean, 0.0), size)
        dev[nan] = 0.0
        std = np.sqrt(np.add.reduceat(dev * dev, first) / (n - 1))
    std = np.where(n < 2, np.nan, std)
    last = first + np.maximum(n, 1) - 1

    def quantile(q: float) -> np.ndarray:
        at = q * (n - 1)
        lo = np.floor(np.maximum(at, 0)).astype("int64")
        frac = at - lo
        val = v[np.minimum(first + lo, last)]
        nxt = v[np.minimum(first + lo + 1, last)]
        return np.where(frac == 0, val, val + (nxt - val) * frac)

    values = {
        "count": n.astype("float64"),
        "mean": mean,
        "std": std,
        "min": v[first],
        "25%": quantile(0.25),
        "50%": quantile(0.5),
        "75%": quantile(0.75),
        "max": v[last],
    }
    # A group of NaNs only: count 0, the rest NaN.
    stats = {c: values[c] if c == "count" else np.where(has, values[c], np.nan) for c in names}
    return group[first], stats


def _idle_describe(parts: List[Tuple[int, int, np.ndarray, np.ndarray]], dtype: np.dtype) -> pd.DataFrame:
    """HTA's idle interval statistics of (rank, stream, categories, gaps) parts, the parts'
    frames stacked as HTA's concat stacks them: per part ``describe()`` of its gaps by
    category (0 host wait, 1 kernel wait, 2 other; the stream's first activity counts in
    ``other`` with a NaN gap), rounded to 2 places, with ``rank`` and ``stream`` (of
    ``dtype``) columns and the category names as the index, computed with numpy (pandas'
    group-by and its eight aggregations cost ms a call)."""
    category = np.concatenate([np.r_[2, c.astype("int64")] for _, _, c, _ in parts])
    gaps = np.concatenate([np.r_[np.nan, g] for _, _, _, g in parts])
    part = np.repeat(np.arange(len(parts), dtype="int64"), [len(g) + 1 for _, _, _, g in parts])
    group, stats = _group_describe(part * 3 + category, gaps)
    at = group // 3
    columns = {
        "rank": np.asarray([r for r, _, _, _ in parts], dtype="int64")[at],
        "stream": np.asarray([s for _, s, _, _ in parts], dtype=dtype)[at],
    }
    columns.update({c: np.round(x, 2) for c, x in stats.items()})
    index = pd.Index(np.asarray(_IDLE_CATEGORIES, dtype=object)[group % 3], name="idle_category")
    return pd.DataFrame(columns, index=index)


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


def _annotation_frame() -> pd.DataFrame:
    """HTA's empty user-annotation frame, to which it concatenates each rank's rows (its
    dtypes are what the concat starts from)."""
    return pd.DataFrame(
        {
            "name": pd.Series(dtype="str"),
            "sum": pd.Series(dtype="int"),
            "max": pd.Series(dtype="int"),
            "min": pd.Series(dtype="int"),
            "std": pd.Series(dtype="float"),
            "mean": pd.Series(dtype="int"),
            "rank": pd.Series(dtype="int"),
        }
    )


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


def _coded(rows: List[Tuple[str, float]]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(name, duration) rows as (names sorted, each once; each row's name as a code into
    them; durations float64)."""
    codes, names = pd.factorize(np.asarray([n for n, _ in rows], dtype=object), sort=True)
    return np.asarray(names, dtype=object), codes.astype("int64"), np.asarray([d for _, d in rows], dtype="float64")


def _rows(names: np.ndarray, codes: np.ndarray, dur: np.ndarray) -> List[Tuple[str, float]]:
    """The (name, duration) rows of :func:`_coded`'s columns."""
    return list(zip(names[codes].tolist(), dur.tolist()))


def _annotation_stats(per_rank: List[Tuple[Any, np.ndarray, np.ndarray, np.ndarray]]) -> Optional[pd.DataFrame]:
    """The user-annotation breakdown of ranks none of which folds names into ``others``
    (what :func:`_aggregate_ranks`, the concat and the sort by (``rank``, ``name``) give,
    with the columns named), computed with numpy over the rows sorted once by (rank,
    name): per group the sum, max, min, mean and std (n − 1; 0 for one row) of ``dur``.
    Each rank's rows as :func:`_coded` gives them: (rank, names, codes, durations). The
    sums are pandas' where the durations are whole µs (exact); the std equal to rounding.
    None without rows or with a NaN or fractional duration (pandas' group-by then)."""
    if not sum(len(c) for _, _, c, _ in per_rank):
        return None
    dur = np.concatenate([d for _, _, _, d in per_rank])
    if not _whole(dur):
        return None
    name_values = np.unique(np.concatenate([n for _, n, _, _ in per_rank]))
    # Each rank's codes into the names of every rank (sorted: the codes keep name order).
    name_codes = np.concatenate(
        [np.searchsorted(name_values, n).astype("int64")[c] for _, n, c, _ in per_rank if len(c)]
    )
    rank = np.repeat(np.asarray([int(r) for r, _, _, _ in per_rank], dtype="int64"), [len(c) for _, _, c, _ in per_rank])
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


def _kernel_type_time(types: List[str], intervals: List[List[Tuple[float, float]]]) -> Dict[str, int]:
    """:func:`_kernel_type_time_of` of each type's intervals given as (start, end) pairs."""
    arrays = [
        (np.asarray([a for a, _ in iv], dtype="float64"), np.asarray([b for _, b in iv], dtype="float64"))
        for iv in intervals
    ]
    return _kernel_type_time_of(types, arrays)


def _kernel_type_time_of(types: List[str], intervals: List[Tuple[np.ndarray, np.ndarray]]) -> Dict[str, int]:
    """One rank's time (µs) per combination of kernel types, as HTA 0.5.0's
    ``_get_gpu_kernel_type_time`` counts it from each type's merged busy intervals
    (``types[i]``'s starts and ends in ``intervals[i]``, bit ``1 << i``): every start (+bit)
    and end (−bit) of a type is added, starts then ends, to the earlier types' points and
    the whole is sorted by time with numpy's quicksort, type after type; the running sum of
    the bits after each point names the types running until the next point. Points at one
    µs fall in the order that sort gives them, so a combination can hold for 0 µs (an end
    and a start at one time): HTA lists it with 0, and so does this."""
    status = np.zeros(0, dtype="int64")
    time = np.zeros(0, dtype="float64")
    for bit, (ts, end) in enumerate(intervals):
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


def _kernel_type_frame(totals: Dict[str, float]) -> pd.DataFrame:
    """HTA's kernel-type frame of the time per combination of types summed over the ranks
    (a group-by: the types in name order), ``sum`` int64 where every sum is whole, sorted
    by it (pandas' ``sort_values``: ``nargsort``, quicksort, largest first) with its
    ``percentage`` of the whole, rounded to 1 place. Built with numpy: a handful of rows,
    where pandas' steps cost ms."""
    from pandas.core.sorting import nargsort

    labels = np.asarray(sorted(totals), dtype=object)
    sums = np.asarray([totals[k] for k in labels], dtype="float64")
    if len(sums) and _whole(sums):
        sums = sums.astype("int64")
    order = nargsort(sums, kind="quicksort", ascending=False)
    sums = sums[order]
    return pd.DataFrame(
        {
            "kernel_type": labels[order],
            "sum": sums,
            "percentage": np.round((sums / sums.sum()) * 100, 1),
        }
    )


def _kernel_stats_frame(
    stats: Dict[str, np.ndarray], analysed: List[str], num_kernels: int, duration_ratio: float
) -> pd.DataFrame:
    """HTA's per-rank kernel frame of the second element of ``get_gpu_kernel_breakdown``
    from the native per-(rank, name) statistics (``stats``: columns ``rank``,
    ``kernel_type``, ``name``, ``sum``, ``max``, ``min``, ``mean``, ``std``): each (rank,
    type of ``analysed``) folded by :func:`_fold_kernels` where it has more than
    ``num_kernels`` names (else its rows as they are, the std of one call 0), sorted by
    (kernel_type, name, rank), the columns named as HTA's. The rows' order before that sort
    does not matter: its keys are unique (a name has one type; ``others`` one per group)."""
    columns = ["name", "sum", "max", "min", "mean", "std"]
    rank = stats["rank"]
    kept = np.isin(stats["kernel_type"], np.asarray(analysed, dtype=object))
    parts: Dict[str, List[np.ndarray]] = {c: [stats[c][kept]] for c in columns + ["kernel_type", "rank"]}
    parts["std"] = [np.where(np.isnan(parts["std"][0]), 0.0, parts["std"][0])]
    if len(rank):
        type_code, type_values = pd.factorize(stats["kernel_type"][kept])
        group = pd.factorize(rank[kept])[0].astype("int64") * max(len(type_values), 1) + type_code
        sizes = np.bincount(group) if len(group) else np.zeros(0, dtype="int64")
        big = np.flatnonzero(sizes > num_kernels)
        if len(big):
            folding = np.isin(group, big)
            for c in parts:
                parts[c] = [parts[c][0][~folding]]
            at_all = np.flatnonzero(kept)
            for g in big:
                at = at_all[group == g]
                folded = _fold_kernels({c: stats[c][at] for c in columns}, num_kernels, duration_ratio)
                n = len(folded["name"])
                for c in columns:
                    parts[c].append(np.asarray(folded[c], dtype=object if c == "name" else "float64"))
                parts["kernel_type"].append(np.full(n, stats["kernel_type"][at[0]], dtype=object))
                parts["rank"].append(np.full(n, rank[at[0]], dtype="int64"))
    out = {c: np.concatenate(v) for c, v in parts.items()}
    type_codes = pd.factorize(out["kernel_type"], sort=True)[0]
    name_codes = pd.factorize(out["name"], sort=True)[0]
    order = np.lexsort((out["rank"], name_codes, type_codes))
    return pd.DataFrame(
        {
            "name": out["name"][order].astype(object),
            "sum (us)": out["sum"][order].astype("float64"),
            "max (us)": out["max"][order].astype("float64"),
            "min (us)": out["min"][order].astype("float64"),
            "stddev": out["std"][order].astype("float64"),
            "mean (us)": out["mean"][order].astype("float64"),
            "kernel_type": out["kernel_type"][order].astype(object),
            "rank": out["rank"][order].astype("int64"),
        }
    )


def _fold_kernels(agg: Dict[str, np.ndarray], num_kernels: int, duration_ratio: float) -> Dict[str, List[Any]]:
    """HTA 0.5.0's ``_aggr_gpu_kernel_time`` over per-name statistics already computed
    (natively; columns ``name``, ``sum``, ``max``, ``min``, ``mean``, ``std`` as arrays):
    sorted by total time, and past ``num_kernels`` names, or past the ``duration_ratio``
    quantile of the cumulative time, folded into ``others`` (whose max/min/mean/std are,
    as in HTA, over the folded names' totals; the others' too, each over its one total).
    The sorts are pandas' own (``nargsort``, as ``sort_values`` sorts), so ties fall as in
    HTA; the quantile is numpy's ``percentile``, as pandas computes it."""
    o = _nargsort(agg["name"], ascending=True)
    agg = {c: v[o] for c, v in agg.items()}
    o = _nargsort(agg["sum"], ascending=False)
    agg = {c: v[o] for c, v in agg.items()}
    agg["std"] = np.where(np.isnan(agg["std"].astype("float64")), 0.0, agg["std"])
    n = len(agg["name"])
    if n <= num_kernels:
        return {c: v.tolist() for c, v in agg.items()}
    total = agg["sum"].astype("float64")
    cumsum = np.cumsum(total)
    quantile = _percentile(cumsum, duration_ratio * 100.0)
    folded = ~(total < 0) & ((cumsum > quantile) | (np.arange(n) >= num_kernels))
    names = np.where(folded, "others", agg["name"].astype(object)).tolist()
    if "others" not in agg["name"][~folded].tolist():
        # The names kept are each one group of one total (max, min and mean that total,
        # std 0); the folded ones are `others`.
        kept = total[~folded]
        out = {
            "name": agg["name"][~folded].tolist(),
            "sum": kept.tolist(),
            "max": kept.tolist(),
            "min": kept.tolist(),
            "mean": kept.tolist(),
            "std": [0.0] * len(kept),
        }
        if folded.any():
            for c, x in zip(["name", "sum", "max", "min", "mean", "std"], _other_stats(total[folded])):
                out[c].append(x)
        return out
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
        for c, x in zip(["sum", "max", "min", "mean", "std"], _other_stats(np.asarray(groups[name]))[1:]):
            out[c].append(x)
    return out


def _other_stats(v: np.ndarray) -> Tuple[str, float, float, float, float, float]:
    """``others``' row of :func:`_fold_kernels` over the folded totals ``v``: for one, that
    total (std 0); else pandas' Series reductions (nanops, without bottleneck) in numpy: the
    sum, the mean as that sum over the count, the std from the squares about that mean."""
    v = v.astype("float64")
    if len(v) == 1:
        t = float(v[0])
        return ("others", t, t, t, t, 0.0)
    total = v.sum()
    mean = total / len(v)
    return ("others", float(total), float(v.max()), float(v.min()), float(mean),
            float(np.sqrt(((mean - v) ** 2).sum() / (len(v) - 1))))


def _nargsort(items: np.ndarray, ascending: bool) -> np.ndarray:
    """pandas' ``nargsort(items, kind="quicksort", ascending=...)`` (what ``sort_values``
    of one column runs, so that ties fall as in HTA) for numbers without NaN or strings (the
    native kernel names): numpy's quicksort, on the reversed items when descending, the
    order then reversed. Numbers with a NaN go to pandas' own."""
    if items.dtype.kind == "f" and np.isnan(items).any():
        from pandas.core.sorting import nargsort

        return nargsort(items, kind="quicksort", ascending=ascending)
    if ascending:
        return items.argsort(kind="quicksort")
    idx = np.arange(len(items))[::-1]
    return idx[items[::-1].argsort(kind="quicksort")][::-1]


def _percentile(a: np.ndarray, q: float) -> float:
    """``np.percentile(a, q)`` (its default linear method, as pandas' ``quantile`` runs it)
    of a float64 array without NaN, computed as numpy computes it (the index ``q / 100 *
    (n - 1)`` between the sorted values, numpy's ``_lerp``) without its dispatch, which
    cost more than the fold it serves."""
    v = np.sort(a)
    at = np.true_divide(q, 100) * (len(v) - 1)
    lo = int(np.floor(at))
    hi = min(lo + 1, len(v) - 1)
    t = at - lo
    below, above = v[lo], v[hi]
    diff = above - below
    return float(above - diff * (1 - t)) if t >= 0.5 else float(below + diff * t)
