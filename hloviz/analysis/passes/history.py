"""The pass history: which of XLA's passes fused, folded or removed each part of a module.

With ``XLA_FLAGS=--xla_dump_hlo_pass_re=.*`` XLA writes a snapshot of the module at the start
of each pass pipeline and after each pass that changed it (its ``HloPassPipeline`` dumps a pass
only when the pass reports a change), numbered in the order they were written. Copy insertion
also writes snapshots from inside itself. Reading them in order and comparing each with the one
before says what each pass did: instructions added, removed or changed, fusions created,
constant values written, framework ops (``op_name``) whose last instruction vanished.

In: the snapshots in the order XLA wrote them, each as :class:`~hloviz.analysis.passes.facts.ModuleFacts`
(or missing), and the optimized module. Out: a :class:`PassHistory` — each step's
:class:`StepChanges`, and the credits: which pass made each fusion, wrote each folded constant,
removed each framework op.

The history is built incrementally (:class:`HistoryBuilder`): each snapshot is reduced to its
:class:`~hloviz.analysis.passes.facts.ModuleFacts` and compared with its neighbour, so memory and
time grow with the number of *distinct* snapshots, not with their product.
The records it fills (steps, changes, credits) are :mod:`.steps`'s.

Credit is given only where the snapshots prove it. A thing first seen in a snapshot that follows
a missing or unreadable one gets no pass (``step`` is None) and a note saying which snapshots are
missing; one that appears only in the optimized module was made after the last snapshot (by a
pass that did not report a change, or outside a pipeline) and says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...opcodes import is_bookkeeping
from ..pre_post.folding import FoldingReport
from .facts import ConstantKey, ModuleFacts, operand_names
from .steps import (
    EliminatedOp,
    FoldCredit,
    FusionCredit,
    HistoryStep,
    PassHistory,
    PassStep,
    StepChanges,
    UnnamedOp,
    compare_facts,
)

__all__ = ["HistoryBuilder"]  # the records it builds are steps.py's, and the package's

_CLONE = re.compile(r"^(.+?)\.clone(?:\.\d+)?$")


@dataclass
class _Seen:
    """The snapshot a thing was first (or last) seen in, and whether the one before it is known."""

    index: int
    certain: bool


@dataclass
class HistoryBuilder:
    """Builds a :class:`PassHistory` one snapshot at a time (see the module docstring).

    ``start`` is the pre-optimization module's facts (what the first snapshot is compared with).
    """

    module: str
    start: ModuleFacts | None = None
    _prev: ModuleFacts | None = field(default=None, init=False)
    _expected: int = field(default=0, init=False)
    _steps: list[HistoryStep] = field(default_factory=list, init=False)
    _by_index: dict[int, PassStep] = field(default_factory=dict, init=False)
    _fusions: dict[str, _Seen] = field(default_factory=dict, init=False)
    #: A renamed fusion's name → the name it was made under.
    _made_as: dict[str, str] = field(default_factory=dict, init=False)
    _constants: dict[ConstantKey, _Seen] = field(default_factory=dict, init=False)
    _vanished: dict[str, _Seen] = field(default_factory=dict, init=False)
    _problems: list[str] = field(default_factory=list, init=False)
    #: op_name → the instructions that carried it in some snapshot, and the unnamed ones made
    #: in the same step as such an instruction and read by it (what the op was rewritten into).
    _heirs: dict[str, set[str]] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self._prev = self.start
        if self.start is not None:
            for name in self.start.fusions:
                self._fusions[name] = _Seen(-1, True)
            for key in self.start.constants:
                self._constants[key] = _Seen(-1, True)

    def problem(self, text: str) -> None:
        """Record something missing or wrong that is not tied to one snapshot."""
        self._problems.append(text)

    def add(self, step: PassStep, facts: ModuleFacts | None, problem: str | None = None) -> None:
        """The next snapshot: its facts, or None with the reason it could not be read."""
        certain = True
        if step.index != self._expected:
            missing = (f"snapshot {self._expected}" if step.index == self._expected + 1
                       else f"snapshots {self._expected}–{step.index - 1}")
            self._problems.append(f"{missing} missing before snapshot {step.index} ({step.label})")
            certain = False
        self._expected = step.index + 1
        self._by_index[step.index] = step
        if facts is None:
            self._problems.append(f"snapshot {step.index} ({step.label}) unreadable: {problem}")
            self._steps.append(HistoryStep(step, None, None, None, problem))
            self._prev = None
            return
        prev = self._prev
        certain = certain and prev is not None
        if prev is None:
            changes = None
        elif facts is prev:  # the same text as the snapshot before (the caller parsed it once)
            changes = StepChanges()
        else:
            changes = compare_facts(prev, facts)
        if facts is not prev:  # an identical text (the same facts object) changes nothing
            for old, new in changes.fusions_renamed if changes is not None else ():
                if old in self._fusions and new not in self._fusions:
                    self._fusions[new] = self._fusions[old]
                    self._made_as[new] = self._made_as.get(old, old)
            self._note_firsts(step.index, facts, prev, certain)
        self._steps.append(HistoryStep(step, facts.instruction_count, facts.fusion_count, changes))
        self._prev = facts

    def _note_firsts(self, index: int, facts: ModuleFacts, prev: ModuleFacts | None, certain: bool) -> None:
        for name in facts.fusions:
            if name not in self._fusions:
                self._fusions[name] = _Seen(index, certain)
        for key in facts.constants:
            if key not in self._constants:
                self._constants[key] = _Seen(index, certain)
        if prev is not None:
            for op in prev.op_names:
                if op not in facts.op_names:
                    self._vanished[op] = _Seen(index, certain)
        for op in facts.op_names:
            self._vanished.pop(op, None)
        self._note_heirs(facts, prev)

    def _note_heirs(self, facts: ModuleFacts, prev: ModuleFacts | None) -> None:
        """Record, for each op, the instructions carrying its name here, and the unnamed
        instructions new in this step that a new instruction carrying its name reads."""
        known = prev.instructions if prev is not None else None
        insts = facts.instructions
        for op, names in facts.op_names.items():
            heirs = self._heirs.get(op)
            if heirs is None:
                heirs = self._heirs[op] = set()
            heirs.update(names)
            if known is None:
                continue
            for name in names:
                if name in known:
                    continue
                for m in operand_names(insts[name].fingerprint):
                    g = insts.get(m)
                    if g is not None and not g.op_name and m not in known:
                        heirs.add(m)

    def _credit(self, seen: _Seen | None, what: str) -> tuple[PassStep | None, str]:
        if seen is None:
            return None, f"{what} in no snapshot: made after the last snapshot XLA wrote"
        if seen.index < 0:
            return None, f"{what} already in the pre-optimization module"
        step = self._by_index[seen.index]
        if not seen.certain:
            return None, (f"{what} first seen in snapshot {seen.index} ({step.label}), but the snapshot before it "
                          "is missing or unreadable: the pass is unknown")
        return step, ""

    def finish(self, final: ModuleFacts | None, folding: FoldingReport | None = None) -> PassHistory:
        """The history, with credits for the optimized module ``final`` (its fusions, folds and
        the ops that vanished; ``folding`` from :func:`~hloviz.analysis.constant_folding`)."""
        if not self._steps:
            self._problems.append("no snapshot could be read")
        after_last = compare_facts(self._prev, final) if self._prev is not None and final is not None else None
        fusions: list[FusionCredit] = []
        folded: list[FoldCredit] = []
        eliminated: list[EliminatedOp] = []
        if final is not None:
            for name, kind in final.fusions.items():
                step, note = self._credit(self._fusions.get(name), "fusion")
                fusions.append(FusionCredit(name, kind, step, note, *self._origin(name),
                                            made_as=self._made_as.get(name)))
            folded = self._folds(final, folding)
            eliminated = self._eliminated(final, folding)
        return PassHistory(self.module, tuple(self._steps), tuple(fusions), tuple(folded), tuple(eliminated),
                           after_last, tuple(self._problems),
                           self.start.instruction_count if self.start is not None else None,
                           final.instruction_count if final is not None else None,
                           tuple(self._unnamed(final)) if final is not None else ())

    def _survivors(self, op: str, final: ModuleFacts) -> tuple[str, ...]:
        """The instructions of ``final`` doing work that carried ``op``'s name in a snapshot or
        were made to compute it (:meth:`_note_heirs`)."""
        insts = final.instructions
        return tuple(sorted(n for n in self._heirs.get(op, ())
                            if n in insts and not is_bookkeeping(insts[n].opcode)))

    def _unnamed(self, final: ModuleFacts) -> list[UnnamedOp]:
        if self.start is None:
            return []
        out = []
        for op in self.start.op_names:
            if op in final.op_names:
                continue
            kept = self._survivors(op, final)
            if not kept:
                continue
            seen = self._vanished.get(op)
            step = self._by_index[seen.index] if seen is not None and seen.certain else None
            note = "" if step is not None else "its name vanished after the last snapshot, or across a gap"
            out.append(UnnamedOp(op, step, kept, note))
        return out

    def _origin(self, name: str) -> tuple[str | None, PassStep | None]:
        """The fusion ``name`` is a clone of (by XLA's ``.clone`` suffix), and where that appeared."""
        m = _CLONE.match(name)
        if m is None or m.group(1) not in self._fusions:
            return None, None
        step, _ = self._credit(self._fusions[m.group(1)], "fusion")
        return m.group(1), step

    def _folds(self, final: ModuleFacts, folding: FoldingReport | None) -> list[FoldCredit]:
        if folding is None:
            return []
        key_of = {name: key for key, names in final.constants.items() for name in names}
        out = []
        for f in folding.folded:
            if f.by != "xla":
                out.append(FoldCredit(f.constant, f.value, f.from_ops, None, f.by,
                                      "folded by TensorFlow before XLA saw the function"))
                continue
            key = key_of.get(f.constant)
            if key is None:
                note = ("its literal is elided ({...}) in the optimized module: the snapshot that wrote it cannot be told"
                        if f.constant in final.elided_constants else "not a constant of the optimized module")
                out.append(FoldCredit(f.constant, f.value, f.from_ops, None, f.by, note))
                continue
            step, note = self._credit(self._constants.get(key), "value")
            out.append(FoldCredit(f.constant, f.value, f.from_ops, step, f.by, note))
        return out

    def _eliminated(self, final: ModuleFacts, folding: FoldingReport | None) -> list[EliminatedOp]:
        if self.start is None:
            return []
        into = {}
        if folding is not None:
            for f in folding.folded:
                for op in f.from_ops:
                    into.setdefault(op, f.constant)
        out = []
        for op in self.start.op_names:
            if op in final.op_names or self._survivors(op, final):
                continue
            seen = self._vanished.get(op)
            if seen is None:
                out.append(EliminatedOp(op, None, into.get(op),
                                        "still in the last snapshot: removed after it"))
                continue
            step = self._by_index[seen.index]
            if seen.certain:
                out.append(EliminatedOp(op, step, into.get(op)))
            else:
                out.append(EliminatedOp(op, None, into.get(op),
                                        f"gone by snapshot {seen.index} ({step.label}), but the snapshot before it "
                                        "is missing or unreadable: the pass is unknown"))
        return out
