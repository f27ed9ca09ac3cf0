#!/usr/bin/env python3
"""Figures for docs/differences.md: our definitions next to HTA's, XProf's and TraceLens'.

Standard library only. No test needs it. Traces are read from the directory given as the
first argument, or from $TRACEWISE_TRACES (the shared corpus: pytorch/ and jax/ below it):

    python3 docs/differences/figures.py ../shared/traces            # every section
    python3 docs/differences/figures.py ../shared/traces rounding   # one section

Each section emulates both definitions side by side on the same events, in integer
nanoseconds. "ours" is the tracewise definition (GPU idle = window
minus the union of intervals; critical stream = most compute time; communication includes
non-NCCL collectives; activities in flight at capture start kept out of per-step budgets),
not what an older binary prints. HTA numbers come from an emulation of HTA 0.5.0's
code (hta/common/trace_parser.py, hta/common/trace.py, hta/analyzers/breakdown_analysis.py,
hta/utils/utils.py); hta_run.py beside this file runs HTA itself for the cross-check.
"""

import gzip
import json
import math
import os
import re
import sys
from collections import Counter, defaultdict
from decimal import Decimal

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}
LAUNCH_CATS = {"cuda_runtime", "cuda_driver", "Runtime"}


# ----------------------------------------------------------------------------- loading


