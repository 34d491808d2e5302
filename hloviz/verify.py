"""What XLA would refuse that hloviz's tolerant parser lets through: :func:`verify`.

hloviz's parser reads what XLA prints, and reads it fast: attribute values and literals stay text
until something asks for them, an opcode it does not know (a newer XLA's) is drawn as "other",
and a shape left out is inferred. That tolerance is what opens modules from any XLA version.
:func:`verify` is the strict second look, for a user who wants to know whether XLA itself would
take a module (one written by hand, or edited): the rules of XLA's parser that the fast reading
does not enforce, each problem with where it is and what XLA expects.

The rules: a literal's nesting and element counts match its shape, and its values fit their
type; the syntax of ``window``, ``result_accuracy``, ``api_version``, the header's
``input_output_alias`` and layouts' ``D(…)``/``P(…)`` parts; operand counts of elementwise ops;
opcodes XLA knows; a computation's written signature against its parameters and root.
XLA's *verifier* rules (async wrappers, conditional selectors, infeed shapes, layout constraints
of custom calls) are not repeated here: they concern running a module, not reading it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from .graph import GraphProblem
from .ir import Computation, HloModule, Instruction, Shape
from .opcodes import ELEMENTWISE_BINARY, ELEMENTWISE_UNARY, KNOWN, RESULT_ACCURACY_OPS

__all__ = ["verify"]


def verify(module: HloModule) -> list[GraphProblem]:
    """The problems XLA's parser would report in ``module`` that hloviz's parser tolerated.

    An empty list means none of these rules found anything; see the module's docstring for
    what they cover.
    """
    problems: list[GraphProblem] = []
    alias = module.attributes.get("input_output_alias")
    if alias is not None and not _alias_ok(alias):
        problems.append(GraphProblem(module.name, "input_output_alias: expects { {index}: (parameter, {index}"
                                             "[, may-alias|must-alias]), … }"))
    donors = module.attributes.get("buffer_donor")
    if donors is not None and not _donors_ok(donors):
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
            for m in [_layout_problem(s.layout.text)] if m]
    if inst.opcode == "constant" and inst.literal is not None and not inst.is_elided_constant:
        out += _literal_problems(inst.literal, inst.shape)
    attrs = inst.attributes
    if "window" in attrs and (m := _window_problem(attrs["window"])):
        out.append(m)
    if "result_accuracy" in attrs:
        if inst.opcode not in RESULT_ACCURACY_OPS:
            out.append(f"unexpected attribute result_accuracy on {inst.opcode}")
        elif not _result_accuracy_ok(attrs["result_accuracy"]):
            out.append("result_accuracy: expects {mode=default|highest} or {tolerance={atol=…, rtol=…, ulps=…}}")
    out += _operation_problems(inst, attrs)
    if "api_version" in attrs and attrs["api_version"] not in _API_VERSIONS:
        out.append(f"api_version: {attrs['api_version']} is not one of {', '.join(sorted(_API_VERSIONS))}")
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
    from .parser import parse_shape

    inner = text.strip()[1:-1]
    pieces = [p for p in _top_level_split(inner) if p.strip()]
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


# -- literals -----------------------------------------------------------------------------------

_LIT_TOKEN = re.compile(r"-?nan\(0x[0-9a-fA-F]+\)|[(){},]|[^\s(){},]+")
_LIT_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)  # XLA writes indices into big literals: { /*i0=1*/ {...} }

#: The largest finite value of each float type, and its mantissa bits (for NaN payloads).
_FLOATS: dict[str, tuple[float, int]] = {
    "f16": (65504.0, 10), "bf16": (3.3895313892515355e38, 7), "f32": (3.4028234663852886e38, 23),
    "f64": (1.7976931348623157e308, 52), "f8e5m2": (57344.0, 2), "f8e4m3": (240.0, 3), "f8e3m4": (15.5, 4),
    "f8e4m3fn": (448.0, 3), "f8e4m3fnuz": (240.0, 3), "f8e5m2fnuz": (57344.0, 2), "f8e4m3b11fnuz": (30.0, 3),
}
#: Float types with no NaN payloads to choose: one NaN encoding (fn) or NaN as negative zero (fnuz).
_NO_NAN_PAYLOAD = frozenset({"f8e4m3fn", "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz"})
_COMPLEX_PART = {"c64": "f32", "c128": "f64"}
_NAN = re.compile(r"-?nan(?:\((0x[0-9a-fA-F]+)\))?")


def _int_range(element_type: str) -> tuple[int, int] | None:
    m = re.fullmatch(r"([su])(\d+)", element_type)
    if not m:
        return None
    bits = int(m.group(2))
    if m.group(1) == "s":
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    # XLA reads a u64 literal as a 64-bit integer of either sign (-1 is the largest u64)
    return (-(1 << 63) if bits == 64 else 0), (1 << bits) - 1


def _literal_problems(literal: str, shape: Shape) -> list[str]:
    if not shape.is_array or ":" in literal or "[" in literal:  # sparse literals: not checked
        return []
    tokens = _LIT_TOKEN.findall(_LIT_COMMENT.sub(" ", literal))
    out: list[str] = []
    if len(tokens) == 1 and tokens[0] not in "{}(),":
        pass  # one scalar for a whole array: XLA fills every element with it
    elif shape.rank and not any(shape.dynamic):
        m = _structure_problem(tokens, shape.dims)
        if m:
            return [m]
    scalars = _scalars(tokens)
    for value, part in scalars:
        m = _value_problem(value, shape.element_type, part)
        if m:
            out.append(m)
            break
    return out


def _structure_problem(tokens: list[str], dims: tuple[int, ...]) -> str | None:
    """Why ``tokens`` are not a nesting of ``len(dims)`` braces with ``dims[k]`` entries at
    level k, or None. A parenthesised pair (a complex number) is one entry."""
    rank, counts, parens, opened = len(dims), [], 0, 0
    for tok in tokens:
        if tok == ")" or (parens and tok != "("):
            parens -= tok == ")"
            continue
        if tok == ",":
            continue
        if tok == "{":
            if len(counts) == rank:
                return f"expects nested array in rank {rank}, but sees larger"
            if not counts and opened:
                return "unexpected '{' after the literal's end"
            counts.append(0)
            opened += 1
            if len(counts) > 1:
                counts[-2] += 1
        elif tok == "}":
            if not counts:
                return "unexpected '}'"
            n, level = counts.pop(), len(counts)
            if n != dims[level]:
                return f"expects {dims[level]} elements at nesting level {level}, but sees {n}"
        else:  # a scalar, or "(" opening a complex pair: one entry of the innermost level
            if len(counts) != rank:
                return f"expects nested array in rank {rank}, but sees {len(counts)}"
            counts[-1] += parens == 0
            parens += tok == "("
    return f"expects a literal of {rank} nested braces" if counts or not opened else None


def _scalars(tokens: list[str]) -> list[tuple[str, str]]:
    """Each scalar's text with what it is: ``value``, or ``real`` / ``imaginary`` part."""
    out, parens, k = [], 0, 0
    for tok in tokens:
        if tok == "(":
            parens, k = parens + 1, 0
        elif tok == ")":
            parens -= 1
        elif tok in "{},":
            continue
        elif parens:
            out.append((tok, "real part" if k == 0 else "imaginary part"))
            k += 1
        else:
            out.append((tok, "value"))
    return out


