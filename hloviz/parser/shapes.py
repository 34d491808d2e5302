"""Shape text → :class:`hloviz.ir.Shape`, with a cache.

A module of 300k instructions uses a few thousand distinct shapes, so each distinct shape text
is parsed once and later lookups are one dict access.
"""

from __future__ import annotations

import re
import sys

from ..errors import HloParseError
from ..ir import DYNAMIC, ELEMENT_BITS, INFERRED, Instruction, Layout, Shape
from ..source import Span
from .text.scan import ScanError, find_close, split_top_level

# An array shape: element type, dimensions, optional layout without nested braces.
ARRAY_SHAPE = re.compile(r"([a-z][a-z0-9]*)\[([^\]]*)\](\{[^{}]*\})?")
_PRIMITIVE_FALLBACK = re.compile(r"(?:[su]\d+|f\d+(?:e\d+m\d+[a-z]*)?|bf16|c\d+|tf32)\Z")
_DIM = re.compile(r"\s*(<=)?\s*(\d+|\?)\s*\Z")


#: The most elements (and the largest dimension) an array shape may have: XLA counts in int64.
MAX_ELEMENTS = 2**63 - 1


def _brief(dims_text: str) -> str:
    return dims_text if len(dims_text) <= 40 else f"{dims_text[:20]}…{dims_text[-12:]}"


_LAYOUT_DIM = re.compile(r"\d+\Z")


def _layout(layout_text: str, offset: int) -> Layout:
    """The layout between the braces, whitespace removed (XLA's lexer skips it, and the printer
    writes the text back: ``{0,\n1}`` must print as ``{0,1}``); the minor-to-major part must be
    dimension numbers, as XLA requires (``{,1}`` is refused)."""
    text = "".join(layout_text[1:-1].split())
    head = text.split(":", 1)[0]
    if head and not all(_LAYOUT_DIM.match(d) for d in head.split(",")):
        raise ShapeError(f"expected dimension numbers in the layout, saw '{{{_brief(head)}}}'", offset)
    return Layout(text)


class ShapeError(ScanError):
    """A malformed shape; ``offset`` is relative to the text handed to the parser."""


def is_primitive_type(name: str) -> bool:
    """True for XLA's element types, including future ones that follow its naming scheme."""
    return name in ELEMENT_BITS or bool(_PRIMITIVE_FALLBACK.match(name))


