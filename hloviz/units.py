"""Sizes written for people: one way everywhere, so the terminal, the report and a diff agree.

``binary_size(163888)`` is ``160.0 KiB``: powers of 1024 named as IEC units (KiB, MiB …, never
"KB"), one decimal, and plain bytes below 1 KiB (``12 B``). A negative size (a diff's delta)
keeps its sign.
"""

from __future__ import annotations

__all__ = ["binary_size"]

_UNITS = ("KiB", "MiB", "GiB", "TiB")


def binary_size(n: float) -> str:
    """``n`` bytes as ``12 B``, ``160.0 KiB``, ``1.5 GiB`` … (up to TiB)."""
    if abs(n) < 1024:
        return f"{int(n)} B"
    value = float(n)
    for unit in _UNITS:
        value /= 1024
        if abs(value) < 1024 or unit == _UNITS[-1]:
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")
