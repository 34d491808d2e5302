"""What a pass history says: each pass step, what it changed, and the credits it gives.

In: the facts of two neighbouring snapshots (:class:`~.facts.ModuleFacts`). Out: frozen records —
:class:`PassStep` (a pass in a pipeline), :class:`StepChanges` (:func:`compare_facts` of two
snapshots), :class:`HistoryStep`, the credits :class:`FusionCredit`, :class:`FoldCredit`,
:class:`EliminatedOp`, :class:`UnnamedOp`, and :class:`PassHistory` holding them. Its own module
because the report, the focus view and the version comparison read these records, while only
:mod:`.history` builds them from the snapshots.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .facts import ConstantKey, ModuleFacts

__all__ = ["PIPELINE_START", "EliminatedOp", "FoldCredit", "FusionCredit", "HistoryStep", "PassHistory", "PassStep",
           "StepChanges", "UnnamedOp", "compare_facts", "constant_text", "renamed_fusions"]



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
    #: (old name, new name) of fusions the pass only renamed (:func:`renamed_fusions`); they are
    #: in neither ``fusions_created`` nor ``fusions_removed``.
    fusions_renamed: tuple[tuple[str, str], ...] = ()
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
                "fusions_removed": list(self.fusions_removed),
                "fusions_renamed": [list(pair) for pair in self.fusions_renamed], "constants_new": list(self.constants_new),
                "ops_eliminated": list(self.ops_eliminated)}


def compare_facts(before: ModuleFacts, after: ModuleFacts) -> StepChanges:
    """What ``after`` has that ``before`` had not, and the reverse (see :class:`StepChanges`)."""
    bi, ai = before.instructions, after.instructions
    added = tuple(n for n in ai if n not in bi)
    removed = tuple(n for n in bi if n not in ai)
    changed = tuple(n for n, f in ai.items() if n in bi and bi[n].fingerprint != f.fingerprint)
    created = tuple(n for n in after.fusions if n not in before.fusions)
    removed_fusions = tuple(n for n in before.fusions if n not in after.fusions)
    renamed = renamed_fusions(before, after, removed_fusions, created) if created and removed_fusions else ()
    old_names, new_names = {o for o, _ in renamed}, {n for _, n in renamed}
    return StepChanges(
        added=added, removed=removed, changed=changed,
        fusions_created=tuple(n for n in created if n not in new_names),
        fusions_removed=tuple(n for n in removed_fusions if n not in old_names),
        fusions_renamed=renamed,
        constants_new=tuple(constant_text(k) for k in after.constants if k not in before.constants),
        ops_eliminated=tuple(op for op in before.op_names if op not in after.op_names))


_OWN_NAME = re.compile(r"^%[\w.\-]+ = ")
_CALLS = re.compile(r"\bcalls=%[\w.\-]+")
_ANY_NAME = re.compile(r"%[\w.\-]+")


def renamed_fusions(before: ModuleFacts, after: ModuleFacts, removed: tuple[str, ...],
                    created: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """The fusions of ``removed`` that reappear under a new name in ``created``: XLA:GPU's
    ``rename_fusions`` names every fusion after what it holds (``fusion.999`` becomes
    ``loop_add_fusion``), and the fusion's maker is the pass that made ``fusion.999``.

    A pair is the same fusion when its printed line is the same but for names — its own, the
    computation it calls (renamed with it), and operands renamed in the same step — and its
    fused computation holds the same instructions but for names. Only unambiguous pairs are
    made (one candidate on each side); operands renamed in the step are matched first, so
    chains of renamed fusions pair in rounds."""
    def body(facts: ModuleFacts, fusion: str) -> tuple[str, ...]:
        called = _CALLS.search(facts.instructions[fusion].fingerprint)
        comp = called.group(0)[len("calls=%"):] if called else ""
        return tuple(sorted(_ANY_NAME.sub("%", f.fingerprint) for f in facts.instructions.values()
                            if f.computation == comp))

    def line(fingerprint: str, names: dict[str, str]) -> str:
        text = _CALLS.sub("calls=%", _OWN_NAME.sub("", fingerprint))
        return _ANY_NAME.sub(lambda m: "%" + names.get(m.group(0)[1:], m.group(0)[1:]), text)

    if not all(before.instructions[n].fingerprint.startswith("%") for n in removed) or \
            not all(after.instructions[n].fingerprint.startswith("%") for n in created):
        return ()  # fingerprints rebuilt from the parsed module: names are not where a line has them
    pairs: list[tuple[str, str]] = []
    back: dict[str, str] = {}  # new name → old name, for operands renamed in this step
    old_left, new_left = list(removed), list(created)
    while old_left and new_left:
        keys: dict[str, list[str]] = {}
        for n in old_left:
            keys.setdefault(line(before.instructions[n].fingerprint, {}), []).append(n)
        new_keys = {n: line(after.instructions[n].fingerprint, back) for n in new_left}
        counts: dict[str, int] = {}
        for key in new_keys.values():
            counts[key] = counts.get(key, 0) + 1
        found = [(keys[key][0], n) for n, key in new_keys.items()
                 if counts[key] == 1 and len(keys.get(key, ())) == 1 and body(before, keys[key][0]) == body(after, n)]
        if not found:
            break
        for old, new in found:
            pairs.append((old, new))
            back[new] = old
            old_left.remove(old)
            new_left.remove(new)
    return tuple(pairs)


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
    #: For a fusion a later pass renamed (:func:`renamed_fusions`): its name when it was made.
    made_as: str | None = None


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
