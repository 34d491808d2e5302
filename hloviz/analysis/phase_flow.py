"""The optimizer phase of a JAX training step, found by data flow.

TensorFlow names an optimizer's update after the optimizer (``adam/…``), and
:func:`hloviz.analysis.opnames.parse_op_name` reads the phase from that name. optax does not:
its update is plain JAX written in the traced function itself, so AdamW's moments and the
parameter update come out as ``jit(train_step)/mul``, ``…/add``, ``…/sqrt``, ``…/div`` —
the names of forward ops at the top of the function, next to the loss's ``jvp(…)``. What tells
them apart is where their data comes from: the update reads the gradients, which the backward
pass (``transpose(jvp(…))``) computes, and nothing the forward pass or the loss computes reads a
gradient.

:func:`mark_optimizer` follows values from the backward pass's instructions through the module
(into fused and called computations by their parameters; a loop or a branch carries what its
computations read) and re-phases as ``optimizer`` the forward ops named in the function itself that
such values reach, but for the model evaluated at the new weights (a product of the data), and then
those serving only the update (Adam's step count and bias correction). Without a backward pass, nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..ir import Computation, HloModule, Instruction, called_closure
from ..opcodes import BODY_CALLERS, LAYOUT_ONLY, LITERAL_SOURCES, PRODUCTS, VALUE_CARRIERS, VALUE_FORWARDING_CALLERS

__all__ = ["has_backward", "made_of_literals", "mark_after_gradients", "mark_optimizer", "runs_backward"]


def mark_optimizer(module: HloModule, phase_of: dict[Instruction, str],
                   candidate: Callable[[Instruction], bool],
                   updating: Callable[[Instruction], bool] | None = None) -> list[Instruction]:
    """Set ``phase_of[i] = "optimizer"`` for each instruction ``i`` with ``candidate(i)`` (a
    forward op named at the traced function's top level) that reads, directly or through other
    instructions, a value the backward pass computes (and, where given, ``updating(i)``: asked
    of those alone, as it may cost more); return them in text order. Nothing is done when no
    instruction is ``backward``."""
    entry = module.entry
    if entry is None or "backward" not in phase_of.values():
        return []
    walk = _Walk(phase_of, candidate if updating is None else (lambda i: candidate(i) and updating(i)))
    walk.computation(entry, frozenset())
    evaluated = _evaluation(entry, walk.found, phase_of)
    walk.found = [i for i in walk.found if id(i) not in evaluated]
    for inst in walk.found:
        phase_of[inst] = "optimizer"
    # a loop that computes gradients serves the optimizer, and is not its work: TF's ``for i in
    # tf.range(4)`` accumulating four micro-batches' gradients (its ``while`` at the top, whose
    # results Adam alone reads) was called the optimizer's, its forward and backward passes with it
    kept = lambda i: candidate(i) and not walk.computes_gradients(i)  # noqa: E731
    serving = _feeding_only_the_optimizer(module, phase_of, kept, walk.visited)
    if walk.found or serving or "optimizer" in phase_of.values():  # (a Keras optimizer is named: its step count is not)
        serving += _bookkeeping(entry, phase_of, kept)
    # and what their fusions hold (optax's fused ``count + 1``: its kernel was the forward pass's)
    held = [i for inst in serving if inst.opcode == "fusion" for i in _held(inst)
            if phase_of.get(i) == "forward" and candidate(i)]
    phase_of.update(dict.fromkeys(held, "optimizer"))
    return walk.found + serving + held


def _held(inst: Instruction) -> list[Instruction]:  # what ``inst`` calls holds (nested calls and fusions too)
    return [i for c in called_closure(inst.called_computations) for i in c.instructions]


def mark_after_gradients(module: HloModule, phase_of: dict[Instruction, str],
                         groups: list[list[Instruction]], *, every: bool = True) -> list[Instruction]:
    """Set ``phase_of[i] = "optimizer"`` for every forward instruction of each group (a scope the
    step names beside the model: TensorFlow's ``clip_by_global_norm``) whose every instruction of
    the entry that computes something reads gradients, directly or not: the gradients' processing
    before the update. A group with one value computed without them (a loss: its ``div_no_nan``,
    fused with its own gradient) keeps its phase. (A gradient penalty's scope holds backward work:
    the caller passes no such scope.) ``every=False``, for a group the caller knows writes
    variables: one value reading gradients is enough when nothing outside the group reads its
    values but the module's result (``XLA_Retvals``) — a momentum's decay ``0.9 * v`` is the
    update's; a model's forward work, read by its backward pass, is not, nor TF's densifying of an
    embedding's gradient, which the tape's ``AddN`` sums after it. Return those re-phased."""
    entry = module.entry
    if entry is None or "backward" not in phase_of.values() or not groups:
        return []
    members = {id(i) for group in groups for i in group}
    walk = _Walk(phase_of, lambda i: id(i) in members)
    walk.computation(entry, frozenset())
    read = {id(i) for i in walk.found}
    in_entry = {id(i) for i in entry.instructions}
    fixed = made_of_literals(entry)
    users = entry.users() if not every else {}
    out = []
    for group in groups:
        work = [i for i in group if id(i) in in_entry and id(i) not in fixed and i.opcode != "parameter"
                and phase_of.get(i) == "forward"]
        mine = {id(i) for i in group} | {id(entry.root)}
        if work and (all(id(i) in read for i in work) if every else
                     any(id(i) in read for i in work) and all(_kept_in(users.get(i, ()), mine) for i in work)):
            for inst in (i for i in group if phase_of.get(i) == "forward"):
                phase_of[inst] = "optimizer"
                out.append(inst)
    return out


def _evaluation(entry: Computation, found: list[Instruction], phase_of: dict[Instruction, str]) -> set[int]:
    """The ids of ``found`` (forward-named ops of the entry reading gradients) that evaluate the model at
    the new weights (``loss(new_params)``, no optimizer's work): a product of an update (reading the weight
    it updates) and the program's data (a parameter no update reads, or forward work made of one: a
    batch gathered by task, a rollout's last state), what follows it, and what feeds it alone."""
    mine = {id(i) for i in found if i.parent is entry}
    if not mine:
        return set()
    users = entry.users()
    weights = {id(_source(o)) for i in found if id(i) in mine and not _product(i) for o in i.operands}
    data = {id(i) for i in entry.instructions if i.opcode == "parameter" and id(i) not in weights}
    updates: set[int] = set()  # (a Newton step's solve, fused with forward values, reads no weight)
    out: set[int] = set()
    for inst in entry.instructions:  # (operands come first in the text)
        if id(inst) not in mine:
            if phase_of.get(inst) in (None, "forward") and any(id(o) in data for o in inst.operands):
                data.add(id(inst))
        elif not _product(inst):
            if any(_source(o).opcode == "parameter" for o in inst.operands):
                updates.add(id(inst))
        elif any(id(p := _source(o)) not in weights and id(p) in data for o in inst.operands) and any(
                id(_source(o)) in updates for o in inst.operands):
            out.add(id(inst))
    # what follows, through forward work no candidate (a DQN's greedy ``argmax``, a call named ``jit(step)``)
    follows = set(out)
    for inst in entry.instructions:
        if id(inst) not in follows and any(id(o) in follows for o in inst.operands) and (
                id(inst) in mine or phase_of.get(inst) == "forward"):
            follows.add(id(inst))
    out |= follows & mine
    for inst in reversed(entry.instructions):  # and what feeds it alone (the new bias's broadcast)
        if id(inst) in mine and id(inst) not in out and users[inst] and all(id(u) in out for u in users[inst]):
            out.add(id(inst))
    return out | {id(i) for inst in entry.instructions if id(inst) in out for i in _held(inst)}  # (the walk's too)


def _source(value: Instruction) -> Instruction:
    """``value`` before its layout changes."""
    while value.opcode in VALUE_CARRIERS and len(value.operands) == 1:
        value = value.operands[0]
    return value


def _product(inst: Instruction) -> bool:
    """A ``dot``, a convolution or one XLA rewrote (a ``dot_general`` of one element: a ``multiply``), fused or not."""
    return any(i.opcode in PRODUCTS or i.metadata.op_name.endswith(("/dot_general", "/conv_general_dilated"))
               for i in ([inst, *_held(inst)] if inst.opcode == "fusion" else [inst]))


def _kept_in(users: Iterable[Instruction], mine: set[int]) -> bool:
    """Whether every one of ``users`` is in ``mine`` (ids) or hands the module's result out."""
    return all(id(u) in mine or u.metadata.op_name == "XLA_Retvals" for u in users)


def made_of_literals(comp: Computation) -> set[int]:
    """The ids of ``comp``'s instructions that read nothing: literals, and what is computed from
    them alone (a reduction's ``convert`` of its zero; XLA's ``wrapped_broadcast`` of one). Named
    backward, such a value is still no gradient but an empty buffer the backward pass fills (TF's
    accumulators of a loop's values: read as gradients, an RNN's forward loop was the optimizer's)."""
    out: set[int] = set()
    for inst in comp.instructions:
        if _reads_nothing(inst, out):
            out.add(id(inst))
    return out


def _reads_nothing(inst: Instruction, fixed: set[int]) -> bool:
    """Whether ``inst`` is a literal or computed from ``fixed`` (ids of such values) alone."""
    return inst.opcode in LITERAL_SOURCES or ((bool(inst.operands) or inst.opcode == "fusion") and inst.opcode not in BODY_CALLERS
                                              and all(id(o) in fixed for o in inst.operands))


def _feeding_only_the_optimizer(module: HloModule, phase_of: dict[Instruction, str],
                                candidate: Callable[[Instruction], bool],
                                computations: list[Computation]) -> list[Instruction]:
    """The candidates that read no gradient but whose every user with a phase is the
    optimizer's (Adam's bias correction ``1 - b1**count``, the step count ``count + 1``): each
    computation read backwards, so a chain of them is found in one pass."""
    out: list[Instruction] = []
    get = phase_of.get
    for comp in computations:
        if not any(get(inst) == "forward" for inst in comp.instructions):
            continue  # only a forward op is re-phased (a backward fusion's users are not read)
        users: dict[int, list[Instruction]] = {}
        for inst in comp.instructions:
            for o in inst.operands:
                users.setdefault(id(o), []).append(inst)
        # an unnamed instruction (a fused ``multiply`` XLA made) has no phase yet: it serves the
        # optimizer when all its users with one do
        serves: dict[int, str] = {}
        root = comp.root
        for inst in reversed(comp.instructions):
            phase = get(inst)
            if inst is root or (phase is not None and phase != "forward"):
                continue
            # every user with a phase is the optimizer's, and there is one
            only_optimizer = False
            for u in users.get(id(inst), ()):
                p = serves.get(id(u)) or get(u)
                if p:
                    if p != "optimizer":
                        only_optimizer = False
                        break
                    only_optimizer = True
            if not only_optimizer:
                continue
            if phase is None:
                serves[id(inst)] = "optimizer"
            elif candidate(inst):
                phase_of[inst] = "optimizer"
                out.append(inst)
    return out


def _bookkeeping(entry: Computation, phase_of: dict[Instruction, str],
                 candidate: Callable[[Instruction], bool]) -> list[Instruction]:
    """The candidates of ``entry`` computed from the optimizer's own state alone, whose values go
    nowhere but to the optimizer, to other such candidates and to the ROOT (the new state): the
    optimizer's bookkeeping, re-phased ``optimizer``. The state is what only candidates read — a
    parameter neither the model nor the loss reads, a constant — and what candidates make of it
    alone. ``optax.MultiSteps`` counts its micro-steps so (``mini_step + 1``, the ``_where`` that
    wraps it round) and returns the count, read by no update: it was titled the forward pass's. So is
    XLA's unnamed copy of the state on its way there. A metric reads the model's outputs, a loss its
    labels: neither is made of the state alone."""
    users, root, get = entry.users(), entry.root, phase_of.get
    staged = lambda i: i.opcode in LAYOUT_ONLY and not i.metadata.op_name  # noqa: E731
    reads = lambda u: candidate(u) or (staged(u) and bool(users[u]) and all(map(reads, users[u])))  # noqa: E731
    state: set[int] = set()
    for inst in entry.instructions:
        if inst.opcode == "parameter":
            if users[inst] and all(map(reads, users[inst])):
                state.add(id(inst))
        elif inst.opcode in ("constant", "iota") or (
                (candidate(inst) or staged(inst)) and all(id(o) in state for o in inst.operands)):
            state.add(id(inst))
    serves: set[int] = set()  # made of the state, read by the optimizer or returned (users first)
    out: list[Instruction] = []
    for inst in reversed(entry.instructions):
        if id(inst) not in state or inst.opcode in ("parameter", "constant", "iota"):
            continue
        read_by = users[inst]
        if read_by and all(u is root or get(u) == "optimizer" or id(u) in serves for u in read_by):
            serves.add(id(inst))
            if get(inst) == "forward":
                phase_of[inst] = "optimizer"
                out.append(inst)
    return out[::-1]


class _Walk:
    """One pass over the module from the entry, carrying which values derive from gradients."""

    def __init__(self, phase_of: dict[Instruction, str], candidate: Callable[[Instruction], bool]) -> None:
        self.phase_of = phase_of
        self.candidate = candidate
        self.found: list[Instruction] = []
        self._marked: set[int] = set()
        #: id(computation) → whether something in it (or what it calls) is backward work.
        self._has_backward: dict[int, bool] = {}
        self._depth = 0
        #: id(multi-output fusion or call) → which elements of its tuple carry gradients.
        self._elements: dict[int, tuple[bool, ...]] = {}
        #: The computations walked, in the order first reached.
        self.visited: list[Computation] = []
        self._seen: set[int] = set()

    def computation(self, comp: Computation, tainted_params: frozenset[int]) -> bool | tuple[bool, ...]:
        """Walk ``comp`` (its parameters ``tainted_params`` carrying gradients); return whether
        its root does (for a root ``tuple``, each element: a multi-output fusion computes a
        forward value and a gradient side by side)."""
        tainted: set[int] = set()
        fixed: set[int] = set()  # what reads nothing (made_of_literals): no gradient, whatever its name
        if id(comp) not in self._seen:
            self._seen.add(id(comp))
            self.visited.append(comp)
        self._depth += 1
        phase = self.phase_of.get
        try:
            for inst in comp.instructions:
                if _reads_nothing(inst, fixed):
                    fixed.add(id(inst))
                    continue
                if not inst.called_computations and inst.opcode != "parameter" and inst.opcode != "get-tuple-element":
                    # what _tainted says of a plain instruction, without the call
                    hit = phase(inst) == "backward"
                    if not hit:
                        for o in inst.operands:
                            if id(o) in tainted:
                                hit = True
                                break
                else:
                    hit = self._tainted(inst, tainted, tainted_params)
                if hit:
                    tainted.add(id(inst))
                    if id(inst) not in self._marked and self.phase_of.get(inst) == "forward" \
                            and self.candidate(inst) and not self.computes_gradients(inst):
                        self._marked.add(id(inst))
                        self.found.append(inst)
        finally:
            self._depth -= 1
        root = comp.root
        if root is not None and root.opcode == "tuple":
            return tuple(id(o) in tainted for o in root.operands)
        return root is not None and id(root) in tainted

    def _tainted(self, inst: Instruction, tainted: set[int], params: frozenset[int]) -> bool:
        if inst.opcode == "parameter":
            return inst.parameter_number in params
        if inst.opcode == "get-tuple-element" and inst.operands:
            whole = inst.operands[0]
            parts = self._elements.get(id(whole))
            index = inst.attributes.get("index", "")
            if parts is None and whole.opcode == "tuple":  # the element it takes (TF takes a loop's
                parts = tuple(id(o) in tainted for o in whole.operands)  # results apart, then puts them together)
            if parts is not None and index.isdigit() and int(index) < len(parts):
                return parts[int(index)] or self.phase_of.get(inst) == "backward"
        reads = [id(o) in tainted for o in inst.operands]
        out = self.phase_of.get(inst) == "backward" or any(reads)
        called = inst.called_computations
        if not called or self._depth > 64:
            return out
        if inst.opcode in VALUE_FORWARDING_CALLERS and len(called) == 1:
            # the callee's parameters are the caller's operands: follow them in
            inner = self.computation(called[0], frozenset(k for k, r in enumerate(reads) if r))
            if isinstance(inner, tuple):
                if self.phase_of.get(inst) != "backward":
                    self._elements[id(inst)] = inner
                return out or any(inner)
            return out or inner
        if inst.opcode == "while" and len(inst.operands) == 1:
            carried = self._carried(inst, tainted)
            if carried is not None:
                if self.phase_of.get(inst) != "backward":
                    self._elements[id(inst)] = carried
                return self.phase_of.get(inst) == "backward" or any(carried)
        if inst.opcode in BODY_CALLERS:  # a loop, a branch: what runs inside counts
            return out or any(self.has_backward(c) for c in called)
        return out  # a reducer or comparator: its caller's value

    def _carried(self, loop: Instruction, tainted: set[int]) -> tuple[bool, ...] | None:
        """Which elements of ``loop``'s tuple (a ``while``) carry gradients: those its initial
        tuple does, and those its body computes from them, to a fixed point. TensorFlow's
        forward loop (``tf.map_fn`` over a per-example loss, a Keras RNN) carries the tape's
        accumulators, named ``gradient_tape/…``, beside the values it computes: read whole, the
        loop's results were gradients, and an unseen step's ``tf.reduce_mean`` of the losses a
        ``map_fn`` returned was titled the optimizer's work. None where the body or the initial
        tuple's elements are not to be seen (the caller then reads the loop whole)."""
        init = loop.operands[0]
        bodies = [c for c in loop.called_computations if c.root is not None and c.root.opcode == "tuple"]
        if init.opcode != "tuple" or len(bodies) != 1 or self._depth > 64:
            return None
        body, root = bodies[0], bodies[0].root
        params = [i for i in body.instructions if i.opcode == "parameter"]
        if root is None or len(params) != 1 or len(root.operands) != len(init.operands):
            return None
        carried = tuple(id(o) in tainted for o in init.operands)
        for _ in range(len(carried) + 1):  # each round taints one more element at least, or stops
            self._elements[id(params[0])] = carried
            out = self.computation(body, frozenset())
            if not isinstance(out, tuple) or len(out) != len(carried):
                return None
            grown = tuple(a or b for a, b in zip(carried, out, strict=True))
            if grown == carried:
                break
            carried = grown
        return carried

    def computes_gradients(self, inst: Instruction) -> bool:
        """Whether ``inst`` is a ``call`` (a loop, a branch) of the backward pass itself (or takes an
        element of what such a call returns; a fusion keeps the phase its name gives). ``jax.grad`` called in a
        ``lax.scan`` over micro-batches is a ``closed_call`` named like the step's own ops, whose
        results derive from gradients because it computes them. It is no update: called the
        optimizer's, it and the slicing of each micro-batch that feeds it made a
        gradient-accumulating step's passes an ``optimizer`` box. So is a loop whose body does (a
        ``lax.fori_loop`` of whole training steps: called the optimizer's, the loop was filed as
        its first weight's update, a frame ``hidden/optimizer`` around the whole program)."""
        if inst.opcode == "get-tuple-element" and inst.operands:
            inst = inst.operands[0]
        return runs_backward(inst, self.phase_of.get, self._has_backward)

    def has_backward(self, comp: Computation) -> bool:
        """Whether ``comp`` or anything it calls holds a backward instruction."""
        return has_backward(comp, self.phase_of.get, self._has_backward)


def has_backward(comp: Computation, phase: Callable[[Instruction], str | None], memo: dict[int, bool]) -> bool:
    """Whether ``comp`` or anything it calls holds an instruction ``phase`` calls ``backward``
    (``memo``: id(computation) → the answer, shared by the calls of one question)."""
    key = id(comp)
    hit = memo.get(key)
    if hit is None:
        memo[key] = False  # cycle guard
        hit = any(phase(i) == "backward" or any(has_backward(c, phase, memo) for c in i.called_computations)
                  for i in comp.instructions)
        memo[key] = hit
    return hit


def runs_backward(inst: Instruction, phase: Callable[[Instruction], str | None], memo: dict[int, bool]) -> bool:
    """Whether ``inst`` is a loop, a branch or a call whose computations hold backward work: it
    computes gradients (TF's ``for`` over micro-batches), whatever its own name says."""
    return inst.opcode in BODY_CALLERS and any(has_backward(c, phase, memo) for c in inst.called_computations)
