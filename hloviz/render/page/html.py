"""The HTML report of ``hloviz show`` and the one-picture page of ``hloviz render -o x.html``.

One self-contained file each: styles inline, the SVG inline, no font or image from anywhere
else — a Content-Security-Policy forbids any fetch, so the page works offline and a browser
reports an error if anything ever tries to load. Every string from the module or the capture
goes through :func:`hloviz.render.quoting.html_text`.

With an :class:`~hloviz.render.page.explorer.page.ExplorerPayload` the page is also the explorer
(search, expand, click, cross-highlight; :mod:`hloviz.render.page.explorer`): its one inline script
is allowed by hash, and everything the explorer adds stays hidden until that script runs, so
the page without it is the plain report — verdict, picture and tables, no clicking needed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...units import binary_size
from ..quoting import colour
from ..quoting import html_text as esc

if TYPE_CHECKING:
    from ...analysis.diff.scopes import ScopeDiffRow
    from .explorer.page import ExplorerPayload

__all__ = ["FoldRow", "KernelRow", "ReportContent", "inline_svg", "page", "picture_page", "report_fragment",
           "report_html"]

#: The policy of every page; a page with the explorer adds ``; script-src 'sha256-…'``.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 1.5rem;
       color: #212121; background: #ffffff; line-height: 1.4; }
h1 { font-size: 1.4rem; margin: 0 0 .4rem 0; } h2 { font-size: 1.1rem; margin: 1.6rem 0 .5rem 0; }
.verdict { font-size: 1.05rem; font-weight: 600; margin: .2rem 0 1rem 0; }
table { border-collapse: collapse; font-size: .9rem; }
th, td { border-bottom: 1px solid #e0e0e0; padding: .3rem .6rem; text-align: left; vertical-align: top; }
th { background: #fafafa; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.facts th { background: none; font-weight: normal; color: #616161; }
.swatch { display: inline-block; min-width: 2.2em; padding: 0 .3em; border: 1px solid #424242;
          border-radius: 3px; text-align: center; font-weight: 600; }
.picture { overflow: auto; border: 1px solid #e0e0e0; border-radius: 6px; padding: .5rem; max-height: 90vh; }
.picture svg { display: block; max-width: 100%; height: auto; }
.notes { color: #616161; font-style: italic; font-size: .9rem; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: .85rem; }
footer { margin-top: 2rem; color: #9e9e9e; font-size: .8rem; }
"""


@dataclass(frozen=True)
class KernelRow:
    """One row of the kernel table."""

    number: int
    colour: str
    name: str
    what: str
    instructions: int
    op_names: tuple[str, ...]
    sources: tuple[str, ...]
    bytes: int = 0
    flops: int = 0
    #: The layer its ops belong to (:attr:`hloviz.analysis.kernels.Kernel.layer`: their common scope,
    #: for ``show``'s summary lines); "" when unnamed. The table shows :attr:`layers`.
    layer: str = ""
    #: The computation it runs in, with how it runs (``entry``, ``while body of while.3``…).
    runs_in: str = ""
    #: The layers whose work it runs, heaviest first (the picture draws it in the first).
    layers: tuple[str, ...] = ()


@dataclass(frozen=True)
class FoldRow:
    """One row of the folded-constants table."""

    constant: str
    value: str
    shape: str
    from_ops: tuple[str, ...]
    sources: tuple[str, ...]
    by: str
    #: Why ``from_ops`` is empty, in words.
    note: str = ""


@dataclass
class ReportContent:
    """Everything the report shows; built by :func:`hloviz.render.page.report.report_content`."""

    title: str
    verdict: str
    facts: list[tuple[str, str]] = field(default_factory=list)
    picture_svg: str | None = None
    picture_missing: str | None = None
    notes: list[str] = field(default_factory=list)
    kernels: list[KernelRow] = field(default_factory=list)
    folds: list[FoldRow] = field(default_factory=list)
    files: list[tuple[str, str]] = field(default_factory=list)
    footer: str = ""
    #: The memory section (:func:`hloviz.render.page.memory.memory_section`), HTML; "" when there is none.
    memory_html: str = ""
    #: The "XLA's passes" section (:mod:`hloviz.render.page.pass_section`), when the target held a pass history.
    passes_html: str = ""


_PROLOG = re.compile(r"^\s*<\?xml[^>]*\?>\s*", re.DOTALL)


def inline_svg(svg: str) -> str:
    """An SVG file's text made fit to sit inside HTML: the XML declaration removed."""
    return _PROLOG.sub("", svg).strip()


def _list(items: Sequence[str], limit: int = 6) -> str:
    shown = [f"<code>{esc(i)}</code>" for i in items[:limit]]
    if len(items) > limit:
        shown.append(f"… {len(items) - limit} more")
    return ", ".join(shown) if shown else "—"


