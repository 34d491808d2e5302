"""Weights folded into the boxes of the layers that use them, in the overview (issue 33: weights
and their preparation are never laid out as boxes of their own).

In: a :class:`~hloviz.render.tree.model.ViewGraph` whose cut has been applied. Out: the same
graph, changed in place — each parameter, closed-over constant or block of parameters alone that
a layer or the optimizer reads merged into its first reader, with a row naming it there and on
its other readers (:func:`fold_weights`).
"""

from __future__ import annotations

from ...ir import Instruction
from ...opcodes import LAYOUT_ONLY
from ..tree.model import ViewGraph
from . import labels
from .titles import path_parts

__all__ = ["fold_weights", "layers_short"]


def fold_weights(g: ViewGraph) -> None:
    """The overview draws no parameter as a box of its own beside the one op that reads it in
    an opened layer (InceptionV3's ``conv2d_1`` drew ``parameter 5 conv2d_1/kernel`` over its
    convolution): such a parameter is folded into its user, which gets a row naming it
    (issue 33: a weight is folded into the box of the layer that uses it)."""
    from ..scene import Row

    home = {i: sc.key for sc in g.scope_clusters for i in sc.units}
    users: dict[int, set[int]] = {}
    owner = g.owners()
    for src, dst, *_ in g.edges:
        s, d = owner[src], owner[dst]
        if s != d:
            users.setdefault(s, set()).add(d)
    folded: dict[int, list[str]] = {}
    cut_edges: dict[int, set[int]] = {}  # parameter unit → the later users its arrows no longer reach
    for u in g.units:
        if not u.alive or u.root or not u.members:
            continue
        if u.kind != "inst" and not all(m.opcode == "parameter" for m in u.members):
            continue  # a closed block of parameters alone (a scanned layer's kernel and bias) is folded as one
        if u.members[0].opcode not in ("parameter", "constant"):
            continue
        into = users.get(u.index, set())
        if u.members[0].opcode == "constant":
            _fold_constant(g, u, into, folded, cut_edges)
            continue
        # what the optimizer reads is a weight or the optimizer's state, wherever it is drawn (a
        # loop's box holding its update: a tf.map_fn step's weights); outside an opened layer,
        # anything else is the module's own input and stays a box — unless one box that is no
        # single op reads it alone (a scanned stack's weights beside a ViT's images)
        trained = bool(into) and (_updated(g, into) or _read_by_the_optimizer(g, u.members[0]))
        names = [g.param_names.get(m.name, m.name) for m in u.members]
        via = g.units[next(iter(into))] if len(into) == 1 and not trained and u.kind == "inst" else None
        if via is not None and via.kind == "inst" and _updated(g, users.get(via.index, set())) and all(
                m.opcode in LAYOUT_ONLY and not m.metadata.op_name for m in via.members):
            # a weight's layout copy XLA made, read by its layer and the optimizer (a Keras
            # model's ``fuse/kernel``: two boxes above an unseen step's optimized column): the weight
            g.merge([u], via)
            u, into, trained = via, users.get(via.index, set()), True
        if not into or (home.get(u.index) is None and not trained
                        and (len(into) > 1 or g.units[next(iter(into))].kind == "inst")):
            continue
        near = sorted((g.units[i] for i in into if g.units[i].alive and (trained or (
            g.units[i].scope == u.scope and home.get(i) == home.get(u.index)))),
            key=lambda t: (_optimizer(g, t), not _its_layer(t, names), _first_position(g, t)))
        if not near or (not trained and len(into) > 1 and (not all(g.units[i].alive for i in into) or (
                len(near) == len(into) and not all(map(_a_weight, names))))):
            continue  # several readers, all in its own layer: a module's input stays a box (the first)
        # read by several kernels (XLA's fusion duplicated a batch norm into the next layer's
        # kernel): folded into its first reader in its own layer, named on the others as a row;
        # as a box it reached past the layers between (resblock_relu's stem_bn → res_bn)
        _fold(g, u, near[0], into, names, folded, cut_edges)
    if cut_edges:
        g.edges = [e for e in g.edges if g.find(e[1]) not in cut_edges.get(e[0], ())]
    for index, names in folded.items():
        g.units[index].extra_rows.append(Row(_named(names), small=True, italic=True))
    if folded:
        g.stacking = [[(([i for i in idx if g.units[i].alive]), c, cp) for idx, c, cp in slots
                       if any(g.units[i].alive for i in idx)] for slots in g.stacking]


def _a_weight(name: str) -> bool:
    """Whether a parameter's name is a weight's path (``tabular/head/bias``,
    ``params['head']['bias']``), not an argument's own (``images``, ``tokens``). A weight several
    kernels of its layer read is folded into the first (a Keras classifier's ``head/bias``, which
    XLA duplicates into the softmax's two kernels, stood as a box between them); the module's
    input stays the box the column starts with."""
    return "/" in name or "['" in name


