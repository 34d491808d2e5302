"""An instruction's ``metadata={...}``: :class:`Metadata`, how it is read, and HLO string escapes.

In: the raw attribute text XLA printed. Out: a frozen :class:`Metadata` (op type, op name, source
position, other fields). Its own module because metadata is read lazily, once per distinct text,
with its own escaping rules (:func:`quoted_string_pattern` is shared with the parser).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

#: A whole decimal number (``source_line=`` is read as a number only when it is one).
_INT = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True, slots=True)
class Metadata:
    """The ``metadata={...}`` of an instruction: where it came from in the framework.

    ``op_name`` is TensorFlow's op name (``add_41``, ``dense/MatMul``) or JAX's name stack;
    it is what links pre- and post-optimization instructions back to the user's code.
    """

    op_type: str = ""
    op_name: str = ""
    source_file: str = ""
    source_line: int = 0
    extra: tuple[tuple[str, str], ...] = ()


#: The metadata of an instruction that has none (shared, since Metadata is immutable).
EMPTY_METADATA = Metadata()


def quoted_string_pattern(newlines: bool = False) -> str:
    """A regular expression for one quoted string with C escapes, that never backtracks.

    The usual ``"(?:[^"\\]|\\.)*"`` keeps one backtracking entry per character: a 40 MB
    ``op_name`` cost gigabytes. Unrolled (a run of plain characters, then escape + run …) it
    keeps none per plain character, and with possessive quantifiers (Python ≥ 3.11) none at
    all. ``newlines`` lets the string span lines (metadata bodies); the parser's line scanner
    does not.
    """
    plain = r'[^"\\]' if newlines else r'[^"\\\n]'
    more = "*+" if sys.version_info >= (3, 11) else "*"
    return rf'"{plain}{more}(?:\\.{plain}{more}){more}"'


# The key starts where a word starts: tried inside a long word, ``\w+=`` would run to the word's
# end from every one of its characters (a 100 KB word: seconds).
_META_FIELD = re.compile(r'(?<!\w)(\w++)=(' + quoted_string_pattern(newlines=True) + r'|\{[^{}]*\}|[^\s}]+)')


_KNOWN_METADATA = ("op_type", "op_name", "source_file", "source_line")
_PLAIN_STRING = r'"([^"\\\n]*+)"(?: |(?=\}))'
#: Metadata as XLA prints it: the known fields in XLA's order, strings without escapes, then
#: fields whose values are words (``stack_frame_id=3``), one space apart.
_USUAL_METADATA = re.compile(
    rf'\{{(?:op_type={_PLAIN_STRING})?(?:op_name={_PLAIN_STRING})?(?:source_file={_PLAIN_STRING})?'
    r'(?:source_line=(\d++)(?: |(?=\})))?((?:[A-Za-z_]\w*+=[^\s"{}\\]++(?: |(?=\})))*+)\}\Z')
_WORD_FIELD = re.compile(r'([A-Za-z_]\w*+)=([^\s"{}\\]++)')


def parse_metadata(raw: str | None) -> Metadata:
    """Parse the text of a ``metadata={...}`` attribute (braces included or not)."""
    if not raw:
        return EMPTY_METADATA
    usual = _USUAL_METADATA.match(raw)
    if usual is not None:  # one match instead of a step per field; the same result
        op_type, op_name, source_file, line, rest = usual.groups()
        if not rest:
            return Metadata(op_type or "", op_name or "", source_file or "", int(line) if line else 0)
        words: list[tuple[str, str]] = _WORD_FIELD.findall(rest)
        # (every known key starts "op_" or "source_": a rest without either repeats none of them)
        if ("op_" not in rest and "source_" not in rest) or not any(key in _KNOWN_METADATA for key, _ in words):
            return Metadata(op_type or "", op_name or "", source_file or "", int(line) if line else 0, tuple(words))
    body = raw.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1]
    known: dict[str, str] = {}
    extra: list[tuple[str, str]] = []
    for key, value in _META_FIELD.findall(body):
        if value.startswith('"'):
            value = unescape_string(value[1:-1])
        if key in ("op_type", "op_name", "source_file", "source_line"):
            known[key] = value
        else:
            extra.append((key, value))
    line = known.get("source_line", "0")
    return Metadata(
        op_type=known.get("op_type", ""),
        op_name=known.get("op_name", ""),
        source_file=known.get("source_file", ""),
        source_line=int(line) if _INT.fullmatch(line) else 0,
        extra=tuple(extra),
    )


_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'"}
_ESCAPE = re.compile(r"\\([ntr\"\\'])")


def unescape_string(s: str) -> str:
    r"""Undo the C escapes XLA uses in quoted strings (``\"``, ``\\``, ``\n``, ``\t``).

    One regular-expression pass (an op_name of millions of escapes costs one C loop, not a
    Python step per character); other backslashes are kept as written."""
    if "\\" not in s:
        return s
    return _ESCAPE.sub(lambda m: _SIMPLE_ESCAPES[m.group(1)], s)


def escape_string(s: str) -> str:
    """Quote-safe form of ``s`` for HLO text (inverse of :func:`unescape_string`)."""
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")


#: ``key=number`` pairs of a stack-frame table row (``file_location_id=3 parent_frame_id=1``).
_FRAME_FIELD = re.compile(r"(?<!\w)(\w+)=(\d+)")


def stack_frames(tables: dict[str, dict[int, str]]) -> dict[int, tuple[tuple[str, int, str], ...]]:
    """Each ``stack_frame_id`` of a module's tables (``FileNames``, ``FunctionNames``,
    ``FileLocations``, ``StackFrames``: newer XLA prints them after the header, and metadata
    names a frame by id) → its call stack, outermost first, as (file, line, function). XLA prints
    a frame's parent as the parent's row + 1; 0 or 1 ends the stack (checked on JAX 0.10: a
    helper's frame points at its caller's row so)."""
    def unquote(v: str) -> str:
        v = v.strip()
        return unescape_string(v[1:-1]) if len(v) > 1 and v[0] == v[-1] == '"' else v

    files = {k: unquote(v) for k, v in tables.get("FileNames", {}).items()}
    funcs = {k: unquote(v) for k, v in tables.get("FunctionNames", {}).items()}
    locs = {k: {a: int(b) for a, b in _FRAME_FIELD.findall(v)} for k, v in tables.get("FileLocations", {}).items()}
    frames = {k: {a: int(b) for a, b in _FRAME_FIELD.findall(v)} for k, v in tables.get("StackFrames", {}).items()}
    out: dict[int, tuple[tuple[str, int, str], ...]] = {}
    for start in frames:
        chain: list[tuple[str, int, str]] = []
        frame_id, seen = start, set[int]()
        while frame_id in frames and frame_id not in seen:
            seen.add(frame_id)
            loc = locs.get(frames[frame_id].get("file_location_id", -1), {})
            chain.append((files.get(loc.get("file_name_id", -1), ""), loc.get("line", 0),
                          funcs.get(loc.get("function_name_id", -1), "")))
            frame_id = frames[frame_id].get("parent_frame_id", 0) - 1
        out[start] = tuple(reversed(chain))
    return out
