"""What each scope holds, itself and below: its phases counted and its kernels attributed.

In: a scope tree with every instruction filed (and, for a post-optimization module, its kernels).
Out: the same tree with each scope's ``phases`` (instructions by phase, its own and its
descendants'), ``kernels`` and ``kernels_by_phase`` (the kernels running its work or its
descendants', by :meth:`ScopeTree.layers_of <hloviz.analysis.scopes.tree.ScopeTree.layers_of>`).
"""

from __future__ import annotations

from collections import Counter

from ...ir import Instruction
from ..kernels import KernelReport
from ..opnames import PHASES
from .scope import Scope
from .tree import ScopeTree

__all__ = ["attribute_kernels", "count_phases"]


def count_phases(root: Scope, phase_of: dict[Instruction, str]) -> None:
    """Each scope's ``phases``: its own instructions' and its descendants', children first
    (an explicit order, no recursion: a scope tree may be as deep as op names nest)."""
    below: dict[int, Counter] = {}
    for s in reversed(list(root.walk())):  # walk() lists parents before their children
        c: Counter = Counter(map(phase_of.get, s.instructions))
        unset = c.pop(None, 0)
        if unset:  # an instruction without a phase is forward
            c["forward"] += unset
        for ch in s.children:
            c.update(below.pop(id(ch)))
        s.phases = {p: c[p] for p in PHASES if c.get(p)}
        below[id(s)] = c


def attribute_kernels(tree: ScopeTree, report: KernelReport) -> None:
    """Each kernel to the scopes :meth:`ScopeTree.layers_of` gives and to their ancestors."""
    per_scope: dict[int, dict[str, None]] = {}
    by_phase: dict[int, dict[str, dict[str, None]]] = {}
    module = tree.module
    for k in report.kernels:
        comp = module.get_computation(k.computation)
        inst = comp.get(k.name) if comp is not None else None
        if inst is None:
            continue
        found = tree.layers_with_phases(inst)
        tree.set_kernel_scopes(k.name, tuple(s for s, _p in found))
        for s, phases in found:
            cur: Scope | None = s
            while cur is not None:
                per_scope.setdefault(id(cur), {})[k.name] = None
                slot = by_phase.setdefault(id(cur), {})
                for p in phases:
                    slot.setdefault(p, {})[k.name] = None
                cur = cur.parent
    for s in tree.walk():
        s.kernels = tuple(per_scope.get(id(s), ()))
        slot = by_phase.get(id(s), {})
        s.kernels_by_phase = {p: tuple(slot[p]) for p in PHASES if p in slot}
