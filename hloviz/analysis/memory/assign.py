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
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from hloviz.ir import Computation, HloModule, Instruction
from hloviz.opcodes import ELEMENTWISE, IN_PLACE

from .dataflow import Buffer, Dataflow, Value, positions, thread_local_slots, top_value
from .heap import ALIGNMENT, HeapValue, simulate

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


#: Above this many temporaries the packing is not replayed (its cost grows with the square of
#: their number); the block is then taken as the most bytes live at once, a lower bound.
HEAP_LIMIT = 20_000


class _Rules:
    """What XLA asks of a module while assigning: value order, positions, operand sharing."""

    def __init__(self, flow: Dataflow) -> None:
        self.flow = flow
        self.positions = positions(flow)
        self.order = _post_order(flow.module)
        #: ComparePosition's order: the same, callers' computations first.
        self.position = _post_order(flow.module, callers_first=True)
        self.buffer_of_value: dict[int, Buffer] = {id(v): b for b in flow.buffers for v in b.values}

    def key(self, v: Value) -> tuple:
        """XLA's value id order: values in post order of their instructions, computations callees
        first, a loop's phi values after every other."""
        phi = v.instruction.opcode in ("while", "parameter") and v.instruction not in self.entry_params
        return (phi, self.order.get(v.instruction, 0), v.index)

    @property
    def entry_params(self) -> set[Instruction]:
        entry = self.flow.module.entry
        return set(entry.parameters) if entry is not None else set()

    def operand_values(self, v: Value) -> list[Value]:
        """The values at index {} of the operands of ``v``'s instruction (``GetValueSet(operand)``)."""
        out = []
        for o in v.instruction.operands:
            t = top_value(self.flow.trees.get(o))
            if t is not None:
                out.append(t)
        return out

    def can_share(self, operand: Value, user: Value) -> bool:
        """Whether ``user`` may take over ``operand``'s bytes where one ends and the other starts:
        the user reads the operand at one of its positions and XLA's
        ``CanShareOperandBufferWithUser`` allows it."""
        user_inst = user.instruction
        if user_inst.opcode == "copy":
            return False
        for inst, index in self.positions.get(id(operand), ()):
            if inst in user_inst.operands and _can_share_operand(inst, index, user_inst, user.index):
                return True
        return False


def _post_order(module: HloModule, *, callers_first: bool = False) -> dict[Instruction, int]:
    """Instruction → its position in the post order of its computation (operands first, from the
    instructions nobody uses, in text order), computations in the order of the text (XLA prints
    them callees first), or reversed."""
    out: dict[Instruction, int] = {}
    n = 0
    for comp in (reversed(module.computations) if callers_first else module.computations):
        for inst in _instruction_post_order(comp):
            out[inst] = n
            n += 1
    return out


def _instruction_post_order(comp: Computation) -> Iterator[Instruction]:
    users = comp.users()
    seen: set[Instruction] = set()
    for start in comp.instructions:
        if users.get(start) or start in seen:
            continue
        stack: list[tuple[Instruction, bool]] = [(start, False)]
        while stack:
            inst, done = stack.pop()
            if done:
                yield inst
                continue
            if inst in seen:
                continue
            seen.add(inst)
            stack.append((inst, True))
            stack.extend((o, False) for o in reversed(inst.operands) if o not in seen)


def _subshape(inst: Instruction, index: tuple[int, ...]):
    shape = inst.shape
    for k in index:
        if not shape.is_tuple or k >= len(shape.tuple_shapes):
            return None
        shape = shape.tuple_shapes[k]
    return shape


def _can_share_operand(operand: Instruction, index: tuple[int, ...], user: Instruction,
                       user_index: tuple[int, ...]) -> bool:
    """XLA's ``CanShareOperandBufferWithUser``: same shape (and layout), and the user reads each
    element of the operand only where it writes the same element (elementwise ops, fusions whose
    parameter flows through elementwise ops only, in-place updates of their first operand)."""
    a, b = _subshape(operand, index), _subshape(user, user_index)
    if a is None or b is None or a != b or a.is_tuple:
        return False
    number = user.operands.index(operand)
    if user.opcode in IN_PLACE:
        return number == 0
    if user.opcode == "fusion":
        fused = user.called_computations[0] if user.called_computations else None
        if fused is None:
            return False
        param = next((p for p in fused.parameters if p.parameter_number == number), None)
        return param is not None and _elementwise_uses(fused, param)
    return user.opcode in ELEMENTWISE


