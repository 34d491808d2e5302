"""The walk of :func:`verify`: instructions, asynchronous pairs and signatures, checked as XLA's parser would.

In: a parsed module. Out: :class:`~hloviz.graph.GraphProblem` rows, each with where it is and
what XLA expects. Its own module because it holds what concerns statements (operand counts,
opcodes, async start/done pairs, a computation's signature against its body); the grammars of
literals (:mod:`.literals`) and of attribute values (:mod:`.attributes`) are checked apart.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..graph import GraphProblem
from ..ir import Computation, HloModule, Instruction, Shape
from ..opcodes import ELEMENTWISE_BINARY, ELEMENTWISE_UNARY, KNOWN, RESULT_ACCURACY_OPS
from .attributes import (
    API_VERSIONS,
    alias_ok,
    donors_ok,
    layout_problem,
    result_accuracy_ok,
    top_level_split,
    window_problem,
)
from .literals import literal_problems

__all__ = ["verify"]


def verify(module: HloModule) -> list[GraphProblem]:
    """The problems XLA's parser would report in ``module`` that hloviz's parser tolerated.

    An empty list means none of these rules found anything; see the module's docstring for
    what they cover.
    """
    problems: list[GraphProblem] = []
    alias = module.attributes.get("input_output_alias")
    if alias is not None and not alias_ok(alias):
        problems.append(GraphProblem(module.name, "input_output_alias: expects { {index}: (parameter, {index}"
                                             "[, may-alias|must-alias]), … }"))
    donors = module.attributes.get("buffer_donor")
    if donors is not None and not donors_ok(donors):
        problems.append(GraphProblem(module.name, "buffer_donor: expects { (parameter, {index}), … }"))
    problems += _async_problems(module)
    for comp in module.computations:
        problems += _signature_problems(comp)
        for inst in comp.instructions:
            where = f"{comp.name}/{inst.name} (line {inst.line})"
            problems += [GraphProblem(where, m) for m in _instruction_problems(inst)]
    return problems


def _instruction_problems(inst: Instruction) -> list[str]:
    out: list[str] = []
    if inst.opcode not in KNOWN and not _async_sugar(inst.opcode):
        out.append(f"unknown opcode {inst.opcode!r} (XLA expects an opcode it knows; a newer XLA's?)")
    arity = 1 if inst.opcode in ELEMENTWISE_UNARY else 2 if inst.opcode in ELEMENTWISE_BINARY else None
    if arity is not None and len(inst.operands) != arity:
        out.append(f"{inst.opcode} takes {arity} operand{'s' * (arity > 1)}, not {len(inst.operands)}")
    out += [f"layout {m}" for s in _shapes(inst.shape) if s.layout is not None
            for m in [layout_problem(s.layout.text)] if m]
    if inst.opcode == "constant" and inst.literal is not None and not inst.is_elided_constant:
        out += literal_problems(inst.literal, inst.shape)
    attrs = inst.attributes
    if "window" in attrs and (m := window_problem(attrs["window"])):
        out.append(m)
    if "result_accuracy" in attrs:
        if inst.opcode not in RESULT_ACCURACY_OPS:
            out.append(f"unexpected attribute result_accuracy on {inst.opcode}")
        elif not result_accuracy_ok(attrs["result_accuracy"]):
            out.append("result_accuracy: expects {mode=default|highest} or {tolerance={atol=…, rtol=…, ulps=…}}")
    out += _operation_problems(inst, attrs)
    if "api_version" in attrs and attrs["api_version"] not in API_VERSIONS:
        out.append(f"api_version: {attrs['api_version']} is not one of {', '.join(sorted(API_VERSIONS))}")
    return out


def _operation_problems(inst: Instruction, attrs: Mapping[str, str]) -> list[str]:
    """What the parser of XLA checks of a few ops' operands and shapes while it builds them."""
    if inst.opcode == "infeed" and not (inst.shape.is_tuple and inst.shape.tuple_shapes):
        return ["infeed must have a non-empty tuple shape (data, token[])"]
    if inst.opcode == "conditional" and inst.operands:
        selector = inst.operands[0].shape
        if selector.rank or selector.element_type not in ("pred", "s32"):
            return [f"conditional's first operand must be a scalar of pred or s32, not {selector}"]
        if selector.element_type == "pred" and "branch_computations" in inst.calls_by_attribute:
            return [("a conditional on a pred takes true_computation and false_computation, "
                    "not branch_computations")]
    constraints = attrs.get("operand_layout_constraints")
    if inst.opcode == "custom-call" and constraints is not None:
        return _layout_constraint_problems(inst, constraints)
    return []


def _layout_constraint_problems(inst: Instruction, text: str) -> list[str]:
    from ..parser import parse_shape

    inner = text.strip()[1:-1]
    pieces = [p for p in top_level_split(inner) if p.strip()]
    if len(pieces) != len(inst.operands):
        return [f"expected {len(inst.operands)} operand layout constraints, {len(pieces)} given"]
    for k, (piece, op) in enumerate(zip(pieces, inst.operands)):
        try:
            shape = parse_shape(piece.strip())
        except Exception:  # noqa: BLE001 - any unreadable constraint is reported as such
            return [f"operand layout constraint {k} ({piece.strip()}) is not a shape"]
        if not _same(shape, op.shape):
            return [(f"operand layout constraint {k} ({piece.strip()}) is not compatible with operand {k}'s "
                    f"shape {op.shape}")]
    return []


