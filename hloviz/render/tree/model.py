"""The working state between a module and its scene: places, units and their edges.

* A :class:`Place` is a drawn computation: top level, a fusion cluster or a body cluster.
* Each drawn instruction has a *kind*: its own node (``NODE``), written into its users' labels
  (``INLINE``), or elided plumbing whose value comes from elsewhere (``GTE``, ``FPARAM``,
  ``FUSION`` — the fusion is its cluster —, ``PLUMB``). :meth:`ViewGraph.resolve` follows
  elided instructions to the node that really produces a value.
* A :class:`Unit` is one future node: one instruction, a chain, or a closed node of the picture's
  tree (a fusion, a scope, a block). Closing merges units; :meth:`ViewGraph.find` follows merges.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Literal

from ...ir import Computation, HloModule, Instruction
from ..scene import Row


class Drawn(IntEnum):
    """How a drawn instruction appears (see the module docstring); an int, so comparisons stay fast."""

    NODE = 0  # a node of its own
    INLINE = 1  # written into its users' labels (a small constant)
    GTE = 2  # a get-tuple-element: its users' arrows come from the tuple's producer
    FPARAM = 3  # a fused computation's parameter: the value comes from the fusion's operand
    FUSION = 4  # the fusion instruction: drawn as its cluster
    PLUMB = 5  # a tuple only get-tuple-elements read: plumbing, not a node


NODE, INLINE, GTE, FPARAM, FUSION, PLUMB = Drawn  # the short names the render modules use
#: Kinds that are not nodes of their own.
ELIDED = frozenset({INLINE, GTE, FPARAM, FUSION, PLUMB})

#: What a :class:`Unit` stands for: one instruction, an elementwise chain, a closed fusion, or a
#: closed node of the picture's tree (a scope, block or repeat: :mod:`hloviz.render.cut.apply`).
UnitKind = Literal["inst", "chain", "fusion", "scope"]


@dataclass(eq=False)
class Place:
    """Where a computation is drawn: ``parent`` None is top level; ``owner`` calls it."""

    key: str
    computation: Computation
    parent: Place | None
    owner: Instruction | None
    role: str  # "" top level, "fusion", "body", "condition", "branch 0", "calls" …
    order: int = 0


class Unit:
    """One node to be: ``members`` (representative first), in place ``scope`` at ``pos``.

    ``kind`` is ``inst``, ``chain``, ``fusion`` or ``scope``. ``inline`` lists
    ``(user, operand index, inlined instruction)`` for constants written into the label.
    (A slotted class, not a dataclass: big modules make hundreds of thousands of these.)
    """

    __slots__ = ("index", "kind", "scope", "pos", "members", "alive", "root", "chain", "rows", "extra_rows",
                 "inline", "hidden_operands", "hidden_users", "caption", "unread")

    def __init__(self, index: int, kind: UnitKind, scope: str | None, pos: tuple[int, int],
                 members: list[Instruction]) -> None:
        self.index = index
        self.kind = kind
        self.scope = scope
        self.pos = pos
        self.members = members
        self.alive = True
        self.root = False
        self.chain: Any = None
        self.rows: list[Row] | None = None
        self.extra_rows: list[Row] = []
        self.inline: list[tuple[Instruction, int, Instruction]] = []
        self.hidden_operands = 0
        self.hidden_users = 0
        #: the scope this unit alone stands for ("block_1_pad"), shown above its own label
        self.caption: str | None = None
        #: values nothing reads (the ``(unused)`` scope closed): in no kernel, whatever their op's name
        self.unread = False

    def copy(self) -> Unit:
        """The same unit with lists of its own (a cut merges members into it, adds rows)."""
        new = Unit.__new__(Unit)  # every slot spelled out: the explorer copies 200k units a page
        new.index, new.kind, new.scope, new.pos = self.index, self.kind, self.scope, self.pos
        new.members, new.alive, new.root, new.chain = self.members.copy(), self.alive, self.root, self.chain
        new.rows = self.rows.copy() if self.rows is not None else None
        new.extra_rows, new.inline = self.extra_rows.copy(), self.inline.copy()
        new.hidden_operands, new.hidden_users, new.caption = self.hidden_operands, self.hidden_users, self.caption
        new.unread = self.unread
        return new


class ViewGraph:
    """Everything :mod:`hloviz.render.views`, :mod:`hloviz.render.tree.layers`, :mod:`hloviz.render.cut.apply` and
    :mod:`hloviz.render.cut.assemble` share."""

    def __init__(self, module: HloModule, marks: Mapping[str, Any]) -> None:
        self.module = module
        self.marks = marks
        self.places: dict[str, Place] = {}
        self.place_by_key: dict[str, Place] = {}
        self.computations: list[Computation] = []
        self.kind: dict[int, Drawn] = {}
        self.users: dict[str, dict[Instruction, list[Instruction]]] = {}
        self.units: list[Unit] = []
        self.unit_of: dict[int, int] = {}
        #: (source unit, user unit, label, user instruction, operand index)
        self.edges: list[tuple[int, int, str, Instruction, int]] = []
        #: (caller unit, body unit, role, body place key)
        self.body_edges: list[tuple[int, int, str, str]] = []
        self.notes: list[str] = []
        self.levels: list[str] = []
        #: ids of the instructions ``--focus`` names (drawn with a red border)
        self.focus: set[int] = set()
        self.root_places: set[str] = set()
        self.collapsed_places: set[str] = set()
        #: the first look drew every fusion and body of a big module as one node
        self.closed_fusions = False
        #: open scopes drawn as clusters (:class:`hloviz.render.cut.apply.ScopeCluster`), and the cut drawn
        self.scope_clusters: list[Any] = []
        self.cut: Any = None
        #: entry parameter name → what the user calls it (a variable, an argument); op name → user's line
        self.param_names: dict[str, str] = {}
        #: id(instruction) → the phase it is drawn in where that is not the one its op name gives
        #: (a step counter drawn in its optimizer's scope: :mod:`hloviz.render.tree.bookkeeping`)
        self.phases: dict[int, str] = {}
        self.source_map: Mapping[str, Any] = {}
        #: per open scope, its children as (unit indices, is a cluster): stacked top-down
        self.stacking: list[list[tuple[list[int], bool, bool]]] = []
        #: the overview's phase of each instruction: when set, the picture is ranked in program
        #: order (:mod:`hloviz.render.cut.order`)
        self.program_order: Callable[[Instruction], str] | None = None
        self._redirect: dict[int, int] = {}
        self._positions: dict[int, int] = {}
        self._owners: list[int] | None = None  # owners(), until a unit is added or merged

    def copy(self) -> ViewGraph:
        """A graph drawn on apart from this one: every container and unit of its own, the module,
        marks, places and what was read of the module (its users, the text positions) shared.
        What :func:`hloviz.render.reuse.kept_graph` hands each picture of one module: a cut
        merges units, hides some, rewrites arrows."""
        new = ViewGraph.__new__(ViewGraph)
        shared = ("module", "marks", "source_map", "_positions")
        new.__dict__.update({k: v if k in shared or not isinstance(v, (list, dict, set)) else v.copy()
                             for k, v in self.__dict__.items()})
        new.units = [u.copy() for u in self.units]
        return new

    def add_place(self, place: Place) -> Place:
        place.order = len(self.computations)
        self.places[place.computation.name] = place
        self.place_by_key[place.key] = place
        self.computations.append(place.computation)
        return place

    def position(self, inst: Instruction) -> int:
        """Index of ``inst`` in its computation's text order (computed once per computation)."""
        pos = self._positions.get(id(inst))
        if pos is None and inst.parent is not None:
            for i, other in enumerate(inst.parent.instructions):
                self._positions[id(other)] = i
            pos = self._positions.get(id(inst))
        return pos or 0

    def place_of(self, inst: Instruction) -> Place | None:
        return self.places.get(inst.parent.name) if inst.parent is not None else None

    def new_unit(self, kind: UnitKind, place: Place | None, pos: int, members: list[Instruction]) -> Unit:
        if place is None:
            unit = Unit(len(self.units), kind, None, (0, pos), members)
        else:
            unit = Unit(len(self.units), kind, place.key if place.parent is not None else None, (place.order, pos),
                        members)
        self.units.append(unit)
        self._owners = None
        return unit

    def merge(self, units: list[Unit], into: Unit) -> None:
        """Units ``units`` are drawn as ``into`` from now on."""
        self._owners = None
        for u in units:
            if u is into:
                continue
            u.alive = False
            self._redirect[u.index] = into.index

    def find(self, index: int) -> int:
        """The unit that now draws unit ``index`` (after merges)."""
        redirect = self._redirect
        nxt = redirect.get(index)
        if nxt is None:  # most units were never merged: no path to compress
            return index
        top = redirect.get(nxt)
        if top is None:  # one step (a path compressed already): nothing to rewrite
            return nxt
        path = [index]
        index = nxt
        while index in redirect:
            path.append(index)
            index = redirect[index]
        for p in path:
            redirect[p] = index
        return index

    def shows_a_fold(self, unit: Unit) -> bool:
        """Whether ``unit`` is marked as what a fold made or took (a highlighted constant, an op
        folded away): what the picture is for, so a box of its own wherever it stands."""
        for m in unit.members:
            mark = self.marks.get(m.name)
            if mark is not None and (getattr(mark, "highlight", False) or "folded" in (getattr(mark, "note", None) or "")):
                return True
        return False

    def owners(self) -> list[int]:
        """:meth:`find` of every unit, by index: for a loop over all the arrows, which reads
        both ends of each (a list read, not two calls, per arrow). Made again only after a unit
        was added or merged (a picture reads it five times between merges); read it, do not
        change it."""
        owners = self._owners
        if owners is None or len(owners) != len(self.units):
            find = self.find
            owners = self._owners = [find(i) for i in range(len(self.units))]
        return owners

    def alive_count(self) -> int:
        return sum(1 for u in self.units if u.alive)

    def resolve(self, inst: Instruction) -> tuple[Instruction | None, str]:
        """The drawn instruction whose value ``inst`` is, and a ``[k]`` label for tuple parts.

        Returns ``(None, "")`` for inlined constants and for instructions outside the drawing.
        """
        label = ""
        kind = self.kind
        for _ in range(256):  # guards malformed modules; real chains are a few steps
            k = kind.get(id(inst))
            if k == NODE:
                return inst, label
            if k == FPARAM:
                nxt = self._param_source(inst)
            elif k == FUSION:
                nxt = _fused_root(inst)
            elif k == GTE:
                index = _tuple_index(inst)
                src = inst.operands[0]
                for _ in range(64):
                    sk = kind.get(id(src))
                    if sk == FUSION:
                        src = _fused_root(src)
                    elif sk == FPARAM:
                        src = self._param_source(src)
                    else:
                        break
                    if src is None:
                        break
                if src is not None and src.opcode == "tuple" and 0 <= index < len(src.operands):
                    nxt = src.operands[index]
                else:
                    label = f"[{index}]" + label
                    nxt = src
            else:
                return None, ""
            if nxt is None:
                return None, ""
            inst = nxt
        return None, ""

    def _param_source(self, param: Instruction) -> Instruction | None:
        place = self.place_of(param)
        owner = place.owner if place is not None else None
        n = param.parameter_number
        if owner is None or n is None or not 0 <= n < len(owner.operands):
            return None
        return owner.operands[n]


