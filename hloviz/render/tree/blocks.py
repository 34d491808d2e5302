"""Blocks found by structure, for models whose names do not carry it.

InceptionV3 names its layers ``conv2d_12`` and ``batch_normalization_12``; a JAX step written
without ``jax.named_scope`` has no scopes at all. Their structure is still in the graph:

* **cut vertices** — the nodes every path from the input to the output passes through (each
  ``mixedN`` concatenation of InceptionV3, each residual add of ResNet, each concatenation of a
  DenseNet layer) bound blocks. They are the main input's post-dominators: one dominator
  computation on the reversed graph (:func:`dominators`) gives every node's
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

:func:`find_blocks` tries them in that order. :func:`repeats` finds runs of neighbouring blocks
with the same structure (a Weisfeiler–Lehman hash of each block's graph, nodes labelled by what
they are), which a picture draws once as ``×N``.

Everything here works on small integers: nodes are ``0 … n-1`` in text order, edges pairs of them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Blocks", "find_blocks", "graph_hash", "repeats", "structure_hash"]

#: A block needs at least this many members: smaller ones stay as they are.
MIN_BLOCK = 2

#: How many answers :func:`find_blocks` and :func:`structure_hash` remember (then they start over).
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
    g = _Graph(n, _without_hubs(n, edges))

    def spine(g: _Graph, n: int) -> list[int] | None:
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


def _groups(seg: list[int], n: int) -> list[list[int]]:
    """Nodes with the same segment number, segments ordered by their first node."""
    by: dict[int, list[int]] = {}
    for v in range(n):
        by.setdefault(seg[v], []).append(v)
    return sorted(by.values(), key=lambda gr: gr[0])


class _Graph:
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


def _components(g: _Graph, n: int) -> list[int] | None:
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


def _cuts(g: _Graph, n: int) -> list[int] | None:
    """Segment numbers from the main input's post-dominators (None when it has none)."""
    sink = n
    rev = [list(p) for p in g.pred] + [[v for v in range(n) if not g.succ[v]]]
    ipdom = dominators(rev, sink)
    depth = _depths(ipdom, sink)
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
    nearest = _nearest(ipdom, sink, index)
    seg = [-1] * n
    for v in range(n):
        k = nearest.get(v)
        if k is not None:
            seg[v] = k
    if seg.count(-1) * 5 > n:
        return None  # the cuts are a side path's (an optimizer's separate updates): not a spine
    _place_rest(g, seg, n)
    return seg


def _cuts_and_components(g: _Graph, n: int, *, whole_pass: bool = False) -> list[int] | None:
    """A spine where the post-dominators find none (a training step's forward pass: every
    activation it saves for the backward pass leaves it, so no node is on *every* way out).
    The spine is then read forwards: the nodes that dominate the deepest node reachable from
    the main input (the source with the longest path ahead of it) — each residual add —, or,
    for a ``whole_pass``, the pass's end (:func:`_end`). A node joins the block its nearest
    spine node opens (blocks end at the next one, which names them); inputs join their first user's block; the rest (separate updates) go by components."""
    height = [0] * n
    for v in reversed(_topological(g, n)):
        height[v] = max((height[w] + 1 for w in g.succ[v]), default=0)
    sources = [v for v in range(n) if not g.pred[v]]
    if not sources:
        return None
    main = max(sources, key=lambda v: (height[v], -v))
    idom = dominators(g.succ, main)
    depth = _depths(idom, main)
    chain = []
    v = _end(g, main, height, depth) if whole_pass else max(depth, key=lambda v: (depth[v], -v))
    while v != main:
        chain.append(v)
        v = idom[v]
    chain.reverse()
    if len(chain) < 2 * MIN_BLOCK:
        return None
    index = {c: k for k, c in enumerate(chain)}
    entry = _nearest(idom, main, index)
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


def _end(g: _Graph, main: int, height: Sequence[int], depth: Mapping[int, int]) -> int:
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


