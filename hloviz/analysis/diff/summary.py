"""The summary a reader wants first: kernels before → after, fusions, opcodes, moves, constants.

Kernels are counted by the rule of :mod:`hloviz.analysis.kernels`, the count ``show`` prints.
The summary adds up: a kernel (or fusion) is "changed" or "unchanged" only when it is paired
with one of its own kind — a fusion with a fusion, an unfused instruction with an unfused
instruction. A fusion the matcher paired with a ``reduce-window`` it replaced is *added*, and the
``reduce-window`` *removed*, each noting the other. So ``added − removed = after − before``
holds for kernels and fusions alike.
"""

from __future__ import annotations

from collections import Counter

from ...ir import HloModule, Instruction
from ...opcodes import BODY_CALLERS
from ..backends import kind_text
from ..kernels import is_kernel
from .model import ChangeKind, DiffSummary, InstructionDiff, KernelCount, KernelDiff, OpcodeDelta, Status


def kernel_instructions(module: HloModule) -> list[Instruction]:
    """The module's kernels as instructions, by :func:`hloviz.analysis.kernels.is_kernel`'s rule.

    The same instructions :func:`hloviz.analysis.kernels` reports, found without computing
    bytes, FLOPs and provenance for each (the diff only needs which ones run).
    """
    if module.entry is None:
        return []
    found: list[Instruction] = []
    seen = {id(module.entry)}
    stack = [module.entry]
    while stack:
        comp = stack.pop()
        for inst in comp.instructions:
            if inst.opcode in BODY_CALLERS:
                for callee in inst.called_computations:
                    if id(callee) not in seen:
                        seen.add(id(callee))
                        stack.append(callee)
            elif is_kernel(inst):
                found.append(inst)
    return found


def kernel_diffs(kernels_a: list[Instruction], kernels_b: list[Instruction],
                 diffs: list[InstructionDiff]) -> list[KernelDiff]:
    """Every kernel of either side, paired where the instruction matching paired them."""
    ka, kb = set(kernels_a), set(kernels_b)
    out: list[KernelDiff] = []
    for d in diffs:
        in_a = d.before is not None and d.before in ka
        in_b = d.after is not None and d.after in kb
        if in_a and in_b and d.before is not None and d.after is not None and not same_kind(d.before, d.after):
            out.append(KernelDiff(Status.ADDED, None, d.after, (), f"replaces {_named(d.before)}"))
            out.append(KernelDiff(Status.REMOVED, d.before, None, (), f"replaced by {_named(d.after)}"))
        elif in_a and in_b:
            out.append(KernelDiff(d.status, d.before, d.after, d.changes))
        elif in_b:
            note = _where(d, before=True) if d.before is not None else ""
            out.append(KernelDiff(Status.ADDED, None, d.after, (), note))
        elif in_a:
            note = _where(d, before=False) if d.after is not None else ""
            out.append(KernelDiff(Status.REMOVED, d.before, None, (), note))
    return out


def same_kind(a: Instruction, b: Instruction) -> bool:
    """May ``a`` and ``b`` be reported as one kernel, changed? Two fusions, or two unfused
    instructions (a oneDNN ``custom-call`` matmul that became a ``dot`` is the same matmul,
    changed); a fusion paired with an unfused instruction is one kernel replacing another."""
    return (a.opcode == "fusion") == (b.opcode == "fusion")


def _named(inst: Instruction) -> str:
    fusion = inst.opcode == "fusion"
    what = "a " + kind_text(inst.fusion_kind or "fusion" if fusion else inst.opcode, inst.backend_kind, fusion=fusion)
    return f"{inst.name} ({what})"


def _where(d: InstructionDiff, before: bool) -> str:
    """Where a kernel's counterpart is on the side where it is not a kernel."""
    other = d.before if before else d.after
    assert other is not None  # a kernel's counterpart exists (changed or unchanged)
    when = "was" if before else "now"
    for c in d.changes:
        if c.kind is ChangeKind.FUSION:
            return f"{when} {c.before if before else c.after} ({other.name})"
    return f"{when} {other.name}, a {other.opcode} that is not a kernel of its own"


