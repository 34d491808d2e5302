"""Diffing two HLO modules — the same function compiled by two TensorFlow (or XLA) versions.

:func:`diff_modules` pairs instructions structurally (names are not stable across versions;
see :mod:`.match` for the steps) and says of each one whether it is unchanged, changed (and
how), added or removed, with a :class:`DiffSummary` of what a reader wants first. Reports
(text, markdown, JSON) are in :mod:`.report`; the data of the diff picture in :mod:`.picture`.

Example::

    d = diff_modules(parse_file("old/post.hlo"), parse_file("new/post.hlo"))
    print(d.summary.kernels.before, d.summary.kernels.after)
    for x in d.by_status("changed"):
        print(x.before.name, "→", x.after.name, [str(c) for c in x.changes])
"""

from __future__ import annotations

import gc

from ...ir import HloModule
from .classify import computation_diffs, instruction_diffs
from .index import Side
from .match import Matcher
from .model import (
    Change,
    ChangeKind,
    ComputationDiff,
    DiffSummary,
    InstructionDiff,
    KernelCount,
    KernelDiff,
    ModuleDiff,
    OpcodeDelta,
    Status,
)
from .summary import kernel_instructions, summarize

__all__ = [
    "Change", "ChangeKind", "ComputationDiff", "DiffSummary", "InstructionDiff", "KernelCount", "KernelDiff", "ModuleDiff",
    "OpcodeDelta", "Status", "diff_modules", "entry_signature", "kernel_instructions",
]


def entry_signature(module: HloModule) -> str:
    """``(param shapes) -> result`` of the entry, without layouts: what makes modules comparable."""
    entry = module.entry
    if entry is None:
        return "()"
    params, result = entry.program_shape
    res = result.to_text(layout=False) if result is not None else "?"
    return "(" + ", ".join(p.to_text(layout=False) for p in params) + ") -> " + res


def diff_modules(a: HloModule, b: HloModule) -> ModuleDiff:
    """Match ``a`` (before) against ``b`` (after) and describe every difference.

    Modules with different entry signatures are still diffed; the result is then marked not
    ``comparable`` and carries a warning, since the two may not compute the same function.
    """
    warnings: list[str] = []
    sa, sb = entry_signature(a), entry_signature(b)
    comparable = sa == sb
    if not comparable:
        warnings.append(f"the entry signatures differ, so these may not be the same function: "
                        f"{sa} (before) vs {sb} (after); the diff matches what it can")
    # The diff allocates millions of small acyclic objects on big modules; pausing the cyclic
    # garbage collector meanwhile saves its repeated full scans (a third of the time at 300k).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        side_a, side_b = Side(a), Side(b)
        matcher = Matcher(side_a, side_b)
        matcher.run()
        diffs = instruction_diffs(matcher)
        comps = computation_diffs(matcher, diffs)
        summary = summarize(a, b, diffs)
        matches = {side_a.insts[x]: side_b.insts[y] for x, y in enumerate(matcher.ma) if y >= 0}
    finally:
        if was_enabled:
            gc.enable()
    return ModuleDiff(
        before_name=a.name, after_name=b.name, instructions=tuple(diffs), computations=tuple(comps),
        summary=summary, comparable=comparable, warnings=tuple(warnings), matches=matches,
    )
