"""A module → its graph of drawn units (:class:`~.model.ViewGraph`): the drawing rules.

In: a module, the computation to draw and the user's choices (:class:`~hloviz.render.views.ViewOptions`:
how small a constant is written into its users, whether chains are kept). Out: a
:class:`~.model.ViewGraph` whose drawn computations each have a :class:`~.model.Place` (top level,
fusion cluster, body cluster: :func:`place_computations`), whose instructions each have a kind
(their own node, written into a user, elided plumbing: :func:`classify`), with the units that
become nodes (one instruction or a chain: :func:`make_units`) and the arrows between them
(:func:`make_edges`); :func:`hide` keeps the units a focus or scope shows. A chain is a run of
the same elementwise op drawn as one node ("add ×1000", :func:`find_chains`): ``P → I`` where
``I`` and ``P`` have the same opcode and shape, ``P`` an operand of ``I`` and ``I`` its only user,
so no reader can see the values in between; each member's private side input (TensorFlow's
per-add ``broadcast``) is absorbed too. The rules are
XLA's own graph dumps', listed in :mod:`hloviz.render.views`; :mod:`hloviz.render.views`
calls these in order and then builds the tree (:mod:`.layers`) over the units.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...ir import Computation, HloModule, Instruction
from ...opcodes import BODY_CALLERS, CALL_WRAPPING, is_elementwise
from .model import FPARAM, FUSION, GTE, INLINE, NODE, PLUMB, Place, Unit, ViewGraph

if TYPE_CHECKING:
    from ..views import ViewOptions

__all__ = ["classify", "draw_focus_targets", "fix_roots", "hide", "make_edges", "make_units", "place_computations",
           "unwrapped", "wrapping_call",
           "root_computation"]


def draw_focus_targets(g: ViewGraph, targets: list[Instruction]) -> None:
    """The instructions a picture focuses on are drawn as nodes of their own, even ones usually
    elided (an inlined constant, a get-tuple-element, a fused parameter, tuple plumbing)."""
    for target in targets:
        if g.kind.get(id(target)) in (INLINE, GTE, FPARAM, PLUMB):
            g.kind[id(target)] = NODE


def root_computation(module: HloModule, name: str | None) -> Computation:
    """The computation to draw: the one named ``name``, else the entry (an
    :class:`~hloviz.errors.InputError` naming the closest computations when there is none)."""
    from ...errors import InputError

    if name is None:
        if module.entry is None:
            raise InputError(f"module {module.name} has no entry computation to draw")
        return unwrapped(module.entry)
    comp = module.get_computation(name)
    if comp is None:
        import difflib

        close = difflib.get_close_matches(name.lstrip("%"), [c.name for c in module.computations], n=3)
        hint = f"did you mean {', '.join(close)}?" if close else "hloviz stats lists the module's computations"
        raise InputError(f"module {module.name} has no computation named {name!r}", hint=hint)
    return comp


def unwrapped(comp: Computation) -> Computation:
    """What ``comp`` stands for in a picture: itself, or, where all it does is call one other
    computation (its arguments passed in, the results handed out: a JAX function calling a
    jitted step, traced as one ``call``), what that computation stands for. Drawn as it is,
    such an entry is two boxes — the call, closed over hundreds of instructions, and the ROOT
    (an unseen Flax step drew so before optimization; XLA inlines the call, so after it did
    not). Only a call the user's code made (it has an op name) is looked through: XLA's own
    (the CPU backend's call of a ``parallel_fusion``) is part of what it did."""
    seen = {comp.name}
    while True:
        calls = [i for i in comp.instructions if i.opcode == "call"]
        if len(calls) != 1 or len(calls[0].called_computations) != 1 or not calls[0].metadata.op_name or any(
                i.opcode not in CALL_WRAPPING for i in comp.instructions if i is not calls[0]):
            return comp  # (a call without an op name is XLA's own: the CPU's ``parallel_fusion``)
        comp = calls[0].called_computations[0]
        if comp.name in seen:
            return comp
        seen.add(comp.name)


def wrapping_call(module: HloModule, comp: Computation) -> Instruction | None:
    """The ``call`` of ``comp`` in the computations :func:`unwrapped` looks through from the entry
    (None where ``comp`` is the entry or not reached so)."""
    c, seen = module.entry, set()
    while c is not None and c is not comp and c.name not in seen:
        seen.add(c.name)
        calls = [i for i in c.instructions if i.opcode == "call" and len(i.called_computations) == 1]
        if len(calls) != 1:
            return None
        if calls[0].called_computations[0] is comp:
            return calls[0]
        c = calls[0].called_computations[0]
    return None


def place_computations(g: ViewGraph, roots: list[Computation], *, nested: bool = True) -> None:
    """Give every drawn computation a place: top level, a fusion cluster, or a body cluster
    (``nested=False``: the roots only; their fusions and bodies are then single nodes)."""
    stack: list[tuple[Computation, Place | None, Instruction | None, str]] = [(c, None, None, "") for c in reversed(roots)]
    while stack:
        comp, parent, owner, role = stack.pop()
        if comp.name in g.places:
            continue
        place = g.add_place(Place(key=f"c{len(g.places)}", computation=comp, parent=parent, owner=owner, role=role))
        inner = []
        for inst in comp.instructions if nested else ():
            if inst.opcode == "fusion":
                for c in inst.calls_by_attribute.get("calls", inst.called_computations):
                    inner.append((c, place, inst, "fusion"))
            elif inst.opcode in BODY_CALLERS:
                for attr, called in inst.calls_by_attribute.items():
                    for i, c in enumerate(called):
                        inner.append((c, place, inst, _role(inst.opcode, attr, i, len(called))))
        stack.extend(reversed(inner))


def _role(opcode: str, attr: str, index: int, count: int) -> str:
    if opcode == "while":
        return "condition" if attr == "condition" else "body"
    if opcode == "conditional":
        return {"true_computation": "true branch", "false_computation": "false branch"}.get(attr, f"branch {index}")
    return "calls" if count == 1 else f"calls {index}"


def _small_constant(inst: Instruction, limit: int) -> bool:
    return (inst.opcode == "constant" and inst.shape.is_array and inst.shape.element_count <= limit
            and not inst.is_elided_constant)


def classify(g: ViewGraph, place: Place, options: ViewOptions) -> None:
    comp = place.computation
    users = comp.users()
    g.users[comp.name] = users
    in_fusion = place.role == "fusion"
    may_inline_broadcast = in_fusion or not g.module.is_scheduled
    kind = g.kind
    for inst in comp.instructions:
        root = inst is comp.root
        used = bool(users.get(inst))
        op = inst.opcode
        k = NODE
        if (used and not root and _small_constant(inst, options.inline_elements)) or (used and not root and op == "broadcast" and may_inline_broadcast and len(inst.operands) == 1
              and kind.get(id(inst.operands[0])) == INLINE and inst.operands[0].shape.element_count == 1):
            k = INLINE
        elif op == "get-tuple-element" and inst.operands and used and not root:
            k = GTE  # the root is drawn where XLA marks it, even a get-tuple-element of a tuple
        elif op == "parameter" and in_fusion and used and not root and place.owner is not None:
            k = FPARAM
        elif op == "fusion" and any(g.places.get(c.name) is not None and g.places[c.name].owner is inst
                                    for c in inst.called_computations):
            k = FUSION
        kind[id(inst)] = k
    for inst in comp.instructions:  # tuples read only through get-tuple-element are plumbing
        if inst.opcode == "tuple" and inst is not comp.root and users.get(inst) and all(
                kind.get(id(u)) == GTE for u in users[inst]):
            kind[id(inst)] = PLUMB


def fix_roots(g: ViewGraph) -> None:
    """A root ``get-tuple-element`` that leads nowhere drawn stays a node of its own."""
    for comp in g.computations:
        root = comp.root
        if root is not None and g.kind.get(id(root)) == GTE and g.resolve(root)[0] is None:
            g.kind[id(root)] = NODE


def make_units(g: ViewGraph, options: ViewOptions, targets: list[Instruction]) -> None:
    keep = {id(t) for t in targets}
    kind = g.kind
    marks = g.marks
    for comp in g.computations:
        place = g.places[comp.name]
        nodes = [i for i in comp.instructions if kind.get(id(i)) == NODE]
        chained: dict[int, Chain] = {}
        if not options.expand_chains:
            # a chain stays in one kernel and one scope: a layer's bias add feeding a sum of
            # skip connections (WaveNet's ``skip_sum``) is not that sum's first term
            for chain in find_chains(nodes, g.users[comp.name], lambda i: kind.get(id(i)) == NODE,
                                     lambda i: (marks.get(i.name), _op_scope(i)), min_length=options.min_chain,
                                     keep=lambda i: id(i) in keep):
                for m in chain.members + chain.absorbed:
                    chained[id(m)] = chain
        made: dict[int, Unit] = {}
        for pos, inst in enumerate(comp.instructions):
            if kind.get(id(inst)) != NODE:
                continue
            chain = chained.get(id(inst))
            if chain is not None:
                unit = made.get(id(chain))
                if unit is None:
                    unit = made[id(chain)] = g.new_unit("chain", place, pos, chain.members + chain.absorbed)
                    unit.chain = chain
                g.unit_of[id(inst)] = unit.index
            else:
                g.unit_of[id(inst)] = g.new_unit("inst", place, pos, [inst]).index


def make_edges(g: ViewGraph) -> None:
    kind = g.kind
    unit_of = g.unit_of
    edges = g.edges
    for comp in g.computations:
        place = g.places[comp.name]
        for inst in comp.instructions:
            if kind.get(id(inst)) != NODE:
                continue
            dst = g.unit_of[id(inst)]
            unit = g.units[dst]
            for k, op in enumerate(inst.operands):
                ok = kind.get(id(op))
                if ok == NODE:  # the common case, without a call
                    src_inst, label = op, ""
                elif ok == INLINE:
                    unit.inline.append((inst, k, op))
                    continue
                else:
                    src_inst, label = g.resolve(op)
                    if src_inst is None:
                        continue
                src = unit_of.get(id(src_inst))
                if src is None or src == dst:
                    continue
                edges.append((src, dst, label, inst, k))
        if place.owner is not None and place.role != "fusion" and comp.root is not None:
            owner_unit = g.unit_of.get(id(place.owner))
            src_inst, _ = g.resolve(comp.root)
            body_unit = g.unit_of.get(id(src_inst)) if src_inst is not None else None
            if owner_unit is not None and body_unit is not None:
                g.body_edges.append((owner_unit, body_unit, place.role, place.key))
    for comp in g.computations:
        root = comp.root
        if root is not None and g.places[comp.name].parent is None:
            src_inst, _ = g.resolve(root)
            if src_inst is not None and id(src_inst) in g.unit_of:
                g.units[g.unit_of[id(src_inst)]].root = True
            if kind.get(id(root)) == FUSION:
                g.root_places.add(g.places[root.called_computations[0].name].key)


def hide(g: ViewGraph, visible: set[int]) -> None:
    """Keep only units holding a visible instruction; count what each shown unit lost."""
    keep = set()
    for u in g.units:
        if any(id(m) in visible for m in u.members):
            keep.add(u.index)
        else:
            u.alive = False
    for src, dst, *_ in g.edges:
        if src in keep and dst not in keep:
            g.units[src].hidden_users += 1
        elif dst in keep and src not in keep:
            g.units[dst].hidden_operands += 1


def _op_scope(inst: Instruction) -> str:
    """The scope of ``inst``'s op name: all of it but the op's own name (``dense/BiasAdd`` → ``dense``)."""
    md = inst.metadata
    return md.op_name.rpartition("/")[0] if md is not None and md.op_name else ""


@dataclass
class Chain:
    """``members`` in order (first … last); ``absorbed`` the private side inputs taken in."""

    members: list[Instruction]
    absorbed: list[Instruction] = field(default_factory=list)


def find_chains(instructions: Sequence[Instruction], users: dict[Instruction, list[Instruction]],
                drawn: Callable[[Instruction], bool], group: Callable[[Instruction], Hashable],
                *, min_length: int = 3, keep: Callable[[Instruction], bool] = lambda i: False) -> list[Chain]:
    """Maximal chains of at least ``min_length`` members among ``instructions`` (one computation).

    ``drawn(i)`` says whether ``i`` is a node of its own (not inlined or elided); ``group(i)``
    must be equal along a chain (callers pass the instruction's mark, so a chain never spans two
    kernels); ``keep(i)`` excludes an instruction (the ``--focus`` target).
    """
    root = instructions[0].parent.root if instructions and instructions[0].parent else None
    succ: dict[int, Instruction] = {}
    pred: dict[int, Instruction] = {}
    for inst in instructions:
        if not is_elementwise(inst.opcode) or not drawn(inst) or keep(inst):
            continue
        for op in inst.operands:
            if (op.opcode == inst.opcode and op.shape == inst.shape and op is not root and id(op) not in succ
                    and drawn(op) and not keep(op) and _only_user(users, op, inst) and group(op) == group(inst)):
                succ[id(op)] = inst
                pred[id(inst)] = op
                break
    chains: list[Chain] = []
    for inst in instructions:
        if id(inst) in pred or id(inst) not in succ:
            continue
        members = [inst]
        while id(members[-1]) in succ:
            members.append(succ[id(members[-1])])
        if len(members) >= min_length:
            chains.append(Chain(members, _absorb(members, users, drawn, group, keep, root)))
    return chains


def _only_user(users: dict[Instruction, list[Instruction]], op: Instruction, user: Instruction) -> bool:
    us = users.get(op, ())
    return bool(us) and all(u is user for u in us)


def _absorb(members: list[Instruction], users: dict[Instruction, list[Instruction]],
            drawn: Callable[[Instruction], bool], group: Callable[[Instruction], Hashable],
            keep: Callable[[Instruction], bool], root: Instruction | None) -> list[Instruction]:
    inside = {id(m) for m in members}
    found: list[Instruction] = []
    for m in members:
        for op in m.operands:
            if (id(op) not in inside and op is not root and drawn(op) and not keep(op)
                    and op.opcode not in ("parameter", "constant") and not op.called_computations
                    and _only_user(users, op, m) and group(op) == group(m)):
                inside.add(id(op))
                found.append(op)
    # Only side inputs that recur along the chain (one per member, or nearly) are absorbed: a
    # one-off operand (the reshape feeding the first add) stays a node of its own.
    counts: dict[str, int] = {}
    for op in found:
        counts[op.opcode] = counts.get(op.opcode, 0) + 1
    enough = max(2, len(members) // 2)
    return [op for op in found if counts[op.opcode] >= enough]
