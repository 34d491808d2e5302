"""HLO module text → :class:`hloviz.ir.HloModule`: the module and the computations' outline.

In: a :class:`~hloviz.parser.state.ParseState` over the whole text. Out: the module, with its
name and header attributes, its stack-frame tables, its computations in order, the entry, and
every called computation resolved. :class:`ModuleReader` reads what lies between computation
bodies: the ``HloModule`` header (or its absence, as in XLA's emitter tests), blank and comment
lines, the ``FileNames`` … tables newer XLA prints, and each computation's header with its
signature (kept as text, read when asked for). It hands each body to the body reader
(:mod:`~hloviz.parser.body`), and each finished computation, then the module, to
:mod:`~hloviz.parser.resolve`, so forward references work as in XLA.

The parser is line oriented: XLA prints one instruction per line, so a computation's body is
read by one regular-expression scan over its text, a match per line
(:meth:`~hloviz.parser.instructions.InstructionReader.rows`); only lines that need it take the
body reader's slower, bracket-aware paths. This module knows the structure of a module, not
what an instruction looks like.
"""

from __future__ import annotations

import re

from ..ir import Computation, HloModule
from ..source import Span
from .attributes import split_attributes
from .body import MAX_JOINED_LINES, BodyReader, strings_end_on_their_line
from .instructions import InstructionReader
from .resolve import finish, resolve_calls
from .state import ParseState, blank_line
from .text.scan import ScanError, find_close, net_depth

_MODULE = re.compile(r"\s*HloModule\s+%?([A-Za-z_][\w.\-]*)\s*:?")
_COMPUTATION = re.compile(r"\s*(ENTRY\s+)?%?([A-Za-z_][\w.\-]*)\s*")
_SECTION = re.compile(r"\s*(FileNames|FunctionNames|FileLocations|StackFrames)\s*\Z")
_SECTION_ROW = re.compile(r"\s*(\d+)\s+(.+?)\s*\Z")
_MAX_HEADER_LINES = 50
_FILE_SUFFIXES = (".gz", ".xz", ".bz2", ".txt", ".hlo", ".pb", ".pbtxt")


def _headerless_name(filename: str, entry: str) -> str:
    """A module without an ``HloModule`` line is named after its file (``fusion.hlo`` → ``fusion``),
    or after its entry computation when it has no file."""
    if filename.startswith("<"):
        return entry
    name = filename.replace("\\", "/").rsplit("/", 1)[-1]
    while True:
        for suffix in _FILE_SUFFIXES:
            if name.endswith(suffix) and len(name) > len(suffix):
                name = name[: -len(suffix)]
                break
        else:
            return name or entry


def _skippable(line: str) -> bool:
    s = blank_line(line).strip()
    return not s or s.startswith("//")


