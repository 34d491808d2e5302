"""XLA's tuple-index operands: ``fusion(%arg_tuple.1#1, %arg_tuple.1#4)``.

XLA's newer text leaves a ``get-tuple-element`` out (XLA 0.11's dumps: every one that is not a
computation's root) and writes its users' operand as ``%tuple#index``: element ``index``
(decimal) of the tuple-shaped instruction ``tuple``. The module XLA holds still has the
get-tuple-element (its live-range report lists ``get-tuple-element.13`` in the schedule), so the
parser makes one back, as it does for the ``<op>-start`` sugar: an instruction of opcode
``get-tuple-element`` with ``index=N``, operand ``tuple`` and the element's shape, named
``tuple#N`` (a name no text can define: ``#`` is not a name character), placed before its
first user. Every analysis then sees the edge from the tuple, through the element, as in the
text that prints the get-tuple-element. The printer writes it back as the operand it was.
"""

from __future__ import annotations

import re

from ..ir import INFERRED, Computation, Instruction

__all__ = ["SEPARATOR", "elided_get_tuple_element"]

#: What separates the tuple's name from the element's index in an operand.
SEPARATOR = "#"
_OPERAND = re.compile(r"([A-Za-z_][\w.\-]*)#(\d+)\Z")


def elided_get_tuple_element(computation: Computation, operand: str, user: Instruction,
                             inferred: list[Instruction]) -> Instruction | str:
    """The get-tuple-element that ``operand`` (``tuple#N``, as the user ``user`` names it)
    stands for in ``computation``: made and placed before ``user`` the first time, the same
    instruction for every later user. A message instead when it cannot be: the name is not of
    that form, the tuple is not defined, is not a tuple or has no element ``N``. One whose
    tuple's shape is left out waits in ``inferred`` (its shape is the element's, inferred)."""
    m = _OPERAND.match(operand)
    if m is None:
        return f"instruction '{operand}' is not defined in computation '{computation.name}'"
    name, index = m.group(1), int(m.group(2))
    tup = computation.by_name.get(name)
    if tup is None:
        return f"instruction '{name}' (whose element {operand} names) is not defined in computation " \
               f"'{computation.name}'"
    shape = tup.shape
    if shape is not INFERRED:
        if not shape.is_tuple:
            return f"'{operand}' names element {index} of '{name}', which is not a tuple (its shape is {shape})"
        if index >= len(shape.tuple_shapes):
            return f"'{operand}' names element {index} of '{name}', a tuple of {len(shape.tuple_shapes)} elements"
    element = Instruction(operand, "get-tuple-element", shape.tuple_shapes[index] if shape is not INFERRED else INFERRED,
                          user.line)
    element.operands = [tup]
    element.attributes = {"index": str(index)}
    if shape is INFERRED:
        inferred.append(element)
    element.parent = computation
    computation.by_name[operand] = element
    instructions = computation.instructions
    at = next((k for k in range(len(instructions) - 1, -1, -1) if instructions[k] is user), len(instructions))
    instructions.insert(at, element)
    return element
