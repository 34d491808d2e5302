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
from ..ir import CALLED_COMPUTATION_ATTRIBUTES, INFERRED, Computation, HloModule, Instruction
from .attributes import names_in, split_attributes
from .scan import ScanError, find_close, net_depth, split_top_level
from .shapes import ARRAY_SHAPE, ShapeParser, infer_shape

_HEAD = re.compile(r"\s*(ROOT\s+)?%?([A-Za-z_][\w.\-]*)\s*=\s*")
_OPCODE = re.compile(r"\s*([a-z][a-z0-9_\-]*)\s*\(")
_MODULE = re.compile(r"\s*HloModule\s+%?([A-Za-z_][\w.\-]*)\s*:?")
_COMPUTATION = re.compile(r"\s*(ENTRY\s+)?%?([A-Za-z_][\w.\-]*)\s*")
_SECTION = re.compile(r"\s*(FileNames|FunctionNames|FileLocations|StackFrames)\s*\Z")
_SECTION_ROW = re.compile(r"\s*(\d+)\s+(.+?)\s*\Z")
_INDEX_MARK = re.compile(r"/\*.*?\*/")
_COMMENT_OR_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|/\*.*?\*/|//[^\n]*', re.S)
# A line that starts a new instruction (not the continuation of an attribute list).
_NEW_STATEMENT = re.compile(r"\s*(ROOT\s+)?%?[A-Za-z_][\w.\-]*\s*=\s*(\(|[a-z][a-z0-9]*\[|[a-z][\w\-]*\s*\()")
_NAME = re.compile(r"%?[A-Za-z_][\w.\-]*\Z")
_INT = re.compile(r"\s*\d+\s*\Z")

# Opcodes whose "-start" form is an instruction of its own rather than async sugar.
_NATIVE_START = {
    "all-reduce-start", "all-gather-start", "collective-permute-start", "copy-start", "async-start",
    "send", "recv", "collective-broadcast-start", "ragged-all-to-all-start", "all-to-all-start",
}
_MAX_JOINED_LINES = 10000
_MAX_NESTED_INSTRUCTIONS = 64
_CALL_KEYS = frozenset(CALLED_COMPUTATION_ATTRIBUTES)
# Attributes that must be read while parsing: they name computations or instructions.
_EAGER_ATTR = re.compile(
    r"(?:" + "|".join(CALLED_COMPUTATION_ATTRIBUTES) + r"|control-predecessors)\s*="
)
_ATTR_START = re.compile(r"[ \t]*,[ \t]*[A-Za-z_][\w.\-]*[ \t]*=")
_OPERAND_FINDALL = re.compile(r"%?([A-Za-z_][\w.\-]*)").findall
_EAGER_SEARCH = _EAGER_ATTR.search
_ARRAY = r"[a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?"
_SHAPED_OPERANDS = re.compile(
    rf"[ \t]*{_ARRAY}[ \t]+%?[A-Za-z_][\w.\-]*[ \t]*(?:,[ \t]*{_ARRAY}[ \t]+%?[A-Za-z_][\w.\-]*[ \t]*)*\Z"
).match
_SHAPED_NAMES = re.compile(rf"{_ARRAY}[ \t]+%?([A-Za-z_][\w.\-]*)").findall

# The common instruction on one line: name, array shape, opcode, plain operands, attributes.
_FAST = re.compile(
    r"[ \t]*(ROOT[ \t]+)?%?([A-Za-z_][\w.\-]*)[ \t]*=[ \t]*"
    r"([a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?)[ \t]+"
    r"([a-z][a-z0-9_\-]*)\(([^()\"]*)\)"
    r"((?:[ \t]*,[ \t]*[A-Za-z_][\w.\-]*[ \t]*=.*)?)[ \t\r]*\Z"
)


def _infer_shapes(pending: list[Instruction]) -> None:
    """Infer left-out shapes operands first (the text may use an instruction before defining it)."""
    done: set[int] = set()
    for first in pending:
        stack = [(first, False)]
        while stack:
            inst, ready = stack.pop()
            if id(inst) in done:
                continue
            if ready:
                done.add(id(inst))
                if inst.shape is INFERRED:
                    inst.shape = infer_shape(inst)
                continue
            stack.append((inst, True))
            for op in inst.operands:
                if isinstance(op, Instruction) and op.shape is INFERRED and id(op) not in done:
                    stack.append((op, False))


class _Incomplete(Exception):
    """The statement continues on the next line."""


def _blank(m: re.Match) -> str:
    t = m.group()
    return t if t[0] == '"' else re.sub(r"[^\n]", " ", t)


