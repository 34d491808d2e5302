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
#: groups, ``<a>`` for tooltips, gradients) and what :mod:`hloviz.render.page.page` and the memory
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
    return _Check().run(svg) or _Check().run(_from_root(svg))


def _from_root(svg: str) -> str:
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


class _Check:
    """One pass of expat over a document, refusing at the first thing hloviz does not write."""

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.styles: list[str] = []

    def run(self, text: str) -> str | None:
        parser = expat.ParserCreate(namespace_separator=" ")
        parser.StartElementHandler = self.start
        parser.EndElementHandler = lambda _name: self.stack.pop()
        parser.CharacterDataHandler = self.data
        parser.StartDoctypeDeclHandler = self.doctype
        for handler in ("EntityDeclHandler", "UnparsedEntityDeclHandler", "NotationDeclHandler", "ElementDeclHandler",
                        "AttlistDeclHandler"):
            setattr(parser, handler, self.declaration)
        parser.ProcessingInstructionHandler = self.instruction
        try:
            parser.Parse(text, True)
        except _Refused as why:
            return str(why)
        except expat.ExpatError as err:
            return f"not well-formed XML ({expat.errors.messages.get(err.code, err)}, line {err.lineno})"
        if any(_LOADS.search(s) for s in self.styles):
            return "a stylesheet that loads something"
        return None

    def start(self, name: str, attrs: dict[str, str]) -> None:
        ns, _, local = name.rpartition(" ")
        if ns != SVG_NS or local not in ELEMENTS:
            raise _Refused(f"an element hloviz does not write: <{local}>")
        if not self.stack and local != "svg":
            raise _Refused(f"its root is <{local}>, not <svg>")
        self.stack.append(local)
        if local == "style":
            self.styles.append("")
        for key, value in attrs.items():
            _attribute(key, value)

    def data(self, chunk: str) -> None:
        if self.stack and self.stack[-1] == "style":
            self.styles[-1] += chunk

    @staticmethod
    def doctype(_name: str, _sysid: str | None, _pubid: str | None, internal: int) -> None:
        if internal:
            raise _Refused("a DOCTYPE with declarations of its own")

    @staticmethod
    def declaration(*_: object) -> None:
        raise _Refused("a declaration in its DOCTYPE")

    @staticmethod
    def instruction(target: str, _data: str) -> None:
        raise _Refused(f"a processing instruction <?{target}?>")


def _attribute(key: str, value: str) -> None:
    a_ns, _, local = key.rpartition(" ")
    if a_ns not in ("", XLINK_NS, XML_NS) or local.lower().startswith("on"):
        raise _Refused(f"an attribute hloviz does not write: {local}")
    if local in ("href", "src") and not value.startswith("#"):
        raise _Refused(f"a link out of the picture: {local}={value[:40]!r}")
    if local not in _LABELS and not local.startswith("data-") and _LOADS.search(value):
        raise _Refused(f"an attribute that loads or runs something: {local}")
