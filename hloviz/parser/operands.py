"""An instruction's operand list: the text between its opcode's ``(`` and ``)``.

XLA prints operands as names (``%a, %b``; a long list with an ``/*index=5*/`` comment before
every fifth), TensorFlow 2.17 and older with their shapes (``f32[2]{0} %a``); a ``parameter``
holds its number there, a ``constant`` its literal. Hand-written HLO (XLA's own tests) may also
nest whole instruction expressions as operands, which XLA turns into instructions of their own.
The fast path (:func:`fast_operands`) takes what XLA prints; the general path
(:func:`read_operands`) reads everything else and says where it stops making sense.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import NoReturn

from ..ir import Instruction
from .text.scan import ScanError, split_top_level

__all__ = ["INDEX_COMMENT", "fast_operands", "read_operands"]

# ``%name``, or ``%tuple#2``: element 2 of a tuple, whose get-tuple-element XLA's text left out
# (:mod:`~hloviz.parser.tuple_index`).
_NAME = re.compile(r"%?[A-Za-z_][\w.\-]*(?:#\d+)?\Z")
_INT = re.compile(r"\s*\d+\s*\Z")
_ARRAY = r"[a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?"
# Possessive repeats (Python >= 3.11) over operand lists: giving an operand back could never let
# the rest match, and the ordinary repeat keeps ~200 bytes of backtracking state per character
# (a 4 MB operand list cost 730 MB).
ONCE = "+" if sys.version_info >= (3, 11) else ""
_SHAPED_OPERANDS = re.compile(
    rf"[ \t]*{_ARRAY}[ \t]+%?[A-Za-z_][\w.\-]*[ \t]*(?:,[ \t]*{_ARRAY}[ \t]+%?[A-Za-z_][\w.\-]*[ \t]*)*{ONCE}\Z"
).match
_SHAPED_NAMES = re.compile(rf"{_ARRAY}[ \t]+%?([A-Za-z_][\w.\-]*)").findall

#: The operand-number comments XLA writes before every fifth operand of a long list.
INDEX_COMMENT = re.compile(r"/\*index=\d+\*/")


def fast_operands(opcode: str, plain: str, other: str) -> list[str] | None:
    """The operand names of a fast-path instruction from its ``FAST_INSTRUCTION`` groups (empty for a
    parameter, a constant or no operands), or None when the general path must read it: a
    parameter number that is not one, an empty constant, operands written unlike XLA prints them.
    """
    if opcode == "parameter":
        return None if plain or not other.isdecimal() else []
    if opcode == "constant":  # constant(nan) and constant(true) look like names
        return [] if (plain or other).strip() else None
    if plain:  # "%a, %b": validated by the pattern, so removing '%' and spaces is exact
        return plain.replace("%", "").replace(" ", "").split(",")
    if other and not other.isspace():  # TF <= 2.17 style: "f32[2]{0} %x, f32[] %y"
        return _SHAPED_NAMES(other) if _SHAPED_OPERANDS(other) is not None else None
    return []


#: ``nested(text, start, end)``: the nested instruction expression ``text[start:end]`` added to
#: the computation being read; its name.
Nested = Callable[[str, int, int], str]


def read_operands(inst: Instruction, text: str, a: int, b: int, parse_shape: Callable[[str, int, int], object],
                  nested: Nested) -> list[str] | None:
    """The operand names between ``text[a]`` and ``text[b]`` (or the constant's literal, the
    parameter's number, set on ``inst``); ``parse_shape(text, start, end)`` checks a shape
    written before an operand's name, ``nested`` adds a nested instruction expression. Raises
    :class:`~hloviz.parser.text.scan.ScanError` at the first operand it cannot read."""
    opcode = inst.opcode
    seg = text[a:b]
    if opcode == "constant":
        literal = seg.strip()
        if not literal:
            raise ScanError("a constant needs a literal value", a)
        inst.literal = literal
        return None
    if opcode == "parameter":
        if not _INT.match(seg):
            raise ScanError("expected the parameter number, e.g. parameter(0)", a)
        inst.parameter_number = int(seg)
        return None
    if not seg or seg.isspace():
        return None
    if "[" not in seg and "(" not in seg and "{" not in seg:
        names = [s.strip().lstrip("%") for s in seg.split(",")]
        for k, n in enumerate(names):
            if not n or not _NAME.match(n):
                _bad_operand(text, a, b, k)
        return names
    # Operands written with their shapes (TF <= 2.17), or nested instruction expressions.
    names: list[str] = []
    for pa, pb in split_top_level(text, a, b):
        piece = text[pa:pb]
        stripped = piece.strip()
        if not stripped:
            raise ScanError("expected an operand", pa)
        lead = len(piece) - len(piece.lstrip())
        if stripped.endswith(")"):
            names.append(nested(text, pa + lead, pb))
            continue
        last = stripped.split()[-1]
        if not _NAME.match(last):
            raise ScanError(f"cannot read '{stripped[:60]}' as an operand name", pa + lead)
        if len(stripped.split()) > 1 or stripped[:1] in "([":
            # "shape %name": the shape must at least be a shape.
            parse_shape(text, pa + lead, pb)
        names.append(last.lstrip("%"))
    return names


def _bad_operand(text: str, a: int, b: int, k: int) -> NoReturn:
    """Report operand ``k`` of the list between ``text[a]`` and ``text[b]``, where it starts."""
    spans = split_top_level(text, a, b)
    pa, pb = spans[k]
    piece = text[pa:pb]
    offset = pa + len(piece) - len(piece.lstrip())
    shown = piece.strip() or "nothing"
    raise ScanError(f"cannot read '{shown[:60]}' as an operand name", offset)
