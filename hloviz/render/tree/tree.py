"""The scope tree of one drawing: scope → sub-scopes → fusions → drawn units, and how it is built.

The tree's leaves are what a fully expanded picture draws (one instruction, or a chain of one
op); its inner nodes are the module's own structure — the scopes of ``metadata.op_name``
(Keras layers, ``tf.name_scope``, JAX name stacks), groups of sibling layers that share a name
prefix (``block_5_*``), blocks cut at the data flow's narrowest waists where nothing else splits
a crowded scope, and the fusions and while/call bodies that hold instructions.

This module is stage 1 of design.md's pipeline (*tree*): it builds the tree
(:func:`build_tree`) and nothing more. Which of its nodes a picture draws is a cut through it
(:mod:`~hloviz.render.cut.cut`); blocks and repeats found by the graph's structure come from
:mod:`~hloviz.render.tree.structure`, groups by name prefix from :mod:`.prefix_groups`, blocks
at the narrowest waists from :mod:`.waists`; the nodes themselves are :mod:`.nodes`' (re-exported
here, where the rest of hloviz reads them).

Nothing here knows HLO: a tree is built from ``(route, leaf key)`` pairs, so the same code
serves the picture (leaves are drawn units) and an HTML explorer (leaves are instructions).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from .backward import split_backward
from .nodes import STRUCTURAL, Step, Tree, TreeNode, adjacency, leaf_owners, parents_first, rekey, size_tree
from .prefix_groups import group_by_prefix
from .repeat_runs import fold_repeats
from .structure import split_by_structure
from .waists import split_at_waists, split_crowded

__all__ = ["STRUCTURAL", "Step", "Tree", "TreeNode", "build_tree", "leaf_owners", "parents_first", "rekey"]


def build_tree(leaves: Iterable[tuple[Sequence[Step], str]], *, group_at: int = 10, run_at: int = 24,
               edges: Sequence[tuple[str, str]] | None = None, label: Mapping[str, str] | None = None,
               names: Mapping[str, str] | None = None, forward: frozenset[str] | None = None,
               output: str | None = None, apart: Sequence[str] = ()) -> Tree:
    """The tree of ``(route, leaf key)`` pairs, leaves in the order given.

    A scope with more than ``group_at`` children is split, by the first rule that works:

    * ``edges`` given (arrows between leaf keys): blocks found by structure
      (:mod:`~hloviz.render.tree.blocks`: cut vertices, components, the dominator tree), unless the
      children's names already group them the same way;
    * sibling scopes grouped by shared name prefix (``block_5_expand``, ``block_5_depthwise``…
      under ``block_5``; recursively, so ResNet's ``conv2_block1_1_conv`` sits under ``conv2`` ›
      ``conv2_block1``): a picture that cannot show 160 layers can show 20 blocks — only
      siblings that run one after another (``succ``: the unscoped ops closing a group join it);
    * a node still holding more than ``run_at`` leaves (a chain, where every op is a cut; ops
      beside a few named scopes) has them split where the data flow is narrowest
      (:func:`~.waists.split_at_waists`): blocks of at most ``run_at`` members, each ending where the fewest
      arrows cross to the next.

    Then neighbouring scopes or blocks of the same structure (``label`` names each leaf's kind,
    for the Weisfeiler–Lehman hash) are folded into a ``repeat`` node. ``names`` (leaf → what
    to call it) names a block that ends in a leaf. ``forward``: a training step's forward-pass
    leaves; a node holding them is cut into blocks along the forward arrows alone, its children
    in the order that pass runs through them (``in_flow``), so its blocks are runs of layers.
    ``output``: the ROOT's leaf, which stays a box of its own; so do the top-level leaves
    ``apart`` (a loop of training steps, whose body hangs open below it: in a block with the
    step's results, the block stood after the optimizer and the body above it).
    """
    if edges is not None:
        leaves = prepared_where_read(list(leaves), edges)
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
                                                 order=order, depth=depth, op=step.op)
                    parent.children.append(node)
                parent = node
            ends[id(route)] = (route, parent, key)
        node = TreeNode(f"{key}/{leaf}" if key else leaf, "leaf", leaf, parent.path, "", parent, order=order,
                        depth=parent.depth)
        parent.children.append(node)
    succ = adjacency(edges or ())
    names = names or {}
    # a training step's forward arrows alone: the backward pass's run from each layer back to
    # the one before it, joining every layer to its neighbours both ways
    flow = None if forward is None or edges is None else adjacency(
        (a, b) for a, b in edges if a in forward and b in forward)
    if edges is not None:
        # its layers are cut into blocks along its forward pass (a phase without forward work
        # is cut along its own arrows), and its repeats' copies stand in that pass's order
        split_by_structure(root, edges, group_at=group_at, run_at=run_at, names=names, label=label, succ=succ,
                           forward=flow)
    group_by_prefix(root, group_at, succ, output)
    _left_beside_the_model(root, run_at, group_at, succ, names, output)
    size_tree(root)
    if split_crowded(root, run_at, group_at, succ, names, every=False, label=label):
        size_tree(root)
    if edges is not None:
        fold_repeats(root, edges, label or {}, succ, flow)
        size_tree(root)
        if split_backward(root, succ):  # the optimized backward pass, one block per layer
            split_crowded(root, run_at, group_at, succ, names, every=False, label=label)
            size_tree(root)
    if split_crowded(root, run_at, group_at, succ, names, every=True, label=label) and edges is not None:
        fold_repeats(root, edges, label or {}, succ, flow)  # blocks cut at a period's starts fold too
        size_tree(root)
    for leaf in [*apart, output] if apart else ():  # (the ROOT too: a block holding it stood beside the body)
        _output_apart(root, leaf, names)
    if apart:
        size_tree(root)
    _mark_waist_repeats(root)
    return Tree(root, succ, names)


def prepared_where_read(leaves: list[tuple[Sequence[Step], str]],
                        edges: Sequence[tuple[str, str]]) -> list[tuple[Sequence[Step], str]]:
    """``leaves`` with each one the main input does not reach (:func:`_from_main_input`:
    preparation of parameters, a batch norm's ``Rsqrt`` of its moving variance; a dropout's
    random bits from its seed; constants) moved to just before the first leaf that reads it
    and is reached. The order the tree gives its children (their ends, the waists between
    them) should be where the work runs, and XLA schedules preparation anywhere, mostly first:
    NASNet's optimized column put 19 batch norms' ``Rsqrt`` from all over the network in its
    first block, with the stem, and drew arrows from there to every cell. Parameters, what no
    scope holds and what nothing reached reads stay where they are."""
    preds: dict[str, list[str]] = {}
    succ: dict[str, list[str]] = {}
    for a, b in edges:
        if a != b:
            preds.setdefault(b, []).append(a)
            succ.setdefault(a, []).append(b)
    at = {leaf: i for i, (_, leaf) in enumerate(leaves)}
    prep = set(at) - _from_main_input(at, preds, succ)
    # each one's first reader that is not preparation, through chains of it (users first)
    first: dict[str, int] = {}
    changed = bool(prep)
    while changed:
        changed = False
        for _, leaf in reversed(leaves):
            if leaf not in prep:
                continue
            readers = [first.get(u) if u in prep else at.get(u) for u in succ.get(leaf, ())]
            known = [r for r in readers if r is not None]
            if known and first.get(leaf) != min(known):
                first[leaf] = min(known)
                changed = True
    if not first:
        return leaves
    # only what a scope holds and computes: an op of no scope (a weight's bitcast) is placed by
    # the rules that read the text's order (the runs of a group, the overview's folds), and a
    # parameter already stands with what reads it (:func:`~.layers.unit_routes`)
    moved = {leaf for route, leaf in leaves if route and leaf in first and preds.get(leaf)}
    before: dict[int, list[tuple[Sequence[Step], str]]] = {}
    for rl in leaves:
        if rl[1] in moved:
            before.setdefault(first[rl[1]], []).append(rl)
    out: list[tuple[Sequence[Step], str]] = []
    for i, rl in enumerate(leaves):
        out.extend(before.get(i, ()))
        if rl[1] not in moved:
            out.append(rl)
    return out


def _from_main_input(at: Mapping[str, int], preds: Mapping[str, list[str]],
                     succ: Mapping[str, list[str]]) -> set[str]:
    """The leaves the main input reaches: of the leaves no other feeds, the one with the longest
    path ahead of it (the data; the others are parameters' preparation, constants)."""
    left = {leaf: len(preds.get(leaf, ())) for leaf in at}
    ready = [leaf for leaf, n in left.items() if n == 0]
    order = []
    while ready:
        leaf = ready.pop()
        order.append(leaf)
        for u in succ.get(leaf, ()):
            if u in left:
                left[u] -= 1
                if left[u] == 0:
                    ready.append(u)
    height: dict[str, int] = {}
    for leaf in reversed(order):
        height[leaf] = max((height.get(u, 0) + 1 for u in succ.get(leaf, ())), default=0)
    sources = [leaf for leaf in order if not preds.get(leaf)]
    if not sources:
        return set(at)
    main = max(sources, key=lambda leaf: (height[leaf], -at[leaf]))
    reached, stack = {main}, [main]
    while stack:
        for u in succ.get(stack.pop(), ()):
            if u not in reached:
                reached.add(u)
                stack.append(u)
    return reached


def _left_beside_the_model(root: TreeNode, run_at: int, group_at: int, succ: Mapping[str, Sequence[str]],
                           names: Mapping[str, str], output: str | None = None) -> None:
    """The root's ops a training step's model did not take (:func:`~.prefix_groups.group_by_prefix`:
    the zeros TensorFlow's gradients make and nothing reads, a step counter) are blocked at
    their waists once there are more than ``group_at`` of them, as :func:`split_crowded` blocks
    more than ``run_at``: each would be a box of its own, and an EfficientNetB0 step's 15 left
    its model one closed box to stay within the budget. So are those beside a scope holding
    most of the module (a siamese model's loss, written op by op in the step: 20 boxes beside
    the model drawn closed), and, as one block, fewer of them where they alone keep that scope
    from opening in an overview (:func:`_crowding_out`). The ROOT (``output``) is never blocked
    with them: an Adafactor step's eleven unused slots it returns drew it as ``parameter · block of 12``."""
    if not any(c.in_flow for c in root.children) and _holds_most(root) is None:
        return
    total = _leaf_count(root)
    node: TreeNode | None = root
    while node is not None:
        # … and so are the loose ops of that scope beside more than ``group_at`` named layers,
        # where with them it has more children than a picture's budget can open (a wide-and-deep
        # model's ``ids[:, i]`` slices and their gradients: 13 boxes beside 15 layers left the
        # model one closed box beside its loss, opened op by op). Where the ops are most of
        # what it holds (a ``tf.scan``'s), they are its content: blocks by structure show them.
        leaves = [c for c in node.children if c.is_leaf]
        beside_layers = len(node.children) - len(leaves) > group_at and len(node.children) > run_at
        if group_at < len(leaves) <= run_at and (node is root or beside_layers):
            split_at_waists(node, leaves, run_at, succ, names, most=max(1, len(leaves) // group_at))
            _output_apart(node, output, names)
        elif node is root and _crowding_out(root, read := [c for c in leaves if succ.get(c.name)], total, run_at):
            split_at_waists(node, read, run_at, succ, names, most=1)  # (the output stays the last box)
        node = _holds_most(node, total)
        node = node if node is not None and node.kind == "scope" else None


def _output_apart(node: TreeNode, output: str | None, names: Mapping[str, str]) -> None:
    """Take the ROOT's leaf ``output`` out of the block a split at waists put it in, back among
    ``node``'s children (sized by the caller); the block, named after its last member as such
    blocks are, is named after the one now last."""
    for block in node.children:
        if block.kind != "block":
            continue
        kept = [c for c in block.children if c.name != output]
        if len(kept) == len(block.children):
            continue
        leaf = next(c for c in block.children if c.name == output)
        block.children = kept
        last = kept[-1]
        block.name = block.label = names.get(last.name, last.name) if last.is_leaf else last.label or last.name
        block.key = f"{node.key}/b:{last.key.rsplit('/', 1)[-1]}" if node.key else f"b:{last.key.rsplit('/', 1)[-1]}"
        leaf.parent = node
        node.children.append(leaf)
        rekey(node)
        return


def _crowding_out(root: TreeNode, leaves: Sequence[TreeNode], total: int, run_at: int) -> bool:
    """Whether the root's few loose ops ``leaves`` (more than :data:`_FEW`, each read by another)
    are what keeps the scope holding most of the module from opening in an overview of ``run_at``
    boxes: one box each beside it, they left room for its closed box only (an L2-regularized
    CNN's optimized step: eight weight copies and penalty fusions beside ``reg_cnn``, drawn as
    one box of 164 kernels); as one block, it opens."""
    most = _holds_most(root, total)
    if most is None or len(leaves) <= _FEW:
        return False
    others = len(root.children) - 1
    return others + len(most.children) > run_at >= others - len(leaves) + 1 + len(most.children)


#: Loose ops beside the model that stay boxes of their own even where they crowd it out.
_FEW = 3


def _holds_most(root: TreeNode, of: int | None = None) -> TreeNode | None:
    """The child scope of ``root`` holding more than half of its leaves (or of ``of`` leaves),
    if one does."""
    counts = [(_leaf_count(child), child) for child in root.children]
    total = sum(n for n, _ in counts) if of is None else of
    return next((child for n, child in counts if not child.is_leaf and 2 * n > total), None)


def _leaf_count(node: TreeNode) -> int:
    n, stack = 0, [node]
    while stack:
        node = stack.pop()
        n += node.is_leaf
        stack.extend(node.children)
    return n


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
