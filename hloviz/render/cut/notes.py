"""What a picture's notes say its cut closed: scopes, blocks, repeats, fusions and bodies drawn
as single nodes, and why (the budget, or ``--depth``).

In: the graph of units, the :class:`~.cut.Cut` applied to it and the user's choices. Out: lines
appended to the picture's notes, and the levels it closed (``scopes``, ``blocks``, ``repeats``,
``fusions``, ``bodies``) that :attr:`hloviz.render.views.View.levels` reports.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from ...opcodes import BODY_CALLERS
from ..tree.model import ViewGraph
from .cut import Cut

if TYPE_CHECKING:
    from ..views import ViewOptions

__all__ = ["note_cut"]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def note_cut(g: ViewGraph, cut: Cut, options: ViewOptions, notes: list[str], levels: list[str]) -> None:
    """Say what the picture closed: which parts of the tree are single nodes, and why."""
    closed = Counter(n.kind for n in cut.nodes)
    why = f"(--depth {options.depth})" if options.depth is not None else f"to stay within {options.budget} nodes"
    parts = []
    if closed["scope"] or closed["group"]:
        levels.append("scopes")
        parts.append(f"{_plural(closed['scope'] + closed['group'], 'scope')} (op_name)")
    if closed["block"]:
        levels.append("blocks")
        parts.append(f"{_plural(closed['block'], 'block')} found by structure")
    if closed["repeat"]:
        levels.append("repeats")
        copies = sum(len(n.children) for n in cut.nodes if n.kind == "repeat")
        parts.append(f"{_plural(closed['repeat'], 'repeat')} of identical blocks ({copies} copies in all)")
    if parts:
        tail = "; --scope PATH draws a scope open" if closed["scope"] or closed["group"] else ""
        notes.append(f"{', '.join(parts)} closed into single nodes {why}{tail}")
    fusions = closed["fusion"]
    if not fusions and g.closed_fusions:
        fusions = sum(1 for i in g.computations[0].instructions if i.opcode == "fusion")
    if fusions:
        notes.append(f"{_plural(fusions, 'fusion')} drawn as {'a single node' if fusions == 1 else 'single nodes'}")
        levels.append("fusions")
    bodies = closed["body"]
    if not bodies and g.closed_fusions:
        bodies = sum(len(i.called_computations) for i in g.computations[0].instructions if i.opcode in BODY_CALLERS)
    if bodies:
        notes.append(f"{bodies} while/conditional/call bod{'ies' if bodies != 1 else 'y'} folded into their "
                     "callers' nodes")
        levels.append("bodies")
