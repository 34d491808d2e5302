"""One memory report, whichever way the numbers came: :class:`MemoryReport`.

``source`` says where they came from: ``"xla"`` when XLA's own buffer assignment was read (a live
capture, a dump folder, a saved capture that kept it), ``"estimate"`` when hloviz computed them
from the HLO text by XLA's rules (:mod:`.estimate`).

* ``total_bytes`` is XLA's "Total bytes used": the sum of every allocation;
* the *timeline* is the bytes live at each position of the flattened schedule, the way XLA's
  ``HloLiveRange`` counts them: every buffer from its definition to its last use, entry
  parameters throughout, outputs to the end (thread-local slots are not in it); the *peak* is its
  highest point, and the buffers at the peak are the ones live there.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hloviz.ir import HloModule, Instruction

from .dataflow import Dataflow, analyse, shape_bytes
from .estimate import compiled_for_gpu, estimate, estimate_origin
from .records import KINDS, XlaAssignment
from .timeline import Interval, live_at, occupancy, peak_moment

__all__ = ["LiveBuffer", "MemoryReport", "Peak", "kind_label", "memory_report"]


def kind_label(kind: str) -> str:
    """How reports name a key of ``by_kind``: ``thread-local``; ``aliased`` says it is a part of
    the parameters' bytes (the donated ones), not more bytes."""
    return "aliased (of the parameters)" if kind == "aliased" else kind.replace("_", "-")

#: Kinds along the timeline (thread-local slots are not live along the schedule).
TIMELINE_KINDS = ("parameters", "outputs", "temporaries", "constants")


@dataclass(frozen=True, slots=True)
class LiveBuffer:
    """A buffer live at the peak: the instruction that defines it (its op name, scope and shape),
    its bytes, kind and live range ``[start, end]`` in schedule positions."""

    instruction: str
    index: tuple[int, ...]
    op_name: str
    scope: str
    shape: str
    bytes: int
    kind: str
    start: int
    end: int
    last_user: str = ""
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"instruction": self.instruction, "index": list(self.index), "op_name": self.op_name,
                "scope": self.scope, "shape": self.shape, "bytes": self.bytes, "kind": self.kind,
                "live_range": [self.start, self.end], "last_user": self.last_user, "source": self.source}


@dataclass(frozen=True, slots=True)
class Peak:
    time: int
    instruction: str
    bytes: int

    def to_dict(self) -> dict[str, Any]:
        return {"time": self.time, "instruction": self.instruction, "bytes": self.bytes}


@dataclass(frozen=True)
class MemoryReport:
    """See the module docstring; :meth:`to_dict` is ``hloviz memory --json``."""

    source: str
    origin: str
    total_bytes: int
    by_kind: Mapping[str, int]
    peak: Peak
    instructions: tuple[str, ...]
    timeline: Mapping[str, tuple[int, ...]]
    buffers_at_peak: tuple[LiveBuffer, ...]
    scopes: tuple[tuple[str, int], ...]
    order: str
    notes: tuple[str, ...] = ()
    stats: Mapping[str, int] = field(default_factory=dict)

    @property
    def live_bytes(self) -> tuple[int, ...]:
        """Bytes live at each position (all kinds together)."""
        parts = [self.timeline[k] for k in TIMELINE_KINDS if k in self.timeline]
        return tuple(sum(col) for col in zip(*parts)) if parts else ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "total_bytes": self.total_bytes,
            "by_kind": dict(self.by_kind),
            "peak": self.peak.to_dict(),
            "timeline": {"instructions": list(self.instructions), "bytes": list(self.live_bytes),
                         "by_kind": {k: list(v) for k, v in self.timeline.items()}},
            "buffers_at_peak": [b.to_dict() for b in self.buffers_at_peak],
            "scopes": [{"scope": s, "bytes": n} for s, n in self.scopes],
            "notes": list(self.notes),
        }


def memory_report(module: HloModule, xla: XlaAssignment | None = None, *,
                  scope_of: Callable[[Instruction], str] | None = None,
                  source_of: Callable[[Instruction], str] | None = None) -> MemoryReport:
    """The memory report of the optimized ``module``: XLA's numbers when ``xla`` (its buffer
    assignment for this very compile) is given, else the estimate. ``scope_of`` names an
    instruction's scope (layer); ``source_of`` its line in the user's code."""
    # The analysis makes a few objects per value and frees none until it ends: pausing the cyclic
    # garbage collector saves its repeated full scans (half the time on a 300k-instruction module).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _report(module, xla, scope_of, source_of)
    finally:
        if collecting:
            gc.enable()


