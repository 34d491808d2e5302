"""The scope tree of one drawing: scope → sub-scopes → fusions → drawn units, and how it is built.

The tree's leaves are what a fully expanded picture draws (one instruction, or a chain of one
op); its inner nodes are the module's own structure — the scopes of ``metadata.op_name``
(Keras layers, ``tf.name_scope``, JAX name stacks), groups of sibling layers that share a name
prefix (``block_5_*``), blocks cut at the data flow's narrowest waists where nothing else splits
a crowded scope, and the fusions and while/call bodies that hold instructions.

This module is stage 1 of design.md's pipeline (*tree*): it builds the tree
(:func:`build_tree`) and nothing more. Which of its nodes a picture draws is a cut through it
(:mod:`~hloviz.render.cut.cut`); blocks and repeats found by the graph's structure come from
:mod:`~hloviz.render.tree.structure`.

Nothing here knows HLO: a tree is built from ``(route, leaf key)`` pairs, so the same code
serves the picture (leaves are drawn units) and an HTML explorer (leaves are instructions).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["STRUCTURAL", "Step", "Tree", "TreeNode", "build_tree", "leaf_owners", "parents_first", "rekey"]

# Kinds of tree nodes (TreeNode.kind): ``root``; ``scope``: a component of ``op_name``; ``group``:
# sibling scopes that share a name prefix; ``block``: siblings bounded by the graph's structure
# (:mod:`~hloviz.render.tree.blocks`; where no rule there finds one, the narrowest waists of the data
# flow, :func:`_waists`), named after its exit; ``repeat``: neighbouring blocks of the same
# structure, drawn once as ``×N``; ``fusion``/``body``: a fused computation / a while,
# conditional or call body; ``leaf``: one drawn unit.
#: Kinds that stand for a part of the model (closed: one node; open: a cluster).
STRUCTURAL = frozenset({"scope", "group", "block", "repeat"})


@dataclass(frozen=True)
class Step:
    """One step of a leaf's route from the root: a scope (``name`` as in ``op_name``, ``path``
    the ``/``-joined scope path), a fusion or a body (``name`` its key, ``label`` what to show)."""

    kind: str
    name: str
    path: str = ""
    label: str = ""


@dataclass(eq=False)
class TreeNode:
    """A node of the tree. ``key`` is unique and stable (the route's names joined by ``/``);
    ``size`` counts the leaves below (1 for a leaf); ``order`` and ``last`` are the positions of
    the first and the last leaf (text order; siblings are ordered by ``last``); ``depth`` counts
    scope steps only."""

    key: str
    kind: str
    name: str
    path: str = ""
    label: str = ""
    parent: TreeNode | None = None
    children: list[TreeNode] = field(default_factory=list)
    size: int = 0
    order: int = 0
    last: int = 0
    depth: int = 0
    #: its children were split by structure: grouping them by name prefix would mix blocks
    structured: bool = False
    #: a block cut at the data flow's narrowest waists (:func:`_waists`), not found as a unit of
    #: the model: drawn open, it is no titled cluster (it only splits a long list)
    waist: bool = False
    #: a repeat whose copies do not feed one another (an optimizer's per-tensor updates)
    parallel: bool = False
    #: a block standing for one layer though waists split it (a layer's optimized backward pass,
    #: :mod:`~hloviz.render.tree.backward`): drawn open, it stays a titled cluster
    layer: bool = False

    @property
    def is_leaf(self) -> bool:
        return self.kind == "leaf"

    def ancestors(self) -> Iterator[TreeNode]:
        """Parent, grandparent, … up to the root."""
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def __repr__(self) -> str:
        return f"<TreeNode {self.kind} {self.key!r} size={self.size}>"


class Tree:
    """The tree of one drawing: :attr:`root`, and every node by key in :attr:`nodes`."""

    def __init__(self, root: TreeNode, succ: Mapping[str, Sequence[str]] | None = None,
                 names: Mapping[str, str] | None = None) -> None:
        self.root = root
        #: the arrows between leaves (leaf key → the leaves it feeds) and what each leaf is called:
        #: what :func:`~hloviz.render.cut.cut.coarsen` bounds new blocks by, and names them after
        self.succ: Mapping[str, Sequence[str]] = succ or {}
        self.names: Mapping[str, str] = names or {}
        self.nodes: dict[str, TreeNode] = {}
        stack = [root]
        while stack:
            node = stack.pop()
            self.nodes[node.key] = node
            stack.extend(node.children)

    def leaves(self, node: TreeNode | None = None) -> Iterator[TreeNode]:
        """The leaves below ``node`` (default: all), in tree order."""
        stack = [node or self.root]
        while stack:
            n = stack.pop()
            if n.is_leaf:
                yield n
            else:
                stack.extend(reversed(n.children))

    def scopes(self) -> list[TreeNode]:
        """Every ``scope`` node, in tree order."""
        out, stack = [], [self.root]
        while stack:
            n = stack.pop()
            if n.kind == "scope":
                out.append(n)
            stack.extend(reversed(n.children))
        return out

    def subtree_root(self, node: TreeNode) -> Tree:
        """The tree below ``node`` (shares nodes; ``node`` acts as the root)."""
        sub = Tree.__new__(Tree)
        sub.root = node
        sub.succ, sub.names = self.succ, self.names
        sub.nodes = {}
        stack = [node]
        while stack:
            n = stack.pop()
            sub.nodes[n.key] = n
            stack.extend(n.children)
        return sub


def build_tree(leaves: Iterable[tuple[Sequence[Step], str]], *, group_at: int = 10, run_at: int = 24,
               edges: Sequence[tuple[str, str]] | None = None, label: Mapping[str, str] | None = None,
               names: Mapping[str, str] | None = None) -> Tree:
    """The tree of ``(route, leaf key)`` pairs, leaves in the order given.

    A scope with more than ``group_at`` children is split, by the first rule that works:

    * ``edges`` given (arrows between leaf keys): blocks found by structure
      (:mod:`~hloviz.render.tree.blocks`: cut vertices, components, the dominator tree), unless the
      children's names already group them the same way;
    * sibling scopes grouped by shared name prefix (``block_5_expand``, ``block_5_depthwise``…
      under ``block_5``; recursively, so ResNet's ``conv2_block1_1_conv`` sits under ``conv2`` ›
      ``conv2_block1``): a picture that cannot show 160 layers can show 20 blocks;
    * a node still holding more than ``run_at`` leaves (a chain, where every op is a cut; ops
      beside a few named scopes) has them split where the data flow is narrowest
      (:func:`_waists`): blocks of at most ``run_at`` members, each ending where the fewest
      arrows cross to the next.

    Then neighbouring scopes or blocks of the same structure (``label`` names each leaf's kind,
    for the Weisfeiler–Lehman hash) are folded into a ``repeat`` node. ``names`` (leaf → what
    to call it) names a block that ends in a leaf.
    """
    root = TreeNode("", "root", "")
    index: dict[str, TreeNode] = {"": root}
    # Leaves of one scope or fusion usually share one route object: its end is found once.
    # (The route is kept in the value, so its id() is not reused while this runs.)
    ends: dict[int, tuple[Sequence[Step], TreeNode, str]] = {}
    for order, (route, leaf) in enumerate(leaves):
        end = ends.get(id(route))
        if end is not None and end[0] is route:
            parent, key = end[1], end[2]
        else:
            parent = root
            key = ""
            for step in route:
                key = f"{key}/{step.kind[0]}:{step.name}" if key else f"{step.kind[0]}:{step.name}"
                node = index.get(key)
                if node is None:
                    depth = parent.depth + (1 if step.kind == "scope" else 0)
                    node = index[key] = TreeNode(key, step.kind, step.name, step.path, step.label, parent,
                                                 order=order, depth=depth)
                    parent.children.append(node)
                parent = node
            ends[id(route)] = (route, parent, key)
        node = TreeNode(f"{key}/{leaf}" if key else leaf, "leaf", leaf, parent.path, "", parent, order=order,
                        depth=parent.depth)
        parent.children.append(node)
    from .backward import split_backward
    from .structure import fold_repeats, split_by_structure

    succ = _successors(edges or ())
    names = names or {}
    if edges is not None:
        split_by_structure(root, edges, group_at=group_at, run_at=run_at, names=names, label=label, succ=succ)
    _group(root, group_at)
    _sizes(root)
    if _split_crowded(root, run_at, group_at, succ, names, every=False, label=label):
        _sizes(root)
    if edges is not None:
        fold_repeats(root, edges, label or {}, succ)
        _sizes(root)
        if split_backward(root, succ):  # the optimized backward pass, one block per layer
            _split_crowded(root, run_at, group_at, succ, names, every=False, label=label)
            _sizes(root)
    if _split_crowded(root, run_at, group_at, succ, names, every=True, label=label) and edges is not None:
        fold_repeats(root, edges, label or {}, succ)  # blocks cut at a period's starts fold too
        _sizes(root)
    _mark_waist_repeats(root)
    return Tree(root, succ, names)


def _mark_waist_repeats(root: TreeNode) -> None:
    """A repeat of blocks cut at waists, or a block of them (a period wrapped to fold), is
    one too: drawn open, it is no titled cluster."""
    post: list[TreeNode] = []
    stack = [root]
    while stack:
        node = stack.pop()
        post.append(node)
        stack.extend(c for c in node.children if not c.is_leaf)
    for node in reversed(post):
        if node.kind in ("repeat", "block") and node.children and not node.layer and all(c.waist for c in node.children):
            node.waist = True


def _successors(edges: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    succ: dict[str, list[str]] = {}
    for a, b in edges:
        if a != b:
            succ.setdefault(a, []).append(b)
    return succ


def parents_first(root: TreeNode) -> list[TreeNode]:
    """``root`` and every node below it, each before its children: walked in reverse, a pass
    that needs its children's answers first (sizes, units) reads each node once, with no
    recursion (trees nest thousands deep)."""
    out: list[TreeNode] = []
    stack = [root]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(n.children)
    return out


def _sizes(root: TreeNode) -> None:
    for n in reversed(parents_first(root)):
        if n.kind == "leaf":
            n.size = 1
            n.last = n.order
        else:
            _size_from_children(n)
            # siblings by where they end: a layer whose weights XLA prepares first (a batch
            # norm's rsqrt, scheduled at the start) still comes after the layer it reads;
            # a repeat's copies stay in the order they run (structure._fold)
            if n.kind != "repeat" and n.children:
                n.children.sort(key=_by_end)


def _size_from_children(n: TreeNode) -> None:
    """``n``'s size, first and last position from its (sized) children's, in one pass."""
    children = n.children
    if not children:
        n.size = 0
        return
    size, first, last = 0, children[0].order, children[0].last
    for c in children:
        size += c.size
        if c.order < first:
            first = c.order
        if c.last > last:
            last = c.last
    n.size, n.order, n.last = size, first, last


def _by_end(c: TreeNode) -> tuple[int, int]:
    return (c.last, c.order)


def _tokens(name: str) -> list[str]:
    return [t for t in re.split(r"[_.\-]", name) if t]


#: Nodes whose children are never split: a fused computation or a body is XLA's own unit (it
#: opens whole or stays closed), a repeat's children are its copies.
_WHOLE = frozenset({"fusion", "body", "repeat", "leaf"})


def _split_crowded(root: TreeNode, run_at: int, group_at: int, succ: Mapping[str, Sequence[str]],
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
        if node.kind in _WHOLE:
            continue
        leaves = [c for c in node.children if c.kind == "leaf"]
        if not every and len(leaves) > run_at:
            _waists(node, leaves, run_at, succ, names, label=label)
            split = True
        if every and len(node.children) > run_at + group_at:
            _waists(node, list(node.children), run_at, succ, names, label=label)
            split = True
        stack.extend(node.children)
    return split


def leaf_owners(kids: Sequence[TreeNode]) -> dict[str, int]:
    """Leaf name → index of the node in ``kids`` holding it (arrows between leaves, seen through
    their owners, are the arrows between ``kids``)."""
    owner: dict[str, int] = {}
    for i, kid in enumerate(kids):
        if kid.kind == "leaf":  # most children of a crowded node (``is_leaf`` read inline: 37k leaves)
            owner[kid.name] = i
            continue
        stack = list(kid.children)
        while stack:
            n = stack.pop()
            if n.kind == "leaf":
                owner[n.name] = i
            else:
                stack.extend(n.children)
    return owner


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


def _waists(node: TreeNode, kids: list[TreeNode], run_at: int, succ: Mapping[str, Sequence[str]],
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
    for a, b in itertools.pairwise(bounds):
        members = kids[a:b]
        if len(members) == 1:
            blocks.append(members[0])
            continue
        exit_node = members[-1]
        tail = exit_node.key.rsplit("/", 1)[-1]
        name = names.get(exit_node.name, exit_node.name) if exit_node.is_leaf else exit_node.label or exit_node.name
        key = f"{node.key}/b:{tail}" if node.key else f"b:{tail}"
        block = TreeNode(key, "block", name, node.path, name, node, depth=node.depth, order=members[0].order,
                         waist=True)
        for m in members:
            m.parent = block
            block.children.append(m)
        rekey(block)
        blocks.append(block)
        if most is None and run_at < len(members) < len(kids):
            _waists(block, list(members), run_at, succ, names)
    node.children = [c for c in node.children if id(c) not in moved] + blocks
    # Only the new blocks and ``node`` changed; what they hold was sized before (a nested
    # block by its own call above): a whole-subtree _sizes here walked every leaf below
    # ``node`` once per crowded node above it.
    _resize([b for b in blocks if b.kind == "block" and b.parent is node] + [node])


def _resize(nodes: Sequence[TreeNode]) -> None:
    """:func:`_sizes` for ``nodes`` alone (inner ones first), their children being sized."""
    for n in nodes:
        _size_from_children(n)
        if n.children:
            n.children.sort(key=_by_end)


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
    its leaves, counted (equal for copies of one layer; :func:`fold_repeats` checks exactly)."""
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


def _group(root: TreeNode, group_at: int) -> None:
    stack = [root]
    while stack:
        node = stack.pop()
        scopes = [c for c in node.children if c.kind == "scope"]
        if len(scopes) > group_at and not node.structured:
            _group_children(node, scopes, 1, group_at)
        stack.extend(c for c in node.children if not c.is_leaf)


def _group_children(node: TreeNode, scopes: list[TreeNode], ntok: int, group_at: int) -> None:
    """Group ``scopes`` (children of ``node``) by their first ``ntok`` name tokens, recursively."""
    longest = max(len(_tokens(s.name)) for s in scopes)
    while ntok < longest:
        by: dict[str, list[TreeNode]] = {}
        for s in scopes:
            toks = _tokens(s.name)
            by.setdefault("_".join(toks[:ntok]) if len(toks) > ntok else s.name, []).append(s)
        if 1 < len(by) < len(scopes):
            break
        ntok += 1
    else:
        return
    for prefix, members in by.items():
        if len(members) < 2 or len({numbered_base(m.name) for m in members}) == 1:
            # one layer kind numbered by Keras (conv2d, conv2d_1, … conv2d_8): a shared name
            # prefix of unrelated layers, not a block of the model (issue 33)
            continue
        key = f"{node.key}/g:{prefix}" if node.key else f"g:{prefix}"
        group = TreeNode(key, "group", prefix, node.path, f"{prefix}_*", node, depth=node.depth)
        for m in members:
            node.children.remove(m)
            m.parent = group
            group.children.append(m)
        rekey(group)
        node.children.append(group)
        if len(members) > group_at:
            _group_children(group, members, ntok + 1, group_at)


_NUMBERED = re.compile(r"(?:_\d+)+$")


def numbered_base(name: str) -> str:
    """``name`` without the ``_<n>`` Keras adds to make a default layer name unique
    (``batch_normalization_7`` → ``batch_normalization``; ``block_5_expand`` stays)."""
    return _NUMBERED.sub("", name)


def rekey(group: TreeNode) -> None:
    """Keys stay route-shaped after grouping: ``…/g:block_5/s:block_5_expand/…``."""
    stack = [group]  # each node rekeyed before its children read its key
    while stack:
        parent = stack.pop()
        base = parent.key + "/"
        for n in parent.children:
            key = n.key
            n.key = base + key[key.rfind("/") + 1:]
            if n.children:
                stack.append(n)
