"""XLA's buffer assignment of one module, rule for rule (``buffer_assignment.cc``), on hloviz's
dataflow (:mod:`.dataflow`): which allocation each buffer gets.

The buffers of the module's sequential computations are taken largest first (then those that
live out, then in post order of their first instruction):

* a buffer holding a **constant** gets an allocation of its own, and so does one holding an **entry
  parameter** (read-only unless donated: ``input_output_alias``; a donated one may be reused);
* any other buffer first tries the allocations of its instruction's **operands**, then every
  reusable allocation made so far, the smallest first (the latest made): it may go into one whose
  values never live at the same time as its own (``LiveRangeInterferes``: ranges may only touch
  where the later value is the one XLA lets take over the earlier one's bytes, and a ``copy``
  never shares with what it copies); a buffer that lives out only into one of exactly its size;
* a temporary that found no room waits for the **heap simulator** (:mod:`.heap`), which packs all
  of them into one preallocated block; a buffer that lives out gets a new allocation.

Values of computations that reducers, sorts and maps call get thread-local slots (counted apart).

This module places buffers into allocations; what it asks of the module on the way (the order of
values, whether a value may take over an operand's bytes) is :mod:`.rules`.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field

from .dataflow import Buffer, Dataflow, Value, thread_local_slots, top_value
from .heap import ALIGNMENT, HeapValue, simulate
from .rules import AssignmentRules, can_share_operand

__all__ = ["Allocation", "Assignment", "assign"]


@dataclass(eq=False)
class Allocation:
    """One of XLA's allocations: its ``kind`` (parameters, outputs, constants) and the buffers in it."""

    number: int
    size: int
    kind: str
    reusable: bool
    buffers: list[Buffer] = field(default_factory=list)
    values: list[Value] = field(default_factory=list)
    #: The values' starts, sorted, and the values in that order: their live ranges never overlap
    #: but where one takes over from another, so the few that may meet a new value are found by
    #: bisection.
    starts: list[int] = field(default_factory=list, repr=False)
    by_start: list[Value] = field(default_factory=list, repr=False)
    ids: set[int] = field(default_factory=set, repr=False)

    def add(self, b: Buffer) -> None:
        self.buffers.append(b)
        for v in b.values:
            self.values.append(v)
            i = bisect_right(self.starts, v.start)
            self.starts.insert(i, v.start)
            self.by_start.insert(i, v)
            self.ids.add(id(v))

    def near(self, v: Value) -> Iterator[Value]:
        """The values whose live ranges may meet ``v``'s (all others end before it starts or start
        after it ends)."""
        i = bisect_right(self.starts, v.end)
        while i > 0:
            i -= 1
            x = self.by_start[i]
            yield x
            if x.end < v.start and (i == 0 or self.by_start[i - 1].end < v.start):
                break


@dataclass
class Assignment:
    """Allocations, the temporary block's size and which heap offsets the temporaries got."""

    allocations: list[Allocation]
    heap_bytes: int
    #: id(buffer) → its allocation (buffers in the temporary block are not in it).
    allocation_of: dict[int, Allocation]
    #: id(value) → offset in the temporary block, for the values packed there.
    heap_offsets: dict[int, int]
    #: id(value) → the value whose bytes it took over in the heap (ShareWith an operand).
    heap_shared: dict[int, int] = field(default_factory=dict)


#: XLA tries every reusable allocation made so far, the latest first; hloviz tries the latest
#: REUSE_LIMIT (the corpus needs at most 263: MobileNetV2's training step), and once a module has
#: cost REUSE_BUDGET tries in all, the latest REUSE_LATE only: a module with thousands of outputs
#: then costs time in proportion to its size (a temporary XLA would put into an older allocation
#: goes to the block instead). The corpus' modules stay far below the budget.
REUSE_LIMIT = 1024
REUSE_BUDGET = 2_000_000
REUSE_LATE = 32

#: Above this many temporaries the packing is not replayed (its cost grows with the square of
#: their number; the corpus' largest has 464); the block is then taken as the most bytes live at
#: once, a lower bound.
HEAP_LIMIT = 5_000


