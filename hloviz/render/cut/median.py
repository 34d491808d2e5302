"""Where a drawn unit stands in its computation's text, for the overview's program order
(:mod:`hloviz.render.cut.order`): the phase of its earliest work and the median position of that
work, its weights' preparation left out.

A layer's box holds instructions XLA scheduled all over the computation — its weights'
preparation first of all, its forward work where the data reaches it, its gradient and update
late — so no one instruction stands for it. The median of its work on the program's values does
(the reasons, each from a model that drew out of order, are in the functions' docstrings).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...analysis.opnames import PHASES
from ...ir import Instruction
from ...opcodes import LAYER_WORK, SCOPE_INPUTS, VALUE_CARRIERS, WEIGHT_CARRIERS
from ..reuse import kept
from ..tree.model import Unit, ViewGraph

__all__ = ["data_inputs", "first_layer_work", "kept_median_key", "median_key"]

_RANK = {p: i for i, p in enumerate(PHASES)}
_UNRANKED = frozenset({"parameter"})


def first_layer_work(u: Unit, top, g: ViewGraph) -> float | None:
    """Where ``u``'s first instruction of the top computation doing a layer's work (:data:`LAYER_WORK`,
    itself or fused) sits in the text; None where it does none."""
    return min((g.position(m) for m in u.members if m.parent is top and _does_layer_work(m)), default=None)


#: Units of fewer members than this are placed afresh each time: keeping them costs more.
_KEPT_FROM = 64


def kept_median_key(g: ViewGraph, u: Unit, top, phase_of: Callable[[Instruction], str],
                  readers: dict[Instruction, list[Instruction]] | None, data: frozenset[int]) -> tuple[int, float] | None:
    """:func:`median_key`, kept for a unit of the same members inside a
    :func:`~hloviz.render.reuse.drawings_reused` block: the overview drawn again with fewer
    boxes, and the explorer's pictures, close the same scopes again (an EfficientNetB0 step's
    redraw placed its 17,000 members anew: a quarter of its Python). What it reads besides the
    members — text positions, the top computation's readers, the phases of the scopes — is the
    module's, but for the few instructions the graph draws in another phase (a step counter)."""
    if len(u.members) < _KEPT_FROM:
        return _unit_key(g, u, top, phase_of, readers, data)
    key = ("top_key", id(top), u.pos, tuple(map(id, u.members)), frozenset(g.phases.items()))
    return kept(key, (g.module, top), lambda: _unit_key(g, u, top, phase_of, readers, data))


def _unit_key(g: ViewGraph, u: Unit, top, phase_of: Callable[[Instruction], str],
              readers: dict[Instruction, list[Instruction]] | None, data: frozenset[int]) -> tuple[int, float] | None:
    """:func:`median_key` of ``u``'s members; a unit drawn from inside a fusion of the top
    computation, where it has none there: its fusion's place."""
    spot = median_key(g, u.members, top, phase_of, readers, data)
    if spot is None and u.members and u.members[0].parent is not top and u.members[0].opcode not in _UNRANKED:
        return (0, u.pos[1])
    return spot


