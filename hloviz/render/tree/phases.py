"""A training step whose op names carry no scope of its own, cut by phase.

A JAX step written without a module library names its ops ``jit(train_step)/mul`` (forward),
``…/transpose(jvp())/…`` (backward) and, for optax's update, like the forward pass again: nothing
in the names says layer, loss or optimizer. Its units go into one scope per phase, :data:`PHASE_SCOPES`
— ``(forward)``, ``(loss)`` (what the step returns of the forward pass), ``(backward)``,
``(optimizer)`` — each phase found by data flow where the names cannot tell (:func:`by_phase`), and
the forward pass's leaves are where a step's blocks are cut (:func:`forward_leaves`). Used by
:mod:`.layers`' :func:`~.layers.scope_tree`, which also draws closed, in a training step's overview,
a layer whose own work runs in both passes (:func:`close_split_layers`) and a block of loose ops
beside named layers (:func:`close_loose_blocks`): once the cut is fitted, so that nothing opens there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING

from ...analysis.phase_flow import made_of_literals, runs_backward
from ...opcodes import LOOSE_APART, PRODUCTS, RUNS_NOTHING, SCOPE_INPUTS, SCOPE_PLUMBING, TUPLE
from .blocks import MIN_BLOCK
from .dominators import reaching
from .model import Unit, ViewGraph
from .nodes import UNUSED, Step, Tree, TreeNode, by_end, parents_first, size_from_children

if TYPE_CHECKING:
    from ...analysis.scopes import ScopeTree

__all__ = ["PHASE_SCOPES", "by_phase", "close_loose_blocks", "close_one_kernel_scopes", "close_split_layers", "forward_leaves"]


def forward_leaves(g: ViewGraph, scopes: ScopeTree, routes: list[tuple[list[Step], str]]) -> frozenset[str]:
    """The leaves of a training step's forward pass: its blocks are cut along them
    (:func:`~.tree.build_tree`). A leaf :func:`by_phase` put in a phase scope is that phase's;
    another is its first instruction's."""
    phase_of, units = scopes.phase_of, g.units
    out = []
    for route, leaf in routes:
        if route and route[-1].name in PHASE_SCOPES:
            forward = route[-1].name == "(forward)"
        else:
            members = units[int(leaf[1:])].members
            forward = bool(members) and phase_of(members[0]) == "forward"
        if forward:
            out.append(leaf)
    return frozenset(out)


#: The scopes a step without user scopes is split into first (``(forward)`` …).
PHASE_SCOPES = ("(forward)", "(loss)", "(backward)", "(optimizer)")


def by_phase(g: ViewGraph, scopes: ScopeTree, routes: list[tuple[list[Step], str]],
              edges: list[tuple[str, str]]) -> list[tuple[list[Step], str]]:
    """A training step whose op names carry no user scope (``jit(train_step)/mul`` only): its
    units go into a :data:`PHASE_SCOPES` scope by phase, so blocks are found on each phase's own
    graph (the forward pass's residual adds are its cuts; the backward pass reads them all,
    which would hide them). ``edges``: :func:`leaf_edges` of ``g``. (An update the scope tree
    routed into the function's own ``(optimizer)`` scope by data flow is no user scope.)"""
    scoped = sum(1 for route, _ in routes if len(route) > 1 and not _in_top_optimizer(route))
    if scoped * 10 > len(routes) or not scopes.root.phases.get("backward"):
        return routes  # user scopes carry the structure (a few helper jits do not)
    phase = {leaf: scopes.phase_of(g.units[int(leaf[1:])].members[0]) for route, leaf in routes if len(route) <= 1}
    succ: dict[str, list[str]] = {}
    pred: dict[str, list[str]] = {}
    for a, b in edges:
        succ.setdefault(a, []).append(b)
        pred.setdefault(b, []).append(a)
    roots = frozenset(leaf for _, leaf in routes if g.units[int(leaf[1:])].root)
    memo: dict[int, bool] = {}  # a loop that computes gradients serves the optimizer: it keeps its phase
    loops = {k for k in phase if any(runs_backward(m, scopes.phase_of, memo) for m in g.units[int(k[1:])].members)}
    idle = {k for k in phase if all(m.opcode in RUNS_NOTHING or m.opcode in TUPLE for m in g.units[int(k[1:])].members)}
    products = {k for k in phase if any(m.opcode in PRODUCTS for m in g.units[int(k[1:])].members)}
    _after_backward(phase, succ, pred, roots, _reading_nothing(g, phase), keep=loops, idle=idle, products=products)
    _loss_tail(phase, succ, pred, roots, loops | {leaf for _, leaf in routes
                                                  if all(m.opcode in SCOPE_INPUTS for m in g.units[int(leaf[1:])].members)},
               products)
    out = []
    for route, leaf in routes:
        if len(route) > 1 or leaf in roots:  # the ROOT hands out every phase's results: none holds it
            out.append((route, leaf))
            continue
        base = route[0].path + "/" if route else ""
        p = phase[leaf]
        out.append(([*route, Step("scope", f"({p})", f"{base}({p})", p)], leaf))
    return out


