"""The HTML report of ``hloviz show`` and the one-picture page of ``hloviz render -o x.html``.

One self-contained file each: styles inline, the SVG inline, no script, no font or image from
anywhere else — a Content-Security-Policy forbids any fetch, so the page works offline and a
browser reports an error if anything ever tries to load. Every string from the module or the
capture goes through :func:`hloviz.render.quoting.html_text`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from .quoting import colour, html_text as esc

__all__ = ["FoldRow", "KernelRow", "ReportContent", "inline_svg", "page", "picture_page", "report_fragment", "report_html"]

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
    """Everything the report shows; built by :func:`hloviz.render.report.report_content`."""

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


_PROLOG = re.compile(r"^\s*<\?xml[^>]*\?>\s*", re.S)


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
    out = ['<table class="kernels"><thead><tr><th>#</th><th>kernel</th><th>what</th><th>instructions</th>'
           '<th>your code</th><th>ops</th></tr></thead><tbody>']
    for r in rows:
        out.append(f'<tr><td><span class="swatch" style="background:{colour(r.colour)}">#{r.number}</span></td>'
                   f"<td><code>{esc(r.name)}</code></td><td>{esc(r.what)}</td><td class=\"num\">{r.instructions}</td>"
                   f"<td>{_list(r.sources, 4)}</td><td>{_list(r.op_names)}</td></tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _fold_table(rows: list[FoldRow]) -> str:
    if not rows:
        return "<p>No constants were folded.</p>"
    out = ['<table class="folds"><thead><tr><th>constant</th><th>value</th><th>shape</th><th>folded from</th>'
           '<th>your code</th><th>by</th></tr></thead><tbody>']
    for r in rows:
        out.append(f"<tr><td><code>{esc(r.constant)}</code></td><td><code>{esc(r.value)}</code></td>"
                   f"<td><code>{esc(r.shape)}</code></td><td>{_folded_from(r)}</td>"
                   f"<td>{_list(r.sources, 4)}</td><td>{esc(r.by)}</td></tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _folded_from(r: FoldRow) -> str:
    """The ops a fold came from (``3 ops: a, b, c``), or why it names none."""
    if not r.from_ops:
        return esc(r.note)
    n = len(r.from_ops)
    return f"{n} op{'s' if n != 1 else ''}: {_list(r.from_ops)}"


def report_fragment(c: ReportContent) -> str:
    """The report's body (no ``<html>``/``<head>``): what Jupyter shows for ``hloviz.show``."""
    parts = [f"<h1>{esc(c.title)}</h1>", f'<p class="verdict">{esc(c.verdict)}</p>']
    if c.facts:
        parts.append('<table class="facts">' + "".join(
            f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in c.facts) + "</table>")
    parts.append("<h2>Before and after optimization</h2>")
    if c.notes:
        parts.append('<ul class="notes">' + "".join(f"<li>{esc(n)}</li>" for n in c.notes) + "</ul>")
    if c.picture_svg is not None:
        parts.append(f'<div class="picture">{inline_svg(c.picture_svg)}</div>')
    else:
        parts.append(f'<p class="notes">{esc(c.picture_missing or "no picture")}</p>')
    parts.append(f"<h2>Kernels ({len(c.kernels)})</h2>")
    parts.append(_kernel_table(c.kernels))
    parts.append(f"<h2>Folded constants ({len(c.folds)})</h2>")
    parts.append(_fold_table(c.folds))
    if c.files:
        parts.append("<h2>Files</h2><ul>" + "".join(
            f'<li><a href="{esc(href)}">{esc(name)}</a></li>' for name, href in c.files) + "</ul>")
    if c.footer:
        parts.append(f"<footer>{esc(c.footer)}</footer>")
    return "\n".join(parts)


def _page(title: str, body: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{esc(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")


def page(title: str, body: str) -> str:
    """A self-contained HTML document around ``body`` (the report's styles and CSP)."""
    return _page(title, body)


def report_html(c: ReportContent) -> str:
    """The whole report as one self-contained HTML document."""
    return _page(c.title, report_fragment(c))


def picture_page(title: str, svg: str, notes: Sequence[str] = ()) -> str:
    """One picture as a self-contained HTML page (``hloviz render -o picture.html``)."""
    body = [f"<h1>{esc(title)}</h1>"]
    if notes:
        body.append('<ul class="notes">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    body.append(f'<div class="picture">{inline_svg(svg)}</div>')
    return _page(title, "\n".join(body))
