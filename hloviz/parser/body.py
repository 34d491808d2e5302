"""A computation's body, from the line after its header to its ``}``: the line reader.

In: the :class:`~hloviz.parser.state.ParseState`'s lines from where the body starts (perhaps
with a statement left on the header's line). Out: the body's instructions added to the
computation, its ``ROOT`` set, and the line after its closing ``}``; the names its instructions
wait for stay in the state, for :mod:`~hloviz.parser.resolve`.

Most of a body is read by the instruction scan (:meth:`InstructionReader.rows
<hloviz.parser.instructions.InstructionReader.rows>`), which stops at the first line it does
not take. :class:`BodyReader` reads from there a line at a time: comments, blank lines, a
second ``ROOT`` (an error), statements spread over several lines (joined here until their
brackets balance), the closing ``}`` with what may follow it; each statement goes to the fast
path (:meth:`~hloviz.parser.instructions.InstructionReader.fast`) or to the general one
(:class:`~hloviz.parser.statement.StatementReader`), and the scan resumes after it. It is a
module of its own because it is the one loop that knows where a statement ends and where the body
ends; the module reader (:mod:`~hloviz.parser.module`) only hands it each body.
"""

from __future__ import annotations

from ..ir import Computation, Instruction
from .attributes import split_attributes
from .instructions import FAST_INSTRUCTION, InstructionReader
from .state import ParseState, blank_line
from .statement import NEW_STATEMENT, Incomplete, StatementReader
from .text.scan import ScanError, net_depth, unterminated_quote

__all__ = ["MAX_JOINED_LINES", "BodyReader", "strings_end_on_their_line"]

#: A statement (or the module header) joined over more lines than this is reported unclosed.
MAX_JOINED_LINES = 10000


def strings_end_on_their_line(state: ParseState, statement: str, first: int) -> None:
    """Reject a quote whose string runs past its line in a statement that spans lines.

    Line by line such a quote is skipped and the brackets may still balance; printed on
    one line (:mod:`hloviz.printer`), it would pair with a quote further on and the text
    would read differently or not at all. (The module header, joined the same way, is checked
    with it too.)
    """
    quote = unterminated_quote(statement)
    if quote is not None:
        raise state.error_in("unterminated string: a string must end on the line it starts "
                             "(close it there, or write a quote inside a string as \\\")", first, statement, quote) from None