def _in_top_optimizer(route: list[Step]) -> bool:
    """Is ``route`` the traced function's own ``(optimizer)`` scope (``jit(f)`` › ``(optimizer)``)?"""
    return len(route) >= 2 and route[1].kind == "scope" and route[1].name == "(optimizer)"


def _reading_nothing(g: ViewGraph, phase: Mapping[str, str]) -> frozenset[str]:
    """The backward leaves of ``phase`` whose every instruction is made of literals alone
    (:func:`hloviz.analysis.phase_flow.made_of_literals`): buffers the backward pass fills, no
    gradients."""
    fixed: dict[int, set[int]] = {}
    out = set()
    for leaf, p in phase.items():
        members = g.units[int(leaf[1:])].members
        if p != "backward" or not members:
            continue
        for m in members:
            comp = m.parent
            if comp is None:
                break
            if id(comp) not in fixed:
                fixed[id(comp)] = made_of_literals(comp)
            if id(m) not in fixed[id(comp)]:
                break
        else:
            out.add(leaf)
    return frozenset(out)


def _after_backward(phase: dict[str, str], succ: Mapping[str, list[str]], pred: Mapping[str, list[str]],
                    roots: frozenset[str], empty: AbstractSet[str] = frozenset(), keep: AbstractSet[str] = frozenset(),
                    idle: AbstractSet[str] = frozenset(), products: AbstractSet[str] = frozenset()) -> None:
    """Work the op names call ``forward`` that reads the backward pass's results is the optimizer's
    (JAX names an update ``jit(train_step)/mul``, like the forward pass's ``…/jvp()/mul``): gradient
    clipping and every update; and what feeds only that work, the ``roots`` aside (the ROOT returns
    the new weights and the loss). ``empty``: backward leaves made of literals alone, no gradients
    (:func:`_reading_nothing`); ``keep``: leaves that keep their phase (loops computing gradients).
    Nor is the optimizer's what the backward pass reads (``idle`` tuples aside: they go with their
    users) — ``tf.recompute_grad`` runs its block again from ``x + 0 · gradient``, its data dependency
    on the gradient — what reaches no result, or the model evaluated at the new weights (a step
    returning ``loss(new_params)``): a product the names call forward there (``products``: leaves with
    a dot or a convolution; :func:`hloviz.analysis.phase_flow.mark_optimizer`), what follows it and
    what feeds it alone."""
    backward = [k for k, p in phase.items() if p == "backward" and k not in empty]
    read, live, after = reaching(backward, pred), reaching(roots, pred), reaching(backward, succ) - set(backward)
    evaluated, more = reaching({k for k in after & products if phase.get(k) == "forward"}, succ), {""}
    while more:
        more = {k for k in after - evaluated if succ.get(k) and all(u in evaluated for u in succ[k])}
        evaluated |= more
    for nxt in after - evaluated:
        if phase.get(nxt) == "forward" and nxt not in keep and (nxt not in read or nxt in idle) and nxt in live:
            phase[nxt] = "optimizer"
    # what feeds only the optimizer is the optimizer's too (the moments' decay ``b1 · m``)
    stack = [k for k, p in phase.items() if p == "optimizer"]
    while stack:
        for src in pred.get(stack.pop(), ()):
            users = [u for u in succ.get(src, ()) if u not in roots]
            if phase.get(src) == "forward" and src not in keep and users and all(
                    phase.get(u) == "optimizer" for u in users):
                phase[src] = "optimizer"
                stack.append(src)


