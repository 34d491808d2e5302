"""XLA's heap simulator over the whole module: where the temporaries of the preallocated block go.

What XLA does (``heap_simulator.cc``), redone on hloviz's values:

* **events**: along the flattened schedule, at each position the values that start there are
  allocated (in order of their live range, then value id) and then the values that end there are
  freed; each allocation and each free advances a counter, the time the packing sees. A value of a
  buffer that already has an address *shares* it (a loop's values); a value that is its buffer's
  only one may take over an operand's bytes when that operand's value ends exactly there and XLA
  allows the sharing (``CanShareOperandBufferWithUser``): the operand is freed and the value
  shares its chunk;
* **packing** (``GlobalDecreasingSizeBestFitHeap``): the allocated values, each with the values
  sharing its chunk, are placed in decreasing order — by size (*spatial*) or by how long they live
  (*temporal*) — each into the smallest free gap, at an aligned offset, that no value overlapping
  it in time occupies; the block is as large as the highest chunk end. XLA keeps the smaller of the
  two packings (``ChooseBestHeapAlgorithm``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

__all__ = ["HeapValue", "simulate"]

#: XLA:CPU's buffer alignment (``cpu_function_runtime::MinAlign``): offsets in the block are
#: multiples of it (seen in every dump: 64, 1088, 1152, …).
ALIGNMENT = 64


@dataclass(eq=False, slots=True)
class HeapValue:
    """One value the heap places: its buffer (values of one buffer share a chunk), its bytes (its
    buffer's largest value), its live range in schedule positions and its order key (XLA's value id)."""

    buffer: int
    size: int
    start: int
    end: int
    key: tuple
    #: Set by :func:`simulate`: the counter times the packing sees, and where it went.
    first: int = -1
    last: int = -1
    offset: int = -1
    colocations: list[HeapValue] = field(default_factory=list)
    allocated: bool = False
    owner: HeapValue | None = None


def simulate(values: Sequence[HeapValue], shares: Callable[[HeapValue, HeapValue, int], bool],
             operands: Callable[[HeapValue], Sequence[HeapValue]],
             alignment: int = ALIGNMENT) -> int:
    """The size of XLA's preallocated temporary block for ``values`` (offsets are set on them).

    ``operands(v)``: the heap values ``v``'s instruction reads (those it could take over);
    ``shares(operand, user, time)``: whether XLA lets ``user`` take over ``operand``'s bytes."""
    if not values:
        return 0
    end_time = max(v.end for v in values)
    defined: list[list[HeapValue]] = [[] for _ in range(end_time + 2)]
    freed: list[list[HeapValue]] = [[] for _ in range(end_time + 2)]
    for v in sorted(values, key=lambda v: (v.start, v.end, v.key)):
        defined[v.start].append(v)
        freed[v.end].append(v)
    _replay(values, defined, freed, end_time, shares, operands)
    roots = [v for v in values if v.allocated]
    best = None
    for order in (_spatial, _temporal):
        size, offsets = _pack(sorted(roots, key=order), alignment)
        if best is None or size < best[0]:
            best = (size, offsets)
    assert best is not None
    for v in roots:
        v.offset = best[1][id(v)]
        for c in v.colocations:
            c.offset = v.offset
    return best[0]


def _replay(values: Sequence[HeapValue], defined: list[list[HeapValue]], freed: list[list[HeapValue]], end_time: int,
            shares: Callable[[HeapValue, HeapValue, int], bool],
            operands: Callable[[HeapValue], Sequence[HeapValue]]) -> None:
    """The allocate / share / free events along the schedule (``HeapSimulator::RunComputation``)."""
    per_buffer: dict[int, int] = {}
    for v in values:
        per_buffer[v.buffer] = per_buffer.get(v.buffer, 0) + 1
    first_of: dict[int, HeapValue] = {}
    counter = 0
    ends = {id(v): v.end for v in values}
    for t in range(end_time + 1):
        for v in defined[t]:
            if v.buffer in first_of:
                _share(v, first_of[v.buffer], counter)
                counter += 1
                continue
            taken = None
            if per_buffer[v.buffer] == 1:
                for o in operands(v):
                    if (per_buffer.get(o.buffer) == 1 and ends.get(id(o)) == t and o in freed[t]
                            and shares(o, v, t)):
                        taken = o
                        break
            if taken is not None:
                taken.last = counter
                counter += 1
                freed[t].remove(taken)
                ends[id(taken)] = v.end
                _share(v, taken, counter)
                counter += 1
                continue
            v.first = counter
            v.allocated = True
            counter += 1
            first_of[v.buffer] = v
        for v in freed[t]:
            v.last = counter
            counter += 1


