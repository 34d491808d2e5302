"""Pre→post mapping: where each pre-optimization op's work went.

Ops are identified by ``metadata.op_name`` (TensorFlow's op name, JAX's name stack), which XLA
keeps on the instructions that carry an op's work through optimization. Every op named in the
pre-optimization module (and, given a capture's ``info["tf_ops"]``, every TF op of the traced
graph) gets one status:

* ``kernels``: its name is on (or inside) one or more kernels of the optimized module (names
  as XLA's inlining rewrites them, see :mod:`hloviz.analysis.names`);
* ``folded``: its work was computed at compile time into a constant (see
  :mod:`hloviz.analysis.folding`);
* ``eliminated``: no trace left — a reshape that became a bitcast, an identity, dead code.

An op that is only a literal (a TF ``Const``, which never reaches the HLO as itself but as
literals of its users; a named HLO ``constant``) counts as ``folded`` unless a kernel carries
its name. The graph's arguments (``Placeholder``, ``_Arg``, ``_Retval``) and
the synthetic names TF gives argument/result plumbing in HLO (``XLA_Args``, ``XLA_Retvals``)
are not ops and are left out.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from typing import Mapping as _Mapping

from ..ir import HloModule
from .folding import FoldingReport, constant_folding
from .kernels import KernelReport, kernels as find_kernels
from .names import post_names

STATUSES = ("kernels", "folded", "eliminated")
#: TF graph op types that are the function's arguments/results, not ops.
_TF_ARGUMENTS = frozenset({"Placeholder", "_Arg", "_Retval", "NoOp"})


@dataclass(frozen=True)
class OpMapping:
    """One pre-opt op: ``status`` (one of :data:`STATUSES`), the kernels holding its work, the
    folded constants holding it, its op type (metadata or TF graph) and how many pre-opt HLO
    instructions it had (0 for a TF op that never reached the HLO)."""

    op_name: str
    op_type: str
    status: str
    kernels: tuple[str, ...] = ()
    constants: tuple[str, ...] = ()
    pre_instructions: int = 0


@dataclass(frozen=True)
class PrePostMapping:
    """Every pre-opt op, in the order it first appears (pre-opt HLO first, then TF-only ops)."""

    ops: tuple[OpMapping, ...]

    def get(self, op_name: str) -> OpMapping | None:
        return next((m for m in self.ops if m.op_name == op_name), None)

    def with_status(self, status: str) -> tuple[OpMapping, ...]:
        return tuple(m for m in self.ops if m.status == status)

    @property
    def counts(self) -> dict[str, int]:
        """Status → number of ops (every status present, zeros included)."""
        out = {s: 0 for s in STATUSES}
        for m in self.ops:
            out[m.status] += 1
        return out


#: Deprecated name of :class:`PrePostMapping`: it shadowed ``typing.Mapping`` wherever both were used.
Mapping = PrePostMapping


def pre_to_post(pre: HloModule, post: HloModule, *, info: _Mapping | None = None,
                kernel_report: KernelReport | None = None,
                folding: FoldingReport | None = None) -> Mapping:
    """Map every pre-opt op of ``pre`` to what became of it in ``post``.

    ``kernel_report`` and ``folding`` are computed when not given (pass them to avoid doing the
    work twice); ``info`` is a capture's info, whose ``tf_ops`` adds TF ops absent from the HLO.
    """
    report = kernel_report if kernel_report is not None else find_kernels(post)
    folds = folding if folding is not None else constant_folding(pre, post, info)

    where: dict[str, list[str]] = {}
    for k in report.kernels:
        for op in k.op_names:
            where.setdefault(op, []).append(k.name)
    ordered = sorted(where)  # for scope lookups by prefix
    names = post_names(pre)
    computed = set(folds.computed)
    folded_into: dict[str, list[str]] = {}
    for f in folds.folded:
        for op in f.from_ops:
            folded_into.setdefault(op, []).append(f.constant)

    types: dict[str, str] = {}
    counts: dict[str, int] = {}
    computes: set[str] = set()  # ops with an instruction other than a literal
    for inst in pre.instructions():
        op = inst.metadata.op_name
        if op not in names:  # unnamed, XLA_Args/XLA_Retvals, or only naming parameters
            continue
        counts[op] = counts.get(op, 0) + 1
        if inst.opcode != "constant":
            computes.add(op)
        if not types.get(op):
            types[op] = inst.metadata.op_type
    tf_types: _Mapping[str, str] = (info or {}).get("tf_ops") or {}
    for op, typ in tf_types.items():
        if typ not in _TF_ARGUMENTS and not types.get(op):
            types[op] = typ

    out = []
    for op, typ in types.items():
        ks = _kernels_of(names.get(op, frozenset({op})), where, ordered)
        cs = tuple(folded_into.get(op, ()))
        literal = (typ == "Const" and not counts.get(op)) or (counts.get(op) and op not in computes)
        status = "kernels" if ks else "folded" if cs or literal or op in computed else "eliminated"
        out.append(OpMapping(op, typ, status, ks, cs, counts.get(op, 0)))
    return Mapping(tuple(out))


def _kernels_of(candidates: frozenset[str], where: dict[str, list[str]], ordered: list[str]) -> tuple[str, ...]:
    """Kernels carrying one of the op's post-opt names; failing that, a name inside its scope
    (``jit(f)/jit(relu)`` → ``jit(f)/jit(relu)/max``: a call inlined into its body's ops)."""
    found: dict[str, None] = {}
    for name in sorted(candidates):
        for k in where.get(name, ()):
            found[k] = None
    if not found:
        for c in sorted(candidates):
            scope = f"{c}/"
            i = bisect_left(ordered, scope)
            while i < len(ordered) and ordered[i].startswith(scope):
                for k in where[ordered[i]]:
                    found[k] = None
                i += 1
    return tuple(found)
