"""Sibling scopes grouped by a shared name prefix (``block_5_*``).

In: a built tree whose nodes have more than ``group_at`` scope children. Out: the same tree
with ``group`` nodes over siblings that share their first name tokens (``block_5_expand``,
``block_5_depthwise``… under ``block_5``; recursively, so ResNet's ``conv2_block1_1_conv`` sits
under ``conv2`` › ``conv2_block1``): a picture that cannot show 160 layers can show 20 blocks.
One layer kind numbered by Keras (``conv2d``, ``conv2d_1`` …) is not grouped
(:func:`numbered_base`), nor are layers sharing a prefix that do not run one after another
(:class:`_Run`): those are grouped by more of their names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from itertools import pairwise

from .nodes import TreeNode, leaves_below, rekey

__all__ = ["block_families", "first_word", "group_by_prefix", "names_agree", "numbered_base"]


def _tokens(name: str) -> list[str]:
    return [t for t in re.split(r"[_.\-]", name) if t]


def first_word(name: str) -> str:
    toks = _tokens(name)
    return toks[0] if toks else name


def group_by_prefix(root: TreeNode, group_at: int, succ: Mapping[str, Sequence[str]] | None = None,
                    output: str | None = None) -> None:
    """Group the scope children of every node with more than ``group_at`` of them by name
    prefix (:func:`_group_children`); ``succ`` (leaf → the leaves it feeds) lets an unscoped
    instruction that closes a group (a residual ``Add`` reading only the group's values) join it,
    with the parameters only the group reads. ``output``: the ROOT's leaf (:func:`_adopt`)."""
    preds: dict[str, list[str]] = {}
    for a, bs in (succ or {}).items():
        for b in bs:
            preds.setdefault(b, []).append(a)
    stack = [root]
    numbered: dict[int, str] = {}  # (a group's scopes were counted with their siblings)
    while stack:
        node = stack.pop()
        scopes = [c for c in node.children if c.kind == "scope"]
        if len(scopes) > group_at and not node.structured:
            # where each child runs: in the forward pass's order where the node's children stand
            # in it (a training step: a layer's last leaf is its weight's update, which the
            # optimizer makes in its own order), else where its work ends
            place = ({id(c): i for i, c in enumerate(node.children)} if node.in_flow
                     else {id(c): _last(c) if not c.is_leaf else c.order for c in node.children})
            ranked = sorted(scopes, key=lambda s: place[id(s)])
            numbered.update(_numbered_kinds(ranked))
            _group_children(node, scopes, 1, group_at,
                            _Run({id(s): i for i, s in enumerate(ranked)}, place, preds, succ or {}, numbered))
        _adopt(node, succ or {}, preds, output)
        stack.extend(c for c in node.children if not c.is_leaf)


class _Run:
    """Where the scopes being grouped run: each one's rank among its siblings and the order of
    its last leaf (where its work ends: XLA schedules a layer's weight preparation anywhere,
    mostly first). A group of siblings is one run of the program only when its members are
    consecutive there: ConvNeXt's ``stage_*`` layers are four stages with the downsampling
    blocks between them, and drawn as one group the box reached from the stem to the head, its
    arrows running back up to each downsampling block (issue 33: grouping by the model's
    structure, never by a shared name prefix alone)."""

    def __init__(self, rank: dict[int, int], place: dict[int, int], preds: Mapping[str, Sequence[str]],
                 succ: Mapping[str, Sequence[str]], numbered: Mapping[int, str] | None = None) -> None:
        self.rank, self.place, self.preds, self.succ = rank, place, preds, succ
        #: rank → kind of the scopes of one layer kind numbered by Keras (:func:`_numbered_kinds`),
        #: one of which may stand between a group's members and join it
        self.numbered = {rank[i]: kind for i, kind in (numbered or {}).items() if i in rank}

    def closes(self, leaf: TreeNode, inside: set[str]) -> bool:
        """Whether ``leaf`` reads a value of the group (leaf names ``inside``) and otherwise only
        sources (a parameter, a constant: leaves fed by nothing)."""
        reads = self.preds.get(leaf.name, ())
        return any(r in inside for r in reads) and all(r in inside or not self.preds.get(r) for r in reads)

    def feeds_only(self, leaf: TreeNode, inside: set[str]) -> bool:
        """Whether ``leaf`` is a source (fed by nothing) read only inside the group."""
        users = self.succ.get(leaf.name, ())
        return not self.preds.get(leaf.name) and bool(users) and all(u in inside for u in users)

    def consecutive(self, members: list[TreeNode]) -> bool:
        ranks = sorted(self.rank[id(m)] for m in members)
        kinds = [kind for r, kind in self.numbered.items() if ranks[0] < r < ranks[-1]]
        # one layer of a kind between them, not a whole run of such layers: WaveNet's
        # ``filter_0`` … ``filter_9`` stand between its ``skip_*`` layers, which are no group
        between = len(kinds) if len(set(kinds)) == len(kinds) < len(ranks) else 0
        return ranks[-1] - ranks[0] == len(ranks) - 1 + between

    def span(self, members: list[TreeNode]) -> tuple[int, int]:
        return (min(self.place[id(m)] for m in members), max(self.place[id(m)] for m in members))

    def inside(self, child: TreeNode, span: tuple[int, int]) -> bool:
        """Whether ``child`` (of the grouped node) runs strictly inside ``span``."""
        at = self.place.get(id(child))
        return at is not None and span[0] < at < span[1]


def _numbered_kinds(ranked: list[TreeNode]) -> dict[int, str]:
    """Id → first name word of the scopes (``ranked``: in program order) of one layer kind
    numbered by Keras (``max_pooling2d_1``, ``max_pooling2d_1_2``: several layers, one base
    name) of which no name family's stretch of the program holds two: no block of the model, such a
    layer belongs to the group it runs inside. ResNet50V2's last bottleneck of each stage pools
    its shortcut (``max_pooling2d_*``), which stood between ``conv2_block3``'s layers:
    ``conv2_*`` was no run of the program and fell apart into ``conv2_block3_1_*``,
    ``conv2_block3_2_*`` … (InceptionResNetV2's ``custom_scale_layer_*``, one in each
    ``block35_<n>``, ten in ``block35``'s stretch, stay as they were.)"""
    kinds, at = _families(ranked)
    # (several of them: a lone layer's ``_1`` is Keras 3 naming every layer of a traced call so,
    # and MobileNetV2's ``bn_Conv1_1`` is no numbered kind)
    numbered = {w for w, bases in kinds.items() if len(bases) == 1 and len(at[w]) > 1}
    spans = [(places[0], places[-1]) for w, places in at.items() if w not in numbered and len(kinds[w]) > 1]
    lone = {w for w in numbered if all(sum(1 for p in at[w] if lo < p < hi) <= 1 for lo, hi in spans)}
    return {id(s): first_word(s.name) for s in ranked if first_word(s.name) in lone}


def _families(ranked: list[TreeNode]) -> tuple[dict[str, set[str]], dict[str, list[int]]]:
    """Each first name word of ``ranked`` (in program order) → the base names of its layers
    (:func:`numbered_base`), and → where they stand."""
    kinds: dict[str, set[str]] = {}
    at: dict[str, list[int]] = {}
    for i, s in enumerate(ranked):
        word = first_word(s.name)
        kinds.setdefault(word, set()).add(numbered_base(s.name))
        at.setdefault(word, []).append(i)
    return kinds, at


def block_families(scoped: Sequence[TreeNode]) -> set[str]:
    """The first name words of ``scoped`` that name one block (``block4b``, ``top``): several
    layers, each of a name of its own once Keras's numbers are taken off (``block4b_expand_conv``,
    ``block4b_add``), at most half of them — not a kind of layer Keras numbers (``attn_1``,
    ``attn_2``), nor the kinds of a model's repeated layers (a flat encoder's ``mlp_up_1`` …
    ``mlp_down_5``: ``mlp``), nor a word the blocks share (MobileNetV3's ``expanded_conv_6_*``)."""
    bases, places = _families(list(scoped))
    return {f for f, at in places.items() if 1 < len(at) <= len(scoped) // 2 and len(bases[f]) == len(at)}


def _last(node: TreeNode) -> int:
    """The order of the last leaf below ``node``."""
    return max((n.order for n in leaves_below(node)), default=node.order)


def _group_children(node: TreeNode, scopes: list[TreeNode], ntok: int, group_at: int, run: _Run) -> None:
    """Group ``scopes`` (children of ``node``) by their first ``ntok`` name tokens, recursively;
    a prefix whose scopes are not one run of the program (:class:`_Run`) is grouped by more of
    their names instead (``stage_0_*``, ``stage_1_*`` …), and the unscoped instructions that run
    inside a group's span (a residual ``Add`` of the model's own between two of its layers) go
    into it."""
    longest = max(len(_tokens(s.name)) for s in scopes)
    # (a layer of a numbered kind among them is grouped by none of their prefixes: it joins the
    # group it runs inside, and beside a ResNet50V2 stage's bottlenecks it made ``conv2_*`` a
    # group of its own again inside ``conv2_*``)
    named = [s for s in scopes if run.rank.get(id(s)) not in run.numbered] or scopes
    while ntok < longest:
        by: dict[str, list[TreeNode]] = {}
        for s in named:
            toks = _tokens(s.name)
            by.setdefault("_".join(toks[:ntok]) if len(toks) > ntok else s.name, []).append(s)
        if 1 < len(by) < len(named):
            break
        ntok += 1
    else:
        return
    for prefix, members in by.items():
        if len(members) < 2 or len({numbered_base(m.name) for m in members}) == 1:
            # one layer kind numbered by Keras (conv2d, conv2d_1, … conv2d_8): a shared name
            # prefix of unrelated layers, not a block of the model (issue 33)
            continue
        if not run.consecutive(members):
            if ntok + 1 < longest:
                _group_children(node, members, ntok + 1, group_at, run)
            continue
        key = f"{node.key}/g:{prefix}" if node.key else f"g:{prefix}"
        group = TreeNode(key, "group", prefix, node.path, f"{prefix}_*", node, depth=node.depth,
                         in_flow=node.in_flow)
        span = run.span(members)
        inside = {id(m) for m in members}
        at = min(i for i, c in enumerate(node.children) if id(c) in inside)
        names = {leaf.name for m in members for leaf in leaves_below(m)}
        for c in (list(node.children) if node.in_flow else sorted(node.children, key=lambda c: c.order)):
            if id(c) in inside or (c.is_leaf and (run.inside(c, span) or run.closes(c, names))) \
                    or (run.rank.get(id(c)) in run.numbered and run.inside(c, span)):
                node.children.remove(c)
                c.parent = group
                group.children.append(c)
                names.add(c.name)
        for c in list(node.children):  # and the parameters only they read (a layer scale)
            if c.is_leaf and run.feeds_only(c, names):
                node.children.remove(c)
                c.parent = group
                group.children.append(c)
        rekey(group)
        if node.in_flow:  # where its first member ran
            node.children.insert(min(at, len(node.children)), group)
        else:
            node.children.append(group)
        if len(members) > group_at:
            _group_children(group, members, ntok + 1, group_at, run)


def _adopt(node: TreeNode, succ: Mapping[str, Sequence[str]], preds: Mapping[str, Sequence[str]],
           output: str | None = None) -> None:
    """An unscoped op beside ``node``'s other children that works only with the ops of one of
    them (what it reads, less parameters and constants, and what reads it) joins that child: a
    gradient summed where a layer's output fed two layers (TensorFlow's ``AddN``), an
    activation's hand-written gradient (Keras's swish: ``Sigmoid_2``, ``mul_16``), named by no
    layer, are the backward work of the block whose layers read them; beside the blocks, they
    were boxes of their own after the whole model, an EfficientNetV2 step's column full of them.
    What reads it decides; an op only other loose ops read goes where what it reads is computed
    (a constant, a parameter: where it is read). Below, the child places them in turn.

    Only in a training step's model, whose layers stand in its forward pass's order
    (``in_flow``: :func:`~.structure.split_by_structure`), and only where no op name says
    otherwise: an op of the root (its op name names no scope) joins such a model; an op of
    the model joins only a group of its layers (:func:`_group_children`: a name prefix, no scope
    of the op's name).

    Never the step's own result: the root's ops on the way to its ROOT (``output``) through
    loose ops alone, and those reading them through loose ops — a loss written op by op in the
    step (a soft Dice loss: ``Sum``, ``truediv``, ``Mean``, no scope) and its gradient, which
    the model's backward pass reads: adopted, the whole loss was drawn inside the U-Net's frame
    before optimization, and beside it after."""
    if node.kind == "root":
        takes = lambda c: c.in_flow  # noqa: E731
    elif node.in_flow:
        takes = lambda c: c.kind == "group"  # noqa: E731
    else:
        return  # (before reading every leaf below: most nodes take nothing)
    owner: dict[str, TreeNode] = {}
    loose: dict[str, TreeNode] = {}
    for c in node.children:
        if c.is_leaf:
            loose[c.name] = c
        else:
            for leaf in leaves_below(c):
                owner[leaf.name] = c
    kept = _the_result(loose, succ, preds, output) if node.kind == "root" else set()
    moved = True
    changed: dict[int, TreeNode] = {}
    while moved and loose:
        moved = False
        for name, leaf in list(loose.items()):
            if name in kept:
                continue
            # its readers decide (a gradient's sum belongs to the layer whose backward reads it);
            # an op read only by other loose ops goes where what it reads is computed
            near = _children_of(succ.get(name, ()), loose, owner, node)
            if not near:
                near = _children_of([p for p in preds.get(name, ()) if preds.get(p)], loose, owner, node)
            if len(near) != 1 or id(node) in near:  # several children, or an op outside ``node``
                continue
            child = next(iter(near.values()))
            if not takes(child):
                continue
            node.children.remove(leaf)
            leaf.parent = child
            child.children.append(leaf)
            owner[name] = child
            del loose[name]
            changed[id(child)] = child
            moved = True
    for child in changed.values():
        rekey(child)


def _the_result(loose: Mapping[str, TreeNode], succ: Mapping[str, Sequence[str]],
                preds: Mapping[str, Sequence[str]], output: str | None) -> set[str]:
    """The loose leaves that reach ``output`` through loose leaves alone, and those that read
    them, through loose leaves alone (see :func:`_adopt`)."""
    if output is None or output not in loose:
        return set()
    result, stack = {output}, [output]
    while stack:
        for p in preds.get(stack.pop(), ()):
            if p in loose and p not in result:
                result.add(p)
                stack.append(p)
    stack = list(result)
    while stack:
        for u in succ.get(stack.pop(), ()):
            if u in loose and u not in result:
                result.add(u)
                stack.append(u)
    return result


def _children_of(names: Sequence[str], loose: Mapping[str, TreeNode], owner: Mapping[str, TreeNode],
                 node: TreeNode) -> dict[int, TreeNode]:
    """The children of ``node`` holding the leaves ``names`` (``node`` itself for a leaf outside
    it), loose ones left out."""
    return {id(c): c for n in names if n not in loose for c in (owner.get(n, node),)}


_NUMBERED = re.compile(r"(?:_\d+)+$")


def numbered_base(name: str) -> str:
    """``name`` without the ``_<n>`` Keras adds to make a default layer name unique
    (``batch_normalization_7`` → ``batch_normalization``; ``block_5_expand`` stays)."""
    return _NUMBERED.sub("", name)


def names_agree(kids: list[TreeNode], groups: list[list[int]], least: int) -> bool:
    """Whether grouping ``kids`` (in program order) by their names' first word would draw the
    same blocks as ``groups`` (those of ``least`` members or more): the children are named
    scopes at all, and no block mixes layers of two name families that each have several
    members — or each such family is one stretch of the program (:func:`_stretches`)."""
    scoped = [k for k in kids if k.kind == "scope"]
    if len(scoped) * 2 < len(kids):
        return False
    family: dict[str, int] = {}
    for k in scoped:
        family[first_word(k.name)] = family.get(first_word(k.name), 0) + 1
    for members in groups:
        if len(members) < least:
            continue
        seen = {first_word(kids[i].name) for i in members if kids[i].kind == "scope"}
        if sum(1 for f in seen if family[f] > 1) > 1:
            return _stretches(scoped)
    return True


def _stretches(scoped: list[TreeNode]) -> bool:
    """Whether the name families of several layers (a first word; not one layer kind numbered by
    Keras) are several, each one stretch of ``scoped`` (in program
    order): the names then say the model's blocks even where its data flow's waists fall a
    layer off their edges. ResNet50V2 runs each stage's first pre-activation (``conv3_block1_preact_bn``,
    ``…_relu``) before the stage's shortcut forks, so a waist falls inside the block's names;
    drawn by its waists the training step's overview was 14 blocks titled
    ``conv4_block1_preact_bn · block of 2`` (the last ``conv3`` bottleneck with it) instead of
    ResNet50's ``conv2_*`` … ``conv5_*`` stages."""
    bases, places = _families(scoped)
    # (one layer kind numbered by Keras is no block: ResNet50V2's ``max_pooling2d_*`` in each
    # stage's last shortcut)
    several = {f for f, at in places.items() if len(at) > 1 and len(bases[f]) > 1}
    if len(several) < 3:
        return False
    words = [first_word(k.name) for k in scoped]
    stretches = sorted((places[f][0], places[f][-1]) for f in several)
    if any(a[1] > b[0] for a, b in pairwise(stretches)):
        return False  # a family come back after another ran
    # a layer of no family between two stretches: the names do not say whose it is. A few are a
    # stem's pooling (DenseNet121's ``zero_padding2d_1``, ``pool1``); Xception's shortcuts (its
    # ``conv2d_*``, ``batch_normalization_*``, ``add_*`` between ``block2_*`` … ``block13_*``)
    # are the blocks' own, and drawn by names its ×8 middle flow was no repeat any more
    # … and inside a stretch, one layer of a kind at most (:class:`_Run` takes it into the group:
    # ResNet50V2's ``max_pooling2d_*``); InceptionResNetV2's ``conv2d_*`` fill its ``block35_*``
    start, end = stretches[0][0], stretches[-1][1]
    between, inside = 0, set()
    for at, word in enumerate(words):
        if word in several or not start < at < end:
            continue
        home = next((lo for lo, hi in stretches if lo < at < hi), None)
        if home is None:
            between += 1
        elif (home, word) in inside:
            return False
        else:
            inside.add((home, word))
    return between * 2 < len(several)
