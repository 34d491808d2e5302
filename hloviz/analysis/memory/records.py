"""XLA's own buffer assignment, as hloviz keeps it: :class:`XlaAssignment`.

XLA decides where every value of a compiled program lives: *allocations* (an entry parameter, an
output, a constant, a thread-local scratch slot, or the one preallocated temporary block the
heap simulator packs temporaries into), each holding *values* (an instruction's result at a
shape index) at an offset. The sum of the allocations' sizes is XLA's "Total bytes used".

Three readers (:mod:`.readers`) feed the same record: the serialized ``BufferAssignmentProto`` (TensorFlow's
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

__all__ = ["FORMAT", "KINDS", "XlaAllocation", "XlaAssignment", "XlaLiveRanges", "XlaValue", "RecordError", "allocation_kind",
           "check_live_ranges", "check_record", "shown_in_message"]

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
    #: (:func:`hloviz.capture.dumps.async_names.async_wrapped`).
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
            raise RecordError(f"not a buffer assignment hloviz wrote ({type(err).__name__}: {shown_in_message(err)})") from None
        check_record(record)
        return record


# --- checking a record read from a file (every reader's output goes through check_record) ----

#: XLA counts bytes and schedule positions in int64.
_INT64 = 1 << 63
#: How XLA's live-range report names a value: ``name{}`` / ``name{1,0}``.
_KEY = re.compile(r"([^\s{}]+)\{((?:\d+(?:,\d+)*)?)\}\Z")
_NAME = re.compile(r"[^\s{}]*\Z")


def shown_in_message(value: object) -> str:
    """``value`` for a message: ASCII only (surrogates and controls as escapes), cut short."""
    text = ascii(value)
    return text if len(text) <= 80 else f"{text[:80]}… ({len(text)} characters)"


def _count(value: object, what: str) -> int:
    if type(value) is not int or not 0 <= value < _INT64:  # bool is no count; nor "12", 1.5 or -3
        raise RecordError(f"{what} must be a whole number from 0 to 2^63-1, not {shown_in_message(value)}")
    return value


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise RecordError(f"{what} must be text, not {shown_in_message(value)}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise RecordError(f"{what} holds a lone surrogate, which is not text: {shown_in_message(value)}") from None
    return value


def _name(value: object, what: str) -> str:
    if not _NAME.match(_text(value, what)):
        raise RecordError(f"{what} is not an instruction name: {shown_in_message(value)}")
    return value  # type: ignore[return-value]  # _text checked it is a str


def _flag(value: object, what: str) -> bool:
    if type(value) is not bool:
        raise RecordError(f"{what} must be true or false, not {shown_in_message(value)}")
    return value


def _list(value: object, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise RecordError(f"{what} must be a list, not {shown_in_message(value)}")
    return value


def _key(key: str, what: str) -> tuple[str, tuple[int, ...]]:
    m = _KEY.match(key)
    if m is None:
        raise RecordError(f"{what}: {shown_in_message(key)} names no value (XLA writes name{{}} or name{{1,0}})")
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
        check_live_ranges(record.live, {v.key for v in record.values()}, at)


def check_live_ranges(live: XlaLiveRanges, keys: set[str] | None, at: str) -> None:
    """Every range names a value (of ``keys``, when given) and lies inside the schedule, as does
    the peak; :class:`RecordError` (its message starting with ``at``) when not."""
    end = len(live.sequence)
    for key, (first, last) in live.ranges.items():
        _key(key, f"{at}a live range")
        if not 0 <= first <= last <= end:
            raise RecordError(f"{at}the live range {shown_in_message(key)}:{first}-{last} lies outside the schedule of "
                              f"{end} instructions (0-{end})")
        if keys is not None and key not in keys:
            raise RecordError(f"{at}the live range {shown_in_message(key)} names no value of the buffer assignment")
    if live.peak_time is not None and not 0 <= live.peak_time <= end:
        raise RecordError(f"{at}the peak at {live.peak_time} lies outside the schedule of {end} instructions")


def _from_dict(data: Any) -> XlaAssignment:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RecordError(f"its format is not {FORMAT}")
    allocations = []
    for k, a in enumerate(_list(data["allocations"], "allocations")):
        if not isinstance(a, dict):
            raise RecordError(f"allocation #{k} must be an object, not {shown_in_message(a)}")
        index = _count(a["index"], f"allocation #{k}: index")
        at = f"allocation {index}"
        values = []
        for j, v in enumerate(_list(a["values"], f"{at}: values")):
            v = _list(v, f"{at}, value #{j}")
            if len(v) != 5:
                raise RecordError(f"{at}, value #{j} must be [id, instruction, index, size, offset], not {shown_in_message(v)}")
            shape_index = tuple(_count(i, f"{at}, value #{j}: shape index") for i in _list(v[2], f"{at}, value #{j}"))
            values.append(XlaValue(_count(v[0], f"{at}, value #{j}: id"), _name(v[1], f"{at}, value #{j}: instruction"),
                                   shape_index, _count(v[3], f"{at}, value #{j}: size"), index,
                                   _count(v[4], f"{at}, value #{j}: offset")))
        kind = a["kind"]
        if kind not in KINDS:
            raise RecordError(f"{at}: unknown kind {shown_in_message(kind)}")
        parameter = a.get("parameter")
        allocations.append(XlaAllocation(index, _count(a["size"], f"{at}: size"), kind,
                                         None if parameter is None else _count(parameter, f"{at}: parameter"),
                                         _flag(a["live_out"], f"{at}: live_out"), _flag(a["aliased"], f"{at}: aliased"),
                                         tuple(values)))
    live = None
    if data.get("live") is not None:
        lv = data["live"]
        if not isinstance(lv, dict) or not isinstance(lv.get("ranges"), dict):
            raise RecordError(f"live must be an object with sequence, ranges and peak, not {shown_in_message(lv)}")
        ranges: dict[str, tuple[int, int]] = {}
        for key, r in lv["ranges"].items():
            r = _list(r, f"the live range {shown_in_message(key)}")
            if len(r) != 2:
                raise RecordError(f"the live range {shown_in_message(key)} must be [start, end], not {shown_in_message(r)}")
            ranges[_text(key, "a live range's key")] = (_count(r[0], f"the start of {shown_in_message(key)}"),
                                                     _count(r[1], f"the end of {shown_in_message(key)}"))
        peak = []
        for p in _list(lv["peak"], "live.peak"):
            p = _list(p, "a row of live.peak")
            if len(p) != 2:
                raise RecordError(f"a row of live.peak must be [value, bytes], not {shown_in_message(p)}")
            peak.append((_text(p[0], "a value of live.peak"), _count(p[1], "bytes of live.peak")))
        peak_time = lv.get("peak_time")
        live = XlaLiveRanges(tuple(_name(s, "an instruction of live.sequence") for s in _list(lv["sequence"],
                                                                                              "live.sequence")),
                             ranges, None if peak_time is None else _count(peak_time, "live.peak_time"), tuple(peak))
    stats = data.get("stats") or {}
    if not isinstance(stats, dict):
        raise RecordError(f"stats must be an object, not {shown_in_message(stats)}")
    checked = {_text(k, "a key of stats"): _count(v, f"stats.{shown_in_message(k)}") for k, v in stats.items()}
    return XlaAssignment(tuple(allocations), _count(data["total_bytes"], "total_bytes"),
                         _text(data["origin"], "origin"), live, checked, _wrapped_from_dict(data.get("async_wrapped")))


def _wrapped_from_dict(wrapped: object) -> dict[str, tuple[str, str]]:
    """``async_wrapped``: op name → [start, done], each an instruction name."""
    if wrapped is None:
        return {}
    if not isinstance(wrapped, dict):
        raise RecordError(f"async_wrapped must be an object, not {shown_in_message(wrapped)}")
    pairs: dict[str, tuple[str, str]] = {}
    for name, pair in wrapped.items():
        pair = _list(pair, f"async_wrapped.{shown_in_message(name)}")
        if len(pair) != 2:
            raise RecordError(f"async_wrapped.{shown_in_message(name)} must be [start, done], not {shown_in_message(pair)}")
        pairs[_name(name, "a name of async_wrapped")] = (_name(pair[0], f"async_wrapped.{shown_in_message(name)}: the start"),
                                                         _name(pair[1], f"async_wrapped.{shown_in_message(name)}: the done"))
    return pairs


def allocation_kind(parameter: bool, constant: bool, thread_local: bool, live_out: bool) -> str:
    """Which of :data:`KINDS` an allocation is, from XLA's flags on it (a parameter first)."""
    if parameter:
        return "parameters"
    if constant:
        return "constants"
    if thread_local:
        return "thread_local"
    return "outputs" if live_out else "temporaries"
