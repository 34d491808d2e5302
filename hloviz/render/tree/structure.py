"""The tree's structure where names do not give it: blocks and repeats in a :mod:`~hloviz.render.tree.tree` tree.

:func:`split_by_structure` gives a crowded node (more children than a picture can name) a level
of ``block`` nodes found on the graph of its children (:func:`hloviz.render.tree.blocks.find_blocks`),
unless the children's own names already group them the same way (ResNet's ``conv2_block1_*``
is exactly its bottleneck; InceptionV3's ``conv2d_*`` spans all eleven blocks and is not).

:func:`fold_repeats` puts neighbouring children of the same structure (ResNet's
``conv3_block2`` … ``conv3_block4``, a transformer's layers) under one ``repeat`` node, drawn once
as ``×N`` when closed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .blocks import MIN_BLOCK, find_blocks
from .dominators import Graph, flow_order
from .nodes import TreeNode, leaf_owners, rekey
from .prefix_groups import names_agree
from .repeat_runs import graph_hash, periodic, repeats, structure_hash

__all__ = ["fold_repeats", "split_by_structure"]

#: The passes of a step without user scopes (``phases.PHASE_SCOPES`` less the optimizer): each
#: is one whole pass, whose spine runs to its end.
_PASSES = ("(forward)", "(backward)")
#: Nodes whose children never get blocks: computations keep XLA's own structure.
_KEEP = frozenset({"fusion", "body", "leaf"})
#: Nodes that fold into a repeat when their neighbours are built the same way: blocks found by
#: structure, and named ones (ResNet's ``conv3_block2_*`` group, a transformer's ``block_3``).
#: A repeat costs one node closed and opens like any node, so :func:`~hloviz.render.cut.cut.fit`
#: leaves it closed only where its copies would not fit.
_FOLDED = frozenset({"block", "scope", "group"})


def _adjacency(edges: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    succ: dict[str, list[str]] = {}
    for a, b in edges:
        if a != b:
            succ.setdefault(a, []).append(b)
    return succ


def _child_edges(node: TreeNode, succ: Mapping[str, list[str]]) -> list[tuple[int, int]]:
    """The arrows between ``node``'s children (the leaf arrows seen through them)."""
    owner = leaf_owners(node.children)
    get = owner.get
    # one comprehension (a leaf outside ``node`` reads as its own owner, so it drops out with
    # the arrows inside one child): the root of a big module has 37k leaves
    return sorted({(i, j) for leaf, i in owner.items() for nxt in succ.get(leaf, ()) if (j := get(nxt, i)) != i})


def _crowded(node: TreeNode, group_at: int, run_at: int) -> bool:
    scopes = sum(1 for c in node.children if not c.is_leaf)
    leaves = len(node.children) - scopes
    return scopes > group_at or leaves > run_at


def split_by_structure(root: TreeNode, edges: Sequence[tuple[str, str]], *, group_at: int, run_at: int,
                       names: Mapping[str, str], label: Mapping[str, str] | None = None,
                       succ: Mapping[str, list[str]] | None = None,
                       forward: Mapping[str, list[str]] | None = None) -> None:
    """Give every crowded node of the tree below ``root`` a level of blocks (recursively: a
    block that is still crowded is split again). ``succ``: ``edges`` as leaf → the leaves it
    feeds, self-arrows left out, where the caller has it (one map of 78k arrows made once).
    ``forward``: in a training step, the arrows of its forward pass alone, which cut a node
    holding forward work (:func:`_split`)."""
    succ = succ if succ is not None else _adjacency(edges)
    stack = [root]
    while stack:
        node = stack.pop()
        if node.kind not in _KEEP and _crowded(node, group_at, run_at) and _split(node, succ, names, group_at,
                                                                                 label or {}, forward):
            node.structured = True
        stack.extend(c for c in node.children if c.kind not in _KEEP)


