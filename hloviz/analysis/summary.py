"""All analyses of one capture at once, and the one-line verdict ``hloviz stats`` prints.

:func:`analyze` takes the pre- and post-optimization modules (either may be missing: a single
optimized module still has kernels; a single pre-opt module only has counts) and returns an
:class:`Analysis`. The verdict only says what the modules show: with no pre-opt module it does
not claim how many ops there were, and with no optimized module it does not count kernels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping as _Mapping

from ..errors import InputError
from ..ir import HloModule
from .folding import FoldingReport, constant_folding
from .kernels import Kernel, KernelReport, kernels
from .mapping import Mapping, pre_to_post


@dataclass(frozen=True)
class ModuleCounts:
    """Sizes of one module: ``instructions`` (all, every computation), ``computations``,
    ``work`` (instructions that do work in executed computations, fused ones included) and
    ``ops`` (distinct framework op names among them; 0 when the HLO carries no op names)."""

    name: str
    computations: int
    instructions: int
    work: int
    ops: int


@dataclass(frozen=True)
class Analysis:
    """Everything hloviz knows about what XLA did: counts, kernels, folding, mapping, verdict."""

    pre: ModuleCounts | None
    post: ModuleCounts | None
    kernels: KernelReport | None
    folding: FoldingReport | None
    mapping: Mapping | None
    verdict: str


def count(module: HloModule, report: KernelReport | None = None) -> ModuleCounts:
    """The :class:`ModuleCounts` of ``module`` (``report``: its kernels, if already computed)."""
    report = report if report is not None else kernels(module)
    names = {op for k in report.kernels for op in k.op_names}
    return ModuleCounts(module.name, len(module.computations), module.instruction_count,
                        sum(k.ops for k in report.kernels), len(names))


def analyze(pre: HloModule | None, post: HloModule | None, *, info: _Mapping | None = None) -> Analysis:
    """Run every analysis that the given modules allow. ``info``: a capture's info (its
    ``tf_ops``/``tf_inputs`` add the folds TensorFlow made before XLA and TF-only ops)."""
    if pre is None and post is None:
        raise InputError("nothing to analyze: neither a pre- nor a post-optimization module was given")
    post_kernels = kernels(post) if post is not None else None
    pre_counts = count(pre) if pre is not None else None
    post_counts = count(post, post_kernels) if post is not None else None
    folding = mapping = None
    if pre is not None and post is not None:
        folding = constant_folding(pre, post, info)
        mapping = pre_to_post(pre, post, info=info, kernel_report=post_kernels, folding=folding)
    verdict = _verdict(pre_counts, post_counts, post_kernels, folding)
    return Analysis(pre_counts, post_counts, post_kernels, folding, mapping, verdict)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def describe_kernel(k: Kernel, top: int = 3) -> str:
    """``kLoop fusion: 1000 add, broadcast`` / ``dot``: a kernel in a few words."""
    if not k.is_fusion:
        return k.opcode
    return f"{k.kind} fusion: {opcode_counts_text(k.opcodes, top)}" if k.opcodes else f"{k.kind} fusion"


def opcode_counts_text(opcodes: tuple[tuple[str, int], ...], top: int = 3) -> str:
    """``1000 add, broadcast, +2 more``: already counted and ranked opcodes, for terminal text.

    (A picture's labels write the same facts their own way: :func:`hloviz.render.labels.histogram_text`.)
    """
    parts = [f"{n} {op}" if n > 1 else op for op, n in opcodes[:top]]
    if len(opcodes) > top:
        parts.append(f"+{len(opcodes) - top} more")
    return ", ".join(parts)


def _kernel_words(report: KernelReport) -> str:
    text = _plural(report.count, "kernel")
    if 0 < report.count <= 3:
        text += " (" + "; ".join(describe_kernel(k, top=4) for k in report.kernels) + ")"
    return text


def _verdict(pre: ModuleCounts | None, post: ModuleCounts | None, report: KernelReport | None,
             folding: FoldingReport | None) -> str:
    if pre is None and report is not None:
        fusions = len(report.fusions)
        return (f"{_kernel_words(report)}: {_plural(fusions, 'fusion')}, {len(report.unfused)} unfused "
                f"(optimized module only; no pre-optimization module to compare)")
    assert pre is not None
    if report is None:
        what = f"{_plural(pre.ops, 'op')} ({pre.work} instructions doing work)" if pre.ops else \
            f"{pre.work} instructions doing work"
        return f"{what} before optimization (no optimized module, so no kernels)"
    folded = folding.folded if folding else ()
    tf_only = {op for f in folded if f.by == "tensorflow" for op in f.from_ops}
    n_ops = pre.ops + len(tf_only)
    if n_ops:
        before = _plural(n_ops, "op")
    elif pre.work:
        before = f"{_plural(pre.work, 'HLO instruction')} doing work"
    else:
        before = "no work before optimization"
    text = f"{before} → {_kernel_words(report)}"
    folded_ops = {op for f in folded for op in f.from_ops}
    computed = [op for op in (folding.computed if folding else ()) if op not in folded_ops]
    if folded_ops:
        constants = {f.constant for f in folded}
        by = {f.by for f in folded}
        who = " by TensorFlow before XLA" if by == {"tensorflow"} else " by XLA" if by == {"xla"} else ""
        into = _plural(len(constants), "constant")
        if len(constants) == 1 and len(folded[0].value) <= 40:
            into += f" ({folded[0].value})"
        text += f"; {_plural(len(folded_ops), 'op')} folded into {into}{who}"
    if computed:
        text += f"; {_plural(len(computed), 'op')} computed at compile time into no new constant"
    return text


#: Deprecated name of :func:`opcode_counts_text` (it clashed with the picture labels' own
#: ``histogram_text``, which counts raw opcodes and writes ``add ×1000``).
histogram_text = opcode_counts_text