class ShapeParser:
    """Parses shapes and remembers every distinct shape text it has seen."""

    #: Real tuple shapes nest a few levels; a limit keeps hostile input from costing O(depth²).
    MAX_TUPLE_DEPTH = 64

    def __init__(self, cache: dict[str, Shape] | None = None) -> None:
        #: Shape text → shape, for every distinct text seen (the parser looks here first).
        self.cache: dict[str, Shape] = {} if cache is None else cache
        self._depth = 0
        self._last_tuple = ""  # the text of the last tuple shape read (:meth:`parse`)

    def array(self, element_type: str, dims_text: str, layout_text: str | None, offset: int) -> Shape:
        key = f"{element_type}[{dims_text}]{layout_text or ''}"
        shape = self.cache.get(key)
        if shape is None:
            shape = self._make_array(element_type, dims_text, layout_text, offset)
            self.cache[key] = shape
        return shape

    def _make_array(self, element_type: str, dims_text: str, layout_text: str | None, offset: int) -> Shape:
        if not is_primitive_type(element_type) and element_type not in ("token", "opaque"):
            raise ShapeError(f"expected an element type such as f32 or s32, saw '{element_type}'", offset)
        dims: list[int] = []
        dynamic: list[bool] = []
        if dims_text.strip():
            col = offset + len(element_type) + 1
            for part in dims_text.split(","):
                m = _DIM.match(part)
                if not m:
                    raise ShapeError(f"expected a dimension size, saw '{part.strip()}'", col)
                if m.group(2) == "?":
                    dims.append(DYNAMIC)
                    dynamic.append(True)
                else:
                    size = int(m.group(2)) if len(m.group(2)) <= 19 else MAX_ELEMENTS + 1
                    if size > MAX_ELEMENTS:
                        raise ShapeError(f"dimension size {m.group(2)[:30]} is more than XLA's int64 allows", col)
                    dims.append(size)
                    dynamic.append(bool(m.group(1)))
                col += len(part) + 1
            elements = 1
            for d in dims:  # like XLA's shape validation: the element count must fit an int64
                elements *= max(d, 0)
                if elements > MAX_ELEMENTS:
                    raise ShapeError(f"{element_type}[{_brief(dims_text)}] has more elements than XLA's int64 "
                                     "allows (2^63 - 1)", offset)
        layout = _layout(layout_text, offset + len(element_type) + len(dims_text) + 2) \
            if layout_text is not None else None
        return Shape(element_type, tuple(dims), tuple(dynamic), layout)

    def parse(self, text: str, pos: int, limit: int | None = None) -> tuple[Shape, int]:
        """Parse the shape starting at ``text[pos]`` (after optional spaces); return it and the end offset.

        ``limit`` bounds how far a tuple's closing parenthesis is looked for.
        """
        n = len(text)
        while pos < n and text[pos] in " \t\r\n":
            pos += 1
        if pos < n and text[pos] == "(":
            if self._depth >= self.MAX_TUPLE_DEPTH:
                raise ShapeError(f"tuple shapes nested more than {self.MAX_TUPLE_DEPTH} levels deep", pos)
            last = self._last_tuple  # (the one before: a loop's tuple shape, on each of its thousand reads)
            if last and text.startswith(last, pos) and (limit is None or pos + len(last) <= limit):
                return self.cache[last], pos + len(last)
            end = find_close(text, pos, limit)
            key = text[pos : end + 1]
            shape = self.cache.get(key)
            if shape is None:
                self._depth += 1
                try:
                    shape = self._tuple(text, pos, end)
                finally:
                    self._depth -= 1
                self.cache[key] = shape
            self._last_tuple = key
            return shape, end + 1
        m = ARRAY_SHAPE.match(text, pos)
        if not m:
            found = re.match(r"[\w.\-%]*", text[pos:])  # always matches, if only the empty string
            word = (found.group() if found else "") or text[pos : pos + 1]
            raise ShapeError(f"expected a shape such as f32[2,3]{{1,0}}, saw '{word}'", pos)
        return self.array(m.group(1), m.group(2), m.group(3), pos), m.end()

    def _tuple(self, text: str, start: int, end: int) -> Shape:
        elements: list[Shape] = []
        pos = start + 1
        while True:
            while pos < end and text[pos] in " \t\r\n,":
                if text[pos] == "," and not elements:
                    raise ShapeError("expected a shape before ','", pos)
                pos += 1
            if pos >= end:
                break
            shape, pos = self.parse(text, pos, end)
            elements.append(shape)
            while pos < end and text[pos] in " \t\r\n":
                pos += 1
            if pos < end and text[pos] != ",":
                raise ShapeError(f"expected ',' or ')' in tuple shape, saw '{text[pos]}'", pos)
            if pos < end:
                pos += 1
        return Shape("tuple", tuple_shapes=tuple(elements))


def parse_shape(text: str) -> Shape:
    """Parse one shape from a string (``f32[2,3]{1,0}``, ``(s32[], f32[4])``).

    Raises :class:`hloviz.HloParseError` with the column of the problem.
    """
    try:
        shape, end = ShapeParser().parse(text, 0)
        if text[end:].strip():
            raise ShapeError(f"unexpected text after the shape: '{text[end:].strip()}'", end)
        return shape
    except ScanError as err:
        raise HloParseError(str(err), span=Span("<shape>", 1, 1, text).shifted(err.offset, text)) from None


_SAME_AS_FIRST_OPERAND = {
    "abs", "add", "and", "atan2", "cbrt", "ceil", "clamp", "copy", "cosine", "divide", "exponential",
    "exponential-minus-one", "floor", "log", "log-plus-one", "logistic", "maximum", "minimum", "multiply",
    "negate", "not", "or", "power", "remainder", "round-nearest-afz", "round-nearest-even", "rsqrt",
    "select", "sign", "sine", "sqrt", "subtract", "tan", "tanh", "xor", "shift-left",
    "shift-right-arithmetic", "shift-right-logical", "optimization-barrier",
}


