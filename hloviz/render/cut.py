"""A picture is a *cut* through one tree: scope → sub-scopes → fusions → drawn units.

The tree's leaves are what a fully expanded picture draws (one instruction, or a chain of one
op); its inner nodes are the module's own structure — the scopes of ``metadata.op_name``
(Keras layers, ``tf.name_scope``, JAX name stacks), groups of sibling layers that share a name
prefix (``block_5_*``), and the fusions and while/call bodies that hold instructions. A
:class:`Cut` is a set of tree nodes that covers every leaf exactly once: each node of the cut
becomes one node of the picture; every node above the cut is *open* and is drawn as a cluster
around what it holds.

Fitting a picture to its node budget, ``--depth``, ``--scope`` and an explorer's
expand/collapse are all "move the cut" (:func:`fit`, :meth:`Cut.expand`, :meth:`Cut.collapse`);
the arrows between the nodes of a cut are the instruction graph's arrows seen through
:meth:`Cut.owner` (a quotient graph, :meth:`Cut.edges`).

Nothing here knows HLO: a tree is built from ``(route, leaf key)`` pairs, so the same code
serves the picture (leaves are drawn units) and an HTML explorer (leaves are instructions).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["Cut", "Step", "Tree", "TreeNode", "build_tree", "coarsen", "fit"]

# Kinds of tree nodes (TreeNode.kind): ``root``; ``scope``: a component of ``op_name``; ``group``:
# sibling scopes that share a name prefix; ``block``: siblings bounded by the graph's structure
# (:mod:`~hloviz.render.blocks`; where no rule there finds one, the narrowest waists of the data
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
        #: what :func:`coarsen` bounds new blocks by, and names them after
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
      (:mod:`~hloviz.render.blocks`: cut vertices, components, the dominator tree), unless the
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
    for order, (route, leaf) in enumerate(leaves):
        parent = root
        key = ""
        for step in route:
            key = f"{key}/{step.kind[0]}:{step.name}" if key else f"{step.kind[0]}:{step.name}"
            node = index.get(key)
            if node is None:
                depth = parent.depth + (1 if step.kind == "scope" else 0)
                node = index[key] = TreeNode(key, step.kind, step.name, step.path, step.label, parent, order=order,
                                             depth=depth)
                parent.children.append(node)
            parent = node
        node = TreeNode(f"{key}/{leaf}" if key else leaf, "leaf", leaf, parent.path, "", parent, order=order,
                        depth=parent.depth)
        parent.children.append(node)
    from .structure import fold_repeats, split_by_structure

    succ = _successors(edges or ())
    names = names or {}
    if edges is not None:
        split_by_structure(root, edges, group_at=group_at, run_at=run_at, names=names, label=label)
    _group(root, group_at)
    _sizes(root)
    if _split_crowded(root, run_at, group_at, succ, names, every=False, label=label):
        _sizes(root)
    if edges is not None:
        fold_repeats(root, edges, label or {})
        _sizes(root)
    if _split_crowded(root, run_at, group_at, succ, names, every=True, label=label) and edges is not None:
        fold_repeats(root, edges, label or {})  # blocks cut at a period's starts fold too
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
        if node.kind in ("repeat", "block") and node.children and all(c.waist for c in node.children):
            node.waist = True


def _successors(edges: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    succ: dict[str, list[str]] = {}
    for a, b in edges:
        if a != b:
            succ.setdefault(a, []).append(b)
    return succ


def _sizes(root: TreeNode) -> None:
    post: list[TreeNode] = []
    stack = [root]
    while stack:
        n = stack.pop()
        post.append(n)
        stack.extend(n.children)
    for n in reversed(post):
        if n.is_leaf:
            n.size = 1
            n.last = n.order
        else:
            n.size = sum(c.size for c in n.children)
            if n.children:
                n.order = min(c.order for c in n.children)
                n.last = max(c.last for c in n.children)
                # siblings by where they end: a layer whose weights XLA prepares first (a batch
                # norm's rsqrt, scheduled at the start) still comes after the layer it reads
                n.children.sort(key=lambda c: (c.last, c.order))


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
        leaves = [c for c in node.children if c.is_leaf]
        if not every and len(leaves) > run_at:
            _waists(node, leaves, run_at, succ, names, label=label)
            split = True
        if every and len(node.children) > run_at + group_at:
            _waists(node, list(node.children), run_at, succ, names, label=label)
            split = True
        stack.extend(node.children)
    return split


def _crossings(kids: Sequence[TreeNode], succ: Mapping[str, Sequence[str]]) -> list[int]:
    """``out[b]``: how many arrows between ``kids`` cross the line between ``kids[b-1]`` and
    ``kids[b]`` (arrows counted once per pair of children, either direction)."""
    owner: dict[str, int] = {}
    for i, kid in enumerate(kids):
        stack = [kid]
        while stack:
            n = stack.pop()
            if n.is_leaf:
                owner[n.name] = i
            else:
                stack.extend(n.children)
    pairs = set()
    for leaf, i in owner.items():
        for nxt in succ.get(leaf, ()):
            j = owner.get(nxt)
            if j is not None and j != i:
                pairs.add((min(i, j), max(i, j)))
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
    _sizes(node)


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
        if len(members) < 2:
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


def rekey(group: TreeNode) -> None:
    """Keys stay route-shaped after grouping: ``…/g:block_5/s:block_5_expand/…``."""
    stack = [(c, group.key) for c in group.children]
    while stack:
        n, parent_key = stack.pop()
        tail = n.key.rsplit("/", 1)[-1]
        n.key = f"{parent_key}/{tail}"
        stack.extend((c, n.key) for c in n.children)


def coarsen(tree: Tree, budget: int, *, max_depth: int | None = None) -> Tree:
    """``tree`` with one more level of blocks, bounded at the data flow's narrowest waists
    (:func:`_waists`), where the coarsest cut worth drawing costs more than ``budget`` nodes:
    the root's children, or — when one child holds nearly everything (the model's own scope,
    JAX's ``jit(f)``) and so says nothing closed — that child's children, and so on down.
    Returns ``tree`` itself when nothing needs it."""
    budget = max(budget, 1)
    node, used = tree.root, 0
    while node.children:
        kids = list(node.children)
        cost = used + sum(_cost(c) for c in kids)
        if cost > budget and len(kids) >= 2:
            _waists(node, kids, max(budget - used, 2), tree.succ, tree.names, most=max(budget - used, 1))
            return Tree(tree.root, tree.succ, tree.names)
        big = max(kids, key=lambda c: (c.size, -c.order))
        if not _expandable(big, max_depth) or big.kind in _WHOLE or big.size * 10 < node.size * 9:
            break
        used = cost - _cost(big)
        node = big
    return tree


#: A collapsed body is folded into its caller's node: it costs no node of its own.
_FREE_WHEN_COLLAPSED = frozenset({"body"})


def _cost(node: TreeNode) -> int:
    return 0 if node.kind in _FREE_WHEN_COLLAPSED else 1


@dataclass(frozen=True)
class Cut:
    """A set of tree nodes (by key) covering every leaf once: the nodes of one picture.

    Nodes above the cut are open (drawn as clusters, the root excepted); :meth:`expand` and
    :meth:`collapse` return moved cuts, so an explorer can keep one per view.
    """

    tree: Tree
    keys: frozenset[str]

    @property
    def nodes(self) -> list[TreeNode]:
        """The cut's nodes in tree order."""
        return sorted((self.tree.nodes[k] for k in self.keys), key=lambda n: (n.last, n.order, n.key))

    @property
    def count(self) -> int:
        """How many picture nodes this cut makes (a collapsed body folds into its caller)."""
        return sum(_cost(self.tree.nodes[k]) for k in self.keys)

    def open(self) -> list[TreeNode]:
        """The nodes above the cut (the root excepted): each is drawn as a cluster."""
        seen: dict[str, TreeNode] = {}
        for k in self.keys:
            for a in self.tree.nodes[k].ancestors():
                if a is self.tree.root or a.key in seen:
                    break
                seen[a.key] = a
        return sorted(seen.values(), key=lambda n: (n.last, n.order, n.key))

    def owner(self, leaf: TreeNode) -> TreeNode:
        """The cut node that draws ``leaf``."""
        node: TreeNode | None = leaf
        while node is not None and node.key not in self.keys:
            node = node.parent
        return node if node is not None else self.tree.root

    def expand(self, key: str) -> Cut:
        """The cut with node ``key`` replaced by its children (a leaf stays)."""
        node = self.tree.nodes[key]
        if node.is_leaf or key not in self.keys:
            return self
        return Cut(self.tree, (self.keys - {key}) | {c.key for c in node.children})

    def collapse(self, key: str) -> Cut:
        """The cut with everything below node ``key`` drawn as that one node."""
        node = self.tree.nodes[key]
        below = {n.key for n in self.tree.subtree_root(node).nodes.values()}
        return Cut(self.tree, (self.keys - below) | {key})

    def edges(self, leaf_edges: Iterable[tuple[str, str]]) -> Counter[tuple[str, str]]:
        """Arrows between cut nodes: ``leaf_edges`` (leaf key pairs) seen through :meth:`owner`,
        with how many leaf arrows each stands for; arrows inside one cut node vanish."""
        by_leaf = {leaf.name: self.owner(leaf).key for leaf in self.tree.leaves()}
        out: Counter[tuple[str, str]] = Counter()
        for a, b in leaf_edges:
            oa, ob = by_leaf.get(a), by_leaf.get(b)
            if oa is not None and ob is not None and oa != ob:
                out[(oa, ob)] += 1
        return out


