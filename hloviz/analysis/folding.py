"""Constant folding: which pre-optimization work was computed at compile time, and into what.

Two places fold constants, and both are reported:

* **XLA** (pre-opt → post-opt HLO). A post-opt constant whose value no pre-opt constant has was
  computed by the compiler. Its users' ``op_name`` says which framework op uses it now (TF keeps
  ``op_name`` through optimization); from there the pre-opt dataflow is walked backwards through
  ops that left no trace in the optimized module, and every such op that had a constant input
  is one that was folded into the constant. This is how ``x + 1 + 1 + … + 1`` (1000 adds)
  becoming ``x + 1000`` is found: the constant ``1000`` is new, ``add_999`` uses it, and
  ``add`` … ``add_998`` vanished with constant inputs.
* **TensorFlow** (TF graph → pre-opt HLO). TF's bridge evaluates ops whose inputs are all
  constants (or only static shapes: ``Shape``, ``ShapeN``, ``Size``, ``Rank``) before XLA sees
  them, so ``a*b + sin(a)`` of constants arrives as one literal. With the graph's ops and edges
  (``info["tf_ops"]`` and ``info["tf_inputs"]`` of a capture), the TF ops with no HLO
  instruction whose inputs are all constants are that kind of fold. The literal is found where
  their result went: TF lowers an op's compile-time inputs to constants carrying the op's name
  before the instructions that compute it, so the first ``k`` constants of the consuming op
  (``k`` folded inputs) are the folded values, and its later constants (``DivNoNan``'s zero,
  ``Relu``'s zero) are its own.

A folded constant is listed once. A constant of the optimized module whose value a
pre-optimization constant already has is not a fold; one that no pre-optimization instruction
computed into (an index XLA wrote while rewriting) is a *new constant*, listed apart
(:attr:`FoldingReport.new_constants`). A fold whose work has no op name says why in ``note``.

Every value reported is the literal text from the HLO (the post-opt literal when the constant
survives there); a literal longer than :data:`SHORT_LITERAL` characters is reported by its shape
instead, and one XLA printed as ``{...}`` by its shape and the words :data:`NOT_PRINTED`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..ir import HloModule, Instruction
from ..opcodes import NOT_FOLDABLE, VALUE_CARRIERS
from .kernels import SYNTHETIC_OP_NAMES
from .names import post_names

_TYPE = re.compile(r"^(\w+)\[([\d,]*)\]$")

#: Literals up to this many characters are shown as values; longer ones by their shape.
SHORT_LITERAL = 80
#: TF op types that are plumbing, not computation: never reported as folded.
_TF_PLUMBING = frozenset({
    "Const", "Identity", "IdentityN", "NoOp", "Placeholder", "_Arg", "_Retval", "StopGradient",
    "PreventGradient", "Snapshot", "PartitionedCall", "StatefulPartitionedCall",
})


@dataclass(frozen=True)
class FoldedConstant:
    """A constant that replaced work: ``value`` (literal or shape), and where it came from.

    ``from_ops`` are the pre-optimization op names (TF ops) whose work is in the value;
    ``from_instructions`` the pre-opt HLO instructions involved; ``into`` the op names of the
    instructions that use the constant now. ``by`` is ``"xla"`` or ``"tensorflow"`` (folded by
    TF's bridge before XLA saw it; the constant is then already in the pre-opt HLO).
    ``constant`` and ``computation`` name the post-opt constant when it exists there, else
    the pre-opt one.
    """

    constant: str
    computation: str
    value: str
    shape: str
    from_ops: tuple[str, ...]
    from_instructions: tuple[str, ...]
    into: tuple[str, ...]
    by: str = "xla"
    #: Why ``from_ops`` is empty, in words (empty when it is not).
    note: str = ""


@dataclass(frozen=True)
class FoldingReport:
    """All constants that replaced work, XLA's folds first."""

    folded: tuple[FoldedConstant, ...]
    #: Pre-opt ops whose instructions all computed on constants only and that left no trace,
    #: but whose value is no new constant of its own (XLA merged it with an equal constant, or
    #: nothing used it): computed at compile time all the same.
    computed: tuple[str, ...] = ()
    #: Constants of the optimized module that no pre-optimization constant has but that hold no
    #: pre-optimization work either (XLA wrote them while rewriting): not folds.
    new_constants: tuple[FoldedConstant, ...] = ()

    @property
    def folded_ops(self) -> frozenset[str]:
        """Every pre-opt op name whose work was done at compile time."""
        return frozenset(op for f in self.folded for op in f.from_ops) | frozenset(self.computed)

    def constants_of(self, op_name: str) -> tuple[FoldedConstant, ...]:
        return tuple(f for f in self.folded if op_name in f.from_ops)


#: What a folded constant's value reads when the HLO text does not hold it: TensorFlow and XLA
#: print a large literal as ``{...}`` unless asked for it in full.
NOT_PRINTED = "value not printed in the HLO text ({...})"


def literal_value(inst: Instruction) -> str:
    """A constant's value as shown to users: the literal if short, else its shape; for a literal
    the HLO text elided (``{...}``) its shape and :data:`NOT_PRINTED`, so that nobody takes the
    shape for the value."""
    lit = (inst.literal or "").strip()
    if lit == "{...}" or inst.is_elided_constant:
        return f"{inst.shape.to_text(layout=False)} ({NOT_PRINTED})"
    if not lit or len(lit) > SHORT_LITERAL:
        return inst.shape.to_text(layout=False)
    return lit


def _key(inst: Instruction) -> tuple[str, tuple[int, ...], str]:
    lit = " ".join((inst.literal or "").split())
    return inst.shape.element_type, inst.shape.dims, lit


def _real(op_name: str) -> bool:
    return bool(op_name) and op_name not in SYNTHETIC_OP_NAMES


def constant_folding(pre: HloModule, post: HloModule, info: Mapping | None = None) -> FoldingReport:
    """What was computed at compile time between ``pre`` and ``post`` (and, given a capture's
    ``info`` with ``tf_ops`` and ``tf_inputs``, by TensorFlow before ``pre``)."""
    folds, new = [], []
    # both readings below start from the same vanished ops and constant-computable instructions
    vanished, foldable = _vanished(pre, post), _constant_computable(pre)
    for f in _xla_folds(pre, post, vanished, foldable):
        (folds if f.from_ops or f.from_instructions else new).append(f)
    if info:
        folds.extend(_tf_folds(pre, post, info))
    linked = {op for f in folds for op in f.from_ops}
    computed = tuple(op for op in _constant_subgraph_ops(pre, vanished[1], foldable) if op not in linked)
    return FoldingReport(tuple(folds), computed, tuple(new))


def _vanished(pre: HloModule, post: HloModule) -> tuple[dict[str, frozenset[str]], set[str]]:
    """Pre-opt op names → their possible post-opt names, and the ops with no trace left (an op
    whose only trace is a constant carrying its op_name counts as gone: it was folded)."""
    names = post_names(pre)
    post_ops = {i.metadata.op_name for i in post.instructions() if i.opcode != "constant"}
    return names, {op for op, candidates in names.items() if not candidates & post_ops}


def _constant_subgraph_ops(pre: HloModule, vanished: set[str], foldable: set[Instruction]) -> list[str]:
    """Vanished ops (``vanished``, of :func:`_vanished`) all of whose instructions compute on
    constants only (``foldable``, of :func:`_constant_computable`; literals aside)."""
    by_op: dict[str, list[Instruction]] = {}
    for inst in pre.instructions():
        if inst.metadata.op_name in vanished:
            by_op.setdefault(inst.metadata.op_name, []).append(inst)
    return [op for op, insts in by_op.items()
            if all(i in foldable for i in insts) and any(i.opcode != "constant" for i in insts)]


def _xla_folds(pre: HloModule, post: HloModule, vanishing: tuple[dict[str, frozenset[str]], set[str]],
               foldable: set[Instruction]):
    """The constants of ``post`` XLA computed (``vanishing``: :func:`_vanished` of the pair,
    ``foldable``: :func:`_constant_computable` of ``pre``)."""
    pre_by_op: dict[str, list[Instruction]] = {}
    for inst in pre.instructions():
        pre_by_op.setdefault(inst.metadata.op_name, []).append(inst)
    names, vanished = vanishing
    by_post_name: dict[str, list[str]] = {}
    for op, candidates in names.items():
        for c in candidates:
            by_post_name.setdefault(c, []).append(op)
    pre_constants = {_key(i) for i in pre.instructions() if i.opcode == "constant"}
    pre_shapes = {(i.shape.element_type, i.shape.dims) for i in pre.instructions() if i.opcode == "constant"}
    # Vanished ops that computed something from a constant (an op that is only a literal, like a
    # JAX constant or TF Const with its own name, is an input of the fold, not folded work).
    with_constants = {op for op in vanished
                      if any(i.opcode != "constant" and (i in foldable or any(o in foldable for o in i.operands))
                             for i in pre_by_op[op])}
    order = {i: n for n, i in enumerate(pre.instructions())}
    callers = post.callers()

    for comp in post.computations:
        users = comp.users()
        for c in comp.instructions:
            if c.opcode != "constant":
                continue
            if c.is_elided_constant:
                if (c.shape.element_type, c.shape.dims) in pre_shapes:
                    continue
            elif _key(c) in pre_constants:
                continue
            into = _user_ops(c, users, callers)
            into_pre = {op for name in into for op in by_post_name.get(name, ())}
            seeds = [i for op in into_pre for i in pre_by_op.get(op, ())]
            own = [op for op in by_post_name.get(c.metadata.op_name, ()) if op in vanished]
            for op in own:
                seeds.extend(pre_by_op[op])
            ops, insts = _walk_back(seeds, vanished, with_constants, foldable, into_pre)
            ops.update(own)
            where = f"`{into[0]}`" if into else "the module"
            if ops:
                note = ""
            elif insts:
                named = list(dict.fromkeys(i.metadata.op_name for i in sorted(insts, key=order.__getitem__)
                                           if _real(i.metadata.op_name)))
                if named:
                    note = (f"part of the work of {', '.join(f'`{n}`' for n in named[:3])}"
                            f"{' and others' if len(named) > 3 else ''}, whose other work runs in a kernel: "
                            "XLA computed this part from its constants")
                else:
                    n = len(insts)
                    note = f"computed from {n} pre-optimization instruction{'s' if n != 1 else ''} without an op name"
            else:
                note = f"XLA wrote it while rewriting {where}; no pre-optimization instruction computed into it"
            yield FoldedConstant(
                constant=c.name, computation=comp.name, value=literal_value(c),
                shape=c.shape.to_text(layout=False),
                from_ops=tuple(sorted(ops, key=lambda op: order[pre_by_op[op][0]])),
                from_instructions=tuple(i.name for i in sorted(insts, key=order.__getitem__)),
                into=tuple(into), note=note,
            )


def _user_ops(c: Instruction, users: dict, callers: dict) -> list[str]:
    """Op names of the instructions that use constant ``c``: followed through unnamed ops and
    through ops that only carry the value on (:data:`~hloviz.opcodes.VALUE_CARRIERS`: a
    ``broadcast`` XLA merged across layers keeps one layer's op name, but the ``multiply`` that
    reads it is the work the constant belongs to), and out of a fused computation to its fusion
    when nothing inside is named. A carrier nothing reads (a fused computation's root) counts by
    its own name."""
    found: dict[str, None] = {}
    frontier = list(users.get(c, ()))
    seen: set[Instruction] = set()
    while frontier:
        u = frontier.pop()
        if u in seen:
            continue
        seen.add(u)
        onward = users.get(u, ())
        if u.opcode in VALUE_CARRIERS and onward:
            frontier.extend(onward)
        elif _real(u.metadata.op_name):
            found[u.metadata.op_name] = None
        else:
            frontier.extend(onward)
    if not found and c.parent is not None:
        for caller in callers.get(c.parent.name, ()):
            if _real(caller.metadata.op_name):
                found[caller.metadata.op_name] = None
    return list(found)


def _walk_back(seeds: list[Instruction], vanished: set[str], with_constants: set[str],
               foldable: set[Instruction], stop_ops: set[str]) -> tuple[set[str], set[Instruction]]:
    """Pre-opt ops reached backwards from ``seeds`` through vanished (or unnamed) instructions."""
    ops: set[str] = set()
    insts: set[Instruction] = set()
    stack = [o for s in seeds for o in s.operands]
    stack.extend(s for s in seeds if s in foldable and s.opcode != "constant")
    seen: set[Instruction] = set()
    while stack:
        i = stack.pop()
        if i in seen or i.opcode == "parameter":
            continue
        seen.add(i)
        op = i.metadata.op_name
        if op in vanished:
            if op in with_constants:
                ops.add(op)
                insts.add(i)
        elif _real(op) and op not in stop_ops:
            continue  # another surviving op: its own kernel, not part of this constant
        elif i in foldable and i.opcode != "constant":
            insts.add(i)
        stack.extend(i.operands)
    return ops, insts


def _constant_computable(module: HloModule) -> set[Instruction]:
    """Instructions whose value depends on constants only (computable at compile time)."""
    out: set[Instruction] = set()
    for comp in module.computations:
        for inst in comp.instructions:  # HLO text lists operands before their users
            if inst.opcode == "constant" or (inst.opcode == "iota") or (inst.operands and inst.opcode not in NOT_FOLDABLE and all(o in out for o in inst.operands)):
                out.add(inst)
    return out


#: TF op types whose result is a static shape: the bridge computes them at compile time.
_TF_STATIC_SHAPE = frozenset({"Shape", "ShapeN", "Size", "Rank", "BroadcastGradientArgs"})


def _tf_folds(pre: HloModule, post: HloModule | None, info: Mapping):
    """Folds TensorFlow made before XLA: TF ops with no HLO trace whose inputs are all constant."""
    types: Mapping[str, str] = info.get("tf_ops") or {}
    inputs: Mapping[str, list] = info.get("tf_inputs") or {}
    if not types or not inputs:
        return
    in_hlo = {i.metadata.op_name for i in pre.instructions()}
    folded = _tf_folded_ops(types, inputs, in_hlo)
    if not folded:
        return
    consumers, positions = _folded_consumers(types, inputs, in_hlo, folded)
    order = {op: n for n, op in enumerate(types)}
    post_constants = {(_key(i), i.metadata.op_name): i for i in post.instructions() if i.opcode == "constant"} \
        if post else {}
    found: dict[str, FoldedConstant] = {}
    by_op: dict[str, list[Instruction]] = {}
    for i in pre.instructions():
        by_op.setdefault(i.metadata.op_name, []).append(i)
    outputs: Mapping[str, Sequence[str]] = info.get("tf_outputs") or {}
    live = live_ids(pre)
    for consumer, tensors in consumers.items():
        roots = {_tf_source(t) for t in tensors}
        ops = sorted(_upstream(roots, folded, inputs), key=lambda o: order.get(o, 0))
        picked = _pre_constants_for(pre, by_op, consumer, positions.get(consumer) or range(len(tensors)))
        for c in _checked(picked, _tensor_types(tensors, outputs), _live_constants(by_op, consumer, live)):
            # The same constant (value and op name) in the optimized module is where it is now.
            shown = post_constants.get((_key(c), c.metadata.op_name), c)
            key = f"{shown.parent.name if shown.parent else ''}/{shown.name}"
            prev = found.get(key)
            if prev is not None:  # one constant, listed once: merge what flowed into it
                merged = tuple(dict.fromkeys((*prev.from_ops, *ops)))
                found[key] = FoldedConstant(prev.constant, prev.computation, prev.value, prev.shape, merged, (),
                                            tuple(dict.fromkeys((*prev.into, *_into(consumer)))), by="tensorflow")
                continue
            found[key] = FoldedConstant(
                constant=shown.name, computation=shown.parent.name if shown.parent else "",
                value=literal_value(shown), shape=shown.shape.to_text(layout=False),
                from_ops=tuple(ops), from_instructions=(), into=_into(consumer), by="tensorflow",
            )
    yield from found.values()


def _tensor_types(tensors: Iterable[str], outputs: Mapping[str, Sequence[str]]) -> list[tuple[str, tuple[int, ...]]]:
    """The (element type, dims) of the folded tensors ``op:k``, where the capture recorded them."""
    out = []
    for t in tensors:
        op, _, k = t.partition(":")
        types = outputs.get(op) or ()
        n = int(k) if k.isdigit() else 0
        m = _TYPE.match(types[n]) if n < len(types) and types[n] else None
        if m:
            out.append((m.group(1), tuple(int(d) for d in m.group(2).split(",") if d)))
    return out


def _fits(c: Instruction, types: list[tuple[str, tuple[int, ...]]]) -> bool:
    """Can constant ``c`` hold one of the folded values: the same element type, and the same
    dims or a scalar (which XLA broadcasts)?"""
    shape = c.shape
    return any(shape.element_type == e and (tuple(shape.dims) == dims or not shape.dims) for e, dims in types)


def _checked(picked: list[Instruction], types: list[tuple[str, tuple[int, ...]]],
             candidates: list[Instruction]) -> list[Instruction]:
    """``picked`` with each constant that cannot hold a folded value (its dtype or shape is not
    the folded op's) replaced by the first of the consumer's constants that can, or left out.
    Without recorded types (older captures) ``picked`` is kept as is."""
    if not types:
        return picked
    out: list[Instruction] = []
    for c in picked:
        if _fits(c, types):
            out.append(c)
            continue
        other = next((x for x in candidates if x not in out and x not in picked and _fits(x, types)), None)
        if other is not None:
            out.append(other)
    return out


def _live_constants(by_op: dict[str, list[Instruction]], consumer: str, live: set[int]) -> list[Instruction]:
    """The constants named after ``consumer`` whose value reaches its computation's result."""
    return [i for i in by_op.get(consumer, []) if i.opcode == "constant" and id(i) in live]


def live_ids(module: HloModule) -> set[int]:
    """``id()`` of the instructions whose value flows into their computation's root (the rest
    are dead: TensorFlow's bridge leaves unused copies of an op's constants behind)."""
    live: set[int] = set()
    for comp in module.computations:
        stack = [comp.root] if comp.root is not None else []
        while stack:
            i = stack.pop()
            if id(i) in live:
                continue
            live.add(id(i))
            stack.extend(i.operands)
    return live


def _tf_folded_ops(types: Mapping[str, str], inputs: Mapping[str, list], in_hlo: set[str]) -> set[str]:
    """TF ops that left no HLO trace and whose inputs are all constant (or folded themselves),
    to a fixed point; static-shape ops fold whatever their inputs."""
    folded: set[str] = set()
    changed = True
    while changed:
        changed = False
        for op, typ in types.items():
            if op in folded or op in in_hlo or typ in _TF_PLUMBING or op not in inputs:
                continue
            srcs = [_tf_source(s) for s in inputs[op] if not s.startswith("^")]
            if typ in _TF_STATIC_SHAPE or (srcs and all(types.get(s) == "Const" or s in folded for s in srcs)):
                folded.add(op)
                changed = True
    return folded


def _folded_consumers(types: Mapping[str, str], inputs: Mapping[str, list], in_hlo: set[str],
                      folded: set[str]) -> tuple[dict[str, dict[str, None]], dict[str, list[int]]]:
    """Where the folded subgraph's results go: consumer → the folded tensors it reads (in
    order), and direct consumer → which of its constant inputs are folded.

    Each result flows into a consumer: an op with HLO instructions (its constant operand is the
    folded value) or, through Identity, the function's result."""
    consumers: dict[str, dict[str, None]] = {}
    positions: dict[str, list[int]] = {}
    for op, srcs in inputs.items():
        if op in folded:
            continue
        constant_inputs = [s for s in srcs if not s.startswith("^")
                           and (types.get(_tf_source(s)) == "Const" or _tf_source(s) in folded)]
        for s in srcs:
            if s.startswith("^") or _tf_source(s) not in folded:
                continue
            consumer = _hlo_consumer(op, types, inputs, in_hlo)
            tensor = s if ":" in s else f"{s}:0"
            consumers.setdefault(consumer, {})[tensor] = None
            if consumer == op:
                positions.setdefault(op, []).append(constant_inputs.index(s))
    return consumers, positions


def _into(consumer: str) -> tuple[str, ...]:
    return (consumer,) if _real(consumer) else ()


def _tf_source(name: str) -> str:
    """``mul:0`` / ``^ctrl`` → ``mul``."""
    return name.lstrip("^").split(":", 1)[0]


def _hlo_consumer(op: str, types: Mapping, inputs: Mapping, in_hlo: set[str]) -> str:
    """Follow Identity-like plumbing from ``op`` to an op with HLO instructions (or the results)."""
    seen = set()
    while op not in in_hlo and types.get(op) in _TF_PLUMBING and op not in seen:
        seen.add(op)
        users = [u for u, srcs in inputs.items() if op in {_tf_source(s) for s in srcs}]
        if len(users) != 1:
            return "XLA_Retvals"
        op = users[0]
    return op if op in in_hlo else "XLA_Retvals"


def _upstream(roots: set[str], folded: set[str], inputs: Mapping) -> set[str]:
    out: set[str] = set()
    stack = list(roots)
    while stack:
        op = stack.pop()
        if op in out or op not in folded:
            continue
        out.add(op)
        stack.extend(_tf_source(s) for s in inputs.get(op, ()))
    return out


def _pre_constants_for(pre: HloModule, by_op: dict[str, list[Instruction]], consumer: str,
                       positions) -> list[Instruction]:
    """The pre-opt constants that carry folded values into ``consumer``'s instructions.

    TF's bridge lowers an op's compile-time inputs (``Const`` or folded), in input order, to
    constants named after the op, before the instructions that compute the op: the constants at
    ``positions`` among those used by ``consumer``'s instructions are the folded values; the
    ones after the inputs are the op's own literals (a ``Relu``'s 0). A dead constant still
    counts (TensorFlow folded into it, whatever XLA did with its users later); the bridge can also
    leave an unused copy of an op's constants, which :func:`_checked` corrects where the capture
    recorded the folded op's type.
    """
    if consumer == "XLA_Retvals":
        hits = [i for i in pre.instructions() if i.opcode == "constant" and not _real(i.metadata.op_name)
                and i.parent is pre.entry]
        return [c for c in hits if _feeds_results(c)]
    insts = by_op.get(consumer, [])
    found = {o: None for i in insts for o in i.operands
             if o.opcode == "constant" and o.metadata.op_name in (consumer, "")}
    # Text order: constants named after the consumer are listed among its instructions; unnamed
    # ones (rare) after them, in the order they are used.
    place = {i: n for n, i in enumerate(insts)}
    ranked = sorted(found, key=lambda c: place.get(c, len(insts)))
    return [ranked[p] for p in sorted(set(positions)) if p < len(ranked)]


def _feeds_results(c: Instruction) -> bool:
    comp = c.parent
    if comp is None:
        return False
    users = comp.users()
    frontier = [c]
    seen = set()
    while frontier:
        i = frontier.pop()
        if i in seen:
            continue
        seen.add(i)
        if i is comp.root or i.metadata.op_name == "XLA_Retvals":
            return True
        frontier.extend(u for u in users.get(i, ()) if u.opcode in ("reshape", "tuple", "get-tuple-element",
                                                                       "bitcast", "copy", "convert"))
    return False