def _share(v: HeapValue, with_value: HeapValue, counter: int) -> None:
    """``v`` shares the chunk of ``with_value`` (and so of the value that chunk was allocated for)."""
    owner = with_value.owner if with_value.owner is not None else with_value
    v.first = counter
    v.owner = owner
    owner.colocations.append(v)


def _span(v: HeapValue) -> tuple[int, int]:
    lo, hi = v.first, v.last
    for c in v.colocations:
        lo, hi = min(lo, c.first), max(hi, c.last)
    return lo, hi


def _spatial(v: HeapValue) -> tuple:
    return (-v.size, v.first - v.last, v.key)


def _temporal(v: HeapValue) -> tuple:
    lo, hi = _span(v)
    return (lo - hi, -v.size, v.key)


def _pack(order: list[HeapValue], alignment: int) -> tuple[int, dict[int, int]]:
    """Best-fit placement of ``order`` (XLA's ``GlobalDecreasingSizeBestFitHeap::Finish``).

    A value and those sharing its chunk occupy it over the union of their live ranges; each chunk
    placed is kept with that union (merged), so that finding the chunks in use at the same time
    as a value costs one comparison per chunk, not one per value sharing it."""
    placed: list[tuple[int, int, list[tuple[int, int]], int, int]] = []  # (lo, hi, times, offset, end)
    offsets: dict[int, int] = {}
    heap = 0
    for v in order:
        size = max([v.size] + [c.size for c in v.colocations])
        times = _union([(v.first, v.last)] + [(c.first, c.last) for c in v.colocations])
        lo, hi = times[0][0], times[-1][1]
        used = sorted((off, end) for plo, phi, ptimes, off, end in placed
                      if plo <= hi and phi >= lo and _meet(times, ptimes))
        offset = _best_fit(used, v.size, size, alignment)
        offsets[id(v)] = offset
        heap = max(heap, offset + size)
        placed.append((lo, hi, times, offset, offset + size))
    return heap, offsets


def _union(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` (inclusive counter times) as sorted disjoint ranges."""
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _meet(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> bool:
    """Whether two sorted lists of disjoint ranges share a time."""
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i][1] < b[j][0]:
            i += 1
        elif b[j][1] < a[i][0]:
            j += 1
        else:
            return True
    return False


def _align(x: int, alignment: int) -> int:
    return (x + alignment - 1) // alignment * alignment


def _best_fit(used: list[tuple[int, int]], own: int, size: int, alignment: int) -> int:
    """The offset of the smallest free gap (then the lowest) holding ``size`` bytes; gaps shorter
    than ``own`` are not even listed (``MakeFreeChunks``), nor are gaps of no bytes, the last gap
    is unbounded. (A value of no bytes — ``jax.debug.print``'s empty tuple — goes to the end of
    the block, aligned: its offset grew an unseen step's block from 68 to XLA's 128 bytes.)"""
    if not used:
        return 0
    gaps: list[tuple[int, int]] = []
    free_start = 0
    cur_off, cur_end = used[0]
    for off, end in used[1:]:
        if off < cur_end:
            cur_end = max(cur_end, end)
            continue
        if cur_off - free_start >= own:
            gaps.append((free_start, cur_off))
        free_start = max(free_start, _align(cur_end, alignment))
        cur_off, cur_end = off, end
    if cur_off - free_start >= own:
        gaps.append((free_start, cur_off))
    free_start = max(free_start, _align(cur_end, alignment))
    best = None
    for lo, hi in gaps:
        start = _align(lo, alignment)
        if hi > lo and start + size <= hi and (best is None or (hi - lo, lo) < best[0]):
            best = ((hi - lo, lo), start)
    return best[1] if best is not None else free_start
