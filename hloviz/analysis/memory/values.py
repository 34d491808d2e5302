"""What the dataflow analysis produces: :class:`Value`, :class:`Buffer`, :class:`Dataflow`.

In: instructions and shapes. Out: the records :mod:`.dataflow` fills and every later step reads
(buffer assignment, heap simulation, the report): a value at one shape index of one instruction
with its live range, a buffer of values that must share storage, the schedule, and an
instruction's result tree (:data:`Tree`). Its own module because those readers need the records
and their sizes (:func:`shape_bytes`), not the rules that find them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from hloviz.ir import HloModule, Instruction, Shape

__all__ = ["POINTER_BYTES", "Buffer", "Dataflow", "Node", "Tree", "Value", "shape_bytes", "top_value", "tree_values"]

#: Bytes of one element of a tuple's pointer table (XLA's pointer size on every backend it has).
POINTER_BYTES = 8


def shape_bytes(shape: Shape) -> int:
    """The bytes XLA gives a buffer of ``shape``: the data for an array, the pointer table for a
    tuple (its elements are buffers of their own), nothing for a token."""
    if shape.is_tuple:
        return POINTER_BYTES * len(shape.tuple_shapes)
    if not shape.is_array:
        return 0
    return shape.byte_size


@dataclass(eq=False, slots=True)
class Value:
    """``instruction``'s result at shape ``index``, defined at ``time`` in the flattened schedule."""

    instruction: Instruction
    index: tuple[int, ...]
    shape: Shape
    time: int
    last_use: int = -1
    live_out: bool = False
    #: The live range ``[start, end]``, set by :func:`analyse` (XLA's ``HloLiveRange``: aliased
    #: values of one buffer end where the next one starts).
    start: int = 0
    end: int = 0
    parent: Value | None = field(default=None, repr=False)  # union-find
    #: A loop's phi value XLA does not make (the loop hands the value back unchanged).
    dropped: bool = False
    #: Bytes of its buffer (:func:`shape_bytes`), computed once.
    size: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.size = shape_bytes(self.shape)

    @property
    def key(self) -> str:
        return f"{self.instruction.name}{{{','.join(map(str, self.index))}}}"


class Node:
    """The values at every index of an instruction's (tuple) result: ``top`` and one tree per
    element; an array's tree is its :class:`Value`."""

    __slots__ = ("top", "elements")

    def __init__(self, top: Value | None, elements: list[Tree]) -> None:
        self.top = top
        self.elements = elements


Tree = Value | Node | None


def tree_values(tree: Tree) -> Iterator[Value]:
    """Every value of a result tree (its pointer tables and its arrays' values), each once."""
    stack = [tree]
    while stack:
        t = stack.pop()
        if isinstance(t, Value):
            yield t
        elif isinstance(t, Node):
            if t.top is not None:
                yield t.top
            stack.extend(t.elements)


@dataclass(eq=False, slots=True)
class Buffer:
    """Values that share storage (see the module docstring), with the live range they span and
    the kind of memory: ``parameters``, ``outputs``, ``temporaries`` or ``constants``."""

    values: list[Value]
    start: int
    end: int
    kind: str
    #: Whether it is a donated parameter, or an output written into one (``input_output_alias``).
    aliased: bool = False
    #: The ``input_output_alias`` pairs it is a side of (the parameter's and the output's share).
    pairs: frozenset[int] = frozenset()
    #: Bytes: its largest value's (computed once).
    size: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.size = max(v.size for v in self.values)

    def ranges(self) -> list[tuple[int, int]]:
        """The times some value of the buffer is live, as disjoint ``[start, end]`` ranges
        (a loop's buffer is free between the last read of one iteration's value and the write
        of the next)."""
        out: list[tuple[int, int]] = []
        for s, e in sorted((v.start, v.end) for v in self.values):
            if out and s <= out[-1][1]:
                out[-1] = (out[-1][0], max(out[-1][1], e))
            else:
                out.append((s, e))
        return out

    @property
    def defining(self) -> Value:
        """The value a report names the buffer by: its first definition."""
        return min(self.values, key=lambda v: (v.time, -v.size))


@dataclass
class Dataflow:
    """The flattened schedule, and the buffers living along it (:func:`analyse`)."""

    module: HloModule
    sequence: list[Instruction]
    buffers: list[Buffer]
    #: Why the schedule is what it is: ``"scheduled"``, or the order assumed for a module that has none.
    order: str
    #: The buffer holding each instruction's top-level (index ``{}``) value, for those that define one.
    buffer_of: dict[Instruction, Buffer]
    #: The buffers that carry while loops' state from one iteration to the next.
    loop_buffers: list[Buffer] = field(default_factory=list)
    #: Instruction → the value at each index of its result (what it defines or passes along):
    #: XLA's positions, for the buffer-assignment rules (:mod:`.assign`).
    trees: dict[Instruction, Tree] = field(default_factory=dict)

    @property
    def end_time(self) -> int:
        return len(self.sequence)


def top_value(tree: Tree) -> Value | None:
    """The value at index ``{}`` of an instruction's result tree."""
    t = tree.top if isinstance(tree, Node) else tree
    return t if isinstance(t, Value) else None
