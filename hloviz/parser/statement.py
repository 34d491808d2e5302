"""One instruction statement the fast path did not take → :class:`hloviz.ir.Instruction`: the general path.

In: the text of one statement (``[ROOT] name = shape opcode(operands), attributes``), perhaps
joined over several lines, and the line it starts on. Out: the instruction (and any nested
ones) added to the computation, with its operand names left waiting in the
:class:`~hloviz.parser.state.ParseState`; or :class:`Incomplete` when the text may go on
below, for the body reader (:mod:`~hloviz.parser.body`) to join the next line and try again.

It reads what :mod:`~hloviz.parser.instructions` refuses: tuple shapes, shapes left out,
operands written with their shapes, nested instruction expressions, literals with parentheses,
comments, statements spread over lines. It scans brackets rather than matching one regular
expression, and reports every error at its exact column. It is a module of its own because it is
the careful reading of the same statement the fast path reads quickly: the two share only the
modules of each part (:mod:`~hloviz.parser.shapes`, :mod:`~hloviz.parser.operands`,
:mod:`~hloviz.parser.attributes`, :mod:`~hloviz.parser.calls`,
:mod:`~hloviz.parser.asynchronous`), never each other's code.
"""

from __future__ import annotations

import re

from ..errors import HloParseError
from ..ir import INFERRED, Computation, Instruction
from .asynchronous import NATIVE_START, wrap_async
from .attributes import split_attributes
from .calls import eager_attributes
from .operands import read_operands
from .shapes import ARRAY_SHAPE
from .state import ParseState
from .text.scan import ScanError, find_close, net_depth

__all__ = ["NEW_STATEMENT", "Incomplete", "StatementReader"]

_HEAD = re.compile(r"\s*(ROOT\s+)?%?([A-Za-z_][\w.\-]*)\s*=\s*")
# What a statement broken after its first words looks like: "ROOT", "name", "ROOT %name".
_HEAD_PREFIX = re.compile(r"\s*(?:ROOT\b\s*)?(?:%?[A-Za-z_][\w.\-]*\s*)?\Z")
_OPCODE = re.compile(r"\s*([a-z][a-z0-9_\-]*)\s*\(")
# A line that starts a new instruction (not the continuation of an attribute list).
NEW_STATEMENT = re.compile(r"\s*(ROOT\s+)?%?[A-Za-z_][\w.\-]*\s*=\s*(\(|[a-z][a-z0-9]*\[|[a-z][\w\-]*\s*\()")
_MAX_NESTED_INSTRUCTIONS = 64


class Incomplete(Exception):
    """The statement may continue on the next line (XLA's lexer lets a line break fall between any
    two tokens). ``error`` is what to report when no following line completes it."""

    def __init__(self, error: HloParseError | None = None) -> None:
        super().__init__()
        self.error = error


