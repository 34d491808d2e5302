"""Graphviz's SVG made fit for a page: named for screen readers, sized for a column, themed.

Graphviz writes an SVG of fixed size in points, black on a white slab, whose only ``<title>``
names the graph ("hloviz"). A picture in someone's docs needs more, and this module adds it
after layout, so the drawing itself is untouched and text stays text (searchable, selectable):

* ``role="img"`` with ``aria-labelledby`` pointing at a ``<title>`` (what the picture is) and a
  ``<desc>`` (the verdict: what XLA did), the first children of the root;
* ``width`` / ``max_height``: the root's width becomes the asked one and its height follows the
  ``viewBox``'s aspect ratio, so a picture scales into a docs column instead of overflowing it;
* a theme: ``light`` is Graphviz's own colours; ``dark`` turns the slab transparent and what is
  drawn on it (edges, arrowheads, labels outside nodes, cluster frames) light; ``auto`` holds
  both in one file. On its own (opened, or shown through ``<img>``) an ``auto`` picture follows
  the reader's ``prefers-color-scheme``; inlined in a page it follows the page's theme: the dark
  schemes of Sphinx themes (``data-theme="dark"``/``"auto"``: Furo, PyData, Book) and MkDocs
  Material (``data-md-color-scheme="slate"``); on a page whose theme has no dark mode it stays
  light.

Every id and class it adds derives from the SVG's own bytes, so the same input gives the same
output, and two pictures inlined in one page do not share ids.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING

from ...errors import InputError

if TYPE_CHECKING:
    from ..pictures import Picture

__all__ = ["THEMES", "DarkRules", "PageOptions", "for_page", "page_picture"]

THEMES = ("light", "dark", "auto")

#: A CSS length as hloviz takes it: ASCII digits only (``\d`` alone would take ``١٠٠px``, which
#: no browser reads as a length).
_LENGTH = re.compile(r"(?:[0-9]{1,10}(?:\.[0-9]{1,10})?)(?:px|pt|em|rem|%|vw|vh|cm|mm|in)?", re.ASCII)


@dataclass(frozen=True)
class PageOptions:
    """How a picture should sit on a page. ``width``/``max_height`` are CSS lengths (``640px``,
    ``100%``, ``40em``; a bare number is pixels)."""

    theme: str = "light"
    width: str | None = None
    max_height: str | None = None

    def __post_init__(self) -> None:
        if self.theme not in THEMES:
            raise InputError(f"--theme must be one of {', '.join(THEMES)}, not {self.theme!r}")
        for name, value in (("--width", self.width), ("--max-height", self.max_height)):
            if value is not None and not _LENGTH.fullmatch(value.strip()):
                shown = value if len(value) <= 40 else f"{value[:40]}… ({len(value)} characters)"
                raise InputError(f"{name} must be a CSS length such as 640px, 100% or 40em (ASCII digits), "
                                 f"not {shown!r}")


def _css_length(value: str) -> str:
    value = value.strip()
    return value + "px" if re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", value) else value


_SVG_OPEN = re.compile(r"<svg\b[^>]*>", re.DOTALL)


def for_page(svg: str, options: PageOptions = PageOptions(), *, title: str, description: str = "",
             dark_rules: DarkRules | None = None) -> str:
    """``svg`` (Graphviz's output) with a title and description for screen readers, and the
    size and theme of ``options``. Applying it twice gives the same as once.

    ``dark_rules`` say what dark means for an SVG hloviz writes itself (the memory timeline):
    ``(selectors, declarations)`` pairs, each selector scoped to this picture; the default is
    Graphviz's."""
    m = _SVG_OPEN.search(svg)
    if m is None:
        return svg
    if 'data-hloviz-page="1"' in m.group(0):
        return svg
    ident = "hz" + hashlib.sha256(svg.encode("utf-8")).hexdigest()[:12]
    tag = _root_tag(m.group(0), ident, options)
    head = [f'<title id="{ident}-title">{escape(title, quote=False)}</title>']
    if description:
        head.append(f'<desc id="{ident}-desc">{escape(description, quote=False)}</desc>')
    css = _theme_css(ident, options.theme, _DARK_RULES if dark_rules is None else dark_rules)
    if css:
        head.append(f"<style>{css}</style>")
    return svg[: m.start()] + tag + "\n" + "\n".join(head) + svg[m.end():]


def _root_tag(tag: str, ident: str, options: PageOptions) -> str:
    labelled = f"{ident}-title" + ("" if "<desc" in tag else f" {ident}-desc")
    attrs = f' role="img" aria-labelledby="{labelled}" class="hloviz {ident}" data-hloviz-page="1"'
    if options.width is not None or options.max_height is not None:
        tag = re.sub(r'\s(width|height)="[^"]*"', "", tag)
        style = [f"width:{_css_length(options.width) if options.width else '100%'}", "height:auto"]
        if options.max_height is not None:
            style.append(f"max-height:{_css_length(options.max_height)}")
        attrs += f' style="{";".join(style)}"'
    return tag[:-1] + attrs + ">"


# What dark means for a Graphviz picture: the slab goes, and what is drawn straight on it turns
# light. Nodes keep their fills (pale, with dark text), so their text stays dark.
_LIGHT_INK = "#d0d7de"
#: The neutral inks hloviz draws arrows in (coloured arrows, such as a diff's, keep their colour).
_NEUTRAL = ("black", "#000000", "#616161")
#: What dark means: (selectors, CSS declarations) pairs.
DarkRules = tuple[tuple[tuple[str, ...], str], ...]
_DARK_RULES: DarkRules = (
    ((".graph>polygon:first-of-type",), "fill:transparent;stroke:transparent"),
    ((".graph>text", ".cluster>text", ".edge text:not([fill])",
      ".node:has(polygon[fill=none]):not(:has(polygon:not([fill=none]))) text",
      ".node:not(:has(polygon,ellipse,path)) text"), f"fill:{_LIGHT_INK}"),
    ((".cluster>path", ".cluster>polygon"), "fill:rgba(255,255,255,0.06)"),
    (tuple(f'.edge path[stroke="{c}"]' for c in _NEUTRAL) + (".edge path:not([stroke])",), f"stroke:{_LIGHT_INK}"),
    (tuple(f'.edge polygon[fill="{c}"]' for c in _NEUTRAL), f"fill:{_LIGHT_INK}"),
    (tuple(f'.edge polygon[stroke="{c}"]' for c in _NEUTRAL), f"stroke:{_LIGHT_INK}"),
)


def _dark(scope: str, rules: DarkRules) -> str:
    """The dark ``rules``, each selector under ``scope``."""
    return "".join(",".join(f"{scope} {sel}" for sel in selectors) + "{" + declarations + "}"
                   for selectors, declarations in rules)


def _theme_css(ident: str, theme: str, rules: DarkRules) -> str:
    if theme == "light":
        return ""
    own = f"svg.{ident}"
    if theme == "dark":
        return _dark(own, rules)
    # auto: a picture on its own (opened, or an <img>) follows the reader's preference. Inlined
    # in a page, it follows the page: dark only where the page's theme says so (Furo / PyData /
    # Book themes' data-theme, MkDocs Material's data-md-color-scheme), so a page whose theme has
    # no dark mode keeps a light picture whatever the reader's preference.
    preferred = _dark(f":is({own}:root,[data-theme=auto] {own})", rules)
    forced = _dark(f":is([data-theme=dark] {own},[data-md-color-scheme=slate] {own})", rules)
    return f"@media (prefers-color-scheme:dark){{{preferred}}}{forced}"


def page_picture(picture: Picture, options: PageOptions = PageOptions(), *, description: str = "") -> Picture:
    """``picture`` with its SVG made fit for a page (other formats are returned as they are):
    titled with the picture's own title, described by ``description`` (the verdict)."""
    from dataclasses import replace

    if picture.format != "svg":
        return picture
    text = for_page(picture.data.decode("utf-8"), options, title=picture.title, description=description)
    data = text.encode("utf-8")
    return replace(picture, data=data, svg=data)