def _fused_root(fusion: Instruction) -> Instruction | None:
    called = fusion.calls_by_attribute.get("calls", fusion.called_computations)
    return called[0].root if called else None


def _tuple_index(inst: Instruction) -> int:
    raw = inst.attributes.get("index", "0").strip()
    return int(raw) if re.fullmatch(r"-?[0-9]+", raw) else -1


def leaf_edges(g: ViewGraph) -> list[tuple[str, str]]:
    """The arrows between live units as leaf key pairs (what blocks are found on)."""
    owner, units = g.owners(), g.units
    out = []
    for e in g.edges:  # (src, dst, label, instruction, operand index): the ends only
        s, d = owner[e[0]], owner[e[1]]
        if s != d and units[s].alive and units[d].alive:
            out.append((f"u{s}", f"u{d}"))
    return out


def leaf_labels(g: ViewGraph) -> tuple[dict[str, str], dict[str, str]]:
    """What each live unit is, for the structure hash of repeats: its opcode (a fusion also its
    kind, a chain its length); and its instruction's name (a block ending in it is named so)."""
    out, names = {}, {}
    for u in g.units:
        if u.alive:
            rep = u.members[0]
            text = rep.opcode
            if rep.opcode == "fusion":
                text += ":" + rep.attributes.get("kind", "")
            if u.kind == "chain":
                text += f"*{len(u.members)}"
            out[f"u{u.index}"] = text
            names[f"u{u.index}"] = rep.name
    return out, names