def _elementwise_uses(fused: Computation, param: Instruction) -> bool:
    """Whether every transitive use of ``param`` in ``fused`` is elementwise (or a tuple)."""
    users = fused.users()
    stack = [param]
    seen: set[Instruction] = set()
    while stack:
        inst = stack.pop()
        for u in users.get(inst, ()):
            if u in seen:
                continue
            seen.add(u)
            if u.opcode == "tuple" or u.opcode == "get-tuple-element":
                stack.append(u)
            elif u.opcode in ELEMENTWISE:
                stack.append(u)
            elif u.opcode in IN_PLACE and u.operands and u.operands[0] is inst:
                stack.append(u)
            else:
                return False
    return True


def assign(flow: Dataflow) -> Assignment:
    """XLA's allocations for ``flow``'s module (see the module docstring)."""
    rules = _Rules(flow)
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

    def new(b: Buffer, kind: str, can_reuse: bool) -> Allocation:
        a = Allocation(len(allocations), b.size, kind, can_reuse)
        allocations.append(a)
        _put(a, b)
        return a

    def _put(a: Allocation, b: Buffer) -> None:
        a.buffers.append(b)
        a.values.extend(b.values)
        allocation_of[id(b)] = a

    def fits(a: Allocation, b: Buffer) -> bool:
        if not a.reusable or b.size > a.size:
            return False
        for x in a.values:
            for v in b.values:
                if _interferes(x, v, rules):
                    return False
                if v.instruction.opcode == "copy" and any(
                        top_value(flow.trees.get(o)) is x for o in v.instruction.operands):
                    return False
        return not (live_out(b) and a.size != b.size)

    for b in sorted(flow.buffers, key=order):
        if not b.size:
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
        placed = None
        for v in b.values:
            if v.index or v.shape.is_tuple:
                continue
            for o in v.instruction.operands:
                ov = top_value(flow.trees.get(o))
                ob = rules.buffer_of_value.get(id(ov)) if ov is not None else None
                a = allocation_of.get(id(ob)) if ob is not None else None
                if a is not None and fits(a, b):
                    placed = a
                    break
            if placed is not None:
                break
        if placed is None:
            placed = next((a for a in reversed(reusable) if fits(a, b)), None)
        if placed is not None:
            _put(placed, b)
            continue
        if not live_out(b):
            delayed.append(b)
            continue
        reusable.append(new(b, "outputs", True))
    heap_bytes, offsets, shared = _heap(delayed, rules)
    # the temporary allocations (tuples' own and the heap's block) become one (CombineTempAllocations)
    kinds = [a.kind == "temporaries" for a in allocations]
    if delayed:
        kinds.append(True)
    kinds += [False] * len(thread_local_slots(flow.module))
    sizes = [a.size for a in allocations] + [heap_bytes]
    block = 0
    for n, position in enumerate(_partition(kinds)):
        block = sizes[position] if n == 0 else -(-block // ALIGNMENT) * ALIGNMENT + sizes[position]
    return Assignment(allocations, block, allocation_of, offsets, shared)


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
    return [k for k in order[first:]]


def _interferes(x: Value, v: Value, rules: _Rules) -> bool:
    """XLA's ``LiveRangeInterferes`` of two values' ranges ``[start, end]``."""
    if x.start > v.end or v.start > x.end:
        return False
    if x.end == v.start:
        return not rules.can_share(x, v)
    if v.end == x.start:
        return not rules.can_share(v, x)
    return True


def _heap(delayed: list[Buffer], rules: _Rules) -> tuple[int, dict[int, int], dict[int, int]]:
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
                and _can_share_operand(ov.instruction, ov.index, uv.instruction, uv.index))

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

