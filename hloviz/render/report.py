"""Analysis → the content of the HTML report and the summary ``hloviz show`` prints.

Source lines come from a caller-supplied lookup (op name → ``{"file", "line"}``, the capture's
source map) so this module needs nothing from capture; without it the HLO metadata's own
``source_file:source_line`` is used, as in ``hloviz stats``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .html import FoldRow, KernelRow, ReportContent
from .style import kernel_colour

if TYPE_CHECKING:
    from ..analysis import Analysis

__all__ = ["fold_rows", "kernel_rows", "report_content", "summary_lines"]

SourceLookup = Callable[[str], "dict | None"]


def kernel_rows(analysis: Analysis, lookup: SourceLookup | None = None) -> list[KernelRow]:
    """The kernels in execution order, numbered as in the side-by-side picture."""
    from ..analysis import describe_kernel
    from ..analysis.export import source_lines

    report = analysis.kernels
    if report is None:
        return []
    return [KernelRow(n, kernel_colour(n), k.name, describe_kernel(k, top=4), k.instructions, k.op_names,
                      tuple(source_lines(k.op_names, k.sources, lookup)), k.bytes_read + k.bytes_written, k.flops,
                      k.layer)
            for n, k in enumerate(report.kernels, 1)]


def fold_rows(analysis: Analysis, lookup: SourceLookup | None = None) -> list[FoldRow]:
    from ..analysis.export import source_lines

    folding = analysis.folding
    if folding is None:
        return []
    from ..analysis.glossary import FOLDED_BY

    return [FoldRow(f.constant, f.value, f.shape, f.from_ops, tuple(source_lines(f.from_ops, (), lookup)),
                    FOLDED_BY.get(f.by, f.by), f.note)
            for f in folding.folded]


def summary_lines(analysis: Analysis, lookup: SourceLookup | None = None, *, limit: int = 12) -> list[str]:
    """What ``hloviz show`` prints: the verdict, the kernels and the folded constants."""
    lines = [analysis.verdict]
    ks = kernel_rows(analysis, lookup)
    if analysis.kernels is not None:
        lines.append(f"kernels: {len(ks)}")
        for r in ks[:limit]:
            # the layer first: on a Keras model every kernel's source line is the model call
            where = f" in {r.layer}" if r.layer else ""
            where += f"  ← {', '.join(r.sources[:2])}" if r.sources else ""
            n = r.instructions
            lines.append(f"  #{r.number} {r.name}: {r.what} ({n} instruction{'s' if n != 1 else ''}){where}")
        if len(ks) > limit:
            lines.append(f"  … {len(ks) - limit} more (see the report)")
    folds = fold_rows(analysis, lookup)
    if analysis.folding is not None:
        lines.append(f"folded constants: {len(folds)}")
        for f in folds[:limit]:
            n = len(f.from_ops)
            source = f"from {n} op{'s' if n != 1 else ''}: {_short_list(f.from_ops)}" if n else f.note
            lines.append(f"  {f.constant} = {f.value} ({f.by}; {source})")
        if len(folds) > limit:
            lines.append(f"  … {len(folds) - limit} more (see the report)")
    return lines


def _short_list(names: tuple[str, ...], limit: int = 3) -> str:
    return ", ".join(names[:limit]) + (f", +{len(names) - limit} more" if len(names) > limit else "")


def _facts(info: dict, analysis: Analysis) -> list[tuple[str, str]]:
    facts: list[tuple[str, str]] = []
    for key, label in (("function", "function"), ("file", "file"), ("framework", "framework"),
                       ("tensorflow", "TensorFlow"), ("jax", "JAX"), ("device", "device")):
        value = info.get(key)
        if value:
            facts.append((label, str(value)))
    if analysis.summary.ops is not None:
        facts.append(("ops of the function", str(analysis.summary.ops)))
    if analysis.pre is not None:
        facts.append(("before optimization", f"{analysis.pre.instructions} instructions"))
    if analysis.post is not None:
        facts.append(("after optimization", f"{analysis.post.instructions} instructions"))
    if analysis.kernels is not None:
        facts.append(("kernels", str(analysis.kernels.count)))
    return facts


def report_content(label: str, info: dict, analysis: Analysis, *, svg: str | None, notes: list[str],
                   files: list[tuple[str, str]], lookup: SourceLookup | None = None,
                   picture_missing: str | None = None, footer: str = "",
                   memory_html: str = "") -> ReportContent:
    """Everything the report shows, in order (``memory_html``: the memory section)."""
    return ReportContent(
        title=f"hloviz · {label}", verdict=analysis.verdict, facts=_facts(info, analysis), picture_svg=svg,
        picture_missing=picture_missing, notes=notes, kernels=kernel_rows(analysis, lookup),
        folds=fold_rows(analysis, lookup), files=files, footer=footer, memory_html=memory_html,
    )
