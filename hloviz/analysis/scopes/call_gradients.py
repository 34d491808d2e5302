"""The backward pass TensorFlow takes through a function it called, filed with its layer.

TensorFlow differentiates some ops by calling a function: a grouped convolution's gradient
(``Conv2D(groups=…)``, ConvNeXt's depthwise convolutions) is named
``PartitionedCall_3/gradients/convolution_grad/Conv2DBackpropFilter`` — by the call, never by
the layer, whose name the function does not see (:func:`hloviz.analysis.opnames.parse_op_name`
reads it as backward work of no scope). Read as a scope, ``PartitionedCall`` held ConvNeXt's 18
depthwise convolutions' backward FLOPs as forward work of no layer of the model.

The layer is the one whose weight the call reads: the gradient of ``y = f(x, w)`` by ``x``
reads ``w`` (the grouped layer's kernel, reshaped and reversed), and a weight belongs to one
layer — the scope of the forward op that reads it, both seen through what only carries a value
(a copy, a transpose, XLA's fusion of them: the optimized module reads the kernel through a
``bitcast_copy_fusion``). A call that reads no weight stays unfiled, for data flow to place as
before.
"""

from __future__ import annotations

import re
from collections import Counter

from ...ir import Instruction
from ...opcodes import WEIGHT_CARRIERS
from ..opnames import OpPath, parse_op_name

__all__ = ["CALL_GRADIENT", "file_call_gradients"]

#: ``PartitionedCall_3/gradients/…``: the ops of a called function's gradient.
CALL_GRADIENT = re.compile(r"^((?:Stateful)?PartitionedCall(?:_\d+)?)/gradients/")


def file_call_gradients(sums: list[Instruction]) -> tuple[list[tuple[Instruction, OpPath]], list[Instruction]]:
    """``sums``: the backward ops of no scope (the tape's sums, a call's gradient). Returns the
    call gradients filed in their layer (each with the layer's scope) and the rest, for data
    flow to place."""
    groups: dict[tuple[int, str], list[tuple[Instruction, OpPath]]] = {}
    left: list[Instruction] = []
    for inst in sums:
        op = parse_op_name(inst.metadata.op_name, inst.metadata.op_type)
        m = CALL_GRADIENT.match(op.raw)
        if m is None:
            left.append(inst)
        else:
            groups.setdefault((id(inst.parent), m.group(1)), []).append((inst, op))
    filed: list[tuple[Instruction, OpPath]] = []
    users_of: dict[int, dict[Instruction, list[Instruction]]] = {}
    for members in groups.values():
        comp = members[0][0].parent
        if comp is None:
            left.extend(i for i, _ in members)
            continue
        users = users_of.get(id(comp))
        if users is None:
            users = users_of[id(comp)] = comp.users()
        scope = _forward_layer([i for i, _ in members], users)
        if scope is None:
            left.extend(i for i, _ in members)
            continue
        filed.extend((i, OpPath(scope, op.op, "backward", op.raw)) for i, op in members)
    return filed, left


def _forward_layer(members: list[Instruction], users: dict[Instruction, list[Instruction]]) -> tuple[str, ...] | None:
    """The scope of the forward ops that read the weights ``members`` read (the most read of
    them; the earliest such op on a tie); None where they read no weight a forward op reads."""
    inside = {id(i) for i in members}
    weights = {id(w): w for i in members for o in i.operands if id(o) not in inside
               for w in [_origin(o)] if w.opcode == "parameter"}
    votes: Counter[tuple[str, ...]] = Counter()
    first: dict[tuple[str, ...], int] = {}
    for weight in weights.values():
        for reader in _readers(weight, users, inside):
            name = reader.metadata.op_name
            op = parse_op_name(name, reader.metadata.op_type) if name else None
            if op is not None and op.phase == "forward" and op.scope:
                votes[op.scope] += 1
                first[op.scope] = min(first.get(op.scope, reader.line), reader.line)
    return max(votes, key=lambda s: (votes[s], -first[s])) if votes else None


#: What only carries a value on (and ``reverse``: the gradient of a convolution flips its kernel).
_CARRY = WEIGHT_CARRIERS | {"reverse"}


def _carries(inst: Instruction) -> bool:
    """An op, or a fusion of such ops, that hands its one operand on without computing with it."""
    if inst.opcode == "fusion":
        return len(inst.operands) == 1 and all(
            i.opcode in _CARRY or i.opcode == "parameter" for c in inst.called_computations for i in c.instructions)
    return inst.opcode in _CARRY and len(inst.operands) >= 1


def _origin(inst: Instruction) -> Instruction:
    """The value ``inst`` carries on: back through :func:`_carries` ops (a few at most)."""
    for _ in range(16):
        if not _carries(inst):
            break
        inst = inst.operands[0]
    return inst


def _readers(value: Instruction, users: dict[Instruction, list[Instruction]], skip: set[int]) -> list[Instruction]:
    """The ops that read ``value`` (through :func:`_carries` ops), outside ``skip``."""
    out: list[Instruction] = []
    stack, seen = [value], {id(value)}
    while stack:
        for user in users.get(stack.pop(), ()):
            if id(user) in skip or id(user) in seen:
                continue
            seen.add(id(user))
            (stack if _carries(user) else out).append(user)
    return out
