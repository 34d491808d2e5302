"""All analyses of one capture at once, and the one-line verdict ``hloviz stats`` prints.

:func:`analyze` takes the pre- and post-optimization modules (either may be missing: a single
optimized module still has kernels; a single pre-opt module only has counts) and returns an
:class:`Analysis`. The verdict only says what the modules show: with no pre-opt module it does
not claim how many ops there were, and with no optimized module it does not count kernels.
"""

from __future__ import annotations

from collections.abc import Mapping as _Mapping
from collections.abc import Sequence as _Sequence
from dataclasses import dataclass, field, fields

from ..errors import InputError
from ..ir import HloModule
from .glossary import (
    CONSTANT,
    ELIMINATED,
    FOLDED,
    FOLDED_BY,
    FOLDED_CONSTANT,
    FUSION,
    IN_KERNELS,
    KERNEL,
    NO_OP_NAME,
    NO_WORK,
    OP,
    WORK_INSTRUCTION,
)
from .kernels import Kernel, KernelReport, kernels, work_and_op_names
from .pre_post.folding import FoldedConstant, FoldingReport, constant_folding
from .pre_post.mapping import Mapping, pre_to_post


@dataclass(frozen=True)
class ModuleCounts:
    """Sizes of one module: ``instructions`` (all, every computation), ``computations``,
    ``work`` (instructions doing work in executed computations, fused ones included) and
    ``op_names`` (distinct ``metadata.op_name`` values on those instructions — not the number of
    ops of the function, which is :attr:`Summary.ops`; 0 when the HLO carries no op names)."""

    name: str
    computations: int
    instructions: int
    work: int
    op_names: int


@dataclass(frozen=True)
class Summary:
    """The numbers the verdict states, each counted once (``stats --json`` prints them as
    ``summary``, and the verdict is :meth:`verdict` of them).

    Every number the verdict prints is one of these fields (or a count in ``no_work_types`` /
    a kernel description): the sentence computes none.

    ``ops`` is the number of ops of the traced function and ``statuses`` how many have each
    status (``kernels``, ``folded``, ``eliminated``, ``no_work``): they add up to ``ops``.
    ``no_work_types`` names the no-work ops by type. ``kernels`` = ``fusions`` +
    ``unfused_kernels``. ``folded_into_constants`` counts the folded ops whose value is in a
    folded constant, ``folded_into_no_constant`` the rest (computed at compile time into no new
    constant): they add up to ``statuses["folded"]``.

    ``folded_constants`` counts the folded constants, by who folded them (``folded_by``:
    ``xla`` / ``tensorflow``). They are of two kinds, each counted with its own folders, so
    that a sentence names who folded *that* group: ``folded_constants_with_ops`` hold the
    value of folded ops (``folded_with_ops_by``), ``folded_constants_without_ops`` hold part of
    an op's work — an op that still runs in a kernel, or instructions without an op name
    (``folded_without_ops_by``). ``folded_value`` is the value of the one constant of the
    first kind when there is exactly one (and it is short), ``folded_without_ops_value`` the
    same for the second. ``kernel_descriptions`` describe the kernels when there are at most
    three. A missing stage leaves its numbers None: nothing is claimed that the modules do not
    show.
    """

    ops: int | None
    statuses: dict[str, int] | None
    no_work_types: dict[str, int]
    kernels: int | None
    fusions: int | None
    kernel_descriptions: tuple[str, ...]
    folded_constants: int
    folded_by: dict[str, int]
    folded_into_constants: int
    folded_constants_without_ops: int
    folded_value: str | None
    new_constants: int
    pre_work: int | None
    unfused_kernels: int | None = None
    folded_into_no_constant: int = 0
    folded_constants_with_ops: int = 0
    folded_with_ops_by: dict[str, int] = field(default_factory=dict)
    folded_without_ops_by: dict[str, int] = field(default_factory=dict)
    folded_without_ops_value: str | None = None
    #: The devices the optimized module runs on, each on its share (its header's
    #: ``num_partitions`` × ``replica_count``, where over 1): every number after optimization is
    #: one device's. ``partitioned``: that header's words, for the verdict.
    devices: int | None = None
    partitioned: str | None = None

    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        for key, value in out.items():
            if isinstance(value, dict):
                out[key] = dict(value)
        out["kernel_descriptions"] = list(self.kernel_descriptions)
        return out

    @classmethod
    def from_dict(cls, d: _Mapping) -> Summary:
        """The summary of :meth:`to_dict` (a field it lacks, from an older hloviz, takes its default)."""
        given = {f.name: d[f.name] for f in fields(cls) if f.name in d}
        for key, value in given.items():
            if isinstance(value, _Mapping):
                given[key] = dict(value)
        given["kernel_descriptions"] = tuple(given.get("kernel_descriptions", ()))
        return cls(**given)

    def verdict(self) -> str:
        """One line that says what XLA did, from these numbers only."""
        return _verdict(self)