def _expandable(node: TreeNode, max_depth: int | None, closed: frozenset[str] = frozenset()) -> bool:
    if node.is_leaf or not node.children or node.kind in closed:
        return False
    return not (node.kind == "scope" and max_depth is not None and node.depth >= max_depth)


def _delta(node: TreeNode) -> int:
    return sum(_cost(c) for c in node.children) - _cost(node)


def _levels(tree: Tree) -> dict[str, int]:
    """Each node's distance from the root, single-child steps not counted (``model`` › ``block``
    with ``model`` alone under the root is level 1, like ``block`` would be without it), nor
    the step into a repeat's copies (its layers open with their siblings' level)."""
    out = {tree.root.key: 0}
    stack = [tree.root]
    while stack:
        n = stack.pop()
        step = 0 if len(n.children) == 1 or n.kind == "repeat" else 1
        for c in n.children:
            out[c.key] = out[n.key] + step
            stack.append(c)
    return out


#: A repeat of more parallel copies than this stays closed in :func:`fit`: open, its copies
#: would stand side by side in one row (an optimizer's 132 updates: a picture 57,000 pt
#: wide). :meth:`Cut.expand` still opens it.
WIDE_REPEAT = 16


def _wide(node: TreeNode) -> bool:
    return node.kind == "repeat" and node.parallel and len(node.children) > WIDE_REPEAT


