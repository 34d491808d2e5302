"""Literals XLA's parser would refuse: nesting, element counts and values against the shape.

In: a constant's literal text and its shape. Out: the problems in words (empty: XLA reads it).
Its own module because literals have their own small grammar (nested braces, ``nan(0x…)``
payloads, complex pairs, XLA's ``/*i0=1*/`` index comments) and their own range rules per
element type; hloviz's parser keeps them as text and never checks them.
"""

from __future__ import annotations

import math
import re

from ..ir import Shape

__all__ = ["literal_problems"]

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


def literal_problems(literal: str, shape: Shape) -> list[str]:
    """What XLA's parser would refuse in a constant's literal of this shape (empty: nothing)."""
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
