"""Blocks found by structure, for models whose names do not carry it.

InceptionV3 names its layers ``conv2d_12`` and ``batch_normalization_12``; a JAX step written
without ``jax.named_scope`` has no scopes at all. Their structure is still in the graph:

* **cut vertices** — the nodes every path from the input to the output passes through (each
  ``mixedN`` concatenation of InceptionV3, each residual add of ResNet, each concatenation of a
  DenseNet layer) bound blocks. They are the main input's post-dominators: one dominator
  computation on the reversed graph (:func:`~.dominators.dominators`) gives every node's
  nearest one, and a node belongs to the block its nearest cut closes. A block is named after
  its exit, as Keras names ``mixed3`` after the layer that ends it.
* **separate components** — an optimizer's per-parameter updates do not touch each other: each
  weakly connected component is a block.
* **a spine read forwards** — a training step's forward pass saves activations for the
  backward pass, so no node is on every way out; the nodes that dominate the deepest node
  reachable from the main input (in a whole forward or backward pass: its end) still are its
  spine (each residual add); updates that never touch it go by components;
* **the dominator tree from the inputs** — where no cut exists (the branches inside an
  Inception block; a training step, whose saved activations skip every cut), the nodes a node
  dominates form its block (each branch under its first op).

:func:`find_blocks` tries them in that order (the dominators come from :mod:`.dominators`).
:func:`~.repeat_runs.repeats` finds runs of neighbouring blocks with the same structure (a
Weisfeiler–Lehman hash of each block's graph, nodes labelled by what they are), which a picture
draws once as ``×N``.

Everything here works on small integers: nodes are ``0 … n-1`` in text order, edges pairs of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .dominators import Graph, depths, dominators, nearest_marked, topological

__all__ = ["MIN_BLOCK", "Blocks", "find_blocks"]

#: A block needs at least this many members: smaller ones stay as they are.
MIN_BLOCK = 2

#: How many answers :func:`find_blocks` remembers (then it starts over).
_KEPT = 4096


@dataclass(frozen=True)
class Blocks:
    """A partition of nodes ``0 … n-1`` into ``groups`` (each in text order; a singleton is a
    node left as it is), in the order they run; ``exit`` is each group's last node by text
    order, which names it; ``how`` says which rule found them (``cuts``, ``components``,
    ``spine``, ``dominators``)."""

    groups: list[list[int]]
    how: str

    @property
    def exits(self) -> list[int]:
        return [max(g) for g in self.groups]


def find_blocks(n: int, edges: Sequence[tuple[int, int]], *, whole_pass: bool = False) -> Blocks | None:
    """Blocks of the DAG of ``n`` nodes (in text order) and ``edges``; None when no rule finds
    a block of :data:`MIN_BLOCK` or more nodes that is smaller than the whole. ``whole_pass``:
    the graph is one whole pass of a training step (its forward or backward pass), whose spine
    runs to the pass's end (:func:`_end`), not only to the node deepest in the dominator tree.

    Remembered by ``n`` and ``edges`` (the answer is shared: callers read it, never change
    it): a big module's 250 layers ask the same few questions 500 times."""
    if n < 2 * MIN_BLOCK:
        return None
    key = (n, tuple(edges), whole_pass)
    if key in _BLOCKS:
        return _BLOCKS[key]
    found = _find_blocks(n, edges, whole_pass)
    if len(_BLOCKS) >= _KEPT:
        _BLOCKS.clear()
    _BLOCKS[key] = found
    return found


#: :func:`find_blocks`' answers by its inputs, at most :data:`_KEPT` of them.
_BLOCKS: dict[tuple, Blocks | None] = {}