def _value_problem(text: str, element_type: str, part: str) -> str | None:
    ints = _int_range(element_type)
    if ints is not None:
        try:
            v = int(text)
        except ValueError:
            return None
        if not ints[0] <= v <= ints[1]:
            return f"{part} {v} is out of range for {element_type} ({ints[0]}..{ints[1]})"
        return None
    float_type = _COMPLEX_PART.get(element_type, element_type)
    if float_type not in _FLOATS:
        return None
    top, mantissa = _FLOATS[float_type]
    nan = _NAN.fullmatch(text)
    if nan:
        if nan.group(1):
            payload = int(nan.group(1), 16)
            if float_type in _NO_NAN_PAYLOAD or payload >= 1 << mantissa or payload == 0:
                return f"NaN payload {nan.group(1)} does not fit {element_type}"
        return None
    try:
        v = float(text)
    except ValueError:
        return None
    if math.isinf(v) and "inf" not in text.lower():
        return f"{part} {text} is out of range for {element_type}"
    # the value rounds to infinity from halfway past the largest finite value on
    half_ulp = 2.0 ** (math.frexp(top)[1] - 1 - mantissa - 1)
    if math.isfinite(v) and abs(v) >= top + half_ulp:
        return f"{part} {text} is out of range for {element_type} (largest finite: {top:g})"
    return None


