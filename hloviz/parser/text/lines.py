"""The lines of a text being parsed, split a block at a time as the reader reaches them.

The parser reads line by line. It used to split the whole text first: a list of every line costs
8 bytes per line plus an object per line, so text made of short lines (50 MB of blank lines, of
``}`` or of ``ab`` lines) cost 9-200x its size before the first line was even read.
:class:`Lines` splits about 256 KB of text at a time and keeps a few blocks; runs of blank and
comment-only lines are stepped over in one regular-expression match (:meth:`Lines.skip`), so
they cost neither memory nor a Python step per line. The same class serves the second reading
(:mod:`~hloviz.parser.text.reflow`), whose statements are made only as the reader asks for them.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Iterator
from itertools import accumulate

# Spaces and newlines: the common run, matched about 8x faster than the pattern below.
_SPACES = re.compile(r"\s*+")
# A run of whole lines holding nothing but spaces and comments (the reader skips them). Every
# quantifier is possessive and every repetition consumes: one linear pass, whatever the text.
_SKIPPABLE_RUN = re.compile(r"(?:[^\S\n]*+(?:(?:/\*(?:[^*\n]|\*(?!/))*+\*/|//[^\n]*+)[^\S\n]*+)*+\n)++")


def _skippable_run_end(text: str, pos: int) -> int:
    """Where the run of whole skippable lines (spaces and comments) from line start ``pos`` ends:
    the start of the first line with something else, or of the last line if it has no newline."""
    while True:
        spaces = _SPACES.match(text, pos)  # always matches (perhaps nothing)
        stop = spaces.end() if spaces else pos
        line = text.rfind("\n", pos, stop) + 1 or pos  # the start of the line ``stop`` is on
        if not text.startswith("/", stop):
            return line
        m = _SKIPPABLE_RUN.match(text, line)  # a comment: lines with comments, the slower way
        if m is None:
            return line
        pos = m.end()


#: Text split per block; a line longer than this is a block of its own.
_BLOCK_CHARS = 1 << 18
#: Blocks of a text kept split at once (a block read again is split again).
_KEPT_BLOCKS = 4
#: Statements pulled from a statement source per block.
_BLOCK_STATEMENTS = 4096


class Lines:
    """The lines of a text, by 0-based index, split a block at a time as they are reached.

    ``lines[i]`` reads a line and ``lines[i] = s`` keeps a rewritten one (comments blanked) for as
    long as its block stays split; :meth:`block` hands the reader's hot loop a plain list.
    ``len()`` is the number of lines. Lines come from a text (:meth:`of_text`) or from a
    source of ``(statement, line number)`` pairs (:meth:`of_statements`, the second reading of
    :mod:`~hloviz.parser.text.reflow`), which is pulled only as far as the reader goes, so a text
    that fails early costs little however long it is.
    """

    __slots__ = ("_text", "_statements", "_count", "_firsts", "_offsets", "_ends", "_sizes", "_blocks", "_starts",
                 "line_of", "_next_line", "_next_offset", "current", "current_first")

    def __init__(self, text: str, statements: Iterator[tuple[str, int]] | None) -> None:
        self._text = text
        self._statements = statements
        #: The number of lines, once known (a text's at once; a statement source's at its end).
        self._count = text.count("\n") + 1 if statements is None else -1
        # Blocks split so far, in order: first line, text offset and number of lines of each.
        # Lines between two blocks were skipped (:meth:`skip`): blank or comments only.
        self._firsts: list[int] = []
        self._offsets: list[int] = []
        self._ends: list[int] = []
        self._sizes: list[int] = []
        self._blocks: dict[int, list[str]] = {}
        self._starts: dict[int, array[int]] = {}  # offsets of a block's lines, made when skipping
        #: For a statement source: the line number (1-based) in the original text of each line.
        self.line_of: array[int] = array("q")
        self._next_line = 0
        self._next_offset = 0
        #: The block read last and the index of its first line: most reads fall in it, and the
        #: reader's loops check it before calling a method (a call per line would cost 10%).
        self.current: list[str] = []
        self.current_first = 0

    @classmethod
    def of_text(cls, text: str) -> Lines:
        """The lines of ``text`` (``text.split("\\n")``, read lazily)."""
        return cls(text, None)

    @classmethod
    def of_statements(cls, statements: Iterator[tuple[str, int]]) -> Lines:
        """One line per ``(statement, original line)`` pair; the pairs are pulled as needed."""
        return cls("", statements)

    # -- reading ---------------------------------------------------------------------------

    def __len__(self) -> int:
        while self._count < 0:
            self._split_next()
        return self._count

    def has(self, i: int) -> bool:
        """Is there a line ``i``? (For a statement source, pulls no further than line ``i``.)"""
        if self._count >= 0:
            return 0 <= i < self._count
        while self._count < 0 and i >= self._next_line:
            self._split_next()
        return i >= 0 and (self._count < 0 or i < self._count)

    def block(self, i: int) -> tuple[list[str], int]:
        """The split block holding line ``i`` and the index of its first line: a plain list for a
        loop to index directly. Past the end, an empty list; a skipped line, ``[""]``."""
        k = self._locate(i)
        if k is None:
            return ([""], i) if 0 <= i < self._next_line else ([], i)
        block = self._blocks.get(k)
        if block is None:
            block = self._resplit(k)
        self.current, self.current_first = block, self._firsts[k]
        return block, self.current_first

    def __getitem__(self, i: int) -> str:
        j = i - self.current_first
        if 0 <= j < len(self.current):
            return self.current[j]
        block, first = self.block(i)
        if not block:
            raise IndexError(i)
        return block[i - first]

    def __setitem__(self, i: int, line: str) -> None:
        j = i - self.current_first
        if 0 <= j < len(self.current):
            self.current[j] = line
            return
        block, first = self.block(i)
        if not block:
            raise IndexError(i)
        block[i - first] = line

    def past(self, i: int) -> int:
        """Line ``i`` holds only spaces or comments: the next line worth reading. One such line
        (XLA puts one between computations) costs one step; a run of them, one :meth:`skip`."""
        j = i + 1
        if self.has(j):
            nxt = self[j]
            if not nxt or nxt.isspace() or nxt.lstrip().startswith(("//", "/*")):
                return max(j + 1, self.skip(j))
        return j

    def skip(self, i: int) -> int:
        """The first line from ``i`` on that holds more than spaces and comments (or the end).
        One match over the text, however many lines it steps over."""
        k = self._locate(i)
        if self._statements is not None or k is None:
            return i
        if k not in self._blocks:
            self._resplit(k)
        pos = self._line_offset(k, i - self._firsts[k])
        end = _skippable_run_end(self._text, pos)
        j = i + self._text.count("\n", pos, end)
        if j > self._next_line:  # past what is split: the next block starts at j
            self._next_line, self._next_offset = j, end
        return j

    def seek(self, i: int, offset: int) -> None:
        """Line ``i`` starts at ``offset`` in :attr:`text`, and no line before it will be read:
        the next block split starts there. The instruction scan reads the text without lines;
        without this, the first line read after it (a header with comments, a statement it left)
        would split every block before it (the whole text, for a module whose entry comes last)."""
        if self._statements is None and i > self._next_line:
            self._next_line, self._next_offset = i, offset

    @property
    def text(self) -> str | None:
        """The text the lines are of (comments blanked), or None for a statement source."""
        return self._text if self._statements is None else None

    def offset(self, i: int) -> int:
        """Where line ``i`` starts in :attr:`text`; -1 for a statement source, a line past the end
        or a skipped one."""
        k = self._locate(i)
        if self._statements is not None or k is None:
            return -1
        if k not in self._blocks:
            self._resplit(k)
        return self._line_offset(k, i - self._firsts[k])

    # -- splitting -------------------------------------------------------------------------

    def _locate(self, i: int) -> int | None:
        """The block holding line ``i`` (split up to it first), or None: past the end, or skipped."""
        while i >= self._next_line and (self._count < 0 or self._next_line < self._count):
            self._split_next()
        k = bisect_right(self._firsts, i) - 1
        if k < 0 or i >= self._firsts[k] + self._sizes[k]:
            return None
        return k

    def _split_next(self) -> None:
        """Split the next block of the text, or pull the next statements; at the end, the count
        is known."""
        if self._statements is not None:
            self._pull_next()
            return
        text, start = self._text, self._next_offset
        n = len(text)
        end = min(start + _BLOCK_CHARS, n)
        if end < n:
            nl = text.rfind("\n", start, end)
            if nl < 0:
                nl = text.find("\n", end)
            end = n if nl < 0 else nl + 1
        lines = text[start:end].split("\n")
        if end < n:
            lines.pop()  # the empty piece after the block's last newline: the next block's
        self._add(lines, start, end)
        self._next_offset = end

    def _pull_next(self) -> None:
        """Pull the next block of statements: 1, 2, 4 ... up to :data:`_BLOCK_STATEMENTS`, so that
        a reader that stops at the first statements has made no more than those."""
        assert self._statements is not None
        lines: list[str] = []
        size = 0
        wanted = min(_BLOCK_STATEMENTS, 1 << len(self._firsts))
        for statement, line in self._statements:
            lines.append(statement)
            self.line_of.append(line)
            size += len(statement)
            if len(lines) >= wanted or size >= _BLOCK_CHARS:
                break
        else:
            self._count = self._next_line + len(lines)
        if lines:
            self._add(lines, 0, 0)

    def _add(self, lines: list[str], offset: int, end: int) -> None:
        k = len(self._firsts)
        self._firsts.append(self._next_line)
        self._offsets.append(offset)
        self._ends.append(end)
        self._sizes.append(len(lines))
        self._blocks[k] = lines
        self._next_line += len(lines)
        if self._statements is None and len(self._blocks) > _KEPT_BLOCKS:
            oldest = min(self._blocks)
            del self._blocks[oldest]
            self._starts.pop(oldest, None)

    def _resplit(self, k: int) -> list[str]:
        """Block ``k`` split again (it was dropped to bound memory)."""
        lines = self._text[self._offsets[k] : self._ends[k]].split("\n")
        if len(lines) > self._sizes[k]:
            lines.pop()
        self._blocks[k] = lines
        while len(self._blocks) > _KEPT_BLOCKS:
            oldest = min(b for b in self._blocks if b != k)
            del self._blocks[oldest]
            self._starts.pop(oldest, None)
        return lines

    def _line_offset(self, k: int, j: int) -> int:
        """The text offset of line ``j`` of block ``k``."""
        starts = self._starts.get(k)
        if starts is None:
            block = self._blocks[k]
            starts = self._starts[k] = array("q", accumulate((len(line) + 1 for line in block),
                                                              initial=self._offsets[k]))
        return starts[j]