def _loss_tail(phase: dict[str, str], succ: Mapping[str, list[str]], pred: Mapping[str, list[str]],
               roots: frozenset[str], inputs: set[str], products: AbstractSet[str] = frozenset()) -> None:
    """Re-phase as ``loss`` the forward work whose values go only to the ``roots``, computed from
    the model's forward work: the loss a step returns (its cross entropy's gather, sum, mean).
    Left in ``(forward)``, it made the pass one region from input to loss, and a GPT step's
    overview one closed box. From parameters alone, and returned, it is the optimizer's state
    carried on (optax's step count + 1), unless it computes products (``products``: leaves with a
    dot or a convolution; a Newton step's ``f(params)`` it returns). ``inputs``: the units of
    parameters and constants."""

    def feeds_only(key: str, tail: set[str]) -> bool:
        users = succ.get(key, ())
        return bool(users) and all(u in roots or u in tail for u in users)

    tail: set[str] = set()
    stack = [k for k, p in phase.items() if p == "forward" and k not in inputs and feeds_only(k, tail)]
    while stack:
        if (key := stack.pop()) in tail:
            continue
        tail.add(key)
        stack.extend(src for src in pred.get(key, ())
                     if phase.get(src) == "forward" and src not in inputs and src not in tail and feeds_only(src, tail))
    # only what the model's own forward work reaches
    reached: set[str] = set()
    stack = [b for b in tail if b in products or any(a not in tail and a not in inputs and phase.get(a) == "forward"
                                                     for a in pred.get(b, ()))]
    while stack:
        if (key := stack.pop()) not in reached:
            reached.add(key)
            stack.extend(b for b in succ.get(key, ()) if b in tail)
    # and what is made of literals for the loss alone (a mean's element count ``4 * 16``, which
    # an unseen TF step's overview drew in an ``optimizer`` frame)
    grown = True
    while grown:
        more = {k for k in tail - reached if all(u in reached for u in succ.get(k, ()))}
        reached |= more
        grown = bool(more)
    for key in tail:
        phase[key] = "loss" if key in reached else "optimizer"


def _split(kids: list[frozenset[str]]) -> bool:
    """Do children of these phases stand both where the forward pass runs and elsewhere?"""
    return any("forward" in k for k in kids) and any(k and "forward" not in k for k in kids)


def close_one_kernel_scopes(root: TreeNode, g: ViewGraph) -> None:
    """A scope of one leaf that works (it holds more than :data:`~hloviz.opcodes.RUNS_NOTHING`:
    parameters, tuple elements, bitcasts) and the parameters it reads is drawn closed in an
    overview (``shut``): opened, its weights fold into that leaf's box and its frame stands around
    one box (an unseen step's optimized ``pool``, DenseNet121's optimized ``avg_pool``:
    ``fusion kLoop · multiply_bitcast_fusion`` framed, instead of ``avg_pool · 1 kernel · 1
    fusion of 15 ops``), or around that box and its weight's bitcast (a Keras model's optimized
    ``conv2d_4``: ``bitcast`` over ``dot``, where its sibling layers were one box each). Not one
    holding the module's output, which is drawn as such (``ROOT …``, the last box)."""
    def unit(leaf: TreeNode) -> Unit:
        return g.units[int(leaf.name[1:])]

    for node in parents_first(root):
        if (node.kind == "scope" and node.children and all(c.is_leaf for c in node.children)
                and sum(any(m.opcode not in RUNS_NOTHING for m in unit(c).members) for c in node.children) == 1
                and not any(unit(c).root for c in node.children)):
            node.shut = True


