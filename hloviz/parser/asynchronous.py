"""XLA's asynchronous sugar: ``custom-call-start(...)`` is an op wrapped in a computation.

An asynchronous operation is an ``async-start`` / ``async-update`` / ``async-done`` chain whose
start calls a computation holding the one op it runs. XLA's text format lets the start be
written as ``<op>-start`` with the op's own operands and attributes; its parser builds the
wrapped computation then, and so does :func:`wrap_async`. Some ``-start`` opcodes are
instructions of their own, not this sugar (:data:`NATIVE_START`: the collectives' and copy's
two-part forms, send and recv).
"""

from __future__ import annotations

from ..ir import Computation, Instruction
from .state import ParseState

__all__ = ["NATIVE_START", "wrap_async"]

#: Opcodes whose "-start" form is an instruction of its own rather than async sugar.
NATIVE_START = frozenset({
    "all-reduce-start", "all-gather-start", "collective-permute-start", "copy-start", "async-start",
    "send", "recv", "collective-broadcast-start", "ragged-all-to-all-start", "all-to-all-start",
})


def wrap_async(state: ParseState, start: Instruction) -> None:
    """Make ``start`` (``<op>-start``, the sugar) call a computation of its own, added to the
    module being read, that runs ``<op>`` on the operand shapes the start's tuple shape gives."""
    wrapped_opcode = start.opcode[: -len("-start")]
    wrapped = Computation(f"{start.name}.wrapped", line=start.line)
    wrapped.synthetic = True
    shape = start.shape
    operand_shapes = shape.tuple_shapes[0].tuple_shapes if shape.is_tuple and shape.tuple_shapes \
        and shape.tuple_shapes[0].is_tuple else ()
    for k, operand_shape in enumerate(operand_shapes):
        p = Instruction(f"param.{k}", "parameter", operand_shape, line=start.line)
        p.parameter_number = k
        wrapped.add(p)
    result = shape.tuple_shapes[1] if shape.is_tuple and len(shape.tuple_shapes) > 1 else shape
    op = Instruction(f"{start.name}.op", wrapped_opcode, result, line=start.line)
    op.operands = list(wrapped.instructions)
    op.attributes = dict(start.attributes)
    # The computations the sugar names (fusion-start's calls=, ...) are the wrapped op's.
    pending = state.pending_calls
    k = len(pending)
    while k and pending[k - 1].instruction is start:
        k -= 1
        pending[k] = pending[k]._replace(instruction=op)
    wrapped.add(op)
    wrapped.root = op
    state.module.add(wrapped)
    start.calls_by_attribute = {**start.calls_by_attribute, "calls": [wrapped]}
    start.called_computations = [*start.called_computations, wrapped]
