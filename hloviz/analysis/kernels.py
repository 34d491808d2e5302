"""What actually runs: the kernels of an (optimized) module.

A *kernel* is one instruction of an executed computation that does work on its own: a fusion
(whatever its fused computation holds runs as one kernel), or an unfused work op (``dot``,
``convolution``, ``custom-call``, ``reduce``, ``sort``, ``copy``, a lone ``add`` …).

Not kernels:

* bookkeeping ops that run nothing — :data:`hloviz.opcodes.BOOKKEEPING` (``parameter``,
  ``constant``, ``tuple``, ``get-tuple-element``, ``bitcast``, ``after-all``,
  ``add-dependency``, ``opt-barrier``, ``partition-id``, ``replica-id``, ``domain``,
  ``get-/set-dimension-size``);
* control flow (``while``, ``conditional``, ``call``, ``async-start``): their called
  computations are *executed* and their kernels are reported there, per body;
* the second half of an async pair (``*-done``, ``*-update``): the work is counted once, at
  the start instruction. A ``*-start`` written as sugar (``fusion-start(...), calls=f``, which
  XLA's parser wraps in an async computation) is one kernel: the op it wraps, under its name.

On GPU, a ``call`` into a ``command_buffer`` computation runs its kernels as one recorded
command buffer (a CUDA graph): they are still one kernel each, reported in that computation
(role ``command buffer``). ``backend_kind`` says how the backend runs a kernel, from XLA's own
annotations (a Triton GEMM, a cuDNN graph, a cuBLAS call; see :mod:`hloviz.analysis.backends`).

Executed computations are the entry and, transitively, the bodies, conditions, branches and
callees of control flow (:mod:`.executed`: which, and how many times each runs). A fused
computation runs inside its fusion, and a ``reduce``'s ``to_apply`` inside the reduce: neither
is a kernel of its own.

Bytes come from shapes (operands' byte sizes read, the result's written; no layout padding, no
reuse). FLOPs are counted as XLA's cost analysis counts them (:mod:`hloviz.analysis.flops`);
data movement counts 0. A report's totals count each kernel once a run (:attr:`Kernel.runs`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from ..ir import Computation, HloModule, Instruction, called_closure
from ..opcodes import ASYNC_TAILS, BODY_CALLERS, is_bookkeeping
from .backends import backend_name, kind_text
from .executed import ExecutedComputation, executed, runs_of, totals
from .flops import flops
from .opnames import common_scope

#: Deprecated name of :data:`hloviz.opcodes.BODY_CALLERS` (``opcodes.CONTROL_FLOW`` is the wider
#: display category); kept so code written against it keeps working.
CONTROL_FLOW = BODY_CALLERS
#: TensorFlow's names for the arguments and results plumbing; never a user's op.
SYNTHETIC_OP_NAMES = frozenset({"XLA_Args", "XLA_Retvals"})


@dataclass(frozen=True)
class Kernel:
    """One kernel: a fusion or an unfused work op.

    ``kind`` is the fusion kind (``kLoop``, ``kInput``, ``kOutput``, ``kCustom``) for a fusion
    and the opcode otherwise. ``instructions`` counts the instructions doing work it runs (1 for
    an unfused instruction; for a fusion every non-bookkeeping instruction of the fused
    computation, nested fusions and calls opened — :func:`work_instructions`), the number every
    output prints as "N instructions"; ``opcodes`` is their histogram as ``(opcode, count)`` pairs, most frequent
    first (see :attr:`histogram`). ``op_names`` are the framework op names (metadata) of the
    kernel and everything inside it (constants and parameters aside), in text order — the ops
    whose work it runs, counted by :attr:`ops`; ``sources``
    the distinct ``(source_file, source_line)`` pairs of that metadata.
    """

    name: str
    computation: str
    opcode: str
    kind: str
    shape: str
    instructions: int
    opcodes: tuple[tuple[str, int], ...]
    bytes_read: int
    bytes_written: int
    flops: int
    op_names: tuple[str, ...]
    sources: tuple[tuple[str, int], ...]
    fused_computation: str | None = None
    target: str | None = None
    #: XLA's backend kind (``__triton_gemm``, ``__cudnn$fusion``, ``__cublas$gemm`` …) or None.
    backend_kind: str | None = None
    #: How many times it runs when the entry runs once: a computation that two ``call``s share
    #: runs twice (a module before optimization: a jitted function a model calls six times is one
    #: computation); a loop body once a run of its loop (the trip count is not XLA's to say here).
    runs: int = 1

    @property
    def backend(self) -> str | None:
        """The backend kind by the name users know (``Triton GEMM``, ``cuDNN``, ``cuBLAS GEMM``)."""
        return backend_name(self.backend_kind)

    @property
    def kind_text(self) -> str:
        """The kind as text outputs write it: ``kCustom fusion · YNNPACK``, ``dot``
        (:func:`hloviz.analysis.backends.kind_text`)."""
        return kind_text(self.kind, self.backend_kind, fusion=self.is_fusion)

    @property
    def layer(self) -> str:
        """The layer its ops belong to, from their names (:func:`hloviz.analysis.opnames.common_scope`)."""
        return common_scope(self.op_names)

    @property
    def ops(self) -> int:
        """How many ops (distinct ``op_name`` values) have work in this kernel."""
        return len(self.op_names)

    @property
    def histogram(self) -> dict[str, int]:
        """``opcodes`` as a dict: opcode → count."""
        return dict(self.opcodes)

    @property
    def is_fusion(self) -> bool:
        return self.fused_computation is not None


#: What ``stats --sort`` orders the kernels by, biggest first: each kernel's own number.
KERNEL_SORTS = {
    "flops": lambda k: k.flops,
    "bytes": lambda k: k.bytes_read + k.bytes_written,
    "instructions": lambda k: k.instructions,
}


def sorted_kernels(kernels: Iterable[Kernel], by: str | None) -> list[Kernel]:
    """``kernels`` biggest first by ``by`` (a key of :data:`KERNEL_SORTS`; ties keep execution
    order), or in execution order when ``by`` is None."""
    if by is None:
        return list(kernels)
    key = KERNEL_SORTS[by]
    return sorted(kernels, key=lambda k: -key(k))


@dataclass(frozen=True)
class KernelReport:
    """The kernels of one module, in execution order (a body's kernels follow its caller)."""

    module: str
    kernels: tuple[Kernel, ...]
    computations: tuple[ExecutedComputation, ...]
    #: Bytes read, bytes written and FLOPs when the entry runs once (:func:`~.executed.totals`:
    #: one branch of a conditional); None: each kernel once a run.
    totals: tuple[int, int, int] | None = None

    @property
    def count(self) -> int:
        return len(self.kernels)

    @property
    def fusions(self) -> tuple[Kernel, ...]:
        return tuple(k for k in self.kernels if k.is_fusion)

    @property
    def unfused(self) -> tuple[Kernel, ...]:
        return tuple(k for k in self.kernels if not k.is_fusion)

    # The totals count each kernel once a run (:attr:`Kernel.runs`), a conditional's largest
    # branch only, as XLA's cost analysis does.
    @property
    def bytes_read(self) -> int:
        return self.totals[0] if self.totals is not None else sum(k.bytes_read * k.runs for k in self.kernels)

    @property
    def bytes_written(self) -> int:
        return self.totals[1] if self.totals is not None else sum(k.bytes_written * k.runs for k in self.kernels)

    @property
    def flops(self) -> int:
        return self.totals[2] if self.totals is not None else sum(k.flops * k.runs for k in self.kernels)

    def in_computation(self, name: str) -> tuple[Kernel, ...]:
        """The kernels that run in computation ``name`` (e.g. a while body)."""
        return tuple(k for k in self.kernels if k.computation == name)

    def by_name(self, name: str) -> Kernel | None:
        return next((k for k in self.kernels if k.name == name.lstrip("%")), None)


def is_kernel(inst: Instruction) -> bool:
    """Does this instruction run as a kernel of its own (when its computation is executed)?"""
    op = inst.opcode
    return not (is_bookkeeping(op) or op in BODY_CALLERS or op in ASYNC_TAILS or op.endswith(("-done", "-update")))


def kernels(module: HloModule) -> KernelReport:
    """The kernels of ``module``: what runs when the entry is executed."""
    if module.entry is None:
        return KernelReport(module.name, (), ())
    found: list[Kernel] = []
    ran: list[ExecutedComputation] = []
    runs = runs_of(module.entry)
    from .frames import frame_lines

    frames = frame_lines(module)  # (each instruction's own line, where XLA printed frame tables)
    for comp in executed(module.entry, None, "entry", set(), ran):
        found.extend(_kernel(inst, comp, runs.get(comp.name, 1), frames) for inst in comp.instructions if is_kernel(inst))
    read, written, flop = totals(module.entry, computation_sums(found), 3)
    return KernelReport(module.name, tuple(found), tuple(ran), (read, written, flop))


def computation_sums(kernels: Iterable[Kernel]) -> dict[str, tuple[int, int, int]]:
    """Computation → the bytes read, bytes written and FLOPs of its kernels, once each: what
    :func:`~.executed.totals` and :func:`~.executed.counted_runs` weigh by the computation's runs."""
    own: dict[str, tuple[int, int, int]] = {}
    for k in kernels:
        r, w, f = own.get(k.computation, (0, 0, 0))
        own[k.computation] = (r + k.bytes_read, w + k.bytes_written, f + k.flops)
    return own


def work_and_op_names(module: HloModule) -> tuple[int, set[str]]:
    """What :func:`hloviz.analysis.summary.count` reads of :func:`kernels`, without making each
    :class:`Kernel` (FLOPs, bytes, shapes, sources): the number of work instructions of all the
    kernels (:attr:`Kernel.instructions` summed) and their op names (:attr:`Kernel.op_names`
    joined). The pre-optimization module, counted for every picture and table, is all
    unfused kernels, whose every other field nobody reads."""
    if module.entry is None:
        return 0, set()
    work = 0
    names: set[str] = set()
    for comp in executed(module.entry, None, "entry", set(), []):
        for inst in comp.instructions:
            if not is_kernel(inst):
                continue
            if inst.called_computations:
                work += len(work_instructions(inst))
                inside: Iterable[Instruction] = (inst, *_inner(inst))
            else:  # work_instructions and kernel_instructions are [inst]
                work += 1
                inside = (inst,)
            for i in inside:
                if i.opcode == "constant" or i.opcode == "parameter":
                    continue  # as in _provenance
                name = i.metadata.op_name
                if name and name not in SYNTHETIC_OP_NAMES:
                    names.add(name)
    return work, names


def kernel_instructions(inst: Instruction) -> list[Instruction]:
    """A kernel's instruction and every instruction that runs as part of it (fused
    computations, callees, reducers): where its op names (:attr:`Kernel.op_names`) come from."""
    return [inst, *_inner(inst)]


def _inner(inst: Instruction) -> Iterator[Instruction]:
    """Every instruction that runs as part of ``inst``: fused computations, callees, reducers."""
    for comp in called_closure(inst.called_computations):
        yield from comp.instructions


def _work_ops(comp: Computation, seen: set[str] | None = None) -> Iterator[Instruction]:
    """Work instructions of a fused computation; nested fusions and calls are opened, not counted.

    Depth first with an explicit stack (fusions may nest thousands deep)."""
    seen = set() if seen is None else seen
    stack: list[Iterator[Computation | Instruction]] = [iter([comp])]
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
        elif isinstance(item, Computation):
            if item.name not in seen:
                seen.add(item.name)
                stack.append(iter(item.instructions))
        elif item.opcode in ("fusion", "call"):
            stack.append(iter(item.called_computations))
        elif not is_bookkeeping(item.opcode):
            yield item


def work_instructions(inst: Instruction) -> list[Instruction]:
    """The instructions doing work that run as kernel ``inst``: a fusion's fused instructions
    (bookkeeping aside, nested fusions and calls opened), else ``inst`` itself. Every count of
    a kernel's size (stats, JSON, picture labels, report) is the length of this list. A
    ``*-start`` written as sugar around a fusion counts the fusion's instructions."""
    op = _wrapped(inst)
    if op.opcode == "fusion":
        return [w for c in op.called_computations for w in _work_ops(c)]
    return [inst]


def _wrapped(inst: Instruction) -> Instruction:
    """The op a ``*-start`` written as sugar runs (the root of the computation XLA's parser made
    for it); ``inst`` itself otherwise."""
    for c in inst.called_computations:
        if c.synthetic and c.root is not None:
            return c.root
    return inst


def _kernel(inst: Instruction, comp: Computation, runs: int = 1,
            frames: Mapping[int, tuple[str, int]] | None = None) -> Kernel:
    op = _wrapped(inst)
    work = work_instructions(inst)
    if op.opcode == "fusion":
        fused = op.called_computations[0].name if op.called_computations else None
        kind = op.fusion_kind or "fusion"
    else:
        fused = None
        kind = inst.opcode
    counts: dict[str, int] = {}
    for w in work:
        counts[w.opcode] = counts.get(w.opcode, 0) + 1
    histogram = tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    names, sources = _provenance([inst, *_inner(inst)], frames or {})
    target = inst.attributes.get("custom_call_target")
    return Kernel(
        name=inst.name,
        computation=comp.name,
        opcode=inst.opcode,
        kind=kind,
        shape=op.shape.to_text(layout=False),
        instructions=len(work),
        opcodes=histogram,
        bytes_read=sum(o.shape.byte_size for o in inst.operands),
        bytes_written=op.shape.byte_size,
        flops=sum(flops(w) for w in work),
        op_names=names,
        sources=sources,
        fused_computation=fused,
        target=target.strip('"') if target else None,
        backend_kind=op.backend_kind,
        runs=runs,
    )


def _provenance(insts: Iterable[Instruction],
                frames: Mapping[int, tuple[str, int]]) -> tuple[tuple[str, ...], tuple[tuple[str, int], ...]]:
    """The op names of ``insts`` and where each was written (its own stack frame, ``frames``,
    or its metadata's source position)."""
    from .frames import instruction_source

    names: dict[str, None] = {}
    sources: dict[tuple[str, int], None] = {}
    for i in insts:
        if i.opcode in ("constant", "parameter"):
            continue  # a constant inside carries the name of the op folded into it, not its work
        md = i.metadata
        if md.op_name and md.op_name not in SYNTHETIC_OP_NAMES:
            names[md.op_name] = None
        where = instruction_source(i, frames)
        if where is not None:
            sources[where] = None
    return tuple(names), tuple(sources)


# --- FLOP estimates -------------------------------------------------------------------------