def close_split_layers(root: TreeNode, phases_of: Callable[[str], frozenset[str]],
                       work_of: Callable[[str], frozenset[str]]) -> None:
    """In a training step, a scope (a layer: ``conv1``, ``pool_1``) whose children, opened,
    would stand both where the forward pass runs and where only the backward pass or the
    optimizer does is drawn closed in an overview. Opened, its forward boxes stand near the top
    and its gradient's near the bottom, its frame spanning everything between, and each next
    layer's frame nests inside that span: dot stands them side by side (the Keras CNN step's
    frames were a staircase 2,400 pt wide). Closed (``TreeNode.shut``: once the cut is fitted,
    so that nothing else opens in its place), its box counts its kernels by pass; ``--scope``,
    ``--budget 100`` or a click in the explorer opens it.

    Not the model: a scope holding half the picture or more, or two parts named below it (a GAN's
    generator); nor a scope :func:`by_phase` split into its passes (``moments_4`` ›
    ``(forward)``, ``(backward)``: its boxes, unframed, stand where each pass runs); nor the
    ``(unused)`` scope, closed in an overview by a rule of its own.
    ``phases_of(leaf)``: the phases of the instructions leaf ``u<index>`` holds; ``work_of``: those
    but of parameters, which run in no pass (an optimizer's scope of its state and update is
    closed by the parameters' phase, an embedding with its in-place update only without them)."""
    below: dict[int, tuple[frozenset[str], frozenset[str]]] = {}
    layers = []  # marked after the walk: a model's layers, once closed, would not name parts of it
    for node in reversed(parents_first(root)):
        if node.is_leaf:
            below[id(node)] = (phases_of(node.name), work_of(node.name))
            continue
        kids = [below[id(c)] for c in node.children]
        below[id(node)] = (frozenset().union(*(k[0] for k in kids)), frozenset().union(*(k[1] for k in kids)))
        if (node.kind == "scope" and node.name not in (*PHASE_SCOPES, UNUSED) and node.size * 2 < root.size
                and any(_split([k[i] for k in kids]) for i in (0, 1))
                and sum(c.name in PHASE_SCOPES for c in node.children) < 2
                and sum(_names_a_part(c) for c in node.children) < 2):
            layers.append(node)
    for node in layers:
        node.shut = True


