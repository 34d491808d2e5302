"""What the overview (``--budget`` of :data:`hloviz.render.views.OVERVIEW_BUDGET` or less) does to
a drawn cut so that it reads at a glance (issue 33).

In: a :class:`~hloviz.render.tree.model.ViewGraph` whose cut has been applied (its units, edges and
scope clusters), the cut, and each instruction's phase. Out: the same graph, changed in place —
blocks titled by what they hold (:func:`name_blocks`), plumbing folded into the box it feeds and
a layer's activation into the layer (:func:`fold_plumbing`), and no frame around a scope whose forward and backward work program order
puts apart (:func:`unframe_phases`), so a training step reads top to bottom as it runs. Weights
are folded into their layers by :mod:`.weights`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping

from ...ir import Instruction
from ...opcodes import ACTIVATIONS, ELEMENTWISE, LAYOUT_ONLY, SCOPE_INPUTS, SCOPE_PLUMBING, STAGING
from ..tree.model import ViewGraph
from ..tree.phases import PHASE_SCOPES
from ..tree.tree import TreeNode
from . import apply, labels
from .cut import Cut
from .titles import function_name, main_pass


def name_blocks(g: ViewGraph, cut: Cut, phase_of: Callable[[Instruction], str]) -> None:
    """The overview titles each block found by structure by what it holds
    (:func:`hloviz.render.cut.apply.block_title`: the weight it updates, the pass it runs in), not
    by its last instruction (``div.207 · block of 15``), and a repeat of such blocks by the pass
    (``optimizer · block of 2 ×196``, not ``sub.1126 ×196 (sub.1126 … sub.1711)``): closed boxes and
    open frames. ``--budget N`` keeps the instruction names, which ``--scope`` and the explorer find."""
    from dataclasses import replace

    def members_of(node: TreeNode) -> list[Instruction]:
        return [m for leaf in cut.tree.leaves(node) if leaf.name[1:].isdigit()
                for m in g.units[int(leaf.name[1:])].members]

    def passes(node: TreeNode, members: list[Instruction]) -> Counter[str]:
        # a block data flow filed in a phase scope (``(optimizer)``: a hand-written Adam's update,
        # named like forward ops) runs in that pass: titled by its ops' names, the update's 28
        # blocks were ``forward · block of 24 ×28`` in an ``optimizer`` frame
        ops = _ops(members)
        filed = next((a.name.strip("()") for a in node.ancestors() if a.kind == "scope" and a.name in PHASE_SCOPES), None)
        return Counter({filed: len(ops) or 1}) if filed else Counter(phase_of(m) for m in ops)

    def title(node: TreeNode) -> str | None:
        members = members_of(node)
        return apply.block_title(node, members, g.param_names, passes(node, members))

    def repeat_title(node: TreeNode) -> str | None:
        # copies of a block named by an instruction (an optimizer's per-tensor update,
        # ``sub.1126 ×196 (sub.1126 … sub.1711)``): by the pass they run in, as such a block is;
        # not by the first copy's weight, which is one tensor of the 196
        first = node.children[0] if node.children else None
        if first is None or first.kind != "block" or title(first) is None:
            return None
        phases = passes(node, members_of(node))
        phase = main_pass(phases) if phases else "forward"
        return f"{phase} · block of {len(first.children)} ×{len(node.children)}"

    def named(node: TreeNode) -> str | None:
        return title(node) if node.kind == "block" else repeat_title(node) if node.kind == "repeat" else None

    for node in cut.nodes:
        if node.kind not in ("block", "repeat"):
            continue
        leaf = next(cut.tree.leaves(node), None)
        unit = g.units[g.find(int(leaf.name[1:]))] if leaf is not None and leaf.name[1:].isdigit() else None
        name = named(node) if unit is not None and unit.alive and unit.kind == "scope" and unit.rows else None
        if unit is not None and unit.rows and name is not None:
            unit.rows[0] = replace(unit.rows[0], text=name)
    for sc in g.scope_clusters:
        if sc.node.kind in ("block", "repeat") and sc.rows:
            name = named(sc.node)
            if name is not None:
                sc.rows[0] = replace(sc.rows[0], text=name)


def _ops(members: list[Instruction]) -> list[Instruction]:
    """The members whose phase titles a block: not parameters nor tuple plumbing, nor TensorFlow's
    handling of the function's arguments and results (``XLA_Args``, ``XLA_Retvals``), which run in
    no pass: a block of the weights a ``tf.cond`` applying Adam hands back was titled
    ``forward · block of 12``. Nor, beside other work, the copies and bitcasts XLA made (no op
    name) that carry a value on: a Flax ``nn.RNN``'s backward loop, beside the seven zero accumulators XLA copies into
    its tuple (no op name: forward), was titled ``forward · block of 12``."""
    ops = [m for m in members if m.opcode not in ("parameter", "get-tuple-element", "tuple")
           and m.metadata.op_name not in ("XLA_Args", "XLA_Retvals")]
    return [m for m in ops if m.opcode not in LAYOUT_ONLY or m.metadata.op_name] or ops


#: What XLA adds without an op name to stage a value: no work of the model's.
_PLUMBING = STAGING


def fold_plumbing(g: ViewGraph) -> None:
    """The overview draws no box for what XLA added without an op name to stage a value for one
    user: a while loop's zero-initialised gradient accumulators (``wrapped_broadcast`` of a
    constant, copied once per carried buffer into the loop's init tuple) drew 14 boxes above the
    Flax ViT step's optimized column. Each such unit whose arrows all go to one unit is folded
    into that unit, repeatedly (copies first, then the broadcast they copied), and the user gets
    a row counting them (issue 33: the first boxes are the program's, in program order). So are
    TF's results on their way out and the bitcasts XLA left at the top level
    (:func:`_fold_target`), into the unit whose value they hand on; and, of a JAX model, a
    comparison kept for the gradient (:func:`_kept_for_gradient`) and an activation
    (:func:`_activation`), into the layer whose value they read."""
    from ..scene import Row

    rows: dict[str, dict[int, list[str]]] = {why: {} for why in _WHY}
    changed = True
    while changed:
        changed = False
        users: dict[int, set[int]] = {}
        inputs: dict[int, set[int]] = {}
        owner = g.owners()  # (again each round: the last one merged units)
        for src, dst, *_ in g.edges:
            s, d = owner[src], owner[dst]
            if s != d:
                users.setdefault(s, set()).add(d)
                inputs.setdefault(d, set()).add(s)
        for index in sorted(users.keys() | inputs.keys()):
            u = g.units[index]
            found = _fold_target(u, users.get(index, set()), inputs.get(index, set())) or _kept_for_gradient(
                g, u, users.get(index, set()), inputs.get(index, set())) or _activation(g, u, inputs.get(index, set()))
            if found is None:
                continue
            target, why = g.units[g.find(found[0])], found[1]
            if not target.alive or target is u:
                continue
            g.merge([u], target)
            rows[why].setdefault(target.index, []).extend(_called(m) if why == _APPLIED else m.opcode for m in u.members)
            for kept in rows.values():
                kept.setdefault(target.index, []).extend(kept.pop(u.index, []))
            changed = True  # the broadcast the copies read has one user now: another round
    for why, kept in rows.items():
        for index, ops in kept.items():
            if ops and g.units[index].alive:
                g.units[index].extra_rows.append(Row(f"+ {labels.histogram_text(ops)} ({why})", small=True, italic=True))
    if any(rows.values()):
        g.stacking = [[(([i for i in idx if g.units[i].alive]), c, cp) for idx, c, cp in slots
                       if any(g.units[i].alive for i in idx)] for slots in g.stacking]


#: Why a unit was folded, as its target's row says.
_STAGED, _HANDED, _VIEWED = "no op_name", "XLA_Retvals: handing it out", "its value in another shape"
_KEPT = "kept for the gradient"
_APPLIED = "applied to its output"
_READ = "its results, read out"
_WHY = (_STAGED, _HANDED, _VIEWED, _KEPT, _APPLIED, _READ)


def _activation(g: ViewGraph, u, inputs: set[int]) -> tuple[int, str] | None:
    """An activation JAX traced as a function of its own (``nn.relu(nn.Dense(…)(x))`` calls
    ``jit(relu)``: a ``call`` of a computation doing elementwise work alone) applied to one
    layer's value: folded into that layer's box (``+ relu ×1 (applied to its output)``), as a Keras
    layer's ``activation=`` is part of the layer. A Flax GAN's generator, applied twice, drew two
    ``call`` boxes of ``jit_relu`` and two of ``tanh`` beside its layers. So is an activation
    that is one instruction in the forward pass (``nn.tanh``: ``lax.tanh``, no call)."""
    if len(inputs) != 1 or not u.alive or u.root or u.kind != "inst" or len(u.members) != 1:
        return None
    call = u.members[0]
    if sum(o.opcode not in SCOPE_INPUTS for o in call.operands) != 1 or g.program_order is None \
            or g.program_order(call) != "forward":
        return None
    if call.opcode == "call":
        if not call.called_computations or not all(
                i.opcode in ELEMENTWISE or i.opcode in SCOPE_INPUTS or i.opcode == "broadcast"
                for c in call.called_computations for i in c.instructions):
            return None
    elif call.opcode not in ACTIVATIONS:  # (``nn.tanh`` is ``lax.tanh`` itself: no call)
        return None
    target = g.units[g.find(next(iter(inputs)))]
    return (target.index, _APPLIED) if target.alive and target.kind == "scope" else None


def _called(call: Instruction) -> str:
    """What a traced function's ``call`` is called (``relu`` of ``jit(f)/jit(relu)``); another
    instruction, by its opcode."""
    last = call.metadata.op_name.rsplit("/", 1)[-1]
    name = function_name(last)
    return name if name != last else call.opcode


def _kept_for_gradient(g: ViewGraph, u, into: set[int], inputs: set[int]) -> tuple[int, str] | None:
    """A comparison the forward pass makes of one box's value for the backward pass alone —
    JAX's ``relu`` keeps ``x > 0`` for its derivative (``jvp(CNN)/gt``, named in the model's scope,
    not the layer's): folded into the box whose value it compares (the layer it follows), not a
    box of its own. A Flax CNN calling ``nn.relu`` between its layers drew a ``compare GT`` box
    per layer beside the model's blocks, before optimization (after it, XLA fuses each into the
    gradient's kernel)."""
    phase_of = g.program_order
    if phase_of is None or len(inputs) != 1 or not into or not u.alive or u.root or u.kind != "inst":
        return None
    if len(u.members) != 1 or u.members[0].opcode != "compare" or phase_of(u.members[0]) != "forward":
        return None
    value = u.members[0]
    readers = [m for d in into for m in g.units[d].members if any(op is value for op in m.operands)]
    if not readers or any(phase_of(m) != "backward" for m in readers):
        return None
    return next(iter(inputs)), _KEPT


def _plumbing(u) -> bool:
    """Staged by XLA for one user without an op name (a broadcast constant, its copies)."""
    return (u.alive and not u.root and u.kind in ("inst", "fusion")
            and all(m.opcode in _PLUMBING and not m.metadata.op_name for m in u.members)
            and all(m.opcode != "fusion" or _stages_a_value(m) for m in u.members))


def _result(u) -> bool:
    """TensorFlow's reshape and copy of a value on its way out of the function (or a closed
    block of them: the six weights a ``tf.cond`` applying Adam hands back, blocked at waists
    into four ``forward · block of 12`` boxes under the unscoped ``cond``)."""
    return (u.alive and not u.root and u.kind in ("inst", "scope")
            and all(m.opcode in SCOPE_PLUMBING and m.metadata.op_name == "XLA_Retvals" for m in u.members))


def _relabel(u) -> bool:
    """A bitcast left at the top level: its operand's bytes in another shape (no work, no kernel;
    17 such boxes ran down an unseen NASNet's optimized column)."""
    return u.alive and not u.root and u.kind == "inst" and all(m.opcode == "bitcast" for m in u.members)


def _fold_target(u, into: set[int], inputs: set[int]) -> tuple[int, str] | None:
    """The unit ``u`` folds into and why, if it does: staged for its one user, into the user; a
    result on its way out (a step counter's reshape and copy in an opened optimizer) or a
    bitcast, into the one unit whose value it hands on."""
    if len(into) == 1 and _plumbing(u):
        return next(iter(into)), _STAGED
    if len(inputs) == 1 and (_result(u) or (_relabel(u) and into)):
        return next(iter(inputs)), _HANDED if _result(u) else _VIEWED
    if len(inputs) == 1 and _loop_read(u):
        return next(iter(inputs)), _READ
    return None


def _loop_read(u) -> bool:
    """An element of a loop's results read out of its tuple, one box each: a JAX step's
    ``lax.scan`` of steps handed its eleven results to the ROOT as a row of eleven
    ``get-tuple-element`` boxes, 2,834 pt wide."""
    return (u.alive and not u.root and u.kind == "inst" and all(
        m.opcode == "get-tuple-element" and m.operands and m.operands[0].opcode == "while" for m in u.members))


def _stages_a_value(fusion: Instruction) -> bool:
    """A fusion computing nothing: its computation only broadcasts, copies or reshapes a
    constant or a parameter (XLA's ``wrapped_broadcast``)."""
    called = fusion.called_computations
    return bool(called) and all(i.opcode in _PLUMBING | {"parameter", "reshape", "transpose"} and i.opcode != "fusion"
                                for c in called for i in c.instructions)


def unframe_phases(g: ViewGraph, cut: Cut, phase_of: Callable[[Instruction], str]) -> None:
    """A training step's overview draws no frame around a scope split into phases (its
    :data:`~hloviz.render.tree.phases.PHASE_SCOPES` children, :func:`hloviz.render.tree.layers.scope_tree`):
    its children are drawn where program order puts them, each titled with the scope's name
    (``moments · forward``). Nor around a repeat or block holding such scopes
    (``moments_3 ×2``): it too spans both passes.

    Framed, such a scope spans the picture from its forward box down to its backward box, and the
    next scope's frame, forward and backward both between those two, nests inside that span: dot
    can only stand the frames side by side. The hand-written TF transformer step (its ``moments``,
    ``Gelu``, ``Softmax`` scopes, each with its gradient) was a staircase 5,516 × 2,741 pt.
    """
    from dataclasses import replace

    spanning = [sc for sc in g.scope_clusters if len(_phases_below(sc.node)) > 1]
    if not spanning:
        return
    from .order import order_keys

    keys = order_keys(g, phase_of)
    below = {sc.key: {g.find(int(leaf.name[1:])) for leaf in cut.tree.leaves(sc.node)} for sc in spanning}
    # only a frame with other work between its first and last box in program order: one holding
    # a whole pass and what runs after it (the GPT step's ``train_step12``) nests no other frame
    split = {sc.key: sc for sc in spanning if _interleaved(below[sc.key], keys)}
    if not split:
        return
    kept = [sc for sc in g.scope_clusters if sc.key not in split]
    by_key = {sc.key: sc for sc in g.scope_clusters}

    def home(key: str | None) -> str | None:
        while key is not None and key in split:
            key = split[key].parent
        return key

    for sc in split.values():
        title = scope_title_of(sc)
        parent = home(sc.parent)
        named = _splits(sc.node)  # a repeat or a block spanning phases: its boxes keep their names
        for index in sc.units:
            unit = g.units[g.find(index)]
            if named and unit.rows and unit.rows[0].bold:
                unit.rows[0] = replace(unit.rows[0], text=f"{title} · {unit.rows[0].text}")
            if parent is not None:
                by_key[parent].units.append(index)
        if parent is not None:
            by_key[parent].places.extend(sc.places)
    for sc in kept:
        if sc.parent in split:
            outer = split[sc.parent]
            if _splits(outer.node) and sc.rows and sc.rows[0].bold:
                sc.rows[0] = replace(sc.rows[0], text=f"{scope_title_of(outer)} · {sc.rows[0].text}")
            sc.parent = home(sc.parent)
    g.scope_clusters = kept
    # the frame's slot among its siblings no longer stacks as a cluster: program order places it
    unframed = [below[key] for key in split]
    g.stacking = [[(idx, c and not any(set(idx) == u for u in unframed), cp) for idx, c, cp in slots]
                  for slots in g.stacking]


def _interleaved(units: set[int], keys: Mapping[str, tuple[int, float]]) -> bool:
    """Does a unit outside ``units`` sit between the first and the last of them in program order?"""
    inside = [keys[f"u{i}"] for i in units if f"u{i}" in keys]
    if not inside:
        return False
    first, last = min(inside), max(inside)
    return any(first < k < last for key, k in keys.items() if int(key[1:]) not in units)


def _splits(node: TreeNode) -> bool:
    """Is ``node`` a scope its children split by phase (``moments`` › ``(forward)``, ``(backward)``)?"""
    return len({c.name for c in node.children if c.name in PHASE_SCOPES}) > 1


def _phases_below(node: TreeNode) -> set[str]:
    """The phase scopes (``(forward)`` …) at or below ``node``: a frame holding two spans the
    forward pass and the backward pass (leaves are not walked: a phase scope is above them)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n.kind == "scope" and n.name in PHASE_SCOPES:
            found.add(n.name)
        stack.extend(c for c in n.children if c.kind != "leaf")
    return found


def scope_title_of(sc: apply.ScopeCluster) -> str:
    """The title a scope cluster was drawn with (its first row)."""
    return sc.rows[0].text if sc.rows else apply.scope_title(sc.node)
