"""The tree's nodes and the walks every stage reads them with.

In: nothing (a data model). Out: :class:`Step` (one step of a leaf's route), :class:`TreeNode`
(a node: its kind, key, size and positions), :class:`Tree` (the root and every node by key),
and what the builders share: walks without recursion (:func:`parents_first`), sizes and
positions from the children (:func:`size_tree`), keys kept route-shaped after regrouping
(:func:`rekey`) and which child holds which leaf (:func:`leaf_owners`). :mod:`.tree` builds a
tree; :mod:`.structure`, :mod:`.backward`, :mod:`.waists` and :mod:`.prefix_groups` regroup it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["FOLDED", "KEEP", "STRUCTURAL", "UNUSED", "adjacency", "child_edges", "Step", "Tree", "TreeNode", "by_end", "leaf_owners", "leaves_below", "parents_first", "rekey",
           "size_from_children", "size_tree"]

# Kinds of tree nodes (TreeNode.kind): ``root``; ``scope``: a component of ``op_name``; ``group``:
# sibling scopes that share a name prefix; ``block``: siblings bounded by the graph's structure
# (:mod:`~hloviz.render.tree.blocks`; where no rule there finds one, the narrowest waists of the data
# flow, :func:`~.waists.split_at_waists`), named after its exit; ``repeat``: neighbouring blocks of the same
# structure, drawn once as ``×N``; ``fusion``/``body``: a fused computation / a while,
# conditional or call body; ``leaf``: one drawn unit.
#: Kinds that stand for a part of the model (closed: one node; open: a cluster).
STRUCTURAL = frozenset({"scope", "group", "block", "repeat"})
#: Nodes whose children never get blocks: computations keep XLA's own structure.
KEEP = frozenset({"fusion", "body", "leaf"})
#: The scope of values nothing reads (:func:`~.layers.scope_tree`): never a block's exit, so never its name.
UNUSED = "(unused)"
#: The scope of a training step's ops outside every layer that were folded at compile time
#: (:func:`~.bookkeeping.file_folded`): never a block's name either.
FOLDED = "(folded)"


@dataclass(frozen=True)
class Step:
    """One step of a leaf's route from the root: a scope (``name`` as in ``op_name``, ``path``
    the ``/``-joined scope path), a fusion or a body (``name`` its key, ``label`` what to show)."""

    kind: str
    name: str
    path: str = ""
    label: str = ""
    #: a scope standing for one TensorFlow op XLA lowered into several instructions
    op: bool = False


@dataclass(eq=False, slots=True)  # slots: a big module's tree is tens of thousands of nodes, copied per picture
class TreeNode:
    """A node of the tree. ``key`` is unique and stable (the route's names joined by ``/``);
    ``size`` counts the leaves below (1 for a leaf); ``order`` and ``last`` are the positions of
    the first and the last leaf (text order; siblings are ordered by ``last``, but where
    ``in_flow``); ``depth`` counts scope steps only."""

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
    #: its children stand in the order data flows through them (:mod:`~.structure` put them so):
    #: sizing keeps that order instead of sorting them by where they end
    in_flow: bool = False
    #: a block cut at the data flow's narrowest waists (:func:`~.waists.split_at_waists`), not found as a unit of
    #: the model: drawn open, it is no titled cluster (it only splits a long list)
    waist: bool = False
    #: a repeat whose copies do not feed one another (an optimizer's per-tensor updates)
    parallel: bool = False
    #: a block standing for one layer though waists split it (a layer's optimized backward pass,
    #: :mod:`~hloviz.render.tree.backward`): drawn open, it stays a titled cluster
    layer: bool = False
    #: a scope standing for one TensorFlow op outside every layer (``tf.nn.softmax``: thirteen
    #: instructions, :func:`~.layers.scope_tree`): an overview draws it closed
    op: bool = False
    #: drawn closed in an overview once its cut is fitted (:func:`~hloviz.render.cut.cut.fit`): a
    #: training step's loss, a layer whose work runs in both passes, the optimized optimizer, an
    #: inline loss's blocks. Unlike :attr:`op`, the room it would have taken open goes to nothing
    #: else, so closing it moves nothing else in the picture
    shut: bool = False

    @property
    def is_leaf(self) -> bool:
        return self.kind == "leaf"

    @property
    def steps_body(self) -> bool:
        """Is it the body of a loop of training steps, routed by its own scopes (it has a path, the
        loop's op name: :meth:`~.layers._Routes.open_step_bodies`), its layers grouped as a step's are?"""
        return self.kind == "body" and bool(self.path)

    @property
    def sealed(self) -> bool:
        """Its children never get blocks (:data:`KEEP`: a fusion, a body, a leaf; not a :attr:`steps_body`)."""
        return self.kind in KEEP and not self.steps_body

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

    def copy(self) -> Tree:
        """A tree of new nodes with the same fields, sharing :attr:`succ` and :attr:`names`
        (read only): what a cut may regroup (:func:`~hloviz.render.cut.cut.coarsen` splits a
        crowded node, :func:`~hloviz.render.cut.cut.open_in_place` a repeat) without touching
        the tree it came from, so one built tree serves many pictures (:mod:`hloviz.render.reuse`)."""
        twin: dict[int, TreeNode] = {}
        for n in parents_first(self.root):  # each parent's twin made before its children's
            c = TreeNode(n.key, n.kind, n.name, n.path, n.label, twin[id(n.parent)] if n is not self.root else None,
                         n.children, n.size, n.order, n.last, n.depth, n.structured, n.in_flow, n.waist, n.parallel,
                         n.layer, n.op, n.shut)
            twin[id(n)] = c
        for c in twin.values():
            c.children = [twin[id(k)] for k in c.children]
        return Tree(twin[id(self.root)], self.succ, self.names)

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


def leaves_below(node: TreeNode) -> list[TreeNode]:
    """Every leaf under ``node`` (``node`` itself when it is one), in no particular order."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if n.is_leaf:
            out.append(n)
        else:
            stack.extend(n.children)
    return out


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


def size_tree(root: TreeNode) -> None:
    for n in reversed(parents_first(root)):
        if n.kind == "leaf":
            n.size = 1
            n.last = n.order
        else:
            size_from_children(n)
            # siblings by where they end: a layer whose weights XLA prepares first (a batch
            # norm's rsqrt, scheduled at the start) still comes after the layer it reads;
            # a repeat's copies stay in the order they run (structure._fold)
            if n.kind != "repeat" and n.children and not n.in_flow:
                n.children.sort(key=by_end)


def size_from_children(n: TreeNode) -> None:
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


def by_end(c: TreeNode) -> tuple[int, int]:
    return (c.last, c.order)


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


def adjacency(edges: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """``edges`` as leaf → the leaves it feeds, self-arrows left out."""
    succ: dict[str, list[str]] = {}
    for a, b in edges:
        if a != b:
            succ.setdefault(a, []).append(b)
    return succ


def child_edges(node: TreeNode, succ: Mapping[str, list[str]]) -> list[tuple[int, int]]:
    """The arrows between ``node``'s children (the leaf arrows seen through them)."""
    owner = leaf_owners(node.children)
    get = owner.get
    # one comprehension (a leaf outside ``node`` reads as its own owner, so it drops out with
    # the arrows inside one child): the root of a big module has 37k leaves
    return sorted({(i, j) for leaf, i in owner.items() for nxt in succ.get(leaf, ()) if (j := get(nxt, i)) != i})
