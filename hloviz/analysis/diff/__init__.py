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
    if module.entry is None:
        return "()"
    params, result = _shapes(module)
    return "(" + ", ".join(params) + ") -> " + result


#: Signatures up to this long (both together) are quoted whole in the warning.
_WHOLE_SIGNATURES = 200
#: How many changed parameters the warning names.
_NAMED_CHANGES = 3


def signature_change(a: HloModule, b: HloModule, sa: str, sb: str) -> str:
    """What differs between the entry signatures ``sa`` of ``a`` and ``sb`` of ``b``: both whole
    when short, else the parameters that changed. A training step's signature lists every
    weight: doubling its batch wrote two signatures of 4,500 characters each, one line of the
    diff picture's header 36,888 pt wide."""
    if len(sa) + len(sb) <= _WHOLE_SIGNATURES:
        return f"{sa} (before) vs {sb} (after)"
    (pa, ra), (pb, rb) = _shapes(a), _shapes(b)
    changed = [f"parameter {k} {x} → {y}" for k, (x, y) in enumerate(zip(pa, pb, strict=False)) if x != y]
    parts = changed[:_NAMED_CHANGES]
    if len(changed) > _NAMED_CHANGES:
        parts.append(f"{len(changed) - _NAMED_CHANGES} more parameters changed")
    if len(pa) != len(pb):
        parts.append(f"{len(pa)} parameters before, {len(pb)} after")
    if ra != rb:
        parts.append("the result changed" if len(ra) + len(rb) > _WHOLE_SIGNATURES else f"the result {ra} → {rb}")
    return ", ".join(parts) + f" (of {len(pa)} parameters)"


def _shapes(module: HloModule) -> tuple[list[str], str]:
    """The entry's parameter shapes and its result shape, as :func:`entry_signature` writes them."""
    entry = module.entry
    if entry is None:
        return [], "?"
    params, result = entry.program_shape
    return [p.to_text(layout=False) for p in params], result.to_text(layout=False) if result is not None else "?"


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
                        f"{signature_change(a, b, sa, sb)}; the diff matches what it can")
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
