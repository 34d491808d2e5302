"""Pre→post mapping: what became of each op of the traced function.

Ops are identified by ``metadata.op_name`` (TensorFlow's op name, JAX's name stack), which XLA
keeps on the instructions that carry an op's work through optimization. The ops are every node
of the traced TF graph (a capture's ``info["tf_ops"]``) together with every op named in the
pre-optimization HLO; without a graph (JAX, plain HLO files) the names in the HLO are all there
is. Each op gets exactly one status (the words of :mod:`hloviz.analysis.glossary`):

* ``kernels``: its name is on (or inside) one or more kernels of the optimized module (names
  as XLA's inlining rewrites them, see :mod:`hloviz.analysis.pre_post.names`). A loop or a call
  counts the kernels named below it that its callees' ops (or no op) carry, not another op's
  written below its name (JAX's ``jvp()``), and the kernels without an op name its bodies run
  where XLA kept it (a TF ``while_grad``, whose body's ops are named under the forward loop; a
  ``lax.cond`` between two constants); a marker for XLA's partitioner (a ``Sharding`` custom
  call) counts none;
* ``folded``: computed at compile time, by XLA or TensorFlow's bridge (see
  :mod:`hloviz.analysis.pre_post.folding`);
* ``no_work``: an op that never computes anything — a ``Const`` literal, an argument or result,
  ``Identity``/``NoOp``/``ReadVariableOp``… plumbing, or an op whose pre-optimization
  instructions are all bookkeeping (its ``op_type`` names which);
* ``eliminated``: it did work before optimization and left no trace (a reshape that became a
  bitcast, dead code);
* ``no_op_name``: no kernel carries its name, but it did heavy work whose result was used, so
  hloviz cannot tell that nothing computes it (XLA rebuilds some instructions without their
  ``op_name``): never called eliminated, unless each of its instructions computes what one of a
  surviving op does (XLA computes it once, under that op's name: a second ``Sum`` of one mask).

An unnamed kernel whose data flow shows which op it computes (a weight-gradient convolution
XLA rebuilt, :mod:`hloviz.analysis.pre_post.unnamed_work`) counts as that op's kernel.

The statuses are tried in that order, so the counts always add up to the number of ops. The
synthetic names TF gives argument/result plumbing in HLO (``XLA_Args``, ``XLA_Retvals``) are
not ops of the function and are left out.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from collections.abc import Mapping as _Mapping
from dataclasses import dataclass, replace

from ...ir import HloModule, Instruction, called_closure
from ...opcodes import BODY_CALLERS, DOT, is_bookkeeping
from ..glossary import STATUSES as _STATUS_TERMS
from ..kernels import KernelReport
from ..kernels import kernels as find_kernels
from .folding import FoldingReport, constant_folding, merged_ops
from .names import post_names
from .unnamed_work import may_run_unnamed, unnamed_kernels

#: Every status an op can have, in the order outputs list them.
STATUSES: tuple[str, ...] = tuple(_STATUS_TERMS)
#: TF graph op types that never compute anything (status ``no_work`` unless a kernel carries them).
NO_WORK_TYPES = frozenset({
    "Const", "HostConst", "Identity", "IdentityN", "NoOp", "Placeholder", "PlaceholderWithDefault", "_Arg",
    "_Retval", "StopGradient", "PreventGradient", "Snapshot", "ReadVariableOp", "VarHandleOp",
    "AssignVariableOp", "PartitionedCall", "StatefulPartitionedCall", "_DeviceArg", "_DeviceRetval",
})


@dataclass(frozen=True)
class OpMapping:
    """One op: ``status`` (one of :data:`STATUSES`), the kernels holding its work, the folded
    constants holding it, its op type (TF graph or metadata; for an HLO-only op without one, its
    opcodes) and how many pre-opt HLO instructions it had (0 for a TF op that never reached the
    HLO)."""

    op_name: str
    op_type: str
    status: str
    kernels: tuple[str, ...] = ()
    constants: tuple[str, ...] = ()
    pre_instructions: int = 0


@dataclass(frozen=True)
class PrePostMapping:
    """Every op of the traced function, in the order it first appears (pre-opt HLO first, then
    the graph's ops without an instruction)."""

    ops: tuple[OpMapping, ...]

    def get(self, op_name: str) -> OpMapping | None:
        return next((m for m in self.ops if m.op_name == op_name), None)

    @property
    def counts(self) -> dict[str, int]:
        """Status → number of ops (every status present, zeros included)."""
        out = dict.fromkeys(STATUSES, 0)
        for m in self.ops:
            out[m.status] += 1
        return out

    @property
    def no_work_types(self) -> dict[str, int]:
        """Op type → how many ops of that type do no work, most frequent first."""
        out: dict[str, int] = {}
        for m in self.ops:
            if m.status == "no_work":
                out[m.op_type] = out.get(m.op_type, 0) + 1
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


#: Deprecated name of :class:`PrePostMapping`: it shadowed ``typing.Mapping`` wherever both were used.
Mapping = PrePostMapping


def pre_to_post(pre: HloModule, post: HloModule, *, info: _Mapping | None = None,
                kernel_report: KernelReport | None = None,
                folding: FoldingReport | None = None) -> PrePostMapping:
    """Map every pre-opt op of ``pre`` to what became of it in ``post``.

    ``kernel_report`` and ``folding`` are computed when not given (pass them to avoid doing the
    work twice); ``info`` is a capture's info, whose ``tf_ops`` adds TF ops absent from the HLO.
    """
    report = kernel_report if kernel_report is not None else find_kernels(post)
    folds = folding if folding is not None else constant_folding(pre, post, info)

    names = post_names(pre)
    computed = set(folds.computed)
    folded_into: dict[str, list[str]] = {}
    for f in folds.folded:
        for op in f.from_ops:
            folded_into.setdefault(op, []).append(f.constant)

    types, counts, opcodes, computes = _pre_ops(pre, names, info)
    lookup = _KernelLookup(pre, post, report, names,
                           markers={op for op, kinds in opcodes.items() if op not in computes and "custom-call" in kinds})
    folded_ops = folds.folded_ops
    heavy: set[str] | None = None  # worked out when the first op would be called eliminated

    out = []
    for op, typ in types.items():
        ks = lookup.kernels(op)
        cs = tuple(folded_into.get(op, ()))
        if not typ:
            typ = ", ".join(opcodes.get(op, ())) or "?"
        if ks:
            status = "kernels"
        elif cs or op in computed or op in folded_ops:
            status = "folded"
        elif typ in NO_WORK_TYPES or (counts.get(op) and op not in computes):
            status = "no_work"
        else:
            if heavy is None:
                heavy = may_run_unnamed(pre)
            status = "no_op_name" if op in heavy else "eliminated"
        out.append(OpMapping(op, typ, status, ks, cs, counts.get(op, 0)))
    unsure = {m.op_name for m in out if m.status == "no_op_name"}
    if unsure and (merged := merged_ops(pre, post, unsure)):  # computed once, under another op's name
        out = [replace(m, status="eliminated") if m.op_name in merged else m for m in out]
    return PrePostMapping(tuple(out))


def _read_out_of_kernels(post: HloModule, report: KernelReport) -> dict[str, list[str]]:
    """Op name → the kernels whose result a ``get-tuple-element`` of that name takes out. A kernel
    with several results carries its first op's name; XLA leaves another op's name on the
    element holding that op's result (an argmax's two-result reduction fusion, ``reduce_max``'s
    name on the element holding the max): that op's work runs in the kernel. (A ``bitcast`` of a
    kernel's result is no such element: a reshape that became one was eliminated.)"""
    kernels = {k.name for k in report.kernels}
    out: dict[str, list[str]] = {}
    for comp in post.computations:
        for inst in comp.instructions:
            if inst.opcode != "get-tuple-element" or not inst.metadata.op_name:
                continue
            source = inst
            while source.opcode in ("get-tuple-element", "bitcast") and source.operands:
                source = source.operands[0]
            if source.name in kernels and source is not inst:
                out.setdefault(inst.metadata.op_name, []).append(source.name)
    return out


class _KernelLookup:
    """The kernels holding each op's work, by its names after optimization (see the module
    docstring): its own names; else, for a loop, a call or a scope's own op, the names written
    below its own that are its callees' or nobody's; an unnamed kernel data flow gives it; else
    the kernel a ``get-tuple-element`` of its name takes its result out of."""

    def __init__(self, pre: HloModule, post: HloModule, report: KernelReport,
                 names: _Mapping[str, frozenset[str]], markers: set[str]) -> None:
        self.names, self.markers = names, markers
        self.where: dict[str, list[str]] = {}
        for k in report.kernels:
            for op in k.op_names:
                self.where.setdefault(op, []).append(k.name)
        self.ordered = sorted(self.where)  # for scope lookups by prefix
        self.read_out = _read_out_of_kernels(post, report)
        self.inside = _callee_ops(pre)
        self.carried_by: dict[str, set[str]] = {}  # a post-opt name → the pre-opt ops that may carry it
        for pre_op, candidates in names.items():
            for c in candidates:
                self.carried_by.setdefault(c, set()).add(pre_op)
        self.by_flow = unnamed_kernels(pre, post, _ops_with_contractions(report))
        self.run_by = _run_by_callers(post, report)

    def kernels(self, op: str) -> tuple[str, ...]:
        own_names = self.names.get(op, frozenset({op}))
        ks = _kernels_of(own_names, self.where)
        if not ks and op not in self.markers:  # a loop, a call, a scope's own op: what runs under its name
            own = self.inside.get(op)  # (a caller: not another op's kernels its name is written above)
            ks = _kernels_below(own_names, self.where, self.ordered,
                                None if own is None else (lambda n: not self.carried_by.get(n, own).isdisjoint(own)))
        if run := _kernels_of(own_names, self.run_by):  # what its surviving loop or branches run unnamed
            ks = tuple(dict.fromkeys((*ks, *run)))
        if op in self.by_flow:
            ks = tuple(dict.fromkeys((*self.by_flow[op], *ks)))
        return ks or _kernels_of(own_names, self.read_out)


def _run_by_callers(post: HloModule, report: KernelReport) -> dict[str, list[str]]:
    """Op name → the kernels without an op name that run in the bodies of the nearest ``while``,
    ``conditional`` or ``call`` of that name above them. A loop or a branch XLA keeps runs its
    kernels, named or not: a ``lax.cond`` choosing between two constants kept its conditional,
    whose branches each run one unnamed ``copy``, and it was called eliminated."""
    callers = {c.name: c.caller for c in report.computations}
    by_name = {inst.name: inst for comp in post.computations for inst in comp.instructions
               if inst.opcode in BODY_CALLERS}
    out: dict[str, list[str]] = {}
    for k in report.kernels:
        if k.op_names:
            continue
        comp, seen = k.computation, set()
        while (caller := by_name.get(callers.get(comp) or "")) is not None and comp not in seen:
            seen.add(comp)
            if caller.metadata.op_name:
                out.setdefault(caller.metadata.op_name, []).append(k.name)
                break
            comp = caller.parent.name if caller.parent is not None else ""
    return out


def _ops_with_contractions(report: KernelReport) -> set[str]:
    """Op names a convolution or dot kernel of the optimized module carries (they need no data flow)."""
    return {op for k in report.kernels if k.opcode == "convolution" or k.opcode in DOT for op in k.op_names}


def _pre_ops(pre: HloModule, names: _Mapping[str, frozenset[str]], info: _Mapping | None
             ) -> tuple[dict[str, str], dict[str, int], dict[str, dict[str, None]], set[str]]:
    """The pre-opt ops to map, read from ``pre``'s metadata and the capture's ``tf_ops``:
    op → type, op → instruction count, op → opcodes (in order), and the ops with an
    instruction doing work (not bookkeeping)."""
    types: dict[str, str] = {}
    counts: dict[str, int] = {}
    opcodes: dict[str, dict[str, None]] = {}
    computes: set[str] = set()
    for inst in pre.instructions():
        op = inst.metadata.op_name
        if op not in names:  # unnamed, XLA_Args/XLA_Retvals, or only naming parameters
            continue
        counts[op] = counts.get(op, 0) + 1
        opcodes.setdefault(op, {})[inst.opcode] = None
        if not is_bookkeeping(inst.opcode) and not _annotation(inst):
            computes.add(op)
        if not types.get(op):
            types[op] = inst.metadata.op_type
    tf_types: _Mapping[str, str] = (info or {}).get("tf_ops") or {}
    for op, typ in tf_types.items():
        if typ:  # the graph's type wins over the metadata's
            types[op] = typ
        else:
            types.setdefault(op, "")
    return types, counts, opcodes, computes


#: Custom calls that only mark a value for XLA's partitioner (``jax.lax.with_sharding_constraint``,
#: NNX's sharding of a dropout key): XLA removes them; they compute nothing, and no kernel named
#: below theirs is theirs (NNX's marker named ``jit(f)`` had all 185 kernels of its step).
_ANNOTATION_TARGETS = frozenset({"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"})


def _annotation(inst: Instruction) -> bool:
    return inst.opcode == "custom-call" and inst.attributes.get("custom_call_target", "").strip('"') in _ANNOTATION_TARGETS


def _kernels_of(candidates: frozenset[str], where: dict[str, list[str]]) -> tuple[str, ...]:
    """Kernels carrying one of the op's post-opt names."""
    found: dict[str, None] = {}
    for name in sorted(candidates):
        for k in where.get(name, ()):
            found[k] = None
    return tuple(found)


def _kernels_below(candidates: frozenset[str], where: dict[str, list[str]], ordered: list[str],
                   keep: Callable[[str], bool] | None = None) -> tuple[str, ...]:
    """Kernels carrying a name inside one of the op's names (``lstm/while`` → its body's
    ``lstm/while/body/MatMul``: a loop runs its body's kernels; ``jit(f)/jit(relu)`` → the
    ``jit(f)/jit(relu)/max`` XLA's inlining named), the names ``keep`` keeps."""
    found: dict[str, None] = {}
    for c in sorted(candidates):
        scope = f"{c}/"
        i = bisect_left(ordered, scope)
        while i < len(ordered) and ordered[i].startswith(scope):
            if keep is None or keep(ordered[i]):
                for k in where[ordered[i]]:
                    found[k] = None
            i += 1
    return tuple(found)


def _callee_ops(pre: HloModule) -> dict[str, set[str]]:
    """A calling op (a ``call``, ``while``, ``conditional``) → the op names inside what it calls.
    A name below the caller's that is another op's, outside its callees, is not the caller's
    work: JAX's ``jit(f)/jvp()``, a ``call`` of an argmax, had every kernel of the forward pass
    (``jit(f)/jvp()/Siamese/…``, 13 for 2)."""
    out: dict[str, set[str]] = {}
    for inst in pre.instructions():
        op = inst.metadata.op_name
        if op and inst.opcode in BODY_CALLERS:
            names = out.setdefault(op, set())
            for comp in called_closure(inst.called_computations):
                names.update(i.metadata.op_name for i in comp.instructions)
    return out
