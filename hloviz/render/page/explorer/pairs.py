"""Opening a block in both columns: what became of a block before optimization, and where a
block after optimization came from.

A user who opens ``mixed5`` in the column before optimization wants to see what it became after
optimization, and the other way round. Two blocks of the two columns are counterparts when

1. **by name**: the other column's tree has a node of the same key — the same route of scope,
   group, block and repeat names (a block is named after its exit layer, so ``b:s:mixed5_1`` is
   the block ending in Keras layer ``mixed5`` in both) — or, failing that, exactly one node whose
   key ends in the same step (the two modules' structures may nest the same block differently).
   A step naming a unit found by structure (``b:u1305``) names a drawn unit's number, which
   differs between the modules: never a match;
2. **by op name**, failing that: hloviz's pre→post mapping (:func:`hloviz.analysis.pre_post.mapping.pre_to_post`:
   each op of the traced function and the kernels holding its work) gives the kernels the
   block's ops went into, or the ops a block's kernels hold; the counterparts are the closed
   blocks of the other column's picture that hold them — at most :data:`MOST` of them.

Anything else is no counterpart, and the page says why (the block's work is drawn open in the
other column already, is spread over more blocks than :data:`MOST`, or left no kernel); it
never opens a block that merely sits nearby.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .sides import Side, opens_in_place

if TYPE_CHECKING:
    from ....analysis.pre_post.mapping import PrePostMapping
    from ...tree.tree import TreeNode
    from ...views import View

__all__ = ["MOST", "Counterpart", "Pairing", "counterpart"]

#: The most closed blocks of the other column one block's counterpart may be (more: its work
#: is spread too thinly for opening them to show "what became of it").
MOST = 3

#: A route step that names a drawn unit by its number (``u1305``, ``b:u1305``): not a name.
_UNIT = re.compile(r"(?:^|:)u\d+$")


@dataclass
class Pairing:
    """What links the two columns of a pre/post page: for each op (``metadata.op_name``) of the
    module before optimization, the kernels of the optimized module holding its work, and the
    reverse, from :class:`~hloviz.analysis.pre_post.mapping.PrePostMapping`; ``pre`` and ``post`` are
    the sides' keys."""

    kernels_of: dict[str, tuple[str, ...]] = field(default_factory=dict)
    ops_of: dict[str, list[str]] = field(default_factory=dict)
    pre: str = "pre"
    post: str = "post"

    @classmethod
    def of(cls, mapping: PrePostMapping | None, pre: str = "pre", post: str = "post") -> Pairing:
        out = cls(pre=pre, post=post)
        for m in mapping.ops if mapping is not None else ():
            if m.kernels:
                out.kernels_of[m.op_name] = m.kernels
                for k in m.kernels:
                    out.ops_of.setdefault(k, []).append(m.op_name)
        return out


@dataclass
class Counterpart:
    """The other column's side of opening a block: the tree keys to open there, in order
    (enclosing closed nodes first), how they were matched (``name``, ``ops``, or None: none), and
    a sentence for the page."""

    keys: tuple[str, ...]
    how: str | None
    note: str

    def to_json(self, side: str) -> dict:
        return {"side": side, "how": self.how, "note": self.note}


def _members(view: View) -> dict[str, list[str]]:
    """Scene node key → the instruction names it draws."""
    out: dict[str, list[str]] = {}
    for name, key in view.node_of.items():
        out.setdefault(key, []).append(name)
    return out


def _title(node: TreeNode) -> str:
    from ...cut.apply import scope_title

    return scope_title(node)