@dataclass(frozen=True)
class Analysis:
    """Everything hloviz knows about what XLA did: counts, kernels, folding, mapping, verdict."""

    pre: ModuleCounts | None
    post: ModuleCounts | None
    kernels: KernelReport | None
    folding: FoldingReport | None
    mapping: Mapping | None
    summary: Summary

    @property
    def verdict(self) -> str:
        """The one-line verdict, printed from :attr:`summary`."""
        return self.summary.verdict()


def count(module: HloModule, report: KernelReport | None = None) -> ModuleCounts:
    """The :class:`ModuleCounts` of ``module`` (``report``: its kernels, if already computed)."""
    if report is None:  # the same two numbers, without making every kernel's record
        work, names = work_and_op_names(module)
    else:
        names = {op for k in report.kernels for op in k.op_names}
        work = sum(k.instructions for k in report.kernels)
    return ModuleCounts(module.name, len(module.computations), module.instruction_count, work, len(names))


def analyze(pre: HloModule | None, post: HloModule | None, *, info: _Mapping | None = None) -> Analysis:
    """Run every analysis that the given modules allow. ``info``: a capture's info (its
    ``tf_ops``/``tf_inputs`` add the graph's ops and the folds TensorFlow made before XLA)."""
    if pre is None and post is None:
        raise InputError("nothing to analyze: neither a pre- nor a post-optimization module was given")
    post_kernels = kernels(post) if post is not None else None
    pre_counts = count(pre) if pre is not None else None
    post_counts = count(post, post_kernels) if post is not None else None
    folding = mapping = None
    if pre is not None and post is not None:
        from .pre_post.names import facts_kept, pair

        pair(pre, post)  # (a capture's modules are paired already; modules given here may not be)
        with facts_kept():  # both read what the pre-optimization module's names become, and what is live
            folding = constant_folding(pre, post, info)
            mapping = pre_to_post(pre, post, info=info, kernel_report=post_kernels, folding=folding)
    devices = post.devices if post is not None else None  # (count, the header's words), or None
    summary = summarize(pre_counts, post_kernels, folding, mapping, *(devices or (None, None)))
    return Analysis(pre_counts, post_counts, post_kernels, folding, mapping, summary)


def summarize(pre: ModuleCounts | None, report: KernelReport | None, folding: FoldingReport | None,
              mapping: Mapping | None, devices: int | None = None, partitioned: str | None = None) -> Summary:
    """The verdict's numbers, from the analyses (``devices``, ``partitioned``: the optimized
    module's :attr:`~hloviz.ir.HloModule.devices`)."""
    folded = folding.folded if folding else ()
    with_ops = [f for f in folded if f.from_ops]
    without_ops = [f for f in folded if not f.from_ops]
    statuses = mapping.counts if mapping is not None else None
    into = none = 0
    if mapping is not None:
        into = sum(1 for m in mapping.ops if m.status == "folded" and m.constants)
        none = sum(1 for m in mapping.ops if m.status == "folded" and not m.constants)
    descriptions: tuple[str, ...] = ()
    if report is not None and 0 < report.count <= 3:
        descriptions = tuple(describe_kernel(k, top=4) for k in report.kernels)
    fusions = len(report.fusions) if report is not None else None
    return Summary(
        ops=len(mapping.ops) if mapping is not None else None, statuses=statuses,
        no_work_types=mapping.no_work_types if mapping is not None else {},
        kernels=report.count if report is not None else None, fusions=fusions,
        kernel_descriptions=descriptions, folded_constants=len(folded), folded_by=_by_whom(folded),
        folded_into_constants=into, folded_constants_without_ops=len(without_ops),
        folded_value=_sole_value(with_ops),
        new_constants=len(folding.new_constants) if folding else 0,
        pre_work=pre.work if pre is not None else None,
        unfused_kernels=report.count - (fusions or 0) if report is not None else None,
        folded_into_no_constant=none, folded_constants_with_ops=len(with_ops),
        folded_with_ops_by=_by_whom(with_ops), folded_without_ops_by=_by_whom(without_ops),
        folded_without_ops_value=_sole_value(without_ops), devices=devices, partitioned=partitioned,
    )


def _by_whom(folded: _Sequence[FoldedConstant]) -> dict[str, int]:
    """How many of ``folded`` each folder (``xla``, ``tensorflow``) made."""
    by: dict[str, int] = {}
    for f in folded:
        by[f.by] = by.get(f.by, 0) + 1
    return by


def _sole_value(folded: _Sequence[FoldedConstant]) -> str | None:
    """The value of the one constant in ``folded``, when there is one and it is short enough for a sentence."""
    return folded[0].value if len(folded) == 1 and len(folded[0].value) <= 40 else None


