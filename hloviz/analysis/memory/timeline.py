"""The schedule's timeline of a memory report: each buffer an :class:`Interval` of schedule
positions, and the three readings of them the report makes (what takes memory at once, what is
live at a position, and where XLA's ``HloLiveRange`` puts the peak)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hloviz.ir import Instruction


@dataclass(frozen=True, slots=True)
class Interval:
    """One buffer's stay in memory: schedule positions ``start`` to ``end``, both included."""

    instruction: str
    index: tuple[int, ...]
    bytes: int
    kind: str
    start: int
    end: int
    #: What XLA's peak search counts for it: the byte size of its instruction's whole shape (a
    #: tuple's pointer table for a tuple element; see :func:`peak_moment`).
    event_bytes: int = 0
    #: Where it is stored (XLA's allocation, offset, size; or hloviz's own numbering for an
    #: estimate): values that share one slot at the same time are one set of bytes (a result
    #: written over the operand it replaces). None: a place of its own.
    slot: tuple[int, int, int] | None = None
    #: The instruction (when the module has it) and the schedule position of its last read.
    inst: Instruction | None = field(default=None, compare=False)
    last_use: int = -1


def occupancy(intervals: list[Interval]) -> list[tuple[str, int, int, int]]:
    """(kind, start, end, bytes) of what takes memory: each interval, except that intervals of
    one slot are joined where they overlap (one set of bytes)."""
    out: list[tuple[str, int, int, int]] = []
    slots: dict[tuple[int, int, int], list[Interval]] = {}
    for iv in intervals:
        if not iv.bytes or iv.end < iv.start:
            continue
        if iv.slot is None:
            out.append((iv.kind, iv.start, iv.end, iv.bytes))
        else:
            slots.setdefault(iv.slot, []).append(iv)
    for ivs in slots.values():
        ivs.sort(key=lambda iv: (iv.start, iv.end))
        kind, start, end, size = ivs[0].kind, ivs[0].start, ivs[0].end, ivs[0].bytes
        for iv in ivs[1:]:
            if iv.start <= end:  # one set of bytes: the larger of the two
                end, size = max(end, iv.end), max(size, iv.bytes)
            else:
                out.append((kind, start, end, size))
                kind, start, end, size = iv.kind, iv.start, iv.end, iv.bytes
        out.append((kind, start, end, size))
    return out


def live_at(intervals: list[Interval], t: int) -> list[Interval]:
    """The intervals live at ``t``; of several sharing a slot, the latest (the value written there)."""
    out: list[Interval] = []
    latest: dict[tuple[int, int, int], Interval] = {}
    for iv in intervals:
        if not (iv.start <= t <= iv.end and iv.bytes):
            continue
        if iv.slot is None:
            out.append(iv)
        elif iv.slot not in latest or iv.start > latest[iv.slot].start:
            latest[iv.slot] = iv
    return out + list(latest.values())


def peak_moment(intervals: list[Interval]) -> int:
    """The time XLA's ``HloLiveRange`` calls the peak, found the way it finds it: a sweep over
    start and end events in time order, starts before ends at the same time (an end event falls
    one past the end), each weighing its instruction's whole shape; the first time the running
    sum rises above every earlier one. Among several equally high positions this is the one XLA's
    report lists; the caller keeps it only when it is one of the highest (the sweep's count at a
    time includes buffers that ended just before it, so it can stop one position late)."""
    events: list[tuple[int, int, int]] = []
    for iv in intervals:
        events.append((iv.start, 0, iv.event_bytes))
        events.append((iv.end + 1, 1, -iv.event_bytes))
    events.sort(key=lambda e: (e[0], e[1]))
    usage = best = 0
    moment = 0
    for time, _, delta in events:
        usage += delta
        if usage > best:
            best, moment = usage, time
    return moment