def _async_sugar(opcode: str) -> bool:
    """``X-start`` / ``X-update`` / ``X-done`` for an op X: XLA's async sugar (custom-call-start)."""
    base = re.sub(r"-(start|update|done)$", "", opcode)
    return base != opcode and base in KNOWN


def _shapes(shape: Shape) -> list[Shape]:
    """``shape`` and every shape nested in it (tuple elements), without recursion."""
    out, todo = [], [shape]
    while todo:
        s = todo.pop()
        out.append(s)
        todo.extend(s.tuple_shapes)
    return out


# -- asynchronous ops -----------------------------------------------------------------------------

def _async_role(opcode: str) -> str | None:
    """``start``, ``update`` or ``done`` for async-start/-update/-done and their sugar
    (``custom-call-start`` …); None for anything else, XLA's own ``copy-start`` included."""
    for role in ("start", "update", "done"):
        if opcode == f"async-{role}" or (opcode.endswith(f"-{role}") and opcode not in KNOWN
                                         and opcode[: -len(role) - 1] in KNOWN):
            return role
    return None


def _async_problems(module: HloModule) -> list[GraphProblem]:
    """XLA's rules for an async chain start → update … → done, as its parser checks them."""
    out: list[GraphProblem] = []
    wrapped_by: dict[str, int] = {}
    for comp in module.computations:
        for inst in comp.instructions:
            role = _async_role(inst.opcode)
            if role is None:
                continue
            where = f"{comp.name}/{inst.name} (line {inst.line})"
            if role == "start":
                for c in inst.called_computations:
                    wrapped_by[c.name] = wrapped_by.get(c.name, 0) + 1
                message = _async_start_problem(inst)
            else:
                message = _async_tail_problem(inst, role)
            if message:
                out.append(GraphProblem(where, message))
    out += [GraphProblem(name, f"computation {name} is called by {n} async ops; each async op wraps its own")
            for name, n in wrapped_by.items() if n > 1]
    return out


def _async_start_problem(inst: Instruction) -> str | None:
    shape = inst.shape
    operands = shape.tuple_shapes[0] if shape.is_tuple and shape.tuple_shapes else None
    if operands is None or not operands.is_tuple or len(operands.tuple_shapes) != len(inst.operands) or not all(
            _same(a, o.shape) for a, o in zip(operands.tuple_shapes, inst.operands)) or len(shape.tuple_shapes) < 2:
        return "an async start's shape must be ((its operands' shapes), its outputs, state …)"
    return None


def _async_tail_problem(inst: Instruction, role: str) -> str | None:
    if len(inst.operands) != 1 or _async_role(inst.operands[0].opcode) not in ("start", "update"):
        return f"async-{role} expects a single async op as its operand"
    previous = inst.operands[0]
    if role == "update" and not _same(inst.shape, previous.shape):
        return "an async update's shape must be its operand's shape"
    start = previous
    while _async_role(start.opcode) == "update" and start.operands:
        start = start.operands[0]
    wrapped = start.called_computations[0] if start.called_computations else None
    if wrapped is None:
        return None
    if not inst.opcode.startswith("async-") and wrapped.root is not None:
        op = inst.opcode[: -len(role) - 1]
        if op != wrapped.root.opcode:
            return f"{inst.opcode} continues an async {wrapped.root.opcode}, not {op}"
    calls = inst.calls_by_attribute.get("calls")
    if calls and calls[0] is not wrapped:
        return f"async-{role} calls {calls[0].name}, but its start wraps {wrapped.name}"
    thread = inst.attributes.get("async_execution_thread", "").strip('"')
    start_thread = start.attributes.get("async_execution_thread", '"main"').strip('"')
    if thread and thread != start_thread:
        return f"async-{role} runs on thread {thread}, but its start on {start_thread}"
    return None


# -- signatures ---------------------------------------------------------------------------------

def _same(a: Shape, b: Shape) -> bool:
    """Equal as XLA compares a signature with a body: type and dimensions, layouts aside."""
    if a.is_tuple or b.is_tuple:
        return a.is_tuple and b.is_tuple and len(a.tuple_shapes) == len(b.tuple_shapes) and all(
            _same(x, y) for x, y in zip(a.tuple_shapes, b.tuple_shapes))
    return a.element_type == b.element_type and a.dims == b.dims


def _signature_problems(comp: Computation) -> list[GraphProblem]:
    if comp.signature is None or comp.root is None:
        return []
    try:
        params, result = comp.declared_signature or ([], None)
    except Exception:  # noqa: BLE001 - an unreadable signature is the parser's to report, not ours
        return []
    out = []
    if result is not None and not _same(result, comp.root.shape):
        out.append(GraphProblem(comp.name, f"the signature's result {_text(result)} is not the root's shape "
                                      f"{_text(comp.root.shape)}"))
    body = comp.parameters
    if len(params) == len(body):
        for (name, shape), p in zip(params, body):
            if not _same(shape, p.shape):
                out.append(GraphProblem(comp.name, f"the signature's parameter {name}: {_text(shape)} is not "
                                              f"{p.name}'s shape {_text(p.shape)}"))
    return out


def _text(shape: Shape) -> str:
    return str(shape)
