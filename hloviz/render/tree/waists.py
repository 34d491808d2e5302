"""Blocks cut at the data flow's narrowest waists, where nothing else splits a crowded node.

In: a built tree's node whose children are too many (a chain, where every op is a cut; an
optimizer's independent updates; hundreds of scopes no prefix groups) and the arrows between
leaves. Out: the node with a level of ``block`` nodes (``waist=True``), each ending where the
fewest arrows cross to the next, aligned on a period when the children repeat so the blocks
fold into a ``×N`` (:func:`split_crowded` for the whole tree, :func:`split_at_waists` for one
node; :mod:`~hloviz.render.cut.cut` also calls the latter to fit a budget).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence

from ...analysis.opnames import is_optimizer_scope
from .nodes import FOLDED, UNUSED, TreeNode, by_end, leaf_owners, rekey, size_from_children
from .phases import PHASE_SCOPES

__all__ = ["WHOLE", "around_steps", "room_for_steps", "split_at_waists", "split_crowded", "steps_first"]


#: Nodes whose children are never split: a fused computation or a body is XLA's own unit (it
#: opens whole or stays closed), a repeat's children are its copies.
WHOLE = frozenset({"fusion", "body", "repeat", "leaf"})


def split_crowded(root: TreeNode, run_at: int, group_at: int, succ: Mapping[str, Sequence[str]],
                   names: Mapping[str, str], *, every: bool, label: Mapping[str, str] | None = None) -> bool:
    """Give every node that is still crowded a level of blocks at the data flow's narrowest
    waists: its loose leaves when there are more than ``run_at`` of them (named scopes beside
    them stay as they are); ``every``: all its children when there are more than
    ``run_at + group_at`` (hundreds of scopes no prefix groups; done after repeats are folded,
    so a ×24 is one child). Whether any node was split."""
    stack = [root]
    split = False
    while stack:
        node = stack.pop()
        if node.kind in WHOLE and not node.steps_body:
            continue
        leaves = [c for c in node.children if c.kind == "leaf"]
        if not every and len(leaves) > run_at:
            split_at_waists(node, leaves, run_at, succ, names, label=label)
            split = True
        if every and len(node.children) > run_at + group_at:
            split_at_waists(node, list(node.children), run_at, succ, names, label=label)
            split = True
        stack.extend(node.children)
    return split


def _crossings(kids: Sequence[TreeNode], succ: Mapping[str, Sequence[str]]) -> list[int]:
    """``out[b]``: how many arrows between ``kids`` cross the line between ``kids[b-1]`` and
    ``kids[b]`` (arrows counted once per pair of children, either direction)."""
    owner = leaf_owners(kids)
    get = owner.get
    # one comprehension, as structure._child_edges (a leaf outside ``kids`` reads as its own owner)
    pairs = {(i, j) if i < j else (j, i) for leaf, i in owner.items() for nxt in succ.get(leaf, ())
             if (j := get(nxt, i)) != i}
    diff = [0] * (len(kids) + 2)
    for lo, hi in pairs:
        diff[lo + 1] += 1
        diff[hi + 1] -= 1
    out, running = [], 0
    for b in range(len(kids) + 1):
        running += diff[b]
        out.append(running)
    return out


def split_at_waists(node: TreeNode, kids: list[TreeNode], run_at: int, succ: Mapping[str, Sequence[str]],
            names: Mapping[str, str], *, most: int | None = None, label: Mapping[str, str] | None = None) -> None:
    """Replace ``kids`` (children of ``node``, in order) by blocks of consecutive ones, each
    ending where the fewest arrows cross to the rest (a chain's every op is a cut, an
    optimizer's independent updates have none between them), sizes within half of a target so
    a block holds at most ``run_at`` members and ``node`` about ``run_at // 2`` blocks;
    recursively, for a node so crowded that the blocks are too. ``most``: make at most that
    many blocks (each then holds at least its share). With ``label`` (leaf → what it is),
    where the children repeat with a period (60 layers of the same ops, each split into a few
    blocks), blocks hold whole periods and start where each period does, so they come out
    alike and fold into a ``×N`` repeat."""
    half = max(1, run_at // 2)
    size = max(half, -(-len(kids) // half)) if most is None else max(1, -(-len(kids) // max(most, 1)))
    cross = _crossings(kids, succ)
    found = _period([_signature(k, label) for k in kids]) if label is not None and most is None else None
    if found is not None and found[1] <= run_at:
        start, p, copies = found
        step = p * max(1, min(round(size / p), run_at // p))
        phase = min(range(start, start + p), key=lambda b: (cross[b], b)) if start > 0 else start
        forced = list(range(phase, start + p * copies + 1, step))
        cuts = _greedy(cross, 0, forced[0], size, most) + [c for c in forced if 0 < c < len(kids)]
        cuts += _greedy(cross, forced[-1], len(kids), size, most)
    else:
        cuts = _greedy(cross, 0, len(kids), size, most)
    bounds = [0, *cuts, len(kids)]
    if len(bounds) == 2 and most is None:
        return
    moved = {id(k) for k in kids}
    blocks = []
    starts: dict[int, TreeNode] = {}  # id of each block's first member → the block (or the member alone)
    for a, b in itertools.pairwise(bounds):
        members = kids[a:b]
        if len(members) == 1:
            blocks.append(members[0])
            starts[id(members[0])] = members[0]
            continue
        # named by its last member; in flow order by its last layer, where a loose op follows it
        # (not by a pass's scope after layers: an EfficientNetV2B1 step's blocks 5b … 6i, its head
        # and ``predictions`` were ``optimizer · block of 8`` after the step counter's
        # ``(optimizer)``; with no layer beside it, it names the block); never by the values
        # nothing reads
        named = [m for m in members if m.name not in (UNUSED, FOLDED)] or members
        inner = [m for m in reversed(named) if not m.is_leaf]
        exit_node = (inner[0] if inner else named[-1]) if node.in_flow else named[-1]
        if node.in_flow and _a_pass(exit_node):
            exit_node = next((m for m in inner if m.kind in ("scope", "group") and not _a_pass(m)), exit_node)
        # but a pass holding most of the block names it: SGD's update of every weight of a Perceiver
        # (409 of 479 units) beside its ``embed`` layer was ``embed · block of 2``
        exit_node = next((m for m in members if _a_pass(m) and 2 * m.size > sum(k.size for k in members)), exit_node)
        tail = exit_node.key.rsplit("/", 1)[-1]
        name = names.get(exit_node.name, exit_node.name) if exit_node.is_leaf else exit_node.label or exit_node.name
        key = f"{node.key}/b:{tail}" if node.key else f"b:{tail}"
        block = TreeNode(key, "block", name, node.path, name, node, depth=node.depth, order=members[0].order,
                         waist=True, in_flow=node.in_flow)
        for m in members:
            m.parent = block
            block.children.append(m)
        rekey(block)
        blocks.append(block)
        starts[id(members[0])] = block
        if most is None and run_at < len(members) < len(kids):
            split_at_waists(block, list(members), run_at, succ, names)
    if node.in_flow:  # each block where its first member stood
        node.children = [starts.get(id(c), c) for c in node.children if id(c) not in moved or id(c) in starts]
    else:
        node.children = [c for c in node.children if id(c) not in moved] + blocks
    # Only the new blocks and ``node`` changed; what they hold was sized before (a nested
    # block by its own call above): a whole-subtree size_tree here walked every leaf below
    # ``node`` once per crowded node above it.
    _resize([b for b in blocks if b.kind == "block" and b.parent is node] + [node])


def _a_pass(node: TreeNode) -> bool:
    """Is ``node`` the scope of one pass of a step (``(optimizer)``: :mod:`~.phases`)?"""
    return node.kind == "scope" and node.name in PHASE_SCOPES


def _resize(nodes: Sequence[TreeNode]) -> None:
    """:func:`size_tree` for ``nodes`` alone (inner ones first), their children being sized."""
    for n in nodes:
        size_from_children(n)
        if n.children and not n.in_flow:
            n.children.sort(key=by_end)


def _greedy(cross: Sequence[int], lo: int, hi: int, size: int, most: int | None) -> list[int]:
    """Cut positions between ``lo`` and ``hi``: from ``lo`` on, the narrowest place (fewest
    arrows crossing, then nearest the target ``size``) within half a block of ``size``."""
    cuts, start = [], lo
    while hi - start > (size + size // 2 if most is None else size):
        least = max(1, size // 2) if most is None else size
        lo_b, hi_b = start + least, min(hi - 1, start + size + size // 2)
        best = min(range(lo_b, hi_b + 1), key=lambda b: (cross[b], abs(b - start - size), b))
        cuts.append(best)
        start = best
    return cuts


def _signature(node: TreeNode, label: Mapping[str, str] | None) -> object:
    """What a child is, for finding a period: a leaf's label; a node's kind and the labels of
    its leaves, counted (equal for copies of one layer; :func:`~.structure.fold_repeats` checks exactly)."""
    label = label or {}
    if node.is_leaf:
        return label.get(node.name, "")
    counts: Counter[str] = Counter()
    stack = [node]
    while stack:
        n = stack.pop()
        if n.is_leaf:
            counts[label.get(n.name, "")] += 1
        else:
            stack.extend(n.children)
    return (node.kind, tuple(sorted(counts.items())))


def _period(signatures: Sequence[object], *, candidates: int = 6) -> tuple[int, int, int] | None:
    """The longest run ``(start, period, copies)`` of ``signatures`` where a stretch of
    ``period`` repeats at least 3 times and covers half of them or more; None when none does.
    Candidate periods are the most common distances between equal signatures."""
    ids: dict[object, int] = {}
    seq = [ids.setdefault(sig, len(ids)) for sig in signatures]
    last: dict[int, int] = {}
    gaps: Counter[int] = Counter()
    for i, t in enumerate(seq):
        if t in last:
            gaps[i - last[t]] += 1
        last[t] = i
    best: tuple[int, int, int] | None = None
    for p, _ in gaps.most_common(candidates):
        i = 0
        while i + p < len(seq):
            if seq[i] != seq[i + p]:
                i += 1
                continue
            j = i
            while j + p < len(seq) and seq[j] == seq[j + p]:
                j += 1
            copies = (j - i + p) // p
            if copies >= 3 and (best is None or copies * p > best[1] * best[2]):
                best = (i, p, copies)
            i = j + 1
    if best is None or best[1] * best[2] * 2 < len(seq):
        return None
    return best


def room_for_steps(root: TreeNode, budget: int, succ: Mapping[str, Sequence[str]], names: Mapping[str, str]) -> bool:
    """Where the tree holds the body of a loop of steps (:attr:`TreeNode.steps_body`) that
    ``budget`` cannot open beside the ops around the loop (reshapes of the batch, the loop's
    tuples, the gradients' averaging, a JAX step's parameters initialised in the jit), block
    those ops at the data flow's waists so that it can: the loop's layers are the picture, not
    one closed box below rows of plumbing. The loop itself stays a box, its body hanging below
    it, and so does the ROOT. The body is the root's child, or — in a JAX module, whose
    ``jit(f)`` scope holds nearly everything — that scope's. Whether any were blocked. (A closed
    body is folded into its caller's node: it costs no node.)"""
    node, used = root, 0
    while not any(c.steps_body for c in node.children):
        big = max(node.children, key=lambda c: c.size, default=None)
        if big is None or big.kind != "scope" or big.size * 10 < node.size * 9:
            return False
        used += sum(c.kind != "body" for c in node.children if c is not big)
        node = big
    kids = node.children
    steps = next(c for c in kids if c.steps_body)
    drawn = used + sum(c.kind != "body" for c in kids)
    opened = sum(c.kind != "body" for c in steps.children)
    model = _model_in(steps)  # ... its model's layers too (a Flax module's)
    if model is not None:
        opened += len(model.children) - 1
    loop = steps.label.rpartition(" of ")[2]
    last = max((c for c in kids if c.is_leaf), key=lambda c: c.order, default=None)  # the ROOT: last, read by nothing
    loose = [c for c in kids if c.kind != "body" and not _holds(c, loop, names) and (c is not last or succ.get(c.name))
             and (c.is_leaf or node is not root)]
    room = budget - used - opened - sum(c.kind != "body" for c in kids if c not in loose)  # (a body folded: no node)
    if drawn + opened <= budget or not 2 <= room < len(loose):
        return False
    split_at_waists(node, loose, room, succ, names, most=room)
    return True


def steps_first(root: TreeNode) -> tuple[list[TreeNode], list[TreeNode]]:
    """Where the tree holds the body of a loop of steps: what a fitted cut opens first — the
    scopes down to it (JAX's ``jit(f)``), the body, and its model (:func:`_model_in`) — before
    anything beside them, however near the root; and the
    nodes an overview opens nothing more of (the body, the loop's condition, the scope named as
    the loop: a dropout's random bits TensorFlow drew before the loop were four boxes). Opened level by
    level with the rest, a Flax loop of AdamW steps spent the budget on the parameters'
    initialisation beside the loop (its ``Encoder``, its ``_threefry_split``) and the model in
    the body stood one closed box; left to open after the model, a TensorFlow body's slicing of
    the batch opened into its eliminated reshapes, and the condition into its call."""
    steps = next((n for n in _walk(root) if n.steps_body), None)
    if steps is None or steps.parent is None:
        return [], []
    chain = [*reversed([a for a in steps.ancestors() if a is not root]), steps]
    model = _model_in(steps)
    if model is not None:
        chain.append(model)
    condition = f"condition of {steps.label.rpartition(' of ')[2]}"
    return chain, [steps, *(c for c in steps.parent.children if (c.kind == "body" and c.label == condition)
                            or (c.kind == "scope" and c.path == steps.path))]  # (its ops XLA hoisted out of it)


#: What a model's children are when they are its layers: scopes, and groups and repeats of them
#: (a Keras application's ``block_*``, sixteen inverted residual blocks).
_LAYERS = frozenset({"scope", "group", "repeat"})


def _model_in(body: TreeNode) -> TreeNode | None:
    """The scope of ``body`` that is its model: the biggest made mostly of two or more scopes of
    its own (its layers), not a pass's nor an optimizer's. Not merely the biggest scope: a Haiku
    MLP's LayerNorm, most of an optimized body of its steps, opened into its variance and its
    loose fusions; and not only one holding most of the body: a small Keras CNN's loss was more
    of its body than the model, which stood closed."""
    def layered(node: TreeNode) -> bool:
        layers = [c for c in node.children if c.kind in _LAYERS and not c.name.startswith("(")]
        return len(layers) >= 2 and sum(c.size for c in layers) * 2 > node.size

    models = [c for c in body.children if c.kind == "scope" and not c.name.startswith("(")
              and not is_optimizer_scope(c.name) and layered(c)]
    return max(models, key=lambda c: c.size, default=None)


def _walk(root: TreeNode) -> Iterator[TreeNode]:
    """``root`` and every node below it."""
    stack = [root]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)


def _holds(node: TreeNode, name: str, names: Mapping[str, str]) -> bool:
    """Is ``node`` the leaf called ``name`` (the loop's), or a block or scope holding it?"""
    return any(n.is_leaf and names.get(n.name) == name for n in _walk(node))


def around_steps(node: TreeNode) -> bool:
    """Is ``node`` a block of the ops around a loop of steps (one :func:`room_for_steps` made: a
    waist block beside the loop's body)? An overview draws it closed and leaves its
    room to the body's layers: opened, an unseen CNN's loop inputs (five momentum slots, the
    step count, the tuple they make) took the room, and the model in the body stood one box."""
    top = node.parent
    return node.waist and top is not None and any(c.steps_body for c in top.children)