# -- attribute values -------------------------------------------------------------------------

_DIMS = r"-?\d+(?:x-?\d+)*"
_WINDOW_FIELD = re.compile(
    r"(?:size|stride|lhs_dilate|rhs_dilate|rhs_reversal)=" + _DIMS + r"|pad=-?\d+_-?\d+(?:x-?\d+_-?\d+)*")


def _window_problem(text: str) -> str | None:
    inner = text.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        return "window: expects {size=… stride=… pad=…}"
    for part in inner[1:-1].split():
        if not _WINDOW_FIELD.fullmatch(part):
            if part.startswith("pad="):
                return "window: expects padding_low and padding_high separated by '_'"
            return f"window: cannot read {part!r}"
    return None


_TOLERANCE = re.compile(r"\{\s*(?:(?:atol|rtol|ulps)\s*=\s*[-+\w.]+\s*,?\s*)+\}")


def _result_accuracy_ok(text: str) -> bool:
    inner = text.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        return False
    body = inner[1:-1].strip()
    mode = re.fullmatch(r"mode\s*=\s*(\w+)", body)
    if mode:
        return mode.group(1) in ("default", "highest")
    tol = re.fullmatch(r"tolerance\s*=\s*(\{.*\})", body, re.DOTALL)
    return bool(tol and _TOLERANCE.fullmatch(tol.group(1)))


_API_VERSIONS = frozenset({"API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
                           "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"})

_INDEX = r"\{\s*(?:\d+\s*(?:,\s*\d+\s*)*)?\}"
_ALIAS_ENTRY = re.compile(r"\s*" + _INDEX + r"\s*:\s*\(\s*\d+\s*,\s*" + _INDEX
                          + r"\s*(?:,\s*(?:may-alias|must-alias)\s*)?\)\s*")


def _alias_ok(text: str) -> bool:
    inner = text.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        return False
    body, pos = inner[1:-1], 0
    while body[pos:].strip():
        m = _ALIAS_ENTRY.match(body, pos)
        if not m:
            return False
        pos = m.end()
        if pos < len(body):
            if body[pos] != ",":
                return False
            pos += 1
    return True


_DONOR_ENTRY = re.compile(r"\s*\(\s*\d+\s*,\s*" + _INDEX + r"\s*\)\s*")


def _donors_ok(text: str) -> bool:
    inner = text.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        return False
    entries = _top_level_split(inner[1:-1])
    return all(_DONOR_ENTRY.fullmatch(e) for e in entries) if inner[1:-1].strip() else True


def _top_level_split(text: str) -> list[str]:
    """``text`` split at the commas outside any bracket."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


# -- layouts ------------------------------------------------------------------------------------

_DIM_LEVEL = re.compile(r"[DCS][+~]*")


def _layout_problem(text: str) -> str | None:
    if ":" not in text:
        return None
    tail = text.split(":", 1)[1]
    levels = re.search(r"D\(([^)]*)\)", tail)
    sparse = False
    if levels:
        for item in levels.group(1).split(","):
            if not _DIM_LEVEL.fullmatch(item.strip()):
                return "expects a DimLevelType abbreviation (D, C, or S) in D(…)"
            sparse = sparse or item.strip()[0] in "CS"
    if re.search(r"(?<![A-Za-z])P\(", tail) and not sparse:
        return "has a physical shape P(…) but is not a sparse layout"
    return None
