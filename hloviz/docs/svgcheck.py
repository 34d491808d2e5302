"""Whether an SVG is one hloviz could have written: :func:`svg_problem`.

The docs cache keeps pictures between builds, often in a CI cache anyone with write access to
the cache can change. A picture read back from it is inlined into a page, so before it is used
it must be the kind of document hloviz writes, whatever its hash says (a hash proves the file is
whole, not who wrote it): SVG elements of the kinds Graphviz and hloviz's own timeline draw,
attributes that run nothing and load nothing, a stylesheet that loads nothing, no entity
declarations, nothing before or after the one ``<svg>`` root but the XML declaration, a
DOCTYPE naming an outside DTD, comments and white space. Anything else — a ``<script>``, a
``<foreignObject>``, an ``onload=``, a ``javascript:`` link, ``@import`` — and the picture is
drawn again.
"""

from __future__ import annotations

import re
from xml.parsers import expat

__all__ = ["ELEMENTS", "svg_problem"]

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
XML_NS = "http://www.w3.org/XML/1998/namespace"

#: The SVG elements hloviz's pictures use: what Graphviz's SVG writer emits (shapes, text,
#: groups, ``<a>`` for tooltips, gradients) and what :mod:`hloviz.render.page` and the memory
#: timeline add (``<style>``, ``<desc>``, ``<rect>``, ``<line>``).
ELEMENTS = frozenset({
    "svg", "g", "title", "desc", "style", "defs", "a", "polygon", "polyline", "path", "ellipse", "circle", "rect",
    "line", "text", "tspan", "linearGradient", "radialGradient", "stop",
})

#: What makes a style or an attribute load or run something (``url(#gradient)`` is a reference
#: inside the picture, as Graphviz writes gradient fills, and stays allowed).
_LOADS = re.compile(r"@import|url\s*\(\s*(?![\"']?#)|expression\s*\(|javascript:|behavior\s*:|-moz-binding",
                    re.IGNORECASE)
#: Attributes that only label (tooltips, accessible names, hloviz's own data): text, never run.
_LABELS = frozenset({"title", "aria-label", "aria-labelledby", "aria-describedby"})


class _Refused(Exception):
    pass


def svg_problem(svg: str) -> str | None:
    """None when ``svg`` is a picture of the kind hloviz writes (see the module docstring); else
    what is wrong with it, in a few words. The file is checked, and so is the part a page inlines
    (from its first ``<svg``, :func:`hloviz.docs.pictures.svg_body`), which must be the root."""
    return _check(svg) or _check(_from_root(svg))


def _from_root(svg: str) -> str:
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


def _check(text: str) -> str | None:
    parser = expat.ParserCreate(namespace_separator=" ")
    stack: list[str] = []
    styles: list[str] = []

    def refuse(why: str) -> None:
        raise _Refused(why)

    def start(name: str, attrs: dict[str, str]) -> None:
        ns, _, local = name.rpartition(" ")
        if ns != SVG_NS or local not in ELEMENTS:
            refuse(f"an element hloviz does not write: <{local}>")
        if not stack and local != "svg":
            refuse(f"its root is <{local}>, not <svg>")
        stack.append(local)
        if local == "style":
            styles.append("")
        for key, value in attrs.items():
            a_ns, _, a_local = key.rpartition(" ")
            if a_ns not in ("", XLINK_NS, XML_NS) or a_local.lower().startswith("on"):
                refuse(f"an attribute hloviz does not write: {a_local}")
            if a_local in ("href", "src") and not value.startswith("#"):
                refuse(f"a link out of the picture: {a_local}={value[:40]!r}")
            if a_local not in _LABELS and not a_local.startswith("data-") and _LOADS.search(value):
                refuse(f"an attribute that loads or runs something: {a_local}")

    def end(name: str) -> None:
        stack.pop()

    def data(chunk: str) -> None:
        if stack and stack[-1] == "style":
            styles[-1] += chunk

    def doctype(name: str, sysid: str | None, pubid: str | None, internal: int) -> None:
        if internal:
            refuse("a DOCTYPE with declarations of its own")

    def declaration(*_: object) -> None:
        refuse("a declaration in its DOCTYPE")

    def instruction(target: str, _data: str) -> None:
        refuse(f"a processing instruction <?{target}?>")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = data
    parser.StartDoctypeDeclHandler = doctype
    parser.EntityDeclHandler = declaration
    parser.UnparsedEntityDeclHandler = declaration
    parser.NotationDeclHandler = declaration
    parser.ElementDeclHandler = declaration
    parser.AttlistDeclHandler = declaration
    parser.ProcessingInstructionHandler = instruction
    parser.ExternalEntityRefHandler = lambda *_: refuse("a reference to an outside entity") or 0
    try:
        parser.Parse(text, True)
    except _Refused as why:
        return str(why)
    except expat.ExpatError as err:
        return f"not well-formed XML ({expat.errors.messages.get(err.code, err)}, line {err.lineno})"
    if any(_LOADS.search(s) for s in styles):
        return "a stylesheet that loads something"
    return None
