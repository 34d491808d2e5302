"""Positions in source text: :class:`Span` (where) and :class:`SourceText` (a text being read).

Every :class:`hloviz.HloParseError` carries one frozen :class:`Span`; the message a user sees —
``file:line:col: error: ...``, the source line, a caret under the column — is formatted in one
place, :meth:`Span.format`. Parts of a module read lazily (attribute lists, computation
signatures) keep the span of their text, so their errors point at the true line and column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Longer source lines are shown as a window around the column, so the caret stays on screen.
_SHOWN = 200


# Control characters a terminal acts on (ESC starts colour, cursor and title sequences; C1
# controls; DEL) and the Unicode format characters that reorder or hide text (bidi overrides
# and isolates such as U+202E, zero-width marks). Newlines and tabs are kept.
_TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e"
                              "\u2060-\u2069\ufeff\ufff9-\ufffb]")


def visible(text: str) -> str:
    """``text`` safe to print on a terminal or in markdown: every control or bidi/format
    character is written out as an escape (``\\x1b``, ``\\u202e``), so input text can neither
    send escape sequences to the terminal nor reorder what the reader sees. Newlines and tabs
    stay."""
    if not _TERMINAL_UNSAFE.search(text):
        return text
    return _TERMINAL_UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                                else f"\\u{ord(m.group()):04x}", text)


@dataclass(frozen=True, slots=True)
class Span:
    """A point in a source file: 1-based ``line`` and ``column`` (in characters) and the text of
    that line, kept so that a message can show it."""

    filename: str
    line: int
    column: int
    source_line: str = ""

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.column}"

    def shifted(self, offset: int, text: str) -> Span:
        """The span ``offset`` characters into ``text``, a piece of source that starts here.

        ``text`` may go on over several lines; a later line's own text becomes the source line.
        """
        offset = max(0, min(offset, len(text)))
        newlines = text.count("\n", 0, offset)
        if not newlines:
            return Span(self.filename, self.line, self.column + offset, self.source_line)
        start = text.rfind("\n", 0, offset) + 1
        end = text.find("\n", start)
        return Span(self.filename, self.line + newlines, offset - start + 1, text[start : end if end >= 0 else None])

    def format(self, message: str) -> str:
        """``file:line:col: error: message``, the source line, and a caret under the column;
        control and bidi characters of the input are shown escaped (:func:`visible`)."""
        shown = self.source_line.replace("\t", " ")
        caret_col = self.column
        if len(shown) > _SHOWN:
            start = max(0, self.column - _SHOWN // 2)
            shown = ("…" if start else "") + shown[start : start + _SHOWN]
            caret_col = self.column - start + (1 if start else 0)
        # the excerpt, file name and message carry the input's own text: escape what a terminal
        # would act on, and keep the caret under the same character
        caret_col = len(visible(shown[: caret_col - 1])) + 1
        shown = visible(shown.replace("\n", " "))
        where = f"{visible(self.filename)}:{self.line}:{self.column}"
        return f"{where}: error: {visible(message)}\n{shown}\n{' ' * (caret_col - 1)}^"


class SourceText:
    """A text being parsed, by name: turns 0-based line indexes and offsets into :class:`Span`.

    The text is never split into a list of lines (that costs about 9 bytes per line for blank
    lines, more for short ones): a line is found, when an error needs it, by counting newlines.
    """

    __slots__ = ("filename", "text", "_count", "_found")

    def __init__(self, text: str, filename: str | None = None) -> None:
        self.filename = filename or "<string>"
        self.text = text
        self._count = -1
        self._found = (0, 0)  # the last line looked up and its offset: errors ask twice

    def line_count(self) -> int:
        """The number of lines (``text.split("\\n")`` would give as many)."""
        if self._count < 0:
            self._count = self.text.count("\n") + 1
        return self._count

    def line(self, index: int) -> str:
        """Line ``index`` (0-based) as written, comments intact; "" outside the text."""
        if not 0 <= index < self.line_count():
            return ""
        start = self._offset(index)
        end = self.text.find("\n", start)
        return self.text[start : end if end >= 0 else None]

    def _offset(self, index: int) -> int:
        """Where line ``index`` starts. Newlines are counted by ``str.count`` over a span that
        doubles until it holds the line, which is then narrowed down by halves: C-speed work in
        proportion to the distance from the line looked up last, and a few Python steps."""
        text, n = self.text, len(self.text)
        line, pos = self._found if self._found[0] <= index else (0, 0)
        need = index - line  # newlines to pass from ``pos``
        size = 64
        end = min(pos + size, n)
        while need and end < n and text.count("\n", pos, end) < need:
            size *= 2
            end = min(pos + size, n)
        while need and end - pos > 64:
            mid = (pos + end) // 2
            found = text.count("\n", pos, mid)
            if found >= need:
                end = mid
            else:
                pos, need = mid, need - found
        for _ in range(need):
            pos = text.index("\n", pos) + 1
        self._found = (index, pos)
        return pos

    def span(self, line_index: int, column: int) -> Span:
        """The span at 0-based ``line_index`` and 0-based ``column`` (clamped into the text)."""
        line_index = max(0, min(line_index, self.line_count() - 1))
        source = self.line(line_index)
        return Span(self.filename, line_index + 1, max(0, min(column, len(source))) + 1, source)

    def span_in(self, first_line: int, statement: str, offset: int) -> Span:
        """The span ``offset`` characters into ``statement``, which starts at ``first_line``
        (0-based) and may cover several lines."""
        offset = max(0, min(offset, len(statement)))
        line = first_line + statement.count("\n", 0, offset)
        return self.span(line, offset - (statement.rfind("\n", 0, offset) + 1))