def describe_kernel(k: Kernel, top: int = 3) -> str:
    """``kLoop fusion: 1000 add, broadcast`` / ``kCustom fusion · YNNPACK: reduce`` / ``dot``: a
    kernel in a few words, its kind written as everywhere (:attr:`Kernel.kind_text`)."""
    if not k.is_fusion:
        return k.kind_text
    # a fusion of bitcasts alone (Flax's ``[16]`` kernel of a ``Dense(1)`` as ``[16,1]``) still
    # runs: it writes its output buffer from its operand's bytes
    return f"{k.kind_text}: {opcode_counts_text(k.opcodes, top)}" if k.opcodes else f"{k.kind_text}: {MOVES_DATA}"


#: What a kernel with no instruction doing work does (:func:`describe_kernel`).
MOVES_DATA = "moves data, computes nothing"


def opcode_counts_text(opcodes: tuple[tuple[str, int], ...], top: int = 3) -> str:
    """``1000 add, broadcast, +2 more``: already counted and ranked opcodes, for terminal text.

    (A picture's labels write the same facts their own way: :func:`hloviz.render.cut.labels.histogram_text`.)
    """
    parts = [f"{n} {op}" if n > 1 else op for op, n in opcodes[:top]]
    if len(opcodes) > top:
        parts.append(f"+{len(opcodes) - top} more")
    return ", ".join(parts)


def types_text(types: _Mapping[str, int], top: int = 4) -> str:
    """``12 Const, 2 _Arg, Identity, +3 more``: op types with their counts."""
    return histogram_text(tuple(types.items()), top)


def _verdict(s: Summary) -> str:
    kernel_words = ""
    if s.kernels is not None:
        kernel_words = KERNEL.count(s.kernels)
        if s.kernel_descriptions:
            kernel_words += " (" + "; ".join(s.kernel_descriptions) + ")"
    if s.ops is None:
        if s.kernels is not None:
            return (f"{kernel_words}: {FUSION.count(s.fusions or 0)}, {s.unfused_kernels} unfused "
                    f"(optimized module only; no pre-optimization module to compare)" + _per_device(s))
        return f"{WORK_INSTRUCTION.count(s.pre_work or 0)} before optimization (no optimized module, so no kernels)"
    st = s.statuses or {}
    parts = []
    if st.get("kernels"):
        parts.append(f"{st['kernels']} {IN_KERNELS.word}")
    n_folded = st.get("folded", 0)
    into = CONSTANT.count(s.folded_constants_with_ops) + (f" ({s.folded_value})" if s.folded_value is not None else "")
    who = _who(s.folded_with_ops_by)
    if n_folded:
        if not s.folded_into_no_constant:
            parts.append(f"{n_folded} {FOLDED.word} into {into} {who}")
        elif s.folded_into_constants:
            parts.append(f"{n_folded} {FOLDED.word} ({s.folded_into_constants} into {into} {who}, "
                         f"{s.folded_into_no_constant} into no new constant)")
        else:
            parts.append(f"{n_folded} {FOLDED.word} into no new constant")
    if st.get("eliminated"):
        parts.append(f"{st['eliminated']} {ELIMINATED.word}")
    if st.get("no_op_name"):
        parts.append(f"{st['no_op_name']} {NO_OP_NAME.word}")
    if st.get("no_work"):
        parts.append(f"{st['no_work']} {NO_WORK.word} ({types_text(s.no_work_types)})")
    before = OP.count(s.ops) if s.ops or not s.pre_work else \
        f"{WORK_INSTRUCTION.count(s.pre_work)} (the HLO names no ops)"
    text = f"{before} → {kernel_words}" + (": " + ", ".join(parts) if parts else "")
    if s.folded_constants_without_ops:
        n = s.folded_constants_without_ops
        value = f" ({s.folded_without_ops_value})" if s.folded_without_ops_value is not None else ""
        verb = "holds" if n == 1 else "hold"
        text += f"; {FOLDED_CONSTANT.count(n)}{value} {_who(s.folded_without_ops_by)} {verb} part of an op's work"
    return text + _per_device(s)


def _per_device(s: Summary) -> str:
    """What a partitioned program's numbers are: one device's (see :attr:`Summary.devices`)."""
    if not s.devices:
        return ""
    return f"; the optimized module is one device's share of {s.devices} ({s.partitioned}): its numbers are per device"


def _who(by: _Mapping[str, int]) -> str:
    """Who folded a group of constants: ``by XLA`` when one folder made them all, else each
    folder with its count, ``(2 by XLA, 1 by TensorFlow)``."""
    folders = [b for b in ("xla", "tensorflow") if by.get(b)] + sorted(b for b in by if b not in FOLDED_BY and by[b])
    if len(folders) == 1:
        return FOLDED_BY.get(folders[0], f"by {folders[0]}")
    return "(" + ", ".join(f"{by[b]} {FOLDED_BY.get(b, f'by {b}')}" for b in folders) + ")"


#: Deprecated name of :func:`opcode_counts_text` (it clashed with the picture labels' own
#: ``histogram_text``, which counts raw opcodes and writes ``add ×1000``).
histogram_text = opcode_counts_text