#: Nodes that stand for several named parts; :func:`fit` opens them first.
_GROUPS = frozenset({"group", "block", "repeat"})


def fit(tree: Tree, budget: int, *, max_depth: int | None = None, closed: frozenset[str] = frozenset()) -> Cut:
    """The deepest cut of ``tree`` that fits ``budget`` nodes, level by level.

    The root is always open. Each round takes the expandable nodes of the cut nearest the root
    and opens them all if the result still fits; otherwise it opens the cheapest ones (fewest
    new nodes first, then text order) while they fit (groups of layers first), and stops — so a
    module larger than the budget fills it instead of drawing a fraction of it. ``max_depth``
    keeps scopes at that depth closed (``--depth``); ``closed`` keeps nodes of those kinds
    closed (``fusion``, ``body``: the coarser view after a Graphviz timeout). The cut is over
    budget only when the root's children alone are (:func:`coarsen` first prevents that).
    """
    cut = Cut(tree, frozenset(c.key for c in tree.root.children) or frozenset({tree.root.key}))
    return _deepen(cut, budget, max_depth=max_depth, closed=closed)


def _deepen(cut: Cut, budget: int, *, max_depth: int | None = None, closed: frozenset[str] = frozenset(),
            under: TreeNode | None = None) -> Cut:
    """Open nodes of ``cut`` level by level while it fits ``budget`` (see :func:`fit`);
    ``under``: only nodes below that one."""
    tree = cut.tree
    count = cut.count
    keys = set(cut.keys)
    level = _levels(tree)
    inside = set(tree.subtree_root(under).nodes) if under is not None else None
    while True:
        # a node that would not fit even in an empty picture (an optimizer's ×2250 updates)
        # stays closed without holding back the nodes beside it
        cands = [tree.nodes[k] for k in keys if (inside is None or k in inside)
                 and _expandable(tree.nodes[k], max_depth, closed) and _delta(tree.nodes[k]) < budget
                 and not _wide(tree.nodes[k])]
        if not cands:
            break
        top = min(level[n.key] for n in cands)
        cands = [n for n in cands if level[n.key] == top]
        total = sum(_delta(n) for n in cands)
        if count + total <= budget:
            for n in cands:
                keys.discard(n.key)
                keys.update(c.key for c in n.children)
            count += total
            continue
        # groups of layers (and blocks, repeats) before the layers' own insides: a picture that
        # cannot open everything names every layer first
        def rank(n: TreeNode) -> tuple:
            return (n.kind not in _GROUPS or n.waist, _delta(n), n.last, n.order)

        cands.sort(key=rank)
        while cands:
            n = cands.pop(0)
            d = _delta(n)
            if count + d > budget:
                continue  # a cheaper one after it may still fit (groups come first)
            keys.discard(n.key)
            keys.update(c.key for c in n.children)
            count += d
            if n.kind == "repeat":  # its copies stand at its level: they compete in this round
                cands = sorted(cands + [c for c in n.children if _expandable(c, max_depth, closed)], key=rank)
        break
    return Cut(tree, frozenset(keys))