class BodyReader:
    """Reads the bodies of computations over one :class:`ParseState` (see the module docstring)."""

    __slots__ = ("state", "instructions", "statements")

    def __init__(self, state: ParseState, instructions: InstructionReader) -> None:
        self.state = state
        self.instructions = instructions
        self.statements = StatementReader(state)

    def read(self, computation: Computation, i: int, first: str | None, root_line: int | None = None,  # noqa: C901 - the line reader's loop, in one piece
             scanned: bool = False) -> int:
        """Read the statements of ``computation`` from line ``i`` (``first`` is any statement on
        the header's line) to its ``}``; return the line after it. ``scanned``: the instruction
        scan has read up to line ``i`` (and the ROOT on ``root_line``, if any) already."""
        state = self.state
        lines = state.lines
        if first is None and not scanned:  # the common instructions, in one scan; the loop below reads the rest
            i, root_line, closed = self._rows(computation, i, root_line)
            if closed:
                return i
        # The hot loop indexes the split block of lines it is in (a plain list), not ``lines``.
        block, base = lines.current, lines.current_first
        if not base <= i < base + len(block):
            last_line, offset = state.resume
            if i == last_line:  # where the scan stopped: what it read is never split into lines
                lines.seek(i, offset)
            block, base = lines.block(i)
        end = base + len(block)
        fast_match = FAST_INSTRUCTION.match
        fast = self.instructions.fast
        by_name = computation.by_name
        pending = first
        start = computation.line - 1
        while True:
            if pending is not None:
                text, line_index, pending = pending, i - 1, None
            else:
                if i >= end:
                    block, base = lines.block(i)
                    if not block:
                        raise state.error(f"computation '{computation.name}' is never closed with '}}'", start,
                                          len(lines[start].rstrip()))
                    end = base + len(block)
                text = block[i - base]
                line_index = i
                i += 1
                m = fast_match(text)
                if m is not None:
                    groups = m.groups()
                    inst = fast(computation, by_name, groups, m, line_index)
                    if inst is not None:
                        if groups[0]:
                            root_line = self._set_root(computation, inst, root_line, line_index, text)
                        continue
                if text == "}":  # the usual end of a computation
                    # and the one empty line XLA puts before the next: stepped over here, in the block
                    j = i - base
                    return i + 1 if j + 1 < len(block) and not block[j] and block[j + 1] else i
                text = blank_line(text)
            stripped = text.strip()
            if not stripped or stripped.startswith("//"):
                if line_index == i - 1:  # a line of its own (not the rest of the header's line)
                    i = lines.past(line_index)  # a run of blank or comment lines in one step
            elif stripped.startswith("}"):
                self._close(computation, text, line_index)
                return i
            else:
                inst, is_root, i = self._statement(computation, text, line_index, i)
                if is_root:
                    root_line = self._set_root(computation, inst, root_line, line_index, text)
            i, root_line, closed = self._rows(computation, i, root_line)  # back to the scan of common instructions
            if closed:
                return i

    def _rows(self, computation: Computation, i: int, root_line: int | None) -> tuple[int, int | None, bool]:
        """The common instructions from line ``i`` on (:meth:`InstructionReader.rows`, which stops
        before a second ROOT, for the line reader to report): the next line, the ROOT's line,
        and whether the body's closing ``}`` was read too."""
        i, root, at, closed = self.instructions.rows(computation, i, root_line is not None)
        if root is not None:
            root_line = self._set_root(computation, root, root_line, at, "")
        return i, root_line, closed

    def _set_root(self, computation: Computation, inst: Instruction, root_line: int | None, line_index: int,
                  text: str) -> int:
        if root_line is not None:
            raise self.state.error("a computation has only one ROOT; this is the second", line_index,
                                   len(text) - len(text.lstrip()))
        computation.root = inst
        return line_index

    def _statement(self, computation: Computation, text: str, first: int, i: int) -> tuple[Instruction, bool, int]:
        """An instruction the fast path did not take, joining the lines it goes on over; the
        instruction, whether it is the ROOT, and the next line to read."""
        while True:
            try:
                inst, is_root = self.statements.read(computation, text, first)
                return inst, is_root, i
            except Incomplete as incomplete:
                text, i = self._join(text, first, i, incomplete)

    def _join(self, text: str, first: int, i: int, incomplete: Incomplete) -> tuple[str, int]:
        """The statement with the next line joined, and more until the brackets balance and no
        comma dangles; the error of ``incomplete`` when a new statement or the end comes first."""
        lines = self.state.lines
        depth = net_depth(text)
        joined = False
        parts = [text]
        last = text  # the last line with more than spaces: does a comma dangle?
        while not joined or depth > 0 or last.rstrip().endswith(","):
            if not lines.has(i) or i - first > MAX_JOINED_LINES or NEW_STATEMENT.match(lines[i]) \
                    or (lines[i].strip() == "}" and depth <= 0):
                if incomplete.error is not None:
                    raise incomplete.error from None
                raise self.state.error("this instruction is never completed: a bracket is not closed",
                                       first, len(lines[first].rstrip())) from None
            line = lines[i] = blank_line(lines[i])
            depth += net_depth(line)
            parts.append(line)
            if line.strip():
                last = line
            i += 1
            joined = joined or bool(line.strip())
        text = "\n".join(parts)
        if depth < 0:
            raise self.state.error("this instruction is never completed: a bracket is not closed",
                                   first, len(lines[first].rstrip())) from None
        strings_end_on_their_line(self.state, text, first)
        return text, i

    def _close(self, computation: Computation, text: str, line_index: int) -> None:
        """The closing ``}`` and what may follow it (``, execution_thread="..."``)."""
        after = text.strip()[1:]
        if after.strip():
            try:
                attrs = split_attributes(after, 0)
            except ScanError as err:
                raise self.state.error(str(err), line_index, text.find("}") + 1 + err.offset) from None
            thread = attrs.get("execution_thread")
            if thread is not None:
                computation.execution_thread = thread.strip('"')
