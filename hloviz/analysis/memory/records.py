"""XLA's own buffer assignment, as hloviz keeps it: :class:`XlaAssignment`.

XLA decides where every value of a compiled program lives: *allocations* (an entry parameter, an
output, a constant, a thread-local scratch slot, or the one preallocated temporary block the
heap simulator packs temporaries into), each holding *values* (an instruction's result at a
shape index) at an offset. The sum of the allocations' sizes is XLA's "Total bytes used".

Three readers feed the same record: the serialized ``BufferAssignmentProto`` (TensorFlow's
``HloProto``, JAX's ``memory_analysis()``; instruction ids named through the module proto), and
the text XLA writes into a dump folder (``*-buffer-assignment.txt``, with the ``HloLiveRange``
section TensorFlow appends or JAX writes as ``*-live-range.txt``). :meth:`XlaAssignment.to_dict`
is what a saved capture keeps (``memory.json``), so a capture read on another machine still
reports XLA's numbers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...parser import wire

__all__ = ["FORMAT", "KINDS", "XlaAllocation", "XlaAssignment", "XlaLiveRanges", "XlaValue", "RecordError",
           "from_buffer_assignment_proto", "from_hlo_proto", "from_dump_texts"]

#: The ``format`` key of ``memory.json``.
FORMAT = "hloviz-xla-buffer-assignment/1"
#: Allocation kinds, in the order reports list them.
KINDS: tuple[str, ...] = ("parameters", "outputs", "temporaries", "constants", "thread_local")


class RecordError(ValueError):
    """XLA's record cannot be read (truncated, damaged, or not what it claims to be)."""


@dataclass(frozen=True)
class XlaValue:
    """One value XLA placed: ``instruction``'s result at shape ``index``, ``size`` bytes at
    ``offset`` in allocation ``allocation``."""

    id: int
    instruction: str
    index: tuple[int, ...]
    size: int
    allocation: int
    offset: int

    @property
    def key(self) -> str:
        """``name{}`` / ``name{1,0}``: how XLA's live-range report names the value."""
        return f"{self.instruction}{{{','.join(map(str, self.index))}}}"


@dataclass(frozen=True)
class XlaAllocation:
    """One allocation: its ``kind`` (one of :data:`KINDS`), the entry ``parameter`` it holds
    (None for others), whether it may be ``live_out`` (part of the result) and whether it is a
    parameter XLA lets the output reuse (``aliased``: donated / ``input_output_alias``)."""

    index: int
    size: int
    kind: str
    parameter: int | None
    live_out: bool
    aliased: bool
    values: tuple[XlaValue, ...]


@dataclass(frozen=True)
class XlaLiveRanges:
    """XLA's ``HloLiveRange`` report (dump folders only): the flattened schedule, each buffer's
    ``[start, end]`` in it, and the peak XLA found (time and the buffers live then, largest first)."""

    sequence: tuple[str, ...]
    ranges: Mapping[str, tuple[int, int]]
    peak_time: int | None
    peak: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class XlaAssignment:
    """XLA's buffer assignment of one compiled module (see the module docstring)."""

    allocations: tuple[XlaAllocation, ...]
    total_bytes: int
    origin: str
    live: XlaLiveRanges | None = None
    #: JAX's ``CompiledMemoryStats`` numbers, as JAX gave them (argument_size_in_bytes, …).
    stats: Mapping[str, int] = field(default_factory=dict)

    def bytes_by_kind(self) -> dict[str, int]:
        out: dict[str, int] = dict.fromkeys(KINDS, 0)
        for a in self.allocations:
            out[a.kind] += a.size
        return out

    @property
    def aliased_bytes(self) -> int:
        return sum(a.size for a in self.allocations if a.aliased)

    def values(self) -> list[XlaValue]:
        return [v for a in self.allocations for v in a.values]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"format": FORMAT, "origin": self.origin, "total_bytes": self.total_bytes}
        if self.stats:
            out["stats"] = dict(self.stats)
        out["allocations"] = [{
            "index": a.index, "size": a.size, "kind": a.kind, "parameter": a.parameter, "live_out": a.live_out,
            "aliased": a.aliased,
            "values": [[v.id, v.instruction, list(v.index), v.size, v.offset] for v in a.values],
        } for a in self.allocations]
        if self.live is not None:
            out["live"] = {"sequence": list(self.live.sequence),
                           "ranges": {k: list(r) for k, r in self.live.ranges.items()},
                           "peak_time": self.live.peak_time, "peak": [list(p) for p in self.live.peak]}
        return out

    @classmethod
    def from_dict(cls, data: object) -> XlaAssignment:
        """The record :meth:`to_dict` wrote; :class:`RecordError` naming what is wrong."""
        try:
            return _from_dict(data)
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            if isinstance(err, RecordError):
                raise
            raise RecordError(f"not a buffer assignment hloviz wrote ({type(err).__name__}: {err})") from None


