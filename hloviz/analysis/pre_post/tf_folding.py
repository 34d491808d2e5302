"""Folds by TensorFlow's bridge (TF graph → pre-optimization HLO): ops evaluated before XLA saw them.

In: the pre- (and post-) optimization modules and a capture's ``info`` (``tf_ops``: each TF op's
type, ``tf_inputs``: its inputs, ``tf_outputs``: its tensors' types). Out: a
:class:`~.folded.FoldedConstant` (``by="tensorflow"``) per pre-opt constant that holds such ops'
work. Its own module because it reads the TF graph, which XLA's folds (:mod:`.folding`) never
do, and exists only for TensorFlow captures.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from ...ir import HloModule, Instruction
from .folded import FoldedConstant, is_real_op, literal_value, live_ids, value_key

_TYPE = re.compile(r"^(\w+)\[([\d,]*)\]$")

#: TF op types that are plumbing, not computation: never reported as folded.
_TF_PLUMBING = frozenset({
    "Const", "Identity", "IdentityN", "NoOp", "Placeholder", "_Arg", "_Retval", "StopGradient",
    "PreventGradient", "Snapshot", "PartitionedCall", "StatefulPartitionedCall",
})

_TF_STATIC_SHAPE = frozenset({"Shape", "ShapeN", "Size", "Rank", "BroadcastGradientArgs"})


def tf_folds(pre: HloModule, post: HloModule | None, info: Mapping):
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
    post_constants = {(value_key(i), i.metadata.op_name): i for i in post.instructions() if i.opcode == "constant"} \
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
            shown = post_constants.get((value_key(c), c.metadata.op_name), c)
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
    return (consumer,) if is_real_op(consumer) else ()


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
        hits = [i for i in pre.instructions() if i.opcode == "constant" and not is_real_op(i.metadata.op_name)
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