def _kernel_table(rows: list[KernelRow]) -> str:
    if not rows:
        return "<p>No kernels: nothing runs (or there is no optimized module).</p>"
    out = [_filter("kernels"),
           ('<table class="kernels" id="hv-kernels"><thead><tr><th data-sort="num">#</th><th>kernel</th><th>what</th>'
            '<th data-sort="num">instructions</th><th data-sort="num">bytes</th><th data-sort="num">FLOPs</th>'
            '<th>layers</th><th>runs in</th><th>your code</th><th>ops</th></tr></thead><tbody>')]
    for r in rows:
        out.append(f'<tr data-kernel="{esc(r.name)}"><td data-v="{r.number}"><a class="swatch" href="#k={_frag(r.name)}" '
                   f'style="background:{colour(r.colour)}">#{r.number}</a></td>'
                   f"<td><code>{esc(r.name)}</code></td><td>{esc(r.what)}</td><td class=\"num\">{r.instructions}</td>"
                   f'<td class="num" data-v="{r.bytes}">{binary_size(r.bytes)}</td>'
                   f'<td class="num" data-v="{r.flops}">{_count(r.flops)}</td>'
                   f"<td>{_list(r.layers, 3)}</td><td>{esc(r.runs_in)}</td>"
                   f"<td>{_list(r.sources, 4)}</td><td>{_list(r.op_names)}</td></tr>")
    out.append("</tbody></table>")
    return "".join(out)


