"""``hloviz diff --by scope``: what changed in each layer between two compilations.

Each side's kernels are filed in the layers whose work they run, by the rule every view follows
(:meth:`hloviz.analysis.scopes.ScopeTree.layers_of`). For every scope on either side (by path,
so ``resblock_1/stem_act_1`` before and after is one row) the row gives:

* ``ops`` before / after — the framework ops (distinct ``op_name``) whose instructions do work
  in the scope or below: ``Relu`` is 1 op, GELU's ``Gelu/mul``, ``Gelu/Erf``… are several;
* the kernels that run its work, and of them those **added** (only after), **removed** (only
  before), **changed** and **unchanged** (matched by the diff; listed where either side's
  kernel runs work of the scope);
* ``flops`` and ``bytes`` before / after, as ``stats --by scope`` counts them
  (:mod:`hloviz.analysis.scope_stats`), so the two sides' rows read like two ``stats`` tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...opcodes import SCOPE_NEUTRAL
from .model import ModuleDiff, Status

if TYPE_CHECKING:
    from ...ir import HloModule
    from ..scopes import Scope, ScopeTree

__all__ = ["ScopeDiffRow", "scope_diff"]


@dataclass(frozen=True)
class ScopeDiffRow:
    """One scope's change (see the module docstring). ``depth`` counts from the model (1: its
    top-level scopes); ``changed`` holds ``(before, after)`` kernel names."""

    scope: str
    label: str
    depth: int
    ops_before: int
    ops_after: int
    kernels_before: int
    kernels_after: int
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[tuple[str, str], ...]
    unchanged: int
    flops_before: int
    flops_after: int
    bytes_before: int
    bytes_after: int
    #: The path in the names users know (Keras layer names: ``resblock/stem_act``).
    display: str = ""

    @property
    def differs(self) -> bool:
        """Did anything of this scope change?"""
        return bool(self.added or self.removed or self.changed) or self.ops_before != self.ops_after \
            or self.flops_before != self.flops_after or self.bytes_before != self.bytes_after

    def to_dict(self) -> dict[str, Any]:
        return {"scope": self.scope, "label": self.label, "path": self.display or self.scope, "depth": self.depth,
                "ops": {"before": self.ops_before, "after": self.ops_after},
                "kernels": {"before": self.kernels_before, "after": self.kernels_after,
                            "added": list(self.added), "removed": list(self.removed),
                            "changed": [{"before": a, "after": b} for a, b in self.changed],
                            "unchanged": self.unchanged},
                "flops": {"before": self.flops_before, "after": self.flops_after,
                          "delta": self.flops_after - self.flops_before},
                "bytes": {"before": self.bytes_before, "after": self.bytes_after,
                          "delta": self.bytes_after - self.bytes_before}}


def scope_diff(diff: ModuleDiff, before: HloModule, after: HloModule, *, depth: int | None = None,
               trees: tuple[ScopeTree, ScopeTree] | None = None) -> list[ScopeDiffRow]:
    """One row per scope of either module, down to ``depth`` counted from the model (every
    level when None), in the after side's order (scopes only before follow); scopes with neither
    ops nor kernels on either side (parameters only) are left out. ``trees``: the two modules'
    post-optimization scope trees, if already built."""
    from ..scope_stats import scope_rows
    from ..scopes import build_scope_tree

    ta, tb = trees if trees is not None else (build_scope_tree(before, stage="post"),
                                              build_scope_tree(after, stage="post"))
    model = max(ta.model_depth, tb.model_depth)
    limit = None if depth is None else depth + model
    numbers = [{r.scope: r for r in scope_rows(None, t)} for t in (ta, tb)]
    ops = [_ops(t) for t in (ta, tb)]
    fates = _fates(diff, ta, tb)
    paths = _paths(ta, tb, limit)
    rows = []
    for path in paths:
        sa, sb = ta.get(path), tb.get(path)
        s = sb or sa
        assert s is not None
        na, nb = numbers[0].get(path), numbers[1].get(path)
        fate = fates.get(path, _Fate())
        rows.append(ScopeDiffRow(
            scope=path, label=s.display_path.rsplit("/", 1)[-1] if s.kind == "scope" else s.label,
            depth=max(s.depth - model, 0) if s.kind == "scope" else s.depth,
            ops_before=ops[0].get(path, 0), ops_after=ops[1].get(path, 0),
            kernels_before=len(sa.kernels) if sa is not None else 0,
            kernels_after=len(sb.kernels) if sb is not None else 0,
            added=tuple(fate.added), removed=tuple(fate.removed), changed=tuple(fate.changed),
            unchanged=len(fate.unchanged),
            flops_before=na.flops if na else 0, flops_after=nb.flops if nb else 0,
            bytes_before=na.bytes if na else 0, bytes_after=nb.bytes if nb else 0,
            display=s.display_path if s.kind == "scope" else s.label))
    return [r for r in rows if r.kernels_before or r.kernels_after or r.ops_before or r.ops_after]


class _Fate:
    """The kernel diffs touching one scope, by status."""

    def __init__(self) -> None:
        self.added: dict[str, None] = {}
        self.removed: dict[str, None] = {}
        self.changed: dict[tuple[str, str], None] = {}
        self.unchanged: dict[tuple[str, str], None] = {}


def _fates(diff: ModuleDiff, ta: ScopeTree, tb: ScopeTree) -> dict[str, _Fate]:
    out: dict[str, _Fate] = {}
    for k in diff.summary.kernel_diffs:
        paths: dict[str, None] = {}
        for tree, inst in ((ta, k.before), (tb, k.after)):
            if inst is not None:
                for s in tree.layers_of(inst):
                    for a in _with_ancestors(s):
                        paths.setdefault(a.path, None)
        for p in paths:
            fate = out.setdefault(p, _Fate())
            if k.status is Status.ADDED and k.after is not None:
                fate.added[k.after.name] = None
            elif k.status is Status.REMOVED and k.before is not None:
                fate.removed[k.before.name] = None
            elif k.before is not None and k.after is not None:
                slot = fate.changed if k.status is Status.CHANGED else fate.unchanged
                slot[(k.before.name, k.after.name)] = None
    return out


def _with_ancestors(s: Scope) -> list[Scope]:
    return [s, *(a for a in s.ancestors() if a.kind != "root")] if s.kind != "root" else []


def _ops(tree: ScopeTree) -> dict[str, int]:
    """Scope path → how many distinct op names do work in it or below."""
    names: dict[str, set[str]] = {}
    for inst, s in tree._of.items():
        op = inst.metadata.op_name
        if not op or inst.opcode in SCOPE_NEUTRAL or inst.opcode == "fusion":
            continue
        for a in _with_ancestors(s):
            names.setdefault(a.path, set()).add(op)
    return {p: len(v) for p, v in names.items()}


def _paths(ta: ScopeTree, tb: ScopeTree, limit: int | None) -> list[str]:
    """Every scope path of either tree (the root left out) down to ``limit``: the after side's
    in its order, then scopes only before, each after its parent."""
    out: dict[str, None] = {}
    for tree in (tb, ta):
        for s in tree.walk():
            if s.kind != "root" and (limit is None or s.depth <= limit):
                out.setdefault(s.path, None)
    order = list(out)
    only_before = [p for p in order if tb.get(p) is None]
    if not only_before:
        return order
    result = [p for p in order if tb.get(p) is not None]
    for p in only_before:
        parent = p.rsplit("/", 1)[0] if "/" in p else ""
        at = max((i for i, q in enumerate(result) if q == parent or q.startswith(parent + "/")), default=len(result) - 1) \
            if parent else len(result) - 1
        result.insert(at + 1, p)
    return result