class StatementReader:
    """Reads instruction statements the general way (see the module docstring)."""

    __slots__ = ("state",)

    def __init__(self, state: ParseState) -> None:
        self.state = state

    def read(self, computation: Computation, text: str, first_line: int) -> tuple[Instruction, bool]:
        """Read one instruction statement and add it (and any nested ones) to ``computation``;
        ``(instruction, is_root)``. Raises :class:`Incomplete` when the text may go on below."""
        m = _HEAD.match(text)
        if not m:
            s = text.lstrip()
            err = self.state.error_in("expected an instruction 'name = shape opcode(operands)'", first_line, text,
                                      len(text) - len(s))
            if _HEAD_PREFIX.match(text):  # "ROOT", "name" or "ROOT name" with the rest on later lines
                raise Incomplete(err)
            raise err
        name = m.group(2)
        if name in computation.by_name:
            raise self.state.error_in(f"instruction '{name}' is defined twice in computation '{computation.name}'",
                                      first_line, text, m.start(2))
        if text.rstrip().endswith(","):
            raise Incomplete()
        inst = self._expression(computation, text, m.end(), first_line, name)
        computation.add(inst)
        return inst, bool(m.group(1))

    def _expression(self, computation: Computation, text: str, pos: int, first_line: int, name: str,
                    end: int | None = None) -> Instruction:
        """``shape opcode(operands), attributes`` from ``text[pos:end]`` → an Instruction whose
        operand names wait in the state to be resolved."""
        try:
            inst, close = self._head_and_operands(computation, text, pos, first_line, name, end)
            if end is None:
                rest = close + 1
                if rest < len(text) and not text[rest:].isspace():
                    eager_attributes(self.state, inst, split_attributes(text, rest), text, rest, first_line)
            elif text[close + 1 : end].strip():
                raise ScanError("a nested instruction takes no attributes", close + 1)
            if inst.opcode.endswith("-start") and inst.opcode not in NATIVE_START:
                wrap_async(self.state, inst)
            return inst
        except ScanError as err:
            error = self.state.error_in(str(err), first_line, text, err.offset)
            if end is None and (("never closed" in str(err) and net_depth(text) > 0)
                                or text[err.offset :].isspace() or err.offset >= len(text)):
                raise Incomplete(error) from None  # the text ran out: the statement goes on below
            raise error from None

    def _head_and_operands(self, computation: Computation, text: str, pos: int, first_line: int, name: str,
                           end: int | None) -> tuple[Instruction, int]:
        """Shape, opcode and operands; the instruction and the offset of its operands' ')'."""
        shapes = self.state.shapes
        sm = ARRAY_SHAPE.match(text, pos)
        if sm is not None:
            shape = shapes.array(sm.group(1), sm.group(2), sm.group(3), pos)
            pos = sm.end()
        elif _OPCODE.match(text, pos):
            shape = INFERRED  # XLA infers the shape when the text leaves it out
        else:
            shape, pos = shapes.parse(text, pos, end)
        om = _OPCODE.match(text, pos)
        if om is None:
            self._no_opcode(text, pos, end)
        opcode = om.group(1)  # type: ignore[union-attr]
        open_paren = om.end() - 1  # type: ignore[union-attr]
        close = text.find(")", open_paren)
        if close < 0 or "(" in text[open_paren + 1 : close] or '"' in text[open_paren + 1 : close] \
                or (end is not None and close > end):
            close = find_close(text, open_paren, end)
        inst = Instruction(name, opcode, shape, line=first_line + 1 + text.count("\n", 0, open_paren))
        names = read_operands(inst, text, open_paren + 1, close, self.state.shapes.parse,
                              lambda t, a, b: self._nested_instruction(computation, t, a, b, first_line))
        if names:
            self.state.unresolved.append((inst, names))
        if shape is INFERRED:
            self.state.inferred.append(inst)
        return inst, close

    @staticmethod
    def _no_opcode(text: str, pos: int, end: int | None) -> None:
        while pos < len(text) and text[pos] in " \t\n":
            pos += 1
        word = re.match(r"[\w.\-]*", text[pos:]).group()  # type: ignore[union-attr]
        if word and re.match(r"[a-z][a-z0-9_\-]*\s*\Z", text[pos:end]):
            raise ScanError(f"expected '(' after opcode '{word}'", pos + len(word))
        raise ScanError(f"expected an opcode, saw '{word or text[pos:pos + 1]}'", pos)

    def _nested_instruction(self, computation: Computation, text: str, a: int, b: int, first_line: int) -> str:
        """``f32[] add(f32[] x, f32[] y)`` used as an operand: XLA makes it an instruction of its own."""
        state = self.state
        if state.nesting >= _MAX_NESTED_INSTRUCTIONS:
            raise ScanError(f"instructions nested more than {_MAX_NESTED_INSTRUCTIONS} levels deep", a)
        state.nested += 1
        m = ARRAY_SHAPE.match(text, a)
        opm = _OPCODE.match(text, m.end() if m else a)
        if m is None and text[a] != "(" and not _OPCODE.match(text, a):
            raise ScanError("cannot parse this operand as an instruction name or a nested instruction", a)
        stem = opm.group(1) if opm else "nested"
        name = f"{stem}.nested.{state.nested}"
        while name in computation.by_name:
            state.nested += 1
            name = f"{stem}.nested.{state.nested}"
        state.nesting += 1
        try:
            inst = self._expression(computation, text, a, first_line, name, end=b)
        finally:
            state.nesting -= 1
        computation.add(inst)
        return name
