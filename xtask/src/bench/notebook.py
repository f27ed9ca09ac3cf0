"""The notebook rows of `cargo xtask bench --python-package` (xtask/src/bench/python.rs).

In one interpreter, imports done before any clock starts: per run, in turn, each side's
`TraceAnalysis(trace_dir=...)` and then each method on that object, timed apart; a method's
figure is constructor + method of the same run (a user's cell). The sides take turns at
going first (the given order on even runs, the reverse on odd ones): a side that always ran
right after the other's methods would always start on caches and a heap those methods had
just churned, and the other never would. The trace set is copied into a scratch directory
first, since `generate_trace_with_counters` writes beside its input (what a method writes
there is removed before the next call, outside the clock); the methods that take an output
directory get a fresh scratch one per side and run.

argv[1] is a JSON object: `dir` (the trace set), `runs`, `sides` (a subset of
["ours", "theirs"]), `methods`: [[label, expression of ta, R, OUT, runs or 0 for all], ...]
where R is the sorted ranks and OUT the output directory. Prints, on stdout:
`LOAD` (the load averages before and after), `RAISED label why` for a method that raised
on either side (no timing row then), and `ROW label runs` with the quartiles of ours,
theirs and the per-run ratio theirs / ours. Progress goes to stderr.
"""

import contextlib
import io
import json
import logging
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
import warnings


def stop_on_sigterm():
    """The list SIGTERM appends to from now on: the runs stop after the method being timed,
    and the rows then come from the runs done (each row says how many; `STOPPED` says after
    how many whole runs).

    A process forked from this one gets SIGTERM's default action back: HTA's constructor
    parses in a `multiprocessing` pool (fork start method), and the pool's `terminate()`
    ends its idle workers with SIGTERM; a worker that inherited this handler would append
    to its copy of the list and go on waiting for work, and the constructor would wait for
    it forever (issue #44: that was the hang of `cargo xtask bench --python-package`).
    """
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    # SIGTERM is blocked across the fork, so that one sent to a child before its default
    # action is back stays pending and ends it once unblocked (a pool's `terminate()` can
    # come before a slow worker has run these hooks).
    term = {signal.SIGTERM}
    mask = []

    def before():
        mask.append(signal.pthread_sigmask(signal.SIG_BLOCK, term))

    def in_parent():
        signal.pthread_sigmask(signal.SIG_SETMASK, mask.pop())

    def in_child():
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask.pop())

    os.register_at_fork(before=before, after_in_parent=in_parent, after_in_child=in_child)
    return stop


def main():
    cfg = json.loads(sys.argv[1])
    stop = stop_on_sigterm()
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    import pandas  # noqa: E402,F401  (both sides import it; imported before the clock)

    def _side(name):
        if name == "ours":
            import tracewise.hta

            return tracewise.hta.TraceAnalysis
        import hta.trace_analysis

        return hta.trace_analysis.TraceAnalysis

    sides = [(s, _side(s)) for s in cfg["sides"]]
    methods = [(label, eval("lambda ta, R, OUT: ta." + code), n) for label, code, n in cfg["methods"]]
    runs = cfg["runs"]

    work = tempfile.mkdtemp(prefix="tracewise-notebook-")
    try:
        for f in os.listdir(cfg["dir"]):
            shutil.copy(os.path.join(cfg["dir"], f), os.path.join(work, f))
        inputs = set(os.listdir(work))
        with contextlib.redirect_stdout(io.StringIO()):
            # The ranks, from the first side (ours where both run), outside the clock.
            R = sorted(sides[0][1](trace_dir=work)
                       .get_temporal_breakdown(visualize=False)["rank"].tolist())
        times = {(s, m): [] for s, _ in sides for m in ["__init__"] + [l for l, _, _ in methods]}
        raised = {}
        load0 = os.getloadavg()
        done = 0
        for run in range(runs):
            if stop:
                break
            took = {}
            for side, cls in (sides if run % 2 == 0 else sides[::-1]):
                with contextlib.redirect_stdout(io.StringIO()):
                    s = time.perf_counter()
                    ta = cls(trace_dir=work)
                    c = time.perf_counter() - s
                    times[(side, "__init__")].append(c)
                    took[side] = c
                    for label, f, n in methods:
                        if label in raised or (n and run >= n) or stop:
                            continue
                        out = tempfile.mkdtemp(prefix="tracewise-notebook-out-")
                        s = time.perf_counter()
                        try:
                            f(ta, R, out)
                            t = time.perf_counter() - s
                            times[(side, label)].append(c + t)
                            took[side] += t
                        except Exception as e:  # a method that raises here gets a row saying so
                            why = f"{side}: {type(e).__name__}: {e}"
                            raised[label] = why[:160].replace("\n", " ")
                        finally:
                            shutil.rmtree(out, ignore_errors=True)
                            for extra in set(os.listdir(work)) - inputs:
                                p = os.path.join(work, extra)
                                shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
                del ta
            done += 0 if stop else 1
            print(f"run {run + 1}/{runs}: " + ", ".join(f"{s} {t:.1f} s" for s, t in took.items())
                  + f" (load {os.getloadavg()[0]:.1f})", file=sys.stderr, flush=True)
        load1 = os.getloadavg()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print("LOAD", *load0, *load1)
    if done < runs:
        print("STOPPED", done, runs)
    for m, why in raised.items():
        print("RAISED", m, why)

    def quartiles(v):
        return statistics.quantiles(v, n=4, method="inclusive") if len(v) > 1 else [v[0]] * 3

    for m in ["__init__"] + [l for l, _, _ in methods if l not in raised]:
        per_side = [times[(s, m)] for s, _ in sides]
        if min(len(v) for v in per_side) == 0:
            continue
        if len(per_side) == 2:
            # A run stopped between the sides: the runs both sides finished.
            o, t = (v[: min(len(per_side[0]), len(per_side[1]))] for v in per_side)
            r = [b / a for a, b in zip(o, t)]
            print("ROW", m, len(o), *quartiles(o), *quartiles(t), *quartiles(r))
        else:
            print("ROW", m, len(per_side[0]), *quartiles(per_side[0]))


if __name__ == "__main__":
    main()
