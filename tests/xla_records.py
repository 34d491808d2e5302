"""Readings of XLA's own memory records that several tests take as their oracle (written here,
never taken from hloviz)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def most_live(ranges: Iterable[tuple[str, int, int]], where: Mapping[str, tuple[int, int, int]]) -> int:
    """The most bytes live at one position of the schedule: ``ranges`` gives each value's first
    and last position (both live, XLA's ``HloLiveRange``), ``where`` its allocation, offset and
    size (XLA's buffer assignment). Values sharing bytes (an output written into a donated
    parameter's buffer, a result written over its operand) count once: what is live at a
    position is the union of their byte ranges in each allocation."""
    ranges = [(v, a, b) for v, a, b in ranges if v in where]
    best = 0
    for t in range(max((b for _, _, b in ranges), default=-1) + 1):
        spans: dict[int, list[tuple[int, int]]] = {}
        for v, a, b in ranges:
            if a <= t <= b:
                allocation, offset, size = where[v]
                spans.setdefault(allocation, []).append((offset, offset + size))
        total = 0
        for pieces in spans.values():
            reach = -1
            for lo, hi in sorted(pieces):
                total += max(0, hi - max(lo, reach))
                reach = max(reach, hi)
        best = max(best, total)
    return best
