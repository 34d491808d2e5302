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
from ...opcodes import SCOPE_INPUTS, VALUE_CARRIERS
from ..tree.model import Unit, ViewGraph, leaf_edges
from .median import data_inputs, first_layer_work, kept_median_key, median_key

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
    data = data_inputs(top, readers, phase_of) if top is not None and readers is not None else frozenset()
    keys: dict[str, tuple[int, float]] = {}
    inner: set[str] = set()  # units inside a while/conditional/call body: placed in their caller's slot
    carried: set[str] = set()  # ... of a body's parameters alone: at the body's start
    callers: set[int] = set()  # the instructions of the top computation whose bodies are drawn open
    for u in g.units:
        if not u.alive:
            continue
        if u.root:
            keys[f"u{u.index}"] = (last, 0)
            continue
        if u.members and u.members[0].parent is not top:
            spot = _inner_key(g, _representative(g, u, phase_of), top, phase_of, callers)
            if spot is not None:
                keys[f"u{u.index}"] = spot
                (carried if all(m.opcode == "parameter" for m in u.members) else inner).add(f"u{u.index}")
                continue
        best = kept_median_key(g, u, top, phase_of, readers, data)
        if best is not None:
            keys[f"u{u.index}"] = best
    # a box holding a loop drawn open stands where the loop does, its body after it
    looping = _at_the_loop(g, keys, callers, inner | carried, phase_of) if callers else set()
    # a unit of parameters alone goes right before its first user in that order: held there by
    # an invisible arrow, it no longer stretches the rows of a cluster it sits in above the
    # cluster before it (the Flax step's loss cluster held a Dense bias, and dot stood the two
    # clusters side by side)
    users: dict[str, list[str]] = {}
    fed: set[str] = set()
    for a, b in leaf_edges(g):
        users.setdefault(a, []).append(b)
        fed.add(b)
    _inner_sources_first(keys, inner - fed, inner, users)
    _feeding_the_loop_first(keys, looping, users)
    inner |= carried
    if loose is not None:
        loose |= carried
    # (the optimizer's own work keeps its place: an Adam step's bias corrections closed into one
    # box read only the step count and the learning rate, and stood above the model, before the
    # layers whose updates use them, in the explorer's first view)
    sources = [k for k in keys if k not in fed and users.get(k) and k not in inner and k not in looping
               and keys[k][0] != _OPTIMIZER]
    for key in sources:
        del keys[key]  # no operands drawn (an iota, a broadcast of a constant): placed as a parameter
    # (of those that do a layer's work: a resize's dot, a stem's convolution, before the square
    # root of a variance placed by it)
    was = {key: first for key in sources if (first := first_layer_work(g.units[int(key[1:])], top, g)) is not None}
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


def _inner_sources_first(keys: dict[str, tuple[int, float]], sources: set[str], inner: set[str],
                         users: dict[str, list[str]]) -> None:
    """Place each unit inside a loop's body that no drawn arrow feeds (``sources``) just before
    its first user in the body, as a source of the top computation is placed before its user:
    XLA schedules a dropout's random bits, drawn from the seed the loop carries, first of all,
    and by their median an optimized loop body of training steps drew ``drop`` above ``enc``.
    Two before one user keep their order (the earlier, the further before)."""
    for key in sorted(sources):
        after = [keys[d] for d in users.get(key, ()) if d in inner]
        if after:
            rank, spot = min(after)
            keys[key] = (rank, spot - _JUST_BEFORE * (1 + max(0.0, spot - keys[key][1])))


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