def scope_diff_table(rows: Sequence[ScopeDiffRow]) -> str:
    """``diff --by scope`` as an HTML table: per scope, ops, kernels, their fates, FLOPs and
    bytes before → after, and the kernels that changed."""
    def pair(a: str, b: str) -> str:
        return esc(a) if a == b else f"{esc(a)} → {esc(b)}"

    out = [f"<h2>By scope ({len(rows)})</h2>",
           ('<table class="scopes" id="hv-scope-diff"><thead><tr><th>scope</th><th>ops</th><th>kernels</th>'
            "<th>added</th><th>removed</th><th>changed</th><th>unchanged</th><th>FLOPs</th><th>bytes</th>"
            "</tr></thead><tbody>")]
    for r in rows:
        indent = "&nbsp;&nbsp;" * max(r.depth - 1, 0)
        changed = [f"{a} → {b}" for a, b in r.changed]
        out.append(f'<tr data-scope="{esc(r.scope)}"><td>{indent}<code>{esc(r.label)}</code></td>'
                   f"<td>{pair(str(r.ops_before), str(r.ops_after))}</td>"
                   f"<td>{pair(str(r.kernels_before), str(r.kernels_after))}</td>"
                   f"<td>{_list(r.added, 4) if r.added else ''}</td><td>{_list(r.removed, 4) if r.removed else ''}</td>"
                   f"<td>{_list(changed, 4) if changed else ''}</td><td class=\"num\">{r.unchanged}</td>"
                   f'<td class="num">{pair(_count(r.flops_before), _count(r.flops_after))}</td>'
                   f'<td class="num">{pair(binary_size(r.bytes_before), binary_size(r.bytes_after))}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


def _frag(name: str) -> str:
    """A name as it goes into a URL fragment (percent-encoded, then HTML-escaped)."""
    from urllib.parse import quote

    return esc(quote(name, safe=""))


def _filter(table: str) -> str:
    """A filter box for a table; shown only when the explorer's script runs."""
    return (f'<p class="hv-only"><input type="search" class="hv-filter" data-table="hv-{table}" '
            f'placeholder="filter the {table}" aria-label="filter the {table}"></p>')


def _count(n: int) -> str:
    for unit, size in (("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def _fold_table(rows: list[FoldRow]) -> str:
    if not rows:
        return "<p>No constants were folded.</p>"
    out = [_filter("folds"),
           ('<table class="folds" id="hv-folds"><thead><tr><th>constant</th><th>value</th><th>shape</th>'
            '<th data-sort="num">folded from</th><th>your code</th><th>by</th></tr></thead><tbody>')]
    for r in rows:
        out.append(f'<tr data-constant="{esc(r.constant)}"><td><a href="#c={_frag(r.constant)}"><code>{esc(r.constant)}</code></a></td>'
                   f"<td><code>{esc(r.value)}</code></td>"
                   f'<td><code>{esc(r.shape)}</code></td><td data-v="{len(r.from_ops)}">{_folded_from(r)}</td>'
                   f"<td>{_list(r.sources, 4)}</td><td>{esc(r.by)}</td></tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _folded_from(r: FoldRow) -> str:
    """The ops a fold came from (``3 ops: a, b, c``), or why it names none."""
    if not r.from_ops:
        return esc(r.note)
    n = len(r.from_ops)
    return f"{n} op{'s' if n != 1 else ''}: {_list(r.from_ops)}"


def _picture(svg: str | None, missing: str | None, explorer: bool) -> str:
    if svg is None:
        return f'<p class="notes">{esc(missing or "no picture")}</p>'
    if not explorer:
        return f'<div class="picture" id="hv-viewport" tabindex="0">{inline_svg(svg)}</div>'
    picture = ('<div class="picture" id="hv-viewport" tabindex="0" aria-label="the picture: Tab moves between its '
               'boxes, Enter or Space opens one, Escape goes back up; arrows pan, + and - zoom">'
               f'{inline_svg(svg)}</div>')
    return ('<div class="explorer" id="hv">'
            '<div class="hv-bar hv-only">'
            '<input type="search" id="hv-search" autocomplete="off" spellcheck="false" '
            'placeholder="search: layer or scope, op_name, instruction, opcode, file:line" aria-label="search">'
            '<nav id="hv-crumbs" aria-label="where you are"></nav>'
            '<span class="hv-zoom"><button type="button" data-zoom="in" title="zoom in (+)">+</button>'
            '<button type="button" data-zoom="out" title="zoom out (-)">&#8722;</button>'
            '<button type="button" data-zoom="fit" title="fit (0)">fit</button></span></div>'
            '<p id="hv-status" class="hv-only" role="status" aria-live="polite" hidden></p>'
            '<ol id="hv-results" class="hv-only" hidden></ol>'
            f'<div class="hv-main">{picture}<aside id="hv-panel" class="hv-only" hidden></aside></div></div>')


def report_fragment(c: ReportContent, *, explorer: bool = False) -> str:
    """The report's body (no ``<html>``/``<head>``): what Jupyter shows for ``hloviz.show``.

    ``explorer`` adds the explorer's (hidden until its script runs) search bar and panel."""
    parts = [f"<h1>{esc(c.title)}</h1>", f'<p class="verdict">{esc(c.verdict)}</p>']
    if c.facts:
        parts.append('<table class="facts">' + "".join(
            f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in c.facts) + "</table>")
    parts.append("<h2>Before and after optimization</h2>")
    if c.notes:
        parts.append('<ul class="notes">' + "".join(f"<li>{esc(n)}</li>" for n in c.notes) + "</ul>")
    parts.append(_picture(c.picture_svg, c.picture_missing, explorer))
    if c.passes_html:
        parts.append(c.passes_html)
    parts.append(f"<h2>Kernels ({len(c.kernels)})</h2>")
    parts.append(_kernel_table(c.kernels))
    parts.append(f"<h2>Folded constants ({len(c.folds)})</h2>")
    parts.append(_fold_table(c.folds))
    if c.memory_html:
        parts.append(c.memory_html)
    if c.files:
        parts.append("<h2>Files</h2><ul>" + "".join(
            f'<li><a href="{esc(href)}">{esc(name)}</a></li>' for name, href in c.files) + "</ul>")
    if c.footer:
        parts.append(f"<footer>{esc(c.footer)}</footer>")
    return "\n".join(parts)


def _page(title: str, body: str, explorer: ExplorerPayload | None = None) -> str:
    csp, head_extra, tail = CSP, "", ""
    if explorer is not None:
        from .explorer.page import style_source

        csp = f"{CSP}; script-src {explorer.csp_script_src}"
        head_extra = f"<style>{style_source()}</style>\n"
        tail = f"{explorer.blocks}\n<script>{explorer.script}</script>\n{explorer.later}\n"
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            # hloviz's mark: show -o replaces a report.html only when it carries it (render/page/files.py)
            "<meta name=\"generator\" content=\"hloviz\">\n"
            f"<title>{esc(title)}</title>\n<style>{_CSS}</style>\n{head_extra}</head>\n<body>\n{body}\n{tail}"
            "</body>\n</html>\n")


def page(title: str, body: str) -> str:
    """A self-contained HTML document around ``body`` (the report's styles and CSP)."""
    return _page(title, body)


def report_html(c: ReportContent, explorer: ExplorerPayload | None = None) -> str:
    """The whole report as one self-contained HTML document (the explorer when given, with the
    picture the explorer shows first)."""
    if explorer is not None and explorer.picture_svg is not None:
        from dataclasses import replace

        c = replace(c, picture_svg=explorer.picture_svg, notes=list(explorer.picture_notes))
    if explorer is not None and explorer.notes:
        from dataclasses import replace

        c = replace(c, notes=[*c.notes, *explorer.notes])
    return _page(c.title, report_fragment(c, explorer=explorer is not None), explorer)


def picture_page(title: str, svg: str, notes: Sequence[str] = (), explorer: ExplorerPayload | None = None,
                 sections: Sequence[str] = ()) -> str:
    """One picture as a self-contained HTML page (``hloviz render -o picture.html``, ``hloviz
    diff -o diff.html``); with ``explorer``, the picture can be searched and clicked.
    ``sections``: HTML made by this module (:func:`scope_diff_table`) to show under it."""
    if explorer is not None and explorer.picture_svg is not None:
        svg, notes = explorer.picture_svg, explorer.picture_notes
    if explorer is not None:
        notes = (*notes, *explorer.notes)
    body = [f"<h1>{esc(title)}</h1>"]
    if notes:
        body.append('<ul class="notes">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    body.append(_picture(svg, None, explorer is not None))
    body.extend(sections)
    return _page(title, "\n".join(body), explorer)