def _split(node: TreeNode, succ: Mapping[str, list[str]], names: Mapping[str, str], group_at: int,
           label: Mapping[str, str], forward: Mapping[str, list[str]] | None = None) -> bool:
    """Blocks for ``node``'s children (along the ``forward`` pass's arrows where it has any
    between them); whether any were made."""
    kids = list(node.children)
    flow = _child_edges(node, forward) if forward is not None else []
    # a training step's layers stand in the order its forward pass runs through them: text
    # order is each one's first instruction, and TensorFlow writes a layer's constants (a
    # hard-swish's 3.0, a dropout's rate) at the top of the module
    order = flow_order(Graph(len(kids), flow), len(kids)) if flow else None
    edges = flow or _child_edges(node, succ)
    if order is not None and order != list(range(len(kids))):
        kids = [kids[i] for i in order]
        at = {old: new for new, old in enumerate(order)}
        edges = sorted((at[a], at[b]) for a, b in edges)
    found = find_blocks(len(kids), edges, whole_pass=node.kind == "scope" and node.name in _PASSES)
    if found is None:
        return False
    if found.how != "dominators" and names_agree(kids, found.groups, MIN_BLOCK):
        if order is not None:  # the names group them (group_by_prefix), in the forward pass's order
            node.children, node.in_flow = kids, True
        return False
    keep_scopes = sum(1 for k in kids if not k.is_leaf) <= group_at
    if not keep_scopes and found.how != "cuts" and node.kind != "block":
        return False  # many named scopes without a spine (an optimizer's updates): names group them
    if keep_scopes and (not _whole_function(node) or any(not k.is_leaf for k in kids)
                        or _drawn_after(kids, found.groups, edges, label, over=len(kids) // 3) * 3 > len(kids)):
        # loose ops inside or beside named scopes, or in small blocks: runs of them say as
        # much in fewer nodes; blocks of ops are for a module without scopes
        return False
    children = []
    for members in found.groups:
        if keep_scopes and any(not kids[i].is_leaf for i in members):
            # crowded by loose ops only: the few named scopes stay as they are, the ops get blocks
            children.extend(kids[i] for i in members)
            continue
        if len(members) < MIN_BLOCK:
            children.append(kids[members[0]])
            continue
        # named by its exit: the last member the data reaches (where the children stand in flow
        # order), else the one whose work ends last
        if order is not None:  # its last layer, where a loose op follows it
            exit_node = next((kids[i] for i in reversed(members) if not kids[i].is_leaf), kids[members[-1]])
        else:
            exit_node = max((kids[i] for i in members), key=lambda c: (_last(c), c.order))
        name = names.get(exit_node.name, exit_node.name) if exit_node.is_leaf else exit_node.label or exit_node.name
        key = f"{node.key}/b:{exit_node.key.rsplit('/', 1)[-1]}" if node.key else f"b:{exit_node.key.rsplit('/', 1)[-1]}"
        block = TreeNode(key, "block", name, node.path, name, node, depth=node.depth, in_flow=order is not None)
        for i in members:
            kids[i].parent = block
            block.children.append(kids[i])
        rekey(block)
        children.append(block)
    node.children = children
    node.in_flow = order is not None
    return True


def _whole_function(node: TreeNode) -> bool:
    """The root, or JAX's ``jit(f)`` scope around everything: a module without user scopes."""
    while node.kind == "block" and node.parent is not None:  # a block found inside one
        node = node.parent
    if node.kind == "root":
        return True
    if node.kind == "scope" and node.name in (*_PASSES, "(loss)", "(optimizer)"):
        return True  # one phase of a step without user scopes (phases.PHASE_SCOPES)
    return node.kind == "scope" and node.depth == 1 and node.name.startswith(("jit(", "pjit("))


def _drawn_after(kids: list[TreeNode], groups: list[list[int]], edges: Sequence[tuple[int, int]],
                 label: Mapping[str, str], over: int | None = None) -> int:
    """How many children a node crowded by loose ops would have with these blocks (blocks
    holding a scope are dissolved; neighbours built alike count once, as they fold into a
    repeat: a gradient clip's 132 ``multiply → reduce`` squares are one ``×132``). ``over``:
    the caller only asks whether the count exceeds it, so counting stops there (a count that
    only grows: the blocks after need no structure hash).

    Remembered by what the count reads (which children are leaves and their labels, the
    groups, the arrows): a model's repeated layers ask the same question once per layer, and
    the blocks' structure hashes were most of building a GPT step's tree."""
    key = (tuple(label.get(k.name, "") if k.is_leaf else None for k in kids),
           tuple(map(tuple, groups)), tuple(edges), over)
    known = _DRAWN.get(key)
    if known is None:
        known = _count_drawn(kids, groups, edges, label, over)
        if len(_DRAWN) >= _DRAWN_KEPT:
            _DRAWN.clear()
        _DRAWN[key] = known
    return known


#: :func:`_drawn_after`'s answers by what it reads, at most :data:`_DRAWN_KEPT` of them.
_DRAWN: dict[tuple, int] = {}
_DRAWN_KEPT = 4096


def _count_drawn(kids: list[TreeNode], groups: list[list[int]], edges: Sequence[tuple[int, int]],
                 label: Mapping[str, str], over: int | None) -> int:
    """:func:`_drawn_after`'s count, worked out."""
    seg = {}
    for g, members in enumerate(groups):
        for i in members:
            seg[i] = g
    inner: dict[int, list[tuple[int, int]]] = {}
    for a, b in edges:
        if seg.get(a) == seg.get(b):
            inner.setdefault(seg[a], []).append((a, b))
    n = 0
    prev = None
    for g, members in sorted(enumerate(groups), key=lambda gm: max(gm[1])):
        if any(not kids[i].is_leaf for i in members):
            n += len(members)
            prev = None
            if over is not None and n > over:
                return n
            continue
        h = (structure_hash(members, inner.get(g, []), lambda i: label.get(kids[i].name, ""))
             if len(members) >= MIN_BLOCK else None)
        if h is None or h != prev:
            n += 1
            if over is not None and n > over:
                return n
        prev = h
    return n


def _last(node: TreeNode) -> int:
    best = node.order
    if not node.children:  # a leaf (most members of a block of loose ops)
        return best
    stack = [node]
    while stack:
        n = stack.pop()
        best = max(best, n.order)
        stack.extend(n.children)
    return best


# --- repeats ------------------------------------------------------------------------------


def fold_repeats(root: TreeNode, edges: Sequence[tuple[str, str]], label: Mapping[str, str],
                 succ: Mapping[str, list[str]] | None = None) -> None:
    """Put runs of two or more neighbouring children with the same structure under a
    ``repeat`` node (children must already be in their final order). ``succ``: as
    :func:`split_by_structure` takes it."""
    stack = [root]
    hashes: dict[str, str | None] = {}
    succ = succ if succ is not None else _adjacency(edges)
    while stack:
        node = stack.pop()
        if node.kind in _KEEP:
            continue
        kids = node.children
        if len(kids) >= 2 and node.kind != "repeat":  # a repeat's children are its copies
            hs = _hashes(kids, succ, label, hashes)
            if all(h is None for h in hs):  # nothing here can fold (a block of loose ops)
                stack.extend(c for c in kids if c.kind not in _KEEP)
                continue
            found = repeats(hs)
            periods = periodic(hs)
            # a layer of two blocks (attention, MLP) repeated beats a pair of equal neighbours
            if sum(p * c for _s, p, c in periods) > sum(c for _s, c in found) and _group_periods(node, periods):
                hs = _hashes(node.children, succ, label, hashes)
                found = repeats(hs)
            if found:
                feeds = set(_child_edges(node, succ))
                found = _chained(node, found, feeds)
                _fold(node, found, feeds)
        stack.extend(c for c in node.children if c.kind not in _KEEP)


#: How far apart two children may be and still be compared (a period of up to three blocks).
_REACH = 3


def _hashes(kids: list[TreeNode], succ: Mapping[str, list[str]], label: Mapping[str, str],
            memo: dict[str, str | None]) -> list[str | None]:
    """:func:`_hash` of each child that has a child of the same size and kind within
    :data:`_REACH` of it; None for the rest, which cannot repeat (a big module's phases and
    its one decoder are not hashed leaf by leaf at every level above them)."""
    sig = [(k.kind, k.size) for k in kids]
    out: list[str | None] = []
    for i, k in enumerate(kids):
        if k.kind not in _FOLDED:  # a leaf or computation: never hashed (skipped before the neighbours are read)
            out.append(None)
            continue
        near = sig[max(0, i - _REACH):i] + sig[i + 1:i + 1 + _REACH]
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


def _group_periods(node: TreeNode, found: list[tuple[int, int, int]]) -> bool:
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


def _fold(node: TreeNode, found: list[tuple[int, int]], feeds: set[tuple[int, int]]) -> None:
    """Put each run of ``found`` under a repeat node; ``feeds`` (child index pairs) says
    whether each copy feeds the next (a chain of layers) or not (parallel updates)."""
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
        if not chained and count > 1 and all((j + 1, j) in feeds for j in range(i, i + count - 1)):
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
