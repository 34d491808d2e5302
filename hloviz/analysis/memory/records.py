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
    #: The ops asynchronous pairs run, as XLA's record names them → the pair that runs each in
    #: the module text the capture keeps: ``{"loop_dynamic_slice_fusion.3": ("fusion-start.28",
    #: "fusion-done.28")}``. XLA's dump prints an async pair in full (``async-start(…),
    #: calls=%async_computation.28``, whose root is the fusion ``loop_dynamic_slice_fusion.3``)
    #: and its record names the values after that fusion; JAX's ``compiled.as_text()`` prints
    #: the same pair as sugar (``fusion-start(…), calls=%fused_dynamic_slice.16.clone``), with no
    #: name for the fusion. The value is the done's result (XLA's async-done forwards it).
    #: Written by the capture, which has both texts of the one compile
    #: (:func:`hloviz.capture.async_names.async_wrapped`).
    wrapped: Mapping[str, tuple[str, str]] = field(default_factory=dict)

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
        if self.wrapped:
            out["async_wrapped"] = {name: list(pair) for name, pair in self.wrapped.items()}
        if self.live is not None:
            out["live"] = {"sequence": list(self.live.sequence),
                           "ranges": {k: list(r) for k, r in self.live.ranges.items()},
                           "peak_time": self.live.peak_time, "peak": [list(p) for p in self.live.peak]}
        return out

    @classmethod
    def from_dict(cls, data: object) -> XlaAssignment:
        """The record :meth:`to_dict` wrote, checked as untrusted input (types, ranges, the sums
        XLA's records keep: :func:`check_record`); :class:`RecordError` naming what is wrong."""
        try:
            record = _from_dict(data)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as err:
            if isinstance(err, RecordError):
                raise
            raise RecordError(f"not a buffer assignment hloviz wrote ({type(err).__name__}: {_shown(err)})") from None
        check_record(record)
        return record


# --- checking a record read from a file (every reader's output goes through check_record) ----

#: XLA counts bytes and schedule positions in int64.
_INT64 = 1 << 63
#: How XLA's live-range report names a value: ``name{}`` / ``name{1,0}``.
_KEY = re.compile(r"([^\s{}]+)\{((?:\d+(?:,\d+)*)?)\}\Z")
_NAME = re.compile(r"[^\s{}]*\Z")


def _shown(value: object) -> str:
    """``value`` for a message: ASCII only (surrogates and controls as escapes), cut short."""
    text = ascii(value)
    return text if len(text) <= 80 else f"{text[:80]}… ({len(text)} characters)"


