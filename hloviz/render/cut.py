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

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["Cut", "Step", "Tree", "TreeNode", "build_tree", "fit"]

# Kinds of tree nodes (TreeNode.kind): ``root``; ``scope``: a component of ``op_name``; ``group``:
# sibling scopes that share a name prefix; ``block``: siblings bounded by the graph's structure
# (:mod:`~hloviz.render.blocks`), named after its exit; ``repeat``: neighbouring blocks of the
# same structure, drawn once as ``×N``; ``run``: consecutive leaves of a scope where nothing
# else splits them; ``fusion``/``body``: a fused computation / a while, conditional or call
# body; ``leaf``: one drawn unit.
#: Kinds that stand for a part of the model (closed: one node; open: a cluster).
STRUCTURAL = frozenset({"scope", "group", "block", "repeat", "run"})


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

    def __init__(self, root: TreeNode) -> None:
        self.root = root
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
    * a node with more than ``run_at`` leaves that nothing else splits has them cut into runs of
      consecutive leaves.

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
    if edges is not None:
        from .structure import fold_repeats, split_by_structure

        split_by_structure(root, edges, group_at=group_at, run_at=run_at, names=names or {}, label=label)
        _group(root, group_at)
        _runs(root, run_at)
        _sizes(root)
        fold_repeats(root, edges, label or {})
    else:
        _group(root, group_at)
        _runs(root, run_at)
    _sizes(root)
    return Tree(root)


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


def _runs(root: TreeNode, run_at: int) -> None:
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(c for c in node.children if not c.is_leaf)
        leaves = [c for c in node.children if c.is_leaf]
        if len(leaves) > run_at and node.kind != "fusion" and node.kind != "body":
            _chunk(node, leaves, run_at)


def _chunk(node: TreeNode, leaves: list[TreeNode], run_at: int) -> None:
    """Replace ``leaves`` (children of ``node``) by runs of at most ``size`` consecutive ones."""
    size = max(run_at // 2, -(-len(leaves) // (run_at // 2)))
    kept = [c for c in node.children if not c.is_leaf]
    runs = []
    for start in range(0, len(leaves), size):
        chunk = leaves[start:start + size]
        key = f"{node.key}/r:{start}" if node.key else f"r:{start}"
        run = TreeNode(key, "run", f"{start + 1}–{start + len(chunk)}", node.path, "", node, depth=node.depth)
        for leaf in chunk:
            leaf.parent = run
            run.children.append(leaf)
        rekey(run)
        runs.append(run)
        if len(chunk) > run_at:
            _chunk(run, chunk, run_at)
    node.children = kept + runs


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


def _expandable(node: TreeNode, max_depth: int | None) -> bool:
    if node.is_leaf or not node.children:
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


def fit(tree: Tree, budget: int, *, max_depth: int | None = None) -> Cut:
    """The deepest cut of ``tree`` that fits ``budget`` nodes, level by level.

    The root is always open. Each round takes the expandable nodes of the cut nearest the root
    and opens them all if the result still fits; otherwise it opens the cheapest ones (fewest new nodes first, then text order)
    while they fit (groups of layers first), and stops — so a module larger than the budget fills it instead of drawing
    a fraction of it. ``max_depth`` keeps scopes at that depth closed (``--depth``). A cut over
    budget is returned only when the root's children alone exceed it; the caller then
    collapses further by other means.
    """
    cut = Cut(tree, frozenset(c.key for c in tree.root.children) or frozenset({tree.root.key}))
    count = cut.count
    keys = set(cut.keys)
    level = _levels(tree)
    while True:
        # a node that would not fit even in an empty picture (an optimizer's ×2250 updates)
        # stays closed without holding back the nodes beside it
        cands = [tree.nodes[k] for k in keys if _expandable(tree.nodes[k], max_depth)
                 and _delta(tree.nodes[k]) < budget and not _wide(tree.nodes[k])]
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
            return (n.kind not in _GROUPS, _delta(n), n.last, n.order)

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
                cands = sorted(cands + [c for c in n.children if _expandable(c, max_depth)], key=rank)
        break
    return Cut(tree, frozenset(keys))
