"""The common instruction statement → :class:`hloviz.ir.Instruction`: the fast path (the parser's inner loop).

In: a computation's body as text, from the line where it starts (:meth:`InstructionReader.rows`),
or one line the body reader hands over (:meth:`InstructionReader.fast`). Out: the instructions
added to the computation, their operands resolved where already defined (the rest wait in the
:class:`~hloviz.parser.state.ParseState`); a line that is anything but common is left, with
nothing changed for it, to the general path (:mod:`~hloviz.parser.statement`), which the body
reader (:mod:`~hloviz.parser.body`) calls.

The common instruction — one line, an array shape, plain operand names — is read by one
regular expression (:data:`FAST_INSTRUCTION`) and a few string operations; a body made only of
such lines is read by one scan over the text, a match per line, with each distinct attribute
text split once and shared. This is where the parse spends its time, so it is a module of its
own, kept apart from the general path's bracket scanning and error reporting.

Each part of a statement, in XLA's words, has a module of its own that both paths share: the
shape (:mod:`~hloviz.parser.shapes`), the operand list (:mod:`~hloviz.parser.operands`), the
attribute list (:mod:`~hloviz.parser.attributes`), the attributes that name computations or
instructions and wait to be resolved (:mod:`~hloviz.parser.calls`), and the ``<op>-start`` sugar
for an asynchronous op (:mod:`~hloviz.parser.asynchronous`).
"""

from __future__ import annotations

import re
from types import MappingProxyType

from ..ir import EMPTY_METADATA, Computation, Instruction, Shape
from .asynchronous import NATIVE_START, wrap_async
from .attributes import split_rest
from .calls import EAGER_SEARCH, NEVER_CALLS, eager_attributes, new_pending_call, one_call
from .operands import INDEX_COMMENT, ONCE, fast_operands
from .shapes import ARRAY_SHAPE
from .state import ParseState, PendingCall, SharedAttributes
from .text.scan import ScanError

__all__ = ["FAST_INSTRUCTION", "InstructionReader"]

# The common instruction on one line, up to its operands' ")": name, array shape, opcode, operands
# (group 5 when they are plain names, else group 6: a parameter number, a literal, or operands with
# shapes). The attributes are the rest of the line; matching them too would cost a third more.
FAST_INSTRUCTION = re.compile(
    r"[ \t]*(ROOT[ \t]+)?%?([A-Za-z_][\w.\-]*)[ \t]*=[ \t]*"
    r"([a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?)[ \t]+"
    r"([a-z][a-z0-9_\-]*)\((?:(%?[A-Za-z_][\w.\-]*(?: *, *%?[A-Za-z_][\w.\-]*)*" + ONCE + r")|([^()\"]*))\)"
)

#: :data:`FAST_INSTRUCTION` as one row of a run of lines, with the rest of the line (group 7) and
#: its newline; any other line is matched by the second alternative, whose groups are all None
#: (the last line too, without a newline: every match starts where the last one ended, so the
#: scan never tries a pattern from inside a line — from every character of a long one).
#: Names are ASCII here (a third faster than ``\w``): a line with other letters in its names takes
#: the general path, which reads them. Every repeat is possessive: nothing is given back.
_ROW_NAME = r"[A-Za-z_][0-9A-Za-z_.\-]*+"
_ROW = re.compile(
    r"[ \t]*+(ROOT[ \t]+)?%?(" + _ROW_NAME + r")[ \t]*+=[ \t]*+"
    r"([a-z][a-z0-9]*+\[[^\]\n]*+\](?:\{[^{}\n]*+\})?)[ \t]++"
    r"([a-z][a-z0-9_\-]*+)\((?:(%?" + _ROW_NAME + r"(?: *+, *+(?:/\*index=\d++\*/)?%?" + _ROW_NAME + r")*+)"
    r"|([^()\"\n]*+))\)([^\n]*+)\n|[^\n]*+(?:\n|\Z)"
)


