"""Analysis → the content of the HTML report and the summary ``hloviz show`` prints.

Source lines come from a caller-supplied lookup (op name → ``{"file", "line"}``, the capture's
source map) so this module needs nothing from capture; without it the HLO metadata's own
``source_file:source_line`` is used, as in ``hloviz stats``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from ..style import kernel_colour
from .html import FoldRow, KernelRow, ReportContent

if TYPE_CHECKING:
    from ...analysis import Analysis
    from ...analysis.scopes import ScopeTree

__all__ = ["fold_rows", "kernel_layer_texts", "kernel_layers", "kernel_rows", "report_content", "summary_lines"]

SourceLookup = Callable[[str], "dict | None"]


def kernel_rows(analysis: Analysis, lookup: SourceLookup | None = None,
                layers: Mapping[str, tuple[str, ...]] | None = None,
                layer_texts: Mapping[str, str] | None = None) -> list[KernelRow]:
    """The kernels in execution order, numbered as in the side-by-side picture. ``layers``:
    kernel name → its layers (:func:`kernel_layers`)."""
    from ...analysis import describe_kernel
    from ...analysis.export import source_lines

    report = analysis.kernels
    if report is None:
        return []
    roles = {c.name: (c.role, c.caller) for c in report.computations}
    return [KernelRow(n, kernel_colour(n), k.name, describe_kernel(k, top=4), k.instructions, k.op_names,
                      tuple(source_lines(k.op_names, k.sources, lookup)), k.bytes_read + k.bytes_written, k.flops,
                      (layer_texts or {}).get(k.name, k.layer), runs_in=_runs_in(k.computation, roles),
                      layers=(layers or {}).get(k.name, ()))
            for n, k in enumerate(report.kernels, 1)]


def kernel_layers(tree: ScopeTree) -> dict[str, tuple[str, ...]]:
    """Kernel name → the layers it runs work of, by the names users know, heaviest first:
    :meth:`hloviz.analysis.scopes.ScopeTree.scopes_of_kernel` of a post-optimization tree, the
    rule the picture, the explorer's panel and ``stats --json`` follow."""
    report = tree.kernel_report
    if report is None:
        return {}
    return {k.name: tuple(s.plain_path or s.path for s in tree.scopes_of_kernel(k.name)) for k in report.kernels}


def kernel_layer_texts(tree: ScopeTree) -> dict[str, str]:
    """Kernel name → its layer as one line (:func:`hloviz.analysis.attribution.layer_text`):
    what ``stats``' table and ``show``'s summary print, from the same rule as :func:`kernel_layers`."""
    from ...analysis.attribution import layer_text

    report = tree.kernel_report
    out: dict[str, str] = {}
    for k in report.kernels if report is not None else ():
        comp = tree.module.get_computation(k.computation)
        inst = comp.get(k.name) if comp is not None else None
        if inst is not None:
            out[k.name] = layer_text(tree.layers_with_phases(inst))
    return out


def _runs_in(computation: str, roles: dict[str, tuple[str, str | None]]) -> str:
    """Where a kernel runs: ``entry``, or ``while body of while.32 (body.5)`` — a loop body's
    kernels run once per iteration."""
    role, caller = roles.get(computation, ("", None))
    if not role or role == "entry":
        return "entry" if role else computation
    return f"{role} of {caller} ({computation})" if caller else f"{role} ({computation})"


def fold_rows(analysis: Analysis, lookup: SourceLookup | None = None) -> list[FoldRow]:
    from ...analysis.export import source_lines

    folding = analysis.folding
    if folding is None:
        return []
    from ...analysis.glossary import FOLDED_BY

    return [FoldRow(f.constant, f.value, f.shape, f.from_ops, tuple(source_lines(f.from_ops, (), lookup)),
                    FOLDED_BY.get(f.by, f.by), f.note)
            for f in folding.folded]


def summary_lines(analysis: Analysis, lookup: SourceLookup | None = None, *, limit: int = 12,
                  layer_texts: Mapping[str, str] | None = None) -> list[str]:
    """What ``hloviz show`` prints: the verdict, the kernels and the folded constants
    (``layer_texts``: :func:`kernel_layer_texts`, each kernel's layer by the one rule)."""
    lines = [analysis.verdict]
    ks = kernel_rows(analysis, lookup, layer_texts=layer_texts)
    if analysis.kernels is not None:
        lines.append(f"kernels: {len(ks)}")
        for r in ks[:limit]:
            # the layer first: on a Keras model every kernel's source line is the model call
            where = (f" ({r.layer[1:-1]} pass)" if r.layer.startswith("(") else f" in {r.layer}") if r.layer else ""
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
                   memory_html: str = "", layers: Mapping[str, tuple[str, ...]] | None = None,
                   layer_texts: Mapping[str, str] | None = None) -> ReportContent:
    """Everything the report shows, in order (``memory_html``: the memory section; ``layers`` and
    ``layer_texts``: :func:`kernel_layers` and :func:`kernel_layer_texts`)."""
    return ReportContent(
        title=f"hloviz · {label}", verdict=analysis.verdict, facts=_facts(info, analysis), picture_svg=svg,
        picture_missing=picture_missing, notes=notes, kernels=kernel_rows(analysis, lookup, layers, layer_texts),
        folds=fold_rows(analysis, lookup), files=files, footer=footer, memory_html=memory_html,
    )
