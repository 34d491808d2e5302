"""XLA's total for a module without XLA's records: an allocation-by-allocation estimate.

XLA's buffer assignment (``buffer_assignment.cc``) gives every entry parameter, every constant
and every output buffer an allocation of its own, a thread-local slot to each value of a
reducer's computation, and packs the remaining temporaries: first into output allocations whose
live ranges they do not interfere with (largest buffers first), then into the one preallocated
temporary block the heap simulator lays out. That block is at least as large as the most bytes
of temporaries live at one time, and XLA's best-fit packing seldom needs more; this estimate
takes exactly that bound. It falls short of XLA's total where XLA's packing loses bytes, and
would exceed it only where XLA reused more than these rules find (none of the samples does).

A result takes over an operand's buffer that dies at it when XLA allows that
(``CanShareOperandBufferWithUser``: an elementwise op or a loop fusion of the same shape): the
two are then counted once at the instruction where one ends and the other begins.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from hloviz.opcodes import ELEMENTWISE, IN_PLACE

from .dataflow import Buffer, Dataflow, thread_local_slots
from .records import KINDS

__all__ = ["Estimate", "estimate", "shared_starts"]


@dataclass(frozen=True)
class Estimate:
    """Bytes by allocation kind (the keys of :data:`~hloviz.analysis.memory.records.KINDS`),
    the temporary block's size and how many temporaries went into output allocations."""

    by_kind: dict[str, int]
    aliased: int
    heap_bytes: int
    reused_outputs: int
    #: Buffer id → the number of the output / donated-parameter allocation it was placed in (its
    #: own included); buffers of one allocation never overlap in time but where one takes over.
    placed: dict[int, int] = field(default_factory=dict)
    #: :func:`shared_starts` of the module.
    starts: dict[int, int] = field(default_factory=dict)

    @property
    def total_bytes(self) -> int:
        return sum(self.by_kind.values())


#: How many output allocations (smallest that fit first) a temporary tries before it goes to the
#: temporary block: bounds the work on modules with thousands of outputs (a training step's
#: updated weights); the samples' estimates are the same with any bound from 32 up (with 8, the
#: Keras transformer's lands 0.12% over XLA's).
REUSE_TRIES = 32


class _Allocation:
    """An output allocation's size and the (disjoint) live ranges already placed in it."""

    __slots__ = ("number", "size", "starts", "ends")

    def __init__(self, number: int, size: int) -> None:
        self.number = number
        self.size = size
        self.starts: list[int] = []
        self.ends: list[int] = []

    def fits(self, start: int, end: int) -> bool:
        i = bisect_right(self.starts, end) - 1
        return i < 0 or self.ends[i] < start

    def cover(self, start: int, end: int) -> None:
        """Add ``[start, end]``, joined with any range it touches (must-alias buffers share a
        slot even where their ranges meet: the output is written as the parameter is last read)."""
        keep_s, keep_e = [], []
        for s, e in zip(self.starts, self.ends):
            if e < start - 1 or s > end + 1:
                keep_s.append(s)
                keep_e.append(e)
            else:
                start, end = min(start, s), max(end, e)
        i = bisect_right(keep_s, start)
        keep_s.insert(i, start)
        keep_e.insert(i, end)
        self.starts, self.ends = keep_s, keep_e

    def place(self, start: int, end: int) -> None:
        i = bisect_right(self.starts, start)
        self.starts.insert(i, start)
        self.ends.insert(i, end)


def _can_share(buffer: Buffer, operand: Buffer) -> bool:
    inst = buffer.defining.instruction
    if operand.size != buffer.size or operand.end != buffer.start:
        return False
    op = inst.opcode
    return op in ELEMENTWISE or op in IN_PLACE or (op == "fusion" and inst.fusion_kind == "kLoop")


def shared_starts(flow: Dataflow) -> dict[int, int]:
    """Buffer id → the time from which it needs bytes of its own: one past its start when it takes
    over an operand's buffer that dies where it begins (each operand buffer taken over once)."""
    taken: set[int] = set()
    out: dict[int, int] = {}
    for b in flow.buffers:
        if b.kind not in ("temporaries", "outputs"):
            continue
        for operand in b.defining.instruction.operands:
            ob = flow.buffer_of.get(operand)
            if ob is not None and id(ob) not in taken and ob.kind == "temporaries" and _can_share(b, ob):
                taken.add(id(ob))
                out[id(b)] = b.start + 1
                break
    return out


def estimate(flow: Dataflow) -> Estimate:
    """XLA's allocations for ``flow``'s module, by XLA's buffer assignment (:mod:`.assign`)."""
    from .assign import assign

    result = assign(flow)
    by_kind: dict[str, int] = dict.fromkeys(KINDS, 0)
    aliased = 0
    placed: dict[int, int] = {}
    reused = 0
    for a in result.allocations:
        by_kind[a.kind] += a.size
        if a.kind == "parameters" and any(b.aliased for b in a.buffers):
            aliased += a.size
        if a.kind in ("outputs", "parameters") and a.reusable:
            for b in a.buffers:
                placed[id(b)] = a.number
                reused += b.kind == "temporaries"
    by_kind["temporaries"] = result.heap_bytes
    for kind, size in thread_local_slots(flow.module):
        by_kind[kind] += size
    return Estimate(by_kind, aliased, result.heap_bytes, reused, placed, shared_starts(flow))


def _own_ranges(b: Buffer, starts: dict[int, int]) -> list[tuple[int, int]]:
    """``b``'s live ranges, less the position where it took over an operand's buffer (it needs no
    bytes of its own there: an output written over the temporary it replaces leaves that
    temporary room in the output's allocation)."""
    ranges = b.ranges()
    if id(b) in starts:
        first = (starts[id(b)], ranges[0][1])
        ranges = ([first] if first[0] <= first[1] else []) + ranges[1:]
    return ranges


def _reusable(candidates: list[_Allocation], ranges: list[tuple[int, int]]) -> _Allocation | None:
    """The first allocation free over all of ``ranges`` (the hot loop of large modules: the one-range
    case, nearly every temporary, is spelled out)."""
    if len(ranges) == 1:
        (s, e), = ranges
        for a in candidates:
            i = bisect_right(a.starts, e) - 1
            if i < 0 or a.ends[i] < s:
                return a
        return None
    for a in candidates:
        if all(a.fits(s, e) for s, e in ranges):
            return a
    return None


def _first_fitting(sizes: list[int], size: int) -> int:
    return bisect_left(sizes, size)


def _peak(intervals: list[tuple[int, int, int]], end: int) -> int:
    delta = [0] * (end + 2)
    for s, e, size in intervals:
        if e < s:
            continue
        delta[s] += size
        delta[e + 1] -= size
    best = live = 0
    for d in delta:
        live += d
        best = max(best, live)
    return best