def _from_dict(data: Any) -> XlaAssignment:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RecordError(f"its format is not {FORMAT}")
    allocations = []
    for a in data["allocations"]:
        values = tuple(XlaValue(int(v[0]), str(v[1]), tuple(int(i) for i in v[2]), int(v[3]), int(a["index"]),
                                int(v[4])) for v in a["values"])
        if a["kind"] not in KINDS:
            raise RecordError(f"allocation {a['index']}: unknown kind {a['kind']!r}")
        allocations.append(XlaAllocation(int(a["index"]), int(a["size"]), str(a["kind"]),
                                         None if a.get("parameter") is None else int(a["parameter"]),
                                         bool(a["live_out"]), bool(a["aliased"]), values))
    live = None
    if isinstance(data.get("live"), dict):
        lv = data["live"]
        live = XlaLiveRanges(tuple(str(s) for s in lv["sequence"]),
                             {str(k): (int(r[0]), int(r[1])) for k, r in lv["ranges"].items()},
                             None if lv.get("peak_time") is None else int(lv["peak_time"]),
                             tuple((str(p[0]), int(p[1])) for p in lv["peak"]))
    stats = {str(k): int(v) for k, v in (data.get("stats") or {}).items()}
    return XlaAssignment(tuple(allocations), int(data["total_bytes"]), str(data["origin"]), live, stats)


def _kind(parameter: bool, constant: bool, thread_local: bool, live_out: bool) -> str:
    if parameter:
        return "parameters"
    if constant:
        return "constants"
    if thread_local:
        return "thread_local"
    return "outputs" if live_out else "temporaries"


# --- the proto ------------------------------------------------------------------------------
# Field numbers from xla/service/hlo.proto (checked against TensorFlow 2.21's hlo_pb2).


def instruction_names(module_proto: bytes) -> dict[int, str]:
    """Instruction id → name, from a serialized ``HloModuleProto`` (computations: 3;
    instructions: 2; name: 1, id: 35)."""
    out: dict[int, str] = {}
    module = wire.read_message(module_proto)
    for comp in wire.messages(module, 3):
        for inst in wire.messages(comp, 2):
            out[wire.one_int(inst, 35)] = wire.one_text(inst, 1)
    return out


def from_buffer_assignment_proto(data: bytes, names: Mapping[int, str], origin: str,
                                 stats: Mapping[str, int] | None = None) -> XlaAssignment:
    """The record of a serialized ``BufferAssignmentProto``; ``names`` maps instruction ids to names
    (:func:`instruction_names`) for protos that give ids only (XLA since 2024)."""
    try:
        ba = wire.read_message(data)
        defined: dict[int, tuple[str, tuple[int, ...]]] = {}
        for lb in wire.messages(ba, 1):
            where = next(wire.messages(lb, 3), {})
            name = wire.one_text(where, 2) or names.get(wire.one_int(where, 4), "")
            defined[wire.one_int(lb, 1)] = (name, tuple(wire.ints(where, 3)))
        allocations = []
        for al in wire.messages(ba, 3):
            index = wire.one_int(al, 1)
            is_param, live_out = bool(wire.one_int(al, 5)), bool(wire.one_int(al, 7))
            values = []
            for assigned in wire.messages(al, 9):
                vid = wire.one_int(assigned, 1)
                name, shape_index = defined.get(vid, ("", ()))
                values.append(XlaValue(vid, name, shape_index, wire.one_int(assigned, 3), index,
                                       wire.one_int(assigned, 2)))
            kind = _kind(is_param, bool(wire.one_int(al, 12)), bool(wire.one_int(al, 3)), live_out)
            aliased = is_param and (live_out or bool(wire.one_int(al, 13)))
            allocations.append(XlaAllocation(index, wire.one_int(al, 2), kind,
                                             wire.one_int(al, 6) if is_param else None, live_out, aliased,
                                             tuple(values)))
    except wire.WireError as err:
        raise RecordError(f"not a BufferAssignmentProto ({err})") from None
    allocations.sort(key=lambda a: a.index)
    return XlaAssignment(tuple(allocations), sum(a.size for a in allocations), origin, None, dict(stats or {}))


def from_hlo_proto(data: bytes, origin: str) -> XlaAssignment | None:
    """The record inside a serialized ``HloProto`` (module: field 1, buffer assignment: field 3);
    None when it carries no buffer assignment."""
    try:
        proto = wire.read_message(data)
    except wire.WireError as err:
        raise RecordError(f"not an HloProto ({err})") from None
    module = proto.get(1, [b""])[-1]
    ba = proto.get(3)
    if not ba or not isinstance(ba[-1], bytes) or not isinstance(module, bytes):
        return None
    return from_buffer_assignment_proto(ba[-1], instruction_names(module), origin)


# --- dump text ------------------------------------------------------------------------------

