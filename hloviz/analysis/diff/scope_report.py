"""``hloviz diff --by scope`` as text and markdown (JSON is :meth:`ScopeDiffRow.to_dict`).

A table with one row per scope (ops, kernels, kernel fates, FLOPs and bytes before → after),
then, for the scopes whose kernels changed, which kernels: ``~ a → b``, ``+ c``, ``- d``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...units import binary_size
from .scopes import ScopeDiffRow

__all__ = ["scope_markdown", "scope_text"]

_NOTE = "a kernel running work of two scopes is counted in both; depth counts from the model"


def _count(n: int) -> str:
    for unit, size in (("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if abs(n) >= size:
            return f"{n / size:.3g}{unit}"
    return str(n)


def _arrow(a: str, b: str, same: bool) -> str:
    return a if same else f"{a} → {b}"


def _cells(r: ScopeDiffRow) -> list[str]:
    fates = " ".join(x for x in (f"+{len(r.added)}" if r.added else "", f"-{len(r.removed)}" if r.removed else "",
                                 f"~{len(r.changed)}" if r.changed else "", f"={r.unchanged}" if r.unchanged else "")
                     if x)
    return [_arrow(str(r.ops_before), str(r.ops_after), r.ops_before == r.ops_after),
            _arrow(str(r.kernels_before), str(r.kernels_after), r.kernels_before == r.kernels_after),
            fates or "—",
            _arrow(_count(r.flops_before), _count(r.flops_after), r.flops_before == r.flops_after),
            _arrow(binary_size(r.bytes_before), binary_size(r.bytes_after), r.bytes_before == r.bytes_after)]


def _fate_lines(r: ScopeDiffRow, limit: int) -> list[str]:
    items = [f"~ {a} → {b}" for a, b in r.changed] + [f"+ {n}" for n in r.added] + [f"- {n}" for n in r.removed]
    if limit and len(items) > limit:
        items = items[:limit] + [f"… {len(items) - limit} more (--limit 0 shows all)"]
    return items


def _innermost(rows: Sequence[ScopeDiffRow], limit: int) -> list[tuple[ScopeDiffRow, list[str]]]:
    """Each changed kernel under the innermost scopes of ``rows`` that hold it, not again under
    their ancestors: a gelu→relu change of a scanned block's MLP is listed at ``ViT/blocks/mlp``,
    not at ``ViT`` and ``ViT/blocks`` too (a kernel spanning two layers is listed at both)."""
    items = {r.scope: _fate_lines(r, 0) for r in rows if r.added or r.removed or r.changed}
    out = []
    for r in rows:
        mine = items.get(r.scope)
        if not mine:
            continue
        below: set[str] = set()
        prefix = r.scope + "/"
        for key, lines in items.items():
            if key.startswith(prefix):
                below.update(lines)
        kept = [x for x in mine if x not in below]
        if kept:
            if limit and len(kept) > limit:
                kept = kept[:limit] + [f"… {len(kept) - limit} more (--limit 0 shows all)"]
            out.append((r, kept))
    return out


def scope_text(rows: Sequence[ScopeDiffRow], *, limit: int = 40,
               details: Sequence[ScopeDiffRow] | None = None) -> str:
    """The per-scope table for the terminal, then the changed kernels by the innermost scope
    holding them, among ``details`` (every level: :func:`scope_diff` with no depth) if given,
    else among ``rows``."""
    heads = ["scope", "ops", "kernels", "kernel fates", "FLOPs", "bytes"]
    body = [["  " * max(r.depth - 1, 0) + r.label, *_cells(r)] for r in rows]
    widths = [max(len(row[i]) for row in [heads, *body]) for i in range(len(heads))]
    out = ["", f"By scope ({len(rows)} scopes; + added, - removed, ~ changed, = unchanged kernels; {_NOTE})"]
    for row in [heads, *body]:
        out.append("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    changed = _innermost(details if details is not None else rows, limit)
    if changed:
        out.append("")
        out.append("Kernels that differ, by scope")
        for r, lines in changed:
            out.append(f"  {r.display or r.scope}")
            out += [f"    {line}" for line in lines]
    return "\n".join(out) + "\n"


def scope_markdown(rows: Sequence[ScopeDiffRow], *, limit: int = 40,
                   details: Sequence[ScopeDiffRow] | None = None) -> str:
    """The per-scope table as markdown, with the changed kernels (by the innermost scope holding
    them, as :func:`scope_text`) in a details block."""
    from .report import md_code, md_text

    out = ["", f"#### By scope ({len(rows)} scopes)", "",
           "| scope | ops | kernels | kernel fates | FLOPs | bytes |", "|---|---:|---:|---|---:|---:|"]
    for r in rows:
        indent = "&nbsp;&nbsp;" * max(r.depth - 1, 0)
        out.append(f"| {indent}{md_code(r.label)} | " + " | ".join(md_text(c) for c in _cells(r)) + " |")
    changed = _innermost(details if details is not None else rows, limit)
    if changed:
        out += ["", "<details><summary>Kernels that differ, by scope</summary>", ""]
        for r, lines in changed:
            out.append(f"- {md_code(r.display or r.scope, in_table=False)}: " + ", ".join(md_text(x) for x in lines))
        out += ["", "</details>"]
    out += ["", f"<sub>+ added · - removed · ~ changed · = unchanged kernels; {_NOTE}</sub>"]
    return "\n".join(out) + "\n"
