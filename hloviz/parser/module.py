"""HLO module text → :class:`hloviz.ir.HloModule`: the module and computation structure.

The parser is line oriented: XLA prints one instruction per line, so a computation's body is read
by one regular-expression scan over its text, a match per line
(:meth:`~hloviz.parser.instructions.InstructionReader.rows`), with its attribute lists split once
per distinct text; only lines that need it (nested brackets, statements spread over several
lines, operands written with shapes as TF ≤ 2.17 prints them, nested instruction expressions,
comments) take the line reader and its slower, bracket-aware paths, and the scan resumes after
them. Names are resolved once a computation (operands, control predecessors) or the module
(called computations) is complete, so forward references work as in XLA. Both readers share one
:class:`~hloviz.parser.state.ParseState`.
"""

from __future__ import annotations

import re

from ..errors import HloParseError
from ..ir import Computation, HloModule, Instruction
from ..source import Span
from .attributes import names_in, split_attributes
from .instructions import FAST_INSTRUCTION, NEW_STATEMENT, Incomplete, InstructionReader
from .scan import ScanError, find_close, net_depth, unterminated_quote
from .shapes import infer_shapes
from .state import ParseState, blank_line
from .tuple_index import SEPARATOR, elided_get_tuple_element

_MODULE = re.compile(r"\s*HloModule\s+%?([A-Za-z_][\w.\-]*)\s*:?")
_COMPUTATION = re.compile(r"\s*(ENTRY\s+)?%?([A-Za-z_][\w.\-]*)\s*")
_SECTION = re.compile(r"\s*(FileNames|FunctionNames|FileLocations|StackFrames)\s*\Z")
_SECTION_ROW = re.compile(r"\s*(\d+)\s+(.+?)\s*\Z")
_MAX_JOINED_LINES = 10000
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

    __slots__ = ("state", "instructions")

    def __init__(self, state: ParseState) -> None:
        self.state = state
        self.instructions = InstructionReader(state)

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
        self._resolve_calls()
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
            if i - header_start >= _MAX_JOINED_LINES:
                raise self.state.error(f"the module header goes on for more than {_MAX_JOINED_LINES} lines: a "
                                       "bracket is not closed or a comma dangles", header_start, len(parts[0].rstrip()))
            i += 1
            line = lines[i] = blank_line(lines[i])
            depth += net_depth(line)
            parts.append(line)
            if line.strip():
                last = line
        header = "\n".join(parts)
        if len(parts) > 1:
            self._strings_end_on_their_line(header, header_start)
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
        i = self._body(computation, i, first)
        self._finish(computation, start)
        return computation, i

    def _one_line_computation(self, computation: Computation, i: int) -> int:
        """The body of ``computation``, whose header is line ``i`` alone; the line after its ``}``."""
        # The instruction scan first (what _body does first), called here: most bodies end in it.
        end, root, at, closed = self.instructions.rows(computation, i + 1, False)
        if root is not None:
            computation.root = root
        if not closed:
            end = self._body(computation, end, None, at if root is not None else None, scanned=True)
        self._finish(computation, i)
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

    def _body(self, computation: Computation, i: int, first: str | None, root_line: int | None = None,  # noqa: C901 - the line reader's loop, in one piece
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
                inst, is_root = self.instructions.statement(computation, text, first)
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
            if not lines.has(i) or i - first > _MAX_JOINED_LINES or NEW_STATEMENT.match(lines[i]) \
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
        self._strings_end_on_their_line(text, first)
        return text, i

    def _strings_end_on_their_line(self, statement: str, first: int) -> None:
        """Reject a quote whose string runs past its line in a statement that spans lines.

        Line by line such a quote is skipped and the brackets may still balance; printed on
        one line (:mod:`hloviz.printer`), it would pair with a quote further on and the text
        would read differently or not at all.
        """
        quote = unterminated_quote(statement)
        if quote is not None:
            raise self.state.error_in("unterminated string: a string must end on the line it starts "
                                      "(close it there, or write a quote inside a string as \\\")", first, statement, quote) from None

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

    # -- names ----------------------------------------------------------------------------

    def _finish(self, computation: Computation, start: int) -> None:
        """Resolve the operand and control-predecessor names left open inside one computation.

        The fast path resolves operands as it goes (XLA prints definitions before uses); only
        forward references, the general path's instructions and control predecessors wait
        until here, in the state.
        """
        state = self.state
        if state.unresolved or state.predecessors or state.inferred:
            self._resolve_names(computation)
        if computation.root is None:
            if not computation.instructions:
                raise state.error(f"computation '{computation.name}' has no instructions", start, 0)
            computation.root = computation.instructions[-1]

    def _resolve_names(self, computation: Computation) -> None:
        """What :meth:`_finish` resolves, when anything waits (most computations: nothing)."""
        state = self.state
        by_name = computation.by_name
        for inst, names in state.unresolved:
            try:
                inst.operands = [by_name[n] for n in names]
            except KeyError:
                inst.operands = [self._tuple_element(computation, inst, n) for n in names]
        for inst, preds in state.predecessors:
            found: list[Instruction] = []
            for n in names_in(preds):
                pred = by_name.get(n)
                if pred is None:
                    raise self._name_error(inst, n, f"control predecessor '{n}' is not defined in "
                                           f"computation '{computation.name}'")
                found.append(pred)
            inst.control_predecessors = found
        infer_shapes(state.inferred)
        state.unresolved, state.predecessors, state.inferred = [], [], []

    def _tuple_element(self, computation: Computation, inst: Instruction, name: str) -> Instruction:
        """Operand ``name`` of ``inst``: defined, or ``%tuple#N``, an element of a tuple
        (:mod:`~hloviz.parser.tuple_index`); else the error, where the text names it."""
        found = computation.by_name.get(name)
        if found is not None:
            return found
        element = elided_get_tuple_element(computation, name, inst, self.state.inferred) \
            if SEPARATOR in name else f"instruction '{name}' is not defined in computation '{computation.name}'"
        if isinstance(element, str):
            raise self._name_error(inst, name, element)
        return element

    def _name_error(self, inst: Instruction, name: str, message: str) -> HloParseError:
        line_index = inst.line - 1
        line = self.state.source.line(line_index)
        eq = line.find("=")
        col = line.find(name, eq + 1 if eq >= 0 else 0)
        if col > 0 and line[col - 1] == "%":
            col -= 1
        return self.state.error(message, line_index, max(col, 0))

    def _resolve_calls(self) -> None:
        module = self.state.module
        get = module.get_computation
        named = module.by_name.get
        for call in self.state.pending_calls:
            inst, attr, value = call.instruction, call.attribute, call.value
            # the usual "%name" (every computation's name is one a single "%name" may hold)
            one = named(value[1:]) if value[:1] == "%" else None
            called: list[Computation] = [one] if one is not None else []
            for n in names_in(value) if one is None else ():
                c = get(n)
                if c is None:
                    raise self.state.error(f"computation '{n}' (named by {attr}=) is not defined", *call.position())
                called.append(c)
            if inst.calls_by_attribute:
                inst.calls_by_attribute = {**inst.calls_by_attribute, attr: called}
                inst.called_computations = [*inst.called_computations, *called]
            else:  # the usual case: one attribute names the called computations
                inst.calls_by_attribute = {attr: called}
                inst.called_computations = list(called)
