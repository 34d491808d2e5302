"""The tree's structure where names do not give it: blocks in a :mod:`~hloviz.render.tree.tree` tree.

:func:`split_by_structure` gives a crowded node (more children than a picture can name) a level
of ``block`` nodes found on the graph of its children (:func:`hloviz.render.tree.blocks.find_blocks`),
unless the children's own names already group them the same way (ResNet's ``conv2_block1_*``
is exactly its bottleneck; InceptionV3's ``conv2d_*`` spans all eleven blocks and is not). Where
a training step's many named layers repeat along its forward pass in layers of several blocks
(a transformer written as a Keras functional model), each layer becomes a block.
Neighbouring blocks of the same structure fold into repeats in :mod:`.repeat_runs`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .blocks import MIN_BLOCK, find_blocks
from .dominators import Graph, flow_order
from .nodes import FOLDED, UNUSED, TreeNode, adjacency, child_edges, rekey
from .prefix_groups import block_families, first_word, names_agree
from .repeat_runs import group_periods, layer_runs, probe, structure_hash

__all__ = ["split_by_structure"]

#: The passes of a step without user scopes (``phases.PHASE_SCOPES`` less the optimizer): each
#: is one whole pass, whose spine runs to its end.
_PASSES = ("(forward)", "(backward)")


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
    succ = succ if succ is not None else adjacency(edges)
    stack = [root]
    while stack:
        node = stack.pop()
        if not node.sealed and _crowded(node, group_at, run_at) and _split(node, succ, names, group_at,
                                                                                 label or {}, forward, run_at):
            node.structured = True
        stack.extend(c for c in node.children if not c.sealed)


def _split(node: TreeNode, succ: Mapping[str, list[str]], names: Mapping[str, str], group_at: int,
           label: Mapping[str, str], forward: Mapping[str, list[str]] | None = None, run_at: int = 24) -> bool:
    """Blocks for ``node``'s children (along the ``forward`` pass's arrows where it has any
    between them); whether any were made. Children that form one chain along the forward pass
    (no blocks to find), no more than ``run_at`` of them, are drawn each as a box: they are
    put in that chain's order, not where each one's work ends, which for a training step is
    its backward pass or its update, running the other way (an L2-regularized CNN's
    parameterless ``relu_2``, ``relu_1``, ``relu_0`` then stood side by side and folded into one
    ``×3`` box between ``bn_1`` and ``conv_2``). (More of them are cut into blocks at waists,
    by the order of their ends.)"""
    kids = list(node.children)
    flow = child_edges(node, forward) if forward is not None else []
    # a training step's layers stand in the order its forward pass runs through them: text
    # order is each one's first instruction, and TensorFlow writes a layer's constants (a
    # hard-swish's 3.0, a dropout's rate) at the top of the module
    order = flow_order(Graph(len(kids), flow), len(kids)) if flow else None
    edges = flow or child_edges(node, succ)
    if order is not None and order != list(range(len(kids))):
        kids = [kids[i] for i in order]
        at = {old: new for new, old in enumerate(order)}
        edges = sorted((at[a], at[b]) for a, b in edges)
    found = find_blocks(len(kids), edges, whole_pass=node.kind == "scope" and node.name in _PASSES)
    if found is None:
        if order is not None and len(kids) <= run_at:  # one chain of layers: in its order
            node.in_flow, node.children = True, kids
        return False
    if found.how != "dominators" and names_agree(kids, found.groups, MIN_BLOCK):
        if order is not None:  # the names group them (group_by_prefix), in the forward pass's order
            node.children, node.in_flow = kids, True
        return False
    if flow:  # … or would, each family's layers drawn together (:func:`_beside_their_names`)
        first = order or list(range(len(kids)))
        regrouped = [node.children[i] for i in _beside_their_names(first, node.children, flow)]
        if regrouped != kids and names_agree(regrouped, [list(range(len(regrouped)))], MIN_BLOCK):
            node.children, node.in_flow = regrouped, True
            return False
    keep_scopes = sum(1 for k in kids if not k.is_leaf) <= group_at
    groups, layers = found.groups, None
    if not keep_scopes and found.how != "cuts" and node.kind != "block":
        layered = _layered(node, kids, order, groups, edges, succ, label) if order is not None else None
        if layered is None:
            return False  # many named scopes without a spine (an optimizer's updates): names group them
        groups, layers = layered
    if keep_scopes and (not _whole_function(node) or any(not k.is_leaf for k in kids)
                        or _drawn_after(kids, groups, edges, label, over=len(kids) // 3) * 3 > len(kids)):
        # loose ops inside or beside named scopes, or in small blocks: runs of them say as
        # much in fewer nodes; blocks of ops are for a module without scopes
        return False
    node.children = _blocks(node, kids, _chains_joined(groups, kids, edges), order, names, keep_scopes)
    node.in_flow = order is not None
    if layers is not None:  # layers that repeat (one child per group): each copy a block, folded later
        group_periods(node, layers)
    return True


def _beside_their_names(order: list[int], kids: list[TreeNode], flow: Sequence[tuple[int, int]]) -> list[int]:
    """``order`` with the layers of each name family (:func:`~.prefix_groups.block_families`:
    ``block4b_*``, never one kind of layer Keras numbers) drawn together: one the forward pass
    reads nothing into (a dropout's random mask) just before the family's first layer it does
    read into, and one that comes back to its family after other families ran just after the
    family's run — where every layer it reads in the forward pass stands before it, or where
    three layers at most stood between (the next block's first kernel, holding the end of this
    one). After optimization XLA fuses most of such a layer's forward work into another layer's
    kernels (EfficientNetV2's ``block4b_se_squeeze``, ``block4b_add``): what was left of it ran
    after the head, every ``block*`` family came back there, and the names grouped nothing — the
    step's optimized column was nine boxes, ``top_dropout · block of 10`` holding 1,582 kernels."""
    preds: dict[int, list[int]] = {}
    for a, b in flow:
        preds.setdefault(b, []).append(a)
    pos = {i: p for p, i in enumerate(order)}
    families = block_families([k for k in kids if k.kind == "scope"])
    family = {i: w for i in order if kids[i].kind == "scope" and (w := first_word(kids[i].name)) in families}
    first: dict[str, int] = {}  # family → its first layer the forward pass reads into
    for i in order:
        if i in preds and i in family:
            first.setdefault(family[i], i)
    before: dict[int, list[int]] = {}
    for i in order:
        home = first.get(family[i]) if i not in preds and i in family else None
        if home is not None and pos[home] > pos[i] + 1:
            before.setdefault(home, []).append(i)
    order = _moved(order, before, after={})
    pos = {i: p for p, i in enumerate(order)}
    at = {i: p for p, i in enumerate(i for i in order if kids[i].kind == "scope")}  # layers between
    anchor: dict[str, int] = {}  # family → the last member of its run
    after: dict[int, list[int]] = {}
    previous = moving = None  # (the family whose members are being moved back, one after another)
    for i in order:
        word = family.get(i)
        home = anchor.get(word) if word is not None else None
        if home is not None and (word == moving or (previous != word and (
                at[i] - at[home] <= 4 or all(pos[a] <= pos[home] for a in preds.get(i, ()))))):
            after.setdefault(home, []).append(i)
            pos[i], moving = pos[home], word  # (what reads it stands after it)
        else:
            moving = None
            if word is not None:
                anchor[word] = i
        previous = word
    return _moved(order, before={}, after=after)


def _moved(order: list[int], before: Mapping[int, list[int]], after: Mapping[int, list[int]]) -> list[int]:
    """``order`` with the nodes listed in ``before[i]`` (``after[i]``) moved to just before (after) ``i``."""
    if not before and not after:
        return order
    moved = {i for joined in (*before.values(), *after.values()) for i in joined}
    out: list[int] = []
    for i in order:
        if i not in moved:
            out.extend(before.get(i, ()))
            out.append(i)
            out.extend(after.get(i, ()))
    return out


def _chains_joined(groups: list[list[int]], kids: list[TreeNode], edges: Sequence[tuple[int, int]]) -> list[list[int]]:
    """``groups`` with each run of lone ops one after another, each feeding the next, made one
    group: the cuts that bound blocks are single ops, and a chain of them (DP-SGD's clipping
    factor, ``sqrt`` → ``add`` → ``divide`` → ``minimum``, each on every way to the update) was as
    many boxes of one instruction in a row."""
    feeds = set(edges)
    out: list[list[int]] = []
    run = False  # whether out[-1] is a run of lone ops
    for members in groups:
        lone = len(members) == 1 and kids[members[0]].is_leaf
        last = out[-1] if out else None
        if lone and last is not None and (run or (len(last) == 1 and kids[last[0]].is_leaf)) \
                and (last[-1], members[0]) in feeds:
            last.append(members[0])
            run = True
        else:
            out.append(list(members))
            run = False
    return _loose_joined(out, kids, feeds) if any(not k.is_leaf for k in kids) else out


def _loose_joined(groups: list[list[int]], kids: list[TreeNode], feeds: set[tuple[int, int]]) -> list[list[int]]:
    """Beside named layers, neighbouring groups of loose ops with an arrow between them (either
    way: two strands meeting) made one: a diffusion U-Net's time embedding (``arange`` → ``exp``,
    the time steps' ``convert``, ``sin``/``cos`` → ``concatenate``) was four boxes ``forward ·
    block of 2 … of 3`` in a row, which took the room its layers needed. (Without layers those
    blocks are the picture, and stay.)"""
    out: list[list[int]] = []
    for members in groups:
        last = out[-1] if out else None
        if (last is not None and all(kids[i].is_leaf for i in members) and all(kids[i].is_leaf for i in last)
                and any((a, b) in feeds or (b, a) in feeds for a in last for b in members)):
            last.extend(members)
        else:
            out.append(list(members))
    return out if len(out) == len(groups) else _loose_joined(out, kids, feeds)


def _blocks(node: TreeNode, kids: list[TreeNode], groups: list[list[int]], order: list[int] | None,
            names: Mapping[str, str], keep_scopes: bool) -> list[TreeNode]:
    """``node``'s new children: a block around each group of ``kids`` (a lone member stays as
    it is; with ``keep_scopes``, a group holding a named scope stays as its members)."""
    children = []
    for members in groups:
        if keep_scopes and any(not kids[i].is_leaf for i in members):
            # crowded by loose ops only: the few named scopes stay as they are, the ops get blocks
            children.extend(kids[i] for i in members)
            continue
        if len(members) < MIN_BLOCK:
            children.append(kids[members[0]])
            continue
        # named by its exit: the last member the data reaches (where the children stand in flow
        # order), else the one whose work ends last; never the values nothing reads
        named = [kids[i] for i in members if kids[i].name not in (UNUSED, FOLDED)] or [kids[i] for i in members]
        if order is not None:  # its last layer, where a loose op follows it
            exit_node = next((k for k in reversed(named) if not k.is_leaf), named[-1])
        else:
            exit_node = max(named, key=lambda c: (_last(c), c.order))
        name = names.get(exit_node.name, exit_node.name) if exit_node.is_leaf else exit_node.label or exit_node.name
        key = f"{node.key}/b:{exit_node.key.rsplit('/', 1)[-1]}" if node.key else f"b:{exit_node.key.rsplit('/', 1)[-1]}"
        block = TreeNode(key, "block", name, node.path, name, node, depth=node.depth, in_flow=order is not None)
        for i in members:
            kids[i].parent = block
            block.children.append(kids[i])
        rekey(block)
        children.append(block)
    return children


def _layered(node: TreeNode, kids: list[TreeNode], order: list[int], groups: list[list[int]],
             flow: Sequence[tuple[int, int]], succ: Mapping[str, list[str]],
             label: Mapping[str, str]) -> tuple[list[list[int]], list[tuple[int, int, int]]] | None:
    """The blocks of a node of many named layers (``kids`` in the forward pass's ``order``,
    ``flow`` the arrows between them) where layers of several blocks repeat along it
    (:func:`~.repeat_runs.layer_runs`), each lone op no forward arrow reaches in the block whose work it sums:
    a gradient summed where the residual stream forks, made of its layer's backward pass and
    read by the layer before, joins the last block that feeds it (else the first that reads
    it); and the runs of layers among them (:func:`~.repeat_runs.layer_runs`). None where no
    layer repeats."""
    at = {old: new for new, old in enumerate(order)}
    feeders: dict[int, list[int]] = {}
    readers: dict[int, list[int]] = {}
    for a, b in child_edges(node, succ):
        readers.setdefault(at[a], []).append(at[b])
        feeders.setdefault(at[b], []).append(at[a])
    in_flow = {i for edge in flow for i in edge}
    group_of = {i: g for g, members in enumerate(groups) for i in members}
    loose = {members[0] for members in groups if len(members) == 1 and kids[members[0]].is_leaf
             and members[0] not in in_flow}
    joined: dict[int, int] = {}  # a loose op → the group it joins
    for i in loose:
        fed_by = [group_of[a] for a in feeders.get(i, ()) if a not in loose]
        read_by = [group_of[r] for r in readers.get(i, ()) if r not in loose]
        if fed_by or read_by:
            joined[i] = max(fed_by) if fed_by else min(read_by)
    out = [list(members) for members in groups]
    for i, g in joined.items():
        out[g].append(i)
        out[group_of[i]].remove(i)
    out = [sorted(members) for members in out if members]
    runs = layer_runs([probe(kids, members) for members in out], succ, label)
    return (out, runs) if runs else None


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
