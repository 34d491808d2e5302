"""XLA's pass history: which pass fused, folded or removed each part of a module.

In: the snapshots XLA dumps with ``--xla_dump_hlo_pass_re=.*`` (parsed modules, in the order
written). Out: a :class:`PassHistory` (what each pass added, removed, fused and folded), one op's
journey through it, its text and JSON, and the passes that differ between two releases.

:mod:`.facts` reduces a snapshot to what neighbours are compared by, :mod:`.steps` holds the
records of a history, :mod:`.history` builds them from the snapshots (:class:`HistoryBuilder`), :mod:`.focus` follows one name through it,
:mod:`.report` writes it out and :mod:`.versions` compares two histories.
"""

from __future__ import annotations

from .history import HistoryBuilder
from .steps import (
    PIPELINE_START,
    EliminatedOp,
    FoldCredit,
    FusionCredit,
    HistoryStep,
    PassHistory,
    PassStep,
    StepChanges,
    UnnamedOp,
    compare_facts,
    constant_text,
)

__all__ = ["PIPELINE_START", "EliminatedOp", "FoldCredit", "FusionCredit", "HistoryBuilder", "HistoryStep",
           "PassHistory", "PassStep", "StepChanges", "UnnamedOp", "compare_facts", "constant_text"]