def _find_blocks(n: int, edges: Sequence[tuple[int, int]], whole_pass: bool) -> Blocks | None:
    g = Graph(n, _without_hubs(n, edges))

    def spine(g: Graph, n: int) -> list[int] | None:
        return _cuts_and_components(g, n, whole_pass=whole_pass)

    for rule, how in ((_components, "components"), (_cuts, "cuts"), (spine, "spine"), (_dominated, "dominators")):
        seg = rule(g, n)
        if seg is not None:
            groups = _groups(seg, n)
            if _useful(groups, n):
                return Blocks(groups, how)
    return None


#: A node read by at least this many others (and far more than most) is a hub.
HUB_FLOOR = 8


def _without_hubs(n: int, edges: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """``edges`` less those leaving a hub: a scalar every layer reads (a loss scale in the
    backward pass, an optimizer's learning rate and step count) is a path around every cut
    and joins every update into one component, though it bounds nothing. A hub has an
    out-degree above ``Q3 + 4·(Q3 − Q1)`` of the nodes' out-degrees (TensorBoard's rule for
    nodes it draws aside) and at least :data:`HUB_FLOOR`."""
    unique = sorted({(a, b) for a, b in edges if a != b})
    outs = [0] * n
    for a, _b in unique:
        outs[a] += 1
    s = sorted(outs)
    q1, q3 = s[n // 4], s[(3 * n) // 4]
    limit = max(q3 + 4 * (q3 - q1), HUB_FLOOR - 1)
    return [(a, b) for a, b in unique if outs[a] <= limit]


def _useful(groups: list[list[int]], n: int) -> bool:
    """Two or more blocks of several nodes, none holding most of the nodes: one big block and
    stragglers says nothing (and splitting it again and again would cost n² on a big module)."""
    return (sum(1 for gr in groups if MIN_BLOCK <= len(gr) < n) >= 2
            and max(len(gr) for gr in groups) * 4 <= n * 3)


def _groups(seg: list[int], n: int) -> list[list[int]]:
    """Nodes with the same segment number, segments ordered by their first node."""
    by: dict[int, list[int]] = {}
    for v in range(n):
        by.setdefault(seg[v], []).append(v)
    return sorted(by.values(), key=lambda gr: gr[0])


def _components(g: Graph, n: int) -> list[int] | None:
    seg = [-1] * n
    count = 0
    for start in range(n):
        if seg[start] >= 0:
            continue
        seg[start] = count
        stack = [start]
        while stack:
            v = stack.pop()
            for w in (*g.succ[v], *g.pred[v]):
                if seg[w] < 0:
                    seg[w] = count
                    stack.append(w)
        count += 1
    return seg if count >= 2 else None


def _cuts(g: Graph, n: int) -> list[int] | None:
    """Segment numbers from the main input's post-dominators (None when it has none)."""
    sink = n
    rev = [list(p) for p in g.pred] + [[v for v in range(n) if not g.succ[v]]]
    ipdom = dominators(rev, sink)
    depth = depths(ipdom, sink)
    sources = [v for v in range(n) if not g.pred[v] and v in depth]
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
    nearest = nearest_marked(ipdom, sink, index)
    seg = [-1] * n
    for v in range(n):
        k = nearest.get(v)
        if k is not None:
            seg[v] = k
    if seg.count(-1) * 5 > n:
        return None  # the cuts are a side path's (an optimizer's separate updates): not a spine
    _place_rest(g, seg, n)
    return seg


def _cuts_and_components(g: Graph, n: int, *, whole_pass: bool = False) -> list[int] | None:
    """A spine where the post-dominators find none (a training step's forward pass: every
    activation it saves for the backward pass leaves it, so no node is on *every* way out).
    The spine is then read forwards: the nodes that dominate the deepest node reachable from
    the main input (the source with the longest path ahead of it) — each residual add —, or,
    for a ``whole_pass``, the pass's end (:func:`_end`). A node joins the block its nearest
    spine node opens (blocks end at the next one, which names them); inputs join their first user's block; the rest (separate updates) go by components."""
    height = [0] * n
    for v in reversed(topological(g, n)):
        height[v] = max((height[w] + 1 for w in g.succ[v]), default=0)
    sources = [v for v in range(n) if not g.pred[v]]
    if not sources:
        return None
    main = max(sources, key=lambda v: (height[v], -v))
    idom = dominators(g.succ, main)
    depth = depths(idom, main)
    chain = []
    v = _end(g, main, height, depth) if whole_pass else max(depth, key=lambda v: (depth[v], -v))
    while v != main:
        chain.append(v)
        v = idom[v]
    chain.reverse()
    if len(chain) < 2 * MIN_BLOCK:
        return None
    index = {c: k for k, c in enumerate(chain)}
    entry = nearest_marked(idom, main, index)
    seg = [-1] * n
    # a spine node closes the block before it; in a whole pass the first one closes a block of
    # its own with the main input (the token embedding, which XLA fuses into one op: else it
    # joins the first layer's block, and that layer no longer folds with the others)
    shift = 1 if whole_pass else 0
    for v, k in entry.items():
        seg[v] = k - 1 + shift if v in index else k + shift
    seg[main] = 0
    _inputs_to_users(g, seg, n)
    _rest_by_components(g, seg, n, base=len(chain) + 1 + shift)
    return seg


def _end(g: Graph, main: int, height: Sequence[int], depth: Mapping[int, int]) -> int:
    """Where a pass ends: the last node of the longest path from ``main``, less a last join
    that falls back more than halfway to the start (a tied embedding's two gradients summed:
    the one from the logits was ready near the start). Not the node deepest in the dominator
    tree: the softmax chain inside the last attention layer is deeper than the loss after it
    (33 against 28 steps in ``samples/jax_gpt_step.py``), and the spine would stop there, so
    the last layer and the loss fell into one block and the layer never folded with the rest."""
    path = [main]
    while True:
        ahead = [w for w in g.succ[path[-1]] if height[w] < height[path[-1]]]  # a cycle ends it
        if not ahead:
            break
        path.append(max(ahead, key=lambda w: (height[w], -w)))
    while len(path) > 1 and depth.get(path[-1], 0) * 2 < depth.get(path[-2], 0):
        path.pop()
    return path[-1]


def _inputs_to_users(g: Graph, seg: list[int], n: int) -> None:
    """Nodes outside every block that feed one (a weight and its transpose) join their first
    user's block, repeatedly, so chains of preparation follow their user."""
    changed = True
    while changed:
        changed = False
        for v in range(n - 1, -1, -1):
            if seg[v] < 0:
                users = sorted(seg[w] for w in g.succ[v] if seg[w] >= 0)
                if users:
                    seg[v] = users[0]
                    changed = True


def _rest_by_components(g: Graph, seg: list[int], n: int, *, base: int) -> None:
    inside = {v for v in range(n) if seg[v] < 0}
    for v in sorted(inside):
        if seg[v] >= 0:
            continue
        seg[v] = base
        stack = [v]
        while stack:
            u = stack.pop()
            for w in (*g.succ[u], *g.pred[u]):
                if w in inside and seg[w] < 0:
                    seg[w] = base
                    stack.append(w)
        base += 1


def _place_rest(g: Graph, seg: list[int], n: int) -> None:
    """Nodes no cut post-dominates (side outputs) join their first operand's segment, else
    their first user's, else the last segment."""
    last = max(seg, default=0)
    for v in range(n):
        if seg[v] >= 0:
            continue
        preds = sorted(p for p in g.pred[v] if seg[p] >= 0)
        if preds:
            seg[v] = seg[preds[0]]
            continue
        succs = sorted(s for s in g.succ[v] if seg[s] >= 0)
        seg[v] = seg[succs[0]] if succs else last


def _dominated(g: Graph, n: int) -> list[int] | None:
    """Segments from the dominator tree from the inputs: each child of the virtual input with
    the nodes it dominates; nodes only the virtual input dominates stay on their own."""
    source = n
    succ = [*g.succ, [v for v in range(n) if not g.pred[v]]]
    idom = dominators(succ, source)
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
