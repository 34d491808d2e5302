"""Scoring candidates for the bottom-up passes of the matcher (steps 5 and 6 of :mod:`.match`).

Evidence that instruction ``x`` of the first module and ``y`` of the second are the same op,
strongest first: operands whose counterparts are ``y``'s operands at the same position (2, or
1 at another position) and users whose counterparts use ``y`` (1.5) — together the
*structural* score; then the same ``metadata.op_name`` (2) or the same op-name scope (1), the
same source line (1), the same shape (1, or 0.5 without layout), the same content (1) and
computations already paired (1). Candidate lists are capped, so each search is bounded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from array import array
    from collections.abc import Sequence

    from .index import Side

_LIMIT = 64  # neighbours or index entries looked at per candidate search
_MAX_CANDIDATES = 24
#: Positions looked at either side of an operand's own, in a user with more than _LIMIT operands.
_WINDOW = 8


class _Index:
    """``key → instruction numbers`` of one side, skipping matched ones lazily."""

    def __init__(self, matched: array[int]) -> None:
        self.items: dict[object, list[int]] = {}
        self.start: dict[object, int] = {}
        self.matched = matched

    def add(self, key: object, n: int) -> None:
        self.items.setdefault(key, []).append(n)

    def unmatched(self, key: object) -> list[int]:
        items = self.items.get(key)
        if not items:
            return []
        matched = self.matched
        k = self.start.get(key, 0)
        while k < len(items) and matched[items[k]] != -1:
            k += 1
        self.start[key] = k
        out = []
        for n in items[k : k + _LIMIT]:
            if matched[n] == -1:
                out.append(n)
                if len(out) >= _MAX_CANDIDATES:
                    break
        return out


class MatchState(Protocol):
    """What the scorer reads of the matcher (:class:`.match.Matcher` is one): the two sides, the
    pairs found so far (``ma[x]``: the instruction of ``b`` paired with ``x``, -1 if none; ``mb``
    the other way; ``ca`` the same for computations) and the op names of both sides. Written
    here so that scoring does not depend on the matcher that calls it."""

    a: Side
    b: Side
    ma: array[int]
    mb: array[int]
    ca: list[int]

    def op_name_a(self, x: int) -> str: ...

    def op_name_b(self, y: int) -> str: ...


class Scorer:
    """Indexes of the second module's unmatched instructions, and the score of a candidate."""

    def __init__(self, m: MatchState) -> None:
        self.m = m
        b = m.b
        self.by_name = _Index(m.mb)
        self.by_opcode_name = _Index(m.mb)
        self.by_opcode_scope = _Index(m.mb)
        for y in range(len(b.insts)):
            if m.mb[y] == -1:
                name = m.op_name_b(y)
                if name:
                    self.by_opcode_name.add((b.insts[y].opcode, name), y)
                    self.by_name.add(name, y)
                    if "/" in name:
                        self.by_opcode_scope.add((b.insts[y].opcode, name.rsplit("/", 1)[0]), y)

    def score(self, x: int, y: int) -> tuple[float, float]:  # noqa: C901 - the matcher's hot loop, kept inline
        """(total, structural) evidence that ``x`` (first module) and ``y`` are the same op."""
        m = self.m
        a, b, ma = m.a, m.b, m.ma
        s = 0.0
        inb = b.in_neighbours(y)
        members = None
        for i, o in enumerate(a.in_neighbours(x)):
            c = ma[o]
            if c >= 0:
                if i < len(inb) and inb[i] == c:
                    s += 2.0
                else:
                    if members is None:
                        members = b.operand_set(y)
                    if c in members:
                        s += 1.0
        outb = b.out_neighbours(y, _LIMIT * 4)
        if outb:
            outs = set(outb)
            for u in a.out_neighbours(x, _LIMIT):
                c = ma[u]
                if c >= 0 and c in outs:
                    s += 1.5
        struct = s
        name, other = m.op_name_a(x), m.op_name_b(y)
        if name and name == other:
            s += 2.0
        elif name and other and "/" in name and name.rsplit("/", 1)[0] == other.rsplit("/", 1)[0]:
            s += 1.0  # the same scope (layer, block): gradient_tape/Gelu/mul_1 and …/mul_2
        ia, ib = a.insts[x], b.insts[y]
        if ia.attributes.get("metadata") and ib.attributes.get("metadata"):
            mx, my = ia.metadata, ib.metadata
            if mx.source_line and mx.source_line == my.source_line and mx.source_file == my.source_file:
                s += 1.0
        if ia.shape == ib.shape:
            s += 1.0
        elif ia.shape.to_text(layout=False) == ib.shape.to_text(layout=False):
            s += 0.5
        if a.local[x] == b.local[y]:
            s += 1.0
        if m.ca[a.comp_of[x]] == b.comp_of[y]:
            s += 1.0
        return s, struct

    def candidates(self, x: int, same_opcode: bool) -> list[int]:
        """Unmatched instructions of the second module that ``x`` might be (capped)."""
        m = self.m
        a, b, ma, mb = m.a, m.b, m.ma, m.mb
        opcode = a.insts[x].opcode
        out: dict[int, None] = {}

        def consider(y: int) -> None:
            if mb[y] == -1 and (not same_opcode or b.insts[y].opcode == opcode) and b.insts[y].opcode != "parameter":
                out[y] = None

        full = _MAX_CANDIDATES * 2  # only the first this many are kept: stop collecting there
        for o in a.in_neighbours(x):
            if len(out) >= full:
                break
            c = ma[o]
            if c >= 0:
                for u in b.out_neighbours(c, _LIMIT, mb):
                    consider(u)
        for u in a.out_neighbours(x, _LIMIT):
            if len(out) >= full:
                break
            c = ma[u]
            if c >= 0:
                for o in _operands_near(a, b, u, c, x):
                    consider(o)
        if len(out) < full:
            for y in self._named_like(x, opcode, same_opcode):
                consider(y)
        if len(out) > full:
            return list(out)[:full]
        return list(out)

    def _named_like(self, x: int, opcode: str, same_opcode: bool) -> list[int]:
        """Unmatched instructions with ``x``'s op name (and opcode), then, for the same opcode,
        those in the same scope (the same op renamed: Erf → Erfc)."""
        name = self.m.op_name_a(x)
        if not name:
            return []
        if not same_opcode:
            return self.by_name.unmatched(name)
        found = self.by_opcode_name.unmatched((opcode, name))
        if "/" in name:
            found = found + self.by_opcode_scope.unmatched((opcode, name.rsplit("/", 1)[0]))
        return found


def _operands_near(a: Side, b: Side, u: int, c: int, x: int) -> Sequence[int]:
    """Operands of ``c`` (the counterpart of ``x``'s user ``u``) that ``x`` might be: all of
    them when there are few; of a wide one (a ROOT tuple of 40,000), those at ``x``'s positions
    in ``u`` and up to ``_WINDOW`` either side (an operand or two inserted before it shifts
    it), nearest first — looking at every operand of a wide user for each of its operands was
    the diff's one quadratic loop."""
    ops = b.in_neighbours(c)
    if len(ops) <= _LIMIT:
        return ops
    out: dict[int, None] = {}
    for p in a.operand_positions(u, x)[:4] or [0]:
        if p < len(ops):
            out[ops[p]] = None
        for d in range(1, _WINDOW + 1):
            if p + d < len(ops):
                out[ops[p + d]] = None
            if 0 <= p - d < len(ops):
                out[ops[p - d]] = None
    return list(out)