def _report(module: HloModule, xla: XlaAssignment | None, scope_of: Callable[[Instruction], str] | None,
            source_of: Callable[[Instruction], str] | None) -> MemoryReport:
    from .notes import memory_notes

    flow = analyse(module)
    notes: list[str] = []
    if xla is not None:
        known = _check_names(module, xla, notes)
        if known:
            notes += memory_notes(flow, xla)
            return _from_xla(module, flow, xla, notes, scope_of, source_of)
    est = estimate(flow)
    notes += memory_notes(flow, None, est.reused_outputs)
    taken = est.starts  # a result written over the operand it replaces starts one later
    # the values of one buffer share its storage, and so do the buffers the estimate placed in one
    # output or donated parameter's allocation: one slot each (negative: not XLA's allocation numbers)
    def slot(k: int, b) -> tuple[int, int, int] | None:
        if id(b) in est.placed:
            return (-2, est.placed[id(b)], 0)
        return (-1, k, 0) if len(b.values) > 1 else None

    intervals = [Interval(v.instruction.name, v.index, v.size, b.kind,
                           taken.get(id(b), v.start) if v is b.defining else v.start, v.end,
                           shape_bytes(v.instruction.shape), slot(k, b), v.instruction, v.last_use)
                 for k, b in enumerate(flow.buffers) for v in b.values]
    by_kind = dict(est.by_kind)
    by_kind["aliased"] = est.aliased
    origin = estimate_origin(compiled_for_gpu([i.attributes.get("backend_config", "") for i in module.instructions()]))
    if flow.order != "scheduled":
        notes.append(f"this module is not scheduled: the estimate assumes {flow.order}")
    return _build("estimate", origin, est.total_bytes, by_kind, flow, [i.name for i in flow.sequence], intervals,
                  None, notes, scope_of, source_of, {})


def _check_names(module: HloModule, xla: XlaAssignment, notes: list[str]) -> bool:
    """Whether XLA's record names this module's instructions (it belongs to this compile): its
    own, or the ops its asynchronous pairs run, where the record says which pair runs which
    (:attr:`XlaAssignment.wrapped`)."""
    names = {i.name for i in module.instructions()}
    wanted = [v.instruction for v in xla.values() if v.instruction]
    if not wanted:
        notes.append("XLA's buffer assignment names no instructions; the numbers are estimated instead")
        return False
    placed = {n for n, (_, done) in xla.wrapped.items() if done in names}
    missing = sorted({n for n in wanted if n not in names and n not in placed})
    if missing:
        unnamed = _sugar_starts(module)
        shown = ", ".join(missing[:3]) + (", …" if len(missing) > 3 else "")
        count = sum(1 for n in wanted if n in missing)
        if unnamed and len(missing) <= len(unnamed):
            notes.append(f"XLA's buffer assignment names {count} of its {len(wanted)} values after ops this module's "
                         f"text does not name ({shown}): this module runs {len(unnamed)} op(s) asynchronously "
                         f"({unnamed[0].name}, …), which this text writes as <op>-start/<op>-done with no name for the "
                         "op inside, while XLA's record names that op; this capture was saved without the list of "
                         "which pair runs which (memory.json's async_wrapped, written since hloviz read XLA's dump of "
                         "the compile for it): estimated instead. Capture it again, or open XLA's dump folder of "
                         "the compile (--xla_dump_to)")
        else:
            notes.append(f"XLA's buffer assignment names {count} of its {len(wanted)} values after instructions this "
                         f"module does not have ({shown}): it belongs to another compile; estimated instead")
        return False
    if xla.wrapped:
        pairs = sorted(xla.wrapped.items())
        shown = ", ".join(f"{n} by {start}/{done}" for n, (start, done) in pairs[:3]) + (", …" if len(pairs) > 3 else "")
        notes.append(f"asynchronous ops: XLA's record names {len(pairs)} op(s) that asynchronous pairs run ({shown}); "
                     "this module's text names only the pair, so each op's buffer is listed as its done's result")
    return True


def _sugar_starts(module: HloModule) -> list[Instruction]:
    """The ``<op>-start`` instructions written as sugar (the op they run has no name in the text)."""
    return [i for i in module.instructions() if i.opcode.endswith("-start")
            and any(c.synthetic for c in i.called_computations)]


