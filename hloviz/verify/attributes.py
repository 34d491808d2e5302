"""Attribute values and layouts XLA's parser would refuse: their syntax, checked on the raw text.

In: the raw text of one attribute (``window``, ``result_accuracy``, ``api_version``, the header's
``input_output_alias`` and ``buffer_donor``, a layout's ``D(…)``/``P(…)`` parts). Out: whether
XLA would read it, or a problem in words. Its own module because each is a grammar of its own,
checked apart from the instructions that carry it (:mod:`.structure`).
"""

from __future__ import annotations

import re

__all__ = ["API_VERSIONS", "alias_ok", "donors_ok", "layout_problem", "result_accuracy_ok", "top_level_split",
           "window_problem"]

# -- attribute values -------------------------------------------------------------------------

_DIMS = r"-?\d+(?:x-?\d+)*"
_WINDOW_FIELD = re.compile(
    r"(?:size|stride|lhs_dilate|rhs_dilate|rhs_reversal)=" + _DIMS + r"|pad=-?\d+_-?\d+(?:x-?\d+_-?\d+)*")


def window_problem(text: str) -> str | None:
    """What is wrong with a ``window={…}`` (``size=3x3 stride=… pad=…``), or None."""
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


def result_accuracy_ok(text: str) -> bool:
    """Whether a ``result_accuracy`` is a mode XLA names or a ``tolerance={atol=… rtol=… ulps=…}``."""
    inner = text.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        return False
    body = inner[1:-1].strip()
    mode = re.fullmatch(r"mode\s*=\s*(\w+)", body)
    if mode:
        return mode.group(1) in ("default", "highest")
    tol = re.fullmatch(r"tolerance\s*=\s*(\{.*\})", body, re.DOTALL)
    return bool(tol and _TOLERANCE.fullmatch(tol.group(1)))


API_VERSIONS = frozenset({"API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
                           "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"})

_INDEX = r"\{\s*(?:\d+\s*(?:,\s*\d+\s*)*)?\}"
_ALIAS_ENTRY = re.compile(r"\s*" + _INDEX + r"\s*:\s*\(\s*\d+\s*,\s*" + _INDEX
                          + r"\s*(?:,\s*(?:may-alias|must-alias)\s*)?\)\s*")


def alias_ok(text: str) -> bool:
    """Whether the header's ``input_output_alias`` is a list of ``{index}: (parameter, {index})``."""
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


def donors_ok(text: str) -> bool:
    """Whether the header's ``buffer_donor`` is a list of ``(parameter, {index})``."""
    inner = text.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        return False
    entries = top_level_split(inner[1:-1])
    return all(_DONOR_ENTRY.fullmatch(e) for e in entries) if inner[1:-1].strip() else True


def top_level_split(text: str) -> list[str]:
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


def layout_problem(text: str) -> str | None:
    """What is wrong with the parts of a layout after its ``:`` (``D(…)``, ``T(…)``, ``P(…)``), or None."""
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
