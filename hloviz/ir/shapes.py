"""Shapes and layouts: :class:`Shape`, :class:`Layout`, the bits of each element type.

In: nothing but the words of a shape (the parser builds them). Out: frozen values that compare by
value and know their sizes in bytes. Its own module because a shape is a value with no link to
the instructions around it: the byte counts of memory and kernel analyses need only this.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

# Bits per element, for byte counts. Sub-byte types are counted as XLA packs them by default
# (unpacked: one byte each) only when a layout says so; here they count their nominal width.
ELEMENT_BITS: dict[str, int] = {
    "pred": 8, "s1": 1, "u1": 1, "s2": 2, "u2": 2, "s4": 4, "u4": 4, "s8": 8, "u8": 8,
    "s16": 16, "u16": 16, "s32": 32, "u32": 32, "s64": 64, "u64": 64,
    "f16": 16, "bf16": 16, "f32": 32, "f64": 64, "c64": 64, "c128": 128,
    "f8e5m2": 8, "f8e4m3fn": 8, "f8e4m3b11fnuz": 8, "f8e5m2fnuz": 8, "f8e4m3fnuz": 8,
    "f8e4m3": 8, "f8e3m4": 8, "f8e8m0fnu": 8, "f4e2m1fn": 4,
    "token": 0, "opaque": 0, "tuple": 0,
}

_INT = re.compile(r"[+-]?[0-9]+")

DYNAMIC = -1
"""Marks a dimension printed as ``?`` (unbounded dynamic)."""


@dataclass(frozen=True, slots=True)
class Layout:
    """A shape's layout, kept as the text between the braces (e.g. ``1,0:T(8,128)(2,1)S(1)``).

    The minor-to-major order is parsed eagerly because the printer and the diff use it;
    tiling and memory space are read from the text when asked for.
    """

    text: str

    @property
    def minor_to_major(self) -> tuple[int, ...]:
        head = self.text.split(":", 1)[0].strip()
        return tuple(int(d) for d in head.split(",") if d.strip()) if head else ()

    @property
    def tiles(self) -> tuple[tuple[int | str, ...], ...]:
        """Each ``T(...)`` tile of the layout; ``*`` (combined dimension) is kept as a string."""
        if ":" not in self.text:
            return ()
        m = re.search(r"T((?:\([^)]*\))+)", self.text.split(":", 1)[1])
        if not m:
            return ()
        return tuple(
            tuple(int(x) if _INT.fullmatch(x.strip()) else x.strip() for x in t.split(",") if x.strip())
            for t in re.findall(r"\(([^)]*)\)", m.group(1))
        )

    @property
    def memory_space(self) -> int | None:
        if ":" not in self.text:
            return None
        m = re.search(r"S\((\d+)\)", self.text.split(":", 1)[1])
        return int(m.group(1)) if m else None

    def __str__(self) -> str:
        return "{" + self.text + "}"


@dataclass(frozen=True, slots=True)
class Shape:
    """An HLO shape: an array (``f32[2,<=3,?]{1,0}``), a tuple, ``token[]`` or ``opaque[]``.

    ``dims`` holds sizes (bounds for ``<=N`` dimensions, :data:`DYNAMIC` for ``?``);
    ``dynamic`` says which dimensions are dynamic. For tuples, ``element_type`` is ``"tuple"``
    and ``tuple_shapes`` holds the elements.
    """

    element_type: str
    dims: tuple[int, ...] = ()
    dynamic: tuple[bool, ...] = ()
    layout: Layout | None = None
    tuple_shapes: tuple[Shape, ...] = ()
    #: element_count, computed on first use (a shape of 100k dimensions must not cost 100k
    #: multiplications at every look).
    _elements: int = field(default=-1, init=False, repr=False, compare=False, hash=False)

    @property
    def is_tuple(self) -> bool:
        return self.element_type == "tuple"

    @property
    def is_array(self) -> bool:
        return self.element_type not in ("tuple", "token", "opaque")

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def element_count(self) -> int:
        """Number of elements of an array shape (bounds used for ``<=N``; ``?`` counts as 0)."""
        if self._elements < 0:
            n = 1
            for d in self.dims:
                n *= max(d, 0)
            object.__setattr__(self, "_elements", n)
        return self._elements

    @property
    def byte_size(self) -> int:
        """Bytes the data takes (sum over leaves for tuples); no padding or tiling counted."""
        if self.is_tuple:
            return sum(s.byte_size for s in self.tuple_shapes)
        bits = ELEMENT_BITS.get(self.element_type, 0)
        return (self.element_count * bits + 7) // 8

    def leaves(self) -> Iterator[Shape]:
        """The array/token leaves of this shape, depth first."""
        if self.is_tuple:
            for s in self.tuple_shapes:
                yield from s.leaves()
        else:
            yield self

    def to_text(self, *, layout: bool = True) -> str:
        if self.is_tuple:
            return "(" + ", ".join(s.to_text(layout=layout) for s in self.tuple_shapes) + ")"
        parts: list[str] = []
        for d, dyn in zip(self.dims, self.dynamic):
            parts.append("?" if d == DYNAMIC else (f"<={d}" if dyn else str(d)))
        text = f"{self.element_type}[{','.join(parts)}]"
        if layout and self.layout is not None:
            text += str(self.layout)
        return text

    def __str__(self) -> str:
        return self.to_text()


INFERRED = Shape("inferred")
"""Placeholder for a shape the text left out and hloviz could not infer (XLA would infer it)."""