def _from_xla(module: HloModule, flow: Dataflow, xla: XlaAssignment, notes: list[str],
              scope_of: Callable[[Instruction], str] | None,
              source_of: Callable[[Instruction], str] | None) -> MemoryReport:
    by_kind: dict[str, int] = dict(xla.bytes_by_kind())
    by_kind["aliased"] = xla.aliased_bytes
    kind_of: dict[str, str] = {}
    size_of: dict[str, int] = {}
    slot_of: dict[str, tuple[int, int, int]] = {}
    for a in xla.allocations:
        for v in a.values:
            kind_of[v.key] = a.kind
            size_of[v.key] = v.size
            slot_of[v.key] = (a.index, v.offset, v.size)
    live = xla.live
    peak_time = None
    xla_listed = None  # what XLA's own list at its peak adds up to
    if live is not None and live.ranges:
        intervals = []
        by_name = {i.name: i for i in module.instructions()}
        for key, (start, end) in live.ranges.items():
            name, _, idx = key.partition("{")
            index = tuple(int(i) for i in idx.rstrip("}").split(",") if i)
            inst = by_name.get(name)
            if inst is None and name in xla.wrapped:  # the op an asynchronous pair runs: its done's result
                name = xla.wrapped[name][1]
                inst = by_name.get(name)
            size = size_of.get(key, 0)
            intervals.append(Interval(name, index, size, _timeline_kind(kind_of.get(key)), start, end,
                                       shape_bytes(inst.shape) if inst is not None else size, slot_of.get(key), inst))
        sequence = list(live.sequence) or [i.name for i in flow.sequence]
        peak_time = live.peak_time
        xla_listed = sum(size for _name, size in live.peak)
    else:
        intervals = []
        for b in flow.buffers:
            kinds = {kind_of[v.key] for v in b.values if v.key in kind_of}
            kind = next((k for k in ("parameters", "outputs", "constants", "temporaries") if k in kinds), b.kind)
            for v in b.values:
                intervals.append(Interval(v.instruction.name, v.index, size_of.get(v.key, v.size),
                                           _timeline_kind(kind), v.start, v.end, shape_bytes(v.instruction.shape),
                                           slot_of.get(v.key), v.instruction, v.last_use))
        sequence = [i.name for i in flow.sequence]
    return _build("xla", xla.origin, xla.total_bytes, by_kind, flow, sequence, intervals, peak_time, notes,
                  scope_of, source_of, dict(xla.stats), xla_listed=xla_listed)


def _timeline_kind(kind: str | None) -> str:
    return kind if kind in TIMELINE_KINDS else "temporaries"


def _build(source: str, origin: str, total: int, by_kind: dict[str, int], flow: Dataflow, sequence: list[str],
           intervals: list[Interval], peak_time: int | None, notes: list[str],
           scope_of: Callable[[Instruction], str] | None, source_of: Callable[[Instruction], str] | None,
           stats: dict[str, int], xla_listed: int | None = None) -> MemoryReport:
    n = max(len(sequence), max((i.end for i in intervals), default=-1) + 1, 1)
    deltas = {k: [0] * (n + 1) for k in TIMELINE_KINDS}
    for kind, start, end, size in occupancy(intervals):
        d = deltas[kind]
        d[max(start, 0)] += size
        d[min(end, n - 1) + 1] -= size
    timeline: dict[str, tuple[int, ...]] = {}
    for k, d in deltas.items():
        live, col = 0, []
        for x in d[:n]:
            live += x
            col.append(live)
        timeline[k] = tuple(col)
    totals = [sum(timeline[k][t] for k in TIMELINE_KINDS) for t in range(n)]
    highest = max(totals)
    block, most = by_kind.get("temporaries", 0), max(timeline["temporaries"])
    if source == "xla" and block and most <= block:
        notes.append(f"packing: XLA's temporary block holds {block} bytes; at most {most} bytes of it are live at "
                     f"one position ({100 * (block - most) / block:.1f}% lost to how XLA packed them)")
    xla_said = peak_time is not None
    if peak_time is None or not 0 <= peak_time < n:
        peak_time = peak_moment(intervals)
    if totals[peak_time] != highest:  # XLA's sweep stopped below the highest point: report the highest
        first = totals.index(highest)
        if xla_said:  # XLA's own figure there: its list counts twice the bytes of a slot two values share
            there = (f"its list there adds up to {xla_listed} bytes, counting twice a slot two values share: "
                     f"{totals[peak_time]} are live" if xla_listed not in (None, totals[peak_time])
                     else f"{totals[peak_time]} bytes live")
            notes.append(f"XLA's live-range report calls position {peak_time} the peak ({there}); the highest point is "
                         f"position {first} ({highest} bytes), reported here")
        peak_time = first
    # largest first, then by name: the order of XLA's own live-range report
    at_peak = sorted(live_at(intervals, peak_time), key=lambda iv: (-iv.bytes, iv.instruction, iv.index))
    users = _last_users(flow.sequence)
    texts: dict[str, str] = {}  # one string per distinct shape text: thousands of buffers share a few
    buffers = tuple(_live_buffer(iv, scope_of, source_of, users, sequence, texts) for iv in at_peak)
    scopes: dict[str, int] = {}
    for b in buffers:
        parts = [p for p in b.scope.split("/") if p] if b.scope else []
        for k in range(1, len(parts) + 1):
            path = "/".join(parts[:k])
            scopes[path] = scopes.get(path, 0) + b.bytes
        if not parts:
            scopes["(no scope)"] = scopes.get("(no scope)", 0) + b.bytes
    peak_inst = sequence[peak_time] if peak_time < len(sequence) else ""
    note = _jax_peak_note(stats, totals[peak_time])
    if note:
        notes.append(note)
    by_kind = {**{k: by_kind.get(k, 0) for k in KINDS}, "aliased": by_kind.get("aliased", 0)}
    return MemoryReport(source, origin, total, by_kind, Peak(peak_time, peak_inst, totals[peak_time]),
                        tuple(sequence), timeline, buffers,
                        tuple(sorted(scopes.items(), key=lambda kv: (-kv[1], kv[0]))), flow.order, tuple(notes), stats)


