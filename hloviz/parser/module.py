"""HLO module text → :class:`hloviz.ir.HloModule`.

The parser is line oriented: XLA prints one instruction per line, so each line is matched by a
few compiled regular expressions, and only lines that need it (nested brackets, instructions
spread over several lines, operands written with shapes as TF ≤ 2.17 prints them, nested
instruction expressions) take slower, bracket-aware paths. Names are resolved once a
computation (operands, control predecessors) or the module (called computations) is complete,
so forward references work as in XLA.
"""

from __future__ import annotations

import re

from ..errors import HloParseError
from ..ir import INFERRED, Computation, HloModule, Instruction
from .attributes import names_in, split_attributes
from .instructions import (
    _FAST, _NEW_STATEMENT, InstructionParser, _Incomplete, _infer_shapes,
)
from .scan import ScanError, find_close, net_depth
from .shapes import ShapeParser

_MODULE = re.compile(r"\s*HloModule\s+%?([A-Za-z_][\w.\-]*)\s*:?")
_COMPUTATION = re.compile(r"\s*(ENTRY\s+)?%?([A-Za-z_][\w.\-]*)\s*")
_SECTION = re.compile(r"\s*(FileNames|FunctionNames|FileLocations|StackFrames)\s*\Z")
_SECTION_ROW = re.compile(r"\s*(\d+)\s+(.+?)\s*\Z")
# A "/*" whose "*/" is not on the same line.
_OPEN_COMMENT = re.compile(r"/\*(?:[^*\n]|\*(?!/))*(?:\n|\Z)")
_COMMENT_OR_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|/\*.*?\*/|//[^\n]*', re.S)
_MAX_JOINED_LINES = 10000


def _blank(m: re.Match) -> str:
    t = m.group()
    return t if t[0] == '"' else re.sub(r"[^\n]", " ", t)


def _split_lines(text: str) -> list[str]:
    """The text's lines; comments that span lines are blanked here, all at once (rare).

    One-line comments are blanked line by line, only on lines the fast path does not take
    (see :func:`blank_line`), so the common case costs nothing.
    """
    if "/*" in text and _OPEN_COMMENT.search(text):
        return _COMMENT_OR_STRING.sub(_blank, text).split("\n")
    return text.split("\n")


def blank_line(line: str) -> str:
    """``line`` with ``/* ... */`` and ``// ...`` comments replaced by spaces (columns stay true)."""
    if "/*" in line or "//" in line:
        return _COMMENT_OR_STRING.sub(_blank, line)
    return line


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


