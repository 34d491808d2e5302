"""A picture is a *cut* through the scope tree (:mod:`~hloviz.render.tree.tree`), and fitting it.

A :class:`Cut` is a set of tree nodes that covers every leaf exactly once: each node of the cut
becomes one node of the picture; every node above the cut is *open* and is drawn as a cluster
around what it holds.

Fitting a picture to its node budget, ``--depth``, ``--scope`` and an explorer's
expand/collapse are all "move the cut" (:func:`fit`, :meth:`Cut.expand`, :meth:`Cut.collapse`,
:func:`open_in_place`); the arrows between the nodes of a cut are the instruction graph's arrows
seen through :meth:`Cut.owner` (a quotient graph, :meth:`Cut.edges`). This is stage 3 of
design.md's pipeline (*cut*), apart from the tree it moves through so that each reads alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ...analysis.opnames import is_optimizer_scope
from ..tree.nodes import UNUSED, Tree, TreeNode, rekey, size_tree
from ..tree.phases import PHASE_SCOPES
from ..tree.waists import WHOLE, around_steps, room_for_steps, split_at_waists, steps_first

__all__ = ["Cut", "coarsen", "fit", "open_in_place", "overview_closed"]


def coarsen(tree: Tree, budget: int, *, max_depth: int | None = None) -> Tree:
    """``tree`` with one more level of blocks, bounded at the data flow's narrowest waists
    (:func:`~hloviz.render.tree.waists.split_at_waists`), where the coarsest cut worth drawing costs more than ``budget`` nodes:
    the root's children, or — when one child holds nearly everything (the model's own scope,
    JAX's ``jit(f)``) and so says nothing closed — that child's children, and so on down.
    Returns ``tree`` itself when nothing needs it."""
    budget = max(budget, 1)
    if room_for_steps(tree.root, budget, tree.succ, tree.names):
        return Tree(tree.root, tree.succ, tree.names)
    node, used = tree.root, 0
    while node.children:
        kids = list(node.children)
        cost = used + sum(_cost(c) for c in kids)
        if cost > budget and len(kids) >= 2 and budget - used < 2 and node is not tree.root:
            break  # room for one node only: one block of all of them would be ``node`` itself, renamed
        if cost > budget and len(kids) >= 2:
            loose = [c for c in kids if c.is_leaf]
            room = budget - used - (len(kids) - len(loose))
            if 2 <= room < len(loose) and sum(c.kind == "scope" for c in kids) >= 2:
                # a model's layers beside loose ops (an inline ``nn.relu`` between two ``Dense``,
                # its mask in the backward pass): the loose ops are blocked, every layer stays
                # a box of its own (cut with them at waists, a VAE's ``mean`` box held three layers)
                split_at_waists(node, loose, room, tree.succ, tree.names, most=room)
            else:
                split_at_waists(node, kids, max(budget - used, 2), tree.succ, tree.names, most=max(budget - used, 1))
            return Tree(tree.root, tree.succ, tree.names)
        big = max(kids, key=lambda c: (c.size, -c.order))
        # (or a model holding most of them, whose children the rest of the budget cannot draw: a
        # training step's, beside a big optimizer, was drawn closed, the budget going to the zeros
        # TensorFlow's gradients leave unread; a contrastive step's Encoder, beside its loss's ops)
        crowded = ((big.in_flow or sum(c.kind == "scope" for c in big.children) >= 2) and big.size * 2 > node.size
                   and len(big.children) > budget - (cost - _cost(big)))
        if not _expandable(big, max_depth) or (big.kind in WHOLE and not big.steps_body) or (big.size * 10 < node.size * 9 and not crowded):
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
    if (CONDITION in closed and node.kind == "body" and node.label.startswith(f"{CONDITION} of ")
            and len(node.children) <= 2):
        return False  # (a loop's condition, ``tree.layers`` labels it so, of one compare and its tuple)
    return not (node.kind == "scope" and max_depth is not None and node.depth >= max_depth)


#: The budget from which the ``(unused)`` scope (values nothing reads: ``layers._unused``) and a
#: TensorFlow op's scope (``tf.nn.softmax`` after the model: ``layers._one_op``) open: a detailed
#: picture's, not an overview's (24) nor an explorer's first view (at most 60).
UNUSED_OPENS = 100


def _unused_closed(node: TreeNode, budget: int) -> bool:
    return budget < UNUSED_OPENS and ((node.kind == "scope" and (node.name == UNUSED or node.op)) or around_steps(node))


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


#: A repeat of more parallel copies than this stays closed in :func:`fit`: open, its copies would stand
#: side by side in one row (an optimizer's 132 updates: 57,000 pt wide). :meth:`Cut.expand` opens it.
WIDE_REPEAT = 16


def _wide(node: TreeNode) -> bool:
    return node.kind == "repeat" and node.parallel and len(node.children) > WIDE_REPEAT


#: Nodes that stand for several named parts; :func:`fit` opens them first.
_GROUPS = frozenset({"group", "block", "repeat"})


def overview_closed(tree: Tree) -> frozenset[str]:
    """The kinds of node an overview keeps closed (:func:`fit`'s ``closed``): a fusion, where op
    names name a part of the model (a layer, a Flax module, a loop's scope; not only the function
    JAX traced, ``jit(f)``). There a kernel is the smallest box and the layers the structure.
    Opened, a small model's fusions stood as frames of one or two instructions among its layers,
    with its weights as boxes beside them (their reader inside a fusion), out of program order (a
    Flax MLP's, a small Keras CNN's optimized column). Where nothing is named but the function
    (the 1000 chained additions, ``jit(narrow)``), the open fusion is the picture's point: which
    ops went into one kernel. There, too, a loop's condition of one kernel or op (a counter's
    ``compare``) stays folded into its loop's box, which names it: a Keras LSTM's optimized
    column opened ``condition of while.3``, the cheaper to open, while the body running the
    cell's kernels, too big for the boxes left, stayed closed. A condition that computes more
    (Newton's convergence test before optimization) still opens; so do other small bodies (closed
    too, the boxes they left opened a JAX scan's library calls side by side, 1,415 pt wide → 1,784)."""
    if any(not (n.label or n.name).startswith(("jit(", "pjit(")) for n in tree.scopes()):
        return frozenset({"fusion", CONDITION})
    return frozenset()


#: In :func:`fit`'s ``closed``: a loop's condition of one kernel stays closed (a ``body`` so labelled).
CONDITION = "condition"


def fit(tree: Tree, budget: int, *, max_depth: int | None = None, closed: frozenset[str] = frozenset()) -> Cut:
    """The deepest cut of ``tree`` that fits ``budget`` nodes, level by level.

    The root is always open. Each round takes the expandable nodes of the cut nearest the root
    and opens them all if the result still fits; otherwise it opens the cheapest ones (fewest
    new nodes first, then text order) while they fit (groups of layers first), and stops — so a
    module larger than the budget fills it instead of drawing a fraction of it. ``max_depth``
    keeps scopes at that depth closed (``--depth``); ``closed`` keeps nodes of those kinds
    closed (``fusion``, ``body``: the coarser view after a Graphviz timeout). The cut is over
    budget only when the root's children alone are (:func:`coarsen` first prevents that). A loop of
    steps' body and its model open first (:func:`~hloviz.render.tree.waists.steps_first`)."""
    cut = Cut(tree, frozenset(c.key for c in tree.root.children) or frozenset({tree.root.key}))
    first, hold = steps_first(tree.root)
    for node in first:
        if not _expandable(node, max_depth, closed) or (opened := cut.expand(node.key)).count > budget:
            break
        cut = opened
    overview = budget < UNUSED_OPENS  # (where nothing more of that loop opens)
    held = frozenset(k for n in hold for k in tree.subtree_root(n).nodes) - {n.key for n in first} if overview else frozenset()
    cut = _deepen(cut, budget, max_depth=max_depth, closed=closed, held=held)
    return _shut(cut) if overview else cut


def _shut(cut: Cut) -> Cut:
    """``cut`` with each open node marked ``shut`` drawn closed (a training step's loss, a layer
    split between the two passes, the optimized optimizer, an inline loss's blocks:
    :mod:`~hloviz.render.tree.phases`, :mod:`~hloviz.render.tree.bookkeeping`), outermost first.
    After fitting, not before: the room it took goes to nothing else (closed before, its room
    opened the next nodes in line — an unseen encoder's repeat of layers into
    ``mlp_down_2 · block of 2`` frames)."""
    for node in sorted((n for n in cut.open() if n.shut), key=lambda n: sum(1 for _ in n.ancestors())):
        if not any(a.key in cut.keys for a in node.ancestors()):  # (not inside one closed already)
            cut = cut.collapse(node.key)
    return cut


def _deepen(cut: Cut, budget: int, *, max_depth: int | None = None, closed: frozenset[str] = frozenset(),
            under: TreeNode | None = None, held: frozenset[str] = frozenset()) -> Cut:
    """Open nodes of ``cut`` level by level while it fits ``budget`` (see :func:`fit`);
    ``under``: only nodes below that one; ``held``: never those."""
    tree, count, keys = cut.tree, cut.count, set(cut.keys)
    level = _levels(tree)
    inside = set(tree.subtree_root(under).nodes) if under is not None else None
    passed: set[str] = set()  # shut nodes a round could not open: closed, they hold back no deeper round
    while True:
        # a node that would not fit even in an empty picture (an optimizer's ×2250 updates)
        # stays closed without holding back the nodes beside it
        cands = [tree.nodes[k] for k in keys if (inside is None or k in inside) and k not in passed and k not in held
                 and _expandable(tree.nodes[k], max_depth, closed) and _delta(tree.nodes[k]) < budget
                 and not _wide(tree.nodes[k]) and not _unused_closed(tree.nodes[k], budget)
                 and (not passed or (tree.nodes[k].kind != "repeat" and _only_named_parts(tree.nodes[k])))]
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
        # groups of layers (and blocks, repeats) before the layers' own insides: a picture that cannot
        # open everything names every layer first … but a model's own scope (JAX's ``ViT``) before a
        # block or repeat of loose ops no scope names (an optimizer's per-weight updates ×8, a loss's
        # dozen ops): opened, those are rows of anonymous boxes crowding out the model (issue 33)
        scoped = any(n.kind == "scope" for n in cands)

        def rank(n: TreeNode, scoped: bool = scoped) -> tuple:
            # … and a step's loss (the few ops after the model: ``phases.PHASE_SCOPES``) too. First of
            # all: a step's forward pass where that is the whole model, and a scope holding most of the
            # picture, before the backward pass and the optimizer, which cost fewer boxes (a Flax NNX
            # step drew its model one closed box beside ten of its backward pass; a Keras transformer's,
            # under six of Adam's)
            if _whole_forward(n) or _most_of_the_model(n, tree):
                return (-1, _delta(n), n.last, n.order)
            if (n.kind in _GROUPS and scoped and not _names_a_part(n)) or (n.kind == "scope" and n.name == "(loss)"):
                return (2, _delta(n), n.last, n.order)
            return (0 if n.kind in _GROUPS and not n.waist else 1, _delta(n), n.last, n.order)

        cands.sort(key=rank)
        left: list[TreeNode] = []
        # (an overview's shut nodes that fit are drawn closed anyway: their room is held in this round
        # only, not from the next rounds' named parts — a diffusion step's PRNG ops, its U-Net's layers)
        spared: list[TreeNode] = []
        while cands:
            n = cands.pop(0)
            d = _delta(n)
            if (over := count + sum(map(_delta, spared)) + d > budget) or (n.shut and budget < UNUSED_OPENS):
                (left if over else spared).append(n)
                continue  # a cheaper one after it may still fit (groups come first)
            keys.discard(n.key)
            keys.update(c.key for c in n.children)
            count += d
            if n.kind == "repeat":  # its copies stand at its level: they compete in this round
                cands = sorted(cands + [c for c in n.children if _expandable(c, max_depth, closed)], key=rank)
        # what this round could not open is all drawn closed anyway (a training step's loss, ``shut``):
        # the next levels go on, opening only what shows named parts (a DenseNet121 step's stages into
        # their dense blocks ×10, not a backward block into its loose adds) and no repeat
        if not left or not all(n.shut for n in left):
            break
        passed.update(n.key for n in left + spared)
    return Cut(tree, frozenset(keys))


def _whole_forward(node: TreeNode) -> bool:
    """Is ``node`` a training step's forward pass as one phase scope (``(forward)``,
    :mod:`~hloviz.render.tree.phases`), with no scope beside it holding forward work of its own
    (a hand-written TensorFlow model's ``moments_4`` › ``(forward)``, ``(backward)``: there the
    phase scope holds only what no layer names)?"""
    if node.kind != "scope" or node.name != "(forward)" or node.parent is None:
        return False
    return not any(s is not node and s.kind == "scope" and any(c.kind == "scope" and c.name == "(forward)"
                                                               for c in s.children) for s in node.parent.children)


def _most_of_the_model(node: TreeNode, tree: Tree) -> bool:
    """Is ``node`` a scope of the model holding more than half of the picture's leaves (a Keras
    model's own scope beside its loss and optimizer), not a pass of a step
    (:data:`~hloviz.render.tree.phases.PHASE_SCOPES`) nor an optimizer's scope: a small JAX
    step's update, opened first, drew one of its blocks (``forward · block of 3``, the step
    count) after the optimizer's, under the loss."""
    if node.steps_body:  # the body of a loop of steps: its layers
        return True
    if node.kind != "scope" or node.size * 2 <= tree.root.size or node.name in PHASE_SCOPES:
        return False
    return not is_optimizer_scope(node.name)


def _only_named_parts(node: TreeNode) -> bool:
    """Does opening ``node`` show two or more named parts of the model (each child a scope, a group,
    or a block or repeat with one inside: :func:`_names_a_part`), at most one loose op among them
    (a U-Net's ``concatenate`` of its skip) and no pass of a step alone (a Flax ``nn.scan`` layer's
    scope holding only its weights' updates, one ``Dense_0`` › ``(optimizer)`` a weight)?"""
    def named(c: TreeNode) -> bool:
        return (c.kind in ("scope", "group") or (c.kind in _GROUPS and _names_a_part(c))) and not _one_pass(c)

    loose = [c for c in node.children if not named(c)]
    return len(node.children) - len(loose) > 1 and (not loose or (len(loose) == 1 and loose[0].is_leaf))


def _one_pass(node: TreeNode) -> bool:
    """Is ``node`` a pass's scope (``(optimizer)``), or a scope holding only one?"""
    while node.kind == "scope" and len(node.children) == 1 and node.name not in PHASE_SCOPES:
        node = node.children[0]
    return node.kind == "scope" and node.name in PHASE_SCOPES


def _names_a_part(node: TreeNode) -> bool:
    """Does opening ``node`` show a part of the model by its name: a scope or group, or a block
    or repeat with one inside (not only loose ops, named after an instruction)?"""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.kind in ("scope", "group"):
            return True
        stack.extend(c for c in n.children if not c.is_leaf)
    return False


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
        size_tree(node)
        tree = Tree(tree.root, tree.succ, tree.names)
        cut = Cut(tree, cut.keys)
    opened = cut.expand(key)
    first = node.children[0] if node.kind == "repeat" else node
    return tree, _deepen(opened, opened.count + budget, under=first)


