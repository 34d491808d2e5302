"""Blocks built alike, the runs they repeat in, and those runs folded (what a picture draws once as ``×N``).

In: a block's members and the arrows between them, each node labelled by what it is. Out: a
Weisfeiler–Lehman hash of the block's graph (:func:`structure_hash`, :func:`graph_hash`): equal
for blocks of the same ops wired the same way; and, over the hashes of neighbouring blocks, the
runs of equal ones (:func:`repeats`) or of equal groups of a few (:func:`periodic`: a
transformer layer's attention block then MLP block). In a tree: :func:`fold_repeats` puts
neighbouring children of the same structure (ResNet's ``conv3_block2`` … ``conv3_block4``, a
transformer's layers) under one ``repeat`` node; :func:`layer_runs` finds the layers of several
blocks each that :mod:`.structure` wraps before the waists would cut them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence

from .blocks import MIN_BLOCK
from .nodes import TreeNode, adjacency, child_edges, rekey

__all__ = ["child_hashes", "fold_repeats", "graph_hash", "group_periods", "layer_runs", "periodic", "probe", "repeats",
           "structure_hash"]

#: How many answers :func:`structure_hash` remembers (then it starts over).
_KEPT = 4096


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

#: Nodes that fold into a repeat when their neighbours are built the same way: blocks found by
#: structure, and named ones (ResNet's ``conv3_block2_*`` group, a transformer's ``block_3``).
#: A repeat costs one node closed and opens like any node, so :func:`~hloviz.render.cut.cut.fit`
#: leaves it closed only where its copies would not fit.
_FOLDED = frozenset({"block", "scope", "group"})


# --- folding them in a tree --------------------------------------------------------------


def fold_repeats(root: TreeNode, edges: Sequence[tuple[str, str]], label: Mapping[str, str],
                 succ: Mapping[str, list[str]] | None = None, flow: Mapping[str, list[str]] | None = None) -> None:
    """Put runs of two or more neighbouring children with the same structure under a
    ``repeat`` node (children must already be in their final order). ``succ``: as
    :func:`~.structure.split_by_structure` takes it; ``flow``: a training step's forward arrows
    alone, which say the order of copies that feed one another both ways."""
    stack = [root]
    hashes: dict[str, str | None] = {}
    succ = succ if succ is not None else adjacency(edges)
    while stack:
        node = stack.pop()
        if node.sealed:
            continue
        kids = node.children
        if len(kids) >= 2 and node.kind != "repeat":  # a repeat's children are its copies
            hs = child_hashes(kids, succ, label, hashes)
            if all(h is None for h in hs):  # nothing here can fold (a block of loose ops)
                stack.extend(c for c in kids if not c.sealed)
                continue
            found = repeats(hs)
            periods = periodic(hs)
            # a layer of two blocks (attention, MLP) repeated beats a pair of equal neighbours
            if sum(p * c for _s, p, c in periods) > sum(c for _s, c in found) and group_periods(node, periods):
                hs = child_hashes(node.children, succ, label, hashes)
                found = repeats(hs)
            if found:
                feeds = set(child_edges(node, succ))
                found = _chained(node, found, feeds)
                _fold(node, found, feeds, (lambda n=node: set(child_edges(n, flow))) if flow is not None else None)
        stack.extend(c for c in node.children if not c.sealed)


#: How far apart two children may be and still be compared (a period of up to three blocks).
_REACH = 3
#: The longest layer :func:`layer_runs` looks for, in blocks.
_LAYER_BLOCKS = 6


def layer_runs(kids: list[TreeNode], succ: Mapping[str, list[str]],
               label: Mapping[str, str]) -> list[tuple[int, int, int]]:
    """Runs ``(start, period, count)`` of a layer of two to :data:`_LAYER_BLOCKS` blocks that
    repeats three or more times along a forward pass (``kids`` in its order). A Keras functional
    transformer's layers are flat siblings (``attention_2``, ``norm_a_2``, ``ffn_in_2``,
    ``ffn_out_2``, ``norm_b_2``), each layer norm a cut of the forward pass of its own, so a
    layer is two to four blocks, and nothing in the names groups them: its encoder was drawn
    as two runs of layers cut at waists anywhere. :mod:`.structure` wraps each copy in a block
    (:func:`group_periods`), which :func:`fold_repeats` folds into one ``×N``.

    The copies end where the run of layers ends (what follows the last layer, the head, is
    built otherwise): where the first layer is bound up with what comes before it (the
    embedding feeds its attention and its residual add), the copies that fit from the start
    were each the feed-forward half of one layer with the attention half of the next."""
    hs = child_hashes(kids, succ, label, {}, reach=_LAYER_BLOCKS)
    runs = periodic(hs, periods=range(2, _LAYER_BLOCKS + 1))
    out = []
    for k, (start, period, count) in enumerate(runs):
        limit = runs[k + 1][0] if k + 1 < len(runs) else len(hs)
        while start + 1 + period * count <= limit and _repeats_from(hs, start + 1, period, count):
            start += 1
        out.append((start, period, count))
    return out


def _repeats_from(hashes: Sequence[str | None], start: int, period: int, count: int) -> bool:
    """Whether the ``period`` hashes from ``start`` (none of them None) repeat ``count`` times."""
    first = hashes[start:start + period]
    return None not in first and all(
        hashes[start + c * period:start + (c + 1) * period] == first for c in range(1, count))


def probe(kids: list[TreeNode], members: list[int]) -> TreeNode:
    """The child ``members`` would make (a block around them; a lone member itself), its
    children left where they are: for :func:`layer_runs` to hash before anything moves."""
    if len(members) < MIN_BLOCK:
        return kids[members[0]]
    return TreeNode(f"?{members[0]}", "block", "", children=[kids[i] for i in members])


def child_hashes(kids: list[TreeNode], succ: Mapping[str, list[str]], label: Mapping[str, str],
            memo: dict[str, str | None], *, reach: int = _REACH) -> list[str | None]:
    """:func:`_hash` of each child that has a child of the same size and kind within
    ``reach`` of it; None for the rest, which cannot repeat (a big module's phases and
    its one decoder are not hashed leaf by leaf at every level above them)."""
    sig = [(k.kind, k.size) for k in kids]
    out: list[str | None] = []
    for i, k in enumerate(kids):
        if k.kind not in _FOLDED:  # a leaf or computation: never hashed (skipped before the neighbours are read)
            out.append(None)
            continue
        near = sig[max(0, i - reach):i] + sig[i + 1:i + 1 + reach]
        out.append(_hash(k, succ, label, memo) if sig[i] in near else None)
    return out


def _chained(node: TreeNode, found: list[tuple[int, int]], feeds: set[tuple[int, int]]) -> list[tuple[int, int]]:
    """The runs of ``found`` cut where a named copy does not feed the next (``feeds``: the
    child index pairs an arrow joins): named layers fold only as a sequence (ResNet's
    ``conv3_block2`` → ``conv3_block3``), never as parallel branches built alike (a
    bottleneck's shortcut convolution beside its first one; ``query``, ``key`` and
    ``value``). Blocks found by structure fold either way (an optimizer's per-parameter
    updates)."""
    kids = node.children
    if all(kids[start].kind == "block" for start, _n in found):
        return found
    out = []
    for start, count in found:
        if kids[start].kind == "block":
            out.append((start, count))
            continue
        i = start
        while i < start + count:
            j = i + 1
            while j < start + count and (j - 1, j) in feeds:
                j += 1
            if j - i >= 2:
                out.append((i, j - i))
            i = j
    return out


def _hash(node: TreeNode, succ: Mapping[str, list[str]], label: Mapping[str, str],
          memo: dict[str, str | None]) -> str | None:
    """The structure hash of the leaves below ``node`` (None for a leaf, a computation, or a
    node of fewer than :data:`MIN_BLOCK` leaves: those are not folded)."""
    if node.kind not in _FOLDED:
        # a run is a slice of a list, a computation XLA's own
        return None
    if node.key in memo:
        return memo[node.key]
    leaves = []
    stack = list(node.children)
    while stack:
        n = stack.pop()
        if n.kind == "leaf":
            leaves.append(n.name)
        else:
            stack.extend(n.children)
    if len(leaves) < MIN_BLOCK:
        memo[node.key] = None
        return None
    index = {name: i for i, name in enumerate(sorted(leaves, key=_leaf_order))}
    inner = tuple((index[a], index[b]) for a in index for b in succ.get(a, ()) if b in index)
    got = memo[node.key] = graph_hash(tuple(label.get(name, "") for name in index), inner)
    return got


def _leaf_order(name: str) -> tuple[int, str]:
    digits = name[1:]
    return (int(digits), name) if digits.isdigit() else (0, name)


def group_periods(node: TreeNode, found: list[tuple[int, int, int]]) -> bool:
    """Wrap each period of a periodic run of blocks (a layer's attention then MLP) in a block
    of its own, named after its last member, so the periods can fold as repeats."""
    if not found:
        return False
    kids = node.children
    starts = {start: (p, count) for start, p, count in found}
    out: list[TreeNode] = []
    i = 0
    while i < len(kids):
        if i not in starts:
            out.append(kids[i])
            i += 1
            continue
        p, count = starts[i]
        for c in range(count):
            members = kids[i + c * p:i + (c + 1) * p]
            last = members[-1]
            tail = last.key.rsplit("/", 1)[-1]
            key = f"{node.key}/b:p{tail}" if node.key else f"b:p{tail}"
            name = last.label or last.name
            block = TreeNode(key, "block", name, node.path, name, node, depth=node.depth, order=members[0].order)
            for m in members:
                m.parent = block
                block.children.append(m)
            rekey(block)
            out.append(block)
        i += p * count
    node.children = out
    return True


def _fold(node: TreeNode, found: list[tuple[int, int]], feeds: set[tuple[int, int]],
          forward_feeds: Callable[[], set[tuple[int, int]]] | None = None) -> None:
    """Put each run of ``found`` under a repeat node; ``feeds`` (child index pairs) says
    whether each copy feeds the next (a chain of layers) or not (parallel updates), and
    ``forward_feeds`` (the same along the forward pass alone, asked for where needed), where
    copies feed one another both ways, which runs first."""
    forward: set[tuple[int, int]] | None = None
    kids = node.children
    out: list[TreeNode] = []
    i = 0
    runs = dict(found)
    while i < len(kids):
        count = runs.get(i)
        if count is None:
            out.append(kids[i])
            i += 1
            continue
        members = kids[i:i + count]
        chained = all((j, j + 1) in feeds for j in range(i, i + count - 1))
        back = count > 1 and all((j + 1, j) in feeds for j in range(i, i + count - 1))
        if back and chained and forward_feeds is not None:
            forward = forward_feeds() if forward is None else forward
            # both ways (a training step's layers: activations forward, gradients back): the
            # forward pass says which runs first (an unseen plain-JAX ResNet's optimized
            # ``block0`` and ``block1``, in text order the other way round, were titled
            # ``block1 ×2 (block1 … block0)`` above ``block0`` drawn first)
            back = all((j + 1, j) in forward for j in range(i, i + count - 1)) and not all(
                (j, j + 1) in forward for j in range(i, i + count - 1))
            chained = not back
        if not chained and back:
            # copies that feed one another against text order (a JAX step's forward layers,
            # ordered by their last use: the first layer's activations are read last, by the
            # backward pass) stand in the order they run
            members.reverse()
            chained = True
        first, last = members[0], members[-1]
        tail = kids[i].key.rsplit("/", 1)[-1]
        key = f"{node.key}/x:{tail}" if node.key else f"x:{tail}"
        name = f"{first.label or first.name} … {last.label or last.name}"
        rep = TreeNode(key, "repeat", name, node.path, f"{first.label or first.name} ×{count}", node,
                       depth=node.depth, order=kids[i].order, parallel=not chained)
        for m in members:
            m.parent = rep
            rep.children.append(m)
        rekey(rep)
        out.append(rep)
        i += count
    node.children = out
