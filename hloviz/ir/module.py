"""A module: :class:`HloModule` (header, computations, entry) and its counts.

In: computations added in text order. Out: the module every command starts from, with the
per-module metadata cache and :func:`summarize`'s counts for ``hloviz stats``. Its own module
because it is the top of the model: nothing in the IR refers up to it at run time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .metadata import Metadata, parse_metadata

if TYPE_CHECKING:
    from .computation import Computation
    from .instruction import Instruction


class HloModule:
    """A parsed HLO module: header attributes, computations in text order, and the entry.

    ``attributes`` holds the header's ``key=value`` pairs as raw text
    (``is_scheduled`` → ``"true"``, ``entry_computation_layout`` → ``"{(f32[])->f32[]}"``).
    """

    __slots__ = ("name", "attributes", "computations", "entry", "filename", "by_name", "stack_frame_tables",
                 "parsed_metadata", "inlined_origins")

    def __init__(self, name: str, *, filename: str = "<string>") -> None:
        self.name = name
        self.attributes: dict[str, str] = {}
        self.computations: list[Computation] = []
        self.entry: Computation | None = None
        self.filename = filename
        #: Computation name → computation, kept by :meth:`add` (read it; add through :meth:`add`).
        self.by_name: dict[str, Computation] = {}
        #: Newer XLA prints FileNames / FunctionNames / FileLocations / StackFrames tables after
        #: the header; metadata then refers to them by ``stack_frame_id``. Rows kept as raw text.
        self.stack_frame_tables: dict[str, dict[int, str]] = {}
        #: ``metadata={...}`` text → its :class:`Metadata`, filled as instructions' metadata is
        #: read: a module of 300k instructions has a few thousand distinct texts.
        self.parsed_metadata: dict[str, Metadata] = {}
        #: In an optimized module paired with its pre-optimization one
        #: (:func:`hloviz.analysis.pre_post.names.pair`): a name XLA wrote by inlining a call whose
        #: op was already named under the caller (``cond/cond/adadelta/Mul``) → the op's own name
        #: (``cond/adadelta/Mul``). None: not paired.
        self.inlined_origins: dict[str, str] | None = None

    def metadata_of(self, raw: str) -> Metadata:
        """The :class:`Metadata` of a ``metadata={...}`` text of this module, parsed once per
        distinct text (kept in :attr:`parsed_metadata`)."""
        metadata = self.parsed_metadata.get(raw)
        if metadata is None:
            metadata = self.parsed_metadata[raw] = parse_metadata(raw)
        return metadata

    @property
    def is_scheduled(self) -> bool:
        return self.attributes.get("is_scheduled") == "true"

    @property
    def devices(self) -> tuple[int, str] | None:
        """How many devices run this module, each on its share, and the header's words for it
        (``(4, "num_partitions=4")``: XLA's SPMD partitioner wrote one device's program; a
        ``replica_count`` runs it on each replica): None for one device."""
        said = [(key, int(value)) for key in ("num_partitions", "replica_count")
                if (value := str(self.attributes.get(key, "1")).strip()).isdecimal() and int(value) > 1]
        if not said:
            return None
        count = 1
        for _key, n in said:
            count *= n
        return count, ", ".join(f"{key}={n}" for key, n in said)

    @property
    def entry_computation_layout(self) -> str | None:
        return self.attributes.get("entry_computation_layout")

    def computation(self, name: str) -> Computation:
        return self.by_name[name.lstrip("%")]

    def get_computation(self, name: str) -> Computation | None:
        return self.by_name.get(name.lstrip("%"))

    def add(self, computation: Computation) -> Computation:
        computation.parent = self
        self.computations.append(computation)
        self.by_name[computation.name] = computation
        return computation

    def instructions(self) -> Iterator[Instruction]:
        """Every instruction of every computation, in text order."""
        for c in self.computations:
            yield from c.instructions

    @property
    def instruction_count(self) -> int:
        return sum(len(c.instructions) for c in self.computations)

    def callers(self) -> dict[str, list[Instruction]]:
        """Computation name → the instructions that call it (fusion, while, call, reduce …)."""
        out: dict[str, list[Instruction]] = {}
        for inst in self.instructions():
            for c in inst.called_computations:
                out.setdefault(c.name, []).append(inst)
        return out

    def __repr__(self) -> str:
        return f"<HloModule {self.name}: {len(self.computations)} computations, {self.instruction_count} instructions>"


@dataclass(frozen=True)
class ModuleSummary:
    """Counts that ``hloviz stats`` prints for a single module."""

    name: str
    computations: int
    instructions: int
    opcodes: dict[str, int] = field(default_factory=dict[str, int])
    fusions_by_kind: dict[str, int] = field(default_factory=dict[str, int])


def summarize(module: HloModule) -> ModuleSummary:
    """Count computations, instructions, opcodes and fusions by kind."""
    opcodes: dict[str, int] = {}
    kinds: dict[str, int] = {}
    for inst in module.instructions():
        opcodes[inst.opcode] = opcodes.get(inst.opcode, 0) + 1
        if inst.opcode == "fusion":
            k = inst.attributes.get("kind", "?")
            kinds[k] = kinds.get(k, 0) + 1
    opcodes = dict(sorted(opcodes.items(), key=lambda kv: (-kv[1], kv[0])))
    return ModuleSummary(module.name, len(module.computations), module.instruction_count, opcodes, kinds)