def assign(flow: Dataflow) -> Assignment:
    """XLA's allocations for ``flow``'s module (see the module docstring)."""
    rules = AssignmentRules(flow)
    entry_params = rules.entry_params
    key = rules.key

    def live_out(b: Buffer) -> bool:
        return any(v.live_out for v in b.values)

    def order(b: Buffer) -> tuple:
        first = min(rules.position.get(v.instruction, 0) for v in b.values)
        return (-b.size, not live_out(b), first, min(key(v) for v in b.values))

    allocations: list[Allocation] = []
    allocation_of: dict[int, Allocation] = {}
    reusable: list[Allocation] = []  # allocation_indices_: registered in order, tried from the last
    delayed: list[Buffer] = []
    budget = [REUSE_BUDGET]  # tries left at the full REUSE_LIMIT

    def new(b: Buffer, kind: str, can_reuse: bool) -> Allocation:
        a = Allocation(len(allocations), b.size, kind, can_reuse)
        allocations.append(a)
        _put(a, b)
        return a

    def _put(a: Allocation, b: Buffer) -> None:
        a.add(b)
        allocation_of[id(b)] = a

    def fits(a: Allocation, b: Buffer) -> bool:
        return _fits(a, b, rules, live_out(b))

    for b in sorted(flow.buffers, key=order):
        if not b.size:  # no bytes (a side-effecting custom call's empty tuple): a place at the block's end all the same
            delayed.append(b)
            continue
        if any(v.instruction.opcode == "constant" for v in b.values):
            new(b, "constants", False)
            continue
        if any(v.instruction in entry_params for v in b.values):
            a = new(b, "parameters", b.aliased)
            if b.aliased:
                reusable.append(a)
            continue
        if any(v.shape.is_tuple for v in b.values):  # a tuple's pointer table: its own, never reused
            new(b, "outputs" if live_out(b) else "temporaries", False)
            continue
        placed = next((a for a in _operand_allocations(b, rules, allocation_of) if fits(a, b)), None)
        if placed is None:
            placed = _smallest_fitting(reusable, b, rules, live_out(b), budget)
        if placed is not None:
            _put(placed, b)
            continue
        if not live_out(b):
            delayed.append(b)
            continue
        reusable.append(new(b, "outputs", True))
    heap_bytes, offsets, shared = _heap(delayed, rules)
    block = _combined(allocations, heap_bytes if delayed else None, len(thread_local_slots(flow.module)))
    return Assignment(allocations, block, allocation_of, offsets, shared)


def _fits(a: Allocation, b: Buffer, rules: AssignmentRules, lives_out: bool) -> bool:
    """XLA's ``MaybeAssignBuffer``: whether ``b`` may go into ``a`` (see the module docstring)."""
    if not a.reusable or b.size > a.size or (lives_out and a.size != b.size):
        return False
    for v in b.values:
        if v.instruction.opcode == "copy" and any(
                id(top_value(rules.flow.trees.get(o))) in a.ids for o in v.instruction.operands):
            return False
        for x in a.near(v):
            if _interferes(x, v, rules):
                return False
    return True


def _smallest_fitting(reusable: list[Allocation], b: Buffer, rules: AssignmentRules, lives_out: bool,
                      budget: list[int]) -> Allocation | None:
    """The latest-made (smallest) reusable allocation ``b`` fits in (``TryAssignToExistingAllocation``).

    The hot loop of large modules: for a buffer of one value that is no copy, an allocation whose
    last value starting before this one ends either ends before it starts (it fits) or overlaps it
    by more than a touch (it does not); only a touch needs the full rules."""
    tries = reusable[:-(REUSE_LIMIT if budget[0] > 0 else REUSE_LATE) - 1:-1]
    budget[0] -= len(tries)
    if len(b.values) != 1 or b.values[0].instruction.opcode == "copy":
        return next((a for a in tries if _fits(a, b, rules, lives_out)), None)
    v = b.values[0]
    start, end, size = v.start, v.end, b.size
    for a in tries:
        if not a.reusable or size > a.size or (lives_out and a.size != size):
            continue
        i = bisect_right(a.starts, end)
        if i == 0 or a.by_start[i - 1].end < start:
            return a
        x = a.by_start[i - 1]
        if x.end > start and x.start < end:
            continue
        if _fits(a, b, rules, lives_out):
            return a
    return None


