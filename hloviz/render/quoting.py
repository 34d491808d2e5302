"""The one place where text from a module becomes DOT, SVG or HTML.

Names, op_names, source paths and literals come from user code and from XLA; any of them may
hold ``"``, ``<script>``, ``\\``, ``&``, newlines or control characters. Everything hloviz
writes goes through the functions here, so escaping is decided once and tested once:

* :func:`printable` makes a string visible and XML-safe (control characters become ``\\n``,
  ``\\t``, ``\\x01`` …; characters XML 1.0 forbids never reach an SVG).
* :func:`dot_string` quotes a value for a DOT attribute (``tooltip="…"``).
* :func:`dot_html` escapes text for a DOT HTML-like label (``label=<…>``).
* :func:`html_text` escapes text for the HTML report (element content and attribute values).

DOT identifiers are never built from user text: :mod:`hloviz.render.layout.dot` numbers its nodes and
clusters (``n12``, ``cluster_3``), so no name can break the graph's syntax.
"""

from __future__ import annotations

import html
import re

__all__ = ["colour", "dot_html", "dot_string", "html_text", "printable", "shorten"]

_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
# C0/C1 controls, DEL, surrogates and the non-characters U+FFFE/U+FFFF: invalid or invisible in XML.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\n\t\r]")


def _visible(m: re.Match[str]) -> str:
    c = m.group(0)
    if c in _NAMED:
        return _NAMED[c]
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every control character written out as a C escape (``\\n``, ``\\x1b``).

    The result contains no character that XML 1.0 forbids, and no line breaks: one name is
    one line in a picture.
    """
    return _UNPRINTABLE.sub(_visible, text)


def shorten(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis in the middle (keeps both ends)."""
    if len(text) <= limit:
        return text
    keep = limit - 1
    head = (keep + 1) // 2
    return text[:head] + "…" + text[len(text) - (keep - head):]


def dot_string(text: str) -> str:
    """A double-quoted DOT string whose value Graphviz reads back as ``printable(text)``.

    Graphviz treats backslash sequences (``\\n``, ``\\N``, ``\\G``, ``\\l``) in labels and
    tooltips as escapes, so every backslash is doubled and the quote escaped. It also decodes
    HTML entities in these strings and copies entity-like text (``&lt;``) into SVG unescaped, so
    ``&`` is written as ``&amp;``: the picture then shows exactly the original text.
    """
    body = printable(text).replace("&", "&amp;").replace("\\", "\\\\").replace('"', '\\"')
    return f'"{body}"'


def dot_html(text: str) -> str:
    """``text`` for the inside of a DOT HTML-like label (``<TD>…</TD>``).

    Graphviz parses these labels as XML, so ``& < > "`` become entities; ``]`` is harmless;
    backslashes are literal there.
    """
    return html.escape(printable(text), quote=True)


def html_text(text: str) -> str:
    """``text`` for HTML element content or a double-quoted attribute value in the report."""
    return html.escape(printable(text), quote=True)


_COLOUR = re.compile(r"#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?|[a-zA-Z]{1,30}")


def colour(value: str) -> str:
    """``value`` if it is a colour hloviz writes (``#rrggbb``, ``#rrggbbaa`` or a name), else ValueError.

    Colours come from hloviz's styles or from a caller's marks; checking them keeps DOT, SVG and
    CSS free of anything else.
    """
    if not isinstance(value, str) or not _COLOUR.fullmatch(value):
        raise ValueError(f"not a colour: {value!r} (use #rrggbb)")
    return value
