"""What XLA asks of a module while it assigns buffers (``buffer_assignment.cc``), on hloviz's
dataflow (:mod:`.dataflow`): in which order it takes values, and which value may take over which
operand's bytes.

In: a :class:`~hloviz.analysis.memory.values.Dataflow`. Out: :class:`AssignmentRules`, the
module's answers to those questions (XLA's value-id order, ``ComparePosition``'s order, the
values an instruction reads, ``CanShareOperandBufferWithUser`` at the positions a value is read
from), and :func:`can_share_operand`, the last of them for one operand and user.

A module of its own because these are facts of the module, the same whatever the allocations:
:mod:`.assign` asks them while it places buffers into allocations, and asks
:func:`can_share_operand` again when the heap simulator (:mod:`.heap`) packs the temporaries.
"""

from __future__ import annotations

from collections.abc import Iterator

from hloviz.ir import Computation, Instruction
from hloviz.opcodes import ELEMENTWISE, IN_PLACE

from .dataflow import Buffer, Dataflow, Value, positions, top_value

__all__ = ["AssignmentRules", "can_share_operand"]


class AssignmentRules:
    """What XLA asks of a module while assigning: value order, positions, operand sharing."""

    def __init__(self, flow: Dataflow) -> None:
        self.flow = flow
        self.positions = positions(flow)
        entry = flow.module.entry
        self.entry_params: set[Instruction] = set(entry.parameters) if entry is not None else set()
        # the computations the schedule runs (fused and reducer computations hold no values here)
        per_computation = [list(_instruction_post_order(c)) for c in flow.module.computations
                           if c.instructions and c.instructions[0] in flow.trees]
        #: XLA's value-id order: computations callees first (as XLA prints them), post order within.
        self.order = _numbered(per_computation)
        #: ComparePosition's order: the same, callers' computations first.
        self.position = _numbered(per_computation[::-1])
        self.buffer_of_value: dict[int, Buffer] = {id(v): b for b in flow.buffers for v in b.values}
        self._keys: dict[int, tuple] = {}

    def key(self, v: Value) -> tuple:
        """XLA's value id order: values in post order of their instructions, computations callees
        first, a loop's phi values after every other."""
        k = self._keys.get(id(v))
        if k is None:
            inst = v.instruction
            phi = inst.opcode in ("while", "parameter") and inst not in self.entry_params
            k = self._keys[id(v)] = (phi, self.order.get(inst, 0), v.index)
        return k

    def operand_values(self, v: Value) -> list[Value]:
        """The values at index {} of the operands of ``v``'s instruction (``GetValueSet(operand)``)."""
        out = []
        for o in v.instruction.operands:
            t = top_value(self.flow.trees.get(o))
            if t is not None:
                out.append(t)
        return out

    def can_share(self, operand: Value, user: Value) -> bool:
        """Whether ``user`` may take over ``operand``'s bytes where one ends and the other starts:
        the user reads the operand at one of its positions and XLA's
        ``CanShareOperandBufferWithUser`` allows it."""
        user_inst = user.instruction
        if user_inst.opcode == "copy":
            return False
        for inst, index in self.positions.get(id(operand), ()):
            if inst in user_inst.operands and can_share_operand(inst, index, user_inst, user.index):
                return True
        return False


def _numbered(computations: list[list[Instruction]]) -> dict[Instruction, int]:
    """Instruction → its place when the computations' post orders are read one after another."""
    out: dict[Instruction, int] = {}
    for insts in computations:
        for inst in insts:
            out[inst] = len(out)
    return out


def _instruction_post_order(comp: Computation) -> Iterator[Instruction]:
    users = comp.users()
    seen: set[Instruction] = set()
    for start in comp.instructions:
        if users.get(start) or start in seen:
            continue
        stack: list[tuple[Instruction, bool]] = [(start, False)]
        while stack:
            inst, done = stack.pop()
            if done:
                yield inst
                continue
            if inst in seen:
                continue
            seen.add(inst)
            stack.append((inst, True))
            stack.extend((o, False) for o in reversed(inst.operands) if o not in seen)


def _subshape(inst: Instruction, index: tuple[int, ...]):
    shape = inst.shape
    for k in index:
        if not shape.is_tuple or k >= len(shape.tuple_shapes):
            return None
        shape = shape.tuple_shapes[k]
    return shape


def can_share_operand(operand: Instruction, index: tuple[int, ...], user: Instruction,
                       user_index: tuple[int, ...]) -> bool:
    """XLA's ``CanShareOperandBufferWithUser``: same shape (and layout), and the user reads each
    element of the operand only where it writes the same element (elementwise ops, fusions whose
    parameter flows through elementwise ops only, in-place updates of their first operand, a
    sort's operands)."""
    a, b = _subshape(operand, index), _subshape(user, user_index)
    if a is None or b is None or a != b or a.is_tuple:
        return False
    number = user.operands.index(operand)
    if user.opcode in IN_PLACE:
        return number == 0
    if user.opcode == "sort":
        return _sorts_in_place(operand, number, user, user_index)
    if user.opcode == "fusion":
        fused = user.called_computations[0] if user.called_computations else None
        if fused is None:
            return False
        param = next((p for p in fused.parameters if p.parameter_number == number), None)
        return param is not None and _elementwise_uses(fused, param)
    return user.opcode in ELEMENTWISE


def _sorts_in_place(operand: Instruction, number: int, user: Instruction, user_index: tuple[int, ...]) -> bool:
    """A ``sort`` permutes its operands where they are: the operand it alone reads (read once)
    becomes the result at that operand's own index — an ``argsort``'s iota its indices, the
    keys the sorted keys (XLA's rule: in XLA's record of a retrieval step, a TopK's two 1 KiB
    results took no bytes of their own; without the rule the estimate gave them 960 more)."""
    if user.operands.count(operand) != 1 or operand.parent is None:
        return False
    if sum(1 for i in operand.parent.instructions if operand in i.operands) != 1:
        return False  # (another user still reads the unsorted operand)
    return len(user.operands) == 1 or user_index[:1] == (number,)


def _elementwise_uses(fused: Computation, param: Instruction) -> bool:
    """Whether every transitive use of ``param`` in ``fused`` is elementwise (or a tuple)."""
    users = fused.users()
    stack = [param]
    seen: set[Instruction] = set()
    while stack:
        inst = stack.pop()
        for u in users.get(inst, ()):
            if u in seen:
                continue
            seen.add(u)
            if not (u.opcode in ("tuple", "get-tuple-element") or u.opcode in ELEMENTWISE
                    or (u.opcode in IN_PLACE and u.operands and u.operands[0] is inst)):
                return False
            stack.append(u)
    return True