def _operand_allocations(b: Buffer, rules: AssignmentRules, allocation_of: dict[int, Allocation]) -> Iterator[Allocation]:
    """The allocations already holding the operands of ``b``'s (array, top-level) values."""
    for v in b.values:
        if v.index or v.shape.is_tuple:
            continue
        for o in v.instruction.operands:
            ov = top_value(rules.flow.trees.get(o))
            ob = rules.buffer_of_value.get(id(ov)) if ov is not None else None
            a = allocation_of.get(id(ob)) if ob is not None else None
            if a is not None:
                yield a


def _combined(allocations: list[Allocation], heap: int | None, thread_local: int) -> int:
    """The size of the one temporary allocation XLA makes of the tuples' own and the heap's block
    (``CombineTempAllocations``: end to end, each aligned, in the order ``std::partition`` left
    them; the heap's block is made after the others, the thread-local slots after it)."""
    temp = [a.kind == "temporaries" for a in allocations]
    sizes = [a.size for a in allocations]
    if heap is not None:
        temp.append(True)
        sizes.append(heap)
    temp += [False] * thread_local
    block = 0
    for n, position in enumerate(_partition(temp)):
        block = sizes[position] if n == 0 else -(-block // ALIGNMENT) * ALIGNMENT + sizes[position]
    return block


def _partition(temp: list[bool]) -> list[int]:
    """The positions of the temporary allocations in the order XLA combines them: after
    ``std::partition`` moved them behind the others (libstdc++'s, which is not stable: it swaps
    the first temporary from the front with the last other from the back)."""
    order = list(range(len(temp)))
    first, last = 0, len(order)
    while True:
        while first != last and not temp[order[first]]:
            first += 1
        if first == last:
            break
        last -= 1
        while first != last and temp[order[last]]:
            last -= 1
        if first == last:
            break
        order[first], order[last] = order[last], order[first]
        first += 1
    return order[first:]


def _interferes(x: Value, v: Value, rules: AssignmentRules) -> bool:
    """XLA's ``LiveRangeInterferes`` of two values' ranges ``[start, end]``."""
    if x.start > v.end or v.start > x.end:
        return False
    if x.end == v.start:
        return not rules.can_share(x, v)
    if v.end == x.start:
        return not rules.can_share(v, x)
    return True


def _heap(delayed: list[Buffer], rules: AssignmentRules) -> tuple[int, dict[int, int], dict[int, int]]:
    values = [(b, v) for b in delayed for v in b.values]
    if len(values) > HEAP_LIMIT:
        return _most_live(values), {}, {}
    heap_values: dict[int, HeapValue] = {}
    for n, b in enumerate(delayed):
        for v in b.values:
            heap_values[id(v)] = HeapValue(n, b.size, v.start, v.end, rules.key(v))
    of_heap = {id(h): v for b in delayed for v in b.values for h in (heap_values[id(v)],)}

    def operands(h: HeapValue) -> list[HeapValue]:
        v = of_heap[id(h)]
        return [heap_values[id(o)] for o in rules.operand_values(v) if id(o) in heap_values]

    def shares(o: HeapValue, u: HeapValue, _time: int) -> bool:
        ov, uv = of_heap[id(o)], of_heap[id(u)]  # the operand's defining instruction, read directly
        return (uv.instruction.opcode != "copy" and ov.instruction in uv.instruction.operands
                and can_share_operand(ov.instruction, ov.index, uv.instruction, uv.index))

    size = simulate(list(heap_values.values()), shares, operands)
    offsets = {vid: h.offset for vid, h in heap_values.items()}
    shared = {vid: id(of_heap[id(h.owner)]) for vid, h in heap_values.items() if h.owner is not None}
    return size, offsets, shared


def _most_live(values: list[tuple[Buffer, Value]]) -> int:
    end = max(v.end for _, v in values) + 2
    delta = [0] * (end + 1)
    for b, v in values:
        delta[v.start] += b.size
        delta[v.end + 1] -= b.size
    best = live = 0
    for d in delta:
        live += d
        best = max(best, live)
    return best

