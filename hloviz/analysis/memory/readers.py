"""XLA's buffer assignment read from what XLA writes: the serialized proto and a dump folder's text.

In: a ``BufferAssignmentProto`` (inside TensorFlow's ``HloProto``, or JAX's with the module proto
naming the instruction ids), or a dump folder's ``*-buffer-assignment.txt`` (with the
``HloLiveRange`` section, or JAX's ``*-live-range.txt``). Out: one checked
:class:`~.records.XlaAssignment`, or :class:`~.records.RecordError` saying what is wrong where.
Its own module because each reader follows one of XLA's formats (field numbers, text lines), while
:mod:`.records` is the record hloviz keeps and checks whatever it was read from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ...parser import wire
from .records import (
    RecordError,
    XlaAllocation,
    XlaAssignment,
    XlaLiveRanges,
    XlaValue,
    allocation_kind,
    check_live_ranges,
    check_record,
    shown_in_message,
)

__all__ = ["from_buffer_assignment_proto", "from_dump_texts", "from_hlo_proto", "instruction_names"]



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
            kind = allocation_kind(is_param, bool(wire.one_int(al, 12)), bool(wire.one_int(al, 3)), live_out)
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
                    origin: str = "XLA dump", live_where: str = "") -> XlaAssignment:
    """The record of a dump's ``*-buffer-assignment.txt`` (``values_text``: JAX's
    ``*-buffer-assignment-values.txt``; ``live_text``: its ``*-live-range.txt``, named
    ``live_where`` in messages; TensorFlow writes all in the first). A truncated or damaged file
    is a :class:`RecordError` naming the file and saying what is missing."""
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
            kind = allocation_kind(m is not None, "constant" in flags, "thread-local" in flags, live_out)
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
    record = XlaAssignment(tuple(allocations), total, origin)
    check_record(record, where)
    live_where = (live_where or "the live-range file") if live_text else where
    live = _live_ranges(live_text or assignment, live_where)
    if live is not None:
        check_live_ranges(live, {v.key for v in record.values()}, f"{live_where}: ")
    return XlaAssignment(tuple(allocations), total, origin, live)


_LIVE_HEADER = re.compile(r"^HloLiveRange \(max (\d+)\):$", re.MULTILINE)
_STACK_TOTAL = re.compile(r"^  Stack trace breakdown for peak usage: ([\d ]+) bytes$")
_CUMULATIVE = re.compile(r"\(cumulative: (\d+) bytes\)$")


def _live_ranges(text: str, where: str) -> XlaLiveRanges | None:
    """XLA's ``HloLiveRange`` report in ``text``, read strictly: what XLA writes there, whole.

    ``HloLiveRange (max N):``, the N instructions of the schedule numbered 0…N-1, each buffer's
    range, ``Live ranges at T (peak):`` with one row per buffer live at T (and, since 2024, the
    stack-trace breakdown whose total is the rows' cumulative sum). A line that is none of these,
    or a part missing, is a :class:`RecordError` at ``where``:line: a file cut anywhere in the
    section is refused, not read as a shorter schedule or a peak hloviz would have to make up."""
    header = _LIVE_HEADER.search(text)
    if header is None:
        if "HloLiveRange (max " in text:
            raise RecordError(f"{where}: its HloLiveRange header is damaged (the file is cut short?)")
        return None
    first_line = text.count("\n", 0, header.start()) + 2
    size = int(header.group(1))
    sequence: list[str] = []
    ranges: dict[str, tuple[int, int]] = {}
    peak: list[tuple[str, int]] = []
    peak_time: int | None = None
    section, stack_total, cumulative = "", None, 0
    for number, line in enumerate(text[header.end() + 1:].splitlines(), start=first_line):
        stripped = line.strip()
        if stripped in ("InstructionSequence:", "BufferLiveRange:") and section in ("", "InstructionSequence:"):
            section = stripped
            continue
        if (m := _PEAK_AT.match(line)) and section == "BufferLiveRange:":
            section, peak_time = "peak", int(m.group(1))
            continue
        if section == "InstructionSequence:" and (s := _SEQUENCE.match(line)) and int(s.group(1)) == len(sequence):
            sequence.append(s.group(2))
        elif section == "BufferLiveRange:" and (r := _RANGE.match(line)) and r.group(1) not in ranges:
            ranges[r.group(1)] = (int(r.group(2)), int(r.group(3)))
        elif section == "peak" and (p := _PEAK_ROW.match(line)):
            peak.append((p.group(1), int(p.group(2))))
            c = _CUMULATIVE.search(line)
            cumulative = int(c.group(1)) if c else cumulative
        elif section == "peak" and (t := _STACK_TOTAL.match(line)):
            stack_total = int(t.group(1).replace(" ", ""))
            break
        elif not stripped and section == "peak":
            break
        else:
            raise RecordError(f"{where}:{number}: cannot read this line of XLA's live ranges: {shown_in_message(line[:120])} "
                              "(the file is cut short or damaged?)")
    if len(sequence) != size:
        raise RecordError(f"{where}: its live ranges list {len(sequence)} of the schedule's {size} instructions "
                          "(the file is cut short?)")
    if peak_time is None:
        raise RecordError(f"{where}: its live ranges end before 'Live ranges at … (peak)' (the file is cut short?)")
    live = XlaLiveRanges(tuple(sequence), ranges, peak_time, tuple(peak))
    check_live_ranges(live, None, f"{where}: ")  # inside the schedule first: what a forged range says
    live_at_peak = sum(1 for first, last in ranges.values() if first <= peak_time <= last)
    if len(peak) != live_at_peak or (stack_total is not None and stack_total != cumulative):
        raise RecordError(f"{where}: its peak lists {len(peak)} of the {live_at_peak} buffers live at {peak_time} "
                          "(the file is cut short?)")
    return live
