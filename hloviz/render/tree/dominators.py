"""Dominators of small integer graphs, for finding blocks by structure.

In: a graph of nodes ``0 … n-1`` (:class:`Graph`, or successor lists) and a root. Out: each
node's immediate dominator (:func:`dominators`), its depth in the dominator tree
(:func:`depths`), its nearest marked dominator (:func:`nearest_marked`), and a topological order
(:func:`topological`); and what a set of nodes of any graph leads to (:func:`reaching`). Plain
lists instead of a networkx graph: a big module's picture asks these hundreds of times
(:mod:`.blocks` is the caller).
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

__all__ = ["Graph", "depths", "dominators", "flow_order", "nearest_marked", "reaching", "topological"]


class Graph:
    """Successor and predecessor lists of nodes ``0 … n-1`` (each arrow once)."""

    def __init__(self, n: int, edges: Sequence[tuple[int, int]]) -> None:
        self.succ: list[list[int]] = [[] for _ in range(n)]
        self.pred: list[list[int]] = [[] for _ in range(n)]
        for a, b in sorted(set(edges)):
            if a != b:
                self.succ[a].append(b)
                self.pred[b].append(a)


def _meet(a: int, b: int, idom: dict[int, int], number: dict[int, int]) -> int:
    """The nearest common dominator of ``a`` and ``b`` (walking up by postorder number)."""
    while a != b:
        while number[a] < number[b]:
            a = idom[a]
        while number[b] < number[a]:
            b = idom[b]
    return a


def dominators(succ: Sequence[Sequence[int]], root: int) -> dict[int, int]:
    """Immediate dominators of the nodes reachable from ``root`` (``root`` maps to itself) in
    the graph ``succ`` (node → its successors): Cooper, Harvey and Kennedy's iteration over
    reverse postorder. Plain lists instead of a networkx graph: a big module's picture asks
    this hundreds of times."""
    post: list[int] = []
    number: dict[int, int] = {}
    stack = [(root, iter(succ[root]))]
    seen = {root}
    while stack:
        v, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            stack.pop()
            number[v] = len(post)
            post.append(v)
        elif nxt not in seen:
            seen.add(nxt)
            stack.append((nxt, iter(succ[nxt])))
    preds: dict[int, list[int]] = {v: [] for v in post}
    for v in post:
        for w in succ[v]:
            if w in preds:
                preds[w].append(v)
    idom = {root: root}
    order = list(reversed(post))
    changed = True
    while changed:
        changed = False
        for v in order:
            if v == root:
                continue
            new = -1
            for p in preds[v]:
                if p in idom:
                    new = p if new < 0 else _meet(p, new, idom, number)
            if new >= 0 and idom.get(v) != new:
                idom[v] = new
                changed = True
    return idom


def topological(g: Graph, n: int) -> list[int]:
    left = [len(p) for p in g.pred]
    ready = [v for v in range(n) if left[v] == 0]
    out = []
    while ready:
        v = ready.pop()
        out.append(v)
        for w in g.succ[v]:
            left[w] -= 1
            if left[w] == 0:
                ready.append(w)
    return out + [v for v in range(n) if left[v] > 0]  # a cycle (a quotient graph's) goes last


def flow_order(g: Graph, n: int) -> list[int] | None:
    """The nodes in the order data flows through them: each after every node it reads, ties in
    index order (a node's first appearance in the text); None where the arrows hold a cycle."""
    left = [len(p) for p in g.pred]
    ready = [v for v in range(n) if left[v] == 0]
    out = []
    while ready:
        v = heapq.heappop(ready)
        out.append(v)
        for w in g.succ[v]:
            left[w] -= 1
            if left[w] == 0:
                heapq.heappush(ready, w)
    return out if len(out) == n else None


def depths(idom: dict[int, int], root: int) -> dict[int, int]:
    """Depth of each node in the dominator tree ``idom`` (root 0), without recursion."""
    depth = {root: 0}
    for v in idom:
        if v == root:
            continue
        path = []
        while v not in depth:
            path.append(v)
            v = idom[v]
        d = depth[v]
        for p in reversed(path):
            d += 1
            depth[p] = d
    return depth


def nearest_marked(idom: dict[int, int], root: int, marked: dict[int, int]) -> dict[int, int]:
    """For every node, the value in ``marked`` of itself or its nearest marked dominator."""
    out: dict[int, int] = {}
    for v in idom:
        path = []
        while v not in out and v not in marked and v != root:
            path.append(v)
            v = idom[v]
        k = out.get(v, marked.get(v, -1))
        out[v] = k
        for p in path:
            out[p] = k
    return {v: k for v, k in out.items() if k >= 0 and v != root}


_K = TypeVar("_K", bound=Hashable)


def reaching(starts: Iterable[_K], edges: Mapping[_K, list[_K]]) -> set[_K]:
    """``starts`` and every node ``edges`` (successor lists, any keys) lead to from them."""
    stack = list(starts)
    out = set(stack)
    while stack:
        for nxt in edges.get(stack.pop(), ()):
            if nxt not in out:
                out.add(nxt)
                stack.append(nxt)
    return out