def counterpart(pairing: Pairing, sides: Sequence[Side], columns: Sequence[tuple[int, View]], c: int,
                key: str) -> Counterpart | None:
    """The counterpart, in the other of two ``columns`` ((side index, View)), of the closed node
    ``key`` of column ``c``'s cut; None where the page has no second column or no cut."""
    if len(columns) != 2:
        return None
    d = 1 - c
    (s_c, here), (s_d, there) = columns[c], columns[d]
    if here.cut is None or there.cut is None or key not in here.cut.tree.nodes:
        return None
    other = sides[s_d]
    node = here.cut.tree.nodes[key]
    name = _title(node)
    where = "after optimization" if other.key == pairing.post else "before optimization"
    same = _same_name(there, other, key)
    if same is not None:
        chain = [a.key for a in reversed(list(same.ancestors())) if a.parent is not None] + [same.key]
        if not any(k in there.cut.keys for k in chain):
            return Counterpart((), "name", f"{where}: {_title(same)}, the same block by name, is drawn open already")
        return Counterpart(tuple(chain), "name", f"{where}: opened {_title(same)}, the same block by name")
    return _by_ops(pairing, sides[s_c], other, here, there, key, name, where)


def _same_name(there: View, other: Side, key: str) -> TreeNode | None:
    """The node of ``there``'s tree named as ``key`` is: the same key, else the one node whose
    key ends in the same step (the block ending in the same layer, inside blocks the two
    modules' structures cut differently). A step naming a drawn unit (``b:u1305``) is no name,
    and a node the explorer cannot open in place there is no match: a copy of a ``×N`` repeat
    other than its first (opening the repeat shows the first copy only)."""
    assert there.cut is not None
    nodes = there.cut.tree.nodes
    last = key.rsplit("/", 1)[-1]
    if _UNIT.search(last):
        return None
    node = nodes.get(key)
    if node is None:
        ends = [n for k, n in nodes.items() if k.rsplit("/", 1)[-1] == last]
        node = ends[0] if len(ends) == 1 else None
    if node is None or not opens_in_place(node, other):
        return None
    child = node
    for a in node.ancestors():
        if a.kind == "repeat" and len(a.children) > 2 and a.children[0] is not child:
            return None
        child = a
    return node


def _by_ops(pairing: Pairing, side: Side, other: Side, here: View, there: View, key: str, name: str,
            where: str) -> Counterpart:
    """The counterpart by op name (the module docstring's rule 2)."""
    drawn = here.drawn_as.get(key)
    held = _members(here).get(drawn, []) if drawn is not None else []
    if side.key == pairing.pre:
        ops = {i.metadata.op_name for n in held if (i := side.instruction(n)) is not None and i.metadata.op_name}
        targets = {k for op in ops for k in pairing.kernels_of.get(op, ())}
        what = f"{len(targets)} kernel{'s' if len(targets) != 1 else ''} its ops went into"
    else:
        ops = {op for n in held for op in pairing.ops_of.get(n, ())}
        targets = {i.name for i in other.module.instructions() if i.metadata.op_name in ops}
        what = f"the {len(ops)} op{'s' if len(ops) != 1 else ''} its kernels came from"
    if not targets:
        return Counterpart((), None, f"{where}: no counterpart — no kernel holds the work of {name}'s ops "
                                     f"(folded, eliminated, or bookkeeping)" if side.key == pairing.pre else
                           f"{where}: no counterpart — no op of the traced function names {name}'s kernels")
    if there.cut is None:
        return Counterpart((), None, f"{where}: no counterpart drawn")
    closed = {there.drawn_as[n.key]: n for n in there.cut.nodes
              if n.key in there.drawn_as and opens_in_place(n, other)}
    found: dict[str, TreeNode] = {}
    loose = 0
    for box, names in _members(there).items():
        if not targets.intersection(names):
            continue
        if box in closed:
            found[closed[box].key] = closed[box]
        else:
            loose += 1
    if not found:
        return Counterpart((), None, f"{where}: no block to open — {what} are drawn in "
                                     f"{loose} box{'es' if loose != 1 else ''} of their own already")
    if len(found) > MOST:
        return Counterpart((), None, f"{where}: no single counterpart — {what} are spread over {len(found)} "
                                     f"blocks (more than {MOST}); none opened")
    nodes = sorted(found.values(), key=lambda n: n.order)
    names = ", ".join(_title(n) for n in nodes)
    also = f" (and {loose} box{'es' if loose != 1 else ''} drawn open already)" if loose else ""
    return Counterpart(tuple(n.key for n in nodes), "ops",
                       f"{where}: opened {names}, which hold{'s' if len(nodes) == 1 else ''} {what}{also}")

