"""One op's journey through XLA's passes (``hloviz passes TARGET --focus NAME``).

A name is what the user knows, as ``--focus`` elsewhere: an op name (``add_17``,
``sequential/conv2d/Conv2D``), a scope or Keras layer (``conv2d``: every op under it), or an
HLO instruction name (``add.5``). At each snapshot the instructions carrying it are listed with
their computation and the fusion that holds them; the journey records the snapshots where that
list changed, so it reads as "became …, joined fusion …, vanished in …".

In: the ``--focus`` name and each snapshot's :class:`~hloviz.analysis.passes.facts.ModuleFacts`,
in order. Out: the :class:`JourneyStop` list (:class:`JourneyTracker`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field

from ...errors import InputError
from .facts import ModuleFacts
from .steps import PassStep

__all__ = ["FocusPlace", "JourneyStop", "JourneyTracker", "focus_matcher"]


@dataclass(frozen=True, order=True)
class FocusPlace:
    """An instruction carrying the focused op: where it is, and the fusion holding it (if any)."""

    instruction: str
    opcode: str
    computation: str
    fusion: str | None

    def to_dict(self) -> dict:
        return {"instruction": self.instruction, "opcode": self.opcode, "computation": self.computation,
                "fusion": self.fusion}


@dataclass(frozen=True)
class JourneyStop:
    """A snapshot where the focused op's instructions changed (``step`` None: before optimization;
    ``final``: the optimized module)."""

    step: PassStep | None
    places: tuple[FocusPlace, ...]
    final: bool = False

    @property
    def fusions(self) -> tuple[str, ...]:
        return tuple(sorted({p.fusion for p in self.places if p.fusion}))


def _matches(name: str, op: str) -> bool:
    return op == name or op.startswith(name + "/") or f"/{name}/" in f"/{op}/"


def focus_matcher(name: str, known: Iterable[ModuleFacts]) -> tuple[frozenset[str], frozenset[str]]:
    """The op names and instruction names ``name`` stands for in any of ``known`` (exact, a
    scope, or a unique substring); an :class:`InputError` with the closest names otherwise."""
    facts = list(known)
    bare = name.strip().lstrip("%")
    ops = {op for f in facts for op in f.op_names}
    insts = {n for f in facts for n in f.instructions}
    by_op = frozenset(op for op in ops if _matches(bare, op))
    by_inst = frozenset({bare} & insts)
    if by_op or by_inst:
        return by_op, by_inst
    partial = sorted(op for op in ops if bare in op)
    if partial and len({p.split("/")[0] for p in partial}) == 1 and len(partial) <= 50:
        return frozenset(partial), frozenset()
    close = difflib.get_close_matches(bare, sorted(ops | insts), n=3) if len(ops) + len(insts) < 200_000 else []
    raise InputError(f"no op, scope or instruction named {bare!r} in the module's snapshots",
                     hint=f"did you mean {', '.join(close)}?" if close
                     else "give an op_name (as in the HLO metadata), a layer or an instruction name")


@dataclass
class JourneyTracker:
    """Follows the ops and instructions :func:`focus_matcher` picked through the snapshots."""

    ops: frozenset[str]
    instructions: frozenset[str]
    stops: list[JourneyStop] = field(default_factory=list)
    _last: tuple[FocusPlace, ...] | None = None

    def places(self, facts: ModuleFacts) -> tuple[FocusPlace, ...]:
        names = set(self.instructions & facts.instructions.keys())
        for op in self.ops:
            names.update(facts.op_names.get(op, ()))
        out = []
        for n in names:
            f = facts.instructions[n]
            out.append(FocusPlace(n, f.opcode, f.computation, facts.fused_by.get(f.computation)))
        return tuple(sorted(out))

    def see(self, step: PassStep | None, facts: ModuleFacts, *, final: bool = False) -> None:
        """The next snapshot (``step`` None for the pre-optimization module)."""
        here = self.places(facts)
        if here != self._last or final:
            self.stops.append(JourneyStop(step, here, final))
        self._last = here

    def lost(self) -> None:
        """A snapshot was missing or unreadable: the next one is compared with nothing."""
        self._last = None
