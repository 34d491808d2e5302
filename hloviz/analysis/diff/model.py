"""The results of a diff: frozen, typed values that reports, pictures and CI checks read.

An :class:`InstructionDiff` points at the parsed instructions themselves (no copies), so a
diff of two 300k-instruction modules costs one small object per instruction on top of the
modules. Everything is ordered deterministically: results never depend on hash seeds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from ...ir import Computation, Instruction


class Status(str, Enum):
    """What happened to an instruction or computation between the two modules."""

    UNCHANGED = "unchanged"
    CHANGED = "changed"
    ADDED = "added"  # only in the second module (after)
    REMOVED = "removed"  # only in the first module (before)

    def __str__(self) -> str:
        return self.value


class ChangeKind(str, Enum):
    """How a matched instruction differs. Names and metadata never count as changes."""

    OPCODE = "opcode"
    SHAPE = "shape"  # element type or dimensions
    LAYOUT = "layout"  # same dimensions, different layout
    OPERANDS = "operands"  # operands are not the counterparts of the other side's operands
    CONSTANT = "constant"  # a constant's literal value
    FUSION = "fusion"  # moved into, out of, or between fusions
    ATTRIBUTES = "attributes"  # other attributes (dimensions, kind, backend_config …)
    CALLS = "calls"  # the computation it calls (a fusion's fused computation) changed
    #: The operands' dimensions changed though each operand is its counterpart's value (a
    #: ``dot`` whose output shape stayed while it now contracts over 96 channels, not 64).
    OPERAND_SHAPES = "operand shapes"
    WORK = "work"  # the estimated FLOPs of an unfused instruction (hloviz.analysis.kernels.flops)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class Change:
    """One way a matched instruction differs: ``before`` and ``after`` as short text."""

    kind: ChangeKind
    before: str
    after: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.before} → {self.after}"


@dataclass(frozen=True, slots=True)
class InstructionDiff:
    """One instruction's fate. ``before`` is in the first module, ``after`` in the second.

    ``how`` names the matching step that paired them (``exact``, ``subgraph``, ``top-down``,
    ``bottom-up``, ``opcode``), empty for added and removed instructions.
    """

    status: Status
    before: Instruction | None
    after: Instruction | None
    changes: tuple[Change, ...] = ()
    how: str = ""

    @property
    def instruction(self) -> Instruction:
        """The instruction to show: the new one, or the old one when it was removed."""
        return self.after if self.after is not None else self.before  # type: ignore[return-value]

    @property
    def opcode(self) -> str:
        return self.instruction.opcode

    @property
    def kinds(self) -> frozenset[ChangeKind]:
        return frozenset(c.kind for c in self.changes)


@dataclass(frozen=True, slots=True)
class ComputationDiff:
    """One computation's fate; ``changed`` when any instruction in it is not unchanged."""

    status: Status
    before: Computation | None
    after: Computation | None
    how: str = ""  # fingerprint, callers, signature, entry, call
    unchanged: int = 0
    changed: int = 0
    added: int = 0
    removed: int = 0


@dataclass(frozen=True, slots=True)
class OpcodeDelta:
    opcode: str
    before: int
    after: int

    @property
    def delta(self) -> int:
        return self.after - self.before


@dataclass(frozen=True, slots=True)
class KernelDiff:
    """One kernel's fate: a kernel (fusion or unfused work op) on either side.

    ``unchanged``/``changed``: a kernel on both sides, matched. ``removed``: a kernel only
    before — gone, or its counterpart no longer runs as a kernel of its own (``note`` says
    where it went, e.g. ``now inside fusion.3``). ``added``: the converse.
    """

    status: Status
    before: Instruction | None
    after: Instruction | None
    changes: tuple[Change, ...] = ()
    note: str = ""

    @property
    def instruction(self) -> Instruction:
        return self.after if self.after is not None else self.before  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class KernelCount:
    """How many kernels (fusions and unfused instructions doing work) each side runs."""

    before: int
    after: int

    @property
    def delta(self) -> int:
        return self.after - self.before


@dataclass(frozen=True)
class DiffSummary:
    """The facts a reader wants first: counts, kernels, fusions, opcodes, moves, constants."""

    unchanged: int
    changed: int
    added: int
    removed: int
    kernels: KernelCount
    #: False when neither module is optimized (not scheduled, no fusion): then every instruction
    #: doing work counts as a "kernel", and reports call them instructions doing work.
    optimized: bool = True
    #: Every kernel of either side: matched pairs in the second module's order, then removed ones.
    kernel_diffs: tuple[KernelDiff, ...] = ()
    fusions_added: tuple[InstructionDiff, ...] = ()
    fusions_removed: tuple[InstructionDiff, ...] = ()
    fusions_changed: tuple[InstructionDiff, ...] = ()
    fusions_unchanged: int = 0
    opcode_deltas: tuple[OpcodeDelta, ...] = ()
    moved_into_fusions: tuple[InstructionDiff, ...] = ()
    moved_out_of_fusions: tuple[InstructionDiff, ...] = ()
    moved_between_fusions: tuple[InstructionDiff, ...] = ()
    #: Added constants whose value (shape and literal) the first module has nowhere, and removed
    #: ones whose value the second has nowhere: copies of a constant (into a fusion) are not listed.
    constants_appeared: tuple[InstructionDiff, ...] = ()
    constants_vanished: tuple[InstructionDiff, ...] = ()
    constants_changed: tuple[InstructionDiff, ...] = ()

    @property
    def total(self) -> int:
        return self.unchanged + self.changed + self.added + self.removed

    @property
    def fusions_before(self) -> int:
        """Fusion instructions of the first module: each is unchanged, changed or removed."""
        return self.fusions_unchanged + len(self.fusions_changed) + len(self.fusions_removed)

    @property
    def fusions_after(self) -> int:
        """Fusion instructions of the second module: each is unchanged, changed or added."""
        return self.fusions_unchanged + len(self.fusions_changed) + len(self.fusions_added)

    def __repr__(self) -> str:  # the lists can hold 100k entries; show the counts
        k = self.kernels
        return (f"<DiffSummary unchanged={self.unchanged} changed={self.changed} added={self.added} "
                f"removed={self.removed} kernels={k.before}->{k.after}>")

    @property
    def identical(self) -> bool:
        return self.changed == 0 and self.added == 0 and self.removed == 0


@dataclass(frozen=True)
class ModuleDiff:
    """The diff of two modules: every instruction and computation, a summary, and warnings.

    ``instructions`` lists matched pairs in the order of the second module, then removed
    instructions in the order of the first. ``comparable`` is False when the entry signatures
    differ (the diff is still computed; ``warnings`` says why).
    """

    before_name: str
    after_name: str
    instructions: tuple[InstructionDiff, ...] = field(repr=False)
    computations: tuple[ComputationDiff, ...] = field(repr=False)
    summary: DiffSummary
    comparable: bool = True
    warnings: tuple[str, ...] = ()
    #: The first module's instruction → its counterpart in the second (matched pairs only).
    matches: dict[Instruction, Instruction] = field(default_factory=dict, repr=False, compare=False)

    def by_status(self, status: Status | str) -> list[InstructionDiff]:
        s = Status(status)
        return [d for d in self.instructions if d.status is s]

    def find(self, instruction: Instruction) -> InstructionDiff | None:
        """The entry of an instruction from either module (a linear scan; for tests and tools)."""
        for d in self.instructions:
            if d.before is instruction or d.after is instruction:
                return d
        return None