def _inner_key(g: ViewGraph, inst: Instruction, top, phase_of: Callable[[Instruction], str],
               callers: set[int]) -> tuple[int, float] | None:
    """The place in the program of an instruction drawn inside a while loop's condition or body:
    right after its caller in the top computation (between it and the next instruction), a
    condition's instructions before the body's, each computation's in its own text order
    (nested bodies the same way, inside their caller's slot). Parameters included: a body's
    parameter starts its body, it is not placed before the loop. A call's or a conditional
    branch's computation drawn open is placed the same way, after its caller (XLA:CPU wraps a
    loop in a ``call``: placed by their own text positions, its parameter and loop stood first
    in the program, the arrow into the frame made a cycle with the rest, and dot drew a
    ``lexsort``'s inputs below it). Inside a fusion: its fusion's place (called from the top
    computation: None, as before). ``callers`` gets the caller's id."""
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
    callers.add(id(x))
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


def _at_the_loop(g: ViewGraph, keys: dict[str, tuple[int, float]], callers: set[int], inner: set[str],
                 phase_of: Callable[[Instruction], str]) -> set[str]:
    """Key each unit of the top computation holding a loop (a call) whose body is drawn open at
    that instruction: its body's units are keyed just after it (:func:`_inner_key`). A block of
    a TensorFlow loop's plumbing — the reshapes into the loop and out of it, the ``while`` among
    them — stood by its median after its own body, and the body floated above the loop. Returns
    their keys: each keeps that place (fed by nothing drawn, it is no source placed by its user)."""
    placed: set[str] = set()
    for key in keys.keys() - inner:
        u = g.units[int(key[1:])]
        held = next((m for m in u.members if id(m) in callers), None) if not u.root else None
        if held is not None:
            keys[key] = (_RANK.get(phase_of(held), 0), g.position(held))
            placed.add(key)
    return placed


def _feeding_the_loop_first(keys: dict[str, tuple[int, float]], looping: set[str], users: dict[str, list[str]]) -> None:
    """Move each unit feeding a loop's box (``looping``: :func:`_at_the_loop`), and what feeds
    it in turn, that the order puts after the loop (a later phase: a JAX accumulation's zeroed
    gradients, named as the backward pass, going into the loop) just before the loop: they
    stood below the loop's body, their arrows running back up to the loop."""
    feeders: dict[str, list[str]] = {}
    for a, readers in users.items():
        for b in readers:
            feeders.setdefault(b, []).append(a)
    stack = sorted(looping)
    while stack:
        b = stack.pop()
        for a in feeders.get(b, ()):
            if a in keys and a not in looping and keys[a] > keys[b]:
                keys[a] = (keys[b][0], keys[b][1] - _BEFORE_THE_LOOP)
                stack.append(a)


def _representative(g: ViewGraph, u: Unit, phase_of: Callable[[Instruction], str]) -> Instruction:
    """The instruction standing for a unit drawn inside a loop's body in :func:`_inner_key`: the
    one at the unit's place in its body by :func:`~hloviz.render.cut.median.median_key` (the phase
    of its earliest work, the median of that work), each fused member counted as its fusion.
    The unit's first member stood for it before: a training step's layers in an optimized loop
    body, each holding its forward, backward and update, stood ``cls``, ``drop``, ``enc``,
    ``norm`` by whichever instruction came first."""
    lifted: dict[int, Instruction] = {}
    for m in u.members:
        place = g.place_of(m)
        while place is not None and place.role == "fusion" and place.owner is not None:
            m = place.owner
            place = g.place_of(m)
        lifted[id(m)] = m
    first = next(iter(lifted.values()))
    spot = median_key(g, list(lifted.values()), first.parent, phase_of, None, frozenset()) if len(lifted) > 1 else None
    if spot is None:
        return u.members[0]
    return next((m for m in lifted.values() if m.parent is first.parent and g.position(m) == spot[1]), u.members[0])


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

#: How far before a loop's box a unit feeding it is moved (:func:`_feeding_the_loop_first`): well
#: within the positions between it and the instruction before it.
_BEFORE_THE_LOOP = 0.01

#: How far before its first user a unit inside a loop's body with no drawn operands is placed
#: (:func:`order_keys`): within the user's slot, whose width is a fraction of the body's.
_JUST_BEFORE = 1e-9

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