def _named(names: list[str], limit: int = 60) -> str:
    """``+ conv2d_1/kernel, conv2d_1/bias``: the weights folded into a box, as many whole names
    as fit in ``limit`` characters (a box's parameters row's), the rest counted (``+4``); one
    name longer than that is cut in its middle. A ConvNeXt's residual fusion named two
    50-character weights on one 106-character row, the widest box of its column; cut at 60 in the
    middle, a GRU's row read ``params['GRUCell_0']['hn']['k…RUCell_0']['hr']['kernel'] +4``."""
    shown = [n if " = " in n else layers_short(n) for n in names]
    text = "+ " + labels.shorten(shown[0], limit - 6)
    for k, name in enumerate(shown[1:], start=1):
        rest = len(shown) - k - 1
        if len(text) + 2 + len(name) + (len(f" +{rest}") if rest else 0) > limit:
            return f"{text} +{len(shown) - k}"
        text += f", {name}"
    return text


def _fold_constant(g: ViewGraph, u, into: set[int], folded: dict[int, list[str]],
                   cut_edges: dict[int, set[int]]) -> None:
    """A constant drawn as a box of its own (:func:`fold_weights`) folded, as a row naming it, into
    the one unit that reads it, or where the optimizer reads it (a weight a JAX function closed
    over is a constant of its module: six stood in a column beside a Flax model's blocks) into
    its first reader, named on the others too. A constant several ops read and no optimizer
    stays a box: where it goes is not one place; so does one a fold made or holds (highlighted:
    what XLA or TensorFlow folded is what the picture is for)."""
    if g.shows_a_fold(u):
        return
    alive = sorted((g.units[i] for i in into if g.units[i].alive), key=lambda t: (_optimizer(g, t), _first_position(g, t)))
    if not alive or len(alive) < len(into) or (len(into) > 1 and not _updated(g, into)):
        return
    inst = u.members[0]
    value = labels.literal_text(inst, 14)
    _fold(g, u, alive[0], into, [f"{inst.name} = {value}" if len(value) <= 12 else inst.name], folded, cut_edges)


def _fold(g: ViewGraph, u, target, into: set[int], shown: list[str], folded: dict[int, list[str]],
          cut_edges: dict[int, set[int]]) -> None:
    """Fold ``u`` into ``target`` and name what it holds (``shown``) on every unit that reads it;
    the arrows to the other readers (``into``) go (``cut_edges``): the row on each says why."""
    g.merge([u], target)
    folded.setdefault(target.index, []).extend(shown)
    others = into - {target.index}
    if others:
        cut_edges[u.index] = others
        for i in others:
            folded.setdefault(i, []).extend(shown)


def _optimizer(g: ViewGraph, u) -> bool:
    """Whether ``u`` is the optimizer's: by its first instruction that runs (a closed ``adam``
    box starts with the step count's parameter, in no pass: the weight copies its update reads
    stood as eight boxes above an unseen two-input step's optimized column)."""
    phase = g.program_order
    first = next((m for m in u.members if m.opcode != "parameter"), None)
    return phase is not None and first is not None and phase(first) == "optimizer"


def _updated(g: ViewGraph, units: set[int]) -> bool:
    """Whether the optimizer reads the parameter these units read: a weight or the optimizer's
    state, never the program's input (a Flax step's ``params['head']['bias']`` and AdamW's
    ``count`` stood as boxes of their own at the top of its optimized column). Read by the
    optimizer alone, it is one of its settings (AdamW's step count, read by its bias corrections
    in several blocks): folded into the first of them like a weight, not a box with an arrow to
    each."""
    return any(_optimizer(g, g.units[i]) for i in units)


def _read_by_the_optimizer(g: ViewGraph, inst: Instruction) -> bool:
    """Whether an instruction of the optimizer reads ``inst`` (a Flax step's conv bias, whose SGD
    update XLA fused into kernels drawn in the layer's box, not the optimizer's, stood alone)."""
    comp, phase = inst.parent, g.program_order
    readers = (g.users.get(comp.name) or comp.users()).get(inst, ()) if comp is not None else ()
    return phase is not None and any(phase(r) == "optimizer" for r in readers)


def _its_layer(unit, names: list[str]) -> bool:
    """Whether ``unit``'s box is titled by a layer these weights' paths name (``prob`` for
    ``prob/kernel``, ``Dense_0`` for ``params['Dense_0']['kernel']``): the weight goes there
    before any earlier reader (an L2 penalty XLA schedules first put ``prob/kernel`` in the
    loss's box)."""
    title = unit.rows[0].text.split(" · ")[0] if unit.rows else ""
    return bool(title) and any(title in path_parts(n)[:-1] for n in names)


def _first_position(g: ViewGraph, unit) -> int:
    """Where ``unit``'s first instruction sits in the drawn computation's text (program order)."""
    top = g.computations[0] if g.computations else None
    spots = [g.position(m) for m in unit.members if m.parent is top]
    return min(spots) if spots else unit.pos[1]


def layers_short(name: str) -> str:
    """A parameter's name as a row shows it: its last two path components (``conv2d_1/kernel``)."""
    return "/".join(name.split("/")[-2:])