def _count(value: object, what: str) -> int:
    if type(value) is not int or not 0 <= value < _INT64:  # bool is no count; nor "12", 1.5 or -3
        raise RecordError(f"{what} must be a whole number from 0 to 2^63-1, not {_shown(value)}")
    return value


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise RecordError(f"{what} must be text, not {_shown(value)}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise RecordError(f"{what} holds a lone surrogate, which is not text: {_shown(value)}") from None
    return value


def _name(value: object, what: str) -> str:
    if not _NAME.match(_text(value, what)):
        raise RecordError(f"{what} is not an instruction name: {_shown(value)}")
    return value  # type: ignore[return-value]  # _text checked it is a str


def _flag(value: object, what: str) -> bool:
    if type(value) is not bool:
        raise RecordError(f"{what} must be true or false, not {_shown(value)}")
    return value


def _list(value: object, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise RecordError(f"{what} must be a list, not {_shown(value)}")
    return value


def _key(key: str, what: str) -> tuple[str, tuple[int, ...]]:
    m = _KEY.match(key)
    if m is None:
        raise RecordError(f"{what}: {_shown(key)} names no value (XLA writes name{{}} or name{{1,0}})")
    return m.group(1), tuple(int(i) for i in m.group(2).split(",") if i)


def check_record(record: XlaAssignment, where: str = "") -> None:
    """What every buffer assignment XLA writes holds, checked on one read from a file (a dump, a
    saved capture's ``memory.json``): allocations numbered 0…n-1 once each, their sizes adding up
    to the total, each value inside its allocation; live ranges inside the schedule
    (``0 <= start <= end <= len(sequence)``: so the timeline is as long as the schedule the file
    lists, never longer) and naming values of the assignment. :class:`RecordError` on the first
    that fails (``where`` starts the message)."""
    at = f"{where}: " if where else ""
    indexes = sorted(a.index for a in record.allocations)
    if indexes != list(range(len(indexes))):
        raise RecordError(f"{at}allocations must be numbered 0 to {len(indexes) - 1} once each")
    summed = sum(a.size for a in record.allocations)
    if summed != record.total_bytes:
        raise RecordError(f"{at}its allocations add up to {summed} bytes but its total says {record.total_bytes}")
    for a in record.allocations:
        for v in a.values:
            if v.offset + v.size > a.size:
                raise RecordError(f"{at}value {v.key} ({v.size} bytes at offset {v.offset}) lies outside "
                                  f"allocation {a.index} ({a.size} bytes)")
    if record.live is not None:
        _check_live(record.live, {v.key for v in record.values()}, at)


def _check_live(live: XlaLiveRanges, keys: set[str] | None, at: str) -> None:
    end = len(live.sequence)
    for key, (first, last) in live.ranges.items():
        _key(key, f"{at}a live range")
        if not 0 <= first <= last <= end:
            raise RecordError(f"{at}the live range {_shown(key)}:{first}-{last} lies outside the schedule of "
                              f"{end} instructions (0-{end})")
        if keys is not None and key not in keys:
            raise RecordError(f"{at}the live range {_shown(key)} names no value of the buffer assignment")
    if live.peak_time is not None and not 0 <= live.peak_time <= end:
        raise RecordError(f"{at}the peak at {live.peak_time} lies outside the schedule of {end} instructions")


def _from_dict(data: Any) -> XlaAssignment:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RecordError(f"its format is not {FORMAT}")
    allocations = []
    for k, a in enumerate(_list(data["allocations"], "allocations")):
        if not isinstance(a, dict):
            raise RecordError(f"allocation #{k} must be an object, not {_shown(a)}")
        index = _count(a["index"], f"allocation #{k}: index")
        at = f"allocation {index}"
        values = []
        for j, v in enumerate(_list(a["values"], f"{at}: values")):
            v = _list(v, f"{at}, value #{j}")
            if len(v) != 5:
                raise RecordError(f"{at}, value #{j} must be [id, instruction, index, size, offset], not {_shown(v)}")
            shape_index = tuple(_count(i, f"{at}, value #{j}: shape index") for i in _list(v[2], f"{at}, value #{j}"))
            values.append(XlaValue(_count(v[0], f"{at}, value #{j}: id"), _name(v[1], f"{at}, value #{j}: instruction"),
                                   shape_index, _count(v[3], f"{at}, value #{j}: size"), index,
                                   _count(v[4], f"{at}, value #{j}: offset")))
        kind = a["kind"]
        if kind not in KINDS:
            raise RecordError(f"{at}: unknown kind {_shown(kind)}")
        parameter = a.get("parameter")
        allocations.append(XlaAllocation(index, _count(a["size"], f"{at}: size"), kind,
                                         None if parameter is None else _count(parameter, f"{at}: parameter"),
                                         _flag(a["live_out"], f"{at}: live_out"), _flag(a["aliased"], f"{at}: aliased"),
                                         tuple(values)))
    live = None
    if data.get("live") is not None:
        lv = data["live"]
        if not isinstance(lv, dict) or not isinstance(lv.get("ranges"), dict):
            raise RecordError(f"live must be an object with sequence, ranges and peak, not {_shown(lv)}")
        ranges: dict[str, tuple[int, int]] = {}
        for key, r in lv["ranges"].items():
            r = _list(r, f"the live range {_shown(key)}")
            if len(r) != 2:
                raise RecordError(f"the live range {_shown(key)} must be [start, end], not {_shown(r)}")
            ranges[_text(key, "a live range's key")] = (_count(r[0], f"the start of {_shown(key)}"),
                                                     _count(r[1], f"the end of {_shown(key)}"))
        peak = []
        for p in _list(lv["peak"], "live.peak"):
            p = _list(p, "a row of live.peak")
            if len(p) != 2:
                raise RecordError(f"a row of live.peak must be [value, bytes], not {_shown(p)}")
            peak.append((_text(p[0], "a value of live.peak"), _count(p[1], "bytes of live.peak")))
        peak_time = lv.get("peak_time")
        live = XlaLiveRanges(tuple(_name(s, "an instruction of live.sequence") for s in _list(lv["sequence"],
                                                                                              "live.sequence")),
                             ranges, None if peak_time is None else _count(peak_time, "live.peak_time"), tuple(peak))
    stats = data.get("stats") or {}
    if not isinstance(stats, dict):
        raise RecordError(f"stats must be an object, not {_shown(stats)}")
    checked = {_text(k, "a key of stats"): _count(v, f"stats.{_shown(k)}") for k, v in stats.items()}
    return XlaAssignment(tuple(allocations), _count(data["total_bytes"], "total_bytes"),
                         _text(data["origin"], "origin"), live, checked, _wrapped_from_dict(data.get("async_wrapped")))


def _wrapped_from_dict(wrapped: object) -> dict[str, tuple[str, str]]:
    """``async_wrapped``: op name → [start, done], each an instruction name."""
    if wrapped is None:
        return {}
    if not isinstance(wrapped, dict):
        raise RecordError(f"async_wrapped must be an object, not {_shown(wrapped)}")
    pairs: dict[str, tuple[str, str]] = {}
    for name, pair in wrapped.items():
        pair = _list(pair, f"async_wrapped.{_shown(name)}")
        if len(pair) != 2:
            raise RecordError(f"async_wrapped.{_shown(name)} must be [start, done], not {_shown(pair)}")
        pairs[_name(name, "a name of async_wrapped")] = (_name(pair[0], f"async_wrapped.{_shown(name)}: the start"),
                                                         _name(pair[1], f"async_wrapped.{_shown(name)}: the done"))
    return pairs


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
    record = XlaAssignment(tuple(allocations), total, origin)
    check_record(record, where)
    live_where = (live_where or "the live-range file") if live_text else where
    live = _live_ranges(live_text or assignment, live_where)
    if live is not None:
        _check_live(live, {v.key for v in record.values()}, f"{live_where}: ")
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
            raise RecordError(f"{where}:{number}: cannot read this line of XLA's live ranges: {_shown(line[:120])} "
                              "(the file is cut short or damaged?)")
    if len(sequence) != size:
        raise RecordError(f"{where}: its live ranges list {len(sequence)} of the schedule's {size} instructions "
                          "(the file is cut short?)")
    if peak_time is None:
        raise RecordError(f"{where}: its live ranges end before 'Live ranges at … (peak)' (the file is cut short?)")
    live = XlaLiveRanges(tuple(sequence), ranges, peak_time, tuple(peak))
    _check_live(live, None, f"{where}: ")  # inside the schedule first: what a forged range says
    live_at_peak = sum(1 for first, last in ranges.values() if first <= peak_time <= last)
    if len(peak) != live_at_peak or (stack_total is not None and stack_total != cumulative):
        raise RecordError(f"{where}: its peak lists {len(peak)} of the {live_at_peak} buffers live at {peak_time} "
                          "(the file is cut short?)")
    return live