def open_in_place(cut: Cut, key: str, budget: int) -> tuple[Tree, Cut]:
    """``cut`` with node ``key`` opened where it is, everything else as it was (an explorer's
    "open this block"): what the node holds gets up to ``budget`` nodes of its own, opened
    level by level. A repeat opens to its first copy, drawn open, and one node standing for
    the other copies (``×N-1 more``), so a ×24 block costs what one copy costs. A key the tree
    does not have, or a node the cut does not close, leaves the cut as it is."""
    tree = cut.tree
    node = tree.nodes.get(key)
    if node is None or key not in cut.keys or node.is_leaf:
        return tree, cut
    if node.kind == "repeat" and len(node.children) > 2:
        first, rest = node.children[0], node.children[1:]
        others = TreeNode(f"{node.key}/x:more", "repeat", f"{rest[0].label or rest[0].name} … "
                          f"{rest[-1].label or rest[-1].name}", node.path,
                          f"{len(rest)} more copies of {first.label or first.name}", node, depth=node.depth,
                          order=rest[0].order)
        for c in rest:
            c.parent = others
        others.children = rest
        rekey(others)
        node.children = [first, others]
        _sizes(node)
        tree = Tree(tree.root, tree.succ, tree.names)
        cut = Cut(tree, cut.keys)
    opened = cut.expand(key)
    first = node.children[0] if node.kind == "repeat" else node
    return tree, _deepen(opened, opened.count + budget, under=first)


