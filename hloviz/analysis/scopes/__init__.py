"""Scopes: the model's own structure (layers, blocks, name scopes) read from op names.

In: an :class:`~hloviz.ir.HloModule` (pre- or post-optimization). Out: its
:class:`ScopeTree`, every instruction filed under a :class:`Scope`, kernels attributed to the
layers whose work they run, and ``stats --by scope``'s numbers per scope.

:func:`build_scope_tree` is the entry point (:mod:`.reuse`: built once per module inside a
:func:`scope_trees_reused` block). :mod:`.scope` is the model (``Scope``) and :mod:`.tree` the
queries over a module's tree (``ScopeTree``); :mod:`.build` files instructions under scopes
(:mod:`.step_phases` re-phases as the optimizer's what reads gradients under forward names), then
:mod:`.order` orders siblings as the program runs them, :mod:`.labels` gives scopes their Keras
layer names, :mod:`.weights` files parameters in their layers and :mod:`.totals` counts phases
and attributes kernels per scope. Reading a tree: :mod:`.find` (scopes by name), :mod:`.graph`
(the data flow between scopes) and :mod:`.stats` (``stats --by scope``'s numbers,
:func:`scope_rows`).
"""

from __future__ import annotations

from .reuse import build_scope_tree, scope_trees_reused
from .scope import TOP_LEVEL, Scope
from .tree import PHASES, ScopeTree

__all__ = ["PHASES", "TOP_LEVEL", "Scope", "ScopeTree", "build_scope_tree", "scope_trees_reused"]