def _jax_peak_note(stats: Mapping[str, int], peak: int) -> str:
    """Why JAX's ``peak_memory_in_bytes`` (``compiled.memory_analysis()``, kept in the capture's
    record) is not hloviz's peak, said with this module's numbers; "" when they agree or JAX
    gave none. hloviz's peak is the bytes live at one position of the schedule (parameters,
    outputs, temporaries, constants); on the CPU backend JAX's figure is the arguments and
    outputs less what they share, without temporaries (measured: ``jax_mlp``, 3076 B = 3072 B of
    arguments + 4 B of output, against 4224 B live while ``ynn_fusion`` runs)."""
    theirs = stats.get("peak_memory_in_bytes")
    if theirs is None or theirs == peak:
        return ""
    args, outs = stats.get("argument_size_in_bytes", 0), stats.get("output_size_in_bytes", 0)
    alias, temp = stats.get("alias_size_in_bytes", 0), stats.get("temp_size_in_bytes", 0)
    head = f"JAX's peak_memory_in_bytes is {theirs} bytes, hloviz's peak {peak} bytes: "
    if theirs == args + outs - alias:
        return head + (f"JAX's figure is the arguments ({args} bytes) and outputs ({outs} bytes) less what they "
                       f"share ({alias} bytes), without the {temp} bytes of temporaries; hloviz's peak is what is "
                       "live at one position of the schedule, temporaries included")
    return head + ("JAX's is XLA's own summary of the executable; hloviz's is the bytes live at one position of "
                   "the schedule (parameters, outputs, temporaries and constants), read from XLA's buffer assignment")


def _last_users(sequence: list[Instruction]) -> dict[str, str]:
    """Instruction name → the name of the last instruction of the flattened schedule reading it."""
    out: dict[str, str] = {}
    for inst in sequence:
        for o in inst.operands:
            out[o.name] = inst.name
    return out


def _live_buffer(iv: Interval, scope_of: Callable[[Instruction], str] | None,
                 source_of: Callable[[Instruction], str] | None, users: dict[str, str],
                 sequence: list[str], texts: dict[str, str]) -> LiveBuffer:
    inst = iv.inst
    if inst is None:
        return LiveBuffer(iv.instruction, iv.index, "", "", "", iv.bytes, iv.kind, iv.start, iv.end)
    shape = inst.shape
    for k in iv.index:
        shape = shape.tuple_shapes[k] if shape.is_tuple and k < len(shape.tuple_shapes) else shape
    last = sequence[iv.last_use] if 0 <= iv.last_use < len(sequence) else users.get(inst.name, "")
    return LiveBuffer(iv.instruction, iv.index, inst.metadata.op_name, scope_of(inst) if scope_of else "",
                      texts.setdefault(text := shape.to_text(layout=False), text), iv.bytes, iv.kind, iv.start, iv.end, last,
                      source_of(inst) if source_of else "")



