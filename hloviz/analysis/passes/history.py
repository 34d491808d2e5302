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

__all__ = ["EliminatedOp", "FoldCredit", "FusionCredit", "HistoryBuilder", "HistoryStep", "PassHistory",
           "PassStep", "StepChanges", "UnnamedOp", "compare_facts", "constant_text"]

PIPELINE_START = "pipeline-start"


@dataclass(frozen=True)
class PassStep:
    """One snapshot as XLA named it: ``module_N.NAME.INDEX.PIPELINE.after_PASS.before_NEXT.txt``
    (between passes) or ``module_N.NAME.INDEX.PASS.STEP.txt`` (inside a pass: ``pipeline`` is
    None and ``during`` names the step, as copy insertion writes them)."""

    index: int
    pipeline: str | None
    pass_name: str
    next_pass: str | None = None
    during: str | None = None
    file: str = ""

    @property
    def label(self) -> str:
        """``PIPELINE/PASS`` (``PASS (STEP)`` inside a pass; ``start of PIPELINE`` for a start)."""
        if self.during is not None:
            return f"{self.pass_name} ({self.during})"
        if self.pipeline is None:
            return self.pass_name
        if self.pass_name == PIPELINE_START:
            return f"start of {self.pipeline}"
        return f"{self.pipeline}/{self.pass_name}"

    def to_dict(self) -> dict:
        return {"index": self.index, "pipeline": self.pipeline, "pass": self.pass_name,
                "next": self.next_pass, "during": self.during, "file": self.file}


def constant_text(key: ConstantKey, limit: int = 60) -> str:
    """A constant's value for people: ``f32[] 1000`` (the literal shortened past ``limit``)."""
    etype, dims, literal = key
    shape = f"{etype}[{','.join(map(str, dims))}]"
    if len(literal) > limit:
        literal = literal[:limit - 1] + "…"
    return f"{shape} {literal}".strip()


@dataclass(frozen=True)
class StepChanges:
    """What changed from one snapshot to the next, by instruction name (op names for ops)."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    #: Same name, another opcode, shape, layout, operands or literal.
    changed: tuple[str, ...] = ()
    fusions_created: tuple[str, ...] = ()
    fusions_removed: tuple[str, ...] = ()
    #: Constant values no constant of the snapshot before held (value text, as :func:`constant_text`).
    constants_new: tuple[str, ...] = ()
    #: Framework ops (``op_name``) whose last instruction vanished here.
    ops_eliminated: tuple[str, ...] = ()

    @property
    def any(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def to_dict(self) -> dict:
        return {"instructions_added": list(self.added), "instructions_removed": list(self.removed),
                "instructions_changed": list(self.changed), "fusions_created": list(self.fusions_created),
                "fusions_removed": list(self.fusions_removed), "constants_new": list(self.constants_new),
                "ops_eliminated": list(self.ops_eliminated)}


def compare_facts(before: ModuleFacts, after: ModuleFacts) -> StepChanges:
    """What ``after`` has that ``before`` had not, and the reverse (see :class:`StepChanges`)."""
    bi, ai = before.instructions, after.instructions
    added = tuple(n for n in ai if n not in bi)
    removed = tuple(n for n in bi if n not in ai)
    changed = tuple(n for n, f in ai.items() if n in bi and bi[n].fingerprint != f.fingerprint)
    return StepChanges(
        added=added, removed=removed, changed=changed,
        fusions_created=tuple(n for n in after.fusions if n not in before.fusions),
        fusions_removed=tuple(n for n in before.fusions if n not in after.fusions),
        constants_new=tuple(constant_text(k) for k in after.constants if k not in before.constants),
        ops_eliminated=tuple(op for op in before.op_names if op not in after.op_names))


@dataclass(frozen=True)
class HistoryStep:
    """A snapshot in the history: its counts and what changed since the snapshot before.

    ``changes`` is None for the first snapshot without a pre-optimization module to compare
    with, and after a snapshot that is missing or unreadable (``problem`` says which).
    """

    step: PassStep
    instructions: int | None
    fusions: int | None
    changes: StepChanges | None
    problem: str | None = None

    @property
    def changed(self) -> bool:
        return self.changes is not None and self.changes.any


@dataclass(frozen=True)
class FusionCredit:
    """A fusion of the optimized module and the snapshot it first appears in (``step``), or why
    there is none (``note``)."""

    name: str
    kind: str
    step: PassStep | None
    note: str = ""
    #: For a fusion XLA cloned (``fusion.clone``: the CPU compiler's parallel task assigner
    #: outlines a fusion into a call and clones it): the fusion it was cloned from, and the
    #: snapshot that one first appears in.
    clone_of: str | None = None
    clone_of_step: PassStep | None = None


_CLONE = re.compile(r"^(.+?)\.clone(?:\.\d+)?$")


@dataclass(frozen=True)
class FoldCredit:
    """A constant XLA computed (see :mod:`hloviz.analysis.pre_post.folding`) and the snapshot its value
    first appears in."""

    constant: str
    value: str
    from_ops: tuple[str, ...]
    step: PassStep | None
    by: str = "xla"
    note: str = ""


@dataclass(frozen=True)
class EliminatedOp:
    """A framework op with instructions before optimization and none after, and the snapshot its
    last instruction vanished in. ``folded_into`` names the constant it was folded into."""

    op_name: str
    step: PassStep | None
    folded_into: str | None = None
    note: str = ""


@dataclass(frozen=True)
class UnnamedOp:
    """A framework op whose name no instruction of the optimized module carries, but whose work
    runs there all the same: an instruction that carried its name, or one made with such an
    instruction to compute its value (XLA's ``convolution-canonicalization`` rebuilds a weight
    gradient as ``transpose(convolution)``, the name on the transpose only), is in the optimized
    module (``instructions``; instruction names are kept from snapshot to snapshot). ``step``
    is the snapshot the name vanished in."""

    op_name: str
    step: PassStep | None
    instructions: tuple[str, ...]
    note: str = ""


@dataclass(frozen=True)
class PassHistory:
    """Every snapshot XLA wrote for one module, in order, with the credits drawn from them."""

    module: str
    steps: tuple[HistoryStep, ...]
    fusions: tuple[FusionCredit, ...]
    folded: tuple[FoldCredit, ...]
    eliminated: tuple[EliminatedOp, ...]
    #: What differs between the last snapshot and the optimized module (None without either).
    after_last: StepChanges | None = None
    problems: tuple[str, ...] = ()
    #: Counts of the pre- and post-optimization modules (None when absent).
    pre_instructions: int | None = None
    post_instructions: int | None = None
    #: Ops whose name vanished while their work stayed (see :class:`UnnamedOp`): never eliminated.
    unnamed: tuple[UnnamedOp, ...] = ()

    @property
    def changed_steps(self) -> tuple[HistoryStep, ...]:
        return tuple(s for s in self.steps if s.changed)

    def step(self, index: int) -> HistoryStep | None:
        for s in self.steps:
            if s.step.index == index:
                return s
        return None

    @property
    def complete(self) -> bool:
        return not self.problems


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
                fusions.append(FusionCredit(name, kind, step, note, *self._origin(name)))
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
