"""Splitting ``, key=value, key={...}`` attribute lists into raw text values.

The fast path splits with one regular expression and accepts the result when every value has
balanced braces and quotes; only the rare line where a ``, key=`` appears inside braces or a
string (``frontend_attributes={a="1",b="2"}``) takes the careful bracket-aware path.
"""

from __future__ import annotations

import re

from ..errors import HloParseError
from ..ir import Instruction
from ..source import Span
from .scan import ScanError, split_top_level

_ATTR_SPLIT = re.compile(r",\s*([A-Za-z_][\w.\-]*)\s*=")
_KEY = re.compile(r"\s*([A-Za-z_][\w.\-]*)\s*=\s*")


def split_attributes(text: str, start: int) -> dict[str, str]:
    """Parse ``text[start:]``, which must be empty or start with ``,``, into ``{key: raw value}``.

    Raises :class:`ScanError` (offset into ``text``) on malformed input.
    """
    rest = text[start:]
    parts = _ATTR_SPLIT.split(rest)
    if parts[0].strip():
        raise ScanError("expected ',' before the next attribute or the end of the instruction",
                        start + len(parts[0]) - len(parts[0].lstrip()))
    attrs: dict[str, str] = {}
    for k in range(1, len(parts), 2):
        value = parts[k + 1]
        if value.count("{") != value.count("}") or ('"' in value and (value.count('"') % 2 or "\\" in value)):
            return _split_carefully(text, start)
        attrs[parts[k]] = value.strip()
    for value in attrs.values():
        if not value:
            return _split_carefully(text, start)
    return attrs


def _split_carefully(text: str, start: int) -> dict[str, str]:
    attrs: dict[str, str] = {}
    spans = split_top_level(text, start)
    # The text before the first top-level comma must be blank.
    first_start, first_end = spans[0]
    if text[first_start:first_end].strip():
        raise ScanError("expected ',' before the next attribute", first_start)
    for a, b in spans[1:]:
        m = _KEY.match(text, a, b)
        if not m:
            offset = a + len(text[a:b]) - len(text[a:b].lstrip())
            raise ScanError("expected an attribute 'name=value'", offset)
        value = text[m.end() : b].strip()
        if not value:
            raise ScanError(f"attribute '{m.group(1)}' has no value", m.end())
        attrs[m.group(1)] = value
    return attrs


def names_in(value: str) -> list[str]:
    """Names listed in an attribute such as ``%comp`` or ``{%a, %b}``, without ``%``."""
    v = value.strip()
    if v.startswith("{"):
        v = v[1:-1] if v.endswith("}") else v[1:]
    return [n.strip().lstrip("%") for n in v.split(",") if n.strip()]


def read_deferred_attributes(inst: Instruction, line: str, start: int) -> dict[str, str]:
    """Split an instruction's deferred attribute text, ``line[start:]`` of its source line
    (:meth:`hloviz.ir.Instruction.defer_attributes`); an error points at the true column."""
    try:
        return split_attributes(line, start)
    except ScanError as err:
        computation = inst.parent
        module = computation.parent if computation is not None else None
        filename = module.filename if module is not None else "<string>"
        raise HloParseError(str(err), span=Span(filename, inst.line, 1, line).shifted(err.offset, line)) from None