class ModuleReader:
    """One parse of one text: the header, tables and computations. Use :func:`hloviz.parse`."""

    __slots__ = ("state", "instructions", "body")

    def __init__(self, state: ParseState) -> None:
        self.state = state
        self.instructions = InstructionReader(state)
        self.body = BodyReader(state, self.instructions)

    # -- module ---------------------------------------------------------------------------

    def read(self) -> HloModule:
        state = self.state
        lines = state.lines
        i = lines.skip(0)
        while lines.has(i) and _skippable(lines[i]):
            i = max(i + 1, lines.skip(i + 1))
        if not lines.has(i):
            raise state.error("empty text: expected 'HloModule name'", max(0, len(lines) - 1), 0)
        lines[i] = blank_line(lines[i])
        module = state.module
        # XLA's emitter and FileCheck tests (and most snippets in bug reports) start directly with
        # computations; XLA reads them, and so do we, naming the module once its entry is known.
        header = _MODULE.match(lines[i])
        if header is not None:
            module.name = header.group(1)
            i = self._header(header, i)
        entry_line: int | None = None
        while lines.has(i):
            line = self._line(i)
            # the usual header first: a computation follows a computation (or the header)
            computation = self._one_line_header(line, i) if header is not None or module.computations else None
            if computation is not None:
                i = self._one_line_computation(computation, i)
            else:
                computation, i = self._any_line(line, i, headerless=header is None)
                if computation is None:
                    continue
            if computation.is_entry:
                if entry_line is not None:
                    raise state.error("a module has only one ENTRY computation; this is the second",
                                      computation.line - 1, 0)
                entry_line = computation.line
                module.entry = computation
        if not module.computations:
            n = len(lines)
            raise state.error("expected at least one computation", n - 1, len(lines[n - 1]))
        if module.entry is None:
            # XLA takes the last computation as the entry when none is marked.
            module.entry = module.computations[-1]
            module.entry.is_entry = True
        if header is None:
            module.name = _headerless_name(module.filename, module.entry.name)
        resolve_calls(state)
        return module

    def _any_line(self, line: str, i: int, headerless: bool) -> tuple[Computation | None, int]:
        """Line ``i`` (``line``) between computations: blank or comments, a stack-frame table, or a
        computation; the computation read (None for the others) and the next line."""
        lines = self.state.lines
        if not line or line.isspace():
            return None, lines.past(i)  # a run of blank lines in one step
        blanked = blank_line(line)
        if blanked is not line:
            line = lines[i] = blanked
        if _skippable(line):
            return None, lines.past(i)
        section = _SECTION.match(line)
        if section:
            return None, self._section(section.group(1), i + 1)
        if headerless and not self.state.module.computations:
            self._first_computation_header(i)
        return self._computation(i, line)

    def _line(self, i: int) -> str:
        """Line ``i``; taken from the text where the instruction scan stopped on it (the usual
        computation header), which spares splitting the text into lines (:class:`Lines`)."""
        state = self.state
        text = state.lines.text
        last_line, offset = state.resume
        if i != last_line or text is None:
            return state.lines[i]
        state.lines.seek(i, offset)  # (what the scan read is never split into lines)
        end = text.find("\n", offset)
        return text[offset : end if end >= 0 else len(text)]

    def _header(self, m: re.Match[str], i: int) -> int:
        """Read the ``HloModule name, attributes`` header that starts at line ``i``; return the next line."""
        lines = self.state.lines
        header_start = i
        parts = [lines[i]]
        # The header's attributes may continue over several lines (long layouts, tables).
        depth = net_depth(parts[0])
        last = parts[0]  # the last line with more than spaces: does a comma dangle?
        while (depth > 0 or last.rstrip().endswith(",")) and lines.has(i + 1):
            if i - header_start >= MAX_JOINED_LINES:
                raise self.state.error(f"the module header goes on for more than {MAX_JOINED_LINES} lines: a "
                                       "bracket is not closed or a comma dangles", header_start, len(parts[0].rstrip()))
            i += 1
            line = lines[i] = blank_line(lines[i])
            depth += net_depth(line)
            parts.append(line)
            if line.strip():
                last = line
        header = "\n".join(parts)
        if len(parts) > 1:
            strings_end_on_their_line(self.state, header, header_start)
        try:
            self.state.module.attributes = split_attributes(header, m.end())
        except ScanError as err:
            raise self.state.error_in(str(err), header_start, header, err.offset) from None
        return i + 1

    def _first_computation_header(self, i: int) -> None:
        """Without an ``HloModule`` line the text must start with a computation; say both."""
        line = self.state.lines[i]
        m = _COMPUTATION.match(line)
        rest = line[m.end():] if m else ""
        if m and not line.lstrip().startswith("}") and (not rest.strip() or rest.lstrip()[0] in "({"):
            return
        raise self.state.error("expected 'HloModule name' or a computation '[ENTRY] name {' at the start of the "
                               "module", i, len(line) - len(line.lstrip()))

    def _section(self, name: str, i: int) -> int:
        """Read a stack-frame table (``FileNames`` …) that newer XLA prints after the header."""
        lines = self.state.lines
        table = self.state.module.stack_frame_tables.setdefault(name, {})
        while lines.has(i):
            line = lines[i] = blank_line(lines[i])
            if not line.strip():
                i += 1
                continue
            m = _SECTION_ROW.match(line)
            if not m:
                break
            table[int(m.group(1))] = m.group(2)
            i += 1
        return i

    # -- computations ---------------------------------------------------------------------

    def _computation(self, i: int, line: str) -> tuple[Computation, int]:
        """The computation whose header starts at line ``i`` (``line``), and the line after its ``}``."""
        computation = self._one_line_header(line, i)  # the usual header, read the short way
        if computation is not None:
            return computation, self._one_line_computation(computation, i)
        computation, i, first = self._computation_header(i)
        start = computation.line - 1
        i = self.body.read(computation, i, first)
        finish(self.state, computation, start)
        return computation, i

    def _one_line_computation(self, computation: Computation, i: int) -> int:
        """The body of ``computation``, whose header is line ``i`` alone; the line after its ``}``."""
        # The instruction scan first (what BodyReader.read does first), called here: most bodies end in it.
        end, root, at, closed = self.instructions.rows(computation, i + 1, False)
        if root is not None:
            computation.root = root
        if not closed:
            end = self.body.read(computation, end, None, at if root is not None else None, scanned=True)
        finish(self.state, computation, i)
        return end

    def _one_line_header(self, line: str, i: int) -> Computation | None:
        """The computation of the usual header, ``[ENTRY] %name [(parameters) -> shape] {`` on
        line ``i`` alone, without comments and with a name not yet taken (added to the module);
        None for anything else, which :meth:`_computation_header` reads (and reports). What it
        makes is what that would make of the same line."""
        if "/" in line:
            return None
        m = _COMPUTATION.match(line)  # (what it matches never starts with "}")
        end = line.rstrip()
        if m is None or not end.endswith("{"):
            return None
        pos = m.end()  # (past every space after the name)
        signature = line[pos : len(end) - 1].rstrip()
        if signature:
            arrow = signature.rfind("->")
            if signature[0] != "(" or arrow <= 0 or signature[:arrow].rstrip()[-1] != ")" \
                    or not signature[arrow + 2 :].strip():
                return None
        module = self.state.module
        name = m.group(2)
        if name in module.by_name:
            return None
        computation = Computation(name, is_entry=bool(m.group(1)), line=i + 1)
        if signature:
            computation.signature = signature
            computation.signature_span = Span(self.state.source.filename, i + 1, pos + 1, line)
        module.add(computation)
        return computation

    def _computation_header(self, i: int) -> tuple[Computation, int, str | None]:
        """``[ENTRY] name [(parameters) -> shape] {``, perhaps over several lines: the new
        computation (added to the module), the next line, and any statement after the ``{``."""
        state = self.state
        lines = state.lines
        start = i
        line = lines[i]
        header = blank_line(line)
        if header is not line:
            lines[i] = header
        m = _COMPUTATION.match(header)
        if not m or header.lstrip().startswith("}"):
            s = header.lstrip()
            raise state.error("expected a computation: '[ENTRY] name [(parameters) -> shape] {'", i,
                              len(header) - len(s))
        # The header ends at its '{'; join lines until we find it.
        while "{" not in header[m.end():] or not self._header_complete(header, m.end()):
            i += 1
            if not lines.has(i) or i - start > _MAX_HEADER_LINES:
                raise state.error("expected '{' to open the computation", start, len(lines[start].rstrip()))
            header += "\n" + blank_line(lines[i])
        computation = Computation(m.group(2), is_entry=bool(m.group(1)), line=start + 1)
        if state.module.get_computation(computation.name) is not None:
            raise state.error(f"computation '{computation.name}' is defined twice", start,
                              header.find(computation.name))
        brace = self._signature(computation, header, m.end(), start)
        state.module.add(computation)
        first = header[brace + 1 :]
        return computation, i + 1, first if first.strip() else None

    @staticmethod
    def _header_complete(header: str, start: int) -> bool:
        """The header's '{' is the body's, not one inside a layout in the signature."""
        rest = header[start:].rstrip()
        return rest.endswith("{") or (rest.count("(") == rest.count(")") and "{" in rest.split(")")[-1])

    def _signature(self, computation: Computation, header: str, pos: int, line_index: int) -> int:
        """Find the body's '{' and keep the ``(p: shape, ...) -> shape`` text before it, with its span.

        The signature is parsed only when asked for (:attr:`Computation.declared_signature`);
        here it is checked for balanced brackets and an arrow, which is enough to find the body.
        """
        source = self.state.source
        n = len(header)
        end = header.rstrip()
        if end.endswith("{") and "\n" not in header:
            # The usual one-line header: everything between the name and the final '{'.
            raw = header[pos : len(end) - 1]
            signature = raw.strip()
            if not signature:
                return len(end) - 1
            arrow = signature.rfind("->")
            if signature[0] == "(" and arrow > 0 and signature[:arrow].rstrip()[-1] == ")" \
                    and signature[arrow + 2 :].strip():
                computation.signature = signature
                # The header line as read (comments blanked): splitting the source again for its
                # original would cost a second copy of every line of the text.
                computation.signature_span = Span(source.filename, line_index + 1,
                                                  pos + len(raw) - len(raw.lstrip()) + 1, header)
                return len(end) - 1
        while pos < n and header[pos] in " \t\n":
            pos += 1
        if pos < n and header[pos] == "(":
            try:
                close = find_close(header, pos)
                arrow = header.find("->", close)
                brace = header.rfind("{")
                if arrow < 0 or header[close + 1 : arrow].strip():
                    raise ScanError("expected '->' and the result shape after the parameters", close + 1)
                if brace < arrow or not header[arrow + 2 : brace].strip():
                    raise ScanError("expected the result shape after '->'", arrow + 2)
                computation.signature = header[pos:brace].rstrip()  # as written, maybe over lines
                computation.signature_span = source.span_in(line_index, header, pos)
                pos = brace
            except ScanError as err:
                raise self.state.error_in(str(err), line_index, header, err.offset) from None
        while pos < n and header[pos] in " \t\n":
            pos += 1
        if pos >= n or header[pos] != "{":
            raise self.state.error_in("expected '{' to open the computation", line_index, header, pos)
        return pos
