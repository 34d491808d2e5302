"""XLA's total for a module without XLA's records: its buffer assignment, replayed.

:mod:`.assign` gives every buffer the allocation XLA's ``BufferAssigner`` would (entry parameters,
constants, outputs, tuples of their own; temporaries into outputs and donated parameters where
their live ranges allow, the rest packed by the heap simulator, :mod:`.heap`); this module sums
them by kind as XLA's record does, and keeps what the report's timeline needs.

How close it comes is measured on the corpus ``samples/memory_corpus.py`` builds (programs the
rules were not written against among them, each with XLA's own buffer assignment):
:data:`CORPUS_ACCURACY`, which ``hloviz memory`` prints with every estimate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from .dataflow import Dataflow, thread_local_slots
from .records import KINDS

if TYPE_CHECKING:
    from .assign import Assignment

__all__ = ["CORPUS_ACCURACY", "GPU_ACCURACY", "Accuracy", "Estimate", "compiled_for_gpu", "estimate", "estimate_origin",
           "shared_starts"]


class Accuracy(NamedTuple):
    """The estimate against XLA's total on the corpus: worst and median absolute error (percent)."""

    worst: float
    median: float
    programs: int


#: Measured by ``tests/test_memory_corpus.py`` (which fails when this drifts from the corpus).
CORPUS_ACCURACY = Accuracy(worst=0.0, median=0.0, programs=47)
#: The same rules on modules XLA compiled for a GPU, against XLA:GPU's own record of each
#: (``samples/captures/gpu``, an H200): XLA:GPU assigns some buffers its own way (a loop's
#: predicate and counters, async copies), so the CPU's rules come less close. Measured by
#: ``tests/test_gpu_captures.py`` (which fails when this drifts from those captures).
GPU_ACCURACY = Accuracy(worst=68.89, median=0.67, programs=11)


def compiled_for_gpu(kernel_configs: list[str]) -> bool:
    """Whether the ``backend_config`` strings of a module's instructions are XLA:GPU's: its
    ``GpuBackendConfig`` names the stream each kernel runs on (``operation_queue_id``), which
    no other backend writes."""
    return any('"operation_queue_id"' in c for c in kernel_configs)


def estimate_origin(gpu: bool) -> str:
    """How an estimate was made and how close such estimates came, for the report's first line."""
    acc = GPU_ACCURACY if gpu else CORPUS_ACCURACY
    where = (f"on {acc.programs} programs compiled for a GPU (the rules are XLA:CPU's)" if gpu
             else f"on {acc.programs} programs")
    return (f"estimated from the HLO text by XLA's buffer-assignment rules (estimated: within ±{acc.worst:.2f}% "
            f"{where}, median ±{acc.median:.2f}%, against XLA's own record)")


@dataclass(frozen=True)
class Estimate:
    """Bytes by allocation kind (the keys of :data:`~hloviz.analysis.memory.records.KINDS`),
    the temporary block's size and how many temporaries went into output allocations."""

    by_kind: dict[str, int]
    aliased: int
    heap_bytes: int
    reused_outputs: int
    #: Buffer id → the number of the output / donated-parameter allocation it was placed in (its
    #: own included); buffers of one allocation never overlap in time but where one takes over.
    placed: dict[int, int] = field(default_factory=dict)
    #: :func:`shared_starts` of the module.
    starts: dict[int, int] = field(default_factory=dict)

    @property
    def total_bytes(self) -> int:
        return sum(self.by_kind.values())


def shared_starts(flow: Dataflow, result: Assignment) -> dict[int, int]:
    """Buffer id → the time from which it needs bytes of its own: one past its start where the
    assignment (:mod:`.assign`) wrote it over an operand's buffer that dies where it begins — in
    the temporary block (the heap's ``ShareWith``) or in one allocation; each operand's buffer
    taken over once. (A rule of its own here, looser than the assignment's — any loop fusion —
    took a transformer block's dot and the fusion reading it through a bitcast for one set of
    bytes, which XLA put side by side: the peak came out 19% under XLA's record.)"""
    taken: set[int] = set()
    out: dict[int, int] = {}
    for b in flow.buffers:
        if b.kind not in ("temporaries", "outputs"):
            continue
        own = result.allocation_of.get(id(b))
        over = result.heap_shared.get(id(b.defining))
        for operand in b.defining.instruction.operands:
            ob = flow.buffer_of.get(operand)
            if ob is None or id(ob) in taken or ob.kind != "temporaries" or ob.end != b.start:
                continue
            if (own is not None and own is result.allocation_of.get(id(ob))) or (
                    over is not None and any(id(v) == over for v in ob.values)):
                taken.add(id(ob))
                out[id(b)] = b.start + 1
                break
    return out


def estimate(flow: Dataflow) -> Estimate:
    """XLA's allocations for ``flow``'s module, by XLA's buffer assignment (:mod:`.assign`)."""
    from .assign import assign

    result = assign(flow)
    by_kind: dict[str, int] = dict.fromkeys(KINDS, 0)
    aliased = 0
    placed: dict[int, int] = {}
    reused = 0
    for a in result.allocations:
        by_kind[a.kind] += a.size
        if a.kind == "parameters" and any(b.aliased for b in a.buffers):
            aliased += a.size
        if a.kind in ("outputs", "parameters") and a.reusable:
            for b in a.buffers:
                placed[id(b)] = a.number
                reused += b.kind == "temporaries"
    by_kind["temporaries"] = result.heap_bytes
    for kind, size in thread_local_slots(flow.module):
        by_kind[kind] += size
    return Estimate(by_kind, aliased, result.heap_bytes, reused, placed, shared_starts(flow, result))
