"""Runs of the same elementwise op, drawn as one node ("add ×1000").

A chain link is ``P → I`` where ``I`` and ``P`` have the same elementwise opcode and shape,
``P`` is an operand of ``I`` and ``I`` is ``P``'s only user: nothing else can see the values in
between, so one node loses no information a reader needs. Each member's private side input (an
operand used by that member alone, such as TensorFlow's per-add ``broadcast``) is absorbed
into the chain too; its own operands then point at the chain node.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

from ...ir import Instruction
from ...opcodes import is_elementwise

__all__ = ["Chain", "find_chains"]


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
