"""Where each optimizer instruction's update goes: :func:`update_targets` places every one at
the layer it updates (what it reads, :mod:`.tracer`; narrowed by what it feeds inside a loop),
:func:`optimizer_targets` names the layer of each optimizer op."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from weakref import WeakKeyDictionary

from ...collector import collector_paused
from ...ir import Instruction
from ...opcodes import WEIGHT_CARRIERS
from ..scopes import Scope, ScopeTree
from .reads import common_scope, reading_layer, users_in_computation
from .tracer import UpdateTracer


def optimizer_targets(tree: ScopeTree) -> dict[str, str]:
    """Optimizer op name → the path of the innermost layer scope holding the variables its
    instructions update. TF names each op of each variable's update apart; JAX gives all of
    ``sgd``'s subtractions one name, which then maps to the scope holding all the layers —
    :func:`update_targets` tells those instructions apart."""
    per_op: dict[str, list[Scope | None]] = {}
    for inst, layer in update_targets(tree).items():
        name = inst.metadata.op_name
        if name:
            per_op.setdefault(name, []).append(layer)
    out: dict[str, str] = {}
    for name, layers in per_op.items():
        common = common_scope([layer for layer in layers if layer is not None])
        if common is not None:
            out[name] = common.path
    return out


def update_targets(tree: ScopeTree) -> dict[Instruction, Scope | None]:
    """Every optimizer-phase instruction → the layer scope whose variables it updates, or None
    when it is fed by no layer or by several. Operands are followed through fusions (a fused
    parameter is its fusion's operand, a fusion its fused root), so this works on optimized
    modules too, where an update may share a kernel with the gradient it reads.

    Answered once per tree (the answer is read, never changed): the explorer draws one module
    many times over from one reused tree (:func:`hloviz.analysis.scopes.scope_trees_reused`),
    and each picture of a training step asked for this walk of the whole module again (GPT
    step, 46k instructions: 0.2 s per fusion picture)."""
    hit = _answered.get(tree)
    if hit is None:
        with collector_paused():  # the walk's memo holds a set per instruction it reaches
            hit = _update_targets(tree)
        _answered[tree] = hit
    return dict(hit)  # each caller gets its own copy: the kept answer is never changed


#: :func:`update_targets`' answers, for as long as their trees live.
_answered: WeakKeyDictionary[ScopeTree, dict[Instruction, Scope | None]] = WeakKeyDictionary()


def _update_targets(tree: ScopeTree) -> dict[Instruction, Scope | None]:
    tracer = UpdateTracer(tree)
    out: dict[Instruction, Scope | None] = {}
    # most updates share their set of layers (every op after a global-norm clip reads them
    # all): the common scope is found once per set, not once per instruction
    common: dict[frozenset[int], Scope | None] = {}
    # a set's innermost common scope is that of its first and last scope in the tree's depth-first
    # order (the scopes between lie below it too): two scopes climbed, not hundreds
    order = {id(s): k for k, s in enumerate(tree.walk())}
    first_last = order.__getitem__
    phase = tree.phases.get
    feeds, scopes, walked = tracer.feeds, tracer.scopes, tracer.memo.get
    narrowed: set[int] = set()  # id() of the common scopes a loop's update was narrowed from
    unfed: list[Instruction] = []  # updates reading no layer's values: a momentum's decay ``0.9 * v``
    read_by: dict[int, dict[Instruction, list[Instruction]]] = {}  # each computation's users, for reading_layer
    own = tree.own_updates
    filed = tree.filing.get
    for comp in tree.module.computations:
        for inst in comp.instructions:
            if phase(inst) != "optimizer" or inst.opcode in ("parameter", "constant"):
                continue
            if own and (at := filed(inst)) is not None and any(s.contains(at) for s in own):
                out[inst] = None  # an update the user wrote in a scope of theirs stays in it
                continue
            ids = walked(inst)  # about half were walked already, as inputs of earlier ones
            if ids is None:
                ids = feeds(inst)
            if ids not in common:
                if len(ids) > 2 and all(i in order for i in ids):
                    common[ids] = common_scope([scopes[min(ids, key=first_last)], scopes[max(ids, key=first_last)]])
                else:
                    common[ids] = common_scope([scopes[i] for i in ids])
                innermost = _innermost_of_chain([scopes[i] for i in ids], common[ids])
                if innermost is not None:
                    narrowed.add(id(common[ids]))
                    common[ids] = innermost
            out[inst] = common[ids]
            if not ids:
                unfed.append(inst)
            elif (written := _scattered_into(inst, tracer)) is not None:
                layer, shared = reading_layer(tree, written, read_by), common[ids]
                if layer is not None and (shared is None or shared.contains(layer)):
                    out[inst] = layer
    if narrowed:
        _credit_by_what_they_feed(tree, out, narrowed, tracer.callers)
    if unfed:
        _credit_unfed(tree, out, unfed, tracer.callers, narrowed)
    return out


def _scattered_into(inst: Instruction, tracer: UpdateTracer) -> Instruction | None:
    """The parameter a ``scatter`` (fused or not, or a fusion whose root is one) writes its rows
    into, as a sparse update writes a weight (Adagrad's ``ResourceScatterSub`` of an embedding's
    rows), followed through the weight's carriers and fusions (:meth:`UpdateTracer.inputs`); None
    for any other instruction. What the update reads — the weight and its gradient, which the
    layer reading the embedding's output computes — named the model, not the embedding."""
    if inst.opcode == "fusion":
        inst = next(iter(tracer.inputs(inst)), inst)  # its fused root
    if inst.opcode != "scatter" or not inst.operands:
        return None
    target = inst.operands[0]
    while target.opcode in WEIGHT_CARRIERS or target.opcode == "parameter":
        handed = tracer.inputs(target)  # a fused parameter: what its fusion was handed
        if not handed:
            break
        target = handed[0]
    return target if target.opcode == "parameter" else None


def _credit_unfed(tree: ScopeTree, out: dict[Instruction, Scope | None], unfed: list[Instruction],
                  callers: Mapping[str, Instruction], narrowed: set[int]) -> None:
    """An update that reads no layer's values — a hand-written momentum's ``0.9 * v``, reading
    only the velocity, which no layer reads; Keras's bias correction of one variable, reading
    only the step count — updates the one layer every optimizer user it feeds updates
    (``0.9 * v + g`` reads that layer's gradient); one feeding several (a step count) stays
    shared, and so does one feeding a loop's scope that updates were narrowed from (``ViT``
    around a scan: no one layer). A plain-JAX transformer's momentum decays were blocks of
    their own, each drawn beside the next block's layer."""
    phase = tree.phases
    users = _users_through_calls(callers)
    for inst in unfed:
        if out.get(inst) is None:
            fed = _fed_layer(inst, None, users, out, phase, one=True)
            if fed is not None and id(fed) not in narrowed:
                out[inst] = fed


#: How many instructions :func:`_credit_by_what_they_feed` follows from one update.
_MAX_FED = 200


def _credit_by_what_they_feed(tree: ScopeTree, out: dict[Instruction, Scope | None], narrowed: set[int],
                              callers: Mapping[str, Instruction]) -> None:
    """Narrow the updates a loop's gradient left at the loop's scope by where their values go.

    An optimizer's state update (Adam's ``mu``/``nu`` of an ``nn.scan``'s stacked weight) reads
    the state, which no layer reads, and the gradient, which leaves the scan's ``while`` in the
    scope holding the loop (``ViT``): what it reads says ``ViT``. What it feeds says more: its
    value goes to the update of one parameter (``p + u``), which :func:`_innermost_of_chain`
    placed in the layer reading that parameter. An instruction placed at a scope some update was
    narrowed from (``narrowed``) is followed forward through its optimizer users placed at that
    same scope; when every user it reaches lies in one layer strictly inside that scope, it
    updates that layer. A user placed anywhere else (shared work, another scope) leaves it where
    it was. The users of a fused computation's root are its fusion's users."""
    phase = tree.phases
    users = _users_through_calls(callers)
    refined: dict[Instruction, Scope] = {}
    for inst, at in out.items():
        if at is not None and id(at) in narrowed:
            fed = _fed_layer(inst, at, users, out, phase)
            if fed is not None:
                refined[inst] = fed
    out.update(refined)


def _users_through_calls(callers: Mapping[str, Instruction]) -> Callable[[Instruction], list[Instruction]]:
    """An instruction's users in its computation, and — for a computation's root — its caller's
    users (a fused computation's root: its fusion's users)."""
    users_of: dict[int, dict[Instruction, list[Instruction]]] = {}

    def users(inst: Instruction) -> list[Instruction]:
        here = users_in_computation(inst, users_of)
        comp = inst.parent
        if comp is not None and inst is comp.root:
            caller = callers.get(comp.name)
            if caller is not None:
                return [*here, *users(caller)]
        return here

    return users


def _fed_layer(inst: Instruction, at: Scope | None, users: Callable[[Instruction], list[Instruction]],
               out: dict[Instruction, Scope | None], phase: Mapping[Instruction, str], *, one: bool = False) -> Scope | None:
    """The layer strictly inside ``at`` (None: anywhere) that every optimizer user ``inst`` feeds
    (followed through users placed at ``at`` too) lies in; None when one of them lies elsewhere or
    is shared. ``one``: the users must all lie in that very layer, not only below it."""
    reached: list[Scope] = []
    todo, seen = [inst], {inst}
    while todo:
        for u in users(todo.pop()):
            if u in seen:
                continue
            seen.add(u)
            if u.opcode in ("tuple", "get-tuple-element") and u not in out:
                todo.append(u)  # a multi-output fusion's root, its fusion's elements
                continue
            if phase.get(u) != "optimizer":
                continue  # the new state leaves the step (the entry's root tuple)
            there = out.get(u)
            if there is at:
                todo.append(u)
            elif there is not None and (at is None or at.contains(there)):
                reached.append(there)
            else:
                return None  # shared or elsewhere: what it feeds says nothing more
        if len(seen) > _MAX_FED:
            return None
    if one and len({id(s) for s in reached}) != 1:
        return None
    common = common_scope(reached)
    return common if common is not None and common is not at and (at is None or at.contains(common)) else None


def _innermost_of_chain(found: list[Scope], common: Scope | None) -> Scope | None:
    """The innermost of ``found`` when the others all hold it and run a loop themselves (a
    scan's stacked weights: the update reads the weight, placed in ``ViT/blocks/mlp/fc1``, and
    its gradient, which leaves the scan's ``while`` in ``ViT``: it updates ``fc1``, not
    ``ViT``); None otherwise. ``common``: their common scope, which is then one of them. Outside
    loops the common scope stands (a Keras Dense's kernel is read in its ``Tensordot`` name
    scope; the layer is what its update updates)."""
    if common is None or len(found) < 2 or not any(s is common for s in found):
        return None
    deepest = max(found, key=lambda s: s.depth)
    if not all(s.contains(deepest) for s in found):
        return None
    if not all(any(i.opcode == "while" for i in s.instructions) for s in found if s is not deepest):
        return None
    return deepest
