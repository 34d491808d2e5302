"""What one parse shares: :class:`ParseState`, explicit and typed.

The module reader (:mod:`hloviz.parser.module`), the body reader (:mod:`hloviz.parser.body`) and
the instruction readers (the fast path, :mod:`hloviz.parser.instructions`, and the general one,
:mod:`hloviz.parser.statement`) are objects over one state, which :mod:`hloviz.parser.resolve`
empties: the text (as a :class:`~hloviz.source.SourceText`, for errors, and as
:class:`~hloviz.parser.text.lines.Lines`, for reading), the shape
cache, the module being built, and what waits to be resolved — operand names (kept apart from the
resolved operands, which are only ever instructions), control predecessors, called computations,
shapes left out of the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import NamedTuple

from ..errors import HloParseError
from ..ir import HloModule, Instruction, Metadata, quoted_string_pattern
from ..source import SourceText
from .shapes import ShapeParser
from .text.lines import Lines

# A string, a comment (an unclosed "/*" runs to the end: one match, not one scan per "/*"), or "//".
_COMMENT_OR_STRING = re.compile(quoted_string_pattern() + r'|/\*.*?(?:\*/|\Z)|//[^\n]*', re.DOTALL)


def _blank(m: re.Match[str]) -> str:
    t = m.group()
    return t if t[0] == '"' else re.sub(r"[^\n]", " ", t)


def blank_comments(text: str) -> str:
    """``text`` with comments that span lines blanked, all at once (rare); columns and line
    numbers stay true.

    One-line comments are blanked line by line, only on lines the fast path does not take
    (see :func:`blank_line`), so the common case costs nothing.
    """
    if "/*" in text and _open_comment(text):
        return _COMMENT_OR_STRING.sub(_blank, text)
    return text


# A comment up to its "*/" on the same line (group 1) or to the line's end (group 1 empty): consumed
# whole, so no "/*" inside it is tried again; one pass over the text, led by the literal "/*".
_COMMENT_ON_ITS_LINE = re.compile(r"/\*(?:[^*\n]|\*(?!/))*+(\*/)?")


def _open_comment(text: str) -> bool:
    """Is there a "/*" whose "*/" is not on the same line?"""
    return "" in _COMMENT_ON_ITS_LINE.findall(text)


def blank_line(line: str) -> str:
    """``line`` with ``/* ... */`` and ``// ...`` comments replaced by spaces (columns stay true)."""
    if "/*" in line or "//" in line:
        return _COMMENT_OR_STRING.sub(_blank, line)
    return line


#: An attribute text's split (read-only: a ``MappingProxyType``) and its parsed metadata, shared by
#: the instructions with that text.
SharedAttributes = tuple[Mapping[str, str], Metadata | None]


class PendingCall(NamedTuple):
    """An attribute naming computations (``calls=%f``), resolved once every computation exists.

    Where its value is (for an error) is worked out only when asked (:meth:`position`): from
    ``statement``, a text holding the instruction, whose line ``line_index`` starts at offset
    ``line_start`` and whose attribute list starts at ``start``."""

    instruction: Instruction
    attribute: str
    value: str
    line_index: int
    statement: str
    line_start: int
    start: int

    def position(self) -> tuple[int, int]:
        """The 0-based line and column where the value starts (a statement may go on over lines)."""
        text, first = self.statement, self.line_start
        at = text.find(self.attribute + "=", self.start) + len(self.attribute) + 1
        newline = text.rfind("\n", first, at)
        return self.line_index + text.count("\n", first, at), at - (newline + 1 if newline >= 0 else first)


class ParseState:
    """The state of one parse of one text (see the module docstring)."""

    __slots__ = ("source", "lines", "shapes", "module", "pending_calls", "unresolved", "predecessors",
                 "inferred", "nested", "nesting", "attribute_lists", "attribute_heads", "resume")

    def __init__(self, text: str, filename: str | None, statements: Iterator[tuple[str, int]] | None = None) -> None:
        """``statements``, when given, are the lines to read instead of ``text``'s (the second
        reading, :mod:`~hloviz.parser.text.reflow`); ``text`` stays the source errors point into."""
        self.source = SourceText(text, filename)
        #: The lines being read: comments are blanked as lines are read, and statements joined.
        self.lines = Lines.of_text(blank_comments(text)) if statements is None else Lines.of_statements(statements)
        self.shapes = ShapeParser()
        self.module = HloModule("", filename=self.source.filename)
        self.pending_calls: list[PendingCall] = []
        #: Instructions of the current computation and the operand names they wait for.
        self.unresolved: list[tuple[Instruction, list[str]]] = []
        #: Instructions of the current computation and their ``control-predecessors`` text.
        self.predecessors: list[tuple[Instruction, str]] = []
        #: Instructions of the current computation written without a shape.
        self.inferred: list[Instruction] = []
        #: Names made for nested instruction expressions so far, and how deep the current one is.
        self.nested = 0
        self.nesting = 0
        #: Attribute text → its split, shared by every instruction with that text (most texts
        #: repeat: the same attributes and metadata on every op one framework op became).
        self.attribute_lists: dict[str, SharedAttributes] = {}
        #: The part of those texts before their ``, metadata={...}`` → its split (far fewer
        #: distinct texts: :func:`~hloviz.parser.attributes.split_common_attributes`).
        self.attribute_heads: dict[str, dict[str, str]] = {}
        #: A line the instruction scan stopped at and where it starts in the text (the text
        #: never changes, so any such pair stays true).
        self.resume: tuple[int, int] = (0, 0)

    def error(self, message: str, line_index: int, column: int) -> HloParseError:
        """An error at 0-based ``line_index`` and 0-based ``column``."""
        return HloParseError(message, span=self.source.span(line_index, column))

    def error_in(self, message: str, first_line: int, statement: str, offset: int) -> HloParseError:
        """An error ``offset`` characters into ``statement``, which starts at line ``first_line``."""
        return HloParseError(message, span=self.source.span_in(first_line, statement, offset))
