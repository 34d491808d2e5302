"""Memory: XLA's buffer assignment read from its own records, or estimated by its rules.

:func:`memory_report` is the entry point (:mod:`.report`); :mod:`.records` reads XLA's records
(protos, dump text, ``memory.json``), :mod:`.dataflow` finds values, buffers and live ranges,
:mod:`.assign` replays XLA's buffer assignment (:mod:`.rules`: what it asks of the module,
:mod:`.heap`: its heap simulator) and :mod:`.estimate` sums it by kind.
"""

from __future__ import annotations

from .records import KINDS, RecordError, XlaAssignment
from .report import LiveBuffer, MemoryReport, Peak, memory_report

__all__ = ["KINDS", "LiveBuffer", "MemoryReport", "Peak", "RecordError", "XlaAssignment", "memory_report"]
