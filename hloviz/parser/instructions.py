"""One instruction statement → :class:`hloviz.ir.Instruction` (the parser's inner loop).

The common instruction — one line, an array shape, plain operand names — is read by one
regular expression (:data:`FAST_INSTRUCTION`) and a few string operations; everything else (tuple
shapes, operands written with their shapes, nested instruction expressions, literals with
parentheses, statements spread over lines) takes the general path, which scans brackets and
reports errors with their exact column. :class:`InstructionReader` works on the
:class:`~hloviz.parser.state.ParseState` it shares with the module reader
(:mod:`hloviz.parser.module`), which owns the module and computation structure. Operand names
that are not yet defined wait in the state, apart from the resolved operands.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from types import MappingProxyType
from typing import cast

from ..errors import HloParseError
from ..ir import CALLED_COMPUTATION_ATTRIBUTES, EMPTY_METADATA, INFERRED, Computation, Instruction, Shape
from .attributes import split_attributes, split_common_attributes
from .scan import ScanError, find_close, net_depth, split_top_level
from .shapes import ARRAY_SHAPE, infer_shape
from .state import ParseState, PendingCall, SharedAttributes

_HEAD = re.compile(r"\s*(ROOT\s+)?%?([A-Za-z_][\w.\-]*)\s*=\s*")
# What a statement broken after its first words looks like: "ROOT", "name", "ROOT %name".
_HEAD_PREFIX = re.compile(r"\s*(?:ROOT\b\s*)?(?:%?[A-Za-z_][\w.\-]*\s*)?\Z")
_OPCODE = re.compile(r"\s*([a-z][a-z0-9_\-]*)\s*\(")
# A line that starts a new instruction (not the continuation of an attribute list).
NEW_STATEMENT = re.compile(r"\s*(ROOT\s+)?%?[A-Za-z_][\w.\-]*\s*=\s*(\(|[a-z][a-z0-9]*\[|[a-z][\w\-]*\s*\()")
_NAME = re.compile(r"%?[A-Za-z_][\w.\-]*\Z")
_INT = re.compile(r"\s*\d+\s*\Z")

# Opcodes whose "-start" form is an instruction of its own rather than async sugar.
_NATIVE_START = {
    "all-reduce-start", "all-gather-start", "collective-permute-start", "copy-start", "async-start",
    "send", "recv", "collective-broadcast-start", "ragged-all-to-all-start", "all-to-all-start",
}
_MAX_NESTED_INSTRUCTIONS = 64
_CALL_KEYS = frozenset(CALLED_COMPUTATION_ATTRIBUTES)
# Attributes that must be read while parsing: they name computations or instructions. Looked for
# after a comma, as every attribute starts: a search led by one literal character is twice as
# fast as one led by twelve words.
_EAGER_ATTR = re.compile(
    r",\s*+(?:" + "|".join(CALLED_COMPUTATION_ATTRIBUTES) + r"|control-predecessors)\s*="
)
# Opcodes that never name a computation, so their attributes can wait to be split.
_NEVER_CALLS = frozenset({
    "abs", "add", "and", "atan2", "bitcast", "bitcast-convert", "broadcast", "cbrt", "ceil", "clamp",
    "compare", "concatenate", "constant", "convert", "convolution", "copy", "cosine", "divide", "dot",
    "dynamic-slice", "dynamic-update-slice", "erf", "exponential", "exponential-minus-one", "floor", "gather",
    "get-tuple-element", "imag", "iota", "is-finite", "log", "log-plus-one", "logistic", "maximum", "minimum",
    "multiply", "negate", "not", "or", "pad", "parameter", "power", "real", "reduce-precision", "remainder",
    "reshape", "reverse", "round-nearest-afz", "round-nearest-even", "rsqrt", "select", "shift-left",
    "shift-right-arithmetic", "shift-right-logical", "sign", "sine", "slice", "sqrt", "subtract", "tan",
    "tanh", "transpose", "tuple", "xor",
})
_EAGER_SEARCH = _EAGER_ATTR.search
_ARRAY = r"[a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?"
# Possessive repeats (Python >= 3.11) over operand lists: giving an operand back could never let
# the rest match, and the ordinary repeat keeps ~200 bytes of backtracking state per character
# (a 4 MB operand list cost 730 MB).
_ONCE = "+" if sys.version_info >= (3, 11) else ""
_SHAPED_OPERANDS = re.compile(
    rf"[ \t]*{_ARRAY}[ \t]+%?[A-Za-z_][\w.\-]*[ \t]*(?:,[ \t]*{_ARRAY}[ \t]+%?[A-Za-z_][\w.\-]*[ \t]*)*{_ONCE}\Z"
).match
_SHAPED_NAMES = re.compile(rf"{_ARRAY}[ \t]+%?([A-Za-z_][\w.\-]*)").findall

# The common instruction on one line, up to its operands' ")": name, array shape, opcode, operands
# (group 5 when they are plain names, else group 6: a parameter number, a literal, or operands with
# shapes). The attributes are the rest of the line; matching them too would cost a third more.
FAST_INSTRUCTION = re.compile(
    r"[ \t]*(ROOT[ \t]+)?%?([A-Za-z_][\w.\-]*)[ \t]*=[ \t]*"
    r"([a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?)[ \t]+"
    r"([a-z][a-z0-9_\-]*)\((?:(%?[A-Za-z_][\w.\-]*(?: *, *%?[A-Za-z_][\w.\-]*)*" + _ONCE + r")|([^()\"]*))\)"
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
#: The operand-number comments XLA writes before every fifth operand of a long list.
_INDEX_COMMENT = re.compile(r"/\*index=\d+\*/")


#: One attribute naming one computation, ``calls=%f`` or ``to_apply=%f``, up to the next attribute.
_CALL = re.compile(r",[ \t]*+(calls|to_apply)[ \t]*+=[ \t]*+(%?[A-Za-z_][\w.\-]*+)[ \t]*+"
                   r"(?=,[ \t]*+[A-Za-z_][\w.\-]*+[ \t]*+=|\s*+\Z)")


#: A :class:`PendingCall` made as the tuple it is (its generated ``__new__`` is a Python call, once per fusion).
_new_pending_call = cast("Callable[[type[PendingCall], tuple[Instruction, str, str, int, str, int, int]], PendingCall]",
                         tuple.__new__)  # pyright: ignore[reportUnknownMemberType]  # typeshed leaves its iterable untyped; the cast says what goes in


def _one_call(rest: str) -> tuple[re.Match[str], str] | None:
    """``rest`` (an attribute list) naming one computation in the usual way: the match of that
    attribute and the rest without it, whose split is then what the whole one's is, less that
    attribute. None when anything else there waits to be resolved, or when what comes before
    the attribute could hold it inside brackets or a string (then it is split in full)."""
    call = _CALL.search(rest)
    if call is None:
        return None
    before = rest[: call.start()]
    if '"' in before or before.count("{") != before.count("}") or before.count("(") != before.count(")") \
            or before.count("[") != before.count("]"):
        return None
    key_rest = before + rest[call.end() :]
    if _EAGER_SEARCH(key_rest) is not None:
        return None
    return call, key_rest if key_rest.strip() else ""


def infer_shapes(pending: list[Instruction]) -> None:
    """Infer left-out shapes operands first (the text may use an instruction before defining it)."""
    done: set[int] = set()
    entered: set[int] = set()  # an instruction met again before it is done is in a cycle
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
            if id(inst) in entered:  # a cycle (``root = f(root)``): not walked again, the stack stays bounded
                continue
            entered.add(id(inst))
            stack.append((inst, True))
            for op in inst.operands:
                if op.shape is INFERRED and id(op) not in done:
                    stack.append((op, False))


class Incomplete(Exception):
    """The statement may continue on the next line (XLA's lexer lets a line break fall between any
    two tokens). ``error`` is what to report when no following line completes it."""

    def __init__(self, error: HloParseError | None = None) -> None:
        super().__init__()
        self.error = error


def _split_rest(rest: str, heads: dict[str, dict[str, str]] | None = None) -> dict[str, str] | None:
    """The attributes after a fast-path instruction's operands (``rest`` starts with ``,``), or
    None when the general path must read the line (a quote or brace left open, a trailing comma:
    the statement may go on below; or a list the careful split refuses, which it reports).
    ``heads``: see :func:`~hloviz.parser.attributes.split_common_attributes`."""
    attrs = split_common_attributes(rest, heads)
    if attrs is not None:
        return attrs
    if rest.count("{") != rest.count("}") or ('"' in rest and (rest.count('"') % 2 or '\\"' in rest)) \
            or rest.rstrip()[-1] == ",":
        return None
    try:
        return split_attributes(rest, 0)
    except ScanError:
        return None


def _fast_operands(opcode: str, plain: str, other: str) -> list[str] | None:
    """The operand names of a fast-path instruction from its ``FAST_INSTRUCTION`` groups (empty for a
    parameter, a constant or no operands), or None when the general path must read it: a
    parameter number that is not one, an empty constant, operands written unlike XLA prints them.
    """
    if opcode == "parameter":
        return None if plain or not other.isdecimal() else []
    if opcode == "constant":  # constant(nan) and constant(true) look like names
        return [] if (plain or other).strip() else None
    if plain:  # "%a, %b": validated by the pattern, so removing '%' and spaces is exact
        return plain.replace("%", "").replace(" ", "").split(",")
    if other and not other.isspace():  # TF <= 2.17 style: "f32[2]{0} %x, f32[] %y"
        return _SHAPED_NAMES(other) if _SHAPED_OPERANDS(other) is not None else None
    return []


class InstructionReader:
    """Reads instruction statements into the computation being built (see the module docstring)."""

    __slots__ = ("state", "_shape_cache_get", "_attribute_lists_get")

    def __init__(self, state: ParseState) -> None:
        self.state = state
        self._shape_cache_get = state.shapes.cache.get
        self._attribute_lists_get = state.attribute_lists.get

    # -- the fast path ---------------------------------------------------------------------

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
                elif ("control-predecessors" not in rest) if opcode in _NEVER_CALLS else _EAGER_SEARCH(rest) is None:
                    shared = self._new_attribute_list(rest, opcode)
                    if shared is None:
                        break
                else:
                    call = _one_call(rest)
                    if call is not None:  # a fusion, reduce, map...: the rest is shared like any other
                        key_rest = call[1]
                        shared = lists_get(key_rest) or self._new_attribute_list(key_rest)
                        if shared is None:
                            break
                    else:
                        eager = _split_rest(rest)
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
                    plain = _INDEX_COMMENT.sub("", plain)
                names = plain.replace("%", "").replace(" ", "").split(",")  # see _fast_operands
                inst = Instruction(name, opcode, shape, line_index + 1, shared)
                try:
                    inst.operands = list(map(by_name.__getitem__, names))
                except KeyError:  # a forward reference: resolved when the computation ends
                    unresolved.append((inst, names))
            else:
                names = _fast_operands(opcode, plain, other)
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
                state.pending_calls.append(_new_pending_call(PendingCall, (inst, attribute, value, line_index, text,
                                                                           m.start(), m.start(7))))
            elif eager is not None:
                self._eager_attributes(inst, eager, text, m.start(7), line_index, m.start())
            if "-start" in opcode and opcode.endswith("-start") and opcode not in _NATIVE_START:
                self._wrap_async(inst)
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
        at a time, for the lines of the second reading (:mod:`~hloviz.parser.reflow`), which
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
        names = _fast_operands(opcode, plain, other)
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
            self._eager_attributes(inst, eager, line, start, line_index)
        if opcode[-6:] == "-start" and opcode not in _NATIVE_START:
            self._wrap_async(inst)
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
        if ("control-predecessors" not in rest) if opcode in _NEVER_CALLS else _EAGER_SEARCH(rest) is None:
            shared = self._attribute_lists_get(rest)
            if shared is None:
                shared = self._new_attribute_list(rest, opcode)
                if shared is None:
                    return None
            return shared, None
        eager = _split_rest(rest)
        return None if eager is None else (None, eager)

    def _new_attribute_list(self, rest: str, opcode: str = "") -> SharedAttributes | None:
        """An attribute text not seen before, split, its metadata parsed, and kept for the next
        instruction with the same text; None when the general path must read it.

        Kept only when it names no computation or instruction for any opcode: a text found again
        is shared with no more checks (``to_apply=`` on an ``add``, whose opcode never calls,
        is an attribute like any other there, but not on the ``reduce`` that may come next)."""
        attrs = _split_rest(rest, self.state.attribute_heads) if rest else {}
        if attrs is None:
            return None
        raw = attrs.get("metadata")
        shared = (MappingProxyType(attrs), EMPTY_METADATA if raw is None else self.state.module.metadata_of(raw))
        if opcode not in _NEVER_CALLS or _EAGER_SEARCH(rest) is None:
            self.state.attribute_lists[rest] = shared
        return shared

    def _new_shape(self, shape_text: str) -> Shape | None:
        """A shape text not seen before (parsed and cached), or None when it is not one."""
        sm = ARRAY_SHAPE.match(shape_text)
        try:
            return self.state.shapes.array(sm.group(1), sm.group(2), sm.group(3), 0)  # type: ignore[union-attr]
        except ScanError:
            return None

    def _eager_attributes(self, inst: Instruction, attrs: dict[str, str], text: str, start: int,
                          line_index: int, line_start: int = 0) -> None:
        """Attributes that name computations or control predecessors: those wait to be resolved.
        ``text[start:]`` holds the attribute list of the statement on line ``line_index``, which
        starts at ``text[line_start]`` (for an error's position, worked out only then)."""
        preds = attrs.pop("control-predecessors", None)
        if preds is not None:
            self.state.predecessors.append((inst, preds))
        keys = [key for key in attrs if key in _CALL_KEYS]
        if len(keys) > 1:
            keys.sort(key=CALLED_COMPUTATION_ATTRIBUTES.index)  # in XLA's order
        for key in keys:
            self.state.pending_calls.append(PendingCall(inst, key, attrs.pop(key), line_index, text, line_start, start))
        inst.share_attributes(MappingProxyType(attrs))  # (a dict of its own: no copy needed)

    # -- the general path ------------------------------------------------------------------

    def statement(self, computation: Computation, text: str, first_line: int) -> tuple[Instruction, bool]:
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
                    self._eager_attributes(inst, split_attributes(text, rest), text, rest, first_line)
            elif text[close + 1 : end].strip():
                raise ScanError("a nested instruction takes no attributes", close + 1)
            if inst.opcode.endswith("-start") and inst.opcode not in _NATIVE_START:
                self._wrap_async(inst)
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
        names = self._operands(computation, inst, text, open_paren + 1, close, first_line)
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

    def _operands(self, computation: Computation, inst: Instruction, text: str, a: int, b: int,
                  first_line: int) -> list[str] | None:
        """The operand names between ``text[a]`` and ``text[b]`` (or the constant's literal, the
        parameter's number); nested instruction expressions are added to ``computation``."""
        opcode = inst.opcode
        seg = text[a:b]
        if opcode == "constant":
            literal = seg.strip()
            if not literal:
                raise ScanError("a constant needs a literal value", a)
            inst.literal = literal
            return None
        if opcode == "parameter":
            if not _INT.match(seg):
                raise ScanError("expected the parameter number, e.g. parameter(0)", a)
            inst.parameter_number = int(seg)
            return None
        if not seg or seg.isspace():
            return None
        if "[" not in seg and "(" not in seg and "{" not in seg:
            names = [s.strip().lstrip("%") for s in seg.split(",")]
            for k, n in enumerate(names):
                if not n or not _NAME.match(n):
                    self._bad_operand(text, a, b, k)
            return names
        # Operands written with their shapes (TF <= 2.17), or nested instruction expressions.
        names: list[str] = []
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
                self.state.shapes.parse(text, pa + lead, pb)
            names.append(last.lstrip("%"))
        return names

    @staticmethod
    def _bad_operand(text: str, a: int, b: int, k: int) -> None:
        spans = split_top_level(text, a, b)
        pa, pb = spans[k]
        piece = text[pa:pb]
        offset = pa + len(piece) - len(piece.lstrip())
        shown = piece.strip() or "nothing"
        raise ScanError(f"cannot read '{shown[:60]}' as an operand name", offset)

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

    def _wrap_async(self, start: Instruction) -> None:
        """``custom-call-start(...)`` is sugar: XLA wraps the op in a computation of its own."""
        wrapped_opcode = start.opcode[: -len("-start")]
        wrapped = Computation(f"{start.name}.wrapped", line=start.line)
        wrapped.synthetic = True
        shape = start.shape
        operand_shapes = shape.tuple_shapes[0].tuple_shapes if shape.is_tuple and shape.tuple_shapes \
            and shape.tuple_shapes[0].is_tuple else ()
        for k, operand_shape in enumerate(operand_shapes):
            p = Instruction(f"param.{k}", "parameter", operand_shape, line=start.line)
            p.parameter_number = k
            wrapped.add(p)
        result = shape.tuple_shapes[1] if shape.is_tuple and len(shape.tuple_shapes) > 1 else shape
        op = Instruction(f"{start.name}.op", wrapped_opcode, result, line=start.line)
        op.operands = list(wrapped.instructions)
        op.attributes = dict(start.attributes)
        # The computations the sugar names (fusion-start's calls=, ...) are the wrapped op's.
        pending = self.state.pending_calls
        k = len(pending)
        while k and pending[k - 1].instruction is start:
            k -= 1
            pending[k] = pending[k]._replace(instruction=op)
        wrapped.add(op)
        wrapped.root = op
        self.state.module.add(wrapped)
        start.calls_by_attribute = {**start.calls_by_attribute, "calls": [wrapped]}
        start.called_computations = [*start.called_computations, wrapped]