_ALLOCATION = re.compile(r"^allocation (\d+): size (\d+)(.*):$")
# ``<83 inputs.5{1} (phi) @0>``: a loop's phi value is marked so
_VALUE = re.compile(r"^ value: <(\d+) (\S+?)(?:\{([\d,]*)\})?(?: \(phi\))? @\d+> \(size=(\d+),offset=(\d+)\)")
_TOTAL = re.compile(r"^Total bytes used: (\d+)", re.MULTILINE)
_PARAMETER = re.compile(r"\bparameter (\d+)")
_RANGE = re.compile(r"^    (\S+?\{[\d,]*\}):(-?\d+)-(-?\d+)$")
_SEQUENCE = re.compile(r"^    (\d+):(\S+)$")
_PEAK_AT = re.compile(r"^  Live ranges at (\d+) \(peak\):$")
_PEAK_ROW = re.compile(r"^    (\S+?\{[\d,]*\}): (\d+) bytes")


def from_dump_texts(assignment: str, *, where: str, values_text: str = "", live_text: str = "",
                    origin: str = "XLA dump") -> XlaAssignment:
    """The record of a dump's ``*-buffer-assignment.txt`` (``values_text``: JAX's
    ``*-buffer-assignment-values.txt``; ``live_text``: its ``*-live-range.txt``; TensorFlow writes
    all in the first). A truncated or damaged file is a :class:`RecordError` saying what is missing."""
    lines = assignment.splitlines()
    if not lines or lines[0].strip() != "BufferAssignment:":
        raise RecordError(f"{where}: does not start with 'BufferAssignment:'")
    allocations: list[XlaAllocation] = []
    current: tuple[int, int, str] | None = None
    values: list[XlaValue] = []

    def close() -> None:
        if current is not None:
            index, size, rest = current
            flags = re.sub(r"\|[^|]*\|", "", rest)
            m = _PARAMETER.search(flags)
            live_out = "maybe-live-out" in flags
            kind = _kind(m is not None, "constant" in flags, "thread-local" in flags, live_out)
            allocations.append(XlaAllocation(index, size, kind, int(m.group(1)) if m else None, live_out,
                                             m is not None and live_out, tuple(values)))

    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            if current is not None:
                break
            continue
        m = _ALLOCATION.match(line)
        if m:
            close()
            current, values = (int(m.group(1)), int(m.group(2)), m.group(3)), []
            continue
        v = _VALUE.match(line)
        if v and current is not None:
            index = tuple(int(i) for i in v.group(3).split(",") if i) if v.group(3) else ()
            values.append(XlaValue(int(v.group(1)), v.group(2), index, int(v.group(4)), current[0],
                                   int(v.group(5))))
            continue
        if line.startswith(("Total bytes used", "Used values")):
            break
        raise RecordError(f"{where}:{number}: cannot read this line of the buffer assignment: {line[:120]!r}")
    close()
    if not allocations:
        raise RecordError(f"{where}: holds no allocations")
    expected = list(range(len(allocations)))
    if sorted(a.index for a in allocations) != expected:
        raise RecordError(f"{where}: allocations are missing (the file is cut short?)")
    total_match = _TOTAL.search(assignment) or _TOTAL.search(values_text)
    summed = sum(a.size for a in allocations)
    if total_match is None:
        raise RecordError(f"{where}: no 'Total bytes used' line (the file is cut short?)")
    total = int(total_match.group(1))
    if total != summed:
        raise RecordError(f"{where}: its allocations add up to {summed} bytes but XLA wrote 'Total bytes used: "
                          f"{total}' (the file is cut short?)")
    live = _live_ranges(live_text or assignment)
    return XlaAssignment(tuple(allocations), total, origin, live)


def _live_ranges(text: str) -> XlaLiveRanges | None:
    start = text.find("HloLiveRange (max ")
    if start < 0:
        return None
    sequence: list[str] = []
    ranges: dict[str, tuple[int, int]] = {}
    peak: list[tuple[str, int]] = []
    peak_time: int | None = None
    section = ""
    for line in text[start:].splitlines()[1:]:
        stripped = line.strip()
        if stripped in ("InstructionSequence:", "BufferLiveRange:"):
            section = stripped
            continue
        m = _PEAK_AT.match(line)
        if m:
            section, peak_time = "peak", int(m.group(1))
            continue
        if section == "InstructionSequence:" and (s := _SEQUENCE.match(line)):
            sequence.append(s.group(2))
        elif section == "BufferLiveRange:" and (r := _RANGE.match(line)):
            ranges[r.group(1)] = (int(r.group(2)), int(r.group(3)))
        elif section == "peak" and (p := _PEAK_ROW.match(line)):
            peak.append((p.group(1), int(p.group(2))))
        elif section == "peak" and stripped.startswith("Stack trace"):
            break
    return XlaLiveRanges(tuple(sequence), ranges, peak_time, tuple(peak))
