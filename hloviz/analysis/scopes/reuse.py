"""The entry point: a module in, its :class:`~hloviz.analysis.scopes.tree.ScopeTree` out.

:func:`build_scope_tree` hands the work to :func:`hloviz.analysis.scopes.build.build`, with the
cycle collector paused while hundreds of thousands of scope objects are made, and, inside a
:func:`scope_trees_reused` block, hands every later caller the tree already built for the same
module. It sits apart from :mod:`.tree` so that the tree model imports nothing that builds it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from ...ir import HloModule, Instruction
from ..kernels import KernelReport
from .tree import ScopeTree

__all__ = ["build_scope_tree", "scope_trees_reused"]


def build_scope_tree(module: HloModule, *, stage: str | None = None,
                     kernel_report: KernelReport | None = None,
                     parameter_names: Mapping[Instruction, str] | None = None,
                     order_like: ScopeTree | None = None, layers: Mapping[str, str] | None = None,
                     ordered: bool = True) -> ScopeTree:
    """The :class:`ScopeTree` of ``module``.

    ``stage`` is ``"pre"`` or ``"post"`` (default: ``post`` for a scheduled or fused module).
    Kernels are attributed to scopes for ``post`` only (pass ``kernel_report`` if already
    computed, else it is computed here). ``parameter_names`` (entry parameter → the name the
    user knows, :func:`hloviz.analysis.provenance.parameter_names`) puts a layer's weights in the
    layer: a parameter named ``model/dense/kernel`` (Keras) or ``params['Dense_0']['kernel']``
    (a JAX pytree path) goes to the one scope that name designates, if exactly one does.
    ``order_like``: another tree (the pre-optimization one) whose order of scopes this tree
    follows, so that the two sides of a comparison list layers alike; by default scopes come in
    the order the module runs them. ``layers`` (a TF capture's ``info["layer_scopes"]``: scope
    path → Keras layer path) labels scopes by their Keras layers exactly, where the ``_N``
    suffixes TensorFlow adds would otherwise be guessed away.

    ``ordered=False`` leaves scopes and their instructions in the order they were filed (a
    scope's named instructions in text order, then those placed by their caller or data flow)
    instead of the program's order: for a caller that only looks instructions and scopes up
    and orders what it draws itself (the picture: a third of the 300k-instruction module's tree).
    """
    from ...collector import collector_paused
    from .build import build  # on first use: ``import hloviz`` does not load the builder

    plain = kernel_report is None and parameter_names is None and order_like is None and layers is None
    key = (id(module), stage, ordered)
    if plain and _reused is not None:
        with _reuse_lock:
            hit = _reused.get(key)
        if hit is not None and hit[0] is module:
            return hit[1]
    with collector_paused():  # a large module's tree is hundreds of thousands of live objects
        tree = build(module, stage=stage, kernel_report=kernel_report, parameter_names=parameter_names,
                     order_like=order_like, layers=layers, ordered=ordered)
    if plain and _reused is not None:
        with _reuse_lock:
            _reused[key] = (module, tree)
    return tree


#: While :func:`scope_trees_reused` is active: (id(module), stage, ordered) → (module, tree).
_reused: dict[tuple[int, str | None, bool], tuple[HloModule, ScopeTree]] | None = None
_reuse_depth = 0
_reuse_lock = threading.Lock()


@contextmanager
def scope_trees_reused() -> Iterator[None]:
    """Within this block, :func:`build_scope_tree` builds each module's tree once per
    ``stage`` and ``ordered`` (called without kernels, parameter names, order or layers) and
    hands the same tree to every later call.

    For a caller that draws one module many times over (the explorer: each layer, block and
    fusion picture walks the whole module, and every picture asked for the tree again — 185
    trees for DenseNet121's page) and changes no module meanwhile. Outside such a block
    nothing is kept, so a module edited between two calls is never answered from an old tree.
    Blocks nest, and threads drawing inside one share its trees (a tree is only read)."""
    global _reused, _reuse_depth
    with _reuse_lock:
        _reuse_depth += 1
        if _reused is None:
            _reused = {}
    try:
        yield
    finally:
        with _reuse_lock:
            _reuse_depth -= 1
            if _reuse_depth == 0:
                _reused = None