def close_loose_blocks(tree: Tree, g: ViewGraph, phases_of: Callable[[str], frozenset[str]]) -> None:
    """In a training step whose layers are named, a block of loose ops beside them (found by
    structure, holding no named part: a loss written inline, its gradient) is drawn closed in an
    overview once the cut is fitted (``TreeNode.shut``). Opened where room was left, an unseen
    Flax RNN classifier's inline cross entropy was a column of thirteen single-op boxes beside its
    model (closed before the cut was fitted, their room would open other scopes). Beside JAX's
    ``jit(step)`` too; a step without named layers is cut by phase (:func:`by_phase`) instead.

    The ROOT (the output, the picture's last box) stands alone: a block holding it beside its
    own block's work (a loss written inline and returned) gives it up to the level above first
    (:func:`_give_up_root`; an unseen autoencoder's ``tf.reduce_mean(tf.square(…))`` was nine
    single-op boxes above its ROOT). Not a block mostly of parameters, constants, reshapes and
    copies (the function's argument and result handling, which goes into the box whose values
    it hands out: an unseen step's results of a ``tf.cond`` applying Adam were drawn apart from
    it). ``g``: the graph whose units the leaves ``u<index>`` are."""
    root = tree.root
    tops = [root, *(c for c in root.children if c.kind == "scope" and c.name.startswith(("jit(", "pjit(")))]
    kids = [c for top in tops for c in top.children if c.kind != "scope" or not c.name.startswith(("jit(", "pjit("))]
    if not any(c.kind in ("scope", "group") and _names_a_part(c) for c in kids):
        return  # no layer is named beside them
    # loose ops beside the layers, optimized too, where each is a kernel (a ViT step's inline
    # cross entropy was eight single fusion boxes between its head and its labels) …
    kids = [*kids, *(b for top in tops for b in _block_loose_ops(tree, top, g, phases_of))]
    # … and inside the model's own scope, a block of one pass each (a Flax module's inline
    # activations, its ``.mean()``, their gradients; TensorFlow's AddN and Sum of a Keras
    # transformer's gradients were fourteen single-op boxes below its layers)
    models = [c for c in kids if c.kind == "scope" and sum(_names_a_part(k) for k in c.children) >= 2]
    kids = [*kids, *(b for top in models for b in _block_loose_ops(tree, top, g, phases_of, one_pass=True))]
    for c in kids:
        if c.kind not in ("block", "repeat") or _names_a_part(c):
            continue
        leaves = [n for n in parents_first(c) if n.is_leaf]
        roles = [_role(g.units[int(n.name[1:])]) for n in leaves]
        if "root" in roles and c.kind == "block":
            rest = [r for r in roles if r != "root"]
            if rest.count("work") < MIN_BLOCK or rest.count("plumbing") * 2 > len(rest):
                continue
            _give_up_root(tree, c, leaves[roles.index("root")])
            roles = rest
        if "root" not in roles and roles.count("plumbing") * 2 <= len(roles):
            c.shut = True


#: Loose ops, connected by their arrows, that :func:`_block_loose_ops` makes a block of: fewer stay boxes.
_LOOSE_BLOCK = 3


