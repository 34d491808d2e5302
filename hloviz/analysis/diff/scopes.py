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
  (:mod:`hloviz.analysis.scopes.stats`), so the two sides' rows read like two ``stats`` tables.
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
    level when None; paths from the model too, so two JAX functions' ``jit(…)`` do not keep their
    layers apart), in the after side's order (scopes only before follow); scopes with neither
    ops nor kernels on either side (parameters only) are left out. ``trees``: the two modules'
    post-optimization scope trees, if already built."""
    from ..scopes import build_scope_tree
    from ..scopes.stats import scope_rows

    ta, tb = trees if trees is not None else (build_scope_tree(before, stage="post"),
                                              build_scope_tree(after, stage="post"))
    sides = [_Side(ta), _Side(tb)]
    for side in sides:
        side.numbers = {side.key(t): r for r in scope_rows(None, side.tree) if (t := side.tree.get(r.scope))}
        side.ops = {side.key(t): n for path, n in _ops(side.tree).items() if (t := side.tree.get(path))}
    fates = _fates(diff, sides)
    rows = []
    for key in _keys(sides, depth):
        sa, sb = sides[0].scopes.get(key), sides[1].scopes.get(key)
        s, side = (sb, sides[1]) if sb is not None else (sa, sides[0])
        assert s is not None
        na, nb = sides[0].numbers.get(key), sides[1].numbers.get(key)
        fate = fates.get(key, _Fate())
        display = side.display(s)
        rows.append(ScopeDiffRow(
            scope=key, label=display.rsplit("/", 1)[-1], depth=side.depth(s),
            ops_before=sides[0].ops.get(key, 0), ops_after=sides[1].ops.get(key, 0),
            kernels_before=len(sa.kernels) if sa is not None else 0,
            kernels_after=len(sb.kernels) if sb is not None else 0,
            added=tuple(fate.added), removed=tuple(fate.removed), changed=tuple(fate.changed),
            unchanged=len(fate.unchanged),
            flops_before=na.flops if na else 0, flops_after=nb.flops if nb else 0,
            bytes_before=na.bytes if na else 0, bytes_after=nb.bytes if nb else 0,
            display=display))
    return [r for r in rows if r.kernels_before or r.kernels_after or r.ops_before or r.ops_after]


class _Side:
    """One module's scope tree keyed by paths counted from the model: JAX's ``jit(f)`` left out,
    so ``jit(forward)/Net/Dense_0`` and ``jit(train_step)/Net/Dense_0`` are one row."""

    def __init__(self, tree: ScopeTree) -> None:
        self.tree = tree
        self.strip = tree.model_depth
        self.numbers: dict[str, Any] = {}
        self.ops: dict[str, int] = {}
        self.scopes: dict[str, Scope] = {}
        for s in tree.walk():
            k = self.key(s)
            if k:
                self.scopes.setdefault(k, s)

    def key(self, s: Scope) -> str:
        """The scope's path from the model ("" for the root and the traced function itself)."""
        if s.kind == "root":
            return ""
        entry = self.tree.module.entry
        if s.kind == "unnamed" and entry is not None and s.name == f"({entry.name})":
            return "(entry)"  # the unnamed instructions of the entry, whatever XLA numbered it (main.20, main.21)
        if s.kind != "scope" or not self.strip:
            return s.path
        chain = [s, *(a for a in s.ancestors() if a.kind != "root")]
        chain.reverse()
        return "/".join(a.name for a in chain[self.strip:])

    def depth(self, s: Scope) -> int:
        return max(s.depth - self.strip, 0) if s.kind == "scope" else s.depth

    def display(self, s: Scope) -> str:
        if s.kind != "scope":
            return s.label
        # below JAX's traced function, the display path starts at the model already
        # (:attr:`Scope.display_path`); the function's own scope is named by its label
        return s.display_path


class _Fate:
    """The kernel diffs touching one scope, by status."""

    def __init__(self) -> None:
        self.added: dict[str, None] = {}
        self.removed: dict[str, None] = {}
        self.changed: dict[tuple[str, str], None] = {}
        self.unchanged: dict[tuple[str, str], None] = {}


def _fates(diff: ModuleDiff, sides: list[_Side]) -> dict[str, _Fate]:
    out: dict[str, _Fate] = {}
    for k in diff.summary.kernel_diffs:
        keys: dict[str, None] = {}
        for side, inst in ((sides[0], k.before), (sides[1], k.after)):
            if inst is not None:
                for s in side.tree.layers_of(inst):
                    for a in _with_ancestors(s):
                        key = side.key(a)
                        if key:
                            keys.setdefault(key, None)
        for key in keys:
            fate = out.setdefault(key, _Fate())
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
    for inst, s in tree.filed():
        op = inst.metadata.op_name
        if not op or inst.opcode in SCOPE_NEUTRAL or inst.opcode == "fusion":
            continue
        for a in _with_ancestors(s):
            names.setdefault(a.path, set()).add(op)
    return {p: len(v) for p, v in names.items()}


def _keys(sides: list[_Side], depth: int | None) -> list[str]:
    """Every scope of either side (by :meth:`_Side.key`) down to ``depth`` from the model: the
    after side's in its order, then scopes only before, each after its parent's rows."""
    before, after = sides
    out: dict[str, None] = {}
    for side in (after, before):
        for s in side.tree.walk():
            k = side.key(s)
            if k and (depth is None or side.depth(s) <= depth):
                out.setdefault(k, None)
    result = [k for k in out if k in after.scopes]
    for k in (k for k in out if k not in after.scopes):
        parent = k.rsplit("/", 1)[0] if "/" in k else ""
        spots = [i for i, q in enumerate(result) if parent and (q == parent or q.startswith(parent + "/"))]
        result.insert(spots[-1] + 1 if spots else len(result), k)
    return result