class ModuleParser(InstructionParser):
    """One parse of one text. Use :func:`hloviz.parse`; this class is the machinery."""

    def __init__(self, text: str, filename: str | None) -> None:
        self.filename = filename or "<string>"
        self.text = text
        self._original_lines: list[str] | None = None
        self.lines = _split_lines(text)
        self.shapes = ShapeParser()
        self._shape_cache_get = self.shapes._cache.get
        self.module: HloModule | None = None
        # (instruction, attribute, raw value, line index, column) to resolve once all computations exist.
        self.pending_calls: list[tuple[Instruction, str, str, int, int]] = []
        self._nested = 0
        self._nesting = 0
        # Instructions of the current computation whose names wait for _finish to resolve them.
        self._deferred: list[Instruction] = []

    # -- errors ---------------------------------------------------------------------------

    @property
    def original_lines(self) -> list[str]:
        """The text's lines with comments intact, for error messages (split on demand)."""
        if self._original_lines is None:
            self._original_lines = self.text.split("\n")
        return self._original_lines

    def error(self, message: str, line_index: int, column: int) -> HloParseError:
        """An error at 0-based ``line_index`` and 0-based ``column``."""
        line_index = max(0, min(line_index, len(self.original_lines) - 1))
        source = self.original_lines[line_index] if self.original_lines else ""
        column = max(0, min(column, len(source)))
        return HloParseError(message, filename=self.filename, line=line_index + 1, column=column + 1,
                             source_line=source)

    def error_at(self, message: str, first_line: int, text: str, offset: int) -> HloParseError:
        """An error at ``offset`` into ``text``, a statement that starts at ``first_line``."""
        offset = max(0, min(offset, len(text)))
        line = first_line + text.count("\n", 0, offset)
        col = offset - (text.rfind("\n", 0, offset) + 1)
        return self.error(message, line, col)

    # -- module ---------------------------------------------------------------------------

    def parse(self) -> HloModule:
        lines = self.lines
        n = len(lines)
        i = 0
        while i < n and self._skippable(lines[i]):
            i += 1
        if i < n:
            lines[i] = blank_line(lines[i])
        if i >= n:
            raise self.error("empty text: expected 'HloModule name'", max(0, n - 1), 0)
        m = _MODULE.match(lines[i])
        # XLA's emitter and FileCheck tests (and most snippets in bug reports) start directly with
        # computations; XLA reads them, and so do we, naming the module once its entry is known.
        module = self.module = HloModule(m.group(1) if m else "", filename=self.filename)
        if m:
            i = self._header(m, i)
        entry_seen: int | None = None
        while i < n:
            line = lines[i]
            if not line or line.isspace():
                i += 1
                continue
            line = lines[i] = blank_line(line)
            if self._skippable(line):
                i += 1
                continue
            sm = _SECTION.match(line)
            if sm:
                i = self._section(sm.group(1), i + 1)
                continue
            if not m and not module.computations:
                self._first_computation_header(i)
            computation, i = self._computation(i)
            if computation.is_entry:
                if entry_seen is not None:
                    raise self.error("a module has only one ENTRY computation; this is the second",
                                     computation.line - 1, 0)
                entry_seen = computation.line
                module.entry = computation
        if not module.computations:
            raise self.error("expected at least one computation", n - 1, len(lines[n - 1]))
        if module.entry is None:
            # XLA takes the last computation as the entry when none is marked.
            module.entry = module.computations[-1]
            module.entry.is_entry = True
        if not m:
            module.name = _headerless_name(self.filename, module.entry.name)
        self._resolve_calls()
        return module

    def _first_computation_header(self, i: int) -> None:
        """Without an ``HloModule`` line the text must start with a computation; say both."""
        line = self.lines[i]
        m = _COMPUTATION.match(line)
        rest = line[m.end():] if m else ""
        if m and not line.lstrip().startswith("}") and (not rest.strip() or rest.lstrip()[0] in "({"):
            return
        raise self.error("expected 'HloModule name' or a computation '[ENTRY] name {' at the start of the "
                         "module", i, len(line) - len(line.lstrip()))

    def _header(self, m: re.Match, i: int) -> int:
        """Read the ``HloModule name, attributes`` header that starts at line ``i``; return the next line."""
        lines = self.lines
        n = len(lines)
        header_start = i
        header = lines[i]
        # The header's attributes may continue over several lines (long layouts, tables).
        depth = net_depth(header)
        while (depth > 0 or header.rstrip().endswith(",")) and i + 1 < n:
            i += 1
            lines[i] = blank_line(lines[i])
            depth += net_depth(lines[i])
            header += "\n" + lines[i]
        try:
            self.module.attributes = split_attributes(header, m.end())
        except ScanError as err:
            raise self.error_at(str(err), header_start, header, err.offset) from None
        return i + 1

    @staticmethod
    def _skippable(line: str) -> bool:
        s = blank_line(line).strip()
        return not s or s.startswith("//")

    def _section(self, name: str, i: int) -> int:
        """Read a stack-frame table (``FileNames`` …) that newer XLA prints after the header."""
        table = self.module.stack_frame_tables.setdefault(name, {})
        while i < len(self.lines):
            line = self.lines[i] = blank_line(self.lines[i])
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

    def _computation(self, i: int) -> tuple[Computation, int]:
        lines = self.lines
        start = i
        header = lines[i] = blank_line(lines[i])
        m = _COMPUTATION.match(header)
        if not m or header.lstrip().startswith("}"):
            s = header.lstrip()
            raise self.error("expected a computation: '[ENTRY] name [(parameters) -> shape] {'", i,
                             len(header) - len(s))
        # The header ends at its '{'; join lines until we find it.
        while "{" not in header[m.end():] or not self._header_complete(header, m.end()):
            i += 1
            if i >= len(lines) or i - start > 50:
                raise self.error("expected '{' to open the computation", start, len(lines[start].rstrip()))
            header += "\n" + blank_line(lines[i])
        computation = Computation(m.group(2), is_entry=bool(m.group(1)), line=start + 1)
        if self.module.get_computation(computation.name) is not None:
            raise self.error(f"computation '{computation.name}' is defined twice", start,
                             header.find(computation.name))
        brace = self._signature(computation, header, m.end(), start)
        self.module.add(computation)
        body_first = header[brace + 1 :]
        i += 1
        pending = [body_first] if body_first.strip() else []
        root_line: int | None = None
        n_lines = len(lines)
        fast_match = _FAST.match
        fast_instruction = self._fast_instruction
        while True:
            if pending:
                text, line_index = pending.pop(), i - 1
            else:
                if i >= n_lines:
                    raise self.error(f"computation '{computation.name}' is never closed with '}}'", start,
                                     len(lines[start].rstrip()))
                text = lines[i]
                line_index = i
                i += 1
                m = fast_match(text)
                if m is not None:
                    groups = m.groups()
                    inst = fast_instruction(computation, groups, line_index, m)
                    if inst is not None:
                        if groups[0]:
                            if root_line is not None:
                                raise self.error("a computation has only one ROOT; this is the second",
                                                 line_index, len(text) - len(text.lstrip()))
                            root_line = line_index
                            computation.root = inst
                        continue
                if text == "}":  # the usual end of a computation
                    break
                text = blank_line(text)
            stripped = text.strip()
            if not stripped or stripped.startswith("//"):
                continue
            if stripped.startswith("}"):
                self._close(computation, text, line_index)
                break
            # An instruction, perhaps continued on following lines.
            first = line_index
            while True:
                try:
                    inst, is_root = self.instruction(computation, text, first)
                    break
                except _Incomplete as incomplete:
                    # Join the next line, and more until the brackets balance and no comma dangles.
                    depth = net_depth(text)
                    joined = False
                    while not joined or depth > 0 or text.rstrip().endswith(","):
                        if i >= len(lines) or i - first > _MAX_JOINED_LINES or _NEW_STATEMENT.match(lines[i]) \
                                or (lines[i].strip() == "}" and depth <= 0):
                            if incomplete.error is not None:
                                raise incomplete.error from None
                            raise self.error("this instruction is never completed: a bracket is not closed",
                                             first, len(lines[first].rstrip())) from None
                        line = lines[i] = blank_line(lines[i])
                        depth += net_depth(line)
                        text += "\n" + line
                        i += 1
                        joined = joined or bool(line.strip())
                    if depth < 0:
                        raise self.error("this instruction is never completed: a bracket is not closed",
                                         first, len(lines[first].rstrip())) from None
            if is_root:
                if root_line is not None:
                    raise self.error("a computation has only one ROOT; this is the second", first,
                                     len(text) - len(text.lstrip()))
                root_line = first
                computation.root = inst
        self._finish(computation, start)
        return computation, i

    @staticmethod
    def _header_complete(header: str, start: int) -> bool:
        """The header's '{' is the body's, not one inside a layout in the signature."""
        rest = header[start:].rstrip()
        return rest.endswith("{") or (rest.count("(") == rest.count(")") and "{" in rest.split(")")[-1])

    def _signature(self, computation: Computation, header: str, pos: int, line_index: int) -> int:
        """Find the body's '{' and keep the ``(p: shape, ...) -> shape`` text before it.

        The signature is parsed only when asked for (:attr:`Computation.declared_signature`);
        here it is checked for balanced brackets and an arrow, which is enough to find the body.
        """
        n = len(header)
        end = header.rstrip()
        if end.endswith("{") and "\n" not in header:
            # The usual one-line header: everything between the name and the final '{'.
            signature = header[pos : len(end) - 1].strip()
            if not signature:
                return len(end) - 1
            arrow = signature.rfind("->")
            if signature[0] == "(" and arrow > 0 and signature[:arrow].rstrip()[-1] == ")" \
                    and signature[arrow + 2 :].strip():
                computation.signature = signature
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
                computation.signature = " ".join(header[pos:brace].split())
                pos = brace
            except ScanError as err:
                raise self.error_at(str(err), line_index, header, err.offset) from None
        while pos < n and header[pos] in " \t\n":
            pos += 1
        if pos >= n or header[pos] != "{":
            raise self.error_at("expected '{' to open the computation", line_index, header, pos)
        return pos

    def _close(self, computation: Computation, text: str, line_index: int) -> None:
        after = text.strip()[1:]
        if after.strip():
            try:
                attrs = split_attributes(after, 0)
            except ScanError as err:
                raise self.error(str(err), line_index, text.find("}") + 1 + err.offset) from None
            thread = attrs.get("execution_thread")
            if thread is not None:
                computation.execution_thread = thread.strip('"')

    def _finish(self, computation: Computation, start: int) -> None:
        """Resolve the operand and control-predecessor names left open inside one computation.

        The fast path resolves operands as it goes (XLA prints definitions before uses); only
        forward references, control predecessors and the general path's instructions wait
        until here, in :attr:`_deferred`.
        """
        by_name = computation._by_name
        deferred, self._deferred = self._deferred, []
        for inst in deferred:
            names = inst.operands
            if names:
                try:
                    inst.operands = [by_name[n] for n in names]
                except KeyError:
                    self._undefined(computation, inst, names)
            if inst._attributes is None or "control-predecessors" not in inst._attributes:
                continue
            preds = inst._attributes.pop("control-predecessors")
            if preds is not None:
                out = []
                for n in names_in(preds):
                    pred = by_name.get(n)
                    if pred is None:
                        raise self._name_error(inst, n, f"control predecessor '{n}' is not defined in "
                                               f"computation '{computation.name}'")
                    out.append(pred)
                inst.control_predecessors = out
        _infer_shapes([inst for inst in deferred if inst.shape is INFERRED])
        if computation.root is None:
            if not computation.instructions:
                raise self.error(f"computation '{computation.name}' has no instructions", start, 0)
            computation.root = computation.instructions[-1]

    def _undefined(self, computation: Computation, inst: Instruction, names: list) -> None:
        for n in names:
            if isinstance(n, str) and n not in computation._by_name:
                raise self._name_error(inst, n, f"instruction '{n}' is not defined in computation "
                                       f"'{computation.name}'")

    def _name_error(self, inst: Instruction, name: str, message: str) -> HloParseError:
        line_index = inst.line - 1
        line = self.original_lines[line_index] if 0 <= line_index < len(self.original_lines) else ""
        eq = line.find("=")
        col = line.find(name, eq + 1 if eq >= 0 else 0)
        if col > 0 and line[col - 1] == "%":
            col -= 1
        return self.error(message, line_index, col if col >= 0 else 0)

    def _resolve_calls(self) -> None:
        module = self.module
        for inst, attr, value, line_index, col in self.pending_calls:
            called = []
            for n in names_in(value):
                c = module.get_computation(n)
                if c is None:
                    raise self.error(f"computation '{n}' (named by {attr}=) is not defined", line_index, col)
                called.append(c)
            if inst.calls_by_attribute:
                inst.calls_by_attribute = {**inst.calls_by_attribute, attr: called}
                inst.called_computations = [*inst.called_computations, *called]
            else:  # the usual case: one attribute names the called computations
                inst.calls_by_attribute = {attr: called}
                inst.called_computations = list(called)

    # -- instructions ---------------------------------------------------------------------