def median_key(g: ViewGraph, members: Sequence[Instruction], top, phase_of: Callable[[Instruction], str],
               readers: dict[Instruction, list[Instruction]] | None, data: frozenset[int]) -> tuple[int, float] | None:
    """The phase and median position of ``members``' instructions of the ``top`` computation
    (``readers``: its users, :meth:`~hloviz.ir.Computation.users`; ``data``: :func:`data_inputs`);
    None where none is there."""
    by_phase: dict[int, list[int]] = {}
    named: dict[int, list[int]] = {}
    working: dict[int, list[int]] = {}
    position = g.position
    ranked = sorted((position(m), m) for m in members if m.parent is top)  # text order, once for all three
    prepared = _weight_preparation(ranked, data)
    # made of parameters and returned, nothing else reading it: an optimizer's step count
    # incremented (JAX names it like the forward pass: an unseen MLP's optimizer box stood
    # between its model and its loss by it)
    aside = prepared & _returned_only(ranked, top, readers) if readers is not None and prepared else set()
    rank_of = _RANK.get
    unnamed: dict[int, list[tuple[int, Instruction]]] = {}
    for spot, m in ranked:
        if m.opcode in _UNRANKED or (aside and id(m) in aside and len(aside) < len(members)):
            continue
        rank = rank_of(phase_of(m), 0)
        by_phase.setdefault(rank, []).append(spot)
        if m.metadata.op_name:
            named.setdefault(rank, []).append(spot)
            if id(m) not in prepared:
                working.setdefault(rank, []).append(spot)
        elif m.opcode in LAYER_WORK:
            unnamed.setdefault(rank, []).append((spot, m))
    # a layer's work XLA left without a name (a dot it split off) counts in a pass where nothing
    # named works: beside named work it is mostly the gradient's convolutions, which lost their
    # names and read as forward (an unseen mixed-precision step's optimized res_1_a and res_2_a
    # stood after the loss by them); beside its weight's preparation alone, it is the layer's
    # work (a Flax Dense(1)'s forward dot, unnamed, beside its kernel's named bitcast, scheduled
    # first: an unseen Fourier operator's optimized ``project`` stood above its ``lift``)
    for rank, work in unnamed.items():
        if rank not in working:
            named[rank] = sorted([*named.get(rank, ()), *(spot for spot, _m in work)])
            working[rank] = [spot for spot, m in work if id(m) not in prepared]
    if by_phase:
        # the phase of its earliest work; where it is, by what does that work on the program's
        # values (not its weights' preparation), else by its named instructions, else all
        rank = min(named or by_phase)
        spots = working.get(rank) or named.get(rank) or by_phase[rank]  # in text order already
        return (rank, spots[(len(spots) - 1) // 2])
    return None


def data_inputs(top, readers: dict[Instruction, list[Instruction]], phase_of: Callable[[Instruction], str]) -> frozenset[int]:
    """Ids of the parameters of a training step's ``top`` computation that the optimizer reads
    none of, directly or through a copy: the program's data (images, labels), not its weights.
    The first layer's convolution reads parameters alone, and taken for its weights' preparation
    it did not count: an unseen U-Net step's ``down_1`` stood below ``up_1`` by the one fusion of
    its own that reads a later layer (the skip connection's concatenation)."""
    if not any(phase_of(i) == "optimizer" for i in top.instructions):
        return frozenset()

    def updated(value: Instruction, depth: int = 4) -> bool:  # through the copies XLA lays weights out in
        return any(phase_of(r) == "optimizer" or (depth > 0 and r.opcode in WEIGHT_CARRIERS and updated(r, depth - 1))
                   for r in readers.get(value, ()))

    return frozenset(id(p) for p in top.instructions if p.opcode == "parameter" and not updated(p))


def _weight_preparation(ranked: list[tuple[int, Instruction]], data: frozenset[int]) -> set[int]:
    """Ids of a unit's members of the top computation (``ranked``: (position, member) in text
    order) that read nothing computed by another unit: parameters, constants and what the unit
    itself made of them (a kernel's transpose, a batch norm's scale from its moving variance).
    XLA schedules such work wherever it likes, mostly first: a batch norm's box holding the
    fusion that folds its statistics (scheduled at the top) and the one applying them (after its
    convolution) stood above the convolution by the median of two, and every later layer's arrow
    ran back up (Xception's optimized column). A convolution, a ``dot`` or an embedding's
    ``gather`` of a training step's ``data`` (:func:`data_inputs`) is no such preparation: it is
    the first layer's work, which reads parameters alone (a loss's conversion of the labels stays
    preparation; an unseen causal LM's ``embed`` stood below its attention after optimization)."""
    prepared: set[int] = set()
    for _, m in ranked:  # operands first
        if (all(id(o) in prepared or _sourced(o) or id(_tuple_of(o)) in prepared for o in m.operands)
                and not (data and _works_on_data(m, data))):
            prepared.add(id(m))
    return prepared


def _tuple_of(inst: Instruction) -> Instruction:
    """What made the tuple ``inst`` is an element of (itself where it is none). An element is
    drawn apart from its tuple, in a unit of its own: a dropout's ``rng-bit-generator``, drawing
    its bits from the seed, is preparation, and the bits taken from its tuple were read as the
    work of another unit (an unseen MobileNet step's ``dropout`` box stood first, above the
    layers whose output it masks)."""
    while inst.opcode == "get-tuple-element" and inst.operands:
        inst = inst.operands[0]
    return inst


def _works_on_data(inst: Instruction, data: frozenset[int]) -> bool:
    """Does ``inst`` read one of ``data`` — itself, or laid out anew (:data:`VALUE_CARRIERS`: the
    ``bitcast`` folding a sequence's batch and time into the rows a ``dot`` reads; an unseen
    linear-RNN step's optimized ``layer_0`` stood below ``layer_1`` by it) — into a layer's work
    (:data:`LAYER_WORK`; itself, or fused)?"""
    if not any(_of_data(o, data) for o in inst.operands):
        return False
    return _does_layer_work(inst)


def _does_layer_work(inst: Instruction) -> bool:
    """``inst`` is a layer's work (:data:`LAYER_WORK`), itself or in the computation it fuses."""
    return inst.opcode in LAYER_WORK or any(i.opcode in LAYER_WORK for c in inst.called_computations
                                               for i in c.instructions)


def _of_data(value: Instruction, data: frozenset[int], depth: int = 3) -> bool:
    """``value`` is one of ``data``, or one laid out anew from it (a few carriers deep)."""
    while id(value) not in data:
        if depth == 0 or value.opcode not in VALUE_CARRIERS or len(value.operands) != 1:
            return False
        value, depth = value.operands[0], depth - 1
    return True


def _returned_only(ranked: list[tuple[int, Instruction]], top, users: dict[Instruction, list[Instruction]]) -> set[int]:
    """Ids of a unit's members of the top computation (``ranked`` as for
    :func:`_weight_preparation`) whose values go nowhere but to the ROOT and to other such
    members (users read before their operands: text order reversed)."""
    root = top.root
    out: set[int] = set()
    for _, m in reversed(ranked):
        read_by = users.get(m, ())
        if read_by and all(x is root or id(x) in out for x in read_by):
            out.add(id(m))
    return out


def _sourced(inst: Instruction, depth: int = 4) -> bool:
    """A parameter, a constant or an iota, or such a value carried on (a ``broadcast`` of a
    constant, a ``convert`` of a parameter: TF's dropout draws its random bits from its seed
    and broadcast literals, each drawn as a box of its own)."""
    if inst.opcode in SCOPE_INPUTS or (inst.opcode == "get-tuple-element" and _tuple_of(inst).opcode == "parameter"):
        return True  # (an element of a loop body's parameter: the weights, the seed the loop carries)
    return depth > 0 and inst.opcode in VALUE_CARRIERS and all(_sourced(o, depth - 1) for o in inst.operands)
