"""Positions in source text: :class:`Span` (where) and :class:`SourceText` (a text being read).

Every :class:`hloviz.HloParseError` carries one frozen :class:`Span`; the message a user sees —
``file:line:col: error: ...``, the source line, a caret under the column — is formatted in one
place, :meth:`Span.format`. Parts of a module read lazily (attribute lists, computation
signatures) keep the span of their text, so their errors point at the true line and column.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Longer source lines are shown as a window around the column, so the caret stays on screen.
_SHOWN = 200


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
        """``file:line:col: error: message``, the source line, and a caret under the column."""
        shown = self.source_line.replace("\t", " ")
        caret_col = self.column
        if len(shown) > _SHOWN:
            start = max(0, self.column - _SHOWN // 2)
            shown = ("…" if start else "") + shown[start : start + _SHOWN]
            caret_col = self.column - start + (1 if start else 0)
        return f"{self}: error: {message}\n{shown}\n{' ' * (caret_col - 1)}^"


class SourceText:
    """A text being parsed, by name: turns 0-based line indexes and offsets into :class:`Span`."""

    __slots__ = ("filename", "text", "_lines")

    def __init__(self, text: str, filename: str | None = None) -> None:
        self.filename = filename or "<string>"
        self.text = text
        self._lines: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        """The text's lines as written (comments intact); split when first asked for."""
        if self._lines is None:
            self._lines = self.text.split("\n")
        return self._lines

    def span(self, line_index: int, column: int) -> Span:
        """The span at 0-based ``line_index`` and 0-based ``column`` (clamped into the text)."""
        lines = self.lines
        line_index = max(0, min(line_index, len(lines) - 1))
        source = lines[line_index] if lines else ""
        return Span(self.filename, line_index + 1, max(0, min(column, len(source))) + 1, source)

    def span_in(self, first_line: int, statement: str, offset: int) -> Span:
        """The span ``offset`` characters into ``statement``, which starts at ``first_line``
        (0-based) and may cover several lines."""
        offset = max(0, min(offset, len(statement)))
        line = first_line + statement.count("\n", 0, offset)
        return self.span(line, offset - (statement.rfind("\n", 0, offset) + 1))
