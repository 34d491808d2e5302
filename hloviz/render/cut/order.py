"""Program order for the overview: the picture reads top to bottom as the program runs.

An overview (issue 33) draws a training step as a few boxes, each a layer holding its forward
*and* backward work (and its weights' update, credited by use). Arrows then run both ways
between neighbouring layers — activations down, gradients up — and dot, which must rank a
cyclic graph, reverses whichever arrows it likes: the TF CNN step drew its layers bottom-up in
one column and side by side in the other, the loss and the optimizer above the model.

Here every drawn unit gets a place in the program:

* its **phase** first (forward, backward, optimizer: :data:`hloviz.analysis.opnames.PHASES`,
  from its instructions' op names), a unit holding forward work counting as forward;
* then the middle position (the median) of its instructions of that phase in the drawn
  computation's text (the entry's instruction order: the order TF/JAX emitted it before
  optimization, XLA's schedule after). Not the first: XLA schedules a layer's weight
  preparation (a transpose, a cast) early, which put ``logits`` above ``conv2`` in the CNN
  step's optimized column. Only instructions with an op name of their own count where the unit
  has any: a weight's copy, placed in its layer by use, has none; and of those, only the ones
  that read a value another unit computed, where the unit has any (its weights' preparation,
  made of parameters and constants alone, runs wherever XLA schedules it: a batch norm's
  ``Rsqrt`` of its moving variance first of all, which stood Xception's batch norms above
  their convolutions by the median of two);
* the root last; a unit of parameters alone, or of anything without drawn operands (an iota
  fusion, a broadcast constant; not the optimizer's own work), just before its first user — a unit that only carries a
  parameter's value on (its ``reshape``) where a parameter goes: beside the unit before its user.

:mod:`hloviz.render.cut.ranks` then ranks the picture by these places.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from ...analysis.opnames import PHASES
from ...ir import Instruction
from ...opcodes import LAYER_WORK, SCOPE_INPUTS, VALUE_CARRIERS, WEIGHT_CARRIERS
from ..reuse import kept
from ..tree.model import Unit, ViewGraph, leaf_edges

__all__ = ["AFTER", "BESIDE", "order_keys", "trains"]

_RANK = {p: i for i, p in enumerate(PHASES)}
_OPTIMIZER = _RANK["optimizer"]
_UNRANKED = frozenset({"parameter"})


def order_keys(g: ViewGraph, phase_of: Callable[[Instruction], str],
               loose: set[str] | None = None) -> dict[str, tuple[int, float]]:
    """Scene node key → (phase rank, position in the drawn computation) of each live unit that
    has a place in the program (see the module docstring). ``loose`` gets the keys of a body's
    parameters (hung under their loop by :mod:`hloviz.render.cut.loops`, not one under another)."""
    top = g.computations[0] if g.computations else None
    last = len(PHASES)
    readers = (g.users.get(top.name) or top.users()) if top is not None else None
    data = _data_inputs(top, readers, phase_of) if top is not None and readers is not None else frozenset()
    keys: dict[str, tuple[int, float]] = {}
    inner: set[str] = set()  # units inside a while/conditional/call body: placed in their caller's slot
    for u in g.units:
        if not u.alive:
            continue
        if u.root:
            keys[f"u{u.index}"] = (last, 0)
            continue
        if u.members and u.members[0].parent is not top:
            spot = _inner_key(g, u.members[0], top, phase_of)
            if spot is not None:
                keys[f"u{u.index}"] = spot
                inner.add(f"u{u.index}")
                if loose is not None and all(m.opcode == "parameter" for m in u.members):
                    loose.add(f"u{u.index}")
                continue
        best = _kept_top_key(g, u, top, phase_of, readers, data)
        if best is not None:
            keys[f"u{u.index}"] = best
    # a unit of parameters alone goes right before its first user in that order: held there by
    # an invisible arrow, it no longer stretches the rows of a cluster it sits in above the
    # cluster before it (the Flax step's loss cluster held a Dense bias, and dot stood the two
    # clusters side by side)
    users: dict[str, list[str]] = {}
    fed: set[str] = set()
    for a, b in leaf_edges(g):
        users.setdefault(a, []).append(b)
        fed.add(b)
    # (the optimizer's own work keeps its place: an Adam step's bias corrections closed into one
    # box read only the step count and the learning rate, and stood above the model, before the
    # layers whose updates use them, in the explorer's first view)
    sources = [k for k in keys if k not in fed and users.get(k) and k not in inner and keys[k][0] != _OPTIMIZER]
    for key in sources:
        del keys[key]  # no operands drawn (an iota, a broadcast of a constant): placed as a parameter
    # (of those that do a layer's work: a resize's dot, a stem's convolution, before the square
    # root of a variance placed by it)
    was = {key: first for key in sources if (first := _first_layer_work(g.units[int(key[1:])], top, g)) is not None}
    for u in g.units:
        key = f"u{u.index}"
        if u.alive and key not in keys:
            after = [keys[d] for d in users.get(key, ()) if d in keys]
            if after:
                rank, spot = min(after)
                if _carries_a_parameter(u):
                    keys[key] = (rank, spot - BESIDE)
                else:  # a source doing a layer's work stands first among those before one user, in the
                    # program's order (a preprocessing model's input, read by a resize, and its normalizer's
                    # ``sqrt`` of a variance: the ``sqrt``, made first, stood above the input)
                    keys[key] = (rank, spot - 0.25 - _EARLIER * (spot - was.get(key, spot)))
    _after_what_feeds_them(g, keys, phase_of, inner)
    if loose is not None:
        # a forward value nothing reads (TF's ``zeros_like`` of a loop's unused results) hangs
        # under what computes it, off the file: moved right after its producer, it took the
        # row between a Keras text classifier's ``lstm`` and the ``dense`` reading its output
        at_top = {f"u{u.index}" for u in g.units if u.alive and u.members and u.members[0].parent is top}
        loose.update(k for k, (rank, _spot) in keys.items()
                     if rank == _RANK["forward"] and k in fed and k not in users and k in at_top)
    return keys


def _first_layer_work(u: Unit, top, g: ViewGraph) -> float | None:
    """Where ``u``'s first instruction of the top computation doing a layer's work (:data:`LAYER_WORK`,
    itself or fused) sits in the text; None where it does none."""
    return min((g.position(m) for m in u.members if m.parent is top and _does_layer_work(m)), default=None)


def _after_what_feeds_them(g: ViewGraph, keys: dict[str, tuple[int, float]],
                           phase_of: Callable[[Instruction], str], inner: set[str]) -> None:
    """Move each forward unit below the forward units whose values its forward work reads,
    where its median put it above one: the text's order runs every forward arrow down, a
    median need not. A Keras LSTM's layer holds its loop's setup and its outputs' gathering
    too, and its median stood below the ``dense`` layer that reads its output (an unseen text
    classifier's step drew ``dense`` above ``lstm``). Moved units go right after their last
    producer, in the order of their sources; units that feed each other (a tied embedding
    read at the start and the end) keep their places, and so do those inside a loop's body
    (placed in their caller's slot)."""
    forward = _RANK["forward"]
    owner = g.owners()
    preds: dict[str, set[str]] = {}
    for src, dst, _label, user, k in g.edges:
        s, d = owner[src], owner[dst]
        a, b = f"u{s}", f"u{d}"
        if s == d or a in inner or b in inner or keys.get(a, (-1,))[0] != forward or keys.get(b, (-1,))[0] != forward:
            continue
        op = user.operands[k] if 0 <= k < len(user.operands) else None
        if op is not None and phase_of(op) == "forward" and phase_of(user) == "forward":
            preds.setdefault(b, set()).add(a)
    if not preds:
        return
    waiting = {b: len(ps) for b, ps in preds.items()}
    users: dict[str, list[str]] = {}
    for b, ps in preds.items():
        for a in ps:
            users.setdefault(a, []).append(b)
    ready = deque(sorted((a for a in users if a not in waiting), key=keys.__getitem__))
    while ready:
        a = ready.popleft()
        for b in users.get(a, ()):
            waiting[b] -= 1
            if waiting[b]:
                continue
            last = max(keys[p][1] for p in preds[b])
            if keys[b][1] <= last:
                keys[b] = (forward, last + AFTER)
            ready.append(b)


#: Units of fewer members than this are placed afresh each time: keeping them costs more.
_KEPT_FROM = 64


def _kept_top_key(g: ViewGraph, u: Unit, top, phase_of: Callable[[Instruction], str],
                  readers: dict[Instruction, list[Instruction]] | None, data: frozenset[int]) -> tuple[int, float] | None:
    """:func:`_top_key`, kept for a unit of the same members inside a
    :func:`~hloviz.render.reuse.drawings_reused` block: the overview drawn again with fewer
    boxes, and the explorer's pictures, close the same scopes again (an EfficientNetB0 step's
    redraw placed its 17,000 members anew: a quarter of its Python). What it reads besides the
    members — text positions, the top computation's readers, the phases of the scopes — is the
    module's, but for the few instructions the graph draws in another phase (a step counter)."""
    if len(u.members) < _KEPT_FROM:
        return _top_key(g, u, top, phase_of, readers, data)
    key = ("top_key", id(top), u.pos, tuple(map(id, u.members)), frozenset(g.phases.items()))
    return kept(key, (g.module, top), lambda: _top_key(g, u, top, phase_of, readers, data))


def _top_key(g: ViewGraph, u: Unit, top, phase_of: Callable[[Instruction], str],
             readers: dict[Instruction, list[Instruction]] | None, data: frozenset[int]) -> tuple[int, float] | None:
    """The phase and median position of a unit's instructions of the top computation
    (``readers``: the top computation's users, :meth:`~hloviz.ir.Computation.users`; ``data``:
    :func:`_data_inputs`)."""
    by_phase: dict[int, list[int]] = {}
    named: dict[int, list[int]] = {}
    working: dict[int, list[int]] = {}
    position = g.position
    ranked = sorted((position(m), m) for m in u.members if m.parent is top)  # text order, once for all three
    prepared = _weight_preparation(ranked, data)
    # made of parameters and returned, nothing else reading it: an optimizer's step count
    # incremented (JAX names it like the forward pass: an unseen MLP's optimizer box stood
    # between its model and its loss by it)
    aside = prepared & _returned_only(ranked, top, readers) if readers is not None and prepared else set()
    rank_of = _RANK.get
    unnamed: dict[int, list[tuple[int, Instruction]]] = {}
    for spot, m in ranked:
        if m.opcode in _UNRANKED or (aside and id(m) in aside and len(aside) < len(u.members)):
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
    if u.members and u.members[0].parent is not top and u.members[0].opcode not in _UNRANKED:
        return (0, u.pos[1])  # a unit drawn from inside a fusion of the top computation
    return None


def _data_inputs(top, readers: dict[Instruction, list[Instruction]], phase_of: Callable[[Instruction], str]) -> frozenset[int]:
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
    ``gather`` of a training step's ``data`` (:func:`_data_inputs`) is no such preparation: it is
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
    if inst.opcode in SCOPE_INPUTS:
        return True
    return depth > 0 and inst.opcode in VALUE_CARRIERS and all(_sourced(o, depth - 1) for o in inst.operands)


def _inner_key(g: ViewGraph, inst: Instruction, top, phase_of: Callable[[Instruction], str]) -> tuple[int, float] | None:
    """The place in the program of an instruction drawn inside a while loop's condition or body:
    right after its caller in the top computation (between it and the next instruction), a
    condition's instructions before the body's, each computation's in its own text order
    (nested bodies the same way, inside their caller's slot). Parameters included: a body's
    parameter starts its body, it is not placed before the loop. A call's or a conditional
    branch's computation drawn open is placed the same way, after its caller (XLA:CPU wraps a
    loop in a ``call``: placed by their own text positions, its parameter and loop stood first
    in the program, the arrow into the frame made a cycle with the rest, and dot drew a
    ``lexsort``'s inputs below it). Inside a fusion: its fusion's place (called from the top
    computation: None, as before)."""
    path: list[Instruction] = []
    x = inst
    while x.parent is not top:
        place = g.place_of(x)
        if place is None or place.owner is None:
            return None
        if place.role == "fusion":  # a fused instruction stands where its fusion does
            path.clear()
        else:
            path.append(x)
        x = place.owner
    if not path:
        return None
    last = x is top.root  # the root is drawn last (order_keys): its bodies after it
    lo, width = (0 if last else g.position(x)) + 0.05, 0.4
    for y in reversed(path):
        place = g.place_of(y)
        n = max(1, len(place.computation.instructions)) if place is not None else 1
        half = 0 if place is not None and place.role == "condition" else 1
        lo, width = lo + width * half / 2, width / 2
        lo, width = lo + width * g.position(y) / n, width / n
        if y is not path[0]:  # an owner on the way: at its slot's start, its bodies inside
            lo, width = lo + width * 0.1, width * 0.8
    return (len(PHASES) if last else _RANK.get(phase_of(x), 0), lo)


def _carries_a_parameter(u: Unit) -> bool:
    """A unit of parameters, or of what only carries a parameter's or a literal's value on (a
    ``reshape``, ``broadcast``, ``convert`` of it: the loss's ``reshape`` of the targets): no
    step of the program, placed as a parameter is (beside the unit before its user, not on a
    row of its own in a training step's file)."""
    inside = {id(m) for m in u.members}
    return all((m.opcode == "parameter" or m.opcode in VALUE_CARRIERS)
               and all(id(o) in inside or o.opcode in SCOPE_INPUTS for o in m.operands) for m in u.members)


#: How far after the last unit feeding it a forward unit is moved (:func:`_after_what_feeds_them`):
#: past a loop's body units (placed at most 0.45 after their caller), short of :data:`BESIDE`,
#: which marks a parameter's place and keeps a unit out of a training step's file.
AFTER = 0.475

#: Per position between a source's first layer work in the text and its first user, how much
#: further before that user it goes (:func:`order_keys`): small enough that a whole module's
#: distance keeps it within a quarter of its user.
_EARLIER = 1e-7

#: How far before its first user a unit of parameters alone is placed: a key whose position
#: is this fraction below a whole number is a parameter's, kept out of a training step's file
#: (it stands beside the unit before its user, not on a row of its own).
BESIDE = 0.5


def trains(keys: dict[str, tuple[int, float]], g: ViewGraph) -> bool:
    """Whether the view is a training step, drawn as one file: ``order_keys`` placed units of a
    backward pass or an optimizer of their own, or a drawn unit holds backward work —
    a small step whose every layer holds its own forward, backward and update (a grouped CNN's:
    its layers' updated weights ran to the ROOT as long arrows, crossing)."""
    if any(0 < k[0] < len(PHASES) for k in keys.values()):
        return True
    if g.program_order is None:
        return False
    phase = g.program_order
    return any(phase(m) == "backward" for u in g.units if u.alive for m in u.members)