def infer_shape(inst: Instruction) -> Shape:
    """The shape of an instruction written without one, for the simple cases XLA allows.

    Only rules that need no attribute arithmetic are applied; anything else stays
    :data:`hloviz.ir.INFERRED` rather than being guessed.
    """
    ops = inst.operands
    if inst.opcode == "tuple":
        return Shape("tuple", tuple_shapes=tuple(o.shape for o in ops))
    if inst.opcode == "get-tuple-element" and ops and ops[0].shape.is_tuple:
        idx = inst.attributes.get("index", "")
        if idx.isdecimal() and int(idx) < len(ops[0].shape.tuple_shapes):
            return ops[0].shape.tuple_shapes[int(idx)]
    if inst.opcode in ("select", "clamp") and len(ops) == 3:
        return ops[1].shape
    if inst.opcode in _SAME_AS_FIRST_OPERAND and ops and ops[0].shape.is_array:
        return ops[0].shape
    if inst.opcode in ("compare", "is-finite") and ops and ops[0].shape.is_array:
        s = ops[0].shape
        return Shape("pred", s.dims, s.dynamic, s.layout)
    return INFERRED


def infer_shapes(pending: list[Instruction]) -> None:
    """Infer left-out shapes operands first (the text may use an instruction before defining it)."""
    done: set[int] = set()
    entered: set[int] = set()  # an instruction met again before it is done is in a cycle
    for first in pending:
        stack = [(first, False)]
        while stack:
            inst, ready = stack.pop()
            if id(inst) in done:
                continue
            if ready:
                done.add(id(inst))
                if inst.shape is INFERRED:
                    inst.shape = infer_shape(inst)
                continue
            if id(inst) in entered:  # a cycle (``root = f(root)``): not walked again, the stack stays bounded
                continue
            entered.add(id(inst))
            stack.append((inst, True))
            for op in inst.operands:
                if op.shape is INFERRED and id(op) not in done:
                    stack.append((op, False))


# Every repeat possessive (Python >= 3.11; nothing here is worth giving back): a tenth faster.
_P = "+" if sys.version_info >= (3, 11) else ""
_NAME_AND_SHAPE = rf"%?{_P}[A-Za-z_][\w.\-]*{_P}:[ \t]*{_P}[a-z][a-z0-9]*{_P}\[[^\]]*{_P}\](?:\{{[^{{}}]*{_P}\}})?{_P}"
#: A signature whose parameters are all arrays, on one line: most of them (the fused computations').
_ARRAY_SIGNATURE = re.compile(
    rf"\([ \t]*{_P}(?:{_NAME_AND_SHAPE}(?:[ \t]*{_P},[ \t]*{_P}{_NAME_AND_SHAPE})*{_P}[ \t]*{_P})?{_P}\)[ \t]*{_P}->[ \t]*{_P}")
_ARRAY_PARAMETER = re.compile(
    rf"%?{_P}([A-Za-z_][\w.\-]*{_P}):[ \t]*{_P}(([a-z][a-z0-9]*{_P})\[([^\]]*{_P})\](\{{[^{{}}]*{_P}\}})?{_P})")
#: Shapes read from signatures, shared by every signature read (shapes are values); emptied when
#: it grows past :data:`_MAX_SIGNATURE_SHAPES`.
_SIGNATURE_SHAPES: dict[str, Shape] = {}
_MAX_SIGNATURE_SHAPES = 1 << 14
#: The parser of the common form's shapes, over that cache (it keeps no other state between shapes).
_SIGNATURE_PARSER = ShapeParser(_SIGNATURE_SHAPES)