def _blank_comments(text: str) -> list[str]:
    """The text's lines with ``/* ... */`` and ``// ...`` comments replaced by spaces.

    Columns stay true. Only lines that contain a comment marker are rescanned (strings may
    contain ``//``); XLA's ``/*index=5*/`` markers, the common case, take a quicker path.
    """
    lines = text.split("\n")
    if "/*" not in text and "//" not in text:
        return lines
    if any(line.count("/*") != line.count("*/") for line in lines if "/*" in line or "*/" in line):
        return _COMMENT_OR_STRING.sub(_blank, text).split("\n")  # a comment spans lines
    for k, line in enumerate(lines):
        if "/*" in line or "//" in line:
            if "//" not in line and '"' not in line:
                lines[k] = _INDEX_MARK.sub(_spaces, line)
            else:
                lines[k] = _COMMENT_OR_STRING.sub(_blank, line)
    return lines


def _spaces(m: re.Match) -> str:
    return " " * (m.end() - m.start())


class ModuleParser:
    """One parse of one text. Use :func:`hloviz.parse`; this class is the machinery."""

    def __init__(self, text: str, filename: str | None) -> None:
        self.filename = filename or "<string>"
        self.text = text
        self._original_lines: list[str] | None = None
        self.lines = _blank_comments(text)
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
        if i >= n:
            raise self.error("empty text: expected 'HloModule name'", max(0, n - 1), 0)
        m = _MODULE.match(lines[i])
        if not m:
            stripped = lines[i].lstrip()
            raise self.error("expected 'HloModule name' at the start of the module", i, len(lines[i]) - len(stripped))
        module = self.module = HloModule(m.group(1), filename=self.filename)
        header_start = i
        header = lines[i]
        # The header's attributes may continue over several lines (long layouts, tables).
        depth = net_depth(header)
        while (depth > 0 or header.rstrip().endswith(",")) and i + 1 < n:
            i += 1
            depth += net_depth(lines[i])
            header += "\n" + lines[i]
        try:
            module.attributes = split_attributes(header, m.end())
        except ScanError as err:
            raise self.error_at(str(err), header_start, header, err.offset) from None
        i += 1
        entry_seen: int | None = None
        while i < n:
            line = lines[i]
            if self._skippable(line):
                i += 1
                continue
            sm = _SECTION.match(line)
            if sm:
                i = self._section(sm.group(1), i + 1)
                continue
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
        self._resolve_calls()
        return module

    @staticmethod
    def _skippable(line: str) -> bool:
        s = line.strip()
        return not s or s.startswith("//")

    def _section(self, name: str, i: int) -> int:
        """Read a stack-frame table (``FileNames`` …) that newer XLA prints after the header."""
        table = self.module.stack_frame_tables.setdefault(name, {})
        while i < len(self.lines):
            line = self.lines[i]
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
        header = lines[i]
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
            header += "\n" + lines[i]
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
                except _Incomplete:
                    # Join following lines until the brackets balance and no comma dangles.
                    depth = net_depth(text)
                    while depth > 0 or text.rstrip().endswith(","):
                        if i >= len(lines) or i - first > _MAX_JOINED_LINES or _NEW_STATEMENT.match(lines[i]) \
                                or (lines[i].strip() == "}" and depth <= 0):
                            raise self.error("this instruction is never completed: a bracket is not closed",
                                             first, len(lines[first].rstrip())) from None
                        depth += net_depth(lines[i])
                        text += "\n" + lines[i]
                        i += 1
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
            inst.calls_by_attribute = {**inst.calls_by_attribute, attr: called}
            inst.called_computations = [*inst.called_computations, *called]

    # -- instructions ---------------------------------------------------------------------

    def _fast_instruction(self, computation: Computation, groups: tuple, line_index: int,
                          m: re.Match) -> Instruction | None:
        """The common one-line instruction, from the groups of one :data:`_FAST` match.

        Returns None for anything unusual (a new shape text that fails to parse, operands
        that are not plain names, attributes with unbalanced brackets, a dangling comma, a
        duplicate name); the general path then parses the line again and reports any error
        precisely. Attributes without called computations are split only when first read.
        This is the parser's hot loop: it avoids attribute lookups and calls where it can.
        """
        _, name, shape_text, opcode, args, rest = groups
        by_name = computation._by_name
        if name in by_name:
            return None
        shape = self._shape_cache_get(shape_text)
        if shape is None:
            sm = ARRAY_SHAPE.match(shape_text)
            try:
                shape = self.shapes.array(sm.group(1), sm.group(2), sm.group(3), 0)
            except ScanError:
                return None
        inst = Instruction(name, opcode, shape, line_index + 1)
        if args:
            if opcode == "parameter":
                if not args.isdigit():
                    return None
                inst.parameter_number = int(args)
            elif opcode == "constant":
                if args.isspace():
                    return None
                inst.literal = args.strip()
            elif "[" in args or "{" in args:  # TF <= 2.17 style: "f32[2]{0} %x, f32[] %y"
                if _SHAPED_OPERANDS(args) is None:
                    return None
                inst.operands = _SHAPED_NAMES(args)
            else:
                names = _OPERAND_FINDALL(args)
                if len(names) != args.count(",") + 1:
                    return None
                inst.operands = names
            if inst.operands:
                try:
                    inst.operands = [by_name[n] for n in inst.operands]
                except KeyError:  # a forward reference: resolved when the computation ends
                    self._deferred.append(inst)
        elif opcode == "constant" or opcode == "parameter":
            return None
        if rest:
            if rest.count("{") != rest.count("}") or ('"' in rest and (rest.count('"') % 2 or "\\" in rest)) \
                    or rest.rstrip()[-1] == ",":
                return None
            if _EAGER_SEARCH(rest):
                try:
                    attrs = split_attributes(rest, 0)
                except ScanError:
                    return None
                inst._attributes = attrs
                if "control-predecessors" in attrs and inst not in self._deferred:
                    self._deferred.append(inst)
                if not _CALL_KEYS.isdisjoint(attrs):
                    for key in CALLED_COMPUTATION_ATTRIBUTES:
                        if key in attrs:
                            raw = attrs.pop(key)
                            col = m.start(6) + rest.find(key + "=") + len(key) + 1
                            self.pending_calls.append((inst, key, raw, line_index, col))
            else:
                inst._raw_attributes = rest
                inst._raw_column = m.start(6)
        if opcode[-6:] == "-start" and opcode not in _NATIVE_START and not inst.calls_by_attribute:
            self._wrap_async(computation, inst)
        inst.parent = computation
        computation.instructions.append(inst)
        by_name[name] = inst
        return inst

    def instruction(self, computation: Computation, text: str, first_line: int) -> tuple[Instruction, bool]:
        """Parse one instruction statement and add it (and any nested ones) to ``computation``."""
        m = _HEAD.match(text)
        if not m:
            s = text.lstrip()
            raise self.error_at("expected an instruction 'name = shape opcode(operands)'", first_line, text,
                                len(text) - len(s))
        name = m.group(2)
        if name in computation._by_name:
            raise self.error_at(f"instruction '{name}' is defined twice in computation '{computation.name}'",
                                first_line, text, m.start(2))
        if text.rstrip().endswith(","):
            raise _Incomplete()
        inst = self._rhs(computation, text, m.end(), first_line, name)
        computation.add(inst)
        self._deferred.append(inst)
        return inst, bool(m.group(1))

    def _rhs(self, computation: Computation, text: str, pos: int, first_line: int, name: str,
             end: int | None = None) -> Instruction:
        """``shape opcode(operands), attributes`` from ``text[pos:end]`` → an Instruction."""
        try:
            sm = ARRAY_SHAPE.match(text, pos)
            if sm is not None:
                shape = self.shapes.array(sm.group(1), sm.group(2), sm.group(3), pos)
                pos = sm.end()
            elif _OPCODE.match(text, pos):
                shape = INFERRED  # XLA infers the shape when the text leaves it out
            else:
                shape, pos = self.shapes.parse(text, pos, end)
            om = _OPCODE.match(text, pos)
            if om is None:
                self._no_opcode(text, pos, end)
            opcode = om.group(1)
            open_paren = om.end() - 1
            close = text.find(")", open_paren)
            if close < 0 or "(" in text[open_paren + 1 : close] or '"' in text[open_paren + 1 : close] \
                    or (end is not None and close > end):
                close = find_close(text, open_paren, end)
            inst = Instruction(name, opcode, shape, line=first_line + 1 + text.count("\n", 0, open_paren))
            self._operands(computation, inst, text, open_paren + 1, close, first_line)
            if end is None:
                rest = close + 1
                if rest < len(text) and not text[rest:].isspace():
                    attrs = split_attributes(text, rest)
                    inst.attributes = attrs
                    for key in CALLED_COMPUTATION_ATTRIBUTES:
                        if key in attrs:
                            raw = attrs.pop(key)
                            col = text.find(key + "=", rest) + len(key) + 1
                            self.pending_calls.append((inst, key, raw, first_line, max(col, 0)))
            elif text[close + 1 : end].strip():
                raise ScanError("a nested instruction takes no attributes", close + 1)
            if opcode.endswith("-start") and opcode not in _NATIVE_START and not inst.calls_by_attribute:
                self._wrap_async(computation, inst)
            return inst
        except ScanError as err:
            if "never closed" in str(err) and net_depth(text) > 0:
                raise _Incomplete() from None
            raise self.error_at(str(err), first_line, text, err.offset) from None

    def _no_opcode(self, text: str, pos: int, end: int | None) -> None:
        while pos < len(text) and text[pos] in " \t\n":
            pos += 1
        word = re.match(r"[\w.\-]*", text[pos:]).group()
        if word and re.match(r"[a-z][a-z0-9_\-]*\s*\Z", text[pos:end]):
            raise ScanError(f"expected '(' after opcode '{word}'", pos + len(word))
        raise ScanError(f"expected an opcode, saw '{word or text[pos:pos + 1]}'", pos)

    def _operands(self, computation: Computation, inst: Instruction, text: str, a: int, b: int,
                  first_line: int) -> None:
        opcode = inst.opcode
        seg = text[a:b]
        if opcode == "constant":
            literal = seg.strip()
            if not literal:
                raise ScanError("a constant needs a literal value", a)
            inst.literal = literal
            return
        if opcode == "parameter":
            if not _INT.match(seg):
                raise ScanError("expected the parameter number, e.g. parameter(0)", a)
            inst.parameter_number = int(seg)
            return
        if not seg or seg.isspace():
            return
        if "[" not in seg and "(" not in seg and "{" not in seg:
            names = [s.strip().lstrip("%") for s in seg.split(",")]
            for k, n in enumerate(names):
                if not n or not _NAME.match(n):
                    self._bad_operand(text, a, b, k)
            inst.operands = names
            return
        # Operands written with their shapes (TF <= 2.17), or nested instruction expressions.
        names = []
        for pa, pb in split_top_level(text, a, b):
            piece = text[pa:pb]
            stripped = piece.strip()
            if not stripped:
                raise ScanError("expected an operand", pa)
            lead = len(piece) - len(piece.lstrip())
            if stripped.endswith(")"):
                names.append(self._nested_instruction(computation, text, pa + lead, pb, first_line))
                continue
            last = stripped.split()[-1]
            if not _NAME.match(last):
                raise ScanError(f"cannot read '{stripped[:60]}' as an operand name", pa + lead)
            if len(stripped.split()) > 1 or stripped[:1] in "([":
                # "shape %name": the shape must at least be a shape.
                self.shapes.parse(text, pa + lead, pb)
            names.append(last.lstrip("%"))
        inst.operands = names

    def _bad_operand(self, text: str, a: int, b: int, k: int) -> None:
        spans = split_top_level(text, a, b)
        pa, pb = spans[k]
        piece = text[pa:pb]
        offset = pa + len(piece) - len(piece.lstrip())
        shown = piece.strip() or "nothing"
        raise ScanError(f"cannot read '{shown[:60]}' as an operand name", offset)

    def _nested_instruction(self, computation: Computation, text: str, a: int, b: int, first_line: int) -> str:
        """``f32[] add(f32[] x, f32[] y)`` used as an operand: XLA makes it an instruction of its own."""
        if self._nesting >= _MAX_NESTED_INSTRUCTIONS:
            raise ScanError(f"instructions nested more than {_MAX_NESTED_INSTRUCTIONS} levels deep", a)
        self._nested += 1
        m = ARRAY_SHAPE.match(text, a)
        opm = _OPCODE.match(text, m.end() if m else a)
        if m is None and text[a] != "(" and not _OPCODE.match(text, a):
            raise ScanError("cannot parse this operand as an instruction name or a nested instruction", a)
        name = f"{(opm.group(1) if opm else 'nested')}.nested.{self._nested}"
        while name in computation._by_name:
            self._nested += 1
            name = f"{(opm.group(1) if opm else 'nested')}.nested.{self._nested}"
        self._nesting += 1
        try:
            inst = self._rhs(computation, text, a, first_line, name, end=b)
        finally:
            self._nesting -= 1
        computation.add(inst)
        self._deferred.append(inst)
        return name

    def _wrap_async(self, computation: Computation, start: Instruction) -> None:
        """``custom-call-start(...)`` is sugar: XLA wraps the op in a computation of its own."""
        wrapped_opcode = start.opcode[: -len("-start")]
        wrapped = Computation(f"{start.name}.wrapped", line=start.line)
        wrapped.synthetic = True
        operand_shapes = start.shape.tuple_shapes[0].tuple_shapes if start.shape.is_tuple and \
            start.shape.tuple_shapes and start.shape.tuple_shapes[0].is_tuple else ()
        for k, shape in enumerate(operand_shapes):
            p = Instruction(f"param.{k}", "parameter", shape, line=start.line)
            p.parameter_number = k
            wrapped.add(p)
        result = start.shape.tuple_shapes[1] if start.shape.is_tuple and len(start.shape.tuple_shapes) > 1 \
            else start.shape
        op = Instruction(f"{start.name}.op", wrapped_opcode, result, line=start.line)
        op.operands = list(wrapped.instructions)
        op.attributes = dict(start.attributes)
        wrapped.add(op)
        wrapped.root = op
        self.module.add(wrapped)
        start.calls_by_attribute = {**start.calls_by_attribute, "calls": [wrapped]}
        start.called_computations = [*start.called_computations, wrapped]
