"""XLA's own buffer assignment, wherever a capture found it, as one checked record.

A capture keeps XLA's record as a small dict (``Capture.memory``): either the record itself
(``memory.json``: a live capture read it from XLA, or a saved capture kept it), or the paths of a
dump folder's files, read only when a command asks for memory. :func:`read_memory` turns either
into an :class:`~hloviz.analysis.memory.XlaAssignment`; a truncated or damaged file is an
:class:`~hloviz.errors.InputError` (exit 2) that names the file and what is missing.
"""

from __future__ import annotations

from pathlib import Path

from hloviz.analysis.memory.readers import from_dump_texts
from hloviz.analysis.memory.records import RecordError, XlaAssignment
from hloviz.errors import InputError

__all__ = ["read_memory"]


def read_memory(memory: dict, label: str) -> XlaAssignment | None:
    """The :class:`XlaAssignment` of ``memory`` (see the module docstring); None for a dump's
    binary proto that carries none."""
    if "assignment" in memory:
        return _from_dump(memory)
    if "proto" in memory:
        return _from_proto(str(memory["proto"]))
    try:
        return XlaAssignment.from_dict(memory)
    except RecordError as err:
        raise InputError(f"the buffer assignment kept with {label} (memory.json) cannot be read: {err}",
                         hint="capture it again (hloviz dump)") from None


def _read(path: str | None) -> str:
    if not path:
        return ""
    from hloviz.capture.saved import read_text

    return read_text(Path(path))


def _from_proto(path: str) -> XlaAssignment | None:
    from hloviz.analysis.memory.readers import from_hlo_proto
    from hloviz.inputs import read_bytes

    try:
        record = from_hlo_proto(read_bytes(Path(path), what="binary HLO proto"), "XLA dump, HloProto")
    except RecordError as err:
        raise InputError(f"{path}: XLA's buffer assignment cannot be read: {err}",
                         hint="dump the module again (XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_proto)") from None
    return record  # None: this proto carries none (the report estimates)


def _from_dump(memory: dict) -> XlaAssignment:
    where = str(memory["assignment"])
    try:
        return from_dump_texts(_read(where), where=where, values_text=_read(memory.get("values")),
                               live_text=_read(memory.get("live")), origin="XLA dump, *-buffer-assignment.txt",
                               live_where=str(memory.get("live") or ""))
    except RecordError as err:
        raise InputError(f"XLA's buffer assignment cannot be read: {err}",
                         hint="dump the module again (XLA_FLAGS=--xla_dump_to=DIR); hloviz estimates memory "
                              "from the HLO alone if you delete the damaged file") from None