def parse_signature(signature: str, span: Span | None = None) -> tuple[list[tuple[str, Shape]], Shape]:
    """``(a: f32[2], b: s32[]) -> f32[2]`` → ``([("a", f32[2]), ("b", s32[])], f32[2])``.

    ``span`` is where ``signature`` starts in its file (it may go on over several lines), so that
    an error points at the true line and column; without it, into the signature itself.
    """
    shapes = _SIGNATURE_SHAPES
    if len(shapes) > _MAX_SIGNATURE_SHAPES:
        shapes.clear()
    known = _known_shapes(signature, shapes)
    if known is not None:
        return known
    m = _ARRAY_SIGNATURE.match(signature)
    if m is not None:  # the common form: one regular expression for the parameters
        get = shapes.get
        try:
            params = [(name, get(text) or _SIGNATURE_PARSER.array(element, dims, layout or None, 0))
                      for name, text, element, dims, layout in _ARRAY_PARAMETER.findall(signature, 0, m.end())]
            # the result, most often an array shape written as its cache key (a signature is kept stripped)
            result = get(signature[m.end() :])
            if result is not None:
                return params, result
            result, end = _SIGNATURE_PARSER.parse(signature, m.end())
            if not signature[end:].strip():
                return params, result
        except ScanError:
            pass  # the general reading below says where
    return _parse_signature(signature, span, ShapeParser())


#: Parameter names as XLA prints them (``param_0.1``, ``reduce_sum.38576``), joined by spaces.
_PLAIN_NAMES = re.compile(r"[A-Za-z_][\w.\-]*(?: [A-Za-z_][\w.\-]*)*")


def _known_shapes(signature: str, shapes: dict[str, Shape]) -> tuple[list[tuple[str, Shape]], Shape] | None:
    """The signature as XLA prints it, every shape in it read before (most of a large module's:
    35k signatures, a few dozen distinct shapes), at a third of the cost of the regular
    expressions below: split at ``", "`` and ``") -> "``, each shape one dict lookup, the names
    checked by one match. None for anything else (a tuple, a string, a ``%``, a shape not seen
    yet, spacing of another kind), which the general readings read.

    What it accepts reads exactly as the general reading reads it: one '(' and one ')' and no
    quote, so the only commas between parameters are those ``", "`` splits at (a shape text that
    is a cache key has its commas inside brackets, and no bracket is left open at its end), and
    the names are plain (no comma, bracket, colon or space to split or nest differently)."""
    if signature[0] != "(" or signature.count("(") != 1 or signature.count(")") != 1 \
            or '"' in signature or "%" in signature:
        return None
    head, arrow, result_text = signature.partition(") -> ")
    result = shapes.get(result_text)
    if result is None or not arrow:
        return None
    if len(head) == 1:
        return [], result
    get = shapes.get
    params: list[tuple[str, Shape]] = []
    names: list[str] = []
    for piece in head[1:].split(", "):
        name, _, text = piece.partition(": ")
        shape = get(text)
        if shape is None:
            return None
        params.append((name, shape))
        names.append(name)
    if _PLAIN_NAMES.fullmatch(" ".join(names)) is None:
        return None
    return params, result


def _parse_signature(signature: str, span: Span | None, parser: ShapeParser) -> tuple[list[tuple[str, Shape]], Shape]:
    try:
        start = signature.index("(")
        close = find_close(signature, start)
        params: list[tuple[str, Shape]] = []
        for a, b in split_top_level(signature, start + 1, close):
            piece = signature[a:b]
            if not piece.strip():
                continue
            name, colon, _ = piece.partition(":")
            if not colon:
                raise ShapeError("expected 'name: shape' in the parameter list", a)
            shape, _ = parser.parse(signature, a + len(name) + 1)
            params.append((name.strip().lstrip("%"), shape))
        arrow = signature.find("->", close)
        if arrow < 0:
            raise ShapeError("expected '->' and the result shape", close + 1)
        result, _ = parser.parse(signature, arrow + 2)
        return params, result
    except (ScanError, ValueError) as err:
        offset = getattr(err, "offset", 0)
        at = span if span is not None else Span("<signature>", 1, 1, signature)
        raise HloParseError(str(err), span=at.shifted(offset, signature)) from None
