"""HTA 0.5.0's call stacks of a rank (``hta.common.trace_call_graph``), rebuilt from the
events the native trace holds, for ``get_frequent_cuda_kernel_sequences`` and the CUPTI
counter analysis."""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import numpy as np


class _CallStacks:
    """HTA 0.5.0's call stacks of one rank (``hta.common.trace_call_graph``): each
    thread's host events nested by their ends in time order (at one time: the zero-length
    events inside the event that closes there, else inside the one that opens there; then
    closes, shorter first; then opens, longer first), every GPU event with a stream above
    0 under the host event that launched it, and, when the rank has one thread with
    ``ProfilerStep#`` events (main) and one other with ``autograd::`` events (backward),
    the backward thread's top-level events under the main thread's ``## backward ##``
    annotation (else ``ProfilerStep#``) that spans them. Built from the events the native
    trace already holds."""

    def __init__(self, host: List[tuple], gpu: List[tuple]) -> None:
        self.name: Dict[int, str] = {}
        self.start: Dict[int, float] = {}
        self.dur: Dict[int, float] = {}
        self.parent: Dict[int, Optional[int]] = {}
        self.children: Dict[int, List[int]] = {}
        self.gpu: Set[int] = set()
        threads: Dict[str, List[Tuple[int, float, float]]] = {}
        for name, _, thread, start, end, index in host:
            self.name[index] = name
            self.start[index] = start
            self.dur[index] = end - start
            threads.setdefault(thread, []).append((index, start, end))
        top: Dict[str, List[int]] = {}
        for thread, evs in threads.items():
            top[thread] = self._nest(evs)
        self._link_backward(threads, top)
        for name, stream, start, end, _, index, _, launch in gpu:
            self.name[index] = name
            self.start[index] = start
            self.dur[index] = end - start
            self.gpu.add(index)
            # HTA links a GPU event to its launch when its stream is above 0 and the
            # launch's index is (``get_cpu_gpu_correlation``).
            if stream > 0 and launch > 0 and launch in self.parent and index not in self.parent:
                self.parent[index] = launch
                self.children.setdefault(launch, []).append(index)
        # Depth from the tops (0), then the activities beneath each event (count, summed
        # duration), children first.
        self.depth: Dict[int, int] = {}
        todo = [(i, 0) for i, p in self.parent.items() if p is None]
        while todo:
            i, d = todo.pop()
            self.depth[i] = d
            todo.extend((c, d + 1) for c in self.children.get(i, []))
        self.num_kernels: Dict[int, int] = {}
        self.kernel_dur: Dict[int, float] = {}
        for index in sorted(self.depth, key=lambda i: -self.depth[i]):
            if index in self.gpu:
                self.num_kernels[index], self.kernel_dur[index] = 1, self.dur[index]
                continue
            kids = self.children.get(index, [])
            self.num_kernels[index] = sum(self.num_kernels[c] for c in kids)
            self.kernel_dur[index] = sum(self.kernel_dur[c] for c in kids)

    def _nest(self, evs: List[Tuple[int, float, float]]) -> List[int]:
        """Nests one thread's events; returns its top-level events."""
        tops: List[int] = []
        stack: List[int] = []
        for index, is_open in _stack_order(evs):
            if not is_open:
                if stack:
                    stack.pop()
                continue
            if index not in self.parent:
                parent = stack[-1] if stack else None
                self.parent[index] = parent
                if parent is None:
                    tops.append(index)
                else:
                    self.children.setdefault(parent, []).append(index)
            stack.append(index)
        return tops

    def _link_backward(self, threads: Dict[str, List[Tuple[int, float, float]]], top: Dict[str, List[int]]) -> None:
        """HTA's ``_connect_stacks``: the backward thread's top-level events move under
        the main thread's backward annotations that span them."""

        def label(evs: List[Tuple[int, float, float]]) -> str:
            names = [self.name[i] for i, _, _ in evs]
            if any(n.startswith("ProfilerStep#") for n in names):
                return "main"
            if any("autograd::" in n for n in names):
                return "bwd"
            return ""

        linked = sorted((label(evs), thread) for thread, evs in threads.items() if label(evs))
        if len(linked) != 2:
            return
        bwd, main = linked[0][1], linked[1][1]
        parents: List[Tuple[int, float, float]] = []
        for prefix in ("## backward ##", "ProfilerStep#"):
            parents = [e for e in threads[main] if self.name[e[0]].startswith(prefix)]
            if parents:
                break
        for index, start, end in parents:
            moved = [c for c in top[bwd] if self.start[c] >= start and self.start[c] + self.dur[c] <= end]
            for c in moved:
                self.parent[c] = index
                self.children.setdefault(index, []).append(c)
            top[bwd] = [c for c in top[bwd] if c not in set(moved)]

    def roots(self, operator_name: str, min_len: int) -> List[int]:
        """The shallowest events whose name contains ``operator_name`` with at least
        ``min_len`` activities beneath (an event outside every stack has depth −1)."""
        found = [i for i, n in self.name.items() if operator_name in n]
        if not found:
            return []
        depth = {i: self.depth.get(i, -1) for i in found}
        least = min(depth.values())
        return [i for i in sorted(found) if depth[i] == least and self.num_kernels.get(i, 0) >= min_len]

    def descendants(self, index: int) -> List[int]:
        """The event and every event beneath it (an activity: itself)."""
        out, todo = [], [index]
        while todo:
            i = todo.pop()
            out.append(i)
            todo.extend(self.children.get(i, []))
        return out


def _stack_order(evs: List[Tuple[int, float, float]]) -> List[Tuple[int, bool]]:
    """The ends of one thread's events, (index, is_open), in HTA's call-stack order: by
    time; at one time, where some event of non-zero length closes, the zero-length events
    (opens by index, then closes by index descending), the closes (shorter first, then
    index descending), then the opens (longer first, then index); else the opens, then the
    zero-length events. One numpy sort (a Python sort per time was most of the time of
    ``get_frequent_cuda_kernel_sequences`` on large traces)."""
    if not evs:
        return []
    index = np.fromiter((i for i, _, _ in evs), dtype=np.int64, count=len(evs))
    start = np.fromiter((s for _, s, _ in evs), dtype=np.float64, count=len(evs))
    end = np.fromiter((e for _, _, e in evs), dtype=np.float64, count=len(evs))
    n = len(evs)
    t = np.concatenate([start, end])
    ix = np.concatenate([index, index])
    d = np.concatenate([end - start, end - start])
    is_open = np.concatenate([np.ones(n, dtype=bool), np.zeros(n, dtype=bool)])
    zero = d == 0
    close = ~zero & ~is_open
    # Whether some non-zero-length event closes at each end's time.
    by_time = np.argsort(t, kind="stable")
    ts = t[by_time]
    first = np.concatenate([[True], ts[1:] != ts[:-1]])
    group = np.cumsum(first) - 1
    has_close = np.zeros(group[-1] + 1, dtype=bool)
    np.logical_or.at(has_close, group, close[by_time])
    closes_here = np.empty(2 * n, dtype=bool)
    closes_here[by_time] = has_close[group]
    # The class of each end within its time, then the keys within the class.
    klass = np.where(
        closes_here,
        np.select([zero & is_open, zero, close], [0, 1, 2], 3),
        np.select([~zero & is_open, zero & is_open], [0, 1], 2),
    )
    k3 = np.where(zero, 0.0, np.where(is_open, -d, d))
    k4 = np.where(is_open, ix, -ix)
    order = np.lexsort((k4, k3, klass, t))
    return list(zip(ix[order].tolist(), is_open[order].tolist()))