class InstructionReader:
    """Reads common instruction statements into the computation being built (see the module docstring)."""

    __slots__ = ("state", "_shape_cache_get", "_attribute_lists_get")

    def __init__(self, state: ParseState) -> None:
        self.state = state
        self._shape_cache_get = state.shapes.cache.get
        self._attribute_lists_get = state.attribute_lists.get

    def rows(self, computation: Computation, i: int, has_root: bool) -> tuple[int, Instruction | None, int, bool]:  # noqa: C901 - the hot loop, kept in one piece
        """Read the common instructions of ``computation``'s body from line ``i`` on, as one
        regular-expression scan over the text: one match per line, no line split out, no call per
        instruction. Stops at the first line it does not take (anything :meth:`fast` would refuse,
        a blank line, a ``ROOT`` when the computation ``has_root`` already, a line that starts
        with ``}``), having changed nothing for it; the line reader goes on from there — unless
        that line is the usual end of the body, a ``}`` alone, which the scan steps over.

        Returns the next line to read, the ``ROOT`` instruction met (or None), its line, and
        whether the body was read to its end: a ``}`` line of its own, then stepped over with
        the one empty line XLA puts before the next computation.
        """
        state = self.state
        lines = state.lines
        text = lines.text
        if text is None:
            return i, None, 0, False
        # Where line i starts: known when the last scan ended on it or on the line before (the
        # usual case: the scan read the last body up to its "}", the header read one line).
        last_line, last_offset = state.resume
        if i == last_line:
            pos = last_offset
        elif i == last_line + 1:
            pos = text.find("\n", last_offset) + 1 or -1
        else:
            pos = lines.offset(i)
        if pos < 0:
            return i, None, 0, False
        by_name = computation.by_name
        append = computation.instructions.append
        shape_get = self._shape_cache_get
        lists_get = self._attribute_lists_get
        unresolved = state.unresolved
        root: Instruction | None = None
        root_line = 0
        line_index = i
        if has_root:  # a ROOT below is a second one: the line reader reports it
            root = computation.root
        for m in _ROW.finditer(text, pos):
            is_root, name, shape_text, opcode, plain, other, rest = m.groups()
            if name is None or name in by_name or (is_root and root is not None):
                at = m.start()
                if name is None and text.startswith("}\n", at):  # the body's usual end: stepped over
                    line_index += 1
                    after = at + 2  # with the one empty line XLA puts before the next computation
                    if text.startswith("\n", after) and after + 1 < len(text) and text[after + 1] != "\n":
                        line_index += 1
                        after += 1
                    state.resume = (line_index, after)
                    return line_index, (None if has_root else root), root_line, True
                state.resume = (line_index, at)
                break
            shared: SharedAttributes | None = None
            eager: dict[str, str] | None = None
            call: tuple[re.Match[str], str] | None = None
            if rest and (shared := lists_get(rest)) is None:  # a text seen before needs no more checks
                if rest[0] != ",":
                    if not rest.isspace():
                        break
                elif "/*" in rest or "//" in rest:
                    break
                elif ("control-predecessors" not in rest) if opcode in NEVER_CALLS else EAGER_SEARCH(rest) is None:
                    shared = self._new_attribute_list(rest, opcode)
                    if shared is None:
                        break
                else:
                    call = one_call(rest)
                    if call is not None:  # a fusion, reduce, map...: the rest is shared like any other
                        key_rest = call[1]
                        shared = lists_get(key_rest) or self._new_attribute_list(key_rest)
                        if shared is None:
                            break
                    else:
                        eager = split_rest(rest)
                        if eager is None:
                            break
            shape = shape_get(shape_text) or self._new_shape(shape_text)
            if shape is None:
                break
            if opcode == "parameter":  # as _fast_operands, inline: a third of all instructions
                if plain or not other.isdecimal():
                    break
                inst = Instruction(name, opcode, shape, line_index + 1, shared)
                inst.parameter_number = int(other)
            elif plain and opcode != "constant":
                if "/" in plain:
                    plain = INDEX_COMMENT.sub("", plain)
                names = plain.replace("%", "").replace(" ", "").split(",")  # see _fast_operands
                inst = Instruction(name, opcode, shape, line_index + 1, shared)
                try:
                    inst.operands = list(map(by_name.__getitem__, names))
                except KeyError:  # a forward reference: resolved when the computation ends
                    unresolved.append((inst, names))
            else:
                names = fast_operands(opcode, plain, other)
                if names is None:
                    break
                inst = Instruction(name, opcode, shape, line_index + 1, shared)
                if names:
                    try:
                        inst.operands = list(map(by_name.__getitem__, names))
                    except KeyError:
                        unresolved.append((inst, names))
                elif opcode == "constant":
                    inst.literal = (plain or other).strip()
            if call is not None:  # (the rest of its attributes are shared)
                attribute, value = call[0].group(1, 2)
                state.pending_calls.append(new_pending_call(PendingCall, (inst, attribute, value, line_index, text,
                                                                           m.start(), m.start(7))))
            elif eager is not None:
                eager_attributes(self.state, inst, eager, text, m.start(7), line_index, m.start())
            if "-start" in opcode and opcode.endswith("-start") and opcode not in NATIVE_START:
                wrap_async(self.state, inst)
            inst.parent = computation
            append(inst)
            by_name[name] = inst
            if is_root:
                root, root_line = inst, line_index
            line_index += 1
        return line_index, (None if has_root else root), root_line, False

    def fast(self, computation: Computation, by_name: dict[str, Instruction], groups: tuple[str, ...],
             m: re.Match[str], line_index: int) -> Instruction | None:
        """The common one-line instruction, from one :data:`FAST_INSTRUCTION` match on its line (``groups``
        are the match's, which the caller has read for ``ROOT``): what :meth:`rows` does, a line
        at a time, for the lines of the second reading (:mod:`~hloviz.parser.text.reflow`), which
        are statements rather than a text to scan.

        Returns None, having changed nothing, for anything unusual (a new shape text that
        fails to parse, attributes with unbalanced brackets or comments, a dangling comma, a
        duplicate name); the general path then reads the line again and reports any error
        precisely.
        """
        _, name, shape_text, opcode, plain, other = groups
        if name in by_name:
            return None
        line = m.string
        start = m.end()
        shared: SharedAttributes | None = None
        eager: dict[str, str] | None = None
        if start < len(line):  # something after the operands
            split = self._split_after_operands(line[start:], opcode)
            if split is None:
                return None
            shared, eager = split
        shape = self._shape_cache_get(shape_text) or self._new_shape(shape_text)
        if shape is None:
            return None
        names = fast_operands(opcode, plain, other)
        if names is None:
            return None
        # From here on the line is accepted: build the instruction.
        inst = Instruction(name, opcode, shape, line_index + 1)
        if names:
            try:
                inst.operands = list(map(by_name.__getitem__, names))
            except KeyError:  # a forward reference: resolved when the computation ends
                self.state.unresolved.append((inst, names))
        elif opcode == "parameter":
            inst.parameter_number = int(other)
        elif opcode == "constant":
            inst.literal = (plain or other).strip()
        if shared is not None:
            inst.share_attributes(shared[0], shared[1])
        elif eager is not None:
            eager_attributes(self.state, inst, eager, line, start, line_index)
        if opcode[-6:] == "-start" and opcode not in NATIVE_START:
            wrap_async(self.state, inst)
        # Computation.add, inlined: this runs once per instruction of the module.
        inst.parent = computation
        computation.instructions.append(inst)
        by_name[name] = inst
        return inst

    def _split_after_operands(self, rest: str, opcode: str) -> tuple[SharedAttributes | None, dict[str, str] | None] | None:
        """What follows an instruction's operands on its line, split: ``(shared, eager)`` — the
        attributes split once for every line with this text, or those that name computations or
        instructions (they wait to be resolved); (None, None) for blanks; None when the general
        path must read the line. :meth:`rows` does the same inline."""
        if rest[0] != ",":
            return (None, None) if rest.isspace() else None
        if "/*" in rest or "//" in rest:
            return None  # comments: the general path blanks them
        if ("control-predecessors" not in rest) if opcode in NEVER_CALLS else EAGER_SEARCH(rest) is None:
            shared = self._attribute_lists_get(rest)
            if shared is None:
                shared = self._new_attribute_list(rest, opcode)
                if shared is None:
                    return None
            return shared, None
        eager = split_rest(rest)
        return None if eager is None else (None, eager)

    def _new_attribute_list(self, rest: str, opcode: str = "") -> SharedAttributes | None:
        """An attribute text not seen before, split, its metadata parsed, and kept for the next
        instruction with the same text; None when the general path must read it.

        Kept only when it names no computation or instruction for any opcode: a text found again
        is shared with no more checks (``to_apply=`` on an ``add``, whose opcode never calls,
        is an attribute like any other there, but not on the ``reduce`` that may come next)."""
        attrs = split_rest(rest, self.state.attribute_heads) if rest else {}
        if attrs is None:
            return None
        raw = attrs.get("metadata")
        shared = (MappingProxyType(attrs), EMPTY_METADATA if raw is None else self.state.module.metadata_of(raw))
        if opcode not in NEVER_CALLS or EAGER_SEARCH(rest) is None:
            self.state.attribute_lists[rest] = shared
        return shared

    def _new_shape(self, shape_text: str) -> Shape | None:
        """A shape text not seen before (parsed and cached), or None when it is not one."""
        sm = ARRAY_SHAPE.match(shape_text)
        try:
            return self.state.shapes.array(sm.group(1), sm.group(2), sm.group(3), 0)  # type: ignore[union-attr]
        except ScanError:
            return None
