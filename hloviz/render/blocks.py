"""Blocks found by structure, for models whose names do not carry it.

InceptionV3 names its layers ``conv2d_12`` and ``batch_normalization_12``; a JAX step written
without ``jax.named_scope`` has no scopes at all. Their structure is still in the graph:

* **cut vertices** — the nodes every path from the input to the output passes through (each
  ``mixedN`` concatenation of InceptionV3, each residual add of ResNet, each concatenation of a
  DenseNet layer) bound blocks. They are the main input's post-dominators: one dominator
  computation on the reversed graph (:func:`networkx.immediate_dominators`) gives every node's
  nearest one, and a node belongs to the block its nearest cut closes. A block is named after
  its exit, as Keras names ``mixed3`` after the layer that ends it.
* **separate components** — an optimizer's per-parameter updates do not touch each other: each
  weakly connected component is a block.
* **the dominator tree from the inputs** — where no cut exists (the branches inside an
  Inception block; a training step, whose saved activations skip every cut), the nodes a node
  dominates form its block (each branch under its first op).

:func:`find_blocks` tries them in that order. :func:`repeats` finds runs of neighbouring blocks
with the same structure (a Weisfeiler–Lehman hash of each block's graph, nodes labelled by what
they are), which a picture draws once as ``×N``.

Everything here works on small integers: nodes are ``0 … n-1`` in text order, edges pairs of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["Blocks", "find_blocks", "repeats", "structure_hash"]

#: A block needs at least this many members: smaller ones stay as they are.
MIN_BLOCK = 2


@dataclass(frozen=True)
class Blocks:
    """A partition of nodes ``0 … n-1`` into ``groups`` (each in text order; a singleton is a
    node left as it is), in the order they run; ``exit`` is each group's last node by text
    order, which names it; ``how`` says which rule found them (``cuts``, ``components``,
    ``dominators``)."""

    groups: list[list[int]]
    how: str

    @property
    def exits(self) -> list[int]:
        return [max(g) for g in self.groups]


def find_blocks(n: int, edges: Sequence[tuple[int, int]]) -> Blocks | None:
    """Blocks of the DAG of ``n`` nodes (in text order) and ``edges``; None when no rule finds
    a block of :data:`MIN_BLOCK` or more nodes that is smaller than the whole."""
    if n < 2 * MIN_BLOCK:
        return None
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from((a, b) for a, b in edges if a != b)
    for rule, how in ((_components, "components"), (_cuts, "cuts"), (_dominated, "dominators")):
        seg = rule(g, n)
        if seg is not None:
            groups = _groups(seg, n)
            if _useful(groups, n):
                return Blocks(groups, how)
    return None


def _useful(groups: list[list[int]], n: int) -> bool:
    """Two or more blocks of several nodes: one big block and stragglers says nothing."""
    return sum(1 for gr in groups if MIN_BLOCK <= len(gr) < n) >= 2


def _groups(seg: list[int], n: int) -> list[list[int]]:
    """Nodes with the same segment number, segments ordered by their first node."""
    by: dict[int, list[int]] = {}
    for v in range(n):
        by.setdefault(seg[v], []).append(v)
    return sorted(by.values(), key=lambda gr: gr[0])


def _components(g, n: int) -> list[int] | None:
    import networkx as nx

    comps = list(nx.weakly_connected_components(g))
    if len(comps) < 2:
        return None
    seg = [0] * n
    for i, comp in enumerate(comps):
        for v in comp:
            seg[v] = i
    return seg


def _cuts(g, n: int) -> list[int] | None:
    """Segment numbers from the main input's post-dominators (None when it has none)."""
    import networkx as nx

    sink = n
    rev = g.reverse(copy=True)
    rev.add_node(sink)
    rev.add_edges_from((sink, v) for v in range(n) if g.out_degree(v) == 0)
    ipdom = nx.immediate_dominators(rev, sink)
    depth = _depths(ipdom, sink)
    sources = [v for v in range(n) if g.in_degree(v) == 0 and v in depth]
    if not sources:
        return None
    main = max(sources, key=lambda v: (depth[v], -v))
    chain = []
    v = ipdom[main]
    while v != sink:
        chain.append(v)
        v = ipdom[v]
    if not chain:
        return None
    index = {c: k for k, c in enumerate(chain)}
    nearest = _nearest(ipdom, sink, index)
    seg = [-1] * n
    for v in range(n):
        k = nearest.get(v)
        if k is not None:
            seg[v] = k
    _place_rest(g, seg, n)
    return seg


def _depths(idom: dict[int, int], root: int) -> dict[int, int]:
    """Depth of each node in the dominator tree ``idom`` (root 0), without recursion."""
    depth = {root: 0}
    for v in idom:
        path = []
        while v not in depth:
            path.append(v)
            v = idom[v]
        d = depth[v]
        for p in reversed(path):
            d += 1
            depth[p] = d
    return depth


def _nearest(idom: dict[int, int], root: int, marked: dict[int, int]) -> dict[int, int]:
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


def _place_rest(g, seg: list[int], n: int) -> None:
    """Nodes no cut post-dominates (side outputs) join their first operand's segment, else
    their first user's, else the last segment."""
    last = max(seg, default=0)
    for v in range(n):
        if seg[v] >= 0:
            continue
        preds = sorted(p for p in g.predecessors(v) if seg[p] >= 0)
        if preds:
            seg[v] = seg[preds[0]]
            continue
        succs = sorted(s for s in g.successors(v) if seg[s] >= 0)
        seg[v] = seg[succs[0]] if succs else last


def _dominated(g, n: int) -> list[int] | None:
    """Segments from the dominator tree from the inputs: each child of the virtual input with
    the nodes it dominates; nodes only the virtual input dominates stay on their own."""
    import networkx as nx

    source = n
    h = g.copy()
    h.add_node(source)
    h.add_edges_from((source, v) for v in range(n) if g.in_degree(v) == 0)
    idom = nx.immediate_dominators(h, source)
    seg = list(range(n))
    tops = {v for v, d in idom.items() if d == source and v != source}
    top_of: dict[int, int] = {}
    for v in idom:
        if v == source:
            continue
        path = []
        while v not in tops and v not in top_of:
            path.append(v)
            v = idom[v]
        t = top_of.get(v, v)
        top_of[v] = t
        for p in path:
            top_of[p] = t
    for v, t in top_of.items():
        seg[v] = t
    return seg


def structure_hash(members: Sequence[int], edges: Sequence[tuple[int, int]], label: Callable[[int], str]) -> str:
    """A Weisfeiler–Lehman hash of the graph ``members`` induce on ``edges``, nodes labelled by
    ``label``: equal for blocks built the same way (the same ops wired the same way)."""
    import networkx as nx

    inside = set(members)
    g = nx.DiGraph()
    for m in members:
        g.add_node(m, label=label(m))
    g.add_edges_from((a, b) for a, b in edges if a in inside and b in inside and a != b)
    return nx.weisfeiler_lehman_graph_hash(g, node_attr="label", iterations=3)


def repeats(hashes: Sequence[str | None]) -> list[tuple[int, int]]:
    """Runs ``(start, count)`` of two or more neighbours with the same hash (None never repeats)."""
    out = []
    i = 0
    while i < len(hashes):
        j = i + 1
        while j < len(hashes) and hashes[i] is not None and hashes[j] == hashes[i]:
            j += 1
        if j - i >= 2:
            out.append((i, j - i))
        i = j
    return out
