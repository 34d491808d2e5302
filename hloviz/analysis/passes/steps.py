"""What a pass history says: each pass step, what it changed, and the credits it gives.

In: the facts of two neighbouring snapshots (:class:`~.facts.ModuleFacts`). Out: frozen records —
:class:`PassStep` (a pass in a pipeline), :class:`StepChanges` (:func:`compare_facts` of two
snapshots), :class:`HistoryStep`, the credits :class:`FusionCredit`, :class:`FoldCredit`,
:class:`EliminatedOp`, :class:`UnnamedOp`, and :class:`PassHistory` holding them. Its own module
because the report, the focus view and the version comparison read these records, while only
:mod:`.history` builds them from the snapshots.
"""

from __future__ import annotations

from dataclasses import dataclass

from .facts import ConstantKey, ModuleFacts

__all__ = ["PIPELINE_START", "EliminatedOp", "FoldCredit", "FusionCredit", "HistoryStep", "PassHistory", "PassStep",
           "StepChanges", "UnnamedOp", "compare_facts", "constant_text"]



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
