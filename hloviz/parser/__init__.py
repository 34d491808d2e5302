"""HLO text ⇄ IR: :func:`parse`, :func:`parse_file`.

The parser accepts HLO as XLA prints it in every dialect users meet: TensorFlow's
``experimental_get_compiler_ir`` (operands with or without shapes), JAX's ``as_text()`` and
``--xla_dump_to`` dumps, and every layout XLA's own parser reads (no ``HloModule`` line,
statements broken or joined anywhere: :mod:`~hloviz.parser.text.reflow`). Binary protos are turned
into text by XLA's code from jaxlib (:mod:`~hloviz.parser.proto`). Errors are
:class:`hloviz.HloParseError`, each with its :class:`~hloviz.source.Span`.

Modules: ``state`` (what one parse shares), ``module`` (the module and computation headers),
``body`` (a computation's body, line by line), ``instructions`` (the common statement; the fast
path), ``statement`` (any other statement; the general path), ``resolve`` (names → instructions
and computations), ``shapes``, ``operands``, ``attributes``, ``calls``, ``asynchronous``,
``tuple_index``, ``proto`` and ``wire`` (binary protos); ``text/`` (below the grammar: ``lines``,
read a block at a time; ``scan``, brackets; ``reflow``, one statement per line).
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import cast

from ..collector import after_parse, thaw
from ..errors import HloParseError
from ..ir import HloModule, set_text_readers
from ..source import SourceText, Span
from .module import ModuleReader
from .proto import is_proto_path, read_proto_text
from .text.reflow import statements
from .shapes import parse_shape, parse_signature
from .state import ParseState

# The IR keeps signatures as text until read; it reads them with this (it never imports the parser).
set_text_readers(parse_signature=parse_signature)

__all__ = ["decode", "parse", "parse_bytes", "parse_file", "parse_shape", "read_text"]


def parse(text: str, filename: str | None = None) -> HloModule:
    """Parse HLO module text. ``filename`` is only used in error messages."""
    if not isinstance(cast(object, text), str):  # untyped callers pass bytes or paths
        raise TypeError("hloviz.parse takes the HLO text as str; use parse_file for paths")
    if "\0" in text:
        at = SourceText(text.replace("\0", " "), filename).span_in(0, text, text.index("\0"))
        raise HloParseError("a NUL byte: this is not HLO text", span=at)
    # The parse allocates hundreds of thousands of objects and frees none of them; pausing the
    # cyclic garbage collector meanwhile avoids repeated full scans of them (a 2-3x cost).
    thaw()
    collecting = gc.isenabled()
    gc.disable()
    try:
        try:
            return ModuleReader(ParseState(text, filename)).read()
        except HloParseError as err:
            module = _parse_reflowed(text, filename)
            if module is None:
                raise err from None
            return module
    except RecursionError:
        raise HloParseError("nesting is too deep to parse", span=SourceText(text, filename).span(0, 0)) from None
    finally:
        if collecting:
            after_parse(keep_frozen=len(text) >= KEEP_FROZEN_FROM_CHARS)
            gc.enable()


# Texts from this size on (about 30k instructions) stay frozen after the parse
# (:func:`hloviz.collector.after_parse`); below it the full collection the first reads may set
# off is short, and freezing would only delay freeing cycles.
KEEP_FROZEN_FROM_CHARS = 4_000_000


def _parse_reflowed(text: str, filename: str | None) -> HloModule | None:
    """The module read from ``text`` rewritten one statement per line, or None if that fails too.

    XLA's lexer allows a line break (or none) between any two tokens; the line-oriented parser
    reads the usual layouts fast, and this second reading covers the rest (two instructions on a
    line, a computation on one line, a statement broken after every token). The statements are
    made as the reader asks for them, so a text that fails here too fails early and cheaply.
    Lines are mapped back, so instructions keep the line they start on in ``text``.
    """
    state = ParseState(text, filename, statements=statements(text))
    try:
        module = ModuleReader(state).read()
    except HloParseError:
        return None
    line_of = state.lines.line_of

    def original(line: int) -> int:
        return line_of[line - 1] if 0 < line <= len(line_of) else line

    for computation in module.computations:
        computation.line = original(computation.line)
        for inst in computation.instructions:
            inst.line = original(inst.line)
    return module


def decode(data: bytes, filename: str) -> str:
    """HLO bytes → text; bytes that are not UTF-8 give an :class:`HloParseError` at the bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        # found by counting and searching, never by splitting: 50 MB of short lines would be a list
        line = data.count(b"\n", 0, err.start)
        line_start = data.rfind(b"\n", 0, err.start) + 1
        line_end = data.find(b"\n", err.start)
        col = len(data[line_start : err.start].decode("utf-8", "replace"))  # in characters, not bytes
        src = data[line_start : line_end if line_end >= 0 else None].decode("utf-8", "replace")
        raise HloParseError("this file is not UTF-8 text (is it a binary HLO proto?)",
                            span=Span(filename, line + 1, col + 1, src)) from None


def parse_bytes(data: bytes, filename: str | None = None) -> HloModule:
    """Parse HLO text given as bytes (UTF-8)."""
    return parse(decode(data, filename or "<bytes>"), filename=filename)


def read_text(path: str | Path) -> str:
    """Read an HLO file as text; ``.gz``, ``.xz`` and ``.bz2`` are decompressed.

    A binary proto (``*.pb``, ``*.hlo.pb``, compressed or not: ``HloModuleProto``, ``HloProto``)
    is converted to text by XLA's own code from jaxlib (:mod:`hloviz.parser.proto`).

    Raises :class:`InputError` when the file is missing, a folder, or not readable, and
    :class:`HloParseError` when its bytes are not UTF-8 text.
    """
    from ..inputs import read_bytes  # streaming, with the --max-input limit

    p = Path(path)
    if is_proto_path(p):
        return read_proto_text(p)
    return decode(read_bytes(p), str(p))


def parse_file(path: str | Path) -> HloModule:
    """Parse an HLO file: text (plain, ``.gz``, ``.xz`` or ``.bz2``) or a binary proto (``.pb``)."""
    return parse(read_text(path), filename=str(path))
