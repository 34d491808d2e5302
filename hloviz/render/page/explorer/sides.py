"""What the explorer's data is built from: the drawn modules (:class:`Side`) and the pictures
the page can show (:class:`ViewSpec`).

In: a module, its kernels and HLO text per side; the views drawn at build time. Out: the
objects :mod:`.data`, :mod:`.build`, :mod:`.pairs` and :mod:`.steps` pass around, each side's
scope tree built once, the names the page shows for layers (:func:`plain_name`) and which
closed boxes open in place (:func:`opens_in_place`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ....ir import HloModule, Instruction

if TYPE_CHECKING:
    from ....analysis.kernels import KernelReport
    from ....analysis.scopes import ScopeTree
    from ...tree.tree import TreeNode
    from ...views import View

__all__ = ["Side", "SourceLookup", "ViewSpec", "opens_in_place", "plain_name"]

#: JAX's wrapper of a traced function in a name: ``jit(train_step)``, ``pjit(f)``.
_FUNCTION = re.compile(r"\bp?jit\(([^()/]*)\)")


def plain_name(text: str) -> str:
    """``text`` (a layer's path, a picture's title) with JAX's ``jit(f)`` wrappers unwrapped to
    the function's name: the explorer names layers as ``stats --by scope`` does, below the
    traced function (:attr:`~hloviz.analysis.scopes.Scope.display_path`), and the function's own
    scope by its name (``train_step``, not ``jit(train_step)``)."""
    return _FUNCTION.sub(r"\1", text) if "jit(" in text else text


#: An op name → what is known of the user's source line behind it (None: nothing); see
#: :func:`hloviz.analysis.export.source_lines`.
SourceLookup = Callable[[str], "dict | None"]


@dataclass
class Side:
    """One drawn module: ``key`` (``pre``/``post``, or ``before``/``after`` in a diff), a label
    for people, the module, its kernels, and the HLO text it was read from (for each
    instruction's own line; printed from the IR when absent)."""

    key: str
    label: str
    module: HloModule
    kernels: KernelReport | None = None
    text: str | None = None
    _tree: ScopeTree | None = field(default=None, repr=False)
    _callers: dict | None = field(default=None, repr=False)
    _by_name: dict[str, Instruction] | None = field(default=None, repr=False)

    def instruction(self, name: str) -> Instruction | None:
        """The module's instruction named ``name`` (the names indexed once)."""
        if self._by_name is None:
            self._by_name = {i.name: i for i in self.module.instructions()}
        return self._by_name.get(name)

    def callers(self) -> dict:
        """Computation name → the instructions calling it (computed once)."""
        if self._callers is None:
            self._callers = self.module.callers()
        return self._callers

    def scope_tree(self) -> ScopeTree:
        """The module's :class:`~hloviz.analysis.scopes.ScopeTree` (built once)."""
        if self._tree is None:
            from ....analysis.scopes import build_scope_tree

            # a module without kernels needs lookups only, not the program's order: the tree its
            # pictures built (render/reuse.py keeps it while the page is drawn) serves
            self._tree = build_scope_tree(self.module, stage="post" if self.kernels is not None else "pre",
                                          kernel_report=self.kernels, ordered=self.kernels is not None)
        return self._tree


@dataclass
class ViewSpec:
    """One picture the page can show: its SVG (None for the picture already in the page), the
    drawn columns (side index, :class:`View`), a title for the breadcrumb, and the view it
    expands (its parent) with the instruction or scope it opens."""

    key: str
    title: str
    columns: list[tuple[int, View]]
    svg: str | None = None
    parent: str | None = None
    opens: str | None = None  # "i:<global id>" or "s:<scope path>"
    #: a block opened in both columns: what the other column opened with it, or why nothing
    #: (:func:`hloviz.render.page.explorer.pairs.counterpart`)
    pair: dict | None = None


def opens_in_place(node: TreeNode, side: Side) -> bool:
    """Whether the explorer opens the closed tree node ``node`` of a picture of ``side`` in place
    (the same picture with it drawn open): a block found by structure, a ``×N`` repeat, a group
    of layers sharing a name prefix, and a scope the model's scope tree does not have (a
    training step's ``(forward)``); a layer of the model's own opens as a picture of its own."""
    if node.kind in ("block", "repeat", "group"):
        return True
    return node.kind == "scope" and side.scope_tree().get(node.path) is None