def _value(inst: Instruction) -> tuple[str, str]:
    """A constant's value as text (an elided ``{...}`` literal stands for any value of its shape)."""
    return inst.shape.to_text(layout=False), " ".join((inst.literal or "").split())


def _values(module: HloModule, cache: dict[str, set[tuple[str, str]]], key: str) -> set[tuple[str, str]]:
    if key not in cache:
        cache[key] = {_value(i) for i in module.instructions() if i.opcode == "constant"}
    return cache[key]


def _optimized(module: HloModule) -> bool:
    """Does this module look optimized (scheduled, or holding a fusion)?"""
    return module.is_scheduled or any(i.opcode == "fusion" for i in module.instructions())


def _opcode_counts(module: HloModule) -> Counter:
    return Counter(i.opcode for i in module.instructions() if i.opcode != "parameter")


def summarize(a: HloModule, b: HloModule, diffs: list[InstructionDiff]) -> DiffSummary:
    """Count statuses and collect the facts of :class:`DiffSummary` from the instruction diffs."""
    counts = Counter(d.status for d in diffs)
    ka, kb = kernel_instructions(a), kernel_instructions(b)
    fus_added, fus_removed, fus_changed = [], [], []
    fus_unchanged = 0
    into, out_of, between = [], [], []
    c_appeared, c_vanished, c_changed = [], [], []
    cache: dict[str, set[tuple[str, str]]] = {}
    for d in diffs:
        before, after = d.before, d.after
        fused_a = before is not None and before.opcode == "fusion"
        fused_b = after is not None and after.opcode == "fusion"
        if fused_a and fused_b:  # like with like: only a fusion paired with a fusion changes
            if d.status is Status.CHANGED:
                fus_changed.append(d)
            else:
                fus_unchanged += 1
        elif fused_b:  # new, or replacing what it was paired with (noted in the report)
            fus_added.append(d)
        elif fused_a:
            fus_removed.append(d)
        if d.status is Status.CHANGED:
            kinds = d.kinds
            if ChangeKind.FUSION in kinds and d.opcode != "parameter":
                change = next(c for c in d.changes if c.kind is ChangeKind.FUSION)
                if change.before == "unfused":
                    into.append(d)
                elif change.after == "unfused":
                    out_of.append(d)
                else:
                    between.append(d)
            if ChangeKind.CONSTANT in kinds:
                c_changed.append(d)
        elif d.opcode == "constant" and d.status is not Status.UNCHANGED:
            # Only values the other module has nowhere: XLA copies constants into fusions freely.
            if d.status is Status.ADDED and d.after is not None and _value(d.after) not in _values(a, cache, "a"):
                c_appeared.append(d)
            elif d.status is Status.REMOVED and d.before is not None and _value(d.before) not in _values(b, cache, "b"):
                c_vanished.append(d)
    oa, ob = _opcode_counts(a), _opcode_counts(b)
    deltas = [OpcodeDelta(op, oa.get(op, 0), ob.get(op, 0)) for op in sorted(set(oa) | set(ob))
              if oa.get(op, 0) != ob.get(op, 0)]
    deltas.sort(key=lambda d: (-abs(d.delta), d.opcode))
    return DiffSummary(
        unchanged=counts.get(Status.UNCHANGED, 0), changed=counts.get(Status.CHANGED, 0),
        added=counts.get(Status.ADDED, 0), removed=counts.get(Status.REMOVED, 0),
        kernels=KernelCount(len(ka), len(kb)), optimized=_optimized(a) or _optimized(b), kernel_diffs=tuple(kernel_diffs(ka, kb, diffs)),
        fusions_added=tuple(fus_added), fusions_removed=tuple(fus_removed), fusions_changed=tuple(fus_changed),
        fusions_unchanged=fus_unchanged, opcode_deltas=tuple(deltas),
        moved_into_fusions=tuple(into), moved_out_of_fusions=tuple(out_of), moved_between_fusions=tuple(between),
        constants_appeared=tuple(c_appeared), constants_vanished=tuple(c_vanished),
        constants_changed=tuple(c_changed),
    )