def open_json(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return json.load(f, parse_float=Decimal)


def ns(x):
    """Kineto microseconds (int or exact decimal) to integer nanoseconds."""
    return int((Decimal(x) * 1000).to_integral_value())


def load_kineto(path):
    d = open_json(path)
    ev = d["traceEvents"] if isinstance(d, dict) else d
    any_float_ts = any(isinstance(e.get("ts"), Decimal) and e["ts"] != int(e["ts"]) for e in ev)
    launches = {}
    host = []
    acts = []
    steps = []
    gpu_steps = []
    for e in ev:
        if e.get("ph") != "X" or "ts" not in e:
            continue
        cat = e.get("cat")
        a = e.get("args") or {}
        start, dur = ns(e["ts"]), ns(e.get("dur", 0))
        if cat in GPU_CATS:
            acts.append(
                {
                    "name": e.get("name", ""),
                    "cat": cat.lower(),
                    "start": start,
                    "dur": dur,
                    "end": start + dur,
                    "stream": a.get("stream"),
                    "device": a.get("device"),
                    "corr": a.get("correlation"),
                }
            )
            continue
        if cat == "gpu_user_annotation":
            if str(e.get("name", "")).startswith("ProfilerStep#"):
                gpu_steps.append((start, start + dur, e["name"]))
            continue
        host.append({"cat": cat, "name": e.get("name", ""), "start": start, "end": start + dur, "tid": e.get("tid")})
        if cat in LAUNCH_CATS and "correlation" in a:
            launches[a["correlation"]] = (start, dur)
        if cat in ("user_annotation", "cpu_op") and str(e.get("name", "")).startswith("ProfilerStep#"):
            steps.append((start, start + dur, e["name"]))
    first_host = min((h["start"] for h in host if h["cat"]), default=None)
    # HTA joins a launchless GPU activity to frame row 0 (index_correlation = 0): the
    # first event of the file, whatever it is (hta/common/trace.py transform_correlation_to_index).
    row0 = ev[0] if ev else {}
    row0_ts = ns(row0["ts"]) if "ts" in row0 else None
    first_launch_corr = min(launches, default=None)
    for x in acts:
        x["launch"] = launches.get(x["corr"])
    steps.sort()
    return {
        "path": path,
        "meta": {k: v for k, v in d.items() if k != "traceEvents"} if isinstance(d, dict) else {},
        "acts": acts,
        "host": host,
        "launches": launches,
        "steps": steps,
        "gpu_steps": sorted(gpu_steps),
        "first_host": first_host,
        "first_launch_corr": first_launch_corr,
        "any_float_ts": any_float_ts,
        "row0_ts": row0_ts,
    }


# ----------------------------------------------------------------------------- intervals


def merge(iv):
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def length(u):
    return sum(e - s for s, e in u)


def union_len(iv):
    return length(merge(iv))


def subtract(a, b):
    """Length of union(b) minus union(a), as intervals."""
    out = []
    a = merge(a)
    for s, e in merge(b):
        cur = s
        for x, y in a:
            if y <= cur or x >= e:
                continue
            if x > cur:
                out.append([cur, x])
            cur = max(cur, y)
            if cur >= e:
                break
        if cur < e:
            out.append([cur, e])
    return out


def us(x):
    return x / 1000.0


def pct(a, b):
    return 100.0 * a / b if b else 0.0


# ----------------------------------------------------------------------------- classes

HTA_COMM = re.compile(r"^nccl.*Kernel")  # hta/utils/utils.py NCCL_KERNEL_RE
HTA_MEM = re.compile(r"(^Memcpy)|(^Memset)|(^dma)")  # MEMORY_KERNEL_RE
HTA_NOT_COMPUTE = re.compile(r"(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)")  # NCCL_COMPUTE_KERNEL_RE

# Our communication test, as a name test; the Rust table is the authority.
OUR_COMM = re.compile(
    r"nccl|rccl|msccl"
    r"|::ep::(internode|intranode)::|notify_dispatch|cached_notify"
    r"|multimem_all_reduce|one_shot_all_reduce|two_shot_|symm_mem"
    r"|cross_device_reduce",
    re.I,
)


def hta_kernel_type(name):
    if HTA_COMM.match(name):
        return "COMMUNICATION"
    if HTA_MEM.match(name):
        return "MEMORY"
    if not HTA_NOT_COMPUTE.match(name):
        return "COMPUTATION"
    return "OTHER"


def our_kind(a):
    if a["cat"] in ("gpu_memcpy", "memcpy"):
        return "memcpy"
    if a["cat"] in ("gpu_memset", "memset"):
        return "memset"
    return "collective" if OUR_COMM.search(a["name"]) else "compute"


# ----------------------------------------------------------------------------- ours


def in_flight(t, a):
    """In flight at capture start: no launch in the capture, and a correlation id below the first
    launch's or a start before the first host event."""
    if a["launch"] is not None:
        return False
    c = a["corr"]
    below = c is not None and t["first_launch_corr"] is not None and c < t["first_launch_corr"]
    early = t["first_host"] is not None and a["start"] < t["first_host"]
    return below or early


def step_of(t, a):
    """An activity belongs to the step whose host range holds its launch's start; without
    a launch, by its own start (crates/analysis/src/steps.rs)."""
    at = a["launch"][0] if a["launch"] else a["start"]
    for i, (s, e, _) in enumerate(t["steps"]):
        if s <= at < e:
            return i
    return None if t["steps"] else 0


def our_step_acts(t, exclude_in_flight=True):
    out = []
    for a in t["acts"]:
        if step_of(t, a) is None:
            continue
        if exclude_in_flight and in_flight(t, a):
            continue
        out.append(a)
    return out


def our_budget(acts, window):
    """Union with precedence compute > collective > memcpy > memset (budget.rs)."""
    ws, we = window
    by = defaultdict(list)
    for a in acts:
        s, e = max(a["start"], ws), min(a["end"], we)
        if e > s:
            by[our_kind(a)].append((s, e))
    taken = []
    parts = {}
    for k in ("compute", "collective", "memcpy", "memset"):
        mine = subtract(taken, by[k])
        parts[k] = length(mine)
        taken += by[k]
    busy = union_len(taken)
    parts["idle"] = (we - ws) - busy
    parts["span"] = we - ws
    return parts


def our_idle_causes(stream_acts, window):
    """gaps.rs idle_gaps + idle_causes over `window`, leading and trailing gaps included."""
    ws, we = window
    acts = sorted(stream_acts, key=lambda a: a["start"])
    busy = merge([(max(a["start"], ws), min(a["end"], we)) for a in acts if min(a["end"], we) > max(a["start"], ws)])
    gaps = []
    at = ws
    for s, e in busy:
        if s > at:
            gaps.append((at, s))
        at = max(at, e)
    if we > at:
        gaps.append((at, we))
    c = {"host_wait": 0, "queued_wait": 0, "unattributed": 0, "leading": 0, "trailing": 0}
    starts = {}
    for a in acts:
        starts.setdefault(a["start"], a)
    for g in gaps:
        nxt = starts.get(g[1])
        if g[0] == ws and g[1] != we:
            c["leading"] += g[1] - g[0]
        if g[1] == we:
            c["trailing"] += g[1] - g[0]
        if nxt is None or nxt["launch"] is None:
            c["unattributed"] += g[1] - g[0]
        elif nxt["launch"][0] >= g[0]:
            c["host_wait"] += g[1] - g[0]
        else:
            c["queued_wait"] += g[1] - g[0]
    return c


# ----------------------------------------------------------------------------- HTA


def hta_round(t):
    """trace_parser.round_down_time_stamps: only when the ts column is float (any event
    has a fractional ts); ceil every start, floor every end, dur = end - start."""
    if not t["any_float_ts"]:
        return [dict(a) for a in t["acts"]], dict(t["launches"])
    acts = []
    for a in t["acts"]:
        s = math.ceil(a["start"] / 1000) * 1000
        e = math.floor(a["end"] / 1000) * 1000
        b = dict(a)
        b.update(start=s, end=e, dur=e - s)
        acts.append(b)
    launches = {k: (math.ceil(s / 1000) * 1000, d) for k, (s, d) in t["launches"].items()}
    return acts, launches


def hta_filter(t, acts, include_last=True):
    """trace.py _filter_irrelevant_gpu_kernels: only with two or more ProfilerStep names;
    keep GPU activities whose correlation matches a CPU event before the last step's start
    (or up to its end with include_last_profiler_step=True)."""
    names = {n for _, _, n in t["steps"]}
    if len(names) < 2:
        return acts, 0, 0
    last_start = max(s for s, _, _ in t["steps"])
    last_end = max(e for _, e, _ in t["steps"])
    lim = (lambda s: s <= last_end) if include_last else (lambda s: s < last_start)
    ok = {c for c, (s, _) in t["launches"].items() if lim(s)}
    kept = [a for a in acts if a["corr"] in ok]
    dropped = [a for a in acts if a["corr"] not in ok]
    return kept, len(dropped), sum(a["dur"] for a in dropped)


def hta_temporal(acts):
    """breakdown_analysis.get_temporal_breakdown, one rank: span of all GPU events,
    idle = span - union(all), compute = union(COMPUTATION)."""
    u = merge([(a["start"], a["end"]) for a in acts])
    span = u[-1][1] - u[0][0]
    idle = span - length(u)
    comp = union_len([(a["start"], a["end"]) for a in acts if hta_kernel_type(a["name"]) == "COMPUTATION"])
    return {"span": span, "idle": idle, "compute": comp, "non_compute": span - comp - idle}


def hta_idle_breakdown(stream_acts, launches, delay_us=30, row0_ts=None):
    """breakdown_analysis._analyze_idle_time_for_stream: gap = ts - previous end (in ts
    order); host_wait if the runtime's ts > previous end, else kernel_wait if gap < 30
    (the µs values of the rounded frame), else other. The first activity has no gap.
    An activity without a launch is compared with `row0_ts` (see load_kineto)."""
    acts = sorted(stream_acts, key=lambda a: a["start"])
    c = {"host_wait": 0, "kernel_wait": 0, "other": 0, "negative_gaps": 0}
    for p, a in zip(acts, acts[1:]):
        gap = a["start"] - p["end"]
        rt = launches.get(a["corr"]) if a["corr"] is not None else None
        if rt is None and row0_ts is not None:
            rt = (row0_ts, 0)
        if gap < 0:
            c["negative_gaps"] += 1
        if rt is not None and rt[0] > p["end"]:
            c["host_wait"] += gap
        elif gap < delay_us * 1000:
            c["kernel_wait"] += gap
        else:
            c["other"] += gap
    return c


# ----------------------------------------------------------------------------- sections


def pt(root, *p):
    return os.path.join(root, "pytorch", *p)


def dlrm_files(root):
    d = pt(root, "param-dlrm-8rank")
    return [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith(".json")]


def rank_of(t):
    return (t["meta"].get("distributedInfo") or {}).get("rank")


def sec_rounding(root):
    print("## 1. HTA rounds starts up and ends down to whole µs")
    for rel in [
        ("hta-nccl-a100", "nccl_data.json.gz"),
        ("tracelens-h100-qwen", "h100", "Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"),
        ("tracelens-h100", "google_owlv2-large-patch14-ensemble__1016001.json.gz"),
    ]:
        t = load_kineto(pt(root, *rel))
        r, _ = hta_round(t)
        exact = sum(a["dur"] for a in t["acts"])
        rounded = sum(a["dur"] for a in r)
        short = [a for a in t["acts"] if a["dur"] < 1000]
        print(
            f"{rel[0]}: {len(t['acts'])} GPU activities; exact {us(exact):.3f} µs, rounded {us(rounded):.3f} µs, "
            f"shrink {us(exact - rounded):.3f} µs ({pct(exact - rounded, exact):.2f} %); "
            f"dur <= 0 after rounding: {sum(a['dur'] <= 0 for a in r)}, < 0: {sum(a['dur'] < 0 for a in r)}; "
            f"activities shorter than 1 µs: {len(short)}"
        )
        te, tr = hta_temporal(t["acts"]), hta_temporal(r)
        print(
            f"   HTA-style temporal on exact ns: idle {pct(te['idle'], te['span']):.2f} % compute {pct(te['compute'], te['span']):.2f} %; "
            f"rounded: idle {pct(tr['idle'], tr['span']):.2f} % compute {pct(tr['compute'], tr['span']):.2f} % "
            f"non-compute {us(tr['non_compute']):.1f} µs"
        )
    print()


def sec_comm(root):
    print("## 2. HTA counts only ^nccl.*Kernel as communication")
    total = Counter()
    for dirpath, _, files in sorted(os.walk(os.path.join(root, "pytorch"))):
        if "reference-outputs" in dirpath:
            continue
        for f in sorted(files):
            if not (f.endswith(".json") or f.endswith(".json.gz")) or f == "execution_details.json":
                continue
            t = load_kineto(os.path.join(dirpath, f))
            ks = [a for a in t["acts"] if a["cat"] in ("kernel",)]
            ours = [a for a in ks if our_kind(a) == "collective"]
            hta = [a for a in ks if hta_kernel_type(a["name"]) == "COMMUNICATION"]
            only_ours = [a for a in ours if hta_kernel_type(a["name"]) != "COMMUNICATION"]
            only_hta = [a for a in hta if our_kind(a) != "collective"]
            total["files"] += 1
            total["kernels"] += len(ks)
            total["comm"] += len(ours)
            total["only_ours"] += len(only_ours)
            total["only_hta"] += len(only_hta)
            total["only_ours_ns"] += sum(a["dur"] for a in only_ours)
    print(
        f"{total['files']} PyTorch trace files, {total['kernels']} kernels, {total['comm']} communication kernels; "
        f"communication for us but not for HTA: {total['only_ours']} ({us(total['only_ours_ns']):.1f} µs); "
        f"for HTA but not for us: {total['only_hta']}"
    )
    print()


def dlrm_ranks(root):
    return [load_kineto(f) for f in dlrm_files(root)]


def sec_hostwait(root):
    print("## 3. HTA's host wait ignores the gap before a stream's first activity (param-dlrm)")
    ref = pt(root, "reference-outputs", "hta-0.5.0", "param-dlrm-8rank", "idle_time_breakdown.csv")
    hta_ref = {}
    for line in open(ref).read().splitlines()[1:]:
        c = line.split(",")
        hta_ref[(int(c[1]), int(c[2]), c[3])] = float(c[4])
    tot = Counter()
    for t in dlrm_ranks(root):
        rank = rank_of(t)
        acts = our_step_acts(t)
        window = (min(a["start"] for a in acts), max(a["end"] for a in acts))
        streams = sorted({a["stream"] for a in acts})
        comp = {s: our_budget([a for a in acts if a["stream"] == s], window)["compute"] for s in streams}
        busy = {s: union_len([(a["start"], a["end"]) for a in acts if a["stream"] == s]) for s in streams}
        crit = max(streams, key=lambda s: (comp[s], -s))
        busiest = max(streams, key=lambda s: (busy[s], -s))
        for s in streams:
            every = [a for a in t["acts"] if a["stream"] == s]
            h_emul = hta_idle_breakdown(every, t["launches"], row0_ts=t["row0_ts"])
            h = hta_ref.get((rank, s, "host_wait"), 0.0)
            tot["hta_ref_us"] += h
            tot["hta_emul_ns"] += h_emul["host_wait"]
            if abs(us(h_emul["host_wait"]) - h) > 0.5:
                tot["emul_mismatch"] += 1
        sa = [a for a in acts if a["stream"] == crit]
        c_win = our_idle_causes(sa, window)
        own = (min(a["start"] for a in sa), max(a["end"] for a in sa))
        c_own = our_idle_causes(sa, own)
        h = hta_ref.get((rank, crit, "host_wait"), 0.0)
        tot["crit_hta_us"] += h
        tot["crit_win_ns"] += c_win["host_wait"]
        tot["crit_own_ns"] += c_own["host_wait"]
        tot["crit_leading_ns"] += c_win["leading"]
        print(
            f"rank {rank}: critical stream {crit} (most compute; most busy: {busiest}): HTA host wait {h:.0f} µs; "
            f"ours {us(c_win['host_wait']):.0f} µs over the rank's window, of which the leading gap {us(c_win['leading']):.0f} µs; "
            f"ours over the stream's own span {us(c_own['host_wait']):.0f} µs"
        )
    print(
        f"critical streams, 8 ranks: HTA {tot['crit_hta_us']:.0f} µs, ours {us(tot['crit_win_ns']):.0f} µs "
        f"({pct(tot['crit_win_ns'] - tot['crit_hta_us'] * 1000, tot['crit_hta_us'] * 1000):+.1f} %), leading gaps {us(tot['crit_leading_ns']):.0f} µs, "
        f"ours without the leading gaps (own span) {us(tot['crit_own_ns']):.0f} µs"
    )
    print(
        f"all 32 streams: HTA host wait {tot['hta_ref_us']:.0f} µs (reference CSV), emulated {us(tot['hta_emul_ns']):.0f} µs "
        f"({tot['emul_mismatch']} streams off by more than 0.5 µs)"
    )
    print()


def sec_inflight(root):
    print("## 4. HTA drops activities launched before the capture (when the trace has >= 2 steps)")
    cases = [
        ("hta-cudagraph-a100", "rank0.json.gz"),
        ("hta-trace-diff", "test", "test.json.gz"),
        ("tracelens-h100-qwen", "h100", "Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"),
    ] + [("param-dlrm-8rank", os.path.basename(f)) for f in dlrm_files(root)]
    for rel in cases:
        t = load_kineto(pt(root, *rel))
        fl = [a for a in t["acts"] if in_flight(t, a)]
        if not fl:
            continue
        total = sum(a["dur"] for a in t["acts"])
        kept, nd, dd = hta_filter(t, t["acts"], include_last=True)
        print(
            f"{'/'.join(rel)[:60]}: {len(t['steps'])} steps; in flight at capture start {len(fl)} activities, "
            f"{us(sum(a['dur'] for a in fl)):.0f} µs of {us(total):.0f} µs GPU time ({pct(sum(a['dur'] for a in fl), total):.1f} %); "
            f"HTA drops {nd} ({us(dd):.0f} µs)"
        )
        # Effect on an HTA-style temporal breakdown of this rank, with and without them.
        with_f = hta_temporal(t["acts"])
        ours = our_step_acts(t)
        ours_incl = our_step_acts(t, exclude_in_flight=False)
        w_ex = (min(a["start"] for a in ours), max(a["end"] for a in ours))
        w_in = (min(a["start"] for a in ours_incl), max(a["end"] for a in ours_incl))
        b_ex, b_in = our_budget(ours, w_ex), our_budget(ours_incl, w_in)
        print(
            f"   HTA-style span with them {us(with_f['span']):.0f} µs idle {pct(with_f['idle'], with_f['span']):.2f} %; "
            f"our window with them {us(w_in[1] - w_in[0]):.0f} µs idle {pct(b_in['idle'], b_in['span']):.2f} % compute {pct(b_in['compute'], b_in['span']):.2f} %; "
            f"without them {us(w_ex[1] - w_ex[0]):.0f} µs idle {pct(b_ex['idle'], b_ex['span']):.2f} % compute {pct(b_ex['compute'], b_ex['span']):.2f} %"
        )
    print()


def sec_temporal(root):
    print("## 6. HTA temporal breakdown vs our device budget (param-dlrm, reference CSV)")
    ref = pt(root, "reference-outputs", "hta-0.5.0", "param-dlrm-8rank", "temporal_breakdown.csv")
    rows = {}
    for line in open(ref).read().splitlines()[1:]:
        c = line.split(",")
        rows[int(c[1])] = [float(x) for x in c[2:]]
    worst = 0.0
    for t in dlrm_ranks(root):
        r = rank_of(t)
        for excl in (False, True):
            acts = our_step_acts(t, exclude_in_flight=excl)
            w = (min(a["start"] for a in acts), max(a["end"] for a in acts))
            b = our_budget(acts, w)
            h = rows[r]
            ours = [pct(b["idle"], b["span"]), pct(b["compute"], b["span"]),
                    pct(b["collective"] + b["memcpy"] + b["memset"], b["span"])]
            d = max(abs(o - x) for o, x in zip(ours, h[4:7]))
            if excl:
                worst = max(worst, d)
            print(
                f"rank {r} {'in-flight excluded' if excl else 'in-flight kept   '}: span {us(b['span']):.0f} µs vs HTA {h[3]:.0f}; "
                f"idle/compute/non-compute {ours[0]:.2f}/{ours[1]:.2f}/{ours[2]:.2f} % vs HTA {h[4]:.2f}/{h[5]:.2f}/{h[6]:.2f} %; max |Δ| {d:.2f} pp"
            )
    print(f"largest difference with in-flight excluded: {worst:.2f} percentage points")
    print()


def sec_kernel_type(root):
    print("## 7. HTA kernel-type breakdown (union per type, summed over ranks) vs sum of durations (param-dlrm)")
    ref = pt(root, "reference-outputs", "hta-0.5.0", "param-dlrm-8rank", "kernel_type_breakdown.csv")
    print("HTA: " + "; ".join(",".join(l.split(",")[1:]) for l in open(ref).read().splitlines()[1:]))
    by = Counter()
    for t in dlrm_ranks(root):
        for a in t["acts"]:
            by[our_kind(a)] += a["dur"]
    tot = sum(by.values())
    print("sum of durations by our kind: " + "; ".join(f"{k} {us(v):.0f} µs {pct(v, tot):.1f} %" for k, v in by.most_common()))
    print()


def sec_idle_categories(root):
    print("## 8. Idle categories: HTA host/kernel/other vs ours host/queued/unattributed (param-dlrm, per-stream spans, all activities)")
    tot = Counter()
    for t in dlrm_ranks(root):
        acts = t["acts"]
        for s in sorted({a["stream"] for a in acts}):
            sa = [a for a in acts if a["stream"] == s]
            own = (min(a["start"] for a in sa), max(a["end"] for a in sa))
            c = our_idle_causes(sa, own)
            h = hta_idle_breakdown(sa, t["launches"], row0_ts=t["row0_ts"])
            for k, v in c.items():
                tot["ours_" + k] += v
            for k, v in h.items():
                tot["hta_" + k] += v
            # queued gaps HTA calls "other" (>= 30 µs) and host-wait gaps it calls kernel wait
            for p, a in zip(sorted(sa, key=lambda a: a["start"]), sorted(sa, key=lambda a: a["start"])[1:]):
                gap = a["start"] - p["end"]
                if gap > 0 and a["launch"] and a["launch"][0] < p["end"] and gap >= 30000:
                    tot["queued_ge_30us"] += gap
    print(
        f"HTA (emulated): host_wait {us(tot['hta_host_wait']):.0f} µs, kernel_wait {us(tot['hta_kernel_wait']):.0f} µs, other {us(tot['hta_other']):.0f} µs; "
        f"ours: host wait {us(tot['ours_host_wait']):.0f} µs, queued wait {us(tot['ours_queued_wait']):.0f} µs, unattributed {us(tot['ours_unattributed']):.0f} µs; "
        f"queued gaps of >= 30 µs (HTA 'other'): {us(tot['queued_ge_30us']):.0f} µs"
    )
    print()


def sec_launch(root):
    print("## 9. Launch delay: HTA from the end of the launch call, clipped at 0; TKLQT from its start (param-dlrm rank 0)")
    ref = pt(root, "reference-outputs", "hta-0.5.0", "param-dlrm-8rank", "cuda_kernel_launch_stats_rank0.csv")
    lines = open(ref).read().splitlines()[1:]
    hsum = sum(float(l.split(",")[4]) for l in lines)
    t = load_kineto(dlrm_files(root)[0])
    ks = [a for a in our_step_acts(t) if a["cat"] == "kernel" and a["launch"]]
    tklqt = sum(a["start"] - a["launch"][0] for a in ks)
    from_end = sum(max(0, a["start"] - a["launch"][0] - a["launch"][1]) for a in ks)
    every = [a for a in t["acts"] if a["launch"]]
    from_end_all = sum(max(0, a["start"] - a["launch"][0] - a["launch"][1]) for a in every)
    launch_dur = sum(a["launch"][1] for a in ks)
    print(
        f"HTA launch_delay sum {hsum:.0f} µs over {len(lines)} activities (reference CSV; emulated {us(from_end_all):.0f} µs over {len(every)}); "
        f"ours TKLQT {us(tklqt):.0f} µs over {len(ks)} kernels; HTA's formula on the same kernels {us(from_end):.0f} µs; "
        f"the launch calls' own durations {us(launch_dur):.0f} µs"
    )
    print()


# ----------------------------------------------------------------------------- JAX / XProf


def load_jax(path):
    d = open_json(path)
    ev = d["traceEvents"]
    pname = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
    dev = defaultdict(list)
    for e in ev:
        if e.get("ph") == "X" and "/device:GPU" in pname.get(e.get("pid"), ""):
            s = ns(e["ts"])
            dev[pname[e["pid"]]].append(
                {"start": s, "end": s + ns(e["dur"]), "dur": ns(e["dur"]), "name": e["name"],
                 "hlo": "hlo_op" in (e.get("args") or {}), "line": e["tid"]}
            )
    return dev


def xprof_idle(path):
    """framework_op_stats.json.gz: the Device IDLE row's total_time (µs)."""
    d = open_json(path)
    for t in d:
        cols = [c["id"] for c in t["cols"]]
        for r in t["rows"]:
            row = dict(zip(cols, [c.get("v") if c else None for c in r["c"]]))
            if row.get("type") == "IDLE" and row.get("host_or_device") == "Device":
                return float(row["total_time"]), float(row["device_total_self_time_percent"])
    return None


def sec_xprof(root):
    print("## 5. XProf's device idle uses each device's own span (and sums op durations)")
    for name in ["rocm-mi300-jax-conv-legacy", "rocm-mi300-jax08-gemm", "rocm-mi300-jax08-attention",
                 "rocm-mi300-jax08-elementwise", "rocm-gfx950-te-fused-attn"]:
        dev = load_jax(os.path.join(root, "jax", name, "regenerated-jaxlib0.10.2.trace.json.gz"))
        xi = xprof_idle(os.path.join(root, "jax", name, "xprof-2.24.2", "framework_op_stats.json.gz"))
        emul = 0
        shared = (min(a["start"] for v in dev.values() for a in v), max(a["end"] for v in dev.values() for a in v))
        parts = []
        for d, acts in sorted(dev.items()):
            span = max(a["end"] for a in acts) - min(a["start"] for a in acts)
            ops = sum(a["dur"] for a in acts if a["hlo"])
            total = max(span, ops)
            emul += total - ops
            union = union_len([(a["start"], a["end"]) for a in acts])
            parts.append(
                f"{d}: own span {us(span):.1f} µs, XProf idle {us(total - ops):.1f} µs ({pct(total - ops, total):.1f} %), "
                f"own span minus union {us(span - union):.1f} µs; shared window {us(shared[1] - shared[0]):.1f} µs minus union "
                f"{us(shared[1] - shared[0] - union):.1f} µs ({pct(shared[1] - shared[0] - union, shared[1] - shared[0]):.1f} %); "
                f"sum of op durations - union = {us(ops - union_len([(a['start'], a['end']) for a in acts if a['hlo']])):.2f} µs"
            )
        print(f"{name}: XProf Device IDLE {xi[0]:.3f} µs ({100 * xi[1]:.2f} %), emulated {us(emul):.3f} µs")
        for p in parts:
            print("   " + p)
    print()


def sec_tracelens(root):
    print("## 10. TraceLens gpu_timeline: the GPU-side ProfilerStep window (tracelens-h100-qwen)")
    for plat in ("h100", "mi300"):
        t = load_kineto(pt(root, "tracelens-h100-qwen", plat, "Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"))
        s0, e0, _ = t["gpu_steps"][0]
        sel = [a for a in t["acts"] if s0 <= a["start"] < e0]
        u = merge([(a["start"], a["end"]) for a in sel])
        total = u[-1][1] - u[0][0]
        ours = our_step_acts(t)
        w = (min(a["start"] for a in ours), max(a["end"] for a in ours))
        b = our_budget(ours, w)
        old = our_step_acts(t, exclude_in_flight=False)
        wo = (min(a["start"] for a in old), max(a["end"] for a in old))
        bo = our_budget(old, wo)
        print(
            f"{plat}: TraceLens-style total {us(total) / 1e3:.6f} ms, idle {us(total - length(u)) / 1e3:.6f} ms "
            f"({pct(total - length(u), total):.2f} %) over {len(sel)} activities; ours (in-flight excluded) window "
            f"{us(w[1] - w[0]) / 1e3:.3f} ms, idle {us(b['idle']) / 1e3:.3f} ms ({pct(b['idle'], b['span']):.2f} %) over {len(ours)}; "
            f"in-flight kept: window {us(wo[1] - wo[0]) / 1e3:.3f} ms, idle {pct(bo['idle'], bo['span']):.2f} %"
        )
    print()


SECTIONS = {
    "rounding": sec_rounding,
    "comm": sec_comm,
    "hostwait": sec_hostwait,
    "inflight": sec_inflight,
    "xprof": sec_xprof,
    "temporal": sec_temporal,
    "kerneltype": sec_kernel_type,
    "idlecat": sec_idle_categories,
    "launch": sec_launch,
    "tracelens": sec_tracelens,
}


def main():
    args = sys.argv[1:]
    root = args[0] if args and os.path.isdir(args[0]) else os.environ.get("TRACEWISE_TRACES")
    if not root:
        sys.exit("usage: figures.py TRACES_DIR [section ...]  (or set TRACEWISE_TRACES)")
    wanted = [a for a in args if a in SECTIONS] or list(SECTIONS)
    for s in wanted:
        SECTIONS[s](root)


if __name__ == "__main__":
    main()
