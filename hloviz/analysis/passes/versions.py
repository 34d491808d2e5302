"""Which of XLA's passes differ between two releases for the same function
(``hloviz versions --passes``).

Snapshot indices differ between releases, so passes are compared by name (``PIPELINE/PASS``).
With ``--xla_dump_hlo_pass_re=.*`` XLA writes a snapshot for a pipeline's start and for each pass
that *changed* the module, so what two histories can tell apart is: a pipeline that runs in one
release only (its start is dumped either way), a pass that changes the module in one release only
(new, gone, or now a no-op), and a pass that changes it in both but does different work (the
fusions it made, the constants it wrote, the ops it removed, instructions added and removed).
A pass that runs without changing the module leaves no snapshot in either release, so "gone"
means "no longer changes this function", which the report says.

In: two :class:`~hloviz.analysis.passes.history.PassHistory` of one function. Out: a
:class:`PassVersionDiff` (:func:`compare_histories`), one :class:`PassEffect` per pass that differs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .steps import PIPELINE_START, PassHistory, PassStep

__all__ = ["PassEffect", "PassVersionDiff", "compare_histories"]


def _key(step: PassStep) -> str:
    return step.label


@dataclass(frozen=True)
class PassEffect:
    """What one pass did to the module in one release, summed over its snapshots."""

    snapshots: int = 0
    added: int = 0
    removed: int = 0
    changed: int = 0
    fusions_made: int = 0
    constants_written: int = 0
    ops_removed: int = 0

    def to_dict(self) -> dict:
        return {"snapshots": self.snapshots, "instructions_added": self.added, "instructions_removed": self.removed,
                "instructions_changed": self.changed, "fusions_made": self.fusions_made,
                "constants_written": self.constants_written, "ops_eliminated": self.ops_removed}

    def text(self) -> str:
        parts = [f"{self.snapshots}×"]
        if self.fusions_made:
            parts.append(f"{self.fusions_made} fusions made")
        if self.constants_written:
            parts.append(f"{self.constants_written} constants written")
        if self.ops_removed:
            parts.append(f"{self.ops_removed} ops gone")
        parts.append(f"+{self.added} -{self.removed} ~{self.changed}")
        return ", ".join(parts)


def effects(history: PassHistory) -> dict[str, PassEffect]:
    """Pass name → its summed effect, for the passes that changed the module."""
    sums: dict[str, Counter[str]] = {}
    for s in history.steps:
        if not s.changed or s.changes is None:
            continue
        c = sums.setdefault(_key(s.step), Counter())
        c["snapshots"] += 1
        c["added"] += len(s.changes.added)
        c["removed"] += len(s.changes.removed)
        c["changed"] += len(s.changes.changed)
        c["fusions_made"] += len(s.changes.fusions_created)
        c["constants_written"] += len(s.changes.constants_new)
        c["ops_removed"] += len(s.changes.ops_eliminated)
    return {k: PassEffect(**v) for k, v in sums.items()}


def pipelines(history: PassHistory) -> list[str]:
    """The pipelines that ran, in the order they first started."""
    seen: dict[str, None] = {}
    for s in history.steps:
        if s.step.pipeline is not None and (s.step.pass_name == PIPELINE_START or s.changed):
            seen.setdefault(s.step.pipeline, None)
    return list(seen)


@dataclass(frozen=True)
class PassVersionDiff:
    """The passes that differ from one release (``before``) to the next (``after``)."""

    before: str
    after: str
    pipelines_added: tuple[str, ...]
    pipelines_removed: tuple[str, ...]
    #: Passes that change the module only in ``after`` (new, or no longer a no-op here).
    now_changing: tuple[tuple[str, PassEffect], ...]
    #: Passes that change the module only in ``before`` (gone, or a no-op for this function now).
    no_longer_changing: tuple[tuple[str, PassEffect], ...]
    #: Passes that change it in both, with different effects.
    different: tuple[tuple[str, PassEffect, PassEffect], ...]
    same: int

    def to_dict(self) -> dict:
        return {"before": self.before, "after": self.after, "pipelines_added": list(self.pipelines_added),
                "pipelines_removed": list(self.pipelines_removed),
                "now_changing": [{"pass": k, **e.to_dict()} for k, e in self.now_changing],
                "no_longer_changing": [{"pass": k, **e.to_dict()} for k, e in self.no_longer_changing],
                "different": [{"pass": k, "before": a.to_dict(), "after": b.to_dict()} for k, a, b in self.different],
                "same": self.same}

    def to_text(self) -> str:
        lines = [f"XLA's passes, {self.before} → {self.after}:"]
        if self.pipelines_added:
            lines.append(f"  pipelines that run only in {self.after}: {', '.join(self.pipelines_added)}")
        if self.pipelines_removed:
            lines.append(f"  pipelines that run only in {self.before}: {', '.join(self.pipelines_removed)}")
        for k, e in self.now_changing:
            lines.append(f"  + {k}: changes the module only in {self.after} ({e.text()})")
        for k, e in self.no_longer_changing:
            lines.append(f"  - {k}: changes the module only in {self.before} ({e.text()}); in {self.after} it is "
                         "gone or changes nothing")
        for k, a, b in self.different:
            lines.append(f"  ~ {k}: {a.text()}  →  {b.text()}")
        lines.append(f"  {self.same} pass(es) did the same work in both")
        return "\n".join(lines) + "\n"


def compare_histories(before: tuple[str, PassHistory], after: tuple[str, PassHistory]) -> PassVersionDiff:
    """The :class:`PassVersionDiff` of two labelled histories of the same function."""
    (la, ha), (lb, hb) = before, after
    ea, eb = effects(ha), effects(hb)
    pa, pb = pipelines(ha), pipelines(hb)
    different = tuple((k, ea[k], eb[k]) for k in ea if k in eb and ea[k] != eb[k])
    return PassVersionDiff(
        la, lb,
        pipelines_added=tuple(p for p in pb if p not in pa),
        pipelines_removed=tuple(p for p in pa if p not in pb),
        now_changing=tuple((k, e) for k, e in eb.items() if k not in ea),
        no_longer_changing=tuple((k, e) for k, e in ea.items() if k not in eb),
        different=different,
        same=sum(1 for k in ea if k in eb and ea[k] == eb[k]))