def _topological(g: _Graph, n: int) -> list[int]:
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


def _inputs_to_users(g: _Graph, seg: list[int], n: int) -> None:
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


def _rest_by_components(g: _Graph, seg: list[int], n: int, *, base: int) -> None:
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


def _depths(idom: dict[int, int], root: int) -> dict[int, int]:
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


def _place_rest(g: _Graph, seg: list[int], n: int) -> None:
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


def _dominated(g: _Graph, n: int) -> list[int] | None:
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


def structure_hash(members: Sequence[int], edges: Sequence[tuple[int, int]], label: Callable[[int], str],
                   iterations: int = 3) -> str:
    """A Weisfeiler–Lehman hash of the graph ``members`` induce on ``edges``, nodes labelled by
    ``label``: equal for blocks built the same way (the same ops wired the same way).

    Each round relabels a node by its label and the sorted labels of its operands and of its
    users (directed, as networkx's ``weisfeiler_lehman_graph_hash`` since 3.5), compressed with
    BLAKE2b so labels stay short; the hash is the digest of the sorted final labels. Written
    out rather than built on a networkx graph: hundreds of blocks of a big module are hashed.

    Remembered by the labels and the edges between positions: a big module's repeated layers
    are the same graph hundreds of times (a 250-layer transformer's blocks are hashed once
    each, not once per layer).
    """
    index = {m: i for i, m in enumerate(members)}
    labels = tuple(label(m) for m in members)
    pairs = []
    for a, b in edges:
        ia, ib = index.get(a), index.get(b)
        if ia is not None and ib is not None and ia != ib:
            pairs.append((ia, ib))
    return graph_hash(labels, tuple(pairs), iterations)


def graph_hash(labels: tuple[str, ...], pairs: tuple[tuple[int, int], ...], iterations: int = 3) -> str:
    """:func:`structure_hash` of nodes ``0 … len(labels) - 1`` labelled ``labels`` and the arrows
    ``pairs`` between them (no arrow from a node to itself), for a caller that has them so
    already: thousands of small blocks of a big module are hashed, and the translation to
    positions is the most of it."""
    key = (labels, pairs, iterations)
    known = _HASHES.get(key)
    if known is not None:
        return known
    succ: list[list[int]] = [[] for _ in labels]
    pred: list[list[int]] = [[] for _ in labels]
    for ia, ib in pairs:
        succ[ia].append(ib)
        pred[ib].append(ia)
    cur = [_digest(text) for text in labels]
    for _ in range(iterations):
        cur = [_digest(f"{cur[i]}<{','.join(sorted(cur[p] for p in pred[i]))}>{','.join(sorted(cur[s] for s in succ[i]))}")
               for i in range(len(labels))]
    out = _digest("|".join(sorted(cur)), 16)
    if len(_HASHES) >= _KEPT:
        _HASHES.clear()
    _HASHES[key] = out
    return out


#: :func:`structure_hash`'s answers by its inputs, at most :data:`_KEPT` of them.
_HASHES: dict[tuple, str] = {}


def _digest(text: str, size: int = 8) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=size).hexdigest()


def periodic(hashes: Sequence[str | None], *, periods: Sequence[int] = (2, 3), copies: int = 3) -> list[tuple[int, int, int]]:
    """Runs ``(start, period, count)`` where a group of ``period`` neighbours repeats ``count``
    (≥ ``copies``) times — a transformer layer is an attention block then an MLP block."""
    out = []
    i = 0
    while i < len(hashes):
        best = None
        for p in periods:
            if any(h is None for h in hashes[i:i + p]):
                continue
            j = i + p
            while j + p <= len(hashes) and list(hashes[j:j + p]) == list(hashes[i:i + p]):
                j += p
            count = (j - i) // p
            if count >= copies and (best is None or count * p > best[1] * best[2]):
                best = (i, p, count)
        if best is None:
            i += 1
            continue
        out.append(best)
        i = best[0] + best[1] * best[2]
    return out


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