def _block_loose_ops(tree: Tree, top: TreeNode, g: ViewGraph, phases_of: Callable[[str], frozenset[str]],
                     one_pass: bool = False) -> list[TreeNode]:
    """Blocks of ``top``'s loose ops (leaves of its own that do work, and the reshapes and copies
    between them, a reshape of the labels among them; not an input, a loop or a branch: a
    ``lax.cond`` smoothing the labels of an unseen Flax step's loss stays a box between its
    blocks), one per run of them connected by their arrows, holding
    :data:`_LOOSE_BLOCK` or more that do work: what structure leaves unblocked
    beside a few named scopes (a node is cut into blocks only when crowded). An unseen distilled
    student's step drew its loss's sum (``mul``, ``mul_1``, ``add``) and the softmax's gradient
    (``Sum`` ×5, ``sub``, ``Mul``) as fourteen single-op boxes below its layers. A run holds no
    forward work beside the optimizer's (``phases_of``: a step counter's increment, named like
    the forward pass, is read by Adam's bias corrections; one block of both stood among the
    forward pass, by its earliest phase). ``one_pass`` (the model's own scope): a run holds work
    of one pass only — an activation written inline runs forward right after its layer and its
    gradient far below, so a block of both stood where the forward pass runs (a Keras CNN's
    ``tf.nn.relu`` after its stem, with its ``ReluGrad``, ``AddN`` and ``select``)."""
    units = {c.name: g.units[int(c.name[1:])] for c in top.children if c.is_leaf}
    roles = {name: _role(u) for name, u in units.items() if not any(m.opcode in LOOSE_APART for m in u.members)}
    loose = [c for c in top.children if roles.get(c.name, "root") != "root"]  # reshapes between them too
    if sum(1 for r in roles.values() if r == "work") < _LOOSE_BLOCK:
        return []
    at = {c.name: i for i, c in enumerate(loose)}
    up = list(range(len(loose)))
    phases = [phases_of(c.name) for c in loose]  # of each run, at its representative

    def find(i: int) -> int:
        while up[i] != i:
            up[i] = i = up[up[i]]
        return i

    for c in loose:
        for nxt in tree.succ.get(c.name, ()):
            j = at.get(nxt)
            if j is None:
                continue
            a, b = find(at[c.name]), find(j)
            both = phases[a] | phases[b]
            if a != b and not ("forward" in both and "optimizer" in both) and (len(both) < 2 or not one_pass):
                up[b], phases[a] = a, both
    runs: dict[int, list[TreeNode]] = {}
    for i, c in enumerate(loose):
        runs.setdefault(find(i), []).append(c)
    blocks = []
    stands: dict[int, TreeNode | None] = {}  # id of a member → its block where its exit stood, else None
    for members in runs.values():
        exit_leaf = max(members, key=lambda n: (n.last, n.order))
        key = f"{top.key}/b:{exit_leaf.name}" if top.key else f"b:{exit_leaf.name}"
        if sum(1 for n in members if roles[n.name] == "work") < _LOOSE_BLOCK or key in tree.nodes:
            continue
        name = tree.names.get(exit_leaf.name, exit_leaf.name)
        block = TreeNode(key, "block", name, top.path, name, top, depth=top.depth)
        for leaf in sorted(members, key=by_end):
            stands[id(leaf)] = block if leaf is exit_leaf else None
            _rehome(tree, leaf, block)
            block.children.append(leaf)
        size_from_children(block)
        tree.nodes[key] = block
        blocks.append(block)
    if stands:  # one pass over the children, however many there are
        top.children = [b for c in top.children if (b := stands.get(id(c), c)) is not None]
    return blocks


def _rehome(tree: Tree, leaf: TreeNode, parent: TreeNode) -> None:
    """``leaf`` belongs to ``parent`` now: its key route-shaped under it, in :attr:`Tree.nodes`
    (the caller puts it among ``parent``'s children)."""
    del tree.nodes[leaf.key]
    leaf.parent, leaf.key = parent, f"{parent.key}/{leaf.name}" if parent.key else leaf.name
    tree.nodes[leaf.key] = leaf


def _give_up_root(tree: Tree, block: TreeNode, leaf: TreeNode) -> None:
    """Move the ROOT's ``leaf`` out of ``block`` to stand after it, in the block's parent; the
    block, named by its exit (the ROOT), is named by its new last leaf."""
    parent, top = leaf.parent, block.parent
    assert parent is not None and top is not None
    parent.children.remove(leaf)
    _rehome(tree, leaf, top)
    top.children.insert(top.children.index(block) + 1, leaf)
    node: TreeNode | None = parent
    while node is not None and node is not top:
        size_from_children(node)
        node = node.parent
    last = max((n for n in block.children if n.is_leaf), key=lambda n: (n.last, n.order), default=None)
    if last is not None:
        block.name = block.label = tree.names.get(last.name, last.name)


def _role(u: Unit) -> str:
    """What unit ``u`` holds, for :func:`close_loose_blocks`: ``root``, ``plumbing`` or ``work``."""
    if u.root:
        return "root"  # the picture's last box, the output, stands alone
    return "plumbing" if all(m.opcode in SCOPE_INPUTS or m.opcode in SCOPE_PLUMBING for m in u.members) else "work"


def _names_a_part(node: TreeNode) -> bool:
    """Is ``node`` a part a user named (a scope or a group of them, not a TensorFlow op's nor the
    ``(unused)`` one), or a block or repeat holding one?"""
    for n in parents_first(node):
        if n.kind in ("scope", "group") and not n.op and n.name != UNUSED and n.name not in PHASE_SCOPES:
            return True
    return False
