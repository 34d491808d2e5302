"""One side of a comparison: a module, the label people read, and where it came from.

Both ``hloviz diff`` (:mod:`.diff`) and a pass history's snapshots (``TARGET@PASS``,
:mod:`.passes`) make sides, so the type sits below both of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..ir import HloModule

__all__ = ["DiffSide"]


@dataclass(frozen=True)
class DiffSide:
    """One side of a diff: the module, a label for people, and its capture's ``info``."""

    module: HloModule
    label: str
    info: dict = field(default_factory=dict, repr=False)
    #: The capture the module came from (None for a bare module or HLO file): XLA's memory record.
    capture: Any = field(default=None, repr=False, compare=False)
